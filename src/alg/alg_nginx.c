/*
 * alg_nginx.c - nginx's `hash $key consistent` ring (see alg_nginx.h for
 * the reference and the rules reproduced).
 *
 * CRC-32 is zlib's crc32, which takes and returns the finalised value:
 * nginx's unfinalised state s is ~crc, so nginx's "init, update host, update
 * NUL, update port" is crc32(crc32(crc32(0, host), NUL), port), and each
 * point "copy the state, update 4 bytes, finalise" is crc32(base, 4 bytes).
 * The points are sorted with qsort by (hash, server, j), which needs no
 * context and gives the order of nginx's stable sort (see the header).
 */
#include "alg_nginx.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>
#include <zlib.h>

uint32_t nginx_key_hash(const void *key, size_t len) { return (uint32_t)crc32_z(0, key, len); }

void nginx_split(const char *name, size_t len, nginx_hostport *out)
{
    *out = (nginx_hostport){name, len, name + len, 0};
    if (len >= 5 && strncasecmp(name, "unix:", 5) == 0) {
        out->host = name + 5;
        out->host_len = len - 5;
        return;
    }
    /* Back from the end over digits; a ':' there ends the host. */
    for (size_t j = 0; j < len; j++) {
        char c = name[len - j - 1];
        if (c == ':') {
            out->host_len = len - j - 1;
            out->port = name + len - j;
            out->port_len = j;
            return;
        }
        if (c < '0' || c > '9')
            return;
    }
}

void nginx_server_points(const nginx_hostport *hp, uint32_t *out, size_t count)
{
    /* Names are at most 255 bytes (alg.h), within zlib's uInt lengths. */
    uLong base = crc32(0, (const Bytef *)hp->host, (uInt)hp->host_len);
    base = crc32(base, (const Bytef *)"", 1);
    base = crc32(base, (const Bytef *)hp->port, (uInt)hp->port_len);
    uint32_t prev = 0;
    for (size_t j = 0; j < count; j++) {
        unsigned char le[4] = {(unsigned char)prev, (unsigned char)(prev >> 8),
                               (unsigned char)(prev >> 16), (unsigned char)(prev >> 24)};
        prev = (uint32_t)crc32(base, le, 4);
        out[j] = prev;
    }
}

int nginx_build(const alg_node *nodes, size_t n, alg_point **points, size_t *npoints, rs_error *err)
{
    size_t total = 0, most = 0;
    uint32_t *chain = NULL;
    alg_point *pt = NULL;

    *points = NULL;
    *npoints = 0;
    if (n == 0)
        return 0;
    if (n > UINT32_MAX)
        return rs_fail(err, RINGSIM_EPARAM, "nginx takes at most %u servers", UINT32_MAX);
    for (size_t i = 0; i < n; i++) {
        double w = nodes[i].weight;
        if (!(w >= 1 && w <= NGINX_MAX_WEIGHT && w == floor(w)))
            return rs_fail(err, RINGSIM_EPARAM,
                           "nginx weights are whole numbers from 1 to %u: \"%.*s\" has %g",
                           NGINX_MAX_WEIGHT, (int)nodes[i].len, nodes[i].name, w);
        size_t p = (size_t)w * NGINX_POINTS_PER_WEIGHT;
        total += p;
        most = p > most ? p : most;
    }
    chain = malloc(most * sizeof *chain);
    pt = malloc(total * sizeof *pt);
    if (!chain || !pt)
        goto fail_nomem;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        nginx_hostport hp;
        size_t p = (size_t)nodes[i].weight * NGINX_POINTS_PER_WEIGHT;
        nginx_split(nodes[i].name, nodes[i].len, &hp);
        nginx_server_points(&hp, chain, p);
        for (size_t j = 0; j < p; j++)
            pt[at++] = (alg_point){chain[j], (uint32_t)i, (uint32_t)j};
    }
    alg_sort_points(pt, total);
    /* Keep the first point of each hash, as nginx's de-duplication does. */
    size_t kept = 1;
    for (size_t j = 1; j < total; j++)
        if (pt[j].coord != pt[kept - 1].coord)
            pt[kept++] = pt[j];
    free(chain);
    alg_point *shrunk = kept < total ? realloc(pt, kept * sizeof *pt) : pt;
    *points = shrunk ? shrunk : pt;
    *npoints = kept;
    return 0;
fail_nomem:
    free(pt);
    free(chain);
    return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
}

/* ---- hash KEY; (no consistent) ---- */

uint32_t nginx_plain_hash(const void *key, size_t len, uint32_t rehash)
{
    uLong crc = crc32_z(0, NULL, 0);
    if (rehash > 0) {
        char buf[12];
        size_t n = alg_put_u64(buf, rehash);
        crc = crc32_z(crc, (const Bytef *)buf, n);
    }
    crc = crc32_z(crc, key, len);
    return ((uint32_t)crc >> 16) & 0x7fff;
}

size_t nginx_plain_peer(const alg_node *nodes, size_t n, uint64_t total, uint32_t sum)
{
    uint64_t w = sum % total;
    size_t p = 0;
    while (p + 1 < n && w >= (uint64_t)nodes[p].weight) {
        w -= (uint64_t)nodes[p].weight;
        p++;
    }
    return p;
}

long nginx_plain_pick(const alg_node *nodes, const bool *down, size_t n, const void *key,
                      size_t len, unsigned *tries)
{
    uint64_t total = 0;
    long best = -1;
    if (tries)
        *tries = 0;
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        total += (uint64_t)nodes[i].weight;
    if (n > 1) {
        uint32_t sum = 0;
        for (uint32_t t = 0; t < NGINX_HASH_TRIES; t++) {
            sum += nginx_plain_hash(key, len, t);
            size_t p = nginx_plain_peer(nodes, n, total, sum);
            if (tries)
                *tries = t + 1;
            if (!down || !down[p])
                return (long)p;
        }
        if (tries)
            *tries = NGINX_HASH_TRIES + 1;
    }
    /* Round robin from a fresh state: the up peer of the largest weight. */
    for (size_t i = 0; i < n; i++)
        if ((!down || !down[i]) && (best < 0 || nodes[i].weight > nodes[best].weight))
            best = (long)i;
    return best;
}
