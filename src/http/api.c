/*
 * api.c - routes and handlers of the HTTP API (see api.h).
 *
 * Validation follows docs/api.md: names that are missing, not strings or break
 * the name rules are `invalid_name`; other bad values `invalid_parameter`;
 * bodies that are not a JSON object `invalid_json`.
 */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alg_ceph.h"
#include "api_import.h"
#include "csv.h"
#include "names.h"
#include "scenario.h"
#include "trace.h"
#include "traffic.h"
#include "view.h"

json_t *api_error_body(int code, const char *msg)
{
    if (!msg || !*msg)
        msg = ringsim_strerror(code);
    /* A message may quote what the client sent, which need not be UTF-8;
     * JSON strings must be, so such bytes become U+FFFD. */
    char clean[1024];
    if (!utf8_valid(msg, strlen(msg))) {
        size_t o = 0;
        for (const unsigned char *p = (const unsigned char *)msg; *p && o + 4 < sizeof clean; p++) {
            if (*p < 0x80) {
                clean[o++] = (char)*p;
            } else { /* keep whole valid sequences, replace the rest */
                size_t n = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC0 ? 2 : 1;
                if (n > 1 && strlen((const char *)p) >= n && utf8_valid((const char *)p, n)) {
                    memcpy(clean + o, p, n);
                    o += n;
                    p += n - 1;
                } else {
                    memcpy(clean + o, "\xEF\xBF\xBD", 3);
                    o += 3;
                }
            }
        }
        clean[o] = '\0';
        msg = clean;
    }
    return json_pack("{s:{s:s, s:s}}", "error", "code", ringsim_errcode(code), "message", msg);
}

void api_request_clear(api_request *r)
{
    for (int i = 0; i < r->nseg; i++)
        free(r->seg[i]);
    for (int i = 0; i < r->nparams; i++) {
        free(r->params[i].name);
        free(r->params[i].value);
    }
    free(r->params);
    json_decref(r->body);
    if (r->spooled)
        close(r->body_fd);
    memset(r, 0, sizeof *r);
}

void api_cache_clear(api_cache *c) { sim_history_clear(&c->h); }

static bool seg_is(const api_request *r, int i, const char *s)
{
    return i < r->nseg && strlen(s) == r->seglen[i] && memcmp(r->seg[i], s, r->seglen[i]) == 0;
}

static const api_param *param(const api_request *r, const char *name)
{
    if (!r)
        return NULL;
    for (int i = 0; i < r->nparams; i++)
        if (strcmp(r->params[i].name, name) == 0)
            return &r->params[i];
    return NULL;
}

/* ---- routing ---- */

static const api_param *param(const api_request *r, const char *name);

/* GET /api/keys?format=csv without limit= asks for every key (docs/api.md
 * version 3), streamed, as `ringsim key ls --csv` prints them. */
static bool every_key(const api_request *r)
{
    const api_param *f = param(r, "format");
    return seg_is(r, 0, "keys") && r->nseg == 1 && !param(r, "limit") && f && f->len == 3 &&
           memcmp(f->value, "csv", 3) == 0;
}

/* ---- parameters ---- */

/* An integer query parameter in [lo, hi] (lo >= 0), or def when absent. */
static int int_param(const api_request *r, const char *name, int64_t lo, int64_t hi, int64_t def,
                     int64_t *out, rs_error *err)
{
    const api_param *p = param(r, name);
    *out = def;
    if (!p)
        return 0;
    uint64_t v;
    if (api_parse_u64(p->value, p->len, (uint64_t)hi, &v) || v < (uint64_t)lo)
        return rs_fail(err, RINGSIM_EPARAM, "%s must be a whole number from %lld to %lld", name,
                       (long long)lo, (long long)hi);
    *out = (int64_t)v;
    return 0;
}

/* A JSON integer (or a number with no fraction) in [lo, hi]. */
static int json_int_in(json_t *v, const char *name, int64_t lo, int64_t hi, int64_t *out,
                       rs_error *err)
{
    double d = json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
    /* A real is converted only inside int64's range: 2^63 itself (the
     * double nearest INT64_MAX) would be undefined behaviour. */
    bool fits = json_is_integer(v) ? json_integer_value(v) >= lo && json_integer_value(v) <= hi
                                   : isfinite(d) && d >= -0x1p63 && d < 0x1p63 && d >= (double)lo &&
                                         (int64_t)d <= hi;
    if (!json_is_number(v) || d != floor(d) || !fits)
        return rs_fail(err, RINGSIM_EPARAM, "%s must be a whole number from %lld to %lld", name,
                       (long long)lo, (long long)hi);
    *out = json_is_integer(v) ? json_integer_value(v) : (int64_t)d;
    return 0;
}

static int need_object(const api_request *r, rs_error *err)
{
    if (r->body_error)
        return rs_fail(err, r->body_error, "%s", r->body_msg);
    if (!json_is_object(r->body))
        return rs_fail(err, RINGSIM_EJSON, "the body must be a JSON object");
    return 0;
}

static int need_name(json_t *v, const char *what, rs_error *err)
{
    if (!v)
        return rs_fail(err, RINGSIM_ENAME, "%s is missing", what);
    if (!json_is_string(v))
        return rs_fail(err, RINGSIM_ENAME, "%s must be a JSON string", what);
    return name_check(json_string_value(v), json_string_length(v), what, err);
}

static json_t *op_json(sim *s, int64_t op, rs_error *err) { return view_operation_get(s, op, err); }

/* ---- handlers: return the status, or a negative code with err ---- */

static int get_keys(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int64_t offset, limit;
    int rc;
    if ((rc = int_param(r, "offset", 0, INT64_MAX, 0, &offset, err)) ||
        (rc = int_param(r, "limit", 1, 1000, 100, &limit, err)))
        return rc;
    const api_param *node = param(r, "node"), *prefix = param(r, "prefix");
    if (node && node->len && (rc = name_check(node->value, node->len, "node", err)))
        return rc;
    /* ?order=position (the default), key or coordinate; a leading '-'
     * reverses it. */
    const api_param *order = param(r, "order");
    static const char *const orders[] = {"position", "key", "coordinate"};
    sim_key_order o = SIM_ORDER_POSITION;
    bool desc = order && order->len && order->value[0] == '-';
    if (order) {
        const char *v = order->value + desc;
        size_t len = order->len - desc, i = 0;
        while (i < 3 && !(strlen(orders[i]) == len && memcmp(orders[i], v, len) == 0))
            i++;
        if (i == 3)
            return rs_fail(err, RINGSIM_EPARAM,
                           "order must be position, key or coordinate, with a leading - "
                           "for descending");
        o = (sim_key_order)i;
    }
    /* The prefix is checked by the engine (sim_keys_page): like a key. */
    bool by_node = node && node->len;
    *out = view_keys(s, by_node ? node->value : NULL, by_node ? node->len : 0,
                     prefix ? prefix->value : NULL, prefix ? prefix->len : 0, o, desc, offset,
                     limit, err);
    return *out ? 200 : err->code;
}

/* A state in JSON: "up" or "down" (nothing else). */
static bool state_value(const json_t *v, bool *down)
{
    const char *t = json_string_value(v);
    if (!t || json_string_length(v) != strlen(t) || (strcmp(t, "up") && strcmp(t, "down")))
        return false;
    *down = !strcmp(t, "down");
    return true;
}

/* The body of POST /api/nodes: name, weight, explicit tokens (decimal
 * strings: JSON numbers lose precision past 2^53).  *tokens is malloc'd. */
static int parse_node_spec(const json_t *body, sim_node_spec *spec, int64_t **tokens,
                           place_loc loc[PLACE_MAX_LOC], rs_error *err)
{
    json_t *name = json_object_get(body, "name"), *w = json_object_get(body, "weight");
    int rc = need_name(name, "name", err);
    if (rc)
        return rc;
    double weight = 1;
    if (w && !json_is_null(w)) {
        if (!json_is_number(w))
            return rs_fail(err, RINGSIM_EPARAM, "weight must be a number (0 under haproxy only)");
        weight = json_number_value(w);
    }
    json_t *jt = json_object_get(body, "tokens");
    size_t nt = jt && !json_is_null(jt) ? json_array_size(jt) : 0;
    if (jt && !json_is_null(jt) && (!json_is_array(jt) || nt == 0))
        return rs_fail(err, RINGSIM_EPARAM, "tokens must be a non-empty list of decimal strings");
    if (nt > PLACE_MAX_NODE_POINTS)
        return rs_fail(err, RINGSIM_EPARAM, "at most %u tokens per node", PLACE_MAX_NODE_POINTS);
    *tokens = nt ? malloc(nt * sizeof **tokens) : NULL;
    if (nt && !*tokens)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < nt; i++) {
        /* Plain digits with an optional minus: no "+", no space, no NUL
         * inside ("5\u0000junk" is not 5), no overflow. */
        json_t *ji = json_array_get(jt, i);
        const char *t = json_string_value(ji);
        size_t tl = json_string_length(ji);
        bool neg = t && tl && t[0] == '-';
        uint64_t u = 0;
        if (!t || api_parse_u64(t + neg, tl - neg, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &u)) {
            free(*tokens);
            *tokens = NULL;
            return rs_fail(err, RINGSIM_EPARAM,
                           "tokens[%zu] must be a signed 64-bit whole number as a string", i);
        }
        (*tokens)[i] = neg ? (int64_t)(0 - u) : (int64_t)u;
    }
    /* HAProxy's server id: a whole number 1..2^31-1 (null or absent: none). */
    json_t *ji = json_object_get(body, "id");
    int64_t srv_id = 0;
    if (ji && !json_is_null(ji)) {
        if (!json_is_integer(ji) || json_integer_value(ji) < 1 ||
            json_integer_value(ji) > 2147483647) {
            free(*tokens);
            *tokens = NULL;
            return rs_fail(err, RINGSIM_EPARAM, "id must be a whole number from 1 to 2147483647");
        }
        srv_id = json_integer_value(ji);
    }
    /* Its state (docs/api.md "Node states") and HAProxy's backup flag. */
    json_t *js = json_object_get(body, "state"), *jb = json_object_get(body, "backup");
    bool down = false;
    if ((js && !json_is_null(js) && !state_value(js, &down)) ||
        (jb && !json_is_null(jb) && !json_is_boolean(jb))) {
        free(*tokens);
        *tokens = NULL;
        return rs_fail(err, RINGSIM_EPARAM,
                       js && !state_value(js, &down) ? "state must be \"up\" or \"down\""
                                                     : "backup must be true or false");
    }
    /* Its location (API.md v4 "failure domains"), borrowed from body. */
    size_t nloc = 0;
    if ((rc = place_loc_from_json(json_object_get(body, "location"), loc, &nloc, err))) {
        free(*tokens);
        *tokens = NULL;
        return rc;
    }
    *spec = (sim_node_spec){json_string_value(name),
                            json_string_length(name),
                            weight,
                            *tokens,
                            nt,
                            srv_id,
                            down,
                            json_is_true(jb),
                            NULL,
                            0,
                            loc,
                            nloc};
    return 0;
}

static int post_nodes(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    sim_node_spec spec;
    place_loc loc[PLACE_MAX_LOC];
    int64_t *tokens = NULL, op;
    if ((rc = parse_node_spec(r->body, &spec, &tokens, loc, err)))
        return rc;
    rc = sim_add_node_spec(s, &spec, &op, err);
    free(tokens);
    if (rc)
        return rc;
    json_t *node = view_node_get(s, spec.name, spec.len, err), *o = op_json(s, op, err);
    *out = json_pack("{s:o*, s:o*}", "node", node, "operation", o);
    char *w = view_lookalike(s, spec.name, spec.len);
    if (w && *out)
        json_object_set_new(*out, "warning", json_string(w));
    free(w);
    return 201;
}

/* The answer of a change to one node: {"node", "operation"} (null when it
 * changed nothing). */
static int node_op_answer(sim *s, const api_request *r, int64_t op, json_t **out, rs_error *err)
{
    json_t *node = view_node_get(s, r->seg[1], r->seglen[1], err);
    *out = json_pack("{s:o*, s:o}", "node", node, "operation",
                     op ? op_json(s, op, err) : json_null());
    return 200;
}

/* PATCH /api/nodes/{name} {"weight": W}: the node's weight changed in
 * place, one set_weight operation ("operation": null when W is the weight
 * it has); {"location": [[type, name]…]}: one set_location operation (API.md
 * v4); {"reweight": R}: one set_reweight operation (ceph, API.md v4).  One
 * of them a request, so that a request is one operation. */
static int patch_node(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(r->body, k, v)
    {
        if (strcmp(k, "weight") != 0 && strcmp(k, "location") != 0 && strcmp(k, "reweight") != 0)
            return rs_fail(err, RINGSIM_EPARAM,
                           "PATCH /api/nodes/{name} changes \"weight\", \"location\" or "
                           "\"reweight\", not \"%.64s\"",
                           k);
    }
    json_t *w = json_object_get(r->body, "weight"), *l = json_object_get(r->body, "location");
    json_t *rw = json_object_get(r->body, "reweight");
    if (!!w + !!l + !!rw > 1)
        return rs_fail(err, RINGSIM_EPARAM,
                       "PATCH /api/nodes/{name} changes \"weight\", \"location\" or "
                       "\"reweight\", one operation a request: send them apart");
    if (rw) {
        int64_t op = 0;
        if (!json_is_number(rw))
            return rs_fail(err, RINGSIM_EPARAM, "reweight must be a JSON number from 0 to 1");
        if ((rc = name_check(r->seg[1], r->seglen[1], "node name", err)) ||
            (rc = sim_set_reweight(s, r->seg[1], r->seglen[1], json_number_value(rw), &op, err)))
            return rc;
        return node_op_answer(s, r, op, out, err);
    }
    if (l) {
        place_loc loc[PLACE_MAX_LOC];
        size_t n = 0;
        int64_t op = 0;
        if (json_is_null(l))
            return rs_fail(err, RINGSIM_EPARAM,
                           "location must be a list of [type, name] pairs ([] for none)");
        if ((rc = name_check(r->seg[1], r->seglen[1], "node name", err)) ||
            (rc = place_loc_from_json(l, loc, &n, err)) ||
            (rc = sim_set_location(s, r->seg[1], r->seglen[1], loc, n, &op, err)))
            return rc;
        return node_op_answer(s, r, op, out, err);
    }
    if (!json_is_number(w))
        return rs_fail(err, RINGSIM_EPARAM, "weight must be a JSON number above 0");
    if ((rc = name_check(r->seg[1], r->seglen[1], "node name", err)))
        return rc;
    int64_t op = 0;
    if ((rc = sim_set_weight(s, r->seg[1], r->seglen[1], json_number_value(w), &op, err)))
        return rc;
    return node_op_answer(s, r, op, out, err);
}

/* PUT /api/nodes/{name}/state {"state": "down"|"up"}: one set_state
 * operation ("operation": null when the node already is in that state). */
static int put_node_state(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(r->body, k, v)
    {
        if (strcmp(k, "state") != 0)
            return rs_fail(err, RINGSIM_EPARAM,
                           "PUT /api/nodes/{name}/state takes \"state\" only, not \"%.64s\"", k);
    }
    bool down;
    if (!state_value(json_object_get(r->body, "state"), &down))
        return rs_fail(err, RINGSIM_EPARAM, "state must be \"up\" or \"down\"");
    if ((rc = name_check(r->seg[1], r->seglen[1], "node name", err)))
        return rc;
    int64_t op = 0;
    if ((rc = sim_set_state(s, r->seg[1], r->seglen[1], down, &op, err)))
        return rc;
    return node_op_answer(s, r, op, out, err);
}

/* A domain's type and name from the path (locations/{type}/{name}/...),
 * NUL-terminated copies in t and n: the rules of a location's names. */
static int domain_of(const api_request *r, char t[NAME_BUF], char n[NAME_BUF], rs_error *err)
{
    if (r->seglen[1] >= NAME_BUF || r->seglen[2] >= NAME_BUF)
        return rs_fail(err, RINGSIM_ENAME, "a domain's type and name are at most %d bytes",
                       NAME_MAX_BYTES);
    memcpy(t, r->seg[1], r->seglen[1]);
    t[r->seglen[1]] = '\0';
    memcpy(n, r->seg[2], r->seglen[2]);
    n[r->seglen[2]] = '\0';
    place_loc d = {t, n};
    /* a NUL inside a segment makes the copy shorter: refused as such */
    if (strlen(t) != r->seglen[1] || strlen(n) != r->seglen[2])
        return rs_fail(err, RINGSIM_ENAME, "a domain's type and name must not contain NUL");
    return place_loc_check(&d, 1, err);
}

/* PUT /api/locations/{type}/{name}/state {"state": "down"|"up"}: every node
 * of the failure domain in one set_state operation (API.md v4); "operation"
 * null when each already is in that state; 404 when no node is in it. */
static int put_domain_state(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(r->body, k, v)
    {
        if (strcmp(k, "state") != 0)
            return rs_fail(err, RINGSIM_EPARAM,
                           "PUT /api/locations/{type}/{name}/state takes \"state\" only, not "
                           "\"%.64s\"",
                           k);
    }
    bool down;
    if (!state_value(json_object_get(r->body, "state"), &down))
        return rs_fail(err, RINGSIM_EPARAM, "state must be \"up\" or \"down\"");
    char t[NAME_BUF], n[NAME_BUF];
    int64_t op = 0;
    if ((rc = domain_of(r, t, n, err)) || (rc = sim_set_state_domain(s, t, n, down, &op, err)))
        return rc;
    json_t *tree = view_locations(s, err);
    *out = json_pack("{s:o, s:o*}", "operation", op ? op_json(s, op, err) : json_null(),
                     "locations", tree ? json_incref(json_object_get(tree, "locations")) : NULL);
    json_decref(tree);
    return *out ? 200 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
}

/* POST /api/traffic/run {"requests", "concurrency", "seed"?, "factor"?,
 * "samples"?}: a replay through the current placement (src/sim/traffic.c);
 * nothing is recorded. */
static int post_traffic(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(r->body, k, v)
    {
        if (strcmp(k, "requests") && strcmp(k, "concurrency") && strcmp(k, "seed") &&
            strcmp(k, "factor") && strcmp(k, "samples"))
            return rs_fail(err, RINGSIM_EPARAM,
                           "unknown field \"%.64s\" (a replay takes requests, concurrency, "
                           "seed, factor and samples)",
                           k);
    }
    traffic_params p = {0, 0, 0, -1, 0};
    json_t *req = json_object_get(r->body, "requests"),
           *conc = json_object_get(r->body, "concurrency");
    json_t *seed = json_object_get(r->body, "seed"), *factor = json_object_get(r->body, "factor");
    json_t *samples = json_object_get(r->body, "samples");
    int64_t n;
    if (!req)
        return rs_fail(err, RINGSIM_EPARAM, "requests is missing (a whole number from 1 to %llu)",
                       TRAFFIC_MAX_REQUESTS);
    if ((rc = json_int_in(req, "requests", 1, (int64_t)TRAFFIC_MAX_REQUESTS, &n, err)))
        return rc;
    p.requests = (uint64_t)n;
    if (!json_is_number(conc) || !(json_number_value(conc) > 0) ||
        !(json_number_value(conc) <= TRAFFIC_MAX_CONCURRENCY))
        return rs_fail(err, RINGSIM_EPARAM,
                       "concurrency must be a number above 0 and at most %.0f (requests in "
                       "flight on average)",
                       TRAFFIC_MAX_CONCURRENCY);
    p.concurrency = json_number_value(conc);
    if (seed && !json_is_null(seed)) {
        if ((rc = json_int_in(seed, "seed", 0, INT64_MAX, &n, err)))
            return rc;
        p.seed = (uint64_t)n;
    }
    if (factor && !json_is_null(factor)) {
        if ((rc = json_int_in(factor, "factor", 0, 4294967295, &p.factor, err)))
            return rc;
    }
    if (samples && !json_is_null(samples)) {
        if ((rc = json_int_in(samples, "samples", 0, TRAFFIC_MAX_SAMPLES, &n, err)))
            return rc;
        p.samples = (uint32_t)n;
    }
    traffic_result res;
    rc = traffic_run(s, &p, &res, err);
    if (!rc && !(*out = traffic_json(s, &p, &res, err)))
        rc = err->code ? err->code : RINGSIM_ENOMEM;
    traffic_result_clear(&res);
    return rc ? rc : 200;
}

#define COMPARE_MAX_PARAMS 8

/* GET /api/compare?algorithms=a,b&params.NAME=V&max_keys=N */
static int get_compare(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    const api_param *alg = param(r, "algorithms");
    const char *ps[COMPARE_MAX_PARAMS];
    char buf[COMPARE_MAX_PARAMS][96];
    size_t np = 0;
    for (int i = 0; i < r->nparams; i++)
        if (!strncmp(r->params[i].name, "params.", 7)) {
            if (np == COMPARE_MAX_PARAMS)
                return rs_fail(err, RINGSIM_EPARAM, "at most %d params.NAME", COMPARE_MAX_PARAMS);
            int len = snprintf(buf[np], sizeof buf[np], "%s=%.*s", r->params[i].name + 7,
                               (int)r->params[i].len, r->params[i].value);
            if (len < 0 || (size_t)len >= sizeof buf[np])
                return rs_fail(err, RINGSIM_EPARAM, "parameter %s is too long", r->params[i].name);
            ps[np] = buf[np];
            np++;
        }
    int64_t max_keys;
    int rc = int_param(r, "max_keys", 1000, 10000000, 100000, &max_keys, err);
    if (rc)
        return rc;
    if (alg && strlen(alg->value) != alg->len)
        return rs_fail(err, RINGSIM_EPARAM, "algorithms must not contain NUL");
    *out = view_compare(s, alg ? alg->value : NULL, ps, np, (uint64_t)max_keys, err);
    return *out ? 200 : err->code;
}

static int post_preview(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    const char *name = json_string_value(json_object_get(r->body, "op"));
    sim_op_type type = name ? sim_op_type_of(name) : SIM_OP_UNKNOWN;
    view_preview_req p = {type, {0}, *sim_config(s), NULL};
    int64_t *tokens = NULL;
    place_loc loc[PLACE_MAX_LOC];
    if (type == SIM_OP_IMPORT)
        return api_preview_import(s, r->body, out, err);
    if (type != SIM_OP_ADD_NODE && type != SIM_OP_REMOVE_NODE && type != SIM_OP_CONFIGURE &&
        type != SIM_OP_SET_STATE && type != SIM_OP_SET_REWEIGHT)
        return rs_fail(err, RINGSIM_EPARAM,
                       "op must be \"add_node\", \"remove_node\", \"set_state\", "
                       "\"set_reweight\", \"configure\" or \"import\"");
    json_t *body = json_deep_copy(r->body);
    if (!body)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    json_object_del(body, "op");
    if (type == SIM_OP_ADD_NODE) {
        rc = parse_node_spec(body, &p.node, &tokens, loc, err);
    } else if (type == SIM_OP_REMOVE_NODE) {
        json_t *name = json_object_get(body, "name");
        rc = need_name(name, "name", err);
        if (!rc)
            p.node = (sim_node_spec){
                .name = json_string_value(name), .len = json_string_length(name), .weight = 1};
    } else if (type == SIM_OP_SET_STATE && json_object_get(body, "domain")) {
        /* {"domain": [type, name], "state"} as PUT /api/locations/…/state */
        json_t *d = json_object_get(body, "domain");
        json_t *one = json_is_array(d) && json_array_size(d) == 2 ? json_pack("[O]", d) : NULL;
        size_t nd = 0;
        /* the pair's strings stay d's (body's) when the wrapper goes */
        rc = one ? place_loc_from_json(one, loc, &nd, err)
                 : rs_fail(err, RINGSIM_EPARAM, "domain must be a pair [type, name]");
        json_decref(one);
        if (!rc && !state_value(json_object_get(body, "state"), &p.node.down))
            rc = rs_fail(err, RINGSIM_EPARAM, "state must be \"up\" or \"down\"");
        p.node.loc = loc;
        p.node.nloc = nd;
    } else if (type == SIM_OP_SET_STATE) { /* {"name", "state"} as PUT …/state */
        json_t *name = json_object_get(body, "name");
        rc = need_name(name, "name", err);
        if (!rc && !state_value(json_object_get(body, "state"), &p.node.down))
            rc = rs_fail(err, RINGSIM_EPARAM, "state must be \"up\" or \"down\"");
        p.node.name = json_string_value(name);
        p.node.len = json_string_length(name);
    } else if (type == SIM_OP_SET_REWEIGHT) { /* {"name", "reweight"} as PATCH (ceph) */
        json_t *name = json_object_get(body, "name"), *w = json_object_get(body, "reweight");
        rc = need_name(name, "name", err);
        if (!rc && !json_is_number(w))
            rc = rs_fail(err, RINGSIM_EPARAM, "reweight must be a JSON number from 0 to 1");
        p.node.name = json_string_value(name);
        p.node.len = json_string_length(name);
        p.node.weight = json_number_value(w);
    } else {
        rc = place_config_from_json(&p.cfg, body, err);
        if (!rc)
            rc = view_params_check(p.cfg.algorithm, body, err);
    }
    if (!rc)
        *out = view_preview(s, &p, err);
    free(tokens);
    if (!rc && !*out)
        rc = err->code;
    json_decref(body);
    return rc ? rc : 200;
}

static int post_keys(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    json_t *key = json_object_get(r->body, "key"), *keys = json_object_get(r->body, "keys"),
           *gen = json_object_get(r->body, "generate");
    int given = !!key + !!keys + !!gen;
    if (given > 1)
        return rs_fail(err, RINGSIM_EPARAM, "give one of key, keys or generate");
    int64_t op, ins = 0, skip = 0;
    if (gen) {
        if (!json_is_object(gen))
            return rs_fail(err, RINGSIM_EPARAM, "generate must be an object");
        int64_t count = 0, start = 0;
        json_t *pre = json_object_get(gen, "prefix");
        if ((rc = json_int_in(json_object_get(gen, "count"), "count", 1, SIM_MAX_GENERATE, &count,
                              err)))
            return rc;
        if (json_object_get(gen, "start") && (rc = json_int_in(json_object_get(gen, "start"), "start",
                                                               0, (int64_t)1 << 53, &start, err)))
            return rc;
        if (pre && !json_is_string(pre))
            return rs_fail(err, RINGSIM_ENAME, "prefix must be a JSON string");
        const char *p = pre ? json_string_value(pre) : "key-";
        size_t plen = pre ? json_string_length(pre) : 4;
        uint64_t next;
        if (!json_object_get(gen, "start")) {
            if ((rc = sim_generate_next(s, p, plen, &next, err)))
                return rc;
            start = (int64_t)next;
        }
        if ((rc = sim_generate_keys(s, p, plen, (uint64_t)start, (uint64_t)count, &ins, &skip, &op,
                                    err)))
            return rc;
    } else if (keys) {
        if (!json_is_array(keys))
            return rs_fail(err, RINGSIM_EPARAM, "keys must be an array of strings");
        size_t n = json_array_size(keys);
        if (n == 0)
            return rs_fail(err, RINGSIM_EPARAM, "keys must not be empty");
        sim_str *v = malloc(n * sizeof *v);
        if (!v)
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            json_t *k = json_array_get(keys, i);
            if (!json_is_string(k)) {
                free(v);
                return rs_fail(err, RINGSIM_ENAME, "keys[%zu] must be a JSON string", i);
            }
            v[i] = (sim_str){json_string_value(k), json_string_length(k)};
        }
        rc = sim_insert_keys(s, v, n, false, &ins, &skip, &op, err);
        free(v);
        if (rc)
            return rc;
    } else {
        if ((rc = need_name(key, "key", err)))
            return rc;
        sim_str one = {json_string_value(key), json_string_length(key)};
        if ((rc = sim_insert_keys(s, &one, 1, true, &ins, &skip, &op, err)))
            return rc;
        json_t *k = view_key_get(s, one.s, one.len, err), *o = op_json(s, op, err);
        *out = json_pack("{s:o*, s:o*}", "key", k, "operation", o);
        return 201;
    }
    *out = json_pack("{s:I, s:I, s:o*}", "inserted", (json_int_t)ins, "skipped", (json_int_t)skip,
                     "operation", op_json(s, op, err));
    return 201;
}

static int put_config(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    place_config cfg = *sim_config(s);
    if ((rc = place_config_from_json(&cfg, r->body, err)) || (rc = place_config_check(&cfg, err)) ||
        (rc = view_params_check(cfg.algorithm, r->body, err)))
        return rc;
    int64_t op = 0; /* 0: nothing changed, nothing recorded */
    if (!sim_config_same(s, &cfg) && (rc = sim_configure(s, &cfg, &op, err)))
        return rc;
    *out = json_pack("{s:o*, s:o*}", "config", view_config(s, err), "operation",
                     op ? op_json(s, op, err) : json_null());
    return 200;
}

/* PUT /api/workload: one workload operation; the same workload again
 * records nothing ("operation": null), as a configure that changes nothing. */
static int put_workload(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    json_t *now = NULL, *after = NULL;
    if (rc || (rc = sim_workload_json(s, &now, err)))
        return rc;
    int64_t op = 0;
    rc = sim_set_workload_if_new(s, r->body, now, &op, err);
    json_decref(now);
    if (rc || (rc = sim_workload_json(s, &after, err)))
        return rc;
    *out = json_pack("{s:o, s:o*}", "workload", after, "operation",
                     op ? op_json(s, op, err) : json_null());
    return 200;
}

static int post_revert(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    int64_t to = 0, op;
    if (rc || (rc = json_int_in(json_object_get(r->body, "to"), "to", 0, INT64_MAX, &to, err)))
        return rc;
    if ((rc = sim_revert(s, to, &op, err)))
        return rc;
    *out = json_pack("{s:o*}", "operation", op_json(s, op, err));
    return 200;
}

static int simple_op(sim *s, int rc, int64_t op, json_t **out, rs_error *err)
{
    if (rc)
        return rc;
    *out = json_pack("{s:o*}", "operation", op_json(s, op, err));
    return 200;
}

static int get_operation(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    /* Only plain digits name an operation: "1%00junk" or "+1" is none. */
    uint64_t id;
    if (api_parse_u64(r->seg[1], r->seglen[1], INT64_MAX, &id) || id < 1)
        return rs_fail(err, RINGSIM_ENOTFOUND, "operation \"%.*s\" not found",
                       (int)(r->seglen[1] > 64 ? 64 : r->seglen[1]), r->seg[1]);
    int64_t offset;
    int rc = int_param(r, "offset", 0, INT64_MAX, 0, &offset, err);
    if (rc)
        return rc;
    *out = view_operation_moves(s, (int64_t)id, offset, 1000, err);
    return *out ? 200 : err->code;
}

/* GET /api/diff?from=A&to=B[&offset=&limit=] (docs/api.md v3): both ids
 * required; past the last operation is 404 (the engine says so). */
static int get_diff(sim *s, sim_history *h, const api_request *r, json_t **out, rs_error *err)
{
    int64_t from, to, offset, limit;
    int rc = 0;
    if (!param(r, "from") || !param(r, "to"))
        return rs_fail(err, RINGSIM_EPARAM, "from and to are required: /api/diff?from=A&to=B");
    if ((rc = int_param(r, "from", 0, INT64_MAX, 0, &from, err)) ||
        (rc = int_param(r, "to", 0, INT64_MAX, 0, &to, err)) ||
        (rc = int_param(r, "offset", 0, INT64_MAX, 0, &offset, err)) ||
        (rc = int_param(r, "limit", 1, 1000, 1000, &limit, err)))
        return rc;
    *out = view_diff(s, h, from, to, offset, limit, err);
    return *out ? 200 : err->code;
}

/* POST /api/scenarios/run {"text", "name"?, "check"?}: run a scenario (or,
 * with check, only parse it) and answer its report; a syntax error is 400
 * invalid_parameter naming the line. */
static int post_scenario_run(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    int rc = need_object(r, err);
    if (rc)
        return rc;
    json_t *text = json_object_get(r->body, "text"), *name = json_object_get(r->body, "name");
    json_t *check = json_object_get(r->body, "check");
    if (!json_is_string(text))
        return rs_fail(err, RINGSIM_EPARAM, "text must be the scenario as a JSON string");
    if (name &&
        (!json_is_string(name) || json_string_length(name) < 1 || json_string_length(name) > 255))
        return rs_fail(err, RINGSIM_EPARAM, "name must be a string of 1 to 255 bytes");
    if (check && !json_is_boolean(check))
        return rs_fail(err, RINGSIM_EPARAM, "check must be true or false");
    /* A scenario from the page teaches or tests: a bounded number of
     * steps, counted before anything is parsed (a step costs about 2 KB
     * parsed; a long history runs with `ringsim run FILE`). */
    size_t steps = 0;
    const char *t = json_string_value(text), *tend = t + json_string_length(text);
    for (const char *p = t; p < tend; p++) {
        const char *nl = memchr(p, '\n', (size_t)(tend - p));
        const char *q = p;
        while (q < (nl ? nl : tend) && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        steps += q < (nl ? nl : tend) && *q != '#';
        p = nl ? nl : tend;
    }
    if (steps > API_SCENARIO_MAX_STEPS)
        return rs_fail(err, RINGSIM_EPARAM,
                       "the scenario has %zu steps; the server runs at most %d (run longer ones "
                       "with `ringsim run FILE`)",
                       steps, API_SCENARIO_MAX_STEPS);
    scenario *sc;
    int line;
    rc = scenario_parse(&sc, name ? json_string_value(name) : "scenario", json_string_value(text),
                        json_string_length(text), &line, err);
    if (rc == RINGSIM_EPARAM && line > 0) {
        char msg[sizeof err->msg + 32];
        snprintf(msg, sizeof msg, "line %d: %s", line, err->msg);
        *out = api_error_body(rc, msg);
        json_object_set_new(json_object_get(*out, "error"), "line", json_integer(line));
        return ringsim_status(rc);
    }
    if (rc)
        return rc;
    if (json_is_true(check)) {
        *out = scenario_outline(sc);
        scenario_free(sc);
        return *out ? 200 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    rc = scenario_run(sc, s, NULL, NULL, out, err);
    scenario_free(sc);
    return rc < 0 ? rc : 200;
}

static int get_scenario(const api_request *r, json_t **out, rs_error *err)
{
    const scenario_file *f = scenario_file_find(r->seg[1], r->seglen[1]);
    if (!f)
        return rs_fail(err, RINGSIM_ENOTFOUND, "no built-in scenario \"%.64s\"", r->seg[1]);
    return (*out = scenario_file_json(f)) ? 200 : RINGSIM_ENOMEM;
}

/* ---- every key, streamed ---- */

/* An unlinked file in $TMPDIR (else /tmp) for an answer too long to hold in
 * memory; the kernel frees it when the answer is sent. */
static FILE *answer_file(rs_error *err)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/ringsim-answer-XXXXXX", dir) < (int)sizeof path &&
            (fd = mkostemp(path, O_CLOEXEC)) >= 0)
            unlink(path);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        rs_fail(err, RINGSIM_EFULL, "no room for the answer in %s: %s", dir, strerror(errno));
    }
    return f;
}

/* Every key (filtered by ?node= and ?prefix= as a page is) into a file, as
 * CSV or as GET /api/keys's JSON with every key: memory stays flat at any
 * count, and the transport sends the file without reading it in. */
static int stream_keys(sim *s, const api_request *r, bool json, api_answer *a, rs_error *err)
{
    const api_param *node = param(r, "node"), *prefix = param(r, "prefix");
    int rc = 0;
    if (node && node->len && (rc = name_check(node->value, node->len, "node", err)))
        return rc;
    if (param(r, "order") || param(r, "offset"))
        return rs_fail(err, RINGSIM_EPARAM,
                       "every key comes in position order from the first: order= and "
                       "offset= need limit=");
    FILE *f = answer_file(err);
    if (!f)
        return err->code;
    bool by_node = node && node->len;
    rc = view_keys_write(s, f, !json, by_node ? node->value : NULL, by_node ? node->len : 0,
                         prefix ? prefix->value : NULL, prefix ? prefix->len : 0, NULL, err);
    if (!rc && fflush(f))
        rc = RINGSIM_EFULL;
    long len = rc ? -1 : ftell(f);
    if (!rc && len < 0)
        rc = RINGSIM_EFULL;
    if (rc) {
        fclose(f);
        if (rc == RINGSIM_EFULL)
            return rs_fail(err, rc, "no room to write every key: %s", strerror(errno));
        return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
    }
    a->file = f;
    a->file_len = (size_t)len;
    a->content_type = json ? "application/json; charset=utf-8" : "text/csv; charset=utf-8";
    return 200;
}

/* format=csv where a route has no list to write. */
static int csv_offered(rs_error *err)
{
    return rs_fail(err, RINGSIM_EPARAM,
                   "format=csv is offered on GET /api/nodes, /api/keys, /api/operations, "
                   "/api/operations/{id} and /api/diff");
}

/* GET /api/export/scenario[?at=ID]: the operations that rebuild the state
 * (now, or right after operation ID) as a scenario file (text/plain). */
static int get_export(sim *s, const api_request *r, api_answer *a, rs_error *err)
{
    if (seg_is(r, 1, "keys")) { /* ?format=json (the default) or csv */
        const api_param *f = param(r, "format");
        bool csv = f && f->len == 3 && !memcmp(f->value, "csv", 3);
        if (f && !csv && !(f->len == 4 && !memcmp(f->value, "json", 4)))
            return rs_fail(err, RINGSIM_EPARAM, "format must be json or csv");
        return stream_keys(s, r, !csv, a, err);
    }
    if (seg_is(r, 1, "config"))
        return api_export_config(s, r, a, err);
    if (!seg_is(r, 1, "scenario"))
        return rs_fail(err, RINGSIM_ENOTFOUND,
                       "no such export: /api/export/scenario, /api/export/keys and "
                       "/api/export/config are");
    const api_param *f = param(r, "format");
    if (f && !(f->len == 4 && !memcmp(f->value, "json", 4))) /* a scenario file is no list */
        return f->len == 3 && !memcmp(f->value, "csv", 3)
                   ? csv_offered(err)
                   : rs_fail(err, RINGSIM_EPARAM, "format must be json or csv");
    int64_t at;
    int rc = int_param(r, "at", 0, INT64_MAX, -1, &at, err);
    if (!rc)
        rc = scenario_export(s, at, &a->text, &a->text_len, err);
    if (rc)
        return rc;
    a->content_type = "text/plain; charset=utf-8";
    return 200;
}

/* ---- the route table ---- */

/* The handlers of routes that fit in a line, and the adapters of the
 * handlers that answer JSON only (name##_route). */
#define API_JSON(name)                                                                                \
    static int name##_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err) \
    {                                                                                                 \
        (void)a;                                                                                      \
        return name(s, r, out, err);                                                                  \
    }
API_JSON(post_nodes)
API_JSON(patch_node)
API_JSON(put_node_state)
API_JSON(put_domain_state)
API_JSON(get_compare)
API_JSON(post_preview)
API_JSON(post_keys)
API_JSON(put_config)
API_JSON(put_workload)
API_JSON(post_revert)
API_JSON(get_operation)
API_JSON(post_scenario_run)

/* A view answer: 200 with *out, or the view's error. */
static int viewed(json_t *v, json_t **out, rs_error *err)
{
    *out = v;
    return v ? 200 : err->code;
}

static int get_nodes_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)r;
    (void)a;
    return viewed(view_nodes(s, err), out, err);
}

static int get_locations_route(sim *s, const api_request *r, json_t **out, api_answer *a,
                               rs_error *err)
{
    (void)r;
    (void)a;
    return viewed(view_locations(s, err), out, err);
}

static int get_node_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    return viewed(view_node_get(s, r->seg[1], r->seglen[1], err), out, err);
}

static int delete_node_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    int64_t op = 0;
    int rc = sim_remove_node(s, r->seg[1], r->seglen[1], &op, err);
    return simple_op(s, rc, op, out, err);
}

static int get_keys_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    if (every_key(r))
        return stream_keys(s, r, false, a, err);
    return get_keys(s, r, out, err);
}

static int get_key_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    return viewed(view_key_get(s, r->seg[1], r->seglen[1], err), out, err);
}

static int delete_key_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    int64_t op = 0;
    sim_str one = {r->seg[1], r->seglen[1]};
    int rc = sim_delete_keys(s, &one, 1, &op, err);
    return simple_op(s, rc, op, out, err);
}

static int get_ring_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)r;
    (void)a;
    return viewed(view_ring(s, err), out, err);
}

static int get_config_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)r;
    (void)a;
    return viewed(view_config(s, err), out, err);
}

/* A query option by its name, or by the command line's spelling ("key-col"
 * for "key_col"). */
static const char *opt_value(const api_request *r, const char *name)
{
    const api_param *v = param(r, name);
    if (!v) {
        char alt[32];
        snprintf(alt, sizeof alt, "%s", name);
        for (char *q = alt; *q; q++)
            if (*q == '_')
                *q = '-';
        v = param(r, alt);
    }
    return v ? v->value : NULL;
}

/* POST /api/trace?trace_format=&key=&cache=&change=AT%20OP&interval=&key_col=
 * &size_col=&time_col=&op_col= with the log as the body (spooled to a
 * temporary file by the server, api_spools): the replay of `ringsim trace`
 * (src/sim/trace.c).  On the reading worker; cancelled with the client. */
static int post_trace_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    if (!r->spooled)
        return rs_fail(err, RINGSIM_EPARAM, "send the request log as the body");
    trace_opts o = {0};
    trace_params p = {0};
    trace_change ch[TRACE_MAX_CHANGES];
    const char *v;
    int rc;
    /* format= is every route's answer format (json, csv): the log's is
     * trace_format= */
    if ((v = opt_value(r, "trace_format")) && (rc = trace_format_parse(v, &o.format, err)))
        return rc;
    if ((v = opt_value(r, "key")) && (rc = trace_key_parse(v, &o.key, err)))
        return rc;
    if ((v = opt_value(r, "cache")) && (rc = trace_cache_parse(v, &p.cache, &p.cache_objects, err)))
        return rc;
    if ((v = opt_value(r, "interval"))) {
        char *e;
        p.interval = strtod(v, &e);
        if (*e || !*v || !(p.interval > 0) || !isfinite(p.interval) || p.interval > 1e15)
            return rs_fail(err, RINGSIM_EPARAM, "interval must be a number above 0, not \"%.64s\"",
                           v);
    }
    o.key_col = opt_value(r, "key_col");
    o.size_col = opt_value(r, "size_col");
    o.time_col = opt_value(r, "time_col");
    o.op_col = opt_value(r, "op_col");
    for (int i = 0; i < r->nparams; i++) {
        if (strcmp(r->params[i].name, "change"))
            continue;
        if (p.nchanges == TRACE_MAX_CHANGES)
            return rs_fail(err, RINGSIM_EPARAM, "at most %d changes in one replay",
                           TRACE_MAX_CHANGES);
        char at[64];
        const char *val = r->params[i].value, *sp = strchr(val, ' ');
        size_t al = sp ? (size_t)(sp - val) : strlen(val);
        if (al >= sizeof at)
            return rs_fail(err, RINGSIM_EPARAM, "change: \"%.64s\" is not \"AT OP\"", val);
        memcpy(at, val, al);
        at[al] = 0;
        if ((rc = trace_change_parse(at, sp ? sp + 1 : "", &ch[p.nchanges], err)))
            return rc;
        p.nchanges++;
    }
    p.changes = ch;
    struct stat sb;
    if (!fstat(r->body_fd, &sb))
        p.size = (uint64_t)sb.st_size;
    trace_reader *rd;
    if ((rc = trace_reader_open(&rd, r->body_fd, "the log", &o, err)))
        return rc;
    rc = trace_run(s, rd, &p, NULL, NULL, out, err);
    trace_reader_free(rd);
    return rc ? rc : 200;
}

static int post_traffic_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    if (!seg_is(r, 1, "run"))
        return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint (POST /api/traffic/run)");
    return post_traffic(s, r, out, err);
}

static int post_import_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    return api_post_import(s, r, out, err);
}

static int get_workload_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)r;
    (void)a;
    return sim_workload_json(s, out, err) ? err->code : 200;
}

static int get_stats_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)r;
    (void)a;
    return viewed(view_stats(s, err), out, err);
}

static int get_lookup_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    const api_param *k = param(r, "key");
    if (!k)
        return rs_fail(err, RINGSIM_ENAME, "key is missing: /api/lookup?key=K");
    return viewed(view_lookup(s, k->value, k->len, err), out, err);
}

static int get_density_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    int64_t bins;
    int rc = int_param(r, "bins", 1, 4096, 360, &bins, err);
    return rc ? rc : viewed(view_density(s, (uint32_t)bins, err), out, err);
}

static int get_pgs_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    int64_t offset, limit;
    int rc = int_param(r, "offset", 0, CEPH_MAX_PGS, 0, &offset, err);
    if (!rc)
        rc = int_param(r, "limit", 1, CEPH_MAX_PGS, 100, &limit, err);
    return rc ? rc : viewed(view_pgs(s, offset, limit, err), out, err);
}

static int get_operations_route(sim *s, const api_request *r, json_t **out, api_answer *a,
                                rs_error *err)
{
    (void)a;
    int64_t after, limit;
    int rc;
    if ((rc = int_param(r, "after", 0, INT64_MAX, 0, &after, err)) ||
        (rc = int_param(r, "limit", 1, 1000, 100, &limit, err)))
        return rc;
    return viewed(view_operations(s, after, limit, err), out, err);
}

static int post_reset_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)r;
    (void)a;
    int64_t op = 0;
    int rc = sim_reset(s, &op, err);
    return simple_op(s, rc, op, out, err);
}

/* The transport cancels (API_CANCEL); here nothing runs. */
static int post_cancel_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)s;
    (void)r;
    (void)a;
    (void)err;
    return (*out = json_pack("{s:b}", "cancelled", 0)) ? 200 : RINGSIM_ENOMEM;
}

/* The SSE stream is the transport's (API_EVENTS); a caller without one
 * (the fuzzers, tests) is told so. */
static int get_events_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)s;
    (void)r;
    (void)out;
    (void)a;
    return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
}

static int get_scenarios_route(sim *s, const api_request *r, json_t **out, api_answer *a,
                               rs_error *err)
{
    (void)s;
    (void)r;
    (void)a;
    (void)err;
    return (*out = scenario_files_json()) ? 200 : RINGSIM_ENOMEM;
}

static int get_scenario_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)s;
    (void)a;
    return get_scenario(r, out, err);
}

static int post_scenarios_route(sim *s, const api_request *r, json_t **out, api_answer *a,
                                rs_error *err)
{
    if (!seg_is(r, 1, "run"))
        return rs_fail(err, RINGSIM_EMETHOD, "POST is for /api/scenarios/run");
    return post_scenario_run_route(s, r, out, a, err);
}

static int get_export_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)out;
    return get_export(s, r, a, err);
}

static int get_theory_route(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err)
{
    (void)a;
    int64_t nodes;
    int rc = int_param(r, "nodes", 0, 1000, 0, &nodes, err);
    return rc ? rc : viewed(view_theory(s, nodes, err), out, err);
}

/* A handler answers a routed request against sim s (live, or the past for
 * ?at=): the status with *out (JSON) or a (text, file), or a negative code
 * with err. */
typedef int (*api_fn)(sim *s, const api_request *r, json_t **out, api_answer *a, rs_error *err);

/* csv: the handler reads format= and writes its own CSV */
static const char csv_own[] = "(its own)";
#define API_CSV_OWN csv_own

/*
 * The routes: one entry each, the only place a route is described.
 *   path     "nodes", "nodes/x" for one more (any) segment, "nodes/x/state"
 *            for one more and then that one
 *   method   HEAD is answered as GET
 *   fn       the handler
 *   where    who answers: API_LOOP (fast read, the event loop), API_WORKER
 *            (an operation, in order), API_READER (a long read), API_EVENTS /
 *            API_CANCEL (the transport's own)
 *   body     it takes a body (any other is refused before it is read)
 *   travels  ?at=ID answers it for the past (then on the reading worker)
 *   csv      ?format=csv: the list of the answer the CSV holds (NULL: none;
 *            API_CSV_OWN: the handler writes its own)
 *   hfn      (optional, with fn NULL) a handler given the live sim and the
 *            caller's view of the past, for routes that read two states
 * A new route is one entry here and its handler above: an existing handler
 * of the (sim, request, out, err) shape plugs in with API_JSON(name) and
 * name_route; the transport, the router and the at= and format= rules need
 * no change.
 */
/* A handler that reads the caller's view of the past itself (the
 * difference between two states), given the live sim. */
typedef int (*api_hist_fn)(sim *s, sim_history *h, const api_request *r, json_t **out, rs_error *err);

typedef struct route {
    const char *path;
    api_method method;
    api_fn fn;
    api_place where;
    bool body, travels;
    const char *csv;
    api_hist_fn hfn; /* instead of fn (NULL when fn answers) */
} route;

static const route routes[] = {
    /* nodes and ring list every point (1M at 1000 nodes x 1000 points: 13 MB,
     * 1.7 s and 3.4 s measured): long reads, never on the loop */
    {"nodes", API_GET, get_nodes_route, API_READER, false, true, "nodes", NULL},
    {"nodes", API_POST, post_nodes_route, API_WORKER, true, false, NULL, NULL},
    {"nodes/x", API_GET, get_node_route, API_LOOP, false, true, NULL, NULL},
    {"nodes/x", API_DELETE, delete_node_route, API_WORKER, false, false, NULL, NULL},
    {"nodes/x", API_PATCH, patch_node_route, API_WORKER, true, false, NULL, NULL},
    {"nodes/x/state", API_PUT, put_node_state_route, API_WORKER, true, false, NULL, NULL},
    /* the failure-domain tree (API.md v4): the nodes' answers, summed */
    {"locations", API_GET, get_locations_route, API_READER, false, true, NULL, NULL},
    {"locations/x/x/state", API_PUT, put_domain_state_route, API_WORKER, true, false, NULL, NULL},
    {"ring", API_GET, get_ring_route, API_READER, false, true, NULL, NULL},
    {"config", API_GET, get_config_route, API_LOOP, false, true, NULL, NULL},
    {"config", API_PUT, put_config_route, API_WORKER, true, false, NULL, NULL},
    {"keys", API_GET, get_keys_route, API_LOOP, false, true, "keys", NULL},
    {"keys", API_POST, post_keys_route, API_WORKER, true, false, NULL, NULL},
    {"keys/x", API_GET, get_key_route, API_LOOP, false, true, NULL, NULL},
    {"keys/x", API_DELETE, delete_key_route, API_WORKER, false, false, NULL, NULL},
    {"lookup", API_GET, get_lookup_route, API_LOOP, false, true, NULL, NULL},
    {"stats", API_GET, get_stats_route, API_LOOP, false, true, NULL, NULL},
    /* density reads every key (0.37 s at a million): a long read */
    {"density", API_GET, get_density_route, API_READER, false, true, NULL, NULL},
    /* the PGs of the ceph pool with their keys: a count over every key */
    {"pgs", API_GET, get_pgs_route, API_READER, false, true, NULL, NULL},
    /* the log is history already: at= is not for it */
    {"operations", API_GET, get_operations_route, API_LOOP, false, false, "operations", NULL},
    {"operations/x", API_GET, get_operation_route, API_LOOP, false, false, "moves", NULL},
    {"events", API_GET, get_events_route, API_EVENTS, false, true, NULL, NULL},
    {"reset", API_POST, post_reset_route, API_WORKER, false, false, NULL, NULL},
    {"revert", API_POST, post_revert_route, API_WORKER, true, false, NULL, NULL},
    {"cancel", API_POST, post_cancel_route, API_CANCEL, false, false, NULL, NULL},
    {"preview", API_POST, post_preview_route, API_WORKER, true, false, NULL, NULL},
    {"compare", API_GET, get_compare_route, API_READER, false, true, NULL, NULL},
    {"scenarios", API_GET, get_scenarios_route, API_LOOP, false, true, NULL, NULL},
    {"scenarios/x", API_GET, get_scenario_route, API_LOOP, false, true, NULL, NULL},
    {"scenarios/x", API_POST, post_scenarios_route, API_WORKER, true, false, NULL, NULL},
    /* the export reads the log for itself (?at= is its own parameter) */
    /* every key, streamed, of now or of the past (?at=); the other exports
     * read at= themselves (a scenario's recipe of the past is the log's) */
    {"export/keys", API_GET, get_export_route, API_READER, false, true, API_CSV_OWN, NULL},
    {"export/x", API_GET, get_export_route, API_READER, false, false, API_CSV_OWN, NULL},
    {"theory", API_GET, get_theory_route, API_READER, false, true, NULL, NULL},
    /* the difference between two states may compare them whole (time travel) */
    {"workload", API_GET, get_workload_route, API_LOOP, false, true, NULL, NULL},
    {"workload", API_PUT, put_workload_route, API_WORKER, true, false, NULL, NULL},
    /* a replay of up to 10^8 requests: seconds, on the reading worker */
    {"traffic/x", API_POST, post_traffic_route, API_READER, true, false, NULL, NULL},
    /* a request log of up to 1 GiB, spooled (api_spools): on the reading worker */
    {"trace", API_POST, post_trace_route, API_READER, true, false, NULL, NULL},
    {"import", API_POST, post_import_route, API_WORKER, true, false, NULL, NULL},
    {"diff", API_GET, NULL, API_READER, false, false, "moves", get_diff},
};

/* Whether the request's segments are the route's: each "x" any segment,
 * each other word itself ("export/keys" before "export/x" in the table). */
static bool path_matches(const api_request *r, const char *path)
{
    int i = 0;
    for (const char *p = path;; i++) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (i >= r->nseg ||
            (!(n == 1 && *p == 'x') && !(r->seglen[i] == n && memcmp(r->seg[i], p, n) == 0)))
            return false;
        if (!slash)
            break;
        p = slash + 1;
    }
    return r->nseg == i + 1;
}

/* The route of a request, or 404 / 405 in err. */
static int find_route(const api_request *r, const route **out, rs_error *err)
{
    bool known = false;
    api_method m = r->method == API_HEAD ? API_GET : r->method;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!path_matches(r, routes[i].path))
            continue;
        known = true;
        if (routes[i].method == m) {
            *out = &routes[i];
            return 0;
        }
    }
    if (known)
        return rs_fail(err, RINGSIM_EMETHOD, "method not allowed on this path");
    return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
}

int api_classify(const api_request *r, api_place *where, rs_error *err)
{
    bool body;
    return api_route(r, where, &body, err);
}

int api_route(const api_request *r, api_place *where, bool *body, rs_error *err)
{
    const route *rt;
    int rc = find_route(r, &rt, err);
    if (rc)
        return rc;
    *where = rt->where;
    *body = rt->body;
    /* Time travel may replay the log, and a listing of keys in another
     * order than the table's may read through an index filtering by node
     * (0.7 s at a million keys): not on the event loop. */
    const api_param *order = seg_is(r, 0, "keys") ? param(r, "order") : NULL;
    if (*where == API_LOOP &&
        ((param(r, "at") && rt->travels) ||
         (order && !(order->len == 8 && memcmp(order->value, "position", 8) == 0)) || every_key(r)))
        *where = API_READER; /* every key: seconds at ten million */
    return 0;
}

size_t api_body_limit(const api_request *r)
{
    const route *rt;
    rs_error e;
    if (!find_route(r, &rt, &e) && !rt->body)
        return API_MAX_IGNORED_BODY;
    if (api_spools(r))
        return API_MAX_TRACE_BODY;
    return r->method == API_POST && r->nseg == 1 &&
                   (seg_is(r, 0, "import") || seg_is(r, 0, "preview"))
               ? API_MAX_IMPORT_BODY
               : API_MAX_BODY;
}

bool api_spools(const api_request *r)
{
    return r->method == API_POST && r->nseg == 1 && seg_is(r, 0, "trace");
}

/* The format= parameter: *csv when it asks for CSV of the route's list. */
static int answer_format(const api_request *r, const route *rt, bool *csv, rs_error *err)
{
    const api_param *f = param(r, "format");
    *csv = false;
    if (seg_is(r, 0, "export") && seg_is(r, 1, "config"))
        return 0; /* format= names the real system (api_import.c) */
    if (!f || (f->len == 4 && !memcmp(f->value, "json", 4)))
        return 0;
    if (f->len != 3 || memcmp(f->value, "csv", 3))
        return rs_fail(err, RINGSIM_EPARAM, "format must be json or csv");
    if (rt->csv == API_CSV_OWN)
        return 0;
    if (!rt->csv)
        return csv_offered(err);
    *csv = true;
    return 0;
}

void api_answer_clear(api_answer *a)
{
    json_decref(a->body);
    free(a->text);
    if (a->file)
        fclose(a->file);
    memset(a, 0, sizeof *a);
}

void api_handle(sim *s, api_cache *cache, const api_request *r, int *status, json_t **body)
{
    api_answer a;
    api_respond(s, cache, r, &a);
    *status = a.status;
    if (a.file) { /* read back (the fuzzers: small databases) */
        a.text = malloc(a.file_len + 1);
        if (a.text &&
            (fseek(a.file, 0, SEEK_SET) || fread(a.text, 1, a.file_len, a.file) != a.file_len)) {
            free(a.text);
            a.text = NULL;
        }
        a.text_len = a.text ? a.file_len : 0;
        if (!a.text)
            a.text = strdup("");
    }
    if (a.text) { /* for callers that speak JSON only */
        *body = json_pack("{s:s, s:s%}", "content_type", a.content_type, "text", a.text, a.text_len);
        if (!*body) {
            *status = 500;
            *body = api_error_body(RINGSIM_ENOMEM, "out of memory building the answer");
        }
    } else {
        *body = a.body;
        a.body = NULL;
    }
    api_answer_clear(&a);
}

void api_respond(sim *s, api_cache *cache, const api_request *r, api_answer *a)
{
    rs_error err = {0, ""};
    json_t *out = NULL;
    const route *rt = NULL;
    bool csv = false;
    memset(a, 0, sizeof *a);
    int rc = find_route(r, &rt, &err);
    if (!rc)
        rc = answer_format(r, rt, &csv, &err);
    bool heavy;
    if (!rc)
        rc = cache->light ? sim_refresh_light(s, &heavy, &err) : sim_refresh(s, NULL, &err);
    sim *target = s;
    /* The routes that travel in time answer ?at= for the past; a change
     * cannot be made there, and the other reads ignore it. */
    const api_param *at = param(r, "at");
    bool reads = r->method == API_GET || r->method == API_HEAD;
    if (!rc && at && !reads)
        rc = rs_fail(&err, RINGSIM_EPARAM, "at= is for reading the past; it cannot change it");
    if (!rc && at && !rt->travels)
        at = NULL;
    if (!rc && at) {
        int64_t id;
        rc = int_param(r, "at", 0, INT64_MAX, 0, &id, &err);
        /* The engine keeps the view of the past and chooses how to move it. */
        if (!rc)
            rc = sim_history_at(s, &cache->h, id, &target, &err);
    }
    if (!rc && rt->hfn) /* two states of its own: not ?at= */
        rc = rt->hfn(s, &cache->h, r, &out, &err);
    else if (!rc)
        rc = rt->fn(target, r, &out, a, &err);
    if (rc == 200 && csv && out && !a->file) {
        a->text = csv_from_rows(json_object_get(out, rt->csv), &a->text_len);
        a->content_type = "text/csv; charset=utf-8";
        json_decref(out);
        out = NULL;
        if (!a->text)
            rc = rs_fail(&err, RINGSIM_ENOMEM, "out of memory writing CSV");
    }
    if (rc < 0 || (!out && !a->text && !a->file)) {
        json_decref(out);
        free(a->text);
        a->text = NULL;
        if (a->file)
            fclose(a->file);
        a->file = NULL;
        if (rc >= 0)
            rc = rs_fail(&err, RINGSIM_ENOMEM, "out of memory building the answer");
        a->status = ringsim_status(rc);
        a->body = api_error_body(rc, err.msg);
        return;
    }
    a->status = rc;
    a->body = out;
}
