/*
 * test_location.c - a node's location (API.md v4, "failure domains"): the
 * rules of place_loc.c (each type and name a name without "=" or ",", a
 * type once, at most PLACE_MAX_LOC levels; the command line's and JSON's
 * forms), and the engine keeping it: add_node with one, set_location as
 * one operation that records nothing when nothing changes, the location
 * answered by the node's JSON ([] for none), kept through reopening,
 * time travel (sim_at), revert and the replay that check does.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "sim.h"
#include "view.h"

/* ---- the rules ---- */

static void parse_text(void **state)
{
    (void)state;
    place_loc v[PLACE_MAX_LOC];
    size_t n = 99;
    rs_error err;
    char ok[] = "dc=dc1,rack=r 1,host=h\xc3\xa9";
    assert_int_equal(place_loc_parse(ok, v, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].type, "dc");
    assert_string_equal(v[0].name, "dc1");
    assert_string_equal(v[1].name, "r 1");
    assert_string_equal(v[2].type, "host");
    char *t = place_loc_text(v, n);
    assert_string_equal(t, "dc=dc1,rack=r 1,host=h\xc3\xa9");
    free(t);
    char none[] = "";
    assert_int_equal(place_loc_parse(none, v, &n, &err), 0);
    assert_int_equal(n, 0);
    static const char *const bad[] = {
        "dc",     "=dc1",  "dc=",      "dc=a,,rack=b", "dc=a,dc=b",
        "dc=a=b", "dc=a,", "dc=a\x01", "dc=\xff\xfe",  "rack=r,dc=d,rack=q"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *b = strdup(bad[i]);
        err.code = 0;
        assert_int_not_equal(place_loc_parse(b, v, &n, &err), 0);
        assert_true(err.code == RINGSIM_EPARAM || err.code == RINGSIM_ENAME);
        assert_true(strlen(err.msg) > 10);
        free(b);
    }
    /* PLACE_MAX_LOC levels, then one more */
    char many[512] = "";
    for (unsigned i = 0; i <= PLACE_MAX_LOC; i++) {
        char one[16];
        snprintf(one, sizeof one, "%st%u=n", i ? "," : "", i);
        strcat(many, one);
        char *b = strdup(many);
        int rc = place_loc_parse(b, v, &n, &err);
        assert_int_equal(rc, i < PLACE_MAX_LOC ? 0 : RINGSIM_EPARAM);
        free(b);
    }
    /* 255-byte type and name are names; 256 are not */
    char longest[600];
    memset(longest, 'a', 255);
    longest[255] = '=';
    memset(longest + 256, 'b', 255);
    longest[511] = 0;
    assert_int_equal(place_loc_parse(longest, v, &n, &err), 0);
    t = place_loc_text(v, n);
    assert_int_equal(strlen(t), 511);
    free(t);
    memset(longest, 'a', 256);
    longest[256] = '=';
    strcpy(longest + 257, "b");
    assert_int_equal(place_loc_parse(longest, v, &n, &err), RINGSIM_ENAME);
}

static void parse_json(void **state)
{
    (void)state;
    place_loc v[PLACE_MAX_LOC];
    size_t n = 9;
    rs_error err;
    json_t *j = json_loads("[[\"dc\",\"dc1\"],[\"rack\",\"r1\"]]", 0, NULL);
    assert_int_equal(place_loc_from_json(j, v, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(v[1].type, "rack");
    json_t *back = place_loc_json(v, n);
    assert_true(json_equal(back, j));
    json_decref(back);
    json_decref(j);
    assert_int_equal(place_loc_from_json(NULL, v, &n, &err), 0);
    assert_int_equal(n, 0);
    static const char *const bad[] = {"{}",
                                      "[\"dc=dc1\"]",
                                      "[[\"dc\"]]",
                                      "[[\"dc\",1]]",
                                      "[[\"dc\",\"a\",\"b\"]]",
                                      "[[\"dc\",\"a\\u0000b\"]]",
                                      "[[\"d,c\",\"a\"]]",
                                      "[[\"dc\",\"a=b\"]]",
                                      "[[\"dc\",\"\"]]",
                                      "[[\"dc\",\"a\"],[\"dc\",\"b\"]]",
                                      "[[\"dc\",\"\\u2028\\u007f\"]]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        j = json_loads(bad[i], JSON_ALLOW_NUL, NULL);
        assert_non_null(j);
        err.code = 0;
        assert_int_not_equal(place_loc_from_json(j, v, &n, &err), 0);
        assert_true(err.code == RINGSIM_EPARAM || err.code == RINGSIM_ENAME);
        json_decref(j);
    }
    assert_string_equal(place_loc_get(v, 0, "dc") ? "x" : "none", "none");
}

/* ---- cassandra's replication map (NetworkTopologyStrategy) ---- */

static void replication_config(void **state)
{
    (void)state;
    rs_error err;
    place_config cfg;
    place_config_default(&cfg);
    strcpy(cfg.algorithm, "cassandra");
    assert_int_equal(place_config_set_param(&cfg, "strategy", "network_topology", &err), 0);
    /* network_topology without a map is refused */
    assert_int_equal(place_config_check(&cfg, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "replication"));
    assert_int_equal(place_config_set_param(&cfg, "replication", "dc1:3,dc 2:2", &err), 0);
    assert_int_equal(cfg.ndc, 2);
    assert_string_equal(cfg.dc[1].dc, "dc 2");
    assert_int_equal(cfg.replicas, 5); /* the sum */
    assert_int_equal(place_config_check(&cfg, &err), 0);
    json_t *j = place_config_json(&cfg, false);
    json_t *r = json_object_get(json_object_get(j, "params"), "replication");
    assert_int_equal(json_integer_value(json_object_get(r, "dc1")), 3);
    assert_int_equal(json_integer_value(json_object_get(r, "dc 2")), 2);
    /* the JSON form back gives the same configuration, byte for byte */
    place_config back;
    place_config_default(&back);
    assert_int_equal(place_config_from_json(&back, j, &err), 0);
    assert_memory_equal(&back, &cfg, sizeof cfg);
    json_decref(j);
    /* replicas that are not the sum are refused under network_topology */
    cfg.replicas = 4;
    assert_int_equal(place_config_check(&cfg, &err), RINGSIM_EPARAM);
    cfg.replicas = 5;
    static const char *const bad[] = {"dc1",    "dc1:",   ":3",      "dc1:x",   "dc1:3,",
                                      "dc1:-1", "dc1:17", "dc1:1.5", "d\x01:1", "dc1:3,,dc2:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        place_config c = cfg;
        assert_int_not_equal(place_config_set_param(&c, "replication", bad[i], &err), 0);
        assert_memory_equal(&c, &cfg, sizeof c); /* nothing changed */
    }
    /* more than 16 replicas in all */
    place_config big = cfg;
    assert_int_equal(place_config_set_param(&big, "replication", "a:9,b:9", &err), 0);
    assert_int_equal(place_config_check(&big, &err), RINGSIM_EPARAM);
    /* simple keeps the map, answers none, and the replicas are its own */
    assert_int_equal(place_config_set_param(&cfg, "strategy", "simple", &err), 0);
    cfg.replicas = 2;
    assert_int_equal(place_config_check(&cfg, &err), 0);
    j = place_config_json(&cfg, false);
    assert_null(json_object_get(json_object_get(j, "params"), "replication"));
    json_decref(j);
    j = place_config_json(&cfg, true); /* the stored form keeps it */
    assert_non_null(json_object_get(json_object_get(j, "params"), "replication"));
    json_decref(j);
}

/* ---- the engine keeps it ---- */

/* The node's "location" as the API answers it, compact. */
static char *loc_of(sim *s, const char *name)
{
    rs_error err;
    json_t *n = view_node_get(s, name, strlen(name), &err);
    assert_non_null(n);
    json_t *l = json_object_get(n, "location");
    assert_true(json_is_array(l));
    char *t = json_dumps(l, JSON_COMPACT);
    json_decref(n);
    return t;
}

static void expect_loc(sim *s, const char *name, const char *want)
{
    char *t = loc_of(s, name);
    assert_string_equal(t, want);
    free(t);
}

static void check_ok(sim *s)
{
    rs_error err;
    int64_t problems = -1;
    char report[512];
    assert_int_equal(sim_check(s, &problems, report, sizeof report, &err), 0);
    assert_int_equal(problems, 0);
}

static void engine(void **state)
{
    (void)state;
    char path[] = "/tmp/ringsim-test-location-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *s;
    rs_error err;
    int64_t op = -1;
    assert_int_equal(sim_open(&s, path, &err), 0);
    char t1[] = "dc=dc1,rack=r1,host=h1";
    place_loc v[PLACE_MAX_LOC];
    size_t n;
    assert_int_equal(place_loc_parse(t1, v, &n, &err), 0);
    sim_node_spec a = {.name = "a", .len = 1, .weight = 1, .loc = v, .nloc = n};
    assert_int_equal(sim_add_node_spec(s, &a, &op, &err), 0);   /* op 1 */
    assert_int_equal(sim_add_node(s, "b", 1, 1, &op, &err), 0); /* op 2 */
    expect_loc(s, "a", "[[\"dc\",\"dc1\"],[\"rack\",\"r1\"],[\"host\",\"h1\"]]");
    expect_loc(s, "b", "[]");
    /* A bad location is refused before anything happens. */
    place_loc twice[2] = {{"dc", "x"}, {"dc", "y"}};
    sim_node_spec c = {.name = "c", .len = 1, .weight = 1, .loc = twice, .nloc = 2};
    assert_int_equal(sim_add_node_spec(s, &c, &op, &err), RINGSIM_EPARAM);
    assert_int_equal(sim_set_location(s, "b", 1, twice, 2, &op, &err), RINGSIM_EPARAM);
    int64_t last;
    assert_int_equal(sim_log_last(s, &last, &err), 0);
    assert_int_equal(last, 2);
    /* set_location: one operation; the same again records nothing. */
    place_loc l2[2] = {{"dc", "dc2"}, {"rack", "r9"}};
    assert_int_equal(sim_set_location(s, "b", 1, l2, 2, &op, &err), 0);
    assert_int_equal(op, 3);
    assert_int_equal(sim_set_location(s, "b", 1, l2, 2, &op, &err), 0);
    assert_int_equal(op, 0);
    assert_int_equal(sim_set_location(s, "zz", 2, l2, 2, &op, &err), RINGSIM_ENOTFOUND);
    sim_op o;
    assert_int_equal(sim_log_get(s, 3, &o, &err), 0);
    assert_string_equal(o.type, "set_location");
    assert_string_equal(o.subject, "b");
    sim_op_clear(&o);
    expect_loc(s, "b", "[[\"dc\",\"dc2\"],[\"rack\",\"r9\"]]");
    /* none again */
    assert_int_equal(sim_set_location(s, "a", 1, NULL, 0, &op, &err), 0);
    assert_int_equal(op, 4);
    expect_loc(s, "a", "[]");
    check_ok(s);
    /* time travel */
    sim *at;
    assert_int_equal(sim_at(s, 2, &at, &err), 0);
    expect_loc(at, "a", "[[\"dc\",\"dc1\"],[\"rack\",\"r1\"],[\"host\",\"h1\"]]");
    expect_loc(at, "b", "[]");
    sim_close(at);
    assert_int_equal(sim_at(s, 3, &at, &err), 0);
    expect_loc(at, "b", "[[\"dc\",\"dc2\"],[\"rack\",\"r9\"]]");
    sim_close(at);
    /* kept on disk */
    sim_close(s);
    assert_int_equal(sim_open(&s, path, &err), 0);
    expect_loc(s, "b", "[[\"dc\",\"dc2\"],[\"rack\",\"r9\"]]");
    expect_loc(s, "a", "[]");
    /* revert brings the old locations back */
    assert_int_equal(sim_revert(s, 1, &op, &err), 0);
    expect_loc(s, "a", "[[\"dc\",\"dc1\"],[\"rack\",\"r1\"],[\"host\",\"h1\"]]");
    assert_int_equal(sim_revert(s, 3, &op, &err), 0);
    expect_loc(s, "b", "[[\"dc\",\"dc2\"],[\"rack\",\"r9\"]]");
    expect_loc(s, "a", "[[\"dc\",\"dc1\"],[\"rack\",\"r1\"],[\"host\",\"h1\"]]");
    check_ok(s);
    sim_close(s);
    unlink(path);
    char side[sizeof path + 16];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_text),
        cmocka_unit_test(parse_json),
        cmocka_unit_test(replication_config),
        cmocka_unit_test(engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
