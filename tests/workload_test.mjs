// tests/workload_test.mjs - workloads (API.md version 3, "traffic"):
// each stored key's share of requests and value size, per node, per
// operation, in stats, in time travel and revert, and the refusals.
//
//   node tests/workload_test.mjs /path/to/ringsim
//
// Every expected figure is computed here from the key list the server
// answers (key -> node), by API.md's rules written again in JavaScript:
// ranks by sha64(seed ":" key) with BigInt, zipf's normalisation by a
// plain sum, sizes by sha64("size:" seed ":" key).  YCSB's key names are
// checked against a Java program run with the machine's `java` (Java's
// own long arithmetic).  Ends with "N passed, N failed".
//
// Checks docs/api.md, 'Workloads: requests and value sizes'.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, setGroup, finish, crashed, check, eq, withServer, cmpBytes, tmpRoot, freshDb } from './lib/harness.mjs';

const sha64 = (s) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest().readBigUInt64BE(0);
const TOL = 1e-9;
const close = (a, b) => Math.abs(a - b) <= TOL * Math.max(1, Math.abs(b));

// The shares of API.md, from the stored keys (an array of key strings).
function shares(w, keys) {
  const n = keys.length;
  const out = new Map();
  if (!n) return out;
  const kind = w.kind || 'uniform';
  if (kind === 'uniform') {
    for (const k of keys) out.set(k, 1 / n);
    return out;
  }
  if (kind === 'keys') {
    const listed = new Map(w.keys.filter((e) => keys.includes(e.key)).map((e) => [e.key, e.share]));
    let sum = 0;
    for (const v of listed.values()) sum += v;
    const others = n - listed.size;
    for (const k of keys) out.set(k, listed.has(k) ? (others ? listed.get(k) : listed.get(k) / sum) : (1 - sum) / others);
    return out;
  }
  const seed = w.seed ?? 0;
  let order;
  if (w.order === 'insert') {
    // the caller's own record of the insertions, oldest first
    const stored = new Set(keys);
    order = w.inserted.filter((k) => stored.has(k)).map((k) => ({ k }));
    if (order.length !== n) throw new Error(`insertion record has ${order.length} of ${n} keys`);
  } else {
    order = keys.map((k) => ({ k, h: sha64(`${seed}:${k}`) }));
    order.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : cmpBytes(a.k, b.k)));
  }
  if (kind === 'zipf') {
    let h = 0;
    for (let r = n; r >= 1; r--) h += r ** -w.s;
    order.forEach((e, i) => out.set(e.k, (i + 1) ** -w.s / h));
  } else if (kind === 'hotspot') {
    const hot = Math.min(n, Math.max(1, Math.floor(w.hot_fraction * n)));
    order.forEach((e, i) => out.set(e.k, hot >= n ? 1 / n : i < hot ? w.hot_share / hot : (1 - w.hot_share) / (n - hot)));
  }
  return out;
}

function sizeOf(sizes, key) {
  if (!sizes || sizes.kind === 'fixed') return sizes ? sizes.bytes : 1;
  if (sizes.kind === 'uniform') {
    const span = BigInt(sizes.max - sizes.min + 1);
    return sizes.min + Number(sha64(`size:${sizes.seed ?? 0}:${key}`) % span);
  }
  const e = sizes.keys.find((x) => x.key === key);
  return e ? e.bytes : sizes.rest;
}

// Per node requests and bytes, from the key list.
function perNode(w, keyList) {
  const sh = shares(w, keyList.map((k) => k.key));
  const req = new Map();
  const by = new Map();
  for (const k of keyList) {
    if (k.node === null) continue;
    req.set(k.node, (req.get(k.node) || 0) + sh.get(k.key));
    by.set(k.node, (by.get(k.node) || 0) + sizeOf(w.sizes, k.key));
  }
  return { req, by, sh };
}

// docs/api.md v4: each node's load against its fair share (its weight over
// the total weight of the nodes up); with equal weights version 3's max/mean.
function statsOf(req, nodes, sh) {
  const w = nodes.map((n) => (n.state === 'down' || !(n.weight > 0) ? 0 : n.weight));
  const W = w.reduce((a, b) => a + b, 0);
  const v = nodes.map((n) => req.get(n.name) || 0);
  const served = v.reduce((a, b) => a + b, 0);
  const lof = v.map((x, i) => x / served / (w[i] / W)).filter((x, i) => w[i] > 0);
  const cv = Math.sqrt(v.reduce((a, x, i) => (w[i] > 0 ? a + (w[i] / W) * (x / served / (w[i] / W) - 1) ** 2 : a), 0));
  let max = 0;
  for (const x of sh.values()) max = Math.max(max, x);
  return { max_over_mean: Math.max(...lof), cv, largest: max, bound: Math.max(1, max / (Math.max(...w) / W)) };
}

// The hottest keys as the stats list them, recounted from the key list:
// every stored key by share, largest first; equal shares keep the
// workload's order -- its rank order (zipf, hotspot), listed keys before
// the others then key bytes (keys), key bytes (uniform).  At most 10.
function hottestOf(w, keys, sh) {
  const kind = w.kind || 'uniform';
  let order;
  if (kind === 'zipf' || kind === 'hotspot') {
    if (w.order === 'insert') {
      const stored = new Set(keys);
      order = w.inserted.filter((k) => stored.has(k));
    } else {
      order = keys.map((k) => ({ k, h: sha64(`${w.seed ?? 0}:${k}`) }));
      order.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : cmpBytes(a.k, b.k)));
      order = order.map((e) => e.k);
    }
  } else {
    const listed = new Set(kind === 'keys' ? w.keys.map((e) => e.key) : []);
    order = [...keys].sort((a, b) => (listed.has(b) - listed.has(a)) || cmpBytes(a, b));
  }
  // a stable sort by share; shares within rounding count as equal
  const pos = new Map(order.map((k, i) => [k, i]));
  order.sort((a, b) => (close(sh.get(a), sh.get(b)) ? pos.get(a) - pos.get(b) : sh.get(b) - sh.get(a)));
  return order.slice(0, 10);
}

// requests.hottest_keys against the recount, with each key's owner and
// the node that serves it as the key list answers them.
function checkHottest(label, st, w, keyList, sh) {
  const want = hottestOf(w, keyList.map((k) => k.key), sh);
  const got = st.hottest_keys || [];
  const byKey = new Map(keyList.map((k) => [k.key, k]));
  eq(`${label}: hottest_keys are the ${want.length} hottest, hottest first`, got.map((e) => e.key), want);
  check(`${label}: hottest_keys' shares`, got.every((e) => close(e.share, sh.get(e.key))), JSON.stringify(got.slice(0, 3)));
  const bad = got.filter((e) => !byKey.has(e.key) || e.node !== byKey.get(e.key).node || e.served_by !== byKey.get(e.key).served_by);
  check(`${label}: hottest_keys' node and served_by as the key list`, bad.length === 0, JSON.stringify(bad.slice(0, 2)));
  check(`${label}: hottest_keys[0] is hottest_key`, (st.hottest_key === null && got.length === 0) || (got.length > 0 && st.hottest_key && got[0].key === st.hottest_key.key && got[0].share === st.hottest_key.share), JSON.stringify([st.hottest_key, got[0]]));
}

const ODD = ['naïve café', 'a/b%c#d?e"f<g', ' spaced key ', '鍵', 'emoji 🎉'];

async function agree(s, w, label) {
  const nodes = (await s.ok('/api/nodes')).nodes;
  const keys = (await s.allKeys()).keys;
  const { req, by, sh } = perNode(w, keys);
  let bad = [];
  for (const n of nodes) {
    if (!close(n.requests, req.get(n.name) || 0)) bad.push(`${n.name} requests ${n.requests} != ${req.get(n.name) || 0}`);
    if (n.bytes !== (by.get(n.name) || 0)) bad.push(`${n.name} bytes ${n.bytes} != ${by.get(n.name) || 0}`);
  }
  check(`${label}: every node's requests and bytes agree with the key list`, bad.length === 0, bad.slice(0, 4).join('; '));
  let total = 0;
  for (const x of sh.values()) total += x;
  check(`${label}: shares sum to 1`, Math.abs(total - 1) < 1e-9, String(total));
  const st = (await s.ok('/api/stats')).requests;
  const want = statsOf(req, nodes, sh);
  check(`${label}: stats requests max_over_mean, cv, bound`, close(st.max_over_mean, want.max_over_mean) && close(st.cv, want.cv) && close(st.bound, want.bound), `${JSON.stringify(st)} want ${JSON.stringify(want)}`);
  check(`${label}: hottest key has the largest share`, st.hottest_key && close(st.hottest_key.share, want.largest) && close(sh.get(st.hottest_key.key), want.largest), JSON.stringify(st.hottest_key));
  checkHottest(label, st, w, keys, sh);
  return { keys, sh };
}

const WORKLOADS = [
  { kind: 'zipf', s: 0.8 },
  { kind: 'zipf', s: 1, seed: 7 },
  { kind: 'zipf', s: 1.2, sizes: { kind: 'uniform', min: 10, max: 1000, seed: 3 } },
  { kind: 'hotspot', hot_fraction: 0.1, hot_share: 0.9, seed: 2 },
  { kind: 'hotspot', hot_fraction: 0.5, hot_share: 0.2 }, // the cold keys are the hottest
  { kind: 'keys', keys: [{ key: ODD[2], share: 0 }] }, // the first key by bytes takes nothing
  { kind: 'keys', keys: [{ key: ODD[0], share: 0.3 }, { key: ODD[1], share: 0.2 }, { key: 'key-5', share: 0.1 }], sizes: { kind: 'keys', keys: [{ key: ODD[3], bytes: 5000 }], rest: 100 } },
  { kind: 'uniform', sizes: { kind: 'fixed', bytes: 64 } },
];

async function everyAlgorithm(s) {
  for (const n of ['n1', 'n2', 'n3', 'n4']) eq(`add ${n}`, (await s.post('/api/nodes', { name: n })).status, 201);
  eq('generate 1500', (await s.post('/api/keys', { generate: { count: 1500 } })).status, 201);
  eq('odd keys', (await s.post('/api/keys', { keys: ODD })).status, 201);
  const cfg = await s.ok('/api/config');
  const algs = cfg.algorithms.map((a) => a.name);
  for (const w of WORKLOADS) {
    const r = await s.put('/api/workload', w);
    check(`PUT ${JSON.stringify(w).slice(0, 80)}: 200 with a workload operation`, r.status === 200 && r.json.operation && r.json.operation.type === 'workload', `${r.status} ${r.text.slice(0, 300)}`);
    for (const a of algs) {
      const c = await s.put('/api/config', { algorithm: a });
      if (a === 'ceph') {
        // ceph's nodes are OSDs (osd.N): over n1..n4 the switch is refused
        eq('configure ceph over n1..n4: refused', [c.status, c.json && c.json.error.code], [400, 'invalid_name']);
        continue;
      }
      if (c.status !== 200) {
        check(`configure ${a}`, false, c.text.slice(0, 200));
        continue;
      }
      await agree(s, { ...w }, `${a} ${w.kind}${w.s ? ' s=' + w.s : ''}`);
    }
  }
  await s.put('/api/config', { algorithm: 'ring' });
}

// requests_moved and bytes_moved of a change: the moved keys' shares and sizes.
async function movedShares(s) {
  await s.put('/api/config', { points_per_node: 20 });
  for (const n of ['cache-1', 'cache-2', 'cache-3']) await s.post('/api/nodes', { name: n });
  await s.post('/api/keys', { generate: { count: 3000 } });
  const w = { kind: 'zipf', s: 1.1, sizes: { kind: 'uniform', min: 100, max: 200 } };
  eq('PUT zipf 1.1', (await s.put('/api/workload', w)).status, 200);
  const full = (await s.ok('/api/workload'));
  eq('GET /api/workload answers every default', full, { kind: 'zipf', s: 1.1, seed: 0, order: 'hashed', sizes: { kind: 'uniform', min: 100, max: 200, seed: 0 } });
  const keys = (await s.allKeys()).keys.map((k) => k.key);
  const sh = shares(full, keys);
  const changes = [
    ['add cache-4', () => s.post('/api/nodes', { name: 'cache-4' })],
    ['remove cache-2', () => s.del('/api/nodes/cache-2')],
    ['configure points 5', () => s.put('/api/config', { points_per_node: 5 })],
    ['set weight', () => s.req('PATCH', '/api/nodes/cache-1', { body: { weight: 2 } })],
  ];
  for (const [label, f] of changes) {
    // a preview first: the same figures
    let pv = null;
    if (label === 'add cache-4') pv = await s.post('/api/preview', { op: 'add_node', name: 'cache-4' });
    const r = await f();
    const op = r.json.operation;
    const mv = await s.allMoves(op.id);
    let want = 0;
    let wantBytes = 0;
    for (const m of mv.moves) {
      want += sh.get(m.key);
      wantBytes += sizeOf(full.sizes, m.key);
    }
    check(`${label}: requests_moved is the sum of the moved keys' shares`, op.keys_moved > 0 && close(op.requests_moved, want), `${op.requests_moved} vs ${want} (${op.keys_moved} moved)`);
    eq(`${label}: bytes_moved is the sum of their sizes`, op.bytes_moved, wantBytes);
    if (pv) {
      check(`preview ${label}: requests_moved and bytes_moved as the change`, pv.status === 200 && close(pv.json.requests_moved, want) && pv.json.bytes_moved === wantBytes, pv.text.slice(0, 300));
    }
    await agree(s, full, `after ${label}`);
    const one = await s.ok(`/api/operations/${op.id}`);
    check(`GET /api/operations/${op.id} answers the same requests_moved`, close(one.requests_moved, op.requests_moved), JSON.stringify(one).slice(0, 200));
  }
  // uniform: requests_moved = keys_moved / keys
  await s.put('/api/workload', { kind: 'uniform' });
  const r = await s.post('/api/nodes', { name: 'cache-9' });
  const op = r.json.operation;
  check('uniform: requests_moved = keys_moved / keys', close(op.requests_moved, op.keys_moved / keys.length) && op.bytes_moved === op.keys_moved, JSON.stringify(op));
}

// Fixed sizes: a range move's shares come from the cache in memory, and an
// insert or delete merges ranks and sums every share again from a weight
// table.  Each figure against a fresh computation from the key list, on a
// position-ranged algorithm (ring) and a coordinate-ranged one (ketama).
async function cachePaths(s) {
  for (const n of ['c1', 'c2', 'c3']) await s.post('/api/nodes', { name: n });
  await s.post('/api/keys', { generate: { count: 2500 } });
  const w = { kind: 'zipf', s: 1.05, seed: 3, order: 'hashed', sizes: { kind: 'fixed', bytes: 10 } };
  eq('PUT zipf 1.05 fixed sizes', (await s.put('/api/workload', w)).status, 200);
  await agree(s, w, 'cache paths: start');
  for (const alg of ['ring', 'ketama']) {
    eq(`configure ${alg}`, (await s.put('/api/config', { algorithm: alg })).status, 200);
    await s.ok('/api/nodes'); // the cache is built for the state now
    const moveBy = async (label, f) => {
      const keys = (await s.allKeys()).keys.map((k) => k.key);
      const sh = shares(w, keys);
      const op = (await f()).json.operation;
      const mv = await s.allMoves(op.id);
      let want = 0;
      for (const m of mv.moves) want += sh.get(m.key);
      check(`${alg} ${label}: requests_moved is the sum of the moved keys' shares`, op.keys_moved > 0 && close(op.requests_moved, want), `${op.requests_moved} vs ${want} (${op.keys_moved} moved)`);
      eq(`${alg} ${label}: bytes_moved`, op.bytes_moved, op.keys_moved * 10);
      await agree(s, w, `${alg} after ${label}`);
    };
    await moveBy('add c4', () => s.post('/api/nodes', { name: 'c4' }));
    await moveBy('weight c1 3', () => s.req('PATCH', '/api/nodes/c1', { body: { weight: 3 } }));
    // inserts: ranks merged, every share summed again
    const pre = `more-${alg}-`;
    eq(`${alg}: insert 300`, (await s.post('/api/keys', { generate: { prefix: pre, count: 300 } })).status, 201);
    await agree(s, w, `${alg} after inserting 300 keys`);
    // a key that enters the hottest ten: merged into the list kept
    const tenth = sha64(`3:${(await s.ok('/api/stats')).requests.hottest_keys[9].key}`);
    let hk = null;
    for (let i = 0; !hk; i++) if (sha64(`3:hot-${alg}-${i}`) < tenth) hk = `hot-${alg}-${i}`;
    eq(`${alg}: insert ${hk}`, (await s.post('/api/keys', { key: hk })).status, 201);
    await agree(s, w, `${alg} after inserting one of the hottest ten`);
    const hot10 = (await s.ok('/api/stats')).requests.hottest_keys;
    check(`${alg}: ${hk} among the hottest keys`, hot10.some((e) => e.key === hk), JSON.stringify(hot10.map((e) => e.key)));
    // a preview's "before" reads the writer's cache, kept through the insert
    const pvb = (await s.post('/api/preview', { op: 'add_node', name: 'probe' })).json.before;
    eq(`${alg}: preview before: the same hottest keys`, pvb && pvb.requests.hottest_keys, hot10);
    await moveBy('remove c4 after the insert', () => s.del('/api/nodes/c4'));
    // deletes, the hottest key among them once
    const hot = (await s.ok('/api/stats')).requests.hottest_key.key;
    // and one of the other hottest keys: the list is counted again
    const some = [`${pre}0`, `${pre}7`, alg === 'ring' ? 'key-11' : 'key-12'];
    const fifth = (await s.ok('/api/stats')).requests.hottest_keys.slice(1).find((e) => !some.includes(e.key)).key;
    for (const k of [...some, fifth, hot]) {
      eq(`${alg}: delete ${k}`, (await s.del(`/api/keys/${encodeURIComponent(k)}`)).status, 200);
      await agree(s, w, `${alg} after deleting ${k}`);
      const hk10 = (await s.ok('/api/stats')).requests.hottest_keys;
      eq(`${alg}: preview before after deleting ${k}: the same hottest keys`, (await s.post('/api/preview', { op: 'add_node', name: 'probe' })).json.before.requests.hottest_keys, hk10);
    }
    await moveBy('weight c1 1 after the deletes', () => s.req('PATCH', '/api/nodes/c1', { body: { weight: 1 } }));
  }
  await s.put('/api/config', { algorithm: 'ring' });
}

async function refusals(s) {
  await s.post('/api/nodes', { name: 'a' });
  await s.post('/api/keys', { generate: { count: 50 } });
  const before = await s.ok('/api/workload');
  const last = await s.lastOpId();
  const bad = [
    { kind: 'zipf', s: 0 },
    { kind: 'zipf', s: -1 },
    { kind: 'zipf' },
    { kind: 'zipf', s: 'x' },
    { kind: 'zipf', s: 1, order: 'random' },
    { kind: 'zipf', s: 1, seed: 1.5 },
    { kind: 'hotspot', hot_fraction: 0, hot_share: 0.5 },
    { kind: 'hotspot', hot_fraction: 1, hot_share: 0.5 },
    { kind: 'hotspot', hot_fraction: 0.2, hot_share: 1.5 },
    { kind: 'hotspot', hot_fraction: 0.2, hot_share: -0.1 },
    { kind: 'keys', keys: [{ key: 'key-1', share: -0.1 }] },
    { kind: 'keys', keys: [{ key: 'key-1', share: 0.6 }, { key: 'key-2', share: 0.6 }] },
    { kind: 'keys', keys: [{ key: 'not stored', share: 0.1 }] },
    { kind: 'keys', keys: [{ key: 'key-1', share: 0.1 }, { key: 'key-1', share: 0.1 }] },
    { kind: 'pareto' },
    { kind: 'uniform', sizes: { kind: 'uniform', min: 10, max: 5 } },
    { kind: 'uniform', sizes: { kind: 'fixed', bytes: -1 } },
    { kind: 'uniform', sizes: { kind: 'keys', keys: [{ key: 'nope', bytes: 3 }], rest: 1 } },
    { kind: 'uniform', s: 1 },
    {},
    { kind: 'zipf', s: '1' },
    { kind: 'zipf', s: '0x10' },
    { kind: 'hotspot', hot_fraction: '0.5', hot_share: '0.5' },
    { kind: 'keys', keys: [{ key: 'key-1', share: '0.1' }] },
    { kind: 'keys', keys: [{ key: 'key-1', share: 1.000000000001 }] },
    { kind: 'keys', keys: [{ key: 'key-1', share: 1.0000000000000002 }] },
    { kind: 'uniform', sizes: { kind: 'fixed', bytes: '100' } },
    { kind: 'zipf', s: 1, seed: ' 5' },
  ];
  for (const b of bad) {
    const r = await s.put('/api/workload', b);
    check(`PUT ${JSON.stringify(b)}: 400 invalid_parameter`, r.status === 400 && r.json.error && r.json.error.code === 'invalid_parameter' && r.json.error.message, `${r.status} ${r.text.slice(0, 200)}`);
  }
  const r = await s.put('/api/workload', '{"kind": "zipf", "s": 1e999}');
  check('s = 1e999 (not finite): 400 invalid_parameter', r.status === 400 && r.json?.error?.code === 'invalid_parameter', `${r.status} ${r.text.slice(0, 200)}`);
  eq('after the refusals the workload is as it was', await s.ok('/api/workload'), before);
  eq('and no operation was recorded', await s.lastOpId(), last);
  const same = await s.put('/api/workload', before);
  check('PUT of the current workload: 200, operation null', same.status === 200 && same.json.operation === null, same.text.slice(0, 200));
}

async function history(s) {
  for (const n of ['a', 'b', 'c']) await s.post('/api/nodes', { name: n });
  await s.post('/api/keys', { generate: { count: 800 } });
  const wz = { kind: 'zipf', s: 1.3, seed: 5, order: 'hashed', sizes: { kind: 'fixed', bytes: 1 } };
  const opZ = (await s.put('/api/workload', wz)).json.operation.id;
  const nodesZ = (await s.ok('/api/nodes')).nodes;
  const opAdd = (await s.post('/api/nodes', { name: 'd' })).json.operation.id;
  const nodesAdd = (await s.ok('/api/nodes')).nodes;
  const wh = { kind: 'hotspot', hot_fraction: 0.05, hot_share: 0.5, seed: 1, order: 'hashed', sizes: { kind: 'fixed', bytes: 1 } };
  await s.put('/api/workload', wh);
  await s.post('/api/keys', { generate: { count: 100 } });
  await agree(s, wh, 'hotspot after more keys');
  const ops = await s.allOps();
  check('the log lists the workload operations', ops.filter((o) => o.type === 'workload').length === 2, JSON.stringify(ops.map((o) => o.type)));
  // time travel
  for (const [at, want] of [[opZ, nodesZ], [opAdd, nodesAdd]]) {
    const past = (await s.ok(`/api/nodes?at=${at}`)).nodes;
    const bad = past.filter((n) => !close(n.requests, want.find((m) => m.name === n.name).requests));
    check(`nodes?at=${at}: requests as they were then`, past.length === want.length && bad.length === 0, JSON.stringify(bad).slice(0, 300));
  }
  const past0 = (await s.ok(`/api/nodes?at=${opZ - 1}`)).nodes;
  const keys0 = (await s.allKeys(`at=${opZ - 1}`)).keys;
  const u = perNode({ kind: 'uniform' }, keys0);
  check('before the first workload: uniform shares', past0.every((n) => close(n.requests, u.req.get(n.name) || 0)), JSON.stringify(past0).slice(0, 300));
  // revert
  const rv = await s.post('/api/revert', { to: opAdd });
  eq('revert to after the node add: 200', rv.status, 200);
  eq('the workload is the one of then', await s.ok('/api/workload'), wz);
  await agree(s, wz, 'after revert');
  const now = (await s.ok('/api/nodes')).nodes;
  check('after revert: requests as after the node add', now.every((n) => close(n.requests, nodesAdd.find((m) => m.name === n.name).requests)), '');
  // reset keeps the workload
  await s.post('/api/reset');
  eq('reset keeps the workload', await s.ok('/api/workload'), wz);
  const last = await s.lastOpId();
  const w0 = (await s.ok(`/api/stats?at=${last}`)).requests;
  check('stats with no key: no hottest key, bound 1', w0.hottest_key === null && w0.bound === 1, JSON.stringify(w0));
}

// compare: requests_moved_if_added is what a preview of adding the probe
// node says (another path through the engine), on every algorithm; and
// requests_moved_if_removed lies within the moved shares of the removals.
async function compareEntries(s) {
  for (const n of ['n1', 'n2', 'n3', 'n4', 'n5']) await s.post('/api/nodes', { name: n });
  await s.post('/api/keys', { generate: { count: 1200 } });
  await s.put('/api/workload', { kind: 'zipf', s: 0.9, seed: 4, sizes: { kind: 'uniform', min: 10, max: 900 } });
  const algs = (await s.ok('/api/config')).algorithms.map((a) => a.name);
  for (const a of algs) {
    if ((await s.put('/api/config', { algorithm: a })).status !== 200) continue;
    const c = await s.ok(`/api/compare?algorithms=${a}`);
    const entry = c.results && c.results[0];
    const pv = await s.post('/api/preview', { op: 'add_node', name: 'compare-probe' });
    if (!entry || entry.error || pv.status !== 200) {
      check(`compare ${a}: an entry and a preview`, false, JSON.stringify(c).slice(0, 300));
      continue;
    }
    if (entry.moves_if_added === pv.json.keys_moved) {
      check(`compare ${a}: requests_moved_if_added = the preview's requests_moved`, close(entry.requests_moved_if_added, pv.json.requests_moved), `${entry.requests_moved_if_added} vs ${pv.json.requests_moved}`);
      eq(`compare ${a}: bytes_moved_if_added = the preview's bytes_moved`, entry.bytes_moved_if_added, pv.json.bytes_moved);
    }
    check(`compare ${a}: bytes_moved_if_removed is a whole number of bytes`, Number.isInteger(entry.bytes_moved_if_removed) && entry.bytes_moved_if_removed >= 0, String(entry.bytes_moved_if_removed));
    // the current algorithm's requests are the ones GET /api/stats gives
    // (the placement's owners: every node is up here)
    const st = (await s.ok('/api/stats')).requests, er = entry.stats.requests || {};
    check(`compare ${a}: stats.requests max/mean and cv as GET /api/stats`, close(er.max_over_mean, st.max_over_mean) && close(er.cv, st.cv), `${JSON.stringify(er)} vs ${JSON.stringify(st)}`);
    eq(`compare ${a}: stats.requests hottest key and bound as GET /api/stats`, [er.hottest_key, er.bound], [st.hottest_key, st.bound]);
    check(`compare ${a}: requests_moved_if_removed is a share`, entry.requests_moved_if_removed >= 0 && entry.requests_moved_if_removed <= 1, String(entry.requests_moved_if_removed));
  }
  await s.put('/api/config', { algorithm: 'ring' });
}

// order "insert": the first inserted is the hottest; a revert brings keys
// back where they were inserted then; time travel agrees.
async function insertOrder(s) {
  for (const n of ['a', 'b', 'c']) await s.post('/api/nodes', { name: n });
  let ins = [];
  await s.post('/api/keys', { generate: { count: 200 } });
  for (let i = 0; i < 200; i++) ins.push(`key-${i}`);
  const r1 = await s.post('/api/keys', { keys: ['z1', 'z0', 'key-5', ODD[2], 'z2'] });
  eq('insert a list with one existing key: 4 inserted', r1.json.inserted, 4);
  ins.push('z1', 'z0', ODD[2], 'z2');
  const afterList = r1.json.operation.id;
  const insAfterList = [...ins];
  await s.del('/api/keys/key-0');
  ins = ins.filter((k) => k !== 'key-0');
  await s.post('/api/keys', { key: 'key-0' });
  ins.push('key-0'); // inserted again: now the last
  const w = { kind: 'zipf', s: 1, order: 'insert' };
  const r = await s.put('/api/workload', w);
  eq('PUT zipf order insert: 200', r.status, 200);
  const full = { ...r.json.workload, inserted: ins };
  await agree(s, full, 'insert order after a delete and a re-insert');
  const hot = (await s.ok('/api/stats')).requests.hottest_key;
  eq('insert order: the hottest key is the first inserted (key-1 once key-0 came back)', hot.key, 'key-1');
  const hs = await s.put('/api/workload', { kind: 'hotspot', hot_fraction: 0.01, hot_share: 0.5, order: 'insert' });
  eq('hotspot order insert: 200', hs.status, 200);
  await agree(s, { ...hs.json.workload, inserted: ins }, 'hotspot insert order');
  await s.put('/api/workload', w);
  const wOp = await s.lastOpId();
  const add = (await s.post('/api/nodes', { name: 'd' })).json.operation;
  const sh = shares(full, (await s.allKeys()).keys.map((k) => k.key));
  let want = 0;
  for (const m of (await s.allMoves(add.id)).moves) want += sh.get(m.key);
  check('insert order: requests_moved is the moved keys\' shares', close(add.requests_moved, want), `${add.requests_moved} vs ${want}`);
  const nodesNow = (await s.ok('/api/nodes')).nodes;
  // revert to after the list insert, with the insert-ordered workload set again
  await s.post('/api/revert', { to: afterList });
  await s.put('/api/workload', w);
  await agree(s, { ...full, inserted: insAfterList }, 'insert order after a revert (key-0 first again)');
  eq('after the revert key-0 is the hottest again', (await s.ok('/api/stats')).requests.hottest_key.key, 'key-0');
  // time travel to after the node add
  const past = (await s.ok(`/api/nodes?at=${add.id}`)).nodes;
  check(`nodes?at=${add.id}: the insert-ordered requests of then`, past.length === nodesNow.length && past.every((n) => close(n.requests, nodesNow.find((m) => m.name === n.name).requests)), JSON.stringify(past).slice(0, 300));
  const pastW = await s.ok(`/api/stats?at=${wOp}`);
  check(`stats?at=${wOp}: the hottest key of then (key-1)`, pastW.requests.hottest_key.key === 'key-1', JSON.stringify(pastW.requests));
}

// requests.hottest_keys by name: listed keys (names with markup, quotes,
// right-to-left text), the first inserted under order insert, a node down
// (served_by another node), and the past through ?at=.
async function hottestKeys(s) {
  for (const n of ['a', 'b', 'c']) await s.post('/api/nodes', { name: n });
  await s.post('/api/keys', { generate: { count: 40 } });
  const ins = [];
  for (let i = 0; i < 40; i++) ins.push(`key-${i}`);
  const odd = ['<b>hot</b>', 'q"uote\'s', 'שלום עולם'];
  await s.post('/api/keys', { keys: odd });
  ins.push(...odd);
  const wk = { kind: 'keys', keys: [{ key: odd[0], share: 0.2 }, { key: odd[1], share: 0.1 }, { key: odd[2], share: 0.1 }, { key: 'key-7', share: 0.05 }] };
  eq('PUT a keys workload', (await s.put('/api/workload', wk)).status, 200);
  const wkOp = await s.lastOpId();
  const st1 = (await s.ok('/api/stats')).requests;
  // 0.2, 0.1 twice (by key bytes: q before ש), 0.05, then the others'
  // (1 - 0.45) / 39 each by key bytes
  eq('keys workload: the listed by share, then the first others by bytes', st1.hottest_keys.map((e) => e.key), [odd[0], odd[1], odd[2], 'key-7', 'key-0', 'key-1', 'key-10', 'key-11', 'key-12', 'key-13']);
  check('keys workload: shares 0.2, 0.1, 0.1, 0.05, 0.55/39', [0.2, 0.1, 0.1, 0.05, 0.55 / 39].every((x, i) => close(st1.hottest_keys[i].share, x)), JSON.stringify(st1.hottest_keys.slice(0, 5)));
  await agree(s, wk, 'hottest keys: keys workload');
  const wz = { kind: 'zipf', s: 1, order: 'insert' };
  eq('PUT zipf order insert', (await s.put('/api/workload', wz)).status, 200);
  const wzOp = await s.lastOpId();
  const st2 = (await s.ok('/api/stats')).requests;
  eq('zipf insert order: the hottest keys are the first ten inserted', st2.hottest_keys.map((e) => e.key), ins.slice(0, 10));
  check('zipf insert order: shares 1/(r H(43))', st2.hottest_keys.every((e, i) => close(e.share, 1 / (i + 1) / ins.reduce((a, _, j) => a + 1 / (j + 1), 0))), JSON.stringify(st2.hottest_keys.slice(0, 2)));
  check('every node up: served_by is the owner', st2.hottest_keys.every((e) => e.node !== null && e.served_by === e.node), JSON.stringify(st2.hottest_keys.slice(0, 3)));
  await agree(s, { ...wz, inserted: ins }, 'hottest keys: zipf insert order');
  // the owner of the hottest key down: its requests go to another node
  const owner = st2.hottest_keys[0].node;
  eq(`${owner} down`, (await s.put(`/api/nodes/${owner}/state`, { state: 'down' })).status, 200);
  const st3 = (await s.ok('/api/stats')).requests;
  const look = await s.ok(`/api/lookup?key=${encodeURIComponent('key-0')}`);
  check(`${owner} down: key-0's node is still ${owner}, served_by another (as lookup)`, st3.hottest_keys[0].key === 'key-0' && st3.hottest_keys[0].node === owner && st3.hottest_keys[0].served_by !== owner && st3.hottest_keys[0].served_by === look.served_by && look.node === owner, JSON.stringify([st3.hottest_keys[0], look.node, look.served_by]));
  const down = st3.hottest_keys.filter((e) => e.node === owner);
  check(`${owner} down: every one of its keys served elsewhere`, down.length > 0 && down.every((e) => e.served_by !== owner), JSON.stringify(down));
  // (agree() counts requests by owner: with a node down, the list alone)
  const kl = (await s.allKeys()).keys;
  checkHottest(`hottest keys: ${owner} down`, st3, { ...wz, inserted: ins }, kl, shares({ ...wz, inserted: ins }, kl.map((k) => k.key)));
  // the past: the same list with the owner up, and the keys workload's
  const past = (await s.ok(`/api/stats?at=${wzOp}`)).requests;
  eq(`stats?at=${wzOp}: the hottest keys of then, served by their owners`, past.hottest_keys, st2.hottest_keys);
  const pastK = (await s.ok(`/api/stats?at=${wkOp}`)).requests;
  eq(`stats?at=${wkOp}: the keys workload's hottest keys`, pastK.hottest_keys.map((e) => e.key), st1.hottest_keys.map((e) => e.key));
  // uniform: the first ten keys by bytes
  eq('PUT uniform', (await s.put('/api/workload', { kind: 'uniform' })).status, 200);
  const st4 = (await s.ok('/api/stats')).requests;
  eq('uniform: the first ten keys by bytes', st4.hottest_keys.map((e) => e.key), [...ins].sort(cmpBytes).slice(0, 10));
  check('uniform: each 1/43', st4.hottest_keys.every((e) => close(e.share, 1 / 43)), JSON.stringify(st4.hottest_keys[0]));
  // compare lists no hottest_keys (its nodes would be one algorithm's)
  const cmp = await s.ok('/api/compare?algorithms=ring,jump');
  check('compare: stats.requests without hottest_keys', cmp.results.every((e) => !e.stats || !('hottest_keys' in e.stats.requests)), JSON.stringify(cmp.results[0] && cmp.results[0].stats && cmp.results[0].stats.requests).slice(0, 300));
}

// The command line: workload, node ls, stats; key gen --ycsb against Java.
async function commandLine() {
  const db = freshDb();
  const run = (...a) => execFileSync(BIN, ['--db', db, ...a], { encoding: 'utf8' });
  run('node', 'add', 'a');
  run('node', 'add', 'b');
  const N = 300;
  run('key', 'gen', String(N), '--ycsb');
  const keys = JSON.parse(run('key', 'ls', '--json')).keys.map((k) => k.key);
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'java-'));
  const src = path.join(dir, 'Names.java');
  // YCSB's Utils.fnvhash64 and CoreWorkload.buildKeyName (insertorder=hashed,
  // zeropadding 1), in Java's own long arithmetic.
  fs.writeFileSync(src, `public class Names {
  static long fnv(long val) {
    long h = 0xCBF29CE484222325L;
    for (int i = 0; i < 8; i++) { long octet = val & 0x00ff; val = val >> 8; h = h ^ octet; h = h * 1099511628211L; }
    return Math.abs(h);
  }
  public static void main(String[] a) {
    int n = Integer.parseInt(a[0]);
    StringBuilder b = new StringBuilder();
    for (long i = 0; i < n; i++) b.append("user").append(Long.toString(fnv(i))).append('\\n');
    System.out.print(b);
  }
}
`);
  let java = null;
  try {
    java = execFileSync('java', [src, String(N)], { encoding: 'utf8' }).trim().split('\n');
  } catch (e) {
    check('java runs the reference program', false, String(e).slice(0, 300));
  }
  if (java) {
    eq('key gen --ycsb: the names Java computes, every one', [...keys].sort(), [...java].sort());
    check('java names include user6284781860667377211 (record 0)', java[0] === 'user6284781860667377211', java[0]);
  }
  const show = run('workload');
  check('workload without KIND shows the default', /kind uniform/.test(show), show);
  const set = JSON.parse(run('workload', 'zipf', '--param', 's=1.5', '--param', 'seed=9', '--json'));
  eq('workload zipf --param s=1.5 --param seed=9: the workload', set.workload, { kind: 'zipf', s: 1.5, seed: 9, order: 'hashed', sizes: { kind: 'fixed', bytes: 1 } });
  eq('one workload operation', set.operation && set.operation.type, 'workload');
  const nodes = JSON.parse(run('node', 'ls', '--json')).nodes;
  const kl = JSON.parse(run('key', 'ls', '--json')).keys;
  const want = perNode(set.workload, kl);
  check('node ls --json: requests agree', nodes.every((n) => close(n.requests, want.req.get(n.name) || 0)), JSON.stringify(nodes).slice(0, 300));
  const table = run('node', 'ls');
  check('node ls for people has a Req % column', /Req %/.test(table.split('\n')[0]), table);
  const csv = run('node', 'ls', '--csv');
  check('node ls --csv has requests and bytes columns', /requests/.test(csv.split('\n')[0]) && /bytes/.test(csv.split('\n')[0]), csv);
  const st = run('stats');
  check('stats for people shows requests max/mean and the hottest key', /requests max\/mean/.test(st) && /hottest key user/.test(st), st);
  let failed = false;
  try {
    execFileSync(BIN, ['--db', db, 'workload', 'hotspot', '--param', 'hot_fraction=2', '--param', 'hot_share=0.5'], { stdio: 'pipe' });
  } catch (e) {
    failed = e.status === 1 && /hot_fraction/.test(String(e.stderr)) && String(e.stderr).trim().split('\n').length === 1;
  }
  check('workload hotspot hot_fraction=2: exit 1, one line on stderr', failed);
  const add = run('node', 'add', 'c');
  check('node add says the share of requests moved', /% of requests moved/.test(add), add);
  const chk = run('check');
  check('check passes with a workload in the log', /^ok/.test(chk), chk);

  // scenarios: workload lines, the requests figures in expect, export
  const sdb = freshDb();
  const file = path.join(path.dirname(sdb), 'hot.ringsim');
  fs.writeFileSync(file, ['node add cache-1', 'node add cache-2', 'node add cache-3', 'key gen 1000',
    `workload keys --param 'keys=[{"key": "key-7", "share": 0.5}]'`,
    'expect requests_bound == 1.5', 'expect hottest_share == 0.5',
    'workload zipf --param s=1.1 --param sizes.kind=fixed --param sizes.bytes=10', 'node add cache-4',
    'expect requests_moved > 0', 'expect bytes_moved > 0', 'expect requests_max_over_mean >= 1', ''].join('\n'));
  let out = '';
  let code = 0;
  try {
    out = execFileSync(BIN, ['--db', sdb, '--json', 'run', file], { encoding: 'utf8' });
  } catch (e) {
    code = e.status;
    out = String(e.stdout);
  }
  const rep = JSON.parse(out || '{}');
  check('scenario with workload lines and requests expectations runs: exit 0', code === 0 && rep.ok === true, out.slice(0, 400));
  const mv = (rep.steps || []).find((st) => st.stat === 'requests_moved');
  const op = JSON.parse(execFileSync(BIN, ['--db', sdb, '--json', 'log'], { encoding: 'utf8' })).operations.pop();
  check('expect requests_moved reads the last operation', mv && close(mv.actual, op.requests_moved) && mv.actual > 0, JSON.stringify(mv));
  let failedExpect = false;
  try {
    execFileSync(BIN, ['--db', sdb, 'run', '-'], { input: 'expect requests_bound > 100\n', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (e) {
    failedExpect = e.status === 1;
  }
  check('a requests expectation that does not hold: exit 1', failedExpect);
  const exported = execFileSync(BIN, ['--db', sdb, 'export', '--scenario'], { encoding: 'utf8' });
  // the default the first line ran under, then the file's two
  check('export --scenario writes the workload lines', (exported.match(/^workload /gm) || []).length === 3 && /^workload uniform$/m.test(exported), exported);
  const edb = freshDb();
  const ef = path.join(path.dirname(edb), 'ex.ringsim');
  fs.writeFileSync(ef, exported);
  execFileSync(BIN, ['--db', edb, 'run', ef], { encoding: 'utf8' });
  eq('the exported scenario rebuilds the workload', JSON.parse(execFileSync(BIN, ['--db', edb, '--json', 'workload'], { encoding: 'utf8' })), JSON.parse(execFileSync(BIN, ['--db', sdb, '--json', 'workload'], { encoding: 'utf8' })));
  const n1 = JSON.parse(execFileSync(BIN, ['--db', edb, '--json', 'node', 'ls'], { encoding: 'utf8' })).nodes;
  const n2 = JSON.parse(execFileSync(BIN, ['--db', sdb, '--json', 'node', 'ls'], { encoding: 'utf8' })).nodes;
  check('and the same requests per node', n1.length === n2.length && n1.every((n, i) => close(n.requests, n2[i].requests)), '');
}

async function main() {
  await withServer('workload every algorithm', everyAlgorithm);
  await withServer('workload requests_moved', movedShares);
  await withServer('workload cache paths', cachePaths);
  await withServer('workload refusals', refusals);
  await withServer('workload history', history);
  await withServer('workload insert order', insertOrder);
  await withServer('workload hottest keys', hottestKeys);
  await withServer('workload compare', compareEntries);
  setGroup('cli');
  await commandLine();
  setGroup('all');
  finish();
}

main().catch(crashed);
