/*
 * fuzz_api.c - libFuzzer harness for the HTTP API's routes and handlers.
 *
 * The input is split into a method, path segments, query parameters and a
 * body (as raw bytes, parsed as JSON the way http.c does), drawn partly from
 * the API's own vocabulary so that requests reach the handlers.  Strings
 * and bodies may be as long as the input (run with -max_len=65536).
 * fuzz_http.c fuzzes the same handlers behind the real request parser.  No input
 * may crash; every answer is 200/201 or an error object whose status matches
 * its code; state stays consistent (`check`).
 *
 * Build and run: `make fuzz-api`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

static const char *const words[] = {"nodes",   "keys",       "ring",  "config", "lookup", "stats",
                                    "density", "operations", "reset", "revert", "events", "alpha",
                                    "k1",      "1",          "0",     "",       "%",      "a/b"};
static const char *const pnames[] = {"at",    "node",  "prefix", "offset",
                                     "limit", "after", "key",    "bins"};

static unsigned take(const uint8_t **p, size_t *n)
{
    if (!*n)
        return 0;
    (*n)--;
    return *(*p)++;
}

static char *take_str(const uint8_t **p, size_t *n, size_t *len)
{
    unsigned k = take(p, n);
    if (k < 160) { /* a word of the API */
        const char *w = words[k % (sizeof words / sizeof words[0])];
        *len = strlen(w);
        return strdup(w);
    }
    /* Raw bytes of any length up to 64 KiB: long names, prefixes and
     * values must be refused cleanly (a 12-byte cap once hid a stack
     * overflow behind a 256-byte prefix). */
    size_t l = (size_t)(k % 12) * 24;
    if (k % 12 == 0) {
        l = take(p, n) << 8;
        l |= take(p, n);
    }
    if (l > *n)
        l = *n;
    char *s = malloc(l + 1);
    memcpy(s, *p, l);
    s[l] = '\0';
    *p += l;
    *n -= l;
    *len = l;
    return s;
}

static sim *s;
static api_cache cache = API_CACHE_INIT;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_error err;
    if (!s && sim_open(&s, ":memory:", &err))
        abort();
    int64_t before = sim_last_op(s);
    const uint8_t *p = data;
    size_t n = size;
    for (int round = 0; n && round < 8; round++) {
        api_request r;
        memset(&r, 0, sizeof r);
        r.method = (api_method)(take(&p, &n) % 6);
        r.nseg = 1 + (int)(take(&p, &n) % 2);
        for (int i = 0; i < r.nseg; i++)
            r.seg[i] = take_str(&p, &n, &r.seglen[i]);
        r.nparams = (int)(take(&p, &n) % 3);
        r.params = calloc((size_t)r.nparams + 1, sizeof *r.params);
        for (int i = 0; i < r.nparams; i++) {
            size_t l;
            r.params[i].name = strdup(pnames[take(&p, &n) % 8]);
            r.params[i].value = take_str(&p, &n, &l);
            r.params[i].len = l;
        }
        size_t bl = take(&p, &n) << 8; /* bodies up to 64 KiB */
        bl |= take(&p, &n);
        if (bl > n)
            bl = n;
        if (bl) {
            json_error_t je;
            r.body = json_loadb((const char *)p, bl, JSON_ALLOW_NUL, &je);
            if (!r.body) {
                r.body_error = RINGSIM_EJSON;
                snprintf(r.body_msg, sizeof r.body_msg, "bad json");
            }
            p += bl;
            n -= bl;
        }
        /* Generating millions of keys is right but slow: not here. */
        json_t *count = json_object_get(json_object_get(r.body, "generate"), "count");
        bool slow = json_is_number(count) && json_number_value(count) > 2000;
        api_place where;
        if (!slow && api_classify(&r, &where, &err) == 0 && where != API_EVENTS &&
            where != API_CANCEL) {
            int status;
            json_t *body = NULL;
            api_handle(s, &cache, &r, &status, &body);
            if (!body)
                abort();
            if (status >= 400) {
                json_t *e = json_object_get(body, "error");
                const char *code = json_string_value(json_object_get(e, "code"));
                const char *msg = json_string_value(json_object_get(e, "message"));
                if (!code || !msg || !*msg) {
                    char *t = json_dumps(body, 0);
                    fprintf(stderr, "bad error object (%d): %s\n", status, t);
                    free(t);
                    abort();
                }
                if (status == 500) { /* never for bad input */
                    fprintf(stderr, "500: %s\n", msg);
                    abort();
                }
            } else if (status != 200 && status != 201) {
                abort();
            }
            json_decref(body);
        }
        api_request_clear(&r);
    }
    int64_t problems; /* the state changed: it must still be consistent */
    if (sim_last_op(s) != before && (sim_check(s, &problems, NULL, 0, &err) || problems))
        abort();
    if (sim_last_op(s) > 200) { /* keep each run's state small */
        int64_t op;
        sim_reset(s, &op, &err);
        api_cache_clear(&cache);
    }
    return 0;
}
