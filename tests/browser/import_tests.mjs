// Browser tests of the "Paste your cluster" dialog (web/js/import.js):
// a real nginx.conf and a real haproxy.cfg -- each first checked by the real
// program (`nginx -t`, `haproxy -c`) when it is installed -- are pasted,
// previewed (what moves, from where) and applied; a text nginx refuses
// shows nginx's message with its line, and that line is selected.
// Registered by tests/browser/run.mjs.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

const NGINX = process.env.NGINX || '/usr/sbin/nginx';
const HAPROXY = process.env.HAPROXY || '/usr/sbin/haproxy';

function nginxConf(dir, upstream) {
  return `# checked with nginx -t
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
${upstream}
    server {
        listen 127.0.0.1:18080;
        location / { proxy_pass http://cache; }
    }
}
`;
}

const UPSTREAM = `    upstream cache {
        hash $request_uri consistent;
        server 127.0.0.1:11211 weight=2 max_fails=3 fail_timeout=10s;
        server 127.0.0.2:11211;                 # the second cache
        server 127.0.0.3:11211 down;
        keepalive 16;
    }`;

const BACKUP_AFTER_HASH = `upstream cache {
    hash $request_uri consistent;
    server 127.0.0.1:11211;
    server 127.0.0.2:11211 backup;
}
`;

function haproxyCfg(dir) {
  return `global
    maxconn 100
    stats socket ${dir}/admin.sock level admin

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    default-server inter 2s fall 3

frontend www
    bind 127.0.0.1:18081
    default_backend app

backend app
    balance uri
    hash-type consistent
    server web1 127.0.0.1:8001 check weight 10
    server web2 127.0.0.1:8002 check weight 20 id 7
    server web3 127.0.0.1:8003 check backup

backend static
    balance source
    hash-type consistent
    server s1 127.0.0.1:9001
`;
}

/** The real program's verdict on the text, or null when it is not installed. */
function realCheck(prog, args) {
  if (!fs.existsSync(prog)) return null;
  try {
    execFileSync(prog, args, { stdio: 'pipe' });
    return true;
  } catch (e) {
    return String(e.stderr || e.message);
  }
}

export function registerImportTests(test, { eventually, http, nodeNamesInTable, expectText }) {
  async function open(page) {
    await page.getByRole('button', { name: 'Paste your cluster…', exact: true }).click();
    await page.locator('#import-dialog[open]').waitFor();
  }

  test('paste your cluster: a real nginx upstream, previewed then applied', async ({ page, server }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-import-nginx-'));
    const conf = nginxConf(dir, UPSTREAM);
    fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
    const ok = realCheck(NGINX, ['-t', '-q', '-p', dir, '-c', path.join(dir, 'nginx.conf')]);
    assert.notEqual(typeof ok, 'string', `nginx -t accepts the text: ${ok}`);
    assert.equal((await http(server, 'POST', '/api/nodes', { name: 'old' })).status, 201);
    assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 500 } })).status, 201);
    await eventually('old in the table', async () => (await nodeNamesInTable(page)).includes('old'));

    await open(page);
    await page.locator('#import-dialog').getByLabel('Format', { exact: true }).selectOption('auto');
    await page.locator('#import-dialog').getByLabel('Configuration text', { exact: true }).fill(conf);
    assert.equal(await page.locator('#import-dialog').getByRole('button', { name: 'Apply import', exact: true }).isDisabled(), true, 'apply waits for a preview');
    await page.locator('#import-dialog').getByRole('button', { name: 'Preview import', exact: true }).click();
    await expectText(page.locator('#import-result'), /nginx “cache”: 3 nodes, algorithm nginx\. Importing would move 500 keys — from old 500; to /, 'the preview says what moves, from where');
    const items = await page.locator('#import-result .import-nodes li').allTextContents();
    assert.deepEqual(items.map((t) => t.split(' · ')[0]), ['127.0.0.1:11211', '127.0.0.2:11211', '127.0.0.3:11211'], 'the servers in the text order');
    assert.match(items[0], /weight 2/);
    assert.match(items[2], /down/);
    await expectText(page.locator('#import-result'), /max_fails/, 'notes name what placement does not depend on');
    assert.equal((await http(server, 'GET', '/api/operations')).body.operations.length, 2, 'the preview recorded nothing');

    await page.locator('#import-dialog').getByRole('button', { name: 'Apply import', exact: true }).click();
    await page.locator('#import-dialog').waitFor({ state: 'hidden' });
    await eventually('the table holds the imported servers', async () =>
      JSON.stringify((await nodeNamesInTable(page)).sort()) === JSON.stringify(['127.0.0.1:11211', '127.0.0.2:11211', '127.0.0.3:11211']));
    const ops = (await http(server, 'GET', '/api/operations')).body.operations;
    assert.equal(ops[ops.length - 1].type, 'import');
    assert.equal(ops[ops.length - 1].keys_moved, 500);
    assert.equal((await http(server, 'GET', '/api/config')).body.algorithm, 'nginx');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('paste your cluster: nginx refuses backup after hash, the dialog shows the line', async ({ page, server }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-import-nginx-'));
    fs.writeFileSync(path.join(dir, 'nginx.conf'), nginxConf(dir, BACKUP_AFTER_HASH));
    const real = realCheck(NGINX, ['-t', '-q', '-p', dir, '-c', path.join(dir, 'nginx.conf')]);
    if (real !== null) assert.match(real, /does not support parameter "backup"/, 'nginx itself refuses it');
    fs.rmSync(dir, { recursive: true, force: true });
    await open(page);
    await page.locator('#import-dialog').getByLabel('Configuration text', { exact: true }).fill(BACKUP_AFTER_HASH);
    await page.locator('#import-dialog').getByRole('button', { name: 'Preview import', exact: true }).click();
    await expectText(page.locator('#import-error'), 'line 4: balancing method does not support parameter "backup"', 'nginx\'s words and the line');
    const text = page.locator('#import-dialog').getByLabel('Configuration text', { exact: true });
    assert.equal(await text.getAttribute('aria-invalid'), 'true');
    const sel = await text.evaluate((t) => t.value.slice(t.selectionStart, t.selectionEnd));
    assert.equal(sel, '    server 127.0.0.2:11211 backup;', 'line 4 is selected');
    assert.equal(await page.locator('#import-dialog').getByRole('button', { name: 'Apply import', exact: true }).isDisabled(), true);
    assert.equal((await http(server, 'GET', '/api/operations')).body.operations.length, 0, 'nothing recorded');
  });

  test('paste your cluster: a real haproxy backend chosen by name', async ({ page, server }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringsim-import-haproxy-'));
    const cfg = haproxyCfg(dir);
    fs.writeFileSync(path.join(dir, 'haproxy.cfg'), cfg);
    const ok = realCheck(HAPROXY, ['-c', '-q', '-f', path.join(dir, 'haproxy.cfg')]);
    assert.notEqual(typeof ok, 'string', `haproxy -c accepts the text: ${ok}`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal((await http(server, 'POST', '/api/keys', { generate: { count: 300 } })).status, 201);
    await open(page);
    await page.locator('#import-dialog').getByLabel('Format', { exact: true }).selectOption('haproxy');
    await page.locator('#import-dialog').getByLabel('Configuration text', { exact: true }).fill(cfg);
    await page.locator('#import-dialog').getByRole('button', { name: 'Preview import', exact: true }).click();
    await expectText(page.locator('#import-error'), /app.*static|static.*app/, 'two backends: the names to choose from');
    await page.locator('#import-dialog').getByLabel('Section name', { exact: true }).fill('app');
    await page.locator('#import-dialog').getByRole('button', { name: 'Preview import', exact: true }).click();
    await expectText(page.locator('#import-result'), /haproxy “app”: 3 nodes, algorithm haproxy\. Importing would move 300 keys — from \(no node\) 300/, 'the keys nobody held move to the servers');
    assert.equal(await page.locator('#import-error').textContent(), '', 'the error is gone');
    const items = await page.locator('#import-result .import-nodes li').allTextContents();
    assert.match(items[1], /^web2 · weight 20 · id 7/);
    assert.match(items[2], /^web3 · .*backup/);
    await page.locator('#import-dialog').getByRole('button', { name: 'Apply import', exact: true }).click();
    await eventually('web1..web3 in the table', async () =>
      JSON.stringify((await nodeNamesInTable(page)).sort()) === JSON.stringify(['web1', 'web2', 'web3']));
    const nodes = (await http(server, 'GET', '/api/nodes')).body.nodes;
    assert.equal(nodes.find((n) => n.name === 'web2').id, 7, 'the explicit id');
    assert.equal((await http(server, 'GET', '/api/config')).body.algorithm, 'haproxy');
  });
}
