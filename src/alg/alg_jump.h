/*
 * alg_jump.h - Lamping & Veach's jump consistent hash.
 *
 * Reference: John Lamping, Eric Veach, "A Fast, Minimal Memory, Consistent
 * Hash Algorithm" (2014, arXiv:1406.2294), figure 1, JumpConsistentHash:
 * a 64-bit LCG (multiplier 2862933555777941757, increment 1) drives jumps
 * from bucket b to j = (b + 1) * (2^31 / ((key >> 33) + 1)), computed in
 * double arithmetic exactly in that order (a division, then a product, each
 * rounded once), until j leaves [0, buckets).  Expected O(ln buckets) steps,
 * no memory, no state.
 *
 * Guava's Hashing.consistentHash(long, int) (com/google/common/hash/
 * Hashing.java) is the same algorithm (same LCG, same jump rule, same golden
 * values) but not bit for bit in two rare cases, both found while writing
 * this core and pinned in tests/test_alg_jump.c:
 *   - Guava computes (b + 1) / (((int)(state >>> 33) + 1) / 2^31): one
 *     rounding where the paper has two, so when (b+1)*2^31/(r+1) is an exact
 *     integer the paper can land one below it (b = 48, r + 1 = 49 * 2^25:
 *     the paper jumps to 63, Guava to 64);
 *   - Guava's (int)(state >>> 33) + 1 overflows to -2^31 when the LCG's top
 *     31 bits are all ones, and Guava stops where the paper jumps to b + 1.
 * ringsim follows the paper (docs/api.md: "their published function ... double
 * arithmetic").  Random keys practically never hit either case (none in 2e7
 * random (key, buckets) pairs).
 *
 * Pure, thread-safe, cannot fail.
 */
#ifndef RINGSIM_ALG_JUMP_H
#define RINGSIM_ALG_JUMP_H

#include <stdint.h>

#include "alg.h"
#include "error.h"

/* Bucket in [0, buckets) of the 64-bit key hash; -1 when buckets <= 0 (the
 * paper's function returns its initial b = -1 without entering the loop). */
int32_t jump_hash(uint64_t key, int32_t buckets);

/* docs/api.md: jump has no weights (a node is one bucket).  0 when the node's
 * weight is 1, else RINGSIM_EPARAM with a message naming the node. */
int jump_check_weight(const alg_node *node, rs_error *err);

#endif
