/*
 * test_names.c - the name rules of API.md: 1..255 bytes of UTF-8, no
 * control characters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "names.h"

static int check(const char *s, size_t len) { return name_check(s, len, "name", NULL); }

static void test_valid(void **state)
{
    (void)state;
    const char *ok[] = {"a", "alpha", "ノード", "a b", "a/b", "%", "#", "?", "\"", "<b>",
                        "\xc2\x80", "\xef\xbf\xbd", "\xf0\x9f\x99\x82", "\xf4\x8f\xbf\xbf"};
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
        "a\tb", "\x01", "a\x7f", "\x1f", "\n",          /* control characters */
        "\xff", "\xc0\x80", "\xc1\xbf",                 /* not UTF-8, overlong */
        "\xe0\x80\x80", "\xf0\x80\x80\x80",             /* overlong */
        "\xed\xa0\x80",                                 /* surrogate */
        "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",         /* above U+10FFFF */
        "\xe3\x83", "a\xc3", "\x80",                    /* truncated, stray continuation */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
