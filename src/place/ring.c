/*
 * ring.c - the seed's points and the bucketed successor search (see ring.h).
 *
 * Coordinates are uniform hashes, so a table indexed by the top bits of a
 * coordinate (about one bucket per point, at most 2^16) narrows the search
 * to a handful of points: at 160,000 points a plain binary search makes 17
 * dependent probes into an array that overflows a 512 KB L2 cache; the
 * bucket lookup makes one probe into the table and about two into the array.
 * bucket[b] is the index of the first point whose coord >> shift >= b.
 */
#define _GNU_SOURCE /* qsort_r */
#include "ring.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring {
    const alg_point *pts; /* borrowed, in ring order */
    size_t n;
    unsigned shift;   /* bucket of c: c >> shift, clamped to nb */
    size_t nb;        /* buckets; the table has nb + 1 entries */
    uint32_t *bucket; /* see above */
};

/* Points by (position, node name, index); ctx is the node array.  The
 * nodes travel as qsort_r's context, never through a global: the event
 * loop and the worker thread build rings at the same time. */
static int cmp_point(const void *a, const void *b, void *ctx)
{
    const alg_point *x = a, *y = b;
    const ring_node *nodes = ctx;
    if (x->coord != y->coord)
        return x->coord < y->coord ? -1 : 1;
    if (x->node != y->node) {
        const ring_node *p = &nodes[x->node], *q = &nodes[y->node];
        int c = alg_bytes_cmp(p->name, p->len, q->name, q->len);
        if (c)
            return c;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

size_t ring_label(char *out, const char *name, size_t len, uint32_t idx)
{
    memcpy(out, name, len);
    if (idx == 0)
        return len;
    return len + (size_t)sprintf(out + len, "#%u", idx);
}

int ring_points(alg_point **out, size_t *npts, hasher *h, const ring_node *nodes, size_t n)
{
    *out = NULL;
    *npts = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += nodes[i].points;
    alg_point *pts = malloc((total ? total : 1) * sizeof *pts);
    if (!pts)
        return RINGSIM_ENOMEM;
    char label[NAME_LABEL_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < nodes[i].points; j++) {
            size_t ll = ring_label(label, nodes[i].name, nodes[i].len, j);
            pts[k++] = (alg_point){hash_position(h, label, ll), (uint32_t)i, j};
        }
    }
    qsort_r(pts, total, sizeof *pts, cmp_point, (void *)nodes);
    *out = pts;
    *npts = total;
    return 0;
}

int ring_points_from(alg_point **out, size_t *npts, hasher *h, const ring_node *nodes, size_t n,
                     const alg_point *prev, size_t nprev, const ring_node *prev_nodes, size_t prev_n)
{
    *out = NULL;
    *npts = 0;
    alg_named *ord = malloc((prev_n + 1) * sizeof *ord);
    long *now = malloc((prev_n + 1) * sizeof *now); /* prev index -> index in nodes, or -1 */
    bool *kept = calloc(n + 1, sizeof *kept);
    size_t total = 0, fresh = 0;
    for (size_t i = 0; i < n; i++)
        total += nodes[i].points;
    alg_point *pts = malloc((total ? total : 1) * sizeof *pts);
    alg_point *add = malloc((total ? total : 1) * sizeof *add);
    int rc = ord && now && kept && pts && add ? 0 : RINGSIM_ENOMEM;
    for (size_t i = 0; !rc && i < prev_n; i++) {
        ord[i] = (alg_named){prev_nodes[i].name, prev_nodes[i].len, i};
        now[i] = -1;
    }
    if (!rc)
        alg_named_sort(ord, prev_n);
    for (size_t i = 0; !rc && i < n; i++) {
        long j = alg_named_find(ord, prev_n, nodes[i].name, nodes[i].len);
        if (j >= 0 && prev_nodes[j].points == nodes[i].points) {
            now[j] = (long)i;
            kept[i] = true;
        }
    }
    /* The new nodes' points, sorted. */
    char label[NAME_LABEL_MAX];
    for (size_t i = 0; !rc && i < n; i++)
        for (uint32_t j = 0; !kept[i] && j < nodes[i].points; j++) {
            size_t ll = ring_label(label, nodes[i].name, nodes[i].len, j);
            add[fresh++] = (alg_point){hash_position(h, label, ll), (uint32_t)i, j};
        }
    if (!rc && fresh)
        qsort_r(add, fresh, sizeof *add, cmp_point, (void *)nodes);
    /* The kept points stay in order (their names are the same): merge. */
    size_t k = 0, a = 0;
    for (size_t i = 0; !rc && i <= nprev; i++) {
        alg_point q;
        bool have = false;
        if (i < nprev && prev[i].node < prev_n && now[prev[i].node] >= 0) {
            q = (alg_point){prev[i].coord, (uint32_t)now[prev[i].node], prev[i].index};
            have = true;
        }
        while (a < fresh && (i == nprev || (have && cmp_point(&add[a], &q, (void *)nodes) < 0)))
            pts[k++] = add[a++];
        if (have)
            pts[k++] = q;
    }
    if (!rc && k != total) /* not the ring prev claimed to be: build it afresh */
        rc = -1;
    free(ord);
    free(now);
    free(kept);
    free(add);
    if (rc) {
        free(pts);
        return rc < 0 ? ring_points(out, npts, h, nodes, n) : rc;
    }
    *out = pts;
    *npts = total;
    return 0;
}

int ring_index(ring **out, const alg_point *pts, size_t n, uint64_t top)
{
    *out = NULL;
    ring *r = calloc(1, sizeof *r);
    if (!r)
        return RINGSIM_ENOMEM;
    r->pts = pts;
    r->n = n;
    /* About one bucket per point, between 2^4 and 2^16 buckets, over the
     * top bits of a space of `width` bits. */
    unsigned width = 1, bits = 4;
    while (width < 64 && (top >> width) != 0)
        width++;
    while (bits < 16 && ((size_t)1 << bits) < n)
        bits++;
    if (bits > width)
        bits = width;
    r->shift = width - bits;
    r->nb = (size_t)1 << bits;
    r->bucket = malloc((r->nb + 1) * sizeof *r->bucket);
    if (!r->bucket) {
        ring_free(r);
        return RINGSIM_ENOMEM;
    }
    size_t i = 0;
    for (size_t b = 0; b <= r->nb; b++) {
        while (i < n && (pts[i].coord >> r->shift) < b)
            i++;
        r->bucket[b] = (uint32_t)i;
    }
    *out = r;
    return 0;
}

void ring_free(ring *r)
{
    if (!r)
        return;
    free(r->bucket);
    free(r);
}

size_t ring_size(const ring *r) { return r ? r->n : 0; }

size_t ring_memory_bytes(const ring *r)
{
    return r ? sizeof *r + (r->nb + 1) * sizeof *r->bucket : 0;
}

long ring_successor(const ring *r, uint64_t c)
{
    if (!r || r->n == 0)
        return -1;
    /* The answer lies between the first point of c's bucket and the first
     * point of the next bucket (a coordinate past the table's last bucket
     * searches the tail). */
    uint64_t b = c >> r->shift;
    size_t lo, hi;
    if (b < r->nb) {
        lo = r->bucket[b];
        hi = r->bucket[b + 1];
    } else {
        lo = r->bucket[r->nb];
        hi = r->n;
    }
    size_t i = alg_lower_bound(r->pts, lo, hi, c);
    return i == r->n ? 0 : (long)i;
}
