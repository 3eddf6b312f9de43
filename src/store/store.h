/*
 * store.h - SQLite persistence: the source of truth for a simulation.
 *
 * Tables: meta (schema version, configuration, counters), nodes, keys (with
 * position and owner), ops (the operation log with each operation's
 * parameters and the configuration after it), op_keys (key lists of explicit
 * inserts and deletes, for replay) and move_runs (key, from, to of every
 * move, packed in runs: moverun.h).
 * WAL mode, one cached prepared statement per query, and one write
 * transaction per operation (store_begin ... store_commit).  Keys are
 * clustered by (coordinate, key) -- the coordinate in the algorithm's space,
 * or the position for the algorithms without one -- so that an arc that
 * changes hands is a run of adjacent pages for every algorithm, with a
 * unique index on the key for lookups (schema 6).
 *
 * The store knows SQL and nothing of HTTP or of placement.  Every function
 * returns 0 or a negative RINGSIM_E* code with err filled.  Strings handed to
 * callbacks are valid only during the callback.
 */
#ifndef RINGSIM_STORE_H
#define RINGSIM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "names.h" /* NAME_BUF */
#include "oprec.h"

#define STORE_SCHEMA_VERSION 7
#define STORE_NO_NODE (-1) /* owner of an unassigned key */

typedef struct store store;

/* Open (creating when missing) a database; ":memory:" for a private one in
 * RAM, "" for a private temporary file (bounded memory).
 * Refuses folders, files that are not ringsim databases and damaged ones
 * (RINGSIM_ENOTDB), leaving them untouched.  A file that cannot be written
 * (it or its folder is not writable) is opened read-only: see
 * store_read_only.  Test hook: the environment variable RINGSIM_MAX_PAGES
 * caps the file at that many pages (PRAGMA max_page_count), so that a
 * full disk can be tested without filling one. */
int store_open(store **out, const char *path, rs_error *err);
/* Accepts NULL; finalizes every statement. */
void store_close(store *st);
/* Why writes are refused (the file or its folder is not writable, the
 * file was deleted or replaced since it was opened...), or NULL when they
 * are not; store_begin then fails with RINGSIM_EREADONLY or
 * RINGSIM_EMOVED.  Valid until the next call on st. */
const char *store_read_only(store *st);

/* Write transaction (BEGIN IMMEDIATE: takes the write lock at once, waiting
 * up to the busy timeout for other processes).  A file deleted or replaced
 * under this process (rm, mv over it) would take every write with it: once
 * the lock is held, begin checks that the path still names the open file
 * (and its -wal file is there), and commit checks again just before
 * COMMIT; either refuses with RINGSIM_EMOVED, naming the cause, and rolls
 * back.  Reads go on from the open file. */
int store_begin(store *st, rs_error *err);
int store_commit(store *st, rs_error *err);
/* The same check alone, for a reader to notice early (and to take our -wal
 * and -shm away from a file that replaced ours): 0, or RINGSIM_EMOVED. */
int store_check_file(store *st, rs_error *err);
/* Cannot fail (a failed rollback leaves SQLite rolling back on close). */
void store_rollback(store *st);
/* Read snapshot for a consistent multi-query read. */
int store_begin_read(store *st, rs_error *err);
void store_end_read(store *st);
/* Whether a transaction (read or write) is open on this connection. */
bool store_in_transaction(const store *st);
/* PRAGMA data_version: changes when another connection commits, never with
 * this connection's own commits.  Inside a transaction, the version of its
 * snapshot. */
int store_data_version(store *st, int64_t *out, rs_error *err);

/* meta: text values by name (stored as blobs of their bytes); *out is
 * malloc'd (caller frees), NULL when missing. */
int store_meta_get(store *st, const char *name, char **out, rs_error *err);
int store_meta_set(store *st, const char *name, const char *value, rs_error *err);
/* Delete the entries named prefix + a number, for numbers below `below`. */
int store_meta_delete_below(store *st, const char *prefix, int64_t below, rs_error *err);
int store_meta_get_int(store *st, const char *name, int64_t *out, rs_error *err);
int store_meta_set_int(store *st, const char *name, int64_t value, rs_error *err);

/* ---- nodes ---- */
typedef struct store_node {
    int64_t id;
    char *name; /* malloc'd, NUL-terminated */
    size_t len;
    double weight;
    int64_t keys;
    char *tokens; /* explicit tokens as JSON text (malloc'd), or NULL */
    char *attrs;  /* the node's attributes, a JSON object as text (malloc'd), or NULL */
} store_node;

/* All nodes in join order (seq, which a new node takes after every other,
 * else the id); *out malloc'd array (free with store_nodes_free). */
int store_nodes_load(store *st, store_node **out, size_t *n, rs_error *err);
void store_nodes_free(store_node *nodes, size_t n);
int store_node_insert(store *st, const char *name, size_t len, double weight, const char *tokens,
                      int64_t *id, rs_error *err);
/* store_node_insert at place seq of the join order (store_node_set_attrs's
 * seq), without looking for the last place: O(log n). */
int store_node_insert_seq(store *st, const char *name, size_t len, double weight,
                          const char *tokens, int64_t seq, int64_t *id, rs_error *err);
int store_node_update(store *st, int64_t id, double weight, int64_t keys, rs_error *err);
int store_node_delete(store *st, int64_t id, rs_error *err);
/* Replace node id's attributes (a JSON object as text; NULL: none) and its
 * place in the join order (seq: nodes load by seq ascending; < 0 keeps it). */
int store_node_set_attrs(store *st, int64_t id, const char *attrs, int64_t seq, rs_error *err);
/* Replace node id's explicit tokens (JSON text as store_node_insert takes
 * it; NULL: none). */
int store_node_set_tokens(store *st, int64_t id, const char *tokens, rs_error *err);

/* ---- keys ---- */
typedef struct store_key {
    const char *key;
    size_t len;
    uint32_t pos;
    int64_t node;   /* STORE_NO_NODE when unassigned */
    bool has_coord; /* the coordinate column is not NULL */
    int64_t coord;  /* stored coordinate: the order-preserving uint64 ^ 2^63 */
} store_key;
typedef int (*store_key_fn)(void *ud, const store_key *k);

/* The value of k's coordinate column, the table's order before the key:
 * its own coordinate, or its position (order-preserving). */
int64_t store_key_column(const store_key *k);
/* *inserted = 1, or 0 when the key exists (nothing changes). */
int store_key_insert(store *st, const store_key *k, int *inserted, rs_error *err);
/* The keys v[0..n) inserted in the table's order (stored coordinate, then
 * key), not in v's: a batch in the clustered order writes each page of the
 * table once instead of once per key.  inserted[i] as store_key_insert
 * says it for v[i].  poll(ud) is asked every 16384 keys (a cancellation):
 * its non-zero answer stops the batch and is returned, as is the first
 * failure. */
typedef int (*store_poll_fn)(void *ud);
int store_keys_insert_batch(store *st, const store_key *v, size_t n, int *inserted,
                            store_poll_fn poll, void *ud, rs_error *err);
/* Set the node of the key k->key, found by its stored coordinate (k->coord
 * with has_coord, else its position k->pos): RINGSIM_EDB when it is not
 * there.  A new coordinate takes store_keys_rebuild. */
int store_key_set(store *st, const store_key *k, rs_error *err);
/* Record one move of operation op, after those it recorded before (names
 * NULL for unassigned).  Moves are kept in runs (moverun.h) written as they
 * fill, before any read of moves and at commit; a rollback drops them. */
int store_move_add(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                   const char *to_name, rs_error *err);
/* RINGSIM_ENOTFOUND when missing. */
int store_key_find(store *st, const char *key, size_t len, store_key *out, rs_error *err);
/* *deleted = 1, or 0 when the key was not there. */
int store_key_delete(store *st, const char *key, size_t len, int *deleted, rs_error *err);
int store_keys_clear(store *st, rs_error *err);
/* Keys per equal slice of positions [0, 2^32), or with by_coord of
 * coordinates [0, top] (keys without one of their own are not counted):
 * counts[bins], zeroed first. */
int store_keys_density(store *st, bool by_coord, uint64_t top, uint32_t bins, int64_t *counts,
                       rs_error *err);
/* Give every key with lo <= stored coordinate <= hi (a key's own, or its
 * position in the same encoding: uint64 ^ 2^63) owned by `from` to `to`;
 * when op > 0, record each as a move in (coordinate, key) order, after
 * the operation's earlier moves.  *count is the number moved. */
int store_keys_move(store *st, int64_t lo, int64_t hi, int64_t from, int64_t to, int64_t op,
                    const char *from_name, const char *to_name, int64_t *count, rs_error *err);
/* Every key, ordered by key bytes, by (position, key), or in the table's
 * order (coordinate, key: the cheapest). */
enum { STORE_EACH_KEY, STORE_EACH_POSITION, STORE_EACH_TABLE };
int store_keys_each(store *st, int order, store_key_fn fn, void *ud, rs_error *err);
/* Give every key a new owner and coordinate: fn is called once per key in
 * the table's order and may change k->node, k->has_coord and k->coord (not
 * the key or its position); the table is then written anew in the new
 * order (appends, the key index built by a sort) and takes the old one's
 * place, inside the caller's transaction.  A change of algorithm. */
typedef int (*store_rekey_fn)(void *ud, store_key *k);
int store_keys_rebuild(store *st, store_rekey_fn fn, void *ud, rs_error *err);
/* Around a large insert, inside its transaction: begin drops the key's
 * unique index and (with_pos: keys with coordinates of their own) the index
 * by position, the end builds them again by one sort each (cheaper than as
 * many inserts at random).  In between, the primary key (coordinate, key)
 * still refuses a key stored twice: a key's coordinate is a function of
 * the key under the placement that stores it. */
int store_keys_bulk(store *st, bool begin, bool with_pos, rs_error *err);

/* A pull cursor over every key by key bytes, on a statement of its own (so
 * that two stores can be walked in step).  next gives 1 with a row (valid
 * until the next call), 0 at the end, or a negative code. */
typedef struct store_cursor store_cursor;
int store_cursor_open(store *st, store_cursor **out, rs_error *err);
int store_cursor_next(store_cursor *c, store_key *k, rs_error *err);
/* Accepts NULL. */
void store_cursor_close(store_cursor *c);

typedef struct store_key_query {
    int64_t node;       /* filter by owner; STORE_NO_NODE = unassigned */
    bool by_node;       /* whether node filters */
    const char *prefix; /* NULL or "" = no filter */
    size_t prefix_len;
    int64_t offset, limit;
    int64_t known_total; /* the caller knows the total (counters): >= 0 */
    int order;           /* STORE_ORDER_*; 0: (position, key) */
    bool desc;           /* the order reversed */
} store_key_query;
enum { STORE_ORDER_POSITION, STORE_ORDER_KEY, STORE_ORDER_COORD };
/* A page of keys in q->order -- (position, key), key, or (coordinate,
 * position, key) over the keys that have one -- and the total that match. */
int store_keys_page(store *st, const store_key_query *q, int64_t *total, store_key_fn fn, void *ud,
                    rs_error *err);

/* ---- the operation log ---- */
typedef oprec store_op; /* base/oprec.h */
typedef int (*store_op_fn)(void *ud, const store_op *op);

/* Append an operation (at = now); *id is its id. */
int store_op_append(store *st, const char *type, const char *subject, const char *params,
                    const char *config, int64_t *id, rs_error *err);
/* Fill in what is known at the end: moves and the configuration after. */
/* replica_moves: (key, node) copies the operation adds to preference lists
 * beyond the owner moves; skipped: keys an insert found already there (-1
 * for other operations). */
int store_op_finish(store *st, int64_t id, int64_t keys_moved, const char *moved_from,
                    const char *config, int64_t replica_moves, int64_t skipped, rs_error *err);
int store_op_add_key(store *st, int64_t op, int64_t seq, const char *key, size_t len, rs_error *err);
/* RINGSIM_ENOTFOUND when missing; free with store_op_clear. */
int store_op_get(store *st, int64_t id, store_op *out, rs_error *err);
void store_op_clear(store_op *op);
/* Operations with id > after, at most limit (< 0: all), increasing id. */
int store_ops_each(store *st, int64_t after, int64_t limit, store_op_fn fn, void *ud, rs_error *err);
/* The id of the last operation (0 when none) into *out. */
int store_last_op(store *st, int64_t *out, rs_error *err);
/* What replaying or undoing the operations (from, to] costs, in keys: the
 * keys they moved, inserted or deleted, plus one for each. */
int store_ops_work(store *st, int64_t from, int64_t to, int64_t *out, rs_error *err);
/* The operations in (from, to] that change the layout (every type but
 * insert_keys and delete_keys): *count of them, *runs of consecutive
 * ones, the *first (0 when none). */
int store_ops_topology(store *st, int64_t from, int64_t to, int64_t *count, int64_t *runs,
                       int64_t *first, rs_error *err);
/* For the layout changes in (from, to] replayed from a state of `start`
 * nodes: the sum over them of the nodes each builds, estimated by the node
 * adds up to it, at most cap (what a replay's layouts cost grows with). */
int store_ops_node_builds(store *st, int64_t from, int64_t to, int64_t start, int64_t cap,
                          int64_t *out, rs_error *err);
/* The smallest number among the meta entries named prefix + a number (0
 * when none). */
int store_meta_oldest(store *st, const char *prefix, int64_t *out, rs_error *err);
/* Delete the oldest entries named prefix + a number until the rest hold at
 * most keep_bytes of values. */
int store_meta_trim(store *st, const char *prefix, int64_t keep_bytes, rs_error *err);
/* The size of the file in pages (what a copy costs). */
int store_page_count(store *st, int64_t *out, rs_error *err);
/* Make dst a copy of src, whole (SQLite's online backup, one read
 * transaction on src: writers are not held up).  dst has nothing open. */
int store_copy_from(store *dst, store *src, rs_error *err);
/* Give back the page cache and keep it small (a copy kept for later
 * copies of it). */
void store_shrink(store *st);
/* The last reset or revert with id <= upto (0 when none) into *out. */
int store_op_base(store *st, int64_t upto, int64_t *out, rs_error *err);
/* The key list of an explicit insert or delete, in request order. */
typedef int (*store_str_fn)(void *ud, const char *s, size_t len);
int store_op_keys_each(store *st, int64_t op, store_str_fn fn, void *ud, rs_error *err);
/* Moves offset .. offset + limit - 1 of operation op in the order recorded
 * (limit negative: all), *total the number it has; from and to are NULL
 * for unassigned.  fn's non-zero answer stops the page and is returned. */
typedef int (*store_move_fn)(void *ud, const char *key, const char *from, const char *to);
int store_moves_page(store *st, int64_t op, int64_t offset, int64_t limit, int64_t *total,
                     store_move_fn fn, void *ud, rs_error *err);

/* Schema 5: an operation's requests_moved and bytes_moved, and the workload
 * it leaves (JSON text; NULL for the default).  store_op_workload gives
 * *out = NULL (malloc'd otherwise) when the operation recorded none. */
int store_op_set_loads(store *st, int64_t id, double requests_moved, int64_t bytes_moved,
                       const char *workload, rs_error *err);
int store_op_workload(store *st, int64_t id, char **out, rs_error *err);

#endif
