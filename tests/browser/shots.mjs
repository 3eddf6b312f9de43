// Takes the screenshots of the README (docs/img/) from a sample state:
// starts `$RINGSIM_BIN serve` on a free port with a fresh database, builds
// six nodes and 1000 keys with two replicas, looks a key up and shoots the
// laptop layout (light), the phone layout (dark) and a Maglev table.
//
//   RINGSIM_BIN=build/ringsim node tests/browser/shots.mjs [out-dir]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.resolve(repo, process.env.RINGSIM_BIN || 'build/ringsim');
const out = path.resolve(repo, process.argv[2] || 'docs/img');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const port = await new Promise((resolve) => {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1', () => { const p = srv.address().port; srv.close(() => resolve(p)); });
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-shots-'));
const server = spawn(bin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--db', path.join(dir, 'shots.db'), '--web', path.join(repo, 'web')], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/api/config`)).ok) break; } catch { /* not yet */ }
    if (i > 150) throw new Error('the server did not start');
    await sleep(100);
  }
  const call = async (method, p, body) => (await fetch(base + p, {
    method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  })).json();
  for (const name of ['alpha', 'bravo', 'charlie', 'delta', 'echo']) await call('POST', '/api/nodes', { name });
  await call('POST', '/api/keys', { generate: { count: 1000 } });
  await call('PUT', '/api/config', { algorithm: 'ring', params: { points_per_node: 4 }, replicas: 2 });
  await call('POST', '/api/nodes', { name: 'foxtrot' });

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  fs.mkdirSync(out, { recursive: true });
  const shot = async (file, viewport, colorScheme, panel) => {
    const context = await browser.newContext({ viewport, colorScheme });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.locator('#connection[data-state="live"]').waitFor();
    await page.locator('#moved-compare table').waitFor();
    await page.getByLabel('Look up key', { exact: true }).fill('key-42');
    await page.getByLabel('Look up key', { exact: true }).press('Enter');
    await page.locator('#lookup-result').filter({ hasText: 'key-42' }).waitFor();
    await sleep(2500); // the flow of the last change settles
    if (panel) {
      await page.locator(panel).screenshot({ path: path.join(out, file) });
    } else {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.mouse.move(0, 0);
      await sleep(300);
      await page.screenshot({ path: path.join(out, file) });
    }
    await context.close();
  };
  await shot('page-laptop.png', { width: 1366, height: 800 }, 'light');
  await shot('page-phone.png', { width: 390, height: 844 }, 'dark');
  await call('PUT', '/api/config', { algorithm: 'maglev', replicas: 1 });
  await shot('page-maglev.png', { width: 1366, height: 800 }, 'dark', '.ring-panel');
  await browser.close();
  console.log(`screenshots in ${out}`);
} finally {
  server.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
