#!/usr/bin/env bash
# cli_tables_test.sh - the command line's tables for people (issue 25,
# item 14): `log` says which way a set_state went, `key ls` has a header
# and the algorithm's own coordinate column, `node ls` keeps the
# configuration's order, long names are cut by display width in tables
# and whole in --json.
#
#   bash tests/cli_tables_test.sh /path/to/ringsim
#
# Every expected value comes from the --json answers of the same database
# (the API's, checked elsewhere against the contract) or from what the test
# itself did; widths are counted by node's own string-width rule for East
# Asian wide characters.  Ends with "N passed, N failed".
#
# Checks docs/api.md, 'Nodes and keys', 'History', 'Keys from a file, and which
# way a node went'.

# shellcheck disable=SC2016 # JavaScript in single quotes, on purpose
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
setup tables /path/to/ringsim 1 "$@"
need node
export RINGSIM_DB=$TMP/t.db
O=$TMP/out
rs() { "$BIN" "$@" >"$O" 2>"$TMP/err" </dev/null; }

LONG=node-with-a-very-long-name-0123456789-abcdefghij
WIDE=ノードノードノードノードノードノードノード
export LONG WIDE
# Added in an order that is not the order of their positions.
for n in charlie alpha "$LONG" bravo "$WIDE"; do "$BIN" node add "$n" >/dev/null; done
"$BIN" key gen 300 >/dev/null
"$BIN" key add "a-key-that-is-much-longer-than-the-column" >/dev/null

# ---- node ls: the configuration's order for people, by position in JSON ----
rs --json node ls
cp "$O" nodes.json
rs node ls
cp "$O" nodes.txt
check "node ls --json stays ordered by position (GET /api/nodes)" "$(jsrun '
    const n = J(A[0]).nodes;
    for (let i = 1; i < n.length; i++) if (n[i - 1].position > n[i].position) return `not by position: ${n.map((x) => x.name)}`;
    return n.length === 5 ? "ok" : `${n.length} nodes`;' nodes.json)"
check "node ls lists the nodes in the order they were added, names cut to 32 columns with …" "$(jsrun '
    const added = ["charlie", "alpha", process.env.LONG, "bravo", process.env.WIDE];
    const rows = A[0].split("\n").slice(1, 6);
    const cut = (s) => { if (W(s) <= 32) return s; let t = ""; for (const ch of s) { if (W(t + ch) > 31) break; t += ch; } return t + "…"; };
    for (let i = 0; i < 5; i++) if (!rows[i] || !rows[i].startsWith(cut(added[i]) + " ")) return `row ${i + 1}: ${rows[i]} (expected ${cut(added[i])})`;
    return "ok";' nodes.txt)"
check "node ls: the Position column lines up under its header whatever the name (cut by columns)" "$(jsrun '
    const l = A[0].split("\n").filter((x) => x);
    const hw = W(l[0].slice(0, l[0].indexOf("Position") + 8));
    for (const r of l.slice(1, 6)) {
      let w = 0, i = 0; const ch = [...r];
      while (i < ch.length && w < hw) w += W(ch[i++]);
      if (w !== hw || !/[0-9]/.test(ch[i - 1]) || ch[i] !== " ") return `row ${r}: the position does not end at column ${hw}`;
    }
    return "ok";' nodes.txt)"
check "node ls --json gives every name whole" "$(jsrun '
    const names = J(A[0]).nodes.map((n) => n.name);
    return names.includes(process.env.LONG) && names.includes(process.env.WIDE) ? "ok" : names.join(",");' nodes.json)"

# After an import: the text's order.
printf 'upstream pool {\n    hash $request_uri consistent;\n    server 10.0.0.9:80;\n    server 10.0.0.1:80;\n    server 10.0.0.5:80 weight=2;\n}\n' >pool.conf
"$BIN" --db "$TMP/imp.db" import pool.conf >/dev/null
rs --db "$TMP/imp.db" node ls
check "node ls after an import: the servers in the text's order" "$(jsrun '
    const rows = A[0].split("\n").slice(1, 4).map((r) => r.split(" ")[0]).join(" ");
    return rows === "10.0.0.9:80 10.0.0.1:80 10.0.0.5:80" ? "ok" : rows;' "$O")"

# ---- log: which way a set_state went ----
"$BIN" node down alpha >"$O"
if grep -q '^operation [0-9]* set_state: alpha up -> down;' "$O"; then pass; else
    fail "node down answers alpha up -> down" "$(cat "$O")"; fi
"$BIN" node up alpha >/dev/null
rs log
check "log says set_state alpha up -> down, then down -> up" "$(jsrun '
    const l = A[0].split("\n").filter((x) => / set_state /.test(x));
    return l.length === 2 && / alpha up -> down$/.test(l[0]) && / alpha down -> up$/.test(l[1]) ? "ok" : l.join(" | ");' "$O")"
rs --json log
check "log --json keeps the subject the node's name, state the new state" "$(jsrun '
    const o = J(A[0]).operations.filter((x) => x.type === "set_state");
    return o.map((x) => `${x.subject}:${x.state}`).join(" ") === "alpha:down alpha:up" ? "ok" : JSON.stringify(o);' "$O")"

# ---- key ls: a header, the algorithm's coordinate by its own name ----
keyls_check() { # ALGORITHM LABEL (empty: no coordinate column)
    rs key ls
    cp "$O" keys.txt
    rs --json key ls
    cp "$O" keys.json
    export LABEL=$2
    check "key ls under $1: header Key, Position${2:+, $2}, Node; each row's values those of --json" "$(jsrun '
        const lines = A[0].split("\n").filter((x) => x);
        const keys = J(A[1]).keys, label = process.env.LABEL;
        const head = lines[0].trim().split(/\s{2,}/).map((s) => s.trim()).filter((s) => s);
        const want = label ? ["Key", "Position", label, "Node"] : ["Key", "Position", "Node"];
        if (head.join("|") !== want.join("|")) return `header ${head.join("|")}`;
        if (lines.length !== keys.length + 2) return `${lines.length} lines for ${keys.length} keys`;
        if (lines[lines.length - 1] !== `${keys.length} keys`) return lines[lines.length - 1];
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i], r = lines[i + 1];
          const shown = W(k.key) <= 24 ? k.key : k.key.slice(0, 23) + "…";
          if (!r.startsWith(shown)) return `row ${i + 1} ${r}: key ${k.key}`;
          const rest = r.slice(shown.length).trim().split(/\s+/);
          const vals = label ? [String(k.position), k.coordinate] : [String(k.position)];
          if (rest.slice(0, vals.length).join(" ") !== vals.join(" ")) return `row ${i + 1} ${r}: expected ${vals.join(" ")}`;
        }
        return "ok";' keys.txt keys.json)"
}
keyls_check ring ""
"$BIN" config --algorithm redis >/dev/null
keyls_check redis Slot
"$BIN" config --algorithm cassandra >/dev/null
keyls_check cassandra Token
"$BIN" config --algorithm maglev >/dev/null
keyls_check maglev "Table entry"
"$BIN" config --algorithm rendezvous >/dev/null
keyls_check rendezvous ""
rs key ls --node "$LONG"
check "key ls cuts a long node name to 32 columns" "$(jsrun '
    const r = A[0].split("\n")[1] || "";
    return r.endsWith(" " + process.env.LONG.slice(0, 31) + "…") ? "ok" : r;' "$O")"

# lookup's "key hash" line names the hash the key went through (its trace's
# first step says which), for each ketama mode and an explicit key_hash.
"$BIN" config --algorithm ketama >/dev/null
for kv in "mode=ketama_weighted:MD5" "mode=ketama:one_at_a_time" \
    "mode=consistent:one_at_a_time" "key_hash=fnv1a_32:fnv1a_32" "key_hash=md5:MD5"; do
    "$BIN" config --algorithm ketama --param "${kv%%:*}" >/dev/null
    rs lookup user:1
    kh=$(sed -n 's/^key hash *[0-9]* (\(.*\))$/\1/p' "$O")
    step=$(sed -n 's/^  hash  *//p' "$O")
    want=${kv##*:}
    if [[ "$kh" == *"$want"* && "$step" == *"$want"* ]]; then pass; else
        fail "lookup under ketama ${kv%%:*}: key hash '$kh', hash step '$step', want $want"
    fi
done

finish
