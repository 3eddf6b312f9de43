# shellcheck shell=bash
# tests/lib/check.sh - what the shell test suites share (sourced): the
# counters, pass, fail DESC [CONTEXT LINE...] (each context shown indented,
# 25 lines at most), note, and finish (the summary line; its status is the
# suite's).
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
note() { printf 'NOTE: %s\n' "$*"; }
finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}
