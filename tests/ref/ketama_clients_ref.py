#!/usr/bin/python3
"""libringsim's ketama against the ketama clients people use: Debian's
python3-uhashring (HashRing(nodes, hash_fn='ketama')) and npm's hashring
(issue 27, item 9).

    ketama_clients_ref.py uhashring|hashring MODULE_DIR SOURCE_DIR

The `ringsim` module (MODULE_DIR, the build's) places 20,000 keys per case
under `ketama` (libmemcached's weighted continuum, MD5 of the key) over 1
to 20 servers of weight 1, then over 40 random sets of 2 to 12 servers
with weights 1 to 10; the reference gets the same servers (named as
libmemcached labels their points: the host alone on port 11211) and the
same keys.  Owners must be equal, key by key.

The three were written apart and differ in three small ways, which the test
recomputes here from the sources (uhashring/ring_ketama.py, hashring's
index.js, libmemcached's update_continuum as src/alg_ketama.c reproduces
it) rather than excuse:
  counts  points per server: libmemcached floor(float(w / W) * 160 / 4 * n)
          in single precision, which falls one short of a whole number at
          some n and weights (156 points, not 160); uhashring computes
          (40 n w) // W in integers, hashring floor(w / W * 40 * n) in
          doubles.  Keys whose point is one that only one side has.
  tie     a key whose hash equals a point's: libmemcached and hashring take
          that point, uhashring (bisect_right) the next one.
  dup     two servers' points with one value: which one owns it.
A key that differs for none of these reasons fails the test; so does any
key where this file's model of libmemcached disagrees with the module.
Exit 0 pass, 1 fail, 77 when the reference is missing (the build makes
that a failure when RINGSIM_REQUIRE_REFS is on).  Fixed seed.  Ends with
"N passed, N failed".
"""
import bisect
import hashlib
import json
import os
import random
import struct
import subprocess
import sys

WHICH, MODULE_DIR, SRC = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, MODULE_DIR)
import ringsim  # noqa: E402  (the build's module, from MODULE_DIR)

SEED = 20240427
NKEYS = 20000


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def count_libmemcached(w, total, n):  # ketama_server_points, float by float
    pct = f32(f32(w) / f32(total))
    x = f32(pct * f32(160.0))
    x = f32(x / f32(4.0))
    x = f32(x * f32(n))
    x = f32(x + f32(0.0000000001))
    return int(x // 1) * 4


def count_uhashring(w, total, n):
    return (40 * n * w) // total * 4


def count_hashring(w, total, n):
    return int((w / total) * 40 * n // 1) * 4


def words(label):
    d = hashlib.md5(label.encode()).digest()
    return [int.from_bytes(d[4 * i:4 * i + 4], "little") for i in range(4)]


def base(name):  # libmemcached's label: the host alone on its default port
    host, port = name.rsplit(":", 1)
    return host if port == "11211" else name


def continuum(servers, counts):
    """(value, server, group) sorted: the tie order of src/alg_ketama.c."""
    pts = []
    for i, (name, _) in enumerate(servers):
        for g in range(counts[i] // 4):
            for k, v in enumerate(words("%s-%d" % (base(name), g))):
                pts.append((v, i, g * 4 + k))
    pts.sort()
    return pts


def key_hash(key):
    return words(key)[0]


class Reference:
    def __init__(self, which):
        self.which = which
        self.count = count_uhashring if which == "uhashring" else count_hashring
        if which == "uhashring":
            try:
                from uhashring import HashRing
            except ImportError:
                print("ketama_clients_ref: python3-uhashring is not installed")
                sys.exit(77)
            self.HashRing = HashRing
        else:
            r = subprocess.run(["node", os.path.join(SRC, "tests/ref/hashring_dump.mjs")],
                               input=b'[]', capture_output=True)
            if r.returncode == 77 or r.returncode == 127:
                print("ketama_clients_ref: npm hashring is not installed (npm ci)")
                sys.exit(77)

    def owners(self, cases):
        """Each case's owners: [(servers, keys)...] -> [[owner...]...]."""
        if self.which == "uhashring":
            out = []
            for servers, keys in cases:
                ring = self.HashRing({base(n): {"weight": w} for n, w in servers},
                                     hash_fn="ketama")
                back = {base(n): n for n, _ in servers}
                out.append([back.get(ring.get_node(k)) for k in keys])
            return out
        r = subprocess.run(["node", os.path.join(SRC, "tests/ref/hashring_dump.mjs")],
                           input=json.dumps([{"nodes": s, "keys": k} for s, k in cases]).encode(),
                           capture_output=True, check=True)
        return json.loads(r.stdout)


def main():
    ref = Reference(WHICH)
    rng = random.Random(SEED)
    passed = failed = 0
    why = {"counts": 0, "tie": 0, "dup": 0}
    cases = [[1] * n for n in range(1, 21)]
    cases += [[rng.randint(1, 10) for _ in range(rng.randint(2, 12))] for _ in range(40)]
    count_cases = 0
    sets = []
    for c, weights in enumerate(cases):
        servers = [("10.%d.%d.%d:%d" % (c, i, rng.randrange(1, 255),
                                        11211 if rng.random() < 0.7 else 11212 + i), w)
                   for i, w in enumerate(weights)]
        keys = ["%s:%d" % (rng.choice(["user", "session", "cart", "ключ"]), rng.randrange(10**9))
                for _ in range(NKEYS)]
        sets.append((servers, keys))
    answers = ref.owners(sets)
    for c, weights in enumerate(cases):
        servers, keys = sets[c]
        theirs = answers[c]
        total, n = sum(weights), len(weights)
        lm = [count_libmemcached(w, total, n) for w in weights]
        rf = [ref.count(w, total, n) for w in weights]
        count_cases += lm != rf
        mine = ringsim.Placement("ketama", [{"name": s, "weight": w} for s, w in servers])
        got = mine.lookup_many(keys)
        cl, cr = continuum(servers, lm), continuum(servers, rf)
        vl, vr = [p[0] for p in cl], [p[0] for p in cr]
        values = {}
        for v, i, _ in cl + cr:
            values.setdefault(v, set()).add(i)
        common = [min(a, b) // 4 for a, b in zip(lm, rf)]
        bad = model_bad = 0
        for k, key in enumerate(keys):
            h = key_hash(key)
            at = bisect.bisect_left(vl, h) % len(cl)
            model = servers[cl[at][1]][0]
            if model != got[k]:
                model_bad += 1
                if model_bad <= 3:
                    print("FAIL: case %d key %r: the module %s, libmemcached's rule %s" % (
                        c, key, got[k], model))
            if got[k] == theirs[k]:
                continue
            atr = (bisect.bisect_right(vr, h) if WHICH == "uhashring"
                   else bisect.bisect_left(vr, h)) % len(cr)
            if cl[at][2] // 4 >= common[cl[at][1]] or cr[atr][2] // 4 >= common[cr[atr][1]]:
                why["counts"] += 1
            elif h in values:
                why["tie"] += 1
            elif len(values[cl[at][0]]) > 1 or len(values[cr[atr][0]]) > 1:
                why["dup"] += 1
            else:
                bad += 1
                if bad <= 3:
                    print("FAIL: case %d (weights %s) key %r: ringsim %s, %s %s" % (
                        c, weights, key, got[k], WHICH, theirs[k]))
        ok = bad == 0 and model_bad == 0
        passed += ok
        failed += not ok
    print("ketama_clients_ref %s: %d cases of %d keys (%d where a server's point count "
          "differs); keys that differ, each explained: %d by the counts, %d by a tie, %d by a "
          "shared point value" % (
              WHICH, len(cases), NKEYS, count_cases, why["counts"], why["tie"], why["dup"]))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
