/*
 * sim_import.c - the import operation: the simulation becomes the cluster a
 * real system's text declares (docs/api.md, "Version 3: import a real
 * cluster").
 *
 * One operation of type `import` sets the algorithm and the text's
 * parameters over the current configuration, and replaces the nodes with
 * the text's nodes in the text's order (weights, Cassandra tokens, HAProxy
 * ids, backup, down, Redis replicas) by the change of topology that revert
 * uses (sim__adopt_nodes): stored keys stay and exactly those whose owner
 * changes move.  For Redis the masters' slot ranges become the slot map
 * (the layout state, in redis_format's text), so the map is the cluster's,
 * not the one redis-cli --cluster create would make.
 *
 * The log keeps the parsed result, not the text: params are {"format",
 * "name", "algorithm", "params", "nodes": [{"name", "weight", "address"?, "id"?,
 * "tokens"?, "state"?, "backup"?, "replicas"?, "slots"?}…], "layout"?}, so
 * that a replay (time travel, check) applies the same nodes without parsing
 * anything, and export --config finds the imported Redis layout and section
 * names there.  Bounded by the parser's limits (10,000 nodes, a million
 * tokens in all).
 *
 * Cost: the params' JSON, O(nodes + tokens), then what a change of topology
 * costs (sim.h).
 *
 * sim__adopt_nodes lives here, the change of topology to a given list of
 * nodes that import is made of; revert and the backward steps of time
 * travel (sim_history.c) call it too.
 */
#define _GNU_SOURCE /* strndup */
#include "sim_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

/* ---- adopting a set of nodes: import, revert, time travel's undo ---- */

/* Nodes by name, for adopting 10,000 of them in O(n log n): a sorted
 * array of pointers, searched by bisection (no hash a name could flood). */
static int by_name_cmp(const void *a, const void *b)
{
    const node *x = *(const node *const *)a, *y = *(const node *const *)b;
    int d = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
    return d ? d : (x->len > y->len) - (x->len < y->len);
}

static const node **by_name(const node *v, size_t n)
{
    const node **p = malloc((n + 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = &v[i];
    if (p)
        qsort(p, n, sizeof *p, by_name_cmp);
    return p;
}

/* The index in base of the node named name, or -1. */
static long by_name_find(const node **p, size_t n, const node *base, const char *name, size_t len)
{
    node key = {0};
    key.name = (char *)name;
    key.len = len;
    const node *k = &key;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_name_cmp(&p[mid], &k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && by_name_cmp(&p[lo], &k) == 0 ? (long)(p[lo] - base) : -1;
}

/* Make c->next have the nodes tn (in that order), configuration cfg and
 * layout state layout, moving exactly the keys whose owner changes.  Nodes
 * that exist in both keep their id and counter; the others get new rows,
 * and rows of nodes not in tn go after the moves.  Shared by revert, the
 * backward steps of time travel and import.  Cost: O(n log n) for the
 * names, one row written per node, then the change of topology. */
int sim__adopt_nodes(opctx *c, const node *tn, size_t tn_n, const place_config *cfg,
                     const char *layout, rs_error *err)
{
    sim *s = c->s;
    int rc = 0;
    node *nodes = calloc(tn_n + 1, sizeof *nodes);
    const node **was_by_name = by_name(c->next.nodes, c->next.n);
    if (!nodes || !was_by_name) {
        free(nodes);
        free(was_by_name);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    size_t nn = 0;
    for (size_t i = 0; !rc && i < tn_n; i++) {
        const node *t = &tn[i];
        long j = by_name_find(was_by_name, c->next.n, c->next.nodes, t->name, t->len);
        node v;
        char *tt = t->ntokens ? sim__tokens_text(t->tokens, t->ntokens) : NULL;
        if (sim__node_copy(&v, t) || (t->ntokens && !tt)) {
            sim__node_free(&v);
            free(tt);
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            break;
        }
        if (j >= 0) {
            const node *was = &c->next.nodes[j];
            v.id = was->id;
            v.keys = was->keys;
            if ((was->ntokens != t->ntokens ||
                 (t->ntokens && memcmp(was->tokens, t->tokens, t->ntokens * sizeof *t->tokens))) &&
                (rc = store_node_set_tokens(s->st, v.id, tt, err))) {
                sim__node_free(&v);
                free(tt);
                break;
            }
        } else if ((rc = store_node_insert_seq(s->st, t->name, t->len, t->weight, tt,
                                               (int64_t)nn + 1, &v.id, err))) {
            sim__node_free(&v);
            free(tt);
            break;
        }
        free(tt);
        bool failed;
        char *at = sim__attrs_text(&v, &failed); /* NULL clears a kept node's */
        rc = failed ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
                    : store_node_set_attrs(s->st, v.id, at, (int64_t)nn + 1, err);
        free(at);
        nodes[nn++] = v;
    }
    free(was_by_name);
    node *old = c->next.nodes;
    size_t oldn = c->next.n;
    c->next.nodes = nodes;
    c->next.n = nn;
    c->next.cfg = *cfg;
    if (!rc)
        rc = sim__retopologize_to(c, &s->cur, layout, err);
    const node **now_by_name = rc ? NULL : by_name(nodes, nn);
    if (!rc && !now_by_name)
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < oldn; i++) {
        if (!rc && by_name_find(now_by_name, nn, nodes, old[i].name, old[i].len) < 0)
            rc = store_node_delete(s->st, old[i].id, err);
        sim__node_free(&old[i]);
    }
    free(now_by_name);
    free(old);
    return rc;
}

/* ---- the import operation ---- */

static json_t *node_params(const import_node *n)
{
    json_t *o = json_pack("{s:s%, s:f}", "name", n->name, n->len, "weight", n->weight);
    bool ok = o != NULL;
    if (ok && n->address)
        ok = !json_object_set_new(o, "address", json_string(n->address));
    if (ok && n->id)
        ok = !json_object_set_new(o, "id", json_integer((json_int_t)n->id));
    if (ok && n->down)
        ok = !json_object_set_new(o, "state", json_string("down"));
    if (ok && n->backup)
        ok = !json_object_set_new(o, "backup", json_true());
    if (ok && n->ntokens) {
        json_t *t = json_array();
        char buf[24];
        ok = t && !json_object_set_new(o, "tokens", t);
        for (size_t i = 0; ok && i < n->ntokens; i++) {
            snprintf(buf, sizeof buf, "%lld", (long long)n->tokens[i]);
            ok = !json_array_append_new(t, json_string(buf));
        }
    }
    if (ok && (n->dc || n->rack)) { /* Cassandra's datacenter and rack */
        json_t *l = json_array();
        ok = l && !json_object_set_new(o, "location", l);
        if (ok && n->dc)
            ok = !json_array_append_new(l, json_pack("[s,s]", "dc", n->dc));
        if (ok && n->rack)
            ok = !json_array_append_new(l, json_pack("[s,s]", "rack", n->rack));
    }
    if (ok && n->nreplicas) {
        json_t *r = json_array();
        ok = r && !json_object_set_new(o, "replicas", r);
        for (size_t i = 0; ok && i < n->nreplicas; i++)
            ok = !json_array_append_new(r, json_string(n->replicas[i]));
    }
    if (ok && n->nslots) {
        json_t *sl = json_array();
        ok = sl && !json_object_set_new(o, "slots", sl);
        for (size_t i = 0; ok && i < n->nslots; i++)
            ok = !json_array_append_new(
                sl, json_pack("[i, i]", (int)n->slots[i].first, (int)n->slots[i].last));
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* What a node of the text must be for ringsim: a name its rules take, a
 * weight from 0 to the limit (0, HAProxy's server that takes no traffic,
 * is the placement's to allow: place_nodes_check), at most the tokens a
 * node may hold. */
static int node_check(const import_node *n, const place_config *cfg, int *line, rs_error *err)
{
    int rc = node_name_check(n->name, n->len, err);
    if (!rc && !(isfinite(n->weight) && n->weight >= 0 && n->weight <= SIM_MAX_WEIGHT))
        rc = rs_fail(err, RINGSIM_EPARAM,
                     "server \"%.200s\" has weight %g: ringsim's nodes need a weight from 0 to "
                     "%g",
                     n->name, n->weight, SIM_MAX_WEIGHT);
    if (!rc && n->ntokens > PLACE_MAX_NODE_POINTS)
        rc = rs_fail(err, RINGSIM_EPARAM, "node \"%.200s\" has %zu tokens; at most %u per node",
                     n->name, n->ntokens, PLACE_MAX_NODE_POINTS);
    /* The algorithm's own rules for one node (a ketama name it cannot
     * parse, a weight it does not honour), so the refusal names the line;
     * what depends on the whole list is checked when the nodes are set. */
    place_node one = {.name = n->name,
                      .len = n->len,
                      .weight = n->weight,
                      .tokens = n->tokens,
                      .ntokens = n->ntokens,
                      .srv_id = n->id,
                      .down = n->down,
                      .backup = n->backup};
    if (!rc)
        rc = place_nodes_check(cfg, &one, 1, err);
    /* A text's node ringsim cannot hold is a refusal of the text. */
    if (rc == RINGSIM_ENAME)
        rc = err->code = RINGSIM_EPARAM;
    if (rc && line)
        *line = n->line;
    return rc;
}

/* The masters' slots as the slot map's text (ordinals in the nodes'
 * order), for an algorithm whose layout is one (place_slot_count); every
 * slot must have a master, as ringsim's map always covers them all. */
static int slot_layout(const char *algorithm, const json_t *nodes, char **out, rs_error *err)
{
    uint32_t slots = place_slot_count(algorithm);
    uint32_t *owner = malloc(slots * sizeof *owner);
    if (!owner)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < slots; i++)
        owner[i] = UINT32_MAX;
    json_t *n, *r;
    size_t i, k;
    int rc = 0;
    json_array_foreach(nodes, i, n)
    {
        json_array_foreach(json_object_get(n, "slots"), k, r)
        {
            json_int_t a = json_integer_value(json_array_get(r, 0));
            json_int_t b = json_integer_value(json_array_get(r, 1));
            if (a < 0 || b < a || b >= (json_int_t)slots) {
                rc = rs_fail(err, RINGSIM_EDB, "import: a slot range is damaged");
                break;
            }
            for (json_int_t x = a; x <= b; x++)
                owner[x] = (uint32_t)i;
        }
    }
    size_t none = 0, first = 0;
    for (size_t sl = 0; !rc && sl < slots; sl++)
        if (owner[sl] == UINT32_MAX && none++ == 0)
            first = sl;
    if (!rc && none)
        rc = rs_fail(err, RINGSIM_EPARAM,
                     "%zu of %u slots have no master (the first is %zu): ringsim's %s "
                     "places every slot on a master; assign them (CLUSTER ADDSLOTS) and import "
                     "again",
                     none, (unsigned)slots, first, algorithm);
    if (!rc && !(*out = place_slot_text(algorithm, owner)))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    free(owner);
    return rc;
}

static void nodes_free(node *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sim__node_free(&v[i]);
    free(v);
}

/* The nodes of logged params.  RINGSIM_EDB for damaged params. */
static int nodes_from_params(const json_t *arr, node **out, size_t *count, rs_error *err)
{
    size_t n = json_array_size(arr), got = 0;
    node *v = calloc(n + 1, sizeof *v);
    int rc = v ? 0 : RINGSIM_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        sim_node_spec sp;
        int64_t *tok = NULL;
        const char **rep = NULL;
        place_loc *loc = NULL;
        node *x = &v[got];
        rc = sim_node_spec_from_json(json_array_get(arr, i), &sp, &tok, &rep, &loc);
        if (!rc && !(x->name = strndup(sp.name, sp.len)))
            rc = RINGSIM_ENOMEM;
        if (!rc) {
            got++;
            x->len = sp.len;
            x->weight = sp.weight;
            x->srv_id = sp.srv_id;
            x->down = sp.down;
            x->backup = sp.backup;
            x->tokens = tok; /* the node owns them now */
            x->ntokens = sp.ntokens;
            tok = NULL;
            rc = sim__node_set_replicas(x, sp.replicas, sp.nreplicas);
            if (!rc)
                rc = sim__node_set_location(x, sp.loc, sp.nloc);
        }
        free(tok);
        free(rep);
        free(loc);
    }
    if (rc) {
        nodes_free(v, got);
        return rs_fail(err, rc, rc == RINGSIM_ENOMEM ? "out of memory" : "import: damaged nodes");
    }
    *out = v;
    *count = got;
    return 0;
}

/* The import itself, from its params: live (sim_import) and replayed. */
static int import_apply(sim *s, json_t *params, const place_config *cfg, int64_t *op, rs_error *err)
{
    node *tn = NULL;
    size_t n = 0;
    char *layout = NULL, *subject = NULL;
    json_t *nodes = json_object_get(params, "nodes");
    int rc = place_config_check(cfg, err);
    if (!rc)
        rc = nodes_from_params(nodes, &tn, &n, err);
    if (!rc && place_slot_count(cfg->algorithm) && n)
        rc = slot_layout(cfg->algorithm, nodes, &layout, err);
    const char *fmt = json_string_value(json_object_get(params, "format"));
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!rc && asprintf(&subject, "%s%s%s: %zu node%s", fmt ? fmt : "import",
                        name && *name ? " " : "", name ? name : "", n, n == 1 ? "" : "s") < 0) {
        subject = NULL;
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    opctx c;
    if (!rc && !(rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_IMPORT), subject, params, err))) {
        rc = sim__adopt_nodes(&c, tn, n, cfg, layout, err);
        if (rc)
            sim__op_abort(&c);
        else
            rc = sim__op_commit(&c, op, err);
    }
    nodes_free(tn, n);
    free(layout);
    free(subject);
    return rc;
}

int sim_import_check(const import_result *r, int *line, rs_error *err)
{
    if (line)
        *line = 0;
    place_config cfg;
    place_config_default(&cfg);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", import_result_algorithm(r));
    int rc = 0;
    for (size_t i = 0; !rc && i < import_node_count(r); i++)
        rc = node_check(import_node_at(r, i), &cfg, line, err);
    const char *alg = import_result_algorithm(r);
    uint32_t slots = place_slot_count(alg);
    if (rc || !slots || !import_node_count(r))
        return rc;
    size_t covered = 0; /* the parser refuses a slot held twice */
    for (size_t i = 0; i < import_node_count(r); i++) {
        const import_node *n = import_node_at(r, i);
        for (size_t k = 0; k < n->nslots; k++)
            covered += (size_t)(n->slots[k].last - n->slots[k].first) + 1;
    }
    if (covered < slots)
        rc = rs_fail(err, RINGSIM_EPARAM,
                     "%zu of %u slots have no master: ringsim's %s places every slot on a "
                     "master; assign them (CLUSTER ADDSLOTS) and import again",
                     (size_t)slots - covered, (unsigned)slots, alg);
    return rc;
}

int sim_import_ex(sim *s, const import_result *r, int *line, int64_t *op, rs_error *err)
{
    *op = 0;
    int rc = sim_import_check(r, line, err);
    if (rc)
        return rc;
    json_t *arr = json_array();
    json_t *params = arr ? json_pack("{s:s, s:s, s:s, s:O, s:o}", "format",
                                     import_format_name(import_result_format(r)), "name",
                                     import_result_name(r), "algorithm", import_result_algorithm(r),
                                     "params", import_result_params(r), "nodes", arr)
                         : NULL;
    if (!params) /* json_pack released arr */
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < import_node_count(r); i++) {
        json_t *e = node_params(import_node_at(r, i));
        if (!e || json_array_append_new(arr, e))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    /* The text's algorithm and parameters over the current configuration. */
    int cr = rc ? rc : sim_refresh(s, NULL, err);
    place_config cfg = *sim_config(s);
    json_t *cj = cr ? NULL
                    : json_pack("{s:s, s:O}", "algorithm", import_result_algorithm(r), "params",
                                import_result_params(r));
    if (!cr && !cj)
        cr = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!cr)
        cr = place_config_from_json(&cfg, cj, err);
    json_decref(cj);
    rc = cr ? cr : import_apply(s, params, &cfg, op, err);
    json_decref(params);
    return rc;
}

int sim_import(sim *s, const import_result *r, int64_t *op, rs_error *err)
{
    return sim_import_ex(s, r, NULL, op, err);
}

int sim__import_replay(sim *s, const sim_op *o, const json_t *params, int64_t *op, rs_error *err)
{
    place_config cfg;
    int rc = sim_op_config(o, &cfg, err);
    return rc ? rc : import_apply(s, (json_t *)params, &cfg, op, err);
}

/* ---- the import the state stands on ---- */

typedef struct last_import {
    int64_t id;
    char *params;
    bool configured; /* a configure came after the import taken (or in the segment) */
} last_import;

static int take_import(void *ud, const store_op *o)
{
    last_import *l = ud;
    sim_op_type t = sim_op_type_of(o->type);
    if (t == SIM_OP_CONFIGURE)
        l->configured = true;
    if (t != SIM_OP_IMPORT)
        return 0;
    l->configured = false;
    char *p = strdup(o->params ? o->params : "{}");
    if (!p)
        return RINGSIM_ENOMEM;
    free(l->params);
    l->params = p;
    l->id = o->id;
    return 0;
}

int sim_import_last(sim *s, json_t **params, int64_t *id, rs_error *err)
{
    return sim_import_last_ex(s, params, id, NULL, err);
}

int sim_import_last_ex(sim *s, json_t **params, int64_t *id, bool *configured, rs_error *err)
{
    *params = NULL;
    *id = 0;
    bool newer = false; /* a configure in the segments after the import's */
    int64_t last = sim_last_op(s);
    if (last < 0)
        return (int)last;
    sim_chain ch;
    int rc = sim_chain_get(s, last, &ch, err);
    last_import l = {0, NULL, false};
    for (size_t i = 0; !rc && i < ch.n && !l.params; i++)
        if (ch.seg[i].to > ch.seg[i].from) {
            l.configured = false;
            rc = sim_log_each(s, ch.seg[i].from, ch.seg[i].to - ch.seg[i].from, take_import, &l, err);
            newer |= l.configured && !l.params;
        }
    if (configured)
        *configured = newer || (l.params && l.configured);
    sim_chain_free(&ch);
    if (rc == RINGSIM_ENOMEM)
        rs_fail(err, rc, "out of memory");
    if (!rc && l.params && !(*params = json_loads(l.params, 0, NULL)))
        rc = rs_fail(err, RINGSIM_EDB, "operation %lld has unreadable parameters", (long long)l.id);
    if (!rc)
        *id = l.id;
    free(l.params);
    return rc;
}
