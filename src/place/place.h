/*
 * place.h - placement algorithms behind one ops table.
 *
 * A placement answers where a key goes, for one algorithm, configuration and
 * node list; it is immutable once built.  Everything the engine knows of an
 * algorithm comes through this interface (Redis's dictType habit): the key's
 * hash and coordinate, the owner and the preference list, which regions of
 * the coordinate space change hands between two placements, the nodes'
 * shares, the layout to draw and the words of a lookup trace.  The engine
 * never asks which algorithm it is talking to.
 *
 * Coordinates are order-preserving unsigned 64-bit values (alg.h): a key's
 * coordinate depends only on the key and the configuration (never on the
 * nodes) for the algorithms whose diff is a list of segments, so that a
 * topology change is a few range queries on the key index.  Algorithms
 * without such a coordinate (jump, rendezvous, multiprobe) say so and the
 * engine re-places the keys it must (all of them, or a leaving node's).
 *
 * Some layouts are state that history shapes (Redis's slot map, MementoHash's
 * removed buckets): a placement built from the previous one evolves that
 * state the way the real system does, and its text form is persisted.
 *
 * Adding an algorithm: its core in alg_<name>.c, one entry in the table in
 * place.c.  The engine, store, API and page do not change.
 */
#ifndef RINGSIM_PLACE_H
#define RINGSIM_PLACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hash.h"

#define PLACE_MAX_POINTS_PER_NODE 10000u /* configured points_per_node */
#define PLACE_MAX_NODE_POINTS 100000u    /* after weighting */
#define PLACE_MAX_REPLICAS 16u
#define PLACE_MAX_PREFS PLACE_MAX_REPLICAS

/* Every parameter of every algorithm, so that switching away and back keeps
 * what the user set.  The catalogue (place_algorithms_json) says which
 * algorithm takes which. */
enum {
    PP_POINTS_PER_NODE,     /* ring */
    PP_PROBES,              /* multiprobe */
    PP_MIN_RING_SIZE,       /* envoy-ring */
    PP_MAX_RING_SIZE,       /* envoy-ring */
    PP_TABLE_SIZE,          /* maglev */
    PP_NUM_TOKENS,          /* cassandra */
    PP_HASH_BALANCE_FACTOR, /* haproxy, envoy-ring, maglev: bounded loads (0: off) */
    PP_HASH,                /* twemproxy: the pool's hash, an index into its names */
    PP_PANIC_THRESHOLD,     /* envoy-ring, maglev: healthy_panic_threshold, percent */
    PP_ALL_BACKUPS,         /* haproxy: option allbackups (0: the first backup only) */
    PP_BALANCE_FACTOR,      /* ring: Mirrokni-Thorup-Zadimoghaddam's c x 100 (0: off) */
    PP_KETAMA_MODE,         /* ketama: ketama_weighted, ketama or consistent (alg_ketama.h) */
    PP_KETAMA_HASH,         /* ketama: libmemcached's key hash (auto: what the mode sets) */
    PP_NGINX_CONSISTENT,    /* nginx: 1 `hash KEY consistent`, 0 `hash KEY` (modulo) */
    PP_HASH_TYPE,           /* haproxy: hash-type consistent or map-based */
    PP_CEPH_POOL,           /* ceph: the pool id (raw_pg_to_pps) */
    PP_PG_NUM,              /* ceph: pg_num */
    PP_PGP_NUM,             /* ceph: pgp_num (0: pg_num) */
    PP_CEPH_SIZE,           /* ceph: a replicated pool's size */
    PP_FAILURE_DOMAIN,      /* ceph: the rule's type, an index into Ceph's type names */
    PP_POOL_TYPE,           /* ceph: replicated (0) or erasure (1) */
    PP_EC_K,                /* ceph: erasure-coded data chunks */
    PP_EC_M,                /* ceph: erasure-coded coding chunks */
    PP_HASHPSPOOL,          /* ceph: the pool's hashpspool flag */
    PP_CHOOSE_TOTAL_TRIES,  /* ceph tunables, the optimal profile by default */
    PP_CHOOSELEAF_DESCEND_ONCE,
    PP_CHOOSELEAF_VARY_R,
    PP_CHOOSELEAF_STABLE,
    PP_STRATEGY, /* cassandra: simple or network_topology (PLACE_STRATEGY_*) */
    PP_COUNT
};
enum { PLACE_STRATEGY_SIMPLE, PLACE_STRATEGY_NTS };

#define PLACE_MAX_DCS 16u     /* datacenters in a replication map */
#define PLACE_DC_NAME_BUF 256 /* a datacenter's name and its NUL (the rules for names) */

/* One datacenter of NetworkTopologyStrategy's replication map (API.md v4):
 * its name, zero-padded (configurations are compared byte for byte), and
 * its replication factor. */
typedef struct place_dc_rf {
    char dc[PLACE_DC_NAME_BUF];
    uint32_t rf;
} place_dc_rf;

typedef struct place_config {
    char algorithm[32];
    int64_t param[PP_COUNT];
    uint32_t replicas; /* 1 .. PLACE_MAX_REPLICAS */
    /* cassandra's replication per datacenter ("replication", kept whatever
     * the strategy; in the stored configuration and so in history), in
     * the order given; under network_topology replicas is their sum. */
    uint32_t ndc;
    place_dc_rf dc[PLACE_MAX_DCS];
    /* replica_domain (API.md v4): a location type ("rack"); a walk for
     * replicas skips nodes whose domain of that type holds one already.
     * "" (zero-padded): off. */
    char replica_domain[PLACE_DC_NAME_BUF];
} place_config;

/* A node as the placement sees it: borrowed for the placement's lifetime,
 * in join order.  id is the engine's stable node id; tokens (may be NULL)
 * are explicit Cassandra tokens. */
/* One level of a node's location (API.md v4, "failure domains"): a domain
 * type ("dc", "rack", "host", "root", ...) and its name.  Borrowed. */
typedef struct place_loc {
    const char *type;
    const char *name;
} place_loc;

#define PLACE_MAX_LOC 16u /* levels of a location */

/* The rules of a location (place_loc.c): each type and name a name
 * (names.h) without "=" or ",", a type once, at most PLACE_MAX_LOC levels.
 * 0, or RINGSIM_ENAME / RINGSIM_EPARAM with a message naming the level. */
int place_loc_check(const place_loc *v, size_t n, rs_error *err);
/* "dc=dc1,rack=r1" (the command line's form; "" is none) into v[0..
 * PLACE_MAX_LOC) and *n, checked; text is split in place and v points
 * into it. */
int place_loc_parse(char *text, place_loc *v, size_t *n, rs_error *err);
/* [["dc", "dc1"], ["rack", "r1"]] (JSON; null or absent is none) into v,
 * checked; v borrows j's strings. */
int place_loc_from_json(const json_t *j, place_loc *v, size_t *n, rs_error *err);
/* The JSON form (a new array; NULL when out of memory). */
json_t *place_loc_json(const place_loc *v, size_t n);
/* The command line's form, malloc'd ("" for none; NULL when out of memory). */
char *place_loc_text(const place_loc *v, size_t n);
/* The name of the domain of this type, or NULL when the location has none. */
const char *place_loc_get(const place_loc *v, size_t n, const char *type);

typedef struct place_node {
    int64_t id;
    const char *name;
    size_t len;
    double weight;
    const int64_t *tokens;
    size_t ntokens;
    int64_t srv_id; /* HAProxy's server `id` as given (0: none, assigned) */
    /* Node states (place_states.c): a down node is in the configuration
     * but does not serve; backup is HAProxy's `backup` flag; replicas are
     * a Redis master's replicas ("ip:port", borrowed), its failover. */
    bool down;
    bool backup;
    const char *const *replicas;
    size_t nreplicas;
    /* Where the node sits, widest domain first, each type once (nloc 0: no
     * location, every algorithm's default); borrowed like name. */
    const place_loc *loc;
    size_t nloc;
    /* Ceph's `osd reweight` as 16.16 fixed point, kept as what it takes
     * away from "in" (0x10000 - reweight) so that a node made without it
     * (zeroed) is fully in: 0 in, 0x10000 out.  Only ceph reads it. */
    uint32_t reweight_off;
} place_node;

typedef struct placement placement;

/* Where a key goes.  Filled by place_key. */
typedef struct place_key_info {
    uint32_t position; /* position(key): SHA-256, the v1 field */
    uint64_t sha64;    /* sha64(key): the first 8 bytes of the same digest */
    uint64_t hash;     /* the algorithm's key hash (its own width) */
    bool has_coord;
    uint64_t coord; /* order-preserving coordinate (alg.h) */
    long owner;     /* node index, -1 with no node */
    long point;     /* the point / slot / entry that decided, -1 if none */
    /* Who serves the key with the nodes' states applied (place_states.c):
     * a node index, -1 for nobody; equal to owner while every node is up.
     * via >= 0 when the owner's replica number via serves it (Redis). */
    long served;
    int via;
} place_key_info;

/* Which stored column the segments of an algorithm range over. */
typedef enum { PLACE_COL_POS, PLACE_COL_COORD } place_col;

/* A segment: coordinates (previous hi, hi] belong to owner (-1: nobody);
 * the first segment starts at 0 and the last one ends at the space's top. */
typedef struct place_seg {
    uint64_t hi;
    long owner;
} place_seg;

/* ---- configuration: one owner ---- */

/* The defaults of the original simulator: "ring", one point per node,
 * every other parameter at its algorithm's default, one replica. */
void place_config_default(place_config *cfg);
/* 0 if cfg names a known algorithm with parameters in range, else
 * RINGSIM_EPARAM with a message that says why. */
int place_config_check(const place_config *cfg, rs_error *err);
/* Whether two configurations are the same, member by member (a memcmp
 * would compare the padding after replicas too): the algorithm, every
 * parameter, replicas, the replication map's first ndc rows and
 * replica_domain.  A new member of place_config is compared here.  Cannot
 * fail. */
bool place_config_equal(const place_config *a, const place_config *b);
/* Whether the node list suits the algorithm (weights it honours, names it
 * parses, explicit tokens only where they mean something). */
int place_nodes_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err);
/* JSON of the configuration as stored and answered: {"algorithm",
 * "points_per_node", "params": {…current algorithm's}, "replicas"}.  With
 * all = true, "params" holds every algorithm's values (the stored form). */
json_t *place_config_json(const place_config *cfg, bool all);
/* Parse a stored or requested configuration on top of *cfg: fields that are
 * absent keep their value.  RINGSIM_EPARAM with a message for unknown
 * parameters or values of the wrong type. */
int place_config_from_json(place_config *cfg, const json_t *j, rs_error *err);
/* Whether cfg's algorithm takes parameter param (a PP_ index).  false for
 * an unknown algorithm. */
bool place_takes_param(const place_config *cfg, int param);
/* For an algorithm whose layout is a map of slots held by the masters,
 * which an import gives node by node (Redis Cluster): how many slots (0:
 * the algorithm named has no slot map), and the layout state's text of a
 * map, owner[0..slots) holding node ordinals (malloc'd; NULL when out of
 * memory or without a slot map). */
uint32_t place_slot_count(const char *algorithm);
/* Whether the algorithm named places by tokens its nodes may bring
 * (Cassandra's initial_token): false for an unknown name. */
bool place_takes_tokens(const char *algorithm);
char *place_slot_text(const char *algorithm, const uint32_t *owner);
/* Set one parameter by name ("table_size=65537" style from the CLI). */
int place_config_set_param(place_config *cfg, const char *name, const char *value, rs_error *err);
/* A short description, "ketama, 3 replicas". malloc'd. */
char *place_config_describe(const place_config *cfg);
/* The catalogue: [{"name", "title", "space", "key_hash", "params":[…],
 * "weights", "replicas", "origin"}…].  A parameter that names one of a
 * list (twemproxy's hash) answers "values" and its default by name; it is
 * set and answered by name, stored as its index. */
json_t *place_algorithms_json(void);
/* The key hash cfg places keys with, in words ("MD5, first 32 bits
 * little-endian"): the catalogue's, or ketama's under its mode and
 * key_hash.  Static. */
const char *place_key_hash(const place_config *cfg);

/* The points a layout of these nodes would hold (rings of points: the
 * seed's ring, ketama, nginx, Envoy's ring hash, Cassandra's tokens,
 * multiprobe), an upper bound computed without building it; 0 for the
 * algorithms whose layout a parameter bounds (Maglev's table, Redis's
 * slots) or that keep none (jump, rendezvous).  Cannot fail. */
uint64_t place_layout_points(const place_config *cfg, const place_node *nodes, size_t n);

/* Points of a ring node: max(1, round(points_per_node * weight)). */
uint32_t place_node_points(const place_config *cfg, double weight);

/* ---- building ---- */

/* Build a placement over nodes[0..n) (join order).  prev (may be NULL) is
 * the placement before this change: a stateful algorithm evolves its state
 * from it (nodes matched by id).  Otherwise state (may be NULL) is the
 * stored text form; without either, the state starts as the system starts
 * it.  0, or RINGSIM_ENOMEM / RINGSIM_EPARAM with err filled. */
int place_build(placement **out, hasher *h, const place_config *cfg, const place_node *nodes,
                size_t n, const placement *prev, const char *state, rs_error *err);
/* Accepts NULL. */
void place_free(placement *p);
const place_config *place_cfg(const placement *p);
size_t place_node_count(const placement *p);
/* Points, slots or entries node i holds (1 for owner functions). */
uint64_t place_node_size(const placement *p, size_t i);
/* The bounded-load rule of a placement's algorithm, which only the traffic
 * replay applies (src/sim/traffic.c): placement never depends on it. */
typedef enum {
    PLACE_BOUND_NONE,    /* every request to its key's node */
    PLACE_BOUND_HAPROXY, /* chash_server_is_eligible and the clockwise walk */
    PLACE_BOUND_ENVOY,   /* BoundedLoadHashingLoadBalancer */
    PLACE_BOUND_MTZ      /* Mirrokni-Thorup-Zadimoghaddam, clockwise to room */
} place_bound;
/* The rule and the parameter that sets its factor (-1 with no rule) of
 * the algorithm cfg names.  Cannot fail. */
place_bound place_bound_of(const place_config *cfg, int *param);
/* The points of a ring of points in ring order (p->pts): their count (0
 * for table and owner-function algorithms) and each one's node index. */
size_t place_point_count(const placement *p);
uint32_t place_point_node(const placement *p, size_t i);
/* The seed's ring (for its detailed trace), NULL for other algorithms. */
const struct ring *place_ring_of(const placement *p);
/* The persistent state as text (malloc'd), or NULL when stateless. */
char *place_state_text(const placement *p);

/* ---- keys ---- */

/* Where a key goes.  Cannot fail. */
void place_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *out);
/* The preference list: up to r distinct node indexes, owner first, into
 * out[r]; the count.  0 with no node. */
size_t place_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out);
/* The point that decided a key, in a layout of points (the rings: the
 * seed's, ketama, nginx, Envoy's, Cassandra's tokens, HAProxy's tree,
 * multiprobe's): its coordinate, node index, number within its node, and
 * whether the search wrapped past the last point to the first.  false for
 * layouts without points (tables, owner functions) or with no node. */
typedef struct place_point {
    uint64_t coord;
    long node;
    uint32_t index;
    bool wrapped;
} place_point;
bool place_point_of(const placement *p, const place_key_info *k, place_point *out);
/* Coordinate and hash as decimal strings (signed tokens signed); out holds
 * 24 bytes.  false when the algorithm has none. */
bool place_coord_str(const placement *p, uint64_t coord, char out[24]);
void place_hash_str(const placement *p, uint64_t hash, char out[24]);

/* ---- node states (place_states.c) ---- */

/* Nodes that are down (0: everything below answers as if states did not
 * exist, at no cost). */
size_t place_down_count(const placement *p);
/* Points, slots or entries node i serves from with the states applied (its
 * place_node_size while every node is up; the rebuilt continuum's count
 * for the algorithms that rebuild it; 0 for a node that is down). */
uint64_t place_serving_size(const placement *p, size_t i);
/* The layout that serves where the algorithm builds its layout again from
 * the serving nodes (REBUILD with nodes down, not in panic): that layout,
 * its node i being p's (*map)[i], with place_node_count(result) entries;
 * otherwise p itself and *map NULL.  Borrowed from p, valid as long as p;
 * cannot fail. */
const placement *place_serving_layout(const placement *p, const size_t **map);
/* Whether every node is in panic (Envoy): the down nodes serve anyway. */
bool place_in_panic(const placement *p);
/* The weight each node's fair share counts (docs/api.md v4) into w[0..n):
 * its weight (1 for algorithms without weights) when it can take keys now
 * -- weight above 0, up (or serving anyway: Envoy's panic, a Redis master
 * whose replica took over), an HAProxy backup only while it serves -- and 0
 * for the others.  Its fair share is that over their total.  Cannot fail. */
void place_fair_weights(const placement *p, double *w, size_t n);
/* How the algorithm treats a down node, in a sentence. */
const char *place_down_rule_text(const placement *p);

/* ---- diffs ---- */

/* The column a placement's segments range over (PLACE_COL_COORD: keys
 * store their coordinate), or -1 for algorithms that re-place keys. */
int place_column(const placement *p);
/* The largest coordinate of the space. */
uint64_t place_top(const placement *p);
/* What a key's coordinate is called under this algorithm ("slot" for
 * Redis, "token" for Cassandra...), NULL when the key has no coordinate
 * apart from its SHA-256 position (ring, rendezvous).  Cannot fail. */
const char *place_coord_name(const placement *p);
/* The column segments range over, or -1 when keys must be re-placed one by
 * one (no segments, or two placements whose coordinates differ). */
int place_diff_column(const placement *a, const placement *b);
/* Whether every key keeps its stored coordinate from a to b: the same
 * algorithm with the same coordinate parameters, or two algorithms that
 * store none (the position stands for it). */
bool place_same_coords(const placement *a, const placement *b);
/* Segments covering the whole space, in order, by the node that serves
 * (the states applied).  *out malloc'd. */
int place_segments(const placement *p, place_seg **out, size_t *n);
/* Whether, between a and b, only the keys of nodes that left can move
 * (MementoHash, rendezvous on a leave): the engine then visits only them. */
bool place_only_leavers_move(const placement *a, const placement *b);
/* Whether, under p's algorithm, a node that leaves moves its own keys and
 * no other (the table's minimal or leave_local trait).  Cannot fail. */
bool place_leave_moves_only_its_keys(const placement *p);

/* ---- shares and drawing ---- */

/* Each node's share of the space into share[n] (zeroed first). */
void place_shares(const placement *p, double *share, size_t n);
/* Effective shares counting r replicas (they add up to min(r, n)). */
void place_owns(const placement *p, uint32_t r, double *owns, size_t n);
/* The node's coordinates in ring order as a JSON array of strings, its
 * slot ranges ({"slots": [[a,b]…]}), or NULL: added to the node object. */
void place_node_json(const placement *p, size_t node, json_t *obj);
/* Where after is of an algorithm with placement groups (ceph): true, with
 * *remapped the PGs of after whose up set differs from before's (a PG
 * before lacks is new, every position it fills moved; every PG is new
 * when before is of another algorithm or NULL) and
 * *shards the positions (PG, index in the up set) whose device changed;
 * false otherwise (nothing set). */
bool place_pg_diff(const placement *before, const placement *after, int64_t *remapped,
                   int64_t *shards);
/* The layout to draw: {"space", "points": [{"position", "coordinate",
 * "node"}…]} or {"space", "runs": [{"first", "last", "node"}…]}; node
 * names come from names[]. */
json_t *place_layout_json(const placement *p, const char *const *names);
/* A coordinate on a drawing of [0, 2^32), so that a page draws every space
 * the same way: the coordinate itself in a 32-bit space.  The "position" of
 * a point in the layout and in a lookup. */
uint32_t place_point_position(const placement *p, uint64_t coord);
/* The lookup trace: [{"step", "detail"}…] in the system's own words. */
json_t *place_trace_json(const placement *p, const char *key, size_t len, const place_key_info *k,
                         const char *const *names);
/* Node i's name in a synthetic cluster of algorithm's (theory): a
 * HOST:PORT every algorithm reads ("10.0.0.1:11211"), or an OSD name
 * ("osd.0") for ceph, whose nodes are OSDs.  out has room for 32 bytes;
 * the length. */
size_t place_sample_name(const char *algorithm, size_t i, char out[32]);
/* A ceph placement's pool: its pg_num and id; false under any other
 * algorithm. */
bool place_ceph_pool(const placement *p, uint32_t *pg_num, uint32_t *pool);
/* PG ps's up set (down OSDs out: shifted, or -1 holes for erasure) as node
 * indexes into up[0..cap); the count (0 for ps out of range). */
size_t place_ceph_up(const placement *p, uint32_t ps, long *up, size_t cap);
/* The CRUSH map a ceph placement maps through (alg_ceph.h), its rule
 * first among its rules; NULL under any other algorithm.  Borrowed, valid
 * as long as p. */
const struct ceph_map *place_ceph_map(const placement *p);
/* Bytes the placement's layout takes (points, tables, per-node arrays). */
size_t place_memory_bytes(const placement *p);
/* The largest share over the mean share (structural balance). */
double place_structural_max_over_mean(const placement *p);

#endif
