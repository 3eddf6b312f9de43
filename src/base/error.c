/*
 * error.c - tables that turn a RINGSIM_E* code into words and statuses.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static const struct {
    int code;
    const char *wire;
    int status;
    const char *text;
} table[] = {
    {RINGSIM_OK, "ok", 200, "success"},
    {RINGSIM_EJSON, "invalid_json", 400, "request body is not valid JSON"},
    {RINGSIM_ENAME, "invalid_name", 400, "invalid name"},
    {RINGSIM_EPARAM, "invalid_parameter", 400, "invalid parameter"},
    {RINGSIM_ENOTFOUND, "not_found", 404, "not found"},
    {RINGSIM_ECONFLICT, "conflict", 409, "already exists"},
    {RINGSIM_ETOOBIG, "payload_too_large", 413, "request body too large"},
    {RINGSIM_EFORBIDDEN, "forbidden", 403, "forbidden"},
    {RINGSIM_EMETHOD, "method_not_allowed", 405, "method not allowed"},
    {RINGSIM_EDB, "internal", 500, "database error"},
    {RINGSIM_ENOMEM, "internal", 500, "out of memory"},
    {RINGSIM_EBUSY, "internal", 500, "database is locked by another process"},
    {RINGSIM_EREADONLY, "read_only", 503, "database is read-only"},
    {RINGSIM_ENOTDB, "internal", 500, "file is not a ringsim database"},
    {RINGSIM_EBADREQUEST, "bad_request", 400, "malformed HTTP request"},
    {RINGSIM_EUNAUTHORIZED, "unauthorized", 401, "this server needs its access token"},
    {RINGSIM_ETIMEOUT, "request_timeout", 408, "the request did not arrive in time"},
    {RINGSIM_EURI, "uri_too_long", 414, "request target too long"},
    {RINGSIM_EHEADERS, "headers_too_large", 431, "request header fields too large"},
    {RINGSIM_EUNAVAILABLE, "unavailable", 503, "the server cannot take this request now"},
    {RINGSIM_EFULL, "insufficient_storage", 507, "disk full"},
    {RINGSIM_ECANCELED, "cancelled", 503, "operation cancelled"},
    {RINGSIM_EMOVED, "database_moved", 503, "the database file was deleted or replaced"},
    {RINGSIM_EIMPORT, "invalid_import", 400, "the imported text is refused"},
    /* last: the answer for a code not in the table */
    {RINGSIM_EINTERNAL, "internal", 500, "internal error"},
};

static int find(int code)
{
    for (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].code == code)
            return (int)i;
    return (int)(sizeof table / sizeof table[0]) - 1;
}

const char *ringsim_strerror(int code) { return table[find(code)].text; }
const char *ringsim_errcode(int code) { return table[find(code)].wire; }
int ringsim_status(int code) { return table[find(code)].status; }

int rs_fail(rs_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}
