/*
 * test_api_routes.c - who answers each route (src/http/api.c's table): the reads
 * whose answer grows with the layout or the stored keys (every node's points,
 * the ring's points, the density of keys, compare, theory, exports) are long
 * reads on the reading worker, never on the event loop, which would stall
 * every other client (GET /api/nodes at 1000 nodes x 1000 points is 13 MB,
 * 1.7 s); the small reads stay on the loop; changes go to the operations
 * worker; an unknown route is a 404.
 *
 * Checks docs/api.md, 'Limits' (JSON parsed on a worker, never on the event
 * loop), 'Time travel: ?at=ID' (reads on the reading worker).
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

#include "api.h"

/* Where GET/POST/... /api/<a>[/<b>] runs; -1 for a refusal. */
static int where(api_method m, const char *a, const char *b)
{
    api_request r;
    memset(&r, 0, sizeof r);
    r.method = m;
    r.seg[0] = (char *)a;
    r.seglen[0] = strlen(a);
    r.nseg = 1;
    if (b) {
        r.seg[1] = (char *)b;
        r.seglen[1] = strlen(b);
        r.nseg = 2;
    }
    api_place p;
    rs_error err;
    return api_classify(&r, &p, &err) ? -1 : (int)p;
}

static void test_long_reads_off_the_loop(void **state)
{
    (void)state;
    static const char *const long_reads[] = {"nodes", "ring", "density", "compare", "theory"};
    for (size_t i = 0; i < sizeof long_reads / sizeof *long_reads; i++)
        if (where(API_GET, long_reads[i], NULL) != API_READER)
            fail_msg("GET /api/%s is not answered by the reading worker", long_reads[i]);
    assert_int_equal(where(API_HEAD, "nodes", NULL), API_READER);
    assert_int_equal(where(API_GET, "export", "keys"), API_READER);
}

static void test_small_reads_and_changes(void **state)
{
    (void)state;
    assert_int_equal(where(API_GET, "stats", NULL), API_LOOP);
    assert_int_equal(where(API_GET, "config", NULL), API_LOOP);
    assert_int_equal(where(API_GET, "lookup", NULL), API_LOOP);
    assert_int_equal(where(API_GET, "nodes", "a b/%?"), API_LOOP);
    assert_int_equal(where(API_POST, "nodes", NULL), API_WORKER);
    assert_int_equal(where(API_DELETE, "nodes", "x"), API_WORKER);
    assert_int_equal(where(API_PUT, "config", NULL), API_WORKER);
    assert_int_equal(where(API_GET, "events", NULL), API_EVENTS);
    assert_int_equal(where(API_POST, "cancel", NULL), API_CANCEL);
    assert_int_equal(where(API_GET, "no-such-route", NULL), -1);
    assert_int_equal(where(API_PATCH, "ring", NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_reads_off_the_loop),
        cmocka_unit_test(test_small_reads_and_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
