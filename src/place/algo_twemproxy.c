/*
 * algo_twemproxy.c - twemproxy (nutcracker) with distribution ketama
 * (alg_twemproxy.c) as a placement algorithm: an MD5 continuum of 160
 * points per server scaled by weight in float, labels "NAME-i", the pool's
 * hash on keys (some not 32 bits wide).
 *
 * Each placement holds an MD5 context (p->extra), as ketama's.  Cost:
 * build O(160 n log n), a key one hash and O(log points).
 */
#include "alg_twemproxy.h"
#include "place_int.h"

static int twemproxy_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    (void)cfg;
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += nodes[i].weight;
    if (total > TW_MAX_WEIGHT)
        return rs_fail(err, RINGSIM_EPARAM,
                       "twemproxy adds the weights in 32 bits: their sum must be at most %.0f",
                       TW_MAX_WEIGHT);
    return 0;
}

static int twemproxy_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    if (!(p->extra = alg_md5_new()))
        return rs_fail(err, RINGSIM_ENOMEM, "OpenSSL has no MD5");
    if (!p->n)
        return 0;
    return twemproxy_build(p->extra, p->anodes, p->n, &p->pts, &p->npts, err);
}

static void twemproxy_free(placement *p) { alg_md5_free(p->extra); }

/* nc_ketama.c: 160 points per server shared out by weight, rounded to
 * fours: at most 160 x n plus 4 per server (ketama's bound). */
static uint64_t twemproxy_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    (void)cfg;
    (void)nodes;
    return 160u * (uint64_t)n + 4u * (uint64_t)n;
}

static void twemproxy_key(const placement *p, hasher *h, const char *key, size_t len,
                          place_key_info *k)
{
    (void)h;
    /* nutcracker skips the hash in a pool of one server (same owner); the
     * coordinate stays the hash, so that it depends on the key alone. */
    place__point_key(p, twemproxy_hash((twemproxy_hash_fn)p->cfg.param[PP_HASH], p->extra, key, len),
                     k);
}

static void twemproxy_trace(const placement *p, const char *key, size_t len,
                            const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    twemproxy_hash_fn fn = (twemproxy_hash_fn)p->cfg.param[PP_HASH];
    place__step(t, "hash", "hash: %s of the key is %llu", twemproxy_hash_names[fn],
                (unsigned long long)k->hash);
    if (fn == TW_CRC32)
        place__step(t, "narrow",
                    "nutcracker's crc32 keeps 15 bits of the CRC ((~crc >> 16) & 0x7fff): "
                    "every key hashes to 0..32767, so every key goes to the point that follows "
                    "(one server takes them all)");
    else if (fn == TW_CRC16 && k->hash < 65536)
        place__step(t, "narrow",
                    "nutcracker's crc16 never masks its 32-bit accumulator: only keys of one "
                    "or two bytes stay this low");
    else if (fn == TW_FNV1A_64)
        place__step(t, "truncated",
                    "fnv1a_64 is computed in 32 bits (basis 0x84222325, prime 0x1b3): not the "
                    "64-bit FNV-1a");
    place__step(t, "continuum",
                "%zu points: each server gets 160 x its share of the weight x the number of "
                "servers (in float, rounded down to a multiple of 4), 4 per MD5 of \"NAME-i\"",
                p->npts);
    if (k->point >= 0) {
        const alg_point *pt = &p->pts[k->point];
        place__step(t, "point", "the point is word %u of MD5(\"%.200s-%u\")", pt->index % 4,
                    names[pt->node], pt->index / 4);
    }
    place__trace_point(p, k, names, "point", t);
}

const place_algo place_algo_twemproxy = {
    .name = "twemproxy",
    .title = "twemproxy (nutcracker): distribution ketama",
    .origin = "nutcracker 0.5 nc_ketama.c: MD5 continuum of 160 points per server scaled by "
              "weight in float, labels \"NAME-i\" where NAME is nutcracker's server name (the "
              "`name` field, else host, with \":port\" unless it is 11211); the pool's hash, "
              "some not 32 bits wide",
    .key_hash = "the pool's hash (default fnv1a_64, in 32 bits)",
    .coord_name = "continuum point",
    .space = "4294967296",
    .params = {PP_HASH},
    .nparams = 1,
    .weights = PLACE_W_WHOLE,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = PP_HASH,
    .top = place__top32,
    .check_nodes = twemproxy_check,
    .build = twemproxy_build_op,
    .free_extra = twemproxy_free,
    .key = twemproxy_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = twemproxy_trace,
    .points = true,
    .layout_points = twemproxy_layout_points,
    .down = PLACE_DOWN_REBUILD,
};
