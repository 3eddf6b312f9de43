#!/usr/bin/env python3
"""tests/trace_python_test.py - the Python module replays a log too.

Placement.replay(keys) over the keys of a generated access log (read here
with Python's gzip) against `ringsim trace --json` of the same file on a
database with the same nodes, algorithm and a node down: the requests of
every node and the unserved must be equal.  A key that is not a str or bytes
is refused with TypeError, nothing half-counted.

    python3 tests/trace_python_test.py build/ringsim build/python
"""
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time

BIN, PYDIR = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, PYDIR)
import ringsim  # noqa: E402

SEED = int(os.environ.get("RINGSIM_TEST_SEED", "29"))
rng = random.Random(SEED)
passed = failed = 0


def check(ok, what):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    if not ok:
        print(f"FAIL (seed {SEED}): {what}")


with tempfile.TemporaryDirectory(prefix="ringsim-trace-py-") as tmp:
    db = os.path.join(tmp, "t.db")
    nodes = [f"10.0.0.{i}:80" for i in range(1, 6)]

    def rs(*a):
        return subprocess.run([BIN, "--db", db, *a], check=True, capture_output=True).stdout

    for algorithm in ("nginx", "ketama", "maglev"):
        if os.path.exists(db):
            os.unlink(db)
        rs("config", "--algorithm", algorithm)
        for n in nodes:
            rs("node", "add", n)
        rs("node", "down", nodes[2])
        path = os.path.join(tmp, "access.log.gz")
        with gzip.open(path, "wt") as f:
            for i in range(20000):
                t = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(1796551200 + i // 10))
                k = int(5000 * rng.random() ** 2)
                f.write(f'192.0.2.{i % 200} - - [{t}] "GET /p/{k}?v=1 HTTP/1.1" 200 {k} "-" "t"\n')
        cli = json.loads(rs("trace", path, "--json"))
        place = ringsim.Placement(algorithm, [{"name": n, "state": "down"} if n == nodes[2] else n for n in nodes])
        keys = (line.split('"')[1].split(" ")[1] for line in gzip.open(path, "rt"))
        got = place.replay(keys)
        want = {n["name"]: n["requests"] for n in cli["nodes"] if n["requests"]}
        check(got["requests"] == cli["requests"] == 20000, f"{algorithm}: requests {got['requests']} vs {cli['requests']}")
        check(got["unserved"] == cli["unserved"], f"{algorithm}: unserved {got['unserved']} vs {cli['unserved']}")
        check(got["nodes"] == want, f"{algorithm}: nodes {got['nodes']} vs {want}")
        check(nodes[2] not in got["nodes"], f"{algorithm}: the down node served nothing")
    try:
        place.replay(["a", 3, "b"])
        check(False, "a key that is a number is refused")
    except TypeError:
        check(True, "")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
