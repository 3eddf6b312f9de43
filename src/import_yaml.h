/*
 * import_yaml.h - YAML for the importers (twemproxy, Envoy), with libyaml.
 *
 * The text is loaded as one document (libyaml's loader keeps aliases as
 * shared nodes, so an alias bomb costs nothing); lookups walk mappings by
 * key.  For Envoy, import__yaml_json turns a node into jansson values, so
 * that a YAML and a JSON cluster are read by the same code.  Depth is
 * bounded (IMPORT_YAML_MAX_DEPTH).
 */
#ifndef RINGSIM_IMPORT_YAML_H
#define RINGSIM_IMPORT_YAML_H

#include <yaml.h>

#include "import_int.h"

#define IMPORT_YAML_MAX_DEPTH 64

/* Load the text; 0, or a refusal naming the line of libyaml's error.  On
 * success the caller deletes *doc with yaml_document_delete. */
int import__yaml_load(import_ctx *c, yaml_document_t *doc);
/* The value of key in a mapping node, or NULL. */
yaml_node_t *import__yaml_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
/* A scalar's text (NUL-terminated by libyaml), or NULL for other nodes. */
const char *import__yaml_str(const yaml_node_t *n);
/* 1-based line of a node. */
int import__yaml_line(const yaml_node_t *n);
/* The node as JSON (plain scalars that read as integers, booleans or null
 * become those); NULL when out of memory or nested deeper than the limit
 * (*too_deep set). */
json_t *import__yaml_json(yaml_document_t *doc, yaml_node_t *n, int depth, bool *too_deep);

#endif
