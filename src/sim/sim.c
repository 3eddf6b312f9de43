/*
 * sim.c - the engine's frame: opening a database, keeping the state in
 * memory in step with the store (refresh), and the frame every operation
 * runs in.  sim.h has the engine's design and costs; sim_int.h its files,
 * floor by floor.
 *
 * State in memory is a `state` (sim_state.c): configuration, nodes and the
 * placement built from them.  An operation copies the state
 * (sim__op_begin), changes the copy while it writes SQLite inside one
 * transaction, and swaps the copy in after COMMIT (sim__op_commit); on any
 * failure it rolls back and drops the copy (sim__op_abort).  A dry run
 * (sim_preview_run) goes as far as the commit, gathers what it did and
 * rolls back.
 *
 * What keeps something of its own beside the state takes part as a
 * participant (sim_participants.c lists them and says why): this file
 * calls the phases (load, heavy, prepare, record, commit, abort, close) of
 * every participant in that list and never names one -- SQLite's
 * sqlite3_module, whose xBegin, xCommit and xRollback the
 * transaction's owner calls for whichever virtual tables take part.  Nor
 * does it call an operation: topology changes, keys and history stand
 * above it.
 *
 * Costs: a refresh that finds nothing new reads the data version; one that
 * finds only key changes reads the node rows again (the placement stands);
 * any other builds the placement (place.h).  The frame adds to an
 * operation a copy of the state (O(nodes + tokens)), a row per node whose
 * counter or weight changed, the log entry and its v4 record.
 */
#include "sim_int.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stored form of a configuration (meta "config", the log's). */
static char *config_to_json(const place_config *cfg)
{
    json_t *j = place_config_json(cfg, true);
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return t;
}

/* ---- the participants (sim_participants.c), phase by phase ----
 * Each phase calls every participant that has it, in the list's order;
 * the first failure stops a phase that can fail. */

static int parts_load(sim *s, rs_error *err)
{
    int rc = 0;
    for (const sim_participant *const *p = sim__participants; !rc && *p; p++)
        if ((*p)->load)
            rc = (*p)->load(s, err);
    return rc;
}

static int parts_heavy(sim *s, bool *heavy, rs_error *err)
{
    int rc = 0;
    *heavy = false;
    for (const sim_participant *const *p = sim__participants; !rc && !*heavy && *p; p++)
        if ((*p)->heavy)
            rc = (*p)->heavy(s, heavy, err);
    return rc;
}

static int parts_prepare(opctx *c, rs_error *err)
{
    int rc = 0;
    for (const sim_participant *const *p = sim__participants; !rc && *p; p++)
        if ((*p)->prepare)
            rc = (*p)->prepare(c, err);
    return rc;
}

static int parts_record(opctx *c, rs_error *err)
{
    int rc = 0;
    for (const sim_participant *const *p = sim__participants; !rc && *p; p++)
        if ((*p)->record)
            rc = (*p)->record(c, err);
    return rc;
}

static void parts_commit(opctx *c)
{
    for (const sim_participant *const *p = sim__participants; *p; p++)
        if ((*p)->commit)
            (*p)->commit(c);
}

static void parts_abort(opctx *c)
{
    for (const sim_participant *const *p = sim__participants; *p; p++)
        if ((*p)->abort)
            (*p)->abort(c);
}

static void parts_close(sim *s)
{
    for (const sim_participant *const *p = sim__participants; *p; p++)
        if ((*p)->close)
            (*p)->close(s);
}

/* ---- loading the state ---- */

#define SIM_HEAVY 1 /* load_state when light: the topology changed */

/* Whether a state just read (x, without placement, and its stored layout
 * state) places keys exactly as the current one: the same configuration,
 * the same nodes in the same order with the same ids, names, weights and
 * tokens, and the same layout state.  Counters may differ. */
static bool same_topology(const state *cur, const state *x, const char *layout)
{
    if (!cur->pl || cur->n != x->n || !place_config_equal(&cur->cfg, &x->cfg))
        return false;
    for (size_t i = 0; i < x->n; i++) {
        const node *a = &cur->nodes[i], *b = &x->nodes[i];
        if (a->id != b->id || a->len != b->len || memcmp(a->name, b->name, a->len) != 0 ||
            a->weight != b->weight || a->ntokens != b->ntokens || a->srv_id != b->srv_id ||
            !sim__node_attrs_equal(a, b) ||
            (a->ntokens && memcmp(a->tokens, b->tokens, a->ntokens * sizeof *a->tokens) != 0))
            return false;
    }
    char *now = place_state_text(cur->pl);
    bool same = strcmp(now ? now : "", layout ? layout : "") == 0;
    free(now);
    return same;
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
    if (sim__config_from_json(cfg, &x.cfg)) {
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
        if (name_check(sn[i].name, sn[i].len, "node name", NULL) || strlen(sn[i].name) != sn[i].len) {
            rc = rs_fail(err, RINGSIM_ENOTDB, "database is damaged: node %lld has an invalid name",
                         (long long)sn[i].id);
            goto fail;
        }
        x.nodes[i] = (node){.id = sn[i].id,
                            .name = sn[i].name,
                            .len = sn[i].len,
                            .weight = sn[i].weight,
                            .keys = sn[i].keys};
        sn[i].name = NULL; /* moved */
        x.n = i + 1;
        if (sn[i].tokens && (rc = sim__tokens_parse(sn[i].tokens, &x.nodes[i], err)))
            goto fail;
        if (sn[i].attrs && (rc = sim__attrs_parse(sn[i].attrs, &x.nodes[i], err)))
            goto fail;
    }
    x.n = n;
    if ((rc = store_meta_get(s->st, "layout", &layout, err)))
        goto fail;
    if (same_topology(&s->cur, &x, layout)) {
        /* Only keys changed (an insert, a delete): the placement stands,
         * the counters are new.  A refresh after each key written by
         * another connection then costs the rows read, not a layout. */
        for (size_t i = 0; i < n; i++)
            s->cur.nodes[i].keys = x.nodes[i].keys;
        s->cur.unassigned = x.unassigned;
        store_nodes_free(sn, n);
        free(cfg);
        free(layout);
        sim__state_clear(&x);
        return 0;
    }
    if (s->light) { /* the caller builds it elsewhere (sim_refresh_light) */
        rc = SIM_HEAVY;
        goto fail;
    }
    s->loading = true;
    rc = sim__build_placement(s, &x, NULL, layout, err);
    s->loading = false;
    if (rc)
        goto fail;
    store_nodes_free(sn, n);
    free(cfg);
    free(layout);
    sim__state_clear(&s->cur);
    s->cur = x;
    return 0;
fail:
    store_nodes_free(sn, n);
    free(cfg);
    free(layout);
    sim__state_clear(&x);
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
    s->builds = &s->builds_own;
    const char *hook = getenv("RINGSIM_MAX_LAYOUT_POINTS");
    s->max_points = hook && strtoull(hook, NULL, 10) > 0 ? strtoull(hook, NULL, 10)
                                                         : SIM_MAX_LAYOUT_POINTS;
    if (!(s->h = hasher_new())) {
        rc = rs_fail(err, RINGSIM_EINTERNAL, "OpenSSL has no SHA-256");
        goto fail;
    }
    if ((rc = store_open(&s->st, path, err)))
        goto fail;
    if ((rc = sim__reload(s, err)))
        goto fail;
    *out = s;
    return 0;
fail:
    sim_close(s);
    return rc;
}

/* The version and the state it names, read in one snapshot: a read
 * transaction of our own unless the caller holds one (an operation holds
 * the write lock).  Read apart, a commit landing between the two would
 * pass for seen without being loaded. */
static int load_version(sim *s, bool force, bool *changed, rs_error *err)
{
    bool own = !store_in_transaction(s->st);
    int64_t v;
    /* A file deleted or replaced under us is noticed here already (within
     * the server's 200 ms poll), not only at the next write: reads go on
     * from the open file, writes are refused (store_begin). */
    store_check_file(s->st, NULL);
    int rc = own ? store_begin_read(s->st, err) : 0;
    if (!rc)
        rc = store_data_version(s->st, &v, err);
    if (!rc && changed)
        *changed = v != s->data_version;
    /* Light: what a participant would build at the next read is left to
     * a full refresh too, like a layout (sim.h, sim_refresh_light). */
    bool build = false;
    if (!rc && s->light && (force || v != s->data_version))
        rc = parts_heavy(s, &build, err);
    if (!rc && build)
        rc = SIM_HEAVY;
    if (!rc && (force || v != s->data_version) && !(rc = load_state(s, err)) &&
        !(rc = store_last_op(s->st, &s->at_op, err)) && !(rc = parts_load(s, err)))
        s->data_version = v;
    if (own)
        store_end_read(s->st);
    return rc;
}

int sim__reload(sim *s, rs_error *err) { return load_version(s, true, NULL, err); }

void sim_close(sim *s)
{
    if (!s)
        return;
    sim__state_clear(&s->cur);
    parts_close(s);
    store_close(s->st);
    hasher_free(s->h);
    free(s);
}

int sim_refresh(sim *s, bool *changed, rs_error *err)
{
    if (changed)
        *changed = false;
    return load_version(s, false, changed, err);
}

int sim_refresh_light(sim *s, bool *heavy, rs_error *err)
{
    *heavy = false;
    s->light = true;
    int rc = load_version(s, false, NULL, err);
    s->light = false;
    if (rc == SIM_HEAVY) { /* load_state left the state as it was */
        *heavy = true;
        return 0;
    }
    return rc;
}

void sim_set_progress(sim *s, sim_progress_fn fn, void *ud)
{
    s->progress = fn;
    s->progress_ud = ud;
}

store *sim__store(sim *s) { return s->st; }
const char *sim_read_only(const sim *s) { return store_read_only(s->st); }

/* ---- the operation frame ---- */

int sim__op_begin(sim *s, opctx *c, const char *type, const char *subject, json_t *params,
                  rs_error *err)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->what = type;
    c->skipped = -1;
    s->p_what = NULL; /* nothing reported yet by this operation */
    int rc = store_begin(s->st, err);
    if (rc)
        return rc;
    /* Holding the write lock now: catch up with other processes first. */
    if ((rc = sim_refresh(s, NULL, err)) || (rc = sim__state_copy(&c->next, &s->cur))) {
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
            sim__state_clear(&c->next);
        }
    }
    return rc;
}

static void op_free(opctx *c)
{
    sim__tallies_free(c);
    sim__state_clear(&c->next);
}

void sim__op_abort(opctx *c)
{
    parts_abort(c);
    store_rollback(c->s->st);
    op_free(c);
}

static int name_cmp(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL); /* nobody first */
    return strcmp(a, b);
}

static int pair_cmp(const void *x, const void *y)
{
    const pair_ent *a = x, *b = y;
    if (a->keys != b->keys)
        return a->keys > b->keys ? -1 : 1;
    int r = name_cmp(a->from_name, b->from_name);
    return r ? r : name_cmp(a->to_name, b->to_name);
}

/* The pairs as docs/api.md v4 gives them: [{"from", "to", "keys",
 * "requests_share", "bytes"}…], largest first (then by names); requests
 * and bytes null when they are not known.  Sorts c->pairs. */
static json_t *pairs_json(opctx *c)
{
    pair_list *t = &c->pairs;
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, pair_cmp);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < t->n; i++) {
        const pair_ent *e = &t->v[i];
        if (!e->keys)
            continue;
        json_t *o = json_pack("{s:o, s:o, s:I, s:o, s:o}", "from",
                              e->from_name ? json_string(e->from_name) : json_null(), "to",
                              e->to_name ? json_string(e->to_name) : json_null(), "keys",
                              (json_int_t)e->keys, "requests_share",
                              t->loaded ? json_real(e->requests) : json_null(), "bytes",
                              t->loaded ? json_integer((json_int_t)e->bytes) : json_null());
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* What nobody serves after the operation: {"keys", "key_share",
 * "requests_share", "bytes"} (the last two null when not known). */
static json_t *unavailable_json(opctx *c)
{
    int64_t keys = c->next.unassigned, un = c->next.unassigned;
    for (size_t i = 0; i < c->next.n; i++)
        keys += c->next.nodes[i].keys;
    return json_pack("{s:I, s:f, s:o, s:o}", "keys", (json_int_t)un, "key_share",
                     keys > 0 ? (double)un / (double)keys : 0.0, "requests_share",
                     c->unavail_known ? json_real(c->unavail_requests) : json_null(), "bytes",
                     c->unavail_known ? json_integer((json_int_t)c->unavail_bytes) : json_null());
}

/* Under an algorithm with placement groups (ceph): the PGs whose up set
 * the operation changes and the positions that change (API.md v4), the
 * state before against the one it leaves (the same layout when it only
 * touches keys). */
static bool pg_moves(opctx *c, int64_t *remapped, int64_t *shards)
{
    const placement *before = c->s->cur.pl, *after = c->next.pl ? c->next.pl : before;
    return place_pg_diff(before, after, remapped, shards);
}

/* The operation's v4 record, kept in meta (SIM_V4_PREFIX + id) beside its
 * log entry: {"pairs", "unavailable_after", "pgs_remapped"?,
 * "pg_shards_moved"?}. */
static char *v4_text(opctx *c)
{
    json_t *p = pairs_json(c), *u = unavailable_json(c);
    json_t *o = p && u ? json_pack("{s:O, s:O}", "pairs", p, "unavailable_after", u) : NULL;
    int64_t r, sh;
    if (o && pg_moves(c, &r, &sh) &&
        (json_object_set_new(o, "pgs_remapped", json_integer((json_int_t)r)) ||
         json_object_set_new(o, "pg_shards_moved", json_integer((json_int_t)sh)))) {
        json_decref(o);
        o = NULL;
    }
    json_decref(p);
    json_decref(u);
    char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return t;
}

/* A sim__tally as a JSON list [{"node", "keys"}…], largest first, then by name. */
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
                                             t->names[k] ? json_string(t->names[k]) : json_null(),
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
    p->requests_moved = c->requests_moved;
    p->bytes_moved = c->bytes_moved;
    p->moved_from = tally_json(&c->from);
    p->moved_to = tally_json(&c->to);
    p->pairs = pairs_json(c);
    p->unavailable_after = unavailable_json(c);
    p->has_pgs = pg_moves(c, &p->pgs_remapped, &p->pg_shards_moved);
    p->sample_moves = json_array();
    int64_t total = 0;
    int rc = p->moved_from && p->moved_to && p->sample_moves && p->pairs && p->unavailable_after
                 ? 0
                 : RINGSIM_ENOMEM;
    if (!rc && c->op)
        rc = store_moves_page(s->st, c->op, 0, p->sample > 0 ? p->sample : 20, &total, add_sample,
                              p->sample_moves, err);
    if (!rc && p->after && c->next.pl) {
        state keep = s->cur;
        s->cur = c->next;
        p->after(p->ud, s);
        s->cur = keep;
    }
    sim__op_abort(c);
    return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
}

int sim_preview_run(sim *s, sim_preview *p, int (*op)(sim *, void *, rs_error *), void *arg,
                    rs_error *err)
{
    p->moved_from = p->moved_to = p->sample_moves = p->pairs = p->unavailable_after = NULL;
    s->preview = p;
    int rc = op(s, arg, err);
    s->preview = NULL;
    if (rc) {
        json_decref(p->moved_from);
        json_decref(p->moved_to);
        json_decref(p->sample_moves);
        json_decref(p->pairs);
        json_decref(p->unavailable_after);
        p->moved_from = p->moved_to = p->sample_moves = p->pairs = p->unavailable_after = NULL;
    }
    return rc;
}

/* Keep the operation's v4 record where it says something (moves, or keys
 * nobody serves): an operation from SIM_V4_SINCE on without one moved
 * nothing and left every key served (no row for each key operation, which
 * must still pass on a full disk when it frees space). */
static int v4_record(opctx *c, rs_error *err)
{
    sim *s = c->s;
    char *since = NULL, name[64];
    int rc = store_meta_get(s->st, SIM_V4_SINCE, &since, err);
    if (!rc && !since) {
        snprintf(name, sizeof name, "%" PRId64, c->op);
        rc = store_meta_set(s->st, SIM_V4_SINCE, name, err);
    }
    free(since);
    int64_t remapped = 0, shards;
    if (rc || (!c->pairs.n && !c->next.unassigned && !(pg_moves(c, &remapped, &shards) && remapped)))
        return rc;
    char *v4 = v4_text(c);
    snprintf(name, sizeof name, "%s%" PRId64, SIM_V4_PREFIX, c->op);
    rc = v4 ? store_meta_set(s->st, name, v4, err) : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    free(v4);
    return rc;
}

/* Write counters and the log entry, commit, and swap the new state in. */
int sim__op_end(opctx *c, int rc, int64_t *op_out, rs_error *err)
{
    if (!rc)
        return sim__op_commit(c, op_out, err);
    sim__op_abort(c);
    return rc;
}

int sim__op_commit(opctx *c, int64_t *op_out, rs_error *err)
{
    sim *s = c->s;
    state *x = &c->next;
    int rc = 0;
    for (size_t i = 0; i < x->n && !rc; i++) {
        long j = sim__find_node_id(&s->cur, x->nodes[i].id);
        if (j < 0 || s->cur.nodes[j].keys != x->nodes[i].keys ||
            s->cur.nodes[j].weight != x->nodes[i].weight)
            rc = store_node_update(s->st, x->nodes[i].id, x->nodes[i].weight, x->nodes[i].keys, err);
    }
    if (!rc && x->unassigned != s->cur.unassigned)
        rc = store_meta_set_int(s->st, "unassigned", x->unassigned, err);
    if (!rc && !place_config_equal(&x->cfg, &s->cur.cfg)) {
        char *cfg = config_to_json(&x->cfg);
        rc = cfg ? store_meta_set(s->st, "config", cfg, err)
                 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(cfg);
    }
    if (!rc) /* what the participants leave, and the operation's loads */
        rc = parts_prepare(c, err);
    if (!rc && c->op) {
        char *mf = moved_from_json(c);
        char *cfg = config_to_json(&x->cfg);
        /* The log keeps the configuration after the operation. */
        rc = mf && cfg
                 ? store_op_finish(s->st, c->op, c->moved, mf, cfg, c->replica_moves, c->skipped, err)
                 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(mf);
        free(cfg);
    }
    if (!rc && c->op && !s->preview)
        rc = v4_record(c, err);
    if (!rc && c->op) /* what they keep beside the log entry */
        rc = parts_record(c, err);
    if (!rc && !x->pl && !c->keys_only)
        rc = sim__build_placement(s, x, s->cur.pl, NULL, err);
    if (!rc && x->pl) { /* the layout's state, where the algorithm has one */
        char *layout = place_state_text(x->pl);
        rc = store_meta_set(s->st, "layout", layout ? layout : "", err);
        free(layout);
    }
    if (!rc && s->preview)
        return preview_finish(c, err);
    /* The last moment a cancel can take effect, nothing committed yet: a
     * Ctrl-C that came after the operation's last report still counts. */
    if (!rc && s->record && s->progress &&
        s->progress(s->progress_ud, s->progress_label ? s->progress_label : c->what, 1, 1))
        rc = rs_fail(err, RINGSIM_ECANCELED, "operation cancelled");
    if (!rc)
        rc = store_commit(s->st, err);
    if (rc) {
        sim__op_abort(c); /* s->cur was not touched: the engine is as it was */
        return rc;
    }
    /* Committed: nothing may fail from here.  s->data_version stays the
     * one sim_refresh read inside this transaction (sim__op_begin, under
     * the write lock): a connection's own commits leave its data_version
     * alone, so the next refresh sees every commit of another connection
     * since.  Read again now, outside the transaction, it would count a
     * commit landing after ours as seen without loading it (issue 14). */
    if (c->keys_only) {
        /* Topology unchanged: keep the current placement (it borrows the
         * current nodes) and take only the new counters. */
        for (size_t i = 0; i < x->n; i++)
            s->cur.nodes[i].keys = x->nodes[i].keys;
        s->cur.unassigned = x->unassigned;
    } else {
        sim__state_clear(&s->cur);
        s->cur = c->next;
        memset(&c->next, 0, sizeof c->next);
    }
    if (c->op)
        s->at_op = c->op;
    parts_commit(c);
    if (op_out)
        *op_out = c->op;
    op_free(c);
    return 0;
}
