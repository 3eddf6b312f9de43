/*
 * ringsim.h - libringsim: ringsim's placement algorithms for other programs.
 *
 * Build a placement from an algorithm, its parameters and nodes, then ask
 * where keys go: the owner, who serves a key while nodes are down, and its
 * replicas -- the answers of `ringsim lookup`, computed by the same code.
 * The library never touches SQLite, HTTP or files.
 *
 *   ringsim_placement *p;
 *   ringsim_placement_new(&p, "ketama");            (then, in any order:)
 *   ringsim_placement_add_node(p, "10.0.0.1:11211", 1);
 *   ringsim_placement_set_node(p, "10.0.0.1:11211", "state", "down");
 *   ringsim_placement_set_param(p, "mode", "ketama_weighted");
 *   ringsim_placement_build(p);                      (read-only from here)
 *   ringsim_lookup(p, "user:42", 7, &owner);
 *   ringsim_placement_free(p);
 *
 * Threads: one thread fills and builds a placement; once
 * ringsim_placement_build has returned 0 the placement does not change, and
 * ringsim_lookup, ringsim_served_by and ringsim_replicas may run on any
 * number of threads at once.
 *
 * Errors: every function returns 0 or one of the negative codes below
 * (ringsim_strerror says it in words).  Names returned point into the
 * placement and live until it is freed.
 *
 * Compile and link with `pkg-config --cflags --libs ringsim` (add --static
 * for libringsim.a).  The manual: ringsim(3).
 */
#ifndef RINGSIM_RINGSIM_H
#define RINGSIM_RINGSIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The codes the library returns: the engine's own, with the same names and
 * values (ringsim's src/base/error.h, which, when a file includes both,
 * defines them first). */
#ifndef RINGSIM_ERROR_H
enum {
    RINGSIM_OK = 0,
    RINGSIM_ENAME = -2,     /* a node name or key breaks ringsim's name rules */
    RINGSIM_EPARAM = -3,    /* any other bad argument, or a call out of order */
    RINGSIM_ENOTFOUND = -4, /* no node of that name */
    RINGSIM_ECONFLICT = -5, /* a node of that name exists already */
    RINGSIM_ENOMEM = -10,   /* out of memory */
    RINGSIM_EINTERNAL = -14 /* anything else (OpenSSL without SHA-256 or MD5) */
};
#endif

/* A key has at most this many replicas: ringsim_replicas never needs more
 * room. */
#define RINGSIM_MAX_REPLICAS 16

typedef struct ringsim_placement ringsim_placement;

/* A new, empty placement under algorithm (a name of `ringsim algorithms`:
 * ring, jump, rendezvous, multiprobe, ketama, nginx, envoy-ring, maglev,
 * cassandra, redis, haproxy, twemproxy), every parameter at its default,
 * one replica.  *p is NULL on failure: RINGSIM_EPARAM for an unknown
 * algorithm, RINGSIM_ENOMEM. */
int ringsim_placement_new(ringsim_placement **p, const char *algorithm);

/* Set one of the algorithm's parameters by name, the value as text
 * ("table_size", "65537"; `--param NAME=VALUE` of the command line), or
 * "replicas" (copies of each key, 1 to 16, `--replicas`).  Before build
 * only.  RINGSIM_EPARAM for a parameter the algorithm does not take or a
 * value out of its range. */
int ringsim_placement_set_param(ringsim_placement *p, const char *name, const char *value);

/* Add a node, in join order (the order matters to several algorithms, as
 * it does to the real systems): name by ringsim's name rules (UTF-8, 1 to
 * 255 bytes, no control character, something visible), weight from 0 to
 * 1000 (what the algorithm honours is checked by build).  Before build
 * only.  RINGSIM_ENAME, RINGSIM_EPARAM, RINGSIM_ECONFLICT (a node of that
 * name exists), RINGSIM_ENOMEM. */
int ringsim_placement_add_node(ringsim_placement *p, const char *name, double weight);

/* Set a field of node name, as the command line and import set it:
 *   weight    "2.5"                 a number from 0 to 1000
 *   tokens    "-9000,12,300"        Cassandra's initial_token (signed 64-bit)
 *   id        "3"                   HAProxy's server id, 1 to 2147483647
 *   state     "up" | "down"         down: configured, not serving
 *   backup    "true" | "false"      HAProxy's backup server
 *   replicas  "10.0.0.5:6379,..."   a Redis master's replicas (failover)
 *   slots     "0-5460,5461"         a Redis master's slots, as CLUSTER NODES
 *                                   writes them (given to any master: to
 *                                   all of them, every slot once)
 *   location  "dc=dc1,rack=r1"      where the node sits (kept and checked;
 *                                   no algorithm of this version reads it)
 * An empty value clears tokens, replicas, slots and location.  Before build
 * only.  RINGSIM_ENOTFOUND (no such node), RINGSIM_ENAME (a replica's or
 * location's name), RINGSIM_EPARAM, RINGSIM_ENOMEM. */
int ringsim_placement_set_node(ringsim_placement *p, const char *name, const char *field,
                               const char *value);

/* Build the layout (the ring, table or map) from the parameters and nodes,
 * as a fresh `ringsim config --algorithm` over these nodes builds it: the
 * state that history shapes (Redis's slot map without `slots`,
 * MementoHash's removed buckets, Cassandra's derived tokens) starts as the
 * real system starts it.  RINGSIM_EPARAM when the algorithm refuses the
 * nodes or parameters (weights it does not honour, too many points...),
 * RINGSIM_ENOMEM; the placement may then be changed and built again.  After
 * 0 the placement is read-only: the functions above answer RINGSIM_EPARAM. */
int ringsim_placement_build(ringsim_placement *p);

/* The node that owns key (len bytes, by ringsim's rules for keys: UTF-8, 1
 * to 255 bytes, no control character) into *owner: NULL when the placement
 * has no node.  RINGSIM_ENAME for a key outside the rules, RINGSIM_EPARAM
 * before build. */
int ringsim_lookup(const ringsim_placement *p, const char *key, size_t len, const char **owner);

/* Who serves key with the nodes' states applied, into *node: the owner
 * while it is up, else whoever the algorithm sends the key to (the next up
 * node, a rebuilt layout, a Redis replica's "ip:port"), NULL when nobody
 * does.  Errors as ringsim_lookup. */
int ringsim_served_by(const ringsim_placement *p, const char *key, size_t len, const char **node);

/* The key's replicas (its preference list by placement, the owner first,
 * "replicas" of them or fewer when there are fewer nodes) into
 * nodes[0..max), and how many the key has into *count (more than max when
 * they did not all fit; at most RINGSIM_MAX_REPLICAS).  Errors as
 * ringsim_lookup. */
int ringsim_replicas(const ringsim_placement *p, const char *key, size_t len, const char **nodes,
                     size_t max, size_t *count);

/* Frees the placement and every name it returned.  NULL is a no-op. */
void ringsim_placement_free(ringsim_placement *p);

/* A code in words ("invalid parameter"); never NULL, static. */
const char *ringsim_strerror(int code);

/* The library's version, "MAJOR.MINOR.PATCH" (ringsim's); static. */
const char *ringsim_version(void);

#ifdef __cplusplus
}
#endif

#endif
