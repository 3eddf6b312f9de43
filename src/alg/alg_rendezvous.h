/*
 * alg_rendezvous.h - rendezvous (highest random weight) hashing, weighted by
 * the logarithmic method.
 *
 * Definition (docs/api.md, "Version 2: placement algorithms", row `rendezvous`):
 *   score(key, node) = -weight / ln(u),
 *   u = ((mix(sha64(key) ^ sha64(name)) >> 11) + 0.5) / 2^53,
 * the node with the highest score owns the key, equal scores go to the
 * smaller name (UTF-8 bytes, a proper prefix first), and the preference list
 * is the R highest in that order.  u is uniform in (0, 1), so -1/ln(u) is a
 * draw whose maximum over nodes picks node i with probability
 * weight_i / sum(weights) (the logarithmic method of Schindelhauer &
 * Schomaker, "Weighted distributed hash tables", 2005).
 *
 * Arithmetic, to the bit: (mix(...) >> 11) is below 2^53, so converting it
 * to double is exact; adding 0.5 rounds half to even above 2^52 (a
 * documented consequence of writing the formula in doubles, reproduced
 * here and by the Python reference); the division by 2^53 is exact; ln is
 * the C library's log(), the one Python's math.log calls.  When the
 * rounding makes u exactly 1 (only for mix(...) >> 11 = 2^53 - 1), ln(u) is
 * +0 and the score is -weight / +0 = -infinity: that node ranks last.
 *
 * Cost: a lookup is n score computations (one mix, one log, one division
 * each) over node hashes computed once with rendezvous_node_hashes; the
 * preference list adds O(R) per node that enters the top R.  Pure functions,
 * thread-safe; no allocation.
 */
#ifndef RINGSIM_ALG_RENDEZVOUS_H
#define RINGSIM_ALG_RENDEZVOUS_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "hash.h"

/* out[i] = sha64(nodes[i].name) for i < n.  Cannot fail. */
void rendezvous_node_hashes(hasher *h, const alg_node *nodes, size_t n, uint64_t *out);

/* The score of a node with hash nodehash and weight w > 0 for a key whose
 * sha64 is keyhash.  Cannot fail. */
double rendezvous_score(uint64_t keyhash, uint64_t nodehash, double weight);

/* Index of the owner among nodes[0..n) (nodehash[i] = sha64 of nodes[i]'s
 * name), or -1 when n is 0. */
int32_t rendezvous_lookup(uint64_t keyhash, const alg_node *nodes, const uint64_t *nodehash,
                          size_t n);

typedef struct rendezvous_pick {
    uint32_t node; /* index into the node array */
    double score;
} rendezvous_pick;

/* The min(r, n) highest-ranked nodes, best first, into out[0..r) (caller's
 * storage); returns how many were written. */
size_t rendezvous_top(uint64_t keyhash, const alg_node *nodes, const uint64_t *nodehash, size_t n,
                      rendezvous_pick *out, size_t r);

#endif
