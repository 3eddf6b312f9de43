// tests/tools_api_test.mjs - the HTTP API's exports and scenario files
// (API.md version 2, "exports" and "scenario files"; docs/api.md).
//
//   node tests/tools_api_test.mjs /path/to/ringsim
//
// Expected values: the JSON answers of the same state (a CSV row must be the
// JSON object, field by field), RFC 4180 as Python's csv module reads and
// writes it (/usr/bin/python3, a parser this project did not write), the
// files of scenarios/, and the state of one server rebuilt on another from
// its exported scenario.  Ends with "N passed, N failed".
//
// Checks docs/api.md, 'Scenarios', 'GET /api/export/scenario', 'CSV'.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  setGroup, finish, crashed, check, eq, enc, WEIRD, withServer, Server, freshDb,
} from './lib/harness.mjs';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCENARIOS = path.join(SRC, 'scenarios');

// Python's csv module reads the document (strict, RFC 4180) and writes it
// back with CRLF and minimal quoting; we get the records and whether the
// bytes were exactly that form.
function pyCsv(text) {
  const code = `
import csv, io, json, sys
text = sys.stdin.buffer.read().decode("utf-8")
records = list(csv.reader(io.StringIO(text, newline=""), strict=True))
again = io.StringIO(newline="")
csv.writer(again, lineterminator="\\r\\n").writerows(records)
json.dump({"records": records, "canonical": again.getvalue() == text}, sys.stdout)
`;
  const r = spawnSync('/usr/bin/python3', ['-c', code], { input: Buffer.from(text, 'utf8') });
  if (r.status !== 0) throw new Error(`python csv: ${r.stderr}`);
  return JSON.parse(r.stdout.toString('utf8'));
}

// The field a JSON value becomes: strings as they are, null empty, the rest
// their JSON text.
function field(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

// Issue 14 item 11, OWASP "CSV Injection": a text cell a spreadsheet would
// run as a formula (= + - @ TAB CR first) is written with a leading ', and
// so is one starting with ' (so that dropping one ' gives the text back);
// a plain decimal number such as a signed token is not touched.
const defuse = (t) => (/^[=+\-@\t\r']/.test(t) && !/^-[0-9]+$/.test(t) ? `'${t}` : t);

// A CSV answer must hold exactly the rows of the JSON answer.
function csvMatches(name, r, rows) {
  check(`${name}: 200`, r.status === 200, `${r.status} ${r.text.slice(0, 200)}`);
  eq(`${name}: Content-Type`, r.headers['content-type'], 'text/csv; charset=utf-8');
  if (!rows.length) {
    eq(`${name}: an empty list is an empty document`, r.text, '');
    return;
  }
  const p = pyCsv(r.text);
  check(`${name}: RFC 4180 exactly (CRLF, minimal quoting)`, p.canonical, JSON.stringify(r.text.slice(0, 300)));
  const [header, ...body] = p.records;
  eq(`${name}: the header is the JSON field names`, header, Object.keys(rows[0]));
  eq(`${name}: one record per object`, body.length, rows.length);
  let bad = 0;
  body.forEach((rec, i) => {
    header.forEach((h, k) => {
      const v = rows[i][h];
      const ok = typeof v === 'number' ? Number(rec[k]) === v
        : v !== null && typeof v === 'object' ? JSON.stringify(JSON.parse(rec[k])) === JSON.stringify(v)
          : rec[k] === (typeof v === 'string' ? defuse(v) : field(v));
      if (!ok && bad++ < 3) check(`${name}: row ${i} field ${h}`, false, `${JSON.stringify(rec[k])} vs ${JSON.stringify(v)}`);
    });
  });
  check(`${name}: every field equals the JSON value`, bad === 0, `${bad} differ`);
}

async function csvGroup() {
  await withServer('format=csv', async (s) => {
    const names = [...WEIRD.filter((n) => n.length < 60), 'comma, "and quotes"', 'ünï <b>html</b> & co'];
    for (const n of names) await s.post('/api/nodes', { name: n });
    await s.put('/api/config', { points_per_node: 3, replicas: 2 });
    await s.post('/api/keys', { generate: { count: 300 } });
    const keys = ['k,1', 'k"2', 'k 3', '=1+2', '-4', 'x,"y",z', ...names.slice(0, 8)];
    await s.post('/api/keys', { keys });
    const rm = await s.del(`/api/nodes/${enc(names[2])}`);
    const op = rm.json.operation.id;

    const nodes = await s.ok('/api/nodes');
    csvMatches('GET /api/nodes?format=csv', await s.get('/api/nodes?format=csv'), nodes.nodes);
    const page = await s.ok('/api/keys?limit=1000');
    csvMatches('GET /api/keys?format=csv', await s.get('/api/keys?format=csv&limit=1000'), page.keys);
    const byNode = await s.ok(`/api/keys?node=${enc(names[0])}&limit=50&offset=2`);
    csvMatches('GET /api/keys?node=&offset=&limit=&format=csv',
      await s.get(`/api/keys?node=${enc(names[0])}&limit=50&offset=2&format=csv`), byNode.keys);
    const ops = await s.ok('/api/operations');
    csvMatches('GET /api/operations?format=csv', await s.get('/api/operations?format=csv'), ops.operations);
    const moves = await s.ok(`/api/operations/${op}`);
    check('the removal moved keys', moves.moves.length > 0);
    csvMatches('GET /api/operations/{id}?format=csv: the moves', await s.get(`/api/operations/${op}?format=csv`), moves.moves);
    csvMatches('GET /api/operations/{id}?format=csv: no moves', await s.get('/api/operations/1?format=csv'), []);
    const past = await s.ok('/api/nodes?at=3');
    csvMatches('GET /api/nodes?at=3&format=csv', await s.get('/api/nodes?at=3&format=csv'), past.nodes);
    eq('format=json is the JSON answer', (await s.get('/api/nodes?format=json')).json, nodes);

    const head = await s.req('HEAD', '/api/nodes?format=csv');
    const get = await s.get('/api/nodes?format=csv');
    eq('HEAD ?format=csv: the length of the GET, no body', [head.status, head.headers['content-length'], head.text],
      [200, String(Buffer.byteLength(get.text)), '']);
    for (const [p, why] of [['/api/nodes?format=xml', 'unknown format'], ['/api/stats?format=csv', 'no list'],
      ['/api/config?format=csv', 'no list'], [`/api/nodes/${enc(names[0])}?format=csv`, 'one node']]) {
      const r = await s.get(p);
      eq(`GET ${p} (${why}): 400 invalid_parameter`, [r.status, r.json && r.json.error.code], [400, 'invalid_parameter']);
    }
    const r = await s.get('/api/operations/999?format=csv');
    eq('an unknown operation as CSV: 404 JSON error', [r.status, r.json && r.json.error.code], [404, 'not_found']);

    // Formulas are defused, and the rule is what the test expects above.
    const formula = await s.get(`/api/keys?format=csv&prefix=${enc('=1')}`);
    check('a key "=1+2" is written \'=1+2', formula.text.includes("\r\n'=1+2,"), JSON.stringify(formula.text));
    const minus = await s.get(`/api/keys?format=csv&prefix=-4`);
    check('a key "-4" (a plain number) is written as it is', minus.text.includes('\r\n-4,'), JSON.stringify(minus.text));

    // API.md version 3: without limit=, every key, streamed; the same rows
    // as the pages of the JSON answer, in the same order.
    const all = [];
    for (let off = 0; ; off += 1000) {
      const pg = await s.ok(`/api/keys?limit=1000&offset=${off}`);
      all.push(...pg.keys);
      if (pg.keys.length < 1000) break;
    }
    check('more keys than one page of the default limit', all.length > 300, String(all.length));
    csvMatches('GET /api/keys?format=csv without limit: every key', await s.get('/api/keys?format=csv'), all);
    const mine = all.filter((k) => k.node === names[0]);
    csvMatches('GET /api/keys?format=csv&node=N without limit: every key of N', await s.get(`/api/keys?format=csv&node=${enc(names[0])}`), mine);
    const ej = await s.get('/api/export/keys?format=json');
    eq('GET /api/export/keys?format=json: 200 JSON', [ej.status, /^application\/json/.test(ej.headers['content-type'])], [200, true]);
    eq('... holds every key, as the pages do', ej.json && ej.json.keys, all);
    eq('... and their total', ej.json && ej.json.total, all.length);
    const ec = await s.get('/api/export/keys?format=csv');
    eq('GET /api/export/keys?format=csv is the same CSV', ec.text, (await s.get('/api/keys?format=csv')).text);
    const eh = await s.req('HEAD', '/api/keys?format=csv');
    eq('HEAD of every key: the length, no body', [eh.status, eh.headers['content-length'], eh.text], [200, String(Buffer.byteLength(ec.text)), '']);
    const ep = await s.get('/api/keys?format=csv&offset=5');
    eq('offset= without limit= is refused', [ep.status, ep.json && ep.json.error.code], [400, 'invalid_parameter']);
    const past3 = await s.ok('/api/keys?at=3&limit=1000');
    csvMatches('every key at=3', await s.get('/api/keys?format=csv&at=3'), past3.keys);
  });
}

async function scenarioGroup() {
  const files = fs.readdirSync(SCENARIOS).filter((f) => f.endsWith('.ringsim')).sort();
  await withServer('scenarios', async (s) => {
    const list = await s.ok('/api/scenarios');
    eq('GET /api/scenarios lists the files of scenarios/', list.scenarios.map((x) => x.name).sort(),
      files.map((f) => f.replace(/\.ringsim$/, '')));
    check('each has a title and a summary', list.scenarios.every((x) => x.title && x.summary), JSON.stringify(list).slice(0, 300));
    for (const f of files) {
      const n = f.replace(/\.ringsim$/, '');
      const one = await s.ok(`/api/scenarios/${enc(n)}`);
      eq(`GET /api/scenarios/${n}: the file's text`, one.text, fs.readFileSync(path.join(SCENARIOS, f), 'utf8'));
      eq(`GET /api/scenarios/${n}: the title of the list`, one.title, list.scenarios.find((x) => x.name === n).title);
    }
    const nf = await s.get('/api/scenarios/nosuch');
    eq('GET /api/scenarios/nosuch: 404', [nf.status, nf.json.error.code], [404, 'not_found']);
    const m = await s.post('/api/scenarios/fill', {});
    eq('POST /api/scenarios/fill: 405', [m.status, m.json.error.code], [405, 'method_not_allowed']);

    // A run: each change one operation, the report names them.
    const text = fs.readFileSync(path.join(SCENARIOS, 'remove.ringsim'), 'utf8');
    const r = await s.post('/api/scenarios/run', { text, name: 'remove.ringsim' });
    eq('POST /api/scenarios/run: 200, ok', [r.status, r.json.ok, r.json.failed], [200, true, null]);
    const ops = await s.allOps();
    const commands = r.json.steps.filter((x) => x.kind === 'command');
    // API.md v3: a configure that changes nothing records no operation (its
    // step says null); every other command step is one, in order.
    const noop = commands.filter((x) => x.operation === null);
    check('only a configure that changes nothing has no operation', noop.every((x) => /^config\b/.test(x.text)),
      JSON.stringify(noop.map((x) => x.text)));
    eq('every other command step is one operation of the history, in order', commands.map((x) => x.operation).filter((o) => o !== null), ops);
    eq('the report counts them', r.json.operations, ops.length);
    eq('the name is the one given', r.json.name, 'remove.ringsim');
    check('expect steps carry stat, op, value, actual, ok', r.json.steps.filter((x) => x.kind === 'expect')
      .every((x) => 'stat' in x && 'op' in x && 'value' in x && 'actual' in x && x.ok === true));

    // A failing expect: 200, ok false, the line; what ran before stays.
    const before = (await s.allOps()).length;
    const f = await s.post('/api/scenarios/run', { text: 'node add zulu\nexpect nodes == 99\nnode add yankee\n' });
    eq('a failing expect: 200 with ok false and the line', [f.status, f.json.ok, f.json.failed && f.json.failed.line,
      f.json.failed && f.json.failed.message], [200, false, 2, 'expected nodes == 99, but nodes is 4']);
    eq('the line before it ran, the line after it did not', (await s.allOps()).length, before + 1);
    const refused = await s.post('/api/scenarios/run', { text: 'node add zulu\n' });
    eq('a refused change: ok false, the step carries the error', [refused.json.ok, refused.json.steps[0].error.code],
      [false, 'conflict']);

    // Syntax errors: 400 invalid_parameter with the line; nothing runs.
    const n0 = (await s.allOps()).length;
    const bad = await s.post('/api/scenarios/run', { text: 'node add a1\n\n# c\nnode frob\n' });
    eq('a syntax error: 400 invalid_parameter naming line 4', [bad.status, bad.json.error.code, bad.json.error.line],
      [400, 'invalid_parameter', 4]);
    check('the message starts with the line', /^line 4: /.test(bad.json.error.message), bad.json.error.message);
    eq('nothing ran', (await s.allOps()).length, n0);
    for (const [body, why] of [[{}, 'no text'], [{ text: 5 }, 'text not a string'], [{ text: 'reset', check: 'yes' }, 'check not a boolean'],
      [{ text: 'reset', name: '' }, 'empty name'], [{ text: '# nothing\n' }, 'no steps']]) {
      const x = await s.post('/api/scenarios/run', body);
      eq(`POST /api/scenarios/run (${why}): 400 invalid_parameter`, [x.status, x.json.error.code], [400, 'invalid_parameter']);
    }
    const nj = await s.post('/api/scenarios/run', '[1]');
    eq('a body that is not an object: 400 invalid_json', [nj.status, nj.json.error.code], [400, 'invalid_json']);

    // check: parse only.
    const c = await s.post('/api/scenarios/run', { text: '# T\n#\n# S.\n\n# a note\nnode add c1\nexpect nodes == 1\n', check: true });
    eq('check: the outline, nothing run', [c.status, c.json.ok, c.json.title, c.json.summary, c.json.steps],
      [200, true, 'T', 'S.', [{ line: 6, text: 'node add c1', kind: 'command', note: 'a note' },
        { line: 7, text: 'expect nodes == 1', kind: 'expect' }]]);
    eq('check records nothing', (await s.allOps()).length, n0);
  });
}

// Build a history through the API, export it, run the export on a fresh
// server: the two states must be the same.
async function exportGroup() {
  setGroup('export/scenario round trip');
  const a = new Server(freshDb());
  const b = new Server(freshDb());
  try {
    await a.start();
    await b.start();
    const names = WEIRD.filter((n) => !n.startsWith('x'));
    for (const [i, n] of names.slice(0, 6).entries()) await a.post('/api/nodes', { name: n, weight: 1 + i / 3 });
    await a.post('/api/nodes', { name: '-dash' });
    await a.post('/api/keys', { generate: { count: 200, prefix: 'p,"q" ', start: 5 } });
    await a.post('/api/keys', { keys: names });
    await a.post('/api/keys', { keys: [names[0]] }); // one key that exists: skipped, not refused
    await a.post('/api/keys', { key: 'solo' });
    await a.del(`/api/keys/${enc(names[1])}`);
    await a.put('/api/config', { points_per_node: 5 });
    const mark = await a.lastOpId();
    await a.del(`/api/nodes/${enc(names[2])}`);
    await a.put('/api/config', { algorithm: 'rendezvous', replicas: 2 });
    await a.post('/api/revert', { to: mark });
    await a.post('/api/keys', { keys: ['after-revert', names[3]] });
    await a.put('/api/config', { algorithm: 'ring', replicas: 3, params: { points_per_node: 2 } });
    await a.post('/api/nodes', { name: 'late', weight: 0.7 });

    const x = await a.get('/api/export/scenario');
    eq('GET /api/export/scenario: 200 text/plain', [x.status, x.headers['content-type']], [200, 'text/plain; charset=utf-8']);
    check('the single-key insert that was skipped is a comment', /^# operation \d+ inserted nothing/m.test(x.text), x.text.slice(0, 2000));
    const r = await b.post('/api/scenarios/run', { text: x.text, name: 'export' });
    eq('the export runs on a fresh server', [r.status, r.json.ok, r.json.failed], [200, true, null]);
    const sa = await a.state();
    const sb = await b.state();
    for (const k of ['nodes', 'keys', 'config', 'ring', 'stats']) eq(`the same ${k}`, sb[k], sa[k]);
    const y = await b.get('/api/export/scenario');
    // (but for the first line, and the comment of the insert that did nothing)
    const body = (t) => t.split('\n').slice(1).filter((l) => !/^# operation \d+ inserted nothing/.test(l));
    eq('the copy exports the same scenario', body(y.text), body(x.text));
    // ?at=ID: the recipe of a past state.
    const past = await a.state(mark);
    const xp = await a.get(`/api/export/scenario?at=${mark}`);
    eq('GET /api/export/scenario?at=ID: 200', xp.status, 200);
    const rp = await b.post('/api/scenarios/run', { text: xp.text });
    eq('the export of a past state runs (on a server that holds another state)', [rp.status, rp.json.ok], [200, true]);
    const sp = await b.state();
    for (const k of ['nodes', 'keys', 'config', 'ring', 'stats']) eq(`the same ${k} as at ${mark}`, sp[k], past[k]);
    const x0 = await a.get('/api/export/scenario?at=0');
    check('?at=0: the empty state', x0.status === 200 && /expect nodes == 0\nexpect keys == 0\n$/.test(x0.text), x0.text.slice(-200));
    const x9 = await a.get('/api/export/scenario?at=9999');
    eq('?at= past the last operation: 404', [x9.status, x9.json && x9.json.error.code], [404, 'not_found']);
    const e = await a.get('/api/export/other');
    eq('GET /api/export/other: 404', [e.status, e.json.error.code], [404, 'not_found']);
    const p = await a.post('/api/export/scenario', {});
    eq('POST /api/export/scenario: 405', p.status, 405);
  } catch (e) {
    check('group ran to the end', false, e && e.stack ? e.stack : String(e));
  } finally {
    await a.stop().catch(() => {});
    await b.stop().catch(() => {});
  }
}

try {
  await csvGroup();
  await scenarioGroup();
  await exportGroup();
  finish();
} catch (e) {
  crashed(e);
}
