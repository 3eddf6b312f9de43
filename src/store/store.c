/*
 * store.c - the SQLite store (see store.h): opening a file, the schema and
 * its migrations, the statements, transactions and meta.  The nodes and
 * keys are store_keys.c's, the operation log store_log.c's, the checks of
 * the file under SQLite store_file.c's; they share store_int.h.
 *
 * Statements are prepared on first use and kept in a table indexed by an
 * enum (store_int.h), so each query is parsed once per connection.  Errors
 * from SQLite are mapped to RINGSIM_E* codes: BUSY/LOCKED -> EBUSY,
 * READONLY -> EREADONLY, NOTADB -> ENOTDB, the rest -> EDB, with SQLite's
 * own message kept.  A transaction carries the run of moves being filled
 * (moverun.h), written at commit and dropped at rollback.
 */
#define _GNU_SOURCE
#include "store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const sql[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_BEGIN_READ] = "BEGIN",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_META_GET] = "SELECT v FROM meta WHERE k = ?1",
    [Q_META_SET] = "INSERT INTO meta(k, v) VALUES(?1, ?2) "
                   "ON CONFLICT(k) DO UPDATE SET v = excluded.v",
    [Q_META_DEL_BELOW] = "DELETE FROM meta WHERE substr(k, 1, length(?1)) = ?1 "
                         "AND CAST(substr(k, length(?1) + 1) AS INTEGER) < ?2",
    [Q_NODES] = "SELECT id, name, weight, keys, tokens, attrs FROM nodes "
                "ORDER BY coalesce(seq, id), id",
    [Q_NODE_ATTRS] = "UPDATE nodes SET attrs = ?2, seq = coalesce(?3, seq) WHERE id = ?1",
    [Q_NODE_TOKENS] = "UPDATE nodes SET tokens = ?2 WHERE id = ?1",
    [Q_NODE_INS] = "INSERT INTO nodes(name, weight, keys, tokens, seq) VALUES(?1, ?2, 0, ?3, "
                   "(SELECT coalesce(max(coalesce(seq, id)), 0) + 1 FROM nodes))",
    /* seq given: no scan of the nodes (an import of 10,000 was quadratic) */
    [Q_NODE_INS_SEQ] =
        "INSERT INTO nodes(name, weight, keys, tokens, seq) VALUES(?1, ?2, 0, ?3, ?4)",
    [Q_NODE_UPD] = "UPDATE nodes SET weight = ?2, keys = ?3 WHERE id = ?1",
    [Q_NODE_DEL] = "DELETE FROM nodes WHERE id = ?1",
    /* Schema 6: coord is the key's stored coordinate, pos its position
     * where that is not the coordinate (NULL: coord holds the position). */
    [Q_KEY_INS] = "INSERT OR IGNORE INTO keys(key, coord, node, pos) VALUES(?1, ?2, ?3, ?4)",
    [Q_KEY_GET] = "SELECT key, coord, node, pos FROM keys WHERE key = ?1",
    [Q_KEY_DEL] = "DELETE FROM keys WHERE key = ?1",
    [Q_KEYS_CLEAR] = "DELETE FROM keys",
    /* A range of coordinates is a run of adjacent rows of the table. */
    [Q_MOVE_KEYS] = "SELECT key FROM keys WHERE coord BETWEEN ?1 AND ?2 AND node IS ?3 "
                    "ORDER BY coord, key",
    [Q_MOVE_UPD] = "UPDATE keys SET node = ?1 WHERE coord BETWEEN ?2 AND ?3 AND node IS ?4",
    /* By the primary key: a pass in the table's order touches it in order
     * and never the key index. */
    [Q_KEY_SET] = "UPDATE keys SET node = ?2 WHERE coord = ?3 AND key = ?1",
    [Q_RUN_INS] = "INSERT INTO move_runs(op, first, n, names, data) VALUES(?1, ?2, ?3, ?4, ?5)",
    [Q_RUN_END] = "SELECT coalesce(max(first + n), 0) FROM move_runs WHERE op = ?1",
    [Q_KEYS_BY_KEY] = "SELECT key, coord, node, pos FROM keys ORDER BY key",
    /* Where keys have coordinates of their own (pos is not NULL). */
    [Q_KEYS_BY_POS] = "SELECT key, coord, node, pos FROM keys ORDER BY pos, key",
    [Q_KEYS_TABLE] = "SELECT key, coord, node, pos FROM keys ORDER BY coord, key",
    /* Every key is of one kind (the algorithm's): the first says which. */
    [Q_KEYS_KIND] = "SELECT pos IS NOT NULL FROM keys ORDER BY coord, key LIMIT 1",
    [Q_OP_INS] = "INSERT INTO ops(at, type, subject, params, config, keys_moved, moved_from) "
                 "VALUES(?1, ?2, ?3, ?4, ?5, 0, '[]')",
    [Q_OP_FIN] = "UPDATE ops SET keys_moved = ?2, moved_from = ?3, config = ?4, "
                 "replica_moves = ?5, skipped = ?6 WHERE id = ?1",
    [Q_OP_KEY] = "INSERT INTO op_keys(op, seq, key) VALUES(?1, ?2, ?3)",
    [Q_OP_GET] = "SELECT id, at, type, subject, params, config, keys_moved, moved_from, "
                 "replica_moves, skipped, requests_moved, bytes_moved FROM ops WHERE id = ?1",
    [Q_OPS] = "SELECT id, at, type, subject, params, config, keys_moved, moved_from, "
              "replica_moves, skipped, requests_moved, bytes_moved FROM ops WHERE id > ?1 "
              "ORDER BY id LIMIT ?2",
    [Q_OP_LAST] = "SELECT coalesce(max(id), 0) FROM ops",
    [Q_OP_KEYS] = "SELECT key FROM op_keys WHERE op = ?1 ORDER BY seq",
    /* The runs that may hold the move at index ?2 and after (a run holds
     * at most MOVERUN_MAX), found by the index on (op, first). */
    [Q_MOVES] = "SELECT first, n, names, data FROM move_runs WHERE op = ?1 AND first > ?2 "
                "ORDER BY first",
    [Q_MOVES_COUNT] = "SELECT coalesce(sum(n), 0) FROM move_runs WHERE op = ?1",
    [Q_DATA_VERSION] = "PRAGMA data_version",
    [Q_DENSITY] = "SELECT coord, pos FROM keys",
    [Q_OP_BASE] = "SELECT coalesce(max(id), 0) FROM ops "
                  "WHERE id <= ?1 AND type IN ('reset', 'revert')",
    /* Keys moved, inserted or deleted, and one per operation. */
    /* Operations that change the layout (all but key operations): how
     * many, how many runs of them, the first. */
    [Q_OPS_TOPO] = "SELECT count(*), coalesce(sum(id = ?1 + 1 OR NOT EXISTS (SELECT 1 FROM ops p "
                   "WHERE p.id = o.id - 1 AND p.type NOT IN ('insert_keys', 'delete_keys'))), 0), "
                   "coalesce(min(id), 0) FROM ops o WHERE id > ?1 AND id <= ?2 "
                   "AND type NOT IN ('insert_keys', 'delete_keys')",
    /* Over the layout changes in (?1, ?2] from a state of ?4 nodes: the
     * nodes each one builds, estimated by the node adds so far, at most ?3. */
    [Q_OPS_NODE_BUILDS] = "SELECT coalesce(sum(min(?3, ?4 + cum)), 0) FROM (SELECT type, "
                          "sum(type = 'add_node') OVER (ORDER BY id) AS cum FROM ops "
                          "WHERE id > ?1 AND id <= ?2) "
                          "WHERE type NOT IN ('insert_keys', 'delete_keys')",
    [Q_META_OLDEST] = "SELECT coalesce(min(CAST(substr(k, length(?1) + 1) AS INTEGER)), 0) "
                      "FROM meta WHERE substr(k, 1, length(?1)) = ?1",
    /* The entries named prefix + number beyond ?2 bytes, counted from the
     * newest (length(v): bytes, from the header, for the blobs that
     * store_meta_set writes). */
    [Q_META_TRIM] = "DELETE FROM meta WHERE k IN (SELECT k FROM (SELECT k, sum(length(v)) OVER "
                    "(ORDER BY CAST(substr(k, length(?1) + 1) AS INTEGER) DESC) AS run "
                    "FROM meta WHERE substr(k, 1, length(?1)) = ?1) WHERE run > ?2)",
    [Q_OPS_WORK] = "SELECT coalesce(sum(1 + keys_moved + "
                   "coalesce(json_extract(params, '$.keys'), 0) + "
                   "coalesce(json_extract(params, '$.generate.count'), 0)), 0) "
                   "FROM ops WHERE id > ?1 AND id <= ?2",
    [Q_PAGE_COUNT] = "PRAGMA page_count",
    [Q_OP_LOADS] = "UPDATE ops SET requests_moved = ?2, bytes_moved = ?3, workload = ?4 "
                   "WHERE id = ?1",
    [Q_OP_WORKLOAD] = "SELECT workload FROM ops WHERE id = ?1",
};

/* Version 1: the whole schema.  A new file starts at version 0. */
static const char schema_v1[] =
    "CREATE TABLE meta(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
    "CREATE TABLE nodes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    "  weight REAL NOT NULL, keys INTEGER NOT NULL DEFAULT 0);"
    /* Clustered by (position, key): an arc that changes hands is a run of
     * adjacent pages, and listings in ring order read the table in order.
     * The unique index on key finds one key and refuses duplicates. */
    "CREATE TABLE keys(pos INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER,"
    "  PRIMARY KEY(pos, key)) WITHOUT ROWID;"
    "CREATE UNIQUE INDEX keys_key ON keys(key);"
    "CREATE TABLE ops(id INTEGER PRIMARY KEY, at TEXT NOT NULL, type TEXT NOT NULL,"
    "  subject TEXT NOT NULL, params TEXT NOT NULL, config TEXT NOT NULL,"
    "  keys_moved INTEGER NOT NULL, moved_from TEXT NOT NULL);"
    "CREATE TABLE op_keys(op INTEGER NOT NULL, seq INTEGER NOT NULL, key TEXT NOT NULL,"
    "  PRIMARY KEY(op, seq)) WITHOUT ROWID;"
    "CREATE TABLE moves(op INTEGER NOT NULL, seq INTEGER NOT NULL, key TEXT NOT NULL,"
    "  src TEXT, dst TEXT, PRIMARY KEY(op, seq)) WITHOUT ROWID;"
    "INSERT INTO meta(k, v) VALUES('unassigned', 0);";

/* migrations[v] takes a database from schema version v to v + 1, inside one
 * transaction.  A later version appends its step here and bumps
 * STORE_SCHEMA_VERSION; older files are brought up to date when opened. */
/* Version 2 (placement algorithms): a key's coordinate in the current
 * algorithm's space where it is not the position (NULL for the seed's ring,
 * so that its keys cost what they did), indexed for the range queries of a
 * topology change; a node's explicit tokens (JSON text, or NULL). */
static const char schema_v2[] =
    "ALTER TABLE keys ADD COLUMN coord INTEGER;"
    "CREATE INDEX keys_coord ON keys(coord) WHERE coord IS NOT NULL;"
    "ALTER TABLE nodes ADD COLUMN tokens TEXT;"
    "ALTER TABLE ops ADD COLUMN replica_moves INTEGER NOT NULL DEFAULT 0;";
/* Version 3 (time travel from the live state): how many keys an insert
 * found already there, so that undoing it deletes only what it added;
 * NULL where unknown (operations logged before version 3, and the others). */
static const char schema_v3[] = "ALTER TABLE ops ADD COLUMN skipped INTEGER;";

/* Version 4 (real systems): a node's own attributes as a JSON object, NULL
 * when it has none: HAProxy's server "id" now; room for more (a backup
 * flag, a state, replicas) without another column each.  And the join
 * order, seq (NULL before version 4: the id's order), which a revert that
 * brings a node back in the middle must keep and HAProxy's ids depend on. */
static const char schema_v4[] = "ALTER TABLE nodes ADD COLUMN attrs TEXT;"
                                "ALTER TABLE nodes ADD COLUMN seq INTEGER;";

/* Version 5 (traffic): what an operation moved in requests (the moved
 * keys' shares) and in bytes, and the workload it left (JSON text, NULL
 * for the default: uniform, every key 1 byte).  NULL figures for the
 * operations logged before (unknown). */
static const char schema_v5[] = "ALTER TABLE ops ADD COLUMN requests_moved REAL;"
                                "ALTER TABLE ops ADD COLUMN bytes_moved INTEGER;"
                                "ALTER TABLE ops ADD COLUMN workload TEXT;";

/* Version 6 (issue 15: the cost follows the change): keys clustered by
 * (coord, key), where coord is the key's coordinate in the algorithm's
 * space -- for the algorithms without one of their own (the seed's ring,
 * jump, rendezvous, multiprobe) the position, in the same order-preserving
 * encoding (uint64 ^ 2^63, so pos - 2^63) -- and pos kept only where it is
 * not the coordinate (NULL otherwise).  A node add's arcs are runs of
 * adjacent rows for every algorithm.  Listings by position (API.md: keys in
 * (position, key) order) read the table where the coordinate is the
 * position, and the partial index keys_pos where it is not (it holds no
 * entry for the seed's ring); a large insert drops it and builds it again
 * (store_keys_bulk), so that a `key gen` under any algorithm writes one
 * b-tree besides the table, the key's unique index, at random.  The rows
 * are copied in the new order: a sequential write. */
static const char schema_v6[] =
    "CREATE TABLE keys_v6(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER, pos INTEGER,"
    "  PRIMARY KEY(coord, key)) WITHOUT ROWID;"
    "INSERT INTO keys_v6(coord, key, node, pos) SELECT coalesce(coord, pos + "
    "  (-9223372036854775807 - 1)), key, node, CASE WHEN coord IS NULL THEN NULL ELSE pos END "
    "  FROM keys ORDER BY 1, 2;"
    "DROP TABLE keys;"
    "ALTER TABLE keys_v6 RENAME TO keys;"
    "CREATE UNIQUE INDEX keys_key ON keys(key);"
    "CREATE INDEX keys_pos ON keys(pos, key) WHERE pos IS NOT NULL;";

/* Version 7: an operation's moves in runs of up to MOVERUN_MAX, each two
 * blobs (moverun.h), instead of a row per move with both names written out:
 * a switch of algorithm at 1M keys wrote 990,000 rows.  `first` is the
 * index in the operation's moves of the run's first.  The rows of `moves`
 * are copied into runs by migrate_moves, which then drops the table. */
static const char schema_v7[] =
    "CREATE TABLE move_runs(op INTEGER NOT NULL, first INTEGER NOT NULL, n INTEGER NOT NULL,"
    "  names BLOB NOT NULL, data BLOB NOT NULL);"
    "CREATE UNIQUE INDEX move_runs_at ON move_runs(op, first);";

static const char *const migrations[STORE_SCHEMA_VERSION] = {
    schema_v1, schema_v2, schema_v3, schema_v4, schema_v5, schema_v6, schema_v7};

int store__dberr(store *st, rs_error *err, const char *what)
{
    int e = st && st->db ? sqlite3_extended_errcode(st->db) & 0xff : SQLITE_ERROR;
    int sys = st && st->db ? sqlite3_system_errno(st->db) : 0;
    const char *m = st && st->db ? sqlite3_errmsg(st->db) : "cannot open";
    const char *path = st && st->path ? st->path : "";
    int code = RINGSIM_EDB;
    if (e == SQLITE_BUSY || e == SQLITE_LOCKED)
        return rs_fail(err, RINGSIM_EBUSY, "database is locked by another process (%s); try again",
                       what);
    if (e == SQLITE_READONLY)
        return rs_fail(err, RINGSIM_EREADONLY, "database %s is read-only: %s (%s)", path,
                       st->read_only[0] ? st->read_only : m, what);
    /* A full disk, a file over RLIMIT_FSIZE or a quota, or the page cap. */
    if (e == SQLITE_FULL || (e == SQLITE_IOERR && (sys == ENOSPC || sys == EFBIG || sys == EDQUOT)))
        return rs_fail(err, RINGSIM_EFULL,
                       "disk full: database %s cannot grow (%s); nothing was changed, "
                       "reads still work, free some space and try again",
                       path, what);
    if (e == SQLITE_NOTADB)
        return rs_fail(err, RINGSIM_ENOTDB, "%s is not a ringsim database", path);
    if (e == SQLITE_CORRUPT)
        return rs_fail(err, RINGSIM_ENOTDB, "database %s is damaged (%s: %s)", path, what, m);
    if (e == SQLITE_NOMEM)
        code = RINGSIM_ENOMEM;
    if (e == SQLITE_CANTOPEN)
        return rs_fail(err, RINGSIM_EDB, "cannot open database %s (%s)", path, m);
    return rs_fail(err, code, "database error in %s: %s", what, m);
}

sqlite3_stmt *store__stmt(store *st, int i)
{
    if (!st->q[i] && sqlite3_prepare_v3(st->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &st->q[i],
                                        NULL) != SQLITE_OK)
        return NULL;
    sqlite3_reset(st->q[i]);
    sqlite3_clear_bindings(st->q[i]);
    return st->q[i];
}

sqlite3_stmt *store__prepare(store *st, int i)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql[i], -1, &s, NULL) != SQLITE_OK)
        return NULL;
    return s;
}

/* Run a statement that returns no rows. */
int store__run(store *st, sqlite3_stmt *s, rs_error *err, const char *what)
{
    if (!s)
        return store__dberr(st, err, what);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        int r = store__dberr(st, err, what);
        sqlite3_reset(s);
        return r;
    }
    sqlite3_reset(s);
    return 0;
}

int store__exec(store *st, const char *text, rs_error *err, const char *what)
{
    if (sqlite3_exec(st->db, text, NULL, NULL, NULL) != SQLITE_OK)
        return store__dberr(st, err, what);
    return 0;
}

/* One integer from a cached one-row query; 0 or a negative code. */
int store__one_int(store *st, sqlite3_stmt *s, int64_t *out, rs_error *err, const char *what)
{
    *out = 0;
    if (!s)
        return store__dberr(st, err, what);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(s, 0);
    rc = rc == SQLITE_ROW ? 0 : store__dberr(st, err, what);
    sqlite3_reset(s);
    return rc;
}

char *store__dup_text(sqlite3_stmt *s, int col)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    size_t n = (size_t)sqlite3_column_bytes(s, col);
    char *r = malloc(n + 1);
    if (r) {
        if (t)
            memcpy(r, t, n);
        r[n] = '\0';
    }
    return r;
}

static int pragma_int(store *st, const char *text, int64_t *out)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, text, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(s);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* Whether the file is in WAL mode (a file system without shared memory
 * keeps another journal). */
static bool journal_is_wal(store *st)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode", -1, &s, NULL) != SQLITE_OK)
        return false;
    bool wal = sqlite3_step(s) == SQLITE_ROW &&
               sqlite3_stricmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
    sqlite3_finalize(s);
    return wal;
}

static int read_version(store *st, int64_t *app, int64_t *version, int64_t *tables)
{
    return pragma_int(st, "PRAGMA application_id", app) ||
           pragma_int(st, "PRAGMA user_version", version) ||
           pragma_int(st, "SELECT count(*) FROM sqlite_schema", tables);
}

/* ---- the run of moves a transaction carries ---- */

/* Write the run being filled, if it holds anything. */
int store__run_flush(store *st, rs_error *err)
{
    moverun *r = &st->run;
    if (!r->n)
        return 0;
    sqlite3_stmt *s = store__stmt(st, Q_RUN_INS);
    if (s) {
        sqlite3_bind_int64(s, 1, st->run_op);
        sqlite3_bind_int64(s, 2, st->run_first);
        sqlite3_bind_int64(s, 3, r->n);
        sqlite3_bind_blob(s, 4, r->names.p ? r->names.p : "", (int)r->names.n, SQLITE_STATIC);
        sqlite3_bind_blob(s, 5, r->data.p, (int)r->data.n, SQLITE_STATIC);
    }
    int rc = store__run(st, s, err, "recording moves");
    if (!rc) {
        st->run_first += r->n;
        moverun_clear(r);
    }
    return rc;
}

/* Forget what was recorded and not written (the transaction is gone). */
static void run_drop(store *st)
{
    moverun_clear(&st->run);
    st->run_op = 0;
}

int store__run_record(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                      const char *to_name, rs_error *err)
{
    int rc = 0;
    if (op != st->run_op) {
        /* Another operation's moves: it may have some already. */
        if ((rc = store__run_flush(st, err)))
            return rc;
        sqlite3_stmt *s = store__stmt(st, Q_RUN_END);
        if (s)
            sqlite3_bind_int64(s, 1, op);
        if ((rc = store__one_int(st, s, &st->run_first, err, "recording moves")))
            return rc;
        st->run_op = op;
    } else if (moverun_full(&st->run) && (rc = store__run_flush(st, err))) {
        return rc;
    }
    if (moverun_add(&st->run, key, len, from_name, to_name))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return 0;
}

/* ---- schema ---- */

/* Schema 7's second step: every row of `moves` into runs, in (op, seq)
 * order, then the table dropped. */
static int migrate_moves(store *st, rs_error *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT op, key, src, dst FROM moves ORDER BY op, seq", -1, &s,
                           NULL) != SQLITE_OK)
        return store__dberr(st, err, "upgrading the schema");
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
        rc = store__run_record(
            st, sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1),
            (size_t)sqlite3_column_bytes(s, 1), (const char *)sqlite3_column_text(s, 2),
            (const char *)sqlite3_column_text(s, 3), err);
    if (!rc && step != SQLITE_DONE)
        rc = store__dberr(st, err, "upgrading the schema");
    sqlite3_finalize(s);
    if (!rc)
        rc = store__run_flush(st, err);
    if (!rc)
        rc = store__exec(st, "DROP TABLE moves", err, "upgrading the schema");
    run_drop(st);
    return rc;
}

/* Create or migrate the schema.  Refuses files of other programs and files
 * from a newer ringsim. */
static int setup_schema(store *st, rs_error *err)
{
    int64_t app = 0, version = 0, tables = 0;
    if (read_version(st, &app, &version, &tables))
        return store__dberr(st, err, "reading the schema");
    if (app != APPLICATION_ID && tables > 0)
        return rs_fail(err, RINGSIM_ENOTDB, "file is an SQLite database but not a ringsim database");
    if (app != APPLICATION_ID)
        version = 0; /* an empty file */
    if (version > STORE_SCHEMA_VERSION)
        return rs_fail(err, RINGSIM_ENOTDB,
                       "database schema version %lld is newer than this ringsim (%d)",
                       (long long)version, STORE_SCHEMA_VERSION);
    if (version == STORE_SCHEMA_VERSION)
        return 0;
    if (st->read_only[0])
        return rs_fail(err, RINGSIM_EREADONLY, "database %s is read-only and needs %s: %s",
                       st->path, version ? "a schema upgrade" : "its tables created", st->read_only);
    int rc = store__exec(st, "BEGIN IMMEDIATE", err, "upgrading the schema");
    if (rc)
        return rc;
    /* Another process may have done it while we waited for the lock. */
    if (read_version(st, &app, &version, &tables)) {
        rc = store__dberr(st, err, "reading the schema");
        goto fail;
    }
    if (app != APPLICATION_ID)
        version = 0;
    for (int64_t v = version; v < STORE_SCHEMA_VERSION; v++)
        if ((rc = store__exec(st, migrations[v], err, "upgrading the schema")) ||
            (v == 6 && (rc = migrate_moves(st, err))))
            goto fail;
    char buf[128];
    snprintf(buf, sizeof buf, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             APPLICATION_ID, STORE_SCHEMA_VERSION);
    if ((rc = store__exec(st, buf, err, "upgrading the schema")) ||
        (rc = store__exec(st, "COMMIT", err, "upgrading the schema")))
        goto fail;
    return 0;
fail:
    run_drop(st);
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ---- opening and closing ---- */

static int open_db(store *st, const char *name, int flags, rs_error *err)
{
    sqlite3_close(st->db);
    st->db = NULL;
    if (sqlite3_open_v2(name, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return rs_fail(err, RINGSIM_EDB, "cannot open database %s: %s", st->path,
                       st->db ? sqlite3_errmsg(st->db) : "out of memory");
    /* Wait for another process's operation (a big key generation) rather
     * than failing at once: 30 s, or RINGSIM_BUSY_MS (a test hook, so that
     * the refusal of a locked database is not a 30 s wait). */
    const char *busy = getenv("RINGSIM_BUSY_MS");
    long ms = busy && *busy ? strtol(busy, NULL, 10) : 30000;
    sqlite3_busy_timeout(st->db, ms > 0 && ms <= 30000 ? (int)ms : 30000);
    sqlite3_extended_result_codes(st->db, 1);
    return 0;
}

int store_open(store **out, const char *path, rs_error *err)
{
    *out = NULL;
    store *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path))) {
        free(st);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    /* ":memory:" lives in RAM; "" is SQLite's private temporary file, whose
     * memory use the page cache bounds (time-travel snapshots use it). */
    st->memory = strcmp(path, ":memory:") == 0 || path[0] == '\0';
    bool had_wal = st->memory || store__beside(path, "-wal"),
         had_shm = st->memory || store__beside(path, "-shm");
    int rc = st->memory ? 0 : store__probe_file(st, path, err);
    if (rc || (rc = open_db(st, path,
                            st->read_only[0] ? SQLITE_OPEN_READONLY
                                             : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            err)))
        goto fail;
    if (!st->memory && !st->read_only[0] && sqlite3_db_readonly(st->db, "main") == 1)
        snprintf(st->read_only, sizeof st->read_only, "SQLite opened the file read-only");
    /* Reading the schema is the first touch of the file: a file that is not
     * SQLite fails here with NOTADB. */
    rc = setup_schema(st, err);
    int e = rc && st->db ? sqlite3_extended_errcode(st->db) & 0xff : 0;
    if (rc && st->read_only[0] && (e == SQLITE_READONLY || e == SQLITE_CANTOPEN)) {
        /* A WAL file whose -shm cannot be created here: read it as an
         * immutable file (changes by other programs go unseen). */
        char *uri = store__file_uri(path, "?immutable=1");
        rc = uri ? open_db(st, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err)
                 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        free(uri);
        if (!rc) {
            size_t n = strlen(st->read_only);
            snprintf(st->read_only + n, sizeof st->read_only - n,
                     "; changes by other programs are not seen");
            rc = setup_schema(st, err);
        }
    }
    if (rc)
        goto fail;
    if (!st->memory && !st->read_only[0]) {
        int64_t dummy;
        /* WAL lets readers (the server) run beside a writer (the CLI). */
        if (pragma_int(st, "PRAGMA journal_mode = WAL", &dummy)) {
            rc = store__dberr(st, err, "switching to WAL");
            goto fail;
        }
        st->wal = journal_is_wal(st);
        /* Test hook (README, "Test hooks"): RINGSIM_MAX_PAGES caps the
         * file at that many pages, so that "disk full" can be tested
         * without filling a disk. */
        const char *cap = getenv("RINGSIM_MAX_PAGES");
        if (cap && *cap) {
            char q[64];
            snprintf(q, sizeof q, "PRAGMA max_page_count = %lld", strtoll(cap, NULL, 10));
            if (pragma_int(st, q, &dummy)) {
                rc = store__dberr(st, err, "setting max_page_count");
                goto fail;
            }
        }
    }
    /* Temporary storage in files (SQLite's default, $SQLITE_TMPDIR or
     * $TMPDIR, else /var/tmp or /tmp), not in memory: the sorts that build
     * an index over every key spill there, and SQLite's in-memory spill is
     * the slower one -- the key index of 10M keys took 26.7 s and 697 MB
     * in memory, 15.0 s and 138 MB in files (docs/benchmarks.md). */
    if ((rc = store__exec(st,
                          "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;"
                          "PRAGMA temp_store = FILE; PRAGMA foreign_keys = OFF;",
                          err, "setting pragmas")))
        goto fail;
    /* The file as opened, known by device and inode: a path that names
     * another one later was deleted or replaced (see unmoved); and its
     * logs, once a read has opened them. */
    struct stat sb;
    if (!st->memory && stat(path, &sb) == 0) {
        st->dev = sb.st_dev;
        st->ino = sb.st_ino;
        int64_t dummy;
        if (st->wal && !store_begin_read(st, NULL) &&
            !pragma_int(st, "SELECT count(*) FROM meta", &dummy))
            store__unmoved(st);
        store_end_read(st);
    }
    *out = st;
    return 0;
fail:
    /* Leave a file we refuse exactly as it was: no checkpoint on close, and
     * no empty -wal or -shm that opening it made. */
    if (st->db)
        sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    store_close(st);
    if (!had_wal)
        store__remove_if_empty(path, "-wal");
    if (!had_wal && !had_shm && !store__beside(path, "-wal"))
        store__remove_if_empty(path, "-shm");
    return rc;
}

void store_close(store *st)
{
    if (!st)
        return;
    /* SQLite checkpoints at the last close: a file deleted, replaced or
     * overwritten since the last check must be known first, so that this
     * handle copies nothing into a file that is not ours (settle_moved). */
    if (st->db && !st->memory && st->ino)
        store__unmoved(st);
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(st->q[i]);
    sqlite3_close(st->db);
    moverun_free(&st->run);
    free(st->path);
    free(st);
}

/* ---- transactions ---- */

int store_begin(store *st, rs_error *err)
{
    if (st->read_only[0] || sqlite3_db_readonly(st->db, "main") == 1)
        return rs_fail(err, RINGSIM_EREADONLY, "database %s is read-only: %s", st->path,
                       st->read_only[0] ? st->read_only : "SQLite opened it read-only");
    run_drop(st);
    int rc = store__run(st, store__stmt(st, Q_BEGIN), err, "starting a transaction");
    if (!rc && !store__unmoved(st)) {
        store_rollback(st);
        store__settle_moved(st);
        rc = store__moved_fail(st, err);
    }
    return rc;
}

int store_commit(store *st, rs_error *err)
{
    int rc = store__run_flush(st, err);
    if (rc) {
        store_rollback(st);
        return rc;
    }
    /* Whether the file was overwritten in place is known only between
     * checkpoints: wait for a running one (another process's) rather
     * than commit without knowing, as long as a writer waits for a lock. */
    for (int waited = 0; sqlite3_txn_state(st->db, "main") == SQLITE_TXN_WRITE && !st->overwritten;
         waited++) {
        int o = store__overwritten_check(st);
        if (o == 1)
            st->overwritten = true;
        if (o >= 0)
            break;
        if (waited >= 30000) {
            store_rollback(st);
            return rs_fail(err, RINGSIM_EBUSY,
                           "database %s: a checkpoint of another process held it for 30 s; "
                           "nothing was changed, try again",
                           st->path);
        }
        usleep(1000);
    }
    /* Checked again with the work done: the file may have gone while the
     * operation ran (a long one, or one that waited for the lock). */
    if (sqlite3_txn_state(st->db, "main") == SQLITE_TXN_WRITE && !store__unmoved(st)) {
        store_rollback(st);
        store__settle_moved(st);
        return store__moved_fail(st, err);
    }
    rc = store__run(st, store__stmt(st, Q_COMMIT), err, "committing");
    if (rc) {
        store_rollback(st);
        return rc;
    }
    /* And once more before the caller acknowledges it: the -wal deleted
     * between the check above and the commit holds this commit in a file
     * no path names.  Copied into the database file (settle_moved, run
     * by unmoved now that the transaction is over) it survives; if it
     * cannot be copied yet, it is not acknowledged. */
    if (!store__unmoved(st) && !(st->wal_gone && st->settled))
        return rs_fail(err, RINGSIM_EMOVED,
                       "%s; this operation was committed to the file this process has open "
                       "and may be lost: it is not acknowledged",
                       st->moved);
    return 0;
}

void store_rollback(store *st)
{
    run_drop(st);
    if (!sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_begin_read(store *st, rs_error *err)
{
    return store__run(st, store__stmt(st, Q_BEGIN_READ), err, "starting a read");
}

void store_end_read(store *st) { store_rollback(st); }

bool store_in_transaction(const store *st) { return !sqlite3_get_autocommit(st->db); }

int store_data_version(store *st, int64_t *out, rs_error *err)
{
    return store__one_int(st, store__stmt(st, Q_DATA_VERSION), out, err, "reading the data version");
}

/* ---- meta ---- */

int store_meta_get(store *st, const char *name, char **out, rs_error *err)
{
    *out = NULL;
    sqlite3_stmt *s = store__stmt(st, Q_META_GET);
    if (!s)
        return store__dberr(st, err, "reading meta");
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *out = store__dup_text(s, 0);
        rc = *out ? 0 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    } else {
        rc = rc == SQLITE_DONE ? 0 : store__dberr(st, err, "reading meta");
    }
    sqlite3_reset(s);
    return rc;
}

int store_meta_set(store *st, const char *name, const char *value, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_META_SET);
    /* Stored as a blob of the text's bytes (read back as text alike):
     * SQLite's length() of a blob is read from the record's header, of a
     * text by counting its characters, and store_meta_trim sums the
     * lengths of every kept state at each change of topology (8 MB at
     * 1000 nodes: 11 ms a node add as text). */
    if (s) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_blob(s, 2, value, (int)strlen(value), SQLITE_STATIC);
    }
    return store__run(st, s, err, "writing meta");
}

int store_meta_delete_below(store *st, const char *prefix, int64_t below, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_META_DEL_BELOW);
    if (s) {
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, below);
    }
    return store__run(st, s, err, "writing meta");
}

int store_meta_get_int(store *st, const char *name, int64_t *out, rs_error *err)
{
    char *v;
    int rc = store_meta_get(st, name, &v, err);
    *out = v ? strtoll(v, NULL, 10) : 0;
    free(v);
    return rc;
}

int store_meta_set_int(store *st, const char *name, int64_t value, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_META_SET);
    if (s) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, value);
    }
    return store__run(st, s, err, "writing meta");
}

int store_meta_oldest(store *st, const char *prefix, int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_META_OLDEST);
    if (s)
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
    return store__one_int(st, s, out, err, "reading meta");
}

int store_meta_trim(store *st, const char *prefix, int64_t keep_bytes, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_META_TRIM);
    if (s) {
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, keep_bytes);
    }
    return store__run(st, s, err, "writing meta");
}

/* ---- the file ---- */

int store_page_count(store *st, int64_t *out, rs_error *err)
{
    return store__one_int(st, store__stmt(st, Q_PAGE_COUNT), out, err, "reading the file size");
}

int store_copy_from(store *dst, store *src, rs_error *err)
{
    sqlite3_backup *b = sqlite3_backup_init(dst->db, "main", src->db, "main");
    if (!b)
        return store__dberr(dst, err, "copying the database");
    /* All pages in one step: one read transaction on src, which WAL lets
     * writers run beside, and a copy of one committed state. */
    int rc = sqlite3_backup_step(b, -1);
    int fin = sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE || fin != SQLITE_OK)
        return rc == SQLITE_BUSY || rc == SQLITE_LOCKED
                   ? rs_fail(err, RINGSIM_EBUSY, "database is busy; try again")
               : rc == SQLITE_NOMEM || fin == SQLITE_NOMEM
                   ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
                   : store__dberr(dst, err, "copying the database");
    return 0;
}

void store_shrink(store *st)
{
    sqlite3_exec(st->db, "PRAGMA cache_size = -1024", NULL, NULL, NULL);
    sqlite3_db_release_memory(st->db);
}
