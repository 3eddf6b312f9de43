// Browser tests of issue 29's page ("Your own traffic"): a request log is
// uploaded from the file input, the progress shows, the table of nodes and
// the series chart come with the change marked, and the report downloads as
// CSV and JSON -- each compared with the answer of POST /api/trace for the
// same bytes, at 1366×800 and at 390×844 (nothing sticks out of the panel).
// Registered by tests/browser/run.mjs.

import assert from 'node:assert/strict';

export const SIZES = [{ width: 1366, height: 800 }, { width: 390, height: 844 }];

/** An access log: n lines, a second of clock per 10, keys with a heavy head. */
function accessLog(n) {
  const lines = [];
  const t0 = Date.UTC(2026, 11, 6, 12, 0, 0) / 1000;
  for (let i = 0; i < n; i++) {
    const d = new Date((t0 + Math.floor(i / 10)) * 1000);
    const p2 = (v) => String(v).padStart(2, '0');
    const k = (i * i * 7 + i) % 97;
    lines.push(`10.0.0.${i % 9} - - [06/Dec/2026:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000] "GET /item/${k} HTTP/1.1" 200 ${300 + k} "-" "t"\n`);
  }
  return lines.join('');
}

export function registerTraceTests(test, h) {
  const { eventually, http, expectText, downloadOf, outside } = h;

  test('issue 29: a request log uploaded, its nodes, its series with the change marked, the report as CSV and JSON', async ({ page, server }) => {
    for (const name of ['alpha', 'bravo', 'charlie']) assert.equal((await http(server, 'POST', '/api/nodes', { name })).status, 201);
    const text = accessLog(2000);
    const q = '?cache=30obj&change=1000%20node%20add%20delta';
    const r = await fetch(`${server.base}/api/trace${q}`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: text });
    assert.equal(r.status, 200);
    const want = await r.json();
    for (const size of SIZES) {
      const where = `${size.width}×${size.height}`;
      await page.setViewportSize(size);
      await page.locator('#trace-file').setInputFiles({ name: 'access.log', mimeType: 'text/plain', buffer: Buffer.from(text) });
      await page.getByLabel('Cache a node', { exact: true }).fill('30obj');
      await page.getByLabel('Change before request', { exact: true }).fill('1000');
      await page.getByLabel('Change', { exact: true }).fill('node add delta');
      await page.getByRole('button', { name: 'Replay the log', exact: true }).click();
      await expectText(page.locator('#trace-status'), /Replayed 2,000 requests/, `${where}: the replay answered`);
      await expectText(page.locator('#trace-summary'), /access-log · 2,000 requests/, `${where}: the summary`);
      // the table: every node of the answer, delta marked added, figures as answered
      const rows = page.locator('#trace-nodes tbody tr');
      assert.equal(await rows.count(), want.nodes.length, `${where}: one row a node`);
      for (const n of want.nodes) {
        const row = page.locator(`#trace-nodes tr[data-node="${n.name}"]`);
        const cells = await row.locator('td').allTextContents();
        assert.equal(cells[0], n.requests.toLocaleString('en-US'), `${where}: ${n.name} requests`);
        assert.equal(Number(cells[2]), Number(n.load_over_fair.toFixed(3)), `${where}: ${n.name} load/fair ${cells[2]}`);
        const hit = cells[cells.length - 1];
        assert.ok(hit.startsWith((n.hit_ratio * 100).toFixed(1)), `${where}: ${n.name} hit ratio ${hit} vs ${n.hit_ratio}`);
      }
      await expectText(page.locator('#trace-nodes tr[data-node="delta"] th'), 'delta (added)', `${where}: delta added`);
      // the chart: one mark for the change, inside the plot, at request 1,000's interval
      const mark = page.locator('#trace-series .change-mark line');
      assert.equal(await mark.count(), 1, `${where}: the change is marked`);
      const x = Number(await mark.getAttribute('x1'));
      const pts = want.series.points;
      const i = (want.changes[0].time - want.series.start) / want.series.interval;
      const expectX = 58 + (i / pts.length) * (640 - 58 - 48);
      assert.ok(Math.abs(x - expectX) < 0.5, `${where}: the mark at ${x}, want ${expectX}`);
      assert.equal(await page.locator('#trace-series path.hits').count(), 1, `${where}: a hit-ratio line`);
      await page.locator('#trace-series').scrollIntoViewIfNeeded();
      assert.ok(await page.locator('#trace-series').isVisible(), `${where}: the chart is on screen`);
      const out = await outside(page, '.trace-panel .row > *, #trace-series, #trace-summary', '.trace-panel');
      assert.deepEqual(out, [], `${where}: nothing sticks out of the panel`);
    }
    // the report: CSV one row a node, JSON the whole answer
    const csv = await downloadOf(page, 'Trace report as CSV');
    assert.equal(csv.name, 'ringsim-trace.csv');
    const lines = csv.bytes.toString('utf8').split('\r\n').filter((l) => l);
    assert.equal(lines[0], 'name,state,added,requests,bytes,unique_keys,peak_rate,fair_share,load_over_fair,hits,hit_ratio');
    assert.equal(lines.length, want.nodes.length + 1);
    assert.equal(lines[1].split(',')[3], String(want.nodes[0].requests));
    const json = JSON.parse((await downloadOf(page, 'Trace report as JSON')).bytes.toString('utf8'));
    assert.deepEqual(json.nodes, want.nodes);
    assert.deepEqual(json.series, want.series);
    // a refusal is shown beside the controls
    await page.locator('#trace-file').setInputFiles({ name: 'k.txt', mimeType: 'text/plain', buffer: Buffer.from('alpha\nbeta\n') });
    await page.getByLabel('Log format', { exact: true }).selectOption('twitter');
    await page.getByRole('button', { name: 'Replay the log', exact: true }).click();
    await expectText(page.locator('#trace-error'), /is not a twitter log/, 'the refusal in words');
    await eventually('the button back', async () => !(await page.getByRole('button', { name: 'Replay the log', exact: true }).isDisabled()));
  });
}
