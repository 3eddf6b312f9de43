/*
 * import_envoy.c - an Envoy v3 Cluster (YAML or JSON) with `lb_policy:
 * RING_HASH` or `MAGLEV` and a static `load_assignment`.
 *
 * Reference: Envoy's API, envoy/config/cluster/v3/cluster.proto and
 * envoy/config/endpoint/v3/endpoint{,_components}.proto, read for what
 * decides placement:
 *   lb_policy                    RING_HASH | MAGLEV (others do not hash)
 *   ring_hash_lb_config          minimum_ring_size (default 1024),
 *                                maximum_ring_size (default 8M),
 *                                hash_function (XX_HASH default;
 *                                MURMUR_HASH_2 is refused: ringsim's
 *                                envoy-ring hashes with xxHash64)
 *   maglev_lb_config             table_size (default 65537)
 *   common_lb_config             consistent_hashing_lb_config
 *                                {use_hostname_for_hashing,
 *                                hash_balance_factor}, healthy_panic_threshold
 *   load_assignment.endpoints[]  localities with lb_endpoints[] in order;
 *                                priority > 0 is a failover level (noted,
 *                                not on the priority 0 ring)
 *   lb_endpoint                  endpoint.address.socket_address {address,
 *                                port_value} (or pipe.path),
 *                                endpoint.hostname, health_status,
 *                                load_balancing_weight (a bare number or
 *                                {value}), metadata.filter_metadata
 *                                ["envoy.lb"].hash_key
 * The host's hash key (the node name, as alg_envoy.h): the envoy.lb
 * hash_key, else the hostname with use_hostname_for_hashing, else the
 * address as Envoy prints it ("10.0.0.1:80", "[::1]:80", IPv6 in its
 * canonical text).  health_status UNHEALTHY, DRAINING and TIMEOUT are down;
 * absent, UNKNOWN and HEALTHY are healthy, as Envoy counts them.
 *
 * The text may be one cluster, a list of them, {"clusters": [...]},
 * {"static_resources": {"clusters": [...]}} or a discovery response's
 * {"resources": [...]}.  JSON is read with jansson, YAML with libyaml
 * turned into the same JSON values.
 *
 * Cost: one load and one walk over the chosen cluster.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_yaml.h"

/* JSON is held to YAML's count of values (import_yaml.h) before jansson
 * reads it: a 16 MiB `[1,1,...]` is 8 million values, 350 MB and 1.8 s in
 * jansson.  Each value but the first follows a '[', '{', ',' or ':'
 * outside a string: their count bounds the values (keys included).  0, or
 * the refusal at the line where the count passes the limit. */
static int json_values(import_ctx *c)
{
    size_t n = 1;
    int line = 1;
    bool str = false;
    for (size_t i = 0; i < c->len; i++) {
        char ch = c->text[i];
        if (ch == '\n')
            line++;
        if (str) {
            if (ch == '\\')
                i++; /* an escaped character, never a newline in JSON */
            else if (ch == '"')
                str = false;
        } else if (ch == '"') {
            str = true;
        } else if ((ch == ',' || ch == ':' || ch == '[' || ch == '{') &&
                   ++n > IMPORT_YAML_MAX_VALUES) {
            return import__fail(c, line,
                                "the JSON text holds more than %u values, the most "
                                "ringsim reads",
                                IMPORT_YAML_MAX_VALUES);
        }
    }
    return 0;
}

static json_t *load(import_ctx *c, int *rc)
{
    size_t i = 0;
    while (i < c->len && strchr(" \t\r\n", c->text[i]) != NULL)
        i++;
    if (i < c->len && (c->text[i] == '{' || c->text[i] == '[')) {
        if ((*rc = json_values(c)) != 0)
            return NULL;
        json_error_t je;
        json_t *j = json_loadb(c->text, c->len, JSON_DECODE_ANY, &je);
        if (j == NULL)
            *rc = import__fail(c, je.line > 0 ? je.line : 0, "JSON error at line %d: %s", je.line,
                               je.text);
        return j;
    }
    yaml_document_t doc;
    if ((*rc = import__yaml_load(c, &doc)) != 0)
        return NULL;
    json_t *j = import__yaml_json(&doc);
    yaml_document_delete(&doc);
    if (j == NULL)
        *rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
    return j;
}

/* Collect the clusters of the text into arr (borrowed references). */
static void collect(json_t *j, json_t *arr, int depth)
{
    if (depth > 4 || j == NULL)
        return;
    if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) collect(v, arr, depth + 1);
        return;
    }
    if (!json_is_object(j))
        return;
    if (json_object_get(j, "lb_policy") || json_object_get(j, "load_assignment")) {
        json_array_append(arr, j);
        return;
    }
    json_t *sr = json_object_get(j, "static_resources");
    if (sr != NULL)
        collect(json_object_get(sr, "clusters"), arr, depth + 1);
    collect(json_object_get(j, "clusters"), arr, depth + 1);
    collect(json_object_get(j, "resources"), arr, depth + 1);
}

/* A uint64 field as proto3 JSON writes it: a number or a decimal string. */
static int u64(json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return *out >= 0 ? 0 : -1;
    }
    if (json_is_string(v))
        return import__int(json_string_value(v), json_string_length(v), 0, INT64_MAX, out);
    if (json_is_object(v)) /* a wrapper type: {"value": n} */
        return u64(json_object_get(v, "value"), out);
    return -1;
}

static int host(import_ctx *c, const char *path, json_t *lbe, bool use_hostname, size_t *healthy)
{
    int rc;
    json_t *ep = json_object_get(lbe, "endpoint");
    json_t *addr = json_object_get(json_object_get(ep, "address"), "socket_address");
    json_t *pipe = json_object_get(json_object_get(ep, "address"), "pipe");
    const char *hostname = json_string_value(json_object_get(ep, "hostname"));
    const char *key = json_string_value(json_object_get(
        json_object_get(json_object_get(lbe, "metadata"), "filter_metadata")
            ? json_object_get(json_object_get(json_object_get(lbe, "metadata"), "filter_metadata"),
                              "envoy.lb")
            : NULL,
        "hash_key"));
    char printed[300];
    if (addr != NULL) {
        const char *a = json_string_value(json_object_get(addr, "address"));
        int64_t port = 0;
        json_t *pv = json_object_get(addr, "port_value");
        if (a == NULL)
            return import__fail(c, 0, "%s: socket_address has no address", path);
        if (pv != NULL && (u64(pv, &port) != 0 || port > 65535))
            return import__fail(c, 0, "%s: port_value must be 0..65535", path);
        if (json_object_get(addr, "named_port") != NULL)
            return import__fail(c, 0, "%s: named_port: ringsim needs port_value", path);
        unsigned char bin[16];
        char canon[INET6_ADDRSTRLEN];
        if (inet_pton(AF_INET6, a, bin) == 1 && inet_ntop(AF_INET6, bin, canon, sizeof canon))
            snprintf(printed, sizeof printed, "[%s]:%lld", canon, (long long)port);
        else
            snprintf(printed, sizeof printed, "%.255s:%lld", a, (long long)port);
        if (inet_pton(AF_INET6, a, bin) != 1 && inet_pton(AF_INET, a, bin) != 1 && key == NULL &&
            !(use_hostname && hostname) &&
            (rc = import__note(c, 0,
                               "%s: %.100s is a DNS name: Envoy hashes the addresses it "
                               "resolves to, which ringsim cannot know; imported as written",
                               path, a)) != 0)
            return rc;
    } else if (pipe != NULL && json_string_value(json_object_get(pipe, "path")) != NULL) {
        snprintf(printed, sizeof printed, "%.255s", json_string_value(json_object_get(pipe, "path")));
    } else {
        return import__fail(c, 0, "%s: the endpoint has no socket_address", path);
    }
    const char *name = key ? key : use_hostname ? hostname : printed;
    if (use_hostname && (hostname == NULL || hostname[0] == '\0') && key == NULL)
        return import__fail(c, 0,
                            "%s: use_hostname_for_hashing and no hostname: Envoy would "
                            "hash the empty string for this host",
                            path);
    import_node_rec *n = import__node(c, name, strlen(name), 0, &rc);
    if (n == NULL)
        return rc;
    if (name != printed && (rc = import__set_address(c, n, printed, strlen(printed))) != 0)
        return rc;
    json_t *w = json_object_get(lbe, "load_balancing_weight");
    if (w != NULL) {
        int64_t v;
        if (u64(w, &v) != 0 || v < 1 || v > UINT32_MAX)
            return import__fail(c, 0, "%s: load_balancing_weight must be at least 1", path);
        n->v.weight = (double)v;
    }
    const char *hs = json_string_value(json_object_get(lbe, "health_status"));
    if (hs != NULL &&
        (strcmp(hs, "UNHEALTHY") == 0 || strcmp(hs, "DRAINING") == 0 || strcmp(hs, "TIMEOUT") == 0))
        n->v.down = true;
    else if (hs != NULL && strcmp(hs, "DEGRADED") == 0 &&
             (rc = import__note(c, 0,
                                "%s: DEGRADED: Envoy uses degraded hosts only when too "
                                "few are healthy; imported as up",
                                path)) != 0)
        return rc;
    if (!n->v.down)
        (*healthy)++;
    return 0;
}

static int cluster(import_ctx *c, json_t *cl)
{
    int rc;
    const char *name = json_string_value(json_object_get(cl, "name"));
    if ((rc = import__set_name(c, name ? name : "", name ? strlen(name) : 0)) != 0)
        return rc;
    const char *lb = json_string_value(json_object_get(cl, "lb_policy"));
    if (lb == NULL || (strcmp(lb, "RING_HASH") != 0 && strcmp(lb, "MAGLEV") != 0))
        return import__fail(c, 0,
                            "cluster \"%.60s\" has lb_policy %.40s: ringsim imports RING_HASH "
                            "and MAGLEV",
                            name ? name : "", lb ? lb : "ROUND_ROBIN (the default)");
    bool ring = strcmp(lb, "RING_HASH") == 0;
    strcpy(c->r->algorithm, ring ? "envoy-ring" : "maglev");
    int64_t v;
    if (ring) {
        json_t *rh = json_object_get(cl, "ring_hash_lb_config");
        int64_t mn = 1024, mx = 8388608;
        json_t *f;
        if ((f = json_object_get(rh, "minimum_ring_size")) != NULL && u64(f, &mn) != 0)
            return import__fail(c, 0, "ring_hash_lb_config.minimum_ring_size is not a number");
        if ((f = json_object_get(rh, "maximum_ring_size")) != NULL && u64(f, &mx) != 0)
            return import__fail(c, 0, "ring_hash_lb_config.maximum_ring_size is not a number");
        if (mn > mx)
            return import__fail(c, 0,
                                "ring_hash_lb_config: minimum_ring_size (%lld) is above "
                                "maximum_ring_size (%lld); Envoy refuses it",
                                (long long)mn, (long long)mx);
        const char *hf = json_string_value(json_object_get(rh, "hash_function"));
        if (hf != NULL && strcmp(hf, "XX_HASH") != 0)
            return import__fail(c, 0,
                                "ring_hash_lb_config.hash_function %.40s: ringsim's "
                                "envoy-ring reproduces XX_HASH only",
                                hf);
        if ((rc = import__param_int(c, "min_ring_size", mn)) != 0 ||
            (rc = import__param_int(c, "max_ring_size", mx)) != 0)
            return rc;
    } else {
        int64_t ts = 65537;
        json_t *f = json_object_get(json_object_get(cl, "maglev_lb_config"), "table_size");
        if (f != NULL && u64(f, &ts) != 0)
            return import__fail(c, 0, "maglev_lb_config.table_size is not a number");
        if ((rc = import__param_int(c, "table_size", ts)) != 0)
            return rc;
    }
    json_t *common = json_object_get(cl, "common_lb_config");
    json_t *ch = json_object_get(common, "consistent_hashing_lb_config");
    bool use_hostname = json_is_true(json_object_get(ch, "use_hostname_for_hashing"));
    json_t *hbf = json_object_get(ch, "hash_balance_factor");
    if (hbf != NULL) {
        if (u64(hbf, &v) != 0 || v < 100)
            return import__fail(c, 0, "hash_balance_factor must be at least 100");
        if ((rc = import__param_int(c, "hash_balance_factor", v)) != 0)
            return rc;
    }
    json_t *panic = json_object_get(common, "healthy_panic_threshold");
    if (panic != NULL) {
        json_t *pv = json_is_object(panic) ? json_object_get(panic, "value") : panic;
        if (!json_is_number(pv))
            return import__fail(c, 0, "healthy_panic_threshold is not a number");
        if ((rc = import__param_int(c, "panic_threshold", (int64_t)json_number_value(pv))) != 0)
            return rc;
    }
    const char *type = json_string_value(json_object_get(cl, "type"));
    json_t *la = json_object_get(cl, "load_assignment");
    if (la == NULL)
        return import__fail(c, 0,
                            "cluster \"%.60s\" has no load_assignment%s: ringsim needs "
                            "the hosts in the text",
                            name ? name : "",
                            type && strcmp(type, "EDS") == 0 ? " (its hosts come from EDS)" : "");
    if (type != NULL && (strcmp(type, "STRICT_DNS") == 0 || strcmp(type, "LOGICAL_DNS") == 0) &&
        (rc = import__note(c, 0, "type %s: Envoy resolves the addresses by DNS", type)) != 0)
        return rc;
    json_t *eps = json_object_get(la, "endpoints");
    size_t i, j, healthy = 0;
    json_t *loc, *lbe;
    json_array_foreach(eps, i, loc)
    {
        int64_t prio = 0;
        json_t *pr = json_object_get(loc, "priority");
        if (pr != NULL && u64(pr, &prio) != 0)
            return import__fail(c, 0, "endpoints[%zu].priority is not a number", i);
        json_t *list = json_object_get(loc, "lb_endpoints");
        if (prio > 0) {
            if ((rc = import__note(c, 0,
                                   "endpoints[%zu]: priority %lld: a failover level, used when "
                                   "priority 0 is unhealthy; its %zu hosts are not imported",
                                   i, (long long)prio, json_array_size(list))) != 0)
                return rc;
            continue;
        }
        json_array_foreach(list, j, lbe)
        {
            char path[80];
            snprintf(path, sizeof path, "endpoints[%zu].lb_endpoints[%zu]", i, j);
            if ((rc = host(c, path, lbe, use_hostname, &healthy)) != 0)
                return rc;
        }
    }
    if (json_object_get(cl, "health_checks") != NULL &&
        (rc = import__note(c, 0,
                           "health_checks: their results are not in the text; "
                           "health_status says which hosts are down")) != 0)
        return rc;
    return 0;
}

int import__envoy(import_ctx *c)
{
    int rc = 0;
    json_t *root = load(c, &rc);
    if (root == NULL)
        return rc;
    json_t *all = json_array();
    if (all == NULL) {
        json_decref(root);
        return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
    }
    collect(root, all, 0);
    size_t n = json_array_size(all), k = 0, pick = 0;
    const char **names = calloc(n + 1, sizeof *names);
    int *lines = calloc(n + 1, sizeof *lines);
    size_t *idx = calloc(n + 1, sizeof *idx);
    if (names == NULL || lines == NULL || idx == NULL) {
        rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *cl = json_array_get(all, i);
        const char *nm = json_string_value(json_object_get(cl, "name"));
        const char *lb = json_string_value(json_object_get(cl, "lb_policy"));
        bool hashes = lb && (strcmp(lb, "RING_HASH") == 0 || strcmp(lb, "MAGLEV") == 0);
        if ((c->want != NULL && nm && strcmp(nm, c->want) == 0) || (c->want == NULL && hashes) ||
            (c->want == NULL && n == 1)) {
            names[k] = nm ? nm : "";
            idx[k++] = i;
        }
    }
    if (c->want != NULL && k == 0)
        for (size_t i = 0; i < n; i++) {
            const char *nm = json_string_value(json_object_get(json_array_get(all, i), "name"));
            names[k] = nm ? nm : "";
            idx[k++] = i;
        }
    rc = import__choose(c, "cluster", names, lines, k,
                        n == 0 ? "no Envoy cluster in the text (a Cluster with lb_policy and "
                                 "load_assignment)"
                               : "no cluster in the text has lb_policy RING_HASH or MAGLEV",
                        &pick);
    if (rc == 0)
        rc = cluster(c, json_array_get(all, idx[pick]));
out:
    free(names);
    free(lines);
    free(idx);
    json_decref(all);
    json_decref(root);
    return rc;
}
