#!/usr/bin/env python3
"""tests/trace_cli_test.py - `ringsim trace` against an independent recount.

Generated logs in every format (access-log, twitter, oracle-general, csv,
keys; plain, gzip, zstd) are replayed with `ringsim trace --json`, and each
answer is compared with a recount made here: the node that serves each key
comes from `ringsim lookup --json` (its served_by, with a node down), the
requests, bytes, distinct keys, peak per second and load against the fair
share are counted in Python, each node's LRU is an OrderedDict, and a node
added mid-log gets its owners from a copy of the database where that node
was really added.  The miss spike after the change is checked in the series.
Bad lines are counted and named; a file not of its format is refused with
one line on stderr and exit status 1.

    python3 tests/trace_cli_test.py build/ringsim
"""
import collections
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1])
SEED = int(os.environ.get("RINGSIM_TEST_SEED", "29"))
rng = random.Random(SEED)
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL (seed {SEED}): {what}")


def run(db, *args, stdin=None, ok=True):
    p = subprocess.run([BIN, "--db", db, *args], capture_output=True, input=stdin)
    if ok and p.returncode != 0:
        raise SystemExit(f"ringsim {' '.join(args)}: {p.returncode} {p.stderr.decode()}")
    return p


def owners(db, keys):
    return {k: json.loads(run(db, "lookup", "--json", "--", k).stdout)["served_by"] for k in keys}


def recount(records, own, nodes, fair, cache=None, own_after=None, at=None, fair_after=None):
    """records: (key, bytes, time); own: key -> node or None."""
    c = {n: dict(requests=0, bytes=0, keys=set(), per_sec=collections.Counter(), hits=0,
                 expected=0.0) for n in nodes}
    lru = {n: collections.OrderedDict() for n in nodes}
    unserved = 0
    for i, (k, b, t) in enumerate(records):
        o = own[k] if at is None or i < at else own_after[k]
        f = fair if at is None or i < at else fair_after
        if o is None:
            unserved += 1
            continue
        for n, share in f.items():
            c[n]["expected"] += share
        x = c[o]
        x["requests"] += 1
        x["bytes"] += b
        x["keys"].add(k)
        if t is not None:
            x["per_sec"][int(t)] += 1
        if cache:
            L = lru[o]
            if k in L:
                x["hits"] += 1
                L.move_to_end(k)
            else:
                L[k] = 1
                if len(L) > cache:
                    L.popitem(last=False)
    return c, unserved


def compare(name, ans, c, unserved, timed=True, cache=False):
    got = {n["name"]: n for n in ans["nodes"]}
    check(ans["unserved"] == unserved, f"{name}: unserved {ans['unserved']} != {unserved}")
    for n, x in c.items():
        g = got.get(n)
        if g is None:
            check(x["requests"] == 0, f"{name}: {n} missing")
            continue
        check(g["requests"] == x["requests"], f"{name}: {n} requests {g['requests']} != {x['requests']}")
        check(g["bytes"] == x["bytes"], f"{name}: {n} bytes {g['bytes']} != {x['bytes']}")
        check(g["unique_keys"] == len(x["keys"]), f"{name}: {n} unique {g['unique_keys']} != {len(x['keys'])}")
        if timed:
            pk = max(x["per_sec"].values(), default=0)
            check(g["peak_rate"] == pk, f"{name}: {n} peak {g['peak_rate']} != {pk}")
        if x["expected"] > 0:
            lof = x["requests"] / x["expected"]
            check(abs(g["load_over_fair"] - lof) < 1e-9 * max(1, lof),
                  f"{name}: {n} load_over_fair {g['load_over_fair']} != {lof}")
        if cache:
            check(g["hits"] == x["hits"], f"{name}: {n} hits {g['hits']} != {x['hits']}")


tmp = tempfile.mkdtemp(prefix="ringsim-trace-")
try:
    db = os.path.join(tmp, "t.db")
    nodes = ["web1", "web2", "web3", "web4"]
    for n in nodes:
        run(db, "node", "add", n)
    run(db, "config", "--points", "40")
    run(db, "node", "down", "web4")
    fair = {"web1": 1 / 3, "web2": 1 / 3, "web3": 1 / 3}

    # ---- one key set for the formats with free keys: decimal ids ----
    ids = [str(rng.randrange(1, 2**40)) for _ in range(60)]
    uris = ["/obj/" + rng.choice("abcdef") + str(i) for i in range(60)]
    own_ids = owners(db, ids)
    own_uris = owners(db, uris)
    t0 = 1765000000
    N = 6000

    def records(keys):
        out, t = [], t0
        for i in range(N):
            t += rng.choice([0, 0, 0, 1])  # bursts in one second
            k = keys[min(int(rng.paretovariate(0.8)) - 1, len(keys) - 1)]
            out.append((k, rng.randrange(0, 5000), t))
        return out

    # access-log, plain / gzip / zstd, one bad line
    recs = records(uris)
    lines = []
    for i, (k, b, t) in enumerate(recs):
        ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(t))
        lines.append(f'10.0.{i % 7}.{i % 200} - - [{ts}] "GET {k} HTTP/1.1" 200 {b} "-" "t/1"\n')
    lines.insert(100, "this is not a request\n")
    text = "".join(lines).encode()
    path = os.path.join(tmp, "access.log")
    open(path, "wb").write(text)
    open(path + ".gz", "wb").write(gzip.compress(text))
    subprocess.run(["zstd", "-q", "-f", path, "-o", path + ".zst"], check=True)
    c, uns = recount(recs, own_uris, nodes, fair)
    for p, comp in ((path, "none"), (path + ".gz", "gzip"), (path + ".zst", "zstd")):
        a = json.loads(run(db, "trace", p, "--json").stdout)
        compare(f"access-log {comp}", a, c, uns)
        check(a["format"] == "access-log" and a["compression"] == comp, f"{comp}: {a['format']} {a['compression']}")
        check(a["bad_lines"] == 1 and a["first_bad_line"] == 101, f"{comp}: bad {a['bad_lines']} first {a['first_bad_line']}")
        check(a["requests"] == N, f"{comp}: requests {a['requests']}")
    # the same log through standard input
    a = json.loads(run(db, "trace", "-", "--json", stdin=text).stdout)
    compare("access-log stdin", a, c, uns)

    # twitter
    recs = records(ids)
    tw = "".join(f"{t},{k},10,{b},7,get,0\n" for k, b, t in recs).encode()
    p = os.path.join(tmp, "tw.csv")
    open(p, "wb").write(tw)
    c, uns = recount(recs, own_ids, nodes, fair)
    a = json.loads(run(db, "trace", p, "--json").stdout)
    check(a["format"] == "twitter", f"twitter detected as {a['format']}")
    compare("twitter", a, c, uns)

    # oracle-general (little-endian 24-byte records), zstd
    ob = b"".join(struct.pack("<IQIq", t, int(k), b, -1) for k, b, t in recs)
    p = os.path.join(tmp, "trace.oracleGeneral")
    open(p, "wb").write(ob)
    subprocess.run(["zstd", "-q", "-f", p, "-o", p + ".zst"], check=True)
    a = json.loads(run(db, "trace", p + ".zst", "--json").stdout)
    check(a["format"] == "oracle-general" and "ids" in (a["note"] or ""), f"oracle: {a['format']} {a['note']}")
    compare("oracle-general", a, c, uns)

    # csv by column names, RFC 3339 times
    rows = ["when,size,object,op"] + [
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(t))},{b},{k},get" for k, b, t in recs]
    p = os.path.join(tmp, "log.csv")
    open(p, "w").write("\n".join(rows) + "\n")
    a = json.loads(run(db, "trace", p, "--format", "csv", "--key-col", "object", "--size-col", "size",
                       "--time-col", "when", "--op-col", "op", "--json").stdout)
    compare("csv", a, c, uns)

    # keys: no clock, no bytes
    p = os.path.join(tmp, "keys.txt")
    open(p, "w").write("".join(k + "\n" for k, _, _ in recs))
    a = json.loads(run(db, "trace", p, "--json").stdout)
    kr = [(k, 0, None) for k, _, _ in recs]
    c2, uns2 = recount(kr, own_ids, nodes, fair)
    compare("keys", a, c2, uns2, timed=False)
    check(a["series"]["by"] == "request" and a["nodes"][0]["peak_rate"] is None, "keys: series by request, no peak")

    # ---- the cache and the change: a node added at a time of the log ----
    recs = records(uris)
    lines = []
    for i, (k, b, t) in enumerate(recs):
        ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(t))
        lines.append(f'10.0.0.1 - - [{ts}] "GET {k} HTTP/1.1" 200 {b} "-" "t/1"\n')
    p = os.path.join(tmp, "change.log")
    open(p, "w").write("".join(lines))
    at = N // 2
    at_t = recs[at][2]
    while at > 0 and recs[at - 1][2] == at_t:  # the first request at that second
        at -= 1
    db2 = os.path.join(tmp, "t2.db")
    shutil.copy(db, db2)
    run(db2, "node", "add", "web5")
    own_after = owners(db2, uris)
    fair_after = {"web1": 0.25, "web2": 0.25, "web3": 0.25, "web5": 0.25}
    c, uns = recount(recs, own_uris, nodes + ["web5"], fair, cache=20, own_after=own_after, at=at,
                      fair_after=fair_after)
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at_t))
    a = json.loads(run(db, "trace", p, "--cache", "20obj", "--change", "@" + iso, "node add web5",
                       "--interval", "60", "--json").stdout)
    compare("cache+change", a, c, uns, cache=True)
    ch = a["changes"][0]
    check(ch["applied"] and ch["request"] == at, f"change applied before {ch['request']}, want {at}")
    moved = sum(1 for k in uris if own_uris[k] != own_after[k])
    check(moved > 0, "some keys move to web5")
    # the miss spike: the interval holding the change misses more than the
    # one before it
    pts = a["series"]["points"]
    idx = max(i for i, q in enumerate(pts) if q["start"] <= at_t)
    before = pts[idx - 1]["hit_ratio"]
    after = pts[idx]["hit_ratio"] if pts[idx]["start"] < at_t else pts[idx]["hit_ratio"]
    check(after < before, f"hit ratio dips at the change: {before} then {after}")
    check(a["series"]["interval"] == 60, "the interval asked for")
    # the same change by request number gives the same counts
    b = json.loads(run(db, "trace", p, "--cache", "20obj", "--change", str(at), "node add web5", "--json").stdout)
    check([n["hits"] for n in b["nodes"]] == [n["hits"] for n in a["nodes"]], "change by index = by time")
    # the table for people says what happened
    t = run(db, "trace", p, "--cache", "20obj", "--change", str(at), "node add web5").stdout.decode()
    check("(added)" in t and "web4" in t and "(down)" in t and "nothing was recorded" in t, "table: " + t[:400])

    # ---- refusals: one line, exit 1 ----
    r = run(db, "trace", path, "--format", "twitter", ok=False)
    err = r.stderr.decode()
    check(r.returncode == 1 and err.count("\n") == 1 and "not a twitter log" in err, f"refusal: {r.returncode} {err!r}")
    r = run(db, "trace", path, "--change", "5", "node add web1", ok=False)
    check(r.returncode == 1 and "already a node" in r.stderr.decode(), f"change refused: {r.stderr!r}")
    r = run(db, "trace", os.path.join(tmp, "keys.txt"), "--change", "@0", "node down web1", ok=False)
    check(r.returncode == 1 and "no clock" in r.stderr.decode(), f"time on keys: {r.stderr!r}")
    r = run(db, "trace", path, "--cache", "lots", ok=False)
    check(r.returncode == 1 and "cache" in r.stderr.decode(), f"bad cache: {r.stderr!r}")
    r = run(db, "trace", os.path.join(tmp, "nope.log"), ok=False)
    check(r.returncode == 1, "missing file refused")
    # nothing was recorded
    log = json.loads(run(db, "log", "--json").stdout)["operations"]
    check(len(log) == 6, f"operations: {len(log)}")

    # ---- plan: each step against the same nodes really added ----
    pdb = os.path.join(tmp, "plan.db")
    for n in ("p1", "p2", "p3"):
        run(pdb, "node", "add", n)
    run(pdb, "config", "--points", "40")
    run(pdb, "key", "gen", "3000")
    plan = json.loads(run(pdb, "plan", "--max-load", "1.0", "--steps", "3", "--json").stdout)
    check(plan["enough"] is None and len(plan["steps"]) == 4, f"plan steps {len(plan['steps'])}")
    for k, st in enumerate(plan["steps"]):
        cdb = os.path.join(tmp, f"plan{k}.db")
        shutil.copy(pdb, cdb)
        for i in range(1, k + 1):
            run(cdb, "node", "add", f"new-{i}")
        stats = json.loads(run(cdb, "stats", "--json").stdout)
        check(abs(stats["requests"]["max_over_mean"] - st["max_over_mean"]) < 1e-3,
              f"plan step {k}: {st['max_over_mean']} vs stats {stats['requests']['max_over_mean']}")
        if k:
            op = json.loads(run(cdb, "log", "--json").stdout)["operations"][-1]
            check(op["keys_moved"] == st["keys_moved"], f"plan step {k}: moved {st['keys_moved']} vs {op['keys_moved']}")
    # from a log: step 0 is the replay's max/mean
    p = os.path.join(tmp, "change.log")
    pl = json.loads(run(db, "plan", "--max-load", "1.0", "--steps", "1", "--log", p, "--json").stdout)
    tr = json.loads(run(db, "trace", p, "--json").stdout)
    check(abs(pl["steps"][0]["max_over_mean"] - tr["max_over_mean"]) < 1e-9 and pl["requests"] == N,
          f"plan from a log: {pl['steps'][0]['max_over_mean']} vs trace {tr['max_over_mean']}")
    # ---- Twitter's cluster presets: the published figures, stored expanded ----
    run(pdb, "workload", "twitter-cluster52")
    w = json.loads(run(pdb, "workload", "--json").stdout)
    check(w["kind"] == "zipf" and w["s"] == 1.2117 and w["sizes"] == {"kind": "fixed", "bytes": 273},
          f"twitter-cluster52: {w}")
    run(pdb, "workload", "twitter-cluster31")
    w = json.loads(run(pdb, "workload", "--json").stdout)
    check(w["kind"] == "uniform" and w["sizes"]["bytes"] == 15, f"twitter-cluster31 (alpha 0): {w}")
    r = run(pdb, "workload", "twitter-cluster43", ok=False)
    check(r.returncode == 1 and "no workload preset" in r.stderr.decode(), f"preset 43: {r.stderr!r}")
    r = run(pdb, "check", ok=False)
    check(r.returncode == 0, f"check after presets: {r.stdout!r} {r.stderr!r}")
    r = run(pdb, "plan", "--max-load", "0.5", ok=False)
    check(r.returncode == 1 and "max-load" in r.stderr.decode(), f"plan refusal: {r.stderr!r}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
