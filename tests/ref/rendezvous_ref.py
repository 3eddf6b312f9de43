#!/usr/bin/python3
"""Cross-check of the rendezvous core against API.md's definition, written
independently in Python (hashlib's SHA-256, Python integers for mix, the
formula's doubles, math.log).

    rendezvous_ref.py PATH/TO/rendezvous_tool

Random node sets (UTF-8 names, integer and fractional weights), forced ties
(nodes sharing a hash and a weight, names that are prefixes of each other),
and a 1000-node set; every preference list and every score must match bit for
bit.  Fixed seed; a mismatch prints the case.

Checks docs/api.md, 'GET /api/config' (the catalogue's rendezvous).
"""
import hashlib
import math
import random
import subprocess
import sys

SEED = 20150501
M64 = (1 << 64) - 1


def sha64(b):
    return int.from_bytes(hashlib.sha256(b).digest()[:8], "big")


def mix(x):  # API.md: x ^= x >> 30; x *= ...; x ^= x >> 27; x *= ...; x ^= x >> 31
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    x ^= x >> 31
    return x


def score(kh, nh, w):
    u = ((mix(kh ^ nh) >> 11) + 0.5) / 2**53
    ln = math.log(u)
    # IEEE: -w / +0.0 is -inf; Python raises instead, so say it.
    return -w / ln if ln != 0.0 else -math.inf


def ranking(key, nodes, r):
    kh = sha64(key)
    scored = [(score(kh, nh, w), name, i) for i, (name, w, nh) in enumerate(nodes)]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(i, s) for s, _, i in scored[:r]]


ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_.#/ :"
EXOTIC = ["ü", "ノード", "🙂", "Ω", "\u00a0", "é", "中"]


def rand_name(rng):
    n = rng.randint(1, 12)
    s = "".join(rng.choice(ALPHABET) if rng.random() < 0.85 else rng.choice(EXOTIC)
                for _ in range(n))
    return s.encode()[:255] or b"x"


def rand_weight(rng):
    c = rng.random()
    if c < 0.3:
        return 1.0
    if c < 0.55:
        return float(rng.randint(1, 10))
    if c < 0.9:
        return rng.uniform(0.01, 100.0)
    return rng.choice([1e-9, 0.5, 1e6, 3.0000000000000004, 2.5])


def main():
    tool = sys.argv[1]
    rng = random.Random(SEED)
    cmds, expect = [], []

    def node_set(nodes):
        cmds.append("reset")
        for name, w, src in nodes:
            line = "node %s %r" % (name.hex(), w)
            if src is not None:
                line += " " + src.hex()
            cmds.append(line)
        return [(name, w, sha64(src if src is not None else name)) for name, w, src in nodes]

    def query(nodes, key, r):
        cmds.append("key %s %d" % (key.hex(), r))
        expect.append((key, r, ranking(key, nodes, r)))

    # 1. random sets
    for _ in range(200):
        names = list({rand_name(rng) for _ in range(rng.randint(1, 40))})
        nodes = node_set([(nm, rand_weight(rng), None) for nm in names])
        for _ in range(30):
            query(nodes, rand_name(rng) + str(rng.random()).encode(), rng.randint(1, len(nodes) + 2))
    # 2. forced ties: groups share a hash source and a weight, so their scores
    # are equal and the names decide (prefixes, bytes above 0x7f, case).
    tie_names = [b"a", b"ab", b"abc", b"b", b"B", b"\xc3\xbc", b"a b", b"a#1", b"z", b"\xf0\x9f\x99\x82"]
    for t in range(60):
        picked = rng.sample(tie_names, rng.randint(2, len(tie_names)))
        spec = []
        for j, nm in enumerate(picked):
            group = j % rng.randint(1, 3)
            spec.append((nm, [1.0, 2.0, 0.75][group], b"tie-%d-%d" % (t, group)))
        nodes = node_set(spec)
        for _ in range(20):
            query(nodes, rand_name(rng), len(nodes))
    # 3. 1000 nodes
    nodes = node_set([(b"node-%d" % i, rand_weight(rng), None) for i in range(1000)])
    for i in range(300):
        query(nodes, b"key-%d" % i, 3)

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
    for (key, r, want), line in zip(expect, lines):
        got = [(int(i), float.fromhex(s)) for i, s in (f.split(":") for f in line.split())]
        if got != want:
            bad += 1
            if bad <= 5:
                print("key %r R=%d\n  core: %s\n  ref:  %s" % (key, r, got, want))
    ties = sum(1 for _, _, w in expect for a, b in zip(w, w[1:]) if a[1] == b[1])
    print("rendezvous: %d keys (%d adjacent equal-score pairs), %d mismatches, seed %d"
          % (len(expect), ties, bad, SEED))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
