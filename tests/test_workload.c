/*
 * test_workload.c - workloads (API.md version 3, "traffic"): parsing
 * with defaults and refusals, zipf's normalisation against a sum in long
 * double, shares that sum to 1, and the engine's per-node requests against
 * sim_workload_each (every key's share, added up by node here), through
 * topology changes, inserts and a revert.
 *
 * Checks docs/api.md, 'Workloads: requests and value sizes', 'PUT
 * /api/workload'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "workload.h"

static int parse(const char *text, workload *w)
{
    rs_error e;
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    int rc = wl_from_json(j, w, &e);
    json_decref(j);
    return rc;
}

static void test_parse(void **state)
{
    (void)state;
    workload w;
    assert_int_equal(parse("{\"kind\": \"zipf\", \"s\": 1}", &w), 0);
    assert_int_equal(w.kind, WL_ZIPF);
    assert_int_equal(w.order, WL_ORDER_HASHED);
    assert_int_equal(w.seed, 0);
    json_t *j = wl_to_json(&w);
    assert_string_equal(json_string_value(json_object_get(j, "order")), "hashed");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "sizes"), "bytes")), 1);
    json_decref(j);
    wl_free(&w);
    const char *bad[] = {
        "{\"kind\": \"zipf\"}",
        "{\"kind\": \"zipf\", \"s\": 0}",
        "{\"kind\": \"zipf\", \"s\": -2}",
        "{\"kind\": \"zipf\", \"s\": 1, \"order\": \"x\"}",
        "{\"kind\": \"zipf\", \"s\": 1, \"extra\": 1}",
        "{\"kind\": \"hotspot\", \"hot_fraction\": 0, \"hot_share\": 0.5}",
        "{\"kind\": \"hotspot\", \"hot_fraction\": 1, \"hot_share\": 0.5}",
        "{\"kind\": \"hotspot\", \"hot_fraction\": 0.5, \"hot_share\": 1.01}",
        "{\"kind\": \"keys\", \"keys\": [{\"key\": \"a\", \"share\": -1}]}",
        "{\"kind\": \"keys\", \"keys\": [{\"key\": \"a\", \"share\": 0.7}, {\"key\": \"b\", "
        "\"share\": 0.4}]}",
        "{\"kind\": \"keys\", \"keys\": [{\"key\": \"a\", \"share\": 0.1}, {\"key\": \"a\", "
        "\"share\": 0.1}]}",
        "{\"kind\": \"nope\"}",
        "{\"kind\": \"uniform\", \"sizes\": {\"kind\": \"uniform\", \"min\": 5, \"max\": 4}}",
        "{\"kind\": \"uniform\", \"sizes\": {\"kind\": \"fixed\", \"bytes\": -1}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(parse(bad[i], &w), RINGSIM_EPARAM);
}

/* The normalisation, exact: against a long double sum, at s = 1 too. */
static void test_zipf_norm(void **state)
{
    (void)state;
    const double ss[] = {0.6, 0.99, 1.0, 1.01, 1.2, 2.5};
    for (size_t k = 0; k < sizeof ss / sizeof ss[0]; k++) {
        workload w;
        wl_init(&w);
        w.kind = WL_ZIPF;
        w.s = ss[k];
        wl_norm m;
        uint64_t n = 200000;
        wl_norm_compute(&w, n, &m);
        long double h = 0;
        for (uint64_t r = n; r >= 1; r--)
            h += powl((long double)r, -(long double)ss[k]);
        assert_true(fabsl((long double)m.h - h) / h < 1e-15L);
        long double total = 0;
        for (uint64_t r = 1; r <= n; r++)
            total += wl_share_of_rank(&w, &m, r);
        assert_true(fabsl(total - 1) < 1e-12L);
    }
    /* H(n, 1) grows like ln n + gamma: at 10M, 16.695311365859852... */
    workload w;
    wl_init(&w);
    w.kind = WL_ZIPF;
    w.s = 1;
    wl_norm m;
    wl_norm_compute(&w, 10000000, &m);
    assert_true(fabs(m.h - (log(1e7) + 0.5772156649015329 + 1 / 2e7)) < 1e-9);
}

/* The weight table: H bit for bit wl_norm_compute's at every n it covers,
 * extended in steps, started again for another s. */
static void test_zipf_table(void **state)
{
    (void)state;
    wl_table t;
    memset(&t, 0, sizeof t);
    workload w;
    wl_init(&w);
    w.kind = WL_ZIPF;
    const double ss[] = {0.7, 1.0, 1.3};
    const uint64_t steps[] = {1, 5, 1000, 1001, 4097, 30000};
    for (size_t k = 0; k < sizeof ss / sizeof ss[0]; k++) {
        w.s = ss[k];
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            assert_int_equal(wl_table_reach(&t, w.s, steps[i]), 0);
            wl_norm a, b;
            wl_norm_compute(&w, steps[i], &a);
            wl_norm_table(&w, &t, steps[i], &b);
            assert_true(a.h == b.h && a.n == b.n);
            for (uint64_t r = 1; r <= steps[i]; r += 997)
                assert_true(wl_share_table(&w, &t, &b, r) == wl_share_of_rank(&w, &a, r));
        }
        /* a smaller n is read from the same table */
        wl_norm a, b;
        wl_norm_compute(&w, 77, &a);
        wl_norm_table(&w, &t, 77, &b);
        assert_true(a.h == b.h);
    }
    wl_table_free(&t);
}

static void test_hotspot_shares(void **state)
{
    (void)state;
    workload w;
    assert_int_equal(
        parse("{\"kind\": \"hotspot\", \"hot_fraction\": 0.25, \"hot_share\": 0.9}", &w), 0);
    wl_norm m;
    wl_norm_compute(&w, 10, &m);
    assert_int_equal(m.hot, 2); /* max(1, floor(2.5)) */
    assert_true(fabs(wl_share_of_rank(&w, &m, 1) - 0.45) < 1e-15);
    assert_true(fabs(wl_share_of_rank(&w, &m, 3) - 0.1 / 8) < 1e-15);
    wl_norm_compute(&w, 1, &m);
    assert_true(fabs(wl_share_of_rank(&w, &m, 1) - 1) < 1e-15); /* every key hot */
    wl_free(&w);
}

/* ---- the engine against sim_workload_each ---- */

typedef struct sums {
    sim *s;
    double total;
    double *per; /* by placement index */
    int64_t *bytes;
    size_t n;
} sums;

static int add_share(void *ud, const char *key, size_t len, double share)
{
    sums *t = ud;
    sim_where wh;
    sim_key_where(t->s, key, len, &wh);
    int64_t b;
    rs_error e;
    assert_int_equal(sim_key_bytes(t->s, key, len, &b, &e), 0);
    if (wh.info.owner >= 0) {
        t->per[wh.info.owner] += share;
        t->bytes[wh.info.owner] += b;
    }
    t->total += share;
    return 0;
}

static void agree(sim *s)
{
    rs_error e;
    size_t n = sim_node_count(s);
    sums t = {s, 0, calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(int64_t)), n};
    assert_int_equal(sim_workload_each(s, add_share, &t, &e), 0);
    assert_true(fabs(t.total - 1) < 1e-9);
    double all = 0;
    for (size_t i = 0; i < n; i++) {
        double rq;
        int64_t b;
        assert_int_equal(sim_node_load(s, i, &rq, &b, &e), 0);
        assert_true(fabs(rq - t.per[i]) < 1e-12);
        if (b != t.bytes[i])
            fail_msg("node %zu of %zu: bytes %lld, its keys %lld, requests %g/%g", i, n,
                     (long long)b, (long long)t.bytes[i], rq, t.per[i]);
        all += rq;
    }
    assert_true(fabs(all - 1) < 1e-9);
    free(t.per);
    free(t.bytes);
}

static void set(sim *s, const char *text)
{
    rs_error e;
    int64_t op;
    json_t *j = json_loads(text, 0, NULL);
    assert_int_equal(sim_set_workload(s, j, &op, &e), 0);
    assert_true(op > 0);
    json_decref(j);
}

static void test_engine(void **state)
{
    (void)state;
    char path[] = "/tmp/ringsim-test-workload-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *s;
    rs_error e;
    int64_t op, ins, skip;
    assert_int_equal(sim_open(&s, path, &e), 0);
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%d", i);
        assert_int_equal(sim_add_node(s, n, strlen(n), 1, &op, &e), 0);
    }
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 3000, &ins, &skip, &op, &e), 0);
    const char *ws[] = {
        "{\"kind\": \"zipf\", \"s\": 0.8}",
        "{\"kind\": \"zipf\", \"s\": 1.0, \"order\": \"insert\"}",
        "{\"kind\": \"hotspot\", \"hot_fraction\": 0.1, \"hot_share\": 0.7, \"seed\": 3}",
        "{\"kind\": \"keys\", \"keys\": [{\"key\": \"k7\", \"share\": 0.4}]}",
    };
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        set(s, ws[i]);
        agree(s);
        int64_t before = sim_last_op(s);
        assert_int_equal(sim_add_node(s, "extra", 5, 1, &op, &e), 0); /* the cache is kept */
        agree(s);
        assert_int_equal(sim_generate_keys(s, "more", 4, 0, 50, &ins, &skip, &op, &e), 0);
        agree(s); /* rebuilt after an insert */
        assert_int_equal(sim_revert(s, before, &op, &e), 0);
        agree(s);
    }
    sim_close(s);
    unlink(path);
}

/* The server's loop never builds a workload's cache: a light refresh of a
 * second connection after a change under a workload other than the
 * default says heavy (the refresher reloads and warms the spare engine),
 * and whenever it says light the loop's reads are ready as they are. */
static void test_refresh_light_never_builds(void **state)
{
    (void)state;
    char path[] = "/tmp/ringsim-test-workload-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *a, *loop;
    rs_error e;
    int64_t op, ins, skip;
    bool heavy;
    assert_int_equal(sim_open(&a, path, &e), 0);
    for (int i = 0; i < 4; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%d", i);
        assert_int_equal(sim_add_node(a, n, strlen(n), 1, &op, &e), 0);
    }
    assert_int_equal(sim_generate_keys(a, "k", 1, 0, 2000, &ins, &skip, &op, &e), 0);
    assert_int_equal(sim_open(&loop, path, &e), 0);
    assert_int_equal(sim_workload_warm(loop, &e), 0);
    assert_true(sim_workload_ready(loop));
    const char *ws[] = {
        "{\"kind\": \"zipf\", \"s\": 1.0}",
        "{\"kind\": \"zipf\", \"s\": 1.0, \"order\": \"insert\"}",
        "{\"kind\": \"keys\", \"keys\": [{\"key\": \"k7\", \"share\": 0.4}]}",
        "{\"kind\": \"uniform\"}",
    };
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        bool skewed = strstr(ws[i], "uniform") == NULL;
        for (int step = 0; step < 3; step++) {
            char pre[32];
            snprintf(pre, sizeof pre, "w%zu-%d-", i, step);
            if (step == 0) /* the workload change itself */
                set(a, ws[i]);
            else
                assert_int_equal(sim_generate_keys(a, pre, strlen(pre), 0, 20, &ins, &skip, &op, &e),
                                 0);
            assert_int_equal(sim_refresh_light(loop, &heavy, &e), 0);
            /* heavy for a skewed workload, and for the change away from one */
            assert_true(heavy == (skewed || (step == 0 && i > 0)));
            if (heavy) { /* the refresher's part */
                assert_int_equal(sim_refresh(loop, NULL, &e), 0);
                assert_int_equal(sim_workload_warm(loop, &e), 0);
            }
            assert_true(sim_workload_ready(loop));
            double ra, rl;
            int64_t ba, bl;
            for (size_t n = 0; n < sim_node_count(a); n++) {
                assert_int_equal(sim_node_load(a, n, &ra, &ba, &e), 0);
                assert_int_equal(sim_node_load(loop, n, &rl, &bl, &e), 0);
                assert_true(fabs(ra - rl) < 1e-12 && ba == bl);
            }
        }
    }
    sim_close(loop);
    sim_close(a);
    unlink(path);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WL_SANITIZED 1
#endif
#endif

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Issue 26, item 3: under a keys workload, a node join cost O(listed) per
 * moved key (every moved key's share counted the stored listed keys again
 * with a lookup each): 4,000 listed of 50,000 stored took 7.9 s, 200,000
 * of 250,000 never answered.  Now O(listed + moved): the join of a node
 * that takes about a quarter of the keys answers within a generous bound
 * (plain build; the sanitizer builds run a smaller case for correctness),
 * and the per-node requests agree with every key's share added up. */
static void test_keys_workload_linear(void **state)
{
    (void)state;
#ifdef WL_SANITIZED
    int stored = 25000, listed = 20000;
#else
    int stored = 250000, listed = 200000;
#endif
    /* RINGSIM_BENCH_KEYS=STORED,LISTED: another size, for a figure. */
    const char *bench = getenv("RINGSIM_BENCH_KEYS");
    if (bench && sscanf(bench, "%d,%d", &stored, &listed) == 2)
        assert_true(stored > 0 && listed > 0 && listed <= stored);
    char path[] = "/tmp/ringsim-test-workload-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *s;
    rs_error e;
    int64_t op, ins, skip;
    assert_int_equal(sim_open(&s, path, &e), 0);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%d", i);
        assert_int_equal(sim_add_node(s, n, strlen(n), 1, &op, &e), 0);
    }
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, (uint64_t)stored, &ins, &skip, &op, &e), 0);
    json_t *keys = json_array();
    for (int i = 0; i < listed; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        json_array_append_new(keys, json_pack("{s:s, s:f}", "key", k, "share", 0.5 / (double)listed));
    }
    json_t *spec = json_pack("{s:s, s:o}", "kind", "keys", "keys", keys);
    double t0 = now_s();
    assert_int_equal(sim_set_workload(s, spec, &op, &e), 0);
    json_decref(spec);
    double t1 = now_s();
    assert_int_equal(sim_read_begin(s, &e), 0); /* as the server reads */
    agree(s);                                   /* builds the cache */
    sim_read_end(s);
    double t2 = now_s();
    assert_int_equal(sim_add_node(s, "joiner", 6, 1, &op, &e), 0);
    double t3 = now_s();
    assert_int_equal(sim_read_begin(s, &e), 0);
    agree(s);
    sim_read_end(s);
    sim_op o;
    assert_int_equal(sim_log_get(s, op, &o, &e), 0);
    int64_t moved = o.keys_moved;
    double rq = o.requests_moved;
    sim_op_clear(&o);
    print_message("measured: keys workload, %d listed of %d stored: set %.2f s, cache built "
                  "%.2f s, node join %.2f s (%lld keys moved, requests_moved %.4f)\n",
                  listed, stored, t1 - t0, t2 - t1, t3 - t2, (long long)moved, rq);
    assert_true(moved > 0 && rq > 0 && rq < 1);
#ifndef WL_SANITIZED
    assert_true(t3 - t2 < 30.0); /* about 1.5 s here; 180 s gave no answer before */
#endif
    sim_close(s);
    unlink(path);
}

/* Issue 26, item 8: value sizes of 2^50 (a size's maximum) on 50,000 keys
 * summed past 2^63 and answered negative bytes.  Byte totals are exact
 * integers: keys x the largest size must stay within 2^53, else the
 * workload, or the insert that would pass it, is refused and nothing
 * changes; at the bound every node's bytes and an operation's bytes_moved
 * are exact. */
static void test_bytes_exact(void **state)
{
    (void)state;
    char path[] = "/tmp/ringsim-test-workload-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sim *s;
    rs_error e;
    int64_t op, ins, skip;
    assert_int_equal(sim_open(&s, path, &e), 0);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%d", i);
        assert_int_equal(sim_add_node(s, n, strlen(n), 1, &op, &e), 0);
    }
    assert_int_equal(sim_generate_keys(s, "k", 1, 0, 50000, &ins, &skip, &op, &e), 0);
    int64_t last = sim_last_op(s);
    const char *refused[] = {
        "{\"kind\": \"uniform\", \"sizes\": {\"kind\": \"fixed\", \"bytes\": 1125899906842624}}",
        "{\"kind\": \"zipf\", \"s\": 1, \"sizes\": {\"kind\": \"uniform\", \"min\": 0, "
        "\"max\": 1125899906842624}}",
        "{\"kind\": \"uniform\", \"sizes\": {\"kind\": \"keys\", \"rest\": 1, \"keys\": "
        "[{\"key\": \"k1\", \"bytes\": 1125899906842624}]}}",
        "{\"kind\": \"uniform\", \"sizes\": {\"kind\": \"fixed\", \"bytes\": 180143985095}}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        json_t *j = json_loads(refused[i], 0, NULL);
        assert_non_null(j);
        int rc = sim_set_workload(s, j, &op, &e);
        json_decref(j);
        if (rc != RINGSIM_EPARAM)
            fail_msg("accepted: %s", refused[i]);
        assert_non_null(strstr(e.msg, "2^53"));
        assert_int_equal(sim_last_op(s), last); /* nothing recorded */
    }
    /* At the bound: 2^53 / 50,000 bytes a key, every total exact. */
    const int64_t per = (INT64_C(1) << 53) / 50000;
    char spec[160];
    snprintf(spec, sizeof spec,
             "{\"kind\": \"uniform\", \"sizes\": {\"kind\": \"fixed\", "
             "\"bytes\": %lld}}",
             (long long)per);
    set(s, spec);
    int64_t all = 0;
    for (size_t n = 0; n < sim_node_count(s); n++) {
        double rq;
        int64_t b;
        assert_int_equal(sim_node_load(s, n, &rq, &b, &e), 0);
        assert_true(b >= 0);
        all += b;
    }
    assert_true(all == 50000 * per);
    /* One key more could pass it: refused, nothing changed. */
    last = sim_last_op(s);
    assert_int_equal(sim_generate_keys(s, "more", 4, 0, 1, &ins, &skip, &op, &e), RINGSIM_EPARAM);
    assert_int_equal(sim_last_op(s), last);
    assert_int_equal(sim_key_count(s), 50000);
    /* A join moves whole keys' sizes. */
    assert_int_equal(sim_add_node(s, "joiner", 6, 1, &op, &e), 0);
    sim_op o;
    assert_int_equal(sim_log_get(s, op, &o, &e), 0);
    assert_true(o.keys_moved > 0 && o.bytes_moved == o.keys_moved * per);
    sim_op_clear(&o);
    /* Sizes that vary, at the bound too: every node's bytes against each
     * key's size added up here. */
    snprintf(spec, sizeof spec,
             "{\"kind\": \"zipf\", \"s\": 1, \"sizes\": {\"kind\": "
             "\"uniform\", \"min\": 0, \"max\": %lld}}",
             (long long)per);
    set(s, spec);
    agree(s);
    sim_close(s);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_zipf_norm),
        cmocka_unit_test(test_zipf_table),
        cmocka_unit_test(test_hotspot_shares),
        cmocka_unit_test(test_engine),
        cmocka_unit_test(test_refresh_light_never_builds),
        cmocka_unit_test(test_keys_workload_linear),
        cmocka_unit_test(test_bytes_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
