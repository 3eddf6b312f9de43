/*
 * export_config.h - the current nodes written back as a real system takes
 * them (docs/api.md, "import a real cluster": GET /api/export/config,
 * `ringsim export --config FORMAT`).
 *
 * Formats: nginx, haproxy, libmemcached, twemproxy and envoy write
 * configuration text that imports back (import.h) to the same nodes, in
 * the same order, with the same weights, ids, backup and down states --
 * so the same owners under the format's algorithm; nodetool-ring and
 * redis-nodes write the status text the importer reads (`nodetool ring`,
 * `CLUSTER NODES`); cassandra writes each node's `initial_token` line;
 * redis writes the `redis-cli --cluster` commands that move the slots from
 * the imported layout (the newest import operation the state stands on) to
 * the current one.  Section names (upstream, backend, pool, cluster) and
 * server addresses come from that import where it has them.
 *
 * An export is text a user runs or pastes into production: every value is
 * written in the format's grammar (quoted for sh, HAProxy and nginx,
 * escaped for YAML and JSON), and a name or weight the format cannot
 * express (a space in a twemproxy server name, a character HAProxy refuses
 * in a server name, a redis node that is not HOST:PORT, a libmemcached name
 * that would make the list a configuration string, a nodetool name that
 * reads as a heading, a weight that is not a whole number where the program
 * reads whole numbers) is refused with RINGSIM_EPARAM naming the node and
 * why; nothing is written.  tests/ref/export_ref.py holds every format to
 * it over hostile names with the real programs.
 *
 * Cost: O(nodes + points) (and O(16384 x moves) for redis).
 */
#ifndef RINGSIM_EXPORT_CONFIG_H
#define RINGSIM_EXPORT_CONFIG_H

#include <jansson.h>
#include <stddef.h>

#include "sim.h"

/* The formats, comma-separated, for messages and help. */
#define EXPORT_CONFIG_FORMATS                                                                      \
    "nginx, haproxy, libmemcached, twemproxy, envoy, cassandra, redis, nodetool-ring, "            \
    "redis-nodes, crushmap"

/* Write the current nodes of s in format (one of EXPORT_CONFIG_FORMATS)
 * into *text (malloc'd, NUL-terminated, *len bytes).  RINGSIM_EPARAM for
 * an unknown format or what it cannot express, RINGSIM_ENOMEM. */
int export_config(sim *s, const char *format, char **text, size_t *len, rs_error *err);
/* The formats in the page's order: [{"format", "title"}…] (GET
 * /api/config's "export_formats").  New reference, NULL when out of
 * memory. */
json_t *export_config_formats_json(void);

#endif
