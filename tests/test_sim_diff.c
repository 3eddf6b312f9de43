/*
 * test_sim_diff.c - property test of the difference between two states
 * (sim_diff_get, docs/api.md v3) and of revert by the log.
 *
 * For random histories under several algorithms (the ring with points,
 * jump/memento, redis, ketama, cassandra, maglev, rendezvous) of every
 * operation type -- node add and remove (odd names: Unicode, spaces,
 * / % # ? " <), set_weight, configure across algorithms, generated and
 * explicit inserts (with repeats, which skip), deletes, reset, revert --
 * the difference between random pairs of operations (either order) must
 * equal a brute-force comparison of the two states, each replayed from the
 * log (sim_at) and read whole through sim.h: every key's owner at both
 * ends, the nodes, the configuration.  The engine's answer is checked both
 * ways it can be found (composed from the log, and forced to compare
 * states), and the log must have been the way for every pair (resets and
 * reverts are composed through: the state after a revert to j is the state
 * after j, a reset's is empty like the start).  After every
 * revert the live state must be the replayed state of its target.  Fixed
 * seeds, printed on failure.
 *
 * Checks docs/api.md, 'GET /api/diff?from=A&to=B', 'POST /api/revert'.
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

static uint64_t rng;
static uint64_t seed_now;
static int64_t a_now, b_now;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fprintf(stderr, "test_sim_diff: seed %#llx, diff %lld -> %lld: %s\n",                  \
                    (unsigned long long)seed_now, (long long)a_now, (long long)b_now, #cond);      \
        assert_true(cond);                                                                         \
    } while (0)

/* ---- a state read whole through sim.h ---- */

typedef struct row {
    char *key, *node; /* node NULL: none */
} row;

typedef struct whole {
    row *v;
    size_t n, cap;
    char **nodes;
    size_t nn;
    json_t *cfg;
} whole;

static int take(void *ud, const char *key, size_t len, uint32_t pos, const char *node, size_t node_len)
{
    (void)pos;
    whole *w = ud;
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 256;
        w->v = realloc(w->v, w->cap * sizeof *w->v);
        assert_non_null(w->v);
    }
    w->v[w->n].key = strndup(key, len);
    w->v[w->n].node = node ? strndup(node, node_len) : NULL;
    w->n++;
    return 0;
}

static void whole_take(sim *s, whole *w)
{
    rs_error err;
    int64_t total;
    memset(w, 0, sizeof *w);
    assert_int_equal(sim_keys_page_ordered(s, NULL, 0, NULL, 0, SIM_ORDER_KEY, false, 0, 1 << 30,
                                           &total, take, w, &err),
                     0);
    CHECK((size_t)total == w->n);
    w->nn = sim_node_count(s);
    w->nodes = calloc(w->nn + 1, sizeof *w->nodes);
    for (size_t i = 0; i < w->nn; i++) {
        size_t l;
        const char *n = sim_node_name(s, i, &l);
        w->nodes[i] = strndup(n, l);
    }
    w->cfg = place_config_json(sim_config(s), true);
}

static void whole_free(whole *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->v[i].key);
        free(w->v[i].node);
    }
    free(w->v);
    for (size_t i = 0; i < w->nn; i++)
        free(w->nodes[i]);
    free(w->nodes);
    json_decref(w->cfg);
}

static int cmp_bytes(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static int cmp_pp(const void *x, const void *y)
{
    return cmp_bytes(*(char *const *)x, *(char *const *)y);
}

static bool same_node(const char *a, const char *b) { return a ? b && !strcmp(a, b) : !b; }

static bool has_name(const whole *w, const char *n)
{
    for (size_t i = 0; i < w->nn; i++)
        if (!strcmp(w->nodes[i], n))
            return true;
    return false;
}

/* The expected answer: moves, counts, tallies, nodes. */
typedef struct expect {
    json_t *moves; /* [{"key", "from", "to"}…] by key bytes */
    int64_t added, removed;
    json_t *from, *to; /* {"name or \u0000": count} */
    json_t *nodes_added, *nodes_removed;
    bool config_changed;
} expect;

static void tally(json_t *t, const char *name)
{
    const char *k = name ? name : "(null)";
    json_t *v = json_object_get(t, k);
    json_object_set_new(t, k, json_integer(v ? json_integer_value(v) + 1 : 1));
}

static void brute(const whole *a, const whole *b, expect *e)
{
    memset(e, 0, sizeof *e);
    e->moves = json_array();
    e->from = json_object();
    e->to = json_object();
    e->nodes_added = json_array();
    e->nodes_removed = json_array();
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int c = i == a->n ? 1 : j == b->n ? -1 : cmp_bytes(a->v[i].key, b->v[j].key);
        if (c < 0) {
            e->removed++;
            i++;
        } else if (c > 0) {
            e->added++;
            j++;
        } else {
            if (!same_node(a->v[i].node, b->v[j].node)) {
                json_array_append_new(e->moves, json_pack("{s:s, s:s?, s:s?}", "key", a->v[i].key,
                                                          "from", a->v[i].node, "to", b->v[j].node));
                tally(e->from, a->v[i].node);
                tally(e->to, b->v[j].node);
            }
            i++;
            j++;
        }
    }
    /* Names by their bytes (the answer's order). */
    char **sa = calloc(a->nn + b->nn + 1, sizeof *sa);
    size_t na = 0, nr = 0;
    for (size_t k = 0; k < b->nn; k++)
        if (!has_name(a, b->nodes[k]))
            sa[na++] = b->nodes[k];
    qsort(sa, na, sizeof *sa, cmp_pp);
    for (size_t k = 0; k < na; k++)
        json_array_append_new(e->nodes_added, json_string(sa[k]));
    for (size_t k = 0; k < a->nn; k++)
        if (!has_name(b, a->nodes[k]))
            sa[nr++] = a->nodes[k];
    qsort(sa, nr, sizeof *sa, cmp_pp);
    for (size_t k = 0; k < nr; k++)
        json_array_append_new(e->nodes_removed, json_string(sa[k]));
    free(sa);
    e->config_changed = !json_equal(a->cfg, b->cfg);
}

static void expect_free(expect *e)
{
    json_decref(e->moves);
    json_decref(e->from);
    json_decref(e->to);
    json_decref(e->nodes_added);
    json_decref(e->nodes_removed);
}

static void tally_matches(json_t *got, json_t *want)
{
    CHECK(json_array_size(got) == json_object_size(want));
    json_t *v;
    size_t i;
    int64_t prev = INT64_MAX;
    json_array_foreach(got, i, v)
    {
        json_t *n = json_object_get(v, "node");
        int64_t k = json_integer_value(json_object_get(v, "keys"));
        json_t *w = json_object_get(want, json_is_string(n) ? json_string_value(n) : "(null)");
        CHECK(w && json_integer_value(w) == k);
        CHECK(k <= prev); /* largest first */
        prev = k;
    }
}

static int logged, compared;

static void check_pair(sim *s, sim_history *h, int64_t a, int64_t b)
{
    rs_error err;
    a_now = a;
    b_now = b;
    sim *sa = NULL, *sb = NULL;
    assert_int_equal(sim_at(s, a, &sa, &err), 0);
    assert_int_equal(sim_at(s, b, &sb, &err), 0);
    whole wa, wb;
    whole_take(sa, &wa);
    whole_take(sb, &wb);
    expect e;
    brute(&wa, &wb, &e);
    for (int force = 0; force < 2; force++) {
        sim_diff d;
        int rc = sim_diff_get(s, h, a, b, 0, INT64_MAX, force, &d, &err);
        if (rc)
            fprintf(stderr, "test_sim_diff: %s\n", err.msg);
        assert_int_equal(rc, 0);
        if (!force) {
            logged += !strcmp(d.how, "log");
            compared += strcmp(d.how, "log") != 0;
        } else {
            CHECK(!strcmp(d.how, "states"));
        }
        CHECK(d.from == a && d.to == b);
        CHECK(d.keys_moved == (int64_t)json_array_size(e.moves));
        CHECK(d.moves_total == d.keys_moved);
        CHECK(d.keys_added == e.added);
        CHECK(d.keys_removed == e.removed);
        if (!json_equal(d.moves, e.moves)) {
            char *g = json_dumps(d.moves, 0), *w = json_dumps(e.moves, 0);
            fprintf(stderr, "  moves (%s): got %.600s\n  want %.600s\n", d.how, g, w);
            free(g);
            free(w);
        }
        CHECK(json_equal(d.moves, e.moves));
        if (!json_equal(d.nodes_added, e.nodes_added) ||
            !json_equal(d.nodes_removed, e.nodes_removed)) {
            char *g = json_dumps(d.nodes_added, 0), *w = json_dumps(e.nodes_added, 0);
            char *g2 = json_dumps(d.nodes_removed, 0), *w2 = json_dumps(e.nodes_removed, 0);
            fprintf(stderr, "  nodes (%s): added %s want %s, removed %s want %s\n", d.how, g, w, g2,
                    w2);
            free(g);
            free(w);
            free(g2);
            free(w2);
        }
        CHECK(json_equal(d.nodes_added, e.nodes_added));
        CHECK(json_equal(d.nodes_removed, e.nodes_removed));
        CHECK(d.config_changed == e.config_changed);
        tally_matches(d.moved_from, e.from);
        tally_matches(d.moved_to, e.to);
        sim_diff_clear(&d);
    }
    /* A page is the same slice of the whole list. */
    if (json_array_size(e.moves) > 2) {
        sim_diff d;
        size_t off = rnd() % json_array_size(e.moves);
        assert_int_equal(sim_diff_get(s, h, a, b, (int64_t)off, 2, false, &d, &err), 0);
        CHECK(json_array_size(d.moves) == (off + 2 <= json_array_size(e.moves) ? 2 : 1));
        for (size_t k = 0; k < json_array_size(d.moves); k++)
            CHECK(json_equal(json_array_get(d.moves, k), json_array_get(e.moves, off + k)));
        sim_diff_clear(&d);
    }
    expect_free(&e);
    whole_free(&wa);
    whole_free(&wb);
    sim_close(sa);
    sim_close(sb);
}

/* ---- random histories ---- */

static const char *const odd_names[] = {"n0",  "n1",    "n2",    "n3",   "n4",  "n 5",
                                        "é/ü", "a%2Fb", "#?\"<", "日本", "n10", "n11"};
static const char *const algs[] = {"ring",      "jump",   "redis",     "ketama",
                                   "cassandra", "maglev", "rendezvous"};

static int reverts;

static void same_as_replay(sim *s, int64_t to)
{
    rs_error err;
    sim *r = NULL;
    assert_int_equal(sim_at(s, to, &r, &err), 0);
    whole a, b;
    whole_take(s, &a);
    whole_take(r, &b);
    CHECK(a.n == b.n);
    for (size_t i = 0; i < a.n && i < b.n; i++)
        CHECK(!strcmp(a.v[i].key, b.v[i].key) && same_node(a.v[i].node, b.v[i].node));
    CHECK(a.nn == b.nn);
    for (size_t i = 0; i < a.nn && i < b.nn; i++)
        CHECK(!strcmp(a.nodes[i], b.nodes[i]));
    CHECK(json_equal(a.cfg, b.cfg));
    whole_free(&a);
    whole_free(&b);
    sim_close(r);
}

static void random_op(sim *s, const char *alg, bool rare_resets)
{
    rs_error err;
    int64_t op, ins, skip;
    uint32_t r = rnd() % 100;
    const char *name = odd_names[rnd() % 12];
    bool ring = strcmp(sim_config(s)->algorithm, "ring") == 0;
    if (r < 22) {
        double w = ring && rnd() % 3 == 0 ? 2 : 1;
        (void)sim_add_node(s, name, strlen(name), w, &op, &err);
    } else if (r < 32) {
        size_t n = sim_node_count(s);
        if (n) {
            size_t len;
            const char *nm = sim_node_name(s, rnd() % n, &len);
            char buf[64];
            snprintf(buf, sizeof buf, "%.*s", (int)len, nm);
            (void)sim_remove_node(s, buf, len, &op, &err);
        }
    } else if (r < 37) {
        size_t n = sim_node_count(s);
        if (n && (ring || !strcmp(sim_config(s)->algorithm, "rendezvous"))) {
            size_t len;
            const char *nm = sim_node_name(s, rnd() % n, &len);
            char buf[64];
            snprintf(buf, sizeof buf, "%.*s", (int)len, nm);
            (void)sim_set_weight(s, buf, len, 1 + rnd() % 3, &op, &err);
        }
    } else if (r < 55) {
        /* Mostly new numbers; sometimes a range that overlaps (skips). */
        uint64_t start = rnd() % 4 ? 0 : rnd() % 200;
        if (!start)
            (void)sim_generate_next(s, "g ", 2, &start, &err);
        (void)sim_generate_keys(s, "g ", 2, start, 1 + rnd() % 60, &ins, &skip, &op, &err);
    } else if (r < 63) {
        char buf[5][16];
        sim_str v[5];
        size_t n = 1 + rnd() % 5;
        for (size_t i = 0; i < n; i++) {
            snprintf(buf[i], sizeof buf[i], "x/%%é%u", rnd() % 40);
            v[i] = (sim_str){buf[i], strlen(buf[i])};
        }
        (void)sim_insert_keys(s, v, n, false, &ins, &skip, &op, &err);
    } else if (r < 76) {
        char buf[6][16];
        sim_str v[6];
        size_t n = 0;
        for (int i = 0; i < 12 && n < 6; i++) {
            if (rnd() % 2)
                snprintf(buf[n], sizeof buf[n], "x/%%é%u", rnd() % 40);
            else
                snprintf(buf[n], sizeof buf[n], "g %u", rnd() % 280);
            uint32_t pos;
            const char *nd;
            size_t nl;
            if (sim_key_get(s, buf[n], strlen(buf[n]), &pos, &nd, &nl, &err) == 0) {
                v[n] = (sim_str){buf[n], strlen(buf[n])};
                n++;
            }
        }
        if (n)
            (void)sim_delete_keys(s, v, n, &op, &err);
    } else if (r < 88) {
        place_config cfg = *sim_config(s);
        uint32_t c = rnd() % 3;
        if (c == 0) {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
        } else if (c == 1) {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "ring");
            static const int ppn[] = {1, 3, 10};
            cfg.param[PP_POINTS_PER_NODE] = ppn[rnd() % 3];
        } else {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", algs[rnd() % 7]);
        }
        cfg.replicas = 1;
        (void)sim_configure(s, &cfg, &op, &err);
    } else if (r < (rare_resets ? 89 : 93)) {
        (void)sim_reset(s, &op, &err);
    } else {
        int64_t last = sim_last_op(s);
        if (last > 1) {
            /* Mostly a few operations back: what revert by the log serves. */
            int64_t to = rnd() % 2 ? last - 1 - (int64_t)(rnd() % 4) : (int64_t)(rnd() % last);
            to = to < 0 ? 0 : to;
            if (sim_revert(s, to, &op, &err) == 0) {
                a_now = b_now = to;
                same_as_replay(s, to);
                reverts++;
            }
        }
    }
}

static void one_history(uint64_t seed, const char *alg, bool rare_resets)
{
    rs_error err;
    seed_now = seed;
    rng = seed;
    a_now = b_now = -1;
    sim *s = NULL;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
    if (strcmp(alg, "ring") == 0)
        cfg.param[PP_POINTS_PER_NODE] = 3;
    int64_t op;
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    for (int i = 0; i < 36; i++)
        random_op(s, alg, rare_resets);
    int64_t last = sim_last_op(s);
    assert_true(last > 10);
    sim_history h = SIM_HISTORY_INIT;
    for (int k = 0; k < 14; k++) {
        int64_t a = rnd() % (last + 1), b;
        uint32_t m = rnd() % 4;
        if (m == 0)
            b = last; /* to now: owners from the live state */
        else if (m == 1)
            b = a + 1 + (int64_t)(rnd() % 5); /* a few operations */
        else
            b = rnd() % (last + 1);
        b = b > last ? last : b;
        if (rnd() % 2) { /* either order */
            int64_t t = a;
            a = b;
            b = t;
        }
        check_pair(s, k % 2 ? &h : NULL, a, b);
    }
    /* Past the end: 404; a negative id: refused. */
    sim_diff d;
    assert_int_equal(sim_diff_get(s, &h, 0, last + 1, 0, 10, false, &d, &err), RINGSIM_ENOTFOUND);
    assert_int_equal(sim_diff_get(s, &h, last + 1, 0, 0, 10, false, &d, &err), RINGSIM_ENOTFOUND);
    assert_int_equal(sim_diff_get(s, &h, -1, 0, 0, 10, false, &d, &err), RINGSIM_EPARAM);
    sim_diff_clear(&d); /* a cleared one is accepted */
    sim_history_clear(&h);
    sim_close(s);
}

static void test_random_histories(void **state)
{
    (void)state;
    logged = compared = reverts = 0;
    for (int a = 0; a < 7; a++)
        for (uint64_t i = 0; i < 4; i++)
            one_history(0x9E3779B97F4A7C15ull * (i + 1) + (uint64_t)a, algs[a], i % 2);
    fprintf(stderr, "test_sim_diff: %d differences composed from the log, %d by states, %d reverts\n",
            logged, compared, reverts);
    /* Every pair was composed from the log (through resets and reverts
     * too), and checked against the states compared whole. */
    assert_true(logged > 300);
    assert_int_equal(compared, 0);
    assert_true(reverts > 20);
}

/* The composition's rules, one by one, on a small known history. */
static void test_rules(void **state)
{
    (void)state;
    rs_error err;
    sim *s = NULL;
    int64_t op, ins, skip;
    seed_now = 2;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 300, &ins, &skip, &op, &err), 0); /* 1 */
    assert_int_equal(sim_add_node(s, "a", 1, 1, &op, &err), 0);                        /* 2 */
    assert_int_equal(sim_add_node(s, "b", 1, 1, &op, &err), 0);                        /* 3 */
    assert_int_equal(sim_remove_node(s, "b", 1, &op, &err), 0);                        /* 4 */
    sim_str t[] = {{"tmp", 3}};
    assert_int_equal(sim_insert_keys(s, t, 1, true, &ins, &skip, &op, &err), 0); /* 5 */
    assert_int_equal(sim_delete_keys(s, t, 1, &op, &err), 0);                    /* 6 */
    sim_diff d;
    /* b came and went: nothing moved between 2 and 6, tmp came and went. */
    assert_int_equal(sim_diff_get(s, NULL, 2, 6, 0, 100, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    assert_int_equal(d.keys_moved, 0);
    assert_int_equal(d.keys_added, 0);
    assert_int_equal(d.keys_removed, 0);
    assert_int_equal(json_array_size(d.nodes_added), 0);
    assert_false(d.config_changed);
    sim_diff_clear(&d);
    /* From the start: every key placed from no node is a move from null. */
    assert_int_equal(sim_diff_get(s, NULL, 1, 2, 0, 1000, false, &d, &err), 0);
    assert_int_equal(d.keys_moved, 300);
    assert_true(json_is_null(json_object_get(json_array_get(d.moves, 0), "from")));
    sim_diff_clear(&d);
    /* A key deleted and inserted again: its owner at the end from the live
     * state; then a reset lies between: the states are compared. */
    sim_str k7[] = {{"k7", 2}};
    assert_int_equal(sim_add_node(s, "c", 1, 1, &op, &err), 0);                   /* 7 */
    assert_int_equal(sim_delete_keys(s, k7, 1, &op, &err), 0);                    /* 8 */
    assert_int_equal(sim_add_node(s, "d", 1, 1, &op, &err), 0);                   /* 9 */
    assert_int_equal(sim_insert_keys(s, k7, 1, true, &ins, &skip, &op, &err), 0); /* 10 */
    /* k7 moved first (from no node, at 2): its owner at the start is in
     * the log, at the end in the live state. */
    assert_int_equal(sim_diff_get(s, NULL, 1, 10, 0, 1000, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    assert_int_equal(d.keys_moved, 300);
    sim_diff_clear(&d);
    /* Its first event the delete: the log does not keep its owner at 7,
     * which is looked up there, and at 10 (the live state). */
    assert_int_equal(sim_diff_get(s, NULL, 7, 10, 0, 1000, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    assert_int_equal(d.looked_up, 2);
    sim_diff_clear(&d);
    /* An insert that skips: which keys were there is looked up. */
    sim_str both[] = {{"k8", 2}, {"new", 3}};
    assert_int_equal(sim_insert_keys(s, both, 2, false, &ins, &skip, &op, &err), 0); /* 11 */
    assert_int_equal(skip, 1);
    assert_int_equal(sim_diff_get(s, NULL, 11, 9, 0, 1000, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    assert_int_equal(d.looked_up, 4);    /* k8 and new at 11 (live) and at 9 */
    assert_int_equal(d.keys_removed, 2); /* new, and k7 (deleted at 8, back at 10) */
    assert_int_equal(d.keys_added, 0);
    sim_diff_clear(&d);
    assert_int_equal(sim_diff_get(s, NULL, 8, 10, 0, 1000, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    assert_int_equal(d.keys_added, 1);
    sim_diff_clear(&d);
    assert_int_equal(sim_reset(s, &op, &err), 0); /* 12 */
    /* More keys touched on the way than the composition holds: the states
     * are compared, to the same answer. */
    sim_diff big;
    assert_int_equal(sim_diff_get(s, NULL, 0, 11, 0, 1000, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    setenv("RINGSIM_DIFF_MAX_WORK", "50", 1);
    assert_int_equal(sim_diff_get(s, NULL, 0, 11, 0, 1000, false, &big, &err), 0);
    unsetenv("RINGSIM_DIFF_MAX_WORK");
    assert_string_equal(big.how, "states");
    assert_non_null(strstr(big.why, "more than 50 to hold"));
    assert_int_equal(big.keys_added, d.keys_added);
    assert_true(json_equal(big.nodes_added, d.nodes_added));
    sim_diff_clear(&big);
    sim_diff_clear(&d);
    /* Across a reset: back to empty (every key removed) from the log. */
    assert_int_equal(sim_diff_get(s, NULL, 11, 12, 0, 1000, false, &d, &err), 0);
    assert_string_equal(d.how, "log");
    assert_int_equal(d.keys_removed, 301);
    assert_int_equal(json_array_size(d.nodes_removed), 3);
    sim_diff_clear(&d);
    sim_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_random_histories),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
