/*
 * error.h - ringsim's error codes.
 *
 * Every fallible function returns 0 on success or one of the negative codes
 * below (the libuv / SQLite habit).  A code maps 1:1 onto the API's error
 * object: ringsim_errcode() gives the wire code ("invalid_name", ...) and
 * ringsim_status() the HTTP status.  A human-readable message travels beside
 * the code in an rs_error, filled by the function that failed.
 */
#ifndef RINGSIM_ERROR_H
#define RINGSIM_ERROR_H

/* Every code once: X(NAME, value, wire code, HTTP status, text).  The enum
 * below and error.c's answers are written from this list (libuv's
 * UV_ERRNO_MAP), so a code cannot lack its wire code or status.  The
 * transport's own refusals (http.c) are numbered from -30, apart from the
 * engine's, so that both lists can grow. */
#define RINGSIM_ERRNO_MAP(X)                                                                       \
    X(OK, 0, "ok", 200, "success")                                                                 \
    X(EJSON, -1, "invalid_json", 400, "request body is not valid JSON")                            \
    X(ENAME, -2, "invalid_name", 400, "invalid name")                                              \
    X(EPARAM, -3, "invalid_parameter", 400, "invalid parameter")                                   \
    X(ENOTFOUND, -4, "not_found", 404, "not found")                                                \
    X(ECONFLICT, -5, "conflict", 409, "already exists")                                            \
    X(ETOOBIG, -6, "payload_too_large", 413, "request body too large")                             \
    X(EFORBIDDEN, -7, "forbidden", 403, "forbidden")                                               \
    X(EMETHOD, -8, "method_not_allowed", 405, "method not allowed")                                \
    X(EDB, -9, "internal", 500, "database error")                                                  \
    X(ENOMEM, -10, "internal", 500, "out of memory")                                               \
    X(EBUSY, -11, "internal", 500, "database is locked by another process")                        \
    X(EREADONLY, -12, "read_only", 503, "database is read-only")                                   \
    X(ENOTDB, -13, "internal", 500, "file is not a ringsim database")                              \
    X(EINTERNAL, -14, "internal", 500, "internal error")                                           \
    X(EFULL, -15, "insufficient_storage", 507, "disk full")                                        \
    X(ECANCELED, -16, "cancelled", 503, "operation cancelled")                                     \
    X(EMOVED, -17, "database_moved", 503, "the database file was deleted or replaced")             \
    X(EIMPORT, -18, "invalid_import", 400, "the imported text is refused")                         \
    X(EBADREQUEST, -30, "bad_request", 400, "malformed HTTP request")                              \
    X(EUNAUTHORIZED, -31, "unauthorized", 401, "this server needs its access token")               \
    X(ETIMEOUT, -32, "request_timeout", 408, "the request did not arrive in time")                 \
    X(EURI, -33, "uri_too_long", 414, "request target too long")                                   \
    X(EHEADERS, -34, "headers_too_large", 431, "request header fields too large")                  \
    X(EUNAVAILABLE, -35, "unavailable", 503, "the server cannot take this request now")

enum {
#define RINGSIM__ERR_ENUM(name, value, wire, status, text) RINGSIM_##name = (value),
    RINGSIM_ERRNO_MAP(RINGSIM__ERR_ENUM)
#undef RINGSIM__ERR_ENUM
};

/* A code plus a message for a person.  Plain struct, no ownership. */
typedef struct rs_error {
    int code;
    char msg[320];
} rs_error;

/* Short generic description of a code; never NULL. */
const char *ringsim_strerror(int code);
/* API error code string ("invalid_name", "conflict", ...); never NULL. */
const char *ringsim_errcode(int code);
/* HTTP status for a code (400, 404, ...). */
int ringsim_status(int code);

/* Fill err (which may be NULL) with code and a printf-style message; returns
 * code so callers can write `return rs_fail(err, RINGSIM_ENAME, "...")`. */
int rs_fail(rs_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
