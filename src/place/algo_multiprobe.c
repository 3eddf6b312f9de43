/*
 * algo_multiprobe.c - multi-probe consistent hashing (alg_multiprobe.c) as
 * a placement algorithm: one point per node, `probes` probes per key, the
 * probe closest to its successor point wins.
 *
 * Cost: build O(n log n), a key O(probes log n).
 */
#include "alg_multiprobe.h"
#include "place_int.h"

static int multiprobe_build_op(placement *p, const place_from *from, rs_error *err)
{
    if (!p->n)
        return 0;
    int rc = multiprobe_points(from->h, p->anodes, p->n, &p->pts);
    if (rc)
        return rs_fail(err, rc, "out of memory");
    p->npts = p->n;
    return 0;
}

static void multiprobe_owner_of_hash(const placement *p, place_key_info *k)
{
    if (!p->npts)
        return;
    uint32_t h1 = (uint32_t)(k->hash >> 32), h2 = (uint32_t)k->hash | 1u, coord, probe;
    size_t i = multiprobe_lookup(p->pts, p->npts, h1, h2, (uint32_t)p->cfg.param[PP_PROBES], &coord,
                                 &probe);
    k->point = (long)i;
    k->owner = p->pts[i].node;
    k->coord = coord;
}

static void mp_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    (void)key;
    (void)len;
    k->hash = k->sha64; /* h1 = its high half (the position), h2 = its low half | 1 */
    k->has_coord = true;
    multiprobe_owner_of_hash(p, k);
}

static void multiprobe_trace(const placement *p, const char *key, size_t len,
                             const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    uint32_t h1 = (uint32_t)(k->hash >> 32), h2 = (uint32_t)k->hash | 1u;
    place__step(t, "hash", "SHA-256 of the key: h1 = bytes 0-3 = %u, h2 = bytes 4-7 OR 1 = %u", h1,
                h2);
    place__step(t, "probes", "%lld probes h1 + i*h2 (mod 2^32); each looks for its successor point",
                (long long)p->cfg.param[PP_PROBES]);
    if (k->point >= 0) {
        uint32_t c = (uint32_t)k->coord, pos = (uint32_t)p->pts[k->point].coord;
        place__step(t, "winner",
                    "the probe at %u is the closest to its successor: %u positions before "
                    "the point of %s",
                    c, pos - c, names[p->pts[k->point].node]);
    }
    place__trace_point(p, k, names, "point", t);
}

/* One point per node. */
static uint64_t multiprobe_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    (void)cfg;
    (void)nodes;
    return n;
}

const place_algo place_algo_multiprobe = {
    .name = "multiprobe",
    .title = "Multi-probe consistent hashing (Appleton & O'Reilly 2015)",
    .origin = "Google's multi-probe ring: one point per node, k probes per key, the probe "
              "closest to a point wins; balance of many virtual nodes without their memory",
    .key_hash = "SHA-256: h1 = first 32 bits, h2 = next 32 bits OR 1",
    .coord_name = "probe",
    .space = "4294967296",
    .params = {PP_PROBES},
    .nparams = 1,
    .weights = PLACE_W_NONE,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = -1,
    .coord_param = -1,
    .leave_local = true,
    .minimal = true,
    .top = place__top32,
    .build = multiprobe_build_op,
    .key = mp_key,
    .owner_of_hash = multiprobe_owner_of_hash,
    .prefs = place__walk_prefs,
    .trace = multiprobe_trace,
    .points = true,
    .layout_points = multiprobe_layout_points,
};
