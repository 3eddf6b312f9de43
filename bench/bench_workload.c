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
 * An unmeasured add and remove comes first, after the key gen (the first
 * change after it pays for SQLite's checkpoint of the million inserts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "sim.h"
#include "workload.h"

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
    double *gen = calloc((size_t)reps, sizeof *gen), *chg = calloc((size_t)reps, sizeof *chg);
    double *tu = calloc((size_t)reps, sizeof *tu), *tz = calloc((size_t)reps, sizeof *tz);
    double *iu = calloc((size_t)reps, sizeof *iu), *iz = calloc((size_t)reps, sizeof *iz);
    rs_error e;
    for (int r = 0; r < reps; r++) {
        sim *s = fresh(dir, r);
        int64_t op, ins, skip;
        for (int i = 0; i < 10; i++) {
            char n[16];
            snprintf(n, sizeof n, "cache-%d", i);
            if (sim_add_node(s, n, strlen(n), 1, &op, &e))
                die("add", &e);
        }
        double t0 = bench_now();
        if (sim_generate_keys(s, "key-", 4, 0, keys, &ins, &skip, &op, &e))
            die("generate", &e);
        gen[r] = bench_now() - t0;
        /* One change first, unmeasured: the first after a large key gen
         * also pays for SQLite's checkpoint of it, which would count
         * against the default workload only. */
        topo(s, 1000 + r);
        /* Default workload: topology and inserts. */
        tu[r] = topo(s, 2 * r);
        iu[r] = inserts(s, 2 * r);
        /* The workload change and its first read. */
        t0 = bench_now();
        set_workload(s, "{\"kind\": \"zipf\", \"s\": 1.0}");
        read_loads(s);
        chg[r] = bench_now() - t0;
        tz[r] = topo(s, 2 * r + 1);
        iz[r] = inserts(s, 2 * r + 1);
        sim_close(s);
        char path[512];
        snprintf(path, sizeof path, "%s/w%d.db", dir, r);
        unlink(path);
    }
    double g = bench_median(gen, (size_t)reps), c = bench_median(chg, (size_t)reps);
    double a = bench_median(tu, (size_t)reps), b = bench_median(tz, (size_t)reps);
    double x = bench_median(iu, (size_t)reps), y = bench_median(iz, (size_t)reps);
    printf("workload costs at %llu keys, 10 nodes (ring), medians of %d runs\n",
           (unsigned long long)keys, reps);
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
