/*
 * store_int.h - what the files of the store (src/store/) share: the
 * connection (struct store), the names of the statements (their text is
 * the table in store.c, each prepared on first use and cached in st->q),
 * and the helpers every file runs them with.
 *
 * store.c opens the file and owns the schema, the statements, the
 * transactions (with the run of moves they carry) and meta; store_file.c
 * watches the file under SQLite (its header before opening, a file
 * deleted, replaced or overwritten while open); store_keys.c the nodes and
 * keys; store_log.c the operation log and the moves it recorded.  The
 * calls go one way: store_keys.c and store_log.c -> store.c ->
 * store_file.c.
 */
#ifndef RINGSIM_STORE_INT_H
#define RINGSIM_STORE_INT_H

/* Private to its library: src/store/CMakeLists.txt defines
 * RINGSIM_STORE_INTERNAL for its own files, so a higher floor that
 * includes this header does not compile. */
#ifndef RINGSIM_STORE_INTERNAL
#error "store_int.h is the store's own (src/store/): use store.h"
#endif

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "moverun.h"
#include "store.h"

#define APPLICATION_ID 0x52494E47 /* "RING" */
#define PATH_MAX_MSG 320          /* a message naming the file (rs_error's size) */

/* The statements, by name: the index into store.c's table of texts and
 * into st->q. */
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

/* store.c: statements and errors. */
/* An SQLite failure as a RINGSIM_E code with err filled (BUSY/LOCKED ->
 * EBUSY, READONLY -> EREADONLY, a full disk -> EFULL, NOTADB/CORRUPT ->
 * ENOTDB, the rest -> EDB, SQLite's own message kept); `what` names the
 * work for the message.  Returns the code. */
int store__dberr(store *st, rs_error *err, const char *what);
/* Statement i, prepared on first use and cached, reset and its bindings
 * cleared; NULL when it cannot be prepared (then store__dberr says why). */
sqlite3_stmt *store__stmt(store *st, int i);
/* Statement i prepared afresh, not the cached one: for a read that may
 * nest inside another use of it (replay, a cursor).  NULL when it cannot
 * be prepared; the caller finalizes it. */
sqlite3_stmt *store__prepare(store *st, int i);
/* Step s (NULL: the prepare failed) once, for no rows, and reset it. */
int store__run(store *st, sqlite3_stmt *s, rs_error *err, const char *what);
/* Run SQL text (several statements) outside the table. */
int store__exec(store *st, const char *text, rs_error *err, const char *what);
/* One integer from a one-row statement s (NULL: the prepare failed). */
int store__one_int(store *st, sqlite3_stmt *s, int64_t *out, rs_error *err, const char *what);
/* Column col as a malloc'd text (NULL: out of memory). */
char *store__dup_text(sqlite3_stmt *s, int col);
/* The run of moves the transaction carries: written when full, when
 * another operation records, before moves are read and at commit. */
int store__run_flush(store *st, rs_error *err);
int store__run_record(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                      const char *to_name, rs_error *err);

/* store_file.c: the file under SQLite.  None touches st->q. */
/* Before opening path: refuse a folder and a file that is not a ringsim
 * database (its header), and note in st->read_only why writes would be
 * refused.  0 or a RINGSIM_E code. */
int store__probe_file(store *st, const char *path, rs_error *err);
/* "file:" URI of path with SQLite's query parameters; malloc'd, NULL when
 * out of memory. */
char *store__file_uri(const char *path, const char *query);
/* Whether path + suffix exists; remove it when it is an empty -wal or a
 * -shm that opening made. */
bool store__beside(const char *path, const char *suffix);
void store__remove_if_empty(const char *path, const char *suffix);
/* Whether st->path still names the file open (and its -wal is there);
 * sets st->moved when not, and copies the log into the file once it can
 * (store__settle_moved).  A stat or two. */
bool store__unmoved(store *st);
void store__settle_moved(store *st);
/* RINGSIM_EMOVED with st->moved in the message. */
int store__moved_fail(store *st, rs_error *err);
/* Whether the file was written in place by another program: 1 yes, 0 no,
 * -1 not known now (a checkpoint holds the lock). */
int store__overwritten_check(store *st);

#endif
