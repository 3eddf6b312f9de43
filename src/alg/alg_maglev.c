/*
 * alg_maglev.c - Envoy's Maglev table (see alg_maglev.h).
 *
 * One build entry per host, as Envoy's TableBuildEntry: weight, target
 * weight, skip, count, and instead of offset and next the current slot of the
 * permutation, (offset + skip * next) % M, moved on by one addition modulo M
 * where Envoy multiplies and divides (the same numbers, no division).  The table itself is the answer: uint32_t node indexes, with
 * UINT32_MAX marking a free slot while filling (Envoy tests for nullptr, or
 * keeps a vector<bool> in the compact table).  The entries are sorted by
 * hash key with qsort over self-contained records (name pointer and length
 * in each), so no comparison context is needed.
 */
#include "alg_maglev.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define FREE_SLOT UINT32_MAX

typedef struct build_entry {
    const char *key;
    size_t len;
    uint32_t node;
    double weight;
    double target;
    uint64_t skip;
    uint64_t slot; /* (offset + skip * next) % M, Envoy's permutation(entry) */
    uint64_t count;
} build_entry;

/* next_++: the slot moves on by skip.  slot and skip are below M, so the
 * sum stays below 2M and one subtraction is the remainder. */
static inline void advance(build_entry *b, uint64_t m)
{
    b->slot += b->skip;
    if (b->slot >= m)
        b->slot -= m;
}

/* Envoy's isPrime() for 2 <= x <= 5000011 (trial division). */
static int is_prime(uint64_t x)
{
    if (x < 4)
        return x >= 2;
    if ((x & 1) == 0)
        return 0;
    for (uint64_t f = 3; f * f <= x; f += 2)
        if (x % f == 0)
            return 0;
    return 1;
}

int maglev_check_table_size(uint64_t table_size, rs_error *err)
{
    if (table_size > MAGLEV_TABLE_LIMIT)
        return rs_fail(err, RINGSIM_EPARAM,
                       "maglev table_size is at most 5000011 (Envoy's limit), not %llu",
                       (unsigned long long)table_size);
    if (table_size == 1)
        return rs_fail(err, RINGSIM_EPARAM,
                       "maglev table_size 1 passes Envoy's prime check but makes it divide by "
                       "zero (skip = hash %% (table_size - 1)); use a prime from 2 to 5000011");
    if (!is_prime(table_size))
        return rs_fail(err, RINGSIM_EPARAM,
                       "The table size of maglev must be prime number (%llu is not; "
                       "the default is 65537)",
                       (unsigned long long)table_size);
    return 0;
}

/* std::sort of (string_view key, host, weight) tuples: key bytes compared
 * as unsigned chars, a prefix first; equal keys by node index (Envoy: by
 * host pointer). */
static int cmp_entry(const void *a, const void *b)
{
    const build_entry *x = a, *y = b;
    int c = alg_bytes_cmp(x->key, x->len, y->key, y->len);
    if (c)
        return c;
    return x->node < y->node ? -1 : x->node > y->node;
}

int maglev_build_weighted(const envoy_host_weights *hw, uint64_t table_size, uint32_t **table,
                          maglev_stats *stats, rs_error *err)
{
    *table = NULL;
    if (stats)
        memset(stats, 0, sizeof *stats);
    int rc = maglev_check_table_size(table_size, err);
    if (rc)
        return rc;
    const size_t n = hw->n;
    if (n == 0)
        return 0; /* "We can't do anything sensible with no hosts." */
    if (n >= FREE_SLOT)
        return rs_fail(err, RINGSIM_EPARAM, "maglev takes at most 4294967294 hosts");
    const double max_w = hw->max_weight;
    if (!(max_w > 0 && max_w <= 1))
        return rs_fail(err, RINGSIM_EPARAM, "maglev: normalised weights must be in (0, 1]");
    for (size_t i = 0; i < n; i++) {
        if (!(hw->weight[i] > 0 && hw->weight[i] <= max_w))
            return rs_fail(err, RINGSIM_EPARAM,
                           "maglev: normalised weight %zu is outside (0, max_weight]", i);
        if (hw->nodes[i].len < 1 || hw->nodes[i].len > 255)
            return rs_fail(err, RINGSIM_ENAME, "maglev: hash keys are 1 to 255 bytes");
    }

    build_entry *e = malloc(n * sizeof *e);
    uint32_t *t = malloc(table_size * sizeof *t);
    if (!e || !t) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory for a maglev table of %llu slots",
                     (unsigned long long)table_size);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        e[i] = (build_entry){.key = hw->nodes[i].name,
                             .len = hw->nodes[i].len,
                             .node = (uint32_t)i,
                             .weight = hw->weight[i]};
    }
    qsort(e, n, sizeof *e, cmp_entry);
    for (size_t i = 0; i < n; i++) {
        e[i].slot = XXH64(e[i].key, e[i].len, 0) % table_size; /* offset, next = 0 */
        e[i].skip = XXH64(e[i].key, e[i].len, 1) % (table_size - 1) + 1;
    }

    for (uint64_t s = 0; s < table_size; s++)
        t[s] = FREE_SLOT;
    uint64_t filled = 0;
    for (uint32_t iteration = 1; filled < table_size; ++iteration) {
        for (size_t i = 0; i < n && filled < table_size; i++) {
            build_entry *b = &e[i];
            if (iteration * b->weight < b->target)
                continue;
            b->target += max_w;
            while (t[b->slot] != FREE_SLOT)
                advance(b, table_size);
            t[b->slot] = b->node;
            advance(b, table_size);
            b->count++;
            filled++;
        }
    }

    if (stats) {
        uint64_t min = table_size, max = 0;
        for (size_t i = 0; i < n; i++) {
            min = e[i].count < min ? e[i].count : min;
            max = e[i].count > max ? e[i].count : max;
        }
        stats->min_entries_per_host = min;
        stats->max_entries_per_host = max;
    }
    free(e);
    *table = t;
    return 0;

fail:
    free(t);
    free(e);
    return rc;
}

typedef struct maglev_args {
    uint64_t table_size;
    uint32_t **table;
} maglev_args;

static int maglev_weighted(const envoy_host_weights *hw, void *ud, rs_error *err)
{
    maglev_args *a = ud;
    return maglev_build_weighted(hw, a->table_size, a->table, NULL, err);
}

int maglev_build(const alg_node *nodes, size_t n, uint64_t table_size, uint32_t **table, rs_error *err)
{
    *table = NULL;
    int rc = maglev_check_table_size(table_size, err);
    if (rc)
        return rc;
    maglev_args a = {table_size, table};
    return n ? envoy_with_weights(nodes, n, maglev_weighted, &a, err) : 0;
}

/* Number of runs of equal owners in table[0..m). */
static size_t count_runs(const uint32_t *table, uint64_t m)
{
    size_t k = m > 0;
    for (uint64_t s = 1; s < m; s++)
        k += table[s] != table[s - 1];
    return k;
}

int maglev_runs(const uint32_t *table, uint64_t table_size, maglev_run **runs, size_t *nruns)
{
    *runs = NULL;
    *nruns = 0;
    size_t k = count_runs(table, table_size);
    if (k == 0)
        return 0;
    maglev_run *r = malloc(k * sizeof *r);
    if (!r)
        return RINGSIM_ENOMEM;
    size_t j = 0;
    r[0].first = 0;
    r[0].node = table[0];
    for (uint64_t s = 1; s < table_size; s++) {
        if (table[s] != table[s - 1]) {
            r[j].last = s - 1;
            j++;
            r[j].first = s;
            r[j].node = table[s];
        }
    }
    r[j].last = table_size - 1;
    *runs = r;
    *nruns = k;
    return 0;
}

int maglev_points(const uint32_t *table, uint64_t table_size, uint32_t nnodes, alg_point **points,
                  size_t *npoints)
{
    *points = NULL;
    *npoints = 0;
    size_t k = count_runs(table, table_size);
    if (k == 0)
        return 0;
    alg_point *p = malloc(k * sizeof *p);
    uint32_t *seen = calloc(nnodes ? nnodes : 1, sizeof *seen);
    if (!p || !seen) {
        free(p);
        free(seen);
        return RINGSIM_ENOMEM;
    }
    size_t j = 0;
    for (uint64_t s = 0; s < table_size; s++) {
        if (s + 1 == table_size || table[s + 1] != table[s]) {
            uint32_t node = table[s];
            p[j].coord = s;
            p[j].node = node;
            p[j].index = node < nnodes ? seen[node]++ : 0;
            j++;
        }
    }
    free(seen);
    *points = p;
    *npoints = k;
    return 0;
}
