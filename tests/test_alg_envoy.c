/*
 * test_alg_envoy.c - Envoy's RING_HASH and MAGLEV cores against Envoy's own
 * unit tests.
 *
 * Envoy is not packaged in Debian, so the reference is the expectations that
 * Envoy's developers wrote into their tests, taken from Envoy's sources
 * (github.com/envoyproxy/envoy, main branch of 2025):
 *   [RH] test/extensions/load_balancing_policies/ring_hash/ring_hash_lb_test.cc
 *   [MG] test/extensions/load_balancing_policies/maglev/maglev_lb_test.cc
 *   [HS] test/common/common/hash_test.cc
 * and xxHash's published sanity vectors:
 *   [XX] github.com/Cyan4973/xxHash cli/xsum_sanity_check.c (XSUM_XXH64_testdata)
 * Each test names its source and the TEST() it reproduces.  In those tests a
 * host made with makeTestHost(info, "tcp://127.0.0.1:90") has the hash key
 * "127.0.0.1:90" (its address), and one made with makeTestHost(info, "90",
 * "tcp://...") and use_hostname_for_hashing has the key "90".  Most of them
 * choose a host through a TestLoadBalancerContext that hands the balancer a
 * precomputed 64-bit hash; those hashes go straight to the lookups here.
 * Locality-weighted tests are reproduced by feeding the cores the weights
 * that Envoy's normalizeLocalityWeights() computes (done below, in the same
 * order of double operations).
 *
 * The rest are properties: weights honoured within bounds derived in the
 * tests, tables full, builds deterministic, the ketama search equal to
 * alg_successor on random rings (fixed seed, printed on failure).
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's envoy-ring and
 * maglev).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <xxhash.h>

#include "alg_envoy.h"
#include "alg_envoy_ring.h"
#include "alg_maglev.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- helpers */

/* Hosts named "127.0.0.1:<port>" (or any prefix) with weights. */
typedef struct hostset {
    size_t n;
    char names[1024][32];
    alg_node node[1024];
} hostset;

static hostset *hosts_make(const char *prefix, unsigned first_port, size_t n, const double *weights)
{
    hostset *h = calloc(1, sizeof *h);
    assert_non_null(h);
    assert_true(n <= NELEM(h->node));
    h->n = n;
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(h->names[i], sizeof h->names[i], "%s%u", prefix, first_port + (unsigned)i);
        h->node[i] = (alg_node){h->names[i], (size_t)len, weights ? weights[i] : 1.0};
    }
    return h;
}

/* Envoy's normalizeLocalityWeights() (thread_aware_lb_impl.cc): a host of
 * locality l gets host_weight * (loc_weight[l] / loc_sum) / host_sum(l), in
 * the order of the localities and of their hosts; localities of weight 0
 * are left out; min starts at 1.0, max at 0.0. */
typedef struct locality {
    uint32_t weight;
    const size_t *host; /* indexes into the host set, in order */
    size_t n;
} locality;

typedef struct normalized {
    alg_node node[1024];
    double w[1024];
    size_t orig[1024]; /* host-set index of each entry */
    envoy_host_weights hw;
} normalized;

static normalized *normalize_localities(const hostset *hs, const locality *loc, size_t nloc)
{
    normalized *r = calloc(1, sizeof *r);
    assert_non_null(r);
    uint64_t sum = 0;
    for (size_t l = 0; l < nloc; l++)
        sum += loc[l].weight;
    double min = 1.0, max = 0.0;
    size_t k = 0;
    for (size_t l = 0; sum && l < nloc; l++) {
        if (loc[l].weight == 0)
            continue;
        const double nlw = (double)loc[l].weight / (double)sum;
        uint64_t hsum = 0;
        for (size_t j = 0; j < loc[l].n; j++)
            hsum += (uint64_t)hs->node[loc[l].host[j]].weight;
        for (size_t j = 0; j < loc[l].n; j++) {
            size_t h = loc[l].host[j];
            const double w = hs->node[h].weight * nlw / (double)hsum;
            r->node[k] = hs->node[h];
            r->w[k] = w;
            r->orig[k] = h;
            min = w < min ? w : min;
            max = w > max ? w : max;
            k++;
        }
    }
    r->hw = (envoy_host_weights){r->node, r->w, k, min, max};
    return r;
}

/* The plain host set through envoy_normalize_weights (orig = identity). */
static normalized *normalize_plain(const hostset *hs)
{
    normalized *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(envoy_normalize_weights(hs->node, hs->n, r->w, &r->hw, NULL), 0);
    for (size_t i = 0; i < hs->n; i++)
        r->orig[i] = i;
    return r;
}

typedef struct ring {
    alg_point *p;
    size_t n;
    envoy_ring_stats st;
} ring;

static ring ring_make(const normalized *nw, uint64_t min, uint64_t max)
{
    ring r = {0};
    rs_error err = {0};
    int rc = envoy_ring_build_weighted(&nw->hw, min, max, &r.p, &r.n, &r.st, &err);
    if (rc)
        fail_msg("envoy_ring_build_weighted: %d %s", rc, err.msg);
    return r;
}

/* Host-set index of the host Envoy's chooseHost(hash) returns. */
static size_t ring_host(const ring *r, const normalized *nw, uint64_t hash)
{
    return nw->orig[r->p[envoy_ring_lookup(r->p, r->n, hash, 0)].node];
}

/* The worker's chooseHost() retry loop (thread_aware_lb_impl.cc): attempts
 * 0..retries, stop at the first host the predicate accepts, else the last. */
static size_t ring_host_retry(const ring *r, const normalized *nw, uint64_t hash, uint32_t retries,
                              const int *reject)
{
    size_t h = 0;
    for (uint32_t a = 0; a <= retries; a++) {
        h = nw->orig[r->p[envoy_ring_lookup(r->p, r->n, hash, a)].node];
        if (!reject[h])
            return h;
    }
    return h;
}

typedef struct maglev {
    uint32_t *t;
    uint64_t m;
    maglev_stats st;
} maglev;

static maglev maglev_make(const normalized *nw, uint64_t m)
{
    maglev g = {.m = m};
    rs_error err = {0};
    int rc = maglev_build_weighted(&nw->hw, m, &g.t, &g.st, &err);
    if (rc)
        fail_msg("maglev_build_weighted: %d %s", rc, err.msg);
    return g;
}

static size_t maglev_host(const maglev *g, const normalized *nw, uint64_t hash)
{
    return nw->orig[maglev_lookup(g->t, g->m, hash)];
}

static size_t maglev_host_retry(const maglev *g, const normalized *nw, uint64_t hash,
                                uint32_t retries, const int *reject)
{
    size_t h = 0;
    for (uint32_t a = 0; a <= retries; a++) {
        h = nw->orig[maglev_lookup_attempt(g->t, g->m, hash, a)];
        if (!reject[h])
            return h;
    }
    return h;
}

/* splitmix64, for the random tests (fixed seeds, printed on failure). */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------- hash vectors */

/* [XX] XSUM_XXH64_testdata, on XSUM_fillTestBuffer's bytes.  Envoy's
 * HashUtil::xxHash64 is XXH64, and Maglev's skip uses seed 1: the seeded
 * vectors check that libxxhash honours seeds. */
static void test_xxh64_sanity_vectors(void **state)
{
    (void)state;
    const uint64_t prime32 = 2654435761u, prime64 = 11400714785074694797ull;
    unsigned char buf[222];
    uint64_t gen = prime32;
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (unsigned char)(gen >> 56);
        gen *= prime64;
    }
    static const struct {
        size_t len;
        uint64_t seed, want;
    } v[] = {
        {0, 0, 0xEF46DB3751D8E999ull},
        {0, 2654435761u, 0xAC75FDA2929B17EFull},
        {1, 0, 0xE934A84ADB052768ull},
        {1, 2654435761u, 0x5014607643A9B4C3ull},
        {4, 0, 0x9136A0DCA57457EEull},
        {14, 0, 0x8282DCC4994E35C8ull},
        {14, 2654435761u, 0xC3BD6BF63DEB6DF0ull},
        {222, 0, 0xB641AE8CB691C174ull},
        {222, 2654435761u, 0x20CB8AB7AE10C14Aull},
    };
    for (size_t i = 0; i < NELEM(v); i++) {
        assert_int_equal(XXH64(buf, v[i].len, v[i].seed), v[i].want);
        if (v[i].seed == 0)
            assert_int_equal(envoy_key_hash((const char *)buf, v[i].len), v[i].want);
    }
}

/* [HS] TEST(Hash, xxHash). */
static void test_envoy_hash_util_vectors(void **state)
{
    (void)state;
    assert_int_equal(envoy_key_hash("foo", 3), 3728699739546630719ull);
    assert_int_equal(envoy_key_hash("bar", 3), 5234164152756840025ull);
    assert_int_equal(envoy_key_hash("foo\nbar", 7), 8917841378505826757ull);
    assert_int_equal(envoy_key_hash("lyft", 4), 4400747396090729504ull);
    assert_int_equal(envoy_key_hash("", 0), 17241709254077376921ull);
}

/* ------------------------------------------------------------- ring hash */

static void assert_ring(const ring *r, const normalized *nw, const uint64_t *hash,
                        const size_t *host, size_t n)
{
    assert_int_equal(r->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r->p[i].coord, hash[i]);
        assert_int_equal(nw->orig[r->p[i].node], host[i]);
    }
}

/* [RH] TEST_P(RingHashLoadBalancerTest, Basic) and BasicWithRetryHostPredicate:
 * six hosts 127.0.0.1:90..95, minimum_ring_size 12.  The "hash ring" table in
 * the test's comment is the whole ring; assert it point by point. */
static void test_ring_basic(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 6, NULL);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 12, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 12);
    assert_int_equal(r.st.min_hashes_per_host, 2);
    assert_int_equal(r.st.max_hashes_per_host, 2);
    static const uint64_t pos[] = {
        833437586790550860ull,   928266305478181108ull,   1033482794131418490ull,
        3551244743356806947ull,  3851675632748031481ull,  5583722120771150861ull,
        6311230543546372928ull,  7700377290971790572ull,  13144177310400110813ull,
        13444792449719432967ull, 15516499411664133160ull, 16117243373044804889ull};
    static const size_t port[] = {4, 2, 0, 5, 3, 1, 1, 3, 5, 2, 4, 0}; /* :94 :92 :90 ... */
    assert_ring(&r, nw, pos, port, 12);

    assert_int_equal(ring_host(&r, nw, 0), 4);
    assert_int_equal(ring_host(&r, nw, UINT64_MAX), 4);
    assert_int_equal(ring_host(&r, nw, 3551244743356806947ull), 5);
    assert_int_equal(ring_host(&r, nw, 3551244743356806948ull), 3);
    /* random() returning 16117243373044804880 when there is no context */
    assert_int_equal(ring_host(&r, nw, 16117243373044804880ull), 0);

    /* BasicWithRetryHostPredicate */
    int none[6] = {0}, all[6] = {1, 1, 1, 1, 1, 1}, not4[6] = {0, 0, 0, 0, 1, 0};
    assert_int_equal(ring_host_retry(&r, nw, 0, 2, none), 4); /* first attempt wins */
    assert_int_equal(ring_host_retry(&r, nw, 0, 2, not4), 2); /* next host on the ring */
    assert_int_equal(ring_host_retry(&r, nw, 0, 2, all), 0);  /* exhausted: last checked */
    assert_int_equal(ring_host_retry(&r, nw, 0, 13, all), 2); /* retries wrap the ring */
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] BasicWithHostname, BasicWithMetadataHashKey, BasicWithDoundedLoad
 * (the bounded load does not change the ring): hash keys "90".."95". */
static void test_ring_hostname(void **state)
{
    (void)state;
    hostset *hs = hosts_make("", 90, 6, NULL);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 12, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 12);
    assert_int_equal(r.st.min_hashes_per_host, 2);
    assert_int_equal(r.st.max_hashes_per_host, 2);
    static const uint64_t pos[] = {
        1975508444536362413ull,  2376063919839173711ull,  2386806903309390596ull,
        6749904478991551885ull,  6803900775736438537ull,  7225015537174310577ull,
        8787465352164086522ull,  11282020843382717940ull, 13723418369486627818ull,
        13776502110861797421ull, 14338313586354474791ull, 15364271037087512980ull};
    static const size_t host[] = {5, 5, 3, 4, 3, 2, 0, 2, 1, 0, 1, 4};
    assert_ring(&r, nw, pos, host, 12);
    assert_int_equal(ring_host(&r, nw, 0), 5);
    assert_int_equal(ring_host(&r, nw, UINT64_MAX), 5);
    assert_int_equal(ring_host(&r, nw, 7225015537174310577ull), 2);
    assert_int_equal(ring_host(&r, nw, 6803900775736438537ull), 3);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] BasicFailover: one host, minimum_ring_size 12 -> 12 hashes. */
static void test_ring_single_host(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 82, 1, NULL);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 12, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 12);
    assert_int_equal(r.st.min_hashes_per_host, 12);
    assert_int_equal(r.st.max_hashes_per_host, 12);
    assert_int_equal(r.n, 12);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] UnevenHosts: two hosts, minimum_ring_size 3 -> 2 hashes each, ring
 * size 4; then the set {:81, :82}. */
static void test_ring_uneven_hosts(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 80, 2, NULL);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 3, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 4);
    assert_int_equal(r.st.min_hashes_per_host, 2);
    assert_int_equal(r.st.max_hashes_per_host, 2);
    static const uint64_t pos1[] = {5454692015285649509ull, 7859399908942313493ull,
                                    13838424394637650569ull, 16064866803292627174ull};
    static const size_t host1[] = {0, 1, 0, 1};
    assert_ring(&r, nw, pos1, host1, 4);
    assert_int_equal(ring_host(&r, nw, 0), 0);
    free(r.p);
    free(nw);
    free(hs);

    hs = hosts_make("127.0.0.1:", 81, 2, NULL);
    nw = normalize_plain(hs);
    r = ring_make(nw, 3, ENVOY_RING_MAX_DEFAULT);
    static const uint64_t pos2[] = {7859399908942313493ull, 8241336090459785962ull,
                                    12882406409176325258ull, 16064866803292627174ull};
    static const size_t host2[] = {0, 1, 1, 0};
    assert_ring(&r, nw, pos2, host2, 4);
    assert_int_equal(ring_host(&r, nw, 0), 0);
    free(r.p);
    free(nw);
    free(hs);
}

/* Hashes -> expected host-set index, from the tests' node_hash_maps. */
typedef struct expect {
    uint64_t hash;
    size_t host;
} expect;

static const expect tiny_ring_123[] = {{928266305478181108ull, 2},   {4443673547860492590ull, 2},
                                       {5583722120771150861ull, 1},  {6311230543546372928ull, 1},
                                       {13444792449719432967ull, 2}, {16117243373044804889ull, 0}};

/* [RH] HostWeightedTinyRing: weights 1, 2, 3 on a ring of exactly 6. */
static void test_ring_host_weighted_tiny(void **state)
{
    (void)state;
    const double w[] = {1, 2, 3};
    hostset *hs = hosts_make("127.0.0.1:", 90, 3, w);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 6, 6);
    assert_int_equal(r.st.size, 6);
    assert_int_equal(r.st.min_hashes_per_host, 1);
    assert_int_equal(r.st.max_hashes_per_host, 3);
    for (size_t i = 0; i < NELEM(tiny_ring_123); i++)
        assert_int_equal(ring_host(&r, nw, tiny_ring_123[i].hash), tiny_ring_123[i].host);
    free(r.p);
    free(nw);
    free(hs);
}

/* Hits per host of `samples` hashes i * (UINT64_MAX / samples), as the
 * *LargeRing and *FractionalScale tests count them. */
static void count_hits(const ring *r, const normalized *nw, uint32_t samples, uint32_t *counts)
{
    for (uint32_t i = 0; i < samples; i++)
        counts[ring_host(r, nw, i * (UINT64_MAX / samples))]++;
}

/* [RH] HostWeightedLargeRing: weights 1, 2, 3, minimum_ring_size 6144. */
static void test_ring_host_weighted_large(void **state)
{
    (void)state;
    const double w[] = {1, 2, 3};
    hostset *hs = hosts_make("127.0.0.1:", 90, 3, w);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 6144, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 6144);
    assert_int_equal(r.st.min_hashes_per_host, 1024);
    assert_int_equal(r.st.max_hashes_per_host, 3072);
    uint32_t counts[3] = {0};
    count_hits(&r, nw, 6000, counts);
    assert_int_equal(counts[0], 987);
    assert_int_equal(counts[1], 1932);
    assert_int_equal(counts[2], 3081);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] LocalityWeightedTinyRing and LocalityWeightedLargeRing: one host per
 * locality, locality weights 1, 2, 3, 0 (the last host is left out). */
static void test_ring_locality_weighted(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 4, NULL);
    static const size_t h0[] = {0}, h1[] = {1}, h2[] = {2}, h3[] = {3};
    const locality loc[] = {{1, h0, 1}, {2, h1, 1}, {3, h2, 1}, {0, h3, 1}};
    normalized *nw = normalize_localities(hs, loc, 4);
    assert_int_equal(nw->hw.n, 3);

    ring r = ring_make(nw, 6, 6);
    assert_int_equal(r.st.size, 6);
    assert_int_equal(r.st.min_hashes_per_host, 1);
    assert_int_equal(r.st.max_hashes_per_host, 3);
    for (size_t i = 0; i < NELEM(tiny_ring_123); i++)
        assert_int_equal(ring_host(&r, nw, tiny_ring_123[i].hash), tiny_ring_123[i].host);
    free(r.p);

    r = ring_make(nw, 6144, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 6144);
    assert_int_equal(r.st.min_hashes_per_host, 1024);
    assert_int_equal(r.st.max_hashes_per_host, 3072);
    uint32_t counts[4] = {0};
    count_hits(&r, nw, 6000, counts);
    assert_int_equal(counts[0], 987);
    assert_int_equal(counts[1], 1932);
    assert_int_equal(counts[2], 3081);
    assert_int_equal(counts[3], 0);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] HostAndLocalityWeightedTinyRing and HostAndLocalityWeightedLargeRing:
 * :90, :91 (weights 1, 2) in a locality of weight 1, :92, :93 (1, 2) in one
 * of weight 2. */
static void test_ring_host_and_locality_weighted(void **state)
{
    (void)state;
    const double w[] = {1, 2, 1, 2};
    hostset *hs = hosts_make("127.0.0.1:", 90, 4, w);
    static const size_t a[] = {0, 1}, b[] = {2, 3};
    const locality loc[] = {{1, a, 2}, {2, b, 2}};
    normalized *nw = normalize_localities(hs, loc, 2);

    ring r = ring_make(nw, 9, 9);
    assert_int_equal(r.st.size, 9);
    assert_int_equal(r.st.min_hashes_per_host, 1);
    assert_int_equal(r.st.max_hashes_per_host, 4);
    static const expect e[] = {
        {928266305478181108ull, 2},   {3851675632748031481ull, 3},  {5583722120771150861ull, 1},
        {6311230543546372928ull, 1},  {7700377290971790572ull, 3},  {12559126875973811811ull, 3},
        {13444792449719432967ull, 2}, {13784988426630141778ull, 3}, {16117243373044804889ull, 0}};
    for (size_t i = 0; i < NELEM(e); i++)
        assert_int_equal(ring_host(&r, nw, e[i].hash), e[i].host);
    free(r.p);

    r = ring_make(nw, 9216, ENVOY_RING_MAX_DEFAULT);
    assert_int_equal(r.st.size, 9216);
    assert_int_equal(r.st.min_hashes_per_host, 1024);
    assert_int_equal(r.st.max_hashes_per_host, 4096);
    uint32_t counts[4] = {0};
    count_hits(&r, nw, 9000, counts);
    assert_int_equal(counts[0], 924);
    assert_int_equal(counts[1], 2009);
    assert_int_equal(counts[2], 2053);
    assert_int_equal(counts[3], 4014);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] SmallFractionalScale: four hosts on a ring of exactly 2: two hosts
 * get no point (and no traffic), min_hashes_per_host 0. */
static void test_ring_small_fractional_scale(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 4, NULL);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 2, 2);
    assert_int_equal(r.st.size, 2);
    assert_int_equal(r.st.min_hashes_per_host, 0);
    assert_int_equal(r.st.max_hashes_per_host, 1);
    uint32_t counts[4] = {0};
    count_hits(&r, nw, 1024, counts);
    uint32_t zeroes = 0, sum = 0;
    for (size_t i = 0; i < 4; i++) {
        zeroes += counts[i] == 0;
        sum += counts[i];
    }
    assert_int_equal(zeroes, 2);
    assert_int_equal(sum, 1024);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] LargeFractionalScale: two hosts on a ring of exactly 1023. */
static void test_ring_large_fractional_scale(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 2, NULL);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 1023, 1023);
    assert_int_equal(r.st.size, 1023);
    assert_int_equal(r.st.min_hashes_per_host, 511);
    assert_int_equal(r.st.max_hashes_per_host, 512);
    uint32_t counts[2] = {0};
    count_hits(&r, nw, 1023, counts);
    assert_int_equal(counts[0], 526);
    assert_int_equal(counts[1], 497);
    free(r.p);
    free(nw);
    free(hs);
}

/* The lopsided host set of [RH] LopsidedWeightSmallScale and [MG]
 * LocalityWeightedLopsided: 127.0.0.1:0 alone in a locality of weight 127,
 * 127.0.0.1:1 .. :1023 in one of weight 1. */
static normalized *lopsided(hostset **hs)
{
    *hs = hosts_make("127.0.0.1:", 0, 1024, NULL);
    static size_t heavy[1] = {0}, light[1023];
    for (size_t i = 0; i < 1023; i++)
        light[i] = i + 1;
    const locality loc[] = {{127, heavy, 1}, {1, light, 1023}};
    return normalize_localities(*hs, loc, 2);
}

/* [RH] LopsidedWeightSmallScale: ring of exactly 1024; :0 gets 1016 points
 * and every 128th light host one point. */
static void test_ring_lopsided(void **state)
{
    (void)state;
    hostset *hs;
    normalized *nw = lopsided(&hs);
    ring r = ring_make(nw, 1024, 1024);
    assert_int_equal(r.st.size, 1024);
    assert_int_equal(r.st.min_hashes_per_host, 0);
    assert_int_equal(r.st.max_hashes_per_host, 1016);
    static const expect e[] = {{11664790346325243808ull, 1},   {15894554872961148518ull, 128},
                               {13958138884277627155ull, 256}, {15803774069438192949ull, 384},
                               {3829253010855396576ull, 512},  {17918147347826565154ull, 640},
                               {6442769608292299103ull, 768},  {5881074926069334434ull, 896}};
    for (size_t i = 0; i < NELEM(e); i++)
        assert_int_equal(ring_host(&r, nw, e[i].hash), e[i].host);
    free(r.p);
    free(nw);
    free(hs);
}

/* [RH] BadRingSizeBounds, with Envoy's message; plus the proto's limits. */
static void test_ring_params(void **state)
{
    (void)state;
    rs_error err = {0};
    assert_int_equal(envoy_ring_check_params(20, 10, &err), RINGSIM_EPARAM);
    assert_string_equal(err.msg, "ring hash: minimum_ring_size (20) > maximum_ring_size (10)");
    assert_int_equal(envoy_ring_check_params(1, 8388609, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "8388608"));
    assert_int_equal(envoy_ring_check_params(8388609, 8388609, &err), RINGSIM_EPARAM);
    assert_int_equal(envoy_ring_check_params(0, 10, &err), RINGSIM_EPARAM);
    assert_int_equal(envoy_ring_check_params(8388608, 8388608, &err), 0);
    assert_int_equal(envoy_ring_check_params(ENVOY_RING_MIN_DEFAULT, ENVOY_RING_MAX_DEFAULT, &err),
                     0);

    hostset *hs = hosts_make("n", 0, 2, (const double[]){1, 1.5});
    alg_point *p = (alg_point *)&err; /* must be reset to NULL */
    size_t np = 7;
    assert_int_equal(envoy_ring_build(hs->node, 2, 1024, 8388608, &p, &np, &err), RINGSIM_EPARAM);
    assert_null(p);
    assert_int_equal(np, 0);
    assert_string_equal(err.msg,
                        "envoy weights are whole numbers from 1 to 4294967295: \"n1\" has 1.5");
    hs->node[1].weight = 0.5;
    assert_int_equal(envoy_ring_build(hs->node, 2, 1024, 8388608, &p, &np, &err), RINGSIM_EPARAM);
    hs->node[0].weight = 4294967295.0;
    hs->node[1].weight = 1;
    assert_int_equal(envoy_ring_build(hs->node, 2, 1024, 8388608, &p, &np, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "sum"));
    /* the largest sum Envoy takes */
    hs->node[0].weight = 4294967294.0;
    assert_int_equal(envoy_ring_build(hs->node, 2, 1, 1024, &p, &np, &err), 0);
    assert_true(np >= 2);
    free(p);
    /* no host: Envoy's empty ring */
    assert_int_equal(envoy_ring_build(hs->node, 0, 1024, 8388608, &p, &np, &err), 0);
    assert_null(p);
    assert_int_equal(np, 0);
    free(hs);
}

/* The plain entry point builds what the weighted one builds. */
static void test_ring_build_plain_equals_weighted(void **state)
{
    (void)state;
    const double w[] = {3, 1, 4, 1, 5, 9, 2, 6};
    hostset *hs = hosts_make("10.0.0.", 1, 8, w);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, ENVOY_RING_MIN_DEFAULT, ENVOY_RING_MAX_DEFAULT);
    alg_point *p;
    size_t np;
    assert_int_equal(envoy_ring_build(hs->node, 8, ENVOY_RING_MIN_DEFAULT, ENVOY_RING_MAX_DEFAULT,
                                      &p, &np, NULL),
                     0);
    assert_int_equal(np, r.n);
    assert_memory_equal(p, r.p, np * sizeof *p);
    free(p);
    free(r.p);
    free(nw);
    free(hs);
}

/* Property: every point is where Envoy puts it, and each host's number of
 * points differs from scale * w by less than one (the running sums give a
 * host ceil(T_i) - ceil(T_{i-1}) points for cumulative targets T). */
static void test_ring_points_and_counts(void **state)
{
    (void)state;
    const double w[] = {1, 7, 2, 2, 30, 1, 5};
    hostset *hs = hosts_make("backend-", 1, 7, w);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 5000, ENVOY_RING_MAX_DEFAULT);
    const double min_w = nw->hw.min_weight;
    const double scale = ceil(min_w * 5000) / min_w;
    uint64_t count[7] = {0};
    for (size_t i = 0; i < r.n; i++) {
        const alg_point *pt = &r.p[i];
        char label[64];
        int len = snprintf(label, sizeof label, "%s_%u", hs->names[pt->node], pt->index);
        assert_int_equal(pt->coord, XXH64(label, (size_t)len, 0));
        if (i > 0)
            assert_true(r.p[i - 1].coord <= pt->coord);
        count[pt->node]++;
    }
    for (size_t i = 0; i < 7; i++) {
        double want = scale * nw->w[i];
        assert_true(fabs((double)count[i] - want) < 1.0 + 1e-9);
    }
    free(r.p);
    free(nw);
    free(hs);
}

/* Property: a host's share of the 64-bit hash space follows its weight.
 * With c points, a host owns c arcs, each about Exp(1/P) long, so its share
 * has a relative standard deviation of about 1/sqrt(c); the bound is five
 * of those. */
static void test_ring_weights_honoured(void **state)
{
    (void)state;
    const double w[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    hostset *hs = hosts_make("10.1.2.3:", 8000, 10, w);
    normalized *nw = normalize_plain(hs);
    ring r = ring_make(nw, 65536, ENVOY_RING_MAX_DEFAULT);
    double share[10] = {0};
    uint64_t count[10] = {0};
    for (size_t i = 0; i < r.n; i++) {
        uint64_t prev = i ? r.p[i - 1].coord : r.p[r.n - 1].coord;
        share[r.p[i].node] += (double)(r.p[i].coord - prev) / 18446744073709551616.0;
        count[r.p[i].node]++;
    }
    for (size_t i = 0; i < 10; i++) {
        double rel = fabs(share[i] - nw->w[i]) / nw->w[i];
        if (rel > 5.0 / sqrt((double)count[i]))
            fail_msg("host %zu: share %f, weight %f", i, share[i], nw->w[i]);
    }
    free(r.p);
    free(nw);
    free(hs);
}

/* Property: Envoy's ketama search is alg_successor (first hash >= key,
 * wrapping), on random rings with repeated hashes and the extreme values. */
static void test_ring_lookup_is_successor(void **state)
{
    (void)state;
    const uint64_t seed0 = 20250101;
    uint64_t s = seed0;
    alg_point p[64];
    for (int round = 0; round < 2000; round++) {
        size_t n = 1 + next_rand(&s) % 64;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = next_rand(&s);
            p[i].coord = (round & 1) ? r % 16 : r; /* odd rounds: many ties */
            if (r % 29 == 0)
                p[i].coord = 0;
            if (r % 31 == 0)
                p[i].coord = UINT64_MAX;
            p[i].node = (uint32_t)i;
            p[i].index = 0;
        }
        for (size_t i = 1; i < n; i++) /* insertion sort */
            for (size_t j = i; j > 0 && p[j - 1].coord > p[j].coord; j--) {
                alg_point t = p[j];
                p[j] = p[j - 1];
                p[j - 1] = t;
            }
        for (int k = 0; k < 40; k++) {
            uint64_t r = next_rand(&s), h;
            switch (k % 4) {
            case 0:
                h = r;
                break;
            case 1:
                h = p[r % n].coord;
                break;
            case 2:
                h = p[r % n].coord + 1;
                break;
            default:
                h = (round & 1) ? r % 18 : (r & 1 ? 0 : UINT64_MAX);
                break;
            }
            size_t got = envoy_ring_lookup(p, n, h, 0), want = alg_successor(p, n, h);
            if (got != want)
                fail_msg("seed %llu round %d: hash %llu -> %zu, successor %zu",
                         (unsigned long long)seed0, round, (unsigned long long)h, got, want);
            uint32_t attempt = (uint32_t)(r % 100);
            assert_int_equal(envoy_ring_lookup(p, n, h, attempt), (want + attempt) % n);
        }
    }
}

/* ------------------------------------------------------------- maglev */

static void assert_table(const maglev *g, const normalized *nw, const size_t *want, size_t m)
{
    assert_int_equal(g->m, m);
    /* chooseHost(i) for i in 0 .. 3m-1, as the tests loop */
    for (uint64_t i = 0; i < 3 * m; i++)
        assert_int_equal(maglev_host(g, nw, i), want[i % m]);
}

/* [MG] Basic, BasicStability, BasicWithRetryHostPredicate: hosts
 * 127.0.0.1:90..95, table size 7. */
static const size_t basic7[] = {2, 4, 0, 1, 5, 0, 3};

static void test_maglev_basic(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 6, NULL);
    normalized *nw = normalize_plain(hs);
    maglev g = maglev_make(nw, 7);
    assert_int_equal(g.st.min_entries_per_host, 1);
    assert_int_equal(g.st.max_entries_per_host, 2);
    assert_table(&g, nw, basic7, 7);

    /* BasicWithRetryHostPredicate: hash 10 is slot 3 */
    int none[6] = {0}, all[6] = {1, 1, 1, 1, 1, 1}, not1[6] = {0, 1, 0, 0, 0, 0};
    assert_int_equal(maglev_host_retry(&g, nw, 10, 0, none), 1);
    assert_int_equal(maglev_host_retry(&g, nw, 10, 2, none), 1);
    assert_int_equal(maglev_host_retry(&g, nw, 10, 2, not1), 0);
    assert_int_equal(maglev_host_retry(&g, nw, 10, 2, all), 5);
    free(g.t);
    free(nw);
    free(hs);
}

/* [MG] BasicStability: the healthy hosts shuffled give the same table (the
 * hosts are sorted by hash key before filling).  Every rotation and the
 * reversal of the host list stand in for std::shuffle's permutation. */
static void test_maglev_stability(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 6, NULL);
    for (size_t rot = 0; rot < 12; rot++) {
        normalized *nw = calloc(1, sizeof *nw);
        assert_non_null(nw);
        for (size_t i = 0; i < 6; i++) {
            size_t h = rot < 6 ? (i + rot) % 6 : (5 - i + rot) % 6;
            nw->node[i] = hs->node[h];
            nw->orig[i] = h;
        }
        assert_int_equal(envoy_normalize_weights(nw->node, 6, nw->w, &nw->hw, NULL), 0);
        maglev g = maglev_make(nw, 7);
        assert_table(&g, nw, basic7, 7);
        free(g.t);
        free(nw);
    }
    free(hs);
}

/* [MG] BasicWithHostName, BasicWithMetadataHashKey, BasicWithBoundedLoad:
 * hash keys "90".."95". */
static void test_maglev_hostname(void **state)
{
    (void)state;
    hostset *hs = hosts_make("", 90, 6, NULL);
    normalized *nw = normalize_plain(hs);
    maglev g = maglev_make(nw, 7);
    assert_int_equal(g.st.min_entries_per_host, 1);
    assert_int_equal(g.st.max_entries_per_host, 2);
    static const size_t want[] = {2, 5, 0, 3, 4, 1, 0};
    assert_table(&g, nw, want, 7);
    free(g.t);
    free(nw);
    free(hs);
}

/* [MG] SingleHost (table 7) and WeightedSingleHost (weight 7, table 17):
 * every hash to the one host.  (The newest Envoy reports 1 entry per host
 * for its degenerate one-host table; this core reports the table size.) */
static void test_maglev_single_host(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 1, (const double[]){7});
    normalized *nw = normalize_plain(hs);
    static const uint64_t sizes[] = {7, 17};
    for (size_t k = 0; k < 2; k++) {
        maglev g = maglev_make(nw, sizes[k]);
        for (uint64_t i = 0; i < 17; i++)
            assert_int_equal(maglev_host(&g, nw, i), 0);
        free(g.t);
    }
    free(nw);
    free(hs);
}

/* [MG] Weighted: :90 weight 1, :91 weight 2, table 17. */
static void test_maglev_weighted(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 2, (const double[]){1, 2});
    normalized *nw = normalize_plain(hs);
    maglev g = maglev_make(nw, 17);
    assert_int_equal(g.st.min_entries_per_host, 6);
    assert_int_equal(g.st.max_entries_per_host, 11);
    static const size_t want[] = {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1};
    assert_table(&g, nw, want, 17);
    free(g.t);
    free(nw);
    free(hs);
}

/* [MG] LocalityWeightedSameLocalityWeights and LocalityWeightedGlobalPanic
 * (in panic the same hosts are used): :90 (weight 1) and :91 (weight 2) in
 * two localities of weight 1, table 17. */
static void test_maglev_locality_same(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 2, (const double[]){1, 2});
    static const size_t a[] = {0}, b[] = {1};
    const locality loc[] = {{1, a, 1}, {1, b, 1}};
    normalized *nw = normalize_localities(hs, loc, 2);
    maglev g = maglev_make(nw, 17);
    assert_int_equal(g.st.min_entries_per_host, 8);
    assert_int_equal(g.st.max_entries_per_host, 9);
    static const size_t want[] = {1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1};
    assert_table(&g, nw, want, 17);
    free(g.t);
    free(nw);
    free(hs);
}

/* [MG] LocalityWeightedDifferentLocalityWeights: hosts :90 (1), :91 (2),
 * :92 (3) in localities {:90} weight 8, {:92} weight 0, {:91} weight 2. */
static void test_maglev_locality_different(void **state)
{
    (void)state;
    hostset *hs = hosts_make("127.0.0.1:", 90, 3, (const double[]){1, 2, 3});
    static const size_t a[] = {0}, b[] = {2}, c[] = {1};
    const locality loc[] = {{8, a, 1}, {0, b, 1}, {2, c, 1}};
    normalized *nw = normalize_localities(hs, loc, 3);
    maglev g = maglev_make(nw, 17);
    assert_int_equal(g.st.min_entries_per_host, 4);
    assert_int_equal(g.st.max_entries_per_host, 13);
    static const size_t want[] = {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0};
    assert_table(&g, nw, want, 17);
    free(g.t);
    free(nw);
    free(hs);
}

/* [MG] LocalityWeightedLopsided: each light host exactly one slot of the
 * default 65537, the heavy host the remaining 65537 - 1023. */
static void test_maglev_lopsided(void **state)
{
    (void)state;
    hostset *hs;
    normalized *nw = lopsided(&hs);
    maglev g = maglev_make(nw, MAGLEV_TABLE_DEFAULT);
    assert_int_equal(g.st.min_entries_per_host, 1);
    assert_int_equal(g.st.max_entries_per_host, MAGLEV_TABLE_DEFAULT - 1023);
    uint32_t *counts = calloc(1024, sizeof *counts);
    assert_non_null(counts);
    for (uint64_t i = 0; i < MAGLEV_TABLE_DEFAULT; i++)
        counts[maglev_host(&g, nw, i)]++;
    for (size_t i = 1; i < 1024; i++)
        assert_int_equal(counts[i], 1);
    assert_int_equal(counts[0], MAGLEV_TABLE_DEFAULT - 1023);
    free(counts);
    free(g.t);
    free(nw);
    free(hs);
}

/* [MG] NoPrimeNumber (Envoy's message), LocalityWeightedAllZeroLocalityWeights
 * (no host, no table), and the proto's limit. */
static void test_maglev_params(void **state)
{
    (void)state;
    rs_error err = {0};
    assert_int_equal(maglev_check_table_size(8, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "The table size of maglev must be prime number"));
    assert_int_equal(maglev_check_table_size(0, &err), RINGSIM_EPARAM);
    assert_int_equal(maglev_check_table_size(1, &err), RINGSIM_EPARAM);
    assert_int_equal(maglev_check_table_size(65535, &err), RINGSIM_EPARAM);
    assert_int_equal(maglev_check_table_size(5000012, &err), RINGSIM_EPARAM);
    assert_int_equal(maglev_check_table_size(5000017, &err), RINGSIM_EPARAM); /* prime, too big */
    assert_non_null(strstr(err.msg, "5000011"));
    static const uint64_t primes[] = {2, 3, 5, 7, 17, 65537, 5000011};
    for (size_t i = 0; i < NELEM(primes); i++)
        assert_int_equal(maglev_check_table_size(primes[i], &err), 0);

    hostset *hs = hosts_make("127.0.0.1:", 90, 1, NULL);
    static const size_t a[] = {0};
    const locality loc[] = {{0, a, 1}};
    normalized *nw = normalize_localities(hs, loc, 1);
    assert_int_equal(nw->hw.n, 0);
    uint32_t *t = (uint32_t *)&err;
    assert_int_equal(maglev_build_weighted(&nw->hw, 17, &t, NULL, &err), 0);
    assert_null(t);
    hs->node[0].weight = 2.5;
    assert_int_equal(maglev_build(hs->node, 1, 17, &t, &err), RINGSIM_EPARAM);
    assert_null(t);
    assert_non_null(strstr(err.msg, "whole numbers"));
    free(nw);
    free(hs);
}

/* Property: the table is full, every host has a slot when n <= M, and the
 * counts follow the weights.  After R whole rounds a host has taken
 * floor(R * w / max_w) + 1 slots, plus at most one in the partial round, so
 * count_i = M * w_i - w_i * S + d_i with d_i in [0, 2] and S = sum of the
 * d's <= 2n: |count_i - M * w_i| <= 2n. */
static void test_maglev_weights_honoured(void **state)
{
    (void)state;
    const double w[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 1, 100};
    const size_t n = NELEM(w);
    hostset *hs = hosts_make("maglev-", 0, n, w);
    normalized *nw = normalize_plain(hs);
    static const uint64_t sizes[] = {65537, 251, 1000003};
    for (size_t k = 0; k < NELEM(sizes); k++) {
        maglev g = maglev_make(nw, sizes[k]);
        uint64_t count[NELEM(w)] = {0};
        for (uint64_t s = 0; s < g.m; s++) {
            assert_true(g.t[s] < n);
            count[g.t[s]]++;
        }
        for (size_t i = 0; i < n; i++) {
            assert_true(count[i] >= 1);
            double dev = fabs((double)count[i] - (double)g.m * nw->w[i]);
            if (dev > 2.0 * (double)n)
                fail_msg("M %llu host %zu: %llu slots, weight %f", (unsigned long long)g.m, i,
                         (unsigned long long)count[i], nw->w[i]);
        }
        free(g.t);
    }
    free(nw);
    free(hs);
}

/* Property: same input, same table; join order does not matter; runs and
 * points agree with the table. */
static void test_maglev_runs_points_determinism(void **state)
{
    (void)state;
    const double w[] = {3, 1, 2, 5, 1};
    hostset *hs = hosts_make("10.0.0.", 10, 5, w);
    uint32_t *t1, *t2;
    assert_int_equal(maglev_build(hs->node, 5, 1009, &t1, NULL), 0);
    assert_int_equal(maglev_build(hs->node, 5, 1009, &t2, NULL), 0);
    assert_memory_equal(t1, t2, 1009 * sizeof *t1);
    free(t2);

    alg_node rev[5];
    for (size_t i = 0; i < 5; i++)
        rev[i] = hs->node[4 - i];
    assert_int_equal(maglev_build(rev, 5, 1009, &t2, NULL), 0);
    for (size_t s = 0; s < 1009; s++)
        assert_int_equal(4 - t2[s], t1[s]);
    free(t2);

    maglev_run *runs;
    size_t nruns;
    assert_int_equal(maglev_runs(t1, 1009, &runs, &nruns), 0);
    assert_true(nruns >= 5);
    assert_int_equal(runs[0].first, 0);
    assert_int_equal(runs[nruns - 1].last, 1008);
    for (size_t i = 0; i < nruns; i++) {
        if (i)
            assert_int_equal(runs[i].first, runs[i - 1].last + 1);
        assert_true(runs[i].first <= runs[i].last);
        for (uint64_t s = runs[i].first; s <= runs[i].last; s++)
            assert_int_equal(t1[s], runs[i].node);
        if (i)
            assert_true(runs[i].node != runs[i - 1].node);
    }

    alg_point *p;
    size_t np;
    assert_int_equal(maglev_points(t1, 1009, 5, &p, &np), 0);
    assert_int_equal(np, nruns);
    uint64_t s = 7;
    for (int k = 0; k < 5000; k++) {
        uint64_t h = next_rand(&s);
        assert_int_equal(p[alg_successor(p, np, h % 1009)].node, maglev_lookup(t1, 1009, h));
    }
    uint32_t seen[5] = {0};
    for (size_t i = 0; i < np; i++) {
        assert_int_equal(p[i].coord, runs[i].last);
        assert_int_equal(p[i].index, seen[p[i].node]++);
    }
    free(p);
    free(runs);
    free(t1);
    free(hs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xxh64_sanity_vectors),
        cmocka_unit_test(test_envoy_hash_util_vectors),
        cmocka_unit_test(test_ring_basic),
        cmocka_unit_test(test_ring_hostname),
        cmocka_unit_test(test_ring_single_host),
        cmocka_unit_test(test_ring_uneven_hosts),
        cmocka_unit_test(test_ring_host_weighted_tiny),
        cmocka_unit_test(test_ring_host_weighted_large),
        cmocka_unit_test(test_ring_locality_weighted),
        cmocka_unit_test(test_ring_host_and_locality_weighted),
        cmocka_unit_test(test_ring_small_fractional_scale),
        cmocka_unit_test(test_ring_large_fractional_scale),
        cmocka_unit_test(test_ring_lopsided),
        cmocka_unit_test(test_ring_params),
        cmocka_unit_test(test_ring_build_plain_equals_weighted),
        cmocka_unit_test(test_ring_points_and_counts),
        cmocka_unit_test(test_ring_weights_honoured),
        cmocka_unit_test(test_ring_lookup_is_successor),
        cmocka_unit_test(test_maglev_basic),
        cmocka_unit_test(test_maglev_stability),
        cmocka_unit_test(test_maglev_hostname),
        cmocka_unit_test(test_maglev_single_host),
        cmocka_unit_test(test_maglev_weighted),
        cmocka_unit_test(test_maglev_locality_same),
        cmocka_unit_test(test_maglev_locality_different),
        cmocka_unit_test(test_maglev_lopsided),
        cmocka_unit_test(test_maglev_params),
        cmocka_unit_test(test_maglev_weights_honoured),
        cmocka_unit_test(test_maglev_runs_points_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
