/*
 * slots.h - the index of an open-addressing hash table whose entries live
 * in the caller's own array: what interns names in a move run (moverun.c)
 * and keys and names in a composed diff (sim_diff.c).
 *
 * slot[j] holds i + 1 for entry i of the caller's array, 0 for an empty
 * slot.  nslot is a power of two and the table is kept at most half full,
 * so a lookup probes O(1) slots on average; growing doubles it and puts
 * every entry again (amortised O(1) an insert).  A lookup stays with the
 * caller, which alone knows how to compare an entry with a key:
 *
 *     for (size_t j = h & (t->nslot - 1); t->slot[j]; j = (j + 1) & (t->nslot - 1))
 *         if (same(&v[t->slot[j] - 1], key)) ...
 */
#ifndef RINGSIM_SLOTS_H
#define RINGSIM_SLOTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct slots {
    uint32_t *slot; /* i + 1, 0 = empty; malloc'd, nslot of them (0: none yet) */
    size_t nslot;
} slots;

/* FNV-1a (32 bits) of n bytes: the hash the tables above use.  Pure. */
uint32_t slots_hash(const void *p, size_t n);

/* Room for entry n (the table stays at most half full once it is put):
 * when the table must grow, twice its slots (first, a power of two, when
 * it has none) and the n entries of v put again, each of size bytes with
 * its uint32_t hash at byte hash_off (offsetof).  0 or RINGSIM_ENOMEM (t
 * unchanged). */
int slots_reserve(slots *t, size_t n, size_t first, const void *v, size_t size, size_t hash_off);
/* Put entry i of hash h in the first empty slot of its probe sequence;
 * slots_reserve made room.  Cannot fail. */
void slots_put(slots *t, uint32_t h, size_t i);
/* Empty every slot (keeps the memory). */
void slots_clear(slots *t);
/* Release the slots; t is left empty. */
void slots_free(slots *t);

#endif
