/*
 * sbuf.h - a growing, always NUL-terminated byte string: what the CSV
 * writer and the scenario files build their text in.
 */
#ifndef RINGSIM_SBUF_H
#define RINGSIM_SBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct sbuf {
    char *p; /* malloc'd, NUL-terminated once anything was added; may be NULL */
    size_t n, cap;
} sbuf;

/* Append n bytes; 0 or RINGSIM_ENOMEM (b unchanged). */
int sb_add(sbuf *b, const char *s, size_t n);
int sb_str(sbuf *b, const char *s);
/* Up to 511 bytes of formatted text; RINGSIM_EINTERNAL past that. */
int sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* sb_printf for a va_list (ap is consumed, the caller va_end's it). */
int sb_vprintf(sbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
