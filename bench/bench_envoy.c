/*
 * bench_envoy.c - speed of the Envoy cores (alg_envoy_ring, alg_maglev).
 *
 * The machine is shared and busy, so the method is built for noise: times
 * are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time spent on other
 * processes is not counted), and a comparison is ROUNDS short pairs of runs
 * (CHUNK keys each, ~1 ms), measured and reference back to back in
 * alternating order; it prints the median ns/op of each side and the median
 * of the per-pair ratios.
 *   1. maglev: key -> node, i.e. maglev_lookup(envoy_key_hash(key)), against
 *      the bare work: XXH64 called directly and table[h % M].  Goal <= 1.5x.
 *   2. envoy-ring lookup of a precomputed hash (Envoy's ketama search) at
 *      10, 100 and 1000 hosts with Envoy's default sizes, against an inline
 *      lower_bound over the same points (alg_successor).  Goal <= 1.5x.
 *   3. build times: envoy_ring_build and maglev_build for 10 .. 1000 hosts,
 *      medians, absolute (no reference: Envoy rebuilds on every host change).
 * Usage: bench_envoy [keys] (default 1000000, at most 100000000).
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

#define RUNS 7      /* build timings */
#define ROUNDS 61   /* pairs of lookup runs */
#define CHUNK 20000 /* keys per lookup run */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_envoy: %s failed\n", what);
    exit(1);
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
    if (n > 100000000)
        die("more than 100000000 keys");
    /* "key-" and at most 9 digits, the NUL of the last one */
    keys k = {n, malloc(n * 13 + 1), malloc((n + 1) * sizeof(uint32_t))};
    if (!k.buf || !k.off)
        die("malloc");
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        k.off[i] = at;
        at += (uint32_t)snprintf(k.buf + at, 14, "key-%zu", i);
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
    if (!h.name || !h.node)
        die("malloc");
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(h.name[i], sizeof h.name[i], "10.%zu.%zu.%zu:80", i >> 16,
                           (i >> 8) & 255, i & 255);
        h.node[i] = (alg_node){h.name[i], (size_t)len, 1.0 + (double)(i % 3)};
    }
    return h;
}

static volatile uint64_t sink;

/* What a lookup run needs; each runner does keys [from, from + n). */
typedef struct ctx {
    const keys *k;
    const uint64_t *hash; /* precomputed key hashes */
    const uint32_t *table;
    uint64_t m;
    const alg_point *p;
    size_t np;
} ctx;

typedef double (*runner)(const ctx *c, size_t from, size_t n);

/* ---- 1: maglev key -> node */

static double run_maglev(const ctx *c, size_t from, size_t n)
{
    const keys *k = c->k;
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = from; i < from + n; i++)
        acc += maglev_lookup(c->table, c->m,
                             envoy_key_hash(k->buf + k->off[i], k->off[i + 1] - k->off[i]));
    double dt = now() - t0;
    sink += acc;
    return dt;
}

static double run_maglev_ref(const ctx *c, size_t from, size_t n)
{
    const keys *k = c->k;
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = from; i < from + n; i++)
        acc += c->table[XXH64(k->buf + k->off[i], k->off[i + 1] - k->off[i], 0) % c->m];
    double dt = now() - t0;
    sink += acc;
    return dt;
}

/* ---- 2: ring lookup of precomputed hashes */

static double run_ring(const ctx *c, size_t from, size_t n)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = from; i < from + n; i++)
        acc += c->p[envoy_ring_lookup(c->p, c->np, c->hash[i], 0)].node;
    double dt = now() - t0;
    sink += acc;
    return dt;
}

static double run_ring_ref(const ctx *c, size_t from, size_t n)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t i = from; i < from + n; i++)
        acc += c->p[alg_successor(c->p, c->np, c->hash[i])].node;
    double dt = now() - t0;
    sink += acc;
    return dt;
}

/* ROUNDS pairs of runs over successive chunks of the keys, alternating
 * which side goes first; prints the medians. */
static void compare(const char *what, runner mine, runner ref, const ctx *c, const char *goal)
{
    const size_t nkeys = c->k->n, chunk = nkeys < CHUNK ? nkeys : CHUNK;
    double a[ROUNDS], b[ROUNDS], ratio[ROUNDS];
    (void)mine(c, 0, chunk); /* warm the caches */
    (void)ref(c, 0, chunk);
    for (int r = 0; r < ROUNDS; r++) {
        size_t from = ((size_t)r * chunk) % (nkeys - chunk + 1);
        double x, y;
        if (r & 1) {
            y = ref(c, from, chunk);
            x = mine(c, from, chunk);
        } else {
            x = mine(c, from, chunk);
            y = ref(c, from, chunk);
        }
        a[r] = x * 1e9 / (double)chunk;
        b[r] = y * 1e9 / (double)chunk;
        ratio[r] = x / y;
    }
    printf("%-44s %9.1f ns %9.1f ns %7.2fx  %s\n", what, median(a, ROUNDS), median(b, ROUNDS),
           median(ratio, ROUNDS), goal);
}

int main(int argc, char **argv)
{
    size_t nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    if (nkeys == 0)
        nkeys = 1;
    keys k = keys_make(nkeys);
    uint64_t *kh = malloc(nkeys * sizeof *kh);
    if (!kh)
        die("malloc");
    for (size_t i = 0; i < nkeys; i++)
        kh[i] = envoy_key_hash(k.buf + k.off[i], k.off[i + 1] - k.off[i]);

    printf("bench_envoy: %zu keys; lookups: medians of %d alternating pairs of %d-key runs,\n"
           "thread CPU time; builds: medians of %d runs\n\n",
           nkeys, ROUNDS, nkeys < CHUNK ? (int)nkeys : CHUNK, RUNS);
    printf("%-44s %12s %12s %8s  %s\n", "measure", "measured", "reference", "ratio", "goal");

    /* 1 */
    {
        hosts h = hosts_make(100);
        uint32_t *t;
        if (maglev_build(h.node, h.n, MAGLEV_TABLE_DEFAULT, &t, NULL))
            die("maglev_build");
        const ctx c = {.k = &k, .table = t, .m = MAGLEV_TABLE_DEFAULT};
        compare("maglev key->node, 100 hosts, M=65537", run_maglev, run_maglev_ref, &c,
                "<= 1.5x (ref: XXH64 + table[h % M])");
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
        if (envoy_ring_build(h.node, h.n, ENVOY_RING_MIN_DEFAULT, ENVOY_RING_MAX_DEFAULT, &p, &np,
                             NULL))
            die("envoy_ring_build");
        const ctx c = {.k = &k, .hash = kh, .p = p, .np = np};
        char what[64];
        snprintf(what, sizeof what, "envoy-ring lookup, %zu hosts (%zu points)", sizes[s], np);
        compare(what, run_ring, run_ring_ref, &c, "<= 1.5x (ref: alg_successor)");
        free(p);
        free(h.node);
        free(h.name);
    }

    /* 3 */
    printf("\n%-44s %12s\n", "build (median, CPU time)", "time");
    static const struct {
        size_t hosts;
        uint64_t min_ring;
    } rb[] = {{10, 1024}, {100, 1024}, {1000, 1024}, {100, 1u << 20}, {1000, 8388608}};
    for (size_t s = 0; s < sizeof rb / sizeof rb[0]; s++) {
        hosts h = hosts_make(rb[s].hosts);
        double a[RUNS];
        size_t np = 0;
        int runs = rb[s].min_ring > 1000000 ? 3 : RUNS;
        for (int r = 0; r < runs; r++) {
            alg_point *p;
            double t0 = now();
            if (envoy_ring_build(h.node, h.n, rb[s].min_ring, ENVOY_RING_MAX_DEFAULT, &p, &np, NULL))
                die("envoy_ring_build");
            a[r] = now() - t0;
            free(p);
        }
        char what[80];
        snprintf(what, sizeof what, "envoy_ring_build %zu hosts, min %llu (%zu pts)", rb[s].hosts,
                 (unsigned long long)rb[s].min_ring, np);
        printf("%-44s %9.3f ms\n", what, median(a, runs) * 1e3);
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
                die("maglev_build");
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
