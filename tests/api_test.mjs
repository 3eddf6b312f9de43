// tests/api_test.mjs - HTTP API tests of ringsim, written against
// /work/shared/API.md ("ringsim public interface, version 1").
//
//   node tests/api_test.mjs /path/to/ringsim
//
// Plain Node 20, no packages.  Every test group starts the real server with
// `serve --port 0 --db <fresh temp file>`, reads the port from its
// "ringsim: serving http://HOST:PORT/" line, runs its checks and stops it
// with SIGTERM.  Requests go through node:http so that every header (Host,
// Origin, Content-Type, Last-Event-ID) and the raw request path are under
// the test's control.  The script ends with exactly one line
// "N passed, N failed" and exits non-zero when anything failed.
//
// Checks docs/api.md, 'Conventions', 'Nodes', 'Keys', 'Statistics and layout',
// 'History', 'Errors'.


import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';


import {
  BIN,
  setGroup,
  finish,
  crashed,
  show,
  check,
  eq,
  near,
  RING,
  sha256hex,
  pos,
  pos2,
  cmpBytes,
  enc,
  sleep,
  RFC3339_UTC,
  pointsFor,
  WEIRD,
  sawACAO,
  withServer,
} from './lib/harness.mjs';

// ----------------------------------------------------- shape validation --

function isNodeObject(n) {
  return (
    n !== null &&
    typeof n === 'object' &&
    typeof n.name === 'string' &&
    Number.isInteger(n.position) &&
    typeof n.weight === 'number' &&
    Number.isInteger(n.points) &&
    Number.isInteger(n.keys) &&
    typeof n.key_share === 'number' &&
    typeof n.arc_share === 'number'
  );
}

function isKeyObject(k) {
  return (
    k !== null &&
    typeof k === 'object' &&
    typeof k.key === 'string' &&
    Number.isInteger(k.position) &&
    (k.node === null || typeof k.node === 'string')
  );
}

function isOperation(o) {
  return (
    o !== null &&
    typeof o === 'object' &&
    Number.isInteger(o.id) &&
    typeof o.at === 'string' &&
    RFC3339_UTC.test(o.at) &&
    !Number.isNaN(Date.parse(o.at)) &&
    ['add_node', 'remove_node', 'insert_keys', 'delete_keys', 'configure', 'reset', 'revert'].includes(o.type) &&
    typeof o.subject === 'string' &&
    Number.isInteger(o.keys_moved) &&
    Array.isArray(o.moved_from) &&
    o.moved_from.every(
      (m) => m && (m.node === null || typeof m.node === 'string') && Number.isInteger(m.keys) && m.keys > 0,
    )
  );
}

function expectOp(name, op, want) {
  check(`${name}: operation has the operation shape`, isOperation(op), show(op));
  if (!op) return;
  for (const [k, v] of Object.entries(want)) eq(`${name}: operation.${k}`, op[k], v);
}

function expectError(name, r, status, code) {
  const e = r.json && r.json.error;
  const ok =
    r.status === status &&
    r.json &&
    typeof r.json === 'object' &&
    e &&
    typeof e === 'object' &&
    e.code === code &&
    typeof e.message === 'string' &&
    e.message.length > 0;
  check(`${name} -> ${status} ${code}`, ok, ok ? '' : `got ${r.status} ${r.text.slice(0, 300)}`);
  if (r.status === status)
    check(`${name}: error answer is JSON`, /^application\/json/i.test(r.headers['content-type'] || ''), r.headers['content-type']);
}

// ------------------------------------------------------------- placement --

function ringOrderOk(points) {
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    if (a.position < b.position) continue;
    if (a.position > b.position) return `points ${i - 1},${i} out of position order`;
    const c = cmpBytes(a.node, b.node);
    if (c < 0) continue;
    if (c > 0) return `points ${i - 1},${i} tie at ${a.position} not ordered by name bytes (${a.node} / ${b.node})`;
    if (a.index !== undefined && b.index !== undefined && !(a.index < b.index))
      return `points ${i - 1},${i} tie not ordered by index`;
  }
  return '';
}

// Owner of a ring position: first point whose position is >= p, wrapping.
function ownerOf(points, p) {
  if (!points.length) return null;
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid].position >= p) hi = mid;
    else lo = mid + 1;
  }
  return (lo === points.length ? points[0] : points[lo]).node;
}

// Fraction of the ring each node owns, from points sorted in ring order.
function arcShares(points) {
  const share = new Map();
  for (let i = 0; i < points.length; i++) {
    const prev = i === 0 ? points[points.length - 1].position - RING : points[i - 1].position;
    const len = points.length === 1 ? RING : points[i].position - prev;
    share.set(points[i].node, (share.get(points[i].node) || 0) + len / RING);
  }
  return share;
}

// Keys on the node the ring says, and at the right position.
function checkPlacement(name, keys, ring) {
  let bad = [];
  for (const k of keys) {
    if (k.position !== pos(k.key)) bad.push(`${k.key}: position ${k.position} != ${pos(k.key)}`);
    const want = ownerOf(ring.points, k.position);
    if (k.node !== want) bad.push(`${k.key}: on ${k.node}, ring says ${want}`);
    if (bad.length > 5) break;
  }
  check(`${name}: every key is on the first point clockwise (${keys.length} keys)`, bad.length === 0, bad.join('; '));
}

// Check the ring: sorted, and made of the labels name, name#1.. name#(P-1).
function checkRing(name, ring, nodes, ppn) {
  check(`${name}: ring sorted by (position, name bytes, index)`, ringOrderOk(ring.points) === '', ringOrderOk(ring.points));
  let bad = [];
  const byNode = new Map();
  for (const p of ring.points) {
    if (!byNode.has(p.node)) byNode.set(p.node, []);
    byNode.get(p.node).push(p.position);
  }
  for (const n of nodes) {
    const P = pointsFor(ppn, n.weight);
    if (n.points !== P) bad.push(`${n.name}: points ${n.points}, want ${P}`);
    const want = [pos(n.name)];
    for (let i = 1; i < P; i++) want.push(pos(`${n.name}#${i}`));
    want.sort((a, b) => a - b);
    const got = (byNode.get(n.name) || []).slice().sort((a, b) => a - b);
    if (!isDeepStrictEqual(got, want)) bad.push(`${n.name}: ring positions ${show(got)} want ${show(want)}`);
    if (n.position !== pos(n.name)) bad.push(`${n.name}: position ${n.position} want ${pos(n.name)}`);
  }
  const total = nodes.reduce((a, n) => a + pointsFor(ppn, n.weight), 0);
  if (ring.points.length !== total) bad.push(`ring has ${ring.points.length} points, want ${total}`);
  check(`${name}: ring points are name, name#1.. with P = max(1, round(ppn*weight))`, bad.length === 0, bad.slice(0, 5).join('; '));
}

function aggregateMovedFrom(list) {
  return list
    .map((m) => ({ node: m.node, keys: m.keys }))
    .sort((a, b) => (a.node === b.node ? 0 : a.node === null ? -1 : b.node === null ? 1 : cmpBytes(a.node, b.node)));
}

// Verify an operation's keys_moved / moved_from / moves against a diff of
// every key before and after it.
async function checkMoves(s, name, before, after, op, opts = {}) {
  const b = new Map(before.map((k) => [k.key, k.node]));
  const moved = [];
  for (const k of after) if (b.has(k.key) && b.get(k.key) !== k.node) moved.push({ key: k.key, from: b.get(k.key), to: k.node });
  eq(`${name}: keys_moved equals the keys whose owner changed`, op.keys_moved, moved.length);
  const agg = new Map();
  for (const m of moved) agg.set(m.from, (agg.get(m.from) || 0) + 1);
  eq(
    `${name}: moved_from equals where those keys were`,
    aggregateMovedFrom(op.moved_from),
    aggregateMovedFrom([...agg].map(([node, keys]) => ({ node, keys }))),
  );
  if (opts.onlyTo !== undefined)
    check(
      `${name}: only keys that now belong to ${opts.onlyTo} moved`,
      moved.every((m) => m.to === opts.onlyTo),
      show(moved.filter((m) => m.to !== opts.onlyTo).slice(0, 3)),
    );
  if (opts.onlyFrom !== undefined)
    check(
      `${name}: only keys of ${opts.onlyFrom} moved`,
      moved.every((m) => m.from === opts.onlyFrom),
      show(moved.filter((m) => m.from !== opts.onlyFrom).slice(0, 3)),
    );
  const got = await s.allMoves(op.id);
  eq(`${name}: operations/${op.id} moves_total`, got.total, moved.length);
  const sortM = (l) => l.map((m) => `${m.key}\u0000${m.from}\u0000${m.to}`).sort();
  eq(`${name}: operations/${op.id} moves are the diff`, sortM(got.moves), sortM(moved));
  return moved;
}

// ---------------------------------------------------------- test groups --

async function testEmptyAndShapes(s) {
  const cfg = await s.get('/api/config');
  eq('GET /api/config status', cfg.status, 200);
  eq('default algorithm is "ring"', cfg.json && cfg.json.algorithm, 'ring');
  eq('default points_per_node is 1', cfg.json && cfg.json.points_per_node, 1);
  check('JSON content type', /^application\/json; *charset=utf-8$/i.test(cfg.headers['content-type'] || ''), cfg.headers['content-type']);
  eq('empty GET /api/nodes', (await s.get('/api/nodes')).json, { nodes: [] });
  const ring = await s.get('/api/ring');
  eq('GET /api/ring status', ring.status, 200);
  eq('empty ring: algorithm', ring.json.algorithm, 'ring');
  eq('empty ring: points_per_node', ring.json.points_per_node, 1);
  eq('empty ring: points', ring.json.points, []);
  const keys = await s.get('/api/keys');
  eq('empty GET /api/keys total', keys.json && keys.json.total, 0);
  eq('empty GET /api/keys keys', keys.json && keys.json.keys, []);
  eq('empty GET /api/operations', (await s.get('/api/operations')).json, { operations: [] });
  const st = await s.get('/api/stats');
  eq('empty stats status', st.status, 200);
  eq('empty stats nodes', st.json.nodes, 0);
  eq('empty stats keys', st.json.keys, 0);
  eq('empty stats per_node', st.json.per_node, []);
}

async function testNamesAndEndpoints(s) {
  let id = 0;
  const nodeNames = WEIRD;
  const created = [];
  for (const name of nodeNames) {
    check(`setup: node:crypto positions agree for ${show(name)}`, pos(name) === pos2(name));
    const r = await s.post('/api/nodes', { name });
    eq(`POST /api/nodes ${show(name)} status`, r.status, 201);
    if (r.status !== 201) continue;
    id++;
    const n = r.json.node;
    check(`node ${show(name)} has the node shape`, isNodeObject(n), show(n));
    eq(`node ${show(name)} name`, n.name, name);
    eq(`node ${show(name)} position is sha256 first 4 bytes`, n.position, pos(name));
    eq(`node ${show(name)} weight default 1`, n.weight, 1);
    eq(`node ${show(name)} points 1`, n.points, 1);
    eq(`node ${show(name)} keys 0`, n.keys, 0);
    eq(`node ${show(name)} key_share 0 without keys`, n.key_share, 0);
    expectOp(`add ${show(name)}`, r.json.operation, { id, type: 'add_node', subject: name, keys_moved: 0, moved_from: [] });
    const g = await s.get(`/api/nodes/${enc(name)}`);
    eq(`GET /api/nodes/${enc(name)} status`, g.status, 200);
    eq(`GET /api/nodes/${enc(name)} equals the POST answer`, g.json, n);
    created.push(name);
  }
  // raw '+' in a path is a plus, not a space
  const plus = await s.get('/api/nodes/+plus+');
  eq('GET /api/nodes/+plus+ (raw + in path) finds "+plus+"', plus.json && plus.json.name, '+plus+');
  const lower = await s.get('/api/nodes/%c3%bcrich%20x');
  eq('GET unknown percent-encoded node -> 404', lower.status, 404);

  const nodes = (await s.ok('/api/nodes')).nodes;
  eq('GET /api/nodes lists every node', nodes.map((n) => n.name).sort(), created.slice().sort());
  check('every listed node has the node shape', nodes.every(isNodeObject));
  let orderOk = true;
  for (let i = 1; i < nodes.length; i++) {
    const a = nodes[i - 1];
    const b = nodes[i];
    if (a.position > b.position) orderOk = false;
  }
  check('GET /api/nodes ordered by position', orderOk, show(nodes.map((n) => n.position)));
  const ring = await s.ok('/api/ring');
  checkRing('weird names', ring, nodes, 1);
  const shares = arcShares(ring.points);
  let arcOk = nodes.every((n) => Math.abs(n.arc_share - (shares.get(n.name) || 0)) < 1e-9);
  check('arc_share equals the arc computed from /api/ring', arcOk, show(nodes.map((n) => [n.name, n.arc_share, shares.get(n.name)])));
  near('arc_share sums to 1', nodes.reduce((a, n) => a + n.arc_share, 0), 1, 1e-9);

  // lookups at the edges: exactly on a point (>=), past the largest point (wraps)
  for (const n of nodes.slice(0, 5)) {
    const lk = await s.ok(`/api/lookup?key=${enc(n.name)}`);
    eq(`lookup of a key exactly at ${show(n.name)}'s point goes to it (>=)`, [lk.position, lk.node], [n.position, n.name]);
  }
  const maxPos = ring.points[ring.points.length - 1].position;
  const minPos = ring.points[0].position;
  let wrapKey = null;
  for (let i = 0; i < 100000 && wrapKey === null; i++) if (pos(`wrap-${i}`) > maxPos) wrapKey = `wrap-${i}`;
  let lowKey = null;
  for (let i = 0; i < 100000 && lowKey === null; i++) if (pos(`low-${i}`) <= minPos) lowKey = `low-${i}`;
  check('setup: keys past the largest and before the smallest point found', wrapKey !== null && lowKey !== null);
  if (wrapKey !== null) {
    const lk = await s.ok(`/api/lookup?key=${enc(wrapKey)}`);
    eq('lookup past the largest point wraps to the smallest', lk.node, ring.points[0].node);
  }
  if (lowKey !== null) {
    const lk = await s.ok(`/api/lookup?key=${enc(lowKey)}`);
    eq('lookup before the smallest point goes to it', lk.node, ring.points[0].node);
  }

  // keys with the same names
  for (const key of WEIRD) {
    const r = await s.post('/api/keys', { key });
    eq(`POST /api/keys {key:${show(key)}} status`, r.status, 201);
    if (r.status !== 201) continue;
    id++;
    const k = r.json.key;
    check(`key ${show(key)} has the key shape`, isKeyObject(k), show(k));
    eq(`key ${show(key)} key`, k.key, key);
    eq(`key ${show(key)} position`, k.position, pos(key));
    eq(`key ${show(key)} node is the first point clockwise`, k.node, ownerOf(ring.points, pos(key)));
    expectOp(`insert ${show(key)}`, r.json.operation, { id, type: 'insert_keys', subject: key, keys_moved: 0, moved_from: [] });
    const g = await s.get(`/api/keys/${enc(key)}`);
    eq(`GET /api/keys/${enc(key)}`, g.json, k);
    const l = await s.get(`/api/lookup?key=${enc(key)}`);
    eq(`lookup ${show(key)} status`, l.status, 200);
    eq(`lookup ${show(key)}`, l.json && { key: l.json.key, position: l.json.position, node: l.json.node, stored: l.json.stored }, {
      key,
      position: pos(key),
      node: k.node,
      stored: true,
    });
    eq(`lookup ${show(key)} sha256 (extra)`, l.json && l.json.sha256, sha256hex(key));
    const pf = await s.get(`/api/keys?prefix=${enc(key)}&limit=1000`);
    check(`GET /api/keys?prefix=${enc(key)} includes it`, pf.json && pf.json.keys.some((x) => x.key === key), pf.text.slice(0, 200));
    check(
      `GET /api/keys?prefix=${enc(key)} holds only keys with that prefix`,
      pf.json && pf.json.keys.every((x) => x.key.startsWith(key)),
      pf.text.slice(0, 200),
    );
    const byNode = await s.get(`/api/keys?node=${enc(k.node)}&limit=1000`);
    check(`GET /api/keys?node=${enc(k.node)} includes ${show(key)}`, byNode.json && byNode.json.keys.some((x) => x.key === key));
    check(`GET /api/keys?node=${enc(k.node)} only has that node`, byNode.json && byNode.json.keys.every((x) => x.node === k.node));
  }
  // lookup of a key that is not stored
  const ns = 'not stored / ü ? # % +';
  const l = await s.get(`/api/lookup?key=${enc(ns)}`);
  eq('lookup of a key not stored', l.json && { key: l.json.key, position: l.json.position, node: l.json.node, stored: l.json.stored }, {
    key: ns,
    position: pos(ns),
    node: ownerOf(ring.points, pos(ns)),
    stored: false,
  });
  expectError('GET /api/keys/{not stored}', await s.get(`/api/keys/${enc(ns)}`), 404, 'not_found');

  // all keys placed correctly
  const all = await s.allKeys();
  eq('GET /api/keys total counts every key', all.total, WEIRD.length);
  checkPlacement('weird keys', all.keys, ring);
  // node.keys and key_share agree with the keys listing
  const nodes2 = (await s.ok('/api/nodes')).nodes;
  let kOk = [];
  for (const n of nodes2) {
    const c = all.keys.filter((k) => k.node === n.name).length;
    if (n.keys !== c || Math.abs(n.key_share - c / all.total) > 1e-12) kOk.push(`${n.name}: keys ${n.keys}/${c} share ${n.key_share}`);
  }
  check('node.keys and node.key_share match the keys', kOk.length === 0, kOk.join('; '));

  // deletes through percent-encoded paths
  for (const key of WEIRD.slice(0, 8)) {
    const r = await s.del(`/api/keys/${enc(key)}`);
    eq(`DELETE /api/keys/${enc(key)} status`, r.status, 200);
    if (r.status === 200) id++;
    expectOp(`delete ${show(key)}`, r.json && r.json.operation, { id, type: 'delete_keys', subject: key, keys_moved: 0, moved_from: [] });
    expectError(`GET deleted key ${show(key)}`, await s.get(`/api/keys/${enc(key)}`), 404, 'not_found');
    const lk = await s.get(`/api/lookup?key=${enc(key)}`);
    eq(`lookup deleted ${show(key)} stored`, lk.json && lk.json.stored, false);
    expectError(`DELETE deleted key ${show(key)} again`, await s.del(`/api/keys/${enc(key)}`), 404, 'not_found');
  }
  for (const name of WEIRD.slice(0, 12)) {
    const before = (await s.allKeys()).keys;
    const onIt = before.filter((k) => k.node === name).length;
    const r = await s.del(`/api/nodes/${enc(name)}`);
    eq(`DELETE /api/nodes/${enc(name)} status`, r.status, 200);
    if (r.status !== 200) continue;
    id++;
    expectOp(`remove ${show(name)}`, r.json.operation, { id, type: 'remove_node', subject: name });
    const after = (await s.allKeys()).keys;
    await checkMoves(s, `remove ${show(name)}`, before, after, r.json.operation, { onlyFrom: name });
    eq(`remove ${show(name)} moved its ${onIt} keys`, r.json.operation.keys_moved, onIt);
    expectError(`GET removed node ${show(name)}`, await s.get(`/api/nodes/${enc(name)}`), 404, 'not_found');
    expectError(`DELETE removed node ${show(name)} again`, await s.del(`/api/nodes/${enc(name)}`), 404, 'not_found');
  }
  const ring2 = await s.ok('/api/ring');
  checkPlacement('after removals', (await s.allKeys()).keys, ring2);
  const ops = await s.allOps();
  eq('operation ids are 1..n', ops.map((o) => o.id), Array.from({ length: id }, (_, i) => i + 1));
}

async function testPlacementAndMoves(s) {
  // keys before any node
  const g = await s.post('/api/keys', { generate: { count: 2000 } });
  eq('generate 2000 with no node: status', g.status, 201);
  eq('generate 2000: inserted', g.json && g.json.inserted, 2000);
  eq('generate 2000: skipped', g.json && g.json.skipped, 0);
  expectOp('generate 2000', g.json && g.json.operation, { id: 1, type: 'insert_keys', keys_moved: 0, moved_from: [] });
  let cur = (await s.allKeys()).keys;
  eq('generate default prefix key- and start 0', cur.map((k) => k.key).sort(), Array.from({ length: 2000 }, (_, i) => `key-${i}`).sort());
  check('keys stored with no node have node null', cur.length === 2000 && cur.every((k) => k.node === null));
  const one = await s.get('/api/keys/key-7');
  // served_by: API.md v3 "node states" (equal to node while every node is up)
  eq('GET /api/keys/key-7 with no node', one.json, { key: 'key-7', position: pos('key-7'), node: null, served_by: null, coordinate: String(pos('key-7')) });
  const lk = await s.get('/api/lookup?key=key-7');
  eq('lookup with no node: node null, stored', lk.json && [lk.json.node, lk.json.stored], [null, true]);

  // first node places them
  const a = await s.post('/api/nodes', { name: 'alpha' });
  eq('first node: status', a.status, 201);
  expectOp('first node', a.json.operation, { id: 2, type: 'add_node', subject: 'alpha', keys_moved: 2000, moved_from: [{ node: null, keys: 2000 }] });
  eq('first node: node.keys', a.json.node.keys, 2000);
  eq('first node: key_share 1', a.json.node.key_share, 1);
  eq('first node: arc_share 1', a.json.node.arc_share, 1);
  let next = (await s.allKeys()).keys;
  check('every key is on the only node', next.every((k) => k.node === 'alpha'));
  // moves paging (> 1000 moves)
  const p0 = await s.ok('/api/operations/2');
  eq('operations/2 moves_total', p0.moves_total, 2000);
  eq('operations/2 first page has 1000 moves', p0.moves.length, 1000);
  eq('operations/2 carries the operation fields', { ...p0, moves: undefined, moves_total: undefined }, { ...a.json.operation, moves: undefined, moves_total: undefined });
  const p1 = await s.ok('/api/operations/2?offset=1000');
  eq('operations/2?offset=1000 has the next 1000', p1.moves.length, 1000);
  const p2 = await s.ok('/api/operations/2?offset=2000');
  eq('operations/2?offset=2000 is empty', p2.moves, []);
  const mk = [...p0.moves, ...p1.moves].map((m) => m.key);
  eq('the two pages cover every key once', mk.slice().sort(), cur.map((k) => k.key).sort());
  check('each move is {key, from: null, to: alpha}', [...p0.moves, ...p1.moves].every((m) => m.from === null && m.to === 'alpha'));
  const p3 = await s.ok('/api/operations/2?offset=999');
  eq('operations/2?offset=999 starts where it should', p3.moves[0], p0.moves[999]);
  cur = next;

  // more nodes: only keys that now belong to the new node move
  const snapshots = new Map();
  snapshots.set('alpha', cur);
  const names = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'];
  for (const n of names) {
    const r = await s.post('/api/nodes', { name: n });
    eq(`add ${n}: status`, r.status, 201);
    next = (await s.allKeys()).keys;
    const moved = await checkMoves(s, `add ${n}`, cur, next, r.json.operation, { onlyTo: n });
    eq(`add ${n}: node.keys equals the keys that moved to it`, r.json.node.keys, moved.length);
    checkPlacement(`after add ${n}`, next, await s.ok('/api/ring'));
    snapshots.set(n, next);
    cur = next;
  }
  // removing n7 (the last added) moves exactly its keys back
  let r = await s.del('/api/nodes/n7');
  next = (await s.allKeys()).keys;
  await checkMoves(s, 'remove n7', cur, next, r.json.operation, { onlyFrom: 'n7' });
  eq('remove n7: every key is back where it was before n7', next, snapshots.get('n6'));
  cur = next;
  r = await s.del('/api/nodes/n3');
  next = (await s.allKeys()).keys;
  await checkMoves(s, 'remove n3', cur, next, r.json.operation, { onlyFrom: 'n3' });
  checkPlacement('after remove n3', next, await s.ok('/api/ring'));
  cur = next;

  // weights
  const weights = [
    ['heavy', 2.5],
    ['light', 0.3],
    ['half', 0.5],
  ];
  for (const [n, w] of weights) {
    r = await s.post('/api/nodes', { name: n, weight: w });
    eq(`add ${n} weight ${w}: status`, r.status, 201);
    eq(`add ${n}: weight`, r.json.node.weight, w);
    eq(`add ${n}: points = max(1, round(1*${w}))`, r.json.node.points, pointsFor(1, w));
    next = (await s.allKeys()).keys;
    await checkMoves(s, `add ${n}`, cur, next, r.json.operation, { onlyTo: n });
    cur = next;
  }
  let nodes = (await s.ok('/api/nodes')).nodes;
  let ring = await s.ok('/api/ring');
  checkRing('ppn 1 with weights', ring, nodes, 1);
  checkPlacement('ppn 1 with weights', cur, ring);

  // configuration changes move keys as the new layout says
  let expectId = (await s.lastOpId()) + 1;
  for (const ppn of [4, 5, 1]) {
    r = await s.put('/api/config', { points_per_node: ppn });
    eq(`PUT /api/config ppn ${ppn}: status`, r.status, 200);
    eq(`PUT /api/config ppn ${ppn}: config`, r.json && r.json.config && [r.json.config.algorithm, r.json.config.points_per_node], ['ring', ppn]);
    expectOp(`configure ${ppn}`, r.json && r.json.operation, { id: expectId++, type: 'configure' });
    eq(`GET /api/config after PUT ${ppn}`, (await s.ok('/api/config')).points_per_node, ppn);
    next = (await s.allKeys()).keys;
    const moved = await checkMoves(s, `configure ${ppn}`, cur, next, r.json.operation);
    if (ppn !== 1) check(`configure ${ppn}: some keys moved`, moved.length > 0);
    nodes = (await s.ok('/api/nodes')).nodes;
    ring = await s.ok('/api/ring');
    eq(`ring points_per_node after ${ppn}`, ring.points_per_node, ppn);
    checkRing(`ppn ${ppn}`, ring, nodes, ppn);
    checkPlacement(`ppn ${ppn}`, next, ring);
    const shares = arcShares(ring.points);
    check(
      `ppn ${ppn}: arc_share matches the ring`,
      nodes.every((n) => Math.abs(n.arc_share - (shares.get(n.name) || 0)) < 1e-9),
      show(nodes.map((n) => [n.name, n.arc_share, shares.get(n.name)])),
    );
    cur = next;
  }
  // specific roundings: 0.5*5 = 2.5 -> 3, 2.5*5 = 12.5 -> 13, 0.3*5 = 1.5 -> 2
  r = await s.put('/api/config', { points_per_node: 5 });
  nodes = (await s.ok('/api/nodes')).nodes;
  const pts = Object.fromEntries(nodes.map((n) => [n.name, n.points]));
  eq('round halves away from zero: half (0.5*5) has 3 points, heavy (2.5*5) 13, light (0.3*5) 2', [pts.half, pts.heavy, pts.light], [3, 13, 2]);
  next = (await s.allKeys()).keys;
  await checkMoves(s, 'configure 5 again', cur, next, r.json.operation);
  cur = next;
  r = await s.put('/api/config', { points_per_node: 1 });
  next = (await s.allKeys()).keys;
  await checkMoves(s, 'configure 1 again', cur, next, r.json.operation);
  cur = next;

  // keys inserted while nodes exist are placed at once and are not moves
  r = await s.post('/api/keys', { keys: ['late-1', 'late-2'] });
  eq('insert with nodes: keys_moved 0', r.json && r.json.operation.keys_moved, 0);
  eq('insert with nodes: moved_from []', r.json && r.json.operation.moved_from, []);
  next = (await s.allKeys()).keys;
  checkPlacement('late keys', next, await s.ok('/api/ring'));
  cur = next;

  // remove every node: the keys go back to node null
  nodes = (await s.ok('/api/nodes')).nodes;
  for (const n of nodes) {
    r = await s.del(`/api/nodes/${enc(n.name)}`);
    next = (await s.allKeys()).keys;
    await checkMoves(s, `remove ${n.name}`, cur, next, r.json.operation, { onlyFrom: n.name });
    cur = next;
  }
  check('after removing every node, every key has node null', cur.length === 2002 && cur.every((k) => k.node === null));
  r = await s.post('/api/nodes', { name: 'again' });
  eq('first node again: moved_from [{node:null}]', r.json && r.json.operation.moved_from, [{ node: null, keys: 2002 }]);
  eq('first node again: keys_moved', r.json && r.json.operation.keys_moved, 2002);
}

async function testKeysListing(s) {
  for (const n of ['k1', 'k2', 'k3']) await s.post('/api/nodes', { name: n });
  let r = await s.post('/api/keys', { generate: { count: 1500, prefix: 'p-', start: 10 } });
  eq('generate prefix/start: status', r.status, 201);
  eq('generate prefix/start: counts', r.json && [r.json.inserted, r.json.skipped], [1500, 0]);
  expectOp('generate prefix/start', r.json && r.json.operation, { type: 'insert_keys', keys_moved: 0, moved_from: [] });
  const pk = await s.allKeys('prefix=p-');
  eq('generated keys are prefix+start .. prefix+(start+count-1)', pk.keys.map((k) => k.key).sort(), Array.from({ length: 1500 }, (_, i) => `p-${i + 10}`).sort());
  eq('prefix total', pk.total, 1500);
  r = await s.post('/api/keys', { generate: { count: 20, prefix: 'p-', start: 1500 } });
  eq('generate overlapping: inserted/skipped', r.json && [r.json.inserted, r.json.skipped], [10, 10]);
  r = await s.post('/api/keys', { generate: { count: 3, prefix: 'ü/', start: 7 } });
  eq('generate with unicode prefix: status', r.status, 201);
  eq('generate with unicode prefix: keys', (await s.allKeys(`prefix=${enc('ü/')}`)).keys.map((k) => k.key).sort(), ['ü/7', 'ü/8', 'ü/9']);
  r = await s.post('/api/keys', { generate: { count: 5 } });
  eq('generate defaults key-0..key-4', (await s.allKeys('prefix=key-')).keys.map((k) => k.key).sort(), ['key-0', 'key-1', 'key-2', 'key-3', 'key-4']);
  r = await s.post('/api/keys', { keys: ['x1', 'x2', 'x1', 'p-10', 'x3', 'x2'] });
  eq('keys with duplicates: status', r.status, 201);
  eq('keys with duplicates: inserted 3, skipped 3', r.json && [r.json.inserted, r.json.skipped], [3, 3]);
  expectOp('keys with duplicates', r.json && r.json.operation, { type: 'insert_keys', keys_moved: 0, moved_from: [] });
  r = await s.post('/api/keys', { keys: ['x1', 'x2'] });
  eq('keys all duplicates: inserted 0, skipped 2', r.json && [r.json.inserted, r.json.skipped], [0, 2]);
  // LIKE wildcards must not act as wildcards in prefix
  await s.post('/api/keys', { keys: ['a_b', 'axb', 'a%c', 'abc', 'a\\d', 'A_b'] });
  eq('prefix a_ is literal', (await s.allKeys(`prefix=${enc('a_')}`)).keys.map((k) => k.key), ['a_b']);
  eq('prefix a% is literal', (await s.allKeys(`prefix=${enc('a%')}`)).keys.map((k) => k.key), ['a%c']);
  eq('prefix a\\ is literal', (await s.allKeys(`prefix=${enc('a\\')}`)).keys.map((k) => k.key), ['a\\d']);
  eq('prefix is case-sensitive', (await s.allKeys(`prefix=${enc('A')}`)).keys.map((k) => k.key), ['A_b']);

  const all = await s.allKeys();
  const count = 1500 + 10 + 3 + 5 + 3 + 6;
  eq('total counts every key', all.total, count);
  eq('paging returns every key once', new Set(all.keys.map((k) => k.key)).size, count);
  let sorted = true;
  for (let i = 1; i < all.keys.length; i++) {
    const a = all.keys[i - 1];
    const b = all.keys[i];
    if (a.position > b.position || (a.position === b.position && cmpBytes(a.key, b.key) >= 0)) sorted = false;
  }
  check('keys ordered by (position, key)', sorted);
  checkPlacement('listing', all.keys, await s.ok('/api/ring'));
  const def = await s.ok('/api/keys');
  eq('default limit is 100', def.keys.length, 100);
  eq('default page is the first 100', def.keys, all.keys.slice(0, 100));
  eq('total does not depend on the page', def.total, count);
  const page = await s.ok('/api/keys?offset=250&limit=37');
  eq('offset/limit page', page.keys, all.keys.slice(250, 287));
  eq('limit=1000 returns 1000', (await s.ok('/api/keys?limit=1000')).keys.length, 1000);
  eq('limit=1 returns 1', (await s.ok('/api/keys?limit=1')).keys, all.keys.slice(0, 1));
  const past = await s.ok(`/api/keys?offset=${count + 5}`);
  eq('offset past the end: no keys, same total', [past.keys, past.total], [[], count]);
  let sum = 0;
  for (const n of ['k1', 'k2', 'k3']) {
    const f = await s.allKeys(`node=${n}`);
    const want = all.keys.filter((k) => k.node === n);
    eq(`node=${n} filter`, f.keys, want);
    eq(`node=${n} total`, f.total, want.length);
    sum += f.total;
    const fp = await s.ok(`/api/keys?node=${n}&prefix=p-1&limit=1000`);
    const wp = want.filter((k) => k.key.startsWith('p-1'));
    eq(`node=${n}&prefix=p-1`, [fp.total, fp.keys], [wp.length, wp.slice(0, 1000)]);
    const nodeObj = await s.ok(`/api/nodes/${n}`);
    eq(`node ${n}.keys equals the filtered total`, nodeObj.keys, want.length);
    near(`node ${n}.key_share`, nodeObj.key_share, want.length / count, 1e-12);
  }
  eq('node filters add up to the total', sum, count);
  const pp = await s.allKeys('prefix=p-1');
  const wpp = all.keys.filter((k) => k.key.startsWith('p-1'));
  eq('prefix=p-1 filter', [pp.total, pp.keys], [wpp.length, wpp]);

  // single key: 201 with key object, subject the key
  r = await s.post('/api/keys', { key: 'single' });
  eq('single key: status', r.status, 201);
  const singleOwner = ownerOf((await s.ok('/api/ring')).points, pos('single'));
  eq('single key: key object', r.json && r.json.key, { key: 'single', position: pos('single'), node: singleOwner, served_by: singleOwner, coordinate: String(pos('single')) });
  expectOp('single key', r.json && r.json.operation, { type: 'insert_keys', subject: 'single' });
  const d = await s.del('/api/keys/single');
  eq('DELETE /api/keys/single: status', d.status, 200);
  expectOp('DELETE /api/keys/single', d.json && d.json.operation, { type: 'delete_keys', subject: 'single', keys_moved: 0, moved_from: [] });
}

async function testStatsAndOperations(s) {
  const t0 = Date.now();
  for (const [n, w] of [
    ['s1', 1],
    ['s2', 2],
    ['s3', 1],
    ['s4', 0.5],
    ['s5', 3],
  ])
    await s.post('/api/nodes', { name: n, weight: w });
  await s.put('/api/config', { points_per_node: 7 });
  await s.post('/api/keys', { generate: { count: 3000 } });
  const st = await s.ok('/api/stats');
  const nodes = (await s.ok('/api/nodes')).nodes;
  const all = await s.allKeys();
  eq('stats.nodes', st.nodes, 5);
  eq('stats.keys', st.keys, 3000);
  eq('per_node names', st.per_node.map((p) => p.name).sort(), nodes.map((n) => n.name).sort());
  const counts = st.per_node.map((p) => p.keys);
  eq('per_node keys add up', counts.reduce((a, b) => a + b, 0), 3000);
  const ring = await s.ok('/api/ring');
  const shares = arcShares(ring.points);
  for (const p of st.per_node) {
    const c = all.keys.filter((k) => k.node === p.name).length;
    eq(`per_node ${p.name}.keys equals its keys`, p.keys, c);
    near(`per_node ${p.name}.key_share`, p.key_share, c / 3000, 1e-12);
    near(`per_node ${p.name}.arc_share equals the ring's`, p.arc_share, shares.get(p.name) || 0, 1e-9);
    const n = nodes.find((x) => x.name === p.name);
    eq(`per_node ${p.name} agrees with /api/nodes`, [p.keys, p.key_share, p.arc_share], n && [n.keys, n.key_share, n.arc_share]);
  }
  const mean = 3000 / 5;
  const sd = Math.sqrt(counts.reduce((a, c) => a + (c - mean) ** 2, 0) / counts.length);
  near('stats.mean', st.mean, mean);
  near('stats.stddev is the population stddev', st.stddev, sd);
  eq('stats.min', st.min, Math.min(...counts));
  eq('stats.max', st.max, Math.max(...counts));
  // docs/api.md v4: against each node's fair share (weight / total weight)
  const wt = { s1: 1, s2: 2, s3: 1, s4: 0.5, s5: 3 };
  const wsum = 7.5;
  const lof = st.per_node.map((p) => p.keys / 3000 / (wt[p.name] / wsum));
  for (const p of st.per_node) {
    near(`per_node ${p.name}.fair_share`, p.fair_share, wt[p.name] / wsum, 1e-12);
    near(`per_node ${p.name}.load_over_fair`, p.load_over_fair, p.keys / 3000 / (wt[p.name] / wsum), 1e-9);
  }
  near('stats.cv: the deviation of load_over_fair weighted by fair share', st.cv, Math.sqrt(st.per_node.reduce((a, p, i) => a + (wt[p.name] / wsum) * (lof[i] - 1) ** 2, 0)));
  near('stats.max_over_mean: the largest load_over_fair', st.max_over_mean, Math.max(...lof));
  check('v4 differs from the unweighted figure here (test is sensitive)', Math.abs(st.max_over_mean - Math.max(...counts) / mean) > 1e-3 && Math.abs(st.cv - sd / mean) > 1e-3);
  check('stddev is not the sample stddev (test is sensitive)', Math.abs(sd - Math.sqrt(counts.reduce((a, c) => a + (c - mean) ** 2, 0) / 4)) > 1e-6);

  // > 100 operations for the default limit
  for (let i = 0; i < 100; i++) {
    const r = await s.post('/api/keys', { key: `op-${i}` });
    if (r.status !== 201) {
      check(`insert op-${i}`, false, r.text);
      break;
    }
  }
  const ops = await s.allOps();
  const n = ops.length;
  eq('operations: ids increase by one from 1', ops.map((o) => o.id), Array.from({ length: n }, (_, i) => i + 1));
  check('operations: every one has the operation shape', ops.every(isOperation), show(ops.find((o) => !isOperation(o))));
  check('operations: at is RFC 3339 UTC', ops.every((o) => RFC3339_UTC.test(o.at)), show(ops.find((o) => !RFC3339_UTC.test(o.at))));
  let mono = true;
  for (let i = 1; i < n; i++) if (Date.parse(ops[i].at) < Date.parse(ops[i - 1].at)) mono = false;
  check('operations: at never goes back', mono);
  const t1 = Date.now();
  check(
    'operations: at is the real UTC time',
    ops.every((o) => Date.parse(o.at) >= t0 - 2000 && Date.parse(o.at) <= t1 + 2000),
    `${new Date(t0).toISOString()} .. ${new Date(t1).toISOString()}: ${ops[0].at} .. ${ops[n - 1].at}`,
  );
  const def = await s.ok('/api/operations');
  eq('operations default limit 100', def.operations.map((o) => o.id), Array.from({ length: 100 }, (_, i) => i + 1));
  eq('operations?after=100', (await s.ok('/api/operations?after=100')).operations, ops.slice(100));
  eq('operations?after=3&limit=2', (await s.ok('/api/operations?after=3&limit=2')).operations.map((o) => o.id), [4, 5]);
  eq('operations?limit=1000', (await s.ok('/api/operations?limit=1000')).operations, ops);
  eq(`operations?after=${n}`, (await s.ok(`/api/operations?after=${n}`)).operations, []);
  eq('operations?after=0&limit=1', (await s.ok('/api/operations?after=0&limit=1')).operations, ops.slice(0, 1));
  const types = ops.slice(0, 8).map((o) => [o.type, o.subject]);
  eq('operation types and subjects', types.slice(0, 5), [
    ['add_node', 's1'],
    ['add_node', 's2'],
    ['add_node', 's3'],
    ['add_node', 's4'],
    ['add_node', 's5'],
  ]);
  eq('configure and insert types', [ops[5].type, ops[6].type], ['configure', 'insert_keys']);
  for (const id of [1, 6, 7, n]) {
    const one = await s.ok(`/api/operations/${id}`);
    const { moves, moves_total: mt, ...rest } = one;
    eq(`operations/${id} equals the listed operation`, rest, ops[id - 1]);
    check(`operations/${id} has moves_total and moves`, Number.isInteger(mt) && Array.isArray(moves));
  }
  const ins = await s.ok('/api/operations/7');
  eq('insert operation has no moves', [ins.moves_total, ins.moves], [0, []]);
  const cfg = await s.ok('/api/operations/6');
  eq('configure operation moves_total = keys_moved', cfg.moves_total, cfg.keys_moved);
}

async function testTimeTravel(s) {
  const steps = [
    () => s.post('/api/keys', { generate: { count: 300 } }),
    () => s.post('/api/nodes', { name: 'A' }),
    () => s.post('/api/nodes', { name: 'B', weight: 2 }),
    () => s.put('/api/config', { points_per_node: 3 }),
    () => s.post('/api/keys', { keys: ['k1', 'k2'] }),
    () => s.post('/api/nodes', { name: 'C ü/%' }),
    () => s.del('/api/keys/key-5'),
    () => s.del('/api/nodes/A'),
    () => s.put('/api/config', { points_per_node: 2 }),
    () => s.post('/api/keys', { generate: { count: 50, prefix: 'q-' } }),
  ];
  const cap = [await s.state()];
  const opsLive = [];
  for (let i = 0; i < steps.length; i++) {
    const r = await steps[i]();
    check(`step ${i + 1} succeeded`, r.status === 200 || r.status === 201, r.text.slice(0, 200));
    const op = r.json && r.json.operation;
    eq(`step ${i + 1} operation id`, op && op.id, i + 1);
    cap.push(await s.state());
    if (op) await checkMoves(s, `step ${i + 1} (${op.type})`, cap[i].keys.keys, cap[i + 1].keys.keys, op);
    opsLive.push(op);
  }
  const N = steps.length;
  for (let id = 0; id <= N; id++) {
    const past = await s.state(id);
    eq(`?at=${id}: /api/nodes`, past.nodes, cap[id].nodes);
    eq(`?at=${id}: /api/stats`, past.stats, cap[id].stats);
    eq(`?at=${id}: /api/keys (every page)`, past.keys, cap[id].keys);
    eq(`?at=${id}: /api/config (extra)`, past.config, cap[id].config);
    eq(`?at=${id}: /api/ring (extra)`, past.ring, cap[id].ring);
  }
  const f = await s.ok(`/api/keys?at=4&node=B&prefix=key-1&offset=3&limit=5`);
  const want = cap[4].keys.keys.filter((k) => k.node === 'B' && k.key.startsWith('key-1'));
  eq('?at=4 with node/prefix/offset/limit', [f.total, f.keys], [want.length, want.slice(3, 8)]);
  eq('?at= did not change the present', await s.state(), cap[N]);

  // revert to 4: everything, config included, as right after op 4
  let r = await s.post('/api/revert', { to: 4 });
  eq('POST /api/revert {to:4}: status', r.status, 200);
  expectOp('revert 4', r.json && r.json.operation, { id: N + 1, type: 'revert' });
  let now = await s.state();
  eq('after revert 4: nodes', now.nodes, cap[4].nodes);
  eq('after revert 4: stats', now.stats, cap[4].stats);
  eq('after revert 4: keys', now.keys, cap[4].keys);
  eq('after revert 4: config (points_per_node 3)', now.config, cap[4].config);
  eq('after revert 4: ring', now.ring, cap[4].ring);
  if (r.json) await checkMoves(s, 'revert 4', cap[N].keys.keys, now.keys.keys, r.json.operation);
  let ops = await s.allOps();
  eq('revert keeps the history', ops.slice(0, N), opsLive);
  eq('revert is appended', ops.length, N + 1);
  eq(`?at=${N + 1} (the revert) equals the state after 4`, (await s.state(N + 1)).keys, cap[4].keys);
  eq('?at=8 still answers after the revert', (await s.state(8)).nodes, cap[8].nodes);

  // revert forward again, to an operation after 4
  r = await s.post('/api/revert', { to: 8 });
  eq('revert to 8: status', r.status, 200);
  now = await s.state();
  eq('after revert 8: whole state', now, cap[8]);
  // revert to the revert itself
  r = await s.post('/api/revert', { to: N + 1 });
  eq(`revert to ${N + 1} (a revert operation): state after 4`, await s.state(), cap[4]);
  r = await s.post('/api/revert', { to: N });
  eq(`revert to ${N}: state after ${N}`, await s.state(), cap[N]);

  // revert 0 empties
  r = await s.post('/api/revert', { to: 0 });
  eq('revert 0: status', r.status, 200);
  now = await s.state();
  eq('revert 0: no nodes', now.nodes, { nodes: [] });
  eq('revert 0: no keys', [now.keys.total, now.keys.keys], [0, []]);
  eq('revert 0: default configuration (as before op 1)', now.config, cap[0].config);
  if (r.json) {
    eq('revert 0: keys_moved 0 (deletions are not moves)', r.json.operation.keys_moved, 0);
  }

  // reset removes nodes and keys, keeps the configuration
  await s.post('/api/revert', { to: N });
  eq('back to the last state', await s.state(), cap[N]);
  const last = await s.lastOpId();
  r = await s.post('/api/reset');
  eq('POST /api/reset: status', r.status, 200);
  expectOp('reset', r.json && r.json.operation, { id: last + 1, type: 'reset', keys_moved: 0, moved_from: [] });
  now = await s.state();
  eq('reset: no nodes', now.nodes, { nodes: [] });
  eq('reset: no keys', now.keys.total, 0);
  eq('reset: configuration kept', now.config, cap[N].config);
  eq('reset: history kept', (await s.allOps()).length, last + 1);
  eq(`?at=${last} after the reset`, (await s.state(last)).keys, cap[N].keys);

  // revert errors leave the state alone
  const before = await s.lastOpId();
  expectError('revert to a future id', await s.post('/api/revert', { to: before + 100 }), 404, 'not_found');
  expectError('revert to -1', await s.post('/api/revert', { to: -1 }), 400, 'invalid_parameter');
  expectError('revert to "3"', await s.post('/api/revert', { to: '3' }), 400, 'invalid_parameter');
  expectError('revert to 1.5', await s.post('/api/revert', { to: 1.5 }), 400, 'invalid_parameter');
  expectError('revert with no "to"', await s.post('/api/revert', {}), 400, 'invalid_parameter');
  eq('refused reverts add no operation', await s.lastOpId(), before);
}

async function testErrors(s) {
  await s.post('/api/nodes', { name: 'exists' });
  await s.post('/api/keys', { key: 'kexists' });
  // 255 bytes is fine (control)
  let ok = await s.post('/api/nodes', { name: 'm'.repeat(255) });
  eq('255-byte node name accepted', ok.status, 201);
  eq('255-byte node name can be read back', (await s.get(`/api/nodes/${'m'.repeat(255)}`)).status, 200);
  ok = await s.post('/api/keys', { key: 'é'.repeat(127) + 'k' });
  eq('255-byte key accepted', ok.status, 201);
  eq('255-byte key can be read back', (await s.get(`/api/keys/${enc('é'.repeat(127) + 'k')}`)).status, 200);
  const snap = await s.state();
  const snapOps = await s.allOps();
  let last = snapOps.length;

  // mutation that must be refused and must not create an operation
  async function refused(name, method, p, body, status, code, headers) {
    const r = await s.req(method, p, { body, headers });
    expectError(name, r, status, code);
    const after = await s.ok(`/api/operations?after=${last}`);
    check(`${name}: no operation`, after.operations.length === 0, show(after.operations));
    last += after.operations.length;
    return r;
  }

  // invalid_json
  await refused('POST /api/nodes malformed JSON', 'POST', '/api/nodes', '{"name": "x"', 400, 'invalid_json');
  await refused('POST /api/nodes trailing garbage', 'POST', '/api/nodes', '{"name": "x"} x', 400, 'invalid_json');
  await refused('POST /api/nodes array body', 'POST', '/api/nodes', '[{"name":"x"}]', 400, 'invalid_json');
  await refused('POST /api/nodes string body', 'POST', '/api/nodes', '"x"', 400, 'invalid_json');
  await refused('POST /api/nodes number body', 'POST', '/api/nodes', '42', 400, 'invalid_json');
  await refused('POST /api/nodes null body', 'POST', '/api/nodes', 'null', 400, 'invalid_json');
  await refused('POST /api/keys malformed JSON', 'POST', '/api/keys', "{'key': 'x'}", 400, 'invalid_json');
  await refused('POST /api/keys array body', 'POST', '/api/keys', '["a"]', 400, 'invalid_json');
  await refused('PUT /api/config malformed JSON', 'PUT', '/api/config', '{points_per_node: 2}', 400, 'invalid_json');
  await refused('PUT /api/config array body', 'PUT', '/api/config', '[]', 400, 'invalid_json');
  await refused('POST /api/revert malformed JSON', 'POST', '/api/revert', '{"to":', 400, 'invalid_json');
  await refused('POST /api/revert number body', 'POST', '/api/revert', '1', 400, 'invalid_json');

  // invalid_name: nodes
  const badNames = [
    ['empty', ''],
    ['256 bytes', 'n'.repeat(256)],
    ['256 bytes of é', 'é'.repeat(128)],
    ['NUL', '\u0000'],
    ['NUL inside', 'a\u0000b'],
    ['DEL', '\u007f'],
    ['DEL inside', 'a\u007fb'],
    ['newline', 'a\nb'],
    ['tab', '\t'],
    ['U+001F', 'x\u001f'],
    ['escape', '\u001b[31m'],
  ];
  await refused('POST /api/nodes {} (missing name)', 'POST', '/api/nodes', {}, 400, 'invalid_name');
  await refused('POST /api/nodes {name: 5}', 'POST', '/api/nodes', { name: 5 }, 400, 'invalid_name');
  await refused('POST /api/nodes {name: null}', 'POST', '/api/nodes', { name: null }, 400, 'invalid_name');
  await refused('POST /api/nodes {name: ["a"]}', 'POST', '/api/nodes', { name: ['a'] }, 400, 'invalid_name');
  await refused('POST /api/nodes {name: true}', 'POST', '/api/nodes', { name: true }, 400, 'invalid_name');
  await refused('POST /api/nodes {name: {}}', 'POST', '/api/nodes', { name: {} }, 400, 'invalid_name');
  for (const [what, n] of badNames) await refused(`POST /api/nodes name ${what}`, 'POST', '/api/nodes', { name: n }, 400, 'invalid_name');
  // A lone surrogate is well-formed JSON but no character: the name is not
  // UTF-8 text (invalid_name). Raw bytes that are not UTF-8 are not JSON
  // text at all (RFC 8259 8.1): invalid_json.
  for (const [what, raw, want] of [
    ['lone surrogate escape', Buffer.from('{"name":"a\\ud800b"}'), 'invalid_name'],
    ['raw byte FF', Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('b"}')]), 'invalid_json'],
  ]) {
    const r = await s.post('/api/nodes', raw);
    const code = r.json && r.json.error && r.json.error.code;
    check(`POST /api/nodes name with ${what} -> 400 ${want}`, r.status === 400 && code === want, `${r.status} ${r.text.slice(0, 200)}`);
    const after = await s.ok(`/api/operations?after=${last}`);
    check(`POST /api/nodes name with ${what}: no operation`, after.operations.length === 0);
  }
  // invalid_name: keys
  await refused('POST /api/keys {} (missing key)', 'POST', '/api/keys', {}, 400, 'invalid_name');
  await refused('POST /api/keys {key: 5}', 'POST', '/api/keys', { key: 5 }, 400, 'invalid_name');
  await refused('POST /api/keys {key: null}', 'POST', '/api/keys', { key: null }, 400, 'invalid_name');
  for (const [what, n] of badNames) await refused(`POST /api/keys key ${what}`, 'POST', '/api/keys', { key: n }, 400, 'invalid_name');
  for (const [what, n] of badNames)
    await refused(`POST /api/keys keys:[ok, ${what}]`, 'POST', '/api/keys', { keys: ['fine-key', n] }, 400, 'invalid_name');
  await refused('POST /api/keys keys:[ok, 7]', 'POST', '/api/keys', { keys: ['fine-key', 7] }, 400, 'invalid_name');
  await refused('POST /api/keys keys:[ok, null]', 'POST', '/api/keys', { keys: ['fine-key', null] }, 400, 'invalid_name');
  await refused('generate with a prefix making 256-byte keys', 'POST', '/api/keys', { generate: { count: 1, prefix: 'g'.repeat(255) } }, 400, 'invalid_name');
  await refused('generate with a control character in the prefix', 'POST', '/api/keys', { generate: { count: 1, prefix: 'a\u0001' } }, 400, 'invalid_name');
  // invalid_name in paths and query strings
  const badSegs = [
    ['%00', '%00'],
    ['a%00b', 'a%00b'],
    ['%7F', '%7F'],
    ['%1F', '%1F'],
    ['%0A', '%0A'],
    ['%FF (invalid UTF-8)', '%FF'],
    ['%C3 (truncated UTF-8)', '%C3'],
    ['%C0%AF (overlong)', '%C0%AF'],
    ['%ED%A0%80 (surrogate)', '%ED%A0%80'],
    ['256 bytes', 'p'.repeat(256)],
  ];
  for (const [what, seg] of badSegs) {
    expectError(`GET /api/nodes/${what}`, await s.get(`/api/nodes/${seg}`), 400, 'invalid_name');
    await refused(`DELETE /api/nodes/${what}`, 'DELETE', `/api/nodes/${seg}`, undefined, 400, 'invalid_name');
    expectError(`GET /api/keys/${what}`, await s.get(`/api/keys/${seg}`), 400, 'invalid_name');
    await refused(`DELETE /api/keys/${what}`, 'DELETE', `/api/keys/${seg}`, undefined, 400, 'invalid_name');
    expectError(`GET /api/lookup?key=${what}`, await s.get(`/api/lookup?key=${seg}`), 400, 'invalid_name');
    expectError(`GET /api/keys?node=${what}`, await s.get(`/api/keys?node=${seg}`), 400, 'invalid_name');
  }
  expectError('GET /api/lookup (missing key)', await s.get('/api/lookup'), 400, 'invalid_name');
  expectError('GET /api/lookup?key= (empty)', await s.get('/api/lookup?key='), 400, 'invalid_name');

  // invalid_parameter
  for (const w of [0, -1, 'x', '2', true, [1], {}])
    await refused(`POST /api/nodes weight ${show(w)}`, 'POST', '/api/nodes', { name: 'w-node', weight: w }, 400, 'invalid_parameter');
  for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'limit=-1', 'limit=1.5', 'offset=-1', 'offset=x', 'limit=', 'offset=1e3']) {
    expectError(`GET /api/keys?${q}`, await s.get(`/api/keys?${q}`), 400, 'invalid_parameter');
  }
  for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'after=-1', 'after=x']) {
    expectError(`GET /api/operations?${q}`, await s.get(`/api/operations?${q}`), 400, 'invalid_parameter');
  }
  for (const c of [0, -5, 10000001, 'ten', 1.5, null])
    await refused(`generate count ${show(c)}`, 'POST', '/api/keys', { generate: { count: c } }, 400, 'invalid_parameter');
  await refused('generate without count', 'POST', '/api/keys', { generate: {} }, 400, 'invalid_parameter');
  await refused('generate start -1', 'POST', '/api/keys', { generate: { count: 1, start: -1 } }, 400, 'invalid_parameter');
  await refused('keys: not an array', 'POST', '/api/keys', { keys: 'abc' }, 400, 'invalid_parameter');
  await refused('revert to -1', 'POST', '/api/revert', { to: -1 }, 400, 'invalid_parameter');
  await refused('revert to "x"', 'POST', '/api/revert', { to: 'x' }, 400, 'invalid_parameter');
  await refused('PUT /api/config unknown field', 'PUT', '/api/config', { colour: 'blue' }, 400, 'invalid_parameter');
  await refused('PUT /api/config unknown field with a valid one', 'PUT', '/api/config', { points_per_node: 2, colour: 'blue' }, 400, 'invalid_parameter');
  for (const p of [0, -1, '4', 2.5, null])
    await refused(`PUT /api/config points_per_node ${show(p)}`, 'PUT', '/api/config', { points_per_node: p }, 400, 'invalid_parameter');
  await refused('PUT /api/config algorithm "nope"', 'PUT', '/api/config', { algorithm: 'nope' }, 400, 'invalid_parameter');
  await refused('PUT /api/config algorithm 5', 'PUT', '/api/config', { algorithm: 5 }, 400, 'invalid_parameter');
  eq('config unchanged by refused PUTs', await s.ok('/api/config'), snap.config);

  // 404
  expectError('GET /api/nodes/unknown', await s.get('/api/nodes/unknown'), 404, 'not_found');
  // Found by fuzzing: a message quoting bytes that are not UTF-8 once made an empty answer.
  expectError('GET /api/operations/%84 (not UTF-8)', await s.get('/api/operations/%84'), 404, 'not_found');
  expectError('GET /api/operations/%C3%28 (not UTF-8)', await s.get('/api/operations/a%C3%28'), 404, 'not_found');
  await refused('DELETE /api/nodes/unknown', 'DELETE', '/api/nodes/unknown', undefined, 404, 'not_found');
  expectError('GET /api/keys/unknown', await s.get('/api/keys/unknown'), 404, 'not_found');
  await refused('DELETE /api/keys/unknown', 'DELETE', '/api/keys/unknown', undefined, 404, 'not_found');
  expectError('GET /api/operations/999', await s.get('/api/operations/999'), 404, 'not_found');
  expectError('GET /api/operations/0', await s.get('/api/operations/0'), 404, 'not_found');
  expectError('GET /api/operations/abc', await s.get('/api/operations/abc'), 404, 'not_found');
  expectError('GET /api/nope', await s.get('/api/nope'), 404, 'not_found');
  expectError('GET /api/nodes/exists/more', await s.get('/api/nodes/exists/more'), 404, 'not_found');
  expectError('POST /api/nope', await s.post('/api/nope', {}), 404, 'not_found');
  await refused('revert to a future id', 'POST', '/api/revert', { to: last + 1000 }, 404, 'not_found');

  // 405
  await refused('PUT /api/nodes', 'PUT', '/api/nodes', { name: 'x' }, 405, 'method_not_allowed');
  await refused('PATCH /api/keys', 'PATCH', '/api/keys', { key: 'x' }, 405, 'method_not_allowed');
  await refused('DELETE /api/ring', 'DELETE', '/api/ring', undefined, 405, 'method_not_allowed');
  await refused('POST /api/stats', 'POST', '/api/stats', {}, 405, 'method_not_allowed');
  await refused('PUT /api/nodes/exists', 'PUT', '/api/nodes/exists', { name: 'exists' }, 405, 'method_not_allowed');
  await refused('POST /api/operations', 'POST', '/api/operations', {}, 405, 'method_not_allowed');
  await refused('GET /api/reset', 'GET', '/api/reset', undefined, 405, 'method_not_allowed');
  await refused('GET /api/revert', 'GET', '/api/revert', undefined, 405, 'method_not_allowed');
  await refused('DELETE /api/config', 'DELETE', '/api/config', undefined, 405, 'method_not_allowed');
  await refused('POST /api/config', 'POST', '/api/config', { points_per_node: 2 }, 405, 'method_not_allowed');
  await refused('DELETE /api/nodes', 'DELETE', '/api/nodes', undefined, 405, 'method_not_allowed');
  await refused('DELETE /api/keys', 'DELETE', '/api/keys', undefined, 405, 'method_not_allowed');

  // 409
  await refused('POST /api/nodes existing', 'POST', '/api/nodes', { name: 'exists' }, 409, 'conflict');
  await refused('POST /api/keys existing single key', 'POST', '/api/keys', { key: 'kexists' }, 409, 'conflict');

  const after = await s.state();
  eq('refused requests leave the state unchanged', after, snap);
  eq('refused requests add no operation', await s.allOps(), snapOps);
}

async function testBodyLimit(s) {
  const MiB16 = 16 * 1024 * 1024;
  // exactly 16 MiB of valid JSON: {"keys":[...]} padded with whitespace
  const keys = [];
  let size = '{"keys":[]}'.length;
  for (let i = 0; ; i++) {
    const k = `big-${String(i).padStart(8, '0')}-${'z'.repeat(200)}`;
    const add = JSON.stringify(k).length + (keys.length ? 1 : 0);
    if (size + add > MiB16 - 10) break;
    keys.push(k);
    size += add;
  }
  const json = JSON.stringify({ keys });
  const body = Buffer.alloc(MiB16, 0x20);
  body.write(json, 0, 'utf8');
  const before = await s.lastOpId();
  const big = Buffer.alloc(MiB16 + 1, 0x20);
  big.write(json, 0, 'utf8');
  expectError('POST /api/keys with 16 MiB + 1 byte', await s.post('/api/keys', big), 413, 'payload_too_large');
  eq('413 adds no operation', await s.lastOpId(), before);
  eq('413 stores no key', (await s.ok('/api/keys?limit=1')).total, 0);
  const r = await s.post('/api/keys', body);
  eq(`POST /api/keys with exactly 16 MiB (${keys.length} keys): 201`, r.status, 201);
  eq('16 MiB body: every key inserted', r.json && r.json.inserted, keys.length);
  eq('16 MiB body: total', (await s.ok('/api/keys?limit=1')).total, keys.length);
  const r2 = await s.post('/api/nodes', Buffer.concat([Buffer.from('{"name":"big"}'), Buffer.alloc(MiB16 + 1 - 14, 0x20)]));
  expectError('POST /api/nodes with 16 MiB + 1 byte', r2, 413, 'payload_too_large');
  expectError('GET /api/nodes/big after the 413', await s.get('/api/nodes/big'), 404, 'not_found');
}

async function testSecurity(s) {
  const port = s.port;
  await s.post('/api/nodes', { name: 'sec' });
  await s.post('/api/keys', { key: 'sec-key' });
  const before = await s.lastOpId();
  const evilHost = { Host: `evil.example:${port}` };
  expectError('GET /api/nodes with Host evil.example', await s.get('/api/nodes', { headers: evilHost }), 403, 'forbidden');
  expectError('POST /api/nodes with Host evil.example', await s.post('/api/nodes', { name: 'evil1' }, { headers: evilHost }), 403, 'forbidden');
  expectError('POST /api/reset with Host evil.example', await s.req('POST', '/api/reset', { headers: evilHost }), 403, 'forbidden');
  expectError('GET / with Host evil.example', await s.get('/', { headers: evilHost }), 403, 'forbidden');
  expectError('GET /api/events with Host evil.example', await s.get('/api/events', { headers: evilHost, timeout: 5000 }), 403, 'forbidden');
  expectError('Host evil.example (no port)', await s.get('/api/nodes', { headers: { Host: 'evil.example' } }), 403, 'forbidden');
  expectError('Host 127.0.0.1.evil.example', await s.get('/api/nodes', { headers: { Host: `127.0.0.1.evil.example:${port}` } }), 403, 'forbidden');
  const origins = ['http://evil.example', `http://evil.example:${port}`, 'null', `https://127.0.0.1:${port}`, 'http://127.0.0.1:1', `http://127.0.0.1.evil.example:${port}`];
  for (const o of origins) {
    expectError(`GET /api/nodes with Origin ${o}`, await s.get('/api/nodes', { headers: { Origin: o } }), 403, 'forbidden');
    expectError(`POST /api/nodes with Origin ${o}`, await s.post('/api/nodes', { name: 'evil2' }, { headers: { Origin: o } }), 403, 'forbidden');
  }
  expectError('DELETE /api/nodes/sec with Origin http://evil.example', await s.del('/api/nodes/sec', { headers: { Origin: 'http://evil.example' } }), 403, 'forbidden');
  // controls: this server's own address
  eq('Host 127.0.0.1:PORT is accepted', (await s.get('/api/nodes', { headers: { Host: `127.0.0.1:${port}` } })).status, 200);
  const own = await s.post('/api/nodes', { name: 'own-origin' }, { headers: { Origin: `http://127.0.0.1:${port}` } });
  eq('Origin http://127.0.0.1:PORT is accepted', own.status, 201);
  await s.del('/api/nodes/own-origin');
  const mid = await s.lastOpId();
  eq('forbidden requests add no operation', mid, before + 2);
  eq('forbidden requests created nothing', (await s.ok('/api/nodes')).nodes.map((n) => n.name), ['sec']);

  // no CORS
  for (const [m, p, h] of [
    ['GET', '/api/nodes', {}],
    ['GET', '/api/nodes', { Origin: `http://127.0.0.1:${port}` }],
    ['GET', '/api/nodes', { Origin: 'http://evil.example' }],
    ['OPTIONS', '/api/nodes', { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' }],
    ['OPTIONS', '/api/nodes', { Origin: `http://127.0.0.1:${port}`, 'Access-Control-Request-Method': 'DELETE' }],
    ['GET', '/', {}],
  ]) {
    const r = await s.req(m, p, { headers: h });
    check(`${m} ${p} ${show(h)}: no Access-Control-Allow-Origin`, r.headers['access-control-allow-origin'] === undefined, r.headers['access-control-allow-origin']);
  }
  // CSP on the page
  const page = await s.get('/');
  check('GET / has a Content-Security-Policy', typeof page.headers['content-security-policy'] === 'string' && page.headers['content-security-policy'].length > 0);
  const api = await s.get('/api/nodes');
  check('API answers also carry a CSP (defence in depth)', typeof api.headers['content-security-policy'] === 'string');

  // static path traversal
  for (const p of [
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/%2E%2E/%2E%2E/%2E%2E/%2E%2E/etc/passwd',
    '/..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '/static/../../../../etc/passwd',
    '//etc/passwd',
    '/%2Fetc%2Fpasswd',
    '/....//....//etc/passwd',
    '/.%2e/.%2e/.%2e/etc/passwd',
    '/index.html/../../../../etc/passwd',
    '/%252e%252e/%252e%252e/etc/passwd',
    '/%00/../../etc/passwd',
  ]) {
    const r = await s.get(p);
    check(`GET ${p} does not leak /etc/passwd`, !/root:.*:0:0:/.test(r.text), `${r.status} ${r.text.slice(0, 80)}`);
    check(`GET ${p} is not a 200 answer with the file`, !(r.status === 200 && r.text.includes('/bin/')), `${r.status}`);
    check(`GET ${p} is not a 5xx`, r.status < 500, `${r.status}`);
  }
  const dbName = path.basename(s.db);
  for (const p of [`/../${dbName}`, `/%2e%2e/${dbName}`]) {
    const r = await s.get(p);
    check(`GET ${p} does not serve the database`, !r.text.includes('SQLite format'), `${r.status}`);
  }

  // mutations with a non-JSON content type are refused (CSRF "simple requests")
  const cases = [
    ['POST', '/api/nodes', '{"name":"csrf1"}', 'text/plain'],
    ['POST', '/api/nodes', '{"name":"csrf2"}', 'text/plain;charset=UTF-8'],
    ['POST', '/api/nodes', 'name=csrf3', 'application/x-www-form-urlencoded'],
    ['POST', '/api/keys', '{"key":"csrf4"}', 'text/plain'],
    ['PUT', '/api/config', '{"points_per_node":9}', 'text/plain'],
    ['POST', '/api/revert', '{"to":0}', 'text/plain'],
    ['POST', '/api/nodes', '{"name":"csrf5"}', null],
    ['DELETE', '/api/keys/sec-key', '{}', 'text/plain'],
    ['DELETE', '/api/nodes/sec', '{}', 'text/plain'],
    ['POST', '/api/reset', '{}', 'text/plain'],
  ];
  const b0 = await s.lastOpId();
  for (const [m, p, body, ct] of cases) {
    const r = await s.req(m, p, { body, headers: { 'Content-Type': ct } });
    check(`${m} ${p} with Content-Type ${ct} and a body is refused`, r.status >= 400 && r.status < 500, `${r.status} ${r.text.slice(0, 150)}`);
    if (r.status >= 400 && r.json) check(`${m} ${p} ${ct}: error object`, r.json.error && typeof r.json.error.code === 'string');
  }
  eq('non-JSON mutations add no operation', await s.lastOpId(), b0);
  eq('non-JSON mutations changed nothing', (await s.ok('/api/nodes')).nodes.map((n) => n.name), ['sec']);
  eq('non-JSON PUT left the config alone', (await s.ok('/api/config')).points_per_node, 1);
  eq('non-JSON mutations left the keys alone', (await s.ok('/api/keys')).keys.map((k) => k.key), ['sec-key']);
}

// ------------------------------------------------------------------- SSE --

class Sse {
  constructor(port, headers = {}) {
    this.events = [];
    this.waiters = [];
    this.buf = '';
    this.ready = new Promise((resolve, reject) => {
      this.req = http.get(
        { host: '127.0.0.1', port, path: '/api/events', headers: { Host: `127.0.0.1:${port}`, Accept: 'text/event-stream', ...headers }, agent: false },
        (res) => {
          this.res = res;
          res.setEncoding('utf8');
          res.on('data', (d) => this.feed(d));
          res.on('error', () => {});
          resolve(res);
        },
      );
      this.req.on('error', (e) => (this.res ? null : reject(e)));
    });
  }

  feed(d) {
    this.buf += d;
    let m;
    while ((m = /\r\n\r\n|\n\n|\r\r/.exec(this.buf))) {
      const block = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const ev = { event: 'message', data: [], id: undefined, at: Date.now() };
      let any = false;
      for (const line of block.split(/\r\n|\n|\r/)) {
        if (line === '' || line.startsWith(':')) continue;
        const i = line.indexOf(':');
        const f = i < 0 ? line : line.slice(0, i);
        let v = i < 0 ? '' : line.slice(i + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (f === 'data') {
          ev.data.push(v);
          any = true;
        } else if (f === 'event') ev.event = v;
        else if (f === 'id') ev.id = v;
      }
      if (any) {
        this.events.push(ev);
        for (const w of this.waiters.slice()) w();
      }
    }
  }

  ops() {
    return this.events.filter((e) => e.event === 'operation');
  }

  async waitOps(n, ms = 3000) {
    const end = Date.now() + ms;
    while (this.ops().length < n && Date.now() < end) {
      await new Promise((r) => {
        const t = setTimeout(r, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
      this.waiters = [];
    }
    return this.ops();
  }

  close() {
    this.req.destroy();
  }
}

function checkSseOps(name, evs, ops) {
  eq(`${name}: operation events`, evs.length, ops.length);
  for (let i = 0; i < Math.min(evs.length, ops.length); i++) {
    const e = evs[i];
    eq(`${name}: event ${i} id: line`, e.id, String(ops[i].id));
    eq(`${name}: event ${i} has one data line`, e.data.length, 1);
    let d;
    try {
      d = JSON.parse(e.data.join('\n'));
    } catch {
      d = undefined;
    }
    eq(`${name}: event ${i} data is the operation`, d, ops[i]);
  }
}

function runCli(args) {
  return new Promise((resolve) => {
    execFile(BIN, args, { timeout: 20000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

async function testEvents(s) {
  await s.post('/api/nodes', { name: 'pre-1' });
  await s.post('/api/nodes', { name: 'pre-2' });
  const a = new Sse(s.port);
  const res = await a.ready;
  eq('GET /api/events status', res.statusCode, 200);
  check('GET /api/events is text/event-stream', /^text\/event-stream/i.test(res.headers['content-type'] || ''), res.headers['content-type']);
  check('GET /api/events: no Access-Control-Allow-Origin', res.headers['access-control-allow-origin'] === undefined);
  await sleep(600);
  eq('a new connection gets no earlier operation', a.ops().length, 0);
  const made = [];
  made.push((await s.post('/api/nodes', { name: 'ev-1 ü/%' })).json.operation);
  made.push((await s.post('/api/keys', { keys: ['e1', 'e2', 'e3'] })).json.operation);
  made.push((await s.put('/api/config', { points_per_node: 2 })).json.operation);
  made.push((await s.del(`/api/nodes/${enc('ev-1 ü/%')}`)).json.operation);
  made.push((await s.post('/api/reset')).json.operation);
  checkSseOps('live', await a.waitOps(made.length), made);

  // a second connection gets only what comes after it connects
  const b = new Sse(s.port);
  await b.ready;
  await sleep(600);
  eq('second connection: nothing old', b.ops().length, 0);
  const more = (await s.post('/api/nodes', { name: 'ev-2' })).json.operation;
  checkSseOps('second connection', await b.waitOps(1), [more]);
  made.push(more);
  checkSseOps('first connection keeps going', await a.waitOps(made.length), made);

  // Last-Event-ID resumes
  const all = await s.allOps();
  const c = new Sse(s.port, { 'Last-Event-ID': '3' });
  await c.ready;
  const resumed = await c.waitOps(all.length - 3);
  await sleep(400);
  checkSseOps('Last-Event-ID: 3', c.ops(), all.slice(3));
  const d = new Sse(s.port, { 'Last-Event-ID': '0' });
  await d.ready;
  await d.waitOps(all.length);
  await sleep(300);
  checkSseOps('Last-Event-ID: 0', d.ops(), all);
  void resumed;
  const newer = (await s.post('/api/keys', { key: 'after-resume' })).json.operation;
  checkSseOps('resumed connection then gets new operations', await c.waitOps(all.length - 3 + 1), [...all.slice(3), newer]);
  made.push(newer);

  // a change made by the command line reaches the stream within a second
  const t0 = Date.now();
  const cli = await runCli(['--db', s.db, 'node', 'add', 'from-cli']);
  const t1 = Date.now();
  eq('CLI node add while serving: exit status 0', cli.code, 0);
  const evs = await a.waitOps(made.length + 1, 3000);
  const ev = evs[made.length];
  let data;
  try {
    data = ev && JSON.parse(ev.data.join('\n'));
  } catch {
    data = undefined;
  }
  eq('CLI change arrives as an operation event', data && [data.type, data.subject], ['add_node', 'from-cli']);
  check('CLI change arrives within about a second', ev && ev.at - t1 <= 1200, ev ? `${ev.at - t1} ms after the CLI exited (CLI ran ${t1 - t0} ms)` : 'never arrived');
  const listed = await s.allOps();
  eq('CLI operation has the next id, same in the API', data, listed[listed.length - 1]);
  eq('CLI node is served by the API', (await s.get('/api/nodes/from-cli')).json && (await s.get('/api/nodes/from-cli')).json.name, 'from-cli');
  const evb = await b.waitOps(3, 3000);
  eq('CLI change reaches every connection', evb[evb.length - 1] && evb[evb.length - 1].id, String(listed[listed.length - 1].id));
  const cli2 = await runCli(['--db', s.db, 'key', 'add', 'cli-k1', 'cli-k2']);
  eq('CLI key add: exit status 0', cli2.code, 0);
  const evs2 = await a.waitOps(made.length + 2, 3000);
  const last2 = await s.allOps();
  checkSseOps('first connection: every operation since it connected (API and CLI), in order', evs2, last2.slice(2));
  for (const x of [a, b, c, d]) x.close();
}

async function testPersistence(s) {
  await s.post('/api/keys', { generate: { count: 500, prefix: 'pk-' } });
  await s.post('/api/nodes', { name: 'P1 ü' });
  await s.post('/api/nodes', { name: 'P2/x', weight: 1.5 });
  await s.put('/api/config', { points_per_node: 3 });
  await s.post('/api/nodes', { name: 'P3' });
  await s.del('/api/keys/pk-3');
  await s.del(`/api/nodes/${enc('P1 ü')}`);
  await s.post('/api/keys', { keys: ['a', 'b'] });
  const st = await s.state();
  const ops = await s.allOps();
  const at3 = await s.state(3);
  await s.stop();
  await s.start();
  eq('after restart: nodes', (await s.state()).nodes, st.nodes);
  const st2 = await s.state();
  eq('after restart: keys', st2.keys, st.keys);
  eq('after restart: config', st2.config, st.config);
  eq('after restart: ring', st2.ring, st.ring);
  eq('after restart: stats', st2.stats, st.stats);
  eq('after restart: operations', await s.allOps(), ops);
  for (const o of ops.slice(0, 3)) {
    const one = await s.ok(`/api/operations/${o.id}`);
    eq(`after restart: operations/${o.id}`, { ...one, moves: undefined, moves_total: undefined }, { ...o, moves: undefined, moves_total: undefined });
  }
  eq('after restart: ?at=3', await s.state(3), at3);
  const r = await s.post('/api/nodes', { name: 'P4' });
  eq('after restart: next operation id continues', r.json && r.json.operation.id, ops.length + 1);
  const r2 = await s.post('/api/revert', { to: ops.length });
  eq('after restart: revert to the last operation before it', r2.status, 200);
  eq('after restart: revert restores the state', (await s.state()).keys, st.keys);
  // and once more, to see the revert persist
  const st3 = await s.state();
  const ops3 = await s.allOps();
  await s.stop();
  await s.start();
  eq('second restart: state', await s.state(), st3);
  eq('second restart: operations', await s.allOps(), ops3);
}

async function testTies(s) {
  // Two names with the same position whose order differs between UTF-16
  // (JavaScript) and UTF-8 bytes: U+FFFD (EF BF BD) sorts before U+1F600
  // (F0 9F 98 80) as bytes but after it as UTF-16 code units.
  const A = '\u{1F600}2721';
  const B = '\uFFFD50996';
  check('setup: the two names collide', pos(A) === pos(B), `${pos(A)} ${pos(B)}`);
  check('setup: UTF-16 and UTF-8 orders differ', A < B && cmpBytes(B, A) < 0);
  await s.post('/api/nodes', { name: A });
  await s.post('/api/keys', { generate: { count: 200 } });
  const r = await s.post('/api/nodes', { name: B });
  eq('tie: add second node', r.status, 201);
  const ring = await s.ok('/api/ring');
  eq('tie: ring order is (position, UTF-8 bytes)', ring.points.map((p) => p.node), [B, A]);
  const keys = (await s.allKeys()).keys;
  check('tie: the first in (position, name bytes) owns every key', keys.length === 200 && keys.every((k) => k.node === B), show(keys.slice(0, 3)));
  eq('tie: every key moved to it', r.json && r.json.operation.keys_moved, 200);
  const nodes = (await s.ok('/api/nodes')).nodes;
  const nb = nodes.find((n) => n.name === B);
  const na = nodes.find((n) => n.name === A);
  eq('tie: owner arc_share 1, other 0', [nb && nb.arc_share, na && na.arc_share], [1, 0]);
  eq('tie: GET /api/nodes lists both, at the same position', nodes.map((n) => n.position), [pos(A), pos(A)]);
  const lk = await s.ok(`/api/lookup?key=key-1`);
  eq('tie: lookup goes to the first in order', lk.node, B);
  // removing the owner gives the keys to the other one
  const d = await s.del(`/api/nodes/${enc(B)}`);
  eq('tie: removing the owner moves every key back', d.json && d.json.operation.moved_from, [{ node: B, keys: 200 }]);
  check('tie: keys back on the other', (await s.allKeys()).keys.every((k) => k.node === A));
}

// ------------------------------------------------------------------ main --

async function main() {
  if (!fs.existsSync(BIN)) {
    console.log(`no ringsim binary at ${BIN}`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  await withServer('empty', testEmptyAndShapes);
  await withServer('names', testNamesAndEndpoints);
  await withServer('placement', testPlacementAndMoves);
  await withServer('keys', testKeysListing);
  await withServer('stats', testStatsAndOperations);
  await withServer('time', testTimeTravel);
  await withServer('errors', testErrors);
  await withServer('security', testSecurity);
  await withServer('events', testEvents);
  await withServer('persistence', testPersistence);
  await withServer('ties', testTies);
  await withServer('body', testBodyLimit);
  setGroup('all');
  check('no answer carried Access-Control-Allow-Origin', sawACAO.length === 0, sawACAO.slice(0, 5).join(', '));
  finish();
}

main().catch(crashed);
