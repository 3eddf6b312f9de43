/*
 * sim_int.h - what the files of the engine share: the state in memory, the
 * frame of a running operation, the table its participants register, and
 * the helpers more than one file calls.  Only the engine includes it (and
 * white-box tests); everyone else sees sim.h.
 *
 * The files by floor, lowest first: each calls only files listed above it
 * (an edge a -> b when a.o needs a symbol b.o defines, by nm), so no two
 * call each other.  The frame reaches its participants through their
 * table alone (sim_participants.c): it names none of them.
 *
 *   sim_params.c     the log's decoder: operation types, logged params,
 *                    stored configurations
 *   sim_states.c     node states' codec (sim_node_attr_states)
 *   workload.c       a workload as a value (workload.h)
 *   sim_state.c      the state in memory: nodes and their attributes (by
 *                    codec), lookups, placement builds, an operation's
 *                    tallies, progress, key lists
 *   sim_read.c       answers about the current state; the log read back
 *   --- participants of the operation frame ---
 *   sim_undo.c       the state before each topology change: written in
 *                    the record phase, read back by time travel and revert
 *   sim_workload.c   the workload's cache; sim_workload_stats.c its
 *                    answers; sim_workload_follow.c its participant
 *                    (sim_workload_int.h)
 *   sim_participants.c  the one list of them
 *   --- the frame ---
 *   sim.c            open, refresh, the operation frame (begin, commit or
 *                    dry run, rollback), each phase of every participant
 *   --- operations and what stands on them ---
 *   sim_ops.c        topology changes and their diffs, node operations,
 *                    configure, reset, the workload operation, keys
 *   sim_import.c     import, and adopting a list of nodes (revert's too)
 *   sim_history.c    time travel: replay, steps back and forward
 *   sim_diff.c       the difference of two states, from the log
 *   sim_revert.c     revert, from the log (sim_diff.c) or by comparison
 *                    with a view of the past (sim_history.c)
 *   sim_check.c, traffic.c, compare.c: verifying, replaying traffic,
 *                    comparing algorithms
 */
#ifndef RINGSIM_SIM_INT_H
#define RINGSIM_SIM_INT_H

/* Private to its library: src/sim/CMakeLists.txt defines RINGSIM_SIM_INTERNAL for
 * its own files (and a white-box test may), so a higher floor that includes
 * this header does not compile (glib's __GLIB_H_INSIDE__). */
#ifndef RINGSIM_SIM_INTERNAL
#error "sim_int.h is the engine's own (src/sim/): faces use sim.h"
#endif

#include <jansson.h>
#include <stdbool.h>

#include "hash.h"
#include "names.h"
#include "sim.h"
#include "store.h"

typedef struct node {
    int64_t id;
    char *name; /* owned, NUL-terminated */
    size_t len;
    double weight;
    int64_t keys;
    int64_t *tokens; /* explicit tokens (owned), or NULL */
    size_t ntokens;
    int64_t srv_id; /* HAProxy's server id as given (attrs "id"), 0: none */
    /* States (attrs "state", "backup", "replicas"; sim_states.c). */
    bool down;
    bool backup;
    char **replicas; /* owned: a Redis master's replicas, "ip:port" */
    size_t nreplicas;
    /* Its location (attrs "location"; sim_location.c): owned pairs, each
     * type and name malloc'd. */
    place_loc *loc;
    size_t nloc;
    /* Ceph's `osd reweight` (attrs "reweight", absent = 1; sim_states.c):
     * reweighted says it is set, reweight its value, 0..1. */
    bool reweighted;
    double reweight;
} node;

typedef struct state {
    place_config cfg;
    node *nodes;
    size_t n;
    int64_t unassigned;
    placement *pl;
    place_node *pn;     /* the nodes as pl sees them (pl borrows them) */
    const char **names; /* node names by index, for the views */
} state;

struct sim {
    store *st;
    hasher *h;
    state cur;
    int64_t data_version;
    int64_t at_op;       /* the last logged operation the state in memory holds */
    uint64_t max_points; /* SIM_MAX_LAYOUT_POINTS, or the test hook's */
    size_t gen_batch;    /* keys a key gen stores a batch, at most: 0 for
                          * GEN_BATCH (sim_ops.c); tests lower it */
    bool loading;        /* building the stored layout, not a change */
    uint64_t builds_own; /* layouts built (see sim_history.builds) */
    uint64_t *builds;    /* where they are counted: &builds_own, or the
                          * counter of the sim a snapshot was made for */
    bool light;          /* sim_refresh_light: stop where a layout would be built */
    bool record;         /* false for replay snapshots: no log, no moves */
    sim_progress_fn progress;
    void *progress_ud;
    const char *progress_label; /* replaces `what` when set (replays) */
    sim_preview *preview;       /* set: operations are dry runs (sim_preview) */
    const char *p_what;         /* the last report, repeated by poll() */
    uint64_t p_done, p_total;
    struct sim_wl *wl; /* the workload participant's own (sim_workload.c);
                        * the frame never touches it */
};

/* Keys per node, by node id (STORE_NO_NODE = none) with its name: where
 * moved keys came from, and where they went. */
typedef struct tally_list {
    int64_t *ids;
    char **names; /* malloc'd, NULL = none */
    int64_t *count;
    size_t n;
} tally_list;

/* Moves per (from, to) pair of node ids (STORE_NO_NODE = nobody), with
 * their names, the moved keys' share of requests and their bytes
 * (docs/api.md v4 "pairs"): exact, over every move of the operation. */
typedef struct pair_ent {
    int64_t from, to;
    char *from_name, *to_name; /* malloc'd, NULL = nobody */
    int64_t keys, bytes;
    double requests;
} pair_ent;
typedef struct pair_list {
    pair_ent *v;
    size_t n, cap;
    bool loaded; /* requests and bytes filled in (a participant's prepare) */
} pair_list;

/* A running operation: the copy of the state it changes, its log id, the
 * move tallies. */
typedef struct opctx {
    sim *s;
    state next;
    int64_t op; /* log id, 0 when not recording */
    int64_t moved;
    int64_t replica_moves; /* copies added to preference lists beyond owners */
    int64_t skipped;       /* keys an insert found already there; -1 others */
    tally_list from, to;
    pair_list pairs;
    bool keys_only;   /* nodes and configuration unchanged */
    const char *what; /* the type, for progress */
    bool steps;       /* the operation reports its own steps (revert) */
    /* The operation's loads, filled by a participant's prepare (the
     * workload's) before the log entry is finished: the moved keys'
     * requests and bytes; what nobody serves after it, when known. */
    double requests_moved;
    int64_t bytes_moved;
    bool unavail_known;
    double unavail_requests;
    int64_t unavail_bytes;
} opctx;

/* The meta entries of each operation's pairs and unavailable_after (docs/api.md
 * v4): SIM_V4_PREFIX + its id, {"pairs": […], "unavailable_after": {…}};
 * none for an operation that moved nothing and left every key served. */
#define SIM_V4_PREFIX "op_v4_"
/* The first operation logged with them (meta; absent: none yet). */
#define SIM_V4_SINCE "op_v4_since"

typedef struct klent {
    size_t off, len;
    uint32_t pos;
    int64_t node;
} klent;

typedef struct keylist {
    char *buf;
    size_t used, cap;
    klent *v;
    size_t n, vcap;
} keylist;

#define PROGRESS_EVERY 16384

/* The stored form of a coordinate: the order-preserving uint64 with its top
 * bit flipped, so that SQLite's signed order is the coordinate's order. */
static inline int64_t sim__coord_stored(uint64_t c) { return (int64_t)(c ^ 0x8000000000000000ull); }

/* Walk the keys of two stores in step, by key bytes: keys only in `have`
 * go to gone(), keys only in `want` to fresh(), keys in both to both().
 * Memory stays constant whatever the number of keys. */
typedef struct diff {
    int (*gone)(void *ud, const store_key *have);
    int (*fresh)(void *ud, const store_key *want);
    int (*both)(void *ud, const store_key *have, const store_key *want);
    void *ud;
} diff;

/* ---- the lowest floors ---- */

/* sim_params.c */
/* A JSON array of decimal strings into *out (malloc'd, room for one more;
 * NULL on failure) and *n: RINGSIM_EDB when it is not one, RINGSIM_ENOMEM. */
int sim__tokens_from_json(const json_t *arr, int64_t **out, size_t *n);
/* A stored configuration (meta "config", an operation's config) into *cfg:
 * "" or NULL is the default; RINGSIM_EDB when it is not one. */
int sim__config_from_json(const char *text, place_config *cfg);

/* sim_states.c: the states' own calls, for the operations that set them
 * (the state's code reaches them through sim_node_attr_states) */
/* Copy src's states (down, backup, replicas) into dst, whose replicas must
 * be none; 0 or RINGSIM_ENOMEM (dst then has none). */
int sim__node_states_copy(node *dst, const node *src);
/* Set x's replicas to a copy of v[0..n); 0 or RINGSIM_ENOMEM. */
int sim__node_set_replicas(node *x, const char *const *v, size_t n);
/* The states in JSON ({"state": "down", "backup": true, "replicas": […]}
 * with only what is set) into o; from o into x (RINGSIM_EDB when damaged,
 * RINGSIM_ENOMEM). */
int sim__states_to_json(const node *x, json_t *o);
int sim__states_from_json(const json_t *o, node *x);
/* A reweight 0..1 as the 16.16 fixed point Ceph keeps (OSDMonitor's
 * `osd reweight`: truncated). */
uint32_t sim__reweight16(double r);
/* Whether a and b have the same states. */
bool sim__states_equal(const node *a, const node *b);

/* sim_state.c: the state in memory, nodes, tallies, progress, key lists */

/* A node's attributes beyond its own fields, as one codec each, so that
 * the state's code copies, frees, compares, stores and places a node
 * without knowing them.  Listed once, in sim_state.c; each kind's file
 * ends with its own (sim_states.c: sim_node_attr_states). */
typedef struct sim_node_attr {
    const char *name;
    /* Whether x has any (a node without stores none). */
    bool (*any)(const node *x);
    /* dst's from src's, dst having none: 0, or RINGSIM_ENOMEM. */
    int (*copy)(node *dst, const node *src);
    /* Free x's, leaving none; after a failed copy too. */
    void (*clear)(node *x);
    bool (*equal)(const node *a, const node *b);
    /* Into the attributes' JSON object o (RINGSIM_ENOMEM); from o into x
     * (RINGSIM_EDB when damaged, RINGSIM_ENOMEM). */
    int (*to_json)(const node *x, json_t *o);
    int (*from_json)(const json_t *o, node *x);
    /* What the placement sees of them (pn borrows x's). */
    void (*place)(const node *x, place_node *pn);
} sim_node_attr;
extern const sim_node_attr sim_node_attr_states;
extern const sim_node_attr sim_node_attr_location;

/* sim_location.c: a node's location, for the operations that set it.
 * x's location becomes a copy of v[0..n) (its old one freed); 0 or
 * RINGSIM_ENOMEM (x then has none). */
int sim__node_set_location(node *x, const place_loc *v, size_t n);
/* Whether a and b are the same location. */
bool sim__loc_equal(const place_loc *a, size_t an, const place_loc *b, size_t bn);

/* Every attribute codec in turn: any set; all equal; into o (0 or the
 * first failure); from o. */
bool sim__node_attrs_any(const node *x);
bool sim__node_attrs_equal(const node *a, const node *b);
int sim__node_attrs_to_json(const node *x, json_t *o);
int sim__node_attrs_from_json(const json_t *o, node *x);
void sim__node_free(node *x);
/* A copy of src's name, weight, tokens, server id and attributes into
 * *dst (id and keys 0): 0, or RINGSIM_ENOMEM with *dst left empty. */
int sim__node_copy(node *dst, const node *src);
/* Stored tokens (a JSON array of decimal strings) into x: RINGSIM_EDB
 * when damaged. */
int sim__tokens_parse(const char *text, node *x, rs_error *err);
char *sim__tokens_text(const int64_t *t, size_t n);
/* A node's attributes as stored (a JSON object as text, malloc'd: its
 * HAProxy id and every codec's members), or NULL when it has none;
 * *failed is set when out of memory. */
char *sim__attrs_text(const node *x, bool *failed);
/* Read stored attributes into x (0, or RINGSIM_EDB when damaged). */
int sim__attrs_parse(const char *text, node *x, rs_error *err);
/* Deep copy without the placement: 0 or RINGSIM_ENOMEM (dst empty). */
int sim__state_copy(state *dst, const state *src);
/* Free x's nodes and placement; x is left empty. */
void sim__state_clear(state *x);
/* memcmp order of byte strings, the shorter first on a common prefix. */
int sim__cmp_bytes(const char *a, size_t al, const char *b, size_t bl);
int sim__build_placement(sim *s, state *x, const placement *prev, const char *layout, rs_error *err);
void sim__count_owner(state *x, int64_t id, int64_t delta);
long sim__find_node(const state *x, const char *name, size_t len);
long sim__find_node_id(const state *x, int64_t id);
/* Node ids to their places in a state, for loops over many keys (a state's
 * nodes are in join order, so sim__find_node_id is a scan). */
typedef struct sim__id_place {
    int64_t id;
    long at;
} sim__id_place;
typedef struct sim__ids {
    sim__id_place *v;
    size_t n;
} sim__ids;
/* 0, or RINGSIM_ENOMEM with *m empty. */
int sim__ids_build(sim__ids *m, const state *x);
/* The place of the node with this id, or -1 (none, or STORE_NO_NODE). */
long sim__ids_find(const sim__ids *m, int64_t id);
void sim__ids_free(sim__ids *m);
int sim__tally(opctx *c, int64_t from_id, const char *from_name, int64_t to_id, const char *to_name,
               int64_t count);
/* count keys moved from node from_id to to_id in the pairs alone (a caller
 * that tallies the sides with sim__tally_side). */
int sim__tally_pair(opctx *c, int64_t from_id, const char *from_name, int64_t to_id,
                    const char *to_name, int64_t count);
/* The pair (from_id, to_id) of the running operation, NULL when it moved
 * nothing between them. */
pair_ent *sim__pair_find(opctx *c, int64_t from_id, int64_t to_id);
/* One side of sim__tally (the keys that left from_id, to_id's arrivals),
 * for a caller that counts many keys first: c->moved is not touched. */
int sim__tally_side(opctx *c, bool to, int64_t id, const char *name, int64_t count);
/* Free c's tallies (from, to, pairs). */
void sim__tallies_free(opctx *c);
int sim__poll(sim *s, rs_error *err);
int sim__progress(sim *s, const char *what, uint64_t done, uint64_t total, rs_error *err);
int sim__kl_add(keylist *l, const char *k, size_t len, uint32_t pos, int64_t node);
int sim__kl_collect(void *ud, const store_key *k);
int sim__kl_collect_str(void *ud, const char *s, size_t len);
void sim__kl_free(keylist *l);

/* ---- the participants of the operation frame ----
 *
 * A part of the engine that keeps something of its own beside the state
 * and must follow every operation registers its phases here, and the
 * frame (sim.c) calls every participant that has a phase, in the order of
 * sim__participants, never naming one (SQLite's sqlite3_module: xBegin,
 * xSync, xCommit, xRollback).  A NULL phase is skipped.  The frame's
 * order, for one operation:
 *
 *   sim__op_begin     write transaction, catch up (a refresh: load), log
 *                     entry begun
 *   (the operation)   tells participants what it does through their own
 *                     calls (sim__wl_note, ...)
 *   sim__op_commit    counters and configuration written; prepare; the
 *                     log entry finished and its v4 record; record (logged
 *                     operations); the layout; COMMIT; the new state in;
 *                     commit
 *   sim__op_abort     abort, then ROLLBACK (a failure anywhere, a dry
 *                     run's end) */
typedef struct sim_participant {
    const char *name;
    /* The state was loaded from the store (open, a refresh that saw
     * another connection's commit). */
    int (*load)(sim *s, rs_error *err);
    /* sim_refresh_light, before a load: *heavy when the load would leave
     * it work to do at the next read (set only to true). */
    int (*heavy)(sim *s, bool *heavy, rs_error *err);
    /* Before the log entry is finished: write what the operation leaves,
     * fill its loads (c->requests_moved and the rest). */
    int (*prepare)(opctx *c, rs_error *err);
    /* After the log entry is finished (logged operations, c->op set),
     * before COMMIT: what it keeps beside the log. */
    int (*record)(opctx *c, rs_error *err);
    /* Committed, the new state in s->cur: cannot fail. */
    void (*commit)(opctx *c);
    /* Rolled back (or a dry run's end), before the store's ROLLBACK: drop
     * what the operation kept aside.  Cannot fail. */
    void (*abort)(opctx *c);
    /* sim_close: free what it keeps. */
    void (*close)(sim *s);
} sim_participant;

/* The participants, in calling order, NULL-terminated
 * (sim_participants.c). */
extern const sim_participant *const sim__participants[];
/* Each defined at the end of its own file; named only by the list. */
extern const sim_participant sim_participant_workload; /* sim_workload_follow.c */
extern const sim_participant sim_participant_undo;     /* sim_undo.c */

/* sim_undo.c: the state before each topology change */

/* Backward steps from a view undo at most this many operations.  The
 * state before each topology change is kept this far back (in the live
 * database and in replayed views), within HISTORY_KEEP_BYTES of them (the
 * oldest go first): at 800 nodes a state is ~25 KB, so 16 MiB keep the
 * last ~650 topology changes, at 100 nodes all 4096. */
#define HISTORY_MAX_UNDO 4096
#define HISTORY_KEEP_BYTES (16 << 20)

/* The meta entries of the undo record: SIM_BEFORE_PREFIX + the operation's
 * id.  Its text: {"nodes": [[name, weight, [tokens], id?, attributes?]…],
 * "config": stored form, "layout": text or null}; id is the node's
 * HAProxy id, absent when it has none (0 when attributes follow). */
#define SIM_BEFORE_PREFIX "hist_before_"
void sim__before_name(char *buf, size_t size, int64_t op);
/* The undo record of a state (malloc'd), NULL when out of memory. */
char *sim__nodeset_text(const state *st);
/* The nodes, configuration and layout state after one operation: the
 * undo record read back, a state's taken, or one captured by a keyless
 * replay (sim_history.c). */
typedef struct sim__nodeset {
    int64_t after; /* the operation */
    bool got;
    node *nodes;
    size_t n;
    place_config cfg;
    char *layout; /* place_state_text, may be NULL */
} sim__nodeset;
void sim__nodeset_clear(sim__nodeset *x);
/* A copy of st's nodes, configuration and layout state: 0 or
 * RINGSIM_ENOMEM (clear x either way). */
int sim__nodeset_take(sim__nodeset *x, const state *st);
/* The undo record kept before operation `before` in v's store, read into
 * x: 0, 1 when there is none, or a negative code (RINGSIM_EDB when
 * damaged). */
int sim__nodeset_load(sim *v, int64_t before, sim__nodeset *x, rs_error *err);

/* sim_workload.c, sim_workload_stats.c, sim_workload_follow.c: the
 * workload (their own header: sim_workload_int.h) */
struct workload;
const struct workload *sim__wl_get(sim *s);
/* The workload of the state right after operation `at` (0: the default),
 * read from s's log, into *out (wl_free it; initialised on failure too). */
int sim__wl_at(sim *s, int64_t at, struct workload *out, rs_error *err);
/* Set the workload origin's log recorded after operation `at` (0: the
 * default): time travel's views, whose history is origin's log (origin
 * must outlive s). */
int sim__wl_from_log(sim *s, sim *origin, int64_t at, rs_error *err);
/* The operation c will leave workload w (a revert's, a workload
 * operation's). */
int sim__wl_set_pending(opctx *c, const struct workload *w, rs_error *err);
/* An insert or delete of the running operation, for the cache to follow
 * (k as stored: its node id, position and coordinate).  Cannot fail (the
 * cache is rebuilt instead). */
void sim__wl_note(opctx *c, const store_key *k, bool insert);
/* The running operation moved `count` keys of column col (PLACE_COL_*)
 * with lo <= value <= hi (stored values, as store_keys_move takes them)
 * from node id `from` to `to`: the cache finds their shares in memory. */
void sim__wl_range(opctx *c, int col, int64_t lo, int64_t hi, int64_t from, int64_t to,
                   int64_t count);
/* The running operation re-places keys one by one (their coordinates may
 * change): its moves are read back from the log. */
void sim__wl_rekeyed(opctx *c);

/* ---- the frame and above ---- */

/* sim.c: open, refresh, the operation frame */
/* The store behind a sim: the engine's, and its tests' (faces read through
 * sim.h). */
store *sim__store(sim *s);
/* Load the whole state again from the store (after its file was replaced). */
int sim__reload(sim *s, rs_error *err);
/* Begin an operation on c: the write transaction, the state caught up and
 * copied into c->next, the log entry begun when s records.  Nothing is
 * begun on failure. */
int sim__op_begin(sim *s, opctx *c, const char *type, const char *subject, json_t *params,
                  rs_error *err);
/* Finish it: the frame's phases (sim_participant above), COMMIT, the new
 * state in; a dry run (s->preview) gathers its answer and rolls back.
 * On failure it is rolled back and s is as it was. */
int sim__op_commit(opctx *c, int64_t *op_out, rs_error *err);
/* Roll it back: participants' abort, ROLLBACK, c freed. */
void sim__op_abort(opctx *c);
/* The end of an operation begun on c: committed when rc is 0 (its answer),
 * else rolled back (rc). */
int sim__op_end(opctx *c, int rc, int64_t *op_out, rs_error *err);

/* sim_ops.c */
/* The start of an operation on one node (remove, weight, state): the
 * subject (malloc'd into *subject), the transaction begun, the node's index
 * in c->next; nothing begun on failure (RINGSIM_ENOTFOUND: no such node). */
int sim__node_op_begin(sim *s, opctx *c, const char *what, const char *name, size_t len,
                       json_t *params, char **subject, long *index, rs_error *err);
int sim__insert_one(opctx *c, const char *k, size_t len, int64_t *inserted, rs_error *err);
sim_str *sim__kl_strs(const keylist *l);
int sim__retopologize_to(opctx *c, const state *old, const char *layout, rs_error *err);
/* Apply w as one workload operation; check: listed keys must be stored. */
int sim__wl_apply(sim *s, const struct workload *w, bool check, int64_t *op, rs_error *err);

/* sim_import.c */
/* Make c->next have the nodes tn (in that order), configuration cfg and
 * layout state layout (may be NULL: evolved from the state before), moving
 * exactly the keys whose owner changes: revert, time travel's undo, and
 * import. */
int sim__adopt_nodes(opctx *c, const node *tn, size_t tn_n, const place_config *cfg,
                     const char *layout, rs_error *err);
/* Apply a logged import again from its params (the parsed nodes, layout)
 * and its stored configuration. */
int sim__import_replay(sim *s, const sim_op *o, const json_t *params, int64_t *op, rs_error *err);

/* sim_history.c */
int sim__diff_run(sim *s, store *have, store *want, const diff *d, rs_error *err);
/* An operation id that exists (0: the empty start); *last is the newest. */
int sim__check_at(sim *s, int64_t at, int64_t *last, rs_error *err);
/* The state after operation `at`, replayed from s's log into a new
 * private sim (*snapshot, sim_close it); keyless: the operations on nodes
 * and configuration only; want (sorted by .after, may be NULL): states to
 * capture on the way. */
int sim__replay_to(sim *s, int64_t at, bool keyless, sim__nodeset *want, size_t nwant,
                   sim **snapshot, rs_error *err);

/* sim_diff.c */
/* The keys that exist now and not after operation `to` (gone) and after
 * `to` and not now (fresh), from the log's records of the operations
 * between the two states (through reverts: the state after a revert to j
 * is the state after j); s must hold the last operation.  Keys the log
 * leaves open are looked up in the live state; RINGSIM_EPARAM when the
 * log cannot say (an operation of a kind it does not compose, a key open
 * after `to`). */
int sim__compose_keys(sim *s, int64_t to, keylist *gone, keylist *fresh, rs_error *err);

#endif
