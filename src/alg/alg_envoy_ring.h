/*
 * alg_envoy_ring.h - Envoy's RING_HASH load balancer ("envoy-ring").
 *
 * Reference: Envoy (github.com/envoyproxy/envoy, main branch of 2025),
 *   source/extensions/load_balancing_policies/ring_hash/ring_hash_lb.cc
 *     RingHashLoadBalancer::RingHashLoadBalancer()  (parameter check)
 *     RingHashLoadBalancer::Ring::Ring()            (building)
 *     RingHashLoadBalancer::Ring::chooseHost()      (lookup)
 *   api/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash.proto
 *     minimum_ring_size default 1024, maximum_ring_size default 8M, both <= 8M
 * Older Envoy releases hold the same code in
 * source/common/upstream/ring_hash_lb.cc.  Only the default hash function,
 * XX_HASH, is reproduced (not MURMUR_HASH_2).
 *
 * Building, exactly as Envoy does it:
 *   - weights are normalised: w_i = weight_i / sum (alg_envoy.h), and
 *     min_w = min(1.0, w_i...);
 *   - scale = min(ceil(min_w * min_ring_size) / min_w, (double)max_ring_size),
 *     so that the lightest host gets a whole number of points unless the
 *     maximum cuts in; Envoy's "size" statistic is ceil(scale);
 *   - hosts are visited in host-set order (join order) with two running
 *     doubles: target += scale * w_i, then while (current < target) the host
 *     gets point i (i = 0, 1, ...) and current += 1.  So a host's share is
 *     not rounded on its own: the fractions carry over to the next host, and
 *     a light host may get 0 points when the maximum is small;
 *   - point i of a host is at XXH64("<hash key>_<i>", seed 0), i in decimal;
 *   - the points are sorted by hash (std::sort).  Equal 64-bit hashes are
 *     practically absent (none in any Envoy test); std::sort leaves their
 *     order unspecified, and this core orders them by (node index, point
 *     index), which is deterministic.
 * Lookup: chooseHost() is ketama's binary search (ported from libketama's
 * ketama_get_server): the first point whose hash is >= the key's hash,
 * wrapping past the last point to point 0.  That is alg_successor(): the
 * array is in ring order in the sense of alg.h.  A retry attempt k > 0 takes
 * the point k places further on, wrapping.
 *
 * Consequence worth showing users: the ring is NOT minimally disruptive.
 * The scale depends on the lightest host's share, so a host joining or
 * leaving changes every host's number of points, and keys move between
 * hosts that stayed.  With ten equal hosts (1030 points) minus one, each
 * survivor goes from 103 to 114 points and about 6.6% of all keys move
 * between survivors, beside the 10% of the host that left.
 *
 * Costs: build O(P) hashing (one XXH64 per point, P is about ceil(scale) <=
 * 8M + n) and an O(P) radix sort, 16 * P bytes kept and as much again while
 * sorting (8M points take about 3 s on the 2-core test VM, most of it page
 * faults of those 256 MB; 1000 points about 0.1 ms); lookup O(log P).
 */
#ifndef RINGSIM_ALG_ENVOY_RING_H
#define RINGSIM_ALG_ENVOY_RING_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "alg_envoy.h"
#include "error.h"

#define ENVOY_RING_MIN_DEFAULT 1024u    /* RingHashLoadBalancer DefaultMinRingSize */
#define ENVOY_RING_MAX_DEFAULT 8388608u /* DefaultMaxRingSize = 8M */
#define ENVOY_RING_SIZE_LIMIT 8388608u  /* proto: both sizes lte 8388608 */

/* Envoy's ring_hash_lb.* gauges for one build. */
typedef struct envoy_ring_stats {
    uint64_t size;                /* ceil(scale): what Envoy reserves and reports */
    uint64_t min_hashes_per_host; /* fewest points of a host (may be 0) */
    uint64_t max_hashes_per_host;
} envoy_ring_stats;

/* 0 if the two sizes are ones Envoy accepts, else RINGSIM_EPARAM with err
 * filled: each <= 8388608 (the proto's limit), min <= max (Envoy's own
 * message "ring hash: minimum_ring_size (20) > maximum_ring_size (10)"), and
 * min >= 1 -- Envoy accepts 0 but then builds an empty ring that sends every
 * request nowhere, which this core refuses to simulate. */
int envoy_ring_check_params(uint64_t min_ring_size, uint64_t max_ring_size, rs_error *err);

/* Build Envoy's ring over nodes[0..n) (join order; names are hash keys;
 * weights whole numbers >= 1, see envoy_normalize_weights).  On success
 * *points is a malloc'd array of *npoints points in ring order (coord = the
 * 64-bit hash, node = index into nodes, index = the point's i), which the
 * caller frees.  n == 0 gives *points NULL and *npoints 0 (Envoy's empty
 * ring: no host).  Returns 0, RINGSIM_EPARAM (bad sizes or weights, err
 * filled) or RINGSIM_ENOMEM; on failure *points is NULL and *npoints 0. */
int envoy_ring_build(const alg_node *nodes, size_t n, uint64_t min_ring_size,
                     uint64_t max_ring_size, alg_point **points, size_t *npoints, rs_error *err);

/* The same from already normalised weights (Envoy's Ring constructor, whose
 * input may also come from locality weighting): hw->weight[i] > 0 and
 * hw->min_weight as Envoy computes them.  stats may be NULL. */
int envoy_ring_build_weighted(const envoy_host_weights *hw, uint64_t min_ring_size,
                              uint64_t max_ring_size, alg_point **points, size_t *npoints,
                              envoy_ring_stats *stats, rs_error *err);

/* Index of the point that Envoy's chooseHost(hash, attempt) picks in
 * points[0..n), n > 0: ketama's search for the first hash >= `hash`
 * (wrapping to 0), then `attempt` points further, modulo n.  With attempt 0
 * this equals alg_successor(points, n, hash).  O(log n), cannot fail. */
size_t envoy_ring_lookup(const alg_point *points, size_t n, uint64_t hash, uint32_t attempt);

#endif
