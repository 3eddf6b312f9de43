/*
 * trace.c - the replay of a request log (see trace.h for the model, the
 * bounds and the costs).
 *
 * Nodes are counted in *slots*: one per node that served at any time of the
 * replay, in join order, the nodes a change adds after them; a slot outlives
 * its node's removal so that the answer still says what it served.  The
 * current placement's node i is slot slot_of[i].
 *
 * Fair shares change with the topology, so a node's load is measured
 * against what it should have served: for every stretch of requests
 * between two changes (and within one interval of the series), the
 * requests served times the node's fair share then (place_fair_weights);
 * load_over_fair = requests / that sum.  With no change it is version 4's
 * load / fair share.
 *
 * An engine file: it reads the simulation through sim.h, and reports
 * progress -- which may cancel, as a client that leaves does -- through
 * sim__progress (sim_int.h), as the engine's own long reads do.
 */
#include "trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "place.h"
#include "sim_int.h"

#define TRACE_PROGRESS_EVERY 65536u
#define NIL UINT32_MAX
#define HLL_P 14
#define HLL_M (1u << HLL_P)

/* ---- parsing the options ---- */

int trace_cache_parse(const char *s, uint64_t *size, bool *objects, rs_error *err)
{
    const char *p = s;
    uint64_t v = 0;
    int nd = 0;
    while (*p >= '0' && *p <= '9' && nd < 19) {
        v = v * 10 + (uint64_t)(*p++ - '0');
        nd++;
    }
    static const struct {
        const char *unit;
        uint64_t mul;
        bool obj;
    } units[] = {{"", 1, false},       {"B", 1, false},         {"k", 1000, false},
                 {"K", 1000, false},   {"M", 1000000, false},   {"G", 1000000000, false},
                 {"KiB", 1024, false}, {"MiB", 1048576, false}, {"GiB", 1073741824, false},
                 {"KB", 1000, false},  {"MB", 1000000, false},  {"GB", 1000000000, false},
                 {"obj", 1, true}};
    if (nd && (*p < '0' || *p > '9'))
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (!strcmp(p, units[i].unit) && v > 0 && v <= UINT64_MAX / units[i].mul / 2) {
                *size = v * units[i].mul;
                *objects = units[i].obj;
                return 0;
            }
    return rs_fail(err, RINGSIM_EPARAM,
                   "cache must be a size above 0 per node: bytes (1000, 64MiB, 2GB) or objects "
                   "(10000obj), not \"%.64s\"",
                   s);
}

int trace_change_parse(const char *at, const char *op, trace_change *c, rs_error *err)
{
    memset(c, 0, sizeof *c);
    if (!at || !*at)
        return rs_fail(err, RINGSIM_EPARAM, "change: AT is missing");
    if (at[0] == '@') {
        c->by_time = true;
        if (trace_parse_time(at + 1, strlen(at + 1), &c->at_time))
            return rs_fail(err, RINGSIM_EPARAM,
                           "change: \"%.64s\" is not @EPOCH-SECONDS or @RFC3339 "
                           "(@2026-12-06T12:00:00Z)",
                           at);
    } else {
        const char *p = at;
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9' && p - at < 19; p++)
            v = v * 10 + (uint64_t)(*p - '0');
        if (*p || p == at)
            return rs_fail(err, RINGSIM_EPARAM,
                           "change: \"%.64s\" is not a request number (from 0) or @TIME", at);
        c->at = v;
    }
    snprintf(c->text, sizeof c->text, "%s", op ? op : "");
    char w[4][256];
    int n = 0;
    const char *p = op ? op : "";
    while (*p && n < 4) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t l = strcspn(p, " \t");
        if (l >= sizeof w[0])
            return rs_fail(err, RINGSIM_ENAME, "change: a name is longer than 255 bytes");
        memcpy(w[n], p, l);
        w[n][l] = 0;
        n++;
        p += l;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    int i = n && !strcmp(w[0], "node");
    static const struct {
        const char *word;
        trace_op op;
    } ops[] = {{"add", TRACE_OP_ADD},   {"rm", TRACE_OP_REMOVE}, {"remove", TRACE_OP_REMOVE},
               {"down", TRACE_OP_DOWN}, {"up", TRACE_OP_UP},     {"weight", TRACE_OP_WEIGHT}};
    int found = -1;
    for (size_t k = 0; i < n && k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(w[i], ops[k].word))
            found = (int)k;
    int rest = n - i - 1;
    bool needs_w = found >= 0 && ops[found].op == TRACE_OP_WEIGHT;
    bool may_w = found >= 0 && ops[found].op == TRACE_OP_ADD;
    if (*p || found < 0 || rest < 1 || rest > 2 || (rest == 2 && !needs_w && !may_w) ||
        (needs_w && rest != 2))
        return rs_fail(err, RINGSIM_EPARAM,
                       "change: \"%.64s\" is not one of \"node add NAME [WEIGHT]\", \"node rm "
                       "NAME\", \"node down NAME\", \"node up NAME\", \"node weight NAME W\"",
                       op ? op : "");
    c->op = ops[found].op;
    size_t nl = strlen(w[i + 1]);
    int nrc = node_name_check(w[i + 1], nl, err);
    if (nrc)
        return nrc;
    memcpy(c->name, w[i + 1], nl + 1);
    c->weight = 1;
    if (rest == 2) {
        char *e;
        c->weight = strtod(w[i + 2], &e);
        if (*e || !isfinite(c->weight) || c->weight < 0 || c->weight > 1e6)
            return rs_fail(err, RINGSIM_EPARAM,
                           "change: the weight \"%.32s\" is not a number from 0 to 1000000",
                           w[i + 2]);
    }
    return 0;
}

/* ---- distinct keys: exact, then HyperLogLog ---- */

typedef struct distinct {
    uint64_t *set; /* open addressing, 0 = empty (a hash of 0 counts as 1) */
    size_t cap, n, limit;
    uint8_t *hll; /* HLL_M registers once past the limit */
} distinct;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void hll_add(uint8_t *reg, uint64_t h)
{
    h = mix(h);
    uint32_t idx = (uint32_t)(h >> (64 - HLL_P));
    uint64_t w = h << HLL_P | (1ull << (HLL_P - 1));
    uint8_t rank = (uint8_t)(__builtin_clzll(w) + 1);
    if (rank > reg[idx])
        reg[idx] = rank;
}

static double hll_count(const uint8_t *reg)
{
    double sum = 0;
    uint32_t zeros = 0;
    for (uint32_t i = 0; i < HLL_M; i++) {
        sum += ldexp(1.0, -reg[i]);
        zeros += !reg[i];
    }
    double m = HLL_M, e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && zeros)
        e = m * log(m / zeros); /* linear counting for the small range */
    return e;
}

static int distinct_add(distinct *d, uint64_t h)
{
    if (!h)
        h = 1;
    if (d->hll) {
        hll_add(d->hll, h);
        return 0;
    }
    if (2 * (d->n + 1) > d->cap) {
        if (d->n + 1 > d->limit) {
            if (!(d->hll = calloc(HLL_M, 1)))
                return RINGSIM_ENOMEM;
            for (size_t i = 0; i < d->cap; i++)
                if (d->set[i])
                    hll_add(d->hll, d->set[i]);
            hll_add(d->hll, h);
            free(d->set);
            d->set = NULL;
            return 0;
        }
        size_t nc = d->cap ? d->cap * 2 : 64;
        uint64_t *ns = calloc(nc, sizeof *ns);
        if (!ns)
            return RINGSIM_ENOMEM;
        for (size_t i = 0; i < d->cap; i++)
            if (d->set[i]) {
                size_t j = mix(d->set[i]) & (nc - 1);
                while (ns[j])
                    j = (j + 1) & (nc - 1);
                ns[j] = d->set[i];
            }
        free(d->set);
        d->set = ns;
        d->cap = nc;
    }
    size_t j = mix(h) & (d->cap - 1);
    while (d->set[j]) {
        if (d->set[j] == h)
            return 0;
        j = (j + 1) & (d->cap - 1);
    }
    d->set[j] = h;
    d->n++;
    return 0;
}

static uint64_t distinct_count(const distinct *d)
{
    return d->hll ? (uint64_t)llround(hll_count(d->hll)) : d->n;
}

static void distinct_clear(distinct *d)
{
    free(d->set);
    free(d->hll);
    memset(d, 0, sizeof *d);
}

/* ---- a node's cache: LRU over an array of entries ---- */

typedef struct lru_ent {
    uint64_t h;
    uint32_t prev, next, hnext;
    uint32_t size;
} lru_ent;

typedef struct lru {
    lru_ent *e;
    size_t n, cap; /* entries allocated (live + free) */
    uint32_t *bucket;
    size_t nb;
    uint32_t head, tail, freel;
    uint64_t used;
    size_t live;
} lru;

static void lru_init(lru *c)
{
    memset(c, 0, sizeof *c);
    c->head = c->tail = c->freel = NIL;
}

static void lru_clear(lru *c)
{
    free(c->e);
    free(c->bucket);
    lru_init(c);
}

static void lru_unlink(lru *c, uint32_t i)
{
    lru_ent *x = &c->e[i];
    if (x->prev != NIL)
        c->e[x->prev].next = x->next;
    else
        c->head = x->next;
    if (x->next != NIL)
        c->e[x->next].prev = x->prev;
    else
        c->tail = x->prev;
}

static void lru_push_front(lru *c, uint32_t i)
{
    lru_ent *x = &c->e[i];
    x->prev = NIL;
    x->next = c->head;
    if (c->head != NIL)
        c->e[c->head].prev = i;
    c->head = i;
    if (c->tail == NIL)
        c->tail = i;
}

static int lru_rehash(lru *c, size_t nb)
{
    uint32_t *b = malloc(nb * sizeof *b);
    if (!b)
        return RINGSIM_ENOMEM;
    memset(b, 0xff, nb * sizeof *b);
    for (uint32_t i = c->head; i != NIL; i = c->e[i].next) {
        size_t k = mix(c->e[i].h) & (nb - 1);
        c->e[i].hnext = b[k];
        b[k] = i;
    }
    free(c->bucket);
    c->bucket = b;
    c->nb = nb;
    return 0;
}

static void lru_evict(lru *c)
{
    uint32_t i = c->tail;
    lru_unlink(c, i);
    uint32_t *pp = &c->bucket[mix(c->e[i].h) & (c->nb - 1)];
    while (*pp != i)
        pp = &c->e[*pp].hnext;
    *pp = c->e[i].hnext;
    c->used -= c->e[i].size;
    c->live--;
    c->e[i].next = c->freel;
    c->freel = i;
}

/* A request for h of size bytes: 1 hit, 0 miss (now cached when it fits),
 * or RINGSIM_ENOMEM.  *total counts the live objects of every cache. */
static int lru_get(lru *c, uint64_t h, uint32_t size, uint64_t cap, size_t *total)
{
    if (c->nb) {
        for (uint32_t i = c->bucket[mix(h) & (c->nb - 1)]; i != NIL; i = c->e[i].hnext)
            if (c->e[i].h == h) {
                lru_unlink(c, i);
                lru_push_front(c, i);
                return 1;
            }
    }
    if (size > cap)
        return 0;
    while (c->used + size > cap)
        lru_evict(c), (*total)--;
    if (*total >= TRACE_CACHE_MAX_OBJECTS)
        return RINGSIM_EFULL;
    uint32_t i;
    if (c->freel != NIL) {
        i = c->freel;
        c->freel = c->e[i].next;
    } else {
        if (c->n == c->cap) {
            size_t nc = c->cap ? c->cap * 2 : 256;
            lru_ent *ne = realloc(c->e, nc * sizeof *ne);
            if (!ne)
                return RINGSIM_ENOMEM;
            c->e = ne;
            c->cap = nc;
        }
        i = (uint32_t)c->n++;
    }
    c->e[i].h = h;
    c->e[i].size = size;
    lru_push_front(c, i);
    c->used += size;
    c->live++;
    (*total)++;
    if (2 * c->live > c->nb) {
        if (lru_rehash(c, c->nb ? c->nb * 2 : 512))
            return RINGSIM_ENOMEM;
    } else {
        size_t k = mix(h) & (c->nb - 1);
        c->e[i].hnext = c->bucket[k];
        c->bucket[k] = i;
    }
    return 0;
}

/* ---- the replay's state ---- */

typedef struct slot {
    char *name;
    uint64_t requests, bytes, hits;
    double expected; /* requests it should have served (fair shares) */
    int64_t sec;     /* the log's current second, its requests */
    uint64_t in_sec, peak;
    distinct keys;
    lru cache;
    bool removed, added;
} slot;

typedef struct point {
    uint64_t requests, unserved, hits, bytes;
} point;

typedef struct replay {
    sim *s;
    hasher *h;
    const trace_params *p;
    place_config cfg;
    /* the current topology */
    place_node *nodes;
    size_t n;
    int64_t next_id;
    placement *own; /* NULL while the simulation's own is used */
    const placement *pl;
    double *fair; /* n fair shares of the current placement */
    size_t *slot_of;
    /* slots */
    slot *sl;
    size_t nsl, capsl;
    size_t cached; /* objects in every cache */
    /* the stretch since the last flush: requests served by slot */
    uint64_t seg_served;
    /* series */
    bool by_time, fixed;
    double x0, width;
    bool started;
    size_t npts, cappts, nalloc_sl;
    point *pts;
    uint64_t *pt_node;  /* cappts x capsl requests */
    uint64_t *pt_hits;  /* cappts x capsl */
    double *pt_expect;  /* cappts x capsl */
    uint64_t *seg_node; /* capsl: requests of the current point since the last flush */
    size_t cur_pt;
    uint64_t seg_pt_served;
    /* totals */
    uint64_t requests, unserved, bytes, hits;
    distinct all;
    double tmin, tmax;
    bool any_time;
    /* changes */
    bool *applied;
    uint64_t *applied_at;
    double *applied_time;
} replay;

static int add_slot(replay *R, const char *name, rs_error *err)
{
    if (R->nsl == R->capsl)
        return rs_fail(err, RINGSIM_EINTERNAL, "too many nodes for the replay");
    slot *x = &R->sl[R->nsl];
    memset(x, 0, sizeof *x);
    if (!(x->name = strdup(name)))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    x->sec = INT64_MIN;
    x->keys.limit = TRACE_DISTINCT_EXACT;
    lru_init(&x->cache);
    R->nsl++;
    return 0;
}

/* The fair shares of the current placement, and each node's slot. */
static int take_layout(replay *R, rs_error *err)
{
    free(R->fair);
    free(R->slot_of);
    R->fair = calloc(R->n + 1, sizeof *R->fair);
    R->slot_of = calloc(R->n + 1, sizeof *R->slot_of);
    if (!R->fair || !R->slot_of)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    place_fair_weights(R->pl, R->fair, R->n);
    double sum = 0;
    for (size_t i = 0; i < R->n; i++)
        sum += R->fair[i];
    for (size_t i = 0; i < R->n; i++) {
        R->fair[i] = sum > 0 ? R->fair[i] / sum : 0;
        for (size_t k = 0; k < R->nsl; k++)
            if (!R->sl[k].removed && !strcmp(R->sl[k].name, R->nodes[i].name))
                R->slot_of[i] = k;
    }
    return 0;
}

/* What the requests since the last flush should have given each node, by
 * the fair shares they were served under. */
static void flush_fair(replay *R)
{
    for (size_t i = 0; i < R->n; i++) {
        size_t k = R->slot_of[i];
        R->sl[k].expected += (double)R->seg_served * R->fair[i];
        if (R->npts)
            R->pt_expect[R->cur_pt * R->capsl + k] += (double)R->seg_pt_served * R->fair[i];
    }
    R->seg_served = 0;
    R->seg_pt_served = 0;
}

/* Merge the fine points two by two: the interval doubles. */
static void halve_points(replay *R)
{
    size_t m = (R->npts + 1) / 2, c = R->capsl;
    for (size_t i = 0; i < m; i++) {
        point a = R->pts[2 * i], b = 2 * i + 1 < R->npts ? R->pts[2 * i + 1] : (point){0};
        R->pts[i] = (point){a.requests + b.requests, a.unserved + b.unserved, a.hits + b.hits,
                            a.bytes + b.bytes};
        for (size_t k = 0; k < c; k++) {
            bool two = 2 * i + 1 < R->npts;
            R->pt_node[i * c + k] = R->pt_node[2 * i * c + k] +
                                    (two ? R->pt_node[(2 * i + 1) * c + k] : 0);
            R->pt_hits[i * c + k] = R->pt_hits[2 * i * c + k] +
                                    (two ? R->pt_hits[(2 * i + 1) * c + k] : 0);
            R->pt_expect[i * c + k] = R->pt_expect[2 * i * c + k] +
                                      (two ? R->pt_expect[(2 * i + 1) * c + k] : 0);
        }
    }
    memset(R->pts + m, 0, (R->cappts - m) * sizeof *R->pts);
    memset(R->pt_node + m * c, 0, (R->cappts - m) * c * sizeof *R->pt_node);
    memset(R->pt_hits + m * c, 0, (R->cappts - m) * c * sizeof *R->pt_hits);
    memset(R->pt_expect + m * c, 0, (R->cappts - m) * c * sizeof *R->pt_expect);
    R->npts = m;
    R->width *= 2;
}

/* The point a request at x falls in (made room for). */
static size_t point_of(replay *R, double x)
{
    if (!R->started) {
        R->started = true;
        R->x0 = x;
        R->npts = 1;
    }
    double d = x < R->x0 ? 0 : (x - R->x0) / R->width;
    while (d >= (double)R->cappts) {
        flush_fair(R);
        halve_points(R);
        R->cur_pt = (size_t)((double)R->cur_pt / 2);
        d = x < R->x0 ? 0 : (x - R->x0) / R->width;
    }
    size_t b = (size_t)d;
    if (b + 1 > R->npts)
        R->npts = b + 1;
    return b;
}

/* ---- changes ---- */

static long find_node(const replay *R, const char *name)
{
    for (size_t i = 0; i < R->n; i++)
        if (!strcmp(R->nodes[i].name, name))
            return (long)i;
    return -1;
}

static int apply_change(replay *R, size_t ci, rs_error *err)
{
    const trace_change *c = &R->p->changes[ci];
    long at = find_node(R, c->name);
    if (c->op == TRACE_OP_ADD ? at >= 0 : at < 0)
        return rs_fail(err, c->op == TRACE_OP_ADD ? RINGSIM_ECONFLICT : RINGSIM_ENOTFOUND,
                       "change %zu (%.80s): %.64s %s", ci + 1, c->text, c->name,
                       c->op == TRACE_OP_ADD ? "is already a node" : "is not a node");
    flush_fair(R);
    place_node *nn = malloc((R->n + 1) * sizeof *nn);
    if (!nn)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    memcpy(nn, R->nodes, R->n * sizeof *nn);
    size_t n = R->n;
    size_t slot_gone = (size_t)-1;
    int rc = 0;
    switch (c->op) {
    case TRACE_OP_ADD:
        if ((rc = add_slot(R, c->name, err)))
            goto fail;
        R->sl[R->nsl - 1].added = true;
        nn[n] = (place_node){.id = R->next_id++,
                             .name = R->sl[R->nsl - 1].name,
                             .len = strlen(c->name),
                             .weight = c->weight};
        n++;
        break;
    case TRACE_OP_REMOVE:
        slot_gone = R->slot_of[at];
        memmove(nn + at, nn + at + 1, (n - (size_t)at - 1) * sizeof *nn);
        n--;
        break;
    case TRACE_OP_DOWN:
        nn[at].down = true;
        /* a server that goes down comes back cold */
        R->cached -= R->sl[R->slot_of[at]].cache.live;
        lru_clear(&R->sl[R->slot_of[at]].cache);
        break;
    case TRACE_OP_UP:
        nn[at].down = false;
        break;
    case TRACE_OP_WEIGHT:
        nn[at].weight = c->weight;
        break;
    }
    if ((rc = place_nodes_check(&R->cfg, nn, n, err)))
        goto fail;
    placement *np;
    if ((rc = place_build(&np, R->h, &R->cfg, nn, n, R->pl, NULL, err)))
        goto fail;
    place_free(R->own);
    R->own = np;
    R->pl = np;
    free(R->nodes);
    R->nodes = nn;
    R->n = n;
    if (slot_gone != (size_t)-1) {
        R->sl[slot_gone].removed = true;
        R->cached -= R->sl[slot_gone].cache.live;
        lru_clear(&R->sl[slot_gone].cache);
    }
    return take_layout(R, err);
fail:
    free(nn);
    if (rc && !err->msg[0])
        rs_fail(err, rc, "change %zu (%.80s) failed", ci + 1, c->text);
    return rc;
}

/* ---- the answer ---- */

static json_t *num_or_null(bool ok, double v)
{
    return ok && isfinite(v) ? json_real(v) : json_null();
}

static json_t *answer(replay *R, trace_reader *r)
{
    const trace_params *p = R->p;
    json_t *j = json_object(), *nodes = json_array(), *changes = json_array();
    trace_format f = trace_reader_format(r);
    json_object_set_new(j, "format", json_string(trace_format_name(f)));
    json_object_set_new(j, "compression",
                        json_string(trace_compression_name(trace_reader_compression(r))));
    json_object_set_new(j, "algorithm", json_string(R->cfg.algorithm));
    json_object_set_new(j, "note",
                        f == TRACE_ORACLE
                            ? json_string("oracle-general traces hold numeric ids, not the "
                                          "original keys: each key is the id in decimal, so the "
                                          "placement is not the one a real client's keys would get")
                            : json_null());
    json_object_set_new(j, "lines", json_integer((json_int_t)trace_reader_lines(r)));
    json_object_set_new(j, "requests", json_integer((json_int_t)R->requests));
    json_object_set_new(j, "unserved", json_integer((json_int_t)R->unserved));
    json_object_set_new(j, "bytes", json_integer((json_int_t)R->bytes));
    json_object_set_new(j, "bad_lines", json_integer((json_int_t)trace_reader_bad_lines(r)));
    json_object_set_new(j, "first_bad_line",
                        trace_reader_first_bad(r)
                            ? json_integer((json_int_t)trace_reader_first_bad(r))
                            : json_null());
    json_object_set_new(j, "unique_keys", json_integer((json_int_t)distinct_count(&R->all)));
    json_object_set_new(j, "unique_keys_estimated", json_boolean(R->all.hll != NULL));
    json_object_set_new(j, "start", num_or_null(R->any_time, R->tmin));
    json_object_set_new(j, "end", num_or_null(R->any_time, R->tmax));
    double mom = 0;
    bool any = false;
    for (size_t k = 0; k < R->nsl; k++) {
        slot *x = &R->sl[k];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(x->name));
        long at = x->removed ? -1 : find_node(R, x->name);
        const char *state = x->removed ? "removed" : at >= 0 && R->nodes[at].down ? "down" : "up";
        json_object_set_new(o, "state", json_string(state));
        json_object_set_new(o, "added", json_boolean(x->added));
        json_object_set_new(o, "requests", json_integer((json_int_t)x->requests));
        json_object_set_new(o, "bytes", json_integer((json_int_t)x->bytes));
        json_object_set_new(o, "unique_keys", json_integer((json_int_t)distinct_count(&x->keys)));
        json_object_set_new(o, "peak_rate",
                            R->any_time ? json_integer((json_int_t)x->peak) : json_null());
        json_object_set_new(o, "fair_share", num_or_null(at >= 0, at >= 0 ? R->fair[at] : 0));
        double lof = x->expected > 0 ? (double)x->requests / x->expected : NAN;
        json_object_set_new(o, "load_over_fair", num_or_null(x->expected > 0, lof));
        if (x->expected > 0 && (!any || lof > mom)) {
            mom = lof;
            any = true;
        }
        if (p->cache) {
            json_object_set_new(o, "hits", json_integer((json_int_t)x->hits));
            json_object_set_new(o, "hit_ratio",
                                num_or_null(x->requests > 0, (double)x->hits / (double)x->requests));
        }
        json_array_append_new(nodes, o);
    }
    json_object_set_new(j, "max_over_mean", num_or_null(any, mom));
    if (p->cache) {
        json_t *c = json_object();
        json_object_set_new(c, "size", json_integer((json_int_t)p->cache));
        json_object_set_new(c, "unit", json_string(p->cache_objects ? "objects" : "bytes"));
        json_object_set_new(j, "cache", c);
        json_object_set_new(j, "hits", json_integer((json_int_t)R->hits));
        json_object_set_new(j, "hit_ratio",
                            num_or_null(R->requests > R->unserved,
                                        (double)R->hits / (double)(R->requests - R->unserved)));
    } else {
        json_object_set_new(j, "cache", json_null());
    }
    for (size_t i = 0; i < p->nchanges; i++) {
        const trace_change *c = &p->changes[i];
        json_t *o = json_object();
        json_object_set_new(o, "op", json_string(c->text));
        json_object_set_new(o, "at", c->by_time ? json_null() : json_integer((json_int_t)c->at));
        json_object_set_new(o, "at_time", c->by_time ? json_real(c->at_time) : json_null());
        json_object_set_new(o, "applied", json_boolean(R->applied[i]));
        json_object_set_new(
            o, "request", R->applied[i] ? json_integer((json_int_t)R->applied_at[i]) : json_null());
        json_object_set_new(
            o, "time", num_or_null(R->applied[i] && !isnan(R->applied_time[i]), R->applied_time[i]));
        json_array_append_new(changes, o);
    }
    json_object_set_new(j, "nodes", nodes);
    json_object_set_new(j, "changes", changes);
    /* the series: the fine points grouped by the interval asked for, or
     * into about 100 */
    size_t group = 1;
    if (!R->fixed && R->npts > 100)
        group = (R->npts + 99) / 100;
    json_t *ser = json_object(), *pts = json_array();
    json_object_set_new(ser, "by", json_string(R->by_time ? "time" : "request"));
    json_object_set_new(ser, "interval", json_real(R->width * (double)group));
    json_object_set_new(ser, "start", R->started ? json_real(R->x0) : json_null());
    size_t c = R->capsl;
    for (size_t b = 0; b < R->npts; b += group) {
        point t = {0};
        json_t *o = json_object(), *pn = json_array(), *ph = json_array();
        double m = 0;
        bool mm = false;
        for (size_t k = 0; k < R->nsl; k++) {
            uint64_t rq = 0, hh = 0;
            double ex = 0;
            for (size_t q = b; q < b + group && q < R->npts; q++) {
                rq += R->pt_node[q * c + k];
                hh += R->pt_hits[q * c + k];
                ex += R->pt_expect[q * c + k];
            }
            json_array_append_new(pn, json_integer((json_int_t)rq));
            if (p->cache)
                json_array_append_new(ph, json_integer((json_int_t)hh));
            if (ex > 0 && (!mm || (double)rq / ex > m)) {
                m = (double)rq / ex;
                mm = true;
            }
        }
        for (size_t q = b; q < b + group && q < R->npts; q++) {
            t.requests += R->pts[q].requests;
            t.unserved += R->pts[q].unserved;
            t.hits += R->pts[q].hits;
            t.bytes += R->pts[q].bytes;
        }
        json_object_set_new(o, "start", json_real(R->x0 + (double)b * R->width));
        json_object_set_new(o, "requests", json_integer((json_int_t)t.requests));
        json_object_set_new(o, "unserved", json_integer((json_int_t)t.unserved));
        json_object_set_new(o, "bytes", json_integer((json_int_t)t.bytes));
        json_object_set_new(o, "max_over_mean", num_or_null(mm, m));
        json_object_set_new(o, "nodes", pn);
        if (p->cache) {
            json_object_set_new(o, "hits", json_integer((json_int_t)t.hits));
            json_object_set_new(o, "hit_ratio",
                                num_or_null(t.requests > t.unserved,
                                            (double)t.hits / (double)(t.requests - t.unserved)));
            json_object_set_new(o, "node_hits", ph);
        } else {
            json_decref(ph);
        }
        json_array_append_new(pts, o);
    }
    json_object_set_new(ser, "points", pts);
    json_object_set_new(j, "series", ser);
    return j;
}

/* ---- the replay ---- */

static void replay_clear(replay *R)
{
    for (size_t k = 0; k < R->nsl; k++) {
        free(R->sl[k].name);
        distinct_clear(&R->sl[k].keys);
        lru_clear(&R->sl[k].cache);
    }
    free(R->sl);
    distinct_clear(&R->all);
    place_free(R->own);
    free(R->nodes);
    free(R->fair);
    free(R->slot_of);
    free(R->pts);
    free(R->pt_node);
    free(R->pt_hits);
    free(R->pt_expect);
    free(R->applied);
    free(R->applied_at);
    free(R->applied_time);
}

static bool due(const trace_change *c, uint64_t index, const trace_rec *rec)
{
    return c->by_time ? rec->has_time && rec->time >= c->at_time : index >= c->at;
}

int trace_run(sim *s, trace_reader *r, const trace_params *p, trace_progress_fn fn, void *ud,
              json_t **out, rs_error *err)
{
    *out = NULL;
    if (p->nchanges > TRACE_MAX_CHANGES)
        return rs_fail(err, RINGSIM_EPARAM, "at most %d changes in one replay", TRACE_MAX_CHANGES);
    if (p->interval < 0 || !isfinite(p->interval))
        return rs_fail(err, RINGSIM_EPARAM, "interval must be a number above 0");
    size_t n = sim_node_count(s);
    if (!n)
        return rs_fail(err, RINGSIM_EPARAM, "a replay needs a node to send requests to: add one");
    bool has_time = trace_reader_has_time(r);
    for (size_t i = 0; i < p->nchanges; i++)
        if (p->changes[i].by_time && !has_time)
            return rs_fail(err, RINGSIM_EPARAM,
                           "change %zu is at a time, but this %s log has no clock: give a request "
                           "number",
                           i + 1, trace_format_name(trace_reader_format(r)));
    replay R;
    memset(&R, 0, sizeof R);
    R.s = s;
    R.h = sim_hasher(s);
    R.p = p;
    R.cfg = *sim_config(s);
    R.pl = sim_placement(s);
    R.n = n;
    R.by_time = has_time;
    R.fixed = p->interval > 0;
    R.width = R.fixed ? p->interval : 1;
    R.cappts = R.fixed ? TRACE_SERIES_MAX : TRACE_SERIES_FINE;
    R.all.limit = TRACE_DISTINCT_EXACT_ALL;
    size_t adds = 0;
    for (size_t i = 0; i < p->nchanges; i++)
        adds += p->changes[i].op == TRACE_OP_ADD;
    R.capsl = n + adds;
    int rc = 0;
    R.nodes = malloc(n * sizeof *R.nodes);
    R.sl = calloc(R.capsl, sizeof *R.sl);
    R.applied = calloc(p->nchanges + 1, sizeof *R.applied);
    R.applied_at = calloc(p->nchanges + 1, sizeof *R.applied_at);
    R.applied_time = calloc(p->nchanges + 1, sizeof *R.applied_time);
    if ((double)R.cappts * (double)R.capsl > 2e7) /* fixed intervals x many nodes */
        R.cappts = (size_t)(2e7 / (double)R.capsl) + 1;
    R.pts = calloc(R.cappts, sizeof *R.pts);
    R.pt_node = calloc(R.cappts * R.capsl, sizeof *R.pt_node);
    R.pt_hits = calloc(R.cappts * R.capsl, sizeof *R.pt_hits);
    R.pt_expect = calloc(R.cappts * R.capsl, sizeof *R.pt_expect);
    if (!R.nodes || !R.sl || !R.applied || !R.applied_at || !R.applied_time || !R.pts ||
        !R.pt_node || !R.pt_hits || !R.pt_expect) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(R.nodes, sim_place_nodes(s), n * sizeof *R.nodes);
    for (size_t i = 0; i < n; i++) {
        if (R.nodes[i].id >= R.next_id)
            R.next_id = R.nodes[i].id + 1;
        if ((rc = add_slot(&R, R.nodes[i].name, err)))
            goto done;
    }
    if ((rc = take_layout(&R, err)))
        goto done;
    size_t pending = p->nchanges;
    trace_rec rec;
    place_key_info k;
    uint64_t cap = p->cache;
    while ((rc = trace_reader_next(r, &rec, err)) == 0) {
        if (pending)
            for (size_t i = 0; i < p->nchanges; i++)
                if (!R.applied[i] && due(&p->changes[i], R.requests, &rec)) {
                    if ((rc = apply_change(&R, i, err)))
                        goto done;
                    R.applied[i] = true;
                    R.applied_at[i] = R.requests;
                    R.applied_time[i] = rec.has_time ? rec.time : NAN;
                    pending--;
                }
        double x = R.by_time ? (rec.has_time ? rec.time : R.x0) : (double)R.requests;
        size_t b = point_of(&R, x);
        if (b != R.cur_pt) {
            flush_fair(&R);
            R.cur_pt = b;
        }
        if (rec.has_time) {
            if (!R.any_time || rec.time < R.tmin)
                R.tmin = rec.time;
            if (!R.any_time || rec.time > R.tmax)
                R.tmax = rec.time;
            R.any_time = true;
        }
        R.requests++;
        R.bytes += rec.bytes;
        point *pt = &R.pts[b];
        pt->requests++;
        pt->bytes += rec.bytes;
        place_key(R.pl, R.h, rec.key, rec.len, &k);
        if (distinct_add(&R.all, k.sha64))
            goto nomem;
        if (k.served < 0) {
            R.unserved++;
            pt->unserved++;
        } else {
            size_t si = R.slot_of[k.served];
            slot *x = &R.sl[si];
            x->requests++;
            x->bytes += rec.bytes;
            R.seg_served++;
            R.seg_pt_served++;
            R.pt_node[b * R.capsl + si]++;
            if (distinct_add(&x->keys, k.sha64))
                goto nomem;
            if (rec.has_time) {
                int64_t sec = (int64_t)floor(rec.time);
                if (sec != x->sec) {
                    x->sec = sec;
                    x->in_sec = 0;
                }
                if (++x->in_sec > x->peak)
                    x->peak = x->in_sec;
            }
            if (cap) {
                uint64_t sz = p->cache_objects ? 1 : rec.bytes ? rec.bytes : 1;
                int hit = lru_get(&x->cache, k.sha64, sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz,
                                  cap, &R.cached);
                if (hit == RINGSIM_EFULL) {
                    rc = rs_fail(err, RINGSIM_EPARAM,
                                 "the caches would hold more than %u objects at once: give a "
                                 "smaller --cache",
                                 TRACE_CACHE_MAX_OBJECTS);
                    goto done;
                }
                if (hit < 0)
                    goto nomem;
                if (hit) {
                    x->hits++;
                    R.hits++;
                    pt->hits++;
                    R.pt_hits[b * R.capsl + si]++;
                }
            }
        }
        rs_error pe;
        if (R.requests % TRACE_PROGRESS_EVERY == 0 &&
            (fn ? fn(ud, trace_reader_bytes_in(r), R.requests)
                : sim__progress(
                      s, "trace", trace_reader_bytes_in(r),
                      p->size > trace_reader_bytes_in(r) ? p->size : trace_reader_bytes_in(r), &pe))) {
            rc = rs_fail(err, RINGSIM_ECANCELED, "the replay was cancelled");
            goto done;
        }
    }
    if (rc < 0)
        goto done;
    flush_fair(&R);
    if (fn)
        fn(ud, trace_reader_bytes_in(r), R.requests);
    if (!(*out = answer(&R, r)))
        goto nomem;
    rc = 0;
    goto done;
nomem:
    rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
done:
    replay_clear(&R);
    return rc;
}
