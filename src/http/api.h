/*
 * api.h - the HTTP API of docs/api.md as plain functions: a decoded request in,
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
#include <stdio.h>

#include "names.h"
#include "sim.h"

#define API_MAX_BODY (16u * 1024 * 1024)
/* The bodies of POST /api/import and /api/preview: a 16 MiB text (the
 * importer's limit, IMPORT_MAX_TEXT) as a JSON string, its newlines,
 * quotes and tabs escaped in two bytes each. */
#define API_MAX_IMPORT_BODY (2u * 16u * 1024 * 1024 + 64u * 1024)
/* The body a change that takes none may still send (clients that always
 * send `{}`): read, checked as JSON, ignored. */
#define API_MAX_IGNORED_BODY (64u * 1024)
/* The body of POST /api/trace: a request log of up to 1 GiB, spooled to a
 * temporary file as it arrives, never held in memory (api_spools). */
#define API_MAX_TRACE_BODY (1024u * 1024 * 1024)
#define API_MAX_SEGS 4
#define API_SCENARIO_MAX_STEPS 10000 /* steps of POST /api/scenarios/run */

typedef enum { API_GET, API_HEAD, API_POST, API_PUT, API_DELETE, API_PATCH, API_OTHER } api_method;

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
    json_t *body;   /* parsed body (owned), NULL when there was none */
    bool spooled;   /* the body is in body_fd (api_spools), not in body */
    int body_fd;    /* spooled: an unlinked temporary file, owned (closed by clear) */
    int body_error; /* RINGSIM_EJSON etc. found while reading the body */
    char body_msg[160];
} api_request;

/* Where a request must run. */
typedef enum {
    API_LOOP,   /* fast read: on the event loop */
    API_WORKER, /* operation (or preview): on the operations worker, in order */
    API_READER, /* long read (time travel, compare, theory, export): on the
                 * reading worker, beside the operations, never holding them up */
    API_EVENTS, /* the SSE stream: http.c handles it */
    API_CANCEL, /* POST /api/cancel: http.c stops the worker's operation */
} api_place;

/* Route a request: where it runs, or a 404/405 error in err (returns the
 * negative code).  Cannot fail otherwise. */
int api_classify(const api_request *r, api_place *where, rs_error *err);
/* The same, and whether the route takes a body (*body). */
int api_route(const api_request *r, api_place *where, bool *body, rs_error *err);
/* The most body bytes a routed request may send: API_MAX_BODY,
 * API_MAX_IMPORT_BODY for the routes that take a pasted text, or
 * API_MAX_IGNORED_BODY for a change that takes no body. */
size_t api_body_limit(const api_request *r);
/* Whether the route takes its body as raw bytes into a temporary file
 * rather than as JSON in memory (POST /api/trace).  Cannot fail. */
bool api_spools(const api_request *r);

/* The engine's view of the past for ?at= (one per thread that answers time
 * travel), with its checkpoints.  Start with API_CACHE_INIT. */
typedef struct api_cache {
    sim_history h;
    /* The event loop's answers: take what is cheap to refresh (counters),
     * never rebuild a layout here (the server swaps in a state built
     * elsewhere); the state may then be one topology change behind. */
    bool light;
} api_cache;
#define API_CACHE_INIT                                                                             \
    {                                                                                              \
        .h = SIM_HISTORY_INIT                                                                      \
    }
void api_cache_clear(api_cache *c);

/* An answer: JSON, or text for the exports (CSV, a scenario file). */
typedef struct api_answer {
    int status;
    json_t *body; /* the JSON answer (owned), NULL when text is set */
    char *text;   /* a text answer (malloc'd, owned), or NULL */
    size_t text_len;
    const char *content_type; /* of text or file: "text/csv; charset=utf-8", ... (static) */
    /* A long text answer (every key of a large database) written to an
     * unlinked temporary file instead of memory, positioned anywhere: the
     * transport sends file_len bytes from its start (owned). */
    FILE *file;
    size_t file_len;
} api_answer;

/* Answer a request: a->status and either a->body or a->text always set;
 * errors become docs/api.md's error object.  Free with api_answer_clear. */
void api_respond(sim *s, api_cache *cache, const api_request *r, api_answer *a);
/* Accepts an answer already cleared. */
void api_answer_clear(api_answer *a);

/* The same for callers that send JSON only: a text answer comes as
 * {"content_type", "text"}.  *status and *body (new reference) always set;
 * errors become docs/api.md's error object. */
void api_handle(sim *s, api_cache *cache, const api_request *r, int *status, json_t **body);

/* The API error object for a code and message. */
json_t *api_error_body(int code, const char *msg);

/* Free what a request owns. */
void api_request_clear(api_request *r);

/* A whole number in plain decimal digits that is at most max: 0 with *out,
 * else RINGSIM_EPARAM (err untouched; the caller says what was wrong).  The
 * number rule of names.h, under the API's name. */
static inline int api_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    return names_parse_u64(s, len, max, out);
}

/* `ringsim serve` (http.c).  Zero limits take the defaults shown. */
typedef struct serve_options {
    const char *db;
    const char *host; /* address to listen on; NULL = 127.0.0.1 */
    int port;         /* 0 = a free port (printed) */
    const char *web;  /* serve this folder instead of the embedded page; NULL */
    /* Access token: NULL = none on a loopback address, and one generated
     * (and printed in the URL) on any other address. */
    const char *token;
    int max_connections;   /* HTTP and SSE together (4096, at most the fd limit) */
    int max_events;        /* SSE streams among them (2048) */
    int header_timeout_ms; /* to receive a request head (10 s) */
    int idle_timeout_ms;   /* keep-alive connection between requests (30 s) */
    int body_timeout_ms;   /* to receive a request body (60 s) */
    int stop_grace_ms;     /* after SIGTERM, for the running operation (10 s) */
} serve_options;

/* Runs until SIGINT or SIGTERM: 0 then, 1 when the server cannot start. */
int api_serve(const serve_options *o);

#endif
