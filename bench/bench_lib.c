/*
 * bench_lib.c - libringsim's lookups against the engine's own path.
 *
 *   bench_lib                      the table: every algorithm, 10 and 100 nodes
 *   bench_lib --one ALG NODES KEYS one line for bench/bench_python.py:
 *                                  "lib_ns_per_key N engine_ns_per_key N"
 *
 * For each algorithm the same nodes ("10.0.0.I:11211", weight 1) and keys
 * ("key-I", made beforehand) are placed two ways: the engine's own path,
 * as `ringsim lookup` takes it (sim_lookup: the key's name_check, then
 * place_key on a placement built by place_build, with one hasher): today's
 * figure; and ringsim_lookup through the public interface (its key check,
 * its hasher taken from the pool and given back).  Each is
 * the median of RUNS passes; the ratio is the library's over the engine's
 * (issue 27 asks for 1.0x).  Then both on two threads at once, one
 * placement, the keys split in two (the engine's path with a hasher made by
 * each thread): the time of the pair, per key.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "names.h"
#include "place.h"

#include <ringsim/ringsim.h>

#define RUNS 5

typedef struct keyset {
    char (*k)[24];
    size_t *len;
    size_t n;
} keyset;

static volatile size_t sink; /* keeps the loops' results alive */

static void keys_make(keyset *ks, size_t n)
{
    ks->k = malloc(n * sizeof *ks->k);
    ks->len = malloc(n * sizeof *ks->len);
    if (!ks->k || !ks->len) {
        fprintf(stderr, "bench_lib: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        ks->len[i] = (size_t)snprintf(ks->k[i], sizeof ks->k[i], "key-%zu", i);
    ks->n = n;
}

typedef struct half {
    const ringsim_placement *p;
    const placement *pl; /* the engine's path: a hasher of the thread's own */
    const keyset *ks;
    size_t from, to;
} half;

static void *engine_range(void *arg)
{
    const half *h = arg;
    hasher *hs = hasher_new();
    size_t acc = 0;
    for (size_t i = h->from; hs && i < h->to; i++) {
        place_key_info k;
        if (name_check(h->ks->k[i], h->ks->len[i], "key", NULL) == 0)
            place_key(h->pl, hs, h->ks->k[i], h->ks->len[i], &k);
        acc += (size_t)k.owner;
    }
    hasher_free(hs);
    sink += acc;
    return NULL;
}

/* Both halves at once, this thread and one more: seconds. */
static double pair(void *(*fn)(void *), half a, half b)
{
    double t0 = bench_now();
    pthread_t t;
    bool two = pthread_create(&t, NULL, fn, &b) == 0;
    fn(&a);
    if (two)
        pthread_join(t, NULL);
    else
        fn(&b);
    return bench_now() - t0;
}

static void *lib_range(void *arg)
{
    const half *h = arg;
    size_t acc = 0;
    for (size_t i = h->from; i < h->to; i++) {
        const char *o = NULL;
        ringsim_lookup(h->p, h->ks->k[i], h->ks->len[i], &o);
        acc += (size_t)(o != NULL);
    }
    sink += acc;
    return NULL;
}

/* ns per key of the library and of the engine's path, on one thread and
 * on two (the pair's time over all keys). */
static int measure(const char *alg, size_t nodes, const keyset *ks, double *lib, double *lib2,
                   double *engine, double *engine2)
{
    int rc = 0;
    ringsim_placement *p = NULL;
    placement *pl = NULL;
    hasher *h = hasher_new();
    place_node *pn = calloc(nodes + 1, sizeof *pn);
    char(*names)[32] = calloc(nodes + 1, sizeof *names);
    place_config cfg;
    rs_error err;
    if (!h || !pn || !names || (rc = ringsim_placement_new(&p, alg)))
        goto out;
    place_config_default(&cfg);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
    for (size_t i = 0; i < nodes && !rc; i++) {
        snprintf(names[i], sizeof names[i], "10.0.%zu.%zu:11211", i / 250, i % 250 + 1);
        pn[i] = (place_node){
            .id = (int64_t)i + 1, .name = names[i], .len = strlen(names[i]), .weight = 1};
        rc = ringsim_placement_add_node(p, names[i], 1);
    }
    if (rc || (rc = ringsim_placement_build(p)) ||
        (rc = place_build(&pl, h, &cfg, pn, nodes, NULL, NULL, &err)))
        goto out;
    double t_lib[RUNS], t_lib2[RUNS], t_eng[RUNS], t_eng2[RUNS], n = (double)ks->n;
    for (int r = 0; r < RUNS; r++) {
        half all = {p, pl, ks, 0, ks->n}, a = {p, pl, ks, 0, ks->n / 2},
             b = {p, pl, ks, ks->n / 2, ks->n};
        size_t acc = 0;
        double t0 = bench_now();
        for (size_t i = 0; i < ks->n; i++) {
            place_key_info k;
            if (name_check(ks->k[i], ks->len[i], "key", NULL) == 0)
                place_key(pl, h, ks->k[i], ks->len[i], &k);
            acc += (size_t)k.owner;
        }
        double t1 = bench_now();
        lib_range(&all);
        double t2 = bench_now();
        sink += acc;
        t_eng[r] = (t1 - t0) * 1e9 / n;
        t_lib[r] = (t2 - t1) * 1e9 / n;
        t_lib2[r] = pair(lib_range, a, b) * 1e9 / n;
        t_eng2[r] = pair(engine_range, a, b) * 1e9 / n;
    }
    *engine = bench_median(t_eng, RUNS);
    *lib = bench_median(t_lib, RUNS);
    *lib2 = bench_median(t_lib2, RUNS);
    *engine2 = bench_median(t_eng2, RUNS);
out:
    if (rc)
        fprintf(stderr, "bench_lib: %s with %zu nodes: %s\n", alg, nodes, ringsim_strerror(rc));
    place_free(pl);
    ringsim_placement_free(p);
    hasher_free(h);
    free(pn);
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    static const char *const algs[] = {"ring",      "jump",  "rendezvous", "multiprobe",
                                       "ketama",    "nginx", "envoy-ring", "maglev",
                                       "cassandra", "redis", "haproxy",    "twemproxy"};
    keyset ks;
    double lib, lib2, eng, eng2;
    if (argc == 5 && !strcmp(argv[1], "--one")) {
        keys_make(&ks, strtoul(argv[4], NULL, 10));
        if (measure(argv[2], strtoul(argv[3], NULL, 10), &ks, &lib, &lib2, &eng, &eng2))
            return 1;
        printf("lib_ns_per_key %.1f engine_ns_per_key %.1f\n", lib, eng);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: bench_lib [--one ALG NODES KEYS]\n");
        return 2;
    }
    keys_make(&ks, 200000);
    printf("libringsim against the engine's lookup (name_check + place_key): %zu keys, median of "
           "%d passes, ns a key\n",
           ks.n, RUNS);
    printf("%-11s %5s %9s %9s %7s %13s %13s\n", "algorithm", "nodes", "engine", "library", "ratio",
           "engine 2 thr", "library 2 thr");
    double worst = 0;
    for (size_t a = 0; a < sizeof algs / sizeof *algs; a++)
        for (size_t nodes = 10; nodes <= 100; nodes *= 10) {
            if (measure(algs[a], nodes, &ks, &lib, &lib2, &eng, &eng2))
                return 1;
            printf("%-11s %5zu %9.1f %9.1f %6.2fx %13.1f %13.1f\n", algs[a], nodes, eng, lib,
                   lib / eng, eng2, lib2);
            worst = lib / eng > worst ? lib / eng : worst;
        }
    printf("worst library / engine: %.2fx\n", worst);
    return 0;
}
