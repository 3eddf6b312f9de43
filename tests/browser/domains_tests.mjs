// Browser tests of the "Failure domains" panel (issue 28 item 4): nodes
// with locations dc/rack/host added through the API; the tree beside the
// ring shows each domain's figures as GET /api/locations answers them, its
// domains collapse and open, a rack's Down toggle previews (the figures of
// POST /api/preview) and applying it sets every node of the rack down in
// one operation; at 1366×800 and 390×844 nothing sticks out and axe finds
// no serious or critical violation (light, and colours in dark). Then a
// pair in two places says so, and the past (the timeline) shows the tree
// as GET /api/locations?at= answers it, read-only.
// Registered by tests/browser/run.mjs.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SIZES = [{ width: 1366, height: 800 }, { width: 390, height: 844 }];

const NODES = [
  ['n1', [['dc', 'dc1'], ['rack', 'r1'], ['host', 'h1']]],
  ['n2', [['dc', 'dc1'], ['rack', 'r1'], ['host', 'h2']]],
  ['n3', [['dc', 'dc1'], ['rack', 'r2'], ['host', 'h3']]],
  ['n4', [['dc', 'dc2'], ['rack', 'r3'], ['host', 'h4']]],
];

/** The figures the panel must write for a domain of the API's answer. */
function figures(d) {
  const fair = typeof d.load_over_fair === 'number' ? `${d.load_over_fair.toFixed(2)}× fair` : 'no fair share';
  const int = (n) => n.toLocaleString('en-US');
  return `${int(d.nodes)} ${d.nodes === 1 ? 'node' : 'nodes'} · ${int(d.keys)} keys · ${fair} · ${int(d.up)} up, ${int(d.down)} down`;
}

function walk(domains, out = []) {
  for (const d of domains) {
    out.push(d);
    walk(d.children, out);
  }
  return out;
}

const domainItem = (page, type, name) => page.locator(`#domains-tree li.domain[data-type="${type}"][data-name="${name}"]`);
const summaryOf = (page, type, name) => domainItem(page, type, name).locator(':scope > details > summary');

export function registerDomainsTests(test, h) {
  const {
    eventually, http, expectText, outside, axeSerious, openPage, setTheme, artifacts,
  } = h;

  test('failure domains panel: the tree as GET /api/locations, collapsing, a rack down in one previewed operation, at 1366×800 and 390×844', async ({ browser, server, errors }) => {
    const page = await openPage(browser, server, errors, { bypassCSP: true }); // axe is injected
    // No location yet: no panel.
    assert.equal((await http(server, 'POST', '/api/nodes', { name: 'solo' })).status, 201);
    await eventually('the first node shown', async () => (await page.locator('#ring-empty').isHidden()));
    assert.equal(await page.locator('#domains-panel').isHidden(), true, 'no location: no panel');
    for (const [name, location] of NODES) assert.equal((await http(server, 'POST', '/api/nodes', { name, location })).status, 201);
    assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 400 } })).status, 201);

    const states = ['down', 'up'];
    let downId = null; // the operation that set r1 down
    for (const [i, size] of SIZES.entries()) {
      const where = `${size.width}×${size.height}`;
      await page.setViewportSize(size);
      await page.locator('#domains-panel').waitFor({ state: 'visible' });
      // Every domain's figures as the API answers them (the page catches up by itself).
      const tree = (await http(server, 'GET', '/api/locations')).body;
      const all = walk(tree.locations);
      assert.equal(all.length, 9, 'two dcs, three racks, four hosts');
      // (the panel shows from the first located node; the rest arrive with the next refreshes)
      await eventually(`${where}: one item a domain`, async () => (await page.locator('#domains-tree li.domain').count()) === all.length, 20000);
      for (const d of all) await expectText(summaryOf(page, d.type, d.name), `${d.type} ${d.name} ${figures(d)}`, `${where}: ${d.type} ${d.name}`);
      assert.deepEqual(tree.unlocated, ['solo']);
      await expectText(page.locator('#domains-unlocated'), /Without a location \(1\)\s*solo/, `${where}: the node without a location`);
      const host = domainItem(page, 'host', 'h1');
      await expectText(host.locator('.domain-members'), 'n1', `${where}: h1's member`);

      // Collapsing dc1 hides its racks; opening it shows them again.
      const rack = summaryOf(page, 'rack', 'r1');
      assert.equal(await rack.isVisible(), true, `${where}: r1 shown`);
      await summaryOf(page, 'dc', 'dc1').click();
      await eventually(`${where}: r1 hidden once dc1 is collapsed`, async () => (await rack.isHidden()));
      assert.equal(await summaryOf(page, 'dc', 'dc2').isVisible(), true, `${where}: dc2 stays open`);
      await summaryOf(page, 'dc', 'dc1').click();
      await eventually(`${where}: r1 shown again`, async () => (await rack.isVisible()));

      // Nothing sticks out of the panel, and the page does not scroll sideways.
      assert.deepEqual(await outside(page, '#domains-panel *', '#domains-panel'), [], `${where}: inside the panel`);
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true, `${where}: no horizontal scroll`);
      assert.deepEqual(await axeSerious(page), [], `${where}: axe with the panel shown`);
      await setTheme(page, 'dark');
      assert.deepEqual(await axeSerious(page, true), [], `${where}: axe's colour rules with the panel shown, dark`);
      fs.mkdirSync(artifacts, { recursive: true });
      await page.locator('#domains-panel').screenshot({ path: path.join(artifacts, `domains-${size.width}x${size.height}-dark.png`) });
      await setTheme(page, 'light');

      // The rack's toggle: previewed first (the figures of POST /api/preview), then one operation.
      const state = states[i];
      const want = (await http(server, 'POST', '/api/preview', { op: 'set_state', domain: ['rack', 'r1'], state })).body;
      const opsBefore = (await http(server, 'GET', '/api/operations')).body.operations.length;
      const toggle = domainItem(page, 'rack', 'r1').getByRole('button', { name: 'Down: rack r1', exact: true });
      assert.equal(await toggle.getAttribute('aria-pressed'), String(state === 'up'), `${where}: the toggle before`);
      await toggle.click();
      await expectText(page.locator('#preview-summary'), `If you mark rack=r1 ${state}: ${want.keys_moved.toLocaleString('en-US')} keys would move`, `${where}: the preview`);
      assert.equal(await page.locator('#preview-summary').getAttribute('data-unavailable'), String(want.unavailable_after ? want.unavailable_after.keys : 0), `${where}: unavailable keys after`);
      assert.equal(await page.locator('#preview-summary').getAttribute('data-keys-moved'), String(want.keys_moved));
      // Nothing happened yet.
      assert.equal((await http(server, 'GET', '/api/operations')).body.operations.length, opsBefore, `${where}: a preview records nothing`);
      assert.deepEqual(await axeSerious(page), [], `${where}: axe with the domain's preview`);
      await page.getByRole('button', { name: `Apply: mark rack=r1 ${state}`, exact: true }).click();
      await eventually(`${where}: every node of r1 ${state}`, async () => {
        const nodes = (await http(server, 'GET', '/api/nodes')).body.nodes;
        const by = new Map(nodes.map((n) => [n.name, n.state]));
        return by.get('n1') === state && by.get('n2') === state;
      });
      const nodes = (await http(server, 'GET', '/api/nodes')).body.nodes;
      for (const n of nodes.filter((x) => !['n1', 'n2'].includes(x.name))) assert.equal(n.state, 'up', `${where}: ${n.name} outside r1 stays up`);
      const ops = (await http(server, 'GET', '/api/operations')).body.operations;
      assert.equal(ops.length, opsBefore + 1, `${where}: one operation`);
      const op = ops[ops.length - 1];
      assert.equal(op.type, 'set_state');
      assert.equal(op.subject, 'rack=r1');
      if (state === 'down') downId = op.id;
      // The panel follows: r1's toggle and figures.
      await eventually(`${where}: the toggle says ${state}`, async () => (await toggle.getAttribute('aria-pressed')) === String(state === 'down'));
      const after = walk((await http(server, 'GET', '/api/locations')).body.locations).find((d) => d.type === 'rack' && d.name === 'r1');
      assert.equal(after.down, state === 'down' ? 2 : 0);
      await expectText(summaryOf(page, 'rack', 'r1'), figures(after), `${where}: r1's figures after`);
      await eventually(`${where}: the focus back on r1's toggle`, async () => toggle.evaluate((e) => e === document.activeElement));
    }
    // The same pair in two places: PUT /api/locations/rack/r1 acts on both, and the toggles say so.
    assert.equal((await http(server, 'POST', '/api/nodes', { name: 'n5', location: [['dc', 'dc2'], ['rack', 'r1']] })).status, 201);
    await eventually('two rack r1 items', async () => (await domainItem(page, 'rack', 'r1').count()) === 2);
    for (const i of [0, 1]) await expectText(domainItem(page, 'rack', 'r1').nth(i).locator('.domain-shared').first(), 'acts on every rack=r1 (2 places)', `rack r1 #${i} says it is shared`);
    assert.equal(await domainItem(page, 'rack', 'r2').locator('.domain-shared').count(), 0, 'r2 is in one place');

    // The past: the tree as it was right after r1 went down (?at=), toggles read-only.
    await page.getByLabel('Timeline', { exact: true }).fill(String(downId));
    await page.locator('#past-banner').waitFor({ state: 'visible' });
    const then = walk((await http(server, 'GET', `/api/locations?at=${downId}`)).body.locations).find((d) => d.type === 'rack' && d.name === 'r1');
    assert.equal(then.down, 2, 'r1 was down then');
    await eventually('one rack r1 in the past', async () => (await domainItem(page, 'rack', 'r1').count()) === 1);
    await expectText(summaryOf(page, 'rack', 'r1'), figures(then), "r1's figures as they were");
    assert.equal(await domainItem(page, 'rack', 'r1').getByRole('button', { name: 'Down: rack r1', exact: true }).isDisabled(), true, 'read-only in the past');
    await page.getByRole('button', { name: 'Back to live' }).click();
    await eventually('live again: two rack r1 items', async () => (await domainItem(page, 'rack', 'r1').count()) === 2);
    assert.deepEqual(errors.filter((e) => e.startsWith('page error')), [], 'no uncaught errors in the page');
    await page.context().close();
  });
}
