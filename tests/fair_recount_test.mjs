// tests/fair_recount_test.mjs - docs/api.md v4 "balance as the systems count
// it", checked against an independent recount under every algorithm of the
// catalogue: a cluster with unequal weights (where the algorithm has them)
// and a node down; every key's served_by read back, and from it alone this
// test recomputes each node's fair share and load_over_fair, stats'
// max_over_mean, cv, mean, min, max and unavailable, and, for a node
// removed and a node brought back up, the operation's net keys_moved, its
// exact (from, to) pairs and its unavailable_after -- compared with what the
// server answers, and with what its preview said before.
//
//   node tests/fair_recount_test.mjs /path/to/ringsim
//
// Ends with "N passed, N failed".
//
// Checks docs/api.md, 'Balance against fair shares (version 4)'.

import { setGroup, finish, crashed, check, eq, near, withServer, enc } from './lib/harness.mjs';

const KEYS = 3000;
const HOSTS = ['10.0.0.1:6379', '10.0.0.2:6379', '10.0.0.3:6379', '10.0.0.4:6379', '10.0.0.5:6379', '10.0.0.6:6379'];
// ceph's nodes are OSDs, named osd.N
const OSDS = ['osd.0', 'osd.1', 'osd.2', 'osd.3', 'osd.4', 'osd.5'];
const WEIGHTS = [1, 3, 2, 1, 2, 1];

// The recount: fair-share weights of the nodes that can take keys (up,
// weight above 0; 1 each without weights), each node's served keys.
function recount(nodes, keys, hasWeights) {
  const w = new Map(nodes.map((n) => [n.name, n.state !== 'down' && n.weight > 0 ? (hasWeights ? n.weight : 1) : 0]));
  const W = [...w.values()].reduce((a, b) => a + b, 0);
  const served = new Map(nodes.map((n) => [n.name, 0]));
  let unav = 0;
  for (const k of keys) {
    if (k.served_by === null) unav++;
    else served.set(k.served_by, served.get(k.served_by) + 1);
  }
  const total = keys.length - unav;
  const fair = new Map([...w].map(([n, x]) => [n, W > 0 ? x / W : 0]));
  const lof = new Map();
  for (const [n, f] of fair) if (f > 0) lof.set(n, served.get(n) / total / f);
  const counts = [...fair].filter(([, f]) => f > 0).map(([n]) => served.get(n));
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  return {
    fair,
    lof,
    served,
    unav,
    max_over_mean: Math.max(...lof.values()),
    cv: Math.sqrt([...lof].reduce((a, [n, r]) => a + fair.get(n) * (r - 1) ** 2, 0)),
    mean,
    min: Math.min(...counts),
    max: Math.max(...counts),
  };
}

// Net changes of server between two key listings, as pairs.
function netPairs(before, after) {
  const b = new Map(before.map((k) => [k.key, k.served_by]));
  const m = new Map();
  let moved = 0;
  for (const k of after) {
    if (!b.has(k.key) || b.get(k.key) === k.served_by) continue;
    moved++;
    const id = JSON.stringify([b.get(k.key), k.served_by]);
    m.set(id, (m.get(id) || 0) + 1);
  }
  const pairs = [...m].map(([id, keys]) => ({ from: JSON.parse(id)[0], to: JSON.parse(id)[1], keys }));
  return { moved, pairs };
}

const pairKey = (p) => `${p.from}->${p.to}:${p.keys}`;
const sortedPairs = (ps) => ps.map(pairKey).sort();

function checkStats(label, st, nodes, keys, hasWeights) {
  const r = recount(nodes, keys, hasWeights);
  for (const p of st.per_node) {
    near(`${label}: ${p.name} fair_share`, p.fair_share, r.fair.get(p.name), 1e-12);
    if (r.fair.get(p.name) > 0) near(`${label}: ${p.name} load_over_fair`, p.load_over_fair, r.lof.get(p.name), 1e-9);
    else eq(`${label}: ${p.name} cannot take keys: load_over_fair null`, p.load_over_fair, null);
    eq(`${label}: ${p.name} keys are its served keys`, p.keys, r.served.get(p.name));
  }
  near(`${label}: max_over_mean is the largest load_over_fair`, st.max_over_mean, r.max_over_mean, 1e-9);
  near(`${label}: cv weighted by fair share`, st.cv, r.cv, 1e-9);
  near(`${label}: mean over the nodes that take keys`, st.mean, r.mean, 1e-9);
  eq(`${label}: min and max over them`, [st.min, st.max], [r.min, r.max]);
  eq(`${label}: unavailable keys`, st.unavailable.keys, r.unav);
  near(`${label}: unavailable key_share`, st.unavailable.key_share, r.unav / keys.length, 1e-12);
  near(`${label}: unavailable requests_share (uniform)`, st.unavailable.requests_share, r.unav / keys.length, 1e-12);
  eq(`${label}: unavailable bytes (1 a key)`, st.unavailable.bytes, r.unav);
  return r;
}

async function checkOperation(s, label, hasWeights, previewBody, run) {
  const before = (await s.allKeys()).keys;
  const pv = await s.post('/api/preview', previewBody);
  eq(`${label}: preview answers`, pv.status, 200);
  const r = await run();
  check(`${label}: the operation is accepted`, r.status === 200 || r.status === 201, r.text);
  const op = r.json.operation;
  const after = (await s.allKeys()).keys;
  const want = netPairs(before, after);
  eq(`${label}: keys_moved counts net changes of server`, op.keys_moved, want.moved);
  eq(`${label}: pairs are every (from, to) pair, exact`, sortedPairs(op.pairs), sortedPairs(want.pairs));
  check(`${label}: pairs largest first`, op.pairs.every((p, i) => i === 0 || op.pairs[i - 1].keys >= p.keys), JSON.stringify(op.pairs));
  for (const p of op.pairs) {
    near(`${label}: pair ${p.from}->${p.to} requests_share (uniform)`, p.requests_share, p.keys / KEYS, 1e-12);
    eq(`${label}: pair ${p.from}->${p.to} bytes`, p.bytes, p.keys);
  }
  eq(`${label}: the preview said the same keys_moved`, pv.json.keys_moved, op.keys_moved);
  eq(`${label}: the preview said the same pairs`, sortedPairs(pv.json.pairs), sortedPairs(op.pairs));
  const unav = after.filter((k) => k.served_by === null).length;
  eq(`${label}: unavailable_after keys`, op.unavailable_after.keys, unav);
  near(`${label}: unavailable_after key_share`, op.unavailable_after.key_share, unav / KEYS, 1e-12);
  eq(`${label}: the preview's unavailable_after`, pv.json.unavailable_after.keys, unav);
  const logged = await s.ok(`/api/operations/${op.id}`);
  eq(`${label}: GET /api/operations/{id} keeps the pairs`, sortedPairs(logged.pairs), sortedPairs(op.pairs));
  const stats = await s.ok('/api/stats');
  const nodes = (await s.ok('/api/nodes')).nodes;
  checkStats(`${label}: stats after`, stats, nodes, after, hasWeights);
  near(`${label}: preview's after.max_over_mean`, pv.json.after.max_over_mean, stats.max_over_mean, 1e-12);
}

async function oneAlgorithm(s, alg) {
  const NAMES = alg.name === 'ceph' ? OSDS : HOSTS;
  const hasWeights = alg.weights;
  eq(`${alg.name}: configure`, (await s.put('/api/config', { algorithm: alg.name })).status, 200);
  for (let i = 0; i < NAMES.length; i++) {
    const r = await s.post('/api/nodes', { name: NAMES[i], weight: hasWeights ? WEIGHTS[i] : 1 });
    eq(`${alg.name}: add ${NAMES[i]}`, r.status, 201);
  }
  eq(`${alg.name}: generate`, (await s.post('/api/keys', { generate: { count: KEYS } })).status, 201);
  // Every node up: under equal weights these are version 3's figures.
  let st = await s.ok('/api/stats');
  let nodes = (await s.ok('/api/nodes')).nodes;
  let keys = (await s.allKeys()).keys;
  checkStats(`${alg.name} all up`, st, nodes, keys, hasWeights);
  if (!hasWeights) {
    const c = nodes.map((n) => n.keys);
    const mean = KEYS / c.length;
    near(`${alg.name}: equal weights: max_over_mean is version 3's max / mean`, st.max_over_mean, Math.max(...c) / mean, 1e-12);
  }
  // A node down (the one of weight 3): it leaves the fair shares.
  await checkOperation(s, `${alg.name} node down`, hasWeights, { op: 'set_state', name: NAMES[1], state: 'down' }, () => s.put(`/api/nodes/${enc(NAMES[1])}/state`, { state: 'down' }));
  st = await s.ok('/api/stats');
  nodes = (await s.ok('/api/nodes')).nodes;
  keys = (await s.allKeys()).keys;
  const r = checkStats(`${alg.name} one down`, st, nodes, keys, hasWeights);
  eq(`${alg.name}: the down node has no fair share`, r.fair.get(NAMES[1]), 0);
  // A node removed while one is down, then the down one back up.
  await checkOperation(s, `${alg.name} node rm`, hasWeights, { op: 'remove_node', name: NAMES[3] }, () => s.del(`/api/nodes/${enc(NAMES[3])}`));
  await checkOperation(s, `${alg.name} node up`, hasWeights, { op: 'set_state', name: NAMES[1], state: 'up' }, () => s.put(`/api/nodes/${enc(NAMES[1])}/state`, { state: 'up' }));
}

async function cassandraUnavailable(s) {
  // RF 1, one node down: its keys have no live replica, counted everywhere.
  eq('configure cassandra', (await s.put('/api/config', { algorithm: 'cassandra', params: { num_tokens: 4 } })).status, 200);
  for (const n of ['a', 'b', 'c', 'd']) eq(`add ${n}`, (await s.post('/api/nodes', { name: n })).status, 201);
  eq('generate', (await s.post('/api/keys', { generate: { count: KEYS } })).status, 201);
  await checkOperation(s, 'cassandra RF1 b down', true, { op: 'set_state', name: 'b', state: 'down' }, () => s.put('/api/nodes/b/state', { state: 'down' }));
  const st = await s.ok('/api/stats');
  check('some keys have no live replica', st.unavailable.keys > 0, JSON.stringify(st.unavailable));
  const op = (await s.ok('/api/operations?after=0&limit=1000')).operations.at(-1);
  check('the down node\'s keys went to nobody', op.pairs.length === 1 && op.pairs[0].from === 'b' && op.pairs[0].to === null, JSON.stringify(op.pairs));
  const tr = await s.post('/api/traffic/run', { requests: 20000, concurrency: 4, seed: 1 });
  eq('traffic run', tr.status, 200);
  const handled = tr.json.nodes.reduce((a, n) => a + n.handled, 0);
  eq('replay: handled plus unserved are the requests', handled + tr.json.unserved, 20000);
  check('replay: requests nobody serves are counted', tr.json.unserved > 0, String(tr.json.unserved));
}

async function main() {
  let algs = [];
  await withServer('catalogue', async (s) => {
    algs = (await s.ok('/api/config')).algorithms;
  });
  check('the catalogue lists algorithms', algs.length >= 10, String(algs.length));
  for (const alg of algs) {
    setGroup(alg.name);
    await withServer(`recount ${alg.name}`, (s) => oneAlgorithm(s, alg));
  }
  await withServer('cassandra RF1 unavailable', cassandraUnavailable);
  finish();
}

main().catch(crashed);
