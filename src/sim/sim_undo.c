/*
 * sim_undo.c - the state before each topology change, the record that lets
 * history step back over it without a replay.  Written as a participant of
 * the operation frame (sim_participant_undo, at the end: its record phase,
 * after each log entry) and by a replay into its view; read back here too
 * (sim__nodeset_load) when a view of the past steps back (sim_history.c)
 * or a revert finds the nodes it goes back to (sim_revert.c).  So the
 * record's form is known in this file only, and it stands below all of
 * them: it knows the state and the store, and nothing of operations or
 * history.  Cost: one meta row a topology change (~25 KB at 800 nodes),
 * trimmed to HISTORY_MAX_UNDO operations and HISTORY_KEEP_BYTES.
 */
#define _GNU_SOURCE /* strndup */
#include "sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The state before topology change `op`, kept in the meta table (of the
 * live database for the last few hundred operations, and of views) so
 * that stepping back over it needs no replay: {"nodes": [[name, weight,
 * [tokens], id?, states?]…], "config": stored form, "layout": text or
 * null}; id is the node's HAProxy id (0 when it has none and states
 * follow), states its attributes as their codecs write them
 * (sim__node_attrs_to_json: its state, backup flag and replicas). */
void sim__before_name(char *buf, size_t size, int64_t op)
{
    snprintf(buf, size, SIM_BEFORE_PREFIX "%lld", (long long)op);
}

char *sim__nodeset_text(const state *st)
{
    json_t *arr = json_array();
    json_t *cfg = place_config_json(&st->cfg, true);
    char *layout = place_state_text(st->pl);
    json_t *o = arr && cfg
                    ? json_pack("{s:o, s:o, s:s?}", "nodes", arr, "config", cfg, "layout", layout)
                    : NULL;
    if (!o) {
        json_decref(arr);
        json_decref(cfg);
    }
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < st->n; i++) {
        const node *x = &st->nodes[i];
        json_t *tok = json_array();
        for (size_t k = 0; tok && k < x->ntokens; k++)
            if (json_array_append_new(tok, json_integer((json_int_t)x->tokens[k])))
                ok = false;
        json_t *e = tok ? json_pack("[s%, f, o]", x->name, x->len, x->weight, tok) : NULL;
        bool states = sim__node_attrs_any(x);
        if (e && (x->srv_id || states))
            json_array_append_new(e, json_integer((json_int_t)x->srv_id));
        json_t *sj = e && states ? json_object() : NULL; /* the attributes' form */
        if (sj && (sim__node_attrs_to_json(x, sj) || json_array_append_new(e, sj)))
            ok = false;
        ok = ok && e && !json_array_append_new(arr, e);
        tok = e ? NULL : tok;
        if (!ok)
            json_decref(tok);
    }
    char *text = ok ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    free(layout);
    return text;
}

/* ---- the record read back ---- */

void sim__nodeset_clear(sim__nodeset *x)
{
    for (size_t i = 0; i < x->n; i++)
        sim__node_free(&x->nodes[i]);
    free(x->nodes);
    free(x->layout);
    x->nodes = NULL;
    x->layout = NULL;
    x->n = 0;
    x->got = false;
}

int sim__nodeset_take(sim__nodeset *x, const state *st)
{
    x->nodes = calloc(st->n + 1, sizeof *x->nodes);
    if (!x->nodes)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < st->n; i++) {
        if (sim__node_copy(&x->nodes[x->n], &st->nodes[i]))
            return RINGSIM_ENOMEM;
        x->n++;
    }
    x->cfg = st->cfg;
    x->layout = place_state_text(st->pl);
    x->got = true;
    return 0;
}

/* 0, 1 when absent, or a negative code. */
int sim__nodeset_load(sim *v, int64_t before, sim__nodeset *x, rs_error *err)
{
    char mk[48], *text = NULL;
    sim__before_name(mk, sizeof mk, before);
    int rc = store_meta_get(v->st, mk, &text, err);
    if (rc || !text) {
        free(text);
        return rc ? rc : 1;
    }
    json_t *o = json_loads(text, 0, NULL);
    free(text);
    json_t *arr = json_object_get(o, "nodes");
    json_t *lay = json_object_get(o, "layout");
    rs_error e;
    place_config_default(&x->cfg);
    size_t n = json_array_size(arr);
    rc = !o || !json_is_array(arr) ||
                 place_config_from_json(&x->cfg, json_object_get(o, "config"), &e)
             ? RINGSIM_EDB
             : 0;
    if (!rc && !(x->nodes = calloc(n + 1, sizeof *x->nodes)))
        rc = RINGSIM_ENOMEM;
    if (!rc && json_is_string(lay) && !(x->layout = strdup(json_string_value(lay))))
        rc = RINGSIM_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        json_t *e3 = json_array_get(arr, i), *nm = json_array_get(e3, 0);
        json_t *tok = json_array_get(e3, 2);
        node v2 = {0,
                   NULL,
                   json_string_length(nm),
                   json_number_value(json_array_get(e3, 1)),
                   0,
                   NULL,
                   json_array_size(tok),
                   (int64_t)json_integer_value(json_array_get(e3, 3)),
                   false,
                   false,
                   NULL,
                   0,
                   NULL,
                   0,
                   false,
                   1.0};
        if (!json_is_string(nm)) {
            rc = RINGSIM_EDB;
            break;
        }
        v2.name = malloc(v2.len + 1);
        if (v2.name) {
            memcpy(v2.name, json_string_value(nm), v2.len);
            v2.name[v2.len] = 0;
        }
        if (v2.ntokens && (v2.tokens = malloc(v2.ntokens * sizeof *v2.tokens)))
            for (size_t k = 0; k < v2.ntokens; k++)
                v2.tokens[k] = (int64_t)json_integer_value(json_array_get(tok, k));
        json_t *sj = json_array_get(e3, 4);
        int src = sj ? sim__node_attrs_from_json(sj, &v2) : 0;
        x->nodes[x->n++] = v2;
        if (!v2.name || (v2.ntokens && !v2.tokens))
            rc = RINGSIM_ENOMEM;
        else if (src)
            rc = src;
    }
    json_decref(o);
    if (rc)
        return rs_fail(err, rc,
                       rc == RINGSIM_ENOMEM ? "out of memory"
                                            : "time travel: unreadable state before "
                                              "operation %lld",
                       (long long)before);
    x->got = true;
    return 0;
}

/* ---- the participant ---- */

/* The participant's record phase: after the log entry of a logged
 * operation, keep the state before it (c->s->cur) where stepping back
 * over it finds it without a replay; the oldest go.  Operations on keys
 * alone keep nothing. */
static int keep_before(opctx *c, rs_error *err)
{
    if (c->keys_only)
        return 0;
    /* Reset and revert are not undone, but revert by the log reads the
     * nodes a state had from here (revert_by_log): theirs are kept too. */
    sim_op_type t = sim_op_type_of(c->what);
    if (!sim_op_is_topology(t) && t != SIM_OP_REVERT && t != SIM_OP_RESET)
        return 0;
    char mk[48], *text = sim__nodeset_text(&c->s->cur);
    sim__before_name(mk, sizeof mk, c->op);
    int rc = text ? store_meta_set(c->s->st, mk, text, err)
                  : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    free(text);
    if (!rc)
        rc = store_meta_delete_below(c->s->st, SIM_BEFORE_PREFIX, c->op - HISTORY_MAX_UNDO, err);
    return rc ? rc : store_meta_trim(c->s->st, SIM_BEFORE_PREFIX, HISTORY_KEEP_BYTES, err);
}

/* The undo record in the operation frame: written beside each log entry. */
const sim_participant sim_participant_undo = {
    .name = "undo",
    .record = keep_before,
};
