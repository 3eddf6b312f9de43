/*
 * place.h - placement algorithms behind one interface.
 *
 * A placement answers one question: which node owns a key?  It is built from
 * the configuration and the node list and is immutable afterwards.  Arc-based
 * algorithms (the seed's "ring") also expose their points, which lets the
 * engine find exactly the arcs that change hands between two placements;
 * for any other algorithm the engine falls back to re-placing every key.
 *
 * Adding an algorithm: one entry in the table in place.c with a build and an
 * owner function.  The engine, store and API do not change.
 */
#ifndef RINGSIM_PLACE_H
#define RINGSIM_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hash.h"
#include "ring.h"

#define PLACE_MAX_POINTS_PER_NODE 10000u /* configured points_per_node */
#define PLACE_MAX_NODE_POINTS 100000u    /* after weighting */

typedef struct place_config {
    char algorithm[32];       /* "ring" */
    uint32_t points_per_node; /* 1 .. PLACE_MAX_POINTS_PER_NODE */
} place_config;

/* A node as the placement sees it; the name is borrowed for the placement's
 * lifetime. */
typedef struct place_node {
    const char *name;
    size_t len;
    double weight;
} place_node;

typedef struct placement placement;

/* The defaults of the original simulator: "ring", one point per node. */
void place_config_default(place_config *cfg);
/* 0 if cfg names a known algorithm with parameters in range, else
 * RINGSIM_EPARAM with a message. */
int place_config_check(const place_config *cfg, rs_error *err);
/* Names of the known algorithms, NULL-terminated. */
const char *const *place_algorithms(void);

/* Points of a node: max(1, round(points_per_node * weight)). */
uint32_t place_node_points(const place_config *cfg, double weight);

/* Build a placement.  Node indexes are indexes into nodes[].  0, or
 * RINGSIM_ENOMEM / RINGSIM_EPARAM with err filled. */
int place_build(placement **out, hasher *h, const place_config *cfg,
                const place_node *nodes, size_t n, rs_error *err);
/* Accepts NULL. */
void place_free(placement *p);

/* Owner node index of a key (its position and its bytes), -1 with no node. */
long place_owner(const placement *p, uint32_t pos, const char *key, size_t len);
/* The ring of an arc-based placement, NULL for other algorithms. */
const ring *place_ring(const placement *p);
/* Each node's share of the key space into share[n] (zeroed first). */
void place_arc_shares(const placement *p, double *share, size_t n);

#endif
