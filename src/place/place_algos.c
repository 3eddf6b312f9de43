/*
 * place_algos.c - the algorithm table: each entry wraps an algorithm core
 * (alg_*.c, or ring.c for the seed's ring) into the ops of place_int.h.
 * Behaviour lives in the cores; here is only how the engine sees them.
 *
 * One build path for all (place_build): it makes the cores' alg_node view
 * (p->anodes) and the ids, calls the entry's build with what the layout
 * starts from (place_from), then builds the successor index over the points
 * and counts each node's points, slots or entries; a failure anywhere frees
 * everything.  An entry's build only hands p->anodes to its core.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_cassandra.h"
#include "alg_envoy.h"
#include "alg_envoy_ring.h"
#include "alg_haproxy.h"
#include "alg_jump.h"
#include "alg_ketama.h"
#include "alg_maglev.h"
#include "alg_memento.h"
#include "alg_multiprobe.h"
#include "alg_rendezvous.h"
#include "alg_nginx.h"
#include "alg_redis.h"
#include "alg_twemproxy.h"
#include "place_int.h"

static uint64_t top32(const place_config *cfg)
{
    (void)cfg;
    return UINT32_MAX;
}

static uint64_t top64(const place_config *cfg)
{
    (void)cfg;
    return UINT64_MAX;
}

/* Whether a node holds the key; when none does, the trace's last step says
 * so. */
static bool trace_owned(const place_key_info *k, json_t *t)
{
    if (k->owner >= 0)
        return true;
    place__step(t, "owner", "there is no node: the key waits unassigned");
    return false;
}

/* The hash step of the algorithms that place sha64 itself (jump,
 * rendezvous), then trace_owned. */
static bool trace_sha64(const place_key_info *k, json_t *t)
{
    place__step(t, "hash", "sha64: the first 8 bytes of SHA-256 of the key, big-endian: %llu",
                (unsigned long long)k->hash);
    return trace_owned(k, t);
}

/* A key of a point ring whose coordinate is its hash: the successor. */
static void point_key(const placement *p, uint64_t hash, place_key_info *k)
{
    k->hash = k->coord = hash;
    k->has_coord = true;
    place__point_owner(p, k);
}

/* ---- ring: the original simulator ---- */

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
    point_key(p, k->position, k);
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

static const place_algo algo_ring = {
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
    .top = top32,
    .check_nodes = ring_check,
    .layout_points = ring_layout_points,
    .build = ring_build_op,
    .key = ring_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = ring_trace,
    .points = true,
};

/* ---- ketama: libmemcached ---- */

static int ketama_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    if (!(p->extra = ketama_md5_new()))
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

static void ketama_free(placement *p) { ketama_md5_free(p->extra); }

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
    point_key(p, ketama_hash(p->extra, ketama_fn(&p->cfg), key, len), k);
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
    if (!(p->extra = ketama_md5_new()))
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
    .top = top32,
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

static const place_algo algo_ketama = {
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
    .top = top32,
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

/* ---- nginx: hash $key consistent ---- */

static int nginx_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    return nginx_build(p->anodes, p->n, &p->pts, &p->npts, err);
}

static void nginx_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    point_key(p, nginx_key_hash(key, len), k);
}

static void nginx_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                        const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    place__step(t, "hash", "CRC-32 of the key's bytes is %llu", (unsigned long long)k->hash);
    place__step(t, "points",
                "%zu points: 160 per unit of weight per server, each the CRC-32 of host, "
                "port and the previous point's hash; equal hashes dropped",
                p->npts);
    place__trace_point(p, k, names, "point", t);
}

/* 160 points per unit of weight. */
static uint64_t nginx_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    (void)cfg;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += (uint64_t)fmin(ceil(place__weight(&nodes[i])), 1e9) * 160u;
    return total;
}

/* ---- nginx: hash $key; (no consistent): a modulo of the total weight ---- */

/* extra: the down flags nginx_plain_pick reads (NULL while all are up). */
static int nginx_hash_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    bool any = false;
    for (size_t i = 0; i < p->n; i++)
        any |= p->nodes[i].down;
    if (!any)
        return 0;
    bool *down = malloc(p->n * sizeof *down);
    if (!down)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++)
        down[i] = p->nodes[i].down;
    p->extra = down;
    return 0;
}

static void nginx_hash_free(placement *p) { free(p->extra); }

/* nginx reads a weight into an ngx_int_t; ringsim keeps them in int range. */
static int nginx_hash_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    (void)cfg;
    for (size_t i = 0; i < n; i++)
        if (nodes[i].weight > 2147483647.0)
            return rs_fail(
                err, RINGSIM_EPARAM, "nginx weights are at most 2147483647: \"%.*s\" has %g",
                (int)(nodes[i].len > 64 ? 64 : nodes[i].len), nodes[i].name, nodes[i].weight);
    return 0;
}

static void nginx_hash_owner_of_hash(const placement *p, place_key_info *k)
{
    if (!p->n)
        return;
    uint64_t total = 0;
    for (size_t i = 0; i < p->n; i++)
        total += (uint64_t)p->nodes[i].weight;
    k->owner = (long)nginx_plain_peer(p->anodes, p->n, total, (uint32_t)k->hash);
}

static void nginx_hash_key(const placement *p, hasher *h, const char *key, size_t len,
                           place_key_info *k)
{
    (void)h;
    k->hash = nginx_plain_hash(key, len, 0);
    k->has_coord = false;
    nginx_hash_owner_of_hash(p, k);
}

static long nginx_hash_serve(const placement *p, const char *key, size_t len, const place_key_info *k)
{
    (void)k;
    return nginx_plain_pick(p->anodes, p->extra, p->n, key, len, NULL);
}

/* Exact shares: the first hash takes 32768 values, each a peer. */
static void nginx_hash_shares(const placement *p, double *share)
{
    for (uint32_t h = 0; h < 32768; h++) {
        place_key_info k = {.hash = h, .owner = -1, .point = -1};
        nginx_hash_owner_of_hash(p, &k);
        share[k.owner] += 1.0 / 32768.0;
    }
}

static void nginx_hash_owns(const placement *p, uint32_t r, double *owns)
{
    (void)r; /* no replicas: r is 1 */
    nginx_hash_shares(p, owns);
}

static void nginx_hash_trace(const placement *p, const char *key, size_t len,
                             const place_key_info *k, const char *const *names, json_t *t)
{
    uint64_t total = 0;
    for (size_t i = 0; i < p->n; i++)
        total += (uint64_t)p->nodes[i].weight;
    place__step(t, "hash",
                "CRC-32 of the key, bits 16-30 ((crc32 >> 16) & 0x7fff, Cache::Memcached's "
                "hash): %llu",
                (unsigned long long)k->hash);
    if (!trace_owned(k, t))
        return;
    place__step(t, "modulo",
                "%llu mod the total weight %llu = %llu: walking the servers in order, "
                "subtracting each one's weight, lands on %s",
                (unsigned long long)k->hash, (unsigned long long)total,
                (unsigned long long)(k->hash % total), names[k->owner]);
    if (p->n == 1)
        place__step(t, "single", "with one server nginx does not hash: round robin names it");
    unsigned tries = 0;
    long s = nginx_plain_pick(p->anodes, p->extra, p->n, key, len, &tries);
    if (tries > 1 && tries <= NGINX_HASH_TRIES)
        place__step(t, "rehash",
                    "%s is down: nginx adds the hash of \"<try>\" + key and takes the modulo "
                    "again; try %u lands on %s, which is up",
                    names[k->owner], tries, names[s]);
    else if (tries > NGINX_HASH_TRIES)
        place__step(t, "round robin",
                    "%u tries all landed on servers that are down: nginx falls back to its "
                    "weighted round robin, a different up server from request to request; "
                    "ringsim names the one a fresh round robin picks first: %s",
                    NGINX_HASH_TRIES, s >= 0 ? names[s] : "none");
    place__step(t, "owner",
                "%s owns the key; a server that joins or leaves changes the total weight, "
                "and with it the owner of most keys",
                names[k->owner]);
}

static const place_algo algo_nginx_hash = {
    .name = "nginx",
    .title = "nginx: hash $key (not consistent)",
    .origin = "ngx_http_upstream_hash_module without the consistent flag (nginx 1.22): "
              "Cache::Memcached's 15-bit CRC-32 of the key modulo the total weight, servers "
              "in configuration order; a down server's key is hashed again (21 tries), then "
              "round robin",
    .key_hash = "(CRC-32 >> 16) & 0x7fff",
    .space = "none",
    .params = {PP_NGINX_CONSISTENT},
    .nparams = 1,
    .weights = PLACE_W_WHOLE,
    .replicas = PLACE_REP_NONE,
    .coord_kind = PLACE_COORD_NONE,
    .col = -1,
    .coord_param = -1,
    .top = top32,
    .build = nginx_hash_build_op,
    .free_extra = nginx_hash_free,
    .check_nodes = nginx_hash_check,
    .key = nginx_hash_key,
    .owner_of_hash = nginx_hash_owner_of_hash,
    .shares = nginx_hash_shares,
    .owns = nginx_hash_owns,
    .trace = nginx_hash_trace,
    .down = PLACE_DOWN_OWN,
    .serve = nginx_hash_serve,
    .down_text = "nginx hashes the key again (up to 21 tries), then falls back to round robin",
};

static const place_variant nginx_variants[] = {
    {PP_NGINX_CONSISTENT, 0, &algo_nginx_hash},
};

static const place_algo algo_nginx = {
    .name = "nginx",
    .title = "nginx: hash $key consistent",
    .origin = "ngx_http_upstream_hash_module with the consistent flag (nginx 1.22): CRC-32 "
              "points, 160 per weight unit; node names are the server strings of nginx.conf",
    .key_hash = "CRC-32",
    .coord_name = "ring point",
    .space = "4294967296",
    .params = {PP_NGINX_CONSISTENT},
    .nparams = 1,
    .variants = nginx_variants,
    .nvariants = 1,
    .weights = PLACE_W_WHOLE,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = -1,
    .minimal = true,
    .top = top32,
    .build = nginx_build_op,
    .key = nginx_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = nginx_trace,
    .points = true,
    .layout_points = nginx_layout_points,
};

/* ---- envoy-ring: Envoy's RING_HASH ---- */

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
    point_key(p, envoy_key_hash(key, len), k);
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

static const place_algo algo_envoy_ring = {
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
    .top = top64,
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

/* ---- maglev: Envoy's MAGLEV ---- */

static uint64_t maglev_top(const place_config *cfg)
{
    return (uint64_t)cfg->param[PP_TABLE_SIZE] - 1;
}

static int maglev_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    if (!p->n)
        return 0;
    return maglev_build(p->anodes, p->n, (uint64_t)p->cfg.param[PP_TABLE_SIZE], &p->table, err);
}

static void maglev_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    k->hash = envoy_key_hash(key, len);
    k->coord = k->hash % (p->top + 1);
    k->has_coord = true;
    if (p->n) {
        k->point = (long)k->coord;
        k->owner = p->table[k->coord];
    }
}

static void maglev_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                         const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    place__step(t, "hash", "xxHash64 (seed 0) of the key is %llu", (unsigned long long)k->hash);
    place__step(t, "entry", "%llu mod the table size %llu is entry %llu", (unsigned long long)k->hash,
                (unsigned long long)p->top + 1, (unsigned long long)k->coord);
    if (trace_owned(k, t))
        place__step(t, "owner",
                    "the table, filled by each host's permutation (offset and skip from "
                    "xxHash64 of its name) in turns weighted by its share, gives entry %llu "
                    "to %s",
                    (unsigned long long)k->coord, names[k->owner]);
}

static const place_algo algo_maglev = {
    .name = "maglev",
    .title = "Envoy: MAGLEV load balancer",
    .origin = "Maglev (Eisenbud et al., NSDI 2016) as Envoy's maglev_lb builds it: a lookup "
              "table of table_size (prime) entries filled by per-host permutations",
    .key_hash = "xxHash64, seed 0, mod table_size",
    .coord_name = "table entry",
    .space = "table_size",
    .params = {PP_TABLE_SIZE, PP_PANIC_THRESHOLD, PP_HASH_BALANCE_FACTOR},
    .nparams = 3,
    .weights = PLACE_W_WHOLE,
    .replicas = PLACE_REP_NONE,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = PP_TABLE_SIZE,
    .bound = PLACE_BOUND_ENVOY,
    .bound_param = PP_HASH_BALANCE_FACTOR,
    .top = maglev_top,
    .build = maglev_build_op,
    .key = maglev_key,
    .segments = place__table_segments,
    .trace = maglev_trace,
    .down = PLACE_DOWN_REBUILD,
    .panic = true,
};

/* ---- jump: Lamping & Veach, with MementoHash for removals ---- */

/* extra: a jump_state.  bucket[i] is node i's bucket; node_of[b] the node
 * on bucket b (-1 on removed buckets). */
typedef struct jump_state {
    memento *m;
    int32_t *bucket;
    int32_t *node_of;
    int32_t nb; /* b-array size */
} jump_state;

static void jump_free(placement *p)
{
    jump_state *j = p->extra;
    if (!j)
        return;
    memento_free(j->m);
    free(j->bucket);
    free(j->node_of);
    free(j);
}

/* State text: the memento's, then " nodes=" and each node's bucket in join
 * order. */
static char *jump_state_text(const placement *p)
{
    const jump_state *j = p->extra;
    char *mt = NULL;
    size_t ml = 0;
    if (memento_serialize(j->m, &mt, &ml))
        return NULL;
    size_t cap = ml + 16 + p->n * 12;
    char *out = malloc(cap);
    if (out) {
        size_t k = (size_t)snprintf(out, cap, "%s nodes=", mt);
        for (size_t i = 0; i < p->n && k < cap; i++)
            k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? "," : "", j->bucket[i]);
    }
    free(mt);
    return out;
}

static int jump_parse_state(placement *p, jump_state *j, const char *state, rs_error *err)
{
    const char *nodes = strstr(state, " nodes=");
    if (!nodes)
        return rs_fail(err, RINGSIM_EDB, "stored jump state is damaged");
    int rc = memento_parse(state, (size_t)(nodes - state), &j->m, err);
    if (rc)
        return rs_fail(err, RINGSIM_EDB, "stored jump state is damaged: %s", err ? err->msg : "");
    const char *c = nodes + 7;
    for (size_t i = 0; i < p->n; i++) {
        char *end;
        long b = strtol(c, &end, 10);
        if (end == c || b < 0 || b >= memento_barray_size(j->m) || !memento_is_live(j->m, (int32_t)b))
            return rs_fail(err, RINGSIM_EDB, "stored jump state is damaged");
        j->bucket[i] = (int32_t)b;
        c = *end == ',' ? end + 1 : end;
    }
    if (*c || memento_size(j->m) != (int32_t)p->n)
        return rs_fail(err, RINGSIM_EDB, "stored jump state is damaged");
    return 0;
}

static int jump_build_op(placement *p, const place_from *from, rs_error *err)
{
    const placement *prev = from->prev;
    const char *state = from->state;
    jump_state *j = calloc(1, sizeof *j);
    if (!j)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    p->extra = j;
    j->bucket = malloc((p->n + 1) * sizeof *j->bucket);
    if (!j->bucket)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int rc = 0;
    if (!prev && state && *state) {
        rc = jump_parse_state(p, j, state, err);
    } else {
        const jump_state *pj = prev ? prev->extra : NULL;
        j->m = pj ? memento_copy(pj->m) : memento_new();
        if (!j->m)
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        /* Leavers first (their buckets become MementoHash's removed ones),
         * then joiners (they take the most recently removed bucket). */
        for (size_t i = 0; pj && !rc && i < prev->n; i++) {
            bool stays = false;
            for (size_t k = 0; k < p->n && !stays; k++)
                stays = p->ids[k] == prev->ids[i];
            if (!stays)
                rc = memento_remove(j->m, pj->bucket[i]);
        }
        for (size_t i = 0; !rc && i < p->n; i++) {
            long was = -1;
            for (size_t k = 0; pj && k < prev->n && was < 0; k++)
                if (prev->ids[k] == p->ids[i])
                    was = (long)k;
            if (was >= 0)
                j->bucket[i] = pj->bucket[was];
            else
                rc = memento_add(j->m, &j->bucket[i]);
        }
        if (rc)
            return rs_fail(err, rc, "jump: %s",
                           rc == RINGSIM_EPARAM ? "too many buckets" : "out of memory");
    }
    if (rc)
        return rc;
    j->nb = memento_barray_size(j->m);
    j->node_of = malloc(((size_t)j->nb + 1) * sizeof *j->node_of);
    if (!j->node_of)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (int32_t b = 0; b < j->nb; b++)
        j->node_of[b] = -1;
    for (size_t i = 0; i < p->n; i++)
        j->node_of[j->bucket[i]] = (int32_t)i;
    return 0;
}

static void jump_owner_of_hash(const placement *p, place_key_info *k)
{
    const jump_state *j = p->extra;
    if (!p->n)
        return;
    int32_t b = memento_lookup(j->m, k->hash);
    k->point = b;
    k->owner = b >= 0 ? j->node_of[b] : -1;
}

static void jump_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    (void)key;
    (void)len;
    k->hash = k->coord = k->sha64;
    k->has_coord = true;
    jump_owner_of_hash(p, k);
}

static void jump_shares(const placement *p, double *share)
{
    for (size_t i = 0; i < p->n; i++)
        share[i] = 1.0 / (double)p->n;
}

static void jump_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                       const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    const jump_state *j = p->extra;
    if (!trace_sha64(k, t))
        return;
    int32_t first = jump_hash(k->hash, j->nb);
    place__step(t, "jump", "JumpConsistentHash(hash, %d buckets) = bucket %d", j->nb, first);
    if (first != (int32_t)k->point)
        place__step(t, "memento",
                    "bucket %d was removed; MementoHash re-hashes the key among the buckets "
                    "left until it lands on a live one: bucket %ld",
                    first, k->point);
    place__step(t, "owner", "bucket %ld is %s (buckets are nodes in join order)", k->point,
                names[k->owner]);
}

static const place_algo algo_jump = {
    .name = "jump",
    .title = "Jump consistent hash (Lamping & Veach 2014), MementoHash for removals",
    .origin = "Google's jump consistent hash: no memory, perfect balance, but buckets are "
              "numbered; removing a middle node needs MementoHash (Coluzzi et al. 2023)",
    .key_hash = "sha64 (SHA-256, first 64 bits)",
    .coord_name = "sha64",
    .space = "18446744073709551616",
    .weights = PLACE_W_NONE,
    .replicas = PLACE_REP_NONE,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = -1,
    .coord_param = -1,
    .leave_local = true,
    .minimal = true,
    .top = top64,
    .build = jump_build_op,
    .free_extra = jump_free,
    .key = jump_key,
    .owner_of_hash = jump_owner_of_hash,
    .shares = jump_shares,
    .state_text = jump_state_text,
    .trace = jump_trace,
};

/* ---- rendezvous: highest random weight ---- */

static int rendezvous_build_op(placement *p, const place_from *from, rs_error *err)
{
    if (!(p->node_hash = malloc((p->n + 1) * sizeof *p->node_hash)))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    rendezvous_node_hashes(from->h, p->anodes, p->n, p->node_hash);
    return 0;
}

static void rendezvous_owner_of_hash(const placement *p, place_key_info *k)
{
    if (!p->n)
        return;
    int32_t o = rendezvous_lookup(k->hash, p->anodes, p->node_hash, p->n);
    k->owner = o;
}

static void rendezvous_key(const placement *p, hasher *h, const char *key, size_t len,
                           place_key_info *k)
{
    (void)h;
    (void)key;
    (void)len;
    k->hash = k->sha64;
    k->has_coord = false;
    rendezvous_owner_of_hash(p, k);
}

static size_t rendezvous_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out)
{
    rendezvous_pick pick[PLACE_MAX_PREFS];
    size_t got = rendezvous_top(k->hash, p->anodes, p->node_hash, p->n, pick, r);
    for (size_t i = 0; i < got; i++)
        out[i] = pick[i].node;
    return got;
}

static void rendezvous_shares(const placement *p, double *share)
{
    /* The logarithmic method gives each node exactly weight / total. */
    double total = 0;
    for (size_t i = 0; i < p->n; i++)
        total += p->nodes[i].weight;
    for (size_t i = 0; i < p->n; i++)
        share[i] = p->nodes[i].weight / total;
}

static void rendezvous_trace(const placement *p, const char *key, size_t len,
                             const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    if (!trace_sha64(k, t))
        return;
    place__step(t, "scores",
                "every node scores -weight / ln(u), u from mix(sha64(key) xor sha64(name)); "
                "%zu node%s scored",
                p->n, p->n == 1 ? "" : "s");
    rendezvous_pick pick[3];
    size_t got = rendezvous_top(k->hash, p->anodes, p->node_hash, p->n, pick, 3);
    for (size_t i = 0; i < got; i++)
        place__step(t, i ? "runner-up" : "highest", "%s scores %.6g", names[pick[i].node],
                    pick[i].score);
    place__step(t, "owner", "%s has the highest score and owns the key", names[k->owner]);
}

static const place_algo algo_rendezvous = {
    .name = "rendezvous",
    .title = "Rendezvous hashing (highest random weight), weighted",
    .origin = "Thaler & Ravishankar 1996; weights by the logarithmic method (Schindelhauer & "
              "Schomaker): every node scores the key, the highest wins; no ring, no state",
    .key_hash = "sha64 (SHA-256, first 64 bits)",
    .space = "none",
    .weights = PLACE_W_ANY,
    .replicas = PLACE_REP_HIGHEST,
    .coord_kind = PLACE_COORD_NONE,
    .col = -1,
    .coord_param = -1,
    .leave_local = true,
    .minimal = true,
    .top = top64,
    .build = rendezvous_build_op,
    .key = rendezvous_key,
    .owner_of_hash = rendezvous_owner_of_hash,
    .prefs = rendezvous_prefs,
    .shares = rendezvous_shares,
    .trace = rendezvous_trace,
    .down = PLACE_DOWN_REBUILD,
};

/* ---- multiprobe: Appleton & O'Reilly ---- */

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

static const place_algo algo_multiprobe = {
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
    .top = top32,
    .build = multiprobe_build_op,
    .key = mp_key,
    .owner_of_hash = multiprobe_owner_of_hash,
    .prefs = place__walk_prefs,
    .trace = multiprobe_trace,
    .points = true,
    .layout_points = multiprobe_layout_points,
};

/* ---- cassandra: Murmur3Partitioner tokens ---- */

static int cassandra_build_op(placement *p, const place_from *from, rs_error *err)
{
    if (!p->n)
        return 0;
    cassandra_tokens *t = calloc(p->n, sizeof *t);
    if (!t)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++)
        t[i] = (cassandra_tokens){p->nodes[i].tokens, p->nodes[i].ntokens};
    /* After a change of topology, the nodes that stay keep their tokens. */
    const placement *q = from->prev;
    cassandra_tokens *qt = q && q->pts ? calloc(q->n + 1, sizeof *qt) : NULL;
    for (size_t i = 0; qt && i < q->n; i++)
        qt[i] = (cassandra_tokens){q->nodes[i].tokens, q->nodes[i].ntokens};
    cassandra_prev prev = {qt ? q->pts : NULL,    qt ? q->npts : 0,
                           qt ? q->anodes : NULL, qt,
                           qt ? q->n : 0,         qt ? (uint32_t)q->cfg.param[PP_NUM_TOKENS] : 0};
    int rc = cassandra_ring_from(p->anodes, p->n, t, (uint32_t)p->cfg.param[PP_NUM_TOKENS],
                                 qt ? &prev : NULL, &p->pts, &p->npts, err);
    free(qt);
    free(t);
    return rc;
}

static void cassandra_key(const placement *p, hasher *h, const char *key, size_t len,
                          place_key_info *k)
{
    (void)h;
    point_key(p, alg_from_signed(cassandra_token(key, len)), k);
}

static void cassandra_trace(const placement *p, const char *key, size_t len,
                            const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    place__step(t, "token",
                "Murmur3Partitioner: the key's token is %lld (MurmurHash3 x64 128 as "
                "Cassandra computes it, first 64 bits, signed)",
                (long long)alg_to_signed(k->hash));
    place__step(t, "ring",
                "%zu tokens: num_tokens %lld per node times its weight (tokens of \"name\", "
                "\"name#1\", ...), or the node's initial_token list",
                p->npts, (long long)p->cfg.param[PP_NUM_TOKENS]);
    place__trace_point(p, k, names, "token", t);
    if (p->cfg.replicas > 1)
        place__step(t, "replicas",
                    "SimpleStrategy: the next %u distinct nodes clockwise hold the copies",
                    p->cfg.replicas - 1);
}

/* Each node's explicit tokens, else num_tokens x its weight. */
static uint64_t cassandra_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += nodes[i].ntokens ? nodes[i].ntokens
                                  : (uint64_t)fmax(1, fmin(round((double)cfg->param[PP_NUM_TOKENS] *
                                                                 place__weight(&nodes[i])),
                                                           1e9));
    return total;
}

static const place_algo algo_cassandra = {
    .name = "cassandra",
    .title = "Apache Cassandra: Murmur3Partitioner token ring",
    .origin = "Cassandra's partitioner: a key's token is MurmurHash3 (signed 64-bit); each "
              "node owns the range up to its tokens (num_tokens vnodes or initial_token); "
              "SimpleStrategy replicas",
    .key_hash = "Murmur3 token (signed 64-bit)",
    .coord_name = "token",
    .space = "18446744073709551616",
    .params = {PP_NUM_TOKENS},
    .nparams = 1,
    .weights = PLACE_W_ANY,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_SIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = -1,
    .minimal = true,
    .top = top64,
    .build = cassandra_build_op,
    .key = cassandra_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = cassandra_trace,
    .points = true,
    .layout_points = cassandra_layout_points,
    .tokens = true,
    .down_walk_replicas = true,
};

/* ---- redis: Redis Cluster hash slots ---- */

static uint64_t redis_top(const place_config *cfg)
{
    (void)cfg;
    return REDIS_SLOTS - 1;
}

static int redis_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    (void)cfg;
    if (n > REDIS_MAX_NODES)
        return rs_fail(err, RINGSIM_EPARAM, "Redis Cluster has at most %u masters", REDIS_MAX_NODES);
    (void)nodes;
    return 0;
}

/* The slot map: a switch splits the slots as `redis-cli --cluster create`;
 * afterwards leavers hand theirs over and joiners receive theirs as
 * redis-cli's rebalance moves them; a stored map is parsed. */
static int redis_build_op(placement *p, const place_from *from, rs_error *err)
{
    const placement *prev = from->prev;
    const char *state = from->state;
    if (!p->n)
        return 0;
    p->table = malloc(REDIS_SLOTS * sizeof *p->table);
    if (!p->table)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!prev && state && *state)
        return redis_parse(state, strlen(state), p->n, p->table, err)
                   ? rs_fail(err, RINGSIM_EDB, "stored slot map is damaged: %s", err ? err->msg : "")
                   : 0;
    if (!prev || !prev->n || !prev->table) {
        int rc = redis_check_create(p->n, err);
        if (rc)
            return rc;
        return redis_create(p->n, p->table) < 0 ? rs_fail(err, RINGSIM_ENOMEM, "out of memory") : 0;
    }
    memcpy(p->table, prev->table, REDIS_SLOTS * sizeof *p->table);
    /* Leavers, highest ordinal first so that the shifts keep the rest valid. */
    size_t n = prev->n;
    for (size_t i = prev->n; i-- > 0;) {
        bool stays = false;
        for (size_t k = 0; k < p->n && !stays; k++)
            stays = p->ids[k] == prev->ids[i];
        if (stays)
            continue;
        if (n == 1) { /* the last node: the map is dropped, then made anew */
            n = 0;
            break;
        }
        int rc = redis_leave(p->table, n, (uint32_t)i); /* slots moved, or < 0 */
        if (rc < 0)
            return rs_fail(err, rc, "redis: %s",
                           err && err->msg[0] ? err->msg : "cannot hand over slots");
        n--;
    }
    /* Joiners come last in join order: each receives slots in turn. */
    for (size_t i = n; i < p->n; i++) {
        int rc = redis_join(p->table, i); /* slots moved, or < 0 */
        if (rc < 0)
            return rs_fail(err, rc, "redis: cannot rebalance onto a new node");
    }
    return 0;
}

static char *redis_state_text(const placement *p)
{
    if (!p->table || !p->n)
        return NULL;
    size_t len = redis_format(p->table, NULL, 0);
    char *t = malloc(len + 1);
    if (t)
        redis_format(p->table, t, len + 1);
    return t;
}

static void redis_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    size_t off, hl = redis_hashed_part(key, len, &off);
    k->hash = redis_crc16(key + off, hl);
    k->coord = k->hash % REDIS_SLOTS;
    k->has_coord = true;
    if (p->n && p->table) {
        k->point = (long)k->coord;
        k->owner = p->table[k->coord];
    }
}

static void redis_node_json(const placement *p, size_t node, json_t *obj)
{
    json_t *a = json_array();
    if (!a)
        return;
    if (!p->table) {
        json_object_set_new(obj, "slots", a);
        return;
    }
    redis_run runs[64];
    size_t total = redis_node_runs(p->table, (uint32_t)node, runs, 64);
    redis_run *all = runs;
    if (total > 64 && (all = malloc(total * sizeof *all)))
        redis_node_runs(p->table, (uint32_t)node, all, total);
    for (size_t i = 0; all && i < total; i++)
        json_array_append_new(
            a, json_pack("[I, I]", (json_int_t)all[i].first, (json_int_t)all[i].last));
    if (all != runs)
        free(all);
    json_object_set_new(obj, "slots", a);
}

static void redis_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                        const char *const *names, json_t *t)
{
    size_t off, hl = redis_hashed_part(key, len, &off);
    if (hl != len)
        place__step(t, "hash tag",
                    "the key has a {hash tag}: only \"%.*s\" is hashed, so keys with the same "
                    "tag share a slot",
                    (int)hl, key + off);
    place__step(t, "hash", "CRC16 (XMODEM) of %s is %llu", hl == len ? "the key" : "the tag",
                (unsigned long long)k->hash);
    place__step(t, "slot", "%llu mod 16384 = hash slot %llu", (unsigned long long)k->hash,
                (unsigned long long)k->coord);
    if (trace_owned(k, t))
        place__step(t, "owner",
                    "slot %llu is held by %s (slots were split as redis-cli --cluster create "
                    "does, then moved by rebalance as nodes joined and left)",
                    (unsigned long long)k->coord, names[k->owner]);
    /* The master's replicas, as the imported CLUSTER NODES text names them. */
    if (k->owner >= 0) {
        const place_node *o = &p->nodes[k->owner];
        char list[512] = "";
        size_t u = 0, shown = 0;
        /* whole names while they fit, then how many more */
        while (shown < o->nreplicas && u + strlen(o->replicas[shown]) + 2 + 32 < sizeof list) {
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", shown ? ", " : "",
                                  o->replicas[shown]);
            shown++;
        }
        if (shown < o->nreplicas)
            snprintf(list + u, sizeof list - u, " and %zu more", o->nreplicas - shown);
        if (o->nreplicas)
            place__step(t, "replicas",
                        "%s has %zu replica%s from the imported text: %s; the first takes its "
                        "slots over if it fails",
                        names[k->owner], o->nreplicas, o->nreplicas == 1 ? "" : "s", list);
        else
            place__step(t, "replicas", "%s has no replica: if it fails, its slots are unserved",
                        names[k->owner]);
    }
}

static char *redis_slot_text(const uint32_t *owner)
{
    size_t len = redis_format(owner, NULL, 0);
    char *t = malloc(len + 1);
    if (t)
        redis_format(owner, t, len + 1);
    return t;
}

static const place_algo algo_redis = {
    .name = "redis",
    .title = "Redis Cluster: 16384 hash slots",
    .origin = "Redis Cluster (redis 7): CRC16 of the key or its {hash tag} mod 16384; slots "
              "split as redis-cli --cluster create, moved as rebalance moves them",
    .key_hash = "CRC16 (XMODEM) of the key or its {hash tag}",
    .coord_name = "slot",
    .space = "16384",
    .weights = PLACE_W_NONE,
    .replicas = PLACE_REP_NONE,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = -1,
    .slots = REDIS_SLOTS,
    .slot_text = redis_slot_text,
    .top = redis_top,
    .check_nodes = redis_check,
    .build = redis_build_op,
    .key = redis_key,
    .segments = place__table_segments,
    .node_json = redis_node_json,
    .state_text = redis_state_text,
    .trace = redis_trace,
    .down = PLACE_DOWN_FAILOVER,
};

/* ---- haproxy: hash-type consistent ---- */

/* extra: the servers' ids as HAProxy has them, and who owns which arc. */
typedef struct haproxy_state {
    uint32_t *ids;
    haproxy_arc *arcs;
    size_t narcs;
    /* hash-type map-based: the map with every server up (owners) and the
     * one that serves (NULL while every server is up) */
    uint32_t *map, *map_up;
    uint32_t tot, tot_up;
} haproxy_state;

static int haproxy_ids(const place_node *nodes, size_t n, uint32_t *out, rs_error *err)
{
    int64_t *given = malloc((n + 1) * sizeof *given);
    if (!given)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        given[i] = nodes[i].srv_id;
    int rc = haproxy_assign_ids(given, n, out, err);
    free(given);
    return rc;
}

static int haproxy_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    (void)cfg;
    for (size_t i = 0; i < n; i++)
        if (nodes[i].weight > HAPROXY_MAX_WEIGHT)
            return rs_fail(err, RINGSIM_EPARAM,
                           "haproxy weights are whole numbers up to %d: node \"%.*s\" has %g",
                           HAPROXY_MAX_WEIGHT, (int)(nodes[i].len > 64 ? 64 : nodes[i].len),
                           nodes[i].name, nodes[i].weight);
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    if (!ids)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int rc = haproxy_ids(nodes, n, ids, err);
    free(ids);
    return rc;
}

static void haproxy_free(placement *p)
{
    haproxy_state *h = p->extra;
    if (!h)
        return;
    free(h->ids);
    free(h->arcs);
    free(h->map);
    free(h->map_up);
    free(h);
}

/* The state both HAProxy layouts start from: the servers' ids, assigned
 * as cfgparse.c assigns them, held in p->extra. */
static int haproxy_state_new(placement *p, haproxy_state **out, rs_error *err)
{
    haproxy_state *st = calloc(1, sizeof *st);
    if (!st || !(st->ids = malloc((p->n + 1) * sizeof *st->ids))) {
        free(st);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    p->extra = st;
    *out = st;
    return haproxy_ids(p->nodes, p->n, st->ids, err);
}

static int haproxy_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    haproxy_state *st;
    int rc = haproxy_state_new(p, &st, err);
    if (rc || !p->n)
        return rc;
    alg_node *v = malloc((p->n + 1) * sizeof *v);
    if (!v)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    memcpy(v, p->anodes, p->n * sizeof *v);
    /* Backup servers are not in the active tree (lb_chash.c keeps them in
     * chash.bck): they own nothing while an active server is usable, that
     * is of weight > 0 (backend.c recount_servers).  With none, the first
     * usable backup owns everything (fbck), or with `option allbackups` the
     * backup tree.  Which serve when servers are down is place_states.c's. */
    bool actives = false, fbck = false;
    for (size_t i = 0; i < p->n; i++)
        actives |= !p->nodes[i].backup && p->nodes[i].weight > 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!p->nodes[i].backup)
            continue;
        if (actives || (fbck && !p->cfg.param[PP_ALL_BACKUPS]))
            v[i].weight = 0;
        fbck |= v[i].weight > 0;
    }
    rc = haproxy_build(v, st->ids, p->n, &p->pts, &p->npts, err);
    free(v);
    if (!rc && p->npts && haproxy_arcs(p->pts, p->npts, &st->arcs, &st->narcs))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return rc;
}

/* A subset of the servers keeps the ids HAProxy gave them in the whole
 * list (a server that goes down is not renumbered). */
static void haproxy_pin(const placement *p, place_node *sub, const size_t *map, size_t m)
{
    const haproxy_state *st = p->extra;
    for (size_t k = 0; k < m; k++)
        sub[k].srv_id = st->ids[map[k]];
}

static void haproxy_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    k->hash = k->coord = haproxy_key_hash(key, len);
    k->has_coord = true;
    if (!p->npts)
        return;
    size_t i = haproxy_lookup(p->pts, p->npts, (uint32_t)k->hash, NULL, NULL);
    k->point = (long)i;
    k->owner = p->pts[i].node;
}

static int haproxy_segments(const placement *p, place_seg **out, size_t *n)
{
    const haproxy_state *st = p->extra;
    if (!p->npts)
        return place__point_segments(p, out, n); /* one empty segment */
    *out = malloc((st->narcs + 1) * sizeof **out);
    if (!*out)
        return RINGSIM_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < st->narcs; i++) {
        long o = p->pts[st->arcs[i].point].node;
        if (m && (*out)[m - 1].owner == o)
            (*out)[m - 1].hi = st->arcs[i].hi;
        else
            (*out)[m++] = (place_seg){st->arcs[i].hi, o};
    }
    *n = m;
    return 0;
}

static void haproxy_owns(const placement *p, uint32_t r, double *owns)
{
    const haproxy_state *st = p->extra;
    long pref[PLACE_MAX_PREFS];
    uint64_t lo = 0;
    for (size_t i = 0; p->npts && i < st->narcs; i++) {
        double arc = (double)(st->arcs[i].hi - lo + (i ? 0 : 1)) / 4294967296.0;
        lo = st->arcs[i].hi;
        size_t got = place__walk(p, st->arcs[i].point, r, pref);
        for (size_t k = 0; k < got; k++)
            owns[pref[k]] += arc;
    }
}

static void haproxy_node_json(const placement *p, size_t node, json_t *obj)
{
    const haproxy_state *st = p->extra;
    json_object_set_new(obj, "id", json_integer(st->ids[node]));
    json_object_set_new(obj, "id_assigned", json_boolean(p->nodes[node].srv_id == 0));
    json_t *t = json_array();
    char buf[24];
    size_t m;
    const size_t *at = place__node_points(p, node, &m);
    for (size_t i = 0; t && i < m; i++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->pts[at[i]].coord);
        json_array_append_new(t, json_string(buf));
    }
    json_object_set_new(obj, "tokens", t);
}

static void haproxy_trace(const placement *p, const char *key, size_t len, const place_key_info *k,
                          const char *const *names, json_t *t)
{
    const haproxy_state *st = p->extra;
    place__step(t, "hash",
                "sdbm of the key is %u; hash-type consistent applies full_hash (avalanche): "
                "%llu",
                haproxy_sdbm(key, len), (unsigned long long)k->hash);
    char ids[400] = "";
    size_t shown = p->n < 8 ? p->n : 8;
    for (size_t i = 0; i < shown; i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%.40s %u%s", i ? ", " : "",
                 names[i], st->ids[i], p->nodes[i].srv_id ? "" : " (assigned)");
    place__step(t, "ids",
                "server ids: %s%s; a server without an id takes the first free id from its "
                "position on",
                ids, p->n > shown ? ", ..." : "");
    place__step(t, "points",
                "%zu points in the tree: 16 per unit of weight, point j of the server with id "
                "I is full_hash(I x 4096 + j)",
                p->npts);
    if (k->point < 0) {
        place__step(t, "owner", "there is no point (no server of weight above 0): no server");
        return;
    }
    size_t nx, pv;
    haproxy_lookup(p->pts, p->npts, (uint32_t)k->hash, &nx, &pv);
    uint32_t hsh = (uint32_t)k->hash, dp = hsh - (uint32_t)p->pts[pv].coord,
             dn = (uint32_t)p->pts[nx].coord - hsh;
    place__step(t, "neighbours",
                "the point at or after it is %llu (%s), %u away; the point before is %llu "
                "(%s), %u away",
                (unsigned long long)p->pts[nx].coord, names[p->pts[nx].node], dn,
                (unsigned long long)p->pts[pv].coord, names[p->pts[pv].node], dp);
    place__step(t, "nearest", "%s",
                dp == dn  ? "equally far: a tie goes to the point before"
                : dp < dn ? "the point before is nearer (HAProxy takes the nearest point on "
                            "either side, not the next one)"
                          : "the point after is nearer");
    place__step(t, "owner", "%s owns the key (point #%u of the server with id %u)", names[k->owner],
                p->pts[k->point].index, st->ids[k->owner]);
}

/* 16 points per unit of weight. */
static uint64_t haproxy_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    (void)cfg;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += (uint64_t)fmin(ceil(nodes[i].weight), 1e9) * 16u;
    return total;
}

/* hash-type map-based, below */
static const place_algo algo_haproxy_map;
static const place_variant haproxy_variants[] = {
    {PP_HASH_TYPE, 1, &algo_haproxy_map},
};

static const place_algo algo_haproxy = {
    .name = "haproxy",
    .title = "HAProxy: hash-type consistent",
    .origin = "HAProxy 2.6 lb_chash.c: 16 points per unit of weight, full_hash(id x 4096 + "
              "j), keyed by the server's id (given, or assigned by position: a server added in "
              "the middle renumbers the ones after it); a key goes to the nearest point on "
              "either side; hash_balance_factor drives the bounded-load traffic replay",
    .key_hash = "full_hash(sdbm(key))",
    .coord_name = "tree point",
    .space = "4294967296",
    .params = {PP_HASH_BALANCE_FACTOR, PP_ALL_BACKUPS, PP_HASH_TYPE},
    .nparams = 3,
    .variants = haproxy_variants,
    .nvariants = 1,
    .weights = PLACE_W_WHOLE,
    .zero_weight = true, /* server.c: weight 0..256; 0 takes no request */
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = -1,
    .bound = PLACE_BOUND_HAPROXY,
    .bound_param = PP_HASH_BALANCE_FACTOR,
    .top = top32,
    .check_nodes = haproxy_check,
    .build = haproxy_build_op,
    .free_extra = haproxy_free,
    .key = haproxy_key,
    .prefs = place__walk_prefs,
    .segments = haproxy_segments,
    .owns = haproxy_owns,
    .node_json = haproxy_node_json,
    .trace = haproxy_trace,
    .points = true,
    .nearest = true,
    .layout_points = haproxy_layout_points,
    .down = PLACE_DOWN_REBUILD,
    .backups = true,
    .pin = haproxy_pin,
};

/* ---- haproxy: hash-type map-based ---- */

/* Which servers compete for the map, as recount_servers and
 * update_backend_weight choose them, with `down` servers counted out when
 * with_states; the server whose weight sizes the map (fbck), or -1. */
static long haproxy_map_use(const placement *p, bool with_states, bool *use)
{
    bool actives = false;
    long fbck = -1;
    for (size_t i = 0; i < p->n; i++) {
        bool usable = p->nodes[i].weight > 0 && !(with_states && p->nodes[i].down);
        use[i] = usable && !p->nodes[i].backup;
        actives |= use[i];
        if (usable && p->nodes[i].backup && fbck < 0)
            fbck = (long)i;
    }
    if (actives || fbck < 0)
        return -1;
    for (size_t i = 0; i < p->n; i++)
        use[i] = p->nodes[i].backup && p->nodes[i].weight > 0 && !(with_states && p->nodes[i].down);
    return p->cfg.param[PP_ALL_BACKUPS] ? -1 : fbck;
}

static int haproxy_map_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    haproxy_state *st;
    int rc = haproxy_state_new(p, &st, err);
    if (rc || !p->n)
        return rc;
    bool *use = malloc(p->n * sizeof *use);
    if (!use)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    bool any_down = false;
    for (size_t i = 0; i < p->n; i++)
        any_down |= p->nodes[i].down;
    long fb = haproxy_map_use(p, false, use);
    rc = haproxy_map_build(p->anodes, use, p->n, fb, &st->map, &st->tot);
    if (!rc && any_down) {
        fb = haproxy_map_use(p, true, use);
        rc = haproxy_map_build(p->anodes, use, p->n, fb, &st->map_up, &st->tot_up);
    }
    free(use);
    return rc ? rs_fail(err, rc, "out of memory") : 0;
}

static void haproxy_map_owner_of_hash(const placement *p, place_key_info *k)
{
    const haproxy_state *st = p->extra;
    if (!st || !st->tot)
        return;
    k->point = (long)(k->hash % st->tot);
    k->owner = st->map[k->point];
}

static void haproxy_map_key(const placement *p, hasher *h, const char *key, size_t len,
                            place_key_info *k)
{
    (void)h;
    k->hash = haproxy_sdbm(key, len);
    k->has_coord = false;
    haproxy_map_owner_of_hash(p, k);
}

static long haproxy_map_serve(const placement *p, const char *key, size_t len,
                              const place_key_info *k)
{
    (void)key;
    (void)len;
    const haproxy_state *st = p->extra;
    if (!st->map_up)
        return st->tot ? (long)st->map[k->hash % st->tot] : -1;
    return st->tot_up ? (long)st->map_up[k->hash % st->tot_up] : -1;
}

/* Exact shares: entry o of the map takes the 32-bit hashes h with
 * h % tot == o, floor(2^32 / tot) of them plus one for o < 2^32 % tot. */
static void haproxy_map_shares(const placement *p, double *share)
{
    const haproxy_state *st = p->extra;
    if (!st->tot)
        return;
    uint64_t q = 4294967296ull / st->tot, rem = 4294967296ull % st->tot;
    for (uint32_t o = 0; o < st->tot; o++)
        share[st->map[o]] += (double)(q + (o < rem)) / 4294967296.0;
}

static void haproxy_map_owns(const placement *p, uint32_t r, double *owns)
{
    (void)r; /* no replicas: r is 1 */
    haproxy_map_shares(p, owns);
}

static void haproxy_map_trace(const placement *p, const char *key, size_t len,
                              const place_key_info *k, const char *const *names, json_t *t)
{
    const haproxy_state *st = p->extra;
    place__step(t, "hash",
                "sdbm of the key is %llu (hash-type map-based applies no avalanche by default)",
                (unsigned long long)k->hash);
    if (k->owner < 0) {
        place__step(t, "owner", "no server of weight above 0: no server");
        return;
    }
    place__step(t, "map",
                "the map has %u entries, the weights (divided by their greatest common "
                "divisor) interleaved: earlier servers first among equals",
                st->tot);
    place__step(t, "entry", "%llu mod %u = entry %ld, held by %s", (unsigned long long)k->hash,
                st->tot, k->point, names[k->owner]);
    if (st->map_up) {
        long s = haproxy_map_serve(p, key, len, k);
        place__step(t, "states",
                    "with the servers that are down left out, the map has %u entries: %llu mod "
                    "%u = entry %llu, held by %s",
                    st->tot_up, (unsigned long long)k->hash, st->tot_up,
                    st->tot_up ? (unsigned long long)(k->hash % st->tot_up) : 0ull,
                    s >= 0 ? names[s] : "nobody");
    }
    place__step(t, "owner",
                "%s owns the key; a server that joins or leaves changes the map's size, and "
                "with it the owner of most keys",
                names[k->owner]);
}

static const place_algo algo_haproxy_map = {
    .name = "haproxy",
    .title = "HAProxy: hash-type map-based",
    .origin = "HAProxy 2.6 lb_map.c: a map of the servers' weights (divided by their gcd) "
              "interleaved; a key goes to map[sdbm(key) mod its size]; the default "
              "hash-type of balance hdr/uri/url_param/source",
    .key_hash = "sdbm(key)",
    .space = "none",
    .params = {PP_HASH_BALANCE_FACTOR, PP_ALL_BACKUPS, PP_HASH_TYPE},
    .nparams = 3,
    .weights = PLACE_W_WHOLE,
    .zero_weight = true,
    .replicas = PLACE_REP_NONE,
    .coord_kind = PLACE_COORD_NONE,
    .col = -1,
    .coord_param = -1,
    .top = top32,
    .check_nodes = haproxy_check,
    .build = haproxy_map_build_op,
    .free_extra = haproxy_free,
    .key = haproxy_map_key,
    .owner_of_hash = haproxy_map_owner_of_hash,
    .shares = haproxy_map_shares,
    .owns = haproxy_map_owns,
    .node_json = haproxy_node_json,
    .trace = haproxy_map_trace,
    .down = PLACE_DOWN_OWN,
    .serve = haproxy_map_serve,
    .down_text = "the map is rebuilt from the servers that are up (backups when no active "
                 "server is)",
    .backups = true,
};

/* ---- twemproxy: nutcracker's distribution: ketama ---- */

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
    if (!(p->extra = ketama_md5_new()))
        return rs_fail(err, RINGSIM_ENOMEM, "OpenSSL has no MD5");
    if (!p->n)
        return 0;
    return twemproxy_build(p->extra, p->anodes, p->n, &p->pts, &p->npts, err);
}

static void twemproxy_key(const placement *p, hasher *h, const char *key, size_t len,
                          place_key_info *k)
{
    (void)h;
    /* nutcracker skips the hash in a pool of one server (same owner); the
     * coordinate stays the hash, so that it depends on the key alone. */
    point_key(p, twemproxy_hash((twemproxy_hash_fn)p->cfg.param[PP_HASH], p->extra, key, len), k);
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

static const place_algo algo_twemproxy = {
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
    .top = top32,
    .check_nodes = twemproxy_check,
    .build = twemproxy_build_op,
    .free_extra = ketama_free,
    .key = twemproxy_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = twemproxy_trace,
    .points = true,
    .layout_points = ketama_layout_points,
    .down = PLACE_DOWN_REBUILD,
};

const place_algo *const place__algos[] = {&algo_ring,
                                          &algo_jump,
                                          &algo_rendezvous,
                                          &algo_multiprobe,
                                          &algo_ketama,
                                          &algo_nginx,
                                          &algo_envoy_ring,
                                          &algo_maglev,
                                          &algo_cassandra,
                                          &algo_redis,
                                          &algo_haproxy,
                                          &algo_twemproxy,
                                          NULL};
