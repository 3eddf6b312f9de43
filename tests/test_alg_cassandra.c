/*
 * test_alg_cassandra.c - the cassandra core on published values and on
 * Cassandra's own rules.
 *
 * References:
 *   - datastax/csharp-driver src/Cassandra.Tests/TokenTests.cs,
 *     Murmur_Hash_Test ("inputs and result values from Cassandra"), which
 *     include tails with bytes >= 0x80, and TokenMap_SimpleStrategy_With_
 *     Keyspace_Test (three hosts with tokens 0, 10, 20);
 *   - mmh3's test suite (hash64("hello")): standard MurmurHash3_x64_128,
 *     which Cassandra's equals when no tail byte is >= 0x80;
 *   - Murmur3Partitioner.getToken (empty key = MINIMUM), BootStrapper
 *     (existing token refused), DatabaseDescriptor (1536 tokens at most).
 * The DataStax Python driver check is tests/ref/cassandra_ref.py (ctest
 * ref_cassandra).
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's cassandra).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alg_cassandra.h"

static void test_published_hashes(void **state)
{
    (void)state;
    static const struct {
        unsigned char bytes[17];
        size_t len;
        int64_t token;
    } v[] = {
        {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 16, -5563837382979743776LL},
        {{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, 16, -1513403162740402161LL},
        {{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, 16, -495360443712684655LL},
        {{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 16, 1734091135765407943LL},
        {{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 16, -3199412112042527988LL},
        {{6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, 16, -6316563938475080831LL},
        {{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}, 16, 8228893370679682632LL},
        {{0}, 16, 5457549051747178710LL},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         16,
         -2824192546314762522LL},
        {{254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254},
         16,
         -833317529301936754LL},
        {{0, 1, 2, 3, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         16,
         6463632673159404390LL},
        {{254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254, 254},
         17,
         -1672437813826982685LL},
        {{254, 254, 254, 254}, 4, 4566408979886474012LL},
        {{0, 0, 0, 0}, 4, -3485513579396041028LL},
        {{0, 1, 127, 127}, 4, 6573459401642635627LL},
        {{0, 255, 255, 255}, 4, 123573637386978882LL},
        {{255, 1, 2, 3}, 4, -2839127690952877842LL},
        {{226, 231}, 2, -8582699461035929883LL},
        {{226, 231, 226, 231, 226, 231, 1}, 7, 2222373981930033306LL},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        assert_true(cassandra_murmur3(v[i].bytes, v[i].len) == v[i].token);
        assert_true(cassandra_token((const char *)v[i].bytes, v[i].len) == v[i].token);
    }
    /* mmh3: hash64("hello") = (-3758069500696749310, 6565844092913065241) */
    assert_true(cassandra_murmur3("hello", 5) == -3758069500696749310LL);
}

/* Murmur3Partitioner.getToken: an empty key is MINIMUM, although its hash
 * is 0 (h1 = h2 = 0 and fmix(0) = 0). */
static void test_empty_key(void **state)
{
    (void)state;
    assert_true(cassandra_murmur3("", 0) == 0);
    assert_true(cassandra_token("", 0) == INT64_MIN);
}

static void test_parse_token(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t v;
    } ok[] = {{"0", 0},
              {"-1", -1},
              {"+5", 5},
              {"-9223372036854775808", INT64_MIN},
              {"9223372036854775807", INT64_MAX},
              {"007", 7}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = 1;
        assert_int_equal(cassandra_parse_token(ok[i].s, strlen(ok[i].s), &v, NULL), 0);
        assert_true(v == ok[i].v);
    }
    static const char *const bad[] = {
        "",   "-",    "+",   "9223372036854775808",    "-9223372036854775809", "1.5", " 1",
        "1 ", "0x10", "abc", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v;
        rs_error err = {0};
        assert_int_equal(cassandra_parse_token(bad[i], strlen(bad[i]), &v, &err), RINGSIM_EPARAM);
        assert_non_null(strstr(err.msg, "cassandra token"));
    }
}

/* TokenMap_SimpleStrategy_With_Keyspace_Test: hosts .0, .1, .2 with tokens
 * 0, 10, 20. */
static void test_driver_simple_strategy_example(void **state)
{
    (void)state;
    alg_node nodes[] = {{"192.168.0.0", 11, 1}, {"192.168.0.1", 11, 1}, {"192.168.0.2", 11, 1}};
    int64_t t0 = 0, t1 = 10, t2 = 20;
    cassandra_tokens ex[] = {{&t0, 1}, {&t1, 1}, {&t2, 1}};
    alg_point *pts;
    size_t n;
    assert_int_equal(cassandra_ring(nodes, 3, ex, 16, &pts, &n, NULL), 0);
    assert_int_equal(n, 3);
    static const struct {
        int64_t token;
        size_t rf;
        uint32_t want[3];
    } cases[] = {
        {0, 2, {0, 1}},  {-100, 2, {0, 1}}, {500000, 2, {0, 1}},
        {20, 2, {2, 0}}, {19, 2, {2, 0}},   {5, 10, {1, 2, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t got[10];
        size_t k = cassandra_replicas(pts, n, cassandra_lookup(pts, n, cases[c].token), got,
                                      cases[c].rf);
        assert_int_equal(k, cases[c].rf < 3 ? cases[c].rf : 3);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(got[i], cases[c].want[i]);
    }
    free(pts);
}

/* Owner = first token >= the key's token, wrapping: checked against a
 * linear scan over random rings. */
static void test_owner_is_first_token_at_or_after(void **state)
{
    (void)state;
    uint64_t s = 12345;
    for (int round = 0; round < 50; round++) {
        char names[8][8];
        alg_node nodes[8];
        size_t n = 1 + (size_t)(round % 8);
        for (size_t i = 0; i < n; i++) {
            int len = snprintf(names[i], sizeof names[i], "n%zu", i);
            nodes[i] = (alg_node){names[i], (size_t)len, 1.0 + (double)(i % 3)};
        }
        alg_point *pts;
        size_t np;
        assert_int_equal(cassandra_ring(nodes, n, NULL, 8, &pts, &np, NULL), 0);
        for (size_t i = 1; i < np; i++)
            assert_true(alg_to_signed(pts[i - 1].coord) <= alg_to_signed(pts[i].coord));
        for (int k = 0; k < 200; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            int64_t tok = (int64_t)s;
            if (k % 10 == 0) /* exactly a node token: (prev, t] includes t */
                tok = alg_to_signed(pts[(size_t)k % np].coord);
            size_t want = 0; /* wraps to the smallest when none is >= */
            for (size_t i = 0; i < np; i++)
                if (alg_to_signed(pts[i].coord) >= tok) {
                    want = i;
                    break;
                }
            assert_int_equal(cassandra_lookup(pts, np, tok), want);
        }
        free(pts);
    }
}

/* Token counts: max(1, round(num_tokens * weight)), C's round (halves away
 * from zero: 16 * 0.15625 = 2.5 gives 3, where half-to-even would give 2);
 * the derived tokens are those of "name", "name#1", ... */
static void test_token_counts(void **state)
{
    (void)state;
    static const struct {
        double weight;
        size_t want;
    } cases[] = {{1, 16},      {2.5, 40},    {0.01, 1}, {0.03125, 1},
                 {0.09375, 2}, {0.15625, 3}, {96, 1536}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        alg_node node = {"w", 1, cases[c].weight};
        alg_point *pts;
        size_t n;
        assert_int_equal(cassandra_ring(&node, 1, NULL, 16, &pts, &n, NULL), 0);
        assert_int_equal(n, cases[c].want);
        int found_name = 0, found_last = 0;
        char last[16];
        int ll = snprintf(last, sizeof last, "w#%zu", cases[c].want - 1);
        for (size_t i = 0; i < n; i++) {
            found_name |= alg_to_signed(pts[i].coord) == cassandra_token("w", 1);
            found_last |= alg_to_signed(pts[i].coord) == cassandra_token(last, (size_t)ll);
        }
        assert_true(found_name);
        assert_true(found_last || cases[c].want == 1);
        free(pts);
    }
    alg_node big = {"big", 3, 97};
    alg_point *pts;
    size_t n;
    rs_error err = {0};
    assert_int_equal(cassandra_ring(&big, 1, NULL, 16, &pts, &n, &err), RINGSIM_EPARAM);
    assert_null(pts);
    assert_non_null(strstr(err.msg, "1536"));
    assert_non_null(strstr(err.msg, "\"big\""));
    assert_int_equal(cassandra_check_num_tokens(0, NULL), RINGSIM_EPARAM);
    assert_int_equal(cassandra_check_num_tokens(1537, &err), RINGSIM_EPARAM);
    assert_int_equal(cassandra_check_num_tokens(1, NULL), 0);
    assert_int_equal(cassandra_check_num_tokens(1536, NULL), 0);
}

/* BootStrapper: a token already owned by another node is refused; a token
 * one node lists twice counts once. */
static void test_duplicate_tokens(void **state)
{
    (void)state;
    alg_node nodes[] = {{"a", 1, 1}, {"b", 1, 1}};
    int64_t ta[] = {5, 7, 5}, tb[] = {7};
    cassandra_tokens ex[] = {{ta, 3}, {tb, 1}};
    alg_point *pts;
    size_t n;
    rs_error err = {0};
    assert_int_equal(cassandra_ring(nodes, 2, ex, 16, &pts, &n, &err), RINGSIM_EPARAM);
    assert_null(pts);
    assert_non_null(strstr(err.msg, "token 7"));
    assert_non_null(strstr(err.msg, "\"a\""));
    assert_non_null(strstr(err.msg, "\"b\""));
    /* b's explicit token equal to one of a's derived tokens */
    int64_t clash = cassandra_token("a#3", 3);
    cassandra_tokens ex2[] = {{NULL, 0}, {&clash, 1}};
    assert_int_equal(cassandra_ring(nodes, 2, ex2, 16, &pts, &n, &err), RINGSIM_EPARAM);
    /* a alone lists 5 twice: two points, 5 and 7 */
    assert_int_equal(cassandra_ring(nodes, 1, ex, 16, &pts, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_true(alg_to_signed(pts[0].coord) == 5 && alg_to_signed(pts[1].coord) == 7);
    free(pts);
    /* MINIMUM and MAXIMUM are valid explicit tokens */
    int64_t ends[] = {INT64_MAX, INT64_MIN};
    cassandra_tokens ex3[] = {{ends, 2}};
    assert_int_equal(cassandra_ring(nodes, 1, ex3, 16, &pts, &n, NULL), 0);
    assert_true(alg_to_signed(pts[0].coord) == INT64_MIN);
    assert_int_equal(pts[0].index, 1); /* its place in the explicit list */
    free(pts);
}

/* SimpleStrategy walks to distinct nodes, owner first, at most the number
 * of nodes. */
static void test_replicas_distinct(void **state)
{
    (void)state;
    char names[6][8];
    alg_node nodes[6];
    for (int i = 0; i < 6; i++) {
        int len = snprintf(names[i], sizeof names[i], "r%d", i);
        nodes[i] = (alg_node){names[i], (size_t)len, 1};
    }
    alg_point *pts;
    size_t n;
    assert_int_equal(cassandra_ring(nodes, 6, NULL, 16, &pts, &n, NULL), 0);
    for (size_t first = 0; first < n; first++) {
        uint32_t got[8];
        size_t k = cassandra_replicas(pts, n, first, got, 8);
        assert_int_equal(k, 6);
        assert_int_equal(got[0], pts[first].node);
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; j < i; j++)
                assert_true(got[i] != got[j]);
    }
    free(pts);
}

static uint64_t from_rng = 0x2545F4914F6CDD1Dull;
static uint32_t from_rnd(void)
{
    from_rng ^= from_rng << 13;
    from_rng ^= from_rng >> 7;
    from_rng ^= from_rng << 17;
    return (uint32_t)(from_rng >> 11);
}

/* One random node set drawn from a pool of names: some with explicit
 * tokens (a few shared on purpose, which Cassandra refuses), weights that
 * change the derived count, any order. */
static size_t random_set(alg_node *nodes, cassandra_tokens *ex, int64_t (*toks)[4],
                         char (*names)[12], size_t pool)
{
    size_t n = 0;
    for (size_t i = 0; i < pool; i++) {
        if (from_rnd() % 3 == 0)
            continue;
        nodes[n] = (alg_node){names[i], strlen(names[i]), 0.5 * (double)(1 + from_rnd() % 4)};
        ex[n] = (cassandra_tokens){NULL, 0};
        if (from_rnd() % 6 == 0) {
            size_t c = 1 + from_rnd() % 3;
            for (size_t j = 0; j < c; j++) /* small values: collisions happen */
                toks[n][j] = (int64_t)(from_rnd() % 40) - 20;
            ex[n] = (cassandra_tokens){toks[n], c};
        }
        n++;
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = from_rnd() % i;
        alg_node t = nodes[i - 1];
        nodes[i - 1] = nodes[j];
        nodes[j] = t;
        cassandra_tokens u = ex[i - 1];
        ex[i - 1] = ex[j];
        ex[j] = u;
        int64_t v[4];
        memcpy(v, toks[i - 1], sizeof v);
        memcpy(toks[i - 1], toks[j], sizeof v);
        memcpy(toks[j], v, sizeof v);
        if (ex[i - 1].count)
            ex[i - 1].tokens = toks[i - 1];
        if (ex[j].count)
            ex[j].tokens = toks[j];
    }
    return n;
}

/* A ring built from the one before (nodes kept, added, removed, reweighted,
 * given tokens, num_tokens changed) is the ring built from nothing, point
 * for point, and refuses what it refuses with the same message. */
static void test_ring_from_prev(void **state)
{
    (void)state;
    enum { POOL = 14 };
    char names[POOL][12];
    for (size_t i = 0; i < POOL; i++)
        snprintf(names[i], sizeof names[i], "10.0.0.%zu", i);
    size_t kept_rounds = 0;
    for (int round = 0; round < 400; round++) {
        alg_node a[POOL], b[POOL];
        cassandra_tokens ea[POOL], eb[POOL];
        int64_t ta[POOL][4], tb[POOL][4];
        size_t na = random_set(a, ea, ta, names, POOL);
        uint32_t nta = 1 + from_rnd() % 8, ntb = from_rnd() % 4 ? nta : 1 + from_rnd() % 8;
        alg_point *pa;
        size_t npa;
        if (cassandra_ring(a, na, ea, nta, &pa, &npa, NULL))
            continue; /* a refused ring is never a previous one */
        size_t nb = random_set(b, eb, tb, names, POOL);
        alg_point *want = NULL, *got = NULL;
        size_t nwant = 0, ngot = 0;
        rs_error e1 = {0}, e2 = {0};
        int r1 = cassandra_ring(b, nb, eb, ntb, &want, &nwant, &e1);
        cassandra_prev prev = {pa, npa, a, ea, na, nta};
        int r2 = cassandra_ring_from(b, nb, eb, ntb, &prev, &got, &ngot, &e2);
        assert_int_equal(r1, r2);
        if (r1) {
            assert_string_equal(e1.msg, e2.msg);
        } else {
            assert_int_equal(ngot, nwant);
            for (size_t i = 0; i < nwant; i++) {
                assert_true(got[i].coord == want[i].coord);
                assert_int_equal(got[i].node, want[i].node);
                assert_int_equal(got[i].index, want[i].index);
            }
            kept_rounds++;
        }
        free(pa);
        free(want);
        free(got);
    }
    assert_true(kept_rounds > 100); /* most rounds compare two rings */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_hashes),
        cmocka_unit_test(test_empty_key),
        cmocka_unit_test(test_parse_token),
        cmocka_unit_test(test_driver_simple_strategy_example),
        cmocka_unit_test(test_owner_is_first_token_at_or_after),
        cmocka_unit_test(test_token_counts),
        cmocka_unit_test(test_duplicate_tokens),
        cmocka_unit_test(test_replicas_distinct),
        cmocka_unit_test(test_ring_from_prev),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
