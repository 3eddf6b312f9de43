/*
 * import_yaml.c - the YAML loader of the importers, over libyaml's event
 * parser, with its limits, and the few lookups they need (import_yaml.h).
 */
#define _GNU_SOURCE
#include "import_yaml.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* An anchor: its node and what it holds with its own aliases expanded. */
typedef struct yanchor {
    char *name;
    int node;
    uint64_t values, bytes;
    int height; /* collections inside each other in it (a scalar: 0) */
    bool done;  /* its node has ended (an alias inside it would be a cycle) */
} yanchor;

/* A collection being read. */
typedef struct yopen {
    int node;
    int key; /* a mapping's key waiting for its value (0: none) */
    int height;
    long anchor;            /* its anchor's index, or -1 */
    uint64_t values, bytes; /* the totals when it started */
} yopen;

typedef struct yload {
    import_ctx *c;
    yaml_document_t *doc;
    bool have_doc;
    yopen stack[IMPORT_YAML_MAX_DEPTH];
    int depth;
    uint64_t values, bytes; /* in the text with every alias expanded */
    yanchor *anchors;
    size_t nanchors, capanchors;
    import_set by_name; /* anchor names (tag: index) */
} yload;

static int nomem(import_ctx *c)
{
    if (c->line != NULL)
        *c->line = 0;
    return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
}

static int line_of(const yaml_mark_t *m) { return (int)m->line + 1; }

/* Count what a value adds (a node, or an alias's expansion). */
static int spend(yload *y, uint64_t values, uint64_t bytes, const yaml_event_t *e)
{
    y->values += values;
    y->bytes += bytes;
    if (y->values <= IMPORT_YAML_MAX_VALUES && y->bytes <= IMPORT_YAML_MAX_BYTES)
        return 0;
    const char *what = y->values > IMPORT_YAML_MAX_VALUES ? "values" : "bytes of text";
    unsigned limit = y->values > IMPORT_YAML_MAX_VALUES ? IMPORT_YAML_MAX_VALUES
                                                        : IMPORT_YAML_MAX_BYTES;
    if (e->type == YAML_ALIAS_EVENT)
        return import__fail(y->c, line_of(&e->start_mark),
                            "YAML alias *%.60s repeats %llu values and %llu bytes: with its "
                            "aliases expanded the text holds more than %u %s, the most "
                            "ringsim reads (an alias bomb)",
                            (const char *)e->data.alias.anchor, (unsigned long long)values,
                            (unsigned long long)bytes, limit, what);
    return import__fail(y->c, line_of(&e->start_mark),
                        "the YAML text holds more than %u %s, the most ringsim reads", limit, what);
}

/* Put node id (of the given height) in the collection being read, or make
 * it the root. */
static int attach(yload *y, int id, int height)
{
    if (y->depth == 0)
        return 0; /* the root: the document's first node */
    yopen *o = &y->stack[y->depth - 1];
    if (height + 1 > o->height)
        o->height = height + 1;
    yaml_node_t *p = yaml_document_get_node(y->doc, o->node);
    if (p->type == YAML_SEQUENCE_NODE)
        return yaml_document_append_sequence_item(y->doc, o->node, id) ? 0 : nomem(y->c);
    if (o->key == 0) {
        o->key = id;
        return 0;
    }
    int k = o->key;
    o->key = 0;
    return yaml_document_append_mapping_pair(y->doc, o->node, k, id) ? 0 : nomem(y->c);
}

/* A node with an anchor: remember it (a second anchor of the name is
 * refused, as libyaml's loader refuses it). */
static int anchor(yload *y, const yaml_char_t *name, int node, const yaml_mark_t *m, long *idx)
{
    *idx = -1;
    if (name == NULL)
        return 0;
    size_t len = strlen((const char *)name), found;
    if (import__set_find(y->c, &y->by_name, (const char *)name, len, 0, &found))
        return import__fail(y->c, line_of(m), "YAML error: found duplicate anchor &%.60s",
                            (const char *)name);
    if (vec_reserve(&y->anchors, &y->capanchors, y->nanchors + 1, sizeof *y->anchors, 16))
        return nomem(y->c);
    yanchor *a = &y->anchors[y->nanchors];
    memset(a, 0, sizeof *a);
    if ((a->name = strdup((const char *)name)) == NULL)
        return nomem(y->c);
    a->node = node;
    y->nanchors++;
    if (import__set_add(y->c, &y->by_name, a->name, len, 0, y->nanchors - 1, &found) < 0)
        return RINGSIM_ENOMEM;
    *idx = (long)(y->nanchors - 1);
    return 0;
}

static void set_marks(yload *y, int id, const yaml_event_t *e, bool start, bool end)
{
    yaml_node_t *n = yaml_document_get_node(y->doc, id);
    if (start)
        n->start_mark = e->start_mark;
    if (end)
        n->end_mark = e->end_mark;
}

static int too_deep(yload *y, const yaml_event_t *e)
{
    return import__fail(y->c, line_of(&e->start_mark), "the YAML text is nested more than %d deep",
                        IMPORT_YAML_MAX_DEPTH);
}

/* One event of the first document.  *done when it has ended. */
static int event(yload *y, const yaml_event_t *e, bool *done)
{
    int rc, id;
    long a;
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (!yaml_document_initialize(y->doc, NULL, NULL, NULL, e->data.document_start.implicit, 1))
            return nomem(y->c);
        y->have_doc = true;
        return 0;
    case YAML_DOCUMENT_END_EVENT:
    case YAML_STREAM_END_EVENT:
        *done = true;
        return 0;
    case YAML_SCALAR_EVENT:
        if ((rc = spend(y, 1, e->data.scalar.length, e)) != 0)
            return rc;
        id = yaml_document_add_scalar(y->doc, e->data.scalar.tag, e->data.scalar.value,
                                      (int)e->data.scalar.length, e->data.scalar.style);
        if (id == 0)
            return nomem(y->c);
        set_marks(y, id, e, true, true);
        if ((rc = anchor(y, e->data.scalar.anchor, id, &e->start_mark, &a)) != 0)
            return rc;
        if (a >= 0) {
            y->anchors[a].values = 1;
            y->anchors[a].bytes = e->data.scalar.length;
            y->anchors[a].done = true;
        }
        return attach(y, id, 0);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        if (y->depth == IMPORT_YAML_MAX_DEPTH)
            return too_deep(y, e);
        uint64_t v0 = y->values, b0 = y->bytes;
        if ((rc = spend(y, 1, 0, e)) != 0)
            return rc;
        bool seq = e->type == YAML_SEQUENCE_START_EVENT;
        id = seq ? yaml_document_add_sequence(y->doc, e->data.sequence_start.tag,
                                              e->data.sequence_start.style)
                 : yaml_document_add_mapping(y->doc, e->data.mapping_start.tag,
                                             e->data.mapping_start.style);
        if (id == 0)
            return nomem(y->c);
        set_marks(y, id, e, true, false);
        rc = anchor(y, seq ? e->data.sequence_start.anchor : e->data.mapping_start.anchor, id,
                    &e->start_mark, &a);
        if (rc != 0)
            return rc;
        y->stack[y->depth++] = (yopen){id, 0, 1, a, v0, b0};
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        yopen o = y->stack[--y->depth];
        set_marks(y, o.node, e, false, true);
        if (o.anchor >= 0) {
            yanchor *an = &y->anchors[o.anchor];
            an->values = y->values - o.values;
            an->bytes = y->bytes - o.bytes;
            an->height = o.height;
            an->done = true;
        }
        return attach(y, o.node, o.height);
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)e->data.alias.anchor;
        size_t i;
        if (!import__set_find(y->c, &y->by_name, name, strlen(name), 0, &i))
            return import__fail(y->c, line_of(&e->start_mark),
                                "YAML error: found undefined alias *%.60s", name);
        const yanchor *an = &y->anchors[i];
        if (!an->done)
            return import__fail(y->c, line_of(&e->start_mark),
                                "YAML alias *%.60s stands inside its own anchor: the value "
                                "would hold itself",
                                name);
        if (y->depth + an->height > IMPORT_YAML_MAX_DEPTH)
            return import__fail(y->c, line_of(&e->start_mark),
                                "YAML alias *%.60s nests the text more than %d deep", name,
                                IMPORT_YAML_MAX_DEPTH);
        if ((rc = spend(y, an->values, an->bytes, e)) != 0)
            return rc;
        return attach(y, an->node, an->height);
    }
    default:
        return 0;
    }
}

/* libyaml checks every %TAG directive against those before it: count the
 * lines that may be directives before it reads them. */
static int directives(import_ctx *c)
{
    size_t n = c->len > 0 && c->text[0] == '%';
    for (const char *p = c->text, *end = c->text + c->len;
         (p = memchr(p, '\n', (size_t)(end - p))) != NULL && ++p < end;)
        if (*p == '%' && ++n > IMPORT_YAML_MAX_DIRECTIVES) {
            int line = 1;
            for (const char *q = c->text; q < p; q++)
                line += *q == '\n';
            return import__fail(c, line,
                                "more than %d lines start with %%: ringsim reads at most %d "
                                "YAML directives",
                                IMPORT_YAML_MAX_DIRECTIVES, IMPORT_YAML_MAX_DIRECTIVES);
        }
    return 0;
}

int import__yaml_load(import_ctx *c, yaml_document_t *doc)
{
    int rc = directives(c);
    if (rc != 0)
        return rc;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return nomem(c);
    yaml_parser_set_input_string(&p, (const unsigned char *)c->text, c->len);
    yload y;
    memset(&y, 0, sizeof y);
    y.c = c;
    y.doc = doc;
    bool done = false;
    while (rc == 0 && !done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            if (p.error == YAML_MEMORY_ERROR)
                rc = nomem(c);
            else
                rc = import__fail(c, (int)(p.problem_mark.line + 1), "YAML error: %s%s%s",
                                  p.problem ? p.problem : "invalid YAML", p.context ? " " : "",
                                  p.context ? p.context : "");
            break;
        }
        rc = event(&y, &e, &done);
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    for (size_t i = 0; i < y.nanchors; i++)
        free(y.anchors[i].name);
    free(y.anchors);
    import__set_free(&y.by_name);
    if (rc == 0 && (!y.have_doc || yaml_document_get_root_node(doc) == NULL))
        rc = import__fail(c, 0, "the YAML text is empty");
    if (rc != 0 && y.have_doc)
        yaml_document_delete(doc);
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

typedef struct yjson {
    yaml_document_t *doc;
    json_t **memo; /* by node id - 1: the value made for it (one reference) */
} yjson;

static json_t *node_json(yjson *y, int id, int depth)
{
    yaml_node_t *n = yaml_document_get_node(y->doc, id);
    if (n == NULL)
        return json_null();
    if (y->memo[id - 1] != NULL) /* an alias's node, made once */
        return json_incref(y->memo[id - 1]);
    if (depth > IMPORT_YAML_MAX_DEPTH) /* the loader refused deeper texts */
        return NULL;
    json_t *v = NULL;
    if (n->type == YAML_SCALAR_NODE) {
        v = scalar_json(n);
    } else if (n->type == YAML_SEQUENCE_NODE) {
        v = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start;
             v != NULL && it < n->data.sequence.items.top; it++) {
            json_t *e = node_json(y, *it, depth + 1);
            if (e == NULL || json_array_append_new(v, e) != 0) {
                json_decref(v);
                return NULL;
            }
        }
    } else if (n->type == YAML_MAPPING_NODE) {
        v = json_object();
        for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
             v != NULL && pr < n->data.mapping.pairs.top; pr++) {
            yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
            if (k == NULL || k->type != YAML_SCALAR_NODE)
                continue; /* complex keys are nothing Envoy reads */
            json_t *e = node_json(y, pr->value, depth + 1);
            if (e == NULL || json_object_setn_new(v, (const char *)k->data.scalar.value,
                                                  k->data.scalar.length, e) != 0) {
                json_decref(v);
                return NULL;
            }
        }
    } else {
        v = json_null();
    }
    if (v != NULL)
        y->memo[id - 1] = json_incref(v);
    return v;
}

json_t *import__yaml_json(yaml_document_t *doc)
{
    size_t n = (size_t)(doc->nodes.top - doc->nodes.start);
    yjson y = {doc, calloc(n + 1, sizeof(json_t *))};
    if (y.memo == NULL)
        return NULL;
    json_t *v = n > 0 ? node_json(&y, 1, 0) : json_null();
    for (size_t i = 0; i < n; i++)
        json_decref(y.memo[i]);
    free(y.memo);
    return v;
}
