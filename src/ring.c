/*
 * ring.c - sorted point arrays and bucketed successor search (see ring.h).
 *
 * Positions are uniform hashes, so a table indexed by the top `shift` bits of
 * a position (about one bucket per point, at most 2^16) narrows the search to
 * a handful of points: at 160,000 points a plain binary search makes 17
 * dependent probes into a 640 KB array that overflows a 512 KB L2 cache; the
 * bucket lookup makes one probe into the table and about two into the array.
 * bucket[b] is the index of the first point whose position >> shift >= b.
 */
#define _GNU_SOURCE /* qsort_r */
#include "ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring {
    size_t n;
    unsigned bits;    /* bucket table has 2^bits + 1 entries */
    uint32_t *bucket; /* see above */
    uint32_t *pos;    /* sorted */
    uint32_t *node;   /* owner node index of each point */
    uint32_t *idx;    /* point index within its node */
};

typedef struct build_point {
    uint32_t pos, node, idx;
} build_point;

/* Points by (position, node name, index); ctx is the node array.  The
 * nodes travel as qsort_r's context, never through a global: the event
 * loop and the worker thread build rings at the same time. */
static int cmp_point(const void *a, const void *b, void *ctx)
{
    const build_point *x = a, *y = b;
    const ring_node *nodes = ctx;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    if (x->node != y->node) {
        const ring_node *p = &nodes[x->node], *q = &nodes[y->node];
        size_t m = p->len < q->len ? p->len : q->len;
        int c = memcmp(p->name, q->name, m);
        if (c)
            return c;
        if (p->len != q->len)
            return p->len < q->len ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

size_t ring_label(char *out, const char *name, size_t len, uint32_t idx)
{
    memcpy(out, name, len);
    if (idx == 0)
        return len;
    return len + (size_t)sprintf(out + len, "#%u", idx);
}

int ring_build(ring **out, hasher *h, const ring_node *nodes, size_t n)
{
    *out = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += nodes[i].points;
    ring *r = calloc(1, sizeof *r);
    build_point *pts = malloc((total ? total : 1) * sizeof *pts);
    if (!r || !pts)
        goto fail;
    r->n = total;
    r->pos = malloc((total ? total : 1) * sizeof *r->pos);
    r->node = malloc((total ? total : 1) * sizeof *r->node);
    r->idx = malloc((total ? total : 1) * sizeof *r->idx);
    if (!r->pos || !r->node || !r->idx)
        goto fail;

    char label[NAME_LABEL_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < nodes[i].points; j++) {
            size_t ll = ring_label(label, nodes[i].name, nodes[i].len, j);
            pts[k].pos = hash_position(h, label, ll);
            pts[k].node = (uint32_t)i;
            pts[k].idx = j;
            k++;
        }
    }
    qsort_r(pts, total, sizeof *pts, cmp_point, (void *)nodes);
    for (size_t i = 0; i < total; i++) {
        r->pos[i] = pts[i].pos;
        r->node[i] = pts[i].node;
        r->idx[i] = pts[i].idx;
    }
    free(pts);
    /* About one bucket per point, between 2^4 and 2^16 buckets. */
    r->bits = 4;
    while (r->bits < 16 && ((size_t)1 << r->bits) < total)
        r->bits++;
    size_t nb = (size_t)1 << r->bits;
    r->bucket = malloc((nb + 1) * sizeof *r->bucket);
    if (!r->bucket) {
        ring_free(r);
        return RINGSIM_ENOMEM;
    }
    size_t i = 0;
    for (size_t b = 0; b <= nb; b++) {
        while (i < total && (r->pos[i] >> (32 - r->bits)) < b)
            i++;
        r->bucket[b] = (uint32_t)i;
    }
    *out = r;
    return 0;
fail:
    free(pts);
    ring_free(r);
    return RINGSIM_ENOMEM;
}

void ring_free(ring *r)
{
    if (!r)
        return;
    free(r->bucket);
    free(r->pos);
    free(r->node);
    free(r->idx);
    free(r);
}

size_t ring_size(const ring *r) { return r ? r->n : 0; }
uint32_t ring_point_pos(const ring *r, size_t i) { return r->pos[i]; }
uint32_t ring_point_node(const ring *r, size_t i) { return r->node[i]; }
uint32_t ring_point_index(const ring *r, size_t i) { return r->idx[i]; }

long ring_successor(const ring *r, uint32_t pos)
{
    if (!r || r->n == 0)
        return -1;
    /* lower_bound (first i with pos[i] >= pos) within the bucket of pos; the
     * answer is at most the first point of the next bucket. */
    size_t b = pos >> (32 - r->bits);
    const uint32_t *base = r->pos + r->bucket[b];
    size_t len = r->bucket[b + 1] - r->bucket[b];
    if (len == 0) {
        size_t i = r->bucket[b + 1];
        return i == r->n ? 0 : (long)i;
    }
    while (len > 1) {
        size_t half = len / 2;
        base = base[half - 1] < pos ? base + half : base;
        len -= half;
    }
    size_t i = (size_t)(base - r->pos) + (*base < pos);
    return i == r->n ? 0 : (long)i;
}

long ring_owner(const ring *r, uint32_t pos)
{
    long i = ring_successor(r, pos);
    return i < 0 ? -1 : (long)r->node[i];
}

void ring_arc_shares(const ring *r, double *share, size_t n)
{
    if (!r || r->n == 0)
        return;
    for (size_t i = 0; i < r->n; i++) {
        /* Point i owns (pos[i-1], pos[i]]; point 0 wraps around from the last. */
        uint64_t len = i ? (uint64_t)r->pos[i] - r->pos[i - 1]
                         : (uint64_t)r->pos[0] + ((uint64_t)1 << 32) - r->pos[r->n - 1];
        if (r->node[i] < n)
            share[r->node[i]] += (double)len / 4294967296.0;
    }
}
