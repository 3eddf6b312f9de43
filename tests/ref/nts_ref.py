#!/usr/bin/python3
"""nts_ref.py - Cassandra's NetworkTopologyStrategy (API.md v4) against the
DataStax Python driver (python3-cassandra 3.25, Debian's package) and a
second, independent reading of Cassandra 4.x's own algorithm written here.

Reference: cassandra.metadata.NetworkTopologyStrategy.make_token_replica_map
(the driver's replica map; hosts built with cassandra.pool.Host, a dc and a
rack each).  The driver is not Cassandra: where it returns a node twice (a
node met at two tokens before every rack holds a replica) it is skipped and
counted; everywhere else ringsim's replicas must be the driver's as a set.
Against calculate_natural_replicas below (Cassandra 4.x's
NetworkTopologyStrategy.calculateNaturalReplicas, DatacenterEndpoints: new
rack always, a seen rack while acceptableRackRepeats = rf - racks allows,
never a node twice, each dc up to min(rf, its nodes)) they must be equal in
order.  And lookup's "python-driver" step must say "same" exactly when the
driver's answer is that set without duplicates.

Each seed: random datacenters (1-3, names with spaces and UTF-8), racks
(1-4 per dc), nodes (1-7 per dc, weights 1-3), num_tokens (1, 2, 4, 8,
16), a factor per dc (0-4, sometimes a dc of the map with no node, or a
node's dc missing from the map), the cluster built through ringsim's HTTP
API (`ringsim serve`), 60 keys looked up.  A failure prints the seed.

Usage: nts_ref.py RINGSIM.  Exit 0 pass, 1 fail.
"""
import http.client
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import urllib.parse

from cassandra.metadata import Murmur3Token, NetworkTopologyStrategy
from cassandra.policies import SimpleConvictionPolicy
from cassandra.pool import Host

SEED = int(os.environ.get("NTS_SEED", "2804"))
CLUSTERS = int(os.environ.get("NTS_CLUSTERS", "60"))
KEYS = 60


class Api:
    def __init__(self, binary, db):
        self.p = subprocess.Popen([binary, "serve", "--port", "0", "--db", db],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            raise SystemExit("server did not start: %r %s" % (line, self.p.stderr.read()))
        self.port = int(m.group(1))

    def call(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        out = json.loads(r.read() or b"null")
        c.close()
        if r.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, out))
        return out

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


def calculate_natural_replicas(ring, owner, dc_of, rack_of, rf, nodes_in, racks_in, start):
    """Cassandra 4.x, read again: ring is the token list, owner[t] its node."""
    replicas, seen_racks, dcs = [], set(), {}
    for dc, f in rf.items():
        if f <= 0 or nodes_in.get(dc, 0) <= 0:
            continue
        dcs[dc] = {"left": min(f, nodes_in[dc]), "repeats": f - racks_in.get(dc, 0)}
    to_fill = len(dcs)
    for j in range(len(ring)):
        if to_fill == 0:
            break
        ep = owner[ring[(start + j) % len(ring)]]
        d = dcs.get(dc_of[ep])
        if d is None or d["left"] == 0:
            continue
        loc = (dc_of[ep], rack_of[ep])
        if loc not in seen_racks:
            seen_racks.add(loc)
        elif d["repeats"] <= 0 or ep in replicas:
            continue
        else:
            d["repeats"] -= 1
        replicas.append(ep)
        d["left"] -= 1
        if d["left"] == 0:
            to_fill -= 1
    return replicas


def names(rng, k, prefix):
    pool = ["%s%d" % (prefix, i) for i in range(k)]
    # a few names people write: spaces, UTF-8
    if rng.random() < 0.3:
        pool[0] = "%s Zürich ☃" % prefix
    return pool


def one(api, rng, seed_no, stats):
    api.call("POST", "/api/reset")
    ndc = rng.randint(1, 3)
    dcs = names(rng, ndc, "dc")
    rf = {}
    for dc in dcs:
        if rng.random() < 0.85:
            rf[dc] = rng.randint(0, 4)
    if rng.random() < 0.2:
        rf["empty dc"] = rng.randint(1, 3)  # a dc of the map without nodes
    if sum(rf.values()) == 0:
        rf[dcs[0]] = rng.randint(1, 3)
    nt = rng.choice([1, 2, 4, 8, 16])
    api.call("PUT", "/api/config", {"algorithm": "cassandra", "replicas": sum(rf.values()),
                                    "params": {"num_tokens": nt, "strategy": "network_topology",
                                               "replication": rf}})
    dc_of, rack_of = {}, {}
    for dc in dcs:
        racks = names(rng, rng.randint(1, 4), "rack")
        for i in range(rng.randint(1, 7)):
            name = "%s-n%d" % (dc, i)
            rack = rng.choice(racks)
            dc_of[name], rack_of[name] = dc, rack
            loc = [["dc", dc], ["rack", rack]]
            if rng.random() < 0.3:
                loc.append(["host", "h%d" % i])
            api.call("POST", "/api/nodes", {"name": name, "weight": rng.randint(1, 3),
                                            "location": loc})
    ring_pts = api.call("GET", "/api/ring")["points"]
    owner = {int(p["coordinate"]): p["node"] for p in ring_pts}
    ring = [int(p["coordinate"]) for p in ring_pts]
    nodes_in, racks_in = {}, {}
    for n, dc in dc_of.items():
        nodes_in[dc] = nodes_in.get(dc, 0) + 1
    for dc in dcs:
        racks_in[dc] = len({rack_of[n] for n in dc_of if dc_of[n] == dc})
    hosts = {n: Host(n, SimpleConvictionPolicy, datacenter=dc_of[n], rack=rack_of[n])
             for n in dc_of}
    tokens = [Murmur3Token(t) for t in ring]
    strategy = NetworkTopologyStrategy({dc: str(f) for dc, f in rf.items()})
    rmap = strategy.make_token_replica_map({Murmur3Token(t): hosts[owner[t]] for t in ring},
                                           tokens)
    bad = 0
    for k in range(KEYS):
        key = "k%d-%d" % (seed_no, k)
        lk = api.call("GET", "/api/lookup?key=" + urllib.parse.quote(key))
        token = int(lk["point"]["coordinate"])
        got = lk["replicas"]
        want = calculate_natural_replicas(ring, owner, dc_of, rack_of, rf, nodes_in, racks_in,
                                          ring.index(token))
        drv = [str(h.endpoint.address) for h in rmap[Murmur3Token(token)]]
        dup = len(set(drv)) != len(drv)
        step = next((s["detail"] for s in lk["trace"] if s["step"] == "python-driver"), "")
        stats["keys"] += 1
        if got != want:
            bad += 1
            print("seed %d cluster %d key %r: ringsim %s, Cassandra 4.x %s" % (SEED, seed_no, key, got, want))
        if dup:
            stats["dup"] += 1
        elif set(drv) != set(got):
            bad += 1
            print("seed %d cluster %d key %r: ringsim %s, python driver %s" % (SEED, seed_no, key, got, drv))
        else:
            stats["same"] += 1
            stats["order"] += drv != got
        says_same = "routes to the same replicas" in step
        if says_same != (not dup and set(drv) == set(got)):
            bad += 1
            print("seed %d cluster %d key %r: lookup says %r; driver %s, ringsim %s" % (SEED, seed_no, key, step, drv, got))
    return bad


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rng = random.Random(SEED)
    stats = {"keys": 0, "dup": 0, "same": 0, "order": 0}
    with tempfile.TemporaryDirectory() as tmp:
        api = Api(sys.argv[1], os.path.join(tmp, "nts.db"))
        try:
            bad = sum(one(api, rng, i, stats) for i in range(CLUSTERS))
        finally:
            api.stop()
    print("nts: %d clusters, %d keys: %d equal to the python driver as a set (%d in another "
          "order), %d where the driver repeats a node; %d failed, seed %d"
          % (CLUSTERS, stats["keys"], stats["same"], stats["order"], stats["dup"], bad, SEED))
    print("%d passed, %d failed" % (stats["keys"] - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
