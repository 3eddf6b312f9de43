/*
 * http_parse.c - request heads, chunked bodies and percent-decoding of
 * http_parse.h: bytes and limits only (what a request may reach, and
 * whether it may, is http_gate.c's).
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

#include "names.h"

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

static http_method method_of(const char *m)
{
    static const struct {
        const char *name;
        http_method m;
    } t[] = {{"GET", HTTP_GET}, {"HEAD", HTTP_HEAD},     {"POST", HTTP_POST},
             {"PUT", HTTP_PUT}, {"DELETE", HTTP_DELETE}, {"PATCH", HTTP_PATCH}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(m, t[i].name) == 0) /* methods are case-sensitive */
            return t[i].m;
    return HTTP_OTHER;
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
                names_parse_u64(f->value, f->value_len, INT64_MAX, &v))
                v = INT64_MAX; /* digits past 2^63: too large, not malformed */
            else if (names_parse_u64(f->value, f->value_len, INT64_MAX, &v))
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
    /* The largest any route takes; the gate holds each to its own. */
    if (h->content_length > (int64_t)HTTP_MAX_SPOOL_BODY)
        return rs_fail(err, RINGSIM_ETOOBIG,
                       "request body is %lld bytes; the limit is 16 MiB (32 MiB for a pasted "
                       "text, 1 GiB for a request log)",
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
            uint64_t limit = c->limit ? c->limit : HTTP_MAX_BODY;
            if (c->left > limit - c->total)
                return rs_fail(err, RINGSIM_ETOOBIG,
                               "request body is over %llu bytes; the limit is %s",
                               (unsigned long long)limit,
                               limit == HTTP_MAX_BODY         ? "16 MiB"
                               : limit == HTTP_MAX_SPOOL_BODY ? "1 GiB for a request log"
                                                              : "32 MiB for a pasted text");
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
            d[o++] = (char)(plus && s[i] == '+' ? ' ' : s[i]);
        }
    }
    d[o] = '\0';
    *out = d;
    *out_len = o;
    return 0;
}

bool http_is_tchar(unsigned char ch) { return is_tchar(ch); }
