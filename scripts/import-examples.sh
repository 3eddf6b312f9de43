#!/usr/bin/env bash
# scripts/import-examples.sh - writes docs/import-examples.md: for each real
# system, a text pasted into ringsim (`ringsim import`) over 10,000 keys,
# then the same text with one server more (or less), previewed: what moves,
# from where.  Every number in the file is measured by this run.
#
#   scripts/import-examples.sh build/ringsim > docs/import-examples.md
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-examples.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

fence() { printf '```%s\n' "${1:-}"; }
show() { # FILE: the text as a block
    fence; cat "$1"; fence
}
run() { # shown as typed, then its output
    printf '$ %s\n' "$*"
    "$@" 2>&1 | sed "s|$TMP/||g"
}

# example TITLE INTRO FIRST SECOND [extra commands...]
example() {
    local title=$1 intro=$2 first=$3 second=$4
    shift 4
    rm -f ex.db
    printf '## %s\n\n%s\n\n' "$title" "$intro"
    show "$first"
    printf '\n'
    fence console
    run ringsim key gen 10000 >/dev/null
    printf '$ ringsim key gen 10000\n'
    run ringsim import "$first"
    fence
    printf '\nThe same text with the change:\n\n'
    fence diff
    diff -u --label "$first" --label "$second" "$first" "$second" | tail -n +3 || true
    fence
    printf '\n'
    fence console
    run ringsim preview import "$second"
    for c in "$@"; do eval "run ringsim $c"; done
    fence
    printf '\n'
}
ringsim() { "$BIN" --db "$TMP/ex.db" "$@"; }

cat <<'HEAD'
# Import: one worked example per system

Each block below was measured by `scripts/import-examples.sh` on this
version of ringsim (rerun it to check): a real system's text is pasted
(`ringsim import`) over 10,000 stored keys, then the same text with one
change is previewed (`ringsim preview import`: nothing is recorded) to show
which keys would move and from where. The page's "Paste your cluster…"
dialog shows the same preview before it applies anything. The API is
`POST /api/import` and `POST /api/preview {"op": "import", …}`
(docs/api.md, "Importing a real cluster").

HEAD

cat >nginx.conf <<'EOF'
upstream cache {
    hash $request_uri consistent;
    server 10.0.0.1:8080;
    server 10.0.0.2:8080;
    server 10.0.0.3:8080;
}
EOF
sed 's|    server 10.0.0.3:8080;|&\n    server 10.0.0.4:8080;|' nginx.conf >nginx-add.conf
example "nginx: add a server to a consistent-hash upstream" \
    "nginx's \`hash … consistent\` is ketama-like: 160 points per unit of weight. A new server takes keys from every other server, and no key moves between the old ones." \
    nginx.conf nginx-add.conf

cat >haproxy.cfg <<'EOF'
backend app
    balance uri
    hash-type consistent
    server web1 10.0.1.1:80
    server web2 10.0.1.2:80
    server web3 10.0.1.3:80
EOF
sed 's|    server web2 10.0.1.2:80|    server web1b 10.0.1.9:80\n&|' haproxy.cfg >haproxy-add.cfg
sed 's|\(server web[0-9] 10.0.1.\([0-9]\):80\)|\1 id \2|' haproxy.cfg >haproxy-ids.cfg
sed 's|    server web2 10.0.1.2:80 id 2|    server web1b 10.0.1.9:80 id 9\n&|' haproxy-ids.cfg >haproxy-ids-add.cfg
example "HAProxy: a server added in the middle renumbers the ones after it" \
    "HAProxy keys a server's 16 points per unit of weight by its id, and a server without \`id\` is numbered by its position. A server written between web1 and web2 takes id 2: web2 and web3 are renumbered, their points move, and keys move between the old servers too." \
    haproxy.cfg haproxy-add.cfg
example "HAProxy: the same with explicit ids" \
    "With \`id\` on every server, the new one only takes keys." \
    haproxy-ids.cfg haproxy-ids-add.cfg

printf '10.0.2.1:11211,10.0.2.2:11211,10.0.2.3:11211\n' >servers.txt
printf '10.0.2.1:11211,10.0.2.2:11211,10.0.2.3:11211,10.0.2.4:11211\n' >servers-add.txt
example "libmemcached: one more memcached server" \
    "A server list as \`memcached_servers_parse\` reads it, placed with libmemcached's weighted ketama (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED). Port 11211 is the default, so each node is named by its host, the label ketama hashes." \
    servers.txt servers-add.txt

cat >nutcracker.yml <<'EOF'
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  servers:
   - 10.0.3.1:11211:1
   - 10.0.3.2:11211:1
   - 10.0.3.3:11211:1
EOF
sed 's|   - 10.0.3.3:11211:1|&\n   - 10.0.3.4:11211:1|' nutcracker.yml >nutcracker-add.yml
sed 's|fnv1a_64|crc32|' nutcracker.yml >nutcracker-crc32.yml
example "twemproxy: a fourth server in a ketama pool, then hash: crc32" \
    "nutcracker's continuum: 160 points per server scaled by weight. The second preview keeps the servers and changes only \`hash:\` to \`crc32\`: nutcracker's crc32 gives values of 15 bits, so every key hashes below 32768, at the very start of a continuum whose points span 32 bits, and one server takes them all." \
    nutcracker.yml nutcracker-add.yml "preview import nutcracker-crc32.yml"

cat >envoy.yaml <<'EOF'
name: svc
type: STATIC
lb_policy: RING_HASH
ring_hash_lb_config: { minimum_ring_size: 1024 }
load_assignment:
  cluster_name: svc
  endpoints:
  - lb_endpoints:
    - endpoint: { address: { socket_address: { address: 10.0.4.1, port_value: 80 } } }
    - endpoint: { address: { socket_address: { address: 10.0.4.2, port_value: 80 } } }
    - endpoint: { address: { socket_address: { address: 10.0.4.3, port_value: 80 } } }
    - endpoint: { address: { socket_address: { address: 10.0.4.4, port_value: 80 } } }
EOF
grep -v '10.0.4.4' envoy.yaml >envoy-rm.yaml
example "Envoy: removing one host moves keys between the others" \
    "Envoy's ring hash spreads at least \`minimum_ring_size\` points over the hosts by their normalized weights: with one host fewer every remaining host gets more points, and its new points take keys from hosts that stayed too." \
    envoy.yaml envoy-rm.yaml

cat >ring.txt <<'EOF'

Datacenter: dc1
==========
Address     Rack   Status State   Load       Owns    Token
                                                     3074457345618258602
10.0.5.1    rack1  Up     Normal  1.2 MiB    33.33%  -9223372036854775808
10.0.5.2    rack1  Up     Normal  1.2 MiB    33.33%  -3074457345618258603
10.0.5.3    rack1  Up     Normal  1.2 MiB    33.33%  3074457345618258602
EOF
sed 's|^10.0.5.3 .*|10.0.5.4    rack1  Up     Normal  1.2 MiB    16.67%  0\n&|' ring.txt >ring-add.txt
example "Cassandra: a node joins with one token" \
    "\`nodetool ring\` output, one token per node (Murmur3Partitioner). A node that joins with token 0 takes the keys between the previous token and 0, all from one node." \
    ring.txt ring-add.txt "export --config cassandra"

cat >nodes.txt <<'EOF'
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.0.6.1:6379@16379 myself,master - 0 0 1 connected 0-5460
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.0.6.2:6379@16379 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 10.0.6.3:6379@16379 master - 0 1426238318243 3 connected 10923-16383
6ec23923021cf3ffec47632106199cb7f496ce01 10.0.6.4:6379@16379 slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
EOF
sed 's|connected 0-5460|connected 0-4095|; s|connected 5461-10922|connected 4096-10922|' nodes.txt >nodes-moved.txt
example "Redis: a reshard, then a master joins" \
    "\`CLUSTER NODES\` output: the masters with their slots, each with its replicas. The preview shows the keys of slots 4096-5460 moving from the first master to the second, as a reshard of those slots would; then the import is kept, a fourth master joins (\`node add\`: redis-cli's rebalance gives it slots from every master) and \`export --config redis\` writes the redis-cli commands that make the cluster so." \
    nodes.txt nodes-moved.txt "node add 10.0.6.5:6379" "export --config redis"
