/*
 * import_yaml.h - YAML for the importers (twemproxy, Envoy), with libyaml.
 *
 * The text is loaded as one document (the first of the stream), read event
 * by event from libyaml's parser into a yaml_document_t, so that every
 * limit is applied while libyaml reads and nothing past a limit is read:
 *   - nesting: at most IMPORT_YAML_MAX_DEPTH collections inside each
 *     other, counting what an alias brings in where it stands.  libyaml's
 *     scanner costs O(depth) for each token (its simple-key stack), so
 *     200,000 nested `[` took minutes; stopped at the 65th, they cost
 *     nothing;
 *   - aliases: an alias shares its anchor's node (the document holds it
 *     once), and what it would repeat if expanded is counted: at most
 *     IMPORT_YAML_MAX_VALUES values and IMPORT_YAML_MAX_BYTES bytes of
 *     scalars in the text with every alias expanded.  A "billion laughs"
 *     bomb is refused at the alias that crosses the line, by name;
 *   - anchors are found in a hashed set (libyaml's own loader searches
 *     them one by one, and checked every new anchor against all before:
 *     quadratic in a 16 MiB paste of anchors);
 *   - `%` directives: at most IMPORT_YAML_MAX_DIRECTIVES lines that start
 *     with `%`, counted before libyaml sees the text (libyaml checks each
 *     %TAG against all before it).
 * Lookups walk mappings by key.  For Envoy, import__yaml_json turns a node
 * into jansson values, sharing one value for every alias of a node, so that
 * a YAML and a JSON cluster are read by the same code.
 *
 * Cost: O(text) to load, O(values in the document) to turn into JSON.
 */
#ifndef RINGSIM_IMPORT_YAML_H
#define RINGSIM_IMPORT_YAML_H

#include <yaml.h>

#include "import_int.h"

#define IMPORT_YAML_MAX_DEPTH 64          /* collections inside each other */
#define IMPORT_YAML_MAX_VALUES 1000000u   /* values (keys too), aliases expanded */
#define IMPORT_YAML_MAX_BYTES (64u << 20) /* bytes of scalars, aliases expanded */
#define IMPORT_YAML_MAX_DIRECTIVES 64     /* lines starting with '%' */

/* Load the text; 0, or a refusal naming the line of libyaml's error or of
 * the limit crossed.  On success the caller deletes *doc with
 * yaml_document_delete. */
int import__yaml_load(import_ctx *c, yaml_document_t *doc);
/* The value of key in a mapping node, or NULL. */
yaml_node_t *import__yaml_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
/* A scalar's text (NUL-terminated by libyaml), or NULL for other nodes. */
const char *import__yaml_str(const yaml_node_t *n);
/* 1-based line of a node. */
int import__yaml_line(const yaml_node_t *n);
/* The root of a loaded document as JSON (plain scalars that read as
 * integers, booleans or null become those); the nodes an alias shares are
 * one shared value.  NULL when out of memory. */
json_t *import__yaml_json(yaml_document_t *doc);

#endif
