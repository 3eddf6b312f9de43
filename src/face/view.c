/*
 * view.c - JSON answers of docs/api.md (see view.h).  Pure formatting: every
 * number comes from the engine.
 */
#define _GNU_SOURCE /* asprintf */
#include "view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "csv.h"
#include "export_config.h"
#include "import.h"
#include "names.h"

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

/* A node's "requests" and "bytes" (docs/api.md v3 traffic), added to o. */
static void view_node_load(sim *s, size_t index, json_t *o)
{
    double rq;
    int64_t by;
    rs_error e;
    if (sim_node_load(s, index, &rq, &by, &e) == 0) {
        json_object_set_new(o, "requests", json_real(rq));
        json_object_set_new(o, "bytes", json_integer(by));
    }
}

/* A node's "fair_share" and "load_over_fair" (docs/api.md v4; null when
 * it cannot take keys), added to o. */
static void view_fair(const sim_node_view *v, json_t *o)
{
    json_object_set_new(o, "fair_share", json_real(v->fair_share));
    json_object_set_new(o, "load_over_fair",
                        v->load_over_fair < 0 ? json_null() : json_real(v->load_over_fair));
}

json_t *view_unavailable(sim *s, rs_error *err)
{
    sim_unavailable u;
    if (sim_unavailable_get(s, &u, err))
        return NULL;
    json_t *o = json_pack("{s:I, s:f, s:f, s:I}", "keys", (json_int_t)u.keys, "key_share",
                          u.key_share, "requests_share", u.requests_share, "bytes",
                          (json_int_t)u.bytes);
    return o ? o : nomem(err, NULL);
}

json_t *view_node(sim *s, const sim_node_view *v)
{
    json_t *o = json_pack("{s:o, s:I, s:f, s:I, s:I, s:f, s:f, s:f}", "name",
                          json_stringn(v->name, v->len), "position", (json_int_t)v->position,
                          "weight", v->weight, "points", (json_int_t)v->points, "keys",
                          (json_int_t)v->keys, "key_share", v->key_share, "arc_share", v->arc_share,
                          "owns", v->owns);
    if (o)
        view_fair(v, o);
    if (o) /* API.md v4: [] when it has none */
        json_object_set_new(o, "location", place_loc_json(v->loc, v->nloc));
    if (o)
        place_node_json(sim_placement(s), v->index, o);
    if (o)
        view_node_load(s, v->index, o);
    view_node_states(s, v, o);
    return o;
}

json_t *view_nodes(sim *s, rs_error *err)
{
    sim_node_view *v;
    size_t n;
    if (sim_nodes(s, &v, &n, err))
        return NULL;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, view_node(s, &v[i]))) {
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
    json_t *o = view_node(s, &v);
    return o ? o : nomem(err, NULL);
}

json_t *view_ring(sim *s, rs_error *err)
{
    const place_config *cfg = sim_config(s);
    json_t *o = place_layout_json(sim_placement(s), sim_node_names(s));
    if (!o)
        return nomem(err, NULL);
    json_object_set_new(o, "algorithm", json_string(cfg->algorithm));
    json_object_set_new(o, "points_per_node", json_integer(cfg->param[PP_POINTS_PER_NODE]));
    json_object_set_new(o, "replicas", json_integer(cfg->replicas));
    return o;
}

char *view_lookalike(sim *s, const char *name, size_t len)
{
    /* The names alone (a node's view lists its points: at 1000 nodes of
     * 160 points, views of every node cost more than the node add). */
    const char *const *names = sim_node_names(s);
    char *w = NULL;
    for (size_t i = 0, n = sim_node_count(s); !w && i < n; i++) {
        const char *o = names[i];
        size_t ol = o ? strlen(o) : 0;
        if (!o || (ol == len && !memcmp(o, name, len)) || !names_look_alike(o, ol, name, len))
            continue;
        char *esc = names_escape(o, ol);
        if (esc && asprintf(&w, "looks the same as \"%s\"", esc) < 0)
            w = NULL;
        free(esc);
    }
    return w;
}

int view_param_check(const char *algorithm, const char *name, size_t len, rs_error *err)
{
    json_t *cat = place_algorithms_json(), *a, *ps = NULL, *p;
    size_t i;
    int rc = 0;
    if (!cat)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    json_array_foreach(cat, i, a)
    {
        if (!strcmp(json_string_value(json_object_get(a, "name")), algorithm)) {
            ps = json_object_get(a, "params");
            json_t *mp; /* cassandra's replication map, replica_domain */
            size_t m;
            static const char *const more[] = {"map_params", "text_params"};
            for (size_t q = 0; q < 2; q++)
                json_array_foreach(json_object_get(a, more[q]), m, mp)
                {
                    const char *pn = json_string_value(json_object_get(mp, "name"));
                    if (strlen(pn) == len && !memcmp(pn, name, len))
                        goto out;
                }
        }
    }
    char list[256] = "";
    size_t n = 0;
    if (ps) {
        json_array_foreach(ps, i, p)
        {
            const char *pn = json_string_value(json_object_get(p, "name"));
            if (strlen(pn) == len && !memcmp(pn, name, len))
                goto out;
            if (n < sizeof list)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", pn);
        }
        rc = rs_fail(err, RINGSIM_EPARAM, "algorithm %s has no parameter \"%.*s\" (%s%s)",
                     algorithm, (int)(len > 64 ? 64 : len), name,
                     n ? "its parameters: " : "it takes none", list);
    }
out:
    json_decref(cat);
    return rc;
}

int view_params_check(const char *algorithm, const json_t *body, rs_error *err)
{
    const char *k;
    json_t *v;
    int rc = 0;
    const json_t *params = json_object_get(body, "params");
    const json_t *top = json_object_get(body, "points_per_node");
    if (top && (rc = view_param_check(algorithm, "points_per_node", 15, err)))
        return rc;
    const json_t *inner = json_object_get(params, "points_per_node");
    if (top && inner && !json_equal((json_t *)top, (json_t *)inner))
        return rs_fail(err, RINGSIM_EPARAM,
                       "points_per_node is given twice, with two values (once is enough: "
                       "\"points_per_node\" or \"params\": {\"points_per_node\"})");
    if (!json_is_object(params))
        return 0;
    json_object_foreach((json_t *)params, k, v)
    {
        if ((rc = view_param_check(algorithm, k, strlen(k), err)))
            break;
    }
    return rc;
}

json_t *view_config(sim *s, rs_error *err)
{
    json_t *o = place_config_json(sim_config(s), false);
    if (o) {
        json_object_set_new(o, "algorithms", place_algorithms_json());
        /* the formats the page offers, from the importers' and the
         * writers' own tables */
        json_object_set_new(o, "import_formats", import_formats_json());
        json_object_set_new(o, "export_formats", export_config_formats_json());
    }
    /* Only a read-only database says so: the shape is otherwise unchanged. */
    const char *ro = sim_read_only(s);
    if (o && ro &&
        (json_object_set_new(o, "read_only", json_true()) ||
         json_object_set_new(o, "read_only_reason", json_string(ro))))
        return nomem(err, o);
    return o ? o : nomem(err, NULL);
}

json_t *view_algorithms(rs_error *err)
{
    json_t *a = place_algorithms_json();
    json_t *o = a ? json_pack("{s:o}", "algorithms", a) : NULL;
    return o ? o : nomem(err, NULL);
}

/* The hottest keys (sim_requests_stats.hot) with the node that owns each
 * and the one that serves it, as GET /api/lookup names them. */
static json_t *hottest_keys_json(sim *s, const sim_requests_stats *r, rs_error *err)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->nhot; i++) {
        const sim_hot_key *h = &r->hot[i];
        sim_lookup_result l;
        if (sim_lookup(s, h->key, h->len, &l, err)) {
            json_decref(a);
            return NULL;
        }
        json_t *e = json_pack("{s:s%, s:f, s:o, s:o}", "key", h->key, h->len, "share", h->share,
                              "node", str_or_null(l.node, l.node_len), "served_by",
                              str_or_null(l.served_by, l.served_len));
        if (!e || json_array_append_new(a, e)) {
            json_decref(a);
            a = NULL;
        }
    }
    return a ? a : nomem(err, NULL);
}

static json_t *requests_json(sim *s, bool with_keys, rs_error *err)
{
    sim_requests_stats r;
    if (sim_requests_get(s, &r, err))
        return NULL;
    json_t *hot = r.has_hottest ? json_pack("{s:s%, s:f}", "key", r.hottest_key, r.hottest_len,
                                            "share", r.hottest_share)
                                : json_null();
    json_t *o = hot ? json_pack("{s:f, s:f, s:o, s:f}", "max_over_mean", r.max_over_mean, "cv",
                                r.cv, "hottest_key", hot, "bound", r.bound)
                    : NULL;
    if (!o)
        return nomem(err, NULL);
    if (with_keys) { /* beyond API.md v4: the stats' alone (nodes are this state's) */
        json_t *keys = hottest_keys_json(s, &r, err);
        if (!keys) {
            json_decref(o);
            return NULL;
        }
        json_object_set_new(o, "hottest_keys", keys);
    }
    return o;
}

json_t *view_requests(sim *s, rs_error *err) { return requests_json(s, false, err); }

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
                per, json_pack("{s:o, s:I, s:f, s:f, s:f}", "name", json_stringn(v[i].name, v[i].len),
                               "keys", (json_int_t)v[i].keys, "key_share", v[i].key_share,
                               "arc_share", v[i].arc_share, "weight", v[i].weight))) {
            json_decref(per);
            per = NULL;
        }
    for (size_t i = 0; per && i < n; i++) {
        view_fair(&v[i], json_array_get(per, i));
        view_node_load(s, v[i].index, json_array_get(per, i));
    }
    free(v);
    json_t *rq = requests_json(s, true, err);
    json_t *un = rq ? view_unavailable(s, err) : NULL;
    if (!un) {
        json_decref(rq);
        json_decref(per);
        return NULL;
    }
    json_t *o = per ? json_pack("{s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:f, s:o, s:o}", "nodes",
                                (json_int_t)st.nodes, "keys", (json_int_t)st.keys, "mean", st.mean,
                                "stddev", st.stddev, "cv", st.cv, "min", (json_int_t)st.min, "max",
                                (json_int_t)st.max, "max_over_mean", st.max_over_mean, "per_node",
                                per, "requests", rq)
                    : NULL;
    if (o)
        json_object_set_new(o, "unavailable", un);
    else
        json_decref(un);
    if (o && place_down_count(sim_placement(s))) /* docs/api.md "Node states" */
        json_object_set_new(o, "unserved", json_integer((json_int_t)sim_unassigned(s)));
    return o ? o : nomem(err, NULL);
}

/* The point that decided a lookup, in a layout of points, as GET /api/ring
 * draws it: its position (on [0, 2^32)), its coordinate as the algorithm
 * writes it, its node and its number within the node; null for layouts
 * without points. */
static json_t *point_json(const placement *pl, const char *const *names, const sim_lookup_result *r)
{
    char c[24];
    if (!r->has_point || !place_coord_str(pl, r->point.coord, c))
        return json_null();
    return json_pack("{s:I, s:s, s:s, s:I}", "position",
                     (json_int_t)place_point_position(pl, r->point.coord), "coordinate", c, "node",
                     names[r->point.node], "index", (json_int_t)r->point.index);
}

/* Under an algorithm whose layout is a slot map the masters hold (Redis
 * Cluster): "node_replicas", the replicas of the master that holds the
 * key's slot (from the imported CLUSTER NODES text; [] without), and the
 * trace's "owner" step says where the map came from: the import the state
 * stands on, when it gave that slot to that master and no configure has
 * made the map anew since; otherwise the engine's own words stay. */
static void slot_origin(sim *s, const sim_lookup_result *r, json_t *o)
{
    const char *alg = sim_config(s)->algorithm;
    if (!place_slot_count(alg))
        return;
    json_t *nr = json_array();
    const place_node *pn = r->info.owner >= 0 ? &sim_place_nodes(s)[r->info.owner] : NULL;
    for (size_t i = 0; nr && pn && i < pn->nreplicas; i++)
        json_array_append_new(nr, json_string(pn->replicas[i]));
    if (nr)
        json_object_set_new(o, "node_replicas", nr);
    json_t *imp = NULL, *owner_step = NULL, *st;
    int64_t id = 0;
    bool configured = false;
    rs_error e;
    size_t i;
    json_array_foreach(json_object_get(o, "trace"), i, st)
    {
        if (!strcmp(json_string_value(json_object_get(st, "step")), "owner"))
            owner_step = st;
    }
    if (!pn || !owner_step || !r->info.has_coord ||
        sim_import_last_ex(s, &imp, &id, &configured, &e) || !imp)
        return;
    const char *f = json_string_value(json_object_get(imp, "format"));
    const char *holder = NULL; /* the master the text gave the slot to */
    json_t *n, *run;
    size_t k;
    json_array_foreach(json_object_get(imp, "nodes"), i, n)
    {
        json_array_foreach(json_object_get(n, "slots"), k, run)
        {
            json_int_t a = json_integer_value(json_array_get(run, 0)),
                       b = json_integer_value(json_array_get(run, 1));
            if ((json_int_t)r->info.coord >= a && (json_int_t)r->info.coord <= b)
                holder = json_string_value(json_object_get(n, "name"));
        }
    }
    char *d = NULL;
    unsigned long long slot = (unsigned long long)r->info.coord;
    const char *now = sim_node_names(s)[r->info.owner];
    int w = 0;
    if (f && !strcmp(f, "redis-nodes") && !configured && holder && !strcmp(holder, now))
        w = asprintf(&d,
                     "slot %llu is held by %s, as the imported CLUSTER NODES text says "
                     "(operation %lld): the slot map of the import, not computed",
                     slot, now, (long long)id);
    else if (f && !strcmp(f, "redis-nodes") && !configured && holder)
        w = asprintf(&d,
                     "slot %llu is held by %s: the imported CLUSTER NODES text (operation "
                     "%lld) gave it to %s; redis-cli's rebalance moved it as masters joined "
                     "and left since",
                     slot, now, (long long)id, holder);
    if (w < 0)
        d = NULL;
    if (d)
        json_object_set_new(owner_step, "detail", json_string(d));
    free(d);
    json_decref(imp);
}

json_t *view_lookup(sim *s, const char *key, size_t len, rs_error *err)
{
    sim_lookup_result r;
    if (sim_lookup(s, key, len, &r, err))
        return NULL;
    const placement *pl = sim_placement(s);
    const char *const *names = sim_node_names(s);
    json_t *point = point_json(pl, names, &r);
    char hash[24], coord[24];
    place_hash_str(pl, r.info.hash, hash);
    bool has_coord = r.info.has_coord && place_coord_str(pl, r.info.coord, coord);
    json_t *reps = json_array();
    for (size_t i = 0; reps && i < r.nprefs; i++)
        json_array_append_new(reps, json_string(names[r.prefs[i]]));
    json_t *o = json_pack(
        "{s:o, s:I, s:o, s:b, s:s, s:o, s:b, s:s, s:o, s:o, s:o}", "key", json_stringn(key, len),
        "position", (json_int_t)r.position, "node", str_or_null(r.node, r.node_len), "stored",
        r.stored, "sha256", r.sha256, "point", point, "wrapped", r.has_point && r.point.wrapped,
        "hash", hash, "coordinate", has_coord ? json_string(coord) : json_null(), "replicas",
        reps ? reps : json_array(), "trace", place_trace_json(pl, key, len, &r.info, names));
    if (o) {
        json_object_set_new(o, "served_by", str_or_null(r.served_by, r.served_len));
        slot_origin(s, &r, o);
    }
    return o ? o : nomem(err, NULL);
}

/* A stored key: its stored owner, and where the placement puts it now
 * (the coordinate, and the preference list with replicas). */
json_t *view_key(sim *s, const char *key, size_t len, uint32_t pos, const char *node, size_t node_len)
{
    json_t *o = json_pack("{s:o, s:I, s:o}", "key", json_stringn(key, len), "position",
                          (json_int_t)pos, "node", str_or_null(node, node_len));
    if (!o)
        return NULL;
    const placement *pl = sim_placement(s);
    sim_where w;
    sim_key_where(s, key, len, &w);
    /* Stored where it is served; "node" is the owner by placement
     * (docs/api.md "Node states"), "served_by" who answers. */
    json_t *served = str_or_null(node, node_len);
    if (place_down_count(pl)) {
        size_t ol = 0;
        const char *on = w.info.owner >= 0 ? sim_node_name(s, (size_t)w.info.owner, &ol) : NULL;
        json_object_set_new(o, "node", str_or_null(on, ol));
        if (w.info.via >= 0 && w.info.served >= 0) { /* a Redis replica */
            json_decref(served);
            served = json_string(sim_place_nodes(s)[w.info.served].replicas[w.info.via]);
        }
    }
    json_object_set_new(o, "served_by", served);
    char coord[24];
    bool has = w.info.has_coord && place_coord_str(pl, w.info.coord, coord);
    json_object_set_new(o, "coordinate", has ? json_string(coord) : json_null());
    if (sim_config(s)->replicas > 1) {
        const char *const *names = sim_node_names(s);
        json_t *reps = json_array();
        for (size_t i = 0; reps && i < w.nprefs; i++)
            json_array_append_new(reps, json_string(names[w.prefs[i]]));
        json_object_set_new(o, "replicas", reps);
    }
    return o;
}

typedef struct key_list {
    sim *s;
    json_t *arr;
} key_list;

json_t *view_key_get(sim *s, const char *key, size_t len, rs_error *err)
{
    uint32_t pos;
    const char *node;
    size_t nl;
    if (sim_key_get(s, key, len, &pos, &node, &nl, err))
        return NULL;
    json_t *o = view_key(s, key, len, pos, node, nl);
    return o ? o : nomem(err, NULL);
}

static int add_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                   size_t node_len)
{
    key_list *l = ud;
    return json_array_append_new(l->arr, view_key(l->s, key, len, pos, node, node_len))
               ? RINGSIM_ENOMEM
               : 0;
}

json_t *view_keys(sim *s, const char *node, size_t node_len, const char *prefix, size_t prefix_len,
                  sim_key_order order, bool desc, int64_t offset, int64_t limit, rs_error *err)
{
    json_t *arr = json_array();
    int64_t total = 0;
    if (!arr)
        return nomem(err, NULL);
    int rc = sim_keys_page_ordered(s, node, node_len, prefix, prefix_len, order, desc, offset,
                                   limit < 0 ? INT64_MAX : limit, &total, add_key,
                                   &(key_list){s, arr}, err);
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
    const char *by = NULL;
    if (sim_density(s, bins, c, &by, err)) {
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
    json_t *o = arr ? json_pack("{s:I, s:I, s:s, s:o}", "bins", (json_int_t)bins, "total",
                                (json_int_t)total, "by", by, "counts", arr)
                    : NULL;
    return o ? o : nomem(err, NULL);
}

/* OSD id of node i ("osd.N"), the names ceph accepts. */
static long osd_of(const char *name) { return strtol(name + 4, NULL, 10); }

json_t *view_pgs(sim *s, int64_t offset, int64_t limit, rs_error *err)
{
    const placement *p = sim_placement(s);
    uint32_t pg_num, pool;
    if (!place_ceph_pool(p, &pg_num, &pool)) {
        rs_fail(err, RINGSIM_EPARAM, "pgs are the ceph algorithm's; the algorithm is %s",
                sim_config(s)->algorithm);
        return NULL;
    }
    int64_t *c = calloc(pg_num, sizeof *c);
    const char *by = NULL;
    if (!c)
        return nomem(err, NULL);
    if (sim_density(s, pg_num, c, &by, err)) {
        free(c);
        return NULL;
    }
    const char *const *names = sim_node_names(s);
    json_t *arr = json_array();
    for (int64_t ps = offset; arr && ps < (int64_t)pg_num && ps < offset + limit; ps++) {
        long up[PLACE_MAX_REPLICAS];
        size_t n = place_ceph_up(p, (uint32_t)ps, up, PLACE_MAX_REPLICAS);
        json_t *u = json_array();
        long primary = -1;
        for (size_t i = 0; u && i < n; i++) {
            json_array_append_new(u, up[i] < 0 ? json_null() : json_integer(osd_of(names[up[i]])));
            if (primary < 0 && up[i] >= 0)
                primary = osd_of(names[up[i]]);
        }
        char id[32];
        snprintf(id, sizeof id, "%u.%llx", pool, (unsigned long long)ps);
        json_t *e = u ? json_pack("{s:s, s:o, s:o, s:I}", "pgid", id, "up", u, "primary",
                                  primary < 0 ? json_null() : json_integer(primary), "keys",
                                  (json_int_t)c[ps])
                      : NULL;
        if (!e || json_array_append_new(arr, e)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    free(c);
    json_t *o = arr ? json_pack("{s:I, s:o}", "total", (json_int_t)pg_num, "pgs", arr) : NULL;
    return o ? o : nomem(err, NULL);
}

json_t *view_operation(const sim_op *op)
{
    json_t *mf = json_loads(op->moved_from, 0, NULL);
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:I, s:o, s:I}", "id", (json_int_t)op->id, "at",
                          op->at, "type", op->type, "subject", op->subject, "keys_moved",
                          (json_int_t)op->keys_moved, "moved_from", mf ? mf : json_array(),
                          "replica_moves", (json_int_t)op->replica_moves);
    /* Unknown (null) for operations logged before schema 5. */
    if (o) {
        json_object_set_new(o, "requests_moved",
                            op->has_loads ? json_real(op->requests_moved) : json_null());
        json_object_set_new(o, "bytes_moved",
                            op->has_loads ? json_integer(op->bytes_moved) : json_null());
    }
    if (o && !strcmp(op->type, "set_state"))
        view_state_op(op, o);
    return o;
}

/* Whether the configuration the operation left is ceph's. */
static bool op_is_ceph(const sim_op *op)
{
    json_t *c = op->config ? json_loads(op->config, 0, NULL) : NULL;
    const char *a = json_string_value(json_object_get(c, "algorithm"));
    bool yes = a && !strcmp(a, "ceph");
    json_decref(c);
    return yes;
}

json_t *view_operation_in(sim *s, const sim_op *op)
{
    json_t *o = view_operation(op), *v4 = NULL;
    rs_error e;
    if (!o)
        return NULL;
    if (sim_op_v4(s, op->id, &v4, &e) == RINGSIM_ENOMEM) {
        json_decref(o);
        return NULL;
    }
    json_t *p = json_object_get(v4, "pairs"), *u = json_object_get(v4, "unavailable_after");
    json_object_set(o, "pairs", p ? p : json_null());
    json_object_set(o, "unavailable_after", u ? u : json_null());
    /* ceph: PGs remapped and shards moved, kept where they are not 0 */
    json_t *pr = json_object_get(v4, "pgs_remapped"), *ps = json_object_get(v4, "pg_shards_moved");
    if (pr || (v4 && op_is_ceph(op))) { /* json_integer_value(NULL) is 0 */
        json_object_set_new(o, "pgs_remapped", json_integer(json_integer_value(pr)));
        json_object_set_new(o, "pg_shards_moved", json_integer(json_integer_value(ps)));
    }
    json_decref(v4);
    return o;
}

typedef struct op_list {
    sim *s;
    json_t *arr;
} op_list;

static int add_op(void *ud, const sim_op *op)
{
    op_list *l = ud;
    return json_array_append_new(l->arr, view_operation_in(l->s, op)) ? RINGSIM_ENOMEM : 0;
}

json_t *view_operations(sim *s, int64_t after, int64_t limit, rs_error *err)
{
    json_t *arr = json_array();
    if (!arr)
        return nomem(err, NULL);
    int rc = sim_log_each(s, after, limit, add_op, &(op_list){s, arr}, err);
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
    sim_op op;
    if (sim_log_get(s, id, &op, err))
        return NULL;
    json_t *o = view_operation_in(s, &op);
    sim_op_clear(&op);
    return o ? o : nomem(err, NULL);
}

json_t *view_move(const char *key, const char *from, const char *to)
{
    return json_pack("{s:s, s:o, s:o}", "key", key, "from", from ? json_string(from) : json_null(),
                     "to", to ? json_string(to) : json_null());
}

static int add_move(void *ud, const char *key, const char *from, const char *to)
{
    return json_array_append_new(ud, view_move(key, from, to)) ? RINGSIM_ENOMEM : 0;
}

json_t *view_operation_moves(sim *s, int64_t id, int64_t offset, int64_t limit, rs_error *err)
{
    json_t *o = view_operation_get(s, id, err);
    if (!o)
        return NULL;
    json_t *moves = json_array();
    int64_t total = 0;
    int rc = moves ? sim_log_moves(s, id, offset, limit, &total, add_move, moves, err)
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

/* ---- preview ---- */

static int preview_apply(sim *s, void *arg, rs_error *err)
{
    view_preview_req *p = arg;
    int64_t op;
    switch (p->type) {
    case SIM_OP_ADD_NODE:
        return sim_add_node_spec(s, &p->node, &op, err);
    case SIM_OP_REMOVE_NODE:
        return sim_remove_node(s, p->node.name, p->node.len, &op, err);
    case SIM_OP_SET_STATE:
        if (!p->node.name && p->node.nloc == 1) /* a domain */
            return sim_set_state_domain(s, p->node.loc[0].type, p->node.loc[0].name, p->node.down,
                                        &op, err);
        return sim_set_state(s, p->node.name, p->node.len, p->node.down, &op, err);
    case SIM_OP_SET_REWEIGHT:
        return sim_set_reweight(s, p->node.name, p->node.len, p->node.weight, &op, err);
    case SIM_OP_IMPORT:
        return sim_import(s, p->import, &op, err);
    case SIM_OP_CONFIGURE:
        return sim_configure(s, &p->cfg, &op, err);
    default:
        return rs_fail(err, RINGSIM_EPARAM, "%s cannot be previewed",
                       p->type == SIM_OP_UNKNOWN ? "this operation" : sim_op_type_name(p->type));
    }
}

static void preview_after(void *ud, sim *s)
{
    rs_error e;
    json_t **after = ud;
    *after = view_stats(s, &e);
}

json_t *view_preview(sim *s, view_preview_req *req, rs_error *err)
{
    json_t *before = view_stats(s, err), *after = NULL;
    if (!before)
        return NULL;
    sim_preview pv = {.after = preview_after, .ud = &after, .sample = 20};
    if (sim_preview_run(s, &pv, preview_apply, req, err)) {
        json_decref(before);
        json_decref(after);
        return NULL;
    }
    /* A change that changes nothing (a node set to the state it has) runs
     * no operation: its preview moves nothing and leaves the stats. */
    if (!pv.moved_from) {
        pv.moved_from = json_object();
        pv.moved_to = json_object();
        json_decref(pv.pairs);
        pv.pairs = json_array();
        json_decref(pv.unavailable_after);
        pv.unavailable_after = json_incref(json_object_get(before, "unavailable"));
        json_decref(pv.sample_moves);
        pv.sample_moves = json_array();
        if (!after)
            after = json_deep_copy(before);
    }
    json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:I, s:o, s:o*, s:o}", "op",
                          sim_op_type_name(req->type), "keys_moved", (json_int_t)pv.keys_moved,
                          "moved_from", pv.moved_from, "moved_to", pv.moved_to, "replica_moves",
                          (json_int_t)pv.replica_moves, "before", before, "after", after, "sample",
                          pv.sample_moves);
    if (o) {
        json_object_set_new(o, "requests_moved", json_real(pv.requests_moved));
        json_object_set_new(o, "bytes_moved", json_integer(pv.bytes_moved));
        json_object_set_new(o, "pairs", pv.pairs ? pv.pairs : json_array());
        if (pv.has_pgs) {
            json_object_set_new(o, "pgs_remapped", json_integer((json_int_t)pv.pgs_remapped));
            json_object_set_new(o, "pg_shards_moved", json_integer((json_int_t)pv.pg_shards_moved));
        }
        /* the state after, measured in full (requests and bytes included) */
        json_t *ua = json_object_get(after, "unavailable");
        json_object_set(o, "unavailable_after", ua ? ua : pv.unavailable_after);
        json_decref(pv.unavailable_after);
    } else {
        json_decref(pv.pairs);
        json_decref(pv.unavailable_after);
    }
    return o ? o : nomem(err, NULL);
}

/* ---- compare ---- */

static json_t *stats_json(const sim_stats *st)
{
    return json_pack("{s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:f}", "nodes", (json_int_t)st->nodes,
                     "keys", (json_int_t)st->keys, "mean", st->mean, "stddev", st->stddev, "cv",
                     st->cv, "min", (json_int_t)st->min, "max", (json_int_t)st->max,
                     "max_over_mean", st->max_over_mean);
}

json_t *view_compare(sim *s, const char *algorithms, const char *const *params, size_t nparams,
                     uint64_t max_keys, rs_error *err)
{
    /* The list: given, or the whole catalogue. */
    json_t *cat = place_algorithms_json();
    size_t cap = json_array_size(cat) + 16, n = 0;
    compare_result *res = calloc(cap, sizeof *res);
    if (!cat || !res) {
        json_decref(cat);
        free(res);
        return nomem(err, NULL);
    }
    int rc = 0;
    if (algorithms && *algorithms) {
        const char *p = algorithms;
        while (!rc && *p && n < cap) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            res[n].cfg = *sim_config(s);
            if (len == 0 || len >= sizeof res[n].cfg.algorithm) {
                rc = rs_fail(err, RINGSIM_EPARAM, "algorithms: a comma-separated list of names");
                break;
            }
            memcpy(res[n].cfg.algorithm, p, len);
            res[n].cfg.algorithm[len] = '\0';
            if ((rc = place_config_check(&res[n].cfg, err)) == RINGSIM_EPARAM &&
                strstr(err->msg, "unknown algorithm"))
                break;
            rc = 0;
            n++;
            p = c ? c + 1 : p + len;
        }
        if (!rc && *p)
            rc = rs_fail(err, RINGSIM_EPARAM, "algorithms: too many names");
    } else {
        size_t i;
        json_t *a;
        json_array_foreach(cat, i, a)
        {
            res[n].cfg = *sim_config(s);
            snprintf(res[n].cfg.algorithm, sizeof res[n].cfg.algorithm, "%s",
                     json_string_value(json_object_get(a, "name")));
            n++;
        }
    }
    json_decref(cat);
    for (size_t i = 0; !rc && i < n; i++) {
        /* Replicas the algorithm has not: compare its single copy. */
        if (place_config_check(&res[i].cfg, NULL))
            res[i].cfg.replicas = 1;
        for (size_t k = 0; !rc && k < nparams; k++) {
            const char *eq = strchr(params[k], '=');
            char name[64];
            if (!eq || (size_t)(eq - params[k]) >= sizeof name) {
                rc = rs_fail(err, RINGSIM_EPARAM, "params: NAME=VALUE");
                break;
            }
            memcpy(name, params[k], (size_t)(eq - params[k]));
            name[eq - params[k]] = '\0';
            rc = place_config_set_param(&res[i].cfg, name, eq + 1, err);
        }
    }
    compare_sample info;
    if (!rc)
        rc = compare_run(s, res, n, max_keys, &info, err);
    if (rc) {
        free(res);
        return NULL;
    }
    json_t *reqs = view_requests(s, err), *arr = reqs ? json_array() : NULL;
    for (size_t i = 0; arr && i < n; i++) {
        compare_result *r = &res[i];
        json_t *cj = place_config_json(&r->cfg, false);
        json_t *pj = json_object_get(cj, "params");
        json_t *o = json_pack("{s:s, s:O, s:I, s:b}", "algorithm", r->cfg.algorithm, "params",
                              pj ? pj : json_null(), "replicas", (json_int_t)r->cfg.replicas,
                              "current", !strcmp(r->cfg.algorithm, sim_config(s)->algorithm));
        json_decref(cj);
        if (!o)
            continue;
        if (r->rc) {
            json_object_set_new(
                o, "error",
                json_pack("{s:s, s:s}", "code", ringsim_errcode(r->rc), "message", r->err.msg));
        } else {
            json_t *st = stats_json(&r->stats);
            if (st) /* as GET /api/stats: what nobody serves */
                json_object_set_new(st, "unavailable",
                                    json_pack("{s:I, s:f, s:f, s:I}", "keys",
                                              (json_int_t)r->stats.unavailable, "key_share",
                                              r->stats.keys > 0 ? (double)r->stats.unavailable /
                                                                      (double)r->stats.keys
                                                                : 0.0,
                                              "requests_share", r->unav_requests, "bytes",
                                              (json_int_t)(r->unav_bytes + 0.5)));
            /* the requests as GET /api/stats gives them: the hottest key and
             * the bound are the workload's, the same under every algorithm */
            json_t *rq = reqs ? json_deep_copy(reqs) : NULL;
            if (st && rq) {
                json_object_set_new(rq, "max_over_mean", json_real(r->req_max_over_mean));
                json_object_set_new(rq, "cv", json_real(r->req_cv));
                json_object_set_new(st, "requests", rq);
            } else {
                json_decref(rq);
            }
            json_object_set_new(o, "stats", st);
            json_object_set_new(o, "structural_max_over_mean", json_real(r->structural));
            json_object_set_new(o, "lookup_ns", json_real(r->lookup_ns));
            json_object_set_new(o, "memory_bytes", json_integer((json_int_t)r->memory_bytes));
            json_object_set_new(o, "moves_if_added",
                                r->has_added ? json_integer((json_int_t)(r->moves_if_added + 0.5))
                                             : json_null());
            json_object_set_new(o, "moves_if_removed",
                                json_integer((json_int_t)(r->moves_if_removed + 0.5)));
            json_object_set_new(o, "requests_moved_if_added",
                                r->has_added ? json_real(r->requests_if_added) : json_null());
            json_object_set_new(o, "requests_moved_if_removed", json_real(r->requests_if_removed));
            json_object_set_new(o, "bytes_moved_if_added",
                                r->has_added ? json_integer((json_int_t)(r->bytes_if_added + 0.5))
                                             : json_null());
            json_object_set_new(o, "bytes_moved_if_removed",
                                json_integer((json_int_t)(r->bytes_if_removed + 0.5)));
            json_object_set_new(o, "removed_sampled",
                                json_pack("{s:I, s:I}", "nodes", (json_int_t)r->removed_sampled,
                                          "of", (json_int_t)r->removed_of));
        }
        json_array_append_new(arr, o);
    }
    free(res);
    json_decref(reqs);
    json_t *o = arr ? json_pack("{s:I, s:I, s:o, s:o}", "keys", (json_int_t)info.keys, "nodes",
                                (json_int_t)sim_node_count(s), "sample",
                                json_pack("{s:I, s:I, s:b}", "keys", (json_int_t)info.sampled,
                                          "every", (json_int_t)info.step, "sampled", info.step > 1),
                                "results", arr)
                    : NULL;
    return o ? o : nomem(err, NULL);
}

/* ---- theory beside measurement ---- */

json_t *view_theory(sim *s, int64_t nodes, rs_error *err)
{
    static const int64_t vs[] = {1, 2, 5, 10, 20, 50, 100, 160, 200, 500, 1000};
    enum { NV = sizeof vs / sizeof vs[0], SAMPLE = 20000 };
    /* N = 1 is answered for 1 (every algorithm balanced, a join moves 1/2),
     * not turned into 2; with no node and no ?nodes= it is 1 as well, and
     * the answer's "nodes" says which N it is for. */
    size_t n = nodes > 0 ? (size_t)nodes : sim_node_count(s);
    if (n < 1)
        n = 1;
    theory_point pts[NV];
    for (size_t i = 0; i < NV; i++)
        pts[i] = (theory_point){vs[i], 0, 0, 0};
    json_t *cat = place_algorithms_json();
    size_t na = json_array_size(cat);
    theory_alg *algs = calloc(na + 1, sizeof *algs);
    if (!cat || !algs) {
        json_decref(cat);
        free(algs);
        return nomem(err, NULL);
    }
    for (size_t i = 0; i < na; i++)
        snprintf(algs[i].name, sizeof algs[i].name, "%s",
                 json_string_value(json_object_get(json_array_get(cat, i), "name")));
    json_decref(cat);
    if (compare_theory(sim_hasher(s), n, pts, NV, algs, na, SAMPLE, err)) {
        free(algs);
        return NULL;
    }
    json_t *pa = json_array(), *aa = json_array();
    for (size_t i = 0; pa && i < NV; i++)
        json_array_append_new(pa, json_pack("{s:I, s:f, s:f, s:f}", "points_per_node",
                                            (json_int_t)pts[i].v, "expected_max_over_mean",
                                            pts[i].expected, "ring_max_over_mean", pts[i].ring,
                                            "ring_join_moved", pts[i].ring_join_moved));
    for (size_t i = 0; aa && i < na; i++) {
        json_t *o = json_pack("{s:s}", "algorithm", algs[i].name);
        if (algs[i].rc)
            json_object_set_new(o, "error",
                                json_pack("{s:s, s:s}", "code", ringsim_errcode(algs[i].rc),
                                          "message", algs[i].err.msg));
        else {
            json_object_set_new(o, "structural_max_over_mean", json_real(algs[i].structural));
            json_object_set_new(o, "join_moved", json_real(algs[i].join_moved));
        }
        json_array_append_new(aa, o);
    }
    free(algs);
    /* The sentence a reader takes away, for 160 points (memcached's choice). */
    const theory_point *p160 = &pts[7];
    char sentence[300];
    snprintf(sentence, sizeof sentence,
             "With %lld points per node, expect the busiest of %zu nodes to hold about %.2fx "
             "its share (this ring: %.2fx); a join should move 1/%zu = %.1f%% of the keys "
             "(this ring: %.1f%%).",
             (long long)p160->v, n, p160->expected, p160->ring, n + 1, 100.0 / (double)(n + 1),
             100.0 * p160->ring_join_moved);
    json_t *o = pa && aa ? json_pack("{s:I, s:I, s:f, s:o, s:o, s:s}", "nodes", (json_int_t)n,
                                     "sample_keys", (json_int_t)SAMPLE, "ideal_join_moved",
                                     1.0 / (double)(n + 1), "points", pa, "algorithms", aa,
                                     "sentence", sentence)
                         : NULL;
    return o ? o : nomem(err, NULL);
}

/* ---- every key, streamed ---- */

typedef struct key_writer {
    sim *s;
    FILE *f;
    csv_writer csv;
    bool as_csv;
    int64_t n;
} key_writer;

static int write_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                     size_t node_len)
{
    key_writer *w = ud;
    json_t *j = view_key(w->s, key, len, pos, node, node_len);
    if (!j)
        return RINGSIM_ENOMEM;
    int rc = 0;
    if (w->as_csv) {
        rc = csv_row(&w->csv, j);
    } else {
        char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        rc = !t                                                    ? RINGSIM_ENOMEM
             : fprintf(w->f, "%s\n    %s", w->n ? "," : "", t) < 0 ? RINGSIM_EFULL
                                                                   : 0;
        free(t);
    }
    json_decref(j);
    w->n++;
    return rc;
}

static int file_sink(void *ud, const char *data, size_t len)
{
    return fwrite(data, 1, len, ud) == len ? 0 : RINGSIM_EFULL;
}

int view_keys_write(sim *s, FILE *f, bool csv, const char *node, size_t node_len,
                    const char *prefix, size_t prefix_len, int64_t *total, rs_error *err)
{
    key_writer w = {s, f, {0}, csv, 0};
    csv_init(&w.csv, file_sink, f);
    int64_t n = 0;
    int rc = !csv && fputs("{\n  \"keys\": [", f) < 0 ? RINGSIM_EFULL : 0;
    if (!rc)
        rc = sim_keys_page(s, node, node_len, prefix, prefix_len, 0, INT64_MAX, &n, write_key, &w,
                           err);
    csv_close(&w.csv);
    if (!rc && !csv && fprintf(f, "%s],\n  \"total\": %lld\n}\n", w.n ? "\n  " : "", (long long)n) < 0)
        rc = RINGSIM_EFULL;
    if (total)
        *total = n;
    return rc;
}

/* ---- the difference between two states ---- */

json_t *view_diff(sim *s, sim_history *h, int64_t from, int64_t to, int64_t offset, int64_t limit,
                  rs_error *err)
{
    sim_diff d;
    if (sim_diff_get(s, h, from, to, offset, limit, false, &d, err))
        return NULL;
    json_t *o = json_pack("{s:I, s:I, s:I, s:O, s:O, s:I, s:I, s:O, s:O, s:b, s:s, s:I, s:O}",
                          "from", (json_int_t)d.from, "to", (json_int_t)d.to, "keys_moved",
                          (json_int_t)d.keys_moved, "moved_from", d.moved_from, "moved_to",
                          d.moved_to, "keys_added", (json_int_t)d.keys_added, "keys_removed",
                          (json_int_t)d.keys_removed, "nodes_added", d.nodes_added, "nodes_removed",
                          d.nodes_removed, "config_changed", d.config_changed, "how", d.how,
                          "moves_total", (json_int_t)d.moves_total, "moves", d.moves);
    if (o)
        json_object_set_new(o, "pairs", json_incref(d.pairs));
    if (o && d.why[0])
        json_object_set_new(o, "why", json_string(d.why));
    sim_diff_clear(&d);
    return o ? o : nomem(err, NULL);
}
