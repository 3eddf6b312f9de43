/*
 * algo_nginx.c - nginx's upstream hash (alg_nginx.c) as a placement
 * algorithm: `hash $key consistent` (CRC-32 points, 160 per unit of
 * weight), and as its variant `hash $key` without consistent (a 15-bit
 * CRC-32 modulo the total weight, a down server's key hashed again).
 *
 * Cost: consistent, build O(points log points) and a key O(log points);
 * the plain hash builds nothing and walks the servers once per key.
 */
#include <math.h>
#include <stdlib.h>

#include "alg_nginx.h"
#include "place_int.h"

static int nginx_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    return nginx_build(p->anodes, p->n, &p->pts, &p->npts, err);
}

static void nginx_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    place__point_key(p, nginx_key_hash(key, len), k);
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

/* hash $key; (no consistent): a modulo of the total weight, the variant */

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
    if (!place__trace_owned(k, t))
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
    .top = place__top32,
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

const place_algo place_algo_nginx = {
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
    .top = place__top32,
    .build = nginx_build_op,
    .key = nginx_key,
    .prefs = place__walk_prefs,
    .segments = place__point_segments,
    .trace = nginx_trace,
    .points = true,
    .layout_points = nginx_layout_points,
};
