/*
 * test_alg_twemproxy.c - the twemproxy core's own rules.
 *
 * The owners are tested against the real nutcracker by
 * tests/ref/twemproxy_ref.py (ctest ref_twemproxy), for every hash; this
 * file checks what that test cannot see directly:
 *   - the hashes against published check values: FNV's test vectors
 *     (fnv1_32 "a" = 0x050c5d7e, fnv1a_32 "a" = 0xe40c292c, 64-bit FNV-1
 *     "a" = 0xaf63bd4c8601b7be and FNV-1a "a" = 0xaf63dc4c8601ec8c, of
 *     which nutcracker keeps the low 32 bits), the CRC catalogue's CRC-32
 *     and CRC-16/XMODEM check values for "123456789" (0xcbf43926, 0x31c3),
 *     Jenkins' one-at-a-time "a" = 0xca2e9442, MD5("") = d41d8cd9...;
 *   - the narrow outputs: crc32 below 32768 for every key, crc16 below
 *     2^16 / 2^24 for keys of 1 / 2 bytes and wider after;
 *   - the signed-char quirk: a byte >= 0x80 enters FNV as 0xffffff80...;
 *   - the point counts (160 for one server, multiples of 4, 0 for a server
 *     far below its share) and each point being a word of MD5("NAME-k").
 *
 * Checks docs/api.md, 'The real systems: haproxy and twemproxy'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alg_twemproxy.h"

static alg_md5 *md;

static uint32_t H(twemproxy_hash_fn f, const char *s)
{
    return twemproxy_hash(f, md, s, strlen(s));
}

static void test_check_values(void **state)
{
    (void)state;
    assert_int_equal(H(TW_FNV1_32, "a"), 0x050c5d7eu);
    assert_int_equal(H(TW_FNV1A_32, "a"), 0xe40c292cu);
    assert_int_equal(H(TW_FNV1_64, "a"), 0x8601b7beu);
    assert_int_equal(H(TW_FNV1A_64, "a"), 0x8601ec8cu);
    assert_int_equal(H(TW_CRC32A, "123456789"), 0xcbf43926u);
    assert_int_equal(H(TW_CRC32, "123456789"), (0xcbf43926u >> 16) & 0x7fffu);
    assert_int_equal(H(TW_CRC16, "123456789") & 0xffffu, 0x31c3u);
    assert_int_equal(H(TW_ONE_AT_A_TIME, "a"), 0xca2e9442u);
    assert_int_equal(H(TW_MD5, "a"), 0xb975c10cu); /* MD5("a") = 0cc175b9... */
    for (int f = 0; f < TW_NHASH; f++)
        assert_int_equal(twemproxy_hash((twemproxy_hash_fn)f, md, "", 0), 0);
    assert_string_equal(twemproxy_hash_names[TW_DEFAULT_HASH], "fnv1a_64");
    assert_null(twemproxy_hash_names[TW_NHASH]);
}

static void test_narrow(void **state)
{
    (void)state;
    char key[32];
    uint32_t crc16_wide = 0;
    for (int i = 0; i < 5000; i++) {
        int len = snprintf(key, sizeof key, "key-%d", i);
        assert_true(twemproxy_hash(TW_CRC32, md, key, (size_t)len) < 32768u);
        crc16_wide |= twemproxy_hash(TW_CRC16, md, key, (size_t)len);
    }
    assert_true(crc16_wide > 0x00ffffffu); /* the accumulator is never masked */
    assert_true(H(TW_CRC16, "a") < 65536u);
    assert_true(H(TW_CRC16, "ab") < (1u << 24));
    assert_true(H(TW_CRC16, "ab") >= 65536u);
}

static void test_signed_char(void **state)
{
    (void)state;
    uint32_t textbook = (2166136261u ^ 0x80u) * 16777619u;
    uint32_t nutcracker = (2166136261u ^ 0xffffff80u) * 16777619u;
    assert_int_equal(H(TW_FNV1A_32, "\x80"), nutcracker);
    assert_int_not_equal(H(TW_FNV1A_32, "\x80"), textbook);
    /* fnv1_64 XORs the byte sign-extended to 64 bits */
    uint64_t h = 0xcbf29ce484222325ull * 0x100000001b3ull;
    assert_int_equal(H(TW_FNV1_64, "\xe9"), (uint32_t)(h ^ 0xffffffffffffffe9ull));
}

static void test_continuum(void **state)
{
    (void)state;
    rs_error err;
    assert_int_equal(twemproxy_server_points(1, 1, 1), 160);
    for (uint32_t n = 1; n < 40; n++)
        for (uint32_t w = 1; w < 5; w++) {
            uint32_t p = twemproxy_server_points(w, w * n, n);
            assert_int_equal(p % 4, 0);
            assert_true(p <= 160 && p >= 152);
        }
    assert_int_equal(twemproxy_server_points(1, 1000, 2), 0);
    alg_node nodes[] = {{"10.0.0.1", 8, 1}, {"cache-b", 7, 3}, {"10.0.0.3:22122", 14, 1}};
    alg_point *p;
    size_t n;
    assert_int_equal(twemproxy_build(md, nodes, 3, &p, &n, &err), 0);
    size_t per[3] = {0};
    unsigned char d[16];
    char label[64];
    for (size_t i = 0; i < n; i++) {
        per[p[i].node]++;
        int ll = snprintf(label, sizeof label, "%s-%u", nodes[p[i].node].name, p[i].index / 4);
        alg_md5_digest(md, label, (size_t)ll, d);
        const unsigned char *w = d + 4 * (p[i].index % 4);
        assert_int_equal(p[i].coord, (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 |
                                         (uint32_t)w[3] << 24);
        if (i)
            assert_true(p[i - 1].coord <= p[i].coord);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(per[i], twemproxy_server_points((uint32_t)nodes[i].weight, 5, 3));
    free(p);
    alg_node zero[] = {{"x", 1, 0}};
    assert_int_equal(twemproxy_build(md, zero, 1, &p, &n, &err), RINGSIM_EPARAM);
    alg_node huge[] = {{"x", 1, 4294967295.0}, {"y", 1, 1}};
    assert_int_equal(twemproxy_build(md, huge, 2, &p, &n, &err), RINGSIM_EPARAM);
}

int main(void)
{
    md = alg_md5_new();
    if (!md)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_values),
        cmocka_unit_test(test_narrow),
        cmocka_unit_test(test_signed_char),
        cmocka_unit_test(test_continuum),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    alg_md5_free(md);
    return rc;
}
