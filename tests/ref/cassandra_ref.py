#!/usr/bin/python3
"""The cassandra core against the DataStax Python driver (python3-cassandra,
Debian's package): its Murmur3 (cassandra.murmur3.murmur3, the C extension,
and the pure-Python _murmur3 beside it), Murmur3Token.hash_fn (the driver's
copy of Murmur3Partitioner.getToken), and its token map (Metadata
.rebuild_token_map, SimpleStrategy.make_token_replica_map, get_replicas).

    cassandra_ref.py PATH/TO/cassandra_tool

Checks, with a fixed seed:
  - raw hash and token of thousands of keys: random bytes with high tails
    (the signed-byte quirk), UTF-8 text, every length 0..64, long keys, and
    lengths that are multiples of 16 (empty tail);
  - a key whose hash is Long.MIN_VALUE (built with the inverse of the hash,
    as Cassandra's LongToken.keyForToken does; the driver confirms the hash)
    gets the token Long.MAX_VALUE;
  - the empty key: same raw hash as the driver; its token is MINIMUM
    (Murmur3Partitioner.getToken), where the driver's hash_fn says 0;
  - random rings with explicit tokens (MIN, MAX, and tokens equal to key
    tokens included) and rings of derived tokens (num_tokens x weight, labels
    name, name#1, ...): the ring order and, for each key and replication
    factor, the replica list, owner first.

Checks docs/api.md, 'GET /api/config' (the catalogue's cassandra).
"""
import random
import subprocess
import sys

from cassandra import murmur3 as m3
from cassandra.metadata import KeyspaceMetadata, Metadata, Murmur3Token

SEED = 3001
MIN, MAX = -(2**63), 2**63 - 1
M64 = (1 << 64) - 1
PARTITIONER = "org.apache.cassandra.dht.Murmur3Partitioner"
C1, C2 = 0x87C37B91114253D5, 0x4CF5AD432745937F


def inv(a):
    return pow(a, -1, 1 << 64)


def rotl(v, n):
    return ((v << n) | (v >> (64 - n))) & M64


def rotr(v, n):
    return rotl(v, 64 - n)


def fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def fmix_inverse(k):
    k ^= k >> 33
    k = (k * inv(0xC4CEB9FE1A85EC53)) & M64
    k ^= k >> 33
    k = (k * inv(0xFF51AFD7ED558CCD)) & M64
    return k ^ (k >> 33)


def key_for_hash(target, rng):
    """A 16-byte key whose first long is target: the one-block hash run
    backwards (the idea of Cassandra's MurmurHash.inv_hash3_x64_128)."""
    b = rng.getrandbits(64)
    a = fmix_inverse((target - fmix(b)) & M64)
    x2 = (b - a) & M64
    x1 = (a - x2) & M64
    h1, h2 = x1 ^ 16, x2 ^ 16
    k1m = rotr(((h1 - 0x52DCE729) * inv(5)) & M64, 27)
    k2m = rotr((((h2 - 0x38495AB5) * inv(5)) - h1) & M64, 31)
    k1 = (rotr((k1m * inv(C2)) & M64, 31) * inv(C1)) & M64
    k2 = (rotr((k2m * inv(C1)) & M64, 33) * inv(C2)) & M64
    return k1.to_bytes(8, "little") + k2.to_bytes(8, "little")


def c_round(x):
    """C's round() for x >= 0: halves away from zero (Python's round() is
    half-even).  x - int(x) is exact for doubles."""
    i = int(x)
    return i + 1 if x - i >= 0.5 else i


def rand_text(rng, lo=1, hi=24):
    pool = "abcdefghijklmnopqrstuvwxyz0123456789 -_#/:" + "üéΩ中ノード🙂"
    return "".join(rng.choice(pool) for _ in range(rng.randint(lo, hi))).encode()


def hash_keys(rng):
    keys = [b""]
    for n in range(0, 65):
        for _ in range(20):
            keys.append(bytes(rng.getrandbits(8) for _ in range(n)))
        keys.append(b"\xff" * n)
        keys.append(b"\x80" * n)
    for n in range(16, 257, 16):  # empty tail
        for _ in range(10):
            keys.append(bytes(rng.getrandbits(8) for _ in range(n)))
    for _ in range(2000):
        keys.append(rand_text(rng, 1, 40))
    for _ in range(200):
        keys.append(bytes(rng.getrandbits(8) for _ in range(rng.randint(100, 1000))))
    return keys


def main():
    tool = sys.argv[1]
    rng = random.Random(SEED)
    cmds, checks = [], []

    # --- hashes and tokens ---
    keys = hash_keys(rng)
    min_key = key_for_hash(MIN, rng)
    if m3.murmur3(min_key) != MIN:
        print("could not build a key whose hash is Long.MIN_VALUE")
        return 1
    keys.append(min_key)
    for key in keys:
        h = m3.murmur3(key)
        if m3._murmur3(key) != h:
            print("the driver's two murmur3 disagree on %r" % key)
            return 1
        # Murmur3Partitioner.getToken: an empty key is MINIMUM; the driver's
        # hash_fn has no such case (it says 0).
        tok = MIN if key == b"" else Murmur3Token.hash_fn(key)
        cmds.append("hash " + key.hex())
        checks.append(("hash %r" % key[:40], "%d %d" % (h, tok)))
    nhash = len(keys)

    # --- rings ---
    nrings = nkeys = 0
    for ring_no in range(160):
        nrings += 1
        n = rng.randint(1, 12)
        names = list(dict.fromkeys(rand_text(rng, 1, 12) for _ in range(n)))
        qkeys = [rand_text(rng) + b"%d" % i for i in range(25)]
        cmds.append("reset")
        token_map = {}
        if ring_no % 2 == 0:  # explicit tokens
            used = set()
            specials = [MIN, MAX, 0, -1, 1] + [Murmur3Token.hash_fn(k) for k in qkeys[:5]]
            for i, nm in enumerate(names):
                toks = []
                for _ in range(rng.randint(1, 20)):
                    t = rng.choice(specials) if rng.random() < 0.15 else rng.randint(MIN, MAX)
                    if t not in used:
                        used.add(t)
                        toks.append(t)
                if not toks:
                    t = rng.randint(MIN, MAX)
                    used.add(t)
                    toks.append(t)
                token_map[i] = [str(t) for t in toks]
                cmds.append("node %s 1.0 %s" % (nm.hex(), ",".join(token_map[i])))
        else:  # derived: num_tokens x weight, labels name, name#1, ...
            # the driver's replica map is pure Python: keep rings to a few
            # thousand tokens (256 only with few nodes)
            nt = rng.choice([1, 4, 16, 16, 64] + ([256] if n <= 3 else []))
            cmds.append("num_tokens %d" % nt)
            for i, nm in enumerate(names):
                w = rng.choice([1.0, 1.0, 2.0, 0.5, 1.5, 0.04, 3.3, 0.03125])
                p = max(1, c_round(nt * w))
                labels = [nm] + [nm + b"#%d" % j for j in range(1, p)]
                token_map[i] = [str(Murmur3Token.hash_fn(lb)) for lb in labels]
                cmds.append("node %s %r" % (nm.hex(), w))
        md = Metadata()
        md.rebuild_token_map(PARTITIONER, token_map)
        tm = md.token_map
        cmds.append("ring")
        checks.append(("ring %d" % ring_no,
                       " ".join("%d:%d" % (t.value, tm.token_to_host_owner[t]) for t in tm.ring)))
        rfs = sorted({1, rng.randint(2, len(names) + 1), len(names) + 1})
        for rf in rfs:
            md.keyspaces["ks%d" % rf] = KeyspaceMetadata("ks%d" % rf, True, "SimpleStrategy",
                                                         {"replication_factor": str(rf)})
        for key in qkeys:
            rf = rng.choice(rfs)
            reps = md.get_replicas("ks%d" % rf, key)
            cmds.append("key %s %d" % (key.hex(), rf))
            checks.append(("ring %d key %r rf %d" % (ring_no, key, rf),
                           " ".join(str(x) for x in [Murmur3Token.hash_fn(key)] + list(reps))))
            nkeys += 1

    out = subprocess.run([tool], input="\n".join(cmds) + "\n", capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        print("tool failed with status %d: %s" % (out.returncode, out.stderr))
        return 1
    lines = out.stdout.splitlines()
    if len(lines) != len(checks):
        print("tool printed %d lines for %d checks" % (len(lines), len(checks)))
        return 1
    bad = 0
    for (what, want), got in zip(checks, lines):
        if got != want:
            bad += 1
            if bad <= 5:
                print("%s\n  core:   %s\n  driver: %s" % (what, got[:300], want[:300]))
    print("cassandra: %d hashed keys, %d rings, %d replica lists, %d mismatches, seed %d"
          % (nhash, nrings, nkeys, bad, SEED))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
