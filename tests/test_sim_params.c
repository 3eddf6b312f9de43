/*
 * test_sim_params.c - the one decoder of logged operation parameters
 * (src/sim/sim_params.c): what each operation writes into the log reads back
 * member for member (a node with tokens, an id and states; a weight; a
 * state; a generated insert; a listed insert; a revert; a configure), the
 * key a generated insert made is the one `key gen` stored, and damaged
 * parameters are refused with RINGSIM_EDB and the operation's id, never
 * read as zeros.  Runs under ASan in make test-asan.
 *
 * Checks no section of docs/api.md: it tests the log's internal encoding.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim.h"

/* The logged operation op of s, decoded. */
static void decode(sim *s, int64_t op, sim_op *o, sim_op_params *p)
{
    rs_error err;
    assert_int_equal(sim_log_get(s, op, o, &err), 0);
    assert_int_equal(sim_op_params_read(o, p, &err), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    sim *s;
    rs_error err;
    assert_int_equal(sim_open(&s, "", &err), 0);
    place_config cfg;
    place_config_default(&cfg);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", "cassandra");
    int64_t ins, skip, cop, a1, a2, w, st, gen, lst, rv;
    assert_int_equal(sim_configure(s, &cfg, &cop, &err), 0);
    const int64_t tok[] = {-9000000000000000000LL, 42, 7000000000000000000LL};
    const char *reps[] = {"10.0.0.9:6379"};
    sim_node_spec a = {"caf\xc3\xa9 #1", 8, 2.5, tok, 3, 0, false, false, reps, 1, NULL, 0};
    assert_int_equal(sim_add_node_spec(s, &a, &a1, &err), 0);
    sim_node_spec b = {"b/%?", 4, 1, NULL, 0, 0, true, false, NULL, 0, NULL, 0};
    assert_int_equal(sim_add_node_spec(s, &b, &a2, &err), 0);
    assert_int_equal(sim_set_weight(s, "b/%?", 4, 3, &w, &err), 0);
    assert_int_equal(sim_set_state(s, "b/%?", 4, false, &st, &err), 0);
    assert_int_equal(sim_generate_keys(s, "u-", 2, 40, 25, &ins, &skip, &gen, &err), 0);
    sim_str keys[] = {{"x", 1}, {"y", 1}, {"z", 1}};
    assert_int_equal(sim_insert_keys(s, keys, 3, false, &ins, &skip, &lst, &err), 0);
    assert_int_equal(sim_revert(s, a2, &rv, &err), 0);

    sim_op o;
    sim_op_params p;
    decode(s, a1, &o, &p);
    assert_int_equal(p.type, SIM_OP_ADD_NODE);
    assert_true(p.has_node);
    assert_int_equal(p.node.len, 8);
    assert_memory_equal(p.node.name, "caf\xc3\xa9 #1", 8);
    assert_true(p.node.weight == 2.5);
    assert_int_equal(p.node.ntokens, 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(p.node.tokens[i], tok[i]);
    assert_int_equal(p.node.nreplicas, 1);
    assert_string_equal(p.node.replicas[0], "10.0.0.9:6379");
    assert_false(p.node.down);
    sim_op_params_clear(&p);
    sim_op_clear(&o);

    decode(s, a2, &o, &p);
    assert_true(p.node.down);
    assert_int_equal(p.node.ntokens, 0);
    sim_op_params_clear(&p);
    sim_op_clear(&o);

    decode(s, w, &o, &p);
    assert_int_equal(p.type, SIM_OP_SET_WEIGHT);
    assert_true(p.node.weight == 3);
    assert_memory_equal(p.node.name, "b/%?", 4);
    sim_op_params_clear(&p);
    sim_op_clear(&o);

    decode(s, st, &o, &p);
    assert_int_equal(p.type, SIM_OP_SET_STATE);
    assert_false(p.node.down);
    sim_op_params_clear(&p);
    sim_op_clear(&o);

    decode(s, gen, &o, &p);
    assert_true(p.generated);
    assert_int_equal(p.start, 40);
    assert_int_equal(p.count, 25);
    char buf[NAME_BUF + 24];
    size_t len = sim_generated_key(p.prefix, p.start + 24, buf);
    assert_int_equal(len, 4);
    assert_memory_equal(buf, "u-64", 4);
    sim_op_params_clear(&p);
    sim_op_clear(&o);

    decode(s, lst, &o, &p);
    assert_false(p.generated);
    assert_int_equal(p.keys, 3);
    sim_op_params_clear(&p);
    sim_op_clear(&o);

    decode(s, rv, &o, &p);
    assert_int_equal(p.type, SIM_OP_REVERT);
    assert_int_equal(p.to, a2);
    place_config got;
    assert_int_equal(sim_op_config(&o, &got, &err), 0);
    assert_string_equal(got.algorithm, "cassandra");
    sim_op_params_clear(&p);
    sim_op_clear(&o);
    sim_close(s);
}

/* A logged operation of type t with params text. */
static int read_damaged(const char *t, const char *params, rs_error *err)
{
    char type[32], text[256];
    snprintf(type, sizeof type, "%s", t);
    snprintf(text, sizeof text, "%s", params);
    sim_op o = {.id = 17, .type = type, .params = text};
    sim_op_params p;
    int rc = sim_op_params_read(&o, &p, err);
    if (!rc)
        sim_op_params_clear(&p);
    return rc;
}

static void test_damaged(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"add_node", "{\"weight\": 1}"},
        {"add_node", "{\"name\": 5, \"weight\": 1}"},
        {"add_node", "{\"name\": \"a\", \"weight\": \"heavy\"}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"tokens\": [\"12x\"]}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"tokens\": [12]}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"tokens\": [\"99999999999999999999\"]}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"tokens\": \"12\"}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"state\": \"sleepy\"}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"replicas\": [1]}"},
        {"add_node", "{\"name\": \"a\", \"weight\": 1, \"id\": \"3\"}"},
        {"remove_node", "{}"},
        {"set_weight", "{\"name\": \"a\"}"},
        {"set_state", "{\"name\": \"a\", \"state\": 1}"},
        {"insert_keys", "{\"keys\": \"3\"}"},
        {"insert_keys", "{\"generate\": {\"prefix\": \"k\", \"start\": -1, \"count\": 2}}"},
        {"insert_keys", "{\"generate\": {\"prefix\": 7, \"start\": 0, \"count\": 2}}"},
        {"delete_keys", "{\"generate\": {\"prefix\": \"k\", \"start\": 0, \"count\": 2}}"},
        {"revert", "{\"to\": -2}"},
        {"revert", "{}"},
        {"workload", "[1, 2]"},
        {"add_node", "{\"name\": "},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rs_error err = {0};
        int rc = read_damaged(bad[i][0], bad[i][1], &err);
        if (rc != RINGSIM_EDB)
            fail_msg("%s %s: got %d, want RINGSIM_EDB", bad[i][0], bad[i][1], rc);
        assert_non_null(strstr(err.msg, "operation 17 has unreadable parameters"));
    }
    rs_error err;
    assert_int_equal(read_damaged("set_weight", "{\"name\": \"a\", \"weight\": 2}", &err), 0);
    sim_op o = {.id = 3, .config = "{\"algorithm\": "};
    place_config cfg;
    assert_int_equal(sim_op_config(&o, &cfg, &err), RINGSIM_EDB);
    assert_non_null(strstr(err.msg, "operation 3 has no readable configuration"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
