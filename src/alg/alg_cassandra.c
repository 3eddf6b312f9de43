/*
 * alg_cassandra.c - Murmur3Partitioner tokens and the token ring (see
 * alg_cassandra.h).
 *
 * The hash is written over uint64_t so that every wrap-around is defined C;
 * Java's signed longs wrap the same way bit for bit.  The ring is sorted
 * through a scratch array carrying each name (no global comparator
 * context); equal tokens are then adjacent, which is where the duplicate
 * rules apply.
 */
#include "alg_cassandra.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rotl64(uint64_t v, int n) { return v << n | v >> (64 - n); }

static uint64_t fmix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* getblock: eight bytes, little-endian, each masked with 0xff. */
static uint64_t block(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The tail byte as Java reads it: (long) of a signed byte. */
static uint64_t tail(const unsigned char *p, int i) { return (uint64_t)(int64_t)(signed char)p[i]; }

int64_t cassandra_murmur3(const void *key, size_t len)
{
    const unsigned char *d = key;
    const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
    uint64_t h1 = 0, h2 = 0; /* seed 0 */
    size_t nblocks = len >> 4;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = block(d + 16 * i), k2 = block(d + 16 * i + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    const unsigned char *t = d + 16 * nblocks;
    uint64_t k1 = 0, k2 = 0;
    switch (len & 15) {
    case 15:
        k2 ^= tail(t, 14) << 48; /* fall through */
    case 14:
        k2 ^= tail(t, 13) << 40; /* fall through */
    case 13:
        k2 ^= tail(t, 12) << 32; /* fall through */
    case 12:
        k2 ^= tail(t, 11) << 24; /* fall through */
    case 11:
        k2 ^= tail(t, 10) << 16; /* fall through */
    case 10:
        k2 ^= tail(t, 9) << 8; /* fall through */
    case 9:
        k2 ^= tail(t, 8);
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        /* fall through */
    case 8:
        k1 ^= tail(t, 7) << 56; /* fall through */
    case 7:
        k1 ^= tail(t, 6) << 48; /* fall through */
    case 6:
        k1 ^= tail(t, 5) << 40; /* fall through */
    case 5:
        k1 ^= tail(t, 4) << 32; /* fall through */
    case 4:
        k1 ^= tail(t, 3) << 24; /* fall through */
    case 3:
        k1 ^= tail(t, 2) << 16; /* fall through */
    case 2:
        k1 ^= tail(t, 1) << 8; /* fall through */
    case 1:
        k1 ^= tail(t, 0);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        break;
    default:
        break;
    }
    h1 ^= (uint64_t)len; /* Java's int length, non-negative */
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 += h2;
    return (int64_t)h1; /* two's complement on every target */
}

int64_t cassandra_token(const char *key, size_t len)
{
    if (len == 0)
        return INT64_MIN;
    int64_t h = cassandra_murmur3(key, len);
    return h == INT64_MIN ? INT64_MAX : h;
}

int cassandra_parse_token(const char *s, size_t len, int64_t *out, rs_error *err)
{
    size_t i = 0;
    int neg = 0;
    if (len > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len)
        goto bad;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            goto bad;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10)
            goto bad;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
bad:
    return rs_fail(err, RINGSIM_EPARAM,
                   "a cassandra token is a whole number from -9223372036854775808 to "
                   "9223372036854775807: got \"%.*s\"",
                   (int)(len > 40 ? 40 : len), s);
}

int cassandra_check_num_tokens(long long num_tokens, rs_error *err)
{
    if (num_tokens < 1 || num_tokens > CASSANDRA_MAX_NUM_TOKENS)
        return rs_fail(err, RINGSIM_EPARAM,
                       "cassandra num_tokens must be a whole number from 1 to %d (Cassandra's "
                       "maximum per node): got %lld",
                       CASSANDRA_MAX_NUM_TOKENS, num_tokens);
    return 0;
}

typedef struct sort_point {
    uint64_t coord;
    const char *name;
    size_t len;
    uint32_t node, index;
    int is_explicit;
} sort_point;

static int cmp_point(const void *a, const void *b)
{
    const sort_point *x = a, *y = b;
    if (x->coord != y->coord)
        return x->coord < y->coord ? -1 : 1;
    int c = alg_bytes_cmp(x->name, x->len, y->name, y->len);
    if (c)
        return c;
    if (x->node != y->node) /* names are unique; never for real nodes */
        return x->node < y->node ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Tokens node i will hold, or -1 (with err filled) when over the limit. */
static long tokens_of(const alg_node *node, const cassandra_tokens *ex, uint32_t num_tokens,
                      rs_error *err)
{
    if (ex && ex->count > 0) {
        if (ex->count > CASSANDRA_MAX_NUM_TOKENS) {
            rs_fail(err, RINGSIM_EPARAM, "cassandra nodes hold at most %d tokens: \"%.*s\" lists %zu",
                    CASSANDRA_MAX_NUM_TOKENS, (int)node->len, node->name, ex->count);
            return -1;
        }
        return (long)ex->count;
    }
    double p = round((double)num_tokens * node->weight);
    if (!(p <= CASSANDRA_MAX_NUM_TOKENS)) {
        rs_fail(err, RINGSIM_EPARAM,
                "cassandra nodes hold at most %d tokens: \"%.*s\" would hold %.0f "
                "(num_tokens %u x weight %g)",
                CASSANDRA_MAX_NUM_TOKENS, (int)node->len, node->name, p, num_tokens, node->weight);
        return -1;
    }
    return p < 1 ? 1 : (long)p;
}

static bool derived(const cassandra_tokens *ex, size_t i) { return !ex || ex[i].count == 0; }

/* For each node of the previous ring, its index among nodes when it stays
 * with the same derived tokens (name, token count, no explicit list; so its
 * tokens are the same), else -1: now[0..prev->n).  *kept: whether node i
 * keeps its tokens. */
static int match_prev(const alg_node *nodes, size_t n, const cassandra_tokens *ex,
                      uint32_t num_tokens, const cassandra_prev *prev, long *now, bool *kept)
{
    alg_named *ord = malloc((prev->n + 1) * sizeof *ord);
    if (!ord)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < prev->n; i++) {
        ord[i] = (alg_named){prev->nodes[i].name, prev->nodes[i].len, i};
        now[i] = -1;
    }
    alg_named_sort(ord, prev->n);
    for (size_t i = 0; i < n; i++) {
        long j = derived(ex, i) ? alg_named_find(ord, prev->n, nodes[i].name, nodes[i].len) : -1;
        if (j >= 0 && derived(prev->ex, (size_t)j) &&
            tokens_of(&nodes[i], NULL, num_tokens, NULL) ==
                tokens_of(&prev->nodes[j], NULL, prev->num_tokens, NULL)) {
            now[j] = (long)i;
            kept[i] = true;
        }
    }
    free(ord);
    return 0;
}

int cassandra_ring_from(const alg_node *nodes, size_t n, const cassandra_tokens *explicit_tokens,
                        uint32_t num_tokens, const cassandra_prev *prev, alg_point **out,
                        size_t *count, rs_error *err)
{
    *out = NULL;
    *count = 0;
    size_t total = 0, longest = 0;
    for (size_t i = 0; i < n; i++) {
        longest = nodes[i].len > longest ? nodes[i].len : longest;
        long t = tokens_of(&nodes[i], explicit_tokens ? &explicit_tokens[i] : NULL, num_tokens, err);
        if (t < 0)
            return RINGSIM_EPARAM;
        total += (size_t)t;
    }
    int rc = RINGSIM_ENOMEM;
    bool afresh = false; /* prev is not the ring it claims to be */
    /* room for prev's points besides: a prev that is not what it claims
     * (more points on a node) is found below, not written past the end */
    sort_point *sp = malloc((total + (prev ? prev->npts : 0) + 1) * sizeof *sp);
    sort_point *fresh = malloc((total ? total : 1) * sizeof *fresh);
    alg_point *pts = malloc((total ? total : 1) * sizeof *pts);
    size_t label_cap = longest + 24; /* "#" and a long's digits */
    char *label = malloc(label_cap);
    long *now = prev ? malloc((prev->n + 1) * sizeof *now) : NULL;
    bool *kept = calloc(n + 1, sizeof *kept);
    if (!sp || !fresh || !pts || !label || !kept || (prev && !now))
        goto fail;
    if (prev && match_prev(nodes, n, explicit_tokens, num_tokens, prev, now, kept))
        goto fail;
    /* The tokens of the nodes that do not keep theirs, sorted. */
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        const cassandra_tokens *ex = explicit_tokens ? &explicit_tokens[i] : NULL;
        const alg_node *nd = &nodes[i];
        long t = kept[i] ? 0 : tokens_of(nd, ex, num_tokens, NULL);
        for (long j = 0; j < t; j++) {
            int64_t tok;
            if (ex && ex->count > 0) {
                tok = ex->tokens[j];
            } else {
                memcpy(label, nd->name, nd->len);
                size_t ll = nd->len;
                if (j > 0)
                    ll += (size_t)snprintf(label + ll, label_cap - ll, "#%ld", j);
                tok = cassandra_token(label, ll);
            }
            fresh[nf++] = (sort_point){alg_from_signed(tok), nd->name,    nd->len,
                                       (uint32_t)i,          (uint32_t)j, ex && ex->count > 0};
        }
    }
    qsort(fresh, nf, sizeof *fresh, cmp_point);
    /* The kept tokens stay in order (their names are the same): merge. */
    size_t k = 0, a = 0;
    size_t np = prev ? prev->npts : 0;
    for (size_t i = 0; i <= np; i++) {
        sort_point q;
        bool have = false;
        if (i < np && prev->pts[i].node < prev->n && now[prev->pts[i].node] >= 0) {
            const alg_node *nd = &nodes[now[prev->pts[i].node]];
            q = (sort_point){
                prev->pts[i].coord, nd->name, nd->len, (uint32_t)now[prev->pts[i].node],
                prev->pts[i].index, 0};
            have = true;
        }
        while (a < nf && (i == np || (have && cmp_point(&fresh[a], &q) < 0)))
            sp[k++] = fresh[a++];
        if (have)
            sp[k++] = q;
    }
    afresh = k != total || a != nf;
    size_t m = 0;
    for (size_t i = 0; !afresh && i < total; i++) {
        const sort_point *p = &sp[i];
        if (i > 0 && sp[i - 1].coord == p->coord) {
            const sort_point *q = &sp[i - 1];
            if (q->node == p->node && q->is_explicit)
                continue; /* listed twice by one node: one endpoint per token */
            if (q->node != p->node && (q->is_explicit || p->is_explicit)) {
                rc = rs_fail(err, RINGSIM_EPARAM,
                             "cassandra token %lld is held by both \"%.*s\" and \"%.*s\"; "
                             "Cassandra refuses a token another node already owns",
                             (long long)alg_to_signed(p->coord), (int)q->len, q->name, (int)p->len,
                             p->name);
                goto fail;
            }
        }
        pts[m++] = (alg_point){p->coord, p->node, p->index};
    }
    if (!afresh) {
        *out = pts;
        *count = m;
        pts = NULL;
        rc = 0;
    }
fail:
    free(label);
    free(sp);
    free(fresh);
    free(pts);
    free(now);
    free(kept);
    if (afresh)
        return cassandra_ring_from(nodes, n, explicit_tokens, num_tokens, NULL, out, count, err);
    return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
}

int cassandra_ring(const alg_node *nodes, size_t n, const cassandra_tokens *explicit_tokens,
                   uint32_t num_tokens, alg_point **out, size_t *count, rs_error *err)
{
    return cassandra_ring_from(nodes, n, explicit_tokens, num_tokens, NULL, out, count, err);
}

size_t cassandra_lookup(const alg_point *pts, size_t n, int64_t token)
{
    return alg_successor(pts, n, alg_from_signed(token));
}

size_t cassandra_replicas(const alg_point *pts, size_t n, size_t first, uint32_t *out, size_t r)
{
    size_t got = 0;
    for (size_t j = 0; j < n && got < r; j++) {
        uint32_t node = pts[(first + j) % n].node;
        size_t s = 0;
        while (s < got && out[s] != node)
            s++;
        if (s == got)
            out[got++] = node;
    }
    return got;
}

/* ---- NetworkTopologyStrategy ---- */

static bool has_u32(const uint32_t *v, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

size_t cassandra_nts_replicas(const cassandra_topo *t, size_t first, uint32_t *out, size_t cap)
{
    /* DatacenterEndpoints per datacenter: rfLeft = min(rf, nodes),
     * acceptableRackRepeats = rf - racks; the seen racks are (dc, rack)
     * pairs, one id each.  Racks enter the seen set only with a replica,
     * so there are at most cap of them. */
    long left[64], repeats[64];
    uint32_t seen[64];
    size_t nseen = 0, got = 0, ndc = t->ndc < 64 ? t->ndc : 64, to_fill = 0;
    for (size_t d = 0; d < ndc; d++) {
        bool live = t->rf[d] > 0 && t->dc_nodes[d] > 0;
        left[d] = live ? (long)(t->rf[d] < t->dc_nodes[d] ? t->rf[d] : t->dc_nodes[d]) : 0;
        repeats[d] = (long)t->rf[d] - (long)t->dc_racks[d];
        to_fill += live;
    }
    for (size_t j = 0; j < t->npts && to_fill > 0; j++) {
        uint32_t ep = t->pts[(first + j) % t->npts].node;
        int d = t->dc[ep];
        if (d < 0 || (size_t)d >= ndc || left[d] == 0)
            continue;
        uint32_t rk = t->rack[ep];
        if (!has_u32(seen, nseen, rk)) { /* a new rack: always taken */
            if (nseen < sizeof seen / sizeof *seen)
                seen[nseen++] = rk;
        } else if (repeats[d] <= 0 || has_u32(out, got, ep)) {
            continue; /* no repeat allowed, or the node is in already */
        } else {
            repeats[d]--;
        }
        if (got == cap)
            break;
        out[got++] = ep;
        if (--left[d] == 0)
            to_fill--;
    }
    return got;
}

/* The Python driver's walk for ring index i (make_token_replica_map). */
static long python_walk(const cassandra_topo *t, size_t first, uint32_t *out, size_t cap,
                        uint32_t *skip, uint32_t *racks)
{
    size_t got = 0;
    /* datacenters in the order of their first token from ring[0] */
    for (size_t pass = 0; pass < t->npts; pass++) {
        int d = t->dc[t->pts[pass].node];
        bool first_of_dc = true;
        for (size_t q = 0; q < pass && first_of_dc; q++)
            first_of_dc = t->dc[t->pts[q].node] != d;
        if (d < 0 || !first_of_dc || t->rf[d] == 0)
            continue;
        /* this dc's tokens from the first one at or after `first` */
        size_t ntok = 0, start = SIZE_MAX;
        for (size_t q = 0; q < t->npts; q++)
            if (t->dc[t->pts[q].node] == d) {
                if (q >= first && start == SIZE_MAX)
                    start = ntok;
                ntok++;
            }
        if (start == SIZE_MAX)
            start = 0;
        long remaining = t->rf[d];
        uint32_t this_dc = 0;
        size_t nskip = 0, nracks = 0;
        for (size_t step = 0; step < ntok; step++) {
            size_t want = (start + step) % ntok, q = 0, seen = 0;
            for (; q < t->npts; q++)
                if (t->dc[t->pts[q].node] == d && seen++ == want)
                    break;
            uint32_t h = t->pts[q].node;
            if (remaining == 0 || this_dc == t->dc_nodes[d])
                break;
            if (has_u32(out, got, h))
                continue;
            if (has_u32(racks, nracks, t->rack[h]) && nracks < t->dc_racks[d]) {
                skip[nskip++] = h;
                continue;
            }
            if (got == cap)
                return (long)got;
            out[got++] = h;
            this_dc++;
            remaining--;
            racks[nracks++] = t->rack[h];
            if (nracks == t->dc_racks[d]) {
                for (size_t k = 0; k < nskip && remaining > 0 && got < cap; k++, remaining--)
                    out[got++] = skip[k];
                nskip = 0;
            }
        }
    }
    return (long)got;
}

/* The Node.js driver's walk (getReplicasNetworkTopology). */
static long nodejs_walk(const cassandra_topo *t, size_t first, uint32_t *out, size_t cap,
                        uint32_t *skip, uint32_t *racks, uint32_t *racks_dc, uint32_t *by_dc)
{
    size_t got = 0, nskip = 0, nracks = 0;
    for (size_t d = 0; d < t->ndc; d++)
        by_dc[d] = 0;
    for (size_t j = 0; j < t->npts; j++) {
        uint32_t h = t->pts[(first + j) % t->npts].node;
        if (has_u32(out, got, h))
            continue;
        int d = t->dc[h];
        if (d < 0 || t->rf[d] == 0)
            continue;
        uint32_t dc_rf = t->rf[d] < t->dc_nodes[d] ? t->rf[d] : t->dc_nodes[d];
        if (by_dc[d] >= dc_rf)
            continue;
        size_t placed = 0;
        bool rack_in = false;
        for (size_t k = 0; k < nracks; k++)
            if (racks_dc[k] == (uint32_t)d) {
                placed++;
                rack_in |= racks[k] == t->rack[h];
            }
        if (rack_in && placed < t->dc_racks[d]) {
            if (nskip < dc_rf - by_dc[d])
                skip[nskip++] = h;
            continue;
        }
        if (got == cap)
            break;
        by_dc[d]++;
        out[got++] = h;
        if (!rack_in) {
            racks[nracks] = t->rack[h];
            racks_dc[nracks++] = (uint32_t)d;
            if (placed + 1 == t->dc_racks[d]) /* the shared list, into this dc */
                for (size_t k = 0; k < nskip && by_dc[d] < dc_rf && got < cap; k++, by_dc[d]++)
                    out[got++] = skip[k];
        }
        bool done = true;
        for (size_t e = 0; e < t->ndc && done; e++) {
            uint32_t rf = t->rf[e] < t->dc_nodes[e] ? t->rf[e] : t->dc_nodes[e];
            done = !(rf > 0 && by_dc[e] < rf);
        }
        if (done)
            break;
    }
    return (long)got;
}

long cassandra_nts_driver(const cassandra_topo *t, cassandra_driver d, size_t first, uint32_t *out,
                          size_t cap)
{
    size_t m = t->npts + t->n + t->ndc + 1;
    uint32_t *w = malloc(4 * m * sizeof *w);
    if (!w)
        return -1;
    long got = d == CASSANDRA_DRIVER_PYTHON
                   ? python_walk(t, first, out, cap, w, w + m)
                   : nodejs_walk(t, first, out, cap, w, w + m, w + 2 * m, w + 3 * m);
    free(w);
    return got;
}
