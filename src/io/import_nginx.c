/*
 * import_nginx.c - nginx.conf (or part of it): `upstream NAME { hash KEY
 * [consistent]; server ...; }` inside `http`, `stream`, or standing alone.
 * `hash KEY consistent` is ringsim's `nginx`; `hash KEY` alone its modulo
 * variant (params {"consistent": 0}, alg_nginx.h).
 *
 * Reference: nginx 1.22.1 (Debian 12), read for behaviour:
 *   src/core/ngx_conf_file.c     ngx_conf_read_token: words split by space,
 *        tab, CR, LF; ';' ends a directive and '{' opens a block ('{' right
 *        after '$' belongs to a variable, "${name}"); '#' at a word's start
 *        comments to the end of the line; "..." and '...' quote, a
 *        backslash escapes the next character (\t \r \n \" \' \\ are
 *        unescaped); after a closing quote must come a space, ';' or '{'.
 *   src/http/ngx_http_upstream.c ngx_http_upstream_server: the server's
 *        parameters (weight=, max_conns=, max_fails=, fail_timeout=,
 *        backup, down) and their refusals: "invalid parameter "%V"" for an
 *        unknown one or a bad number (weight=0 included), "balancing method
 *        does not support parameter "%V"" when the balancing directive
 *        before it did not allow it.
 *        The parameters are read first, then the address: weight=,
 *        max_fails= and max_conns= as ngx_atoi (digits only, weight not 0),
 *        fail_timeout= as ngx_parse_time in seconds (src/core/ngx_parse.c:
 *        units y M w d h m s in that order, "ms" refused).
 *   src/core/ngx_inet.c          ngx_parse_url for the address: "unix:"
 *        and a path (at most 107 bytes), "[IPv6]" (ngx_inet6_addr) with an
 *        optional ":port", else host[:port] split at the first ':' (so a
 *        bare "::1" has an invalid port); a port is 1..65535 in digits, a
 *        '/' or '?' is a URI, which a server may not have ("invalid
 *        host"); refused as "%s in upstream "%V"".  The stream module also
 *        wants a port ("no port in upstream").  Names go to DNS at start
 *        (noted: ringsim cannot know the answer).
 *   src/http/modules/ngx_http_upstream_hash_module.c ngx_http_upstream_hash:
 *        `hash` sets the upstream's flags without BACKUP, so a `backup`
 *        server after `hash` is refused; one before it was accepted and
 *        stays out of the consistent-hash points (only primary peers are
 *        put on the ring).  A second balancing directive warns "load
 *        balancing method redefined" and the last one wins.
 * The stream module (ngx_stream_upstream*.c) is the same for these.
 *
 * Node names are the `server` address exactly as written (alg_nginx.h): it
 * is the text nginx hashes.  `down` is the node state.
 *
 * Cost: one pass over the text; the directives inside upstream blocks are
 * kept until one upstream is chosen.  Upstream names are found in a hashed
 * set (import_int.h), so 10,000 upstreams stay linear.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import_int.h"
#include "vec.h"

#define NGX_MAX_ARGS 256 /* words in one directive (nginx has no fixed cap) */
#define NGX_MAX_DEPTH 64 /* nested blocks */

typedef struct word {
    char *s;
    size_t len;
} word;

typedef struct directive {
    word *w;
    size_t n;
    int line;
} directive;

typedef struct upstream {
    char *name;
    char *key; /* "context\0name": what makes it unique */
    bool twin; /* another upstream (in another context) has this name */
    int line;
    const char *context; /* "http", "stream" or "" (standing alone) */
    directive *d;
    size_t nd, capd;
    /* the last balancing directive: "hash", "hash consistent", "least_conn"... */
    const char *method;
    int method_line;
} upstream;

typedef struct lexer {
    import_ctx *c;
    const char *t;
    size_t len, pos;
    int line;
} lexer;

/* A directive's words live in one block with them (pack): one free. */
static void words_free(word *w, size_t n)
{
    (void)n;
    free(w);
}

/* Unescape [s, s+len) as nginx does for a quoted or escaped word, into o
 * (len + 1 bytes); its length. */
static size_t unescape(const char *s, size_t len, char *o)
{
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len) {
            char n = s[i + 1];
            if (n == '"' || n == '\'' || n == '\\') {
                o[j++] = n;
                i++;
                continue;
            }
            if (n == 't' || n == 'r' || n == 'n') {
                o[j++] = (char)(n == 't' ? '\t' : n == 'r' ? '\r' : '\n');
                i++;
                continue;
            }
        }
        o[j++] = s[i];
    }
    o[j] = '\0';
    return j;
}

/* The n words whose bytes are at offsets off[] of bytes, as one block:
 * the word array, then the bytes (a 16 MiB paste of one-letter words in
 * an upstream was 8 million mallocs and 450 MB).  NULL when out of memory. */
static word *pack(const size_t *off, const size_t *len, size_t n, const char *bytes, size_t nb)
{
    word *w = malloc(n * sizeof *w + nb);
    if (w == NULL)
        return NULL;
    char *b = (char *)(w + n);
    memcpy(b, bytes, nb);
    for (size_t i = 0; i < n; i++)
        w[i] = (word){b + off[i], len[i]};
    return w;
}

/* Read one directive: *end is ';', '{', '}' (a block's end, no words) or 0
 * at the end of the text (no words).  Words are malloc'd into *w, in one
 * block (words_free). */
static int read_directive(lexer *x, word **w, size_t *n, int *line, char *end)
{
    size_t *off = NULL, *len = NULL; /* each word's place in bytes, and length */
    char *bytes = NULL;
    size_t nv = 0, capv = 0, nb = 0, capb = 0;
    *w = NULL;
    *n = 0;
    *end = 0;
    int rc = 0;
    for (;;) {
        /* skip space and comments */
        while (x->pos < x->len) {
            char ch = x->t[x->pos];
            if (ch == '\n') {
                x->line++;
                x->pos++;
            } else if (ch == ' ' || ch == '\t' || ch == '\r') {
                x->pos++;
            } else if (ch == '#') {
                while (x->pos < x->len && x->t[x->pos] != '\n')
                    x->pos++;
            } else {
                break;
            }
        }
        if (x->pos >= x->len) {
            if (nv > 0) {
                rc = import__fail(x->c, x->line, "unexpected end of file, expecting \";\" or \"}\"");
                goto fail;
            }
            return 0;
        }
        char ch = x->t[x->pos];
        if (ch == ';' || ch == '{') {
            if (nv == 0) {
                rc = import__fail(x->c, x->line, "unexpected \"%c\"", ch);
                goto fail;
            }
            if ((*w = pack(off, len, nv, bytes, nb)) == NULL)
                goto nomem;
            x->pos++;
            *end = ch;
            *n = nv;
            goto fail; /* rc 0: free the parts */
        }
        if (ch == '}') {
            if (nv > 0) {
                rc = import__fail(x->c, x->line, "unexpected \"}\"");
                goto fail;
            }
            x->pos++;
            *end = '}';
            *line = x->line;
            return 0;
        }
        if (nv == NGX_MAX_ARGS) {
            rc = import__fail(x->c, x->line, "a directive with more than %d parameters",
                              NGX_MAX_ARGS);
            goto fail;
        }
        if (nv == 0)
            *line = x->line;
        size_t start = x->pos, stop;
        if (ch == '"' || ch == '\'') {
            x->pos++;
            start = x->pos;
            while (x->pos < x->len && x->t[x->pos] != ch) {
                if (x->t[x->pos] == '\\' && x->pos + 1 < x->len)
                    x->pos++;
                if (x->t[x->pos] == '\n')
                    x->line++;
                x->pos++;
            }
            if (x->pos >= x->len) {
                rc = import__fail(x->c, x->line, "unexpected end of file, expecting \";\" or \"}\"");
                goto fail;
            }
            stop = x->pos++;
            if (x->pos < x->len) {
                char a = x->t[x->pos];
                if (a != ' ' && a != '\t' && a != '\r' && a != '\n' && a != ';' && a != '{') {
                    rc = import__fail(x->c, x->line, "unexpected \"%c\"", a);
                    goto fail;
                }
            }
        } else {
            while (x->pos < x->len) {
                char a = x->t[x->pos];
                if (a == '\\' && x->pos + 1 < x->len && x->t[x->pos + 1] != '\n') {
                    x->pos += 2;
                    continue;
                }
                if (a == ' ' || a == '\t' || a == '\r' || a == '\n' || a == ';')
                    break;
                if (a == '{' && !(x->pos > start && x->t[x->pos - 1] == '$'))
                    break;
                x->pos++;
            }
            stop = x->pos;
        }
        size_t cap = capv;
        if (vec_reserve(&off, &cap, nv + 1, sizeof *off, 4) ||
            vec_reserve(&len, &capv, nv + 1, sizeof *len, 4) ||
            vec_reserve(&bytes, &capb, nb + (stop - start) + 1, 1, 256))
            goto nomem;
        off[nv] = nb;
        len[nv] = unescape(x->t + start, stop - start, bytes + nb);
        nb += len[nv] + 1;
        nv++;
    }
nomem:
    rc = rs_fail(x->c->err, RINGSIM_ENOMEM, "out of memory while importing");
fail:
    free(off);
    free(len);
    free(bytes);
    return rc;
}

static bool is(const word *w, const char *s)
{
    return w->len == strlen(s) && memcmp(w->s, s, w->len) == 0;
}

static bool prefix(const word *w, const char *p, const char **rest, size_t *rlen)
{
    size_t pl = strlen(p);
    if (w->len < pl || memcmp(w->s, p, pl) != 0)
        return false;
    *rest = w->s + pl;
    *rlen = w->len - pl;
    return true;
}

/* ngx_atoi: decimal digits only, at least one, up to the largest ngx_int_t
 * (64 bits here); -1 otherwise. */
static int64_t ngx_int(const char *s, size_t len)
{
    if (len == 0)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    return v;
}

/* ngx_parse_time in seconds (fail_timeout=): digits with the units y M w d
 * h m s, each unit at most once and in that order, spaces after a unit; a
 * bare number is seconds; "ms" is refused.  Whether it parses. */
static bool ngx_seconds(const char *s, size_t len)
{
    /* the units in their order, with their scale in seconds */
    static const struct {
        char unit;
        int64_t scale;
    } units[] = {{'y', 365 * 86400}, {'M', 30 * 86400}, {'w', 7 * 86400}, {'d', 86400},
                 {'h', 3600},        {'m', 60},         {'s', 1},         {' ', 1}};
    int64_t value = 0, total = 0;
    int step = -1; /* the index of the last unit met */
    bool digits = false;
    size_t i = 0;
    while (i < len) {
        char ch = s[i++];
        if (ch >= '0' && ch <= '9') {
            int d = ch - '0';
            if (value > (INT64_MAX - d) / 10)
                return false;
            value = value * 10 + d;
            digits = true;
            continue;
        }
        if (ch == 'm' && i < len && s[i] == 's')
            return false; /* milliseconds, where seconds are wanted */
        int u = -1;
        for (int k = 0; k < (int)(sizeof units / sizeof *units); k++)
            if (units[k].unit == ch)
                u = k;
        /* a unit after a smaller one; ' ' ends the value unless after 's' */
        if (u < 0 || u <= step || (ch == ' ' && step >= 6))
            return false;
        step = u;
        if (value > INT64_MAX / units[u].scale)
            return false;
        value *= units[u].scale;
        if (total > INT64_MAX - value)
            return false;
        total += value;
        value = 0;
        while (i < len && s[i] == ' ')
            i++;
    }
    return digits && total <= INT64_MAX - value;
}

/* ngx_inet6_addr: whether [s, s+len) is an IPv6 address as nginx reads it
 * (hex groups of up to four digits, one "::", a dotted IPv4 tail). */
static bool ngx_ipv6(const char *s, size_t len)
{
    if (len == 0)
        return false;
    int groups = 8, nibbles = 0;
    bool zero = false, v4 = false;
    size_t last_group = 0; /* where the group being read starts */
    size_t i = 0;
    if (s[0] == ':')
        i++;
    for (; i < len; i++) {
        char ch = s[i];
        if (ch == ':') {
            if (nibbles) {
                last_group = i + 1;
                nibbles = 0;
                if (--groups)
                    continue;
                return false;
            }
            if (!zero) {
                zero = true;
                last_group = i + 1;
                continue;
            }
            return false;
        }
        if (ch == '.' && nibbles) {
            /* the rest, from the group's start, is a dotted IPv4 address
             * taking two groups */
            if (groups < 2)
                return false;
            size_t k = last_group, dots = 0;
            unsigned octet = 0;
            for (; k < len; k++) {
                if (s[k] == '.') {
                    dots++;
                    octet = 0;
                } else if (s[k] >= '0' && s[k] <= '9') {
                    octet = octet * 10 + (unsigned)(s[k] - '0');
                    if (octet > 255)
                        return false;
                } else {
                    return false;
                }
            }
            if (dots != 3 || last_group == 0)
                return false;
            groups--;
            v4 = true;
            break;
        }
        if (++nibbles > 4)
            return false;
        char lc = (char)(ch | 0x20);
        if (!((ch >= '0' && ch <= '9') || (lc >= 'a' && lc <= 'f')))
            return false;
    }
    if (!v4 && nibbles == 0 && !zero)
        return false;
    groups--;
    return zero ? groups > 0 : groups == 0;
}

/* ngx_parse_url for an upstream's server (no URI part, no listen): NULL
 * when nginx takes the address, else its complaint ("invalid port",
 * "invalid host", ...).  stream: the stream module, which wants a port. */
static const char *ngx_server_url(const char *s, size_t len, bool stream)
{
    if (len >= 5 && strncasecmp(s, "unix:", 5) == 0) {
        if (len == 5)
            return "no path in the unix domain socket";
        if (len - 5 + 1 > 108) /* sizeof sun_path */
            return "too long path in the unix domain socket";
        return NULL;
    }
    const char *end = s + len;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s + 1, ']', len - 1);
        if (close == NULL || memchr(close + 1, '/', (size_t)(end - close - 1)))
            return "invalid host";
        const char *port = close + 1;
        bool has_port = port < end;
        if (has_port) {
            if (*port != ':')
                return "invalid host";
            int64_t n = ngx_int(port + 1, (size_t)(end - port - 1));
            if (n < 1 || n > 65535)
                return "invalid port";
        }
        if (close == s + 1)
            return "no host";
        if (!ngx_ipv6(s + 1, (size_t)(close - s - 1)))
            return "invalid IPv6 address";
        return stream && !has_port ? "no port" : NULL;
    }
    /* a '/' or '?' anywhere: a URI, which a server may not have */
    if (memchr(s, '/', len) || memchr(s, '?', len))
        return "invalid host";
    const char *colon = memchr(s, ':', len);
    if (colon != NULL) {
        int64_t n = ngx_int(colon + 1, (size_t)(end - colon - 1));
        if (n < 1 || n > 65535)
            return "invalid port";
        end = colon;
    }
    if (end == s)
        return "no host";
    return stream && colon == NULL ? "no port" : NULL;
}

static const char *const balancers[] = {"hash",       "ip_hash", "least_conn", "random",
                                        "least_time", "sticky",  "ntlm"};

static void upstreams_free(upstream *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < u[i].nd; j++)
            words_free(u[i].d[j].w, u[i].d[j].n);
        free(u[i].d);
        free(u[i].name);
        free(u[i].key);
    }
    free(u);
}

/* The servers of the chosen upstream, in order. */
static int read_upstream(import_ctx *c, const upstream *u)
{
    bool hash_seen = false;
    int rc;
    for (size_t i = 0; i < u->nd; i++) {
        const directive *d = &u->d[i];
        const word *w = d->w;
        if (is(&w[0], "hash")) {
            if (hash_seen)
                import__note(c, d->line, "load balancing method redefined (nginx warns)");
            hash_seen = true;
            continue;
        }
        if (!is(&w[0], "server")) {
            bool bal = false;
            for (size_t b = 0; b < sizeof balancers / sizeof *balancers; b++)
                bal |= is(&w[0], balancers[b]);
            if (bal)
                continue; /* already refused or overridden (pass one) */
            if (is(&w[0], "include"))
                rc = import__note(c, d->line,
                                  "include %.100s: not followed; servers in that file are "
                                  "not imported",
                                  d->n > 1 ? w[1].s : "");
            else
                rc = import__note(c, d->line, "%.60s: placement does not depend on it", w[0].s);
            if (rc != 0)
                return rc;
            continue;
        }
        if (d->n < 2)
            return import__fail(c, d->line,
                                "invalid number of arguments in \"server\" "
                                "directive");
        int64_t weight = 1;
        bool down = false, backup = false;
        for (size_t k = 2; k < d->n; k++) {
            const char *v;
            size_t vl;
            int64_t num;
            if (prefix(&w[k], "weight=", &v, &vl)) {
                num = ngx_int(v, vl);
                if (num <= 0)
                    return import__fail(c, d->line, "invalid parameter \"%.80s\"", w[k].s);
                if (num > INT32_MAX) /* nginx takes it; ringsim's weights stop here */
                    return import__fail(c, d->line,
                                        "%.80s: ringsim takes weights up to %d (nginx's "
                                        "consistent hash gives a server 160 points per unit "
                                        "of weight)",
                                        w[k].s, INT32_MAX);
                weight = num;
            } else if (prefix(&w[k], "max_fails=", &v, &vl) || prefix(&w[k], "max_conns=", &v, &vl)) {
                if (ngx_int(v, vl) < 0)
                    return import__fail(c, d->line, "invalid parameter \"%.80s\"", w[k].s);
                if ((rc = import__note(c, d->line, "%.80s: placement does not depend on it",
                                       w[k].s)) != 0)
                    return rc;
            } else if (prefix(&w[k], "fail_timeout=", &v, &vl)) {
                if (!ngx_seconds(v, vl))
                    return import__fail(c, d->line, "invalid parameter \"%.80s\"", w[k].s);
                if ((rc = import__note(c, d->line, "%.80s: placement does not depend on it",
                                       w[k].s)) != 0)
                    return rc;
            } else if (is(&w[k], "down")) {
                down = true;
            } else if (is(&w[k], "backup")) {
                if (hash_seen)
                    return import__fail(c, d->line,
                                        "balancing method does not support parameter "
                                        "\"backup\"");
                backup = true;
            } else {
                return import__fail(c, d->line, "invalid parameter \"%.80s\"", w[k].s);
            }
        }
        /* The address, after the parameters (nginx reads them first). */
        const char *bad = ngx_server_url(w[1].s, w[1].len, strcmp(u->context, "stream") == 0);
        if (bad != NULL)
            return import__fail(c, d->line, "%s in upstream \"%.100s\"", bad, w[1].s);
        if (backup) {
            /* Accepted before `hash`, and left off the ring. */
            rc = import__note(c, d->line,
                              "server %.100s is a backup: nginx puts only primary servers on "
                              "the hash ring, so it never takes a key; not imported",
                              w[1].s);
            if (rc != 0)
                return rc;
            continue;
        }
        import_node_rec *n = import__node(c, w[1].s, w[1].len, d->line, &rc);
        if (n == NULL)
            return rc;
        n->v.weight = (double)weight;
        n->v.down = down;
        /* A name (not an address) is resolved when nginx starts. */
        const char *s = w[1].s;
        bool name = strncasecmp(s, "unix:", 5) != 0 && s[0] != '[' &&
                    strspn(s, "0123456789.:") != w[1].len;
        if (name && (rc = import__note(c, d->line,
                                       "%.100s is resolved by DNS when nginx starts; nginx "
                                       "hashes the name as written (as ringsim does), and a "
                                       "name with several addresses shares its points "
                                       "among them",
                                       s)) != 0)
            return rc;
    }
    return 0;
}

int import__nginx(import_ctx *c)
{
    lexer x = {c, c->text, c->len, 0, 1};
    upstream *ups = NULL;
    size_t nups = 0, capups = 0;
    const char *stack[NGX_MAX_DEPTH];
    int upi[NGX_MAX_DEPTH]; /* index of the upstream a level opened, or -1 */
    size_t depth = 0;
    int rc = 0;
    /* "context\0name" of each upstream (tag: index), and each name alone
     * (tag: the first upstream of that name) */
    import_set seen = {0}, names = {0};
    size_t found;
    for (;;) {
        word *w;
        size_t n;
        int line = x.line;
        char end;
        if ((rc = read_directive(&x, &w, &n, &line, &end)) != 0)
            goto out;
        if (end == 0) {
            if (depth > 0)
                rc = import__fail(c, x.line, "unexpected end of file, expecting \"}\"");
            break;
        }
        if (end == '}') {
            if (depth == 0) {
                rc = import__fail(c, line, "unexpected \"}\"");
                goto out;
            }
            depth--;
            continue;
        }
        int in_up = depth > 0 ? upi[depth - 1] : -1;
        if (end == '{') {
            if (depth == NGX_MAX_DEPTH) {
                words_free(w, n);
                rc = import__fail(c, line, "blocks nested more than %d deep", NGX_MAX_DEPTH);
                goto out;
            }
            int opened = -1;
            if (is(&w[0], "upstream")) {
                const char *ctx = depth == 0 ? "" : stack[depth - 1];
                if (in_up >= 0 ||
                    (depth > 0 && strcmp(ctx, "http") != 0 && strcmp(ctx, "stream") != 0)) {
                    words_free(w, n);
                    rc = import__fail(c, line, "\"upstream\" directive is not allowed here");
                    goto out;
                }
                if (n != 2) {
                    words_free(w, n);
                    rc = import__fail(c, line,
                                      "invalid number of arguments in \"upstream\" directive");
                    goto out;
                }
                /* an upstream is known by its context and name: "http\0u" */
                size_t kl = strlen(ctx) + 1 + w[1].len;
                char *key = malloc(kl + 1);
                if (key != NULL) {
                    memcpy(key, ctx, strlen(ctx) + 1);
                    memcpy(key + strlen(ctx) + 1, w[1].s, w[1].len + 1);
                }
                if (key != NULL && import__set_find(c, &seen, key, kl, 0, &found)) {
                    free(key);
                    rc = import__fail(c, line, "duplicate upstream \"%.80s\"", w[1].s);
                    words_free(w, n);
                    goto out;
                }
                if (nups >= IMPORT_MAX_SECTIONS) {
                    free(key);
                    words_free(w, n);
                    rc = import__fail(c, line, "more than %u upstreams", IMPORT_MAX_SECTIONS);
                    goto out;
                }
                if (key == NULL || vec_reserve(&ups, &capups, nups + 1, sizeof *ups, 8)) {
                    free(key);
                    words_free(w, n);
                    rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
                    goto out;
                }
                memset(&ups[nups], 0, sizeof *ups);
                ups[nups].key = key;
                ups[nups].name = strdup(w[1].s);
                if (ups[nups].name == NULL) {
                    free(key);
                    words_free(w, n);
                    rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
                    goto out;
                }
                int named = import__set_add(c, &names, ups[nups].name, w[1].len, 0, nups, &found);
                if (named == 1) /* the same name in http and stream */
                    ups[found].twin = ups[nups].twin = true;
                if (named < 0 || import__set_add(c, &seen, key, kl, 0, nups, &found) < 0) {
                    nups++;
                    words_free(w, n);
                    rc = RINGSIM_ENOMEM;
                    goto out;
                }
                ups[nups].line = line;
                ups[nups].context = ctx;
                opened = (int)nups++;
            }
            stack[depth] = is(&w[0], "http") ? "http" : is(&w[0], "stream") ? "stream" : "";
            upi[depth] = opened;
            depth++;
            words_free(w, n);
            continue;
        }
        /* a simple directive */
        if (in_up < 0) {
            if (is(&w[0], "include"))
                rc = import__note(c, line, "include %.100s: not followed", n > 1 ? w[1].s : "");
            words_free(w, n);
            if (rc != 0)
                goto out;
            continue;
        }
        upstream *u = &ups[in_up];
        bool bal = false;
        for (size_t b = 0; b < sizeof balancers / sizeof *balancers; b++)
            bal |= is(&w[0], balancers[b]);
        if (bal) {
            if (is(&w[0], "hash")) {
                if (n < 2 || n > 3) {
                    words_free(w, n);
                    rc = import__fail(c, line, "invalid number of arguments in \"hash\" directive");
                    goto out;
                }
                if (n == 3 && !is(&w[2], "consistent")) {
                    rc = import__fail(c, line, "invalid parameter \"%.80s\"", w[2].s);
                    words_free(w, n);
                    goto out;
                }
                u->method = n == 3 ? "hash consistent" : "hash";
            } else {
                u->method = balancers[0]; /* placeholder, replaced below */
                for (size_t b = 1; b < sizeof balancers / sizeof *balancers; b++)
                    if (is(&w[0], balancers[b]))
                        u->method = balancers[b];
            }
            u->method_line = line;
        }
        /* Doubling: a block of 10,000 servers is linear, not quadratic. */
        if (vec_reserve(&u->d, &u->capd, u->nd + 1, sizeof *u->d, 8)) {
            words_free(w, n);
            rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
            goto out;
        }
        u->d[u->nd++] = (directive){w, n, line};
    }
    if (rc != 0)
        goto out;

    /* Choose among the upstreams that hash consistently. */
    {
        const char **names = malloc((nups + 1) * sizeof *names);
        int *lines = malloc((nups + 1) * sizeof *lines);
        size_t *idx = malloc((nups + 1) * sizeof *idx);
        char **labels = calloc(nups + 1, sizeof *labels);
        size_t k = 0, pick = 0;
        if (names == NULL || lines == NULL || idx == NULL || labels == NULL) {
            free(labels);
            free(names);
            free(lines);
            free(idx);
            rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
            goto out;
        }
        for (size_t i = 0; i < nups; i++) {
            /* `hash KEY consistent` (the ring) or `hash KEY` (the modulo
             * variant, nginx's consistent=0): both place by the key. */
            bool chash = ups[i].method != NULL && strncmp(ups[i].method, "hash", 4) == 0;
            if (c->want != NULL && strcmp(ups[i].name, c->want) == 0 && !chash) {
                rc = import__fail(c, ups[i].method_line ? ups[i].method_line : ups[i].line,
                                  "upstream \"%.60s\" balances by %s, not by \"hash KEY\" "
                                  "(consistent or not): ringsim imports hashing only",
                                  ups[i].name, ups[i].method ? ups[i].method : "round robin");
                break;
            }
            if (chash) {
                /* The same name in http and stream: "http:NAME", "stream:NAME". */
                bool twin = ups[i].twin;
                if (twin && labels[i] == NULL &&
                    asprintf(&labels[i], "%s:%s", ups[i].context[0] ? ups[i].context : "main",
                             ups[i].name) < 0)
                    labels[i] = NULL;
                names[k] = labels[i] ? labels[i] : ups[i].name;
                lines[k] = ups[i].line;
                idx[k++] = i;
            }
        }
        if (rc == 0)
            rc = import__choose(c, "upstream", names, lines, k,
                                nups == 0 ? "no upstream block in the text"
                                          : "no upstream in the text balances by \"hash "
                                            "KEY\" or \"hash KEY consistent\"",
                                &pick);
        if (rc == 0) {
            const upstream *u = &ups[idx[pick]];
            rc = import__set_name(c, u->name, strlen(u->name));
            if (rc == 0) {
                strcpy(c->r->algorithm, "nginx");
                const directive *h = NULL;
                for (size_t j = 0; j < u->nd; j++)
                    if (is(&u->d[j].w[0], "hash"))
                        h = &u->d[j];
                if (strcmp(u->method, "hash") == 0) {
                    rc = import__param_int(c, "consistent", 0);
                    if (rc == 0 && h != NULL)
                        rc = import__note(c, h->line,
                                          "hash without consistent: the key's hash modulo the "
                                          "total weight picks the server, so a server that "
                                          "joins or leaves moves most keys");
                }
                if (rc == 0 && h != NULL)
                    rc = import__note(c, h->line,
                                      "nginx hashes the value of %.100s for each request; "
                                      "ringsim places the keys you give it as that value",
                                      h->w[1].s);
                if (rc == 0 && u->context[0] != '\0')
                    rc = import__note(c, u->line, "upstream \"%.60s\" in %s", u->name, u->context);
            }
            if (rc == 0)
                rc = read_upstream(c, u);
        }
        free(names);
        free(lines);
        free(idx);
        for (size_t i = 0; i < nups; i++)
            free(labels[i]);
        free(labels);
    }
out:
    import__set_free(&seen);
    import__set_free(&names);
    upstreams_free(ups, nups);
    return rc;
}
