// End-to-end browser tests of the ringsim web UI.
//
// For each test group: start `$RINGSIM_BIN serve` on a free port with a fresh
// database and web/ as its document root, wait for GET /api/config, drive
// Debian's Chromium through playwright-core, stop the server. Ends with the
// line "N passed, N failed" and a non-zero exit status if any test failed.
//
//   node tests/browser/run.mjs            (RINGSIM_BIN defaults to build/ringsim)
//   RINGSIM_BIN=/path/to/ringsim node tests/browser/run.mjs [name-filter]

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { registerImportTests } from './import_tests.mjs';
import { registerIssue25Tests } from './issue25_tests.mjs';
import { registerIssue27Tests } from './issue27_tests.mjs';
import { registerTraceTests } from './trace_tests.mjs';
import { registerDomainsTests } from './domains_tests.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.resolve(repo, process.env.RINGSIM_BIN || 'build/ringsim');
// RINGSIM_WEB serves another copy of the page (to see a new test fail on the old page).
const webDir = path.resolve(process.env.RINGSIM_WEB || path.join(repo, 'web'));
const artifacts = path.join(repo, 'test-artifacts');
const filter = process.argv[2] || '';
const axePath = path.join(repo, 'node_modules', 'axe-core', 'axe.min.js');

const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest('hex');
const positionOf = (s) => parseInt(sha256(s).slice(0, 8), 16);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- server ------------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-browser-'));
  const db = path.join(dir, 'test.db');
  const port = await freePort();
  const child = spawn(bin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--db', db, '--web', webDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  let exited = null;
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  child.on('error', (err) => { exited = { error: err.message }; });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15000;
  for (;;) {
    if (exited) throw new Error(`server exited before answering: ${JSON.stringify(exited)}\n${output}`);
    try {
      const r = await fetch(`${base}/api/config`);
      if (r.ok) break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer GET /api/config within 15 s\n${output}`);
    }
    await sleep(100);
  }
  return {
    base,
    db,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        for (let i = 0; i < 30 && !exited; i++) await sleep(100);
        if (!exited) child.kill('SIGKILL');
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
    output: () => output,
  };
}

/** Calls the API directly, as a script or the command line would. */
async function http(server, method, urlPath, body) {
  const init = { method, headers: {} };
  if (method !== 'GET') init.headers['Content-Type'] = 'application/json';
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(server.base + urlPath, init);
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

// ---- helpers -------------------------------------------------------------------

async function eventually(what, fn, timeout = 8000) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v !== false && v !== undefined && v !== null) return v;
      last = new Error(`not yet: ${what}`);
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${last && last.message}`);
    await sleep(100);
  }
}

async function expectText(locator, pattern, what, timeout) {
  return eventually(what || `text ${pattern}`, async () => {
    const t = await locator.textContent();
    const ok = pattern instanceof RegExp ? pattern.test(t) : t.includes(pattern);
    if (!ok) throw new Error(`got ${JSON.stringify(t && t.slice(0, 300))}`);
    return t;
  }, timeout);
}

function nodeRow(page, name) {
  return page.locator(`#nodes-body tr[data-node="${name.replace(/["\\]/g, '\\$&')}"]`);
}

/** Text of the named column of a table row (cells carry data-col). */
async function cell(row, col) {
  return row.locator(`td[data-col="${col}"]`).textContent();
}

async function nodeNamesInTable(page) {
  return page.$$eval('#nodes-body tr[data-node]', (rows) => rows.map((r) => r.dataset.node));
}

/** The nodes labelled on the ring (data-node: the full name; the text may be cut). */
async function ringLabels(page) {
  return page.$$eval('#ring-svg text.node-label', (ts) => ts.map((t) => t.dataset.node));
}

async function openPage(browser, server, errors, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, ...options });
  const page = await context.newPage();
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console error: ${msg.text()}`);
  });
  await page.goto(server.base + '/');
  await page.locator('#connection[data-state="live"]').waitFor({ timeout: 10000 });
  return page;
}

async function addNode(page, name) {
  await page.getByLabel('Node name', { exact: true }).fill(name);
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await eventually(`node ${name} in the table`, async () => (await nodeNamesInTable(page)).includes(name));
}

// ---- tests ------------------------------------------------------------------------

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('page loads with the required controls and no console errors', async ({ page, errors }) => {
  for (const label of ['Node name', 'Weight', 'Key', 'Number of keys', 'Algorithm', 'Points per node', 'Replicas', 'Look up key', 'Timeline']) {
    assert.equal(await page.getByLabel(label, { exact: true }).count(), 1, `one control labelled ${label}`);
  }
  for (const name of ['Add node', 'Remove node', 'Insert key', 'Delete key', 'Generate keys', 'Reset', 'Apply']) {
    assert.equal(await page.getByRole('button', { name, exact: true }).count(), 1, `one button named ${name}`);
  }
  assert.equal(await page.getByLabel('Number of keys', { exact: true }).getAttribute('type'), 'number');
  assert.equal(await page.getByLabel('Timeline', { exact: true }).getAttribute('type'), 'range');
  assert.deepEqual(errors, []);
});

test('a parameter chosen by name is a list: twemproxy\'s hash', async ({ page, server }) => {
  await page.selectOption('#algorithm', 'twemproxy');
  const hash = page.locator('#param-hash');
  await eventually('the hash parameter is drawn', async () => (await hash.count()) === 1);
  assert.equal(await hash.evaluate((e) => e.tagName), 'SELECT', 'a select, not a number box');
  const names = await hash.locator('option').allTextContents();
  const catalogue = (await http(server, 'GET', '/api/config')).body.algorithms.find((a) => a.name === 'twemproxy');
  assert.deepEqual(names, catalogue.params.find((p) => p.name === 'hash').values, 'every hash nutcracker offers');
  assert.equal(await hash.inputValue(), 'fnv1a_64', 'the default is chosen');
  await hash.selectOption('crc32');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await eventually('twemproxy with crc32 applied', async () => {
    const c = (await http(server, 'GET', '/api/config')).body;
    return c.algorithm === 'twemproxy' && c.params.hash === 'crc32';
  });
});

test('add and remove nodes through the form', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  const row = nodeRow(page, 'alpha');
  assert.equal((await cell(row, 'position')).replace(/,/g, ''), String(positionOf('alpha')), 'position column is SHA-256 based');
  await eventually('ring labels alpha and bravo', async () => {
    const labels = await ringLabels(page);
    return labels.includes('alpha') && labels.includes('bravo');
  });
  await page.getByLabel('Node name', { exact: true }).fill('alpha');
  await page.getByRole('button', { name: 'Remove node', exact: true }).click();
  await eventually('alpha gone from the table', async () => !(await nodeNamesInTable(page)).includes('alpha'));
  await eventually('alpha gone from the ring', async () => !(await ringLabels(page)).includes('alpha'));
  const { body } = await http(server, 'GET', '/api/nodes');
  assert.deepEqual(body.nodes.map((n) => n.name), ['bravo']);
});

test('a weight typed next to the node name gives the node its points', async ({ page, server }) => {
  await page.getByLabel('Points per node', { exact: true }).fill('4');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await eventually('points per node applied', async () =>
    (await http(server, 'GET', '/api/config')).body.points_per_node === 4);
  await page.getByLabel('Node name', { exact: true }).fill('heavy');
  await page.getByLabel('Weight', { exact: true }).fill('2.5');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await eventually('heavy in the table', async () => (await nodeNamesInTable(page)).includes('heavy'));
  // The weight itself (the cell also holds its "Change" button).
  assert.equal(await nodeRow(page, 'heavy').locator('td[data-col="weight"] .weight-value').textContent(), '2.5', 'weight column');
  assert.equal(await cell(nodeRow(page, 'heavy'), 'points'), '10', 'points = round(4 × 2.5)');
  const { body } = await http(server, 'GET', '/api/nodes/heavy');
  assert.equal(body.weight, 2.5);
  assert.equal(body.points, 10);
  // A weight the server refuses is explained next to the control.
  await page.getByLabel('Node name', { exact: true }).fill('weightless');
  await page.getByLabel('Weight', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await expectText(page.locator('#weight-error'), /[Ww]eight/, 'weight error next to the weight field');
  assert.equal(await page.locator('#node-error').textContent(), '', 'not on the name field');
  assert.equal(await page.getByLabel('Weight', { exact: true }).getAttribute('aria-invalid'), 'true');
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 1);
});

test('insert and delete keys through the form, names with URL characters', async ({ page, server }) => {
  await addNode(page, 'alpha');
  const odd = 'user/42 %20#frag?x=1 "q"';
  for (const key of ['k1', odd]) {
    await page.getByLabel('Key', { exact: true }).fill(key);
    await page.getByRole('button', { name: 'Insert key', exact: true }).click();
    await eventually(`key ${key} in the keys table`, async () => {
      const rows = await page.$$eval('#keys-body tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      return rows.some((r) => r[0] === key && r[2] === 'alpha' && r[1].replace(/,/g, '') === String(positionOf(key)));
    });
  }
  const { body } = await http(server, 'GET', `/api/keys/${encodeURIComponent(odd)}`);
  assert.equal(body.key, odd);
  await page.getByLabel('Key', { exact: true }).fill(odd);
  await page.getByRole('button', { name: 'Delete key', exact: true }).click();
  await eventually('odd key gone', async () => {
    const keys = await page.$$eval('#keys-body tr td:first-child', (tds) => tds.map((t) => t.textContent));
    return !keys.includes(odd) && keys.includes('k1');
  });
  assert.equal((await http(server, 'GET', `/api/keys/${encodeURIComponent(odd)}`)).status, 404);
  // Keys are drawn as dots on the canvas: the ring caption counts them.
  await expectText(page.locator('#ring-mode'), /1 keys? drawn as dots/);
});

test('moved-keys summary after adding a node to a loaded ring', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  await page.getByLabel('Number of keys', { exact: true }).fill('500');
  await page.getByRole('button', { name: 'Generate keys', exact: true }).click();
  await expectText(page.locator('#keys-count'), '500 keys');
  await expectText(page.locator('#moved-summary'), /^0 keys moved$/, 'zero moves after inserting keys');
  await addNode(page, 'charlie');
  const ops = (await http(server, 'GET', '/api/operations')).body.operations;
  const op = ops[ops.length - 1];
  assert.equal(op.type, 'add_node');
  await expectText(page.locator('#moved-summary'), new RegExp(`^${op.keys_moved.toLocaleString('en-US')} keys? moved`));
  if (op.keys_moved > 0) {
    // Who gave how many keys to whom: a table, largest first, equal to the operation's moved_from.
    const rows = await eventually('pairs table', async () => {
      const r = await page.$$eval('#moved-pairs table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      return r.length ? r : false;
    });
    assert.ok(rows.every((r) => r[1] === 'charlie' && ['alpha', 'bravo'].includes(r[0])), JSON.stringify(rows));
    const counts = rows.map((r) => Number(r[2].replace(/,/g, '')));
    assert.equal(counts.reduce((a, b) => a + b, 0), op.keys_moved);
    assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'largest first');
    const expected = new Map(op.moved_from.map((f) => [f.node, f.keys]));
    for (const r of rows) assert.equal(Number(r[2].replace(/,/g, '')), expected.get(r[0]));
  }
  // Before/after statistics of the last change.
  await expectText(page.locator('#moved-compare'), /Nodes\s*23/);
});

test('load view: a workload set in the page, requests per node, the bound, the hottest key, the ring shaded by requests, a join in words', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 400 } })).status, 201);
  await expectText(page.locator('#keys-count'), '400 keys');
  await page.locator('#load-kind').selectOption('zipf');
  await page.locator('#load-s').fill('1.2');
  await page.getByRole('button', { name: 'Set workload', exact: true }).click();
  await expectText(page.locator('#load-workload'), 'Zipf s = 1.2', 'the workload described');
  const w = (await http(server, 'GET', '/api/workload')).body;
  assert.deepEqual([w.kind, w.s, w.order], ['zipf', 1.2, 'hashed'], 'the page set the workload');
  const st = (await http(server, 'GET', '/api/stats')).body;
  const rq = st.requests;
  const fmt = (x) => x.toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
  await expectText(page.locator('#load-numbers'), `Max / mean${fmt(rq.max_over_mean)}`, 'requests max/mean');
  await expectText(page.locator('#load-numbers'), `Bound${fmt(rq.bound)}`, 'the bound');
  await expectText(page.locator('#load-numbers'), `${rq.hottest_key.key} · ${(rq.hottest_key.share * 100).toFixed(2)}%`, 'the hottest key and its share');
  const bars = await page.$$eval('#load-bars .bar-row .v-keys', (xs) => xs.map((x) => x.textContent));
  assert.equal(bars.length, 2, 'one bar per node');
  for (const p of st.per_node) assert.ok(bars.some((b) => b.startsWith(`requests ${(p.requests * 100).toFixed(1)}`)), `${p.name} ${p.requests} in ${bars}`);
  // The ring's band by requests differs from the band by keys.
  const before = await page.$eval('#ring-base', (c) => c.toDataURL());
  await page.locator('#load-shade').check();
  await expectText(page.locator('#ring-legend-text'), 'requests against the mean');
  const after = await eventually('the ring redrawn', async () => {
    const d = await page.$eval('#ring-base', (c) => c.toDataURL());
    return d !== before ? d : false;
  });
  assert.ok(after !== before);
  // A join: the share of requests that now go to a cold server, in words.
  await addNode(page, 'charlie');
  const ops = (await http(server, 'GET', '/api/operations')).body.operations;
  const op = ops[ops.length - 1];
  assert.equal(op.type, 'add_node');
  assert.ok(op.keys_moved > 0 && op.requests_moved > 0, JSON.stringify(op));
  await expectText(page.locator('#moved-requests'), `Adding charlie sends ${(op.requests_moved * 100).toFixed(1)}% of requests to a cold server.`);
  // A refused workload: the server's message beside the form, nothing changed.
  await page.locator('#load-s').fill('0');
  await page.getByRole('button', { name: 'Set workload', exact: true }).click();
  await expectText(page.locator('#load-error'), /s must be/);
  assert.equal((await http(server, 'GET', '/api/workload')).body.s, 1.2);
});

test('a duplicate node name shows the server error next to the control', async ({ page }) => {
  await addNode(page, 'alpha');
  await page.getByLabel('Node name', { exact: true }).fill('alpha');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  const error = page.locator('#node-error');
  await expectText(error, /already exists/);
  assert.match(await error.textContent(), /alpha/);
  assert.equal(await page.getByLabel('Node name', { exact: true }).getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#key-error').textContent(), '', 'other controls show no error');
  // Bad input is explained by the server, next to the control that sent it.
  await page.getByLabel('Points per node', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  // Next to the field, in the words on screen (not the API's points_per_node).
  await expectText(page.locator('#param-points_per_node-error'), /^Points per node must be .*10,000/);
  assert.equal(await page.getByLabel('Points per node', { exact: true }).getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Number of keys', { exact: true }).fill('10000001');
  await page.getByRole('button', { name: 'Generate keys', exact: true }).click();
  await expectText(page.locator('#generate-form [role="alert"]'), /^Number of keys must be .*10,000,000/);
  await page.getByLabel('Key', { exact: true }).fill('never-stored');
  await page.getByRole('button', { name: 'Delete key', exact: true }).click();
  await expectText(page.locator('#key-form [role="alert"]'), /never-stored/);
  // The error goes away once the control succeeds.
  await addNode(page, 'bravo');
  await expectText(error, /^$/);
});

test('two tabs stay in sync through server-sent events', async ({ page, browser, server, errors }) => {
  const other = await openPage(browser, server, errors);
  await addNode(page, 'alpha');
  await eventually('second tab sees alpha', async () => (await nodeNamesInTable(other)).includes('alpha'));
  await other.getByLabel('Key', { exact: true }).fill('from-tab-2');
  await other.getByRole('button', { name: 'Insert key', exact: true }).click();
  await expectText(page.locator('#keys-body'), 'from-tab-2', 'first tab sees the key');
  await expectText(page.locator('#history-list'), 'from-tab-2', 'first tab history');
  await other.context().close();
});

test('a change made directly through the HTTP API appears without reload', async ({ page, server }) => {
  const before = await page.evaluate(() => { window.__marker = 'same page'; return window.__marker; });
  const r = await http(server, 'POST', '/api/nodes', { name: 'cli-node' });
  assert.equal(r.status, 201);
  await eventually('cli-node in table', async () => (await nodeNamesInTable(page)).includes('cli-node'));
  await eventually('cli-node on the ring', async () => (await ringLabels(page)).includes('cli-node'));
  assert.equal((await http(server, 'POST', '/api/keys', { keys: ['a', 'b', 'c'] })).status, 201);
  await expectText(page.locator('#keys-count'), '3 keys');
  assert.equal(await page.evaluate(() => window.__marker), before, 'no reload happened');
});

test('a change made with the command line appears without reload', async ({ page, server }) => {
  await page.evaluate(() => { window.__marker = 'same page'; });
  const run = (...args) => new Promise((resolve) => {
    const child = spawn(bin, [...args, '--db', server.db], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => resolve({ code, out }));
  });
  const added = await run('node', 'add', 'from-cli');
  assert.equal(added.code, 0, added.out);
  await eventually('from-cli in the table', async () => (await nodeNamesInTable(page)).includes('from-cli'), 5000);
  const keys = await run('key', 'add', 'cli-k1', 'cli-k2');
  assert.equal(keys.code, 0, keys.out);
  await expectText(page.locator('#keys-count'), '2 keys', 'CLI keys', 5000);
  await expectText(page.locator('#history-list'), 'from-cli');
  assert.equal(await page.evaluate(() => window.__marker), 'same page', 'no reload happened');
});

test('timeline shows a past state, read-only, and "Revert to here"', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  await addNode(page, 'charlie');
  const timeline = page.getByLabel('Timeline', { exact: true });
  await eventually('timeline max is 3', async () => (await timeline.getAttribute('max')) === '3');
  await timeline.fill('1');
  await page.locator('#past-banner').waitFor({ state: 'visible' });
  await expectText(page.locator('#past-banner'), /after operation #1/);
  await eventually('past table has alpha only', async () => {
    const names = await nodeNamesInTable(page);
    return names.length === 1 && names[0] === 'alpha';
  });
  assert.equal(await page.getByRole('button', { name: 'Add node', exact: true }).isDisabled(), true, 'read-only');
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'ui-past.png') });
  // Back to live and again into the past.
  await page.getByRole('button', { name: 'Back to live' }).click();
  await eventually('live again', async () => (await nodeNamesInTable(page)).length === 3);
  await timeline.fill('1');
  await page.getByRole('button', { name: 'Revert to here', exact: true }).click();
  await page.locator('#past-banner').waitFor({ state: 'hidden' });
  await eventually('reverted to alpha only', async () => {
    const names = await nodeNamesInTable(page);
    return names.length === 1 && names[0] === 'alpha';
  });
  const ops = (await http(server, 'GET', '/api/operations')).body.operations;
  assert.equal(ops[ops.length - 1].type, 'revert');
  assert.deepEqual((await http(server, 'GET', '/api/nodes')).body.nodes.map((n) => n.name), ['alpha']);
  assert.equal(await page.getByRole('button', { name: 'Add node', exact: true }).isDisabled(), false);
  await expectText(page.locator('#history-list li').first(), /#4/);
});

test('between two points: pick two operations in the history, read what changed', async ({ page, server }) => {
  const odd = 'q"<é/%#? x';
  await addNode(page, 'alpha'); // 1
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 600 } })).status, 201); // 2
  assert.equal((await http(server, 'POST', '/api/nodes', { name: odd })).status, 201); // 3
  await addNode(page, 'bravo'); // 4
  await expectText(page.locator('#history-list li').first(), /#4/);
  const compare = (id) => page.getByRole('button', { name: `Compare from or to the state after #${id}`, exact: true });
  await compare(2).click();
  await expectText(page.locator('#diff-picked'), 'From #2: pick a second point.');
  await compare(4).click();
  assert.equal(await compare(2).getAttribute('aria-pressed'), 'true');
  assert.equal(await compare(4).getAttribute('aria-pressed'), 'true');
  const want = (await http(server, 'GET', '/api/diff?from=2&to=4')).body;
  assert.ok(want.keys_moved > 0, 'keys moved from alpha');
  await page.locator('#diff-result').waitFor({ state: 'visible' });
  await expectText(page.locator('#diff-status'), 'From #2 to #4: composed from the log.');
  const field = (name) => page.locator(`#diff-counts dd[data-field="${name}"]`);
  // formatInt may group digits: the digits are the count.
  await eventually('keys moved on screen', async () => (await field('keys moved').textContent()).replace(/\D/g, '') === String(want.keys_moved));
  assert.equal((await field('keys added').textContent()).replace(/\D/g, ''), '0');
  assert.equal(await field('nodes added').textContent(), [odd, 'bravo'].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).join(', '));
  assert.equal(await field('nodes removed').textContent(), 'none');
  assert.equal(await field('configuration').textContent(), 'unchanged');
  await expectText(field('moved from'), 'alpha');
  const shown = await page.$$eval('#diff-moves li', (xs) => xs.map((x) => x.textContent));
  assert.equal(shown.length, want.moves.length);
  assert.equal(shown[0], `${want.moves[0].key} : ${want.moves[0].from} → ${want.moves[0].to}`);
  // The empty start, and the other way round: keys added, nothing moved.
  await compare(2).click(); // unpicked: from #4
  await page.getByRole('button', { name: 'Pick the empty start (#0)', exact: true }).click();
  await expectText(page.locator('#diff-status'), 'From #4 to #0');
  await expectText(field('keys removed'), /600/);
  await expectText(field('nodes removed'), 'alpha');
  // A bad pair: the server's words on screen (no such operation here is
  // impossible from the list, so clear instead and see the result go).
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await page.locator('#diff-result').waitFor({ state: 'hidden' });
  await expectText(page.locator('#diff-picked'), 'Nothing picked yet.');
});

test('a node name containing HTML is shown as text and never run', async ({ page, server }) => {
  const evil = '<img src=x onerror=window.__xss=1>';
  await addNode(page, evil);
  assert.equal(await page.locator('#nodes-body img').count(), 0);
  assert.equal(await page.locator('img').count(), 0, 'no img element anywhere');
  await eventually('label on the ring', async () => (await ringLabels(page)).includes(evil));
  // Cut on the ring with an ellipsis, the full name in its title.
  const label = page.locator('#ring-svg text.node-label').first();
  assert.equal(await label.locator('title').textContent(), evil);
  await page.getByLabel('Key', { exact: true }).fill('<b>bold</b>');
  await page.getByRole('button', { name: 'Insert key', exact: true }).click();
  await expectText(page.locator('#keys-body'), '<b>bold</b>');
  await expectText(page.locator('#history-list'), evil);
  assert.equal(await page.locator('#keys-body b').count(), 0);
  await sleep(300);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal((await http(server, 'GET', `/api/nodes/${encodeURIComponent(evil)}`)).body.name, evil);
});

/** The trace as the page lists it: [title, detail] per step. */
async function traceSteps(page) {
  return page.$$eval('#lookup-steps > li', (lis) => lis.map((li) => [
    li.querySelector('.step-title')?.textContent, li.lastChild.textContent,
  ]));
}

test('lookup trace shows the server\'s steps, the owner and the preference list', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  const key = 'user:1001';
  await page.getByLabel('Look up key', { exact: true }).fill(key);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  const api = (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent(key)}`)).body;
  // The owner by the contract's rule (SHA-256 position, first point at or after it).
  const points = ['alpha', 'bravo'].map((n) => ({ n, p: positionOf(n) })).sort((a, b) => a.p - b.p);
  const succ = points.find((x) => x.p >= positionOf(key)) || points[0];
  assert.equal(api.node, succ.n);
  await expectText(page.locator('#lookup-result'), `“${key}” → ${succ.n}`);
  const steps = await eventually('trace steps', async () => {
    const st = await traceSteps(page);
    return st.length >= api.trace.length ? st : false;
  });
  // Every step of the server's trace, in its words and order; the page adds none of its own.
  assert.deepEqual(steps.slice(0, api.trace.length).map((x) => x[1]), api.trace.map((t) => t.detail));
  assert.ok(api.trace[0].detail.includes(String(positionOf(key))), 'the server speaks of the SHA-256 position');
  // With replicas, the preference list (owner first) is the server's.
  assert.equal((await http(server, 'PUT', '/api/config', { replicas: 2 })).status, 200);
  await expectText(page.locator('#ring-mode'), '2 replicas');
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  const list = await eventually('preference list', async () => {
    const items = await page.$$eval('#lookup-steps ol.replicas li', (lis) => lis.map((li) => li.textContent));
    return items.length === 2 ? items : false;
  });
  assert.deepEqual(list, (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent(key)}`)).body.replicas);
});

test('reset asks for confirmation in the page', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor({ state: 'visible' });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 1, 'cancel keeps the ring');
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await dialog.getByRole('button', { name: /reset/i }).click();
  await eventually('table empty', async () => (await nodeNamesInTable(page)).length === 0);
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 0);
});

test('points per node, sortable nodes table, keys filter and paging', async ({ page }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  await addNode(page, 'charlie');
  await page.getByLabel('Points per node', { exact: true }).fill('10');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await eventually('10 points per node', async () => {
    const pts = await page.$$eval('#nodes-body tr td[data-col="points"]', (tds) => tds.map((td) => td.textContent));
    return pts.length === 3 && pts.every((p) => p === '10');
  });
  // With several points a node has no single position: the table sorts by name.
  assert.equal(await page.locator('#nodes-table th[data-col="position"]').isVisible(), false);
  assert.equal(await page.locator('#nodes-table th[data-sort="name"]').getAttribute('aria-sort'), 'ascending');
  assert.deepEqual(await nodeNamesInTable(page), ['alpha', 'bravo', 'charlie']);
  await page.locator('#nodes-table th[data-sort="name"] button').click();
  assert.deepEqual(await nodeNamesInTable(page), ['charlie', 'bravo', 'alpha']);
  assert.equal(await page.locator('#nodes-table th[data-sort="name"]').getAttribute('aria-sort'), 'descending');

  await page.getByLabel('Number of keys', { exact: true }).fill('120');
  await page.getByRole('button', { name: 'Generate keys', exact: true }).click();
  await expectText(page.locator('#keys-count'), '120 keys');
  await expectText(page.locator('#keys-page'), '1–50 of 120');
  await page.getByRole('button', { name: 'More keys' }).click();
  await expectText(page.locator('#keys-page'), '51–100 of 120');
  await page.getByLabel('Search keys by prefix').fill('key-11');
  await expectText(page.locator('#keys-count'), /^11 keys match$/); // key-11, key-110..119
  await page.getByLabel('Search keys by prefix').fill('');
  await page.getByLabel('Filter by node').selectOption('bravo');
  const owners = await eventually('only bravo keys', async () => {
    const o = await page.$$eval('#keys-body tr td[data-col="node"]', (tds) => tds.map((td) => td.textContent));
    return o.length && o.every((x) => x === 'bravo') ? o : false;
  });
  assert.ok(owners.length > 0);
});

test('scenario: nodes, then many keys', async ({ page, server }) => {
  await page.getByRole('button', { name: /Nodes, then many keys/ }).click();
  const outcome = await expectText(page.locator('#scenario-outcome'), /busiest node/, 'scenario outcome', 30000);
  const stats = (await http(server, 'GET', '/api/stats')).body;
  assert.equal(stats.nodes, 5);
  assert.equal(stats.keys, 10000);
  const top = [...stats.per_node].sort((a, b) => b.keys - a.keys)[0];
  assert.ok(outcome.includes(top.name), `the outcome names the busiest node ${top.name}`);
  const names = (await http(server, 'GET', '/api/nodes')).body.nodes.map((n) => n.name).sort();
  assert.deepEqual(names, ['alpha', 'bravo', 'charlie', 'delta', 'echo']);
});

test('scenario: grow a loaded ring moves keys only to the newcomer', async ({ page, server }) => {
  await page.getByRole('button', { name: /Grow a loaded ring/ }).click();
  const outcome = await expectText(page.locator('#scenario-outcome'), /changed owner/, 'scenario outcome', 30000);
  assert.match(outcome, /✓ all went to/);
  const ops = (await http(server, 'GET', '/api/operations?limit=1000')).body.operations;
  const last = ops[ops.length - 1];
  assert.equal(last.type, 'add_node');
  const detail = (await http(server, 'GET', `/api/operations/${last.id}`)).body;
  assert.ok(detail.moves.length > 0, 'a loaded ring gives the newcomer keys');
  assert.ok(detail.moves.every((m) => m.to === last.subject), 'every move goes to the new node');
  assert.ok(outcome.includes(`${detail.moves_total.toLocaleString('en-US')} of`), 'the outcome counts the moves');
});

test('scenario: remove a node and only its keys move', async ({ page, server }) => {
  await page.getByRole('button', { name: /Take a node away/ }).click();
  const outcome = await expectText(page.locator('#scenario-outcome'), /./, 'scenario outcome', 30000);
  assert.match(outcome, /^✓/);
  const ops = (await http(server, 'GET', '/api/operations')).body.operations;
  const last = ops[ops.length - 1];
  assert.equal(last.type, 'remove_node');
  assert.ok(last.moved_from.every((m) => m.node === last.subject));
  await expectText(page.locator('#moved-summary'), new RegExp(`^${last.keys_moved.toLocaleString('en-US')} keys moved`));
  await eventually('pairs all from the removed node', async () => {
    const from = await page.$$eval('#moved-pairs tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
    return from.length > 0 && from.every((f) => f === last.subject);
  });
});

/** Page coordinates of a ring position at `fraction` × the ring radius. */
async function ringPoint(page, position, fraction = 1) {
  await page.locator('#ring-overlay').scrollIntoViewIfNeeded();
  const box = await page.locator('#ring-overlay').boundingBox();
  const a = (position / 2 ** 32) * 2 * Math.PI - Math.PI / 2;
  const r = box.width * 0.37 * fraction;
  return { x: box.x + box.width / 2 + Math.cos(a) * r, y: box.y + box.height / 2 + Math.sin(a) * r };
}

/** Owner of a key on a ring of single-point nodes, by the contract's rule. */
function ownerOf(key, nodes) {
  const pts = nodes.map((n) => ({ n, p: positionOf(n) })).sort((a, b) => a.p - b.p || (a.n < b.n ? -1 : 1));
  const kp = positionOf(key);
  return (pts.find((x) => x.p >= kp) || pts[0]).n;
}

test('ring hover, key click traces, history lists the moves, table row traces', async ({ page, server }) => {
  // A key that moves from alpha to bravo when bravo joins.
  let soloKey = null;
  for (let i = 0; !soloKey; i++) if (ownerOf(`solo-${i}`, ['alpha', 'bravo']) === 'bravo') soloKey = `solo-${i}`;
  await addNode(page, 'alpha');
  await page.getByLabel('Key', { exact: true }).fill(soloKey);
  await page.getByRole('button', { name: 'Insert key', exact: true }).click();
  await expectText(page.locator('#keys-count'), /^1 key$/);
  // Hover the node's point: name, coordinate and owner.
  const p = await ringPoint(page, positionOf('alpha'));
  await page.mouse.move(p.x, p.y);
  const tip = await expectText(page.locator('#ring-tooltip'), 'alpha');
  assert.ok(tip.includes(positionOf('alpha').toLocaleString('en-US')), tip);
  assert.match(tip, /owner: alpha/);
  // Click the key's dot: the trace of that key, from the server.
  const kpos = positionOf(soloKey);
  const g = await page.locator('#ring-overlay').boundingBox();
  const R = g.width * 0.37;
  const band = Math.max(8, g.width * 0.024);
  const loadW = Math.max(4, g.width * 0.012);
  const keyOuter = R - band / 2 - loadW - 1.5 - 5;
  const jitter = (kpos & 3) * 3.5;
  const k = await ringPoint(page, kpos, (keyOuter - 3 - jitter) / R);
  await page.mouse.click(k.x, k.y);
  await expectText(page.locator('#ring-selection'), soloKey);
  await expectText(page.locator('#lookup-result'), `“${soloKey}” → alpha`);
  // Add a node: the history entry lists the moves on click.
  await addNode(page, 'bravo');
  await addNode(page, 'charlie');
  const ops = await page.$$eval('#history-list li .op-what', (xs) => xs.map((x) => x.textContent));
  assert.equal(ops[0], 'Added node charlie', 'newest first');
  assert.equal(ops[ops.length - 1], 'Added node alpha');
  const bravoEntry = page.locator('#history-list li', { hasText: 'Added node bravo' });
  const movesButton = bravoEntry.locator('button[aria-expanded]');
  assert.equal(await movesButton.textContent(), '1 moved (from alpha 1)');
  // The list is drawn again as the server's events arrive (the answer to the
  // add, then its event): a click that lands on the list being replaced is
  // lost, and is given again to the list as it now is.
  await movesButton.click();
  await eventually('the moves open', async () => {
    if ((await movesButton.getAttribute('aria-expanded')) === 'true') return true;
    await movesButton.click();
    return false;
  });
  await expectText(bravoEntry.locator('.op-detail'), `${soloKey} : alpha → bravo`);
  assert.equal(await movesButton.getAttribute('aria-expanded'), 'true');
  // A keys table row runs the lookup trace: the server's first step.
  await page.locator('#keys-body tr', { hasText: soloKey }).click();
  const api = (await http(server, 'GET', `/api/lookup?key=${soloKey}`)).body;
  await expectText(page.locator('#lookup-steps'), api.trace[0].detail);
  assert.equal(await page.getByLabel('Look up key', { exact: true }).inputValue(), soloKey);
});

test('scenario: similar names land far apart (after an in-page confirmation)', async ({ page, server }) => {
  await addNode(page, 'existing');
  await page.getByRole('button', { name: /Similar names/ }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor({ state: 'visible' });
  await expectText(dialog, /1 nodes and 0 keys/);
  await dialog.getByRole('button', { name: /reset/i }).click();
  const outcome = await expectText(page.locator('#scenario-outcome'), /Angles/, 'scenario outcome', 30000);
  for (const n of ['node-1', 'node-2', 'node-3']) {
    assert.ok(outcome.includes(`${n} ${((positionOf(n) / 2 ** 32) * 360).toFixed(1)}°`), `${n} angle in ${outcome}`);
  }
  const nodes = (await http(server, 'GET', '/api/nodes')).body.nodes.map((n) => n.name).sort();
  assert.deepEqual(nodes, ['node-1', 'node-2', 'node-3']);
  assert.equal((await http(server, 'GET', '/api/stats')).body.keys, 3000);
});

test('screenshot of a loaded ring, light and dark', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie', 'delta', 'echo']) {
    assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  }
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 800 } })).status, 201);
  await expectText(page.locator('#keys-count'), '800 keys');
  await addNode(page, 'foxtrot');
  await expectText(page.locator('#moved-pairs'), /foxtrot/);
  await page.getByLabel('Look up key', { exact: true }).fill('key-7');
  await page.getByRole('button', { name: 'Look up', exact: true }).click();
  await expectText(page.locator('#lookup-steps'), 'Owner');
  await sleep(1800); // let the moved keys settle
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'ui.png'), fullPage: true });
  await page.getByRole('button', { name: 'Dark theme' }).click();
  await eventually('dark theme', async () => (await page.getAttribute('html', 'data-theme')) === 'dark');
  await page.screenshot({ path: path.join(artifacts, 'ui-dark.png'), fullPage: true });
  assert.ok(fs.statSync(path.join(artifacts, 'ui.png')).size > 10000);
});

// Size of the large-ring test; RINGSIM_LARGE="nodes,keys" overrides it.
const [LARGE_NODES, LARGE_KEYS] = (process.env.RINGSIM_LARGE || '1000,1000000').split(',').map(Number);
// The goal is no task over 200 ms; the test allows for a busy shared machine.
const LONG_TASK_LIMIT = Number(process.env.RINGSIM_LONG_TASK_MS || 1000);

/** Starts collecting the page's long tasks (main-thread work over 50 ms). */
async function watchLongTasks(page) {
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
    }).observe({ type: 'longtask', buffered: true });
  });
}

/** The long tasks since the last call, longest first. */
async function takeLongTasks(page) {
  return page.evaluate(() => window.__longTasks.splice(0).sort((a, b) => b - a));
}

test('large ring: 1000 nodes and 1M keys stay responsive (density band, paging)', async ({ page, server }) => {
  await watchLongTasks(page);
  const t00 = Date.now();
  for (let i = 0; i < LARGE_NODES; i++) {
    const a = await http(server, 'POST', '/api/nodes', { name: `n${i}` });
    assert.equal(a.status, 201);
  }
  if (process.env.RINGSIM_TRACE) console.log(`     nodes added after ${Date.now() - t00} ms`);
  const r = await http(server, 'POST', '/api/keys', { generate: { count: LARGE_KEYS } });
  if (process.env.RINGSIM_TRACE) console.log(`     keys added after ${Date.now() - t00} ms`);
  assert.equal(r.status, 201);
  assert.equal(r.body.inserted, LARGE_KEYS);
  await expectText(page.locator('#ring-mode'), `${LARGE_KEYS.toLocaleString('en-US')} keys drawn as a density band`, 'density mode', 60000);
  if (process.env.RINGSIM_TRACE) console.log(`     density shown after ${Date.now() - t00} ms`);
  await expectText(page.locator('#nodes-count'), `${LARGE_NODES.toLocaleString('en-US')} nodes`, 'nodes count', 30000);
  await expectText(page.locator('#keys-page'), `1–50 of ${LARGE_KEYS.toLocaleString('en-US')}`, 'keys page', 30000);
  await sleep(1500); // let "What moved" finish its details
  const loadTasks = await takeLongTasks(page);
  // A node added through the form: how soon the page shows it, and what it costs the main thread.
  let t1 = Date.now();
  await page.getByLabel('Node name', { exact: true }).fill('late-comer');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await expectText(page.locator('#moved-operation'), 'Added node late-comer', 'what moved', 10000);
  const movedAfter = Date.now() - t1;
  await expectText(page.locator('#nodes-count'), `${(LARGE_NODES + 1).toLocaleString('en-US')} nodes`, 'nodes count', 30000);
  const shownAfter = Date.now() - t1;
  await sleep(1500);
  const addTasks = await takeLongTasks(page);
  // A prefix search over the keys.
  t1 = Date.now();
  await page.getByLabel('Search keys by prefix').fill('key-99999');
  // key-99999, key-999990…, key-9999900… as far as the keys go.
  let matching = 0;
  for (let lo = 99999, n = 1; lo < LARGE_KEYS; lo *= 10, n *= 10) matching += Math.min(n, LARGE_KEYS - lo);
  await expectText(page.locator('#keys-count'), new RegExp(`^${matching.toLocaleString('en-US')} keys? match$`), 'prefix search', 30000);
  const searchAfter = Date.now() - t1;
  await page.getByLabel('Search keys by prefix').fill('');
  await expectText(page.locator('#keys-page'), `1–50 of ${LARGE_KEYS.toLocaleString('en-US')}`, 'keys page again', 30000);
  const searchTasks = await takeLongTasks(page);
  // One step back on the timeline (before late-comer joined), then back to live.
  const timeline = page.getByLabel('Timeline', { exact: true });
  t1 = Date.now();
  await timeline.fill(String(LARGE_NODES + 1));
  await expectText(page.locator('#past-banner'), new RegExp(`after operation #${LARGE_NODES + 1}\\b`), 'past banner', 30000);
  await expectText(page.locator('#nodes-count'), `${LARGE_NODES.toLocaleString('en-US')} nodes`, 'past nodes count', 30000);
  await expectText(page.locator('#keys-page'), `1–50 of ${LARGE_KEYS.toLocaleString('en-US')}`, 'past keys page', 30000);
  const pastAfter = Date.now() - t1;
  const pastTasks = await takeLongTasks(page);
  await page.getByRole('button', { name: 'Back to live' }).click();
  await expectText(page.locator('#nodes-count'), `${(LARGE_NODES + 1).toLocaleString('en-US')} nodes`, 'live again', 30000);
  console.log(`     ${LARGE_NODES} nodes, ${LARGE_KEYS} keys: long tasks while loading ${JSON.stringify(loadTasks.slice(0, 5))} ms; `
    + `add node: "What moved" after ${movedAfter} ms, table after ${shownAfter} ms, long tasks ${JSON.stringify(addTasks.slice(0, 5))} ms; `
    + `prefix search ${searchAfter} ms, long tasks ${JSON.stringify(searchTasks.slice(0, 5))} ms; `
    + `one step back on the timeline shown after ${pastAfter} ms, long tasks ${JSON.stringify(pastTasks.slice(0, 5))} ms`);
  const longest = Math.max(0, ...loadTasks, ...addTasks, ...searchTasks, ...pastTasks);
  assert.ok(longest < LONG_TASK_LIMIT, `longest main-thread task ${longest} ms (limit ${LONG_TASK_LIMIT} ms)`);
  assert.ok(await page.locator('#nodes-body tr').count() <= 100, 'nodes table is paginated');
  assert.equal(await page.locator('#keys-body tr').count(), 50, 'keys table shows one server page');
  assert.ok(await page.locator('#stats-bars .bar-row').count() <= 200, 'bars are capped');
  // Up to 60 nodes are labelled on the ring; past that, hover tells.
  assert.equal(await page.locator('#ring-svg text.node-label').count(), LARGE_NODES > 60 ? 0 : LARGE_NODES, 'no label clutter');
  const t0 = Date.now();
  await page.getByRole('button', { name: 'More keys' }).click();
  await expectText(page.locator('#keys-page'), `51–100 of ${LARGE_KEYS.toLocaleString('en-US')}`);
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
  assert.ok(Date.now() - t0 < 5000, `paging answered in ${Date.now() - t0} ms`);
  // Hovering the density band tells how many keys a slice holds.
  await page.locator('#ring-overlay').scrollIntoViewIfNeeded();
  const box = await page.locator('#ring-overlay').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2 - box.height * 0.37 + 24);
  await expectText(page.locator('#ring-tooltip'), /keys/);
  await page.screenshot({ path: path.join(artifacts, 'ui-large.png'), fullPage: false });
  // Generating through the form shows progress, then continues the numbering.
  await page.getByLabel('Number of keys', { exact: true }).fill('300000');
  await page.getByRole('button', { name: 'Generate keys', exact: true }).click();
  await page.locator('#generate-progress').waitFor({ state: 'visible', timeout: 2000 });
  await expectText(page.locator('#generate-result'), `Inserted 300,000 keys (key-${LARGE_KEYS} … key-${LARGE_KEYS + 299999})`, 'generated', 60000);
  await page.locator('#generate-progress').waitFor({ state: 'hidden' });
  await expectText(page.locator('#keys-count'), `${(LARGE_KEYS + 300000).toLocaleString('en-US')} keys`, 'total', 30000);
});

// ---- placement algorithms (issue 7) --------------------------------------------------

test('choose an algorithm from the catalogue: parameters, replicas, refusals next to the field', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 400 } })).status, 201);
  await expectText(page.locator('#keys-count'), '400 keys');
  const config = (await http(server, 'GET', '/api/config')).body;
  // The choice is the server's catalogue, each with its title and origin.
  const select = page.getByLabel('Algorithm', { exact: true });
  const values = await select.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(values, config.algorithms.map((a) => a.name));
  const maglev = config.algorithms.find((a) => a.name === 'maglev');
  await select.selectOption('maglev');
  await expectText(page.locator('#algorithm-about'), maglev.title);
  const tableSize = page.getByLabel('Table size', { exact: true });
  assert.equal(await tableSize.inputValue(), String(maglev.params[0].default), 'default from the catalogue');
  assert.equal(await page.getByLabel('Replicas', { exact: true }).isDisabled(), true, 'maglev has no replicas');
  // A refused parameter: the server's reason next to that field, nothing changes.
  await tableSize.fill('100');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await expectText(page.locator('#param-table_size-error'), /^Table size must be a prime/);
  assert.equal(await tableSize.getAttribute('aria-invalid'), 'true');
  assert.equal((await http(server, 'GET', '/api/config')).body.algorithm, 'ring', 'nothing changed');
  // Switching is a configure operation and says what moved.
  await tableSize.fill(String(maglev.params[0].default));
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await eventually('maglev in force', async () => (await http(server, 'GET', '/api/config')).body.algorithm === 'maglev');
  const ops = (await http(server, 'GET', '/api/operations')).body.operations;
  const op = ops[ops.length - 1];
  assert.equal(op.type, 'configure');
  await expectText(page.locator('#moved-operation'), `#${op.id}`);
  await expectText(page.locator('#moved-summary'), new RegExp(`^${op.keys_moved.toLocaleString('en-US')} keys? moved`));
  await expectText(page.locator('#history-list li').first(), /Configured algorithm maglev/);
  // Drawn as a table, also as a strip; the keys table shows each key's entry.
  await expectText(page.locator('#ring-space'), `a table of ${Number(maglev.params[0].default).toLocaleString('en-US')} entries`);
  await page.locator('#table-strip').waitFor({ state: 'visible' });
  const first = (await http(server, 'GET', '/api/keys?limit=1')).body.keys[0];
  await expectText(page.locator('#keys-body tr').first().locator('td[data-col="coordinate"]'), Number(first.coordinate).toLocaleString('en-US'));
  // The lookup speaks maglev's words and centres the strip on the key's entry.
  await page.getByLabel('Look up key', { exact: true }).fill('key-7');
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  const lk = (await http(server, 'GET', '/api/lookup?key=key-7')).body;
  await expectText(page.locator('#lookup-steps'), lk.trace[1].detail);
  await expectText(page.locator('#strip-caption'), `entry ${Number(lk.coordinate).toLocaleString('en-US')} of key “key-7” is ${lk.node}'s`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'ui-maglev.png') });

  // ketama with 2 replicas: weights must be whole, said on the weight field.
  await select.selectOption('ketama');
  await page.getByLabel('Replicas', { exact: true }).fill('2');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await eventually('ketama, 2 replicas', async () => {
    const c = (await http(server, 'GET', '/api/config')).body;
    return c.algorithm === 'ketama' && c.replicas === 2;
  });
  await expectText(page.locator('#ring-mode'), /^ketama · 2 replicas/);
  // The ring's caption is drawn a frame before the tables: wait for the column itself.
  await page.locator('#nodes-table th[data-col="owns"]').waitFor({ state: 'visible' });
  await page.getByLabel('Node name', { exact: true }).fill('10.0.0.9:11211');
  await page.getByLabel('Weight', { exact: true }).fill('2.5');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await expectText(page.locator('#weight-error'), /whole numbers/);
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 3);
  // The preference list of the looked-up key is the server's.
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  const lk2 = (await http(server, 'GET', '/api/lookup?key=key-7')).body;
  assert.equal(lk2.replicas.length, 2);
  await eventually('replicas listed', async () => {
    const items = await page.$$eval('#lookup-steps ol.replicas li', (lis) => lis.map((li) => li.textContent));
    return JSON.stringify(items) === JSON.stringify(lk2.replicas);
  });
  await expectText(page.locator('#lookup-result'), `replicas ${lk2.replicas[1]}`);
});

test('each space is labelled as itself: 32-bit ring, 64-bit rings, slots, no ring for jump', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  const top = () => page.locator('#ring-svg .ticks text.tick-top').evaluate((t) => t.firstChild.textContent);
  await eventually('32-bit labels', async () => (await top()) === '0 ↺ 2³²−1');
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'envoy-ring' })).status, 200);
  await expectText(page.locator('#ring-space'), '64-bit ring');
  await eventually('64-bit labels', async () => (await top()) === '0 ↺ 2⁶⁴−1');
  // Cassandra's tokens are signed: the ring starts at −2⁶³.
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'cassandra' })).status, 200);
  await expectText(page.locator('#ring-space'), '64-bit signed token ring');
  await eventually('signed labels', async () => (await top()) === '−2⁶³ ↺ 2⁶³−1');
  // Redis: 16384 slots as a table; the looked-up key's slot is the server's.
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'redis' })).status, 200);
  await expectText(page.locator('#ring-space'), 'a table of 16,384 slots');
  await page.getByLabel('Look up key', { exact: true }).fill('{user}:1');
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  const lk = (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent('{user}:1')}`)).body;
  await expectText(page.locator('#strip-caption'), `slot ${Number(lk.coordinate).toLocaleString('en-US')} of key “{user}:1” is ${lk.node}'s`);
  await expectText(page.locator('#lookup-steps'), lk.trace[1].detail);
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'jump' })).status, 200);
  await expectText(page.locator('#ring-space'), 'jump has no ring');
  // Jump ignores weights: the weight help says so.
  await expectText(page.locator('#weight-help'), 'does not use weights');
});

test('HAProxy\'s route goes the short way to the nearest point, the ring\'s clockwise', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) {
    assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  }
  const route = () => page.locator('#ring-overlay').getAttribute('data-route');
  // Keys whose HAProxy trace says which side decided: one before, one after.
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'haproxy' })).status, 200);
  const side = async (key) => {
    const t = (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent(key)}`)).body.trace;
    const d = t.find((s) => s.step === 'nearest').detail;
    return d.startsWith('the point before') ? 'before' : d.startsWith('the point after') ? 'after' : 'tie';
  };
  const found = {};
  for (let i = 0; i < 200 && !(found.before && found.after); i++) {
    const k = `k ${i}/%?`;
    const s = await side(k);
    if (!found[s]) found[s] = k;
  }
  assert.ok(found.before && found.after, 'keys decided on both sides');
  await eventually('the page on haproxy', async () => (await page.locator('#algorithm').inputValue()) === 'haproxy');
  for (const [s, want] of [['before', 'counterclockwise'], ['after', 'clockwise']]) {
    await page.getByLabel('Look up key', { exact: true }).fill(found[s]);
    await page.getByLabel('Look up key', { exact: true }).press('Enter');
    await expectText(page.locator('#lookup-result'), `“${found[s]}” →`);
    await eventually(`route ${want} for a key decided ${s}`, async () => (await route()) === want);
  }
  // The seed's ring: always clockwise to the next point, even a key whose
  // HAProxy point was before it.
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'ring' })).status, 200);
  await eventually('the page on ring', async () => (await page.locator('#algorithm').inputValue()) === 'ring');
  await page.getByLabel('Look up key', { exact: true }).fill(found.before);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  await eventually('the ring routes clockwise', async () => (await route()) === 'clockwise');
});

// ---- right data at every moment (issue 8) ------------------------------------------------

/** Delays the answers whose URL matches `pattern` by `ms`. */
async function delay(page, pattern, ms) {
  await page.route(pattern, async (route) => {
    await sleep(ms);
    await route.continue().catch(() => {});
  });
}

test('the lookup trace follows the timeline (the ?at= answers)', async ({ page, server }) => {
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'alpha' })).status, 201); // #1
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'bravo' })).status, 201); // #2
  // A key that bravo owns now; after #1 only alpha existed.
  let key = null;
  for (let i = 0; !key; i++) if (ownerOf(`t-${i}`, ['alpha', 'bravo']) === 'bravo') key = `t-${i}`;
  const live = (await http(server, 'GET', `/api/lookup?key=${key}`)).body;
  const past = (await http(server, 'GET', `/api/lookup?key=${key}&at=1`)).body;
  assert.equal(live.node, 'bravo');
  assert.equal(past.node, 'alpha');
  await expectText(page.locator('#history-count'), '2 operations');
  await page.getByLabel('Look up key', { exact: true }).fill(key);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  await expectText(page.locator('#lookup-result'), `“${key}” → bravo`);
  await page.getByLabel('Timeline', { exact: true }).fill('1');
  await page.locator('#past-banner').waitFor({ state: 'visible' });
  // The same key, as it was after #1: the server's past trace, word for word.
  await expectText(page.locator('#lookup-result'), `“${key}” → alpha`);
  await expectText(page.locator('#lookup-result'), 'as it was after #1');
  const steps = await traceSteps(page);
  assert.deepEqual(steps.slice(0, past.trace.length).map((x) => x[1]), past.trace.map((t) => t.detail));
  assert.equal(await page.locator('#lookup-steps').getAttribute('data-at'), '1');
  // Looking up another key in the past asks the past too.
  const other = 'other-key';
  await page.getByLabel('Look up key', { exact: true }).fill(other);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  await expectText(page.locator('#lookup-result'), `“${other}” → alpha`);
  await page.getByRole('button', { name: 'Back to live' }).click();
  await expectText(page.locator('#lookup-result'), `“${other}” → ${(await http(server, 'GET', `/api/lookup?key=${other}`)).body.node}`);
  assert.equal(await page.locator('#lookup-steps').getAttribute('data-at'), 'live');
});

test('time travel shows a loading state, never live data under the past banner', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  await eventually('3 nodes', async () => (await nodeNamesInTable(page)).length === 3);
  await delay(page, /[?&]at=\d/, 1500);
  const t0 = Date.now();
  await page.getByLabel('Timeline', { exact: true }).fill('1');
  await page.locator('#past-banner').waitFor({ state: 'visible' });
  // While the past state is on its way: loading, and none of the live nodes.
  await expectText(page.locator('#ring-svg .loading-text'), 'Loading the state after #1', 'ring loading', 1000);
  assert.ok(Date.now() - t0 < 1400, 'the loading state shows before the answers');
  assert.deepEqual(await nodeNamesInTable(page), [], 'no live rows under the past banner');
  assert.deepEqual(await ringLabels(page), [], 'no live labels on the ring');
  await expectText(page.locator('#nodes-body'), 'Loading the state after #1');
  await expectText(page.locator('#stats-numbers'), 'Loading');
  await expectText(page.locator('#past-loading'), 'Loading the state after #1');
  await eventually('past state shown', async () => {
    const names = await nodeNamesInTable(page);
    return names.length === 1 && names[0] === 'alpha';
  }, 8000);
  assert.deepEqual(await ringLabels(page), ['alpha']);
  assert.equal(await page.locator('#past-loading').isVisible(), false);
});

test('"What moved" is never stale: at once after a change and after "Revert to here"', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 600 } })).status, 201); // #3
  await expectText(page.locator('#moved-operation'), '#3');
  // The details (moves, ?at= statistics) are slow to come; the title and the count are not.
  await delay(page, /\/api\/operations\/\d+|[?&]at=\d/, 2500);
  const added = await http(server, 'POST', '/api/nodes', { name: 'newcomer' }); // #4
  const t0 = Date.now();
  const op = added.body.operation;
  assert.ok(op.keys_moved > 0, 'the newcomer takes keys');
  await expectText(page.locator('#moved-operation'), 'Added node newcomer', 'title', 1500);
  await expectText(page.locator('#moved-summary'), `${op.keys_moved.toLocaleString('en-US')} keys moved`, 'count with the title', 300);
  assert.ok(Date.now() - t0 < 1800, `shown ${Date.now() - t0} ms after the change`);
  assert.equal(await page.locator('#moved-compare').textContent(), '', 'no statistics of another change');
  // The pairs of an added node are in the operation itself.
  const pairs = await page.$$eval('#moved-pairs tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.deepEqual(pairs.map((p) => p[0]).sort(), op.moved_from.map((m) => m.node).sort());
  await expectText(page.locator('#moved-compare'), /Nodes\s*23/, 'details arrive', 10000);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  // Into the past: "What moved" explains the operation on show.
  await page.getByLabel('Timeline', { exact: true }).fill('2');
  await expectText(page.locator('#moved-operation'), 'After #2 · Added node bravo');
  await delay(page, /\/api\/operations\/\d+|[?&]at=\d/, 2500);
  await page.getByRole('button', { name: 'Revert to here', exact: true }).click();
  await expectText(page.locator('#moved-operation'), 'Reverted to the state after #2', 'revert shown', 2000);
  const revert = (await http(server, 'GET', '/api/operations')).body.operations.pop();
  assert.equal(revert.type, 'revert');
  await expectText(page.locator('#moved-summary'), `${revert.keys_moved.toLocaleString('en-US')} ${revert.keys_moved === 1 ? 'key' : 'keys'} moved`);
  await expectText(page.locator('#history-list li .op-what').first(), 'Reverted to the state after #2');
});

test('the ring tooltip follows an owner change under the pointer', async ({ page, server }) => {
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'alpha' })).status, 201);
  await eventually('alpha on the ring', async () => (await ringLabels(page)).includes('alpha'));
  // Just before bravo's point: alpha's arc now, bravo's once bravo joins.
  const a = positionOf('alpha');
  const b = positionOf('bravo');
  const at = (b - 2 ** 32 / 90 + 2 ** 32) % 2 ** 32;
  const between = (x, lo, hi) => (lo < hi ? x > lo && x < hi : x > lo || x < hi);
  assert.ok(!between(a, at, b), 'alpha lies outside the hovered stretch');
  const p = await ringPoint(page, at);
  await page.mouse.move(p.x, p.y);
  await expectText(page.locator('#ring-tooltip'), 'Arc of alpha');
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'bravo' })).status, 201);
  await expectText(page.locator('#ring-tooltip'), 'Arc of bravo', 'tooltip follows without moving the pointer');
});

// ---- layout (issue 8) ------------------------------------------------------------------

const LONG_NAME = `${'very-long-node-name-'.repeat(12)}0123456789abcd`; // 254 bytes

async function loadSample(server, extra = []) {
  for (const name of ['alpha', 'bravo', 'charlie', 'delta', 'echo', ...extra]) {
    assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  }
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 1000 } })).status, 201);
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'foxtrot' })).status, 201);
}

test('1366×800: ring, controls and "What moved" visible together; long names cut, full on hover and focus', async ({ browser, server, errors }) => {
  assert.equal(Buffer.byteLength(LONG_NAME), 254);
  await loadSample(server, [LONG_NAME]);
  const page = await openPage(browser, server, errors, { viewport: { width: 1366, height: 800 } });
  await expectText(page.locator('#keys-count'), '1,000 keys');
  await expectText(page.locator('#moved-operation'), 'Added node foxtrot');
  await eventually('compare shown', async () => (await page.locator('#moved-compare table').count()) === 1);
  const inView = async (selector) => {
    const b = await page.locator(selector).boundingBox();
    return b && b.y >= 0 && b.x >= 0 && b.y + b.height <= 800 && b.x + b.width <= 1366;
  };
  for (const sel of ['#ring-wrap', '#config-form', '#node-form', '#key-form', '#moved-summary', '#moved-pairs']) {
    assert.ok(await inView(sel), `${sel} within the first 1366×800 screen`);
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 1366, 'no horizontal scroll');
  // The long name: cut on the ring with its full name in the title, inside the panel.
  const label = page.locator(`#ring-svg text.node-label[data-node="${LONG_NAME}"]`);
  assert.match(await label.evaluate((t) => t.firstChild.textContent), /…$/);
  assert.equal(await label.locator('title').textContent(), LONG_NAME);
  const lb = await label.boundingBox();
  const panel = await page.locator('.ring-panel').boundingBox();
  assert.ok(lb.x >= panel.x && lb.x + lb.width <= panel.x + panel.width, 'the label stays in the ring panel');
  // In the nodes table: cut with an ellipsis, whole on focus.
  const name = nodeRow(page, LONG_NAME).locator('td[data-col="name"] .name');
  assert.equal(await name.getAttribute('title'), LONG_NAME);
  assert.ok(await name.evaluate((e) => e.scrollWidth > e.clientWidth), 'cut');
  await nodeRow(page, LONG_NAME).focus();
  assert.equal(await name.evaluate((e) => getComputedStyle(e).whiteSpace), 'normal', 'whole on focus');
  // Numbers never break mid-number.
  assert.equal(await page.locator('#nodes-body td[data-col="keys"]').first().evaluate((e) => getComputedStyle(e).whiteSpace), 'nowrap');
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'layout-1366x800.png') });
  await page.context().close();
});

test('390×844 phone: one column, controls soon after the ring, tables scroll instead of breaking', async ({ browser, server, errors }) => {
  await loadSample(server);
  const page = await openPage(browser, server, errors, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await expectText(page.locator('#keys-count'), '1,000 keys');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, 'no horizontal scroll of the page');
  const ring = await page.locator('#ring-wrap').boundingBox();
  const controls = await page.locator('#controls-heading').boundingBox();
  assert.ok(ring.y < controls.y, 'ring first');
  assert.ok(controls.y < 900, `controls start at ${Math.round(controls.y)} px`);
  // Ring labels stay on screen.
  const labels = await page.$$eval('#ring-svg text.node-label', (ts) => ts.map((t) => t.getBoundingClientRect()).map((r) => [r.left, r.right]));
  assert.ok(labels.length === 6 && labels.every(([l, r]) => l >= 0 && r <= 390), JSON.stringify(labels));
  // Key % and Space % are there (the table scrolls), numbers on one line.
  const heights = await page.$$eval('#nodes-body tr:first-child td.num', (tds) => tds.map((td) => [td.dataset.col, td.getBoundingClientRect().height]));
  assert.ok(heights.some(([c]) => c === 'key_share') && heights.some(([c]) => c === 'arc_share'), JSON.stringify(heights));
  const rowHeight = heights[0][1];
  assert.ok(heights.every(([, h]) => h <= rowHeight + 1), 'no cell taller than the row: no broken numbers');
  // The keys pager stays compact.
  const pager = await page.locator('#keys-pager').boundingBox();
  assert.ok(pager.height < 90, `pager ${pager.height} px high`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'layout-390x844.png'), fullPage: false });
  await page.context().close();
});

test('accessibility: axe finds no serious or critical violation at 1366×800 and 390×844, light and dark', async ({ browser, server, errors }) => {
  await loadSample(server, [' spaced ']);
  assert.equal((await http(server, 'PUT', '/api/config', { replicas: 2 })).status, 200);
  const report = [];
  for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 844 }]) {
    // axe is injected as a script: the page's CSP (script-src 'self') would refuse it.
    const page = await openPage(browser, server, errors, { viewport, bypassCSP: true });
    await expectText(page.locator('#keys-count'), '1,000 keys');
    await page.getByLabel('Look up key', { exact: true }).fill('key-1');
    await page.getByLabel('Look up key', { exact: true }).press('Enter');
    await expectText(page.locator('#lookup-result'), 'key-1');
    await page.addScriptTag({ path: axePath });
    for (const theme of ['light', 'dark']) {
      if ((await page.getAttribute('html', 'data-theme')) !== theme && !(theme === 'light' && !(await page.getAttribute('html', 'data-theme')))) {
        await page.locator('#theme-toggle').click();
      }
      await eventually(`${theme} theme`, async () => (await page.locator('#theme-toggle').getAttribute('aria-pressed')) === String(theme === 'dark'));
      // Every rule in the light theme; in the dark one only what colours
      // decide (the rest does not change with the theme, and axe's full run
      // costs seconds).
      const result = await page.evaluate(async (colourOnly) => {
        const options = { resultTypes: ['violations'] };
        if (colourOnly) options.runOnly = { type: 'rule', values: ['color-contrast', 'link-in-text-block'] };
        // eslint-disable-next-line no-undef
        const r = await axe.run(document, options);
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
      }, theme === 'dark');
      const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      report.push(`${viewport.width}×${viewport.height} ${theme}: ${result.length} violations (${bad.length} serious or critical)`);
      assert.deepEqual(bad, [], `${viewport.width}×${viewport.height} ${theme}`);
      fs.mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: path.join(artifacts, `axe-${viewport.width}x${viewport.height}-${theme}.png`) });
    }
    await page.context().close();
  }
  console.log(`     ${report.join('; ')}`);
});

// ---- smaller things (issue 8) ---------------------------------------------------------------

test('the empty page invites the first steps and hides empty pagers', async ({ page }) => {
  await page.locator('#ring-empty').waitFor({ state: 'visible' });
  await expectText(page.locator('#ring-empty'), 'An empty ring');
  assert.equal(await page.locator('#ring-empty button').isEnabled(), true);
  assert.equal(await page.locator('#keys-pager').isVisible(), false, 'no "1–0 of 0" pager');
  assert.equal(await page.locator('#nodes-pager').isVisible(), false);
  await page.locator('#ring-empty button').click();
  await expectText(page.locator('#scenario-outcome'), /busiest node/, 'scenario 1 from the invitation', 30000);
  assert.equal(await page.locator('#ring-empty').isVisible(), false);
});

test('weights: "1e" refused on the weight field; names of spaces made visible; labels in messages', async ({ page, server }) => {
  await page.getByLabel('Node name', { exact: true }).fill('w1');
  const weight = page.getByLabel('Weight', { exact: true });
  await weight.fill('');
  await weight.focus();
  await page.keyboard.type('1e');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await expectText(page.locator('#weight-error'), 'Weight must be a number');
  assert.equal(await page.locator('#node-error').textContent(), '');
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 0, 'nothing added');
  await weight.fill('1');
  // API.md v3: a node name with nothing visible is refused; spaces around
  // a visible one are kept and shown.
  await page.getByLabel('Node name', { exact: true }).fill('  ');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await expectText(page.locator('#node-error'), /visible/);
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 0, 'a name of spaces is refused');
  await page.getByLabel('Node name', { exact: true }).fill(' pad ');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await eventually('node " pad "', async () => (await nodeNamesInTable(page)).includes(' pad '));
  assert.equal(await nodeRow(page, ' pad ').locator('td[data-col="name"]').textContent(), '“␣pad␣”');
  await expectText(page.locator('#history-list li .op-what').first(), 'Added node “␣pad␣”');
  // Statistics keep their digits: 2.000, not 2.
  assert.equal((await http(server, 'POST', '/api/keys', { keys: ['a'] })).status, 201);
  await expectText(page.locator('#stats-numbers'), /Max \/ mean\d\.\d{3}/);
});

test('keys table: sort, jump to a page, remove per row; nodes removed per row', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 120 } })).status, 201);
  await expectText(page.locator('#keys-page'), '1–50 of 120');
  const keysShown = () => page.$$eval('#keys-body tr td[data-col="key"]', (tds) => tds.map((td) => td.textContent));
  // Key sorts every key on the server, not just the page on show.
  const all = Array.from({ length: 120 }, (_, i) => `key-${i}`).sort();
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  await page.locator('#keys-table th[data-sort="key"] button').click();
  await eventually('the first 50 of all keys by key', async () => same(await keysShown(), all.slice(0, 50)));
  assert.equal(await page.locator('#keys-table th[data-sort="key"]').getAttribute('aria-sort'), 'ascending');
  assert.equal(await page.locator('#keys-sort-note').isHidden(), true, 'no within-page note');
  await page.locator('#keys-table th[data-sort="key"] button').click();
  await eventually('the last 50 by key, descending', async () => same(await keysShown(), [...all].reverse().slice(0, 50)));
  await page.getByLabel(/^Page/).fill('3');
  await page.getByLabel(/^Page/).press('Enter');
  await expectText(page.locator('#keys-page'), '101–120 of 120');
  await eventually('page 3 goes on in that order', async () => same(await keysShown(), [...all].reverse().slice(100)));
  // Owner sorts the page on show, and says so.
  await page.locator('#keys-table th[data-sort="node"] button').click();
  await expectText(page.locator('#keys-sort-note'), 'Sorted by owner within this page');
  const victim = (await keysShown())[0];
  await page.getByRole('button', { name: `Remove key ${victim}`, exact: true }).click();
  await expectText(page.locator('#keys-count'), '119 keys');
  assert.equal((await http(server, 'GET', `/api/keys/${victim}`)).status, 404);
  await page.getByRole('button', { name: 'Remove node bravo', exact: true }).click();
  await eventually('bravo removed', async () => !(await nodeNamesInTable(page)).includes('bravo'));
  assert.deepEqual((await http(server, 'GET', '/api/nodes')).body.nodes.map((n) => n.name).sort(), ['alpha', 'charlie']);
});

test('keyboard: the ring steps through arcs with the arrow keys; the share bars scroll by keyboard', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  await eventually('3 labels', async () => (await ringLabels(page)).length === 3);
  const ringOrder = (await http(server, 'GET', '/api/ring')).body.points.map((p) => p.node);
  await page.locator('#ring-overlay').focus();
  const seen = [];
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('ArrowRight');
    seen.push(await page.locator('#ring-overlay').getAttribute('aria-valuetext'));
  }
  // Arc i+1 of 3 belongs to the owner of point i+1 in ring order (the server's).
  for (let i = 0; i < 3; i++) assert.ok(seen[i].includes(`Arc of ${ringOrder[(i + 1) % 3]}`), seen[i]);
  await expectText(page.locator('#ring-tooltip'), `Arc of ${ringOrder[0]}`);
  await page.keyboard.press('Enter');
  await expectText(page.locator('#ring-selection'), ringOrder[0]);
  assert.equal(await page.locator('#stats-bars').getAttribute('tabindex'), '0');
});

// ---- runner ------------------------------------------------------------------------

// ---- look before you change (issue 9) -------------------------------------------------------

async function operationIds(server) {
  const r = await http(server, 'GET', '/api/operations?limit=1000');
  assert.equal(r.status, 200);
  return r.body.operations.map((o) => o.id);
}

test('preview: the numbers shown are what the change then does; cancel records nothing', async ({ page, server }) => {
  await loadSample(server);
  await expectText(page.locator('#keys-count'), '1,000 keys');
  const before = await operationIds(server);
  await page.getByLabel('Node name', { exact: true }).fill('golf');
  await page.getByRole('button', { name: 'Preview add', exact: true }).click();
  const summary = page.locator('#preview-summary');
  await expectText(summary, 'keys would move');
  const shownMoved = Number(await summary.getAttribute('data-keys-moved'));
  const shownReplica = Number(await summary.getAttribute('data-replica-moves'));
  assert.ok(shownMoved > 0, 'a sixth node on 1,000 keys takes some');
  assert.equal(await page.locator('#ring-ghost').isVisible(), true, 'the ghost is on the ring');
  await expectText(page.locator('#ring-ghost'), 'golf');
  assert.ok(await page.locator('#preview-sample li').count() > 0, 'a sample of moved keys');
  assert.equal(await page.locator('#preview-stats tbody tr[data-stat="nodes"] td').nth(1).textContent(), '7');
  // Cancel: nothing recorded, nothing shown.
  await page.getByRole('button', { name: 'Cancel preview', exact: true }).click();
  assert.equal(await page.locator('#preview-panel').isVisible(), false);
  assert.equal(await page.locator('#ring-ghost').isVisible(), false);
  assert.deepEqual(await operationIds(server), before, 'a preview and its cancel record nothing');
  assert.equal((await http(server, 'GET', '/api/nodes/golf')).status, 404);
  // Preview again and apply: the operation moves exactly what was shown.
  await page.getByRole('button', { name: 'Preview add', exact: true }).click();
  await expectText(summary, 'keys would move');
  assert.deepEqual(await operationIds(server), before, 'still nothing recorded');
  await page.getByRole('button', { name: /^Apply: add node golf/ }).click();
  await eventually('node golf in the table', async () => (await nodeNamesInTable(page)).includes('golf'));
  const after = await operationIds(server);
  assert.equal(after.length, before.length + 1, 'apply is one operation');
  const op = (await http(server, 'GET', `/api/operations/${after[after.length - 1]}`)).body;
  assert.equal(op.type, 'add_node');
  assert.equal(op.keys_moved, shownMoved, 'keys moved as previewed');
  assert.equal(op.replica_moves, shownReplica, 'replica moves as previewed');
  assert.equal(await page.locator('#preview-panel').isVisible(), false, 'the preview is cleared after apply');
  // A configuration change previewed the same way.
  await page.getByLabel('Algorithm', { exact: true }).selectOption('rendezvous');
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await expectText(summary, 'configure algorithm rendezvous');
  assert.equal((await http(server, 'GET', '/api/config')).body.algorithm, 'ring', 'not switched by a preview');
});

test('compare: table and chart of every algorithm, current marked, one click to switch', async ({ page, server }) => {
  await loadSample(server);
  await expectText(page.locator('#keys-count'), '1,000 keys');
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await eventually('compare rows', async () => (await page.locator('#compare-body tr').count()) > 1, 20000);
  const api = (await http(server, 'GET', '/api/compare')).body;
  assert.equal(await page.locator('#compare-body tr').count(), api.results.length, 'one row per algorithm');
  assert.match(await page.locator('#compare-body tr.current').textContent(), /^ring/);
  await expectText(page.locator('#compare-sample'), 'All 1,000 keys');
  // Moves if a node joined do not depend on timing: the page shows the server's.
  const rv = api.results.find((r) => r.algorithm === 'rendezvous');
  const cells = page.locator('#compare-body tr[data-algorithm="rendezvous"] td');
  assert.equal(await cells.nth(5).textContent(), rv.moves_if_added.toLocaleString('en-US'));
  // A bar per algorithm that places these nodes (ceph refuses names that are
  // not osd.N: its row says why, and it has no bar).
  assert.equal(await page.locator('#compare-chart-moves rect.bar').count(), api.results.filter((r) => !r.error).length, 'a bar per algorithm that places them');
  assert.equal(await page.locator('#compare-chart-moves rect.bar.current').count(), 1);
  await page.getByRole('button', { name: 'Switch to rendezvous', exact: true }).click();
  await eventually('switched', async () => (await http(server, 'GET', '/api/config')).body.algorithm === 'rendezvous');
  await eventually('rendezvous marked current', async () => /^rendezvous/.test(await page.locator('#compare-body tr.current').textContent()), 20000);
});

test('theory: the chart of max/mean against points per node and the server\'s sentence', async ({ page, server }) => {
  await loadSample(server);
  await page.getByRole('button', { name: 'Show theory', exact: true }).click();
  await eventually('theory chart', async () => (await page.locator('#theory-chart path.measured').count()) === 1, 30000);
  const api = (await http(server, 'GET', '/api/theory')).body;
  assert.equal(await page.locator('#theory-chart circle.expected').count(), api.points.length, 'a dot per point count');
  assert.equal(await page.locator('#theory-chart line.alg-mark').count(), api.algorithms.length, 'a mark per algorithm');
  // The page's sentence speaks of the algorithm in use (issue 25 item 12) with the server's figures.
  const mine = api.algorithms.find((a) => a.algorithm === 'ring');
  await expectText(page.locator('#theory-sentence'), `measures ${mine.structural_max_over_mean.toFixed(2)}× for ring`);
  assert.equal(await page.locator('#theory-moves tbody tr').count(), api.algorithms.length);
});

test('theory: a requests view beside the keys view — each node\'s share of requests against the ideal 1/N and the floor', async ({ browser, server, errors }) => {
  await loadSample(server);
  // One key takes 30% of requests: the floor (bound / N) lies above the ideal.
  const hot = { kind: 'keys', keys: [{ key: 'key-7', share: 0.3 }] };
  assert.equal((await http(server, 'PUT', '/api/workload', hot)).status, 200);
  const page = await openPage(browser, server, errors, { viewport: { width: 1366, height: 800 }, bypassCSP: true });
  await expectText(page.locator('#keys-count'), '1,000 keys');
  await page.getByRole('button', { name: 'Show theory', exact: true }).click();
  await eventually('theory chart', async () => (await page.locator('#theory-chart path.measured').count()) === 1, 30000);
  const keysView = page.getByRole('button', { name: 'Keys view', exact: true });
  const reqView = page.getByRole('button', { name: 'Requests view', exact: true });
  assert.equal(await keysView.getAttribute('aria-pressed'), 'true', 'keys first');
  await reqView.click();
  await eventually('requests chart', async () => (await page.locator('#theory-requests-chart rect.req-bar').count()) > 0);
  assert.equal(await reqView.getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('#theory-chart').isVisible(), false, 'the keys chart is put away');
  const st = (await http(server, 'GET', '/api/stats')).body;
  const per = st.per_node;
  assert.equal(await page.locator('#theory-requests-chart rect.req-bar').count(), per.length, 'a bar per node');
  // Bars busiest first, each as tall as the node's share (heights in proportion).
  const bars = await page.$$eval('#theory-requests-chart rect.req-bar', (rs) => rs.map((r) => ({ node: r.getAttribute('data-node'), h: Number(r.getAttribute('height')) })));
  const want = [...per].sort((a, b) => b.requests - a.requests || (a.name < b.name ? -1 : 1));
  assert.deepEqual(bars.map((b) => b.node), want.map((p) => p.name), 'busiest first');
  const k = bars[0].h / want[0].requests;
  for (let i = 0; i < bars.length; i++) assert.ok(Math.abs(bars[i].h - want[i].requests * k) < 0.05, `${bars[i].node}: bar height in proportion to its requests`);
  // The ideal and the floor, labelled with their values.
  const ideal = 1 / per.length;
  const floor = st.requests.bound / per.length;
  assert.ok(floor > ideal, 'the hot key raises the floor above the ideal');
  const labels = await page.locator('#theory-requests-chart text.level-label').allTextContents();
  assert.equal(labels.length, 2, 'the ideal and the floor');
  assert.match(labels[0], new RegExp(`^ideal 1/N ${(ideal * 100).toFixed(1)}`));
  assert.match(labels[1], new RegExp(`^floor ${(floor * 100).toFixed(1)}`));
  const busiest = want[0];
  const sentence = await page.locator('#theory-requests-sentence').textContent();
  assert.ok(sentence.startsWith(`${busiest.name} serves ${(busiest.requests * 100).toFixed(2)}% of requests`), sentence);
  assert.ok(sentence.includes(`No placement does better than ${st.requests.bound.toFixed(3)}×`), sentence);
  assert.ok(sentence.includes('key-7'), 'the hottest key named');
  // axe on the requests view.
  await page.addScriptTag({ path: axePath });
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  assert.deepEqual(result.filter((v) => v.impact === 'serious' || v.impact === 'critical'), []);
  // Back to keys: the keys chart again, the requests one put away.
  await keysView.click();
  assert.equal(await page.locator('#theory-chart').isVisible(), true);
  assert.equal(await page.locator('#theory-requests-chart').isVisible(), false);
  await page.context().close();
});

test('traffic replay: in flight per node without and with the factor, side by side', async ({ page, server }) => {
  await loadSample(server);
  await expectText(page.locator('#keys-count'), '1,000 keys');
  await page.getByLabel('Requests', { exact: true }).fill('40000');
  await page.getByLabel('In flight on average', { exact: true }).fill('30');
  await page.getByRole('button', { name: 'Replay', exact: true }).click();
  await eventually('two charts', async () => (await page.locator('#traffic-chart-with path.flight').count()) === 6, 30000);
  assert.equal(await page.locator('#traffic-chart-without path.flight').count(), 6, 'a line per node without the factor');
  assert.equal(await page.locator('figure.traffic-figure[data-rule="none"]').count(), 1);
  assert.equal(await page.locator('figure.traffic-figure[data-rule="mtz"]').count(), 1, "ring's rule with balance_factor 125");
  // The page shows the server's figures: the same replay asked directly.
  const body = { requests: 40000, concurrency: 30, seed: 0, samples: 120 };
  const without = (await http(server, 'POST', '/api/traffic/run', { ...body, factor: 0 })).body;
  const withIt = (await http(server, 'POST', '/api/traffic/run', { ...body, factor: 125 })).body;
  assert.equal(withIt.timeline.at.length, 120);
  for (const [id, answer] of [['without', without], ['with', withIt]]) {
    const fig = page.locator(`figure:has(#traffic-chart-${id})`);
    for (const n of answer.nodes) {
      const li = fig.locator(`li[data-node="${n.name}"]`);
      await expectText(li, `peak ${n.peak_in_flight.toLocaleString('en-US')},`);
      await expectText(li, `handled ${n.handled.toLocaleString('en-US')},`);
    }
  }
  assert.equal(await page.locator('figure:has(#traffic-chart-without) dd[data-field="sent_away"]').textContent(), '0.00%');
  assert.notEqual(await page.locator('figure:has(#traffic-chart-with) dd[data-field="sent_away"]').textContent(), '0.00%');
  assert.ok(withIt.peak_in_flight_max_over_mean < without.peak_in_flight_max_over_mean, 'the factor flattens the peaks');
  await expectText(page.locator('#traffic-rule'), 'Mirrokni');
  // An algorithm without bounded loads: one chart, said in words.
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'jump' })).status, 200);
  await page.getByRole('button', { name: 'Replay', exact: true }).click();
  await expectText(page.locator('#traffic-rule'), 'has no bounded loads', undefined, 30000);
  assert.equal(await page.locator('#traffic-chart-with').count(), 0);
  assert.equal(await page.locator('#traffic-chart-without path.flight').count(), 6);
  // A refused value: the server's words beside the control.
  await page.getByLabel('In flight on average', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Replay', exact: true }).click();
  await expectText(page.locator('#traffic-error'), 'concurrency must be a number above 0');
});

test('scenario file: loaded from a file, run step by step, a failing expect shown', async ({ page, server }) => {
  const text = '# Two nodes\nconfig --algorithm ring --points 1 --replicas 1\nnode add alpha\nnode add bravo\n\n# the keys arrive\nkey gen 100\nexpect keys == 100\nexpect nodes == 3\n';
  await page.locator('#scenario-file').setInputFiles({ name: 'two.ringsim', mimeType: 'text/plain', buffer: Buffer.from(text) });
  await expectText(page.locator('#scenario-status'), 'Loaded two.ringsim: 6 lines');
  const step = page.getByRole('button', { name: 'Run next step', exact: true });
  await step.click();
  await expectText(page.locator('#scenario-status'), 'Step 1 of 6');
  await step.click();
  await eventually('alpha after step 2', async () => (await nodeNamesInTable(page)).includes('alpha'));
  assert.equal((await http(server, 'GET', '/api/nodes')).body.nodes.length, 1, 'one step, one node');
  await step.click();
  await expectText(page.locator('#scenario-status'), 'Step 3 of 6');
  await step.click();
  await expectText(page.locator('#keys-count'), '100 keys');
  await step.click();
  await expectText(page.locator('#scenario-results li[data-line="8"]'), 'holds');
  await step.click();
  await expectText(page.locator('#scenario-results li.failed[data-line="9"]'), 'FAILED');
  await expectText(page.locator('#scenario-file-error'), 'line 9');
  // The config line changes nothing on a fresh simulation: no operation
  // (API.md v3); the other three changes are one each.
  assert.equal((await operationIds(server)).length, 3, 'three changes, three operations');
  // A built-in scenario, all at once.
  await page.getByLabel('Built in', { exact: true }).selectOption('names');
  await page.getByRole('button', { name: 'Load', exact: true }).click();
  await expectText(page.locator('#scenario-status'), 'Loaded names.ringsim');
  await page.getByRole('button', { name: 'Run all', exact: true }).click();
  // It starts with a reset and the ring holds two nodes: the page asks first.
  await page.getByRole('dialog').getByRole('button', { name: /reset/i }).click();
  await expectText(page.locator('#scenario-status'), /Done: \d+ operations, \d+ expectations met/, 'names ran', 20000);
  assert.equal(await page.locator('#scenario-results li.failed').count(), 0);
});

test('exports: nodes CSV download is the server\'s RFC 4180 CSV; scenario and SVG download', async ({ page, server }) => {
  await http(server, 'POST', '/api/nodes', { name: 'a,"quoted" node' });
  await http(server, 'POST', '/api/nodes', { name: 'plain' });
  await eventually('nodes shown', async () => (await nodeNamesInTable(page)).includes('plain'));
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Nodes as CSV', exact: true }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'nodes.csv');
  const csv = fs.readFileSync(await download.path(), 'utf8');
  // The server's CSV; this version's HTTP server wraps it as JSON
  // {"content_type", "text"} (the CLI's --csv writes it plain).
  const r = await fetch(`${server.base}/api/nodes?format=csv`);
  let direct = await r.text();
  if (/json/.test(r.headers.get('content-type') || '')) direct = JSON.parse(direct).text;
  assert.equal(csv, direct, 'the download is the server\'s CSV');
  const header = csv.split('\r\n')[0].split(',');
  assert.ok(header.includes('name'), `header row of JSON field names: ${header}`);
  assert.ok(csv.includes('"a,""quoted"" node"'), 'a comma and quotes are quoted and doubled (RFC 4180)');
  const [scenario] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'History as a scenario', exact: true }).click(),
  ]);
  const scenarioText = fs.readFileSync(await scenario.path(), 'utf8');
  assert.match(scenarioText, /node add 'a,"quoted" node'|node add .*quoted/);
  const [svgFile] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Ring as SVG', exact: true }).click(),
  ]);
  const svgText = fs.readFileSync(await svgFile.path(), 'utf8');
  assert.match(svgText, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  // The arcs of the canvas: the two nodes' arcs cover the ring.
  assert.ok(Math.abs(svgCoverage(svgText).turns - 1) < 0.01, 'the arcs cover the ring');
});

test('accessibility: axe finds no serious or critical violation in the preview, compare, theory and scenario results', async ({ browser, server, errors }) => {
  await loadSample(server);
  const page = await openPage(browser, server, errors, { viewport: { width: 1366, height: 800 }, bypassCSP: true });
  await expectText(page.locator('#keys-count'), '1,000 keys');
  await page.getByLabel('Node name', { exact: true }).fill('golf');
  await page.getByRole('button', { name: 'Preview add', exact: true }).click();
  await expectText(page.locator('#preview-summary'), 'keys would move');
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await eventually('compare rows', async () => (await page.locator('#compare-body tr').count()) > 1, 20000);
  await page.getByRole('button', { name: 'Show theory', exact: true }).click();
  await eventually('theory chart', async () => (await page.locator('#theory-chart').count()) === 1, 30000);
  await page.locator('#scenario-text').fill('node add x\nexpect nodes == 99\n');
  await page.getByRole('button', { name: 'Run all', exact: true }).click();
  await eventually('failed line', async () => (await page.locator('#scenario-results li.failed').count()) === 1);
  await page.addScriptTag({ path: axePath });
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, []);
  await page.context().close();
});

// ---- issue 13: found in use -------------------------------------------------------------

/** Puts the page in the light or the dark theme (the toggle, as a user does). */
async function setTheme(page, theme) {
  const dark = theme === 'dark';
  if ((await page.locator('#theme-toggle').getAttribute('aria-pressed')) !== String(dark)) await page.locator('#theme-toggle').click();
  await eventually(`${theme} theme`, async () => (await page.locator('#theme-toggle').getAttribute('aria-pressed')) === String(dark));
}

/** axe's serious and critical violations on the page as it stands (colour rules only when asked). */
async function axeSerious(page, colourOnly = false) {
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) await page.addScriptTag({ path: axePath });
  const result = await page.evaluate(async (colours) => {
    const options = { resultTypes: ['violations'] };
    if (colours) options.runOnly = { type: 'rule', values: ['color-contrast', 'link-in-text-block'] };
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, options);
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  }, colourOnly);
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Clicks an export button and answers the downloaded file's bytes and name. */
async function downloadOf(page, button) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button, exact: true }).click()]);
  return { name: download.suggestedFilename(), bytes: fs.readFileSync(await download.path()) };
}

/** Boxes of the elements matching `selector` that stick out of the element matching `container`. */
async function outside(page, selector, container) {
  return page.evaluate(([sel, cont]) => {
    const box = document.querySelector(cont).getBoundingClientRect();
    const out = [];
    for (const e of document.querySelectorAll(sel)) {
      const r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(`${e.tagName}.${e.getAttribute('class') || ''} ${Math.round(r.left)}–${Math.round(r.right)} not in ${Math.round(box.left)}–${Math.round(box.right)}: ${(e.textContent || '').slice(0, 40)}`);
    }
    return out;
  }, [selector, container]);
}

test('issue 13: the key export holds every key, CSV and JSON, in one request each', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 2500 } })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { keys: ['a,"quoted" key', 'ünï ✓'] })).status, 201);
  await expectText(page.locator('#keys-count'), '2,502 keys');
  const asked = [];
  // The export's requests: the keys table pages itself (offset, limit, no
  // format) whenever a state arrives, which may fall inside the download.
  const exporting = (u) => u.includes('/api/export/keys') || (u.includes('/api/keys') && /[?&]format=/.test(u));
  page.on('request', (r) => { if (exporting(r.url())) asked.push(r.url()); });
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    asked.length = 0;
    const csv = await downloadOf(page, 'Keys as CSV');
    assert.equal(csv.name, 'keys.csv');
    const text = csv.bytes.toString('utf8');
    const rows = text.split('\r\n').filter((l) => l !== '');
    assert.equal(rows.length, 2503, `a header and every key: ${rows.length} rows (${theme})`);
    assert.ok(rows[0].split(',').includes('key'), rows[0]);
    assert.ok(text.includes('"a,""quoted"" key"') && text.includes('ünï ✓'), 'quoted and Unicode keys as they are');
    for (const k of ['key-0', 'key-1249', 'key-2499']) assert.ok(text.includes(`\r\n${k},`), `${k} in the CSV`);
    assert.equal(asked.filter((u) => !u.includes('format=json')).length, 1, `one request: ${asked}`);
    assert.ok(!asked.some((u) => /limit=/.test(u)), `no limit asked: ${asked}`);
    const json = await downloadOf(page, 'Keys as JSON');
    assert.equal(json.name, 'keys.json');
    const doc = JSON.parse(json.bytes.toString('utf8'));
    const keys = Array.isArray(doc) ? doc : doc.keys;
    assert.equal(keys.length, 2502, `every key in the JSON (${theme})`);
    assert.deepEqual(new Set(keys.map((k) => k.key)).size, 2502);
    assert.equal(await page.locator('#export-error').textContent(), '');
    await expectText(page.locator('#export-status'), 'keys.json');
  }
});

/** The angular extent, in turns, that the arcs of an exported ring SVG cover. */
function svgCoverage(svgText) {
  const doc = svgText;
  const c = 320;
  let turns = 0;
  const arcs = [...doc.matchAll(/<path d="M([-\d.]+),([-\d.]+) A([\d.]+),[\d.]+ 0 ([01]) 1 ([-\d.]+),([-\d.]+)"/g)];
  for (const m of arcs) {
    const [x1, y1, , large, x2, y2] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
    let a = Math.atan2(y2 - c, x2 - c) - Math.atan2(y1 - c, x1 - c);
    if (a < 0) a += 2 * Math.PI;
    if (large && a < Math.PI) a += 2 * Math.PI; // cannot happen for a well-formed arc
    turns += a / (2 * Math.PI);
  }
  const circles = (doc.match(/<g class="arcs"[^>]*>(.*?)<\/g>/s) || ['', ''])[1].match(/<circle /g) || [];
  return { turns: turns + circles.length, arcs: arcs.length + circles.length };
}

test('issue 13: "Ring as SVG" draws every algorithm\'s ring and names the nodes; PNG too', async ({ page, server }) => {
  const names = ['alpha', '<b>&"q\'ü</b>', 'bravo', 'charlie'];
  for (const name of names) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 300 } })).status, 201);
  await expectText(page.locator('#keys-count'), '300 keys');
  const parse = (text) => page.evaluate((t) => {
    const d = new DOMParser().parseFromString(t, 'image/svg+xml');
    if (d.querySelector('parsererror')) return { error: d.querySelector('parsererror').textContent };
    return {
      legend: [...d.querySelectorAll('.legend-name title')].map((e) => e.textContent),
      labels: [...d.querySelectorAll('.node-label title')].map((e) => e.textContent),
      background: d.querySelector('rect').getAttribute('fill'),
      width: Number(d.documentElement.getAttribute('width')),
      height: Number(d.documentElement.getAttribute('height')),
    };
  }, text);
  const algorithms = [
    ['ring', { params: { points_per_node: 4 } }], ['cassandra', {}], ['jump', {}], ['rendezvous', {}], ['maglev', {}], ['redis', {}], ['envoy-ring', {}],
  ];
  for (const [i, [algorithm, extra]] of algorithms.entries()) {
    assert.equal((await http(server, 'PUT', '/api/config', { algorithm, ...extra })).status, 200, algorithm);
    await expectText(page.locator('#ring-mode'), new RegExp(`^${algorithm}\\b`), `${algorithm} on show`);
    await setTheme(page, i % 2 ? 'dark' : 'light');
    const file = await downloadOf(page, 'Ring as SVG');
    assert.equal(file.name, 'ring.svg');
    const text = file.bytes.toString('utf8');
    assert.match(text, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const { turns, arcs } = svgCoverage(text);
    assert.ok(arcs >= 1 && Math.abs(turns - 1) < 0.01, `${algorithm}: the arcs cover the whole ring (${turns.toFixed(4)} turns in ${arcs} arcs)`);
    const doc = await parse(text);
    assert.equal(doc.error, undefined, `${algorithm}: well-formed XML`);
    assert.deepEqual([...doc.legend].sort(), [...names].sort(), `${algorithm}: the legend names every node`);
    assert.equal(doc.background, '#ffffff', 'a white picture in either theme');
    if (algorithm === 'ring' || algorithm === 'cassandra') assert.deepEqual([...doc.labels].sort(), [...names].sort(), `${algorithm}: each node labelled on the ring`);
  }
  // PNG: the same picture, twice the size, the legend drawn.
  const svgDoc = await parse((await downloadOf(page, 'Ring as SVG')).bytes.toString('utf8'));
  const png = await downloadOf(page, 'Ring as PNG');
  assert.equal(png.name, 'ring.png');
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, 'export-ring.png'), png.bytes);
  assert.equal(png.bytes.subarray(1, 4).toString('latin1'), 'PNG');
  const w = png.bytes.readUInt32BE(16);
  const h = png.bytes.readUInt32BE(20);
  assert.deepEqual([w, h], [svgDoc.width * 2, svgDoc.height * 2], 'PNG of the SVG, twice the size');
  const ink = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    // The legend's column, right of the ring: dark pixels of its text.
    const d = g.getImageData(640 * 2 + 44, 70 * 2, 300 * 2, 100 * 2).data;
    let dark = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 200) dark++;
    return dark;
  }, png.bytes.toString('base64'));
  assert.ok(ink > 200, `the legend's names are drawn in the PNG (${ink} dark pixels)`);
});
test('issue 13: compare shows a refusal and its reason, leaves it out of the charts and "best", offers no Switch', async ({ browser, server, errors }) => {
  // axe is injected as a script: the page's CSP would refuse it.
  const page = await openPage(browser, server, errors, { bypassCSP: true });
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'alpha' })).status, 201);
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'bravo', weight: 2.5 })).status, 201);
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'charlie' })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 400 } })).status, 201);
  await expectText(page.locator('#keys-count'), '400 keys');
  const api = (await http(server, 'GET', '/api/compare')).body;
  const refused = api.results.filter((r) => r.error);
  assert.ok(refused.some((r) => r.algorithm === 'ketama'), 'ketama refuses a weight of 2.5');
  const usable = api.results.filter((r) => !r.error);
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    await page.getByRole('button', { name: 'Compare', exact: true }).click();
    await eventually('compare rows', async () => (await page.locator('#compare-body tr').count()) === api.results.length, 20000);
    for (const r of refused) {
      const row = page.locator(`#compare-body tr[data-algorithm="${r.algorithm}"]`);
      const text = await row.textContent();
      assert.ok(text.includes('Refuses the current nodes'), `${r.algorithm}: ${text}`);
      // The server's reason as it gave it, names as they are (ketama's: "bravo"
      // and 2.5; ceph's: a name that is not osd.N).
      // (the page groups the digits of the numbers it shows)
      assert.ok(text.replace(/(\d),(?=\d{3})/g, '$1').includes(r.error.message), `${r.algorithm} says why: ${text}`);
      if (r.algorithm === 'ketama') assert.ok(text.includes('bravo') && text.includes('2.5'), `ketama names the weight: ${text}`);
      assert.equal(await row.getByRole('button').count(), 0, `no Switch for ${r.algorithm}`);
      for (const chart of ['compare-chart-balance', 'compare-chart-keys', 'compare-chart-moves']) {
        const labels = await page.$$eval(`#${chart} text.chart-label`, (ts) => ts.map((t) => t.textContent));
        assert.ok(!labels.includes(r.algorithm), `${r.algorithm} not in ${chart}`);
      }
      assert.equal(await page.locator(`#compare-best [data-best="${r.algorithm}"]`).count(), 0, `${r.algorithm} never best`);
    }
    assert.equal(await page.locator('#compare-chart-moves rect.bar').count(), usable.length, 'a bar per algorithm that placed the keys');
    // "Best" is the smallest measured max / mean among those that placed the keys.
    const best = [...usable].sort((a, b) => a.stats.max_over_mean - b.stats.max_over_mean)[0];
    await expectText(page.locator('#compare-best'), `Most even keys: ${best.algorithm}`);
    await expectText(page.locator('#compare-best'), 'Left out: ');
    assert.deepEqual(await axeSerious(page, theme === 'dark'), [], `axe with a refusal shown (${theme})`);
    fs.mkdirSync(artifacts, { recursive: true });
    await page.locator('.compare-panel').screenshot({ path: path.join(artifacts, `compare-refusal-${theme}.png`) });
  }
  await page.context().close();
});

test('issue 13: invisible characters shown as escapes in every table, label, history and move; look-alikes warned', async ({ browser, server, errors }) => {
  // axe is injected as a script: the page's CSP would refuse it.
  const page = await openPage(browser, server, errors, { bypassCSP: true });
  const zw = 'zero\u200Bwidth';
  const nbsp = 'no\u00A0break';
  assert.equal((await http(server, 'POST', '/api/nodes', { name: zw })).status, 201);
  assert.equal((await http(server, 'POST', '/api/nodes', { name: nbsp })).status, 201);
  assert.equal((await http(server, 'POST', '/api/nodes', { name: 'caf\u00E9' })).status, 201); // NFC é
  const keyRtl = 'k\u202Eyek';
  const keyZw = 'key\u200B';
  const keyC1 = 'c1\u009Bkey'; // a C1 control (CSI): names may hold it, nobody may see it raw
  assert.equal((await http(server, 'POST', '/api/keys', { keys: [keyRtl, keyZw, keyC1, ...Array.from({ length: 30 }, (_, i) => `plain-${i}`)] })).status, 201);
  await expectText(page.locator('#keys-count'), '33 keys');
  const zwShown = 'zero⟨U+200B⟩width';
  // The server's warning about the look-alike, as API.md version 3 has it; a
  // server without it yet gets it added here, so that the page's part is tested.
  await page.route('**/api/nodes', async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    const sent = route.request().postDataJSON();
    if (route.request().method() === 'POST' && response.status() === 201 && sent.name === 'cafe\u0301' && !body.warning) body.warning = 'looks the same as "café"';
    await route.fulfill({ response, json: body });
  });
  await page.getByLabel('Node name', { exact: true }).fill('cafe\u0301'); // NFD: e + U+0301
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await eventually('the NFD node in the table', async () => (await nodeNamesInTable(page)).includes('cafe\u0301'));
  await expectText(page.locator('#node-warning'), 'looks the same as');
  await expectText(page.locator('#node-warning'), 'cafe⟨U+0301⟩');
  await expectText(nodeRow(page, 'cafe\u0301').locator('td[data-col="name"]'), 'looks the same as café');
  await expectText(nodeRow(page, 'caf\u00E9').locator('td[data-col="name"]'), 'looks the same as cafe⟨U+0301⟩');
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    assert.equal(await nodeRow(page, zw).locator('td[data-col="name"] .name').textContent(), zwShown, 'nodes table');
    assert.equal(await nodeRow(page, nbsp).locator('td[data-col="name"] .name').textContent(), 'no⟨U+00A0⟩break');
    // On the ring: the full name (escaped) in its title, the label a cut of it.
    const label = page.locator('#ring-svg text.node-label', { has: page.locator('title', { hasText: 'zero' }) });
    assert.equal(await label.locator('title').textContent(), zwShown, 'ring label title');
    const shown = await label.evaluate((t) => t.firstChild.textContent);
    assert.ok(zwShown.startsWith(shown.replace(/…$/, '')), `ring label ${shown}`);
    const bars = await page.locator('#stats-bars').textContent();
    assert.ok(bars.includes(zwShown), 'statistics bars');
    const keyCells = await page.$$eval('#keys-body td[data-col="key"]', (tds) => tds.map((td) => td.textContent));
    assert.ok(keyCells.includes('k⟨U+202E⟩yek') && keyCells.includes('key⟨U+200B⟩') && keyCells.includes('c1⟨U+009B⟩key'), `keys table: ${keyCells.slice(0, 5)}`);
    const history = await page.$$eval('#history-list .op-what', (xs) => xs.map((x) => x.textContent));
    assert.ok(history.includes(`Added node ${zwShown}`), `history: ${history}`);
    const filter = await page.$$eval('#keys-node option', (os) => os.map((o) => o.textContent));
    assert.ok(filter.includes(zwShown), 'node filter');
    assert.deepEqual(await axeSerious(page, theme === 'dark'), [], `axe with the warning and the look-alike marks (${theme})`);
  }
  // What moved: a join moves keys; their names are escaped there too.
  const moving = ['k\u202Eyek', 'key\u200B'];
  let joiner = null;
  for (let i = 0; !joiner; i++) {
    const nodes = (await http(server, 'GET', '/api/nodes')).body.nodes.map((n) => n.name);
    const name = `join-${i}`;
    if (moving.some((k) => ownerOf(k, [...nodes, name]) === name)) joiner = name;
  }
  await addNode(page, joiner);
  await eventually('moved keys listed', async () => (await page.locator('#moved-keys li').count()) > 0);
  const movedText = await page.locator('#moved-keys').textContent();
  assert.ok(movedText.includes('⟨U+202E⟩') || movedText.includes('key⟨U+200B⟩'), `what moved: ${movedText}`);
  // The lookup trace.
  await page.getByLabel('Look up key', { exact: true }).fill(keyRtl);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  await expectText(page.locator('#lookup-result'), '“k⟨U+202E⟩yek” →');
  await page.context().close();
});
test('issue 13: names of 60+ characters at 1366×800 and 390×844: no sideways scroll, labels inside the ring and "What moved"', async ({ browser, server, errors }) => {
  const long = (i) => `${['north', 'south', 'east', 'west', 'centre', 'edge'][i]}-datacenter-rack-${i}-cache-server-with-a-long-host-name.example.internal`;
  const names = [0, 1, 2, 3, 4].map(long);
  assert.ok(names.every((n) => n.length >= 60));
  for (const name of names) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 1000 } })).status, 201);
  assert.equal((await http(server, 'POST', '/api/nodes', { name: long(5) })).status, 201);
  for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 844 }]) {
    const page = await openPage(browser, server, errors, { viewport });
    await expectText(page.locator('#keys-count'), '1,000 keys');
    await eventually('the pairs of the last join', async () => (await page.locator('#moved-pairs tbody tr').count()) > 0);
    await eventually('before and after', async () => (await page.locator('#moved-compare table').count()) === 1);
    for (const theme of ['light', 'dark']) {
      await setTheme(page, theme);
      const where = `${viewport.width}×${viewport.height} ${theme}`;
      const sizes = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      assert.ok(sizes[0] <= sizes[1], `${where}: the document is ${sizes[0]} px wide in ${sizes[1]}`);
      const labels = await page.locator('#ring-svg text.node-label').count();
      assert.equal(labels, 6, `${where}: every node labelled`);
      assert.deepEqual(await outside(page, '#ring-svg text.node-label', '.ring-panel'), [], `${where}: ring labels inside the ring panel`);
      assert.deepEqual(await outside(page, '.moved-panel *', '.moved-panel'), [], `${where}: "What moved" holds its text`);
      // Cut names keep the whole name in their title.
      const titles = await page.$$eval('#moved-pairs .name', (xs) => xs.map((x) => x.title));
      assert.ok(titles.length && titles.every((t) => t.length >= 60), `${where}: full names in the titles`);
      fs.mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: path.join(artifacts, `long-names-${viewport.width}-${theme}.png`) });
    }
    await page.context().close();
  }
});
test('issue 13: nothing stale — empty ring, "not applied yet", the Apply button, "Cancel the running operation"', async ({ page, browser, server, errors }) => {
  // The empty page: the invitation alone in the ring's centre.
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    await page.locator('#ring-empty').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#ring-svg .center-value, #ring-svg .center-title').count(), 0, `no "0 nodes / 0 keys" under the invitation (${theme})`);
  }
  await setTheme(page, 'light');
  await loadSample(server);
  await expectText(page.locator('#keys-count'), '1,000 keys');
  await expectText(page.locator('#ring-svg .center-value'), '6 nodes');
  // A preview's Apply applies the form's choice: nothing is "not applied yet".
  await page.getByLabel('Algorithm', { exact: true }).selectOption('envoy-ring');
  assert.equal(await page.locator('#config-dirty').isVisible(), true, 'the choice is pending');
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await expectText(page.locator('#preview-summary'), 'keys would move');
  // The Apply button wraps inside its panel, at laptop and phone width.
  for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    for (const theme of ['light', 'dark']) {
      await setTheme(page, theme);
      assert.deepEqual(await outside(page, '#preview-apply', '#preview-panel'), [], `Apply inside the preview at ${viewport.width} px, ${theme}`);
    }
  }
  await page.setViewportSize({ width: 1366, height: 800 });
  await page.getByRole('button', { name: /^Apply: configure algorithm envoy-ring/ }).click();
  await eventually('envoy-ring applied', async () => (await http(server, 'GET', '/api/config')).body.algorithm === 'envoy-ring');
  await eventually('the preview gone', async () => !(await page.locator('#preview-panel').isVisible()));
  await expectText(page.locator('#ring-mode'), /^envoy-ring/);
  assert.equal(await page.locator('#config-dirty').isVisible(), false, 'no "not applied yet" after the preview\'s Apply');
  // A preview's progress is the preview's: after "Cancel preview" no
  // "Cancel the running operation" stays. (The server's progress events are
  // played to a second page here, since a preview is seldom long enough.)
  const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
  await context.addInitScript(() => {
    const Source = window.EventSource;
    window.__sources = [];
    window.EventSource = class extends Source {
      constructor(...args) {
        super(...args);
        window.__sources.push(this);
      }
    };
  });
  const other = await context.newPage();
  other.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  await other.goto(`${server.base}/`);
  await other.locator('#connection[data-state="live"]').waitFor({ timeout: 10000 });
  let release;
  const held = new Promise((r) => { release = r; });
  await other.route('**/api/preview', async (route) => { await held; await route.continue().catch(() => {}); });
  await other.getByLabel('Node name', { exact: true }).fill('golf');
  await other.getByRole('button', { name: 'Preview add', exact: true }).click();
  await expectText(other.locator('#preview-summary'), 'Working out');
  const progress = (done) => ({ type: 'add_node', done, total: 100000 });
  // Dispatched on the page's own event stream, as the server sends them.
  await other.evaluate((p) => {
    for (const es of window.__sources) es.dispatchEvent(new MessageEvent('progress', { data: JSON.stringify(p) }));
  }, progress(5000));
  assert.equal(await other.locator('#cancel-op').isVisible(), false, 'no cancel button for a preview\'s progress');
  await other.getByRole('button', { name: 'Cancel preview', exact: true }).click();
  assert.equal(await other.locator('#preview-panel').isVisible(), false);
  assert.equal(await other.locator('#cancel-op').isVisible(), false, 'no "Cancel the running operation" after "Cancel preview"');
  release();
  await sleep(300);
  assert.equal(await other.locator('#preview-panel').isVisible(), false, 'the late answer of a cancelled preview is not shown');
  await other.context().close();
});
test('issue 13: nothing cut — theory names every algorithm, dropdowns, history, share bars, compare table; arcs and the SHA-256 told right', async ({ browser, server, errors }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'ring', params: { points_per_node: 4 } })).status, 200);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 300 } })).status, 201);
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'ring', params: { points_per_node: 4 }, replicas: 2 })).status, 200);
  const page = await openPage(browser, server, errors, { viewport: { width: 1366, height: 800 } });
  await expectText(page.locator('#keys-count'), '300 keys');
  // An arc's details: the arc's own keys, and the node's total named as such.
  const ring = (await http(server, 'GET', '/api/ring')).body.points;
  const keys = [];
  for (let offset = 0; offset < 300; offset += 100) keys.push(...(await http(server, 'GET', `/api/keys?limit=100&offset=${offset}`)).body.keys);
  await page.locator('#ring-overlay').focus();
  await page.keyboard.press('ArrowRight'); // arc 2 of 12: from point 0 to point 1
  await page.keyboard.press('Enter');
  const [p0, p1] = ring;
  const inArc = keys.filter((k) => k.position > p0.position && k.position <= p1.position).length;
  const node = (await http(server, 'GET', `/api/nodes/${p1.node}`)).body;
  const details = await expectText(page.locator('#ring-selection'), 'keys in this arc');
  assert.ok(details.includes(`keys in this arc${inArc}`), `the arc's own ${inArc} keys: ${details}`);
  assert.ok(details.includes(`keys of ${p1.node}, all 4 arcs${node.keys.toLocaleString('en-US')}`), `the node's ${node.keys}, named: ${details}`);
  // The lookup trace under ring: the key's whole SHA-256; not under ketama (MD5).
  await page.getByLabel('Look up key', { exact: true }).fill('key-7');
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  await expectText(page.locator('#lookup-steps'), sha256('key-7'));
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'ketama', replicas: 1 })).status, 200);
  await expectText(page.locator('#ring-mode'), /^ketama/);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  // The trace under ketama: MD5 and no SHA-256, both at once (a trace of
  // the ring's view may still be on screen until the ketama one lands).
  await eventually('MD5 and no SHA-256 under ketama', async () => {
    const t = await page.locator('#lookup-steps').textContent();
    return /MD5/i.test(t) && !t.includes(sha256('key-7'));
  });
  // A long history entry, theory and compare.
  assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'envoy-ring', params: { min_ring_size: 2048, max_ring_size: 4194304 }, replicas: 2 })).status, 200);
  await expectText(page.locator('#ring-mode'), /^envoy-ring/);
  await page.getByRole('button', { name: 'Show theory', exact: true }).click();
  await eventually('theory chart', async () => (await page.locator('#theory-chart text.alg-label').count()) > 0, 30000);
  const theory = (await http(server, 'GET', '/api/theory')).body;
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await eventually('compare rows', async () => (await page.locator('#compare-body tr').count()) >= 10, 30000);
  for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    for (const theme of ['light', 'dark']) {
      await setTheme(page, theme);
      const where = `${viewport.width} px ${theme}`;
      // Theory: every algorithm named, no two names overlapping, all inside the chart.
      const names = await page.$$eval('#theory-chart text.alg-label', (ts) => {
        const chart = document.querySelector('#theory-chart').getBoundingClientRect();
        return ts.map((t) => {
          const r = t.getBoundingClientRect();
          return { name: t.dataset.algorithm, top: r.top, bottom: r.bottom, inside: r.top >= chart.top - 0.5 && r.bottom <= chart.bottom + 0.5 && r.right <= chart.right + 0.5 };
        });
      });
      assert.deepEqual(names.map((n) => n.name).sort(), theory.algorithms.map((a) => a.algorithm).sort(), `${where}: theory names every algorithm`);
      assert.ok(names.every((n) => n.inside), `${where}: theory labels inside the chart`);
      const byTop = [...names].sort((a, b) => a.top - b.top);
      for (let i = 1; i < byTop.length; i++) assert.ok(byTop[i].top >= byTop[i - 1].bottom - 1, `${where}: ${byTop[i - 1].name} and ${byTop[i].name} overlap`);
      // Dropdowns show their whole choice.
      const cutOptions = await page.evaluate(() => {
        const out = [];
        const g = document.createElement('canvas').getContext('2d');
        for (const id of ['algorithm', 'scenario-list']) {
          const sel = document.getElementById(id);
          const st = getComputedStyle(sel);
          g.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
          const room = sel.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20; // the arrow
          for (const o of sel.options) if (g.measureText(o.textContent).width > room) out.push(`${id}: ${o.textContent}`);
        }
        return out;
      });
      assert.deepEqual(cutOptions, [], `${where}: dropdown choices fit`);
      // History entries are whole.
      const cutHistory = await page.$$eval('#history-list .op-what', (xs) => xs.filter((x) => x.scrollWidth > x.clientWidth + 1).map((x) => x.textContent));
      assert.deepEqual(cutHistory, [], `${where}: history entries whole`);
      // Statistics bars say which percentage is which.
      const values = await page.$$eval('#stats-bars .bar-value', (xs) => xs.map((x) => x.textContent));
      assert.ok(values.length === 3 && values.every((v) => /keys \d/.test(v) && /space \d/.test(v)), `${where}: ${values}`);
      // The compare table shows its last row whole.
      const wrap = await page.locator('.compare-panel .table-wrap').evaluate((e) => [e.scrollHeight, e.clientHeight]);
      assert.ok(wrap[0] <= wrap[1] + 1, `${where}: compare table cut (${wrap[0]} in ${wrap[1]} px)`);
      const last = await page.locator('#compare-body tr').last().boundingBox();
      const box = await page.locator('.compare-panel .table-wrap').boundingBox();
      assert.ok(last.y + last.height <= box.y + box.height + 1, `${where}: last compare row inside its box`);
      fs.mkdirSync(artifacts, { recursive: true });
      await page.locator('.theory-panel').screenshot({ path: path.join(artifacts, `theory-${viewport.width}-${theme}.png`) });
    }
  }
  await page.context().close();
});
test('issue 13: "Run next step" asks before a scenario file resets; one "Line N" in its messages', async ({ page, server }) => {
  await loadSample(server);
  await expectText(page.locator('#keys-count'), '1,000 keys');
  const before = await operationIds(server);
  await page.getByLabel('Built in', { exact: true }).selectOption('fill');
  await expectText(page.locator('#scenario-about'), 'Nodes, then many keys');
  await page.getByRole('button', { name: 'Load', exact: true }).click();
  await expectText(page.locator('#scenario-status'), 'Loaded fill.ringsim');
  const dialog = page.getByRole('dialog');
  for (const button of ['Run next step', 'Run all']) {
    await page.getByRole('button', { name: button, exact: true }).click();
    await dialog.waitFor({ state: 'visible' });
    await expectText(dialog, '6 nodes and 1,000 keys');
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expectText(page.locator('#scenario-status'), 'the ring was left as it was');
    assert.deepEqual(await operationIds(server), before, `${button}, cancelled: nothing ran`);
  }
  await page.getByRole('button', { name: 'Run next step', exact: true }).click();
  await dialog.waitFor({ state: 'visible' });
  await dialog.getByRole('button', { name: /reset/i }).click();
  await expectText(page.locator('#scenario-status'), /^Step 1 of \d+ done/);
  await eventually('reset ran', async () => (await http(server, 'GET', '/api/stats')).body.nodes === 0);
  // The server's "line 2: …" is not prefixed a second time.
  await page.locator('#scenario-text').fill('node add x\nfrobnicate now\n');
  await page.getByRole('button', { name: 'Run next step', exact: true }).click();
  const message = await expectText(page.locator('#scenario-file-error'), /unknown command/i);
  assert.match(message, /^Line 2: unknown command/);
  assert.ok(!/line 2:.*line 2:/i.test(message), message);
});

test('issue 13: keys pasted as a list; replica copies are not "nothing moved"; large counts grouped', async ({ page, server }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 12000 } })).status, 201);
  await expectText(page.locator('#keys-count'), '12,000 keys');
  await expectText(page.locator('#history-list li .op-what').first(), 'Inserted 12,000 keys');
  // Paste: one key a line, spaces kept, empty lines left out, a stored one skipped.
  await page.getByText('Many keys: paste a list or pick a file').click();
  const pasted = ['first pasted', '  spaced  ', 'key-5', 'ünï'];
  await page.getByLabel('Keys to insert, one a line').fill(`${pasted[0]}\r\n${pasted[1]}\n\n${pasted[2]}\n${pasted[3]}\n`);
  await page.getByRole('button', { name: 'Insert 4 keys', exact: true }).click();
  await expectText(page.locator('#keys-paste-result'), 'Inserted 3 of 4 keys; 1 skipped');
  for (const k of ['first pasted', '  spaced  ', 'ünï']) assert.equal((await http(server, 'GET', `/api/keys/${encodeURIComponent(k)}`)).status, 200, k);
  const op = (await http(server, 'GET', '/api/operations')).body.operations.pop();
  assert.equal(op.type, 'insert_keys', 'one operation for the list');
  await expectText(page.locator('#keys-count'), '12,003 keys');
  // More replicas: owners stay, copies are added; history and "What moved" say so.
  assert.equal((await http(server, 'PUT', '/api/config', { replicas: 2 })).status, 200);
  const cfg = (await http(server, 'GET', '/api/operations')).body.operations.pop();
  assert.equal(cfg.keys_moved, 0);
  assert.ok(cfg.replica_moves > 1000, `${cfg.replica_moves} copies`);
  const copies = `${cfg.replica_moves.toLocaleString('en-US')} replica copies added`;
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    const entry = page.locator(`#history-list li[data-id="${cfg.id}"]`);
    await expectText(entry, copies);
    assert.ok(!(await entry.textContent()).includes('nothing moved'), await entry.textContent());
    await expectText(page.locator('#moved-summary'), copies);
  }
  // Theory for N = 1: answered for one node, and said so (never another N).
  await page.getByLabel('Nodes (empty: the current count)', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Show theory', exact: true }).click();
  await eventually('theory answered for 1 node', async () => /^1 node, measured/.test(await page.locator('#theory-status').textContent()), 30000);
  // A scenario step's moves, grouped.
  await page.locator('#scenario-text').fill('node add delta\n');
  await page.getByRole('button', { name: 'Run all', exact: true }).click();
  const line = await expectText(page.locator('#scenario-results li'), /keys moved/);
  const moved = (await http(server, 'GET', '/api/operations')).body.operations.pop().keys_moved;
  assert.ok(moved >= 1000 && line.includes(`${moved.toLocaleString('en-US')} keys moved`), line);
});
test('issue 13: a node\'s weight changed in place in the nodes table (PATCH), refusals beside it', async ({ browser, server, errors }) => {
  for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 600 } })).status, 201);
  let weight = 1;
  for (const [viewport, theme] of [[{ width: 1366, height: 800 }, 'light'], [{ width: 390, height: 844 }, 'dark']]) {
    const page = await openPage(browser, server, errors, { viewport, bypassCSP: true });
    await setTheme(page, theme);
    await expectText(page.locator('#keys-count'), '600 keys');
    const where = `${viewport.width} px ${theme}`;
    const row = nodeRow(page, 'alpha');
    // Change: 1 → 3 (ring, 1 point per node: 3 points), one set_weight operation.
    weight += 2;
    await row.getByRole('button', { name: 'Change the weight of alpha', exact: true }).click();
    const input = row.getByLabel('Weight of alpha', { exact: true });
    await eventually('the weight box has the focus', async () => input.evaluate((e) => e === document.activeElement));
    const sizes = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(sizes[0] <= sizes[1], `${where}: editing does not widen the page (${sizes})`);
    await input.fill(String(weight));
    await input.press('Enter');
    await eventually(`${where}: weight ${weight} stored`, async () => (await http(server, 'GET', '/api/nodes/alpha')).body.weight === weight);
    const node = (await http(server, 'GET', '/api/nodes/alpha')).body;
    assert.equal(node.points, weight);
    await expectText(row.locator('td[data-col="weight"]'), String(weight));
    await expectText(row.locator('td[data-col="points"]'), String(weight));
    const op = (await http(server, 'GET', '/api/operations')).body.operations.pop();
    assert.equal(op.type, 'set_weight');
    await expectText(page.locator('#history-list li .op-what').first(), 'Changed the weight of alpha');
    await expectText(page.locator('#moved-operation'), `After #${op.id} · Changed the weight of alpha`);
    assert.equal(await row.getByRole('button', { name: 'Change the weight of alpha', exact: true }).evaluate((e) => e === document.activeElement), true, 'the focus back on Change');
    // A refusal: the server's words beside the box, nothing changed.
    await row.getByRole('button', { name: 'Change the weight of alpha', exact: true }).click();
    await input.fill('0');
    await row.getByRole('button', { name: 'Save', exact: true }).click();
    const refusal = await expectText(row.locator('.weight-edit .error'), /weight/i);
    const api = await http(server, 'PATCH', '/api/nodes/alpha', { weight: 0 });
    assert.equal(api.status, 400);
    assert.ok(refusal.toLowerCase().includes(api.body.error.message.toLowerCase().slice(0, 12)), `${refusal} / ${api.body.error.message}`);
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await axeSerious(page, theme === 'dark'), [], `${where}: axe with the editor and its refusal`);
    assert.equal((await http(server, 'GET', '/api/nodes/alpha')).body.weight, weight, 'unchanged');
    // Escape leaves it as it was.
    await input.press('Escape');
    assert.equal(await row.locator('.weight-edit').count(), 0);
    await expectText(row.locator('td[data-col="weight"]'), String(weight));
    fs.mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, `weight-edit-${viewport.width}-${theme}.png`) });
    await page.context().close();
  }
});

// Node states (docs/api.md "Node states"): the toggle on each node's row
// marks it down and up (one set_state operation each), the row and the
// toggle say so, the keys it owns show who serves them meanwhile.
test('a node marked down and up with its toggle; its keys show who serves them', async ({ browser, server, errors }) => {
  const page = await openPage(browser, server, errors, { bypassCSP: true }); // axe is injected
  for (const n of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name: n })).status, 201);
  assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 200 } })).status, 201);
  await eventually('three rows', async () => (await nodeNamesInTable(page)).length === 3);
  const row = nodeRow(page, 'bravo');
  const toggle = row.getByRole('button', { name: 'Down: bravo', exact: true });
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false', 'up: not pressed');
  await toggle.click();
  // Previewed first (issue 25 item 11), then applied.
  await page.getByRole('button', { name: 'Apply: mark bravo down', exact: true }).click();
  await eventually('bravo is down on the server', async () => (await http(server, 'GET', '/api/nodes/bravo')).body.state === 'down');
  await eventually('the toggle is pressed', async () => (await toggle.getAttribute('aria-pressed')) === 'true');
  await expectText(toggle, 'Down');
  assert.equal(await row.evaluate((tr) => tr.classList.contains('node-down')), true, 'the row is drawn as down');
  await expectText(row.locator('td[data-col="keys"]'), /^0$/, 'a down node serves no key');
  const op = (await http(server, 'GET', '/api/operations')).body.operations.pop();
  assert.equal(op.type, 'set_state');
  await expectText(page.locator('#history-list li .op-what').first(), 'Marked bravo down');
  // Its keys: the table filtered by bravo shows who serves each one.
  const served = (await http(server, 'GET', '/api/keys?limit=1000')).body.keys.filter((k) => k.node === 'bravo');
  assert.ok(served.length > 0 && served.every((k) => k.served_by && k.served_by !== 'bravo'), 'the API says who serves them');
  await page.locator('#keys-node').selectOption('bravo').catch(() => {});
  await expectText(page.locator('#keys-body'), `served by ${served[0].served_by}`, 'the page too');
  assert.deepEqual(await axeSerious(page), [], 'axe with a node down');
  await toggle.click();
  await page.getByRole('button', { name: 'Apply: mark bravo up', exact: true }).click();
  await eventually('bravo is up again', async () => (await http(server, 'GET', '/api/nodes/bravo')).body.state === 'up');
  await eventually('the toggle is not pressed', async () => (await toggle.getAttribute('aria-pressed')) === 'false');
  await eventually('no key says served by', async () => (await page.locator('#keys-body .served-by').count()) === 0);
  assert.equal(await toggle.evaluate((e) => e === document.activeElement), true, 'the focus stays on the toggle');
  await page.context().close();
});
registerImportTests(test, { eventually, http, nodeNamesInTable, expectText });
registerIssue25Tests(test, {
  eventually, http, nodeNamesInTable, expectText, nodeRow, axeSerious, setTheme, downloadOf, artifacts,
});
registerIssue27Tests(test, { eventually, http, expectText, setTheme });
registerTraceTests(test, { eventually, http, expectText, downloadOf, outside });
registerDomainsTests(test, {
  eventually, http, expectText, outside, axeSerious, openPage, setTheme, artifacts,
});

async function main() {
  if (!fs.existsSync(bin)) {
    console.error(`ringsim binary not found at ${bin} (set RINGSIM_BIN)`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let passed = 0;
  let failed = 0;
  // RINGSIM_SHARD=k/n: the k-th of n shares of the tests (every n-th from
  // the k-th), so that make test runs two browsers side by side.
  const [shard, shards] = (process.env.RINGSIM_SHARD || '1/1').split('/').map(Number);
  if (!(shards >= 1 && shard >= 1 && shard <= shards)) throw new Error(`RINGSIM_SHARD ${process.env.RINGSIM_SHARD}: k/n with 1 <= k <= n`);
  for (const [i, t] of tests.entries()) {
    if (i % shards !== shard - 1) continue;
    if (filter && !t.name.includes(filter)) continue;
    if (process.env.RINGSIM_SKIP && t.name.includes(process.env.RINGSIM_SKIP)) continue;
    if (process.env.RINGSIM_ONLY && !t.name.includes(process.env.RINGSIM_ONLY)) continue; /* while working on one */
    const started = Date.now();
    let server = null;
    let page = null;
    const errors = [];
    try {
      server = await startServer();
      page = await openPage(browser, server, errors);
      await t.fn({ page, browser, server, errors });
      const pageErrors = errors.filter((e) => e.startsWith('page error'));
      assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
      passed++;
      console.log(`ok   ${t.name} (${Date.now() - started} ms)`);
    } catch (err) {
      failed++;
      console.log(`FAIL ${t.name} (${Date.now() - started} ms)\n     ${String(err.stack || err).split('\n').slice(0, 6).join('\n     ')}`);
      if (errors.length) console.log(`     page said: ${errors.slice(0, 5).join(' | ')}`);
      if (page) {
        try {
          fs.mkdirSync(artifacts, { recursive: true });
          await page.screenshot({ path: path.join(artifacts, `fail-${t.name.replace(/\W+/g, '-').slice(0, 60)}.png`), fullPage: true });
        } catch { /* best effort */ }
      }
    } finally {
      if (page) await page.context().close().catch(() => {});
      if (server) await server.stop();
    }
  }
  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
