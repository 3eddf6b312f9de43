/*
 * sim_ops.c - the operations (see sim.h and sim_int.h): topology changes,
 * which diff two placements by segment ranges of the key index or key by key
 * and count replica copies; the node operations (add, remove, weight,
 * state), configure and reset; the workload operation; and the key
 * operations.  Each runs in the frame of sim.c (sim__op_begin ..
 * sim__op_end) and tells the workload's cache what it does as it goes
 * (sim__wl_note, sim__wl_range, sim__wl_rekeyed).
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "sim_int.h"
#include "vec.h"
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- topology changes ---- */

static int64_t owner_id(const state *x, long idx)
{
    return idx < 0 ? STORE_NO_NODE : x->nodes[idx].id;
}

static const char *owner_name(const state *x, long idx)
{
    return idx < 0 ? NULL : x->nodes[idx].name;
}

/* Move the keys of coordinates [lo, hi] of column col (the position where
 * the algorithm has no coordinate of its own: both are stored alike) from
 * old owner index a (in `old`) to new owner index b (in c->next), fixing
 * counters, the tally and the workload's cache. */
static int move_range(opctx *c, const state *old, int col, uint64_t lo, uint64_t hi, long a, long b,
                      rs_error *err)
{
    int64_t from = owner_id(old, a), to = owner_id(&c->next, b);
    if (from == to)
        return 0;
    int64_t count;
    int rc = store_keys_move(c->s->st, sim__coord_stored(lo), sim__coord_stored(hi), from, to,
                             c->op, owner_name(old, a), owner_name(&c->next, b), &count, err);
    if (rc || !count)
        return rc;
    /* The workload's cache follows, in the column's own values (a position,
     * or a stored coordinate). */
    bool by_coord = col == PLACE_COL_COORD;
    sim__wl_range(c, col, by_coord ? sim__coord_stored(lo) : (int64_t)lo,
                  by_coord ? sim__coord_stored(hi) : (int64_t)hi, from, to, count);
    sim__count_owner(&c->next, from, -count);
    sim__count_owner(&c->next, to, count);
    if (sim__tally(c, from, owner_name(old, a), to, owner_name(&c->next, b), count))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return 0;
}

/* Both placements cut their space into segments with one owner each: walk
 * the two lists in step; every run where the (old, new) owner pair stays the
 * same and differs is one range query. */
static int diff_segments(opctx *c, const state *old, int col, rs_error *err)
{
    place_seg *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    int rc = place_segments(old->pl, &sa, &na);
    if (!rc)
        rc = place_segments(c->next.pl, &sb, &nb);
    if (rc) {
        free(sa);
        free(sb);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    size_t i = 0, j = 0;
    uint64_t lo = 0;
    bool in_run = false;
    uint64_t run_lo = 0, run_hi = 0;
    long run_a = -1, run_b = -1;
    uint64_t steps = 0;
    while (!rc && i < na && j < nb) {
        /* Thousands of segments: let the callback cancel now and then. */
        if (++steps % 1024 == 0 &&
            (rc = c->steps ? sim__poll(c->s, err) : sim__progress(c->s, c->what, steps, na + nb, err)))
            break;
        uint64_t hi = sa[i].hi < sb[j].hi ? sa[i].hi : sb[j].hi;
        long oa = sa[i].owner, ob = sb[j].owner;
        if (in_run && oa == run_a && ob == run_b) {
            run_hi = hi;
        } else {
            if (in_run) /* move_range compares ids: indexes differ between the two */
                rc = move_range(c, old, col, run_lo, run_hi, run_a, run_b, err);
            in_run = true;
            run_lo = lo;
            run_hi = hi;
            run_a = oa;
            run_b = ob;
        }
        if (sa[i].hi == hi)
            i++;
        if (sb[j].hi == hi)
            j++;
        if (hi == UINT64_MAX)
            break;
        lo = hi + 1;
    }
    if (!rc && in_run)
        rc = move_range(c, old, col, run_lo, run_hi, run_a, run_b, err);
    free(sa);
    free(sb);
    return rc;
}

/* Re-place keys one by one: every key, or (only_leavers) the keys of nodes
 * that are gone from c->next.  Where no stored coordinate changes, the
 * changes are collected first and written after the scan (so that the scan
 * never sees its own updates), each by its primary key in the table's
 * order; where coordinates change (a change of algorithm), the table is
 * rebuilt in the new order.  Moves are recorded in (position, key) order
 * either way. */
typedef struct replace_ctx {
    opctx *c;
    const state *old;
    bool only_leavers;
    sim__ids old_ids, next_ids; /* node id -> place, in old and in c->next */
    keylist changed;            /* key bytes, position, the new owner id */
    int64_t *coords;            /* the stored coordinate (in place) */
    bool *has_coord;
    int64_t *from;
    size_t cap;
    uint64_t seen, total;
    rs_error *err;
} replace_ctx;

/* Where key k goes in c->next: *to its new owner id, *has and *coord its
 * stored coordinate.  Returns whether the key is left where it is (an
 * algorithm that moves only the leavers' keys). */
static bool replace_where(replace_ctx *r, const store_key *k, int64_t *to, bool *has, int64_t *coord)
{
    opctx *c = r->c;
    place_key_info ki;
    place_key(c->next.pl, c->s->h, k->key, k->len, &ki);
    *has = ki.has_coord && place_column(c->next.pl) == PLACE_COL_COORD;
    *coord = *has ? sim__coord_stored(ki.coord) : 0;
    if (r->only_leavers && (k->node == STORE_NO_NODE || sim__ids_find(&r->next_ids, k->node) >= 0)) {
        *to = k->node;
        return true;
    }
    *to = owner_id(&c->next, ki.served); /* a stored key is where it is served */
    return false;
}

static int replace_progress(replace_ctx *r)
{
    opctx *c = r->c;
    if (++r->seen % PROGRESS_EVERY)
        return 0;
    return c->steps ? sim__poll(c->s, r->err)
                    : sim__progress(c->s, c->what, r->seen, r->total, r->err);
}

/* Note key k (position pos) as leaving `from` for `to`, stored at (has,
 * coord). */
static int replace_note(replace_ctx *r, const store_key *k, int64_t from, int64_t to, bool has,
                        int64_t coord)
{
    size_t n = r->changed.n;
    if (n == r->cap) {
        size_t cap;
        if (vec_next_cap(r->cap, n + 1, 1024, &cap) ||
            vec_realloc(&r->coords, cap, sizeof *r->coords) ||
            vec_realloc(&r->has_coord, cap, sizeof *r->has_coord) ||
            vec_realloc(&r->from, cap, sizeof *r->from))
            return rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
        r->cap = cap;
    }
    if (sim__kl_add(&r->changed, k->key, k->len, k->pos, to))
        return rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    r->coords[n] = coord;
    r->has_coord[n] = has;
    r->from[n] = from;
    return 0;
}

/* Key k placed anew: noted when its owner changes (at its stored
 * coordinate in place, at the new one where the table is rebuilt), and
 * given its new owner and coordinate. */
static int replace_visit(replace_ctx *r, store_key *k, bool rebuilt)
{
    int rc = replace_progress(r);
    if (rc)
        return rc;
    int64_t to, coord;
    bool has;
    replace_where(r, k, &to, &has, &coord);
    if (to != k->node && (rc = replace_note(r, k, k->node, to, rebuilt ? has : k->has_coord,
                                            rebuilt ? coord : k->coord)))
        return rc;
    k->node = to;
    k->has_coord = has;
    k->coord = coord;
    return 0;
}

/* In place: the keys whose owner changes. */
static int replace_one(void *ud, const store_key *k)
{
    replace_ctx *r = ud;
    if (r->only_leavers && (k->node == STORE_NO_NODE || sim__ids_find(&r->next_ids, k->node) >= 0))
        return 0;
    store_key copy = *k;
    return replace_visit(r, &copy, false);
}

/* Rebuilt: every key gets its new coordinate. */
static int rekey_one(void *ud, store_key *k) { return replace_visit(ud, k, true); }

/* (position, key) order of the noted keys: the key as SQLite compares
 * text (the bytes, then the length). */
static int klent_cmp(const keylist *l, const klent *x, const klent *y)
{
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(l->buf + x->off, l->buf + y->off, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int noted_cmp(const void *a, const void *b, void *ud)
{
    const keylist *l = ud;
    return klent_cmp(l, &l->v[*(const size_t *)a], &l->v[*(const size_t *)b]);
}

/* The keys counted by the place of their node (count[n]: the unassigned),
 * and the places in the order they first came. */
typedef struct side_count {
    int64_t *count;
    long *order;
    size_t n, norder;
} side_count;

static int side_init(side_count *t, size_t n)
{
    *t = (side_count){calloc(n + 1, sizeof *t->count), malloc((n + 1) * sizeof *t->order), n, 0};
    return t->count && t->order ? 0 : RINGSIM_ENOMEM;
}

static void side_add(side_count *t, long at)
{
    size_t i = at < 0 ? t->n : (size_t)at;
    if (!t->count[i]++)
        t->order[t->norder++] = (long)i;
}

static void side_free(side_count *t)
{
    free(t->count);
    free(t->order);
}

/* The counted keys into one side of the tally and into the node counters
 * of c->next (x: the state the places are in). */
static int side_apply(opctx *c, const side_count *t, const state *x, bool to)
{
    for (size_t j = 0; j < t->norder; j++) {
        size_t i = (size_t)t->order[j];
        int64_t id = i < t->n ? x->nodes[i].id : STORE_NO_NODE;
        const char *name = i < t->n ? x->nodes[i].name : NULL;
        sim__count_owner(&c->next, id, to ? t->count[i] : -t->count[i]);
        if (sim__tally_side(c, to, id, name, t->count[i]))
            return RINGSIM_ENOMEM;
    }
    return 0;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The moves' pairs (codes of from place + 1 in `old` and to place + 1 in
 * c->next, 0: nobody) into c's pairs: sorted, each run one pair.
 * O(m log m). */
static int pairs_apply(opctx *c, const state *old, uint64_t *code, size_t n)
{
    if (n > 1)
        qsort(code, n, sizeof *code, u64_cmp);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && code[j] == code[i]; j++)
            ;
        long fi = (long)(code[i] >> 32) - 1, ti = (long)(code[i] & 0xffffffffu) - 1;
        if (sim__tally_pair(c, owner_id(old, fi), owner_name(old, fi), owner_id(&c->next, ti),
                            owner_name(&c->next, ti), (int64_t)(j - i)))
            return RINGSIM_ENOMEM;
    }
    return 0;
}

static int diff_keys(opctx *c, const state *old, bool only_leavers, bool rebuild, rs_error *err)
{
    replace_ctx r = {.c = c,
                     .old = old,
                     .only_leavers = only_leavers,
                     .err = err,
                     .total = (uint64_t)sim_key_count(c->s)};
    sim__wl_rekeyed(c);
    side_count fromc = {0}, toc = {0};
    int rc = sim__ids_build(&r.old_ids, old) || sim__ids_build(&r.next_ids, &c->next) ||
                     side_init(&fromc, old->n) || side_init(&toc, c->next.n)
                 ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
                 : 0;
    if (!rc)
        rc = rebuild ? store_keys_rebuild(c->s->st, rekey_one, &r, err)
                     : store_keys_each(c->s->st, STORE_EACH_TABLE, replace_one, &r, err);
    for (size_t i = 0; !rc && !rebuild && i < r.changed.n; i++) {
        const klent *e = &r.changed.v[i];
        store_key k = {r.changed.buf + e->off, e->len,     e->pos, e->node,
                       r.has_coord[i],         r.coords[i]};
        rc = store_key_set(c->s->st, &k, err);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__poll(c->s, err);
    }
    size_t *ord = rc || !r.changed.n ? NULL : malloc(r.changed.n * sizeof *ord);
    /* each counted move's (from place + 1, to place + 1): its pair */
    uint64_t *pcode = rc || !r.changed.n ? NULL : malloc(r.changed.n * sizeof *pcode);
    size_t npcode = 0;
    if (!rc && r.changed.n && (!ord || !pcode))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; ord && i < r.changed.n; i++)
        ord[i] = i;
    /* Noted in the old table's order, which is often (position, key)
     * already (from the seed's ring, jump, rendezvous, multiprobe). */
    bool sorted = true;
    for (size_t i = 1; ord && sorted && i < r.changed.n; i++)
        sorted = klent_cmp(&r.changed, &r.changed.v[i - 1], &r.changed.v[i]) <= 0;
    if (ord && !sorted)
        qsort_r(ord, r.changed.n, sizeof *ord, noted_cmp, &r.changed);
    /* A key's owner is found in both states, or is nobody (unassigned). */
    for (size_t j = 0; !rc && j < r.changed.n; j++) {
        size_t i = ord[j];
        const klent *e = &r.changed.v[i];
        long fi = sim__ids_find(&r.old_ids, r.from[i]), ti = sim__ids_find(&r.next_ids, e->node);
        const char *fn = fi < 0 ? NULL : old->nodes[fi].name;
        const char *tn = ti < 0 ? NULL : c->next.nodes[ti].name;
        if (c->op)
            rc = store_move_add(c->s->st, c->op, r.changed.buf + e->off, e->len, fn, tn, err);
        if ((fi < 0 && r.from[i] != STORE_NO_NODE) || (ti < 0 && e->node != STORE_NO_NODE)) {
            /* an id in neither state (never seen): counted as it is */
            sim__count_owner(&c->next, r.from[i], -1);
            sim__count_owner(&c->next, e->node, 1);
            if (!rc && sim__tally(c, r.from[i], fn, e->node, tn, 1))
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        } else {
            side_add(&fromc, fi);
            side_add(&toc, ti);
            c->moved++;
            pcode[npcode++] = (uint64_t)(fi + 1) << 32 | (uint64_t)(ti + 1);
        }
        if (!rc && j % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__poll(c->s, err);
    }
    if (!rc && (side_apply(c, &fromc, old, false) || side_apply(c, &toc, &c->next, true) ||
                pairs_apply(c, old, pcode, npcode)))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    free(pcode);
    side_free(&fromc);
    side_free(&toc);
    sim__ids_free(&r.old_ids);
    sim__ids_free(&r.next_ids);
    free(ord);
    sim__kl_free(&r.changed);
    free(r.coords);
    free(r.has_coord);
    free(r.from);
    return rc;
}

/* With replicas, a change also adds copies to preference lists that are
 * not owner moves: count them over every key (one pass, two lookups a key;
 * only when either side keeps more than one copy). */
typedef struct replica_ctx {
    opctx *c;
    const state *old;
} replica_ctx;

static int count_replica_moves(void *ud, const store_key *k)
{
    replica_ctx *r = ud;
    sim *s = r->c->s;
    place_key_info a, b;
    long pa[PLACE_MAX_PREFS], pb[PLACE_MAX_PREFS];
    place_key(r->old->pl, s->h, k->key, k->len, &a);
    place_key(r->c->next.pl, s->h, k->key, k->len, &b);
    size_t na = place_prefs(r->old->pl, &a, r->old->cfg.replicas, pa);
    size_t nb = place_prefs(r->c->next.pl, &b, r->c->next.cfg.replicas, pb);
    int64_t owner_to = owner_id(&r->c->next, b.served);
    bool owner_moved = owner_id(r->old, a.served) != owner_to, owner_was_copy = false;
    for (size_t i = 0; i < nb; i++) {
        bool had = false;
        for (size_t j = 0; j < na && !had; j++)
            had = owner_id(r->old, pa[j]) == owner_id(&r->c->next, pb[i]);
        if (!had)
            r->c->replica_moves++;
        if (i == 0)
            owner_was_copy = had;
    }
    if (owner_moved && !owner_was_copy && nb)
        r->c->replica_moves--; /* that copy is the owner move itself */
    return 0;
}

/* Compare the placement of `old` with c->next (already holding its new
 * nodes and configuration, ids assigned) and move exactly the keys whose
 * owner changes: by ranges of the key index where both placements cut
 * their space into segments, otherwise key by key (only the leavers' keys
 * where the algorithm promises that nobody else's move).  Removed nodes must
 * still be in c->next's counters until the caller drops them. */
int sim__retopologize_to(opctx *c, const state *old, const char *layout, rs_error *err)
{
    int rc = sim__build_placement(c->s, &c->next, layout ? NULL : old->pl, layout, err);
    if (rc)
        return rc;
    int col = place_diff_column(old->pl, c->next.pl);
    if (col >= 0)
        rc = diff_segments(c, old, col, err);
    else
        rc = diff_keys(c, old, place_only_leavers_move(old->pl, c->next.pl),
                       !place_same_coords(old->pl, c->next.pl), err);
    if (!rc && (old->cfg.replicas > 1 || c->next.cfg.replicas > 1)) {
        replica_ctx r = {c, old};
        rc = store_keys_each(c->s->st, STORE_EACH_KEY, count_replica_moves, &r, err);
    }
    return rc;
}

static int retopologize(opctx *c, const state *old, rs_error *err)
{
    return sim__retopologize_to(c, old, NULL, err);
}

/* The weight rule every algorithm shares; what an algorithm adds (whole
 * numbers, no weights, weight 0 for haproxy only) is place_nodes_check's,
 * when the placement is built. */
static int check_weight(double weight, rs_error *err)
{
    if (!isfinite(weight) || weight < 0 || weight > SIM_MAX_WEIGHT)
        return rs_fail(err, RINGSIM_EPARAM, "weight must be a number from 0 to %g", SIM_MAX_WEIGHT);
    return 0;
}

int sim_add_node(sim *s, const char *name, size_t len, double weight, int64_t *op, rs_error *err)
{
    sim_node_spec spec = {.name = name, .len = len, .weight = weight};
    return sim_add_node_spec(s, &spec, op, err);
}

int sim_add_node_spec(sim *s, const sim_node_spec *spec, int64_t *op, rs_error *err)
{
    const char *name = spec->name;
    size_t len = spec->len;
    double weight = spec->weight;
    int rc = node_name_check(name, len, err);
    if (rc)
        return rc;
    if (spec->ntokens > PLACE_MAX_NODE_POINTS)
        return rs_fail(err, RINGSIM_EPARAM, "at most %u tokens per node", PLACE_MAX_NODE_POINTS);
    if (spec->srv_id < 0 || spec->srv_id > 2147483647)
        return rs_fail(err, RINGSIM_EPARAM, "id must be a whole number from 1 to 2147483647");
    if ((rc = place_loc_check(spec->loc, spec->nloc, err)))
        return rc;
    json_t *params = json_pack("{s:s%, s:f}", "name", name, len, "weight", weight);
    if (params && spec->srv_id)
        json_object_set_new(params, "id", json_integer((json_int_t)spec->srv_id));
    if (params && spec->nloc &&
        json_object_set_new(params, "location", place_loc_json(spec->loc, spec->nloc))) {
        json_decref(params);
        params = NULL;
    }
    for (size_t i = 0; i < spec->nreplicas; i++)
        if (!spec->replicas[i] ||
            (rc = name_check(spec->replicas[i], strlen(spec->replicas[i]), "replica", err)))
            return spec->replicas[i] ? rc
                                     : rs_fail(err, RINGSIM_EPARAM, "replicas[%zu] is missing", i);
    if (params && sim__states_to_json(&(node){.down = spec->down,
                                              .backup = spec->backup,
                                              .replicas = (char **)spec->replicas,
                                              .nreplicas = spec->nreplicas},
                                      params)) {
        json_decref(params);
        params = NULL;
    }
    char *subject = strndup(name, len);
    char *tokens = spec->ntokens ? sim__tokens_text(spec->tokens, spec->ntokens) : NULL;
    int64_t *tok = spec->ntokens ? malloc(spec->ntokens * sizeof *tok) : NULL;
    opctx c;
    if (tokens && params)
        json_object_set_new(params, "tokens", json_loads(tokens, 0, NULL));
    if (!params || !subject || (spec->ntokens && (!tokens || !tok))) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_ADD_NODE), subject, params, err)))
        goto out;
    if (sim__find_node(&c.next, name, len) >= 0) {
        rc = rs_fail(err, RINGSIM_ECONFLICT, "node \"%s\" already exists", subject);
        goto end; /* rc != 0: rolled back */
    }
    if ((rc = check_weight(weight, err)))
        goto end;
    int64_t id;
    if ((rc = store_node_insert(s->st, name, len, weight, tokens, &id, err)))
        goto end;
    node added = {.id = id,
                  .name = subject,
                  .len = len,
                  .weight = weight,
                  .tokens = tok,
                  .ntokens = spec->ntokens,
                  .srv_id = spec->srv_id};
    if (sim__node_states_copy(&added, &(node){.down = spec->down,
                                              .backup = spec->backup,
                                              .replicas = (char **)spec->replicas,
                                              .nreplicas = spec->nreplicas}) ||
        sim__node_set_location(&added, spec->loc, spec->nloc)) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto end;
    }
    bool failed;
    char *attrs = sim__attrs_text(&added, &failed);
    rc = failed  ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
         : attrs ? store_node_set_attrs(s->st, id, attrs, -1, err)
                 : 0;
    free(attrs);
    if (rc) {
        added.name = NULL; /* subject's, freed below */
        added.tokens = NULL;
        sim__node_free(&added);
        goto end;
    }
    state *x = &c.next; /* nodes has room for one more (sim__state_copy) */
    if (tok)
        memcpy(tok, spec->tokens, spec->ntokens * sizeof *tok);
    x->nodes[x->n++] = added;
    subject = NULL;
    tok = NULL;
    rc = retopologize(&c, &s->cur, err);
end:
    rc = sim__op_end(&c, rc, op, err);
out:
    free(subject);
    free(tokens);
    free(tok);
    json_decref(params);
    return rc;
}

/* The start every operation on one node shares: its subject (the name,
 * malloc'd into *subject, the caller's to free with params), the write
 * transaction begun and the node found in c->next (*index); on failure
 * nothing is begun (a missing node: RINGSIM_ENOTFOUND). */
int sim__node_op_begin(sim *s, opctx *c, const char *what, const char *name, size_t len,
                       json_t *params, char **subject, long *index, rs_error *err)
{
    *subject = strndup(name, len);
    if (!params || !*subject)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int rc = sim__op_begin(s, c, what, *subject, params, err);
    if (rc)
        return rc;
    if ((*index = sim__find_node(&c->next, name, len)) < 0) {
        sim__op_abort(c);
        return rs_fail(err, RINGSIM_ENOTFOUND, "node \"%s\" not found", *subject);
    }
    return 0;
}

int sim_remove_node(sim *s, const char *name, size_t len, int64_t *op, rs_error *err)
{
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    json_t *params = json_pack("{s:s%}", "name", name, len);
    char *subject = NULL;
    opctx c;
    long i = -1;
    if ((rc = sim__node_op_begin(s, &c, sim_op_type_name(SIM_OP_REMOVE_NODE), name, len, params,
                                 &subject, &i, err)))
        goto out;
    /* Take the node out of the new state; retopologize moves its keys to
     * their new owners (the old owner's counter goes with it). */
    node gone = c.next.nodes[i];
    memmove(&c.next.nodes[i], &c.next.nodes[i + 1], (c.next.n - (size_t)i - 1) * sizeof gone);
    c.next.n--;
    sim__node_free(&gone);
    if (!(rc = retopologize(&c, &s->cur, err)))
        rc = store_node_delete(s->st, gone.id, err);
    rc = sim__op_end(&c, rc, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

int sim_set_weight(sim *s, const char *name, size_t len, double weight, int64_t *op, rs_error *err)
{
    *op = 0;
    int rc = name_check(name, len, "node name", err);
    if (rc || (rc = check_weight(weight, err)))
        return rc;
    json_t *params = json_pack("{s:s%, s:f}", "name", name, len, "weight", weight);
    char *subject = NULL;
    opctx c;
    long i = -1;
    if ((rc = sim__node_op_begin(s, &c, sim_op_type_name(SIM_OP_SET_WEIGHT), name, len, params,
                                 &subject, &i, err)))
        goto out;
    if (c.next.nodes[i].weight == weight) { /* nothing changes: nothing recorded */
        sim__op_abort(&c);
        goto out;
    }
    /* The same node with another weight: the placement says which keys
     * move (ketama's or Envoy's arithmetic may move keys between others). */
    c.next.nodes[i].weight = weight;
    rc = sim__op_end(&c, retopologize(&c, &s->cur, err), op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

/* Store x's attributes as they are now (none: cleared). */
static int store_attrs(sim *s, const node *x, rs_error *err)
{
    bool failed;
    char *attrs = sim__attrs_text(x, &failed);
    int rc = failed ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
                    : store_node_set_attrs(s->st, x->id, attrs, -1, err);
    free(attrs);
    return rc;
}

/* A node up or down (docs/api.md "Node states"; their codec is
 * sim_states.c): a change of topology like any other. */
int sim_set_state(sim *s, const char *name, size_t len, bool down, int64_t *op, rs_error *err)
{
    *op = 0;
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    json_t *params = json_pack("{s:s%, s:s}", "name", name, len, "state", down ? "down" : "up");
    char *subject = NULL;
    opctx c;
    long i;
    if ((rc = sim__node_op_begin(s, &c, sim_op_type_name(SIM_OP_SET_STATE), name, len, params,
                                 &subject, &i, err)))
        goto out;
    if (c.next.nodes[i].down == down) { /* nothing changes: nothing recorded */
        sim__op_abort(&c);
        goto out;
    }
    node *x = &c.next.nodes[i];
    x->down = down;
    /* The same nodes, one of them serving or not: the placement says
     * whose keys are served elsewhere. */
    rc = store_attrs(s, x, err);
    if (!rc)
        rc = sim__retopologize_to(&c, &s->cur, NULL, err);
    rc = sim__op_end(&c, rc, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

/* A whole failure domain down or up (API.md v4 "failure domains"): every
 * node whose location holds (type, name) at any level, in one set_state
 * operation logged as {"domain": [type, name], "state"}; replay finds the
 * same nodes again, since the locations are part of the state.  Nodes
 * already in that state are left alone; when all are, nothing is recorded. */
int sim_set_state_domain(sim *s, const char *type, const char *name, bool down, int64_t *op,
                         rs_error *err)
{
    *op = 0;
    place_loc d = {type, name};
    int rc = place_loc_check(&d, 1, err);
    if (rc)
        return rc;
    json_t *params = json_pack("{s:[s,s], s:s}", "domain", type, name, "state", down ? "down" : "up");
    char *subject = NULL;
    opctx c;
    if (!params || asprintf(&subject, "%s=%s", type, name) < 0) {
        subject = NULL;
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_SET_STATE), subject, params, err)))
        goto out;
    size_t in = 0, changed = 0;
    for (size_t i = 0; !rc && i < c.next.n; i++) {
        node *x = &c.next.nodes[i];
        const char *has = place_loc_get(x->loc, x->nloc, type);
        if (!has || strcmp(has, name) != 0)
            continue;
        in++;
        if (x->down == down)
            continue;
        changed++;
        x->down = down;
        rc = store_attrs(s, x, err);
    }
    if (!rc && !in) {
        sim__op_abort(&c);
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "no node is in %s \"%s\"", type, name);
        goto out;
    }
    if (!rc && !changed) { /* nothing changes: nothing recorded */
        sim__op_abort(&c);
        goto out;
    }
    if (!rc)
        rc = sim__retopologize_to(&c, &s->cur, NULL, err);
    rc = sim__op_end(&c, rc, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

/* A node's location (API.md v4 "failure domains"; its codec is
 * sim_location.c): a change of topology, since replicas placed across
 * domains (replica_domain, NetworkTopologyStrategy) follow it. */
int sim_set_location(sim *s, const char *name, size_t len, const place_loc *loc, size_t n,
                     int64_t *op, rs_error *err)
{
    *op = 0;
    int rc = name_check(name, len, "node name", err);
    if (rc || (rc = place_loc_check(loc, n, err)))
        return rc;
    json_t *params = json_pack("{s:s%, s:o}", "name", name, len, "location", place_loc_json(loc, n));
    char *subject = NULL;
    opctx c;
    long i;
    if ((rc = sim__node_op_begin(s, &c, sim_op_type_name(SIM_OP_SET_LOCATION), name, len, params,
                                 &subject, &i, err)))
        goto out;
    node *x = &c.next.nodes[i];
    if (sim__loc_equal(x->loc, x->nloc, loc, n)) { /* nothing changes: nothing recorded */
        sim__op_abort(&c);
        goto out;
    }
    rc = sim__node_set_location(x, loc, n) ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
                                           : store_attrs(s, x, err);
    if (!rc)
        rc = sim__retopologize_to(&c, &s->cur, NULL, err);
    rc = sim__op_end(&c, rc, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

/* Ceph's `ceph osd reweight` (API.md v4; kept with the states,
 * sim_states.c): a change of topology, CRUSH mapping around what it takes
 * away.  Only ceph reads it, so only ceph takes it. */
int sim_set_reweight(sim *s, const char *name, size_t len, double r, int64_t *op, rs_error *err)
{
    *op = 0;
    int rc = name_check(name, len, "node name", err);
    if (rc)
        return rc;
    if (!isfinite(r) || r < 0 || r > 1)
        return rs_fail(err, RINGSIM_EPARAM, "reweight must be a number from 0 to 1");
    if (strcmp(s->cur.cfg.algorithm, "ceph") != 0)
        return rs_fail(err, RINGSIM_EPARAM, "reweight is Ceph's: the algorithm is %s, not ceph",
                       s->cur.cfg.algorithm);
    json_t *params = json_pack("{s:s%, s:f}", "name", name, len, "reweight", r);
    char *subject = NULL;
    opctx c;
    long i;
    if ((rc = sim__node_op_begin(s, &c, sim_op_type_name(SIM_OP_SET_REWEIGHT), name, len, params,
                                 &subject, &i, err)))
        goto out;
    node *x = &c.next.nodes[i];
    if ((x->reweighted ? x->reweight : 1.0) == r) { /* nothing changes: nothing recorded */
        sim__op_abort(&c);
        goto out;
    }
    x->reweighted = r != 1.0; /* 1 is "in", as a node that never had one */
    x->reweight = r;
    rc = store_attrs(s, x, err);
    if (!rc)
        rc = sim__retopologize_to(&c, &s->cur, NULL, err);
    rc = sim__op_end(&c, rc, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

bool sim_config_same(sim *s, const place_config *cfg)
{
    /* The stored form (every algorithm's values) is what must be equal. */
    json_t *want = place_config_json(cfg, true), *have = place_config_json(&s->cur.cfg, true);
    bool same = want && have && json_equal(want, have);
    json_decref(want);
    json_decref(have);
    return same;
}

int sim_configure(sim *s, const place_config *cfg, int64_t *op, rs_error *err)
{
    int rc = place_config_check(cfg, err);
    if (rc)
        return rc;
    json_t *params = place_config_json(cfg, false);
    char *subject = place_config_describe(cfg);
    opctx c;
    if (!params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_CONFIGURE), subject, params, err)))
        goto out;
    c.next.cfg = *cfg;
    if ((rc = retopologize(&c, &s->cur, err))) {
        sim__op_abort(&c);
        goto out;
    }
    rc = sim__op_commit(&c, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

int sim_reset(sim *s, int64_t *op, rs_error *err)
{
    json_t *params = json_object();
    opctx c;
    int rc = params ? sim__op_begin(s, &c, sim_op_type_name(SIM_OP_RESET), "reset", params, err)
                    : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    json_decref(params);
    if (rc)
        return rc;
    rc = store_keys_clear(s->st, err);
    for (size_t i = 0; i < c.next.n && !rc; i++)
        rc = store_node_delete(s->st, c.next.nodes[i].id, err);
    if (rc) {
        sim__op_abort(&c);
        return rc;
    }
    for (size_t i = 0; i < c.next.n; i++)
        sim__node_free(&c.next.nodes[i]);
    c.next.n = 0;
    c.next.unassigned = 0;
    return sim__op_commit(&c, op, err);
}

/* ---- the workload operation: shares and sizes change, keys stay ---- */

/* Every listed key stored: 0, or RINGSIM_EPARAM naming the first that is not. */
static int check_stored(sim *s, const wl_item *v, size_t n, rs_error *err)
{
    for (size_t i = 0; i < n; i++) {
        store_key k;
        int rc = store_key_find(s->st, v[i].key, v[i].len, &k, err);
        if (rc == RINGSIM_ENOTFOUND) {
            char *esc = names_escape(v[i].key, v[i].len);
            rc = rs_fail(err, RINGSIM_EPARAM, "key \"%.200s\" is not stored", esc ? esc : v[i].key);
            free(esc);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int sim__wl_apply(sim *s, const workload *w, bool check, int64_t *op, rs_error *err)
{
    opctx c;
    char *subject = NULL;
    json_t *params = wl_to_json(w);
    if (!params)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    const char *kind = json_string_value(json_object_get(params, "kind"));
    if (asprintf(&subject, "workload %s", kind) < 0) {
        json_decref(params);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    int rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_WORKLOAD), subject, params, err);
    if (!rc) {
        c.keys_only = true;
        if (check)
            rc = check_stored(s, w->keys, w->nkeys, err);
        if (check && !rc)
            rc = check_stored(s, w->size_keys, w->nsize_keys, err);
        if (!rc)
            rc = sim__wl_set_pending(&c, w, err);
        if (rc)
            sim__op_abort(&c);
        else
            rc = sim__op_commit(&c, op, err);
    }
    free(subject);
    json_decref(params);
    return rc;
}

int sim_set_workload(sim *s, const json_t *spec, int64_t *op, rs_error *err)
{
    workload w;
    int rc = wl_from_json(spec, &w, err);
    if (rc)
        return rc;
    rc = sim__wl_apply(s, &w, true, op, err);
    wl_free(&w);
    return rc;
}

int sim_set_workload_if_new(sim *s, const json_t *spec, const json_t *now, int64_t *op, rs_error *err)
{
    workload w;
    *op = 0;
    int rc = wl_from_json(spec, &w, err);
    if (rc)
        return rc;
    json_t *j = wl_to_json(&w);
    if (!j)
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    else if (!json_equal(j, (json_t *)now))
        rc = sim__wl_apply(s, &w, true, op, err);
    json_decref(j);
    wl_free(&w);
    return rc;
}

/* ---- keys ---- */

/* Insert one key under the new placement (the current one when the
 * operation does not change the topology); counts it. */
/* Key k as it is to be stored (*sk, borrowing k) and the index of the node
 * that serves it (-1: nobody). */
static long place_new(opctx *c, const char *k, size_t len, store_key *sk)
{
    sim *s = c->s;
    const placement *pl = c->next.pl ? c->next.pl : s->cur.pl;
    place_key_info ki;
    place_key(pl, s->h, k, len, &ki);
    long o = ki.served; /* a stored key is where it is served */
    bool col = ki.has_coord && place_column(pl) == PLACE_COL_COORD;
    *sk = (store_key){
        k, len, ki.position, owner_id(&c->next, o), col, col ? sim__coord_stored(ki.coord) : 0};
    return o;
}

/* A key the store took: counted, on its node o, in the workload's cache. */
static void count_new(opctx *c, const store_key *sk, long o, int64_t *inserted)
{
    (*inserted)++;
    sim__wl_note(c, sk, true); /* the workload's cache follows */
    if (o < 0)                 /* hot path: the owner's index is known, no search */
        c->next.unassigned++;
    else
        c->next.nodes[o].keys++;
}

int sim__insert_one(opctx *c, const char *k, size_t len, int64_t *inserted, rs_error *err)
{
    store_key sk;
    long o = place_new(c, k, len, &sk);
    int ins;
    int rc = store_key_insert(c->s->st, &sk, &ins, err);
    if (!rc && ins)
        count_new(c, &sk, o, inserted);
    return rc;
}

/* Keys made by key gen are placed and stored in batches in the table's
 * order (store_keys_insert_batch), and counted in number order as one by
 * one: at most GEN_BATCH keys and GEN_NAMES bytes of names a batch (about
 * 100 MB). */
#define GEN_BATCH (1u << 20)
#define GEN_NAMES (64u << 20)

typedef struct gen_batch {
    size_t cap; /* keys a batch holds */
    store_key *sk;
    long *owner;
    int *ins;
    char *names; /* cap names of at most plen + 20 bytes each */
} gen_batch;

static int gen_batch_init(gen_batch *b, size_t most, size_t plen, uint64_t count, rs_error *err)
{
    size_t per = plen + 21, cap = GEN_NAMES / per;
    most = most ? most : GEN_BATCH;
    cap = cap > most ? most : cap;
    cap = count < cap ? (size_t)count : cap;
    cap = cap ? cap : 1;
    *b = (gen_batch){cap, malloc(cap * sizeof *b->sk), malloc(cap * sizeof *b->owner),
                     malloc(cap * sizeof *b->ins), malloc(cap * per)};
    return b->sk && b->owner && b->ins && b->names ? 0
                                                   : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
}

typedef struct gen_poll_ctx {
    sim *s;
    rs_error *err;
} gen_poll_ctx;

/* Between the batch's inserts: a cancellation asked for stops it. */
static int gen_poll(void *ud)
{
    gen_poll_ctx *p = ud;
    return sim__poll(p->s, p->err);
}

static void gen_batch_free(gen_batch *b)
{
    free(b->sk);
    free(b->owner);
    free(b->ins);
    free(b->names);
}

/* prefix + start .. start + n - 1 (n <= b->cap) into b, placed; progress
 * by key as they are made (done before them, count in all). */
static int gen_batch_fill(opctx *c, gen_batch *b, sim_str prefix, uint64_t start, size_t n,
                          uint64_t done, uint64_t count, rs_error *err)
{
    char *k = b->names;
    for (size_t i = 0; i < n; i++) {
        size_t len = sim_generated_key(prefix, start + i, k);
        b->owner[i] = place_new(c, k, len, &b->sk[i]);
        k += len;
        uint64_t at = done + i + 1;
        if (at % PROGRESS_EVERY == 0) {
            int rc = sim__progress(c->s, "insert_keys", at, count, err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* A key gen of more than one batch places every key first and stores them
 * in the table's order, batch after batch: each batch is then a run of the
 * coordinate space, so that the table's pages are written once in all
 * rather than once per batch (a key gen of 10M keys into an empty table
 * appends).  A key is 24 bytes meanwhile (240 MB at SIM_MAX_GENERATE), its
 * name made again from its number. */
typedef struct gen_row {
    int64_t column; /* store_key_column: the table's order */
    uint32_t off;   /* number - start */
    uint32_t pos;
    int32_t owner; /* index into the new state's nodes, -1: none */
    bool has_coord;
} gen_row;

typedef struct gen_order {
    sim_str prefix;
    uint64_t start;
} gen_order;

static int gen_row_cmp(const void *a, const void *b, void *ud)
{
    const gen_row *x = a, *y = b;
    if (x->column != y->column)
        return x->column < y->column ? -1 : 1;
    const gen_order *g = ud; /* the same column: by name, as the table */
    char p[NAME_BUF + 24], q[NAME_BUF + 24];
    size_t lp = sim_generated_key(g->prefix, g->start + x->off, p);
    size_t lq = sim_generated_key(g->prefix, g->start + y->off, q);
    int c = memcmp(p, q, lp < lq ? lp : lq);
    return c ? c : (lp > lq) - (lp < lq);
}

/* Every key placed into rows[0..count), then sorted into the table's order;
 * progress over the first half of `count`. */
static int gen_rows_place(opctx *c, gen_row *rows, sim_str prefix, uint64_t start, uint64_t count,
                          rs_error *err)
{
    char k[NAME_BUF + 24];
    for (uint64_t i = 0; i < count; i++) {
        store_key sk;
        size_t len = sim_generated_key(prefix, start + i, k);
        long o = place_new(c, k, len, &sk);
        rows[i] = (gen_row){store_key_column(&sk), (uint32_t)i, sk.pos, (int32_t)o, sk.has_coord};
        if ((i + 1) % PROGRESS_EVERY == 0) {
            int rc = sim__progress(c->s, "insert_keys", (i + 1) / 2, count, err);
            if (rc)
                return rc;
        }
    }
    qsort_r(rows, (size_t)count, sizeof *rows, gen_row_cmp, &(gen_order){prefix, start});
    return sim__poll(c->s, err);
}

/* rows[0..n) into b as keys to store (n <= b->cap); progress over the
 * second half of `count` (done stored before them). */
static void gen_batch_from_rows(opctx *c, gen_batch *b, const gen_row *rows, size_t n,
                                sim_str prefix, uint64_t start)
{
    char *k = b->names;
    for (size_t i = 0; i < n; i++) {
        const gen_row *r = &rows[i];
        size_t len = sim_generated_key(prefix, start + r->off, k);
        b->owner[i] = r->owner;
        b->sk[i] = (store_key){k,
                               len,
                               r->pos,
                               owner_id(&c->next, r->owner),
                               r->has_coord,
                               r->has_coord ? r->column : 0};
        k += len;
    }
}

static char *count_subject(size_t n, const sim_str *one)
{
    char *t = NULL;
    if (n == 1)
        return strndup(one->s, one->len);
    if (asprintf(&t, "%zu keys", n) < 0)
        return NULL;
    return t;
}

/* A list of keys must not be empty and every key must follow the name
 * rules; the message says which one does not. */
static int check_key_list(const sim_str *keys, size_t n, rs_error *err)
{
    if (n == 0)
        return rs_fail(err, RINGSIM_EPARAM, "the list of keys is empty");
    for (size_t i = 0; i < n; i++) {
        int rc = name_check(keys[i].s, keys[i].len, "key", err);
        if (rc && n > 1) { /* say which one */
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            rs_fail(err, rc, "keys[%zu]: %s", i, m);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* The end of an insert of n keys: rolled back whole on failure (rc),
 * else the rest counted as skipped and committed. */
static int insert_finish(opctx *c, int rc, uint64_t n, int64_t *inserted, int64_t *skipped,
                         int64_t *op, rs_error *err)
{
    if (rc) {
        sim__op_abort(c);
        *inserted = 0;
        return rc;
    }
    *skipped = (int64_t)n - *inserted;
    c->skipped = *skipped; /* the log keeps it: undoing the insert needs it */
    rc = sim__op_commit(c, op, err);
    if (rc)
        *inserted = *skipped = 0;
    return rc;
}

/* The insert of keys as they come from next(): the loop of every explicit
 * insert, an array's (sim_insert_keys) or a stream's (sim_insert_keys_each).
 * checked: the keys were checked before (an array's, by check_key_list). */
static int insert_stream(sim *s, uint64_t n, sim_str first, sim_key_next_fn next, void *ud,
                         bool strict, bool checked, int64_t *inserted, int64_t *skipped,
                         int64_t *op, rs_error *err)
{
    *inserted = *skipped = 0;
    if (n == 0)
        return rs_fail(err, RINGSIM_EPARAM, "the list of keys is empty");
    json_t *params = json_pack("{s:I}", "keys", (json_int_t)n);
    char *subject = count_subject(n, &first);
    opctx c;
    int rc;
    if (!params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_INSERT_KEYS), subject, params, err)))
        goto out;
    c.keys_only = true;
    uint64_t i = 0;
    for (sim_str k; !rc; i++) {
        int more = next(ud, &k, err);
        if (more) {
            rc = more < 0 ? more : 0;
            break;
        }
        if (i == n) {
            rc = rs_fail(err, RINGSIM_EPARAM,
                         "the list of keys changed while it was read: "
                         "more than %llu keys",
                         (unsigned long long)n);
            break;
        }
        if (!checked && (rc = name_check(k.s, k.len, "key", err)) && n > 1) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            rs_fail(err, rc, "keys[%llu]: %s", (unsigned long long)i, m);
        }
        if (!rc && c.op)
            rc = store_op_add_key(s->st, c.op, (int64_t)i, k.s, k.len, err);
        int64_t before = *inserted;
        if (!rc)
            rc = sim__insert_one(&c, k.s, k.len, inserted, err);
        if (!rc && strict && *inserted == before)
            rc = rs_fail(err, RINGSIM_ECONFLICT, "key \"%.*s\" already exists", (int)k.len, k.s);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__progress(s, "insert_keys", i + 1, n, err);
    }
    if (!rc && i != n)
        rc = rs_fail(err, RINGSIM_EPARAM,
                     "the list of keys changed while it was read: %llu keys, not %llu",
                     (unsigned long long)i, (unsigned long long)n);
    rc = insert_finish(&c, rc, n, inserted, skipped, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

typedef struct array_reader {
    const sim_str *keys;
    size_t i, n;
} array_reader;

static int array_next(void *ud, sim_str *key, rs_error *err)
{
    (void)err;
    array_reader *r = ud;
    if (r->i == r->n)
        return 1;
    *key = r->keys[r->i++];
    return 0;
}

int sim_insert_keys(sim *s, const sim_str *keys, size_t n, bool strict, int64_t *inserted,
                    int64_t *skipped, int64_t *op, rs_error *err)
{
    *inserted = *skipped = 0;
    int rc = check_key_list(keys, n, err);
    if (rc)
        return rc;
    array_reader r = {keys, 0, n};
    return insert_stream(s, n, keys[0], array_next, &r, strict, true, inserted, skipped, op, err);
}

int sim_insert_keys_each(sim *s, uint64_t n, sim_str first, sim_key_next_fn next, void *ud,
                         int64_t *inserted, int64_t *skipped, int64_t *op, rs_error *err)
{
    *inserted = *skipped = 0;
    int rc = n ? name_check(first.s, first.len, "key", err) : 0;
    return rc ? rc : insert_stream(s, n, first, next, ud, false, false, inserted, skipped, op, err);
}

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* The default start of `key gen` comes from the log, the one record of
 * what was generated: a scan of the operations since the last reset (each
 * a row read; only generates are parsed). */
typedef struct gen_scan {
    const char *prefix;
    size_t plen;
    uint64_t next;
    rs_error *err;
} gen_scan;

static int gen_scan_op(void *ud, const store_op *o)
{
    gen_scan *g = ud;
    if (sim_op_type_of(o->type) == SIM_OP_RESET) { /* an empty state starts again at 0 */
        g->next = 0;
        return 0;
    }
    if (sim_op_type_of(o->type) != SIM_OP_INSERT_KEYS || !o->params || !strstr(o->params, "generate"))
        return 0;
    sim_op_params p;
    int rc = sim_op_params_read(o, &p, g->err);
    if (rc)
        return rc;
    if (p.generated && p.prefix.len == g->plen && !memcmp(p.prefix.s, g->prefix, g->plen) &&
        p.start + p.count > g->next)
        g->next = p.start + p.count;
    sim_op_params_clear(&p);
    return 0;
}

int sim_generate_next(sim *s, const char *prefix, size_t plen, uint64_t *start, rs_error *err)
{
    *start = 0;
    int rc = plen ? name_check(prefix, plen, "key prefix", err) : 0;
    if (rc)
        return rc;
    gen_scan g = {prefix, plen, 0, err};
    rc = store_ops_each(s->st, 0, -1, gen_scan_op, &g, err);
    *start = g.next;
    return rc;
}

int sim_generate_keys(sim *s, const char *prefix, size_t plen, uint64_t start, uint64_t count,
                      int64_t *inserted, int64_t *skipped, int64_t *op, rs_error *err)
{
    *inserted = *skipped = 0;
    if (count < 1 || count > SIM_MAX_GENERATE)
        return rs_fail(err, RINGSIM_EPARAM, "count must be 1 to %u", SIM_MAX_GENERATE);
    if (start > (1ull << 53) || start + count - 1 > (1ull << 53))
        return rs_fail(err, RINGSIM_EPARAM, "start must be 0 to 2^53 - count");
    uint64_t last = start + count - 1;
    if (plen + (size_t)digits(last) > NAME_MAX_BYTES)
        return rs_fail(err, RINGSIM_ENAME, "prefix is too long: keys would exceed %d bytes",
                       NAME_MAX_BYTES);
    /* The prefix must itself be a valid (possibly empty) start of a name. */
    int rc = plen ? name_check(prefix, plen, "key prefix", err) : 0;
    if (rc)
        return rc;
    json_t *params = json_pack("{s:{s:I, s:s%, s:I}}", "generate", "count", (json_int_t)count,
                               "prefix", prefix, plen, "start", (json_int_t)start);
    char *subject = NULL;
    if (count == 1)
        rc = asprintf(&subject, "%.*s%llu", (int)plen, prefix, (unsigned long long)start) < 0;
    else
        rc = asprintf(&subject, "%llu keys %.*s%llu \u2026 %.*s%llu", (unsigned long long)count,
                      (int)plen, prefix, (unsigned long long)start, (int)plen, prefix,
                      (unsigned long long)last) < 0;
    opctx c;
    if (rc || !params) {
        subject = rc ? NULL : subject;
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_INSERT_KEYS), subject, params, err)))
        goto out;
    c.keys_only = true;
    /* A batch of at least a quarter of what is stored, under an algorithm
     * whose keys keep their position beside their coordinate: the index by
     * position is built again after it rather than at every insert. */
    bool bulk = (int64_t)count >= sim_key_count(s) / 4;
    bool with_pos = place_column(s->cur.pl) == PLACE_COL_COORD;
    if (bulk)
        rc = store_keys_bulk(s->st, true, with_pos, err);
    gen_batch b;
    if (!rc)
        rc = gen_batch_init(&b, s->gen_batch, plen, count, err);
    else
        memset(&b, 0, sizeof b);
    sim_str pre = {prefix, plen};
    gen_row *rows = NULL; /* more than one batch: every key placed first */
    if (!rc && count > b.cap && !(rows = malloc((size_t)count * sizeof *rows)))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!rc && rows)
        rc = gen_rows_place(&c, rows, pre, start, count, err);
    for (uint64_t done = 0; done < count && !rc; done += b.cap) {
        size_t n = count - done < b.cap ? (size_t)(count - done) : b.cap;
        if (rows) {
            gen_batch_from_rows(&c, &b, rows + done, n, pre, start);
            rc = sim__progress(s, "insert_keys", (count + done) / 2, count, err);
        } else {
            rc = gen_batch_fill(&c, &b, pre, start + done, n, done, count, err);
        }
        if (!rc)
            rc = store_keys_insert_batch(s->st, b.sk, n, b.ins, gen_poll, &(gen_poll_ctx){s, err},
                                         err);
        for (size_t i = 0; !rc && i < n; i++)
            if (b.ins[i])
                count_new(&c, &b.sk[i], b.owner[i], inserted);
    }
    gen_batch_free(&b);
    free(rows);
    if (!rc && bulk)
        rc = store_keys_bulk(s->st, false, with_pos, err);
    if (!rc)
        rc = sim__progress(s, "insert_keys", count, count, err);
    rc = insert_finish(&c, rc, count, inserted, skipped, op, err);
out:
    free(subject);
    json_decref(params);
    return rc;
}

static int cmp_str_ptr(const void *x, const void *y)
{
    const sim_str *a = *(const sim_str *const *)x, *b = *(const sim_str *const *)y;
    int c = sim__cmp_bytes(a->s, a->len, b->s, b->len);
    return c ? c : (a > b) - (a < b); /* stable: first occurrence first */
}

int sim_delete_keys(sim *s, const sim_str *keys, size_t n, int64_t *op, rs_error *err)
{
    int rc = check_key_list(keys, n, err);
    if (rc)
        return rc;
    /* A key named twice is deleted once. */
    const sim_str **ord = malloc(n * sizeof *ord);
    bool *dup = calloc(n, sizeof *dup);
    json_t *params = json_pack("{s:I}", "keys", (json_int_t)n);
    char *subject = count_subject(n, &keys[0]);
    opctx c;
    if (!ord || !dup || !params || !subject) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = &keys[i];
    qsort(ord, n, sizeof *ord, cmp_str_ptr);
    for (size_t i = 1; i < n; i++)
        if (sim__cmp_bytes(ord[i]->s, ord[i]->len, ord[i - 1]->s, ord[i - 1]->len) == 0)
            dup[ord[i] - keys] = true;
    if ((rc = sim__op_begin(s, &c, sim_op_type_name(SIM_OP_DELETE_KEYS), subject, params, err)))
        goto out;
    c.keys_only = true;
    int64_t seq = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (dup[i])
            continue;
        store_key k;
        int deleted;
        if ((rc = store_key_find(s->st, keys[i].s, keys[i].len, &k, err)) ||
            (rc = store_key_delete(s->st, keys[i].s, keys[i].len, &deleted, err)))
            break;
        if (c.op)
            rc = store_op_add_key(s->st, c.op, seq++, keys[i].s, keys[i].len, err);
        sim__count_owner(&c.next, k.node, -1);
        store_key gone = k; /* its bytes: the request's (k's may go with the row) */
        gone.key = keys[i].s;
        gone.len = keys[i].len;
        sim__wl_note(&c, &gone, false);
        if (!rc && i % PROGRESS_EVERY == PROGRESS_EVERY - 1)
            rc = sim__progress(s, "delete_keys", i + 1, n, err);
    }
    if (rc) {
        sim__op_abort(&c);
        goto out;
    }
    rc = sim__op_commit(&c, op, err);
out:
    free(ord);
    free(dup);
    free(subject);
    json_decref(params);
    return rc;
}

/* sim_str views of a list (pointers into l->buf). */
sim_str *sim__kl_strs(const keylist *l)
{
    sim_str *v = malloc((l->n + 1) * sizeof *v);
    for (size_t i = 0; v && i < l->n; i++)
        v[i] = (sim_str){l->buf + l->v[i].off, l->v[i].len};
    return v;
}
