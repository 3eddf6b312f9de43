/*
 * alg_memento.h - MementoHash: jump consistent hash that survives the
 * removal of any bucket.
 *
 * Reference: M. Coluzzi, A. Brocco, P. Antonucci, T. Leidi, "MementoHash: A
 * Stateful, Minimal Memory, Best Performing Consistent Hash Algorithm"
 * (2023, arXiv:2306.09783), and the authors' Java reference implementation,
 * SUPSI-DTI-ISIN/java-consistent-hashing-algorithms,
 * src/main/java/ch/supsi/dti/isin/consistenthash/memento/MementoEngine.java
 * (getBucket, addBucket, removeBucket) and Memento.java (remember, replacer,
 * restore).  Behaviour reproduced:
 *   - buckets 0..n-1 (the "b-array"); a lookup starts from
 *     jump_hash(keyhash, n) (the reference calls Guava's
 *     Hashing.consistentHash; jump_hash is the paper's function, which
 *     parts from Guava's only in the rare cases told in alg_jump.h);
 *   - removing bucket n-1 while nothing else is removed shrinks the b-array
 *     (plain jump hash); removing any other bucket records (bucket,
 *     replacer = live count after the removal) so that only that bucket's
 *     keys move;
 *   - adding restores the most recently removed bucket (the removals form a
 *     stack), or grows the b-array by one when nothing is removed; an add
 *     moves keys only to the added bucket, and undoes the last removal
 *     exactly;
 *   - every bucket may be removed (by shrinking, by recording, or both):
 *     the lookup then answers -1;
 *   - the lookup loop: while the bucket b is removed with replacer r,
 *     b = rehash(key, b) mod r, then follow replacers while they are >= r.
 * The reference's rehash is hashFunction.hash(key, b): its own string hash
 * of the key seeded with b, then Math.abs of the signed result.  ringsim's
 * core sees only the 64-bit key hash, so the rehash here is
 * mix(keyhash ^ b) (hash_mix, docs/api.md's SplitMix64 finalizer, b zero-extended)
 * taken mod r as an unsigned 64-bit value.  Everything else is the
 * reference's arithmetic.
 *
 * Storage: the reference keeps removed buckets in a hash table (memory
 * proportional to removals); this core keeps a flat replacer array over the
 * b-array plus the removal stack, 8 bytes per bucket, since ringsim's node
 * counts are small and a flat array makes each lookup step one load.  The
 * b-array holds at most MEMENTO_MAX_BUCKETS buckets.
 *
 * Costs: lookup O(ln n) expected (jump) plus O(1) expected replacement steps
 * per removed bucket met; add and remove O(1) amortized.  Not thread-safe
 * for writers; lookups on a memento nobody modifies may run concurrently.
 */
#ifndef RINGSIM_ALG_MEMENTO_H
#define RINGSIM_ALG_MEMENTO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define MEMENTO_MAX_BUCKETS (1 << 20)

typedef struct memento memento;

/* Empty memento (no bucket), or NULL when out of memory.  Free with
 * memento_free. */
memento *memento_new(void);
/* Accepts NULL. */
void memento_free(memento *m);
/* Independent copy of m, or NULL when out of memory. */
memento *memento_copy(const memento *m);

/* A node joins: *bucket receives the bucket it takes (the most recently
 * removed one, else n, growing the b-array).  0, RINGSIM_ENOMEM, or
 * RINGSIM_EPARAM when the b-array would exceed MEMENTO_MAX_BUCKETS; on
 * failure m is unchanged. */
int memento_add(memento *m, int32_t *bucket);
/* The node on `bucket` leaves.  0, or RINGSIM_ENOTFOUND when bucket is not a
 * live bucket (m unchanged).  Cannot fail otherwise (no allocation). */
int memento_remove(memento *m, int32_t bucket);

/* Live bucket of a 64-bit key hash, or -1 when no bucket is live.  Reads m
 * only. */
int32_t memento_lookup(const memento *m, uint64_t keyhash);

/* Number of live buckets. */
int32_t memento_size(const memento *m);
/* Size of the b-array (live and removed buckets below it). */
int32_t memento_barray_size(const memento *m);
/* 1 when bucket is live, else 0 (out-of-range buckets included). */
int memento_is_live(const memento *m, int32_t bucket);

/* Text form, for the engine to persist between operations:
 *   "memento/1 buckets=N removed=B0,B1,..."
 * N is the b-array size, Bi the removed buckets in removal order (oldest
 * first; nothing after "removed=" when none).  The replacer of Bi is
 * N - i - 1 and the bucket restored next is the last one, so this is the
 * whole state.  *out is malloc'd and NUL-terminated, *len (may be NULL) its
 * length; the caller frees it.  0 or RINGSIM_ENOMEM. */
int memento_serialize(const memento *m, char **out, size_t *len);
/* Parse the text form (len bytes at s, no NUL needed).  Refuses with
 * RINGSIM_EPARAM and a message in err anything that memento_serialize of a
 * reachable state would not print: other spellings, numbers with signs or
 * leading zeros, N over MEMENTO_MAX_BUCKETS, a removed bucket >= N or listed
 * twice, and a first removal of N - 1 (that removal shrinks instead).  On
 * success *out is a new memento (free with memento_free).  Never reads
 * past s + len.  RINGSIM_ENOMEM when out of memory. */
int memento_parse(const char *s, size_t len, memento **out, rs_error *err);

#endif
