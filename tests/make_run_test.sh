#!/usr/bin/env bash
# make_run_test.sh - `make run` builds the program and its manual page, not
# the tests and benchmarks; `make test` still builds everything (issue 25,
# item 19).  Reads what make would run (make -n), so it builds nothing.
#
#   bash tests/make_run_test.sh SOURCE_DIR
#
# Checks no section of docs/api.md: it tests the build.
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
SRC=${1:?usage: bash tests/make_run_test.sh SOURCE_DIR}
BUILD=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-makerun.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT

run=$(make -n -C "$SRC" run BUILD="$BUILD" 2>&1)
builds=$(grep -E '^cmake --build' <<<"$run")
if [ "$(wc -l <<<"$builds")" -eq 1 ] && grep -q -- "--target ringsim manpage" <<<"$builds"; then pass; else
    fail "make run builds only the targets ringsim and manpage" "$builds"; fi
if grep -q -- "ringsim serve" <<<"$run" && ! grep -qE 'cmake --install|sudo|ctest' <<<"$run"; then pass; else
    fail "make run serves and installs nothing" "$run"; fi
if grep -q "man -l docs/ringsim.1" <<<"$run"; then pass; else
    fail "make run says how to read the manual" "$run"; fi
test=$(make -n -C "$SRC" test BUILD="$BUILD" ASAN="$BUILD-a" TSAN="$BUILD-t" 2>&1)
if grep -E '^cmake --build "?'"$BUILD"'"? ' <<<"$test" | grep -vq -- "--target"; then pass; else
    fail "make test builds every target of the build" "$(grep -E '^cmake --build' <<<"$test")"; fi
# The README's walkthrough names the same way to the manual.
if grep -q "man -l docs/ringsim.1" "$SRC/README.md"; then pass; else
    fail "the README says how to read the manual after make run"; fi
finish
