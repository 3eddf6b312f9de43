/*
 * workload.c - workloads as values: JSON in and out, shares by rank, value
 * sizes by key (the design is in workload.h).
 */
#include "workload.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "vec.h"

void wl_init(workload *w)
{
    memset(w, 0, sizeof *w);
    w->kind = WL_UNIFORM;
    w->order = WL_ORDER_HASHED;
    w->size_kind = WL_SIZE_FIXED;
    w->bytes = 1;
    w->rest = 1;
}

static void items_free(wl_item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].key);
    free(v);
}

void wl_free(workload *w)
{
    if (!w)
        return;
    items_free(w->keys, w->nkeys);
    items_free(w->size_keys, w->nsize_keys);
    wl_init(w);
}

static int items_copy(wl_item **dst, const wl_item *src, size_t n)
{
    *dst = NULL;
    if (!n)
        return 0;
    wl_item *v = calloc(n, sizeof *v);
    if (!v)
        return RINGSIM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        v[i] = src[i];
        if (!(v[i].key = malloc(src[i].len + 1))) {
            items_free(v, i);
            return RINGSIM_ENOMEM;
        }
        memcpy(v[i].key, src[i].key, src[i].len + 1);
    }
    *dst = v;
    return 0;
}

int wl_copy(workload *dst, const workload *src)
{
    wl_free(dst);
    workload t = *src;
    t.keys = t.size_keys = NULL;
    if (items_copy(&t.keys, src->keys, src->nkeys) ||
        items_copy(&t.size_keys, src->size_keys, src->nsize_keys)) {
        items_free(t.keys, src->nkeys);
        return RINGSIM_ENOMEM;
    }
    *dst = t;
    return 0;
}

static int item_cmp(const void *a, const void *b)
{
    const wl_item *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

const wl_item *wl_find(const wl_item *v, size_t n, const char *key, size_t len)
{
    wl_item probe = {(char *)key, len, 0, 0};
    return n ? bsearch(&probe, v, n, sizeof *v, item_cmp) : NULL;
}

/* ---- parsing ---- */

static int refuse(rs_error *err, const char *fmt, const char *a)
{
    return rs_fail(err, RINGSIM_EPARAM, fmt, a);
}

/* Only these members may appear. */
static int only(const json_t *o, const char *const *allowed, const char *what, rs_error *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        bool ok = false;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = strcmp(k, allowed[i]) == 0;
        if (!ok) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s has no parameter %.80s", what, k);
            return refuse(err, "%s", msg);
        }
    }
    return 0;
}

/* A number member (absent: *out keeps its default): a JSON number, never
 * text (the command line's --param sends a plain decimal as a number). */
static int num(const json_t *o, const char *name, double *out, bool *given, rs_error *err)
{
    json_t *v = json_object_get(o, name);
    if (given)
        *given = v != NULL;
    if (!v)
        return 0;
    if (!json_is_number(v)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be a number%s%.40s%s", name,
                 json_is_string(v) ? ", not \"" : "", json_is_string(v) ? json_string_value(v) : "",
                 json_is_string(v) ? "\"" : "");
        return refuse(err, "%s", msg);
    }
    *out = json_number_value(v);
    if (!isfinite(*out))
        return refuse(err, "%s must be a finite number", name);
    return 0;
}

/* An integer member in [lo, hi]; text only where text_ok (a seed: its
 * decimal digits, which a JSON number past 2^53 would round). */
static int integer_of(const json_t *o, const char *name, int64_t lo, int64_t hi, bool text_ok,
                      int64_t *out, rs_error *err)
{
    json_t *v = json_object_get(o, name);
    if (!v)
        return 0;
    long long x;
    if (json_is_integer(v)) {
        x = json_integer_value(v);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
               fabs(json_real_value(v)) < 9e15) {
        x = (long long)json_real_value(v);
    } else if (text_ok && json_is_string(v)) {
        char *end;
        const char *t = json_string_value(v);
        errno = 0;
        x = strtoll(t, &end, 10);
        if (end == t || *end || errno || !(*t == '-' || (*t >= '0' && *t <= '9')))
            return refuse(err, "%s must be a decimal integer", name);
    } else {
        return refuse(err, "%s must be a decimal integer", name);
    }
    if (x < lo || x > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be from %lld to %lld", name, (long long)lo, (long long)hi);
        return refuse(err, "%s", msg);
    }
    *out = x;
    return 0;
}

static int integer(const json_t *o, const char *name, int64_t lo, int64_t hi, int64_t *out,
                   rs_error *err)
{
    return integer_of(o, name, lo, hi, false, out, err);
}

static int seed_of(const json_t *o, int64_t *out, rs_error *err)
{
    return integer_of(o, "seed", INT64_MIN, INT64_MAX, true, out, err);
}

static int order_of(const json_t *o, wl_order *out, rs_error *err)
{
    json_t *v = json_object_get(o, "order");
    if (!v)
        return 0;
    const char *t = json_string_value(v);
    if (t && strcmp(t, "hashed") == 0)
        *out = WL_ORDER_HASHED;
    else if (t && strcmp(t, "insert") == 0)
        *out = WL_ORDER_INSERT;
    else
        return refuse(err, "%s", "order must be \"hashed\" or \"insert\"");
    return 0;
}

/* [{"key", <field>}...] into a sorted list without repeats. */
static int items_parse(const json_t *arr, const char *field, bool bytes, wl_item **out, size_t *n,
                       rs_error *err)
{
    *out = NULL;
    *n = 0;
    if (!json_is_array(arr))
        return refuse(err, "keys must be a list of {\"key\", \"%s\"}", field);
    size_t m = json_array_size(arr);
    wl_item *v = m ? calloc(m, sizeof *v) : NULL;
    if (m && !v)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int rc = 0;
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        json_t *k = json_object_get(e, "key");
        if (!json_is_object(e) || !json_is_string(k)) {
            rc = refuse(err, "keys must be a list of {\"key\", \"%s\"}", field);
            break;
        }
        const char *allowed_one[] = {"key", field, NULL};
        if ((rc = only(e, allowed_one, "a listed key", err)))
            break;
        size_t len = json_string_length(k);
        if (name_check(json_string_value(k), len, "key", err)) {
            rc = rs_fail(err, RINGSIM_EPARAM, "a listed key is not a valid key, so not stored");
            break;
        }
        if (!json_object_get(e, field)) {
            rc = refuse(err, "every listed key needs its \"%s\"", field);
            break;
        }
        if (bytes) {
            if ((rc = integer(e, field, 0, INT64_C(1) << 50, &v[i].bytes, err)))
                break;
        } else {
            if ((rc = num(e, field, &v[i].share, NULL, err)))
                break;
            if (v[i].share < 0) {
                rc = refuse(err, "%s", "a key's share must not be negative");
                break;
            }
        }
        if (!(v[i].key = malloc(len + 1))) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            break;
        }
        memcpy(v[i].key, json_string_value(k), len + 1);
        v[i].len = len;
        *n = i + 1;
    }
    if (!rc && *n > 1) {
        qsort(v, *n, sizeof *v, item_cmp);
        for (size_t j = 1; j < *n && !rc; j++)
            if (item_cmp(&v[j - 1], &v[j]) == 0)
                rc = rs_fail(err, RINGSIM_EPARAM, "key %.255s is listed twice", v[j].key);
    }
    if (rc) {
        items_free(v, *n);
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}

static int sizes_parse(const json_t *j, workload *w, rs_error *err)
{
    if (!json_is_object(j))
        return refuse(err, "%s", "sizes must be an object {\"kind\", ...}");
    const char *k = json_string_value(json_object_get(j, "kind"));
    w->has_sizes = true;
    int rc;
    if (!k) {
        return refuse(err, "%s", "sizes needs a kind: fixed, uniform or keys");
    } else if (strcmp(k, "fixed") == 0) {
        static const char *const a[] = {"kind", "bytes", NULL};
        w->size_kind = WL_SIZE_FIXED;
        if ((rc = only(j, a, "sizes fixed", err)))
            return rc;
        if (!json_object_get(j, "bytes"))
            return refuse(err, "%s", "sizes fixed needs bytes");
        return integer(j, "bytes", 0, INT64_C(1) << 50, &w->bytes, err);
    } else if (strcmp(k, "uniform") == 0) {
        static const char *const a[] = {"kind", "min", "max", "seed", NULL};
        w->size_kind = WL_SIZE_UNIFORM;
        if ((rc = only(j, a, "sizes uniform", err)))
            return rc;
        if (!json_object_get(j, "min") || !json_object_get(j, "max"))
            return refuse(err, "%s", "sizes uniform needs min and max");
        if ((rc = integer(j, "min", 0, INT64_C(1) << 50, &w->min, err)) ||
            (rc = integer(j, "max", 0, INT64_C(1) << 50, &w->max, err)) ||
            (rc = seed_of(j, &w->size_seed, err)))
            return rc;
        if (w->min > w->max)
            return refuse(err, "%s", "sizes uniform needs min <= max");
        return 0;
    } else if (strcmp(k, "keys") == 0) {
        static const char *const a[] = {"kind", "keys", "rest", NULL};
        w->size_kind = WL_SIZE_KEYS;
        if ((rc = only(j, a, "sizes keys", err)))
            return rc;
        if (!json_object_get(j, "rest"))
            return refuse(err, "%s", "sizes keys needs rest (the size of every other key)");
        if ((rc = integer(j, "rest", 0, INT64_C(1) << 50, &w->rest, err)))
            return rc;
        return items_parse(json_object_get(j, "keys"), "bytes", true, &w->size_keys, &w->nsize_keys,
                           err);
    }
    return refuse(err, "unknown sizes kind %.60s (fixed, uniform, keys)", k);
}

static int parse(const json_t *j, workload *w, rs_error *err)
{
    if (!json_is_object(j))
        return refuse(err, "%s", "a workload is an object {\"kind\", ...}");
    json_t *jk = json_object_get(j, "kind");
    const char *k = json_string_value(jk);
    if (!jk)
        return refuse(err, "%s", "a workload needs its kind: uniform, zipf, hotspot or keys");
    if (!k)
        return refuse(err, "%s", "kind must be a string");
    int rc;
    bool given;
    if (strcmp(k, "uniform") == 0) {
        static const char *const a[] = {"kind", "sizes", NULL};
        w->kind = WL_UNIFORM;
        rc = only(j, a, "workload uniform", err);
    } else if (strcmp(k, "zipf") == 0) {
        static const char *const a[] = {"kind", "s", "seed", "order", "sizes", NULL};
        w->kind = WL_ZIPF;
        w->s = NAN;
        if ((rc = only(j, a, "workload zipf", err)) || (rc = num(j, "s", &w->s, &given, err)))
            return rc;
        if (!given)
            return refuse(err, "%s", "zipf needs s (the exponent, s > 0)");
        if (!(w->s > 0))
            return refuse(err, "%s", "s must be a finite number > 0");
        if ((rc = seed_of(j, &w->seed, err)))
            return rc;
        rc = order_of(j, &w->order, err);
    } else if (strcmp(k, "hotspot") == 0) {
        static const char *const a[] = {"kind",  "hot_fraction", "hot_share", "seed",
                                        "order", "sizes",        NULL};
        w->kind = WL_HOTSPOT;
        bool g2;
        if ((rc = only(j, a, "workload hotspot", err)) ||
            (rc = num(j, "hot_fraction", &w->hot_fraction, &given, err)) ||
            (rc = num(j, "hot_share", &w->hot_share, &g2, err)))
            return rc;
        if (!given || !g2)
            return refuse(err, "%s", "hotspot needs hot_fraction and hot_share");
        if (!(w->hot_fraction > 0 && w->hot_fraction < 1))
            return refuse(err, "%s", "hot_fraction must be inside (0, 1)");
        if (!(w->hot_share >= 0 && w->hot_share <= 1))
            return refuse(err, "%s", "hot_share must be inside [0, 1]");
        if ((rc = seed_of(j, &w->seed, err)))
            return rc;
        rc = order_of(j, &w->order, err);
    } else if (strcmp(k, "keys") == 0) {
        static const char *const a[] = {"kind", "keys", "sizes", NULL};
        w->kind = WL_KEYS;
        if ((rc = only(j, a, "workload keys", err)))
            return rc;
        if (!json_object_get(j, "keys"))
            return refuse(err, "%s", "workload keys needs keys: [{\"key\", \"share\"}...]");
        if ((rc = items_parse(json_object_get(j, "keys"), "share", false, &w->keys, &w->nkeys, err)))
            return rc;
        /* Over 1 is refused; within the rounding of the decimals given (an
         * ulp of 1 a share) the sum is taken as 1 and the shares scaled. */
        wl_sum t = {0, 0};
        for (size_t i = 0; i < w->nkeys; i++) {
            if (w->keys[i].share > 1)
                return refuse(err, "%s", "a key's share must be at most 1");
            wl_sum_add(&t, w->keys[i].share);
        }
        if (wl_sum_get(&t) > 1 + (double)w->nkeys * DBL_EPSILON)
            return refuse(err, "%s", "the keys' shares sum over 1");
    } else {
        return refuse(err, "unknown workload kind %.60s (uniform, zipf, hotspot, keys)", k);
    }
    if (!rc && json_object_get(j, "sizes"))
        rc = sizes_parse(json_object_get(j, "sizes"), w, err);
    return rc;
}

/* Twitter's production cache clusters as workloads (issue 29): the per
 * cluster figures of twitter/cache-trace's stat/2020Mar.md -- the Zipf
 * alpha fitted to each cluster's popularity and the mean value size in
 * bytes (the mean key size is kept for the words).  A cluster whose alpha
 * is 0 (write-mostly: every object about once) is uniform; clusters
 * without figures (5, 43, 46) have no preset.  Named twitter-clusterN. */
static const struct wl_preset {
    unsigned cluster;
    double alpha;
    unsigned key_bytes, value_bytes;
} presets[] = {
    {1, 2.6774, 80, 267},    {2, 1.4908, 21, 68},     {3, 1.6414, 19, 120},
    {4, 1.1004, 67, 2439},   {6, 1.882, 44, 252},     {7, 1.0666, 17, 1936},
    {8, 1.7366, 23, 9497},   {9, 1.6796, 32, 39},     {10, 0, 22, 2333},
    {11, 1.4891, 24, 170},   {12, 0.3048, 44, 1030},  {13, 0.4565, 44, 4266},
    {14, 1.2959, 96, 414},   {15, 0.0242, 18, 102},   {16, 1.7862, 18, 115},
    {17, 2.1106, 19, 212},   {18, 2.0994, 18, 37},    {19, 0.735, 42, 101},
    {20, 1.3699, 26, 55},    {21, 0.0521, 25, 1},     {22, 0.7624, 54, 4},
    {23, 0.274, 35, 224},    {24, 1.3726, 32, 699},   {25, 0.9929, 49, 28},
    {26, 0.6299, 122, 1745}, {27, 1.065, 66, 8},      {28, 1.503, 45, 85},
    {29, 1.2323, 36, 799},   {30, 1.4259, 22, 689},   {31, 0, 41, 15},
    {32, 0, 41, 138},        {33, 1.354, 24, 1118},   {34, 1.1401, 33, 322},
    {35, 0, 19, 1796},       {36, 1.2169, 23, 78},    {37, 0.4251, 72, 20134},
    {38, 0, 41, 185},        {39, 0, 41, 80},         {40, 0.8551, 44, 155},
    {41, 0.8542, 44, 171},   {42, 1.5974, 40, 4703},  {44, 1.4084, 25, 22},
    {45, 0.6372, 10, 120},   {47, 2.0637, 44, 267},   {48, 0.8191, 44, 70},
    {49, 1.5095, 44, 10658}, {50, 1.2816, 18, 67485}, {51, 1.9745, 44, 221},
    {52, 1.2117, 20, 273},   {53, 1.2061, 36, 9213},  {54, 1.611, 19, 246},
};

#define PRESET_PREFIX "twitter-cluster"

/* {"kind": "twitter-clusterN", ...}: the same object with the cluster's
 * kind, s and sizes (the preset's sizes replace any given); NULL when the
 * kind is no preset.  *err filled for a preset name that is unknown. */
static json_t *preset_expand(const json_t *j, int *rc, rs_error *err)
{
    *rc = 0;
    const char *k = json_string_value(json_object_get(j, "kind"));
    if (!k || strncmp(k, PRESET_PREFIX, sizeof PRESET_PREFIX - 1))
        return NULL;
    const char *num = k + sizeof PRESET_PREFIX - 1;
    char *end;
    unsigned long c = strtoul(num, &end, 10);
    const struct wl_preset *p = NULL;
    for (size_t i = 0; *num >= '0' && *num <= '9' && !*end && i < sizeof presets / sizeof *presets;
         i++)
        if (presets[i].cluster == c)
            p = &presets[i];
    if (!p) {
        *rc = refuse(err,
                     "no workload preset %.60s: twitter-cluster1 to twitter-cluster54 (not 5, 43 "
                     "or 46, which have no published figures)",
                     k);
        return NULL;
    }
    json_t *x = json_deep_copy(j);
    if (!x) {
        *rc = refuse(err, "%s", "out of memory");
        return NULL;
    }
    json_object_set_new(x, "kind", json_string(p->alpha > 0 ? "zipf" : "uniform"));
    if (p->alpha > 0)
        json_object_set_new(x, "s", json_real(p->alpha));
    json_object_set_new(
        x, "sizes", json_pack("{s:s, s:I}", "kind", "fixed", "bytes", (json_int_t)p->value_bytes));
    return x;
}

int wl_from_json(const json_t *j, workload *out, rs_error *err)
{
    wl_init(out);
    int rc = 0;
    json_t *x = json_is_object(j) ? preset_expand(j, &rc, err) : NULL;
    if (!x && json_is_object(j) && rc)
        return rc;
    rc = parse(x ? x : j, out, err);
    json_decref(x);
    if (rc)
        wl_free(out);
    return rc;
}

static const char *order_name(wl_order o) { return o == WL_ORDER_INSERT ? "insert" : "hashed"; }

static json_t *items_json(const wl_item *v, size_t n, bool bytes)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *e = bytes ? json_pack("{s:s%, s:I}", "key", v[i].key, v[i].len, "bytes",
                                      (json_int_t)v[i].bytes)
                          : json_pack("{s:s%, s:f}", "key", v[i].key, v[i].len, "share", v[i].share);
        if (!e || json_array_append_new(a, e)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *sizes_json(const workload *w)
{
    switch (w->has_sizes ? w->size_kind : WL_SIZE_FIXED) {
    case WL_SIZE_UNIFORM:
        return json_pack("{s:s, s:I, s:I, s:I}", "kind", "uniform", "min", (json_int_t)w->min,
                         "max", (json_int_t)w->max, "seed", (json_int_t)w->size_seed);
    case WL_SIZE_KEYS:
        return json_pack("{s:s, s:o*, s:I}", "kind", "keys", "keys",
                         items_json(w->size_keys, w->nsize_keys, true), "rest", (json_int_t)w->rest);
    default:
        return json_pack("{s:s, s:I}", "kind", "fixed", "bytes", (json_int_t)wl_fixed_bytes(w));
    }
}

json_t *wl_to_json(const workload *w)
{
    json_t *o = NULL;
    switch (w->kind) {
    case WL_ZIPF:
        o = json_pack("{s:s, s:f, s:I, s:s}", "kind", "zipf", "s", w->s, "seed",
                      (json_int_t)w->seed, "order", order_name(w->order));
        break;
    case WL_HOTSPOT:
        o = json_pack("{s:s, s:f, s:f, s:I, s:s}", "kind", "hotspot", "hot_fraction",
                      w->hot_fraction, "hot_share", w->hot_share, "seed", (json_int_t)w->seed,
                      "order", order_name(w->order));
        break;
    case WL_KEYS:
        o = json_pack("{s:s, s:o*}", "kind", "keys", "keys", items_json(w->keys, w->nkeys, false));
        break;
    default:
        o = json_pack("{s:s}", "kind", "uniform");
    }
    json_t *sz = o ? sizes_json(w) : NULL;
    if (!sz || json_object_set_new(o, "sizes", sz)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *wl_to_text(const workload *w)
{
    json_t *j = wl_to_json(w);
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(j);
    return t;
}

/* ---- values ---- */

/* seed ":" key, or "size:" seed ":" key, hashed. */
static uint64_t seeded(hasher *h, const char *pre, int64_t seed, const char *key, size_t len)
{
    char buf[64 + 256];
    int n = snprintf(buf, 64, "%s%lld:", pre, (long long)seed);
    if (len > 255)
        len = 255; /* keys are at most 255 bytes (names.h) */
    memcpy(buf + n, key, len);
    return hash_sha64(h, buf, (size_t)n + len);
}

uint64_t wl_hash_rank(const workload *w, hasher *h, const char *key, size_t len)
{
    return seeded(h, "", w->seed, key, len);
}

int64_t wl_size_of(const workload *w, hasher *h, const char *key, size_t len)
{
    if (!w->has_sizes)
        return 1;
    switch (w->size_kind) {
    case WL_SIZE_UNIFORM: {
        uint64_t span = (uint64_t)(w->max - w->min) + 1;
        return w->min + (int64_t)(seeded(h, "size:", w->size_seed, key, len) % span);
    }
    case WL_SIZE_KEYS: {
        const wl_item *e = wl_find(w->size_keys, w->nsize_keys, key, len);
        return e ? e->bytes : w->rest;
    }
    default:
        return w->bytes;
    }
}

void wl_norm_compute(const workload *w, uint64_t n, wl_norm *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (w->kind == WL_ZIPF) {
        /* Compensated (Neumaier): the error stays a few ulps at any n and
         * any s, in either order (no closed form, no approximation).  In
         * increasing r, as wl_table sums it, so the two agree bit for bit. */
        wl_sum t = {0, 0};
        for (uint64_t r = 1; r <= n; r++)
            wl_sum_add(&t, pow((double)r, -w->s));
        out->h = wl_sum_get(&t);
    } else if (w->kind == WL_HOTSPOT) {
        uint64_t hot = (uint64_t)floor(w->hot_fraction * (double)n);
        out->hot = hot < 1 ? 1 : hot > n ? n : hot;
    }
}

double wl_share_of_rank(const workload *w, const wl_norm *m, uint64_t r)
{
    if (!m->n)
        return 0;
    switch (w->kind) {
    case WL_ZIPF:
        return pow((double)r, -w->s) / m->h;
    case WL_HOTSPOT:
        /* Every key hot (n = 1, or a tiny n): they share everything. */
        if (m->hot >= m->n)
            return 1.0 / (double)m->n;
        return r <= m->hot ? w->hot_share / (double)m->hot
                           : (1 - w->hot_share) / (double)(m->n - m->hot);
    default:
        return 1.0 / (double)m->n;
    }
}

void wl_table_free(wl_table *t)
{
    free(t->w);
    free(t->h);
    memset(t, 0, sizeof *t);
}

int wl_table_reach(wl_table *t, double s, uint64_t n)
{
    if (t->n && t->s != s)
        wl_table_free(t);
    if (n <= t->n)
        return 0;
    if (n > t->cap) {
        size_t cap;
        if (n > SIZE_MAX / sizeof *t->w || vec_next_cap((size_t)t->cap, (size_t)n, 1024, &cap) ||
            vec_realloc(&t->w, cap, sizeof *t->w) || vec_realloc(&t->h, cap, sizeof *t->h))
            return RINGSIM_ENOMEM;
        t->cap = cap;
    }
    t->s = s;
    for (uint64_t r = t->n + 1; r <= n; r++) {
        /* the same terms, in the same order, as wl_norm_compute */
        t->w[r - 1] = pow((double)r, -s);
        wl_sum_add(&t->run, t->w[r - 1]);
        t->h[r - 1] = wl_sum_get(&t->run);
    }
    t->n = n;
    return 0;
}

void wl_norm_table(const workload *w, const wl_table *t, uint64_t n, wl_norm *out)
{
    if (w->kind != WL_ZIPF || n > t->n || !n || t->s != w->s) {
        wl_norm_compute(w, n, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->n = n;
    out->h = t->h[n - 1];
}

size_t wl_ycsb_key(uint64_t n, char *out)
{
    /* Utils.fnvhash64: FNV-1 over the 8 low-first octets of the long;
     * Java's >> is arithmetic, so a negative n shifts in ones. */
    int64_t val = (int64_t)n;
    uint64_t h = 0xCBF29CE484222325ull;
    for (int i = 0; i < 8; i++) {
        uint64_t octet = (uint64_t)val & 0xff;
        val = (int64_t)((uint64_t)val >> 8 | (val < 0 ? 0xff00000000000000ull : 0));
        h ^= octet;
        h *= 1099511628211ull;
    }
    int64_t v = (int64_t)h;
    /* Math.abs(long): -v in two's complement, so Long.MIN_VALUE stays. */
    if (v < 0)
        v = (int64_t)(0 - (uint64_t)v);
    return (size_t)snprintf(out, WL_YCSB_KEY_MAX, "user%lld", (long long)v);
}
