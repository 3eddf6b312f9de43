// tests/api_reweight_test.mjs - Ceph's `osd reweight` over HTTP (API.md
// "Version 4: Ceph CRUSH"): PATCH /api/nodes/{name} {"reweight"} as one
// set_reweight operation answering pgs_remapped and pg_shards_moved, the
// node answering "reweight" (16.16), the same again recording nothing,
// the refusals (400, nothing done), ?at= and revert keeping it, previews
// answering the PGs, and GET /api/pgs leaving an out OSD out.
//
//   node tests/api_reweight_test.mjs /path/to/ringsim
//
// Expected values are API.md's, written here.  Ends with "N passed, N
// failed".

import { setGroup, finish, crashed, check, eq, withServer } from './lib/harness.mjs';

async function model(s) {
  let r = await s.put('/api/config', { algorithm: 'ceph', params: { pg_num: 32 }, replicas: 3 });
  eq('config ceph: 200', r.status, 200);
  for (let i = 0; i < 4; i++) {
    r = await s.post('/api/nodes', { name: `osd.${i}`, weight: 1, location: [['host', `h${i}`]] });
    eq(`osd.${i} added`, r.status, 201);
  }
  eq('a node answers reweight 1', (await s.ok('/api/nodes/osd.1')).reweight, 1);
  const before = await s.lastOpId();
  const pgs0 = (await s.ok('/api/pgs?limit=32')).pgs;

  r = await s.req('PATCH', '/api/nodes/osd.1', { body: { reweight: 0 } });
  eq('PATCH reweight 0: 200, one set_reweight operation', [r.status, r.json?.operation?.id, r.json?.operation?.type, r.json?.operation?.subject], [200, before + 1, 'set_reweight', 'osd.1']);
  eq('the node answers reweight 0 and no PG', [r.json?.node?.reweight, r.json?.node?.pgs], [0, 0]);
  const pgs1 = (await s.ok('/api/pgs?limit=32')).pgs;
  check('no up set holds the out OSD', pgs1.every((p) => !p.up.includes(1)), pgs1);
  let remapped = 0;
  let shards = 0;
  for (let i = 0; i < 32; i++) {
    const a = pgs0[i].up;
    const b = pgs1[i].up;
    let n = 0;
    for (let k = 0; k < Math.max(a.length, b.length); k++) n += (a[k] ?? null) !== (b[k] ?? null);
    remapped += n > 0;
    shards += n;
  }
  check('PGs remapped: some', remapped > 0, remapped);
  eq('pgs_remapped and pg_shards_moved: the difference of the up sets', [r.json?.operation?.pgs_remapped, r.json?.operation?.pg_shards_moved], [remapped, shards]);
  r = await s.req('PATCH', '/api/nodes/osd.1', { body: { reweight: 0 } });
  eq('the same reweight: operation null', [r.status, r.json?.operation], [200, null]);
  r = await s.req('PATCH', '/api/nodes/osd.2', { body: { reweight: 0.8 } });
  eq('reweight 0.8 answers 16.16', [r.status, r.json?.node?.reweight], [200, 0.79998779296875]);
  const last = await s.lastOpId();
  for (const [body, what] of [[{ reweight: 1.5 }, 'above 1'], [{ reweight: -0.5 }, 'below 0'], [{ reweight: '0.5' }, 'a string'], [{ reweight: null }, 'null'], [{ reweight: 0.5, weight: 2 }, 'with weight']]) {
    r = await s.req('PATCH', '/api/nodes/osd.3', { body });
    eq(`PATCH refuses ${what}: 400 invalid_parameter`, [r.status, r.json?.error?.code], [400, 'invalid_parameter']);
  }
  r = await s.req('PATCH', '/api/nodes/osd.9', { body: { reweight: 0.5 } });
  eq('PATCH an unknown node: 404', r.status, 404);
  eq('nothing recorded by the refusals', await s.lastOpId(), last);
  const ops = (await s.ok('/api/operations')).operations;
  const op = ops.find((o) => o.id === before + 1);
  eq('the log answers pgs_remapped too', [op?.pgs_remapped, op?.pg_shards_moved], [remapped, shards]);

  // ?at= and revert keep it
  const atB = await s.ok(`/api/nodes?at=${before}`);
  eq(`?at=${before}: osd.1 in`, atB.nodes.find((n) => n.name === 'osd.1')?.reweight, 1);
  const atO = await s.ok(`/api/nodes?at=${before + 1}`);
  eq(`?at=${before + 1}: osd.1 out`, atO.nodes.find((n) => n.name === 'osd.1')?.reweight, 0);
  r = await s.post('/api/revert', { to: before });
  eq('revert: 200', r.status, 200);
  eq('after revert osd.1 is in again', (await s.ok('/api/nodes/osd.1')).reweight, 1);
  eq('and the PGs are as before', (await s.ok('/api/pgs?limit=32')).pgs.map((p) => p.up), pgs0.map((p) => p.up));

  // previews answer the PGs
  r = await s.post('/api/preview', { op: 'remove_node', name: 'osd.3' });
  check('a preview answers pgs_remapped', r.status === 200 && r.json?.pgs_remapped > 0 && r.json?.pg_shards_moved >= r.json?.pgs_remapped, r.json);

  // a reweight previewed: what PATCH then does, nothing recorded
  const n0 = await s.lastOpId();
  const pv = await s.post('/api/preview', { op: 'set_reweight', name: 'osd.0', reweight: 0 });
  eq('preview set_reweight: 200, nothing recorded', [pv.status, await s.lastOpId()], [200, n0]);
  r = await s.req('PATCH', '/api/nodes/osd.0', { body: { reweight: 0 } });
  eq('the preview said what the operation did', [pv.json?.keys_moved, pv.json?.pgs_remapped, pv.json?.pg_shards_moved], [r.json?.operation?.keys_moved, r.json?.operation?.pgs_remapped, r.json?.operation?.pg_shards_moved]);
  r = await s.post('/api/preview', { op: 'set_reweight', name: 'osd.0', reweight: 2 });
  eq('preview set_reweight 2: 400', [r.status, r.json?.error?.code], [400, 'invalid_parameter']);

  // under another algorithm: refused
  r = await s.put('/api/config', { algorithm: 'ring' });
  eq('config ring: 200', r.status, 200);
  r = await s.req('PATCH', '/api/nodes/osd.1', { body: { reweight: 0.5 } });
  eq('reweight under ring: 400 invalid_parameter', [r.status, r.json?.error?.code], [400, 'invalid_parameter']);
}

async function main() {
  await withServer('reweight model', model);
  setGroup('all');
  finish();
}

main().catch(crashed);
