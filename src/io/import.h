/*
 * import.h - reading a real system's configuration or status text.
 *
 * One parser per format, each in its own import_<format>.c, behind this
 * interface (docs/api.md, "Version 3: import a real cluster").  A parse reads the
 * text the way the real program reads it -- its comments, quoting, sections
 * and defaults -- for what decides placement, and gives an opaque result:
 * the format, the upstream / backend / pool / cluster chosen, the ringsim
 * algorithm and its parameters, the nodes in the text's order, and notes
 * for what the text holds that placement does not depend on or that ringsim
 * cannot know.  A text the real program would refuse is refused with the
 * line and the message the program would give.
 *
 * The parsers know bytes and limits only: no engine, no SQLite, no HTTP.
 * import_parse checks the limits below before any parser runs, so a parser
 * sees at most IMPORT_MAX_TEXT bytes of valid UTF-8 without NUL bytes, in
 * lines of at most IMPORT_MAX_LINE bytes.
 *
 * Cost: one pass (two for the formats that first list their sections) over
 * the text, O(text + nodes log nodes) (duplicate names are found by sorting;
 * every lookup by name is a keyed hash, import_int.h), whatever the text
 * holds: a 16 MiB paste within the limits parses in under a second.  YAML
 * has limits of its own (import_yaml.h: depth, aliases, directives).
 */
#ifndef RINGSIM_IMPORT_H
#define RINGSIM_IMPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define IMPORT_MAX_TEXT (16u * 1024u * 1024u) /* bytes of text (a 16 MiB paste) */
#define IMPORT_MAX_LINE (1024u * 1024u)       /* bytes in one line */
#define IMPORT_MAX_NODES 10000u               /* servers in the chosen section */
#define IMPORT_MAX_TOKENS 1000000u            /* tokens over all nodes (nodetool) */
#define IMPORT_MAX_NOTES 200u                 /* notes kept; one more says how many */
#define IMPORT_MAX_SECTIONS 10000u            /* upstreams, backends, pools... */

typedef enum {
    IMPORT_AUTO = -1,
    IMPORT_NGINX = 0,
    IMPORT_HAPROXY,
    IMPORT_LIBMEMCACHED,
    IMPORT_TWEMPROXY,
    IMPORT_ENVOY,
    IMPORT_NODETOOL,
    IMPORT_REDIS,
    IMPORT_FORMAT_COUNT
} import_format;

/* A slot range of a Redis master, first..last inclusive. */
typedef struct import_slots {
    uint16_t first, last;
} import_slots;

/* A node as the text declares it.  Read-only view, valid as long as its
 * result.  Strings are NUL-terminated and also carry their length. */
typedef struct import_node {
    const char *name; /* as docs/api.md's table says for the format */
    size_t len;
    const char *address;   /* the address as written when it is not the name, or NULL */
    double weight;         /* 1 where the format has no weight */
    int64_t id;            /* HAProxy's explicit `id`, 0 when none */
    bool backup;           /* HAProxy `backup` */
    bool down;             /* state: down (nginx `down`, haproxy `disabled`, ...) */
    const int64_t *tokens; /* Cassandra tokens in the text's order */
    size_t ntokens;
    const import_slots *slots; /* Redis slot ranges in the text's order */
    size_t nslots;
    const char *const *replicas; /* Redis replicas ("ip:port") of this master */
    size_t nreplicas;
    /* Cassandra's datacenter and rack (`nodetool ring`/`status`), NULL
     * when the text has none: the node's location dc=, rack= */
    const char *dc, *rack;
    int line; /* where the text declares it (1-based) */
} import_node;

typedef struct import_note {
    int line; /* 0 when the note is about the whole text */
    const char *message;
} import_note;

typedef struct import_result import_result;

/* The format's wire name ("nginx", "haproxy", "libmemcached", "twemproxy",
 * "envoy", "nodetool-ring", "redis-nodes"); "auto" for IMPORT_AUTO. */
const char *import_format_name(import_format f);
/* Parse a wire name (or "auto") into *out; RINGSIM_EPARAM listing the
 * formats when unknown. */
int import_format_parse(const char *name, import_format *out, rs_error *err);

/* Which format the text is (IMPORT_AUTO's choice), or RINGSIM_EPARAM with a
 * message when none fits.  Reads at most the first 64 KiB. */
int import_detect(const char *text, size_t len, import_format *out, rs_error *err);

/* Parse len bytes of text in format fmt (IMPORT_AUTO: import_detect).  name
 * (may be NULL) chooses the upstream, backend, pool or cluster.  On success
 * *out is a new result (import_free).  On refusal RINGSIM_EPARAM (the API's
 * `invalid_import`), err->msg what the real program (or a limit) says, and
 * *line (may be NULL) the 1-based line it is about, or 0 for the whole text;
 * RINGSIM_ENOMEM when out of memory.  *out is NULL on failure. */
int import_parse(const char *text, size_t len, import_format fmt, const char *name,
                 import_result **out, int *line, rs_error *err);
/* Accepts NULL. */
void import_free(import_result *r);

import_format import_result_format(const import_result *r);
/* The chosen section's name, or "" when the format has none. */
const char *import_result_name(const import_result *r);
/* The ringsim algorithm ("nginx", "haproxy", "ketama", "twemproxy",
 * "envoy-ring", "maglev", "cassandra", "redis"). */
const char *import_result_algorithm(const import_result *r);
/* The algorithm's parameters the text sets: a JSON object, borrowed. */
const json_t *import_result_params(const import_result *r);
size_t import_node_count(const import_result *r);
/* Node i (0 .. count-1) in the text's order; borrowed. */
const import_node *import_node_at(const import_result *r, size_t i);
size_t import_note_count(const import_result *r);
const import_note *import_note_at(const import_result *r, size_t i);

/* {"format", "name", "algorithm", "params", "nodes": [{"name", "weight",
 * "state", "line", ...}], "notes": [{"line", "message"}]}: the answer's
 * "import" object.  New reference, NULL when out of memory. */
json_t *import_result_json(const import_result *r);
/* The formats, in the table's order: [{"format", "title"}…] (GET
 * /api/config's "import_formats", the page's list).  New reference, NULL
 * when out of memory. */
json_t *import_formats_json(void);

#endif
