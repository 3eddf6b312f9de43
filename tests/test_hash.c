/*
 * test_hash.c - positions against an implementation this project did not
 * write: the system's `sha256sum` (coreutils), run for each string.
 *
 * Checks docs/api.md, 'Conventions', 'GET /api/config' (the ring's key hash:
 * SHA-256, first 32 bits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <cmocka.h>

#include "hash.h"

/* First 8 hex digits and the full digest from sha256sum. */
static void external_sha256(const char *s, size_t len, char hex[65])
{
    char path[] = "/tmp/ringsim-hash-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, len, f), len);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(hex, 65, p));
    pclose(p);
    unlink(path);
    hex[64] = '\0';
}

static const char *const samples[] = {
    "alpha",
    "bravo",
    "node-1",
    "key-0",
    "ノード",
    "a b",
    "a/b",
    "100%",
    "x#1",
    "what?",
    "\"quoted\"",
    "<img src=x onerror=alert(1)>",
    "ü",
    "🙂 emoji",
    "a-very-long-name-that-is-longer-than-one-sha256-block-of-sixty-four-bytes-in-all",
};

static void test_positions_match_sha256sum(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    assert_non_null(h);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char ext[65], mine[65], first8[9];
        external_sha256(samples[i], strlen(samples[i]), ext);
        hash_sha256_hex(h, samples[i], strlen(samples[i]), mine);
        assert_string_equal(mine, ext);
        memcpy(first8, ext, 8);
        first8[8] = '\0';
        uint32_t want = (uint32_t)strtoul(first8, NULL, 16);
        assert_int_equal(hash_position(h, samples[i], strlen(samples[i])), want);
    }
    hasher_free(h);
}

/* Raw digest and sha64 against the same sha256sum output: every byte of the
 * raw digest is the matching hex pair, and sha64 is the first 16 hex digits
 * read as one big-endian number. */
static void test_raw_digest_and_sha64_match_sha256sum(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    assert_non_null(h);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        size_t len = strlen(samples[i]);
        char ext[65], first16[17];
        external_sha256(samples[i], len, ext);
        unsigned char raw[32];
        hash_sha256(h, samples[i], len, raw);
        for (int b = 0; b < 32; b++) {
            char pair[3] = {ext[2 * b], ext[2 * b + 1], '\0'};
            assert_int_equal(raw[b], strtoul(pair, NULL, 16));
        }
        memcpy(first16, ext, 16);
        first16[16] = '\0';
        uint64_t want = strtoull(first16, NULL, 16);
        assert_true(hash_sha64(h, samples[i], len) == want);
        /* position is the top half of sha64 */
        assert_int_equal(hash_position(h, samples[i], len), (uint32_t)(want >> 32));
    }
    hasher_free(h);
}

/* The original simulator's known value: parseInt(sha256("alpha")[0:8], 16). */
static void test_known_value(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    char ext[65];
    external_sha256("", 0, ext);
    assert_string_equal(ext, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(hash_position(h, "", 0), 0xe3b0c442u);
    /* sha64 of the empty string: the first 16 hex digits of that digest. */
    assert_true(hash_sha64(h, "", 0) == 0xe3b0c44298fc1c14ull);
    hasher_free(h);
}

/* mix is SplitMix64's finalizer: the generator's n-th output from seed 0 is
 * mix(n * 0x9e3779b97f4a7c15).  The first four outputs are the published
 * values of Vigna's reference splitmix64.c (they also seed xoshiro256). */
static void test_mix_is_splitmix64(void **state)
{
    (void)state;
    static const uint64_t seed0[] = {0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull,
                                     0x06c45d188009454full, 0xf88bb8a8724c81ecull};
    for (uint64_t n = 1; n <= 4; n++)
        assert_true(hash_mix(n * 0x9e3779b97f4a7c15ull) == seed0[n - 1]);
    assert_true(hash_mix(0) == 0);
}

/* Reusing the context must not leak state from one string into the next. */
static void test_context_reuse(void **state)
{
    (void)state;
    hasher *h = hasher_new();
    uint32_t a = hash_position(h, "alpha", 5);
    for (int i = 0; i < 1000; i++)
        hash_position(h, "noise", 5);
    assert_int_equal(hash_position(h, "alpha", 5), a);
    hasher_free(h);
    hasher_free(NULL); /* accepted */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions_match_sha256sum),
        cmocka_unit_test(test_raw_digest_and_sha64_match_sha256sum),
        cmocka_unit_test(test_known_value),
        cmocka_unit_test(test_mix_is_splitmix64),
        cmocka_unit_test(test_context_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
