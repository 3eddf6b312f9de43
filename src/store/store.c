/*
 * store.c - the SQLite store (see store.h).
 *
 * Statements are prepared on first use and kept in a table indexed by an
 * enum, so each query is parsed once per connection.  Errors from SQLite are
 * mapped to RINGSIM_E* codes: BUSY/LOCKED -> EBUSY, READONLY -> EREADONLY,
 * NOTADB -> ENOTDB, the rest -> EDB, with SQLite's own message kept.
 */
#define _GNU_SOURCE /* asprintf */
#include "store.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "moverun.h"
#include "vec.h"

#define APPLICATION_ID 0x52494E47 /* "RING" */
#define PATH_MAX_MSG 320          /* a message naming the file (rs_error's size) */

enum {
    Q_BEGIN,
    Q_BEGIN_READ,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_META_GET,
    Q_META_SET,
    Q_META_DEL_BELOW,
    Q_NODES,
    Q_NODE_INS,
    Q_NODE_INS_SEQ,
    Q_NODE_UPD,
    Q_NODE_DEL,
    Q_KEY_INS,
    Q_KEY_GET,
    Q_KEY_DEL,
    Q_KEYS_CLEAR,
    Q_MOVE_KEYS,
    Q_MOVE_UPD,
    Q_KEY_SET,
    Q_RUN_INS,
    Q_RUN_END,
    Q_KEYS_BY_KEY,
    Q_KEYS_BY_POS,
    Q_KEYS_TABLE,
    Q_KEYS_KIND,
    Q_OP_INS,
    Q_OP_FIN,
    Q_OP_KEY,
    Q_OP_GET,
    Q_OPS,
    Q_OP_LAST,
    Q_OP_KEYS,
    Q_MOVES,
    Q_MOVES_COUNT,
    Q_DATA_VERSION,
    Q_DENSITY,
    Q_OP_BASE,
    Q_OPS_WORK,
    Q_PAGE_COUNT,
    Q_NODE_ATTRS,
    Q_NODE_TOKENS,
    Q_OPS_TOPO,
    Q_OPS_NODE_BUILDS,
    Q_META_OLDEST,
    Q_META_TRIM,
    Q_OP_LOADS,
    Q_OP_WORKLOAD,
    Q_COUNT
};

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

struct store {
    sqlite3 *db;
    sqlite3_stmt *q[Q_COUNT];
    bool memory;
    char *path;          /* as given, for messages */
    char read_only[200]; /* why writes are refused, "" when they are not */
    bool wal;            /* in WAL mode: a -wal file beside it while open */
    dev_t dev;           /* the file opened, to notice it deleted or replaced */
    ino_t ino;
    struct stat logs[2];      /* its -wal and -shm files as opened (st_ino 0: unknown) */
    char moved[PATH_MAX_MSG]; /* why the path no longer names it, "" if it does */
    bool replaced;            /* the path names another file */
    bool wal_gone;            /* only the -wal was deleted: the file is the path's */
    bool overwritten;         /* the file written in place by another program */
    bool base_set;            /* the file as last seen, under the checkpoint lock: */
    struct timespec base_mtime;
    off_t base_size;
    unsigned char base_ckpt[12]; /* the wal-index's salts and nBackfill then */
    bool settled;                /* what settle_moved does is done, the log all copied */
    /* Moves recorded and not yet written: the run of operation run_op whose
     * first move is the operation's run_first-th.  Written when full, when
     * another operation records, before moves are read and at commit;
     * dropped at begin and rollback. */
    moverun run;
    int64_t run_op, run_first;
};

static int dberr(store *st, rs_error *err, const char *what)
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

static sqlite3_stmt *stmt(store *st, int i)
{
    if (!st->q[i] && sqlite3_prepare_v3(st->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &st->q[i],
                                        NULL) != SQLITE_OK)
        return NULL;
    sqlite3_reset(st->q[i]);
    sqlite3_clear_bindings(st->q[i]);
    return st->q[i];
}

/* Run a statement that returns no rows. */
static int run(store *st, sqlite3_stmt *s, rs_error *err, const char *what)
{
    if (!s)
        return dberr(st, err, what);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        int r = dberr(st, err, what);
        sqlite3_reset(s);
        return r;
    }
    sqlite3_reset(s);
    return 0;
}

static int exec(store *st, const char *text, rs_error *err, const char *what)
{
    if (sqlite3_exec(st->db, text, NULL, NULL, NULL) != SQLITE_OK)
        return dberr(st, err, what);
    return 0;
}

/* One integer from a cached one-row query; 0 or a negative code. */
static int one_int(store *st, sqlite3_stmt *s, int64_t *out, rs_error *err, const char *what)
{
    *out = 0;
    if (!s)
        return dberr(st, err, what);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(s, 0);
    rc = rc == SQLITE_ROW ? 0 : dberr(st, err, what);
    sqlite3_reset(s);
    return rc;
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

static int run_flush(store *st, rs_error *err);
static void run_drop(store *st);
static int run_record(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                      const char *to_name, rs_error *err);

/* Schema 7's second step: every row of `moves` into runs, in (op, seq)
 * order, then the table dropped. */
static int migrate_moves(store *st, rs_error *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, "SELECT op, key, src, dst FROM moves ORDER BY op, seq", -1, &s,
                           NULL) != SQLITE_OK)
        return dberr(st, err, "upgrading the schema");
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
        rc = run_record(st, sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1),
                        (size_t)sqlite3_column_bytes(s, 1), (const char *)sqlite3_column_text(s, 2),
                        (const char *)sqlite3_column_text(s, 3), err);
    if (!rc && step != SQLITE_DONE)
        rc = dberr(st, err, "upgrading the schema");
    sqlite3_finalize(s);
    if (!rc)
        rc = run_flush(st, err);
    if (!rc)
        rc = exec(st, "DROP TABLE moves", err, "upgrading the schema");
    run_drop(st);
    return rc;
}

/* Create or migrate the schema.  Refuses files of other programs and files
 * from a newer ringsim. */
static int setup_schema(store *st, rs_error *err)
{
    int64_t app = 0, version = 0, tables = 0;
    if (read_version(st, &app, &version, &tables))
        return dberr(st, err, "reading the schema");
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
    int rc = exec(st, "BEGIN IMMEDIATE", err, "upgrading the schema");
    if (rc)
        return rc;
    /* Another process may have done it while we waited for the lock. */
    if (read_version(st, &app, &version, &tables)) {
        rc = dberr(st, err, "reading the schema");
        goto fail;
    }
    if (app != APPLICATION_ID)
        version = 0;
    for (int64_t v = version; v < STORE_SCHEMA_VERSION; v++)
        if ((rc = exec(st, migrations[v], err, "upgrading the schema")) ||
            (v == 6 && (rc = migrate_moves(st, err))))
            goto fail;
    char buf[128];
    snprintf(buf, sizeof buf, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             APPLICATION_ID, STORE_SCHEMA_VERSION);
    if ((rc = exec(st, buf, err, "upgrading the schema")) ||
        (rc = exec(st, "COMMIT", err, "upgrading the schema")))
        goto fail;
    return 0;
fail:
    run_drop(st);
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* The 100-byte header of an SQLite file (sqlite.org/fileformat.html,
 * "1.3 The Database Header"), read before SQLite opens the file: files of
 * other programs and truncated files are refused without SQLite ever
 * touching them (a WAL-mode file would get -wal and -shm files beside it).
 * With a -wal file present the header may be stale (pages live in the WAL):
 * only the magic and a foreign application id are checked then. */
static char *file_uri(const char *path, const char *query);
static bool unmoved(store *st);

/* The first 100 bytes of the file, read through SQLite's own file handle of
 * a read-only connection: closing a descriptor of our own would drop every
 * POSIX lock this process holds on the file (the server opens it twice),
 * the trap of "How To Corrupt An SQLite Database File", 2.2.  SQLite keeps
 * its descriptors per inode and closes them safely. */
static int read_header(const char *path, off_t size, unsigned char h[100], size_t *n)
{
    memset(h, 0, 100);
    char *uri = file_uri(path, "?mode=ro");
    sqlite3 *db = NULL;
    sqlite3_file *fp = NULL;
    int rc = uri ? sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL)
                 : SQLITE_NOMEM;
    free(uri);
    if (rc == SQLITE_OK)
        rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &fp);
    if (rc == SQLITE_OK && (!fp || !fp->pMethods))
        rc = SQLITE_CANTOPEN;
    if (rc == SQLITE_OK) {
        int r = fp->pMethods->xRead(fp, h, 100, 0);
        if (r == SQLITE_OK || r == SQLITE_IOERR_SHORT_READ) /* short: zero-filled */
            *n = size < 100 ? (size_t)size : 100;
        else
            rc = r;
    }
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

static int check_header(const char *path, off_t size, bool has_wal, rs_error *err)
{
    unsigned char h[100];
    size_t n = 0;
    if (read_header(path, size, h, &n))
        return rs_fail(err, RINGSIM_EDB, "cannot read database %s", path);
    if (n < sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return rs_fail(err, RINGSIM_ENOTDB, "%s is not a ringsim database (%s)", path,
                       n < sizeof h ? "too short to be one" : "not an SQLite file");
#define BE32(o)                                                                                    \
    ((uint32_t)h[o] << 24 | (uint32_t)h[(o) + 1] << 16 | (uint32_t)h[(o) + 2] << 8 | h[(o) + 3])
    uint32_t app = BE32(68), pages = BE32(28), counter = BE32(24), valid_for = BE32(92);
    uint32_t page_size = (uint32_t)h[16] << 8 | h[17];
    bool wal_mode = h[18] == 2 && h[19] == 2;
#undef BE32
    if (page_size == 1)
        page_size = 65536;
    if (app != APPLICATION_ID && app != 0)
        return rs_fail(err, RINGSIM_ENOTDB,
                       "%s is an SQLite database of another program, not a ringsim database", path);
    if (has_wal)
        return 0;
    /* A ringsim file closed cleanly holds its application id; one in WAL
     * mode without it is another program's. */
    if (app == 0 && wal_mode)
        return rs_fail(err, RINGSIM_ENOTDB,
                       "%s is an SQLite database of another program, not a ringsim database", path);
    if (counter == valid_for && pages > 0 && (uint64_t)pages * page_size > (uint64_t)size)
        return rs_fail(err, RINGSIM_ENOTDB,
                       "database %s is damaged: truncated to %lld of its %llu bytes", path,
                       (long long)size, (unsigned long long)pages * page_size);
    return 0;
}

/* Whether path + suffix exists. */
static bool beside(const char *path, const char *suffix)
{
    char *p = NULL;
    if (asprintf(&p, "%s%s", path, suffix) < 0)
        return false;
    bool r = access(p, F_OK) == 0;
    free(p);
    return r;
}

/* Remove path + suffix when it is a -wal holding nothing, or a -shm (the
 * index of a WAL now gone): for files that opening created and that
 * nothing else uses. */
static void remove_if_empty(const char *path, const char *suffix)
{
    char *p = NULL;
    struct stat sb;
    if (asprintf(&p, "%s%s", path, suffix) < 0)
        return;
    if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_size == 0 || strcmp(suffix, "-shm") == 0))
        unlink(p);
    free(p);
}

/* Before opening a file: refuse a folder, and find out whether writes are
 * possible.  A file we may not write, or whose folder we may not write
 * (WAL needs its -wal and -shm files there), is opened read-only with the
 * reason kept for messages.  Root passes access() whatever the modes. */
static int probe_file(store *st, const char *path, rs_error *err)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    int rc = 0;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT)
            rc = rs_fail(err, RINGSIM_EDB, "cannot open database %s: %s", path, strerror(errno));
        else if (access(dir, W_OK | X_OK) != 0)
            rc = rs_fail(err, errno == ENOENT ? RINGSIM_EDB : RINGSIM_EREADONLY,
                         "cannot create database %s: folder %s: %s", path, dir, strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
        rc = rs_fail(err, RINGSIM_ENOTDB, "%s is a folder, not a database file", path);
    } else if (access(path, R_OK) != 0) {
        rc = rs_fail(err, RINGSIM_EDB, "cannot read database %s: %s", path, strerror(errno));
    } else {
        /* Refused here, SQLite never touches the file. */
        if (S_ISREG(sb.st_mode) && sb.st_size > 0)
            rc = check_header(path, sb.st_size, beside(path, "-wal"), err);
        if (!rc && access(path, W_OK) != 0)
            snprintf(st->read_only, sizeof st->read_only, "the file is not writable (%s)",
                     strerror(errno));
        else if (!rc && access(dir, W_OK | X_OK) != 0)
            snprintf(st->read_only, sizeof st->read_only, "its folder %s is not writable (%s)", dir,
                     strerror(errno));
    }
    free(dir);
    return rc;
}

/* "file:" URI of a path, for SQLite's URI parameters. */
static char *file_uri(const char *path, const char *query)
{
    size_t n = strlen(path);
    char *u = malloc(5 + 3 * n + strlen(query) + 1), *o = u;
    if (!u)
        return NULL;
    o += sprintf(o, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        o += *p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7F
                 ? sprintf(o, "%%%02X", *p)
                 : sprintf(o, "%c", *p);
    strcpy(o, query);
    return u;
}

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
    bool had_wal = st->memory || beside(path, "-wal"), had_shm = st->memory || beside(path, "-shm");
    int rc = st->memory ? 0 : probe_file(st, path, err);
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
        char *uri = file_uri(path, "?immutable=1");
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
            rc = dberr(st, err, "switching to WAL");
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
                rc = dberr(st, err, "setting max_page_count");
                goto fail;
            }
        }
    }
    /* Temporary storage in files (SQLite's default, $SQLITE_TMPDIR or
     * $TMPDIR, else /var/tmp or /tmp), not in memory: the sorts that build
     * an index over every key spill there, and SQLite's in-memory spill is
     * the slower one -- the key index of 10M keys took 26.7 s and 697 MB
     * in memory, 15.0 s and 138 MB in files (docs/benchmarks.md). */
    if ((rc = exec(st,
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
            unmoved(st);
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
        remove_if_empty(path, "-wal");
    if (!had_wal && !had_shm && !beside(path, "-wal"))
        remove_if_empty(path, "-shm");
    return rc;
}

/* Whether st->path still names the file this connection has open, and,
 * in WAL mode, its -wal file is there.  `rm x.db*` or `mv other.db x.db`
 * under a running process leaves it reading and writing a file no path
 * names any more: every write after would be acknowledged and lost.  In
 * WAL mode SQLite does not notice (it checks only before writing a
 * rollback journal, SQLITE_READONLY_DBMOVED), so we ask its unix VFS
 * (SQLITE_FCNTL_HAS_MOVED: the path's inode against the open file's) and
 * compare the path's device and inode with those seen at open.  The -wal
 * file exists while any connection has the database open in WAL mode
 * (SQLite deletes it only at the last close, under an exclusive lock):
 * gone during a transaction, it was deleted under us, and commits would go
 * to an unlinked file.  Sets st->moved; a stat or two, a few us. */
static const char *const log_suffix[2] = {"-wal", "-shm"};

/* Remember which -wal and -shm files are this connection's (the WAL is
 * open in a transaction, and stays the same file until the last
 * connection closes). */
static void note_logs(store *st)
{
    for (int i = 0; i < 2; i++) {
        char *p = NULL;
        if (!st->logs[i].st_ino && asprintf(&p, "%s%s", st->path, log_suffix[i]) >= 0 &&
            stat(p, &st->logs[i]) != 0)
            st->logs[i].st_ino = 0;
        free(p);
    }
}

/* The file is gone from its path (deleted, moved away or replaced, or its
 * -wal deleted): once, outside a transaction, copy what the log holds into
 * the file this connection has open (a checkpoint: SQLite skips its own at
 * close when the file has moved), so that the file, wherever it went,
 * keeps every commit acknowledged before -- as much as readers of other
 * processes allow (PASSIVE: nobody waits).  Then, if the path names
 * another file, our -wal and -shm are still beside it, and SQLite would
 * read our log's pages as that file's ("How To Corrupt An SQLite Database
 * File", 2.4 and 3.3): the next process to open it would see our data,
 * and its checkpoint would write our pages into that file.  Their names go
 * (only if they are still ours); this connection keeps its descriptors. A
 * deleted path needs nothing more: SQLite drops the -wal of an empty file
 * it creates anew. */
/* Whether the wal-index (the -shm this connection maps) still describes
 * the -wal file this connection has open: their salts agree (the index
 * keeps the salts of the log it indexes, a log starts with its own,
 * sqlite.org/walformat.html).  Once another process has started a new
 * -wal at the path, the index describes that one, and a checkpoint
 * through our handle would copy our old file's frames at the index's
 * offsets: pages of another log, a malformed file.  1 yes, 0 no (or our
 * log holds nothing), -1 unknown. */
static int wal_is_indexed(store *st)
{
    sqlite3_file *db = NULL, *wal = NULL;
    if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER, &db) != SQLITE_OK ||
        sqlite3_file_control(st->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
        !db || !db->pMethods || db->pMethods->iVersion < 2 || !wal || !wal->pMethods)
        return -1;
    unsigned char hdr[32];
    if (wal->pMethods->xRead(wal, hdr, sizeof hdr, 0) != SQLITE_OK)
        return 0; /* empty: no frame of ours to copy */
    volatile void *map = NULL;
    if (db->pMethods->xShmMap(db, 0, 32768, 0, &map) != SQLITE_OK || !map)
        return -1;
    /* WalIndexHdr: aSalt at byte 32 of each of its two copies (0, 48). */
    unsigned char a[8], b[8];
    for (int i = 0; i < 8; i++) {
        a[i] = ((volatile unsigned char *)map)[32 + i];
        b[i] = ((volatile unsigned char *)map)[48 + 32 + i];
    }
    if (memcmp(a, b, sizeof a) != 0)
        return -1; /* being written: ask again */
    return memcmp(a, hdr + 16, 8) == 0;
}

/* The file is gone from its path (deleted, moved away or replaced, or its
 * -wal deleted): outside a transaction, copy what the log holds into the
 * file this connection has open (a checkpoint: SQLite skips its own at
 * close when the file has moved), so that the file, wherever it went,
 * keeps every commit acknowledged before.  PASSIVE, so nobody waits: a
 * reader of an older snapshot (another process, another connection of
 * ours) holds back the frames after it, and the copy is tried again at
 * each check (the server's 200 ms poll, every request) until the log is
 * all in the file -- done once, a single try used to leave the rest in a
 * deleted -wal, lost at the next SIGKILL (issue 25).  Never when the
 * wal-index describes another log (wal_is_indexed).  Then, if the path
 * names another file, our -wal and -shm are still beside it, and SQLite
 * would read our log's pages as that file's ("How To Corrupt An SQLite
 * Database File", 2.4 and 3.3): the next process to open it would see
 * our data, and its checkpoint would write our pages into that file.
 * Their names go (only if they are still ours); this connection keeps
 * its descriptors.  A deleted path needs nothing more: SQLite drops the
 * -wal of an empty file it creates anew. */
static void settle_moved(store *st)
{
    if (st->settled || sqlite3_txn_state(st->db, NULL) != SQLITE_TXN_NONE)
        return;
    bool done = true;
    /* Overwritten: our log's pages copied over another file's would make
     * a mix of two databases; the copy stays as it was put. */
    if (st->wal && !st->overwritten) {
        int cur = wal_is_indexed(st), log = -1, ckpt = -1;
        if (cur < 0)
            done = false;
        else if (cur == 1)
            done = sqlite3_wal_checkpoint_v2(st->db, "main", SQLITE_CHECKPOINT_PASSIVE, &log,
                                             &ckpt) == SQLITE_OK &&
                   log == ckpt;
        /* cur 0: another log is indexed, which SQLite starts only once
         * every frame of the one before is in the file. */
    }
    if (!done)
        return;
    st->settled = true;
    /* Nothing more may be copied through this handle: the log it holds is
     * not the path's any more (SQLite's close would checkpoint it). */
    sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    for (int i = 0; (st->replaced || st->overwritten) && i < 2; i++) {
        char *p = NULL;
        struct stat sb;
        if (st->logs[i].st_ino && asprintf(&p, "%s%s", st->path, log_suffix[i]) >= 0 &&
            stat(p, &sb) == 0 && sb.st_dev == st->logs[i].st_dev && sb.st_ino == st->logs[i].st_ino)
            unlink(p);
        free(p);
    }
    /* st->logs stays: should the file come back, the -wal beside it is no
     * longer the one this connection writes, and writes stay refused. */
}

static int moved_fail(store *st, rs_error *err)
{
    return rs_fail(err, RINGSIM_EMOVED,
                   "%s; writes are refused, since they would be lost with it (reads show "
                   "the file as it was; restart to open what the path names now)",
                   st->moved);
}

/* Whether the file was written in place by another program (`cp
 * backup.db x.db` keeps the inode, so the checks by inode cannot see it).
 * In WAL mode only a checkpoint writes the database file, and every
 * checkpoint that writes a page moves the wal-index's nBackfill or, when
 * the log starts again, its salts.  So, holding the checkpoint lock (no
 * checkpoint half done, ours or another process's), the file's mtime and
 * size are compared with those seen last time together with those two: a
 * file that changed while they did not was written by someone else, and
 * its pages no longer agree with the log, which would be copied over them
 * (a malformed mix: issue 26, item 10).  1 overwritten, 0 not, -1 not
 * known now (the lock is taken: a checkpoint runs).  A few us: a stat and
 * a lock of the mapped -shm. */
static int overwritten_check(store *st)
{
    sqlite3_file *db = NULL;
    if (st->memory || !st->wal ||
        sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER, &db) != SQLITE_OK || !db ||
        !db->pMethods || db->pMethods->iVersion < 2)
        return 0;
    volatile void *map = NULL;
    if (db->pMethods->xShmMap(db, 0, 32768, 0, &map) != SQLITE_OK || !map)
        return 0; /* no index mapped yet: nothing read through it */
    /* WAL_CKPT_LOCK is lock slot 1 (sqlite3/wal.c). */
    if (db->pMethods->xShmLock(db, 1, 1, SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE) != SQLITE_OK)
        return -1;
    struct stat sb;
    unsigned char ck[12];
    int r = stat(st->path, &sb);
    for (int i = 0; i < 8; i++)
        ck[i] = ((volatile unsigned char *)map)[32 + i]; /* WalIndexHdr.aSalt */
    for (int i = 0; i < 4; i++)
        ck[8 + i] = ((volatile unsigned char *)map)[96 + i]; /* WalCkptInfo.nBackfill */
    db->pMethods->xShmLock(db, 1, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE);
    if (r != 0)
        return 0; /* deleted: unmoved says so */
    bool same_file = st->base_set && sb.st_size == st->base_size &&
                     sb.st_mtim.tv_sec == st->base_mtime.tv_sec &&
                     sb.st_mtim.tv_nsec == st->base_mtime.tv_nsec;
    if (st->base_set && !same_file && memcmp(ck, st->base_ckpt, sizeof ck) == 0)
        return 1;
    st->base_set = true;
    st->base_mtime = sb.st_mtim;
    st->base_size = sb.st_size;
    memcpy(st->base_ckpt, ck, sizeof ck);
    return 0;
}

static bool unmoved(store *st)
{
    st->moved[0] = '\0';
    st->replaced = false;
    if (st->memory || !st->ino)
        return true;
    int has_moved = 0;
    struct stat sb;
    if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_HAS_MOVED, &has_moved) != SQLITE_OK)
        has_moved = 0;
    if (stat(st->path, &sb) != 0) {
        snprintf(st->moved, sizeof st->moved,
                 "the database file %s was deleted (%s) while this process had it open", st->path,
                 strerror(errno));
    } else if (has_moved || sb.st_dev != st->dev || sb.st_ino != st->ino) {
        snprintf(st->moved, sizeof st->moved,
                 "the database file %s was replaced by another file while this process had "
                 "it open",
                 st->path);
        st->replaced = true;
    } else if (st->overwritten || overwritten_check(st) == 1) {
        /* Sticky: the file stays another's content under our log. */
        st->overwritten = true;
        snprintf(st->moved, sizeof st->moved,
                 "the database file %s was overwritten in place by another program (a copy "
                 "put over it?) while this process had it open",
                 st->path);
    } else if (st->wal) {
        /* Once a transaction has opened the log, its file stays there, the
         * same file, until this connection closes. */
        bool in_txn = sqlite3_txn_state(st->db, NULL) != SQLITE_TXN_NONE;
        char *p = NULL;
        struct stat wb;
        bool there = asprintf(&p, "%s-wal", st->path) >= 0 && stat(p, &wb) == 0;
        free(p);
        if (st->logs[0].st_ino
                ? !there || wb.st_dev != st->logs[0].st_dev || wb.st_ino != st->logs[0].st_ino
                : !there && in_txn)
            snprintf(st->moved, sizeof st->moved,
                     "the write-ahead log %s-wal was deleted while this process had the "
                     "database open",
                     st->path);
        else if (in_txn)
            note_logs(st);
    }
    st->wal_gone = st->moved[0] && !st->replaced && !st->overwritten && stat(st->path, &sb) == 0;
    if (!st->moved[0]) {
        st->settled = false; /* moved back: the same file again */
    } else {
        settle_moved(st);
        /* Say where the acknowledged operations are. */
        size_t n = strlen(st->moved);
        if (st->wal_gone)
            snprintf(st->moved + n, sizeof st->moved - n, "%s",
                     st->settled ? "; every acknowledged operation is in the database file"
                                 : "; copying the acknowledged operations into the database "
                                   "file (waiting for readers)");
    }
    return st->moved[0] == '\0';
}

int store_check_file(store *st, rs_error *err) { return unmoved(st) ? 0 : moved_fail(st, err); }

const char *store_read_only(store *st)
{
    if (st->read_only[0])
        return st->read_only;
    return unmoved(st) ? NULL : st->moved;
}

void store_close(store *st)
{
    if (!st)
        return;
    /* SQLite checkpoints at the last close: a file deleted, replaced or
     * overwritten since the last check must be known first, so that this
     * handle copies nothing into a file that is not ours (settle_moved). */
    if (st->db && !st->memory && st->ino)
        unmoved(st);
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(st->q[i]);
    sqlite3_close(st->db);
    moverun_free(&st->run);
    free(st->path);
    free(st);
}

int store_begin(store *st, rs_error *err)
{
    if (st->read_only[0] || sqlite3_db_readonly(st->db, "main") == 1)
        return rs_fail(err, RINGSIM_EREADONLY, "database %s is read-only: %s", st->path,
                       st->read_only[0] ? st->read_only : "SQLite opened it read-only");
    run_drop(st);
    int rc = run(st, stmt(st, Q_BEGIN), err, "starting a transaction");
    if (!rc && !unmoved(st)) {
        store_rollback(st);
        settle_moved(st);
        rc = moved_fail(st, err);
    }
    return rc;
}

int store_commit(store *st, rs_error *err)
{
    int rc = run_flush(st, err);
    if (rc) {
        store_rollback(st);
        return rc;
    }
    /* Whether the file was overwritten in place is known only between
     * checkpoints: wait for a running one (another process's) rather
     * than commit without knowing, as long as a writer waits for a lock. */
    for (int waited = 0; sqlite3_txn_state(st->db, "main") == SQLITE_TXN_WRITE && !st->overwritten;
         waited++) {
        int o = overwritten_check(st);
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
    if (sqlite3_txn_state(st->db, "main") == SQLITE_TXN_WRITE && !unmoved(st)) {
        store_rollback(st);
        settle_moved(st);
        return moved_fail(st, err);
    }
    rc = run(st, stmt(st, Q_COMMIT), err, "committing");
    if (rc) {
        store_rollback(st);
        return rc;
    }
    /* And once more before the caller acknowledges it: the -wal deleted
     * between the check above and the commit holds this commit in a file
     * no path names.  Copied into the database file (settle_moved, run
     * by unmoved now that the transaction is over) it survives; if it
     * cannot be copied yet, it is not acknowledged. */
    if (!unmoved(st) && !(st->wal_gone && st->settled))
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
    return run(st, stmt(st, Q_BEGIN_READ), err, "starting a read");
}

void store_end_read(store *st) { store_rollback(st); }

bool store_in_transaction(const store *st) { return !sqlite3_get_autocommit(st->db); }

int store_data_version(store *st, int64_t *out, rs_error *err)
{
    return one_int(st, stmt(st, Q_DATA_VERSION), out, err, "reading the data version");
}

static char *dup_text(sqlite3_stmt *s, int col)
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

int store_meta_get(store *st, const char *name, char **out, rs_error *err)
{
    *out = NULL;
    sqlite3_stmt *s = stmt(st, Q_META_GET);
    if (!s)
        return dberr(st, err, "reading meta");
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *out = dup_text(s, 0);
        rc = *out ? 0 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    } else {
        rc = rc == SQLITE_DONE ? 0 : dberr(st, err, "reading meta");
    }
    sqlite3_reset(s);
    return rc;
}

int store_meta_set(store *st, const char *name, const char *value, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_META_SET);
    /* Stored as a blob of the text's bytes (read back as text alike):
     * SQLite's length() of a blob is read from the record's header, of a
     * text by counting its characters, and store_meta_trim sums the
     * lengths of every kept state at each change of topology (8 MB at
     * 1000 nodes: 11 ms a node add as text). */
    if (s) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_blob(s, 2, value, (int)strlen(value), SQLITE_STATIC);
    }
    return run(st, s, err, "writing meta");
}

int store_meta_delete_below(store *st, const char *prefix, int64_t below, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_META_DEL_BELOW);
    if (s) {
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, below);
    }
    return run(st, s, err, "writing meta");
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
    sqlite3_stmt *s = stmt(st, Q_META_SET);
    if (s) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, value);
    }
    return run(st, s, err, "writing meta");
}

/* ---- nodes ---- */

int store_nodes_load(store *st, store_node **out, size_t *n, rs_error *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s = stmt(st, Q_NODES);
    if (!s)
        return dberr(st, err, "reading nodes");
    size_t cap = 0, len = 0;
    store_node *v = NULL;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (vec_reserve(&v, &cap, len + 1, sizeof *v, 16))
            goto nomem;
        store_node *d = &v[len];
        d->id = sqlite3_column_int64(s, 0);
        d->name = dup_text(s, 1);
        d->len = (size_t)sqlite3_column_bytes(s, 1);
        d->weight = sqlite3_column_double(s, 2);
        d->keys = sqlite3_column_int64(s, 3);
        d->tokens = sqlite3_column_type(s, 4) == SQLITE_NULL ? NULL : dup_text(s, 4);
        d->attrs = sqlite3_column_type(s, 5) == SQLITE_NULL ? NULL : dup_text(s, 5);
        if (!d->name || (sqlite3_column_type(s, 5) != SQLITE_NULL && !d->attrs))
            goto nomem;
        len++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        store_nodes_free(v, len);
        return dberr(st, err, "reading nodes");
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
    sqlite3_stmt *s = stmt(st, Q_NODE_INS);
    if (s) {
        sqlite3_bind_text(s, 1, name, (int)len, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, weight);
        if (tokens)
            sqlite3_bind_text(s, 3, tokens, -1, SQLITE_STATIC);
    }
    int rc = run(st, s, err, "adding a node");
    *id = rc ? 0 : sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_node_insert_seq(store *st, const char *name, size_t len, double weight,
                          const char *tokens, int64_t seq, int64_t *id, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_NODE_INS_SEQ);
    if (s) {
        sqlite3_bind_text(s, 1, name, (int)len, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, weight);
        if (tokens)
            sqlite3_bind_text(s, 3, tokens, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, seq);
    }
    int rc = run(st, s, err, "adding a node");
    *id = rc ? 0 : sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_node_update(store *st, int64_t id, double weight, int64_t keys, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_NODE_UPD);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_double(s, 2, weight);
        sqlite3_bind_int64(s, 3, keys);
    }
    return run(st, s, err, "updating a node");
}

int store_node_set_attrs(store *st, int64_t id, const char *attrs, int64_t seq, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_NODE_ATTRS);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        if (attrs)
            sqlite3_bind_text(s, 2, attrs, -1, SQLITE_STATIC);
        if (seq >= 0)
            sqlite3_bind_int64(s, 3, seq);
    }
    return run(st, s, err, "setting a node's attributes");
}

int store_node_set_tokens(store *st, int64_t id, const char *tokens, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_NODE_TOKENS);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        if (tokens)
            sqlite3_bind_text(s, 2, tokens, -1, SQLITE_STATIC);
    }
    return run(st, s, err, "setting a node's tokens");
}

int store_node_delete(store *st, int64_t id, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_NODE_DEL);
    if (s)
        sqlite3_bind_int64(s, 1, id);
    return run(st, s, err, "removing a node");
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
    sqlite3_stmt *s = stmt(st, Q_KEYS_KIND);
    if (!s)
        return dberr(st, err, "reading keys");
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *own = sqlite3_column_int(s, 0) != 0;
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : dberr(st, err, "reading keys");
    sqlite3_reset(s);
    return rc;
}

int store_key_insert(store *st, const store_key *k, int *inserted, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_KEY_INS);
    if (s) {
        sqlite3_bind_text(s, 1, k->key, (int)k->len, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, key_coord(k));
        bind_node(s, 3, k->node);
        bind_pos(s, 4, k);
    }
    int rc = run(st, s, err, "inserting a key");
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
    sqlite3_stmt *s = stmt(st, Q_KEY_GET);
    if (!s)
        return dberr(st, err, "reading a key");
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
        rc = dberr(st, err, "reading a key");
    }
    sqlite3_reset(s);
    return rc;
}

int store_key_delete(store *st, const char *key, size_t len, int *deleted, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_KEY_DEL);
    if (s)
        sqlite3_bind_text(s, 1, key, (int)len, SQLITE_STATIC);
    int rc = run(st, s, err, "deleting a key");
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
    sqlite3_stmt *s = stmt(st, Q_DENSITY);
    if (!s)
        return dberr(st, err, "reading keys");
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
    return rc == SQLITE_DONE ? 0 : dberr(st, err, "reading keys");
}

int store_keys_clear(store *st, rs_error *err)
{
    return run(st, stmt(st, Q_KEYS_CLEAR), err, "deleting keys");
}

int store_key_set(store *st, const store_key *k, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_KEY_SET);
    if (s) {
        sqlite3_bind_text(s, 1, k->key, (int)k->len, SQLITE_STATIC);
        bind_node(s, 2, k->node);
        sqlite3_bind_int64(s, 3, key_coord(k));
    }
    int rc = run(st, s, err, "moving a key");
    if (!rc && sqlite3_changes(st->db) != 1)
        rc = rs_fail(err, RINGSIM_EDB, "key \"%.*s\" is not at the coordinate given", (int)k->len,
                     k->key);
    return rc;
}

/* Write the run being filled, if it holds anything. */
static int run_flush(store *st, rs_error *err)
{
    moverun *r = &st->run;
    if (!r->n)
        return 0;
    sqlite3_stmt *s = stmt(st, Q_RUN_INS);
    if (s) {
        sqlite3_bind_int64(s, 1, st->run_op);
        sqlite3_bind_int64(s, 2, st->run_first);
        sqlite3_bind_int64(s, 3, r->n);
        sqlite3_bind_blob(s, 4, r->names.p ? r->names.p : "", (int)r->names.n, SQLITE_STATIC);
        sqlite3_bind_blob(s, 5, r->data.p, (int)r->data.n, SQLITE_STATIC);
    }
    int rc = run(st, s, err, "recording moves");
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

static int run_record(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                      const char *to_name, rs_error *err)
{
    int rc = 0;
    if (op != st->run_op) {
        /* Another operation's moves: it may have some already. */
        if ((rc = run_flush(st, err)))
            return rc;
        sqlite3_stmt *s = stmt(st, Q_RUN_END);
        if (s)
            sqlite3_bind_int64(s, 1, op);
        if ((rc = one_int(st, s, &st->run_first, err, "recording moves")))
            return rc;
        st->run_op = op;
    } else if (moverun_full(&st->run) && (rc = run_flush(st, err))) {
        return rc;
    }
    if (moverun_add(&st->run, key, len, from_name, to_name))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return 0;
}

int store_move_add(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                   const char *to_name, rs_error *err)
{
    return run_record(st, op, key, len, from_name, to_name, err);
}

int store_keys_move(store *st, int64_t lo, int64_t hi, int64_t from, int64_t to, int64_t op,
                    const char *from_name, const char *to_name, int64_t *count, rs_error *err)
{
    int rc = 0;
    *count = 0;
    if (op > 0) {
        sqlite3_stmt *s = stmt(st, Q_MOVE_KEYS);
        if (!s)
            return dberr(st, err, "recording moves");
        sqlite3_bind_int64(s, 1, lo);
        sqlite3_bind_int64(s, 2, hi);
        bind_node(s, 3, from);
        int step;
        while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
            rc = run_record(st, op, (const char *)sqlite3_column_text(s, 0),
                            (size_t)sqlite3_column_bytes(s, 0), from_name, to_name, err);
        if (!rc && step != SQLITE_DONE)
            rc = dberr(st, err, "recording moves");
        sqlite3_reset(s);
        if (rc)
            return rc;
    }
    sqlite3_stmt *s = stmt(st, Q_MOVE_UPD);
    if (s) {
        bind_node(s, 1, to);
        sqlite3_bind_int64(s, 2, lo);
        sqlite3_bind_int64(s, 3, hi);
        bind_node(s, 4, from);
    }
    if ((rc = run(st, s, err, "moving keys")))
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
    int r = rc == SQLITE_DONE ? 0 : dberr(st, err, what);
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
    sqlite3_stmt *s = stmt(st, q);
    if (!s)
        return dberr(st, err, "reading keys");
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
    sqlite3_stmt *s = stmt(st, Q_KEYS_TABLE), *ins = NULL;
    int rc = s ? each_key(st, s, rebuild_take, &r, err, "reading keys")
               : dberr(st, err, "reading keys");
    if (!rc && r.n) /* none: r.v is NULL, which qsort_r must not be given */
        qsort_r(r.v, r.n, sizeof *r.v, rebuilt_cmp, r.bytes);
    /* The new table takes its rows in its own order (appends); the key's
     * index is built after, by a sort, rather than by random inserts. */
    if (!rc)
        rc = exec(st,
                  "DROP TABLE IF EXISTS keys_new;"
                  "CREATE TABLE keys_new(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER,"
                  "  pos INTEGER, PRIMARY KEY(coord, key)) WITHOUT ROWID;",
                  err, "rebuilding keys");
    if (!rc && sqlite3_prepare_v2(st->db,
                                  "INSERT INTO keys_new(coord, key, node, pos) "
                                  "VALUES(?1, ?2, ?3, ?4)",
                                  -1, &ins, NULL) != SQLITE_OK)
        rc = dberr(st, err, "rebuilding keys");
    for (size_t i = 0; !rc && i < r.n; i++) {
        const rebuilt *e = &r.v[i];
        sqlite3_bind_int64(ins, 1, e->coord);
        sqlite3_bind_text(ins, 2, r.bytes + e->off, (int)e->len, SQLITE_STATIC);
        bind_node(ins, 3, e->node);
        if (e->pos < 0)
            sqlite3_bind_null(ins, 4);
        else
            sqlite3_bind_int64(ins, 4, e->pos);
        rc = run(st, ins, err, "rebuilding keys");
    }
    sqlite3_finalize(ins);
    free(r.v);
    free(r.bytes);
    if (!rc)
        rc = exec(st,
                  "DROP TABLE keys;"
                  "ALTER TABLE keys_new RENAME TO keys;"
                  "CREATE UNIQUE INDEX keys_key ON keys(key);"
                  "CREATE INDEX keys_pos ON keys(pos, key) WHERE pos IS NOT NULL;",
                  err, "rebuilding keys");
    return rc;
}

int store_keys_bulk(store *st, bool begin, bool with_pos, rs_error *err)
{
    int rc = exec(st,
                  begin ? "DROP INDEX IF EXISTS keys_key"
                        : "CREATE UNIQUE INDEX IF NOT EXISTS keys_key ON keys(key)",
                  err, begin ? "inserting keys" : "indexing keys");
    if (!rc && with_pos)
        rc = exec(
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
    if (sqlite3_prepare_v2(st->db, sql[Q_KEYS_BY_KEY], -1, &c->s, NULL) != SQLITE_OK) {
        free(c);
        return dberr(st, err, "reading keys");
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
        return dberr(c->st, err, "reading keys");
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
            rc = dberr(st, err, "listing keys");
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
            rc = rc == SQLITE_ROW ? 0 : dberr(st, err, "counting keys");
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

/* ---- the operation log ---- */

static void now_rfc3339(char out[32])
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    time_t t = tv.tv_sec;
    gmtime_r(&t, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03dZ", (int)(tv.tv_usec / 1000));
}

int store_op_append(store *st, const char *type, const char *subject, const char *params,
                    const char *config, int64_t *id, rs_error *err)
{
    char at[32];
    now_rfc3339(at);
    sqlite3_stmt *s = stmt(st, Q_OP_INS);
    if (s) {
        sqlite3_bind_text(s, 1, at, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, type, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, subject, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, params, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 5, config, -1, SQLITE_STATIC);
    }
    int rc = run(st, s, err, "recording the operation");
    *id = rc ? 0 : sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_op_finish(store *st, int64_t id, int64_t keys_moved, const char *moved_from,
                    const char *config, int64_t replica_moves, int64_t skipped, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OP_FIN);
    if (s) {
        sqlite3_bind_int64(s, 5, replica_moves);
        if (skipped >= 0)
            sqlite3_bind_int64(s, 6, skipped);
        else
            sqlite3_bind_null(s, 6);
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, keys_moved);
        sqlite3_bind_text(s, 3, moved_from, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, config, -1, SQLITE_STATIC);
    }
    return run(st, s, err, "recording the operation");
}

int store_op_add_key(store *st, int64_t op, int64_t seq, const char *key, size_t len, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OP_KEY);
    if (s) {
        sqlite3_bind_int64(s, 1, op);
        sqlite3_bind_int64(s, 2, seq);
        sqlite3_bind_text(s, 3, key, (int)len, SQLITE_STATIC);
    }
    return run(st, s, err, "recording the operation's keys");
}

static int read_op(sqlite3_stmt *s, store_op *o)
{
    memset(o, 0, sizeof *o);
    o->id = sqlite3_column_int64(s, 0);
    const char *at = (const char *)sqlite3_column_text(s, 1);
    snprintf(o->at, sizeof o->at, "%s", at ? at : "");
    o->type = dup_text(s, 2);
    o->subject = dup_text(s, 3);
    o->params = dup_text(s, 4);
    o->config = dup_text(s, 5);
    o->keys_moved = sqlite3_column_int64(s, 6);
    o->replica_moves = sqlite3_column_int64(s, 8);
    o->skipped = sqlite3_column_type(s, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 9);
    o->moved_from = dup_text(s, 7);
    o->has_loads = sqlite3_column_type(s, 10) != SQLITE_NULL;
    o->requests_moved = sqlite3_column_double(s, 10);
    o->bytes_moved = sqlite3_column_int64(s, 11);
    if (!o->type || !o->subject || !o->params || !o->config || !o->moved_from) {
        store_op_clear(o);
        return RINGSIM_ENOMEM;
    }
    return 0;
}

void store_op_clear(store_op *o)
{
    free(o->type);
    free(o->subject);
    free(o->params);
    free(o->config);
    free(o->moved_from);
    memset(o, 0, sizeof *o);
}

int store_op_get(store *st, int64_t id, store_op *out, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OP_GET);
    if (!s)
        return dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        rc = read_op(s, out) ? rs_fail(err, RINGSIM_ENOMEM, "out of memory") : 0;
    else if (rc == SQLITE_DONE)
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found", (long long)id);
    else
        rc = dberr(st, err, "reading the log");
    sqlite3_reset(s);
    return rc;
}

int store_ops_each(store *st, int64_t after, int64_t limit, store_op_fn fn, void *ud, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OPS);
    if (!s)
        return dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, after);
    sqlite3_bind_int64(s, 2, limit < 0 ? INT64_MAX : limit);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_op o;
        if (read_op(s, &o)) {
            sqlite3_reset(s);
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        }
        int r = fn(ud, &o);
        store_op_clear(&o);
        if (r) {
            sqlite3_reset(s);
            return r;
        }
    }
    int r = rc == SQLITE_DONE ? 0 : dberr(st, err, "reading the log");
    sqlite3_reset(s);
    return r;
}

int store_op_base(store *st, int64_t upto, int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OP_BASE);
    if (s)
        sqlite3_bind_int64(s, 1, upto);
    return one_int(st, s, out, err, "reading the log");
}

int store_ops_work(store *st, int64_t from, int64_t to, int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OPS_WORK);
    if (s) {
        sqlite3_bind_int64(s, 1, from);
        sqlite3_bind_int64(s, 2, to);
    }
    return one_int(st, s, out, err, "reading the log");
}

int store_ops_topology(store *st, int64_t from, int64_t to, int64_t *count, int64_t *runs,
                       int64_t *first, rs_error *err)
{
    *count = *runs = *first = 0;
    sqlite3_stmt *s = stmt(st, Q_OPS_TOPO);
    if (!s)
        return dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, from);
    sqlite3_bind_int64(s, 2, to);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *count = sqlite3_column_int64(s, 0);
        *runs = sqlite3_column_int64(s, 1);
        *first = sqlite3_column_int64(s, 2);
    }
    rc = rc == SQLITE_ROW ? 0 : dberr(st, err, "reading the log");
    sqlite3_reset(s);
    return rc;
}

int store_ops_node_builds(store *st, int64_t from, int64_t to, int64_t start, int64_t cap,
                          int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OPS_NODE_BUILDS);
    if (s) {
        sqlite3_bind_int64(s, 1, from);
        sqlite3_bind_int64(s, 2, to);
        sqlite3_bind_int64(s, 3, cap);
        sqlite3_bind_int64(s, 4, start);
    }
    return one_int(st, s, out, err, "reading the log");
}

int store_meta_oldest(store *st, const char *prefix, int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_META_OLDEST);
    if (s)
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
    return one_int(st, s, out, err, "reading meta");
}

int store_meta_trim(store *st, const char *prefix, int64_t keep_bytes, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_META_TRIM);
    if (s) {
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, keep_bytes);
    }
    return run(st, s, err, "writing meta");
}

int store_page_count(store *st, int64_t *out, rs_error *err)
{
    return one_int(st, stmt(st, Q_PAGE_COUNT), out, err, "reading the file size");
}

int store_copy_from(store *dst, store *src, rs_error *err)
{
    sqlite3_backup *b = sqlite3_backup_init(dst->db, "main", src->db, "main");
    if (!b)
        return dberr(dst, err, "copying the database");
    /* All pages in one step: one read transaction on src, which WAL lets
     * writers run beside, and a copy of one committed state. */
    int rc = sqlite3_backup_step(b, -1);
    int fin = sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE || fin != SQLITE_OK)
        return rc == SQLITE_BUSY || rc == SQLITE_LOCKED
                   ? rs_fail(err, RINGSIM_EBUSY, "database is busy; try again")
               : rc == SQLITE_NOMEM || fin == SQLITE_NOMEM
                   ? rs_fail(err, RINGSIM_ENOMEM, "out of memory")
                   : dberr(dst, err, "copying the database");
    return 0;
}

void store_shrink(store *st)
{
    sqlite3_exec(st->db, "PRAGMA cache_size = -1024", NULL, NULL, NULL);
    sqlite3_db_release_memory(st->db);
}

int store_last_op(store *st, int64_t *out, rs_error *err)
{
    return one_int(st, stmt(st, Q_OP_LAST), out, err, "reading the log");
}

int store_op_keys_each(store *st, int64_t op, store_str_fn fn, void *ud, rs_error *err)
{
    /* Not the cached statement: replay may nest this inside other reads. */
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql[Q_OP_KEYS], -1, &s, NULL) != SQLITE_OK)
        return dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, op);
    int rc, r = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        r = fn(ud, (const char *)sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
        if (r)
            break;
    }
    if (!r && rc != SQLITE_DONE)
        r = dberr(st, err, "reading the log");
    sqlite3_finalize(s);
    return r;
}

typedef struct page_ctx {
    store_move_fn fn;
    void *ud;
    bool stopped; /* the answer is fn's */
} page_ctx;

static int page_move(void *ud, const char *key, const char *from, const char *to)
{
    page_ctx *p = ud;
    int r = p->fn(p->ud, key, from, to);
    p->stopped = r != 0;
    return r;
}

int store_moves_page(store *st, int64_t op, int64_t offset, int64_t limit, int64_t *total,
                     store_move_fn fn, void *ud, rs_error *err)
{
    int rc = run_flush(st, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = stmt(st, Q_MOVES_COUNT);
    if (!s)
        return dberr(st, err, "reading moves");
    sqlite3_bind_int64(s, 1, op);
    if ((rc = one_int(st, s, total, err, "reading moves")))
        return rc;
    if (offset < 0)
        offset = 0;
    if (!(s = stmt(st, Q_MOVES)))
        return dberr(st, err, "reading moves");
    sqlite3_bind_int64(s, 1, op);
    sqlite3_bind_int64(s, 2, offset > MOVERUN_MAX ? offset - MOVERUN_MAX : -1);
    page_ctx p = {fn, ud, false};
    int r = 0, step = SQLITE_DONE;
    while (!r && (limit < 0 || limit > 0) && (step = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(s, 0), n = sqlite3_column_int64(s, 1), seen = 0;
        if (first + n <= offset)
            continue;
        const void *names = sqlite3_column_blob(s, 2);
        size_t names_len = (size_t)sqlite3_column_bytes(s, 2);
        const void *data = sqlite3_column_blob(s, 3);
        size_t data_len = (size_t)sqlite3_column_bytes(s, 3);
        if (n < 0 || n > MOVERUN_MAX) {
            r = RINGSIM_ENOTDB;
            break;
        }
        r = moverun_each(names, names_len, data, data_len, n, offset > first ? offset - first : 0,
                         limit, page_move, &p, &seen);
        if (limit > 0)
            limit -= seen;
    }
    if (p.stopped)
        ; /* fn's answer, with its own message */
    else if (r == RINGSIM_ENOTDB)
        r = rs_fail(err, RINGSIM_ENOTDB, "database %s is damaged (the moves of operation %lld)",
                    st->path, (long long)op);
    else if (r == RINGSIM_ENOMEM)
        r = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    else if (!r && (limit < 0 || limit > 0) && step != SQLITE_DONE)
        r = dberr(st, err, "reading moves");
    sqlite3_reset(s);
    return r;
}

int store_op_set_loads(store *st, int64_t id, double requests_moved, int64_t bytes_moved,
                       const char *workload, rs_error *err)
{
    sqlite3_stmt *s = stmt(st, Q_OP_LOADS);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_double(s, 2, requests_moved);
        sqlite3_bind_int64(s, 3, bytes_moved);
        if (workload)
            sqlite3_bind_text(s, 4, workload, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, 4);
    }
    return run(st, s, err, "recording the operation");
}

int store_op_workload(store *st, int64_t id, char **out, rs_error *err)
{
    *out = NULL;
    sqlite3_stmt *s = stmt(st, Q_OP_WORKLOAD);
    if (!s)
        return dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        rc = 0;
        if (sqlite3_column_type(s, 0) != SQLITE_NULL && !(*out = dup_text(s, 0)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    } else if (rc == SQLITE_DONE) {
        rc = 0;
    } else {
        rc = dberr(st, err, "reading the log");
    }
    sqlite3_reset(s);
    return rc;
}
