/*
 * sim_undo.c - the state before each topology change, the record that lets
 * history step back over it without a replay.  Written as a participant of
 * the operation frame (sim_participant_undo, at the end: its record phase,
 * after each log entry), read when a view of the past steps back
 * (sim_history.c), so it stands below both: it knows the state and the
 * store, and nothing of operations or history.  Cost: one meta row a
 * topology change (~25 KB at 800 nodes), trimmed to HISTORY_MAX_UNDO
 * operations and HISTORY_KEEP_BYTES.
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
