/*
 * test_keyfile.c - keys from a text (src/face/keyfile.c) and the streamed insert
 * (sim_insert_keys_each): the line rules read back key for key; a reader
 * that gives more or fewer keys than it announced, or a bad key in the
 * middle, fails the insert whole (no key, no operation); a stream gives the
 * same operation as the same keys as an array.  Runs under ASan in make
 * test-asan.
 *
 * Checks docs/api.md, 'Keys from a file, and which way a node went'.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "keyfile.h"
#include "sim.h"

/* A temporary file holding len bytes of text; its path in path. */
static void write_text(char path[64], const char *text, size_t len)
{
    snprintf(path, 64, "/tmp/ringsim-test-keyfile.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static void test_rules(void **state)
{
    (void)state;
    static const char text[] = "\xEF\xBB\xBF"
                               "first\r\n\n  sp ace \n#hash\r\n\r\nlast";
    const char *want[] = {"first", "  sp ace ", "#hash", "last"};
    char path[64];
    write_text(path, text, sizeof text - 1);
    keyfile *kf;
    rs_error err;
    assert_int_equal(keyfile_open(&kf, path, &err), 0);
    assert_int_equal(keyfile_count(kf), 4);
    sim_str k = keyfile_first(kf);
    assert_int_equal(k.len, 5);
    assert_memory_equal(k.s, "first", 5);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(keyfile_next(kf, &k, &err), 0);
        assert_int_equal(k.len, strlen(want[i]));
        assert_memory_equal(k.s, want[i], k.len);
    }
    assert_int_equal(keyfile_next(kf, &k, &err), 1);
    keyfile_close(kf);
    unlink(path);
}

static void test_refusals(void **state)
{
    (void)state;
    struct {
        const char *text;
        size_t len;
        int code;
        const char *msg;
    } cases[] = {
        {"a\nb\0c\n", 6, RINGSIM_ENAME, "line 2:"},
        {"\n\r\n", 3, RINGSIM_EPARAM, "has no key"},
        {"", 0, RINGSIM_EPARAM, "has no key"},
        {"ok\n\xff\n", 4, RINGSIM_ENAME, "line 2:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[64];
        write_text(path, cases[i].text, cases[i].len);
        keyfile *kf = (keyfile *)1;
        rs_error err;
        assert_int_equal(keyfile_open(&kf, path, &err), cases[i].code);
        assert_null(kf);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].msg);
        unlink(path);
    }
    char path[64], line[300];
    memset(line, 'x', 256);
    line[256] = '\n';
    write_text(path, line, 257);
    keyfile *kf;
    rs_error err;
    assert_int_equal(keyfile_open(&kf, path, &err), RINGSIM_ENAME);
    assert_non_null(strstr(err.msg, "line 1: a key is at most 255 bytes"));
    unlink(path);
}

/* A reader over a fixed list that may lie about its count. */
typedef struct list_reader {
    const char *const *keys;
    size_t i, n;
} list_reader;

static int list_next(void *ud, sim_str *key, rs_error *err)
{
    (void)err;
    list_reader *r = ud;
    if (r->i == r->n)
        return 1;
    const char *k = r->keys[r->i++];
    *key = (sim_str){k, strlen(k)};
    return 0;
}

static void test_stream_whole_or_nothing(void **state)
{
    (void)state;
    sim *s;
    rs_error err;
    int64_t ins, skip, op;
    assert_int_equal(sim_open(&s, "", &err), 0);
    assert_int_equal(sim_add_node(s, "alpha", 5, 1, &op, &err), 0);
    const char *keys[] = {"k1", "k2", "k1", "k3"};
    sim_str first = {"k1", 2};
    /* more keys than announced, fewer, a bad key in the middle */
    list_reader more = {keys, 0, 4};
    assert_int_equal(sim_insert_keys_each(s, 3, first, list_next, &more, &ins, &skip, &op, &err),
                     RINGSIM_EPARAM);
    list_reader fewer = {keys, 0, 2};
    assert_int_equal(sim_insert_keys_each(s, 3, first, list_next, &fewer, &ins, &skip, &op, &err),
                     RINGSIM_EPARAM);
    const char *bad[] = {"k1", "b\tad", "k3"};
    list_reader badr = {bad, 0, 3};
    assert_int_equal(sim_insert_keys_each(s, 3, first, list_next, &badr, &ins, &skip, &op, &err),
                     RINGSIM_ENAME);
    assert_non_null(strstr(err.msg, "keys[1]"));
    assert_int_equal(sim_key_count(s), 0);
    assert_int_equal(sim_last_op(s), 1);
    /* the whole list: as sim_insert_keys, repeats skipped and counted */
    list_reader all = {keys, 0, 4};
    assert_int_equal(sim_insert_keys_each(s, 4, first, list_next, &all, &ins, &skip, &op, &err), 0);
    assert_int_equal(ins, 3);
    assert_int_equal(skip, 1);
    assert_int_equal(op, 2);
    assert_int_equal(sim_key_count(s), 3);
    sim_op o;
    assert_int_equal(sim_log_get(s, op, &o, &err), 0);
    assert_string_equal(o.type, "insert_keys");
    assert_string_equal(o.subject, "4 keys");
    sim_op_clear(&o);
    sim_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_stream_whole_or_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
