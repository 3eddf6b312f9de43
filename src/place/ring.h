/*
 * ring.h - the seed's points, and the successor search every ring of points
 * answers through.
 *
 * A node with P points owns the positions of the labels "name", "name#1", ...
 * "name#(P-1)".  ring_points sorts them by (position, node name as bytes,
 * point index) -- docs/api.md's order for equal positions -- into the
 * alg_point array every layout of points shares (alg.h).
 *
 * A ring is an index over such an array in ring order, whatever algorithm
 * built it (the seed's ring, ketama, nginx, Envoy's ring hash, Cassandra's
 * tokens...): a table on the top bits of the coordinate narrows
 * alg_successor's binary search to a bucket.
 *   ring_points  O(P log P) for P points in all (one SHA-256 per point)
 *   ring_index   O(P + 2^16)
 *   successor    O(1) expected over uniform coordinates, no allocation
 * Both are immutable once built; build new ones for a new topology.
 */
#ifndef RINGSIM_RING_H
#define RINGSIM_RING_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"
#include "hash.h"

/* Room for the longest label: a 255-byte name, "#", 10 digits, NUL. */
#define NAME_LABEL_MAX 268

/* What the seed's ring needs to know of a node.  The name is borrowed for
 * the call. */
typedef struct ring_node {
    const char *name;
    size_t len;
    uint32_t points; /* >= 1 */
} ring_node;

/* The seed's points over nodes[0..n) in ring order: coord is the 32-bit
 * position, node an index into nodes, index the point's number.  *out is
 * malloc'd (free() it), *npts its length.  0 or RINGSIM_ENOMEM (*out NULL). */
int ring_points(alg_point **out, size_t *npts, hasher *h, const ring_node *nodes, size_t n);

/* ring_points again after a change of topology: prev[0..nprev) is what
 * ring_points gave for prev_nodes[0..prev_n).  A node of the same name and
 * number of points keeps its points (relabelled), the others are hashed,
 * and the two sorted runs are merged: O(P) instead of P hashes and a sort,
 * with the same result as ring_points(nodes). */
int ring_points_from(alg_point **out, size_t *npts, hasher *h, const ring_node *nodes, size_t n,
                     const alg_point *prev, size_t nprev, const ring_node *prev_nodes, size_t prev_n);

typedef struct ring ring;

/* An index over pts[0..n) in ring order, coordinates in [0, top].  pts is
 * borrowed: it must outlive the ring and not change.  0 or RINGSIM_ENOMEM
 * (*out NULL). */
int ring_index(ring **out, const alg_point *pts, size_t n, uint64_t top);
/* Accepts NULL. */
void ring_free(ring *r);

/* Number of points (0 for an empty ring or NULL). */
size_t ring_size(const ring *r);
/* Index of the point that owns c: the first point at or after c, wrapping
 * to point 0 -- alg_successor's answer.  -1 when the ring is empty.
 * Cannot fail. */
long ring_successor(const ring *r, uint64_t c);
/* Bytes the index takes beyond the points it borrows. */
size_t ring_memory_bytes(const ring *r);

/* The label of point idx of a node: "name" or "name#idx".  out must hold
 * len + 12 bytes; returns the label length. */
size_t ring_label(char *out, const char *name, size_t len, uint32_t idx);

#endif
