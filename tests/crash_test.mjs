// tests/crash_test.mjs - SIGKILL the server at random moments; nothing
// acknowledged is lost and nothing is left half done.
//
//   node tests/crash_test.mjs /path/to/ringsim            (short: make test)
//   CRASH_ROUNDS=60 CRASH_SCALE=4 node tests/crash_test.mjs /path/to/ringsim
//                                                         (make test-crash-long)
//
// Each round starts `ringsim serve` on the same database, starts one kind of
// long operation -- a key generation, a node add that moves many keys, a
// configure, a revert -- or a burst of small operations from four concurrent
// clients, and kills the server with SIGKILL after a random delay (seeded:
// CRASH_SEED, printed on failure).  Then, with the server dead:
//   - `ringsim check` passes: every key is where the ring says and replaying
//     the log gives the stored state (an operation is all there or not at all);
//   - every operation a client was answered for (its id and type, as the API
//     returned them, API.md "every change ... is committed to SQLite before the
//     response is sent") is in `ringsim log --json` with that id and type;
//   - the log's ids are 1, 2, 3 ... with no gap.
// Plain Node 20, no packages.  Ends with one line "N passed, N failed".
//
// Checks docs/api.md, 'Conventions' (committed before the answer is sent).

import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { BIN, Server, check, crashed, finish, freshDb, setGroup, sleep } from './lib/harness.mjs';

const ROUNDS = Number(process.env.CRASH_ROUNDS || 10);
const SCALE = Number(process.env.CRASH_SCALE || 1); // sizes of the operations
const SEED = BigInt(process.env.CRASH_SEED || 20261130);
setGroup(`CRASH_SEED=${SEED}`); // in every failure's line

// xorshift64*, seeded: the same seed gives the same rounds and kill delays.
let rs = SEED || 1n;
function rnd() {
  rs ^= rs >> 12n;
  rs ^= (rs << 25n) & 0xffffffffffffffffn;
  rs ^= rs >> 27n;
  return Number(((rs * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
}
const rint = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));

// Every round's server opens the same database.
const DB = freshDb();

// One request; resolves {status, json} or null when the connection broke
// (the server was killed): such an operation is not acknowledged.
function request(port, method, p, body) {
  return new Promise((resolve) => {
    const data = body === undefined ? '' : JSON.stringify(body);
    const req = http.request({
      host: '127.0.0.1', port, method, path: p, agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* cut short */ }
        resolve(json ? { status: res.statusCode, json } : null);
      });
      res.on('error', () => resolve(null));
      res.on('aborted', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    req.end(data);
  });
}

const acked = new Map(); // id -> type, every operation a client was answered for
function ack(r, what) {
  if (process.env.CRASH_DEBUG) console.log(what, r && r.status, r && JSON.stringify(r.json).slice(0, 150));
  const op = r && r.json && r.json.operation;
  if (r && (r.status === 200 || r.status === 201) && op && Number.isInteger(op.id)) {
    if (acked.has(op.id) && acked.get(op.id) !== op.type) {
      check(`${what}: operation ${op.id} acknowledged twice with different types`, false,
        `${acked.get(op.id)} and ${op.type}`);
    }
    acked.set(op.id, op.type);
  }
  return r;
}

function cli(...args) {
  return spawnSync(BIN, ['--db', DB, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
}

let uniq = 0;
const KINDS = ['generate', 'node add', 'configure', 'revert', 'burst'];

// The long operation of a round, started but not awaited.
async function operation(kind, port, round) {
  const n = (k) => Math.round(k * SCALE);
  if (kind === 'generate') {
    return ack(await request(port, 'POST', '/api/keys', { generate: { count: n(rint(30000, 100000)), prefix: `g${round}-` } }), kind);
  }
  if (kind === 'node add') {
    return ack(await request(port, 'POST', '/api/nodes', { name: `n${round}-${uniq++}`, weight: rint(1, 8) }), kind);
  }
  if (kind === 'configure') {
    return ack(await request(port, 'PUT', '/api/config', { points_per_node: rint(50, 2000) }), kind);
  }
  if (kind === 'revert') {
    const last = Math.max(...acked.keys(), 0);
    return ack(await request(port, 'POST', '/api/revert', { to: rint(Math.max(0, last - 8), last) }), kind);
  }
  // burst: four clients, small operations as fast as they are answered
  const client = async (c) => {
    const mine = [];
    for (let i = 0; i < 400; i++) {
      const k = rint(0, 9);
      let r;
      if (k < 4) {
        const key = `b${round}-${c}-${i}`;
        r = ack(await request(port, 'POST', '/api/keys', { key }), kind);
        if (r && r.status === 201) mine.push(key);
      } else if (k < 6 && mine.length) {
        r = ack(await request(port, 'DELETE', `/api/keys/${encodeURIComponent(mine.pop())}`), kind);
      } else if (k < 7) {
        r = ack(await request(port, 'POST', '/api/keys', { keys: Array.from({ length: 50 }, (_, j) => `m${round}-${c}-${i}-${j}`) }), kind);
      } else if (k < 8) {
        const name = `c${round}-${c}-${i}`;
        r = ack(await request(port, 'POST', '/api/nodes', { name }), kind);
        if (r && r.status === 201 && rint(0, 1)) r = ack(await request(port, 'DELETE', `/api/nodes/${name}`), kind);
      } else {
        r = await request(port, 'GET', '/api/stats');
      }
      if (!r) return; // the server is gone
    }
  };
  await Promise.all([0, 1, 2, 3].map(client));
  return null;
}

// Rounds start from a database holding some nodes and keys.
async function prepare() {
  const s = await new Server(DB).start();
  for (const name of ['alpha', 'bravo', 'charlie', 'delta']) ack(await request(s.port, 'POST', '/api/nodes', { name }), 'prepare');
  ack(await request(s.port, 'POST', '/api/keys', { generate: { count: Math.round(60000 * SCALE) } }), 'prepare');
  await s.stop();
}

function verify(round, kind, delay) {
  const where = `round ${round} (${kind}, killed after ${delay} ms)`;
  const c = cli('check');
  check(`${where}: ringsim check passes`, c.status === 0, `${c.stdout.slice(0, 400)}${c.stderr.slice(0, 400)}`);
  const l = cli('--json', 'log');
  let ops = [];
  try { ops = JSON.parse(l.stdout).operations; } catch { check(`${where}: log --json parses`, false, l.stderr); }
  const byId = new Map(ops.map((o) => [o.id, o.type]));
  const missing = [...acked].filter(([id, type]) => byId.get(id) !== type);
  check(`${where}: every acknowledged operation is in the log`, missing.length === 0,
    missing.slice(0, 5).map(([id, t]) => `${id} ${t} -> ${byId.get(id)}`).join(', '));
  check(`${where}: log ids are 1..${ops.length}`, ops.every((o, i) => o.id === i + 1));
  const keys = JSON.parse(cli('--json', 'stats').stdout || '{"keys":0}').keys;
  return { ops: ops.length, keys };
}

async function main() {
  const t0 = Date.now();
  await prepare();
  const stats = { kills: 0, acked: 0, killedDuring: {} };
  const took = {}; // kind -> ms the operation took when it ended before the kill
  for (let round = 1; round <= ROUNDS; round++) {
    const kind = KINDS[(round - 1) % KINDS.length];
    let srv;
    try {
      srv = await new Server(DB).start();
    } catch (e) {
      check(`round ${round}: the server restarts after the kill`, false, e.message);
      break;
    }
    // Keep the database small enough that check stays quick: a reset now
    // and then (an operation like any other).
    const st = await request(srv.port, 'GET', '/api/stats');
    if (st && st.json.keys > 250000 * SCALE) ack(await request(srv.port, 'POST', '/api/reset'), 'reset');
    if (st && st.json.nodes < 2) {
      for (const name of ['alpha', 'bravo']) ack(await request(srv.port, 'POST', '/api/nodes', { name: `${name}${round}` }), 'prepare');
      ack(await request(srv.port, 'POST', '/api/keys', { generate: { count: Math.round(50000 * SCALE), prefix: `p${round}-` } }), 'prepare');
    }
    // A delay within the operation's duration as last seen (when it ended
    // before the kill), so that most kills land inside it.
    const delay = rint(0, took[kind] || Math.round(1200 * Math.sqrt(SCALE)));
    let finished = false;
    let killed = false;
    const t1 = Date.now();
    const running = operation(kind, srv.port, round).then(() => {
      if (!killed) took[kind] = Date.now() - t1;
      finished = true;
    });
    await Promise.race([sleep(delay), running]);
    const during = !finished;
    killed = true;
    await srv.kill('SIGKILL');
    await running;
    stats.kills++;
    if (during) stats.killedDuring[kind] = (stats.killedDuring[kind] || 0) + 1;
    const v = verify(round, kind, delay);
    if (process.env.CRASH_VERBOSE) console.log(`round ${round}: ${kind}, kill at ${delay} ms${during ? '' : ' (after it finished)'}; ${v.ops} operations, ${v.keys} keys`);
  }
  stats.acked = acked.size;
  console.log(`crash_test: ${stats.kills} SIGKILLs (during the operation: ${JSON.stringify(stats.killedDuring)}), ` +
    `${stats.acked} acknowledged operations checked, seed ${SEED}, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  finish();
}

main().catch(crashed);
