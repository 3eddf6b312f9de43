/*
 * alg_rendezvous.c - weighted rendezvous hashing (see alg_rendezvous.h).
 *
 * The owner is a single pass keeping the best (score, name); ties need the
 * names, which are compared only when two scores are equal.  The preference
 * list keeps the best r in a sorted array: a node enters by insertion only
 * when it beats the current r-th, so for random scores the expected work is
 * n comparisons plus O(r log n) insertions of O(r) each.
 */
#include "alg_rendezvous.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "rendezvous scores need double arithmetic evaluated in double (FLT_EVAL_METHOD 0)"
#endif

void rendezvous_node_hashes(hasher *h, const alg_node *nodes, size_t n, uint64_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = hash_sha64(h, nodes[i].name, nodes[i].len);
}

double rendezvous_score(uint64_t keyhash, uint64_t nodehash, double weight)
{
    double u = ((double)(hash_mix(keyhash ^ nodehash) >> 11) + 0.5) / 9007199254740992.0;
    return -weight / log(u);
}

/* Name a sorts before name b (bytes, a proper prefix first). */
static int name_less(const alg_node *a, const alg_node *b)
{
    size_t m = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->name, b->name, m);
    return c ? c < 0 : a->len < b->len;
}

/* Node i with score s ranks before node j with score t. */
static int ranks_before(const alg_node *nodes, uint32_t i, double s, uint32_t j, double t)
{
    if (s != t)
        return s > t;
    return name_less(&nodes[i], &nodes[j]);
}

int32_t rendezvous_lookup(uint64_t keyhash, const alg_node *nodes, const uint64_t *nodehash, size_t n)
{
    if (n == 0)
        return -1;
    uint32_t best = 0;
    double top = rendezvous_score(keyhash, nodehash[0], nodes[0].weight);
    for (uint32_t i = 1; i < n; i++) {
        double s = rendezvous_score(keyhash, nodehash[i], nodes[i].weight);
        if (s > top) {
            best = i;
            top = s;
        } else if (s == top && name_less(&nodes[i], &nodes[best])) {
            best = i; /* s is not needed past the call: nothing to keep */
        }
    }
    return (int32_t)best;
}

size_t rendezvous_top(uint64_t keyhash, const alg_node *nodes, const uint64_t *nodehash, size_t n,
                      rendezvous_pick *out, size_t r)
{
    size_t have = 0;
    if (r == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        double s = rendezvous_score(keyhash, nodehash[i], nodes[i].weight);
        if (have == r && s < out[r - 1].score)
            continue; /* the common case, decided without the names */
        if (have == r && !ranks_before(nodes, i, s, out[r - 1].node, out[r - 1].score))
            continue;
        size_t at = have < r ? have++ : r - 1; /* the slot freed at the end */
        while (at > 0 && ranks_before(nodes, i, s, out[at - 1].node, out[at - 1].score)) {
            out[at] = out[at - 1];
            at--;
        }
        out[at].node = i;
        out[at].score = s;
    }
    return have;
}
