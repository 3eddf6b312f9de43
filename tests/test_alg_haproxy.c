/*
 * test_alg_haproxy.c - the HAProxy core's own rules.
 *
 * The owners are tested against the real haproxy by tests/ref/haproxy_ref.py
 * (ctest ref_haproxy); this file checks what that test cannot see directly:
 *   - sdbm against its textbook form h * 65599 + c (hash.c writes it with
 *     shifts), and full_hash is a bijection (equal points come only from
 *     ids 2^20 apart);
 *   - the ids of servers without one, cfgparse.c's loop case by case
 *     (API.md's `a id 5, b, c, d id 2, e` -> 5, 3, 4, 2, 6), and refusals;
 *   - 16 points per unit of weight, full_hash(id x 4096 + j), none for
 *     weight 0;
 *   - through the engine: given and assigned ids on node objects, kept in
 *     the database, across a leave (which renumbers) and a revert that
 *     brings the node back in the middle, and a reopened file agrees;
 *   - the nearest-point lookup against a brute force reading of
 *     chash_get_server_hash on random small rings with equal points, and
 *     the arcs against the lookup at every boundary and at random hashes.
 * Random cases come from a seed printed when a check fails.
 *
 * Checks docs/api.md, 'The real systems: haproxy and twemproxy', 'POST
 * /api/nodes' (--id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "alg_haproxy.h"
#include "place.h"
#include "sim.h"
#include "view.h"

static uint64_t rng;
static uint64_t seed_now;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        bool ok_ = (c);                                                                            \
        if (!ok_)                                                                                  \
            fprintf(stderr, "test_alg_haproxy: seed %#llx: %s failed (line %d)\n",                 \
                    (unsigned long long)seed_now, #c, __LINE__);                                   \
        assert_true(ok_);                                                                          \
    } while (0)

static void test_sdbm(void **state)
{
    (void)state;
    assert_int_equal(haproxy_sdbm("", 0), 0);
    const char *words[] = {"a", "ab", "key-42", "\xc3\xa9t\xc3\xa9", "The quick brown fox"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        uint32_t h = 0;
        for (const unsigned char *c = (const unsigned char *)words[w]; *c; c++)
            h = h * 65599u + *c;
        assert_int_equal(haproxy_sdbm(words[w], strlen(words[w])), h);
        assert_int_equal(haproxy_key_hash(words[w], strlen(words[w])), haproxy_full_hash(h));
    }
}

static int cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void test_full_hash_bijective(void **state)
{
    (void)state;
    /* full_hash is a bijection (each step can be undone bit by bit), so
     * equal points come only from ids that differ by a multiple of 2^20:
     * no two of the first 2^22 inputs share an output. */
    enum { N = 1 << 22 };
    uint32_t *v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (uint32_t i = 0; i < N; i++)
        v[i] = haproxy_full_hash(i);
    size_t dup = 0;
    qsort(v, N, sizeof *v, cmp);
    for (size_t i = 1; i < N; i++)
        dup += v[i] == v[i - 1];
    printf("  full_hash: %zu equal outputs among the first %d inputs\n", dup, N);
    assert_true(dup == 0);
    free(v);
}

static void test_ids(void **state)
{
    (void)state;
    rs_error err;
    uint32_t out[8];
    const int64_t api[] = {5, 0, 0, 2, 0};
    assert_int_equal(haproxy_assign_ids(api, 5, out, &err), 0);
    const uint32_t want[] = {5, 3, 4, 2, 6};
    for (int i = 0; i < 5; i++)
        assert_int_equal(out[i], want[i]);
    const int64_t none[] = {0, 0, 0, 0};
    assert_int_equal(haproxy_assign_ids(none, 4, out, &err), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i], i + 1);
    /* next goes past a run of given ids, and every position advances it. */
    const int64_t run[] = {0, 2, 3, 4, 0, 0, 1};
    assert_int_equal(haproxy_assign_ids(run, 7, out, &err), 0);
    const uint32_t want_run[] = {5, 2, 3, 4, 9, 10, 1};
    for (int i = 0; i < 7; i++)
        assert_int_equal(out[i], want_run[i]);
    /* A server added in the middle renumbers the ones after it. */
    const int64_t mid[] = {0, 0, 0, 0};
    assert_int_equal(haproxy_assign_ids(mid, 4, out, &err), 0);
    assert_int_equal(out[3], 4);
    const int64_t twice[] = {7, 0, 7};
    assert_int_equal(haproxy_assign_ids(twice, 3, out, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "already used"));
    const int64_t neg[] = {-1};
    assert_int_equal(haproxy_assign_ids(neg, 1, out, &err), RINGSIM_EPARAM);
    const int64_t big[] = {(int64_t)HAPROXY_MAX_ID + 1};
    assert_int_equal(haproxy_assign_ids(big, 1, out, &err), RINGSIM_EPARAM);
}

static void test_points(void **state)
{
    (void)state;
    rs_error err;
    alg_node nodes[] = {{"a", 1, 3}, {"b", 1, 0}, {"c", 1, 256}};
    uint32_t ids[] = {7, 8, 1048583}; /* 1048583 = 7 + 2^20: c's points include a's */
    alg_point *p;
    size_t n;
    assert_int_equal(haproxy_build(nodes, ids, 3, &p, &n, &err), 0);
    assert_int_equal(n, 16 * (3 + 256));
    size_t per[3] = {0};
    for (size_t i = 0; i < n; i++) {
        per[p[i].node]++;
        assert_int_equal(p[i].coord, haproxy_full_hash(ids[p[i].node] * 4096u + p[i].index));
        if (i)
            assert_true(p[i - 1].coord < p[i].coord ||
                        (p[i - 1].coord == p[i].coord && p[i - 1].node < p[i].node));
    }
    assert_int_equal(per[0], 48);
    assert_int_equal(per[1], 0); /* weight 0: not in the tree */
    assert_int_equal(per[2], 4096);
    /* Equal points: a's come first (inserted first), so a key on one goes
     * to a. */
    size_t i = haproxy_lookup(p, n, haproxy_full_hash(7 * 4096u), NULL, NULL);
    assert_int_equal(p[i].node, 0);
    free(p);
    alg_node bad[] = {{"x", 1, 257}};
    assert_int_equal(haproxy_build(bad, ids, 1, &p, &n, &err), RINGSIM_EPARAM);
    alg_node half[] = {{"x", 1, 1.5}};
    assert_int_equal(haproxy_build(half, ids, 1, &p, &n, &err), RINGSIM_EPARAM);
    alg_node zero[] = {{"x", 1, 0}};
    assert_int_equal(haproxy_build(zero, ids, 1, &p, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(p);
}

/* chash_get_server_hash read literally: lookup_ge (first of equal keys),
 * else first; prev of that, else last; dp <= dn takes prev. */
static size_t brute(const alg_point *p, size_t n, uint32_t h)
{
    size_t nx = n;
    for (size_t i = 0; i < n && nx == n; i++)
        if (p[i].coord >= h)
            nx = i;
    if (nx == n)
        nx = 0;
    size_t pv = nx == 0 ? n - 1 : nx - 1;
    uint32_t dp = h - (uint32_t)p[pv].coord, dn = (uint32_t)p[nx].coord - h;
    return dp <= dn ? pv : nx;
}

static void test_nearest_and_arcs(void **state)
{
    (void)state;
    for (uint64_t round = 1; round <= 300; round++) {
        seed_now = rng = 0x9E3779B97F4A7C15ull * round;
        size_t n = 1 + rnd() % 12;
        alg_point p[16];
        uint32_t span = round % 3 == 0 ? 64 : round % 3 == 1 ? 4096 : UINT32_MAX;
        for (size_t i = 0; i < n; i++)
            p[i] = (alg_point){rnd() % span + (round % 5 == 0 ? UINT32_MAX - span : 0), rnd() % 4,
                               (uint32_t)i};
        if (n > 2 && round % 4 == 0)
            p[1].coord = p[0].coord; /* equal points */
        /* ring order as haproxy_build makes it */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && (p[j - 1].coord > p[j].coord ||
                                         (p[j - 1].coord == p[j].coord && p[j - 1].node > p[j].node));
                 j--) {
                alg_point t = p[j];
                p[j] = p[j - 1];
                p[j - 1] = t;
            }
        haproxy_arc *a;
        size_t na;
        CHECK(haproxy_arcs(p, n, &a, &na) == 0);
        CHECK(na >= 1 && a[na - 1].hi == UINT32_MAX);
        uint64_t lo = 0;
        for (size_t k = 0; k < na; k++) {
            CHECK(k == 0 || a[k].hi > a[k - 1].hi);
            /* every boundary and its neighbours belong to the arc's point */
            uint32_t probes[] = {(uint32_t)lo, a[k].hi, (uint32_t)(lo + (a[k].hi - lo) / 2)};
            for (int q = 0; q < 3; q++) {
                size_t got = haproxy_lookup(p, n, probes[q], NULL, NULL);
                CHECK(got == brute(p, n, probes[q]));
                CHECK(p[got].node == p[a[k].point].node);
            }
            lo = (uint64_t)a[k].hi + 1;
        }
        for (int q = 0; q < 200; q++) {
            uint32_t h = q % 2 ? rnd() : (uint32_t)p[rnd() % n].coord + rnd() % 5 - 2;
            size_t got = haproxy_lookup(p, n, h, NULL, NULL);
            CHECK(got == brute(p, n, h));
            size_t k = 0;
            while (a[k].hi < h)
                k++;
            CHECK(p[a[k].point].node == p[got].node);
        }
        free(a);
    }
}

static int64_t node_id(sim *s, const char *name)
{
    rs_error err;
    json_t *o = view_node_get(s, name, strlen(name), &err);
    int64_t id = o ? json_integer_value(json_object_get(o, "id")) : -1;
    json_decref(o);
    return id;
}

static void test_engine_ids(void **state)
{
    (void)state;
    char path[] = "/tmp/ringsim-haproxy-ids-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *s;
    rs_error err;
    int64_t op, ins, skip, problems;
    assert_int_equal(sim_open(&s, path, &err), 0);
    place_config cfg;
    place_config_default(&cfg);
    strcpy(cfg.algorithm, "haproxy");
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    const char *names[] = {"a", "b", "c", "d", "e"};
    const int64_t given[] = {5, 0, 0, 2, 0};
    for (int i = 0; i < 5; i++) {
        sim_node_spec spec = {names[i], 1,     1 + i % 3, NULL, 0,    given[i],
                              false,    false, NULL,      0,    NULL, 0};
        assert_int_equal(sim_add_node_spec(s, &spec, &op, &err), 0);
    }
    assert_int_equal(sim_generate_keys(s, "k-", 2, 0, 2000, &ins, &skip, &op, &err), 0);
    int64_t before = sim_last_op(s);
    const int64_t want[] = {5, 3, 4, 2, 6};
    for (int i = 0; i < 5; i++)
        assert_int_equal(node_id(s, names[i]), want[i]);
    /* b leaves: c takes 3 (all its points move); e keeps 6, since 5 is a's */
    assert_int_equal(sim_remove_node(s, "b", 1, &op, &err), 0);
    assert_int_equal(node_id(s, "c"), 3);
    assert_int_equal(node_id(s, "e"), 6);
    assert_int_equal(sim_check(s, &problems, NULL, 0, &err), 0);
    assert_int_equal(problems, 0);
    /* the revert brings b back second, with the ids of before */
    assert_int_equal(sim_revert(s, before, &op, &err), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(node_id(s, names[i]), want[i]);
    sim_close(s);
    assert_int_equal(sim_open(&s, path, &err), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(node_id(s, names[i]), want[i]);
    assert_int_equal(sim_check(s, &problems, NULL, 0, &err), 0);
    assert_int_equal(problems, 0);
    sim_close(s);
    char side[64];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdbm),
        cmocka_unit_test(test_full_hash_bijective),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_points),
        cmocka_unit_test(test_nearest_and_arcs),
        cmocka_unit_test(test_engine_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
