/*
 * sim_history.c - time travel: the state after any operation, replayed from
 * the log into a private sim (and advanced forward incrementally), and
 * revert, which applies the difference as a new operation.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int rc = store_op_keys_each(r->live->st, o->id, sim__kl_collect_str, &l, r->err);
    sim_str *v = rc ? NULL : sim__kl_strs(&l);
    int64_t ins, skip, dummy;
    if (!rc && !v)
        rc = rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    else if (!rc && l.n)
        rc = insert ? sim_insert_keys(r->m, v, l.n, false, &ins, &skip, &dummy, r->err)
                    : sim_delete_keys(r->m, v, l.n, &dummy, r->err);
    free(v);
    sim__kl_free(&l);
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
                 ? sim__progress(m, "replay", r->done, r->total, r->err)
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
        sim__config_from_json(o->config, &cfg);
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
            sim__config_from_json(o.config, &start);
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
    return sim__kl_collect(&((keypair *)ud)->gone, k);
}

static int kp_fresh(void *ud, const store_key *k)
{
    return sim__kl_collect(&((keypair *)ud)->fresh, k);
}


int sim__diff_run(sim *s, store *have, store *want, const diff *d, rs_error *err)
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
        int c = mh <= 0 ? 1 : mw <= 0 ? -1 : sim__cmp_bytes(h.key, h.len, w.key, w.len);
        if (c < 0)
            rc = d->gone(d->ud, &h);
        else if (c > 0)
            rc = d->fresh(d->ud, &w);
        else
            rc = d->both ? d->both(d->ud, &h, &w) : 0;
        if (!rc && ++steps % PROGRESS_EVERY == 0)
            rc = sim__poll(s, err);
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
    if ((rc = sim__op_begin(s, &c, "revert", subject, params, err)))
        goto out;
    c.steps = true;
    /* Only the differences are held in memory. */
    diff d = {kp_gone, kp_fresh, NULL, &kp};
    if ((rc = sim__progress(s, "revert", 0, 4, err)) ||
        (rc = sim__diff_run(s, s->st, snap->st, &d, err)) ||
        (rc = sim__progress(s, "revert", 1, 4, err)))
        goto abort;
    /* 1. Keys that did not exist then go (deletions are not moves). */
    for (size_t i = 0; i < gone->n && !rc; i++) {
        const klent *e = &gone->v[i];
        int deleted;
        rc = store_key_delete(s->st, gone->buf + e->off, e->len, &deleted, err);
        sim__count_owner(&c.next, e->node, -1);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__poll(s, err);
    }
    if (!rc)
        rc = sim__progress(s, "revert", 2, 4, err);
    /* 2. Nodes and configuration as they were; the keys whose owner changes
     * move.  Nodes that exist in both keep their id and counter. */
    node *nodes = rc ? NULL : calloc(snap->cur.n + 1, sizeof *nodes);
    if (!rc && !nodes)
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t nn = 0;
    for (size_t i = 0; !rc && i < snap->cur.n; i++) {
        const node *t = &snap->cur.nodes[i];
        long j = sim__find_node(&c.next, t->name, t->len);
        node v = {0, strdup(t->name), t->len, t->weight, 0, NULL, t->ntokens};
        char *tt = t->ntokens ? sim__tokens_text(t->tokens, t->ntokens) : NULL;
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
            sim__node_free(&v);
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
            rc = sim__retopologize_to(&c, &s->cur, layout, err);
        free(layout);
        for (size_t i = 0; i < oldn; i++) {
            if (!rc && sim__find_node(&c.next, old[i].name, old[i].len) < 0)
                rc = store_node_delete(s->st, old[i].id, err);
            sim__node_free(&old[i]);
        }
        free(old);
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
    if (rc)
        goto abort;
    rc = sim__op_commit(&c, op, err);
    if (!rc) /* done: too late to cancel */
        sim__progress(s, "revert", 4, 4, NULL);
    goto out;
abort:
    sim__op_abort(&c);
out:
    sim__kl_free(gone);
    sim__kl_free(fresh);
    sim_close(snap);
    free(subject);
    json_decref(params);
    return rc;
}
