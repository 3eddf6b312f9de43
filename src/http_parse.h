/*
 * http_parse.h - the request side of HTTP/1.1 as plain functions: the head
 * (request line and header fields), chunked bodies, the request target, and
 * the checks every request passes -- Host, Origin, access token, content
 * type -- before an API handler sees it.
 *
 * Nothing here touches a socket or the event loop: http.c feeds these
 * functions the bytes it reads, and fuzz/fuzz_http.c feeds them libFuzzer's
 * bytes, so the parser that is fuzzed is the parser that serves.  Every
 * input is bounded (the head by HTTP_MAX_HEAD, the target by
 * HTTP_MAX_TARGET, the number of fields by HTTP_MAX_FIELDS, a body by
 * API_MAX_BODY) and every refusal is a RINGSIM_E code that becomes the
 * API's error object.
 */
#ifndef RINGSIM_HTTP_PARSE_H
#define RINGSIM_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "api.h"

#define HTTP_MAX_HEAD (32 * 1024)  /* request line and fields: 431 beyond */
#define HTTP_MAX_TARGET (8 * 1024) /* request target: 414 beyond */
#define HTTP_MAX_FIELDS 100        /* header fields: 431 beyond */
#define HTTP_MAX_TOKEN 256         /* access token bytes */

typedef struct http_field {
    const char *name, *value; /* NUL-terminated, inside the parsed buffer */
    size_t name_len, value_len;
} http_field;

typedef struct http_head {
    api_method method;
    const char *method_name; /* as sent ("GET", "PROPFIND") */
    const char *target;      /* as sent, not decoded */
    size_t target_len;
    int minor; /* HTTP/1.minor: 0 or 1 */
    http_field field[HTTP_MAX_FIELDS];
    int nfields;
    /* What the fields say (NULL: absent); names are matched without case. */
    const char *host, *origin, *content_type, *authorization, *last_event_id;
    const char *sec_fetch_site; /* Sec-Fetch-Site, as browsers send it */
    /* An absolute-form target (RFC 9112 3.2.2, "http://host:port/path"):
     * target then points at its path and host at this copy of its
     * authority, which stands in for the Host field. */
    char abs_host[256];
    int64_t content_length; /* -1: none */
    bool chunked;           /* Transfer-Encoding: chunked */
    bool keep_alive;        /* the connection stays open after the answer */
    bool expect_continue;   /* Expect: 100-continue */
    bool has_body;          /* a body follows (Content-Length > 0, or chunked) */
} http_head;

/* Length of the head at the start of buf[0..len) -- up to and including the
 * empty line that ends it (CRLF or a bare LF, as RFC 9112 allows) -- or 0
 * while it is incomplete.  Bytes before `from` are known to hold no end
 * (the caller searched them already), so a head arriving a byte at a time
 * costs linear time. */
size_t http_head_end(const char *buf, size_t len, size_t from);

/* Parse a complete head, buf[0..len) as found by http_head_end (len at most
 * HTTP_MAX_HEAD).  NULs are written into buf to end the pieces that h points
 * to, so buf must outlive h.  Returns 0, or RINGSIM_EBADREQUEST (syntax,
 * missing or repeated Host in HTTP/1.1, conflicting framing),
 * RINGSIM_EURI (target over HTTP_MAX_TARGET), RINGSIM_EHEADERS (too many
 * fields), RINGSIM_ETOOBIG (Content-Length over API_MAX_BODY) with err. */
int http_parse_head(char *buf, size_t len, http_head *h, rs_error *err);

/* Incremental decoder of a chunked body (RFC 9112 section 7.1); zero it to
 * start.  Chunk extensions and trailer fields are read and ignored. */
typedef struct http_chunked {
    int state;
    uint64_t limit; /* data bytes allowed in all; 0: API_MAX_BODY */
    uint64_t left;  /* data bytes left in the current chunk */
    size_t line;    /* bytes of the current size or trailer line */
    size_t trailer; /* bytes of trailer fields so far */
    uint64_t total; /* data bytes so far */
    bool digits;    /* the size line has a digit */
    bool done;      /* the last chunk and the trailer have been read */
} http_chunked;

/* Decode from in[0..len): returns how many bytes were used (at least one
 * when len > 0 and the body is not done) and points *data, *dlen at the run
 * of body bytes found among them (inside in; *dlen may be 0).  Returns a
 * negative code with err: RINGSIM_EBADREQUEST for bad framing,
 * RINGSIM_ETOOBIG when the body passes API_MAX_BODY. */
ssize_t http_chunked_feed(http_chunked *c, const char *in, size_t len, const char **data,
                          size_t *dlen, rs_error *err);

/* Percent-decode s[0..n) (with plus, '+' is a space, as in a query) into a
 * new NUL-terminated string (*out, malloc'd; it may hold NULs: *out_len
 * counts them).  RINGSIM_EBADREQUEST on a '%' not followed by two hex
 * digits, RINGSIM_ENOMEM. */
int http_pct_decode(const char *s, size_t n, bool plus, char **out, size_t *out_len, rs_error *err);

/* What the server checks requests against. */
typedef struct http_conf {
    const char *host; /* the address it listens on, as given */
    int port;
    const char *token; /* the access token that /api/ requests need, or NULL */
    size_t token_len;
    bool open_host; /* listening beyond loopback: any Host name (the token guards) */
} http_conf;

/* Whether a Host field (or the host[:port] of an Origin) names this server.
 * NULL (an HTTP/1.0 request without Host) passes. */
bool http_host_ok(const http_conf *c, const char *host);
/* Whether an Origin field (NULL passes) is this server's own page. */
bool http_origin_ok(const http_conf *c, const char *origin, const char *host);
/* Whether a Content-Type is application/json (parameters allowed). */
bool http_is_json(const char *content_type);
/* Compare two byte strings in time that depends only on the lengths. */
bool http_secret_equal(const char *a, size_t alen, const char *b, size_t blen);

/* Where a request goes, once checked. */
typedef enum { HTTP_TO_API, HTTP_TO_FILE } http_kind;

typedef struct http_request {
    http_kind kind;
    api_request api;   /* HTTP_TO_API: the decoded request (owned) */
    api_place where;   /* HTTP_TO_API: where it runs */
    char *path;        /* HTTP_TO_FILE: the decoded path, "/index.html" for "/" (owned) */
    size_t body_limit; /* HTTP_TO_API: the most body bytes its route takes (api_body_limit) */
} http_request;

/* Split the target of an /api/ request into decoded path segments and query
 * parameters in r (zeroed by the caller; the target must start with "/api/").
 * RINGSIM_ENOTFOUND with more segments than a route has, RINGSIM_EBADREQUEST
 * for bad percent-encoding, RINGSIM_ENOMEM. */
int http_parse_target(const char *target, size_t len, api_request *r, rs_error *err);

/* Everything decided from the head alone, before a byte of the body is
 * read, in this order: Host, Origin and Sec-Fetch-Site (403: a mutation
 * whose Origin is not this server's page, "null" included, or that a
 * browser labels cross-site), the target (400, 404), the access token for
 * /api/ (401), the route (404, 405), and the body the head announces (a
 * route that takes none: 413; one that is not labelled JSON: 400
 * invalid_json).  A request without a body needs no Content-Type (docs/api.md
 * version 3).  So a refusal never waits for an upload, and a client
 * without the token is answered before it sends one.  On success *out is
 * filled (clear it with http_request_clear); on failure the negative code
 * and err. */
int http_check(const http_conf *c, const http_head *h, http_request *out, rs_error *err);

/* Parse the body of a checked API request (blen > 0) as JSON into
 * r->body: RINGSIM_EJSON when it is not, RINGSIM_ETOOBIG past
 * API_MAX_BODY, RINGSIM_ENOMEM.  The server calls it on the worker that
 * answers the request, never on the event loop. */
int http_attach_body(api_request *r, const char *body, size_t blen, rs_error *err);

/* http_check, then http_attach_body when there is a body: the whole way
 * from head to handler (the fuzzer's entry).  On failure *out is cleared. */
int http_prepare(const http_conf *c, const http_head *h, const char *body, size_t blen,
                 http_request *out, rs_error *err);

/* Free what a request owns; accepts a zeroed one. */
void http_request_clear(http_request *r);

#endif
