/*
 * error.c - a RINGSIM_E* code in words and statuses, from error.h's one list.
 */
#include "error.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* The answers, in RINGSIM_ERRNO_MAP's order. */
static const struct {
    int code;
    const char *wire;
    int status;
    const char *text;
} table[] = {
#define ROW(name, value, wire, status, text) {RINGSIM_##name, wire, status, text},
    RINGSIM_ERRNO_MAP(ROW)
#undef ROW
};

/* The row of code; a code not in the list answers as RINGSIM_EINTERNAL. */
static size_t find(int code)
{
    size_t internal = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].code == code)
            return i;
        if (table[i].code == RINGSIM_EINTERNAL)
            internal = i;
    }
    return internal;
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
