/*
 * alg_ceph.c - CRUSH mapping (see alg_ceph.h for the reference and quirks).
 *
 * The rule interpreter follows crush_do_rule step by step: `take` puts a
 * bucket in the working vector, each choose step replaces the vector with
 * what it chose under every entry (firstn: depth first, retrying a
 * replica's whole descent with r + ftotal; indep: breadth first, one
 * position at a time, r + numrep * ftotal), `emit` appends to the result.
 * A walk (struct walk) carries what every level needs so the recursive
 * choosers keep Ceph's argument lists short.
 */
#include "alg_ceph.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_ceph_ln.h"

#define HASH_SEED 1315423911u

/* Jenkins' 96-bit mix, as hash.c and ceph_hash.cc both spell it (their
 * macro, here a function over the three words). */
static inline void mix(uint32_t *pa, uint32_t *pb, uint32_t *pc)
{
    uint32_t a = *pa, b = *pb, c = *pc;
    a = a - b;
    a = a - c;
    a = a ^ (c >> 13);
    b = b - c;
    b = b - a;
    b = b ^ (a << 8);
    c = c - a;
    c = c - b;
    c = c ^ (b >> 13);
    a = a - b;
    a = a - c;
    a = a ^ (c >> 12);
    b = b - c;
    b = b - a;
    b = b ^ (a << 16);
    c = c - a;
    c = c - b;
    c = c ^ (b >> 5);
    a = a - b;
    a = a - c;
    a = a ^ (c >> 3);
    b = b - c;
    b = b - a;
    b = b ^ (a << 10);
    c = c - a;
    c = c - b;
    c = c ^ (b >> 15);
    *pa = a;
    *pb = b;
    *pc = c;
}

const char *const ceph_type_names[] = {"osd",    "host", "chassis", "rack",       "row",
                                       "pdu",    "pod",  "room",    "datacenter", "zone",
                                       "region", "root", NULL};

ceph_tunables ceph_tunables_optimal(void)
{
    return (ceph_tunables){.choose_local_tries = 0,
                           .choose_local_fallback_tries = 0,
                           .choose_total_tries = 50,
                           .chooseleaf_descend_once = 1,
                           .chooseleaf_vary_r = 1,
                           .chooseleaf_stable = 1};
}

uint32_t ceph_hash32_2(uint32_t a, uint32_t b)
{
    uint32_t hash = HASH_SEED ^ a ^ b, x = 231232, y = 1232;
    mix(&a, &b, &hash);
    mix(&x, &a, &hash);
    mix(&b, &y, &hash);
    return hash;
}

uint32_t ceph_hash32_3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t hash = HASH_SEED ^ a ^ b ^ c, x = 231232, y = 1232;
    mix(&a, &b, &hash);
    mix(&c, &x, &hash);
    mix(&y, &a, &hash);
    mix(&b, &x, &hash);
    mix(&y, &c, &hash);
    return hash;
}

static uint32_t le32(const unsigned char *k)
{
    return k[0] | (uint32_t)k[1] << 8 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 24;
}

uint32_t ceph_str_hash_rjenkins(const char *str, size_t length)
{
    const unsigned char *k = (const unsigned char *)str;
    uint32_t a = 0x9e3779b9, b = a, c = 0;
    size_t len = length;
    while (len >= 12) {
        a += le32(k);
        b += le32(k + 4);
        c += le32(k + 8);
        mix(&a, &b, &c);
        k += 12;
        len -= 12;
    }
    /* Ceph takes an unsigned length: longer keys wrap the same way. */
    c += (uint32_t)length;
    switch (len) { /* every case falls through, as in ceph_hash.cc */
    case 11:
        c += (uint32_t)k[10] << 24;
        /* fall through */
    case 10:
        c += (uint32_t)k[9] << 16;
        /* fall through */
    case 9:
        c += (uint32_t)k[8] << 8; /* c's low byte holds the length */
        /* fall through */
    case 8:
        b += (uint32_t)k[7] << 24;
        /* fall through */
    case 7:
        b += (uint32_t)k[6] << 16;
        /* fall through */
    case 6:
        b += (uint32_t)k[5] << 8;
        /* fall through */
    case 5:
        b += k[4];
        /* fall through */
    case 4:
        a += (uint32_t)k[3] << 24;
        /* fall through */
    case 3:
        a += (uint32_t)k[2] << 16;
        /* fall through */
    case 2:
        a += (uint32_t)k[1] << 8;
        /* fall through */
    case 1:
        a += k[0];
        break;
    default:
        break;
    }
    mix(&a, &b, &c);
    return c;
}

uint64_t ceph_crush_ln(uint32_t xin)
{
    uint32_t x = xin + 1;
    int iexpon = 15;
    /* normalise so that bit 15 or 16 is set (x is 1 .. 0x10000): one
     * shift, as Ceph's own since 2017 */
    if (!(x & 0x18000)) {
        int bits = __builtin_clz(x & 0x1ffff) - 16;
        x <<= bits;
        iexpon -= bits;
    }
    int index1 = (int)((x >> 8) << 1);
    uint64_t rh = (uint64_t)ceph_rh_lh_tbl[index1 - 256];
    uint64_t lh = (uint64_t)ceph_rh_lh_tbl[index1 + 1 - 256];
    uint64_t xl64 = ((uint64_t)x * rh) >> 48;
    uint64_t result = (uint64_t)iexpon << (12 + 32);
    uint64_t ll = (uint64_t)ceph_ll_tbl[xl64 & 0xff];
    lh = (lh + ll) >> (48 - 12 - 32);
    return result + lh;
}

int64_t ceph_straw2_draw(int32_t x, int32_t item, int32_t r, uint32_t w)
{
    if (!w)
        return INT64_MIN;
    uint32_t u = ceph_hash32_3((uint32_t)x, (uint32_t)item, (uint32_t)r) & 0xffff;
    int64_t ln = (int64_t)ceph_crush_ln(u) - 0x1000000000000LL;
    return ln / (int64_t)w; /* div64_s64: C division, towards zero */
}

uint32_t ceph_pg_mask(uint32_t n)
{
    /* (1 << cbits(n - 1)) - 1 */
    uint32_t v = n ? n - 1 : 0, bits = 0;
    while (v) {
        bits++;
        v >>= 1;
    }
    return bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
}

uint32_t ceph_stable_mod(uint32_t x, uint32_t b, uint32_t bmask)
{
    return (x & bmask) < b ? x & bmask : x & (bmask >> 1);
}

uint32_t ceph_pps(uint32_t ps, uint32_t pool, uint32_t pgp_num, int hashpspool)
{
    uint32_t s = ceph_stable_mod(ps, pgp_num, ceph_pg_mask(pgp_num));
    return hashpspool ? ceph_hash32_2(s, pool) : s + pool;
}

/* ---- the mapper ---- */

typedef struct walk {
    const ceph_map *m;
    const uint32_t *weight;
    int weight_max;
    int32_t x;
    ceph_trace_fn *trace;
    void *ctx;
} walk;

static void emit_ev(const walk *w, int kind, int reason, int32_t bucket, int32_t item, int32_t r,
                    int pos)
{
    ceph_trace_ev ev = {
        .kind = kind, .reason = reason, .bucket = bucket, .item = item, .r = r, .pos = pos};
    w->trace(w->ctx, &ev);
}

static int32_t straw2_choose(const walk *w, const ceph_bucket *b, int32_t r)
{
    uint32_t high = 0;
    int64_t high_draw = 0;
    for (uint32_t i = 0; i < b->size; i++) {
        int64_t draw = ceph_straw2_draw(w->x, b->items[i], r, b->weights[i]);
        if (w->trace) {
            ceph_trace_ev ev = {
                .kind = CEPH_TR_DRAW,
                .bucket = b->id,
                .item = b->items[i],
                .r = r,
                .u = ceph_hash32_3((uint32_t)w->x, (uint32_t)b->items[i], (uint32_t)r) & 0xffff,
                .draw = draw};
            w->trace(w->ctx, &ev);
        }
        if (i == 0 || draw > high_draw) {
            high = i;
            high_draw = draw;
        }
    }
    if (w->trace)
        emit_ev(w, CEPH_TR_WIN, 0, b->id, b->items[high], r, -1);
    return b->items[high];
}

/* is_out: reweight below 1 refuses an OSD for a share of inputs. */
static int is_out(const walk *w, int32_t item)
{
    if (item >= w->weight_max)
        return 1;
    uint32_t wt = w->weight[item];
    if (wt >= 0x10000)
        return 0;
    if (wt == 0)
        return 1;
    return (ceph_hash32_2((uint32_t)w->x, (uint32_t)item) & 0xffff) < wt ? 0 : 1;
}

static const ceph_bucket *bucket_of(const ceph_map *m, int32_t item)
{
    return (item < 0 && -1 - item < m->max_buckets) ? m->buckets[-1 - item] : NULL;
}

static int item_type(const ceph_map *m, int32_t item)
{
    const ceph_bucket *b = bucket_of(m, item);
    return item >= 0 ? 0 : b ? b->type : -1;
}

static int choose_firstn(const walk *w, const ceph_bucket *bucket, int numrep, int type,
                         int32_t *out, int outpos, int out_size, unsigned tries,
                         unsigned recurse_tries, unsigned local_retries, int recurse_to_leaf,
                         unsigned vary_r, unsigned stable, int32_t *out2, int parent_r)
{
    const ceph_map *m = w->m;
    int count = out_size;
    for (int rep = stable ? 0 : outpos; rep < numrep && count > 0; rep++) {
        unsigned ftotal = 0;
        int skip_rep = 0, retry_descent;
        int32_t item = 0;
        do {
            retry_descent = 0;
            const ceph_bucket *in = bucket;
            unsigned flocal = 0;
            int retry_bucket;
            do {
                int collide = 0, reject = 0, reason = 0;
                retry_bucket = 0;
                int r = rep + parent_r + (int)ftotal;
                if (in->size == 0) {
                    reject = 1;
                    reason = CEPH_REJ_EMPTY;
                    goto rejected;
                }
                item = straw2_choose(w, in, r);
                if (item >= m->max_devices) {
                    skip_rep = 1;
                    break;
                }
                int itemtype = item_type(m, item);
                if (itemtype != type) {
                    const ceph_bucket *sub = bucket_of(m, item);
                    if (item >= 0 || !sub) {
                        skip_rep = 1;
                        break;
                    }
                    if (w->trace)
                        emit_ev(w, CEPH_TR_DESCEND, 0, in->id, item, r, outpos);
                    in = sub;
                    retry_bucket = 1;
                    continue;
                }
                for (int i = 0; i < outpos; i++)
                    if (out[i] == item) {
                        collide = 1;
                        reason = CEPH_REJ_COLLISION;
                        break;
                    }
                if (!collide && recurse_to_leaf) {
                    if (item < 0) {
                        int sub_r = vary_r ? r >> (vary_r - 1) : 0;
                        if (choose_firstn(w, bucket_of(m, item), stable ? 1 : outpos + 1, 0, out2,
                                          outpos, count, recurse_tries, 0, local_retries, 0, vary_r,
                                          stable, NULL, sub_r) <= outpos) {
                            reject = 1;
                            reason = CEPH_REJ_NOLEAF;
                        }
                    } else {
                        out2[outpos] = item;
                    }
                }
                if (!reject && !collide && itemtype == 0 && is_out(w, item)) {
                    reject = 1;
                    reason = CEPH_REJ_OUT;
                }
            rejected:
                if (reject || collide) {
                    if (w->trace)
                        emit_ev(w, CEPH_TR_RETRY, reason, in->id, item, r, outpos);
                    ftotal++;
                    flocal++;
                    if (collide && flocal <= local_retries)
                        retry_bucket = 1;
                    else if (ftotal < tries)
                        retry_descent = 1;
                    else
                        skip_rep = 1;
                }
            } while (retry_bucket);
        } while (retry_descent);
        if (skip_rep)
            continue;
        if (w->trace)
            emit_ev(w, CEPH_TR_PLACED, 0, 0, item, 0, outpos);
        out[outpos++] = item;
        count--;
    }
    return outpos;
}

static void choose_indep(const walk *w, const ceph_bucket *bucket, int left, int numrep, int type,
                         int32_t *out, int outpos, unsigned tries, unsigned recurse_tries,
                         int recurse_to_leaf, int32_t *out2, int parent_r)
{
    const ceph_map *m = w->m;
    int endpos = outpos + left;
    for (int rep = outpos; rep < endpos; rep++) {
        out[rep] = CEPH_ITEM_UNDEF;
        if (out2)
            out2[rep] = CEPH_ITEM_UNDEF;
    }
    for (unsigned ftotal = 0; left > 0 && ftotal < tries; ftotal++) {
        for (int rep = outpos; rep < endpos; rep++) {
            if (out[rep] != CEPH_ITEM_UNDEF)
                continue;
            const ceph_bucket *in = bucket;
            for (;;) {
                /* straw2 only: r' = r + numrep * ftotal */
                int r = rep + parent_r + numrep * (int)ftotal;
                if (in->size == 0) {
                    if (w->trace)
                        emit_ev(w, CEPH_TR_RETRY, CEPH_REJ_EMPTY, in->id, 0, r, rep);
                    break;
                }
                int32_t item = straw2_choose(w, in, r);
                if (item >= m->max_devices) {
                    out[rep] = CEPH_ITEM_NONE;
                    if (out2)
                        out2[rep] = CEPH_ITEM_NONE;
                    left--;
                    break;
                }
                int itemtype = item_type(m, item);
                if (itemtype != type) {
                    const ceph_bucket *sub = bucket_of(m, item);
                    if (item >= 0 || !sub) {
                        out[rep] = CEPH_ITEM_NONE;
                        if (out2)
                            out2[rep] = CEPH_ITEM_NONE;
                        left--;
                        break;
                    }
                    if (w->trace)
                        emit_ev(w, CEPH_TR_DESCEND, 0, in->id, item, r, rep);
                    in = sub;
                    continue;
                }
                int collide = 0;
                for (int i = outpos; i < endpos; i++)
                    if (out[i] == item) {
                        collide = 1;
                        break;
                    }
                if (collide) {
                    if (w->trace)
                        emit_ev(w, CEPH_TR_RETRY, CEPH_REJ_COLLISION, in->id, item, r, rep);
                    break;
                }
                if (recurse_to_leaf) {
                    if (item < 0) {
                        choose_indep(w, bucket_of(m, item), 1, numrep, 0, out2, rep, recurse_tries,
                                     0, 0, NULL, r);
                        if (out2[rep] == CEPH_ITEM_NONE) {
                            if (w->trace)
                                emit_ev(w, CEPH_TR_RETRY, CEPH_REJ_NOLEAF, in->id, item, r, rep);
                            break;
                        }
                    } else {
                        out2[rep] = item;
                    }
                }
                if (itemtype == 0 && is_out(w, item)) {
                    if (w->trace)
                        emit_ev(w, CEPH_TR_RETRY, CEPH_REJ_OUT, in->id, item, r, rep);
                    break;
                }
                if (w->trace)
                    emit_ev(w, CEPH_TR_PLACED, 0, in->id, item, r, rep);
                out[rep] = item;
                left--;
                break;
            }
        }
    }
    for (int rep = outpos; rep < endpos; rep++) {
        if (out[rep] == CEPH_ITEM_UNDEF) {
            out[rep] = CEPH_ITEM_NONE;
            if (w->trace && out2)
                emit_ev(w, CEPH_TR_HOLE, 0, bucket->id, CEPH_ITEM_NONE, 0, rep);
        }
        if (out2 && out2[rep] == CEPH_ITEM_UNDEF)
            out2[rep] = CEPH_ITEM_NONE;
    }
}

int ceph_do_rule(const ceph_map *m, const ceph_rule *rule, int32_t x, int32_t *result, int result_max,
                 const uint32_t *weight, int weight_max, ceph_trace_fn *trace, void *ctx)
{
    int32_t scratch[3 * CEPH_MAX_RESULT];
    if (result_max > CEPH_MAX_RESULT)
        result_max = CEPH_MAX_RESULT;
    int32_t *a = scratch, *b = scratch + result_max, *c = scratch + 2 * result_max;
    int32_t *wv = a, *o = b;
    int wsize = 0, result_len = 0;
    walk w = {.m = m, .weight = weight, .weight_max = weight_max, .x = x, .trace = trace, .ctx = ctx};
    /* choose_total_tries counted retries: one more try */
    unsigned choose_tries = m->t.choose_total_tries + 1, choose_leaf_tries = 0;
    unsigned local_retries = m->t.choose_local_tries;
    unsigned vary_r = m->t.chooseleaf_vary_r, stable = m->t.chooseleaf_stable;

    for (size_t s = 0; s < rule->nsteps; s++) {
        const ceph_step *st = &rule->steps[s];
        int firstn = 0;
        switch (st->op) {
        case CEPH_OP_TAKE:
            if ((st->arg1 >= 0 && st->arg1 < m->max_devices) || bucket_of(m, st->arg1)) {
                wv[0] = st->arg1;
                wsize = 1;
            }
            break;
        case CEPH_OP_SET_CHOOSE_TRIES:
            if (st->arg1 > 0)
                choose_tries = (unsigned)st->arg1;
            break;
        case CEPH_OP_SET_CHOOSELEAF_TRIES:
            if (st->arg1 > 0)
                choose_leaf_tries = (unsigned)st->arg1;
            break;
        case CEPH_OP_SET_CHOOSE_LOCAL_TRIES:
            if (st->arg1 >= 0)
                local_retries = (unsigned)st->arg1;
            break;
        case CEPH_OP_SET_CHOOSELEAF_VARY_R:
            if (st->arg1 >= 0)
                vary_r = (unsigned)st->arg1;
            break;
        case CEPH_OP_SET_CHOOSELEAF_STABLE:
            if (st->arg1 >= 0)
                stable = (unsigned)st->arg1;
            break;
        case CEPH_OP_CHOOSELEAF_FIRSTN:
        case CEPH_OP_CHOOSE_FIRSTN:
            firstn = 1;
            /* fall through */
        case CEPH_OP_CHOOSELEAF_INDEP:
        case CEPH_OP_CHOOSE_INDEP: {
            if (wsize == 0)
                break;
            int recurse_to_leaf = st->op == CEPH_OP_CHOOSELEAF_FIRSTN ||
                                  st->op == CEPH_OP_CHOOSELEAF_INDEP;
            int osize = 0;
            for (int i = 0; i < wsize; i++) {
                int numrep = st->arg1;
                if (numrep <= 0) {
                    numrep += result_max;
                    if (numrep <= 0)
                        continue;
                }
                const ceph_bucket *bk = bucket_of(m, wv[i]);
                if (!bk)
                    continue; /* a device or a hole */
                if (firstn) {
                    unsigned recurse_tries = choose_leaf_tries              ? choose_leaf_tries
                                             : m->t.chooseleaf_descend_once ? 1
                                                                            : choose_tries;
                    osize += choose_firstn(&w, bk, numrep, st->arg2, o + osize, 0, result_max - osize,
                                           choose_tries, recurse_tries, local_retries,
                                           recurse_to_leaf, vary_r, stable, c + osize, 0);
                } else {
                    int out_size = numrep < result_max - osize ? numrep : result_max - osize;
                    choose_indep(&w, bk, out_size, numrep, st->arg2, o + osize, 0, choose_tries,
                                 choose_leaf_tries ? choose_leaf_tries : 1, recurse_to_leaf,
                                 c + osize, 0);
                    osize += out_size;
                }
            }
            if (recurse_to_leaf)
                memcpy(o, c, (size_t)osize * sizeof *o);
            int32_t *tmp = o;
            o = wv;
            wv = tmp;
            wsize = osize;
            break;
        }
        case CEPH_OP_EMIT:
            for (int i = 0; i < wsize && result_len < result_max; i++)
                result[result_len++] = wv[i];
            wsize = 0;
            break;
        default:
            break;
        }
    }
    return result_len;
}

/* ---- the map ---- */

static int check_bucket(const ceph_map *m, const ceph_bucket *b, int depth, rs_error *err)
{
    if (depth > CEPH_MAX_DEPTH)
        return rs_fail(err, RINGSIM_EPARAM,
                       "crush map: buckets nested deeper than %d (or a cycle) at %s",
                       CEPH_MAX_DEPTH, b->name ? b->name : "?");
    for (uint32_t i = 0; i < b->size; i++) {
        int32_t it = b->items[i];
        if (it >= 0) {
            if (it >= m->max_devices)
                return rs_fail(err, RINGSIM_EPARAM, "crush map: bucket %s holds unknown device %d",
                               b->name ? b->name : "?", it);
            continue;
        }
        const ceph_bucket *sub = bucket_of(m, it);
        if (!sub)
            return rs_fail(err, RINGSIM_EPARAM, "crush map: bucket %s holds unknown bucket %d",
                           b->name ? b->name : "?", it);
        int rc = check_bucket(m, sub, depth + 1, err);
        if (rc)
            return rc;
    }
    return 0;
}

int ceph_map_check(const ceph_map *m, rs_error *err)
{
    if (m->t.choose_local_fallback_tries)
        return rs_fail(err, RINGSIM_EPARAM,
                       "crush map: choose_local_fallback_tries %u is a legacy tunable ringsim does "
                       "not reproduce; use 0 (the optimal profile)",
                       m->t.choose_local_fallback_tries);
    if (m->t.chooseleaf_vary_r > 31)
        return rs_fail(err, RINGSIM_EPARAM, "crush map: chooseleaf_vary_r over 31");
    for (int32_t i = 0; i < m->max_buckets; i++) {
        const ceph_bucket *b = m->buckets[i];
        if (b) {
            int rc = check_bucket(m, b, 0, err);
            if (rc)
                return rc;
        }
    }
    for (size_t r = 0; r < m->nrules; r++)
        for (size_t s = 0; s < m->rules[r].nsteps; s++) {
            const ceph_step *st = &m->rules[r].steps[s];
            if (st->op == CEPH_OP_TAKE && !bucket_of(m, st->arg1))
                return rs_fail(err, RINGSIM_EPARAM, "crush map: rule %s takes unknown bucket %d",
                               m->rules[r].name, st->arg1);
            if (st->op == CEPH_OP_SET_CHOOSE_LOCAL_FALLBACK_TRIES && st->arg1 > 0)
                return rs_fail(err, RINGSIM_EPARAM,
                               "crush map: rule %s sets choose_local_fallback_tries, a legacy "
                               "tunable ringsim does not reproduce",
                               m->rules[r].name);
            if (st->op == CEPH_OP_SET_CHOOSELEAF_VARY_R && st->arg1 > 31)
                return rs_fail(err, RINGSIM_EPARAM, "crush map: rule %s: chooseleaf_vary_r over 31",
                               m->rules[r].name);
        }
    return 0;
}

void ceph_map_free(ceph_map *m)
{
    if (!m)
        return;
    for (int32_t i = 0; i < m->max_buckets; i++) {
        ceph_bucket *b = m->buckets[i];
        if (!b)
            continue;
        free(b->name);
        free(b->items);
        free(b->weights);
        free(b);
    }
    free(m->buckets);
    for (size_t i = 0; i < m->ntypes; i++)
        free(m->types[i].name);
    free(m->types);
    for (size_t i = 0; i < m->ndevices; i++) {
        free(m->devices[i].name);
        free(m->devices[i].klass);
    }
    free(m->devices);
    for (size_t i = 0; i < m->nrules; i++) {
        free(m->rules[i].name);
        free(m->rules[i].steps);
    }
    free(m->rules);
    free(m);
}

const ceph_bucket *ceph_bucket_by_name(const ceph_map *m, const char *name)
{
    for (int32_t i = 0; i < m->max_buckets; i++)
        if (m->buckets[i] && m->buckets[i]->name && !strcmp(m->buckets[i]->name, name))
            return m->buckets[i];
    return NULL;
}

const ceph_type *ceph_type_by_id(const ceph_map *m, int32_t id)
{
    for (size_t i = 0; i < m->ntypes; i++)
        if (m->types[i].id == id)
            return &m->types[i];
    return NULL;
}

const ceph_type *ceph_type_by_name(const ceph_map *m, const char *name)
{
    for (size_t i = 0; i < m->ntypes; i++)
        if (!strcmp(m->types[i].name, name))
            return &m->types[i];
    return NULL;
}

const ceph_rule *ceph_rule_by_name(const ceph_map *m, const char *name)
{
    for (size_t i = 0; i < m->nrules; i++)
        if (!strcmp(m->rules[i].name, name))
            return &m->rules[i];
    return NULL;
}

int ceph_weight_parse(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    float f = strtof(s, &end);
    if (end == s || *end || errno || !isfinite(f) || f < 0.0f || f >= 32768.0f)
        return RINGSIM_EPARAM;
    /* CrushCompiler: float_node(...) * (float)0x10000, stored in an int */
    *out = (uint32_t)(int32_t)(f * (float)0x10000);
    return 0;
}

size_t ceph_weight_format(uint32_t w, char *out)
{
    /* w / 65536 has at most 16 decimals; below 2^24 a float holds it
     * exactly, so printing every decimal makes strtof give it back.  The
     * parse range caps w below 2^31. */
    int n = snprintf(out, 32, "%.16f", (double)w / 65536.0);
    size_t len = n > 0 ? (size_t)n : 0;
    while (len > 1 && out[len - 1] == '0' && out[len - 2] != '.')
        len--;
    out[len] = 0;
    return len;
}
