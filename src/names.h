/*
 * names.h - the name rules of API.md: node names and keys are UTF-8 strings
 * of 1 to 255 bytes with no control characters (U+0000-U+001F, U+007F).
 * Validation is one pass over the bytes, no allocation.
 */
#ifndef RINGSIM_NAMES_H
#define RINGSIM_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define NAME_MAX_BYTES 255

/* 0 when the len bytes at s form a valid name, else RINGSIM_ENAME with a
 * message naming `what` ("node name", "key") in err (may be NULL). */
int name_check(const char *s, size_t len, const char *what, rs_error *err);

/* Whether the bytes are well-formed UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s, size_t len);

#endif
