/*
 * http_parse.h - the request side of HTTP/1.1 as plain functions: the head
 * (request line and header fields), chunked bodies and percent-decoding.
 * Bytes and limits only: it knows no route, no token and no JSON -- what a
 * request may reach, and whether it may, is http_gate.h's.
 *
 * Nothing here touches a socket or the event loop: http.c feeds these
 * functions the bytes it reads, and fuzz/fuzz_http.c feeds them libFuzzer's
 * bytes, so the parser that is fuzzed is the parser that serves.  Every
 * input is bounded (the head by HTTP_MAX_HEAD, the target by
 * HTTP_MAX_TARGET, the number of fields by HTTP_MAX_FIELDS, a body by
 * HTTP_MAX_BODY) and every refusal is a RINGSIM_E code that becomes the
 * API's error object.
 */
#ifndef RINGSIM_HTTP_PARSE_H
#define RINGSIM_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define HTTP_MAX_HEAD (32 * 1024)         /* request line and fields: 431 beyond */
#define HTTP_MAX_TARGET (8 * 1024)        /* request target: 414 beyond */
#define HTTP_MAX_FIELDS 100               /* header fields: 431 beyond */
#define HTTP_MAX_TOKEN 256                /* access token bytes */
#define HTTP_MAX_BODY (16u * 1024 * 1024) /* a request body: 413 beyond */
/* The largest body any route takes (a pasted text, JSON-escaped: import and
 * its preview); each route's own limit is the gate's (http_gate.c). */
#define HTTP_MAX_LARGE_BODY (2u * 16u * 1024 * 1024 + 64u * 1024)
/* A request log (POST /api/trace), streamed to a temporary file. */
#define HTTP_MAX_SPOOL_BODY (1024u * 1024 * 1024)

/* The methods the API knows; anything else is HTTP_OTHER (405 or 501). */
typedef enum {
    HTTP_GET,
    HTTP_HEAD,
    HTTP_POST,
    HTTP_PUT,
    HTTP_DELETE,
    HTTP_PATCH,
    HTTP_OTHER
} http_method;

typedef struct http_field {
    const char *name, *value; /* NUL-terminated, inside the parsed buffer */
    size_t name_len, value_len;
} http_field;

typedef struct http_head {
    http_method method;
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
 * fields), RINGSIM_ETOOBIG (Content-Length over HTTP_MAX_BODY) with err. */
int http_parse_head(char *buf, size_t len, http_head *h, rs_error *err);

/* Incremental decoder of a chunked body (RFC 9112 section 7.1); zero it to
 * start.  Chunk extensions and trailer fields are read and ignored. */
typedef struct http_chunked {
    int state;
    uint64_t limit; /* data bytes allowed in all; 0: HTTP_MAX_BODY */
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
 * RINGSIM_ETOOBIG when the body passes HTTP_MAX_BODY. */
ssize_t http_chunked_feed(http_chunked *c, const char *in, size_t len, const char **data,
                          size_t *dlen, rs_error *err);

/* Percent-decode s[0..n) (with plus, '+' is a space, as in a query) into a
 * new NUL-terminated string (*out, malloc'd; it may hold NULs: *out_len
 * counts them).  RINGSIM_EBADREQUEST on a '%' not followed by two hex
 * digits, RINGSIM_ENOMEM. */
int http_pct_decode(const char *s, size_t n, bool plus, char **out, size_t *out_len, rs_error *err);

/* Whether a byte may stand in a token (RFC 9110 5.6.2: a method, a field
 * name). */
bool http_is_tchar(unsigned char ch);

#endif
