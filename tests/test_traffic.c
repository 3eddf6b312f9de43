/*
 * test_traffic.c - the request replay and the bounded-load rules
 * (src/sim/traffic.c), against re-computations written here from the real
 * programs' source:
 *   - std::mt19937 as the standard defines it (its 10000th draw from the
 *     default seed is 4123659995), written as mt19937ar.c generates it, and
 *     Envoy's chooseHost path step by step (a whole vector shuffled as it
 *     is walked, the key's own host skipped, the least overloaded taken);
 *   - HAProxy's walk point by point (no shortcut), its slots from
 *     recount_servers' cumulative weights;
 *   - every assignment of a replay decided again here, for HAProxy, Envoy
 *     and MTZ, with the invariants: no server at or above its slots under
 *     HAProxy's rule, no host above slots under Envoy's (unless none
 *     qualifies), no node above capacity under MTZ;
 *   - with the factor 0 the shares converge to the workload's (skewed
 *     shares, so the test holds whatever the workload);
 *   - the same seed gives the same answer; edge cases from the source: a
 *     server of weight 0, every server full (factors that wrap the 32-bit
 *     arithmetic), one server;
 *   - through the engine: the factors' validation per program, a change of
 *     factor moves no key, POST-like runs give the same answer twice.
 * Random models come from a seed printed when a check fails.
 *
 * Checks docs/api.md, 'POST /api/traffic/run'.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place.h"
#include "sim.h"
#include "traffic.h"

static uint64_t seed_now;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        if (!ok_)                                                                                  \
            fprintf(stderr, "test_traffic: seed %llu: %s failed (line %d)\n",                      \
                    (unsigned long long)seed_now, #cond, __LINE__);                                \
        assert_true(ok_);                                                                          \
    } while (0)

static uint64_t xs;
static uint64_t rnd64(void)
{
    xs ^= xs << 13;
    xs ^= xs >> 7;
    xs ^= xs << 17;
    return xs;
}

/* ---- std::mt19937, as mt19937ar.c writes it ---- */

typedef struct ref_mt {
    uint32_t mt[624];
    int mti;
} ref_mt;

static void ref_mt_init(ref_mt *m, uint32_t s)
{
    m->mt[0] = s;
    for (m->mti = 1; m->mti < 624; m->mti++)
        m->mt[m->mti] = (uint32_t)(1812433253UL * (m->mt[m->mti - 1] ^ (m->mt[m->mti - 1] >> 30)) +
                                   (uint32_t)m->mti);
}

static uint32_t ref_mt_draw(ref_mt *m)
{
    static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
    uint32_t y;
    if (m->mti >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (m->mt[kk] & 0x80000000u) | (m->mt[kk + 1] & 0x7fffffffu);
            m->mt[kk] = m->mt[kk + 397] ^ (y >> 1) ^ mag01[y & 1];
        }
        for (; kk < 623; kk++) {
            y = (m->mt[kk] & 0x80000000u) | (m->mt[kk + 1] & 0x7fffffffu);
            m->mt[kk] = m->mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1];
        }
        y = (m->mt[623] & 0x80000000u) | (m->mt[0] & 0x7fffffffu);
        m->mt[623] = m->mt[396] ^ (y >> 1) ^ mag01[y & 1];
        m->mti = 0;
    }
    y = m->mt[m->mti++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

/* ---- Envoy: thread_aware_lb_impl.cc, step by step ---- */

static double ref_envoy_overload(uint32_t overall_active, uint32_t f, double weight,
                                 uint32_t host_active)
{
    uint32_t total_slots = ((overall_active + 1) * f + 99) / 100;
    uint32_t slots = (uint32_t)ceil(total_slots * weight);
    if (slots < 1)
        slots = 1;
    return (double)host_active / slots;
}

/* chooseHost past the key's host; *tried counts the hosts looked at. */
static uint32_t ref_envoy_choose(uint64_t hash, uint32_t host, uint32_t n, const double *nw,
                                 const uint32_t *active, uint32_t total, uint32_t f,
                                 uint32_t *order, uint32_t *norder)
{
    double of = ref_envoy_overload(total, f, nw[host], active[host]);
    *norder = 0;
    if (of <= 1.0)
        return host;
    uint32_t *host_index = malloc(n * sizeof *host_index);
    for (uint32_t i = 0; i < n; i++)
        host_index[i] = i;
    ref_mt r;
    ref_mt_init(&r, (uint32_t)hash); /* mt19937(uint64 seed): seed mod 2^32 */
    uint32_t least = host;
    double least_of = of;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k_ = n - i, x = k_;
        while (x >= k_)
            x = (uint32_t)((uint64_t)ref_mt_draw(&r) / ((0xffffffffull + 1u) / k_));
        uint32_t t = host_index[i];
        host_index[i] = host_index[i + x];
        host_index[i + x] = t;
        uint32_t k = host_index[i];
        if (order)
            order[(*norder)++] = k;
        if (k == host)
            continue;
        of = ref_envoy_overload(total, f, nw[k], active[k]);
        if (of <= 1.0) {
            least = k;
            break;
        }
        if (least_of > of) {
            least = k;
            least_of = of;
        }
    }
    free(host_index);
    return least;
}

static void test_mt19937_standard(void **st)
{
    (void)st;
    ref_mt r;
    ref_mt_init(&r, 5489u);
    uint32_t v = 0;
    for (int i = 0; i < 10000; i++)
        v = ref_mt_draw(&r);
    assert_int_equal(v, 4123659995u); /* [rand.predef] */
}

static void test_envoy_order(void **st)
{
    (void)st;
    static const uint32_t sizes[] = {1, 2, 3, 7, 64, 100, 1000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t n = sizes[si];
        uint32_t *scratch = malloc(3 * n * sizeof *scratch), *got = malloc(n * sizeof *got);
        uint32_t *want = malloc(n * sizeof *want);
        for (uint32_t i = 0; i < n; i++)
            scratch[i] = i;
        /* every host overloaded: the reference walks the whole shuffle */
        uint32_t *active = calloc(n, sizeof *active);
        double *nw = malloc(n * sizeof *nw);
        for (uint32_t i = 0; i < n; i++) {
            active[i] = 1000;
            nw[i] = 1.0 / n;
        }
        for (int t = 0; t < 200; t++) {
            uint64_t hash = t < 3 ? (uint64_t)t : rnd64();
            seed_now = hash;
            uint32_t count = t % 2 ? n : (n < 5 ? n : 5), nw_ = 0;
            traffic_envoy_order(hash, n, scratch, got, count);
            ref_envoy_choose(hash, 0, n, nw, active, 0, 100, want, &nw_);
            CHECK(nw_ == n);
            for (uint32_t i = 0; i < count; i++)
                CHECK(got[i] == want[i]);
            for (uint32_t i = 0; i < n; i++)
                CHECK(scratch[i] == i);
        }
        free(scratch);
        free(got);
        free(want);
        free(active);
        free(nw);
    }
}

/* ---- HAProxy: lb_chash.c point by point ---- */

static bool ref_haproxy_eligible(uint32_t served_total, uint32_t f, uint32_t tot_weight,
                                 uint32_t cum, uint32_t ew, uint32_t served)
{
    unsigned tot_slots = ((served_total + 1) * f + 99) / 100;
    unsigned slots_per_weight = tot_slots / tot_weight;
    unsigned remainder = tot_slots % tot_weight;
    unsigned slots = ew * slots_per_weight;
    slots += ((cum + ew) * remainder) / tot_weight - (cum * remainder) / tot_weight;
    if (slots == 0)
        slots = 1;
    return served < slots;
}

static void test_haproxy_slots(void **st)
{
    (void)st;
    /* Slots shared by weight add up to tot_slots (no server is left with 0
     * when every weight is at least one unit of 16). */
    for (int t = 0; t < 300; t++) {
        xs = 0x9e3779b97f4a7c15ull + (uint64_t)t;
        seed_now = (uint64_t)t;
        uint32_t n = 1 + (uint32_t)(rnd64() % 20), ew[20], cum[20], tot = 0;
        for (uint32_t i = 0; i < n; i++) {
            ew[i] = 16 * (uint32_t)(1 + rnd64() % 256);
            cum[i] = tot;
            tot += ew[i];
        }
        uint32_t served_total = (uint32_t)(rnd64() % 100000), f = 101 + (uint32_t)(rnd64() % 400);
        uint64_t tot_slots = ((uint64_t)(served_total + 1) * f + 99) / 100, sum = 0;
        for (uint32_t i = 0; i < n; i++) {
            /* the largest served that is still eligible is slots - 1 */
            uint32_t lo = 0, hi = (uint32_t)tot_slots + 2;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (traffic_haproxy_eligible(served_total, f, tot, cum[i], ew[i], mid))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            CHECK(traffic_haproxy_eligible(served_total, f, tot, cum[i], ew[i], 0) ==
                  ref_haproxy_eligible(served_total, f, tot, cum[i], ew[i], 0));
            sum += lo;
        }
        CHECK(sum >= tot_slots && sum <= tot_slots + n);
    }
    /* strict <: a server with exactly its slots is not eligible */
    assert_false(traffic_haproxy_eligible(0, 200, 16, 0, 16, 2)); /* ceil(1 x 2) = 2 slots */
    assert_true(traffic_haproxy_eligible(0, 200, 16, 0, 16, 1));
    /* the 32-bit product wraps as HAProxy's unsigned does */
    assert_true(ref_haproxy_eligible(1, 2147483647u, 32, 0, 16, 0));
    assert_false(traffic_haproxy_eligible(1, 2147483647u, 32, 0, 16, 1));
}

/* ---- replays, every decision checked ---- */

typedef struct world {
    traffic_model m;
    double *weight, *share, *nw;
    uint32_t *pt_node, *node, *point;
    uint64_t *hash;
    uint32_t *ew, *cum, tot;
    double wsum;
    uint64_t checked, fallbacks;
} world;

static void world_free(world *w)
{
    free(w->weight);
    free(w->share);
    free(w->nw);
    free(w->pt_node);
    free(w->node);
    free(w->point);
    free(w->hash);
    free(w->ew);
    free(w->cum);
    memset(w, 0, sizeof *w);
}

/* n nodes (weights 1..maxw, or 0 for `zero`), ppn points each scattered at
 * random, nkeys keys with Zipf-like shares (exponent 1.1). */
static void world_make(world *w, place_bound rule, uint32_t factor, uint32_t n, uint32_t maxw,
                       int zero, uint32_t ppn, uint32_t nkeys)
{
    memset(w, 0, sizeof *w);
    w->weight = malloc(n * sizeof *w->weight);
    w->nw = malloc(n * sizeof *w->nw);
    w->ew = malloc(n * sizeof *w->ew);
    w->cum = malloc(n * sizeof *w->cum);
    double sum = 0;
    size_t npts = 0;
    for (uint32_t i = 0; i < n; i++) {
        w->weight[i] = (int)i == zero ? 0 : (double)(1 + rnd64() % maxw);
        sum += w->weight[i];
        npts += w->weight[i] > 0 ? ppn * (size_t)w->weight[i] : 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        w->nw[i] = w->weight[i] / sum;
        w->ew[i] = (uint32_t)w->weight[i] * 16;
        w->cum[i] = w->tot;
        w->tot += w->ew[i];
    }
    w->wsum = sum;
    /* points in ring order: each point a node drawn in proportion to weight */
    w->pt_node = malloc((npts + 1) * sizeof *w->pt_node);
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        for (size_t j = 0; j < ppn * (size_t)w->weight[i]; j++)
            w->pt_node[k++] = i;
    for (size_t i = npts; i > 1; i--) { /* shuffle: a ring of scattered points */
        size_t j = rnd64() % i;
        uint32_t t = w->pt_node[i - 1];
        w->pt_node[i - 1] = w->pt_node[j];
        w->pt_node[j] = t;
    }
    w->share = malloc(nkeys * sizeof *w->share);
    w->node = malloc(nkeys * sizeof *w->node);
    w->point = malloc(nkeys * sizeof *w->point);
    w->hash = malloc(nkeys * sizeof *w->hash);
    double ssum = 0;
    for (uint32_t i = 0; i < nkeys; i++) {
        w->share[i] = pow(i + 1.0, -1.1);
        ssum += w->share[i];
        w->point[i] = (uint32_t)(rnd64() % npts);
        w->node[i] = w->pt_node[w->point[i]];
        w->hash[i] = rnd64();
    }
    for (uint32_t i = 0; i < nkeys; i++)
        w->share[i] /= ssum;
    w->m = (traffic_model){rule,     factor,  n,        w->weight, npts, w->pt_node, nkeys,
                           w->share, w->node, w->point, w->hash,   NULL, NULL};
}

static void observe(void *ud, uint32_t key, uint32_t to, const uint32_t *active, uint32_t total)
{
    world *w = ud;
    const traffic_model *m = &w->m;
    uint32_t want = m->node[key];
    w->checked++;
    if (m->factor == 0) {
        /* off: the key's node */
    } else if (m->rule == PLACE_BOUND_HAPROXY) {
        size_t next = m->point[key];
        uint32_t nsrv = m->pt_node[next];
        int loop = 0;
        while (!ref_haproxy_eligible(total, m->factor, w->tot, w->cum[nsrv], w->ew[nsrv],
                                     active[nsrv])) {
            if (++next == m->npts) {
                next = 0;
                if (++loop > 1)
                    break;
            }
            nsrv = m->pt_node[next];
        }
        want = nsrv;
        if (loop > 1) {
            w->fallbacks++;
        } else if ((uint64_t)(total + 1) * m->factor < 4294967296ull) {
            /* no server at or above its slots when it is given a request */
            uint64_t tot_slots = ((uint64_t)(total + 1) * m->factor + 99) / 100;
            uint64_t slots = w->ew[to] * (tot_slots / w->tot) +
                             ((w->cum[to] + w->ew[to]) * (tot_slots % w->tot)) / w->tot -
                             (w->cum[to] * (tot_slots % w->tot)) / w->tot;
            CHECK(active[to] < (slots ? slots : 1));
        }
        CHECK(w->weight[to] > 0);
    } else if (m->rule == PLACE_BOUND_ENVOY) {
        uint32_t norder;
        want = ref_envoy_choose(m->hash[key], m->node[key], (uint32_t)m->n, w->nw, active, total,
                                m->factor, NULL, &norder);
        if (ref_envoy_overload(total, m->factor, w->nw[want], active[want]) > 1.0)
            w->fallbacks++; /* none qualified: the least overloaded */
    } else if (m->rule == PLACE_BOUND_MTZ) {
        /* capacity ceil(c m w / W), c = factor / 100, m with the new ball */
        double fm = (double)m->factor * (total + 1), den = 100.0 * w->wsum;
        size_t i = m->point[key];
        for (size_t s = 0; s < m->npts; s++, i = (i + 1) % m->npts) {
            uint32_t x = m->pt_node[i];
            if ((double)active[x] < ceil(fm * w->weight[x] / den)) {
                want = x;
                break;
            }
        }
        CHECK((double)active[to] < ceil(fm * w->weight[to] / den));
    }
    CHECK(to == want);
}

static void run_checked(world *w, uint64_t requests, double conc, uint64_t seed, traffic_result *r)
{
    w->m.observe = observe;
    w->m.observe_ud = w;
    traffic_params p = {requests, conc, seed, -1, 0};
    rs_error err = {0, ""};
    int rc = traffic_replay(&w->m, &p, NULL, NULL, r, &err);
    if (rc)
        fprintf(stderr, "test_traffic: %s\n", err.msg);
    assert_int_equal(rc, 0);
    CHECK(w->checked == requests);
    uint64_t handled = 0, own = 0, away = 0;
    for (size_t i = 0; i < r->n; i++) {
        handled += r->node[i].handled;
        own += r->node[i].own;
        away += r->node[i].sent_away;
        CHECK(r->node[i].peak <= r->node[i].handled);
        CHECK(r->node[i].sent_away <= r->node[i].own);
    }
    CHECK(handled == requests && own == requests && away == r->sent_away);
    CHECK(r->probes >= requests);
}

static void test_rules_decide_as_the_source(void **st)
{
    (void)st;
    static const struct {
        place_bound rule;
        uint32_t factor, n, maxw, ppn, keys;
        int zero;
        double conc;
    } cases[] = {
        {PLACE_BOUND_HAPROXY, 125, 8, 4, 16, 500, -1, 40},
        {PLACE_BOUND_HAPROXY, 101, 30, 1, 16, 2000, -1, 300},
        {PLACE_BOUND_HAPROXY, 150, 6, 3, 16, 300, 2, 25},          /* a server of weight 0 */
        {PLACE_BOUND_HAPROXY, 2147483647u, 5, 2, 16, 200, -1, 20}, /* wraps: all full */
        {PLACE_BOUND_HAPROXY, 200, 1, 1, 16, 50, -1, 10},          /* one server */
        {PLACE_BOUND_ENVOY, 100, 10, 3, 1, 500, -1, 50},
        {PLACE_BOUND_ENVOY, 125, 40, 1, 1, 3000, -1, 400},
        {PLACE_BOUND_ENVOY, 4294967295u, 6, 2, 1, 300, -1, 30}, /* wraps: all overloaded */
        {PLACE_BOUND_ENVOY, 150, 1, 1, 1, 50, -1, 10},          /* one host */
        {PLACE_BOUND_MTZ, 125, 12, 1, 3, 800, -1, 60},
        {PLACE_BOUND_MTZ, 110, 7, 5, 2, 400, -1, 35},
        {PLACE_BOUND_MTZ, 300, 1, 1, 1, 20, -1, 5},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        seed_now = 1000 + t;
        xs = 0x853c49e6748fea9bull ^ seed_now;
        world w;
        world_make(&w, cases[t].rule, cases[t].factor, cases[t].n, cases[t].maxw, cases[t].zero,
                   cases[t].ppn, cases[t].keys);
        traffic_result r;
        run_checked(&w, 60000, cases[t].conc, seed_now, &r);
        if (cases[t].n == 1) {
            CHECK(r.sent_away == 0 && r.probes == 60000);
        } else if (cases[t].factor < 1000) {
            CHECK(r.sent_away > 0); /* the rule did something */
            CHECK(w.fallbacks == 0);
        } else {
            CHECK(w.fallbacks > 0); /* the wrapped factor fills every server */
        }
        if (cases[t].zero >= 0)
            CHECK(r.node[cases[t].zero].handled == 0);
        traffic_result_clear(&r);
        world_free(&w);
    }
}

static void test_factor_zero_converges(void **st)
{
    (void)st;
    static const place_bound rules[] = {PLACE_BOUND_HAPROXY, PLACE_BOUND_ENVOY, PLACE_BOUND_MTZ,
                                        PLACE_BOUND_NONE};
    for (size_t t = 0; t < 4; t++) {
        seed_now = 77 + t;
        xs = 0x2545f4914f6cdd1dull + seed_now;
        world w;
        world_make(&w, rules[t], 0, 9, 3, -1, 4, 3000);
        double *exact = calloc(9, sizeof *exact);
        for (size_t k = 0; k < w.m.nkeys; k++)
            exact[w.m.node[k]] += w.m.share[k];
        const uint64_t R = 2000000;
        traffic_result r;
        run_checked(&w, R, 100, seed_now, &r);
        CHECK(r.sent_away == 0 && r.probes == R && r.rule == PLACE_BOUND_NONE);
        for (size_t i = 0; i < 9; i++) {
            double got = (double)r.node[i].handled / R;
            double sd = sqrt(exact[i] * (1 - exact[i]) / R);
            CHECK(fabs(got - exact[i]) <= 5 * sd + 1e-9);
        }
        traffic_result_clear(&r);
        free(exact);
        world_free(&w);
    }
}

static void test_same_seed_same_answer(void **st)
{
    (void)st;
    static const place_bound rules[] = {PLACE_BOUND_HAPROXY, PLACE_BOUND_ENVOY, PLACE_BOUND_MTZ};
    for (size_t t = 0; t < 3; t++) {
        seed_now = 5 + t;
        xs = 0xda942042e4dd58b5ull + seed_now;
        world w;
        world_make(&w, rules[t], 120, 10, 2, -1, 8, 1000);
        traffic_params p = {100000, 80, 42, -1, 16};
        traffic_result a, b, c;
        rs_error err;
        assert_int_equal(traffic_replay(&w.m, &p, NULL, NULL, &a, &err), 0);
        assert_int_equal(traffic_replay(&w.m, &p, NULL, NULL, &b, &err), 0);
        p.seed = 43;
        assert_int_equal(traffic_replay(&w.m, &p, NULL, NULL, &c, &err), 0);
        CHECK(memcmp(a.node, b.node, a.n * sizeof *a.node) == 0 && a.probes == b.probes);
        CHECK(a.nsamples == 16 && memcmp(a.timeline, b.timeline, 16 * a.n * 4) == 0);
        CHECK(a.sample_at[15] == 100000);
        CHECK(memcmp(a.node, c.node, a.n * sizeof *a.node) != 0);
        /* the timeline's last row is what is in flight at the end */
        uint64_t in_flight = 0;
        for (size_t i = 0; i < a.n; i++)
            in_flight += a.timeline[15 * a.n + i];
        CHECK(in_flight > 20 && in_flight < 200); /* about 80 */
        traffic_result_clear(&a);
        traffic_result_clear(&b);
        traffic_result_clear(&c);
        world_free(&w);
    }
}

static int stop_now(void *ud, uint64_t done, uint64_t total)
{
    (void)total;
    *(uint64_t *)ud = done;
    return 1;
}

static void test_refusals_and_cancel(void **st)
{
    (void)st;
    xs = 99;
    world w;
    world_make(&w, PLACE_BOUND_HAPROXY, 150, 3, 1, -1, 16, 10);
    traffic_result r;
    rs_error err;
    traffic_params bad[] = {{0, 1, 0, -1, 0},
                            {TRAFFIC_MAX_REQUESTS + 1, 1, 0, -1, 0},
                            {10, 0, 0, -1, 0},
                            {10, 1e6 + 1, 0, -1, 0},
                            {10, NAN, 0, -1, 0},
                            {10, 1, (uint64_t)INT64_MAX + 1, -1, 0},
                            {10, 1, 0, -1, TRAFFIC_MAX_SAMPLES + 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(traffic_replay(&w.m, &bad[i], NULL, NULL, &r, &err), RINGSIM_EPARAM);
        traffic_result_clear(&r);
    }
    traffic_params p = {1000000, 10, 0, -1, 0};
    uint64_t at = 0;
    assert_int_equal(traffic_replay(&w.m, &p, stop_now, &at, &r, &err), RINGSIM_ECANCELED);
    assert_int_equal(at, 65536);
    traffic_result_clear(&r);
    world_free(&w);
}

/* ---- through the engine ---- */

static sim *filled(const char *alg, const char *param, const char *value, int nodes, int keys)
{
    sim *s;
    rs_error err;
    int64_t op, ins, skip;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
    if (param)
        assert_int_equal(place_config_set_param(&cfg, param, value, &err), 0);
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    for (int i = 0; i < nodes; i++) {
        char name[32];
        snprintf(name, sizeof name, "cache-%d", i);
        /* weights 1, 2, 3 where the algorithm honours them */
        int rc = sim_add_node(s, name, strlen(name), 1 + i % 3, &op, &err);
        if (rc == RINGSIM_EPARAM)
            rc = sim_add_node(s, name, strlen(name), 1, &op, &err);
        assert_int_equal(rc, 0);
    }
    if (keys)
        assert_int_equal(sim_generate_keys(s, "k", 1, 0, (uint64_t)keys, &ins, &skip, &op, &err), 0);
    return s;
}

static int count_share(void *ud, const char *key, size_t len, double share)
{
    (void)key;
    (void)len;
    *(double *)ud += share;
    return 0;
}

static void test_engine(void **st)
{
    (void)st;
    rs_error err;
    place_config cfg;
    place_config_default(&cfg);
    /* each program's own validation of its factor */
    static const struct {
        const char *alg, *param, *value;
        int rc;
    } v[] = {
        {"envoy-ring", "hash_balance_factor", "100", 0},
        {"envoy-ring", "hash_balance_factor", "99", RINGSIM_EPARAM},
        {"maglev", "hash_balance_factor", "4294967295", 0},
        {"maglev", "hash_balance_factor", "1", RINGSIM_EPARAM},
        {"haproxy", "hash_balance_factor", "100", RINGSIM_EPARAM},
        {"haproxy", "hash_balance_factor", "101", 0},
        {"haproxy", "hash_balance_factor", "2147483648", RINGSIM_EPARAM},
        {"ring", "balance_factor", "100", RINGSIM_EPARAM},
        {"ring", "balance_factor", "125", 0},
        {"ring", "balance_factor", "0", 0},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        place_config c = cfg;
        snprintf(c.algorithm, sizeof c.algorithm, "%s", v[i].alg);
        int rc = place_config_set_param(&c, v[i].param, v[i].value, &err);
        if (!rc)
            rc = place_config_check(&c, &err);
        if (rc != v[i].rc)
            fprintf(stderr, "test_traffic: %s %s=%s gave %d (%s)\n", v[i].alg, v[i].param,
                    v[i].value, rc, err.msg);
        assert_int_equal(rc, v[i].rc);
    }
    /* a factor moves no key, and each rule runs through the engine */
    static const char *const algs[][2] = {{"haproxy", "hash_balance_factor"},
                                          {"envoy-ring", "hash_balance_factor"},
                                          {"maglev", "hash_balance_factor"},
                                          {"ring", "balance_factor"}};
    for (size_t a = 0; a < 4; a++) {
        sim *s = filled(algs[a][0], NULL, NULL, 7, 3000);
        double total = 0;
        assert_int_equal(sim_workload_each(s, count_share, &total, &err), 0);
        assert_true(fabs(total - 1) < 1e-9);
        sim_node_view *before, *after;
        size_t nb, na;
        assert_int_equal(sim_nodes(s, &before, &nb, &err), 0);
        place_config c = *sim_config(s);
        assert_int_equal(place_config_set_param(&c, algs[a][1], "130", &err), 0);
        int64_t op;
        assert_int_equal(sim_configure(s, &c, &op, &err), 0);
        assert_int_equal(sim_nodes(s, &after, &na, &err), 0);
        assert_int_equal(nb, na);
        for (size_t i = 0; i < nb; i++)
            assert_int_equal(before[i].keys, after[i].keys);
        for (int k = 0; k < 3000; k += 37) {
            char key[16];
            snprintf(key, sizeof key, "k%d", k);
            sim_where w1;
            sim_key_where(s, key, strlen(key), &w1);
            assert_true(w1.info.owner >= 0);
        }
        free(before);
        free(after);
        traffic_params p = {200000, 50, 9, -1, 0};
        traffic_result r1, r2, r0;
        assert_int_equal(traffic_run(s, &p, &r1, &err), 0);
        assert_int_equal(traffic_run(s, &p, &r2, &err), 0);
        assert_int_equal(r1.factor, 130);
        assert_true(r1.sent_away > 0);
        assert_memory_equal(r1.node, r2.node, r1.n * sizeof *r1.node);
        p.factor = 0;
        assert_int_equal(traffic_run(s, &p, &r0, &err), 0);
        assert_int_equal(r0.sent_away, 0);
        assert_int_equal(r0.rule, PLACE_BOUND_NONE);
        json_t *j = traffic_json(s, &p, &r1, &err);
        assert_non_null(j);
        assert_int_equal(json_array_size(json_object_get(j, "nodes")), 7);
        const char *fields[] = {"requests",
                                "concurrency",
                                "seed",
                                "nodes",
                                "requests_max_over_mean",
                                "sent_away",
                                "peak_in_flight_max_over_mean",
                                "probes_per_request"};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            assert_non_null(json_object_get(j, fields[f]));
        json_decref(j);
        traffic_result_clear(&r0);
        p.factor = 50; /* below every rule's minimum */
        assert_int_equal(traffic_run(s, &p, &r0, &err), RINGSIM_EPARAM);
        traffic_result_clear(&r0);
        traffic_result_clear(&r1);
        traffic_result_clear(&r2);
        sim_close(s);
    }
    /* no bounded loads: a factor is refused; no key or no node: refused */
    sim *s = filled("jump", NULL, NULL, 3, 100);
    traffic_params p = {1000, 5, 0, 120, 0};
    traffic_result r;
    assert_int_equal(traffic_run(s, &p, &r, &err), RINGSIM_EPARAM);
    p.factor = -1;
    assert_int_equal(traffic_run(s, &p, &r, &err), 0);
    assert_int_equal(r.probes, 1000);
    traffic_result_clear(&r);
    sim_close(s);
    s = filled("ring", NULL, NULL, 3, 0);
    assert_int_equal(traffic_run(s, &p, &r, &err), RINGSIM_EPARAM);
    sim_close(s);
    s = filled("ring", NULL, NULL, 0, 10);
    assert_int_equal(traffic_run(s, &p, &r, &err), RINGSIM_EPARAM);
    sim_close(s);
}

/* With nodes down a request goes where the key is served (served_by, by
 * each system's rule): over many requests, each node handles its share of
 * requests as the nodes' figures say, a down node none, and the keys no
 * node serves are unserved; the bounded rules never send to a down node;
 * with every node down, everything is unserved. */
static void test_down_nodes(void **st)
{
    (void)st;
    rs_error err;
    static const char *const algs[][2] = {
        {"ring", NULL},
        {"ring", "balance_factor"},
        {"jump", NULL},
        {"rendezvous", NULL},
        {"multiprobe", NULL},
        {"ketama", NULL},
        {"nginx", NULL},
        {"envoy-ring", NULL},
        {"envoy-ring", "hash_balance_factor"},
        {"maglev", "hash_balance_factor"},
        {"cassandra", NULL},
        {"redis", NULL},
        {"haproxy", NULL},
        {"haproxy", "hash_balance_factor"},
        {"twemproxy", NULL},
    };
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        const char *alg = algs[a][0], *param = algs[a][1];
        sim *s = filled(alg, param, param ? "125" : NULL, 6, 2000);
        int64_t op;
        /* one of six down: Envoy stays out of panic (83% healthy) */
        assert_int_equal(sim_set_state(s, "cache-1", 7, true, &op, &err), 0);
        traffic_params p = {400000, 20, 3, -1, 0};
        traffic_result r;
        assert_int_equal(traffic_run(s, &p, &r, &err), 0);
        sim_node_view *v;
        size_t nv;
        assert_int_equal(sim_nodes(s, &v, &nv, &err), 0);
        double served = 0;
        for (size_t i = 0; i < nv; i++) {
            double share;
            int64_t bytes;
            assert_int_equal(sim_node_load(s, v[i].index, &share, &bytes, &err), 0);
            const traffic_node_stat *t = &r.node[v[i].index];
            if (v[i].down) {
                assert_int_equal(t->handled, 0);
                assert_false(r.serves[v[i].index]);
                assert_true(share == 0);
            }
            served += share;
            if (!param) { /* f = 0: the exact shares, within 5 sd */
                double got = (double)t->handled / (double)p.requests;
                double sd = sqrt(share * (1 - share) / (double)p.requests);
                if (fabs(got - share) > 5 * sd + 1e-12)
                    fprintf(stderr, "test_traffic: %s %.*s handled %.5f, share %.5f\n", alg,
                            (int)v[i].len, v[i].name, got, share);
                assert_true(fabs(got - share) <= 5 * sd + 1e-12);
            }
        }
        double un = (double)r.unserved / (double)p.requests;
        double rest = served < 1 ? 1 - served : 0; /* served may pass 1 by rounding */
        double sd = sqrt(rest * (1 - rest) / (double)p.requests);
        if (fabs(un - rest) > 5 * sd + 1e-12)
            fprintf(stderr, "test_traffic: %s unserved %.5f, expected %.5f\n", alg, un, rest);
        assert_true(fabs(un - rest) <= 5 * sd + 1e-12);
        if (param)
            assert_true(r.sent_away > 0);
        free(v);
        traffic_result_clear(&r);
        /* every node down: nothing served, and no failure */
        for (int i = 0; i < 6; i++) {
            char name[32];
            snprintf(name, sizeof name, "cache-%d", i);
            if (i != 1)
                assert_int_equal(sim_set_state(s, name, strlen(name), true, &op, &err), 0);
        }
        /* Envoy in panic sends to every host (down ones included), as
         * LoadBalancerBase does; the others serve nothing */
        bool panic = place_in_panic(sim_placement(s));
        assert_int_equal(traffic_run(s, &p, &r, &err), 0);
        assert_int_equal(r.unserved, panic ? 0 : p.requests);
        uint64_t handled = 0;
        for (size_t i = 0; i < r.n; i++)
            handled += r.node[i].handled;
        assert_int_equal(handled + r.unserved, p.requests);
        traffic_result_clear(&r);
        sim_close(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mt19937_standard),
        cmocka_unit_test(test_envoy_order),
        cmocka_unit_test(test_haproxy_slots),
        cmocka_unit_test(test_rules_decide_as_the_source),
        cmocka_unit_test(test_factor_zero_converges),
        cmocka_unit_test(test_same_seed_same_answer),
        cmocka_unit_test(test_refusals_and_cancel),
        cmocka_unit_test(test_engine),
        cmocka_unit_test(test_down_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
