/*
 * view.c - JSON answers of API.md (see view.h).  Pure formatting: every
 * number comes from the engine.
 */
#include "view.h"

#include <stdlib.h>

#include "store.h"

static json_t *nomem(rs_error *err, json_t *partial)
{
    json_decref(partial);
    rs_fail(err, RINGSIM_ENOMEM, "out of memory building the answer");
    return NULL;
}

static json_t *str_or_null(const char *s, size_t len)
{
    return s ? json_stringn(s, len) : json_null();
}

json_t *view_node(const sim_node_view *v)
{
    return json_pack("{s:o, s:I, s:f, s:I, s:I, s:f, s:f}", "name",
                     json_stringn(v->name, v->len), "position", (json_int_t)v->position,
                     "weight", v->weight, "points", (json_int_t)v->points, "keys",
                     (json_int_t)v->keys, "key_share", v->key_share, "arc_share",
                     v->arc_share);
}

json_t *view_nodes(sim *s, rs_error *err)
{
    sim_node_view *v;
    size_t n;
    if (sim_nodes(s, &v, &n, err))
        return NULL;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, view_node(&v[i]))) {
            json_decref(arr);
            arr = NULL;
        }
    free(v);
    json_t *o = arr ? json_pack("{s:o}", "nodes", arr) : NULL;
    return o ? o : nomem(err, NULL);
}

json_t *view_node_get(sim *s, const char *name, size_t len, rs_error *err)
{
    sim_node_view v;
    if (sim_node_get(s, name, len, &v, err))
        return NULL;
    json_t *o = view_node(&v);
    return o ? o : nomem(err, NULL);
}

json_t *view_ring(sim *s, rs_error *err)
{
    const place_config *cfg = sim_config(s);
    const ring *r = place_ring(sim_placement(s));
    json_t *pts = json_array();
    size_t n = ring_size(r);
    for (size_t i = 0; pts && i < n; i++) {
        size_t len;
        const char *name = sim_node_name(s, ring_point_node(r, i), &len);
        if (json_array_append_new(
                pts, json_pack("{s:I, s:o, s:I}", "position", (json_int_t)ring_point_pos(r, i),
                               "node", json_stringn(name, len), "index",
                               (json_int_t)ring_point_index(r, i))))
            return nomem(err, pts);
    }
    json_t *o = pts ? json_pack("{s:s, s:I, s:o}", "algorithm", cfg->algorithm,
                                "points_per_node", (json_int_t)cfg->points_per_node,
                                "points", pts)
                    : NULL;
    return o ? o : nomem(err, NULL);
}

json_t *view_config(sim *s, rs_error *err)
{
    const place_config *cfg = sim_config(s);
    json_t *o = json_pack("{s:s, s:I}", "algorithm", cfg->algorithm, "points_per_node",
                          (json_int_t)cfg->points_per_node);
    /* Only a read-only database says so: the shape is otherwise unchanged. */
    const char *ro = sim_read_only(s);
    if (o && ro &&
        (json_object_set_new(o, "read_only", json_true()) ||
         json_object_set_new(o, "read_only_reason", json_string(ro))))
        return nomem(err, o);
    return o ? o : nomem(err, NULL);
}

json_t *view_stats(sim *s, rs_error *err)
{
    sim_stats st;
    sim_stats_get(s, &st);
    sim_node_view *v;
    size_t n;
    if (sim_nodes(s, &v, &n, err))
        return NULL;
    json_t *per = json_array();
    for (size_t i = 0; per && i < n; i++)
        if (json_array_append_new(
                per, json_pack("{s:o, s:I, s:f, s:f}", "name", json_stringn(v[i].name, v[i].len),
                               "keys", (json_int_t)v[i].keys, "key_share", v[i].key_share,
                               "arc_share", v[i].arc_share))) {
            json_decref(per);
            per = NULL;
        }
    free(v);
    json_t *o = per ? json_pack("{s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:f, s:o}", "nodes",
                                (json_int_t)st.nodes, "keys", (json_int_t)st.keys, "mean",
                                st.mean, "stddev", st.stddev, "cv", st.cv, "min",
                                (json_int_t)st.min, "max", (json_int_t)st.max,
                                "max_over_mean", st.max_over_mean, "per_node", per)
                    : NULL;
    return o ? o : nomem(err, NULL);
}

json_t *view_lookup(sim *s, const char *key, size_t len, rs_error *err)
{
    sim_lookup_result r;
    if (sim_lookup(s, key, len, &r, err))
        return NULL;
    json_t *point = json_null();
    if (r.has_point)
        point = json_pack("{s:I, s:o, s:I}", "position", (json_int_t)r.point_position,
                          "node", str_or_null(r.node, r.node_len), "index",
                          (json_int_t)r.point_index);
    json_t *o = json_pack("{s:o, s:I, s:o, s:b, s:s, s:o, s:b}", "key", json_stringn(key, len),
                          "position", (json_int_t)r.position, "node",
                          str_or_null(r.node, r.node_len), "stored", r.stored, "sha256",
                          r.sha256, "point", point, "wrapped", r.wrapped);
    return o ? o : nomem(err, NULL);
}

static json_t *key_object(const char *key, size_t len, uint32_t pos, const char *node,
                          size_t node_len)
{
    return json_pack("{s:o, s:I, s:o}", "key", json_stringn(key, len), "position",
                     (json_int_t)pos, "node", str_or_null(node, node_len));
}

json_t *view_key_get(sim *s, const char *key, size_t len, rs_error *err)
{
    uint32_t pos;
    const char *node;
    size_t nl;
    if (sim_key_get(s, key, len, &pos, &node, &nl, err))
        return NULL;
    json_t *o = key_object(key, len, pos, node, nl);
    return o ? o : nomem(err, NULL);
}

static int add_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                   size_t node_len)
{
    return json_array_append_new(ud, key_object(key, len, pos, node, node_len))
               ? RINGSIM_ENOMEM
               : 0;
}

json_t *view_keys(sim *s, const char *node, size_t node_len, const char *prefix,
                  size_t prefix_len, int64_t offset, int64_t limit, rs_error *err)
{
    json_t *arr = json_array();
    int64_t total = 0;
    if (!arr)
        return nomem(err, NULL);
    int rc = sim_keys_page(s, node, node_len, prefix, prefix_len, offset,
                           limit < 0 ? INT64_MAX : limit, &total, add_key, arr, err);
    if (rc == RINGSIM_ENOMEM)
        return nomem(err, arr);
    if (rc) {
        json_decref(arr);
        return NULL;
    }
    json_t *o = json_pack("{s:I, s:o}", "total", (json_int_t)total, "keys", arr);
    return o ? o : nomem(err, NULL);
}

json_t *view_density(sim *s, uint32_t bins, rs_error *err)
{
    int64_t *c = malloc(bins * sizeof *c);
    if (!c)
        return nomem(err, NULL);
    if (sim_density(s, bins, c, err)) {
        free(c);
        return NULL;
    }
    json_t *arr = json_array();
    int64_t total = 0;
    for (uint32_t i = 0; arr && i < bins; i++) {
        total += c[i];
        json_array_append_new(arr, json_integer(c[i]));
    }
    free(c);
    json_t *o = arr ? json_pack("{s:I, s:I, s:o}", "bins", (json_int_t)bins, "total",
                                (json_int_t)total, "counts", arr)
                    : NULL;
    return o ? o : nomem(err, NULL);
}

json_t *view_operation(const store_op *op)
{
    json_t *mf = json_loads(op->moved_from, 0, NULL);
    return json_pack("{s:I, s:s, s:s, s:s, s:I, s:o}", "id", (json_int_t)op->id, "at", op->at,
                     "type", op->type, "subject", op->subject, "keys_moved",
                     (json_int_t)op->keys_moved, "moved_from", mf ? mf : json_array());
}

static int add_op(void *ud, const store_op *op)
{
    return json_array_append_new(ud, view_operation(op)) ? RINGSIM_ENOMEM : 0;
}

json_t *view_operations(sim *s, int64_t after, int64_t limit, rs_error *err)
{
    json_t *arr = json_array();
    if (!arr)
        return nomem(err, NULL);
    int rc = store_ops_each(sim_store(s), after, limit, add_op, arr, err);
    if (rc == RINGSIM_ENOMEM)
        return nomem(err, arr);
    if (rc) {
        json_decref(arr);
        return NULL;
    }
    json_t *o = json_pack("{s:o}", "operations", arr);
    return o ? o : nomem(err, NULL);
}

json_t *view_operation_get(sim *s, int64_t id, rs_error *err)
{
    store_op op;
    if (store_op_get(sim_store(s), id, &op, err))
        return NULL;
    json_t *o = view_operation(&op);
    store_op_clear(&op);
    return o ? o : nomem(err, NULL);
}

static int add_move(void *ud, const char *key, const char *from, const char *to)
{
    return json_array_append_new(ud, json_pack("{s:s, s:o, s:o}", "key", key, "from",
                                               from ? json_string(from) : json_null(), "to",
                                               to ? json_string(to) : json_null()))
               ? RINGSIM_ENOMEM
               : 0;
}

json_t *view_operation_moves(sim *s, int64_t id, int64_t offset, int64_t limit,
                             rs_error *err)
{
    json_t *o = view_operation_get(s, id, err);
    if (!o)
        return NULL;
    json_t *moves = json_array();
    int64_t total = 0;
    int rc = moves ? store_moves_page(sim_store(s), id, offset, limit, &total, add_move,
                                      moves, err)
                   : RINGSIM_ENOMEM;
    if (rc) {
        json_decref(moves);
        if (rc == RINGSIM_ENOMEM)
            return nomem(err, o);
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "moves_total", json_integer(total));
    json_object_set_new(o, "moves", moves);
    return o;
}
