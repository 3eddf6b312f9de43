/*
 * sim_int.h - what the files of the engine share (sim.c, sim_ops.c,
 * sim_history.c, sim_read.c, sim_check.c): the in-memory state, the frame of
 * a running operation and the helpers more than one of them calls.  Only
 * the engine includes it; everyone else sees sim.h.
 *
 *   sim.c          state, open/refresh, the operation frame (begin, tally,
 *                  commit or dry run), progress and cancellation, key lists
 *   sim_ops.c      the operations: topology changes and their diffs (by
 *                  segment ranges or key by key), replica moves, keys
 *   sim_history.c  time travel (replaying the log) and revert
 *   sim_read.c     answers about the current state
 *   sim_check.c    verifying a database
 */
#ifndef RINGSIM_SIM_INT_H
#define RINGSIM_SIM_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "hash.h"
#include "names.h"
#include "ring.h"
#include "sim.h"

typedef struct node {
    int64_t id;
    char *name; /* owned, NUL-terminated */
    size_t len;
    double weight;
    int64_t keys;
    int64_t *tokens; /* explicit tokens (owned), or NULL */
    size_t ntokens;
    int64_t srv_id;  /* HAProxy's server id as given (attrs "id"), 0: none */
    bool down;       /* attrs "state":"down" */
    bool backup;     /* attrs "backup":true */
    char **replicas; /* attrs "replicas" (owned), Redis replicas "ip:port" */
    size_t nreplicas;
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
};

/* Keys per node, by node id (STORE_NO_NODE = none) with its name: where
 * moved keys came from, and where they went. */
typedef struct tally_list {
    int64_t *ids;
    char **names; /* malloc'd, NULL = none */
    int64_t *count;
    size_t n;
} tally_list;

/* A running operation: the copy of the state it changes, its log id, the
 * move tallies. */
typedef struct opctx {
    sim *s;
    state next;
    int64_t op;  /* log id, 0 when not recording */
    int64_t seq; /* moves recorded so far */
    int64_t moved;
    int64_t replica_moves; /* copies added to preference lists beyond owners */
    int64_t skipped;       /* keys an insert found already there; -1 others */
    tally_list from, to;
    bool keys_only;   /* nodes and configuration unchanged */
    const char *what; /* the type, for progress */
    bool steps;       /* the operation reports its own steps (revert) */
} opctx;

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

/* sim.c */
/* Load the whole state again from the store (after its file was replaced). */
int sim__reload(sim *s, rs_error *err);
int sim__build_placement(sim *s, state *x, const placement *prev, const char *layout, rs_error *err);
int sim__config_from_json(const char *text, place_config *cfg);
void sim__count_owner(state *x, int64_t id, int64_t delta);
long sim__find_node(const state *x, const char *name, size_t len);
long sim__find_node_id(const state *x, int64_t id);
int sim__kl_add(keylist *l, const char *k, size_t len, uint32_t pos, int64_t node);
int sim__kl_collect(void *ud, const store_key *k);
int sim__kl_collect_str(void *ud, const char *s, size_t len);
void sim__kl_free(keylist *l);
void sim__node_free(node *x);
/* Set dst's states (down, backup) and a copy of the replicas;
 * RINGSIM_ENOMEM leaves what was copied for sim__node_free. */
int sim__node_states_copy(node *dst, const char *const *replicas, size_t nreplicas, bool down,
                          bool backup);
void sim__op_abort(opctx *c);
int sim__op_begin(sim *s, opctx *c, const char *type, const char *subject, json_t *params,
                  rs_error *err);
int sim__op_commit(opctx *c, int64_t *op_out, rs_error *err);
int sim__poll(sim *s, rs_error *err);
int sim__progress(sim *s, const char *what, uint64_t done, uint64_t total, rs_error *err);
int sim__state_copy(state *dst, const state *src);
int sim__tally(opctx *c, int64_t from_id, const char *from_name, int64_t to_id, const char *to_name,
               int64_t count);
char *sim__tokens_text(const int64_t *t, size_t n);
/* A node's attributes as stored (a JSON object as text, malloc'd), or NULL
 * when it has none; *failed is set when out of memory. */
char *sim__attrs_text(const node *x, bool *failed);
/* Read stored attributes into x (0, or RINGSIM_EDB when damaged). */
int sim__attrs_parse(const char *text, node *x, rs_error *err);

/* sim_ops.c */
int sim__cmp_bytes(const char *a, size_t al, const char *b, size_t bl);
int sim__insert_one(opctx *c, const char *k, size_t len, int64_t *inserted, rs_error *err);
sim_str *sim__kl_strs(const keylist *l);
int sim__retopologize_to(opctx *c, const state *old, const char *layout, rs_error *err);

/* sim_import.c */
/* Apply a logged import again from its params (the parsed nodes, layout)
 * and its stored configuration. */
int sim__import_replay(sim *s, const json_t *params, const char *config, int64_t *op, rs_error *err);

/* sim_history.c */
/* Make c->next have the nodes tn (in that order), configuration cfg and
 * layout state layout (may be NULL: evolved from the state before), moving
 * exactly the keys whose owner changes: revert, time travel's undo, and
 * import. */
int sim__adopt_nodes(opctx *c, const node *tn, size_t tn_n, const place_config *cfg,
                     const char *layout, rs_error *err);
/* Keep the state before a logged change of topology (c->s->cur) where
 * stepping back over it finds it without a replay; the oldest go. */
int sim__keep_before(opctx *c, rs_error *err);
int sim__diff_run(sim *s, store *have, store *want, const diff *d, rs_error *err);

#endif
