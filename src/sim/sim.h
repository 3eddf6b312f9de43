/*
 * sim.h - the ringsim engine: applies operations, computes moves, answers
 * questions about the state, travels in time.
 *
 * A sim is one simulation backed by one store (a file, or ":memory:" for the
 * snapshots of time travel).  It keeps the small part of the state in memory
 * -- configuration, nodes with their key counters, the placement -- and
 * leaves keys and history in SQLite.  Every operation is one write
 * transaction: the new in-memory state is built aside and swapped in only
 * after COMMIT, so a failed operation leaves both the database and the sim as
 * they were.
 *
 * Costs: a topology change (add/remove node, configure, revert) merges the
 * old and new rings' points, O(P), and touches only keys in the arcs that
 * change hands, via the position index.  Inserting a key is one hash, one
 * O(log P) successor search and one insert.  Statistics come from counters.
 * Time travel replays the log into a private sim; sim_history_at keeps one
 * such view and moves it forward by applying operations and backward by
 * undoing them, at the cost of what they changed.
 *
 * Another process may change the same database: sim_refresh() notices
 * (PRAGMA data_version) and reloads.  Operations refresh by themselves once
 * they hold the write lock.  A sim is not thread-safe.
 */
#ifndef RINGSIM_SIM_H
#define RINGSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "names.h" /* NAME_BUF */
#include "oprec.h"
#include "place.h"

#define SIM_MAX_GENERATE 10000000u
#define SIM_MAX_WEIGHT 1000.0
/* Points a layout may hold in all (nodes x points per node x weight, or
 * the algorithm's own count: place_layout_points).  Measured (the seed's
 * ring, place_build on 2 shared cores): 32 bytes and 0.45-0.8 us a point,
 * so 4M points are 128 MB and 1.8-3.2 s per build, and a change of
 * topology holds two layouts (before and after) -- about 300 MB at the
 * limit.  30M points (3,000 nodes x 10,000) needed ~1 GB a layout and no
 * longer built under a 1.5 GB address limit.  A change that would pass it
 * is refused (RINGSIM_EPARAM) before anything is built or committed; an
 * older database already past it still opens, and changes that do not
 * grow its layout (removals, revert, reset, fewer points) go through.
 * Test hook: RINGSIM_MAX_LAYOUT_POINTS sets another limit. */
#define SIM_MAX_LAYOUT_POINTS 4000000u

typedef struct sim sim;

typedef struct sim_str {
    const char *s;
    size_t len;
} sim_str;

/* Called every few thousand keys (or operations of a replay, or arcs of a
 * topology change) during long operations -- generate, insert and delete
 * of long lists, configure, node add and remove, revert, check and time
 * travel; done <= total.  The same values may come again: between two
 * counted steps the engine repeats the last report to ask whether to go
 * on.  A nonzero return cancels the operation: it fails with
 * RINGSIM_ECANCELED and is rolled back whole.  Runs on the thread of the
 * operation. */
typedef int (*sim_progress_fn)(void *ud, const char *what, uint64_t done, uint64_t total);

/* Open the simulation in the database at path (created when missing). */
int sim_open(sim **out, const char *path, rs_error *err);
/* Accepts NULL. */
void sim_close(sim *s);
/* Reload when another connection changed the database.  *changed (may be
 * NULL) tells whether it did. */
int sim_refresh(sim *s, bool *changed, rs_error *err);
/* The same where it is cheap: when another connection changed only keys
 * (the nodes, configuration and layout state are as they were), the new
 * counters are taken; when the topology changed, nothing is (the state
 * stays as it was) and *heavy says that a sim_refresh would rebuild the
 * layout.  So too when a workload other than the default is in force (or
 * is now): its cache would be built at the next read, so it is left to
 * sim_refresh and sim_workload_warm.  For a thread that must not stall (the
 * server's event loop). */
int sim_refresh_light(sim *s, bool *heavy, rs_error *err);
void sim_set_progress(sim *s, sim_progress_fn fn, void *ud);
/* Why the database cannot be written ("the file is not writable: ..."), or
 * NULL when it can; every operation then fails with RINGSIM_EREADONLY and a
 * message naming the file and this reason. */
const char *sim_read_only(const sim *s);

/* ---- the log and the stored keys, for the faces ---- */

/* An operation as the log keeps it: id, at, type, subject, params,
 * moved_from and config (malloc'd text; free with sim_op_clear),
 * keys_moved, replica_moves, skipped. */
typedef oprec sim_op;

/* The operation types: one owner of their names (the log's "type"). */
typedef enum {
    SIM_OP_UNKNOWN = -1, /* a name no type has */
    SIM_OP_ADD_NODE,
    SIM_OP_REMOVE_NODE,
    SIM_OP_SET_WEIGHT,
    SIM_OP_SET_STATE,
    SIM_OP_CONFIGURE,
    SIM_OP_IMPORT,
    SIM_OP_INSERT_KEYS,
    SIM_OP_DELETE_KEYS,
    SIM_OP_WORKLOAD,
    SIM_OP_RESET,
    SIM_OP_REVERT,
    SIM_OP_SET_LOCATION,
    SIM_OP_SET_REWEIGHT,
    SIM_OP_TYPE_COUNT
} sim_op_type;
/* The type a logged name stands for (SIM_OP_UNKNOWN for none). */
sim_op_type sim_op_type_of(const char *name);
/* The name the log keeps ("add_node", ...); NULL for SIM_OP_UNKNOWN. */
const char *sim_op_type_name(sim_op_type t);
/* A change of topology: the nodes, their weights or states, or the
 * configuration change, the stored keys stay (their owners move). */
bool sim_op_is_topology(sim_op_type t);
typedef int (*sim_op_fn)(void *ud, const sim_op *op);
typedef int (*sim_bytes_fn)(void *ud, const char *s, size_t len);
typedef int (*sim_move_fn)(void *ud, const char *key, const char *from, const char *to);

/* Operations with id > after, at most limit (< 0: all), increasing id. */
int sim_log_each(sim *s, int64_t after, int64_t limit, sim_op_fn fn, void *ud, rs_error *err);
/* One operation: RINGSIM_ENOTFOUND when missing; free with sim_op_clear. */
int sim_log_get(sim *s, int64_t id, sim_op *out, rs_error *err);
void sim_op_clear(sim_op *op);
/* What docs/api.md v4 adds to an operation, as recorded at its commit:
 * {"pairs": [{"from", "to", "keys", "requests_share", "bytes"}…],
 * "unavailable_after": {"keys", "key_share", "requests_share", "bytes"}}
 * into *out (the caller's); NULL for an operation logged before. */
int sim_op_v4(sim *s, int64_t id, json_t **out, rs_error *err);
/* The id of the last operation (0 when none) into *out. */
int sim_log_last(sim *s, int64_t *out, rs_error *err);
/* A page of an operation's moves (key, from, to; NULL for nobody) in the
 * order they were made; *total counts them all.  fn may be NULL (count). */
int sim_log_moves(sim *s, int64_t op, int64_t offset, int64_t limit, int64_t *total, sim_move_fn fn,
                  void *ud, rs_error *err);
/* The keys an operation named (an insert's, a delete's), in its order. */
int sim_log_keys(sim *s, int64_t op, sim_bytes_fn fn, void *ud, rs_error *err);
/* Every stored key, in storage order (the cheapest scan). */
int sim_keys_each(sim *s, sim_bytes_fn fn, void *ud, rs_error *err);
/* One read transaction around several reads, so that they see one state
 * (another process may write in between otherwise).  Cannot nest. */
int sim_read_begin(sim *s, rs_error *err);
void sim_read_end(sim *s);

/* ---- operations: each is one transaction; *op receives its id ---- */
int sim_add_node(sim *s, const char *name, size_t len, double weight, int64_t *op, rs_error *err);
/* A node to add: explicit tokens (Cassandra's initial_token) may be NULL. */
typedef struct sim_node_spec {
    const char *name;
    size_t len;
    double weight;
    const int64_t *tokens;
    size_t ntokens;
    int64_t srv_id; /* HAProxy's server `id` (1..2147483647), 0: none */
    /* States (docs/api.md "Node states"): down, HAProxy's backup, a Redis
     * master's replicas ("ip:port", borrowed for the call). */
    bool down;
    bool backup;
    const char *const *replicas;
    size_t nreplicas;
    /* Its location (API.md v4 "failure domains"), widest first, checked
     * by the operation (place_loc_check); borrowed for the call. */
    const place_loc *loc;
    size_t nloc;
} sim_node_spec;
int sim_add_node_spec(sim *s, const sim_node_spec *spec, int64_t *op, rs_error *err);
/* An operation's parameters, decoded once for every reader (replay, undo,
 * diff, the workload cache, scenario export, the views): the one place that
 * knows the members each type logs.  sim_op_params_read fails with
 * RINGSIM_EDB ("operation N has unreadable parameters") when a member has
 * the wrong shape, and RINGSIM_ENOMEM. */
typedef struct sim_op_params {
    sim_op_type type;
    json_t *json; /* the whole object: configure, import and workload read their own members */
    /* add_node: everything; remove_node: the name; set_weight: name and
     * weight; set_state: name and down.  Strings borrowed from json. */
    sim_node_spec node;
    bool has_node; /* a node operation with a readable name */
    /* set_state of a whole domain (node.name NULL, node.down set). */
    const char *dom_type, *dom_name;
    /* insert_keys made by `key gen`: prefix + (start .. start+count-1). */
    bool generated;
    sim_str prefix;
    uint64_t start, count;
    int64_t keys;           /* insert_keys/delete_keys: how many keys the operation listed */
    int64_t to;             /* revert: its target; -1 for the others */
    double reweight;        /* set_reweight: Ceph's `osd reweight`, 0..1 */
    int64_t *tokens_;       /* owned by the decoder */
    place_loc *loc_;        /* owned by the decoder (node.loc points here) */
    const char **replicas_; /* owned by the decoder */
} sim_op_params;
int sim_op_params_read(const sim_op *o, sim_op_params *out, rs_error *err);
/* The configuration an operation left (the log's config): RINGSIM_EDB when
 * it is unreadable. */
int sim_op_config(const sim_op *o, place_config *cfg, rs_error *err);
void sim_op_params_clear(sim_op_params *p);
/* A node object as add_node and import log it into spec (strings borrowed
 * from o); *tokens and *replicas receive what the caller frees (also on
 * failure).  RINGSIM_EDB when damaged, RINGSIM_ENOMEM. */
int sim_node_spec_from_json(const json_t *o, sim_node_spec *spec, int64_t **tokens,
                            const char ***replicas, place_loc **loc);
/* The key `key gen` makes for number n (prefix + its decimal) into buf,
 * which has room for NAME_BUF + 24 bytes (a prefix is under NAME_BUF); its
 * length. */
size_t sim_generated_key(sim_str prefix, uint64_t n, char *buf);
int sim_remove_node(sim *s, const char *name, size_t len, int64_t *op, rs_error *err);
/* Inserts the keys that are new; the rest (existing, or repeated in the
 * list) are skipped and counted -- or, when strict, refused with
 * RINGSIM_ECONFLICT and nothing done. */
int sim_insert_keys(sim *s, const sim_str *keys, size_t n, bool strict, int64_t *inserted,
                    int64_t *skipped, int64_t *op, rs_error *err);
/* The same insert with the keys streamed from a reader (`key add --file`,
 * `key add -`): memory for one key at a time, whatever n.  next(ud, &k,
 * err) gives the next key in k (its bytes valid until the next call) and
 * 0, or 1 at the end, or a negative RINGSIM_E code with err filled.  The
 * log records the number of keys before the first one: n is that number
 * (a reader that gives another is refused, RINGSIM_EPARAM), first the
 * first key (the operation's subject when n is 1).  Each key is checked as
 * it comes ("keys[i]: ..."); existing and repeated keys are skipped and
 * counted, as sim_insert_keys does with strict false.  One operation:
 * any refusal rolls it back whole. */
typedef int (*sim_key_next_fn)(void *ud, sim_str *key, rs_error *err);
int sim_insert_keys_each(sim *s, uint64_t n, sim_str first, sim_key_next_fn next, void *ud,
                         int64_t *inserted, int64_t *skipped, int64_t *op, rs_error *err);
/* The default start of `key gen` (docs/api.md v3): one past the highest number
 * generated with this prefix since the last reset (deletes and reverts do
 * not lower it, so nothing generated before is made again), 0 when none.
 * Reads the log: O(operations since the last reset). */
int sim_generate_next(sim *s, const char *prefix, size_t plen, uint64_t *start, rs_error *err);
/* Inserts prefix+start ... prefix+(start+count-1); numbers whose key
 * already exists are skipped and counted in *skipped. */
int sim_generate_keys(sim *s, const char *prefix, size_t plen, uint64_t start, uint64_t count,
                      int64_t *inserted, int64_t *skipped, int64_t *op, rs_error *err);
/* Deletes the keys; all must exist (else RINGSIM_ENOTFOUND, nothing done). */
int sim_delete_keys(sim *s, const sim_str *keys, size_t n, int64_t *op, rs_error *err);
int sim_configure(sim *s, const place_config *cfg, int64_t *op, rs_error *err);
/* Whether cfg is the current configuration, every algorithm's parameters
 * included: a configure from a face that changes nothing records nothing
 * (docs/api.md v3), so the faces ask this first.  Cannot fail (false when out
 * of memory). */
bool sim_config_same(sim *s, const place_config *cfg);
/* Change a node's weight in place: one set_weight operation, keys move as
 * the placement says.  RINGSIM_ENOTFOUND for a node that does not exist,
 * RINGSIM_EPARAM for a weight that the rule or the algorithm refuses; the
 * same weight again changes nothing and records nothing (*op = 0). */
int sim_set_weight(sim *s, const char *name, size_t len, double weight, int64_t *op, rs_error *err);
/* Mark a node down or up (sim_ops.c; the states: sim_states.c): one
 * set_state operation; the keys whose server changes move as the
 * algorithm treats a down node (place_states.c).  RINGSIM_ENOTFOUND for a
 * node that does not exist; the state it already has changes nothing and
 * records nothing (*op = 0). */
int sim_set_state(sim *s, const char *name, size_t len, bool down, int64_t *op, rs_error *err);
/* Every node whose location holds (type, name) down or up: one set_state
 * operation (subject "type=name"); RINGSIM_ENOTFOUND when no node is in
 * that domain; nothing recorded (*op 0) when all already are. */
int sim_set_state_domain(sim *s, const char *type, const char *name, bool down, int64_t *op,
                         rs_error *err);
/* The node's location becomes loc[0..n) (n 0: none), checked
 * (place_loc_check): one set_location operation, a change of topology
 * (replicas placed across domains follow it); the location it already has
 * changes nothing and records nothing (*op 0). */
int sim_set_location(sim *s, const char *name, size_t len, const place_loc *loc, size_t n,
                     int64_t *op, rs_error *err);
/* Ceph's `ceph osd reweight` (API.md v4): the node's reweight becomes r,
 * 0..1 (0 is the state `out`: CRUSH maps around it; 1 is `in`), one
 * set_reweight operation; keys move as the placement says.  RINGSIM_EPARAM
 * for r outside 0..1 or an algorithm other than ceph, RINGSIM_ENOTFOUND
 * for no such node; the reweight it has records nothing (*op 0). */
int sim_set_reweight(sim *s, const char *name, size_t len, double r, int64_t *op, rs_error *err);
int sim_reset(sim *s, int64_t *op, rs_error *err);
/* Import (sim_import.c, docs/api.md "import a real cluster"): one `import`
 * operation that sets the text's algorithm and parameters over the current
 * configuration and replaces the nodes with the result's, in its order,
 * with weights, tokens, ids, backup, states, replicas and (Redis) the
 * masters' slots as the slot map; keys move as the new placement says.
 * RINGSIM_EPARAM for what ringsim cannot take (a name its rules refuse, a
 * weight of 0, Redis slots without a master), *line (may be NULL) the
 * text's line it is about or 0.  The log keeps the parsed result. */
typedef struct import_result import_result;
int sim_import(sim *s, const import_result *r, int64_t *op, rs_error *err);
int sim_import_ex(sim *s, const import_result *r, int *line, int64_t *op, rs_error *err);
/* sim_import's refusals of r alone (names, weights, Redis slots), without
 * a database: 0 or RINGSIM_EPARAM with *line (may be NULL). */
int sim_import_check(const import_result *r, int *line, rs_error *err);
/* The params of the import operation the current state stands on (the
 * newest in its chain), NULL when none; *id its id.  *params is new. */
int sim_import_last(sim *s, json_t **params, int64_t *id, rs_error *err);
/* The same, and *configured (may be NULL): whether a configure operation
 * followed that import in the chain (a layout such as Redis's slot map was
 * then made anew, not taken from the text). */
int sim_import_last_ex(sim *s, json_t **params, int64_t *id, bool *configured, rs_error *err);
/* The state becomes what it was right after operation `to` (0 = empty). */
int sim_revert(sim *s, int64_t to, int64_t *op, rs_error *err);

/* ---- preview: an operation as a dry run ----
 * sim_preview_run calls op(s, arg, err), which performs one operation
 * (sim_add_node, sim_remove_node, sim_configure, ...) on s; that operation
 * runs in full inside its transaction and is rolled back instead of
 * committed: nothing is recorded, s is unchanged.  Before the rollback,
 * after(ud, s) is called (may be NULL) with s showing the state the
 * operation would leave, so that the caller can read it with the usual
 * read functions.  Costs what the operation costs. */
typedef struct sim_preview {
    void (*after)(void *ud, sim *s);
    void *ud;
    int64_t sample; /* moves to list in sample_moves (default 20) */
    /* results; the json_t are the caller's to json_decref */
    int64_t keys_moved, replica_moves;
    json_t *moved_from, *moved_to; /* [{"node", "keys"}…] */
    json_t *sample_moves;          /* [{"key", "from", "to"}…] */
    json_t *pairs;                 /* [{"from", "to", "keys", "requests_share", "bytes"}…] */
    json_t *unavailable_after;     /* {"keys", "key_share", "requests_share", "bytes"} */
    double requests_moved;         /* the moved keys' shares (sim_workload_follow.c) */
    int64_t bytes_moved;           /* and their value sizes */
    /* ceph (placement groups): has_pgs, the PGs whose up set changes and
     * the positions that change (API.md v4) */
    bool has_pgs;
    int64_t pgs_remapped, pg_shards_moved;
} sim_preview;
int sim_preview_run(sim *s, sim_preview *p, int (*op)(sim *, void *, rs_error *), void *arg,
                    rs_error *err);

/* ---- reads (valid until the next operation or refresh) ---- */
typedef struct sim_node_view {
    const char *name;
    size_t len;
    uint32_t position;
    double weight;
    uint64_t points; /* points, slots or table entries it holds */
    size_t index;    /* its index in the placement */
    int64_t keys;
    double key_share, arc_share;
    double owns; /* effective share counting replicas */
    bool down, backup;
    const char *const *replicas; /* a Redis master's, for failover */
    size_t nreplicas;
    const place_loc *loc; /* its location, widest first (nloc 0: none) */
    size_t nloc;
    uint64_t serving_points; /* what it serves from, the states applied */
    /* docs/api.md v4: its weight over the total weight of the nodes that
     * can take keys (0: it cannot), and its share of the served keys over
     * that (-1 when its fair share is 0). */
    double fair_share, load_over_fair;
} sim_node_view;

/* Where a key goes now, stored or not (coordinate, preference list). */
typedef struct sim_where {
    place_key_info info;
    long prefs[PLACE_MAX_PREFS];
    size_t nprefs;
} sim_where;
void sim_key_where(sim *s, const char *key, size_t len, sim_where *out);

const place_config *sim_config(const sim *s);
const placement *sim_placement(const sim *s);
size_t sim_node_count(const sim *s);
/* Names of the nodes by placement index (valid like the placement). */
const char *const *sim_node_names(const sim *s);
/* The nodes as the placement sees them (join order), and the engine's
 * hasher (for code that places keys beside the engine: compare). */
const place_node *sim_place_nodes(const sim *s);
hasher *sim_hasher(sim *s);
/* Name of the node with placement index i. */
const char *sim_node_name(const sim *s, size_t i, size_t *len);
/* Stored keys in all, and those with no node. */
int64_t sim_key_count(const sim *s);
int64_t sim_unassigned(const sim *s);
/* The id of the last operation (0 when none), or a negative RINGSIM_E*
 * code when the log cannot be read. */
int64_t sim_last_op(sim *s);

/* All nodes ordered by (position, name); *out malloc'd (caller frees). */
int sim_nodes(sim *s, sim_node_view **out, size_t *n, rs_error *err);
/* One node, RINGSIM_ENOTFOUND when missing. */
int sim_node_get(sim *s, const char *name, size_t len, sim_node_view *out, rs_error *err);

/* Balance as the systems count it (docs/api.md v4): over the nodes that can
 * take keys (`fair` of them), mean, stddev, min and max count keys;
 * max_over_mean is the largest load_over_fair and cv the deviation of
 * load_over_fair from 1 weighted by fair share.  unavailable counts the
 * stored keys that no node serves (all of them while there is no node). */
typedef struct sim_stats {
    int64_t nodes, keys, min, max;
    double mean, stddev, cv, max_over_mean;
    int64_t fair;        /* nodes that can take keys */
    int64_t unavailable; /* stored keys nobody serves */
} sim_stats;
void sim_stats_get(sim *s, sim_stats *out);
/* Each node's fair-share weight by placement index into w[0..n) (n the
 * node count; place_fair_weights): its fair share is w[i] over their sum.
 * Cannot fail. */
void sim_fair_weights(sim *s, double *w, size_t n);
/* The balance of loads (counts or shares, by placement index) against the
 * fair-share weights w: *max_over_mean the largest load_over_fair = (load /
 * served) / (w / W) over the nodes with w > 0, *cv sqrt(sum (w / W) *
 * (load_over_fair - 1)^2); both 0 when nothing is served.  With equal
 * weights these are max / mean and stddev / mean over those nodes, computed
 * so (version 3's figures to the last bit).  Cannot fail. */
void sim_balance(const double *load, const double *w, size_t n, double *max_over_mean, double *cv);

typedef struct sim_lookup_result {
    uint32_t position;
    char sha256[65];
    const char *node; /* NULL with no node */
    size_t node_len;
    bool stored, has_point;
    place_point point;     /* the point that decided, when has_point */
    const char *served_by; /* who serves it (NULL: nobody), a node or a replica */
    size_t served_len;
    place_key_info info;         /* the placement's answer */
    long prefs[PLACE_MAX_PREFS]; /* preference list (node indexes) */
    size_t nprefs;
} sim_lookup_result;
int sim_lookup(sim *s, const char *key, size_t len, sim_lookup_result *out, rs_error *err);

/* A page of keys; node (may be NULL) filters by owner name. */
typedef int (*sim_key_fn)(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                          size_t node_len);
int sim_keys_page(sim *s, const char *node, size_t node_len, const char *prefix, size_t prefix_len,
                  int64_t offset, int64_t limit, int64_t *total, sim_key_fn fn, void *ud,
                  rs_error *err);
/* The same in another order: by SHA-256 position then key (as above), by
 * key (bytewise), or by the algorithm's coordinate, then position, then
 * key. */
typedef enum { SIM_ORDER_POSITION, SIM_ORDER_KEY, SIM_ORDER_COORDINATE } sim_key_order;
int sim_keys_page_ordered(sim *s, const char *node, size_t node_len, const char *prefix,
                          size_t prefix_len, sim_key_order order, bool desc, int64_t offset,
                          int64_t limit, int64_t *total, sim_key_fn fn, void *ud, rs_error *err);
/* One stored key. */
int sim_key_get(sim *s, const char *key, size_t len, uint32_t *pos, const char **node,
                size_t *node_len, rs_error *err);
/* Stored keys per equal slice of the space the algorithm draws, counts[bins]
 * (zeroed first): of its coordinates where its layout ranges over them
 * (*by = "coordinate": the ring's positions, ketama's points, redis's
 * slots...), else of the SHA-256 positions on the 32-bit ring (*by =
 * "position": jump and rendezvous draw no layout). */
int sim_density(sim *s, uint32_t bins, int64_t *counts, const char **by, rs_error *err);

/* ---- workload ---- */
/* Every stored key with its share of requests (the shares sum to 1), in no
 * promised order.  fn returning nonzero stops the walk with that value. */
typedef int (*sim_share_fn)(void *ud, const char *key, size_t len, double share);
int sim_workload_each(sim *s, sim_share_fn fn, void *ud, rs_error *err);

/* ---- history ---- */
/* The parts of the log the state after `at` stands on: segments of
 * operations (from, to], newest first, and the configuration the oldest
 * starts from (a reset keeps its configuration).  Free with sim_chain_free
 * (accepts an empty chain). */
typedef struct sim_chain_seg {
    int64_t from, to;
} sim_chain_seg;
typedef struct sim_chain {
    sim_chain_seg *seg;
    size_t n;
    place_config start;
} sim_chain;
int sim_chain_get(sim *s, int64_t at, sim_chain *out, rs_error *err);
void sim_chain_free(sim_chain *c);

/* A new private sim holding the state right after operation `at` (0 =
 * empty), replayed from the log; RINGSIM_ENOTFOUND past the last. */
int sim_at(sim *s, int64_t at, sim **snapshot, rs_error *err);

/* Move a snapshot made by sim_at from operation `from` forward to `to` by
 * applying only the operations in between; RINGSIM_EPARAM (nothing done)
 * when a reset or revert lies between them, which needs a fresh sim_at.  On
 * any other failure the snapshot is unusable: close it. */
int sim_advance(sim *s, sim *snapshot, int64_t from, int64_t to, rs_error *err);

/* The engine's time travel: one cached read-only view of the past, moved to
 * `at` the cheapest way, by what the operations in between moved, inserted
 * and deleted -- forward by applying the operations in between; backward by
 * undoing them from what the log records (moves are undone as changes of
 * topology, inserts by deleting their keys, deletes by placing their keys
 * again), from the view or from a copy of the live database; otherwise (a
 * reset or revert in between, an insert that skipped existing keys, or
 * simply cheaper) by a replay (sim_at); or from a checkpoint (a copy of
 * the live database kept by sim_history_checkpoint), forward or back.
 * *state is the state after `at`: s itself when `at` is the last operation,
 * else h->view, valid until the next call or sim_history_clear.  Start
 * with h = SIM_HISTORY_INIT.  Readers must not change the view. */
#define SIM_HISTORY_CHECKPOINTS 8
typedef struct sim_checkpoint {
    int64_t at; /* the state after this operation */
    sim *snap;
} sim_checkpoint;
typedef struct sim_history {
    int64_t at;
    sim *view;
    const char *how; /* the last move: "now", "cached", "forward", "back", "live"
                      * (back from a copy of the live database), "replay" */
    sim_checkpoint cp[SIM_HISTORY_CHECKPOINTS]; /* by operation, oldest first */
    size_t ncp;
    int64_t checkpoint_work; /* work between checkpoints; 0: the default */
    uint64_t builds;         /* layouts the last move built (replayed or undone
                      * topology changes): what its price counts */
} sim_history;
#define SIM_HISTORY_INIT                                                                           \
    {                                                                                              \
        .at = -1                                                                                   \
    }
int sim_history_at(sim *s, sim_history *h, int64_t at, sim **state, rs_error *err);
/* Keep a copy of the live state as a checkpoint when the operations since
 * the newest one did enough work (a replay of them would take about a
 * second at a million keys); at most SIM_HISTORY_CHECKPOINTS, the one
 * closest to its neighbours going first.  For an idle moment: a copy costs
 * about 20 ms at a million keys. */
int sim_history_checkpoint(sim *s, sim_history *h, rs_error *err);
/* The view and the checkpoints go; accepts a cleared history. */
void sim_history_clear(sim_history *h);

/* ---- the difference between two states (docs/api.md v3, sim_diff.c) ----
 * What changed from the state after operation `from` to the state after
 * operation `to` (0 = the empty start; either may be the later): keys
 * whose owner differs (moves, by key bytes; the page [offset, offset +
 * limit) of them in `moves`), keys and nodes only at one end, whether the
 * configuration differs.  Costs what the operations in between changed:
 * the log's moves, inserts and deletes composed key by key along the way
 * from one state to the other (through resets and reverts: the state after
 * a revert to j is the state after j) (how = "log"); the few keys the log
 * leaves open (one deleted and inserted again: its owner at the start; one
 * an insert skipped: whether it was there) are looked up in that end's
 * state (looked_up).  When the log cannot say -- an operation of a kind it
 * does not compose -- or when force_states, by comparing the two states
 * whole (how = "states", O(keys); why says what stopped the log).  States
 * are reached by sim_history_at through h (may be NULL: a view of its
 * own).  RINGSIM_ENOTFOUND past the last operation.  The json_t members
 * are the caller's: free with sim_diff_clear (accepts a cleared one). */
typedef struct sim_diff {
    int64_t from, to;
    int64_t keys_moved, keys_added, keys_removed, moves_total;
    json_t *moved_from, *moved_to;       /* [{"node", "keys"}…], largest first */
    json_t *nodes_added, *nodes_removed; /* names, by their bytes */
    bool config_changed;
    json_t *moves; /* the page: [{"key", "from", "to"}…] */
    /* every (from, to) pair over all the moves, exact, largest first:
     * [{"from", "to", "keys", "requests_share", "bytes"}…], the keys
     * weighed by the workload of the state after `to` */
    json_t *pairs;
    const char *how;
    char why[160];
    int64_t work;      /* log entries composed (how = "log") */
    int64_t looked_up; /* keys the log left open, looked up in a state */
} sim_diff;
int sim_diff_get(sim *s, sim_history *h, int64_t from, int64_t to, int64_t offset, int64_t limit,
                 bool force_states, sim_diff *d, rs_error *err);
void sim_diff_clear(sim_diff *d);

/* Verify the database: placement of every key, counters, and that replaying
 * the log reproduces the stored state.  Problems are described in report
 * (at most report_size bytes, may be NULL); *problems counts them. */
int sim_check(sim *s, int64_t *problems, char *report, size_t report_size, rs_error *err);

/* ---- workload (sim_workload*.c; docs/api.md "Version 3: traffic") ----
 * The share of requests each stored key receives and the keys' value
 * sizes.  Reads below may build the engine's cache (a pass over every key,
 * about a second at a million keys) when the workload is not the default;
 * the cache is kept by topology changes, and by inserts and deletes under
 * a hashed order; other key changes drop it. */

/* Set the workload from its JSON {"kind", ...}: one operation of type
 * `workload` (*op its id).  RINGSIM_EPARAM, nothing changed, for anything
 * docs/api.md refuses (listed keys that are not stored included). */
int sim_set_workload(sim *s, const json_t *spec, int64_t *op, rs_error *err);
/* The same, but when spec means the workload `now` (as sim_workload_json
 * gave it) nothing is recorded and *op = 0 (the faces' no-op rule). */
int sim_set_workload_if_new(sim *s, const json_t *spec, const json_t *now, int64_t *op,
                            rs_error *err);
/* The current workload with every default ({"kind", ..., "sizes"}); *out
 * is the caller's. */
int sim_workload_json(sim *s, json_t **out, rs_error *err);
/* Node of placement index `index`: its share of requests and its bytes. */
int sim_node_load(sim *s, size_t index, double *requests, int64_t *bytes, rs_error *err);
/* The hottest keys listed by the stats (requests.hottest_keys). */
#define SIM_HOTTEST_MAX 10
typedef struct sim_hot_key {
    char key[256];
    size_t len;
    double share;
} sim_hot_key;
typedef struct sim_requests_stats {
    double max_over_mean, cv; /* of the nodes' request shares */
    bool has_hottest;         /* false with no key */
    char hottest_key[256];
    size_t hottest_len;
    double hottest_share;
    double bound; /* max(1, largest key share / largest fair share) */
    /* Up to SIM_HOTTEST_MAX keys, hottest first, ties broken as for
     * hottest_key (hot[0] is it): kept with the workload's cache, so
     * reading them costs no pass over the keys. */
    sim_hot_key hot[SIM_HOTTEST_MAX];
    size_t nhot;
} sim_requests_stats;
int sim_requests_get(sim *s, sim_requests_stats *out, rs_error *err);
/* What nobody serves (docs/api.md v4 "unavailable"): the stored keys no
 * node serves, their share of the keys, of the requests, and their bytes. */
typedef struct sim_unavailable {
    int64_t keys;
    double key_share, requests_share;
    int64_t bytes;
} sim_unavailable;
int sim_unavailable_get(sim *s, sim_unavailable *out, rs_error *err);
/* Every stored key with its share of requests (shares sum to 1), in any
 * order; stops when fn returns nonzero (that is not an error). */
typedef int (*sim_share_fn)(void *ud, const char *key, size_t len, double share);
/* One stored key's share (O(log n) once the cache is built; a key that is
 * not stored: RINGSIM_EINTERNAL for ranked workloads, the rest's share
 * otherwise -- ask only about stored keys). */
int sim_key_share(sim *s, const char *key, size_t len, double *share, rs_error *err);
/* A key's value size in bytes under the workload's sizes (1 by default). */
int sim_key_bytes(sim *s, const char *key, size_t len, int64_t *bytes, rs_error *err);
int sim_workload_each(sim *s, sim_share_fn fn, void *ud, rs_error *err);
/* The workload in force right after operation `op` of the log (0: the
 * default) with every default, as sim_workload_json gives it. */
int sim_workload_after(sim *s, int64_t op, json_t **out, rs_error *err);
/* Build the cache now if a read would (a thread that may take a second:
 * the server's refresher before the loop takes this sim). */
int sim_workload_warm(sim *s, rs_error *err);
/* Whether the reads above answer without building anything. */
bool sim_workload_ready(sim *s);

#endif
