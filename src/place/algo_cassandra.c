/*
 * algo_cassandra.c - Cassandra's Murmur3Partitioner token ring
 * (alg_cassandra.c) as a placement algorithm: num_tokens vnodes per node
 * times its weight, or the node's initial_token list; SimpleStrategy
 * replicas.  A change of topology passes the previous ring, so the nodes
 * that stay keep their tokens.
 *
 * Cost: build O(tokens log tokens), a key one MurmurHash3 and
 * O(log tokens).
 */
#include <math.h>
#include <stdlib.h>

#include "alg_cassandra.h"
#include "place_int.h"

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
    place__point_key(p, alg_from_signed(cassandra_token(key, len)), k);
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

const place_algo place_algo_cassandra = {
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
    .top = place__top64,
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
