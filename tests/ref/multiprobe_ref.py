#!/usr/bin/python3
"""Cross-check of the multiprobe core against API.md's definition, written
independently in Python (hashlib's SHA-256, bisect over the sorted points).

    multiprobe_ref.py PATH/TO/multiprobe_tool

Random node sets and probe counts (1..1000), plus node pairs whose positions
collide (found here by a birthday search over generated names), where the
(position, name bytes) order decides the owner.  Every owner, coordinate and
winning probe index must match.  Fixed seed; a mismatch prints the case.

Checks docs/api.md, 'GET /api/config' (the catalogue's multiprobe).
"""
import bisect
import hashlib
import random
import subprocess
import sys

SEED = 1505


def position(b):
    return int.from_bytes(hashlib.sha256(b).digest()[:4], "big")


def ring(names):
    # API.md: points ordered by (position, name bytes, point index)
    pts = sorted((position(nm), nm, i) for i, nm in enumerate(names))
    return [p for p, _, _ in pts], [i for _, _, i in pts]


def lookup(pos, owner, key, k):
    d = hashlib.sha256(key).digest()
    h1 = int.from_bytes(d[0:4], "big")
    h2 = int.from_bytes(d[4:8], "big") | 1
    best = None
    for i in range(k):
        p = (h1 + i * h2) % 2**32
        s = bisect.bisect_left(pos, p)  # first point with position >= p
        if s == len(pos):
            s = 0
        dist = (pos[s] - p) % 2**32
        if best is None or dist < best[0]:  # strict: the lowest i keeps a tie
            best = (dist, s, p, i)
    _, s, p, i = best
    return owner[s], p, i


def collisions(count):
    """Pairs of distinct names with the same position (birthday search)."""
    seen, pairs, j = {}, [], 0
    while len(pairs) < count:
        nm = b"c-%d" % j
        p = position(nm)
        if p in seen:
            pairs.append((seen[p], nm))
        else:
            seen[p] = nm
        j += 1
    return pairs


def rand_name(rng):
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-. #/"
    s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
    if rng.random() < 0.2:
        s += rng.choice(["ü", "ノード", "🙂"])
    return s.encode()


def main():
    tool = sys.argv[1]
    rng = random.Random(SEED)
    cmds, expect = [], []

    def node_set(names, k):
        cmds.append("reset")
        cmds.append("probes %d" % k)
        cmds.extend("node " + nm.hex() for nm in names)
        return ring(names)

    def query(r, key, k):
        cmds.append("key " + key.hex())
        expect.append((key, k, lookup(r[0], r[1], key, k)))

    for _ in range(300):
        names = list(dict.fromkeys(rand_name(rng) for _ in range(rng.randint(1, 60))))
        k = rng.choice([1, 2, 3, 5, 21, 21, 21, 64, 100, 1000])
        r = node_set(names, k)
        for _ in range(20):
            query(r, b"key-%d" % rng.getrandbits(40), k)
    pairs = collisions(3)
    for a, b in pairs:
        for k in (1, 21):
            for names in ([a, b], [b, a], [b"x", b, a, b"y"]):
                r = node_set(names, k)
                for _ in range(200):
                    query(r, rand_name(rng) + b"%d" % rng.getrandbits(30), k)

    out = subprocess.run([tool], input="\n".join(cmds) + "\n", capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        print("tool failed with status %d: %s" % (out.returncode, out.stderr))
        return 1
    lines = out.stdout.splitlines()
    if len(lines) != len(expect):
        print("tool printed %d lines for %d keys" % (len(lines), len(expect)))
        return 1
    bad = 0
    for (key, k, want), line in zip(expect, lines):
        got = tuple(int(x) for x in line.split())
        if got != want:
            bad += 1
            if bad <= 5:
                print("key %r probes %d: core %s, ref %s" % (key, k, got, want))
    print("multiprobe: %d keys, colliding pairs %s, %d mismatches, seed %d"
          % (len(expect), [(a.decode(), b.decode(), position(a)) for a, b in pairs], bad, SEED))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
