/*
 * sim_workload.c - the engine's workload: the share of requests and the
 * value size of every stored key, per node and per operation, exactly
 * (docs/api.md "Version 3: traffic").
 *
 * The workload itself is a value (workload.h) kept in memory and in the
 * store's meta "workload"; every operation records the workload it leaves
 * (ops.workload, schema 5), so that time travel and revert find the one in
 * effect after any operation without replaying anything.
 *
 * With the default -- uniform shares, every key the same size -- every
 * figure comes from the key counters: a node's requests are keys / n, an
 * operation's requests_moved keys_moved / n.  Nothing else is kept and no
 * operation pays anything.
 *
 * Any other workload keeps a cache beside the state:
 *   - for a ranked one (zipf, hotspot) the sorted rank values of every
 *     stored key (sha64(seed ":" key), or the insertion order), 8 bytes a
 *     key, and the normalisation H(n, s);
 *   - each node's requests and bytes (compensated sums), the largest share
 *     and the key that has it, and the ten hottest keys (stats'
 *     hottest_keys): kept by the build's own scan, and by an insert or
 *     delete in O(10 + inserted) while the list's next key is known.
 * Building it reads every key once: one SHA-256 per key, a sort; about a
 * second at a million keys.  It is built when first read, and kept by the
 * operations that leave the key set alone (node add and remove, weights,
 * configure).  Under a hashed order with fixed sizes the cache also keeps
 * each rank's node and its value of the placement's column (pos or
 * coordinate), 16 bytes a key more: a change that moves keys by ranges of
 * that column (sim__wl_range, from move_range) finds the moved keys' ranks
 * in one pass over that array -- no log read, no hash, O(n) comparisons
 * and O(moved) additions.  Other changes read back the keys they moved
 * (the log's moves), find each one's share by a binary search of its rank
 * value, and move the node totals by that: O(moved log n).  An insert or
 * delete under a hashed order merges the keys' ranks in place and sums
 * every node's share again from zipf's weight table (wl_table: additions,
 * no pow).  Another operation that changes the key set (reset, revert,
 * import), a workload change, or a change from another process drops the
 * cache; the next read builds it again.
 *
 * Requests are counted by a key's node (docs/api.md v3 says: by served_by,
 * the node that serves it while its owner is down).  Where a key's node is
 * taken: load_node() (every read of the cache); the default workload's
 * shortcut in sim_node_load() (the owners' key counters); the moves read
 * back in mv_fn() (owner changes); the notes of sim__wl_note() (the owner
 * an insert or delete gives).  Serving by another node changes these four.
 *
 * The workload takes part in the operation frame as a participant
 * (sim_participant_workload, at the end): load, heavy, prepare (the
 * operation's loads), commit (the cache follows), abort, close.  The
 * workload operation itself is in sim_ops.c.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "workload.h"
#include "vec.h"

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

static void top_free(topkey *v, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free(v[i].key);
    *n = 0;
}

/* Into v (n of WL_TOP): by_ord, before the first entry whose ord is
 * larger (the WL_TOP smallest rank values, ties to the one given first);
 * otherwise at the end. */
static int top_put(topkey *v, size_t *n, const char *key, size_t len, uint64_t ord, double share,
                   bool by_ord)
{
    size_t p = *n;
    if (by_ord)
        while (p > 0 && v[p - 1].ord > ord)
            p--;
    if (p >= WL_TOP)
        return 0;
    char *k = strndup(key, len);
    if (!k)
        return RINGSIM_ENOMEM;
    if (*n == WL_TOP)
        free(v[--*n].key);
    memmove(v + p + 1, v + p, (*n - p) * sizeof *v);
    v[p] = (topkey){k, len, ord, share};
    ++*n;
    return 0;
}

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

static void totals_free(totals *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* The index of the first entry with an id >= id. */
static size_t totals_lower(const totals *t, int64_t id)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static tot *totals_slot(totals *t, int64_t id)
{
    size_t lo = totals_lower(t, id);
    if (lo < t->n && t->v[lo].id == id)
        return &t->v[lo];
    if (vec_reserve(&t->v, &t->cap, t->n + 1, sizeof *t->v, 16))
        return NULL;
    memmove(&t->v[lo + 1], &t->v[lo], (t->n - lo) * sizeof *t->v);
    t->v[lo] = (tot){id, {0, 0}, 0, 0};
    t->n++;
    return &t->v[lo];
}

static const tot *totals_find(const totals *t, int64_t id)
{
    size_t lo = totals_lower(t, id);
    return lo < t->n && t->v[lo].id == id ? &t->v[lo] : NULL;
}

/* ---- insertion order, derived from the log ----
 * The order in which the stored keys were inserted is the log's: the
 * operations the state stands on (sim_chain_get: back over reverts and to
 * the last reset), their inserts and deletes played on a set of key names.
 * A key's insertion is (operation id, its index in that request); a key
 * brought back by a revert is inserted when it was then.  No column keeps
 * it, so nothing is paid until an insert-ordered workload is read; then
 * O(keys inserted since the last reset) once per change of the key set. */
typedef struct islot {
    size_t off;
    uint32_t len;
    uint32_t state; /* 0 empty, 1 full, 2 deleted */
    uint64_t order;
} islot;

struct iset {
    char *buf;
    size_t used, cap;
    islot *v;
    size_t size, full, dead;
};

static uint64_t fnv1a(const char *k, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)k[i]) * 0x100000001b3ull;
    return h;
}

static void iset_free(struct iset *t)
{
    if (!t)
        return;
    free(t->buf);
    free(t->v);
    free(t);
}

/* The slot of key, or of where it would go (the first free one). */
static size_t iset_slot(const struct iset *t, const char *k, size_t len, bool *found)
{
    size_t mask = t->size - 1, i = (size_t)fnv1a(k, len) & mask, free_at = SIZE_MAX;
    for (;; i = (i + 1) & mask) {
        const islot *e = &t->v[i];
        if (e->state == 0) {
            *found = false;
            return free_at != SIZE_MAX ? free_at : i;
        }
        if (e->state == 2) {
            if (free_at == SIZE_MAX)
                free_at = i;
        } else if (e->len == len && memcmp(t->buf + e->off, k, len) == 0) {
            *found = true;
            return i;
        }
    }
}

static int iset_grow(struct iset *t)
{
    size_t size = t->size ? t->size * 2 : 1024;
    if (t->full * 2 < t->size)
        size = t->size; /* only tombstones to clear */
    islot *old = t->v;
    size_t n = t->size;
    if (!(t->v = calloc(size, sizeof *t->v))) {
        t->v = old;
        return RINGSIM_ENOMEM;
    }
    t->size = size;
    t->dead = 0;
    for (size_t i = 0; i < n; i++)
        if (old[i].state == 1) {
            bool f;
            t->v[iset_slot(t, t->buf + old[i].off, old[i].len, &f)] = old[i];
        }
    free(old);
    return 0;
}

/* Insert key with order unless present (an insert skips existing keys). */
static int iset_put(struct iset *t, const char *k, size_t len, uint64_t order)
{
    if ((t->full + t->dead + 1) * 4 >= t->size * 3 && iset_grow(t))
        return RINGSIM_ENOMEM;
    bool found;
    size_t i = iset_slot(t, k, len, &found);
    if (found)
        return 0;
    if (t->used + len > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->used + len)
            cap *= 2;
        char *g = realloc(t->buf, cap);
        if (!g)
            return RINGSIM_ENOMEM;
        t->buf = g;
        t->cap = cap;
    }
    memcpy(t->buf + t->used, k, len);
    if (t->v[i].state == 2)
        t->dead--;
    t->v[i] = (islot){t->used, (uint32_t)len, 1, order};
    t->used += len;
    t->full++;
    return 0;
}

static void iset_del(struct iset *t, const char *k, size_t len)
{
    bool found;
    if (!t->size)
        return;
    size_t i = iset_slot(t, k, len, &found);
    if (found) {
        t->v[i].state = 2;
        t->full--;
        t->dead++;
    }
}

static bool iset_get(const struct iset *t, const char *k, size_t len, uint64_t *order)
{
    bool found = false;
    if (t && t->size) {
        size_t i = iset_slot(t, k, len, &found);
        if (found)
            *order = t->v[i].order;
    }
    return found;
}

#define INS_INDEX_BITS 24 /* a request inserts at most 10M < 2^24 keys */

typedef struct ins_ctx {
    sim *origin;
    struct iset *t;
    int64_t op;
    uint64_t idx;
    bool del;
    rs_error *err;
} ins_ctx;

static int ins_key(void *ud, const char *k, size_t len)
{
    ins_ctx *c = ud;
    uint64_t order = ((uint64_t)c->op << INS_INDEX_BITS) | (c->idx++ & ((1u << INS_INDEX_BITS) - 1));
    if (c->del) {
        iset_del(c->t, k, len);
        return 0;
    }
    return iset_put(c->t, k, len, order) ? rs_fail(c->err, RINGSIM_ENOMEM, "out of memory") : 0;
}

static int ins_op(void *ud, const store_op *o)
{
    ins_ctx *c = ud;
    sim_op_type type = sim_op_type_of(o->type);
    bool ins = type == SIM_OP_INSERT_KEYS, del = type == SIM_OP_DELETE_KEYS;
    if (!ins && !del)
        return 0;
    c->op = o->id;
    c->idx = 0;
    c->del = del;
    sim_op_params p;
    int rc = ins ? sim_op_params_read(o, &p, c->err) : 0;
    if (rc)
        return rc;
    if (ins && p.generated) { /* prefix + number, as sim_generate_keys makes them */
        char buf[NAME_BUF + 24];
        for (uint64_t i = 0; !rc && i < p.count; i++) {
            rc = ins_key(c, buf, sim_generated_key(p.prefix, p.start + i, buf));
            if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
                rc = sim__poll(c->origin, c->err);
        }
    } else {
        rc = store_op_keys_each(c->origin->st, o->id, ins_key, c, c->err);
    }
    if (ins)
        sim_op_params_clear(&p);
    return rc;
}

/* The insertion of every key stored after operation `at` of origin's log. */
static int ins_build(sim *origin, int64_t at, struct iset **out, rs_error *err)
{
    *out = NULL;
    struct iset *t = calloc(1, sizeof *t);
    if (!t)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    sim_chain ch;
    int rc = sim_chain_get(origin, at, &ch, err);
    ins_ctx c = {origin, t, 0, 0, false, err};
    for (size_t i = ch.n; !rc && i-- > 0;)
        rc = store_ops_each(origin->st, ch.seg[i].from, ch.seg[i].to - ch.seg[i].from, ins_op, &c,
                            err);
    sim_chain_free(&ch);
    if (rc) {
        iset_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static void cache_drop(struct sim_wl *x)
{
    free(x->nodeat);
    x->nodeat = NULL;
    free(x->colat);
    x->colat = NULL;
    iset_free(x->ins);
    x->ins = NULL;
    for (size_t i = 0; i < x->ntie; i++)
        free(x->tie[i].key);
    free(x->tie);
    x->tie = NULL;
    x->ntie = 0;
    free(x->ord);
    x->ord = NULL;
    free(x->hot);
    x->hot = NULL;
    x->hot_len = 0;
    top_free(x->top, &x->ntop);
    x->n = 0;
    x->kn = (keys_norm){0, 0, 0, 1};
    x->ties = false;
    x->max_share = 0;
    totals_free(&x->tot);
    x->valid = false;
}

static void op_end(struct sim_wl *x);

static struct sim_wl *wl_of(sim *s)
{
    if (!s->wl && (s->wl = calloc(1, sizeof *s->wl))) {
        wl_init(&s->wl->w);
        wl_init(&s->wl->pend);
    }
    return s->wl;
}

/* Close: everything s kept for the workload. */
static void wl_close(sim *s)
{
    if (!s->wl)
        return;
    cache_drop(s->wl);
    op_end(s->wl);
    free(s->wl->mv_idx);
    free(s->wl->mv_node);
    free(s->wl->rmv);
    free(s->wl->nadd_col);
    wl_table_free(&s->wl->tab);
    wl_free(&s->wl->w);
    wl_free(&s->wl->pend);
    totals_free(&s->wl->delta);
    free(s->wl);
    s->wl = NULL;
}

/* The one place that says which node a key's requests go to. */
static int64_t load_node(const store_key *k) { return k->node; }

static int parse_text(const char *text, workload *out, rs_error *err)
{
    wl_init(out);
    if (!text || !*text)
        return 0;
    json_t *j = json_loads(text, 0, NULL);
    int rc = j ? wl_from_json(j, out, err) : RINGSIM_EDB;
    json_decref(j);
    return rc ? rs_fail(err, RINGSIM_EDB, "the stored workload is not readable") : 0;
}

/* The workload the database stores (the default when none). */
static int stored_workload(sim *s, workload *w, rs_error *err)
{
    char *text = NULL;
    int rc = store_meta_get(s->st, "workload", &text, err);
    if (!rc)
        rc = parse_text(text, w, err);
    free(text);
    return rc;
}

/* Load, with the state: the stored workload; the cache goes. */
static int wl_load(sim *s, rs_error *err)
{
    struct sim_wl *x = wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    workload w;
    int rc = stored_workload(s, &w, err);
    if (rc)
        return rc;
    wl_free(&x->w);
    x->w = w;
    cache_drop(x);
    return 0;
}

static bool simple(const workload *w) { return wl_is_uniform(w) && wl_sizes_fixed(w); }

/* ---- building the cache ---- */

typedef struct ent {
    uint64_t ord;
    uint32_t kidx; /* the key's index in key-bytes order: ties */
    int64_t node;
    int64_t bytes;
    int64_t col; /* the key's value of the placement's column */
} ent;

typedef struct build {
    sim *s;
    const workload *w;
    ent *v;
    size_t n, cap;
    char *first; /* the first key by bytes */
    size_t first_len;
    char best[NAME_BUF]; /* the first of the rank order (ranked kinds) */
    size_t best_len;
    uint64_t best_ord;
    int ccol;         /* the placement's column, -1: none */
    bool col_missing; /* a key without a coordinate in it */
    rs_error *err;
    /* Ranked kinds: the WL_TOP first of the rank order; the others: the
     * WL_TOP first keys by bytes that take the common share. */
    topkey top[WL_TOP];
    size_t ntop;
} build;

/* A key's rank value: sha64(seed ":" key), or its insertion (a key the log
 * does not know goes last: it cannot happen with the operations ringsim
 * logs today). */
static uint64_t rank_value(sim *s, const workload *w, const char *key, size_t len)
{
    if (w->order == WL_ORDER_INSERT) {
        uint64_t o = UINT64_MAX;
        iset_get(s->wl->ins, key, len, &o);
        return o;
    }
    return wl_hash_rank(w, s->h, key, len);
}

static int collect(void *ud, const store_key *k)
{
    build *b = ud;
    if (vec_reserve(&b->v, &b->cap, b->n + 1, sizeof *b->v, 1024))
        return rs_fail(b->err, RINGSIM_ENOMEM, "out of memory");
    /* The first key by bytes that takes the common share: the hottest
     * when every key (or every unlisted one) has the same share. */
    if (!b->first &&
        !(b->w->kind == WL_KEYS && wl_find(b->w->keys, b->w->nkeys, k->key, k->len) != NULL)) {
        if (!(b->first = strndup(k->key, k->len)))
            return rs_fail(b->err, RINGSIM_ENOMEM, "out of memory");
        b->first_len = k->len;
    }
    if (!wl_ranked(b->w) && b->ntop < WL_TOP &&
        !(b->w->kind == WL_KEYS && wl_find(b->w->keys, b->w->nkeys, k->key, k->len) != NULL) &&
        top_put(b->top, &b->ntop, k->key, k->len, 0, 0, false))
        return rs_fail(b->err, RINGSIM_ENOMEM, "out of memory");
    ent *e = &b->v[b->n];
    e->ord = wl_ranked(b->w) ? rank_value(b->s, b->w, k->key, k->len) : 0;
    e->kidx = (uint32_t)b->n;
    if (wl_ranked(b->w) && (b->n == 0 || e->ord < b->best_ord)) {
        /* ties keep the first by key bytes: the scan is in that order */
        b->best_ord = e->ord;
        b->best_len = k->len < sizeof b->best ? k->len : sizeof b->best;
        memcpy(b->best, k->key, b->best_len);
    }
    if (wl_ranked(b->w) && top_put(b->top, &b->ntop, k->key, k->len, e->ord, 0, true))
        return rs_fail(b->err, RINGSIM_ENOMEM, "out of memory");
    e->node = load_node(k);
    e->bytes = wl_size_of(b->w, b->s->h, k->key, k->len);
    e->col = b->ccol == PLACE_COL_POS ? (int64_t)k->pos : k->coord;
    if (b->ccol == PLACE_COL_COORD && !k->has_coord)
        b->col_missing = true;
    b->n++;
    if (b->n % PROGRESS_EVERY == 0)
        return sim__poll(b->s, b->err);
    return 0;
}

static int ent_cmp(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->ord != y->ord)
        return x->ord < y->ord ? -1 : 1;
    return (x->kidx > y->kidx) - (x->kidx < y->kidx);
}

/* The shares of kind keys: keys_norm above. */

static void keys_norm_compute(const workload *w, size_t n, size_t listed, double sum, keys_norm *o)
{
    o->listed = listed;
    o->sum = sum;
    o->scale = 1;
    o->rest = n > listed && sum < 1 ? (1 - sum) / (double)(n - listed) : 0;
    /* Every key listed, or shares over 1 by rounding (workload.c allows
     * an ulp a share): scaled to sum to 1, never a negative rest. */
    if ((n == listed && listed) || sum > 1)
        o->scale = sum > 0 ? 1 / sum : 0;
    (void)w;
}

static double keys_share(const keys_norm *o, const wl_item *e)
{
    if (!e)
        return o->rest;
    if (o->scale == 0) /* every key listed, every share 0: all equal */
        return 1.0 / (double)o->listed;
    return e->share * o->scale;
}

/* Which listed keys are stored: their count and shares' sum. */
static int keys_stored(sim *s, const workload *w, size_t *listed, double *sum, const wl_item **hot,
                       const wl_item **lt, size_t *nlt, rs_error *err)
{
    wl_sum t = {0, 0};
    *listed = 0;
    *hot = NULL;
    *nlt = 0;
    for (size_t i = 0; i < w->nkeys; i++) {
        store_key k;
        int rc = store_key_find(s->st, w->keys[i].key, w->keys[i].len, &k, err);
        if (rc == RINGSIM_ENOTFOUND)
            continue;
        if (rc)
            return rc;
        (*listed)++;
        wl_sum_add(&t, w->keys[i].share);
        if (!*hot || w->keys[i].share > (*hot)->share)
            *hot = &w->keys[i];
        /* the WL_TOP largest shares, ties to the first by key bytes */
        size_t p = *nlt;
        while (p > 0 && lt[p - 1]->share < w->keys[i].share)
            p--;
        if (p < WL_TOP) {
            *nlt -= *nlt == WL_TOP;
            memmove(lt + p + 1, lt + p, (*nlt - p) * sizeof *lt);
            lt[p] = &w->keys[i];
            ++*nlt;
        }
    }
    *sum = wl_sum_get(&t);
    return 0;
}

/* The key of a given index in key-bytes order. */
typedef struct nth {
    size_t want, at;
    char *key;
    size_t len;
} nth;

static int nth_fn(void *ud, const store_key *k)
{
    nth *t = ud;
    if (t->at++ < t->want)
        return 0;
    t->key = strndup(k->key, k->len);
    t->len = k->len;
    return 1;
}

typedef struct tie_ctx {
    struct sim_wl *x;
    const unsigned char *mark; /* by key index: in a tied run */
    const uint64_t *ordof;     /* by key index */
    size_t at;
} tie_ctx;

static int tie_fn(void *ud, const store_key *k)
{
    tie_ctx *t = ud;
    size_t i = t->at++;
    if (!t->mark[i])
        return 0;
    struct tie *e = &t->x->tie[t->x->ntie];
    if (!(e->key = strndup(k->key, k->len)))
        return RINGSIM_ENOMEM;
    e->len = k->len;
    e->ord = t->ordof[i];
    t->x->ntie++;
    return 0;
}

static int tie_cmp(const void *a, const void *b)
{
    const struct tie *x = a, *y = b;
    if (x->ord != y->ord)
        return x->ord < y->ord ? -1 : 1;
    return sim__cmp_bytes(x->key, x->len, y->key, y->len);
}

/* The keys of tied runs, read again by key index. */
static int ties_collect(sim *s, struct sim_wl *x, const ent *v, size_t n, rs_error *err)
{
    unsigned char *mark = calloc(n, 1);
    uint64_t *ordof = malloc(n * sizeof *ordof);
    size_t m = 0;
    int rc = mark && ordof ? 0 : RINGSIM_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        ordof[v[i].kidx] = v[i].ord;
        if ((i && v[i].ord == v[i - 1].ord) || (i + 1 < n && v[i].ord == v[i + 1].ord)) {
            mark[v[i].kidx] = 1;
            m++;
        }
    }
    if (!rc && !(x->tie = calloc(m, sizeof *x->tie)))
        rc = RINGSIM_ENOMEM;
    if (!rc) {
        tie_ctx t = {x, mark, ordof, 0};
        rc = store_keys_each(s->st, STORE_EACH_KEY, tie_fn, &t, err);
        qsort(x->tie, x->ntie, sizeof *x->tie, tie_cmp);
    }
    free(mark);
    free(ordof);
    return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
}

/* The keys of some indexes in key-bytes order, in one pass (want sorted
 * by index; slot: where each one's key goes). */
typedef struct nths {
    const size_t *want, *slot;
    size_t n, next, at;
    topkey *out;
} nths;

static int nths_fn(void *ud, const store_key *k)
{
    nths *t = ud;
    size_t i = t->at++;
    while (t->next < t->n && t->want[t->next] == i) {
        topkey *o = &t->out[t->slot[t->next++]];
        if (!(o->key = strndup(k->key, k->len)))
            return RINGSIM_ENOMEM;
        o->len = k->len;
    }
    return t->next == t->n ? 1 : 0;
}

/* The hottest keys of the cache being built: the largest shares, ties
 * broken as for the hottest key -- kind keys: listed keys before the
 * others, then key bytes; ranked kinds: the rank order (hotspot's cold
 * keys first when each takes more than a hot one). */
static int top_build(sim *s, struct sim_wl *x, build *b, const wl_item *const *lt, size_t nlt,
                     rs_error *err)
{
    const workload *w = &x->w;
    int rc = 0;
    if (w->kind == WL_UNIFORM) {
        for (size_t i = 0; i < b->ntop; i++)
            b->top[i].share = 1.0 / (double)b->n;
        memcpy(x->top, b->top, b->ntop * sizeof *b->top);
        x->ntop = b->ntop;
        b->ntop = 0;
        return 0;
    }
    if (w->kind == WL_KEYS) {
        size_t i = 0, j = 0;
        while (!rc && x->ntop < WL_TOP && (i < nlt || j < b->ntop)) {
            double ls = i < nlt ? keys_share(&x->kn, lt[i]) : -1;
            if (i < nlt && (j >= b->ntop || ls >= x->kn.rest)) {
                rc = top_put(x->top, &x->ntop, lt[i]->key, lt[i]->len, 0, ls, false);
                i++;
            } else {
                rc = top_put(x->top, &x->ntop, b->top[j].key, b->top[j].len, 0, x->kn.rest, false);
                j++;
            }
        }
        return rc ? rs_fail(err, RINGSIM_ENOMEM, "out of memory") : 0;
    }
    /* Ranked: which ranks (0-based), hottest first. */
    size_t rank[WL_TOP], nr = 0, n = b->n;
    bool cold = w->kind == WL_HOTSPOT && x->norm.hot < n &&
                wl_share_of_rank(w, &x->norm, x->norm.hot + 1) > wl_share_of_rank(w, &x->norm, 1);
    for (size_t r = cold ? x->norm.hot : 0; r < n && nr < WL_TOP; r++)
        rank[nr++] = r;
    for (size_t r = 0; cold && r < x->norm.hot && nr < WL_TOP; r++)
        rank[nr++] = r;
    size_t want[WL_TOP], slot[WL_TOP], nw = 0;
    for (size_t i = 0; i < nr; i++) {
        x->top[i] = (topkey){NULL, 0, b->v[rank[i]].ord,
                             wl_share_table(w, &x->tab, &x->norm, rank[i] + 1)};
        if (rank[i] < b->ntop) { /* the scan kept the first ranks' keys */
            x->top[i].key = b->top[rank[i]].key;
            x->top[i].len = b->top[rank[i]].len;
            b->top[rank[i]].key = NULL;
        } else { /* by index, in index order */
            size_t p = nw++;
            while (p > 0 && want[p - 1] > b->v[rank[i]].kidx) {
                want[p] = want[p - 1];
                slot[p] = slot[p - 1];
                p--;
            }
            want[p] = b->v[rank[i]].kidx;
            slot[p] = i;
        }
    }
    x->ntop = nr;
    if (nw) {
        nths t = {want, slot, nw, 0, 0, x->top};
        rc = store_keys_each(s->st, STORE_EACH_KEY, nths_fn, &t, err);
        if (rc == 1 || (rc == 0 && t.next == nw))
            rc = 0;
        else if (rc == 0)
            rc = rs_fail(err, RINGSIM_EINTERNAL, "workload: a ranked key was not found");
        else if (rc == RINGSIM_ENOMEM)
            rc = rs_fail(err, rc, "out of memory");
    }
    return rc;
}

/* at: the operation of the log the state stands after (insert order);
 * -1: the sim's own last (or the one its view was made for).  pl: the
 * state's placement (its column), NULL when unknown. */
static int cache_build(sim *s, int64_t at, const placement *pl, rs_error *err)
{
    struct sim_wl *x = s->wl;
    const workload *w = &x->w;
    cache_drop(x);
    int rc = 0;
    if (wl_ranked(w) && w->order == WL_ORDER_INSERT) {
        sim *o = x->origin ? x->origin : s;
        int64_t a = at >= 0 ? at : x->origin ? x->origin_at : s->at_op;
        if ((rc = ins_build(o, a, &x->ins, err)))
            return rc;
    }
    build b = {s,     w,   NULL,  0, 0, NULL, 0, {0}, 0, 0, pl ? place_column(pl) : -1,
               false, err, {{0}}, 0};
    rc = store_keys_each(s->st, STORE_EACH_KEY, collect, &b, err);
    keys_norm kn = {0, 0, 0, 1};
    const wl_item *khot = NULL, *lt[WL_TOP];
    size_t nlt = 0;
    if (!rc && w->kind == WL_KEYS) {
        size_t listed;
        double sum;
        if (!(rc = keys_stored(s, w, &listed, &sum, &khot, lt, &nlt, err)))
            keys_norm_compute(w, b.n, listed, sum, &kn);
    }
    if (rc)
        goto out;
    if (wl_ranked(w)) {
        if (b.n > 1)
            qsort(b.v, b.n, sizeof *b.v, ent_cmp);
        /* Room for inserts: apply_notes grows the arrays in place. */
        x->rcap = b.n + b.n / 8 + 1024;
        if (b.n && !(x->ord = malloc(x->rcap * sizeof *x->ord))) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            goto out;
        }
        if (w->order == WL_ORDER_HASHED && b.n && !(x->nodeat = malloc(x->rcap * sizeof *x->nodeat))) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            goto out;
        }
        x->ccol = b.ccol;
        if (x->nodeat && b.ccol >= 0 && !b.col_missing &&
            !(x->colat = malloc(x->rcap * sizeof *x->colat))) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < b.n; i++) {
            x->ord[i] = b.v[i].ord;
            if (x->nodeat)
                x->nodeat[i] = b.v[i].node;
            if (x->colat)
                x->colat[i] = b.v[i].col;
            if (i && b.v[i].ord == b.v[i - 1].ord)
                x->ties = true;
        }
        if (x->ties && (rc = ties_collect(s, x, b.v, b.n, err)))
            goto out;
    }
    x->n = b.n;
    x->kn = kn;
    if (w->kind == WL_ZIPF && wl_table_reach(&x->tab, w->s, b.n)) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    wl_norm_table(w, &x->tab, b.n, &x->norm);
    /* Per node, in rank order (the kind keys asks each key's entry). */
    for (size_t i = 0; i < b.n; i++) {
        double sh;
        if (wl_ranked(w))
            sh = wl_share_table(w, &x->tab, &x->norm, i + 1);
        else if (w->kind == WL_KEYS)
            sh = 0; /* below, by key */
        else
            sh = 1.0 / (double)b.n;
        if (b.v[i].node == STORE_NO_NODE && w->kind != WL_KEYS)
            continue;
        tot *t = totals_slot(&x->tot, b.v[i].node);
        if (!t) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            goto out;
        }
        if (w->kind != WL_KEYS)
            wl_sum_add(&t->req, sh);
        t->bytes += b.v[i].bytes;
        t->keys++;
    }
    if (w->kind == WL_KEYS) {
        /* The unlisted keys of each node share `rest`; the listed add theirs. */
        for (size_t i = 0; i < x->tot.n; i++)
            wl_sum_add(&x->tot.v[i].req, 0);
        for (size_t i = 0; i < w->nkeys && !rc; i++) {
            store_key k;
            int r = store_key_find(s->st, w->keys[i].key, w->keys[i].len, &k, err);
            if (r == RINGSIM_ENOTFOUND)
                continue;
            if (r) {
                rc = r;
                break;
            }
            tot *t = totals_slot(&x->tot, load_node(&k));
            if (!t) {
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
                break;
            }
            wl_sum_add(&t->req, keys_share(&kn, &w->keys[i]));
            t->keys--; /* counted below as unlisted otherwise */
        }
        for (size_t i = 0; i < x->tot.n && !rc; i++) {
            wl_sum_add(&x->tot.v[i].req, (double)x->tot.v[i].keys * kn.rest);
            x->tot.v[i].keys = 0;
        }
        if (rc)
            goto out;
    }
    /* The hottest key: the largest share; ties go to the first of the
     * workload's order (rank 1), or the first by key bytes. */
    if (b.n) {
        const char *hk = b.first;
        size_t hl = b.first_len;
        x->max_share = 1.0 / (double)b.n;
        if (wl_ranked(w)) {
            x->max_share = wl_share_table(w, &x->tab, &x->norm, 1);
            hk = NULL; /* the key of rank 1: by its index in key order */
        } else if (w->kind == WL_KEYS && khot && keys_share(&kn, khot) >= kn.rest) {
            x->max_share = keys_share(&kn, khot);
            hk = khot->key;
            hl = khot->len;
        } else if (w->kind == WL_KEYS) {
            x->max_share = kn.rest;
        }
        if (hk) {
            x->hot = strndup(hk, hl);
            x->hot_len = hl;
        }
        if (!hk && w->kind == WL_HOTSPOT && x->norm.hot < b.n &&
            wl_share_of_rank(w, &x->norm, x->norm.hot + 1) > x->max_share) {
            /* hot_share below the hot keys' fraction: a cold key is the
             * hottest, the first of the cold ones in the order */
            x->max_share = wl_share_of_rank(w, &x->norm, x->norm.hot + 1);
            nth t = {b.v[x->norm.hot].kidx, 0, NULL, 0};
            rc = store_keys_each(s->st, STORE_EACH_KEY, nth_fn, &t, err);
            if (rc == 1)
                rc = 0;
            x->hot = t.key;
            x->hot_len = t.len;
        } else if (!hk) { /* rank 1's key, kept by the scan */
            x->hot = strndup(b.best, b.best_len);
            x->hot_len = b.best_len;
        }
        if (!rc && !x->hot)
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    if (!rc && b.n)
        rc = top_build(s, x, &b, lt, nlt, err);
out:
    top_free(b.top, &b.ntop);
    free(b.v);
    free(b.first);
    if (rc)
        cache_drop(x);
    return rc;
}

/* Byte totals are exact: the stored keys' sizes may add up to at most
 * 2^53 bytes (8 PiB), checked as keys x the largest size a key may have
 * under the workload, so that every sum of sizes (a node's, an
 * operation's moves, compare's in doubles, JavaScript's numbers) is an
 * exact integer and never wraps.  A value size alone may be up to 2^50
 * (workload.c); 2^50 on 50,000 keys summed past 2^63 and answered
 * negative bytes (issue 26). */
#define WL_MAX_TOTAL_BYTES (INT64_C(1) << 53)

/* The largest size any key may have under w. */
static int64_t largest_size(const workload *w)
{
    if (!w->has_sizes)
        return 1;
    switch (w->size_kind) {
    case WL_SIZE_UNIFORM:
        return w->max;
    case WL_SIZE_KEYS: {
        int64_t m = w->rest;
        for (size_t i = 0; i < w->nsize_keys; i++)
            m = w->size_keys[i].bytes > m ? w->size_keys[i].bytes : m;
        return m;
    }
    default:
        return w->bytes;
    }
}

/* 0, or RINGSIM_EPARAM when `keys` keys under w could pass the bound. */
static int sizes_fit(const workload *w, int64_t keys, rs_error *err)
{
    int64_t big = largest_size(w);
    if (keys <= 0 || big <= 0 || big <= WL_MAX_TOTAL_BYTES / keys)
        return 0;
    return rs_fail(err, RINGSIM_EPARAM,
                   "%lld keys of up to %lld bytes could add up to more than 2^53 bytes (8 PiB), "
                   "the most a byte total may hold exactly; give smaller value sizes "
                   "(at most %lld bytes for %lld keys) or fewer keys",
                   (long long)keys, (long long)big, (long long)(WL_MAX_TOTAL_BYTES / keys),
                   (long long)keys);
}

static int ensure(sim *s, rs_error *err)
{
    struct sim_wl *x = wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    /* A file written before the bound (sizes up to 2^50 on any number of
     * keys): refused here with the way out, never summed past int64. */
    int rc0 = sizes_fit(&x->w, sim_key_count(s), err);
    if (rc0)
        return rc0;
    if (simple(&x->w))
        return 0;
    if (s->preview) {
        /* Inside a dry run, reading the state it would leave: built for
         * that state (once), dropped with the rollback. */
        if (x->post_built)
            return 0;
        int rc = cache_build(s, s->record ? sim_last_op(s) : -1, NULL, err);
        x->post_built = rc == 0;
        return rc;
    }
    if (x->valid && x->at_op == s->at_op && x->dv == s->data_version)
        return 0;
    int rc = cache_build(s, -1, s->cur.pl, err);
    if (rc) {
        cache_drop(x);
        return rc;
    }
    x->valid = true;
    x->at_op = s->at_op;
    x->dv = s->data_version;
    return 0;
}

/* A stored key's share, the cache being valid (not the simple case). */
static int share_of_at(sim *s, const char *key, size_t len, double *out, size_t *rank, rs_error *err);

static int share_of(sim *s, const char *key, size_t len, double *out, rs_error *err)
{
    size_t r;
    return share_of_at(s, key, len, out, &r, err);
}

/* The same, and the key's rank (0-based; SIZE_MAX for unranked kinds). */
static int share_of_at(sim *s, const char *key, size_t len, double *out, size_t *rank, rs_error *err)
{
    *rank = SIZE_MAX;
    struct sim_wl *x = s->wl;
    const workload *w = &x->w;
    if (w->kind == WL_UNIFORM) {
        *out = x->n ? 1.0 / (double)x->n : 0;
        return 0;
    }
    if (w->kind == WL_KEYS) {
        /* The normalisation counted when the cache was built (one lookup
         * per listed key), not again per key asked: a node join under
         * 4,000 listed keys asked it for every moved key, 7.9 s. */
        *out = keys_share(&x->kn, wl_find(w->keys, w->nkeys, key, len));
        return 0;
    }
    uint64_t v = rank_value(s, w, key, len);
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x->ord[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= x->n || x->ord[lo] != v)
        return rs_fail(err, RINGSIM_EINTERNAL, "workload: a moved key is not ranked");
    if (x->ties && ((lo + 1 < x->n && x->ord[lo + 1] == v))) {
        /* Tied rank values (two keys whose sha64 agree): the key's place in
         * its run is its place by key bytes, from the list of tied keys. */
        struct tie probe = {v, (char *)key, len}, first = {v, "", 0};
        size_t a = 0, b = x->ntie, f = 0, g = x->ntie;
        while (a < b) { /* the key's place among the tied */
            size_t mid = (a + b) / 2;
            if (tie_cmp(&x->tie[mid], &probe) < 0)
                a = mid + 1;
            else
                b = mid;
        }
        while (f < g) { /* the first of its rank value */
            size_t mid = (f + g) / 2;
            if (tie_cmp(&x->tie[mid], &first) < 0)
                f = mid + 1;
            else
                g = mid;
        }
        lo += a - f;
    }
    *rank = lo;
    *out = wl_share_table(w, &x->tab, &x->norm, lo + 1);
    return 0;
}

/* ---- reads ---- */

const workload *sim__wl_get(sim *s)
{
    struct sim_wl *x = wl_of(s);
    return x ? &x->w : NULL;
}

int sim_workload_json(sim *s, json_t **out, rs_error *err)
{
    const workload *w = sim__wl_get(s);
    *out = w ? wl_to_json(w) : NULL;
    return *out ? 0 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
}

int sim_node_load(sim *s, size_t index, double *requests, int64_t *bytes, rs_error *err)
{
    *requests = 0;
    *bytes = 0;
    if (index >= s->cur.n)
        return rs_fail(err, RINGSIM_ENOTFOUND, "no such node");
    int rc = ensure(s, err);
    if (rc)
        return rc;
    const node *nd = &s->cur.nodes[index];
    const workload *w = &s->wl->w;
    int64_t total = sim_key_count(s);
    if (simple(w)) {
        *requests = total ? (double)nd->keys / (double)total : 0;
        *bytes = nd->keys * wl_fixed_bytes(w);
        return 0;
    }
    const tot *t = totals_find(&s->wl->tot, nd->id);
    if (t) {
        *requests = wl_sum_get(&t->req);
        *bytes = t->bytes;
    }
    return 0;
}

int sim_requests_get(sim *s, sim_requests_stats *o, rs_error *err)
{
    memset(o, 0, sizeof *o);
    o->bound = 1;
    int rc = ensure(s, err);
    if (rc)
        return rc;
    size_t n = s->cur.n;
    double *r = n ? calloc(n, sizeof *r) : NULL;
    if (n && !r)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        int64_t b;
        rc = sim_node_load(s, i, &r[i], &b, err);
    }
    if (rc) {
        free(r);
        return rc;
    }
    /* Against each node's fair share (docs/api.md v4, sim_balance). */
    double *fw = n ? calloc(n, sizeof *fw) : NULL;
    if (n && !fw) {
        free(r);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    sim_fair_weights(s, fw, n);
    sim_balance(r, fw, n, &o->max_over_mean, &o->cv);
    double wsum = 0, wmax = 0;
    for (size_t i = 0; i < n; i++) {
        wsum += fw[i];
        wmax = fw[i] > wmax ? fw[i] : wmax;
    }
    free(fw);
    free(r);
    double largest_fair = wsum > 0 ? wmax / wsum : 0;
    /* The hottest key and the bound. */
    struct sim_wl *x = s->wl;
    int64_t keys = sim_key_count(s);
    if (keys > 0) {
        if (simple(&x->w)) {
            /* Every key 1/n: the first by key bytes stands for them. */
            store_cursor *c = NULL;
            store_key k;
            if (!(rc = store_cursor_open(s->st, &c, err)) &&
                (rc = store_cursor_next(c, &k, err)) == 1) {
                rc = 0;
                snprintf(o->hottest_key, sizeof o->hottest_key, "%.*s", (int)k.len, k.key);
                o->hottest_len = k.len;
                /* it and the next ones by key bytes: the hottest keys */
                for (int more = 1; more == 1;) {
                    sim_hot_key *h = &o->hot[o->nhot++];
                    h->len = k.len < sizeof h->key ? k.len : sizeof h->key - 1;
                    memcpy(h->key, k.key, h->len);
                    h->share = 1.0 / (double)keys;
                    more = o->nhot < SIM_HOTTEST_MAX ? store_cursor_next(c, &k, err) : 0;
                    rc = more < 0 ? more : 0;
                }
            }
            store_cursor_close(c);
            if (rc)
                return rc;
            o->hottest_share = 1.0 / (double)keys;
        } else {
            memcpy(o->hottest_key, x->hot, x->hot_len);
            o->hottest_len = x->hot_len;
            o->hottest_share = x->max_share;
            for (size_t i = 0; i < x->ntop && x->top[i].len < sizeof o->hot[i].key; i++) {
                memcpy(o->hot[i].key, x->top[i].key, x->top[i].len);
                o->hot[i].len = x->top[i].len;
                o->hot[i].share = x->top[i].share;
                o->nhot = i + 1;
            }
        }
        o->has_hottest = true;
        /* bound = max(1, hottest share / largest fair share): with m
         * equal nodes m x the hottest share, as version 3 computed it. */
        double b = largest_fair > 0 ? o->hottest_share / largest_fair : 1;
        o->bound = b > 1 ? b : 1;
    }
    return 0;
}

typedef struct unav_ctx {
    const workload *w;
    hasher *h;
    int64_t bytes;
} unav_ctx;

static int unav_bytes(void *ud, const store_key *k)
{
    unav_ctx *u = ud;
    u->bytes += wl_size_of(u->w, u->h, k->key, k->len);
    return 0;
}

int sim_unavailable_get(sim *s, sim_unavailable *o, rs_error *err)
{
    memset(o, 0, sizeof *o);
    int64_t keys = sim_key_count(s);
    o->keys = s->cur.unassigned; /* the stored keys with no node */
    if (!o->keys || !keys)
        return 0;
    o->key_share = (double)o->keys / (double)keys;
    int rc = ensure(s, err);
    if (rc)
        return rc;
    const workload *w = &s->wl->w;
    if (simple(w)) {
        o->requests_share = o->key_share;
        o->bytes = o->keys * wl_fixed_bytes(w);
        return 0;
    }
    /* The shares the nodes serve, the rest nobody does. */
    double served = 0;
    for (size_t i = 0; i < s->cur.n; i++) {
        const tot *t = totals_find(&s->wl->tot, s->cur.nodes[i].id);
        served += t ? wl_sum_get(&t->req) : 0;
    }
    o->requests_share = served < 1 ? 1 - served : 0;
    if (wl_sizes_fixed(w)) {
        o->bytes = o->keys * wl_fixed_bytes(w);
        return 0;
    }
    unav_ctx u = {w, s->h, 0};
    store_key_query q = {0};
    q.by_node = true;
    q.node = STORE_NO_NODE;
    q.limit = INT64_MAX;
    q.known_total = o->keys;
    int64_t total;
    rc = store_keys_page(s->st, &q, &total, unav_bytes, &u, err);
    o->bytes = u.bytes;
    return rc;
}

typedef struct each_ctx {
    sim *s;
    sim_share_fn fn;
    void *ud;
    keys_norm kn;
    uint64_t n;
    int stop;
    /* ranked: shares by rank need the rank of each key */
    rs_error *err;
} each_ctx;

static int each_simple(void *ud, const store_key *k)
{
    each_ctx *e = ud;
    const workload *w = &e->s->wl->w;
    double sh = 1.0 / (double)e->n;
    if (w->kind == WL_KEYS)
        sh = keys_share(&e->kn, wl_find(w->keys, w->nkeys, k->key, k->len));
    if (e->fn(e->ud, k->key, k->len, sh)) {
        e->stop = 1;
        return 1;
    }
    return 0;
}

typedef struct ranked_key {
    uint64_t ord;
    uint32_t kidx;
    char *key;
    size_t len;
} ranked_key;

int sim_workload_each(sim *s, sim_share_fn fn, void *ud, rs_error *err)
{
    int rc = ensure(s, err);
    if (rc)
        return rc;
    const workload *w = &s->wl->w;
    each_ctx e = {s, fn, ud, {0, 0, 0, 1}, (uint64_t)sim_key_count(s), 0, err};
    if (!e.n)
        return 0;
    if (!wl_ranked(w)) {
        if (w->kind == WL_KEYS) {
            size_t listed;
            double sum;
            const wl_item *hot, *lt[WL_TOP];
            size_t nlt;
            if ((rc = keys_stored(s, w, &listed, &sum, &hot, lt, &nlt, err)))
                return rc;
            keys_norm_compute(w, e.n, listed, sum, &e.kn);
        }
        rc = store_keys_each(s->st, STORE_EACH_KEY, each_simple, &e, err);
        return e.stop ? 0 : rc;
    }
    /* Ranked: collect (rank value, key), sort, hand out by rank. */
    keylist l;
    memset(&l, 0, sizeof l);
    if ((rc = store_keys_each(s->st, STORE_EACH_KEY, sim__kl_collect, &l, err)))
        goto out;
    ent *v = l.n ? malloc(l.n * sizeof *v) : NULL;
    if (l.n && !v) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < l.n; i++) {
        v[i].ord = rank_value(s, w, l.buf + l.v[i].off, l.v[i].len);
        v[i].kidx = (uint32_t)i;
    }
    if (l.n > 1)
        qsort(v, l.n, sizeof *v, ent_cmp);
    wl_norm norm;
    wl_norm_compute(w, l.n, &norm);
    for (size_t i = 0; i < l.n; i++) {
        const klent *k = &l.v[v[i].kidx];
        if (fn(ud, l.buf + k->off, k->len, wl_share_of_rank(w, &norm, i + 1)))
            break;
    }
    free(v);
out:
    sim__kl_free(&l);
    return rc;
}

/* ---- following an operation ---- */

int sim__wl_set_pending(opctx *c, const workload *w, rs_error *err)
{
    struct sim_wl *x = wl_of(c->s);
    if (!x || !w || wl_copy(&x->pend, w))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    x->pend_set = true;
    return 0;
}

typedef struct mv_ctx {
    sim *s;
    opctx *c;
    wl_sum req;
    int64_t bytes;
    bool per_key_share;
    rs_error *err;
    /* the last source and destination names and their ids: moves come in
     * runs of one pair, and a node is found by name in O(nodes) */
    char last[2][NAME_BUF];
    size_t last_len[2];
    int64_t last_id[2];
    bool has_last[2];
} mv_ctx;

static int64_t node_id_of(const state *a, const state *b, const char *name)
{
    if (!name)
        return STORE_NO_NODE;
    size_t len = strlen(name);
    long i = sim__find_node(a, name, len);
    if (i >= 0)
        return a->nodes[i].id;
    i = sim__find_node(b, name, len);
    return i >= 0 ? b->nodes[i].id : STORE_NO_NODE - 1;
}

static int64_t moved_id(mv_ctx *m, int which, const char *name)
{
    if (!name)
        return STORE_NO_NODE;
    size_t len = strlen(name);
    if (m->has_last[which] && m->last_len[which] == len && memcmp(m->last[which], name, len) == 0)
        return m->last_id[which];
    int64_t id = node_id_of(&m->c->next, &m->s->cur, name);
    if (len <= sizeof m->last[which]) {
        memcpy(m->last[which], name, len);
        m->last_len[which] = len;
        m->last_id[which] = id;
        m->has_last[which] = true;
    }
    return id;
}

static int mv_grow(struct sim_wl *x)
{
    size_t cap;
    if (vec_next_cap(x->mvcap, x->mvcap + 1, 1024, &cap) ||
        vec_realloc(&x->mv_idx, cap, sizeof *x->mv_idx) ||
        vec_realloc(&x->mv_node, cap, sizeof *x->mv_node))
        return RINGSIM_ENOMEM;
    x->mvcap = cap;
    return 0;
}

static int mv_fn(void *ud, const char *key, const char *from, const char *to)
{
    mv_ctx *m = ud;
    struct sim_wl *x = m->s->wl;
    size_t len = strlen(key);
    double sh = 0;
    size_t rank = SIZE_MAX;
    if (m->per_key_share) {
        int rc = share_of_at(m->s, key, len, &sh, &rank, m->err);
        if (rc)
            return rc;
        wl_sum_add(&m->req, sh);
    }
    if (x->delta_ok && x->nodeat) { /* each rank's node, set at the commit */
        if (rank == SIZE_MAX || (x->nmv == x->mvcap && mv_grow(x)))
            return rs_fail(m->err, RINGSIM_ENOMEM, "out of memory");
        x->mv_idx[x->nmv] = rank;
        x->mv_node[x->nmv++] = moved_id(m, 1, to);
    }
    int64_t b = wl_size_of(&x->w, m->s->h, key, len);
    m->bytes += b;
    pair_ent *pe = sim__pair_find(m->c, moved_id(m, 0, from), moved_id(m, 1, to));
    if (pe) {
        pe->requests += sh;
        pe->bytes += b;
    }
    if (x->delta_ok) {
        int64_t f = moved_id(m, 0, from);
        int64_t t = moved_id(m, 1, to);
        tot *tf = f != STORE_NO_NODE ? totals_slot(&x->delta, f) : NULL;
        tot *tt = t != STORE_NO_NODE ? totals_slot(&x->delta, t) : NULL;
        if ((f != STORE_NO_NODE && !tf) || (t != STORE_NO_NODE && !tt))
            return rs_fail(m->err, RINGSIM_ENOMEM, "out of memory");
        if (tf) {
            wl_sum_add(&tf->req, -sh);
            tf->bytes -= b;
        }
        if (tt) {
            wl_sum_add(&tt->req, sh);
            tt->bytes += b;
        }
    }
    return 0;
}

static int rmove_cmp(const void *a, const void *b)
{
    const struct rmove *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

#define MEM_BUCKET_BITS 12

/* The moved keys' shares from memory: the running operation's range moves
 * (sorted, disjoint) against every rank's column value and node, one pass
 * of O(n) comparisons (a bucket table skips most ranges) and O(moved)
 * additions -- no log read, no hash.  *ok false when the ranges do not
 * account for every move exactly (the caller reads the log). */
static int mem_moves(sim *s, struct sim_wl *x, mv_ctx *m, bool *ok)
{
    *ok = false;
    size_t nr = x->nrmv;
    struct rmove *r = x->rmv;
    if (!nr)
        return 0;
    qsort(r, nr, sizeof *r, rmove_cmp);
    uint64_t base = (uint64_t)r[0].lo ^ (1ull << 63), top = 0;
    for (size_t j = 0; j < nr; j++) {
        if (j && r[j].lo <= r[j - 1].hi)
            return 0; /* overlapping: not what diff_segments makes */
        uint64_t h = (uint64_t)r[j].hi ^ (1ull << 63);
        top = h > top ? h : top;
        r[j].seen = 0;
    }
    /* bucket b covers [base + b << shift, ...): first[b] is the first
     * range that can hold a value of it */
    unsigned shift = 0;
    while (shift < 64 && ((top - base) >> shift) >= (1u << MEM_BUCKET_BITS))
        shift++;
    size_t nb = (size_t)((top - base) >> shift) + 1;
    uint32_t *first = malloc(nb * sizeof *first);
    if (!first)
        return 0;
    for (size_t b = 0, j = 0; b < nb; b++) {
        while (j < nr && (((uint64_t)r[j].hi ^ (1ull << 63)) - base) >> shift < b)
            j++;
        first[b] = (uint32_t)j;
    }
    const workload *w = &x->w;
    int rc = 0;
    for (size_t i = 0; i < x->n && !rc; i++) {
        uint64_t v = (uint64_t)x->colat[i] ^ (1ull << 63);
        if (v < base || v > top)
            continue;
        size_t j = first[(v - base) >> shift];
        while (j < nr && ((uint64_t)r[j].hi ^ (1ull << 63)) < v)
            j++;
        if (j == nr || ((uint64_t)r[j].lo ^ (1ull << 63)) > v || x->nodeat[i] != r[j].from)
            continue;
        double sh = wl_share_table(w, &x->tab, &x->norm, i + 1);
        r[j].seen++;
        wl_sum_add(&m->req, sh);
        tot *tf = r[j].from != STORE_NO_NODE ? totals_slot(&x->delta, r[j].from) : NULL;
        tot *tt = r[j].to != STORE_NO_NODE ? totals_slot(&x->delta, r[j].to) : NULL;
        if ((r[j].from != STORE_NO_NODE && !tf) || (r[j].to != STORE_NO_NODE && !tt) ||
            (x->nmv == x->mvcap && mv_grow(x)))
            rc = RINGSIM_ENOMEM;
        if (rc)
            break;
        /* Fixed sizes here (the caller's condition): each key moves that
         * many bytes; without them a node kept its moved keys' bytes. */
        if (tf) {
            wl_sum_add(&tf->req, -sh);
            tf->bytes -= wl_fixed_bytes(w);
        }
        if (tt) {
            wl_sum_add(&tt->req, sh);
            tt->bytes += wl_fixed_bytes(w);
        }
        pair_ent *pe = sim__pair_find(m->c, r[j].from, r[j].to);
        if (pe)
            pe->requests += sh;
        x->mv_idx[x->nmv] = i;
        x->mv_node[x->nmv++] = r[j].to;
    }
    free(first);
    *ok = !rc;
    for (size_t j = 0; j < nr && *ok; j++)
        *ok = r[j].seen == r[j].count;
    if (!*ok) { /* start again from the log */
        for (size_t k = 0; k < m->c->pairs.n; k++)
            m->c->pairs.v[k].requests = 0;
        totals_free(&x->delta);
        x->nmv = 0;
        m->req = (wl_sum){0, 0};
    }
    (void)s;
    return 0;
}

/* Whether the operation type leaves the key set alone. */
static bool topology_only(const char *type)
{
    /* not set_state and import: their moves are followed by a rebuild */
    sim_op_type t = sim_op_type_of(type);
    return t == SIM_OP_ADD_NODE || t == SIM_OP_REMOVE_NODE || t == SIM_OP_CONFIGURE ||
           t == SIM_OP_SET_WEIGHT;
}

/* What nobody serves after the operation c (docs/api.md v4
 * "unavailable_after"): its requests and bytes, where they can be known --
 * the store already holds the state after (the unserved keys' bytes are
 * their sizes); the requests by count for uniform shares, else from the
 * cache when it holds the state after (valid 1: its totals plus the
 * operation's delta, 2: built for it), else left unknown. */
static int unavailable_after(opctx *c, const workload *w, int64_t keys, int valid, rs_error *err)
{
    sim *s = c->s;
    struct sim_wl *x = s->wl;
    int64_t un = c->next.unassigned;
    c->unavail_known = false;
    c->unavail_requests = 0;
    c->unavail_bytes = 0;
    if (un == 0 || keys == 0) {
        c->unavail_known = true;
        return 0;
    }
    if (wl_sizes_fixed(w)) {
        c->unavail_bytes = un * wl_fixed_bytes(w);
    } else {
        unav_ctx u = {w, s->h, 0};
        store_key_query q = {0};
        q.by_node = true;
        q.node = STORE_NO_NODE;
        q.limit = INT64_MAX;
        q.known_total = un;
        int64_t total;
        int rc = store_keys_page(s->st, &q, &total, unav_bytes, &u, err);
        if (rc)
            return rc;
        c->unavail_bytes = u.bytes;
    }
    if (wl_is_uniform(w)) {
        c->unavail_requests = (double)un / (double)keys;
        c->unavail_known = true;
        return 0;
    }
    if (!valid)
        return 0;
    double served = 0;
    for (size_t i = 0; i < c->next.n; i++) {
        const tot *t = totals_find(&x->tot, c->next.nodes[i].id);
        const tot *d = valid == 1 ? totals_find(&x->delta, c->next.nodes[i].id) : NULL;
        served += (t ? wl_sum_get(&t->req) : 0) + (d ? wl_sum_get(&d->req) : 0);
    }
    c->unavail_requests = served < 1 ? 1 - served : 0;
    c->unavail_known = true;
    return 0;
}

/* Prepare, before the log entry is finished: write the workload the
 * operation leaves (a workload operation's, a revert's) and count its
 * loads -- requests_moved, bytes_moved, each pair's, what nobody serves
 * after it -- into c and its log entry (store_op_set_loads). */
static int wl_prepare(opctx *c, rs_error *err)
{
    sim *s = c->s;
    struct sim_wl *x = wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    totals_free(&x->delta);
    x->delta_ok = false;
    x->post_built = false;
    c->requests_moved = 0;
    c->bytes_moved = 0;
    const workload *w = x->pend_set ? &x->pend : &x->w;
    int rc = 0;
    if (x->pend_set) {
        char *t = wl_to_text(w);
        rc = t ? store_meta_set(s->st, "workload", t, err)
               : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(t);
        if (rc)
            return rc;
    }
    int64_t keys = c->next.unassigned;
    for (size_t i = 0; i < c->next.n; i++)
        keys += c->next.nodes[i].keys;
    /* The keys the operation leaves, under the workload it leaves. */
    if ((rc = sizes_fit(w, keys, err)))
        return rc;
    int valid_after = 0; /* the cache holds the state after: 1 with delta, 2 built for it */
    if (c->moved > 0 && simple(w)) {
        c->requests_moved = (double)c->moved / (double)keys;
        c->bytes_moved = c->moved * wl_fixed_bytes(w);
        for (size_t k = 0; k < c->pairs.n; k++) {
            c->pairs.v[k].requests = (double)c->pairs.v[k].keys / (double)keys;
            c->pairs.v[k].bytes = c->pairs.v[k].keys * wl_fixed_bytes(w);
        }
        c->pairs.loaded = true;
    } else if (c->moved > 0 && c->op) {
        /* The moved keys' shares in the state the operation leaves. */
        bool keep = topology_only(c->what) && !x->pend_set && x->valid && x->at_op == s->at_op &&
                    x->dv == s->data_version;
        mv_ctx m = {s, c, {0, 0}, 0, !wl_is_uniform(w), err, {{0}}, {0}, {0}, {false}};
        if (!keep && !wl_sizes_fixed(w) && wl_is_uniform(w)) {
            /* Shares by count; sizes by key: no cache needed. */
            m.per_key_share = false;
        } else if (!keep) {
            /* Build it for the new state (the store shows it already). */
            workload saved;
            wl_init(&saved);
            if (x->pend_set) {
                saved = x->w;
                x->w = x->pend;
            }
            rc = cache_build(s, c->op, c->next.pl ? c->next.pl : s->cur.pl, err);
            if (x->pend_set)
                x->w = saved;
            if (rc)
                return rc;
        }
        x->delta_ok = keep;
        int64_t total = 0;
        bool mem = false;
        /* With fixed sizes, every move a range of the placement's column and
         * each rank's value of it kept: the shares come from memory. */
        if (keep && m.per_key_share && wl_sizes_fixed(w) && x->nodeat && x->colat && !x->rmv_bad &&
            !x->rekeyed && x->rmv_count == c->moved && (rc = mem_moves(s, x, &m, &mem)))
            return rc;
        if (mem)
            m.bytes = c->moved * wl_fixed_bytes(w);
        else
            rc = store_moves_page(s->st, c->op, 0, INT64_MAX, &total, mv_fn, &m, err);
        /* Built for the state the operation leaves: valid once committed. */
        x->post_built = !keep && m.per_key_share;
        if (rc)
            return rc;
        c->requests_moved = m.per_key_share ? wl_sum_get(&m.req) : (double)c->moved / (double)keys;
        c->bytes_moved = m.bytes;
        for (size_t k = 0; k < c->pairs.n; k++) {
            pair_ent *e = &c->pairs.v[k];
            if (!m.per_key_share)
                e->requests = (double)e->keys / (double)keys;
            if (mem)
                e->bytes = e->keys * wl_fixed_bytes(w);
        }
        c->pairs.loaded = true;
        valid_after = keep ? 1 : m.per_key_share ? 2 : 0;
    }
    if (!rc)
        rc = unavailable_after(c, w, keys, valid_after, err);
    if (rc)
        return rc;
    if (c->op) {
        /* The workload after the operation; NULL for the default. */
        char *t = wl_is_uniform(w) && !w->has_sizes ? NULL : wl_to_text(w);
        if (!t && !(wl_is_uniform(w) && !w->has_sizes))
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        rc = store_op_set_loads(s->st, c->op, c->requests_moved, c->bytes_moved, t, err);
        free(t);
    }
    return rc;
}

/* What an operation kept aside goes. */
static void op_end(struct sim_wl *x)
{
    totals_free(&x->delta);
    x->delta_ok = false;
    x->post_built = false;
    x->nmv = 0;
    x->nrmv = 0;
    x->rmv_count = 0;
    x->rmv_bad = false;
    x->rekeyed = false;
    x->nadd_col_bad = false;
    x->note_state = 0;
    sim__kl_free(&x->nadd);
    sim__kl_free(&x->ndel);
}

void sim__wl_note(opctx *c, const store_key *k, bool insert)
{
    sim *s = c->s;
    struct sim_wl *x = s->wl;
    if (!x || x->note_state == 2)
        return;
    if (x->note_state == 0) /* the cache must describe the state before */
        x->note_state = x->valid && x->nodeat && !x->ties && !x->pend_set && x->at_op == s->at_op &&
                                x->dv == s->data_version
                            ? 1
                            : 2;
    if (x->note_state != 1)
        return;
    keylist *l = insert ? &x->nadd : &x->ndel;
    if (insert && x->colat &&
        vec_reserve(&x->nadd_col, &x->nadd_colcap, l->n + 1, sizeof *x->nadd_col, 1024)) {
        x->note_state = 2;
        return;
    }
    if (insert && x->colat) {
        x->nadd_col[l->n] = x->ccol == PLACE_COL_POS ? (int64_t)k->pos : k->coord;
        if (x->ccol == PLACE_COL_COORD && !k->has_coord)
            x->nadd_col_bad = true;
    }
    if (sim__kl_add(l, k->key, k->len, k->pos, k->node))
        x->note_state = 2;
}

void sim__wl_range(opctx *c, int col, int64_t lo, int64_t hi, int64_t from, int64_t to, int64_t count)
{
    struct sim_wl *x = c->s->wl;
    if (!x || x->rmv_bad)
        return;
    x->rmv_count += count;
    if (!x->colat || col != x->ccol) {
        x->rmv_bad = true;
        return;
    }
    if (vec_reserve(&x->rmv, &x->rmvcap, x->nrmv + 1, sizeof *x->rmv, 64)) {
        x->rmv_bad = true;
        return;
    }
    x->rmv[x->nrmv++] = (struct rmove){lo, hi, from, to, count, 0};
}

void sim__wl_rekeyed(opctx *c)
{
    if (c->s->wl)
        c->s->wl->rekeyed = true;
}

typedef struct rk {
    uint64_t ord;
    int64_t node;
    size_t i;  /* the note's index */
    size_t at; /* the ranks before it, before the operation */
} rk;

static int rk_cmp(const void *a, const void *b)
{
    const rk *x = a, *y = b;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

static size_t lower(const uint64_t *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Every node's requests summed again over the ranks: zipf's weights
 * added per node and divided by H once, the other kinds' shares added.
 * Node ids map to x->tot's slots directly when they are few and close
 * (they are the store's row ids); every id in nodeat has its slot. */
static int resum(struct sim_wl *x)
{
    const workload *w = &x->w;
    totals *t = &x->tot;
    bool zipf = w->kind == WL_ZIPF && x->tab.n >= x->n && x->tab.s == w->s;
    int64_t lo = t->n ? t->v[0].id : 0, hi = t->n ? t->v[t->n - 1].id : 0;
    bool dense = t->n && lo >= 0 && hi - lo < 65536;
    uint32_t *map = dense ? malloc((size_t)(hi - lo + 1) * sizeof *map) : NULL;
    wl_sum *acc = t->n ? calloc(t->n, sizeof *acc) : NULL;
    if ((dense && !map) || (t->n && !acc)) {
        free(map);
        free(acc);
        return RINGSIM_ENOMEM;
    }
    double *blk = t->n ? calloc(t->n, sizeof *blk) : NULL;
    if (t->n && !blk) {
        free(map);
        free(acc);
        return RINGSIM_ENOMEM;
    }
    for (int64_t i = 0; dense && i <= hi - lo; i++)
        map[i] = UINT32_MAX; /* an id between two nodes' ids: none */
    for (size_t k = 0; dense && k < t->n; k++)
        map[t->v[k].id - lo] = (uint32_t)k;
    /* Plain sums over blocks of ranks (a few hundred terms a node: an
     * error of some ulps), the blocks' sums compensated. */
    size_t block = t->n * 4 > 4096 ? t->n * 4 : 4096;
    bool lost = false;
    for (size_t i0 = 0; i0 < x->n; i0 += block) {
        size_t i1 = x->n - i0 > block ? i0 + block : x->n;
        for (size_t i = i0; i < i1; i++) {
            int64_t id = x->nodeat[i];
            if (id == STORE_NO_NODE)
                continue;
            size_t k = SIZE_MAX;
            if (dense && id >= lo && id <= hi)
                k = map[id - lo];
            if (k == UINT32_MAX || k == SIZE_MAX) {
                const tot *f = totals_find(t, id);
                if (!f) { /* the caller made every slot: cannot happen */
                    lost = true;
                    continue;
                }
                k = (size_t)(f - t->v);
            }
            blk[k] += zipf ? x->tab.w[i] : wl_share_of_rank(w, &x->norm, i + 1);
        }
        for (size_t k = 0; k < t->n; k++) {
            wl_sum_add(&acc[k], blk[k]);
            blk[k] = 0;
        }
    }
    free(blk);
    for (size_t k = 0; k < t->n; k++) {
        double v = wl_sum_get(&acc[k]);
        t->v[k].req = (wl_sum){zipf && x->norm.h > 0 ? v / x->norm.h : v, 0};
    }
    free(map);
    free(acc);
    return lost ? RINGSIM_EINTERNAL : 0; /* the caller drops the cache */
}

/* Ranks [from, from + count) to [to, ...), the arrays kept per rank. */
static void move_ranks(struct sim_wl *x, bool col, size_t to, size_t from, size_t count)
{
    if (to == from || !count)
        return;
    memmove(&x->ord[to], &x->ord[from], count * sizeof *x->ord);
    memmove(&x->nodeat[to], &x->nodeat[from], count * sizeof *x->nodeat);
    if (col)
        memmove(&x->colat[to], &x->colat[from], count * sizeof *x->colat);
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The hottest keys after the noted inserts (add, sorted by rank value)
 * and deletes (gone, sorted ranks), the arrays not yet changed: the kept
 * ones and the inserted ones before the first rank that stays past the
 * list (its rank value is known, its key is not).  RINGSIM_EINTERNAL when
 * that leaves fewer than WL_TOP (or m) keys: the caller builds again. */
static int top_after(struct sim_wl *x, const rk *add, size_t na, const size_t *gone, size_t nd,
                     size_t m, topkey *nt, size_t *nnt)
{
    size_t n = x->n, r = x->ntop, g = 0;
    while (g < nd && gone[g] < r)
        g++;
    while (r < n && g < nd && gone[g] == r) {
        r++;
        g++;
    }
    bool all = r >= n; /* every key that stays is listed */
    uint64_t bound = all ? UINT64_MAX : x->ord[r];
    size_t i = 0, a = 0, gi = 0;
    int rc = 0;
    *nnt = 0;
    while (!rc && *nnt < WL_TOP) {
        while (gi < nd && gone[gi] < i)
            gi++;
        if (i < x->ntop && gi < nd && gone[gi] == i) { /* deleted */
            i++;
            continue;
        }
        bool ins = a < na && (all || add[a].ord < bound) &&
                   (i >= x->ntop || add[a].ord < x->top[i].ord);
        if (ins) {
            const klent *e = &x->nadd.v[add[a].i];
            rc = top_put(nt, nnt, x->nadd.buf + e->off, e->len, add[a].ord, 0, false);
            a++;
        } else if (i < x->ntop) {
            rc = top_put(nt, nnt, x->top[i].key, x->top[i].len, x->top[i].ord, 0, false);
            i++;
        } else {
            break;
        }
    }
    if (!rc && *nnt < (m < WL_TOP ? m : WL_TOP))
        rc = RINGSIM_EINTERNAL; /* a listed key went: the next one's name is not kept */
    if (rc)
        top_free(nt, nnt);
    return rc;
}

/* The cache after the noted inserts and deletes, ranked by hash: the
 * deleted ranks taken out and the inserted merged in place (O(n) moves,
 * O(k log n) searches), then every node's requests summed again from the
 * weight table (O(n) additions: every rank after an inserted one shifts,
 * so every share changes).  Nonzero when it cannot be done exactly
 * (memory, a tie of rank values, the hottest key deleted): the caller
 * drops the cache. */
static int apply_notes(sim *s, struct sim_wl *x)
{
    const workload *w = &x->w;
    size_t n = x->n, na = x->nadd.n, nd = x->ndel.n;
    if (w->kind == WL_HOTSPOT && w->hot_share < w->hot_fraction)
        return RINGSIM_EINTERNAL; /* a cold key may be the hottest: built again */
    if (w->kind == WL_HOTSPOT && n + na >= nd) {
        /* the same with one hot key of fewer than hot_fraction x n */
        wl_norm hn;
        wl_norm_compute(w, n + na - nd, &hn);
        if (hn.hot < hn.n && wl_share_of_rank(w, &hn, hn.hot + 1) > wl_share_of_rank(w, &hn, 1))
            return RINGSIM_EINTERNAL;
    }
    if (x->colat && x->nadd_col_bad) {
        free(x->colat); /* an inserted key without a coordinate */
        x->colat = NULL;
    }
    bool col = x->colat != NULL;
    rk *add = na ? malloc(na * sizeof *add) : NULL;
    size_t *gone = nd ? malloc(nd * sizeof *gone) : NULL;
    int rc = (na && !add) || (nd && !gone) ? RINGSIM_ENOMEM : 0;
    for (size_t i = 0; !rc && i < nd; i++) {
        const klent *e = &x->ndel.v[i];
        uint64_t v = wl_hash_rank(w, s->h, x->ndel.buf + e->off, e->len);
        size_t at = lower(x->ord, n, v);
        if (at >= n || x->ord[at] != v)
            rc = RINGSIM_EINTERNAL;
        else
            gone[i] = at;
        tot *t = !rc && e->node != STORE_NO_NODE ? totals_slot(&x->tot, e->node) : NULL;
        if (t)
            t->bytes -= wl_size_of(w, s->h, x->ndel.buf + e->off, e->len);
    }
    if (!rc && nd > 1) {
        qsort(gone, nd, sizeof *gone, size_cmp);
        for (size_t i = 1; !rc && i < nd; i++)
            if (gone[i] == gone[i - 1])
                rc = RINGSIM_EINTERNAL;
    }
    for (size_t i = 0; !rc && i < na; i++) {
        const klent *e = &x->nadd.v[i];
        add[i] = (rk){wl_hash_rank(w, s->h, x->nadd.buf + e->off, e->len), e->node, i, 0};
        size_t at = add[i].at = lower(x->ord, n, add[i].ord);
        if (at < n && x->ord[at] == add[i].ord)
            rc = RINGSIM_EINTERNAL; /* a tie: the full build orders it */
        /* every node a key goes to has its slot before the sum below */
        tot *t = !rc && e->node != STORE_NO_NODE ? totals_slot(&x->tot, e->node) : NULL;
        if (!rc && e->node != STORE_NO_NODE && !t)
            rc = RINGSIM_ENOMEM;
        if (t)
            t->bytes += wl_size_of(w, s->h, x->nadd.buf + e->off, e->len);
    }
    if (!rc && na > 1) {
        qsort(add, na, sizeof *add, rk_cmp);
        for (size_t i = 1; !rc && i < na; i++)
            if (add[i].ord == add[i - 1].ord)
                rc = RINGSIM_EINTERNAL;
    }
    size_t m = n - nd + na;
    /* The hottest key is rank 1's: kept, or an inserted one. */
    size_t k = 0; /* the first rank kept */
    while (!rc && k < nd && gone[k] == k)
        k++;
    bool first_add = !rc && na && (k >= n || add[0].ord < x->ord[k]);
    if (!rc && m && k > 0 && !first_add)
        rc = RINGSIM_EINTERNAL; /* the hottest key went: its name is not kept */
    char *hot = NULL;
    size_t hot_len = 0;
    if (!rc && first_add) {
        const klent *e = &x->nadd.v[add[0].i];
        if (!(hot = strndup(x->nadd.buf + e->off, e->len)))
            rc = RINGSIM_ENOMEM;
        hot_len = e->len;
    }
    topkey nt[WL_TOP];
    size_t nnt = 0;
    if (!rc)
        rc = top_after(x, add, na, gone, nd, m, nt, &nnt);
    if (!rc && w->kind == WL_ZIPF && wl_table_reach(&x->tab, w->s, m))
        rc = RINGSIM_ENOMEM;
    if (!rc && m > x->rcap) { /* room first: nothing below can fail */
        size_t cap = m + m / 8 + 1024;
        uint64_t *o = realloc(x->ord, cap * sizeof *o);
        if (o)
            x->ord = o;
        int64_t *d = o ? realloc(x->nodeat, cap * sizeof *d) : NULL;
        if (d)
            x->nodeat = d;
        int64_t *cv = d && col ? realloc(x->colat, cap * sizeof *cv) : NULL;
        if (cv)
            x->colat = cv;
        if (!o || !d || (col && !cv))
            rc = RINGSIM_ENOMEM;
        else
            x->rcap = cap;
    }
    if (rc) {
        free(add);
        free(gone);
        free(hot);
        top_free(nt, &nnt);
        return rc;
    }
    /* Deleted ranks out, in place: the runs between them moved down. */
    size_t kept = nd ? gone[0] : n;
    for (size_t g = 0; g < nd; g++) {
        size_t from = gone[g] + 1, to = g + 1 < nd ? gone[g + 1] : n;
        move_ranks(x, col, kept, from, to - from);
        kept += to - from;
    }
    /* Inserted ranks in, from the back: the runs between them moved up. */
    for (size_t a = na, i = kept, j = m; a > 0; a--) {
        /* the kept before it: as before the operation when none went */
        size_t at = nd ? lower(x->ord, i, add[a - 1].ord) : add[a - 1].at;
        j -= i - at;
        move_ranks(x, col, j, at, i - at);
        i = at;
        j--;
        x->ord[j] = add[a - 1].ord;
        x->nodeat[j] = add[a - 1].node;
        if (col)
            x->colat[j] = x->nadd_col[add[a - 1].i];
    }
    x->n = m;
    if (hot) {
        free(x->hot);
        x->hot = hot;
        x->hot_len = hot_len;
    }
    wl_norm_table(w, &x->tab, m, &x->norm);
    top_free(x->top, &x->ntop);
    for (size_t i = 0; i < nnt; i++) {
        x->top[i] = nt[i];
        x->top[i].share = wl_share_table(w, &x->tab, &x->norm, i + 1);
    }
    x->ntop = nnt;
    rc = resum(x);
    x->max_share = m ? wl_share_table(w, &x->tab, &x->norm, 1) : 0;
    free(add);
    free(gone);
    return rc;
}

/* Commit: the cache follows the committed operation -- the new workload
 * (the cache goes), built for the state it leaves, moved by its delta,
 * the noted keys merged in, or dropped for the next read to build. */
static void wl_commit(opctx *c)
{
    sim *s = c->s;
    struct sim_wl *x = s->wl;
    if (!x)
        return;
    if (x->rekeyed && x->ccol == PLACE_COL_COORD && !x->post_built) {
        free(x->colat); /* coordinates may have changed */
        x->colat = NULL;
    }
    if (x->pend_set) {
        wl_free(&x->w);
        x->w = x->pend;
        wl_init(&x->pend);
        x->pend_set = false;
        cache_drop(x);
    } else if (x->post_built) {
        x->valid = true;
        x->at_op = s->at_op;
        x->dv = s->data_version;
    } else if (x->delta_ok && x->valid) {
        for (size_t i = 0; x->nodeat && i < x->nmv; i++)
            x->nodeat[x->mv_idx[i]] = x->mv_node[i];
        for (size_t i = 0; i < x->delta.n; i++) {
            tot *t = totals_slot(&x->tot, x->delta.v[i].id);
            if (!t) {
                cache_drop(x);
                break;
            }
            wl_sum_add(&t->req, wl_sum_get(&x->delta.v[i].req));
            t->bytes += x->delta.v[i].bytes;
        }
        x->at_op = s->at_op;
    } else if (x->note_state == 1 && x->valid && c->moved == 0 &&
               (strcmp(c->what, "insert_keys") == 0 || strcmp(c->what, "delete_keys") == 0)) {
        if (apply_notes(s, x))
            cache_drop(x); /* the next read builds it */
        else
            x->at_op = s->at_op;
    } else if (!(c->moved == 0 && topology_only(c->what) && x->valid)) {
        cache_drop(x);
    } else {
        x->at_op = s->at_op; /* nothing moved, nothing changed */
    }
    op_end(x);
}

/* Abort (a rollback, or a dry run's end): what the operation kept aside
 * goes, and a cache built for the state it would have left. */
static void wl_abort(opctx *c)
{
    sim *s = c->s;
    struct sim_wl *x = s->wl;
    if (!x)
        return;
    if (x->pend_set) {
        wl_free(&x->pend);
        x->pend_set = false;
    }
    if (x->post_built)
        cache_drop(x);
    op_end(x);
}

int sim__wl_at(sim *s, int64_t at, workload *out, rs_error *err)
{
    char *text = NULL;
    int rc = at > 0 ? store_op_workload(s->st, at, &text, err) : 0;
    if (!rc)
        rc = parse_text(text, out, err);
    else
        wl_init(out);
    free(text);
    return rc;
}

int sim__wl_from_log(sim *s, sim *origin, int64_t at, rs_error *err)
{
    struct sim_wl *x = wl_of(s);
    if (x) {
        x->origin = origin != s ? origin : NULL;
        x->origin_at = at;
    }
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    workload w;
    int rc = sim__wl_at(origin ? origin : s, at, &w, err);
    if (rc) {
        wl_free(&w);
        return rc;
    }
    wl_free(&x->w);
    x->w = w;
    cache_drop(x);
    return 0;
}

int sim_key_share(sim *s, const char *key, size_t len, double *share, rs_error *err)
{
    *share = 0;
    int rc = ensure(s, err);
    if (rc)
        return rc;
    int64_t n = sim_key_count(s);
    if (simple(&s->wl->w)) {
        *share = n ? 1.0 / (double)n : 0;
        return 0;
    }
    return share_of(s, key, len, share, err);
}

int sim_key_bytes(sim *s, const char *key, size_t len, int64_t *bytes, rs_error *err)
{
    struct sim_wl *x = wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    *bytes = wl_size_of(&x->w, sim_hasher(s), key, len);
    return 0;
}

/* Heavy (sim_refresh_light): whether a reload would leave s with a cache
 * to build at the next read -- the workload in memory or the stored one
 * is not the default. */
static int wl_heavy(sim *s, bool *build, rs_error *err)
{
    struct sim_wl *x = wl_of(s);
    *build = false;
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!simple(&x->w)) {
        *build = true;
        return 0;
    }
    workload w;
    int rc = stored_workload(s, &w, err);
    if (rc)
        return rc;
    *build = !simple(&w);
    wl_free(&w);
    return 0;
}

int sim_workload_warm(sim *s, rs_error *err) { return ensure(s, err); }

bool sim_workload_ready(sim *s)
{
    struct sim_wl *x = wl_of(s);
    return x && (simple(&x->w) || (x->valid && x->at_op == s->at_op && x->dv == s->data_version));
}

int sim_workload_after(sim *s, int64_t op, json_t **out, rs_error *err)
{
    workload w;
    *out = NULL;
    int rc = sim__wl_at(s, op, &w, err);
    if (!rc && !(*out = wl_to_json(&w)))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    wl_free(&w);
    return rc;
}

/* The workload in the operation frame (sim_participants.c). */
const sim_participant sim_participant_workload = {
    .name = "workload",
    .load = wl_load,
    .heavy = wl_heavy,
    .prepare = wl_prepare,
    .commit = wl_commit,
    .abort = wl_abort,
    .close = wl_close,
};
