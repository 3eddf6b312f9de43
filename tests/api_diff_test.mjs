// tests/api_diff_test.mjs - GET /api/diff and `ringsim diff` (API.md version
// 3, "the difference between any two states") against the real server and
// the real command line.
//
//   node tests/api_diff_test.mjs /path/to/ringsim
//
// The expected difference is computed here from the two states as the
// server answers them with ?at= (every key with its owner, the nodes, the
// configuration): keys whose owner differs are moves, keys only at one end
// are added or removed.  Names are odd on purpose (Unicode, spaces,
// / % # ? " <), in JSON, in URL paths and on the command line.  Bad numbers
// are 400 invalid_parameter, ids past the last operation 404.  Ends with
// "N passed, N failed".
//
// Checks docs/api.md, 'GET /api/diff?from=A&to=B', 'History' (ringsim diff).

import { execFileSync, spawnSync } from 'node:child_process';
import { setGroup, finish, crashed, check, eq, withServer, enc, cmpBytes, BIN } from './lib/harness.mjs';

const NODES = ['Zürich ☃ 日本語', 'with space', 'a/b/c', '100%', '#hash', 'what?now=1&x=2', 'quo"te', '<script>x</script>'];
const KEYS = ['ключ', 'a b', 'x/y', '50% off%2F', '#k', '?q=1', 'say "hi"', '<i>', 'emoji 🎉'];

// Every key with its owner, the node names and the configuration at `at`.
async function stateAt(s, at) {
  const q = `at=${at}`;
  const keys = [];
  for (let off = 0; ; off += 1000) {
    const j = await s.ok(`/api/keys?${q}&offset=${off}&limit=1000`);
    keys.push(...j.keys);
    if (j.keys.length < 1000) break;
  }
  const nodes = (await s.ok(`/api/nodes?${q}`)).nodes.map((n) => n.name);
  const config = await s.ok(`/api/config?${q}`);
  return { keys: new Map(keys.map((k) => [k.key, k.node])), nodes, config };
}

function expected(a, b) {
  const moves = [];
  let added = 0;
  let removed = 0;
  const from = {};
  const to = {};
  for (const [k, n] of a.keys) {
    if (!b.keys.has(k)) removed++;
    else if (b.keys.get(k) !== n) {
      moves.push({ key: k, from: n, to: b.keys.get(k) });
      from[n] = (from[n] || 0) + 1;
      to[b.keys.get(k)] = (to[b.keys.get(k)] || 0) + 1;
    }
  }
  for (const k of b.keys.keys()) if (!a.keys.has(k)) added++;
  moves.sort((x, y) => cmpBytes(x.key, y.key));
  const sorted = (l) => [...l].sort(cmpBytes);
  const cfg = (c) => JSON.stringify([c.algorithm, c.params, c.replicas]);
  return {
    keys_moved: moves.length,
    keys_added: added,
    keys_removed: removed,
    moves,
    from,
    to,
    nodes_added: sorted(b.nodes.filter((n) => !a.nodes.includes(n))),
    nodes_removed: sorted(a.nodes.filter((n) => !b.nodes.includes(n))),
    config_changed: cfg(a.config) !== cfg(b.config),
  };
}

const tally = (l) => Object.fromEntries(l.map((m) => [m.node, m.keys]));

// Every move of a diff, page by page (limit as given).
async function allDiffMoves(s, a, b, limit) {
  const out = [];
  let first = null;
  for (let off = 0; ; off += limit) {
    const j = await s.ok(`/api/diff?from=${a}&to=${b}&offset=${off}&limit=${limit}`);
    if (!first) first = j;
    out.push(...j.moves);
    if (j.moves.length < limit || off > j.moves_total) break;
  }
  return { first, moves: out };
}

async function checkPair(s, a, b, want) {
  const [sa, sb] = [await stateAt(s, a), await stateAt(s, b)];
  const e = expected(sa, sb);
  const limit = 1 + ((a * 7 + b * 3) % 5); // small pages: paging is exercised
  const { first: d, moves } = await allDiffMoves(s, a, b, limit);
  const name = `diff ${a} -> ${b}`;
  eq(`${name}: from, to`, [d.from, d.to], [a, b]);
  eq(`${name}: counts`, [d.keys_moved, d.keys_added, d.keys_removed, d.moves_total], [e.keys_moved, e.keys_added, e.keys_removed, e.keys_moved]);
  eq(`${name}: every move, paged by offset, by key bytes`, moves, e.moves);
  eq(`${name}: moved_from`, tally(d.moved_from), e.from);
  eq(`${name}: moved_to`, tally(d.moved_to), e.to);
  check(`${name}: moved_from largest first`, d.moved_from.every((m, i) => i === 0 || d.moved_from[i - 1].keys >= m.keys));
  eq(`${name}: nodes added and removed`, [d.nodes_added, d.nodes_removed], [e.nodes_added, e.nodes_removed]);
  eq(`${name}: config_changed`, d.config_changed, e.config_changed);
  if (want) eq(`${name}: found ${want === 'log' ? 'from the log' : 'by comparing states'}`, d.how, want);
  // API.md v4 "pairs", as operations and previews answer them: every
  // (from, to) pair over all the moves, exact, largest first; here under
  // the default workload (every key 1 byte, the same share of requests).
  const want2 = new Map();
  for (const m of e.moves) {
    const k = JSON.stringify([m.from, m.to]);
    want2.set(k, (want2.get(k) || 0) + 1);
  }
  const got = new Map((d.pairs || []).map((p) => [JSON.stringify([p.from, p.to]), p]));
  eq(`${name}: pairs, keys per (from, to) over every move`, Object.fromEntries([...got].map(([k, p]) => [k, p.keys])), Object.fromEntries(want2));
  check(`${name}: pairs largest first`, (d.pairs || []).every((p, i) => i === 0 || d.pairs[i - 1].keys >= p.keys), JSON.stringify(d.pairs));
  const nb = sb.keys.size;
  check(`${name}: pairs' requests_share = keys / keys at the end, bytes = keys`,
    (d.pairs || []).every((p) => Math.abs(p.requests_share - p.keys / nb) < 1e-9 && p.bytes === p.keys), JSON.stringify(d.pairs));
  return d;
}

// Under a workload with skew and value sizes, the pairs of the difference
// between the states before and after an operation are that operation's
// own pairs (the engine counts those while it moves the keys), both ways.
async function pairsLikeOperations(s) {
  const ok = (r) => check(`operation ${r.status}`, r.status === 200 || r.status === 201, r.text.slice(0, 200));
  ok(await s.put('/api/config', { points_per_node: 16 }));
  for (const n of ['a', 'b', 'c']) ok(await s.post('/api/nodes', { name: n }));
  ok(await s.post('/api/keys', { generate: { count: 3000 } }));
  ok(await s.put('/api/workload', { kind: 'zipf', s: 1.1, sizes: { kind: 'uniform', min: 10, max: 1000 } }));
  ok(await s.post('/api/nodes', { name: 'd', weight: 2 }));
  ok(await s.del('/api/nodes/b'));
  ok(await s.put('/api/config', { algorithm: 'cassandra' }));
  const last = (await s.ok('/api/operations?limit=1000')).operations.length;
  for (let id = last - 2; id <= last; id++) {
    const op = await s.ok(`/api/operations/${id}`);
    const d = await s.ok(`/api/diff?from=${id - 1}&to=${id}&limit=1`);
    check(`operation ${id} (${op.type}) moved keys between several pairs`, op.pairs.length > 1, JSON.stringify(op.pairs));
    const key = (p) => JSON.stringify([p.from, p.to]);
    const norm = (l, swap) => Object.fromEntries(l.map((p) => [swap ? JSON.stringify([p.to, p.from]) : key(p), [p.keys, p.bytes, Number(p.requests_share.toFixed(12))]]));
    eq(`diff ${id - 1} -> ${id}: the operation's pairs (keys, bytes, requests_share)`, norm(d.pairs), norm(op.pairs));
    check(`diff ${id - 1} -> ${id}: bytes beyond keys (sizes)`, d.pairs.every((p) => p.bytes > p.keys * 9), JSON.stringify(d.pairs));
    const back = await s.ok(`/api/diff?from=${id}&to=${id - 1}&limit=1`);
    eq(`diff ${id} -> ${id - 1}: the same pairs, turned round`, norm(back.pairs, true), norm(op.pairs));
  }
}

async function history(s) {
  const ops = [];
  const op = (r) => {
    check(`operation ${r.status}`, r.status === 200 || r.status === 201, r.text.slice(0, 200));
    if (r.json && r.json.operation) ops.push(r.json.operation.id);
  };
  op(await s.put('/api/config', { points_per_node: 8 })); // 1
  for (const n of NODES.slice(0, 4)) op(await s.post('/api/nodes', { name: n })); // 2..5
  op(await s.post('/api/keys', { keys: KEYS })); // 6
  op(await s.post('/api/keys', { generate: { count: 400, prefix: 'k é/' } })); // 7
  op(await s.post('/api/nodes', { name: NODES[4], weight: 2 })); // 8
  op(await s.del(`/api/keys/${enc(KEYS[1])}`)); // 9
  op(await s.del(`/api/nodes/${enc(NODES[1])}`)); // 10
  op(await s.req('PATCH', `/api/nodes/${enc(NODES[0])}`, { body: { weight: 3 } })); // 11
  op(await s.post('/api/keys', { keys: [KEYS[1], KEYS[2], 'fresh'] })); // 12: KEYS[2] skipped
  op(await s.put('/api/config', { algorithm: 'rendezvous' })); // 13
  op(await s.post('/api/nodes', { name: NODES[5] })); // 14
  op(await s.put('/api/config', { algorithm: 'ring', points_per_node: 8 })); // 15
  op(await s.del(`/api/nodes/${enc(NODES[5])}`)); // 16: came and went
  eq('the history has 16 operations', ops, Array.from({ length: 16 }, (_, i) => i + 1));

  const pairs = [[0, 16], [16, 0], [5, 8], [8, 5], [7, 16], [16, 7], [13, 16], [9, 12], [12, 9], [1, 2], [4, 11], [14, 16], [16, 16], [0, 0]];
  for (const [a, b] of pairs) await checkPair(s, a, b, 'log');
  const d = await s.ok('/api/diff?from=13&to=16');
  eq('a node that came and went is neither added nor removed', [d.nodes_added, d.nodes_removed], [[], []]);
  const dd = await s.ok('/api/diff?from=5&to=8');
  eq('odd names come back as they were', dd.nodes_added, [NODES[4]]);
  const dflt = await s.ok('/api/diff?from=0&to=16');
  check('without limit, the first 1000 moves', dflt.moves.length === Math.min(1000, dflt.moves_total), `${dflt.moves.length} of ${dflt.moves_total}`);

  // A revert and a reset lie between: composed through them (the state
  // after a revert to 8 is the state after 8; a reset's is empty).
  op(await s.post('/api/revert', { to: 8 })); // 17
  op(await s.post('/api/nodes', { name: NODES[6] })); // 18
  for (const [a, b] of [[16, 18], [18, 12], [17, 8], [10, 18]]) await checkPair(s, a, b, 'log');
  await checkPair(s, 17, 18, 'log');
  op(await s.post('/api/reset')); // 19
  op(await s.post('/api/nodes', { name: NODES[7] })); // 20
  op(await s.post('/api/keys', { generate: { count: 50 } })); // 21
  for (const [a, b] of [[18, 21], [21, 7], [19, 21]]) await checkPair(s, a, b, 'log');
  const r = await checkPair(s, 19, 21, 'log');
  eq('after the reset: only added keys and the node', [r.keys_added, r.nodes_added], [50, [NODES[7]]]);
  return 21;
}

async function badParameters(s, last) {
  const bad = async (q, status, code) => {
    const r = await s.get(`/api/diff${q}`);
    check(`GET /api/diff${q}: ${status} ${code}`, r.status === status && r.json && r.json.error && r.json.error.code === code && typeof r.json.error.message === 'string', `${r.status} ${r.text.slice(0, 200)}`);
  };
  for (const q of ['', '?from=1', '?to=1', '?from=-1&to=1', '?from=abc&to=1', '?from=1.5&to=1', '?from=1&to=%2B1', '?from=1%00&to=1', '?from=&to=1', '?from=1&to=1e2', '?from=1&to=99999999999999999999', '?from=0&to=1&limit=0', '?from=0&to=1&limit=1001', '?from=0&to=1&offset=-1', '?from=0&to=1&offset=x', '?from=0x1&to=1'])
    await bad(q, 400, 'invalid_parameter');
  await bad(`?from=0&to=${last + 1}`, 404, 'not_found');
  await bad(`?from=${last + 1}&to=0`, 404, 'not_found');
  await bad('?from=9223372036854775807&to=0', 404, 'not_found');
  const csv = await s.get('/api/diff?from=7&to=8&limit=3&format=csv');
  const page = await s.ok('/api/diff?from=7&to=8&limit=3');
  const q = (v) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  eq('?format=csv: the page of moves as CSV', [csv.status, csv.text], [200, ['key,from,to', ...page.moves.map((m) => [m.key, m.from, m.to].map(q).join(','))].join('\r\n') + '\r\n']);
  const p = await s.post('/api/diff', {});
  eq('POST /api/diff: 405 method_not_allowed', [p.status, p.json && p.json.error.code], [405, 'method_not_allowed']);
  const h = await s.req('HEAD', '/api/diff?from=0&to=1');
  eq('HEAD /api/diff: 200', h.status, 200);
  const at = await s.get(`/api/diff?from=0&to=${last}&at=1`);
  eq('at= does not move a diff: the same answer', at.json && at.json.keys_added, (await s.ok(`/api/diff?from=0&to=${last}`)).keys_added);
}

function cli(db, args) {
  const r = spawnSync(BIN, ['--db', db, ...args], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

async function commandLine(s, db, last) {
  setGroup('ringsim diff');
  for (const [a, b] of [[0, 16], [16, 5], [18, 12]]) {
    const api = [];
    let first;
    for (let off = 0; ; off += 1000) {
      const j = await s.ok(`/api/diff?from=${a}&to=${b}&offset=${off}`);
      first = first || j;
      api.push(...j.moves);
      if (j.moves.length < 1000) break;
    }
    const r = cli(db, ['diff', String(a), String(b), '--json']);
    eq(`diff ${a} ${b} --json: exit 0`, r.status, 0);
    const j = JSON.parse(r.out);
    eq(`diff ${a} ${b} --json: the API's answer, every move`, { ...j, moves: undefined }, { ...first, moves: undefined });
    eq(`diff ${a} ${b} --json: every move`, j.moves, api);
  }
  const h = cli(db, ['--json', 'diff', '5', '8']);
  eq('--json before the command works too', h.status, 0);
  const p = cli(db, ['diff', '5', '8']);
  eq('diff 5 8: exit 0', p.status, 0);
  check('diff for people names the added node', p.out.includes(`nodes added: ${NODES[4]}`), p.out.slice(0, 400));
  check('diff for people says how it was found', /composed from the log/.test(p.out), p.out.slice(0, 200));
  const m = cli(db, ['diff', '7', '8']);
  const first = (await s.ok('/api/diff?from=7&to=8&limit=1')).moves[0];
  check('diff for people lists moves as KEY FROM -> TO', m.out.includes(`${first.from} -> ${first.to}`) && m.out.includes(first.key), m.out.slice(0, 400));
  const pj = (await s.ok('/api/diff?from=7&to=8&limit=1')).pairs;
  const shown = m.out.split('moves by pair:\n')[1] || '';
  eq('diff for people: the pairs, largest first, as the API counts them', shown.split('\n').slice(0, pj.length),
    pj.map((x) => `  ${x.from} -> ${x.to}  ${x.keys.toLocaleString('en-US')} keys`));
  const q = cli(db, ['diff', '16', '18']);
  check('diff across a revert is composed from the log too', /composed from the log/.test(q.out), q.out.slice(0, 200));
  for (const args of [['diff', 'x', '1'], ['diff', '-1', '1'], ['diff', '1', '1.5'], ['diff', '0', String(last + 1)]]) {
    const r = cli(db, args);
    eq(`ringsim ${args.join(' ')}: exit 1`, r.status, 1);
    eq(`ringsim ${args.join(' ')}: one line on stderr`, r.err.trim().split('\n').length, 1);
  }
  for (const args of [['diff', '1'], ['diff'], ['diff', '1', '2', '3']]) {
    const r = cli(db, args);
    eq(`ringsim ${args.join(' ')}: exit 2 (usage)`, r.status, 2);
  }
  const help = execFileSync(BIN, ['help', 'diff'], { encoding: 'utf8' });
  check('help diff shows the synopsis', /diff A B/.test(help), help.slice(0, 200));
}

async function main() {
  let last = 0;
  await withServer('diff: random names, both ways, paged', async (s) => {
    last = await history(s);
    setGroup('diff: bad parameters');
    await badParameters(s, last);
    await commandLine(s, s.db, last);
  });
  await withServer('diff: pairs as the operations count them', pairsLikeOperations);
  setGroup('all');
  finish();
}

main().catch(crashed);
