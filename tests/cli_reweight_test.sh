#!/usr/bin/env bash
# cli_reweight_test.sh - Ceph's `osd reweight` on the command line (API.md
# "Version 4: Ceph CRUSH"): node reweight / node out / node in as one
# set_reweight operation each (the same reweight again records nothing),
# nodes answering "reweight" as CRUSH uses it (16.16), an out OSD holding no
# PG and getting them back when in, the refusals (exit 1, one line on
# stderr, nothing recorded; usage errors exit 2), the operation line and
# --json answering pgs_remapped and pg_shards_moved, revert and `check`
# restoring the reweight, and the scenario export rebuilding it.
#
#   bash tests/cli_reweight_test.sh /path/to/ringsim
#
# Ends with one line "N passed, N failed"; exits 1 if anything failed.
set -u
# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
export LC_ALL=C.UTF-8 2>/dev/null || export LC_ALL=C
unset RINGSIM_DB
if [ $# -lt 1 ] || [ ! -x "$1" ]; then echo "usage: bash $0 /path/to/ringsim" >&2; exit 2; fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v node >/dev/null || { echo "$0: node is required" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-rw.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 2
O=$TMP/out
E=$TMP/err
rs() { "$BIN" "$@" >"$O" 2>"$E" </dev/null; RC=$?; }
ctx() { printf 'command: ringsim %s\nexit %s\nstdout: %s\nstderr: %s' "$*" "$RC" "$(head -c 600 "$O")" "$(head -c 600 "$E")"; }
expect_rc() { # WANT DESC ARGS...
    local want=$1 desc=$2
    shift 2
    rs "$@"
    if [ "$RC" -eq "$want" ]; then pass; else fail "$desc (exit $want)" "$(ctx "$@")"; fi
}
is() { # DESC GOT WANT
    if [ "$2" = "$3" ]; then pass; else fail "$1" "got:  $2" "want: $3"; fi
}
# field DB NAME FIELD: a node's field from node ls --json
field() {
    "$BIN" --db "$1" --json node ls | node -e '
        let t = ""; process.stdin.on("data", (d) => (t += d)).on("end", () => {
            const n = JSON.parse(t).nodes.find((x) => x.name === process.argv[1]);
            console.log(n ? JSON.stringify(n[process.argv[2]]) : "missing");
        });' "$2" "$3"
}
lastop() { "$BIN" --db "$1" --json log | node -e 'let t="";process.stdin.on("data",(d)=>(t+=d)).on("end",()=>{const o=JSON.parse(t).operations;console.log(o.length?o[o.length-1].id+" "+o[o.length-1].type:"0")})'; }
# jq-like: the value at a path of the last --json answer
jget() { node -e 'let v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));for(const k of process.argv[2].split("."))v=v==null?v:v[k];console.log(JSON.stringify(v))' "$O" "$1"; }

D=a.db
# under another algorithm: refused, nothing recorded
expect_rc 0 "a ring node" --db $D node add n1
expect_rc 1 "reweight under ring refused" --db $D node reweight n1 0.5
if [ "$(wc -l <"$E")" -eq 1 ] && grep -q "ceph" "$E"; then pass; else fail "one line naming ceph" "$(ctx)"; fi
expect_rc 0 "reset" --db $D reset
expect_rc 0 "config ceph" --db $D config --algorithm ceph --param pg_num=64 --replicas 3
for i in 0 1 2 3 4; do
    expect_rc 0 "add osd.$i" --db $D node add osd.$i --weight 1 --location host=h$i
done
expect_rc 0 "key gen" --db $D key gen 300
is "osd.2 answers reweight 1" "$(field $D osd.2 reweight)" "1"
base=$(lastop $D | cut -d" " -f1)
# node reweight: one operation, answered as CRUSH keeps it
expect_rc 0 "node reweight --json" --db $D --json node reweight osd.2 0.8
is "set_reweight operation" "$(jget operation.type)" '"set_reweight"'
is "the node answers 0.8 as 16.16" "$(field $D osd.2 reweight)" "0.79998779296875"
rm_pgs=$(jget operation.pgs_remapped)
sh=$(jget operation.pg_shards_moved)
if [ "$rm_pgs" -gt 0 ] && [ "$sh" -ge "$rm_pgs" ]; then pass; else
    fail "a reweight remaps PGs, at least one shard each" "pgs_remapped $rm_pgs, pg_shards_moved $sh"; fi
expect_rc 0 "the same reweight again" --db $D node reweight osd.2 0.8
if grep -q 'nothing changed' "$O"; then pass; else fail "the same reweight: nothing changed" "$(ctx)"; fi
is "and nothing recorded" "$(lastop $D)" "$((base + 1)) set_reweight"
# node out: reweight 0, no PG left on it; the line says what moved
pgs_before=$(field $D osd.3 pgs)
expect_rc 0 "node out" --db $D node out osd.3
if grep -qE '^operation [0-9]+ set_reweight: osd\.3; [0-9]+ keys? moved.*; [1-9][0-9]* PGs? remapped, [1-9][0-9]* shards? moved' "$O"; then pass; else
    fail "the operation line names the PGs remapped and shards moved" "$(ctx)"; fi
is "an out OSD holds no PG" "$(field $D osd.3 pgs)" "0"
is "and no key" "$(field $D osd.3 keys)" "0"
is "its reweight is 0" "$(field $D osd.3 reweight)" "0"
is "and its fair share 0" "$(field $D osd.3 fair_share)" "0"
expect_rc 0 "node in" --db $D --json node in osd.3
is "in: reweight 1" "$(field $D osd.3 reweight)" "1"
is "in: the PGs come back" "$(field $D osd.3 pgs)" "$pgs_before"
is "in remaps as many PGs as out did" "$(jget operation.type)" '"set_reweight"'
# refusals: exit 1, one line on stderr, nothing recorded
last=$(lastop $D)
for bad in 1.5 -0.1 abc nan 1e3; do
    expect_rc 1 "reweight $bad refused" --db $D node reweight osd.1 "$bad"
    if [ "$(wc -l <"$E")" -eq 1 ] && grep -q '^ringsim: ' "$E"; then pass; else fail "one line on stderr for $bad" "$(ctx)"; fi
done
expect_rc 1 "reweight of an unknown node" --db $D node reweight osd.9 0.5
expect_rc 2 "node reweight without R" --db $D node reweight osd.1
expect_rc 2 "node out with two names" --db $D node out osd.1 osd.2
is "nothing recorded by the refusals" "$(lastop $D)" "$last"
# key-only operations answer 0 PGs under ceph
expect_rc 0 "key add --json" --db $D --json key add one-more
is "a key operation remaps no PG" "$(jget operation.pgs_remapped) $(jget operation.pg_shards_moved)" "0 0"
# revert to before the reweight: osd.2 is 1 again; then check
expect_rc 0 "revert" --db $D revert "$base"
is "revert restores the reweight" "$(field $D osd.2 reweight)" "1"
expect_rc 0 "node reweight osd.4 0.5" --db $D node reweight osd.4 0.5
expect_rc 0 "node out osd.0" --db $D node out osd.0
expect_rc 0 "check replays the log" --db $D check
# the scenario export rebuilds them
expect_rc 0 "export --scenario" --db $D export --scenario
cp "$O" s.txt
if grep -q "node reweight osd.4 0.5" s.txt && grep -q "node reweight osd.0 0" s.txt; then pass; else
    fail "the export writes node reweight" "$(cat s.txt)"; fi
expect_rc 0 "run the export on a fresh database" --db b.db run s.txt
for n in osd.0 osd.2 osd.4; do is "$n's reweight after the run" "$(field b.db $n reweight)" "$(field $D $n reweight)"; done
is "the same owners after the run" "$("$BIN" --db b.db --csv key ls | md5sum)" "$("$BIN" --db $D --csv key ls | md5sum)"
# previews answer PGs under ceph
expect_rc 0 "preview node down --json" --db $D --json preview node down osd.1
p=$(jget pgs_remapped)
if [ "$p" -gt 0 ]; then pass; else fail "a preview answers pgs_remapped" "$(ctx)"; fi
last=$(lastop $D)
expect_rc 0 "preview node out --json" --db $D --json preview node out osd.4
pv="$(jget keys_moved) $(jget pgs_remapped) $(jget pg_shards_moved)"
is "a preview records nothing" "$(lastop $D)" "$last"
expect_rc 0 "node out osd.4 --json" --db $D --json node out osd.4
is "node out does what its preview said" "$(jget operation.keys_moved) $(jget operation.pgs_remapped) $(jget operation.pg_shards_moved)" "$pv"
expect_rc 0 "help node reweight" help node reweight
if grep -q 'set_reweight' "$O"; then pass; else fail "help says what node reweight does" "$(ctx)"; fi
finish
