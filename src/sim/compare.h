/*
 * compare.h - "which scheme should I pick": the current nodes and keys
 * placed by several algorithm configurations side by side, recorded nowhere.
 *
 * For each configuration: key statistics (from the stored keys, or an even
 * sample of them, scaled), structural balance (largest share of the space
 * over the mean, independent of the keys), lookup time per key (hash
 * included), the layout's memory, the keys that would move if one more node
 * (`compare-probe`) joined, and the mean over up to 4 nodes of the keys
 * that would move if that node left.  Cost: about (2 + 4) lookups per
 * sampled key per configuration.
 */
#ifndef RINGSIM_COMPARE_H
#define RINGSIM_COMPARE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "place.h"
#include "sim.h"

typedef struct compare_result {
    place_config cfg; /* in: the configuration to try */
    int rc;           /* out: 0, or why it cannot place these nodes */
    rs_error err;
    sim_stats stats;
    double structural, lookup_ns;
    size_t memory_bytes;
    bool has_added;
    double moves_if_added, moves_if_removed;
    double requests_if_added, requests_if_removed; /* shares of requests */
    double bytes_if_added, bytes_if_removed;       /* the moved keys' sizes */
    double req_max_over_mean, req_cv;              /* of the nodes' request shares */
    double unav_requests, unav_bytes;              /* what nobody serves (stats.unavailable) */
    size_t removed_sampled, removed_of;
} compare_result;

typedef struct compare_sample {
    int64_t keys;    /* stored keys */
    int64_t sampled; /* keys placed (== keys when not sampled) */
    uint64_t step;   /* every step-th key, in key order */
} compare_sample;

/* Fill res[0..nres) (cfg set by the caller).  max_keys bounds the sample
 * (0: all keys).  A configuration that cannot place the current nodes gets
 * rc and err; the call itself fails only when the keys cannot be read. */
int compare_run(sim *s, compare_result *res, size_t nres, uint64_t max_keys, compare_sample *info,
                rs_error *err);

/* ---- theory beside measurement ----
 * For n nodes of weight 1 (named as every algorithm accepts), the
 * structural max/mean of the seed's ring at each points_per_node in v[],
 * beside the expected 1 + sqrt(2 ln n / V); and for every algorithm at its
 * defaults, its structural max/mean and the fraction of keys a join moves
 * (measured on `sample` generated keys) beside the ideal 1 / (n + 1). */
typedef struct theory_point {
    int64_t v;              /* points per node */
    double expected, ring;  /* max/mean: formula, measured */
    double ring_join_moved; /* fraction of keys a join moves with V points */
} theory_point;

typedef struct theory_alg {
    char name[32];
    int rc; /* nonzero: the algorithm cannot place these nodes (err) */
    rs_error err;
    double structural, join_moved;
} theory_alg;

/* pts[npts] with v set by the caller; algs[nalgs] with name set. */
int compare_theory(hasher *h, size_t n, theory_point *pts, size_t npts, theory_alg *algs,
                   size_t nalgs, size_t sample, rs_error *err);

#endif
