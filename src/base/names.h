/*
 * names.h - the name rules of docs/api.md: node names and keys are UTF-8 strings
 * of 1 to 255 bytes with no control characters (U+0000-U+001F, U+007F).
 * Validation is one pass over the bytes, no allocation.  Also the number
 * rule: whole numbers in plain decimal digits.
 */
#ifndef RINGSIM_NAMES_H
#define RINGSIM_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define NAME_MAX_BYTES 255
#define NAME_BUF (NAME_MAX_BYTES + 1) /* a name and its NUL */

/* 0 when the len bytes at s form a valid name, else RINGSIM_ENAME with a
 * message naming `what` ("node name", "key") in err (may be NULL). */
int name_check(const char *s, size_t len, const char *what, rs_error *err);

/* Whether the bytes are well-formed UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s, size_t len);

/* name_check() plus what docs/api.md v3 asks of a node name: no bidirectional
 * control (U+202A-U+202E, U+2066-U+2069) and at least one visible
 * character.  Keys do not need this. */
int node_name_check(const char *s, size_t len, rs_error *err);

/* Whether the code point is one that shows nothing (format characters,
 * default-ignorables, separators): the one definition. */
bool names_invisible(uint32_t c);

/* s with every invisible character written as "⟨U+200B⟩" (a plain space
 * only when nothing in s is visible), NUL-terminated; malloc'd, the caller
 * frees; NULL when out of memory.  s must be valid UTF-8. */
char *names_escape(const char *s, size_t len);

/* The columns the len bytes of UTF-8 text at s take on a terminal, as
 * libunistring's u8_width counts them for the encoding "UTF-8", whatever
 * the locale: an East Asian wide character or an emoji 2, a combining mark
 * or a format character 0, anything else 1.  Measure what is printed (a
 * name's names_escape(), not its bytes).  Cannot fail. */
size_t names_width(const char *s, size_t len);

/* The NFC form of s (valid UTF-8), malloc'd and NUL-terminated, its length
 * in *out_len; NULL when out of memory. */
char *names_nfc(const char *s, size_t len, size_t *out_len);
/* Whether a and b have the same NFC form (they look the same). */
bool names_look_alike(const char *a, size_t al, const char *b, size_t bl);

/* A whole number in plain decimal digits -- no sign, space, NUL or other
 * byte, no overflow -- that is at most max: 0 with *out, else RINGSIM_EPARAM
 * (no message; the caller says what was wrong).  Every number read from a
 * path, a query or a header goes through here (api_parse_u64 is its name
 * in the API). */
int names_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);

/* A real number in plain decimal, as a person writes a weight: an
 * optional '-', digits with an optional fraction, an optional exponent;
 * no hex, "inf", "nan", '+' or space (what strtod takes beyond that is no
 * number a person means).  NUL-terminated t; 0 with *out, else
 * RINGSIM_EPARAM (no message).  The command line and libringsim read
 * weights and parameters through it. */
int names_parse_decimal(const char *t, double *out);

/* "T,T,...": len bytes of comma-separated signed 64-bit decimals (each
 * -?[0-9]+, nothing else), at most max of them, as --tokens and
 * initial_token take them.  An empty text is no token (*n = 0).  0 with
 * *out (malloc'd, at least one element; the caller frees) and *n, else
 * RINGSIM_EPARAM (no message) or RINGSIM_ENOMEM. */
int names_parse_tokens(const char *text, size_t len, size_t max, int64_t **out, size_t *n);

#endif
