/*
 * alg.h - the common vocabulary of the placement algorithm cores.
 *
 * Each real system or textbook scheme that ringsim reproduces has a core in
 * its own alg_<name>.c: pure functions with no SQLite, no JSON and no engine
 * state, written from the system's own source and tested against the real
 * program.  place.c wraps the cores into its ops table.
 *
 * Vocabulary:
 *   alg_node   a server as the user typed it, in join order (index = ordinal).
 *   alg_point  a point of a ring-like layout.  `coord` is an ORDER-PRESERVING
 *              unsigned 64-bit coordinate: 32-bit hashes as they are, 64-bit
 *              unsigned hashes as they are, signed 64-bit tokens (Cassandra)
 *              as (uint64_t)token ^ 2^63, so that unsigned order is the
 *              system's own order.
 *   ring order a point array sorted the way the system sorts it, ties
 *              included: a key goes to the FIRST point whose coord is >= the
 *              key's coord, wrapping past the last to point 0
 *              (alg_successor).  A system that breaks ties differently sorts
 *              its array so that this rule gives its answer.
 *
 * The shape of every core (alg_<name>.h opens with "Reference:", the
 * upstream files and functions it reproduces and the quirks kept on purpose):
 *   <name>_key_hash / the system's own word (cassandra_token, redis_slot)
 *              the key's hash, cannot fail.
 *   <name>_build (cassandra_ring, maglev_build, redis_create...)
 *              the layout from alg_node[0..n): points in ring order or a
 *              table, malloc'd, the caller frees.
 *   <name>_lookup
 *              where a hash goes: a size_t index into the caller's points or
 *              table (n > 0 required, cannot fail); the textbook schemes
 *              whose published functions answer a signed bucket (jump_hash,
 *              memento_lookup, rendezvous_lookup) keep int32_t with -1 for
 *              "no bucket or node".
 *   errors     0 or a negative RINGSIM_E code (error.h).  A core that refuses
 *              what a user typed (a name, a weight, a parameter) fills the
 *              rs_error it takes last, so the message reaches the API; one
 *              whose only failure is memory, or a broken precondition of its
 *              caller, returns the bare code.  Never -1 or a positive value.
 */
#ifndef RINGSIM_ALG_H
#define RINGSIM_ALG_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct alg_node {
    const char *name; /* borrowed; UTF-8, not NUL-terminated necessarily */
    size_t len;
    double weight; /* > 0; whole numbers where the system wants them */
} alg_node;

typedef struct alg_point {
    uint64_t coord; /* order-preserving, see above */
    uint32_t node;  /* index into the alg_node array */
    uint32_t index; /* the point's number within its node */
} alg_point;

/* (coord, node, index) order: the order of ketama, nginx, twemproxy,
 * HAProxy and Envoy's ring, whose sorts end in insertion order (server,
 * then point).  A qsort comparator; alg_sort_points sorts with it.  The
 * seed's ring, Cassandra and multiprobe break ties by name and sort their
 * own way. */
int alg_point_cmp(const void *a, const void *b);
void alg_sort_points(alg_point *p, size_t n);
/* memcmp order of two names' bytes, the shorter first on a common prefix
 * (std::string's operator<, Java's unsigned byte order). */
int alg_bytes_cmp(const char *a, size_t al, const char *b, size_t bl);
/* A name and its index in the caller's array: sorted by name with
 * alg_named_sort, then found with alg_named_find (the index, or -1). */
typedef struct alg_named {
    const char *name;
    size_t len, idx;
} alg_named;
void alg_named_sort(alg_named *v, size_t n);
long alg_named_find(const alg_named *v, size_t n, const char *name, size_t len);
/* v in decimal digits into out (room for 20), no NUL; the length. */
size_t alg_put_u64(char *out, uint64_t v);
/* The rule of the algorithms without weights: 0 when node's weight is 1,
 * else RINGSIM_EPARAM, "<algorithm> has no weights (<why>): ..." in err. */
int alg_check_unweighted(const alg_node *node, const char *algorithm, const char *why, rs_error *err);

#define ALG_SIGNED_BIAS 0x8000000000000000ull

/* Order-preserving coordinate of a signed 64-bit token, and back. */
static inline uint64_t alg_from_signed(int64_t t) { return (uint64_t)t ^ ALG_SIGNED_BIAS; }
static inline int64_t alg_to_signed(uint64_t c) { return (int64_t)(c ^ ALG_SIGNED_BIAS); }

/* Index of the first point of p[lo..hi) with coord >= c, hi if none.
 * O(log(hi - lo)), cannot fail.  The one lower bound of every ring search
 * (ring.c narrows it to a bucket first). */
static inline size_t alg_lower_bound(const alg_point *p, size_t lo, size_t hi, uint64_t c)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].coord < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of the first point with coord >= c, wrapping to 0 past the last.
 * n must be > 0.  O(log n), cannot fail. */
static inline size_t alg_successor(const alg_point *p, size_t n, uint64_t c)
{
    size_t i = alg_lower_bound(p, 0, n, c);
    return i == n ? 0 : i;
}

#endif
