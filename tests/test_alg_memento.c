/*
 * test_alg_memento.c - MementoHash properties, on random add/remove
 * sequences with fixed seeds.
 *
 * The paper (Coluzzi et al. 2023, sections 4-5) and the reference
 * implementation promise, and every step here checks against a model kept by
 * the test itself:
 *   - with no removal, the lookup is jump_hash(keyhash, n) (the published
 *     function, itself tested against Guava and the C++ reference);
 *   - a removal moves exactly the removed bucket's keys, to live buckets;
 *   - an add takes the most recently removed bucket (else a new one at the
 *     end), moves keys only to it, and restores exactly the placement from
 *     before the matching removal;
 *   - every lookup hits a live bucket, and keys stay balanced;
 *   - serialize -> parse gives back the same state, and parse refuses
 *     malformed text without crashing.
 * A failure prints the seed and the step.
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's memento).
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

#include "alg_jump.h"
#include "alg_memento.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_no_removal_is_jump(void **state)
{
    (void)state;
    memento *m = memento_new();
    assert_non_null(m);
    assert_int_equal(memento_lookup(m, 42), -1);
    for (int32_t i = 0; i < 50; i++) {
        int32_t b = -1;
        assert_int_equal(memento_add(m, &b), 0);
        assert_int_equal(b, i);
    }
    uint64_t s = 11;
    for (int i = 0; i < 10000; i++) {
        uint64_t k = rng_next(&s);
        assert_int_equal(memento_lookup(m, k), jump_hash(k, 50));
    }
    /* Removing the last bucket with nothing else removed shrinks. */
    assert_int_equal(memento_remove(m, 49), 0);
    assert_int_equal(memento_barray_size(m), 49);
    assert_int_equal(memento_size(m), 49);
    for (int i = 0; i < 10000; i++) {
        uint64_t k = rng_next(&s);
        assert_int_equal(memento_lookup(m, k), jump_hash(k, 49));
    }
    /* Removing another records it: the b-array keeps its size. */
    assert_int_equal(memento_remove(m, 3), 0);
    assert_int_equal(memento_barray_size(m), 49);
    assert_int_equal(memento_size(m), 48);
    memento_free(m);
    memento_free(NULL);
}

static void test_remove_errors(void **state)
{
    (void)state;
    memento *m = memento_new();
    int32_t b;
    for (int i = 0; i < 4; i++)
        assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(memento_remove(m, 4), RINGSIM_ENOTFOUND);
    assert_int_equal(memento_remove(m, -1), RINGSIM_ENOTFOUND);
    assert_int_equal(memento_remove(m, 1), 0);
    assert_int_equal(memento_remove(m, 1), RINGSIM_ENOTFOUND);
    assert_int_equal(memento_is_live(m, 1), 0);
    assert_int_equal(memento_is_live(m, 0), 1);
    assert_int_equal(memento_is_live(m, 9), 0);
    memento_free(m);
}

/* Every bucket removed, then back in reverse order. */
static void test_all_removed(void **state)
{
    (void)state;
    memento *m = memento_new();
    int32_t b;
    assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(memento_remove(m, 0), 0); /* recorded */
    assert_int_equal(memento_remove(m, 1), 0); /* recorded: memory not empty */
    assert_int_equal(memento_size(m), 0);
    assert_int_equal(memento_barray_size(m), 2);
    assert_int_equal(memento_lookup(m, 7), -1);
    assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(memento_lookup(m, 7), 1);
    assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(b, 2);
    memento_free(m);
}

enum { KEYS = 4000, STEPS = 250, MAXLIVE = 40, MAXB = 64 };

typedef struct model {
    int live[MAXB];
    int nlive;
    int32_t stack[MAXB]; /* removals not yet undone, oldest first */
    int32_t *snap[MAXB]; /* placement before each of them */
    int depth;
} model;

/* serialize -> parse -> serialize is the identity, and the parsed state
 * places every key as the original does. */
static void check_round_trip(const memento *m, const uint64_t *keys, const int32_t *place)
{
    char *text = NULL, *again = NULL;
    size_t len = 0;
    assert_int_equal(memento_serialize(m, &text, &len), 0);
    assert_int_equal(strlen(text), len);
    memento *p = NULL;
    rs_error err = {0};
    assert_int_equal(memento_parse(text, len, &p, &err), 0);
    assert_int_equal(memento_serialize(p, &again, NULL), 0);
    assert_string_equal(text, again);
    assert_int_equal(memento_size(p), memento_size(m));
    assert_int_equal(memento_barray_size(p), memento_barray_size(m));
    memento *c = memento_copy(m);
    assert_non_null(c);
    for (int i = 0; i < KEYS; i++) {
        assert_int_equal(memento_lookup(p, keys[i]), place[i]);
        assert_int_equal(memento_lookup(c, keys[i]), place[i]);
    }
    memento_free(c);
    memento_free(p);
    free(text);
    free(again);
}

/* Each live bucket holds Binomial(KEYS, 1/L) keys, mean mu = KEYS/L and
 * sigma < sqrt(mu).  The bound mu +- 6 sqrt(mu) (+-60% at L = 40, +-18% at
 * L = 2) fails an unbiased placement with probability ~2e-9 per bucket, so
 * about 2e-5 over the ~20,000 bucket checks of the run, while the defects
 * that matter (a live bucket that gets nothing, one that gets a double
 * share) are more than 10 sigma out. */
static void check_balance(const model *md, const int32_t *place, uint64_t seed, int step)
{
    if (md->nlive < 2)
        return;
    unsigned count[MAXB] = {0};
    for (int i = 0; i < KEYS; i++)
        count[place[i]]++;
    double mu = (double)KEYS / md->nlive, tol = 6 * sqrt(mu);
    for (int b = 0; b < MAXB; b++) {
        if (!md->live[b])
            continue;
        if (fabs(count[b] - mu) > tol)
            print_error("seed %llu step %d: bucket %d has %u keys, mean %.1f\n",
                        (unsigned long long)seed, step, b, count[b], mu);
        assert_true(fabs(count[b] - mu) <= tol);
    }
}

static void run_sequence(uint64_t seed)
{
    uint64_t s = seed;
    uint64_t *keys = malloc(KEYS * sizeof *keys);
    int32_t *before = malloc(KEYS * sizeof *before), *after = malloc(KEYS * sizeof *after);
    assert_true(keys && before && after);
    for (int i = 0; i < KEYS; i++)
        keys[i] = rng_next(&s);
    model md = {0};
    memento *m = memento_new();
    for (int i = 0; i < 8; i++) {
        int32_t b;
        assert_int_equal(memento_add(m, &b), 0);
        md.live[b] = 1;
        md.nlive++;
    }
    for (int i = 0; i < KEYS; i++)
        before[i] = memento_lookup(m, keys[i]);

    for (int step = 0; step < STEPS; step++) {
        int add = md.nlive <= 1 ? 1 : md.nlive >= MAXLIVE ? 0 : (int)(rng_next(&s) & 1);
        int32_t b;
        if (add) {
            assert_int_equal(memento_add(m, &b), 0);
            int32_t want = md.depth ? md.stack[md.depth - 1] : md.nlive;
            if (b != want)
                print_error("seed %llu step %d: add took %d, expected %d\n",
                            (unsigned long long)seed, step, b, want);
            assert_int_equal(b, want);
            assert_int_equal(md.live[b], 0);
            md.live[b] = 1;
            md.nlive++;
        } else {
            /* a random live bucket */
            int pick = (int)(rng_next(&s) % (uint64_t)md.nlive);
            for (b = 0; b < MAXB; b++)
                if (md.live[b] && pick-- == 0)
                    break;
            assert_int_equal(memento_remove(m, b), 0);
            md.live[b] = 0;
            md.nlive--;
            md.stack[md.depth] = b;
            md.snap[md.depth] = malloc(KEYS * sizeof(int32_t));
            assert_non_null(md.snap[md.depth]);
            memcpy(md.snap[md.depth], before, KEYS * sizeof(int32_t));
            md.depth++;
        }
        assert_int_equal(memento_size(m), md.nlive);
        for (int i = 0; i < KEYS; i++) {
            after[i] = memento_lookup(m, keys[i]);
            int ok = after[i] >= 0 && after[i] < MAXB && md.live[after[i]];
            if (add) /* only to the new bucket */
                ok = ok && (after[i] == before[i] || after[i] == b);
            else /* exactly the removed bucket's keys */
                ok = ok && (before[i] == b ? after[i] != b : after[i] == before[i]);
            if (!ok)
                print_error("seed %llu step %d (%s %d): key %d went %d -> %d\n",
                            (unsigned long long)seed, step, add ? "add" : "remove", b, i, before[i],
                            after[i]);
            assert_true(ok);
        }
        if (add && md.depth && md.stack[md.depth - 1] == b) {
            md.depth--; /* the add undid this removal: placement as before it */
            assert_memory_equal(after, md.snap[md.depth], KEYS * sizeof(int32_t));
            free(md.snap[md.depth]);
        }
        check_balance(&md, after, seed, step);
        if (step % 10 == 0)
            check_round_trip(m, keys, after);
        memcpy(before, after, KEYS * sizeof *before);
    }
    while (md.depth)
        free(md.snap[--md.depth]);
    memento_free(m);
    free(keys);
    free(before);
    free(after);
}

static void test_random_sequences(void **state)
{
    (void)state;
    static const uint64_t seeds[] = {1, 2, 2023};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        print_message("seed %llu\n", (unsigned long long)seeds[i]);
        run_sequence(seeds[i]);
    }
}

/* Parse from an exact-size heap copy so that ASan sees any overread. */
static int parse_exact(const char *text, size_t len, memento **out, rs_error *err)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    int rc = memento_parse(copy, len, out, err);
    free(copy);
    return rc;
}

static void test_parse_valid(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "memento/1 buckets=0 removed=",
        "memento/1 buckets=3 removed=",
        "memento/1 buckets=3 removed=0,2",
        "memento/1 buckets=2 removed=0,1",
        "memento/1 buckets=1048576 removed=0,1048575",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        memento *m = NULL;
        rs_error err = {0};
        if (parse_exact(ok[i], strlen(ok[i]), &m, &err) != 0)
            print_error("%s: %s\n", ok[i], err.msg);
        assert_non_null(m);
        char *text;
        assert_int_equal(memento_serialize(m, &text, NULL), 0);
        assert_string_equal(text, ok[i]);
        free(text);
        memento_free(m);
    }
    /* The lengths, not a NUL, end the text. */
    memento *m = NULL;
    const char *longer = "memento/1 buckets=3 removed=0,2XYZ";
    assert_int_equal(memento_parse(longer, strlen(longer) - 3, &m, NULL), 0);
    assert_int_equal(memento_size(m), 1);
    int32_t b;
    assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(b, 2); /* the last removal comes back first */
    memento_free(m);
}

static void test_parse_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "memento/1",
        "memento/2 buckets=3 removed=",
        "memento/1 buckets= removed=",
        "memento/1 buckets=-1 removed=",
        "memento/1 buckets=+1 removed=",
        "memento/1 buckets=01 removed=",
        "memento/1 buckets=1048577 removed=",
        "memento/1 buckets=99999999999999999999999 removed=",
        "memento/1 buckets=3",
        "memento/1 buckets=3 removed",
        "memento/1 buckets=3  removed=",
        "memento/1 buckets=3 removed=3",
        "memento/1 buckets=3 removed=2",   /* first removal of the last: shrinks */
        "memento/1 buckets=3 removed=0,0", /* twice */
        "memento/1 buckets=3 removed=0,",
        "memento/1 buckets=3 removed=,0",
        "memento/1 buckets=3 removed=0 ",
        "memento/1 buckets=3 removed=0\n",
        "memento/1 buckets=3 removed=00",
        "memento/1 buckets=3 removed=0x1",
        "memento/1 buckets=0 removed=0",
        "MEMENTO/1 buckets=3 removed=",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memento *m = (memento *)1;
        rs_error err = {0};
        int rc = parse_exact(bad[i], strlen(bad[i]), &m, &err);
        if (rc != RINGSIM_EPARAM)
            print_error("accepted: \"%s\"\n", bad[i]);
        assert_int_equal(rc, RINGSIM_EPARAM);
        assert_null(m);
        assert_int_equal(err.code, RINGSIM_EPARAM);
        assert_true(strlen(err.msg) > 0);
    }
}

/* Mutated states: parse either refuses with EPARAM or accepts a text that
 * is canonical (serializes back to itself) and places keys on live buckets. */
static void test_parse_fuzz(void **state)
{
    (void)state;
    uint64_t seed = 77, s = seed;
    static const char *const base[] = {
        "memento/1 buckets=12 removed=3,7,0,11",
        "memento/1 buckets=5 removed=",
        "memento/1 buckets=100 removed=5,99,42",
    };
    static const char alphabet[] = "0123456789,= /mr";
    char buf[128];
    for (int iter = 0; iter < 20000; iter++) {
        const char *b = base[rng_next(&s) % 3];
        size_t len = strlen(b);
        memcpy(buf, b, len);
        int edits = 1 + (int)(rng_next(&s) % 3);
        for (int e = 0; e < edits; e++) {
            uint64_t r = rng_next(&s);
            size_t at = len ? (size_t)(r % len) : 0;
            switch ((r >> 32) % 4) {
            case 0: /* replace */
                if (len)
                    buf[at] = alphabet[(r >> 40) % (sizeof alphabet - 1)];
                break;
            case 1: /* truncate */
                len = at;
                break;
            case 2: /* insert */
                if (len < sizeof buf - 1) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = alphabet[(r >> 40) % (sizeof alphabet - 1)];
                    len++;
                }
                break;
            default: /* random byte */
                if (len)
                    buf[at] = (char)(r >> 48);
            }
        }
        memento *m = NULL;
        int rc = parse_exact(buf, len, &m, NULL);
        if (rc != 0 && rc != RINGSIM_EPARAM)
            print_error("seed %llu iter %d: rc %d\n", (unsigned long long)seed, iter, rc);
        assert_true(rc == 0 || rc == RINGSIM_EPARAM);
        if (rc == 0) {
            char *text;
            size_t tlen;
            assert_int_equal(memento_serialize(m, &text, &tlen), 0);
            assert_int_equal(tlen, len);
            assert_memory_equal(text, buf, len);
            for (int k = 0; k < 50; k++) {
                int32_t got = memento_lookup(m, rng_next(&s));
                assert_true(memento_size(m) == 0 ? got == -1 : memento_is_live(m, got));
            }
            free(text);
            memento_free(m);
        }
    }
}

static void test_bucket_limit(void **state)
{
    (void)state;
    memento *m = memento_new();
    int32_t b = -1;
    for (int32_t i = 0; i < MEMENTO_MAX_BUCKETS; i++)
        assert_int_equal(memento_add(m, &b), 0);
    assert_int_equal(b, MEMENTO_MAX_BUCKETS - 1);
    assert_int_equal(memento_add(m, &b), RINGSIM_EPARAM);
    assert_int_equal(memento_size(m), MEMENTO_MAX_BUCKETS);
    memento_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_removal_is_jump), cmocka_unit_test(test_remove_errors),
        cmocka_unit_test(test_all_removed),        cmocka_unit_test(test_random_sequences),
        cmocka_unit_test(test_parse_valid),        cmocka_unit_test(test_parse_rejects),
        cmocka_unit_test(test_parse_fuzz),         cmocka_unit_test(test_bucket_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
