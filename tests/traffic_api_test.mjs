// tests/traffic_api_test.mjs - POST /api/traffic/run and `ringsim traffic
// run` (docs/api.md "Traffic"), end to end on a real server:
//   - the answer's shape, with node names that must survive JSON (Unicode,
//     spaces, / % # ? " <), in the order of GET /api/nodes;
//   - counts that add up (handled = requests; a node's sent_away against
//     the others' handled), the same seed the same answer, another seed
//     another one; the command line's --json is the API's answer;
//   - with the factor 0 every request stays at its key's node and the
//     handled shares are the key shares (uniform workload) within 5 sigma;
//   - each rule's factor validation (HAProxy > 100, Envoy >= 100, ring's
//     balance_factor > 100), a factor on an algorithm without bounded loads,
//     bad values of every field: 400 invalid_parameter and nothing recorded;
//     GET is 405, another path 404;
//   - a replay whose client leaves is stopped: the reading worker answers
//     the next request at once.
// Ends with "N passed, N failed".
//
// Checks docs/api.md, 'Traffic', 'POST /api/traffic/run'.

import { execFileSync } from 'node:child_process';
import net from 'node:net';

import { BIN, setGroup, finish, crashed, check, eq, withServer, WEIRD, sleep } from './lib/harness.mjs';

const run = (s, body) => s.post('/api/traffic/run', body);

async function shape(s) {
  const names = WEIRD.slice(0, 8);
  for (const name of names) eq(`add ${JSON.stringify(name)}`, (await s.post('/api/nodes', { name })).status, 201);
  eq('generate 4000', (await s.post('/api/keys', { generate: { count: 4000 } })).status, 201);
  const ops = await s.lastOpId();
  const body = { requests: 200000, concurrency: 40, seed: 3 };
  const r = await run(s, body);
  eq('POST /api/traffic/run: 200', r.status, 200);
  const j = r.json;
  for (const f of ['requests', 'concurrency', 'seed', 'nodes', 'requests_max_over_mean', 'peak_in_flight_max_over_mean', 'sent_away', 'probes_per_request']) {
    check(`answer has ${f}`, j && f in j, r.text.slice(0, 200));
  }
  eq('requests, concurrency and seed as asked', [j.requests, j.concurrency, j.seed], [200000, 40, 3]);
  const nodes = (await s.ok('/api/nodes')).nodes;
  eq('nodes in the order of GET /api/nodes, names intact', j.nodes.map((n) => n.name), nodes.map((n) => n.name));
  for (const n of j.nodes) eq(`node fields of ${JSON.stringify(n.name)}`, Object.keys(n).sort(), ['fair_share', 'handled', 'load_over_fair', 'name', 'peak_in_flight', 'sent_away']);
  eq('handled adds up to the requests', j.nodes.reduce((a, n) => a + n.handled, 0), 200000);
  eq('ring without balance_factor: nothing sent away', [j.sent_away, j.probes_per_request, j.rule], [0, 1, 'none']);
  // factor 0: handled share ~ the node's share of requests (the workload's
  // "requests" once workloads exist; with the uniform one, its key share)
  for (const n of j.nodes) {
    const node = nodes.find((x) => x.name === n.name);
    const p = typeof node.requests === 'number' ? node.requests : node.key_share;
    const sd = Math.sqrt((p * (1 - p)) / 200000);
    check(`${JSON.stringify(n.name)}: handled share ${n.handled / 200000} near key share ${p}`, Math.abs(n.handled / 200000 - p) <= 5 * sd + 1e-12);
  }
  const max = Math.max(...j.nodes.map((n) => n.handled));
  check('requests_max_over_mean is max / mean', Math.abs(j.requests_max_over_mean - max / (200000 / nodes.length)) < 1e-9);
  const again = await run(s, body);
  eq('the same seed gives the same answer', again.json, j);
  const other = await run(s, { ...body, seed: 4 });
  check('another seed another answer', JSON.stringify(other.json.nodes) !== JSON.stringify(j.nodes));
  // the command line answers the same JSON
  const cli = JSON.parse(execFileSync(BIN, ['--db', s.db, '--json', 'traffic', 'run', '--requests', '200000', '--concurrency', '40', '--seed', '3']).toString());
  eq('ringsim --json traffic run is the API answer', cli, j);
  // with balance_factor on ring (MTZ)
  const b = await run(s, { ...body, factor: 125 });
  eq('factor 125 on ring: the MTZ rule', [b.status, b.json.rule, b.json.factor], [200, 'mtz', 125]);
  check('some requests sent away', b.json.sent_away > 0 && b.json.probes_per_request > 1);
  check('the peak in flight is flatter', b.json.peak_in_flight_max_over_mean < j.peak_in_flight_max_over_mean);
  // sent_away per node: requests for its keys served elsewhere
  const shareOf = (name) => {
    const node = nodes.find((x) => x.name === name);
    return typeof node.requests === 'number' ? node.requests : node.key_share;
  };
  const awayTotal = b.json.nodes.reduce((a, n) => a + n.sent_away * shareOf(n.name), 0);
  check('nodes\' sent_away weighted by their keys is about the total', Math.abs(awayTotal - b.json.sent_away) < 0.02, `${awayTotal} vs ${b.json.sent_away}`);
  const t = await run(s, { ...body, requests: 5000, samples: 50 });
  eq('samples: a timeline of 50 rows of one count per node', [t.json.timeline.at.length, t.json.timeline.in_flight.length, t.json.timeline.in_flight[0].length, t.json.timeline.at[49]], [50, 50, nodes.length, 5000]);
  eq('nothing was recorded', await s.lastOpId(), ops);
}

async function rules(s) {
  for (const name of ['alpha', 'bravo', 'charlie']) await s.post('/api/nodes', { name });
  await s.post('/api/keys', { generate: { count: 500 } });
  const cases = [
    ['haproxy', 100, 400], ['haproxy', 101, 200], ['haproxy', 2147483648, 400],
    ['envoy-ring', 99, 400], ['envoy-ring', 100, 200], ['maglev', 100, 200], ['maglev', 4294967295, 200],
    ['ring', 100, 400], ['ring', 150, 200],
    ['jump', 150, 400], ['jump', 0, 200],
  ];
  for (const [algorithm, factor, status] of cases) {
    eq(`PUT ${algorithm}`, (await s.put('/api/config', { algorithm })).status, 200);
    const ops = await s.lastOpId();
    const r = await run(s, { requests: 20000, concurrency: 10, factor });
    eq(`${algorithm} factor ${factor}: ${status}`, r.status, status);
    if (status === 400) eq(`${algorithm} factor ${factor}: invalid_parameter`, r.json && r.json.error.code, 'invalid_parameter');
    else if (factor) eq(`${algorithm} factor ${factor}: the rule applied`, r.json.factor, factor);
    eq(`${algorithm} factor ${factor}: nothing recorded`, await s.lastOpId(), ops);
  }
  // a configured factor is the default, and changing it moves no key
  eq('PUT envoy-ring', (await s.put('/api/config', { algorithm: 'envoy-ring' })).status, 200);
  const c = await s.put('/api/config', { params: { hash_balance_factor: 120 } });
  eq('hash_balance_factor 120 on envoy-ring: a configure that moves no key', [c.status, c.json.operation.keys_moved], [200, 0]);
  const r = await run(s, { requests: 20000, concurrency: 10 });
  eq('the configuration\'s factor applies', [r.json.rule, r.json.factor], ['envoy', 120]);
  const c2 = await s.put('/api/config', { params: { hash_balance_factor: 99 } });
  eq('envoy-ring refuses 99', [c2.status, c2.json.error.code], [400, 'invalid_parameter']);
}

async function refusals(s) {
  await s.post('/api/nodes', { name: 'a' });
  const empty = await run(s, { requests: 10, concurrency: 1 });
  eq('no stored key: 400', [empty.status, empty.json.error.code], [400, 'invalid_parameter']);
  await s.post('/api/keys', { generate: { count: 10 } });
  const ops = await s.lastOpId();
  const bad = [
    {}, { concurrency: 1 }, { requests: 10 }, { requests: 0, concurrency: 1 }, { requests: 100000001, concurrency: 1 },
    { requests: 1.5, concurrency: 1 }, { requests: '10', concurrency: 1 }, { requests: 10, concurrency: 0 },
    { requests: 10, concurrency: -1 }, { requests: 10, concurrency: 1000001 }, { requests: 10, concurrency: '1' },
    { requests: 10, concurrency: 1, seed: -1 }, { requests: 10, concurrency: 1, seed: 0.5 }, { requests: 10, concurrency: 1, seed: 'x' },
    { requests: 10, concurrency: 1, samples: 1001 }, { requests: 10, concurrency: 1, bogus: 1 },
    { requests: 10, concurrency: 1, factor: -5 },
  ];
  for (const body of bad) {
    const r = await run(s, body);
    eq(`${JSON.stringify(body)}: 400 invalid_parameter`, [r.status, r.json && r.json.error && r.json.error.code], [400, 'invalid_parameter']);
  }
  const notJson = await s.req('POST', '/api/traffic/run', { body: '{"requests":' });
  eq('a body that is not JSON: 400 invalid_json', [notJson.status, notJson.json.error.code], [400, 'invalid_json']);
  eq('GET /api/traffic/run: 405', (await s.get('/api/traffic/run')).status, 405);
  eq('POST /api/traffic/other: 404', (await s.post('/api/traffic/other', {})).status, 404);
  eq('nothing was recorded', await s.lastOpId(), ops);
  eq('concurrency 0.5 and 10^6 are fine', [(await run(s, { requests: 10, concurrency: 0.5 })).status, (await run(s, { requests: 10, concurrency: 1000000 })).status], [200, 200]);
}

async function leaving(s) {
  await s.post('/api/nodes', { name: 'a' });
  await s.post('/api/nodes', { name: 'b' });
  await s.post('/api/keys', { generate: { count: 100 } });
  // 10^8 requests: tens of seconds; the client leaves after 300 ms.
  const body = JSON.stringify({ requests: 100000000, concurrency: 50, factor: 125 });
  const sock = net.connect(s.port, '127.0.0.1');
  await new Promise((r) => sock.on('connect', r));
  sock.write(`POST /api/traffic/run HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await sleep(300);
  sock.destroy();
  const t0 = Date.now();
  const r = await run(s, { requests: 1000, concurrency: 5 });
  const dt = Date.now() - t0;
  eq('the next replay answers', r.status, 200);
  check(`it answers within 2 s of the first client leaving (${dt} ms): the long replay was stopped`, dt < 2000);
}

async function main() {
  await withServer('traffic shape', shape);
  await withServer('traffic rules', rules);
  await withServer('traffic refusals', refusals);
  await withServer('traffic client leaves', leaving);
  setGroup('all');
  finish();
}

main().catch(crashed);
