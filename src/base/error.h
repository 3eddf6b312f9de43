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

enum {
    RINGSIM_OK = 0,
    RINGSIM_EJSON = -1,      /* request body is not valid JSON          */
    RINGSIM_ENAME = -2,      /* node name or key breaks the name rules  */
    RINGSIM_EPARAM = -3,     /* any other bad parameter                 */
    RINGSIM_ENOTFOUND = -4,  /* no such node, key or operation          */
    RINGSIM_ECONFLICT = -5,  /* node or key already exists              */
    RINGSIM_ETOOBIG = -6,    /* request body over the limit             */
    RINGSIM_EFORBIDDEN = -7, /* foreign Host or Origin                  */
    RINGSIM_EMETHOD = -8,    /* method not allowed on this path         */
    RINGSIM_EDB = -9,        /* SQLite failed (internal)                */
    RINGSIM_ENOMEM = -10,    /* out of memory (internal)                */
    RINGSIM_EBUSY = -11,     /* database locked by another process      */
    RINGSIM_EREADONLY = -12, /* database cannot be written              */
    RINGSIM_ENOTDB = -13,    /* file is not a ringsim database          */
    RINGSIM_EINTERNAL = -14, /* anything else that should not happen    */
    RINGSIM_EFULL = -15,     /* disk (or the database's size cap) full  */
    RINGSIM_ECANCELED = -16, /* cancelled while running; rolled back    */
    RINGSIM_EMOVED = -17,    /* the open file was deleted or replaced   */
    RINGSIM_EIMPORT = -18,   /* an imported text is refused (400)       */
    /* The transport's own refusals (http.c), numbered apart from the
     * engine's so that both lists can grow. */
    RINGSIM_EBADREQUEST = -30,   /* malformed HTTP (400)                 */
    RINGSIM_EUNAUTHORIZED = -31, /* missing or wrong access token (401)  */
    RINGSIM_ETIMEOUT = -32,      /* request not received in time (408)   */
    RINGSIM_EURI = -33,          /* request target too long (414)        */
    RINGSIM_EHEADERS = -34,      /* request head too large (431)         */
    RINGSIM_EUNAVAILABLE = -35,  /* too many connections, stopping (503) */
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
