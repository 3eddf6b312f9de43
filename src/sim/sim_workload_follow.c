/*
 * sim_workload_follow.c - the workload in the operation frame: its
 * participant (sim_participant_workload, at the end), which keeps the
 * cache (sim_workload.c) true across every operation and gives each
 * operation its loads (requests_moved, bytes_moved, the pairs' shares and
 * bytes, what nobody serves after it; docs/api.md v3 and v4).
 *
 * Phases: load reads the stored workload (the cache goes); prepare, before
 * the log entry is finished, writes the workload the operation leaves and
 * counts the moved keys' shares -- from the counters under the default,
 * from memory when every move was a range of the placement's column
 * (sim__wl_range), else from the log's moves read back, O(moved log n);
 * commit moves the cache's node totals by the operation's delta, merges
 * the noted inserts and deletes (apply_notes), or drops the cache; abort
 * drops what the operation kept aside.  The operations tell it what they
 * do as they go (sim__wl_note, sim__wl_range, sim__wl_rekeyed), and revert
 * the workload it leaves (sim__wl_set_pending).  Costs: see sim_workload.c.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "sim_workload_int.h"
#include "vec.h"

/* ---- following an operation ---- */

int sim__wl_set_pending(opctx *c, const workload *w, rs_error *err)
{
    struct sim_wl *x = sim__wl_of(c->s);
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
        int rc = sim__wl_share_of_at(m->s, key, len, &sh, &rank, m->err);
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
        tot *tf = f != STORE_NO_NODE ? sim__wl_totals_slot(&x->delta, f) : NULL;
        tot *tt = t != STORE_NO_NODE ? sim__wl_totals_slot(&x->delta, t) : NULL;
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
        tot *tf = r[j].from != STORE_NO_NODE ? sim__wl_totals_slot(&x->delta, r[j].from) : NULL;
        tot *tt = r[j].to != STORE_NO_NODE ? sim__wl_totals_slot(&x->delta, r[j].to) : NULL;
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
        sim__wl_totals_free(&x->delta);
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
        int rc = store_keys_page(s->st, &q, &total, sim__wl_unav_bytes, &u, err);
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
        const tot *t = sim__wl_totals_find(&x->tot, c->next.nodes[i].id);
        const tot *d = valid == 1 ? sim__wl_totals_find(&x->delta, c->next.nodes[i].id) : NULL;
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
    struct sim_wl *x = sim__wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    sim__wl_totals_free(&x->delta);
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
    if ((rc = sim__wl_sizes_fit(w, keys, err)))
        return rc;
    int valid_after = 0; /* the cache holds the state after: 1 with delta, 2 built for it */
    if (c->moved > 0 && sim__wl_simple(w)) {
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
            rc = sim__wl_cache_build(s, c->op, c->next.pl ? c->next.pl : s->cur.pl, err);
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
    sim__wl_totals_free(&x->delta);
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
                const tot *f = sim__wl_totals_find(t, id);
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
            rc = sim__wl_top_put(nt, nnt, x->nadd.buf + e->off, e->len, add[a].ord, 0, false);
            a++;
        } else if (i < x->ntop) {
            rc = sim__wl_top_put(nt, nnt, x->top[i].key, x->top[i].len, x->top[i].ord, 0, false);
            i++;
        } else {
            break;
        }
    }
    if (!rc && *nnt < (m < WL_TOP ? m : WL_TOP))
        rc = RINGSIM_EINTERNAL; /* a listed key went: the next one's name is not kept */
    if (rc)
        sim__wl_top_free(nt, nnt);
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
        tot *t = !rc && e->node != STORE_NO_NODE ? sim__wl_totals_slot(&x->tot, e->node) : NULL;
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
        tot *t = !rc && e->node != STORE_NO_NODE ? sim__wl_totals_slot(&x->tot, e->node) : NULL;
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
        sim__wl_top_free(nt, &nnt);
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
    sim__wl_top_free(x->top, &x->ntop);
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
        sim__wl_cache_drop(x);
    } else if (x->post_built) {
        x->valid = true;
        x->at_op = s->at_op;
        x->dv = s->data_version;
    } else if (x->delta_ok && x->valid) {
        for (size_t i = 0; x->nodeat && i < x->nmv; i++)
            x->nodeat[x->mv_idx[i]] = x->mv_node[i];
        for (size_t i = 0; i < x->delta.n; i++) {
            tot *t = sim__wl_totals_slot(&x->tot, x->delta.v[i].id);
            if (!t) {
                sim__wl_cache_drop(x);
                break;
            }
            wl_sum_add(&t->req, wl_sum_get(&x->delta.v[i].req));
            t->bytes += x->delta.v[i].bytes;
        }
        x->at_op = s->at_op;
    } else if (x->note_state == 1 && x->valid && c->moved == 0 &&
               (strcmp(c->what, "insert_keys") == 0 || strcmp(c->what, "delete_keys") == 0)) {
        if (apply_notes(s, x))
            sim__wl_cache_drop(x); /* the next read builds it */
        else
            x->at_op = s->at_op;
    } else if (!(c->moved == 0 && topology_only(c->what) && x->valid)) {
        sim__wl_cache_drop(x);
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
        sim__wl_cache_drop(x);
    op_end(x);
}

/* Load, with the state: the stored workload; the cache goes. */
static int wl_load(sim *s, rs_error *err)
{
    struct sim_wl *x = sim__wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    workload w;
    int rc = sim__wl_stored(s, &w, err);
    if (rc)
        return rc;
    wl_free(&x->w);
    x->w = w;
    sim__wl_cache_drop(x);
    return 0;
}

/* Heavy (sim_refresh_light): whether a reload would leave s with a cache
 * to build at the next read -- the workload in memory or the stored one
 * is not the default. */
static int wl_heavy(sim *s, bool *build, rs_error *err)
{
    struct sim_wl *x = sim__wl_of(s);
    *build = false;
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!sim__wl_simple(&x->w)) {
        *build = true;
        return 0;
    }
    workload w;
    int rc = sim__wl_stored(s, &w, err);
    if (rc)
        return rc;
    *build = !sim__wl_simple(&w);
    wl_free(&w);
    return 0;
}

/* Close: everything s kept for the workload. */
static void wl_close(sim *s)
{
    if (!s->wl)
        return;
    sim__wl_cache_drop(s->wl);
    op_end(s->wl);
    free(s->wl->mv_idx);
    free(s->wl->mv_node);
    free(s->wl->rmv);
    free(s->wl->nadd_col);
    wl_table_free(&s->wl->tab);
    wl_free(&s->wl->w);
    wl_free(&s->wl->pend);
    sim__wl_totals_free(&s->wl->delta);
    free(s->wl);
    s->wl = NULL;
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
