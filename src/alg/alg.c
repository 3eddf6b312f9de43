/*
 * alg.c - what the algorithm cores share beyond alg.h's inline search: the
 * order most of them sort their points in, the byte order of names, and
 * the decimal digits of a label.
 */
#include "alg.h"

#include <stdlib.h>
#include <string.h>

int alg_point_cmp(const void *a, const void *b)
{
    const alg_point *x = a, *y = b;
    if (x->coord != y->coord)
        return x->coord < y->coord ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

void alg_sort_points(alg_point *p, size_t n) { qsort(p, n, sizeof *p, alg_point_cmp); }

int alg_bytes_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int cmp_named(const void *a, const void *b)
{
    const alg_named *x = a, *y = b;
    return alg_bytes_cmp(x->name, x->len, y->name, y->len);
}

void alg_named_sort(alg_named *v, size_t n)
{
    if (n)
        qsort(v, n, sizeof *v, cmp_named);
}

long alg_named_find(const alg_named *v, size_t n, const char *name, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = alg_bytes_cmp(v[mid].name, v[mid].len, name, len);
        if (c == 0)
            return (long)v[mid].idx;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int alg_check_unweighted(const alg_node *node, const char *algorithm, const char *why, rs_error *err)
{
    if (node->weight == 1.0)
        return 0;
    return rs_fail(err, RINGSIM_EPARAM, "%s has no weights (%s): \"%.*s\" has weight %g", algorithm,
                   why, (int)node->len, node->name, node->weight);
}

size_t alg_put_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}
