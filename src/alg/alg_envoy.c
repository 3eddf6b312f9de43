/*
 * alg_envoy.c - Envoy's key hash and weight normalisation (see alg_envoy.h).
 *
 * The key hash is libxxhash's XXH64, the library Envoy itself links
 * (HashUtil::xxHash64 is a one-line wrapper around XXH64).  The weights are
 * checked the way Envoy's endpoint validation checks them, then divided by
 * their integer sum in double, in the same order of operations as
 * normalizeHostWeights(), so that the results are the same bits.
 */
#include "alg_envoy.h"

#include <math.h>
#include <stdlib.h>
#include <xxhash.h>

uint64_t envoy_key_hash(const char *key, size_t len) { return XXH64(key, len, 0); }

/* Bytes of name to quote in a message: at most 64, cut on a UTF-8 boundary. */
static int quote_len(const char *s, size_t len)
{
    if (len <= 64)
        return (int)len;
    size_t n = 64;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return (int)n;
}

int envoy_normalize_weights(const alg_node *nodes, size_t n, double *weight, envoy_host_weights *hw,
                            rs_error *err)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        double w = nodes[i].weight;
        if (!(w >= 1.0 && w <= ENVOY_WEIGHT_MAX && w == floor(w)))
            return rs_fail(err, RINGSIM_EPARAM,
                           "envoy weights are whole numbers from 1 to 4294967295: "
                           "\"%.*s\" has %g",
                           quote_len(nodes[i].name, nodes[i].len), nodes[i].name, w);
        sum += (uint64_t)w;
        if (sum > (uint64_t)ENVOY_WEIGHT_MAX)
            return rs_fail(err, RINGSIM_EPARAM,
                           "envoy refuses hosts whose weights sum to more than "
                           "4294967295 (reached at \"%.*s\")",
                           quote_len(nodes[i].name, nodes[i].len), nodes[i].name);
    }
    /* normalizeHostWeights(): weight = host->weight() * 1.0 / sum, where
     * 1.0 is the locality's normalised weight when there is no locality
     * weighting; min starts at 1.0 and max at 0.0 in refresh(). */
    double min = 1.0, max = 0.0;
    for (size_t i = 0; i < n; i++) {
        double w = nodes[i].weight * 1.0 / (double)sum;
        weight[i] = w;
        min = w < min ? w : min;
        max = w > max ? w : max;
    }
    hw->nodes = nodes;
    hw->weight = weight;
    hw->n = n;
    hw->min_weight = min;
    hw->max_weight = max;
    return 0;
}

int envoy_with_weights(const alg_node *nodes, size_t n, envoy_weighted_fn fn, void *ud, rs_error *err)
{
    double *w = malloc((n ? n : 1) * sizeof *w);
    if (!w)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    envoy_host_weights hw;
    int rc = envoy_normalize_weights(nodes, n, w, &hw, err);
    if (rc == 0)
        rc = fn(&hw, ud, err);
    free(w);
    return rc;
}
