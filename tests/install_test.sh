#!/usr/bin/env bash
# install_test.sh - `make install` into a temporary root, and what it puts
# there: the binary (with the page inside), the scenarios, ringsim(1), bash
# completion and the API reference.
#
#   bash tests/install_test.sh BUILD_DIR SOURCE_DIR
#
# The install is `cmake --install BUILD --prefix /usr/local` with DESTDIR set
# (what `make install PREFIX=... DESTDIR=...` runs; the Makefile's command is
# checked with make -n).  Expected files and texts come from the source tree;
# the version from CMake's project(VERSION); the manual page is checked with
# groff's warnings (-ww) and lexgrog (man-db's whatis parser).
# Ends with "N passed, N failed".
#
# Checks docs/api.md, 'Serving' (the page built into the binary).
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -d "$2" ]; then
    echo "usage: install_test.sh BUILD_DIR SOURCE_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-install.XXXXXX")
trap cleanup EXIT

VERSION=$(sed -n 's/^project(ringsim VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$VERSION" ]
expect "CMakeLists.txt has project(ringsim VERSION ...)" $?

# The Makefile's install honours PREFIX and DESTDIR.
cmdline=$(make -s -n -C "$SRC" install BUILD="$BUILD" PREFIX=/opt/rs DESTDIR=/tmp/dest 2>/dev/null | tail -n 1)
expect_eq "make install runs cmake --install with DESTDIR and PREFIX" \
    "DESTDIR=\"/tmp/dest\" cmake --install $BUILD --prefix \"/opt/rs\"" "$cmdline"

ROOT=$TMP/root
P=$ROOT/usr/local
DESTDIR=$ROOT cmake --install "$BUILD" --prefix /usr/local >"$TMP/install.log" 2>&1
expect "cmake --install with DESTDIR succeeds" $? "$(cat "$TMP/install.log")"
! grep -v "^-- \(Install configuration\|Installing\|Up-to-date\)" "$TMP/install.log" | grep -q .
expect "the install log holds only installed files" $? "$(cat "$TMP/install.log")"
# Nothing outside DESTDIR/PREFIX.
outside=$(find "$ROOT" -mindepth 1 -not -path "$ROOT/usr" -not -path "$ROOT/usr/local" -not -path "$P/*")
expect_eq "every file under DESTDIR + PREFIX" "" "$outside"

[ -x "$P/bin/ringsim" ]
expect "bin/ringsim is executable" $?
expect_eq "the installed binary's --version" "ringsim $VERSION" "$("$P/bin/ringsim" --version 2>&1)"
for f in "$SRC"/scenarios/*.ringsim; do
    cmp -s "$f" "$P/share/ringsim/scenarios/$(basename "$f")"
    expect "share/ringsim/scenarios/$(basename "$f") is the source file" $?
done
expect_eq "no other file in share/ringsim/scenarios" "$(cd "$SRC/scenarios" && ls -- *.ringsim)" \
    "$(cd "$P/share/ringsim/scenarios" && ls)"
# The installed scenarios run with the installed binary.
"$P/bin/ringsim" --db "$TMP/s.db" run "$P/share/ringsim/scenarios/names.ringsim" >"$TMP/run.log" 2>&1
expect "the installed binary runs an installed scenario" $? "$(cat "$TMP/run.log")"

MAN=$P/share/man/man1/ringsim.1.gz
gzip -t "$MAN" 2>/dev/null
expect "share/man/man1/ringsim.1.gz is gzip" $?
cmp -s <(gzip -dc "$MAN") "$SRC/docs/ringsim.1"
expect "the installed manual page is docs/ringsim.1" $?
warn=$(gzip -dc "$MAN" | groff -man -Tutf8 -ww -z 2>&1)
expect_eq "groff -ww has no warning on ringsim(1)" "" "$warn"
lexgrog "$MAN" >"$TMP/lexgrog" 2>&1
expect "lexgrog finds the NAME section (whatis)" $? "$(cat "$TMP/lexgrog")"
expect_eq "the manual's .TH names the version" "ringsim $VERSION" \
    "$(sed -n 's/^\.TH RINGSIM 1 "[^"]*" "\([^"]*\)".*/\1/p' "$SRC/docs/ringsim.1")"
# Every command that `ringsim help` lists has an entry (.B COMMAND).
page=$(gzip -dc "$MAN" | groff -man -Tutf8 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g')
missing=""
while read -r cmd; do
    grep -qE "^ {7}$cmd( |\||\$)" <<<"$page" || missing="$missing $cmd"
done < <("$P/bin/ringsim" help | sed -n 's/^  \([a-z][a-z]*\( [a-z][a-z]*\)*\).*/\1/p' |
    sed 's/ \{2,\}.*//' | awk '{ out = $1; for (i = 2; i <= NF && $i ~ /^[a-z]+$/; i++) out = out " " $i; print out }')
expect_eq "every command of ringsim help is in ringsim(1)" "" "$missing"
grep -q 'api\.md' <<<"$page"
expect "ringsim(1) points to the API reference (api.md)" $?

COMP=$P/share/bash-completion/completions/ringsim
cmp -s "$COMP" "$SRC/completions/ringsim"
expect "share/bash-completion/completions/ringsim is installed" $?
got=$(PATH="$P/bin:$PATH" bash -c 'source "$1"; COMP_WORDS=(ringsim key ""); COMP_CWORD=2; _ringsim; printf "%s|" "${COMPREPLY[@]}"; complete -p ringsim' _ "$COMP" 2>&1)
expect_eq "the completion completes ringsim's words" "add|rm|ls|gen|complete -F _ringsim ringsim" "$got"

cmp -s "$P/share/doc/ringsim/api.md" "$SRC/docs/api.md"
expect "share/doc/ringsim/api.md is docs/api.md" $?

# The page is inside the binary: serve answers / with the page's HTML.
# shellcheck disable=SC2034 # serve (tests/lib/check.sh) starts BIN
BIN=$P/bin/ringsim
serve "$TMP/w.db"
html=$(/usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1], timeout=10).read().decode())' "$PORT" 2>&1)
stop
expect_eq "the installed binary's server stops on SIGTERM" 0 "${SRV_RC:-not started}"
cmp -s <(printf '%s\n' "$html") <(cat "$SRC/web/index.html"; [ -n "$(tail -c 1 "$SRC/web/index.html")" ] && echo)
expect "the installed binary serves web/index.html at /" $? "$(head -c 300 <<<"$html")"

finish
