/*
 * algo_rendezvous.c - rendezvous (highest random weight) hashing
 * (alg_rendezvous.c) as a placement algorithm: every node scores the key,
 * the highest wins; no ring, no state.
 *
 * Cost: build one hash per node, a key O(n) (a score per node).
 */
#include <stdlib.h>

#include "alg_rendezvous.h"
#include "place_int.h"

static int rendezvous_build_op(placement *p, const place_from *from, rs_error *err)
{
    if (!(p->node_hash = malloc((p->n + 1) * sizeof *p->node_hash)))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    rendezvous_node_hashes(from->h, p->anodes, p->n, p->node_hash);
    return 0;
}

static void rendezvous_owner_of_hash(const placement *p, place_key_info *k)
{
    if (!p->n)
        return;
    int32_t o = rendezvous_lookup(k->hash, p->anodes, p->node_hash, p->n);
    k->owner = o;
}

static void rendezvous_key(const placement *p, hasher *h, const char *key, size_t len,
                           place_key_info *k)
{
    (void)h;
    (void)key;
    (void)len;
    k->hash = k->sha64;
    k->has_coord = false;
    rendezvous_owner_of_hash(p, k);
}

static size_t rendezvous_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out)
{
    rendezvous_pick pick[PLACE_MAX_PREFS];
    size_t got = rendezvous_top(k->hash, p->anodes, p->node_hash, p->n, pick, p->dom ? 1 : r);
    for (size_t i = 0; i < got; i++)
        out[i] = pick[i].node;
    /* replica_domain: the next highest score whose domain holds no replica
     * yet, one pick at a time (n scores a pick, no allocation) */
    while (p->dom && got > 0 && got < r) {
        long best = -1;
        double bs = 0;
        for (size_t i = 0; i < p->n; i++) {
            bool in = false;
            for (size_t q = 0; q < got && !in; q++)
                in = out[q] == (long)i;
            if (in || !place__domain_free(p, (long)i, out, got))
                continue;
            double sc = rendezvous_score(k->hash, p->node_hash[i], p->anodes[i].weight);
            if (best < 0 || sc > bs) {
                best = (long)i;
                bs = sc;
            }
        }
        if (best < 0)
            break;
        out[got++] = best;
    }
    return got;
}

static void rendezvous_shares(const placement *p, double *share)
{
    /* The logarithmic method gives each node exactly weight / total. */
    double total = 0;
    for (size_t i = 0; i < p->n; i++)
        total += p->nodes[i].weight;
    for (size_t i = 0; i < p->n; i++)
        share[i] = p->nodes[i].weight / total;
}

static void rendezvous_trace(const placement *p, const char *key, size_t len,
                             const place_key_info *k, const char *const *names, json_t *t)
{
    (void)key;
    (void)len;
    if (!place__trace_sha64(k, t))
        return;
    place__step(t, "scores",
                "every node scores -weight / ln(u), u from mix(sha64(key) xor sha64(name)); "
                "%zu node%s scored",
                p->n, p->n == 1 ? "" : "s");
    rendezvous_pick pick[3];
    size_t got = rendezvous_top(k->hash, p->anodes, p->node_hash, p->n, pick, 3);
    for (size_t i = 0; i < got; i++)
        place__step(t, i ? "runner-up" : "highest", "%s scores %.6g", names[pick[i].node],
                    pick[i].score);
    place__step(t, "owner", "%s has the highest score and owns the key", names[k->owner]);
}

const place_algo place_algo_rendezvous = {
    .name = "rendezvous",
    .title = "Rendezvous hashing (highest random weight), weighted",
    .origin = "Thaler & Ravishankar 1996; weights by the logarithmic method (Schindelhauer & "
              "Schomaker): every node scores the key, the highest wins; no ring, no state",
    .key_hash = "sha64 (SHA-256, first 64 bits)",
    .space = "none",
    .weights = PLACE_W_ANY,
    .replicas = PLACE_REP_HIGHEST,
    .coord_kind = PLACE_COORD_NONE,
    .col = -1,
    .coord_param = -1,
    .leave_local = true,
    .minimal = true,
    .top = place__top64,
    .build = rendezvous_build_op,
    .key = rendezvous_key,
    .owner_of_hash = rendezvous_owner_of_hash,
    .prefs = rendezvous_prefs,
    .shares = rendezvous_shares,
    .trace = rendezvous_trace,
    .down = PLACE_DOWN_REBUILD,
};
