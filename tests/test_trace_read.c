/*
 * test_trace_read.c - the request-log readers (src/io/trace_read.c) and the
 * replay's own rules (src/sim/trace.c): every format read back field by
 * field, gzip and zstd the same as plain, bad lines counted with the first
 * named, a file not of its format refused at open, clocks against epoch
 * values worked out by hand; the LRU against a sequence counted by hand;
 * a change that adds a node moves its keys and they miss.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <cmocka.h>

#include "sim.h"
#include "trace.h"
#include "trace_read.h"

/* A temporary file holding the bytes; an open descriptor on it. */
static int temp_fd(const void *data, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/ringsim-test-trace.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

/* Every record of a text in format f: "key|bytes|time" lines joined. */
static char *read_all(const void *data, size_t len, const trace_opts *o, int want_rc,
                      trace_reader **keep)
{
    int fd = temp_fd(data, len);
    trace_reader *r;
    rs_error err = {0};
    int rc = trace_reader_open(&r, fd, "t", o, &err);
    assert_int_equal(rc, want_rc);
    if (rc) {
        close(fd);
        return strdup(err.msg);
    }
    size_t cap = 1 << 16, n = 0;
    char *out = calloc(cap, 1);
    trace_rec rec;
    while ((rc = trace_reader_next(r, &rec, &err)) == 0) {
        if (cap - n < TRACE_KEY_MAX + 64) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        n += (size_t)snprintf(out + n, cap - n, "%.*s|%llu|%.0f\n", (int)rec.len, rec.key,
                              (unsigned long long)rec.bytes, rec.has_time ? rec.time : -1.0);
    }
    assert_int_equal(rc, 1);
    if (keep)
        *keep = r;
    else
        trace_reader_free(r);
    close(fd);
    return out;
}

static void test_clocks(void **state)
{
    (void)state;
    double t;
    /* Apache's example line: 10/Oct/2000:13:55:36 -0700 is 20:55:36 UTC */
    trace_rec rec;
    char buf[TRACE_KEY_MAX + 1];
    const char *l =
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /apache_pb.gif HTTP/1.0\" 200 2326";
    assert_int_equal(trace_parse_access_line(l, strlen(l), TRACE_KEY_URI, buf, &rec), 0);
    assert_true(rec.time == 971211336.0);
    assert_int_equal(trace_parse_time("2000-10-10T20:55:36Z", 20, &t), 0);
    assert_true(t == 971211336.0);
    assert_int_equal(trace_parse_time("2000-10-10T13:55:36-07:00", 25, &t), 0);
    assert_true(t == 971211336.0);
    assert_int_equal(trace_parse_time("971211336.5", 11, &t), 0);
    assert_true(t == 971211336.5);
    assert_int_equal(trace_parse_time("2000-13-10T20:55:36Z", 20, &t), -1);
    assert_int_equal(trace_parse_time("yesterday", 9, &t), -1);
}

static const char access_text[] =
    "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /apache_pb.gif HTTP/1.0\" 200 2326\n"
    "10.1.2.3 - - [10/Oct/2000:13:55:37 -0700] \"GET /a?b=c HTTP/1.1\" 304 - \"-\" \"curl\"\n"
    "not a log line\n"
    "10.1.2.4 - - [10/Oct/2000:13:55:38 -0700] \"POST /x HTTP/1.1\" 200 17 \"http://r/\" \"UA "
    "\\\"q\\\"\"\r\n";

static void test_access_log(void **state)
{
    (void)state;
    trace_opts o = {.format = TRACE_ACCESS_LOG};
    char *got = read_all(access_text, sizeof access_text - 1, &o, 0, NULL);
    assert_string_equal(got,
                        "/apache_pb.gif|2326|971211336\n/a?b=c|0|971211337\n/x|17|971211338\n");
    free(got);
    o.key = TRACE_KEY_REMOTE_ADDR;
    trace_reader *r;
    got = read_all(access_text, sizeof access_text - 1, &o, 0, &r);
    assert_string_equal(got,
                        "127.0.0.1|2326|971211336\n10.1.2.3|0|971211337\n10.1.2.4|17|971211338\n");
    assert_int_equal(trace_reader_bad_lines(r), 1);
    assert_int_equal(trace_reader_first_bad(r), 3);
    assert_int_equal(trace_reader_lines(r), 4);
    trace_reader_free(r);
    free(got);
    /* vhost_combined: the host before the remote address */
    static const char vh[] = "www.example.com:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /p "
                             "HTTP/1.1\" 200 5 \"-\" \"-\"\n";
    o.key = TRACE_KEY_HOST_URI;
    got = read_all(vh, sizeof vh - 1, &o, 0, NULL);
    assert_string_equal(got, "www.example.com/p|5|971211336\n");
    free(got);
    /* host_uri without a host: refused at once, saying why */
    got = read_all(access_text, sizeof access_text - 1, &o, RINGSIM_EPARAM, NULL);
    assert_non_null(strstr(got, "vhost_combined"));
    free(got);
    /* auto finds it */
    o = (trace_opts){.format = TRACE_AUTO};
    got = read_all(access_text, sizeof access_text - 1, &o, 0, &r);
    assert_int_equal(trace_reader_format(r), TRACE_ACCESS_LOG);
    trace_reader_free(r);
    free(got);
}

static void test_twitter_csv_keys(void **state)
{
    (void)state;
    static const char tw[] = "0,key:a,5,100,1,get,0\n1,key,with,commas,9,20,2,set,3600\n2,bad\n";
    trace_opts o = {.format = TRACE_AUTO};
    trace_reader *r;
    char *got = read_all(tw, sizeof tw - 1, &o, 0, &r);
    assert_int_equal(trace_reader_format(r), TRACE_TWITTER);
    assert_string_equal(got, "key:a|100|0\nkey,with,commas|20|1\n");
    assert_int_equal(trace_reader_first_bad(r), 3);
    trace_reader_free(r);
    free(got);
    static const char csv[] = "ts,obj,size,op\n"
                              "2026-12-06T00:00:00Z,\"a,\"\"b\",10,get\n"
                              "1765000001,c,x,get\n"
                              "1765000002,d,30,set\n";
    o = (trace_opts){
        .format = TRACE_CSV, .key_col = "obj", .size_col = "3", .time_col = "ts", .op_col = "op"};
    got = read_all(csv, sizeof csv - 1, &o, 0, &r);
    assert_string_equal(got, "a,\"b|10|1796515200\nd|30|1765000002\n");
    assert_int_equal(trace_reader_first_bad(r), 3);
    trace_reader_free(r);
    free(got);
    o.key_col = "nope";
    got = read_all(csv, sizeof csv - 1, &o, RINGSIM_EPARAM, NULL);
    assert_non_null(strstr(got, "nope"));
    free(got);
    static const char keys[] = "alpha\n\nbeta\r\ngamma";
    o = (trace_opts){.format = TRACE_KEYS};
    got = read_all(keys, sizeof keys - 1, &o, 0, NULL);
    assert_string_equal(got, "alpha|0|-1\nbeta|0|-1\ngamma|0|-1\n");
    free(got);
    /* a text named twitter that is not: refused with its first line */
    o = (trace_opts){.format = TRACE_TWITTER};
    got = read_all(keys, sizeof keys - 1, &o, RINGSIM_EPARAM, NULL);
    assert_non_null(strstr(got, "is not a twitter log"));
    free(got);
}

static void put_le(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static void test_oracle(void **state)
{
    (void)state;
    unsigned char b[24 * 3 + 5];
    for (int i = 0; i < 3; i++) {
        put_le(b + 24 * i, 1000 + (uint64_t)i, 4);
        put_le(b + 24 * i + 4, 0x123456789aULL * (uint64_t)(i + 1), 8);
        put_le(b + 24 * i + 12, 4096, 4);
        put_le(b + 24 * i + 16, (uint64_t)-1, 8);
    }
    memset(b + 72, 7, 5); /* a record cut short */
    trace_opts o = {.format = TRACE_AUTO};
    trace_reader *r;
    char *got = read_all(b, sizeof b, &o, 0, &r);
    assert_int_equal(trace_reader_format(r), TRACE_ORACLE);
    assert_string_equal(got,
                        "78187493530|4096|1000\n156374987060|4096|1001\n234562480590|4096|1002\n");
    assert_int_equal(trace_reader_bad_lines(r), 1);
    assert_int_equal(trace_reader_first_bad(r), 4);
    trace_reader_free(r);
    free(got);
    /* text named oracle-general: refused */
    o.format = TRACE_ORACLE;
    got = read_all(access_text, sizeof access_text - 1, &o, RINGSIM_EPARAM, NULL);
    assert_non_null(strstr(got, "reads as text"));
    free(got);
}

/* The same records from gzip (two members) and zstd as from plain text. */
static void test_compressed(void **state)
{
    (void)state;
    size_t n = 300000; /* more than one 256 KiB block, compressed and not */
    char *text = malloc(n * 16);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "key-%zu\n", i * 7919 % 100003);
    trace_opts o = {.format = TRACE_AUTO};
    char *plain = read_all(text, len, &o, 0, NULL);
    /* gzip: two members, split in the middle of a line */
    size_t half = len / 2 + 3, gcap = len + 4096, glen = 0;
    unsigned char *gz = malloc(gcap);
    for (int m = 0; m < 2; m++) {
        z_stream z = {0};
        assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        z.next_in = (unsigned char *)text + (m ? half : 0);
        z.avail_in = (uInt)(m ? len - half : half);
        z.next_out = gz + glen;
        z.avail_out = (uInt)(gcap - glen);
        assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
        glen = gcap - z.avail_out;
        deflateEnd(&z);
    }
    trace_reader *r;
    char *got = read_all(gz, glen, &o, 0, &r);
    assert_int_equal(trace_reader_compression(r), TRACE_GZIP);
    assert_string_equal(got, plain);
    trace_reader_free(r);
    free(got);
    /* truncated gzip: an error naming it, never a silent short read */
    int fd = temp_fd(gz, glen / 3);
    rs_error err = {0};
    assert_int_equal(trace_reader_open(&r, fd, "t", &o, &err), 0);
    trace_rec rec;
    int rc;
    while ((rc = trace_reader_next(r, &rec, &err)) == 0)
        ;
    assert_int_equal(rc, RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "gzip"));
    trace_reader_free(r);
    close(fd);
    size_t zcap = ZSTD_compressBound(len);
    unsigned char *zs = malloc(zcap);
    size_t zlen = ZSTD_compress(zs, zcap, text, len, 3);
    assert_false(ZSTD_isError(zlen));
    got = read_all(zs, zlen, &o, 0, &r);
    assert_int_equal(trace_reader_compression(r), TRACE_ZSTD);
    assert_string_equal(got, plain);
    trace_reader_free(r);
    free(got);
    free(zs);
    free(gz);
    free(plain);
    free(text);
}

static void test_options(void **state)
{
    (void)state;
    uint64_t sz;
    bool obj;
    rs_error err;
    assert_int_equal(trace_cache_parse("64MiB", &sz, &obj, &err), 0);
    assert_true(sz == 64ull << 20 && !obj);
    assert_int_equal(trace_cache_parse("1000obj", &sz, &obj, &err), 0);
    assert_true(sz == 1000 && obj);
    assert_int_equal(trace_cache_parse("2GB", &sz, &obj, &err), 0);
    assert_true(sz == 2000000000ull);
    assert_int_equal(trace_cache_parse("0", &sz, &obj, &err), RINGSIM_EPARAM);
    assert_int_equal(trace_cache_parse("12 parsecs", &sz, &obj, &err), RINGSIM_EPARAM);
    trace_change c;
    assert_int_equal(trace_change_parse("5000", "node add web7 2", &c, &err), 0);
    assert_true(!c.by_time && c.at == 5000 && c.op == TRACE_OP_ADD && c.weight == 2);
    assert_string_equal(c.name, "web7");
    assert_int_equal(trace_change_parse("@2000-10-10T20:55:36Z", "down web1", &c, &err), 0);
    assert_true(c.by_time && c.at_time == 971211336.0 && c.op == TRACE_OP_DOWN);
    assert_int_equal(trace_change_parse("x", "node add a", &c, &err), RINGSIM_EPARAM);
    assert_int_equal(trace_change_parse("1", "node explode a", &c, &err), RINGSIM_EPARAM);
    assert_int_equal(trace_change_parse("1", "node weight a", &c, &err), RINGSIM_EPARAM);
}

/* Replays the keys text on a fresh simulation with these nodes. */
static json_t *replay(const char *text, const char *const *nodes, size_t n, const trace_params *p)
{
    char db[64];
    snprintf(db, sizeof db, "/tmp/ringsim-test-trace-db.XXXXXX");
    int dfd = mkstemp(db);
    assert_true(dfd >= 0);
    close(dfd);
    unlink(db);
    sim *s;
    rs_error err = {0};
    assert_int_equal(sim_open(&s, db, &err), 0);
    for (size_t i = 0; i < n; i++) {
        int64_t op;
        assert_int_equal(sim_add_node(s, nodes[i], strlen(nodes[i]), 1, &op, &err), 0);
    }
    int fd = temp_fd(text, strlen(text));
    trace_opts o = {.format = TRACE_KEYS};
    trace_reader *r;
    assert_int_equal(trace_reader_open(&r, fd, "t", &o, &err), 0);
    json_t *j = NULL;
    int rc = trace_run(s, r, p, NULL, NULL, &j, &err);
    if (rc)
        print_message("%s\n", err.msg);
    assert_int_equal(rc, 0);
    trace_reader_free(r);
    close(fd);
    sim_close(s);
    unlink(db);
    return j;
}

static json_int_t node_field(json_t *j, size_t i, const char *f)
{
    return json_integer_value(json_object_get(json_array_get(json_object_get(j, "nodes"), i), f));
}

static void test_lru_by_hand(void **state)
{
    (void)state;
    const char *one[] = {"solo"};
    trace_params p = {.cache = 2, .cache_objects = true};
    /* a b a c b a: a miss, b miss, a hit, c miss (b out), b miss (a out), a miss */
    json_t *j = replay("a\nb\na\nc\nb\na\n", one, 1, &p);
    assert_int_equal(node_field(j, 0, "requests"), 6);
    assert_int_equal(node_field(j, 0, "hits"), 1);
    assert_int_equal(node_field(j, 0, "unique_keys"), 3);
    assert_int_equal(json_integer_value(json_object_get(j, "hits")), 1);
    json_decref(j);
    /* three objects of room: a b a c b a hits a, b, a */
    p.cache = 3;
    j = replay("a\nb\na\nc\nb\na\n", one, 1, &p);
    assert_int_equal(node_field(j, 0, "hits"), 3);
    json_decref(j);
}

static void test_change_moves_miss(void **state)
{
    (void)state;
    const char *two[] = {"n1", "n2"};
    /* 200 distinct keys twice, a third node joins before the second pass:
     * with caches big enough, the second pass hits except for the keys the
     * new node took, which all miss; the new node serves nothing else. */
    size_t cap = 200 * 16 * 2 + 1, len = 0;
    char *text = malloc(cap);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 200; i++)
            len += (size_t)snprintf(text + len, cap - len, "k%d\n", i);
    trace_change c;
    rs_error err;
    assert_int_equal(trace_change_parse("200", "node add n3", &c, &err), 0);
    trace_params p = {.cache = 1000, .cache_objects = true, .changes = &c, .nchanges = 1};
    json_t *j = replay(text, two, 2, &p);
    json_int_t moved = node_field(j, 2, "requests");
    assert_true(moved > 0 && moved < 200);
    assert_int_equal(node_field(j, 2, "hits"), 0);
    assert_int_equal(json_integer_value(json_object_get(j, "hits")), 200 - moved);
    assert_int_equal(node_field(j, 0, "requests") + node_field(j, 1, "requests") + moved, 400);
    json_t *ch = json_array_get(json_object_get(j, "changes"), 0);
    assert_true(json_is_true(json_object_get(ch, "applied")));
    assert_int_equal(json_integer_value(json_object_get(ch, "request")), 200);
    json_decref(j);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clocks),           cmocka_unit_test(test_access_log),
        cmocka_unit_test(test_twitter_csv_keys), cmocka_unit_test(test_oracle),
        cmocka_unit_test(test_compressed),       cmocka_unit_test(test_options),
        cmocka_unit_test(test_lru_by_hand),      cmocka_unit_test(test_change_moves_miss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
