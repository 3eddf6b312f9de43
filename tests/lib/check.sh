# shellcheck shell=bash
# tests/lib/check.sh - what the shell test suites share (sourced): the
# counters, pass, fail DESC [CONTEXT LINE...] (each context shown indented,
# 25 lines at most), expect DESC STATUS [CONTEXT...] (a pass when STATUS,
# a command's $?, is 0), expect_eq DESC EXPECTED ACTUAL, note, and finish
# (the summary line; its status is the suite's).  For the suites that run
# ringsim: setup (the opening: arguments, BIN, the temporary folder), need
# (the programs a suite cannot do without), jsrun (JavaScript over files)
# and check (its answer "ok" a pass), and serve / stop (a server on a port of the system's choosing, as the
# Node tests' harness starts it: tests/lib/harness.mjs).
PASS=0
FAIL=0
pass() { PASS=$((PASS + 1)); }
fail() {
    FAIL=$((FAIL + 1))
    printf 'FAIL: %s\n' "$1"
    shift
    local l
    for l in "$@"; do printf '%s\n' "$l" | head -n 25 | sed 's/^/    | /'; done
}
expect() {
    local d=$1 st=$2
    shift 2
    if [ "$st" -eq 0 ]; then pass; else fail "$d" "$@"; fi
}
expect_eq() { if [ "$2" == "$3" ]; then pass; else fail "$1" "expected: $2" "got:      $3"; fi; }
note() { printf 'NOTE: %s\n' "$*"; }
finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}

# setup NAME USAGE MIN ARGS...: C.UTF-8, and no RINGSIM_DB of the caller's;
# at least MIN arguments, the first an executable (else "usage: bash
# tests/SCRIPT USAGE" and exit 2); BIN, its absolute path; TMP, a fresh
# folder ringsim-NAME.XXXXXX under TMPBASE (default $TMPDIR or /tmp), made
# the working folder.  At exit the server serve started is killed, the
# suite's on_exit runs (when it defines one) and TMP goes, whatever its
# modes.
setup() {
    local name=$1 usage=$2 min=$3
    shift 3
    export LC_ALL=C.UTF-8 2>/dev/null || export LC_ALL=C
    unset RINGSIM_DB
    if [ $# -lt "$min" ] || [ ! -x "$1" ]; then
        echo "usage: bash tests/$(basename "$0") $usage" >&2
        exit 2
    fi
    BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    TMP=$(mktemp -d "${TMPBASE:-${TMPDIR:-/tmp}}/ringsim-$name.XXXXXX")
    trap cleanup EXIT
    cd "$TMP" || exit 2
}
cleanup() {
    [ -n "${SRV:-}" ] && kill -9 "$SRV" 2>/dev/null
    if declare -F on_exit >/dev/null; then on_exit; fi
    chmod -R u+rwX "$TMP" 2>/dev/null
    rm -rf "$TMP"
}
# need PROGRAM...: each is on PATH, else exit 2 naming it.
need() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null || { echo "$(basename "$0"): $c is required" >&2; exit 2; }
    done
}

# jsrun CODE FILE... : node with A the files' texts, J = JSON.parse, and
# W(s) the columns s takes on a terminal (wide characters 2); prints what
# CODE returns (nothing for undefined).
jsrun() {
    local c=$1
    shift
    node -e '
const fs = require("fs");
const A = process.argv.slice(1).map((f) => fs.readFileSync(f, "utf8"));
const J = JSON.parse;
const W = (s) => [...s].reduce((w, ch) => {
  const c = ch.codePointAt(0);
  return w + ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) || (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ? 2 : 1);
}, 0);
const out = (() => {'"$c"'})();
if (out !== undefined) console.log(out);' "$@"
}
# check DESC RESULT: a pass when RESULT (what a jsrun check printed) is "ok".
check() { if [ "$2" == ok ]; then pass; else fail "$1" "$2"; fi; }

# ---- a server ----
# serve DB [ENV=VALUE...]: start `$BIN serve --port 0` on DB (as
# ${RUNAS[@]} when set) and read its port from its "serving" line; sets SRV
# (its pid), PORT and SERR (its stderr; its stdout is $TMP/serve.out).  Not
# serving within 10 s is a failure (return 1).
RUNAS=()
SRV=
serve() {
    local db=$1
    shift
    SERR=$TMP/serve.err
    # Emptied here, not only by the background job's redirections: the loop
    # below could otherwise read the last server's port before the job ran.
    : >"$TMP/serve.out"
    : >"$SERR"
    env "$@" "${RUNAS[@]}" "$BIN" serve --port 0 --db "$db" >"$TMP/serve.out" 2>"$SERR" &
    SRV=$!
    PORT=
    for _ in $(seq 100); do
        PORT=$(sed -n 's|.*serving http://[^:]*:\([0-9]*\)/.*|\1|p' "$TMP/serve.out")
        [ -n "$PORT" ] && return 0
        kill -0 "$SRV" 2>/dev/null || break
        sleep 0.1
    done
    fail "the server starts on $db" "$(cat "$SERR")"
    SRV=
    return 1
}
# stop [SIGNAL]: stop the server (SIGTERM unless told) and wait for it; sets
# SRV_RC, its exit status.
stop() {
    [ -n "$SRV" ] || return 0
    kill -s "${1:-TERM}" "$SRV" 2>/dev/null
    wait "$SRV"
    # shellcheck disable=SC2034 # for the suite
    SRV_RC=$?
    SRV=
}
