/*
 * compare.c - the current nodes and keys placed by several algorithms side
 * by side, recorded nowhere (see compare.h).
 *
 * The keys are read once into one buffer (an even sample when there are
 * more than max_keys: every step-th key in key order, and the answer says
 * so); each configuration builds a placement over the current nodes as a
 * fresh switch would (stateful layouts start as the system starts them),
 * places the sample, and builds the placements "one node more"
 * (compare-probe) and "one node less" (for up to COMPARE_REMOVALS nodes
 * spread over the join order, or none where a leave moves only the
 * leaver's keys: the mean over every node is then counted exactly) from
 * it, the way the engine would evolve them.  Counts from a sample are
 * scaled to the whole key set.
 * Cost: (2 + removals) x sample lookups per configuration.
 */
#define _GNU_SOURCE
#include "compare.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vec.h"

#define COMPARE_REMOVALS 16

typedef struct sample {
    char *buf;
    size_t used, cap;
    size_t *off, *len;
    size_t n, ncap;
    uint64_t seen, step;
    double *w;   /* each sampled key's share of requests (sim_key_share) */
    double wsum; /* theirs in all: 1 when every key is sampled */
    int64_t *b;  /* each sampled key's size in bytes (sim_key_bytes) */
} sample;

static int take(void *ud, const char *key, size_t len)
{
    sample *sm = ud;
    if (sm->seen++ % sm->step)
        return 0;
    if (len > SIZE_MAX - sm->used || vec_reserve(&sm->buf, &sm->cap, sm->used + len, 1, 1 << 16))
        return RINGSIM_ENOMEM;
    if (sm->n == sm->ncap) {
        size_t cap;
        if (vec_next_cap(sm->ncap, sm->n + 1, 1024, &cap) ||
            vec_realloc(&sm->off, cap, sizeof *sm->off) ||
            vec_realloc(&sm->len, cap, sizeof *sm->len))
            return RINGSIM_ENOMEM;
        sm->ncap = cap;
    }
    memcpy(sm->buf + sm->used, key, len);
    sm->off[sm->n] = sm->used;
    sm->len[sm->n++] = len;
    sm->used += len;
    return 0;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Owners (node indexes) of every sampled key under p into own[]. */
static void place_all(const placement *p, hasher *h, const sample *sm, long *own)
{
    for (size_t i = 0; i < sm->n; i++) {
        place_key_info k;
        place_key(p, h, sm->buf + sm->off[i], sm->len[i], &k);
        own[i] = k.served; /* who serves it (docs/api.md v4): its owner while all are up */
    }
}

/* How many sampled keys change owner between a (owners own_a over nodes
 * ids_a) and placement b over ids_b; *requests their share of requests,
 * *bytes their sizes (of the sample: the caller scales). */
static uint64_t count_moves(const placement *b, hasher *h, const sample *sm, const long *own_a,
                            const int64_t *ids_a, const int64_t *ids_b, long *scratch,
                            double *requests, double *bytes)
{
    place_all(b, h, sm, scratch);
    uint64_t moved = 0;
    double req = 0, c = 0; /* Neumaier's sum of the moved keys' shares */
    *bytes = 0;
    for (size_t i = 0; i < sm->n; i++) {
        int64_t x = own_a[i] < 0 ? -1 : ids_a[own_a[i]];
        int64_t y = scratch[i] < 0 ? -1 : ids_b[scratch[i]];
        moved += x != y;
        if (x != y && sm->b)
            *bytes += (double)sm->b[i];
        if (x != y && sm->w) {
            double t = req + sm->w[i];
            c += fabs(req) >= fabs(sm->w[i]) ? (req - t) + sm->w[i] : (sm->w[i] - t) + req;
            req = t;
        }
    }
    /* A sample stands for all keys: its shares are scaled to sum to 1. */
    *requests = sm->wsum > 0 ? (req + c) / sm->wsum : 0;
    return moved;
}

/* The key statistics of GET /api/stats (docs/api.md v4): counts over the
 * nodes that can take keys (fair-share weights w > 0), balance against
 * their fair shares (sim_balance), `unav` keys nobody serves. */
static void stats_of(const int64_t *count, const double *w, size_t n, int64_t unav, sim_stats *st)
{
    memset(st, 0, sizeof *st);
    st->nodes = (int64_t)n;
    st->unavailable = unav;
    double sum = 0, esum = 0, sq = 0;
    int64_t m = 0;
    st->min = INT64_MAX;
    double *load = malloc((n + 1) * sizeof *load);
    for (size_t i = 0; i < n; i++) {
        sum += (double)count[i];
        if (load)
            load[i] = (double)count[i];
        if (!(w[i] > 0))
            continue;
        m++;
        esum += (double)count[i];
        st->min = count[i] < st->min ? count[i] : st->min;
        st->max = count[i] > st->max ? count[i] : st->max;
    }
    st->keys = (int64_t)sum + unav;
    st->fair = m;
    if (!m) {
        st->min = 0;
        free(load);
        return;
    }
    st->mean = esum / (double)m;
    for (size_t i = 0; i < n; i++)
        if (w[i] > 0)
            sq += ((double)count[i] - st->mean) * ((double)count[i] - st->mean);
    st->stddev = sqrt(sq / (double)m);
    if (load) {
        sim_balance(load, w, n, &st->max_over_mean, &st->cv);
    } else {
        st->cv = st->mean > 0 ? st->stddev / st->mean : 0;
        st->max_over_mean = st->mean > 0 ? (double)st->max / st->mean : 0;
    }
    free(load);
}

/* max/mean and cv of the nodes' shares of requests under this placement
 * (the sample's shares scaled to sum to 1) against their fair shares, as
 * GET /api/stats gives them; the unserved keys' share of requests and
 * bytes into r. */
static void requests_of(const sample *sm, const long *own, const double *w, size_t n, double scale,
                        compare_result *r)
{
    r->req_max_over_mean = r->req_cv = 0;
    r->unav_requests = 0;
    r->unav_bytes = 0;
    for (size_t i = 0; i < sm->n; i++)
        if (own[i] < 0 && sm->b)
            r->unav_bytes += (double)sm->b[i];
    r->unav_bytes *= scale;
    double *load = n && sm->w ? calloc(n, sizeof *load) : NULL;
    if (!load || !(sm->wsum > 0)) {
        free(load);
        return;
    }
    double served = 0;
    for (size_t i = 0; i < sm->n; i++)
        if (own[i] >= 0) {
            load[own[i]] += sm->w[i] / sm->wsum;
            served += sm->w[i] / sm->wsum;
        }
    bool any = false;
    for (size_t i = 0; i < sm->n && !any; i++)
        any = own[i] < 0;
    r->unav_requests = any && served < 1 ? 1 - served : 0;
    sim_balance(load, w, n, &r->req_max_over_mean, &r->req_cv);
    free(load);
}

static void one(sim *s, const sample *sm, double scale, compare_result *r, long *own, long *scratch,
                int64_t *count)
{
    hasher *h = sim_hasher(s);
    size_t n = sim_node_count(s);
    const place_node *nodes = sim_place_nodes(s);
    placement *p = NULL;
    /* The configuration in use evolves from the layout in use, so that a
     * layout with a history (Redis's slots, MementoHash's removed buckets,
     * kept tokens) answers as GET /api/stats and a preview do; any other
     * starts as the system starts it. */
    const placement *from = place_config_equal(&r->cfg, sim_config(s)) ? sim_placement(s) : NULL;
    r->rc = place_build(&p, h, &r->cfg, nodes, n, from, NULL, &r->err);
    if (r->rc)
        return;
    double t0 = now_ns();
    place_all(p, h, sm, own);
    r->lookup_ns = sm->n ? (now_ns() - t0) / (double)sm->n : 0;
    for (size_t i = 0; i < n; i++)
        count[i] = 0;
    for (size_t i = 0; i < sm->n; i++)
        if (own[i] >= 0)
            count[own[i]]++;
    int64_t unav = 0;
    for (size_t i = 0; i < sm->n; i++)
        unav += own[i] < 0;
    for (size_t i = 0; i < n; i++)
        count[i] = (int64_t)((double)count[i] * scale + 0.5);
    unav = (int64_t)((double)unav * scale + 0.5);
    double *fw = malloc((n + 1) * sizeof *fw);
    if (!fw) {
        r->rc = rs_fail(&r->err, RINGSIM_ENOMEM, "out of memory");
        place_free(p);
        return;
    }
    place_fair_weights(p, fw, n);
    stats_of(count, fw, n, unav, &r->stats);
    requests_of(sm, own, fw, n, scale, r);
    free(fw);
    r->structural = place_structural_max_over_mean(p);
    r->memory_bytes = place_memory_bytes(p);

    /* One node more. */
    place_node *more = malloc((n + 1) * sizeof *more);
    int64_t *ids = malloc((n + 1) * sizeof *ids), *ids_less = malloc((n + 1) * sizeof *ids_less);
    if (!more || !ids || !ids_less) {
        r->rc = rs_fail(&r->err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        more[i] = nodes[i];
        ids[i] = nodes[i].id;
    }
    more[n] = (place_node){.id = -2, .name = "compare-probe", .len = 13, .weight = 1};
    ids[n] = -2;
    placement *q = NULL;
    rs_error e;
    if (place_build(&q, h, &r->cfg, more, n + 1, p, NULL, &e) == 0) {
        double b;
        r->moves_if_added = (double)count_moves(q, h, sm, own, ids, ids, scratch,
                                                &r->requests_if_added, &b) *
                            scale;
        r->bytes_if_added = b * scale;
        r->has_added = true;
    }
    place_free(q);

    /* One node less.  Where a leave moves only the leaver's keys, the mean
     * over every node is exact without a build: each key moves when its
     * own node leaves, so the moves over all n leaves are the keys placed
     * (their shares and sizes likewise), and the mean is that over n.
     * Elsewhere up to COMPARE_REMOVALS nodes spread over the join order,
     * each removed in turn from the full layout. */
    size_t k = place_leave_moves_only_its_keys(p) ? 0 : n < COMPARE_REMOVALS ? n : COMPARE_REMOVALS;
    double sum = 0, rsum = 0, bsum = 0;
    size_t done = 0;
    if (!k && n > 0) {
        double req = 0, c = 0, bytes = 0, placed = 0; /* Neumaier's sum of the shares */
        for (size_t i = 0; i < sm->n; i++)
            if (own[i] >= 0) {
                placed++;
                double w = sm->w ? sm->w[i] : 0, t = req + w;
                c += fabs(req) >= fabs(w) ? (req - t) + w : (w - t) + req;
                req = t;
                bytes += sm->b ? (double)sm->b[i] : 0;
            }
        sum = placed * scale;
        rsum = sm->wsum > 0 ? (req + c) / sm->wsum : 0;
        bsum = bytes * scale;
        done = 1; /* the sums are over all n: the mean divides by n below */
    }
    for (size_t t = 0; t < k && n > 0; t++) {
        size_t victim = k == n ? t : t * n / k;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (i != victim) {
                more[m] = nodes[i];
                ids_less[m++] = nodes[i].id;
            }
        placement *w = NULL;
        if (place_build(&w, h, &r->cfg, more, m, p, NULL, &e) == 0) {
            double rq, b;
            sum += (double)count_moves(w, h, sm, own, ids, ids_less, scratch, &rq, &b) * scale;
            rsum += rq;
            bsum += b * scale;
            done++;
        }
        place_free(w);
    }
    double over = k ? (double)done : (double)n;
    r->removed_sampled = k ? done : n;
    r->removed_of = n;
    r->moves_if_removed = done ? sum / over : 0;
    r->requests_if_removed = done ? rsum / over : 0;
    r->bytes_if_removed = done ? bsum / over : 0;
out:
    free(more);
    free(ids);
    free(ids_less);
    place_free(p);
}

int compare_run(sim *s, compare_result *res, size_t nres, uint64_t max_keys, compare_sample *info,
                rs_error *err)
{
    sample sm = {0};
    int64_t total = sim_key_count(s);
    sm.step = max_keys && (uint64_t)total > max_keys ? ((uint64_t)total + max_keys - 1) / max_keys
                                                     : 1;
    int rc = sim_keys_each(s, take, &sm, err);
    /* The sampled keys' shares of requests (docs/api.md v3 traffic). */
    if (!rc && sm.n &&
        (!(sm.w = malloc(sm.n * sizeof *sm.w)) || !(sm.b = malloc(sm.n * sizeof *sm.b))))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < sm.n; i++) {
        rc = sim_key_share(s, sm.buf + sm.off[i], sm.len[i], &sm.w[i], err);
        if (!rc)
            rc = sim_key_bytes(s, sm.buf + sm.off[i], sm.len[i], &sm.b[i], err);
        sm.wsum += rc ? 0 : sm.w[i];
    }
    if (!rc && sm.step == 1)
        sm.wsum = 1; /* every key: exact, not rescaled */
    size_t n = sim_node_count(s);
    long *own = malloc((sm.n + 1) * sizeof *own), *scratch = malloc((sm.n + 1) * sizeof *scratch);
    int64_t *count = malloc((n + 1) * sizeof *count);
    if (!rc && (!own || !scratch || !count))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    double scale = sm.n ? (double)total / (double)sm.n : 1;
    for (size_t i = 0; !rc && i < nres; i++)
        one(s, &sm, scale, &res[i], own, scratch, count);
    info->keys = total;
    info->sampled = (int64_t)sm.n;
    info->step = sm.step;
    free(own);
    free(scratch);
    free(count);
    free(sm.buf);
    free(sm.off);
    free(sm.len);
    free(sm.w);
    free(sm.b);
    return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
}

/* ---- theory ---- */

typedef struct synth {
    char (*names)[32];
    place_node *v;
    size_t n;
} synth;

static int synth_make(synth *sy, size_t n, const char *algorithm)
{
    sy->names = calloc(n + 1, sizeof *sy->names);
    sy->v = calloc(n + 1, sizeof *sy->v);
    sy->n = n;
    if (!sy->names || !sy->v)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i <= n; i++) { /* one more: the joining node */
        size_t len = place_sample_name(algorithm, i, sy->names[i]);
        sy->v[i] = (place_node){.id = (int64_t)i + 1, .name = sy->names[i], .len = len, .weight = 1};
    }
    return 0;
}

static void synth_free(synth *sy)
{
    free(sy->names);
    free(sy->v);
}

/* Fraction of `sample` generated keys whose owner changes when node n
 * joins nodes 0..n-1 (node indexes are ids minus one in both). */
static int join_moved(hasher *h, const place_config *cfg, const synth *sy, size_t sample,
                      double *out, double *structural, rs_error *err)
{
    placement *p = NULL, *q = NULL;
    int rc = place_build(&p, h, cfg, sy->v, sy->n, NULL, NULL, err);
    if (!rc)
        rc = place_build(&q, h, cfg, sy->v, sy->n + 1, p, NULL, err);
    if (!rc) {
        size_t moved = 0;
        char key[32];
        for (size_t i = 0; i < sample; i++) {
            size_t len = (size_t)snprintf(key, sizeof key, "theory-%zu", i);
            place_key_info a, b;
            place_key(p, h, key, len, &a);
            place_key(q, h, key, len, &b);
            moved += a.owner != b.owner; /* same indexes: q appends the joiner */
        }
        *out = sample ? (double)moved / (double)sample : 0;
        if (structural)
            *structural = place_structural_max_over_mean(p);
    }
    place_free(p);
    place_free(q);
    return rc;
}

int compare_theory(hasher *h, size_t n, theory_point *pts, size_t npts, theory_alg *algs,
                   size_t nalgs, size_t sample, rs_error *err)
{
    synth sy, osd;
    if (synth_make(&sy, n, NULL) | synth_make(&osd, n, "ceph")) {
        synth_free(&sy);
        synth_free(&osd);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < npts; i++) {
        place_config cfg;
        place_config_default(&cfg);
        cfg.param[PP_POINTS_PER_NODE] = pts[i].v;
        pts[i].expected = 1 + sqrt(2 * log((double)n) / (double)pts[i].v);
        rc = join_moved(h, &cfg, &sy, sample, &pts[i].ring_join_moved, &pts[i].ring, err);
    }
    for (size_t i = 0; !rc && i < nalgs; i++) {
        place_config cfg;
        place_config_default(&cfg);
        snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", algs[i].name);
        /* An algorithm with a points_per_node (the seed's ring) is compared
         * at 160 per node, the count of ketama and nginx. */
        if (place_takes_param(&cfg, PP_POINTS_PER_NODE))
            cfg.param[PP_POINTS_PER_NODE] = 160;
        /* the names each algorithm reads: OSDs for ceph */
        char nm[32];
        const synth *use = place_sample_name(cfg.algorithm, 0, nm) == strlen(sy.names[0]) &&
                                   !strcmp(nm, sy.names[0])
                               ? &sy
                               : &osd;
        algs[i].rc = join_moved(h, &cfg, use, sample, &algs[i].join_moved, &algs[i].structural,
                                &algs[i].err);
    }
    synth_free(&sy);
    synth_free(&osd);
    return rc;
}
