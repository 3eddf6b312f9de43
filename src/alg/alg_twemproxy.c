/*
 * alg_twemproxy.c - nutcracker's ketama continuum and its twelve key
 * hashes.  See alg_twemproxy.h for the rules and the upstream files.
 *
 * Each hash is written from the behaviour of nutcracker's function on
 * x86-64, where `char` is signed: a byte read through `const char *` and
 * widened is sign-extended, here spelled out as (signed char).  The CRC
 * tables are not copied: each step is computed bit by bit (the tables are
 * those steps precomputed).  MD5 is OpenSSL's, through alg_md5.  The
 * point count is float arithmetic one operation per line,
 * compiled without fused multiply-add (cmake/alg_twemproxy.cmake).
 */
#include "alg_twemproxy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

const char *const twemproxy_hash_names[TW_NHASH + 1] = {
    "one_at_a_time", "md5",      "crc16", "crc32",  "crc32a",  "fnv1_64", "fnv1a_64",
    "fnv1_32",       "fnv1a_32", "hsieh", "murmur", "jenkins", NULL};

/* A byte as nutcracker widens a `char` (signed on x86-64). */
static uint32_t sx32(unsigned char c) { return (uint32_t)(int32_t)(signed char)c; }
static uint64_t sx64(unsigned char c) { return (uint64_t)(int64_t)(signed char)c; }

static uint32_t one_at_a_time(const unsigned char *k, size_t len)
{
    uint32_t v = 0;
    while (len--) {
        v += sx32(*k++);
        v += v << 10;
        v ^= v >> 6;
    }
    v += v << 3;
    v ^= v >> 11;
    v += v << 15;
    return v;
}

static uint32_t md5_word(alg_md5 *m, const unsigned char *k, size_t len)
{
    unsigned char d[16];
    alg_md5_digest(m, k, len, d);
    return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
}

/* CRC-16/XMODEM's table entry for byte i (polynomial 0x1021). */
static uint32_t crc16_entry(uint32_t i)
{
    uint32_t t = i << 8;
    for (int b = 0; b < 8; b++)
        t = (t & 0x8000u) ? ((t << 1) ^ 0x1021u) & 0xffffu : (t << 1) & 0xffffu;
    return t;
}

static uint32_t crc16(const unsigned char *k, size_t len)
{
    uint32_t crc = 0; /* never masked to 16 bits, as nc_crc16.c */
    for (size_t x = 0; x < len; x++)
        crc = (crc << 8) ^ crc16_entry(((crc >> 8) ^ k[x]) & 0xffu);
    return crc;
}

static uint32_t crc32a(const unsigned char *k, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    while (len) { /* zlib takes a uInt length */
        uInt part = len > 0x40000000u ? 0x40000000u : (uInt)len;
        c = crc32(c, k, part);
        k += part;
        len -= part;
    }
    return (uint32_t)c;
}

static uint32_t fnv1_64(const unsigned char *k, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t x = 0; x < len; x++) {
        h *= 0x100000001b3ull;
        h ^= sx64(k[x]);
    }
    return (uint32_t)h;
}

static uint32_t fnv1a_64(const unsigned char *k, size_t len)
{
    uint32_t h = (uint32_t)0xcbf29ce484222325ull;
    for (size_t x = 0; x < len; x++) {
        h ^= sx32(k[x]);
        h *= (uint32_t)0x100000001b3ull;
    }
    return h;
}

static uint32_t fnv1_32(const unsigned char *k, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t x = 0; x < len; x++) {
        h *= 16777619u;
        h ^= sx32(k[x]);
    }
    return h;
}

static uint32_t fnv1a_32(const unsigned char *k, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t x = 0; x < len; x++) {
        h ^= sx32(k[x]);
        h *= 16777619u;
    }
    return h;
}

static uint32_t get16(const unsigned char *d) { return (uint32_t)d[1] << 8 | d[0]; }

static uint32_t hsieh(const unsigned char *k, size_t len)
{
    if (len == 0)
        return 0;
    uint32_t h = 0, tmp;
    size_t rem = len & 3;
    for (len >>= 2; len > 0; len--) {
        h += get16(k);
        tmp = (get16(k + 2) << 11) ^ h;
        h = (h << 16) ^ tmp;
        k += 4;
        h += h >> 11;
    }
    switch (rem) {
    case 3:
        h += get16(k);
        h ^= h << 16;
        h ^= sx32(k[2]) << 18;
        h += h >> 11;
        break;
    case 2:
        h += get16(k);
        h ^= h << 11;
        h += h >> 17;
        break;
    case 1:
        h += k[0];
        h ^= h << 10;
        h += h >> 1;
        break;
    default:
        break;
    }
    h ^= h << 3;
    h += h >> 5;
    h ^= h << 4;
    h += h >> 17;
    h ^= h << 25;
    h += h >> 6;
    return h;
}

static uint32_t murmur(const unsigned char *d, size_t length)
{
    const uint32_t m = 0x5bd1e995u;
    uint32_t len = (uint32_t)length;
    uint32_t h = (0xdeadbeefu * len) ^ len;
    while (length >= 4) {
        uint32_t k = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
                     (uint32_t)d[3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
        d += 4;
        length -= 4;
    }
    switch (length) {
    case 3:
        h ^= (uint32_t)d[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)d[1] << 8;
        /* fall through */
    case 1:
        h ^= d[0];
        h *= m;
        break;
    default:
        break;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

#define ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static uint32_t jenkins(const unsigned char *k, size_t length)
{
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)length + 13u;
    while (length > 12) {
        a += (uint32_t)k[0] | (uint32_t)k[1] << 8 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 24;
        b += (uint32_t)k[4] | (uint32_t)k[5] << 8 | (uint32_t)k[6] << 16 | (uint32_t)k[7] << 24;
        c += (uint32_t)k[8] | (uint32_t)k[9] << 8 | (uint32_t)k[10] << 16 | (uint32_t)k[11] << 24;
        a -= c;
        a ^= ROT(c, 4);
        c += b;
        b -= a;
        b ^= ROT(a, 6);
        a += c;
        c -= b;
        c ^= ROT(b, 8);
        b += a;
        a -= c;
        a ^= ROT(c, 16);
        c += b;
        b -= a;
        b ^= ROT(a, 19);
        a += c;
        c -= b;
        c ^= ROT(b, 4);
        b += a;
        length -= 12;
        k += 12;
    }
    if (length == 0)
        return c;
    /* The last block, bytes added little endian to a, b, c. */
    for (size_t i = length; i-- > 0;) {
        uint32_t v = (uint32_t)k[i] << (8 * (i % 4));
        if (i >= 8)
            c += v;
        else if (i >= 4)
            b += v;
        else
            a += v;
    }
    c ^= b;
    c -= ROT(b, 14);
    a ^= c;
    a -= ROT(c, 11);
    b ^= a;
    b -= ROT(a, 25);
    c ^= b;
    c -= ROT(b, 16);
    a ^= c;
    a -= ROT(c, 4);
    b ^= a;
    b -= ROT(a, 14);
    c ^= b;
    c -= ROT(b, 24);
    return c;
}

uint32_t twemproxy_hash(twemproxy_hash_fn fn, alg_md5 *m, const void *key, size_t len)
{
    const unsigned char *k = key;
    if (len == 0) /* server_pool_hash: an empty key hashes to 0 */
        return 0;
    switch (fn) {
    case TW_ONE_AT_A_TIME:
        return one_at_a_time(k, len);
    case TW_MD5:
        return md5_word(m, k, len);
    case TW_CRC16:
        return crc16(k, len);
    case TW_CRC32:
        return (crc32a(k, len) >> 16) & 0x7fffu; /* ((~crc) >> 16) & 0x7fff */
    case TW_CRC32A:
        return crc32a(k, len);
    case TW_FNV1_64:
        return fnv1_64(k, len);
    case TW_FNV1A_64:
        return fnv1a_64(k, len);
    case TW_FNV1_32:
        return fnv1_32(k, len);
    case TW_FNV1A_32:
        return fnv1a_32(k, len);
    case TW_HSIEH:
        return hsieh(k, len);
    case TW_MURMUR:
        return murmur(k, len);
    case TW_JENKINS:
        return jenkins(k, len);
    default:
        return 0;
    }
}

uint32_t twemproxy_server_points(uint32_t w, uint32_t total, uint32_t n)
{
    /* ketama_update, one float operation per line. */
    float pct = (float)w / (float)total;
    float x = pct * 160.0f;
    x = x / 4.0f;
    x = x * (float)n;
    float y = (float)((double)x + 0.0000000001); /* a double literal there */
    y = floorf(y);
    return (uint32_t)(y * 4.0f);
}

int twemproxy_build(alg_md5 *m, const alg_node *nodes, size_t n, alg_point **points,
                    size_t *npoints, rs_error *err)
{
    *points = NULL;
    *npoints = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        double w = nodes[i].weight;
        if (!(w >= 1 && w <= TW_MAX_WEIGHT && w == floor(w)))
            return rs_fail(err, RINGSIM_EPARAM,
                           "twemproxy weights are whole numbers of at least 1: server \"%.*s\" "
                           "has %g",
                           (int)(nodes[i].len > 64 ? 64 : nodes[i].len), nodes[i].name, w);
        total += (uint64_t)w;
    }
    if (total > UINT32_MAX)
        return rs_fail(err, RINGSIM_EPARAM,
                       "twemproxy adds the weights in 32 bits: their sum must be at most %u",
                       UINT32_MAX);
    uint32_t *per = malloc((n + 1) * sizeof *per);
    if (!per)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        per[i] = twemproxy_server_points((uint32_t)nodes[i].weight, (uint32_t)total, (uint32_t)n);
        np += per[i];
    }
    alg_point *p = malloc((np + 1) * sizeof *p);
    if (!p) {
        free(per);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    char label[TW_LABEL_MAX];
    unsigned char d[16];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t g = 0; g < per[i] / 4; g++) {
            /* "%.*s-%u"; a 255-byte name stays below the 272 bytes nutcracker keeps. */
            int ll = snprintf(label, sizeof label, "%.*s-%u", (int)nodes[i].len, nodes[i].name, g);
            alg_md5_digest(m, label, (size_t)ll, d);
            for (uint32_t x = 0; x < 4; x++)
                p[k++] = (alg_point){(uint32_t)d[4 * x] | (uint32_t)d[4 * x + 1] << 8 |
                                         (uint32_t)d[4 * x + 2] << 16 | (uint32_t)d[4 * x + 3] << 24,
                                     (uint32_t)i, 4 * g + x};
        }
    free(per);
    alg_sort_points(p, np); /* glibc qsort (merge sort) keeps equal values in order */
    *points = p;
    *npoints = np;
    return 0;
}
