/*
 * scenario_export.c - the history written as a scenario file that rebuilds
 * the state (scenario_export, see scenario.h; `ringsim export --scenario`,
 * GET /api/export/scenario).
 *
 * Exporting walks the history as time travel does (sim_at): the state after
 * the last operation stands on the operations since the last reset or
 * revert, and a revert to j stands on the state after j, recursively; a
 * reset starts from nothing with the configuration it kept.  The export
 * writes that chain -- the recipe of the state -- and leaves out what a
 * reset cleared or a revert undid, so running it reproduces the state, not
 * the detours.  It starts with `reset` and the whole configuration, so it
 * rebuilds the same state on any database.  Each line is quoted as a
 * shell and scenario.c split it back (scenario_quote).  Costs: linear in
 * the operations of the chain and the keys they name.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "scenario.h"
#include "scenario_int.h"
#include "vec.h"
#include "view.h"

typedef struct idlist {
    int64_t *v;
    size_t n, cap;
} idlist;

static int collect_id(void *ud, const sim_op *op)
{
    idlist *l = ud;
    if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 64))
        return RINGSIM_ENOMEM;
    l->v[l->n++] = op->id;
    return 0;
}

/* The operations the state after `at` stands on, oldest first, and the
 * configuration they start from: the engine's walk (sim_chain_get), the
 * same one time travel replays. */
static int recipe(sim *s, int64_t at, idlist *ops, place_config *start, int64_t *base, rs_error *err)
{
    sim_chain ch;
    int rc = sim_chain_get(s, at, &ch, err);
    if (!rc)
        *start = ch.start;
    /* The oldest segment starts after a reset (which kept the workload),
     * a revert to 0, or nothing: the workload of then is its record. */
    *base = !rc && ch.n ? ch.seg[ch.n - 1].from : 0;
    for (size_t i = ch.n; !rc && i-- > 0;)
        if (ch.seg[i].to > ch.seg[i].from)
            rc = sim_log_each(s, ch.seg[i].from, ch.seg[i].to - ch.seg[i].from, collect_id, ops, err);
    sim_chain_free(&ch);
    if (rc == RINGSIM_ENOMEM)
        rs_fail(err, rc, "out of memory");
    return rc;
}

typedef struct exporter {
    sim *s;
    sbuf b;
    place_config cfg; /* the configuration so far */
    const idlist *ops;
    json_t *names; /* the nodes so far, by name: an import removes them first */
} exporter;

static int put_word(exporter *x, const char *w, size_t n)
{
    int rc = sb_add(&x->b, " ", 1);
    return rc ? rc : scenario_quote(&x->b.p, &x->b.n, &x->b.cap, w, n);
}

/* One --param NAME=VALUE of a workload (VALUE: text, a number, or JSON). */
static int put_param(exporter *x, const char *prefix, const char *k, const json_t *v)
{
    char num[SCENARIO_NUM_TEXT];
    if (json_is_number(v))
        scenario__num_text(num, json_number_value(v));
    char *val = json_is_string(v)   ? strdup(json_string_value(v))
                : json_is_number(v) ? strdup(num)
                                    : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *word = NULL;
    if (val && asprintf(&word, "%s%s=%s", prefix, k, val) < 0)
        word = NULL;
    int rc = word ? 0 : RINGSIM_ENOMEM;
    if (!rc)
        rc = sb_str(&x->b, " --param");
    if (!rc)
        rc = put_word(x, word, strlen(word));
    free(val);
    free(word);
    return rc;
}

/* "workload KIND --param NAME=VALUE... --param sizes.NAME=VALUE...": the
 * whole workload (its parameters are the operation's). */
static int put_workload(exporter *x, const json_t *p)
{
    json_t *kind = json_object_get(p, "kind"), *sizes = json_object_get(p, "sizes"), *v;
    int rc = sb_str(&x->b, "workload");
    if (!rc)
        rc = put_word(x, json_string_value(kind) ? json_string_value(kind) : "uniform",
                      json_string_value(kind) ? json_string_length(kind) : 7);
    const char *k;
    json_object_foreach((json_t *)p, k, v)
    {
        if (!rc && strcmp(k, "kind") && strcmp(k, "sizes"))
            rc = put_param(x, "", k, v);
    }
    json_object_foreach(sizes, k, v)
    {
        if (!rc)
            rc = put_param(x, "sizes.", k, v);
    }
    return rc;
}

/* The parameters of other algorithms that cfg remembers (a switch keeps
 * them, and so does a reset: ring's points_per_node set before a switch to
 * ketama), where they differ from the defaults: each set first under the
 * first algorithm of the catalogue that takes it, one line per algorithm,
 * before anything is placed (the start of the file).  `config` refuses a
 * parameter the algorithm does not take, so the line for cfg's own
 * algorithm cannot carry them. */
static int put_remembered(exporter *x, const place_config *cfg)
{
    place_config def;
    place_config_default(&def);
    json_t *now = place_config_json(cfg, true), *dj = place_config_json(&def, true);
    json_t *cat = place_algorithms_json();
    int rc = now && dj && cat ? 0 : RINGSIM_ENOMEM;
    size_t i;
    json_t *a;
    json_array_foreach(cat, i, a)
    {
        const char *alg = json_string_value(json_object_get(a, "name"));
        bool open = false;
        size_t j;
        json_t *pj;
        json_array_foreach(json_object_get(a, "params"), j, pj)
        {
            const char *k = json_string_value(json_object_get(pj, "name"));
            json_t *v = json_object_get(json_object_get(now, "params"), k);
            rs_error e;
            if (rc || !v || json_equal(v, json_object_get(json_object_get(dj, "params"), k)) ||
                !view_param_check(cfg->algorithm, k, strlen(k), &e))
                continue; /* the default, or cfg's own: its line sets it */
            /* The first algorithm that takes it (an earlier line set it). */
            bool earlier = false;
            for (size_t b = 0; b < i && !earlier; b++) {
                const char *ob = json_string_value(json_object_get(json_array_get(cat, b), "name"));
                earlier = !view_param_check(ob, k, strlen(k), &e);
            }
            if (earlier)
                continue;
            if (!open && !(rc = sb_str(&x->b, "config --algorithm")))
                rc = put_word(x, alg, strlen(alg));
            open = true;
            if (!rc)
                rc = json_is_string(v)
                         ? sb_printf(&x->b, " --param %s=%s", k, json_string_value(v))
                         : sb_printf(&x->b, " --param %s=%lld", k, (long long)json_integer_value(v));
        }
        if (!rc && open)
            rc = sb_str(&x->b, " --replicas 1\n");
    }
    json_decref(now);
    json_decref(dj);
    json_decref(cat);
    return rc;
}

/* "config --algorithm A --param ... --replicas R": every parameter of A
 * when all (after the other algorithms' remembered ones), else those that
 * differ from x->cfg. */
static int put_config(exporter *x, const place_config *cfg, bool all)
{
    if (all) {
        int r = put_remembered(x, cfg);
        if (r)
            return r;
    }
    json_t *now = place_config_json(cfg, true), *was = place_config_json(&x->cfg, true);
    int rc = now && was ? sb_str(&x->b, "config --algorithm") : RINGSIM_ENOMEM;
    if (!rc)
        rc = put_word(x, cfg->algorithm, strlen(cfg->algorithm));
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(now, "params"), k, v)
    {
        json_int_t a = json_integer_value(v);
        if (rc || (!all && json_equal(v, json_object_get(json_object_get(was, "params"), k))))
            continue;
        /* Only the algorithm's own parameters: `config` refuses the others
         * (docs/api.md v3).  The others stay as the earlier lines set them. */
        rs_error e;
        if ((rc = view_param_check(cfg->algorithm, k, strlen(k), &e)) == RINGSIM_EPARAM) {
            rc = 0;
            continue;
        }
        if (json_is_object(v)) { /* cassandra's replication: dc1:3,dc2:2, one word */
            sbuf w = {0};
            const char *dk;
            json_t *dv;
            json_object_foreach(v, dk, dv)
            {
                if (!rc && w.n)
                    rc = sb_str(&w, ",");
                if (!rc)
                    rc = sb_str(&w, dk);
                if (!rc)
                    rc = sb_printf(&w, ":%lld", (long long)json_integer_value(dv));
            }
            if (!rc)
                rc = sb_printf(&x->b, " --param");
            char *word = NULL;
            if (!rc && asprintf(&word, "%s=%s", k, w.p ? w.p : "") < 0)
                rc = RINGSIM_ENOMEM;
            if (!rc)
                rc = put_word(x, word, strlen(word));
            free(word);
            free(w.p);
        } else if (json_is_string(v)) { /* a choice by name, replica_domain: quoted if need be */
            char *word = NULL;
            rc = asprintf(&word, "%s=%s", k, json_string_value(v)) < 0 ? RINGSIM_ENOMEM
                                                                       : sb_str(&x->b, " --param");
            if (!rc)
                rc = put_word(x, word, strlen(word));
            free(word);
        } else
            rc = sb_printf(&x->b, " --param %s=%lld", k, (long long)a);
    }
    if (!rc && (all || cfg->replicas != x->cfg.replicas))
        rc = sb_printf(&x->b, " --replicas %u", cfg->replicas);
    if (!rc)
        rc = sb_str(&x->b, "\n");
    json_decref(now);
    json_decref(was);
    x->cfg = *cfg;
    return rc;
}

typedef struct keyscan {
    const char *key;
    size_t len;
    bool found;
    exporter *x;
    bool dashes; /* some key starts with '-' */
} keyscan;

static int scan_key(void *ud, const char *k, size_t n)
{
    keyscan *ks = ud;
    if (n == ks->len && memcmp(k, ks->key, n) == 0) {
        ks->found = true;
        return 1; /* stop */
    }
    return 0;
}

static int dash_key(void *ud, const char *k, size_t n)
{
    (void)n;
    ((keyscan *)ud)->dashes |= k[0] == '-';
    return 0;
}

static int emit_key(void *ud, const char *k, size_t n)
{
    return put_word(((keyscan *)ud)->x, k, n);
}

/* Whether generate {prefix, start, count} made key. */
static bool generated(const sim_op_params *p, const char *key, size_t len)
{
    size_t pl = p->prefix.len;
    if (len <= pl || memcmp(key, p->prefix.s, pl) != 0)
        return false;
    const char *d = key + pl;
    size_t dl = len - pl;
    if (dl > 19 || (d[0] == '0' && dl > 1))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < dl; i++) {
        if (d[i] < '0' || d[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(d[i] - '0');
    }
    return v >= p->start && v - p->start < p->count;
}

/* Whether key existed right before the recipe's operation i: the last
 * earlier operation that names it decides (an insert made or kept it, a
 * delete removed it).  Only asked of one-key inserts, which a scenario
 * writes as `key add KEY` -- refused when KEY exists, where the API's
 * {"keys": [KEY]} skipped it. */
static int existed_before(exporter *x, size_t i, const char *key, size_t len, bool *existed,
                          rs_error *err)
{
    sim *st = x->s;
    *existed = false;
    while (i-- > 0) {
        sim_op o;
        int rc = sim_log_get(st, x->ops->v[i], &o, err);
        if (rc)
            return rc;
        sim_op_type type = sim_op_type_of(o.type);
        bool ins = type == SIM_OP_INSERT_KEYS, del = type == SIM_OP_DELETE_KEYS;
        sim_op_params p;
        keyscan ks = {key, len, false, x, false};
        if ((ins || del) && !(rc = sim_op_params_read(&o, &p, err))) {
            if (p.generated)
                ks.found = generated(&p, key, len);
            else
                rc = sim_log_keys(st, o.id, scan_key, &ks, err);
            sim_op_params_clear(&p);
        }
        sim_op_clear(&o);
        if (rc < 0)
            return rc;
        if (ks.found) {
            *existed = ins;
            return 0;
        }
    }
    return 0;
}

typedef struct first_key {
    char *k;
    size_t len;
} first_key;

static int take_first(void *ud, const char *k, size_t n)
{
    first_key *f = ud;
    if (!(f->k = strndup(k, n)))
        return RINGSIM_ENOMEM;
    f->len = n;
    return 1; /* stop */
}

/* " --location TYPE=NAME,…" (a location's names may need quotes). */
static int put_location(exporter *x, const place_loc *loc, size_t n)
{
    char *t = place_loc_text(loc, n);
    int rc = t ? sb_str(&x->b, " --location") : RINGSIM_ENOMEM;
    if (!rc)
        rc = put_word(x, t, strlen(t));
    free(t);
    return rc;
}

/* "node add [--weight W] [--tokens T,…] [--id N] [--backup] [--down] NAME",
 * without its newline. */
static int put_node_add(exporter *x, const sim_node_spec *nd)
{
    int rc = sb_str(&x->b, "node add");
    if (!rc && nd->weight != 1) {
        char t[SCENARIO_NUM_TEXT];
        scenario__num_text(t, nd->weight);
        rc = sb_printf(&x->b, " --weight %s", t);
    }
    for (size_t k = 0; !rc && k < nd->ntokens; k++)
        rc = sb_printf(&x->b, "%s%lld", k ? "," : " --tokens ", (long long)nd->tokens[k]);
    if (!rc && nd->srv_id) /* HAProxy's server id */
        rc = sb_printf(&x->b, " --id %lld", (long long)nd->srv_id);
    /* A node added down or as a backup (import); a Redis master's
     * replicas have no option and are not written. */
    if (!rc && nd->backup)
        rc = sb_str(&x->b, " --backup");
    if (!rc && nd->down)
        rc = sb_str(&x->b, " --down");
    if (!rc && nd->nloc)
        rc = put_location(x, nd->loc, nd->nloc);
    if (!rc && nd->name[0] == '-')
        rc = sb_str(&x->b, " --");
    return rc ? rc : put_word(x, nd->name, nd->len);
}

static int put_node_rm(exporter *x, const char *nm, size_t nl)
{
    int rc = sb_str(&x->b, nm[0] == '-' ? "node rm --" : "node rm");
    return rc ? rc : put_word(x, nm, nl);
}

static void forget_name(exporter *x, const char *nm, size_t nl)
{
    for (size_t k = 0; k < json_array_size(x->names); k++) {
        json_t *v = json_array_get(x->names, k);
        if (json_string_length(v) == nl && memcmp(json_string_value(v), nm, nl) == 0) {
            json_array_remove(x->names, k);
            return;
        }
    }
}

/* An import (docs/api.md "Import a real cluster") as the lines that rebuild
 * what it left: its nodes replace the current ones, so those leave first;
 * then the configuration it set and its nodes in the text's order, with
 * their weights, tokens, ids and states.  A slot map (Redis) has no such
 * lines: refused, naming the way out. */
static int put_import(exporter *x, const sim_op *o, const json_t *params, rs_error *err)
{
    place_config cfg;
    int rc = sim_op_config(o, &cfg, err);
    if (rc)
        return rc;
    if (place_slot_count(cfg.algorithm))
        return rs_fail(err, RINGSIM_EPARAM,
                       "operation %lld is an import (%s): its slot map cannot be written as "
                       "scenario lines; write the nodes with `ringsim export --config "
                       "redis-nodes` instead",
                       (long long)o->id, o->subject ? o->subject : "");
    rc = sb_printf(&x->b, "# operation %lld imported %s: its nodes replace the others\n",
                   (long long)o->id, o->subject ? o->subject : "a cluster");
    while (!rc && json_array_size(x->names)) {
        json_t *v = json_array_get(x->names, 0);
        rc = put_node_rm(x, json_string_value(v), json_string_length(v));
        if (!rc)
            rc = sb_str(&x->b, "\n");
        json_array_remove(x->names, 0);
    }
    if (!rc)
        rc = put_config(x, &cfg, false);
    const json_t *nodes = json_object_get(params, "nodes");
    for (size_t k = 0; !rc && k < json_array_size(nodes); k++) {
        sim_node_spec sp;
        int64_t *tok = NULL;
        const char **rep = NULL;
        place_loc *loc = NULL;
        rc = sim_node_spec_from_json(json_array_get(nodes, k), &sp, &tok, &rep, &loc);
        if (rc == RINGSIM_EDB)
            rs_fail(err, rc, "operation %lld has unreadable parameters", (long long)o->id);
        if (!rc)
            rc = put_node_add(x, &sp);
        if (!rc)
            rc = sb_str(&x->b, "\n");
        if (!rc && json_array_append_new(x->names, json_stringn(sp.name, sp.len)))
            rc = RINGSIM_ENOMEM;
        free(tok);
        free(rep);
        free(loc);
    }
    return rc;
}

static int put_op(exporter *x, size_t i, rs_error *err)
{
    sim *st = x->s;
    sim_op o;
    int rc = sim_log_get(st, x->ops->v[i], &o, err);
    if (rc)
        return rc;
    sim_op_params p;
    if ((rc = sim_op_params_read(&o, &p, err))) {
        sim_op_clear(&o);
        return rc;
    }
    const sim_node_spec *nd = &p.node;
    const char *nm = nd->name;
    size_t nl = nd->len;
    sim_op_type type = p.type;
    if (type == SIM_OP_ADD_NODE) {
        rc = put_node_add(x, nd);
        if (!rc && json_array_append_new(x->names, json_stringn(nm, nl)))
            rc = RINGSIM_ENOMEM;
    } else if (type == SIM_OP_SET_STATE && p.dom_type) {
        place_loc d = {p.dom_type, p.dom_name};
        rc = sb_str(&x->b, nd->down ? "node down" : "node up");
        if (!rc)
            rc = put_location(x, &d, 1);
    } else if (type == SIM_OP_SET_STATE) {
        rc = sb_str(&x->b, nd->down ? (nm[0] == '-' ? "node down --" : "node down")
                                    : (nm[0] == '-' ? "node up --" : "node up"));
        if (!rc)
            rc = put_word(x, nm, nl);
    } else if (type == SIM_OP_SET_REWEIGHT) {
        char t[SCENARIO_NUM_TEXT];
        scenario__num_text(t, p.reweight);
        rc = sb_str(&x->b, nm[0] == '-' ? "node reweight --" : "node reweight");
        if (!rc)
            rc = put_word(x, nm, nl);
        if (!rc)
            rc = sb_printf(&x->b, " %s", t);
    } else if (type == SIM_OP_SET_LOCATION) {
        /* --location '' clears it; options stand before a "--" */
        rc = sb_str(&x->b, "node move");
        if (!rc)
            rc = put_location(x, nd->loc, nd->nloc);
        if (!rc && nm[0] == '-')
            rc = sb_str(&x->b, " --");
        if (!rc)
            rc = put_word(x, nm, nl);
    } else if (type == SIM_OP_REMOVE_NODE) {
        rc = put_node_rm(x, nm, nl);
        forget_name(x, nm, nl);
    } else if (type == SIM_OP_SET_WEIGHT) {
        char t[SCENARIO_NUM_TEXT];
        scenario__num_text(t, nd->weight);
        rc = sb_str(&x->b, nm[0] == '-' ? "node weight --" : "node weight");
        if (!rc)
            rc = put_word(x, nm, nl);
        if (!rc)
            rc = sb_printf(&x->b, " %s", t);
    } else if (type == SIM_OP_INSERT_KEYS && p.generated) {
        rc = sb_printf(&x->b, "key gen %llu", (unsigned long long)p.count);
        if (!rc && (p.prefix.len != 4 || memcmp(p.prefix.s, "key-", 4) != 0)) {
            rc = sb_str(&x->b, " --prefix");
            if (!rc)
                rc = put_word(x, p.prefix.s, p.prefix.len);
        }
        /* Always: the default start depends on what was generated before. */
        if (!rc)
            rc = sb_printf(&x->b, " --start %llu", (unsigned long long)p.start);
    } else if (type == SIM_OP_INSERT_KEYS || type == SIM_OP_DELETE_KEYS) {
        bool ins = type == SIM_OP_INSERT_KEYS;
        keyscan ks = {NULL, 0, false, x, false};
        rc = sim_log_keys(st, o.id, dash_key, &ks, err);
        if (!rc && ins && p.keys == 1) {
            /* one key: `key add KEY` is refused when KEY exists */
            first_key fk = {NULL, 0};
            rc = sim_log_keys(st, o.id, take_first, &fk, err);
            if (rc > 0) /* stopped at the first */
                rc = 0;
            bool existed = false;
            if (!rc && fk.k)
                rc = existed_before(x, i, fk.k, fk.len, &existed, err);
            free(fk.k);
            if (!rc && existed) {
                rc = sb_printf(&x->b, "# operation %lld inserted nothing: its key existed",
                               (long long)o.id);
                goto done;
            }
        }
        if (!rc)
            rc = sb_str(&x->b, ins ? "key add" : "key rm");
        if (!rc && ks.dashes)
            rc = sb_str(&x->b, " --");
        if (!rc)
            rc = sim_log_keys(st, o.id, emit_key, &ks, err);
    } else if (type == SIM_OP_CONFIGURE) {
        place_config cfg;
        if (!(rc = sim_op_config(&o, &cfg, err)))
            rc = put_config(x, &cfg, false);
        goto out; /* put_config ends its line */
    } else if (type == SIM_OP_WORKLOAD) {
        rc = put_workload(x, p.json);
    } else if (type == SIM_OP_IMPORT) {
        rc = put_import(x, &o, p.json, err);
        goto out; /* put_import ends its lines */
    } else {
        rc = rs_fail(err, RINGSIM_EDB, "operation %lld (%s) cannot be exported", (long long)o.id,
                     o.type);
    }
done:
    if (!rc)
        rc = sb_str(&x->b, "\n");
out:
    sim_op_params_clear(&p);
    sim_op_clear(&o);
    if (rc == RINGSIM_ENOMEM || rc == RINGSIM_EINTERNAL)
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return rc;
}

/* Whether one of the exported operations sets a workload. */
static int sets_workload(exporter *x, bool *yes, rs_error *err)
{
    *yes = false;
    for (size_t i = 0; !*yes && i < x->ops->n; i++) {
        sim_op o;
        int rc = sim_log_get(x->s, x->ops->v[i], &o, err);
        if (rc)
            return rc;
        *yes = sim_op_type_of(o.type) == SIM_OP_WORKLOAD;
        sim_op_clear(&o);
    }
    return 0;
}

/* The line after the configuration: the workload the first operation ran
 * under.  A `keys` workload lists keys the reset cleared (`workload`
 * refuses keys that are not stored): then `workload uniform` here, and the
 * listed one at the end (*later) unless an operation sets another. */
static int start_workload(exporter *x, const json_t *w, bool *later, rs_error *err)
{
    *later = false;
    const char *kind = json_string_value(json_object_get(w, "kind"));
    json_t *def = NULL; /* the default, as the log's start has it */
    int rc = sim_workload_after(x->s, 0, &def, err);
    bool is_default = !rc && json_equal(def, (json_t *)w);
    json_decref(def);
    bool keys = kind && !strcmp(kind, "keys");
    if (!rc && keys && (rc = sets_workload(x, later, err)) == 0)
        *later = !*later;
    if (!rc)
        rc = is_default || keys ? sb_str(&x->b, "workload uniform") : put_workload(x, w);
    return rc ? rc : sb_str(&x->b, "\n");
}

/* The `keys` workload start_workload put off, before the expect lines:
 * written when the state stores every key it lists, else said why not. */
static int end_workload(exporter *x, sim *state, const json_t *w)
{
    const json_t *keys = json_object_get(w, "keys"), *e;
    size_t i, missing = 0;
    json_array_foreach(keys, i, e)
    {
        const json_t *k = json_object_get(e, "key");
        uint32_t pos;
        const char *node;
        size_t nl;
        rs_error ke = {0, ""};
        if (sim_key_get(state, json_string_value(k), json_string_length(k), &pos, &node, &nl, &ke))
            missing++;
    }
    if (missing)
        return sb_printf(&x->b,
                         "# the workload in force lists %zu key%s this state does not store: "
                         "`workload` cannot set it again\n",
                         missing, missing == 1 ? "" : "s");
    int rc = put_workload(x, w);
    return rc ? rc : sb_str(&x->b, "\n");
}

int scenario_export(sim *s, int64_t at, char **text, size_t *len, rs_error *err)
{
    *text = NULL;
    *len = 0;
    int rc = sim_refresh(s, NULL, err);
    if (rc)
        return rc;
    sim *st = s;
    /* One read snapshot: the history cannot change under the walk. */
    if ((rc = sim_read_begin(st, err)))
        return rc;
    int64_t last = 0;
    idlist ops = {0};
    place_config start;
    exporter x = {.s = s, .ops = &ops, .names = json_array()};
    if (!x.names) {
        sim_read_end(st);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    rc = sim_log_last(st, &last, err);
    if (!rc && at > last)
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found", (long long)at);
    if (!rc && at >= 0)
        last = at;
    int64_t base = 0;
    if (!rc)
        rc = recipe(s, last, &ops, &start, &base, err);
    if (!rc)
        rc = sb_printf(&x.b,
                       "# The state after operation %lld\n"
                       "#\n"
                       "# Exported by `ringsim export --scenario`: the operations this state "
                       "stands on,\n"
                       "# oldest first, each one line.  What a reset cleared or a revert undid "
                       "is left\n"
                       "# out (the history keeps it); running this file (`ringsim run FILE`) "
                       "on any\n"
                       "# database rebuilds the same nodes, keys, configuration and workload.\n\n"
                       "reset\n",
                       (long long)last);
    /* Configurations set before any node or key only set the configuration
     * (there is nothing to place): they fold into the first line. */
    size_t first = 0;
    for (; !rc && first < ops.n; first++) {
        sim_op o;
        if ((rc = sim_log_get(st, ops.v[first], &o, err)))
            break;
        bool cfg = sim_op_type_of(o.type) == SIM_OP_CONFIGURE;
        if (cfg)
            rc = sim_op_config(&o, &start, err);
        sim_op_clear(&o);
        if (!cfg)
            break;
    }
    if (!rc) {
        x.cfg = start;
        rc = put_config(&x, &start, true);
    }
    /* The workload in force at the start (a reset keeps it): written, the
     * default too, since `reset` on another database keeps that one's. */
    json_t *wl0 = NULL;
    bool keys_later = false;
    if (!rc)
        rc = sim_workload_after(st, base, &wl0, err);
    sim_op o1; /* unless the first operation sets one (the export of a copy) */
    bool set_first = false;
    if (!rc && first < ops.n && !(rc = sim_log_get(st, ops.v[first], &o1, err))) {
        set_first = sim_op_type_of(o1.type) == SIM_OP_WORKLOAD;
        sim_op_clear(&o1);
    }
    if (!rc && !set_first)
        rc = start_workload(&x, wl0, &keys_later, err);
    for (size_t i = first; !rc && i < ops.n; i++)
        rc = put_op(&x, i, err);
    sim_read_end(st);
    if (!rc) {
        /* The state's counts close the file: the past one from a replay. */
        sim *past = NULL;
        int64_t now = 0;
        rc = sim_log_last(st, &now, err);
        if (!rc && last != now)
            rc = sim_at(s, last, &past, err);
        sim_stats ss;
        if (!rc && keys_later)
            rc = end_workload(&x, past ? past : s, wl0);
        if (!rc) {
            sim_stats_get(past ? past : s, &ss);
            rc = sb_printf(&x.b, "\nexpect nodes == %lld\nexpect keys == %lld\n",
                           (long long)ss.nodes, (long long)ss.keys);
        }
        sim_close(past);
    }
    free(ops.v);
    json_decref(wl0);
    json_decref(x.names);
    if (rc) {
        free(x.b.p);
        if (rc == RINGSIM_ENOMEM || rc == RINGSIM_EINTERNAL || !err->msg[0])
            rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return rc == RINGSIM_EINTERNAL ? RINGSIM_ENOMEM : rc;
    }
    *text = x.b.p;
    *len = x.b.n;
    return 0;
}
