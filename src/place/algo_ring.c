/*
 * algo_ring.c - the seed's ring as a placement algorithm: SHA-256
 * positions of "name", "name#1", ... (points_per_node x weight points per
 * node, ring.c), a key going to the first point clockwise of its position.
 *
 * The adaptor only hands the nodes to ring.c and describes the result; a
 * change of topology passes the previous points, so the nodes that stay
 * keep theirs.  Cost: build O(points log points), a key O(log points).
 */
#include <math.h>
#include <stdlib.h>

#include "place_int.h"

static int ring_build_op(placement *p, const place_from *from, rs_error *err)
{
    ring_node *rn = malloc((p->n + 1) * sizeof *rn);
    if (!rn)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++)
        rn[i] = (ring_node){p->nodes[i].name, p->nodes[i].len,
                            place_node_points(&p->cfg, p->nodes[i].weight)};
    /* After a change of topology, the nodes that stay keep their points. */
    const placement *q = from->prev;
    ring_node *qn = q && q->pts ? malloc((q->n + 1) * sizeof *qn) : NULL;
    for (size_t i = 0; qn && i < q->n; i++)
        qn[i] = (ring_node){q->nodes[i].name, q->nodes[i].len,
                            place_node_points(&q->cfg, q->nodes[i].weight)};
    int rc = qn ? ring_points_from(&p->pts, &p->npts, from->h, rn, p->n, q->pts, q->npts, qn, q->n)
                : ring_points(&p->pts, &p->npts, from->h, rn, p->n);
    free(qn);
    free(rn);
    return rc ? rs_fail(err, rc, "out of memory building the ring") : 0;
}

/* points_per_node x weight points per node, each within the limit. */
static int ring_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (round((double)cfg->param[PP_POINTS_PER_NODE] * nodes[i].weight) > PLACE_MAX_NODE_POINTS)
            return rs_fail(err, RINGSIM_EPARAM,
                           "points_per_node x weight must be at most %u points per node",
                           PLACE_MAX_NODE_POINTS);
    return 0;
}

static uint64_t ring_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += place__points(cfg->param[PP_POINTS_PER_NODE], place__weight(&nodes[i]));
    return total;
}

static void ring_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    (void)key;
    (void)len;
    place__point_key(p, k->position, k);
}

static void ring_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                       const char *const *names, json_t *t)
{
    (void)len;
    (void)key;
    place__step(t, "hash", "SHA-256 of the key; its first 4 bytes, big-endian, are the position %u",
                k->position);
    place__step(t, "ring", "%zu point%s on the ring (%lld per node, times the weight)", p->npts,
                p->npts == 1 ? "" : "s", (long long)p->cfg.param[PP_POINTS_PER_NODE]);
    place__trace_point(p, k, names, "point", t);
}

const place_algo place_algo_ring = {
    .name = "ring",
    .title = "Consistent hashing ring (the original simulator)",
    .origin = "Karger et al. 1997; SHA-256 positions of name, name#1, ... with points_per_node "
              "virtual nodes; a key goes to the first point clockwise",
    .key_hash = "SHA-256, first 32 bits",
    .space = "4294967296",
    .params = {PP_POINTS_PER_NODE, PP_BALANCE_FACTOR},
    .nparams = 2,
    .weights = PLACE_W_ANY,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_POS,
    .coord_param = -1,
    .minimal = true,
    .bound = PLACE_BOUND_MTZ,
    .bound_param = PP_BALANCE_FACTOR,
    .top = place__top32,
    .check_nodes = ring_check,
    .layout_points = ring_layout_points,
    .build = ring_build_op,
    .key = ring_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = ring_trace,
    .points = true,
};
