/*
 * sim_diff.c - the difference between the states after two operations
 * (docs/api.md v3, GET /api/diff), and the composition of the log that
 * revert shares.
 *
 * The idea: the log already says what every operation changed -- a
 * topology change records each key it moved (moves: key, from, to), an
 * insert or delete its keys (op_keys, or a generate's prefix/start/count).
 * The difference is those records composed key by key along the way from
 * one state to the other: a key's first `from` and last `to` (moved back
 * where it was: not moved), inserted then deleted: nothing, deleted then
 * inserted again: there in both.  The way follows the log's tree of
 * states: the state after a revert to j is the state after j, a reset's is
 * empty like the start; so the way from A to B undoes A's operations back
 * to where the two lineages part (an undone move goes the other way, an
 * undone insert is a delete) and does B's from there.  That costs what the
 * operations on the way changed (store_ops_work), not what is stored.
 *
 * A few keys the log leaves open are looked up in the state at that end,
 * one lookup each: a key deleted and inserted again (the log does not keep
 * its owner at the start), and the keys of an insert that skipped some
 * already there (whether each was there is not recorded).  Only where the
 * log cannot say at all -- an operation of a kind this file does not
 * compose (one added after it), or more keys touched on the way than it
 * holds (DIFF_MAX_WORK) -- or when asked, are the two states
 * compared whole, key by key (sim_history_at for each, then one merge by
 * key bytes): O(keys).  sim_diff.how says which was done.
 *
 * Memory: one entry per key touched in between (the log's keys, interned
 * once), and the page of moves asked for.
 */
#define _GNU_SOURCE /* strndup */
#include "sim_int.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slots.h"
#include "vec.h"

/* ---- a set of byte strings with two ends each ---- */

/* An owner: a name's index, or one of these. */
#define OWNER_NONE (-1)    /* no node (null) */
#define OWNER_UNKNOWN (-2) /* the log does not say: look at that end's state */

typedef struct cent {
    size_t off;
    uint32_t len, hash;
    int32_t s_owner, e_owner; /* at the start and at the end */
    uint8_t s_exists, e_exists;
} cent;

typedef struct cset {
    char *buf;
    size_t used, cap;
    cent *v;
    size_t n, vcap;
    slots index; /* of v, by hash */
} cset;

static void cset_free(cset *c)
{
    free(c->buf);
    free(c->v);
    slots_free(&c->index);
    memset(c, 0, sizeof *c);
}

/* The entry of k, added (both ends unset) when new: *fresh says so.  NULL
 * when out of memory. */
static cent *cset_get(cset *c, const char *k, size_t len, bool *fresh)
{
    uint32_t h = slots_hash(k, len);
    const slots *t = &c->index;
    *fresh = false;
    if (t->nslot) {
        for (size_t j = h & (t->nslot - 1); t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
            cent *e = &c->v[t->slot[j] - 1];
            if (e->hash == h && e->len == len && memcmp(c->buf + e->off, k, len) == 0)
                return e;
        }
    }
    if (slots_reserve(&c->index, c->n, 1024, c->v, sizeof *c->v, offsetof(cent, hash)))
        return NULL;
    if (len > SIZE_MAX - c->used || vec_reserve(&c->buf, &c->cap, c->used + len, 1, 65536) ||
        vec_reserve(&c->v, &c->vcap, c->n + 1, sizeof *c->v, 1024))
        return NULL;
    memcpy(c->buf + c->used, k, len);
    cent *e = &c->v[c->n];
    *e = (cent){c->used, (uint32_t)len, h, OWNER_NONE, OWNER_NONE, 0, 0};
    c->used += len;
    slots_put(&c->index, h, c->n++);
    *fresh = true;
    return e;
}

static const char *cset_str(const cset *c, const cent *e) { return c->buf + e->off; }

/* ---- composing the log ---- */

/* What the way from one state to another changed: keys and nodes with
 * their state at the start and at the end; names interned in `names`. */
typedef struct compose {
    cset keys, nodes, names;
    int32_t last_from, last_to; /* the names of the last move (a run of them) */
    char last_from_s[NAME_BUF], last_to_s[NAME_BUF];
    bool have_last;
    bool back; /* the operations being read are undone */
    int64_t events;
    sim *s;
    rs_error *err;
} compose;

/* What an event says of a key: EV_INSERT_MAYBE is an insert of an
 * operation that skipped keys already there (which ones the log does not
 * say), EV_DELETE_MAYBE the same undone. */
enum { EV_MOVE, EV_INSERT, EV_DELETE, EV_INSERT_MAYBE, EV_DELETE_MAYBE };

/* s_exists / e_exists: not known from the log. */
#define EXISTS_UNKNOWN 2

static int32_t intern(compose *c, const char *name)
{
    if (!name)
        return OWNER_NONE;
    bool fresh;
    cent *e = cset_get(&c->names, name, strlen(name), &fresh);
    return e ? (int32_t)(e - c->names.v) : -3;
}

/* One event of a key (or, in c->nodes, of a node: EV_INSERT = added,
 * EV_DELETE = removed), in the order of the path from the start to the
 * end.  The first event of a key says what it was at the start; each one
 * what it is after.  A key's owner is the placement's at every moment (a
 * stored key always sits where the placement says), so an inserted key's
 * owner is not known from the log, but it is the same whether the insert
 * found it there or not. */
static int event(compose *c, cset *set, const char *k, size_t len, int kind, int32_t from, int32_t to)
{
    bool fresh;
    cent *e = cset_get(set, k, len, &fresh);
    if (!e)
        return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory");
    if (fresh) {
        static const uint8_t pre[] = {1, 0, 1, EXISTS_UNKNOWN, 1};
        e->s_exists = e->e_exists = pre[kind];
        e->s_owner = e->e_owner = kind == EV_MOVE     ? from
                                  : kind == EV_INSERT ? OWNER_NONE
                                                      : OWNER_UNKNOWN;
    }
    switch (kind) {
    case EV_MOVE:
        e->e_exists = 1;
        e->e_owner = to;
        break;
    case EV_INSERT:
    case EV_INSERT_MAYBE:
        if (e->e_exists != 1) { /* there already: the insert skipped it */
            e->e_exists = 1;
            e->e_owner = OWNER_UNKNOWN;
        }
        break;
    case EV_DELETE:
        e->e_exists = 0;
        e->e_owner = OWNER_NONE;
        break;
    default:
        e->e_exists = EXISTS_UNKNOWN;
        e->e_owner = OWNER_UNKNOWN;
    }
    if (++c->events % PROGRESS_EVERY == 0)
        return sim__poll(c->s, c->err);
    return 0;
}

static int on_move(void *ud, const char *key, const char *from, const char *to)
{
    compose *c = ud;
    /* A topology change moves ranges: runs of the same pair of names. */
    bool same = c->have_last &&
                (from ? c->last_from >= 0 && !strcmp(from, c->last_from_s)
                      : c->last_from == OWNER_NONE) &&
                (to ? c->last_to >= 0 && !strcmp(to, c->last_to_s) : c->last_to == OWNER_NONE);
    if (!same) {
        c->last_from = intern(c, from);
        c->last_to = intern(c, to);
        if (c->last_from == -3 || c->last_to == -3)
            return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory");
        snprintf(c->last_from_s, sizeof c->last_from_s, "%s", from ? from : "");
        snprintf(c->last_to_s, sizeof c->last_to_s, "%s", to ? to : "");
        c->have_last = true;
    }
    /* Undone, a move goes the other way. */
    return event(c, &c->keys, key, strlen(key), EV_MOVE, c->back ? c->last_to : c->last_from,
                 c->back ? c->last_from : c->last_to);
}

typedef struct keys_ev {
    compose *c;
    int kind;
} keys_ev;

static int on_key(void *ud, const char *k, size_t len)
{
    keys_ev *x = ud;
    return event(x->c, &x->c->keys, k, len, x->kind, OWNER_NONE, OWNER_NONE);
}

/* The kind of a key or node event, done or undone (c->back). */
static int kind_of(const compose *c, int kind)
{
    static const int undone[] = {EV_MOVE, EV_DELETE, EV_INSERT, EV_DELETE_MAYBE, EV_INSERT_MAYBE};
    return c->back ? undone[kind] : kind;
}

/* One operation's records, done (forward) or undone (c->back). */
static int compose_op(compose *c, const store_op *o)
{
    sim *s = c->s;
    int64_t total = 0;
    const char *t = o->type;
    sim_op_type type = sim_op_type_of(t);
    /* an import replaces nodes the moves do not name: states compared */
    bool topo = sim_op_is_topology(type) && type != SIM_OP_IMPORT;
    bool ins = type == SIM_OP_INSERT_KEYS, del = type == SIM_OP_DELETE_KEYS;
    if (type == SIM_OP_WORKLOAD) /* shares and sizes: no key or owner changes */
        return 0;
    if (!topo && !ins && !del) /* a kind the log composition does not know */
        return rs_fail(c->err, RINGSIM_EPARAM, "operation %lld (%s) is not composed",
                       (long long)o->id, t);
    if (topo) {
        c->have_last = false;
        int rc = store_moves_page(s->st, o->id, 0, -1, &total, on_move, c, c->err);
        if (rc || (type != SIM_OP_ADD_NODE && type != SIM_OP_REMOVE_NODE))
            return rc;
        sim_op_params p;
        if ((rc = sim_op_params_read(o, &p, c->err)))
            return rc;
        rc = event(c, &c->nodes, p.node.name, p.node.len,
                   kind_of(c, type == SIM_OP_ADD_NODE ? EV_INSERT : EV_DELETE), OWNER_NONE,
                   OWNER_NONE);
        sim_op_params_clear(&p);
        return rc;
    }
    /* Which keys an insert that skipped some found there is not recorded
     * (skipped < 0: not known, logged before schema 3). */
    keys_ev x = {c, kind_of(c, !ins ? EV_DELETE : o->skipped ? EV_INSERT_MAYBE : EV_INSERT)};
    sim_op_params p;
    int rc = sim_op_params_read(o, &p, c->err);
    if (rc)
        return rc;
    if (p.generated) {
        char buf[NAME_BUF + 24];
        for (uint64_t i = 0; !rc && i < p.count; i++)
            rc = on_key(&x, buf, sim_generated_key(p.prefix, p.start + i, buf));
    } else {
        rc = store_op_keys_each(s->st, o->id, on_key, &x, c->err);
    }
    sim_op_params_clear(&p);
    if (rc == RINGSIM_ENOMEM)
        rs_fail(c->err, rc, "out of memory");
    return rc;
}

static void compose_free(compose *c)
{
    cset_free(&c->keys);
    cset_free(&c->nodes);
    cset_free(&c->names);
}

/* ---- the path between two states ---- */

/* Operations (lo, hi], done or undone. */
typedef struct span {
    int64_t lo, hi;
    bool back;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

static int spans_add(spans *l, int64_t lo, int64_t hi, bool back)
{
    if (hi <= lo)
        return 0;
    if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 8))
        return RINGSIM_ENOMEM;
    l->v[l->n++] = (span){lo, hi, back};
    return 0;
}

/* The operations the state after `at` stands on, oldest first (the state
 * after a revert to j is the state after j; the chain starts at the empty
 * start or at a reset, which is empty too: only the configuration, which
 * config_changed compares apart, tells them apart). */
static int lineage(sim *s, int64_t at, spans *out, rs_error *err)
{
    sim_chain ch;
    int rc = sim_chain_get(s, at, &ch, err);
    for (size_t i = ch.n; !rc && i-- > 0;)
        if (spans_add(out, ch.seg[i].from, ch.seg[i].to, false))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!rc)
        sim_chain_free(&ch);
    return rc;
}

/* The way from the state after `from` to the state after `to`: undo
 * `from`'s operations back to where the two lineages part, then do `to`'s
 * from there.  Both lineages start empty (the start, or a reset). */
static int path_of(sim *s, int64_t from, int64_t to, spans *path, rs_error *err)
{
    spans a = {0}, b = {0};
    int rc = lineage(s, from, &a, err);
    if (!rc)
        rc = lineage(s, to, &b, err);
    size_t i = 0;
    int64_t split = -1; /* where they part inside a[i] and b[i] */
    while (!rc && i < a.n && i < b.n && a.v[i].lo == b.v[i].lo) {
        if (a.v[i].hi != b.v[i].hi) {
            split = a.v[i].hi < b.v[i].hi ? a.v[i].hi : b.v[i].hi;
            break;
        }
        i++;
    }
    for (size_t k = a.n; !rc && k-- > i;)
        if (spans_add(path, k == i && split >= 0 ? split : a.v[k].lo, a.v[k].hi, true))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t k = i; !rc && k < b.n; k++)
        if (spans_add(path, k == i && split >= 0 ? split : b.v[k].lo, b.v[k].hi, false))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    free(a.v);
    free(b.v);
    return rc;
}

/* The operations of one span, for reading them in either order. */
typedef struct oplist {
    store_op *v;
    size_t n, cap;
} oplist;

static int op_keep(void *ud, const store_op *o)
{
    oplist *l = ud;
    if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16))
        return RINGSIM_ENOMEM;
    store_op x = *o;
    x.type = strdup(o->type);
    x.params = strdup(o->params ? o->params : "{}");
    x.subject = x.moved_from = x.config = NULL;
    l->v[l->n++] = x;
    return !x.type || !x.params ? RINGSIM_ENOMEM : 0;
}

static void oplist_free(oplist *l)
{
    for (size_t i = 0; i < l->n; i++)
        store_op_clear(&l->v[i]);
    free(l->v);
}

/* Keys of work a composition may hold (one entry each, about 60 bytes
 * with the key): past it the two states are compared instead, which holds
 * only the page.  4M entries: ~250 MB, ~12 s of composing (bench_diff: 3
 * us an entry); the states' merge costs ~15 s per million keys stored, so
 * a way that touched more than the states hold is no cheaper.  Test hook:
 * RINGSIM_DIFF_MAX_WORK. */
#define DIFF_MAX_WORK 4000000

static int64_t max_work(void)
{
    const char *hook = getenv("RINGSIM_DIFF_MAX_WORK");
    long long v = hook ? strtoll(hook, NULL, 10) : 0;
    return v > 0 ? (int64_t)v : DIFF_MAX_WORK;
}

/* Compose the log along the path from the state after `from` to the state
 * after `to`; RINGSIM_EPARAM when it cannot say (an operation of a kind it
 * does not know lies on the way). */
static int compose_run(sim *s, int64_t from, int64_t to, compose *c, rs_error *err)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->err = err;
    spans path = {0};
    int rc = from == to ? 0 : path_of(s, from, to, &path, err);
    /* What the way holds in memory: one entry per key touched. */
    int64_t work = 0, w;
    for (size_t i = 0; !rc && i < path.n; i++)
        if (!(rc = store_ops_work(s->st, path.v[i].lo, path.v[i].hi, &w, err)))
            work += w;
    int64_t max = max_work();
    if (!rc && work > max)
        rc = rs_fail(err, RINGSIM_EPARAM,
                     "the operations in between touched %lld keys, more than %lld to hold",
                     (long long)work, (long long)max);
    for (size_t i = 0; !rc && i < path.n; i++) {
        oplist l = {0};
        const span *p = &path.v[i];
        rc = store_ops_each(s->st, p->lo, p->hi - p->lo, op_keep, &l, err);
        if (rc == RINGSIM_ENOMEM)
            rs_fail(err, rc, "out of memory");
        c->back = p->back;
        for (size_t k = 0; !rc && k < l.n; k++)
            rc = compose_op(c, &l.v[p->back ? l.n - 1 - k : k]);
        oplist_free(&l);
    }
    free(path.v);
    return rc;
}

/* ---- the answer ---- */

/* Moves per node (by name, hashed: a move each; NULL = none), for
 * moved_from and moved_to. */
typedef struct ntally {
    cset names;
    int64_t *count; /* by entry of names */
    size_t cap;
    int64_t none;
} ntally;

static int ntally_add(ntally *t, const char *name, size_t len)
{
    if (!name) {
        t->none++;
        return 0;
    }
    bool fresh;
    cent *e = cset_get(&t->names, name, len, &fresh);
    if (!e)
        return RINGSIM_ENOMEM;
    size_t i = (size_t)(e - t->names.v);
    if (i >= t->cap) {
        size_t old = t->cap;
        if (vec_reserve(&t->count, &t->cap, i + 1, sizeof *t->count, 16))
            return RINGSIM_ENOMEM;
        memset(t->count + old, 0, (t->cap - old) * sizeof *t->count);
    }
    t->count[i]++;
    return 0;
}

static void ntally_free(ntally *t)
{
    cset_free(&t->names);
    free(t->count);
    memset(t, 0, sizeof *t);
}

/* [{"node", "keys"}…], largest first, then by name (bytes), none last at
 * equal counts (as an operation's moved_from). */
static int ntally_cmp(const void *x, const void *y, void *ud)
{
    const ntally *t = ud;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int64_t ca = a == SIZE_MAX ? t->none : t->count[a], cb = b == SIZE_MAX ? t->none : t->count[b];
    if (ca != cb)
        return ca > cb ? -1 : 1;
    if (a == SIZE_MAX || b == SIZE_MAX)
        return (a == SIZE_MAX) - (b == SIZE_MAX);
    const cent *ea = &t->names.v[a], *eb = &t->names.v[b];
    return sim__cmp_bytes(cset_str(&t->names, ea), ea->len, cset_str(&t->names, eb), eb->len);
}

static json_t *ntally_json(const ntally *t)
{
    size_t n = t->names.n + (t->none > 0);
    size_t *ord = malloc((n + 1) * sizeof *ord);
    json_t *arr = ord ? json_array() : NULL;
    for (size_t i = 0; i < t->names.n; i++)
        ord[i] = i;
    if (t->none > 0)
        ord[n - 1] = SIZE_MAX;
    if (arr)
        qsort_r(ord, n, sizeof *ord, ntally_cmp, (void *)t);
    for (size_t i = 0; arr && i < n; i++) {
        size_t k = ord[i];
        const cent *e = k == SIZE_MAX ? NULL : &t->names.v[k];
        json_t *o = json_pack("{s:o, s:I}", "node",
                              e ? json_stringn(cset_str(&t->names, e), e->len) : json_null(),
                              "keys", (json_int_t)(e ? t->count[k] : t->none));
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    free(ord);
    return arr;
}

/* Moves per (from, to) pair of names (docs/api.md v4 "pairs"), exact: the
 * keys, their share of requests and their bytes.  A pair is one entry of
 * names, its bytes "F" or "N" (a name, or none) for each end, the from
 * name, a NUL (names hold no control character), the to name. */
typedef struct pstat {
    int64_t keys, bytes;
    double requests;
} pstat;
typedef struct ptally {
    cset names;
    pstat *v; /* by entry of names */
    size_t cap;
    char *buf; /* the entry being built */
    size_t bcap;
} ptally;

static void ptally_free(ptally *t)
{
    cset_free(&t->names);
    free(t->v);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

static pstat *ptally_get(ptally *t, const char *from, size_t flen, const char *to, size_t tlen)
{
    size_t n = 3 + flen + tlen;
    if (n > t->bcap) {
        char *b = realloc(t->buf, n * 2);
        if (!b)
            return NULL;
        t->buf = b;
        t->bcap = n * 2;
    }
    t->buf[0] = from ? 'F' : 'N';
    t->buf[1] = to ? 'F' : 'N';
    memcpy(t->buf + 2, from ? from : "", flen);
    t->buf[2 + flen] = '\0';
    memcpy(t->buf + 3 + flen, to ? to : "", tlen);
    bool fresh;
    cent *e = cset_get(&t->names, t->buf, n, &fresh);
    if (!e)
        return NULL;
    size_t i = (size_t)(e - t->names.v);
    if (i >= t->cap) {
        size_t old = t->cap;
        if (vec_reserve(&t->v, &t->cap, i + 1, sizeof *t->v, 16))
            return NULL;
        memset(t->v + old, 0, (t->cap - old) * sizeof *t->v);
    }
    return &t->v[i];
}

/* Largest first (keys), then by the from name and the to name (bytes). */
static int ptally_cmp(const void *x, const void *y, void *ud)
{
    const ptally *t = ud;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    if (t->v[a].keys != t->v[b].keys)
        return t->v[a].keys > t->v[b].keys ? -1 : 1;
    const cent *ea = &t->names.v[a], *eb = &t->names.v[b];
    return sim__cmp_bytes(cset_str(&t->names, ea), ea->len, cset_str(&t->names, eb), eb->len);
}

static json_t *ptally_json(const ptally *t)
{
    size_t n = t->names.n;
    size_t *ord = malloc((n + 1) * sizeof *ord);
    json_t *arr = ord ? json_array() : NULL;
    for (size_t i = 0; arr && i < n; i++)
        ord[i] = i;
    if (arr && n)
        qsort_r(ord, n, sizeof *ord, ptally_cmp, (void *)t);
    for (size_t i = 0; arr && i < n; i++) {
        const cent *e = &t->names.v[ord[i]];
        const char *b = cset_str(&t->names, e);
        size_t flen = strlen(b + 2), tlen = e->len - 3 - flen;
        const pstat *p = &t->v[ord[i]];
        json_t *o = json_pack("{s:o, s:o, s:I, s:f, s:I}", "from",
                              b[0] == 'F' ? json_stringn(b + 2, flen) : json_null(), "to",
                              b[1] == 'F' ? json_stringn(b + 3 + flen, tlen) : json_null(), "keys",
                              (json_int_t)p->keys, "requests_share", p->requests, "bytes",
                              (json_int_t)p->bytes);
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    free(ord);
    return arr;
}

/* What the answer is built from, whichever way the difference was found. */
typedef struct acc {
    sim_diff *d;
    ntally from, to;
    ptally pairs;
    sim *wl; /* the state after `to`: its workload weighs the moved keys */
    int64_t offset, limit;
    /* moves kept for the page (key order): the composition sorts first */
    rs_error *err;
} acc;

static int acc_move(acc *a, const char *k, size_t len, const char *from, size_t flen,
                    const char *to, size_t tlen)
{
    sim_diff *d = a->d;
    if (ntally_add(&a->from, from, flen) || ntally_add(&a->to, to, tlen))
        return RINGSIM_ENOMEM;
    pstat *p = ptally_get(&a->pairs, from, flen, to, tlen);
    if (!p)
        return RINGSIM_ENOMEM;
    double share = 0;
    int64_t bytes = 1;
    if (a->wl) {
        int rc = sim_key_share(a->wl, k, len, &share, a->err);
        if (!rc)
            rc = sim_key_bytes(a->wl, k, len, &bytes, a->err);
        if (rc)
            return rc;
    }
    p->keys++;
    p->requests += share;
    p->bytes += bytes;
    int64_t i = d->keys_moved++;
    if (i < a->offset || i - a->offset >= a->limit)
        return 0;
    json_t *m = json_pack("{s:s%, s:o, s:o}", "key", k, len, "from",
                          from ? json_stringn(from, flen) : json_null(), "to",
                          to ? json_stringn(to, tlen) : json_null());
    return !m || json_array_append_new(d->moves, m) ? RINGSIM_ENOMEM : 0;
}

static int cmp_ent_keys(const void *x, const void *y, void *ud)
{
    const cset *c = ud;
    const cent *a = &c->v[*(const uint32_t *)x], *b = &c->v[*(const uint32_t *)y];
    return sim__cmp_bytes(cset_str(c, a), a->len, cset_str(c, b), b->len);
}

static int cmp_names(const void *x, const void *y)
{
    const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
    return sim__cmp_bytes(json_string_value(a), json_string_length(a), json_string_value(b),
                          json_string_length(b));
}

/* A JSON list of names sorted by their bytes (n > 0 entries). */
static int sort_names(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v = malloc((n + 1) * sizeof *v);
    if (!v)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, cmp_names);
    json_array_clear(arr);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(arr, v[i]))
            rc = RINGSIM_ENOMEM;
    free(v);
    return rc;
}

/* The state after operation `at`: s itself when it is the live state,
 * else a view moved there by sim_history_at through h (valid until h
 * moves again). */
static int state_at(sim *s, sim_history *h, int64_t at, int64_t last, sim **out, rs_error *err)
{
    if (at == last && s->at_op == last) {
        *out = s;
        return 0;
    }
    return sim_history_at(s, h, at, out, err);
}

/* Whether an end must be looked up for this key: whether it is there is
 * not known, or its owner is not and it is there at both ends. */
static bool open_at_start(const cent *e)
{
    return e->s_exists == EXISTS_UNKNOWN ||
           (e->s_exists == 1 && e->s_owner == OWNER_UNKNOWN && e->e_exists != 0);
}

static bool open_at_end(const cent *e)
{
    return e->e_exists == EXISTS_UNKNOWN ||
           (e->e_exists == 1 && e->e_owner == OWNER_UNKNOWN && e->s_exists == 1);
}

/* Where the log leaves a key open (a key deleted and inserted again: its
 * owner at the start; an insert that skipped keys: whether the key was
 * there), look it up in that end's state, one lookup a key: the start's
 * first (what is found there may close the end's question).  Costs the
 * lookups and moving the views there (time travel: usually a copy of the
 * live database stepped back), not a comparison of every key.  only_live:
 * an end that is not the live state may not be looked at (RINGSIM_EPARAM). */
static int resolve(sim *s, sim_history *h, int64_t from, int64_t to, int64_t last, bool only_live,
                   compose *c, int64_t *looked, rs_error *err)
{
    sim_history other = SIM_HISTORY_INIT;
    bool used_h = false;
    int rc = 0;
    for (int end = 0; !rc && end < 2; end++) {
        sim *v = NULL;
        int64_t at = end == 0 ? from : to;
        for (size_t i = 0; !rc && i < c->keys.n; i++) {
            cent *e = &c->keys.v[i];
            if (!(end == 0 ? open_at_start(e) : open_at_end(e)))
                continue;
            if (!v && only_live && !(at == last && s->at_op == last)) {
                rc = rs_fail(err, RINGSIM_EPARAM, "the log leaves keys open at %lld", (long long)at);
                break;
            }
            if (!v && !(rc = state_at(s, used_h ? &other : h, at, last, &v, err)))
                used_h = used_h || v != s;
            if (rc)
                break;
            uint32_t pos;
            const char *node;
            size_t nlen;
            const char *k = cset_str(&c->keys, e);
            int g = sim_key_get(v, k, e->len, &pos, &node, &nlen, err);
            if (g && g != RINGSIM_ENOTFOUND) {
                rc = g;
                break;
            }
            (*looked)++;
            int32_t owner = g ? OWNER_NONE : intern(c, node);
            if (owner == -3) {
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            } else if (end == 0) {
                e->s_exists = g == 0;
                e->s_owner = owner;
            } else {
                e->e_exists = g == 0;
                e->e_owner = owner;
            }
        }
    }
    sim_history_clear(&other);
    return rc;
}

/* Compose (with one snapshot of the log for all its reads) and resolve. */
static int compose_resolved(sim *s, sim_history *h, int64_t from, int64_t to, bool only_live,
                            compose *c, int64_t *looked, rs_error *err)
{
    int64_t last = 0;
    bool own = !store_in_transaction(s->st);
    int rc = own ? store_begin_read(s->st, err) : 0;
    if (rc) {
        memset(c, 0, sizeof *c);
        return rc;
    }
    rc = store_last_op(s->st, &last, err);
    if (!rc)
        rc = compose_run(s, from, to, c, err);
    else
        memset(c, 0, sizeof *c);
    if (own)
        store_end_read(s->st);
    if (!rc)
        rc = resolve(s, h, from, to, last, only_live, c, looked, err);
    return rc;
}

int sim__compose_keys(sim *s, int64_t to, keylist *gone, keylist *fresh, rs_error *err)
{
    compose c;
    int64_t looked = 0;
    int rc = compose_resolved(s, NULL, sim_last_op(s), to, true, &c, &looked, err);
    for (size_t i = 0; !rc && i < c.keys.n; i++) {
        const cent *e = &c.keys.v[i];
        if (e->s_exists != e->e_exists &&
            sim__kl_add(e->s_exists ? gone : fresh, cset_str(&c.keys, e), e->len, 0, STORE_NO_NODE))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    compose_free(&c);
    return rc;
}

/* The difference by the log, composed along the path from `from` to
 * `to`.  RINGSIM_EPARAM when the log cannot say. */
static int diff_by_log(sim *s, sim_history *h, int64_t from, int64_t to, acc *a, rs_error *err)
{
    compose c;
    sim_diff *d = a->d;
    uint32_t *ord = NULL;
    size_t nmov = 0;
    int rc = compose_resolved(s, h, from, to, false, &c, &d->looked_up, err);
    if (!rc && c.keys.n && !(ord = malloc(c.keys.n * sizeof *ord)))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < c.keys.n; i++) {
        const cent *e = &c.keys.v[i];
        if (e->s_exists && e->e_exists) {
            if (e->s_owner != e->e_owner)
                ord[nmov++] = (uint32_t)i;
        } else if (e->e_exists) {
            d->keys_added++;
        } else if (e->s_exists) {
            d->keys_removed++;
        }
    }
    /* The moved keys weighed by the workload of the state after `to`
     * (the composition holds its own copies: h may move). */
    int64_t last = 0;
    if (!rc && nmov && !(rc = store_last_op(s->st, &last, err)))
        rc = state_at(s, h, to, last, &a->wl, err);
    if (!rc) {
        if (nmov)
            qsort_r(ord, nmov, sizeof *ord, cmp_ent_keys, &c.keys);
        for (size_t i = 0; !rc && i < nmov; i++) {
            const cent *e = &c.keys.v[ord[i]];
            int32_t f = e->s_owner, t = e->e_owner;
            const cent *fe = f >= 0 ? &c.names.v[f] : NULL, *te = t >= 0 ? &c.names.v[t] : NULL;
            rc = acc_move(a, cset_str(&c.keys, e), e->len, fe ? cset_str(&c.names, fe) : NULL,
                          fe ? fe->len : 0, te ? cset_str(&c.names, te) : NULL, te ? te->len : 0);
            if (rc == RINGSIM_ENOMEM)
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        }
    }
    for (size_t i = 0; !rc && i < c.nodes.n; i++) {
        const cent *e = &c.nodes.v[i];
        if (e->s_exists == e->e_exists)
            continue;
        json_t *l = e->e_exists ? d->nodes_added : d->nodes_removed;
        if (json_array_append_new(l, json_stringn(cset_str(&c.nodes, e), e->len)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    d->work = c.events;
    free(ord);
    compose_free(&c);
    return rc;
}

/* ---- the difference by comparing two states ---- */

typedef struct cmp_ctx {
    acc *a;
    sim *from, *to;
} cmp_ctx;

static const char *node_of(sim *v, int64_t id, size_t *len)
{
    long i = id == STORE_NO_NODE ? -1 : sim__find_node_id(&v->cur, id);
    *len = i < 0 ? 0 : v->cur.nodes[i].len;
    return i < 0 ? NULL : v->cur.nodes[i].name;
}

static int cmp_gone(void *ud, const store_key *k)
{
    (void)k;
    ((cmp_ctx *)ud)->a->d->keys_removed++;
    return 0;
}

static int cmp_fresh(void *ud, const store_key *k)
{
    (void)k;
    ((cmp_ctx *)ud)->a->d->keys_added++;
    return 0;
}

static int cmp_both(void *ud, const store_key *h, const store_key *w)
{
    cmp_ctx *x = ud;
    size_t fl, tl;
    const char *f = node_of(x->from, h->node, &fl), *t = node_of(x->to, w->node, &tl);
    if (f ? t && fl == tl && !memcmp(f, t, fl) : !t)
        return 0;
    return acc_move(x->a, h->key, h->len, f, fl, t, tl);
}

static int diff_by_states(sim *s, sim_history *h, int64_t from, int64_t to, acc *a, rs_error *err)
{
    sim_history other = SIM_HISTORY_INIT;
    sim *sf = NULL, *st = NULL;
    /* The caller's view for one end (the later: the live state when it is
     * the last), a view of its own for the other. */
    int64_t first = from > to ? from : to, second = from > to ? to : from;
    sim **s1 = from > to ? &sf : &st, **s2 = from > to ? &st : &sf;
    int rc = sim_history_at(s, h, first, s1, err);
    if (!rc)
        rc = sim_history_at(s, *s1 == s ? h : &other, second, s2, err);
    cmp_ctx x = {a, sf, st};
    a->wl = st;
    diff d = {cmp_gone, cmp_fresh, cmp_both, &x};
    if (!rc)
        rc = sim__diff_run(s, sf->st, st->st, &d, err);
    for (size_t i = 0; !rc && sf && i < sf->cur.n; i++)
        if (sim__find_node(&st->cur, sf->cur.nodes[i].name, sf->cur.nodes[i].len) < 0 &&
            json_array_append_new(a->d->nodes_removed,
                                  json_stringn(sf->cur.nodes[i].name, sf->cur.nodes[i].len)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && st && i < st->cur.n; i++)
        if (sim__find_node(&sf->cur, st->cur.nodes[i].name, st->cur.nodes[i].len) < 0 &&
            json_array_append_new(a->d->nodes_added,
                                  json_stringn(st->cur.nodes[i].name, st->cur.nodes[i].len)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (rc == RINGSIM_ENOMEM && !err->msg[0])
        rs_fail(err, rc, "out of memory");
    a->wl = NULL; /* the view goes with other */
    sim_history_clear(&other);
    return rc;
}

/* The configuration after operation `at` (0: the default), in its stored
 * form (every algorithm's values). */
static int config_after(sim *s, int64_t at, json_t **out, rs_error *err)
{
    place_config cfg;
    place_config_default(&cfg);
    *out = NULL;
    if (at > 0) {
        store_op o;
        int rc = store_op_get(s->st, at, &o, err);
        if (rc)
            return rc;
        rc = sim_op_config(&o, &cfg, err);
        store_op_clear(&o);
        if (rc)
            return rc;
    }
    *out = place_config_json(&cfg, true);
    return *out ? 0 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
}

static int diff_get(sim *s, sim_history *h, int64_t from, int64_t to, int64_t offset, int64_t limit,
                    bool force_states, sim_diff *d, rs_error *err);

void sim_diff_clear(sim_diff *d)
{
    json_decref(d->moved_from);
    json_decref(d->moved_to);
    json_decref(d->nodes_added);
    json_decref(d->nodes_removed);
    json_decref(d->moves);
    json_decref(d->pairs);
    memset(d, 0, sizeof *d);
}

static void diff_reset_counts(sim_diff *d)
{
    d->keys_moved = d->keys_added = d->keys_removed = 0;
    json_array_clear(d->moves);
    json_array_clear(d->nodes_added);
    json_array_clear(d->nodes_removed);
}

int sim_diff_get(sim *s, sim_history *h, int64_t from, int64_t to, int64_t offset, int64_t limit,
                 bool force_states, sim_diff *d, rs_error *err)
{
    sim_history local = SIM_HISTORY_INIT;
    int rc = diff_get(s, h ? h : &local, from, to, offset, limit, force_states, d, err);
    sim_history_clear(&local);
    return rc;
}

static int diff_get(sim *s, sim_history *h, int64_t from, int64_t to, int64_t offset, int64_t limit,
                    bool force_states, sim_diff *d, rs_error *err)
{
    memset(d, 0, sizeof *d);
    d->from = from;
    d->to = to;
    int64_t last = 0;
    int rc = 0;
    if (from < 0 || to < 0)
        return rs_fail(err, RINGSIM_EPARAM, "operation ids must be 0 or more");
    if ((rc = store_last_op(s->st, &last, err)))
        return rc;
    if (from > last || to > last)
        return rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found",
                       (long long)(from > last ? from : to));
    d->moves = json_array();
    d->nodes_added = json_array();
    d->nodes_removed = json_array();
    acc a = {.d = d, .offset = offset, .limit = limit, .err = err};
    json_t *cf = NULL, *ct = NULL;
    if (!d->moves || !d->nodes_added || !d->nodes_removed)
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!rc && !(rc = config_after(s, from, &cf, err)) && !(rc = config_after(s, to, &ct, err)))
        d->config_changed = !json_equal(cf, ct);
    json_decref(cf);
    json_decref(ct);
    /* The log first; the states when it cannot say. */
    rs_error e2 = {0, ""};
    d->how = "log";
    int g = RINGSIM_EPARAM;
    if (!rc && !force_states)
        g = diff_by_log(s, h, from, to, &a, &e2);
    if (!rc && g && g != RINGSIM_EPARAM)
        rc = rs_fail(err, g, "%s", e2.msg);
    if (!rc && g) {
        d->how = "states";
        snprintf(d->why, sizeof d->why, "%.159s", force_states ? "asked" : e2.msg);
        ntally_free(&a.from);
        ntally_free(&a.to);
        ptally_free(&a.pairs);
        a.wl = NULL;
        diff_reset_counts(d);
        rc = diff_by_states(s, h, from, to, &a, err);
    }
    if (!rc && (sort_names(d->nodes_added) || sort_names(d->nodes_removed) ||
                !(d->moved_from = ntally_json(&a.from)) || !(d->moved_to = ntally_json(&a.to)) ||
                !(d->pairs = ptally_json(&a.pairs))))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    d->moves_total = d->keys_moved;
    ntally_free(&a.from);
    ntally_free(&a.to);
    ptally_free(&a.pairs);
    if (rc)
        sim_diff_clear(d);
    return rc;
}
