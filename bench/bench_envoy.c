/*
 * bench_envoy.c - speed of the Envoy cores (alg_envoy_ring, alg_maglev).
 *
 * Every figure is the median of RUNS runs, and each measured run alternates
 * with a run of its reference, because the machine may be shared and busy.
 *   1. maglev: key -> node, i.e. maglev_lookup(envoy_key_hash(key)), against
 *      the bare work: an inline XXH64 and table[h % M].  Goal <= 1.5x.
 *   2. envoy-ring lookup of a precomputed hash (Envoy's ketama search) at
 *      10, 100 and 1000 hosts with Envoy's default sizes, against an inline
 *      lower_bound over the same points (alg_successor).  Goal <= 1.5x.
 *   3. build times: envoy_ring_build and maglev_build for 10 .. 1000 hosts,
 *      absolute (no reference; Envoy rebuilds on every host change).
 * Usage: bench_envoy [keys] (default 1000000).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "alg.h"
#include "alg_envoy.h"
#include "alg_envoy_ring.h"
#include "alg_maglev.h"

#define RUNS 7

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

/* Keys "key-0" .. packed in one buffer. */
typedef struct keys {
    size_t n;
    char *buf;
    uint32_t *off; /* n + 1 offsets */
} keys;

static keys keys_make(size_t n)
{
    keys k = {n, malloc(n * 16), malloc((n + 1) * sizeof(uint32_t))};
    if (!k.buf || !k.off) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        k.off[i] = at;
        at += (uint32_t)sprintf(k.buf + at, "key-%zu", i);
    }
    k.off[n] = at;
    return k;
}

typedef struct hosts {
    size_t n;
    char (*name)[32];
    alg_node *node;
} hosts;

static hosts hosts_make(size_t n)
{
    hosts h = {n, malloc(n * sizeof *h.name), malloc(n * sizeof *h.node)};
    if (!h.name || !h.node) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(h.name[i], sizeof h.name[i], "10.%zu.%zu.%zu:80", i >> 16,
                           (i >> 8) & 255, i & 255);
        h.node[i] = (alg_node){h.name[i], (size_t)len, 1.0 + (double)(i % 3)};
    }
    return h;
}

static volatile uint64_t sink;

/* ---- 1: maglev key -> node */

static double run_maglev(const keys *k, const uint32_t *t, uint64_t m)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = 0; i < k->n; i++) {
        const char *s = k->buf + k->off[i];
        acc += maglev_lookup(t, m, envoy_key_hash(s, k->off[i + 1] - k->off[i]));
    }
    double dt = now() - t0;
    sink += acc;
    return dt * 1e9 / (double)k->n;
}

static double run_maglev_ref(const keys *k, const uint32_t *t, uint64_t m)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = 0; i < k->n; i++) {
        const char *s = k->buf + k->off[i];
        acc += t[XXH64(s, k->off[i + 1] - k->off[i], 0) % m];
    }
    double dt = now() - t0;
    sink += acc;
    return dt * 1e9 / (double)k->n;
}

/* ---- 2: ring lookup of precomputed hashes */

static double run_ring(const alg_point *p, size_t np, const uint64_t *h, size_t n)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = 0; i < n; i++)
        acc += p[envoy_ring_lookup(p, np, h[i], 0)].node;
    double dt = now() - t0;
    sink += acc;
    return dt * 1e9 / (double)n;
}

static double run_ring_ref(const alg_point *p, size_t np, const uint64_t *h, size_t n)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = 0; i < n; i++)
        acc += p[alg_successor(p, np, h[i])].node;
    double dt = now() - t0;
    sink += acc;
    return dt * 1e9 / (double)n;
}

static void line(const char *what, double mine, double ref, const char *goal)
{
    printf("%-44s %9.1f ns %9.1f ns %7.2fx  %s\n", what, mine, ref, mine / ref, goal);
}

int main(int argc, char **argv)
{
    size_t nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    if (nkeys == 0)
        nkeys = 1;
    keys k = keys_make(nkeys);
    uint64_t *kh = malloc(nkeys * sizeof *kh);
    if (!kh)
        return 1;
    for (size_t i = 0; i < nkeys; i++)
        kh[i] = envoy_key_hash(k.buf + k.off[i], k.off[i + 1] - k.off[i]);

    printf("bench_envoy: %zu keys, median of %d alternating runs\n\n", nkeys, RUNS);
    printf("%-44s %12s %12s %8s  %s\n", "measure", "measured", "reference", "ratio", "goal");

    /* 1 */
    {
        hosts h = hosts_make(100);
        uint32_t *t;
        if (maglev_build(h.node, h.n, MAGLEV_TABLE_DEFAULT, &t, NULL))
            return 1;
        double a[RUNS], b[RUNS];
        for (int r = 0; r < RUNS; r++) {
            a[r] = run_maglev(&k, t, MAGLEV_TABLE_DEFAULT);
            b[r] = run_maglev_ref(&k, t, MAGLEV_TABLE_DEFAULT);
        }
        line("maglev key->node, 100 hosts, M=65537", median(a, RUNS), median(b, RUNS),
             "<= 1.5x (ref: inline XXH64 + table[h % M])");
        free(t);
        free(h.node);
        free(h.name);
    }

    /* 2 */
    static const size_t sizes[] = {10, 100, 1000};
    for (size_t s = 0; s < 3; s++) {
        hosts h = hosts_make(sizes[s]);
        alg_point *p;
        size_t np;
        if (envoy_ring_build(h.node, h.n, ENVOY_RING_MIN_DEFAULT, ENVOY_RING_MAX_DEFAULT, &p,
                             &np, NULL))
            return 1;
        double a[RUNS], b[RUNS];
        for (int r = 0; r < RUNS; r++) {
            a[r] = run_ring(p, np, kh, nkeys);
            b[r] = run_ring_ref(p, np, kh, nkeys);
        }
        char what[64];
        snprintf(what, sizeof what, "envoy-ring lookup, %zu hosts (%zu points)", sizes[s], np);
        line(what, median(a, RUNS), median(b, RUNS), "<= 1.5x (ref: alg_successor)");
        free(p);
        free(h.node);
        free(h.name);
    }

    /* 3 */
    printf("\n%-44s %12s\n", "build (median)", "time");
    static const struct {
        size_t hosts;
        uint64_t min_ring;
    } rb[] = {{10, 1024}, {100, 1024}, {1000, 1024}, {100, 1u << 20}, {1000, 8388608}};
    for (size_t s = 0; s < sizeof rb / sizeof rb[0]; s++) {
        hosts h = hosts_make(rb[s].hosts);
        double a[RUNS];
        size_t np = 0;
        for (int r = 0; r < RUNS; r++) {
            alg_point *p;
            double t0 = now();
            if (envoy_ring_build(h.node, h.n, rb[s].min_ring, ENVOY_RING_MAX_DEFAULT, &p, &np,
                                 NULL))
                return 1;
            a[r] = now() - t0;
            free(p);
        }
        char what[80];
        snprintf(what, sizeof what, "envoy_ring_build %zu hosts, min %llu (%zu pts)",
                 rb[s].hosts, (unsigned long long)rb[s].min_ring, np);
        printf("%-44s %9.3f ms\n", what, median(a, RUNS) * 1e3);
        free(h.node);
        free(h.name);
    }
    static const struct {
        size_t hosts;
        uint64_t m;
    } mb[] = {{10, 65537}, {100, 65537}, {1000, 65537}, {1000, 5000011}};
    for (size_t s = 0; s < sizeof mb / sizeof mb[0]; s++) {
        hosts h = hosts_make(mb[s].hosts);
        double a[RUNS];
        int runs = mb[s].m > 1000000 ? 3 : RUNS;
        for (int r = 0; r < runs; r++) {
            uint32_t *t;
            double t0 = now();
            if (maglev_build(h.node, h.n, mb[s].m, &t, NULL))
                return 1;
            a[r] = now() - t0;
            free(t);
        }
        char what[80];
        snprintf(what, sizeof what, "maglev_build %zu hosts, M=%llu", mb[s].hosts,
                 (unsigned long long)mb[s].m);
        printf("%-44s %9.3f ms\n", what, median(a, runs) * 1e3);
        free(h.node);
        free(h.name);
    }
    free(kh);
    free(k.buf);
    free(k.off);
    return 0;
}
