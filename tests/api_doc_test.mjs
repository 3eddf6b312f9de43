// tests/api_doc_test.mjs - docs/api.md's examples are real: every request in
// it is sent to a fresh server, every command run on a fresh database, in
// the order of the document, and each answer must be the one written there.
//
//   node tests/api_doc_test.mjs /path/to/ringsim [docs/api.md]           check
//   node tests/api_doc_test.mjs /path/to/ringsim [docs/api.md] --update  rewrite the answers
//
// In the document, a request is a fenced block ```http (METHOD PATH, header
// lines, a blank line, the body) followed by its answer, a block ```json
// STATUS (or csv, text); a command line example is a block ```console of
// "$ ringsim ..." lines, each followed by what it prints (stdout, then
// stderr, then "[exit status N]" when it is not 0).  Comparing ignores only
// what cannot repeat: timestamps ("at", RFC 3339 UTC) and measured times
// ("lookup_ns").  JSON is compared as values (field order aside), text byte
// for byte.  --update writes the answers this binary gives; the test (ctest
// api_doc) fails whenever an answer changes.
//
// Checks docs/api.md, every section: each example in it.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

// The path of the first place where two JSON values differ, with both sides.
function firstDiff(a, b, at = '') {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDiff(a[k], b[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at || '.'}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`;
}

import { BIN, Server, check, finish, crashed, freshDb, setGroup, show } from './lib/harness.mjs';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOC = path.resolve(process.argv.slice(3).find((a) => !a.startsWith('--')) || path.join(SRC, 'docs/api.md'));
const UPDATE = process.argv.includes('--update');
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const IGNORED = new Set(['at', 'lookup_ns']);

// ---- the document's blocks ----

function blocks(lines) {
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/^```(\S*)(?:\s+(\S+))?\s*$/);
    if (!m || !m[1]) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    out.push({ lang: m[1], arg: m[2], start, end: i, body });
  }
  return out;
}

// ---- comparing ----

function scrub(v) {
  if (Array.isArray(v)) return v.map(scrub);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = IGNORED.has(k) ? '…' : scrub(x);
    return o;
  }
  return v;
}

const maskText = (t) => t.replace(TIME, '<time>').replace(/("lookup_ns": )[0-9.e+-]+/g, '$1<ns>');

// ---- HTTP ----

function parseRequest(b) {
  const [first, ...rest] = b.body;
  const [method, target] = first.split(' ');
  const headers = {};
  let i = 0;
  for (; i < rest.length && rest[i] !== ''; i++) {
    const c = rest[i].indexOf(':');
    headers[rest[i].slice(0, c)] = rest[i].slice(c + 1).trim();
  }
  const body = rest.slice(i + 1).join('\n');
  return { method, target, headers, body: body.length ? body : undefined };
}

// events: how many events (blank-line-ended blocks) to wait for; without
// it, what comes within a second of the first bytes.
function send(port, req, events = 0) {
  return new Promise((resolve, reject) => {
    const headers = { Host: `127.0.0.1:${port}`, ...req.headers };
    const data = req.body === undefined ? null : Buffer.from(req.body);
    if (data) headers['Content-Length'] = data.length;
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.target, headers, agent: false }, (res) => {
      const chunks = [];
      const stream = req.target.startsWith('/api/events');
      let timer = null;
      res.on('data', (c) => {
        chunks.push(c);
        // A stream never ends: take the events expected, or what comes
        // within a second.
        const blocks = Buffer.concat(chunks).toString('utf8').split('\n\n').length - 1;
        if (stream && events && blocks >= events) res.destroy();
        else if (stream && !events && !timer) timer = setTimeout(() => res.destroy(), 1000);
      });
      const done = () => resolve({ status: res.statusCode, type: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') });
      res.on('end', done);
      res.on('close', done);
      if (stream) setTimeout(() => res.destroy(), 10000);
    });
    r.on('error', reject);
    r.setTimeout(60000, () => r.destroy(new Error(`timeout: ${req.method} ${req.target}`)));
    if (data) r.write(data);
    r.end();
  });
}

function answerBlock(got, lang) {
  if (lang === 'json') {
    const j = JSON.parse(got.text);
    return JSON.stringify(j, null, 2).split('\n');
  }
  return got.text.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
}

// ---- command lines ----

function runCommand(cmd, env, cwd) {
  const r = spawnSync('bash', ['-c', cmd], { env, cwd, encoding: 'utf8', timeout: 60000 });
  let out = r.stdout + r.stderr;
  if (r.status !== 0) out += `${out && !out.endsWith('\n') ? '\n' : ''}[exit status ${r.status}]\n`;
  // CSV ends its records with CRLF; the document shows lines.
  return out.replace(/\r\n/g, '\n').replace(/\n$/, '');
}

// ---- main ----

async function main() {
  const text = fs.readFileSync(DOC, 'utf8');
  const lines = text.split('\n');
  const bs = blocks(lines);
  const replace = []; // [start, end, newLines]
  setGroup(path.basename(DOC));

  const server = new Server(freshDb());
  await server.start();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-doc-'));
  fs.symlinkSync(BIN, path.join(work, 'ringsim'));
  const env = { ...process.env, PATH: `${work}:${process.env.PATH}`, RINGSIM_DB: path.join(work, 'doc.db'), LC_ALL: 'C.UTF-8' };
  delete env.RINGSIM_TOKEN;
  let requests = 0;
  let commands = 0;
  try {
    for (let k = 0; k < bs.length; k++) {
      const b = bs[k];
      if (b.lang === 'http') {
        const req = parseRequest(b);
        const ans = bs[k + 1];
        const where = `${path.basename(DOC)}:${b.start + 1} ${req.method} ${req.target}`;
        if (!ans || !/^(json|csv|text)$/.test(ans.lang) || !/^\d{3}$/.test(ans.arg || '')) {
          check(`${where}: an answer block (json|csv|text STATUS) follows`, UPDATE && false, ans ? `${ans.lang} ${ans.arg}` : 'none');
          continue;
        }
        requests++;
        const events = UPDATE ? 0 : (ans.body.join('\n') + '\n').split('\n\n').length - 1;
        const got = await send(server.port, req, events);
        const lang = (got.type || '').startsWith('application/json') ? 'json'
          : (got.type || '').startsWith('text/csv') ? 'csv' : 'text';
        if (UPDATE) {
          replace.push([ans.start, ans.end, [`\`\`\`${lang} ${got.status}`, ...answerBlock(got, lang)]]);
          k++;
          continue;
        }
        check(`${where}: status ${ans.arg}`, String(got.status) === ans.arg, `got ${got.status}: ${got.text.slice(0, 300)}`);
        check(`${where}: a ${ans.lang} answer`, lang === ans.lang, `got ${got.type}`);
        if (ans.lang === 'json') {
          let want;
          let have;
          try {
            want = scrub(JSON.parse(ans.body.join('\n')));
            have = scrub(JSON.parse(got.text));
          } catch (e) {
            check(`${where}: JSON`, false, String(e));
            k++;
            continue;
          }
          check(`${where}: the answer written in the document`, isDeepStrictEqual(have, want),
            `first difference at ${firstDiff(want, have)}\ndocument ${show(want)}\nserver   ${show(have)}`);
        } else {
          const want = maskText(ans.body.join('\n'));
          const have = maskText(got.text.replace(/\r\n/g, '\n').replace(/\n$/, ''));
          check(`${where}: the answer written in the document`, have === want, `document ${show(want)}\nserver   ${show(have)}`);
        }
        k++;
      } else if (b.lang === 'console') {
        // "$ command" lines, each followed by its output.
        const items = [];
        for (const l of b.body) {
          if (l.startsWith('$ ')) items.push({ cmd: l.slice(2), out: [] });
          else if (items.length) items[items.length - 1].out.push(l);
        }
        const fresh = [];
        for (const it of items) {
          commands++;
          const got = runCommand(it.cmd, env, work);
          fresh.push(`$ ${it.cmd}`, ...(got.length ? got.split('\n') : []));
          if (!UPDATE) {
            const want = maskText(it.out.join('\n'));
            check(`${path.basename(DOC)}:${b.start + 1} $ ${it.cmd}`, maskText(got) === want,
              `document ${show(want)}\nringsim  ${show(maskText(got))}`);
          }
        }
        if (UPDATE) replace.push([b.start, b.end, ['```console', ...fresh]]);
      }
    }
  } finally {
    await server.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  // The reference has every endpoint; the README's walkthrough only commands.
  const [minReq, minCmd] = path.basename(DOC) === 'README.md' ? [0, 10] : [30, 20];
  check(`the document has examples (${requests} requests, ${commands} commands)`, requests >= minReq && commands >= minCmd);
  if (UPDATE) {
    let out = lines.slice();
    for (const [s, e, nl] of replace.sort((a, b) => b[0] - a[0])) out.splice(s, e - s, ...nl);
    fs.writeFileSync(DOC, out.join('\n'));
    console.log(`updated ${replace.length} answers in ${DOC}`);
  }
  finish();
}

main().catch(crashed);
