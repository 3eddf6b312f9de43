/*
 * test_history.c - property test of the engine's time travel
 * (sim_history_at): for random histories of every operation type (add and
 * remove node, generated and explicit inserts with overlaps, deletes,
 * configure across algorithms, reset, revert) under three algorithms (the
 * ring with points, jump/memento and redis, whose layouts carry state), a
 * random walk over the timeline -- mostly single steps back, some forward,
 * some short and far jumps -- must reach exactly the state a fresh replay
 * of the log (sim_at) gives: configuration, nodes in order with counters,
 * points and positions, unassigned, and every key with its position, owner
 * and stored coordinate; and every key of the view sits where the view's
 * placement puts it.  The reference is the replay, the engine's older and
 * simpler path; the walk also counts that the undo path ("back") was taken.
 * Fixed seeds, printed on failure.
 *
 * Checks docs/api.md, 'Time travel: ?at=ID', 'POST /api/revert'.
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
#include <sqlite3.h>
#include <unistd.h>

#include "sim.h"
#include "sim_int.h"

static uint64_t rng;
static uint64_t seed_now;
static int64_t at_now;

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
            fprintf(stderr, "test_history: seed %#llx, at %lld: %s\n",                             \
                    (unsigned long long)seed_now, (long long)at_now, #cond);                       \
        assert_true(cond);                                                                         \
    } while (0)

/* ---- a comparable picture of a state ---- */

typedef struct picture {
    store_node *nodes;
    size_t nn;
    char **rows; /* "key|pos|owner|has_coord:coord", by key bytes */
    size_t n, cap;
    sim *s;
} picture;

static const char *owner_name(const picture *p, int64_t id)
{
    for (size_t i = 0; i < p->nn; i++)
        if (p->nodes[i].id == id)
            return p->nodes[i].name;
    return "";
}

static int take_key(void *ud, const store_key *k)
{
    picture *p = ud;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->rows = realloc(p->rows, p->cap * sizeof *p->rows);
        assert_non_null(p->rows);
    }
    const char *on = owner_name(p, k->node);
    char *t = NULL;
    assert_true(asprintf(&t, "%.*s|%u|%s|%d:%lld", (int)k->len, k->key, k->pos, on, k->has_coord,
                         k->has_coord ? (long long)k->coord : 0LL) >= 0);
    p->rows[p->n++] = t;
    /* The key sits where the state's placement puts it. */
    sim_where w;
    sim_key_where(p->s, k->key, k->len, &w);
    size_t nl = 0;
    const char *want = w.info.owner >= 0 ? sim_node_name(p->s, (size_t)w.info.owner, &nl) : "";
    CHECK(strcmp(want, on) == 0);
    CHECK(w.info.position == k->pos);
    return 0;
}

static void picture_take(sim *s, picture *p)
{
    rs_error err;
    memset(p, 0, sizeof *p);
    p->s = s;
    assert_int_equal(store_nodes_load(sim__store(s), &p->nodes, &p->nn, &err), 0);
    assert_int_equal(store_keys_each(sim__store(s), 0, take_key, p, &err), 0);
}

static void picture_free(picture *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->rows[i]);
    free(p->rows);
    store_nodes_free(p->nodes, p->nn);
}

static void same_state(sim *a, sim *b)
{
    rs_error err;
    CHECK(memcmp(sim_config(a), sim_config(b), sizeof(place_config)) == 0);
    CHECK(sim_key_count(a) == sim_key_count(b));
    CHECK(sim_unassigned(a) == sim_unassigned(b));
    sim_node_view *va = NULL, *vb = NULL;
    size_t na = 0, nb = 0;
    assert_int_equal(sim_nodes(a, &va, &na, &err), 0);
    assert_int_equal(sim_nodes(b, &vb, &nb, &err), 0);
    CHECK(na == nb);
    for (size_t i = 0; i < na && i < nb; i++) {
        CHECK(va[i].len == vb[i].len && memcmp(va[i].name, vb[i].name, va[i].len) == 0);
        CHECK(va[i].keys == vb[i].keys);
        CHECK(va[i].weight == vb[i].weight);
        CHECK(va[i].points == vb[i].points);
        CHECK(va[i].position == vb[i].position);
        CHECK(va[i].index == vb[i].index);
    }
    free(va);
    free(vb);
    /* Join order (placement indexes) too. */
    for (size_t i = 0; i < sim_node_count(a) && i < sim_node_count(b); i++) {
        size_t la, lb;
        const char *x = sim_node_name(a, i, &la), *y = sim_node_name(b, i, &lb);
        CHECK(la == lb && memcmp(x, y, la) == 0);
    }
    picture pa, pb;
    picture_take(a, &pa);
    picture_take(b, &pb);
    CHECK(pa.n == pb.n);
    for (size_t i = 0; i < pa.n && i < pb.n; i++) {
        if (strcmp(pa.rows[i], pb.rows[i]) != 0)
            fprintf(stderr, "  key row %zu: view %s, replay %s\n", i, pa.rows[i], pb.rows[i]);
        CHECK(strcmp(pa.rows[i], pb.rows[i]) == 0);
    }
    picture_free(&pa);
    picture_free(&pb);
}

/* ---- random histories ---- */

static void random_op(sim *s, const char *alg)
{
    rs_error err;
    int64_t op, ins, skip;
    uint32_t r = rnd() % 100;
    char name[32];
    if (r < 22) {
        snprintf(name, sizeof name, "n%u", rnd() % 12);
        double w = strcmp(sim_config(s)->algorithm, "ring") == 0 && rnd() % 3 == 0 ? 2 : 1;
        (void)sim_add_node(s, name, strlen(name), w, &op, &err);
    } else if (r < 34) {
        size_t n = sim_node_count(s);
        if (n) {
            size_t len;
            const char *nm = sim_node_name(s, rnd() % n, &len);
            snprintf(name, sizeof name, "%.*s", (int)len, nm);
            (void)sim_remove_node(s, name, len, &op, &err);
        }
    } else if (r < 54) {
        (void)sim_generate_keys(s, "g", 1, rnd() % 200, 1 + rnd() % 80, &ins, &skip, &op, &err);
    } else if (r < 64) {
        char buf[5][16];
        sim_str v[5];
        size_t n = 1 + rnd() % 5;
        for (size_t i = 0; i < n; i++) {
            snprintf(buf[i], sizeof buf[i], "x%u", rnd() % 40);
            v[i] = (sim_str){buf[i], strlen(buf[i])};
        }
        (void)sim_insert_keys(s, v, n, false, &ins, &skip, &op, &err);
    } else if (r < 76) {
        char buf[6][16];
        sim_str v[6];
        size_t n = 0;
        for (int i = 0; i < 12 && n < 6; i++) {
            if (rnd() % 2)
                snprintf(buf[n], sizeof buf[n], "x%u", rnd() % 40);
            else
                snprintf(buf[n], sizeof buf[n], "g%u", rnd() % 280);
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
    } else if (r < 90) {
        place_config cfg = *sim_config(s);
        uint32_t c = rnd() % 4;
        if (c == 0) {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
        } else if (c == 1) {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "ring");
            static const int ppn[] = {1, 3, 10};
            cfg.param[PP_POINTS_PER_NODE] = ppn[rnd() % 3];
            cfg.replicas = 1;
        } else if (c == 2) {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "ring");
            cfg.replicas = 1 + rnd() % 2;
        } else {
            snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", rnd() % 2 ? "jump" : "redis");
            cfg.replicas = 1;
        }
        (void)sim_configure(s, &cfg, &op, &err);
    } else if (r < 95) {
        (void)sim_reset(s, &op, &err);
    } else {
        int64_t last = sim_last_op(s);
        if (last > 1)
            (void)sim_revert(s, rnd() % last, &op, &err);
    }
}

static int backs; /* steps made by undoing, over all rounds */
static int lives; /* views made from a copy of the live database */

static void one_history(uint64_t seed, const char *alg)
{
    rs_error err;
    seed_now = seed;
    rng = seed;
    at_now = -1;
    sim *s = NULL;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", alg);
    if (strcmp(alg, "ring") == 0)
        cfg.param[PP_POINTS_PER_NODE] = 3;
    int64_t op;
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    for (int i = 0; i < 40; i++)
        random_op(s, alg);
    int64_t last = sim_last_op(s);
    assert_true(last > 10);
    sim_history h = SIM_HISTORY_INIT;
    int64_t at = last - (int64_t)(rnd() % 3);
    for (int step = 0; step < 30; step++) {
        at_now = at;
        sim *view = NULL, *fresh = NULL;
        int rc = sim_history_at(s, &h, at, &view, &err);
        if (rc)
            fprintf(stderr, "test_history: seed %#llx at %lld: %s\n", (unsigned long long)seed,
                    (long long)at, err.msg);
        assert_int_equal(rc, 0);
        assert_non_null(view);
        if (strcmp(h.how, "back") == 0)
            backs++;
        lives += strcmp(h.how, "live") == 0;
        assert_int_equal(sim_at(s, at, &fresh, &err), 0);
        same_state(view, fresh);
        sim_close(fresh);
        uint32_t m = rnd() % 100;
        if (m < 60)
            at -= 1;
        else if (m < 75)
            at += 1;
        else if (m < 88)
            at -= 2 + rnd() % 5;
        else
            at = rnd() % (last + 1);
        at = at < 0 ? 0 : at > last ? last : at;
    }
    /* Past the end: refused, the view is kept. */
    sim *view = NULL;
    assert_int_equal(sim_history_at(s, &h, last + 1, &view, &err), RINGSIM_ENOTFOUND);
    sim_history_clear(&h);
    sim_history_clear(&h); /* twice is harmless */
    sim_close(s);
}

static void test_random_histories(void **state)
{
    (void)state;
    static const char *const algs[] = {"ring", "jump", "redis"};
    backs = lives = 0;
    for (int a = 0; a < 3; a++)
        for (uint64_t i = 0; i < 8; i++)
            one_history(0x9E3779B97F4A7C15ull * (i + 1) + (uint64_t)a, algs[a]);
    /* The undo paths really ran (not only replays). */
    fprintf(stderr, "test_history: %d backward steps by undo, %d from the live state\n", backs,
            lives);
    assert_true(backs > 60);
    assert_true(lives > 5);
}

/* Steps back over add_node, generate and delete are undos, not replays,
 * and land on the replayed state; an insert that skipped existing keys is
 * passed by a replay. */
static void test_step_back_is_undo(void **state)
{
    (void)state;
    rs_error err;
    sim *s = NULL;
    int64_t op, ins, skip;
    seed_now = 1;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    assert_int_equal(sim_add_node(s, "a", 1, 1, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "b", 1, 1, &op, &err), 0);
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 500, &ins, &skip, &op, &err), 0);
    sim_str d[] = {{"k7", 2}, {"k9", 2}};
    assert_int_equal(sim_delete_keys(s, d, 2, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "c", 1, 1, &op, &err), 0);
    assert_int_equal(sim_generate_keys(s, "k", 1, 400, 200, &ins, &skip, &op, &err), 0);
    assert_int_equal(skip, 100);
    assert_int_equal(sim_add_node(s, "d", 1, 1, &op, &err), 0);
    int64_t last = sim_last_op(s);
    sim_history h = SIM_HISTORY_INIT;
    sim *v;
    assert_int_equal(sim_history_at(s, &h, last, &v, &err), 0);
    assert_ptr_equal(v, s);
    assert_string_equal(h.how, "now");
    /* Cold: a copy of the live database, one operation undone. */
    assert_int_equal(sim_history_at(s, &h, last - 1, &v, &err), 0);
    assert_string_equal(h.how, "live");
    /* The insert with skipped keys cannot be undone by its keys: replay. */
    assert_int_equal(sim_history_at(s, &h, last - 2, &v, &err), 0);
    assert_string_equal(h.how, "replay");
    for (int64_t at = last - 3; at >= 0; at--) {
        at_now = at;
        assert_int_equal(sim_history_at(s, &h, at, &v, &err), 0);
        /* Undone, but for the generate of 500 keys (replaying the two node
         * adds before it costs less than deleting them), the first node
         * (one tiny layout replayed against one rebuilt by the undo) and
         * the empty start (free). */
        assert_string_equal(h.how, at <= 2 ? "replay" : "back");
        sim *fresh;
        assert_int_equal(sim_at(s, at, &fresh, &err), 0);
        same_state(v, fresh);
        sim_close(fresh);
    }
    assert_int_equal(sim_history_at(s, &h, 2, &v, &err), 0);
    assert_string_equal(h.how, "forward");
    /* Forward over the generate costs more than undoing one operation of
     * a copy of the live state. */
    assert_int_equal(sim_history_at(s, &h, last - 1, &v, &err), 0);
    assert_string_equal(h.how, "live");
    assert_int_equal(sim_history_at(s, &h, last, &v, &err), 0);
    assert_string_equal(h.how, "now");
    sim_history_clear(&h);
    sim_close(s);
}

/* A long log: the first view is a copy of the live state (which keeps no
 * states before topology changes: undoing them takes the nodes from a
 * keyless replay of the log).  Strides of 60 reach the start. */
static void test_long_log(void **state)
{
    (void)state;
    rs_error err;
    sim *s = NULL;
    int64_t op, ins, skip;
    seed_now = 2;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    snprintf(cfg.algorithm, sizeof cfg.algorithm, "redis");
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    for (int i = 0; i < 140; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i % 5);
        if (sim_add_node(s, name, strlen(name), 1, &op, &err) != 0)
            assert_int_equal(sim_remove_node(s, name, strlen(name), &op, &err), 0);
        /* The first few overlap the one before (they skip keys). */
        uint64_t start = i < 10 ? (uint64_t)i * 3 : (uint64_t)i * 5;
        assert_int_equal(sim_generate_keys(s, "k", 1, start, 5, &ins, &skip, &op, &err), 0);
        assert_int_equal(sim_generate_keys(s, "z", 1, (uint64_t)i, 1, &ins, &skip, &op, &err), 0);
    }
    int64_t last = sim_last_op(s);
    assert_true(last > 300);
    sim_history h = SIM_HISTORY_INIT;
    sim *v;
    int backs_here = 0, replays_here = 0;
    for (int64_t at = last - 1; at >= 0; at -= 60) {
        at_now = at;
        assert_int_equal(sim_history_at(s, &h, at, &v, &err), 0);
        backs_here += strcmp(h.how, "back") == 0 || strcmp(h.how, "live") == 0;
        replays_here += strcmp(h.how, "replay") == 0;
        sim *fresh;
        assert_int_equal(sim_at(s, at, &fresh, &err), 0);
        same_state(v, fresh);
        sim_close(fresh);
    }
    /* The first view is a copy of the live state; strides are undone while
     * that costs less than a replay of the shorter log before them, and the
     * last strides (over the inserts that skipped keys, and near the start)
     * are replays. */
    assert_true(backs_here >= 5);
    assert_true(replays_here >= 1);
    sim_history_clear(&h);
    sim_close(s);
}

/* A log written before inserts recorded what they skipped (schema 2):
 * the copy of the live state cannot undo such an insert, so a replay goes
 * there; a view that replayed it counted, and steps back over it. */
static void test_old_log_insert(void **state)
{
    (void)state;
    char dir[] = "/tmp/ringsim-hist-XXXXXX", path[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h.db", dir);
    rs_error err;
    sim *s = NULL;
    int64_t op, ins, skip;
    seed_now = 3;
    assert_int_equal(sim_open(&s, path, &err), 0);
    assert_int_equal(sim_add_node(s, "a", 1, 1, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "b", 1, 1, &op, &err), 0);
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 300, &ins, &skip, &op, &err), 0);
    assert_int_equal(sim_generate_keys(s, "m", 1, 0, 1, &ins, &skip, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "c", 1, 1, &op, &err), 0);
    sim_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE ops SET skipped = NULL", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(sim_open(&s, path, &err), 0);
    sim_history h = SIM_HISTORY_INIT;
    sim *v, *fresh;
    assert_int_equal(sim_history_at(s, &h, 4, &v, &err), 0);
    assert_string_equal(h.how, "live"); /* a node add undone */
    assert_int_equal(sim_history_at(s, &h, 3, &v, &err), 0);
    assert_string_equal(h.how, "replay"); /* the insert of m0 says nothing */
    assert_int_equal(sim_history_at(s, &h, 4, &v, &err), 0);
    assert_string_equal(h.how, "forward");
    assert_int_equal(sim_history_at(s, &h, 3, &v, &err), 0);
    assert_string_equal(h.how, "back"); /* the replay counted it */
    assert_int_equal(sim_at(s, 3, &fresh, &err), 0);
    same_state(v, fresh);
    sim_close(fresh);
    sim_history_clear(&h);
    sim_close(s);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Checkpoints: copies of the live state kept as the log grows.  A state
 * behind a revert, which neither the live copy nor the view can reach, is
 * reached from the checkpoint before it, forward, and is the replayed
 * state; past the limit the one closest to its neighbours goes. */
static void test_checkpoints(void **state)
{
    (void)state;
    rs_error err;
    sim *s = NULL;
    int64_t op, ins, skip;
    seed_now = 4;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    sim_history h = SIM_HISTORY_INIT;
    h.checkpoint_work = 500;
    assert_int_equal(sim_add_node(s, "a", 1, 1, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "b", 1, 1, &op, &err), 0);
    assert_int_equal(sim_history_checkpoint(s, &h, &err), 0);
    assert_int_equal(h.ncp, 0); /* too little work yet */
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 2000, &ins, &skip, &op, &err), 0);
    assert_int_equal(sim_history_checkpoint(s, &h, &err), 0);
    assert_int_equal(h.ncp, 1);
    assert_int_equal(h.cp[0].at, 3);
    assert_int_equal(sim_add_node(s, "c", 1, 1, &op, &err), 0); /* 4 */
    assert_int_equal(sim_revert(s, 3, &op, &err), 0);           /* 5 */
    assert_int_equal(sim_add_node(s, "d", 1, 1, &op, &err), 0); /* 6 */
    sim *v, *fresh;
    assert_int_equal(sim_history_at(s, &h, 4, &v, &err), 0);
    assert_string_equal(h.how, "checkpoint");
    assert_int_equal(sim_at(s, 4, &fresh, &err), 0);
    same_state(v, fresh);
    sim_close(fresh);
    /* The checkpoint itself was not moved. */
    assert_int_equal(sim_history_at(s, &h, 3, &v, &err), 0);
    assert_int_equal(sim_at(s, 3, &fresh, &err), 0);
    same_state(v, fresh);
    sim_close(fresh);
    /* More checkpoints than kept: each after 600 new keys. */
    for (int i = 0; i < SIM_HISTORY_CHECKPOINTS + 3; i++) {
        assert_int_equal(
            sim_generate_keys(s, "m", 1, (uint64_t)i * 600, 600, &ins, &skip, &op, &err), 0);
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        if (i % 3 == 0) /* some apart by two operations, the rest by one */
            assert_int_equal(sim_add_node(s, name, strlen(name), 1, &op, &err), 0);
        assert_int_equal(sim_history_checkpoint(s, &h, &err), 0);
    }
    assert_int_equal(h.ncp, SIM_HISTORY_CHECKPOINTS);
    assert_int_equal(h.cp[h.ncp - 1].at, sim_last_op(s)); /* the newest stays */
    assert_int_equal(h.cp[0].at, 3);                      /* the far end too */
    for (size_t i = 1; i < h.ncp; i++)
        assert_true(h.cp[i].at > h.cp[i - 1].at);
    /* Every state is still the replayed one, whatever the way. */
    for (int64_t at = sim_last_op(s) - 1; at >= 0; at -= 3) {
        at_now = at;
        assert_int_equal(sim_history_at(s, &h, at, &v, &err), 0);
        assert_int_equal(sim_at(s, at, &fresh, &err), 0);
        same_state(v, fresh);
        sim_close(fresh);
    }
    sim_history_clear(&h);
    assert_int_equal(h.ncp, 0);
    sim_close(s);
}

/* Two processes on one file: the last operation, logged by the other one
 * after this sim last refreshed, is not "now" -- the state in memory does
 * not hold it yet; the view that answers does (issue 14, stale states). */
static void test_now_of_another_writer(void **state)
{
    (void)state;
    char dir[] = "/tmp/ringsim-hist-XXXXXX", path[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/w.db", dir);
    rs_error err;
    sim *a = NULL, *b = NULL, *v;
    int64_t op, ins, skip;
    seed_now = 5;
    assert_int_equal(sim_open(&a, path, &err), 0);
    assert_int_equal(sim_open(&b, path, &err), 0);
    assert_int_equal(sim_add_node(a, "a", 1, 1, &op, &err), 0);
    assert_int_equal(sim_generate_keys(a, "k", 1, 0, 100, &ins, &skip, &op, &err), 0);
    assert_int_equal(sim_add_node(b, "b", 1, 1, &op, &err), 0); /* b refreshes: 3 */
    assert_int_equal(op, 3);
    sim_history h = SIM_HISTORY_INIT;
    assert_int_equal(sim_history_at(a, &h, 3, &v, &err), 0); /* a has not refreshed */
    assert_ptr_not_equal(v, a);
    assert_int_equal(sim_node_count(v), 2);
    assert_int_equal(sim_history_at(a, &h, 2, &v, &err), 0);
    assert_int_equal(sim_node_count(v), 1);
    /* Refreshed, a holds operation 3: now. */
    assert_int_equal(sim_refresh(a, NULL, &err), 0);
    assert_int_equal(sim_history_at(a, &h, 3, &v, &err), 0);
    assert_ptr_equal(v, a);
    assert_string_equal(h.how, "now");
    /* Its own operation is now at once. */
    assert_int_equal(sim_add_node(a, "c", 1, 1, &op, &err), 0);
    assert_int_equal(sim_history_at(a, &h, op, &v, &err), 0);
    assert_ptr_equal(v, a);
    sim_history_clear(&h);
    sim_close(a);
    sim_close(b);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Issue 13: many nodes with many points, a generate, one more node.  The
 * state before the generate is the live state with the add and the
 * generate undone -- two layout builds (the copy's and the undo's) -- not
 * a replay of every node add (one build each, what a price in keys alone
 * chose).  The price now counts layouts; h.builds counts what was built. */
static void test_layouts_are_priced(void **state)
{
    (void)state;
    rs_error err;
    sim *s = NULL, *v, *fresh;
    int64_t op, ins, skip;
    seed_now = 6;
    assert_int_equal(sim_open(&s, ":memory:", &err), 0);
    place_config cfg = *sim_config(s);
    cfg.param[PP_POINTS_PER_NODE] = 160;
    assert_int_equal(sim_configure(s, &cfg, &op, &err), 0);
    for (int i = 0; i < 120; i++) {
        char name[24];
        snprintf(name, sizeof name, "node-%d", i);
        assert_int_equal(sim_add_node(s, name, strlen(name), 1, &op, &err), 0);
    }
    int64_t before = sim_last_op(s);
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 20000, &ins, &skip, &op, &err), 0);
    assert_int_equal(sim_add_node(s, "late", 4, 1, &op, &err), 0);
    sim_history h = SIM_HISTORY_INIT;
    at_now = before;
    assert_int_equal(sim_history_at(s, &h, before, &v, &err), 0);
    fprintf(stderr, "test_history: before the generate: %s, %llu layouts built\n", h.how,
            (unsigned long long)h.builds);
    assert_string_equal(h.how, "live");
    assert_true(h.builds <= 3);
    assert_int_equal(sim_at(s, before, &fresh, &err), 0);
    same_state(v, fresh);
    sim_close(fresh);
    /* Right after the generate: forward over its keys, or the live copy
     * with the last add undone -- a few builds either way. */
    assert_int_equal(sim_history_at(s, &h, before + 1, &v, &err), 0);
    assert_true(strcmp(h.how, "forward") == 0 || strcmp(h.how, "live") == 0);
    assert_true(h.builds <= 3);
    /* Near the start, a replay of a few node adds is cheapest. */
    assert_int_equal(sim_history_at(s, &h, 3, &v, &err), 0);
    assert_string_equal(h.how, "replay");
    assert_true(h.builds <= 5);
    sim_history_clear(&h);
    sim_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_back_is_undo),  cmocka_unit_test(test_random_histories),
        cmocka_unit_test(test_long_log),           cmocka_unit_test(test_old_log_insert),
        cmocka_unit_test(test_checkpoints),        cmocka_unit_test(test_now_of_another_writer),
        cmocka_unit_test(test_layouts_are_priced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
