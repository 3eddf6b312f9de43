/*
 * algo_cassandra.c - Cassandra's Murmur3Partitioner token ring
 * (alg_cassandra.c) as a placement algorithm: num_tokens vnodes per node
 * times its weight, or the node's initial_token list; SimpleStrategy
 * or NetworkTopologyStrategy replicas (strategy network_topology, a
 * factor per datacenter; a node's datacenter and rack are its location's
 * "dc" and "rack", "datacenter1" and "rack1" when absent, as Cassandra's
 * snitches say).  A change of topology passes the previous ring, so the
 * nodes that stay keep their tokens.
 *
 * Cost: build O(tokens log tokens) (and O(nodes^2) name comparisons for
 * the datacenters and racks), a key one MurmurHash3 and O(log tokens);
 * NetworkTopologyStrategy's replicas a walk of the ring from the key's
 * token, O(tokens) at worst.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_cassandra.h"
#include "place_int.h"

/* ---- NetworkTopologyStrategy: the topology, built with the ring ---- */

typedef struct nts_topo {
    cassandra_topo t;
    int *dc;
    uint32_t *rack;
    uint32_t rf[PLACE_MAX_DCS], dc_nodes[PLACE_MAX_DCS], dc_racks[PLACE_MAX_DCS];
} nts_topo;

static const char *node_dc(const place_node *x)
{
    const char *d = place_loc_get(x->loc, x->nloc, "dc");
    return d ? d : "datacenter1";
}

static const char *node_rack(const place_node *x)
{
    const char *r = place_loc_get(x->loc, x->nloc, "rack");
    return r ? r : "rack1";
}

static void nts_free(placement *p)
{
    nts_topo *z = p->extra;
    if (z) {
        free(z->dc);
        free(z->rack);
        free(z);
    }
    p->extra = NULL;
}

static int nts_build(placement *p, rs_error *err)
{
    nts_topo *z = calloc(1, sizeof *z);
    if (!z || !(z->dc = calloc(p->n + 1, sizeof *z->dc)) ||
        !(z->rack = calloc(p->n + 1, sizeof *z->rack))) {
        if (z) {
            free(z->dc);
            free(z);
        }
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    p->extra = z;
    uint32_t nracks = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *dc = node_dc(&p->nodes[i]), *rk = node_rack(&p->nodes[i]);
        int d = -1;
        for (uint32_t k = 0; k < p->cfg.ndc && d < 0; k++)
            if (!strcmp(p->cfg.dc[k].dc, dc))
                d = (int)k;
        z->dc[i] = d;
        /* the rack's id: the first earlier node of the same (dc, rack)'s */
        size_t j = 0;
        while (j < i && (strcmp(node_dc(&p->nodes[j]), dc) || strcmp(node_rack(&p->nodes[j]), rk)))
            j++;
        z->rack[i] = j < i ? z->rack[j] : nracks++;
        if (d >= 0) {
            z->dc_nodes[d]++;
            z->dc_racks[d] += j == i;
        }
    }
    for (uint32_t k = 0; k < p->cfg.ndc; k++)
        z->rf[k] = p->cfg.dc[k].rf;
    z->t = (cassandra_topo){.pts = p->pts,
                            .npts = p->npts,
                            .n = p->n,
                            .dc = z->dc,
                            .rack = z->rack,
                            .nracks = nracks,
                            .ndc = p->cfg.ndc,
                            .rf = z->rf,
                            .dc_nodes = z->dc_nodes,
                            .dc_racks = z->dc_racks};
    return 0;
}

static bool is_nts(const placement *p) { return p->cfg.param[PP_STRATEGY] == PLACE_STRATEGY_NTS; }

static size_t cassandra_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out)
{
    const nts_topo *z = p->extra;
    if (!is_nts(p) || !z)
        return place__walk_prefs(p, k, r, out);
    if (k->point < 0)
        return 0;
    uint32_t v[PLACE_MAX_PREFS];
    size_t got = cassandra_nts_replicas(&z->t, (size_t)k->point, v,
                                        r < PLACE_MAX_PREFS ? r : PLACE_MAX_PREFS);
    for (size_t i = 0; i < got; i++)
        out[i] = (long)v[i];
    return got;
}

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
    if (!rc && is_nts(p))
        rc = nts_build(p, err);
    return rc;
}

static void cassandra_key(const placement *p, hasher *h, const char *key, size_t len,
                          place_key_info *k)
{
    (void)h;
    place__point_key(p, alg_from_signed(cassandra_token(key, len)), k);
}

/* names[v[0..n)] as "a, b, c" into b (cut at its size). */
static void name_list(char *b, size_t size, const uint32_t *v, size_t n, const char *const *names)
{
    size_t at = 0;
    b[0] = '\0';
    for (size_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(b + at, size - at, "%s%s", i ? ", " : "", names[v[i]]);
}

/* NetworkTopologyStrategy's replicas, and where each driver would route
 * elsewhere: another set, or the same with a node twice. */
static void nts_trace(const placement *p, const place_key_info *k, const char *const *names,
                      json_t *t)
{
    const nts_topo *z = p->extra;
    if (k->point < 0)
        return;
    uint32_t cas[PLACE_MAX_PREFS], drv[PLACE_MAX_PREFS * 4];
    size_t nc = cassandra_nts_replicas(&z->t, (size_t)k->point, cas, PLACE_MAX_PREFS);
    char list[1024], other[1024];
    name_list(list, sizeof list, cas, nc, names);
    place__step(t, "replicas",
                "NetworkTopologyStrategy (Cassandra 4.x calculateNaturalReplicas): walking the "
                "ring from the token, each datacenter takes nodes of racks not yet used, a used "
                "rack only while it may still repeat one, until it holds its factor: %s",
                list);
    static const struct {
        cassandra_driver d;
        const char *step, *who;
    } drivers[] = {{CASSANDRA_DRIVER_PYTHON, "python-driver", "the Python driver (3.25)"},
                   {CASSANDRA_DRIVER_NODEJS, "nodejs-driver", "the Node.js driver (4.8-4.10)"}};
    for (size_t i = 0; i < sizeof drivers / sizeof *drivers; i++) {
        long nd = cassandra_nts_driver(&z->t, drivers[i].d, (size_t)k->point, drv,
                                       sizeof drv / sizeof *drv);
        if (nd < 0)
            continue;
        bool dup = false, same = (size_t)nd == nc;
        for (long a = 0; a < nd; a++)
            for (long b = a + 1; b < nd; b++)
                dup |= drv[a] == drv[b];
        for (long a = 0; same && a < nd; a++) {
            bool in = false;
            for (size_t b = 0; b < nc; b++)
                in |= cas[b] == drv[a];
            same = in;
        }
        name_list(other, sizeof other, drv, (size_t)nd, names);
        if (same && !dup)
            place__step(t, drivers[i].step, "%s routes to the same replicas (%s)", drivers[i].who,
                        other);
        else
            place__step(t, drivers[i].step,
                        "%s would route elsewhere: it computes %s%s, where Cassandra has %s",
                        drivers[i].who, other, dup ? " (a node twice)" : "", list);
    }
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
    if (is_nts(p) && p->extra)
        nts_trace(p, k, names, t);
    else if (p->cfg.replicas > 1)
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

const place_algo place_algo_cassandra = {
    .name = "cassandra",
    .title = "Apache Cassandra: Murmur3Partitioner token ring",
    .origin = "Cassandra's partitioner: a key's token is MurmurHash3 (signed 64-bit); each "
              "node owns the range up to its tokens (num_tokens vnodes or initial_token); "
              "SimpleStrategy replicas",
    .key_hash = "Murmur3 token (signed 64-bit)",
    .coord_name = "token",
    .space = "18446744073709551616",
    .params = {PP_NUM_TOKENS, PP_STRATEGY},
    .nparams = 2,
    .weights = PLACE_W_ANY,
    .replicas = PLACE_REP_WALK,
    .coord_kind = PLACE_COORD_SIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = -1,
    .minimal = true,
    .top = place__top64,
    .build = cassandra_build_op,
    .key = cassandra_key,
    .prefs = cassandra_prefs,
    .free_extra = nts_free,
    .segments = place__point_segments,
    .trace = cassandra_trace,
    .points = true,
    .layout_points = cassandra_layout_points,
    .tokens = true,
    .down_walk_replicas = true,
};
