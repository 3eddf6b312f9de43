/*
 * test_place.c - properties every placement algorithm must have, checked
 * through the engine for each entry of the catalogue (a new algorithm is
 * tested without touching this file):
 *   - every stored key is where a fresh lookup says, and `check` passes;
 *   - a join moves keys only to the joining node and a leave only from the
 *     leaving node, where the algorithm promises minimal disruption
 *     ("minimal" in the catalogue); elsewhere the measured fraction is
 *     printed and bounded;
 *   - add then remove restores every owner (stateless algorithms);
 *   - replicas are distinct nodes, owner first;
 *   - replaying the log in a second engine gives the same owners (layout
 *     state included);
 *   - a switch between algorithms moves exactly the keys whose owner changes.
 * Random choices come from a seed printed when a check fails.
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue: minimal, replicas),
 * 'POST /api/nodes', 'DELETE /api/nodes/{name}'.
 */
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
#include "sim_int.h"
#include "store.h"

#define NKEYS 600

static uint64_t rng;
static const char *current = "?"; /* algorithm and seed, for failure reports */
static uint64_t current_seed;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        if (!ok_)                                                                                  \
            fprintf(stderr, "test_place: %s, seed %#llx: %s failed (line %d)\n", current,          \
                    (unsigned long long)current_seed, #cond, __LINE__);                            \
        assert_true(ok_);                                                                          \
    } while (0)

typedef struct owners {
    char name[NKEYS][32];
    char prefs[NKEYS][PLACE_MAX_PREFS][32]; /* filled by verify */
    size_t nprefs[NKEYS];
} owners;

static int collect(void *ud, const char *key, size_t len, uint32_t pos, const char *node, size_t nl)
{
    (void)pos;
    owners *o = ud;
    int i = atoi(key + 2);
    (void)len;
    snprintf(o->name[i], sizeof o->name[i], "%.*s", (int)nl, node ? node : "");
    return 0;
}

static void capture(sim *s, owners *o)
{
    rs_error err;
    int64_t total;
    memset(o, 0, sizeof *o);
    CHECK(sim_keys_page(s, NULL, 0, NULL, 0, 0, INT64_MAX, &total, collect, o, &err) == 0);
    CHECK(total == NKEYS);
}

/* Stored owners equal fresh lookups; preference lists are distinct. */
static void verify(sim *s, owners *o)
{
    rs_error err;
    json_t *lay = place_layout_json(sim_placement(s), sim_node_names(s));
    bool has_points = json_array_size(json_object_get(lay, "points")) > 0;
    json_decref(lay);
    char key[16];
    uint32_t r = sim_config(s)->replicas;
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof key, "k-%d", i);
        sim_lookup_result lr;
        CHECK(sim_lookup(s, key, strlen(key), &lr, &err) == 0);
        CHECK(lr.node && strlen(o->name[i]) == lr.node_len &&
              !memcmp(o->name[i], lr.node, lr.node_len));
        size_t want = r < sim_node_count(s) ? r : sim_node_count(s);
        CHECK(lr.nprefs == want);
        CHECK(lr.prefs[0] == lr.info.owner);
        o->nprefs[i] = lr.nprefs;
        for (size_t a = 0; a < lr.nprefs; a++)
            snprintf(o->prefs[i][a], 32, "%s", sim_node_names(s)[lr.prefs[a]]);
        for (size_t a = 0; a < lr.nprefs; a++)
            for (size_t b = a + 1; b < lr.nprefs; b++)
                CHECK(lr.prefs[a] != lr.prefs[b]);
        /* A layout of points names the point that decided, whatever the
         * algorithm; tables and owner functions name none. */
        CHECK(lr.has_point == has_points);
        CHECK(!lr.has_point || lr.point.node == lr.info.owner);
    }
    int64_t problems;
    char report[512];
    CHECK(sim_check(s, &problems, report, sizeof report, &err) == 0);
    if (problems)
        fprintf(stderr, "%s\n", report);
    CHECK(problems == 0);
}

static json_t *catalogue(void) { return place_algorithms_json(); }

static bool weights_whole(json_t *a)
{
    return !strcmp(json_string_value(json_object_get(a, "weight_rule")), "whole");
}

static bool weights_none(json_t *a)
{
    return !strcmp(json_string_value(json_object_get(a, "weight_rule")), "no");
}

static void node_name(char *out, size_t n, int i)
{
    /* Valid for every algorithm: a HOST:PORT that memcached and nginx
     * read; ceph's nodes are OSDs, named osd.N. */
    if (current && !strcmp(current, "ceph"))
        snprintf(out, n, "osd.%d", i);
    else
        snprintf(out, n, "10.0.%d.%d:11211", i / 200, i % 200 + 1);
}

static void one_algorithm(json_t *a, uint64_t seed)
{
    const char *name = json_string_value(json_object_get(a, "name"));
    bool minimal = json_is_true(json_object_get(a, "minimal"));
    bool reps = json_is_true(json_object_get(a, "replicas"));
    char label[64];
    snprintf(label, sizeof label, "%s", name);
    current = label;
    current_seed = seed;
    rng = seed;
    sim *s, *t;
    rs_error err;
    int64_t op;
    CHECK(sim_open(&s, ":memory:", &err) == 0);
    place_config cfg;
    place_config_default(&cfg);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", name);
    cfg.replicas = reps ? 1 + rnd() % 3 : 1;
    if (!strcmp(name, "maglev"))
        cfg.param[PP_TABLE_SIZE] = 251; /* a small prime: fast, still many entries per node */
    if (!strcmp(name, "ring"))
        cfg.param[PP_POINTS_PER_NODE] = 1 + rnd() % 40;
    CHECK(sim_configure(s, &cfg, &op, &err) == 0);
    int n = 2 + (int)(rnd() % 8);
    char nm[32];
    for (int i = 0; i < n; i++) {
        node_name(nm, sizeof nm, i);
        double w = weights_none(a) ? 1 : weights_whole(a) ? 1 + rnd() % 3 : 0.5 + rnd() % 4;
        if (sim_add_node(s, nm, strlen(nm), w, &op, &err))
            fprintf(stderr, "%s: %s\n", name, err.msg);
        CHECK(sim_node_count(s) == (size_t)i + 1);
    }
    int64_t ins, skip;
    CHECK(sim_generate_keys(s, "k-", 2, 0, NKEYS, &ins, &skip, &op, &err) == 0);
    static owners before, after, again;
    capture(s, &before);
    verify(s, &before);

    /* Join. */
    node_name(nm, sizeof nm, 150);
    if (sim_add_node(s, nm, strlen(nm), 1, &op, &err))
        fprintf(stderr, "%s: %s\n", name, err.msg);
    CHECK(sim_node_count(s) == (size_t)n + 1);
    capture(s, &after);
    verify(s, &after);
    int moved = 0, wrong = 0;
    for (int i = 0; i < NKEYS; i++)
        if (strcmp(before.name[i], after.name[i])) {
            moved++;
            wrong += strcmp(after.name[i], nm) != 0;
        }
    /* replica_moves: copies the join added to preference lists, beyond the
     * owner moves, counted here from the lookups before and after. */
    int64_t copies = 0;
    for (int i = 0; i < NKEYS; i++) {
        bool owner_was_copy = false;
        for (size_t x = 0; x < after.nprefs[i]; x++) {
            bool had = false;
            for (size_t y = 0; y < before.nprefs[i] && !had; y++)
                had = !strcmp(after.prefs[i][x], before.prefs[i][y]);
            copies += !had;
            if (x == 0)
                owner_was_copy = had;
        }
        if (strcmp(before.name[i], after.name[i]) && !owner_was_copy)
            copies--;
    }
    store_op o;
    CHECK(store_op_get(sim__store(s), op, &o, &err) == 0);
    CHECK(o.replica_moves == copies);
    CHECK(o.keys_moved == moved);
    store_op_clear(&o);
    if (cfg.replicas > 1)
        printf("  %-10s R=%u join: %d owner moves, %lld replica copies added\n", name, cfg.replicas,
               moved, (long long)copies);
    if (minimal)
        CHECK(wrong == 0);
    else
        printf("  %-10s join of node %d: %d of %d keys moved, %d between nodes that stayed\n", name,
               n + 1, moved, NKEYS, wrong);
    CHECK(moved <= NKEYS);

    /* Leave of the joiner: back where they were (for stateless layouts and
     * for those that restore state on leave). */
    CHECK(sim_remove_node(s, nm, strlen(nm), &op, &err) == 0);
    capture(s, &again);
    verify(s, &again);
    if (minimal) {
        int moved_back = 0;
        for (int i = 0; i < NKEYS; i++)
            moved_back += strcmp(after.name[i], again.name[i]) != 0;
        CHECK(moved_back == moved); /* exactly the joiner's keys moved */
        for (int i = 0; i < NKEYS; i++)
            if (strcmp(after.name[i], again.name[i]))
                CHECK(!strcmp(after.name[i], nm));
    }

    /* Leave of a node in the middle of the join order. */
    capture(s, &before);
    node_name(nm, sizeof nm, n / 2);
    CHECK(sim_remove_node(s, nm, strlen(nm), &op, &err) == 0);
    capture(s, &after);
    verify(s, &after);
    wrong = 0;
    for (int i = 0; i < NKEYS; i++)
        if (strcmp(before.name[i], after.name[i]))
            wrong += strcmp(before.name[i], nm) != 0;
    if (minimal)
        CHECK(wrong == 0);

    /* Replay: a second engine on the same log reaches the same owners. */
    sim *snap;
    CHECK(sim_at(s, sim_last_op(s), &snap, &err) == 0);
    capture(snap, &again);
    for (int i = 0; i < NKEYS; i++)
        CHECK(!strcmp(after.name[i], again.name[i]));
    sim_close(snap);

    /* Switch to the seed's ring and back: moves counted exactly. */
    place_config ring;
    place_config_default(&ring);
    CHECK(sim_configure(s, &ring, &op, &err) == 0);
    verify(s, (capture(s, &before), &before));
    CHECK(sim_configure(s, &cfg, &op, &err) == 0);
    capture(s, &again);
    verify(s, &again);
    (void)t;
    sim_close(s);
}

static void test_every_algorithm(void **state)
{
    (void)state;
    json_t *cat = catalogue();
    size_t i;
    json_t *a;
    CHECK(json_array_size(cat) >= 1);
    json_array_foreach(cat, i, a)
    {
        for (uint64_t round = 0; round < 3; round++)
            one_algorithm(a, 0x9E3779B97F4A7C15ull * (round + 1 + 10 * i));
    }
    json_decref(cat);
}

/* A parameter or weight an algorithm does not accept is refused and
 * nothing changes. */
static void test_refusals(void **state)
{
    (void)state;
    sim *s;
    rs_error err;
    int64_t op;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    assert_int_equal(sim_add_node(s, "a", 1, 1.5, &op, &err), 0);
    int64_t last = sim_last_op(s);
    place_config cfg;
    place_config_default(&cfg);
    cfg.replicas = 0;
    assert_int_equal(sim_configure(s, &cfg, &op, &err), RINGSIM_EPARAM);
    cfg.replicas = PLACE_MAX_REPLICAS + 1;
    assert_int_equal(sim_configure(s, &cfg, &op, &err), RINGSIM_EPARAM);
    place_config_default(&cfg);
    strcpy(cfg.algorithm, "nope");
    assert_int_equal(sim_configure(s, &cfg, &op, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "known:"));
    json_t *cat = catalogue();
    size_t i;
    json_t *a;
    json_array_foreach(cat, i, a)
    {
        place_config_default(&cfg);
        strcpy(cfg.algorithm, json_string_value(json_object_get(a, "name")));
        if (!json_is_true(json_object_get(a, "replicas"))) {
            cfg.replicas = 2;
            assert_int_equal(sim_configure(s, &cfg, &op, &err), RINGSIM_EPARAM);
            assert_non_null(strstr(err.msg, "has no replicas"));
            cfg.replicas = 1;
        }
        if (weights_whole(a) || weights_none(a)) { /* node "a" weighs 1.5 */
            assert_int_equal(sim_configure(s, &cfg, &op, &err), RINGSIM_EPARAM);
            assert_non_null(strstr(err.msg, "weight"));
        }
    }
    json_decref(cat);
    assert_int_equal(sim_last_op(s), last);
    assert_string_equal(sim_config(s)->algorithm, "ring");
    rs_error e2;
    place_config_default(&cfg);
    assert_int_equal(place_config_set_param(&cfg, "table_size", "65536", &e2), 0);
    assert_int_equal(place_config_check(&cfg, &e2), RINGSIM_EPARAM);
    assert_non_null(strstr(e2.msg, "prime"));
    assert_int_equal(place_config_set_param(&cfg, "bogus", "1", &e2), RINGSIM_EPARAM);
    assert_int_equal(place_config_set_param(&cfg, "probes", "1.5", &e2), RINGSIM_EPARAM);
    sim_close(s);
}

/* Lookup under ketama and every other ring (issue 15): the point that
 * decided is answered as under the seed's ring -- the first point of the
 * drawn layout at or after the key's coordinate, wrapping -- with its
 * coordinate and node. */
static void test_lookup_point_every_ring(void **state)
{
    (void)state;
    const char *algs[] = {"ketama", "nginx", "ring", "envoy-ring", "cassandra"};
    for (size_t a = 0; a < sizeof algs / sizeof *algs; a++) {
        sim *s;
        rs_error err;
        int64_t op;
        assert_int_equal(sim_open(&s, ":memory:", &err), 0);
        place_config cfg;
        place_config_default(&cfg);
        snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", algs[a]);
        assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
        char nm[32];
        for (int i = 0; i < 3; i++) {
            node_name(nm, sizeof nm, i);
            assert_int_equal(sim_add_node(s, nm, strlen(nm), 1, &op, &err), 0);
        }
        json_t *lay = place_layout_json(sim_placement(s), sim_node_names(s));
        json_t *pts = json_object_get(lay, "points");
        assert_true(json_array_size(pts) > 0);
        bool sgn = !strcmp(algs[a], "cassandra"); /* signed tokens */
        for (int k = 0; k < 300; k++) {
            char key[16], kc[24], pc[24];
            snprintf(key, sizeof key, "u-%d", k);
            sim_lookup_result lr;
            assert_int_equal(sim_lookup(s, key, strlen(key), &lr, &err), 0);
            assert_true(lr.has_point);
            assert_true(place_coord_str(sim_placement(s), lr.info.coord, kc));
            assert_true(place_coord_str(sim_placement(s), lr.point.coord, pc));
            long long kv = strtoll(kc, NULL, 10);
            unsigned long long ku = strtoull(kc, NULL, 10);
            size_t want = 0;
            for (size_t i = 0; i < json_array_size(pts); i++) {
                const char *c = json_string_value(
                    json_object_get(json_array_get(pts, i), "coordinate"));
                if (sgn ? strtoll(c, NULL, 10) >= kv : strtoull(c, NULL, 10) >= ku) {
                    want = i;
                    break;
                }
            }
            json_t *w = json_array_get(pts, want);
            assert_string_equal(pc, json_string_value(json_object_get(w, "coordinate")));
            assert_int_equal(place_point_position(sim_placement(s), lr.point.coord),
                             json_integer_value(json_object_get(w, "position")));
            assert_string_equal(sim_node_names(s)[lr.point.node],
                                json_string_value(json_object_get(w, "node")));
            assert_int_equal(lr.point.node, lr.info.owner);
        }
        json_decref(lay);
        sim_close(s);
    }
}

/* A node's "tokens" (GET /api/nodes) are its points of the drawn layout, in
 * ring order, for every algorithm that draws points with coordinates --
 * after removals, so that the node ordinals have shifted and a kept point
 * belongs to a renumbered node. */
static void test_node_tokens_every_algorithm(void **state)
{
    (void)state;
    json_t *cat = catalogue();
    size_t ai;
    json_t *a;
    size_t checked = 0;
    json_array_foreach(cat, ai, a)
    {
        const char *alg = json_string_value(json_object_get(a, "name"));
        sim *s;
        rs_error err;
        int64_t op;
        assert_int_equal(sim_open(&s, ":memory:", &err), 0);
        place_config cfg;
        place_config_default(&cfg);
        snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
        assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
        current = alg;
        char nm[32];
        for (int i = 0; i < 7; i++) {
            node_name(nm, sizeof nm, i);
            CHECK(sim_add_node(s, nm, strlen(nm), 1, &op, &err) == 0);
        }
        for (int i = 0; i < 7; i += 3) {
            node_name(nm, sizeof nm, i);
            CHECK(sim_remove_node(s, nm, strlen(nm), &op, &err) == 0);
        }
        const placement *p = sim_placement(s);
        json_t *lay = place_layout_json(p, sim_node_names(s));
        json_t *pts = json_object_get(lay, "points");
        for (size_t n = 0; n < place_node_count(p); n++) {
            json_t *o = json_object();
            place_node_json(p, n, o);
            json_t *tok = json_object_get(o, "tokens");
            json_t *want = json_array();
            size_t i;
            json_t *pt;
            json_array_foreach(pts, i, pt)
            {
                json_t *c = json_object_get(pt, "coordinate");
                if (c && !strcmp(json_string_value(json_object_get(pt, "node")), sim_node_names(s)[n]))
                    json_array_append(want, c);
            }
            current = alg;
            if (json_array_size(want)) {
                CHECK(tok != NULL);
                CHECK(json_equal(tok, want));
                checked++;
            }
            json_decref(want);
            json_decref(o);
        }
        json_decref(lay);
        sim_close(s);
    }
    CHECK(checked >= 4 * 5); /* ring, ketama, nginx, cassandra, ... for each kept node */
    json_decref(cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_algorithm),
        cmocka_unit_test(test_lookup_point_every_ring),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_node_tokens_every_algorithm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
