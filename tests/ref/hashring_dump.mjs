// hashring_dump.mjs - npm's `hashring` (the ketama ring Node.js programs use)
// answering for tests/ref/ketama_clients_ref.py: reads a JSON array of cases
// {"nodes": [[name, weight]...], "keys": [...]} on stdin, prints for each
// case the owner of every key (a JSON array of arrays).  Servers on port 11211 are labelled without it ("default
// port"), as libmemcached labels them; exit 77 when hashring is not
// installed (npm ci).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let HashRing;
try {
  HashRing = require('hashring');
} catch {
  console.error('hashring_dump: npm hashring is not installed (npm ci)');
  process.exit(77);
}
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const out = JSON.parse(Buffer.concat(chunks).toString('utf8')).map(({ nodes, keys }) => {
  const servers = {};
  for (const [name, weight] of nodes) servers[name] = weight;
  const ring = new HashRing(servers, 'md5', { 'default port': 11211 });
  return keys.map((k) => ring.get(k) ?? null);
});
process.stdout.write(JSON.stringify(out));
