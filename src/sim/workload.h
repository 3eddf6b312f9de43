/*
 * workload.h - the share of requests each stored key receives, and the
 * keys' value sizes (docs/api.md "Version 3: traffic").
 *
 * A workload is a small value: its kind and parameters, parsed from and
 * written to JSON with every default spelled out.  It knows nothing of the
 * store: the engine (sim_workload.c) ranks the stored keys and asks this
 * module what a rank, or a key, is worth.
 *
 *   uniform   every stored key 1/n
 *   zipf      rank r (1 = hottest) gets r^-s / H(n, s), H summed exactly
 *             (Neumaier's compensated sum, either order): no closed
 *             form, so s = 1 and n = 10M are exact too
 *   hotspot   the first h = max(1, floor(hot_fraction * n)) keys of the
 *             order share hot_share equally, the rest the remainder
 *   keys      listed keys take their shares, the others the rest equally
 *
 * Orders: `hashed` ranks by sha64(seed ":" key) ascending, ties by key
 * bytes; `insert` by insertion (the first inserted is the hottest).
 *
 * Costs: parsing is O(listed keys log listed keys); wl_share_of_rank is
 * O(1) once wl_norm has summed H (O(n) pow calls, or O(1) from a wl_table).
 */
#ifndef RINGSIM_WORKLOAD_H
#define RINGSIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "hash.h"

typedef enum { WL_UNIFORM, WL_ZIPF, WL_HOTSPOT, WL_KEYS } wl_kind;
typedef enum { WL_ORDER_HASHED, WL_ORDER_INSERT } wl_order;
typedef enum { WL_SIZE_FIXED, WL_SIZE_UNIFORM, WL_SIZE_KEYS } wl_size_kind;

/* A listed key with its share (kind keys) or its size (sizes keys). */
typedef struct wl_item {
    char *key; /* owned, NUL-terminated */
    size_t len;
    double share;
    int64_t bytes;
} wl_item;

typedef struct workload {
    wl_kind kind;
    double s;                       /* zipf */
    double hot_fraction, hot_share; /* hotspot */
    int64_t seed;                   /* zipf, hotspot */
    wl_order order;                 /* zipf, hotspot */
    wl_item *keys;                  /* kind keys, sorted by key bytes */
    size_t nkeys;
    bool has_sizes; /* "sizes" was given */
    wl_size_kind size_kind;
    int64_t bytes;               /* fixed (default 1) */
    int64_t min, max, size_seed; /* uniform */
    wl_item *size_keys;          /* sizes keys, sorted by key bytes */
    size_t nsize_keys;
    int64_t rest; /* sizes keys: every other key */
} workload;

/* The default: uniform, every key 1 byte.  Cannot fail. */
void wl_init(workload *w);
/* Frees what w owns and makes it the default again; accepts NULL. */
void wl_free(workload *w);
/* Deep copy into *dst (freed first). */
int wl_copy(workload *dst, const workload *src);

/* Parse {"kind", ...} (docs/api.md v3).  Refusals are RINGSIM_EPARAM with a
 * message: an unknown kind or parameter, s <= 0 or not finite, hot_fraction
 * outside (0, 1), hot_share outside [0, 1], shares negative or summing over
 * 1, a repeated key, bad sizes.  Whether listed keys are stored is the
 * engine's to check.  *out is initialised in every case. */
int wl_from_json(const json_t *j, workload *out, rs_error *err);
/* {"kind", ...every parameter with its default..., "sizes": {...}}; NULL
 * when out of memory.  The caller owns it. */
json_t *wl_to_json(const workload *w);
/* The same as compact text (malloc'd), NULL when out of memory. */
char *wl_to_text(const workload *w);

/* Whether every key has the share 1/n (kind uniform). */
static inline bool wl_is_uniform(const workload *w) { return w->kind == WL_UNIFORM; }
/* Whether shares depend on a rank (zipf, hotspot). */
static inline bool wl_ranked(const workload *w)
{
    return w->kind == WL_ZIPF || w->kind == WL_HOTSPOT;
}
/* Whether every key has the same size. */
static inline bool wl_sizes_fixed(const workload *w)
{
    return !w->has_sizes || w->size_kind == WL_SIZE_FIXED;
}
static inline int64_t wl_fixed_bytes(const workload *w) { return w->has_sizes ? w->bytes : 1; }

/* The ranking value of key under a hashed order: sha64(seed ":" key). */
uint64_t wl_hash_rank(const workload *w, hasher *h, const char *key, size_t len);
/* A key's value size in bytes. */
int64_t wl_size_of(const workload *w, hasher *h, const char *key, size_t len);
/* The listed entry of key in a sorted list, or NULL. */
const wl_item *wl_find(const wl_item *v, size_t n, const char *key, size_t len);

/* Neumaier's compensated sum (used for shares of nodes too). */
typedef struct wl_sum {
    double s, c;
} wl_sum;
static inline void wl_sum_add(wl_sum *a, double x)
{
    double t = a->s + x;
    if ((a->s >= 0 ? a->s : -a->s) >= (x >= 0 ? x : -x))
        a->c += (a->s - t) + x;
    else
        a->c += (x - t) + a->s;
    a->s = t;
}
static inline double wl_sum_get(const wl_sum *a) { return a->s + a->c; }

/* Normalisation of a ranked workload over n keys (zipf: H(n, s) by a
 * compensated sum; hotspot: the hot count).  Cannot fail. */
typedef struct wl_norm {
    uint64_t n;
    double h;     /* zipf: sum of r^-s, r = 1..n */
    uint64_t hot; /* hotspot: keys in the hot set */
} wl_norm;
void wl_norm_compute(const workload *w, uint64_t n, wl_norm *out);
/* Share of the key of rank r (1-based) among norm->n keys. */
double wl_share_of_rank(const workload *w, const wl_norm *norm, uint64_t r);

/* Zipf's weights r^-s and their running sums H(r, s), r = 1..n, kept so
 * that an engine summing shares again (after an insert) adds instead of
 * calling pow: 16 bytes a rank, extended as n grows, pow once a rank. */
typedef struct wl_table {
    double s;
    uint64_t n, cap;
    double *w; /* w[r - 1] = r^-s */
    double *h; /* h[r - 1] = H(r, s), bit for bit wl_norm_compute's */
    wl_sum run;
} wl_table;
/* Extend t to n ranks of exponent s (a table of another s starts again);
 * RINGSIM_ENOMEM, t unchanged but for its capacity. */
int wl_table_reach(wl_table *t, double s, uint64_t n);
void wl_table_free(wl_table *t);
/* wl_norm_compute, in O(1) from t when it covers zipf's n ranks. */
void wl_norm_table(const workload *w, const wl_table *t, uint64_t n, wl_norm *out);
/* The share of rank r, as wl_share_of_rank, from t when it covers r. */
static inline double wl_share_table(const workload *w, const wl_table *t, const wl_norm *m, uint64_t r)
{
    if (w->kind == WL_ZIPF && r >= 1 && r <= t->n && t->s == w->s && m->n)
        return t->w[r - 1] / m->h;
    return wl_share_of_rank(w, m, r);
}

/* YCSB's key name for record n (CoreWorkload.buildKeyName, insertorder=
 * hashed, zeropadding 1): "user" + Long.toString(Math.abs(fnvhash64(n)))
 * (Utils.java), Math.abs(Long.MIN_VALUE) staying negative as in Java.
 * Writes at most WL_YCSB_KEY_MAX bytes (with a NUL); returns the length. */
#define WL_YCSB_KEY_MAX 32
size_t wl_ycsb_key(uint64_t n, char *out);

#endif
