/*
 * view_locations.c - the failure-domain tree (API.md v4, "failure
 * domains"): GET /api/locations and `ringsim locations`.
 *
 * The tree is built from the nodes' own answers (view_nodes), so a domain
 * says exactly what its nodes say, summed: a domain is a path of (type,
 * name) pairs from the widest level, and a node belongs to every domain on
 * its location's path.  Each domain answers {"type", "name", "nodes",
 * "weight", "keys", "requests", "up", "down", "key_share", "fair_share",
 * "load_over_fair", "members", "children"}: nodes counts the nodes below
 * it, members names those whose location ends here, key_share is its share
 * of the keys served, fair_share the sum of its nodes' fair shares (API.md
 * "balance as the systems count it") and load_over_fair their quotient
 * (null when its fair share is 0).  Nodes without a location are listed
 * apart: {"locations": [root…], "unlocated": [name…]}.  Costs: one pass over the nodes, each level a scan
 * of its siblings (n x levels x siblings).
 */
#include <stdbool.h>
#include <string.h>

#include "view.h"

/* The child of parent's "children" with this type and name, made when
 * missing; NULL when out of memory. */
static json_t *child(json_t *parent, const char *type, const char *name)
{
    json_t *kids = json_object_get(parent, "children"), *k;
    size_t i;
    json_array_foreach(kids, i, k)
    {
        if (!strcmp(json_string_value(json_object_get(k, "type")), type) &&
            !strcmp(json_string_value(json_object_get(k, "name")), name))
            return k;
    }
    k = json_pack("{s:s, s:s, s:i, s:f, s:I, s:f, s:i, s:i, s:f, s:[], s:[]}", "type", type, "name",
                  name, "nodes", 0, "weight", 0.0, "keys", (json_int_t)0, "requests", 0.0, "up", 0,
                  "down", 0, "fair_share", 0.0, "members", "children");
    if (!k || json_array_append_new(kids, k))
        return NULL;
    return k;
}

static void add_num(json_t *o, const char *k, double v)
{
    json_t *x = json_object_get(o, k);
    if (json_is_integer(x))
        json_integer_set(x, json_integer_value(x) + (json_int_t)v);
    else
        json_real_set(x, json_number_value(x) + v);
}

/* A node's figures into domain d. */
static void count(json_t *d, const json_t *n)
{
    add_num(d, "nodes", 1);
    add_num(d, "weight", json_number_value(json_object_get(n, "weight")));
    add_num(d, "keys", (double)json_integer_value(json_object_get(n, "keys")));
    add_num(d, "requests", json_number_value(json_object_get(n, "requests")));
    add_num(d, "fair_share", json_number_value(json_object_get(n, "fair_share")));
    const char *st = json_string_value(json_object_get(n, "state"));
    add_num(d, st && !strcmp(st, "down") ? "down" : "up", 1);
}

/* key_share and load_over_fair, once the sums are made, down the tree. */
static void finish(json_t *d, double served)
{
    double keys = (double)json_integer_value(json_object_get(d, "keys"));
    double fair = json_number_value(json_object_get(d, "fair_share"));
    double share = served > 0 ? keys / served : 0;
    json_object_set_new(d, "key_share", json_real(share));
    json_object_set_new(d, "load_over_fair", fair > 0 ? json_real(share / fair) : json_null());
    json_t *k;
    size_t i;
    json_array_foreach(json_object_get(d, "children"), i, k) finish(k, served);
}

json_t *view_locations(sim *s, rs_error *err)
{
    json_t *nodes = view_nodes(s, err);
    if (!nodes)
        return NULL;
    json_t *root = json_pack("{s:[], s:[]}", "children", "unlocated");
    bool failed = !root;
    double served = 0;
    json_t *n;
    size_t i;
    json_array_foreach(json_object_get(nodes, "nodes"), i, n)
    {
        if (failed)
            break;
        json_t *loc = json_object_get(n, "location"), *d = root, *pr;
        size_t k;
        served += (double)json_integer_value(json_object_get(n, "keys"));
        json_array_foreach(loc, k, pr)
        {
            if (!(d = child(d, json_string_value(json_array_get(pr, 0)),
                            json_string_value(json_array_get(pr, 1)))))
                break;
            count(d, n);
        }
        failed = !d || json_array_append(json_object_get(d, d == root ? "unlocated" : "members"),
                                         json_object_get(n, "name"));
    }
    json_decref(nodes);
    json_t *top = root ? json_object_get(root, "children") : NULL, *k;
    json_array_foreach(top, i, k) finish(k, served);
    /* the roots answer as "locations" */
    if (!failed && (json_object_set(root, "locations", top) || json_object_del(root, "children")))
        failed = true;
    if (failed) {
        json_decref(root);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory"), NULL;
    }
    return root;
}
