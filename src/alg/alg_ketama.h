/*
 * alg_ketama.h - libmemcached's weighted ketama continuum, bit for bit.
 *
 * Reference: libmemcached-awesome 1.1.4 (Debian 12's libmemcached-dev
 * 1.1.4-1) with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED set, which selects
 * MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED and MD5 for the key hash:
 *   src/libmemcached/hosts.cc   update_continuum, ketama_server_hash,
 *                               continuum_item_cmp
 *   src/libmemcached/hash.cc    dispatch_host, memcached_generate_hash
 *   src/libhashkit/md5.cc       hashkit_md5
 *   src/libmemcached/parse.cc   memcached_servers_parse (the node names)
 *
 * The continuum, for servers s = 0..n-1 in join order with weights w_s:
 *   total  = sum of w_s (uint64)
 *   pct    = (float)w_s / (float)total
 *   points = (uint32)(floor((float)(pct * 160 / 4 * (float)n + 1e-10f)) * 4)
 *            every step in float (IEEE single, no fused multiply-add), so
 *            equal weights may give 156 points instead of 160, and a server
 *            whose share is below 1/(40 n) gets no point at all;
 *   labels "HOST-k" when the port is 11211 and "HOST:PORT-k" otherwise, for
 *            k = 0 .. points/4 - 1 (HOST as libmemcached stores it: IPv6
 *            keeps its brackets, "[::1]:11212-0"; a unix socket has port 0,
 *            "/tmp/m.sock:0-0");
 *   values MD5(label) cut into four 32-bit little-endian words, each a point
 *            of server s (point index 4k + word);
 *   order  by (value, server index) ascending: equal values keep every copy
 *            and the lowest server index wins them, since the dispatch is a
 *            lower_bound (first value >= hash, wrapping to the first point),
 *            exactly alg_successor.
 * The key hash is hashkit_md5: the first four bytes of MD5(key) read little
 * endian.  (With a single server libmemcached skips the hash and answers
 * that server; the owner is the same.)
 *
 * Node names: "HOST", "HOST:PORT", "[IPV6]", "[IPV6]:PORT" or "/socket/path",
 * read as memcached_servers_parse reads one entry of a server list, with
 * PORT 1..65535 in decimal and 11211 when absent.  What that parser would
 * misread is refused: an empty host, port 0 or out of range (it truncates
 * 99999 to 34463), a non-numeric port, a third field (its weight), a bare
 * IPv6 address (it splits at the first colon), and ',' (the server list
 * separator).  Spaces are part of the host, as the parser keeps them
 * ("hello world", " a:1"); a space after the port is refused with the port.
 *
 * The other modes people run (Reference: the same library,
 *   src/libmemcached/behavior.cc  MEMCACHED_BEHAVIOR_KETAMA,
 *                                 memcached_behavior_set_distribution
 *   src/libmemcached/hosts.cc     update_continuum, the unweighted branch
 *   src/libmemcached/server.cc    a weight > 1 added under a consistent
 *                                 distribution turns weighting on
 * checked by experiment against the installed library, tests/test_alg_ketama.c):
 *   ketama      MEMCACHED_BEHAVIOR_KETAMA (pylibmc's `ketama: True`) sets
 *               MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA and weighting off,
 *               and leaves the key hash alone: one_at_a_time (libmemcached's
 *               "default") unless the client sets MEMCACHED_BEHAVIOR_HASH;
 *   consistent  MEMCACHED_DISTRIBUTION_CONSISTENT (`--DISTRIBUTION=consistent`)
 *               builds the same continuum: update_continuum and dispatch_host
 *               treat CONSISTENT and CONSISTENT_KETAMA alike.
 *   Both: 100 points per server whatever its weight
 *   (MEMCACHED_POINTS_PER_SERVER), point k = 0..99 the key hash function of
 *   the label "HOST-k" or "HOST:PORT-k" (as above), one point per label; the
 *   same lower_bound dispatch.  The points are hashed with the key hash in
 *   force when the continuum was built: MEMCACHED_BEHAVIOR_KETAMA_HASH (the
 *   `,HASH` of `--DISTRIBUTION=consistent,HASH`) is stored but never used,
 *   and a HASH set after the continuum was built leaves the points hashed
 *   with the previous function (KETAMA_HASH_POINTS: the importer follows
 *   the statements' order).  With the weighted continuum the key hash is
 *   also whatever the client set last (MD5 by KETAMA_WEIGHTED's own doing).
 * Key hashes: libhashkit's one_at_a_time, md5, crc (the 15-bit CRC-32
 * ((~crc >> 16) & 0x7fff)), fnv1_64 and fnv1a_64 (in 32 bits), fnv1_32,
 * fnv1a_32, murmur (MurmurHash2, seed 0xdeadbeef x length) and jenkins
 * (lookup3, initval 13): the very functions nutcracker copied, so
 * twemproxy_hash computes them.  Not reproduced: hsieh (Debian's library
 * is built without it: every key hashes to 1) and murmur3 (not in the
 * configuration string's grammar).
 *
 * Beyond 100 servers libmemcached aborts (update_continuum asserts
 * n * MEMCACHED_POINTS_PER_SERVER <= MEMCACHED_CONTINUUM_SIZE, i.e. n <= 100);
 * here the same arithmetic simply carries on: 160 n points give or take the
 * float rounding, the formula unchanged.  No other limit than memory.
 *
 * Cost: build O(P log P) for P ~ 160 n points, one MD5 per 4 points; lookup
 * one MD5 of the key plus O(log P).  Thread-safe: a alg_md5 keeps no
 * scratch, so one serves every thread.
 */
#ifndef RINGSIM_ALG_KETAMA_H
#define RINGSIM_ALG_KETAMA_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "alg_md5.h"
#include "error.h"

#define KETAMA_DEFAULT_PORT 11211u
#define KETAMA_MAX_WEIGHT 4294967295.0 /* libmemcached's weight is a uint32_t */
/* The longest point label: a 255-byte host, ":65535", "-", 10 digits, NUL. */
#define KETAMA_LABEL_MAX 280

/* The key hash (the key's coordinate): libhashkit's hashkit_md5, bytes 0..3
 * of MD5(key) as a little-endian uint32.  Cannot fail. */
uint32_t ketama_key_hash(alg_md5 *m, const void *key, size_t len);

/* A node name read as libmemcached reads it.  host points into the name. */
typedef struct ketama_server {
    const char *host; /* "[::1]" keeps its brackets, as libmemcached does */
    size_t host_len;
    uint32_t port; /* 1..65535, 11211 when absent; 0 for a unix socket */
} ketama_server;

/* Parse a node name (UTF-8, 1..255 bytes).  0, or RINGSIM_ENAME with a
 * message saying what is wrong. */
int ketama_parse_name(const char *name, size_t len, ketama_server *out, rs_error *err);

/* Points of a server of weight w among n servers of total weight total, as
 * update_continuum computes them (a multiple of 4, maybe 0).  w, total and
 * n >= 1, w <= total.  Cannot fail. */
uint32_t ketama_server_points(uint32_t w, uint64_t total, uint32_t n);

/* The label hashed for point group k of a server ("HOST-k" or
 * "HOST:PORT-k") into out[KETAMA_LABEL_MAX], NUL-terminated; returns its
 * length.  Point index i of a node comes from label k = i / 4, word i % 4. */
size_t ketama_label(const ketama_server *s, uint32_t k, char out[KETAMA_LABEL_MAX]);

/* The modes (the `mode` parameter) and key hashes (`key_hash`) by name. */
typedef enum {
    KETAMA_MODE_WEIGHTED,
    KETAMA_MODE_KETAMA,
    KETAMA_MODE_CONSISTENT,
    KETAMA_NMODE
} ketama_mode;
typedef enum {
    KETAMA_HASH_AUTO, /* what the mode sets: md5 when weighted, else one_at_a_time */
    KETAMA_HASH_ONE_AT_A_TIME,
    KETAMA_HASH_MD5,
    KETAMA_HASH_CRC,
    KETAMA_HASH_FNV1_64,
    KETAMA_HASH_FNV1A_64,
    KETAMA_HASH_FNV1_32,
    KETAMA_HASH_FNV1A_32,
    KETAMA_HASH_MURMUR,
    KETAMA_HASH_JENKINS,
    KETAMA_NHASH
} ketama_hash_fn;
/* NULL-terminated, in enum order. */
extern const char *const ketama_mode_names[KETAMA_NMODE + 1];
extern const char *const ketama_hash_names[KETAMA_NHASH + 1];
/* libmemcached's MEMCACHED_HASH_* value of a key hash (AUTO resolved by
 * mode first); for the tests and the importer. */
int ketama_hash_memcached(ketama_hash_fn fn);
/* AUTO resolved: MD5 under the weighted mode, ONE_AT_A_TIME otherwise. */
ketama_hash_fn ketama_hash_resolve(ketama_mode mode, ketama_hash_fn fn);
/* Hash len bytes with fn (not AUTO).  Cannot fail. */
uint32_t ketama_hash(alg_md5 *m, ketama_hash_fn fn, const void *key, size_t len);

/* Points per server of the unweighted continuum (MEMCACHED_POINTS_PER_SERVER). */
#define KETAMA_POINTS_UNWEIGHTED 100u

/* The unweighted continuum of modes ketama and consistent: nodes[0..n)
 * (n >= 1) with 100 points each, point k = fn("HOST[:PORT]-k").  Names
 * checked as ketama_build; weights are not looked at.  *points malloc'd,
 * *npoints = 100 n, in ring order.  RINGSIM_ENAME, RINGSIM_ENOMEM. */
int ketama_build_unweighted(alg_md5 *m, ketama_hash_fn fn, const alg_node *nodes, size_t n,
                            alg_point **points, size_t *npoints, rs_error *err);

/* Build the continuum of nodes[0..n) (join order; n >= 1).  Checks every
 * name (RINGSIM_ENAME) and that every weight is a whole number in
 * 1..4294967295 (RINGSIM_EPARAM), with err filled.  On success *points is a
 * malloc'd array of *npoints points in ring order (the caller frees it with
 * free()), alg_successor(*points, *npoints, ketama_key_hash(key)) is the
 * point whose node libmemcached picks, and *npoints >= 4.  RINGSIM_ENOMEM
 * when out of memory; *points is NULL on failure.  Cost as above. */
int ketama_build(alg_md5 *m, const alg_node *nodes, size_t n, alg_point **points, size_t *npoints,
                 rs_error *err);

#endif
