/*
 * bench_ketama.c - ketama lookups against libmemcached's, in the same run.
 *
 * A lookup is the whole question "which server gets this key": the key hash
 * (MD5) plus the continuum search.  Ours is ketama_key_hash + alg_successor
 * over the points of ketama_build; the reference is libmemcached's
 * memcached_generate_hash (its own MD5 and lower_bound) on a memcached_st
 * with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED and the same servers, in the same
 * order, with the same weights.  Both answer the same server for every key
 * (checked before timing).
 *
 * The machine is shared and noisy, so each figure is the median of RUNS
 * runs over the same 200,000 keys ("user:N:session", 16..22 bytes), runs of
 * the two interleaved, and printed with the ratio ours / libmemcached.
 * Goal: <= 1.0x at 10 and 100 servers.  At 1000 servers libmemcached
 * cannot run (it aborts past 100), so ours is printed alone, with the build
 * time of its continuum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmemcached/memcached.h>

#include "alg_ketama.h"
#include "bench_util.h"

#define NKEYS 200000
#define RUNS 7

typedef struct keyset {
    char *buf;
    uint32_t *off; /* NKEYS + 1 offsets into buf */
} keyset;

typedef struct servers {
    size_t n;
    char (*names)[64];
    alg_node *nodes;
} servers;

static double now_ns(void) { return bench_now() * 1e9; }

static int keys_make(keyset *k)
{
    k->buf = malloc((size_t)NKEYS * 24);
    k->off = malloc((NKEYS + 1) * sizeof *k->off);
    if (!k->buf || !k->off)
        return -1;
    uint32_t at = 0;
    for (uint32_t i = 0; i < NKEYS; i++) {
        k->off[i] = at;
        at += (uint32_t)sprintf(k->buf + at, "user:%u:session", i * 2654435761u % 1000003u);
    }
    k->off[NKEYS] = at;
    return 0;
}

/* n servers "10.0.X.Y:11211" and some on other ports, weights 1..3. */
static int servers_make(servers *s, size_t n)
{
    s->n = n;
    s->names = malloc(n * sizeof *s->names);
    s->nodes = malloc(n * sizeof *s->nodes);
    if (!s->names || !s->nodes)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i % 3)
            snprintf(s->names[i], sizeof s->names[i], "10.0.%zu.%zu", i / 250, i % 250 + 1);
        else
            snprintf(s->names[i], sizeof s->names[i], "10.0.%zu.%zu:%zu", i / 250, i % 250 + 1,
                     11212 + i);
        s->nodes[i] = (alg_node){s->names[i], strlen(s->names[i]), (double)(1 + i * 7 % 3)};
    }
    return 0;
}

static memcached_st *libmemcached_make(const servers *s)
{
    memcached_st *mc = memcached_create(NULL);
    memcached_server_list_st list = NULL;
    memcached_return_t rc;
    if (!mc)
        return NULL;
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    for (size_t i = 0; i < s->n; i++) {
        memcached_server_list_st one = memcached_servers_parse(s->names[i]);
        if (!one)
            return NULL;
        list = memcached_server_list_append_with_weight(list, one[0].hostname, one[0].port,
                                                        (uint32_t)s->nodes[i].weight, &rc);
        memcached_server_list_free(one);
    }
    rc = memcached_server_push(mc, list);
    memcached_server_list_free(list);
    return rc == MEMCACHED_SUCCESS ? mc : NULL;
}

static uint32_t ours_one(alg_md5 *m, const alg_point *p, size_t np, const char *k, size_t n)
{
    return p[alg_successor(p, np, ketama_key_hash(m, k, n))].node;
}

/* ns per lookup of one pass over the keys; *sink defeats dead-code removal. */
static double time_ours(alg_md5 *m, const alg_point *p, size_t np, const keyset *k, uint32_t *sink)
{
    double t0 = now_ns();
    for (uint32_t i = 0; i < NKEYS; i++)
        *sink += ours_one(m, p, np, k->buf + k->off[i], k->off[i + 1] - k->off[i]);
    return (now_ns() - t0) / NKEYS;
}

static double time_theirs(const memcached_st *mc, const keyset *k, uint32_t *sink)
{
    double t0 = now_ns();
    for (uint32_t i = 0; i < NKEYS; i++)
        *sink += memcached_generate_hash(mc, k->buf + k->off[i], k->off[i + 1] - k->off[i]);
    return (now_ns() - t0) / NKEYS;
}

static int bench_at(size_t n, alg_md5 *m, const keyset *k, uint32_t *sink)
{
    servers s;
    alg_point *p = NULL;
    size_t np = 0;
    memcached_st *mc = NULL;
    double ours[RUNS], theirs[RUNS], build[RUNS];
    int rc = -1;

    if (servers_make(&s, n))
        goto out;
    for (int r = 0; r < RUNS; r++) {
        free(p);
        p = NULL;
        double t0 = now_ns();
        if (ketama_build(m, s.nodes, n, &p, &np, NULL))
            goto out;
        build[r] = (now_ns() - t0) / 1e6;
    }
    if (n <= 100) {
        mc = libmemcached_make(&s);
        if (!mc)
            goto out;
        for (uint32_t i = 0; i < NKEYS; i++) {
            const char *key = k->buf + k->off[i];
            size_t len = k->off[i + 1] - k->off[i];
            if (ours_one(m, p, np, key, len) != memcached_generate_hash(mc, key, len)) {
                fprintf(stderr, "bench_ketama: answers differ at %zu servers, key %.*s\n", n,
                        (int)len, key);
                goto out;
            }
        }
    }
    for (int r = 0; r < RUNS; r++) {
        ours[r] = time_ours(m, p, np, k, sink);
        if (mc)
            theirs[r] = time_theirs(mc, k, sink);
    }
    double mo = bench_median(ours, RUNS), mb = bench_median(build, RUNS);
    if (mc) {
        double mt = bench_median(theirs, RUNS);
        printf("%6zu  %8zu  %9.1f  %12.1f  %5.2fx  %s  %9.2f\n", n, np, mo, mt, mo / mt,
               mo <= mt ? "ok  " : "SLOW", mb);
    } else {
        printf("%6zu  %8zu  %9.1f  %12s  %6s  %4s  %9.2f\n", n, np, mo, "(aborts)", "-", "-", mb);
    }
    rc = 0;
out:
    memcached_free(mc);
    free(p);
    free(s.names);
    free(s.nodes);
    return rc;
}

int main(void)
{
    keyset k = {0};
    uint32_t sink = 0;
    int rc = 1;
    alg_md5 *m = alg_md5_new();
    if (!m || keys_make(&k)) {
        fprintf(stderr, "bench_ketama: out of memory or no MD5\n");
        goto out;
    }
    printf("ketama lookup (MD5 of the key + continuum search), ns/lookup, median of %d runs "
           "over %d keys; goal ours <= 1.0x libmemcached\n",
           RUNS, NKEYS);
    printf("%6s  %8s  %9s  %12s  %6s  %4s  %9s\n", "nodes", "points", "ours", "libmemcached",
           "ratio", "goal", "build ms");
    static const size_t sizes[] = {10, 100, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (bench_at(sizes[i], m, &k, &sink))
            goto out;
    printf("(checksum %u)\n", sink);
    rc = 0;
out:
    alg_md5_free(m);
    free(k.buf);
    free(k.off);
    return rc;
}
