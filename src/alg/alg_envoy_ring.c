/*
 * alg_envoy_ring.c - Envoy's RING_HASH ring (see alg_envoy_ring.h).
 *
 * The build makes two passes over the hosts with the same double arithmetic
 * as Envoy's Ring constructor: the first only counts points (so the array is
 * allocated once, at its exact size, and the statistics are known), the
 * second hashes "<key>_<i>" into it in (host, i) order.  Then the points are
 * sorted by hash with a STABLE sort, so that equal hashes (never seen in
 * practice) stay in (node index, point index) order: an LSD radix sort on
 * 11-bit digits for large rings (skipping digits that are all equal), qsort
 * on the full (hash, node, index) order for small ones.
 *
 * This file is compiled with -ffp-contract=off (cmake/alg_envoy.cmake): a
 * fused multiply-add in `target += scale * w` would round differently from
 * Envoy's separate multiply and add, and move a point from host to host.
 */
#include "alg_envoy_ring.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* A hash key, "_", up to 20 digits: the longest point label. */
#define LABEL_MAX (255 + 1 + 20)

int envoy_ring_check_params(uint64_t min_ring_size, uint64_t max_ring_size, rs_error *err)
{
    if (min_ring_size > ENVOY_RING_SIZE_LIMIT)
        return rs_fail(err, RINGSIM_EPARAM,
                       "envoy-ring min_ring_size is at most 8388608 (Envoy's limit), not %llu",
                       (unsigned long long)min_ring_size);
    if (max_ring_size > ENVOY_RING_SIZE_LIMIT)
        return rs_fail(err, RINGSIM_EPARAM,
                       "envoy-ring max_ring_size is at most 8388608 (Envoy's limit), not %llu",
                       (unsigned long long)max_ring_size);
    if (min_ring_size > max_ring_size)
        return rs_fail(err, RINGSIM_EPARAM,
                       "ring hash: minimum_ring_size (%llu) > maximum_ring_size (%llu)",
                       (unsigned long long)min_ring_size, (unsigned long long)max_ring_size);
    if (min_ring_size == 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "envoy-ring min_ring_size must be at least 1: with 0 Envoy builds an "
                       "empty ring and sends no request anywhere");
    return 0;
}

/* Stable LSD radix sort of p[0..n) by coord, 11-bit digits (6 passes; at
 * most 2048 write streams, few enough for the caches and the TLB, where 16-bit
 * digits were two to four times slower at 8M points).  tmp holds n points,
 * count RADIX_PASSES * RADIX_BUCKETS counters.  Returns the array that holds
 * the result (p or tmp). */
#define RADIX_BITS 11
#define RADIX_BUCKETS ((size_t)1 << RADIX_BITS)
#define RADIX_PASSES ((size_t)(64 + RADIX_BITS - 1) / RADIX_BITS)

static alg_point *radix_sort(alg_point *p, alg_point *tmp, size_t n, uint32_t *count)
{
    memset(count, 0, RADIX_PASSES * RADIX_BUCKETS * sizeof *count);
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < RADIX_PASSES; d++)
            count[d * RADIX_BUCKETS + ((p[i].coord >> (RADIX_BITS * d)) & (RADIX_BUCKETS - 1))]++;
    for (size_t d = 0; d < RADIX_PASSES; d++) {
        uint32_t *c = count + d * RADIX_BUCKETS;
        const unsigned shift = (unsigned)(RADIX_BITS * d);
        if (c[(p[0].coord >> shift) & (RADIX_BUCKETS - 1)] == n)
            continue; /* every point has this digit: the pass is a copy */
        uint32_t sum = 0;
        for (size_t k = 0; k < RADIX_BUCKETS; k++) {
            uint32_t t = c[k];
            c[k] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[(p[i].coord >> shift) & (RADIX_BUCKETS - 1)]++] = p[i];
        alg_point *s = p;
        p = tmp;
        tmp = s;
    }
    return p;
}

/* Sort into ring order; may replace *p by a new array of the same size. */
static int sort_points(alg_point **p, size_t n)
{
    if (n < 4096) {
        alg_sort_points(*p, n);
        return 0;
    }
    alg_point *tmp = malloc(n * sizeof *tmp);
    uint32_t *count = malloc(RADIX_PASSES * RADIX_BUCKETS * sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return RINGSIM_ENOMEM;
    }
    alg_point *out = radix_sort(*p, tmp, n, count);
    free(count);
    free(out == *p ? tmp : *p);
    *p = out;
    return 0;
}

int envoy_ring_build_weighted(const envoy_host_weights *hw, uint64_t min_ring_size,
                              uint64_t max_ring_size, alg_point **points, size_t *npoints,
                              envoy_ring_stats *stats, rs_error *err)
{
    *points = NULL;
    *npoints = 0;
    if (stats)
        memset(stats, 0, sizeof *stats);
    int rc = envoy_ring_check_params(min_ring_size, max_ring_size, err);
    if (rc)
        return rc;
    const size_t n = hw->n;
    if (n == 0)
        return 0; /* "We can't do anything sensible with no hosts." */
    if (n > UINT32_MAX)
        return rs_fail(err, RINGSIM_EPARAM, "envoy-ring takes at most 4294967295 hosts");
    const double min_w = hw->min_weight;
    if (!(min_w > 0 && min_w <= 1))
        return rs_fail(err, RINGSIM_EPARAM, "envoy-ring: normalised weights must be in (0, 1]");
    for (size_t i = 0; i < n; i++) {
        if (!(hw->weight[i] >= min_w && hw->weight[i] <= 1))
            return rs_fail(err, RINGSIM_EPARAM,
                           "envoy-ring: normalised weight %zu is outside [min_weight, 1]", i);
        if (hw->nodes[i].len < 1 || hw->nodes[i].len > 255)
            return rs_fail(err, RINGSIM_ENAME, "envoy-ring: hash keys are 1 to 255 bytes");
    }

    /* Ring::Ring(): std::min(ceil(min_w * min_ring_size) / min_w, (double)max_ring_size). */
    const double a = ceil(min_w * (double)min_ring_size) / min_w;
    const double b = (double)max_ring_size;
    const double scale = b < a ? b : a;
    const uint64_t ring_size = (uint64_t)ceil(scale);

    /* Pass 1: count.  The running sums are Envoy's; min starts at ring_size. */
    uint64_t total = 0, min_h = ring_size, max_h = 0;
    double current = 0.0, target = 0.0;
    for (size_t i = 0; i < n; i++) {
        target += scale * hw->weight[i];
        uint64_t k = 0;
        while (current < target) {
            ++k;
            ++current;
        }
        total += k;
        min_h = k < min_h ? k : min_h;
        max_h = k > max_h ? k : max_h;
        /* Weights in (0, 1] summing to about 1 keep total near ring_size;
         * a caller's weights that sum to much more would not. */
        if (total > ring_size + n + 1)
            return rs_fail(err, RINGSIM_EPARAM, "envoy-ring: normalised weights must sum to 1");
    }
    if (total == 0)
        return 0; /* cannot happen with weights summing to 1 and min size >= 1 */

    alg_point *p = malloc(total * sizeof *p);
    if (!p)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory for %llu ring points",
                       (unsigned long long)total);

    /* Pass 2: the same arithmetic, now hashing "<key>_<i>". */
    char label[LABEL_MAX];
    size_t at = 0;
    current = 0.0;
    target = 0.0;
    for (size_t i = 0; i < n; i++) {
        const alg_node *node = &hw->nodes[i];
        size_t klen = node->len;
        memcpy(label, node->name, klen);
        label[klen++] = '_';
        target += scale * hw->weight[i];
        uint64_t k = 0;
        while (current < target) {
            size_t len = klen + alg_put_u64(label + klen, k);
            p[at].coord = XXH64(label, len, 0);
            p[at].node = (uint32_t)i;
            p[at].index = (uint32_t)k;
            at++;
            ++k;
            ++current;
        }
    }

    rc = sort_points(&p, total);
    if (rc) {
        free(p);
        return rs_fail(err, rc, "out of memory sorting %llu ring points", (unsigned long long)total);
    }
    *points = p;
    *npoints = total;
    if (stats) {
        stats->size = ring_size;
        stats->min_hashes_per_host = min_h;
        stats->max_hashes_per_host = max_h;
    }
    return 0;
}

typedef struct ring_args {
    uint64_t min_ring_size, max_ring_size;
    alg_point **points;
    size_t *npoints;
} ring_args;

static int ring_weighted(const envoy_host_weights *hw, void *ud, rs_error *err)
{
    ring_args *a = ud;
    return envoy_ring_build_weighted(hw, a->min_ring_size, a->max_ring_size, a->points, a->npoints,
                                     NULL, err);
}

int envoy_ring_build(const alg_node *nodes, size_t n, uint64_t min_ring_size,
                     uint64_t max_ring_size, alg_point **points, size_t *npoints, rs_error *err)
{
    *points = NULL;
    *npoints = 0;
    int rc = envoy_ring_check_params(min_ring_size, max_ring_size, err);
    if (rc)
        return rc;
    ring_args a = {min_ring_size, max_ring_size, points, npoints};
    return n ? envoy_with_weights(nodes, n, ring_weighted, &a, err) : 0;
}

size_t envoy_ring_lookup(const alg_point *points, size_t n, uint64_t hash, uint32_t attempt)
{
    /* chooseHost(): ketama_get_server's search on signed indexes. */
    int64_t lowp = 0, highp = (int64_t)n, midp;
    for (;;) {
        midp = (lowp + highp) / 2;
        if (midp == (int64_t)n) {
            midp = 0;
            break;
        }
        uint64_t midval = points[midp].coord;
        uint64_t midval1 = midp == 0 ? 0 : points[midp - 1].coord;
        if (hash <= midval && hash > midval1)
            break;
        if (midval < hash)
            lowp = midp + 1;
        else
            highp = midp - 1;
        if (lowp > highp) {
            midp = 0;
            break;
        }
    }
    if (attempt > 0)
        return ((uint64_t)midp + attempt) % n;
    return (size_t)midp;
}
