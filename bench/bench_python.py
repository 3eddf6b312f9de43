#!/usr/bin/python3
"""The Python module's lookup_many against the C library's own time and
against Debian's python3-uhashring, for the same keys.

    PYTHONPATH=build/python python3 bench/bench_python.py build/bench_lib [KEYS]

ketama (libmemcached's weighted continuum, MD5 keys: what uhashring's
hash_fn='ketama' computes) over 10 servers, KEYS keys "key-0".. (default
1,000,000), each timing the median of a few runs:

  module      ringsim.Placement.lookup_many(keys): one call, a list back
  C library   ringsim_lookup in a C loop over the same keys (bench_lib --one)
  uhashring   HashRing(nodes, hash_fn='ketama').get_node(k) for every key

Prints the times and the ratios (API.md v4 / issue 27: the module within
1.5x the C library).  uhashring is skipped when it is not installed.
"""
import statistics
import subprocess
import sys
import time

import ringsim

BENCH_LIB = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
NODES = ["10.0.0.%d:11211" % i for i in range(1, 11)]
RUNS = 5


def median_time(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    keys = ["key-%d" % i for i in range(N)]
    p = ringsim.Placement("ketama", NODES)
    module = median_time(lambda: p.lookup_many(keys), RUNS)
    out = subprocess.run([BENCH_LIB, "--one", "ketama", str(len(NODES)), str(N)],
                         capture_output=True, text=True, check=True).stdout.split()
    c_lib = float(out[1]) * N / 1e9
    engine = float(out[3]) * N / 1e9
    print("ketama, %d servers, %d keys (median of %d runs)" % (len(NODES), N, RUNS))
    print("  %-34s %8.3f s  %6.0f ns a key" % ("C library (ringsim_lookup loop)", c_lib,
                                               c_lib / N * 1e9))
    print("  %-34s %8.3f s  %6.0f ns a key" % ("the engine's lookup (today's path)", engine,
                                               engine / N * 1e9))
    print("  %-34s %8.3f s  %6.0f ns a key  %5.2fx the C library" % (
        "Python lookup_many", module, module / N * 1e9, module / c_lib))
    try:
        from uhashring import HashRing
    except ImportError:
        print("  uhashring: not installed (Debian's python3-uhashring)")
        return 0
    hosts = [n.rsplit(":", 1)[0] for n in NODES]  # libmemcached's labels drop port 11211
    ring = HashRing(hosts, hash_fn="ketama")
    get = ring.get_node
    uh = median_time(lambda: [get(k) for k in keys], 3)
    same = sum(1 for a, b in zip(p.lookup_many(keys), (get(k) for k in keys))
               if a.rsplit(":", 1)[0] == b)
    print("  %-34s %8.3f s  %6.0f ns a key  %5.2fx the module" % (
        "uhashring get_node (median of 3)", uh, uh / N * 1e9, uh / module))
    print("  the same owner for %d of %d keys (the others: a key whose hash equals a point's, "
          "which uhashring's bisect_right passes; tests/ref/ketama_clients_ref.py)" % (same, N))
    return 0


if __name__ == "__main__":
    sys.exit(main())
