/*
 * keyfile.h - keys from a text, one a line: `ringsim key add --file F` and
 * `ringsim key add -` (standard input), streamed into one insert.
 *
 * The rules of a line: a trailing "\r" is dropped (files written on
 * Windows), a UTF-8 byte order mark at the start of the text is dropped,
 * an empty line is skipped (a key is never empty), and anything else is
 * the key byte for byte -- spaces included, nothing trimmed, no comments:
 * a key may start with '#'.  Every key follows the name rules (names.h).
 *
 * Two passes, memory for one line (NAME_MAX_BYTES + 2 bytes) whatever the
 * size of the text: keyfile_open reads it all once, checks every line and
 * counts the keys -- a refusal names the line, before anything is
 * changed --; keyfile_next then gives the keys again for the insert
 * (sim_insert_keys_each).  A regular file is read twice (standard input
 * redirected from one too, from where it stands); a pipe, a terminal or
 * anything else that cannot seek is kept meanwhile in an unlinked
 * temporary file ($TMPDIR, else /tmp) with the keys alone.  A file changed
 * between the passes makes the insert fail whole (its count or a key no
 * longer agrees), never a half-applied change.
 */
#ifndef RINGSIM_KEYFILE_H
#define RINGSIM_KEYFILE_H

#include <stdint.h>

#include "error.h"
#include "sim.h"

typedef struct keyfile keyfile;

/* Read path ("-": standard input) once and check it: 0 with *out, or
 * RINGSIM_ENAME ("F line N: ...") for a line that is not a key,
 * RINGSIM_EPARAM for a text with no key or a file that cannot be read
 * (the system's reason), RINGSIM_EFULL when the temporary copy cannot be
 * written, RINGSIM_ENOMEM.  Free with keyfile_close. */
int keyfile_open(keyfile **out, const char *path, rs_error *err);
/* The number of keys, and the first (valid until keyfile_close). */
uint64_t keyfile_count(const keyfile *kf);
sim_str keyfile_first(const keyfile *kf);
/* A sim_key_next_fn over the keys, from the first, ud a keyfile. */
int keyfile_next(void *ud, sim_str *key, rs_error *err);
/* Accepts NULL. */
void keyfile_close(keyfile *kf);

#endif
