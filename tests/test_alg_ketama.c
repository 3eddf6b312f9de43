/*
 * test_alg_ketama.c - the ketama core against the real libmemcached.
 *
 * Reference: the libmemcached installed here (Debian 12's libmemcached-dev
 * 1.1.4-1, libmemcached-awesome), linked into this test, with
 * MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED set.  No memcached server is needed:
 * memcached_generate_hash answers which server a key goes to without
 * connecting.  Every expected value below comes from libmemcached:
 *
 *   names      memcached_servers_parse reads each node name to the same host
 *              and port as ketama_parse_name;
 *   keys       for random server lists (fixed seeds; 1..100 servers, random
 *              hosts, IPv4, bracketed IPv6, unix sockets, UTF-8 hosts, default
 *              and explicit ports, the same server written twice, whole
 *              weights 1..10) and thousands of random keys (ASCII, UTF-8,
 *              long): the owner index equals memcached_generate_hash, the
 *              server memcached_server_by_key, and the key hash
 *              memcached_generate_hash_value(MEMCACHED_HASH_MD5);
 *   continuum  with a custom libhashkit function that returns the key's
 *              first four bytes, libmemcached's dispatch is asked for the
 *              owner of every point's value, value - 1 and value + 1: every
 *              boundary of the continuum is the same, so the point values,
 *              counts and tie order are libmemcached's;
 *   limit      libmemcached aborts at 101 servers (in a forked child), and
 *              the core still builds there;
 *   refusals   fractional weights, bad ports and hosts are refused.
 * A failure prints the seed, which replays it.
 *
 * Checks docs/api.md, 'GET /api/config' (the catalogue's ketama), 'Variants:
 * the modes people really run'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libhashkit-1.0/hashkit.h>
#include <libmemcached/memcached.h>

#include "alg_ketama.h"

#define MAX_SERVERS 100
#define NAME_CAP 96
#define KEY_CAP 4096

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r) /* SplitMix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

/* A server list built both ways: the core's points and libmemcached's. */
typedef struct fixture {
    size_t n;
    char names[MAX_SERVERS][NAME_CAP];
    alg_node nodes[MAX_SERVERS];
    ketama_server srv[MAX_SERVERS];
    memcached_st *mc;
    alg_md5 *md5;
    alg_point *pts;
    size_t np;
} fixture;

/* Append the UTF-8 encoding of code point c; returns bytes written. */
static size_t put_utf8(char *out, uint32_t c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

static uint32_t random_code_point(rng *r)
{
    static const uint32_t ranges[][2] = {
        {0x21, 0x7e},     {0xa1, 0xff},     {0x391, 0x3c9},
        {0x3041, 0x30ff}, {0x4e00, 0x9fff}, {0x1f300, 0x1f64f},
    };
    const uint32_t *g = ranges[rng_below(r, sizeof ranges / sizeof ranges[0])];
    return g[0] + rng_below(r, g[1] - g[0] + 1);
}

/* A random server name, unique through i; the port part as the user might
 * write it.  Sometimes repeats server i-1 with its default port spelled out,
 * which libmemcached takes for the same server. */
static void random_name(rng *r, fixture *f, size_t i)
{
    char *out = f->names[i];
    char host[64];
    uint32_t kind = rng_below(r, 10);
    const char *prev = i > 0 ? f->names[i - 1] : NULL;
    if (kind == 9 && prev && !strchr(prev, ':') && prev[0] != '/' && prev[0] != '[' &&
        strlen(prev) + sizeof ":11211" <= NAME_CAP) {
        size_t l = strlen(prev);
        memcpy(out, prev, l);
        memcpy(out + l, ":11211", sizeof ":11211");
        return;
    }
    switch (kind) {
    case 0:
    case 1:
    case 2:
    case 9:
        snprintf(host, sizeof host, "mc%zu-%u.example.com", i, rng_below(r, 100000));
        break;
    case 3:
    case 4:
        snprintf(host, sizeof host, "10.%u.%u.%zu", rng_below(r, 256), rng_below(r, 256), i);
        break;
    case 5:
        snprintf(host, sizeof host, "[2001:db8::%x:%zx]", rng_below(r, 65536), i);
        break;
    case 6:
        snprintf(out, NAME_CAP, "/run/memcached/m%zu-%u.sock", i, rng_below(r, 1000));
        return;
    case 7: {
        size_t n = 0;
        for (uint32_t k = 1 + rng_below(r, 6); k > 0; k--) {
            uint32_t c = random_code_point(r);
            if (c == ':' || c == '[' || c == ']' || c == ',' || c == '/')
                c = 'x';
            n += put_utf8(host + n, c);
        }
        snprintf(host + n, sizeof host - n, "%zu", i);
        break;
    }
    default:
        snprintf(host, sizeof host, "cache%zu", i);
        break;
    }
    uint32_t p = rng_below(r, 10);
    if (p < 4)
        snprintf(out, NAME_CAP, "%s", host);
    else if (p == 4)
        snprintf(out, NAME_CAP, "%s:11211", host);
    else if (p == 5)
        snprintf(out, NAME_CAP, "%s:11212", host);
    else
        snprintf(out, NAME_CAP, "%s:%u", host, 1 + rng_below(r, 65535));
}

/* Build n random servers both in the core and in libmemcached, with
 * weights[i] or, when weights is NULL, random weights 1..10.  Checks on the
 * way that memcached_servers_parse reads each name as the core does. */
static void fixture_build(fixture *f, rng *r, uint64_t seed, size_t n, const uint32_t *weights)
{
    memcached_server_list_st list = NULL;
    memcached_return_t rc;
    rs_error err = {0};

    memset(f, 0, sizeof *f);
    f->n = n;
    f->md5 = alg_md5_new();
    assert_non_null(f->md5);
    for (size_t i = 0; i < n; i++) {
        random_name(r, f, i);
        uint32_t w = weights ? weights[i] : 1 + rng_below(r, 10);
        f->nodes[i] = (alg_node){f->names[i], strlen(f->names[i]), w};
        if (ketama_parse_name(f->nodes[i].name, f->nodes[i].len, &f->srv[i], &err) != 0)
            fail_msg("seed %llu: \"%s\" refused: %s", (unsigned long long)seed, f->names[i], err.msg);
        memcached_server_list_st one = memcached_servers_parse(f->names[i]);
        assert_non_null(one);
        assert_int_equal(memcached_server_list_count(one), 1);
        const char *host = one[0].hostname;
        if (strlen(host) != f->srv[i].host_len || memcmp(host, f->srv[i].host, strlen(host)) ||
            one[0].port != f->srv[i].port)
            fail_msg("seed %llu: \"%s\": libmemcached reads host \"%s\" port %u, the core "
                     "\"%.*s\" port %u",
                     (unsigned long long)seed, f->names[i], host, one[0].port,
                     (int)f->srv[i].host_len, f->srv[i].host, f->srv[i].port);
        list = memcached_server_list_append_with_weight(list, host, one[0].port,
                                                        (uint32_t)f->nodes[i].weight, &rc);
        assert_non_null(list);
        memcached_server_list_free(one);
    }
    f->mc = memcached_create(NULL);
    assert_non_null(f->mc);
    assert_int_equal(memcached_behavior_set(f->mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                     MEMCACHED_SUCCESS);
    assert_int_equal(memcached_server_push(f->mc, list), MEMCACHED_SUCCESS);
    memcached_server_list_free(list);
    assert_int_equal(memcached_server_count(f->mc), n);
    assert_int_equal(ketama_build(f->md5, f->nodes, n, &f->pts, &f->np, &err), 0);
    assert_true(f->np >= 4);
}

static void fixture_free(fixture *f)
{
    memcached_free(f->mc);
    free(f->pts);
    alg_md5_free(f->md5);
}

/* A random key into buf; returns its length (1 .. KEY_CAP - 1). */
static size_t random_key(rng *r, char *buf)
{
    size_t n = 0, want;
    switch (rng_below(r, 8)) {
    case 0:
    case 1: /* UTF-8 */
        for (uint32_t k = 1 + rng_below(r, 30); k > 0; k--)
            n += put_utf8(buf + n, random_code_point(r));
        return n;
    case 2: /* long: up to the API's 255 bytes */
        want = 200 + rng_below(r, 56);
        break;
    case 3: /* longer than any memcached key: MD5 over many blocks */
        if (rng_below(r, 4) == 0) {
            want = 256 + rng_below(r, KEY_CAP - 257);
            break;
        }
        /* fall through */
    default:
        want = 1 + rng_below(r, 40);
        break;
    }
    for (; n < want; n++)
        buf[n] = (char)(0x20 + rng_below(r, 0x5f));
    return n;
}

static const uint64_t seeds[] = {1, 2, 3, 7, 42, 2024, 31337, 0xfeedfaceull};

static void test_keys_match_libmemcached(void **state)
{
    (void)state;
    fixture f;
    char key[KEY_CAP];
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        rng r = {seeds[s]};
        size_t n = s == 0 ? 100 : s == 1 ? 1 : 1 + rng_below(&r, 100);
        fixture_build(&f, &r, seeds[s], n, NULL);
        for (int k = 0; k < 3000; k++) {
            size_t len = random_key(&r, key);
            uint32_t h = ketama_key_hash(f.md5, key, len);
            uint32_t want_h = memcached_generate_hash_value(key, len, MEMCACHED_HASH_MD5);
            if (h != want_h)
                fail_msg("seed %llu key %d (%zu bytes): hash %u, libmemcached %u",
                         (unsigned long long)seeds[s], k, len, h, want_h);
            uint32_t mine = f.pts[alg_successor(f.pts, f.np, h)].node;
            uint32_t want = memcached_generate_hash(f.mc, key, len);
            if (mine != want)
                fail_msg("seed %llu (%zu servers) key %d (%zu bytes, hash %u): server %u "
                         "\"%s\", libmemcached %u \"%s\"",
                         (unsigned long long)seeds[s], n, k, len, h, mine, f.names[mine], want,
                         want < n ? f.names[want] : "?");
            if (len < MEMCACHED_MAX_KEY) {
                memcached_return_t rc;
                const memcached_instance_st *in = memcached_server_by_key(f.mc, key, len, &rc);
                assert_non_null(in);
                const ketama_server *sv = &f.srv[mine];
                const char *host = memcached_server_name(in);
                if (strlen(host) != sv->host_len || memcmp(host, sv->host, sv->host_len) ||
                    memcached_server_port(in) != sv->port)
                    fail_msg("seed %llu key %d: server_by_key %s:%u, core %s",
                             (unsigned long long)seeds[s], k, host, memcached_server_port(in),
                             f.names[mine]);
            }
        }
        fixture_free(&f);
    }
}

/* libhashkit custom hash: the key is a uint32_t, its own hash. */
static uint32_t raw_hash(const char *key, size_t len, void *context)
{
    (void)context;
    uint32_t v = 0;
    memcpy(&v, key, len < 4 ? len : 4);
    return v;
}

/* Ask libmemcached's dispatch, through a custom hash, for the owner of every
 * point's value, value - 1 and value + 1, and of 0 and 2^32 - 1. */
static void probe_continuum(fixture *f, uint64_t seed)
{
    hashkit_st hk;
    assert_non_null(hashkit_create(&hk));
    assert_int_equal(hashkit_set_custom_function(&hk, raw_hash, NULL), HASHKIT_SUCCESS);
    assert_int_equal(memcached_set_hashkit(f->mc, &hk), MEMCACHED_SUCCESS);
    hashkit_free(&hk);
    for (size_t i = 0; i <= f->np; i++) {
        uint32_t base = i < f->np ? (uint32_t)f->pts[i].coord : 0;
        for (int d = -1; d <= 1; d++) {
            uint32_t c = i < f->np ? base + (uint32_t)d : d < 0 ? UINT32_MAX : 0;
            uint32_t mine = f->pts[alg_successor(f->pts, f->np, c)].node;
            uint32_t want = memcached_generate_hash(f->mc, (const char *)&c, sizeof c);
            if (mine != want)
                fail_msg("seed %llu (%zu servers): hash %u goes to %u \"%s\", libmemcached %u",
                         (unsigned long long)seed, f->n, c, mine, f->names[mine], want);
        }
    }
}

static void test_continuum_boundaries_match_libmemcached(void **state)
{
    (void)state;
    fixture f;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        uint64_t seed = seeds[s] ^ 0x5eed;
        rng r = {seed};
        size_t n = s == 0 ? 100 : 2 + rng_below(&r, 99);
        fixture_build(&f, &r, seed, n, NULL);
        probe_continuum(&f, seed);
        fixture_free(&f);
    }
}

/* The float quirks on purpose: equal weights where the float product falls
 * just short of 40 (25 and 100 servers), and a server whose share is too
 * small for a single point (weights 1 and 100). */
static void test_float_quirks_match_libmemcached(void **state)
{
    (void)state;
    fixture f;
    uint32_t ones[MAX_SERVERS];
    static const uint32_t tiny[] = {1, 100, 3};
    for (size_t i = 0; i < MAX_SERVERS; i++)
        ones[i] = 1;
    const struct {
        size_t n;
        const uint32_t *w;
    } cases[] = {{25, ones}, {100, ones}, {47, ones}, {2, tiny}, {3, tiny}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rng r = {1000 + c};
        fixture_build(&f, &r, 1000 + c, cases[c].n, cases[c].w);
        probe_continuum(&f, 1000 + c);
        fixture_free(&f);
    }
}

/* Names read by libmemcached's own parser exactly as by the core. */
static void test_names_as_libmemcached_parses_them(void **state)
{
    (void)state;
    static const char *const names[] = {
        "localhost",
        "localhost:11211",
        "localhost:11212",
        "[::1]",
        "[::1]:11211",
        "[::1]:22122",
        "[2001:db8::7]:1",
        "/tmp/memcached.sock",
        "h:011211",
        "h:65535",
        "ノード:7",
        "10.0.0.1",
        "a.b.c:80",
        "hello world",
        " a:1",
        "a b:7",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ketama_server sv;
        rs_error err = {0};
        assert_int_equal(ketama_parse_name(names[i], strlen(names[i]), &sv, &err), 0);
        memcached_server_list_st one = memcached_servers_parse(names[i]);
        assert_non_null(one);
        assert_int_equal(memcached_server_list_count(one), 1);
        assert_int_equal(strlen(one[0].hostname), sv.host_len);
        assert_memory_equal(one[0].hostname, sv.host, sv.host_len);
        assert_int_equal(one[0].port, sv.port);
        memcached_server_list_free(one);
    }
}

/* libmemcached 1.1.4 cannot hold 101 servers (update_continuum asserts
 * n <= 100 and aborts); the core carries on with the same arithmetic. */
static void test_beyond_100_servers(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        memcached_st *mc = memcached_create(NULL);
        memcached_server_list_st list = NULL;
        memcached_return_t rc;
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
        for (int i = 0; i < 101; i++) {
            char h[32];
            snprintf(h, sizeof h, "h%d", i);
            list = memcached_server_list_append_with_weight(list, h, 11211, 1, &rc);
        }
        memcached_server_push(mc, list);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);

    /* Smoke test (no reference exists): 1000 servers build, every point is
     * a server's, about 160 per server. */
    enum { N = 1000 };
    char names[N][32];
    alg_node nodes[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "h%d:%d", i, 20000 + i);
        nodes[i] = (alg_node){names[i], strlen(names[i]), 1 + i % 3};
    }
    alg_md5 *m = alg_md5_new();
    alg_point *pts = NULL;
    size_t np = 0;
    assert_int_equal(ketama_build(m, nodes, N, &pts, &np, NULL), 0);
    assert_in_range(np, 150 * N, 164 * N);
    for (size_t i = 0; i < np; i++) {
        assert_true(pts[i].node < N);
        if (i)
            assert_true(pts[i - 1].coord <= pts[i].coord);
    }
    free(pts);
    alg_md5_free(m);
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double weight;
        int code;
    } bad[] = {
        {"a", 1.5, RINGSIM_EPARAM},     {"a", 0, RINGSIM_EPARAM},
        {"a", -2, RINGSIM_EPARAM},      {"a", 4294967296.0, RINGSIM_EPARAM},
        {"a:0", 1, RINGSIM_ENAME},      {"a:99999", 1, RINGSIM_ENAME},
        {"a:65536", 1, RINGSIM_ENAME},  {":11211", 1, RINGSIM_ENAME},
        {"a:", 1, RINGSIM_ENAME},       {"a:12x", 1, RINGSIM_ENAME},
        {"a:1:2", 1, RINGSIM_ENAME},    {"::1", 1, RINGSIM_ENAME},
        {"[::1", 1, RINGSIM_ENAME},     {"[]:1", 1, RINGSIM_ENAME},
        {"[::1]x", 1, RINGSIM_ENAME},   {"[::1]:", 1, RINGSIM_ENAME},
        {"a:1 2", 1, RINGSIM_ENAME},    {"a,b", 1, RINGSIM_ENAME},
        {"/tmp/s:1", 1, RINGSIM_ENAME}, {"a[1]", 1, RINGSIM_ENAME},
    };
    alg_md5 *m = alg_md5_new();
    assert_non_null(m);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        alg_node nodes[2] = {{"ok", 2, 1}, {bad[i].name, strlen(bad[i].name), bad[i].weight}};
        alg_point *pts = (alg_point *)&nodes; /* must be reset to NULL */
        size_t np = 99;
        rs_error err = {0};
        int rc = ketama_build(m, nodes, 2, &pts, &np, &err);
        if (rc != bad[i].code)
            fail_msg("\"%s\" weight %g: %d, want %d", bad[i].name, bad[i].weight, rc, bad[i].code);
        assert_int_equal(err.code, bad[i].code);
        assert_non_null(strstr(err.msg, bad[i].name));
        assert_null(pts);
        assert_int_equal(np, 0);
    }
    alg_node frac = {"a", 1, 1.5};
    alg_point *pts = NULL;
    size_t np = 0;
    rs_error err = {0};
    assert_int_equal(ketama_build(m, &frac, 1, &pts, &np, &err), RINGSIM_EPARAM);
    assert_string_equal(err.msg,
                        "ketama weights are whole numbers from 1 to 4294967295: \"a\" has 1.5");
    /* no servers: no points, not an error */
    assert_int_equal(ketama_build(m, NULL, 0, &pts, &np, &err), 0);
    assert_null(pts);
    assert_int_equal(np, 0);
    alg_md5_free(m);
}

/* ---- the other modes (alg_ketama.h): MEMCACHED_BEHAVIOR_KETAMA,
 * MEMCACHED_DISTRIBUTION_CONSISTENT, and a key hash other than MD5 ---- */

/* Which libmemcached setup a case makes: the key hash is set first (so the
 * continuum is built with it, as ringsim assumes), then the mode, then the
 * servers are pushed; except KETAMA_WEIGHTED, which sets MD5 itself, so the
 * hash comes after it. */
static memcached_st *mode_client(ketama_mode mode, ketama_hash_fn fn, const fixture *f)
{
    memcached_st *mc = memcached_create(NULL);
    memcached_server_list_st list = NULL;
    memcached_return_t rc;
    assert_non_null(mc);
    int mh = ketama_hash_memcached(ketama_hash_resolve(mode, fn));
    if (mode == KETAMA_MODE_WEIGHTED) {
        assert_int_equal(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                         MEMCACHED_SUCCESS);
        assert_int_equal(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_HASH, (uint64_t)mh),
                         MEMCACHED_SUCCESS);
    } else {
        if (fn != KETAMA_HASH_AUTO)
            assert_int_equal(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_HASH, (uint64_t)mh),
                             MEMCACHED_SUCCESS);
        if (mode == KETAMA_MODE_KETAMA)
            assert_int_equal(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA, 1),
                             MEMCACHED_SUCCESS);
        else
            assert_int_equal(
                memcached_behavior_set_distribution(mc, MEMCACHED_DISTRIBUTION_CONSISTENT),
                MEMCACHED_SUCCESS);
    }
    for (size_t i = 0; i < f->n; i++) {
        char host[NAME_CAP];
        snprintf(host, sizeof host, "%.*s", (int)f->srv[i].host_len, f->srv[i].host);
        list = memcached_server_list_append_with_weight(list, host, f->srv[i].port,
                                                        (uint32_t)f->nodes[i].weight, &rc);
        assert_non_null(list);
    }
    assert_int_equal(memcached_server_push(mc, list), MEMCACHED_SUCCESS);
    memcached_server_list_free(list);
    return mc;
}

static void test_modes_match_libmemcached(void **state)
{
    (void)state;
    char key[KEY_CAP];
    static const uint32_t ones[MAX_SERVERS] = {0};
    uint32_t w1[MAX_SERVERS];
    for (size_t i = 0; i < MAX_SERVERS; i++)
        w1[i] = 1 + ones[i];
    size_t cases = 0;
    for (int mode = 0; mode < KETAMA_NMODE; mode++) {
        for (int fn = 0; fn < KETAMA_NHASH; fn++) {
            uint64_t seed = seeds[(size_t)(mode * KETAMA_NHASH + fn) % (sizeof seeds / sizeof *seeds)] ^
                            (uint64_t)(mode * 131 + fn);
            rng r = {seed};
            fixture f;
            size_t n = 1 + rng_below(&r, 60);
            rs_error err = {0};
            /* weights only where the mode uses them (a weight above 1 under
             * the unweighted modes turns libmemcached's weighting on) */
            fixture_build(&f, &r, seed, n, mode == KETAMA_MODE_WEIGHTED ? NULL : w1);
            ketama_hash_fn use = ketama_hash_resolve((ketama_mode)mode, (ketama_hash_fn)fn);
            memcached_st *mc = mode_client((ketama_mode)mode, (ketama_hash_fn)fn, &f);
            alg_point *pts = NULL;
            size_t np = 0;
            if (mode == KETAMA_MODE_WEIGHTED)
                assert_int_equal(ketama_build(f.md5, f.nodes, n, &pts, &np, &err), 0);
            else
                assert_int_equal(ketama_build_unweighted(f.md5, use, f.nodes, n, &pts, &np, &err), 0);
            if (mode != KETAMA_MODE_WEIGHTED)
                assert_int_equal(np, 100 * n);
            for (int k = 0; k < 2000; k++) {
                size_t len = random_key(&r, key);
                uint32_t h = ketama_hash(f.md5, use, key, len);
                uint32_t want_h = memcached_generate_hash_value(
                    key, len, (memcached_hash_t)ketama_hash_memcached(use));
                if (h != want_h)
                    fail_msg("seed %llu mode %s key_hash %s key %d: hash %u, libmemcached %u",
                             (unsigned long long)seed, ketama_mode_names[mode],
                             ketama_hash_names[fn], k, h, want_h);
                uint32_t mine = pts[alg_successor(pts, np, h)].node;
                uint32_t want = memcached_generate_hash(mc, key, len);
                if (mine != want)
                    fail_msg("seed %llu mode %s key_hash %s (%zu servers) key %d (%zu bytes): "
                             "server %u \"%s\", libmemcached %u \"%s\"",
                             (unsigned long long)seed, ketama_mode_names[mode], ketama_hash_names[fn],
                             n, k, len, mine, f.names[mine], want, want < n ? f.names[want] : "?");
                if (len < MEMCACHED_MAX_KEY) {
                    memcached_return_t rc;
                    const memcached_instance_st *in = memcached_server_by_key(mc, key, len, &rc);
                    assert_non_null(in);
                    if (memcached_server_port(in) != f.srv[mine].port)
                        fail_msg("seed %llu mode %s key %d: server_by_key port %u, core %s",
                                 (unsigned long long)seed, ketama_mode_names[mode], k,
                                 memcached_server_port(in), f.names[mine]);
                }
                cases++;
            }
            free(pts);
            memcached_free(mc);
            fixture_free(&f);
        }
    }
    assert_true(cases > 50000);
}

/* What the modes are in libmemcached, so that a change of the library is
 * seen: KETAMA is CONSISTENT_KETAMA unweighted with the key hash untouched;
 * a weight above 1 pushed under it turns weighting on (ringsim's
 * ketama_weighted); --DISTRIBUTION=consistent,HASH sets only KETAMA_HASH. */
static void test_mode_behaviours(void **state)
{
    (void)state;
    memcached_st *mc = memcached_create(NULL);
    assert_int_equal(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA, 1), MEMCACHED_SUCCESS);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_DISTRIBUTION),
                     MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_HASH), MEMCACHED_HASH_DEFAULT);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED), 0);
    assert_int_equal(memcached_server_add_with_weight(mc, "cache1", 11211, 2), MEMCACHED_SUCCESS);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED), 1);
    memcached_free(mc);
    const char cfg[] = "--SERVER=cache1 --DISTRIBUTION=consistent,CRC";
    mc = memcached(cfg, sizeof cfg - 1);
    assert_non_null(mc);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_DISTRIBUTION),
                     MEMCACHED_DISTRIBUTION_CONSISTENT);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_HASH), MEMCACHED_HASH_DEFAULT);
    assert_int_equal(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_KETAMA_HASH), MEMCACHED_HASH_CRC);
    memcached_free(mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_as_libmemcached_parses_them),
        cmocka_unit_test(test_keys_match_libmemcached),
        cmocka_unit_test(test_continuum_boundaries_match_libmemcached),
        cmocka_unit_test(test_float_quirks_match_libmemcached),
        cmocka_unit_test(test_beyond_100_servers),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_modes_match_libmemcached),
        cmocka_unit_test(test_mode_behaviours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
