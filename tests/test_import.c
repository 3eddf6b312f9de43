/*
 * test_import.c - the import parsers (src/io/import.h) on realistic texts of
 * each format: what they import, every refusal with its line, the notes,
 * section choice by name, and the limits (size, line length, NUL, UTF-8,
 * servers).  The placement of the imported nodes is checked against the
 * real programs by tests/ref/import_*.
 *
 * Checks docs/api.md, 'What the parsers read', 'Limits'.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "import.h"
#include "lib/paste.h"

/* Parse text; on success the result, else NULL with *line and msg set. */
static import_result *parse(const char *fmt, const char *name, const char *text, int *line, char *msg)
{
    import_format f;
    rs_error err = {0};
    assert_int_equal(import_format_parse(fmt, &f, &err), 0);
    import_result *r = NULL;
    int l = -1;
    int rc = import_parse(text, strlen(text), f, name, &r, &l, &err);
    if (line)
        *line = l;
    if (msg)
        snprintf(msg, 320, "%s", err.msg);
    if (rc != 0) {
        assert_null(r);
        assert_int_equal(rc, RINGSIM_EPARAM);
        return NULL;
    }
    return r;
}

/* Expect a refusal at line with a message containing want. */
static void refused(const char *fmt, const char *name, const char *text, int line, const char *want)
{
    int l;
    char msg[320];
    import_result *r = parse(fmt, name, text, &l, msg);
    if (r != NULL) {
        import_free(r);
        fail_msg("accepted, expected a refusal \"%s\"", want);
    }
    if (strstr(msg, want) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", msg, want);
    if (line >= 0)
        assert_int_equal(l, line);
}

static bool has_note(const import_result *r, int line, const char *want)
{
    for (size_t i = 0; i < import_note_count(r); i++) {
        const import_note *n = import_note_at(r, i);
        if ((line < 0 || n->line == line) && strstr(n->message, want) != NULL)
            return true;
    }
    return false;
}

static const import_node *node(const import_result *r, size_t i)
{
    assert_true(i < import_node_count(r));
    return import_node_at(r, i);
}

/* ---- nginx ---- */

static const char *NGINX_CONF =
    "user www-data;\n"
    "events { worker_connections 768; }\n"
    "http {\n"
    "    include /etc/nginx/mime.types;   # types\n"
    "    upstream cache {\n"
    "        server 10.0.0.2:8080 backup;\n"
    "        hash $request_uri consistent;\n"
    "        server 10.0.0.1:8080 weight=3 max_fails=2 fail_timeout=5s;\n"
    "        server 'unix:/run/app.sock';\n"
    "        server \"app\\\"x.local\" down;\n"
    "        keepalive 32;\n"
    "    }\n"
    "    upstream rr { server 192.0.2.1; }\n"
    "    server { listen 80; location / { proxy_pass http://cache; set $x \"${y}z\"; } }\n"
    "}\n"
    "stream {\n"
    "    upstream dns { hash $remote_addr consistent; server 10.1.0.1:53; server 10.1.0.2:53 "
    "weight=2; }\n"
    "}\n";

static void nginx_upstream(void **s)
{
    (void)s;
    int line;
    char msg[320];
    /* two consistent upstreams (http cache, stream dns): a name is needed */
    assert_null(parse("nginx", NULL, NGINX_CONF, &line, msg));
    assert_non_null(strstr(msg, "\"cache\", \"dns\""));
    import_result *r = parse("auto", "cache", NGINX_CONF, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_result_format(r), IMPORT_NGINX);
    assert_string_equal(import_result_algorithm(r), "nginx");
    assert_string_equal(import_result_name(r), "cache");
    assert_int_equal(import_node_count(r), 3); /* the backup is off the ring */
    assert_string_equal(node(r, 0)->name, "10.0.0.1:8080");
    assert_true(node(r, 0)->weight == 3);
    assert_int_equal(node(r, 0)->line, 8);
    assert_string_equal(node(r, 1)->name, "unix:/run/app.sock");
    assert_string_equal(node(r, 2)->name, "app\"x.local");
    assert_true(node(r, 2)->down);
    assert_false(node(r, 0)->down);
    assert_true(has_note(r, 6, "backup"));
    assert_true(has_note(r, 8, "max_fails=2"));
    assert_true(has_note(r, 11, "keepalive"));
    assert_true(has_note(r, 7, "$request_uri"));
    assert_true(has_note(r, 10, "DNS"));
    import_free(r);
    r = parse("nginx", "dns", NGINX_CONF, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_node_count(r), 2);
    assert_true(node(r, 1)->weight == 2);
    assert_true(has_note(r, 17, "stream"));
    import_free(r);
}

/* `hash KEY;` without consistent: nginx's modulo variant, imported. */
static void nginx_plain_hash(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL,
                             "upstream u {\n hash $request_uri;\n server a:1;\n"
                             " server b:1 weight=2 down;\n}\n",
                             NULL, NULL);
    assert_non_null(r);
    assert_string_equal(import_result_algorithm(r), "nginx");
    const json_t *c = json_object_get(import_result_params(r), "consistent");
    assert_true(json_is_integer(c) && json_integer_value(c) == 0);
    assert_int_equal(import_node_count(r), 2);
    assert_true(node(r, 1)->weight == 2 && node(r, 1)->down);
    assert_true(has_note(r, 2, "moves most keys"));
    import_free(r);
    /* with consistent: no parameter, as before */
    r = parse("nginx", NULL, "upstream u { hash $k consistent; server a:1; }\n", NULL, NULL);
    assert_non_null(r);
    assert_null(json_object_get(import_result_params(r), "consistent"));
    import_free(r);
    refused("nginx", "u", "upstream u {\n least_conn;\n server a:1;\n}\n", 2, "not by \"hash KEY\"");
}

static void nginx_refusals(void **s)
{
    (void)s;
    refused("nginx", NULL,
            "upstream u {\n hash $uri consistent;\n server a:1;\n server b:1 backup;\n}\n", 4,
            "balancing method does not support parameter \"backup\"");
    refused("nginx", NULL, "upstream u {\n hash $uri consistent;\n server a:1 weight=0;\n}\n", 3,
            "invalid parameter \"weight=0\"");
    refused("nginx", NULL, "upstream u {\n hash $uri consistent;\n server a:1 wieght=2;\n}\n", 3,
            "invalid parameter \"wieght=2\"");
    refused("nginx", NULL, "upstream u {\n hash $uri maybe;\n server a:1;\n}\n", 2,
            "invalid parameter \"maybe\"");
    refused("nginx", "u", "upstream u {\n least_conn;\n server a:1;\n}\n", 2, "least_conn");
    refused("nginx", NULL, "http {\n upstream u {\n hash $k consistent;\n server a:1;\n", 5,
            "unexpected end of file, expecting \"}\"");
    refused("nginx", NULL, "upstream u { hash $k consistent; server a:1; } }\n", 1,
            "unexpected \"}\"");
    refused("nginx", NULL, "upstream u { hash $k consistent; server a:1 }\n", 1, "unexpected \"}\"");
    refused("nginx", NULL,
            "http { upstream u { hash $k consistent; server a:1; }\n"
            "upstream u { hash $k consistent; server b:1; } }\n",
            2, "duplicate upstream \"u\"");
    refused("nginx", NULL, "server { upstream u { hash $k consistent; server a:1; } }\n", 1,
            "not allowed here");
    refused("nginx", NULL, "upstream u { hash $k consistent; server a:1; server b:2; server a:1; }\n",
            1, "appears twice");
    refused("nginx", "nope", "upstream u { hash $k consistent; server a:1; }\n", 0,
            "no upstream \"nope\"");
    refused("nginx", NULL, "events {}\n", 0, "no upstream block");
    /* the server's address and parameters as nginx -t reads them (checked
     * with nginx 1.22, tests/ref/import_ref.py) */
    static const struct {
        const char *server, *want;
    } bad[] = {
        {"10.0.0.1:99999", "invalid port in upstream \"10.0.0.1:99999\""},
        {"http://10.0.0.2:1", "invalid host in upstream \"http://10.0.0.2:1\""},
        {"10.0.0.3:1 fail_timeout=zz", "invalid parameter \"fail_timeout=zz\""},
        {"10.0.0.1:0", "invalid port in upstream"},
        {"10.0.0.1:abc", "invalid port in upstream"},
        {"10.0.0.1:", "invalid port in upstream"},
        {"10.0.0.1:1/x", "invalid host in upstream"},
        {"10.0.0.1?x", "invalid host in upstream"},
        {"::1", "invalid port in upstream \"::1\""},
        {":80", "no host in upstream"},
        {"[::1]x", "invalid host in upstream"},
        {"[::1]:0", "invalid port in upstream"},
        {"[]:80", "no host in upstream"},
        {"[::g]:80", "invalid IPv6 address in upstream"},
        {"[1::2::3]", "invalid IPv6 address in upstream"},
        {"[1:2:3:4:5:6:7:8:9]", "invalid IPv6 address in upstream"},
        {"unix:", "no path in the unix domain socket in upstream"},
        {"a:1 fail_timeout=10ms", "invalid parameter \"fail_timeout=10ms\""},
        {"a:1 fail_timeout=1m1h", "invalid parameter"},
        {"a:1 fail_timeout=", "invalid parameter"},
        {"a:1 max_fails=+1", "invalid parameter \"max_fails=+1\""},
        {"a:1 max_conns=-1", "invalid parameter"},
        {"a:1 weight=+2", "invalid parameter \"weight=+2\""},
        {"a:1 weight=00", "invalid parameter"},
        {"a:1 Down", "invalid parameter \"Down\""},
        {"http://x bogus", "invalid parameter \"bogus\""}, /* parameters first */
        {"a:1 weight=3000000000", "ringsim takes weights up to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char t[256];
        snprintf(t, sizeof t, "upstream u {\n hash $k consistent;\n server b:1;\n server %s;\n}\n",
                 bad[i].server);
        refused("nginx", NULL, t, 4, bad[i].want);
    }
    static const char *const good[] = {
        "a:1 fail_timeout=1h30m",
        "a:1 fail_timeout=5",
        "a:1 \"fail_timeout=1h 5\"",
        "a:1 fail_timeout=1y1M1w1d1h1m1s",
        "a:1 max_fails=3000000000",
        "a:1 weight=007",
        "[::1]:80",
        "[::1]",
        "[::ffff:1.2.3.4]:80",
        "unix:/tmp/x.sock",
        "UNIX:/tmp/y",
        "10.0.0.1",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char t[256];
        snprintf(t, sizeof t, "upstream u {\n hash $k consistent;\n server %s;\n}\n", good[i]);
        import_result *g = parse("nginx", NULL, t, NULL, NULL);
        if (g == NULL)
            fail_msg("server %s refused", good[i]);
        import_free(g);
    }
    /* the stream module wants a port */
    refused("nginx", NULL, "stream { upstream u { hash $k consistent; server 10.0.0.1; } }\n", 1,
            "no port in upstream \"10.0.0.1\"");
    /* backup before hash is accepted, the server stays off the ring */
    import_result *r = parse(
        "nginx", NULL, "upstream u {\n server b:1 backup;\n hash $k consistent;\n server a:1;\n}\n",
        NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_node_count(r), 1);
    assert_string_equal(node(r, 0)->name, "a:1");
    import_free(r);
}

/* ---- haproxy ---- */

static const char *HAPROXY_CFG = "global\n"
                                 "    daemon\n"
                                 "defaults\n"
                                 "    mode http\n"
                                 "    balance uri\n"
                                 "    hash-type consistent\n"
                                 "    default-server weight 20 check inter 2s\n"
                                 "frontend fe\n"
                                 "    bind :80\n"
                                 "    default_backend web\n"
                                 "backend web\n"
                                 "    hash-balance-factor 150\n"
                                 "    server a 10.0.0.1:80 id 5\n"
                                 "    server b 10.0.0.2:80 weight 3   # heavier\n"
                                 "    server \"c d\" 10.0.0.3:80 disabled\n"
                                 "    server e 10.0.0.4:80 id 2 backup\n"
                                 "backend static\n"
                                 "    balance roundrobin\n"
                                 "    server s 10.0.1.1:80\n"
                                 "defaults named\n"
                                 "    balance source\n"
                                 "    hash-type map-based\n"
                                 "listen api from named\n"
                                 "    bind :81\n"
                                 "    server x 10.0.2.1:80\n";

static void haproxy_backend(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL, HAPROXY_CFG, NULL, NULL);
    assert_non_null(r); /* "static" and "api" do not hash consistently */
    assert_int_equal(import_result_format(r), IMPORT_HAPROXY);
    assert_string_equal(import_result_name(r), "web");
    assert_string_equal(import_result_algorithm(r), "haproxy");
    json_t *hbf = json_object_get(import_result_params(r), "hash_balance_factor");
    assert_int_equal(json_integer_value(hbf), 150);
    assert_int_equal(import_node_count(r), 4);
    assert_string_equal(node(r, 0)->name, "a");
    assert_int_equal(node(r, 0)->id, 5);
    assert_true(node(r, 0)->weight == 20); /* default-server from defaults */
    assert_true(node(r, 1)->weight == 3);
    assert_int_equal(node(r, 1)->id, 0);
    assert_string_equal(node(r, 2)->name, "c d");
    assert_true(node(r, 2)->down);
    assert_true(node(r, 3)->backup);
    assert_int_equal(node(r, 3)->id, 2);
    assert_string_equal(node(r, 3)->address, "10.0.0.4:80");
    assert_true(has_note(r, 7, "default-server: check, inter"));
    assert_false(has_note(r, 13, "check")); /* said once, on default-server's line */
    assert_true(has_note(r, 5, "balance uri"));
    assert_true(has_note(r, -1, "renumbers"));
    import_free(r);
    refused("haproxy", "static", HAPROXY_CFG, 18, "balance roundrobin does not hash");
    /* map-based (from its defaults): the variant, named */
    r = parse("haproxy", "api", HAPROXY_CFG, NULL, NULL);
    assert_non_null(r);
    assert_string_equal(import_result_algorithm(r), "haproxy");
    assert_string_equal(json_string_value(json_object_get(import_result_params(r), "hash_type")),
                        "map-based");
    assert_null(json_object_get(import_result_params(r), "hash_balance_factor"));
    assert_true(has_note(r, 22, "moves most keys"));
    import_free(r);
    /* alone, a map-based backend is offered; one with avalanche is refused */
    r = parse("auto", NULL, "backend m\n balance hdr(k)\n server a 1.1.1.1:80 weight 2\n", NULL,
              NULL);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(import_result_params(r), "hash_type")),
                        "map-based");
    assert_true(has_note(r, 2, "HAProxy's default"));
    import_free(r);
    refused("haproxy", NULL,
            "backend m\n balance uri\n hash-type map-based sdbm avalanche\n server a x:1\n", 3,
            "map-based sdbm avalanche");
    refused("haproxy", "nope", HAPROXY_CFG, 0, "\"web\", \"static\", \"api\"");
}

/* Issue 25 item 15: a default-server line with parameters placement does
 * not depend on is one note on its line, however many servers take them;
 * a server's own such parameters stay its own note. */
static void haproxy_default_server_once(void **s)
{
    (void)s;
    char t[2048];
    int n = snprintf(t, sizeof t,
                     "backend app\n balance uri\n hash-type consistent\n"
                     " default-server inter 3s fall 3 rise 2 check maxconn 100\n");
    for (int i = 1; i <= 8; i++)
        n += snprintf(t + n, sizeof t - (size_t)n, " server s%d 10.0.0.%d:80%s\n", i, i,
                      i == 8 ? " slowstart 10s" : "");
    import_result *r = parse("haproxy", NULL, t, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_node_count(r), 8);
    size_t about = 0; /* notes that name default-server's parameters */
    for (size_t i = 0; i < import_note_count(r); i++)
        about += strstr(import_note_at(r, i)->message, "maxconn") != NULL;
    assert_int_equal(about, 1);
    assert_true(has_note(r, 4, "default-server: inter, fall, rise, check, maxconn"));
    assert_true(has_note(r, 4, "8 servers take it"));
    assert_true(has_note(r, 12, "server s8: slowstart"));
    import_free(r);
    /* servers before the line take nothing from it: no note */
    r = parse("haproxy", NULL,
              "backend app\n balance uri\n hash-type consistent\n server a 1.1.1.1:80\n"
              " default-server check\n",
              NULL, NULL);
    assert_non_null(r);
    assert_false(has_note(r, -1, "check"));
    import_free(r);
}

static void haproxy_refusals(void **s)
{
    (void)s;
    const char *pre = "backend b\n balance uri\n hash-type consistent\n";
    char t[512];
    snprintf(t, sizeof t, "%s server a 1.1.1.1:80 weight 300\n", pre);
    refused("haproxy", NULL, t, 4, "weight of server a is not within 0 and 256 (300)");
    snprintf(t, sizeof t, "%s server a 1.1.1.1:80 id 0\n", pre);
    refused("haproxy", NULL, t, 4, "custom id has to be > 0");
    snprintf(t, sizeof t, "%s server a 1.1.1.1:80 id 3\n server b 1.1.1.2:80 id 3\n", pre);
    refused("haproxy", NULL, t, 5, "custom id 3 already used");
    snprintf(t, sizeof t, "%s server a \"1.1.1.1:80\n", pre);
    refused("haproxy", NULL, t, 4, "unmatched quote");
    refused("haproxy", NULL, "backend b\n balance uri\n hash-type consistent djb2\n server a x:1\n",
            3, "sdbm");
    refused("haproxy", NULL, "backend b\n balance uri\n hash-type consistent sdbm\n server a x:1\n",
            3, "avalanche");
    import_result *ok = parse("haproxy", NULL,
                              "backend b\n balance uri\n hash-type consistent sdbm avalanche\n"
                              " server a x:1\n",
                              NULL, NULL);
    assert_non_null(ok);
    import_free(ok);
    refused("haproxy", NULL, "backend b\n balance uri\n hash-type fancy\n server a x:1\n", 3,
            "'hash-type' requires");
    refused("haproxy", NULL, "backend b from nope\n server a x:1\n", 1,
            "defaults section 'nope' not found");
    refused("haproxy", NULL, "backend b\n server a x:1\nbackend b\n server c y:1\n", 3, "same name");
    /* server keywords as haproxy -c 2.6 reads them (tests/ref/import_ref.py
     * asks it the same lines) */
    static const struct {
        const char *params, *want; /* want NULL: accepted */
    } kw[] = {
        {"bogus", "'server b/a' : unknown keyword 'bogus'."},
        {"check inter", "'inter' expects a delay as argument"},
        {"maxconn check bogus", "unknown keyword 'bogus'"}, /* maxconn takes "check" */
        {"usesrc 1.2.3.4", "'usesrc' only allowed after a 'source' statement"},
        {"source", "'source' expects <addr>"},
        {"source 1.2.3.4 usesrc", "'usesrc' expects an argument"},
        {"weight -1", "weight of server a is not within 0 and 256 (-1)"},
        {"id", "'id' expects an integer argument"},
        {"weight 1 weight", NULL}, /* atol(""): weight 0 */
        {"weight 12abc", NULL},
        {"weight 4294967297", NULL}, /* cut to an int: 1 */
        {"id 5x", NULL},
        {"\"\" bogus", NULL}, /* an empty word ends the server's keywords */
        {"source 1.2.3.4 usesrc client interface eth0 check", NULL},
        {"check inter 2s fall 3 rise 2 maxconn 10 ws auto", NULL},
        {"maxconn", NULL},
    };
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++) {
        snprintf(t, sizeof t, "%s server a 1.1.1.1:80 %s\n", pre, kw[i].params);
        if (kw[i].want != NULL) {
            refused("haproxy", NULL, t, 4, kw[i].want);
            continue;
        }
        import_result *g = parse("haproxy", NULL, t, NULL, NULL);
        if (g == NULL)
            fail_msg("\"%s\" refused", kw[i].params);
        import_free(g);
    }
    snprintf(t, sizeof t, "%s server a 1.1.1.1:80 weight 1 weight\n", pre);
    import_result *w0 = parse("haproxy", NULL, t, NULL, NULL);
    assert_true(node(w0, 0)->weight == 0);
    import_free(w0);
    snprintf(t, sizeof t, "%s server a 1.1.1.1:80 weight 4294967297 id 5x\n", pre);
    w0 = parse("haproxy", NULL, t, NULL, NULL);
    assert_true(node(w0, 0)->weight == 1);
    assert_int_equal(node(w0, 0)->id, 5);
    import_free(w0);
    /* default-server: an unknown keyword is refused, one it does not take
     * (id) warned about and skipped */
    snprintf(t, sizeof t, "%s default-server bogus\n server a 1.1.1.1:80\n", pre);
    refused("haproxy", NULL, t, 4, "unknown keyword 'bogus'");
    snprintf(t, sizeof t, "%s default-server id 3 weight 2\n server a 1.1.1.1:80\n", pre);
    w0 = parse("haproxy", NULL, t, NULL, NULL);
    assert_non_null(w0);
    assert_int_equal(node(w0, 0)->id, 0);
    assert_true(node(w0, 0)->weight == 2);
    assert_true(has_note(w0, 4, "not accepted in default-server"));
    import_free(w0);
    /* weight 0 is allowed: imported with it (no point, it serves nothing);
     * the ids stay HAProxy's own by position */
    snprintf(t, sizeof t, "%s server a 1.1.1.1:80 weight 0\n server b 1.1.1.2:80\n", pre);
    import_result *r = parse("haproxy", NULL, t, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_node_count(r), 2);
    assert_string_equal(node(r, 0)->name, "a");
    assert_true(node(r, 0)->weight == 0);
    assert_string_equal(node(r, 1)->name, "b");
    assert_true(node(r, 1)->weight == 1);
    assert_int_equal(node(r, 1)->id, 0); /* assigned as HAProxy assigns: by position */
    import_free(r);
}

/* ---- libmemcached ---- */

static void libmemcached_list(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL,
                             "10.0.0.1:11211:2, 10.0.0.2:11212,cache-c,[::1]:11213:5,"
                             "/tmp/m.sock,10.0.0.9:99999\n",
                             NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_result_format(r), IMPORT_LIBMEMCACHED);
    assert_string_equal(import_result_algorithm(r), "ketama");
    assert_int_equal(import_node_count(r), 6);
    assert_string_equal(node(r, 0)->name, "10.0.0.1"); /* port 11211: the host alone */
    assert_true(node(r, 0)->weight == 2);
    assert_string_equal(node(r, 1)->name, "10.0.0.2:11212");
    assert_string_equal(node(r, 2)->name, "cache-c");
    assert_string_equal(node(r, 3)->name, "[::1]:11213");
    assert_true(node(r, 3)->weight == 5);
    assert_string_equal(node(r, 4)->name, "/tmp/m.sock");
    assert_string_equal(node(r, 5)->name, "10.0.0.9:34463"); /* cut to 16 bits */
    assert_true(has_note(r, 1, "16 bits"));
    import_free(r);
    refused("libmemcached", NULL, "a:1,a:11211:3,a", 1, "appears twice");
}

/* memcached_servers_parse as it is: an empty entry is localhost:11211, an
 * empty host localhost, spaces stay in the host (one after a comma is
 * skipped), a space after the port starts the weight. */
static void libmemcached_list_quirks(void **s)
{
    (void)s;
    static const struct {
        const char *text;
        const char *names[4];
        double weights[4];
    } cases[] = {
        {"a:1,,b:2", {"a:1", "localhost", "b:2"}, {1, 1, 1}},
        {",", {"localhost"}, {1}},
        {":5,a:1", {"localhost:5", "a:1"}, {1, 1}},
        {"hello world", {"hello world"}, {1}},
        {" a:1", {" a:1"}, {1}},
        {"a:1,  b:2", {"a:1", " b:2"}, {1, 1}},
        {"a:1,\tb:2 3", {"a:1", "b:2"}, {1, 3}},
        {"a b:7:4", {"a b:7"}, {4}},
        {"hello ", {"hello "}, {1}},
        {"a:1,\n", {"a:1"}, {1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int line;
        char msg[320];
        import_result *r = parse("libmemcached", NULL, cases[i].text, &line, msg);
        if (r == NULL)
            fail_msg("\"%s\" refused: %s", cases[i].text, msg);
        size_t n = 0;
        while (n < 4 && cases[i].names[n] != NULL)
            n++;
        assert_int_equal(import_node_count(r), n);
        for (size_t k = 0; k < n; k++) {
            assert_string_equal(node(r, k)->name, cases[i].names[k]);
            assert_true(node(r, k)->weight == cases[i].weights[k]);
        }
        import_free(r);
    }
}

static void libmemcached_string(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL,
                             "--SERVER=10.0.0.1:11211/?2 --SERVER=cache-b.local:11212 "
                             "--SOCKET=\"/tmp/m.sock\"/?3 "
                             "--BINARY-PROTOCOL --hash=crc\n",
                             NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_node_count(r), 3);
    assert_string_equal(node(r, 0)->name, "10.0.0.1");
    assert_true(node(r, 0)->weight == 2);
    assert_string_equal(node(r, 1)->name, "cache-b.local:11212");
    assert_string_equal(node(r, 2)->name, "/tmp/m.sock");
    assert_true(node(r, 2)->weight == 3);
    assert_true(has_note(r, 1, "KETAMA_WEIGHTED"));
    assert_true(has_note(r, 1, "--BINARY-PROTOCOL"));
    assert_null(json_object_get(import_result_params(r), "mode"));
    import_free(r);
    /* --DISTRIBUTION=consistent after the weighted servers: unweighted */
    r = parse("auto", NULL,
              "--HASH=crc --SERVER=10.0.0.1/?2 --SERVER=cache-b.local:11212 "
              "--DISTRIBUTION=consistent,MD5\n",
              NULL, NULL);
    assert_non_null(r);
    const json_t *pr = import_result_params(r);
    assert_string_equal(json_string_value(json_object_get(pr, "mode")), "consistent");
    assert_string_equal(json_string_value(json_object_get(pr, "key_hash")), "crc");
    assert_true(node(r, 0)->weight == 1);
    assert_true(has_note(r, -1, "weights are not used"));
    assert_true(has_note(r, 1, "KETAMA_HASH"));
    import_free(r);
    /* before a weighted server: libmemcached turns weighting on */
    r = parse("auto", NULL, "--DISTRIBUTION=consistent --SERVER=aaa/?2 --SERVER=bbb\n", NULL, NULL);
    assert_non_null(r);
    pr = import_result_params(r);
    assert_string_equal(json_string_value(json_object_get(pr, "mode")), "ketama_weighted");
    assert_string_equal(json_string_value(json_object_get(pr, "key_hash")), "one_at_a_time");
    assert_true(node(r, 0)->weight == 2);
    import_free(r);
    /* a hash set after the continuum: points and keys differ, refused */
    refused("libmemcached", NULL,
            "--SERVER=aaa/?2 --DISTRIBUTION=consistent\n--BINARY-PROTOCOL --hash=crc\n", 2,
            "after the continuum was built");
    refused("libmemcached", NULL, "--SERVER=aaa --HASH=HSIEH", 1, "HSIEH");
    refused("libmemcached", NULL, "--SERVER=aaa --DISTRIBUTION=ketama", 1,
            "CONSISTENT, MODULA or RANDOM");
    refused("libmemcached", NULL, "--SERVER=ab:11211", 1, "three or more");
    refused("libmemcached", NULL, "--SERVER=host1 --FROB", 1, "unknown option \"--FROB\"");
    refused("libmemcached", NULL, "--SERVER=host1 --DISTRIBUTION=modula", 1,
            "does not hash consistently");
    refused("libmemcached", NULL, "--SERVER=host1:123456", 1, "1 to 5 digits");
}

/* ---- twemproxy ---- */

static const char *NUTCRACKER_YML = "alpha:\n"
                                    "  listen: 127.0.0.1:22121\n"
                                    "  hash: fnv1a_64\n"
                                    "  hash_tag: \"{}\"\n"
                                    "  distribution: ketama\n"
                                    "  auto_eject_hosts: true\n"
                                    "  redis: true\n"
                                    "  servers:\n"
                                    "   - 127.0.0.1:6379:1\n"
                                    "   - 127.0.0.1:6380:2 server2\n"
                                    "   - 10.0.0.3:11211:1\n"
                                    "# a comment\n"
                                    "beta:\n"
                                    "  listen: 127.0.0.1:22122\n"
                                    "  hash: crc32\n"
                                    "  servers:\n"
                                    "   - /tmp/r.sock:1\n";

static void twemproxy_pool(void **s)
{
    (void)s;
    refused("auto", NULL, NUTCRACKER_YML, 13, "\"alpha\", \"beta\"");
    import_result *r = parse("auto", "alpha", NUTCRACKER_YML, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_result_format(r), IMPORT_TWEMPROXY);
    assert_string_equal(import_result_algorithm(r), "twemproxy");
    assert_string_equal(json_string_value(json_object_get(import_result_params(r), "hash")),
                        "fnv1a_64");
    assert_int_equal(import_node_count(r), 3);
    assert_string_equal(node(r, 0)->name, "127.0.0.1:6379");
    assert_string_equal(node(r, 1)->name, "server2");
    assert_string_equal(node(r, 1)->address, "127.0.0.1:6380");
    assert_true(node(r, 1)->weight == 2);
    assert_string_equal(node(r, 2)->name, "10.0.0.3"); /* port 11211 left out */
    assert_int_equal(node(r, 1)->line, 10);
    assert_true(has_note(r, 4, "hash_tag"));
    assert_true(has_note(r, 6, "rebuilt"));
    import_free(r);
    r = parse("twemproxy", "beta", NUTCRACKER_YML, NULL, NULL);
    assert_non_null(r);
    assert_string_equal(node(r, 0)->name, "/tmp/r.sock");
    assert_true(has_note(r, 15, "15-bit"));
    assert_true(has_note(r, 15, "one server takes them all"));
    import_free(r);
}

static void twemproxy_refusals(void **s)
{
    (void)s;
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  servers:\n   - 1.1.1.1:80:0\n", 4,
            "zero weight");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  servers:\n   - 1.1.1.1:80:x\n", 4,
            "invalid weight");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  servers:\n   - 1.1.1.1:99999:1\n", 4,
            "invalid port");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  servers:\n   - 1.1.1.1\n", 4, "format string");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  hash: sha1\n  servers: [a:1:1]\n", 3,
            "not a valid hash");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  distribution: modula\n  servers: [a:1:1]\n", 3,
            "does not hash consistently");
    refused("twemproxy", NULL, "p:\n  servers: [a:1:1]\n", 1, "\"listen:\" is missing");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  colour: red\n  servers: [a:1:1]\n", 3,
            "is unknown");
    refused("twemproxy", NULL, "p:\n  listen: a:1\n  servers: [a:1:1\n", -1, "YAML error");
}

/* ---- envoy ---- */

static const char *ENVOY_YAML =
    "static_resources:\n"
    "  clusters:\n"
    "  - name: web\n"
    "    lb_policy: ROUND_ROBIN\n"
    "    load_assignment: {cluster_name: web, endpoints: []}\n"
    "  - name: cache\n"
    "    type: STATIC\n"
    "    lb_policy: RING_HASH\n"
    "    ring_hash_lb_config:\n"
    "      minimum_ring_size: 2048\n"
    "      maximum_ring_size: \"65536\"\n"
    "    common_lb_config:\n"
    "      healthy_panic_threshold: {value: 30}\n"
    "    load_assignment:\n"
    "      cluster_name: cache\n"
    "      endpoints:\n"
    "      - lb_endpoints:\n"
    "        - endpoint:\n"
    "            address: {socket_address: {address: 10.0.0.1, port_value: 80}}\n"
    "          load_balancing_weight: 2\n"
    "        - endpoint:\n"
    "            address: {socket_address: {address: \"::0:1\", port_value: 8080}}\n"
    "          health_status: DRAINING\n"
    "        - endpoint:\n"
    "            address: {socket_address: {address: 10.0.0.3, port_value: 80}}\n"
    "          metadata: {filter_metadata: {envoy.lb: {hash_key: shard-3}}}\n"
    "      - priority: 1\n"
    "        lb_endpoints:\n"
    "        - endpoint: {address: {socket_address: {address: 10.9.9.9, port_value: 80}}}\n";

static void envoy_cluster(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL, ENVOY_YAML, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_result_format(r), IMPORT_ENVOY);
    assert_string_equal(import_result_name(r), "cache");
    assert_string_equal(import_result_algorithm(r), "envoy-ring");
    const json_t *p = import_result_params(r);
    assert_int_equal(json_integer_value(json_object_get(p, "min_ring_size")), 2048);
    assert_int_equal(json_integer_value(json_object_get(p, "max_ring_size")), 65536);
    assert_int_equal(json_integer_value(json_object_get(p, "panic_threshold")), 30);
    assert_int_equal(import_node_count(r), 3);
    assert_string_equal(node(r, 0)->name, "10.0.0.1:80");
    assert_true(node(r, 0)->weight == 2);
    assert_string_equal(node(r, 1)->name, "[::1]:8080"); /* canonical IPv6 */
    assert_true(node(r, 1)->down);
    assert_string_equal(node(r, 2)->name, "shard-3");
    assert_string_equal(node(r, 2)->address, "10.0.0.3:80");
    assert_true(has_note(r, -1, "priority 1"));
    import_free(r);
    refused("envoy", "web", ENVOY_YAML, 0, "ROUND_ROBIN");
    /* JSON, MAGLEV, hostnames */
    r = parse("auto", NULL,
              "{\"name\": \"m\", \"lb_policy\": \"MAGLEV\", \"maglev_lb_config\": "
              "{\"table_size\": \"251\"}, \"common_lb_config\": "
              "{\"consistent_hashing_lb_config\": {\"use_hostname_for_hashing\": true}},"
              "\"load_assignment\": {\"endpoints\": [{\"lb_endpoints\": [{\"endpoint\": "
              "{\"hostname\": \"h1\", \"address\": {\"socket_address\": {\"address\": "
              "\"10.0.0.1\", \"port_value\": 80}}}}]}]}}",
              NULL, NULL);
    assert_non_null(r);
    assert_string_equal(import_result_algorithm(r), "maglev");
    assert_int_equal(json_integer_value(json_object_get(import_result_params(r), "table_size")), 251);
    assert_string_equal(node(r, 0)->name, "h1");
    import_free(r);
    refused("envoy", NULL,
            "name: c\nlb_policy: RING_HASH\nring_hash_lb_config: {hash_function: "
            "MURMUR_HASH_2}\nload_assignment: {endpoints: []}\n",
            0, "XX_HASH");
    refused("envoy", NULL, "name: c\nlb_policy: RING_HASH\ntype: EDS\n", 0, "EDS");
    refused("envoy", NULL, "{\"name\": \"c\", \"lb_policy\": ", -1, "JSON error");
}

/* ---- nodetool ring ---- */

static const char *RING =
    "\n"
    "Datacenter: dc1\n"
    "==========\n"
    "Address         Rack        Status State   Load            Owns                Token\n"
    "                                                                               "
    "3074457345618258602\n"
    "127.0.0.1       rack1       Up     Normal  98.53 KiB       33.33%              "
    "-9223372036854775808\n"
    "127.0.0.2       rack1       Down   Normal  101.2 KiB       33.33%              "
    "-3074457345618258603\n"
    "127.0.0.1       rack1       Up     Normal  98.53 KiB       33.33%              "
    "3074457345618258602\n"
    "\n"
    "Datacenter: dc2\n"
    "==========\n"
    "Address         Rack        Status State   Load            Owns                Token\n"
    "                                                                               100\n"
    "127.0.0.3       rack1       Up     Joining ?               ?                   100\n"
    "\n"
    "  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n"
    "  To view status related info of a node use \"nodetool status\" instead.\n";

static void nodetool_ring(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL, RING, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_result_format(r), IMPORT_NODETOOL);
    assert_string_equal(import_result_algorithm(r), "cassandra");
    assert_int_equal(import_node_count(r), 3);
    assert_string_equal(node(r, 0)->name, "127.0.0.1");
    assert_int_equal(node(r, 0)->ntokens, 2);
    assert_true(node(r, 0)->tokens[0] == INT64_MIN);
    assert_true(node(r, 0)->tokens[1] == 3074457345618258602LL);
    assert_true(node(r, 1)->down);
    assert_false(node(r, 0)->down);
    assert_true(node(r, 2)->tokens[0] == 100);
    assert_true(has_note(r, 14, "Joining"));
    assert_true(has_note(r, 0, "2 datacenters"));
    assert_true(has_note(r, 10, "dc2"));
    import_free(r);
    refused("nodetool-ring", NULL,
            "127.0.0.1 r1 Up Normal 1 KiB ? 5\n127.0.0.2 r1 Up Normal 1 KiB ? 5\n", 2,
            "appears twice");
    refused("nodetool-ring", NULL,
            "127.0.0.1 r1 Up Normal 1 KiB ? 85070591730234615865843651857942052864\n", 1,
            "Murmur3Partitioner");
    refused("nodetool-ring", NULL, "127.0.0.1 r1 Up Sleeping 1 KiB ? 5\n", 1, "state");
}

/* ---- CLUSTER NODES ---- */

static const char *NODES =
    "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave "
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected\n"
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002,h2 master,fail - 0 "
    "1426238316232 2 connected 5461-10922\n"
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 "
    "connected 10923-16383\n"
    "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected\n"
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 "
    "connected 0-5459 5460 [5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]\n";

static void redis_nodes(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL, NODES, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_result_format(r), IMPORT_REDIS);
    assert_string_equal(import_result_algorithm(r), "redis");
    assert_int_equal(import_node_count(r), 3); /* masters only */
    assert_string_equal(node(r, 0)->name, "127.0.0.1:30002");
    assert_true(node(r, 0)->down);
    assert_int_equal(node(r, 0)->nslots, 1);
    assert_int_equal(node(r, 0)->slots[0].first, 5461);
    assert_int_equal(node(r, 0)->slots[0].last, 10922);
    assert_int_equal(node(r, 0)->nreplicas, 1);
    assert_string_equal(node(r, 0)->replicas[0], "127.0.0.1:30005");
    assert_string_equal(node(r, 2)->name, "127.0.0.1:30001");
    assert_int_equal(node(r, 2)->nslots, 2);
    assert_int_equal(node(r, 2)->slots[1].first, 5460);
    assert_string_equal(node(r, 2)->replicas[0], "127.0.0.1:30004");
    assert_int_equal(node(r, 1)->nreplicas, 0);
    assert_true(has_note(r, 0, "migrating"));
    import_free(r);
    refused(
        "redis-nodes", NULL,
        "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:1@2 master - 0 0 1 connected 0-10\n"
        "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:2@3 master - 0 0 2 connected 10-20\n",
        2, "slot 10 is held by two masters");
    refused(
        "redis-nodes", NULL,
        "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:1@2 master - 0 0 1 connected 0-16384\n",
        1, "0..16383");
    refused("redis-nodes", NULL, "67ed2db8 127.0.0.1:1@2 master - 0 0 1 connected\n", 1,
            "not a CLUSTER NODES line");
    r = parse(
        "redis-nodes", NULL,
        "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:1@2 master - 0 0 1 connected 0-99\n",
        NULL, NULL);
    assert_non_null(r);
    assert_true(has_note(r, 0, "16284 of 16384 slots"));
    import_free(r);
}

/* ---- limits and recognition ---- */

static void limits(void **s)
{
    (void)s;
    import_result *r = NULL;
    int line;
    rs_error err = {0};
    /* NUL byte on line 2 */
    const char nul[] = "upstream u {\n hash $k\0 consistent; server a:1; }\n";
    assert_int_equal(import_parse(nul, sizeof nul - 1, IMPORT_NGINX, NULL, &r, &line, &err),
                     RINGSIM_EPARAM);
    assert_int_equal(line, 2);
    assert_non_null(strstr(err.msg, "NUL"));
    /* invalid UTF-8 on line 3 */
    const char *bad = "a:1,\nb:2,\nc\xff:3\n";
    assert_int_equal(import_parse(bad, strlen(bad), IMPORT_AUTO, NULL, &r, &line, &err),
                     RINGSIM_EPARAM);
    assert_int_equal(line, 3);
    assert_non_null(strstr(err.msg, "UTF-8"));
    /* a line of more than 1 MiB */
    size_t n = IMPORT_MAX_LINE + 10;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'a', n);
    big[n] = '\0';
    assert_int_equal(import_parse(big, n, IMPORT_LIBMEMCACHED, NULL, &r, &line, &err),
                     RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "1 MiB"));
    free(big);
    /* more than 16 MiB (short lines) */
    n = IMPORT_MAX_TEXT + 1;
    big = malloc(n);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (i % 64 == 63) ? '\n' : 'x';
    assert_int_equal(import_parse(big, n, IMPORT_NGINX, NULL, &r, &line, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "16 MiB"));
    free(big);
    /* 100,000 servers */
    n = 100000 * 24 + 64;
    big = malloc(n);
    assert_non_null(big);
    size_t u = (size_t)snprintf(big, n, "upstream u {\nhash $k consistent;\n");
    for (int i = 0; i < 100000; i++)
        u += (size_t)snprintf(big + u, n - u, "server 10.%d.%d.1:80;\n", i / 256, i % 256);
    u += (size_t)snprintf(big + u, n - u, "}\n");
    assert_int_equal(import_parse(big, u, IMPORT_AUTO, NULL, &r, &line, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "at most 10000"));
    assert_int_equal(line, 2 + (int)IMPORT_MAX_NODES + 1);
    free(big);
    assert_null(r);
    /* an empty text, and one that is nothing */
    assert_int_equal(import_parse("", 0, IMPORT_AUTO, NULL, &r, &line, &err), RINGSIM_EPARAM);
    assert_int_equal(import_parse("{;", 2, IMPORT_AUTO, NULL, &r, &line, &err), RINGSIM_EPARAM);
    import_format f;
    assert_int_equal(import_format_parse("nginx.conf", &f, &err), RINGSIM_EPARAM);
    assert_non_null(strstr(err.msg, "redis-nodes"));
}

/* Texts that end where the buffer ends (no NUL after them): found by the
 * fuzzers reading past the end with atoi / strspn. */
static void unterminated(void **s)
{
    (void)s;
    const char *texts[][2] = {{"libmemcached", "--SERVER=host1:11212/?3"},
                              {"libmemcached", "--SOCKET=/tmp/s/?7"},
                              {"redis-nodes", "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 "
                                              "127.0.0.1:1@2 master - 0 0 1 connected 0-9\n  "}};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        size_t n = strlen(texts[i][1]);
        char *b = malloc(n);
        assert_non_null(b);
        memcpy(b, texts[i][1], n);
        import_format f;
        rs_error err = {0};
        assert_int_equal(import_format_parse(texts[i][0], &f, &err), 0);
        import_result *r = NULL;
        int line;
        assert_int_equal(import_parse(b, n, f, NULL, &r, &line, &err), 0);
        assert_int_equal(import_node_count(r), 1);
        if (i == 0)
            assert_true(node(r, 0)->weight == 3);
        if (i == 1)
            assert_true(node(r, 0)->weight == 7);
        import_free(r);
        free(b);
    }
}

static void json_shape(void **s)
{
    (void)s;
    import_result *r = parse("auto", NULL, NODES, NULL, NULL);
    assert_non_null(r);
    json_t *j = import_result_json(r);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "format")), "redis-nodes");
    json_t *n0 = json_array_get(json_object_get(j, "nodes"), 0);
    assert_string_equal(json_string_value(json_object_get(n0, "state")), "down");
    assert_int_equal(json_array_size(json_object_get(n0, "slots")), 1);
    assert_true(json_array_size(json_object_get(j, "notes")) >= 1);
    json_decref(j);
    import_free(r);
    r = parse("auto", NULL, RING, NULL, NULL);
    j = import_result_json(r);
    json_t *t = json_object_get(json_array_get(json_object_get(j, "nodes"), 0), "tokens");
    assert_string_equal(json_string_value(json_array_get(t, 0)), "-9223372036854775808");
    json_decref(j);
    import_free(r);
}

/* ---- issue 26: parsers that stay linear, YAML that stays bounded ---- */

/* Parse g's text; the CPU seconds it took in *secs.  want_nodes: the
 * nodes expected (0: a refusal whose message holds `refusal`). */
static void run_paste(const char *what, gen *g, import_format f, const char *name,
                      size_t want_nodes, const char *refusal, double bound)
{
    import_result *r = NULL;
    int line = -1;
    rs_error err = {0};
    double t0 = cpu_now();
    int rc = import_parse(g->s, g->n, f, name, &r, &line, &err);
    double took = cpu_now() - t0;
    printf("  measured [linear] %s: %zu bytes, %.3f s CPU\n", what, g->n, took);
    if (want_nodes > 0) {
        if (rc != 0)
            fail_msg("%s: refused at line %d: %s", what, line, err.msg);
        assert_int_equal(import_node_count(r), want_nodes);
    } else {
        assert_int_equal(rc, RINGSIM_EPARAM);
        if (strstr(err.msg, refusal) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", what, err.msg, refusal);
    }
    import_free(r);
    /* Sanitizers make every parse many times slower: the bound is checked
     * on a plain build, where the quadratic parsers took 10 s and more. */
    if (!SANITIZED && took > bound)
        fail_msg("%s took %.2f s of CPU; a linear parse takes well under %.1f s", what, took, bound);
}

/* 16 MiB worst cases of every format, each within the limits (or refused
 * by one): before issue 26 the ones marked took 10 s to hours. */
static void linear_pastes(void **s)
{
    (void)s;
    gen g;
    gen_init(&g, IMPORT_MAX_TEXT);
    /* nodetool ring: 10,000 addresses, each token found its node by a scan
     * of all of them (22 s) */
    ring_head(&g, INT64_MAX);
    for (long i = 0;; i++) {
        char addr[32];
        snprintf(addr, sizeof addr, "10.0.%ld.%ld", (i % 10000) / 256, (i % 10000) % 256);
        if (!ring_line(&g, addr, (long long)(INT64_MIN + 1000 + i * 1000)))
            break;
    }
    run_paste("nodetool ring, 10,000 nodes, 16 MiB of tokens", &g, IMPORT_NODETOOL, NULL, 10000,
              NULL, 2.0);
    /* CLUSTER NODES: 10,000 masters, then replicas of the last one, which
     * each found its master by a scan */
    g.n = 0;
    for (int i = 0; i < 10000; i++)
        gen_add(&g, "%040x 10.0.%d.%d:7000@17000 master - 0 0 1 connected %d%s\n", i, i / 256,
                i % 256, i, i == 9999 ? "-16383" : "");
    for (int i = 0; gen_add(&g, "%040x 10.1.%d.%d:%d@17000 slave %040x 0 0 1 connected\n",
                            20000 + i, (i / 256) % 256, i % 256, 7000 + i / 65536, 9999);
         i++)
        ;
    run_paste("CLUSTER NODES, 10,000 masters, 16 MiB of replicas", &g, IMPORT_REDIS, NULL, 10000,
              NULL, 2.0);
    /* HAProxy: backends of 10,000 servers with ids, each id compared with
     * every earlier one (19 s) */
    g.n = 0;
    for (long i = 0;; i++) {
        if (i % 10000 == 0 &&
            !gen_add(&g, "backend b%ld\n  balance uri\n  hash-type consistent\n", i / 10000))
            break;
        if (!gen_add(&g, "  server s%ld 10.0.0.1:80 id %ld\n", i % 10000, i % 10000 + 1))
            break;
    }
    run_paste("HAProxy, 16 MiB of servers with ids", &g, IMPORT_HAPROXY, "b0", 10000, NULL, 2.0);
    /* HAProxy: 10,000 backends, each name compared with every other */
    g.n = 0;
    for (int i = 0; i < 10000; i++)
        gen_add(&g, "backend b%d\n  hash-type consistent\n  balance uri\n  server s 10.0.0.1:80\n",
                i);
    run_paste("HAProxy, 10,000 backends", &g, IMPORT_HAPROXY, "b9999", 1, NULL, 0.5);
    /* nginx: 10,000 upstreams, half in http and their twins in stream */
    g.n = 0;
    for (int k = 0; k < 2; k++) {
        gen_add(&g, "%s {\n", k ? "stream" : "http");
        for (int i = 0; i < 5000; i++)
            gen_add(&g, "upstream u%d { hash $k consistent; server 10.0.%d.%d:80; }\n", i, i / 256,
                    i % 256);
        gen_add(&g, "}\n");
    }
    run_paste("nginx, 10,000 upstreams", &g, IMPORT_NGINX, "stream:u4999", 1, NULL, 0.5);
    /* nginx: 16 MiB of one-letter words in directives of 100 (each word
     * was a malloc and each directive 100 reallocs: 2.3 s, 456 MB) */
    g.n = 0;
    gen_add(&g, "upstream u { hash $k consistent;\n server 10.0.0.1:80;\n");
    for (int i = 0; gen_add(&g, "%s", i % 100 == 99 ? "a;\n" : "a "); i++)
        ;
    g.n -= 2; /* room for the end of the block */
    gen_add(&g, ";}");
    run_paste("nginx, 16 MiB of one-letter words", &g, IMPORT_NGINX, NULL, 1, NULL, 3.0);
    /* nutcracker: 100,000 pools, each name compared with every other */
    g.n = 0;
    for (int i = 0; i < 100000; i++)
        gen_add(&g, "p%d: {}\n", i);
    gen_add(&g, "last:\n  listen: 127.0.0.1:22121\n  servers:\n  - 10.0.0.1:11211:1\n");
    run_paste("nutcracker, 100,000 pools", &g, IMPORT_TWEMPROXY, "last", 1, NULL, 1.0);
    /* ... and 16 MiB of them: past the values a YAML text may hold */
    g.n = 0;
    for (int i = 0; gen_add(&g, "p%d: {}\n", i); i++)
        ;
    run_paste("nutcracker, 16 MiB of pools", &g, IMPORT_TWEMPROXY, NULL, 0, "1000000 values", 4.0);
    /* Envoy YAML: 400,000 anchors, each checked against all before it by
     * libyaml's loader, and their aliases */
    g.n = 0;
    gen_add(&g, "name: c\nlb_policy: MAGLEV\nload_assignment: {endpoints: [{lb_endpoints: "
                "[{endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}}]}]}"
                "\nx:\n");
    for (int i = 0; i < 400000; i++)
        gen_add(&g, "- &a%d x\n- *a%d\n", i, i);
    run_paste("Envoy YAML, 400,000 anchors", &g, IMPORT_ENVOY, NULL, 1, NULL, 3.0);
    /* Envoy JSON, 10,000 hosts, then spaces to 16 MiB */
    g.n = 0;
    gen_add(&g, "{\"name\": \"c\", \"lb_policy\": \"RING_HASH\", \"load_assignment\": "
                "{\"endpoints\": [{\"lb_endpoints\": [");
    for (int i = 0; i < 10000; i++)
        gen_add(&g,
                "%s{\"endpoint\": {\"address\": {\"socket_address\": {\"address\": "
                "\"10.0.%d.%d\", \"port_value\": 80}}}}\n",
                i ? "," : "", i / 256, i % 256);
    gen_add(&g, "]}]}}");
    while (gen_add(&g, "%1000s\n", ""))
        ;
    run_paste("Envoy JSON, 10,000 hosts", &g, IMPORT_ENVOY, NULL, 10000, NULL, 2.0);
    /* Envoy JSON of 8 million values: held to YAML's count before jansson
     * reads it (1.8 s and 350 MB in jansson) */
    g.n = 0;
    gen_add(&g, "{\"x\": [");
    for (int i = 0; gen_add(&g, "%s", i % 500 == 499 ? "1,\n" : "1,"); i++)
        ;
    g.n -= 4;
    gen_add(&g, "1]}");
    run_paste("Envoy JSON, 8 million values", &g, IMPORT_ENVOY, NULL, 0, "more than 1000000 values",
              0.5);
    /* libmemcached: 10,000 servers in a list */
    g.n = 0;
    for (int i = 0; i < 10000; i++)
        gen_add(&g, "%s10.0.%d.%d:11211:2", i ? ",\n" : "", i / 256, i % 256);
    run_paste("libmemcached, 10,000 servers", &g, IMPORT_LIBMEMCACHED, NULL, 10000, NULL, 1.0);
    gen_free(&g);
}

/* Issue 26 item 6: libyaml's scanner pays the depth of flow nesting for
 * every token; the loader stops at the 65th level, so 100,000 nested `[`
 * (39 s before) and `{a: ` cost nothing, in Envoy and nutcracker texts. */
static void yaml_deep(void **s)
{
    (void)s;
    gen g;
    gen_init(&g, IMPORT_MAX_TEXT);
    const char *opens[] = {"[", "{a: ", "- "};
    for (size_t k = 0; k < 3; k++) {
        for (int f = 0; f < 2; f++) {
            g.n = 0;
            gen_add(&g, "a:\n  ");
            for (int i = 0; i < 100000; i++)
                gen_add(&g, "%s", opens[k]);
            gen_add(&g, "x\n");
            char what[80];
            snprintf(what, sizeof what, "100,000 nested \"%s\" (%s)", opens[k],
                     f ? "nutcracker" : "Envoy");
            run_paste(what, &g, f ? IMPORT_TWEMPROXY : IMPORT_ENVOY, NULL, 0,
                      "nested more than 64 deep", 0.5);
        }
    }
    /* 64 levels are read; the 65th is refused, with its line */
    const char *at64 =
        "name: c\nlb_policy: MAGLEV\nload_assignment: {}\n"
        "x: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]"
        "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n";
    refused("envoy", NULL, at64, 0, "declares no server");
    char at65[400];
    snprintf(at65, sizeof at65, "%.*s[%s]\n", (int)(strchr(at64, '1') - at64), at64,
             strchr(at64, '1'));
    refused("envoy", NULL, at65, 4, "nested more than 64 deep");
    /* lines starting with '%' (libyaml checks each %TAG against all before) */
    g.n = 0;
    for (int i = 0; gen_add(&g, "%%TAG !a%d! tag:example.com,2000:\n", i); i++)
        ;
    run_paste("16 MiB of %TAG directives", &g, IMPORT_ENVOY, NULL, 0, "YAML directives", 0.5);
    gen_free(&g);
}

/* Issue 26 item 2: a "billion laughs" in 469 bytes.  Each alias shares its
 * anchor's node; what the aliases would repeat is counted, and the alias
 * that crosses the line is named.  (Seven levels took 34 s and 2.5 GB.) */
static const char *BOMB =
    "name: c\nlb_policy: MAGLEV\n"
    "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";

static void yaml_aliases(void **s)
{
    (void)s;
    gen g;
    gen_init(&g, IMPORT_MAX_TEXT);
    gen_add(&g, "%s", BOMB);
    run_paste("a YAML alias bomb of nine levels", &g, IMPORT_ENVOY, NULL, 0,
              "YAML alias *f repeats", 0.1);
    refused("envoy", NULL, BOMB, 9, "(an alias bomb)");
    refused("twemproxy", NULL, BOMB, 9, "YAML alias *f repeats 597871 values");
    /* bytes count too: one scalar of 1 MiB repeated 100 times */
    g.n = 0;
    gen_add(&g, "name: c\nlb_policy: MAGLEV\nbig: &big ");
    for (int i = 0; i < 1000; i++)
        gen_add(&g, "%01000d", i);
    gen_add(&g, "\nx: [");
    for (int i = 0; i < 100; i++)
        gen_add(&g, "*big, ");
    gen_add(&g, "]\n");
    run_paste("a 1 MB scalar repeated 100 times", &g, IMPORT_ENVOY, NULL, 0, "bytes of text", 0.5);
    gen_free(&g);
    /* an alias inside its own anchor, an unknown one, an anchor twice, and
     * an alias that brings its depth where it stands */
    refused("envoy", NULL, "name: c\nlb_policy: MAGLEV\nx: &a [1, [*a]]\n", 3,
            "stands inside its own anchor");
    refused("envoy", NULL, "name: c\nlb_policy: MAGLEV\n\nx: *b\n", 4, "undefined alias *b");
    refused("twemproxy", NULL, "a: &x 1\nb: &x 2\n", 2, "duplicate anchor &x");
    char deep[600];
    snprintf(deep, sizeof deep, "name: c\nlb_policy: MAGLEV\nx: &d %.*s1%.*s\ny: [[*d]]\n", 62,
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 62,
             "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
    refused("envoy", NULL, deep, 4, "YAML alias *d nests the text more than 64 deep");
    /* Anchors that a real configuration shares are read as written: the
     * same host keys and weights through an alias as inline. */
    import_result *r = parse(
        "envoy", NULL,
        "static_resources:\n"
        "  clusters:\n"
        "  - name: c\n"
        "    lb_policy: RING_HASH\n"
        "    ring_hash_lb_config: &ring {minimum_ring_size: 4096}\n"
        "    load_assignment:\n"
        "      endpoints:\n"
        "      - lb_endpoints:\n"
        "        - &h1 {endpoint: {address: {socket_address: {address: 10.0.0.1, "
        "port_value: 80}}}, load_balancing_weight: 3}\n"
        "        - endpoint: {address: {socket_address: {address: 10.0.0.2, port_value: 80}}}\n"
        "  - name: d\n"
        "    lb_policy: MAGLEV\n"
        "    ring_hash_lb_config: *ring\n"
        "    load_assignment: {endpoints: [{lb_endpoints: [*h1]}]}\n",
        NULL, NULL);
    assert_null(r); /* two clusters hash: choose one */
    r = parse(
        "envoy", "d",
        "clusters:\n"
        "- name: c\n"
        "  lb_policy: RING_HASH\n"
        "  load_assignment:\n"
        "    endpoints:\n"
        "    - lb_endpoints:\n"
        "      - &h1 {endpoint: {address: {socket_address: {address: 10.0.0.1, "
        "port_value: 80}}}, load_balancing_weight: 3}\n"
        "- name: d\n"
        "  lb_policy: MAGLEV\n"
        "  load_assignment: {endpoints: [{lb_endpoints: [*h1, *h1x]}]}\n"
        "x: &h1x {endpoint: {address: {socket_address: {address: 10.0.0.2, port_value: 81}}}}\n",
        NULL, NULL);
    assert_null(r); /* *h1x before its anchor: undefined, as libyaml says */
    r = parse("envoy", "d",
              "clusters:\n"
              "- name: c\n"
              "  lb_policy: RING_HASH\n"
              "  load_assignment:\n"
              "    endpoints:\n"
              "    - lb_endpoints:\n"
              "      - &h1 {endpoint: {address: {socket_address: {address: 10.0.0.1, "
              "port_value: 80}}}, load_balancing_weight: 3}\n"
              "      - &h2 {endpoint: {address: {socket_address: {address: 10.0.0.2, "
              "port_value: 81}}}}\n"
              "- name: d\n"
              "  lb_policy: MAGLEV\n"
              "  load_assignment: {endpoints: [{lb_endpoints: [*h2, *h1]}]}\n",
              NULL, NULL);
    assert_non_null(r);
    assert_string_equal(import_result_algorithm(r), "maglev");
    assert_int_equal(import_node_count(r), 2);
    assert_string_equal(node(r, 0)->name, "10.0.0.2:81");
    assert_true(node(r, 0)->weight == 1);
    assert_string_equal(node(r, 1)->name, "10.0.0.1:80");
    assert_true(node(r, 1)->weight == 3);
    import_free(r);
    /* nutcracker: servers through an alias keep their lines */
    r = parse("twemproxy", "b",
              "a:\n  listen: 127.0.0.1:1\n  servers: &s\n  - 10.0.0.1:11211:1\n"
              "  - 10.0.0.2:11212:2 two\nb:\n  listen: 127.0.0.1:2\n  servers: *s\n",
              NULL, NULL);
    assert_non_null(r);
    assert_int_equal(import_node_count(r), 2);
    assert_string_equal(node(r, 1)->name, "two");
    assert_int_equal(node(r, 1)->line, 5);
    import_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nginx_upstream),
        cmocka_unit_test(nginx_refusals),
        cmocka_unit_test(nginx_plain_hash),
        cmocka_unit_test(haproxy_backend),
        cmocka_unit_test(haproxy_default_server_once),
        cmocka_unit_test(haproxy_refusals),
        cmocka_unit_test(libmemcached_list),
        cmocka_unit_test(libmemcached_list_quirks),
        cmocka_unit_test(libmemcached_string),
        cmocka_unit_test(twemproxy_pool),
        cmocka_unit_test(twemproxy_refusals),
        cmocka_unit_test(envoy_cluster),
        cmocka_unit_test(nodetool_ring),
        cmocka_unit_test(redis_nodes),
        cmocka_unit_test(limits),
        cmocka_unit_test(unterminated),
        cmocka_unit_test(json_shape),
        cmocka_unit_test(linear_pastes),
        cmocka_unit_test(yaml_deep),
        cmocka_unit_test(yaml_aliases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
