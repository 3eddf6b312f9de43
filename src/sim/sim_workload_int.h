/*
 * sim_workload_int.h - what the workload's three files share: the cache
 * kept beside the state (struct sim_wl) and the helpers more than one of
 * them calls.  Only those files include it.
 *
 *   sim_workload.c         the cache: what it keeps, how it is built (and
 *                          its insertion order), a stored key's share
 *   sim_workload_stats.c   the answers read from it: each node's load,
 *                          the requests' stats, what nobody serves, each
 *                          key's share and size, the workload in effect
 *                          after an operation
 *   sim_workload_follow.c  the participant in the operation frame
 *                          (sim_participant_workload): the cache follows
 *                          each operation, and each operation's loads
 *
 * The workload operation itself (sim__wl_apply, sim_set_workload) is an
 * operation like the others, in sim_ops.c.
 */
#ifndef RINGSIM_SIM_WORKLOAD_INT_H
#define RINGSIM_SIM_WORKLOAD_INT_H

#ifndef RINGSIM_SIM_INTERNAL
#error "sim_workload_int.h is the engine's own (src/sim/): faces use sim.h"
#endif

#include "sim_int.h"
#include "workload.h"

/* A node's total: requests (compensated) and bytes. */
typedef struct tot {
    int64_t id;
    wl_sum req;
    int64_t bytes;
    int64_t keys;
} tot;

/* A key whose rank value another key has too (sha64 agreeing: never seen,
 * but the order is defined for it). */
struct tie {
    uint64_t ord;
    char *key;
    size_t len;
};

/* The share of a listed or unlisted key under kind keys, given how many
 * stored keys are listed (m) and their shares' sum (S): the others share
 * 1 - S equally; with no other key the listed shares are scaled to sum to
 * 1 (all equal when they are all 0). */
typedef struct keys_norm {
    size_t listed;
    double sum, rest, scale;
} keys_norm;

typedef struct totals {
    tot *v; /* sorted by id */
    size_t n, cap;
} totals;

/* One of the hottest keys (stats' requests.hottest_keys), hottest first. */
#define WL_TOP SIM_HOTTEST_MAX
typedef struct topkey {
    char *key; /* malloc'd */
    size_t len;
    uint64_t ord; /* its rank value (ranked kinds) */
    double share;
} topkey;

/* The workload participant's own, hung on the sim (s->wl, made on first
 * use by sim__wl_of): the workload in effect, its cache, and what the
 * running operation keeps aside for it. */
struct sim_wl {
    workload w;
    /* the cache */
    bool valid;
    int64_t at_op, dv; /* the state it describes */
    uint64_t *ord;     /* sorted rank values, ranked workloads */
    size_t n;          /* stored keys */
    bool ties;         /* two keys with the same rank value */
    struct tie *tie;   /* those keys, by (rank value, key bytes) */
    size_t ntie;
    wl_norm norm;
    keys_norm kn; /* kind keys: the listed keys stored, counted once a build */
    totals tot;
    double max_share;
    struct iset *ins;  /* insert order: every stored key's insertion */
    sim *origin;       /* whose log holds this state's history (views) */
    int64_t origin_at; /* and after which of its operations; -1: now */
    char *hot;         /* the key with the largest share, malloc'd */
    size_t hot_len;
    topkey top[WL_TOP]; /* the hottest keys, hot first */
    size_t ntop;
    /* the running operation */
    bool pend_set; /* the operation sets pend as the workload */
    workload pend;
    bool delta_ok;
    totals delta;
    bool post_built; /* the cache was built for the state it leaves */
    /* Kept across key changes (ranked by hash): each rank's node, the
     * running operation's inserted and deleted keys, its moves by rank. */
    int64_t *nodeat; /* node id of the key of rank i + 1 */
    int note_state;  /* 0 undecided, 1 noting, 2 not */
    keylist nadd, ndel;
    size_t *mv_idx; /* moved keys' ranks (0-based) and new nodes */
    int64_t *mv_node;
    size_t nmv, mvcap;
    /* Zipf's weights and running sums: re-summing is additions (kept
     * across rebuilds while s stays). */
    wl_table tab;
    /* The column (PLACE_COL_*) the placement moves keys by, and each
     * rank's value of it (pos or stored coordinate): a range move finds
     * its keys here instead of in the log (NULL: none kept). */
    int ccol;
    int64_t *colat;
    size_t rcap;       /* ord, nodeat and colat have room for rcap ranks */
    int64_t *nadd_col; /* the noted inserts' values of it */
    size_t nadd_colcap;
    bool nadd_col_bad;
    /* The running operation's range moves. */
    struct rmove *rmv;
    size_t nrmv, rmvcap;
    int64_t rmv_count;
    bool rmv_bad; /* a move the ranges do not describe, or memory */
    bool rekeyed; /* keys re-placed one by one: coordinates may change */
};

/* A range move of the running operation (sim__wl_range). */
struct rmove {
    int64_t lo, hi, from, to, count, seen;
};

/* A stored key as a build sees it (and sim_workload_each). */
typedef struct ent {
    uint64_t ord;
    uint32_t kidx; /* the key's index in key-bytes order: ties */
    int64_t node;
    int64_t bytes;
    int64_t col; /* the key's value of the placement's column */
} ent;

/* The bytes of the keys nobody serves (sim__wl_unav_bytes, over the
 * store's page of them). */
typedef struct unav_ctx {
    const workload *w;
    hasher *h;
    int64_t bytes;
} unav_ctx;

/* ---- sim_workload.c ---- */

void sim__wl_top_free(topkey *v, size_t *n);
/* Into v (n of WL_TOP): by_ord, before the first entry whose ord is
 * larger (the WL_TOP smallest rank values, ties to the one given first);
 * otherwise at the end.  0 or RINGSIM_ENOMEM. */
int sim__wl_top_put(topkey *v, size_t *n, const char *key, size_t len, uint64_t ord, double share,
                    bool by_ord);
void sim__wl_totals_free(totals *t);
/* The entry of id, made (zero) when missing: NULL when out of memory. */
tot *sim__wl_totals_slot(totals *t, int64_t id);
/* The entry of id, or NULL. */
const tot *sim__wl_totals_find(const totals *t, int64_t id);
/* s's own (made on first use), NULL when out of memory. */
struct sim_wl *sim__wl_of(sim *s);
/* Drop the cache (the workload stays); the next read builds it. */
void sim__wl_cache_drop(struct sim_wl *x);
/* Build the cache for the state the store holds: at is the operation of
 * the log the state stands after (insert order), -1 the sim's own last;
 * pl the state's placement (its column), NULL when unknown. */
int sim__wl_cache_build(sim *s, int64_t at, const placement *pl, rs_error *err);
/* The cache valid for the current state (built when it is not), or
 * nothing to build (the default workload); RINGSIM_EPARAM when the
 * stored keys' sizes could pass the bound of exact byte totals. */
int sim__wl_ensure(sim *s, rs_error *err);
/* Uniform shares and fixed sizes: every figure from the key counters. */
bool sim__wl_simple(const workload *w);
/* 0, or RINGSIM_EPARAM when `keys` keys under w could add up to more
 * bytes than a total holds exactly. */
int sim__wl_sizes_fit(const workload *w, int64_t keys, rs_error *err);
/* A stored key's share, the cache being valid (not the simple case), and
 * its rank (0-based; SIZE_MAX for unranked kinds). */
int sim__wl_share_of_at(sim *s, const char *key, size_t len, double *out, size_t *rank,
                        rs_error *err);
/* A workload's stored text (NULL or "": the default) into *out. */
int sim__wl_parse(const char *text, workload *out, rs_error *err);
/* The workload the database stores (the default when none). */
int sim__wl_stored(sim *s, workload *w, rs_error *err);
/* A key's rank value under a ranked w: sha64(seed ":" key), or its
 * insertion. */
uint64_t sim__wl_rank_value(sim *s, const workload *w, const char *key, size_t len);
/* ent by rank value, then key index. */
int sim__wl_ent_cmp(const void *a, const void *b);
/* Kind keys: the shares' normalisation for n stored keys of which
 * `listed` listed with shares summing to sum; a key's share under it (e
 * its entry, NULL: unlisted); which listed keys are stored (their count,
 * shares' sum, the hottest and the WL_TOP largest). */
void sim__wl_keys_norm(const workload *w, size_t n, size_t listed, double sum, keys_norm *o);
double sim__wl_keys_share(const keys_norm *o, const wl_item *e);
int sim__wl_keys_stored(sim *s, const workload *w, size_t *listed, double *sum, const wl_item **hot,
                        const wl_item **lt, size_t *nlt, rs_error *err);

/* A store_keys_page callback: adds the key's size to the unav_ctx ud. */
int sim__wl_unav_bytes(void *ud, const store_key *k);

#endif
