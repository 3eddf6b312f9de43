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

async function main() {
  await withServer('location model', model);
  setGroup('all');
  finish();
}

main().catch(crashed);
