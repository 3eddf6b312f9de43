/*
 * import.c - the import interface: the format table, recognition, the
 * limits every text is held to, and the result the parsers fill.
 *
 * The limits come first and apply to every format alike: size, line
 * length, NUL bytes and UTF-8 are checked in one pass before a parser
 * runs, so each parser can trust its bytes.  After the parser, one sort of
 * the node names finds duplicates (ringsim holds a node once; the real
 * programs either refuse them or let the first copy win).
 *
 * Every parser stays linear in its text (issue 26: a 16 MiB paste within
 * the limits is read in well under a second): whatever a parser looks up
 * by name -- a node, a section, an id, a master -- it finds in an
 * import_set, an open-addressing table (slots.h) hashed with SipHash-1-3
 * under a key drawn for each parse, so that no text can pick names whose
 * hashes collide.
 */
#define _GNU_SOURCE
#include "import.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "import_int.h"
#include "names.h"
#include "vec.h"

/* A format is one entry: its wire name, its title for people (the page's
 * list), its bid for a text and its parser.  A bid (libarchive's
 * archive_read_format_*_bid) looks at the first 64 KiB and answers how
 * surely the text is of its format: 0 not at all, higher more surely; the
 * highest bid wins, so a format's own signature (a CLUSTER NODES node id,
 * nodetool's "Datacenter:") outbids the shapes several texts share. */
typedef struct import_format_def {
    const char *name;
    const char *title;
    int (*bid)(const char *text, size_t n);
    int (*parse)(import_ctx *c);
} import_format_def;

static int bid_nginx(const char *t, size_t n);
static int bid_haproxy(const char *t, size_t n);
static int bid_libmemcached(const char *t, size_t n);
static int bid_twemproxy(const char *t, size_t n);
static int bid_envoy(const char *t, size_t n);
static int bid_nodetool(const char *t, size_t n);
static int bid_redis(const char *t, size_t n);

static const import_format_def formats[IMPORT_FORMAT_COUNT] = {
    [IMPORT_NGINX] = {"nginx", "nginx (upstream with hash … consistent)", bid_nginx, import__nginx},
    [IMPORT_HAPROXY] = {"haproxy", "HAProxy (backend with hash-type consistent)", bid_haproxy,
                        import__haproxy},
    [IMPORT_LIBMEMCACHED] = {"libmemcached", "libmemcached (server list or --SERVER= string)",
                             bid_libmemcached, import__libmemcached},
    [IMPORT_TWEMPROXY] = {"twemproxy", "twemproxy (nutcracker YAML pool)", bid_twemproxy,
                          import__twemproxy},
    [IMPORT_ENVOY] = {"envoy", "Envoy (cluster with RING_HASH or MAGLEV)", bid_envoy, import__envoy},
    [IMPORT_NODETOOL] = {"nodetool-ring", "Cassandra (nodetool ring)", bid_nodetool, import__nodetool},
    [IMPORT_REDIS] = {"redis-nodes", "Redis Cluster (CLUSTER NODES)", bid_redis, import__redis},
};

/* "nginx, haproxy, ... or redis-nodes" into buf (for messages). */
static const char *format_list(char *buf, size_t size, const char *last_word)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int f = 0; f < IMPORT_FORMAT_COUNT; f++) {
        int w = snprintf(buf + o, size - o, "%s%s",
                         f == 0                         ? ""
                         : f == IMPORT_FORMAT_COUNT - 1 ? last_word
                                                        : ", ",
                         formats[f].name);
        if (w < 0 || (size_t)w >= size - o)
            break;
        o += (size_t)w;
    }
    return buf;
}

json_t *import_formats_json(void)
{
    json_t *a = json_array();
    for (int f = 0; a && f < IMPORT_FORMAT_COUNT; f++)
        if (json_array_append_new(
                a, json_pack("{s:s, s:s}", "format", formats[f].name, "title", formats[f].title))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

const char *import_format_name(import_format f)
{
    if (f < 0 || f >= IMPORT_FORMAT_COUNT)
        return "auto";
    return formats[f].name;
}

int import_format_parse(const char *name, import_format *out, rs_error *err)
{
    if (name == NULL || strcmp(name, "auto") == 0) {
        *out = IMPORT_AUTO;
        return 0;
    }
    for (int f = 0; f < IMPORT_FORMAT_COUNT; f++) {
        if (strcmp(name, formats[f].name) == 0) {
            *out = (import_format)f;
            return 0;
        }
    }
    char list[256];
    return rs_fail(err, RINGSIM_EPARAM, "unknown import format \"%.40s\": auto, %s", name,
                   format_list(list, sizeof list, " or "));
}

/* ---- keyed sets ---- */

/* SipHash-1-3 (Aumasson and Bernstein; the variant Rust's HashMap and
 * Python use) of n bytes under key k, then the number num: a keyed hash
 * whose collisions a text cannot choose without the key. */
#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL64(v1, 13);                                                                       \
        v1 ^= v0;                                                                                  \
        v0 = ROTL64(v0, 32);                                                                       \
        v2 += v3;                                                                                  \
        v3 = ROTL64(v3, 16);                                                                       \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL64(v3, 21);                                                                       \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL64(v1, 17);                                                                       \
        v1 ^= v2;                                                                                  \
        v2 = ROTL64(v2, 32);                                                                       \
    } while (0)

static uint32_t siphash13(const uint64_t k[2], const char *p, size_t n, uint64_t num)
{
    uint64_t v0 = k[0] ^ 0x736f6d6570736575ull, v1 = k[1] ^ 0x646f72616e646f6dull;
    uint64_t v2 = k[0] ^ 0x6c7967656e657261ull, v3 = k[1] ^ 0x7465646279746573ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t m = 0;
        for (int b = 0; b < 8; b++)
            m |= (uint64_t)(unsigned char)p[i + (size_t)b] << (8 * b);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t last = (uint64_t)(n & 0xff) << 56;
    for (int b = 0; i + (size_t)b < n; b++)
        last |= (uint64_t)(unsigned char)p[i + (size_t)b] << (8 * b);
    v3 ^= last;
    SIPROUND;
    v0 ^= last;
    v3 ^= num;
    SIPROUND;
    v0 ^= num;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    uint64_t h = v0 ^ v1 ^ v2 ^ v3;
    return (uint32_t)(h ^ (h >> 32));
}

static bool key_is(const import_key *e, const char *str, size_t len, uint64_t num)
{
    if (str == NULL)
        return e->s == NULL && e->num == num;
    return e->s != NULL && e->len == len && memcmp(e->s, str, len) == 0;
}

bool import__set_find(const import_ctx *c, const import_set *s, const char *str, size_t len,
                      uint64_t num, size_t *found)
{
    if (s->t.nslot == 0)
        return false;
    uint32_t h = siphash13(c->key, str, str ? len : 0, num);
    for (size_t j = h & (s->t.nslot - 1); s->t.slot[j]; j = (j + 1) & (s->t.nslot - 1)) {
        const import_key *e = &s->v[s->t.slot[j] - 1];
        if (e->hash == h && key_is(e, str, len, num)) {
            *found = e->tag;
            return true;
        }
    }
    return false;
}

int import__set_add(import_ctx *c, import_set *s, const char *str, size_t len, uint64_t num,
                    size_t tag, size_t *found)
{
    if (import__set_find(c, s, str, len, num, found))
        return 1;
    if (vec_reserve(&s->v, &s->cap, s->n + 1, sizeof *s->v, 16) ||
        slots_reserve(&s->t, s->n, 32, s->v, sizeof *s->v, offsetof(import_key, hash)))
        return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
    uint32_t h = siphash13(c->key, str, str ? len : 0, num);
    s->v[s->n] = (import_key){str, str ? len : 0, str ? 0 : num, tag, h};
    slots_put(&s->t, h, s->n);
    s->n++;
    return 0;
}

void import__set_clear(import_set *s)
{
    s->n = 0;
    slots_clear(&s->t);
}

void import__set_free(import_set *s)
{
    free(s->v);
    slots_free(&s->t);
    *s = (import_set){0};
}

/* A fresh key for a parse: the kernel's random bytes, or (should
 * getrandom fail) the clock and an address, which a text cannot know
 * either. */
static void new_key(uint64_t k[2])
{
    if (getrandom(k, 2 * sizeof *k, GRND_NONBLOCK) == (ssize_t)(2 * sizeof *k))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    k[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec;
    k[1] = (uint64_t)(uintptr_t)k * 0xbf58476d1ce4e5b9ull ^ k[0];
}

/* ---- lines ---- */

bool import__next_line(const char *text, size_t len, size_t *pos, import_line *out)
{
    if (*pos >= len)
        return false;
    const char *s = text + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t l = nl ? (size_t)(nl - s) : len - *pos;
    *pos += l + (nl ? 1 : 0);
    out->s = s;
    out->len = l > 0 && s[l - 1] == '\r' ? l - 1 : l;
    out->no++;
    return true;
}

/* ---- recognition ---- */

static bool has_line_prefix(const char *t, size_t len, const char *word)
{
    size_t wl = strlen(word);
    size_t pos = 0;
    import_line l = {0};
    while (import__next_line(t, len, &pos, &l)) {
        size_t i = 0;
        while (i < l.len && (l.s[i] == ' ' || l.s[i] == '\t'))
            i++;
        if (l.len - i >= wl && memcmp(l.s + i, word, wl) == 0 &&
            (l.len - i == wl || strchr(" \t{:", l.s[i + wl]) != NULL || word[wl - 1] == ' '))
            return true;
    }
    return false;
}

static bool contains(const char *t, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++)
        if (t[i] == word[0] && memcmp(t + i, word, wl) == 0)
            return true;
    return false;
}

static bool redis_like(const char *t, size_t len)
{
    /* A CLUSTER NODES line starts with a 40-hex-digit node id and a space. */
    size_t i = 0;
    while (i < len && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t'))
        i++;
    size_t h = 0;
    while (i + h < len && h < 41 && strchr("0123456789abcdef", t[i + h]) && t[i + h])
        h++;
    return h == 40 && i + h < len && t[i + h] == ' ';
}

/* The bids, from the surest signature to the loosest shape. */
static int bid_redis(const char *t, size_t n) { return redis_like(t, n) ? 90 : 0; }

static int bid_nodetool(const char *t, size_t n)
{
    return contains(t, n, "Datacenter:") ||
                   (contains(t, n, "Address") && contains(t, n, "Token") && contains(t, n, "Status"))
               ? 80
               : 0;
}

static int bid_envoy(const char *t, size_t n)
{
    return contains(t, n, "lb_policy") || contains(t, n, "load_assignment") ? 70 : 0;
}

static int bid_twemproxy(const char *t, size_t n)
{
    return contains(t, n, "distribution:") ||
                   (contains(t, n, "servers:") && contains(t, n, "listen:"))
               ? 60
               : 0;
}

static int bid_nginx(const char *t, size_t n) { return has_line_prefix(t, n, "upstream") ? 50 : 0; }

static int bid_haproxy(const char *t, size_t n)
{
    return has_line_prefix(t, n, "backend") || has_line_prefix(t, n, "listen") ||
                   has_line_prefix(t, n, "defaults")
               ? 40
               : 0;
}

/* Its own options are sure; a list of lines without { or ; is the loosest
 * shape of all. */
static int bid_libmemcached(const char *t, size_t n)
{
    if (contains(t, n, "--SERVER") || contains(t, n, "--SOCKET"))
        return 30;
    return n > 0 && !contains(t, n, "{") && !contains(t, n, ";") ? 10 : 0;
}

int import_detect(const char *text, size_t len, import_format *out, rs_error *err)
{
    size_t n = len < 65536 ? len : 65536;
    int best = 0;
    for (int f = 0; f < IMPORT_FORMAT_COUNT; f++) {
        int b = formats[f].bid(text, n);
        if (b > best) {
            best = b;
            *out = (import_format)f;
        }
    }
    if (best > 0)
        return 0;
    char list[256];
    return rs_fail(err, RINGSIM_EPARAM,
                   "the text is none of the formats ringsim recognises; name it with format "
                   "(%s)",
                   format_list(list, sizeof list, ", "));
}

/* ---- limits ---- */

static int check_text(import_ctx *c)
{
    if (c->len > IMPORT_MAX_TEXT)
        return import__fail(c, 0, "the text is %zu bytes; ringsim imports at most %u (16 MiB)",
                            c->len, IMPORT_MAX_TEXT);
    size_t pos = 0;
    import_line l = {0};
    while (import__next_line(c->text, c->len, &pos, &l)) {
        if (l.len > IMPORT_MAX_LINE)
            return import__fail(c, l.no,
                                "line %d is %zu bytes long; ringsim reads lines of "
                                "at most %u bytes (1 MiB)",
                                l.no, l.len, IMPORT_MAX_LINE);
        if (memchr(l.s, '\0', l.len) != NULL)
            return import__fail(c, l.no, "line %d holds a NUL byte; a configuration is text", l.no);
        if (!utf8_valid(l.s, l.len))
            return import__fail(c, l.no, "line %d is not valid UTF-8", l.no);
    }
    return 0;
}

/* ---- the result ---- */

static import_result *result_new(void)
{
    import_result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->params = json_object();
    r->name = strdup("");
    if (r->params == NULL || r->name == NULL) {
        import_free(r);
        return NULL;
    }
    return r;
}

void import_free(import_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++) {
        import_node_rec *n = &r->nodes[i];
        free(n->name);
        free(n->address);
        free(n->tokens);
        free(n->slots);
        for (size_t j = 0; j < n->v.nreplicas; j++)
            free(n->replicas[j]);
        free(n->replicas);
        free(n->dc);
        free(n->rack);
    }
    free(r->nodes);
    import__set_free(&r->names);
    for (size_t i = 0; i < r->nnotes; i++)
        free((char *)r->notes[i].message);
    free(r->notes);
    json_decref(r->params);
    free(r->name);
    free(r);
}

int import__fail(import_ctx *c, int line, const char *fmt, ...)
{
    if (c->err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
        va_end(ap);
        c->err->code = RINGSIM_EPARAM;
    }
    if (c->line != NULL) {
        /* libyaml counts CR, NEL, LS and PS as line breaks too: a line is
         * never past the text's last '\n'-line. */
        int last = 1;
        for (size_t i = 0; i < c->len && line > last; i++)
            last += c->text[i] == '\n';
        *c->line = line < 0 ? 0 : line > last ? last : line;
    }
    return RINGSIM_EPARAM;
}

static int nomem(import_ctx *c)
{
    if (c->line != NULL)
        *c->line = 0;
    return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
}

int import__note(import_ctx *c, int line, const char *fmt, ...)
{
    import_result *r = c->r;
    if (r->nnotes >= IMPORT_MAX_NOTES) {
        r->dropped_notes++;
        return 0;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (vec_reserve(&r->notes, &r->capnotes, r->nnotes + 1, sizeof *r->notes, 8))
        return nomem(c);
    char *m = strdup(buf);
    if (m == NULL)
        return nomem(c);
    r->notes[r->nnotes++] = (import_note){line, m};
    return 0;
}

int import__set_name(import_ctx *c, const char *name, size_t len)
{
    char *s = strndup(name, len);
    if (s == NULL)
        return nomem(c);
    free(c->r->name);
    c->r->name = s;
    return 0;
}

int import__param_int(import_ctx *c, const char *key, int64_t v)
{
    if (json_object_set_new(c->r->params, key, json_integer(v)) != 0)
        return nomem(c);
    return 0;
}

int import__param_str(import_ctx *c, const char *key, const char *v)
{
    if (json_object_set_new(c->r->params, key, json_string(v)) != 0)
        return nomem(c);
    return 0;
}

import_node_rec *import__node(import_ctx *c, const char *name, size_t len, int line, int *rc)
{
    import_result *r = c->r;
    rs_error nerr = {0};
    if (name_check(name, len, "node name", &nerr) != 0) {
        *rc = import__fail(c, line, "server \"%.*s\": %s", (int)(len < 80 ? len : 80), name,
                           nerr.msg);
        return NULL;
    }
    if (r->n >= IMPORT_MAX_NODES) {
        *rc = import__fail(c, line, "more than %u servers; ringsim imports at most %u",
                           IMPORT_MAX_NODES, IMPORT_MAX_NODES);
        return NULL;
    }
    if (vec_reserve(&r->nodes, &r->cap, r->n + 1, sizeof *r->nodes, 8)) {
        *rc = nomem(c);
        return NULL;
    }
    import_node_rec *n = &r->nodes[r->n];
    memset(n, 0, sizeof *n);
    n->name = strndup(name, len);
    if (n->name == NULL) {
        *rc = nomem(c);
        return NULL;
    }
    /* Indexed by name (the first of a name stays the one found);
     * duplicates are refused after the parser, with both lines. */
    size_t first;
    int added = import__set_add(c, &r->names, n->name, len, 0, r->n, &first);
    if (added < 0) {
        free(n->name);
        *rc = nomem(c);
        return NULL;
    }
    n->v.len = len;
    n->v.weight = 1;
    n->v.line = line;
    r->n++;
    *rc = 0;
    return n;
}

import_node_rec *import__find(import_ctx *c, const char *name, size_t len)
{
    size_t i;
    return import__set_find(c, &c->r->names, name, len, 0, &i) ? &c->r->nodes[i] : NULL;
}

int import__set_address(import_ctx *c, import_node_rec *n, const char *addr, size_t len)
{
    char *s = strndup(addr, len);
    if (s == NULL)
        return nomem(c);
    free(n->address);
    n->address = s;
    return 0;
}

int import__token(import_ctx *c, import_node_rec *n, int64_t token, int line)
{
    if (c->r->total_tokens >= IMPORT_MAX_TOKENS)
        return import__fail(c, line, "more than %u tokens; ringsim imports at most %u",
                            IMPORT_MAX_TOKENS, IMPORT_MAX_TOKENS);
    if (vec_reserve(&n->tokens, &n->captokens, n->v.ntokens + 1, sizeof *n->tokens, 8))
        return nomem(c);
    n->tokens[n->v.ntokens++] = token;
    c->r->total_tokens++;
    return 0;
}

int import__slots(import_ctx *c, import_node_rec *n, uint16_t first, uint16_t last)
{
    if (vec_reserve(&n->slots, &n->capslots, n->v.nslots + 1, sizeof *n->slots, 8))
        return nomem(c);
    n->slots[n->v.nslots++] = (import_slots){first, last};
    return 0;
}

int import__replica(import_ctx *c, import_node_rec *n, const char *name, size_t len)
{
    if (vec_reserve(&n->replicas, &n->capreplicas, n->v.nreplicas + 1, sizeof *n->replicas, 8))
        return nomem(c);
    char *s = strndup(name, len);
    if (s == NULL)
        return nomem(c);
    n->replicas[n->v.nreplicas++] = s;
    return 0;
}

int import__where(import_ctx *c, import_node_rec *n, const char *which, const char *s, size_t len,
                  int line)
{
    rs_error e = {0};
    char what[16];
    snprintf(what, sizeof what, "%s name", which);
    if (name_check(s, len, what, &e) != 0 || memchr(s, '=', len) || memchr(s, ',', len))
        return import__fail(c, line, "%s \"%.*s\" %s", which, (int)(len < 80 ? len : 80), s,
                            e.msg[0] ? e.msg : "holds \"=\" or \",\", which a location cannot");
    char *v = strndup(s, len);
    if (!v)
        return nomem(c);
    char **slot = !strcmp(which, "dc") ? &n->dc : &n->rack;
    free(*slot);
    *slot = v;
    return 0;
}

/* The list "a, b, c" of names into buf (bounded, "…" when cut). */
static void name_list(char *buf, size_t cap, const char *const *names, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, cap - used, "%s\"%s\"", i ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= cap - used) {
            if (cap > 8)
                snprintf(buf + (used < cap - 8 ? used : cap - 8), 8, ", ...");
            return;
        }
        used += (size_t)w;
    }
}

int import__choose(import_ctx *c, const char *what, const char *const *names, const int *lines,
                   size_t n, const char *none, size_t *pick)
{
    char list[200];
    if (n == 0)
        return import__fail(c, 0, "%s", none);
    name_list(list, sizeof list, names, n);
    if (c->want != NULL) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(names[i], c->want) == 0) {
                *pick = i;
                return 0;
            }
        }
        return import__fail(c, 0, "no %s \"%.60s\" in the text; it has %s", what, c->want, list);
    }
    if (n > 1)
        return import__fail(c, lines[1], "the text has %zu %ss (%s): choose one with name", n, what,
                            list);
    *pick = 0;
    return 0;
}

int import__int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    if (len == 0 || len > 20)
        return -1;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i = 1;
        if (len == 1)
            return -1;
    }
    /* Accumulate negatively so that INT64_MIN fits. */
    int64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        int d = s[i] - '0';
        if (v < (INT64_MIN + d) / 10)
            return -1;
        v = v * 10 - d;
    }
    if (!neg) {
        if (v == INT64_MIN)
            return -1;
        v = -v;
    }
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* ---- after the parser ---- */

static int cmp_name(const void *a, const void *b)
{
    const import_node_rec *x = *(import_node_rec *const *)a, *y = *(import_node_rec *const *)b;
    size_t m = x->v.len < y->v.len ? x->v.len : y->v.len;
    int d = memcmp(x->name, y->name, m);
    if (d != 0)
        return d;
    if (x->v.len != y->v.len)
        return x->v.len < y->v.len ? -1 : 1;
    return x->v.line - y->v.line;
}

static int check_duplicates(import_ctx *c)
{
    import_result *r = c->r;
    if (r->n < 2)
        return 0;
    import_node_rec **v = malloc(r->n * sizeof *v);
    if (v == NULL)
        return nomem(c);
    for (size_t i = 0; i < r->n; i++)
        v[i] = &r->nodes[i];
    qsort(v, r->n, sizeof *v, cmp_name);
    int rc = 0;
    for (size_t i = 1; i < r->n && rc == 0; i++)
        if (v[i - 1]->v.len == v[i]->v.len && memcmp(v[i - 1]->name, v[i]->name, v[i]->v.len) == 0)
            rc = import__fail(c, v[i]->v.line,
                              "server \"%.80s\" appears twice (lines %d and %d); ringsim "
                              "holds a node once",
                              v[i]->name, v[i - 1]->v.line, v[i]->v.line);
    free(v);
    return rc;
}

/* Point the public views at the records' storage (final addresses). */
static void finish_views(import_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        import_node_rec *n = &r->nodes[i];
        n->v.name = n->name;
        n->v.address = n->address;
        n->v.tokens = n->tokens;
        n->v.slots = n->slots;
        n->v.replicas = (const char *const *)n->replicas;
        n->v.dc = n->dc;
        n->v.rack = n->rack;
    }
}

int import_parse(const char *text, size_t len, import_format fmt, const char *name,
                 import_result **out, int *line, rs_error *err)
{
    *out = NULL;
    if (line != NULL)
        *line = 0;
    import_ctx c = {text, len, name, NULL, err, line, {0, 0}};
    new_key(c.key);
    int rc = check_text(&c);
    if (rc != 0)
        return rc;
    if (fmt == IMPORT_AUTO) {
        rc = import_detect(text, len, &fmt, err);
        if (rc != 0)
            return rc;
    }
    if (fmt < 0 || fmt >= IMPORT_FORMAT_COUNT)
        return rs_fail(err, RINGSIM_EPARAM, "unknown import format");
    c.r = result_new();
    if (c.r == NULL)
        return nomem(&c);
    c.r->format = fmt;
    rc = formats[fmt].parse(&c);
    if (rc == 0 && c.r->n == 0)
        rc = import__fail(&c, 0, "the %s text declares no server", formats[fmt].name);
    if (rc == 0)
        rc = check_duplicates(&c);
    if (rc == 0 && c.r->dropped_notes > 0) {
        size_t d = c.r->dropped_notes;
        c.r->dropped_notes = 0;
        c.r->nnotes--; /* make room for the count, in place of the last note */
        free((char *)c.r->notes[c.r->nnotes].message);
        rc = import__note(&c, 0, "%zu more notes not shown", d + 1);
    }
    if (rc != 0) {
        import_free(c.r);
        return rc;
    }
    finish_views(c.r);
    *out = c.r;
    return 0;
}

/* ---- reading the result ---- */

import_format import_result_format(const import_result *r) { return r->format; }
const char *import_result_name(const import_result *r) { return r->name; }
const char *import_result_algorithm(const import_result *r) { return r->algorithm; }
const json_t *import_result_params(const import_result *r) { return r->params; }
size_t import_node_count(const import_result *r) { return r->n; }
const import_node *import_node_at(const import_result *r, size_t i) { return &r->nodes[i].v; }
size_t import_note_count(const import_result *r) { return r->nnotes; }
const import_note *import_note_at(const import_result *r, size_t i) { return &r->notes[i]; }

static json_t *node_json(const import_node *n)
{
    json_t *o = json_pack("{s:s%, s:f, s:s, s:i}", "name", n->name, n->len, "weight", n->weight,
                          "state", n->down ? "down" : "up", "line", n->line);
    if (o == NULL)
        return NULL;
    int bad = 0;
    if (n->address != NULL)
        bad |= json_object_set_new(o, "address", json_string(n->address));
    if (n->id != 0)
        bad |= json_object_set_new(o, "id", json_integer(n->id));
    if (n->backup)
        bad |= json_object_set_new(o, "backup", json_true());
    if (n->ntokens > 0) {
        json_t *t = json_array();
        char b[24];
        for (size_t i = 0; t != NULL && i < n->ntokens; i++) {
            snprintf(b, sizeof b, "%lld", (long long)n->tokens[i]);
            bad |= json_array_append_new(t, json_string(b));
        }
        bad |= json_object_set_new(o, "tokens", t);
    }
    if (n->nslots > 0) {
        json_t *s = json_array();
        for (size_t i = 0; s != NULL && i < n->nslots; i++)
            bad |= json_array_append_new(s, json_pack("[i,i]", n->slots[i].first, n->slots[i].last));
        bad |= json_object_set_new(o, "slots", s);
    }
    if (n->dc || n->rack) { /* Cassandra's: the node's location */
        json_t *l = json_array();
        if (l && n->dc)
            bad |= json_array_append_new(l, json_pack("[s,s]", "dc", n->dc));
        if (l && n->rack)
            bad |= json_array_append_new(l, json_pack("[s,s]", "rack", n->rack));
        bad |= l ? json_object_set_new(o, "location", l) : 1;
    }
    if (n->nreplicas > 0 || n->nslots > 0) {
        json_t *s = json_array();
        for (size_t i = 0; s != NULL && i < n->nreplicas; i++)
            bad |= json_array_append_new(s, json_string(n->replicas[i]));
        bad |= json_object_set_new(o, "replicas", s);
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *import_result_json(const import_result *r)
{
    json_t *nodes = json_array(), *notes = json_array();
    int bad = nodes == NULL || notes == NULL;
    for (size_t i = 0; !bad && i < r->n; i++)
        bad |= json_array_append_new(nodes, node_json(&r->nodes[i].v));
    for (size_t i = 0; !bad && i < r->nnotes; i++)
        bad |= json_array_append_new(
            notes, json_pack("{s:o, s:s}", "line",
                             r->notes[i].line > 0 ? json_integer(r->notes[i].line) : json_null(),
                             "message", r->notes[i].message));
    if (bad) {
        json_decref(nodes);
        json_decref(notes);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:O, s:o, s:o}", "format", import_format_name(r->format),
                     "name", r->name, "algorithm", r->algorithm, "params", r->params, "nodes",
                     nodes, "notes", notes);
}
