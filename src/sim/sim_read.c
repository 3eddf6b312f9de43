/*
 * sim_read.c - answers about the current state: nodes, statistics, lookups,
 * pages of keys, density; and the log as it is read back (its operations,
 * moves and keys, the chain of states back over reverts and resets).
 * Statistics come from counters; nothing here writes.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ---- reads ---- */

const place_config *sim_config(const sim *s) { return &s->cur.cfg; }
const placement *sim_placement(const sim *s) { return s->cur.pl; }
size_t sim_node_count(const sim *s) { return s->cur.n; }
const char *const *sim_node_names(const sim *s) { return s->cur.names; }
const place_node *sim_place_nodes(const sim *s) { return s->cur.pn; }
hasher *sim_hasher(sim *s) { return s->h; }
int64_t sim_unassigned(const sim *s) { return s->cur.unassigned; }
int64_t sim_last_op(sim *s)
{
    int64_t v;
    int rc = store_last_op(s->st, &v, NULL);
    return rc ? rc : v;
}

const char *sim_node_name(const sim *s, size_t i, size_t *len)
{
    if (len)
        *len = s->cur.nodes[i].len;
    return s->cur.nodes[i].name;
}

void sim_key_where(sim *s, const char *key, size_t len, sim_where *out)
{
    place_key(s->cur.pl, s->h, key, len, &out->info);
    out->nprefs = place_prefs(s->cur.pl, &out->info, s->cur.cfg.replicas, out->prefs);
}

void sim_fair_weights(sim *s, double *w, size_t n) { place_fair_weights(s->cur.pl, w, n); }

void sim_balance(const double *load, const double *w, size_t n, double *max_over_mean, double *cv)
{
    double sum = 0, wsum = 0, wone = 0, max = 0, sq = 0;
    size_t m = 0;
    bool equal = true;
    *max_over_mean = 0;
    *cv = 0;
    for (size_t i = 0; i < n; i++) {
        sum += load[i];
        if (w[i] > 0) {
            equal = equal && (m == 0 || w[i] == wone);
            wone = w[i];
            wsum += w[i];
            m++;
        }
    }
    if (!(sum > 0) || m == 0)
        return;
    if (equal) { /* version 3's arithmetic */
        double esum = 0;
        for (size_t i = 0; i < n; i++)
            if (w[i] > 0) {
                esum += load[i];
                max = load[i] > max ? load[i] : max;
            }
        double mean = esum / (double)m;
        for (size_t i = 0; i < n; i++)
            if (w[i] > 0)
                sq += (load[i] - mean) * (load[i] - mean);
        if (mean > 0) {
            *max_over_mean = max / mean;
            *cv = sqrt(sq / (double)m) / mean;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(w[i] > 0))
            continue;
        double r = load[i] / (sum * w[i] / wsum);
        max = r > max ? r : max;
        sq += w[i] / wsum * (r - 1) * (r - 1);
    }
    *max_over_mean = max;
    *cv = sqrt(sq);
}

/* Stored keys that a node serves (the others: nobody serves them). */
static int64_t served_keys(const sim *s)
{
    int64_t served = 0;
    for (size_t i = 0; i < s->cur.n; i++)
        served += s->cur.nodes[i].keys;
    return served;
}

static void node_view(sim *s, size_t i, const double *arc, const double *owns, int64_t total,
                      sim_node_view *v)
{
    const node *x = &s->cur.nodes[i];
    v->name = x->name;
    v->len = x->len;
    v->position = hash_position(s->h, x->name, x->len);
    v->weight = x->weight;
    v->points = place_node_size(s->cur.pl, i);
    v->index = i;
    v->keys = x->keys;
    v->key_share = total > 0 ? (double)x->keys / (double)total : 0;
    v->arc_share = arc[i];
    v->owns = owns[i];
    v->down = x->down;
    v->backup = x->backup;
    v->replicas = (const char *const *)x->replicas;
    v->nreplicas = x->nreplicas;
    v->loc = x->loc;
    v->nloc = x->nloc;
    v->serving_points = place_serving_size(s->cur.pl, i);
    const double *w = owns + s->cur.n + 1;
    double wsum = 0;
    for (size_t k = 0; k < s->cur.n; k++)
        wsum += w[k];
    v->fair_share = w[i] > 0 ? w[i] / wsum : 0;
    int64_t served = served_keys(s);
    v->load_over_fair = !(w[i] > 0)  ? -1
                        : served > 0 ? (double)x->keys / ((double)served * w[i] / wsum)
                                     : 0;
}

static int cmp_node_view(const void *a, const void *b)
{
    const sim_node_view *x = a, *y = b;
    if (x->position != y->position)
        return x->position < y->position ? -1 : 1;
    return sim__cmp_bytes(x->name, x->len, y->name, y->len);
}

int sim_nodes(sim *s, sim_node_view **out, size_t *n, rs_error *err)
{
    size_t k = s->cur.n;
    sim_node_view *v = malloc((k + 1) * sizeof *v);
    /* owns[k + 1 ..]: the fair shares */
    double *arc = malloc((k + 1) * sizeof *arc), *owns = malloc((2 * k + 1) * sizeof *owns);
    if (!v || !arc || !owns) {
        free(v);
        free(arc);
        free(owns);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    place_shares(s->cur.pl, arc, k);
    place_owns(s->cur.pl, s->cur.cfg.replicas, owns, k);
    place_fair_weights(s->cur.pl, owns + k + 1, k);
    int64_t total = sim_key_count(s);
    for (size_t i = 0; i < k; i++)
        node_view(s, i, arc, owns, total, &v[i]);
    free(arc);
    free(owns);
    qsort(v, k, sizeof *v, cmp_node_view);
    *out = v;
    *n = k;
    return 0;
}

int sim_node_get(sim *s, const char *name, size_t len, sim_node_view *out, rs_error *err)
{
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    long i = sim__find_node(&s->cur, name, len);
    if (i < 0)
        return rs_fail(err, RINGSIM_ENOTFOUND, "node \"%.*s\" not found", (int)len, name);
    double *arc = malloc((s->cur.n + 1) * sizeof *arc);
    double *owns = malloc((2 * s->cur.n + 1) * sizeof *owns); /* then the fair shares */
    if (!arc || !owns) {
        free(arc);
        free(owns);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    place_shares(s->cur.pl, arc, s->cur.n);
    place_owns(s->cur.pl, s->cur.cfg.replicas, owns, s->cur.n);
    place_fair_weights(s->cur.pl, owns + s->cur.n + 1, s->cur.n);
    node_view(s, (size_t)i, arc, owns, sim_key_count(s), out);
    free(arc);
    free(owns);
    return 0;
}

void sim_stats_get(sim *s, sim_stats *o)
{
    memset(o, 0, sizeof *o);
    size_t n = s->cur.n;
    o->nodes = (int64_t)n;
    o->keys = sim_key_count(s);
    o->unavailable = o->keys - served_keys(s);
    if (n == 0)
        return;
    double *fair = malloc(n * sizeof *fair), *load = malloc(n * sizeof *load);
    if (!fair || !load) { /* cannot fail: every node counts as 1 */
        free(fair);
        free(load);
        fair = load = NULL;
    } else {
        place_fair_weights(s->cur.pl, fair, n);
    }
    double sum = 0, sq = 0;
    int64_t m = 0;
    o->min = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        int64_t k = s->cur.nodes[i].keys;
        if (load)
            load[i] = (double)k;
        if (fair && !(fair[i] > 0))
            continue;
        m++;
        sum += (double)k;
        o->min = k < o->min ? k : o->min;
        o->max = k > o->max ? k : o->max;
    }
    o->fair = m;
    if (m == 0) {
        o->min = 0;
        free(fair);
        free(load);
        return;
    }
    o->mean = sum / (double)m;
    for (size_t i = 0; i < n; i++) {
        if (fair && !(fair[i] > 0))
            continue;
        double d = (double)s->cur.nodes[i].keys - o->mean;
        sq += d * d;
    }
    o->stddev = sqrt(sq / (double)m);
    if (fair) {
        sim_balance(load, fair, n, &o->max_over_mean, &o->cv);
    } else {
        o->cv = o->mean > 0 ? o->stddev / o->mean : 0;
        o->max_over_mean = o->mean > 0 ? (double)o->max / o->mean : 0;
    }
    free(fair);
    free(load);
}

int sim_lookup(sim *s, const char *key, size_t len, sim_lookup_result *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = name_check(key, len, "key", err);
    if (rc)
        return rc;
    hash_sha256_hex(s->h, key, len, out->sha256);
    place_key(s->cur.pl, s->h, key, len, &out->info);
    out->position = out->info.position;
    long o = out->info.owner;
    if (o >= 0) {
        out->node = s->cur.nodes[o].name;
        out->node_len = s->cur.nodes[o].len;
    }
    long sv = out->info.served;
    if (sv >= 0 && out->info.via >= 0) {
        out->served_by = s->cur.nodes[sv].replicas[out->info.via];
        out->served_len = strlen(out->served_by);
    } else if (sv >= 0) {
        out->served_by = s->cur.nodes[sv].name;
        out->served_len = s->cur.nodes[sv].len;
    }
    out->nprefs = place_prefs(s->cur.pl, &out->info, s->cur.cfg.replicas, out->prefs);
    out->has_point = place_point_of(s->cur.pl, &out->info, &out->point);
    store_key k;
    rs_error e2;
    rc = store_key_find(s->st, key, len, &k, &e2);
    if (rc && rc != RINGSIM_ENOTFOUND)
        return rs_fail(err, rc, "%s", e2.msg);
    out->stored = rc == 0;
    return 0;
}

typedef struct page_ctx {
    sim *s;
    sim_key_fn fn;
    void *ud;
    /* While some node is down a stored key's node is its server, and a
     * filter by owner (docs/api.md: `node` filters by owner) places every
     * key: owner >= 0 keeps the keys it owns, skip and left page them,
     * matched counts them. */
    long owner;
    int64_t skip, left, matched;
} page_ctx;

static int page_step(void *ud, const store_key *k)
{
    page_ctx *p = ud;
    if (p->owner >= 0) {
        place_key_info ki;
        place_key(p->s->cur.pl, p->s->h, k->key, k->len, &ki);
        if (ki.owner != p->owner || ++p->matched <= p->skip || p->left == 0)
            return 0;
        p->left--;
    }
    long o = k->node == STORE_NO_NODE ? -1 : sim__find_node_id(&p->s->cur, k->node);
    return p->fn(p->ud, k->key, k->len, k->pos, o < 0 ? NULL : p->s->cur.nodes[o].name,
                 o < 0 ? 0 : p->s->cur.nodes[o].len);
}

int sim_keys_page(sim *s, const char *node, size_t node_len, const char *prefix, size_t prefix_len,
                  int64_t offset, int64_t limit, int64_t *total, sim_key_fn fn, void *ud,
                  rs_error *err)
{
    return sim_keys_page_ordered(s, node, node_len, prefix, prefix_len, SIM_ORDER_POSITION, false,
                                 offset, limit, total, fn, ud, err);
}

int sim_keys_page_ordered(sim *s, const char *node, size_t node_len, const char *prefix,
                          size_t prefix_len, sim_key_order order, bool desc, int64_t offset,
                          int64_t limit, int64_t *total, sim_key_fn fn, void *ud, rs_error *err)
{
    store_key_query q = {0,   false, prefix, prefix_len, offset, limit, -1, STORE_ORDER_POSITION,
                         desc};
    /* Coordinates are stored where they are not the position (the seed's
     * ring keeps none, and rendezvous has none): there the position is the
     * coordinate order. */
    if (order == SIM_ORDER_KEY)
        q.order = STORE_ORDER_KEY;
    else if (order == SIM_ORDER_COORDINATE && place_column(s->cur.pl) == PLACE_COL_COORD)
        q.order = STORE_ORDER_COORD;
    /* An empty prefix filters nothing; any other must be a possible start
     * of a key: 1 to 255 bytes under the name rules. */
    bool pre = prefix && prefix_len;
    int rc = pre ? name_check(prefix, prefix_len, "key prefix", err) : 0;
    if (rc)
        return rc;
    if (offset < 0 || limit < 0)
        return rs_fail(err, RINGSIM_EPARAM, "offset and limit must be 0 or more");
    if (node) {
        if ((rc = name_check(node, node_len, "node name", err)))
            return rc;
        long i = sim__find_node(&s->cur, node, node_len);
        if (i < 0)
            return rs_fail(err, RINGSIM_ENOTFOUND, "node \"%.*s\" not found", (int)node_len, node);
        q.by_node = true;
        q.node = s->cur.nodes[i].id;
        if (!pre) /* the counter is the count */
            q.known_total = s->cur.nodes[i].keys;
    } else if (!pre) {
        q.known_total = sim_key_count(s);
    }
    page_ctx p = {s, fn, ud, -1, 0, 0, 0};
    if (node && place_down_count(s->cur.pl)) { /* by owner: every key placed, O(keys) */
        p.owner = sim__find_node(&s->cur, node, node_len);
        p.skip = offset;
        p.left = limit;
        q.by_node = false;
        q.offset = 0;
        q.limit = INT64_MAX;
        q.known_total = -1;
    }
    rc = store_keys_page(s->st, &q, total, page_step, &p, err);
    if (!rc && p.owner >= 0)
        *total = p.matched;
    return rc;
}

int sim_key_get(sim *s, const char *key, size_t len, uint32_t *pos, const char **node,
                size_t *node_len, rs_error *err)
{
    int rc = name_check(key, len, "key", err);
    store_key k;
    if (rc || (rc = store_key_find(s->st, key, len, &k, err)))
        return rc;
    long o = k.node == STORE_NO_NODE ? -1 : sim__find_node_id(&s->cur, k.node);
    *pos = k.pos;
    *node = o < 0 ? NULL : s->cur.nodes[o].name;
    *node_len = o < 0 ? 0 : s->cur.nodes[o].len;
    return 0;
}

int sim_density(sim *s, uint32_t bins, int64_t *counts, const char **by, rs_error *err)
{
    int col = place_column(s->cur.pl);
    *by = col >= 0 ? "coordinate" : "position";
    return store_keys_density(s->st, col == PLACE_COL_COORD, place_top(s->cur.pl), bins, counts, err);
}

/* ---- the log and the stored keys ---- */

int sim_log_each(sim *s, int64_t after, int64_t limit, sim_op_fn fn, void *ud, rs_error *err)
{
    return store_ops_each(s->st, after, limit, fn, ud, err);
}

int sim_op_v4(sim *s, int64_t id, json_t **out, rs_error *err)
{
    char name[64], *text = NULL;
    *out = NULL;
    snprintf(name, sizeof name, "%s%lld", SIM_V4_PREFIX, (long long)id);
    int rc = store_meta_get(s->st, name, &text, err);
    if (!rc && !text) { /* nothing moved, every key served; or logged before v4 */
        char *since = NULL;
        rc = store_meta_get(s->st, SIM_V4_SINCE, &since, err);
        long long from = since ? strtoll(since, NULL, 10) : 0;
        free(since);
        if (!rc && from > 0 && id >= from &&
            !(*out = json_pack("{s:[], s:{s:i, s:f, s:f, s:i}}", "pairs", "unavailable_after",
                               "keys", 0, "key_share", 0.0, "requests_share", 0.0, "bytes", 0)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return rc;
    }
    if (rc)
        return rc;
    *out = json_loads(text, 0, NULL);
    free(text);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return rs_fail(err, RINGSIM_EDB, "operation %lld has an unreadable record of its pairs",
                       (long long)id);
    }
    return 0;
}

/* Walk back over resets and reverts to find where the state starts: the
 * state after a revert to j is the state after j; a reset starts from
 * nothing with the configuration it kept. */
int sim_chain_get(sim *s, int64_t at, sim_chain *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    place_config_default(&out->start);
    size_t cap = 0;
    int rc = 0;
    for (int64_t cur = at; !rc && cur > 0;) {
        int64_t base;
        if ((rc = store_op_base(s->st, cur, &base, err)))
            break;
        if (vec_reserve(&out->seg, &cap, out->n + 1, sizeof *out->seg, 8)) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            break;
        }
        out->seg[out->n++] = (sim_chain_seg){base, cur};
        if (base == 0)
            break;
        store_op o;
        if ((rc = store_op_get(s->st, base, &o, err)))
            break;
        if (sim_op_type_of(o.type) == SIM_OP_RESET) {
            rc = sim_op_config(&o, &out->start, err);
            cur = 0;
        } else {
            sim_op_params p;
            int64_t to = sim_op_params_read(&o, &p, err) ? -1 : p.to;
            sim_op_params_clear(&p);
            if (to < 0 || to >= base)
                rc = rs_fail(err, RINGSIM_EDB, "operation %lld: bad revert target", (long long)base);
            cur = to;
        }
        store_op_clear(&o);
    }
    if (rc)
        sim_chain_free(out);
    return rc;
}

void sim_chain_free(sim_chain *c)
{
    free(c->seg);
    c->seg = NULL;
    c->n = 0;
}

int sim_log_get(sim *s, int64_t id, sim_op *out, rs_error *err)
{
    return store_op_get(s->st, id, out, err);
}

void sim_op_clear(sim_op *op) { store_op_clear(op); }

int sim_log_last(sim *s, int64_t *out, rs_error *err) { return store_last_op(s->st, out, err); }

int sim_log_moves(sim *s, int64_t op, int64_t offset, int64_t limit, int64_t *total, sim_move_fn fn,
                  void *ud, rs_error *err)
{
    return store_moves_page(s->st, op, offset, limit, total, fn, ud, err);
}

int sim_log_keys(sim *s, int64_t op, sim_bytes_fn fn, void *ud, rs_error *err)
{
    return store_op_keys_each(s->st, op, fn, ud, err);
}

typedef struct each_key {
    sim_bytes_fn fn;
    void *ud;
} each_key;

static int each_key_step(void *ud, const store_key *k)
{
    const each_key *e = ud;
    return e->fn(e->ud, k->key, k->len);
}

int sim_keys_each(sim *s, sim_bytes_fn fn, void *ud, rs_error *err)
{
    each_key e = {fn, ud};
    return store_keys_each(s->st, STORE_EACH_KEY, each_key_step, &e, err);
}

int sim_read_begin(sim *s, rs_error *err) { return store_begin_read(s->st, err); }

void sim_read_end(sim *s) { store_end_read(s->st); }
