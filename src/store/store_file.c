/*
 * store_file.c - the file under SQLite: what is checked before SQLite
 * opens it (a folder, a file of another program, a truncated one: refused
 * untouched; a file or folder we may not write: opened read-only), and
 * the watch over it while open -- deleted, replaced, or overwritten in
 * place by another program, or its -wal deleted -- so that no write is
 * acknowledged into a file no path names (store_begin and store_commit
 * ask; see store__unmoved).
 *
 * It runs no statement of the table: a stat or two, the header read
 * through SQLite's own handle, the wal-index read through its mapping.
 */
#define _GNU_SOURCE /* asprintf */
#include "store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- before opening ---- */

/* The 100-byte header of an SQLite file (sqlite.org/fileformat.html,
 * "1.3 The Database Header"), read before SQLite opens the file: files of
 * other programs and truncated files are refused without SQLite ever
 * touching them (a WAL-mode file would get -wal and -shm files beside it).
 * With a -wal file present the header may be stale (pages live in the WAL):
 * only the magic and a foreign application id are checked then. */
/* The first 100 bytes of the file, read through SQLite's own file handle of
 * a read-only connection: closing a descriptor of our own would drop every
 * POSIX lock this process holds on the file (the server opens it twice),
 * the trap of "How To Corrupt An SQLite Database File", 2.2.  SQLite keeps
 * its descriptors per inode and closes them safely. */
static int read_header(const char *path, off_t size, unsigned char h[100], size_t *n)
{
    memset(h, 0, 100);
    char *uri = store__file_uri(path, "?mode=ro");
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
bool store__beside(const char *path, const char *suffix)
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
void store__remove_if_empty(const char *path, const char *suffix)
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
int store__probe_file(store *st, const char *path, rs_error *err)
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
            rc = check_header(path, sb.st_size, store__beside(path, "-wal"), err);
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
char *store__file_uri(const char *path, const char *query)
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

/* ---- while open ---- */

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
void store__settle_moved(store *st)
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

int store__moved_fail(store *st, rs_error *err)
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
int store__overwritten_check(store *st)
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

bool store__unmoved(store *st)
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
    } else if (st->overwritten || store__overwritten_check(st) == 1) {
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
        store__settle_moved(st);
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

int store_check_file(store *st, rs_error *err)
{
    return store__unmoved(st) ? 0 : store__moved_fail(st, err);
}

const char *store_read_only(store *st)
{
    if (st->read_only[0])
        return st->read_only;
    return store__unmoved(st) ? NULL : st->moved;
}
