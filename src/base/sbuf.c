/*
 * sbuf.c - see sbuf.h.  Doubles its block as it grows (from 256 bytes,
 * vec.h).
 */
#include "sbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "vec.h"

int sb_add(sbuf *b, const char *s, size_t n)
{
    if (n > SIZE_MAX - 1 - b->n || vec_reserve(&b->p, &b->cap, b->n + n + 1, 1, 256))
        return RINGSIM_ENOMEM;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

int sb_str(sbuf *b, const char *s) { return sb_add(b, s, strlen(s)); }

int sb_vprintf(sbuf *b, const char *fmt, va_list ap)
{
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return RINGSIM_EINTERNAL;
    return sb_add(b, tmp, (size_t)n);
}

int sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = sb_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}
