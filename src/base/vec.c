/*
 * vec.c - see vec.h.  The pointer is read and written with memcpy, so that
 * one function serves a T ** for every T without breaking C's aliasing
 * rules (object pointers share one representation on every target we
 * build for).
 */
#include "vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int vec_next_cap(size_t cap, size_t need, size_t first, size_t *out)
{
    if (need <= cap) {
        *out = cap;
        return 0;
    }
    if (cap > SIZE_MAX / 2)
        return RINGSIM_ENOMEM;
    size_t nc = cap ? cap * 2 : first ? first : 1;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return RINGSIM_ENOMEM;
        nc *= 2;
    }
    *out = nc;
    return 0;
}

int vec_realloc(void *pp, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return RINGSIM_ENOMEM;
    size_t bytes = n * size;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, bytes);
    if (!q && bytes)
        return RINGSIM_ENOMEM;
    memcpy(pp, &q, sizeof q);
    return 0;
}

int vec_reserve(void *pp, size_t *cap, size_t need, size_t size, size_t first)
{
    size_t nc;
    if (need <= *cap)
        return 0;
    if (vec_next_cap(*cap, need, first, &nc) || vec_realloc(pp, nc, size))
        return RINGSIM_ENOMEM;
    *cap = nc;
    return 0;
}
