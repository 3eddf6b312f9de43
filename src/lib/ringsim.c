/*
 * ringsim.c - libringsim: the placement layer as a library for other
 * programs (include/ringsim/ringsim.h; the manual is docs/ringsim.3).
 *
 * A ringsim_placement gathers what the engine keeps of a simulation's
 * topology -- a place_config and the nodes with their fields (weight,
 * tokens, HAProxy's id, state, backup, a Redis master's replicas and
 * slots) -- and builds one placement (place.h) over them with place_build,
 * as the engine does when `ringsim config --algorithm` switches to an
 * algorithm: no previous placement, the layout state the system starts
 * with, or the slot map the nodes' slots give (as an import of CLUSTER
 * NODES does).  Every answer is then place_key (and place_prefs) on that
 * placement, read exactly as the engine reads it for `ringsim lookup`
 * (sim_lookup): the owner, who serves with the states applied (a Redis
 * replica by its address), the preference list.  Nothing here touches
 * SQLite, HTTP or files.
 *
 * Threads.  A built placement never changes, and place_key only reads it,
 * with one exception: the hasher it takes (hash.h: one OpenSSL digest
 * context, scratch space that a call overwrites).  So the placement holds
 * a pool of POOL hashers, each behind an atomic flag on a cache line of
 * its own; a lookup takes a free one (starting from a slot its thread's
 * stack address picks, so that threads seldom meet) and gives it back, or
 * makes one of its own when all are taken.  No call ever shares scratch,
 * and nothing else is written after build.
 *
 * Nodes are found by name through an open-addressing index (FNV-1a), so
 * adding n nodes costs O(n), not O(n^2).
 *
 * Costs: build is place_build's (the algorithm's layout); a lookup is the
 * key's name check (one pass over its bytes), two atomic operations on an
 * uncontended line, and place_key (one SHA-256, the algorithm's own hash,
 * O(log points)); ringsim_replicas adds place_prefs (a short walk).
 */
#define _GNU_SOURCE /* strnlen, strndup */
#include "place.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "names.h"
#include "vec.h"

/* After place.h (error.h): the header's codes are the engine's own. */
#include <ringsim/ringsim.h>

_Static_assert(RINGSIM_MAX_REPLICAS == PLACE_MAX_REPLICAS, "one bound for replicas");

/* Hashers kept for concurrent lookups; a call beyond them makes its own. */
#define POOL 16
/* The layout points a placement may hold, as the engine allows a change
 * (SIM_MAX_LAYOUT_POINTS, sim.h: about 128 MB and seconds to build). */
#define LIB_MAX_LAYOUT_POINTS 4000000u
/* Nodes in one placement (the node index is 32-bit). */
#define LIB_MAX_NODES 1000000u
/* The longest field value read (a Cassandra node's 100,000 tokens fit). */
#define LIB_MAX_VALUE (4u << 20)
/* A Redis master's replicas, and the location's levels (API.md v4). */
#define LIB_MAX_NODE_REPLICAS 1024u
/* A node's weight, as the engine takes it (SIM_MAX_WEIGHT, sim.h). */
#define LIB_MAX_WEIGHT 1000.0

typedef struct lib_node {
    char *name; /* NUL-terminated copy */
    size_t len;
    double weight;
    int64_t *tokens; /* Cassandra's initial_token */
    size_t ntokens;
    int64_t srv_id; /* HAProxy's server id, 0: assigned */
    bool down;
    bool backup;
    char **replicas; /* a Redis master's replicas, "ip:port" */
    size_t nreplicas;
    uint32_t *slots; /* a Redis master's slot ranges, first and last, pairwise */
    size_t nslots;
    char *location;               /* "type=name,..." split in place by place_loc_parse */
    place_loc loc[PLACE_MAX_LOC]; /* into location */
    size_t nloc;
} lib_node;

/* One hasher on a cache line of its own. */
typedef struct scratch {
    _Alignas(64) atomic_bool busy;
    hasher *h;
} scratch;

struct ringsim_placement {
    place_config cfg;
    lib_node *nodes;
    size_t n, cap;
    uint32_t *index; /* node index + 1 by name hash, 0 free; index_cap a power of 2 */
    size_t index_cap;
    place_node *pn; /* what pl borrows */
    placement *pl;  /* NULL until built */
    scratch *pool;  /* POOL hashers, made with the placement */
};

/* ---- nodes by name ---- */

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static long find_node(const ringsim_placement *p, const char *name, size_t len)
{
    if (!p->index_cap)
        return -1;
    size_t mask = p->index_cap - 1;
    for (size_t i = (size_t)name_hash(name, len) & mask;; i = (i + 1) & mask) {
        uint32_t v = p->index[i];
        if (!v)
            return -1;
        const lib_node *x = &p->nodes[v - 1];
        if (x->len == len && !memcmp(x->name, name, len))
            return (long)(v - 1);
    }
}

static void index_put(uint32_t *index, size_t cap, const lib_node *x, uint32_t at)
{
    size_t mask = cap - 1;
    size_t i = (size_t)name_hash(x->name, x->len) & mask;
    while (index[i])
        i = (i + 1) & mask;
    index[i] = at + 1;
}

/* Room in the index for node count n (load at most one half). */
static int index_grow(ringsim_placement *p, size_t n)
{
    if (2 * n <= p->index_cap)
        return 0;
    size_t cap = p->index_cap ? 2 * p->index_cap : 64;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < p->n; i++)
        index_put(index, cap, &p->nodes[i], (uint32_t)i);
    free(p->index);
    p->index = index;
    p->index_cap = cap;
    return 0;
}

static void node_free(lib_node *x)
{
    free(x->name);
    free(x->tokens);
    for (size_t i = 0; i < x->nreplicas; i++)
        free(x->replicas[i]);
    free(x->replicas);
    free(x->slots);
    free(x->location);
}

/* ---- the hashers ---- */

static hasher *take(const ringsim_placement *p, size_t *slot)
{
    /* Where to start: the 8 MB band of this thread's stack (glibc's threads
     * get 8 MB each, side by side), so that threads start apart. */
    int here;
    size_t start = (size_t)((uintptr_t)&here >> 23) % POOL;
    for (size_t k = 0; k < POOL; k++) {
        scratch *s = &p->pool[(start + k) % POOL];
        if (!atomic_load_explicit(&s->busy, memory_order_relaxed) &&
            !atomic_exchange_explicit(&s->busy, true, memory_order_acquire)) {
            *slot = (start + k) % POOL;
            return s->h;
        }
    }
    *slot = POOL;
    return hasher_new(); /* every one is taken: a call of its own */
}

static void give(const ringsim_placement *p, size_t slot, hasher *h)
{
    if (slot < POOL)
        atomic_store_explicit(&p->pool[slot].busy, false, memory_order_release);
    else
        hasher_free(h);
}

/* ---- making ---- */

const char *ringsim_version(void) { return RINGSIM_LIB_VERSION; }

int ringsim_placement_new(ringsim_placement **out, const char *algorithm)
{
    int rc = RINGSIM_ENOMEM;
    if (!out)
        return RINGSIM_EPARAM;
    *out = NULL;
    if (!algorithm || strnlen(algorithm, sizeof(((place_config *)0)->algorithm)) >=
                          sizeof(((place_config *)0)->algorithm))
        return RINGSIM_EPARAM;
    ringsim_placement *p = calloc(1, sizeof *p);
    if (!p)
        return RINGSIM_ENOMEM;
    place_config_default(&p->cfg);
    strcpy(p->cfg.algorithm, algorithm);
    if (place_config_check(&p->cfg, NULL)) {
        rc = RINGSIM_EPARAM;
        goto fail_placement;
    }
    p->pool = aligned_alloc(_Alignof(scratch), POOL * sizeof *p->pool);
    if (!p->pool)
        goto fail_placement;
    memset(p->pool, 0, POOL * sizeof *p->pool);
    for (size_t i = 0; i < POOL; i++) {
        atomic_init(&p->pool[i].busy, false);
        if (!(p->pool[i].h = hasher_new())) {
            rc = RINGSIM_EINTERNAL; /* OpenSSL without SHA-256, or no memory */
            goto fail_placement;
        }
    }
    *out = p;
    return 0;
fail_placement:
    ringsim_placement_free(p);
    return rc;
}

void ringsim_placement_free(ringsim_placement *p)
{
    if (!p)
        return;
    place_free(p->pl);
    free(p->pn);
    for (size_t i = 0; i < p->n; i++)
        node_free(&p->nodes[i]);
    free(p->nodes);
    free(p->index);
    for (size_t i = 0; p->pool && i < POOL; i++)
        hasher_free(p->pool[i].h);
    free(p->pool);
    free(p);
}

/* Whether the algorithm takes the parameter, by the catalogue (what
 * `ringsim config --param` asks too). */
static int takes_param(const char *algorithm, const char *name)
{
    json_t *cat = place_algorithms_json(), *a, *q;
    size_t i, k;
    int rc = cat ? RINGSIM_EPARAM : RINGSIM_ENOMEM;
    json_array_foreach(cat, i, a)
    {
        if (strcmp(json_string_value(json_object_get(a, "name")), algorithm) != 0)
            continue;
        /* numbers, and the replication map and the location type
         * (map_params, text_params: API.md v4) */
        static const char *const kinds[] = {"params", "map_params", "text_params"};
        for (size_t t = 0; t < sizeof kinds / sizeof *kinds; t++)
            json_array_foreach(json_object_get(a, kinds[t]), k, q)
            {
                if (!strcmp(json_string_value(json_object_get(q, "name")), name))
                    rc = 0;
            }
    }
    json_decref(cat);
    return rc;
}

int ringsim_placement_set_param(ringsim_placement *p, const char *name, const char *value)
{
    if (!p || p->pl || !name || !value)
        return RINGSIM_EPARAM;
    size_t vlen = strnlen(value, 64);
    if (!strcmp(name, "replicas")) {
        uint64_t r;
        if (names_parse_u64(value, vlen, PLACE_MAX_REPLICAS, &r) || r < 1)
            return RINGSIM_EPARAM;
        p->cfg.replicas = (uint32_t)r;
        return 0;
    }
    int rc = takes_param(p->cfg.algorithm, name);
    if (rc)
        return rc;
    if (vlen >= 64)
        return RINGSIM_EPARAM;
    place_config c = p->cfg;
    if ((rc = place_config_set_param(&c, name, value, NULL)))
        return rc;
    p->cfg = c;
    return 0;
}

int ringsim_placement_add_node(ringsim_placement *p, const char *name, double weight)
{
    if (!p || p->pl || !name)
        return RINGSIM_EPARAM;
    size_t len = strnlen(name, NAME_MAX_BYTES + 1);
    int rc = node_name_check(name, len, NULL);
    if (rc)
        return rc;
    if (!isfinite(weight) || weight < 0 || weight > LIB_MAX_WEIGHT || p->n >= LIB_MAX_NODES)
        return RINGSIM_EPARAM;
    if (find_node(p, name, len) >= 0)
        return RINGSIM_ECONFLICT;
    if (vec_reserve(&p->nodes, &p->cap, p->n + 1, sizeof *p->nodes, 16) || index_grow(p, p->n + 1))
        return RINGSIM_ENOMEM;
    lib_node *x = &p->nodes[p->n];
    memset(x, 0, sizeof *x);
    if (!(x->name = strndup(name, len)))
        return RINGSIM_ENOMEM;
    x->len = len;
    x->weight = weight;
    index_put(p->index, p->index_cap, x, (uint32_t)p->n);
    p->n++;
    return 0;
}

/* ---- node fields, read as the command line reads them ---- */

/* The pieces of a comma-separated list: count, then each start and length
 * through next_piece.  An empty list has none. */
static size_t count_pieces(const char *v, size_t len)
{
    size_t n = len ? 1 : 0;
    for (size_t i = 0; i < len; i++)
        n += v[i] == ',';
    return n;
}

static const char *next_piece(const char **at, const char *end, size_t *len)
{
    const char *s = *at, *comma = memchr(s, ',', (size_t)(end - s));
    *len = comma ? (size_t)(comma - s) : (size_t)(end - s);
    *at = comma ? comma + 1 : end;
    return s;
}

/* "ip:port,...": each one by the name rules. */
static int parse_replicas(const char *v, size_t len, char ***out, size_t *n)
{
    size_t cnt = count_pieces(v, len);
    if (cnt > LIB_MAX_NODE_REPLICAS)
        return RINGSIM_EPARAM;
    char **r = calloc(cnt + 1, sizeof *r);
    if (!r)
        return RINGSIM_ENOMEM;
    const char *at = v, *end = v + len;
    int rc = 0;
    size_t k = 0;
    for (; k < cnt && !rc; k++) {
        size_t pl;
        const char *s = next_piece(&at, end, &pl);
        if (!(rc = name_check(s, pl, "replica", NULL)) && !(r[k] = strndup(s, pl)))
            rc = RINGSIM_ENOMEM;
    }
    if (rc) {
        for (size_t i = 0; i < k; i++)
            free(r[i]);
        free(r);
        return rc;
    }
    *out = r;
    *n = cnt;
    return 0;
}

/* "N-M,N,...": slot ranges of [0, slots), as CLUSTER NODES writes them. */
static int parse_slots(const char *v, size_t len, uint32_t slots, uint32_t **out, size_t *n)
{
    size_t cnt = count_pieces(v, len);
    if (cnt > slots)
        return RINGSIM_EPARAM;
    uint32_t *r = malloc((2 * cnt + 1) * sizeof *r);
    if (!r)
        return RINGSIM_ENOMEM;
    const char *at = v, *end = v + len;
    for (size_t k = 0; k < cnt; k++) {
        size_t pl;
        const char *s = next_piece(&at, end, &pl);
        const char *dash = memchr(s, '-', pl);
        uint64_t a, b;
        size_t al = dash ? (size_t)(dash - s) : pl;
        if (names_parse_u64(s, al, slots - 1, &a) ||
            (dash ? names_parse_u64(dash + 1, pl - al - 1, slots - 1, &b) : (b = a, 0)) || b < a) {
            free(r);
            return RINGSIM_EPARAM;
        }
        r[2 * k] = (uint32_t)a;
        r[2 * k + 1] = (uint32_t)b;
    }
    *out = r;
    *n = cnt;
    return 0;
}

int ringsim_placement_set_node(ringsim_placement *p, const char *name, const char *field,
                               const char *value)
{
    if (!p || p->pl || !name || !field || !value)
        return RINGSIM_EPARAM;
    long i = find_node(p, name, strnlen(name, NAME_MAX_BYTES + 1));
    if (i < 0)
        return RINGSIM_ENOTFOUND;
    lib_node *x = &p->nodes[i];
    size_t len = strnlen(value, LIB_MAX_VALUE + 1);
    if (len > LIB_MAX_VALUE)
        return RINGSIM_EPARAM;
    int rc = 0;
    if (!strcmp(field, "weight")) {
        double w;
        if (names_parse_decimal(value, &w) || w < 0 || w > LIB_MAX_WEIGHT)
            return RINGSIM_EPARAM;
        x->weight = w;
    } else if (!strcmp(field, "state")) {
        if (strcmp(value, "up") != 0 && strcmp(value, "down") != 0)
            return RINGSIM_EPARAM;
        x->down = !strcmp(value, "down");
    } else if (!strcmp(field, "backup")) {
        if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
            return RINGSIM_EPARAM;
        x->backup = !strcmp(value, "true");
    } else if (!strcmp(field, "id")) {
        uint64_t id;
        if (names_parse_u64(value, len, 2147483647, &id) || id < 1)
            return RINGSIM_EPARAM;
        x->srv_id = (int64_t)id;
    } else if (!strcmp(field, "tokens")) {
        int64_t *t = NULL;
        size_t n = 0;
        if ((rc = names_parse_tokens(value, len, PLACE_MAX_NODE_POINTS, &t, &n)))
            return rc;
        free(x->tokens);
        x->tokens = t;
        x->ntokens = n;
    } else if (!strcmp(field, "replicas")) {
        char **r = NULL;
        size_t n = 0;
        if ((rc = parse_replicas(value, len, &r, &n)))
            return rc;
        for (size_t k = 0; k < x->nreplicas; k++)
            free(x->replicas[k]);
        free(x->replicas);
        x->replicas = r;
        x->nreplicas = n;
    } else if (!strcmp(field, "slots")) {
        uint32_t slots = place_slot_count(p->cfg.algorithm), *r = NULL;
        size_t n = 0;
        if (!slots) /* the algorithm has no slot map */
            return RINGSIM_EPARAM;
        if ((rc = parse_slots(value, len, slots, &r, &n)))
            return rc;
        free(x->slots);
        x->slots = r;
        x->nslots = n;
    } else if (!strcmp(field, "location")) {
        /* the engine's rules (place_loc.c), split in a copy of its own */
        char *loc = strndup(value, len);
        place_loc v[PLACE_MAX_LOC];
        size_t n = 0;
        if (!loc)
            return RINGSIM_ENOMEM;
        if ((rc = place_loc_parse(loc, v, &n, NULL))) {
            free(loc);
            return rc;
        }
        free(x->location);
        x->location = loc;
        memcpy(x->loc, v, n * sizeof *v);
        x->nloc = n;
    } else {
        return RINGSIM_EPARAM;
    }
    return 0;
}

/* ---- building ---- */

/* The slot map the nodes' slots give, as the layout state's text (what an
 * import of CLUSTER NODES stores: sim_import.c), into *state; NULL when no
 * node has slots.  Every slot must have exactly one master. */
static int slot_state(const ringsim_placement *p, char **state)
{
    *state = NULL;
    uint32_t slots = place_slot_count(p->cfg.algorithm);
    bool any = false;
    for (size_t i = 0; i < p->n; i++)
        any |= p->nodes[i].nslots > 0;
    if (!slots || !any)
        return 0;
    uint32_t *owner = malloc(slots * sizeof *owner);
    if (!owner)
        return RINGSIM_ENOMEM;
    for (uint32_t s = 0; s < slots; s++)
        owner[s] = UINT32_MAX;
    int rc = 0;
    for (size_t i = 0; i < p->n && !rc; i++) {
        const lib_node *x = &p->nodes[i];
        for (size_t k = 0; k < x->nslots && !rc; k++)
            for (uint32_t s = x->slots[2 * k]; s <= x->slots[2 * k + 1] && !rc; s++) {
                if (owner[s] != UINT32_MAX && owner[s] != (uint32_t)i)
                    rc = RINGSIM_EPARAM; /* a slot held by two masters */
                owner[s] = (uint32_t)i;
            }
    }
    for (uint32_t s = 0; s < slots && !rc; s++)
        if (owner[s] == UINT32_MAX)
            rc = RINGSIM_EPARAM; /* a slot without a master */
    if (!rc && !(*state = place_slot_text(p->cfg.algorithm, owner)))
        rc = RINGSIM_ENOMEM;
    free(owner);
    return rc;
}

int ringsim_placement_build(ringsim_placement *p)
{
    if (!p || p->pl)
        return RINGSIM_EPARAM;
    char *state = NULL;
    place_node *pn = malloc((p->n + 1) * sizeof *pn);
    if (!pn)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < p->n; i++) {
        const lib_node *x = &p->nodes[i];
        pn[i] = (place_node){.id = (int64_t)i + 1,
                             .name = x->name,
                             .len = x->len,
                             .weight = x->weight,
                             .tokens = x->tokens,
                             .ntokens = x->ntokens,
                             .srv_id = x->srv_id,
                             .down = x->down,
                             .backup = x->backup,
                             .replicas = (const char *const *)x->replicas,
                             .nreplicas = x->nreplicas,
                             .loc = x->nloc ? x->loc : NULL,
                             .nloc = x->nloc};
    }
    int rc = place_config_check(&p->cfg, NULL);
    if (!rc)
        rc = place_nodes_check(&p->cfg, pn, p->n, NULL);
    if (!rc && place_layout_points(&p->cfg, pn, p->n) > LIB_MAX_LAYOUT_POINTS)
        rc = RINGSIM_EPARAM;
    if (!rc)
        rc = slot_state(p, &state);
    if (rc)
        goto fail_nodes;
    /* Build runs on one thread, before any lookup: the first hasher. */
    rc = place_build(&p->pl, p->pool[0].h, &p->cfg, pn, p->n, NULL, state, NULL);
    if (rc)
        goto fail_state;
    free(state);
    p->pn = pn;
    return 0;
fail_state:
    free(state);
fail_nodes:
    free(pn);
    p->pl = NULL;
    return rc == RINGSIM_EDB ? RINGSIM_EPARAM : rc; /* a slot map refused */
}

/* ---- keys ---- */

/* The key rules (names.h name_check): printable ASCII passes at once, in
 * one pass; anything else is name_check's to judge. */
static int key_check(const char *key, size_t len)
{
    if (len == 0 || len > NAME_MAX_BYTES)
        return RINGSIM_ENAME;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)key[i] < 0x20 || (unsigned char)key[i] > 0x7e)
            return name_check(key, len, "key", NULL);
    return 0;
}

static int place_of(const ringsim_placement *p, const char *key, size_t len, place_key_info *k)
{
    if (!p || !p->pl || (!key && len))
        return RINGSIM_EPARAM;
    int rc = key_check(key, len);
    if (rc)
        return rc;
    size_t slot;
    hasher *h = take(p, &slot);
    if (!h)
        return RINGSIM_ENOMEM;
    place_key(p->pl, h, key, len, k);
    give(p, slot, h);
    return 0;
}

int ringsim_lookup(const ringsim_placement *p, const char *key, size_t len, const char **owner)
{
    place_key_info k;
    if (!owner)
        return RINGSIM_EPARAM;
    *owner = NULL;
    int rc = place_of(p, key, len, &k);
    if (!rc && k.owner >= 0)
        *owner = p->nodes[k.owner].name;
    return rc;
}

int ringsim_served_by(const ringsim_placement *p, const char *key, size_t len, const char **node)
{
    place_key_info k;
    if (!node)
        return RINGSIM_EPARAM;
    *node = NULL;
    int rc = place_of(p, key, len, &k);
    if (!rc && k.served >= 0)
        *node = k.via >= 0 ? p->nodes[k.served].replicas[k.via] : p->nodes[k.served].name;
    return rc;
}

int ringsim_replicas(const ringsim_placement *p, const char *key, size_t len, const char **nodes,
                     size_t max, size_t *count)
{
    place_key_info k;
    long prefs[PLACE_MAX_PREFS];
    if (!count || (max && !nodes))
        return RINGSIM_EPARAM;
    *count = 0;
    int rc = place_of(p, key, len, &k);
    if (rc)
        return rc;
    size_t n = place_prefs(p->pl, &k, p->cfg.replicas, prefs);
    for (size_t i = 0; i < n && i < max; i++)
        nodes[i] = p->nodes[prefs[i]].name;
    *count = n;
    return 0;
}
