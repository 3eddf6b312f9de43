/*
 * algo_redis.c - Redis Cluster's hash slots (alg_redis.c) as a placement
 * algorithm: 16384 slots split as `redis-cli --cluster create` does, then
 * moved as rebalance moves them when masters join and leave.
 *
 * The slot map is state: it evolves from the previous placement, or is
 * parsed from the stored state text.  Cost: build O(slots), a key one
 * CRC16 and O(1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_redis.h"
#include "place_int.h"

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
    if (place__trace_owned(k, t))
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

const place_algo place_algo_redis = {
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
