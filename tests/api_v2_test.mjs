// tests/api_v2_test.mjs - HTTP API version 2 (API.md, "Version 2: placement
// algorithms" and "looking before changing"): the catalogue, switching
// algorithms, parameters and replicas, the new fields, refusals that change
// nothing, preview against the operation it previews, compare against the
// switch it predicts, and the textbook algorithms recomputed here from
// API.md's definitions (an outside implementation in JavaScript).
//
//   node tests/api_v2_test.mjs /path/to/ringsim
//
// Ends with "N passed, N failed".  Random choices use a fixed seed, printed
// on failure through the check names.
//
// Checks docs/api.md, 'GET /api/config', 'PUT /api/config', 'POST
// /api/preview', 'GET /api/compare'.

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';

import { BIN, setGroup, finish, crashed, check, eq, near, withServer } from './lib/harness.mjs';

const SEED = 0x5eed;
let rng = SEED;
const rnd = (n) => {
  rng = (rng * 1103515245 + 12345) % 2147483648;
  return rng % n;
};

const sha = (s) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest();
const sha64 = (s) => sha(s).readBigUInt64BE(0);
const M64 = (1n << 64n) - 1n;
const mix = (x) => {
  x ^= x >> 30n;
  x = (x * 0xbf58476d1ce4e5b9n) & M64;
  x ^= x >> 27n;
  x = (x * 0x94d049bb133111ebn) & M64;
  x ^= x >> 31n;
  return x;
};

// Lamping & Veach, as published (LCG 2862933555777941757, double arithmetic).
function jumpHash(key, buckets) {
  let b = -1n;
  let j = 0n;
  while (j < BigInt(buckets)) {
    b = j;
    key = (key * 2862933555777941757n + 1n) & M64;
    j = BigInt(Math.floor(Number(b + 1n) * (2 ** 31 / Number((key >> 33n) + 1n))));
  }
  return Number(b);
}

// API.md: score = -weight / ln(u), u = ((mix(sha64(key) ^ sha64(name)) >> 11) + 0.5) / 2^53.
function rendezvousOwner(key, nodes) {
  const hk = sha64(key);
  let best = null;
  for (const n of nodes) {
    const u = (Number(mix(hk ^ sha64(n.name)) >> 11n) + 0.5) / 2 ** 53;
    const score = -n.weight / Math.log(u);
    if (!best || score > best.score || (score === best.score && Buffer.compare(Buffer.from(n.name), Buffer.from(best.name)) < 0))
      best = { name: n.name, score };
  }
  return best && best.name;
}

// API.md: probes (h1 + i*h2) mod 2^32; the probe closest to its successor wins.
function multiprobeOwner(key, names, k) {
  const pts = names
    .map((n) => ({ pos: sha(n).readUInt32BE(0), name: n }))
    .sort((a, b) => a.pos - b.pos || Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const d = sha(key);
  const h1 = d.readUInt32BE(0);
  const h2 = (d.readUInt32BE(4) | 1) >>> 0;
  let best = null;
  for (let i = 0; i < k; i++) {
    const p = Number((BigInt(h1) + BigInt(i) * BigInt(h2)) % 4294967296n);
    let succ = pts.find((q) => q.pos >= p) || pts[0];
    const dist = (succ.pos - p + 4294967296) % 4294967296;
    if (!best || dist < best.dist) best = { dist, name: succ.name, probe: p };
  }
  return best;
}

const SERVERS = (n) => Array.from({ length: n }, (_, i) => `10.0.${i >> 6}.${(i & 63) + 1}:11211`);

async function setup(s, names, keys, weights = () => 1) {
  for (const [i, n] of names.entries()) {
    const r = await s.post('/api/nodes', { name: n, weight: weights(i) });
    check(`add ${n}`, r.status === 201, r.text);
  }
  const r = await s.post('/api/keys', { generate: { count: keys, prefix: 'k-' } });
  check('generate keys', r.status === 201, r.text);
}

async function catalogue(s) {
  const cfg = await s.ok('/api/config');
  const names = cfg.algorithms.map((a) => a.name);
  for (const want of ['ring', 'jump', 'rendezvous', 'multiprobe', 'ketama', 'nginx', 'envoy-ring', 'maglev', 'cassandra', 'redis'])
    check(`catalogue has ${want}`, names.includes(want), names.join(','));
  for (const a of cfg.algorithms) {
    check(`${a.name}: catalogue fields`, typeof a.title === 'string' && typeof a.space === 'string' && typeof a.key_hash === 'string' && Array.isArray(a.params) && typeof a.weights === 'boolean' && typeof a.replicas === 'boolean', JSON.stringify(a));
    for (const p of a.params) {
      if (p.values) check(`${a.name}.${p.name}: default among the values`, p.values.includes(p.default), JSON.stringify(p));
      else check(`${a.name}.${p.name}: default within range`, p.min <= p.default && p.default <= p.max);
    }
  }
  eq('defaults: ring, 1 point, 1 replica', [cfg.algorithm, cfg.points_per_node, cfg.replicas, cfg.params], ['ring', 1, 1, { points_per_node: 1 }]);
  const cli = JSON.parse(execFileSync(BIN, ['algorithms', '--json', '--db', '/nonexistent/not-opened.db']).toString());
  eq('ringsim algorithms --json is the catalogue', cli.algorithms, cfg.algorithms);
  return cfg.algorithms;
}

// Every stored key is where a lookup says; lookups carry the v2 fields.
async function checkPlacement(s, name, sample = 150) {
  const keys = (await s.ok(`/api/keys?limit=1000`)).keys;
  let bad = 0;
  for (const k of keys.slice(0, sample)) {
    const l = await s.ok(`/api/lookup?key=${encodeURIComponent(k.key)}`);
    if (l.node !== k.node || l.coordinate !== k.coordinate) bad++;
    if (!(typeof l.hash === 'string' && Array.isArray(l.trace) && l.trace.length >= 2 && l.trace.every((t) => typeof t.step === 'string' && typeof t.detail === 'string'))) bad++;
    if (!(Array.isArray(l.replicas) && l.replicas[0] === l.node && new Set(l.replicas).size === l.replicas.length)) bad++;
  }
  check(`${name}: stored owners and coordinates equal lookups, v2 lookup fields`, bad === 0, `${bad} bad`);
  return keys;
}

async function switching(s, algos) {
  await setup(s, SERVERS(6), 3000);
  for (const a of algos) {
    const body = { algorithm: a.name, replicas: a.replicas ? 2 : 1 };
    if (a.name === 'maglev') body.params = { table_size: 1009 };
    const before = await s.allKeys();
    const r = await s.put('/api/config', body);
    if (a.name === 'ceph') {
      // ceph's nodes are OSDs, osd.N: a switch over HOST:PORT names is
      // refused whole (ref_ceph checks ceph's placement against osdmaptool)
      eq('switch to ceph over HOST:PORT nodes: refused', [r.status, r.json && r.json.error.code], [400, 'invalid_name']);
      eq('ceph: the refused switch changed nothing', (await s.allKeys()).keys, before.keys);
      continue;
    }
    if (!check(`switch to ${a.name}: 200`, r.status === 200, r.text)) continue;
    eq(`${a.name}: config answers it`, [r.json.config.algorithm, r.json.config.replicas], [a.name, body.replicas]);
    const after = await s.allKeys();
    const moved = after.keys.filter((k, i) => k.node !== before.keys[i].node).length;
    eq(`${a.name}: keys_moved counts the owners that changed`, r.json.operation.keys_moved, moved);
    check(`${a.name}: replica_moves is a count`, Number.isInteger(r.json.operation.replica_moves));
    await checkPlacement(s, a.name);
    const nodes = (await s.ok('/api/nodes')).nodes;
    const owns = nodes.reduce((t, n) => t + n.owns, 0);
    near(`${a.name}: owns add up to R`, owns, body.replicas, 0.03);
    const arc = nodes.reduce((t, n) => t + n.arc_share, 0);
    near(`${a.name}: arc shares add up to 1`, arc, 1, 0.03);
    const ring = await s.ok('/api/ring');
    check(`${a.name}: ring answer has a space and points or runs`, typeof ring.space === 'string' && (Array.isArray(ring.points) || Array.isArray(ring.runs)));
    if (ring.runs) {
      let next = 0;
      let ok = true;
      for (const run of ring.runs) {
        ok = ok && run.first === next && run.last >= run.first;
        next = run.last + 1;
      }
      check(`${a.name}: runs cover the table`, ok && String(next) === ring.space);
    }
    const stored = execFileSync(BIN, ['check', '--db', s.db]).toString();
    check(`${a.name}: ringsim check passes`, /^ok:/.test(stored), stored);
  }
  // Back to the original simulator: the v1 answers again.
  const r = await s.put('/api/config', { algorithm: 'ring', replicas: 1 });
  eq('back to ring', r.status, 200);
}

async function outsideImplementations(s) {
  const names = SERVERS(7);
  await setup(s, names, 1500, (i) => (i % 3) + 1);
  // rendezvous honours weights: recompute every owner here.
  let r = await s.put('/api/config', { algorithm: 'rendezvous' });
  eq('rendezvous: switch', r.status, 200);
  const nodes = names.map((n, i) => ({ name: n, weight: (i % 3) + 1 }));
  let keys = (await s.allKeys()).keys;
  let bad = keys.filter((k) => rendezvousOwner(k.key, nodes) !== k.node).length;
  eq(`rendezvous: owners equal API.md's formula in JavaScript (seed ${SEED})`, bad, 0);
  // jump and multiprobe take no weights: remove the weights first.
  r = await s.put('/api/config', { algorithm: 'ring' });
  for (const n of names) await s.del(`/api/nodes/${encodeURIComponent(n)}`);
  for (const n of names) await s.post('/api/nodes', { name: n });
  r = await s.put('/api/config', { algorithm: 'jump' });
  eq('jump: switch', r.status, 200);
  keys = (await s.allKeys()).keys;
  bad = keys.filter((k) => names[jumpHash(sha64(k.key), names.length)] !== k.node || k.coordinate !== String(sha64(k.key))).length;
  eq('jump: bucket = JumpConsistentHash(sha64(key), n) in join order', bad, 0);
  r = await s.put('/api/config', { algorithm: 'multiprobe', params: { probes: 5 + rnd(30) } });
  eq('multiprobe: switch', r.status, 200);
  const k = r.json.config.params.probes;
  keys = (await s.allKeys()).keys;
  bad = keys.filter((key) => {
    const w = multiprobeOwner(key.key, names, k);
    return w.name !== key.node || String(w.probe) !== key.coordinate;
  }).length;
  eq(`multiprobe: owner and winning probe as API.md defines them (${k} probes)`, bad, 0);
  // jump: removing a middle node moves only its keys (MementoHash).
  const before = (await s.allKeys()).keys;
  r = await s.del(`/api/nodes/${encodeURIComponent(names[2])}`);
  const after = (await s.allKeys()).keys;
  bad = after.filter((x, i) => x.node !== before[i].node && before[i].node !== names[2]).length;
  eq("multiprobe: a leave moves only the leaver's keys", bad, 0);
}

async function refusals(s) {
  await setup(s, ['a', 'b'], 200, (i) => (i ? 1.5 : 1));
  const ops = (await s.ok('/api/operations')).operations.length;
  const cfg = await s.ok('/api/config');
  const cases = [
    [{ algorithm: 'maglev', replicas: 2 }, 'has no replicas'],
    [{ algorithm: 'ketama' }, 'whole numbers'],
    [{ algorithm: 'jump' }, 'does not honour weights'],
    [{ algorithm: 'nope' }, 'known:'],
    [{ params: { table_size: 65536 } }, 'prime'],
    [{ params: { bogus: 1 } }, 'unknown parameter'],
    [{ params: { probes: 1.5 } }, 'whole number'],
    [{ replicas: 0 }, 'replicas'],
    [{ replicas: 'two' }, 'replicas'],
    [{ params: { min_ring_size: 5000, max_ring_size: 10 } }, 'min_ring_size'],
    [{ algorithm: 12 }, 'string'],
  ];
  for (const [body, words] of cases) {
    const r = await s.put('/api/config', body);
    check(`PUT /api/config ${JSON.stringify(body)}: 400 invalid_parameter saying "${words}"`, r.status === 400 && r.json && r.json.error.code === 'invalid_parameter' && r.json.error.message.includes(words), `${r.status} ${r.text}`);
  }
  eq('refusals recorded nothing', (await s.ok('/api/operations')).operations.length, ops);
  eq('refusals changed nothing', await s.ok('/api/config'), cfg);
  const t = await s.post('/api/nodes', { name: 'c', tokens: ['12', 'x'] });
  check('tokens must be decimal strings', t.status === 400 && t.json.error.code === 'invalid_parameter', t.text);
  const t2 = await s.post('/api/nodes', { name: 'c', tokens: ['12'] });
  check('explicit tokens belong to cassandra', t2.status === 400 && /cassandra/.test(t2.json.error.message), t2.text);
}

async function preview(s) {
  await setup(s, SERVERS(5), 2000);
  await s.put('/api/config', { algorithm: 'ring', replicas: 3, points_per_node: 8 });
  const cases = [
    { op: 'add_node', name: '10.9.9.9:11211' },
    { op: 'remove_node', name: SERVERS(5)[1] },
    { op: 'configure', algorithm: 'rendezvous', replicas: 2 },
    { op: 'configure', algorithm: 'ketama', replicas: 1 },
  ];
  for (const c of cases) {
    const opsBefore = (await s.ok('/api/operations')).operations.length;
    const stats = await s.ok('/api/stats');
    const p = await s.post('/api/preview', c);
    if (!check(`preview ${c.op}: 200`, p.status === 200, p.text)) continue;
    eq(`preview ${c.op}: recorded nothing`, (await s.ok('/api/operations')).operations.length, opsBefore);
    eq(`preview ${c.op}: before is the current stats`, p.json.before, stats);
    const total = (x) => x.reduce((t, e) => t + e.keys, 0);
    eq(`preview ${c.op}: moved_from and moved_to add up to keys_moved`, [total(p.json.moved_from), total(p.json.moved_to)], [p.json.keys_moved, p.json.keys_moved]);
    check(`preview ${c.op}: a sample of moves`, Array.isArray(p.json.sample) && p.json.sample.length === Math.min(20, p.json.keys_moved));
    // Now do it: the operation must do exactly what the preview said.
    let r;
    if (c.op === 'add_node') r = await s.post('/api/nodes', { name: c.name });
    else if (c.op === 'remove_node') r = await s.del(`/api/nodes/${encodeURIComponent(c.name)}`);
    else r = await s.put('/api/config', { algorithm: c.algorithm, replicas: c.replicas });
    const op = r.json.operation;
    eq(`${c.op}: keys_moved as previewed`, op.keys_moved, p.json.keys_moved);
    eq(`${c.op}: replica_moves as previewed`, op.replica_moves, p.json.replica_moves);
    eq(`${c.op}: moved_from as previewed`, op.moved_from, p.json.moved_from);
    eq(`${c.op}: stats after as previewed`, await s.ok('/api/stats'), p.json.after);
    const moves = (await s.ok(`/api/operations/${op.id}`)).moves.slice(0, 20);
    eq(`${c.op}: the sample is the operation's first moves`, p.json.sample, moves);
  }
  const bad = await s.post('/api/preview', { op: 'explode' });
  check('preview of an unknown op: 400', bad.status === 400 && bad.json.error.code === 'invalid_parameter');
  const missing = await s.post('/api/preview', { op: 'remove_node', name: 'nobody' });
  check('preview of removing a missing node: 404', missing.status === 404);
}

async function compare(s) {
  await setup(s, SERVERS(6), 2500);
  const c = await s.ok('/api/compare?algorithms=ring,jump,ketama,maglev');
  eq('compare: keys and nodes', [c.keys, c.nodes, c.sample.sampled], [2500, 6, false]);
  eq('compare: the algorithms asked, in order', c.results.map((r) => r.algorithm), ['ring', 'jump', 'ketama', 'maglev']);
  eq('compare: the current one is marked', c.results.map((r) => r.current), [true, false, false, false]);
  const before = (await s.ok('/api/operations')).operations.length;
  for (const res of c.results) {
    check(`compare ${res.algorithm}: fields`, res.stats && typeof res.structural_max_over_mean === 'number' && res.lookup_ns > 0 && res.memory_bytes > 0 && Number.isInteger(res.moves_if_added) && Number.isInteger(res.moves_if_removed), JSON.stringify(res));
    // What switching then gives.
    const p = await s.post('/api/preview', { op: 'configure', algorithm: res.algorithm });
    const after = { ...p.json.after };
    delete after.per_node;
    delete after.requests; // the key statistics (requests: tests/workload_test.mjs)
    const keyStats = { ...res.stats };
    delete keyStats.requests;
    eq(`compare ${res.algorithm}: stats equal what switching gives`, keyStats, after);
  }
  eq('compare recorded nothing', (await s.ok('/api/operations')).operations.length, before);
  // moves_if_added equals a preview of adding compare-probe, for the current algorithm.
  const add = await s.post('/api/preview', { op: 'add_node', name: 'compare-probe' });
  eq('compare: moves_if_added equals the preview of adding compare-probe', c.results[0].moves_if_added, add.json.keys_moved);
  // moves_if_removed: the mean over every node of what removing it moves.
  const names = (await s.ok('/api/nodes')).nodes.map((n) => n.name);
  let removed = 0;
  for (const name of names) removed += (await s.post('/api/preview', { op: 'remove_node', name })).json.keys_moved;
  eq('compare: moves_if_removed is the mean of the previews of removing each node', [c.results[0].moves_if_removed, c.results[0].removed_sampled], [Math.round(removed / names.length), { nodes: 6, of: 6 }]);
  // A layout with a history (Redis's slots after a leave and a join): the
  // algorithm in use answers as stats and previews do, not as a fresh start.
  eq('redis', (await s.put('/api/config', { algorithm: 'redis' })).status, 200);
  eq('remove one', (await s.del(`/api/nodes/${encodeURIComponent(names[1])}`)).status, 200);
  eq('add one back', (await s.post('/api/nodes', { name: 'late-joiner' })).status, 201);
  const rc = (await s.ok('/api/compare?algorithms=redis')).results[0];
  const st = await s.ok('/api/stats');
  eq('compare redis in use: its stats are /api/stats', [rc.stats.max, rc.stats.min], [st.max, st.min]);
  const radd = await s.post('/api/preview', { op: 'add_node', name: 'compare-probe' });
  eq('compare redis in use: moves_if_added is the preview', rc.moves_if_added, radd.json.keys_moved);
  const all = await s.ok('/api/compare');
  check('compare with no list: the whole catalogue', all.results.length >= 8);
  const bad = await s.get('/api/compare?algorithms=ring,nope');
  check('compare of an unknown algorithm: 400', bad.status === 400 && /unknown algorithm/.test(bad.json.error.message), bad.text);
}

// Cassandra with explicit tokens (initial_token): a key belongs to the first
// token >= its token, wrapping; tokens are signed decimal strings.
async function cassandra(s) {
  let r = await s.put('/api/config', { algorithm: 'cassandra', replicas: 2 });
  eq('cassandra: switch', r.status, 200);
  const given = {
    a: ['-9223372036854775808', '-3074457345618258603'],
    b: ['3074457345618258602'],
    c: ['9223372036854775807', '0'],
  };
  for (const [name, tokens] of Object.entries(given)) {
    r = await s.post('/api/nodes', { name, tokens });
    check(`cassandra: node ${name} with tokens ${tokens}`, r.status === 201, r.text);
  }
  const nodes = (await s.ok('/api/nodes')).nodes;
  for (const n of nodes)
    eq(`cassandra: ${n.name}'s tokens in ring order`, n.tokens, [...given[n.name]].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)));
  const taken = await s.post('/api/nodes', { name: 'd', tokens: ['0'] });
  check('cassandra: a token another node holds is refused', taken.status === 400 && /c/.test(taken.json.error.message), taken.text);
  await s.post('/api/keys', { generate: { count: 300 } });
  const ring = Object.entries(given)
    .flatMap(([name, ts]) => ts.map((t) => ({ t: BigInt(t), name })))
    .sort((x, y) => (x.t < y.t ? -1 : 1));
  const keys = (await s.allKeys()).keys;
  let bad = 0;
  for (const k of keys) {
    const t = BigInt(k.coordinate);
    const i = ring.findIndex((p) => p.t >= t);
    const own = ring[i < 0 ? 0 : i].name;
    const next = ring.slice((i < 0 ? 0 : i) + 1).concat(ring).find((p) => p.name !== own).name;
    if (own !== k.node || k.replicas.join() !== [own, next].join()) bad++;
  }
  eq('cassandra: owners and SimpleStrategy replicas from the signed tokens', bad, 0);
  const l = await s.ok('/api/lookup?key=key-1');
  check('cassandra: the trace speaks of tokens', l.trace.some((x) => /token/.test(x.detail)));
}

// Redis Cluster: the published 3-master split of redis-cli --cluster create,
// hash tags, and slots (not keys) moving to a joining node.
async function redis(s) {
  for (const n of ['r1', 'r2', 'r3']) await s.post('/api/nodes', { name: n });
  let r = await s.put('/api/config', { algorithm: 'redis' });
  eq('redis: switch', r.status, 200);
  const slots = Object.fromEntries((await s.ok('/api/nodes')).nodes.map((n) => [n.name, n.slots]));
  eq("redis: create's split of 3 masters", slots, { r1: [[0, 5460]], r2: [[5461, 10922]], r3: [[10923, 16383]] });
  await s.post('/api/keys', { keys: ['{user1000}.following', '{user1000}.followers', 'foo{}{bar}', 'somekey'] });
  const k = Object.fromEntries((await s.allKeys()).keys.map((x) => [x.key, x]));
  eq('redis: keys with one {tag} share the slot', k['{user1000}.following'].coordinate, k['{user1000}.followers'].coordinate);
  eq("redis: somekey's slot (redis.io's example)", k.somekey.coordinate, '11058');
  await s.post('/api/keys', { generate: { count: 2000 } });
  const before = (await s.allKeys()).keys;
  r = await s.post('/api/nodes', { name: 'r4' });
  const after = (await s.allKeys()).keys;
  const wrong = after.filter((x, i) => x.node !== before[i].node && x.node !== 'r4').length;
  eq('redis: a join moves keys only to the newcomer (its slots come from the others)', wrong, 0);
  const ring = await s.ok('/api/ring');
  eq('redis: runs end at slot 16383', ring.runs[ring.runs.length - 1].last, 16383);
  const l = await s.ok('/api/lookup?key=' + encodeURIComponent('{user1000}.following'));
  check('redis: the trace speaks of the hash tag and the slot', l.trace.some((t) => /hash tag/.test(t.step)) && l.trace.some((t) => /slot/.test(t.detail)));
  const bad = await s.put('/api/config', { replicas: 2 });
  check('redis: no replicas', bad.status === 400 && /no replicas/.test(bad.json.error.message));
}

// GET /api/keys?order= and the density by coordinate, recomputed here from
// the keys' own positions and coordinates.
async function ordersAndDensity(s) {
  // No space or comma: ketama's server lists refuse them.
  for (const n of ['a', 'c/%#?', 'd"<i>', 'é']) await s.post('/api/nodes', { name: n });
  const names = ['zeta', 'Zeta', 'é', 'e', '日本', ' x ', 'a/b', '%41', '#1', '?q', '"quote"', '<b>'];
  await s.post('/api/keys', { keys: names });
  await s.post('/api/keys', { generate: { count: 400, prefix: 'k-' } });
  const bytes = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  const page = async (order) => {
    const out = [];
    for (let offset = 0; ; offset += 150) {
      const r = await s.ok(`/api/keys?order=${encodeURIComponent(order)}&limit=150&offset=${offset}`);
      out.push(...r.keys);
      if (r.keys.length < 150) return out;
    }
  };
  const all = await page('position');
  eq('order: position is the default order', (await s.allKeys()).keys.map((k) => k.key), all.map((k) => k.key));
  const byKey = all.map((k) => k.key).sort(bytes);
  eq('order=key: bytewise by key, across pages', (await page('key')).map((k) => k.key), byKey);
  eq('order=-key: the reverse', (await page('-key')).map((k) => k.key), [...byKey].reverse());
  const ofC = all.filter((k) => k.node === 'c/%#?').map((k) => k.key).sort(bytes);
  const r = await s.ok(`/api/keys?order=-key&node=${encodeURIComponent('c/%#?')}&limit=1000`);
  eq('order=-key with node=: that node\'s keys, reversed', [r.total, r.keys.map((k) => k.key)], [ofC.length, [...ofC].reverse()]);
  const desc = await page('-position');
  check('order=-position: positions never rise', desc.every((k, i) => i === 0 || desc[i - 1].position >= k.position));
  eq('order=coordinate on the ring: the positions', (await page('coordinate')).map((k) => k.key), all.map((k) => k.key));
  for (const bad of ['size', 'Key', '--key', '']) {
    const r = await s.get('/api/keys?order=' + encodeURIComponent(bad));
    check(`order=${bad || '(empty)'}: 400 with the error object`, r.status === 400 && r.json.error.code === 'invalid_parameter' && /order must be/.test(r.json.error.message), r.text);
  }
  const binsOf = (values, size, bins) => {
    const c = new Array(bins).fill(0);
    for (const v of values) c[Number((v * BigInt(bins)) / size)]++;
    return c;
  };
  let d = await s.ok('/api/density?bins=16');
  eq('density on the ring: by coordinate, the positions binned', [d.by, d.counts], ['coordinate', binsOf(all.map((k) => BigInt(k.position)), 1n << 32n, 16)]);
  const spaces = { ketama: 1n << 32n, redis: 16384n, cassandra: 1n << 64n, maglev: 65537n };
  for (const [alg, size] of Object.entries(spaces)) {
    const r = await s.put('/api/config', { algorithm: alg });
    eq(`${alg}: switch`, r.status, 200);
    const keys = await page('coordinate');
    // Cassandra's tokens are signed: the space starts at -2^63.
    const coord = (k) => BigInt(k.coordinate) + (alg === 'cassandra' ? 1n << 63n : 0n);
    const before = (a, b) => coord(a) < coord(b) || (coord(a) === coord(b) && (a.position < b.position || (a.position === b.position && bytes(a.key, b.key) < 0)));
    const sorted = keys.every((k, i) => i === 0 || before(keys[i - 1], k));
    check(`${alg}: order=coordinate sorts by the coordinate, then position, then key`, sorted && keys.length === all.length);
    const rev = await page('-coordinate');
    eq(`${alg}: order=-coordinate is the reverse`, rev.map((k) => k.key), keys.map((k) => k.key).reverse());
    d = await s.ok('/api/density?bins=24');
    eq(`${alg}: density by coordinate over the whole space`, [d.by, d.total, d.counts], ['coordinate', all.length, binsOf(keys.map(coord), size, 24)]);
  }
  await s.put('/api/config', { algorithm: 'jump' });
  d = await s.ok('/api/density?bins=10');
  eq('jump: no layout, so the density is by position', [d.by, d.counts], ['position', binsOf(all.map((k) => BigInt(k.position)), 1n << 32n, 10)]);
}

// A look at the past that needs a long replay runs on the reading worker:
// an operation sent meanwhile is answered first, and the replay's answer
// is still the state it asked for.  (About 200,000 keys of work in all: below
// the 250,000 after which the server keeps a checkpoint that would make the
// look fast.)
async function readsBesideOperations(s) {
  await s.post('/api/nodes', { name: 'a' });
  await s.post('/api/keys', { generate: { count: 100000 } });
  const target = (await s.post('/api/nodes', { name: 'b' })).json.operation.id;
  // A revert in between: the state after `target` can only be replayed.
  await s.post('/api/revert', { to: target - 1 });
  const order = [];
  const past = s.get(`/api/stats?at=${target}`).then((r) => { order.push('past'); return r; });
  await new Promise((done) => setTimeout(done, 30));
  const add = await s.post('/api/nodes', { name: 'c' });
  order.push('add');
  const r = await past;
  eq('reads beside operations: the add is answered while the replay runs', order, ['add', 'past']);
  eq('reads beside operations: the add went through', add.status, 201);
  eq('reads beside operations: the past is as it was (2 nodes, 100,000 keys)', [r.status, r.json.nodes, r.json.keys], [200, 2, 100000]);
  // Past 250,000 keys of work the idle reading worker keeps a checkpoint; a
  // state behind a revert is then read from it, and is the same state.
  const gen = (await s.post('/api/keys', { generate: { count: 200000, prefix: 'more-' } })).json.operation.id;
  await new Promise((done) => setTimeout(done, 600));
  await s.post('/api/revert', { to: 1 });
  const [after, again] = [await s.get(`/api/stats?at=${gen}`), await s.get(`/api/stats?at=${gen}`)];
  eq('checkpoints: the state behind a revert (2 nodes, 300,000 keys)', [after.status, after.json.nodes, after.json.keys], [200, 2, 300000]);
  eq('checkpoints: asked again, the same', again.json, after.json);
}

async function theory(s) {
  const t = await s.ok('/api/theory?nodes=50');
  eq('theory: nodes and ideal join share', [t.nodes, t.ideal_join_moved], [50, 1 / 51]);
  let ok = true;
  for (const p of t.points) ok = ok && Math.abs(p.expected_max_over_mean - (1 + Math.sqrt((2 * Math.log(50)) / p.points_per_node))) < 1e-12;
  check('theory: expected = 1 + sqrt(2 ln n / V) at every V', ok && t.points.length >= 8);
  const first = t.points[0], last = t.points[t.points.length - 1];
  check('theory: the measured ring evens out with more points', last.ring_max_over_mean < first.ring_max_over_mean && last.ring_max_over_mean < 1.2, JSON.stringify([first, last]));
  const by = Object.fromEntries(t.algorithms.map((a) => [a.algorithm, a]));
  eq('theory: jump and rendezvous are structurally perfect', [by.jump.structural_max_over_mean, by.rendezvous.structural_max_over_mean], [1, 1]);
  check('theory: a join moves about 1/(n+1) with jump', Math.abs(by.jump.join_moved - 1 / 51) < 0.01, String(by.jump.join_moved));
  check('theory: a sentence for people', /busiest of 50 nodes/.test(t.sentence), t.sentence);
  const bad = await s.get('/api/theory?nodes=5000');
  check('theory: nodes above 1000 refused', bad.status === 400);
}

// RINGSIM_GROUPS="a,b": only the groups whose names contain one of these
// (the ThreadSanitizer run takes the workers' group alone).
const only = (process.env.RINGSIM_GROUPS || '').split(',').filter(Boolean);
let groupsRun = 0;
const run = (name, fn) => {
  if (only.length && !only.some((o) => name.includes(o))) return null;
  groupsRun++;
  return withServer(name, fn);
};

async function main() {
  let algos = [];
  await run('v2 catalogue', async (s) => (algos = await catalogue(s)));
  await run('v2 switching', (s) => switching(s, algos));
  await run('v2 outside implementations', outsideImplementations);
  await run('v2 refusals', refusals);
  await run('v2 preview', preview);
  await run('v2 compare', compare);
  await run('v2 cassandra', cassandra);
  await run('v2 theory', theory);
  await run('v2 redis', redis);
  await run('v2 orders and density', ordersAndDensity);
  await run('v2 reads beside operations', readsBesideOperations);
  setGroup('all');
  check(`RINGSIM_GROUPS=${only.join(',')} names a group`, groupsRun > 0);
  finish();
}

main().catch(crashed);
