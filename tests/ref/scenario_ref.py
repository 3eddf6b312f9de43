#!/usr/bin/python3
"""scenario_ref.py - where the exact numbers of the shipped scenarios come from.

The scenarios in scenarios/ teach with numbers: "delta holds 1,856 of the
5,000 keys", "removing it moves exactly those 1,856".  Those numbers are not
ringsim's output copied into a file: this script computes them from the
published rules alone, with Python's hashlib and nothing of ringsim --

  * the ring of API.md ("Positions and placement"): position(s) = the first
    4 bytes of SHA-256(s), big-endian; a node with P points owns the labels
    name, name#1 ... name#(P-1); a key goes to the first point at or after
    its position (wrapping); ties by (position, name bytes, point index);
    with R replicas, the preference list walks on clockwise from the owner's
    point to the next distinct nodes (Dynamo's rule);
  * Redis Cluster's key slot (the cluster specification): CRC16-XMODEM of
    the key, or of its {hash tag}, mod 16384, and the split of
    `redis-cli --cluster create` over three masters from the Redis cluster
    tutorial (0-5460, 5461-10922, 10923-16383);
  * API.md's workloads ("Version 3: traffic"): `keys` shares, and Zipf
    shares r^-s over the stored keys ranked by sha64(seed + ":" + key)
    (ties by key bytes), normalised by the exact sum;
  * Lamping & Veach's jump consistent hash (arXiv:1406.2294, their C++
    function, LCG 2862933555777941757, double arithmetic) of sha64(key), the
    first 8 bytes of SHA-256(key) big-endian (API.md, "jump").

-- and checks that every `expect` line it derives is in the scenario file,
word for word.  So a scenario that `make test` runs (tests/run_scenario.sh)
agrees with an implementation that is not ringsim's, and a changed file
that no longer says what the rules say fails here.

Usage: scenario_ref.py SCENARIO_DIR.  Exit 0 when every line is found.

Checks docs/api.md, 'Scenario files'.
"""
import bisect
import math
import hashlib
import sys


def digest(s):
    return hashlib.sha256(s.encode("utf-8")).digest()


def position(s):
    return int.from_bytes(digest(s)[:4], "big")


def sha64(s):
    return int.from_bytes(digest(s)[:8], "big")


class Ring:
    """API.md's ring: points (position, name bytes, index, name), sorted."""

    def __init__(self, nodes, points=1):
        pts = []
        for n in nodes:
            for i in range(points):
                pts.append((position(n if i == 0 else f"{n}#{i}"), n.encode(), i, n))
        pts.sort()
        self.pts = pts
        self.pos = [p[0] for p in pts]
        self.distinct = len(set(nodes))

    def first(self, key):
        return bisect.bisect_left(self.pos, position(key)) % len(self.pts)

    def owner(self, key):
        return self.pts[self.first(key)][3]

    def prefs(self, key, r):
        i, out = self.first(key), []
        while len(out) < min(r, self.distinct):
            n = self.pts[i % len(self.pts)][3]
            if n not in out:
                out.append(n)
            i += 1
        return out


def counts(ring, nodes, keys):
    c = {n: 0 for n in nodes}
    for k in keys:
        c[ring.owner(k)] += 1
    return c


def moves(before, after, keys):
    return sum(1 for k in keys if before.owner(k) != after.owner(k))


def replica_moves(before, after, keys, r):
    """(key, node) copies a change adds to preference lists, beyond the owner
    moves (API.md, "replica_moves")."""
    total = 0
    for k in keys:
        a, b = before.prefs(k, r), after.prefs(k, r)
        added = [n for n in b if n not in a]
        total += len(added)
        if a[0] != b[0] and b[0] not in a:
            total -= 1  # that copy is the owner move itself
    return total


def max_over_mean(c):
    v = list(c.values())
    return max(v) / (sum(v) / len(v))


def jump(key, buckets):
    """Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm"."""
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) % (1 << 64)
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def crc16(data):
    """CRC16-XMODEM (polynomial 0x1021, initial value 0), Redis's key hash."""
    c = 0
    for b in data:
        c ^= b << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else c << 1
            c &= 0xFFFF
    return c


def key_slot(key):
    """The cluster specification's HASH_SLOT: the {tag} when it is not empty."""
    k = key.encode("utf-8")
    i = k.find(b"{")
    if i >= 0:
        j = k.find(b"}", i + 1)
        if j > i + 1:
            k = k[i + 1:j]
    return crc16(k) % 16384


def num(v):
    """The shortest decimal that reads back as v (as the scenario writes it)."""
    for p in range(1, 18):
        t = f"{v:.{p}g}"
        if float(t) == v:
            return t
    return repr(v)


def keys(n):
    return [f"key-{i}" for i in range(n)]


def expected():
    """scenario file -> the expect lines the rules give."""
    out = {}

    # fill: five nodes, 10,000 keys, then 100 points per node.
    nodes = ["alpha", "bravo", "charlie", "delta", "echo"]
    ks = keys(10000)
    one, hundred = Ring(nodes), Ring(nodes, 100)
    out["fill"] = [
        f"expect max_over_mean == {num(max_over_mean(counts(one, nodes, ks)))}",
        f"expect keys_moved == {moves(one, hundred, ks)}",
        f"expect max_over_mean == {num(max_over_mean(counts(hundred, nodes, ks)))}",
    ]

    # remove: four nodes, 5,000 keys; the busiest leaves.
    nodes = ["alpha", "bravo", "charlie", "delta"]
    ks = keys(5000)
    ring = Ring(nodes)
    c = counts(ring, nodes, ks)
    victim = max(c, key=c.get)
    rest = [n for n in nodes if n != victim]
    after = Ring(rest)
    first = next(k for k in ks if ring.owner(k) == victim)
    out["remove"] = [
        f"expect owner({first}) == {victim}",
        f"node rm {victim}",
        f"expect keys_moved == {c[victim]}",
        f"expect owner({first}) == {after.owner(first)}",
    ]

    # grow: the same four and 5,000 keys; foxtrot joins, with one point per
    # node and then with a hundred.
    grown = nodes + ["foxtrot"]
    took = next(k for k in ks if Ring(grown).owner(k) == "foxtrot")
    out["grow"] = [
        f"expect keys_moved == {moves(Ring(nodes), Ring(grown), ks)}",
        f"expect owner({took}) == foxtrot",
        f"expect keys_moved == {moves(Ring(nodes, 100), Ring(grown, 100), ks)}",
    ]

    # names: node-1, node-2, node-3 and 3,000 keys.
    nodes = ["node-1", "node-2", "node-3"]
    ring = Ring(nodes)
    out["names"] = [f"expect max_over_mean == {num(max_over_mean(counts(ring, nodes, keys(3000))))}"]

    # jump-memento: n0..n4 by jump hash, 10,000 keys; n4 (the last bucket)
    # leaves, then n1 (a middle one) leaves and joins again.
    ks = keys(10000)
    five = {k: jump(sha64(k), 5) for k in ks}
    four = {k: jump(sha64(k), 4) for k in ks}
    on1 = next(k for k in ks if four[k] == 1)
    on3 = next(k for k in ks if four[k] == 3)
    out["jump-memento"] = [
        f"expect keys_moved == {sum(1 for k in ks if five[k] == 4)}",
        f"expect owner({on1}) == n1",
        f"expect owner({on3}) == n3",
        f"expect keys_moved == {sum(1 for k in ks if four[k] == 1)}",
        # what plain jump hash would move: n2 and n3 renumbered to 1 and 2
        f"# {sum(1 for k in ks if ['n0', 'n1', 'n2', 'n3'][four[k]] != ['n0', 'n2', 'n3'][jump(sha64(k), 3)])} keys",
    ]

    # redis-slots: three masters in join order, the create split.
    masters = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"]
    split = [(0, 5460), (5461, 10922), (10923, 16383)]

    def redis_owner(key):
        s = key_slot(key)
        return next(m for m, (lo, hi) in zip(masters, split) if lo <= s <= hi)

    out["redis-slots"] = [f"expect owner({k}) == {redis_owner(k)}" for k in
                          ["foo", "hello", "{user1000}.following", "{user1000}.followers"]]

    # replicas-3: six nodes with 64 points each, three copies of 12,000
    # keys; n3 leaves.
    nodes = [f"n{i}" for i in range(1, 7)]
    ks = keys(12000)
    before, after = Ring(nodes, 64), Ring([n for n in nodes if n != "n3"], 64)
    held = sum(1 for k in ks if "n3" in before.prefs(k, 3))
    out["replicas-3"] = [
        f"expect keys_moved == {moves(before, after, ks)}",
        f"expect replica_moves == {replica_moves(before, after, ks, 3)}",
        f"# n3 held a copy of {held} keys",
    ]
    return out


def bounds(name, v, places):
    """The two expect lines that hold v between decimals of `places` digits."""
    lo = math.floor(v * 10**places) / 10**places
    return [f"expect {name} > {lo:.{places}f}", f"expect {name} < {lo + 10**-places:.{places}f}"]


def request_loads(ring, nodes, share):
    """Each node's share of requests (share: key -> its share)."""
    load = {n: 0.0 for n in nodes}
    for k, w in share.items():
        load[ring.owner(k)] += w
    return load


def workload_expected(out):
    # hot-key: four caches, 100 points, 10,000 keys, key-42 takes 30%.
    ks = keys(10000)
    share = {k: 0.7 / (len(ks) - 1) for k in ks}
    share["key-42"] = 0.3
    four = [f"cache-{i}" for i in range(1, 5)]
    eight = [f"cache-{i}" for i in range(1, 9)]
    r4, r8 = Ring(four, 100), Ring(eight, 100)
    l4, l8 = request_loads(r4, four, share), request_loads(r8, eight, share)
    out["hot-key"] = [
        f"expect max_over_mean == {num(max_over_mean(counts(r4, four, ks)))}",
        f"expect requests_bound == {num(max(1, 4 * 0.3))}",
        f"expect owner(key-42) == {r4.owner('key-42')}",
        *bounds("requests_max_over_mean", max(l4.values()) * 4, 3),
        f"expect requests_bound == {num(max(1, 8 * 0.3))}",
        *bounds("requests_max_over_mean", max(l8.values()) * 8, 3),
    ]

    # cache-add: three caches, 160 points, 20,000 keys, Zipf s = 1.1; a
    # fourth joins.
    ks = keys(20000)
    ranked = sorted(ks, key=lambda k: (sha64(f"0:{k}"), k.encode()))
    weights = [r ** -1.1 for r in range(1, len(ks) + 1)]
    total = math.fsum(weights)
    share = {k: w / total for k, w in zip(ranked, weights)}
    three = [f"cache-{i}" for i in range(1, 4)]
    before, after = Ring(three, 160), Ring(three + ["cache-4"], 160)
    moved = [k for k in ks if before.owner(k) != after.owner(k)]
    out["cache-add"] = [
        *bounds("hottest_share", max(share.values()), 4),
        f"expect keys_moved == {len(moved)}",
        *bounds("requests_moved", math.fsum(share[k] for k in moved), 4),
    ]


def main():
    if len(sys.argv) != 2:
        print("usage: scenario_ref.py SCENARIO_DIR", file=sys.stderr)
        return 2
    failed = 0
    exp = expected()
    workload_expected(exp)
    for name, lines in exp.items():
        path = f"{sys.argv[1]}/{name}.ringsim"
        try:
            with open(path, encoding="utf-8") as f:
                text = [l.strip() for l in f]
        except OSError as e:
            print(f"FAIL: {path}: {e}")
            failed += 1
            continue
        for line in lines:
            found = line in text if not line.startswith("#") else any(
                line[2:] in t for t in text if t.startswith("#"))
            if not found:
                print(f"FAIL: {path} does not say: {line}")
                failed += 1
    total = sum(len(v) for v in exp.values())
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
