/*
 * place.c - the algorithm table and the seed's ring algorithm.
 *
 * "ring": each node has max(1, round(points_per_node * weight)) points at
 * SHA-256 positions of "name", "name#1", ...; a key belongs to the first point
 * clockwise (>=, wrapping).  With one point per node this is exactly the
 * original simulator.  Build O(P log P), owner O(log P).
 */
#include "place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct placement {
    const struct algo *algo;
    ring *ring;
    size_t nodes;
};

typedef struct algo {
    const char *name;
    int (*build)(placement *p, hasher *h, const place_config *cfg,
                 const place_node *nodes, size_t n);
    long (*owner)(const placement *p, uint32_t pos, const char *key, size_t len);
} algo;

static int ring_algo_build(placement *p, hasher *h, const place_config *cfg,
                           const place_node *nodes, size_t n)
{
    ring_node *rn = malloc((n ? n : 1) * sizeof *rn);
    if (!rn)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        rn[i].name = nodes[i].name;
        rn[i].len = nodes[i].len;
        rn[i].points = place_node_points(cfg, nodes[i].weight);
    }
    int rc = ring_build(&p->ring, h, rn, n);
    free(rn);
    return rc;
}

static long ring_algo_owner(const placement *p, uint32_t pos, const char *key,
                            size_t len)
{
    (void)key;
    (void)len;
    return ring_owner(p->ring, pos);
}

static const algo algos[] = {
    {"ring", ring_algo_build, ring_algo_owner},
};
static const char *const algo_names[] = {"ring", NULL};

static const algo *find_algo(const char *name)
{
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++)
        if (strcmp(algos[i].name, name) == 0)
            return &algos[i];
    return NULL;
}

const char *const *place_algorithms(void) { return algo_names; }

void place_config_default(place_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    strcpy(cfg->algorithm, "ring");
    cfg->points_per_node = 1;
}

int place_config_check(const place_config *cfg, rs_error *err)
{
    if (!find_algo(cfg->algorithm))
        return rs_fail(err, RINGSIM_EPARAM, "unknown algorithm \"%s\" (known: ring)",
                       cfg->algorithm);
    if (cfg->points_per_node < 1 || cfg->points_per_node > PLACE_MAX_POINTS_PER_NODE)
        return rs_fail(err, RINGSIM_EPARAM, "points_per_node must be 1 to %u",
                       PLACE_MAX_POINTS_PER_NODE);
    return 0;
}

uint32_t place_node_points(const place_config *cfg, double weight)
{
    double p = round((double)cfg->points_per_node * weight);
    if (!(p >= 1)) /* also catches NaN */
        return 1;
    return p > PLACE_MAX_NODE_POINTS ? PLACE_MAX_NODE_POINTS : (uint32_t)p;
}

int place_build(placement **out, hasher *h, const place_config *cfg,
                const place_node *nodes, size_t n, rs_error *err)
{
    *out = NULL;
    int rc = place_config_check(cfg, err);
    if (rc)
        return rc;
    placement *p = calloc(1, sizeof *p);
    if (!p)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory building the ring");
    p->algo = find_algo(cfg->algorithm);
    p->nodes = n;
    rc = p->algo->build(p, h, cfg, nodes, n);
    if (rc) {
        place_free(p);
        return rs_fail(err, rc, "cannot build the %s placement", cfg->algorithm);
    }
    *out = p;
    return 0;
}

void place_free(placement *p)
{
    if (!p)
        return;
    ring_free(p->ring);
    free(p);
}

long place_owner(const placement *p, uint32_t pos, const char *key, size_t len)
{
    return p->algo->owner(p, pos, key, len);
}

const ring *place_ring(const placement *p) { return p->ring; }

void place_arc_shares(const placement *p, double *share, size_t n)
{
    for (size_t i = 0; i < n; i++)
        share[i] = 0;
    ring_arc_shares(p->ring, share, n);
}
