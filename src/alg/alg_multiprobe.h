/*
 * alg_multiprobe.h - multi-probe consistent hashing (Ben Appleton, Michael
 * O'Reilly, "Multi-probe consistent hashing", 2015, arXiv:1505.00062).
 *
 * Definition (docs/api.md, "Version 2: placement algorithms", row `multiprobe`):
 *   - one point per node at position(name), in ring order (position, name
 *     bytes, point index) like every ringsim ring;
 *   - a key has k probes p_i = (h1 + i * h2) mod 2^32, i = 0..k-1, with
 *     h1 = position(key) (bytes 0..3 of SHA-256(key), big-endian) and
 *     h2 = bytes 4..7 of SHA-256(key), big-endian, OR 1 (odd, so the k
 *     probes are distinct for k <= 2^32);
 *   - each probe's successor is the first point with position >= p_i,
 *     wrapping past the last; its distance is (position - p_i) mod 2^32;
 *   - the winner is the probe with the smallest distance, the lowest i
 *     among equal distances; the owner is the winner's successor point's
 *     node, and the key's coordinate is the winning probe p_i.
 * The paper hashes the key with k independent functions; double hashing
 * (h1 + i*h2) is a standard way to get k of them from one digest, and docs/api.md
 * fixes it as above.  (dgryski/go-mpchash, a common implementation, uses k
 * seeded hashes and a strict successor instead; it is not a reference here.)
 *
 * Parameter `probes` (k): default 21 and accepted 1..1000.  The paper's
 * abstract promises a peak-to-average load of 1 + e with 1 + 1/e probes, so
 * 21 probes give 1.05, its headline figure.  k = 1 is plain consistent
 * hashing with one point per node.  At k = 1000 (e ~ 0.001) the structural
 * imbalance is below the sampling noise of a key set with fewer than a
 * million keys per node (about 1/sqrt(keys per node)), while each probe
 * costs a binary search: more probes would make lookups slower and the
 * balance no better that anyone could measure.
 *
 * Costs: building the points O(n log n) (n SHA-256); a lookup
 * O(k log n).  Pure functions, thread-safe.  Replicas: walk the ring from
 * the winning point (docs/api.md: "walk from the winner").
 */
#ifndef RINGSIM_ALG_MULTIPROBE_H
#define RINGSIM_ALG_MULTIPROBE_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"
#include "hash.h"

#define MULTIPROBE_DEFAULT_PROBES 21
#define MULTIPROBE_MIN_PROBES 1
#define MULTIPROBE_MAX_PROBES 1000

/* 0, or RINGSIM_EPARAM with a message for a user when probes is outside
 * 1..1000. */
int multiprobe_check_probes(long long probes, rs_error *err);

/* docs/api.md: multiprobe has no weights (one point per node).  0 when the
 * node's weight is 1, else RINGSIM_EPARAM with a message naming the node. */
int multiprobe_check_weight(const alg_node *node, rs_error *err);

/* The n points in ring order into *out (malloc'd, n entries, NULL when n is
 * 0; the caller frees it): coord = position(name), node = index in nodes,
 * index = 0.  0 or RINGSIM_ENOMEM. */
int multiprobe_points(hasher *h, const alg_node *nodes, size_t n, alg_point **out);

/* The key's two probe hashes: h1 = position(key), h2 = bytes 4..7 of its
 * SHA-256 OR 1.  One SHA-256; cannot fail. */
void multiprobe_key(hasher *h, const void *key, size_t len, uint32_t *h1, uint32_t *h2);

/* Index into pts[0..n) (n > 0, ring order) of the winning probe's successor
 * point; pts[i].node is the owner.  *coord (may be NULL) receives the
 * winning probe, *probe (may be NULL) its i.  probes >= 1.  Cannot fail. */
size_t multiprobe_lookup(const alg_point *pts, size_t n, uint32_t h1, uint32_t h2, uint32_t probes,
                         uint32_t *coord, uint32_t *probe);

#endif
