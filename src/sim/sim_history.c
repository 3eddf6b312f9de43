/*
 * sim_history.c - time travel: the state after any operation, replayed from
 * the log into a private sim (sim_at) and advanced forward incrementally
 * (sim_advance); the engine's cached view of the past (sim_history_at),
 * which also steps backward.  Revert (sim_revert.c) and diff (sim_diff.c)
 * stand on it; it calls neither.
 *
 * Design of sim_history_at: one cached view per caller, moved the cheapest
 * of five ways.  Each is priced in keys of work read from the log
 * (store_ops_work: the keys the operations moved, inserted or deleted),
 * plus the layouts it builds (store_ops_topology: one per topology change
 * replayed, one per run of them undone, a keyless replay where the states
 * before them are no longer kept; LAYOUT_BYTES_PER_KEY), a copy by the
 * file's pages; a way that turns out not to go gives way to the next, and
 * a replay always gets there.  sim_history.builds counts the layouts a
 * move built.  Measured by bench/bench_history.c
 * at 1M keys / 100 nodes x 160 points: a step back over a node add 0.68x
 * the node add, a step forward 1.08x, cold jumps 0.02-0.22 s where a replay
 * of the log takes 3.7 s.
 *
 *  - forward: apply the operations in between (sim_advance); costs what
 *    they cost, as when they were made.
 *  - back: undo the operations in between from the last (up to
 *    HISTORY_MAX_UNDO, no reset or revert in between).  A delete is undone
 *    by inserting its keys (op_keys) again, placed by the view's placement,
 *    which is the placement before the delete; an insert by deleting its
 *    keys (op_keys, or a generate's prefix/start/count) -- only when it
 *    skipped none, because which of them existed before is not in the log:
 *    the log keeps how many each insert skipped (ops.skipped, schema 3; for
 *    older logs a replay counts them in its view), and one that did forces
 *    a replay.  A run of topology changes (add/remove node, configure) is
 *    undone by one change of topology to the state before the run (nodes in
 *    join order, configuration, layout state such as the redis slot map or
 *    the memento removals), which moves exactly the keys whose owner
 *    changes, like the operation did.  That state comes from the meta
 *    table, where each logged topology change keeps the state before it
 *    for the last HISTORY_MAX_UNDO operations (sim_undo.c: nodes and
 *    layout, no keys; replays keep theirs in the view); past those, from a
 *    replay of the log's node and configuration operations only, without
 *    their keys.  The moves table is not read: the change of topology finds
 *    the same keys through the position index, in ranges.
 *  - live: copy the live database (SQLite's online backup: one read
 *    transaction, writers go on) and step back from there as above.  The
 *    first view and far jumps back then cost the copy and what changed
 *    since, not the whole log.
 *  - checkpoint: copy a checkpoint and step forward or back from it.
 *    Checkpoints are copies of the live database that sim_history_checkpoint
 *    keeps whenever the operations since the newest did about a second of
 *    replay's work (the server's reading worker calls it when idle): they
 *    reach states behind a reset or revert, or far back in a long log, that
 *    neither the view nor the live copy can.  At most eight; the one whose
 *    neighbours are closest goes.  bench_history: a jump behind a revert at
 *    1M keys, 0.05 s where the replay takes 3.8 s.
 *  - replay: the log from the start (sim_at); the cheapest near the start,
 *    and the way left when no checkpoint comes before a reset or revert.
 *
 * Views and checkpoints are private temp databases: making or moving one
 * reads the live database and its log and never takes its write lock.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "sim_int.h"
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ---- time travel: replay the log into a private sim ---- */

typedef struct replay {
    sim *live, *m;
    rs_error *err;
    uint64_t done, total; /* operations replayed, to replay */
    bool keyless;         /* only the operations on nodes and configuration */
    sim__nodeset *want;   /* states to capture (sorted by .after), or NULL */
    size_t nwant;
    int64_t keep_after; /* record the state before each topology change
                           * after this operation in the view (-1 = none) */
    uint64_t kept;      /* states recorded */
} replay;

/* The meta entry of a time-travel view that says how many keys of an
 * insert operation were skipped (already there): undoing it then needs a
 * replay.  Absent = none skipped. */
static void skipped_name(char *buf, size_t size, int64_t op)
{
    snprintf(buf, size, "hist_skipped_%lld", (long long)op);
}

/* The meta entry of a view made by a replay of the log (1): it holds the
 * skipped counts above for every insert it replayed.  A copy of the live
 * database has none. */
#define REPLAYED "hist_replayed"

/* Before operation `id` runs: capture the state after id - 1 if wanted. */
static int replay_capture(replay *r, int64_t id)
{
    for (size_t i = 0; i < r->nwant; i++)
        if (r->want[i].after == id - 1 && !r->want[i].got &&
            sim__nodeset_take(&r->want[i], &r->m->cur))
            return rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    return 0;
}

#define REPLAY_REPORT_EVERY 256

static int replay_keys(replay *r, const store_op *o, bool insert)
{
    keylist l;
    memset(&l, 0, sizeof l);
    int rc = store_op_keys_each(r->live->st, o->id, sim__kl_collect_str, &l, r->err);
    sim_str *v = rc ? NULL : sim__kl_strs(&l);
    int64_t ins, skip = 0, dummy;
    if (!rc && !v)
        rc = rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    else if (!rc && l.n)
        rc = insert ? sim_insert_keys(r->m, v, l.n, false, &ins, &skip, &dummy, r->err)
                    : sim_delete_keys(r->m, v, l.n, &dummy, r->err);
    if (!rc && skip > 0) {
        char mk[48];
        skipped_name(mk, sizeof mk, o->id);
        rc = store_meta_set_int(r->m->st, mk, skip, r->err);
    }
    free(v);
    sim__kl_free(&l);
    return rc;
}

/* A workload operation again (docs/api.md v3 traffic): its parameters are
 * the workload; keys it lists were stored when it ran. */
static int replay_workload(sim *m, const json_t *params, rs_error *err)
{
    workload w;
    int64_t dummy;
    int rc = wl_from_json(params, &w, err);
    if (!rc)
        rc = sim__wl_apply(m, &w, false, &dummy, err);
    wl_free(&w);
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
    if (!rc && r->want)
        rc = replay_capture(r, o->id);
    if (rc)
        return rc;
    sim_op_type type = sim_op_type_of(o->type);
    bool keys_op = type == SIM_OP_INSERT_KEYS || type == SIM_OP_DELETE_KEYS;
    if (r->keyless && keys_op)
        return 0;
    if (!keys_op && r->keep_after >= 0 && o->id > r->keep_after) {
        char mk[48], *text = sim__nodeset_text(&m->cur);
        sim__before_name(mk, sizeof mk, o->id);
        rc = text ? store_meta_set(m->st, mk, text, r->err)
                  : rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
        free(text);
        if (!rc && ++r->kept % 64 == 0)
            rc = store_meta_trim(m->st, SIM_BEFORE_PREFIX, HISTORY_KEEP_BYTES, r->err);
        if (rc)
            return rc;
    }
    sim_op_params p;
    if ((rc = sim_op_params_read(o, &p, r->err)))
        return rc;
    const sim_node_spec *nd = &p.node;
    if (type == SIM_OP_ADD_NODE) {
        rc = sim_add_node_spec(m, nd, &dummy, r->err);
    } else if (type == SIM_OP_REMOVE_NODE) {
        rc = sim_remove_node(m, nd->name, nd->len, &dummy, r->err);
    } else if (type == SIM_OP_SET_WEIGHT) {
        rc = sim_set_weight(m, nd->name, nd->len, nd->weight, &dummy, r->err);
    } else if (type == SIM_OP_SET_STATE && p.dom_type) {
        rc = sim_set_state_domain(m, p.dom_type, p.dom_name, nd->down, &dummy, r->err);
    } else if (type == SIM_OP_SET_STATE) {
        rc = sim_set_state(m, nd->name, nd->len, nd->down, &dummy, r->err);
    } else if (type == SIM_OP_SET_LOCATION) {
        rc = sim_set_location(m, nd->name, nd->len, nd->loc, nd->nloc, &dummy, r->err);
    } else if (type == SIM_OP_SET_REWEIGHT) {
        rc = sim_set_reweight(m, nd->name, nd->len, p.reweight, &dummy, r->err);
    } else if (type == SIM_OP_INSERT_KEYS && p.generated) {
        rc = sim_generate_keys(m, p.prefix.s, p.prefix.len, p.start, p.count, &ins, &skip, &dummy,
                               r->err);
        if (!rc && skip > 0) {
            char mk[48];
            skipped_name(mk, sizeof mk, o->id);
            rc = store_meta_set_int(m->st, mk, skip, r->err);
        }
    } else if (keys_op) {
        rc = replay_keys(r, o, type == SIM_OP_INSERT_KEYS);
    } else if (type == SIM_OP_CONFIGURE) {
        place_config cfg;
        if (!(rc = sim_op_config(o, &cfg, r->err)))
            rc = sim_configure(m, &cfg, &dummy, r->err);
    } else if (type == SIM_OP_WORKLOAD) {
        rc = replay_workload(m, p.json, r->err);
    } else if (type == SIM_OP_IMPORT) {
        rc = sim__import_replay(m, o, p.json, &dummy, r->err);
    } else {
        rc = rs_fail(r->err, RINGSIM_EDB, "operation %lld of type %s cannot be replayed here",
                     (long long)o->id, o->type);
    }
    sim_op_params_clear(&p);
    if (rc && rc != RINGSIM_ECANCELED) {
        char msg[sizeof r->err->msg];
        snprintf(msg, sizeof msg, "%s", r->err->msg);
        rs_fail(r->err, rc == RINGSIM_ENOMEM ? rc : RINGSIM_EDB,
                "replaying operation %lld (%s): %s", (long long)o->id, o->type, msg);
    }
    return rc;
}

/* An operation id that exists (0: the empty start); *last is the newest. */
int sim__check_at(sim *s, int64_t at, int64_t *last, rs_error *err)
{
    if (at < 0)
        return rs_fail(err, RINGSIM_EPARAM, "operation id must be 0 or more");
    int rc = store_last_op(s->st, last, err);
    if (!rc && at > *last)
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found", (long long)at);
    return rc;
}

int sim__replay_to(sim *s, int64_t at, bool keyless, sim__nodeset *want, size_t nwant,
                   sim **snapshot, rs_error *err)
{
    *snapshot = NULL;
    int64_t last;
    int rc = sim__check_at(s, at, &last, err);
    if (rc)
        return rc;
    sim_chain ch;
    rc = sim_chain_get(s, at, &ch, err);
    place_config start = ch.start;
    sim *m = NULL;
    if (!rc)
        rc = sim_open(&m, "", err); /* private temp file: bounded memory */
    if (!rc) {
        m->record = false;
        m->builds = s->builds; /* its layouts count as the caller's */
        /* Long replays (a million generated keys) report as "replay". */
        sim_set_progress(m, s->progress, s->progress_ud);
        m->progress_label = "replay";
        int64_t dummy;
        if (!keyless)
            rc = store_meta_set_int(m->st, REPLAYED, 1, err);
        if (!rc && !place_config_equal(&start, &m->cur.cfg))
            rc = sim_configure(m, &start, &dummy, err);
    }
    replay r = {s,    m,     err,
                0,    0,     keyless,
                want, nwant, keyless ? -1 : at > HISTORY_MAX_UNDO ? at - HISTORY_MAX_UNDO : 0,
                0};
    for (size_t i = 0; i < ch.n; i++)
        r.total += (uint64_t)(ch.seg[i].to - ch.seg[i].from);
    for (size_t i = ch.n; !rc && i-- > 0;)
        if (ch.seg[i].to > ch.seg[i].from)
            rc = store_ops_each(s->st, ch.seg[i].from, ch.seg[i].to - ch.seg[i].from, replay_op, &r,
                                err);
    sim_chain_free(&ch);
    if (rc) {
        sim_close(m);
        return rc;
    }
    sim_set_progress(m, NULL, NULL); /* the snapshot outlives this call */
    *snapshot = m;
    return 0;
}

int sim_at(sim *s, int64_t at, sim **snapshot, rs_error *err)
{
    int rc = sim__replay_to(s, at, false, NULL, 0, snapshot, err);
    /* A reset keeps the workload, which its replay does not see: the log's. */
    if (!rc && (rc = sim__wl_from_log(*snapshot, s, at, err))) {
        sim_close(*snapshot);
        *snapshot = NULL;
    }
    return rc;
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
        return rs_fail(err, RINGSIM_EPARAM, "cannot advance from %lld to %lld", (long long)from,
                       (long long)to);
    replay r = {s,
                snap,
                err,
                0,
                (uint64_t)(to - from),
                false,
                NULL,
                0,
                to > HISTORY_MAX_UNDO ? to - HISTORY_MAX_UNDO : 0,
                0};
    sim_set_progress(snap, s->progress, s->progress_ud);
    snap->progress_label = "replay";
    rc = to > from ? store_ops_each(s->st, from, to - from, replay_op, &r, err) : 0;
    sim_set_progress(snap, NULL, NULL);
    return rc;
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

/* ---- the engine's time travel: one cached view, moved by the cheapest way ---- */

/* The view goes; the checkpoints stay. */
static void view_drop(sim_history *h)
{
    sim_close(h->view);
    h->view = NULL;
    h->at = -1;
}

void sim_history_clear(sim_history *h)
{
    view_drop(h);
    for (size_t i = 0; i < h->ncp; i++)
        sim_close(h->cp[i].snap);
    h->ncp = 0;
}

/* One operation between the view and the target, for stepping back. */
typedef struct undo_op {
    int64_t id;
    int kind; /* UNDO_TOPO, UNDO_INSERT, UNDO_GENERATE, UNDO_DELETE */
    char *prefix;
    size_t plen;
    uint64_t start, count;
    int64_t skipped; /* an insert's, from the log; -1 unknown */
} undo_op;

enum { UNDO_TOPO, UNDO_INSERT, UNDO_GENERATE, UNDO_DELETE, UNDO_NONE, UNDO_WORKLOAD };

typedef struct undo_list {
    undo_op *v;
    size_t n, cap;
    rs_error *err;
} undo_list;

static int undo_collect(void *ud, const store_op *o)
{
    undo_list *l = ud;
    if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16))
        return rs_fail(l->err, RINGSIM_ENOMEM, "out of memory");
    undo_op u = {o->id, UNDO_NONE, NULL, 0, 0, 0, o->skipped};
    sim_op_type type = sim_op_type_of(o->type);
    if (sim_op_is_topology(type)) {
        u.kind = UNDO_TOPO;
    } else if (type == SIM_OP_WORKLOAD) {
        u.kind = UNDO_WORKLOAD; /* the view takes the log's workload after the move */
    } else if (type == SIM_OP_DELETE_KEYS) {
        u.kind = UNDO_DELETE;
    } else if (type == SIM_OP_INSERT_KEYS) {
        sim_op_params p;
        int rc = sim_op_params_read(o, &p, l->err);
        if (rc)
            return rc;
        u.kind = p.generated ? UNDO_GENERATE : UNDO_INSERT;
        if (p.generated) {
            u.plen = p.prefix.len;
            u.prefix = strndup(p.prefix.s, p.prefix.len);
            u.start = p.start;
            u.count = p.count;
        }
        sim_op_params_clear(&p);
        if (u.kind == UNDO_GENERATE && !u.prefix)
            return rs_fail(l->err, RINGSIM_ENOMEM, "out of memory");
    }
    l->v[l->n++] = u;
    return 0;
}

static void undo_list_free(undo_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].prefix);
    free(l->v);
}

/* Undo the keys of one insert (delete them) or delete (insert them again,
 * placed by the view's placement, which is the one before the operation:
 * key operations leave the topology alone). */
static int undo_keys(sim *s, sim *v, const undo_op *u, rs_error *err)
{
    keylist l;
    memset(&l, 0, sizeof l);
    int rc = 0;
    if (u->kind == UNDO_GENERATE) {
        char buf[NAME_BUF + 24];
        for (uint64_t i = 0; !rc && i < u->count; i++) {
            size_t len = sim_generated_key((sim_str){u->prefix, u->plen}, u->start + i, buf);
            rc = sim__kl_collect_str(&l, buf, len);
        }
        if (rc)
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    } else {
        rc = store_op_keys_each(s->st, u->id, sim__kl_collect_str, &l, err);
    }
    sim_str *keys = rc ? NULL : sim__kl_strs(&l);
    if (!rc && !keys)
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int64_t dummy, ins, skip;
    if (!rc && l.n)
        rc = u->kind == UNDO_DELETE ? sim_insert_keys(v, keys, l.n, false, &ins, &skip, &dummy, err)
                                    : sim_delete_keys(v, keys, l.n, &dummy, err);
    free(keys);
    sim__kl_free(&l);
    return rc;
}

/* Move the view from `from` back to `to` (to < from, no reset or revert in
 * between) by undoing the operations from the last: key operations by their
 * keys, runs of node and configuration operations by one change of
 * topology to the state before the run, taken from a replay of the log
 * without its keys.  RINGSIM_EPARAM (view untouched) when an insert in the
 * range had skipped keys: which ones existed before is not recorded. */
static int step_back(sim *s, sim *v, int64_t from, int64_t to, rs_error *err)
{
    undo_list l = {NULL, 0, 0, err};
    sim__nodeset *want = NULL;
    size_t nwant = 0;
    sim *bare = NULL;
    int rc = store_ops_each(s->st, to, from - to, undo_collect, &l, err);
    if (rc)
        goto out;
    /* Refuse before touching the view. */
    int64_t replayed = 0;
    if ((rc = store_meta_get_int(v->st, REPLAYED, &replayed, err)))
        goto out;
    for (size_t i = 0; i < l.n; i++) {
        char mk[48];
        int64_t skipped = l.v[i].skipped;
        if (l.v[i].kind == UNDO_NONE) {
            rc = rs_fail(err, RINGSIM_EPARAM, "operation %lld cannot be undone",
                         (long long)l.v[i].id);
            goto out;
        }
        if (l.v[i].kind != UNDO_INSERT && l.v[i].kind != UNDO_GENERATE)
            continue;
        if (skipped < 0 && replayed) { /* logged before version 3: the replay counted */
            skipped_name(mk, sizeof mk, l.v[i].id);
            char *val = NULL;
            if ((rc = store_meta_get(v->st, mk, &val, err)))
                goto out;
            skipped = val ? strtoll(val, NULL, 10) : 0;
            free(val);
        }
        if (skipped) {
            rc = rs_fail(err, RINGSIM_EPARAM,
                         skipped > 0 ? "operation %lld skipped existing keys"
                                     : "operation %lld does not say which keys it added",
                         (long long)l.v[i].id);
            goto out;
        }
    }
    /* The states before each run of topology changes (by the first of the
     * run: the state after the operation before it). */
    want = calloc(l.n + 1, sizeof *want);
    if (!want) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    int64_t last_topo = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].kind == UNDO_TOPO && (i == 0 || l.v[i - 1].kind != UNDO_TOPO)) {
            want[nwant++].after = l.v[i].id - 1;
            last_topo = l.v[i].id;
        }
    bool missing = false;
    for (size_t i = 0; i < nwant && !rc; i++) {
        int g = sim__nodeset_load(v, want[i].after + 1, &want[i], err);
        rc = g < 0 ? g : 0;
        missing = missing || g == 1;
    }
    if (rc)
        goto out;
    if (missing) { /* not replayed into this view: replay the log's nodes */
        for (size_t i = 0; i < nwant; i++)
            sim__nodeset_clear(&want[i]);
        if ((rc = sim__replay_to(s, last_topo, true, want, nwant, &bare, err)))
            goto out;
    }
    for (size_t i = 0; i < nwant; i++)
        if (!want[i].got) {
            rc = rs_fail(err, RINGSIM_EDB, "no state after operation %lld", (long long)want[i].after);
            goto out;
        }
    size_t w = nwant;
    for (size_t i = l.n; !rc && i-- > 0;) {
        const undo_op *u = &l.v[i];
        if (u->kind == UNDO_WORKLOAD)
            continue;
        if (u->kind != UNDO_TOPO) {
            rc = undo_keys(s, v, u, err);
            continue;
        }
        if (i > 0 && l.v[i - 1].kind == UNDO_TOPO)
            continue; /* the run is undone at its first operation */
        const sim__nodeset *t = &want[--w];
        opctx c;
        if ((rc = sim__op_begin(v, &c, "undo", "undo", NULL, err)))
            break;
        rc = sim__adopt_nodes(&c, t->nodes, t->n, &t->cfg, t->layout, err);
        int64_t dummy;
        if (rc)
            sim__op_abort(&c);
        else
            rc = sim__op_commit(&c, &dummy, err);
    }
out:
    for (size_t i = 0; want && i < nwant; i++)
        sim__nodeset_clear(&want[i]);
    free(want);
    sim_close(bare);
    undo_list_free(&l);
    return rc;
}

/* A copy of a database (the live one, or a checkpoint) as a private view,
 * and the operation it stands after (another process may have added some
 * since the caller looked). */
static int copy_of(sim *s, store *src, sim **out, int64_t *after, rs_error *err)
{
    sim *m = NULL;
    int rc = sim_open(&m, "", err);
    if (!rc)
        m->builds = s->builds;
    if (!rc && !(rc = store_copy_from(m->st, src, err)) && !(rc = sim__reload(m, err)))
        rc = store_last_op(m->st, after, err);
    if (rc) {
        sim_close(m);
        return rc;
    }
    m->record = false;
    *out = m;
    return 0;
}

/* The ways to the state after an operation, and what each costs in keys
 * (store_ops_work); -1 where a way cannot go. */
enum { WAY_FORWARD, WAY_BACK, WAY_LIVE, WAY_CHECKPOINT, WAY_REPLAY, WAY_COUNT };

/* Operations since the newest checkpoint must have done this much work
 * (keys moved, inserted or deleted) for another: about a second of replay. */
#define CHECKPOINT_WORK 250000

/* Pages of the file copied in the time of one key of work replayed or
 * undone: bench_history measured 2.4 (1.5 us a page, 3.5 us a key, 1M keys)
 * and 1.1 on a loaded machine. */
#define COPY_PAGES_PER_KEY 2

/* Bytes of layout built in the time of one key of work: a topology change
 * replayed or undone builds the layout whole, whatever keys it moves.
 * bench_history figure 11 (800 nodes x 160 points, 2 shared cores, loaded):
 * 0.024 us per byte built by a replay of the node adds, 8.5 us per key of
 * the generate: 346 bytes a key.  At 800 x 160 (5 KB a node, 4 MB in all)
 * a build is then ~12k keys, and a replay of the 800 adds ~5M: what a
 * price in keys only did not see (issue 13: 15.6 s a step; figure 10 is
 * now 1.5x the generate it steps over). */
#define LAYOUT_BYTES_PER_KEY 300

/* One layout build, in keys of work: the live layout's size (the past's
 * are not known without building them; the live one stands for them). */
static int64_t build_price(const sim *s)
{
    return (int64_t)(place_memory_bytes(s->cur.pl) / LAYOUT_BYTES_PER_KEY) + 1;
}

/* What replaying the layouts of the chain up to `at` costs (a replay, or
 * a keyless replay of the log's nodes): the oldest segment starts empty
 * (the log's start or a reset), its builds grow with the nodes added, at
 * the live layout's bytes per node; later segments start from a revert's
 * state, of unknown size: the live one's per build. */
static int chain_layout_cost(sim *s, int64_t at, int64_t *cost, rs_error *err)
{
    sim_chain ch;
    int64_t count, runs, first, nb, bp = build_price(s);
    int64_t n = (int64_t)s->cur.n;
    int64_t per_node = n ? (int64_t)(place_memory_bytes(s->cur.pl) / (size_t)n) : 0;
    *cost = 0;
    int rc = sim_chain_get(s, at, &ch, err);
    for (size_t i = 0; !rc && i < ch.n; i++) {
        if (i + 1 == ch.n && n &&
            !(rc = store_ops_node_builds(s->st, ch.seg[i].from, ch.seg[i].to, 0, n, &nb, err)))
            *cost += nb * per_node / LAYOUT_BYTES_PER_KEY + 1;
        else if ((i + 1 != ch.n || !n) &&
                 !(rc = store_ops_topology(s->st, ch.seg[i].from, ch.seg[i].to, &count, &runs,
                                           &first, err)))
            *cost += count * bp;
    }
    if (!rc)
        sim_chain_free(&ch);
    return rc;
}

/* The layouts going from `from` to `at` builds, priced: forward one per
 * topology change; back one per run of them, plus a keyless replay of the
 * log up to `from` when `have` (the database the step starts from) no
 * longer keeps the state before the first (sim_undo.c). */
static int layout_cost(sim *s, const sim *have_sim, store *have, int64_t from, int64_t at,
                       int64_t *cost, rs_error *err)
{
    int64_t count, runs, first, oldest = 0, n = 0, bp = build_price(s);
    int64_t lo = from < at ? from : at, hi = from < at ? at : from;
    *cost = 0;
    int rc = store_ops_topology(s->st, lo, hi, &count, &runs, &first, err);
    if (rc || !count)
        return rc;
    if (from < at) { /* from the nodes of the state it starts from */
        int64_t live = (int64_t)s->cur.n, start = have_sim ? (int64_t)have_sim->cur.n : live;
        int64_t per_node = live ? (int64_t)(place_memory_bytes(s->cur.pl) / (size_t)live) : 0;
        if (!live)
            *cost = count * bp;
        else if (!(rc = store_ops_node_builds(s->st, lo, hi, start, start > live ? start : live, &n,
                                              err)))
            *cost = n * per_node / LAYOUT_BYTES_PER_KEY + 1;
        return rc;
    }
    *cost = runs * bp;
    if (!(rc = store_meta_oldest(have, SIM_BEFORE_PREFIX, &oldest, err)) &&
        (!oldest || first < oldest) && !(rc = chain_layout_cost(s, hi, &n, err)))
        *cost += n;
    return rc;
}

/* What going from the state after `from` to the state after `at` costs,
 * forward or back, starting from the database `have`, in *cost (-1: it
 * cannot, a reset or revert between). */
static int step_cost(sim *s, const sim *have_sim, store *have, int64_t from, int64_t at,
                     int64_t *cost, rs_error *err)
{
    int64_t base = 0, w = 0, l = 0;
    *cost = -1;
    int rc = store_op_base(s->st, from < at ? at : from, &base, err);
    if (!rc && base <= (from < at ? from : at) &&
        !(rc = store_ops_work(s->st, from < at ? from : at, from < at ? at : from, &w, err)) &&
        !(rc = layout_cost(s, have_sim, have, from, at, &l, err)))
        *cost = w + l;
    return rc;
}

static int way_costs(sim *s, const sim_history *h, int64_t at, int64_t last, int64_t *cost,
                     size_t *cp_best, rs_error *err)
{
    int64_t w, c = 0;
    int rc = 0;
    for (int i = 0; i < WAY_COUNT; i++)
        cost[i] = -1;
    /* Forward from the view, or back (at most HISTORY_MAX_UNDO operations);
     * no reset or revert in between.  Undoing costs what the operations
     * cost, their keys and their layouts. */
    if (h->view && h->at != at && (h->at < at || h->at - at <= HISTORY_MAX_UNDO) &&
        !(rc = step_cost(s, h->view, h->view->st, h->at, at, &c, err)))
        cost[h->at < at ? WAY_FORWARD : WAY_BACK] = c;
    /* Back from a copy of the live state. */
    int64_t pages = 0;
    if (!rc && !(rc = step_cost(s, s, s->st, last, at, &c, err)) && c >= 0 &&
        !(rc = store_page_count(s->st, &pages, err)))
        cost[WAY_LIVE] = pages / COPY_PAGES_PER_KEY + build_price(s) + c;
    /* From the checkpoint that costs least to copy and move. */
    for (size_t i = 0; !rc && i < h->ncp; i++) {
        if (!(rc = step_cost(s, h->cp[i].snap, h->cp[i].snap->st, h->cp[i].at, at, &c, err)) &&
            c >= 0 && !(rc = store_page_count(h->cp[i].snap->st, &pages, err))) {
            c += pages / COPY_PAGES_PER_KEY + build_price(s);
            if (cost[WAY_CHECKPOINT] < 0 || c < cost[WAY_CHECKPOINT]) {
                cost[WAY_CHECKPOINT] = c;
                *cp_best = i;
            }
        }
    }
    /* A replay: every operation the state stands on, and its layouts. */
    sim_chain ch;
    int64_t n = 0;
    if (!rc && !(rc = sim_chain_get(s, at, &ch, err))) {
        cost[WAY_REPLAY] = 0;
        for (size_t i = 0; !rc && i < ch.n; i++)
            if (!(rc = store_ops_work(s->st, ch.seg[i].from, ch.seg[i].to, &w, err)))
                cost[WAY_REPLAY] += w;
        sim_chain_free(&ch);
        if (!rc && !(rc = chain_layout_cost(s, at, &n, err)))
            cost[WAY_REPLAY] += n;
    }
    return rc;
}

/* Go one way; RINGSIM_EPARAM (nothing changed) when it turns out not to. */
static int go(sim *s, sim_history *h, int way, size_t cp, int64_t at, rs_error *err)
{
    static const char *const how[WAY_COUNT] = {"forward", "back", "live", "checkpoint", "replay"};
    int rc = 0;
    if (way == WAY_FORWARD) {
        rc = sim_advance(s, h->view, h->at, at, err);
    } else if (way == WAY_BACK) {
        rc = step_back(s, h->view, h->at, at, err);
    } else if (way == WAY_LIVE || way == WAY_CHECKPOINT) {
        sim *m = NULL;
        int64_t after = 0;
        if (!(rc = copy_of(s, way == WAY_LIVE ? s->st : h->cp[cp].snap->st, &m, &after, err))) {
            sim_set_progress(m, s->progress, s->progress_ud);
            m->progress_label = "replay";
            rc = after == at  ? 0
                 : after > at ? step_back(s, m, after, at, err)
                              : sim_advance(s, m, after, at, err);
            sim_set_progress(m, NULL, NULL);
        }
        if (rc) {
            sim_close(m);
            return rc;
        }
        view_drop(h);
        h->view = m;
    } else {
        view_drop(h);
        if ((rc = sim_at(s, at, &h->view, err)))
            return rc;
    }
    if (rc) {
        /* A view that failed half-way is no state at all. */
        if (rc != RINGSIM_EPARAM)
            view_drop(h);
        return rc;
    }
    h->at = at;
    h->how = how[way];
    return 0;
}

int sim_history_at(sim *s, sim_history *h, int64_t at, sim **state, rs_error *err)
{
    *state = NULL;
    h->builds = 0;
    int64_t last;
    int rc = sim__check_at(s, at, &last, err);
    if (rc)
        return rc;
    /* After the last operation is now -- when the state in memory holds
     * it: another process may have logged it since the caller refreshed. */
    if (at == last && at > 0 && at == s->at_op) {
        h->how = "now";
        *state = s;
        return 0;
    }
    if (h->view && h->at == at) {
        h->how = "cached";
        *state = h->view;
        return 0;
    }
    /* The cheapest way first; a replay always gets there. */
    uint64_t built = *s->builds;
    if (h->view)
        h->view->builds = s->builds;
    int64_t cost[WAY_COUNT];
    size_t cp = 0;
    if ((rc = way_costs(s, h, at, last, cost, &cp, err)))
        return rc;
    bool tried[WAY_COUNT] = {false};

    for (;;) {
        int way = -1; /* the first of the cheapest: a tie goes to the view */
        for (int i = 0; i < WAY_COUNT; i++)
            if (!tried[i] && cost[i] >= 0 && (way < 0 || cost[i] < cost[way]))
                way = i;
        tried[way] = true;
        rs_error e2;
        rc = go(s, h, way, cp, at, way == WAY_REPLAY ? err : &e2);
        if (rc == 0 && (rc = sim__wl_from_log(h->view, s, at, err)))
            return rc; /* the workload after `at`, whichever way the view came */
        if (rc == 0) {
            h->builds = *s->builds - built;
            *state = h->view;
            return 0;
        }
        if (way == WAY_REPLAY)
            return rc;
        if (rc != RINGSIM_EPARAM)
            return rs_fail(err, rc, "%s", e2.msg);
    }
}

int sim_history_checkpoint(sim *s, sim_history *h, rs_error *err)
{
    int64_t last = 0, w = 0, newest = h->ncp ? h->cp[h->ncp - 1].at : 0;
    int rc = store_last_op(s->st, &last, err);
    if (rc || last <= newest || (rc = store_ops_work(s->st, newest, last, &w, err)) ||
        w < (h->checkpoint_work > 0 ? h->checkpoint_work : CHECKPOINT_WORK))
        return rc;
    sim *m = NULL;
    int64_t after = 0;
    if ((rc = copy_of(s, s->st, &m, &after, err)))
        return rc;
    store_shrink(m->st); /* read only by copies of it from now on */
    if (h->ncp == SIM_HISTORY_CHECKPOINTS) {
        /* The one (not the newest) whose neighbours are closest goes. */
        size_t gone = 0;
        int64_t best = INT64_MAX;
        for (size_t i = 0; i + 1 < h->ncp; i++) {
            int64_t gap = h->cp[i + 1].at - (i ? h->cp[i - 1].at : 0);
            if (gap < best) {
                best = gap;
                gone = i;
            }
        }
        sim_close(h->cp[gone].snap);
        memmove(&h->cp[gone], &h->cp[gone + 1], (h->ncp - gone - 1) * sizeof *h->cp);
        h->ncp--;
    }
    h->cp[h->ncp++] = (sim_checkpoint){after, m};
    return 0;
}
