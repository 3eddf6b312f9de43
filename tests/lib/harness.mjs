// tests/lib/harness.mjs - what every server test of ringsim shares: the
// check/eq/near runner with its "N passed, N failed" line, raw requests
// through node:http (every header under the test's control), fresh
// databases in one temporary folder, and a Server that starts the real
// binary (`serve --port 0`, the port read from its "serving" line), waits
// until it listens and stops it with SIGTERM, checking that it stopped in
// time, with the exit status expected, and that no sanitizer spoke.  Every
// server still running when the test exits is killed, whatever failed.
//
// The binary is process.argv[2] (default build/ringsim).

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, inspect } from 'node:util';

export const BIN = path.resolve(process.argv[2] || 'build/ringsim');
export const VERBOSE = !!process.env.API_TEST_VERBOSE;

// ---------------------------------------------------------------- runner --

const T = { passed: 0, failed: 0, group: '' };
export function setGroup(name) {
  T.group = name;
}
export const getGroup = () => T.group;

// How many checks have failed so far.
export const failures = () => T.failed;

export function show(v) {
  const s = typeof v === 'string' ? JSON.stringify(v) : inspect(v, { depth: 6, breakLength: Infinity });
  return s.length > 600 ? s.slice(0, 600) + '…' : s;
}

export function check(name, cond, detail) {
  if (cond) {
    T.passed++;
    if (VERBOSE) console.log(`ok   [${T.group}] ${name}`);
  } else {
    T.failed++;
    console.log(`FAIL [${T.group}] ${name}${detail ? ' -- ' + detail : ''}`);
  }
  return !!cond;
}

export function eq(name, got, want) {
  const ok = isDeepStrictEqual(got, want);
  return check(name, ok, ok ? '' : `expected ${show(want)}, got ${show(got)}`);
}

export function near(name, got, want, tol = 1e-9) {
  const ok = typeof got === 'number' && Math.abs(got - want) <= tol * Math.max(1, Math.abs(want));
  return check(name, ok, ok ? '' : `expected ${want}, got ${show(got)}`);
}

// ------------------------------------------------------------- utilities --

export const RING = 2 ** 32;
export const sha256hex = (s) => createHash('sha256').update(s, 'utf8').digest('hex');
export const pos = (s) => parseInt(sha256hex(s).slice(0, 8), 16);
export const pos2 = (s) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest().readUInt32BE(0);
export const bytes = (s) => Buffer.from(s, 'utf8');
export const cmpBytes = (a, b) => Buffer.compare(bytes(a), bytes(b));
export const enc = encodeURIComponent;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
// C's round(): halves away from zero.
export const cRound = (x) => (x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5));
export const pointsFor = (ppn, w) => Math.max(1, cRound(ppn * w));

// Names that must survive JSON, URL paths and query strings.
export const WEIRD = [
  'Zürich ☃ 日本語',
  'with space',
  'a/b/c',
  '100%',
  '%41',
  '50% off%2F',
  '#hash',
  'what?now=1&x=2',
  'quo"te',
  "it's",
  '<script>alert(1)</script>',
  '<b>&amp;</b>',
  '+plus+',
  'back\\slash',
  'emoji 🎉🧪',
  '..',
  '.',
  ' leading and trailing ',
  'x'.repeat(255),
  'é'.repeat(127) + 'x', // 255 bytes
  '\u00a0nbsp',
  ';semi,colon:@$',
];

// ------------------------------------------------------------------ HTTP --

export const sawACAO = [];

export function request(port, method, reqPath, opts = {}) {
  const { body, headers = {}, timeout = 120000 } = opts;
  return new Promise((resolve, reject) => {
    const h = { Host: `127.0.0.1:${port}`, ...headers };
    let data = null;
    // Every mutation is labelled JSON, also without a body (issue 6).
    if (['POST', 'PUT', 'DELETE', 'PATCH'].includes(method) && !('Content-Type' in h)) h['Content-Type'] = 'application/json';
    if (body !== undefined) {
      data = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      if (!('Content-Type' in h)) h['Content-Type'] = 'application/json';
      h['Content-Length'] = data.length;
    }
    for (const k of Object.keys(h)) if (h[k] === null) delete h[k];
    const req = http.request({ host: '127.0.0.1', port, method, path: reqPath, headers: h, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        if (res.headers['access-control-allow-origin'] !== undefined) sawACAO.push(`${method} ${reqPath}`);
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(timeout, () => req.destroy(new Error(`timeout: ${method} ${reqPath}`)));
    if (data) req.write(data);
    req.end();
  });
}

// Every server started and not yet gone: killed when the test exits.
const running = new Set();
const SANITIZED_RUN = Boolean(process.env.ASAN_OPTIONS || process.env.TSAN_OPTIONS);

export class Server {
  // db: the database file.  opts: args (after serve's own), env (over this
  // process's), host (--host), port (0: the system's choice), bin (another
  // binary than BIN), ulimit (the arguments of a shell `ulimit` run before
  // the server, e.g. '-n 48'), stopMs (the bound on a stop, plain builds).
  constructor(db, opts = {}) {
    this.db = db;
    this.opts = opts;
  }

  async start() {
    const { args = [], env = {}, host, port = 0, bin = BIN, ulimit } = this.opts;
    const argv = ['serve', ...(host ? ['--host', host] : []), '--port', String(port), '--db', this.db, ...args];
    const how = { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } };
    const proc = ulimit ? spawn('bash', ['-c', `ulimit ${ulimit} && exec "$0" "$@"`, bin, ...argv], how) : spawn(bin, argv, how);
    this.proc = proc;
    running.add(proc);
    this.exited = new Promise((r) =>
      proc.on('exit', (code, sig) => {
        running.delete(proc);
        r({ code, sig });
      }),
    );
    let out = '';
    let err = '';
    this.out = () => out;
    this.err = () => err;
    proc.stderr.on('data', (d) => (err += d));
    const m = await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`server did not start in 20 s: ${out} ${err}`)), 20000);
      proc.stdout.on('data', (d) => {
        out += d;
        const m = /ringsim: serving http:\/\/(\S+?):(\d+)\/(\?token=(\S+))? /.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m);
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`server exited (${code}) before listening: ${out} ${err}`));
      });
    });
    this.host = m[1];
    this.port = Number(m[2]);
    this.token = m[4];
    return this;
  }

  // SIGTERM (unless it has exited already), then the checks: it stopped in
  // time, with the status expected, and no sanitizer spoke.
  async stop(expectCode = 0) {
    if (!this.proc) return;
    const proc = this.proc;
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    // The server's own stop takes well under a second (164 ms after 300,000
    // keys); a sanitizer build then frees and scans its heap at exit, which
    // took 7.3 s on a machine loaded by other work.  Ten seconds is the bound
    // on a plain build; under a sanitizer the wait is only a guard on a hang.
    const limit = SANITIZED_RUN ? 120000 : this.opts.stopMs || 10000;
    const r = await Promise.race([this.exited, sleep(limit).then(() => null)]);
    check(`server stops within ${limit / 1000} s of SIGTERM`, r !== null);
    if (r === null) {
      proc.kill('SIGKILL');
      await this.exited;
    } else {
      check(`server exits ${expectCode} after SIGTERM`, r.code === expectCode, `exit ${r.code}, signal ${r.sig}`);
    }
    const err = this.err();
    check('server reported no sanitizer error', !/Sanitizer|runtime error:/.test(err), err.slice(0, 800));
  }

  // A signal (SIGKILL: no checks, nothing to wait for but the exit).
  async kill(sig = 'SIGKILL') {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(sig);
    return this.exited;
  }

  req(method, p, opts) {
    return request(this.port, method, p, opts);
  }
  get(p, opts) {
    return this.req('GET', p, opts);
  }
  post(p, body, opts = {}) {
    return this.req('POST', p, { ...opts, body });
  }
  put(p, body, opts = {}) {
    return this.req('PUT', p, { ...opts, body });
  }
  del(p, opts) {
    return this.req('DELETE', p, opts);
  }

  // GET that must succeed with 200 and JSON
  async ok(p) {
    const r = await this.get(p);
    if (r.status !== 200 || r.json === undefined) throw new Error(`GET ${p}: ${r.status} ${r.text.slice(0, 300)}`);
    return r.json;
  }

  async allKeys(qs = '') {
    const out = [];
    let total = null;
    for (let off = 0; ; off += 1000) {
      const j = await this.ok(`/api/keys?${qs}${qs ? '&' : ''}offset=${off}&limit=1000`);
      total = j.total;
      out.push(...j.keys);
      if (j.keys.length < 1000 || off > total + 1000) break;
    }
    return { total, keys: out };
  }

  async allOps() {
    const out = [];
    for (let after = 0; ; ) {
      const j = await this.ok(`/api/operations?after=${after}&limit=1000`);
      out.push(...j.operations);
      if (j.operations.length < 1000) break;
      after = j.operations[j.operations.length - 1].id;
    }
    return out;
  }

  async lastOpId() {
    const ops = await this.allOps();
    return ops.length ? ops[ops.length - 1].id : 0;
  }

  async allMoves(id) {
    const out = [];
    let total = null;
    for (let off = 0; ; off += 1000) {
      const j = await this.ok(`/api/operations/${id}?offset=${off}`);
      total = j.moves_total;
      out.push(...j.moves);
      if (j.moves.length < 1000 || off > total + 1000) break;
    }
    return { total, moves: out };
  }

  async state(at) {
    const q = at === undefined ? '' : `at=${at}`;
    const qq = q ? `?${q}` : '';
    return {
      nodes: await this.ok(`/api/nodes${qq}`),
      stats: await this.ok(`/api/stats${qq}`),
      keys: await this.allKeys(q),
      config: await this.ok(`/api/config${qq}`),
      ring: await this.ok(`/api/ring${qq}`),
    };
  }
}

export const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-api-'));
process.on('exit', () => {
  for (const p of running) p.kill('SIGKILL');
  fs.rmSync(tmpRoot, { recursive: true, force: true });
});
let dbCount = 0;
export function freshDb() {
  const dir = path.join(tmpRoot, `g${++dbCount}`);
  fs.mkdirSync(dir);
  return path.join(dir, 'ringsim.db');
}

export async function withServer(name, fn) {
  T.group = name;
  const s = new Server(freshDb());
  try {
    await s.start();
    await fn(s);
  } catch (e) {
    check('group ran to the end', false, e && e.stack ? e.stack : String(e));
  } finally {
    await s.stop().catch(() => {});
  }
}

// A failure for every server still running (its group forgot to stop it),
// which is then killed.
export async function reapServers() {
  for (const p of [...running]) {
    check(`server ${p.pid} was stopped by its group`, false);
    p.kill('SIGKILL');
    await new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', r)));
  }
}

// The closing line, and the exit status (the folder of fresh databases
// goes at exit).
export function finish() {
  console.log(`${T.passed} passed, ${T.failed} failed`);
  process.exit(T.failed ? 1 : 0);
}

export function crashed(e) {
  console.log(`crashed: ${e && e.stack ? e.stack : e}`);
  T.failed++;
  console.log(`${T.passed} passed, ${T.failed} failed`);
  process.exit(1);
}

