#!/usr/bin/env bash
# cli_test.sh - end-to-end tests of the ringsim command line.
#
#   bash tests/cli_test.sh /path/to/ringsim
#
# Every check runs the real binary on fresh databases in a temporary folder.
# Expected values come from the contract (/work/shared/API.md, "Command line",
# "Positions and placement", "Names") and are computed here independently of
# ringsim's code: positions with coreutils' sha256sum (and once with node's
# crypto), owners with a small placement written in JavaScript below.
#
# Needs bash, coreutils and node; uses the sqlite3 command-line shell when it
# is there (a few checks are skipped, with a note, when it is not).
# Ends with one line "N passed, N failed"; exits 1 if anything failed.
#
# Checks docs/api.md, 'Command line', 'Conventions'.

# shellcheck disable=SC2016 # JavaScript in single quotes, on purpose
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
setup cli /path/to/ringsim 1 "$@"
need node
HAVE_SQLITE=0
command -v sqlite3 >/dev/null && HAVE_SQLITE=1
LOCKPID=
on_exit() { [ -n "$LOCKPID" ] && kill "$LOCKPID" 2>/dev/null; }

# rs ARGS... : run ringsim; sets RC and leaves stdout in $O, stderr in $E.
O=$TMP/out
E=$TMP/err
rs() {
    "$BIN" "$@" >"$O" 2>"$E" </dev/null
    RC=$?
}
ctx() { printf 'command: ringsim %s\nexit %s\nstdout: %s\nstderr: %s' "$*" "$RC" \
    "$(head -c 600 "$O")" "$(head -c 600 "$E")"; }

# ok DESC ARGS... : the command succeeds (exit 0) and writes nothing on stderr.
ok() {
    local d=$1
    shift
    rs "$@"
    if [ "$RC" -eq 0 ] && [ ! -s "$E" ]; then pass; else fail "$d" "$(ctx "$@")"; fi
}
# stderr holds exactly one non-empty line
one_line_err() {
    [ -s "$E" ] && [ "$(awk 'END { print NR }' "$E")" -eq 1 ] && grep -q '[^[:space:]]' "$E"
}

# Positions, independently: first 8 hex digits of SHA-256, as an integer.
pos_of() {
    local h
    h=$(printf '%s' "$1" | sha256sum)
    echo $((16#${h:0:8}))
}

# A digest of everything a database holds: its SQL dump when the sqlite3 shell
# is there, else the --json outputs of the reading commands.
fingerprint() {
    local db=$1 c
    {
        if [ "$HAVE_SQLITE" = 1 ]; then
            sqlite3 "$db" .dump
        else
            for c in "node ls" "key ls" log config ring; do
                # shellcheck disable=SC2086
                "$BIN" --db "$db" --json $c
                echo "rc=$?"
            done
        fi
    } 2>&1 | sha256sum | cut -d' ' -f1
}

# refused DESC DB ARGS... : exit 1, exactly one line on stderr, DB unchanged.
refused() {
    local d=$1 db=$2 before after why=()
    shift 2
    before=$(fingerprint "$db")
    rs --db "$db" "$@"
    after=$(fingerprint "$db")
    [ "$RC" -eq 1 ] || why+=("exit status $RC, expected 1")
    one_line_err || why+=("stderr is not exactly one line")
    [ "$before" == "$after" ] || why+=("the database changed")
    if [ ${#why[@]} -eq 0 ]; then pass; else fail "refused: $d" "${why[@]}" "$(ctx "$@")"; fi
}
# usage_err DESC DB ARGS... : exit 2, something on stderr, DB unchanged.
usage_err() {
    local d=$1 db=$2 before after why=()
    shift 2
    before=$(fingerprint "$db")
    rs --db "$db" "$@"
    after=$(fingerprint "$db")
    [ "$RC" -eq 2 ] || why+=("exit status $RC, expected 2")
    [ -s "$E" ] || why+=("nothing on stderr")
    [ "$before" == "$after" ] || why+=("the database changed")
    if [ ${#why[@]} -eq 0 ]; then pass; else fail "usage: $d" "${why[@]}" "$(ctx "$@")"; fi
}

# ---- JavaScript helpers: an independent placement and JSON checks ----------

cat >"$TMP/lib.js" <<'EOF'
'use strict';
const fs = require('fs');
const crypto = require('crypto');
const TWO32 = 4294967296;
// position(s): first 4 bytes of SHA-256 of the UTF-8 bytes, big-endian.
const pos = (s) => parseInt(crypto.createHash('sha256').update(Buffer.from(s, 'utf8'))
    .digest('hex').slice(0, 8), 16);
// C's round(): halves away from zero.
const cround = (x) => Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
const label = (name, i) => (i === 0 ? name : `${name}#${i}`);
// nodes: [[name, weight]...]; the points in ring order.
function points(nodes, ppn) {
    const pts = [];
    for (const [name, w] of nodes) {
        const P = Math.max(1, cround(ppn * w));
        for (let i = 0; i < P; i++) pts.push({ position: pos(label(name, i)), node: name, index: i });
    }
    pts.sort((a, b) => a.position - b.position
        || Buffer.compare(Buffer.from(a.node, 'utf8'), Buffer.from(b.node, 'utf8'))
        || a.index - b.index);
    return pts;
}
// The owner of a position: first point >= it, wrapping to the smallest.
function owner(pts, p) {
    if (!pts.length) return null;
    let lo = 0, hi = pts.length;
    while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (pts[m].position >= p) hi = m; else lo = m + 1;
    }
    return pts[lo === pts.length ? 0 : lo].node;
}
// Each node's share of the ring: point i owns (p[i-1], p[i]].
function arcs(pts) {
    const a = {};
    pts.forEach((pt, i) => {
        const len = i === 0 ? pt.position + TWO32 - pts[pts.length - 1].position
            : pt.position - pts[i - 1].position;
        a[pt.node] = (a[pt.node] || 0) + len;
    });
    for (const k of Object.keys(a)) a[k] /= TWO32;
    return a;
}
const types = {
    string: (v) => typeof v === 'string',
    int: (v) => Number.isInteger(v),
    number: (v) => typeof v === 'number' && Number.isFinite(v),
    bool: (v) => typeof v === 'boolean',
    array: (v) => Array.isArray(v),
    object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
    'string|null': (v) => v === null || typeof v === 'string',
};
// shape(obj, {field: type}, where, bad): every field present with its type.
function shape(obj, spec, where, bad) {
    if (!types.object(obj)) { bad(`${where}: not an object: ${JSON.stringify(obj)}`); return; }
    for (const [k, t] of Object.entries(spec))
        if (!(k in obj)) bad(`${where}: field "${k}" missing in ${JSON.stringify(obj).slice(0, 200)}`);
        else if (!types[t](obj[k])) bad(`${where}: field "${k}" is not ${t}: ${JSON.stringify(obj[k])}`);
}
const NODE = { name: 'string', position: 'int', weight: 'number', points: 'int', keys: 'int',
    key_share: 'number', arc_share: 'number' };
const KEY = { key: 'string', position: 'int', node: 'string|null' };
const OP = { id: 'int', at: 'string', type: 'string', subject: 'string', keys_moved: 'int',
    moved_from: 'array' };
function op(o, where, bad) {
    shape(o, OP, where, bad);
    if (!o || typeof o !== 'object') return;
    if (typeof o.at === 'string' && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(o.at))
        bad(`${where}: "at" is not RFC 3339 UTC: ${o.at}`);
    if (!['add_node', 'remove_node', 'insert_keys', 'delete_keys', 'configure', 'reset', 'revert',
        'set_weight']
        .includes(o.type)) bad(`${where}: unknown type ${o.type}`);
    if (Array.isArray(o.moved_from)) {
        let sum = 0;
        for (const m of o.moved_from) { shape(m, { node: 'string|null', keys: 'int' }, `${where}.moved_from[]`, bad); sum += m.keys; }
        if (sum !== o.keys_moved) bad(`${where}: moved_from adds up to ${sum}, keys_moved is ${o.keys_moved}`);
    }
}
// moved_from as a canonical string, to compare regardless of order.
const mf = (list) => JSON.stringify([...list].map((m) => [m.node, m.keys])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
const J = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
const bcmp = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
module.exports = { pos, cround, label, points, owner, arcs, shape, op, mf, J, near, bcmp,
    NODE, KEY, OP, TWO32 };
EOF

cat >"$TMP/run.js" <<'EOF'
'use strict';
const L = require('./lib.js');
const [code, ...A] = process.argv.slice(2);
const P = [];
const bad = (m) => P.push(String(m));
try {
    new Function('L', 'A', 'bad', 'J', 'require', code)(L, A, bad, L.J, require);
} catch (e) {
    P.push(`exception: ${String(e.stack).split('\n').slice(0, 2).join(' ')}`);
}
if (P.length) {
    console.log(P.slice(0, 10).join('\n'));
    if (P.length > 10) console.log(`... ${P.length} problems in all`);
    process.exit(1);
}
EOF

# jscheck DESC CODE ARGS... : CODE (JavaScript; L = lib.js, A = ARGS, J(file)
# parses JSON, bad(msg) reports a problem) must report nothing.
jscheck() {
    local d=$1 code=$2 out
    shift 2
    if out=$(node "$TMP/run.js" "$code" "$@" 2>&1) && [ -z "$out" ]; then pass; else fail "$d" "$out"; fi
}
# jsval CODE ARGS... : print what CODE returns (strings bare, the rest as JSON).
jsval() {
    local code=$1
    shift
    node -e '
        const L = require(process.argv[1]);
        const A = process.argv.slice(3);
        const r = new Function("L", "A", "J", process.argv[2])(L, A, L.J);
        // Objects with their fields in sorted order: field order is not part of the contract.
        const canon = (v) => (Array.isArray(v) ? v.map(canon) : v && typeof v === "object"
            ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
        process.stdout.write(typeof r === "string" ? r : JSON.stringify(canon(r)));
    ' "$TMP/lib.js" "$code" "$@"
}

# placement_ok DESC KEYS_JSON NODES_JSON PPN : every key in a `key ls --json`
# has its SHA-256 position and the owner the independent placement says, and
# the list is in (position, key) order with the right total.
placement_ok() {
    jscheck "$1" '
        const [f, nodes, ppn] = A;
        const j = J(f), pts = L.points(JSON.parse(nodes), Number(ppn));
        L.shape(j, { total: "int", keys: "array" }, "key ls", bad);
        if (j.total !== j.keys.length) bad(`total ${j.total} but ${j.keys.length} keys listed`);
        let prev = null;
        for (const k of j.keys) {
            L.shape(k, L.KEY, "key", bad);
            const p = L.pos(k.key);
            if (k.position !== p) bad(`key ${JSON.stringify(k.key)}: position ${k.position}, sha256 says ${p}`);
            const o = L.owner(pts, p);
            if (k.node !== o) bad(`key ${JSON.stringify(k.key)} (position ${p}): on ${k.node}, should be on ${o}`);
            if (prev && (prev.position > k.position || (prev.position === k.position && L.bcmp(prev.key, k.key) >= 0)))
                bad(`keys out of (position, key) order at ${JSON.stringify(k.key)}`);
            prev = k;
        }' "$2" "$3" "$4"
}

new_db() { # new_db NAME -> prints a fresh database path
    mkdir -p "$TMP/db"
    echo "$TMP/db/$1.db"
}

# ===========================================================================
echo "== 1. positions against sha256sum"
# ===========================================================================
DB=$(new_db positions)
NAMES=(alpha "ノード" "with space" "a/b" "100%" "50%2F" "#hash" "what?" "it's" 'say "hi"'
    "<b>bold</b>" "é" "🙂 emoji" "x#1" "trailing " "-dash" "a&b=c;d")
for n in "${NAMES[@]}"; do
    rs --json lookup "$n"
    if [ "$RC" -ne 0 ]; then
        fail "lookup $n exits 0" "$(ctx --json lookup "$n")"
        continue
    fi
    got=$(jsval 'const j = J(A[0]); return j.key + "\t" + j.position' "$O")
    expect_eq "lookup position of \"$n\" is sha256's" "$n"$'\t'"$(pos_of "$n")" "$got"
done
for n in "${NAMES[@]}"; do
    rs --db "$DB" node add "$n"
    [ "$RC" -eq 0 ] || fail "node add \"$n\"" "$(ctx --db "$DB" node add "$n")"
done
rs --db "$DB" --json node ls
cp "$O" "$TMP/positions-nodes.json"
expected=$(for n in "${NAMES[@]}"; do printf '%s\t%s\n' "$n" "$(pos_of "$n")"; done | sort)
got=$(jsval 'return J(A[0]).nodes.map((n) => n.name + "\t" + n.position + "\n").join("")' \
    "$TMP/positions-nodes.json" | sort)
expect_eq "node ls: every name kept byte for byte, position = sha256's" "$expected" "$got"
# One value with node's own crypto as well (a second implementation).
rs --json lookup "ノード"
jscheck "lookup position of ノード equals node crypto's parseInt(sha256hex.slice(0, 8), 16)" '
    const h = require("crypto").createHash("sha256").update("ノード").digest("hex");
    const p = J(A[0]).position;
    if (p !== parseInt(h.slice(0, 8), 16)) bad(`ringsim ${p}, node crypto ${parseInt(h.slice(0, 8), 16)}`);
    if (p !== Number(A[1])) bad(`ringsim ${p}, sha256sum ${A[1]}`);' "$O" "$(pos_of "ノード")"
# The known value from the original simulator's definition, as a constant.
expect_eq "position(\"ノード\") is the constant 435890425 (0x19fb28f9)" 435890425 "$(pos_of "ノード")"
# The node ls table for people.
rs --db "$DB" node ls
if [ "$RC" -eq 0 ] && head -n 1 "$O" | grep -q 'Node.*Position.*Points.*Keys.*Key %.*Ring %'; then
    pass
else
    fail "node ls (people) has the header Node, Position, Points, Keys, Key %, Ring %" "$(ctx node ls)"
fi
if grep -q "^alpha  *$(pos_of alpha) " "$O"; then pass; else
    fail "node ls (people) has a row: alpha, its position" "$(ctx node ls)"; fi

# ===========================================================================
echo "== 2. placement: keys on the owner an independent ring computes"
# ===========================================================================
DB=$(new_db placement)
for n in alpha bravo charlie delta; do rs --db "$DB" node add $n; done
ok "key gen 200" --db "$DB" key gen 200
ok "key ls --json" --db "$DB" --json key ls
cp "$O" "$TMP/p1.json"
expect_eq "key ls lists 200 keys" 200 "$(jsval 'return String(J(A[0]).keys.length)' "$TMP/p1.json")"
placement_ok "200 keys, 4 nodes, 1 point each: owners match" "$TMP/p1.json" \
    '[["alpha",1],["bravo",1],["charlie",1],["delta",1]]' 1
ok "config --points 3" --db "$DB" config --points 3
ok "node add echo --weight 2" --db "$DB" node add echo --weight 2
ok "node add foxtrot --weight 0.5" --db "$DB" node add foxtrot --weight 0.5
ok "node add golf --weight 0.1" --db "$DB" node add golf --weight 0.1
ok "node add hotel --weight 2.5" --db "$DB" node add hotel --weight 2.5
# Equal positions: node "x#1" has its point 0 at position("x#1"), exactly where
# node "x" has its point 1; (position, name bytes, index) puts x first.
ok "node add x" --db "$DB" node add x
ok "node add x#1 (its point 0 ties with the point x#1 of node x)" --db "$DB" node add "x#1"
# Two names whose positions are equal (found by a birthday search: sha256 of
# both starts 0202b2fe), neither a prefix of the other: name bytes decide.
ok "node add tie-75600" --db "$DB" node add tie-75600
ok "node add tie-54662 (same position as tie-75600)" --db "$DB" node add tie-54662
ok "key add (Unicode and odd keys)" --db "$DB" key add "ノード" "a/b" "100%" "<b>" "q?x=1#f" "sp ace"
# Keys that sit exactly on a point belong to that point (>=, not >).
ok "key add keys named like points" --db "$DB" key add alpha "echo#3" "hotel#7" golf "x#1" "x#2" "x#1#2" tie-75600 tie-54662
ok "key gen 300 --prefix user: --start 1000" --db "$DB" key gen 300 --prefix user: --start 1000
NODES3='[["alpha",1],["bravo",1],["charlie",1],["delta",1],["echo",2],["foxtrot",0.5],["golf",0.1],["hotel",2.5],["x",1],["x#1",1],["tie-75600",1],["tie-54662",1]]'
rs --db "$DB" --json key ls
cp "$O" "$TMP/p2.json"
placement_ok "515 keys, 3 points per node, weights 0.1..2.5: owners match" "$TMP/p2.json" "$NODES3" 3
rs --db "$DB" --json node ls
cp "$O" "$TMP/p2-nodes.json"
jscheck "node ls: points = max(1, round(3 x weight)) (echo 6, foxtrot 2, golf 1, hotel 8), position = position(name)" '
    const want = { alpha: 3, bravo: 3, charlie: 3, delta: 3, echo: 6, foxtrot: 2, golf: 1, hotel: 8, x: 3, "x#1": 3,
        "tie-75600": 3, "tie-54662": 3 };
    const nodes = J(A[0]).nodes;
    if (nodes.length !== 12) bad(`${nodes.length} nodes, expected 12`);
    for (const n of nodes) {
        if (n.points !== want[n.name]) bad(`${n.name}: points ${n.points}, expected ${want[n.name]}`);
        if (n.position !== L.pos(n.name)) bad(`${n.name}: position ${n.position}, expected ${L.pos(n.name)}`);
    }
    const w = Object.fromEntries(JSON.parse(A[1]));
    for (const n of nodes) if (n.weight !== w[n.name]) bad(`${n.name}: weight ${n.weight}, expected ${w[n.name]}`);' \
    "$TMP/p2-nodes.json" "$NODES3"
rs --db "$DB" --json ring
cp "$O" "$TMP/p2-ring.json"
jscheck "ring --json: every point of every node, labels name, name#1.. hashed, in ring order" '
    const j = J(A[0]), want = L.points(JSON.parse(A[1]), 3);
    L.shape(j, { algorithm: "string", points_per_node: "int", points: "array" }, "ring", bad);
    if (j.algorithm !== "ring") bad(`algorithm ${j.algorithm}`);
    if (j.points_per_node !== 3) bad(`points_per_node ${j.points_per_node}`);
    if (j.points.length !== want.length) bad(`${j.points.length} points, expected ${want.length}`);
    for (let i = 0; i < Math.min(j.points.length, want.length); i++) {
        const g = j.points[i], w = want[i];
        L.shape(g, { position: "int", node: "string" }, `points[${i}]`, bad);
        if (g.position !== w.position || g.node !== w.node)
            bad(`points[${i}]: ${g.node} at ${g.position}, expected ${w.node} (label ${L.label(w.node, w.index)}) at ${w.position}`);
    }' "$TMP/p2-ring.json" "$NODES3"
jscheck "keys on a point: alpha->alpha, echo#3->echo, hotel#7->hotel, golf->golf, x#2->x, x#1#2->x#1; ties: x#1 -> x, tie-75600 -> tie-54662" '
    const on = Object.fromEntries(J(A[0]).keys.map((k) => [k.key, k.node]));
    const want = { alpha: "alpha", "echo#3": "echo", "hotel#7": "hotel", golf: "golf", "x#2": "x", "x#1#2": "x#1", "x#1": "x",
        "tie-75600": "tie-54662", "tie-54662": "tie-54662" };
    for (const [k, n] of Object.entries(want)) if (on[k] !== n) bad(`${k} is on ${on[k]}, expected ${n}`);' "$TMP/p2.json"
jscheck "ring: the tied points at position(x#1) are in the order x, then x#1" '
    const p = J(A[0]).points.filter((p) => p.position === L.pos("x#1")).map((p) => p.node);
    if (JSON.stringify(p) !== JSON.stringify(["x", "x#1"])) bad(`nodes at position(x#1): ${JSON.stringify(p)}`);' "$TMP/p2-ring.json"
jscheck "ring: the tied points at position 33731326 are in the order tie-54662, then tie-75600" '
    const p = J(A[0]).points.filter((p) => p.position === 33731326).map((p) => p.node);
    if (JSON.stringify(p) !== JSON.stringify(["tie-54662", "tie-75600"])) bad(`nodes at 33731326: ${JSON.stringify(p)}`);' "$TMP/p2-ring.json"
expect_eq "sha256sum: position(tie-54662) = position(tie-75600) = 33731326" "33731326 33731326" \
    "$(pos_of tie-54662) $(pos_of tie-75600)"
# A few labels by hand with sha256sum (not through the JavaScript).
jscheck "ring: echo has points at sha256(echo), sha256(echo#1) .. sha256(echo#5)" '
    const got = J(A[0]).points.filter((p) => p.node === "echo").map((p) => p.position).sort((a, b) => a - b);
    const want = A.slice(1).map(Number).sort((a, b) => a - b);
    if (JSON.stringify(got) !== JSON.stringify(want)) bad(`got ${got}, expected ${want}`);' \
    "$TMP/p2-ring.json" "$(pos_of echo)" "$(pos_of 'echo#1')" "$(pos_of 'echo#2')" \
    "$(pos_of 'echo#3')" "$(pos_of 'echo#4')" "$(pos_of 'echo#5')"
# lookup agrees with the independent owner for stored and unstored keys.
for k in "ノード" "user:1000" "not stored" "zz/%#?"; do
    rs --db "$DB" --json lookup "$k"
    cp "$O" "$TMP/lk.json"
    stored=false
    [ "$k" = "ノード" ] || [ "$k" = "user:1000" ] && stored=true
    jscheck "lookup \"$k\": {key, position, node, stored=$stored}, node = independent owner" '
        const j = J(A[0]), pts = L.points(JSON.parse(A[1]), 3);
        L.shape(j, { key: "string", position: "int", node: "string|null", stored: "bool" }, "lookup", bad);
        if (j.key !== A[2]) bad(`key ${j.key}`);
        if (j.position !== L.pos(A[2])) bad(`position ${j.position}, expected ${L.pos(A[2])}`);
        const o = L.owner(pts, L.pos(A[2]));
        if (j.node !== o) bad(`node ${j.node}, expected ${o}`);
        if (j.stored !== (A[3] === "true")) bad(`stored ${j.stored}, expected ${A[3]}`);' \
        "$TMP/lk.json" "$NODES3" "$k" "$stored"
done
# Wrapping: a key past the largest point goes to the smallest point's node.
jscheck "placement test data covers the wrap-around (some key lies past the largest point)" '
    const pts = L.points(JSON.parse(A[1]), 3), last = pts[pts.length - 1].position;
    const k = J(A[0]).keys.filter((k) => k.position > last);
    if (!k.length) bad("no key past the largest point: the wrap is not exercised");
    for (const x of k) if (x.node !== pts[0].node) bad(`${x.key} past the last point is on ${x.node}, not ${pts[0].node}`);' \
    "$TMP/p2.json" "$NODES3"

# ===========================================================================
echo "== 3. every command and its JSON"
# ===========================================================================
DB=$(new_db commands)
rs --db "$DB" --json config
cp "$O" "$TMP/c0.json"
jscheck "config --json on a new database: defaults algorithm ring, points_per_node 1" '
    const j = J(A[0]);
    if (j.algorithm !== "ring" || j.points_per_node !== 1) bad(JSON.stringify(j));' "$TMP/c0.json"
rs --db "$DB" --json node ls
expect_eq "node ls --json on a new database" '{"nodes":[]}' "$(jsval 'return J(A[0])' "$O")"
rs --db "$DB" --json key ls
expect_eq "key ls --json on a new database" '{"keys":[],"total":0}' "$(jsval 'return J(A[0])' "$O")"
rs --db "$DB" --json log
expect_eq "log --json on a new database" '{"operations":[]}' "$(jsval 'return J(A[0])' "$O")"

# Keys before any node: node null, placed by the first node.
ok "key add k1 k2 k3 with no node" --db "$DB" key add k1 k2 k3
rs --db "$DB" --json key ls
jscheck "keys stored with no node have node null" '
    const j = J(A[0]);
    if (j.total !== 3) bad(`total ${j.total}`);
    for (const k of j.keys) if (k.node !== null) bad(`${k.key} on ${k.node}`);' "$O"

rs --db "$DB" --json node add alpha
cp "$O" "$TMP/c-add.json"
jscheck "node add --json: {node, operation} (id 2, add_node, subject alpha, the 3 unplaced keys moved from null)" '
    const j = J(A[0]);
    L.shape(j, { node: "object", operation: "object" }, "answer", bad);
    L.shape(j.node, L.NODE, "node", bad);
    L.op(j.operation, "operation", bad);
    const n = j.node, o = j.operation;
    if (n.name !== "alpha" || n.position !== L.pos("alpha") || n.weight !== 1 || n.points !== 1 || n.keys !== 3)
        bad(`node ${JSON.stringify(n)}`);
    if (!L.near(n.key_share, 1) || !L.near(n.arc_share, 1)) bad(`shares ${n.key_share} ${n.arc_share}`);
    if (o.id !== 2 || o.type !== "add_node" || o.subject !== "alpha") bad(`operation ${JSON.stringify(o)}`);
    if (o.keys_moved !== 3 || L.mf(o.moved_from) !== L.mf([{ node: null, keys: 3 }]))
        bad(`keys_moved ${o.keys_moved}, moved_from ${JSON.stringify(o.moved_from)}`);' "$TMP/c-add.json"
rs --db "$DB" --json key ls
placement_ok "after the first node, the unplaced keys are on it" "$O" '[["alpha",1]]' 1

# --db and --json anywhere on the line.
rs --json --db "$DB" node add bravo
b1=$RC
rs node add charlie --db "$DB" --json
b2=$RC
rs node --json add delta --weight 2 --db "$DB"
b3=$RC
expect_eq "options before, after and between the command words: exit 0 0 0" "0 0 0" "$b1 $b2 $b3"
jscheck "node add ... --db DB --json (options last) prints the node add JSON" '
    const j = J(A[0]);
    if (!j.node || j.node.name !== "delta" || j.node.weight !== 2 || j.node.points !== 2) bad(JSON.stringify(j).slice(0, 300));
    L.op(j.operation, "operation", bad);' "$O"
"$BIN" --db "$DB" --json node ls >"$TMP/ls1" 2>&1
"$BIN" node ls --db "$DB" --json >"$TMP/ls2" 2>&1
"$BIN" --json node ls --db "$DB" >"$TMP/ls4" 2>&1
if cmp -s "$TMP/ls1" "$TMP/ls2" && cmp -s "$TMP/ls1" "$TMP/ls4" && grep -q '"nodes"' "$TMP/ls1"; then pass; else
    fail "node ls --json gives the same output wherever --db and --json stand" \
        "$(head -c 300 "$TMP/ls1")" "$(head -c 300 "$TMP/ls2")" "$(head -c 300 "$TMP/ls4")"; fi

# key add: one key, several keys (duplicates skipped and counted).
rs --db "$DB" --json key add solo
cp "$O" "$TMP/c-k1.json"
jscheck "key add KEY --json: {key: {key, position, node}, operation insert_keys, subject the key}" '
    const j = J(A[0]), pts = L.points([["alpha", 1], ["bravo", 1], ["charlie", 1], ["delta", 2]], 1);
    L.shape(j.key, L.KEY, "key", bad);
    L.op(j.operation, "operation", bad);
    if (j.key.key !== "solo" || j.key.position !== L.pos("solo") || j.key.node !== L.owner(pts, L.pos("solo")))
        bad(`key ${JSON.stringify(j.key)}`);
    if (j.operation.type !== "insert_keys" || j.operation.subject !== "solo" || j.operation.keys_moved !== 0)
        bad(`operation ${JSON.stringify(j.operation)}`);' "$TMP/c-k1.json"
rs --db "$DB" --json key add solo m1 m2 m1 m3
cp "$O" "$TMP/c-k2.json"
jscheck "key add several --json: {inserted 3, skipped 2, operation insert_keys}" '
    const j = J(A[0]);
    L.shape(j, { inserted: "int", skipped: "int", operation: "object" }, "answer", bad);
    L.op(j.operation, "operation", bad);
    if (j.inserted !== 3 || j.skipped !== 2) bad(`inserted ${j.inserted}, skipped ${j.skipped}`);
    if (j.operation.type !== "insert_keys") bad(`type ${j.operation.type}`);' "$TMP/c-k2.json"
rs --db "$DB" --json key ls
jscheck "key ls after key add: k1 k2 k3 solo m1 m2 m3, each once" '
    const names = J(A[0]).keys.map((k) => k.key).sort();
    if (JSON.stringify(names) !== JSON.stringify(["k1", "k2", "k3", "m1", "m2", "m3", "solo"])) bad(names.join(" "));' "$O"

# key gen with defaults, --prefix and --start.
rs --db "$DB" --json key gen 5
cp "$O" "$TMP/c-g1.json"
jscheck "key gen 5 --json: {inserted 5, skipped 0, operation insert_keys}" '
    const j = J(A[0]);
    L.shape(j, { inserted: "int", skipped: "int", operation: "object" }, "answer", bad);
    L.op(j.operation, "operation", bad);
    if (j.inserted !== 5 || j.skipped !== 0 || j.operation.type !== "insert_keys") bad(JSON.stringify(j));' "$TMP/c-g1.json"
rs --db "$DB" --json key gen 4 --prefix "u/" --start 98
rs --db "$DB" --json key gen 7 --start 3
cp "$O" "$TMP/c-g3.json"
jscheck "key gen 7 --start 3 after key gen 5: key-5..key-9 new, key-3 key-4 skipped" '
    const j = J(A[0]);
    if (j.inserted !== 5 || j.skipped !== 2) bad(`inserted ${j.inserted}, skipped ${j.skipped}`);' "$TMP/c-g3.json"
rs --db "$DB" --json key ls
cp "$O" "$TMP/c-ls.json"
jscheck "key gen: exactly key-0..key-9 and u/98..u/101 were generated" '
    const names = new Set(J(A[0]).keys.map((k) => k.key));
    const want = [...Array(10).keys()].map((i) => `key-${i}`).concat(["u/98", "u/99", "u/100", "u/101"]);
    for (const w of want) if (!names.has(w)) bad(`missing ${w}`);
    const extra = [...names].filter((n) => /^(key-|u\/)/.test(n) && !want.includes(n));
    if (extra.length) bad(`unexpected ${extra.join(" ")}`);
    if (names.size !== 7 + want.length) bad(`${names.size} keys in all, expected ${7 + want.length}`);' "$TMP/c-ls.json"
NODESC='[["alpha",1],["bravo",1],["charlie",1],["delta",2]]'
placement_ok "key ls: owners match after generating" "$TMP/c-ls.json" "$NODESC" 1

# key ls --node N
for n in alpha delta; do
    rs --db "$DB" --json key ls --node "$n"
    cp "$O" "$TMP/c-ln.json"
    jscheck "key ls --node $n: exactly the keys of $n, in order" '
        const all = J(A[1]).keys.filter((k) => k.node === A[2]), j = J(A[0]);
        if (j.total !== all.length) bad(`total ${j.total}, expected ${all.length}`);
        if (JSON.stringify(j.keys) !== JSON.stringify(all)) bad(`keys ${j.keys.map((k) => k.key)}, expected ${all.map((k) => k.key)}`);
        if (!all.length && A[2] === "alpha") bad("alpha has no key: the filter is not exercised");' \
        "$TMP/c-ln.json" "$TMP/c-ls.json" "$n"
done

# node ls: order, counts and shares.
rs --db "$DB" --json node ls
cp "$O" "$TMP/c-nodes.json"
jscheck "node ls --json: ordered by position; keys, key_share and arc_share agree with key ls and the ring" '
    const nodes = J(A[0]).nodes, keys = J(A[1]).keys, pts = L.points(JSON.parse(A[2]), 1), arcs = L.arcs(pts);
    if (nodes.length !== 4) bad(`${nodes.length} nodes`);
    for (let i = 1; i < nodes.length; i++) if (nodes[i - 1].position > nodes[i].position) bad("not ordered by position");
    for (const n of nodes) {
        L.shape(n, L.NODE, `node ${n.name}`, bad);
        const c = keys.filter((k) => k.node === n.name).length;
        if (n.keys !== c) bad(`${n.name}: keys ${n.keys}, key ls says ${c}`);
        if (!L.near(n.key_share, c / keys.length)) bad(`${n.name}: key_share ${n.key_share}, expected ${c / keys.length}`);
        if (!L.near(n.arc_share, arcs[n.name])) bad(`${n.name}: arc_share ${n.arc_share}, expected ${arcs[n.name]}`);
    }' "$TMP/c-nodes.json" "$TMP/c-ls.json" "$NODESC"

# stats, recomputed from the per-node counts.
rs --db "$DB" --json stats
cp "$O" "$TMP/c-stats.json"
jscheck "stats --json: population stddev, cv, min, max, max_over_mean recomputed from per_node" '
    const s = J(A[0]), keys = J(A[1]).keys, arcs = L.arcs(L.points(JSON.parse(A[2]), 1));
    L.shape(s, { nodes: "int", keys: "int", mean: "number", stddev: "number", cv: "number", min: "int",
        max: "int", max_over_mean: "number", per_node: "array" }, "stats", bad);
    const c = s.per_node.map((p) => p.keys), n = c.length, sum = c.reduce((a, b) => a + b, 0);
    const mean = sum / n, sd = Math.sqrt(c.reduce((a, x) => a + (x - mean) ** 2, 0) / n);
    if (s.nodes !== 4 || n !== 4) bad(`nodes ${s.nodes}, per_node ${n}`);
    if (s.keys !== keys.length || sum !== keys.length) bad(`keys ${s.keys}, per_node sum ${sum}, key ls ${keys.length}`);
    if (!L.near(s.mean, mean)) bad(`mean ${s.mean}, expected ${mean}`);
    if (!L.near(s.stddev, sd)) bad(`stddev ${s.stddev}, expected population ${sd} (sample would be ${Math.sqrt(c.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1))})`);
    // docs/api.md v4: against fair shares (weight over the total weight, every node up)
    const W = s.per_node.reduce((a, p) => a + p.weight, 0);
    const lof = s.per_node.map((p) => p.keys / sum / (p.weight / W));
    const cv = Math.sqrt(s.per_node.reduce((a, p, i) => a + (p.weight / W) * (lof[i] - 1) ** 2, 0));
    if (!L.near(s.cv, cv)) bad(`cv ${s.cv}, expected ${cv}`);
    if (s.min !== Math.min(...c) || s.max !== Math.max(...c)) bad(`min ${s.min} max ${s.max}, expected ${Math.min(...c)} ${Math.max(...c)}`);
    if (!L.near(s.max_over_mean, Math.max(...lof))) bad(`max_over_mean ${s.max_over_mean}, expected ${Math.max(...lof)}`);
    for (const p of s.per_node) {
        L.shape(p, { name: "string", keys: "int", key_share: "number", arc_share: "number" }, "per_node", bad);
        const k = keys.filter((x) => x.node === p.name).length;
        if (p.keys !== k) bad(`${p.name}: ${p.keys} keys, key ls says ${k}`);
        if (!L.near(p.key_share, k / keys.length)) bad(`${p.name}: key_share ${p.key_share}`);
        if (!L.near(p.arc_share, arcs[p.name])) bad(`${p.name}: arc_share ${p.arc_share}, expected ${arcs[p.name]}`);
    }
    if (sd === 0) bad("all nodes have the same count: stddev is not exercised");' \
    "$TMP/c-stats.json" "$TMP/c-ls.json" "$NODESC"

# key rm: one and several; node rm.
rs --db "$DB" --json key rm solo
cp "$O" "$TMP/c-rm1.json"
jscheck "key rm KEY --json: {operation delete_keys, subject the key, 0 moved}" '
    const j = J(A[0]);
    L.op(j.operation, "operation", bad);
    if (j.operation.type !== "delete_keys" || j.operation.subject !== "solo" || j.operation.keys_moved !== 0)
        bad(JSON.stringify(j.operation));' "$TMP/c-rm1.json"
rs --db "$DB" --json key rm m1 m2
jscheck "key rm K1 K2 --json: {operation delete_keys}" '
    const j = J(A[0]);
    L.op(j.operation, "operation", bad);
    if (j.operation.type !== "delete_keys") bad(JSON.stringify(j.operation));' "$O"
rs --db "$DB" --json key ls
jscheck "key rm removed solo, m1, m2 and nothing else" '
    const before = J(A[1]).keys.map((k) => k.key).filter((k) => !["solo", "m1", "m2"].includes(k));
    const after = J(A[0]).keys.map((k) => k.key);
    if (JSON.stringify(after.sort()) !== JSON.stringify(before.sort())) bad(`left: ${after}`);' "$O" "$TMP/c-ls.json"
rs --db "$DB" --json node rm charlie
cp "$O" "$TMP/c-nrm.json"
jscheck "node rm --json: {operation remove_node, subject charlie, its keys moved from charlie}" '
    const j = J(A[0]), had = J(A[1]).keys.filter((k) => k.node === "charlie" && !["solo", "m1", "m2"].includes(k.key)).length;
    L.op(j.operation, "operation", bad);
    const o = j.operation;
    if (o.type !== "remove_node" || o.subject !== "charlie") bad(JSON.stringify(o));
    if (o.keys_moved !== had) bad(`keys_moved ${o.keys_moved}, charlie had ${had}`);
    if (had && L.mf(o.moved_from) !== L.mf([{ node: "charlie", keys: had }])) bad(`moved_from ${JSON.stringify(o.moved_from)}`);' \
    "$TMP/c-nrm.json" "$TMP/c-ls.json"
rs --db "$DB" --json key ls
placement_ok "after node rm charlie, owners match the three left" "$O" '[["alpha",1],["bravo",1],["delta",2]]' 1

# config change
rs --db "$DB" --json config --points 4
cp "$O" "$TMP/c-cfg.json"
jscheck "config --points 4 --json: {config {algorithm ring, points_per_node 4}, operation configure}" '
    const j = J(A[0]);
    L.shape(j, { config: "object", operation: "object" }, "answer", bad);
    L.op(j.operation, "operation", bad);
    if (j.config.algorithm !== "ring" || j.config.points_per_node !== 4) bad(`config ${JSON.stringify(j.config)}`);
    if (j.operation.type !== "configure") bad(`type ${j.operation.type}`);' "$TMP/c-cfg.json"
rs --db "$DB" --json config
jscheck "config --json shows the change" '
    const j = J(A[0]); if (j.algorithm !== "ring" || j.points_per_node !== 4) bad(JSON.stringify(j));' "$O"
rs --db "$DB" --json key ls
placement_ok "after config --points 4, owners match" "$O" '[["alpha",1],["bravo",1],["delta",2]]' 4

# log
rs --db "$DB" --json log
cp "$O" "$TMP/c-log.json"
jscheck "log --json: every operation, ids 1..14 in order, types in the order they were made" '
    const ops = J(A[0]).operations;
    ops.forEach((o, i) => { L.op(o, `operations[${i}]`, bad); if (o.id !== i + 1) bad(`operations[${i}].id = ${o.id}`); });
    const want = ["insert_keys", "add_node", "add_node", "add_node", "add_node", "insert_keys", "insert_keys",
        "insert_keys", "insert_keys", "insert_keys", "delete_keys", "delete_keys", "remove_node", "configure"];
    const got = ops.map((o) => o.type);
    if (JSON.stringify(got) !== JSON.stringify(want)) bad(`types ${got.join(",")}\n expected ${want.join(",")}`);
    const last = J(A[1]).operation;
    if (JSON.stringify(ops[ops.length - 1]) !== JSON.stringify(last)) bad("the last logged operation differs from what config printed");' \
    "$TMP/c-log.json" "$TMP/c-cfg.json"

# Output for people: each command exits 0 and says something sensible.
rs --db "$DB" lookup k1
if [ "$RC" -eq 0 ] && grep -q "$(pos_of k1)" "$O"; then pass; else
    fail "lookup (people) shows the position" "$(ctx lookup k1)"; fi
for c in stats log ring config check "key ls" "node ls"; do
    # shellcheck disable=SC2086
    rs --db "$DB" $c
    if [ "$RC" -eq 0 ] && [ -s "$O" ] && [ ! -s "$E" ]; then pass; else
        fail "$c (people) exits 0 with output" "$(ctx "$c")"; fi
done
rs --db "$DB" check
if [ "$RC" -eq 0 ] && grep -qi '^ok' "$O"; then pass; else fail "check prints ok" "$(ctx check)"; fi

# $RINGSIM_DB and the default ./ringsim.db
mkdir -p "$TMP/cwd1" "$TMP/cwd2"
(cd "$TMP/cwd1" && "$BIN" node add here >/dev/null 2>&1)
if [ -f "$TMP/cwd1/ringsim.db" ]; then pass; else fail "without --db and \$RINGSIM_DB, ./ringsim.db is used"; fi
(cd "$TMP/cwd2" && RINGSIM_DB="$TMP/cwd1/env.db" "$BIN" node add viaenv >/dev/null 2>&1)
rs --db "$TMP/cwd1/env.db" --json node ls
got=$(jsval 'return J(A[0]).nodes.map((n) => n.name).join(",")' "$O")
expect_eq "\$RINGSIM_DB names the database" "viaenv" "$got"
if [ ! -e "$TMP/cwd2/ringsim.db" ]; then pass; else fail "with \$RINGSIM_DB set, no ./ringsim.db is made"; fi
(cd "$TMP/cwd2" && RINGSIM_DB="$TMP/cwd1/env.db" "$BIN" --db "$TMP/cwd2/flag.db" node add viaflag >/dev/null 2>&1)
rs --db "$TMP/cwd1/env.db" --json node ls
a=$(jsval 'return J(A[0]).nodes.map((n) => n.name).join(",")' "$O")
rs --db "$TMP/cwd2/flag.db" --json node ls
b=$(jsval 'return J(A[0]).nodes.map((n) => n.name).join(",")' "$O")
expect_eq "--db wins over \$RINGSIM_DB" "viaenv|viaflag" "$a|$b"
got=$(cd "$TMP/cwd1" && "$BIN" --json node ls 2>&1 | tr -d ' \n')
case "$got" in *'"name":"here"'*) pass ;; *) fail "the default ./ringsim.db is read back" "$got" ;; esac

# ===========================================================================
echo "== 4. moves"
# ===========================================================================
DB=$(new_db moves)
for n in n1 n2 n3 n4; do rs --db "$DB" node add $n; done
ok "key gen 3000" --db "$DB" key gen 3000
rs --db "$DB" --json key ls
cp "$O" "$TMP/m0.json"
rs --db "$DB" --json node add n5
cp "$O" "$TMP/m-add.json"
rs --db "$DB" --json key ls
cp "$O" "$TMP/m1.json"
placement_ok "after node add n5: owners match" "$TMP/m1.json" '[["n1",1],["n2",1],["n3",1],["n4",1],["n5",1]]' 1
jscheck "node add n5 moves only keys that now belong to n5; keys_moved and moved_from match the diff" '
    const b = new Map(J(A[0]).keys.map((k) => [k.key, k.node])), a = J(A[1]).keys, op = J(A[2]).operation;
    if (a.length !== b.size) bad(`${a.length} keys after, ${b.size} before`);
    const from = {};
    let moved = 0;
    for (const k of a) {
        if (!b.has(k.key)) { bad(`new key ${k.key}`); continue; }
        if (b.get(k.key) !== k.node) {
            moved++;
            if (k.node !== "n5") bad(`${k.key} moved ${b.get(k.key)} -> ${k.node}, not to n5`);
            from[b.get(k.key)] = (from[b.get(k.key)] || 0) + 1;
        } else if (k.node === "n5") bad(`${k.key} on n5 but did not move`);
    }
    if (moved === 0) bad("nothing moved: the test data does not exercise moves");
    L.op(op, "operation", bad);
    if (op.keys_moved !== moved) bad(`keys_moved ${op.keys_moved}, the diff says ${moved}`);
    const want = Object.entries(from).map(([node, keys]) => ({ node, keys }));
    if (L.mf(op.moved_from) !== L.mf(want)) bad(`moved_from ${JSON.stringify(op.moved_from)}, the diff says ${JSON.stringify(want)}`);' \
    "$TMP/m0.json" "$TMP/m1.json" "$TMP/m-add.json"
rs --db "$DB" --json node rm n5
cp "$O" "$TMP/m-rm.json"
rs --db "$DB" --json key ls
cp "$O" "$TMP/m2.json"
if cmp -s "$TMP/m0.json" "$TMP/m2.json"; then pass; else
    fail "node rm n5 puts every key back where it was before node add n5" \
        "$(diff "$TMP/m0.json" "$TMP/m2.json" | head -n 12)"; fi
jscheck "node rm n5: keys_moved = the keys n5 had, moved_from [{n5, that many}]" '
    const had = J(A[0]).keys.filter((k) => k.node === "n5").length, op = J(A[1]).operation;
    L.op(op, "operation", bad);
    if (op.keys_moved !== had) bad(`keys_moved ${op.keys_moved}, n5 had ${had}`);
    if (L.mf(op.moved_from) !== L.mf([{ node: "n5", keys: had }])) bad(`moved_from ${JSON.stringify(op.moved_from)}`);' \
    "$TMP/m1.json" "$TMP/m-rm.json"
# A configure moves keys as the new layout says, and counts them right.
rs --db "$DB" --json config --points 5
cp "$O" "$TMP/m-cfg.json"
rs --db "$DB" --json key ls
cp "$O" "$TMP/m3.json"
placement_ok "after config --points 5: owners match" "$TMP/m3.json" '[["n1",1],["n2",1],["n3",1],["n4",1]]' 5
jscheck "config --points 5: keys_moved and moved_from match the diff" '
    const b = new Map(J(A[0]).keys.map((k) => [k.key, k.node])), op = J(A[2]).operation, from = {};
    let moved = 0;
    for (const k of J(A[1]).keys) if (b.get(k.key) !== k.node) { moved++; from[b.get(k.key)] = (from[b.get(k.key)] || 0) + 1; }
    if (!moved) bad("nothing moved");
    if (op.keys_moved !== moved) bad(`keys_moved ${op.keys_moved}, the diff says ${moved}`);
    const want = Object.entries(from).map(([node, keys]) => ({ node, keys }));
    if (L.mf(op.moved_from) !== L.mf(want)) bad(`moved_from ${JSON.stringify(op.moved_from)}, expected ${JSON.stringify(want)}`);' \
    "$TMP/m2.json" "$TMP/m3.json" "$TMP/m-cfg.json"
# A weighted node added to a multi-point ring.
rs --db "$DB" --json node add heavy --weight 3
cp "$O" "$TMP/m-heavy.json"
rs --db "$DB" --json key ls
cp "$O" "$TMP/m4.json"
placement_ok "after node add heavy --weight 3 (15 points): owners match" "$TMP/m4.json" \
    '[["n1",1],["n2",1],["n3",1],["n4",1],["heavy",3]]' 5
jscheck "node add heavy: only keys now on heavy moved; counts match" '
    const b = new Map(J(A[0]).keys.map((k) => [k.key, k.node])), op = J(A[2]).operation;
    let moved = 0;
    for (const k of J(A[1]).keys) if (b.get(k.key) !== k.node) { moved++; if (k.node !== "heavy") bad(`${k.key} went to ${k.node}`); }
    if (op.keys_moved !== moved) bad(`keys_moved ${op.keys_moved}, the diff says ${moved}`);
    if (J(A[2]).node.points !== 15) bad(`points ${J(A[2]).node.points}, expected 15`);' \
    "$TMP/m3.json" "$TMP/m4.json" "$TMP/m-heavy.json"

# ===========================================================================
echo "== 5. revert"
# ===========================================================================
DB=$(new_db revert)
snap() { # snap NAME : node ls, key ls, config as JSON files NAME.{n,k,c}
    "$BIN" --db "$DB" --json node ls >"$TMP/$1.n" 2>&1
    "$BIN" --db "$DB" --json key ls >"$TMP/$1.k" 2>&1
    "$BIN" --db "$DB" --json config >"$TMP/$1.c" 2>&1
}
same_as() { # same_as DESC NAME : the current state is the snapshot NAME
    snap now
    local x why=()
    for x in n k c; do
        cmp -s "$TMP/$1.$x" "$TMP/now.$x" || why+=("$(case $x in n) echo "node ls" ;; k) echo "key ls" ;; c) echo config ;; esac) differs:" "$(diff "$TMP/$1.$x" "$TMP/now.$x" | head -n 8)")
    done
    if [ ${#why[@]} -eq 0 ]; then pass; else fail "$2" "${why[@]}"; fi
}
rs --db "$DB" node add a          # 1
rs --db "$DB" node add b          # 2
rs --db "$DB" key gen 400         # 3
snap s3
rs --db "$DB" config --points 3   # 4
rs --db "$DB" node add c --weight 2  # 5
snap s5
rs --db "$DB" key rm key-1 key-2 key-3  # 6
rs --db "$DB" node rm a           # 7
rs --db "$DB" key add extra       # 8
rs --db "$DB" --json revert 3     # 9
cp "$O" "$TMP/r-op.json"
expect_eq "revert 3 exits 0" 0 "$RC"
same_as s3 "revert 3 restores nodes, keys and config (1 point per node) as right after operation 3"
jscheck "revert --json: {operation}, type revert, id 9" '
    const o = J(A[0]).operation; L.op(o, "operation", bad);
    if (o.type !== "revert" || o.id !== 9) bad(JSON.stringify(o));' "$TMP/r-op.json"
rs --db "$DB" --json log
jscheck "log after revert: 9 operations, history kept, the last a revert" '
    const ops = J(A[0]).operations;
    if (ops.length !== 9) bad(`${ops.length} operations`);
    const t = ops.map((o) => o.type).join(",");
    if (t !== "add_node,add_node,insert_keys,configure,add_node,delete_keys,remove_node,insert_keys,revert") bad(t);' "$O"
ok "revert 5" --db "$DB" revert 5  # 10
same_as s5 "revert 5 (after a revert) restores the state of operation 5 (3 points, weight 2)"
rs --db "$DB" --json key ls
placement_ok "after revert 5, owners match a, b, c (weight 2), 3 points" "$O" '[["a",1],["b",1],["c",2]]' 3
ok "check after reverts" --db "$DB" check
rs --db "$DB" --json revert 0    # 11
expect_eq "revert 0 exits 0" 0 "$RC"
rs --db "$DB" --json node ls
a=$(jsval 'return J(A[0])' "$O")
rs --db "$DB" --json key ls
b=$(jsval 'return J(A[0])' "$O")
expect_eq "revert 0 empties nodes and keys" '{"nodes":[]}|{"keys":[],"total":0}' "$a|$b"
rs --db "$DB" --json config
expect_eq "revert 0 restores the configuration of the start (defaults)" \
    '{"algorithm":"ring","params":{"points_per_node":1},"points_per_node":1,"replicas":1}' \
    "$(jsval 'const j = J(A[0]); return { algorithm: j.algorithm, points_per_node: j.points_per_node, params: j.params, replicas: j.replicas }' "$O")"
rs --db "$DB" --json log
expect_eq "log after revert 0 has 11 operations" 11 "$(jsval 'return String(J(A[0]).operations.length)' "$O")"
rs --db "$DB" revert 3             # 12
same_as s3 "revert 3 after revert 0 restores operation 3 again"
rs --db "$DB" check
if [ "$RC" -eq 0 ] && grep -qi '^ok' "$O"; then pass; else fail "check passes and prints ok after all the reverts" "$(ctx check)"; fi

# ===========================================================================
echo "== 6. bad input"
# ===========================================================================
DB=$(new_db bad)
rs --db "$DB" node add dup
rs --db "$DB" node add other
rs --db "$DB" key add dupkey k2 k3
L255=$(printf 'a%.0s' $(seq 255))
L256=${L255}a
U85=$(printf 'ノ%.0s' $(seq 85))     # 255 bytes
U86=${U85}ノ                         # 258 bytes, 86 characters
for what in "node add" "key add" lookup; do
    # shellcheck disable=SC2086
    {
        refused "$what with an empty name" "$DB" $what ""
        refused "$what with a 256-byte name" "$DB" $what "$L256"
        refused "$what with 86 x ノ (258 bytes)" "$DB" $what "$U86"
        refused "$what with a tab" "$DB" $what $'a\tb'
        refused "$what with a newline" "$DB" $what $'a\nb'
        refused "$what with \\x01" "$DB" $what $'a\x01b'
        refused "$what with \\x1f" "$DB" $what $'\x1f'
        refused "$what with \\x7f (DEL)" "$DB" $what $'a\x7f'
        refused "$what with \\xff (invalid UTF-8)" "$DB" $what $'\xff'
        refused "$what with a cut UTF-8 sequence (a\\xe3\\x83)" "$DB" $what $'a\xe3\x83'
        refused "$what with an overlong encoding (\\xc0\\xaf)" "$DB" $what $'\xc0\xaf'
        refused "$what with a UTF-16 surrogate (\\xed\\xa0\\x80)" "$DB" $what $'\xed\xa0\x80'
        refused "$what with a lone continuation byte (\\x80)" "$DB" $what $'\x80'
    }
done
refused "key add several, one with a control character" "$DB" key add fine1 $'bad\x01' fine2
refused "duplicate node" "$DB" node add dup
refused "duplicate single key" "$DB" key add dupkey
refused "node rm unknown" "$DB" node rm nosuch
refused "key rm unknown" "$DB" key rm nosuch
refused "node add --weight abc" "$DB" node add w1 --weight abc
refused "node add --weight 2x" "$DB" node add w1 --weight 2x
refused "node add --weight ''" "$DB" node add w1 --weight ""
refused "node add --weight 0" "$DB" node add w1 --weight 0
refused "node add --weight -1" "$DB" node add w1 --weight -1
refused "node add --weight=-0.5" "$DB" node add w1 --weight=-0.5
refused "node add --weight nan" "$DB" node add w1 --weight nan
refused "node add --weight inf" "$DB" node add w1 --weight inf
refused "key gen 0" "$DB" key gen 0
refused "key gen abc" "$DB" key gen abc
refused "key gen -5" "$DB" key gen -5
refused "key gen 10000001 (over the limit)" "$DB" key gen 10000001
refused "key gen 3 --start x" "$DB" key gen 3 --start x
refused "key gen 3 --prefix with a control character" "$DB" key gen 3 --prefix $'p\x01'
refused "config --points 0" "$DB" config --points 0
refused "config --points x" "$DB" config --points x
refused "config --algorithm nosuch" "$DB" config --algorithm nosuch
refused "revert 999" "$DB" revert 999
refused "revert abc" "$DB" revert abc
refused "revert -1" "$DB" revert -1
# The limit is 255 bytes: 255 is fine, in ASCII and in ノ (3 bytes each).
ok "node add with a 255-byte name" --db "$DB" node add "$L255"
ok "key add with a 255-byte key of 85 x ノ" --db "$DB" key add "$U85"
rs --db "$DB" --json lookup "$U85"
expect_eq "the 255-byte key reads back whole" "$U85|true" "$(jsval 'const j = J(A[0]); return j.key + "|" + j.stored' "$O")"

# Exit 2: wrong usage.
usage_err "unknown command" "$DB" frobnicate
usage_err "no command" "$DB"
usage_err "node without subcommand" "$DB" node
usage_err "key without subcommand" "$DB" key
usage_err "node with an unknown subcommand" "$DB" node frob x
usage_err "unknown option" "$DB" node ls --frob
usage_err "unknown option before the command" "$DB" --frob 1 node ls
usage_err "node add without NAME" "$DB" node add
usage_err "node rm without NAME" "$DB" node rm
usage_err "key add without KEY" "$DB" key add
usage_err "key rm without KEY" "$DB" key rm
usage_err "key gen without COUNT" "$DB" key gen
usage_err "lookup without KEY" "$DB" lookup
usage_err "revert without ID" "$DB" revert
usage_err "--weight without a value" "$DB" node add w2 --weight
usage_err "node add with two names" "$DB" node add w2 w3
rs node ls --db
if [ "$RC" -eq 2 ] && [ -s "$E" ]; then pass; else fail "usage: --db without a value" "$(ctx node ls --db)"; fi

# Files that are not ringsim databases are refused and left alone.
RND=$TMP/db/random.db
head -c 8192 /dev/urandom >"$RND"
sum0=$(sha256sum <"$RND")
for c in "node ls" "node add x" "key gen 5"; do
    # shellcheck disable=SC2086
    rs --db "$RND" $c
    if [ "$RC" -eq 1 ] && one_line_err && [ "$(sha256sum <"$RND")" == "$sum0" ]; then pass; else
        fail "refused: $c on a file of random bytes (exit 1, one line, file unchanged)" "$(ctx --db "$RND" "$c")"; fi
done
if [ "$HAVE_SQLITE" = 1 ]; then
    OTHER=$TMP/db/other.db
    sqlite3 "$OTHER" "CREATE TABLE t(x); INSERT INTO t VALUES (42);"
    sum0=$(sha256sum <"$OTHER")
    dump0=$(sqlite3 "$OTHER" .dump)
    for c in "node ls" "node add x" "key gen 5" "check"; do
        # shellcheck disable=SC2086
        rs --db "$OTHER" $c
        if [ "$RC" -eq 1 ] && one_line_err && [ "$(sha256sum <"$OTHER")" == "$sum0" ] &&
            [ "$(sqlite3 "$OTHER" .dump)" == "$dump0" ]; then pass; else
            fail "refused: $c on an SQLite database of another program (exit 1, one line, unchanged)" \
                "$(ctx --db "$OTHER" "$c")" "$(sqlite3 "$OTHER" .dump | head -n 5)"; fi
    done
else
    note "no sqlite3 shell: skipped the checks on an SQLite database of another program"
fi

# A read-only database.  Root ignores file modes, so as root the command runs
# as "nobody" (setpriv) in a folder nobody may write to, with a 444 file owned
# by root: only the file is read-only, as for an ordinary user.
ROD=$TMP/ro
mkdir -p "$ROD"
RODB=$ROD/ro.db
rs --db "$RODB" node add r1
rs --db "$RODB" key gen 20
chmod 444 "$RODB"
AS=()
if [ "$(id -u)" -eq 0 ]; then
    if command -v setpriv >/dev/null && chmod 755 "$TMP" && chown 65534:65534 "$ROD" &&
        setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" help >/dev/null 2>&1; then
        AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    else
        AS=(skip)
    fi
fi
if [ "${AS[0]:-}" = skip ]; then
    note "running as root and cannot run as another user (setpriv): skipped the read-only database checks"
else
    for c in "node add r2" "key add newkey" "key gen 5" "node rm r1" "config --points 2" "revert 0"; do
        before=$(fingerprint "$RODB")
        # shellcheck disable=SC2086
        "${AS[@]}" "$BIN" --db "$RODB" $c >"$O" 2>"$E" </dev/null
        RC=$?
        after=$(fingerprint "$RODB")
        if [ "$RC" -eq 1 ] && one_line_err && [ "$before" == "$after" ]; then pass; else
            fail "refused: $c on a read-only (444) database${AS:+ (as nobody)} (exit 1, one line, unchanged)" \
                "$(ctx --db "$RODB" "$c")" "$([ "$before" == "$after" ] || echo "the database changed")"; fi
    done
fi
chmod 644 "$RODB"

# A locked database: another process holds a write transaction.
if [ "$HAVE_SQLITE" = 1 ]; then
    LDB=$(new_db locked)
    rs --db "$LDB" node add l1
    rs --db "$LDB" key gen 50
    before=$(fingerprint "$LDB")
    mkfifo "$TMP/lockfifo"
    sqlite3 "$LDB" <"$TMP/lockfifo" >"$TMP/lock.out" 2>&1 &
    LOCKPID=$!
    exec 7>"$TMP/lockfifo"
    echo "BEGIN IMMEDIATE; DELETE FROM keys;" >&7
    held=0
    for _ in $(seq 50); do
        if ! sqlite3 "$LDB" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1; then
            held=1
            break
        fi
        sleep 0.1
    done
    if [ "$held" = 1 ]; then
        # One command only: ringsim waits for the lock (its busy timeout) before
        # it gives up, which takes a while.
        RINGSIM_BUSY_MS=1500 rs --db "$LDB" node add l2
        if [ "$RC" -eq 1 ] && one_line_err; then pass; else
            fail "refused: node add l2 while another process holds the write lock (exit 1, one line)" \
                "$(ctx --db "$LDB" node add l2)"; fi
    else
        note "could not hold a write lock with the sqlite3 shell: skipped the locked-database checks"
    fi
    echo "ROLLBACK;" >&7
    exec 7>&-
    wait "$LOCKPID" 2>/dev/null
    LOCKPID=
    if [ "$held" = 1 ]; then
        expect_eq "the locked database is unchanged once the lock is gone" "$before" "$(fingerprint "$LDB")"
        ok "node add l2 succeeds once the lock is released" --db "$LDB" node add l2
    fi
else
    note "no sqlite3 shell: skipped the locked-database checks"
fi

# ===========================================================================
echo "== 7. check finds a corrupted database"
# ===========================================================================
if [ "$HAVE_SQLITE" = 1 ]; then
    DB=$(new_db corrupt)
    rs --db "$DB" node add alpha
    rs --db "$DB" node add bravo
    rs --db "$DB" node add charlie
    rs --db "$DB" key gen 100
    ok "check on a sound database" --db "$DB" check
    # Pick a key and a node that is not its owner.
    rs --db "$DB" --json key ls
    read -r victim wrong < <(jsval '
        const k = J(A[0]).keys.find((k) => k.node === "alpha");
        return k.key + " " + (k.node === "alpha" ? "bravo" : "alpha");' "$O")
    sqlite3 "$DB" "UPDATE keys SET node = (SELECT id FROM nodes WHERE name = '$wrong') WHERE key = '$victim';"
    rs --db "$DB" --json key ls
    shown=$(jsval 'return J(A[0]).keys.find((k) => k.key === A[1]).node' "$O" "$victim")
    if [ "$shown" = "$wrong" ]; then
        rs --db "$DB" check
        if [ "$RC" -eq 1 ] && grep -qwF -- "$victim" "$O" "$E"; then pass; else
            fail "check exits 1 and names the key $victim put on $wrong by hand" "$(ctx check)"; fi
        rs --db "$DB" --json check
        if [ "$RC" -eq 1 ]; then pass; else fail "check --json exits 1 on the corrupted database" "$(ctx --json check)"; fi
    else
        fail "corrupting the database by hand (UPDATE keys SET node) took effect" "key $victim shows on $shown, not $wrong"
    fi
    DB2=$(new_db corrupt2)
    rs --db "$DB2" node add alpha
    rs --db "$DB2" key gen 30
    sqlite3 "$DB2" "DELETE FROM keys WHERE key = 'key-7';"
    rs --db "$DB2" check
    if [ "$RC" -eq 1 ]; then pass; else
        fail "check exits 1 when a key was deleted behind its back (the log replays to another state)" "$(ctx check)"; fi
else
    note "no sqlite3 shell: skipped the corrupted-database checks"
fi

# ===========================================================================
echo "== 8. no progress output when stderr is not a terminal"
# ===========================================================================
DB=$(new_db progress)
rs --db "$DB" node add p1
rs --db "$DB" key gen 100000
if [ "$RC" -eq 0 ] && [ ! -s "$E" ]; then pass; else
    fail "key gen 100000 with stderr to a file writes nothing on stderr" "$(ctx key gen 100000)" \
        "stderr bytes: $(wc -c <"$E")"; fi
rs --db "$DB" --json stats
expect_eq "key gen 100000 stored 100000 keys" 100000 "$(jsval 'return String(J(A[0]).keys)' "$O")"
rs --db "$DB" check
if [ "$RC" -eq 0 ] && [ ! -s "$E" ] && grep -qi '^ok' "$O"; then pass; else
    fail "check on 100000 keys: ok, nothing on stderr" "$(ctx check)"; fi

# ===========================================================================
echo "== 9. version 2: algorithms, parameters, replicas, tokens, preview, compare"
# ===========================================================================
DB=$(new_db v2)
ok "algorithms (table)" algorithms
if grep -q '^ketama ' "$O" && grep -q '^maglev ' "$O" && grep -q '^cassandra ' "$O"; then pass; else
    fail "algorithms lists ketama, maglev and cassandra" "$(ctx algorithms)"; fi
ok "algorithms --json" --json algorithms
"$BIN" algorithms >"$TMP/alg.txt" 2>/dev/null
"$BIN" --json algorithms >"$TMP/alg.json" 2>/dev/null
expect_eq "algorithms table and --json name the same algorithms" \
    "$(awk 'NR > 1 { print $1 }' "$TMP/alg.txt" | sort | tr '\n' ' ')" \
    "$(jsval 'return J(A[0]).algorithms.map((a) => a.name).sort().join(" ") + " "' "$TMP/alg.json")"
for n in 10.0.0.1:11211 10.0.0.2:11211 10.0.0.3:11211 10.0.0.4; do rs --db "$DB" node add "$n"; done
rs --db "$DB" key gen 2000
ok "config --algorithm ketama" --db "$DB" config --algorithm ketama
grep -q 'configure' "$O" || fail "config --algorithm prints the operation" "$(ctx config)"
rs --db "$DB" --json config
expect_eq "config --json names ketama, no params" '"ketama"|{}' \
    "$(jsval 'return JSON.stringify(J(A[0]).algorithm) + "|" + JSON.stringify(J(A[0]).params)' "$O")"
ok "config --algorithm maglev --param table_size=1009" --db "$DB" config --algorithm maglev --param table_size=1009
rs --db "$DB" --json config
expect_eq "maglev's table_size set" 1009 "$(jsval 'return String(J(A[0]).params.table_size)' "$O")"
refused "maglev has no replicas" "$DB" config --replicas 2
grep -q 'no replicas' "$E" || fail "the refusal says maglev has no replicas" "$(cat "$E")"
refused "table_size must be prime" "$DB" config --param table_size=1000
refused "unknown parameter" "$DB" config --param bogus=1
usage_err "--param without =" "$DB" config --param table_size
refused "replicas 0" "$DB" config --algorithm ring --replicas 0
ok "config --algorithm ring --points 16 --replicas 3" --db "$DB" config --algorithm ring --points 16 --replicas 3
rs --db "$DB" --json lookup key-1
expect_eq "lookup: three distinct replicas, owner first" "3|true|true" \
    "$(jsval 'const j = J(A[0]); return [j.replicas.length, new Set(j.replicas).size === 3, j.replicas[0] === j.node].join("|")' "$O")"
rs --db "$DB" --json key ls
expect_eq "key ls --json: every key has three replicas" "true" \
    "$(jsval 'return String(J(A[0]).keys.every((k) => k.replicas.length === 3 && k.replicas[0] === k.node))' "$O")"
rs --db "$DB" --json node ls
expect_eq "node ls --json: owns add up to 3" "3.00" "$(jsval 'return J(A[0]).nodes.reduce((t, n) => t + n.owns, 0).toFixed(2)' "$O")"
# preview: nothing recorded, and the operation then does what it said
rs --db "$DB" --json log
before_ops=$(jsval 'return String(J(A[0]).operations.length)' "$O")
ok "preview node add" --db "$DB" --json preview node add 10.0.0.9:11211
cp "$O" "$TMP/preview.json"
rs --db "$DB" --json log
expect_eq "preview recorded nothing" "$before_ops" "$(jsval 'return String(J(A[0]).operations.length)' "$O")"
ok "node add after preview" --db "$DB" --json node add 10.0.0.9:11211
expect_eq "node add moved what the preview said (keys and replica copies)" \
    "$(jsval 'const j = J(A[0]); return j.keys_moved + "/" + j.replica_moves' "$TMP/preview.json")" \
    "$(jsval 'const j = J(A[0]).operation; return j.keys_moved + "/" + j.replica_moves' "$O")"
ok "preview config (text)" --db "$DB" preview config --algorithm rendezvous
if grep -q '^would move' "$O" && grep -q 'nothing was changed' "$O"; then pass; else
    fail "preview prints what would move" "$(ctx preview)"; fi
usage_err "preview node without add/rm" "$DB" preview node drop x
ok "compare" --db "$DB" compare --algorithms ring,jump,maglev
if grep -q '^\* ring' "$O" && grep -q '^  maglev' "$O"; then pass; else fail "compare marks the current algorithm" "$(ctx compare)"; fi
ok "compare --json" --db "$DB" --json compare
expect_eq "compare --json: every algorithm, keys counted" "true" \
    "$(jsval 'const j = J(A[0]); return String(j.results.length >= 9 && j.keys === 2000)' "$O")"
# cassandra with explicit tokens
DB=$(new_db cassandra)
ok "config --algorithm cassandra" --db "$DB" config --algorithm cassandra
ok "node add --tokens" --db "$DB" node add c1 --tokens=-9223372036854775808,0
ok "node add --tokens (one)" --db "$DB" node add c2 --tokens 4611686018427387904
refused "a token another node holds" "$DB" node add c3 --tokens 0
refused "--tokens not numbers" "$DB" node add c3 --tokens 1,x
rs --db "$DB" --json node ls
expect_eq "tokens as signed decimal strings in ring order" '["-9223372036854775808","0"]|["4611686018427387904"]' \
    "$(jsval 'const n = J(A[0]).nodes; const t = (x) => JSON.stringify(n.find((m) => m.name === x).tokens); return t("c1") + "|" + t("c2")' "$O")"
rs --db "$DB" key gen 100
ok "check with explicit tokens" --db "$DB" check
ok "revert to before the tokens keeps check happy" --db "$DB" revert 2
ok "check after revert" --db "$DB" check

# ===========================================================================
echo "== 10. issue 13: weights in place, help of groups, lookup, parameters, key gen, names"
# ===========================================================================
# node weight NAME W: one set_weight operation, keys move as the ring says.
DB=$(new_db weight)
rs --db "$DB" config --points 8
for n in wa wb wc; do rs --db "$DB" node add "$n"; done
rs --db "$DB" key gen 2000
"$BIN" --db "$DB" --json key ls >"$TMP/w_before.json" 2>/dev/null
ok "node weight wb 3" --db "$DB" node weight wb 3
if grep -q '^operation [0-9]* set_weight: wb; [0-9]* keys moved' "$O"; then pass; else
    fail "node weight prints the set_weight operation" "$(ctx node weight wb 3)"; fi
"$BIN" --db "$DB" --json key ls >"$TMP/w_after.json" 2>/dev/null
"$BIN" --db "$DB" --json log >"$TMP/w_log.json" 2>/dev/null
jscheck "node weight: every key where the ring with weight 3 says; keys_moved counts the changes" '
    const pts = L.points([["wa", 1], ["wb", 3], ["wc", 1]], 8);
    const before = Object.fromEntries(J(A[0]).keys.map((k) => [k.key, k.node]));
    let moved = 0;
    for (const k of J(A[1]).keys) {
        if (k.node !== L.owner(pts, L.pos(k.key))) bad(`${k.key} on ${k.node}`);
        if (before[k.key] !== k.node) moved++;
    }
    const ops = J(A[2]).operations, o = ops[ops.length - 1];
    L.op(o, "set_weight", bad);
    if (o.type !== "set_weight" || o.subject !== "wb") bad(`last operation ${o.type} ${o.subject}`);
    if (o.keys_moved !== moved || moved === 0) bad(`keys_moved ${o.keys_moved}, moved ${moved}`);
' "$TMP/w_before.json" "$TMP/w_after.json" "$TMP/w_log.json"
rs --db "$DB" node ls
if head -n 1 "$O" | grep -q 'Node.*Position.*Weight.*Points.*Keys' &&
    grep -q '^wb .* 3 .* 24 ' "$O"; then pass; else
    fail "node ls has a weight column: wb 3 with 24 points" "$(ctx node ls)"; fi
rs --db "$DB" --json log
ops_before=$(jsval 'return String(J(A[0]).operations.length)' "$O")
ok "node weight with the weight it has" --db "$DB" node weight wb 3
grep -q 'nothing changed' "$O" || fail "the same weight says nothing changed" "$(ctx node weight wb 3)"
rs --db "$DB" --json node weight wb 3
expect_eq "the same weight --json: \"operation\": null" "null|3" \
    "$(jsval 'const j = J(A[0]); return JSON.stringify(j.operation) + "|" + j.node.weight' "$O")"
rs --db "$DB" --json log
expect_eq "the same weight records nothing" "$ops_before" "$(jsval 'return String(J(A[0]).operations.length)' "$O")"
for w in 0x10 inf nan +2 " 2" "2 " 0 -1 1e400 2x ""; do
    refused "node weight wb '$w'" "$DB" node weight wb "$w"
done
for w in 0x10 inf nan +2 " 2" 1e400; do
    refused "node add --weight '$w'" "$DB" node add wz --weight "$w"
done
refused "node weight of a node that does not exist" "$DB" node weight nobody 2
usage_err "node weight without W" "$DB" node weight wb
ok "check after node weight" --db "$DB" check
"$BIN" --db "$DB" export --scenario >"$TMP/w.ringsim" 2>/dev/null
grep -q '^node weight wb 3$' "$TMP/w.ringsim" || fail "export --scenario writes node weight wb 3" "$(cat "$TMP/w.ringsim")"
DB2=$(new_db weight2)
ok "the exported scenario runs" --db "$DB2" run "$TMP/w.ringsim"
"$BIN" --db "$DB2" --json key ls >"$TMP/w_again.json" 2>/dev/null
expect_eq "the exported scenario rebuilds the same keys and owners" "$(cat "$TMP/w_after.json")" "$(cat "$TMP/w_again.json")"
ok "revert to before node weight" --db "$DB" revert 5
"$BIN" --db "$DB" --json key ls >"$TMP/w_reverted.json" 2>/dev/null
expect_eq "revert gives the owners of before" "$(cat "$TMP/w_before.json")" "$(cat "$TMP/w_reverted.json")"
ok "check after revert" --db "$DB" check


# ===========================================================================
echo "== 10b. config: a parameter the algorithm does not have; nothing changed"
DB=$(new_db params)
ok "node add for params" --db "$DB" node add alpha
refused "config --algorithm ring --param probes=3 (probes is multiprobe's)" "$DB" config --algorithm ring --param probes=3
if grep -q 'probes' "$E" && grep -q 'ring' "$E"; then pass; else fail "the refusal names the parameter and the algorithm" "$(cat "$E")"; fi
refused "config --algorithm jump --param num_tokens=4 (jump takes none)" "$DB" config --algorithm jump --param num_tokens=4
ok "config --algorithm multiprobe --param probes=3" --db "$DB" config --algorithm multiprobe --param probes=3
rs --db "$DB" --json log
expect_eq "one configure recorded" 2 "$(jsval 'return String(J(A[0]).operations.length)' "$O")"
before=$(fingerprint "$DB")
ok "config that changes nothing succeeds" --db "$DB" config --algorithm multiprobe --param probes=3
if grep -qi 'nothing changed' "$O"; then pass; else fail "a configure that changes nothing says so" "$(ctx config)"; fi
expect_eq "a configure that changes nothing records nothing" "$before" "$(fingerprint "$DB")"
rs --db "$DB" --json config --algorithm multiprobe
expect_eq "--json: \"operation\": null" null "$(jsval 'return String(J(A[0]).operation)' "$O")"
expect_eq "still one configure in the log" "$before" "$(fingerprint "$DB")"
# ===========================================================================
echo "== 10c. key gen COUNT adds COUNT keys: it starts after the last generated"
DB=$(new_db gen)
ok "key gen 10" --db "$DB" key gen 10
ok "key rm key-3" --db "$DB" key rm key-3
rs --db "$DB" --json key gen 10
expect_eq "generate 10 after a delete: 10 inserted, 0 skipped" "10 0" \
    "$(jsval 'const j = J(A[0]); return j.inserted + " " + j.skipped' "$O")"
rs --db "$DB" --json key ls
expect_eq "the keys are key-0..key-19 but key-3" \
    "$(for i in $(seq 0 19); do [ "$i" = 3 ] || echo "key-$i"; done | sort | paste -sd ' ')" \
    "$(jsval 'return J(A[0]).keys.map((k) => k.key).sort().join(" ")' "$O")"
rs --db "$DB" --json key gen 5 --start 2
expect_eq "--start 2 as given: key-3 inserted, key-2,4,5,6 skipped" "1 4" \
    "$(jsval 'const j = J(A[0]); return j.inserted + " " + j.skipped' "$O")"
ok "key gen 3 --prefix p-" --db "$DB" key gen 3 --prefix p-
rs --db "$DB" --json key gen 2 --prefix p-
expect_eq "each prefix counts on its own: p-3, p-4" "p-3 p-4" \
    "$(jsval 'return J(A[0]).operation.subject.replace(/^2 keys /, "").replace(" … ", " ")' "$O")"
ok "check after key gen" --db "$DB" check

# ===========================================================================
echo "== 10d. node names people can read"
DB=$(new_db readable)
ok "node add alpha (readable)" --db "$DB" node add alpha
refused "a node named with U+202E" "$DB" node add "$(printf 'li\u202eve')"
refused "a node named U+200B" "$DB" node add "$(printf '\u200b')"
refused "a node named with three spaces" "$DB" node add "   "
ok "NFC café" --db "$DB" node add "$(printf 'caf\u00e9')"
rs --db "$DB" node add "$(printf 'cafe\u0301')"
if [ "$RC" -eq 0 ] && one_line_err && grep -q 'looks the same as' "$E"; then pass; else
    fail "NFD café is added with one warning line on stderr" "$(ctx node add)"; fi
ok "a node a<U+200B>b" --db "$DB" node add "$(printf 'a\u200bb')"
ok "a key U+200B" --db "$DB" key add "$(printf '\u200b')"
rs --db "$DB" node ls
if grep -q '^a⟨U+200B⟩b ' "$O"; then pass; else fail "node ls shows U+200B as ⟨U+200B⟩" "$(cat "$O")"; fi
rs --db "$DB" key ls
if grep -q '^⟨U+200B⟩ ' "$O"; then pass; else fail "key ls shows the key U+200B as ⟨U+200B⟩" "$(cat "$O")"; fi
rs --db "$DB" --json key ls
expect_eq "--json keeps the key's bytes" "$(printf '\u200b')" "$(jsval 'return J(A[0]).keys[0].key' "$O")"

# ===========================================================================
echo "== 10d2. tables pad names by the columns a terminal shows, not by bytes"
DB=$(new_db widths)
# The names, each as a table shows it and the columns that takes on a
# terminal, worked out by hand from UAX #11: ü, ï, ö, é one column each
# (precomposed, two bytes), 名 and 前 two each (wide, three bytes), 😀 two
# (four bytes), a combining acute accent none (after q, which has no
# precomposed form: the text is in NFC), U+200B shown as the eight columns
# "⟨U+200B⟩" (API.md v3), and the accent after o shown so too, since "ó"
# written as o + U+0301 is not in NFC (docs/api.md, Nodes).
cat >"$TMP/widths.js" <<'JS'
module.exports = [
    ["alpha", "alpha", 5],
    ["\u00fcn\u00ef/c\u00f6d\u00e9", "\u00fcn\u00ef/c\u00f6d\u00e9", 8],
    ["\u540d\u524d", "\u540d\u524d", 4],
    ["e\u{1F600}x", "e\u{1F600}x", 4],
    ["q\u0301k", "q\u0301k", 2],
    ["o\u0301k", "o\u27e8U+0301\u27e9k", 10],
    ["a\u200bb", "a\u27e8U+200B\u27e9b", 10],
];
JS
export W_JS=$TMP/widths.js
mapfile -t W_NAMES < <(node -e 'for (const [n] of require(process.argv[1])) console.log(n)' "$W_JS")
# aligned DESC FILE PREFIX [HEADER]: every line that is PREFIX, a shown name
# and a space (and the line PREFIX HEADER, when given) ends its next field at
# the same column, counted with the widths above (what follows a name is
# ASCII); every name has its line.
aligned() {
    jscheck "$1" '
        const [file, prefix, header] = A;
        const W = require(process.env.W_JS);
        const rows = require("fs").readFileSync(file, "utf8").split("\n");
        const cols = [];
        const end = (line, shown, w) => {
            const m = line.slice(prefix.length + shown.length).match(/^ +\S+/);
            if (!m) bad(`no field after ${JSON.stringify(shown)}: ${JSON.stringify(line)}`);
            else cols.push([w + m[0].length, line]);
        };
        for (const [, shown, w] of W) {
            const line = rows.find((l) => l.startsWith(prefix + shown + " "));
            if (line === undefined) bad(`no line for ${JSON.stringify(shown)}`);
            else end(line, shown, w);
        }
        if (header) {
            const line = rows.find((l) => l.startsWith(prefix + header + " "));
            if (line === undefined) bad(`no header line ${header}`);
            else end(line, header, header.length);
        }
        if (new Set(cols.map((c) => c[0])).size > 1)
            bad("the next field ends at different columns:\n" + cols.map((c) => `${c[0]}: ${c[1]}`).join("\n"));
    ' "$2" "$3" "${4:-}"
}
ok "key gen 200 (widths)" --db "$DB" key gen 200
for n in "${W_NAMES[@]}"; do
    ok "node add (widths)" --db "$DB" node add "$n"
    ok "key add (widths)" --db "$DB" key add "$n"
done
rs --db "$DB" node ls
aligned "node ls: one column for every name, whatever its bytes" "$O" "" Node
rs --db "$DB" key ls
aligned "key ls: keys padded by their columns" "$O" ""
rs --db "$DB" traffic run --requests 1000 --concurrency 2
aligned "traffic run: one column for every name" "$O" "  " Node
# In every column a name is shown as tables show it (API.md v3), not as bytes.
rs --db "$DB" ring
if grep -q '^ *[0-9]*  a⟨U+200B⟩b#0$' "$O"; then pass; else fail "ring shows U+200B as ⟨U+200B⟩" "$(cat "$O")"; fi
rs --db "$DB" key ls --node "$(printf 'a\u200bb')"
if grep -q ' a⟨U+200B⟩b$' "$O" && ! grep -q "$(printf '\u200b')" "$O"; then pass; else
    fail "key ls shows the node U+200B as ⟨U+200B⟩" "$(cat "$O")"; fi
rs --db "$DB" --json log
last=$(jsval 'return String(J(A[0]).operations.filter((o) => o.type === "add_node").pop().id)' "$O")
rs --db "$DB" log "$last"
if grep -q ' -> a⟨U+200B⟩b$' "$O" && ! grep -q "$(printf '\u200b')" "$O"; then pass; else
    fail "log ID shows the node U+200B (subject, moves) as ⟨U+200B⟩" "$(cat "$O")"; fi
printf 'node add "zw\u200bz"\n' >"$TMP/widths.ringsim"
rs --db "$DB" run "$TMP/widths.ringsim"
if grep -q '^   1  node add "zw⟨U+200B⟩z"$' "$O" && grep -q 'add_node: zw⟨U+200B⟩z;' "$O" &&
    ! grep -q "$(printf '\u200b')" "$O"; then pass; else
    fail "run shows the line and the operation's subject with U+200B as ⟨U+200B⟩" "$(cat "$O")"; fi
# The import table: an Envoy cluster with the names as hash keys.
node -e '
    const host = ([n], i) => ({
        endpoint: { address: { socket_address: { address: `10.0.0.${i + 1}`, port_value: 80 } } },
        metadata: { filter_metadata: { "envoy.lb": { hash_key: n } } } });
    console.log(JSON.stringify({ name: "c", type: "STATIC", lb_policy: "RING_HASH",
        load_assignment: { cluster_name: "c", endpoints: [{ lb_endpoints: require(process.argv[1]).map(host) }] } }));
' "$W_JS" >"$TMP/widths.json"
rs --db "$DB" import "$TMP/widths.json"
aligned "import: one column for every name" "$O" "  "

# ===========================================================================
echo "== 10e. lookup for people: hash, coordinate, owner, replicas, steps"
DB=$(new_db lookup)
for n in 10.0.0.1:11211 10.0.0.2:11211 10.0.0.3:11211; do "$BIN" --db "$DB" node add "$n" >/dev/null 2>&1; done
HOSTS_DB=$DB
OSDS_DB=$(new_db lookup-osd) # ceph's nodes are OSDs, osd.N
"$BIN" --db "$OSDS_DB" config --algorithm ceph --replicas 3 >/dev/null 2>&1
for n in osd.0 osd.1 osd.2 osd.3; do "$BIN" --db "$OSDS_DB" node add "$n" >/dev/null 2>&1; done
for a in $("$BIN" algorithms --json | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).algorithms.map((a)=>a.name).join(" ")))'); do
    if [ "$a" = ceph ]; then DB=$OSDS_DB; else DB=$HOSTS_DB; fi
    "$BIN" --db "$DB" config --algorithm "$a" >/dev/null 2>&1 || { fail "config --algorithm $a for lookup" "$a"; continue; }
    "$BIN" --db "$DB" --json lookup user:42 >"$TMP/lk.json" 2>/dev/null
    rs --db "$DB" lookup user:42
    want=$(jsval 'const j = J(A[0]); return ["key hash    " + j.hash, "coordinate  " + (j.coordinate === null ? "(none)" : j.coordinate), "node        " + j.node, "replicas    " + (!j.node_replicas ? j.replicas.join(" ") : j.node_replicas.length ? `${j.node_replicas.join(" ")} (of master ${j.node})` : `(none: master ${j.node} has none)`), "steps:", ...j.trace.map((t) => t.step)].join("\n")' "$TMP/lk.json")
    got=$(grep -E '^(key hash|coordinate|node|replicas|steps:)' "$O" | sed 's/^\(key hash    [^ ]*\) (.*)$/\1/; s/ (wrapped)$//'; sed -n 's/^  \([^ ]*\) .*/\1/p' "$O")
    expect_eq "lookup under $a shows the --json hash, coordinate, owner, replicas and steps" "$want" "$got"
    sha=$(grep -c '^sha256 ' "$O")
    # API.md: only ring and multiprobe place by position(key) (SHA-256)
    case $a in
        ring | multiprobe) expect_eq "lookup under $a shows the SHA-256 position (it plays a part)" 1 "$sha" ;;
        *) expect_eq "lookup under $a shows no SHA-256 position" 0 "$sha" ;;
    esac
done
DB=$HOSTS_DB
rs --db "$DB" config --algorithm ring
rs --db "$DB" lookup user:42
expect_eq "under ring the position is SHA-256's" "position    $(pos_of user:42)" "$(grep '^position ' "$O")"

# ===========================================================================
echo "== 10b. Workloads and the replay: numbers in decimal, usage, down nodes"
# ===========================================================================
DB=$(new_db workload)
for n in a b c; do rs --db "$DB" node add "$n"; done
rs --db "$DB" key gen 200
refused "workload zipf --param s=0x10 (hex is no number here)" "$DB" workload zipf --param s=0x10
refused "workload zipf --param s=inf" "$DB" workload zipf --param s=inf
refused "workload keys with a share over 1" "$DB" workload keys \
    --param 'keys=[{"key": "key-1", "share": 1.000000000001}]'
ok "workload zipf --param s=1.5 --param seed=12345678901234567" --db "$DB" workload zipf \
    --param s=1.5 --param seed=12345678901234567
rs --db "$DB" --json workload
# (read as text: JSON.parse would round it)
expect_eq "the seed past 2^53 is kept to the digit" '"seed": 12345678901234567,' \
    "$(grep -o '"seed": [0-9]*,' "$O")"
# traffic run has defaults (issue 25): --requests 100000 --concurrency 100
rs --db "$DB" --json traffic run --requests 5
jscheck "traffic run without --concurrency: 100 in flight by default" 'const j = J(A[0]); if (j.concurrency !== 100 || j.requests !== 5) bad(JSON.stringify([j.concurrency, j.requests]));' "$O"
rs --db "$DB" --json traffic run --concurrency 5
jscheck "traffic run without --requests: 100,000 by default" 'const j = J(A[0]); if (j.requests !== 100000) bad(String(j.requests));' "$O"
rs --db "$DB" node down b
rs --db "$DB" --json traffic run --requests 20000 --concurrency 4
expect_eq "the replay sends nothing to a down node" "0 0" \
    "$(jsval 'const j = J(A[0]); return j.nodes.find((n) => n.name === "b").handled + " " + j.unserved' "$O")"

# HAProxy's weight 0 (server.c: 0..256): a server with no point, serving
# nothing; the other algorithms refuse it, naming the node.
DB=$(new_db weight0)
rs --db "$DB" config --algorithm haproxy
rs --db "$DB" node add a
ok "haproxy: node add z --weight 0" --db "$DB" node add z --weight 0
rs --db "$DB" key gen 50
rs --db "$DB" --json node ls
expect_eq "the weight-0 server holds no point and no key" "0 0 0" \
    "$(jsval 'const z = J(A[0]).nodes.find((n) => n.name === "z"); return [z.weight, z.points, z.keys].join(" ")' "$O")"
refused "a switch to ketama with a node of weight 0" "$DB" config --algorithm ketama
rs --db "$DB" export --config haproxy
expect_eq "export --config haproxy writes weight 0" "1" "$(grep -c ' z .*weight 0$' "$O")"

# ===========================================================================
echo "== 11. Ctrl-C cancels a long command and rolls it back whole"
# ===========================================================================
# The signal comes while the operation runs (0.4 s after it
# starts; each takes longer, also on a fast machine); the command must
# answer within a few seconds, exit 1
# with "cancelled", and leave the database as it was.
DB=$(new_db cancel)
for n in 1 2 3 4 5 6; do rs --db "$DB" node add "c$n"; done
rs --db "$DB" key gen 300000
# cancel_run SIGNAL DESC ARGS...
cancel_run() {
    local sig=$1 d=$2 before after pid t0 t1 why=()
    shift 2
    before=$(fingerprint "$DB")
    "$BIN" --db "$DB" "$@" >"$O" 2>"$E" </dev/null &
    pid=$!
    sleep "${CANCEL_AFTER:-0.4}"
    t0=$(date +%s%N)
    kill -s "$sig" "$pid"
    wait "$pid"
    RC=$?
    t1=$(date +%s%N)
    after=$(fingerprint "$DB")
    [ "$RC" -eq 1 ] || why+=("exit status $RC, expected 1")
    grep -q "cancelled" "$E" || why+=("stderr does not say cancelled")
    [ $(((t1 - t0) / 1000000)) -lt 5000 ] || why+=("took $(((t1 - t0) / 1000000)) ms to stop")
    [ "$before" == "$after" ] || why+=("the database changed")
    if [ ${#why[@]} -eq 0 ]; then pass; else fail "$sig cancels $d" "${why[@]}" "$(ctx "$@")"; fi
}
cancel_run INT "key gen 3000000" key gen 3000000 --prefix big-
cancel_run TERM "key gen 3000000" key gen 3000000 --prefix big-
# A switch that re-places every key with 1000 probes each (about 2 s here;
# the signal comes 0.4 s in, so that a fast machine still sees it mid-way).
cancel_run INT "config --algorithm multiprobe --param probes=1000 (every key re-placed)" \
    config --algorithm multiprobe --param probes=1000
cancel_run INT "revert 6 (300000 keys go)" revert 6
cancel_run INT "check" check
rs --db "$DB" check
if [ "$RC" -eq 0 ]; then pass; else fail "check passes after the cancelled commands" "$(ctx check)"; fi
# A second Ctrl-C quits at once (130); the unfinished transaction is gone.
"$BIN" --db "$DB" key gen 3000000 --prefix twice- >"$O" 2>"$E" </dev/null &
pid=$!
sleep 1
kill -INT "$pid"
sleep 0.05
kill -INT "$pid" 2>/dev/null
wait "$pid"
RC=$?
if [ "$RC" -eq 130 ] || [ "$RC" -eq 1 ]; then pass; else
    fail "two Ctrl-C: exit 130 (or 1 when the first had already finished)" "$(ctx key gen)"; fi
rs --db "$DB" --json stats
expect_eq "after two Ctrl-C: the keys of before, none of the cancelled generate" 300000 \
    "$(jsval 'return String(J(A[0]).keys)' "$O")"
rs --db "$DB" check
if [ "$RC" -eq 0 ]; then pass; else fail "check passes after a command quit by a second Ctrl-C" "$(ctx check)"; fi

finish
