/*
 * http_parse.c - request heads, chunked bodies, targets and the request
 * checks of http_parse.h.
 *
 * The head is parsed in place: one pass finds the lines, NULs end the pieces,
 * and the fields are kept as pointers, so a head costs no allocation and time
 * linear in its length (at most HTTP_MAX_HEAD).  Rules follow RFC 9112 where
 * they protect the server and the API: a bare LF ends a line, obsolete line
 * folding and whitespace before a field's colon are refused, a request with
 * both Content-Length and Transfer-Encoding (the smuggling pair) or with two
 * Content-Lengths is refused, HTTP/1.1 needs exactly one Host.  Only the
 * bytes of this file decide what a request is; http.c moves bytes.
 */
#define _GNU_SOURCE
#include "http_parse.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- characters (ASCII only, whatever the locale) ---- */

static bool is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static int hexval(unsigned char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* A control byte that may not stand in a field value (HTAB may). */
static bool is_ctl(unsigned char ch) { return (ch < 0x20 && ch != '\t') || ch == 0x7f; }

static bool name_is(const http_field *f, const char *name)
{
    return f->name_len == strlen(name) && strcasecmp(f->name, name) == 0;
}

/* Whether a comma-separated field value holds token t (no case). */
static bool has_token(const char *v, const char *t)
{
    size_t tl = strlen(t);
    while (*v) {
        while (*v == ' ' || *v == '\t' || *v == ',')
            v++;
        size_t n = strcspn(v, ",");
        size_t k = n;
        while (k && (v[k - 1] == ' ' || v[k - 1] == '\t'))
            k--;
        if (k == tl && strncasecmp(v, t, tl) == 0)
            return true;
        v += n;
    }
    return false;
}

/* ---- the head ---- */

size_t http_head_end(const char *buf, size_t len, size_t from)
{
    size_t start = 0;
    while (start < len && (buf[start] == '\r' || buf[start] == '\n'))
        start++; /* empty lines before a request are ignored (RFC 9112 2.2) */
    size_t i = from > 2 ? from - 2 : 0;
    if (i < start)
        i = start;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        if (!nl)
            return 0;
        i = (size_t)(nl - buf);
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
        i++;
    }
    return 0;
}

static api_method method_of(const char *m)
{
    static const struct {
        const char *name;
        api_method m;
    } t[] = {{"GET", API_GET}, {"HEAD", API_HEAD},     {"POST", API_POST},
             {"PUT", API_PUT}, {"DELETE", API_DELETE}, {"PATCH", API_PATCH}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(m, t[i].name) == 0) /* methods are case-sensitive */
            return t[i].m;
    return API_OTHER;
}

static int bad(rs_error *err, const char *what)
{
    return rs_fail(err, RINGSIM_EBADREQUEST, "malformed HTTP request: %s", what);
}

/* An absolute-form target (what a client talking to a proxy sends): keep
 * its authority apart as the Host and its path as the target.  0 when the
 * target is not absolute or was taken apart, -1 when it is malformed. */
static int absolute_form(http_head *h)
{
    const char *t = h->target;
    size_t skip = strncasecmp(t, "http://", 7) == 0    ? 7
                  : strncasecmp(t, "https://", 8) == 0 ? 8
                                                       : 0;
    if (!skip)
        return 0;
    const char *auth = t + skip;
    size_t n = strcspn(auth, "/?#");
    if (n == 0 || n >= sizeof h->abs_host || memchr(auth, '@', n))
        return -1; /* no host, too long, or userinfo (RFC 9110 4.2.4) */
    memcpy(h->abs_host, auth, n);
    h->abs_host[n] = '\0';
    const char *path = auth + n;
    if (*path == '/') {
        h->target = path;
        h->target_len -= (size_t)(path - t);
    } else { /* "http://host" or "http://host?q": the path is "/" */
        h->target = *path ? path - 1 : "/";
        h->target_len = *path ? h->target_len - (size_t)(path - t) + 1 : 1;
        if (*path) /* the byte before the query is the host's last: make it '/' */
            ((char *)path)[-1] = '/';
    }
    return 0;
}

/* The request line "METHOD SP TARGET SP HTTP/1.x", NUL-terminated. */
static int request_line(char *line, size_t ll, http_head *h, rs_error *err)
{
    size_t m = 0;
    while (m < ll && is_tchar((unsigned char)line[m]))
        m++;
    if (m == 0 || m >= ll || line[m] != ' ')
        return bad(err, "the first line must be METHOD TARGET HTTP/1.1");
    line[m] = '\0';
    h->method_name = line;
    h->method = method_of(line);
    char *t = line + m + 1;
    size_t rest = ll - m - 1;
    char *sp = memchr(t, ' ', rest);
    if (!sp || sp == t)
        return bad(err, "the first line must be METHOD TARGET HTTP/1.1");
    h->target_len = (size_t)(sp - t);
    if (h->target_len > HTTP_MAX_TARGET)
        return rs_fail(err, RINGSIM_EURI, "the request target is %zu bytes; the limit is %d",
                       h->target_len, HTTP_MAX_TARGET);
    for (size_t i = 0; i < h->target_len; i++)
        if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
            return bad(err, "the target must be ASCII without spaces or control bytes "
                            "(percent-encode the rest)");
    *sp = '\0';
    h->target = t;
    if (absolute_form(h) < 0)
        return bad(err, "an absolute target must be http://HOST[:PORT]/PATH");
    const char *v = sp + 1;
    size_t vl = ll - (size_t)(v - line);
    if (vl != 8 || memcmp(v, "HTTP/1.", 7) != 0 || (v[7] != '0' && v[7] != '1'))
        return bad(err, "this server speaks HTTP/1.0 and HTTP/1.1");
    h->minor = v[7] - '0';
    return 0;
}

/* One field line "name: value" (NUL-terminated, no line end). */
static int field_line(char *p, size_t fl, http_head *h, rs_error *err)
{
    if (p[0] == ' ' || p[0] == '\t')
        return bad(err, "folded header lines are not accepted");
    if (h->nfields == HTTP_MAX_FIELDS)
        return rs_fail(err, RINGSIM_EHEADERS, "more than %d header fields", HTTP_MAX_FIELDS);
    size_t n = 0;
    while (n < fl && is_tchar((unsigned char)p[n]))
        n++;
    if (n == 0 || n >= fl || p[n] != ':')
        return bad(err, "a header field must be NAME: VALUE");
    size_t vs = n + 1, ve = fl;
    while (vs < ve && (p[vs] == ' ' || p[vs] == '\t'))
        vs++;
    while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
        ve--;
    for (size_t i = vs; i < ve; i++)
        if (is_ctl((unsigned char)p[i]))
            return bad(err, "a header field holds a control byte");
    p[n] = '\0';
    p[ve] = '\0';
    http_field *f = &h->field[h->nfields++];
    f->name = p;
    f->name_len = n;
    f->value = p + vs;
    f->value_len = ve - vs;
    return 0;
}

/* What the fields say about the request and its framing. */
static int interpret(http_head *h, rs_error *err)
{
    static const struct {
        const char *name;
        size_t off;
    } once[] = {{"host", offsetof(http_head, host)},
                {"origin", offsetof(http_head, origin)},
                {"content-type", offsetof(http_head, content_type)},
                {"authorization", offsetof(http_head, authorization)},
                {"sec-fetch-site", offsetof(http_head, sec_fetch_site)}};
    bool close = false, keep = false, te = false;
    for (int i = 0; i < h->nfields; i++) {
        const http_field *f = &h->field[i];
        bool known = false;
        for (size_t k = 0; k < sizeof once / sizeof once[0]; k++)
            if (name_is(f, once[k].name)) {
                const char **slot = (const char **)((char *)h + once[k].off);
                if (*slot)
                    return rs_fail(err, RINGSIM_EBADREQUEST,
                                   "malformed HTTP request: more than one %s field", f->name);
                *slot = f->value;
                known = true;
            }
        if (known)
            continue;
        if (name_is(f, "content-length")) {
            uint64_t v;
            if (h->content_length >= 0)
                return bad(err, "more than one Content-Length");
            if (f->value_len && strspn(f->value, "0123456789") == f->value_len &&
                api_parse_u64(f->value, f->value_len, INT64_MAX, &v))
                v = INT64_MAX; /* digits past 2^63: too large, not malformed */
            else if (api_parse_u64(f->value, f->value_len, INT64_MAX, &v))
                return bad(err, "Content-Length must be a number of bytes");
            h->content_length = (int64_t)v;
        } else if (name_is(f, "transfer-encoding")) {
            if (te || strcasecmp(f->value, "chunked") != 0)
                return bad(err, "the only Transfer-Encoding understood is chunked");
            te = h->chunked = true;
        } else if (name_is(f, "connection")) {
            close |= has_token(f->value, "close");
            keep |= has_token(f->value, "keep-alive");
        } else if (name_is(f, "expect")) {
            h->expect_continue |= strcasecmp(f->value, "100-continue") == 0;
        } else if (name_is(f, "last-event-id") && !h->last_event_id) {
            h->last_event_id = f->value;
        }
    }
    if (h->chunked && h->content_length >= 0)
        return bad(err, "both Content-Length and Transfer-Encoding");
    if (h->chunked && h->minor == 0)
        return bad(err, "chunked bodies need HTTP/1.1");
    if (h->minor == 1 && !h->host)
        return bad(err, "an HTTP/1.1 request must carry Host");
    if (h->abs_host[0]) /* the target's authority stands in for Host */
        h->host = h->abs_host;
    h->keep_alive = h->minor == 1 ? !close : keep && !close;
    h->has_body = h->chunked || h->content_length > 0;
    /* The largest any route takes; http_check holds each to its own. */
    if (h->content_length > (int64_t)API_MAX_IMPORT_BODY)
        return rs_fail(err, RINGSIM_ETOOBIG,
                       "request body is %lld bytes; the limit is 16 MiB (32 MiB for a pasted "
                       "text)",
                       (long long)h->content_length);
    return 0;
}

int http_parse_head(char *buf, size_t len, http_head *h, rs_error *err)
{
    memset(h, 0, sizeof *h);
    h->content_length = -1;
    if (len > HTTP_MAX_HEAD)
        return rs_fail(err, RINGSIM_EHEADERS, "the request head is over %d bytes", HTTP_MAX_HEAD);
    size_t i = 0;
    while (i < len && (buf[i] == '\r' || buf[i] == '\n'))
        i++;
    bool first = true;
    while (i < len) {
        char *p = buf + i;
        char *nl = memchr(p, '\n', len - i);
        if (!nl)
            break;
        size_t fl = (size_t)(nl - p);
        i += fl + 1;
        if (fl && p[fl - 1] == '\r')
            fl--;
        for (size_t k = 0; k < fl; k++) /* a CR or NUL inside a line */
            if (p[k] == '\r' || p[k] == '\0')
                return bad(err, "a line holds a CR or NUL byte");
        p[fl] = '\0';
        int rc;
        if (first) {
            rc = request_line(p, fl, h, err);
            first = false;
        } else if (fl == 0) {
            return interpret(h, err);
        } else {
            rc = field_line(p, fl, h, err);
        }
        if (rc)
            return rc;
    }
    return bad(err, "the head does not end with an empty line");
}

/* ---- chunked bodies ---- */

enum { CK_SIZE, CK_EXT, CK_SIZE_LF, CK_DATA, CK_DATA_END, CK_DATA_LF, CK_TRAILER, CK_TRAILER_LF };

#define CK_MAX_LINE 1024    /* a size line with its extensions */
#define CK_MAX_TRAILER 8192 /* all trailer fields */

ssize_t http_chunked_feed(http_chunked *c, const char *in, size_t len, const char **data,
                          size_t *dlen, rs_error *err)
{
    *data = NULL;
    *dlen = 0;
    size_t i = 0;
    while (i < len && !c->done) {
        unsigned char ch = (unsigned char)in[i];
        bool end_size = false;
        switch (c->state) {
        case CK_DATA: {
            size_t n = len - i;
            if (n > c->left)
                n = (size_t)c->left;
            *data = in + i;
            *dlen = n;
            c->left -= n;
            if (!c->left)
                c->state = CK_DATA_END;
            return (ssize_t)(i + n); /* one run per call */
        }
        case CK_SIZE: {
            int d = hexval(ch);
            if (d >= 0) {
                if (c->left >> 56)
                    return rs_fail(err, RINGSIM_ETOOBIG, "a chunk is over the 16 MiB limit");
                c->left = c->left * 16 + (unsigned)d;
                c->digits = true;
            } else if (c->digits && (ch == ';' || ch == ' ' || ch == '\t')) {
                c->state = CK_EXT;
            } else if (c->digits && ch == '\r') {
                c->state = CK_SIZE_LF;
            } else if (c->digits && ch == '\n') {
                end_size = true;
            } else {
                return bad(err, "a chunk must start with its size in hex");
            }
            break;
        }
        case CK_EXT:
            if (ch == '\r')
                c->state = CK_SIZE_LF;
            else if (ch == '\n')
                end_size = true;
            else if (is_ctl(ch))
                return bad(err, "a chunk extension holds a control byte");
            break;
        case CK_SIZE_LF:
            if (ch != '\n')
                return bad(err, "a chunk size line must end with CRLF");
            end_size = true;
            break;
        case CK_DATA_END:
            if (ch == '\r')
                c->state = CK_DATA_LF;
            else if (ch == '\n')
                c->state = CK_SIZE;
            else
                return bad(err, "chunk data must end with CRLF");
            break;
        case CK_DATA_LF:
            if (ch != '\n')
                return bad(err, "chunk data must end with CRLF");
            c->state = CK_SIZE;
            break;
        case CK_TRAILER:
            if (ch == '\n' && c->line == 0) {
                c->done = true;
            } else if (ch == '\n') {
                c->line = 0;
            } else if (ch == '\r') {
                c->state = CK_TRAILER_LF;
            } else if (is_ctl(ch)) {
                return bad(err, "a trailer field holds a control byte");
            } else {
                c->line++;
                if (++c->trailer > CK_MAX_TRAILER)
                    return rs_fail(err, RINGSIM_EHEADERS, "trailer fields over %d bytes",
                                   CK_MAX_TRAILER);
            }
            break;
        case CK_TRAILER_LF:
            if (ch != '\n')
                return bad(err, "a trailer line must end with CRLF");
            if (c->line == 0)
                c->done = true;
            c->line = 0;
            c->state = CK_TRAILER;
            break;
        default:
            return bad(err, "chunked decoder state");
        }
        i++;
        if (c->state == CK_SIZE || c->state == CK_EXT || c->state == CK_SIZE_LF) {
            if (++c->line > CK_MAX_LINE)
                return bad(err, "a chunk size line is too long");
        }
        if (end_size) {
            uint64_t limit = c->limit ? c->limit : API_MAX_BODY;
            if (c->left > limit - c->total)
                return rs_fail(err, RINGSIM_ETOOBIG,
                               "request body is over %llu bytes; the limit is %s",
                               (unsigned long long)limit,
                               limit == API_MAX_BODY ? "16 MiB" : "32 MiB for a pasted text");
            c->total += c->left;
            c->line = 0;
            c->digits = false;
            c->state = c->left ? CK_DATA : CK_TRAILER;
        }
    }
    return (ssize_t)i;
}

/* ---- targets ---- */

int http_pct_decode(const char *s, size_t n, bool plus, char **out, size_t *out_len, rs_error *err)
{
    char *d = malloc(n + 1);
    if (!d)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
            int lo = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                free(d);
                return rs_fail(err, RINGSIM_EBADREQUEST,
                               "malformed percent-encoding: %% must be followed by two hex "
                               "digits (%%25 is a %%)");
            }
            d[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            d[o++] = plus && s[i] == '+' ? ' ' : s[i];
        }
    }
    d[o] = '\0';
    *out = d;
    *out_len = o;
    return 0;
}

int http_parse_target(const char *target, size_t len, api_request *r, rs_error *err)
{
    if (len < 4 || memcmp(target, "/api", 4) != 0)
        return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
    const char *end = target + len;
    const char *q = memchr(target, '?', len);
    const char *frag = memchr(target, '#', len);
    if (frag && q && frag < q)
        q = NULL; /* a '?' inside the fragment */
    const char *pend = q ? q : frag ? frag : end;
    const char *p = target + 4;
    if (p < pend && *p != '/')
        return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
    if (p < pend)
        p++; /* the slash after /api */
    int rc;
    while (p < pend) {
        const char *slash = memchr(p, '/', (size_t)(pend - p));
        const char *e = slash ? slash : pend;
        if (r->nseg == API_MAX_SEGS)
            return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
        if ((rc = http_pct_decode(p, (size_t)(e - p), false, &r->seg[r->nseg], &r->seglen[r->nseg],
                                  err)))
            return rc;
        r->nseg++;
        p = slash ? slash + 1 : pend;
        if (slash && p == pend) { /* a trailing slash: an empty last segment */
            if (r->nseg == API_MAX_SEGS)
                return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
            if ((rc = http_pct_decode("", 0, false, &r->seg[r->nseg], &r->seglen[r->nseg], err)))
                return rc;
            r->nseg++;
        }
    }
    if (!q)
        return 0;
    const char *s = q + 1, *qend = frag && frag > q ? frag : end;
    size_t most = 1;
    for (const char *x = s; x < qend; x++)
        most += *x == '&';
    r->params = calloc(most, sizeof *r->params);
    if (!r->params)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    while (s < qend) {
        const char *amp = memchr(s, '&', (size_t)(qend - s));
        const char *e = amp ? amp : qend;
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (e > s) {
            api_param *pp = &r->params[r->nparams];
            size_t nl;
            if ((rc = http_pct_decode(s, (size_t)((eq ? eq : e) - s), true, &pp->name, &nl, err)))
                return rc;
            if ((rc = http_pct_decode(eq ? eq + 1 : e, eq ? (size_t)(e - eq - 1) : 0, true,
                                      &pp->value, &pp->len, err))) {
                free(pp->name);
                pp->name = NULL;
                return rc;
            }
            r->nparams++;
        }
        s = amp ? amp + 1 : qend;
    }
    return 0;
}

/* ---- checks ---- */

bool http_host_ok(const http_conf *c, const char *h)
{
    if (!h)
        return true; /* HTTP/1.0 without Host: nothing to rebind */
    char name[256];
    const char *end;
    if (h[0] == '[') {
        end = strchr(h, ']');
        if (!end)
            return false;
        end++;
    } else {
        end = strchr(h, ':');
        if (!end)
            end = h + strlen(h);
    }
    size_t n = (size_t)(end - h);
    if (n == 0 || n >= sizeof name)
        return false;
    memcpy(name, h, n);
    name[n] = '\0';
    if (*end == ':') {
        uint64_t port;
        if (api_parse_u64(end + 1, strlen(end + 1), 65535, &port))
            return false;
        if (!c->open_host && port != (uint64_t)c->port)
            return false;
    } else if (*end) {
        return false;
    }
    if (c->open_host) { /* any name a client may know this machine by */
        for (size_t i = 0; i < n; i++)
            if (!is_tchar((unsigned char)name[i]) && !strchr("[]:", name[i]))
                return false;
        return true;
    }
    if (!strcasecmp(name, "localhost") || (c->host && !strcasecmp(name, c->host)))
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, name, &a4) == 1)
        return true;
    if (name[0] == '[' && n > 2) {
        name[n - 1] = '\0';
        return inet_pton(AF_INET6, name + 1, &a6) == 1;
    }
    return false;
}

bool http_origin_ok(const http_conf *c, const char *origin, const char *host)
{
    if (!origin)
        return true;
    if (strncmp(origin, "http://", 7) != 0 || !http_host_ok(c, origin + 7))
        return false;
    /* Beyond loopback any Host passes, so the page must come from the very
     * address the request is sent to. */
    return !c->open_host || (host && strcasecmp(origin + 7, host) == 0);
}

bool http_is_json(const char *ct)
{
    static const char t[] = "application/json";
    size_t tl = sizeof t - 1;
    return ct && strncasecmp(ct, t, tl) == 0 &&
           (ct[tl] == '\0' || ct[tl] == ';' || ct[tl] == ' ' || ct[tl] == '\t');
}

bool http_secret_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    volatile unsigned char d = alen != blen;
    size_t n = alen > blen ? alen : blen;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < alen ? (unsigned char)a[i] : 0;
        unsigned char y = i < blen ? (unsigned char)b[i] : 0;
        d |= x ^ y;
    }
    return d == 0;
}

static bool token_ok(const http_conf *c, const http_head *h, const api_request *r)
{
    if (!c->token)
        return true;
    bool ok = false;
    const char *a = h->authorization;
    if (a && strncasecmp(a, "Bearer ", 7) == 0) {
        a += 7;
        while (*a == ' ')
            a++;
        ok |= http_secret_equal(a, strlen(a), c->token, c->token_len);
    }
    for (int i = 0; i < r->nparams; i++)
        if (strcmp(r->params[i].name, "token") == 0)
            ok |= http_secret_equal(r->params[i].value, r->params[i].len, c->token, c->token_len);
    return ok;
}

static bool is_api(const char *t, size_t n)
{
    return n >= 4 && memcmp(t, "/api", 4) == 0 &&
           (n == 4 || t[4] == '/' || t[4] == '?' || t[4] == '#');
}

/* A file of the page: GET or HEAD, a decoded path that stays inside. */
static int prepare_file(const http_head *h, http_request *out, rs_error *err)
{
    if (h->method != API_GET && h->method != API_HEAD)
        return rs_fail(err, RINGSIM_EMETHOD, "only GET and HEAD serve files");
    size_t plen = strcspn(h->target, "?#"), len;
    char *path;
    rs_error ignored;
    if (http_pct_decode(h->target, plen, false, &path, &len, &ignored))
        return rs_fail(err, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
    if (strlen(path) != len || path[0] != '/' || strstr(path, "..")) {
        free(path);
        return rs_fail(err, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
    }
    if (strcmp(path, "/") == 0) {
        free(path);
        path = strdup("/index.html");
        if (!path)
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    out->kind = HTTP_TO_FILE;
    out->path = path;
    return 0;
}

/* A mutation that a browser says comes from another site, or whose Origin
 * is "null" (a sandboxed frame, a file: page, a redirect): refused even
 * where the Origin check would let it through. */
static bool cross_site(const http_head *h)
{
    bool mutating = h->method != API_GET && h->method != API_HEAD;
    return mutating && ((h->sec_fetch_site && strcasecmp(h->sec_fetch_site, "cross-site") == 0) ||
                        (h->origin && strcmp(h->origin, "null") == 0));
}

int http_check(const http_conf *c, const http_head *h, http_request *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    if (!http_host_ok(c, h->host) || !http_origin_ok(c, h->origin, h->host) || cross_site(h))
        return rs_fail(err, RINGSIM_EFORBIDDEN, "this server answers only to its own address");
    if (!is_api(h->target, h->target_len)) {
        int rc = prepare_file(h, out, err);
        if (!rc && h->has_body)
            rc = rs_fail(err, RINGSIM_ETOOBIG, "a request for a file takes no body");
        if (rc)
            http_request_clear(out);
        return rc;
    }
    out->kind = HTTP_TO_API;
    api_request *r = &out->api;
    r->method = h->method;
    bool takes_body = false;
    int rc = http_parse_target(h->target, h->target_len, r, err);
    if (!rc && !token_ok(c, h, r))
        rc = rs_fail(err, RINGSIM_EUNAUTHORIZED,
                     "this server needs its access token: open the address that `ringsim "
                     "serve` printed (it ends in ?token=...), or send Authorization: Bearer "
                     "TOKEN");
    if (!rc)
        rc = api_route(r, &out->where, &takes_body, err);
    out->body_limit = api_body_limit(r);
    if (!rc && h->content_length > (int64_t)out->body_limit)
        rc = rs_fail(err, RINGSIM_ETOOBIG, "request body is %lld bytes; the limit is %s",
                     (long long)h->content_length,
                     out->body_limit == API_MAX_BODY ? "16 MiB" : "32 MiB for a pasted text");
    if (!rc && h->has_body && !takes_body)
        rc = rs_fail(err, RINGSIM_ETOOBIG, "%s %.200s takes no body; send it without one",
                     h->method_name, h->target);
    /* A body must be labelled JSON: no cross-site "simple request" (a form,
     * a text/plain fetch) can send that without the browser asking first. */
    if (!rc && h->has_body && !http_is_json(h->content_type))
        rc = rs_fail(err, RINGSIM_EJSON, "send the body as JSON with Content-Type: application/json");
    if (rc)
        http_request_clear(out);
    return rc;
}

int http_attach_body(api_request *r, const char *body, size_t blen, rs_error *err)
{
    size_t limit = api_body_limit(r);
    if (blen > limit)
        return rs_fail(err, RINGSIM_ETOOBIG, "request body is %zu bytes; the limit is %s", blen,
                       limit == API_MAX_BODY ? "16 MiB" : "32 MiB for a pasted text");
    json_error_t je;
    r->body = json_loadb(body, blen, JSON_ALLOW_NUL, &je);
    if (!r->body)
        return rs_fail(err, RINGSIM_EJSON, "body is not valid JSON: %.100s (line %d)", je.text,
                       je.line);
    return 0;
}

int http_prepare(const http_conf *c, const http_head *h, const char *body, size_t blen,
                 http_request *out, rs_error *err)
{
    int rc = http_check(c, h, out, err);
    if (!rc && blen && out->kind == HTTP_TO_API)
        rc = http_attach_body(&out->api, body, blen, err);
    if (rc)
        http_request_clear(out);
    return rc;
}

void http_request_clear(http_request *r)
{
    api_request_clear(&r->api);
    free(r->path);
    memset(r, 0, sizeof *r);
}
