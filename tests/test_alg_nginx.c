/*
 * test_alg_nginx.c - the nginx core's own rules.
 *
 * The owners are tested against the real nginx by tests/ref/nginx_ref.py
 * (ctest ref_nginx); this file checks what that test cannot see directly:
 *   - the key hash against the published CRC-32 check value (the CRC
 *     catalogue's CRC-32/ISO-HDLC: "123456789" -> 0xcbf43926), the CRC that
 *     ngx_crc32_long computes (table 0xedb88320, src/core/ngx_crc32.c);
 *   - the host/port split, case by case as ngx_http_upstream_init_chash
 *     (nginx 1.22.1) reads a server name;
 *   - two names that split alike ("unix:/s" and "UNIX:/s") get the same
 *     points and the de-duplication leaves them all to the first;
 *   - refusals of weights nginx or ringsim does not take.
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's nginx), 'Variants: the
 * modes people really run'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alg_nginx.h"

static void test_crc32_check_value(void **state)
{
    (void)state;
    assert_int_equal(nginx_key_hash("123456789", 9), 0xcbf43926u);
    assert_int_equal(nginx_key_hash("", 0), 0);
}

static void test_split(void **state)
{
    (void)state;
    static const struct {
        const char *name, *host, *port;
    } cases[] = {
        {"127.0.0.1:8080", "127.0.0.1", "8080"}, /* digits after the last ':' */
        {"10.0.0.1", "10.0.0.1", ""},            /* no port: not "80" */
        {"example.com:81", "example.com", "81"},
        {"[::1]:8080", "[::1]", "8080"},
        {"[::1]", "[::1]", ""},                  /* ']' is not a digit */
        {"host:", "host", ""},                   /* ':' then no digit */
        {"8080", "8080", ""},                    /* digits, no ':' */
        {"unix:/run/a.sock", "/run/a.sock", ""}, /* "unix:" dropped */
        {"UNIX:/run/a:80", "/run/a:80", ""},     /* any case, the rest whole */
        {"unix:", "", ""},
        {"a:b1", "a:b1", ""}, /* 'b' stops the scan */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nginx_hostport hp;
        nginx_split(cases[i].name, strlen(cases[i].name), &hp);
        if (hp.host_len != strlen(cases[i].host) || memcmp(hp.host, cases[i].host, hp.host_len) ||
            hp.port_len != strlen(cases[i].port) || memcmp(hp.port, cases[i].port, hp.port_len))
            fail_msg("\"%s\": host \"%.*s\" port \"%.*s\"", cases[i].name, (int)hp.host_len,
                     hp.host, (int)hp.port_len, hp.port);
    }
}

static void test_equal_names_first_wins(void **state)
{
    (void)state;
    alg_node nodes[] = {{"unix:/s", 7, 2}, {"UNIX:/s", 7, 3}, {"10.0.0.1:80", 11, 1}};
    alg_point *pts = NULL;
    size_t np = 0;
    assert_int_equal(nginx_build(nodes, 3, &pts, &np, NULL), 0);
    size_t per[3] = {0};
    for (size_t i = 0; i < np; i++) {
        per[pts[i].node]++;
        if (i)
            assert_true(pts[i - 1].coord < pts[i].coord); /* no equal hashes left */
    }
    /* node 1's 480 points are node 0's 320 and 160 more of the same chain */
    assert_int_equal(per[0], 320);
    assert_int_equal(per[1], 160);
    assert_int_equal(per[2], 160);
    free(pts);
}

static void test_refusals(void **state)
{
    (void)state;
    static const double bad[] = {1.5, 0, -1, 626, 1e9};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        alg_node nodes[] = {{"a:1", 3, 1}, {"b:2", 3, bad[i]}};
        alg_point *pts = (alg_point *)nodes; /* must be reset to NULL */
        size_t np = 7;
        rs_error err = {0};
        assert_int_equal(nginx_build(nodes, 2, &pts, &np, &err), RINGSIM_EPARAM);
        assert_int_equal(err.code, RINGSIM_EPARAM);
        assert_non_null(strstr(err.msg, "\"b:2\""));
        assert_null(pts);
        assert_int_equal(np, 0);
    }
    alg_node one = {"a", 1, 1.5};
    alg_point *pts = NULL;
    size_t np = 0;
    rs_error err = {0};
    assert_int_equal(nginx_build(&one, 1, &pts, &np, &err), RINGSIM_EPARAM);
    assert_string_equal(err.msg, "nginx weights are whole numbers from 1 to 625: \"a\" has 1.5");
    assert_int_equal(nginx_build(NULL, 0, &pts, &np, &err), 0);
    assert_null(pts);
    assert_int_equal(np, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_check_value),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_equal_names_first_wins),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
