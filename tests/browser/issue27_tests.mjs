// Browser tests of issue 27 item 5 ("The page: one HTTP client, one
// palette, the catalogue's traits instead of 'ring' tested by name").
// Registered by tests/browser/run.mjs.

import assert from 'node:assert/strict';

/**
 * Records every fetch, EventSource and XMLHttpRequest the page makes, with
 * the script that made it (the first web/js frame of the call's stack).
 */
function recordRequests() {
  const calls = [];
  window.__requests = calls;
  const caller = () => {
    const frame = String(new Error().stack).split('\n').slice(2).find((l) => /\/js\/[\w.-]+\.js/.test(l));
    const m = frame && /\/js\/([\w.-]+\.js)/.exec(frame);
    return m ? m[1] : '(no web/js frame)';
  };
  const realFetch = window.fetch;
  window.fetch = function fetch(input, init) {
    calls.push({ what: 'fetch', url: String(input && input.url ? input.url : input), from: caller() });
    return realFetch.call(this, input, init);
  };
  const RealEventSource = window.EventSource;
  window.EventSource = class EventSource extends RealEventSource {
    constructor(url, options) {
      calls.push({ what: 'EventSource', url: String(url), from: caller() });
      super(url, options);
    }
  };
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    calls.push({ what: 'XMLHttpRequest', url: String(url), from: caller() });
    return open.call(this, method, url, ...rest);
  };
}

// The palette before it was written once (style.css of a6ff76b): the
// colours, and so the contrasts, must stay what they were.
const PALETTE_BEFORE = {
  light: {
    '--bg': '#f5f6f8', '--panel': '#ffffff', '--panel-2': '#f0f2f5', '--text': '#1d2330', '--muted': '#5a6372',
    '--line': '#d9dde4', '--accent': '#2f6fde', '--accent-text': '#ffffff', '--danger': '#c23b3b', '--danger-text': '#ffffff',
    '--error': '#b3261e', '--error-bg': '#fdecea', '--ok': '#1f7a4d', '--past': '#7a4f00', '--past-bg': '#fff4d6',
  },
  dark: {
    '--bg': '#12151b', '--panel': '#1b1f27', '--panel-2': '#232833', '--text': '#e4e7ec', '--muted': '#a3acba',
    '--line': '#3a4150', '--accent': '#6c9cff', '--accent-text': '#0c1220', '--danger': '#ef6b6b', '--danger-text': '#1a0b0b',
    '--error': '#ff8a80', '--error-bg': '#3a1d1d', '--ok': '#5fd39a', '--past': '#ffcf66', '--past-bg': '#3a2f12',
  },
};

/** The page's colours of the variables `names`, resolved as the page shows them now. */
function pageColours(page, names) {
  return page.evaluate((list) => {
    const probe = document.createElement('span');
    document.body.appendChild(probe);
    const out = {};
    for (const name of list) {
      probe.style.color = `var(${name})`;
      const m = /^rgb\((\d+), (\d+), (\d+)\)$/.exec(getComputedStyle(probe).color);
      out[name] = m ? `#${m.slice(1).map((v) => Number(v).toString(16).padStart(2, '0')).join('')}` : getComputedStyle(probe).color;
    }
    probe.remove();
    return out;
  }, names);
}

/** The colour of one pixel of a canvas (CSS pixels from its top left), as #rrggbb. */
function pixel(page, selector, x, y) {
  return page.evaluate(([sel, px, py]) => {
    const c = document.querySelector(sel);
    const scale = c.width / c.clientWidth;
    const d = c.getContext('2d').getImageData(Math.floor(px * scale), Math.floor(py * scale), 1, 1).data;
    return `#${[d[0], d[1], d[2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
  }, [selector, x, y]);
}

export function registerIssue27Tests(test, h) {
  const { eventually, http, expectText, setTheme } = h;

  test('issue 27: every request of the page goes through web/js/api.js', async ({ browser, server, errors }) => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, acceptDownloads: true });
    await context.addInitScript(recordRequests);
    const page = await context.newPage();
    page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
    const seen = [];
    page.on('request', (r) => { if (new URL(r.url()).pathname.startsWith('/api/')) seen.push(r.url()); });
    await page.goto(server.base + '/');
    await page.locator('#connection[data-state="live"]').waitFor({ timeout: 10000 });
    for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
    // Every kind of request the page makes: JSON calls, aborts, text downloads, the event stream.
    await page.getByLabel('Number of keys', { exact: true }).fill('300');
    await page.getByRole('button', { name: 'Generate keys', exact: true }).click();
    await expectText(page.locator('#keys-count'), '300 keys');
    await page.getByLabel('Node name', { exact: true }).fill('delta');
    await page.getByRole('button', { name: 'Preview add', exact: true }).click();
    await expectText(page.locator('#preview-summary'), 'keys would move');
    await page.getByRole('button', { name: /^Apply: add node delta/ }).click();
    await eventually('delta added', async () => (await http(server, 'GET', '/api/nodes/delta')).status === 200);
    await page.getByRole('button', { name: 'Compare', exact: true }).click();
    await eventually('compare rows', async () => (await page.locator('#compare-body tr').count()) > 1, 20000);
    await page.getByLabel('Requests', { exact: true }).fill('2000');
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await eventually('a replay shown', async () => (await page.locator('#traffic-chart-without').count()) === 1, 30000);
    await page.getByLabel('Look up key', { exact: true }).fill('key-7');
    await page.getByRole('button', { name: 'Look up', exact: true }).click();
    await expectText(page.locator('#lookup-steps'), 'Owner');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Nodes as CSV', exact: true }).click()]);
    assert.equal(download.suggestedFilename(), 'nodes.csv');
    const calls = await page.evaluate(() => window.__requests);
    const kinds = new Set(calls.map((c) => c.what));
    assert.ok(kinds.has('fetch') && kinds.has('EventSource'), `fetch and the event stream seen: ${[...kinds]}`);
    const elsewhere = calls.filter((c) => c.from !== 'api.js');
    assert.deepEqual(elsewhere, [], 'no request made outside api.js');
    for (const path of ['/api/preview', '/api/compare', '/api/traffic/run', '/api/lookup', '/api/nodes?format=csv', '/api/events', '/api/scenarios']) {
      assert.ok(calls.some((c) => c.url.startsWith(path)), `${path} asked through the client`);
    }
    // And nothing reached the network that the client did not ask.
    const asked = new Set(calls.map((c) => new URL(c.url, server.base).href));
    assert.deepEqual(seen.filter((u) => !asked.has(u)), [], 'every request on the wire came from the client');
    await context.close();
  });

  test('issue 27: one palette: the colours are those of before, and the canvases follow the theme', async ({ page, server }) => {
    for (const theme of ['light', 'dark']) {
      await setTheme(page, theme);
      assert.deepEqual(await pageColours(page, Object.keys(PALETTE_BEFORE[theme])), PALETTE_BEFORE[theme], `${theme}: the palette as it was`);
    }
    // The empty ring's track is --line, drawn on the canvas.
    const track = async () => {
      const size = await page.locator('#ring-base').evaluate((c) => c.clientWidth);
      return pixel(page, '#ring-base', size / 2, size / 2 - size * (size < 440 ? 0.33 : 0.37));
    };
    const drawn = {};
    for (const theme of ['light', 'dark', 'light']) {
      await setTheme(page, theme);
      const want = (await pageColours(page, ['--line']))['--line'];
      await eventually(`the ring's track is --line in ${theme}`, async () => (await track()) === want);
      drawn[theme] = want;
    }
    assert.notEqual(drawn.light, drawn.dark, 'the track changes with the theme');
    // The table strip's window frame is --text, redrawn when the theme changes.
    assert.equal((await http(server, 'PUT', '/api/config', { algorithm: 'maglev' })).status, 200);
    for (const name of ['alpha', 'bravo']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
    await eventually('the strip is shown', async () => page.locator('#table-strip').isVisible());
    await expectText(page.locator('#strip-caption'), 'entries');
    for (const theme of ['dark', 'light']) {
      await setTheme(page, theme);
      const want = (await pageColours(page, ['--text']))['--text'];
      await eventually(`the strip's frame is --text in ${theme}`, async () => (await pixel(page, '#strip-canvas', 0.5, 7)) === want);
    }
  });

  test('issue 27: the page reads the catalogue\'s traits: a variant in force, the bounded-load algorithms', async ({ page, server }) => {
    for (const name of ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
    assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 500 } })).status, 201);
    const config = (await http(server, 'PUT', '/api/config', { algorithm: 'nginx', params: { consistent: 0 } })).body.config;
    const nginx = config.algorithms.find((a) => a.name === 'nginx');
    const variant = nginx.variants.find((v) => v.when.consistent === 0);
    assert.equal(variant.replicas, false, 'the catalogue: nginx without consistent has no replicas');
    // The form speaks of the variant in force: its title, no replicas.
    await expectText(page.locator('#algorithm-about'), variant.title);
    assert.equal(await page.locator('#replicas').isDisabled(), true, 'replicas off for the variant');
    // The theory sentence: no ring of virtual nodes for a modulo.
    await page.getByRole('button', { name: 'Show theory', exact: true }).click();
    const sentence = await expectText(page.locator('#theory-sentence'), /no ring/, 'the modulo has no ring', 30000);
    assert.ok(!/virtual node/.test(sentence), sentence);
    // The traffic replay names the algorithms that bound loads, from the catalogue.
    const bounded = config.algorithms.filter((a) => a.bounded_loads).map((a) => a.name);
    await page.getByLabel('Requests', { exact: true }).fill('2000');
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    const words = await expectText(page.locator('#traffic-rule'), 'has no bounded loads', undefined, 30000);
    for (const name of bounded) assert.ok(words.includes(name), `${name} named: ${words}`);
  });
  test('issue 27: the import and export format lists are the server\'s tables', async ({ page, server }) => {
    const config = (await http(server, 'GET', '/api/config')).body;
    assert.ok(config.import_formats.length >= 7 && config.export_formats.length >= 9, 'the server lists its formats');
    const options = (sel) => page.locator(`${sel} option`).evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
    await eventually('Config for lists every writer', async () => (await options('#export-config-format')).length === config.export_formats.length);
    assert.deepEqual(await options('#export-config-format'), config.export_formats.map((f) => [f.format, f.title]));
    assert.deepEqual(await options('#import-format'), [['auto', 'Recognise it'], ...config.import_formats.map((f) => [f.format, f.title])]);
    // The choice stays through a refresh that brings the same lists.
    await page.locator('#export-config-format').selectOption('twemproxy');
    assert.equal((await http(server, 'POST', '/api/nodes', { name: 'a:11211' })).status, 201);
    await expectText(page.locator('#nodes-table'), 'a:11211');
    assert.equal(await page.locator('#export-config-format').inputValue(), 'twemproxy');
  });
}
