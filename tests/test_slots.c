/*
 * test_slots.c - the open-addressing index (src/base/slots.h) and the names of a
 * move run that it interns (src/base/moverun.c), past several growths.
 *
 * Checks no section of docs/api.md: it tests an internal index.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "moverun.h"
#include "slots.h"

typedef struct ent {
    int v;
    uint32_t hash;
} ent;

static void test_index(void **state)
{
    (void)state;
    enum { N = 5000 };
    ent *v = calloc(N, sizeof *v);
    slots t = {0};
    assert_non_null(v);
    for (int i = 0; i < N; i++) {
        assert_int_equal(slots_reserve(&t, (size_t)i, 16, v, sizeof *v, offsetof(ent, hash)), 0);
        assert_true(((size_t)i + 1) * 2 <= t.nslot);
        v[i] = (ent){i, slots_hash(&i, sizeof i)};
        slots_put(&t, v[i].hash, (size_t)i);
    }
    for (int i = 0; i < N; i++) { /* every entry is found from its hash */
        uint32_t h = slots_hash(&i, sizeof i);
        int found = -1;
        for (size_t j = h & (t.nslot - 1); t.slot[j]; j = (j + 1) & (t.nslot - 1))
            if (v[t.slot[j] - 1].v == i)
                found = i;
        assert_int_equal(found, i);
    }
    assert_int_equal(slots_hash("", 0), 2166136261u);
    assert_int_equal(slots_hash("a", 1), 0xe40c292cu); /* FNV-1a's published value */
    slots_clear(&t);
    for (size_t j = 0; j < t.nslot; j++)
        assert_int_equal(t.slot[j], 0);
    slots_free(&t);
    assert_null(t.slot);
    free(v);
}

typedef struct seen_moves {
    int n;
    int bad;
} seen_moves;

static int check_move(void *ud, const char *key, const char *from, const char *to)
{
    seen_moves *s = ud;
    char want[32];
    snprintf(want, sizeof want, "node%d", s->n % 300);
    if (strcmp(from, want) != 0 || to != NULL || atoi(key) != s->n)
        s->bad++;
    s->n++;
    return 0;
}

static void test_moverun_names(void **state)
{
    (void)state;
    moverun r = {0};
    for (int round = 0; round < 2; round++) { /* the second after a clear */
        for (int i = 0; i < 1200; i++) {
            char key[16], from[16];
            snprintf(key, sizeof key, "%d", i);
            snprintf(from, sizeof from, "node%d", i % 300);
            assert_int_equal(moverun_add(&r, key, strlen(key), from, NULL), 0);
        }
        assert_int_equal(r.count, 300); /* each name once */
        seen_moves s = {0};
        int64_t seen;
        assert_int_equal(moverun_each(r.names.p, r.names.n, r.data.p, r.data.n, r.n, 0, -1,
                                      check_move, &s, &seen),
                         0);
        assert_int_equal(s.n, 1200);
        assert_int_equal(s.bad, 0);
        moverun_clear(&r);
    }
    moverun_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_moverun_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
