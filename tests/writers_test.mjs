// tests/writers_test.mjs - two servers and the CLI writing one database at
// once; the database stays right.
//
//   node tests/writers_test.mjs /path/to/ringsim           (short: make test)
//   WRITERS_ROUNDS=300 node tests/writers_test.mjs ...     (make test-crash-long)
//
// Two `ringsim serve` on the same --db (loopback, port 0) and the CLI write
// at the same time: node adds and removes, key inserts, generates and
// deletes, configures (several algorithms, some with a layout state), and
// reverts, split over the three.  After each round, with the writers idle:
//   - `ringsim check` passes (every key where the ring says, counters equal
//     to the counts, the log replays to the stored state);
//   - both servers answer the state the file holds (nodes, keys, last
//     operation), so neither is left behind on a stale ring;
//   - the log's ids are 1, 2, 3 ... and every acknowledged operation is in
//     it with its type.
// Issue 14 item 1: a process that counted another's commit as seen without
// loading it acted on a stale ring, and check failed within ~15 rounds.
// Seeded (WRITERS_SEED, printed on failure).  Every process started here is
// stopped at the end, on failure too.  Plain Node 20, no packages.  Ends
// with one line "N passed, N failed".
//
// Checks docs/api.md, 'Serving' (a change made by another process),
// 'Conventions'.

import { spawn } from 'node:child_process';
import http from 'node:http';
import { BIN, Server, check, crashed, failures, finish, freshDb, setGroup } from './lib/harness.mjs';

const ROUNDS = Number(process.env.WRITERS_ROUNDS || 25);
const OPS = Number(process.env.WRITERS_OPS || 24); // operations per writer and round
const SEED = BigInt(process.env.WRITERS_SEED || Date.now() % 1000000007);
const DEADLINE_MS = Number(process.env.WRITERS_DEADLINE_MS || 40000); // the short run stops early
setGroup(`WRITERS_SEED=${SEED}`); // in every failure's line

// xorshift64*, seeded.
let rs = SEED || 1n;
function rnd() {
  rs ^= rs >> 12n;
  rs ^= (rs << 25n) & 0xffffffffffffffffn;
  rs ^= rs >> 27n;
  return Number(((rs * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
}
const rint = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
const pick = (a) => a[rint(0, a.length - 1)];

// The servers and the CLI write this one file.
const DB = freshDb();
// The CLI's processes not yet gone (the harness stops the servers).
const procs = new Set();
function stopAll() {
  for (const p of procs) p.kill('SIGKILL');
  procs.clear();
}
process.on('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => process.exit(1));
}

function track(p) {
  procs.add(p);
  p.on('exit', () => procs.delete(p));
  return p;
}

const start = () => new Server(DB, { host: '127.0.0.1' }).start();

// One request: {status, json}, or {status: 0} when the connection broke.
function request(port, method, p, body) {
  return new Promise((resolve) => {
    const data = body === undefined ? '' : JSON.stringify(body);
    // A Content-Type on every request, bodies or not: servers before API v3
    // refused bodiless POST and DELETE without one.
    const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) };
    const req = http.request({ host: '127.0.0.1', port, method, path: p, agent: false, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, json });
      });
      res.on('error', () => resolve({ status: 0 }));
    });
    req.on('error', () => resolve({ status: 0 }));
    req.end(data);
  });
}

// The CLI, asynchronously (the three writers run at once).
function cli(args) {
  return new Promise((resolve) => {
    const p = track(spawn(BIN, ['--db', DB, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => resolve({ status: code, stdout: out, stderr: err }));
  });
}

const acked = new Map(); // id -> type of every operation answered as done
let lastSeen = 0;
let unexpected = []; // answers that are neither success nor an expected refusal
function ack(who, what, status, json) {
  const op = json && json.operation;
  if ((status === 200 || status === 201) && op && Number.isInteger(op.id)) {
    if (acked.has(op.id)) check(`${who} ${what}: operation ${op.id} acknowledged twice`, false, `${acked.get(op.id)} and ${op.type}`);
    acked.set(op.id, op.type);
    lastSeen = Math.max(lastSeen, op.id);
  } else if (status === 400 && json && json.error && /Content-Type/.test(json.error.message || '')) {
    unexpected.push(`${who} ${what}: refused for its headers: ${json.error.message}`);
  } else if (status >= 500 || status === 0) {
    unexpected.push(`${who} ${what}: ${status} ${JSON.stringify(json).slice(0, 200)}`);
  }
}

const ALGS = [
  { algorithm: 'ring', points_per_node: 16 },
  { algorithm: 'ring', points_per_node: 40 },
  { algorithm: 'ketama' },
  { algorithm: 'rendezvous' },
  { algorithm: 'cassandra', params: { num_tokens: 8 } },
  { algorithm: 'jump' },
  { algorithm: 'redis' },
];

// One writer's operation: the same choices for a server and the CLI.
function choose(who, round, i, mine) {
  const k = rint(0, 99);
  if (k < 14) return { kind: 'node add', name: `${who}${round}-${i}`, weight: rint(1, 3) === 3 ? 2 : 1 };
  if (k < 24 && mine.nodes.length) return { kind: 'node rm', name: mine.nodes.splice(rint(0, mine.nodes.length - 1), 1)[0] };
  if (k < 44) return { kind: 'keys', keys: Array.from({ length: rint(1, 30) }, (_, j) => `${who}k${round}-${i}-${j}`) };
  if (k < 56) return { kind: 'generate', count: rint(50, 800), prefix: `${who}g${round}-${i}-` };
  if (k < 68 && mine.keys.length) return { kind: 'key rm', key: mine.keys.splice(rint(0, mine.keys.length - 1), 1)[0] };
  if (k < 80) return { kind: 'configure', cfg: pick(ALGS) };
  if (k < 92) return { kind: 'revert', to: Math.max(0, lastSeen - rint(0, 6)) };
  return { kind: 'stats' };
}

async function serverWriter(port, who, round, mine) {
  for (let i = 0; i < OPS; i++) {
    const o = choose(who, round, i, mine);
    let r;
    if (o.kind === 'node add') {
      r = await request(port, 'POST', '/api/nodes', { name: o.name, weight: o.weight });
      if (r.status === 201) mine.nodes.push(o.name);
    } else if (o.kind === 'node rm') {
      r = await request(port, 'DELETE', `/api/nodes/${encodeURIComponent(o.name)}`);
    } else if (o.kind === 'keys') {
      r = await request(port, 'POST', '/api/keys', { keys: o.keys });
      if (r.status === 201) mine.keys.push(...o.keys);
    } else if (o.kind === 'generate') {
      r = await request(port, 'POST', '/api/keys', { generate: { count: o.count, prefix: o.prefix } });
      if (r.status === 201) mine.keys.push(`${o.prefix}0`);
    } else if (o.kind === 'key rm') {
      r = await request(port, 'DELETE', `/api/keys/${encodeURIComponent(o.key)}`);
    } else if (o.kind === 'configure') {
      r = await request(port, 'PUT', '/api/config', o.cfg);
    } else if (o.kind === 'revert') {
      r = await request(port, 'POST', '/api/revert', { to: o.to });
    } else {
      r = await request(port, 'GET', '/api/stats');
    }
    ack(who, o.kind, r.status, r.json);
  }
}

async function cliWriter(round, mine) {
  const who = 'c';
  for (let i = 0; i < Math.ceil(OPS / 2); i++) {
    const o = choose(who, round, i, mine);
    let args;
    if (o.kind === 'node add') args = ['node', 'add', o.name, '--weight', String(o.weight)];
    else if (o.kind === 'node rm') args = ['node', 'rm', o.name];
    else if (o.kind === 'keys') args = ['key', 'add', ...o.keys];
    else if (o.kind === 'generate') args = ['key', 'gen', String(o.count), '--prefix', o.prefix];
    else if (o.kind === 'key rm') args = ['key', 'rm', o.key];
    else if (o.kind === 'configure') {
      args = ['config', '--algorithm', o.cfg.algorithm];
      if (o.cfg.points_per_node) args.push('--points', String(o.cfg.points_per_node));
      for (const [n, v] of Object.entries(o.cfg.params || {})) args.push('--param', `${n}=${v}`);
    } else if (o.kind === 'revert') args = ['revert', String(o.to)];
    else args = ['stats'];
    const r = await cli(['--json', ...args]);
    let json = null;
    try { json = JSON.parse(r.stdout); } catch { /* an error goes to stderr */ }
    // Exit 0 done; 1 a refusal (a node someone else removed...), else broken.
    const status = r.status === 0 ? 200 : r.status === 1 || r.status === 2 ? 400 : 500;
    if (status === 200) {
      if (o.kind === 'node add') mine.nodes.push(o.name);
      if (o.kind === 'keys') mine.keys.push(...o.keys);
    }
    ack(who, `${o.kind} (cli, exit ${r.status}: ${r.stderr.trim().slice(0, 160)})`, status, json);
  }
}

async function verify(round, servers) {
  const c = await cli(['check']);
  const ok = check(`round ${round}: ringsim check passes`, c.status === 0,
    `${c.stdout.slice(0, 600)}${c.stderr.slice(0, 300)}`);
  const st = await cli(['--json', 'stats']);
  const l = await cli(['--json', 'log']);
  let ops = [];
  let stats = null;
  try {
    ops = JSON.parse(l.stdout).operations;
    stats = JSON.parse(st.stdout);
  } catch {
    check(`round ${round}: log and stats --json parse`, false, `${l.stderr}${st.stderr}`);
  }
  check(`round ${round}: log ids are 1..${ops.length}`, ops.every((o, i) => o.id === i + 1));
  const byId = new Map(ops.map((o) => [o.id, o.type]));
  const missing = [...acked].filter(([id, type]) => byId.get(id) !== type);
  check(`round ${round}: every acknowledged operation is in the log`, missing.length === 0,
    missing.slice(0, 5).map(([id, t]) => `${id} ${t} -> ${byId.get(id)}`).join(', '));
  // Both servers come to answer what the file holds: a change of topology
  // by another process may be loaded off the event loop, so reads may lag
  // it for a moment (up to 10 s here), never stay behind.
  for (const [i, s] of servers.entries()) {
    let r;
    let same = false;
    for (let t = 0; t < 100 && !same; t++) {
      if (t) await new Promise((res) => setTimeout(res, 100));
      r = await request(s.port, 'GET', '/api/stats');
      same = r.status === 200 && stats && r.json.nodes === stats.nodes && r.json.keys === stats.keys &&
        JSON.stringify(r.json.per_node) === JSON.stringify(stats.per_node);
    }
    check(`round ${round}: server ${i + 1} answers the stored state`, same,
      `server ${JSON.stringify(r.json)} file ${JSON.stringify(stats)}`);
  }
  check(`round ${round}: no answer is a 5xx or a broken connection`, unexpected.length === 0,
    unexpected.slice(0, 4).join('; '));
  unexpected = [];
  return { ok: ok && failures() === 0, ops: ops.length, keys: stats ? stats.keys : 0 };
}

async function main() {
  const t0 = Date.now();
  const servers = [await start(), await start()];
  const mine = [0, 1, 2].map(() => ({ nodes: [], keys: [] }));
  // A start: some nodes and keys, so that every round moves keys.
  for (const name of ['alpha', 'bravo', 'charlie']) {
    const r = await request(servers[0].port, 'POST', '/api/nodes', { name });
    ack('s1', 'prepare', r.status, r.json);
  }
  const g = await request(servers[1].port, 'POST', '/api/keys', { generate: { count: 3000, prefix: 'p-' } });
  ack('s2', 'prepare', g.status, g.json);
  let rounds = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    if (process.env.WRITERS_ROUNDS === undefined && Date.now() - t0 > DEADLINE_MS) break;
    // Keep it small enough that check stays quick: a reset now and then.
    const st = await request(servers[0].port, 'GET', '/api/stats');
    if (st.status === 200 && (st.json.keys > 40000 || round % 10 === 0)) {
      const r = await request(servers[0].port, 'POST', '/api/reset');
      ack('s1', 'reset', r.status, r.json);
      for (const m of mine) m.nodes = [];
    }
    await Promise.all([
      serverWriter(servers[0].port, 'a', round, mine[0]),
      serverWriter(servers[1].port, 'b', round, mine[1]),
      cliWriter(round, mine[2]),
    ]);
    rounds = round;
    const v = await verify(round, servers);
    if (process.env.WRITERS_VERBOSE) console.log(`round ${round}: ${v.ops} operations, ${v.keys} keys, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (!v.ok) break; // a damaged database says nothing more
    for (const [i, s] of servers.entries()) {
      if (s.proc.exitCode !== null) {
        check(`round ${round}: server ${i + 1} still runs`, false, s.err().slice(0, 300));
        return done(t0, rounds);
      }
    }
  }
  await Promise.all(servers.map((s) => s.stop()));
  done(t0, rounds);
}

function done(t0, rounds) {
  console.log(`writers_test: ${rounds} rounds of two servers and the CLI writing at once, ` +
    `${acked.size} acknowledged operations, seed ${SEED}, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  finish();
}

main().catch(crashed);
