/*
 * algo_ketama.c - libmemcached's ketama (alg_ketama.c) as a placement
 * algorithm: the weighted MD5 continuum, and as its variant the unweighted
 * continuum of modes ketama and consistent (100 points per server, the
 * key hash of "host:port-i").
 *
 * Each placement holds the fetched MD5 digest (p->extra); every hash
 * takes a context of its own on the stack, so lookups may run on many
 * threads (alg_ketama.h).  Cost: build O(160 n log n), a key one
 * hash and O(log points).
 */
#include "alg_ketama.h"
#include "place_int.h"

static int ketama_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    if (!(p->extra = alg_md5_new()))
        return rs_fail(err, RINGSIM_ENOMEM, "OpenSSL has no MD5");
    if (!p->n)
        return 0;
    return ketama_build(p->extra, p->anodes, p->n, &p->pts, &p->npts, err);
}

static int ketama_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    (void)cfg;
    for (size_t i = 0; i < n; i++) {
        ketama_server sv;
        int rc = ketama_parse_name(nodes[i].name, nodes[i].len, &sv, err);
        if (rc)
            return rc;
    }
    return 0;
}

static void ketama_free(placement *p) { alg_md5_free(p->extra); }

/* The key hash in force: key_hash, or what the mode sets. */
static ketama_hash_fn ketama_fn(const place_config *cfg)
{
    return ketama_hash_resolve((ketama_mode)cfg->param[PP_KETAMA_MODE],
                               (ketama_hash_fn)cfg->param[PP_KETAMA_HASH]);
}

static void ketama_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    /* p->extra keeps no scratch: lookups may run on many threads. */
    place__point_key(p, ketama_hash(p->extra, ketama_fn(&p->cfg), key, len), k);
}

/* The hash step of a trace, in the library's words. */
static void ketama_hash_step(const placement *p, const place_key_info *k, json_t *t)
{
    ketama_hash_fn fn = ketama_fn(&p->cfg);
    if (fn == KETAMA_HASH_MD5)
        place__step(t, "hash", "MD5 of the key; its first 4 bytes, little-endian, are %llu",
                    (unsigned long long)k->hash);
    else
        place__step(t, "hash", "libhashkit's %s of the key is %llu%s", ketama_hash_names[fn],
                    (unsigned long long)k->hash,
                    fn == KETAMA_HASH_CRC ? " (crc keeps 15 bits: every key hashes below 32768, "
                                            "so few points ever take keys)"
                                          : "");
}

static void ketama_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                         const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    ketama_hash_step(p, k, t);
    place__step(t, "continuum",
                "%zu points: each server gets 160 x its share of the weight x the number of "
                "servers (in float, rounded down to a multiple of 4), 4 per MD5 of "
                "\"host:port-i\"",
                p->npts);
    if (k->point >= 0) {
        const alg_point *pt = &p->pts[k->point];
        ketama_server sv;
        char label[KETAMA_LABEL_MAX];
        if (!ketama_parse_name(p->nodes[pt->node].name, p->nodes[pt->node].len, &sv, NULL)) {
            ketama_label(&sv, pt->index / 4, label);
            place__step(t, "point", "the point is word %u of MD5(\"%s\")", pt->index % 4, label);
        }
    }
    place__trace_point(p, k, names, "point", t);
}

/* 160 points per server shared out by weight, rounded to fours: at most
 * 160 x n plus 4 per server. */
static uint64_t ketama_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    (void)cfg;
    (void)nodes;
    return 160u * (uint64_t)n + 4u * (uint64_t)n;
}

/* ---- ketama, modes ketama and consistent: the unweighted continuum ---- */

static int ketama_unweighted_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    if (!(p->extra = alg_md5_new()))
        return rs_fail(err, RINGSIM_ENOMEM, "OpenSSL has no MD5");
    if (!p->n)
        return 0;
    return ketama_build_unweighted(p->extra, ketama_fn(&p->cfg), p->anodes, p->n, &p->pts, &p->npts,
                                   err);
}

static void ketama_unweighted_trace(const placement *p, const char *key, size_t len,
                                    const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    ketama_hash_step(p, k, t);
    place__step(t, "continuum",
                "%zu points: mode %s builds libmemcached's unweighted continuum, 100 points per "
                "server whatever its weight, point i the %s of \"host:port-i\"",
                p->npts, ketama_mode_names[p->cfg.param[PP_KETAMA_MODE]],
                ketama_hash_names[ketama_fn(&p->cfg)]);
    if (k->point >= 0) {
        const alg_point *pt = &p->pts[k->point];
        ketama_server sv;
        char label[KETAMA_LABEL_MAX];
        if (!ketama_parse_name(p->nodes[pt->node].name, p->nodes[pt->node].len, &sv, NULL)) {
            ketama_label(&sv, pt->index, label);
            place__step(t, "point", "the point is the hash of \"%s\"", label);
        }
    }
    place__trace_point(p, k, names, "point", t);
}

static uint64_t ketama_unweighted_layout_points(const place_config *cfg, const place_node *nodes,
                                                size_t n)
{
    (void)cfg;
    (void)nodes;
    return (uint64_t)KETAMA_POINTS_UNWEIGHTED * n;
}

static const place_algo algo_ketama_unweighted = {
    .name = "ketama",
    .title = "memcached clients: libmemcached's unweighted continuum (modes ketama, consistent)",
    .origin = "libmemcached 1.1 with MEMCACHED_BEHAVIOR_KETAMA (pylibmc's ketama: True) or "
              "--DISTRIBUTION=consistent: 100 points per server, each the key hash of "
              "\"host:port-i\"; weights are not used; the key hash one_at_a_time unless set",
    .key_hash = "key_hash (auto: one_at_a_time)",
    .space = "4294967296",
    .params = {PP_KETAMA_MODE, PP_KETAMA_HASH},
    .nparams = 2,
    .weights = PLACE_W_NONE,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = PP_KETAMA_HASH,
    .minimal = true, /* a server's points do not depend on the others */
    .top = place__top32,
    .check_nodes = ketama_check,
    .build = ketama_unweighted_build_op,
    .free_extra = ketama_free,
    .key = ketama_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = ketama_unweighted_trace,
    .points = true,
    .layout_points = ketama_unweighted_layout_points,
    .down = PLACE_DOWN_REBUILD,
};

static const place_variant ketama_variants[] = {
    {PP_KETAMA_MODE, KETAMA_MODE_KETAMA, &algo_ketama_unweighted},
    {PP_KETAMA_MODE, KETAMA_MODE_CONSISTENT, &algo_ketama_unweighted},
};

const place_algo place_algo_ketama = {
    .name = "ketama",
    .title = "memcached clients: libmemcached's weighted ketama",
    .origin = "libmemcached 1.1 (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED): MD5 continuum of "
              "160 points per server scaled by weight; the default of most memcached "
              "clients; mode ketama or consistent for the unweighted continuum",
    .key_hash = "MD5, first 32 bits little-endian (key_hash auto)",
    .coord_name = "continuum point",
    .space = "4294967296",
    .params = {PP_KETAMA_MODE, PP_KETAMA_HASH},
    .nparams = 2,
    .variants = ketama_variants,
    .nvariants = 2,
    .weights = PLACE_W_WHOLE,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = PP_KETAMA_HASH,
    .top = place__top32,
    .check_nodes = ketama_check,
    .build = ketama_build_op,
    .free_extra = ketama_free,
    .key = ketama_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = ketama_trace,
    .points = true,
    .layout_points = ketama_layout_points,
    .down = PLACE_DOWN_REBUILD,
};
