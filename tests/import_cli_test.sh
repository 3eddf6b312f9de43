#!/usr/bin/env bash
# import_cli_test.sh - `ringsim import`, `ringsim preview import` and
# `ringsim export --config` (API.md version 3, "import a real cluster"),
# end to end on fresh databases.
#
#   bash tests/import_cli_test.sh /path/to/ringsim
#
# Expected values come from the texts themselves (their servers, weights,
# lines) and from the answers before and after (keys moved = keys whose
# owner changed); owners against the real programs are ref_import's.
# Ends with one line "N passed, N failed"; exits 1 if anything failed.
#
# Checks docs/api.md, 'Importing a real cluster' (its Command line).

# shellcheck disable=SC2016 # JavaScript and nginx text in single quotes, on purpose
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
setup import-cli /path/to/ringsim 1 "$@"

rs() { "$BIN" --db "$TMP/t.db" "$@"; }
has() { # DESC PATTERN FILE: a line of FILE matches PATTERN (grep)
    if grep -q -- "$2" "$3"; then pass; else fail "$1" "$(cat "$3")"; fi
}

cat >haproxy.cfg <<'CFG'
defaults
    mode http
    balance uri
    hash-type consistent
    default-server weight 10

backend web
    server s1 10.0.0.1:80
    server s2 10.0.0.2:80 id 9 weight 20
    server s3 10.0.0.3:80 backup
    server s4 10.0.0.4:80 disabled

backend other
    server o1 10.9.0.1:80
CFG

rs key gen 3000 >/dev/null
rs node add x >/dev/null

# --name is needed when the text has several backends: refused, with the names.
out=$(rs import haproxy.cfg 2>&1); rc=$?
expect_eq "import without --name: exit 1" 1 "$rc"
case "$out" in *web*other*) pass ;; *) fail "the refusal lists the backends" "$out" ;; esac
expect_eq "the refusal is one line" 1 "$(printf '%s\n' "$out" | wc -l)"
expect_eq "and records nothing" 2 "$(rs --json log | grep -c '"type"')"

# preview import: what moves, nothing recorded.
pv=$(rs --json preview import --name web haproxy.cfg)
pv_moved=$(printf '%s' "$pv" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).keys_moved))')
expect_eq "preview import: every key leaves x" 3000 "$pv_moved"
expect_eq "preview recorded nothing" 2 "$(rs --json log | grep -c '"type"')"

rs --json key ls >before.json
out=$(rs import --name web --format haproxy haproxy.cfg); rc=$?
expect_eq "import --name web: exit 0" 0 "$rc"
case "$out" in *'imported haproxy "web": 4 nodes, algorithm haproxy'*) pass ;; *) fail "the summary line" "$out" ;; esac
case "$out" in *"s3"*"line 10, backup"*) pass ;; *) fail "s3 is a backup, from line 10" "$out" ;; esac
case "$out" in *"s4"*"line 11, down"*) pass ;; *) fail "s4 is down (disabled), from line 11" "$out" ;; esac
case "$out" in *"operation 3 import: 3000 keys moved"*) pass ;; *) fail "the operation line" "$out" ;; esac
rs --json key ls >after.json
moved=$(node -e '
const a = JSON.parse(require("fs").readFileSync("before.json")).keys, b = JSON.parse(require("fs").readFileSync("after.json")).keys;
const o = Object.fromEntries(a.map((k) => [k.key, k.node]));
console.log(b.filter((k) => o[k.key] !== k.node).length)')
expect_eq "keys whose owner changed: the preview's count" "$pv_moved" "$moved"
expect_eq "the nodes, weights and s2's id" "s1 10|s2 20 9|s3 10|s4 10" "$(rs --json node ls | node -e '
let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const n=JSON.parse(s).nodes;
const ord=["s1","s2","s3","s4"];console.log(ord.map(x=>{const v=n.find(y=>y.name===x);return x==="s2"?`${x} ${v.weight} ${v.id}`:`${x} ${v.weight}`}).join("|"))})')"
expect_eq "the configuration: haproxy" "haproxy" "$(rs --json config | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).algorithm))')"
out=$(rs check); expect_eq "check: the log replays to the state" 0 $?

# export --config haproxy, then import it into a fresh database: same owners.
rs export --config haproxy >exported.cfg
has "the export keeps s2's id and weight" '^    server s2 10.0.0.2:80 id 9 weight 20$' exported.cfg
has "the export keeps s3's backup" '^    server s3 10.0.0.3:80 weight 10 backup$' exported.cfg
has "the export keeps s4 disabled" '^    server s4 10.0.0.4:80 weight 10 disabled$' exported.cfg
"$BIN" --db "$TMP/u.db" key gen 3000 >/dev/null
"$BIN" --db "$TMP/u.db" import - <exported.cfg >/dev/null
"$BIN" --db "$TMP/u.db" --json key ls >again.json
expect_eq "the export imports back to the same owners" "$(node -e 'const k=JSON.parse(require("fs").readFileSync("after.json")).keys;console.log(JSON.stringify(k))')" "$(node -e 'const k=JSON.parse(require("fs").readFileSync("again.json")).keys;console.log(JSON.stringify(k))')"

# --json answers the API's {"operation", "import"}.
js=$(rs --json import --name web haproxy.cfg)
expect_eq "--json: operation and import" "import 0 web 4" "$(printf '%s' "$js" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log(j.operation.type,j.operation.keys_moved,j.import.name,j.import.nodes.length)})')"

# revert undoes an import.
rs revert 2 >/dev/null
expect_eq "revert 2: x holds the keys again" "x 3000" "$(rs --json node ls | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const n=JSON.parse(s).nodes;console.log(n.map(v=>v.name+" "+v.keys).join(","))})')"

# The table prints each field only when it has a value: Envoy's text gives
# no lines, so a down host is "keys 0        down" (it was "keys 0       ,
# down"), and a line ends with its last field, not with spaces.
cat >envoy.yaml <<'YAML'
name: cache
type: STATIC
lb_policy: RING_HASH
load_assignment:
  cluster_name: cache
  endpoints:
  - lb_endpoints:
    - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}
      load_balancing_weight: 2
    - endpoint: {address: {socket_address: {address: 10.0.0.2, port_value: 80}}}
      health_status: UNHEALTHY
YAML
out=$("$BIN" --db "$TMP/envoy.db" import envoy.yaml); rc=$?
expect_eq "import envoy: exit 0" 0 "$rc"
expect_eq "import envoy: the table, no empty field, no stray comma, no trailing space" \
    "imported envoy \"cache\": 2 nodes, algorithm envoy-ring
  10.0.0.1:80                    weight 2      keys 0
  10.0.0.2:80                    weight 1      keys 0        down
operation 1 import: 0 keys moved" "$out"
out=$(rs import --name web haproxy.cfg)
if printf '%s\n' "$out" | grep -q ' $'; then fail "no line of the import table ends with a space" "$out"; else pass; fi

# Refusals: one line with the line number, exit 1, nothing changes.
printf 'upstream u {\n    hash $arg_k consistent;\n    server 10.0.0.1;\n    server 10.0.0.2 backup;\n}\n' >backup.conf
ops=$(rs --json log | grep -c '"type"')
err=$(rs import backup.conf 2>&1 >/dev/null); rc=$?
expect_eq "nginx backup after hash: exit 1" 1 "$rc"
expect_eq "  one line naming line 4, as nginx says" 'ringsim: line 4: balancing method does not support parameter "backup"' "$err"
err=$(printf '{\n' | rs import - 2>&1 >/dev/null); rc=$?
expect_eq "a text of no format: exit 1" 1 "$rc"
expect_eq "  one line" 1 "$(printf '%s\n' "$err" | wc -l)"
err=$(rs import --format nope haproxy.cfg 2>&1 >/dev/null); rc=$?
expect_eq "an unknown --format: exit 1" 1 "$rc"
err=$(rs import missing.cfg 2>&1 >/dev/null); rc=$?
expect_eq "a missing file: exit 1" 1 "$rc"
err=$(rs import 2>&1 >/dev/null); rc=$?
expect_eq "no FILE: usage, exit 2" 2 "$rc"
expect_eq "refusals recorded nothing" "$ops" "$(rs --json log | grep -c '"type"')"
err=$(rs export --config nope 2>&1 >/dev/null); rc=$?
expect_eq "export --config nope: exit 1" 1 "$rc"
err=$(rs export 2>&1 >/dev/null); rc=$?
expect_eq "export without a format: exit 2" 2 "$rc"

# Issue 25 item 16: a CLUSTER NODES import names each master's replicas;
# lookup lists the replicas of the key's master, and its steps say the
# slot map came from the imported text (holders read from the text).
cat >nodes.txt <<'TXT'
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.0.6.1:6379@16379 myself,master - 0 0 1 connected 0-5460
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.0.6.2:6379@16379 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 10.0.6.3:6379@16379 master - 0 1426238318243 3 connected 10923-16383
6ec23923021cf3ffec47632106199cb7f496ce01 10.0.6.4:6379@16379 slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
7ec23923021cf3ffec47632106199cb7f496ce01 10.0.6.5:6379@16379 slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
TXT
rd() { "$BIN" --db "$TMP/redis.db" "$@"; }
rd import nodes.txt >rimp.txt
has "redis import: the master line names its two replicas" \
    '^  10\.0\.6\.2:6379 .* line 2, replicas 10\.0\.6\.4:6379, 10\.0\.6\.5:6379$' rimp.txt
if grep -q '10\.0\.6\.1:6379 .*replicas' rimp.txt; then fail "redis import: a master without replicas names none" "$(cat rimp.txt)"; else pass; fi
# the key's slot, then the master whose range in the text holds it
for k in a b c d e f g h; do
    rd --json lookup "$k" >rl.json
    slot=$(sed -n 's/^  "coordinate": "\([0-9]*\)",$/\1/p' rl.json)
    master=$(awk -v s="$slot" '$3 ~ /master/ { split($9, r, "-"); if (s >= r[1] && s <= r[2]) { sub(/@.*/, "", $2); print $2 } }' nodes.txt)
    rd lookup "$k" >rl.txt
    has "redis lookup $k: node is slot $slot's master in the text" "^node        $master\$" rl.txt
    if [ "$master" = 10.0.6.2:6379 ]; then
        has "redis lookup $k: its master's replicas" \
            '^replicas    10\.0\.6\.4:6379 10\.0\.6\.5:6379 (of master 10\.0\.6\.2:6379)$' rl.txt
    else
        has "redis lookup $k: its master has none" "^replicas    (none: master $master has none)\$" rl.txt
    fi
    has "redis lookup $k: the slot map is the import's" \
        "^  owner      slot $slot is held by $master, as the imported CLUSTER NODES text says (operation 1): the slot map of the import, not computed\$" rl.txt
    has "redis lookup $k: a replicas step" "^  replicas   $master has" rl.txt
done

# help lists import.
rs help import >help.txt
has "help import shows the synopsis" 'import FILE|- \[--format F\] \[--name N\]' help.txt

finish
