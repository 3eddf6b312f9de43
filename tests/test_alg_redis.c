/*
 * test_alg_redis.c - the redis core against published values and against
 * the rules of redis-cli written out here independently.
 *
 * References: crc16.c's own check value (CRC-16/XMODEM of "123456789" is
 * 0x31C3) and entries of its table; redis.io's CLUSTER KEYSLOT page
 * (somekey -> 11058, foo{hash_tag} and bar{hash_tag} -> 2515); the hash tag
 * examples of the Redis Cluster specification; the 3-master split of the
 * cluster tutorial (0-5460, 5461-10922, 10923-16383) and the 4-master one of
 * the CLUSTER SLOTS page (0-4095, 4096-8191, 8192-12287, 12288-16383).  The
 * real redis-cli is compared slot by slot in tests/ref/redis_ref.sh.
 * Random tests use fixed seeds and print them when they fail.
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's redis).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alg_redis.h"

static uint64_t rng;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static uint32_t counts[REDIS_MAX_NODES];

static uint16_t slot_of(const char *s) { return redis_slot(s, strlen(s)); }

/* ---- keys ---------------------------------------------------------------- */

static void test_crc16_vectors(void **state)
{
    (void)state;
    assert_int_equal(redis_crc16("123456789", 9), 0x31C3);
    assert_int_equal(redis_crc16("", 0), 0);
    /* A single byte b gives crc16tab[b]: entries of redis's table. */
    static const struct {
        unsigned char b;
        uint16_t v;
    } tab[] = {{0x00, 0x0000}, {0x01, 0x1021}, {0x07, 0x70e7}, {0x41, 0x58e5}, {0x3f, 0xc7bc},
               {0x80, 0x9188}, {0x9c, 0x4235}, {0xc3, 0xe92f}, {0xff, 0x1ef0}};
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        assert_int_equal(redis_crc16(&tab[i].b, 1), tab[i].v);
    /* Every entry against the polynomial, bit by bit (the table is a
     * literal in alg_redis.c). */
    for (unsigned b = 0; b < 256; b++) {
        uint16_t x = (uint16_t)(b << 8);
        for (int k = 0; k < 8; k++)
            x = (uint16_t)(x & 0x8000u ? (unsigned)(x << 1) ^ 0x1021u : (unsigned)(x << 1));
        unsigned char byte = (unsigned char)b;
        assert_int_equal(redis_crc16(&byte, 1), x);
    }
    /* redis.io, CLUSTER KEYSLOT. */
    assert_int_equal(slot_of("somekey"), 11058);
    assert_int_equal(slot_of("foo{hash_tag}"), 2515);
    assert_int_equal(slot_of("bar{hash_tag}"), 2515);
    assert_int_equal(slot_of("123456789"), 0x31C3 & 0x3FFF);
}

/* Which bytes are hashed, and that the slot is theirs. */
static void expect_part(const char *key, const char *part)
{
    size_t off, n = redis_hashed_part(key, strlen(key), &off);
    if (n != strlen(part) || memcmp(key + off, part, n))
        fail_msg("key %s: hashed \"%.*s\", expected \"%s\"", key, (int)n, key + off, part);
    assert_int_equal(slot_of(key), redis_crc16(part, strlen(part)) & 0x3FFF);
}

static void test_hash_tags(void **state)
{
    (void)state;
    /* The Redis Cluster specification, "Hash tags". */
    expect_part("{user1000}.following", "user1000");
    expect_part("{user1000}.followers", "user1000");
    assert_int_equal(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
    expect_part("foo{}{bar}", "foo{}{bar}");
    expect_part("foo{{bar}}zap", "{bar");
    expect_part("foo{bar}{zap}", "bar");
    /* The edges of keyHashSlot's two loops. */
    expect_part("{", "{");
    expect_part("}", "}");
    expect_part("{}", "{}");
    expect_part("a}b{c}", "c");
    expect_part("}{x}", "x");
    expect_part("{a", "{a");
    expect_part("x{y}", "y");
    expect_part("{\xc3\xa9}z", "\xc3\xa9");
    /* Binary-safe: a NUL byte counts like any other. */
    char k[] = {'a', '{', '\0', '}', 'b'};
    size_t off, n = redis_hashed_part(k, sizeof k, &off);
    assert_int_equal(off, 2);
    assert_int_equal(n, 1);
    assert_int_equal(redis_slot(k, sizeof k), redis_crc16("", 1) & 0x3FFF);
    assert_int_equal(redis_slot(NULL, 0), 0);
}

/* ---- create -------------------------------------------------------------- */

/* redis-cli's create split for n masters, written out again here: the
 * ranges' last slots into last[], 0 when a range leaves 0..16383. */
static int cli_split(size_t n, long *last_out)
{
    float per = 16384 / (float)n, cursor = 0.0f;
    long first = 0;
    for (size_t i = 0; i < n; i++) {
        long last = lround(cursor + per - 1);
        if (last > 16384 || i == n - 1)
            last = 16383;
        if (last < first)
            last = first;
        if (last > 16383)
            return 0;
        if (last_out)
            last_out[i] = last;
        first = last + 1;
        cursor += per;
    }
    return 1;
}

static void expect_create(size_t n, const uint16_t *last)
{
    static uint32_t owner[REDIS_SLOTS];
    assert_int_equal(redis_create(n, owner), 0);
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        for (; s <= last[i]; s++)
            if (owner[s] != i)
                fail_msg("create(%zu): slot %zu owned by %u, expected %zu", n, s, owner[s], i);
}

static void test_create_published(void **state)
{
    (void)state;
    expect_create(3, (const uint16_t[]){5460, 10922, 16383});
    expect_create(4, (const uint16_t[]){4095, 8191, 12287, 16383});
    expect_create(1, (const uint16_t[]){16383});
    expect_create(2, (const uint16_t[]){8191, 16383});
}

static void test_create_invariants(void **state)
{
    (void)state;
    static uint32_t owner[REDIS_SLOTS];
    static long last[REDIS_MAX_NODES];
    for (size_t n = 1; n <= 20; n++) {
        assert_int_equal(redis_create(n, owner), 0);
        assert_true(cli_split(n, last));
        redis_counts(owner, n, counts);
        size_t s = 0;
        for (size_t i = 0; i < n; i++) {
            /* consecutive ranges in join order, as redis-cli prints them */
            for (; s <= (size_t)last[i]; s++)
                assert_int_equal(owner[s], i);
            size_t lo = 16384 / n, hi = (16384 + n - 1) / n;
            if (counts[i] < lo || counts[i] > hi)
                fail_msg("create(%zu): node %zu has %u slots", n, i, counts[i]);
        }
        assert_int_equal(s, REDIS_SLOTS);
    }
    /* Where redis-cli's float cursor leaves its array: never before 7542
     * nodes, then for some n (every 13th n is compared). */
    for (size_t n = 1; n < 7542; n++)
        if (redis_check_create(n, NULL))
            fail_msg("create(%zu) refused", n);
    assert_false(cli_split(7542, NULL));
    size_t bad = 0;
    for (size_t n = 7542; n <= REDIS_MAX_NODES; n += 13) {
        int ok = cli_split(n, NULL);
        assert_int_equal(redis_check_create(n, NULL), ok ? 0 : RINGSIM_EPARAM);
        bad += !ok;
    }
    assert_true(bad > 0 && bad < (REDIS_MAX_NODES - 7542) / 13);
    /* Sample the big n slot by slot. */
    for (size_t n = 21; n <= REDIS_MAX_NODES; n += 997) {
        if (!cli_split(n, last)) {
            assert_int_equal(redis_create(n, owner), RINGSIM_EPARAM);
            continue;
        }
        assert_int_equal(redis_create(n, owner), 0);
        for (size_t s = 0, i = 0; s < REDIS_SLOTS; s++) {
            while ((long)s > last[i])
                i++;
            assert_int_equal(owner[s], i);
        }
    }
    /* The float cursor's error: counts of 5 and 7 at n = 2688. */
    assert_int_equal(redis_create(2688, owner), 0);
    assert_true(cli_split(2688, last));
    redis_counts(owner, 2688, counts);
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < 2688; i++) {
        assert_int_equal(counts[i], last[i] - (i ? last[i - 1] : -1));
        lo = counts[i] < lo ? counts[i] : lo;
        hi = counts[i] > hi ? counts[i] : hi;
    }
    assert_int_equal(lo, 5);
    assert_int_equal(hi, 7);
    rs_error err = {0};
    assert_int_equal(redis_check_create(0, &err), RINGSIM_EPARAM);
    assert_int_equal(redis_check_create(16385, &err), RINGSIM_EPARAM);
    assert_int_equal(redis_check_create(7542, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "7542"));
    assert_int_equal(redis_create(0, owner), RINGSIM_EPARAM);
}

/* ---- join and leave ------------------------------------------------------ */

/* redis-cli's threshold test: would a rebalance with all weights 1 find a
 * node more than 2 % away from 16384 / n? */
static int over_threshold(const uint32_t *owner, size_t n)
{
    redis_counts(owner, n, counts);
    int expected = (int)((16384.0f / (float)n) * 1.0f);
    for (size_t i = 0; i < n; i++) {
        if (counts[i] > 0) {
            float err = fabs(100 - 100.0 * expected / counts[i]);
            if (err > 2.0f)
                return 1;
        } else if (expected > 1) {
            return 1;
        }
    }
    return 0;
}

static void test_join_after_create(void **state)
{
    (void)state;
    static uint32_t before[REDIS_SLOTS], owner[REDIS_SLOTS], again[REDIS_SLOTS];
    uint32_t old[20];
    for (size_t n = 1; n <= 20; n++) {
        redis_create(n, before);
        redis_counts(before, n, old);
        memcpy(owner, before, sizeof owner);
        int moved = redis_join(owner, n);
        uint32_t e = 16384 / (uint32_t)(n + 1);
        /* Each old node gives its lowest slots down to floor(16384/(n+1));
         * the newcomer takes everything given, leftover included. */
        assert_int_equal(moved, 16384 - n * e);
        redis_counts(owner, n + 1, counts);
        size_t start[20]; /* create's ranges are consecutive */
        for (size_t s = REDIS_SLOTS; s-- > 0;)
            start[before[s]] = s;
        for (size_t s = 0; s < REDIS_SLOTS; s++) {
            uint32_t o = before[s];
            /* the first old[o] - e slots of o's range moved */
            uint32_t want = s - start[o] < old[o] - e ? (uint32_t)n : o;
            if (owner[s] != want)
                fail_msg("join into create(%zu): slot %zu owned by %u, "
                         "expected %u",
                         n, s, owner[s], want);
        }
        for (size_t i = 0; i < n; i++)
            assert_int_equal(counts[i], e);
        /* Within redis-cli's threshold: its next rebalance moves nothing. */
        assert_false(over_threshold(owner, n + 1));
        memcpy(again, owner, sizeof again);
        assert_int_equal(redis_rebalance(again, n + 1, NULL, NULL), 0);
        assert_memory_equal(again, owner, sizeof again);
    }
    /* The first node takes every slot. */
    assert_int_equal(redis_join(owner, 0), 16384);
    for (size_t s = 0; s < REDIS_SLOTS; s++)
        assert_int_equal(owner[s], 0);
}

static void shuffle(uint32_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t j = rnd() % i;
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* alg_redis.h: a join into create(n) does not depend on redis-cli's node
 * order for n <= 138, and does from 139 on. */
static void test_join_order_independence(void **state)
{
    (void)state;
    static uint32_t start[REDIS_SLOTS], a[REDIS_SLOTS], b[REDIS_SLOTS];
    static uint32_t order[200];
    const uint64_t seed = 20240611;
    rng = seed;
    for (size_t n = 1; n <= 139; n += n < 24 || n >= 134 ? 1 : 10) {
        redis_create(n, start);
        memcpy(a, start, sizeof a);
        redis_join(a, n);
        int differs = 0;
        for (int t = 0; t < (n < 139 ? 6 : 40) && !differs; t++) {
            shuffle(order, n + 1);
            memcpy(b, start, sizeof b);
            assert_true(redis_rebalance(b, n + 1, NULL, order) >= 0);
            differs = memcmp(a, b, sizeof a) != 0;
        }
        if (differs != (n == 139))
            fail_msg("seed %llu: join into create(%zu): order %s the result",
                     (unsigned long long)seed, n, differs ? "changes" : "does not change");
    }
}

static void test_leave_after_create(void **state)
{
    (void)state;
    static uint32_t before[REDIS_SLOTS], owner[REDIS_SLOTS], again[REDIS_SLOTS];
    uint32_t old[20];
    for (size_t n = 2; n <= 20; n++) {
        redis_create(n, before);
        redis_counts(before, n, old);
        size_t m = n - 1;
        uint32_t e = 16384 / (uint32_t)m, r = 16384 % (uint32_t)m;
        for (uint32_t l = 0; l < n; l++) {
            memcpy(owner, before, sizeof owner);
            assert_int_equal(redis_leave(owner, n, l), (int)old[l]);
            redis_counts(owner, m, counts);
            /* The others keep their slots (ordinals above l shift down) and
             * end at e, the first r of them in join order at e + 1. */
            for (size_t s = 0; s < REDIS_SLOTS; s++)
                if (before[s] != l)
                    assert_int_equal(owner[s], before[s] - (before[s] > l));
            for (uint32_t i = 0; i < m; i++)
                if (counts[i] != e + (i < r))
                    fail_msg("create(%zu) then leave %u: node %u has %u slots", n, l, i, counts[i]);
            /* The lowest slot of the leaver goes to a node with the most to
             * gain; ties to the first in join order. */
            size_t s0 = 0;
            while (before[s0] != l)
                s0++;
            uint32_t best = 0;
            long most = -1;
            for (uint32_t i = 0; i < m; i++) {
                uint32_t o = i + (i >= l); /* old ordinal */
                long gain = (long)(e + (i < r)) - (long)old[o];
                if (gain > most) {
                    most = gain;
                    best = i;
                }
            }
            assert_int_equal(owner[s0], best);
            assert_false(over_threshold(owner, m));
            memcpy(again, owner, sizeof again);
            assert_int_equal(redis_rebalance(again, m, NULL, NULL), 0);
        }
    }
    /* The last node cannot leave; a node without slots moves nothing. */
    redis_create(1, owner);
    assert_int_equal(redis_leave(owner, 1, 0), RINGSIM_EPARAM);
    redis_create(3, owner);
    assert_int_equal(redis_leave(owner, 4, 3), 0);
    redis_create(3, before);
    assert_memory_equal(owner, before, sizeof owner);
    assert_int_equal(redis_leave(owner, 3, 3), RINGSIM_EPARAM);
}

/* A long random history: joins and leaves keep a valid map whose owners are
 * live nodes, a leave moves at least the leaver's slots and a join at least
 * what the newcomer gets (the others may trade too: alg_redis.h), and the
 * text round trip holds. */
static void test_random_history(void **state)
{
    (void)state;
    static uint32_t owner[REDIS_SLOTS], copy[REDIS_SLOTS];
    static char text[REDIS_TEXT_MAX];
    const uint64_t seed = 977;
    rng = seed;
    size_t n = 0;
    for (int step = 0; step < 300; step++) {
        int join = n < 2 || (n < 200 && rnd() % 3 != 0);
        int moved;
        if (join) {
            moved = redis_join(owner, n);
            n++;
            redis_counts(owner, n, counts);
            if (moved < (int)counts[n - 1])
                fail_msg("seed %llu step %d: join moved %d < %u", (unsigned long long)seed, step,
                         moved, counts[n - 1]);
        } else {
            uint32_t l = rnd() % (uint32_t)n;
            redis_counts(owner, n, counts);
            uint32_t held = counts[l];
            moved = redis_leave(owner, n, l);
            n--;
            if (moved < (int)held)
                fail_msg("seed %llu step %d: leave moved %d, held %u", (unsigned long long)seed,
                         step, moved, held);
        }
        for (size_t s = 0; s < REDIS_SLOTS; s++)
            if (owner[s] >= n)
                fail_msg("seed %llu step %d: slot %zu owned by %u of %zu", (unsigned long long)seed,
                         step, s, owner[s], n);
        /* the text round trip on whatever the history makes */
        size_t len = redis_format(owner, text, sizeof text);
        assert_true(len < sizeof text);
        rs_error err = {0};
        if (redis_parse(text, len, n, copy, &err))
            fail_msg("seed %llu step %d: %s", (unsigned long long)seed, step, err.msg);
        assert_memory_equal(copy, owner, sizeof copy);
    }
}

static void test_rebalance_arguments(void **state)
{
    (void)state;
    static uint32_t owner[REDIS_SLOTS], before[REDIS_SLOTS];
    redis_create(3, before);
    memcpy(owner, before, sizeof owner);
    float w[4] = {1, 1, 1, 1};
    assert_int_equal(redis_rebalance(owner, 4, w, (const uint32_t[]){0, 1, 1, 3}),
                     RINGSIM_EPARAM); /* not a permutation */
    assert_int_equal(redis_rebalance(owner, 4, w, (const uint32_t[]){0, 1, 2, 4}), RINGSIM_EPARAM);
    assert_int_equal(redis_rebalance(owner, 2, NULL, NULL), RINGSIM_EPARAM);
    w[2] = -1;
    assert_int_equal(redis_rebalance(owner, 4, w, NULL), RINGSIM_EPARAM);
    w[2] = NAN;
    assert_int_equal(redis_rebalance(owner, 4, w, NULL), RINGSIM_EPARAM);
    w[2] = INFINITY;
    assert_int_equal(redis_rebalance(owner, 4, w, NULL), RINGSIM_EPARAM);
    float zero[4] = {0, 0, 0, 0};
    assert_int_equal(redis_rebalance(owner, 4, zero, NULL), RINGSIM_EPARAM);
    assert_int_equal(redis_rebalance(owner, 0, NULL, NULL), RINGSIM_EPARAM);
    assert_int_equal(redis_join(owner, REDIS_MAX_NODES), RINGSIM_EPARAM);
    assert_memory_equal(owner, before, sizeof owner);
    /* Weights as --cluster-weight: node 0 at weight 2 of 4 expects 8192. */
    float w2[3] = {2, 1, 1};
    assert_true(redis_rebalance(owner, 3, w2, NULL) > 0);
    redis_counts(owner, 3, counts);
    assert_int_equal(counts[0], 8192);
    assert_int_equal(counts[1] + counts[2], 8192);

    alg_node nodes[2] = {{"a", 1, 1.0}, {"b", 1, 1.5}};
    rs_error err = {0};
    assert_int_equal(redis_check_nodes(nodes, 1, &err), 0);
    assert_int_equal(redis_check_nodes(nodes, 2, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "\"b\" has 1.5"));
}

/* ---- ranges, text -------------------------------------------------------- */

static void test_runs(void **state)
{
    (void)state;
    static uint32_t owner[REDIS_SLOTS];
    redis_create(4, owner);
    redis_join(owner, 4);
    redis_run runs[16];
    size_t total = redis_runs(owner, runs, 16);
    assert_int_equal(total, 8);
    /* In slot order, each a maximal run, covering 0..16383. */
    assert_int_equal(runs[0].first, 0);
    for (size_t i = 0; i < total; i++) {
        if (i)
            assert_int_equal(runs[i].first, runs[i - 1].last + 1);
        assert_true(runs[i].first <= runs[i].last);
        for (size_t s = runs[i].first; s <= runs[i].last; s++)
            assert_int_equal(owner[s], runs[i].node);
        if (i)
            assert_true(runs[i].node != runs[i - 1].node);
    }
    assert_int_equal(runs[total - 1].last, 16383);
    assert_int_equal(redis_runs(owner, NULL, 0), 8);
    assert_int_equal(redis_runs(owner, runs, 3), 8);
    /* One node: the newcomer has the lowest 820 slots of each old node. */
    assert_int_equal(redis_node_runs(owner, 4, runs, 16), 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(runs[i].first, 4096 * i);
        assert_int_equal(runs[i].last, 4096 * i + 819);
    }
    assert_int_equal(redis_node_runs(owner, 0, runs, 16), 1);
    assert_int_equal(redis_node_runs(owner, 9, runs, 16), 0);
}

static void test_format(void **state)
{
    (void)state;
    static uint32_t owner[REDIS_SLOTS], back[REDIS_SLOTS];
    static char text[REDIS_TEXT_MAX];
    redis_create(3, owner);
    size_t len = redis_format(owner, text, sizeof text);
    assert_string_equal(text, "0-5460:0,5461-10922:1,10923-16383:2");
    assert_int_equal(len, strlen(text));
    /* snprintf-like: truncated, NUL-terminated, full length returned. */
    char small[8];
    memset(small, 'x', sizeof small);
    assert_int_equal(redis_format(owner, small, sizeof small), len);
    assert_string_equal(small, "0-5460:");
    assert_int_equal(redis_format(owner, NULL, 0), len);
    assert_int_equal(redis_format(owner, small, 1), len);
    assert_string_equal(small, "");
    /* A long text: every slot its own run, owners of 5 digits. */
    for (size_t s = 0; s < REDIS_SLOTS; s++)
        owner[s] = s % 2 ? 16383 : 10000 + (uint32_t)(s % 6000);
    len = redis_format(owner, text, sizeof text);
    assert_true(len < REDIS_TEXT_MAX);
    assert_int_equal(strlen(text), len);
    assert_int_equal(redis_parse(text, len, REDIS_MAX_NODES, back, NULL), 0);
    assert_memory_equal(back, owner, sizeof back);
    assert_non_null(strstr(text, ",5:16383,6:10006,"));
}

static void expect_bad(const char *text, size_t n, const char *why)
{
    static uint32_t owner[REDIS_SLOTS];
    rs_error err = {0};
    if (redis_parse(text, strlen(text), n, owner, &err) != RINGSIM_EPARAM)
        fail_msg("accepted \"%.60s\"", text);
    if (!strstr(err.msg, why))
        fail_msg("\"%.60s\": message \"%s\" lacks \"%s\"", text, err.msg, why);
}

static void test_parse_malformed(void **state)
{
    (void)state;
    expect_bad("", 3, "empty");
    expect_bad("0-16383", 1, "expected ':'");
    expect_bad("0-16383:", 1, "node ordinal");
    expect_bad("0-16383:1", 1, "node ordinal 0..0");
    expect_bad("1-16383:0", 1, "expected 0");
    expect_bad("0-100:0,100-16383:1", 2, "expected 101");
    expect_bad("0-100:0,102-16383:1", 2, "expected 101");
    expect_bad("0-100:0,101-16383:0", 2, "written as one");
    expect_bad("0-16383:0,", 1, "after slot 16383");
    expect_bad("0-16383:0 ", 1, "after slot 16383");
    expect_bad(" 0-16383:0", 1, "slot number");
    expect_bad("00-16383:0", 1, "slot number");
    expect_bad("0-016383:0", 1, "slot number");
    expect_bad("0-16384:0", 1, "slot number");
    expect_bad("+0-16383:0", 1, "slot number");
    expect_bad("0-16383:-1", 1, "node ordinal");
    expect_bad("0-16383:00", 1, "node ordinal");
    expect_bad("0--16383:0", 1, "slot number");
    expect_bad("0-5:0,6-5:1", 2, "does not go up");
    expect_bad("0-0:0,1-16383:1", 2, "does not go up");
    expect_bad("0-99999999999999999999:0", 1, "slot number");
    expect_bad("0-16383:99999999999999999999", 1, "node ordinal");
    expect_bad("0-16383:4294967296", 1, "node ordinal");
    expect_bad(":0", 1, "slot number");
    expect_bad(",", 1, "slot number");
    expect_bad("0-5460:0;5461-16383:1", 2, "expected ','");
    expect_bad("0-5460:0,5461-16383:1", 0, "0 nodes");
    expect_bad("0-5460:0,5461-16383:1", 16385, "16385 nodes");
    expect_bad("0-5460:0,5461-16383:1\xc3\xa9", 2, "after slot 16383");
    /* Text is bounded by len, not by a NUL. */
    static uint32_t owner[REDIS_SLOTS];
    const char t[] = "0-16383:0\0trailing";
    assert_int_equal(redis_parse(t, 9, 1, owner, NULL), 0);
    assert_int_equal(redis_parse(t, sizeof t - 1, 1, owner, NULL), RINGSIM_EPARAM);
    assert_int_equal(redis_parse(t, 5, 1, owner, NULL), RINGSIM_EPARAM);
}

/* Every prefix of a valid text fails; random edits either fail or give a
 * text that formats back to itself (the format is canonical). */
static void test_parse_fuzz(void **state)
{
    (void)state;
    static uint32_t owner[REDIS_SLOTS], back[REDIS_SLOTS];
    static char text[REDIS_TEXT_MAX], edit[REDIS_TEXT_MAX + 16], again[REDIS_TEXT_MAX + 16];
    redis_create(5, owner);
    redis_join(owner, 5);
    redis_leave(owner, 6, 2);
    size_t len = redis_format(owner, text, sizeof text);
    for (size_t k = 0; k < len; k++)
        assert_int_equal(redis_parse(text, k, 5, back, NULL), RINGSIM_EPARAM);
    assert_int_equal(redis_parse(text, len, 5, back, NULL), 0);
    assert_memory_equal(back, owner, sizeof back);

    const uint64_t seed = 4242;
    rng = seed;
    static const char alphabet[] = "0123456789-:,19 \xff";
    size_t accepted = 0;
    for (int t = 0; t < 20000; t++) {
        size_t el = len;
        memcpy(edit, text, len);
        for (int e = 1 + (int)(rnd() % 3); e > 0; e--) {
            size_t at = rnd() % (el + 1);
            int op = (int)(rnd() % 3);
            char c = alphabet[rnd() % (sizeof alphabet - 1)];
            if (op == 0 && at < el) {
                edit[at] = c;
            } else if (op == 1 && el < len + 8) {
                memmove(edit + at + 1, edit + at, el - at);
                edit[at] = c;
                el++;
            } else if (at < el) {
                memmove(edit + at, edit + at + 1, el - at - 1);
                el--;
            }
        }
        rs_error err = {0};
        if (redis_parse(edit, el, 6, back, &err) == 0) {
            accepted++;
            size_t al = redis_format(back, again, sizeof again);
            if (al != el || memcmp(again, edit, el))
                fail_msg("seed %llu try %d: \"%.*s\" parsed but formats as "
                         "\"%s\"",
                         (unsigned long long)seed, t, (int)el, edit, again);
        } else if (err.msg[0] == '\0') {
            fail_msg("seed %llu try %d: no message", (unsigned long long)seed, t);
        }
    }
    assert_true(accepted > 0); /* some edits (owner digits) stay valid */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc16_vectors),
        cmocka_unit_test(test_hash_tags),
        cmocka_unit_test(test_create_published),
        cmocka_unit_test(test_create_invariants),
        cmocka_unit_test(test_join_after_create),
        cmocka_unit_test(test_join_order_independence),
        cmocka_unit_test(test_leave_after_create),
        cmocka_unit_test(test_random_history),
        cmocka_unit_test(test_rebalance_arguments),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_parse_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
