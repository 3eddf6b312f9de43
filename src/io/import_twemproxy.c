/*
 * import_twemproxy.c - a nutcracker (twemproxy) YAML configuration: pools,
 * each a mapping with `listen`, `hash`, `distribution`, `servers`.
 *
 * Reference: twemproxy 0.5.0 (Debian 12's nutcracker 0.5.0), src/nc_conf.c,
 * read for behaviour:
 *   the file is a mapping of pool names to mappings of directives (libyaml);
 *   `hash` is one of one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64,
 *     fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins (default fnv1a_64),
 *     else "is not a valid hash"; `distribution` ketama (default), modula or
 *     random, else "is not a valid distribution";
 *   conf_add_server reads "host:port:weight [name]" or
 *     "/path/unix_socket:weight [name]" from the end: the name after the last
 *     ' ' (optional), the weight after the last ':', then the port after
 *     the ':' before it; a weight that is not a number is "an invalid
 *     weight", 0 is "a zero weight"; a port outside 1..65535 "an invalid
 *     port";
 *   the server's name, the text the continuum hashes, is the given name,
 *     else "host" when the port is 11211 (libmemcached's habit) and
 *     "host:port" otherwise; conf_validate_server refuses two servers of a
 *     pool with the same name.
 * Only `distribution: ketama` is placed by ringsim's `twemproxy`; the other
 * two are refused with a message saying so.
 *
 * Cost: the load (import_yaml.h), then one walk over the chosen pool; pool
 * names are found twice in a hashed set (a 16 MiB paste of pools once took
 * hours comparing each with every other).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "import_yaml.h"

static const char *const hashes[] = {"one_at_a_time", "md5",     "crc16",    "crc32",
                                     "crc32a",        "fnv1_64", "fnv1a_64", "fnv1_32",
                                     "fnv1a_32",      "hsieh",   "murmur",   "jenkins"};

static const char *const known_keys[] = {"listen",
                                         "hash",
                                         "hash_tag",
                                         "distribution",
                                         "timeout",
                                         "backlog",
                                         "preconnect",
                                         "redis",
                                         "redis_auth",
                                         "redis_db",
                                         "server_connections",
                                         "auto_eject_hosts",
                                         "server_retry_timeout",
                                         "server_failure_limit",
                                         "servers",
                                         "client_connections",
                                         "tcpkeepalive",
                                         "reuseport"};

static int server(import_ctx *c, const yaml_node_t *sn)
{
    const char *v = import__yaml_str(sn);
    int line = import__yaml_line(sn);
    if (v == NULL)
        return import__fail(c, line,
                            "conf: directive \"servers\" is not a sequence of "
                            "strings");
    size_t len = strlen(v);
    const char *bad = "has an invalid \"hostname:port:weight [name]\"or "
                      "\"/path/unix_socket:weight [name]\" format string";
    if (len == 0)
        return import__fail(c, line, "conf: directive \"servers\" %s", bad);
    /* From the end: " name" (optional), ":weight", ":port" (not for sockets). */
    const char *name = NULL, *weight = NULL, *port = NULL;
    size_t namelen = 0, weightlen = 0, portlen = 0;
    size_t end = len; /* the part still to read is v[0 .. end) */
    bool sock = v[0] == '/';
    int need = sock ? 2 : 3, k;
    for (k = 0; k < 3; k++) {
        char d = k == 0 ? ' ' : ':';
        const char *q = NULL;
        for (size_t i = end; i > 0; i--)
            if (v[i - 1] == d) {
                q = v + i - 1;
                break;
            }
        if (q == NULL) {
            if (k == 0)
                continue;
            break;
        }
        size_t fl = end - (size_t)(q - v) - 1;
        if (k == 0) {
            name = q + 1;
            namelen = fl;
        } else if (k == 1) {
            weight = q + 1;
            weightlen = fl;
        } else {
            port = q + 1;
            portlen = fl;
        }
        end = (size_t)(q - v);
    }
    if (k != need)
        return import__fail(c, line, "conf: directive \"servers\" %s", bad);
    size_t addrlen = end;
    int64_t w, p = 0;
    if (import__int(weight, weightlen, 0, INT32_MAX, &w) != 0 || weight[0] == '-' || weight[0] == '+')
        return import__fail(c, line,
                            "conf: directive \"servers\" has an invalid weight in "
                            "\"%.80s\"",
                            v);
    if (w == 0)
        return import__fail(c, line,
                            "conf: directive \"servers\" has a zero weight in "
                            "\"%.80s\"",
                            v);
    if (!sock && (import__int(port, portlen, 1, 65535, &p) != 0 || port[0] == '-' || port[0] == '+'))
        return import__fail(c, line,
                            "conf: directive \"servers\" has an invalid port in "
                            "\"%.80s\"",
                            v);
    if (addrlen == 0)
        return import__fail(c, line, "conf: directive \"servers\" %s", bad);
    if (name == NULL) {
        name = v;
        namelen = (!sock && p == 11211) ? addrlen : addrlen + (sock ? 0 : 1 + portlen);
    }
    if (namelen == 0)
        return import__fail(c, line, "conf: directive \"servers\" %s", bad);
    int rc;
    import_node_rec *n = import__node(c, name, namelen, line, &rc);
    if (n == NULL)
        return rc;
    n->v.weight = (double)w;
    size_t al = sock ? addrlen : addrlen + 1 + portlen;
    if ((al != namelen || memcmp(name, v, namelen) != 0) &&
        (rc = import__set_address(c, n, v, al)) != 0)
        return rc;
    return 0;
}

static int pool(import_ctx *c, yaml_document_t *doc, yaml_node_t *pname, yaml_node_t *p)
{
    int rc;
    int pline = import__yaml_line(pname);
    const char *name = import__yaml_str(pname);
    if (p->type != YAML_MAPPING_NODE)
        return import__fail(c, pline, "conf: pool \"%.60s\" is not a mapping", name);
    if ((rc = import__set_name(c, name, strlen(name))) != 0)
        return rc;
    strcpy(c->r->algorithm, "twemproxy");
    const char *hash = "fnv1a_64";
    yaml_node_t *h = import__yaml_get(doc, p, "hash");
    if (h != NULL) {
        hash = import__yaml_str(h);
        bool ok = false;
        for (size_t i = 0; hash && i < sizeof hashes / sizeof *hashes; i++)
            ok |= strcmp(hash, hashes[i]) == 0;
        if (!ok)
            return import__fail(c, import__yaml_line(h),
                                "conf: directive \"hash:\" is not a valid hash");
    }
    yaml_node_t *d = import__yaml_get(doc, p, "distribution");
    if (d != NULL) {
        const char *ds = import__yaml_str(d);
        if (ds == NULL ||
            (strcmp(ds, "ketama") != 0 && strcmp(ds, "modula") != 0 && strcmp(ds, "random") != 0))
            return import__fail(c, import__yaml_line(d),
                                "conf: directive \"distribution:\" is not a valid "
                                "distribution");
        if (strcmp(ds, "ketama") != 0)
            return import__fail(c, import__yaml_line(d),
                                "distribution: %s does not hash consistently: ringsim "
                                "imports distribution: ketama",
                                ds);
    }
    if ((rc = import__param_str(c, "hash", hash)) != 0)
        return rc;
    if (strcmp(hash, "crc32") == 0)
        rc = import__note(c, h ? import__yaml_line(h) : pline,
                          "hash: crc32 gives 15-bit values (nutcracker's hash_crc32, "
                          "libmemcached's), while the continuum's points span 32 bits: every "
                          "key hashes below 32768, so one server takes them all");
    if (rc != 0)
        return rc;
    yaml_node_t *listen = import__yaml_get(doc, p, "listen");
    if (listen == NULL)
        return import__fail(c, pline, "conf: directive \"listen:\" is missing");
    yaml_node_t *ae = import__yaml_get(doc, p, "auto_eject_hosts");
    const char *aes = import__yaml_str(ae);
    bool eject = aes != NULL && strcmp(aes, "true") == 0;
    for (yaml_node_pair_t *pr = p->data.mapping.pairs.start; pr < p->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        const char *ks = import__yaml_str(k);
        if (ks == NULL)
            continue;
        bool known = false;
        for (size_t i = 0; i < sizeof known_keys / sizeof *known_keys; i++)
            known |= strcmp(ks, known_keys[i]) == 0;
        if (!known)
            return import__fail(c, import__yaml_line(k), "conf: directive \"%.40s\" is unknown", ks);
        if (strcmp(ks, "hash_tag") == 0) {
            rc = import__note(c, import__yaml_line(k),
                              "hash_tag: nutcracker hashes only the part of a key between the "
                              "tags; give ringsim that part as the key");
        } else if (strcmp(ks, "auto_eject_hosts") == 0) {
            rc = import__note(c, import__yaml_line(k), "auto_eject_hosts: %s: %s", aes ? aes : "",
                              eject ? "a failed server leaves the continuum, which is rebuilt "
                                      "from the others"
                                    : "a failed server keeps its keys (they fail)");
        } else if (strcmp(ks, "servers") != 0 && strcmp(ks, "hash") != 0 &&
                   strcmp(ks, "distribution") != 0) {
            rc = import__note(c, import__yaml_line(k), "%.40s: placement does not depend on it", ks);
        }
        if (rc != 0)
            return rc;
    }
    yaml_node_t *sv = import__yaml_get(doc, p, "servers");
    if (sv == NULL || sv->type != YAML_SEQUENCE_NODE)
        return import__fail(c, pline, "conf: pool \"%.60s\" has no servers", name);
    for (yaml_node_item_t *it = sv->data.sequence.items.start; it < sv->data.sequence.items.top; it++)
        if ((rc = server(c, yaml_document_get_node(doc, *it))) != 0)
            return rc;
    return 0;
}

int import__twemproxy(import_ctx *c)
{
    yaml_document_t doc;
    int rc = import__yaml_load(c, &doc);
    if (rc != 0)
        return rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root->type != YAML_MAPPING_NODE) {
        rc = import__fail(c, import__yaml_line(root),
                          "conf: the configuration is not a mapping of pools");
        goto out;
    }
    size_t n = (size_t)(root->data.mapping.pairs.top - root->data.mapping.pairs.start);
    const char **names = calloc(n + 1, sizeof *names);
    int *lines = calloc(n + 1, sizeof *lines);
    yaml_node_pair_t **pairs = calloc(n + 1, sizeof *pairs);
    size_t k = 0, pick = 0;
    import_set seen = {0}; /* pool names (tag: index) */
    if (names == NULL || lines == NULL || pairs == NULL) {
        rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
    } else {
        for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
             pr < root->data.mapping.pairs.top; pr++) {
            yaml_node_t *kn = yaml_document_get_node(&doc, pr->key);
            const char *ks = import__yaml_str(kn);
            if (ks == NULL)
                continue;
            size_t was;
            int dup = import__set_add(c, &seen, ks, strlen(ks), 0, k, &was);
            if (dup < 0) {
                rc = dup;
                break;
            }
            if (dup == 1) {
                rc = import__fail(c, import__yaml_line(kn), "conf: pool \"%.60s\" is defined twice",
                                  ks);
                break;
            }
            names[k] = ks;
            lines[k] = import__yaml_line(kn);
            pairs[k++] = pr;
        }
        if (rc == 0)
            rc = import__choose(c, "pool", names, lines, k, "no pool in the configuration", &pick);
        if (rc == 0)
            rc = pool(c, &doc, yaml_document_get_node(&doc, pairs[pick]->key),
                      yaml_document_get_node(&doc, pairs[pick]->value));
    }
    import__set_free(&seen);
    free(names);
    free(lines);
    free(pairs);
out:
    yaml_document_delete(&doc);
    return rc;
}
