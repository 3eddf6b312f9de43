/*
 * api.h - the HTTP API of API.md as plain functions: a decoded request in,
 * a status and a JSON body out.
 *
 * Nothing here touches sockets, so the routes run the same on the event loop
 * (reads) and on the worker thread (operations, time travel), and tests can
 * call them directly.  http.c does the transport.
 */
#ifndef RINGSIM_API_H
#define RINGSIM_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim.h"

#define API_MAX_BODY (16u * 1024 * 1024)
#define API_MAX_SEGS 4

typedef enum { API_GET, API_HEAD, API_POST, API_PUT, API_DELETE, API_OTHER } api_method;

typedef struct api_param {
    char *name, *value; /* malloc'd, percent-decoded; value may hold any byte */
    size_t len;         /* of value */
} api_param;

typedef struct api_request {
    api_method method;
    char *seg[API_MAX_SEGS]; /* path segments after /api/, decoded, malloc'd */
    size_t seglen[API_MAX_SEGS];
    int nseg;
    api_param *params;
    int nparams;
    json_t *body; /* parsed body (owned), NULL when there was none */
    int body_error; /* RINGSIM_EJSON etc. found while reading the body */
    char body_msg[160];
} api_request;

/* Where a request must run. */
typedef enum {
    API_LOOP,   /* fast read: on the event loop */
    API_WORKER, /* operation or time travel: on the worker, in order */
    API_EVENTS, /* the SSE stream: http.c handles it */
} api_place;

/* Route a request: where it runs, or a 404/405 error in err (returns the
 * negative code).  Cannot fail otherwise. */
int api_classify(const api_request *r, api_place *where, rs_error *err);

/* Snapshot cache for ?at= (one per thread that answers time travel). */
typedef struct api_cache {
    int64_t at;
    sim *snap;
} api_cache;
void api_cache_clear(api_cache *c);

/* An answer: JSON, or text for the exports (CSV, a scenario file). */
typedef struct api_answer {
    int status;
    json_t *body;             /* the JSON answer (owned), NULL when text is set */
    char *text;               /* a text answer (malloc'd, owned), or NULL */
    size_t text_len;
    const char *content_type; /* of text: "text/csv; charset=utf-8", ... (static) */
} api_answer;

/* Answer a request: a->status and either a->body or a->text always set;
 * errors become API.md's error object.  Free with api_answer_clear. */
void api_respond(sim *s, api_cache *cache, const api_request *r, api_answer *a);
/* Accepts an answer already cleared. */
void api_answer_clear(api_answer *a);

/* The same for callers that send JSON only: a text answer comes as
 * {"content_type", "text"}.  *status and *body (new reference) always set;
 * errors become API.md's error object. */
void api_handle(sim *s, api_cache *cache, const api_request *r, int *status,
                json_t **body);

/* The API error object for a code and message. */
json_t *api_error_body(int code, const char *msg);

/* Free what a request owns. */
void api_request_clear(api_request *r);

/* `ringsim serve` (http.c). */
int api_serve(const char *db, const char *host, int port, const char *web_dir);

#endif
