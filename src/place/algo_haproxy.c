/*
 * algo_haproxy.c - HAProxy's hash balancing (alg_haproxy.c) as a placement
 * algorithm: hash-type consistent (lb_chash.c: 16 points per unit of
 * weight keyed by the server's id, a key to the nearest point), and as its
 * variant hash-type map-based (lb_map.c: the weights interleaved in a map,
 * a key to map[hash mod its size]).  Both assign the servers' ids as
 * cfgparse.c does and serve backups only when no active server is up.
 *
 * Cost: consistent, build O(points log points) and a key O(log points);
 * map-based, build O(total weight) and a key O(1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg_haproxy.h"
#include "place_int.h"

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

/* hash-type map-based, the variant */

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
    .top = place__top32,
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

static const place_variant haproxy_variants[] = {
    {PP_HASH_TYPE, 1, &algo_haproxy_map},
};

const place_algo place_algo_haproxy = {
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
    .top = place__top32,
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
