/*
 * algo_jump.c - jump consistent hash (alg_jump.c) with MementoHash for
 * removals (alg_memento.c) as a placement algorithm: buckets are nodes in
 * join order, a node that leaves from the middle becomes a removed bucket.
 *
 * The layout is state: it evolves from the previous placement (leavers,
 * then joiners), or is parsed from the stored state text.  Cost: build
 * O(n + buckets), a key O(log buckets) expected (jump's), more per removed
 * bucket met.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_jump.h"
#include "alg_memento.h"
#include "place_int.h"

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
    if (!place__trace_sha64(k, t))
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

const place_algo place_algo_jump = {
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
    .top = place__top64,
    .build = jump_build_op,
    .free_extra = jump_free,
    .key = jump_key,
    .owner_of_hash = jump_owner_of_hash,
    .shares = jump_shares,
    .state_text = jump_state_text,
    .trace = jump_trace,
};
