/*
 * alg_multiprobe.c - multi-probe consistent hashing (see alg_multiprobe.h).
 *
 * The points are sorted through a scratch array that carries each name, so
 * the comparator needs no global context.  A lookup makes k successor
 * searches with alg_successor (binary search) and keeps the strictly
 * smallest distance, which leaves the lowest i on ties.
 */
#include "alg_multiprobe.h"

#include <stdlib.h>
#include <string.h>

int multiprobe_check_probes(long long probes, rs_error *err)
{
    if (probes < MULTIPROBE_MIN_PROBES || probes > MULTIPROBE_MAX_PROBES)
        return rs_fail(err, RINGSIM_EPARAM,
                       "multiprobe probes must be a whole number from %d to %d: got %lld",
                       MULTIPROBE_MIN_PROBES, MULTIPROBE_MAX_PROBES, probes);
    return 0;
}

int multiprobe_check_weight(const alg_node *node, rs_error *err)
{
    return alg_check_unweighted(node, "multiprobe", "each node is one point", err);
}

typedef struct sort_point {
    uint32_t pos, node;
    const char *name;
    size_t len;
} sort_point;

static int cmp_point(const void *a, const void *b)
{
    const sort_point *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    int c = alg_bytes_cmp(x->name, x->len, y->name, y->len);
    if (c)
        return c;
    return x->node < y->node ? -1 : x->node > y->node; /* equal names: never */
}

int multiprobe_points(hasher *h, const alg_node *nodes, size_t n, alg_point **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    sort_point *sp = malloc(n * sizeof *sp);
    alg_point *pts = malloc(n * sizeof *pts);
    if (!sp || !pts)
        goto fail;
    for (size_t i = 0; i < n; i++)
        sp[i] = (sort_point){hash_position(h, nodes[i].name, nodes[i].len), (uint32_t)i,
                             nodes[i].name, nodes[i].len};
    qsort(sp, n, sizeof *sp, cmp_point);
    for (size_t i = 0; i < n; i++)
        pts[i] = (alg_point){sp[i].pos, sp[i].node, 0};
    free(sp);
    *out = pts;
    return 0;
fail:
    free(sp);
    free(pts);
    return RINGSIM_ENOMEM;
}

void multiprobe_key(hasher *h, const void *key, size_t len, uint32_t *h1, uint32_t *h2)
{
    unsigned char d[32];
    hash_sha256(h, key, len, d);
    *h1 = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
    *h2 = ((uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 8 | d[7]) | 1u;
}

size_t multiprobe_lookup(const alg_point *pts, size_t n, uint32_t h1, uint32_t h2, uint32_t probes,
                         uint32_t *coord, uint32_t *probe)
{
    size_t best = 0;
    uint32_t best_dist = 0, best_p = h1, best_i = 0;
    uint32_t p = h1;
    for (uint32_t i = 0; i < probes; i++, p += h2) { /* mod 2^32 */
        size_t s = alg_successor(pts, n, p);
        uint32_t dist = (uint32_t)pts[s].coord - p; /* clockwise, mod 2^32 */
        if (i == 0 || dist < best_dist) {
            best = s;
            best_dist = dist;
            best_p = p;
            best_i = i;
        }
    }
    if (coord)
        *coord = best_p;
    if (probe)
        *probe = best_i;
    return best;
}
