/*
 * alg_twemproxy.h - twemproxy (nutcracker) `distribution: ketama`, bit for
 * bit, with every `hash:` nutcracker offers.
 *
 * Reference: twemproxy 0.5.0 (Debian 12's nutcracker 0.5.0+dfsg-2; tag
 * 0.5.0 of twitter/twemproxy, whose src/hashkit is unchanged since):
 *   src/hashkit/nc_ketama.c     ketama_update (the continuum),
 *                               ketama_dispatch (the search)
 *   src/hashkit/nc_hashkit.h    HASH_CODEC: the hash names, in this order
 *   src/hashkit/nc_one_at_a_time.c, nc_md5.c, nc_crc16.c, nc_crc32.c
 *                               (crc32, crc32a), nc_fnv.c (fnv1_64,
 *                               fnv1a_64, fnv1_32, fnv1a_32), nc_hsieh.c,
 *                               nc_murmur.c, nc_jenkins.c
 *   src/nc_server.c             server_pool_idx, server_pool_hash
 *   src/nc_conf.c               conf_add_server: how a server is named
 *
 * The continuum, servers s = 0..n-1 in configuration order, weights w_s:
 *   total  = sum of w_s (uint32)
 *   pct    = (float)w_s / (float)total
 *   points = (uint32)(floorf((float)((double)(pct * 160 / 4 * (float)n) +
 *            1e-10)) * 4), the products in float (no fused multiply-add),
 *            the 1e-10 added in double: a multiple of 4, maybe 156 for equal
 *            weights, 0 for a server below 1/(40 n) of the weight;
 *   labels "NAME-k", k = 0 .. points/4 - 1, NAME as nutcracker names the
 *            server (below);
 *   values MD5(label) cut into four 32-bit little-endian words (point index
 *            4k + word);
 *   order  qsort by value: glibc's (2.36) is a stable merge sort, so equal
 *            values stay in insertion order, (value, server, index) here;
 *   lookup the first point with value >= hash, wrapping to the first:
 *            alg_successor.  A pool of one server skips the hash (same
 *            owner), and an empty key hashes to 0.
 *
 * Node names.  nutcracker hashes server->name: the `name` of a
 * "host:port:weight name" line when there is one; otherwise "host" when the
 * port is 11211 (libmemcached's habit) and "host:port" for any other port.
 * A ringsim node name IS that string: the server `10.0.0.1:11211:1` is the
 * node "10.0.0.1", `10.0.0.1:22122:1` is "10.0.0.1:22122", and
 * `10.0.0.1:22122:1 cache-a` is "cache-a".  The weight is the node's.
 *
 * The key hashes return uint32_t but are not all 32 bits wide, and some
 * read the key through a signed char (x86-64's char), reproduced:
 *   crc32    libmemcached's: ((~crc) >> 16) & 0x7fff, 15 bits: every key
 *            falls in [0, 32767], the arc of whichever point follows 32767
 *            wraps back from the top, so one server takes them all;
 *   crc16    the XMODEM table step, but the uint32 accumulator is never
 *            masked: bytes before the last two still shift into the high
 *            bits (the low 16 are the true CRC-16), so keys of 3 bytes or more
 *            spread over 32 bits, a 2-byte key stays below 2^24 and a
 *            1-byte key below 2^16;
 *   fnv1_64  64-bit FNV-1, the low 32 bits kept; fnv1a_64 (the default)
 *            is FNV-1a done in 32 bits with the 64-bit basis and prime cut
 *            to 32 bits (0x84222325, 0x1b3), which gives the low 32 bits
 *            of the 64-bit FNV-1a for ASCII keys;
 *   signed   one_at_a_time, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32 and the
 *            last odd byte of hsieh add a byte >= 0x80 as 0xffffff80..: keys
 *            outside ASCII hash differently from the textbook functions;
 *   md5      the first 4 bytes of MD5, little endian; murmur is MurmurHash2
 *            with seed 0xdeadbeef x length; jenkins is lookup3's hashlittle
 *            with initval 13; hsieh is Paul Hsieh's SuperFastHash.
 *
 * Cost: build O(P log P) for P ~ 160 n points, one MD5 per 4 points; lookup
 * one key hash plus O(log P).  Thread-safe (a alg_md5 keeps no scratch).
 */
#ifndef RINGSIM_ALG_TWEMPROXY_H
#define RINGSIM_ALG_TWEMPROXY_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "alg_md5.h"
#include "error.h"

/* HASH_CODEC's order; the default is fnv1a_64. */
typedef enum {
    TW_ONE_AT_A_TIME,
    TW_MD5,
    TW_CRC16,
    TW_CRC32,
    TW_CRC32A,
    TW_FNV1_64,
    TW_FNV1A_64,
    TW_FNV1_32,
    TW_FNV1A_32,
    TW_HSIEH,
    TW_MURMUR,
    TW_JENKINS,
    TW_NHASH
} twemproxy_hash_fn;

#define TW_DEFAULT_HASH TW_FNV1A_64
#define TW_MAX_WEIGHT 4294967295.0 /* the total is a uint32_t too */
/* The longest point label: a 255-byte name, "-", 10 digits, NUL (and room). */
#define TW_LABEL_MAX 280

/* NULL-terminated names in HASH_CODEC order, as `hash:` spells them. */
extern const char *const twemproxy_hash_names[TW_NHASH + 1];

/* The pool's key hash fn of len bytes.  m is needed for TW_MD5 only (may
 * be NULL otherwise).  Cannot fail. */
uint32_t twemproxy_hash(twemproxy_hash_fn fn, alg_md5 *m, const void *key, size_t len);

/* Points of a server of weight w among n live servers of total weight
 * total, as ketama_update computes them.  Cannot fail. */
uint32_t twemproxy_server_points(uint32_t w, uint32_t total, uint32_t n);

/* Build the continuum of nodes[0..n) (n >= 1; whole weights >= 1 whose sum
 * fits in 32 bits, else RINGSIM_EPARAM).  *points malloc'd (the caller
 * frees), *npoints of them in ring order; alg_successor on them with
 * twemproxy_hash(key) is the server nutcracker picks.  RINGSIM_ENOMEM. */
int twemproxy_build(alg_md5 *m, const alg_node *nodes, size_t n, alg_point **points,
                    size_t *npoints, rs_error *err);

#endif
