/*
 * sim.c - the engine (see sim.h for the design and costs).
 *
 * State in memory is a `state`: configuration, nodes (id, name, weight, key
 * counter) and the placement built from them.  An operation copies the
 * state, changes the copy while it writes SQLite inside one transaction, and
 * swaps the copy in after COMMIT; on any failure it rolls back and drops the
 * copy.  Topology changes all go through retopologize(), which diffs two
 * placements arc by arc.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "sim.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "names.h"
#include "ring.h"

typedef struct node {
    int64_t id;
    char *name; /* owned, NUL-terminated */
    size_t len;
    double weight;
    int64_t keys;
    int64_t *tokens; /* explicit tokens (owned), or NULL */
    size_t ntokens;
} node;

typedef struct state {
    place_config cfg;
    node *nodes;
    size_t n;
    int64_t unassigned;
    placement *pl;
    place_node *pn; /* the nodes as pl sees them (pl borrows them) */
    const char **names; /* node names by index, for the views */
} state;

struct sim {
    store *st;
    hasher *h;
    state cur;
    int64_t data_version;
    bool record; /* false for replay snapshots: no log, no moves */
    sim_progress_fn progress;
    void *progress_ud;
    const char *progress_label; /* replaces `what` when set (replays) */
    sim_preview *preview;       /* set: operations are dry runs (sim_preview) */
    const char *p_what;         /* the last report, repeated by poll() */
    uint64_t p_done, p_total;
};

/* ---- state ---- */

static void node_free(node *x)
{
    free(x->name);
    free(x->tokens);
}

static void state_clear(state *x)
{
    for (size_t i = 0; i < x->n; i++)
        node_free(&x->nodes[i]);
    free(x->nodes);
    place_free(x->pl);
    free(x->pn);
    free(x->names);
    memset(x, 0, sizeof *x);
}

/* Deep copy without the placement. */
static int state_copy(state *dst, const state *src)
{
    memset(dst, 0, sizeof *dst);
    dst->cfg = src->cfg;
    dst->unassigned = src->unassigned;
    dst->nodes = malloc((src->n + 1) * sizeof *dst->nodes);
    if (!dst->nodes)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < src->n; i++) {
        dst->nodes[i] = src->nodes[i];
        dst->nodes[i].name = strdup(src->nodes[i].name);
        dst->nodes[i].tokens = NULL;
        if (src->nodes[i].ntokens && dst->nodes[i].name) {
            size_t sz = src->nodes[i].ntokens * sizeof(int64_t);
            dst->nodes[i].tokens = malloc(sz);
            if (dst->nodes[i].tokens)
                memcpy(dst->nodes[i].tokens, src->nodes[i].tokens, sz);
        }
        if (!dst->nodes[i].name || (src->nodes[i].ntokens && !dst->nodes[i].tokens)) {
            free(dst->nodes[i].name);
            free(dst->nodes[i].tokens);
            dst->n = i;
            state_clear(dst);
            return RINGSIM_ENOMEM;
        }
    }
    dst->n = src->n;
    return 0;
}

static long find_node(const state *x, const char *name, size_t len)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].len == len && memcmp(x->nodes[i].name, name, len) == 0)
            return (long)i;
    return -1;
}

static long find_node_id(const state *x, int64_t id)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].id == id)
            return (long)i;
    return -1;
}

/* Add delta to the key counter of the owner with this id (STORE_NO_NODE:
 * the unassigned keys).  An id no longer in x (a removed node) is skipped. */
static void count_owner(state *x, int64_t id, int64_t delta)
{
    if (id == STORE_NO_NODE) {
        x->unassigned += delta;
        return;
    }
    long i = find_node_id(x, id);
    if (i >= 0)
        x->nodes[i].keys += delta;
}

/* Build x->pl for x's configuration and nodes.  prev (may be NULL) is the
 * placement the change starts from, layout the stored state text (may be
 * NULL): stateful algorithms evolve from one or the other.  The place_node
 * array lives as long as the placement (x->pn). */
static int build_placement(sim *s, state *x, const placement *prev, const char *layout,
                           rs_error *err)
{
    place_node *pn = malloc((x->n + 1) * sizeof *pn);
    const char **names = malloc((x->n + 1) * sizeof *names);
    if (!pn || !names) {
        free(pn);
        free(names);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->n; i++)
        names[i] = x->nodes[i].name;
    for (size_t i = 0; i < x->n; i++)
        pn[i] = (place_node){x->nodes[i].id,     x->nodes[i].name,   x->nodes[i].len,
                             x->nodes[i].weight, x->nodes[i].tokens, x->nodes[i].ntokens};
    placement *pl = NULL;
    int rc = place_build(&pl, s->h, &x->cfg, pn, x->n, prev, layout, err);
    if (rc) {
        free(pn);
        free(names);
        return rc;
    }
    place_free(x->pl);
    free(x->pn);
    free(x->names);
    x->pl = pl;
    x->pn = pn;
    x->names = names;
    return 0;
}

static int config_from_json(const char *text, place_config *cfg)
{
    place_config_default(cfg);
    if (!text || !*text)
        return 0;
    json_t *j = json_loads(text, 0, NULL);
    if (!j)
        return RINGSIM_EDB;
    rs_error e;
    int rc = place_config_from_json(cfg, j, &e);
    json_decref(j);
    return rc ? RINGSIM_EDB : 0;
}

static char *config_to_json(const place_config *cfg)
{
    json_t *j = place_config_json(cfg, true);
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return t;
}

/* Explicit tokens are stored as a JSON array of decimal strings. */
static int tokens_parse(const char *text, node *x, rs_error *err)
{
    json_t *j = json_loads(text, 0, NULL);
    size_t n = json_array_size(j);
    x->tokens = malloc((n + 1) * sizeof *x->tokens);
    int rc = j && x->tokens ? 0 : RINGSIM_EDB;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *t = json_string_value(json_array_get(j, i));
        char *end;
        errno = 0;
        long long v = t ? strtoll(t, &end, 10) : 0;
        if (!t || *end || errno)
            rc = RINGSIM_EDB;
        x->tokens[i] = v;
    }
    json_decref(j);
    if (rc)
        return rs_fail(err, RINGSIM_EDB, "stored tokens of node \"%s\" are damaged", x->name);
    x->ntokens = n;
    return 0;
}

static char *tokens_text(const int64_t *t, size_t n)
{
    json_t *a = json_array();
    char buf[24];
    for (size_t i = 0; a && i < n; i++) {
        snprintf(buf, sizeof buf, "%lld", (long long)t[i]);
        json_array_append_new(a, json_string(buf));
    }
    char *r = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return r;
}

/* Load the whole in-memory state from the store. */
static int load_state(sim *s, rs_error *err)
{
    state x;
    memset(&x, 0, sizeof x);
    char *cfg = NULL, *layout = NULL;
    store_node *sn = NULL;
    size_t n = 0;
    int rc;
    if ((rc = store_meta_get(s->st, "config", &cfg, err)))
        goto fail;
    if (config_from_json(cfg, &x.cfg)) {
        rc = rs_fail(err, RINGSIM_EDB, "stored configuration is not valid JSON");
        goto fail;
    }
    if ((rc = store_meta_get_int(s->st, "unassigned", &x.unassigned, err)) ||
        (rc = store_nodes_load(s->st, &sn, &n, err)))
        goto fail;
    x.nodes = malloc((n + 1) * sizeof *x.nodes);
    if (!x.nodes) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        /* A damaged file must not reach the ring with a name the buffers
         * of a label are not sized for. */
        if (name_check(sn[i].name, sn[i].len, "node name", NULL) ||
            strlen(sn[i].name) != sn[i].len) {
            rc = rs_fail(err, RINGSIM_ENOTDB, "database is damaged: node %lld has an invalid name",
                         (long long)sn[i].id);
            goto fail;
        }
        x.nodes[i] = (node){sn[i].id, sn[i].name, sn[i].len, sn[i].weight, sn[i].keys,
                            NULL, 0};
        sn[i].name = NULL; /* moved */
        x.n = i + 1;
        if (sn[i].tokens && (rc = tokens_parse(sn[i].tokens, &x.nodes[i], err)))
            goto fail;
    }
    x.n = n;
    if ((rc = store_meta_get(s->st, "layout", &layout, err)) ||
        (rc = build_placement(s, &x, NULL, layout, err)))
        goto fail;
    store_nodes_free(sn, n);
    free(cfg);
    free(layout);
    state_clear(&s->cur);
    s->cur = x;
    return 0;
fail:
    store_nodes_free(sn, n);
    free(cfg);
    free(layout);
    state_clear(&x);
    return rc;
}

int sim_open(sim **out, const char *path, rs_error *err)
{
    *out = NULL;
    sim *s = calloc(1, sizeof *s);
    if (!s)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int rc;
    s->record = true;
    if (!(s->h = hasher_new())) {
        rc = rs_fail(err, RINGSIM_EINTERNAL, "OpenSSL has no SHA-256");
        goto fail;
    }
    if ((rc = store_open(&s->st, path, err)))
        goto fail;
    if ((rc = store_data_version(s->st, &s->data_version, err)) ||
        (rc = load_state(s, err)))
        goto fail;
    *out = s;
    return 0;
fail:
    sim_close(s);
    return rc;
}

void sim_close(sim *s)
{
    if (!s)
        return;
    state_clear(&s->cur);
    store_close(s->st);
    hasher_free(s->h);
    free(s);
}

int sim_refresh(sim *s, bool *changed, rs_error *err)
{
    int64_t v;
    int rc = store_data_version(s->st, &v, err);
    if (changed)
        *changed = false;
    if (rc)
        return rc;
    if (changed)
        *changed = v != s->data_version;
    if (v == s->data_version)
        return 0;
    rc = load_state(s, err);
    if (!rc)
        s->data_version = v;
    return rc;
}

void sim_set_progress(sim *s, sim_progress_fn fn, void *ud)
{
    s->progress = fn;
    s->progress_ud = ud;
}

store *sim_store(sim *s) { return s->st; }
const char *sim_read_only(const sim *s) { return store_read_only(s->st); }

/* ---- operations: the common frame ---- */

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
    tally_list from, to;
    bool keys_only; /* nodes and configuration unchanged */
    const char *what; /* the type, for progress */
    bool steps;       /* the operation reports its own steps (revert) */
} opctx;

static int op_begin(sim *s, opctx *c, const char *type, const char *subject,
                    json_t *params, rs_error *err)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->what = type;
    s->p_what = NULL; /* nothing reported yet by this operation */
    int rc = store_begin(s->st, err);
    if (rc)
        return rc;
    /* Holding the write lock now: catch up with other processes first. */
    if ((rc = sim_refresh(s, NULL, err)) || (rc = state_copy(&c->next, &s->cur))) {
        store_rollback(s->st);
        return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
    }
    if (s->record) {
        char *p = json_dumps(params, JSON_COMPACT);
        char *cfg = config_to_json(&s->cur.cfg);
        rc = p && cfg ? store_op_append(s->st, type, subject, p, cfg, &c->op, err)
                      : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(p);
        free(cfg);
        if (rc) {
            store_rollback(s->st);
            state_clear(&c->next);
        }
    }
    return rc;
}

static void tally_free(tally_list *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->ids);
    free(t->names);
    free(t->count);
    memset(t, 0, sizeof *t);
}

static void op_free(opctx *c)
{
    tally_free(&c->from);
    tally_free(&c->to);
    state_clear(&c->next);
}

static void op_abort(opctx *c)
{
    store_rollback(c->s->st);
    op_free(c);
}

static int tally_add(tally_list *t, int64_t id, const char *name, int64_t count)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ids[i] == id) {
            t->count[i] += count;
            return 0;
        }
    size_t n = t->n + 1;
    int64_t *ids = realloc(t->ids, n * sizeof *ids);
    if (ids)
        t->ids = ids;
    char **names = realloc(t->names, n * sizeof *names);
    if (names)
        t->names = names;
    int64_t *cnt = realloc(t->count, n * sizeof *cnt);
    if (cnt)
        t->count = cnt;
    char *nm = name ? strdup(name) : NULL;
    if (!ids || !names || !cnt || (name && !nm)) {
        free(nm);
        return RINGSIM_ENOMEM;
    }
    ids[t->n] = id;
    names[t->n] = nm;
    cnt[t->n] = count;
    t->n++;
    return 0;
}

/* count keys moved from one node to another. */
static int tally(opctx *c, int64_t from_id, const char *from_name, int64_t to_id,
                 const char *to_name, int64_t count)
{
    c->moved += count;
    return tally_add(&c->from, from_id, from_name, count) ||
                   tally_add(&c->to, to_id, to_name, count)
               ? RINGSIM_ENOMEM
               : 0;
}

/* A tally as a JSON list [{"node", "keys"}…], largest first, then by name. */
static json_t *tally_json(const tally_list *t)
{
    size_t n = t->n;
    size_t *ord = malloc((n + 1) * sizeof *ord);
    if (!ord)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful of entries */
        for (size_t j = i; j > 0; j--) {
            size_t a = ord[j - 1], b = ord[j];
            int before = t->count[b] > t->count[a] ||
                         (t->count[b] == t->count[a] && t->names[b] &&
                          (!t->names[a] || strcmp(t->names[b], t->names[a]) < 0));
            if (!before)
                break;
            ord[j - 1] = b;
            ord[j] = a;
        }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        size_t k = ord[i];
        if (!t->count[k])
            continue;
        json_array_append_new(arr, json_pack("{s:o, s:I}", "node",
                                             t->names[k] ? json_string(t->names[k])
                                                         : json_null(),
                                             "keys", (json_int_t)t->count[k]));
    }
    free(ord);
    return arr;
}

static char *moved_from_json(opctx *c)
{
    json_t *arr = tally_json(&c->from);
    char *t = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
    json_decref(arr);
    return t;
}

static int add_sample(void *ud, const char *key, const char *from, const char *to)
{
    return json_array_append_new(ud, json_pack("{s:s, s:o, s:o}", "key", key, "from",
                                               from ? json_string(from) : json_null(), "to",
                                               to ? json_string(to) : json_null()))
               ? RINGSIM_ENOMEM
               : 0;
}

/* A dry run ends here: gather what the operation did, let the caller look
 * at the state it would leave, and roll everything back. */
static int preview_finish(opctx *c, rs_error *err)
{
    sim *s = c->s;
    sim_preview *p = s->preview;
    p->keys_moved = c->moved;
    p->replica_moves = c->replica_moves;
    p->moved_from = tally_json(&c->from);
    p->moved_to = tally_json(&c->to);
    p->sample_moves = json_array();
    int64_t total = 0;
    int rc = p->moved_from && p->moved_to && p->sample_moves ? 0 : RINGSIM_ENOMEM;
    if (!rc && c->op)
        rc = store_moves_page(s->st, c->op, 0, p->sample > 0 ? p->sample : 20, &total,
                              add_sample, p->sample_moves, err);
    if (!rc && p->after && c->next.pl) {
        state keep = s->cur;
        s->cur = c->next;
        p->after(p->ud, s);
        s->cur = keep;
    }
    op_abort(c);
    return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
}

int sim_preview_run(sim *s, sim_preview *p, int (*op)(sim *, void *, rs_error *), void *arg,
                    rs_error *err)
{
    p->moved_from = p->moved_to = p->sample_moves = NULL;
    s->preview = p;
    int rc = op(s, arg, err);
    s->preview = NULL;
    if (rc) {
        json_decref(p->moved_from);
        json_decref(p->moved_to);
        json_decref(p->sample_moves);
        p->moved_from = p->moved_to = p->sample_moves = NULL;
    }
    return rc;
}

/* Write counters and the log entry, commit, and swap the new state in. */
static int op_commit(opctx *c, int64_t *op_out, rs_error *err)
{
    sim *s = c->s;
    state *x = &c->next;
    int rc = 0;
    for (size_t i = 0; i < x->n && !rc; i++) {
        long j = find_node_id(&s->cur, x->nodes[i].id);
        if (j < 0 || s->cur.nodes[j].keys != x->nodes[i].keys ||
            s->cur.nodes[j].weight != x->nodes[i].weight)
            rc = store_node_update(s->st, x->nodes[i].id, x->nodes[i].weight,
                                   x->nodes[i].keys, err);
    }
    if (!rc && x->unassigned != s->cur.unassigned)
        rc = store_meta_set_int(s->st, "unassigned", x->unassigned, err);
    if (!rc && memcmp(&x->cfg, &s->cur.cfg, sizeof x->cfg) != 0) {
        char *cfg = config_to_json(&x->cfg);
        rc = cfg ? store_meta_set(s->st, "config", cfg, err)
                 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(cfg);
    }
    if (!rc && c->op) {
        char *mf = moved_from_json(c);
        char *cfg = config_to_json(&x->cfg);
        /* The log keeps the configuration after the operation. */
        rc = mf && cfg ? store_op_finish(s->st, c->op, c->moved, mf, cfg, c->replica_moves, err)
                       : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(mf);
        free(cfg);
    }
    if (!rc && !x->pl && !c->keys_only)
        rc = build_placement(s, x, s->cur.pl, NULL, err);
    if (!rc && x->pl) { /* the layout's state, where the algorithm has one */
        char *layout = place_state_text(x->pl);
        rc = store_meta_set(s->st, "layout", layout ? layout : "", err);
        free(layout);
    }
    if (!rc && s->preview)
        return preview_finish(c, err);
    if (!rc)
        rc = store_commit(s->st, err);
    if (rc) {
        op_abort(c); /* s->cur was not touched: the engine is as it was */
        return rc;
    }
    /* Committed: nothing may fail from here.  An unreadable version only
     * makes the next refresh reload. */
    if (store_data_version(s->st, &s->data_version, NULL))
        s->data_version = -1;
    if (c->keys_only) {
        /* Topology unchanged: keep the current placement (it borrows the
         * current nodes) and take only the new counters. */
        for (size_t i = 0; i < x->n; i++)
            s->cur.nodes[i].keys = x->nodes[i].keys;
        s->cur.unassigned = x->unassigned;
    } else {
        state_clear(&s->cur);
        s->cur = c->next;
        memset(&c->next, 0, sizeof c->next);
    }
    if (op_out)
        *op_out = c->op;
    op_free(c);
    return 0;
}

/* Report progress.  The callback may ask to stop: the operation then fails
 * with RINGSIM_ECANCELED and its caller rolls it back whole. */
static int progress(sim *s, const char *what, uint64_t done, uint64_t total, rs_error *err)
{
    s->p_what = what;
    s->p_done = done;
    s->p_total = total;
    if (s->progress &&
        s->progress(s->progress_ud, s->progress_label ? s->progress_label : what, done, total))
        return rs_fail(err, RINGSIM_ECANCELED, "operation cancelled");
    return 0;
}

/* Between two reports, in loops whose steps are not counted: the last
 * report again, so that the callback can cancel. */
static int poll(sim *s, rs_error *err)
{
    if (!s->progress || !s->p_what)
        return 0;
    return progress(s, s->p_what, s->p_done, s->p_total, err);
}

#define PROGRESS_EVERY 16384

/* ---- key lists: many keys in one buffer (no malloc per key) ---- */

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

static int kl_add(keylist *l, const char *k, size_t len, uint32_t pos, int64_t node)
{
    if (l->used + len > l->cap || !l->buf) {
        size_t cap = l->cap ? l->cap * 2 : 65536;
        while (cap < l->used + len)
            cap *= 2;
        char *b = realloc(l->buf, cap);
        if (!b)
            return RINGSIM_ENOMEM;
        l->buf = b;
        l->cap = cap;
    }
    if (l->n == l->vcap) {
        size_t cap = l->vcap ? l->vcap * 2 : 1024;
        klent *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return RINGSIM_ENOMEM;
        l->v = v;
        l->vcap = cap;
    }
    memcpy(l->buf + l->used, k, len);
    l->v[l->n++] = (klent){l->used, len, pos, node};
    l->used += len;
    return 0;
}

static void kl_free(keylist *l)
{
    free(l->buf);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int kl_collect(void *ud, const store_key *k)
{
    return kl_add(ud, k->key, k->len, k->pos, k->node) ? RINGSIM_ENOMEM : 0;
}

static int kl_collect_str(void *ud, const char *s, size_t len)
{
    return kl_add(ud, s, len, 0, STORE_NO_NODE) ? RINGSIM_ENOMEM : 0;
}

/* ---- topology changes ---- */

static int64_t owner_id(const state *x, long idx)
{
    return idx < 0 ? STORE_NO_NODE : x->nodes[idx].id;
}

static const char *owner_name(const state *x, long idx)
{
    return idx < 0 ? NULL : x->nodes[idx].name;
}

/* The stored form of a coordinate: the order-preserving uint64 with its top
 * bit flipped, so that SQLite's signed order is the coordinate's order. */
static int64_t coord_stored(uint64_t c) { return (int64_t)(c ^ 0x8000000000000000ull); }

/* Move the keys of [lo, hi] (coordinates of column col) from old owner
 * index a (in `old`) to new owner index b (in c->next), fixing counters and
 * the tally. */
static int move_range(opctx *c, const state *old, int col, uint64_t lo, uint64_t hi,
                      long a, long b, rs_error *err)
{
    int64_t from = owner_id(old, a), to = owner_id(&c->next, b);
    if (from == to)
        return 0;
    int64_t count;
    bool by_coord = col == PLACE_COL_COORD;
    int rc = store_keys_move(c->s->st, by_coord, by_coord ? coord_stored(lo) : (int64_t)lo,
                             by_coord ? coord_stored(hi) : (int64_t)hi, from, to, c->op,
                             owner_name(old, a), owner_name(&c->next, b), &c->seq, &count,
                             err);
    if (rc || !count)
        return rc;
    count_owner(&c->next, from, -count);
    count_owner(&c->next, to, count);
    if (tally(c, from, owner_name(old, a), to, owner_name(&c->next, b), count))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return 0;
}

/* Both placements cut their space into segments with one owner each: walk
 * the two lists in step; every run where the (old, new) owner pair stays the
 * same and differs is one range query. */
static int diff_segments(opctx *c, const state *old, int col, rs_error *err)
{
    place_seg *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    int rc = place_segments(old->pl, &sa, &na);
    if (!rc)
        rc = place_segments(c->next.pl, &sb, &nb);
    if (rc) {
        free(sa);
        free(sb);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    size_t i = 0, j = 0;
    uint64_t lo = 0;
    bool in_run = false;
    uint64_t run_lo = 0, run_hi = 0;
    long run_a = -1, run_b = -1;
    uint64_t steps = 0;
    while (!rc && i < na && j < nb) {
        /* Thousands of segments: let the callback cancel now and then. */
        if (++steps % 1024 == 0 && (rc = c->steps ? poll(c->s, err)
                                                 : progress(c->s, c->what, steps, na + nb, err)))
            break;
        uint64_t hi = sa[i].hi < sb[j].hi ? sa[i].hi : sb[j].hi;
        long oa = sa[i].owner, ob = sb[j].owner;
        if (in_run && oa == run_a && ob == run_b) {
            run_hi = hi;
        } else {
            if (in_run) /* move_range compares ids: indexes differ between the two */
                rc = move_range(c, old, col, run_lo, run_hi, run_a, run_b, err);
            in_run = true;
            run_lo = lo;
            run_hi = hi;
            run_a = oa;
            run_b = ob;
        }
        if (sa[i].hi == hi)
            i++;
        if (sb[j].hi == hi)
            j++;
        if (hi == UINT64_MAX)
            break;
        lo = hi + 1;
    }
    if (!rc && in_run)
        rc = move_range(c, old, col, run_lo, run_hi, run_a, run_b, err);
    free(sa);
    free(sb);
    return rc;
}

/* Re-place keys one by one: every key, or (only_leavers) the keys of nodes
 * that are gone from c->next.  Changes are collected first and written
 * after the scan, so the scan never sees its own updates. */
typedef struct replace_ctx {
    opctx *c;
    const state *old;
    bool only_leavers;
    keylist changed; /* key bytes; pos holds nothing, node the new owner id */
    int64_t *coords;
    bool *has_coord;
    int64_t *from;
    size_t cap;
    uint64_t seen, total;
    rs_error *err;
} replace_ctx;

static int replace_one(void *ud, const store_key *k)
{
    replace_ctx *r = ud;
    opctx *c = r->c;
    if (r->only_leavers && (k->node == STORE_NO_NODE || find_node_id(&c->next, k->node) >= 0))
        return 0;
    if (++r->seen % PROGRESS_EVERY == 0) {
        int rc = c->steps ? poll(c->s, r->err) : progress(c->s, c->what, r->seen, r->total, r->err);
        if (rc)
            return rc;
    }
    place_key_info ki;
    place_key(c->next.pl, c->s->h, k->key, k->len, &ki);
    int64_t to = owner_id(&c->next, ki.owner);
    int64_t coord = ki.has_coord ? coord_stored(ki.coord) : 0;
    bool store_coord = ki.has_coord && place_column(c->next.pl) == PLACE_COL_COORD;
    if (to == k->node && store_coord == k->has_coord && (!store_coord || coord == k->coord))
        return 0;
    size_t n = r->changed.n;
    if (n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        int64_t *co = realloc(r->coords, cap * sizeof *co);
        if (co)
            r->coords = co;
        bool *hc = realloc(r->has_coord, cap * sizeof *hc);
        if (hc)
            r->has_coord = hc;
        int64_t *fr = realloc(r->from, cap * sizeof *fr);
        if (fr)
            r->from = fr;
        if (!co || !hc || !fr)
            return rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
        r->cap = cap;
    }
    if (kl_add(&r->changed, k->key, k->len, 0, to))
        return rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    r->coords[n] = coord;
    r->has_coord[n] = store_coord;
    r->from[n] = k->node;
    return 0;
}

static const char *name_of_id(const state *x, int64_t id)
{
    long i = id == STORE_NO_NODE ? -1 : find_node_id(x, id);
    return i < 0 ? NULL : x->nodes[i].name;
}

static int diff_keys(opctx *c, const state *old, bool only_leavers, rs_error *err)
{
    replace_ctx r = {.c = c, .old = old, .only_leavers = only_leavers, .err = err,
                     .total = (uint64_t)sim_key_count(c->s)};
    int rc = store_keys_each(c->s->st, 1, replace_one, &r, err);
    for (size_t i = 0; !rc && i < r.changed.n; i++) {
        const klent *e = &r.changed.v[i];
        store_key k = {r.changed.buf + e->off, e->len, 0, e->node, r.has_coord[i],
                       r.coords[i]};
        rc = store_key_set(c->s->st, &k, err);
        if (rc || e->node == r.from[i])
            continue; /* only the coordinate changed */
        const char *fn = name_of_id(old, r.from[i]), *tn = name_of_id(&c->next, e->node);
        if (c->op)
            rc = store_move_add(c->s->st, c->op, c->seq++, k.key, k.len, fn, tn, err);
        count_owner(&c->next, r.from[i], -1);
        count_owner(&c->next, e->node, 1);
        if (!rc && tally(c, r.from[i], fn, e->node, tn, 1))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    kl_free(&r.changed);
    free(r.coords);
    free(r.has_coord);
    free(r.from);
    return rc;
}

/* With replicas, a change also adds copies to preference lists that are
 * not owner moves: count them over every key (one pass, two lookups a key;
 * only when either side keeps more than one copy). */
typedef struct replica_ctx {
    opctx *c;
    const state *old;
} replica_ctx;

static int count_replica_moves(void *ud, const store_key *k)
{
    replica_ctx *r = ud;
    sim *s = r->c->s;
    place_key_info a, b;
    long pa[PLACE_MAX_PREFS], pb[PLACE_MAX_PREFS];
    place_key(r->old->pl, s->h, k->key, k->len, &a);
    place_key(r->c->next.pl, s->h, k->key, k->len, &b);
    size_t na = place_prefs(r->old->pl, &a, r->old->cfg.replicas, pa);
    size_t nb = place_prefs(r->c->next.pl, &b, r->c->next.cfg.replicas, pb);
    int64_t owner_to = owner_id(&r->c->next, b.owner);
    bool owner_moved = owner_id(r->old, a.owner) != owner_to, owner_was_copy = false;
    for (size_t i = 0; i < nb; i++) {
        bool had = false;
        for (size_t j = 0; j < na && !had; j++)
            had = owner_id(r->old, pa[j]) == owner_id(&r->c->next, pb[i]);
        if (!had)
            r->c->replica_moves++;
        if (i == 0)
            owner_was_copy = had;
    }
    if (owner_moved && !owner_was_copy && nb)
        r->c->replica_moves--; /* that copy is the owner move itself */
    return 0;
}

/* Compare the placement of `old` with c->next (already holding its new
 * nodes and configuration, ids assigned) and move exactly the keys whose
 * owner changes: by ranges of the key index where both placements cut
 * their space into segments, otherwise key by key (only the leavers' keys
 * where the algorithm promises that nobody else's move).  Removed nodes must
 * still be in c->next's counters until the caller drops them. */
static int retopologize_to(opctx *c, const state *old, const char *layout, rs_error *err)
{
    int rc = build_placement(c->s, &c->next, layout ? NULL : old->pl, layout, err);
    if (rc)
        return rc;
    int col = place_diff_column(old->pl, c->next.pl);
    if (col >= 0)
        rc = diff_segments(c, old, col, err);
    else
        rc = diff_keys(c, old, place_only_leavers_move(old->pl, c->next.pl), err);
    if (!rc && (old->cfg.replicas > 1 || c->next.cfg.replicas > 1)) {
        replica_ctx r = {c, old};
        rc = store_keys_each(c->s->st, 0, count_replica_moves, &r, err);
    }
    return rc;
}

static int retopologize(opctx *c, const state *old, rs_error *err)
{
    return retopologize_to(c, old, NULL, err);
}

/* The weight rule every algorithm shares; what an algorithm adds (whole
 * numbers, no weights) is place_nodes_check's, when the placement is built. */
static int check_weight(double weight, rs_error *err)
{
    if (!isfinite(weight) || weight <= 0 || weight > SIM_MAX_WEIGHT)
        return rs_fail(err, RINGSIM_EPARAM,
                       "weight must be a number above 0 and at most %g", SIM_MAX_WEIGHT);
    return 0;
}

int sim_add_node(sim *s, const char *name, size_t len, double weight, int64_t *op,
                 rs_error *err)
{
    sim_node_spec spec = {name, len, weight, NULL, 0};
    return sim_add_node_spec(s, &spec, op, err);
}

int sim_add_node_spec(sim *s, const sim_node_spec *spec, int64_t *op, rs_error *err)
{
    const char *name = spec->name;
    size_t len = spec->len;
    double weight = spec->weight;
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    if (spec->ntokens > PLACE_MAX_NODE_POINTS)
        return rs_fail(err, RINGSIM_EPARAM, "at most %u tokens per node", PLACE_MAX_NODE_POINTS);
    json_t *params = json_pack("{s:s%, s:f}", "name", name, len, "weight", weight);
    char *subject = strndup(name, len);
    char *tokens = spec->ntokens ? tokens_text(spec->tokens, spec->ntokens) : NULL;
    int64_t *tok = spec->ntokens ? malloc(spec->ntokens * sizeof *tok) : NULL;
    opctx c;
    if (tokens && params)
        json_object_set_new(params, "tokens", json_loads(tokens, 0, NULL));
    if (!params || !subject || (spec->ntokens && (!tokens || !tok))) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = op_begin(s, &c, "add_node", subject, params, err)))
        goto out;
    if (find_node(&c.next, name, len) >= 0) {
        rc = rs_fail(err, RINGSIM_ECONFLICT, "node \"%s\" already exists", subject);
        goto abort;
    }
    if ((rc = check_weight(weight, err)))
        goto abort;
    int64_t id;
    if ((rc = store_node_insert(s->st, name, len, weight, tokens, &id, err)))
        goto abort;
    state *x = &c.next; /* nodes has room for one more (state_copy) */
    if (tok)
        memcpy(tok, spec->tokens, spec->ntokens * sizeof *tok);
    x->nodes[x->n++] = (node){id, subject, len, weight, 0, tok, spec->ntokens};
    subject = NULL;
    tok = NULL;
    if ((rc = retopologize(&c, &s->cur, err)))
        goto abort;
    rc = op_commit(&c, op, err);
    goto out;
abort:
    op_abort(&c);
out:
    free(subject);
    free(tokens);
    free(tok);
    json_decref(params);
    return rc;
}

int sim_remove_node(sim *s, const char *name, size_t len, int64_t *op, rs_error *err)
{
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    json_t *params = json_pack("{s:s%}", "name", name, len);
    char *subject = strndup(name, len);
    opctx c;
    if (!params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = op_begin(s, &c, "remove_node", subject, params, err)))
        goto out;
    long i = find_node(&c.next, name, len);
    if (i < 0) {
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "node \"%s\" not found", subject);
        goto abort;
    }
    /* Take the node out of the new state; retopologize moves its keys to
     * their new owners (the old owner's counter goes with it). */
    node gone = c.next.nodes[i];
    memmove(&c.next.nodes[i], &c.next.nodes[i + 1],
            (c.next.n - (size_t)i - 1) * sizeof gone);
    c.next.n--;
    node_free(&gone);
    if ((rc = retopologize(&c, &s->cur, err)) ||
        (rc = store_node_delete(s->st, gone.id, err)))
        goto abort;
    rc = op_commit(&c, op, err);
    goto out;
abort:
    op_abort(&c);
out:
    free(subject);
    json_decref(params);
    return rc;
}

int sim_configure(sim *s, const place_config *cfg, int64_t *op, rs_error *err)
{
    int rc = place_config_check(cfg, err);
    if (rc)
        return rc;
    json_t *params = place_config_json(cfg, false);
    char *subject = place_config_describe(cfg);
    opctx c;
    if (!params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = op_begin(s, &c, "configure", subject, params, err)))
        goto out;
    c.next.cfg = *cfg;
    if ((rc = retopologize(&c, &s->cur, err))) {
        op_abort(&c);
        goto out;
    }
    rc = op_commit(&c, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

int sim_reset(sim *s, int64_t *op, rs_error *err)
{
    json_t *params = json_object();
    opctx c;
    int rc = params ? op_begin(s, &c, "reset", "reset", params, err)
                    : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    json_decref(params);
    if (rc)
        return rc;
    rc = store_keys_clear(s->st, err);
    for (size_t i = 0; i < c.next.n && !rc; i++)
        rc = store_node_delete(s->st, c.next.nodes[i].id, err);
    if (rc) {
        op_abort(&c);
        return rc;
    }
    for (size_t i = 0; i < c.next.n; i++)
        node_free(&c.next.nodes[i]);
    c.next.n = 0;
    c.next.unassigned = 0;
    return op_commit(&c, op, err);
}

/* ---- keys ---- */

/* Insert one key under the new placement (the current one when the
 * operation does not change the topology); counts it. */
static int insert_one(opctx *c, const char *k, size_t len, int64_t *inserted,
                      rs_error *err)
{
    sim *s = c->s;
    const placement *pl = c->next.pl ? c->next.pl : s->cur.pl;
    place_key_info ki;
    place_key(pl, s->h, k, len, &ki);
    long o = ki.owner;
    bool col = ki.has_coord && place_column(pl) == PLACE_COL_COORD;
    store_key sk = {k, len, ki.position, owner_id(&c->next, o), col,
                    col ? coord_stored(ki.coord) : 0};
    int ins;
    int rc = store_key_insert(s->st, &sk, &ins, err);
    if (rc || !ins)
        return rc;
    (*inserted)++;
    if (o < 0) /* hot path: the owner's index is known, no search */
        c->next.unassigned++;
    else
        c->next.nodes[o].keys++;
    return 0;
}

static char *count_subject(size_t n, const sim_str *one)
{
    char *t = NULL;
    if (n == 1)
        return strndup(one->s, one->len);
    if (asprintf(&t, "%zu keys", n) < 0)
        return NULL;
    return t;
}


/* A list of keys must not be empty and every key must follow the name
 * rules; the message says which one does not. */
static int check_key_list(const sim_str *keys, size_t n, rs_error *err)
{
    if (n == 0)
        return rs_fail(err, RINGSIM_EPARAM, "the list of keys is empty");
    for (size_t i = 0; i < n; i++) {
        int rc = name_check(keys[i].s, keys[i].len, "key", err);
        if (rc && n > 1) { /* say which one */
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            rs_fail(err, rc, "keys[%zu]: %s", i, m);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int sim_insert_keys(sim *s, const sim_str *keys, size_t n, bool strict,
                    int64_t *inserted, int64_t *skipped, int64_t *op, rs_error *err)
{
    *inserted = *skipped = 0;
    int rc = check_key_list(keys, n, err);
    if (rc)
        return rc;
    json_t *params = json_pack("{s:I}", "keys", (json_int_t)n);
    char *subject = count_subject(n, &keys[0]);
    opctx c;
    if (!params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = op_begin(s, &c, "insert_keys", subject, params, err)))
        goto out;
    c.keys_only = true;
    for (size_t i = 0; i < n && !rc; i++) {
        if (c.op)
            rc = store_op_add_key(s->st, c.op, (int64_t)i, keys[i].s, keys[i].len, err);
        int64_t before = *inserted;
        if (!rc)
            rc = insert_one(&c, keys[i].s, keys[i].len, inserted, err);
        if (!rc && strict && *inserted == before)
            rc = rs_fail(err, RINGSIM_ECONFLICT, "key \"%.*s\" already exists",
                         (int)keys[i].len, keys[i].s);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = progress(s, "insert_keys", i + 1, n, err);
    }
    if (rc) {
        op_abort(&c);
        *inserted = 0;
        goto out;
    }
    *skipped = (int64_t)n - *inserted;
    rc = op_commit(&c, op, err);
    if (rc)
        *inserted = *skipped = 0;
out:
    free(subject);
    json_decref(params);
    return rc;
}

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

int sim_generate_keys(sim *s, const char *prefix, size_t plen, uint64_t start,
                      uint64_t count, int64_t *inserted, int64_t *skipped,
                      int64_t *op, rs_error *err)
{
    *inserted = *skipped = 0;
    if (count < 1 || count > SIM_MAX_GENERATE)
        return rs_fail(err, RINGSIM_EPARAM, "count must be 1 to %u", SIM_MAX_GENERATE);
    if (start > (1ull << 53) || start + count - 1 > (1ull << 53))
        return rs_fail(err, RINGSIM_EPARAM, "start must be 0 to 2^53 - count");
    uint64_t last = start + count - 1;
    if (plen + (size_t)digits(last) > NAME_MAX_BYTES)
        return rs_fail(err, RINGSIM_ENAME, "prefix is too long: keys would exceed %d bytes",
                       NAME_MAX_BYTES);
    /* The prefix must itself be a valid (possibly empty) start of a name. */
    int rc = plen ? name_check(prefix, plen, "key prefix", err) : 0;
    if (rc)
        return rc;
    json_t *params = json_pack("{s:{s:I, s:s%, s:I}}", "generate", "count",
                               (json_int_t)count, "prefix", prefix, plen, "start",
                               (json_int_t)start);
    char *subject = NULL;
    if (count == 1)
        rc = asprintf(&subject, "%.*s%llu", (int)plen, prefix,
                      (unsigned long long)start) < 0;
    else
        rc = asprintf(&subject, "%llu keys %.*s%llu \u2026 %.*s%llu",
                      (unsigned long long)count, (int)plen, prefix,
                      (unsigned long long)start, (int)plen, prefix,
                      (unsigned long long)last) < 0;
    opctx c;
    if (rc || !params) {
        subject = rc ? NULL : subject;
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = op_begin(s, &c, "insert_keys", subject, params, err)))
        goto out;
    c.keys_only = true;
    char buf[NAME_BUF + 24];
    memcpy(buf, prefix, plen);
    for (uint64_t i = 0; i < count && !rc; i++) {
        size_t len = plen + (size_t)sprintf(buf + plen, "%llu",
                                            (unsigned long long)(start + i));
        rc = insert_one(&c, buf, len, inserted, err);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = progress(s, "insert_keys", i + 1, count, err);
    }
    if (!rc)
        rc = progress(s, "insert_keys", count, count, err);
    if (rc) {
        op_abort(&c);
        *inserted = 0;
        goto out;
    }
    *skipped = (int64_t)count - *inserted;
    rc = op_commit(&c, op, err);
    if (rc)
        *inserted = *skipped = 0;
out:
    free(subject);
    json_decref(params);
    return rc;
}

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int cmp_str_ptr(const void *x, const void *y)
{
    const sim_str *a = *(const sim_str *const *)x, *b = *(const sim_str *const *)y;
    int c = cmp_bytes(a->s, a->len, b->s, b->len);
    return c ? c : (a > b) - (a < b); /* stable: first occurrence first */
}

int sim_delete_keys(sim *s, const sim_str *keys, size_t n, int64_t *op, rs_error *err)
{
    int rc = check_key_list(keys, n, err);
    if (rc)
        return rc;
    /* A key named twice is deleted once. */
    const sim_str **ord = malloc(n * sizeof *ord);
    bool *dup = calloc(n, sizeof *dup);
    json_t *params = json_pack("{s:I}", "keys", (json_int_t)n);
    char *subject = count_subject(n, &keys[0]);
    opctx c;
    if (!ord || !dup || !params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = &keys[i];
    qsort(ord, n, sizeof *ord, cmp_str_ptr);
    for (size_t i = 1; i < n; i++)
        if (cmp_bytes(ord[i]->s, ord[i]->len, ord[i - 1]->s, ord[i - 1]->len) == 0)
            dup[ord[i] - keys] = true;
    if ((rc = op_begin(s, &c, "delete_keys", subject, params, err)))
        goto out;
    c.keys_only = true;
    int64_t seq = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (dup[i])
            continue;
        store_key k;
        int deleted;
        if ((rc = store_key_find(s->st, keys[i].s, keys[i].len, &k, err)) ||
            (rc = store_key_delete(s->st, keys[i].s, keys[i].len, &deleted, err)))
            break;
        if (c.op)
            rc = store_op_add_key(s->st, c.op, seq++, keys[i].s, keys[i].len, err);
        count_owner(&c.next, k.node, -1);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = progress(s, "delete_keys", i + 1, n, err);
    }
    if (rc) {
        op_abort(&c);
        goto out;
    }
    rc = op_commit(&c, op, err);
out:
    free(ord);
    free(dup);
    free(subject);
    json_decref(params);
    return rc;
}

/* sim_str views of a list (pointers into l->buf). */
static sim_str *kl_strs(const keylist *l)
{
    sim_str *v = malloc((l->n + 1) * sizeof *v);
    for (size_t i = 0; v && i < l->n; i++)
        v[i] = (sim_str){l->buf + l->v[i].off, l->v[i].len};
    return v;
}

/* ---- time travel: replay the log into a private sim ---- */

typedef struct replay {
    sim *live, *m;
    rs_error *err;
    uint64_t done, total; /* operations replayed, to replay */
} replay;

#define REPLAY_REPORT_EVERY 256

static int replay_keys(replay *r, const store_op *o, bool insert)
{
    keylist l;
    memset(&l, 0, sizeof l);
    int rc = store_op_keys_each(r->live->st, o->id, kl_collect_str, &l, r->err);
    sim_str *v = rc ? NULL : kl_strs(&l);
    int64_t ins, skip, dummy;
    if (!rc && !v)
        rc = rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    else if (!rc && l.n)
        rc = insert ? sim_insert_keys(r->m, v, l.n, false, &ins, &skip, &dummy, r->err)
                    : sim_delete_keys(r->m, v, l.n, &dummy, r->err);
    free(v);
    kl_free(&l);
    return rc;
}

static int replay_op(void *ud, const store_op *o)
{
    replay *r = ud;
    sim *m = r->m;
    int64_t dummy, ins, skip;
    /* A log of many small operations reports (and can be cancelled) by
     * operation; big ones report by key from inside. */
    int rc = ++r->done % REPLAY_REPORT_EVERY == 0
                 ? progress(m, "replay", r->done, r->total, r->err)
                 : 0;
    if (rc)
        return rc;
    json_t *p = json_loads(o->params, 0, NULL);
    if (!p)
        return rs_fail(r->err, RINGSIM_EDB, "operation %lld has unreadable parameters",
                       (long long)o->id);
    json_t *name = json_object_get(p, "name");
    json_t *gen = json_object_get(p, "generate");
    if (strcmp(o->type, "add_node") == 0) {
        json_t *jt = json_object_get(p, "tokens");
        size_t nt = json_array_size(jt);
        int64_t *tok = nt ? calloc(nt, sizeof *tok) : NULL;
        for (size_t i = 0; tok && i < nt; i++)
            tok[i] = strtoll(json_string_value(json_array_get(jt, i)) ? json_string_value(json_array_get(jt, i)) : "0", NULL, 10);
        sim_node_spec spec = {json_string_value(name), json_string_length(name),
                              json_number_value(json_object_get(p, "weight")), tok, nt};
        rc = nt && !tok ? rs_fail(r->err, RINGSIM_ENOMEM, "out of memory")
                        : sim_add_node_spec(m, &spec, &dummy, r->err);
        free(tok);
    } else if (strcmp(o->type, "remove_node") == 0) {
        rc = sim_remove_node(m, json_string_value(name), json_string_length(name), &dummy,
                             r->err);
    } else if (strcmp(o->type, "insert_keys") == 0 && gen) {
        json_t *pre = json_object_get(gen, "prefix");
        rc = sim_generate_keys(m, json_string_value(pre), json_string_length(pre),
                               (uint64_t)json_integer_value(json_object_get(gen, "start")),
                               (uint64_t)json_integer_value(json_object_get(gen, "count")),
                               &ins, &skip, &dummy, r->err);
    } else if (strcmp(o->type, "insert_keys") == 0 || strcmp(o->type, "delete_keys") == 0) {
        rc = replay_keys(r, o, o->type[0] == 'i');
    } else if (strcmp(o->type, "configure") == 0) {
        place_config cfg;
        config_from_json(o->config, &cfg);
        rc = sim_configure(m, &cfg, &dummy, r->err);
    } else {
        rc = rs_fail(r->err, RINGSIM_EDB, "operation %lld of type %s cannot be replayed here",
                     (long long)o->id, o->type);
    }
    json_decref(p);
    if (rc && rc != RINGSIM_ECANCELED) {
        char msg[sizeof r->err->msg];
        snprintf(msg, sizeof msg, "%s", r->err->msg);
        rs_fail(r->err, rc == RINGSIM_ENOMEM ? rc : RINGSIM_EDB,
                "replaying operation %lld (%s): %s", (long long)o->id, o->type, msg);
    }
    return rc;
}

int sim_at(sim *s, int64_t at, sim **snapshot, rs_error *err)
{
    *snapshot = NULL;
    if (at < 0)
        return rs_fail(err, RINGSIM_EPARAM, "operation id must be 0 or more");
    int64_t last;
    int rc = store_last_op(s->st, &last, err);
    if (rc)
        return rc;
    if (at > last)
        return rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found", (long long)at);
    /* Walk back over resets and reverts to find where the state starts: the
     * state after a revert to j is the state after j. */
    size_t nseg = 0, cap = 8;
    int64_t(*seg)[2] = malloc(cap * sizeof *seg);
    place_config start;
    place_config_default(&start);
    rc = seg ? 0 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int64_t cur = at;
    while (!rc && cur > 0) {
        int64_t base;
        if ((rc = store_op_base(s->st, cur, &base, err)))
            break;
        if (nseg == cap) {
            void *g = realloc(seg, (cap *= 2) * sizeof *seg);
            if (!g) {
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
                break;
            }
            seg = g;
        }
        seg[nseg][0] = base;
        seg[nseg][1] = cur;
        nseg++;
        if (base == 0)
            break;
        store_op o;
        if ((rc = store_op_get(s->st, base, &o, err)))
            break;
        if (strcmp(o.type, "reset") == 0) {
            config_from_json(o.config, &start);
            cur = 0;
        } else {
            json_t *p = json_loads(o.params, 0, NULL);
            int64_t to = p ? json_integer_value(json_object_get(p, "to")) : -1;
            json_decref(p);
            if (to < 0 || to >= base)
                rc = rs_fail(err, RINGSIM_EDB, "operation %lld: bad revert target",
                             (long long)base);
            cur = to;
        }
        store_op_clear(&o);
    }
    sim *m = NULL;
    if (!rc)
        rc = sim_open(&m, "", err); /* private temp file: bounded memory */
    if (!rc) {
        m->record = false;
        /* Long replays (a million generated keys) report as "replay". */
        sim_set_progress(m, s->progress, s->progress_ud);
        m->progress_label = "replay";
        int64_t dummy;
        if (memcmp(&start, &m->cur.cfg, sizeof start) != 0)
            rc = sim_configure(m, &start, &dummy, err);
    }
    replay r = {s, m, err, 0, 0};
    for (size_t i = 0; i < nseg; i++)
        r.total += (uint64_t)(seg[i][1] - seg[i][0]);
    for (size_t i = nseg; !rc && i-- > 0;)
        if (seg[i][1] > seg[i][0])
            rc = store_ops_each(s->st, seg[i][0], seg[i][1] - seg[i][0], replay_op, &r,
                                err);
    free(seg);
    if (rc) {
        sim_close(m);
        return rc;
    }
    sim_set_progress(m, NULL, NULL); /* the snapshot outlives this call */
    *snapshot = m;
    return 0;
}

int sim_advance(sim *s, sim *snap, int64_t from, int64_t to, rs_error *err)
{
    int64_t last = 0, base = 0;
    int rc = store_last_op(s->st, &last, err);
    if (!rc && to <= last)
        rc = store_op_base(s->st, to, &base, err);
    if (rc)
        return rc;
    if (to < from || to > last || base > from)
        return rs_fail(err, RINGSIM_EPARAM, "cannot advance from %lld to %lld",
                       (long long)from, (long long)to);
    replay r = {s, snap, err, 0, (uint64_t)(to - from)};
    sim_set_progress(snap, s->progress, s->progress_ud);
    snap->progress_label = "replay";
    rc = to > from ? store_ops_each(s->st, from, to - from, replay_op, &r, err) : 0;
    sim_set_progress(snap, NULL, NULL);
    return rc;
}

/* The two lists of differences a revert applies. */
typedef struct keypair {
    keylist gone, fresh;
} keypair;

static int kp_gone(void *ud, const store_key *k)
{
    return kl_collect(&((keypair *)ud)->gone, k);
}

static int kp_fresh(void *ud, const store_key *k)
{
    return kl_collect(&((keypair *)ud)->fresh, k);
}

/* Walk the keys of two stores in step, by key bytes: keys only in `have`
 * go to gone(), keys only in `want` to fresh(), keys in both to both().
 * Memory stays constant whatever the number of keys. */
typedef struct diff {
    int (*gone)(void *ud, const store_key *have);
    int (*fresh)(void *ud, const store_key *want);
    int (*both)(void *ud, const store_key *have, const store_key *want);
    void *ud;
} diff;

static int diff_run(sim *s, store *have, store *want, const diff *d, rs_error *err)
{
    store_cursor *ch = NULL, *cw = NULL;
    store_key h, w;
    uint64_t steps = 0;
    int rc = store_cursor_open(have, &ch, err);
    if (!rc)
        rc = store_cursor_open(want, &cw, err);
    int mh = rc ? rc : store_cursor_next(ch, &h, err);
    int mw = mh < 0 ? mh : store_cursor_next(cw, &w, err);
    while (mh > 0 || mw > 0) {
        int c = mh <= 0 ? 1 : mw <= 0 ? -1 : cmp_bytes(h.key, h.len, w.key, w.len);
        if (c < 0)
            rc = d->gone(d->ud, &h);
        else if (c > 0)
            rc = d->fresh(d->ud, &w);
        else
            rc = d->both ? d->both(d->ud, &h, &w) : 0;
        if (!rc && ++steps % PROGRESS_EVERY == 0)
            rc = poll(s, err);
        if (rc)
            break;
        if (c <= 0 && (mh = store_cursor_next(ch, &h, err)) < 0)
            break;
        if (c >= 0 && (mw = store_cursor_next(cw, &w, err)) < 0)
            break;
    }
    if (!rc)
        rc = mh < 0 ? mh : mw < 0 ? mw : 0;
    if (rc == RINGSIM_ENOMEM)
        rs_fail(err, rc, "out of memory");
    else if (rc == RINGSIM_ECANCELED)
        rs_fail(err, rc, "operation cancelled");
    store_cursor_close(ch);
    store_cursor_close(cw);
    return rc;
}

int sim_revert(sim *s, int64_t to, int64_t *op, rs_error *err)
{
    sim *snap = NULL;
    keypair kp;
    memset(&kp, 0, sizeof kp);
    keylist *gone = &kp.gone, *fresh = &kp.fresh;
    json_t *params = json_pack("{s:I}", "to", (json_int_t)to);
    char *subject = NULL;
    opctx c;
    int rc = sim_refresh(s, NULL, err);
    /* Refuse a read-only database before replaying the log for nothing. */
    if (!rc && sim_read_only(s))
        rc = store_begin(s->st, err);
    if (rc || (rc = sim_at(s, to, &snap, err)))
        goto out;
    if (!params || asprintf(&subject, "revert to %lld", (long long)to) < 0) {
        subject = NULL;
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = op_begin(s, &c, "revert", subject, params, err)))
        goto out;
    c.steps = true;
    /* Only the differences are held in memory. */
    diff d = {kp_gone, kp_fresh, NULL, &kp};
    if ((rc = progress(s, "revert", 0, 4, err)) ||
        (rc = diff_run(s, s->st, snap->st, &d, err)) ||
        (rc = progress(s, "revert", 1, 4, err)))
        goto abort;
    /* 1. Keys that did not exist then go (deletions are not moves). */
    for (size_t i = 0; i < gone->n && !rc; i++) {
        const klent *e = &gone->v[i];
        int deleted;
        rc = store_key_delete(s->st, gone->buf + e->off, e->len, &deleted, err);
        count_owner(&c.next, e->node, -1);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = poll(s, err);
    }
    if (!rc)
        rc = progress(s, "revert", 2, 4, err);
    /* 2. Nodes and configuration as they were; the keys whose owner changes
     * move.  Nodes that exist in both keep their id and counter. */
    node *nodes = rc ? NULL : calloc(snap->cur.n + 1, sizeof *nodes);
    if (!rc && !nodes)
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t nn = 0;
    for (size_t i = 0; !rc && i < snap->cur.n; i++) {
        const node *t = &snap->cur.nodes[i];
        long j = find_node(&c.next, t->name, t->len);
        node v = {0, strdup(t->name), t->len, t->weight, 0, NULL, t->ntokens};
        char *tt = t->ntokens ? tokens_text(t->tokens, t->ntokens) : NULL;
        if (t->ntokens && (v.tokens = malloc(t->ntokens * sizeof *v.tokens)))
            memcpy(v.tokens, t->tokens, t->ntokens * sizeof *v.tokens);
        if (!v.name || (t->ntokens && (!v.tokens || !tt))) {
            free(v.name);
            free(v.tokens);
            free(tt);
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            break;
        }
        if (j >= 0) {
            v.id = c.next.nodes[j].id;
            v.keys = c.next.nodes[j].keys;
        } else if ((rc = store_node_insert(s->st, t->name, t->len, t->weight, tt, &v.id,
                                            err))) {
            node_free(&v);
            free(tt);
            break;
        }
        free(tt);
        nodes[nn++] = v;
    }
    if (nodes) {
        /* Nodes of now that are not in the target: rows go after the moves. */
        node *old = c.next.nodes;
        size_t oldn = c.next.n;
        c.next.nodes = nodes;
        c.next.n = nn;
        c.next.cfg = snap->cur.cfg;
        /* The layout state (slot map, removed buckets) as it was then. */
        char *layout = place_state_text(snap->cur.pl);
        if (!rc)
            rc = retopologize_to(&c, &s->cur, layout, err);
        free(layout);
        for (size_t i = 0; i < oldn; i++) {
            if (!rc && find_node(&c.next, old[i].name, old[i].len) < 0)
                rc = store_node_delete(s->st, old[i].id, err);
            node_free(&old[i]);
        }
        free(old);
    }
    if (!rc)
        rc = progress(s, "revert", 3, 4, err);
    /* 3. Keys that existed then and not now come back, placed anew. */
    int64_t inserted = 0;
    for (size_t i = 0; i < fresh->n && !rc; i++) {
        rc = insert_one(&c, fresh->buf + fresh->v[i].off, fresh->v[i].len, &inserted, err);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = poll(s, err);
    }
    if (rc)
        goto abort;
    rc = op_commit(&c, op, err);
    if (!rc) /* done: too late to cancel */
        progress(s, "revert", 4, 4, NULL);
    goto out;
abort:
    op_abort(&c);
out:
    kl_free(gone);
    kl_free(fresh);
    sim_close(snap);
    free(subject);
    json_decref(params);
    return rc;
}

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

int64_t sim_key_count(const sim *s)
{
    int64_t t = s->cur.unassigned;
    for (size_t i = 0; i < s->cur.n; i++)
        t += s->cur.nodes[i].keys;
    return t;
}

void sim_key_where(sim *s, const char *key, size_t len, sim_where *out)
{
    place_key(s->cur.pl, s->h, key, len, &out->info);
    out->nprefs = place_prefs(s->cur.pl, &out->info, s->cur.cfg.replicas, out->prefs);
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
}

static int cmp_node_view(const void *a, const void *b)
{
    const sim_node_view *x = a, *y = b;
    if (x->position != y->position)
        return x->position < y->position ? -1 : 1;
    return cmp_bytes(x->name, x->len, y->name, y->len);
}

int sim_nodes(sim *s, sim_node_view **out, size_t *n, rs_error *err)
{
    size_t k = s->cur.n;
    sim_node_view *v = malloc((k + 1) * sizeof *v);
    double *arc = malloc((k + 1) * sizeof *arc), *owns = malloc((k + 1) * sizeof *owns);
    if (!v || !arc || !owns) {
        free(v);
        free(arc);
        free(owns);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    place_shares(s->cur.pl, arc, k);
    place_owns(s->cur.pl, s->cur.cfg.replicas, owns, k);
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

int sim_node_get(sim *s, const char *name, size_t len, sim_node_view *out,
                 rs_error *err)
{
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    long i = find_node(&s->cur, name, len);
    if (i < 0)
        return rs_fail(err, RINGSIM_ENOTFOUND, "node \"%.*s\" not found", (int)len, name);
    double *arc = malloc((s->cur.n + 1) * sizeof *arc);
    double *owns = malloc((s->cur.n + 1) * sizeof *owns);
    if (!arc || !owns) {
        free(arc);
        free(owns);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    place_shares(s->cur.pl, arc, s->cur.n);
    place_owns(s->cur.pl, s->cur.cfg.replicas, owns, s->cur.n);
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
    if (n == 0)
        return;
    double sum = 0, sq = 0;
    o->min = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        int64_t k = s->cur.nodes[i].keys;
        sum += (double)k;
        o->min = k < o->min ? k : o->min;
        o->max = k > o->max ? k : o->max;
    }
    o->mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = (double)s->cur.nodes[i].keys - o->mean;
        sq += d * d;
    }
    o->stddev = sqrt(sq / (double)n);
    o->cv = o->mean > 0 ? o->stddev / o->mean : 0;
    o->max_over_mean = o->mean > 0 ? (double)o->max / o->mean : 0;
}

int sim_lookup(sim *s, const char *key, size_t len, sim_lookup_result *out,
               rs_error *err)
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
    out->nprefs = place_prefs(s->cur.pl, &out->info, s->cur.cfg.replicas, out->prefs);
    const ring *r = !strcmp(s->cur.cfg.algorithm, "ring") ? place_ring_of(s->cur.pl) : NULL;
    long p = r ? ring_successor(r, out->position) : -1;
    if (p >= 0) {
        out->has_point = true;
        out->point_position = ring_point_pos(r, (size_t)p);
        out->point_index = ring_point_index(r, (size_t)p);
        out->wrapped = out->position > ring_point_pos(r, ring_size(r) - 1);
    }
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
} page_ctx;

static int page_step(void *ud, const store_key *k)
{
    page_ctx *p = ud;
    long o = k->node == STORE_NO_NODE ? -1 : find_node_id(&p->s->cur, k->node);
    return p->fn(p->ud, k->key, k->len, k->pos, o < 0 ? NULL : p->s->cur.nodes[o].name,
                 o < 0 ? 0 : p->s->cur.nodes[o].len);
}

int sim_keys_page(sim *s, const char *node, size_t node_len, const char *prefix,
                  size_t prefix_len, int64_t offset, int64_t limit, int64_t *total,
                  sim_key_fn fn, void *ud, rs_error *err)
{
    store_key_query q = {0, false, prefix, prefix_len, offset, limit, -1};
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
        long i = find_node(&s->cur, node, node_len);
        if (i < 0)
            return rs_fail(err, RINGSIM_ENOTFOUND, "node \"%.*s\" not found",
                           (int)node_len, node);
        q.by_node = true;
        q.node = s->cur.nodes[i].id;
        if (!pre) /* the counter is the count */
            q.known_total = s->cur.nodes[i].keys;
    } else if (!pre) {
        q.known_total = sim_key_count(s);
    }
    page_ctx p = {s, fn, ud};
    return store_keys_page(s->st, &q, total, page_step, &p, err);
}

int sim_key_get(sim *s, const char *key, size_t len, uint32_t *pos, const char **node,
                size_t *node_len, rs_error *err)
{
    int rc = name_check(key, len, "key", err);
    store_key k;
    if (rc || (rc = store_key_find(s->st, key, len, &k, err)))
        return rc;
    long o = k.node == STORE_NO_NODE ? -1 : find_node_id(&s->cur, k.node);
    *pos = k.pos;
    *node = o < 0 ? NULL : s->cur.nodes[o].name;
    *node_len = o < 0 ? 0 : s->cur.nodes[o].len;
    return 0;
}

int sim_density(sim *s, uint32_t bins, int64_t *counts, rs_error *err)
{
    return store_keys_density(s->st, bins, counts, err);
}

/* ---- check ---- */

typedef struct checker {
    sim *s, *snap;
    int64_t problems;
    char *report;
    size_t size, used;
    int64_t *counted; /* keys seen per node index */
    int64_t unassigned;
    rs_error *err;
    uint64_t seen; /* keys checked, for polling */
} checker;

static void problem(checker *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(checker *k, const char *fmt, ...)
{
    k->problems++;
    if (!k->report || k->used + 1 >= k->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(k->report + k->used, k->size - k->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        k->used = k->used + (size_t)n < k->size ? k->used + (size_t)n : k->size - 1;
    if (k->used + 1 < k->size)
        k->report[k->used++] = '\n', k->report[k->used] = '\0';
}

static int check_placement(void *ud, const store_key *key)
{
    checker *k = ud;
    state *x = &k->s->cur;
    place_key_info ki;
    place_key(x->pl, k->s->h, key->key, key->len, &ki);
    long want = ki.owner;
    long have = key->node == STORE_NO_NODE ? -1 : find_node_id(x, key->node);
    if (ki.position != key->pos)
        problem(k, "key \"%.*s\": stored position %u, SHA-256 says %u", (int)key->len,
                key->key, key->pos, ki.position);
    bool col = ki.has_coord && place_column(x->pl) == PLACE_COL_COORD;
    if (col != key->has_coord || (col && coord_stored(ki.coord) != key->coord))
        problem(k, "key \"%.*s\": stored coordinate differs from the placement's",
                (int)key->len, key->key);
    if (key->node != STORE_NO_NODE && have < 0)
        problem(k, "key \"%.*s\": owner id %lld is not a node", (int)key->len, key->key,
                (long long)key->node);
    else if (want != have)
        problem(k, "key \"%.*s\": stored on %s, the ring says %s", (int)key->len, key->key,
                have < 0 ? "(none)" : x->nodes[have].name,
                want < 0 ? "(none)" : x->nodes[want].name);
    if (have >= 0)
        k->counted[have]++;
    else if (key->node == STORE_NO_NODE)
        k->unassigned++;
    return ++k->seen % PROGRESS_EVERY == 0 ? poll(k->s, k->err) : 0;
}

static int check_gone(void *ud, const store_key *k)
{
    problem(ud, "key \"%.*s\" is stored but the log does not insert it", (int)k->len, k->key);
    return 0;
}

static int check_fresh(void *ud, const store_key *k)
{
    problem(ud, "key \"%.*s\" is in the log but not stored", (int)k->len, k->key);
    return 0;
}

static int check_both(void *ud, const store_key *live, const store_key *want)
{
    checker *k = ud;
    long a = live->node == STORE_NO_NODE ? -1 : find_node_id(&k->s->cur, live->node);
    long b = want->node == STORE_NO_NODE ? -1 : find_node_id(&k->snap->cur, want->node);
    const char *an = a < 0 ? "" : k->s->cur.nodes[a].name;
    const char *bn = b < 0 ? "" : k->snap->cur.nodes[b].name;
    if ((a < 0) != (b < 0) || strcmp(an, bn) != 0)
        problem(k, "key \"%.*s\": stored on %s, replaying the log puts it on %s",
                (int)live->len, live->key, a < 0 ? "(none)" : an, b < 0 ? "(none)" : bn);
    return 0;
}

int sim_check(sim *s, int64_t *problems, char *report, size_t report_size, rs_error *err)
{
    *problems = 0;
    if (report && report_size)
        report[0] = '\0';
    int rc = sim_refresh(s, NULL, err);
    if (rc)
        return rc;
    checker k = {s, NULL, 0, report, report_size, 0, NULL, 0, err, 0};
    s->p_what = NULL;
    if ((rc = store_begin_read(s->st, err)))
        return rc;
    k.counted = calloc(s->cur.n + 1, sizeof *k.counted);
    if (!k.counted) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    /* 1. Every key where the ring says, counters equal to the counts. */
    if ((rc = progress(s, "check", 0, 3, err)) ||
        (rc = store_keys_each(s->st, 1, check_placement, &k, err)))
        goto out;
    for (size_t i = 0; i < s->cur.n; i++)
        if (k.counted[i] != s->cur.nodes[i].keys)
            problem(&k, "node \"%s\": counter says %lld keys, %lld are stored",
                    s->cur.nodes[i].name, (long long)s->cur.nodes[i].keys,
                    (long long)k.counted[i]);
    if (k.unassigned != s->cur.unassigned)
        problem(&k, "unassigned keys: counter says %lld, %lld are stored",
                (long long)s->cur.unassigned, (long long)k.unassigned);
    /* 2. Replaying the whole log gives the same configuration, nodes, keys. */
    int64_t last;
    if ((rc = progress(s, "check", 1, 3, err)) || (rc = store_last_op(s->st, &last, err)) ||
        (rc = sim_at(s, last, &k.snap, err)) || (rc = progress(s, "check", 2, 3, err)))
        goto out;
    state *x = &s->cur, *y = &k.snap->cur;
    if (memcmp(&x->cfg, &y->cfg, sizeof x->cfg) != 0) {
        char *a = place_config_describe(&x->cfg), *b = place_config_describe(&y->cfg);
        problem(&k, "configuration: stored %s, the log gives %s", a ? a : "?", b ? b : "?");
        free(a);
        free(b);
    }
    char *la = place_state_text(x->pl), *lb = place_state_text(y->pl);
    if ((la || lb) && (!la || !lb || strcmp(la, lb) != 0))
        problem(&k, "the %s layout state differs from the one the log gives",
                x->cfg.algorithm);
    free(la);
    free(lb);
    for (size_t i = 0; i < x->n; i++) {
        long j = find_node(y, x->nodes[i].name, x->nodes[i].len);
        if (j < 0)
            problem(&k, "node \"%s\" is stored but the log does not create it",
                    x->nodes[i].name);
        else if (x->nodes[i].weight != y->nodes[j].weight)
            problem(&k, "node \"%s\": weight %g stored, %g in the log", x->nodes[i].name,
                    x->nodes[i].weight, y->nodes[j].weight);
    }
    for (size_t j = 0; j < y->n; j++)
        if (find_node(x, y->nodes[j].name, y->nodes[j].len) < 0)
            problem(&k, "node \"%s\" is in the log but not stored", y->nodes[j].name);
    diff d = {check_gone, check_fresh, check_both, &k};
    if ((rc = diff_run(s, s->st, k.snap->st, &d, err)))
        goto out;
    progress(s, "check", 3, 3, NULL); /* done: too late to cancel */
out:
    store_end_read(s->st);
    *problems = k.problems;
    free(k.counted);
    sim_close(k.snap);
    return rc;
}
