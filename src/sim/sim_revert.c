/*
 * sim_revert.c - revert (docs/api.md, POST /api/revert): one more
 * operation after which the state is what it was right after an earlier
 * operation `to` (0 = empty), configuration and workload included; the
 * history is kept.
 *
 * Four steps: the keys that exist now and did not then go; the nodes,
 * configuration and layout state become those after `to` by the change of
 * topology import uses (sim__adopt_nodes: exactly the keys whose owner
 * changes move); the keys that existed then come back, placed anew; the
 * workload is the one in effect then.
 *
 * What to drop, bring back and adopt comes from the log where it can say
 * (revert_by_log: the keys composed by sim_diff.c, the nodes from the
 * undo record, sim_undo.c), costing what the operations undone changed;
 * else from a comparison key by key with the state after `to`, moved
 * there the cheapest way by time travel (sim_history_at): O(keys).  Only
 * the differences are held in memory.
 *
 * It stands above time travel and diff, which do not call it: a revert
 * in the log is not replayed but passed through (sim_chain_get).
 */
#define _GNU_SOURCE /* asprintf */
#include "sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

/* The two lists of differences a revert applies. */
typedef struct keypair {
    keylist gone, fresh;
} keypair;

static int kp_gone(void *ud, const store_key *k)
{
    return sim__kl_collect(&((keypair *)ud)->gone, k);
}

static int kp_fresh(void *ud, const store_key *k)
{
    return sim__kl_collect(&((keypair *)ud)->fresh, k);
}

/* Revert by the log (sim_diff.c): the keys to drop and to bring back from
 * the log's records of the operations between now and `to` (through
 * resets and reverts), and the nodes, configuration and layout after `to`
 * from the state kept before the first topology change since
 * (sim_undo.c; the live one when there is none, else a keyless
 * replay of the log's nodes up to `to`).  Costs what the operations
 * undone changed.  RINGSIM_EPARAM (nothing found) when the log cannot
 * say: an insert that skipped keys, before `to`'s state is known. */
static int revert_by_log(sim *s, int64_t to, keypair *kp, sim__nodeset *x, int64_t *planned,
                         rs_error *err)
{
    int64_t last = 0, count, runs, first;
    sim *bare = NULL;
    int rc = sim__check_at(s, to, &last, err);
    *planned = last;
    if (!rc && s->at_op != last)
        rc = rs_fail(err, RINGSIM_EPARAM, "the state in memory is not the last");
    if (!rc)
        rc = sim__compose_keys(s, to, &kp->gone, &kp->fresh, err);
    /* The nodes after `to`: the state kept before the next operation on
     * nodes or configuration after it, reset and revert included (which
     * ran on that state), the live ones when none followed; else (the
     * state is no longer kept, or the log is older than this) a replay of
     * the log's nodes up to `to`, without keys. */
    if (!rc)
        rc = store_ops_topology(s->st, to, last, &count, &runs, &first, err);
    if (rc)
        return rc;
    x->after = to;
    if (!first)
        return sim__nodeset_take(x, &s->cur) ? rs_fail(err, RINGSIM_ENOMEM, "out of memory") : 0;
    int g = sim__nodeset_load(s, first, x, err);
    if (g <= 0)
        return g;
    sim__nodeset_clear(x);
    x->after = to;
    if (!(rc = sim__replay_to(s, to, true, NULL, 0, &bare, err)) && sim__nodeset_take(x, &bare->cur))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    sim_close(bare);
    return rc;
}

int sim_revert(sim *s, int64_t to, int64_t *op, rs_error *err)
{
    sim__nodeset target = {0};
    bool by_log = false;
    sim *snap = NULL;
    sim_history past = SIM_HISTORY_INIT; /* owns snap */
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
    /* What to drop, bring back and adopt: from the log where it says
     * (sim_diff.c), else by comparing with the state to go back to, moved
     * there the cheapest way (a copy of this database with the operations
     * since undone, a checkpoint, a replay). */
    int64_t planned = -1;
    bool old_way = false;
plan:
    if (!rc && !old_way) {
        rs_error e2;
        int g = revert_by_log(s, to, &kp, &target, &planned, &e2);
        by_log = g == 0;
        if (g && g != RINGSIM_EPARAM)
            rc = rs_fail(err, g, "%s", e2.msg);
        if (g) {
            sim__nodeset_clear(&target);
            sim__kl_free(gone);
            sim__kl_free(fresh);
        }
    }
    if (!rc && !by_log)
        rc = sim_history_at(s, &past, to, &snap, err);
    if (!rc && !by_log && snap == s) /* to the last operation: a state apart to compare */
        snap = (rc = sim_at(s, to, &past.view, err)) ? NULL : past.view;
    if (rc)
        goto out;
    if (!params || asprintf(&subject, "revert to %lld", (long long)to) < 0) {
        subject = NULL;
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_REVERT), subject, params, err)))
        goto out;
    if (by_log && c.op && c.op != planned + 1) {
        /* Another process logged an operation since the plan was made
         * (under no lock): the plan is of another state.  The other way
         * compares the states inside the transaction. */
        sim__op_abort(&c);
        sim__nodeset_clear(&target);
        sim__kl_free(gone);
        sim__kl_free(fresh);
        by_log = false;
        old_way = true;
        free(subject);
        subject = NULL;
        goto plan;
    }
    c.steps = true;
    /* Only the differences are held in memory. */
    diff d = {kp_gone, kp_fresh, NULL, &kp};
    if ((rc = sim__progress(s, "revert", 0, 4, err)) ||
        (!by_log && (rc = sim__diff_run(s, s->st, snap->st, &d, err))) ||
        (rc = sim__progress(s, "revert", 1, 4, err)))
        goto abort;
    /* 1. Keys that did not exist then go (deletions are not moves). */
    for (size_t i = 0; i < gone->n && !rc; i++) {
        const klent *e = &gone->v[i];
        int deleted;
        store_key k = {.node = e->node};
        if (by_log) /* the log names the key, the table its owner */
            rc = store_key_find(s->st, gone->buf + e->off, e->len, &k, err);
        if (!rc)
            rc = store_key_delete(s->st, gone->buf + e->off, e->len, &deleted, err);
        sim__count_owner(&c.next, k.node, -1);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__poll(s, err);
    }
    if (!rc)
        rc = sim__progress(s, "revert", 2, 4, err);
    /* 2. Nodes and configuration as they were; the keys whose owner changes
     * move.  Nodes that exist in both keep their id and counter. */
    if (!rc && by_log) {
        rc = sim__adopt_nodes(&c, target.nodes, target.n, &target.cfg, target.layout, err);
    } else if (!rc) {
        char *layout = place_state_text(snap->cur.pl);
        rc = sim__adopt_nodes(&c, snap->cur.nodes, snap->cur.n, &snap->cur.cfg, layout, err);
        free(layout);
    }
    if (!rc)
        rc = sim__progress(s, "revert", 3, 4, err);
    /* 3. Keys that existed then and not now come back, placed anew. */
    int64_t inserted = 0;
    for (size_t i = 0; i < fresh->n && !rc; i++) {
        rc = sim__insert_one(&c, fresh->buf + fresh->v[i].off, fresh->v[i].len, &inserted, err);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__poll(s, err);
    }
    /* 4. The workload as it was (from the log when there is no snapshot). */
    if (!rc && snap) {
        rc = sim__wl_set_pending(&c, sim__wl_get(snap), err);
    } else if (!rc) {
        workload w;
        rc = sim__wl_at(s, to, &w, err);
        if (!rc)
            rc = sim__wl_set_pending(&c, &w, err);
        wl_free(&w);
    }
    if (rc)
        goto abort;
    rc = sim__op_commit(&c, op, err);
    if (!rc) /* done: too late to cancel */
        sim__progress(s, "revert", 4, 4, NULL);
    goto out;
abort:
    sim__op_abort(&c);
out:
    sim__nodeset_clear(&target);
    sim__kl_free(gone);
    sim__kl_free(fresh);
    sim_history_clear(&past);
    free(subject);
    json_decref(params);
    return rc;
}
