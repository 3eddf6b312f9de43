/*
 * ring.h - a consistent-hashing ring: sorted points, successor search.
 *
 * A node with P points owns the positions of the labels "name", "name#1", ...
 * "name#(P-1)".  Points are kept sorted by (position, node name as bytes,
 * point index) -- docs/api.md's order for equal positions -- in parallel arrays so
 * that the successor search touches only a dense uint32_t array:
 *   build   O(P log P) for P points in all (one SHA-256 per point)
 *   lookup  O(log P), no allocation, no hashing
 * A ring is immutable once built; build a new one for a new topology.
 */
#ifndef RINGSIM_RING_H
#define RINGSIM_RING_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hash.h"

/* Room for the longest label: a 255-byte name, "#", 10 digits, NUL. */
#define NAME_LABEL_MAX 268

/* What the ring needs to know of a node.  The name is borrowed: it must
 * outlive the ring (the ring keeps the pointer for ordering only while
 * building, and for ring_point_label afterwards). */
typedef struct ring_node {
    const char *name;
    size_t len;
    uint32_t points; /* >= 1 */
} ring_node;

typedef struct ring ring;

/* Build a ring over nodes[0..n).  Node indexes in the ring are indexes into
 * that array.  Returns 0 or RINGSIM_ENOMEM; *out is NULL on failure. */
int ring_build(ring **out, hasher *h, const ring_node *nodes, size_t n);
/* Accepts NULL. */
void ring_free(ring *r);

/* Number of points (0 for an empty ring). */
size_t ring_size(const ring *r);
/* Index of the point that owns pos: the first point at or after pos,
 * wrapping to point 0.  -1 when the ring is empty.  Cannot fail. */
long ring_successor(const ring *r, uint32_t pos);
/* Position, node index and point index of point i (i < ring_size). */
uint32_t ring_point_pos(const ring *r, size_t i);
uint32_t ring_point_node(const ring *r, size_t i);
uint32_t ring_point_index(const ring *r, size_t i);
/* Owner node index of pos, -1 when empty. */
long ring_owner(const ring *r, uint32_t pos);
/* Add each node's share of the ring (arc lengths / 2^32) into share[n]. */
void ring_arc_shares(const ring *r, double *share, size_t n);

/* The label of point idx of a node: "name" or "name#idx".  out must hold
 * len + 12 bytes; returns the label length. */
size_t ring_label(char *out, const char *name, size_t len, uint32_t idx);

#endif
