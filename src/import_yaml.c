/*
 * import_yaml.c - libyaml's document loader behind the few lookups the
 * importers need (import_yaml.h).
 */
#define _GNU_SOURCE
#include "import_yaml.h"

#include <string.h>

int import__yaml_load(import_ctx *c, yaml_document_t *doc)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
    yaml_parser_set_input_string(&p, (const unsigned char *)c->text, c->len);
    int rc = 0;
    if (!yaml_parser_load(&p, doc)) {
        int line = (int)(p.problem_mark.line + 1);
        if (p.error == YAML_MEMORY_ERROR)
            rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
        else
            rc = import__fail(c, line, "YAML error: %s%s%s", p.problem ? p.problem : "invalid YAML",
                              p.context ? " " : "", p.context ? p.context : "");
    } else if (yaml_document_get_root_node(doc) == NULL) {
        yaml_document_delete(doc);
        rc = import__fail(c, 0, "the YAML text is empty");
    }
    yaml_parser_delete(&p);
    return rc;
}

yaml_node_t *import__yaml_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    yaml_node_t *found = NULL;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
            memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
            found = yaml_document_get_node(doc, pr->value); /* the last one wins */
    }
    return found;
}

const char *import__yaml_str(const yaml_node_t *n)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)n->data.scalar.value;
}

int import__yaml_line(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 0; }

static json_t *scalar_json(const yaml_node_t *n)
{
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        int64_t v;
        if (import__int(s, len, INT64_MIN, INT64_MAX, &v) == 0)
            return json_integer(v);
        if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
            return json_true();
        if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
            return json_false();
        if (len == 0 || strcmp(s, "null") == 0 || strcmp(s, "~") == 0)
            return json_null();
    }
    return json_stringn(s, len);
}

json_t *import__yaml_json(yaml_document_t *doc, yaml_node_t *n, int depth, bool *too_deep)
{
    if (n == NULL)
        return json_null();
    if (depth > IMPORT_YAML_MAX_DEPTH) {
        *too_deep = true;
        return NULL;
    }
    if (n->type == YAML_SCALAR_NODE)
        return scalar_json(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start;
             a != NULL && it < n->data.sequence.items.top; it++) {
            json_t *v = import__yaml_json(doc, yaml_document_get_node(doc, *it), depth + 1, too_deep);
            if (v == NULL || json_array_append_new(a, v) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    if (n->type == YAML_MAPPING_NODE) {
        json_t *o = json_object();
        for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
             o != NULL && pr < n->data.mapping.pairs.top; pr++) {
            yaml_node_t *k = yaml_document_get_node(doc, pr->key);
            if (k == NULL || k->type != YAML_SCALAR_NODE)
                continue; /* complex keys are nothing Envoy reads */
            json_t *v = import__yaml_json(doc, yaml_document_get_node(doc, pr->value), depth + 1,
                                          too_deep);
            if (v == NULL || json_object_setn_new(o, (const char *)k->data.scalar.value,
                                                  k->data.scalar.length, v) != 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    return json_null();
}
