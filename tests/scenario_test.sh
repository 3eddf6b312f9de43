#!/usr/bin/env bash
# shellcheck disable=SC2015,SC2016 # pass never fails; '$HOME' and '`cmd`' are keys
# scenario_test.sh - the command line's scenario files, exports, CSV, help,
# version and completion.
#
#   bash tests/scenario_test.sh /path/to/ringsim /path/to/source
#
# Every check runs the real binary on fresh databases in a temporary folder.
# Expected values come from the contract (/work/shared/API.md, "Version 2:
# scenario files" and "exports"; docs/api.md is its copy in the repository),
# from RFC 4180 through a CSV parser this project did not write (Python's
# csv module, /usr/bin/python3), from the JSON answers of the same state
# (the CSV must hold the same objects), and from CMake's project(VERSION).
# Ends with one line "N passed, N failed"; exits 1 if anything failed.
#
# Checks docs/api.md, 'Scenario files', 'Scenarios and exports', 'CSV'.

set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
# In memory when it can be: every change is a committed SQLite transaction
# (setup makes TMP under TMPBASE).
TMPBASE=${TMPDIR:-/tmp}
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && TMPBASE=/dev/shm
export TMPBASE
SRC=$(cd "${2:-.}" && pwd)
setup scen "/path/to/ringsim /path/to/source" 2 "$@"
PY=/usr/bin/python3

O=$TMP/out
E=$TMP/err
rs() {
    "$BIN" "$@" >"$O" 2>"$E" </dev/null
    RC=$?
}
ctx() { printf 'ringsim %s\nexit %s\nstdout: %s\nstderr: %s' "$*" "$RC" "$(head -c 1500 "$O")" "$(head -c 600 "$E")"; }
# okrs DESC ARGS...: exit 0, nothing on stderr
okrs() {
    local d=$1
    shift
    rs "$@"
    if [ "$RC" -eq 0 ] && [ ! -s "$E" ]; then pass; else fail "$d" "$(ctx "$@")"; fi
}
# A fresh database's path (unique even from a subshell).
newdb() { mktemp -u "$TMP/dbXXXXXXXX"; }
# py CODE ARGS...: run Python with the arguments in sys.argv[1:]
py() {
    local code=$1
    shift
    "$PY" -c "$code" "$@"
}
nops() { "$BIN" --db "$1" --json log | py 'import json,sys; print(len(json.load(sys.stdin)["operations"]))'; }

# ---------------------------------------------------------------------------
echo "== 1. every expect form, passing and failing"
DB=$(newdb)
cat >base.ringsim <<'EOF'
# Base
reset
config --algorithm ring --points 1 --replicas 1
node add alpha
node add bravo
node add charlie
key gen 3000
EOF
okrs "base scenario runs" --db "$DB" run base.ringsim
# The state, from the JSON answers: the expected values of the expect lines.
read -r NODES KEYS MOM CV <<<"$("$BIN" --db "$DB" --json stats | py '
import json, sys
s = json.load(sys.stdin)
print(s["nodes"], s["keys"], repr(s["max_over_mean"]), repr(s["cv"]))')"
OWNER0=$("$BIN" --db "$DB" --json lookup key-0 | py 'import json,sys; print(json.load(sys.stdin)["node"])')
MOVED=$("$BIN" --db "$DB" --json log | py 'import json,sys; print(json.load(sys.stdin)["operations"][-1]["keys_moved"])')
i=0
before=$(nops "$DB")
while IFS='|' read -r line want; do
    i=$((i + 1))
    printf '%s\n' "$line" >"e$i.ringsim"
    rs --db "$DB" run "e$i.ringsim"
    if [ "$want" = ok ]; then
        if [ "$RC" -eq 0 ] && grep -q "ok: " "$O"; then pass; else fail "expect passes: $line" "$(ctx run "e$i.ringsim")"; fi
    else
        if [ "$RC" -eq 1 ] && grep -qF "e$i.ringsim:1: expected" "$E"; then pass; else
            fail "expect fails with exit 1 naming FILE:LINE: $line" "$(ctx run "e$i.ringsim")"; fi
    fi
done <<EOF
expect nodes == $NODES|ok
expect nodes != $NODES|fail
expect nodes < $((NODES + 1))|ok
expect nodes < $NODES|fail
expect nodes <= $NODES|ok
expect nodes > $((NODES - 1))|ok
expect nodes >= $((NODES + 1))|fail
expect keys == $KEYS|ok
expect keys == $((KEYS + 1))|fail
expect keys >= $KEYS|ok
expect max_over_mean == $MOM|ok
expect max_over_mean > $MOM|fail
expect max_over_mean <= $MOM|ok
expect cv == $CV|ok
expect cv < $CV|fail
expect cv != 0|ok
expect keys_moved == $MOVED|ok
expect keys_moved > $MOVED|fail
expect replica_moves == 0|ok
expect owner(key-0) == $OWNER0|ok
expect owner(key-0) != $OWNER0|fail
expect owner(key-0) == nosuchnode|fail
expect owner(key-0) != none|ok
EOF
expect_eq "expect lines record no operation ($i of them)" "$before" "$(nops "$DB")"

# owner(KEY) of a key with no node is none; 'none' in quotes is a node's name.
DB=$(newdb)
printf 'key add lonely\nexpect owner(lonely) == none\nexpect owner(lonely) != '"'"'none'"'"'\nexpect owner(never-stored) == none\n' >none.ringsim
okrs "owner(KEY) == none with no node; 'none' quoted is a name" --db "$DB" run none.ringsim
printf 'node add none\nexpect owner(lonely) == '"'"'none'"'"'\nexpect owner(lonely) != none\n' >none2.ringsim
okrs "a node named none is written 'none'" --db "$DB" run none2.ringsim
printf 'expect keys_moved == 0\n' >noop.ringsim
rs --db "$(newdb)" run noop.ringsim
if [ "$RC" -eq 1 ] && grep -q "noop.ringsim:1: .*no operation" "$E"; then pass; else fail "keys_moved with no operation yet fails" "$(ctx run noop.ringsim)"; fi

# ---------------------------------------------------------------------------
echo "== 2. the first failing line stops the run; each change is one operation"
DB=$(newdb)
cat >stop.ringsim <<'EOF'
# Stops at line 6

node add a
key gen 10
expect keys == 10
expect keys == 11
node add b
EOF
rs --db "$DB" run stop.ringsim
expect_eq "exit 1 at a failing expect" 1 "$RC"
expect_eq "stderr names FILE:LINE and why" "ringsim: stop.ringsim:6: expected keys == 11, but keys is 10" "$(cat "$E")"
expect_eq "the lines before it ran, one operation each; line 7 did not" 2 "$(nops "$DB")"
"$BIN" --db "$DB" --json node ls >n.json
expect_eq "node b was never added" '["a"]' "$(py 'import json,sys; print(json.dumps([n["name"] for n in json.load(open(sys.argv[1]))["nodes"]]))' n.json)"
printf 'node add c\nnode add a\nnode add d\n' >refused.ringsim
rs --db "$DB" run refused.ringsim
if [ "$RC" -eq 1 ] && grep -q '^ringsim: refused.ringsim:2: .*already exists' "$E"; then pass; else
    fail "a refused change stops the run with exit 1 naming FILE:LINE" "$(ctx run refused.ringsim)"; fi
expect_eq "line 1 ran, line 3 did not" 3 "$(nops "$DB")"

# --json: the report (the same shape as POST /api/scenarios/run).
rs --db "$(newdb)" --json run stop.ringsim
py '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False, r
assert r["failed"] == {"line": 6, "text": "expect keys == 11", "message": "expected keys == 11, but keys is 10"}, r["failed"]
kinds = [(s["line"], s["kind"]) for s in r["steps"]]
assert kinds == [(3, "command"), (4, "command"), (5, "expect"), (6, "expect")], kinds
s = r["steps"]
assert s[0]["operation"]["type"] == "add_node" and s[0]["operation"]["subject"] == "a", s[0]
assert s[1]["inserted"] == 10 and s[1]["skipped"] == 0, s[1]
assert s[2] == {"line": 5, "text": "expect keys == 10", "kind": "expect", "stat": "keys", "op": "==", "value": 10, "actual": 10, "ok": True}, s[2]
assert s[3]["ok"] is False and s[3]["actual"] == 10, s[3]
assert r["operations"] == 2 and r["expectations"] == 1, r
assert r["title"] == "Stops at line 6", r
' "$O" 2>"$TMP/pyerr" && [ "$RC" -eq 1 ] && pass || fail "run --json reports every step and the failing line" "$(cat "$TMP/pyerr")" "$(ctx --json run stop.ringsim)"

# ---------------------------------------------------------------------------
echo "== 3. syntax errors: exit 2 with FILE:LINE, nothing runs"
i=0
while IFS='|' read -r bad why; do
    i=$((i + 1))
    DB=$(newdb)
    printf 'node add first\n%b\nnode add last\n' "$bad" >"s$i.ringsim"
    rs --db "$DB" run "s$i.ringsim"
    # Nothing runs: the database is not even created.
    if [ "$RC" -eq 2 ] && grep -q "^ringsim: s$i.ringsim:2: " "$E" && [ ! -e "$DB" ]; then pass; else
        fail "syntax error ($why) is exit 2 naming line 2, nothing run" "$(ctx run "s$i.ringsim")" "$(ls "$DB" 2>&1)"; fi
done <<'EOF'
nod add x|unknown command
node|a group without its subcommand
node add|missing NAME
node add a b|two names
node add a --weight|option without a value
node add a --frob 1|unknown option
node add a --weight -1|bad weight
key gen many|bad COUNT
config --algorithm nosuch|unknown algorithm
config --points 0|points out of range
revert x|bad ID
stats|a read, not a change
node ls|a read, not a change
config|config without options is a read
lookup k|a read
serve|not a change
run other.ringsim|not a change
node add a --db other.db|--db in a scenario
node add a --json|--json in a scenario
expect|expect without words
expect keys ==|expect without VALUE
expect keys = 5|unknown comparison
expect keyz == 5|unknown statistic
expect keys == five|a number expected
expect keys == 5 6|too many words
expect owner(k) < alpha|owner with <
expect owner() == alpha|owner of an empty key
node add 'unterminated|unterminated single quote
node add "unterminated|unterminated double quote
node add a\\|a line ending in a backslash
node add a\x01b|a control character
node add \xff\xfe|not UTF-8
EOF

# A scenario with no steps, and files that cannot be read.
printf '# only comments\n\n' >empty.ringsim
rs --db "$(newdb)" run empty.ringsim
if [ "$RC" -eq 2 ] && grep -q "empty.ringsim: .*no steps" "$E"; then pass; else fail "a scenario with no steps is a syntax error" "$(ctx run empty.ringsim)"; fi
rs --db "$(newdb)" run nosuch.ringsim
if [ "$RC" -eq 1 ] && grep -q "cannot open nosuch.ringsim" "$E"; then pass; else fail "a missing file is refused" "$(ctx run nosuch.ringsim)"; fi
rs --db "$(newdb)" run
expect_eq "run without FILE is wrong usage" 2 "$RC"
rs --db "$(newdb)" run --builtin nosuch
if [ "$RC" -eq 2 ] && grep -q "fill" "$E"; then pass; else fail "run --builtin with an unknown NAME lists the built-ins" "$(ctx run --builtin nosuch)"; fi

# ---------------------------------------------------------------------------
echo "== 4. words: quotes, escapes, comments, CRLF, standard input"
DB=$(newdb)
printf '%s\r\n' "# CRLF lines and quoting" \
    "node add 'with space' --weight 2   # a comment after the words" \
    "key add \"dq \\\"x\\\" \\\\ y\" 'it'\\''s' a#b plain\\ escaped -- -dash" \
    "  key add   '#hash'   " \
    "expect keys == 6" \
    "expect owner('with space') == 'with space'" >words.ringsim
okrs "quoted words, a trailing comment, CRLF" --db "$DB" run words.ringsim
"$BIN" --db "$DB" --json key ls >k.json
expect_eq "the keys are the words a POSIX shell would make" \
    "$(py 'import json,sys; print(json.dumps(sorted(["dq \"x\" \\ y", "it'"'"'s", "a#b", "plain escaped", "-dash", "#hash"])))')" \
    "$(py 'import json,sys; print(json.dumps(sorted(k["key"] for k in json.load(open(sys.argv[1]))["keys"])))' k.json)"
expect_eq "--weight 2 applied" "2.0" "$("$BIN" --db "$DB" --json node ls | py 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["weight"])')"
# A UTF-8 byte-order mark (Notepad writes one) is not part of the first word.
printf '\xef\xbb\xbf# saved with a BOM\r\nnode add bom-node\r\nexpect nodes == 2\r\n' >bom.ringsim
okrs "a file that starts with a byte-order mark" --db "$DB" run bom.ringsim
"$BIN" --db "$DB" node rm bom-node >/dev/null
printf 'node add from-stdin\nexpect nodes == 2\n' | "$BIN" --db "$DB" run - >"$O" 2>"$E"
RC=$?
if [ "$RC" -eq 0 ]; then pass; else fail "run - reads standard input" "$(ctx run -)"; fi

# The report for people: notes (the comments above a step), lines, results.
cat >notes.ringsim <<'EOF'
# Title here
#
# Summary here.

# A note about
# this step.
node add n1
EOF
okrs "a scenario with notes" --db "$(newdb)" run notes.ringsim
grep -q '^# A note about this step\.$' "$O" && grep -q '^   7  node add n1$' "$O" && grep -q 'operation 1 add_node: n1' "$O" &&
    grep -q '^ok: notes.ringsim: 1 step, 1 operation, 0 expectations met$' "$O" && pass ||
    fail "the report prints the note, the line and what happened" "$(cat "$O")"

# ---------------------------------------------------------------------------
echo "== 5. built-in scenarios"
rs scenarios --json
py '
import json, os, sys
j = json.load(open(sys.argv[1]))
names = sorted(s["name"] for s in j["scenarios"])
files = sorted(f[:-8] for f in os.listdir(sys.argv[2]) if f.endswith(".ringsim"))
assert names == files, (names, files)
assert all(s["title"] and s["summary"] for s in j["scenarios"]), j
' "$O" "$SRC/scenarios" 2>"$TMP/pyerr" && pass || fail "scenarios lists every file of scenarios/ with a title and summary" "$(cat "$TMP/pyerr")"
for f in "$SRC"/scenarios/*.ringsim; do
    n=$(basename "$f" .ringsim)
    rs scenarios "$n"
    if cmp -s "$O" "$f"; then pass; else fail "scenarios $n prints the file as it is" "$(ctx scenarios "$n")"; fi
done
rs --db "$(newdb)" run --builtin names
if [ "$RC" -eq 0 ] && grep -q "^ok: names.ringsim:" "$O"; then pass; else fail "run --builtin names" "$(ctx run --builtin names)"; fi

# ---------------------------------------------------------------------------
echo "== 6. export --scenario: the same state on an empty database"
# same_state DESC DB1 DB2: node ls, key ls and config answer the same JSON,
# and check passes on the copy.
same_state() {
    local d=$1 a=$2 b=$3 c
    for c in "node ls" "key ls" config workload stats; do
        # shellcheck disable=SC2086
        "$BIN" --db "$a" --json $c >"$TMP/sa.json"
        # shellcheck disable=SC2086
        "$BIN" --db "$b" --json $c >"$TMP/sb.json"
        if cmp -s "$TMP/sa.json" "$TMP/sb.json"; then pass; else
            fail "$d: $c --json is the same" "$(diff "$TMP/sa.json" "$TMP/sb.json" | head -n 20)"; fi
    done
    rs --db "$b" check
    if [ "$RC" -eq 0 ]; then pass; else fail "$d: check passes on the rebuilt database" "$(ctx check)"; fi
}
# round_trip DESC DB: export, run on an empty database, compare; then the
# export of the copy says the same (but for its first line).
round_trip() {
    local d=$1 db=$2 copy
    copy=$(newdb)
    if "$BIN" --db "$db" export --scenario >"$TMP/x.ringsim" 2>"$E" && [ ! -s "$E" ]; then pass; else
        fail "$d: export --scenario" "$(cat "$E")"; fi
    rs --db "$copy" run "$TMP/x.ringsim"
    if [ "$RC" -eq 0 ]; then pass; else fail "$d: the export runs on an empty database" "$(ctx run x.ringsim)" "$(head -c 1500 "$TMP/x.ringsim")"; fi
    same_state "$d" "$db" "$copy"
    "$BIN" --db "$copy" export --scenario >"$TMP/y.ringsim"
    if diff <(tail -n +2 "$TMP/x.ringsim") <(tail -n +2 "$TMP/y.ringsim") >/dev/null; then pass; else
        fail "$d: exporting the copy gives the same scenario" "$(diff "$TMP/x.ringsim" "$TMP/y.ringsim" | head -n 20)"; fi
}
DB=$(newdb)
round_trip "an empty database" "$DB"
# Parameters another algorithm remembers (ring's points set before a switch
# to ketama, a reset in between): config --json says them, the copy too.
DB=$(newdb)
"$BIN" --db "$DB" config --points 8 >/dev/null
"$BIN" --db "$DB" config --algorithm multiprobe --param probes=5 >/dev/null
"$BIN" --db "$DB" config --algorithm ketama >/dev/null
"$BIN" --db "$DB" reset >/dev/null
"$BIN" --db "$DB" node add a >/dev/null
round_trip "ring's and multiprobe's parameters remembered under ketama, after a reset" "$DB"
DB=$(newdb)
r() { "$BIN" --db "$DB" "$@" >/dev/null 2>"$E" || fail "setting up: ringsim $*" "$(cat "$E")"; }
r node add alpha
r node add 'b,"quoted" <b>&amp;</b>' --weight 2.5
r node add -- -dash
r node add "Zürich ☃ 日本語"
r key gen 500 --prefix 'p ,"q"-' --start 7
r key add 'it'"'"'s' 'a b' '#c' -- -d 'ü,"x"' '<i>x</i>' "back\\slash" '$HOME' '`cmd`'
r key add solo
r key rm -- -d solo
r config --points 7
r node rm alpha
r config --algorithm rendezvous
r key gen 100
r config --algorithm ring --replicas 2 --param points_per_node=3
r node add late --weight 0.3333333333333333
round_trip "nodes, weights, odd names, keys, deletes, configurations" "$DB"
# Reverts and resets: the export rebuilds the state they left.
OPS=$(nops "$DB")
r node add temp
r key gen 50 --prefix t-
r revert $((OPS - 4))
r key add after-revert
round_trip "after a revert to the past" "$DB"
r revert 3
r node add after-second-revert
round_trip "after a revert to a state that stands on another revert" "$DB"
r reset
r node add fresh
r key gen 20
round_trip "after a reset (the configuration it kept)" "$DB"
r revert 0
round_trip "after revert 0" "$DB"
DB=$(newdb)
r config --algorithm jump
r node add j0
r node add j1
r node add j2
r key gen 300
r node rm j1
r node add j3
round_trip "jump with a middle node removed (MementoHash's state)" "$DB"
"$BIN" --db "$DB" export --scenario >"$TMP/x.ringsim"
expect_eq "the export ends with expect lines of the state" "expect nodes == 3|expect keys == 300" "$(tail -n 2 "$TMP/x.ringsim" | paste -sd '|')"
# A workload set before a reset stays in force (a reset keeps it): the export
# sets it again, and the copy answers the same workload, requests per node
# (node ls) and requests figures (stats) -- replayed into a fresh database
# and into one whose own workload differs.
DB=$(newdb)
r node add w1
r node add w2
r key gen 400
r workload zipf --param s=1.3 --param seed=4 --param sizes.kind=uniform --param sizes.min=10 --param sizes.max=90
r reset
r node add w3
r node add w4
r key gen 300 --prefix after-
r node add w5
round_trip "a zipf workload set before a reset" "$DB"
if grep -qx 'workload zipf --param s=1.3 --param seed=4 --param order=hashed --param sizes.kind=uniform --param sizes.min=10 --param sizes.max=90 --param sizes.seed=0' "$TMP/x.ringsim"; then pass; else
    fail "the export sets the workload of before the reset, every parameter" "$(head -n 14 "$TMP/x.ringsim")"; fi
other=$(newdb)
"$BIN" --db "$other" workload hotspot --param hot_fraction=0.2 --param hot_share=0.5 >/dev/null
rs --db "$other" run "$TMP/x.ringsim"
if [ "$RC" -eq 0 ]; then pass; else fail "the export runs on a database with another workload" "$(ctx run x.ringsim)"; fi
same_state "a zipf workload set before a reset, run where another workload was" "$DB" "$other"
# The default before the reset: written too, so another database's goes.
r workload uniform
r reset
r node add u1
r key gen 20
other=$(newdb)
"$BIN" --db "$other" workload zipf --param s=0.9 >/dev/null
"$BIN" --db "$DB" export --scenario >"$TMP/x.ringsim"
rs --db "$other" run "$TMP/x.ringsim"
same_state "the default workload before a reset, run where zipf was" "$DB" "$other"
# A keys workload lists keys the reset cleared: set last, once they are back.
DB=$(newdb)
r node add k1
r node add k2
r key add hot1 hot2
r key gen 100
r workload keys --param 'keys=[{"key":"hot1","share":0.3},{"key":"hot2","share":0.2}]'
r reset
r key add hot1 hot2
r key gen 50
round_trip "a keys workload set before a reset, its keys stored again" "$DB"
expect_eq "workload uniform first, the keys workload last (before the expect lines)" "workload uniform|workload keys|expect nodes" \
    "$(grep -E '^(workload|expect)' "$TMP/x.ringsim" | cut -d' ' -f1,2 | head -n 3 | paste -sd '|')"

# ---------------------------------------------------------------------------
echo "== 7. --csv: RFC 4180, parsed back by Python's csv module"
DB=$(newdb)
r config --points 3
r node add 'comma, "quote"'
r node add '<b>html</b> & ünï'
r node add plain
r key add 'k,1' 'k"2' 'k 3' '=1+2' 'ü' 'x,"y",z'
r key gen 40
r node rm plain
LAST=$("$BIN" --db "$DB" --json log | py 'import json,sys; print(json.load(sys.stdin)["operations"][-1]["id"])')
# csv_same DESC CSVFILE JSONFILE MEMBER: the CSV is the JSON list, field by field.
csv_same() {
    local d=$1
    shift
    py '
import csv, io, json, re, sys
raw = open(sys.argv[1], "rb").read()
rows = json.load(open(sys.argv[2], encoding="utf-8"))[sys.argv[3]]
assert rows, "the JSON list is empty"
text = raw.decode("utf-8")
# RFC 4180: every record ends with CRLF.
assert text.endswith("\r\n"), "no CRLF at the end"
records = list(csv.reader(io.StringIO(text, newline=""), strict=True))
# RFC 4180 quoting, exactly: writing the records back with CRLF and minimal
# quoting gives the same bytes.
again = io.StringIO(newline="")
csv.writer(again, lineterminator="\r\n").writerows(records)
assert again.getvalue() == text, "not the minimal RFC 4180 form"
header, body = records[0], records[1:]
assert header == list(rows[0].keys()), (header, list(rows[0].keys()))
assert len(body) == len(rows), (len(body), len(rows))
def field(v):
    if v is None: return ""
    if isinstance(v, str): return v
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)
for rec, row in zip(body, rows):
    for h, cell in zip(header, rec):
        v = row.get(h)
        if isinstance(v, float):
            assert float(cell) == v, (h, cell, v)
        elif isinstance(v, (list, dict)):
            assert json.loads(cell) == v, (h, cell, v)
        elif isinstance(v, str):
            # Formulas defused with a leading quote mark (OWASP), and a
            # leading quote mark too; plain decimal numbers are left alone.
            q = chr(39)
            d = q + v if re.match("[=+@\t\r" + q + "-]", v) and not re.fullmatch("-[0-9]+", v) else v
            assert cell == d, (h, cell, v)
        else:
            assert cell == field(v), (h, cell, v)
' "$@" 2>"$TMP/pyerr" && pass || fail "$d" "$(cat "$TMP/pyerr")" "$(head -c 800 "$1")"
}
for c in "node ls|nodes" "key ls|keys" "log|operations" "log $LAST|moves"; do
    cmd=${c%|*}
    member=${c#*|}
    # shellcheck disable=SC2086
    "$BIN" --db "$DB" --csv $cmd >"$TMP/c.csv"
    # shellcheck disable=SC2086
    "$BIN" --db "$DB" --json $cmd >"$TMP/c.json"
    csv_same "$cmd --csv holds the objects of $cmd --json" "$TMP/c.csv" "$TMP/c.json" "$member"
done
rs --db "$DB" --csv --json node ls
expect_eq "--csv with --json is wrong usage" 2 "$RC"
rs --db "$DB" --csv stats
expect_eq "--csv on a command without a list is wrong usage" 2 "$RC"

# ---------------------------------------------------------------------------
echo "== 8. --version, help COMMAND, completion"
WANT=$(sed -n 's/^project(ringsim VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
okrs "--version" --version
expect_eq "--version prints CMake's project(VERSION)" "ringsim $WANT" "$(cat "$O")"
okrs "help" help
grep -o '^  [a-z][a-z ]*' "$O" | sed 's/^  //; s/  .*//; s/ *$//' | while read -r words; do
    # the command's words are those before its first argument (upper case or [)
    cmd=$(printf '%s\n' "$words" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[a-z]+$/) printf "%s%s", (i > 1 ? " " : ""), $i; else exit }')
    [ -z "$cmd" ] && continue
    # shellcheck disable=SC2086
    if "$BIN" help $cmd >"$TMP/h.txt" 2>&1 && grep -q "^usage: ringsim $cmd" "$TMP/h.txt"; then echo pass; else
        echo "FAIL: help $cmd"; fi
done >"$TMP/helps"
expect_eq "help COMMAND works for every command help lists ($(grep -c . "$TMP/helps"))" "" "$(grep FAIL "$TMP/helps")"
[ "$(grep -c pass "$TMP/helps")" -ge 20 ] && pass || fail "help lists at least 20 commands" "$(cat "$TMP/helps")"
rs help frob
expect_eq "help of an unknown command is wrong usage" 2 "$RC"
okrs "node add --help" node add --help
grep -q '^usage: ringsim node add NAME \[--weight W\]' "$O" && pass || fail "COMMAND --help shows its usage" "$(cat "$O")"
okrs "complete" complete -- node ""
# the words after "node" in the command list of `help` (add, rm, weight, ls…)
"$BIN" help | sed -n 's/^  node \([a-z]*\) .*/\1/p; s/^  node \([a-z]*\)$/\1/p' >"$TMP/node_words"
[ "$(grep -c . "$TMP/node_words")" -ge 4 ] && pass || fail "help lists at least 4 node commands" "$(cat "$TMP/node_words")"
expect_eq "completion after node: the node commands of help" "$(paste -sd '|' "$TMP/node_words")" "$(paste -sd '|' "$O")"
# A command group's help lists its commands, exit 0 (every group help shows).
"$BIN" help | grep -o '^  [a-z]* [a-z]' | awk '{ print $1 }' | sort -u >"$TMP/groups"
[ "$(grep -c . "$TMP/groups")" -ge 3 ] && pass || fail "help shows at least 3 command groups" "$(cat "$TMP/groups")"
while read -r g; do
    rs help "$g"
    want=$("$BIN" help | grep -c "^  $g [a-z]")
    got=$(grep -c "^  $g [a-z]" "$O")
    if [ "$RC" -eq 0 ] && [ "$want" -ge 1 ] && [ "$want" = "$got" ] && grep -q "^usage: ringsim $g COMMAND" "$O"; then pass; else
        fail "help $g lists the $want $g commands, exit 0" "exit $RC, listed $got" "$(cat "$O" "$E")"; fi
done <"$TMP/groups"
rs help node frob
expect_eq "help of an unknown command in a group is wrong usage" 2 "$RC"
okrs "complete --algorithm" complete -- config --algorithm ""
expect_eq "completion after --algorithm: ringsim algorithms' names" \
    "$("$BIN" algorithms --json | py 'import json,sys; print("|".join(a["name"] for a in json.load(sys.stdin)["algorithms"]))')" \
    "$(paste -sd '|' "$O")"
okrs "complete options" complete -- key gen --p
expect_eq "completion of key gen's options" "--prefix" "$(cat "$O")"
okrs "complete run --builtin" complete -- run --builtin ""
expect_eq "completion of built-in scenario names" "$(for f in "$SRC"/scenarios/*.ringsim; do basename "$f" .ringsim; done | paste -sd '|')" "$(paste -sd '|' "$O")"

# A failing line is named once: "FILE:N: message", never "line N:" again inside.
i=0
for text in 'node add a\nfrob x' 'node add a\nnode add "open' 'node add a\nexpect nodes == 5' \
    'node add a\nnode add a' 'config --algorithm ring --param probes=3' 'key gen 0'; do
    i=$((i + 1))
    printf '%b\n' "$text" >"$TMP/once$i.ringsim"
    rs --db "$TMP/once$i.db" run "$TMP/once$i.ringsim"
    n=$(grep -oiE 'line [0-9]+:|\.ringsim:[0-9]+:' "$E" | wc -l)
    if [ "$RC" -ne 0 ] && [ "$n" -eq 1 ]; then pass; else fail "run names the failing line once ($text)" "$(ctx run)"; fi
done

finish
