/*
 * sim_workload_stats.c - the answers the workload's cache gives (docs/api.md
 * "Version 3: traffic", v4's bound and hottest keys): each node's requests
 * and bytes, the requests' stats (balance against fair shares, the hottest
 * keys, the bound), what nobody serves, every stored key's share in rank
 * order (the traffic replay's input), one key's share and size, and the
 * workload in effect after any operation (the log's ops.workload).
 *
 * Under the default workload every figure comes from the key counters in
 * O(nodes); otherwise from the cache (sim_workload.c), built on first read
 * (about a second at a million keys) and then O(nodes) a figure, O(log n)
 * a key's share.  sim_workload_each reads and sorts every key: O(n log n).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_workload_int.h"

/* ---- reads ---- */

const workload *sim__wl_get(sim *s)
{
    struct sim_wl *x = sim__wl_of(s);
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
    int rc = sim__wl_ensure(s, err);
    if (rc)
        return rc;
    const node *nd = &s->cur.nodes[index];
    const workload *w = &s->wl->w;
    int64_t total = sim_key_count(s);
    if (sim__wl_simple(w)) {
        *requests = total ? (double)nd->keys / (double)total : 0;
        *bytes = nd->keys * wl_fixed_bytes(w);
        return 0;
    }
    const tot *t = sim__wl_totals_find(&s->wl->tot, nd->id);
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
    int rc = sim__wl_ensure(s, err);
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
        if (sim__wl_simple(&x->w)) {
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

int sim_unavailable_get(sim *s, sim_unavailable *o, rs_error *err)
{
    memset(o, 0, sizeof *o);
    int64_t keys = sim_key_count(s);
    o->keys = s->cur.unassigned; /* the stored keys with no node */
    if (!o->keys || !keys)
        return 0;
    o->key_share = (double)o->keys / (double)keys;
    int rc = sim__wl_ensure(s, err);
    if (rc)
        return rc;
    const workload *w = &s->wl->w;
    if (sim__wl_simple(w)) {
        o->requests_share = o->key_share;
        o->bytes = o->keys * wl_fixed_bytes(w);
        return 0;
    }
    /* The shares the nodes serve, the rest nobody does. */
    double served = 0;
    for (size_t i = 0; i < s->cur.n; i++) {
        const tot *t = sim__wl_totals_find(&s->wl->tot, s->cur.nodes[i].id);
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
    rc = store_keys_page(s->st, &q, &total, sim__wl_unav_bytes, &u, err);
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
        sh = sim__wl_keys_share(&e->kn, wl_find(w->keys, w->nkeys, k->key, k->len));
    if (e->fn(e->ud, k->key, k->len, sh)) {
        e->stop = 1;
        return 1;
    }
    return 0;
}

int sim_workload_each(sim *s, sim_share_fn fn, void *ud, rs_error *err)
{
    int rc = sim__wl_ensure(s, err);
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
            if ((rc = sim__wl_keys_stored(s, w, &listed, &sum, &hot, lt, &nlt, err)))
                return rc;
            sim__wl_keys_norm(w, e.n, listed, sum, &e.kn);
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
        v[i].ord = sim__wl_rank_value(s, w, l.buf + l.v[i].off, l.v[i].len);
        v[i].kidx = (uint32_t)i;
    }
    if (l.n > 1)
        qsort(v, l.n, sizeof *v, sim__wl_ent_cmp);
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

int sim__wl_at(sim *s, int64_t at, workload *out, rs_error *err)
{
    char *text = NULL;
    int rc = at > 0 ? store_op_workload(s->st, at, &text, err) : 0;
    if (!rc)
        rc = sim__wl_parse(text, out, err);
    else
        wl_init(out);
    free(text);
    return rc;
}

int sim__wl_from_log(sim *s, sim *origin, int64_t at, rs_error *err)
{
    struct sim_wl *x = sim__wl_of(s);
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
    sim__wl_cache_drop(x);
    return 0;
}

static int share_of(sim *s, const char *key, size_t len, double *out, rs_error *err)
{
    size_t r;
    return sim__wl_share_of_at(s, key, len, out, &r, err);
}

int sim_key_share(sim *s, const char *key, size_t len, double *share, rs_error *err)
{
    *share = 0;
    int rc = sim__wl_ensure(s, err);
    if (rc)
        return rc;
    int64_t n = sim_key_count(s);
    if (sim__wl_simple(&s->wl->w)) {
        *share = n ? 1.0 / (double)n : 0;
        return 0;
    }
    return share_of(s, key, len, share, err);
}

int sim_key_bytes(sim *s, const char *key, size_t len, int64_t *bytes, rs_error *err)
{
    struct sim_wl *x = sim__wl_of(s);
    if (!x)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    *bytes = wl_size_of(&x->w, sim_hasher(s), key, len);
    return 0;
}

int sim_workload_warm(sim *s, rs_error *err) { return sim__wl_ensure(s, err); }

bool sim_workload_ready(sim *s)
{
    struct sim_wl *x = sim__wl_of(s);
    return x &&
           (sim__wl_simple(&x->w) || (x->valid && x->at_op == s->at_op && x->dv == s->data_version));
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
