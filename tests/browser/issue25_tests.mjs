// Browser tests of issue 25's page items ("Right numbers for my cluster"):
// each one runs at 1366×800 and at 390×844 and asserts what is on screen,
// waiting for it (never for a time). Registered by tests/browser/run.mjs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

export const SIZES = [{ width: 1366, height: 800 }, { width: 390, height: 844 }];

export function registerIssue25Tests(test, h) {
  const { eventually, http, expectText } = h;

  /** Runs fn at both sizes on the same page (the state stays). */
  async function atBothSizes(page, fn) {
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await fn(`${size.width}×${size.height}`, size);
    }
  }

  async function post(server, urlPath, body, want = [200, 201]) {
    const r = await http(server, 'POST', urlPath, body);
    assert.ok(want.includes(r.status), `POST ${urlPath}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  }

  test('issue 25 item 9: the lookup headline names the node that serves the key, the owner beside it', async ({ page, server }) => {
    for (const name of ['alpha', 'bravo', 'charlie']) await post(server, '/api/nodes', { name });
    await post(server, '/api/keys', { generate: { count: 300 } });
    const r = await http(server, 'PUT', '/api/nodes/bravo/state', { state: 'down' });
    assert.equal(r.status, 200);
    const key = (await http(server, 'GET', '/api/keys?node=bravo&limit=1')).body.keys[0];
    assert.ok(key && key.served_by && key.served_by !== 'bravo', 'a key of bravo served elsewhere');
    await atBothSizes(page, async (where) => {
      await page.getByLabel('Look up key', { exact: true }).fill(key.key);
      await page.getByRole('button', { name: 'Look up', exact: true }).click();
      const head = page.locator('#lookup-result');
      await expectText(head, new RegExp(`→ served by ${key.served_by} \\(owner bravo is down\\)`), `${where}: served by ${key.served_by}, owner bravo`);
      await head.scrollIntoViewIfNeeded();
      assert.ok(await head.isVisible(), `${where}: the headline is on screen`);
    });
    // A key whose owner is up: the headline is just the owner.
    const up = (await http(server, 'GET', '/api/keys?node=alpha&limit=1')).body.keys[0];
    await page.getByLabel('Look up key', { exact: true }).fill(up.key);
    await page.getByRole('button', { name: 'Look up', exact: true }).click();
    await expectText(page.locator('#lookup-result'), /→ alpha · stored/, 'an up owner serves its own key');
    const text = await page.locator('#lookup-result').textContent();
    assert.ok(!/served by|owner/.test(text), `no owner beside it: ${text}`);
  });

  test('issue 25 item 7: "Export config" in every format of export --config; "History as a scenario" after an import', async ({ page, server }) => {
    const { downloadOf } = h;
    await post(server, '/api/nodes', { name: 'before-import' });
    await post(server, '/api/keys', { generate: { count: 500 } });
    await post(server, '/api/import', { text: 'upstream cache {\n  hash $request_uri consistent;\n  server 10.0.0.1:8080 weight=2;\n  server 10.0.0.2:8080;\n  server 10.0.0.3:8080 down;\n}\n' });
    const select = page.getByLabel('Config for', { exact: true });
    // The choice follows the algorithm in use: nginx after an nginx import.
    await eventually('the nginx format chosen', async () => (await select.inputValue()) === 'nginx');
    const formats = await select.locator('option').evaluateAll((os) => os.map((o) => o.value));
    const refusal = (await http(server, 'GET', '/api/export/config?format=none')).body.error.message;
    const listed = refusal.replace(/^.*one of /, '').split(/,\s*/);
    assert.deepEqual([...formats].sort(), [...listed].sort(), 'every format the server writes, and no other');
    await atBothSizes(page, async (where) => {
      const button = page.getByRole('button', { name: 'Export config', exact: true });
      await button.scrollIntoViewIfNeeded();
      const [b1, b2] = [await select.boundingBox(), await button.boundingBox()];
      assert.ok(Math.abs((b1.y + b1.height / 2) - (b2.y + b2.height / 2)) < 4, `${where}: the choice and its button on one row`);
      await select.selectOption('nginx');
      const file = await downloadOf(page, 'Export config');
      assert.equal(file.bytes.toString('utf8'), (await (await fetch(`${server.base}/api/export/config?format=nginx`)).text()), `${where}: the server's nginx text`);
      assert.match(file.bytes.toString('utf8'), /server 10\.0\.0\.3:8080 down;/);
      // A format the nodes cannot be written in: the server's reason, beside the panel.
      await select.selectOption('cassandra');
      await page.getByRole('button', { name: 'Export config', exact: true }).click();
      await expectText(page.locator('#export-error'), /cassandra/i, `${where}: the refusal is shown`);
      await select.selectOption('haproxy');
      const ha = await downloadOf(page, 'Export config');
      assert.match(ha.name, /haproxy/);
      assert.match(ha.bytes.toString('utf8'), /hash-type consistent/);
      assert.equal(await page.locator('#export-error').textContent(), '', `${where}: no error left after a good export`);
    });
    // The history, import included, as a scenario that rebuilds the state.
    const scen = await downloadOf(page, 'History as a scenario');
    const text = scen.bytes.toString('utf8');
    assert.match(text, /^node rm before-import$/m);
    assert.match(text, /^node add --weight 2 10\.0\.0\.1:8080$/m);
    assert.match(text, /^node add --down 10\.0\.0\.3:8080$/m);
    const keysBefore = (await http(server, 'GET', '/api/keys?limit=1000')).body.keys.map((k) => [k.key, k.node, k.served_by]);
    const run = await http(server, 'POST', '/api/scenarios/run', { text });
    assert.equal(run.status, 200, JSON.stringify(run.body).slice(0, 300));
    assert.equal(run.body.ok, true);
    const keysAfter = (await http(server, 'GET', '/api/keys?limit=1000')).body.keys.map((k) => [k.key, k.node, k.served_by]);
    assert.deepEqual(keysAfter, keysBefore, 'the scenario rebuilds every owner');
  });

  test('issue 25 item 13: keys from a file, one a line, as one operation; a file over the body limit is refused on the page', async ({ page, server }) => {
    await post(server, '/api/nodes', { name: 'alpha' });
    await post(server, '/api/keys', { key: 'already' });
    const lastOp = async () => (await http(server, 'GET', '/api/operations')).body.operations.at(-1);
    const before = (await lastOp()).id;
    let round = 0;
    await atBothSizes(page, async (where) => {
      round++;
      const summary = page.getByText('Many keys: paste a list or pick a file');
      await summary.scrollIntoViewIfNeeded();
      if (!(await page.locator('details.paste-keys').evaluate((d) => d.open))) await summary.click();
      const input = page.getByLabel('Or a file of keys, one a line', { exact: true });
      const lines = [`file key ${round} a`, 'already', '', `file key ${round} b`, `ünïcode ${round}`, `file key ${round} a`];
      await input.setInputFiles({ name: `keys-${round}.txt`, mimeType: 'text/plain', buffer: Buffer.from(lines.join('\r\n') + '\n') });
      const button = page.getByRole('button', { name: `Insert 5 keys from keys-${round}.txt`, exact: true });
      await button.waitFor();
      await button.click();
      await expectText(page.locator('#keys-paste-result'), `keys-${round}.txt: inserted 3 of 5 keys; 2 skipped`, `${where}: the result`);
      const op = await lastOp();
      assert.equal(op.id, before + round, `${where}: one operation for the file`);
      assert.equal(op.type, 'insert_keys');
      const stored = (await http(server, 'GET', `/api/keys/${encodeURIComponent(`ünïcode ${round}`)}`)).status;
      assert.equal(stored, 200, `${where}: a key as written in the file`);
      const box = await input.boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= (await page.viewportSize()).width + 0.5, `${where}: the file box fits the width`);
    });
    // Over 16 MiB of JSON: the page says so and sends nothing.
    // (A file on disk: Chromium reads it itself, where a buffer would cross the protocol.)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-keys-'));
    const bigFile = path.join(dir, 'huge.txt');
    fs.writeFileSync(bigFile, Array.from({ length: 200000 }, (_, i) => `${'k'.repeat(80)}-${i}`).join('\n'));
    await page.getByLabel('Or a file of keys, one a line', { exact: true }).setInputFiles(bigFile);
    await expectText(page.locator('#keys-paste-error'), /huge\.txt: 200,000 keys make a request of [\d.]+ MiB, over the server's 16 MiB.*key add --file/, 'the limit said on the page', 15000);
    assert.equal(await page.locator('#keys-file-insert').isVisible(), false, 'no button to send it');
    assert.equal((await lastOp()).id, before + 2, 'nothing sent');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('issue 25 item 12: the theory sentence speaks of the algorithm in use: Cassandra\'s tokens, nginx\'s virtual nodes, Maglev\'s table', async ({ page, server }) => {
    await http(server, 'PUT', '/api/config', { algorithm: 'cassandra' });
    for (let i = 1; i <= 6; i++) await post(server, '/api/nodes', { name: `10.0.0.${i}` });
    await post(server, '/api/keys', { generate: { count: 2000 } });
    const sentence = page.locator('#theory-sentence');
    await atBothSizes(page, async (where) => {
      await page.getByRole('button', { name: 'Show theory', exact: true }).click();
      await expectText(sentence, /16 tokens per node \(num_tokens\)/, `${where}: Cassandra's tokens`, 30000);
      const text = await sentence.textContent();
      assert.ok(!/160 points/.test(text), `${where}: not the generic ring: ${text}`);
      const api = (await http(server, 'GET', '/api/theory')).body;
      const mine = api.algorithms.find((a) => a.algorithm === 'cassandra');
      assert.ok(text.includes(`measures ${mine.structural_max_over_mean.toFixed(2)}× for cassandra`), `${where}: the server's figure: ${text}`);
      await sentence.scrollIntoViewIfNeeded();
      assert.ok(await sentence.isVisible(), where);
    });
    await post(server, '/api/import', { text: 'upstream u {\n hash $uri consistent;\n server a:80 weight=2;\n server b:80;\n server c:80;\n}\n' });
    await eventually('nginx in use', async () => (await page.locator('#algorithm').inputValue()) === 'nginx');
    await page.getByRole('button', { name: 'Show theory', exact: true }).click();
    await expectText(sentence, /160 virtual nodes per weight unit/, 'nginx: virtual nodes by weight', 30000);
    await http(server, 'PUT', '/api/config', { algorithm: 'maglev' });
    await eventually('maglev in use', async () => (await page.locator('#algorithm').inputValue()) === 'maglev');
    await page.getByRole('button', { name: 'Show theory', exact: true }).click();
    await expectText(sentence, /lookup table of 65,537 entries/, 'maglev: its table', 30000);
  });

  test('issue 25 item 20: a live lookup answered by a newer state never shows the older view\'s SHA-256 beside MD5 steps', async ({ page, server }) => {
    for (const name of ['alpha', 'bravo', 'charlie']) await post(server, '/api/nodes', { name });
    await post(server, '/api/keys', { generate: { count: 100 } });
    const digest = (await import('node:crypto')).createHash('sha256').update('key-7').digest('hex');
    await atBothSizes(page, async (where) => {
      await http(server, 'PUT', '/api/config', { algorithm: 'ring' });
      await expectText(page.locator('#ring-mode'), /^ring/, `${where}: the ring's view`);
      // The page's reload after the switch is held, so its view stays the
      // ring's while the server already answers ketama.
      const held = [];
      let open = false;
      await page.route('**/api/config*', (route) => (open ? route.continue() : held.push(route)));
      assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'ketama' })).status, 200);
      await eventually(`${where}: the reload is held`, async () => held.length > 0);
      await page.getByLabel('Look up key', { exact: true }).fill('key-7');
      await page.getByRole('button', { name: 'Look up', exact: true }).click();
      await expectText(page.locator('#lookup-steps'), /MD5/, `${where}: ketama's answer shown`);
      const text = await page.locator('#lookup-steps').textContent();
      assert.ok(!text.includes(digest), `${where}: no SHA-256 digest beside MD5 steps`);
      open = true;
      for (const r of held) await r.continue();
      await page.unroute('**/api/config*');
      await expectText(page.locator('#ring-mode'), /^ketama/, `${where}: the view catches up`);
      await eventually(`${where}: still MD5 and no SHA-256`, async () => {
        const t = await page.locator('#lookup-steps').textContent();
        return /MD5/.test(t) && !t.includes(digest);
      });
    });
  });

  /** Node and tick labels on the ring whose boxes overlap, and labels outside the panel. */
  async function ringLabelTrouble(page) {
    return page.evaluate(() => {
      const boxes = [...document.querySelectorAll('#ring-svg text')].map((t) => ({ t, b: t.getBoundingClientRect(), node: t.classList.contains('node-label') }));
      const panel = document.querySelector('.ring-panel').getBoundingClientRect();
      const out = [];
      for (let i = 0; i < boxes.length; i++) {
        const { t, b } = boxes[i];
        if (!boxes[i].node) continue;
        if (b.left < panel.left - 0.5 || b.right > panel.right + 0.5) out.push(`outside the panel: ${t.textContent}`);
        for (let j = 0; j < boxes.length; j++) {
          if (j === i || (boxes[j].node && j < i)) continue;
          const o = boxes[j].b;
          if (b.left < o.right - 0.5 && o.left < b.right - 0.5 && b.top < o.bottom - 0.5 && o.top < b.bottom - 0.5) out.push(`${t.textContent} overlaps ${boxes[j].t.textContent}`);
        }
      }
      return out;
    });
  }

  test('issue 25 item 8: the ring of a real cluster: labels never overlap, markers on their largest arc, a down node unmistakable, "7 up · 1 down", the preview banner covers no label', async ({ page, server }) => {
    const { setTheme, artifacts } = h;
    await post(server, '/api/keys', { generate: { count: 5000 } });
    await post(server, '/api/import', { text: `upstream cache {\n  hash $request_uri consistent;\n${[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `  server 10.0.0.${i}:8080${i === 1 ? ' weight=2' : ''}${i === 8 ? ' down' : ''};`).join('\n')}\n}\n` });
    const points = (await http(server, 'GET', '/api/ring')).body.points;
    // Each node's largest arc (from the point before to its point).
    const largest = new Map();
    for (let i = 0; i < points.length; i++) {
      const prev = points[(i - 1 + points.length) % points.length].position;
      const p = points[i];
      const len = (p.position - prev + 2 ** 32) % 2 ** 32;
      const b = largest.get(p.node);
      if (!b || len > b.len) largest.set(p.node, { len, from: prev, to: p.position });
    }
    const inArc = (x, a) => (a.from < a.to ? x > a.from && x <= a.to : x > a.from || x <= a.to);
    await atBothSizes(page, async (where) => {
      for (const theme of ['light', 'dark']) {
        await setTheme(page, theme);
        await expectText(page.locator('#ring-svg .centre'), '7 up · 1 down', `${where}: the centre counts the down node`);
        await eventually(`${where} ${theme}: every node labelled or named under the ring`, async () => {
          const labelled = await page.$$eval('#ring-svg text.node-label', (ts) => ts.map((t) => t.dataset.node));
          const legend = await page.$$eval('#ring-legend-nodes li', (ls) => ls.map((l) => l.dataset.node));
          return labelled.length + legend.length === 8;
        });
        assert.deepEqual(await ringLabelTrouble(page), [], `${where} ${theme}: no label overlaps another`);
        const anchors = await page.$$eval('#ring-svg text.node-label', (ts) => ts.map((t) => [t.dataset.node, Number(t.dataset.anchor)]));
        for (const [name, pos] of anchors) assert.ok(inArc(pos, largest.get(name)), `${where}: ${name}'s marker on its largest arc (${pos})`);
        const down = page.locator('#ring-svg text.node-label[data-node="10.0.0.8:8080"]');
        if (await down.count()) {
          assert.equal(await down.evaluate((t) => t.classList.contains('node-down')), true, `${where}: the down node's label is marked`);
          assert.match(await down.locator('title').textContent(), /\(down\)/);
        }
        await page.locator('.ring-panel').screenshot({ path: `${artifacts}/issue25-ring-${where.replace('×', 'x')}-${theme}.png` });
      }
      await setTheme(page, 'light');
    });
    // A preview's banner sits above the ring, covering no label.
    await page.setViewportSize({ width: 1366, height: 800 });
    await page.getByLabel('Node name', { exact: true }).fill('10.0.0.9:8080');
    await page.getByRole('button', { name: 'Preview add', exact: true }).click();
    const ghost = page.locator('#ring-ghost');
    await ghost.waitFor({ state: 'visible' });
    const covered = await page.evaluate(() => {
      const g = document.getElementById('ring-ghost').getBoundingClientRect();
      return [...document.querySelectorAll('#ring-svg text')].filter((t) => {
        const b = t.getBoundingClientRect();
        return b.left < g.right && g.left < b.right && b.top < g.bottom && g.top < b.bottom;
      }).map((t) => t.textContent);
    });
    assert.deepEqual(covered, [], 'the banner covers no label');
  });

  test('issue 25 item 10: layout at 1366×800 and 390×844: no empty column, Export rows aligned, theory chart full width, axes named, 20 node colours told apart (colour-blind too)', async ({ page, server }) => {
    for (let i = 1; i <= 20; i++) await post(server, '/api/nodes', { name: `n${String(i).padStart(2, '0')}` });
    await post(server, '/api/keys', { generate: { count: 4000 } });
    await http(server, 'PUT', '/api/workload', { kind: 'zipf', s: 1 });
    await eventually('20 rows', async () => (await page.locator('#nodes-body tr[data-node]').count()) === 20);
    // Colours: every pair of the 20 at least ΔE 10 apart (CIELAB) for normal
    // vision and under simulated deuteranopia and protanopia (Machado et
    // al. 2009, severity 1).
    const colours = await page.$$eval('#nodes-body tr[data-node] .dot', (ds) => ds.map((d) => getComputedStyle(d).backgroundColor.match(/\d+/g).slice(0, 3).map(Number)));
    assert.equal(colours.length, 20);
    const lin = (c) => c.map((v) => { const x = v / 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    const mul = (m, c) => m.map((row) => Math.min(1, Math.max(0, row.reduce((t, k, j) => t + k * c[j], 0))));
    const lab = (l) => {
      const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
      const X = (0.4124 * l[0] + 0.3576 * l[1] + 0.1805 * l[2]) / 0.95047;
      const Y = 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
      const Z = (0.0193 * l[0] + 0.1192 * l[1] + 0.9505 * l[2]) / 1.08883;
      return [116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))];
    };
    const DEUT = [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]];
    const PROT = [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]];
    const dist = (a, b) => Math.hypot(...a.map((v, k) => v - b[k]));
    const minPair = (cs) => { let m = Infinity; for (let i = 0; i < cs.length; i++) for (let j = i + 1; j < cs.length; j++) m = Math.min(m, dist(cs[i], cs[j])); return m; };
    for (const [name, M] of [['normal vision', null], ['deuteranopia', DEUT], ['protanopia', PROT]]) {
      const seen = colours.map((c) => lab(M ? mul(M, lin(c)) : lin(c)));
      assert.ok(minPair(seen) >= 10, `20 node colours apart under ${name}: ΔE ${minPair(seen).toFixed(1)}`);
    }
    // The charts, drawn once.
    await page.getByRole('button', { name: 'Show theory', exact: true }).click();
    await page.locator('#theory-chart').waitFor({ timeout: 30000 });
    await page.getByRole('button', { name: 'Compare', exact: true }).click();
    await page.locator('#compare-charts svg').first().waitFor({ timeout: 60000 });
    await page.locator('#traffic-requests').fill('20000');
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.locator('#traffic-charts svg').first().waitFor({ timeout: 60000 });
    const charts = await page.$$eval('svg.theory-chart, svg.bar-chart, svg.traffic-chart', (cs) => cs.map((c) => [c.id || c.getAttribute('class'), c.querySelectorAll('.axis-label').length]));
    assert.ok(charts.length >= 3, `charts drawn: ${JSON.stringify(charts)}`);
    for (const [id, n] of charts) assert.ok(n >= 2, `${id}: both axes named (${n})`);
    await atBothSizes(page, async (where, size) => {
      // Export rows: every CSV button in one column, every JSON button in another.
      const xs = await page.$$eval('.export-grid button', (bs) => bs.map((b) => [b.textContent, Math.round(b.getBoundingClientRect().left)]));
      for (const word of ['CSV', 'JSON']) {
        const lefts = new Set(xs.filter(([t]) => t === word).map(([, x]) => x));
        assert.equal(lefts.size, 1, `${where}: the ${word} buttons aligned: ${JSON.stringify(xs)}`);
      }
      // The theory chart as wide as its panel.
      await eventually(`${where}: theory chart full width`, async () => {
        const [c, p] = await page.$$eval('#theory-chart, #theory-chart-box', (es) => es.map((e) => e.getBoundingClientRect().width));
        return c >= p * 0.97;
      });
      if (size.width === 1366) {
        // No column ends in an empty stretch: under each of the three top
        // columns, what follows starts within 120 px of its last panel.
        const gaps = await page.evaluate(() => {
          const bottom = (sel) => Math.max(...[...document.querySelectorAll(`${sel} > .panel`)].filter((p) => !p.hidden).map((p) => p.getBoundingClientRect().bottom));
          const nodesTop = document.querySelector('.nodes-panel').getBoundingClientRect().top;
          const keysTop = document.querySelector('.keys-panel').getBoundingClientRect().top;
          return { controls: nodesTop - bottom('.col-controls'), ring: nodesTop - bottom('.col-ring'), side: keysTop - bottom('.col-side') };
        });
        for (const [col, gap] of Object.entries(gaps)) assert.ok(gap < 120 + 16, `1366×800: the ${col} column ends ${Math.round(gap)} px above what follows`);
      }
    });
  });

  test('issue 25 items 1, 2, 3, 11: fair-share ticks, exact pairs, keys with no live replica, and the Down toggle previewed first', async ({ page, server }) => {
    // Cassandra RF 1: a node down leaves its keys without a live replica.
    await http(server, 'PUT', '/api/config', { algorithm: 'cassandra' });
    await post(server, '/api/nodes', { name: 'a', weight: 2 });
    for (const name of ['b', 'c', 'd']) await post(server, '/api/nodes', { name });
    await post(server, '/api/keys', { generate: { count: 3000 } });
    const nodeRowLoc = (name) => page.locator(`#nodes-body tr[data-node="${name}"]`);
    await nodeRowLoc('d').waitFor();
    // Item 11: the toggle previews first; nothing changes until Apply.
    const before = (await http(server, 'GET', '/api/operations')).body.operations.length;
    await nodeRowLoc('b').getByRole('button', { name: 'Down: b', exact: true }).click();
    const preview = await (await http(server, 'POST', '/api/preview', { op: 'set_state', name: 'b', state: 'down' })).body;
    assert.ok(preview.unavailable_after.keys > 0, 'RF 1: b down leaves keys unserved');
    const summary = page.locator('#preview-summary');
    await expectText(summary, `${preview.unavailable_after.keys.toLocaleString('en-US')} keys would have no live replica`, 'the preview says what nobody would serve');
    assert.equal((await http(server, 'GET', '/api/operations')).body.operations.length, before, 'nothing recorded by the preview');
    await page.getByRole('button', { name: 'Apply: mark b down', exact: true }).click();
    await eventually('b down', async () => (await http(server, 'GET', '/api/nodes/b')).body.state === 'down');
    const stats = (await http(server, 'GET', '/api/stats')).body;
    const op = (await http(server, 'GET', '/api/operations')).body.operations.at(-1);
    await atBothSizes(page, async (where) => {
      // Item 3: the statistics and "What moved" count what nobody serves.
      await expectText(page.locator('#stats-numbers'), `No live replica${stats.unavailable.keys.toLocaleString('en-US')} keys`, `${where}: the statistics`);
      await expectText(page.locator('#moved-requests'), `${op.unavailable_after.keys.toLocaleString('en-US')} keys have no live replica`, `${where}: What moved`);
      // Item 2: the pairs are the server's, exact, largest first.
      await eventually(`${where}: pairs as the server counts them`, async () => {
        const rows = await page.$$eval('#moved-pairs table.pairs:first-of-type tbody tr', (trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent, tr.querySelector('td[data-col="keys"]').textContent]));
        const want = op.pairs.slice(0, rows.length).map((p) => [p.from ?? 'no live replica', p.to ?? 'no live replica', p.keys.toLocaleString('en-US')]);
        return rows.length > 0 && JSON.stringify(rows) === JSON.stringify(want);
      });
      // Item 1: each node's tick at its fair share (a: weight 2 of 4 up → 0.5; b down → 0).
      const ticks = await page.$$eval('#stats-bars .bar-row', (rs) => rs.map((r) => [r.dataset.node, Number(r.querySelector('.bar-ideal').dataset.fair)]));
      const fair = Object.fromEntries(stats.per_node.map((p) => [p.name, p.fair_share]));
      for (const [name, f] of ticks) assert.ok(Math.abs(f - fair[name]) < 1e-12, `${where}: ${name}'s tick at its fair share ${fair[name]} (got ${f})`);
      assert.equal(fair.a, 2 / 4);
      await expectText(page.locator('#stats-bars .bar-row[data-node="a"] .v-keys'), `${stats.per_node.find((p) => p.name === 'a').load_over_fair.toFixed(2)}× fair`, `${where}: a's load against its fair share`);
      // A key nobody serves says so in the keys table.
      await page.locator('#keys-node').selectOption('b');
      await expectText(page.locator('#keys-body'), 'no live replica', `${where}: a key of b`);
      await page.locator('#keys-node').selectOption('');
    });
  });

  test('issue 25 item 11: a twemproxy text of several pools offers its pools as choices', async ({ page, server }) => {
    const text = 'alpha:\n  listen: 127.0.0.1:22121\n  distribution: ketama\n  servers:\n   - 10.0.0.1:11211:1\nbeta:\n  listen: 127.0.0.1:22122\n  distribution: ketama\n  servers:\n   - 10.0.0.2:11211:1\n   - 10.0.0.3:11211:1\n';
    let round = 0;
    await atBothSizes(page, async (where) => {
      round++;
      await page.getByRole('button', { name: 'Paste your cluster…', exact: true }).click();
      await page.getByLabel('Configuration text', { exact: true }).fill(text);
      await page.getByLabel('Section name', { exact: true }).fill('');
      await page.getByRole('button', { name: 'Preview import', exact: true }).click();
      const choice = page.locator('#import-result').getByRole('button', { name: round === 1 ? 'beta' : 'alpha', exact: true });
      await choice.waitFor();
      assert.equal(await page.locator('#import-result button[data-section]').count(), 2, `${where}: both pools offered`);
      await choice.click();
      await expectText(page.locator('#import-result'), round === 1 ? /“beta”: 2 nodes/ : /“alpha”: 1 node/, `${where}: the chosen pool previewed`);
      await page.getByRole('button', { name: 'Apply import', exact: true }).click();
      await eventually(`${where}: imported`, async () => (await http(server, 'GET', '/api/nodes')).body.nodes.length === (round === 1 ? 2 : 1));
    });
  });

  test('issue 25 item 11: the workload view: rank against share, what the hottest 1% take, the hottest key and its node', async ({ page, server }) => {
    for (const name of ['alpha', 'bravo', 'charlie']) await post(server, '/api/nodes', { name });
    await post(server, '/api/keys', { generate: { count: 1000 } });
    assert.equal((await http(server, 'PUT', '/api/workload', { kind: 'zipf', s: 1.2 })).status, 200);
    const H = (k) => { let t = 0; for (let r = 1; r <= k; r++) t += r ** -1.2; return t; };
    const top1 = ((100 * H(10)) / H(1000)).toFixed(1);
    const hot = (await http(server, 'GET', '/api/stats')).body.requests.hottest_key;
    const where1 = (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent(hot.key)}`)).body;
    await atBothSizes(page, async (where) => {
      await expectText(page.locator('#workload-top'), `The hottest 1% of keys (10 of 1,000) take ${top1}% of requests`, `${where}: the hottest 1%`);
      await expectText(page.locator('#workload-hottest'), `Hottest key: ${hot.key}`, `${where}: the hottest key`);
      await expectText(page.locator('#workload-hottest'), `on ${where1.served_by ?? where1.node}`, `${where}: its node`);
      const chart = page.locator('#workload-rank-chart');
      await chart.scrollIntoViewIfNeeded();
      assert.ok(await chart.isVisible(), `${where}: the rank chart`);
      assert.equal(await chart.locator('.axis-label').count(), 2, `${where}: both axes named`);
    });
    // A hotspot: 5% of keys take 90%: the hottest 1% take 1/5 of 90%.
    assert.equal((await http(server, 'PUT', '/api/workload', { kind: 'hotspot', hot_fraction: 0.05, hot_share: 0.9 })).status, 200);
    await expectText(page.locator('#workload-top'), 'take 18.0% of requests', 'the hotspot read right');
  });

  test('issue 25 item 11: the workload view lists the hottest keys and the nodes that serve them', async ({ page, server }) => {
    const lookups = [];
    page.on('request', (r) => { if (r.url().includes('/api/lookup')) lookups.push(r.url()); });
    for (const name of ['alpha', 'bravo', 'charlie']) await post(server, '/api/nodes', { name });
    await post(server, '/api/keys', { generate: { count: 20 } });
    const odd = ['<img src=x onerror="window.pwned=1">', 'q"uote\'s & <b>', 'שלום עולם'];
    await post(server, '/api/keys', { keys: odd });
    // listed: 0.3, 0.2, 0.1, 0.05; the other 19 keys share 0.35 (1.84% each)
    const listed = [[odd[0], 0.3], [odd[1], 0.2], [odd[2], 0.1], ['key-3', 0.05]];
    assert.equal((await http(server, 'PUT', '/api/workload', { kind: 'keys', keys: listed.map(([key, share]) => ({ key, share })) })).status, 200);
    // the first others by key bytes: key-0, key-1, key-10 ... (key-3 is listed)
    const want = [...listed.map(([k]) => k), 'key-0', 'key-1', 'key-10', 'key-11', 'key-12', 'key-13'];
    const shares = ['30.00%', '20.00%', '10.00%', '5.00%', ...Array(6).fill(`${((100 * 0.35) / 19).toFixed(2)}%`)];
    const servedBy = async () => {
      const m = new Map();
      for (const k of want) {
        const l = (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent(k)}`)).body;
        m.set(k, l.served_by === null ? `no live replica (owner ${l.node} is down)` : l.served_by === l.node ? l.node : `${l.served_by} (owner ${l.node} is down)`);
      }
      return m;
    };
    const rowsNow = async () => page.$$eval('#workload-hottest-keys tbody tr', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
    const table = page.locator('#workload-hottest-keys');
    const seeTable = async (where, nodes) => {
      const wantRows = want.map((k, i) => [String(i + 1), k, shares[i], nodes.get(k)]);
      // the view is drawn again on every change: read it once it holds still
      await eventually(`${where}: the hottest keys, their shares and nodes`, async () => {
        assert.deepEqual(await rowsNow(), wantRows);
        await table.scrollIntoViewIfNeeded({ timeout: 1000 });
        assert.ok(await table.isVisible(), `${where}: the hottest keys' table`);
        assert.deepEqual(await table.locator('thead th').allTextContents(), ['#', 'Hottest keys', 'Requests', 'Served by'], `${where}: its header`);
        return true;
      });
      assert.equal(await page.evaluate(() => window.pwned), undefined, `${where}: a key's markup stays text`);
      assert.equal(await table.locator('img, b').count(), 0, `${where}: no element from a key's name`);
      const box = await table.boundingBox();
      const vw = page.viewportSize().width;
      assert.ok(box && box.x >= 0 && box.x + box.width <= vw + 1, `${where}: the table fits the width (${JSON.stringify(box)} in ${vw})`);
    };
    const up = await servedBy();
    await atBothSizes(page, async (where) => {
      await seeTable(where, up);
      await expectText(page.locator('#workload-hottest'), `Hottest key: ${odd[0]} · 30.00% of requests, on ${up.get(odd[0])}.`, `${where}: the hottest key's line from the list`);
    });
    assert.deepEqual(lookups.filter((u) => u.includes(encodeURIComponent(odd[0])) || u.includes('onerror')), [], 'no lookup of the hottest key: the answer names its nodes');
    // the owner of the hottest key down: its row says who serves it now
    const owner = (await http(server, 'GET', `/api/lookup?key=${encodeURIComponent(odd[0])}`)).body.node;
    assert.equal((await http(server, 'PUT', `/api/nodes/${owner}/state`, { state: 'down' })).status, 200);
    const down = await servedBy();
    assert.ok(down.get(odd[0]).includes(`(owner ${owner} is down)`), `served elsewhere: ${down.get(odd[0])}`);
    await atBothSizes(page, async (where) => seeTable(`${where}, ${owner} down`, down));
  });
}
