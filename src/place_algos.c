/*
 * place_algos.c - the algorithm table: each entry wraps an algorithm core
 * (alg_*.c, or ring.c for the seed's ring) into the ops of place_int.h.
 * Behaviour lives in the cores; here is only how the engine sees them.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_int.h"

static uint64_t top32(const place_config *cfg)
{
    (void)cfg;
    return UINT32_MAX;
}


/* ---- ring: the original simulator ---- */

static int ring_build_op(placement *p, hasher *h, const placement *prev, const char *state,
                         rs_error *err)
{
    (void)prev;
    (void)state;
    ring_node *rn = malloc((p->n + 1) * sizeof *rn);
    if (!rn)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++)
        rn[i] = (ring_node){p->nodes[i].name, p->nodes[i].len,
                            place_node_points(&p->cfg, p->nodes[i].weight)};
    int rc = ring_build(&p->ring, h, rn, p->n);
    free(rn);
    if (rc)
        return rs_fail(err, rc, "out of memory building the ring");
    p->npts = ring_size(p->ring);
    p->pts = malloc((p->npts + 1) * sizeof *p->pts);
    if (!p->pts)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->npts; i++)
        p->pts[i] = (alg_point){ring_point_pos(p->ring, i), ring_point_node(p->ring, i),
                                ring_point_index(p->ring, i)};
    return 0;
}

static void ring_key(const placement *p, hasher *h, const char *key, size_t len,
                     place_key_info *k)
{
    (void)h;
    (void)key;
    (void)len;
    k->hash = k->coord = k->position;
    k->has_coord = true;
    long i = ring_successor(p->ring, k->position);
    if (i >= 0) {
        k->point = i;
        k->owner = p->pts[i].node;
    }
}

static void ring_trace(const placement *p, const char *key, size_t len,
                       const place_key_info *k, const char *const *names, json_t *t)
{
    (void)len;
    (void)key;
    place__step(t, "hash",
                "SHA-256 of the key; its first 4 bytes, big-endian, are the position %u",
                k->position);
    place__step(t, "ring", "%zu point%s on the ring (%lld per node, times the weight)",
                p->npts, p->npts == 1 ? "" : "s", (long long)p->cfg.param[PP_POINTS_PER_NODE]);
    place__trace_point(p, k, names, "point", t);
}

static const place_algo algo_ring = {
    .name = "ring",
    .title = "Consistent hashing ring (the original simulator)",
    .origin = "Karger et al. 1997; SHA-256 positions of name, name#1, ... with points_per_node "
              "virtual nodes; a key goes to the first point clockwise",
    .key_hash = "SHA-256, first 32 bits",
    .space = "4294967296",
    .params = {PP_POINTS_PER_NODE},
    .nparams = 1,
    .weights = PLACE_W_ANY,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_POS,
    .coord_param = -1,
    .minimal = true,
    .top = top32,
    .build = ring_build_op,
    .key = ring_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = ring_trace,
};

const place_algo *const place__algos[] = {&algo_ring, NULL};
