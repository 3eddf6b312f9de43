/*
 * import_int.h - what the import parsers share: the result's layout and
 * the helpers that fill it (import.c).  Only import*.c include this.
 *
 * A parser receives an import_ctx: the text (already checked against the
 * limits of import.h), the wanted section name, the result to fill, and the
 * place to put a refusal.  It returns 0, or the value of import__fail
 * (RINGSIM_EPARAM with the message and line filled) or RINGSIM_ENOMEM.
 */
#ifndef RINGSIM_IMPORT_INT_H
#define RINGSIM_IMPORT_INT_H

/* Private to its library: src/io/CMakeLists.txt defines RINGSIM_IO_INTERNAL for
 * its own files (and a white-box test may), so a higher floor that includes
 * this header does not compile (glib's __GLIB_H_INSIDE__). */
#ifndef RINGSIM_IO_INTERNAL
#error "import_int.h is the importers' own (src/io/): use import.h"
#endif

#include "import.h"
#include "slots.h"

typedef struct import_node_rec {
    import_node v; /* the public view; its pointers point into the fields below */
    char *name;
    char *address;
    int64_t *tokens;
    size_t captokens;
    import_slots *slots;
    size_t capslots;
    char **replicas;
    size_t capreplicas;
    char *dc, *rack;
} import_node_rec;

/* A set of keys -- byte strings (borrowed: they must outlive the set) or
 * 64-bit numbers -- each with the caller's tag: what the parsers look
 * names, ids and sections up in, in O(1) whatever the text holds.  The
 * hash is keyed afresh for every parse (import_ctx.key), so a text cannot
 * choose keys that collide and make it linear again. */
typedef struct import_key {
    const char *s; /* NULL for a number */
    size_t len;
    uint64_t num;
    size_t tag;
    uint32_t hash;
} import_key;

typedef struct import_set {
    import_key *v;
    size_t n, cap;
    slots t;
} import_set;

struct import_result {
    import_format format;
    char *name;
    char algorithm[32];
    json_t *params;
    import_node_rec *nodes;
    size_t n, cap;
    import_note *notes;
    size_t nnotes, capnotes, dropped_notes;
    size_t total_tokens;
    import_set names; /* the nodes by name (tag: index) */
};

typedef struct import_ctx {
    const char *text;
    size_t len;
    const char *want; /* the requested section name, or NULL */
    import_result *r;
    rs_error *err;
    int *line;
    uint64_t key[2]; /* the hash key of this parse (random) */
} import_ctx;

/* A line of the text: [s, s + len) without its '\n' (nor a '\r' before it). */
typedef struct import_line {
    const char *s;
    size_t len;
    int no; /* 1-based */
} import_line;

/* The next line from *pos (advanced past it); false at the end. */
bool import__next_line(const char *text, size_t len, size_t *pos, import_line *out);

/* Refuse: fills err and *line, returns RINGSIM_EPARAM. */
int import__fail(import_ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note; 0 or RINGSIM_ENOMEM.  Past IMPORT_MAX_NOTES notes are counted only. */
int import__note(import_ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Set the chosen section's name (copied). */
int import__set_name(import_ctx *c, const char *name, size_t len);
/* Set a parameter: an integer or a string. */
int import__param_int(import_ctx *c, const char *key, int64_t v);
int import__param_str(import_ctx *c, const char *key, const char *v);

/* Add a node (name copied) with weight 1, state up; NULL on failure with
 * the refusal (a name that breaks ringsim's name rules, the node limit) or
 * ENOMEM in *rc.  Duplicate names are found at the end (import.c). */
import_node_rec *import__node(import_ctx *c, const char *name, size_t len, int line, int *rc);
/* Find a node by name (the first of that name; O(1)), or NULL. */
import_node_rec *import__find(import_ctx *c, const char *name, size_t len);
int import__set_address(import_ctx *c, import_node_rec *n, const char *addr, size_t len);
int import__token(import_ctx *c, import_node_rec *n, int64_t token, int line);
int import__slots(import_ctx *c, import_node_rec *n, uint16_t first, uint16_t last);
int import__replica(import_ctx *c, import_node_rec *n, const char *name, size_t len);
/* The node's datacenter or rack (which: "dc" or "rack"), replacing any:
 * the rules of a location's names, refused with the line otherwise. */
int import__where(import_ctx *c, import_node_rec *n, const char *which, const char *s, size_t len,
                  int line);

/* Add a key to set s: the string [str, str + len), or the number num when
 * str is NULL.  When an equal key is there already, 1 with its tag in
 * *found (the set unchanged); else 0 (added with tag), or RINGSIM_ENOMEM
 * (with err filled). */
int import__set_add(import_ctx *c, import_set *s, const char *str, size_t len, uint64_t num,
                    size_t tag, size_t *found);
/* Whether the key is in s: true with its tag in *found. */
bool import__set_find(const import_ctx *c, const import_set *s, const char *str, size_t len,
                      uint64_t num, size_t *found);
/* Empty s, keeping its memory. */
void import__set_clear(import_set *s);
/* Accepts an empty set; s is left empty. */
void import__set_free(import_set *s);

/* Choose one section among names[0..n) (found at lines[]), by c->want:
 * *pick receives its index.  Refused when want names none of them (with the
 * list), when several exist and want is NULL (with the list), or when there
 * is none (message `none`).  what: "upstream", "backend", "pool"... */
int import__choose(import_ctx *c, const char *what, const char *const *names, const int *lines,
                   size_t n, const char *none, size_t *pick);

/* Whole decimal numbers: 0 with *out set, -1 when s is not one (or out of
 * [min, max]). */
int import__int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);

/* The parsers (import_<format>.c). */
int import__nginx(import_ctx *c);
int import__haproxy(import_ctx *c);
int import__libmemcached(import_ctx *c);
int import__twemproxy(import_ctx *c);
int import__envoy(import_ctx *c);
int import__nodetool(import_ctx *c);
int import__redis(import_ctx *c);

#endif
