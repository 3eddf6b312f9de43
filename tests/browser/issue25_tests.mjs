// Browser tests of issue 25's page items ("Right numbers for my cluster"):
// each one runs at 1366×800 and at 390×844 and asserts what is on screen,
// waiting for it (never for a time). Registered by tests/browser/run.mjs.

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
}
