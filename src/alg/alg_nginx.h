/*
 * alg_nginx.h - nginx's `hash $key consistent`, bit for bit.
 *
 * Reference: nginx 1.22.1 (Debian 12's nginx 1.22.1-9+deb12u*),
 * src/http/modules/ngx_http_upstream_hash_module.c:
 *   ngx_http_upstream_init_chash        the points
 *   ngx_http_upstream_chash_cmp_points  their order
 *   ngx_http_upstream_find_chash_point  the search
 *   ngx_http_upstream_init_chash_peer   the key hash
 * and src/core/ngx_crc32.h (CRC-32, reflected polynomial 0xedb88320, start
 * and final xor 0xffffffff: the same function as zlib's crc32, which this
 * core uses).
 *
 * A node name is the `server` address as written in nginx.conf, e.g.
 * "127.0.0.1:8080", "10.0.0.1", "example.com:81", "unix:/run/app.sock",
 * "[::1]:8080".  nginx hashes that text, not the address it resolves to:
 *   split   a name starting with "unix:" (any case) is host = the rest,
 *           port = "";  otherwise, if the name ends in ':' followed by
 *           digits only (maybe none), host = before that ':', port = the
 *           digits; else host = the whole name, port = "".  So "10.0.0.1"
 *           hashes with an empty port, not "80", and "[::1]" whole.
 *   points  base = CRC-32 state after host, one NUL byte, port (not
 *           finalised); point j (j = 0 .. 160 * weight - 1) is
 *           crc32(base + the 4 bytes of point j-1 little endian), with 0 for
 *           the point before point 0: a chain, each point from the last.
 *   order   by hash, nginx with qsort comparing hashes only, then dropping
 *           every point whose hash equals the one kept before it.  glibc's
 *           qsort (2.36 in Debian 12) is a stable merge sort, so the point
 *           kept is the first in configuration order (server, then j): here
 *           the points are sorted by (hash, server, j) and the later equal
 *           ones dropped, which keeps the same point.  Two servers whose
 *           names split the same way ("unix:/s" and "UNIX:/s") have the same
 *           points and the first one owns them all.
 *   lookup  key hash = CRC-32 of the key's bytes (ngx_crc32_long of the
 *           evaluated key, e.g. $arg_k as received: still percent-encoded);
 *           the owner is the first point with hash >= the key's, wrapping
 *           to the first point: alg_successor.
 * What nginx does at request time beyond the ring is not modelled: a server
 * marked down or failed (max_fails) passes the key to the next point's
 * server, a single peer or an empty key falls back to round robin, and a
 * name that resolves to several addresses shares its points among them by
 * weighted round robin (ringsim's owner is the name).
 *
 * Weights are whole numbers from 1 to NGINX_MAX_WEIGHT: nginx has no limit
 * below its integer range, ringsim keeps a node at most 100,000 points
 * (place.h's PLACE_MAX_NODE_POINTS).
 *
 * Cost: build O(P log P) for P = 160 x total weight points, one 4-byte
 * CRC-32 update per point; lookup one CRC-32 of the key and O(log P).
 * No state, no context: thread-safe.
 */
#ifndef RINGSIM_ALG_NGINX_H
#define RINGSIM_ALG_NGINX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"

#define NGINX_POINTS_PER_WEIGHT 160u
#define NGINX_MAX_WEIGHT 625u /* 625 x 160 = 100,000 points */

/* The key hash (the key's coordinate): CRC-32 of len bytes at key.  Cannot
 * fail. */
uint32_t nginx_key_hash(const void *key, size_t len);

/* The text nginx hashes for a server: host and port, both pointing into the
 * name (port_len may be 0). */
typedef struct nginx_hostport {
    const char *host;
    size_t host_len;
    const char *port;
    size_t port_len;
} nginx_hostport;

/* Split a name as ngx_http_upstream_init_chash does.  Cannot fail. */
void nginx_split(const char *name, size_t len, nginx_hostport *out);

/* The first count point hashes of a server, in the order nginx makes them
 * (out[j] is point j).  Cannot fail. */
void nginx_server_points(const nginx_hostport *hp, uint32_t *out, size_t count);

/* Build the points of nodes[0..n) (configuration order).  Checks that every
 * weight is a whole number in 1..NGINX_MAX_WEIGHT (RINGSIM_EPARAM, err
 * filled).  On success *points is a malloc'd array of *npoints points in
 * ring order, equal hashes already dropped as nginx drops them (so
 * *npoints <= 160 x total weight), each point's `index` its j within its
 * server; the caller frees it with free().  alg_successor(*points, *npoints,
 * nginx_key_hash(key)) is the point whose server nginx picks.  n == 0 gives
 * no points.  RINGSIM_ENOMEM when out of memory; *points is NULL on
 * failure. */
int nginx_build(const alg_node *nodes, size_t n, alg_point **points, size_t *npoints, rs_error *err);

/* ---- `hash KEY;` without `consistent` ----
 *
 * Reference: the same module, ngx_http_upstream_get_hash_peer, and
 * src/http/ngx_http_upstream_round_robin.c (ngx_http_upstream_init_round_robin:
 * the peers in configuration order, total_weight = the sum of every
 * non-backup peer's weight, down ones included; get_peer's smooth weighted
 * round robin).  Not installed as source here: written from nginx's
 * documented algorithm and proven against the real nginx by
 * tests/ref/nginx_ref.py (mode plain, down servers included).  A try:
 *   hash  = crc32(key) on try 0, crc32(decimal(rehash) + key) after, of
 *           which (crc >> 16) & 0x7fff (Cache::Memcached's hash) is added to
 *           the sum of the previous tries';
 *   w     = sum % total_weight; the peer is found by walking the peers in
 *           order, subtracting each weight until w < the peer's weight;
 *   a peer that is down (or failed, or full) costs one try and the key is
 *           hashed again; after 21 tries (20 rehashes) nginx falls back to its weighted
 *           round robin, which names a different up server from request to
 *           request: ringsim names the one a fresh round robin picks first
 *           (the first up server of the largest weight), and the trace says
 *           so.  A single server is always round robin (peers->single).
 * The owner (every server up) is thus the peer of crc15(key) % total
 * weight: adding a server changes total_weight and moves most keys. */
#define NGINX_HASH_TRIES 21u /* the first try and 20 more: `if (++hp->tries > 20)` */

/* Cache::Memcached's hash of try `rehash` (0: the first) of a key:
 * (crc32([decimal(rehash)] key) >> 16) & 0x7fff.  Cannot fail. */
uint32_t nginx_plain_hash(const void *key, size_t len, uint32_t rehash);

/* The peer of sum % total over nodes[0..n) by weight; total the sum of the
 * weights (>= 1).  Cannot fail. */
size_t nginx_plain_peer(const alg_node *nodes, size_t n, uint64_t total, uint32_t sum);

/* The server nginx picks for a key: down[i] marks the servers that do not
 * take it.  Returns the node index, -1 when nginx answers 502 (every server
 * down); *tries (may be NULL) the hash tries spent (0 for a single server,
 * NGINX_HASH_TRIES + 1 for the round-robin fallback).  Weights are whole
 * numbers >= 1 (checked by the caller).  Cannot fail. */
long nginx_plain_pick(const alg_node *nodes, const bool *down, size_t n, const void *key,
                      size_t len, unsigned *tries);

#endif
