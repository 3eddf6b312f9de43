/*
 * sim_states.c - node states in the engine (docs/api.md, "Node states").
 *
 * A node is up or down; HAProxy's backup flag, a Redis master's replicas
 * and Ceph's `osd reweight` ({"reweight": R}, absent = 1) ride along.
 * They are stored in nodes.attrs ({"state": "down"}, absent =
 * up; {"backup": true}; {"replicas": ["ip:port", …]}) and reach the
 * placement through place_node, which answers both the owner by placement
 * and who serves (place_states.c).  The engine keeps the serving placement
 * as its layout: a stored key's node is the node that serves it (the
 * owner's for a Redis master that failed over to its replica, which holds
 * its slots' data), so node counters count what each node serves, and a
 * set_state is a change of topology like any other -- the keys whose server
 * changes move, through the segment diff where the algorithm has one.
 *
 * This file is the states' codec: a node's states copied, compared,
 * written to and read from JSON and shown to the placement, registered as
 * a node attribute (sim_node_attr_states, at the end) through which the
 * state's code reaches them; it calls no other file of the engine.
 * The operation that sets them, sim_set_state, is in sim_ops.c beside the
 * other node operations; its cost is that of a topology change (segments:
 * the arcs that change hands; jump and multiprobe: every key re-placed).
 */
#define _GNU_SOURCE /* strndup */
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>

int sim__node_set_replicas(node *x, const char *const *v, size_t n)
{
    char **r = n ? calloc(n, sizeof *r) : NULL;
    if (n && !r)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(r[i] = strdup(v[i]))) {
            for (size_t k = 0; k < i; k++)
                free(r[k]);
            free(r);
            return RINGSIM_ENOMEM;
        }
    x->replicas = r;
    x->nreplicas = n;
    return 0;
}

uint32_t sim__reweight16(double r)
{
    /* OSDMonitor's `osd reweight`: (int)((double)CEPH_OSD_IN * w) */
    return r <= 0 ? 0 : r >= 1 ? 0x10000u : (uint32_t)(int)((double)0x10000 * r);
}

int sim__node_states_copy(node *dst, const node *src)
{
    dst->down = src->down;
    dst->backup = src->backup;
    dst->reweighted = src->reweighted;
    dst->reweight = src->reweight;
    dst->replicas = NULL;
    dst->nreplicas = 0;
    return sim__node_set_replicas(dst, (const char *const *)src->replicas, src->nreplicas);
}

int sim__states_to_json(const node *x, json_t *o)
{
    int rc = 0;
    if (x->down)
        rc |= json_object_set_new(o, "state", json_string("down"));
    if (x->backup)
        rc |= json_object_set_new(o, "backup", json_true());
    if (x->reweighted)
        rc |= json_object_set_new(o, "reweight", json_real(x->reweight));
    if (x->nreplicas) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < x->nreplicas; i++)
            rc |= json_array_append_new(a, json_string(x->replicas[i]));
        rc |= a ? json_object_set_new(o, "replicas", a) : -1;
    }
    return rc ? RINGSIM_ENOMEM : 0;
}

int sim__states_from_json(const json_t *o, node *x)
{
    json_t *st = json_object_get(o, "state"), *bk = json_object_get(o, "backup");
    json_t *rp = json_object_get(o, "replicas"), *rw = json_object_get(o, "reweight");
    if ((st && !json_is_string(st)) || (bk && !json_is_boolean(bk)) || (rp && !json_is_array(rp)))
        return RINGSIM_EDB;
    if (rw && !(json_is_number(rw) && json_number_value(rw) >= 0 && json_number_value(rw) <= 1))
        return RINGSIM_EDB;
    x->reweighted = rw != NULL;
    x->reweight = rw ? json_number_value(rw) : 1.0;
    if (st && strcmp(json_string_value(st), "down") != 0 && strcmp(json_string_value(st), "up") != 0)
        return RINGSIM_EDB;
    x->down = st && !strcmp(json_string_value(st), "down");
    x->backup = json_is_true(bk);
    size_t n = json_array_size(rp);
    const char **v = n ? calloc(n, sizeof *v) : NULL;
    if (n && !v)
        return RINGSIM_ENOMEM;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = (v[i] = json_string_value(json_array_get(rp, i))) ? 0 : RINGSIM_EDB;
    if (!rc)
        rc = sim__node_set_replicas(x, v, n);
    free(v);
    return rc;
}

bool sim__states_equal(const node *a, const node *b)
{
    if (a->down != b->down || a->backup != b->backup || a->nreplicas != b->nreplicas ||
        a->reweighted != b->reweighted || (a->reweighted && a->reweight != b->reweight))
        return false;
    for (size_t i = 0; i < a->nreplicas; i++)
        if (strcmp(a->replicas[i], b->replicas[i]) != 0)
            return false;
    return true;
}

static bool states_any(const node *x)
{
    return x->down || x->backup || x->nreplicas || x->reweighted;
}

static void states_clear(node *x)
{
    for (size_t i = 0; i < x->nreplicas; i++)
        free(x->replicas[i]);
    free(x->replicas);
    x->replicas = NULL;
    x->nreplicas = 0;
    x->reweighted = false;
    x->reweight = 1.0;
}

static void states_place(const node *x, place_node *pn)
{
    pn->down = x->down;
    pn->backup = x->backup;
    pn->reweight_off = x->reweighted ? 0x10000u - sim__reweight16(x->reweight) : 0;
    pn->replicas = (const char *const *)x->replicas;
    pn->nreplicas = x->nreplicas;
}

/* Node states as an attribute of a node (sim_int.h sim_node_attr). */
const sim_node_attr sim_node_attr_states = {
    .name = "states",
    .any = states_any,
    .copy = sim__node_states_copy,
    .clear = states_clear,
    .equal = sim__states_equal,
    .to_json = sim__states_to_json,
    .from_json = sim__states_from_json,
    .place = states_place,
};
