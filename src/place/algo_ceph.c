/*
 * algo_ceph.c - Ceph CRUSH (alg_ceph.c) as a placement algorithm: OSDs in a
 * hierarchy of straw2 buckets, one pool, every PG's up set computed at
 * build time.
 *
 * The map is what `ceph osd crush add osd.N W root=... rack=... host=...`
 * builds from the nodes' locations, in join order: a bucket is created the
 * first time a location names it (ids -1, -2, ... in that order), items
 * keep the order they joined in, a bucket weighs the sum of its items.  A
 * location without a root is under root=default; a node without a
 * location sits on a host of its own, "host-<name>" (as an OSD's own
 * machine), so that the default failure domain, host, has something to
 * choose.  Types are Ceph's (osd 0, host 1, ... root 11); a location type
 * Ceph does not name ("dc", "az") gets the next free id.  Node weights are
 * CRUSH weights, 16.16 as `crushtool -c` truncates them.
 *
 * The rule is the one Ceph creates for the pool: replicated
 * `take default; chooseleaf firstn 0 type DOMAIN; emit` (`choose ... type
 * osd` when the domain is osd), erasure `set_chooseleaf_tries 5;
 * set_choose_tries 100; take default; chooseleaf indep 0 type DOMAIN;
 * emit` with size k+m.  The root taken is `default` when it exists, else
 * the first root created.
 *
 * A key is an object name: its PG is ceph_stable_mod(rjenkins(name)), the
 * key's coordinate; the owner is the primary (first OSD of the up set) and
 * the PG table gives it per coordinate, so diffs range over PGs.  A down
 * OSD leaves the up set (replicated: the others shift up; erasure: a
 * hole), as OSDMap::_raw_to_up_osds; the serving primary is the first OSD
 * left.
 *
 * A node's reweight (`ceph osd reweight`, place_node.reweight_off; 0 is
 * the state out) is CRUSH's device weight, as crushtool --weight takes it.
 *
 * Cost: build maps every PG once (pg_num x rule cost, a few ms for 4096
 * PGs on 100 OSDs); a key is one string hash and two table reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_ceph.h"
#include "place_int.h"

#define MAX_TRACE_STEPS 300

typedef struct ceph_place {
    ceph_map *map;
    const ceph_rule *rule;
    uint32_t *weight; /* reweight by device id (0x10000: in) */
    int wmax;
    uint32_t pg_num, pgp_num, mask, pool;
    int hashpspool, size, erasure;
    long *raw; /* pg_num x size node indexes, -1 a hole (CRUSH's answer) */
    long *up;  /* the same with down OSDs out (shifted or holes) */
    uint8_t *nraw, *nup;
} ceph_place;

static int osd_id(const place_node *x)
{
    if (x->len < 5 || x->len > 11 || memcmp(x->name, "osd.", 4))
        return -1;
    long v = 0;
    for (size_t i = 4; i < x->len; i++) {
        if (x->name[i] < '0' || x->name[i] > '9' || (i == 4 && x->name[i] == '0' && x->len > 5))
            return -1;
        v = v * 10 + (x->name[i] - '0');
    }
    return v < CEPH_MAX_PGS ? (int)v : -1;
}

static int ceph_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    if (cfg->param[PP_PGP_NUM] > cfg->param[PP_PG_NUM])
        return rs_fail(err, RINGSIM_EPARAM, "pgp_num %lld is above pg_num %lld",
                       (long long)cfg->param[PP_PGP_NUM], (long long)cfg->param[PP_PG_NUM]);
    if (cfg->param[PP_POOL_TYPE] == 1 &&
        cfg->param[PP_EC_K] + cfg->param[PP_EC_M] > (int64_t)PLACE_MAX_REPLICAS)
        return rs_fail(err, RINGSIM_EPARAM, "k + m is above %u", PLACE_MAX_REPLICAS);
    for (size_t i = 0; i < n; i++) {
        if (osd_id(&nodes[i]) < 0)
            return rs_fail(err, RINGSIM_ENAME,
                           "ceph: node \"%.64s\" is not an OSD name: osd.N, N from 0 to %d",
                           nodes[i].name, CEPH_MAX_PGS - 1);
        if (nodes[i].weight >= 32768.0)
            return rs_fail(err, RINGSIM_EPARAM, "ceph: %.64s: a CRUSH weight is below 32768",
                           nodes[i].name);
        for (size_t j = 0; j < i; j++)
            if (osd_id(&nodes[j]) == osd_id(&nodes[i]))
                return rs_fail(err, RINGSIM_ENAME, "ceph: two nodes are %.64s", nodes[i].name);
        for (size_t l = 0; l < nodes[i].nloc; l++)
            if (!strcmp(nodes[i].loc[l].type, "osd"))
                return rs_fail(err, RINGSIM_EPARAM,
                               "ceph: %.64s: a location cannot name an osd bucket", nodes[i].name);
    }
    return 0;
}

/* ---- building the map ---- */

typedef struct mk {
    ceph_map *m;
    size_t nb, capb; /* buckets in creation order: m->buckets[0..nb) */
    int32_t *parent; /* per bucket index: the parent's bucket id, 0 for a root */
    rs_error *err;
} mk;

static int type_id(mk *k, const char *name, int32_t *out)
{
    ceph_map *m = k->m;
    const ceph_type *t = ceph_type_by_name(m, name);
    if (t) {
        *out = t->id;
        return 0;
    }
    ceph_type *nt = realloc(m->types, (m->ntypes + 1) * sizeof *nt);
    if (!nt)
        return RINGSIM_ENOMEM;
    m->types = nt;
    int32_t id = 12;
    for (size_t i = 0; i < m->ntypes; i++)
        if (m->types[i].id >= id)
            id = m->types[i].id + 1;
    if (!(m->types[m->ntypes].name = strdup(name)))
        return RINGSIM_ENOMEM;
    m->types[m->ntypes++].id = id;
    *out = id;
    return 0;
}

static int add_item(ceph_bucket *b, int32_t item, uint32_t w)
{
    int32_t *ni = realloc(b->items, (b->size + 1) * sizeof *ni);
    if (ni)
        b->items = ni;
    uint32_t *nw = realloc(b->weights, (b->size + 1) * sizeof *nw);
    if (nw)
        b->weights = nw;
    if (!ni || !nw)
        return RINGSIM_ENOMEM;
    b->items[b->size] = item;
    b->weights[b->size++] = w;
    return 0;
}

/* The bucket (type, name) under parent (0: a root), made when new. */
static int bucket(mk *k, const char *type, const char *name, int32_t parent, int32_t *out)
{
    ceph_map *m = k->m;
    for (size_t i = 0; i < k->nb; i++) {
        ceph_bucket *b = m->buckets[i];
        if (strcmp(b->name, name))
            continue;
        const ceph_type *t = ceph_type_by_id(m, b->type);
        if (strcmp(t->name, type))
            return rs_fail(k->err, RINGSIM_EPARAM, "ceph: bucket %.64s is a %s and a %.32s", name,
                           t->name, type);
        if (k->parent[i] != parent)
            return rs_fail(k->err, RINGSIM_EPARAM,
                           "ceph: %s %.64s has two parents (every bucket has one place in the "
                           "tree)",
                           type, name);
        *out = b->id;
        return 0;
    }
    int32_t tid;
    int rc = type_id(k, type, &tid);
    if (rc)
        return rs_fail(k->err, rc, "out of memory");
    if (k->nb == k->capb) {
        size_t cap = k->capb ? k->capb * 2 : 8;
        ceph_bucket **nb = realloc(m->buckets, cap * sizeof *nb);
        if (nb)
            m->buckets = nb;
        int32_t *np = realloc(k->parent, cap * sizeof *np);
        if (np)
            k->parent = np;
        if (!nb || !np)
            return rs_fail(k->err, RINGSIM_ENOMEM, "out of memory");
        k->capb = cap;
    }
    ceph_bucket *b = calloc(1, sizeof *b);
    if (!b || !(b->name = strdup(name))) {
        free(b);
        return rs_fail(k->err, RINGSIM_ENOMEM, "out of memory");
    }
    b->id = -1 - (int32_t)k->nb;
    b->type = tid;
    m->buckets[k->nb] = b;
    k->parent[k->nb++] = parent;
    m->max_buckets = (int32_t)k->nb;
    if (parent && add_item(m->buckets[-1 - parent], b->id, 0))
        return rs_fail(k->err, RINGSIM_ENOMEM, "out of memory");
    *out = b->id;
    return 0;
}

static int build_map(placement *p, ceph_place *c, rs_error *err)
{
    ceph_map *m = calloc(1, sizeof *m);
    if (!m)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    c->map = m;
    const int64_t *pp = p->cfg.param;
    m->t = (ceph_tunables){.choose_total_tries = (uint32_t)pp[PP_CHOOSE_TOTAL_TRIES],
                           .chooseleaf_descend_once = (uint32_t)pp[PP_CHOOSELEAF_DESCEND_ONCE],
                           .chooseleaf_vary_r = (uint32_t)pp[PP_CHOOSELEAF_VARY_R],
                           .chooseleaf_stable = (uint32_t)pp[PP_CHOOSELEAF_STABLE]};
    if (!(m->types = calloc(12, sizeof *m->types)))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (int i = 0; i < 12; i++) {
        m->types[i].id = i;
        if (!(m->types[i].name = strdup(ceph_type_names[i])))
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        m->ntypes++;
    }
    if (p->n && !(m->devices = calloc(p->n, sizeof *m->devices)))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    mk k = {.m = m, .err = err};
    int rc = 0;
    for (size_t i = 0; !rc && i < p->n; i++) {
        const place_node *x = &p->nodes[i];
        int id = osd_id(x);
        m->devices[i].id = id;
        if (!(m->devices[i].name = strndup(x->name, x->len))) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            break;
        }
        m->ndevices++;
        if (id >= m->max_devices)
            m->max_devices = id + 1;
        int32_t parent = 0;
        bool has_root = false;
        for (size_t l = 0; l < x->nloc; l++)
            has_root |= !strcmp(x->loc[l].type, "root");
        if (!has_root)
            rc = bucket(&k, "root", "default", 0, &parent);
        for (size_t l = 0; !rc && l < x->nloc; l++)
            rc = bucket(&k, x->loc[l].type, x->loc[l].name, parent, &parent);
        if (!rc && !x->nloc) {
            char host[96];
            snprintf(host, sizeof host, "host-%.*s", (int)x->len, x->name);
            rc = bucket(&k, "host", host, parent, &parent);
        }
        float f = (float)x->weight; /* crushtool -c: float x 0x10000, truncated */
        if (!rc && add_item(m->buckets[-1 - parent], id, (uint32_t)(int32_t)(f * (float)0x10000)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    /* children are made after their parents: sum the weights backwards */
    for (size_t b = k.nb; !rc && b-- > 0;) {
        ceph_bucket *bk = m->buckets[b];
        bk->weight = 0;
        for (uint32_t i = 0; i < bk->size; i++) {
            if (bk->items[i] < 0)
                bk->weights[i] = m->buckets[-1 - bk->items[i]]->weight;
            bk->weight += bk->weights[i];
        }
    }
    free(k.parent);
    if (rc)
        return rc;
    /* the pool's rule, as Ceph creates it */
    if (!(m->rules = calloc(1, sizeof *m->rules)) ||
        !(m->rules->steps = calloc(5, sizeof(ceph_step))) ||
        !(m->rules->name = strdup(c->erasure ? "erasure_rule" : "replicated_rule")))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    m->nrules = 1;
    ceph_rule *r = m->rules;
    r->type = c->erasure ? CEPH_RULE_ERASURE : CEPH_RULE_REPLICATED;
    int32_t root = 0;
    for (size_t b = 0; b < k.nb; b++)
        if (!strcmp(m->buckets[b]->name, "default") && m->buckets[b]->type == 11)
            root = m->buckets[b]->id;
    for (size_t b = 0; !root && b < k.nb; b++)
        if (m->buckets[b]->type == 11)
            root = m->buckets[b]->id;
    int32_t dom = (int32_t)pp[PP_FAILURE_DOMAIN];
    if (c->erasure) {
        r->steps[r->nsteps++] = (ceph_step){CEPH_OP_SET_CHOOSELEAF_TRIES, 5, 0};
        r->steps[r->nsteps++] = (ceph_step){CEPH_OP_SET_CHOOSE_TRIES, 100, 0};
    }
    if (root)
        r->steps[r->nsteps++] = (ceph_step){CEPH_OP_TAKE, root, 0};
    int op = dom == 0 ? (c->erasure ? CEPH_OP_CHOOSE_INDEP : CEPH_OP_CHOOSE_FIRSTN)
                      : (c->erasure ? CEPH_OP_CHOOSELEAF_INDEP : CEPH_OP_CHOOSELEAF_FIRSTN);
    r->steps[r->nsteps++] = (ceph_step){op, 0, dom};
    r->steps[r->nsteps++] = (ceph_step){CEPH_OP_EMIT, 0, 0};
    c->rule = r;
    return ceph_map_check(m, err);
}

static void ceph_free_op(placement *p)
{
    ceph_place *c = p->extra;
    if (!c)
        return;
    ceph_map_free(c->map);
    free(c->weight);
    free(c->raw);
    free(c->up);
    free(c->nraw);
    free(c->nup);
    free(c);
    p->extra = NULL;
}

static int ceph_build_op(placement *p, const place_from *from, rs_error *err)
{
    (void)from;
    ceph_place *c = calloc(1, sizeof *c);
    if (!c)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    p->extra = c;
    const int64_t *pp = p->cfg.param;
    c->pool = (uint32_t)pp[PP_CEPH_POOL];
    c->pg_num = (uint32_t)pp[PP_PG_NUM];
    c->pgp_num = pp[PP_PGP_NUM] ? (uint32_t)pp[PP_PGP_NUM] : c->pg_num;
    c->mask = ceph_pg_mask(c->pg_num);
    c->hashpspool = (int)pp[PP_HASHPSPOOL];
    c->erasure = pp[PP_POOL_TYPE] == 1;
    c->size = c->erasure ? (int)(pp[PP_EC_K] + pp[PP_EC_M]) : (int)pp[PP_CEPH_SIZE];
    int rc = build_map(p, c, err);
    if (rc)
        return rc;
    size_t cells = (size_t)c->pg_num * (size_t)c->size;
    c->wmax = c->map->max_devices;
    c->weight = malloc(((size_t)c->wmax + 1) * sizeof *c->weight);
    int32_t *dev_node = malloc(((size_t)c->wmax + 1) * sizeof *dev_node);
    c->raw = malloc(cells * sizeof *c->raw);
    c->up = malloc(cells * sizeof *c->up);
    c->nraw = malloc(c->pg_num);
    c->nup = malloc(c->pg_num);
    p->table = malloc(((size_t)c->pg_num + 1) * sizeof *p->table);
    if (!c->weight || !dev_node || !c->raw || !c->up || !c->nraw || !c->nup || !p->table) {
        free(dev_node);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    for (int i = 0; i < c->wmax; i++)
        c->weight[i] = CEPH_WEIGHT_ONE;
    for (size_t i = 0; i < p->n; i++) {
        int id = osd_id(&p->nodes[i]);
        dev_node[id] = (int32_t)i;
        /* `ceph osd reweight` (0: out): CRUSH's is_out() draws against it */
        c->weight[id] = CEPH_WEIGHT_ONE - (p->nodes[i].reweight_off > CEPH_WEIGHT_ONE
                                               ? CEPH_WEIGHT_ONE
                                               : p->nodes[i].reweight_off);
    }
    for (uint32_t ps = 0; ps < c->pg_num; ps++) {
        int32_t out[CEPH_MAX_RESULT];
        int got = p->n ? ceph_do_rule(c->map, c->rule,
                                      (int32_t)ceph_pps(ps, c->pool, c->pgp_num, c->hashpspool),
                                      out, c->size, c->weight, c->wmax, NULL, NULL)
                       : 0;
        long *raw = c->raw + (size_t)ps * (size_t)c->size, *up = c->up + (size_t)ps * (size_t)c->size;
        int nu = 0;
        long primary = -1;
        for (int i = 0; i < got; i++) {
            long node = out[i] == CEPH_ITEM_NONE ? -1 : dev_node[out[i]];
            raw[i] = node;
            if (primary < 0)
                primary = node;
            bool gone = node < 0 || p->nodes[node].down;
            if (c->erasure)
                up[nu++] = gone ? -1 : node;
            else if (!gone)
                up[nu++] = node;
        }
        c->nraw[ps] = (uint8_t)got;
        c->nup[ps] = (uint8_t)nu;
        p->table[ps] = primary < 0 ? (uint32_t)p->n : (uint32_t)primary;
    }
    free(dev_node);
    return 0;
}

static uint64_t ceph_top(const place_config *cfg) { return (uint64_t)cfg->param[PP_PG_NUM] - 1; }

static void ceph_key_op(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k)
{
    (void)h;
    const ceph_place *c = p->extra;
    k->hash = ceph_str_hash_rjenkins(key, len);
    k->coord = ceph_stable_mod((uint32_t)k->hash, c->pg_num, c->mask);
    k->has_coord = true;
    k->point = (long)k->coord;
    k->owner = p->n && p->table[k->coord] < p->n ? (long)p->table[k->coord] : -1;
}

static void ceph_owner_of_hash(const placement *p, place_key_info *k)
{
    const ceph_place *c = p->extra;
    uint32_t ps = ceph_stable_mod((uint32_t)k->hash, c->pg_num, c->mask);
    k->owner = p->n && p->table[ps] < p->n ? (long)p->table[ps] : -1;
}

/* The up set's OSDs in order (holes skipped), at most r. */
static size_t ceph_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out)
{
    const ceph_place *c = p->extra;
    const long *up = c->up + (size_t)k->coord * (size_t)c->size;
    size_t m = 0;
    for (int i = 0; i < c->nup[k->coord] && m < r; i++)
        if (up[i] >= 0)
            out[m++] = up[i];
    return m;
}

static long ceph_serve(const placement *p, const char *key, size_t len, const place_key_info *k)
{
    (void)key;
    (void)len;
    long out[1];
    return ceph_prefs(p, k, 1, out) ? out[0] : -1;
}

/* Segments of PGs by the serving primary (down OSDs applied). */
static int ceph_segments(const placement *p, place_seg **out, size_t *n)
{
    const ceph_place *c = p->extra;
    *out = malloc(((size_t)c->pg_num + 1) * sizeof **out);
    if (!*out)
        return RINGSIM_ENOMEM;
    size_t m = 0;
    for (uint32_t ps = 0; ps < c->pg_num; ps++) {
        place_key_info k = {.coord = ps};
        long o[1];
        long owner = p->n && ceph_prefs(p, &k, 1, o) ? o[0] : -1;
        if (m && (*out)[m - 1].owner == owner)
            (*out)[m - 1].hi = ps;
        else
            (*out)[m++] = (place_seg){ps, owner};
    }
    *n = m;
    return 0;
}

static void ceph_shares(const placement *p, double *share)
{
    const ceph_place *c = p->extra;
    for (uint32_t ps = 0; ps < c->pg_num; ps++)
        if (p->table[ps] < p->n)
            share[p->table[ps]] += 1.0 / c->pg_num;
}

static void ceph_owns(const placement *p, uint32_t r, double *owns)
{
    const ceph_place *c = p->extra;
    for (uint32_t ps = 0; ps < c->pg_num; ps++) {
        const long *raw = c->raw + (size_t)ps * (size_t)c->size;
        uint32_t k = 0;
        for (int i = 0; i < c->nraw[ps] && k < r; i++)
            if (raw[i] >= 0) {
                owns[raw[i]] += 1.0 / c->pg_num;
                k++;
            }
    }
}

/* "pgs": PGs whose up set holds the node; "primary_pgs": where it is first. */
static void ceph_node_json(const placement *p, size_t node, json_t *obj)
{
    const ceph_place *c = p->extra;
    json_int_t pgs = 0, prim = 0;
    for (uint32_t ps = 0; ps < c->pg_num; ps++) {
        const long *up = c->up + (size_t)ps * (size_t)c->size;
        bool first = true;
        for (int i = 0; i < c->nup[ps]; i++) {
            if (up[i] < 0)
                continue;
            if (up[i] == (long)node) {
                pgs++;
                prim += first;
            }
            first = false;
        }
    }
    json_object_set_new(obj, "pgs", json_integer(pgs));
    json_object_set_new(obj, "primary_pgs", json_integer(prim));
    /* the reweight CRUSH uses: 16.16, as `ceph osd df` shows it */
    int id = osd_id(&p->nodes[node]);
    json_object_set_new(obj, "reweight",
                        json_real(id >= 0 && id < c->wmax ? c->weight[id] / 65536.0 : 1.0));
}

/* The OSD id at an up set position (-1: a hole, or none past its end). */
static int up_osd(const placement *p, uint32_t ps, int i)
{
    const ceph_place *c = p->extra;
    if (ps >= c->pg_num || i >= c->nup[ps])
        return -1;
    long node = c->up[(size_t)ps * (size_t)c->size + (size_t)i];
    return node < 0 ? -1 : osd_id(&p->nodes[node]);
}

/* Up sets compared by OSD id (node indexes differ across a join). */
static void ceph_pg_diff(const placement *before, const placement *after, int64_t *remapped,
                         int64_t *shards)
{
    const ceph_place *a = after->extra, *b = before ? before->extra : NULL;
    uint32_t had = b ? b->pg_num : 0;
    int64_t r = 0, sh = 0;
    int width = b && b->size > a->size ? b->size : a->size;
    for (uint32_t ps = 0; ps < a->pg_num; ps++) {
        int moved = 0;
        for (int i = 0; i < width; i++) {
            int now = up_osd(after, ps, i);
            moved += ps >= had ? now >= 0 : now != up_osd(before, ps, i);
        }
        r += moved > 0;
        sh += moved;
    }
    *remapped = r;
    *shards = sh;
}

typedef struct trace_ctx {
    const placement *p;
    const char *const *names;
    json_t *t;
    int steps;
} trace_ctx;

static const char *item_name(const trace_ctx *tc, int32_t item, char *buf, size_t cap)
{
    const ceph_place *c = tc->p->extra;
    if (item == CEPH_ITEM_NONE)
        return "none";
    if (item < 0) {
        const ceph_bucket *b = -1 - item < c->map->max_buckets ? c->map->buckets[-1 - item] : NULL;
        snprintf(buf, cap, "%s (bucket %d)", b ? b->name : "?", item);
    } else {
        snprintf(buf, cap, "osd.%d", item);
    }
    return buf;
}

static void on_trace(void *ctx, const ceph_trace_ev *ev)
{
    trace_ctx *tc = ctx;
    if (tc->steps >= MAX_TRACE_STEPS) {
        if (tc->steps++ == MAX_TRACE_STEPS)
            place__step(tc->t, "more", "the trace stops after %d steps", MAX_TRACE_STEPS);
        return;
    }
    tc->steps++;
    char a[96], b[96];
    static const char *const reasons[] = {"", "collision: already chosen", "out (reweight)",
                                          "no usable leaf under it", "empty bucket"};
    switch (ev->kind) {
    case CEPH_TR_DRAW:
        place__step(tc->t, "draw", "%s in %s, r=%d: u=%u, draw %lld",
                    item_name(tc, ev->item, a, sizeof a), item_name(tc, ev->bucket, b, sizeof b),
                    ev->r, ev->u, (long long)ev->draw);
        break;
    case CEPH_TR_WIN:
        place__step(tc->t, "straw2", "%s wins in %s (r=%d)", item_name(tc, ev->item, a, sizeof a),
                    item_name(tc, ev->bucket, b, sizeof b), ev->r);
        break;
    case CEPH_TR_DESCEND:
        place__step(tc->t, "descend", "into %s", item_name(tc, ev->item, a, sizeof a));
        break;
    case CEPH_TR_RETRY:
        place__step(tc->t, "retry", "%s rejected at position %d: %s",
                    item_name(tc, ev->item, a, sizeof a), ev->pos,
                    ev->reason > 0 && ev->reason < 5 ? reasons[ev->reason] : "?");
        break;
    case CEPH_TR_PLACED:
        place__step(tc->t, "chosen", "position %d: %s", ev->pos,
                    item_name(tc, ev->item, a, sizeof a));
        break;
    case CEPH_TR_HOLE:
        place__step(tc->t, "hole", "position %d stays empty (CRUSH_ITEM_NONE)", ev->pos);
        break;
    default:
        break;
    }
}

static void ceph_trace_op(const placement *p, const char *key, size_t len, const place_key_info *k,
                          const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    const ceph_place *c = p->extra;
    uint32_t pps = ceph_pps((uint32_t)k->coord, c->pool, c->pgp_num, c->hashpspool);
    place__step(t, "hash", "ceph_str_hash_rjenkins(name) = %llu (0x%08llx)",
                (unsigned long long)k->hash, (unsigned long long)k->hash);
    place__step(t, "pg", "ceph_stable_mod(hash, pg_num %u, mask %u) = %llu: PG %u.%llx", c->pg_num,
                c->mask, (unsigned long long)k->coord, c->pool, (unsigned long long)k->coord);
    place__step(t, "seed",
                c->hashpspool ? "raw_pg_to_pps, hashpspool: crush_hash32_2(stable_mod(ps, pgp_num "
                                "%u), pool %u) = %u"
                              : "raw_pg_to_pps: stable_mod(ps, pgp_num %u) + pool %u = %u",
                c->pgp_num, c->pool, pps);
    if (!p->n) {
        place__step(t, "owner", "no OSD: nobody holds the key");
        return;
    }
    trace_ctx tc = {.p = p, .names = names, .t = t};
    int32_t out[CEPH_MAX_RESULT];
    int got = ceph_do_rule(c->map, c->rule, (int32_t)pps, out, c->size, c->weight, c->wmax,
                           on_trace, &tc);
    char buf[600];
    size_t at = 0;
    const long *up = c->up + (size_t)k->coord * (size_t)c->size;
    for (int i = 0; i < c->nup[k->coord] && at < 500; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "",
                               up[i] < 0 ? "none" : names[up[i]]);
    buf[at] = 0;
    place__step(t, "up", "%d chosen by CRUSH; up [%s]%s", got, buf,
                c->erasure ? " (a down OSD leaves a hole)"
                           : " (a down OSD leaves, the others shift up)");
    if (k->owner >= 0)
        place__step(t, "owner", "%s is the primary", names[k->owner]);
    else
        place__step(t, "owner", "CRUSH found no OSD: nobody holds the key");
}

size_t place_sample_name(const char *algorithm, size_t i, char out[32])
{
    int len = algorithm && !strcmp(algorithm, place_algo_ceph.name)
                  ? snprintf(out, 32, "osd.%zu", i)
                  : snprintf(out, 32, "10.%zu.%zu.%zu:11211", i / 65536, (i / 256) % 256,
                             i % 256 + 1);
    return len > 0 ? (size_t)len : 0;
}

bool place_ceph_pool(const placement *p, uint32_t *pg_num, uint32_t *pool)
{
    if (!p || p->a != &place_algo_ceph || !p->extra)
        return false;
    const ceph_place *c = p->extra;
    *pg_num = c->pg_num;
    *pool = c->pool;
    return true;
}

size_t place_ceph_up(const placement *p, uint32_t ps, long *up, size_t cap)
{
    uint32_t pg_num, pool;
    if (!place_ceph_pool(p, &pg_num, &pool) || ps >= pg_num)
        return 0;
    const ceph_place *c = p->extra;
    const long *u = c->up + (size_t)ps * (size_t)c->size;
    size_t n = 0;
    for (int i = 0; i < c->nup[ps] && n < cap; i++)
        up[n++] = u[i];
    return n;
}

const struct ceph_map *place_ceph_map(const placement *p)
{
    return p && p->a == &place_algo_ceph && p->extra ? ((const ceph_place *)p->extra)->map : NULL;
}

const place_algo place_algo_ceph = {
    .name = "ceph",
    .title = "Ceph CRUSH: straw2 buckets, one pool",
    .origin =
        "Ceph's CRUSH (src/crush/mapper.c) as crushtool and osdmaptool compute it: an object's "
        "PG by ceph_str_hash_rjenkins and ceph_stable_mod, its seed by raw_pg_to_pps, the up "
        "set by the pool's rule over straw2 buckets from the nodes' locations",
    .key_hash = "ceph_str_hash_rjenkins (Jenkins' lookup2), then ceph_stable_mod to a PG",
    .space = "pg",
    .coord_name = "pg",
    .params = {PP_CEPH_POOL, PP_PG_NUM, PP_PGP_NUM, PP_CEPH_SIZE, PP_FAILURE_DOMAIN, PP_POOL_TYPE,
               PP_EC_K, PP_EC_M, PP_HASHPSPOOL, PP_CHOOSE_TOTAL_TRIES, PP_CHOOSELEAF_DESCEND_ONCE,
               PP_CHOOSELEAF_VARY_R, PP_CHOOSELEAF_STABLE},
    .nparams = 13,
    .weights = PLACE_W_ANY,
    .zero_weight = true,
    .replicas = PLACE_REP_HIGHEST,
    .coord_kind = PLACE_COORD_UNSIGNED,
    .col = PLACE_COL_COORD,
    .coord_param = PP_PG_NUM,
    .top = ceph_top,
    .check_nodes = ceph_check,
    .build = ceph_build_op,
    .free_extra = ceph_free_op,
    .key = ceph_key_op,
    .owner_of_hash = ceph_owner_of_hash,
    .prefs = ceph_prefs,
    .segments = ceph_segments,
    .shares = ceph_shares,
    .owns = ceph_owns,
    .node_json = ceph_node_json,
    .pg_diff = ceph_pg_diff,
    .trace = ceph_trace_op,
    .down = PLACE_DOWN_OWN,
    .serve = ceph_serve,
    .down_text =
        "a down OSD leaves the up set: a replicated pool's other OSDs shift up, an erasure-coded "
        "pool keeps a hole; the primary is the first OSD left",
};
