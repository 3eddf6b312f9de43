#!/bin/sh
# ctest-all.sh OUT PLAIN ASAN TSAN - one ctest over make test's three build
# trees.  ctest keys test properties by name, so two trees' "cli" would share
# labels; the sanitizer trees' tests are copied under names of their own
# ("asan:cli", "tsan:api") into OUT/asan and OUT/tsan, and OUT's
# CTestTestfile.cmake names the plain tree and the two copies.  Then
# `cd OUT && ctest -LE dup` runs each test once, in its tree (CMakeLists.txt,
# "which tree runs which test"), two at a time from first to last.
set -eu
[ $# -eq 4 ] || { echo "usage: ctest-all.sh OUT PLAIN ASAN TSAN" >&2; exit 2; }
out=$1
abs() { (cd "$1" && pwd); }
plain=$(abs "$2")
mkdir -p "$out/asan" "$out/tsan"
for t in asan tsan; do
    if [ "$t" = asan ]; then src=$(abs "$3"); else src=$(abs "$4"); fi
    sed -E -e "s/^(add_test|set_tests_properties)\\(/\\1(${t}:/" \
        -e "s|^subdirs\\(\"|subdirs(\"${src}/|" \
        "$src/CTestTestfile.cmake" >"$out/$t/CTestTestfile.cmake"
done
printf 'subdirs("%s")\nsubdirs("asan")\nsubdirs("tsan")\n' "$plain" >"$out/CTestTestfile.cmake"
