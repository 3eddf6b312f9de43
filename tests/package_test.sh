#!/usr/bin/env bash
# package_test.sh - `make package`: the Debian package CPack builds, installed
# into a temporary root with dpkg-deb -x, and the installed binary run.
#
#   bash tests/package_test.sh BUILD_DIR SOURCE_DIR
#
# The package is built with the build's CPackConfig.cmake into a temporary
# folder (the build's own package is left alone).  Checked: dpkg-deb reads
# it (name, version from CMake's project(VERSION), architecture from dpkg),
# it depends on the Debian packages of every shared library the binary links
# (found here with ldd and dpkg -S, not from CMakeLists), it holds the files
# `make install` installs under /usr, and its binary runs: --version, and a
# built-in scenario from the installed scenarios folder.
# Ends with "N passed, N failed".
#
# Checks no section of docs/api.md: it tests the Debian package.
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -d "$2" ]; then
    echo "usage: package_test.sh BUILD_DIR SOURCE_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
for t in cpack dpkg-deb dpkg readelf; do
    command -v "$t" >/dev/null || { echo "package_test: $t is missing"; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-package.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

VERSION=$(sed -n 's/^project(ringsim VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
ARCH=$(dpkg --print-architecture)
(cd "$TMP" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$TMP/out") >"$TMP/cpack.log" 2>&1
expect "cpack -G DEB builds the package" $? "$(tail -n 20 "$TMP/cpack.log")"
DEB=$TMP/out/ringsim_${VERSION}_${ARCH}.deb
[ -f "$DEB" ]
expect "the package is ringsim_${VERSION}_${ARCH}.deb" $? "$(find "$TMP/out" -name '*.deb' 2>&1 | head)"

expect_eq "Package" ringsim "$(dpkg-deb -f "$DEB" Package)"
expect_eq "Version" "$VERSION" "$(dpkg-deb -f "$DEB" Version)"
expect_eq "Architecture" "$ARCH" "$(dpkg-deb -f "$DEB" Architecture)"
[ -n "$(dpkg-deb -f "$DEB" Maintainer)" ] && [ -n "$(dpkg-deb -f "$DEB" Description)" ]
expect "Maintainer and Description are set" $?
# Depends: the package of every library the binary needs (its NEEDED
# entries, where ldd finds them; the libraries those need are their
# packages' business).
depends=$(dpkg-deb -f "$DEB" Depends)
missing=""
for so in $(readelf -d "$BUILD/ringsim" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    lib=$(ldd "$BUILD/ringsim" | awk -v so="$so" '$1 == so { print $3 }')
    [ -z "$lib" ] && continue
    pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -z "$pkg" ] && continue
    grep -qE "(^|, )$pkg( |,|$)" <<<"$depends" || missing="$missing $pkg"
done
expect_eq "Depends names the package of every linked library" "" "$missing"

ROOT=$TMP/root
dpkg-deb -x "$DEB" "$ROOT"
expect "dpkg-deb -x extracts the package" $?
for f in usr/bin/ringsim usr/share/man/man1/ringsim.1.gz usr/share/bash-completion/completions/ringsim \
    usr/share/doc/ringsim/api.md; do
    [ -f "$ROOT/$f" ]
    expect "the package holds /$f" $?
done
expect_eq "the package holds every scenario" "$(cd "$SRC/scenarios" && ls -- *.ringsim)" \
    "$(cd "$ROOT/usr/share/ringsim/scenarios" 2>/dev/null && ls)"
expect_eq "the installed binary's --version" "ringsim $VERSION" "$("$ROOT/usr/bin/ringsim" --version 2>&1)"
"$ROOT/usr/bin/ringsim" --db "$TMP/p.db" run "$ROOT/usr/share/ringsim/scenarios/remove.ringsim" >"$TMP/run.log" 2>&1
expect "the installed binary runs the installed remove.ringsim" $? "$(tail -n 20 "$TMP/run.log")"
grep -q '^ok: .*remove.ringsim: ' "$TMP/run.log"
expect "and reports it ok" $? "$(tail -n 3 "$TMP/run.log")"
"$ROOT/usr/bin/ringsim" --db "$TMP/p.db" check >"$TMP/check.log" 2>&1
expect "check passes on the database the scenario left" $? "$(cat "$TMP/check.log")"

finish
