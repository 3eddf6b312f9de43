/*
 * place_states.c - what a placement does with nodes that are down (docs/api.md,
 * "Node states").
 *
 * A placement answers two things about a key: the owner by placement (every
 * node taken as up: place_key_info.owner) and who serves it with the states
 * applied (.served, .via).  Each algorithm says how a down node is treated
 * through its table entry (place_algo.down and the flags beside it), never
 * by name:
 *
 *   WALK      the next up node of the key's preference list serves: the
 *             seed's ring, multiprobe and Cassandra walk their points
 *             (Cassandra only the first `replicas` nodes: nobody when all
 *             of them are down), nginx walks its points as
 *             ngx_http_upstream_get_chash_peer does (hash++ past a peer
 *             that is down); jump, which has no list, rehashes the key
 *             (below).
 *   REBUILD   the real system builds its layout again from the nodes that
 *             serve: libmemcached with failed servers removed, nutcracker
 *             with auto_eject_hosts (the weights normalised over the live
 *             servers), Envoy's ring hash and Maglev from the healthy hosts
 *             unless in panic (fewer than panic_threshold percent healthy:
 *             every host serves, as LoadBalancerBase::isHostSetInPanic decides and
 *             thread_aware_lb_impl.cc normalizeWeights builds: hosts() in
 *             panic, else healthyHosts()),
 *             HAProxy's tree without the servers that are down, backups only
 *             when no active server is up (lb_chash.c chash_get_server_hash:
 *             the first usable backup, `fbck`, or with `option allbackups`
 *             the backup tree), rendezvous over the up nodes (its scores do
 *             not depend on the others, so this is its preference list).
 *             The layout of the serving nodes is a placement of its own (sub)
 *             whose node indexes map back to this one's.
 *   FAILOVER  Redis Cluster: a down master with a replica is served by its
 *             first replica (via = 0), without one its slots are unserved.
 *   OWN       the algorithm's serve op decides key by key: nginx's `hash`
 *             without `consistent` hashes the key again (21 tries, then round
 *             robin), HAProxy's map-based hash rebuilds its map from the
 *             servers that are up (both built once, at place_build).
 *
 * This file builds no placement and calls nothing of place.c: under
 * REBUILD it names the serving nodes, place.c builds their layout and
 * hands it over (place__states_adopt), and a key's answer in it comes in
 * with the key (place__states_key); place.c frees it.  So the recursion
 * of a placement holding a placement stays in place.c.
 *
 * Cost: nothing while every node is up (p->st stays NULL).  Otherwise WALK
 * on points: one pass over the points at build (a short walk each); REBUILD:
 * one more layout; place_key: one more lookup (REBUILD) or none.
 */
#include "place_int.h"

#include <stdlib.h>
#include <string.h>

struct place_states {
    size_t ndown;
    bool panic;            /* REBUILD with Envoy's panic: every node serves */
    long *serve_pt;        /* WALK on points: the node serving each point, -1 none */
    placement *sub;        /* REBUILD: the layout of the serving nodes */
    place_node *sub_nodes; /* what sub borrows */
    size_t *map;           /* sub's node index -> p's */
    uint64_t *sizes;       /* per node of p: what it serves from */
};

static bool is_down(const placement *p, long i) { return i >= 0 && p->nodes[i].down; }

/* WALK from point i: the first up node among the distinct nodes met, at
 * most `limit` of them; -1 when they are all down. */
static long walk_server(const placement *p, size_t i, size_t limit)
{
    if (limit && p->a->prefs) {
        /* the first up node of the key's replicas, as the algorithm lists
         * them (NetworkTopologyStrategy's, replica_domain's) */
        place_key_info k = {.point = (long)i, .owner = p->pts[i].node};
        long out[PLACE_MAX_PREFS];
        size_t got = p->a->prefs(p, &k,
                                 (uint32_t)(limit < PLACE_MAX_PREFS ? limit : PLACE_MAX_PREFS), out);
        for (size_t q = 0; q < got; q++)
            if (!p->nodes[out[q]].down)
                return out[q];
        return -1;
    }
    long seen[PLACE_MAX_PREFS];
    size_t nseen = 0;
    for (size_t s = 0; s < p->npts; s++) {
        long nd = p->pts[(i + s) % p->npts].node;
        if (!p->nodes[nd].down)
            return nd;
        if (limit == 0)
            continue;
        bool had = false;
        for (size_t k = 0; k < nseen && !had; k++)
            had = seen[k] == nd;
        if (!had && (seen[nseen++] = nd, nseen >= limit))
            return -1;
    }
    return -1;
}

/* The unbounded walk for every point at once: twice round the ring
 * backwards, carrying the last up node met.  O(points). */
static void next_up(const placement *p, long *serve)
{
    long nxt = -1;
    for (size_t s = 2 * p->npts; s-- > 0;) {
        long nd = p->pts[s % p->npts].node;
        if (!p->nodes[nd].down)
            nxt = nd;
        if (s < p->npts)
            serve[s] = nxt;
    }
}

/* The nodes that serve under REBUILD, into map[]; their count.  HAProxy
 * (backend.c recount_servers, lb_chash.c chash_get_server_hash) counts a
 * server usable when it is up and its weight is not 0: the active tree
 * serves while one active server is usable, else the first usable backup
 * (`fbck`) alone, or with `option allbackups` every usable backup. */
static size_t serving_set(const placement *p, size_t *map)
{
    const place_algo *a = p->a;
    size_t m = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!p->nodes[i].down && p->nodes[i].weight > 0 && (!a->backups || !p->nodes[i].backup))
            map[m++] = i;
    if (m || !a->backups)
        return m;
    for (size_t i = 0; i < p->n; i++)
        if (!p->nodes[i].down && p->nodes[i].weight > 0 && p->nodes[i].backup) {
            map[m++] = i;
            if (!p->cfg.param[PP_ALL_BACKUPS])
                break;
        }
    return m;
}

/* REBUILD: Envoy's panic, or the nodes that serve, into st->sub_nodes
 * (*m of them) for the caller to build. */
static int serving_nodes(placement *p, place_states *st, size_t *m, rs_error *err)
{
    size_t up = p->n - st->ndown;
    /* Envoy: healthy_percent = 100 * healthy / hosts below the threshold is
     * panic, and the ring or table is built from every host. */
    if (p->a->panic && 100.0 * (double)up / (double)p->n < (double)p->cfg.param[PP_PANIC_THRESHOLD]) {
        st->panic = true;
        memcpy(st->sizes, p->sizes, p->n * sizeof *st->sizes);
        return 0;
    }
    st->map = calloc(p->n + 1, sizeof *st->map);
    st->sub_nodes = calloc(p->n + 1, sizeof *st->sub_nodes);
    if (!st->map || !st->sub_nodes)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    *m = serving_set(p, st->map);
    for (size_t k = 0; k < *m; k++) {
        st->sub_nodes[k] = p->nodes[st->map[k]];
        st->sub_nodes[k].down = false;
        st->sub_nodes[k].backup = false;
    }
    if (p->a->pin)
        p->a->pin(p, st->sub_nodes, st->map, *m);
    return 0;
}

int place__states_build(placement *p, bool walk_points, const place_node **sub, size_t *m,
                        rs_error *err)
{
    *sub = NULL;
    *m = 0;
    size_t ndown = 0;
    for (size_t i = 0; i < p->n; i++)
        ndown += p->nodes[i].down;
    if (!ndown)
        return 0;
    place_states *st = calloc(1, sizeof *st);
    if (!st || !(st->sizes = calloc(p->n + 1, sizeof *st->sizes))) {
        free(st);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    p->st = st;
    st->ndown = ndown;
    switch (p->a->down) {
    case PLACE_DOWN_WALK:
        if (walk_points && p->npts) {
            size_t limit = p->a->down_walk_replicas ? p->cfg.replicas : 0;
            if (!(st->serve_pt = malloc(p->npts * sizeof *st->serve_pt)))
                return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            if (limit)
                for (size_t i = 0; i < p->npts; i++)
                    st->serve_pt[i] = walk_server(p, i, limit);
            else
                next_up(p, st->serve_pt);
            for (size_t i = 0; i < p->npts; i++)
                if (st->serve_pt[i] >= 0)
                    st->sizes[st->serve_pt[i]]++;
        } else {
            for (size_t i = 0; i < p->n; i++)
                st->sizes[i] = p->nodes[i].down ? 0 : p->sizes[i];
        }
        return 0;
    case PLACE_DOWN_REBUILD: {
        int rc = serving_nodes(p, st, m, err);
        *sub = !rc && st->sub_nodes ? st->sub_nodes : NULL;
        return rc;
    }
    case PLACE_DOWN_FAILOVER:
        for (size_t i = 0; i < p->n; i++)
            st->sizes[i] = p->nodes[i].down && !p->nodes[i].nreplicas ? 0 : p->sizes[i];
        return 0;
    case PLACE_DOWN_OWN:
        for (size_t i = 0; i < p->n; i++)
            st->sizes[i] = p->nodes[i].down ? 0 : p->sizes[i];
        return 0;
    }
    return 0;
}

void place__states_adopt(placement *p, placement *sub)
{
    place_states *st = p->st;
    st->sub = sub;
    for (size_t k = 0; k < sub->n; k++)
        st->sizes[st->map[k]] = sub->sizes[k];
}

placement *place__states_free(placement *p)
{
    place_states *st = p->st;
    if (!st)
        return NULL;
    placement *sub = st->sub;
    free(st->sub_nodes);
    free(st->map);
    free(st->serve_pt);
    free(st->sizes);
    free(st);
    p->st = NULL;
    return sub;
}

/* Jump has no preference list: a key of a down bucket is hashed again,
 * mix(hash + i x golden ratio) for i = 1, 2, ..., until the bucket it lands
 * on is up (only the down node's keys move, evenly over the others); after
 * 64 tries, the first up node after the owner in join order. */
static long rehash_server(const placement *p, const place_key_info *k)
{
    for (uint64_t i = 1; i <= 64; i++) {
        place_key_info j = *k;
        j.hash = j.coord = hash_mix(k->hash + i * 0x9e3779b97f4a7c15ull);
        j.owner = j.point = -1;
        p->a->owner_of_hash(p, &j);
        if (j.owner >= 0 && !p->nodes[j.owner].down)
            return j.owner;
    }
    for (size_t s = 1; s < p->n; s++) {
        long i = (long)(((size_t)k->owner + s) % p->n);
        if (!p->nodes[i].down)
            return i;
    }
    return -1;
}

void place__states_key(const placement *p, const place_key_info *sk, const char *key, size_t len,
                       place_key_info *k)
{
    const place_states *st = p->st;
    switch (p->a->down) {
    case PLACE_DOWN_WALK:
        if (!is_down(p, k->owner))
            return;
        if (st->serve_pt && k->point >= 0)
            k->served = st->serve_pt[k->point];
        else
            k->served = p->a->owner_of_hash ? rehash_server(p, k) : -1;
        return;
    case PLACE_DOWN_REBUILD:
        if (st->panic || !sk)
            return;
        k->served = sk->owner >= 0 ? (long)st->map[sk->owner] : -1;
        return;
    case PLACE_DOWN_FAILOVER:
        if (!is_down(p, k->owner))
            return;
        if (p->nodes[k->owner].nreplicas)
            k->via = 0;
        else
            k->served = -1;
        return;
    case PLACE_DOWN_OWN:
        k->served = p->a->serve(p, key, len, k);
        return;
    }
}

/* Segments by server: the algorithm's own, with each owner replaced by
 * whoever serves its part. */
int place__states_segments(const placement *p, place_seg **out, size_t *n)
{
    const place_states *st = p->st;
    if (p->a->down == PLACE_DOWN_REBUILD && !st->panic) {
        int rc = st->sub->a->segments(st->sub, out, n);
        for (size_t i = 0; !rc && i < *n; i++)
            if ((*out)[i].owner >= 0)
                (*out)[i].owner = (long)st->map[(*out)[i].owner];
        return rc;
    }
    if (st->serve_pt) { /* as place__point_segments, by server */
        if (!(*out = malloc((p->npts + 2) * sizeof **out)))
            return RINGSIM_ENOMEM;
        size_t m = 0;
        for (size_t i = 0; i < p->npts; i++)
            if (m == 0 || (*out)[m - 1].hi != p->pts[i].coord)
                (*out)[m++] = (place_seg){p->pts[i].coord, st->serve_pt[i]};
        if ((*out)[m - 1].hi != p->top)
            (*out)[m++] = (place_seg){p->top, st->serve_pt[0]};
        *n = m;
        return 0;
    }
    int rc = p->a->segments(p, out, n);
    for (size_t i = 0; !rc && p->a->down == PLACE_DOWN_FAILOVER && i < *n; i++)
        if (is_down(p, (*out)[i].owner) && !p->nodes[(*out)[i].owner].nreplicas)
            (*out)[i].owner = -1;
    return rc;
}

size_t place_down_count(const placement *p) { return p->st ? p->st->ndown : 0; }

uint64_t place_serving_size(const placement *p, size_t i)
{
    if (i >= p->n)
        return 0;
    return p->st ? p->st->sizes[i] : p->sizes[i];
}

bool place_in_panic(const placement *p) { return p->st && p->st->panic; }

/* Whether node i can take keys now (docs/api.md v4 "balance as the systems
 * count it"): its weight above 0 and it serves -- up, or in Envoy's panic
 * (every host serves), or a Redis master whose replica took over (the
 * replica stands in its place: its slots are served); under HAProxy a
 * backup only while it is in the serving set (no active server usable). */
static bool takes_keys(const placement *p, size_t i)
{
    const place_node *x = &p->nodes[i];
    if (!(x->weight > 0))
        return false;
    if (p->st && p->st->panic)
        return true;
    if (p->st && p->st->map) { /* REBUILD: the serving set */
        for (size_t k = 0; k < p->st->sub->n; k++)
            if (p->st->map[k] == i)
                return true;
        return false;
    }
    if (x->down)
        return p->a->down == PLACE_DOWN_FAILOVER && x->nreplicas > 0;
    if (p->a->backups && x->backup) { /* every node up: backups serve without actives */
        for (size_t k = 0; k < p->n; k++)
            if (!p->nodes[k].backup && p->nodes[k].weight > 0)
                return false;
        /* the first usable backup alone, or every one with allbackups */
        if (!p->cfg.param[PP_ALL_BACKUPS])
            for (size_t k = 0; k < i; k++)
                if (p->nodes[k].backup && p->nodes[k].weight > 0)
                    return false;
    }
    return true;
}

void place_fair_weights(const placement *p, double *w, size_t n)
{
    size_t m = n < p->n ? n : p->n;
    for (size_t i = 0; i < n; i++)
        w[i] = 0;
    for (size_t i = 0; i < m; i++)
        if (takes_keys(p, i))
            /* Ceph's reweight scales it; an OSD out (reweight 0) takes none */
            w[i] = (p->a->weights == PLACE_W_NONE ? 1.0 : p->nodes[i].weight) *
                   (1.0 - (p->nodes[i].reweight_off > 0x10000u ? 0x10000u : p->nodes[i].reweight_off) /
                              65536.0);
}

const placement *place_serving_layout(const placement *p, const size_t **map)
{
    if (p->st && p->st->sub) {
        *map = p->st->map;
        return p->st->sub;
    }
    *map = NULL;
    return p;
}

const char *place_down_rule_text(const placement *p)
{
    const place_algo *a = p->a;
    switch (a->down) {
    case PLACE_DOWN_WALK:
        if (a->down_walk_replicas)
            return "the first up replica of its preference list serves it";
        return a->prefs ? "the next up node clockwise serves it"
                        : "the key is hashed again until its bucket is up";
    case PLACE_DOWN_REBUILD:
        if (place_in_panic(p))
            return "fewer than panic_threshold percent of the hosts are up: in panic, every "
                   "host serves, down or not";
        return a->backups ? "its points leave the tree; backups serve when no active server is up"
                          : "the layout is rebuilt from the nodes that are up";
    case PLACE_DOWN_FAILOVER:
        return "its replica takes over its slots; without one they are unserved";
    case PLACE_DOWN_OWN:
        return a->down_text;
    }
    return "";
}
