/*
 * alg_haproxy.h - HAProxy's `hash-type consistent`, bit for bit.
 *
 * Reference: HAProxy 2.6 (Debian 12's haproxy 2.6.12-1+deb12u*; the code
 * below is unchanged from v2.6.0):
 *   src/lb_chash.c             chash_init_server_tree (the points),
 *                              chash_get_server_hash (the nearest point)
 *   include/haproxy/intops.h   __full_hash (Jenkins' 32-bit integer mix,
 *                              times 3221225473)
 *   src/base/hash.c                 hash_sdbm (the default hash function)
 *   src/backend.c              gen_hash, then full_hash: `hash-type
 *                              consistent` with no function named is sdbm
 *                              with the avalanche modifier
 *                              (src/cfgparse-listen.c)
 *   src/cfgparse.c             check_config_validity: ids of servers that
 *                              have none; src/proxy.c get_next_id
 *   src/server.c               srv_parse_weight (0..256), the `id` keyword
 *                              (> 0, unique in the backend)
 *
 * The rules reproduced:
 *   key     hash = full_hash(sdbm(text)), the text being what the `balance`
 *           rule hashes (a header's value, a URL parameter's, the URI).
 *   points  a server of weight W has 16 W points (uweight x BE_WEIGHT_SCALE),
 *           point j = full_hash(id x 4096 + j) (SRV_EWGHT_RANGE = 256 x 16),
 *           j = 0 .. 16 W - 1, in 32-bit unsigned arithmetic; weight 0 puts
 *           no point in the tree, so the server gets no key.
 *   ids     a server's `id`, or when it has none: with next = 1 before the
 *           first server, each server in configuration order that has no id
 *           takes the first id >= next not given to another server, and
 *           next becomes one more than the position's id (every server,
 *           with or without an id, advances next by one).  So `a id 5, b,
 *           c, d id 2, e` are 5, 3, 4, 2, 6, and a server added in the
 *           middle renumbers those after it: their points all move.
 *   order   the points live in an eb32 tree that keeps duplicates in
 *           insertion order (servers in configuration order, j ascending):
 *           here sorted by (point, server, j).  full_hash is a bijection, so
 *           equal points come from ids that differ by a multiple of 2^20
 *           (id x 4096 wraps in 32 bits), and then the first server wins.
 *   lookup  next = the first point >= hash (the first of equal ones),
 *           wrapping to the first point; prev = the point just before next,
 *           wrapping to the last; dp = hash - prev, dn = next - hash, both
 *           32-bit unsigned; prev wins when dp <= dn.  So a key goes to the
 *           NEAREST point on either side, a tie to the point before, and a
 *           key equal to a point to that point (unless the point before is
 *           equal too).
 * Not modelled here: bounded loads (hash-balance-factor, which the traffic
 * replay applies), servers that are down, and backup servers.
 *
 * Ids are 1 .. HAPROXY_MAX_ID (HAProxy reads them with atol into an int and
 * refuses those <= 0).  id x 4096 wraps in 32 bits as HAProxy's int product
 * does in practice, so ids that differ by a multiple of 2^20 share points.
 *
 * Cost: build O(P log P) for P = 16 x total weight points, ids O(n log n);
 * lookup one pass over the key and O(log P).  No state: thread-safe.
 */
#ifndef RINGSIM_ALG_HAPROXY_H
#define RINGSIM_ALG_HAPROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"

#define HAPROXY_MAX_WEIGHT 256        /* SRV_UWGHT_MAX */
#define HAPROXY_POINTS_PER_WEIGHT 16u /* BE_WEIGHT_SCALE */
#define HAPROXY_ID_RANGE 4096u        /* SRV_EWGHT_RANGE */
#define HAPROXY_MAX_ID 2147483647     /* INT_MAX */

/* Bob Jenkins' full avalanche integer hash times 3221225473.  Cannot fail. */
uint32_t haproxy_full_hash(uint32_t a);
/* hash_sdbm of len bytes.  Cannot fail. */
uint32_t haproxy_sdbm(const void *s, size_t len);
/* full_hash(sdbm(key)): the key's coordinate.  Cannot fail. */
uint32_t haproxy_key_hash(const void *key, size_t len);

/* The ids of n servers in configuration order: given[i] is server i's `id`
 * (0 when it has none), out[i] its id as HAProxy assigns it.  0, or
 * RINGSIM_EPARAM when a given id is out of 1..HAPROXY_MAX_ID or given
 * twice (as HAProxy refuses the configuration), or RINGSIM_ENOMEM. */
int haproxy_assign_ids(const int64_t *given, size_t n, uint32_t *out, rs_error *err);

/* The points of nodes[0..n) (configuration order, whole weights 0..256)
 * with ids[0..n) into *points (malloc'd, the caller frees; NULL when there
 * is none), *npoints of them in ring order.  0, RINGSIM_EPARAM for a
 * weight out of range, RINGSIM_ENOMEM. */
int haproxy_build(const alg_node *nodes, const uint32_t *ids, size_t n, alg_point **points,
                  size_t *npoints, rs_error *err);

/* The point chash_get_server_hash picks for hash, and the two it compared
 * (*next, *prev; may be NULL).  n must be > 0.  O(log n), cannot fail. */
size_t haproxy_lookup(const alg_point *p, size_t n, uint32_t hash, size_t *next, size_t *prev);

/* Who owns which coordinates: arcs (previous hi, hi] belong to the point
 * arc[k].point, in order, the first starting at 0 and the last ending at
 * 2^32 - 1; empty arcs are left out.  *out malloc'd (at most 2 n + 2
 * arcs).  n must be > 0.  0 or RINGSIM_ENOMEM. */
typedef struct haproxy_arc {
    uint32_t hi;
    uint32_t point;
} haproxy_arc;
int haproxy_arcs(const alg_point *p, size_t n, haproxy_arc **out, size_t *narcs);

/* ---- hash-type map-based ----
 *
 * Reference: HAProxy 2.6 src/lb_map.c (init_server_map: the weights
 * divided by their greatest common divisor; recalc_server_map: the map),
 * src/backend.c (recount_servers, update_backend_weight: which servers are
 * in it; map_get_server_hash: map[hash % tot_weight]) and
 * src/cfgparse-listen.c (`hash-type map-based` with no function: sdbm, no
 * avalanche).  Not installed as source here: written from HAProxy's
 * documented algorithm and proven against the real haproxy by
 * tests/ref/haproxy_ref.py (mode map).
 *   weights  each server's weight divided by the greatest common divisor
 *            of every server's non-zero weight (backups too);
 *   servers  the usable active servers (up, weight > 0); with none, the
 *            usable backups;
 *   map      tot = the sum of their reduced weights, except with backups
 *            and no `option allbackups`: tot = the first usable backup's
 *            reduced weight (update_backend_weight's fbck), while every
 *            usable backup still competes for the entries (a quirk, seen
 *            against haproxy 2.6.12: the first backup does not take them
 *            all when a later one weighs more); for o = 0 .. tot-1
 *            every server adds its weight to its score, the first server
 *            with the highest (score + tot) / tot (integer division) takes
 *            entry o and its score drops by tot: a weighted interleave,
 *            earlier servers first among equals;
 *   key      hash = sdbm(key), no avalanche; the server is map[hash % tot].
 * A server that joins or leaves changes tot: most keys move. */

/* The map of the servers: nodes[0..n) with their weights (0..256),
 * use[i] whether server i competes for entries (the caller decides backups
 * and states); the gcd over every server's weight.  tot_of >= 0: the map's
 * size is that server's reduced weight (fbck), -1: the sum.  *map malloc'd
 * with *tot entries of node indexes (tot 0 and NULL when no server takes
 * part).  0 or RINGSIM_ENOMEM. */
int haproxy_map_build(const alg_node *nodes, const bool *use, size_t n, long tot_of, uint32_t **map,
                      uint32_t *tot);

#endif
