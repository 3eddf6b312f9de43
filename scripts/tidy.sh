#!/usr/bin/env bash
# tidy.sh BUILD [CHECKS [FILE...]] - clang-tidy with the repository's
# .clang-tidy over FILE... (default: every C file under src/, its folders
# included), as BUILD compiles them (BUILD/compile_commands.json), TIDY_JOBS
# files at a time (default 2).  CHECKS, when not empty, is added to
# .clang-tidy's list: "-clang-analyzer-*" leaves the analyzer out.  Any
# finding fails (.clang-tidy: WarningsAsErrors); exit 0 when there is none.
# `make lint-c` runs it with the whole list, ctest's `tidy` with the list
# CMakeLists.txt chooses.
set -u
if [ $# -lt 1 ] || [ ! -f "$1/compile_commands.json" ]; then
    echo "usage: scripts/tidy.sh BUILD [CHECKS [FILE...]] (BUILD holds compile_commands.json)" >&2
    exit 2
fi
build=$1
checks=${2:-}
shift $(($# < 2 ? $# : 2))
tidy=${CLANG_TIDY:-clang-tidy}
args=(-p "$build" --quiet)
[ -n "$checks" ] && args+=("--checks=$checks")
src=$(cd "$(dirname "$0")/.." && pwd)/src
if [ $# -gt 0 ]; then
    printf '%s\0' "$@"
else
    find "$src" -name '*.c' -print0 | sort -z
fi | xargs -0 -P "${TIDY_JOBS:-2}" -n 1 "$tidy" "${args[@]}"
