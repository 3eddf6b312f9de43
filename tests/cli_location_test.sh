#!/usr/bin/env bash
# cli_location_test.sh - failure domains on the command line (API.md
# "Version 4: failure domains"): node add --location, node move --location
# (one set_location operation; the same location again records nothing;
# '' clears it), the rules' refusals (exit 1, one line on stderr, nothing
# recorded), usage errors (exit 2), --json answering "location", the
# scenario export writing it and a run of that export rebuilding it, and
# `check` replaying the log to the same state.
#
#   bash tests/cli_location_test.sh /path/to/ringsim
#
# Ends with one line "N passed, N failed"; exits 1 if anything failed.
set -u
# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
export LC_ALL=C.UTF-8 2>/dev/null || export LC_ALL=C
unset RINGSIM_DB
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash $0 /path/to/ringsim" >&2
    exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v node >/dev/null || { echo "$0: node is required" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-loc.XXXXXX")
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
# loc DB NAME: the node's location as compact JSON
loc() {
    "$BIN" --db "$1" --json node ls | node -e '
        let t = ""; process.stdin.on("data", (d) => (t += d)).on("end", () => {
            const n = JSON.parse(t).nodes.find((x) => x.name === process.argv[1]);
            console.log(n ? JSON.stringify(n.location) : "missing");
        });' "$2"
}
is() { # DESC GOT WANT
    if [ "$2" = "$3" ]; then pass; else fail "$1" "got:  $2" "want: $3"; fi
}
lastop() { "$BIN" --db "$1" --json log | node -e 'let t="";process.stdin.on("data",(d)=>(t+=d)).on("end",()=>{const o=JSON.parse(t).operations;console.log(o.length?o[o.length-1].id+" "+o[o.length-1].type:"0")})'; }

D=a.db
expect_rc 0 "node add --location" --db $D node add n1 --location dc=dc1,rack=r1,host=h1
is "n1's location" "$(loc $D n1)" '[["dc","dc1"],["rack","r1"],["host","h1"]]'
expect_rc 0 "node add with a location of spaces and UTF-8" --db $D node add n2 --location 'dc=dc 1,rack=Zürich ☃'
is "n2's location" "$(loc $D n2)" '[["dc","dc 1"],["rack","Zürich ☃"]]'
expect_rc 0 "node add without one" --db $D node add n3
is "none: []" "$(loc $D n3)" '[]'
expect_rc 0 "node move --json" --db $D --json node move n3 --location dc=dc2,rack=r7
is "node move answers the node" "$(node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).node.location))' "$O")" '[["dc","dc2"],["rack","r7"]]'
is "one set_location operation" "$(lastop $D)" "4 set_location"
expect_rc 0 "node move to the same place" --db $D node move n3 --location dc=dc2,rack=r7
if grep -q 'nothing changed' "$O"; then pass; else fail "the same location: nothing changed" "$(ctx)"; fi
is "and nothing recorded" "$(lastop $D)" "4 set_location"
expect_rc 0 "node move --location '' clears it" --db $D node move n2 --location ''
is "n2 has none" "$(loc $D n2)" '[]'
# refusals: exit 1, one line, nothing recorded
for bad in 'dc=a,dc=b' 'dc' 'dc=' '=x' 'dc=a=b' $'dc=a\x01' 'dc=a,,rack=b'; do
    expect_rc 1 "node add --location '$bad' refused" --db $D node add x --location "$bad"
    if [ "$(wc -l <"$E")" -eq 1 ] && grep -q '^ringsim: ' "$E"; then pass; else fail "one line on stderr for '$bad'" "$(ctx)"; fi
done
expect_rc 1 "node move of an unknown node" --db $D node move nobody --location dc=a
expect_rc 2 "node move without --location" --db $D node move n1
expect_rc 2 "--location on node rm" --db $D node rm n1 --location dc=a
is "nothing recorded by the refusals" "$(lastop $D)" "5 set_location"
expect_rc 0 "check replays the log" --db $D check
# the scenario export rebuilds them
expect_rc 0 "export --scenario" --db $D export --scenario
cp "$O" s.txt
if grep -q -- "--location" s.txt; then pass; else fail "the export writes --location" "$(cat s.txt)"; fi
expect_rc 0 "run the export on a fresh database" --db b.db run s.txt
for n in n1 n2 n3; do is "$n's location after the run" "$(loc b.db $n)" "$(loc $D $n)"; done
# whole domains down and up
D=c.db
for i in 0 1 2 3 4 5; do
    "$BIN" --db $D node add "m$i" --location "dc=dc$((i / 3)),rack=r$((i % 2))" >/dev/null
done
"$BIN" --db $D key gen 600 >/dev/null
expect_rc 0 "preview node down --location" --db $D preview node down --location rack=r1
if grep -q 'nothing was changed' "$O"; then pass; else fail "the preview changes nothing" "$(ctx)"; fi
is "the preview recorded nothing" "$(lastop $D)" "7 insert_keys"
expect_rc 0 "node down --location rack=r1" --db $D node down --location rack=r1
is "one set_state operation" "$(lastop $D)" "8 set_state"
downs=$("$BIN" --db $D --json node ls | node -e 'let t="";process.stdin.on("data",(d)=>(t+=d)).on("end",()=>console.log(JSON.parse(t).nodes.filter((n)=>n.state==="down").map((n)=>n.name).sort().join(" ")))')
is "the rack's nodes are down, no other" "$downs" "m1 m3 m5"
expect_rc 0 "the same again" --db $D node down --location rack=r1
if grep -q 'nothing changed' "$O"; then pass; else fail "nothing changed the second time" "$(ctx)"; fi
expect_rc 1 "a domain without nodes" --db $D node down --location rack=r9
expect_rc 1 "two levels is not one domain" --db $D node down --location dc=dc0,rack=r1
expect_rc 2 "NAME and --location together" --db $D node down m0 --location rack=r1
expect_rc 2 "neither" --db $D node up
expect_rc 2 "preview rm with --location" --db $D preview node rm m0 --location rack=r1
expect_rc 0 "locations" --db $D locations
if grep -q '^dc=dc0  3 nodes (2 up, 1 down)' "$O" && grep -q '^  rack=r1  ' "$O"; then pass; else fail "the tree's lines" "$(ctx)"; fi
expect_rc 0 "locations --json" --db $D --json locations
is "--json: two roots" "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).locations.length)' "$O")" "2"
expect_rc 0 "node up --location dc=dc1" --db $D node up --location dc=dc1
expect_rc 0 "check" --db $D check
expect_rc 0 "export --scenario" --db $D export --scenario
if grep -q '^node down --location rack=r1$' "$O" && grep -q '^node up --location dc=dc1$' "$O"; then pass; else fail "the export writes the domain lines" "$(cat "$O")"; fi

# help names the command
expect_rc 0 "help node move" help node move
if grep -q 'set_location' "$O"; then pass; else fail "help says what node move does" "$(ctx)"; fi
finish
