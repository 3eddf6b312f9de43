/*
 * place_int.h - what place.c, place_states.c, the algorithm adaptors
 * (algo_<core>.c, listed by place_algos.c) and their shared machinery
 * (algo_common.c) share: the placement's layout and the ops table of an
 * algorithm.  The calls go one way: place.c -> place_states.c and
 * algo_common.c; place.c -> the adaptors through the table's ops only;
 * the adaptors -> algo_common.c.
 */
#ifndef RINGSIM_PLACE_INT_H
#define RINGSIM_PLACE_INT_H

/* Private to its library: src/place/CMakeLists.txt defines RINGSIM_PLACE_INTERNAL for
 * its own files (and a white-box test may), so a higher floor that includes
 * this header does not compile (glib's __GLIB_H_INSIDE__). */
#ifndef RINGSIM_PLACE_INTERNAL
#error "place_int.h is the placement floor's own (src/place/): use place.h"
#endif

#include <stdarg.h>

#include "alg.h"
#include "place.h"
#include "ring.h"

typedef enum { PLACE_W_ANY, PLACE_W_WHOLE, PLACE_W_NONE } place_weights;
typedef enum { PLACE_REP_WALK, PLACE_REP_HIGHEST, PLACE_REP_NONE } place_replicas;
typedef enum { PLACE_COORD_UNSIGNED, PLACE_COORD_SIGNED, PLACE_COORD_NONE } place_coord_kind;

typedef struct place_algo place_algo;

/* What a build starts from: the hasher, the placement before this change
 * (NULL, or one of the same algorithm: a stateful layout evolves from it)
 * and otherwise the stored state text (NULL or empty: the system's start). */
typedef struct place_from {
    hasher *h;
    const placement *prev;
    const char *state;
} place_from;

/* How an algorithm treats a node that is down (place_states.c). */
typedef enum {
    PLACE_DOWN_WALK,     /* the next up node of the key's preference list */
    PLACE_DOWN_REBUILD,  /* the layout is built again from the up nodes */
    PLACE_DOWN_FAILOVER, /* a replica takes the node's share, or nobody */
    PLACE_DOWN_OWN,      /* the algorithm's serve op says (nginx's rehash, HAProxy's map) */
} place_down;

/* A variant of an algorithm: the entry that places when cfg->param[param]
 * == value, under the same name and parameters (nginx's `hash` without
 * `consistent`, HAProxy's map-based hash, libmemcached's unweighted
 * continuum).  Its own traits (col, minimal, points...) come with it. */
typedef struct place_variant {
    int param;
    int64_t value;
    const place_algo *a;
} place_variant;

typedef struct place_states place_states;

struct placement {
    const place_algo *a;
    place_config cfg;
    size_t n;
    const place_node *nodes; /* borrowed for the placement's lifetime */
    alg_node *anodes;        /* the cores' view of nodes (names borrowed) */
    int64_t *ids;            /* copied: a later build matches nodes by id */
    uint64_t top;            /* the largest coordinate of the space */
    alg_point *pts;          /* points in ring order (every point algorithm) */
    ring *ring;              /* the successor index over pts (NULL without points) */
    size_t npts;
    uint32_t *table;     /* owner per coordinate: maglev entries, redis slots */
    uint64_t *node_hash; /* per node: sha64(name) (rendezvous) */
    void *extra;         /* the algorithm's own (memento) */
    uint64_t *sizes;     /* points / slots / entries per node */
    /* With points and no table: the indexes into pts grouped by node, each
     * node's in ring order, node i's at by_node[node_at[i] .. node_at[i+1]) */
    size_t *by_node, *node_at;
    place_states *st; /* the nodes' states, NULL while every node is up */
    /* replica_domain: each node's domain of that type (an id), or
     * PLACE_NO_DOMAIN for a node without one (its own domain); NULL when
     * replica_domain is off */
    uint32_t *dom;
};
#define PLACE_NO_DOMAIN UINT32_MAX
/* Whether node nd may join out[0..got) as a replica under replica_domain:
 * no node there shares its domain.  Cannot fail. */
bool place__domain_free(const placement *p, long nd, const long *out, size_t got);

/* Node `node`'s points as indexes into p->pts, in ring order; *count of
 * them (0 and NULL without points or with a table).  algo_common.c. */
const size_t *place__node_points(const placement *p, size_t node, size_t *count);

struct place_algo {
    const char *name, *title, *origin, *key_hash, *space;
    /* What a key's coordinate is called in this system's words ("slot",
     * "token"), for tables; NULL when it has none of its own: none at all
     * (rendezvous), or the SHA-256 position itself (ring). */
    const char *coord_name;
    int params[16];
    size_t nparams;
    place_weights weights;
    bool zero_weight; /* weight 0 allowed: a node with no point (HAProxy's drained server) */
    place_replicas replicas;
    place_coord_kind coord_kind;
    int col;          /* place_col of the segments, -1: re-place keys */
    int coord_param;  /* the parameter key coordinates depend on, or -1 */
    bool leave_local; /* a leave moves only the leaver's keys */
    bool minimal;     /* a join or leave moves only what must move */
    bool tokens;      /* nodes may bring explicit tokens (Cassandra's initial_token) */
    /* A layout that is a map of `slots` slots held by the nodes, which an
     * import gives node by node (Redis Cluster): the layout state's text of
     * owner[0..slots) (node ordinals), malloc'd; NULL when out of memory.
     * slots 0: no slot map. */
    uint32_t slots;
    char *(*slot_text)(const uint32_t *owner);
    /* k->point indexes pts (a layout of points), so a lookup names the point */
    bool points;
    /* with points: a key goes to the nearest point on either side (HAProxy's
     * chash_get_server_hash), not to the next one clockwise */
    bool nearest;
    /* The points a layout of these nodes would hold, an upper bound computed
     * without building it (NULL: 0, the layout is bounded by a parameter or
     * there is none). */
    uint64_t (*layout_points)(const place_config *cfg, const place_node *nodes, size_t n);
    place_down down;         /* what a down node does (place_states.c) */
    bool down_walk_replicas; /* WALK: only the first `replicas` nodes of the list
                              * (Cassandra: nobody when all are down) */
    bool panic;              /* REBUILD from every node when fewer than
                              * panic_threshold percent are up (Envoy) */
    bool backups;            /* backup nodes serve only when no active node is up,
                              * all of them with allbackups, else the first (HAProxy) */
    /* Pin what the layout of a subset takes from the whole list (HAProxy's
     * ids, assigned by position over every server) into sub[0..m), the
     * nodes map[k] of p.  NULL: nothing to pin. */
    void (*pin)(const placement *p, place_node *sub, const size_t *map, size_t m);

    /* The bounded-load rule of the traffic replay (src/sim/traffic.c) and the
     * parameter of its factor (with bound != PLACE_BOUND_NONE). */
    place_bound bound;
    int bound_param;
    uint64_t (*top)(const place_config *cfg);
    int (*check_nodes)(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err);
    /* Fill the layout (pts/npts, table, node_hash, extra) from p->anodes:
     * 0, or a negative RINGSIM_E code with err filled.  place_build has made
     * the alg_node view and the ids; it builds the successor index and the
     * sizes afterwards, and frees everything on failure. */
    int (*build)(placement *p, const place_from *from, rs_error *err);
    void (*free_extra)(placement *p);
    /* Fill hash, coord/has_coord, owner and point (position is set). */
    void (*key)(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k);
    /* Owner from k->hash alone (for sampled shares); only where col < 0. */
    void (*owner_of_hash)(const placement *p, place_key_info *k);
    size_t (*prefs)(const placement *p, const place_key_info *k, uint32_t r, long *out);
    int (*segments)(const placement *p, place_seg **out, size_t *n);
    void (*shares)(const placement *p, double *share);
    /* Shares counting r replicas, for layouts whose arcs are not
     * (previous point, point] (HAProxy's nearest point); owns[n] zeroed. */
    void (*owns)(const placement *p, uint32_t r, double *owns);
    void (*node_json)(const placement *p, size_t node, json_t *obj);
    /* Placement groups (ceph): of after's, those whose up set differs from
     * before's (before is the same algorithm, or NULL: no PGs), and the
     * positions whose device changed. */
    void (*pg_diff)(const placement *before, const placement *after, int64_t *remapped,
                    int64_t *shards);
    char *(*state_text)(const placement *p);
    void (*trace)(const placement *p, const char *key, size_t len, const place_key_info *k,
                  const char *const *names, json_t *t);
    /* The variants (place__algo picks), none when NULL. */
    const place_variant *variants;
    size_t nvariants;
    /* PLACE_DOWN_OWN: who serves the key with the states applied (node
     * index, -1 nobody), and the rule in a sentence. */
    long (*serve)(const placement *p, const char *key, size_t len, const place_key_info *k);
    const char *down_text;
};

/* NULL-terminated, in catalogue order (place_algos.c). */
extern const place_algo *const place__algos[];

/* Each algorithm's record, at the end of its adaptor (algo_<core>.c); the
 * variants (place_variant) stay in their algorithm's file. */
extern const place_algo place_algo_ring, place_algo_jump, place_algo_rendezvous,
    place_algo_multiprobe, place_algo_ketama, place_algo_nginx, place_algo_envoy_ring,
    place_algo_maglev, place_algo_cassandra, place_algo_redis, place_algo_haproxy,
    place_algo_twemproxy, place_algo_ceph;

/* place.c: the entry of an algorithm's name (NULL: unknown). */
const place_algo *place__find(const char *name);
/* The entry that places cfg: its algorithm's, or the variant its
 * parameters select.  NULL for an unknown algorithm. */
const place_algo *place__algo(const place_config *cfg);

/* algo_common.c: the machinery the adaptors share, below them and below
 * place.c (it calls neither).  None can fail unless it says so. */
/* per_node x weight points, rounded, at least 1, at most
 * PLACE_MAX_NODE_POINTS. */
uint32_t place__points(int64_t per_node, double weight);
/* A node's weight for estimates: its weight, 1 where it is not positive. */
double place__weight(const place_node *x);
/* The successor point of k->coord and its owner (k->point, k->owner);
 * nothing without points.  O(log points). */
void place__point_owner(const placement *p, place_key_info *k);
/* A key of a point ring whose coordinate is its hash: the successor point
 * and its owner.  Inline: it is on every lookup of the point algorithms,
 * as it was while they shared one file. */
static inline void place__point_key(const placement *p, uint64_t hash, place_key_info *k)
{
    k->hash = k->coord = hash;
    k->has_coord = true;
    place__point_owner(p, k);
}
/* The first r distinct nodes met from point `start` clockwise, into
 * out[0..r); how many (at most the node count). */
size_t place__walk(const placement *p, size_t start, uint32_t r, long *out);
/* The prefs op of the point rings: the walk from the key's point. */
size_t place__walk_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out);
/* The segments op of a point ring and of a table of owners: *out
 * malloc'd (the caller frees it), *n of them; 0 or RINGSIM_ENOMEM. */
int place__point_segments(const placement *p, place_seg **out, size_t *n);
int place__table_segments(const placement *p, place_seg **out, size_t *n);
/* Appends a step {step, detail} to the trace t, the detail printf'd
 * (truncated to 599 bytes). */
void place__step(json_t *t, const char *step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The last steps of a ring trace: the successor `what` (point, token...),
 * the wrap, the owner. */
void place__trace_point(const placement *p, const place_key_info *k, const char *const *names,
                        const char *what, json_t *t);
/* The tops of the 32- and 64-bit spaces (the `top` op of most entries);
 * a trace step saying that no node holds the key, false then (true when
 * one does); sha64's hash step, then that. */
uint64_t place__top32(const place_config *cfg);
uint64_t place__top64(const place_config *cfg);
bool place__trace_owned(const place_key_info *k, json_t *t);
bool place__trace_sha64(const place_key_info *k, json_t *t);

/* place_states.c, which calls nothing of place.c.  Built at the end of
 * place_build: p->st from the nodes' down flags (walk_points: p's
 * preference list is the walk over its points, place__walk_prefs).  0 or
 * RINGSIM_ENOMEM with err filled.  Under REBUILD out of panic, *sub and
 * *m name the serving nodes (borrowed from p->st), else NULL and 0: the
 * caller builds their layout and hands it over with place__states_adopt,
 * which takes it (cannot fail). */
int place__states_build(placement *p, bool walk_points, const place_node **sub, size_t *m,
                        rs_error *err);
void place__states_adopt(placement *p, placement *sub);
/* Applied at the end of place_key, with p->st set: sk is the key in the
 * serving layout (place_serving_layout's, when it is not p), else NULL. */
void place__states_key(const placement *p, const place_key_info *sk, const char *key, size_t len,
                       place_key_info *k);
int place__states_segments(const placement *p, place_seg **out, size_t *n);
/* Frees p->st (NULL: nothing) but the serving layout, which it returns
 * for the caller to place_free (NULL: none). */
placement *place__states_free(placement *p);

#endif
