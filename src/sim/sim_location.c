/*
 * sim_location.c - a node's location in the engine (API.md v4, "failure
 * domains").
 *
 * The location is a node attribute like its states (sim_states.c): stored
 * in nodes.attrs as {"location": [[type, name]…]} (absent: none), so a
 * database made before it needs no migration -- its nodes have none --
 * and history, revert, `?at=` and the undo records keep it through the
 * attribute codecs without knowing it.  The placement sees it as
 * place_node.loc.  The operation that changes it, sim_set_location, is in
 * sim_ops.c beside the other node operations.  Costs: linear in the
 * levels (16 at most).
 */
#define _GNU_SOURCE /* strdup */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

static void loc_clear(node *x)
{
    for (size_t i = 0; i < x->nloc; i++) {
        free((char *)x->loc[i].type);
        free((char *)x->loc[i].name);
    }
    free(x->loc);
    x->loc = NULL;
    x->nloc = 0;
}

int sim__node_set_location(node *x, const place_loc *v, size_t n)
{
    loc_clear(x);
    if (!n)
        return 0;
    place_loc *l = calloc(n, sizeof *l);
    if (!l)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(l[i].type = strdup(v[i].type)) || !(l[i].name = strdup(v[i].name))) {
            x->loc = l;
            x->nloc = i + 1; /* frees what was made, NULL included */
            loc_clear(x);
            return RINGSIM_ENOMEM;
        }
    x->loc = l;
    x->nloc = n;
    return 0;
}

bool sim__loc_equal(const place_loc *a, size_t an, const place_loc *b, size_t bn)
{
    if (an != bn)
        return false;
    for (size_t i = 0; i < an; i++)
        if (strcmp(a[i].type, b[i].type) || strcmp(a[i].name, b[i].name))
            return false;
    return true;
}

static bool loc_any(const node *x) { return x->nloc > 0; }

static int loc_copy(node *dst, const node *src)
{
    dst->loc = NULL;
    dst->nloc = 0;
    return sim__node_set_location(dst, src->loc, src->nloc);
}

static bool loc_equal(const node *a, const node *b)
{
    return sim__loc_equal(a->loc, a->nloc, b->loc, b->nloc);
}

static int loc_to_json(const node *x, json_t *o)
{
    if (!x->nloc)
        return 0;
    json_t *a = place_loc_json(x->loc, x->nloc);
    return a && !json_object_set_new(o, "location", a) ? 0 : RINGSIM_ENOMEM;
}

static int loc_from_json(const json_t *o, node *x)
{
    json_t *j = json_object_get(o, "location");
    place_loc v[PLACE_MAX_LOC];
    size_t n = 0;
    rs_error e;
    x->loc = NULL;
    x->nloc = 0;
    if (j && place_loc_from_json(j, v, &n, &e))
        return RINGSIM_EDB;
    return sim__node_set_location(x, v, n);
}

static void loc_place(const node *x, place_node *pn)
{
    pn->loc = x->loc;
    pn->nloc = x->nloc;
}

/* The location as an attribute of a node (sim_int.h sim_node_attr). */
const sim_node_attr sim_node_attr_location = {
    .name = "location",
    .any = loc_any,
    .copy = loc_copy,
    .clear = loc_clear,
    .equal = loc_equal,
    .to_json = loc_to_json,
    .from_json = loc_from_json,
    .place = loc_place,
};
