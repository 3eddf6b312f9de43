#!/usr/bin/env bash
# cli_fit_test.sh - the command line shows what applies, and only that
# (issue 25, item 15): `config` prints the parameters the current
# algorithm takes (every one of them, none of another's: jump has no
# points_per_node), and previews and stats print bytes only when the
# workload gives the keys' value sizes (without sizes every key is 1 byte
# and a byte count repeats the key count).  --json keeps every field.
#
#   bash tests/cli_fit_test.sh /path/to/ringsim
#
# Expected parameters come from the catalogue (`algorithms --json`), the
# figures from the --json answers of the same database.  Ends with
# "N passed, N failed".
#
# Checks docs/api.md, 'Statistics, layout, configuration', 'Looking before
# changing'.

# shellcheck disable=SC2016 # JavaScript in single quotes, on purpose
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
setup fit /path/to/ringsim 1 "$@"
need node
export RINGSIM_DB=$TMP/t.db
rs() { "$BIN" "$@" </dev/null; }

echo "== config prints the parameters of the current algorithm, and only those"
for n in alpha bravo charlie; do rs node add "$n" >/dev/null; done
rs key gen 2000 >/dev/null
rs --json algorithms >cat.json
for a in ring jump rendezvous multiprobe ketama nginx envoy-ring maglev cassandra redis haproxy twemproxy; do
    rs config --algorithm "$a" >/dev/null 2>&1
    rs config >cfg.txt
    rs --json config >cfg.json
    check "config under $a: algorithm, its parameters (catalogue), replicas" "$(A=$a jsrun '
        const alg = process.env.A, cat = J(A[0]).algorithms || J(A[0]);
        const entry = cat.find((e) => e.name === alg);
        if (!entry) return `no catalogue entry for ${alg}`;
        const takes = new Set(entry.params.map((p) => p.name));
        const lines = A[1].trim().split("\n");
        if (lines[0] !== `algorithm ${alg}`) return `first line ${lines[0]}`;
        if (lines[lines.length - 1] !== `replicas ${J(A[2]).replicas}`) return `last line ${lines[lines.length - 1]}`;
        const shown = lines.slice(1, -1).map((l) => l.split(" ")[0]);
        for (const n of shown) if (!takes.has(n)) return `${n} shown, which ${alg} does not take: ${A[1]}`;
        for (const n of Object.keys(J(A[2]).params)) if (!shown.includes(n)) return `${n} (in params) not shown: ${A[1]}`;
        return "ok";' cat.json cfg.txt cfg.json)"
done
rs config --algorithm jump >/dev/null
rs config >cfg.txt
if grep -q points_per_node cfg.txt; then fail "config under jump shows no points_per_node" "$(cat cfg.txt)"; else pass; fi
rs --json config >cfg.json
check "config --json under jump keeps points_per_node (API.md)" "$(jsrun '
    return typeof J(A[0]).points_per_node === "number" ? "ok" : A[0];' cfg.json)"

echo "== bytes only when the workload gives sizes"
rs config --algorithm cassandra >/dev/null
rs workload zipf --param s=1.1 >/dev/null
rs preview node add delta >pv.txt
rs --json preview node add delta >pv.json
check "preview under zipf without sizes: requests moved, no bytes" "$(jsrun '
    const j = J(A[1]), t = A[0];
    if (typeof j.bytes_moved !== "number") return "bytes_moved gone from --json";
    const want = `${(100 * j.requests_moved).toFixed(1)}% of requests would move`;
    const l = t.split("\n").find((x) => x.includes("of requests would move"));
    if (l !== want) return `line ${l}, want ${want}`;
    if (/bytes/.test(t)) return `bytes shown: ${t}`;
    return "ok";' pv.txt pv.json)"
rs node down alpha >/dev/null
rs stats >st.txt
rs --json stats >st.json
check "stats with alpha down: unavailable keys and requests, no bytes" "$(jsrun '
    const u = J(A[1]).unavailable, t = A[0];
    if (!(u.keys > 0)) return `no unavailable keys: ${JSON.stringify(u)}`;
    if (typeof u.bytes !== "number") return "unavailable.bytes gone from --json";
    const l = t.split("\n").find((x) => x.startsWith("unavailable:"));
    if (!l) return `no unavailable line: ${t}`;
    if (!l.includes(`${(100 * u.requests_share).toFixed(1)}% of requests`)) return l;
    if (/bytes/.test(t)) return `bytes shown: ${t}`;
    return "ok";' st.txt st.json)"
rs preview node up alpha >/dev/null 2>&1
rs workload zipf --param s=1.1 --param sizes.kind=uniform --param sizes.min=100 --param sizes.max=1000 >/dev/null
rs stats >st.txt
rs --json stats >st.json
check "stats with sizes: the unavailable bytes" "$(jsrun '
    const u = J(A[1]).unavailable;
    const l = A[0].split("\n").find((x) => x.startsWith("unavailable:")) || "";
    return u.bytes > u.keys && l.endsWith(`, ${u.bytes} bytes`) ? "ok" : `${l} / ${JSON.stringify(u)}`;' st.txt st.json)"
rs node up alpha >/dev/null
rs preview node add delta >pv.txt
rs --json preview node add delta >pv.json
check "preview with sizes: requests and bytes moved" "$(jsrun '
    const j = J(A[1]);
    const want = `${(100 * j.requests_moved).toFixed(1)}% of requests would move, ${j.bytes_moved} bytes`;
    const l = A[0].split("\n").find((x) => x.includes("would move,"));
    return l === want && j.bytes_moved > j.keys_moved ? "ok" : `line ${l}, want ${want}`;' pv.txt pv.json)"
rs workload uniform --param sizes.kind=fixed --param sizes.bytes=100 >/dev/null
rs preview node add delta >pv.txt
rs --json preview node add delta >pv.json
check "preview, uniform requests with sizes: the bytes alone" "$(jsrun '
    const j = J(A[1]), t = A[0];
    const l = t.split("\n").find((x) => x.endsWith("bytes would move"));
    if (l !== `${j.bytes_moved} bytes would move` || j.bytes_moved !== 100 * j.keys_moved) return `line ${l}`;
    return /of requests/.test(t) ? `requests shown under uniform: ${t}` : "ok";' pv.txt pv.json)"

finish
