/*
 * sim_workload.c - the engine's workload: the share of requests and the
 * value size of every stored key, per node and per operation, exactly
 * (docs/api.md "Version 3: traffic"); this file is its cache.
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
 * taken: load_node() here (every read of the cache); the default
 * workload's shortcut in sim_node_load() (sim_workload_stats.c: the
 * owners' key counters); the moves read back in mv_fn() (owner changes)
 * and the notes of sim__wl_note() (the owner an insert or delete gives),
 * both in sim_workload_follow.c.  Serving by another node changes these
 * four.
 *
 * Three files (sim_workload_int.h lists them): this one keeps and builds
 * the cache and finds a key's share in it; sim_workload_stats.c answers
 * from it; sim_workload_follow.c is the workload's participant in the
 * operation frame, which keeps the cache and writes each operation's
 * loads.  The workload operation is in sim_ops.c.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_workload_int.h"
#include "vec.h"

void sim__wl_top_free(topkey *v, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free(v[i].key);
    *n = 0;
}

/* Into v (n of WL_TOP): by_ord, before the first entry whose ord is
 * larger (the WL_TOP smallest rank values, ties to the one given first);
 * otherwise at the end. */
int sim__wl_top_put(topkey *v, size_t *n, const char *key, size_t len, uint64_t ord, double share,
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

void sim__wl_totals_free(totals *t)
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

tot *sim__wl_totals_slot(totals *t, int64_t id)
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

const tot *sim__wl_totals_find(const totals *t, int64_t id)
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

void sim__wl_cache_drop(struct sim_wl *x)
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
    sim__wl_top_free(x->top, &x->ntop);
    x->n = 0;
    x->kn = (keys_norm){0, 0, 0, 1};
    x->ties = false;
    x->max_share = 0;
    sim__wl_totals_free(&x->tot);
    x->valid = false;
}

struct sim_wl *sim__wl_of(sim *s)
{
    if (!s->wl && (s->wl = calloc(1, sizeof *s->wl))) {
        wl_init(&s->wl->w);
        wl_init(&s->wl->pend);
    }
    return s->wl;
}

/* The one place that says which node a key's requests go to. */
static int64_t load_node(const store_key *k) { return k->node; }

int sim__wl_parse(const char *text, workload *out, rs_error *err)
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
int sim__wl_stored(sim *s, workload *w, rs_error *err)
{
    char *text = NULL;
    int rc = store_meta_get(s->st, "workload", &text, err);
    if (!rc)
        rc = sim__wl_parse(text, w, err);
    free(text);
    return rc;
}

bool sim__wl_simple(const workload *w) { return wl_is_uniform(w) && wl_sizes_fixed(w); }

/* ---- building the cache ---- */

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
uint64_t sim__wl_rank_value(sim *s, const workload *w, const char *key, size_t len)
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
        sim__wl_top_put(b->top, &b->ntop, k->key, k->len, 0, 0, false))
        return rs_fail(b->err, RINGSIM_ENOMEM, "out of memory");
    ent *e = &b->v[b->n];
    e->ord = wl_ranked(b->w) ? sim__wl_rank_value(b->s, b->w, k->key, k->len) : 0;
    e->kidx = (uint32_t)b->n;
    if (wl_ranked(b->w) && (b->n == 0 || e->ord < b->best_ord)) {
        /* ties keep the first by key bytes: the scan is in that order */
        b->best_ord = e->ord;
        b->best_len = k->len < sizeof b->best ? k->len : sizeof b->best;
        memcpy(b->best, k->key, b->best_len);
    }
    if (wl_ranked(b->w) && sim__wl_top_put(b->top, &b->ntop, k->key, k->len, e->ord, 0, true))
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

int sim__wl_ent_cmp(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->ord != y->ord)
        return x->ord < y->ord ? -1 : 1;
    return (x->kidx > y->kidx) - (x->kidx < y->kidx);
}

/* The shares of kind keys: keys_norm (sim_workload_int.h). */

void sim__wl_keys_norm(const workload *w, size_t n, size_t listed, double sum, keys_norm *o)
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

double sim__wl_keys_share(const keys_norm *o, const wl_item *e)
{
    if (!e)
        return o->rest;
    if (o->scale == 0) /* every key listed, every share 0: all equal */
        return 1.0 / (double)o->listed;
    return e->share * o->scale;
}

/* Which listed keys are stored: their count and shares' sum. */
int sim__wl_keys_stored(sim *s, const workload *w, size_t *listed, double *sum, const wl_item **hot,
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
            double ls = i < nlt ? sim__wl_keys_share(&x->kn, lt[i]) : -1;
            if (i < nlt && (j >= b->ntop || ls >= x->kn.rest)) {
                rc = sim__wl_top_put(x->top, &x->ntop, lt[i]->key, lt[i]->len, 0, ls, false);
                i++;
            } else {
                rc = sim__wl_top_put(x->top, &x->ntop, b->top[j].key, b->top[j].len, 0, x->kn.rest,
                                     false);
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
int sim__wl_cache_build(sim *s, int64_t at, const placement *pl, rs_error *err)
{
    struct sim_wl *x = s->wl;
    const workload *w = &x->w;
    sim__wl_cache_drop(x);
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
        if (!(rc = sim__wl_keys_stored(s, w, &listed, &sum, &khot, lt, &nlt, err)))
            sim__wl_keys_norm(w, b.n, listed, sum, &kn);
    }
    if (rc)
        goto out;
    if (wl_ranked(w)) {
        if (b.n > 1)
            qsort(b.v, b.n, sizeof *b.v, sim__wl_ent_cmp);
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
        tot *t = sim__wl_totals_slot(&x->tot, b.v[i].node);
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
            tot *t = sim__wl_totals_slot(&x->tot, load_node(&k));
            if (!t) {
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
                break;
            }
            wl_sum_add(&t->req, sim__wl_keys_share(&kn, &w->keys[i]));
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
        } else if (w->kind == WL_KEYS && khot && sim__wl_keys_share(&kn, khot) >= kn.rest) {
            x->max_share = sim__wl_keys_share(&kn, khot);
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
    sim__wl_top_free(b.top, &b.ntop);
    free(b.v);
    free(b.first);
    if (rc)
        sim__wl_cache_drop(x);
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
int sim__wl_sizes_fit(const workload *w, int64_t keys, rs_error *err)
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

int sim__wl_ensure(sim *s, rs_error *err)
{
    struct sim_wl *x = sim__wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    /* A file written before the bound (sizes up to 2^50 on any number of
     * keys): refused here with the way out, never summed past int64. */
    int rc0 = sim__wl_sizes_fit(&x->w, sim_key_count(s), err);
    if (rc0)
        return rc0;
    if (sim__wl_simple(&x->w))
        return 0;
    if (s->preview) {
        /* Inside a dry run, reading the state it would leave: built for
         * that state (once), dropped with the rollback. */
        if (x->post_built)
            return 0;
        int rc = sim__wl_cache_build(s, s->record ? sim_last_op(s) : -1, NULL, err);
        x->post_built = rc == 0;
        return rc;
    }
    if (x->valid && x->at_op == s->at_op && x->dv == s->data_version)
        return 0;
    int rc = sim__wl_cache_build(s, -1, s->cur.pl, err);
    if (rc) {
        sim__wl_cache_drop(x);
        return rc;
    }
    x->valid = true;
    x->at_op = s->at_op;
    x->dv = s->data_version;
    return 0;
}

int sim__wl_share_of_at(sim *s, const char *key, size_t len, double *out, size_t *rank, rs_error *err)
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
        *out = sim__wl_keys_share(&x->kn, wl_find(w->keys, w->nkeys, key, len));
        return 0;
    }
    uint64_t v = sim__wl_rank_value(s, w, key, len);
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

/* The bytes of the keys nobody serves, one store_keys_page callback
 * (stats and an operation's unavailable_after). */
int sim__wl_unav_bytes(void *ud, const store_key *k)
{
    unav_ctx *u = ud;
    u->bytes += wl_size_of(u->w, u->h, k->key, k->len);
    return 0;
}
