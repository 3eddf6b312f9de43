#!/usr/bin/env bash
# lib_install_test.sh - libringsim and `import ringsim` from an installed
# copy (API.md "Version 4: the placement library"): `cmake --install` into a
# temporary DESTDIR, then only what landed there is used.
#
#   bash tests/lib_install_test.sh BUILD_DIR SOURCE_DIR
#
# Checked: the header is include/ringsim/ringsim.h; libringsim.so.0 is the
# soname, a link to libringsim.so.VERSION (project(VERSION)), exporting
# exactly the functions the header declares (src/lib/ringsim.syms);
# libringsim.a has no other global name; ringsim.pc names the prefix; a
# program compiled with `pkg-config --cflags --libs ringsim` (and with
# --static against libringsim.a) runs and answers as the installed `ringsim
# lookup` does, though it defines functions named as ringsim's internal
# ones; ringsim(3) passes groff -ww and lexgrog and documents every
# function; Debian's python3 imports the installed module (PYTHONPATH into
# DESTDIR) and tests/lib_python_test.py checks its answers against the
# installed `ringsim` for every algorithm; the README's Python example runs.
# Ends with "N passed, N failed".
set -u
if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -d "$2" ]; then
    echo "usage: lib_install_test.sh BUILD_DIR SOURCE_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-libinstall.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PASS=0
FAIL=0
ok() { if [ "$2" = 0 ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); printf 'FAIL: %s\n' "$1"; [ -n "${3:-}" ] && printf '%s\n' "$3" | head -n 30 | sed 's/^/    | /'; fi; }
is() { [ "$2" == "$3" ]; ok "$1" $? "expected: $2
got:      $3"; }

VERSION=$(sed -n 's/^project(ringsim VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
ROOT=$TMP/root
P=$ROOT/usr/local
DESTDIR=$ROOT cmake --install "$BUILD" --prefix /usr/local >"$TMP/install.log" 2>&1
ok "cmake --install with DESTDIR succeeds" $? "$(cat "$TMP/install.log")"

# ---- the files ----
cmp -s "$P/include/ringsim/ringsim.h" "$SRC/include/ringsim/ringsim.h"
ok "include/ringsim/ringsim.h is installed" $?
LIB=$(find "$P" -name "libringsim.so.$VERSION" | head -n 1)
LIBDIR=$(dirname "${LIB:-$P/lib/none}")
[ -f "$LIB" ] && [ ! -L "$LIB" ]
ok "libringsim.so.$VERSION is installed" $? "$(find "$P" -name 'libringsim*')"
is "libringsim.so.0 links to libringsim.so.$VERSION" "libringsim.so.$VERSION" \
    "$(readlink "$LIBDIR/libringsim.so.0")"
is "libringsim.so links to the soname" "libringsim.so.0" "$(readlink "$LIBDIR/libringsim.so")"
is "the soname is libringsim.so.0" "libringsim.so.0" \
    "$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ -f "$LIBDIR/libringsim.a" ]
ok "libringsim.a is installed" $?

# Exported: exactly the header's functions, which are ringsim.syms.
declared=$(grep -o '\bringsim_[a-z_]*(' "$P/include/ringsim/ringsim.h" | tr -d '(' | sort -u)
is "ringsim.syms lists the header's functions" "$declared" "$(sort -u "$SRC/src/lib/ringsim.syms")"
exported=$(nm -D --defined-only "$LIB" | awk '$2 ~ /^[TDBRWV]$/ { print $3 }' | sed 's/@.*//' | sort -u)
is "libringsim.so exports the header's functions and nothing else" "$declared" "$exported"
globals=$(nm -g --defined-only "$LIBDIR/libringsim.a" | awk 'NF == 3 { print $3 }' | sort -u)
is "libringsim.a's only global names are the header's functions" "$declared" "$globals"
undefined=$(readelf -d "$LIB" | grep -c 'NEEDED.*\(sqlite\|event\)')
is "libringsim.so needs neither SQLite nor libevent" 0 "$undefined"

# ---- pkg-config and a program of someone else's ----
PC=$LIBDIR/pkgconfig/ringsim.pc
[ -f "$PC" ]
ok "pkgconfig/ringsim.pc is installed" $? "$(find "$P" -name '*.pc')"
is "ringsim.pc names the prefix installed to" "prefix=/usr/local" "$(grep '^prefix=' "$PC")"
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig PKG_CONFIG_SYSROOT_DIR=$ROOT
is "pkg-config --modversion ringsim" "$VERSION" "$(pkg-config --modversion ringsim 2>&1)"
cflags=$(pkg-config --cflags ringsim)
libs=$(pkg-config --libs ringsim)
# shellcheck disable=SC2086 # the flags are words
cc -Wall -Wextra -Werror -o "$TMP/prog" "$SRC/tests/lib_installed.c" $cflags $libs 2>"$TMP/cc.log"
ok "a program compiles with pkg-config --cflags --libs ringsim ($cflags $libs)" $? "$(cat "$TMP/cc.log")"
static_libs=$(pkg-config --static --libs ringsim | sed 's/-lringsim\b/-Wl,-Bstatic -lringsim -Wl,-Bdynamic/')
# shellcheck disable=SC2086
cc -Wall -Wextra -Werror -o "$TMP/prog-static" "$SRC/tests/lib_installed.c" $cflags $static_libs \
    2>"$TMP/cc-static.log"
ok "and statically with pkg-config --static ($static_libs)" $? "$(cat "$TMP/cc-static.log")"
ldd "$TMP/prog-static" 2>&1 | grep -q libringsim
is "the static program needs no libringsim.so" 1 $?

RS=$P/bin/ringsim
KEYS=(user:1 user:2 "cart:ü" session-9 "{tag}:x" k)
"$RS" --db "$TMP/k.db" config --algorithm ketama --replicas 2 >/dev/null 2>&1 &&
    "$RS" --db "$TMP/k.db" node add 10.0.0.1:11211 >/dev/null 2>&1 &&
    "$RS" --db "$TMP/k.db" node add 10.0.0.2:11211 --weight 2 >/dev/null 2>&1 &&
    "$RS" --db "$TMP/k.db" node add 10.0.0.3:11211 --down >/dev/null 2>&1
ok "the installed ringsim builds the same ketama cluster" $?
want=""
for k in "${KEYS[@]}"; do
    line=$("$RS" --db "$TMP/k.db" --json lookup -- "$k" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join([sys.argv[1], j["node"] or "-", j["served_by"] or "-"] + j["replicas"]))' "$k")
    want+="$line"$'\n'
done
want+="libringsim $VERSION"
is "the program answers as ringsim lookup (shared)" "$want" \
    "$(LD_LIBRARY_PATH=$LIBDIR "$TMP/prog" "${KEYS[@]}" 2>&1)"
is "the program answers as ringsim lookup (static)" "$want" "$("$TMP/prog-static" "${KEYS[@]}" 2>&1)"

# ---- ringsim(3) ----
MAN=$P/share/man/man3/ringsim.3.gz
cmp -s <(gzip -dc "$MAN" 2>/dev/null) "$SRC/docs/ringsim.3"
ok "share/man/man3/ringsim.3.gz is docs/ringsim.3" $?
is "groff -ww has no warning on ringsim(3)" "" "$(gzip -dc "$MAN" | groff -man -Tutf8 -ww -z 2>&1)"
lexgrog "$MAN" >"$TMP/lexgrog" 2>&1
ok "lexgrog finds the NAME section (whatis)" $? "$(cat "$TMP/lexgrog")"
page=$(gzip -dc "$MAN" | groff -man -Tutf8 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g')
missing=""
for f in $declared; do grep -q "$f" <<<"$page" || missing="$missing $f"; done
is "ringsim(3) documents every function" "" "$missing"
is "ringsim(3)'s .TH names the version" "ringsim $VERSION" \
    "$(sed -n 's/^\.TH RINGSIM 3 "[^"]*" "\([^"]*\)".*/\1/p' "$SRC/docs/ringsim.3")"

# ---- the Python module ----
PYDIR=$(find "$P/lib" -path '*dist-packages' -type d | head -n 1)
PYMOD=$(find "$P" -name 'ringsim.cpython-*.so' | head -n 1)
[ -n "$PYMOD" ] && [ "$(dirname "$PYMOD")" = "$PYDIR" ]
ok "the module is installed in Debian's python3 path under the prefix" $? "$(find "$P" -name 'ringsim*')"
dist=$(/usr/bin/python3 -c 'import sys; print("/usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2])')
is "where Debian's python3 looks under /usr/local" "$ROOT$dist" "$PYDIR"
PYTHONPATH=$PYDIR /usr/bin/python3 "$SRC/tests/lib_python_test.py" "$RS" "$PYDIR" >"$TMP/py.log" 2>&1
ok "tests/lib_python_test.py with the installed module and ringsim" $? "$(grep -v '^\(lib_python_test: seed\|[0-9]* passed\)' "$TMP/py.log"; tail -n 2 "$TMP/py.log")"
head -n 1 "$TMP/py.log"
tail -n 1 "$TMP/py.log"

# The README's example, as it is written (its own assertions inside).
# shellcheck disable=SC2016 # backquotes, not an expansion
sed -n '/^```python$/,/^```$/p' "$SRC/README.md" | sed '1d;$d' >"$TMP/readme.py"
[ -s "$TMP/readme.py" ]
ok "README.md has a Python example" $?
(cd "$TMP" && PYTHONPATH=$PYDIR timeout 300 /usr/bin/python3 "$TMP/readme.py") >"$TMP/readme.log" 2>&1
ok "the README's Python example runs with the installed module" $? "$(tail -n 20 "$TMP/readme.log")"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
