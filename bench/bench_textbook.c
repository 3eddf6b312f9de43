/*
 * bench_textbook.c - lookup cost of the textbook cores, each against a
 * reference measured in the same run (medians of interleaved runs, as in
 * bench.c: the machine is shared and noisy).
 *
 *   1. rendezvous   rendezvous_lookup() at 1000 nodes (mixed weights) against
 *                   1000 bare score computations per key (the formula inline,
 *                   summed, no comparison).  Goal <= 1.5x.
 *   2. jump         memento_lookup() with 1000 buckets and nothing removed
 *                   (the `jump` core as the engine runs it) against bare
 *                   jump_hash(keyhash, 1000) on the same key hashes.
 *                   Goal <= 1.5x.  Info: the same with 100 of the 1000
 *                   buckets removed.
 *   Info only: rendezvous_top() with R = 3 against the same reference,
 *   multiprobe_lookup() at 1000 nodes with 21 probes,
 *   cassandra_lookup() on 1000 nodes x 16 tokens, and cassandra_token() of
 *   "key-N".
 * Key hashes are sha64("key-N") for N < 20000, computed before timing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg_cassandra.h"
#include "alg_jump.h"
#include "alg_memento.h"
#include "alg_multiprobe.h"
#include "alg_rendezvous.h"
#include "hash.h"

enum { NODES = 1000, KEYS = 20000, RUNS = 7 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static volatile double sink_d;
static volatile long sink_l;

typedef struct fixture {
    char names[NODES][16];
    alg_node nodes[NODES];
    uint64_t nodehash[NODES];
    uint64_t keyhash[KEYS];
    uint32_t h1[KEYS], h2[KEYS];
    int64_t tokens[KEYS];
    memento *full, *holed;
    alg_point *mp, *cass;
    size_t ncass;
} fixture;

/* ---- measured bodies: one pass over the keys, ns per key ---- */

static double run_rendezvous(const fixture *f)
{
    double t = now_ns();
    long acc = 0;
    for (int k = 0; k < KEYS; k++)
        acc += rendezvous_lookup(f->keyhash[k], f->nodes, f->nodehash, NODES);
    sink_l = acc;
    return (now_ns() - t) / KEYS;
}

static double run_rendezvous_top3(const fixture *f)
{
    rendezvous_pick picks[3];
    double t = now_ns();
    long acc = 0;
    for (int k = 0; k < KEYS; k++)
        acc += (long)rendezvous_top(f->keyhash[k], f->nodes, f->nodehash, NODES, picks, 3) +
               picks[2].node;
    sink_l = acc;
    return (now_ns() - t) / KEYS;
}

static double run_bare_scores(const fixture *f)
{
    double t = now_ns(), acc = 0;
    for (int k = 0; k < KEYS; k++)
        for (int i = 0; i < NODES; i++) {
            double u = ((double)(hash_mix(f->keyhash[k] ^ f->nodehash[i]) >> 11) + 0.5) /
                       9007199254740992.0;
            acc += -f->nodes[i].weight / log(u);
        }
    sink_d = acc;
    return (now_ns() - t) / KEYS;
}

static double run_memento(const memento *m, const fixture *f)
{
    double t = now_ns();
    long acc = 0;
    for (int r = 0; r < 10; r++)
        for (int k = 0; k < KEYS; k++)
            acc += memento_lookup(m, f->keyhash[k]);
    sink_l = acc;
    return (now_ns() - t) / (10.0 * KEYS);
}

static double run_bare_jump(const fixture *f)
{
    double t = now_ns();
    long acc = 0;
    for (int r = 0; r < 10; r++)
        for (int k = 0; k < KEYS; k++)
            acc += jump_hash(f->keyhash[k], NODES);
    sink_l = acc;
    return (now_ns() - t) / (10.0 * KEYS);
}

static double run_multiprobe(const fixture *f)
{
    double t = now_ns();
    long acc = 0;
    for (int k = 0; k < KEYS; k++)
        acc += (long)multiprobe_lookup(f->mp, NODES, f->h1[k], f->h2[k], 21, NULL, NULL);
    sink_l = acc;
    return (now_ns() - t) / KEYS;
}

static double run_cassandra_owner(const fixture *f)
{
    double t = now_ns();
    long acc = 0;
    for (int r = 0; r < 10; r++)
        for (int k = 0; k < KEYS; k++)
            acc += (long)cassandra_lookup(f->cass, f->ncass, f->tokens[k]);
    sink_l = acc;
    return (now_ns() - t) / (10.0 * KEYS);
}

static double run_cassandra_token(const fixture *f)
{
    (void)f;
    char key[32];
    double t = now_ns();
    long acc = 0;
    for (int k = 0; k < KEYS; k++) {
        int len = snprintf(key, sizeof key, "key-%d", k);
        acc += cassandra_token(key, (size_t)len) & 1;
    }
    sink_l = acc;
    return (now_ns() - t) / KEYS;
}

static int setup(fixture *f)
{
    hasher *h = hasher_new();
    if (!h)
        return -1;
    for (int i = 0; i < NODES; i++) {
        int len = snprintf(f->names[i], sizeof f->names[i], "node-%d", i);
        f->nodes[i] = (alg_node){f->names[i], (size_t)len, 1.0 + (double)(i % 4) * 0.5};
    }
    rendezvous_node_hashes(h, f->nodes, NODES, f->nodehash);
    for (int k = 0; k < KEYS; k++) {
        char key[32];
        int len = snprintf(key, sizeof key, "key-%d", k);
        f->keyhash[k] = hash_sha64(h, key, (size_t)len);
        multiprobe_key(h, key, (size_t)len, &f->h1[k], &f->h2[k]);
        f->tokens[k] = cassandra_token(key, (size_t)len);
    }
    f->full = memento_new();
    f->holed = memento_new();
    if (!f->full || !f->holed)
        return -1;
    for (int i = 0; i < NODES; i++) {
        int32_t b;
        if (memento_add(f->full, &b) || memento_add(f->holed, &b))
            return -1;
    }
    for (int i = 0; i < 100; i++) /* every 10th bucket, from the front */
        if (memento_remove(f->holed, i * 10) != 0)
            return -1;
    if (multiprobe_points(h, f->nodes, NODES, &f->mp) != 0)
        return -1;
    for (int i = 0; i < NODES; i++)
        f->nodes[i].weight = 1.0; /* cassandra: 16 tokens each */
    if (cassandra_ring(f->nodes, NODES, NULL, 16, &f->cass, &f->ncass, NULL) != 0)
        return -1;
    for (int i = 0; i < NODES; i++)
        f->nodes[i].weight = 1.0 + (double)(i % 4) * 0.5;
    hasher_free(h);
    return 0;
}

int main(void)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || setup(f) != 0) {
        fprintf(stderr, "bench_textbook: setup failed\n");
        return 1;
    }
    double a[RUNS], a3[RUNS], b[RUNS], c[RUNS], d[RUNS], e[RUNS], g[RUNS], x[RUNS];
    for (int r = 0; r < RUNS; r++) { /* interleaved */
        a[r] = run_rendezvous(f);
        a3[r] = run_rendezvous_top3(f);
        b[r] = run_bare_scores(f);
        c[r] = run_memento(f->full, f);
        d[r] = run_bare_jump(f);
        e[r] = run_memento(f->holed, f);
        g[r] = run_multiprobe(f);
        x[r] = run_cassandra_owner(f);
    }
    double ra3 = median(a3, RUNS);
    double ra = median(a, RUNS), rb = median(b, RUNS), rc = median(c, RUNS), rd = median(d, RUNS),
           re = median(e, RUNS), rg = median(g, RUNS), rx = median(x, RUNS);
    double tk[RUNS];
    for (int r = 0; r < RUNS; r++)
        tk[r] = run_cassandra_token(f);
    double rt = median(tk, RUNS);
    printf("%-44s %12s %12s %8s %6s\n", "measure (median of 7, ns per key)", "measured",
           "reference", "ratio", "goal");
    printf("%-44s %12.1f %12.1f %7.2fx %6s\n", "1. rendezvous owner, 1000 nodes", ra, rb, ra / rb,
           "1.5x");
    printf("%-44s %12.1f %12.1f %7.2fx %6s\n", "   info: rendezvous top 3, 1000 nodes", ra3, rb,
           ra3 / rb, "-");
    printf("%-44s %12.1f %12.1f %7.2fx %6s\n", "2. jump (memento), 1000 buckets", rc, rd, rc / rd,
           "1.5x");
    printf("%-44s %12.1f %12.1f %7.2fx %6s\n", "   info: 100 of 1000 buckets removed", re, rd,
           re / rd, "-");
    printf("%-44s %12.1f %12s %8s %6s\n", "   info: multiprobe, 1000 nodes, 21 probes", rg, "-",
           "-", "-");
    printf("%-44s %12.1f %12s %8s %6s\n", "   info: cassandra owner, 16000 tokens", rx, "-", "-",
           "-");
    printf("%-44s %12.1f %12s %8s %6s\n", "   info: cassandra_token(\"key-N\")", rt, "-", "-", "-");
    int ok = ra / rb <= 1.5 && rc / rd <= 1.5;
    printf("%s\n", ok ? "all goals met" : "GOAL MISSED");
    memento_free(f->full);
    memento_free(f->holed);
    free(f->mp);
    free(f->cass);
    free(f);
    return ok ? 0 : 1;
}
