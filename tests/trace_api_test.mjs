// tests/trace_api_test.mjs - POST /api/trace (docs/api.md "replay your own
// traffic"), end to end on a real server:
//   - the answer for a log sent as the body equals `ringsim --json trace`
//     of the same file (the command line is checked against a recount by
//     tests/trace_cli_test.py), with options in the query: cache, change,
//     interval; the same log gzip-compressed and sent chunked gives the same
//     counts; nothing is recorded;
//   - refusals: no body, a body labelled as a form or text/plain (what a
//     cross-site page could send), a file not of its format, bad options:
//     400 with the error object; over 1 GiB announced: 413 before any body;
//     GET: 405;
//   - a replay whose client leaves is stopped: the reading worker answers
//     the next request at once.
// Ends with "N passed, N failed".

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';

import { BIN, setGroup, finish, crashed, check, eq, withServer, sleep, tmpRoot } from './lib/harness.mjs';

const OCTET = { 'Content-Type': 'application/octet-stream' };

function accessLog(n, seed = 1) {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const lines = [];
  const t0 = Date.UTC(2026, 11, 6, 12, 0, 0) / 1000;
  const mon = 'Dec';
  for (let i = 0; i < n; i++) {
    const t = t0 + Math.floor(i / 20);
    const d = new Date(t * 1000);
    const hh = String(d.getUTCHours()).padStart(2, '0');
    const mm = String(d.getUTCMinutes()).padStart(2, '0');
    const ss = String(d.getUTCSeconds()).padStart(2, '0');
    const k = Math.floor(Math.pow(rnd(), 3) * 300);
    lines.push(`10.0.0.${i % 200} - - [06/${mon}/2026:${hh}:${mm}:${ss} +0000] "GET /p/${k} HTTP/1.1" 200 ${100 + k} "-" "ua"\n`);
  }
  return lines.join('');
}

async function answers(s) {
  for (const n of ['a', 'b', 'c', 'd']) eq(`add ${n}`, (await s.post('/api/nodes', { name: n })).status, 201);
  const ops = await s.lastOpId();
  const text = accessLog(6000);
  const file = path.join(tmpRoot, 'access.log');
  fs.writeFileSync(file, text);
  const q = '?cache=40obj&interval=30&change=3000%20node%20add%20e';
  const r = await s.post(`/api/trace${q}`, Buffer.from(text), { headers: OCTET });
  eq('POST /api/trace: 200', r.status, 200);
  const j = r.json;
  for (const f of ['format', 'compression', 'requests', 'unserved', 'bad_lines', 'first_bad_line', 'unique_keys', 'max_over_mean', 'hits', 'hit_ratio', 'nodes', 'changes', 'series']) {
    check(`answer has ${f}`, j && f in j, r.text.slice(0, 200));
  }
  eq('6000 requests, none bad', [j.requests, j.bad_lines, j.first_bad_line], [6000, 0, null]);
  eq('the change applied before request 3000', [j.changes[0].applied, j.changes[0].request], [true, 3000]);
  const cli = JSON.parse(execFileSync(BIN, ['--db', s.db, '--json', 'trace', file, '--cache', '40obj', '--interval', '30', '--change', '3000', 'node add e']).toString());
  eq('the answer is ringsim --json trace of the same file', j, cli);
  eq('node e served after it joined', j.nodes.find((n) => n.name === 'e').added, true);
  eq('requests add up', j.nodes.reduce((a, n) => a + n.requests, 0) + j.unserved, 6000);
  // gzip, sent chunked (no Content-Length): the same counts
  const gz = zlib.gzipSync(Buffer.from(text));
  const chunked = await new Promise((resolve, reject) => {
    const sock = net.connect(s.port, '127.0.0.1');
    let out = '';
    sock.on('data', (d) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
    sock.write(`POST /api/trace${q} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: application/gzip\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`);
    for (let i = 0; i < gz.length; i += 7000) {
      const part = gz.subarray(i, i + 7000);
      sock.write(`${part.length.toString(16)}\r\n`);
      sock.write(part);
      sock.write('\r\n');
    }
    sock.write('0\r\n\r\n');
  });
  const body = chunked.slice(chunked.indexOf('\r\n\r\n') + 4);
  const m = /^HTTP\/1\.1 (\d+)/.exec(chunked);
  eq('gzip, chunked: 200', m && Number(m[1]), 200);
  let gj = null;
  try {
    // the answer may itself be chunked: keep the JSON between the braces
    gj = JSON.parse(body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1));
  } catch {
    gj = null;
  }
  check('gzip, chunked: JSON', gj !== null, body.slice(0, 200));
  if (gj) {
    eq('gzip recognised', gj.compression, 'gzip');
    eq('gzip: the same nodes', gj.nodes, j.nodes);
    eq('gzip: the same series', gj.series, j.series);
  }
  eq('nothing was recorded', await s.lastOpId(), ops);
}

async function refusals(s) {
  await s.post('/api/nodes', { name: 'a' });
  const text = Buffer.from(accessLog(50));
  const bad = async (what, p, body, headers, status, code, msg) => {
    const r = await s.req('POST', p, { body, headers });
    eq(`${what}: ${status}`, r.status, status);
    eq(`${what}: ${code}`, r.json && r.json.error && r.json.error.code, code);
    if (msg) check(`${what}: says ${msg}`, r.json && r.json.error.message.includes(msg), r.text);
  };
  await bad('no body', '/api/trace', undefined, OCTET, 400, 'invalid_parameter', 'body');
  await bad('text/plain', '/api/trace', text, { 'Content-Type': 'text/plain' }, 400, 'invalid_parameter', 'octet-stream');
  await bad('a form', '/api/trace', text, { 'Content-Type': 'application/x-www-form-urlencoded' }, 400, 'invalid_parameter');
  await bad('not twitter', '/api/trace?trace_format=twitter', text, OCTET, 400, 'invalid_parameter', 'not a twitter log');
  await bad('unknown format', '/api/trace?trace_format=weblog', text, OCTET, 400, 'invalid_parameter', 'format');
  await bad('bad cache', '/api/trace?cache=lots', text, OCTET, 400, 'invalid_parameter', 'cache');
  await bad('bad change', '/api/trace?change=5%20node%20explode%20x', text, OCTET, 400, 'invalid_parameter');
  await bad('change of a missing node', '/api/trace?change=5%20node%20rm%20zz', text, OCTET, 404, 'not_found');
  await bad('bad interval', '/api/trace?interval=-1', text, OCTET, 400, 'invalid_parameter', 'interval');
  eq('GET /api/trace: 405', (await s.get('/api/trace')).status, 405);
  // over 1 GiB announced: refused from the head, no body awaited
  const head = await new Promise((resolve, reject) => {
    const sock = net.connect(s.port, '127.0.0.1');
    let out = '';
    sock.on('data', (d) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
    sock.write(`POST /api/trace HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${2 ** 30 + 1}\r\n\r\n`);
  });
  check('over 1 GiB: 413 payload_too_large', /^HTTP\/1\.1 413/.test(head) && head.includes('payload_too_large'), head.slice(0, 300));
  // other routes keep their 16 MiB limit
  const big = await new Promise((resolve, reject) => {
    const sock = net.connect(s.port, '127.0.0.1');
    let out = '';
    sock.on('data', (d) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
    sock.write(`POST /api/keys HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 2 ** 20}\r\n\r\n`);
  });
  check('POST /api/keys of 64 MiB: still 413', /^HTTP\/1\.1 413/.test(big), big.slice(0, 200));
}

async function leaving(s) {
  await s.post('/api/nodes', { name: 'a' });
  await s.post('/api/nodes', { name: 'b' });
  // about 10 million lines as one gzip member repeated: seconds to replay,
  // a few megabytes to send
  const member = zlib.gzipSync(Buffer.from(accessLog(15000, 7)));
  const body = Buffer.concat(Array(700).fill(member));
  const sock = net.connect(s.port, '127.0.0.1');
  await new Promise((r) => sock.on('connect', r));
  sock.write(`POST /api/trace?cache=1000obj HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: application/gzip\r\nContent-Length: ${body.length}\r\n\r\n`);
  await new Promise((r) => sock.write(body, r));
  await sleep(500);
  sock.destroy();
  const t0 = Date.now();
  const r = await s.post('/api/trace', Buffer.from(accessLog(100)), { headers: OCTET });
  const dt = Date.now() - t0;
  eq('the next replay answers', r.status, 200);
  check(`it answers within 2 s of the first client leaving (${dt} ms): the long replay was stopped`, dt < 2000);
}

async function main() {
  await withServer('trace answers', answers);
  await withServer('trace refusals', refusals);
  await withServer('trace client leaves', leaving);
  setGroup('all');
  finish();
}

main().catch(crashed);
