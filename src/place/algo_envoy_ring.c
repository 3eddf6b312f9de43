/*
 * algo_envoy_ring.c - Envoy's RING_HASH load balancer (alg_envoy_ring.c)
 * as a placement algorithm: an xxHash64 ring sized between min_ring_size
 * and max_ring_size, hosts weighted by their share.
 *
 * Cost: build O(ring size log ring size), a key one xxHash64 and
 * O(log ring size).
 */
#include <math.h>

#include "alg_envoy_ring.h"
#include "place_int.h"

static int envoy_ring_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    if (!p->n)
        return 0;
    return envoy_ring_build(p->anodes, p->n, (uint64_t)p->cfg.param[PP_MIN_RING_SIZE],
                            (uint64_t)p->cfg.param[PP_MAX_RING_SIZE], &p->pts, &p->npts, err);
}

static void envoy_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    place__point_key(p, envoy_key_hash(key, len), k);
}

static void envoy_ring_trace(const placement *p, const char *key, size_t len,
                             const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    place__step(t, "hash", "xxHash64 (seed 0) of the key is %llu", (unsigned long long)k->hash);
    place__step(t, "ring",
                "%zu entries: min_ring_size %lld scaled so the lightest host gets at least "
                "one, at most max_ring_size %lld; each is xxHash64 of \"<host>_<i>\"",
                p->npts, (long long)p->cfg.param[PP_MIN_RING_SIZE],
                (long long)p->cfg.param[PP_MAX_RING_SIZE]);
    place__trace_point(p, k, names, "ring entry", t);
}

/* Ring::Ring(): the ring holds about min(ceil(min_w * min_ring_size) /
 * min_w, max_ring_size) points, weights normalised, plus one per host. */
static uint64_t envoy_ring_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    if (!n)
        return 0;
    double wsum = 0, wmin = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double w = place__weight(&nodes[i]);
        wsum += w;
        wmin = w < wmin ? w : wmin;
    }
    double mw = wmin / wsum;
    double scale = fmin(ceil(mw * (double)cfg->param[PP_MIN_RING_SIZE]) / mw,
                        (double)cfg->param[PP_MAX_RING_SIZE]);
    return (uint64_t)ceil(scale) + n + 1;
}

const place_algo place_algo_envoy_ring = {
    .name = "envoy-ring",
    .title = "Envoy: RING_HASH load balancer",
    .origin = "Envoy's ring_hash_lb: xxHash64 ring sized between min_ring_size and "
              "max_ring_size, hosts weighted by their share; node names are hash keys",
    .key_hash = "xxHash64, seed 0",
    .coord_name = "ring hash",
    .space = "18446744073709551616",
    .params = {PP_MIN_RING_SIZE, PP_MAX_RING_SIZE, PP_PANIC_THRESHOLD, PP_HASH_BALANCE_FACTOR},
    .nparams = 4,
    .weights = PLACE_W_WHOLE,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = -1,
    .bound = PLACE_BOUND_ENVOY,
    .bound_param = PP_HASH_BALANCE_FACTOR,
    .top = place__top64,
    .build = envoy_ring_build_op,
    .key = envoy_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = envoy_ring_trace,
    .points = true,
    .layout_points = envoy_ring_layout_points,
    .down = PLACE_DOWN_REBUILD,
    .panic = true,
};
