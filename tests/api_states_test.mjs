// tests/api_states_test.mjs - node states over HTTP (API.md "Version 3: node
// states"): PUT /api/nodes/{name}/state, one set_state operation with what
// moved and what will move back, "state" on nodes, "node" and "served_by"
// on keys, lookups and exports, preview, time travel, revert, refusals,
// and the command line on the same database.
//
//   node tests/api_states_test.mjs /path/to/ringsim
//
// Expected servers come from API.md's ring recomputed here: for `ring` the
// next up node clockwise is the owner on the ring of the up nodes' points
// (the same positions without the down node's).  Ends with "N passed, N
// failed".
//
// Checks docs/api.md, 'Node states', 'PUT /api/nodes/{name}/state'.

import { spawnSync } from 'node:child_process';
import { setGroup, finish, crashed, check, eq, withServer, pos, pointsFor, cmpBytes, enc, BIN, WEIRD } from './lib/harness.mjs';

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

const served = (keys) => Object.fromEntries(keys.map((k) => [k.key, k.served_by]));

async function ringStates(s) {
  const names = ['alpha', WEIRD[0], WEIRD[5], 'delta'];
  eq('points_per_node 8', (await s.put('/api/config', { points_per_node: 8 })).status, 200);
  const nodes = names.map((name, i) => ({ name, weight: 1 + (i % 2) }));
  for (const n of nodes) eq(`add ${n.name}`, (await s.post('/api/nodes', n)).status, 201);
  eq('generate 3000', (await s.post('/api/keys', { generate: { count: 3000 } })).status, 201);
  const all = ringOwner(nodes, 8);
  const before = await s.allKeys();
  eq('all up: served_by equals node for every key', before.keys.filter((k) => k.served_by !== k.node).length, 0);
  const nl = await s.ok('/api/nodes');
  eq('every node answers "state": "up"', nl.nodes.map((n) => n.state), names.map(() => 'up'));

  const victim = names[1];
  const pv = await s.post('/api/preview', { op: 'set_state', name: victim, state: 'down' });
  eq('preview set_state: 200', pv.status, 200);
  const opsBefore = await s.lastOpId();
  const r = await s.put(`/api/nodes/${enc(victim)}/state`, { state: 'down' });
  eq(`PUT /api/nodes/{${victim}}/state down: 200`, r.status, 200);
  if (r.status !== 200) return;
  const op = r.json.operation;
  eq('one set_state operation about the node', [op.id, op.type, op.subject, op.state], [opsBefore + 1, 'set_state', victim, 'down']);
  eq('the node answers "state": "down" and serves no key', [r.json.node.state, r.json.node.keys], ['down', 0]);
  const upNodes = nodes.filter((n) => n.name !== victim);
  const serving = ringOwner(upNodes, 8);
  const during = await s.allKeys();
  let wrongNode = 0;
  let wrongServer = 0;
  for (const k of during.keys) {
    if (k.node !== all(k.key)) wrongNode++;
    if (k.served_by !== serving(k.key)) wrongServer++;
  }
  eq('"node" stays the owner by placement', wrongNode, 0);
  eq('"served_by" is the next up node clockwise', wrongServer, 0);
  const old = served(before.keys);
  const moved = during.keys.filter((k) => old[k.key] !== k.served_by);
  eq('keys_moved counts the keys whose server changed', op.keys_moved, moved.length);
  check('they all came from the down node', moved.length > 0 && moved.every((k) => old[k.key] === victim), String(moved.length));
  eq('moved_from names it', op.moved_from, [{ node: victim, keys: moved.length }]);
  eq('moves_back_when_up: every one of them', op.moves_back_when_up, moved.length);
  eq('the preview said so', [pv.json.keys_moved, pv.json.moved_from], [op.keys_moved, op.moved_from]);

  const owned = await s.allKeys(`node=${enc(victim)}`);
  eq('?node= filters by owner: the down node\'s keys, served elsewhere', [owned.total, owned.keys.length, owned.keys.every((x) => x.node === victim && x.served_by !== victim)], [moved.length, moved.length, true]);
  const page2 = await s.ok(`/api/keys?node=${enc(victim)}&offset=5&limit=7`);
  eq('and pages them', [page2.total, page2.keys.map((x) => x.key)], [moved.length, owned.keys.slice(5, 12).map((x) => x.key)]);
  const k = moved[0];
  const one = await s.ok(`/api/keys/${enc(k.key)}`);
  eq('GET /api/keys/{key}: node and served_by', [one.node, one.served_by], [victim, serving(k.key)]);
  const lk = await s.ok(`/api/lookup?key=${enc(k.key)}`);
  eq('lookup: node and served_by', [lk.node, lk.served_by], [victim, serving(k.key)]);
  check('lookup trace says the owner is down', lk.trace.some((t) => t.step === 'state' && t.detail.includes('down')), JSON.stringify(lk.trace));
  const csv = await s.get('/api/keys?format=csv');
  check('CSV export has node and served_by columns', /(^|,)node(,|$)/.test(csv.text.split('\n')[0]) && csv.text.split('\n')[0].includes('served_by'), csv.text.slice(0, 200));
  const ex = await s.get('/api/export/keys?format=json');
  const exk = ex.json && ex.json.keys.find((x) => x.key === k.key);
  eq('JSON export: node and served_by', exk && [exk.node, exk.served_by], [victim, serving(k.key)]);

  const again = await s.put(`/api/nodes/${enc(victim)}/state`, { state: 'down' });
  eq('the same state again: 200, "operation": null', [again.status, again.json && again.json.operation], [200, null]);
  eq('and nothing recorded', await s.lastOpId(), op.id);

  for (const [body, what] of [
    [{ state: 'sideways' }, 'an unknown state'],
    [{ state: 'DOWN' }, 'another case'],
    [{ state: 1 }, 'a number'],
    [{}, 'no state'],
    [{ state: 'down', weight: 2 }, 'another field'],
  ]) {
    const x = await s.put(`/api/nodes/${enc(victim)}/state`, body);
    eq(`${what}: 400 invalid_parameter`, [x.status, x.json && x.json.error && x.json.error.code], [400, 'invalid_parameter']);
  }
  const arr = await s.put(`/api/nodes/${enc(victim)}/state`, []);
  const patchArr = await s.req('PATCH', `/api/nodes/${enc(victim)}`, { body: [] });
  eq('an array: 400, as PATCH /api/nodes/{name} answers one', [arr.status, arr.json && arr.json.error.code], [400, patchArr.json && patchArr.json.error.code]);
  const bad = await s.req('PUT', `/api/nodes/${enc(victim)}/state`, { body: '{"state":', headers: { 'Content-Type': 'application/json' } });
  eq('broken JSON: 400 invalid_json', [bad.status, bad.json && bad.json.error.code], [400, 'invalid_json']);
  const nf = await s.put('/api/nodes/nobody/state', { state: 'down' });
  eq('unknown node: 404 not_found', [nf.status, nf.json && nf.json.error.code], [404, 'not_found']);
  const gm = await s.get(`/api/nodes/${enc(victim)}/state`);
  eq('GET on …/state: 405', gm.status, 405);
  eq('nothing recorded by refusals', await s.lastOpId(), op.id);

  // The past, the log, revert.
  const up = await s.put(`/api/nodes/${enc(victim)}/state`, { state: 'up' });
  eq('up again: 200', up.status, 200);
  eq('up: the same keys move back', [up.json.operation.keys_moved, up.json.operation.state], [moved.length, 'up']);
  const back = await s.allKeys();
  eq('every key is served where it was', back.keys.filter((x) => old[x.key] !== x.served_by).length, 0);
  const then = await s.allKeys(`at=${op.id}`);
  eq('keys?at= the down operation: as they were then', then.keys.map((x) => [x.key, x.node, x.served_by]), during.keys.map((x) => [x.key, x.node, x.served_by]));
  const nodesThen = await s.ok(`/api/nodes?at=${op.id}`);
  eq('nodes?at=: the node was down', nodesThen.nodes.find((n) => n.name === victim).state, 'down');
  const rv = await s.post('/api/revert', { to: op.id });
  eq('revert to the down operation: 200', rv.status, 200);
  const rk = await s.allKeys();
  eq('after revert the keys are served as then', rk.keys.map((x) => x.served_by), during.keys.map((x) => x.served_by));
  eq('and the node is down', (await s.ok(`/api/nodes/${enc(victim)}`)).state, 'down');

  // The command line on the same database, while the server runs.
  const cli = spawnSync(BIN, ['--db', s.db, '--json', 'node', 'up', victim], { encoding: 'utf8' });
  eq('ringsim node up NAME: exit 0', cli.status, 0);
  const cj = JSON.parse(cli.stdout || '{}');
  eq('its JSON: the node up, a set_state operation', [cj.node && cj.node.state, cj.operation && cj.operation.type], ['up', 'set_state']);
  const cli2 = spawnSync(BIN, ['--db', s.db, 'node', 'up', victim], { encoding: 'utf8' });
  check('node up twice: exit 0, "nothing changed"', cli2.status === 0 && /nothing changed/.test(cli2.stdout), cli2.stdout + cli2.stderr);
  const cli3 = spawnSync(BIN, ['--db', s.db, 'node', 'down', 'nobody'], { encoding: 'utf8' });
  check('node down of an unknown node: exit 1, one line', cli3.status === 1 && cli3.stderr.trim().split('\n').length === 1, cli3.stderr);
  const ls = spawnSync(BIN, ['--db', s.db, 'node', 'ls'], { encoding: 'utf8' });
  check('node ls shows a State column', /State/.test(ls.stdout.split('\n')[0]) && / up\n/.test(ls.stdout), ls.stdout);
  const chk = spawnSync(BIN, ['--db', s.db, 'check'], { encoding: 'utf8' });
  eq('ringsim check passes', chk.status, 0);
}

// Redis: a master with a replica fails over (served_by the replica, no key
// moves); one without leaves its slots unserved (served_by null, counted).
// Cassandra: nobody serves a key whose replicas are all down.
async function otherRules(s) {
  eq('redis', (await s.put('/api/config', { algorithm: 'redis' })).status, 200);
  for (const n of ['10.0.0.1:6379', '10.0.0.2:6379', '10.0.0.3:6379']) eq(`add ${n}`, (await s.post('/api/nodes', { name: n })).status, 201);
  eq('generate 2000', (await s.post('/api/keys', { generate: { count: 2000 } })).status, 201);
  const before = await s.allKeys();
  const r = await s.put(`/api/nodes/${enc('10.0.0.2:6379')}/state`, { state: 'down' });
  eq('down: 200', r.status, 200);
  const lost = before.keys.filter((k) => k.node === '10.0.0.2:6379').length;
  eq('its keys are unserved: keys_moved, moved_from', [r.json.operation.keys_moved, r.json.operation.moved_from], [lost, [{ node: '10.0.0.2:6379', keys: lost }]]);
  const after = await s.allKeys();
  const mine = after.keys.filter((k) => k.node === '10.0.0.2:6379');
  eq('they keep their owner and have served_by null', [mine.length, mine.filter((k) => k.served_by === null).length], [lost, lost]);
  eq('stats count them as unserved', (await s.ok('/api/stats')).unserved, lost);
  const nodes = await s.ok('/api/nodes');
  eq('nodes answer their state', nodes.nodes.map((n) => [n.name, n.state]).sort(), [['10.0.0.1:6379', 'up'], ['10.0.0.2:6379', 'down'], ['10.0.0.3:6379', 'up']]);

  const t = await s.put('/api/config', { algorithm: 'cassandra', replicas: 2, params: { num_tokens: 4 } });
  eq('cassandra, 2 replicas', t.status, 200);
  await s.put(`/api/nodes/${enc('10.0.0.3:6379')}/state`, { state: 'down' });
  const ck = await s.allKeys();
  const none = ck.keys.filter((k) => k.served_by === null);
  check('a key whose two replicas are down is served by nobody', none.length > 0 && none.every((k) => k.replicas.every((x) => x !== '10.0.0.1:6379')), String(none.length));
  const some = ck.keys.filter((k) => k.served_by !== null);
  eq('the others are served by their first up replica', some.filter((k) => k.served_by !== k.replicas.find((x) => x === '10.0.0.1:6379')).length, 0);
  const pr = await s.post('/api/preview', { op: 'set_state', name: '10.0.0.3:6379', state: 'sideways' });
  eq('preview with a bad state: 400', pr.status, 400);
  // A state the node has already: a preview that moves nothing, never a 500.
  const same = await s.post('/api/preview', { op: 'set_state', name: '10.0.0.3:6379', state: 'down' });
  eq('preview of the state a node has: 200, nothing moves', [same.status, same.json?.keys_moved, same.json?.moved_from, same.json?.before?.nodes === same.json?.after?.nodes], [200, 0, {}, true]);
  const p2 = await s.post('/api/preview', { op: 'set_state', name: 'nobody', state: 'up' });
  eq('preview of an unknown node: 404', p2.status, 404);
}

// Scenario files take the command line's words: node down / node up, and
// the export writes them back.
async function scenarios(s) {
  const text = 'node add a\nnode add b\nnode add c --down\nkey gen 500\nnode down b\nexpect keys_moved > 0\nnode down b\nnode up b\nnode up c\n';
  const r = await s.post('/api/scenarios/run', { text });
  eq('a scenario with node down/up runs', [r.status, r.json && r.json.ok], [200, true]);
  const steps = r.json.steps.filter((x) => x.operation !== undefined);
  eq('node down b twice: the second records nothing', steps.map((x) => x.operation && x.operation.type), ['add_node', 'add_node', 'add_node', 'insert_keys', 'set_state', null, 'set_state', 'set_state']);
  const ex = await s.get('/api/export/scenario');
  check('the export writes node add --down and node down/up', /node add --down c/.test(ex.text) && /^node down b$/m.test(ex.text) && /^node up b$/m.test(ex.text) && /^node up c$/m.test(ex.text), ex.text);
}

async function main() {
  await withServer('states ring', ringStates);
  await withServer('states redis cassandra', otherRules);
  await withServer('states scenarios', scenarios);
  setGroup('all');
  finish();
}

main().catch(crashed);
