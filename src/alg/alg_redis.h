/*
 * alg_redis.h - Redis Cluster: hash slots and the slot map, as Redis 7.0.15
 * and its redis-cli compute them, bit for bit.
 *
 * Keys.  A key lives in one of 16384 hash slots: CRC16/XMODEM (poly 0x1021,
 * init 0, no reflection; "123456789" -> 0x31C3) of the key, or of its hash
 * tag, masked with 0x3FFF.  The hash tag is what lies between the FIRST '{'
 * and the first '}' after it, when that is not empty; otherwise (no '{', no
 * '}' after it, or "{}") the whole key is hashed.  Reference: src/crc16.c
 * crc16() and src/cluster.c keyHashSlot() of redis 7.0.15.
 *
 * Slots.  owner[slot] is the ordinal of the node holding the slot: an index
 * into the caller's node array in join order.  The map always covers all
 * 16384 slots (a map of zero nodes does not exist: the caller drops it).
 *
 *   redis_create   the split of `redis-cli --cluster create` with
 *                  --cluster-replicas 0 (redis-cli.c
 *                  clusterManagerCommandCreate).
 *   redis_join     `redis-cli --cluster add-node` of an empty master, then
 *                  `redis-cli --cluster rebalance --cluster-use-empty-masters`
 *                  (clusterManagerCommandRebalance,
 *                  clusterManagerComputeReshardTable), all weights 1, the
 *                  default threshold of 2 %.
 *   redis_leave    `redis-cli --cluster rebalance --cluster-use-empty-masters
 *                  --cluster-weight <leaving node id>=0` (the others keep
 *                  the default weight 1), then `--cluster del-node`: docs/api.md's
 *                  "the others receive its slots, fewest-slots first" made
 *                  exact, see redis_leave.
 *   redis_rebalance  the rebalance itself with any weights and an explicit
 *                  node list order: the engine of join and leave, public so
 *                  that the reference test can replay what redis-cli did.
 *
 * What redis-cli leaves to chance, and the rule ringsim uses.
 *   create     deterministic.  redis-cli interleaves the nodes by IP address
 *              before splitting (masters on distinct hosts first); ringsim's
 *              nodes have no addresses, so the order is the join order -- the
 *              same as redis-cli's for nodes that share one IP, the case the
 *              reference test runs.  redis-cli refuses fewer than 3 masters;
 *              ringsim applies the same arithmetic to 1 and 2 nodes (n = 1:
 *              0-16383; n = 2: 0-8191, 8192-16383).
 *   rebalance  redis-cli walks its node list in the order it loaded it: the
 *              node named on the command line, then the other nodes in the
 *              order that node's CLUSTER NODES prints them -- the iteration
 *              order of a dict keyed by random 40-hex node IDs with a random
 *              hash seed, i.e. random.  The order decides two things:
 *                (1) rounding: expected = (int)(16384.0f / total_weight *
 *                    weight); the slots that floor() leaves over (16384 mod n
 *                    for equal weights) go one each, in list order and
 *                    repeatedly, to the nodes whose balance is <= 0;
 *                (2) ties: nodes are sorted by balance with qsort, which in
 *                    glibc (2.36 here) is a stable merge sort, so nodes of
 *                    equal balance keep list order; which receiver is paired
 *                    with which giver, hence which slot ranges it receives,
 *                    follows that order.
 *              Everything else is arithmetic: each giver gives its
 *              lowest-numbered slots first.  ringsim uses the JOIN ORDER as
 *              the list order.  For a given list order the result is exactly
 *              redis-cli's (tests/ref/redis_ref.sh replays the order that
 *              redis-cli saw and compares every slot).  The result does not
 *              depend on the order at all -- so ringsim equals redis-cli
 *              whatever the node IDs -- when, for instance, the leftover of
 *              (1) goes to every eligible node equally (none is left, or
 *              the newcomer is the only eligible node) and no two
 *              receivers, and no two givers when there are several
 *              receivers, have equal balances.  That is the case of a join
 *              into a map made by redis_create with n <= 138 nodes (every
 *              old node then holds more than 16384 / (n + 1) slots, so the
 *              newcomer is the only receiver and takes the whole leftover;
 *              test_alg_redis checks both the claim and that n = 139 breaks
 *              it).  A leave usually depends on the order: the staying
 *              nodes hold equal counts.
 *
 * Quirks reproduced.
 *   - create ends range i at lround(cursor + 16384.0f / n - 1) with a float
 *     cursor (n = 3: 0-5460, 5461-10922, 10923-16383).  The float error
 *     grows with n: from n = 2688 some nodes differ by 2 slots (5 and 7),
 *     and from 7542 some n cannot be split (redis_check_create).  Requires
 *     FLT_EVAL_METHOD == 0 (x86-64 SSE, AArch64), like the redis-cli
 *     binaries the reference test runs.
 *   - rebalance does nothing when no node is more than 2 % away from its
 *     expected count (an empty node counts as away when it expects more than
 *     1 slot).
 *   - the leftover of the rounding goes to the receivers only: a node that
 *     joins a map made by redis_create(n) ends with 16384 - n * (16384 /
 *     (n + 1)) slots, up to n more than the others (n = 100: 184 against
 *     162).  When that is over 2 %, running redis-cli's rebalance once more
 *     would move slots again: it is not idempotent, and neither is ringsim.
 *   - a leaving node that holds no slot moves nothing (del-node refuses a
 *     node with slots and never rebalances; rebalance would otherwise still
 *     move slots between the other nodes when they are off by more than 2 %).
 *   - nodes other than the newcomer / the leaver give or receive too when
 *     their counts are off the new expected count (from 139 nodes on after
 *     a create, or after unequal histories).
 *
 * For the engine: the key's "hash" is redis_crc16 of redis_hashed_part, its
 * coordinate redis_slot; a node's "slots" are redis_node_runs, the ring's
 * runs redis_runs; the map persists as redis_format / redis_parse text.
 *
 * Cost: redis_slot O(key length); create O(16384); join, leave, rebalance
 * O(16384 + n log n) time and O(n) scratch memory; format and parse
 * O(16384).  No globals, thread-safe, no allocation except the rebalance's
 * scratch.
 */
#ifndef RINGSIM_ALG_REDIS_H
#define RINGSIM_ALG_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"

#define REDIS_SLOTS 16384u
/* The most nodes a map may have: one slot each. */
#define REDIS_MAX_NODES 16384u
/* redis-cli's CLUSTER_MANAGER_REBALANCE_THRESHOLD, in percent. */
#define REDIS_THRESHOLD 2.0f
/* Bytes redis_format needs at most, NUL included: 16384 runs of
 * "ddddd-ddddd:ddddd," (node ordinals are < 16384). */
#define REDIS_TEXT_MAX (16384u * 18u + 1u)

/* ---- keys ---------------------------------------------------------------- */

/* CRC16/XMODEM of len bytes, as redis's crc16().  Cannot fail. */
uint16_t redis_crc16(const void *buf, size_t len);
/* The part of the key that is hashed: sets *off to its start and returns its
 * length (the hash tag, or the whole key: *off = 0, returns len).  For
 * traces.  Cannot fail; key may be NULL when len is 0. */
size_t redis_hashed_part(const char *key, size_t len, size_t *off);
/* The key's hash slot, 0..16383: keyHashSlot().  Cannot fail. */
uint16_t redis_slot(const char *key, size_t len);

/* ---- the slot map -------------------------------------------------------- */

/* 0 when a cluster of these n nodes can exist: n <= REDIS_MAX_NODES and
 * every weight is 1 (Redis Cluster has no weights: ringsim's `redis` takes
 * none).  Else RINGSIM_EPARAM with a message in err (may be NULL). */
int redis_check_nodes(const alg_node *nodes, size_t n, rs_error *err);

/* 0 when redis_create(n) can split the slots: 1 <= n <= REDIS_MAX_NODES
 * and redis-cli's float cursor does not run past slot 16383 before the last
 * node -- it does for many n from 7542 on (2989 of them, 7542 first), where
 * redis-cli writes past its slot array.  Else RINGSIM_EPARAM with a message
 * in err (may be NULL).  O(n). */
int redis_check_create(size_t n, rs_error *err);

/* Fill owner[] with the split of `redis-cli --cluster create` over n nodes:
 * consecutive ranges, ordinal 0 first.  Returns 0, or RINGSIM_EPARAM when
 * redis_check_create(n) fails (owner untouched).  O(16384 + n). */
int redis_create(size_t n, uint32_t owner[REDIS_SLOTS]);

/* Rebalance a map of n nodes as clusterManagerCommandRebalance with
 * --cluster-use-empty-masters does.  weight[i] is node i's weight (finite,
 * >= 0, not all 0; NULL means all 1); redis-cli reads weights with atof into
 * a float.  order[0..n) is redis-cli's node list order: a permutation of the
 * ordinals (NULL means 0, 1, ..., n-1, the join order).  On success returns
 * the number of slots that changed owner (>= 0) and owner[] is the new map;
 * on failure a negative code and owner[] is untouched: RINGSIM_EPARAM for bad
 * arguments (n out of range, an owner >= n, bad weights, order not a
 * permutation), RINGSIM_ENOMEM. */
int redis_rebalance(uint32_t owner[REDIS_SLOTS], size_t n, const float *weight,
                    const uint32_t *order);

/* A node joins a map of n_before nodes (0 <= n_before < REDIS_MAX_NODES)
 * with ordinal n_before, and receives slots as redis_rebalance with all
 * weights 1 and the join order moves them.  n_before == 0 means the first
 * node: the map becomes redis_create(1) and the call returns 16384.  Returns
 * the number of slots moved, or RINGSIM_EPARAM / RINGSIM_ENOMEM (owner
 * untouched). */
int redis_join(uint32_t owner[REDIS_SLOTS], size_t n_before);

/* Node `leaving` (< n) leaves a map of n >= 2 nodes: redis_rebalance with
 * weight 0 for it, 1 for the others, join order.  Each other node is to end
 * with 16384 / (n - 1) slots, the first (16384 mod (n - 1)) of those at or
 * below that in join order with one more; the leaver's slots, lowest first,
 * go to the node with the most to gain first (the fewest slots), ties in
 * join order.  If it holds no slot nothing moves.  Afterwards the ordinals above `leaving` are
 * shifted down by one (the caller removes the node from its array), so
 * owner[] is a map of n - 1 nodes.  Returns the number of slots moved, or
 * RINGSIM_EPARAM (n < 2: the last node cannot leave a map, the caller drops
 * the map instead; bad arguments) / RINGSIM_ENOMEM, owner untouched. */
int redis_leave(uint32_t owner[REDIS_SLOTS], size_t n, uint32_t leaving);

/* Number of slots of each node: count[0..n) (zeroed first).  Owners >= n are
 * not counted.  Cannot fail. */
void redis_counts(const uint32_t owner[REDIS_SLOTS], size_t n, uint32_t *count);

/* ---- ranges, text -------------------------------------------------------- */

/* A run of consecutive slots with one owner. */
typedef struct redis_run {
    uint16_t first, last; /* inclusive */
    uint32_t node;
} redis_run;

/* The maximal runs of the map in slot order (CLUSTER SLOTS' rows).  Writes
 * min(cap, total) runs to out (may be NULL when cap is 0) and returns the
 * total, at most 16384.  Cannot fail. */
size_t redis_runs(const uint32_t owner[REDIS_SLOTS], redis_run *out, size_t cap);
/* The same for one node only: its ranges [[first, last]...] in slot order,
 * as CLUSTER NODES prints them.  Returns the total. */
size_t redis_node_runs(const uint32_t owner[REDIS_SLOTS], uint32_t node, redis_run *out, size_t cap);

/* The map as compact text, its maximal runs in slot order separated by
 * commas, each "first-last:node" or "slot:node" for a single slot, e.g.
 * "0-5460:0,5461-10922:1,10923-16383:2".  Writes at most cap bytes, NUL
 * included (like snprintf; buf may be NULL when cap is 0) and returns the
 * length of the whole text without the NUL, < REDIS_TEXT_MAX when the
 * owners are < REDIS_MAX_NODES.  Cannot fail. */
size_t redis_format(const uint32_t owner[REDIS_SLOTS], char *buf, size_t cap);
/* Parse len bytes of text (not necessarily NUL-terminated) written by
 * redis_format for a map of n nodes: exactly that form, runs maximal,
 * covering 0..16383 in order, decimal numbers without sign or leading zeros,
 * owners < n, nothing else (no spaces).  On success fills owner[] and
 * returns 0; else returns RINGSIM_EPARAM with a message naming the byte
 * offset in err (may be NULL), and owner[] may be partly written. */
int redis_parse(const char *text, size_t len, size_t n, uint32_t owner[REDIS_SLOTS], rs_error *err);

#endif
