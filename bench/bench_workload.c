/*
 * bench_workload.c - what workloads cost (issue 17): ratios measured in
 * the same run, medians of REPS runs.
 *
 *   bench_workload [KEYS] [REPS]        (default 1000000 keys, 3 runs)
 *
 * 1. A workload change at KEYS keys (the operation, then the first read of
 *    the nodes' requests, which builds the engine's cache) against a `key
 *    gen KEYS` into an empty database: the target is at most 1.5x.
 * 2. A node add and remove (the change and the nodes' answer after it)
 *    with a zipf workload against the same with the default workload: the
 *    target is at most 1.2x.  The cache is kept by topology changes, so
 *    this costs only the moved keys' shares (found in memory from the
 *    change's ranges of positions).
 * 3. Inserting 1000 keys, then reading the nodes, with zipf against
 *    uniform: the cache follows the insert (ranks merged in place, shares
 *    summed again from the weight table: O(n) additions beside the
 *    insert's O(k log n)).
 * 4. Zipf's normalisation at 10M keys (the compensated sum of r^-s).
 *
 * Each run builds two databases of the same keys, one left uniform and one
 * under zipf, and alternates their changes (ALTERNATE of each), so that a
 * burst of load on the shared machine falls on both alike; an unmeasured
 * add and remove comes first on each (the first change after the key gen
 * pays for SQLite's checkpoint of the million inserts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "sim.h"
#include "workload.h"

#define ALTERNATE 5 /* changes of each kind a run, uniform and zipf in turn */

static void die(const char *what, const rs_error *e)
{
    fprintf(stderr, "bench_workload: %s: %s\n", what, e->msg);
    exit(1);
}

static sim *fresh(const char *dir, int i)
{
    char path[512];
    snprintf(path, sizeof path, "%s/w%d.db", dir, i);
    unlink(path);
    sim *s;
    rs_error e;
    if (sim_open(&s, path, &e))
        die("open", &e);
    return s;
}

/* Every node's requests: what the page and `node ls` read after a change. */
static void read_loads(sim *s)
{
    rs_error e;
    for (size_t i = 0; i < sim_node_count(s); i++) {
        double r;
        int64_t b;
        if (sim_node_load(s, i, &r, &b, &e))
            die("node load", &e);
    }
}

static void set_workload(sim *s, const char *text)
{
    rs_error e;
    json_t *j = json_loads(text, 0, NULL);
    int64_t op;
    if (!j || sim_set_workload(s, j, &op, &e))
        die("workload", &e);
    json_decref(j);
}

/* add then remove a node, each followed by the read; seconds. */
static double topo(sim *s, int rep)
{
    rs_error e;
    int64_t op;
    char name[32];
    snprintf(name, sizeof name, "extra-%d", rep);
    double t0 = bench_now();
    if (sim_add_node(s, name, strlen(name), 1, &op, &e))
        die("add", &e);
    read_loads(s);
    if (sim_remove_node(s, name, strlen(name), &op, &e))
        die("remove", &e);
    read_loads(s);
    return bench_now() - t0;
}

static double inserts(sim *s, int rep)
{
    rs_error e;
    int64_t op, ins, skip;
    char pre[32];
    snprintf(pre, sizeof pre, "more-%d-", rep);
    double t0 = bench_now();
    if (sim_generate_keys(s, pre, strlen(pre), 0, 1000, &ins, &skip, &op, &e))
        die("insert", &e);
    read_loads(s);
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    uint64_t keys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1 || reps > 50)
        reps = 3;
    char dir[] = "/tmp/ringsim-bench-workload-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* Per run two databases of the same keys, one left uniform and one
     * under zipf; their changes alternate (ALTERNATE of each a run), so a
     * burst of load on the shared machine falls on both alike. */
    size_t samples = (size_t)reps * ALTERNATE;
    double *gen = calloc((size_t)reps, sizeof *gen), *chg = calloc((size_t)reps, sizeof *chg);
    double *tu = calloc(samples, sizeof *tu), *tz = calloc(samples, sizeof *tz);
    double *iu = calloc(samples, sizeof *iu), *iz = calloc(samples, sizeof *iz);
    rs_error e;
    for (int r = 0; r < reps; r++) {
        sim *db[2];
        for (int d = 0; d < 2; d++) {
            db[d] = fresh(dir, 2 * r + d);
            int64_t op, ins, skip;
            for (int i = 0; i < 10; i++) {
                char n[16];
                snprintf(n, sizeof n, "cache-%d", i);
                if (sim_add_node(db[d], n, strlen(n), 1, &op, &e))
                    die("add", &e);
            }
            double t0 = bench_now();
            if (sim_generate_keys(db[d], "key-", 4, 0, keys, &ins, &skip, &op, &e))
                die("generate", &e);
            if (d == 0)
                gen[r] = bench_now() - t0;
        }
        /* The workload change and its first read. */
        double t0 = bench_now();
        set_workload(db[1], "{\"kind\": \"zipf\", \"s\": 1.0}");
        read_loads(db[1]);
        chg[r] = bench_now() - t0;
        /* One change each first, unmeasured: the first after a large key
         * gen also pays for SQLite's checkpoint of it. */
        topo(db[0], 1000 + r);
        topo(db[1], 1000 + r);
        for (int j = 0; j < ALTERNATE; j++) {
            size_t k = (size_t)r * ALTERNATE + (size_t)j;
            tu[k] = topo(db[0], 100 * r + j);
            tz[k] = topo(db[1], 100 * r + j);
            iu[k] = inserts(db[0], 100 * r + j);
            iz[k] = inserts(db[1], 100 * r + j);
        }
        for (int d = 0; d < 2; d++) {
            sim_close(db[d]);
            char path[512];
            snprintf(path, sizeof path, "%s/w%d.db", dir, 2 * r + d);
            unlink(path);
        }
    }
    double g = bench_median(gen, (size_t)reps), c = bench_median(chg, (size_t)reps);
    double a = bench_median(tu, samples), b = bench_median(tz, samples);
    double x = bench_median(iu, samples), y = bench_median(iz, samples);
    printf("workload costs at %llu keys, 10 nodes (ring): key gen and workload change medians "
           "of %d runs, changes medians of %zu (uniform and zipf in turn)\n",
           (unsigned long long)keys, reps, samples);
    printf("  key gen %llu                      %8.3f s\n", (unsigned long long)keys, g);
    printf("  workload zipf + first read        %8.3f s   %.2fx key gen (target <= 1.5x)\n", c,
           c / g);
    printf("  node add+rm + reads, uniform      %8.3f s\n", a);
    printf("  node add+rm + reads, zipf         %8.3f s   %.2fx uniform (target <= 1.2x)\n", b,
           b / a);
    printf("  insert 1000 + read, uniform       %8.3f s\n", x);
    printf("  insert 1000 + read, zipf          %8.3f s   %.2fx uniform (target <= 1.2x)\n", y,
           y / x);
    /* Zipf's normalisation, alone. */
    workload w;
    wl_init(&w);
    w.kind = WL_ZIPF;
    w.s = 1.0;
    wl_norm m;
    double t0 = bench_now();
    wl_norm_compute(&w, 10000000, &m);
    printf("  zipf s=1 normalisation, 10M keys  %8.3f s   H = %.15f\n", bench_now() - t0, m.h);
    rmdir(dir);
    free(gen);
    free(chg);
    free(tu);
    free(tz);
    free(iu);
    free(iz);
    return 0;
}
