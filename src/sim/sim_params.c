/* The one decoder of an operation's logged parameters (sim.h
 * sim_op_params), of its type's name (sim_op_type_of) and of a stored
 * configuration (sim__config_from_json).  The writers are the operations
 * themselves (sim_ops.c, sim_revert.c, sim_import.c); every
 * reader -- replay, undo, diff, the workload cache, scenario export, the
 * views -- asks this file, so the members a type logs are known here only.
 * It stands below every other file of the engine and calls none of them.
 *
 * What each type logs (params, JSON object):
 *   add_node     {"name", "weight", "tokens"?: ["decimal"...], "id"?,
 *                 "state"?: "down"|"up", "backup"?, "replicas"?: [...]}
 *   remove_node  {"name"}
 *   set_weight   {"name", "weight"}
 *   set_state    {"name", "state"} or {"domain": [type, name], "state"}
 *   set_location {"name", "location": [[type, name]...]} (add_node and an
 *                import's nodes carry "location"? the same way)
 *   set_reweight {"name", "reweight"} (0..1)
 *   insert_keys  {"keys": n} or {"generate": {"prefix", "start", "count"}, ...}
 *   delete_keys  {"keys": n}
 *   revert       {"to"}
 *   configure, import, workload, reset: their own objects (json). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ---- operation types: one owner of their names ---- */

static const char *const op_type_names[SIM_OP_TYPE_COUNT] = {
    [SIM_OP_ADD_NODE] = "add_node",
    [SIM_OP_REMOVE_NODE] = "remove_node",
    [SIM_OP_SET_WEIGHT] = "set_weight",
    [SIM_OP_SET_STATE] = "set_state",
    [SIM_OP_CONFIGURE] = "configure",
    [SIM_OP_IMPORT] = "import",
    [SIM_OP_INSERT_KEYS] = "insert_keys",
    [SIM_OP_DELETE_KEYS] = "delete_keys",
    [SIM_OP_WORKLOAD] = "workload",
    [SIM_OP_RESET] = "reset",
    [SIM_OP_REVERT] = "revert",
    [SIM_OP_SET_LOCATION] = "set_location",
    [SIM_OP_SET_REWEIGHT] = "set_reweight",
};

sim_op_type sim_op_type_of(const char *name)
{
    for (int t = 0; name && t < SIM_OP_TYPE_COUNT; t++)
        if (strcmp(name, op_type_names[t]) == 0)
            return (sim_op_type)t;
    return SIM_OP_UNKNOWN;
}

const char *sim_op_type_name(sim_op_type t)
{
    return t >= 0 && t < SIM_OP_TYPE_COUNT ? op_type_names[t] : NULL;
}

bool sim_op_is_topology(sim_op_type t)
{
    return t == SIM_OP_ADD_NODE || t == SIM_OP_REMOVE_NODE || t == SIM_OP_SET_WEIGHT ||
           t == SIM_OP_SET_STATE || t == SIM_OP_CONFIGURE || t == SIM_OP_IMPORT ||
           t == SIM_OP_SET_LOCATION || t == SIM_OP_SET_REWEIGHT;
}

/* A stored configuration (meta "config", an operation's config): "" or NULL
 * is the default; RINGSIM_EDB when it is not one. */
int sim__config_from_json(const char *text, place_config *cfg)
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

/* ---- logged parameters ---- */

void sim_op_params_clear(sim_op_params *p)
{
    json_decref(p->json);
    free(p->tokens_);
    free(p->replicas_);
    free(p->loc_);
    memset(p, 0, sizeof *p);
    p->to = -1;
}

int sim__tokens_from_json(const json_t *arr, int64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!json_is_array(arr))
        return RINGSIM_EDB;
    size_t len = json_array_size(arr);
    int64_t *v = malloc((len + 1) * sizeof *v);
    if (!v)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        const char *t = json_string_value(json_array_get(arr, i));
        char *end = NULL;
        errno = 0;
        v[i] = t ? strtoll(t, &end, 10) : 0;
        if (!t || end == t || *end || errno) {
            free(v);
            return RINGSIM_EDB;
        }
    }
    *out = v;
    *n = len;
    return 0;
}

/* A logged location into a decoder-owned array (*loc, NULL for none):
 * RINGSIM_EDB when damaged. */
static int loc_from_json(const json_t *j, place_loc **loc, size_t *n)
{
    *loc = NULL;
    *n = 0;
    if (!j)
        return 0;
    size_t m = json_array_size(j);
    if (m && !(*loc = malloc(m * sizeof **loc)))
        return RINGSIM_ENOMEM;
    rs_error e;
    if (place_loc_from_json(j, *loc, n, &e)) {
        free(*loc);
        *loc = NULL;
        return RINGSIM_EDB;
    }
    return 0;
}

int sim_node_spec_from_json(const json_t *o, sim_node_spec *spec, int64_t **tokens,
                            const char ***replicas, place_loc **loc)
{
    *loc = NULL;
    json_t *nm = json_object_get(o, "name"), *w = json_object_get(o, "weight");
    json_t *tok = json_object_get(o, "tokens"), *id = json_object_get(o, "id");
    json_t *st = json_object_get(o, "state"), *bk = json_object_get(o, "backup");
    json_t *rp = json_object_get(o, "replicas");
    memset(spec, 0, sizeof *spec);
    *tokens = NULL;
    *replicas = NULL;
    if (!json_is_string(nm) || (w && !json_is_number(w)) || (tok && !json_is_array(tok)) ||
        (id && !json_is_integer(id)) || (st && !json_is_string(st)) ||
        (bk && !json_is_boolean(bk)) || (rp && !json_is_array(rp)))
        return RINGSIM_EDB;
    const char *sv = st ? json_string_value(st) : "up";
    if (strcmp(sv, "down") != 0 && strcmp(sv, "up") != 0)
        return RINGSIM_EDB;
    spec->name = json_string_value(nm);
    spec->len = json_string_length(nm);
    spec->weight = w ? json_number_value(w) : 1;
    spec->srv_id = id ? (int64_t)json_integer_value(id) : 0;
    spec->down = !strcmp(sv, "down");
    spec->backup = json_is_true(bk);
    size_t nt = 0, nr = json_array_size(rp);
    int rc = tok ? sim__tokens_from_json(tok, tokens, &nt) : 0;
    if (rc)
        return rc;
    if (nr && !(*replicas = malloc(nr * sizeof **replicas))) {
        free(*tokens);
        *tokens = NULL;
        return RINGSIM_ENOMEM;
    }
    for (size_t i = 0; i < nr; i++)
        if (!((*replicas)[i] = json_string_value(json_array_get(rp, i))))
            return RINGSIM_EDB;
    spec->tokens = *tokens;
    spec->ntokens = nt;
    spec->replicas = *replicas;
    spec->nreplicas = nr;
    if ((rc = loc_from_json(json_object_get(o, "location"), loc, &spec->nloc)))
        return rc;
    spec->loc = *loc;
    return 0;
}

static int node_params(sim_op_params *p)
{
    json_t *o = p->json, *nm = json_object_get(o, "name");
    if (p->type == SIM_OP_ADD_NODE)
        return sim_node_spec_from_json(o, &p->node, &p->tokens_, &p->replicas_, &p->loc_);
    json_t *dom = json_object_get(o, "domain");
    if (p->type == SIM_OP_SET_STATE && dom) { /* a whole domain */
        const char *st = json_string_value(json_object_get(o, "state"));
        p->dom_type = json_string_value(json_array_get(dom, 0));
        p->dom_name = json_string_value(json_array_get(dom, 1));
        if (!p->dom_type || !p->dom_name || !st || (strcmp(st, "down") && strcmp(st, "up")))
            return RINGSIM_EDB;
        p->node.down = !strcmp(st, "down");
        return 1; /* read; no node name */
    }
    if (!json_is_string(nm))
        return RINGSIM_EDB;
    p->node.name = json_string_value(nm);
    p->node.len = json_string_length(nm);
    if (p->type == SIM_OP_SET_WEIGHT) {
        json_t *w = json_object_get(o, "weight");
        if (!json_is_number(w))
            return RINGSIM_EDB;
        p->node.weight = json_number_value(w);
    } else if (p->type == SIM_OP_SET_STATE) {
        const char *st = json_string_value(json_object_get(o, "state"));
        if (!st || (strcmp(st, "down") != 0 && strcmp(st, "up") != 0))
            return RINGSIM_EDB;
        p->node.down = !strcmp(st, "down");
    } else if (p->type == SIM_OP_SET_REWEIGHT) {
        json_t *w = json_object_get(o, "reweight");
        if (!json_is_number(w) || !(json_number_value(w) >= 0 && json_number_value(w) <= 1))
            return RINGSIM_EDB;
        p->reweight = json_number_value(w);
    } else if (p->type == SIM_OP_SET_LOCATION) {
        json_t *l = json_object_get(o, "location");
        int rc = l ? loc_from_json(l, &p->loc_, &p->node.nloc) : RINGSIM_EDB;
        if (rc)
            return rc;
        p->node.loc = p->loc_;
    }
    return 0;
}

static int keys_params(sim_op_params *p)
{
    json_t *n = json_object_get(p->json, "keys"), *gen = json_object_get(p->json, "generate");
    if (n && !json_is_integer(n))
        return RINGSIM_EDB;
    p->keys = n ? (int64_t)json_integer_value(n) : 0;
    if (!gen)
        return 0;
    json_t *pre = json_object_get(gen, "prefix"), *start = json_object_get(gen, "start");
    json_t *count = json_object_get(gen, "count");
    if (p->type != SIM_OP_INSERT_KEYS || !json_is_string(pre) ||
        json_string_length(pre) >= NAME_BUF || !json_is_integer(start) || !json_is_integer(count) ||
        json_integer_value(start) < 0 || json_integer_value(count) < 0)
        return RINGSIM_EDB;
    p->generated = true;
    p->prefix = (sim_str){json_string_value(pre), json_string_length(pre)};
    p->start = (uint64_t)json_integer_value(start);
    p->count = (uint64_t)json_integer_value(count);
    return 0;
}

int sim_op_params_read(const sim_op *o, sim_op_params *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    out->to = -1;
    out->type = sim_op_type_of(o->type);
    json_error_t je;
    int rc = (out->json = json_loads(o->params ? o->params : "", 0, &je)) && json_is_object(out->json)
                 ? 0
                 : RINGSIM_EDB;
    switch (rc ? SIM_OP_UNKNOWN : out->type) {
    case SIM_OP_ADD_NODE:
    case SIM_OP_REMOVE_NODE:
    case SIM_OP_SET_WEIGHT:
    case SIM_OP_SET_STATE:
    case SIM_OP_SET_LOCATION:
    case SIM_OP_SET_REWEIGHT:
        rc = node_params(out);
        out->has_node = !rc;
        rc = rc == 1 ? 0 : rc; /* 1: a domain's set_state */
        break;
    case SIM_OP_INSERT_KEYS:
    case SIM_OP_DELETE_KEYS:
        rc = keys_params(out);
        break;
    case SIM_OP_REVERT: {
        json_t *to = json_object_get(out->json, "to");
        rc = json_is_integer(to) && json_integer_value(to) >= 0 ? 0 : RINGSIM_EDB;
        out->to = rc ? -1 : (int64_t)json_integer_value(to);
        break;
    }
    default:
        break;
    }
    if (!rc)
        return 0;
    sim_op_params_clear(out);
    return rc == RINGSIM_ENOMEM
               ? rs_fail(err, rc, "out of memory")
               : rs_fail(err, rc, "operation %lld has unreadable parameters", (long long)o->id);
}

int sim_op_config(const sim_op *o, place_config *cfg, rs_error *err)
{
    /* "" (never written by this version): the default */
    return !sim__config_from_json(o->config, cfg)
               ? 0
               : rs_fail(err, RINGSIM_EDB, "operation %lld has no readable configuration",
                         (long long)o->id);
}

size_t sim_generated_key(sim_str prefix, uint64_t n, char *buf)
{
    size_t pl = prefix.len < NAME_BUF ? prefix.len : NAME_BUF - 1;
    if (pl)
        memcpy(buf, prefix.s, pl);
    int w = snprintf(buf + pl, 24, "%llu", (unsigned long long)n);
    return pl + (size_t)(w > 0 ? w : 0);
}
