/*
 * test_vec.c - growing arrays (src/base/vec.h): the doubling sequence every
 * caller relied on before, and the overflow checks.
 *
 * Checks no section of docs/api.md: it tests an internal growing array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "vec.h"

static void test_next_cap(void **state)
{
    (void)state;
    size_t c = 7;
    assert_int_equal(vec_next_cap(0, 1, 16, &c), 0);
    assert_int_equal(c, 16);
    assert_int_equal(vec_next_cap(16, 16, 16, &c), 0); /* fits: unchanged */
    assert_int_equal(c, 16);
    assert_int_equal(vec_next_cap(16, 17, 16, &c), 0);
    assert_int_equal(c, 32);
    assert_int_equal(vec_next_cap(16, 100, 16, &c), 0);
    assert_int_equal(c, 128);
    assert_int_equal(vec_next_cap(0, 1000, 256, &c), 0);
    assert_int_equal(c, 1024);
    assert_int_equal(vec_next_cap(0, 3, 0, &c), 0); /* first 0 counts as 1 */
    assert_int_equal(c, 4);
    c = 7;
    assert_int_equal(vec_next_cap(SIZE_MAX / 2 + 1, SIZE_MAX, 16, &c), RINGSIM_ENOMEM);
    assert_int_equal(vec_next_cap(0, SIZE_MAX, 16, &c), RINGSIM_ENOMEM);
    assert_int_equal(c, 7); /* untouched on failure */
}

static void test_reserve(void **state)
{
    (void)state;
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    for (int64_t i = 0; i < 1000; i++) {
        assert_int_equal(vec_reserve(&v, &cap, n + 1, sizeof *v, 16), 0);
        assert_true(cap >= n + 1);
        v[n++] = i;
    }
    assert_int_equal(cap, 1024);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(v[i], (int64_t)i);
    /* n * size overflowing size_t is refused, the array kept */
    int64_t *before = v;
    size_t before_cap = cap;
    assert_int_equal(vec_reserve(&v, &cap, SIZE_MAX / 4, sizeof *v, 16), RINGSIM_ENOMEM);
    assert_ptr_equal(v, before);
    assert_int_equal(cap, before_cap);
    assert_int_equal(vec_realloc(&v, SIZE_MAX / 2, sizeof *v), RINGSIM_ENOMEM);
    assert_ptr_equal(v, before);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_cap),
        cmocka_unit_test(test_reserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
