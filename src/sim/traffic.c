/*
 * traffic.c - the request replay and the real balancers' bounded-load
 * rules (see traffic.h for the model and its costs).
 *
 * References, behaviour copied from their source:
 *   HAProxy 2.6  src/lb_chash.c  chash_server_is_eligible (the slots),
 *                chash_get_server_hash (nearest point, then eb32_next
 *                clockwise, at most two wraps); src/backend.c
 *                recount_servers (cumulative_weight: the effective weights
 *                of the usable servers before this one, in configuration
 *                order; tot_weight their sum); chash_init_server_tree
 *                (eweight = uweight x BE_WEIGHT_SCALE, 16).  `served` is
 *                what HAProxy counts: the requests in flight, the
 *                backend's and the server's.
 *   Envoy        source/common/upstream/thread_aware_lb_impl.cc
 *                (source/extensions/load_balancing_policies/common/ in
 *                later releases): normalizeHostWeights (weight / sum, in
 *                host order), BoundedLoadHashingLoadBalancer::
 *                hostOverloadFactor and chooseHost (std::mt19937 seeded by
 *                the 64-bit hash, its own uniform_int, a Fisher-Yates
 *                shuffle walked as it is made, the least overloaded host
 *                when none qualifies).  upstream_rq_active and rq_active
 *                are the requests in flight.
 *   MTZ          Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing with
 *                Bounded Loads" (SODA 2018): with m balls, every bin holds
 *                at most ceil(c m / n); a ball goes to the first bin
 *                clockwise from its hash with room.  ringsim: c =
 *                balance_factor / 100, m the requests in flight with the
 *                new one, a node's capacity ceil(c m w / W) with weights.
 */
/* An engine file: it reads the simulation through sim.h (placement,
 * nodes, sim_workload_each) and reports progress -- which may cancel --
 * through sim__progress (sim_int.h), as the engine's own long reads do. */
#include "traffic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "vec.h"

#define TRAFFIC_PROGRESS_EVERY 65536u
#define HAPROXY_BE_WEIGHT_SCALE 16u

int traffic_params_check(const traffic_params *p, rs_error *err)
{
    if (p->requests < 1 || p->requests > TRAFFIC_MAX_REQUESTS)
        return rs_fail(err, RINGSIM_EPARAM, "requests must be a whole number from 1 to %llu",
                       TRAFFIC_MAX_REQUESTS);
    if (!(p->concurrency > 0) || !(p->concurrency <= TRAFFIC_MAX_CONCURRENCY))
        return rs_fail(err, RINGSIM_EPARAM, "concurrency must be a number above 0 and at most %.0f",
                       TRAFFIC_MAX_CONCURRENCY);
    if (p->seed > (uint64_t)INT64_MAX)
        return rs_fail(err, RINGSIM_EPARAM, "seed must be a whole number from 0 to %lld",
                       (long long)INT64_MAX);
    if (p->samples > TRAFFIC_MAX_SAMPLES)
        return rs_fail(err, RINGSIM_EPARAM, "samples must be a whole number from 0 to %u",
                       TRAFFIC_MAX_SAMPLES);
    return 0;
}

/* ---- draws: xoshiro256** seeded by splitmix64 (Blackman and Vigna) ---- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* [0, 1) with 53 bits. */
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }

/* ---- the alias table (Vose): a key in O(1) ---- */

typedef struct alias {
    uint32_t *cut; /* keep index i when the low 32 bits are below cut[i] */
    uint32_t *other;
    size_t n;
} alias;

static void alias_free(alias *a)
{
    free(a->cut);
    free(a->other);
}

static int alias_build(alias *a, const double *share, size_t n)
{
    a->n = n;
    a->cut = malloc(n * sizeof *a->cut);
    a->other = malloc(n * sizeof *a->other);
    double *q = malloc(n * sizeof *q);
    uint32_t *small = malloc(n * sizeof *small), *large = malloc(n * sizeof *large);
    int rc = a->cut && a->other && q && small && large ? 0 : RINGSIM_ENOMEM;
    if (!rc) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += share[i] > 0 ? share[i] : 0;
        size_t ns = 0, nl = 0;
        for (size_t i = 0; i < n; i++) {
            q[i] = sum > 0 ? (share[i] > 0 ? share[i] : 0) * (double)n / sum : 1;
            a->other[i] = (uint32_t)i;
            if (q[i] < 1)
                small[ns++] = (uint32_t)i;
            else
                large[nl++] = (uint32_t)i;
        }
        while (ns && nl) {
            uint32_t s = small[--ns], l = large[nl - 1];
            a->other[s] = l;
            a->cut[s] = (uint32_t)(q[s] * 4294967296.0);
            q[l] -= 1 - q[s];
            if (q[l] < 1) {
                nl--;
                small[ns++] = l;
            }
        }
        /* What is left holds (to rounding) exactly 1: always kept. */
        while (nl)
            a->cut[large[--nl]] = UINT32_MAX;
        while (ns)
            a->cut[small[--ns]] = UINT32_MAX;
    }
    free(q);
    free(small);
    free(large);
    return rc;
}

static inline uint32_t alias_draw(const alias *a, uint64_t x)
{
    uint32_t i = (uint32_t)(((unsigned __int128)x * a->n) >> 64);
    /* x's low 32 bits are close to uniform within the slice of i */
    return (uint32_t)x < a->cut[i] || a->cut[i] == UINT32_MAX ? i : a->other[i];
}

/* ---- HAProxy ---- */

bool traffic_haproxy_eligible(uint32_t served_total, uint32_t factor, uint32_t tot_weight,
                              uint32_t cumulative_weight, uint32_t eweight, uint32_t served)
{
    uint32_t tot_slots = ((served_total + 1) * factor + 99) / 100;
    uint32_t slots_per_weight = tot_slots / tot_weight;
    uint32_t remainder = tot_slots % tot_weight;
    uint32_t slots = eweight * slots_per_weight;
    slots += ((cumulative_weight + eweight) * remainder) / tot_weight -
             (cumulative_weight * remainder) / tot_weight;
    if (slots == 0)
        slots = 1;
    return served < slots;
}

/* ---- Envoy ---- */

double traffic_envoy_overload(uint32_t overall_active, uint32_t factor, double weight,
                              uint32_t host_active)
{
    const uint32_t total_slots = ((overall_active + 1) * factor + 99) / 100;
    double want = ceil(total_slots * weight);
    uint32_t slots = (uint32_t)want;
    if (slots < 1)
        slots = 1;
    return (double)host_active / slots;
}

/* std::mt19937: the standard's mersenne_twister_engine<uint_fast32_t, 32,
 * 624, 397, 31, 0x9908b0df, 11, 0xffffffff, 7, 0x9d2c5680, 15, 0xefc60000,
 * 18, 1812433253>, seeded with value mod 2^32. */
typedef struct mt19937 {
    uint32_t x[624];
    unsigned i;
} mt19937;

static void mt_seed(mt19937 *m, uint64_t seed)
{
    m->x[0] = (uint32_t)seed;
    for (uint32_t i = 1; i < 624; i++)
        m->x[i] = 1812433253u * (m->x[i - 1] ^ (m->x[i - 1] >> 30)) + i;
    m->i = 624;
}

static uint32_t mt_next(mt19937 *m)
{
    if (m->i >= 624) {
        for (unsigned k = 0; k < 624; k++) {
            uint32_t y = (m->x[k] & 0x80000000u) | (m->x[(k + 1) % 624] & 0x7fffffffu);
            m->x[k] = m->x[(k + 397) % 624] ^ (y >> 1) ^ (y & 1 ? 0x9908b0dfu : 0);
        }
        m->i = 0;
    }
    uint32_t y = m->x[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* chooseHost's uniform_int: [0, k) by division, redrawn past the top. */
static uint32_t envoy_uniform(mt19937 *m, uint32_t k)
{
    uint32_t x = k;
    while (x >= k)
        x = (uint32_t)(mt_next(m) / ((UINT64_C(0xffffffff) + 1u) / k));
    return x;
}

/* The shuffle, made as far as it is walked: host_index lives in scratch
 * (identity outside the positions touched, which are put back). */
typedef struct envoy_walk {
    mt19937 mt;
    uint32_t *idx, n, i;
    uint32_t *touched, ntouched;
} envoy_walk;

static void envoy_walk_start(envoy_walk *w, uint64_t hash, uint32_t n, uint32_t *scratch,
                             uint32_t *touched)
{
    mt_seed(&w->mt, hash);
    w->idx = scratch;
    w->n = n;
    w->i = 0;
    w->touched = touched;
    w->ntouched = 0;
}

static uint32_t envoy_walk_next(envoy_walk *w)
{
    uint32_t i = w->i++, j = envoy_uniform(&w->mt, w->n - i);
    uint32_t t = w->idx[i];
    w->idx[i] = w->idx[i + j];
    w->idx[i + j] = t;
    w->touched[w->ntouched++] = i;
    w->touched[w->ntouched++] = i + j;
    return w->idx[i];
}

static void envoy_walk_end(envoy_walk *w)
{
    for (uint32_t k = 0; k < w->ntouched; k++)
        w->idx[w->touched[k]] = w->touched[k];
    w->ntouched = 0;
}

void traffic_envoy_order(uint64_t hash, uint32_t num_hosts, uint32_t *scratch, uint32_t *out,
                         uint32_t count)
{
    envoy_walk w;
    envoy_walk_start(&w, hash, num_hosts, scratch, scratch + num_hosts);
    for (uint32_t c = 0; c < count; c++)
        out[c] = envoy_walk_next(&w);
    envoy_walk_end(&w);
}

/* ---- the replay ---- */

typedef struct replay {
    const traffic_model *m;
    uint32_t *active; /* in flight per node */
    uint32_t total;   /* in flight in all */
    uint64_t probes;
    /* HAProxy and MTZ: the next point of another node (npts: the end) */
    uint32_t *skip;
    /* HAProxy */
    uint32_t *eweight, *cumw, tot_weight;
    /* Envoy */
    double *nweight;
    uint32_t *scratch, *touched;
    uint32_t *cache_of; /* per key: its entry in cache + 1, 0 for none */
    uint32_t *cache;    /* TRAFFIC_ENVOY_CACHE host indexes per entry */
    size_t ncache, cache_cap;
    /* MTZ */
    double wsum;
} replay;

static int haproxy_prepare(replay *r)
{
    const traffic_model *m = r->m;
    r->eweight = malloc(m->n * sizeof *r->eweight);
    r->cumw = malloc(m->n * sizeof *r->cumw);
    if (!r->eweight || !r->cumw)
        return RINGSIM_ENOMEM;
    r->tot_weight = 0;
    for (size_t i = 0; i < m->n; i++) { /* recount_servers */
        r->eweight[i] = (uint32_t)m->weight[i] * HAPROXY_BE_WEIGHT_SCALE;
        r->cumw[i] = r->tot_weight;
        r->tot_weight += r->eweight[i];
    }
    return 0;
}

static inline bool haproxy_ok(const replay *r, uint32_t s)
{
    return traffic_haproxy_eligible(r->total, r->m->factor, r->tot_weight, r->cumw[s],
                                    r->eweight[s], r->active[s]);
}

/* chash_get_server_hash from the nearest point: while the server is not
 * eligible, the next point (eb32_next), wrapping to the first; at the
 * second wrap the loop stops with the server it stands on, eligible or
 * not.  A run of points of one server is one probe (its eligibility does
 * not change within a walk). */
static uint32_t haproxy_choose(replay *r, uint32_t start)
{
    const traffic_model *m = r->m;
    size_t i = start;
    uint32_t s = m->pt_node[i];
    int loop = 0;
    r->probes++;
    while (!haproxy_ok(r, s)) {
        size_t j = r->skip[i];
        if (j == m->npts) {
            if (++loop > 1)
                break; /* the last point's server: s */
            j = 0;
        }
        i = j;
        s = m->pt_node[i];
        r->probes++;
    }
    return s;
}

static inline double envoy_of(const replay *r, uint32_t h)
{
    return traffic_envoy_overload(r->total, r->m->factor, r->nweight[h], r->active[h]);
}

/* The key's cached start of its shuffle, made on its first overload. */
static const uint32_t *envoy_cached(replay *r, uint32_t key)
{
    const traffic_model *m = r->m;
    if (r->cache_of[key])
        return &r->cache[(size_t)(r->cache_of[key] - 1) * TRAFFIC_ENVOY_CACHE];
    uint32_t len = m->n < TRAFFIC_ENVOY_CACHE ? (uint32_t)m->n : TRAFFIC_ENVOY_CACHE;
    /* an entry is a row of TRAFFIC_ENVOY_CACHE nodes */
    if (vec_reserve(&r->cache, &r->cache_cap, r->ncache + 1, TRAFFIC_ENVOY_CACHE * sizeof *r->cache,
                    1024))
        return NULL; /* walk without the cache */
    uint32_t *e = &r->cache[r->ncache * TRAFFIC_ENVOY_CACHE];
    envoy_walk w;
    envoy_walk_start(&w, m->hash[key], (uint32_t)m->n, r->scratch, r->touched);
    for (uint32_t c = 0; c < len; c++)
        e[c] = envoy_walk_next(&w);
    envoy_walk_end(&w);
    r->cache_of[key] = (uint32_t)++r->ncache;
    return e;
}

/* BoundedLoadHashingLoadBalancer::chooseHost. */
static uint32_t envoy_choose(replay *r, uint32_t key)
{
    const traffic_model *m = r->m;
    uint32_t host = m->node[key];
    double of = envoy_of(r, host);
    r->probes++;
    if (of <= 1.0)
        return host;
    uint32_t least = host, n = (uint32_t)m->n;
    double least_of = of;
    const uint32_t *cached = envoy_cached(r, key);
    uint32_t len = cached ? (n < TRAFFIC_ENVOY_CACHE ? n : TRAFFIC_ENVOY_CACHE) : 0;
    envoy_walk w;
    bool walking = false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k;
        if (i < len) {
            k = cached[i];
        } else {
            if (!walking) { /* past the cache: the shuffle again from its start */
                envoy_walk_start(&w, m->hash[key], n, r->scratch, r->touched);
                for (uint32_t c = 0; c < i; c++)
                    envoy_walk_next(&w);
                walking = true;
            }
            k = envoy_walk_next(&w);
        }
        if (k == host)
            continue;
        of = envoy_of(r, k);
        r->probes++;
        if (of <= 1.0) {
            least = k;
            break;
        }
        if (least_of > of) {
            least = k;
            least_of = of;
        }
    }
    if (walking)
        envoy_walk_end(&w);
    return least;
}

/* MTZ: the first node clockwise from the key's point with room. */
static uint32_t mtz_choose(replay *r, uint32_t key)
{
    const traffic_model *m = r->m;
    /* ceil(f m w / (100 W)): one rounding of a quotient of whole numbers
     * below 2^53 (whole weights), so the ceiling is exact. */
    double fm = (double)m->factor * ((double)r->total + 1), den = 100.0 * r->wsum;
    size_t i = m->point[key];
    uint32_t s = m->pt_node[i];
    for (size_t steps = 0; steps <= m->npts; steps++) {
        r->probes++;
        if ((double)r->active[s] < ceil(fm * m->weight[s] / den))
            return s;
        size_t j = r->skip[i];
        i = j == m->npts ? 0 : j;
        s = m->pt_node[i];
        if (i == m->point[key])
            break;
    }
    return m->node[key]; /* no room anywhere: cannot happen with c > 1 */
}

/* Where the rule sends a request for key, given what is in flight. */
static uint32_t choose(replay *r, uint32_t key)
{
    switch (r->m->rule) {
    case PLACE_BOUND_HAPROXY:
        return haproxy_choose(r, r->m->point[key]);
    case PLACE_BOUND_ENVOY:
        return envoy_choose(r, key);
    case PLACE_BOUND_MTZ:
        return mtz_choose(r, key);
    default:
        r->probes++;
        return r->m->node[key];
    }
}

static void replay_free(replay *r)
{
    free(r->active);
    free(r->skip);
    free(r->eweight);
    free(r->cumw);
    free(r->nweight);
    free(r->scratch);
    free(r->touched);
    free(r->cache_of);
    free(r->cache);
}

static int replay_prepare(replay *r, const traffic_model *m)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->active = calloc(m->n + 1, sizeof *r->active);
    if (!r->active)
        return RINGSIM_ENOMEM;
    if (!m->factor || m->rule == PLACE_BOUND_NONE)
        return 0;
    if (m->rule == PLACE_BOUND_HAPROXY || m->rule == PLACE_BOUND_MTZ) {
        r->skip = malloc((m->npts + 1) * sizeof *r->skip);
        if (!r->skip)
            return RINGSIM_ENOMEM;
        uint32_t next = (uint32_t)m->npts;
        for (size_t i = m->npts; i-- > 0;) {
            r->skip[i] = next;
            if (i && m->pt_node[i - 1] != m->pt_node[i])
                next = (uint32_t)i;
        }
    }
    if (m->rule == PLACE_BOUND_HAPROXY)
        return haproxy_prepare(r);
    if (m->rule == PLACE_BOUND_MTZ) {
        for (size_t i = 0; i < m->n; i++)
            r->wsum += m->weight[i];
        return 0;
    }
    /* Envoy */
    double sum = 0;
    for (size_t i = 0; i < m->n; i++)
        sum += m->weight[i];
    r->nweight = malloc(m->n * sizeof *r->nweight);
    r->scratch = malloc(m->n * sizeof *r->scratch);
    r->touched = malloc(2 * m->n * sizeof *r->touched + 1);
    r->cache_of = calloc(m->nkeys, sizeof *r->cache_of);
    if (!r->nweight || !r->scratch || !r->touched || !r->cache_of)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < m->n; i++) {
        r->nweight[i] = m->weight[i] * 1.0 / sum;
        r->scratch[i] = (uint32_t)i;
    }
    return 0;
}

void traffic_result_clear(traffic_result *r)
{
    free(r->node);
    free(r->serves);
    free(r->sample_at);
    free(r->timeline);
    memset(r, 0, sizeof *r);
}

int traffic_replay(const traffic_model *m, const traffic_params *p, traffic_progress_fn fn,
                   void *ud, traffic_result *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = traffic_params_check(p, err);
    if (rc)
        return rc;
    if (!m->nkeys) /* no node (every one down) is a replay of unserved requests */
        return rs_fail(err, RINGSIM_EPARAM, "a replay needs at least one key");
    bool bounded = m->factor && m->rule != PLACE_BOUND_NONE &&
                   (m->rule == PLACE_BOUND_ENVOY || m->npts > 0);
    traffic_model mm = *m;
    if (!bounded)
        mm.rule = PLACE_BOUND_NONE;
    out->rule = mm.rule;
    out->factor = bounded ? m->factor : 0;
    out->n = m->n;
    out->requests = p->requests;
    out->node = calloc(m->n + 1, sizeof *out->node);
    out->serves = calloc(m->n + 1, sizeof *out->serves);
    for (size_t i = 0; out->serves && i < m->n; i++)
        out->serves[i] = m->weight[i] > 0;
    uint32_t ns = m->n ? p->samples : 0;
    if (ns && (uint64_t)ns * m->n > TRAFFIC_MAX_TIMELINE)
        ns = (uint32_t)(TRAFFIC_MAX_TIMELINE / m->n);
    if (ns > p->requests)
        ns = (uint32_t)p->requests;
    out->nsamples = ns;
    out->sample_at = ns ? malloc(ns * sizeof *out->sample_at) : NULL;
    out->timeline = ns ? malloc((size_t)ns * m->n * sizeof *out->timeline) : NULL;
    replay r;
    alias a = {0};
    uint32_t *flight = NULL; /* the node of each request in flight */
    size_t fcap = 0;
    if (!out->node || !out->serves || (ns && (!out->sample_at || !out->timeline)) ||
        replay_prepare(&r, &mm) || alias_build(&a, m->share, m->nkeys)) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory for the replay");
        goto done;
    }
    rng g;
    rng_seed(&g, p->seed);
    const double c = p->concurrency;
    uint64_t next_sample = ns ? (p->requests * 1) / ns : UINT64_MAX;
    uint32_t taken = 0;
    for (uint64_t q = 0; q < p->requests; q++) {
        /* departures before this arrival */
        for (;;) {
            double k = (double)r.total, u = rng_unit(&g) * (k + c);
            if (!(u < k))
                break;
            size_t at = (size_t)u;
            if (at >= r.total)
                at = r.total - 1;
            uint32_t node = flight[at];
            flight[at] = flight[--r.total];
            r.active[node]--;
        }
        uint32_t key = alias_draw(&a, rng_next(&g)), own = m->node[key];
        if (own == TRAFFIC_UNSERVED) { /* nobody to send it to */
            out->unserved++;
            goto next;
        }
        uint32_t to = choose(&r, key);
        if (m->observe)
            m->observe(m->observe_ud, key, to, r.active, r.total);
        if (vec_reserve(&flight, &fcap, (size_t)r.total + 1, sizeof *flight, 1024)) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory for the requests in flight");
            goto done;
        }
        flight[r.total++] = to;
        traffic_node_stat *t = &out->node[to];
        t->handled++;
        if (++r.active[to] > t->peak)
            t->peak = r.active[to];
        out->node[own].own++;
        if (to != own) {
            out->node[own].sent_away++;
            out->sent_away++;
        }
    next:
        if (q + 1 == next_sample) {
            out->sample_at[taken] = q + 1;
            memcpy(&out->timeline[(size_t)taken * m->n], r.active, m->n * sizeof *r.active);
            taken++;
            next_sample = taken < ns ? (p->requests * (taken + 1)) / ns : UINT64_MAX;
        }
        if (fn && ((q + 1) % TRAFFIC_PROGRESS_EVERY == 0 || q + 1 == p->requests) &&
            fn(ud, q + 1, p->requests)) {
            rc = rs_fail(err, RINGSIM_ECANCELED, "the replay was cancelled");
            goto done;
        }
    }
    out->probes = r.probes;
done:
    free(flight);
    alias_free(&a);
    replay_free(&r);
    return rc;
}

/* ---- the engine's face ---- */

typedef struct collect {
    const placement *pl;
    hasher *h;
    size_t n, cap;
    double *share;
    uint32_t *node, *point;
    uint64_t *hash;
    bool want_point, want_hash;
    sim *s;
} collect;

/* A request goes to the node that serves its key: the owner by placement,
 * or with nodes down whoever the system's rule names (served_by); nobody
 * when every node of its list is down.  The one place that says so. */
static uint32_t key_node(const place_key_info *k)
{
    return k->served < 0 ? TRAFFIC_UNSERVED : (uint32_t)k->served;
}

/* Arrays for cap keys (more come if the store holds more). */
static int collect_room(collect *c, size_t cap)
{
    if (vec_realloc(&c->share, cap, sizeof *c->share) || vec_realloc(&c->node, cap, sizeof *c->node) ||
        (c->want_point && vec_realloc(&c->point, cap, sizeof *c->point)) ||
        (c->want_hash && vec_realloc(&c->hash, cap, sizeof *c->hash)))
        return RINGSIM_ENOMEM;
    c->cap = cap;
    return 0;
}

static int collect_key(void *ud, const char *key, size_t len, double share)
{
    collect *c = ud;
    size_t cap;
    if (c->n == c->cap && (vec_next_cap(c->cap, c->n + 1, 4096, &cap) || collect_room(c, cap)))
        return RINGSIM_ENOMEM;
    place_key_info k;
    place_key(c->pl, c->h, key, len, &k);
    c->share[c->n] = share;
    c->node[c->n] = key_node(&k);
    if (c->want_point)
        c->point[c->n] = k.point < 0 ? 0 : (uint32_t)k.point;
    if (c->want_hash)
        c->hash[c->n] = k.hash;
    c->n++;
    return c->n % TRAFFIC_PROGRESS_EVERY == 0 ? sim__poll(c->s, NULL) : 0;
}

static int run_progress(void *ud, uint64_t done, uint64_t total)
{
    rs_error e;
    return sim__progress(ud, "traffic", done, total, &e) != 0;
}

/* A result over the serving layout's nodes, moved to p's nodes (map[i]:
 * p's index of node i); the others handled nothing. */
static int remap_result(traffic_result *r, const size_t *map, size_t full, rs_error *err)
{
    traffic_node_stat *node = calloc(full + 1, sizeof *node);
    bool *serves = calloc(full + 1, sizeof *serves);
    uint32_t *tl = r->nsamples ? calloc((size_t)r->nsamples * full, sizeof *tl) : NULL;
    if (!node || !serves || (r->nsamples && !tl)) {
        free(node);
        free(serves);
        free(tl);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++) {
        node[map[i]] = r->node[i];
        serves[map[i]] = r->serves[i];
        for (uint32_t j = 0; j < r->nsamples; j++)
            tl[(size_t)j * full + map[i]] = r->timeline[(size_t)j * r->n + i];
    }
    free(r->node);
    free(r->serves);
    free(r->timeline);
    r->node = node;
    r->serves = serves;
    r->timeline = tl;
    r->n = full;
    return 0;
}

int traffic_run(sim *s, const traffic_params *p, traffic_result *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = traffic_params_check(p, err);
    if (rc)
        return rc;
    const place_config *cfg = sim_config(s);
    int param;
    place_bound rule = place_bound_of(cfg, &param);
    int64_t factor = rule != PLACE_BOUND_NONE ? cfg->param[param] : 0;
    if (p->factor >= 0 && rule != PLACE_BOUND_NONE) {
        place_config probe = *cfg;
        probe.param[param] = p->factor;
        if ((rc = place_config_check(&probe, err)))
            return rc;
        factor = p->factor;
    } else if (p->factor > 0) {
        return rs_fail(err, RINGSIM_EPARAM,
                       "factor: %s has no bounded loads (haproxy, envoy-ring and maglev take "
                       "hash_balance_factor, ring balance_factor)",
                       cfg->algorithm);
    }
    size_t n = sim_node_count(s);
    if (!n)
        return rs_fail(err, RINGSIM_EPARAM, "a replay needs a node to send requests to");
    if (sim_key_count(s) <= 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "a replay draws its requests from the stored keys: there is none");
    /* With nodes down, the layout that serves: the algorithms that build
     * theirs again from the serving nodes (HAProxy's tree, Envoy's ring
     * and table, ketama, nutcracker, rendezvous) are replayed on that
     * layout, its nodes mapped back; the others walk past the down nodes
     * (served_by), which have no room under MTZ (weight 0). */
    const size_t *map;
    const placement *pl = place_serving_layout(sim_placement(s), &map);
    const place_node *pn = sim_place_nodes(s);
    size_t npts = place_point_count(pl), full = n;
    n = place_node_count(pl);
    double *weight = malloc((n + 1) * sizeof *weight);
    uint32_t *pt_node = malloc((npts + 1) * sizeof *pt_node);
    collect c = {.pl = pl, .h = sim_hasher(s), .s = s};
    c.want_point = factor && (rule == PLACE_BOUND_HAPROXY || rule == PLACE_BOUND_MTZ);
    c.want_hash = factor && rule == PLACE_BOUND_ENVOY;
    if (!weight || !pt_node) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const place_node *x = &pn[map ? map[i] : i];
        weight[i] = x->down && !place_in_panic(pl) ? 0 : x->weight;
    }
    for (size_t i = 0; i < npts; i++)
        pt_node[i] = place_point_node(pl, i);
    /* HAProxy counts the weights of the servers in its tree only
     * (recount_servers: tot_weight is the active servers', or the
     * backups' in use): a server with no point takes no slot. */
    if (rule == PLACE_BOUND_HAPROXY && npts) {
        bool *in = calloc(n + 1, sizeof *in);
        if (!in) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < npts; i++)
            in[pt_node[i]] = true;
        for (size_t i = 0; i < n; i++)
            weight[i] = in[i] ? weight[i] : 0;
        free(in);
    }
    if (collect_room(&c, (size_t)sim_key_count(s))) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory for the keys");
        goto done;
    }
    if ((rc = sim_workload_each(s, collect_key, &c, err))) {
        if (rc == RINGSIM_ENOMEM || rc == RINGSIM_ECANCELED)
            rc = rs_fail(err, rc, "%s",
                         rc == RINGSIM_ENOMEM ? "out of memory reading the keys"
                                              : "the replay was cancelled");
        goto done;
    }
    traffic_model m = {rule,    (uint32_t)factor, n,       weight, npts, pt_node, c.n,
                       c.share, c.node,           c.point, c.hash, NULL, NULL};
    rc = traffic_replay(&m, p, run_progress, s, out, err);
    if (!rc && map)
        rc = remap_result(out, map, full, err);
done:
    free(weight);
    free(pt_node);
    free(c.share);
    free(c.node);
    free(c.point);
    free(c.hash);
    return rc;
}

/* Against each node's fair share (docs/api.md v4, sim_balance): w the
 * fair-share weights by placement index (a down node, or a backup that
 * does not serve, is no part of the load a balancer spreads). */
static double max_over_mean(const traffic_result *r, const double *w, bool peak)
{
    double *v = malloc((r->n + 1) * sizeof *v), mom = 0, cv = 0;
    if (!v)
        return 0;
    for (size_t i = 0; i < r->n; i++)
        v[i] = (double)(peak ? r->node[i].peak : r->node[i].handled);
    sim_balance(v, w, r->n, &mom, &cv);
    free(v);
    return mom;
}

json_t *traffic_json(sim *s, const traffic_params *p, const traffic_result *r, rs_error *err)
{
    static const char *const rules[] = {"none", "haproxy", "envoy", "mtz"};
    sim_node_view *v = NULL;
    size_t nv = 0;
    if (sim_nodes(s, &v, &nv, err))
        return NULL;
    double *w = calloc(r->n + 1, sizeof *w), wsum = 0, served = 0;
    if (!w) {
        free(v);
        rs_fail(err, RINGSIM_ENOMEM, "out of memory building the answer");
        return NULL;
    }
    sim_fair_weights(s, w, r->n < sim_node_count(s) ? r->n : sim_node_count(s));
    for (size_t i = 0; i < r->n; i++) {
        wsum += w[i];
        served += (double)r->node[i].handled;
    }
    json_t *nodes = json_array(), *tl = r->nsamples ? json_array() : NULL;
    for (size_t k = 0; nodes && k < nv; k++) {
        size_t i = v[k].index;
        const traffic_node_stat *t = &r->node[i];
        /* its share of the served requests over its fair share */
        json_t *lof = w[i] > 0 && served > 0 ? json_real((double)t->handled / (served * w[i] / wsum))
                      : w[i] > 0             ? json_real(0)
                                             : json_null();
        json_array_append_new(
            nodes, json_pack("{s:s%, s:I, s:I, s:f, s:f, s:o}", "name", v[k].name, v[k].len,
                             "handled", (json_int_t)t->handled, "peak_in_flight", (json_int_t)t->peak,
                             "sent_away", t->own ? (double)t->sent_away / (double)t->own : 0.0,
                             "fair_share", wsum > 0 ? w[i] / wsum : 0.0, "load_over_fair", lof));
    }
    /* timeline: {"at": [request…], "in_flight": [[per node, in nodes' order]…]} */
    json_t *at = tl ? json_array() : NULL;
    for (uint32_t j = 0; tl && at && j < r->nsamples; j++) {
        json_t *row = json_array();
        for (size_t k = 0; row && k < nv; k++)
            json_array_append_new(row, json_integer(r->timeline[(size_t)j * r->n + v[k].index]));
        json_array_append_new(at, json_integer((json_int_t)r->sample_at[j]));
        json_array_append_new(tl, row);
    }
    free(v);
    json_t *o = json_pack(
        "{s:I, s:f, s:I, s:o*, s:f, s:f, s:f, s:f, s:I, s:s, s:s, s:I}", "requests",
        (json_int_t)r->requests, "concurrency", p->concurrency, "seed", (json_int_t)p->seed,
        "nodes", nodes, "requests_max_over_mean", max_over_mean(r, w, false),
        "peak_in_flight_max_over_mean", max_over_mean(r, w, true), "sent_away",
        r->requests ? (double)r->sent_away / (double)r->requests : 0.0, "probes_per_request",
        r->requests ? (double)r->probes / (double)r->requests : 0.0, "unserved",
        (json_int_t)r->unserved, "algorithm", sim_config(s)->algorithm, "rule", rules[r->rule],
        "factor", (json_int_t)r->factor);
    free(w);
    if (o && tl)
        json_object_set_new(o, "timeline", json_pack("{s:o, s:o}", "at", at, "in_flight", tl));
    else {
        json_decref(tl);
        json_decref(at);
    }
    if (!o)
        rs_fail(err, RINGSIM_ENOMEM, "out of memory building the answer");
    return o;
}

/* ---- one request at a time ---- */

struct traffic_stepper {
    traffic_model m;
    replay r;
};

int traffic_stepper_new(traffic_stepper **out, const traffic_model *m)
{
    traffic_stepper *s = calloc(1, sizeof *s);
    if (!s)
        return RINGSIM_ENOMEM;
    s->m = *m;
    if (!m->factor || (m->rule != PLACE_BOUND_ENVOY && !m->npts))
        s->m.rule = PLACE_BOUND_NONE;
    if (replay_prepare(&s->r, &s->m)) {
        traffic_stepper_free(s);
        return RINGSIM_ENOMEM;
    }
    *out = s;
    return 0;
}

uint32_t traffic_stepper_assign(traffic_stepper *s, uint32_t key)
{
    uint32_t to = choose(&s->r, key);
    s->r.active[to]++;
    s->r.total++;
    return to;
}

void traffic_stepper_release(traffic_stepper *s, uint32_t node)
{
    if (s->r.active[node]) {
        s->r.active[node]--;
        s->r.total--;
    }
}

void traffic_stepper_free(traffic_stepper *s)
{
    if (!s)
        return;
    replay_free(&s->r);
    free(s);
}
