/*
 * sim_state.c - the engine's state in memory and the small things every
 * other file of the engine shares: nodes and their stored attributes, the
 * state (copy, lookups, key counters, the placement built from it), the
 * tallies of a running operation, progress reports, key lists.
 *
 * It is the engine's lowest floor but for the log's decoder
 * (sim_params.c) and the node attributes' codecs: it calls no other file
 * of the engine, so the operation frame (sim.c), its participants
 * (sim_participants.c) and the operations all stand on it.  A node's
 * attributes beyond its own fields -- node states (sim_states.c) -- are
 * reached through their codecs (sim_node_attr, listed once below), so a
 * node is copied, freed, compared, stored and placed without this file
 * knowing what they are.
 *
 * Costs: a state copy is O(nodes + tokens); a node lookup by name or id
 * is a scan (sim__ids for loops over many keys: O(log nodes)); a
 * placement build costs what the algorithm's does (place.h).
 */
#define _GNU_SOURCE /* strndup */
#include "sim_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ---- nodes ---- */

/* The attributes a node carries beyond its own fields, each with its
 * codec: the one list of them. */
static const sim_node_attr *const node_attrs[] = {&sim_node_attr_states, &sim_node_attr_location};
#define NATTRS (sizeof node_attrs / sizeof *node_attrs)

bool sim__node_attrs_any(const node *x)
{
    for (size_t a = 0; a < NATTRS; a++)
        if (node_attrs[a]->any(x))
            return true;
    return false;
}

bool sim__node_attrs_equal(const node *a, const node *b)
{
    for (size_t i = 0; i < NATTRS; i++)
        if (!node_attrs[i]->equal(a, b))
            return false;
    return true;
}

int sim__node_attrs_to_json(const node *x, json_t *o)
{
    int rc = 0;
    for (size_t a = 0; !rc && a < NATTRS; a++)
        rc = node_attrs[a]->to_json(x, o);
    return rc;
}

int sim__node_attrs_from_json(const json_t *o, node *x)
{
    int rc = 0;
    for (size_t a = 0; !rc && a < NATTRS; a++)
        rc = node_attrs[a]->from_json(o, x);
    return rc;
}

void sim__node_free(node *x)
{
    free(x->name);
    free(x->tokens);
    for (size_t a = 0; a < NATTRS; a++)
        node_attrs[a]->clear(x);
}

int sim__node_copy(node *dst, const node *src)
{
    *dst = (node){.name = strndup(src->name, src->len),
                  .len = src->len,
                  .weight = src->weight,
                  .ntokens = src->ntokens,
                  .srv_id = src->srv_id};
    if (src->ntokens && (dst->tokens = malloc(src->ntokens * sizeof *dst->tokens)))
        memcpy(dst->tokens, src->tokens, src->ntokens * sizeof *dst->tokens);
    int rc = dst->name && (!src->ntokens || dst->tokens) ? 0 : RINGSIM_ENOMEM;
    for (size_t a = 0; !rc && a < NATTRS; a++)
        rc = node_attrs[a]->copy(dst, src);
    if (!rc)
        return 0;
    sim__node_free(dst);
    memset(dst, 0, sizeof *dst);
    return RINGSIM_ENOMEM;
}

/* Explicit tokens are stored as a JSON array of decimal strings
 * (sim__tokens_from_json reads them, as it reads a logged add_node's). */
int sim__tokens_parse(const char *text, node *x, rs_error *err)
{
    json_t *j = json_loads(text, 0, NULL);
    int rc = sim__tokens_from_json(j, &x->tokens, &x->ntokens);
    json_decref(j);
    if (rc == RINGSIM_ENOMEM)
        return rs_fail(err, rc, "out of memory");
    if (rc)
        return rs_fail(err, RINGSIM_EDB, "stored tokens of node \"%s\" are damaged", x->name);
    return 0;
}

char *sim__tokens_text(const int64_t *t, size_t n)
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

/* The nodes' join order, which placements depend on (jump's buckets,
 * Maglev's ties, HAProxy's ids), is kept by the store (nodes.seq, schema
 * 4): a node that a revert or an undo brings back takes its old place, so
 * another process, or this one after a restart, loads the order the keys
 * were placed by. */

char *sim__attrs_text(const node *x, bool *failed)
{
    *failed = false;
    if (!x->srv_id && !sim__node_attrs_any(x))
        return NULL;
    json_t *o = json_object();
    if (o && x->srv_id)
        json_object_set_new(o, "id", json_integer((json_int_t)x->srv_id));
    if (o && sim__node_attrs_to_json(x, o)) {
        json_decref(o);
        o = NULL;
    }
    char *t = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    *failed = t == NULL;
    return t;
}

int sim__attrs_parse(const char *text, node *x, rs_error *err)
{
    json_t *o = json_loads(text, 0, NULL), *id = json_object_get(o, "id");
    int rc = json_is_object(o) && (!id || json_is_integer(id)) ? 0 : RINGSIM_EDB;
    if (!rc && id)
        x->srv_id = json_integer_value(id);
    if (!rc) /* each codec checks its own members' types */
        rc = sim__node_attrs_from_json(o, x);
    json_decref(o);
    if (rc == RINGSIM_ENOMEM)
        return rs_fail(err, rc, "out of memory");
    return rc ? rs_fail(err, rc, "stored attributes of node \"%s\" are damaged", x->name) : 0;
}

/* ---- the state ---- */

void sim__state_clear(state *x)
{
    for (size_t i = 0; i < x->n; i++)
        sim__node_free(&x->nodes[i]);
    free(x->nodes);
    place_free(x->pl);
    free(x->pn);
    free(x->names);
    memset(x, 0, sizeof *x);
}

/* Deep copy without the placement. */
int sim__state_copy(state *dst, const state *src)
{
    memset(dst, 0, sizeof *dst);
    dst->cfg = src->cfg;
    dst->unassigned = src->unassigned;
    dst->nodes = malloc((src->n + 1) * sizeof *dst->nodes);
    if (!dst->nodes)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < src->n; i++) {
        if (sim__node_copy(&dst->nodes[i], &src->nodes[i])) {
            dst->n = i;
            sim__state_clear(dst);
            return RINGSIM_ENOMEM;
        }
        dst->nodes[i].id = src->nodes[i].id;
        dst->nodes[i].keys = src->nodes[i].keys;
    }
    dst->n = src->n;
    return 0;
}

int64_t sim_key_count(const sim *s)
{
    int64_t t = s->cur.unassigned;
    for (size_t i = 0; i < s->cur.n; i++)
        t += s->cur.nodes[i].keys;
    return t;
}

int sim__cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

long sim__find_node(const state *x, const char *name, size_t len)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].len == len && memcmp(x->nodes[i].name, name, len) == 0)
            return (long)i;
    return -1;
}

long sim__find_node_id(const state *x, int64_t id)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].id == id)
            return (long)i;
    return -1;
}

static int id_place_cmp(const void *a, const void *b)
{
    const sim__id_place *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

int sim__ids_build(sim__ids *m, const state *x)
{
    m->n = 0;
    m->v = malloc((x->n + 1) * sizeof *m->v);
    if (!m->v)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < x->n; i++)
        m->v[i] = (sim__id_place){x->nodes[i].id, (long)i};
    m->n = x->n;
    qsort(m->v, m->n, sizeof *m->v, id_place_cmp);
    return 0;
}

long sim__ids_find(const sim__ids *m, int64_t id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->v[lo].id == id ? m->v[lo].at : -1;
}

void sim__ids_free(sim__ids *m)
{
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

/* Add delta to the key counter of the owner with this id (STORE_NO_NODE:
 * the unassigned keys).  An id no longer in x (a removed node) is skipped. */
void sim__count_owner(state *x, int64_t id, int64_t delta)
{
    if (id == STORE_NO_NODE) {
        x->unassigned += delta;
        return;
    }
    long i = sim__find_node_id(x, id);
    if (i >= 0)
        x->nodes[i].keys += delta;
}

/* Build x->pl for x's configuration and nodes.  prev (may be NULL) is the
 * placement the change starts from, layout the stored state text (may be
 * NULL): stateful algorithms evolve from one or the other.  The place_node
 * array lives as long as the placement (x->pn). */
int sim__build_placement(sim *s, state *x, const placement *prev, const char *layout, rs_error *err)
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
    for (size_t i = 0; i < x->n; i++) {
        const node *d = &x->nodes[i];
        pn[i] = (place_node){.id = d->id,
                             .name = d->name,
                             .len = d->len,
                             .weight = d->weight,
                             .tokens = d->tokens,
                             .ntokens = d->ntokens,
                             .srv_id = d->srv_id};
        for (size_t a = 0; a < NATTRS; a++)
            node_attrs[a]->place(d, &pn[i]);
    }
    /* A change may not build a layout past the limit, unless it does not
     * grow one already past it (an older file): what is stored is built. */
    uint64_t want = place_layout_points(&x->cfg, pn, x->n);
    if (s->record && !s->loading && want > s->max_points &&
        (!s->cur.pl || want > place_layout_points(&s->cur.cfg, s->cur.pn, s->cur.n))) {
        free(pn);
        free(names);
        return rs_fail(err, RINGSIM_EPARAM,
                       "too many points: the %s layout would hold %llu points, and the "
                       "limit is %llu in all (nodes x points per node x weight); use fewer "
                       "points per node or fewer nodes",
                       x->cfg.algorithm, (unsigned long long)want, (unsigned long long)s->max_points);
    }
    placement *pl = NULL;
    int rc = place_build(&pl, s->h, &x->cfg, pn, x->n, prev, layout, err);
    if (rc) {
        free(pn);
        free(names);
        return rc;
    }
    (*s->builds)++;
    place_free(x->pl);
    free(x->pn);
    free(x->names);
    x->pl = pl;
    x->pn = pn;
    x->names = names;
    return 0;
}

/* ---- the running operation's tallies ---- */

static void tally_free(tally_list *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->ids);
    free(t->names);
    free(t->count);
    memset(t, 0, sizeof *t);
}

static void pairs_free(pair_list *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].from_name);
        free(t->v[i].to_name);
    }
    free(t->v);
    memset(t, 0, sizeof *t);
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
int sim__tally_side(opctx *c, bool to, int64_t id, const char *name, int64_t count)
{
    return tally_add(to ? &c->to : &c->from, id, name, count) ? RINGSIM_ENOMEM : 0;
}

pair_ent *sim__pair_find(opctx *c, int64_t from_id, int64_t to_id)
{
    pair_list *t = &c->pairs;
    /* the last one found first: moves come in runs of one pair */
    for (size_t i = t->n; i-- > 0;)
        if (t->v[i].from == from_id && t->v[i].to == to_id)
            return &t->v[i];
    return NULL;
}

int sim__tally_pair(opctx *c, int64_t from_id, const char *from_name, int64_t to_id,
                    const char *to_name, int64_t count)
{
    pair_ent *e = sim__pair_find(c, from_id, to_id);
    if (e) {
        e->keys += count;
        return 0;
    }
    pair_list *t = &c->pairs;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        pair_ent *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return RINGSIM_ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    pair_ent x = {from_id,
                  to_id,
                  from_name ? strdup(from_name) : NULL,
                  to_name ? strdup(to_name) : NULL,
                  count,
                  0,
                  0};
    if ((from_name && !x.from_name) || (to_name && !x.to_name)) {
        free(x.from_name);
        free(x.to_name);
        return RINGSIM_ENOMEM;
    }
    t->v[t->n++] = x;
    return 0;
}

int sim__tally(opctx *c, int64_t from_id, const char *from_name, int64_t to_id, const char *to_name,
               int64_t count)
{
    c->moved += count;
    return tally_add(&c->from, from_id, from_name, count) ||
                   tally_add(&c->to, to_id, to_name, count) ||
                   sim__tally_pair(c, from_id, from_name, to_id, to_name, count)
               ? RINGSIM_ENOMEM
               : 0;
}

void sim__tallies_free(opctx *c)
{
    tally_free(&c->from);
    tally_free(&c->to);
    pairs_free(&c->pairs);
}

/* ---- progress ---- */

/* Report progress.  The callback may ask to stop: the operation then fails
 * with RINGSIM_ECANCELED and its caller rolls it back whole. */
int sim__progress(sim *s, const char *what, uint64_t done, uint64_t total, rs_error *err)
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
int sim__poll(sim *s, rs_error *err)
{
    if (!s->progress || !s->p_what)
        return 0;
    return sim__progress(s, s->p_what, s->p_done, s->p_total, err);
}

/* ---- key lists: many keys in one buffer (no malloc per key) ---- */

int sim__kl_add(keylist *l, const char *k, size_t len, uint32_t pos, int64_t node)
{
    /* At least one byte: the buffer is never NULL once a key is in, even
     * an empty one. */
    size_t need = l->used + len ? l->used + len : 1;
    if (len > SIZE_MAX - l->used || vec_reserve(&l->buf, &l->cap, need, 1, 65536) ||
        vec_reserve(&l->v, &l->vcap, l->n + 1, sizeof *l->v, 1024))
        return RINGSIM_ENOMEM;
    memcpy(l->buf + l->used, k, len);
    l->v[l->n++] = (klent){l->used, len, pos, node};
    l->used += len;
    return 0;
}

void sim__kl_free(keylist *l)
{
    free(l->buf);
    free(l->v);
    memset(l, 0, sizeof *l);
}

int sim__kl_collect(void *ud, const store_key *k)
{
    return sim__kl_add(ud, k->key, k->len, k->pos, k->node) ? RINGSIM_ENOMEM : 0;
}

int sim__kl_collect_str(void *ud, const char *s, size_t len)
{
    return sim__kl_add(ud, s, len, 0, STORE_NO_NODE) ? RINGSIM_ENOMEM : 0;
}
