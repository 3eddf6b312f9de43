#!/usr/bin/env bash
# run_scenario.sh RINGSIM FILE - a shipped scenario is a test: it runs on a
# fresh database (every `expect` line must hold, exit 0), and `ringsim check`
# passes on the database it leaves.  The report is printed on failure.
#
# Checks docs/api.md, 'Scenario files'.
set -u
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -r "$2" ]; then
    echo "usage: run_scenario.sh RINGSIM FILE" >&2
    exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$1" --db "$tmp/s.db" run "$2" >"$tmp/out" 2>&1; then
    cat "$tmp/out"
    echo "FAIL: $2"
    exit 1
fi
if ! "$1" --db "$tmp/s.db" check; then
    echo "FAIL: check after $2"
    exit 1
fi
tail -n 1 "$tmp/out"
