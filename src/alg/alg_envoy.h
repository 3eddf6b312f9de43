/*
 * alg_envoy.h - what Envoy's two hashing load balancers share: the key hash
 * and the normalised host weights.
 *
 * Reference: Envoy (github.com/envoyproxy/envoy, main branch of 2025),
 *   source/extensions/load_balancing_policies/common/thread_aware_lb_impl.cc
 *     normalizeHostWeights(), normalizeWeights(), validateEndpoints()
 *   source/common/common/hash.h  HashUtil::xxHash64() = XXH64(data, len, seed)
 *
 * Envoy's RING_HASH (alg_envoy_ring.h) and MAGLEV (alg_maglev.h) are both
 * "thread aware" load balancers: on every host-set change Envoy turns the
 * hosts' integer weights into a NormalizedHostWeightVector (host, weight /
 * sum) plus its minimum and maximum, and hands that to the ring or table
 * builder.  A request's hash (with no hash policy of our own: the xxHash64 of
 * the key, seed 0) then picks the host.
 *
 * A node's name here is Envoy's host hash key: the "hash_key" string of the
 * host's envoy.lb metadata if set, else its hostname (use_hostname_for_hashing)
 * or its address as Envoy prints it ("10.0.0.1:80", "[::1]:80").
 *
 * Costs: envoy_key_hash O(len); envoy_normalize_weights O(n).  No state, no
 * allocation, thread-safe.
 */
#ifndef RINGSIM_ALG_ENVOY_H
#define RINGSIM_ALG_ENVOY_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"

/* Largest host weight, and largest sum of the weights of one locality
 * (validateEndpoints: "The sum of weights of all upstream hosts in a locality
 * exceeds 4294967295"). */
#define ENVOY_WEIGHT_MAX 4294967295.0

/* Envoy's NormalizedHostWeightVector with the min and max it computes beside
 * it.  Everything is borrowed. */
typedef struct envoy_host_weights {
    const alg_node *nodes; /* n hosts in host-set order (join order); names = hash keys */
    const double *weight;  /* weight[i]: the normalised weight of nodes[i] */
    size_t n;
    double min_weight; /* min over weight[], starting from 1.0 as Envoy does */
    double max_weight; /* max over weight[], starting from 0.0 as Envoy does */
} envoy_host_weights;

/* xxHash64 of the bytes with seed 0: Envoy's HashUtil::xxHash64(key), used
 * both for a request's key and for the ring points.  Cannot fail. */
uint64_t envoy_key_hash(const char *key, size_t len);

/* Envoy's normalizeHostWeights() for one locality of weight 1 (no locality
 * weighting): weight[i] = nodes[i].weight * 1.0 / sum, with sum the integer
 * sum of the weights, min from 1.0 and max from 0.0.  Fills weight[0..n)
 * (caller storage) and *hw, which points at nodes and weight.
 * Envoy's host weights are integers 1 .. 4294967295 whose sum fits that
 * too; anything else is RINGSIM_EPARAM with err filled, e.g.
 *   envoy weights are whole numbers from 1 to 4294967295: "a" has 1.5
 * n may be 0 (then *hw is empty, min 1.0, max 0.0). */
int envoy_normalize_weights(const alg_node *nodes, size_t n, double *weight, envoy_host_weights *hw,
                            rs_error *err);
/* envoy_normalize_weights into storage of its own, then fn(hw, ud, err):
 * the builds of the ring and of Maglev's table start the same way.  fn's
 * answer, or RINGSIM_ENOMEM / the refusal of the weights. */
typedef int (*envoy_weighted_fn)(const envoy_host_weights *hw, void *ud, rs_error *err);
int envoy_with_weights(const alg_node *nodes, size_t n, envoy_weighted_fn fn, void *ud,
                       rs_error *err);

#endif
