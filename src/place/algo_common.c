/*
 * algo_common.c - the machinery the algorithm adaptors (algo_*.c) share,
 * written once: the points of a weighted node, the successor search of a
 * key on a ring of points, the preference walk, the segments of a point
 * ring and of a table of owners, and the steps of a trace.  place.c uses
 * some of it too (the walk for replicas' shares, a table's segments for
 * drawing); nothing here calls place.c, place_states.c or an adaptor, so
 * the adaptors sit above it and place.c reaches them through the table.
 *
 * Most algorithms are rings of points (alg_point arrays in ring order):
 * the seed's ring, ketama, nginx, Envoy's ring hash, Cassandra's tokens
 * and the points multiprobe probes against.  An adaptor supplies its
 * points and its key hash and takes the rest from here.
 *
 * Costs: the successor O(log points) (the seed's ring: the bucketed
 * search of ring.c); a walk visits points until r distinct nodes; the
 * segments O(points), or O(table size); the rest O(1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "place_int.h"
#include "vec.h"

/* ---- points and keys ---- */

double place__weight(const place_node *x) { return x->weight > 0 ? x->weight : 1; }

uint32_t place_node_points(const place_config *cfg, double weight)
{
    return place__points(cfg->param[PP_POINTS_PER_NODE], weight);
}

uint32_t place__points(int64_t per_node, double weight)
{
    double p = round((double)per_node * weight);
    if (!(p >= 1)) /* also catches NaN */
        return 1;
    return p > PLACE_MAX_NODE_POINTS ? PLACE_MAX_NODE_POINTS : (uint32_t)p;
}

const size_t *place__node_points(const placement *p, size_t node, size_t *count)
{
    *count = 0;
    if (!p->by_node || node >= p->n)
        return NULL;
    *count = p->node_at[node + 1] - p->node_at[node];
    return p->by_node + p->node_at[node];
}

void place__point_owner(const placement *p, place_key_info *k)
{
    if (!p->npts)
        return;
    /* The index is built once the points are (a build that places keys
     * before that searches the points themselves, the same answer). */
    long i = p->ring ? ring_successor(p->ring, k->coord)
                     : (long)alg_successor(p->pts, p->npts, k->coord);
    k->point = i;
    k->owner = p->pts[i].node;
}

size_t place__walk(const placement *p, size_t start, uint32_t r, long *out)
{
    size_t got = 0;
    if (r > p->n)
        r = (uint32_t)p->n;
    for (size_t s = 0; s < p->npts && got < r; s++) {
        long nd = p->pts[(start + s) % p->npts].node;
        bool seen = false;
        for (size_t k = 0; k < got && !seen; k++)
            seen = out[k] == nd;
        if (!seen && place__domain_free(p, nd, out, got))
            out[got++] = nd;
    }
    return got;
}

bool place__domain_free(const placement *p, long nd, const long *out, size_t got)
{
    if (!p->dom || p->dom[nd] == PLACE_NO_DOMAIN)
        return true;
    for (size_t k = 0; k < got; k++)
        if (p->dom[out[k]] == p->dom[nd])
            return false;
    return true;
}

size_t place__walk_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out)
{
    if (k->point < 0)
        return 0;
    return place__walk(p, (size_t)k->point, r, out);
}

/* ---- segments ---- */

/* Segments of a point ring: point i owns (coord[i-1], coord[i]]; equal
 * coordinates leave the later points empty; past the last point wraps. */
int place__point_segments(const placement *p, place_seg **out, size_t *n)
{
    *out = malloc((p->npts + 2) * sizeof **out);
    if (!*out)
        return RINGSIM_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < p->npts; i++)
        if (m == 0 || (*out)[m - 1].hi != p->pts[i].coord)
            (*out)[m++] = (place_seg){p->pts[i].coord, p->pts[i].node};
    if (m == 0)
        (*out)[m++] = (place_seg){p->top, -1};
    else if ((*out)[m - 1].hi != p->top)
        (*out)[m++] = (place_seg){p->top, p->pts[0].node};
    *n = m;
    return 0;
}

/* Segments of a table of owners (one entry per coordinate). */
int place__table_segments(const placement *p, place_seg **out, size_t *n)
{
    size_t cap = 16, m = 0;
    *out = malloc(cap * sizeof **out);
    if (!*out)
        return RINGSIM_ENOMEM;
    for (uint64_t i = 0; i <= p->top; i++) {
        long o = p->n && p->table[i] < p->n ? (long)p->table[i] : -1; /* n: nobody (ceph) */
        if (m && (*out)[m - 1].owner == o) {
            (*out)[m - 1].hi = i;
            continue;
        }
        if (vec_reserve(out, &cap, m + 1, sizeof **out, 16)) {
            free(*out);
            *out = NULL;
            return RINGSIM_ENOMEM;
        }
        (*out)[m++] = (place_seg){i, o};
    }
    *n = m;
    return 0;
}

/* ---- traces ---- */

bool place_coord_str(const placement *p, uint64_t coord, char out[24])
{
    if (p->a->coord_kind == PLACE_COORD_NONE) {
        out[0] = 0;
        return false;
    }
    if (p->a->coord_kind == PLACE_COORD_SIGNED)
        snprintf(out, 24, "%lld", (long long)alg_to_signed(coord));
    else
        snprintf(out, 24, "%llu", (unsigned long long)coord);
    return true;
}

void place__step(json_t *t, const char *step, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(t, json_pack("{s:s, s:s}", "step", step, "detail", buf));
}

/* The common last steps of a ring trace: which point, which node, wrap. */
void place__trace_point(const placement *p, const place_key_info *k, const char *const *names,
                        const char *what, json_t *t)
{
    if (k->point < 0) {
        place__step(t, "owner", "there is no node: the key waits unassigned");
        return;
    }
    const alg_point *pt = &p->pts[k->point];
    char c[24], kc[24];
    place_coord_str(p, pt->coord, c);
    place_coord_str(p, k->coord, kc);
    bool wrapped = k->coord > p->pts[p->npts - 1].coord;
    if (wrapped)
        place__step(t, "successor", "%s is past the last %s, so the search wraps to the first: %s %s",
                    kc, what, what, c);
    else
        place__step(t, "successor", "the first %s at or after %s is %s (%s #%u of %s)", what, kc, c,
                    what, pt->index, names[pt->node]);
    place__step(t, "owner", "%s owns the key", names[pt->node]);
}

uint64_t place__top32(const place_config *cfg)
{
    (void)cfg;
    return UINT32_MAX;
}

uint64_t place__top64(const place_config *cfg)
{
    (void)cfg;
    return UINT64_MAX;
}

/* Whether a node holds the key; when none does, the trace's last step says
 * so. */
bool place__trace_owned(const place_key_info *k, json_t *t)
{
    if (k->owner >= 0)
        return true;
    place__step(t, "owner", "there is no node: the key waits unassigned");
    return false;
}

/* The hash step of the algorithms that place sha64 itself (jump,
 * rendezvous), then place__trace_owned. */
bool place__trace_sha64(const place_key_info *k, json_t *t)
{
    place__step(t, "hash", "sha64: the first 8 bytes of SHA-256 of the key, big-endian: %llu",
                (unsigned long long)k->hash);
    return place__trace_owned(k, t);
}
