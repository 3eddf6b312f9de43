/*
 * test_ring.c - the ring against a brute-force owner search written here:
 * random topologies, random positions, and naturally occurring equal
 * positions ordered by (position, name bytes, point index).
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's ring).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "place.h"
#include "ring.h"

typedef struct pt {
    uint32_t pos, node, idx;
} pt;

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* (position, name bytes, index) order, written independently of ring.c. */
static int before(const pt *a, const pt *b, char names[][16])
{
    if (a->pos != b->pos)
        return a->pos < b->pos;
    int c = strcmp(names[a->node], names[b->node]); /* ASCII names: bytes */
    if (c)
        return c < 0;
    return a->idx < b->idx;
}

/* The owner by definition: the first point in order with pos >= p, else
 * the first point of all. */
static long brute_owner(const pt *pts, size_t n, uint32_t p, char names[][16])
{
    const pt *best = NULL, *first = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!first || before(&pts[i], first, names))
            first = &pts[i];
        if (pts[i].pos >= p && (!best || before(&pts[i], best, names)))
            best = &pts[i];
    }
    if (!best)
        best = first;
    return best ? (long)best->node : -1;
}

/* The seed's points over rn and the index over them; *pts malloc'd. */
static ring *seed_ring(hasher *h, const ring_node *rn, size_t n, alg_point **pts, size_t *npts)
{
    ring *r = NULL;
    assert_int_equal(ring_points(pts, npts, h, rn, n), 0);
    assert_int_equal(ring_index(&r, *pts, *npts, UINT32_MAX), 0);
    return r;
}

/* The owner of p on the ring, -1 when empty. */
static long owner_of(const ring *r, const alg_point *pts, uint32_t p)
{
    long i = ring_successor(r, p);
    return i < 0 ? -1 : (long)pts[i].node;
}

static void build(size_t nodes, uint32_t points, char names[][16], ring_node *rn, pt *pts,
                  hasher *h, size_t *npts)
{
    size_t k = 0;
    char label[NAME_LABEL_MAX];
    for (size_t i = 0; i < nodes; i++) {
        snprintf(names[i], 16, "n%u-%u", (unsigned)(i % 100), rnd() % 1000);
        rn[i] = (ring_node){names[i], strlen(names[i]), points};
        for (uint32_t j = 0; j < points; j++) {
            size_t ll = ring_label(label, names[i], strlen(names[i]), j);
            pts[k++] = (pt){hash_position(h, label, ll), (uint32_t)i, j};
        }
    }
    *npts = k;
}

static void test_successor_matches_brute_force(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    static char names[64][16];
    ring_node rn[64];
    static pt pts[64 * 8];
    for (int round = 0; round < 300; round++) {
        size_t nodes = 1 + rnd() % 40, npts;
        uint32_t points = 1 + rnd() % 8;
        build(nodes, points, names, rn, pts, h, &npts);
        alg_point *ap;
        size_t nap;
        ring *r = seed_ring(h, rn, nodes, &ap, &nap);
        assert_int_equal(ring_size(r), npts);
        assert_int_equal(nap, npts);
        for (int q = 0; q < 50; q++) {
            uint32_t p = q == 0 ? 0 : q == 1 ? UINT32_MAX : rnd();
            if (q == 2) /* exactly on a point */
                p = pts[rnd() % npts].pos;
            assert_int_equal(owner_of(r, ap, p), brute_owner(pts, npts, p, names));
            assert_int_equal(ring_successor(r, p), (long)alg_successor(ap, nap, p));
        }
        ring_free(r);
        free(ap);
    }
    hasher_free(h);
}

static void test_empty_ring(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    alg_point *ap;
    size_t nap;
    ring *r = seed_ring(h, NULL, 0, &ap, &nap);
    assert_int_equal(ring_size(r), 0);
    assert_int_equal(owner_of(r, ap, 12345), -1);
    ring_free(r);
    ring_free(NULL);
    free(ap);
    hasher_free(h);
}

/* 2000 nodes x 100 points = 200,000 positions of 32 bits: equal positions
 * happen (about 4.6 expected).  Every pair must be in API.md's order. */
static void test_equal_positions_order(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    enum { N = 2000, P = 100 };
    static char names[N][16];
    static ring_node rn[N];
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], 16, "node-%u", (unsigned)(i % 10000));
        rn[i] = (ring_node){names[i], strlen(names[i]), P};
    }
    alg_point *ap;
    size_t nap;
    ring *r = seed_ring(h, rn, N, &ap, &nap);
    size_t ties = 0;
    for (size_t i = 1; i < ring_size(r); i++) {
        uint32_t a = (uint32_t)ap[i - 1].coord, b = (uint32_t)ap[i].coord;
        assert_true(a <= b);
        if (a != b)
            continue;
        ties++;
        pt x = {a, ap[i - 1].node, ap[i - 1].index};
        pt y = {b, ap[i].node, ap[i].index};
        assert_true(before(&x, &y, names));
        /* The first in order owns the position. */
        assert_int_equal(ring_successor(r, a), (long)(i - 1));
    }
    assert_true(ties >= 1);
    ring_free(r);
    free(ap);
    hasher_free(h);
}

/* Points kept from the ring before a change of topology: the same array
 * as building afresh, over random changes (nodes gone, new, their points
 * changed, the order shuffled), ties included (2000 nodes of 100 points
 * give equal positions). */
static void test_points_from_prev(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    enum { POOL = 2400 };
    static char names[POOL][16];
    static ring_node a[POOL], b[POOL];
    for (size_t i = 0; i < POOL; i++)
        snprintf(names[i], 16, "node-%u", (unsigned)i);
    for (int round = 0; round < 12; round++) {
        size_t na = 0, nb = 0;
        size_t pool = round == 0 ? 2000 : 1 + rnd() % 60;
        uint32_t pmax = round == 0 ? 100 : 1 + rnd() % 8;
        for (size_t i = 0; i < pool; i++)
            if (round == 0 || rnd() % 4)
                a[na++] = (ring_node){names[i], strlen(names[i]), 1 + rnd() % pmax};
        for (size_t i = 0; i < na; i++) {
            uint32_t r = rnd() % 10;
            if (r == 0)
                continue; /* gone */
            b[nb] = a[i];
            if (r == 1)
                b[nb].points = 1 + rnd() % pmax; /* maybe another count */
            nb++;
        }
        for (size_t i = pool; i < pool + 1 + rnd() % 5; i++) /* new ones */
            b[nb++] = (ring_node){names[i], strlen(names[i]), 1 + rnd() % pmax};
        for (size_t i = nb; i > 1; i--) { /* any order */
            size_t j = rnd() % i;
            ring_node t = b[i - 1];
            b[i - 1] = b[j];
            b[j] = t;
        }
        alg_point *pa, *want, *got;
        size_t npa, nwant, ngot;
        assert_int_equal(ring_points(&pa, &npa, h, a, na), 0);
        assert_int_equal(ring_points(&want, &nwant, h, b, nb), 0);
        assert_int_equal(ring_points_from(&got, &ngot, h, b, nb, pa, npa, a, na), 0);
        assert_int_equal(ngot, nwant);
        for (size_t i = 0; i < nwant; i++) {
            assert_true(got[i].coord == want[i].coord);
            assert_int_equal(got[i].node, want[i].node);
            assert_int_equal(got[i].index, want[i].index);
        }
        free(pa);
        free(want);
        free(got);
    }
    hasher_free(h);
}

static void test_arc_shares(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    place_config cfg;
    place_config_default(&cfg);
    place_node one = {.id = 1, .name = "alpha", .len = 5, .weight = 1};
    placement *p;
    assert_int_equal(place_build(&p, h, &cfg, &one, 1, NULL, NULL, NULL), 0);
    double s;
    place_shares(p, &s, 1);
    assert_true(s == 1.0); /* one point owns the whole ring */
    place_free(p);
    cfg.param[PP_POINTS_PER_NODE] = 50;
    place_node three[] = {{.id = 1, .name = "a", .len = 1, .weight = 1},
                          {.id = 2, .name = "b", .len = 1, .weight = 2},
                          {.id = 3, .name = "c", .len = 1, .weight = 0.5}};
    assert_int_equal(place_build(&p, h, &cfg, three, 3, NULL, NULL, NULL), 0);
    double sh[3];
    place_shares(p, sh, 3);
    assert_true(sh[0] + sh[1] + sh[2] > 0.999999999 && sh[0] + sh[1] + sh[2] < 1.000000001);
    assert_int_equal(place_layout_points(&cfg, three, 3), 50 + 100 + 25);
    uint64_t npts = 0;
    for (size_t i = 0; i < 3; i++)
        npts += place_node_size(p, i);
    assert_int_equal(npts, 50 + 100 + 25);
    place_free(p);
    hasher_free(h);
}

static void test_points_rounding(void **state)
{
    (void)state;
    place_config cfg;
    place_config_default(&cfg);
    cfg.param[PP_POINTS_PER_NODE] = 3;
    assert_int_equal(place_node_points(&cfg, 0.5), 2); /* 1.5 rounds away from zero */
    assert_int_equal(place_node_points(&cfg, 0.1), 1); /* max(1, 0) */
    assert_int_equal(place_node_points(&cfg, 2), 6);
    cfg.param[PP_POINTS_PER_NODE] = 1;
    assert_int_equal(place_node_points(&cfg, 2.5), 3);
    assert_int_equal(place_node_points(&cfg, 1.49), 1);
    strcpy(cfg.algorithm, "nope");
    assert_int_equal(place_config_check(&cfg, NULL), RINGSIM_EPARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_successor_matches_brute_force),
        cmocka_unit_test(test_empty_ring),
        cmocka_unit_test(test_equal_positions_order),
        cmocka_unit_test(test_points_from_prev),
        cmocka_unit_test(test_arc_shares),
        cmocka_unit_test(test_points_rounding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
