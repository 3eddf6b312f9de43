// Browser tests of issue 25's page items ("Right numbers for my cluster"):
// each one runs at 1366×800 and at 390×844 and asserts what is on screen,
// waiting for it (never for a time). Registered by tests/browser/run.mjs.

import fs from 'node:fs';
import assert from 'node:assert/strict';

export const SIZES = [{ width: 1366, height: 800 }, { width: 390, height: 844 }];

export function registerIssue25Tests(test, h) {
  const { eventually, http, expectText, nodeRow } = h;

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
}
