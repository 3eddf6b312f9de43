// tests/api_location_test.mjs - failure domains over HTTP (API.md "Version
// 4: failure domains"): a node's "location" given at POST /api/nodes,
// changed by PATCH /api/nodes/{name} as one set_location operation, [] for
// none, refused by the rules (names without = or ,, a type once) with
// 400 and nothing done; kept by ?at=, revert, the scenario export and its
// run, and the command line on the same database.
//
//   node tests/api_location_test.mjs /path/to/ringsim
//
// Expected values are API.md's, written here.  Ends with "N passed, N
// failed".

import { spawnSync } from 'node:child_process';
import { setGroup, finish, crashed, check, eq, withServer, enc, sleep, BIN, WEIRD } from './lib/harness.mjs';

const L1 = [['dc', 'dc1'], ['rack', 'r1'], ['host', 'h1']];
const L2 = [['dc', 'dc2'], ['rack', WEIRD[0]]];

async function model(s) {
  let r = await s.post('/api/nodes', { name: 'a', location: L1 });
  eq('POST with a location: 201', r.status, 201);
  eq('the node answers its location', r.json?.node?.location, L1);
  eq('the operation is an add_node', r.json?.operation?.type, 'add_node');
  r = await s.post('/api/nodes', { name: WEIRD[5] });
  eq('a node without one answers []', r.json?.node?.location, []);
  const before = await s.lastOpId();
  const bad = [
    [{ name: 'x', location: [['dc', 'a'], ['dc', 'b']] }, 400, 'invalid_parameter', 'a type twice'],
    [{ name: 'x', location: [['dc', 'a=b']] }, 400, 'invalid_name', 'a name with ='],
    [{ name: 'x', location: [['d,c', 'a']] }, 400, 'invalid_name', 'a type with ,'],
    [{ name: 'x', location: [['dc', '']] }, 400, 'invalid_name', 'an empty name'],
    [{ name: 'x', location: [['dc', 'a\u0001']] }, 400, 'invalid_name', 'a control character'],
    [{ name: 'x', location: [['dc', 'x'.repeat(256)]] }, 400, 'invalid_name', 'a 256-byte name'],
    [{ name: 'x', location: 'dc=dc1' }, 400, 'invalid_parameter', 'a string'],
    [{ name: 'x', location: [['dc']] }, 400, 'invalid_parameter', 'a pair of one'],
    [{ name: 'x', location: [['dc', 1]] }, 400, 'invalid_parameter', 'a number'],
    [{ name: 'x', location: Array.from({ length: 17 }, (_, i) => [`t${i}`, 'n']) }, 400, 'invalid_parameter', '17 levels'],
  ];
  for (const [body, status, code, what] of bad) {
    const b = await s.post('/api/nodes', body);
    eq(`POST refuses ${what}: ${status} ${code}`, [b.status, b.json?.error?.code], [status, code]);
    check(`  ... with a message`, typeof b.json?.error?.message === 'string' && b.json.error.message.length > 10, b.json);
  }
  eq('nothing was recorded by the refusals', await s.lastOpId(), before);
  eq('no node x', (await s.get('/api/nodes/x')).status, 404);

  // PATCH: one set_location operation; the same again records nothing.
  r = await s.req('PATCH', `/api/nodes/${enc(WEIRD[5])}`, { body: { location: L2 } });
  eq('PATCH location: 200', r.status, 200);
  eq('one set_location operation about the node', [r.json?.operation?.id, r.json?.operation?.type, r.json?.operation?.subject], [before + 1, 'set_location', WEIRD[5]]);
  eq('the node answers the new location', r.json?.node?.location, L2);
  r = await s.req('PATCH', `/api/nodes/${enc(WEIRD[5])}`, { body: { location: L2 } });
  eq('PATCH the same location: operation null', [r.status, r.json?.operation], [200, null]);
  r = await s.req('PATCH', '/api/nodes/a', { body: { location: [] } });
  eq('PATCH [] clears it', [r.status, r.json?.node?.location, r.json?.operation?.type], [200, [], 'set_location']);
  r = await s.req('PATCH', '/api/nodes/a', { body: { location: L1, weight: 2 } });
  eq('PATCH weight and location together: 400', [r.status, r.json?.error?.code], [400, 'invalid_parameter']);
  r = await s.req('PATCH', '/api/nodes/a', { body: { location: [['rack', 'r'], ['rack', 's']] } });
  eq('PATCH a type twice: 400', [r.status, r.json?.error?.code], [400, 'invalid_parameter']);
  r = await s.req('PATCH', '/api/nodes/nobody', { body: { location: L1 } });
  eq('PATCH an unknown node: 404', r.status, 404);
  r = await s.req('PATCH', '/api/nodes/a', { body: { weight: 3 } });
  eq('PATCH weight still works', [r.status, r.json?.node?.weight], [200, 3]);
  const last = await s.lastOpId();

  // ?at= and revert keep it.
  const at1 = await s.ok('/api/nodes?at=1');
  eq('?at=1: a has its first location', at1.nodes.find((n) => n.name === 'a')?.location, L1);
  const atB = await s.ok(`/api/nodes?at=${before + 1}`);
  eq(`?at=${before + 1}: the moved node's location`, atB.nodes.find((n) => n.name === WEIRD[5])?.location, L2);
  r = await s.post('/api/revert', { to: 2 });
  eq('revert to 2: 200', r.status, 200);
  let nodes = (await s.ok('/api/nodes')).nodes;
  eq('after revert: the locations of operation 2', nodes.map((n) => [n.name, n.location]).sort(), [['a', L1], [WEIRD[5], []]].sort());
  r = await s.post('/api/revert', { to: last });
  nodes = (await s.ok('/api/nodes')).nodes;
  eq('revert forward: the later locations', nodes.map((n) => [n.name, n.location]).sort(), [['a', []], [WEIRD[5], L2]].sort());

  // The scenario export writes them; running it rebuilds them.
  const ex = await s.get('/api/export/scenario');
  check('the export writes node add … --location / node move', /--location/.test(ex.text), ex.text);
  const run = await s.post('/api/scenarios/run', { text: ex.text });
  eq('the exported scenario runs', [run.status, run.json?.ok], [200, true]);
  nodes = (await s.ok('/api/nodes')).nodes;
  eq('and gives the same locations', nodes.map((n) => [n.name, n.location]).sort(), [['a', []], [WEIRD[5], L2]].sort());

  // The command line on the same database sees and changes them.
  const cli = spawnSync(BIN, ['--db', s.db, '--json', 'node', 'move', 'a', '--location', 'dc=dc9,rack=r9'], { encoding: 'utf8' });
  eq('ringsim node move on the served database: exit 0', cli.status, 0, cli.stderr);
  eq('... answers the node with its location', JSON.parse(cli.stdout || '{}').node?.location, [['dc', 'dc9'], ['rack', 'r9']]);
  // Another process's change reaches the server (within a second, API.md):
  // wait for that state, bounded.
  let a = await s.ok('/api/nodes/a');
  for (let i = 0; i < 200 && a.location.length === 0; i++) {
    await sleep(50);
    a = await s.ok('/api/nodes/a');
  }
  eq('the server answers the location the command line set', a.location, [['dc', 'dc9'], ['rack', 'r9']]);
}

// The tree's figures recomputed here from GET /api/nodes: a domain is a
// path of pairs; it sums the nodes on it.
function expectedTree(nodes) {
  const roots = [];
  const unlocated = [];
  const served = nodes.reduce((a, n) => a + n.keys, 0);
  for (const n of nodes) {
    let level = roots;
    let d = null;
    for (const [type, name] of n.location) {
      d = level.find((x) => x.type === type && x.name === name);
      if (!d) {
        d = { type, name, nodes: 0, weight: 0, keys: 0, up: 0, down: 0, fair_share: 0, members: [], children: [] };
        level.push(d);
      }
      d.nodes++;
      d.weight += n.weight;
      d.keys += n.keys;
      d.fair_share += n.fair_share;
      d[n.state === 'down' ? 'down' : 'up']++;
      level = d.children;
    }
    (d ? d.members : unlocated).push(n.name);
  }
  const fin = (d) => {
    d.key_share = served ? d.keys / served : 0;
    d.load_over_fair = d.fair_share > 0 ? d.key_share / d.fair_share : null;
    d.children.forEach(fin);
  };
  roots.forEach(fin);
  return { locations: roots, unlocated };
}

// Only what the model computes, rounded (sums of reals).
function strip(t) {
  const r = (x) => (x === null ? null : Math.round(x * 1e9) / 1e9);
  const d = (x) => ({ type: x.type, name: x.name, nodes: x.nodes, weight: r(x.weight), keys: x.keys, up: x.up, down: x.down, fair_share: r(x.fair_share), key_share: r(x.key_share), load_over_fair: r(x.load_over_fair), members: [...x.members].sort(), children: x.children.map(d) });
  return { locations: t.locations.map(d), unlocated: [...t.unlocated].sort() };
}

async function domains(s) {
  const racks = ['r1', 'r2', WEIRD[0]];
  const names = [];
  for (let i = 0; i < 9; i++) {
    const name = `n${i}`;
    names.push(name);
    const location = [['dc', i < 6 ? 'dc1' : 'dc2'], ['rack', racks[i % 3]], ['host', `h${i}`]];
    eq(`add ${name}`, (await s.post('/api/nodes', { name, location, weight: 1 + (i % 2) })).status, 201);
  }
  eq('add a node without a location', (await s.post('/api/nodes', { name: 'lone' })).status, 201);
  eq('generate 2000 keys', (await s.post('/api/keys', { generate: { count: 2000 } })).status, 201);
  let tree = await s.ok('/api/locations');
  let nodes = (await s.ok('/api/nodes')).nodes;
  eq('GET /api/locations: the tree the nodes make', strip(tree), strip(expectedTree(nodes)));
  eq('two datacenters at the root, dc1 with three racks', [tree.locations.length, tree.locations.find((d) => d.name === 'dc1')?.children.length], [2, 3]);

  // A rack down: one set_state operation over every node in it, previewed first.
  const rack = racks[2];
  const inRack = names.filter((_, i) => i % 3 === 2);
  const before = await s.lastOpId();
  const pv = await s.post('/api/preview', { op: 'set_state', domain: ['rack', rack], state: 'down' });
  eq('preview of a domain down: 200', pv.status, 200);
  eq('the preview recorded nothing', await s.lastOpId(), before);
  const pvBad = await s.post('/api/preview', { op: 'set_state', domain: ['rack'], state: 'down' });
  eq('preview of a domain that is not a pair: 400', pvBad.status, 400);
  const r = await s.put(`/api/locations/rack/${enc(rack)}/state`, { state: 'down' });
  eq('PUT /api/locations/rack/{name}/state down: 200', r.status, 200);
  eq('one set_state operation about the domain', [r.json?.operation?.id, r.json?.operation?.type, r.json?.operation?.subject, r.json?.operation?.domain], [before + 1, 'set_state', `rack=${rack}`, ['rack', rack]]);
  eq('the preview said what the operation did', pv.json?.keys_moved, r.json?.operation?.keys_moved);
  check('keys moved', r.json?.operation?.keys_moved > 0, r.json?.operation);
  nodes = (await s.ok('/api/nodes')).nodes;
  eq('every node of the rack is down, no other', nodes.filter((n) => n.state === 'down').map((n) => n.name).sort(), inRack.sort());
  tree = await s.ok('/api/locations');
  eq('the tree after: the nodes summed again', strip(tree), strip(expectedTree(nodes)));
  eq('the answer carries the tree', strip({ locations: r.json.locations, unlocated: tree.unlocated }), strip(tree));
  const again = await s.put(`/api/locations/rack/${enc(rack)}/state`, { state: 'down' });
  eq('the same again: operation null, nothing recorded', [again.status, again.json?.operation, await s.lastOpId()], [200, null, before + 1]);
  const dc2 = await s.put('/api/locations/dc/dc2/state', { state: 'down' });
  eq('dc2 down: one operation', [dc2.status, dc2.json?.operation?.type], [200, 'set_state']);
  eq('dc2 down: its nodes, the rack still down', (await s.ok('/api/nodes')).nodes.filter((n) => n.state === 'down').map((n) => n.name).sort(), [...new Set([...inRack, 'n6', 'n7', 'n8'])].sort());
  const up = await s.put(`/api/locations/rack/${enc(rack)}/state`, { state: 'up' });
  eq('the rack up again', up.status, 200);
  eq('... n8 (dc2) is up with it: a domain is every node in it', (await s.ok('/api/nodes/n8')).state, 'up');

  const refusals = [
    ['/api/locations/rack/nowhere/state', { state: 'down' }, 404, 'not_found', 'a domain without nodes'],
    ['/api/locations/rack/r1/state', { state: 'sideways' }, 400, 'invalid_parameter', 'a bad state'],
    ['/api/locations/rack/r1/state', { state: 'down', extra: 1 }, 400, 'invalid_parameter', 'another member'],
    [`/api/locations/rack/${enc('a=b')}/state`, { state: 'down' }, 400, 'invalid_name', 'a name with ='],
    ['/api/locations/rack/%01/state', { state: 'down' }, 400, 'invalid_name', 'a control character'],
  ];
  const last = await s.lastOpId();
  for (const [p, body, status, code, what] of refusals) {
    const x = await s.put(p, body);
    eq(`PUT ${what}: ${status} ${code}`, [x.status, x.json?.error?.code], [status, code]);
  }
  eq('GET on the state path: 405', (await s.get('/api/locations/rack/r1/state')).status, 405);
  eq('nothing recorded by the refusals', await s.lastOpId(), last);

  // History keeps it: ?at= before the rack went down, and the replay.
  const atB = await s.ok(`/api/locations?at=${before}`);
  eq(`?at=${before}: nothing down`, atB.locations.reduce((a, d) => a + d.down, 0), 0);
  const ex = await s.get('/api/export/scenario');
  check('the export writes node down --location', ex.text.includes(`node down --location`), ex.text);
  const cli = spawnSync(BIN, ['--db', s.db, 'check'], { encoding: 'utf8' });
  eq('ringsim check replays the domain operations', cli.status, 0, cli.stdout + cli.stderr);
}

// NetworkTopologyStrategy's configuration over HTTP (its placement is
// tests/ref/nts_ref.py's, against the Python driver and Cassandra 4.x).
async function nts(s) {
  const before = await s.lastOpId();
  const bad = [
    [{ algorithm: 'cassandra', params: { strategy: 'network_topology' } }, 'no replication'],
    [{ algorithm: 'cassandra', params: { strategy: 'network_topology', replication: { dc1: 9, dc2: 9 } } }, 'more than 16 in all'],
    [{ algorithm: 'cassandra', params: { strategy: 'network_topology', replication: { dc1: 3 } }, replicas: 2 }, 'replicas other than the sum'],
    [{ algorithm: 'cassandra', params: { strategy: 'network_topology', replication: { dc1: 'three' } } }, 'a factor that is not a number'],
    [{ algorithm: 'cassandra', params: { strategy: 'network_topology', replication: [['dc1', 3]] } }, 'a list'],
    [{ algorithm: 'cassandra', params: { strategy: 'network_topology', replication: { 'd\u0001': 1 } } }, 'a control character in a name'],
    [{ algorithm: 'ring', params: { replication: { dc1: 1 } } }, 'replication under ring'],
  ];
  for (const [body, what] of bad) {
    const r = await s.put('/api/config', body);
    eq(`PUT /api/config refuses ${what}: 400`, [r.status, r.json?.error?.code === 'invalid_parameter' || r.json?.error?.code === 'invalid_name'], [400, true]);
  }
  eq('nothing recorded by the refusals', await s.lastOpId(), before);
  let r = await s.put('/api/config', { algorithm: 'cassandra', params: { num_tokens: 8, strategy: 'network_topology', replication: { dc1: 2, 'dc 2': 1 } } });
  eq('PUT network_topology: 200, replicas the sum', [r.status, r.json?.config?.replicas, r.json?.config?.params?.strategy, r.json?.config?.params?.replication], [200, 3, 'network_topology', { dc1: 2, 'dc 2': 1 }]);
  for (let i = 0; i < 6; i++) {
    const loc = [['dc', i < 4 ? 'dc1' : 'dc 2'], ['rack', `r${i % 2}`]];
    eq(`add n${i}`, (await s.post('/api/nodes', { name: `n${i}`, location: loc })).status, 201);
  }
  const lk = await s.ok('/api/lookup?key=hello');
  eq('a key has 3 replicas, 2 in dc1 on two racks, 1 in dc 2', [lk.replicas.length, lk.replicas.filter((n) => Number(n.slice(1)) < 4).length, new Set(lk.replicas.filter((n) => Number(n.slice(1)) < 4).map((n) => Number(n.slice(1)) % 2)).size], [3, 2, 2]);
  const steps = lk.trace.map((t) => t.step);
  check('lookup traces NetworkTopologyStrategy and both drivers', steps.includes('replicas') && steps.includes('python-driver') && steps.includes('nodejs-driver'), steps);
  // A node down: the first up node of NetworkTopologyStrategy's list serves.
  eq('n1 down', (await s.put('/api/nodes/n1/state', { state: 'down' })).status, 200);
  let wrongServer = 0;
  for (let k = 0; k < 200; k++) {
    const x = await s.ok(`/api/lookup?key=key-${k}`);
    const want = x.replicas.find((n) => n !== 'n1') ?? null;
    if (x.served_by !== want) wrongServer++;
  }
  eq('200 keys: served by the first up replica of their NTS list', wrongServer, 0);
  eq('n1 up', (await s.put('/api/nodes/n1/state', { state: 'up' })).status, 200);
  // Moving a node to another rack is a change of topology: replicas follow.
  const op = (await s.req('PATCH', '/api/nodes/n0', { body: { location: [['dc', 'dc 2'], ['rack', 'r9']] } })).json?.operation;
  eq('set_location under network_topology: an operation', op?.type, 'set_location');
  const cfgAt = await s.ok(`/api/config?at=${before + 1}`);
  eq('check after the NTS operations', spawnSync(BIN, ['--db', s.db, 'check'], { encoding: 'utf8' }).status, 0);
  eq('?at= keeps the replication map', cfgAt.params?.replication, { dc1: 2, 'dc 2': 1 });
  r = await s.put('/api/config', { params: { strategy: 'simple' } });
  eq('back to simple: the map is not answered', [r.status, r.json?.config?.params?.replication], [200, undefined]);
  r = await s.post('/api/revert', { to: before + 1 });
  eq('revert brings network_topology back', (await s.ok('/api/config')).params?.replication, { dc1: 2, 'dc 2': 1 });
  const ex = await s.get('/api/export/scenario');
  check('the export writes --param replication', /--param 'replication=dc1:2,dc 2:1'/.test(ex.text), ex.text);
  const run = await s.post('/api/scenarios/run', { text: ex.text });
  eq('the exported scenario runs back', [run.status, run.json?.ok], [200, true]);
  eq('... to the same configuration', (await s.ok('/api/config')).params?.replication, { dc1: 2, 'dc 2': 1 });
}

// replica_domain: the walk skips nodes whose domain holds a replica; the
// ring's expected replicas recomputed from GET /api/ring's points.
async function replicaDomain(s) {
  let r = await s.put('/api/config', { points_per_node: 8, replicas: 3, params: { replica_domain: 'rack' } });
  eq('PUT replica_domain: 200, answered', [r.status, r.json?.config?.params?.replica_domain], [200, 'rack']);
  const rackOf = {};
  for (let i = 0; i < 8; i++) {
    const name = `n${i}`;
    rackOf[name] = i < 7 ? `r${i % 3}` : null; // n7 has no rack: its own domain
    const location = rackOf[name] ? [['dc', 'd'], ['rack', rackOf[name]]] : [];
    eq(`add ${name}`, (await s.post('/api/nodes', { name, location })).status, 201);
  }
  const pts = (await s.ok('/api/ring')).points;
  let wrong = 0;
  let n = 0;
  for (let k = 0; k < 300; k++) {
    const lk = await s.ok(`/api/lookup?key=key-${k}`);
    const start = pts.findIndex((p) => p.position === lk.point.position && p.node === lk.point.node && p.index === lk.point.index);
    const want = [];
    const racks = new Set();
    for (let j = 0; j < pts.length && want.length < 3; j++) {
      const nd = pts[(start + j) % pts.length].node;
      if (want.includes(nd) || (rackOf[nd] && racks.has(rackOf[nd]))) continue;
      want.push(nd);
      if (rackOf[nd]) racks.add(rackOf[nd]);
    }
    n++;
    if (JSON.stringify(lk.replicas) !== JSON.stringify(want)) wrong++;
  }
  eq(`ring: ${n} keys' replicas are the walk that skips used racks`, wrong, 0);
  r = await s.put('/api/config', { algorithm: 'rendezvous' });
  eq('rendezvous keeps replica_domain', (await s.ok('/api/config')).params?.replica_domain, 'rack');
  let bad = 0;
  for (let k = 0; k < 200; k++) {
    const lk = await s.ok(`/api/lookup?key=key-${k}`);
    const rs = lk.replicas.map((x) => rackOf[x]).filter((x) => x);
    if (lk.replicas[0] !== lk.node || new Set(rs).size !== rs.length || lk.replicas.length !== 3) bad++;
  }
  eq('rendezvous: 3 replicas, the owner first, no rack twice', bad, 0);
  const refused = await s.put('/api/config', { params: { replica_domain: 'a=b' } });
  eq('replica_domain with = refused', [refused.status, refused.json?.error?.code], [400, 'invalid_name']);
  r = await s.put('/api/config', { params: { replica_domain: '' } });
  eq('"" turns it off', [r.status, r.json?.config?.params?.replica_domain], [200, undefined]);
}

// java.util.Properties.load's reading of a value (ISO 8859-1, \uXXXX,
// \c for c), written here to read the export back.
function propertyValue(v) {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] !== '\\') out += v[i];
    else if (v[i + 1] === 'u') {
      out += String.fromCharCode(parseInt(v.slice(i + 2, i + 6), 16));
      i += 5;
    } else out += v[++i];
  }
  return out;
}

const RING = `Datacenter: dc1
==========
Address         Rack        Status State   Load            Owns                Token
                                                                               3000000000000000000
10.0.0.1        rack1       Up     Normal  1.2 MiB         33.33%              -9000000000000000000
10.0.0.2        rack2       Up     Normal  1.1 MiB         33.33%              -3000000000000000000
10.0.0.3        rack1       Up     Normal  1.3 MiB         33.33%              3000000000000000000

Datacenter: dc 2
==========
Address         Rack        Status State   Load            Owns                Token
                                                                               7000000000000000000
10.1.0.1        r1          Up     Normal  1.2 MiB         50.00%              -6000000000000000000
10.1.0.2        r2          Down   Normal  1.1 MiB         50.00%              7000000000000000000
`;
const STATUS = `Datacenter: dc1
===============
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address   Load       Tokens  Owns (effective)  Host ID                               Rack
UN  10.0.0.1  1.2 MiB    1       66.7%             6f7a1a40-4a2b-4b1a-9b9a-1d2c3e4f5a6b  rackA
UN  10.0.0.2  1.1 MiB    1       66.7%             7f7a1a40-4a2b-4b1a-9b9a-1d2c3e4f5a6b  rack2
`;

async function importExport(s) {
  const locs = async () => Object.fromEntries((await s.ok('/api/nodes')).nodes.map((n) => [n.name, n.location]));
  let r = await s.post('/api/import', { format: 'nodetool-ring', text: RING });
  eq('import nodetool ring: 201', r.status, 201);
  let l = await locs();
  eq('each node keeps its datacenter and rack', [l['10.0.0.2'], l['10.1.0.1']], [[['dc', 'dc1'], ['rack', 'rack2']], [['dc', 'dc 2'], ['rack', 'r1']]]);
  for (const [what, text] of [['status first', STATUS + '\n' + RING], ['status after', RING + '\n' + STATUS]]) {
    r = await s.post('/api/import', { format: 'nodetool-ring', text });
    eq(`ring and status (${what}): 201`, r.status, 201);
    l = await locs();
    eq(`  the racks come from the status (${what})`, [l['10.0.0.1'], l['10.0.0.3']], [[['dc', 'dc1'], ['rack', 'rackA']], [['dc', 'dc1'], ['rack', 'rack1']]]);
    check(`  the disagreement is noted (${what})`, JSON.stringify(r.json).includes('rackA in the status'), JSON.stringify(r.json).slice(0, 400));
  }
  for (const format of ['nodetool-ring', 'auto']) {
    r = await s.post('/api/import', { format, text: STATUS });
    eq(`status alone (${format}): 400, saying it has no tokens`, [r.status, /no tokens/.test(r.json?.error?.message ?? '')], [400, true]);
  }
  // export: each node's cassandra-rackdc.properties, escaped, read back
  const weird = ' r\u2028x y#!\\:é😀';
  r = await s.req('PATCH', '/api/nodes/10.0.0.3', { body: { location: [['dc', 'dc1'], ['rack', weird]] } });
  eq('a rack with U+2028, a leading space and marks', r.status, 200);
  const ex = await s.get('/api/export/config?format=cassandra');
  eq('export cassandra: 200', ex.status, 200);
  check('  pure ASCII (no line break a YAML comment would end at)', /^[\x20-\x7e\n]*$/.test(ex.text), ex.text);
  const props = [...ex.text.matchAll(/^# cassandra-rackdc\.properties:\n# {3}dc=(.*)\n# {3}rack=(.*)$/gm)].map((m) => [propertyValue(m[1]), propertyValue(m[2])]);
  eq('  one dc= and rack= a node', props.length, 5);
  check('  the weird rack reads back as itself', props.some((p) => p[1] === weird), props);
  check('  dc 2 reads back', props.some((p) => p[0] === 'dc 2' && p[1] === 'r2'), props);
  // nodetool-ring export: one section a datacenter, imported back the same
  r = await s.req('PATCH', '/api/nodes/10.0.0.3', { body: { location: [['dc', 'dc1'], ['rack', 'rack1']] } });
  const before = await locs();
  const nt = await s.get('/api/export/config?format=nodetool-ring');
  check('export nodetool-ring: a section per datacenter', /Datacenter: dc1/.test(nt.text) && /Datacenter: dc 2/.test(nt.text), nt.text);
  r = await s.post('/api/import', { format: 'nodetool-ring', text: nt.text });
  eq('... imported back: the same locations', [r.status, await locs()], [201, before]);
}

async function main() {
  await withServer('location model', model);
  await withServer('domains', domains);
  await withServer('network topology', nts);
  await withServer('replica domain', replicaDomain);
  await withServer('import export', importExport);
  setGroup('all');
  finish();
}

main().catch(crashed);
