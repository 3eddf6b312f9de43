/*
 * http_gate.h - from a parsed head to a request the API may answer: the
 * checks every request passes before a handler sees it -- Host, Origin and
 * Sec-Fetch-Site, the access token, the route, whether it takes a body and
 * is labelled JSON -- and the body's JSON.
 *
 * The parser (http_parse.h) knows bytes and limits; the routes are the
 * API's (api_route); this room decides whether the one may reach the other.
 * Like the parser it touches no socket: http.c calls it with each head, and
 * fuzz/fuzz_http.c with libFuzzer's, so the checks that are fuzzed are the
 * checks that serve.
 */
#ifndef RINGSIM_HTTP_GATE_H
#define RINGSIM_HTTP_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "http_parse.h"

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
