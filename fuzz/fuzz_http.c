/*
 * fuzz_http.c - libFuzzer harness for the server's request path: raw bytes
 * through the same functions http.c calls, in the same order, and on to the
 * API's handlers against an in-memory simulation.
 *
 * The input is what a client would write on a connection: one or more
 * pipelined requests.  Each head is found with http_head_end() and parsed by
 * http_parse_head() from a buffer of exactly its size (so AddressSanitizer
 * sees any read past it); a chunked body goes through http_chunked_feed()
 * twice -- whole, and in pieces of 1 to 7 bytes -- which must agree; then
 * http_prepare() checks the request as a loopback server without a token
 * and as a server beyond loopback with one, and the API answers it.
 *
 * What must hold: no crash or sanitizer report; a parsed head keeps its
 * bounds (target, fields, body size, HTTP/1.1 has Host); every refusal is a
 * 4xx with a well-formed error object (never 500 for bad input); every API
 * answer is 200/201 or such an error; a file path never climbs out; without
 * the token, no /api/ request beyond loopback gets past 401; `check` holds.
 *
 * Build and run: `make fuzz-http` (-max_len=65536: long names and values).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "http_gate.h"

static sim *s;
static api_cache cache = API_CACHE_INIT;

static void need(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_http: %s\n", what);
        abort();
    }
}

/* An error object as the server sends it: a code, a message, a 4xx. */
static void check_refusal(int code, const char *msg)
{
    json_t *b = api_error_body(code, msg);
    need(b != NULL, "no error object");
    json_t *e = json_object_get(b, "error");
    const char *c = json_string_value(json_object_get(e, "code"));
    const char *m = json_string_value(json_object_get(e, "message"));
    need(c && m && *m, "error object without code or message");
    int st = ringsim_status(code);
    need((st >= 400 && st < 500) || code == RINGSIM_ENOMEM, "bad input answered with a 5xx");
    json_decref(b);
}

static void check_answer(int status, json_t *body)
{
    need(body != NULL, "no answer");
    if (status >= 400) {
        json_t *e = json_object_get(body, "error");
        const char *code = json_string_value(json_object_get(e, "code"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (!code || !msg || !*msg || status == 500) {
            char *t = json_dumps(body, 0);
            fprintf(stderr, "bad answer (%d): %s\n", status, t);
            free(t);
            abort();
        }
    } else {
        need(status == 200 || status == 201, "status that is neither success nor error");
    }
}

/* Generating millions of keys is correct but slow: a fuzzer that found
 * "count": 9999999 would spend its time there. */
static bool too_slow(const api_request *r)
{
    json_t *g = json_object_get(r->body, "generate");
    json_t *c = json_object_get(g, "count");
    return json_is_number(c) && json_number_value(c) > 2000;
}

/* Decode a chunked body at in[0..len) in pieces of at most `piece` bytes
 * (0: all at once) into out (API_MAX_BODY + 1 bytes).  Returns the bytes
 * used, or the negative code. */
static ssize_t dechunk(const char *in, size_t len, size_t piece, char *out, size_t *olen, bool *done)
{
    http_chunked ck;
    memset(&ck, 0, sizeof ck);
    size_t used = 0;
    *olen = 0;
    rs_error err;
    while (used < len && !ck.done) {
        size_t n = len - used;
        if (piece && n > piece)
            n = piece;
        const char *d;
        size_t dl;
        ssize_t u = http_chunked_feed(&ck, in + used, n, &d, &dl, &err);
        if (u < 0) {
            check_refusal((int)u, err.msg);
            return u;
        }
        need(u > 0 || ck.done, "the chunked decoder made no progress");
        need((size_t)u <= n, "the chunked decoder used more than it was given");
        need(!dl || (d >= in + used && d + dl <= in + used + (size_t)u), "data outside input");
        need(*olen + dl <= API_MAX_BODY, "chunked body over the limit");
        if (dl)
            memcpy(out + *olen, d, dl);
        *olen += dl;
        used += (size_t)u;
    }
    *done = ck.done;
    need(ck.total == *olen || !ck.done, "chunk sizes and data disagree");
    return (ssize_t)used;
}

static void run_api(const http_request *req)
{
    if (req->where == API_EVENTS || req->where == API_CANCEL || too_slow(&req->api))
        return;
    int status;
    json_t *body = NULL;
    api_handle(s, &cache, &req->api, &status, &body);
    check_answer(status, body);
    json_decref(body);
}

static void check_request(const http_head *h, const char *body, size_t blen)
{
    static const http_conf local = {"127.0.0.1", 3000, NULL, 0, false};
    static const http_conf open = {"0.0.0.0", 3000, "fuzz-token", 10, true};
    rs_error err;
    http_request req;
    int rc = http_prepare(&open, h, body, blen, &req, &err);
    if (rc) {
        check_refusal(rc, err.msg);
    } else if (req.kind == HTTP_TO_API) {
        /* Past the token check: the request must hold the token. */
        bool has = h->authorization && strstr(h->authorization, "fuzz-token");
        for (int i = 0; i < req.api.nparams; i++)
            has |= strcmp(req.api.params[i].name, "token") == 0 && req.api.params[i].len == 10 &&
                   memcmp(req.api.params[i].value, "fuzz-token", 10) == 0;
        need(has, "an API request passed without the token");
    }
    http_request_clear(&req);
    rc = http_prepare(&local, h, body, blen, &req, &err);
    if (rc) {
        check_refusal(rc, err.msg);
        return;
    }
    if (req.kind == HTTP_TO_FILE) {
        need(req.path && req.path[0] == '/' && !strstr(req.path, ".."), "a file path climbs out");
    } else {
        run_api(&req);
    }
    http_request_clear(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_error err;
    if (!s && sim_open(&s, ":memory:", &err))
        abort();
    static char *whole, *pieces;
    if (!whole) {
        whole = malloc(API_MAX_BODY + 1);
        pieces = malloc(API_MAX_BODY + 1);
    }
    int64_t before = sim_last_op(s);
    const char *p = (const char *)data;
    size_t n = size;
    for (int round = 0; n && round < 16; round++) {
        size_t end = http_head_end(p, n < HTTP_MAX_HEAD ? n : HTTP_MAX_HEAD, 0);
        if (!end)
            break; /* incomplete, or over HTTP_MAX_HEAD: the transport answers 431 */
        char *head = malloc(end);
        memcpy(head, p, end);
        http_head h;
        int rc = http_parse_head(head, end, &h, &err);
        p += end;
        n -= end;
        if (rc) {
            check_refusal(rc, err.msg);
            free(head);
            break; /* the transport closes after a refusal */
        }
        need(h.target_len <= HTTP_MAX_TARGET && h.nfields <= HTTP_MAX_FIELDS, "bounds");
        need(h.content_length <= (int64_t)API_MAX_IMPORT_BODY, "Content-Length over the limit");
        need(h.minor == 0 || h.minor == 1, "version");
        need(h.minor == 0 || h.host, "HTTP/1.1 without Host");
        need(!(h.chunked && h.content_length >= 0), "both framings");
        need(strlen(h.target) == h.target_len, "target length");
        for (int i = 0; i < h.nfields; i++)
            need(strlen(h.field[i].name) == h.field[i].name_len &&
                     strlen(h.field[i].value) == h.field[i].value_len,
                 "field lengths");
        const char *body = NULL;
        size_t blen = 0;
        bool complete = true;
        if (h.chunked) {
            size_t wl, pl;
            bool wd, pd;
            ssize_t wu = dechunk(p, n, 0, whole, &wl, &wd);
            ssize_t pu = dechunk(p, n, 1 + (size & 7) % 7, pieces, &pl, &pd);
            need((wu < 0) == (pu < 0), "chunked: whole and pieces disagree on errors");
            if (wu >= 0)
                need(wu == pu && wd == pd && wl == pl && !memcmp(whole, pieces, wl),
                     "chunked: whole and pieces disagree");
            complete = wu >= 0 && wd;
            if (complete) {
                body = whole;
                blen = wl;
                p += wu;
                n -= (size_t)wu;
            }
        } else if (h.content_length > 0) {
            complete = (size_t)h.content_length <= n;
            if (complete) {
                body = p;
                blen = (size_t)h.content_length;
                p += blen;
                n -= blen;
            }
        }
        if (complete) {
            char *copy = blen ? malloc(blen) : NULL; /* exactly its size, as http.c has it */
            if (blen)
                memcpy(copy, body, blen);
            check_request(&h, copy, blen);
            free(copy);
        }
        bool keep = h.keep_alive;
        free(head);
        if (!complete || !keep)
            break;
    }
    int64_t problems; /* the state changed: it must still be consistent */
    if (sim_last_op(s) != before && (sim_check(s, &problems, NULL, 0, &err) || problems))
        abort();
    if (sim_last_op(s) > 100) { /* keep each run's state small */
        int64_t op;
        sim_reset(s, &op, &err);
        api_cache_clear(&cache);
    }
    return 0;
}
