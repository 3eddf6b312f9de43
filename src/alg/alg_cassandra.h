/*
 * alg_cassandra.h - Apache Cassandra's Murmur3Partitioner and token ring.
 *
 * References (apache/cassandra, trunk; unchanged since 1.2 in what is used):
 *   - src/java/org/apache/cassandra/utils/MurmurHash.java, hash3_x64_128:
 *     MurmurHash3_x64_128 with seed 0, body blocks read little-endian, and
 *     the QUIRK reproduced here: the tail bytes are read with
 *     ByteBuffer.get(), a signed Java byte, and `(long) key.get(i) << s`
 *     sign-extends before shifting, so a tail byte >= 0x80 sets every bit
 *     above it (standard MurmurHash3 uses the unsigned byte);
 *   - src/java/org/apache/cassandra/dht/Murmur3Partitioner.java, getToken:
 *     the token is the first long of that hash, with Long.MIN_VALUE (the
 *     ring's MINIMUM, kept for "before everything") normalized to
 *     Long.MAX_VALUE; an empty key's token is MINIMUM itself;
 *   - src/java/org/apache/cassandra/config/DatabaseDescriptor.java:
 *     MAX_NUM_TOKENS = 1536 tokens per node;
 *   - src/java/org/apache/cassandra/dht/BootStrapper.java,
 *     getSpecifiedTokens: an initial_token already owned by another node is
 *     refused ("Bootstrapping to existing token ... is not allowed");
 *   - src/java/org/apache/cassandra/locator/SimpleStrategy.java,
 *     calculateNaturalReplicas: from the key's token, walk the sorted ring
 *     and take each endpoint not yet taken until there are RF.
 * A key belongs to the range (previous token, token] of the first token >=
 * the key's token, wrapping past the largest to the smallest (TokenMetadata
 * .firstToken); in ringsim's terms the point with the first coord >= the
 * key's coord, where coord = alg_from_signed(token).
 *
 * ringsim's layout (docs/api.md `cassandra` row): a node holds
 * P = max(1, round(num_tokens * weight)) tokens, the tokens of the labels
 * "name", "name#1", ..., "name#(P-1)" (Cassandra's own random allocation
 * replaced by a deterministic one), or the tokens given explicitly when it
 * was added, as initial_token (the weight then plays no part).  Equal
 * tokens: an explicit token equal to any token of another node is refused,
 * as Cassandra refuses it; an explicit token listed twice by one node counts
 * once (Cassandra keeps one endpoint per token); two derived tokens that
 * collide (a 2^-64 event per pair) are ordered by (token, name bytes, label
 * index) and the first owns the range, as for every ringsim ring.
 *
 *   - src/java/org/apache/cassandra/locator/NetworkTopologyStrategy.java
 *     (4.x calculateNaturalReplicas, its DatacenterEndpoints): from the
 *     key's token, walk the ring once; a node of a datacenter that wants
 *     replicas is taken when its (dc, rack) is new, or when the rack was
 *     seen but the datacenter may still repeat one (acceptableRackRepeats
 *     = rf - racks in the dc, counted down), never twice; each datacenter
 *     stops at min(rf, its nodes); the walk stops when all are full or
 *     the ring is done.  3.0 held skipped nodes in a per-dc ordered set
 *     and added them once every rack held one: the same set, other order.
 * And, to say where clients route elsewhere (cassandra_nts_driver):
 *   - datastax/python-driver cassandra/metadata.py (3.25, Debian's
 *     python3-cassandra), NetworkTopologyStrategy.make_token_replica_map:
 *     datacenters one after the other, in the order of their first token
 *     on the ring; within one, hosts of a placed rack are skipped into a
 *     list (a host met at two tokens goes in twice) that is emptied into
 *     the replicas once every rack holds one -- duplicates included;
 *   - datastax/nodejs-driver lib/metadata/schema-parser.js (4.8-4.10),
 *     getReplicasNetworkTopology: one walk, but one skipped list for every
 *     datacenter, emptied (never cleared) into whichever datacenter has
 *     just placed all its racks.
 * Costs: cassandra_token O(len); building a ring O(T log T) for T tokens;
 * owner O(log T); replicas O(T * R) worst case, O(R^2) typically.  Pure
 * functions, thread-safe, no global state.
 */
#ifndef RINGSIM_ALG_CASSANDRA_H
#define RINGSIM_ALG_CASSANDRA_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "error.h"

#define CASSANDRA_DEFAULT_NUM_TOKENS 16
#define CASSANDRA_MAX_NUM_TOKENS 1536 /* DatabaseDescriptor.MAX_NUM_TOKENS */

/* First long of Cassandra's hash3_x64_128(key, seed 0), signed-byte tail
 * included, before any normalization.  Cannot fail. */
int64_t cassandra_murmur3(const void *key, size_t len);

/* Murmur3Partitioner.getToken of a partition key's bytes (a text key: its
 * UTF-8 bytes): INT64_MIN for an empty key, else the hash's first long with
 * INT64_MIN mapped to INT64_MAX.  Cannot fail. */
int64_t cassandra_token(const char *key, size_t len);

/* A token as text, Long.parseLong's syntax (optional + or -, decimal
 * digits, within 64 bits).  0, or RINGSIM_EPARAM with a message. */
int cassandra_parse_token(const char *s, size_t len, int64_t *out, rs_error *err);

/* 0, or RINGSIM_EPARAM with a message when num_tokens is outside
 * 1..1536. */
int cassandra_check_num_tokens(long long num_tokens, rs_error *err);

/* Explicit tokens of one node (initial_token); count 0 = derive them. */
typedef struct cassandra_tokens {
    const int64_t *tokens; /* borrowed */
    size_t count;
} cassandra_tokens;

/* The ring of nodes[0..n): every token as an alg_point (coord =
 * alg_from_signed(token), node = index, index = label number or position in
 * the explicit list) in ring order, into *out (malloc'd, caller frees) and
 * its length into *count.  explicit_tokens may be NULL, else has n entries.
 * Refuses with RINGSIM_EPARAM and a message naming the node: more than 1536
 * tokens on a node (num_tokens * weight, or an explicit list), and an
 * explicit token another node also holds.  RINGSIM_ENOMEM otherwise.
 * num_tokens must have passed cassandra_check_num_tokens. */
int cassandra_ring(const alg_node *nodes, size_t n, const cassandra_tokens *explicit_tokens,
                   uint32_t num_tokens, alg_point **out, size_t *count, rs_error *err);

/* A ring cassandra_ring built, and what it was built from (all borrowed). */
typedef struct cassandra_prev {
    const alg_point *pts;
    size_t npts;
    const alg_node *nodes;
    const cassandra_tokens *ex; /* NULL, or n entries */
    size_t n;
    uint32_t num_tokens;
} cassandra_prev;

/* The same ring as cassandra_ring, built from prev (NULL: from nothing):
 * the nodes of prev that stay with tokens derived the same way (same name,
 * same count, no explicit list) keep theirs without hashing or sorting
 * them again; the others' are made and merged in.  O(tokens) plus the new
 * tokens sorted, where cassandra_ring hashes and sorts them all. */
int cassandra_ring_from(const alg_node *nodes, size_t n, const cassandra_tokens *explicit_tokens,
                        uint32_t num_tokens, const cassandra_prev *prev, alg_point **out,
                        size_t *count, rs_error *err);

/* Index of the point that owns a key token: the first with token >= it,
 * wrapping.  n > 0.  Cannot fail. */
size_t cassandra_lookup(const alg_point *pts, size_t n, int64_t token);

/* SimpleStrategy: from point `first` (the owner's), the first min(r, nodes
 * on the ring) distinct nodes clockwise, owner first, into out[0..r).
 * Returns how many were written.  Cannot fail. */
size_t cassandra_replicas(const alg_point *pts, size_t n, size_t first, uint32_t *out, size_t r);

/* What NetworkTopologyStrategy needs of a ring: for each node its
 * datacenter (an index into rf[], -1 for a datacenter without replicas)
 * and its rack (an id unique over (dc, rack) pairs, < nracks); for each
 * datacenter its replication factor, nodes and racks.  All borrowed. */
typedef struct cassandra_topo {
    const alg_point *pts; /* the ring, in ring order */
    size_t npts;
    size_t n;
    const int *dc;
    const uint32_t *rack;
    uint32_t nracks;
    size_t ndc;
    const uint32_t *rf, *dc_nodes, *dc_racks;
} cassandra_topo;

/* Cassandra 4.x's replicas of the key whose token point is `first`, in
 * the order it returns them (primary first), into out[0..cap); how many.
 * Cannot fail (no allocation: a walk keeps at most cap nodes and racks). */
size_t cassandra_nts_replicas(const cassandra_topo *t, size_t first, uint32_t *out, size_t cap);

typedef enum { CASSANDRA_DRIVER_PYTHON, CASSANDRA_DRIVER_NODEJS } cassandra_driver;
/* The replicas a driver computes for that token (duplicates kept, as the
 * driver returns them), into out[0..cap); how many, or -1 when out of
 * memory. */
long cassandra_nts_driver(const cassandra_topo *t, cassandra_driver d, size_t first, uint32_t *out,
                          size_t cap);

#endif
