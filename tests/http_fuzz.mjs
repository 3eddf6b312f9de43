// Random requests against the real server (fixed seed): methods, raw
// percent-encoded paths (NUL, broken UTF-8, dot segments), query strings,
// content types and bodies, some of them malformed.  The server must answer
// every /api request with JSON — success, or an error object with a code
// and a message, never 500 — stay up, and stop cleanly.  (A HEAD request is
// sent without a body: HTTP gives a body on HEAD no meaning, and evhttp reads
// one as the next request.)  Run: node tests/http_fuzz.mjs path/to/ringsim
//
// Checks docs/api.md, 'Conventions' (errors have one form), 'Errors'.
import http from 'node:http';
import { Server, check, crashed, finish, freshDb } from './lib/harness.mjs';
const srv = await new Server(freshDb()).start().catch(crashed);
const port = srv.port;
let seed = 12345; const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
const words = ['nodes', 'keys', 'ring', 'config', 'lookup', 'stats', 'density', 'operations', 'reset', 'revert', 'events', 'a', '1', '', '..', '%2F', '%00', '%FF', '%C3%28', '%E2%82', '%2e%2e'];
const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const bodies = ['', '{}', '{"name":"x"}', '{"name":"\\u0000"}', '{"key":"k"}', '{"keys":["a","b",1]}', '{"generate":{"count":5}}', '{"to":0}', '{"points_per_node":3}', '[', '{"name":' , '\xff\xfe', 'null', '{"name":"a","weight":"x"}', '{"generate":{"count":1e99}}'];
const rbytes = () => { let s = ''; for (let i = rnd(6); i > 0; i--) s += '%' + rnd(256).toString(16).padStart(2, '0'); return s; };
let bad = 0, n = 0;
function one() {
  return new Promise((resolve) => {
    const segs = []; for (let i = 1 + rnd(3); i > 0; i--) segs.push(rnd(4) ? words[rnd(words.length)] : rbytes());
    let path = (rnd(10) ? '/api/' : '/') + segs.join('/');
    if (rnd(2)) path += '?' + ['at', 'node', 'prefix', 'limit', 'offset', 'key', 'bins', 'after'][rnd(8)] + '=' + (rnd(2) ? rbytes() : String(rnd(2000) - 5));
    const method = methods[rnd(methods.length)];
    const body = method === 'HEAD' ? '' : bodies[rnd(bodies.length)];
    const headers = {Host: `127.0.0.1:${port}`};
    if (rnd(4)) headers['Content-Type'] = rnd(5) ? 'application/json' : 'text/plain';
    const req = http.request({host: '127.0.0.1', port, method, path, headers, agent: false}, (res) => {
      let d = ''; res.on('data', c => d += c);
      const done = () => {
        n++;
        const isEvents = path.startsWith('/api/events');
        if (path.startsWith('/api/') && !isEvents && req.method !== 'HEAD') {
          try { const j = JSON.parse(d); if (res.statusCode >= 400 && !(j.error && j.error.code && j.error.message)) throw 0; if (res.statusCode >= 500) throw 0; }
          catch { bad++; console.log('BAD', req.method, path, JSON.stringify(body), res.statusCode, d.slice(0, 200)); }
        }
        resolve();
      };
      if (path.startsWith('/api/events') && res.statusCode === 200) { setTimeout(() => { req.destroy(); n++; resolve(); }, 20); return; }
      res.on('end', done);
    });
    req.on('error', (e) => { console.log('ERR', req.method, JSON.stringify(body), path, e.code); bad++; resolve(); });
    req.end(body);
  });
}
for (let i = 0; i < 3000; i++) await one();
const alive = await fetch(`http://127.0.0.1:${port}/api/stats`).then(r => r.status).catch(() => 'dead');
console.log(`${n} random requests sent`);
check(`every answer well-formed (${bad} not)`, bad === 0);
check(`server still answers (${alive})`, alive === 200);
await srv.stop(); // a clean exit on SIGTERM, no sanitizer report
finish();
