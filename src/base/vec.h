/*
 * vec.h - growing arrays: the one place that doubles a malloc'd array's
 * capacity, with the overflow checks every caller would otherwise repeat.
 *
 * An array here is a plain pointer plus a capacity the caller keeps (often
 * beside a count n).  vec_reserve makes room for `need` elements, doubling
 * from a first capacity, so n appends cost O(n) copies and O(log n)
 * reallocs.  Arrays that share one capacity (parallel arrays) compute it
 * once with vec_next_cap and realloc each with vec_realloc.
 */
#ifndef RINGSIM_VEC_H
#define RINGSIM_VEC_H

#include <stddef.h>

/* The capacity that holds need elements: cap itself when it does, else
 * cap * 2 (first when cap is 0) doubled until it does.  0, or
 * RINGSIM_ENOMEM when it would overflow size_t (*out untouched).
 * Cannot fail otherwise. */
int vec_next_cap(size_t cap, size_t need, size_t first, size_t *out);

/* Resize the array whose address is pp (a T ** for any object type T) to
 * n elements of size bytes.  0, or RINGSIM_ENOMEM when n * size overflows
 * or realloc fails; then the array is untouched (still the caller's). */
int vec_realloc(void *pp, size_t n, size_t size);

/* Room for need elements of size bytes in the array at pp (a T **) of *cap
 * elements: vec_next_cap and vec_realloc, then *cap updated.  0, or
 * RINGSIM_ENOMEM with the array and *cap unchanged. */
int vec_reserve(void *pp, size_t *cap, size_t need, size_t size, size_t first);

#endif
