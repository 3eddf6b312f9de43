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

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.resolve(repo, process.env.RINGSIM_BIN || 'build/ringsim');
const webDir = path.join(repo, 'web');
const artifacts = path.join(repo, 'test-artifacts');
const filter = process.argv[2] || '';

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
  return page.locator('#nodes-body tr').filter({ has: page.locator('td:first-child', { hasText: name }) });
}

async function nodeNamesInTable(page) {
  return page.$$eval('#nodes-body tr[data-node]', (rows) => rows.map((r) => r.dataset.node));
}

async function ringLabels(page) {
  return page.$$eval('#ring-svg text.node-label', (ts) => ts.map((t) => t.firstChild.textContent));
}

async function openPage(browser, server, errors) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
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
  for (const label of ['Node name', 'Key', 'Number of keys', 'Points per node', 'Look up key', 'Timeline']) {
    assert.equal(await page.getByLabel(label, { exact: true }).count(), 1, `one control labelled ${label}`);
  }
  for (const name of ['Add node', 'Remove node', 'Insert key', 'Delete key', 'Generate keys', 'Reset', 'Apply']) {
    assert.equal(await page.getByRole('button', { name, exact: true }).count(), 1, `one button named ${name}`);
  }
  assert.equal(await page.getByLabel('Number of keys', { exact: true }).getAttribute('type'), 'number');
  assert.equal(await page.getByLabel('Timeline', { exact: true }).getAttribute('type'), 'range');
  assert.deepEqual(errors, []);
});

test('add and remove nodes through the form', async ({ page, server }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  const row = nodeRow(page, 'alpha');
  const cells = await row.locator('td').allTextContents();
  assert.equal(cells[1].replace(/,/g, ''), String(positionOf('alpha')), 'position column is SHA-256 based');
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
  const cells = await nodeRow(page, 'heavy').locator('td').allTextContents();
  assert.equal(cells[2], '2.5', 'weight column');
  assert.equal(cells[3], '10', 'points = round(4 × 2.5)');
  const { body } = await http(server, 'GET', '/api/nodes/heavy');
  assert.equal(body.weight, 2.5);
  assert.equal(body.points, 10);
  // A weight the server refuses is explained next to the control.
  await page.getByLabel('Node name', { exact: true }).fill('weightless');
  await page.getByLabel('Weight', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  await expectText(page.locator('#node-error'), /weight/, 'weight error next to the node form');
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
  const summary = await expectText(page.locator('#moved-summary'), new RegExp(`^${op.keys_moved} keys? moved`));
  if (op.keys_moved > 0) {
    const m = summary.match(/^(\d+) keys? moved: (.*)$/);
    assert.ok(m, `summary has pairs: ${summary}`);
    const parts = m[2].split(', ').map((p) => p.match(/^(.+) → (.+) (\d+)$/));
    assert.ok(parts.every(Boolean), `pairs well formed: ${summary}`);
    assert.ok(parts.every((p) => p[2] === 'charlie' && ['alpha', 'bravo'].includes(p[1])), summary);
    const counts = parts.map((p) => Number(p[3]));
    assert.equal(counts.reduce((a, b) => a + b, 0), op.keys_moved);
    assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'largest first');
    const expected = new Map(op.moved_from.map((f) => [f.node, f.keys]));
    for (const p of parts) assert.equal(Number(p[3]), expected.get(p[1]));
  }
  // Before/after statistics of the last change.
  await expectText(page.locator('#moved-compare'), /Nodes\s*23/);
});

test('a duplicate node name shows the server error next to the control', async ({ page }) => {
  await addNode(page, 'alpha');
  await page.getByLabel('Node name', { exact: true }).fill('alpha');
  await page.getByRole('button', { name: 'Add node', exact: true }).click();
  const error = page.locator('#node-form [role="alert"]');
  await expectText(error, /already exists/);
  assert.match(await error.textContent(), /alpha/);
  assert.equal(await page.getByLabel('Node name', { exact: true }).getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#key-error').textContent(), '', 'other controls show no error');
  // Bad input is explained by the server, next to the control that sent it.
  await page.getByLabel('Points per node', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await expectText(page.locator('#config-form [role="alert"]'), /\S/);
  await page.getByLabel('Number of keys', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Generate keys', exact: true }).click();
  await expectText(page.locator('#generate-form [role="alert"]'), /\S/);
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

test('a node name containing HTML is shown as text and never run', async ({ page, server }) => {
  const evil = '<img src=x onerror=window.__xss=1>';
  await addNode(page, evil);
  assert.equal(await page.locator('#nodes-body img').count(), 0);
  assert.equal(await page.locator('img').count(), 0, 'no img element anywhere');
  await eventually('label on the ring', async () => (await ringLabels(page)).includes(evil));
  await page.getByLabel('Key', { exact: true }).fill('<b>bold</b>');
  await page.getByRole('button', { name: 'Insert key', exact: true }).click();
  await expectText(page.locator('#keys-body'), '<b>bold</b>');
  await expectText(page.locator('#history-list'), evil);
  assert.equal(await page.locator('#keys-body b').count(), 0);
  await sleep(300);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal((await http(server, 'GET', `/api/nodes/${encodeURIComponent(evil)}`)).body.name, evil);
});

test('lookup trace shows every step', async ({ page }) => {
  await addNode(page, 'alpha');
  await addNode(page, 'bravo');
  const key = 'user:1001';
  await page.getByLabel('Look up key', { exact: true }).fill(key);
  await page.getByLabel('Look up key', { exact: true }).press('Enter');
  const steps = page.locator('#lookup-steps');
  const hex = sha256(key);
  const pos = positionOf(key);
  const text = await expectText(steps, hex);
  assert.ok(text.includes(hex.slice(0, 8)));
  assert.ok(text.includes(pos.toLocaleString('en-US')), 'position');
  assert.ok(text.includes(`${((pos / 2 ** 32) * 360).toFixed(3)}°`), 'angle');
  const points = ['alpha', 'bravo'].map((n) => ({ n, p: positionOf(n) })).sort((a, b) => a.p - b.p);
  const succ = points.find((x) => x.p >= pos) || points[0];
  const wrapped = !points.some((x) => x.p >= pos);
  assert.ok(text.includes(succ.p.toLocaleString('en-US')), 'successor point position');
  assert.match(await steps.locator('li').last().textContent(), new RegExp(`^Owner${succ.n}`));
  assert.equal(/wrap/.test(text), wrapped, 'wrap is mentioned exactly when it happens');
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
    const pts = await page.$$eval('#nodes-body tr', (trs) => trs.map((tr) => tr.cells[3].textContent));
    return pts.length === 3 && pts.every((p) => p === '10');
  });
  await page.locator('#nodes-table th[data-sort="name"] button').click();
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
    const o = await page.$$eval('#keys-body tr', (trs) => trs.map((tr) => tr.cells[2] && tr.cells[2].textContent));
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
  await expectText(page.locator('#moved-summary'), new RegExp(`^${last.keys_moved} keys moved: ${last.subject} → `));
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

test('ring hover, key path on click, history lists the moves, table row traces', async ({ page }) => {
  // A key that moves from alpha to bravo when bravo joins.
  let soloKey = null;
  for (let i = 0; !soloKey; i++) if (ownerOf(`solo-${i}`, ['alpha', 'bravo']) === 'bravo') soloKey = `solo-${i}`;
  await addNode(page, 'alpha');
  await page.getByLabel('Key', { exact: true }).fill(soloKey);
  await page.getByRole('button', { name: 'Insert key', exact: true }).click();
  await expectText(page.locator('#keys-count'), /^1 key$/);
  // Hover the node's point: name, position and owner.
  const p = await ringPoint(page, positionOf('alpha'));
  await page.mouse.move(p.x, p.y);
  const tip = await expectText(page.locator('#ring-tooltip'), 'alpha');
  assert.ok(tip.includes(positionOf('alpha').toLocaleString('en-US')), tip);
  assert.match(tip, /owner: alpha/);
  // Click the key's dot: its details and path to the owner.
  const kpos = positionOf(soloKey);
  const g = await page.locator('#ring-overlay').boundingBox();
  const jitter = (kpos & 3) * 3.5;
  const band = Math.max(8, g.width * 0.022);
  const k = await ringPoint(page, kpos, (g.width * 0.37 - band / 2 - 4 - 3 - jitter) / (g.width * 0.37));
  await page.mouse.click(k.x, k.y);
  const sel = await expectText(page.locator('#ring-selection'), soloKey);
  assert.match(sel, /Owneralpha/);
  assert.match(sel, /clockwise to the point at/);
  // Add a node: the history entry lists the moves on click.
  await addNode(page, 'bravo');
  await addNode(page, 'charlie');
  const ops = await page.$$eval('#history-list li .op-what', (xs) => xs.map((x) => x.textContent));
  assert.equal(ops[0], 'Added node charlie', 'newest first');
  assert.equal(ops[ops.length - 1], 'Added node alpha');
  const bravoEntry = page.locator('#history-list li', { hasText: 'Added node bravo' });
  const movesButton = bravoEntry.locator('button[aria-expanded]');
  assert.equal(await movesButton.textContent(), '1 moved (from alpha 1)');
  await movesButton.click();
  await expectText(bravoEntry.locator('.op-detail'), `${soloKey} : alpha → bravo`);
  assert.equal(await movesButton.getAttribute('aria-expanded'), 'true');
  // A keys table row runs the lookup trace.
  await page.locator('#keys-body tr', { hasText: soloKey }).click();
  await expectText(page.locator('#lookup-steps'), sha256(soloKey));
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
  await expectText(page.locator('#moved-summary'), /keys? moved: .* → foxtrot/);
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

test('large ring: 1000 nodes and 1M keys stay responsive (density band, paging)', async ({ page, server }) => {
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

// ---- runner ------------------------------------------------------------------------

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
  for (const t of tests) {
    if (filter && !t.name.includes(filter)) continue;
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
