/*
 * alg_ketama.c - libmemcached's weighted ketama continuum (see alg_ketama.h
 * for the reference and every rule reproduced).
 *
 * The float arithmetic of the point counts is written one operation per
 * statement in float, and this file is compiled with -ffp-contract=off
 * (cmake/alg_ketama.cmake) so that no step is fused or widened: Debian's
 * amd64 build of libmemcached computes in SSE single precision, step by step.
 * The labels are formatted by hand (no snprintf on the build path); the
 * points are sorted with qsort by (value, server index, point index), which
 * needs no context.
 *
 * MD5 is alg_md5's (OpenSSL's, one context per digest on the stack).
 */
#include "alg_ketama.h"

#include "alg_twemproxy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME 255u
#define POINTS_PER_SERVER_KETAMA 160u /* MEMCACHED_POINTS_PER_SERVER_KETAMA */

/* Word w (0..3) of a digest, little endian: ketama_server_hash's alignment. */
static uint32_t word_le(const unsigned char d[16], unsigned w)
{
    const unsigned char *p = d + 4 * w;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t ketama_key_hash(alg_md5 *m, const void *key, size_t len)
{
    unsigned char d[16];
    alg_md5_digest(m, key, len, d);
    return word_le(d, 0);
}

/* Decimal port of p[0..n): 1..65535, digits only. -1 otherwise. */
static long parse_port(const char *p, size_t n)
{
    long v = 0;
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
        if (v > 65535)
            return -1;
    }
    return v ? v : -1;
}

int ketama_parse_name(const char *name, size_t len, ketama_server *out, rs_error *err)
{
    const char *colon = NULL; /* the host/port separator, if any */
    if (len == 0 || len > MAX_NAME)
        return rs_fail(err, RINGSIM_ENAME, "ketama server names are 1 to %u bytes", MAX_NAME);
    /* A space is part of the host ("hello world"); after the port it
     * would start the weight, which the port's digits refuse below. */
    if (memchr(name, ',', len))
        return rs_fail(err, RINGSIM_ENAME,
                       "ketama server \"%.*s\": no ',' (it separates servers in a memcached "
                       "server list)",
                       (int)len, name);
    if (name[0] == '/') {
        /* A unix socket: libmemcached stores it with port 0. */
        if (memchr(name, ':', len))
            return rs_fail(err, RINGSIM_ENAME,
                           "ketama socket path \"%.*s\" cannot hold ':' (libmemcached would "
                           "read a port there)",
                           (int)len, name);
        *out = (ketama_server){name, len, 0};
        return 0;
    }
    if (name[0] == '[') {
        const char *close = memchr(name, ']', len);
        if (!close || close == name + 1 || memchr(name + 1, '[', (size_t)(close - name - 1)))
            return rs_fail(err, RINGSIM_ENAME,
                           "ketama server \"%.*s\": an IPv6 address is written [ADDRESS] or "
                           "[ADDRESS]:PORT",
                           (int)len, name);
        const char *after = close + 1, *end = name + len;
        if (after < end && *after != ':')
            return rs_fail(err, RINGSIM_ENAME,
                           "ketama server \"%.*s\": only \":PORT\" may follow \"]\"", (int)len, name);
        colon = after < end ? after : NULL;
        out->host = name;
        out->host_len = (size_t)(after - name);
    } else {
        for (size_t i = 0; i < len; i++)
            if (name[i] == '[' || name[i] == ']')
                return rs_fail(err, RINGSIM_ENAME,
                               "ketama server \"%.*s\": brackets only around an IPv6 address, "
                               "as in [::1]:11211",
                               (int)len, name);
        colon = memchr(name, ':', len);
        out->host = name;
        out->host_len = colon ? (size_t)(colon - name) : len;
        if (out->host_len == 0)
            return rs_fail(err, RINGSIM_ENAME,
                           "ketama server \"%.*s\" has no host (HOST or HOST:PORT)", (int)len, name);
    }
    out->port = KETAMA_DEFAULT_PORT;
    if (colon) {
        const char *p = colon + 1;
        size_t n = (size_t)(name + len - p);
        if (memchr(p, ':', n))
            return rs_fail(err, RINGSIM_ENAME,
                           "ketama server \"%.*s\": too many ':' (HOST:PORT; write IPv6 "
                           "addresses as [ADDRESS]:PORT)",
                           (int)len, name);
        long port = parse_port(p, n);
        if (port < 0)
            return rs_fail(err, RINGSIM_ENAME,
                           "ketama server \"%.*s\": the port is a number from 1 to 65535", (int)len,
                           name);
        out->port = (uint32_t)port;
    }
    return 0;
}

uint32_t ketama_server_points(uint32_t w, uint64_t total, uint32_t n)
{
    /* update_continuum, one float operation per line (see the file top). */
    float pct = (float)w / (float)total;
    float x = pct * (float)POINTS_PER_SERVER_KETAMA;
    x = x / 4.0f;
    x = x * (float)n;
    x = x + 0.0000000001f;
    return (uint32_t)(floor((double)x) * 4); /* libmemcached's floor of a double */
}

size_t ketama_label(const ketama_server *s, uint32_t k, char out[KETAMA_LABEL_MAX])
{
    /* host_len <= 255 (ketama_parse_name), so the label fits. */
    size_t n = s->host_len;
    memcpy(out, s->host, n);
    if (s->port != KETAMA_DEFAULT_PORT) {
        out[n++] = ':';
        n += alg_put_u64(out + n, s->port);
    }
    out[n++] = '-';
    n += alg_put_u64(out + n, k);
    out[n] = '\0';
    return n;
}

int ketama_build(alg_md5 *m, const alg_node *nodes, size_t n, alg_point **points, size_t *npoints,
                 rs_error *err)
{
    int rc;
    uint64_t total = 0;
    uint32_t *per = NULL;
    ketama_server *srv = NULL;
    alg_point *pt = NULL;
    size_t np = 0;

    *points = NULL;
    *npoints = 0;
    if (n == 0)
        return 0;
    if (n > UINT32_MAX)
        return rs_fail(err, RINGSIM_EPARAM, "ketama takes at most %u servers", UINT32_MAX);
    srv = malloc(n * sizeof *srv);
    per = malloc(n * sizeof *per);
    if (!srv || !per) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        double w = nodes[i].weight;
        rc = ketama_parse_name(nodes[i].name, nodes[i].len, &srv[i], err);
        if (rc)
            goto fail;
        if (!(w >= 1 && w <= KETAMA_MAX_WEIGHT && w == floor(w))) {
            rc = rs_fail(err, RINGSIM_EPARAM,
                         "ketama weights are whole numbers from 1 to 4294967295: \"%.*s\" "
                         "has %g",
                         (int)nodes[i].len, nodes[i].name, w);
            goto fail;
        }
        total += (uint64_t)w;
    }
    for (size_t i = 0; i < n; i++) {
        per[i] = ketama_server_points((uint32_t)nodes[i].weight, total, (uint32_t)n);
        np += per[i];
    }
    pt = malloc(np * sizeof *pt);
    if (!pt) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto fail;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < per[i] / 4; k++) {
            char label[KETAMA_LABEL_MAX];
            unsigned char d[16];
            size_t ll = ketama_label(&srv[i], k, label);
            alg_md5_digest(m, label, ll, d);
            for (unsigned x = 0; x < 4; x++)
                pt[at++] = (alg_point){word_le(d, x), (uint32_t)i, 4 * k + x};
        }
    }
    alg_sort_points(pt, np);
    free(per);
    free(srv);
    *points = pt;
    *npoints = np;
    return 0;
fail:
    free(pt);
    free(per);
    free(srv);
    return rc;
}

/* ---- the other modes ---- */

const char *const ketama_mode_names[KETAMA_NMODE + 1] = {"ketama_weighted", "ketama", "consistent",
                                                         NULL};
const char *const ketama_hash_names[KETAMA_NHASH + 1] = {
    "auto",    "one_at_a_time", "md5",    "crc",     "fnv1_64", "fnv1a_64",
    "fnv1_32", "fnv1a_32",      "murmur", "jenkins", NULL};

/* The same functions in nutcracker's table (see alg_ketama.h), and
 * libmemcached's numbers (types/hash.h: DEFAULT 0, MD5, CRC, FNV1_64,
 * FNV1A_64, FNV1_32, FNV1A_32, HSIEH, MURMUR, JENKINS). */
static const twemproxy_hash_fn as_tw[KETAMA_NHASH] = {
    [KETAMA_HASH_AUTO] = TW_MD5,        [KETAMA_HASH_ONE_AT_A_TIME] = TW_ONE_AT_A_TIME,
    [KETAMA_HASH_MD5] = TW_MD5,         [KETAMA_HASH_CRC] = TW_CRC32,
    [KETAMA_HASH_FNV1_64] = TW_FNV1_64, [KETAMA_HASH_FNV1A_64] = TW_FNV1A_64,
    [KETAMA_HASH_FNV1_32] = TW_FNV1_32, [KETAMA_HASH_FNV1A_32] = TW_FNV1A_32,
    [KETAMA_HASH_MURMUR] = TW_MURMUR,   [KETAMA_HASH_JENKINS] = TW_JENKINS,
};
static const int as_mc[KETAMA_NHASH] = {
    [KETAMA_HASH_AUTO] = 1,    [KETAMA_HASH_ONE_AT_A_TIME] = 0, [KETAMA_HASH_MD5] = 1,
    [KETAMA_HASH_CRC] = 2,     [KETAMA_HASH_FNV1_64] = 3,       [KETAMA_HASH_FNV1A_64] = 4,
    [KETAMA_HASH_FNV1_32] = 5, [KETAMA_HASH_FNV1A_32] = 6,      [KETAMA_HASH_MURMUR] = 8,
    [KETAMA_HASH_JENKINS] = 9,
};

int ketama_hash_memcached(ketama_hash_fn fn) { return as_mc[fn]; }

ketama_hash_fn ketama_hash_resolve(ketama_mode mode, ketama_hash_fn fn)
{
    if (fn != KETAMA_HASH_AUTO)
        return fn;
    return mode == KETAMA_MODE_WEIGHTED ? KETAMA_HASH_MD5 : KETAMA_HASH_ONE_AT_A_TIME;
}

uint32_t ketama_hash(alg_md5 *m, ketama_hash_fn fn, const void *key, size_t len)
{
    if (fn == KETAMA_HASH_MD5 || fn == KETAMA_HASH_AUTO)
        return ketama_key_hash(m, key, len);
    return twemproxy_hash(as_tw[fn], m, key, len);
}

int ketama_build_unweighted(alg_md5 *m, ketama_hash_fn fn, const alg_node *nodes, size_t n,
                            alg_point **points, size_t *npoints, rs_error *err)
{
    int rc;
    ketama_server sv;
    alg_point *pt = NULL;
    *points = NULL;
    *npoints = 0;
    if (n == 0)
        return 0;
    if (n > UINT32_MAX / KETAMA_POINTS_UNWEIGHTED)
        return rs_fail(err, RINGSIM_EPARAM, "ketama takes at most %u servers",
                       UINT32_MAX / KETAMA_POINTS_UNWEIGHTED);
    pt = malloc(n * KETAMA_POINTS_UNWEIGHTED * sizeof *pt);
    if (!pt)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        rc = ketama_parse_name(nodes[i].name, nodes[i].len, &sv, err);
        if (rc) {
            free(pt);
            return rc;
        }
        for (uint32_t k = 0; k < KETAMA_POINTS_UNWEIGHTED; k++) {
            char label[KETAMA_LABEL_MAX];
            size_t ll = ketama_label(&sv, k, label);
            pt[at++] = (alg_point){ketama_hash(m, fn, label, ll), (uint32_t)i, k};
        }
    }
    alg_sort_points(pt, at);
    *points = pt;
    *npoints = at;
    return 0;
}
