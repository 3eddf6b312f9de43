#!/bin/bash
# envoy_shuffle_ref.sh - Envoy's bounded-load shuffle (the order chooseHost
# tries hosts once the key's own is overloaded) as ringsim computes it
# (traffic_envoy_order: its own MT19937) against the C++ standard library's
# std::mt19937 driving the same loop (tests/ref/envoy_shuffle.cc, compiled
# here with g++).  Hashes: small, 2^32 - 1 and 2^32 (the seed keeps the low
# 32 bits), 2^64 - 1 and random 64-bit values; hosts 1 to 1000.
# Usage: envoy_shuffle_ref.sh TRAFFIC_TOOL.  Exit 0 pass, 1 fail, 77 skip (no g++).
#
# Checks docs/api.md, 'POST /api/traffic/run' (Envoy's bounded loads).
set -u
tool=$1
here=$(cd "$(dirname "$0")" && pwd)
cxx=$(command -v g++ || command -v c++ || true)
if [ -z "$cxx" ]; then
    echo "envoy_shuffle_ref: SKIP: no C++ compiler (Debian package g++)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cxx" -std=c++17 -O2 -o "$tmp/ref" "$here/envoy_shuffle.cc" || { echo "envoy_shuffle_ref: FAIL: g++"; exit 1; }
python3 - >"$tmp/in" <<'PY'
import random
r = random.Random(17)
hashes = [0, 1, 5489, 2**32 - 1, 2**32, 2**63, 2**64 - 1] + [r.getrandbits(64) for _ in range(300)]
sizes = [1, 2, 3, 5, 10, 64, 100, 257, 1000]
for i, h in enumerate(hashes):
    print(h, sizes[i % len(sizes)])
PY
"$tmp/ref" <"$tmp/in" >"$tmp/want" || { echo "envoy_shuffle_ref: FAIL: the reference"; exit 1; }
"$tool" envoy <"$tmp/in" >"$tmp/got" || { echo "envoy_shuffle_ref: FAIL: traffic_tool"; exit 1; }
if ! cmp -s "$tmp/want" "$tmp/got"; then
    line=$(cmp "$tmp/want" "$tmp/got" | grep -o 'line [0-9]*' | grep -o '[0-9]*')
    echo "envoy_shuffle_ref: FAIL: for \"$(sed -n "${line}p" "$tmp/in")\" (HASH HOSTS)"
    echo "  std::mt19937: $(sed -n "${line}p" "$tmp/want" | cut -c1-200)"
    echo "  ringsim:      $(sed -n "${line}p" "$tmp/got" | cut -c1-200)"
    exit 1
fi
echo "envoy_shuffle_ref: $(wc -l <"$tmp/in") shuffles (1 to 1000 hosts) in the order std::mt19937 gives Envoy's loop"
