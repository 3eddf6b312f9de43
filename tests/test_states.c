/*
 * test_states.c - node states (docs/api.md "Node states"), each algorithm's
 * rule checked against a model written here from the engine's other
 * answers:
 *
 *   walk     (ring, nginx, multiprobe, cassandra): the key's preference
 *            list with every node up, read with replicas = n (Cassandra: its
 *            replicas), and its first node that is up serves;
 *   rebuild  (ketama, twemproxy, envoy-ring, maglev, rendezvous, haproxy):
 *            a second simulation holding only the up nodes (HAProxy: with the
 *            ids they had) places each key where the down one serves it;
 *            Envoy's panic (fewer than panic_threshold percent up) serves
 *            from every host; HAProxy's backups serve only when no active
 *            server is up, the first one unless allbackups;
 *   jump     only the down node's keys move, to up nodes;
 *   redis    a master with a replica fails over (served_by the replica, no
 *            key moves), one without leaves its keys unserved.
 *
 * For every one: the owner ("node") never changes, keys_moved counts the
 * keys whose server changed, the node coming up again restores every
 * server, set_state twice is one operation, preview says what the
 * operation then does, time travel and revert agree with the live state,
 * and check passes.
 *
 * Checks docs/api.md, 'Node states', 'PUT /api/nodes/{name}/state'.
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

#define NKEYS 1500

/* Each key's owner and server, by key number. */
typedef struct snap {
    char node[NKEYS][64];
    char served[NKEYS][64];
} snap;

static void take(sim *s, snap *out)
{
    rs_error err;
    json_t *j = view_keys(s, NULL, 0, NULL, 0, SIM_ORDER_KEY, false, 0, -1, &err);
    assert_non_null(j);
    json_t *k;
    size_t i;
    memset(out, 0, sizeof *out);
    json_array_foreach(json_object_get(j, "keys"), i, k)
    {
        int n = atoi(json_string_value(json_object_get(k, "key")) + 1);
        assert_true(n >= 0 && n < NKEYS);
        const char *o = json_string_value(json_object_get(k, "node"));
        const char *sv = json_string_value(json_object_get(k, "served_by"));
        snprintf(out->node[n], sizeof out->node[n], "%s", o ? o : "");
        snprintf(out->served[n], sizeof out->served[n], "%s", sv ? sv : "");
    }
    assert_int_equal(json_array_size(json_object_get(j, "keys")), NKEYS);
    json_decref(j);
}

static int64_t changed(const snap *a, const snap *b)
{
    int64_t n = 0;
    for (int i = 0; i < NKEYS; i++)
        n += strcmp(a->served[i], b->served[i]) != 0;
    return n;
}

static void no_problems(sim *s)
{
    rs_error err;
    int64_t problems = -1;
    char report[2048];
    assert_int_equal(sim_check(s, &problems, report, sizeof report, &err), 0);
    if (problems)
        fprintf(stderr, "%s\n", report);
    assert_int_equal(problems, 0);
}

static int64_t op_moved(sim *s, int64_t op)
{
    rs_error err;
    json_t *o = view_operation_get(s, op, &err);
    assert_non_null(o);
    int64_t m = json_integer_value(json_object_get(o, "keys_moved"));
    json_decref(o);
    return m;
}

static sim *make(const char *algorithm, const char *const *names, size_t n,
                 const char *const *params, uint32_t replicas)
{
    sim *s;
    rs_error err;
    int64_t op;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", algorithm);
    cfg.replicas = replicas;
    for (size_t i = 0; params && params[i]; i += 2)
        assert_int_equal(place_config_set_param(&cfg, params[i], params[i + 1], &err), 0);
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    bool weighted = strcmp(algorithm, "multiprobe") != 0; /* it has no weights */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sim_add_node(s, names[i], strlen(names[i]),
                                      1 + (double)(weighted && i % 3 == 1), &op, &err),
                         0);
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, NKEYS, &(int64_t){0}, &(int64_t){0}, &op, &err),
                     0);
    return s;
}

static int64_t set(sim *s, const char *name, bool down)
{
    rs_error err;
    int64_t op = -1;
    assert_int_equal(sim_set_state(s, name, strlen(name), down, &op, &err), 0);
    return op;
}

/* What a preview of set_state says would move. */
static int64_t preview_moved(sim *s, const char *name, bool down)
{
    rs_error err;
    view_preview_req req = {SIM_OP_SET_STATE, {0}, *sim_config(s), NULL};
    req.node.name = name;
    req.node.len = strlen(name);
    req.node.down = down;
    json_t *j = view_preview(s, &req, &err);
    assert_non_null(j);
    int64_t m = json_integer_value(json_object_get(j, "keys_moved"));
    json_decref(j);
    return m;
}

/* The checks every algorithm shares, around taking names[down[0..nd)]
 * down; returns the snapshot while they are down in *during. */
static void common_via(sim *s, const char *const *down, size_t nd, snap *before, snap *during,
                       const char *replica);
static void common(sim *s, const char *const *down, size_t nd, snap *before, snap *during)
{
    common_via(s, down, nd, before, during, NULL);
}

/* replica (may be NULL): a server that is not a node (a Redis replica);
 * keys that it takes over are served elsewhere without moving. */
static void common_via(sim *s, const char *const *down, size_t nd, snap *before, snap *during,
                       const char *replica)
{
    rs_error err;
    take(s, before);
    for (int i = 0; i < NKEYS; i++) /* all up: the server is the owner */
        assert_string_equal(before->node[i], before->served[i]);
    int64_t ops[8], last = 0;
    snap mid;
    for (size_t i = 0; i < nd; i++) {
        take(s, &mid);
        int64_t predicted = preview_moved(s, down[i], true);
        ops[i] = set(s, down[i], true);
        assert_true(ops[i] > 0);
        take(s, during);
        int64_t via = 0;
        for (int k = 0; replica && k < NKEYS; k++)
            via += !strcmp(during->served[k], replica) && strcmp(mid.served[k], replica);
        assert_int_equal(op_moved(s, ops[i]), changed(&mid, during) - via);
        assert_int_equal(predicted, op_moved(s, ops[i]));
        last = ops[i];
    }
    for (int i = 0; i < NKEYS; i++) /* the owner by placement stays */
        assert_string_equal(before->node[i], during->node[i]);
    assert_int_equal(set(s, down[0], true), 0); /* the same state again: nothing */
    no_problems(s);
    /* Time travel to the moment they were all down agrees with it. */
    for (size_t i = nd; i-- > 0;)
        assert_true(set(s, down[i], false) > 0);
    snap after;
    take(s, &after);
    for (int i = 0; i < NKEYS; i++)
        assert_string_equal(before->served[i], after.served[i]);
    sim *past = NULL;
    assert_int_equal(sim_at(s, last, &past, &err), 0);
    take(past, &mid);
    assert_memory_equal(&mid, during, sizeof mid);
    sim_close(past);
    sim_history h = SIM_HISTORY_INIT;
    sim *view = NULL;
    assert_int_equal(sim_history_at(s, &h, last, &view, &err), 0); /* back over the ups */
    take(view, &mid);
    assert_memory_equal(&mid, during, sizeof mid);
    sim_history_clear(&h);
    int64_t op;
    assert_int_equal(sim_revert(s, last, &op, &err), 0);
    take(s, &mid);
    assert_memory_equal(&mid, during, sizeof mid);
    no_problems(s);
    for (size_t i = 0; i < nd; i++)
        set(s, down[i], false);
    take(s, &mid);
    assert_memory_equal(&mid, before, sizeof mid);
    no_problems(s);
}

/* walk: the first up node of the all-up preference list (replicas r). */
static void walk_case(const char *algorithm, const char *const *params, uint32_t r, bool bounded)
{
    static const char *const names[] = {"n0", "n1", "n2", "n3", "n4", "n5"};
    const size_t n = 6;
    sim *s = make(algorithm, names, n, params, r);
    rs_error err;
    /* The preference lists with every node up. */
    char(*pref)[6][8] = calloc(NKEYS, sizeof *pref);
    size_t *np = calloc(NKEYS, sizeof *np);
    for (int k = 0; k < NKEYS; k++) {
        char key[16];
        int l = snprintf(key, sizeof key, "k%d", k);
        sim_lookup_result lr;
        assert_int_equal(sim_lookup(s, key, (size_t)l, &lr, &err), 0);
        np[k] = lr.nprefs;
        for (size_t i = 0; i < lr.nprefs; i++)
            snprintf(pref[k][i], 8, "%s", sim_node_name(s, (size_t)lr.prefs[i], NULL));
    }
    static const char *const down[] = {"n1", "n4"};
    snap before, during;
    common(s, down, 2, &before, &during);
    int unserved = 0;
    for (int k = 0; k < NKEYS; k++) {
        const char *want = "";
        for (size_t i = 0; i < np[k] && !*want; i++)
            if (strcmp(pref[k][i], "n1") && strcmp(pref[k][i], "n4"))
                want = pref[k][i];
        if (!bounded)
            assert_true(*want);
        unserved += !*want;
        assert_string_equal(during.served[k], want);
    }
    if (bounded) /* a key whose replicas are all down is served by nobody */
        assert_true(unserved > 0);
    free(pref);
    free(np);
    sim_close(s);
}

static void test_ring_walks(void **st)
{
    (void)st;
    static const char *const p[] = {"points_per_node", "8", NULL};
    walk_case("ring", p, 6, false);
}

static void test_nginx_skips_down_points(void **st)
{
    (void)st;
    walk_case("nginx", NULL, 6, false);
}

static void test_multiprobe_walks(void **st)
{
    (void)st;
    walk_case("multiprobe", NULL, 6, false);
}

static void test_cassandra_first_up_replica(void **st)
{
    (void)st;
    static const char *const p[] = {"num_tokens", "4", NULL};
    walk_case("cassandra", p, 2, true);
}

/* rebuild: a simulation of the up nodes alone places each key where the
 * down one serves it. */
static void rebuild_case(const char *algorithm, const char *const *names, size_t n,
                         const char *const *params, const char *const *down, size_t nd)
{
    sim *s = make(algorithm, names, n, params, 1);
    snap before, during;
    common(s, down, nd, &before, &during);
    const char *up[16];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool is_down = false;
        for (size_t k = 0; k < nd; k++)
            is_down |= !strcmp(names[i], down[k]);
        if (!is_down)
            up[m++] = names[i];
    }
    /* weights as make() gives them, by position in the full list */
    sim *t;
    rs_error err;
    int64_t op;
    assert_int_equal(sim_open(&t, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    assert_int_equal(sim_configure(t, &cfg, &op, &err), 0);
    for (size_t k = 0; k < m; k++) {
        size_t i = 0;
        while (strcmp(names[i], up[k]))
            i++;
        assert_int_equal(sim_add_node(t, up[k], strlen(up[k]), 1 + (double)(i % 3 == 1), &op, &err),
                         0);
    }
    assert_int_equal(sim_generate_keys(t, "k", 1, 0, NKEYS, &(int64_t){0}, &(int64_t){0}, &op, &err),
                     0);
    snap model;
    take(t, &model);
    int moved_between_up = 0;
    for (int k = 0; k < NKEYS; k++) {
        assert_string_equal(during.served[k], model.served[k]);
        bool was_down = false;
        for (size_t i = 0; i < nd; i++)
            was_down |= !strcmp(before.served[k], down[i]);
        moved_between_up += !was_down && strcmp(before.served[k], during.served[k]) != 0;
    }
    (void)moved_between_up;
    sim_close(t);
    sim_close(s);
}

static const char *const mc[] = {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211",
                                 "10.0.0.4:11211", "10.0.0.5:11211"};
static const char *const mc_down[] = {"10.0.0.2:11211", "10.0.0.4:11211"};

static void test_ketama_rebuilds(void **st)
{
    (void)st;
    rebuild_case("ketama", mc, 5, NULL, mc_down, 2);
}

static void test_twemproxy_rebuilds(void **st)
{
    (void)st;
    rebuild_case("twemproxy", mc, 5, NULL, mc_down, 2);
}

static void test_rendezvous_rebuilds(void **st)
{
    (void)st;
    rebuild_case("rendezvous", mc, 5, NULL, mc_down, 2);
}

static void test_envoy_rebuild_and_panic(void **st)
{
    (void)st;
    static const char *const p[] = {"min_ring_size", "256", NULL};
    rebuild_case("envoy-ring", mc, 5, p, mc_down, 2); /* 60% up: healthy */
    rebuild_case("maglev", mc, 5, NULL, mc_down, 2);
    /* 2 of 5 up (40% < 50%): panic, every host serves, nothing moves. */
    static const char *const three[] = {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"};
    sim *s = make("maglev", mc, 5, NULL, 1);
    snap before, during;
    common(s, three, 3, &before, &during);
    assert_memory_equal(before.served, during.served, sizeof before.served);
    sim_close(s);
    /* panic_threshold 0: never in panic, the table is the two up hosts'. */
    static const char *const p0[] = {"panic_threshold", "0", NULL};
    rebuild_case("maglev", mc, 5, p0, three, 3);
    static const char *const p0r[] = {"panic_threshold", "0", "min_ring_size", "256", NULL};
    rebuild_case("envoy-ring", mc, 5, p0r, three, 3);
}

/* HAProxy: down servers leave the tree keeping their ids (explicit ids
 * here, so that the model of the up servers has the same). */
static void test_haproxy_drops_down_servers(void **st)
{
    (void)st;
    static const char *const names[] = {"s1", "s2", "s3", "s4", "s5"};
    rs_error err;
    int64_t op;
    sim *s = make("haproxy", NULL, 0, NULL, 1);
    for (size_t i = 0; i < 5; i++) {
        /* implicit ids: s1..s5 are 1..5 (HAProxy numbers them in order) */
        assert_int_equal(sim_add_node(s, names[i], 2, 1 + (double)(i % 3 == 1), &op, &err), 0);
    }
    snap before, during;
    static const char *const down[] = {"s2"};
    common(s, down, 1, &before, &during);
    /* The model: s1, s3, s4, s5 with the ids 1, 3, 4, 5 they had. */
    sim *t = make("haproxy", NULL, 0, NULL, 1);
    static const int ids[] = {1, 3, 4, 5}, from[] = {0, 2, 3, 4};
    for (int k = 0; k < 4; k++) {
        sim_node_spec spec = {names[from[k]],
                              2,
                              1 + (double)(from[k] % 3 == 1),
                              NULL,
                              0,
                              ids[k],
                              false,
                              false,
                              NULL,
                              0,
                              NULL,
                              0};
        assert_int_equal(sim_add_node_spec(t, &spec, &op, &err), 0);
    }
    snap model;
    take(t, &model);
    for (int k = 0; k < NKEYS; k++)
        assert_string_equal(during.served[k], model.served[k]);
    sim_close(t);
    sim_close(s);
}

static sim *haproxy_backups(const char *allbackups)
{
    static const char *const p[] = {"allbackups", NULL, NULL};
    const char *pp[] = {p[0], allbackups, NULL};
    sim *s = make("haproxy", NULL, 0, pp, 1);
    rs_error err;
    int64_t op;
    static const char *const names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        sim_node_spec spec = {names[i], 1, 1, NULL, 0, 0, false, i >= 2, NULL, 0, NULL, 0};
        assert_int_equal(sim_add_node_spec(s, &spec, &op, &err), 0);
    }
    return s;
}

static void test_haproxy_backups(void **st)
{
    (void)st;
    sim *s = haproxy_backups("0");
    snap before, during;
    take(s, &before);
    for (int k = 0; k < NKEYS; k++) /* backups own nothing while an active is up */
        assert_true(!strcmp(before.served[k], "a") || !strcmp(before.served[k], "b"));
    static const char *const actives[] = {"a", "b"};
    common(s, actives, 2, &before, &during);
    for (int k = 0; k < NKEYS; k++) { /* the first backup takes everything */
        assert_string_equal(during.served[k], "c");
        assert_true(!strcmp(during.node[k], "a") || !strcmp(during.node[k], "b"));
    }
    sim_close(s);
    /* allbackups: the backup tree, c and d by their own points. */
    s = haproxy_backups("1");
    common(s, actives, 2, &before, &during);
    int c = 0, d = 0;
    for (int k = 0; k < NKEYS; k++) {
        c += !strcmp(during.served[k], "c");
        d += !strcmp(during.served[k], "d");
    }
    assert_int_equal(c + d, NKEYS);
    assert_true(c > NKEYS / 5 && d > NKEYS / 5);
    /* With c down too, d serves alone. */
    set(s, "a", true);
    set(s, "b", true);
    set(s, "c", true);
    take(s, &during);
    for (int k = 0; k < NKEYS; k++)
        assert_string_equal(during.served[k], "d");
    no_problems(s);
    sim_close(s);
}

static void test_jump_moves_only_the_down_nodes_keys(void **st)
{
    (void)st;
    static const char *const names[] = {"j0", "j1", "j2", "j3", "j4"};
    sim *s = make("jump", NULL, 0, NULL, 1);
    rs_error err;
    int64_t op;
    for (int i = 0; i < 5; i++)
        assert_int_equal(sim_add_node(s, names[i], 2, 1, &op, &err), 0);
    snap before, during;
    static const char *const down[] = {"j2"};
    common(s, down, 1, &before, &during);
    int moved = 0, to[5] = {0};
    for (int k = 0; k < NKEYS; k++) {
        if (strcmp(before.served[k], "j2") != 0) {
            assert_string_equal(before.served[k], during.served[k]);
            continue;
        }
        moved++;
        assert_string_not_equal(during.served[k], "j2");
        to[during.served[k][1] - '0']++;
    }
    assert_true(moved > 0);
    for (int i = 0; i < 5; i++) /* spread over every other node */
        assert_true(i == 2 ? to[i] == 0 : to[i] > 0);
    sim_close(s);
}

static void test_redis_failover(void **st)
{
    (void)st;
    sim *s = make("redis", NULL, 0, NULL, 1);
    rs_error err;
    int64_t op;
    static const char *const reps[] = {"10.0.0.9:6379", "10.0.0.8:6379"};
    static const char *const names[] = {"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"};
    for (int i = 0; i < 3; i++) {
        sim_node_spec spec = {names[i],
                              strlen(names[i]),
                              1,
                              NULL,
                              0,
                              0,
                              false,
                              false,
                              i == 0 ? reps : NULL,
                              i == 0 ? 2 : 0,
                              NULL,
                              0};
        assert_int_equal(sim_add_node_spec(s, &spec, &op, &err), 0);
    }
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, NKEYS, &(int64_t){0}, &(int64_t){0}, &op, &err),
                     0);
    snap before, during;
    static const char *const down0[] = {"10.0.0.1:6379"};
    common_via(s, down0, 1, &before, &during, reps[0]);
    int via = 0;
    for (int k = 0; k < NKEYS; k++) {
        assert_string_equal(during.node[k], before.node[k]);
        if (!strcmp(before.served[k], names[0])) {
            assert_string_equal(during.served[k], reps[0]);
            via++;
        } else {
            assert_string_equal(during.served[k], before.served[k]);
        }
    }
    assert_true(via > 0);
    int64_t d = set(s, names[0], true);
    assert_int_equal(op_moved(s, d), 0); /* the replica has the data */
    set(s, names[0], false);
    /* Without a replica its slots are unserved: the keys go to nobody. */
    static const char *const down1[] = {"10.0.0.2:6379"};
    common(s, down1, 1, &before, &during);
    int none = 0;
    for (int k = 0; k < NKEYS; k++)
        none += !strcmp(before.served[k], names[1]) && !*during.served[k];
    assert_true(none > 0);
    d = set(s, names[1], true);
    assert_int_equal(op_moved(s, d), none);
    assert_int_equal(sim_unassigned(s), none);
    sim_close(s);
}

/* The states survive a reopen of the file (attrs), and a node added down
 * (as import does) is replayed down. */
static void test_states_persist(void **st)
{
    (void)st;
    char path[] = "/tmp/ringsim-states-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *s;
    rs_error err;
    int64_t op;
    assert_int_equal(sim_open(&s, path, &err), 0);
    static const char *const reps[] = {"r1:1"};
    sim_node_spec a = {"a", 1, 1, NULL, 0, 0, true, true, reps, 1, NULL, 0};
    assert_int_equal(sim_add_node_spec(s, &a, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "b", 1, 1, &op, &err), 0);
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 100, &(int64_t){0}, &(int64_t){0}, &op, &err),
                     0);
    sim_close(s);
    assert_int_equal(sim_open(&s, path, &err), 0);
    sim_node_view v;
    assert_int_equal(sim_node_get(s, "a", 1, &v, &err), 0);
    assert_true(v.down && v.backup);
    assert_int_equal(v.nreplicas, 1);
    assert_string_equal(v.replicas[0], "r1:1");
    assert_int_equal(v.keys, 0);
    no_problems(s);
    assert_int_equal(sim_set_state(s, "nope", 4, true, &op, &err), RINGSIM_ENOTFOUND);
    sim_close(s);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_walks),
        cmocka_unit_test(test_nginx_skips_down_points),
        cmocka_unit_test(test_multiprobe_walks),
        cmocka_unit_test(test_cassandra_first_up_replica),
        cmocka_unit_test(test_ketama_rebuilds),
        cmocka_unit_test(test_twemproxy_rebuilds),
        cmocka_unit_test(test_rendezvous_rebuilds),
        cmocka_unit_test(test_envoy_rebuild_and_panic),
        cmocka_unit_test(test_haproxy_drops_down_servers),
        cmocka_unit_test(test_haproxy_backups),
        cmocka_unit_test(test_jump_moves_only_the_down_nodes_keys),
        cmocka_unit_test(test_redis_failover),
        cmocka_unit_test(test_states_persist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
