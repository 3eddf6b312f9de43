/*
 * alg_haproxy.c - HAProxy's consistent hash tree as a sorted point array,
 * its nearest-point lookup, and the arcs that lookup gives each point.
 * See alg_haproxy.h for the rules and the upstream files they come from.
 */
#include "alg_haproxy.h"

#include <math.h>
#include <stdlib.h>

uint32_t haproxy_full_hash(uint32_t a)
{
    a = (a + 0x7ed55d16u) + (a << 12);
    a = (a ^ 0xc761c23cu) ^ (a >> 19);
    a = (a + 0x165667b1u) + (a << 5);
    a = (a + 0xd3a2646cu) ^ (a << 9);
    a = (a + 0xfd7046c5u) + (a << 3);
    a = (a ^ 0xb55a4f09u) ^ (a >> 16);
    return a * 3221225473u;
}

uint32_t haproxy_sdbm(const void *s, size_t len)
{
    const unsigned char *k = s;
    uint32_t h = 0;
    while (len--)
        h = (uint32_t)*k++ + (h << 6) + (h << 16) - h;
    return h;
}

uint32_t haproxy_key_hash(const void *key, size_t len)
{
    return haproxy_full_hash(haproxy_sdbm(key, len));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int given_has(const uint32_t *g, size_t n, uint32_t id)
{
    return bsearch(&id, g, n, sizeof *g, cmp_u32) != NULL;
}

int haproxy_assign_ids(const int64_t *given, size_t n, uint32_t *out, rs_error *err)
{
    uint32_t *g = malloc((n + 1) * sizeof *g);
    if (!g)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (!given[i])
            continue;
        if (given[i] < 1 || given[i] > HAPROXY_MAX_ID) {
            free(g);
            return rs_fail(err, RINGSIM_EPARAM,
                           "a server id must be 1 to %d (HAProxy: custom id has to be > 0)",
                           HAPROXY_MAX_ID);
        }
        g[ng++] = (uint32_t)given[i];
    }
    qsort(g, ng, sizeof *g, cmp_u32);
    for (size_t i = 1; i < ng; i++)
        if (g[i] == g[i - 1]) {
            uint32_t twice = g[i];
            free(g);
            return rs_fail(err, RINGSIM_EPARAM,
                           "server id %u is given twice (HAProxy: custom id %u already used)",
                           twice, twice);
        }
    /* Ids assigned so far are all below next, so only the given ones can
     * be in the way (get_next_id: the first free id >= next). */
    uint64_t next = 1;
    for (size_t i = 0; i < n; i++) {
        if (given[i]) {
            out[i] = (uint32_t)given[i];
        } else {
            while (next <= UINT32_MAX && given_has(g, ng, (uint32_t)next))
                next++;
            if (next > HAPROXY_MAX_ID) {
                free(g);
                return rs_fail(err, RINGSIM_EPARAM, "no server id is left above %d", HAPROXY_MAX_ID);
            }
            out[i] = (uint32_t)next;
        }
        next++;
    }
    free(g);
    return 0;
}

int haproxy_build(const alg_node *nodes, const uint32_t *ids, size_t n, alg_point **points,
                  size_t *npoints, rs_error *err)
{
    *points = NULL;
    *npoints = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        double w = nodes[i].weight;
        if (!(w >= 0 && w <= HAPROXY_MAX_WEIGHT && w == floor(w)))
            return rs_fail(err, RINGSIM_EPARAM,
                           "haproxy weights are whole numbers from 0 to %d: server \"%.*s\" "
                           "has %g",
                           HAPROXY_MAX_WEIGHT, (int)(nodes[i].len > 64 ? 64 : nodes[i].len),
                           nodes[i].name, w);
        total += (size_t)w * HAPROXY_POINTS_PER_WEIGHT;
    }
    if (!total)
        return 0;
    alg_point *p = malloc(total * sizeof *p);
    if (!p)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t pts = (uint32_t)nodes[i].weight * HAPROXY_POINTS_PER_WEIGHT;
        for (uint32_t j = 0; j < pts; j++)
            p[k++] = (alg_point){haproxy_full_hash(ids[i] * HAPROXY_ID_RANGE + j), (uint32_t)i, j};
    }
    alg_sort_points(p, total);
    *points = p;
    *npoints = total;
    return 0;
}

size_t haproxy_lookup(const alg_point *p, size_t n, uint32_t hash, size_t *next, size_t *prev)
{
    size_t nx = alg_successor(p, n, hash); /* eb32_lookup_ge, else eb32_first */
    size_t pv = nx ? nx - 1 : n - 1;       /* eb32_prev, else eb32_last */
    uint32_t dp = hash - (uint32_t)p[pv].coord, dn = (uint32_t)p[nx].coord - hash;
    if (next)
        *next = nx;
    if (prev)
        *prev = pv;
    return dp <= dn ? pv : nx;
}

int haproxy_arcs(const alg_point *p, size_t n, haproxy_arc **out, size_t *narcs)
{
    haproxy_arc *a = malloc((2 * n + 2) * sizeof *a);
    if (!a)
        return RINGSIM_ENOMEM;
    size_t m = 0;
    /* Groups of equal points: first[g] .. last[g].  Between two groups
     * c < c' (d = c' - c mod 2^32), (c, c + d/2] goes to the last point of
     * c (dp <= dn) and (c + d/2, c'] to the first of c'.  Walk the groups
     * in unwrapped 64-bit coordinates from the first one. */
    const uint64_t top = UINT32_MAX, full = top + 1;
    uint64_t first_c = p[0].coord;
    /* The last group and its midpoint toward the first (plus 2^32). */
    size_t lg = n - 1;
    while (lg > 0 && p[lg - 1].coord == p[n - 1].coord)
        lg--;
    uint64_t last_c = p[n - 1].coord;
    uint64_t last_mid = last_c + (first_c + full - last_c) / 2;
    if (lg == 0) {
        /* One group (never with whole servers: each has 16 distinct j):
         * next and prev are its first and last point, a hash equal to it
         * has dp = dn = 0 and goes to the last, as does (c, c + 2^31]. */
        uint64_t mid = first_c + full / 2;
        if (mid >= full)
            a[m++] = (haproxy_arc){(uint32_t)(mid - full), (uint32_t)(n - 1)};
        if (first_c > 0)
            a[m++] = (haproxy_arc){(uint32_t)(first_c - 1), 0};
        a[m++] = (haproxy_arc){(uint32_t)(mid >= full ? top : mid), (uint32_t)(n - 1)};
        if (mid < top)
            a[m++] = (haproxy_arc){(uint32_t)top, 0};
        *out = a;
        *narcs = m;
        return 0;
    }
    if (last_mid >= full)
        a[m++] = (haproxy_arc){(uint32_t)(last_mid - full), (uint32_t)(n - 1)};
    for (size_t g = 0; g < n;) {
        size_t e = g;
        while (e + 1 < n && p[e + 1].coord == p[g].coord)
            e++;
        uint64_t c = p[g].coord;
        if (!m || a[m - 1].hi != c)
            a[m++] = (haproxy_arc){(uint32_t)c, (uint32_t)g};
        uint64_t mid = e + 1 < n ? c + (p[e + 1].coord - c) / 2 : last_mid;
        if (mid > top)
            mid = top;
        if (mid != c)
            a[m++] = (haproxy_arc){(uint32_t)mid, (uint32_t)e};
        g = e + 1;
    }
    if (a[m - 1].hi != top)
        a[m++] = (haproxy_arc){(uint32_t)top, 0};
    *out = a;
    *narcs = m;
    return 0;
}

/* ---- hash-type map-based ---- */

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int haproxy_map_build(const alg_node *nodes, const bool *use, size_t n, long tot_of, uint32_t **map,
                      uint32_t *tot)
{
    uint32_t g = 0;
    uint64_t t = 0;
    *map = NULL;
    *tot = 0;
    for (size_t i = 0; i < n; i++)
        if (nodes[i].weight > 0)
            g = gcd32(g, (uint32_t)nodes[i].weight);
    for (size_t i = 0; i < n; i++)
        if (use[i] && nodes[i].weight > 0)
            t += (uint32_t)nodes[i].weight / g;
    if (tot_of >= 0 && t > 0)
        t = (uint32_t)nodes[tot_of].weight / g;
    if (t == 0)
        return 0;
    int64_t *score = calloc(n, sizeof *score);
    uint32_t *m = malloc(t * sizeof *m);
    if (!score || !m) {
        free(score);
        free(m);
        return RINGSIM_ENOMEM;
    }
    for (uint64_t o = 0; o < t; o++) {
        int64_t max = 0;
        long best = -1;
        for (size_t i = 0; i < n; i++) {
            if (!use[i] || nodes[i].weight <= 0)
                continue;
            if (t == 1) {
                best = (long)i;
                break;
            }
            score[i] += (uint32_t)nodes[i].weight / g;
            int64_t v = (score[i] + (int64_t)t) / (int64_t)t;
            if (best < 0 || v > max) {
                max = v;
                best = (long)i;
            }
        }
        m[o] = (uint32_t)best;
        if (t != 1)
            score[best] -= (int64_t)t;
    }
    free(score);
    *map = m;
    *tot = (uint32_t)t;
    return 0;
}
