/*
 * http_gate.c - the checks of http_gate.h, in the order http_check makes
 * them: Host and Origin (DNS rebinding, cross-site mutations), the target,
 * the token, the route and the body a head announces.  Each refusal is
 * decided from the head alone, so it never waits for an upload.
 */
#define _GNU_SOURCE
#include "http_gate.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if HTTP_MAX_BODY != API_MAX_BODY || HTTP_MAX_LARGE_BODY != API_MAX_IMPORT_BODY ||                 \
    HTTP_MAX_SPOOL_BODY != API_MAX_TRACE_BODY
#error "the parser's body limits are the API's"
#endif

/* The words of a body limit in a refusal. */
static const char *limit_words(size_t limit)
{
    return limit == API_MAX_BODY           ? "16 MiB"
           : limit == API_MAX_IGNORED_BODY ? "64 KiB on a route that takes no body (it is ignored)"
           : limit == API_MAX_TRACE_BODY   ? "1 GiB for a request log"
                                           : "32 MiB for a pasted text";
}

/* The API's method for the parser's. */
static api_method api_method_of(http_method m)
{
    switch (m) {
    case HTTP_GET:
        return API_GET;
    case HTTP_HEAD:
        return API_HEAD;
    case HTTP_POST:
        return API_POST;
    case HTTP_PUT:
        return API_PUT;
    case HTTP_DELETE:
        return API_DELETE;
    case HTTP_PATCH:
        return API_PATCH;
    default:
        return API_OTHER;
    }
}

/* A percent-encoding that does not decode is, in the API's words, a name
 * (a path segment) or a parameter (the query) that is not valid: its 400
 * carries that code, not the transport's. */
static int as_code(int rc, int code, rs_error *err)
{
    if (rc != RINGSIM_EBADREQUEST)
        return rc;
    err->code = code;
    return code;
}

/* ---- the target ---- */

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
            return as_code(rc, RINGSIM_ENAME, err); /* a name the path cannot hold */
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
                return as_code(rc, RINGSIM_EPARAM, err);
            if ((rc = http_pct_decode(eq ? eq + 1 : e, eq ? (size_t)(e - eq - 1) : 0, true,
                                      &pp->value, &pp->len, err))) {
                free(pp->name);
                pp->name = NULL;
                return as_code(rc, RINGSIM_EPARAM, err);
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
            if (!http_is_tchar((unsigned char)name[i]) && !strchr("[]:", name[i]))
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
    if (h->method != HTTP_GET && h->method != HTTP_HEAD)
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
    bool mutating = h->method != HTTP_GET && h->method != HTTP_HEAD;
    return mutating && ((h->sec_fetch_site && strcasecmp(h->sec_fetch_site, "cross-site") == 0) ||
                        (h->origin && strcmp(h->origin, "null") == 0));
}

/* The types a page may send cross-site without a preflight (the Fetch
 * standard's CORS-safelisted request header values), or none. */
static bool simple_type(const char *ct)
{
    static const char *const t[] = {"text/plain", "multipart/form-data",
                                    "application/x-www-form-urlencoded"};
    if (!ct || !*ct)
        return true;
    while (*ct == ' ')
        ct++;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n = strlen(t[i]);
        if (!strncasecmp(ct, t[i], n) && (ct[n] == 0 || ct[n] == ';' || ct[n] == ' '))
            return true;
    }
    return false;
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
    r->method = api_method_of(h->method);
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
                     (long long)h->content_length, limit_words(out->body_limit));
    /* A change that takes no body (DELETE, POST …/reset) still accepts a
     * small one that is JSON (API_MAX_IGNORED_BODY), and ignores it:
     * clients that always send `{}` keep working.  Reads and the loop's
     * own routes (cancel, events) take none. */
    if (!rc && h->has_body && !takes_body && out->where != API_WORKER)
        rc = rs_fail(err, RINGSIM_ETOOBIG, "%s %.200s takes no body; send it without one",
                     h->method_name, h->target);
    /* A body must be labelled JSON: no cross-site "simple request" (a form,
     * a text/plain fetch) can send that without the browser asking first. */
    /* A request log is raw bytes: any type but those a cross-site form or
     * "simple request" can send without the browser asking first. */
    if (!rc && h->has_body && api_spools(r)) {
        if (simple_type(h->content_type))
            rc = rs_fail(err, RINGSIM_EPARAM,
                         "send the log with Content-Type: application/octet-stream");
    } else if (!rc && h->has_body && !http_is_json(h->content_type)) {
        rc = rs_fail(err, RINGSIM_EJSON, "send the body as JSON with Content-Type: application/json");
    }
    if (rc)
        http_request_clear(out);
    return rc;
}

int http_attach_body(api_request *r, const char *body, size_t blen, rs_error *err)
{
    size_t limit = api_body_limit(r);
    if (blen > limit)
        return rs_fail(err, RINGSIM_ETOOBIG, "request body is %zu bytes; the limit is %s", blen,
                       limit_words(limit));
    json_error_t je;
    r->body = json_loadb(body, blen, JSON_ALLOW_NUL, &je);
    if (r->body)
        return 0;
    /* Well-formed JSON whose value the parser cannot hold: a string with a
     * lone surrogate (\ud800) is no UTF-8 text, which names and keys must
     * be; a number past a double's range is a parameter out of range. */
    if (json_error_code(&je) == json_error_invalid_syntax && strstr(je.text, "invalid Unicode"))
        return rs_fail(err, RINGSIM_ENAME,
                       "a string holds %.60s: a lone surrogate is no character (names and keys "
                       "are UTF-8 text)",
                       je.text);
    if (json_error_code(&je) == json_error_numeric_overflow)
        return rs_fail(err, RINGSIM_EPARAM, "a number is out of range: %.100s (line %d)", je.text,
                       je.line);
    return rs_fail(err, RINGSIM_EJSON, "body is not valid JSON: %.100s (line %d)", je.text, je.line);
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
