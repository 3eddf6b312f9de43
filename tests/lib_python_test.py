#!/usr/bin/python3
"""The Python module `ringsim` gives `ringsim lookup`'s answers (API.md
"Version 4: the placement library").

    PYTHONPATH=DIR python3 tests/lib_python_test.py PATH/TO/ringsim [EXPECTED_MODULE_DIR]

For every algorithm `ringsim algorithms --json` lists, each round: random
parameters (each named choice in turn), replicas where the algorithm has
them, random nodes (weights by the algorithm's rule, some down, HAProxy ids
and backups) and keys (str and the same as bytes).  The command line builds
the same topology in a fresh database (the nodes, then `config
--algorithm`: a switch builds the layout afresh, as the module does) and
`key ls --json` must give every key's owner ("node"), served_by and
replicas as Placement.lookup, .served_by, .replicas and .lookup_many do.
Refusals must agree.  Placement.moves(other, keys) must list exactly the
keys whose owner differs between two fresh databases (the nodes, and the
nodes plus one).  Then the module's own surface: ringsim.algorithms() is
the catalogue, ringsim.Error and its code, keys of the wrong type,
lookup_many from several threads at once.

With EXPECTED_MODULE_DIR, the module imported must come from there (the
installed copy).  Prints its seed (RINGSIM_SEED=N reruns it); ends with
"N passed, N failed".
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

import ringsim

BIN = sys.argv[1]
PASSED = 0
FAILED = 0
ROUNDS = int(os.environ.get("RINGSIM_LIB_ROUNDS", "2"))
SEED = int(os.environ.get("RINGSIM_SEED", str(int(time.time() * 1000) ^ os.getpid())))
rng = random.Random(SEED)
TMP = tempfile.mkdtemp(prefix="ringsim-py.")
DB = [0]


def check(ok, what):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        return
    FAILED += 1
    if FAILED <= 20:
        print("FAIL:", what)


def cli(db, *args, want_json=False):
    r = subprocess.run([BIN, "--db", db, "--json", *args], capture_output=True)
    if want_json:
        return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None)
    return r.returncode, r.stderr.decode(errors="replace")


EXOTIC = ["ü", "ノ", "🙂", "é", "中"]
ALPHA = "abcdefghijklmnopqrstuvwxyz0123456789:_-./ #"


def rand_key():
    s = "".join(rng.choice(ALPHA) if rng.random() < 0.9 else rng.choice(EXOTIC)
                for _ in range(rng.randint(1, 20)))
    return ("{user%d}:" % rng.randrange(50) + s) if rng.random() < 0.1 else s


SETS = {
    "points_per_node": ["1", "3", "40", "160"], "probes": ["21", "1", "2", "50"],
    "min_ring_size": ["16", "64", "1024"], "max_ring_size": ["1024", "4096"],
    "table_size": ["251", "1021", "65537"], "num_tokens": ["16", "1", "4"],
    "hash_balance_factor": ["0", "150"], "balance_factor": ["0", "125"],
    "panic_threshold": ["50", "0", "100", "80"], "allbackups": ["0", "1"],
    "consistent": ["1", "0"],
}


def random_case(alg, rnd):
    params = {}
    for p in alg["params"]:
        vals = p.get("values") or SETS.get(p["name"])
        if vals:
            params[p["name"]] = vals[(rnd + rng.randrange(3)) % len(vals)]
    if alg["replica_rule"] != "no" and rng.random() < 0.5:
        params["replicas"] = rng.randint(1, 4)
    rule = alg["weight_rule"]
    nodes = []
    for i in range(0 if rng.random() < 0.08 else rng.randint(1, 9)):
        host = ("cache-%s-%d" % (rng.choice(EXOTIC), i) if rng.random() < 0.15
                else "10.%d.%d.%d" % (i, rng.randrange(256), rng.randrange(256)))
        n = {"name": "%s:%d" % (host, rng.choice([11211, 6379, 6380]))}
        n["weight"] = (rng.choice([1, 0.5, 2, 3.25, 7]) if rule == "any" else
                       rng.choice([1, 2, 3, 5]) if rule == "whole" else 1)
        if rng.random() < 0.25:
            n["state"] = "down"
        if alg["name"] == "haproxy":
            if rng.random() < 0.2:
                n["backup"] = True
            if rng.random() < 0.3:
                n["id"] = 1 + 7 * i + rng.randrange(5)
        nodes.append(n)
    keys = list(dict.fromkeys(rand_key() for _ in range(50)))
    return params, nodes, keys


def cli_state(alg, params, nodes):
    """A fresh database with the case: (db, refused)."""
    DB[0] += 1
    db = os.path.join(TMP, "db-%d" % DB[0])
    for n in nodes:
        args = ["node", "add", "--weight", repr(float(n["weight"]))]
        if n.get("state") == "down":
            args.append("--down")
        if n.get("backup"):
            args.append("--backup")
        if "id" in n:
            args += ["--id", str(n["id"])]
        rc, err = cli(db, *args, "--", n["name"])
        if rc:
            raise RuntimeError("node add %s: %s" % (n["name"], err))
    args = ["config", "--algorithm", alg]
    for k, v in params.items():
        args += (["--replicas", str(v)] if k == "replicas" else ["--param", "%s=%s" % (k, v)])
    rc, err = cli(db, *args)
    if rc not in (0, 1):
        raise RuntimeError("config: %s" % err)
    return db, rc == 1


def cli_keys(db, keys):
    rc, err = cli(db, "key", "add", "--", *keys)
    if rc:
        raise RuntimeError("key add: %s" % err)
    rc, ls = cli(db, "key", "ls", want_json=True)
    return {k["key"]: k for k in ls["keys"]}


def placement(alg, params, nodes):
    try:
        return ringsim.Placement(alg, nodes, params)
    except ringsim.Error:
        return None


def compare(alg, params, nodes, keys):
    p = placement(alg, params, nodes)
    db, refused = cli_state(alg, params, nodes)
    check((p is None) == refused, "%s %s: the module %s, the command line %s (nodes %s)" % (
        alg, params, "refuses" if p is None else "builds", "refuses" if refused else "builds",
        nodes))
    if p is None or refused:
        return None
    got = cli_keys(db, keys)
    many = p.lookup_many(keys)
    many_b = p.lookup_many([k.encode() for k in keys])
    reps = int(params.get("replicas", 1))
    for i, k in enumerate(keys):
        o = got.get(k)
        if o is None:
            check(False, "%s: key ls lacks %r" % (alg, k))
            continue
        mine = (p.lookup(k), p.served_by(k), p.replicas(k))
        want_reps = o.get("replicas", [o["node"]] if o["node"] is not None else [])
        ok = (mine[0] == o["node"] and mine[1] == o["served_by"] and mine[2] == want_reps
              and many[i] == o["node"] and many_b[i] == o["node"]
              and p.lookup(k.encode()) == o["node"])
        check(ok, "%s %s: key %r: module %s lookup_many %s, CLI node %s served_by %s "
              "replicas %s (replicas %d; nodes %s)" % (
                  alg, params, k, mine, many[i], o["node"], o["served_by"], want_reps, reps,
                  nodes))
    # Two by `lookup` itself: every field it answers.
    for k in rng.sample(keys, 2):
        rc, lk = cli(db, "lookup", "--", k, want_json=True)
        check(rc == 0 and lk["node"] == p.lookup(k) and lk["served_by"] == p.served_by(k)
              and lk["replicas"] == p.replicas(k),
              "%s: lookup %r: CLI %s, module %s %s %s" % (
                  alg, k, lk and (lk["node"], lk["served_by"], lk["replicas"]), p.lookup(k),
                  p.served_by(k), p.replicas(k)))
    return p, got


def compare_moves(alg, params, nodes, keys, p, before):
    """One node more: moves() against two fresh databases."""
    extra = {"name": "10.250.%d.1:11211" % rng.randrange(250), "weight": 1}
    q = placement(alg, params, nodes + [extra])
    db, refused = cli_state(alg, params, nodes + [extra])
    check((q is None) == refused, "%s: moves: the two sides agree to build" % alg)
    if q is None or refused:
        return
    after = cli_keys(db, keys)
    want = [(k, before[k]["node"], after[k]["node"]) for k in keys
            if before[k]["node"] != after[k]["node"]]
    got = p.moves(q, keys)
    check(got == want, "%s %s: moves() %d %s, the databases %d %s" % (
        alg, params, len(got), got[:3], len(want), want[:3]))


def surface(catalogue):
    names = [a["name"] for a in catalogue]
    check(ringsim.algorithms() == names, "ringsim.algorithms() %s is the catalogue %s" % (
        ringsim.algorithms(), names))
    check(ringsim.__version__ == subprocess.run(
        [BIN, "--version"], capture_output=True, text=True).stdout.split()[-1],
        "ringsim.__version__ is the program's")
    try:
        ringsim.Placement("no-such", [])
        check(False, "an unknown algorithm raises")
    except ringsim.Error as e:
        check(e.code == -3 and isinstance(e, ValueError) and "no-such" in str(e),
              "ringsim.Error for an unknown algorithm: code %s, %s" % (e.code, e))
    try:
        ringsim.Placement("ring", ["a", "a"])
        check(False, "a node twice raises")
    except ringsim.Error as e:
        check(e.code == -5, "a node twice: code %s (RINGSIM_ECONFLICT)" % e.code)
    try:
        ringsim.Placement("jump", [{"name": "a", "weight": 2}])
        check(False, "jump refuses weights")
    except ringsim.Error as e:
        check(e.code == -3 and "jump" in str(e), "jump with a weight: %s" % e)
    p = ringsim.Placement("ring", ["a", {"name": "b", "location": {"dc": "dc1", "rack": "r1"}}],
                          {"points_per_node": 40, "replicas": 2})
    check(p.algorithm == "ring" and "ring" in repr(p), "Placement.algorithm and repr")
    for bad in (1, None, ["k"]):
        try:
            p.lookup(bad)
            check(False, "a key of type %s raises" % type(bad).__name__)
        except TypeError:
            check(True, "")
    try:
        p.lookup("")
        check(False, "an empty key raises")
    except ringsim.Error as e:
        check(e.code == -2, "an empty key: code %s (RINGSIM_ENAME)" % e.code)
    try:
        p.lookup_many(["ok", "bad\n"])
        check(False, "lookup_many with a bad key raises")
    except ringsim.Error as e:
        check("1" in str(e), "lookup_many names the bad key's index: %s" % e)
    check(ringsim.Placement("ketama", []).lookup("k") is None, "no node: lookup is None")
    r = ringsim.Placement("redis", [{"name": "m1", "slots": [[0, 16383]], "state": "down",
                                     "replicas": ["10.9.9.9:7000"]}])
    check(r.lookup("k") == "m1" and r.served_by("k") == "10.9.9.9:7000",
          "redis: slots as pairs, a down master's replica serves")
    # lookup_many from several threads at once: the one-thread answers.
    keys = ["user:%d" % i for i in range(20000)]
    k = ringsim.Placement("ketama", ["10.0.0.%d:11211" % i for i in range(1, 9)])
    want = k.lookup_many(keys)
    out = [None] * 4

    def work(i):
        out[i] = k.lookup_many(keys)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(all(o == want for o in out), "lookup_many on four threads gives the one-thread answers")


def main():
    print("lib_python_test: seed %d (RINGSIM_SEED=%d reruns it); module %s" % (
        SEED, SEED, ringsim.__file__))
    if len(sys.argv) > 2:
        check(os.path.dirname(os.path.abspath(ringsim.__file__)) == os.path.abspath(sys.argv[2]),
              "the module comes from %s, not %s" % (sys.argv[2], ringsim.__file__))
    rc, catalogue = cli(os.path.join(TMP, "cat"), "algorithms", want_json=True)
    catalogue = catalogue["algorithms"] if rc == 0 else []
    check(len(catalogue) >= 12, "ringsim algorithms --json")
    surface(catalogue)
    for rnd in range(ROUNDS):
        for alg in catalogue:
            params, nodes, keys = random_case(alg, rnd)
            res = compare(alg["name"], params, nodes, keys)
            if res and rnd == 0:
                compare_moves(alg["name"], params, nodes, keys, *res)
    subprocess.run(["rm", "-rf", TMP])
    if FAILED:
        print("lib_python_test: seed %d failed (RINGSIM_SEED=%d reruns it)" % (SEED, SEED))
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
