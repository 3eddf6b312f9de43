/*
 * test_names.c - the name rules of API.md: 1..255 bytes of UTF-8, no
 * control characters.
 *
 * Checks docs/api.md, 'Conventions' (names and keys).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "names.h"

static int check(const char *s, size_t len) { return name_check(s, len, "name", NULL); }

static void test_valid(void **state)
{
    (void)state;
    const char *ok[] = {"a",
                        "alpha",
                        "ノード",
                        "a b",
                        "a/b",
                        "%",
                        "#",
                        "?",
                        "\"",
                        "<b>",
                        "\xc2\x80",
                        "\xef\xbf\xbd",
                        "\xf0\x9f\x99\x82",
                        "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_int_equal(check(ok[i], strlen(ok[i])), 0);
    char max[255];
    memset(max, 'x', sizeof max);
    assert_int_equal(check(max, 255), 0);
}

static void test_invalid(void **state)
{
    (void)state;
    char big[256];
    memset(big, 'x', sizeof big);
    assert_int_equal(check(big, 256), RINGSIM_ENAME);
    assert_int_equal(check("", 0), RINGSIM_ENAME);
    const char *bad[] = {
        "a\tb",
        "\x01",
        "a\x7f",
        "\x1f",
        "\n", /* control characters */
        "\xff",
        "\xc0\x80",
        "\xc1\xbf", /* not UTF-8, overlong */
        "\xe0\x80\x80",
        "\xf0\x80\x80\x80", /* overlong */
        "\xed\xa0\x80",     /* surrogate */
        "\xf4\x90\x80\x80",
        "\xf5\x80\x80\x80", /* above U+10FFFF */
        "\xe3\x83",
        "a\xc3",
        "\x80", /* truncated, stray continuation */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(check(bad[i], strlen(bad[i])), RINGSIM_ENAME);
    assert_int_equal(check("a\0b", 3), RINGSIM_ENAME); /* NUL inside */
}

static void test_message(void **state)
{
    (void)state;
    rs_error err;
    assert_int_equal(name_check("", 0, "node name", &err), RINGSIM_ENAME);
    assert_int_equal(err.code, RINGSIM_ENAME);
    assert_non_null(strstr(err.msg, "node name"));
    assert_string_equal(ringsim_errcode(RINGSIM_ENAME), "invalid_name");
    assert_int_equal(ringsim_status(RINGSIM_ENAME), 400);
}

/* The numbers a person writes: weights in plain decimal, tokens as signed
 * 64-bit decimals (the command line's and libringsim's one parser). */
static void test_numbers(void **state)
{
    (void)state;
    double d;
    assert_int_equal(names_parse_decimal("2.5e1", &d), 0);
    assert_true(d == 25.0);
    assert_int_equal(names_parse_decimal("-0.5", &d), 0);
    assert_true(d == -0.5);
    static const char *const bad_d[] = {"",    "+1", " 1", "0x10", "inf",
                                        "nan", "1e", ".",  "1 ",   "1e999"};
    for (size_t i = 0; i < sizeof bad_d / sizeof *bad_d; i++)
        assert_int_equal(names_parse_decimal(bad_d[i], &d), RINGSIM_EPARAM);
    int64_t *t = NULL;
    size_t n = 9;
    const char *ok = "-9223372036854775808,0,9223372036854775807";
    assert_int_equal(names_parse_tokens(ok, strlen(ok), 3, &t, &n), 0);
    assert_int_equal(n, 3);
    assert_true(t[0] == INT64_MIN && t[1] == 0 && t[2] == INT64_MAX);
    free(t);
    assert_int_equal(names_parse_tokens(ok, strlen(ok), 2, &t, &n), RINGSIM_EPARAM); /* over max */
    assert_int_equal(names_parse_tokens("", 0, 3, &t, &n), 0);
    assert_int_equal(n, 0);
    free(t);
    static const char *const bad_t[] = {
        "9223372036854775808", "-9223372036854775809", "+1", " 1", "1,\t2", "1,,2", "-", "1,", "1.5", "0x10"};
    for (size_t i = 0; i < sizeof bad_t / sizeof *bad_t; i++)
        assert_int_equal(names_parse_tokens(bad_t[i], strlen(bad_t[i]), 8, &t, &n), RINGSIM_EPARAM);
}

/* error.h's one list: every code has its wire code and status; a code
 * outside it answers as internal. */
static void test_error_list(void **state)
{
    (void)state;
    static const struct {
        int code;
        const char *wire;
        int status;
    } want[] = {
        {RINGSIM_OK, "ok", 200},
        {RINGSIM_ENOTFOUND, "not_found", 404},
        {RINGSIM_ECONFLICT, "conflict", 409},
        {RINGSIM_EREADONLY, "read_only", 503},
        {RINGSIM_EFULL, "insufficient_storage", 507},
        {RINGSIM_EIMPORT, "invalid_import", 400},
        {RINGSIM_EHEADERS, "headers_too_large", 431},
        {-999, "internal", 500},
        {1, "internal", 500},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        assert_string_equal(ringsim_errcode(want[i].code), want[i].wire);
        assert_int_equal(ringsim_status(want[i].code), want[i].status);
    }
    assert_string_equal(ringsim_strerror(-999), ringsim_strerror(RINGSIM_EINTERNAL));
    assert_int_equal(RINGSIM_EUNAVAILABLE, -35); /* values are the API's */
}

/* API.md v3: node names that cannot be read are refused; keys are not. */
static void test_readable(void **state)
{
    (void)state;
    rs_error err;
    const char *bad[] = {
        "li\xe2\x80\xaeve", /* U+202E RIGHT-TO-LEFT OVERRIDE */
        "\xe2\x80\xaa"
        "a",                     /* U+202A */
        "a\xe2\x81\xa6",         /* U+2066 */
        "a\xe2\x81\xa9",         /* U+2069 */
        "\xe2\x80\x8b",          /* U+200B alone */
        "   ",                   /* spaces only */
        " \xe2\x80\x8b\xc2\xa0", /* space, U+200B, U+00A0 */
        "\xe3\x85\xa4",          /* U+3164 HANGUL FILLER */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(node_name_check(bad[i], strlen(bad[i]), &err), RINGSIM_ENAME);
        assert_int_equal(name_check(bad[i], strlen(bad[i]), "key", NULL), 0);
    }
    const char *good[] = {"alpha",
                          "a b",
                          "a\xe2\x80\x8b"
                          "b",
                          "caf\xc3\xa9",
                          "\xe3\x83\x8e",
                          "x"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(node_name_check(good[i], strlen(good[i]), &err), 0);
    assert_int_equal(node_name_check("", 0, &err), RINGSIM_ENAME);
}

static void test_escape(void **state)
{
    (void)state;
    char *e = names_escape("a\xe2\x80\x8b"
                           "b",
                           5);
    assert_string_equal(e, "a\xe2\x9f\xa8U+200B\xe2\x9f\xa9"
                           "b");
    free(e);
    e = names_escape("a b", 3); /* a space between visible characters stays */
    assert_string_equal(e, "a b");
    free(e);
    e = names_escape("  ", 2); /* nothing visible: every space shown */
    assert_string_equal(e, "\xe2\x9f\xa8U+0020\xe2\x9f\xa9\xe2\x9f\xa8U+0020\xe2\x9f\xa9");
    free(e);
    e = names_escape("caf\xc3\xa9", 5);
    assert_string_equal(e, "caf\xc3\xa9");
    free(e);
    assert_true(names_invisible(0x200B) && names_invisible(0x202E) && names_invisible(0xFEFF));
    assert_false(names_invisible('a') || names_invisible(0x00E9) || names_invisible(0x0301));
    /* A C1 control (CSI, U+009B) would drive a terminal: shown escaped. */
    assert_true(names_invisible(0x9B) && names_invisible(0x85));
    e = names_escape("x\xc2\x9b"
                     "31mRED",
                     9);
    assert_string_equal(e, "x\xe2\x9f\xa8U+009B\xe2\x9f\xa9"
                           "31mRED");
    free(e);
    /* Not in NFC: the combining mark shows, so "e" + U+0301 reads apart
     * from its NFC twin "é" (which is left as it is, above). */
    e = names_escape("cafe\xcc\x81", 6);
    assert_string_equal(e, "cafe\xe2\x9f\xa8U+0301\xe2\x9f\xa9");
    free(e);
    /* A zero width joiner inside an emoji (woman + ZWJ + laptop) stays;
     * between letters it shows. */
    e = names_escape("\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", 11);
    assert_string_equal(e, "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb");
    free(e);
    e = names_escape("a\xe2\x80\x8d"
                     "b",
                     5);
    assert_string_equal(e, "a\xe2\x9f\xa8U+200D\xe2\x9f\xa9"
                           "b");
    free(e);
    /* A joiner at either end, or after a modifier with nothing before it. */
    e = names_escape("\xe2\x80\x8d", 3);
    assert_string_equal(e, "\xe2\x9f\xa8U+200D\xe2\x9f\xa9");
    free(e);
}

/* Columns on a terminal (UAX #11), whatever the locale: the test runs in
 * the "C" locale, where the C library would count bytes. */
static void test_width(void **state)
{
    (void)state;
    assert_int_equal(names_width("alpha", 5), 5);
    assert_int_equal(names_width("\xc3\xbcn\xc3\xaf", 5), 3);        /* ünï */
    assert_int_equal(names_width("\xe5\x90\x8d\xe5\x89\x8d", 6), 4); /* 名前: wide */
    assert_int_equal(names_width("e\xf0\x9f\x98\x80x", 6), 4);       /* e😀x */
    assert_int_equal(names_width("o\xcc\x81k", 4), 2);               /* o, U+0301, k */
    assert_int_equal(names_width("a\xe2\x80\x8b"
                                 "b",
                                 5),
                     2);                                                    /* U+200B: none */
    assert_int_equal(names_width("\xe2\x9f\xa8U+200B\xe2\x9f\xa9", 12), 8); /* ⟨U+200B⟩ */
    assert_int_equal(names_width("ab", 1), 1);                              /* len bytes only */
    assert_int_equal(names_width("", 0), 0);
}

static void test_look_alike(void **state)
{
    (void)state;
    assert_true(names_look_alike("caf\xc3\xa9", 5, "cafe\xcc\x81", 6)); /* NFC, NFD */
    assert_false(names_look_alike("cafe", 4, "caf\xc3\xa9", 5));
    assert_true(names_look_alike("x", 1, "x", 1));
    size_t n;
    char *c = names_nfc("cafe\xcc\x81", 6, &n);
    assert_int_equal(n, 5);
    assert_memory_equal(c, "caf\xc3\xa9", 5);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),      cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_message),    cmocka_unit_test(test_error_list),
        cmocka_unit_test(test_numbers),    cmocka_unit_test(test_readable),
        cmocka_unit_test(test_escape),     cmocka_unit_test(test_width),
        cmocka_unit_test(test_look_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
