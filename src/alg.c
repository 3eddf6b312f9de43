/*
 * alg.c - what the algorithm cores share beyond alg.h's inline search: the
 * order most of them sort their points in.
 */
#include "alg.h"

#include <stdlib.h>

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
