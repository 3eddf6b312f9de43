// tests/api_v3_test.mjs - HTTP API version 3, the parts of issue 13 that
// the command line and API own: a node's weight changed in place (PATCH
// /api/nodes/{name}, one set_weight operation that time travel, revert and
// the scenario export replay), parameters the algorithm does not have,
// configurations that change nothing, `generate` that skips nothing, names
// that cannot be read, and numbers written as no person means them.
//
//   node tests/api_v3_test.mjs /path/to/ringsim
//
// Expected owners come from the ring of API.md ("Positions and placement")
// recomputed here; expected moves from the keys' owners before and after.
// Ends with "N passed, N failed".
//
// Checks docs/api.md, 'PATCH /api/nodes/{name}', 'PUT /api/config', 'POST
// /api/keys', 'GET /api/theory', 'POST /api/scenarios/run'.

import { setGroup, finish, crashed, check, eq, withServer, pos, pointsFor, cmpBytes, enc } from './lib/harness.mjs';

// API.md's ring: a node with P points owns the labels name, name#1 ...
function ringOwner(nodes, ppn) {
  const pts = [];
  for (const n of nodes) {
    const p = pointsFor(ppn, n.weight);
    for (let i = 0; i < p; i++) pts.push({ pos: pos(i ? `${n.name}#${i}` : n.name), name: n.name, i });
  }
  pts.sort((a, b) => a.pos - b.pos || cmpBytes(a.name, b.name) || a.i - b.i);
  return (key) => {
    const kp = pos(key);
    const hit = pts.find((q) => q.pos >= kp) || pts[0];
    return hit ? hit.name : null;
  };
}

const byKey = (keys) => Object.fromEntries(keys.map((k) => [k.key, k.node]));

async function setWeight(s) {
  eq('PUT points_per_node 10', (await s.put('/api/config', { points_per_node: 10 })).status, 200);
  const nodes = [
    { name: 'a', weight: 1 },
    { name: 'b', weight: 1 },
    { name: 'c', weight: 2 },
  ];
  for (const n of nodes) eq(`add ${n.name}`, (await s.post('/api/nodes', n)).status, 201);
  eq('generate 3000', (await s.post('/api/keys', { generate: { count: 3000 } })).status, 201);
  const before = await s.state();
  const opsBefore = await s.lastOpId();
  const old = byKey(before.keys.keys);

  const r = await s.req('PATCH', '/api/nodes/b', { body: { weight: 3 } });
  check('PATCH /api/nodes/b {"weight": 3}: 200 {"node", "operation"}', r.status === 200 && r.json && r.json.node && r.json.operation, `${r.status} ${r.text.slice(0, 300)}`);
  if (r.status !== 200) return;
  const { node, operation: op } = r.json;
  eq('the node answers its new weight and points', [node.name, node.weight, node.points], ['b', 3, pointsFor(10, 3)]);
  eq('one set_weight operation about b', [op.id, op.type, op.subject], [opsBefore + 1, 'set_weight', 'b']);
  nodes[1].weight = 3;
  const owner = ringOwner(nodes, 10);
  const after = await s.allKeys();
  let wrong = 0;
  for (const k of after.keys) if (k.node !== owner(k.key)) wrong++;
  eq('every key is where the ring with the new weight says', wrong, 0);
  const moved = after.keys.filter((k) => old[k.key] !== k.node);
  eq('keys_moved counts the keys whose owner changed', op.keys_moved, moved.length);
  check('some keys moved (to b)', moved.length > 0 && moved.every((k) => k.node === 'b'), String(moved.length));
  const from = {};
  for (const k of moved) from[old[k.key]] = (from[old[k.key]] || 0) + 1;
  eq('moved_from says where they were', Object.fromEntries(op.moved_from.map((m) => [m.node, m.keys])), from);
  const mv = await s.allMoves(op.id);
  eq('the operation lists every move', mv.moves.map((m) => `${m.key}:${m.from}>${m.to}`).sort(), moved.map((k) => `${k.key}:${old[k.key]}>b`).sort());
  const ls = (await s.ok('/api/nodes')).nodes.find((n) => n.name === 'b');
  eq('GET /api/nodes shows the weight', [ls.weight, ls.points], [3, pointsFor(10, 3)]);

  // Time travel, forward and back over it.
  const past = await s.state(opsBefore);
  eq('?at= before the change: the state before it', past, before);
  const now = await s.state(op.id);
  eq('?at= the change: the state after it', now, await s.state());

  // The same weight again: nothing recorded.
  const same = await s.req('PATCH', '/api/nodes/b', { body: { weight: 3 } });
  check('the same weight: 200 with "operation": null', same.status === 200 && same.json && same.json.operation === null && same.json.node.weight === 3, same.text);
  eq('and nothing recorded', await s.lastOpId(), op.id);

  // Refusals change nothing.
  const cases = [
    [{ weight: '0x10' }, 400, 'invalid_parameter'],
    [{ weight: '16' }, 400, 'invalid_parameter'],
    [{ weight: 0 }, 400, 'invalid_parameter'],
    [{ weight: -2 }, 400, 'invalid_parameter'],
    [{ weight: 1e6 }, 400, 'invalid_parameter'],
    [{ weight: null }, 400, 'invalid_parameter'],
    [{}, 400, 'invalid_parameter'],
    [{ weight: 2, name: 'x' }, 400, 'invalid_parameter'],
    ['[2]', 400, 'invalid_json'],
  ];
  for (const [body, status, code] of cases) {
    const x = await s.req('PATCH', '/api/nodes/b', { body });
    check(`PATCH ${JSON.stringify(body)}: ${status} ${code}`, x.status === status && x.json && x.json.error.code === code, `${x.status} ${x.text}`);
  }
  const nf = await s.req('PATCH', '/api/nodes/nobody', { body: { weight: 2 } });
  check('PATCH a node that does not exist: 404', nf.status === 404 && nf.json.error.code === 'not_found', nf.text);
  eq('refusals recorded nothing', await s.lastOpId(), op.id);

  // Revert to before the change.
  const rv = await s.post('/api/revert', { to: opsBefore });
  eq('revert to before the change', rv.status, 200);
  eq('the state is the one before the change', (await s.state()).keys, before.keys);
  eq('b has weight 1 again', (await s.ok('/api/nodes/b')).weight, 1);

  // The scenario export rebuilds the same state (set_weight written as `node weight`).
  const again = await s.req('PATCH', '/api/nodes/c', { body: { weight: 0.5 } });
  eq('PATCH c to 0.5', again.status, 200);
  const exp = await s.get('/api/export/scenario');
  check('the export writes `node weight c 0.5`', exp.status === 200 && /^node weight c 0\.5$/m.test(exp.text), exp.text);
  const want = await s.state();
  return { text: exp.text, want };
}

async function exportRuns(s, got) {
  if (!got) return;
  const r = await s.post('/api/scenarios/run', { text: got.text });
  check('the exported scenario runs', r.status === 200, r.text.slice(0, 300));
  const st = await s.state();
  eq('it rebuilds the same nodes', st.nodes, got.want.nodes);
  eq('it rebuilds the same keys', st.keys, got.want.keys);
}

async function weightsWithAlgorithms(s) {
  for (const n of ['10.0.0.1:11211', '10.0.0.2:11211', '10.0.0.3:11211']) await s.post('/api/nodes', { name: n });
  await s.post('/api/keys', { generate: { count: 2000 } });
  eq('switch to ketama', (await s.put('/api/config', { algorithm: 'ketama' })).status, 200);
  const last = await s.lastOpId();
  const bad = await s.req('PATCH', `/api/nodes/${enc('10.0.0.1:11211')}`, { body: { weight: 2.5 } });
  check('ketama refuses a weight of 2.5 (whole numbers)', bad.status === 400 && bad.json.error.code === 'invalid_parameter', bad.text);
  eq('nothing recorded', await s.lastOpId(), last);
  const before = byKey((await s.allKeys()).keys);
  const ok = await s.req('PATCH', `/api/nodes/${enc('10.0.0.1:11211')}`, { body: { weight: 3 } });
  check('ketama takes 3', ok.status === 200 && ok.json.operation.type === 'set_weight', ok.text);
  const after = (await s.allKeys()).keys;
  const moved = after.filter((k) => before[k.key] !== k.node).length;
  eq('ketama: keys_moved counts every owner change (its point counts depend on every share)', ok.json.operation.keys_moved, moved);
  const chk = await s.get('/api/nodes?at=' + last);
  check('time travel before it works', chk.status === 200 && chk.json.nodes.every((n) => n.weight === 1), chk.text.slice(0, 200));
}

async function foreignParams(s) {
  eq('add a node', (await s.post('/api/nodes', { name: 'alpha' })).status, 201);
  const last = await s.lastOpId();
  const bad = await s.put('/api/config', { algorithm: 'ring', params: { probes: 3 } });
  check('ring with probes=3: 400 invalid_parameter naming probes and ring',
    bad.status === 400 && bad.json.error.code === 'invalid_parameter' && /probes/.test(bad.json.error.message) && /ring/.test(bad.json.error.message), bad.text);
  eq('nothing recorded', await s.lastOpId(), last);
  const pv = await s.post('/api/preview', { op: 'configure', algorithm: 'jump', params: { table_size: 7 } });
  check('preview refuses it too', pv.status === 400 && pv.json.error.code === 'invalid_parameter', pv.text);
  const ok = await s.put('/api/config', { algorithm: 'multiprobe', params: { probes: 3 } });
  check('multiprobe with probes=3: one configure', ok.status === 200 && ok.json.operation && ok.json.operation.type === 'configure', ok.text);
  const last2 = await s.lastOpId();
  eq('it was recorded', last2, last + 1);
  const same = await s.put('/api/config', { algorithm: 'multiprobe', params: { probes: 3 } });
  check('the same configuration again: 200 "operation": null', same.status === 200 && same.json.operation === null && same.json.config.algorithm === 'multiprobe', same.text);
  eq('no operation recorded', await s.lastOpId(), last2);
  const empty = await s.put('/api/config', {});
  check('an empty configure: "operation": null', empty.status === 200 && empty.json.operation === null, empty.text);
  eq('still no operation recorded', await s.lastOpId(), last2);
  // points_per_node is ring's parameter, top-level or in params alike.
  for (const body of [{ points_per_node: 7 }, { algorithm: 'haproxy', points_per_node: 10000 }, { algorithm: 'ketama', params: { points_per_node: 7 } }]) {
    const r = await s.put('/api/config', body);
    check(`${JSON.stringify(body)} under multiprobe: 400 invalid_parameter naming points_per_node`,
      r.status === 400 && r.json.error.code === 'invalid_parameter' && /points_per_node/.test(r.json.error.message), r.text);
  }
  const twice = await s.put('/api/config', { algorithm: 'ring', points_per_node: 6, params: { points_per_node: 5 } });
  check('points_per_node given twice with two values: 400', twice.status === 400 && twice.json.error.code === 'invalid_parameter', twice.text);
  eq('none of them recorded anything', await s.lastOpId(), last2);
  const agree = await s.put('/api/config', { algorithm: 'ring', points_per_node: 5, params: { points_per_node: 5 } });
  check('... twice with one value: taken', agree.status === 200 && agree.json.config.points_per_node === 5, agree.text);
}

async function generateSkipsNothing(s) {
  eq('generate 10', (await s.post('/api/keys', { generate: { count: 10 } })).json.inserted, 10);
  eq('delete key-3', (await s.req('DELETE', '/api/keys/key-3')).status, 200);
  const r = await s.post('/api/keys', { generate: { count: 10 } });
  eq('generate 10 again: 10 inserted, 0 skipped', [r.status, r.json.inserted, r.json.skipped], [201, 10, 0]);
  const keys = (await s.allKeys()).keys.map((k) => k.key).sort();
  const want = [];
  for (let i = 0; i < 20; i++) if (i !== 3) want.push(`key-${i}`);
  eq('the keys are key-0 … key-19 without key-3', keys, want.sort());
  const st = await s.post('/api/keys', { generate: { count: 4, start: 3 } });
  eq('an explicit start is used as given (key-3 back, 3 skipped)', [st.json.inserted, st.json.skipped], [1, 3]);
  await s.post('/api/reset');
  const again = await s.post('/api/keys', { generate: { count: 2 } });
  eq('after a reset (an empty state) it starts at 0 again', again.json.operation.subject, '2 keys key-0 … key-1');
  await s.req('DELETE', '/api/keys/key-1');
  const rev = await s.post('/api/revert', { to: (await s.lastOpId()) - 1 });
  eq('revert', rev.status, 200);
  const after = await s.post('/api/keys', { generate: { count: 1 } });
  eq('a revert does not lower it: key-2 next', [after.json.operation.subject, after.json.inserted], ['key-2', 1]);
}

async function readableNames(s) {
  for (const [what, name] of [['U+202E', 'li\u202Eve'], ['U+2066', '\u2066a'], ['U+200B alone', '\u200B'], ['three spaces', '   '], ['U+200B and U+00A0', '\u200B\u00A0']]) {
    const r = await s.post('/api/nodes', { name });
    check(`a node named with ${what}: 400 invalid_name`, r.status === 400 && r.json.error.code === 'invalid_name', r.text);
  }
  eq('nothing recorded', await s.lastOpId(), 0);
  const k = await s.post('/api/keys', { key: '\u200B' });
  eq('a key may be U+200B (keys stay any text without control characters)', k.status, 201);
  const a = await s.post('/api/nodes', { name: 'caf\u00e9' });
  check('NFC café: no warning', a.status === 201 && !('warning' in a.json), a.text);
  const b = await s.post('/api/nodes', { name: 'cafe\u0301' });
  check('NFD café is added, with "warning": "looks the same as …"', b.status === 201 && b.json.node.name === 'cafe\u0301' && /^looks the same as .*caf\u00e9/.test(b.json.warning || ''), b.text);
  const c = await s.post('/api/nodes', { name: 'a\u200Bb' });
  check('a name with a visible character and U+200B is accepted', c.status === 201 && !('warning' in c.json), c.text);
}

async function theoryOfOne(s) {
  const r = await s.get('/api/theory?nodes=1');
  check('theory ?nodes=1 answers for N = 1, not 2', r.status === 200 && r.json.nodes === 1 && r.json.ideal_join_moved === 0.5, r.text.slice(0, 300));
  check('with one node every point count is balanced (1.0)', r.status === 200 && r.json.points.every((p) => p.expected_max_over_mean === 1 && p.ring_max_over_mean === 1), r.text.slice(0, 300));
  await s.post('/api/nodes', { name: 'solo' });
  const d = await s.get('/api/theory');
  eq('theory of the current single node is for N = 1', d.json.nodes, 1);
}

async function scenarioLineOnce(s) {
  const texts = ['node add a\nfrob x\n', 'node add a\nnode add "open\n', 'node add a\nexpect nodes == 5\n',
    'node add a\nnode add a\n', 'config --algorithm ring --param probes=3\n', 'node add \u202Ex\n', 'key gen 0\n'];
  for (const text of texts) {
    const r = await s.post('/api/scenarios/run', { text });
    const j = r.json || {};
    const msgs = [];
    if (j.error) msgs.push(j.error.message);
    if (j.failed) msgs.push(j.failed.message);
    for (const st of j.steps || []) if (st.error) msgs.push(st.error.message);
    check(`scenario ${JSON.stringify(text)}: refused with a message`, msgs.length > 0, r.text.slice(0, 300));
    for (const m of msgs) check(`"line N:" at most once in ${JSON.stringify(m)}`, (m.match(/line \d+:/gi) || []).length <= 1, m);
  }
}

async function main() {
  let got;
  await withServer('v3 set_weight', async (s) => (got = await setWeight(s)));
  await withServer('v3 set_weight export', (s) => exportRuns(s, got));
  await withServer('v3 set_weight ketama', weightsWithAlgorithms);
  await withServer('v3 foreign params', foreignParams);
  await withServer('v3 generate', generateSkipsNothing);
  await withServer('v3 readable names', readableNames);
  await withServer('v3 theory N = 1', theoryOfOne);
  await withServer('v3 scenario errors', scenarioLineOnce);
  setGroup('all');
  finish();
}

main().catch(crashed);
