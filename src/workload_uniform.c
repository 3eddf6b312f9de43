/*
 * workload_uniform.c - sim_workload_each for the uniform workload only.
 *
 * It stands in until the workload branch lands (docs/api.md "Version 3:
 * traffic": workloads): that branch defines sim_workload_each over every
 * workload kind, and this file is then deleted.  Here every stored key has
 * the same share, 1 / keys, read through sim_keys_page in one pass: O(keys).
 */
#include <stdint.h>

#include "sim.h"

typedef struct each_ctx {
    sim_share_fn fn;
    void *ud;
    double share;
} each_ctx;

static int each_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                    size_t node_len)
{
    (void)pos;
    (void)node;
    (void)node_len;
    each_ctx *c = ud;
    return c->fn(c->ud, key, len, c->share);
}

int sim_workload_each(sim *s, sim_share_fn fn, void *ud, rs_error *err)
{
    int64_t n = sim_key_count(s), total;
    if (n <= 0)
        return 0;
    each_ctx c = {fn, ud, 1.0 / (double)n};
    return sim_keys_page(s, NULL, 0, NULL, 0, 0, INT64_MAX, &total, each_key, &c, err);
}
