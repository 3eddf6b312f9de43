/*
 * moverun.h - an operation's moves packed into runs: the form the store
 * keeps them in (schema 7, table move_runs).
 *
 * A move is (key, from, to), from and to node names or NULL (unassigned).
 * A switch of algorithm at a million keys moves nearly all of them; kept as
 * one row each, with both names written out, its records cost more than the
 * table the switch rebuilds.  A run holds up to MOVERUN_MAX moves in two
 * blobs: `names`, the distinct names it uses, and `data`, each move as a
 * key and two indexes into those names.  Numbers are unsigned LEB128
 * varints; a name index is 0 for NULL, i + 1 for the i-th name:
 *
 *   names = (varint len, bytes)*      data = (varint len, key, varint from, varint to)*
 *
 * Adding a move costs a copy of its key and two lookups in a hash of the
 * run's names; reading one decodes only the run it is in.  Decoding checks
 * every length against the blob (a damaged file is refused, never read
 * past).
 */
#ifndef RINGSIM_MOVERUN_H
#define RINGSIM_MOVERUN_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"
#include "slots.h"

#define MOVERUN_MAX 4096         /* moves in one run */
#define MOVERUN_BYTES (1u << 20) /* a run is closed once its key bytes pass this */

typedef struct moverun_name {
    uint32_t hash;
    size_t off, len; /* in names.p, after the length varint */
} moverun_name;

/* A run being filled.  Zero-initialise; moverun_free releases it. */
typedef struct moverun {
    sbuf names, data;
    int64_t n;          /* moves in it */
    uint32_t count;     /* distinct names */
    moverun_name *name; /* name i of the run, cap of them */
    size_t cap;
    slots index; /* of name, by hash */
} moverun;

/* Append a move; 0 or RINGSIM_ENOMEM (the run is unchanged then). */
int moverun_add(moverun *r, const char *key, size_t len, const char *from, const char *to);
/* Whether the run should be written out before another move is added. */
int moverun_full(const moverun *r);
/* Empty it for the next run (keeps its memory). */
void moverun_clear(moverun *r);
/* Accepts NULL members; the struct itself is the caller's. */
void moverun_free(moverun *r);

/* Called for each move: key NUL-terminated, from and to names or NULL;
 * valid during the call only.  A non-zero answer stops the walk and is
 * returned. */
typedef int (*moverun_fn)(void *ud, const char *key, const char *from, const char *to);
/* Decode a stored run, skip its first `skip` moves and call fn for at most
 * `limit` (negative: all) of the rest; *seen counts the calls.  Returns 0,
 * fn's answer, RINGSIM_ENOMEM, or RINGSIM_ENOTDB when the blobs do not
 * hold n moves as described above. */
int moverun_each(const void *names, size_t names_len, const void *data, size_t data_len, int64_t n,
                 int64_t skip, int64_t limit, moverun_fn fn, void *ud, int64_t *seen);

#endif
