/*
 * alg_maglev.h - Envoy's MAGLEV load balancer ("maglev").
 *
 * Reference: Envoy (github.com/envoyproxy/envoy, main branch of 2025),
 *   source/extensions/load_balancing_policies/maglev/maglev_lb.cc
 *     MaglevTable::constructMaglevTableInternal()   (host order, permutations)
 *     OriginalMaglevTable / CompactMaglevTable::constructImplementationInternals()
 *                                                   (the weighted fill loop)
 *     *MaglevTable::chooseHost()                    (lookup)
 *     MaglevLoadBalancer::MaglevLoadBalancer()      (table size must be prime)
 *   api/envoy/extensions/load_balancing_policies/maglev/v3/maglev.proto
 *     table_size default 65537, at most 5000011
 * This is Maglev of the paper (Eisenbud et al., NSDI 2016, pseudocode
 * listing 1) with Envoy's weighting.  The original and the compact table
 * fill the same slots with the same hosts; only their memory layout differs.
 *
 * Building, exactly as Envoy does it:
 *   - weights are normalised, w_i = weight_i / sum (alg_envoy.h), and
 *     max_w = max(0.0, w_i...);
 *   - the hosts are SORTED by hash key (std::sort of (key, host, weight)
 *     tuples: bytes as unsigned chars, then the shorter first), so the table
 *     does not depend on join order.  Envoy breaks ties between equal keys by
 *     comparing host pointers, which is arbitrary; this core breaks them by
 *     node index (ringsim's names are unique anyway);
 *   - host permutation: offset = XXH64(key, seed 0) % M,
 *     skip = XXH64(key, seed 1) % (M - 1) + 1, slot(j) = (offset + skip*j) % M;
 *   - fill: for iteration = 1, 2, ... while the table is not full, for each
 *     host in sorted order (stopping as soon as the table is full): skip the
 *     host if iteration * w_i < target_i; else target_i += max_w and the host
 *     takes the next free slot of its permutation.  So the heaviest hosts take
 *     a slot every round and a host of weight max_w/3 every third round
 *     ("weighted Maglev"); every host gets a slot in round 1 when n <= M.
 * Lookup: table[hash % M] with hash = XXH64(key, seed 0); a retry attempt
 * k > 0 first does hash ^= ~0 - k + 1.
 * Quirk of the newest Envoy: with exactly one host it skips the table (a
 * "degenerate" table) and reports 1 entry per host in its statistics; the
 * placement is the same (every key to that host), this core still fills the
 * table and reports M.
 *
 * Maglev promises minimal disruption, not none: when a host leaves, a few
 * slots of the survivors change hands too (about 0.3% of the keys with ten
 * equal hosts and M = 65537).
 *
 * Costs: build O(M log M) expected slot probes plus O(n log n) for the sort,
 * 4*M bytes of table (M = 5000011 with 1000 hosts: about a second);
 * lookup O(1), no allocation.
 */
#ifndef RINGSIM_ALG_MAGLEV_H
#define RINGSIM_ALG_MAGLEV_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "alg_envoy.h"
#include "error.h"

#define MAGLEV_TABLE_DEFAULT 65537u /* MaglevTable::DefaultTableSize */
#define MAGLEV_TABLE_LIMIT 5000011u /* proto: table_size lte 5000011 */

/* Envoy's maglev_lb.* gauges for one build. */
typedef struct maglev_stats {
    uint64_t min_entries_per_host;
    uint64_t max_entries_per_host;
} maglev_stats;

/* A run of consecutive slots [first, last] owned by one node. */
typedef struct maglev_run {
    uint64_t first, last;
    uint32_t node;
} maglev_run;

/* 0 if Envoy accepts M as a table size, else RINGSIM_EPARAM with err filled:
 * M <= 5000011, M prime (Envoy's own message "The table size of maglev must
 * be prime number"), and M != 1 -- Envoy's Primes::isPrime() calls 1 prime,
 * but skip = h % (M - 1) then divides by zero. */
int maglev_check_table_size(uint64_t table_size, rs_error *err);

/* Build Envoy's Maglev table over nodes[0..n) (names are hash keys, weights
 * whole numbers >= 1, see envoy_normalize_weights).  On success *table is a
 * malloc'd array of table_size node indexes (into nodes[]), freed by the
 * caller.  n == 0 gives *table NULL (Envoy: no table, no host).  Returns 0,
 * RINGSIM_EPARAM (bad size or weights, err filled) or RINGSIM_ENOMEM; on
 * failure *table is NULL. */
int maglev_build(const alg_node *nodes, size_t n, uint64_t table_size, uint32_t **table,
                 rs_error *err);

/* The same from already normalised weights (Envoy's table constructors,
 * whose input may also come from locality weighting): 0 < hw->weight[i] <=
 * hw->max_weight <= 1.  stats may be NULL. */
int maglev_build_weighted(const envoy_host_weights *hw, uint64_t table_size, uint32_t **table,
                          maglev_stats *stats, rs_error *err);

/* Owner of a request hash (envoy_key_hash of the key): Envoy's
 * chooseHost(hash, 0).  Cannot fail; table must be non-NULL. */
static inline size_t maglev_lookup(const uint32_t *table, uint64_t table_size, uint64_t hash)
{
    return table[hash % table_size];
}

/* chooseHost(hash, attempt) for a retry attempt >= 0. */
static inline uint32_t maglev_lookup_attempt(const uint32_t *table, uint64_t table_size,
                                             uint64_t hash, uint32_t attempt)
{
    if (attempt > 0)
        hash ^= ~0ull - attempt + 1;
    return table[hash % table_size];
}

/* The runs of equal owners in slot order, for drawing: *runs is a malloc'd
 * array of *nruns runs (caller frees), run k+1 starting right after run k;
 * the last and the first run are not merged even if they have the same
 * owner.  0 or RINGSIM_ENOMEM.  O(M). */
int maglev_runs(const uint32_t *table, uint64_t table_size, maglev_run **runs, size_t *nruns);

/* The table as points in ring order (alg.h): one point per run, coord = the
 * run's LAST slot, node its owner, index the run's number among its node's
 * runs.  A key then goes to alg_successor(points, n, hash % table_size), the
 * same node as maglev_lookup().  *points is malloc'd (caller frees); 0 or
 * RINGSIM_ENOMEM.  O(M). */
int maglev_points(const uint32_t *table, uint64_t table_size, uint32_t nnodes, alg_point **points,
                  size_t *npoints);

#endif
