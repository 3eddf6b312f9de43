/*
 * algo_maglev.c - Envoy's MAGLEV load balancer (alg_maglev.c) as a
 * placement algorithm: a lookup table of table_size (prime) entries filled
 * by each host's permutation; a key goes to entry xxHash64(key) mod
 * table_size.
 *
 * Cost: build O(table_size), a key O(1).
 */
#include "alg_maglev.h"
#include "place_int.h"

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
    if (place__trace_owned(k, t))
        place__step(t, "owner",
                    "the table, filled by each host's permutation (offset and skip from "
                    "xxHash64 of its name) in turns weighted by its share, gives entry %llu "
                    "to %s",
                    (unsigned long long)k->coord, names[k->owner]);
}

const place_algo place_algo_maglev = {
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
