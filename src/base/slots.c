/*
 * slots.c - see slots.h.
 */
#include "slots.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

uint32_t slots_hash(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

static void put(uint32_t *slot, size_t nslot, uint32_t h, size_t i)
{
    size_t j = h & (nslot - 1);
    while (slot[j])
        j = (j + 1) & (nslot - 1);
    slot[j] = (uint32_t)i + 1;
}

int slots_reserve(slots *t, size_t n, size_t first, const void *v, size_t size, size_t hash_off)
{
    if ((n + 1) * 2 <= t->nslot)
        return 0;
    if (t->nslot > SIZE_MAX / 2 / sizeof *t->slot)
        return RINGSIM_ENOMEM;
    size_t ns = t->nslot ? t->nslot * 2 : first;
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (!sl)
        return RINGSIM_ENOMEM;
    const char *e = v;
    for (size_t i = 0; i < n; i++, e += size) {
        uint32_t h;
        memcpy(&h, e + hash_off, sizeof h);
        put(sl, ns, h, i);
    }
    free(t->slot);
    t->slot = sl;
    t->nslot = ns;
    return 0;
}

void slots_put(slots *t, uint32_t h, size_t i) { put(t->slot, t->nslot, h, i); }

void slots_clear(slots *t)
{
    if (t->slot)
        memset(t->slot, 0, t->nslot * sizeof *t->slot);
}

void slots_free(slots *t)
{
    free(t->slot);
    *t = (slots){0};
}
