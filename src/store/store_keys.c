/*
 * store_keys.c - the nodes and the keys tables of the store: nodes in join
 * order; keys clustered by (coordinate, key) so that an arc that changes
 * hands is a run of adjacent pages, with a unique index on the key;
 * moves of a range of keys (recorded in the transaction's run of moves,
 * store.c), a rebuild of the table in a new coordinate order, cursors and
 * pages of keys.
 *
 * Costs: one key O(log keys); a move of a range O(keys in it); a page
 * reads its rows and skips the entries before it in one tree; a rebuild
 * reads, sorts and writes every key once.
 */
#define _GNU_SOURCE /* qsort_r */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ---- nodes ---- */

int store_nodes_load(store *st, store_node **out, size_t *n, rs_error *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s = store__stmt(st, Q_NODES);
    if (!s)
        return store__dberr(st, err, "reading nodes");
    size_t cap = 0, len = 0;
    store_node *v = NULL;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (vec_reserve(&v, &cap, len + 1, sizeof *v, 16))
            goto nomem;
        store_node *d = &v[len];
        d->id = sqlite3_column_int64(s, 0);
        d->name = store__dup_text(s, 1);
        d->len = (size_t)sqlite3_column_bytes(s, 1);
        d->weight = sqlite3_column_double(s, 2);
        d->keys = sqlite3_column_int64(s, 3);
        d->tokens = sqlite3_column_type(s, 4) == SQLITE_NULL ? NULL : store__dup_text(s, 4);
        d->attrs = sqlite3_column_type(s, 5) == SQLITE_NULL ? NULL : store__dup_text(s, 5);
        if (!d->name || (sqlite3_column_type(s, 5) != SQLITE_NULL && !d->attrs))
            goto nomem;
        len++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        store_nodes_free(v, len);
        return store__dberr(st, err, "reading nodes");
    }
    *out = v;
    *n = len;
    return 0;
nomem:
    sqlite3_reset(s);
    store_nodes_free(v, len);
    return rs_fail(err, RINGSIM_ENOMEM, "out of memory reading nodes");
}

void store_nodes_free(store_node *nodes, size_t n)
{
    for (size_t i = 0; i < n && nodes; i++) {
        free(nodes[i].name);
        free(nodes[i].tokens);
        free(nodes[i].attrs);
    }
    free(nodes);
}

int store_node_insert(store *st, const char *name, size_t len, double weight, const char *tokens,
                      int64_t *id, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_NODE_INS);
    if (s) {
        sqlite3_bind_text(s, 1, name, (int)len, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, weight);
        if (tokens)
            sqlite3_bind_text(s, 3, tokens, -1, SQLITE_STATIC);
    }
    int rc = store__run(st, s, err, "adding a node");
    *id = rc ? 0 : sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_node_insert_seq(store *st, const char *name, size_t len, double weight,
                          const char *tokens, int64_t seq, int64_t *id, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_NODE_INS_SEQ);
    if (s) {
        sqlite3_bind_text(s, 1, name, (int)len, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, weight);
        if (tokens)
            sqlite3_bind_text(s, 3, tokens, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, seq);
    }
    int rc = store__run(st, s, err, "adding a node");
    *id = rc ? 0 : sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_node_update(store *st, int64_t id, double weight, int64_t keys, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_NODE_UPD);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_double(s, 2, weight);
        sqlite3_bind_int64(s, 3, keys);
    }
    return store__run(st, s, err, "updating a node");
}

int store_node_set_attrs(store *st, int64_t id, const char *attrs, int64_t seq, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_NODE_ATTRS);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        if (attrs)
            sqlite3_bind_text(s, 2, attrs, -1, SQLITE_STATIC);
        if (seq >= 0)
            sqlite3_bind_int64(s, 3, seq);
    }
    return store__run(st, s, err, "setting a node's attributes");
}

int store_node_set_tokens(store *st, int64_t id, const char *tokens, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_NODE_TOKENS);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        if (tokens)
            sqlite3_bind_text(s, 2, tokens, -1, SQLITE_STATIC);
    }
    return store__run(st, s, err, "setting a node's tokens");
}

int store_node_delete(store *st, int64_t id, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_NODE_DEL);
    if (s)
        sqlite3_bind_int64(s, 1, id);
    return store__run(st, s, err, "removing a node");
}

/* ---- keys ---- */

/* A stored coordinate is the order-preserving uint64 ^ 2^63 (sim_int.h);
 * a position is stored the same way where it is the coordinate. */
#define COORD_FLIP 0x8000000000000000ull

static void bind_node(sqlite3_stmt *s, int i, int64_t node)
{
    if (node == STORE_NO_NODE)
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_int64(s, i, node);
}

static int64_t column_node(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? STORE_NO_NODE : sqlite3_column_int64(s, i);
}

/* The coordinate column of k: its own coordinate, or its position. */
static int64_t key_coord(const store_key *k)
{
    return k->has_coord ? k->coord : (int64_t)((uint64_t)k->pos ^ COORD_FLIP);
}

int64_t store_key_column(const store_key *k) { return key_coord(k); }

/* The pos column of k: NULL where the coordinate is the position. */
static void bind_pos(sqlite3_stmt *s, int i, const store_key *k)
{
    if (k->has_coord)
        sqlite3_bind_int64(s, i, k->pos);
    else
        sqlite3_bind_null(s, i);
}

/* A row of (key, coord, node, pos) from column i on. */
static void column_key(sqlite3_stmt *s, int i, store_key *k)
{
    k->key = (const char *)sqlite3_column_text(s, i);
    k->len = (size_t)sqlite3_column_bytes(s, i);
    int64_t coord = sqlite3_column_int64(s, i + 1);
    k->node = column_node(s, i + 2);
    k->has_coord = sqlite3_column_type(s, i + 3) != SQLITE_NULL;
    k->coord = k->has_coord ? coord : 0;
    k->pos = k->has_coord ? (uint32_t)sqlite3_column_int64(s, i + 3)
                          : (uint32_t)((uint64_t)coord ^ COORD_FLIP);
}

/* Whether the keys have coordinates of their own (every key is of the
 * kind of the algorithm that placed it; an empty table has none). */
static int keys_own_coords(store *st, bool *own, rs_error *err)
{
    *own = false;
    sqlite3_stmt *s = store__stmt(st, Q_KEYS_KIND);
    if (!s)
        return store__dberr(st, err, "reading keys");
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *own = sqlite3_column_int(s, 0) != 0;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store__dberr(st, err, "reading keys");
    sqlite3_reset(s);
    return rc;
}

int store_key_insert(store *st, const store_key *k, int *inserted, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_KEY_INS);
    if (s) {
        sqlite3_bind_text(s, 1, k->key, (int)k->len, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, key_coord(k));
        bind_node(s, 3, k->node);
        bind_pos(s, 4, k);
    }
    int rc = store__run(st, s, err, "inserting a key");
    *inserted = rc ? 0 : sqlite3_changes(st->db);
    return rc;
}

static int batch_cmp(const void *a, const void *b, void *ud)
{
    const store_key *v = ud, *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
    int64_t cx = key_coord(x), cy = key_coord(y);
    if (cx != cy)
        return cx < cy ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

int store_keys_insert_batch(store *st, const store_key *v, size_t n, int *inserted,
                            store_poll_fn poll, void *ud, rs_error *err)
{
    size_t *ord = n ? malloc(n * sizeof *ord) : NULL;
    if (n && !ord)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    if (n)
        qsort_r(ord, n, sizeof *ord, batch_cmp, (void *)v);
    int rc = 0;
    for (size_t j = 0; j < n && !rc; j++) {
        rc = store_key_insert(st, &v[ord[j]], &inserted[ord[j]], err);
        if (!rc && poll && j % 16384 == 16383)
            rc = poll(ud);
    }
    free(ord);
    return rc;
}

int store_key_find(store *st, const char *key, size_t len, store_key *out, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_KEY_GET);
    if (!s)
        return store__dberr(st, err, "reading a key");
    sqlite3_bind_text(s, 1, key, (int)len, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        column_key(s, 0, out);
        out->key = key; /* the row's text goes with the reset */
        out->len = len;
        rc = 0;
    } else if (rc == SQLITE_DONE) {
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "key \"%.*s\" not found", (int)len, key);
    } else {
        rc = store__dberr(st, err, "reading a key");
    }
    sqlite3_reset(s);
    return rc;
}

int store_key_delete(store *st, const char *key, size_t len, int *deleted, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_KEY_DEL);
    if (s)
        sqlite3_bind_text(s, 1, key, (int)len, SQLITE_STATIC);
    int rc = store__run(st, s, err, "deleting a key");
    *deleted = rc ? 0 : sqlite3_changes(st->db);
    return rc;
}

int store_keys_density(store *st, bool by_coord, uint64_t top, uint32_t bins, int64_t *counts,
                       rs_error *err)
{
    /* One pass, binned here: SQLite's GROUP BY would sort through a
     * temporary b-tree (3.7 s at a million keys against ~0.1 s). */
    for (uint32_t i = 0; i < bins; i++)
        counts[i] = 0;
    sqlite3_stmt *s = store__stmt(st, Q_DENSITY);
    if (!s)
        return store__dberr(st, err, "reading keys");
    int rc;
    unsigned __int128 size = (unsigned __int128)top + 1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t v = (uint64_t)sqlite3_column_int64(s, 0) ^ COORD_FLIP;
        bool own = sqlite3_column_type(s, 1) != SQLITE_NULL;
        if (!by_coord) {
            uint64_t pos = own ? (uint32_t)sqlite3_column_int64(s, 1) : (uint32_t)v;
            counts[(pos * bins) >> 32]++;
            continue;
        }
        if (!own) /* a key without a coordinate of its own */
            continue;
        uint64_t b = (uint64_t)((unsigned __int128)v * bins / size);
        counts[b < bins ? b : bins - 1]++; /* past top only in a damaged file */
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : store__dberr(st, err, "reading keys");
}

int store_keys_clear(store *st, rs_error *err)
{
    return store__run(st, store__stmt(st, Q_KEYS_CLEAR), err, "deleting keys");
}

int store_key_set(store *st, const store_key *k, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_KEY_SET);
    if (s) {
        sqlite3_bind_text(s, 1, k->key, (int)k->len, SQLITE_STATIC);
        bind_node(s, 2, k->node);
        sqlite3_bind_int64(s, 3, key_coord(k));
    }
    int rc = store__run(st, s, err, "moving a key");
    if (!rc && sqlite3_changes(st->db) != 1)
        rc = rs_fail(err, RINGSIM_EDB, "key \"%.*s\" is not at the coordinate given", (int)k->len,
                     k->key);
    return rc;
}

int store_keys_move(store *st, int64_t lo, int64_t hi, int64_t from, int64_t to, int64_t op,
                    const char *from_name, const char *to_name, int64_t *count, rs_error *err)
{
    int rc = 0;
    *count = 0;
    if (op > 0) {
        sqlite3_stmt *s = store__stmt(st, Q_MOVE_KEYS);
        if (!s)
            return store__dberr(st, err, "recording moves");
        sqlite3_bind_int64(s, 1, lo);
        sqlite3_bind_int64(s, 2, hi);
        bind_node(s, 3, from);
        int step;
        while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
            rc = store__run_record(st, op, (const char *)sqlite3_column_text(s, 0),
                                   (size_t)sqlite3_column_bytes(s, 0), from_name, to_name, err);
        if (!rc && step != SQLITE_DONE)
            rc = store__dberr(st, err, "recording moves");
        sqlite3_reset(s);
        if (rc)
            return rc;
    }
    sqlite3_stmt *s = store__stmt(st, Q_MOVE_UPD);
    if (s) {
        bind_node(s, 1, to);
        sqlite3_bind_int64(s, 2, lo);
        sqlite3_bind_int64(s, 3, hi);
        bind_node(s, 4, from);
    }
    if ((rc = store__run(st, s, err, "moving keys")))
        return rc;
    *count = sqlite3_changes(st->db);
    return 0;
}

/* Step through rows of (key, coord, node, pos), calling fn for each. */
static int each_key(store *st, sqlite3_stmt *s, store_key_fn fn, void *ud, rs_error *err,
                    const char *what)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_key k;
        column_key(s, 0, &k);
        int r = fn(ud, &k);
        if (r) {
            sqlite3_reset(s);
            return r;
        }
    }
    int r = rc == SQLITE_DONE ? 0 : store__dberr(st, err, what);
    sqlite3_reset(s);
    return r;
}

int store_keys_each(store *st, int order, store_key_fn fn, void *ud, rs_error *err)
{
    bool own = false;
    int rc = order == STORE_EACH_POSITION ? keys_own_coords(st, &own, err) : 0;
    if (rc)
        return rc;
    /* Where the coordinate is the position, the table's order is it. */
    int q = order == STORE_EACH_KEY ? Q_KEYS_BY_KEY : own ? Q_KEYS_BY_POS : Q_KEYS_TABLE;
    sqlite3_stmt *s = store__stmt(st, q);
    if (!s)
        return store__dberr(st, err, "reading keys");
    return each_key(st, s, fn, ud, err, "reading keys");
}

/* ---- a rebuild of the table in a new coordinate order ---- */

typedef struct rebuilt {
    int64_t coord, node, pos; /* pos < 0: the coordinate is the position */
    size_t off, len;          /* the key's bytes in the buffer */
} rebuilt;

typedef struct rebuild_ctx {
    store_rekey_fn fn;
    void *ud;
    rebuilt *v;
    size_t n, cap;
    char *bytes;
    size_t used, room;
    rs_error *err;
} rebuild_ctx;

static int rebuild_take(void *ud, const store_key *old)
{
    rebuild_ctx *r = ud;
    store_key k = *old;
    int rc = r->fn(r->ud, &k);
    if (rc)
        return rc;
    if (vec_reserve(&r->v, &r->cap, r->n + 1, sizeof *r->v, 4096) ||
        vec_reserve(&r->bytes, &r->room, r->used + old->len, 1, 65536))
        return rs_fail(r->err, RINGSIM_ENOMEM, "out of memory");
    memcpy(r->bytes + r->used, old->key, old->len);
    r->v[r->n++] = (rebuilt){key_coord(&k), k.node, k.has_coord ? (int64_t)k.pos : -1, r->used,
                             old->len};
    r->used += old->len;
    return 0;
}

/* The table's order: coordinate, then the key as SQLite compares text
 * (BINARY: the bytes, then the length). */
static int rebuilt_cmp(const void *a, const void *b, void *bytes)
{
    const rebuilt *x = a, *y = b;
    if (x->coord != y->coord)
        return x->coord < y->coord ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp((const char *)bytes + x->off, (const char *)bytes + y->off, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

int store_keys_rebuild(store *st, store_rekey_fn fn, void *ud, rs_error *err)
{
    rebuild_ctx r = {.fn = fn, .ud = ud, .err = err};
    sqlite3_stmt *s = store__stmt(st, Q_KEYS_TABLE), *ins = NULL;
    int rc = s ? each_key(st, s, rebuild_take, &r, err, "reading keys")
               : store__dberr(st, err, "reading keys");
    if (!rc && r.n) /* none: r.v is NULL, which qsort_r must not be given */
        qsort_r(r.v, r.n, sizeof *r.v, rebuilt_cmp, r.bytes);
    /* The new table takes its rows in its own order (appends); the key's
     * index is built after, by a sort, rather than by random inserts. */
    if (!rc)
        rc = store__exec(
            st,
            "DROP TABLE IF EXISTS keys_new;"
            "CREATE TABLE keys_new(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER,"
            "  pos INTEGER, PRIMARY KEY(coord, key)) WITHOUT ROWID;",
            err, "rebuilding keys");
    if (!rc && sqlite3_prepare_v2(st->db,
                                  "INSERT INTO keys_new(coord, key, node, pos) "
                                  "VALUES(?1, ?2, ?3, ?4)",
                                  -1, &ins, NULL) != SQLITE_OK)
        rc = store__dberr(st, err, "rebuilding keys");
    for (size_t i = 0; !rc && i < r.n; i++) {
        const rebuilt *e = &r.v[i];
        sqlite3_bind_int64(ins, 1, e->coord);
        sqlite3_bind_text(ins, 2, r.bytes + e->off, (int)e->len, SQLITE_STATIC);
        bind_node(ins, 3, e->node);
        if (e->pos < 0)
            sqlite3_bind_null(ins, 4);
        else
            sqlite3_bind_int64(ins, 4, e->pos);
        rc = store__run(st, ins, err, "rebuilding keys");
    }
    sqlite3_finalize(ins);
    free(r.v);
    free(r.bytes);
    if (!rc)
        rc = store__exec(st,
                         "DROP TABLE keys;"
                         "ALTER TABLE keys_new RENAME TO keys;"
                         "CREATE UNIQUE INDEX keys_key ON keys(key);"
                         "CREATE INDEX keys_pos ON keys(pos, key) WHERE pos IS NOT NULL;",
                         err, "rebuilding keys");
    return rc;
}

int store_keys_bulk(store *st, bool begin, bool with_pos, rs_error *err)
{
    int rc = store__exec(st,
                         begin ? "DROP INDEX IF EXISTS keys_key"
                               : "CREATE UNIQUE INDEX IF NOT EXISTS keys_key ON keys(key)",
                         err, begin ? "inserting keys" : "indexing keys");
    if (!rc && with_pos)
        rc = store__exec(
            st,
            begin ? "DROP INDEX IF EXISTS keys_pos"
                  : "CREATE INDEX IF NOT EXISTS keys_pos ON keys(pos, key) WHERE pos IS NOT NULL",
            err, begin ? "inserting keys" : "indexing keys");
    return rc;
}

struct store_cursor {
    store *st;
    sqlite3_stmt *s;
};

int store_cursor_open(store *st, store_cursor **out, rs_error *err)
{
    *out = NULL;
    store_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    c->st = st;
    if (!(c->s = store__prepare(st, Q_KEYS_BY_KEY))) {
        free(c);
        return store__dberr(st, err, "reading keys");
    }
    *out = c;
    return 0;
}

int store_cursor_next(store_cursor *c, store_key *k, rs_error *err)
{
    int rc = sqlite3_step(c->s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return store__dberr(c->st, err, "reading keys");
    column_key(c->s, 0, k);
    return 1;
}

void store_cursor_close(store_cursor *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->s);
    free(c);
}

int store_keys_page(store *st, const store_key_query *q, int64_t *total, store_key_fn fn, void *ud,
                    rs_error *err)
{
    /* Built per call: a few shapes of query, each cheap to prepare
     * compared with the page it reads.  The text is made of constants
     * only; the prefix travels as a bound parameter, so its length bounds
     * nothing here. */
    if (q->known_total >= 0)
        *total = q->known_total;
    bool pre = q->prefix && q->prefix_len;
    if (pre && q->prefix_len > INT32_MAX)
        return rs_fail(err, RINGSIM_EPARAM, "prefix is too long");
    /* In position order: the table's own order where the coordinate is the
     * position, else the partial index keys_pos (the query says pos IS NOT
     * NULL, true of every key there, so that SQLite may use it). */
    bool own = false;
    int rc = q->order == STORE_ORDER_POSITION && (q->known_total < 0 || q->known_total > 0)
                 ? keys_own_coords(st, &own, err)
                 : 0;
    if (rc)
        return rc;
    char where[160], text[600];
    /* In coordinate order, only the keys that have one of their own (all
     * of them, where that order is asked). */
    snprintf(where, sizeof where, "1%s%s%s",
             !q->by_node                ? ""
             : q->node == STORE_NO_NODE ? " AND node IS NULL"
                                        : " AND node = ?1",
             pre ? " AND key >= ?2 AND (?3 IS NULL OR key < ?3)" : "",
             q->order == STORE_ORDER_COORD || own ? " AND pos IS NOT NULL" : "");
    sqlite3_stmt *s = NULL;
    /* The upper bound of the prefix range: the prefix with its last byte
     * below 0xFF incremented (keys are valid UTF-8, so no key has 0xFF).
     * Sized by the prefix, whatever its length. */
    char *upper = NULL;
    size_t ulen = 0;
    if (pre) {
        if (!(upper = malloc(q->prefix_len)))
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        memcpy(upper, q->prefix, q->prefix_len);
        ulen = q->prefix_len;
        while (ulen > 0 && (unsigned char)upper[ulen - 1] == 0xFF)
            ulen--;
        if (ulen > 0)
            upper[ulen - 1] = (char)((unsigned char)upper[ulen - 1] + 1);
    }
    /* Deep pages: OFFSET skips entries of the tree that gives the order
     * (the table, or keys_key), and only the page's rows are read whole --
     * 0.1 s at offset 500,000 of a million keys where reading every
     * skipped row took 1 s. */
    char order[2][64]; /* inside the page, and of its rows */
    const char *d = q->desc ? " DESC" : "";
    bool by_pos = q->order == STORE_ORDER_COORD || (q->order == STORE_ORDER_POSITION && own);
    for (int i = 0; i < 2; i++) {
        const char *t = i ? "p." : "";
        if (q->order == STORE_ORDER_KEY)
            snprintf(order[i], sizeof order[i], "%skey%s", t, d);
        else if (q->order == STORE_ORDER_COORD)
            snprintf(order[i], sizeof order[i], "%scoord%s, %spos%s, %skey%s", t, d, t, d, t, d);
        else if (own)
            snprintf(order[i], sizeof order[i], "%spos%s, %skey%s", t, d, t, d);
        else /* the table's order is the position's */
            snprintf(order[i], sizeof order[i], "%scoord%s, %skey%s", t, d, t, d);
    }
    rc = 0;
    for (int pass = q->known_total >= 0; pass < 2 && !rc; pass++) {
        if (pass == 0)
            snprintf(text, sizeof text, "SELECT count(*) FROM keys WHERE %s", where);
        else /* the page cut from one tree alone, then its rows */
            snprintf(text, sizeof text,
                     "SELECT k.key, k.coord, k.node, k.pos FROM (SELECT coord, key%s FROM keys "
                     "WHERE %s ORDER BY %s LIMIT ?4 OFFSET ?5) AS p JOIN keys AS k "
                     "ON k.coord = p.coord AND k.key = p.key ORDER BY %s",
                     by_pos ? ", pos" : "", where, order[0], order[1]);
        if (sqlite3_prepare_v2(st->db, text, -1, &s, NULL) != SQLITE_OK) {
            rc = store__dberr(st, err, "listing keys");
            break;
        }
        if (q->by_node && q->node != STORE_NO_NODE)
            sqlite3_bind_int64(s, 1, q->node);
        if (pre) {
            sqlite3_bind_text(s, 2, q->prefix, (int)q->prefix_len, SQLITE_STATIC);
            if (ulen > 0)
                sqlite3_bind_text(s, 3, upper, (int)ulen, SQLITE_STATIC);
        }
        if (pass == 0) {
            rc = sqlite3_step(s);
            *total = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
            rc = rc == SQLITE_ROW ? 0 : store__dberr(st, err, "counting keys");
        } else {
            sqlite3_bind_int64(s, 4, q->limit);
            sqlite3_bind_int64(s, 5, q->offset);
            rc = each_key(st, s, fn, ud, err, "listing keys");
        }
        sqlite3_finalize(s);
    }
    free(upper);
    return rc;
}
