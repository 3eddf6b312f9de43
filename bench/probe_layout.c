/*
 * probe_layout.c - what the keys table could cost, measured before the
 * engine is changed (issue 15: "measure first, a probe of each candidate
 * layout at 1M and 10M keys").
 *
 * A plain C probe on SQLite alone, with the pragmas the store uses (WAL,
 * synchronous NORMAL, 64 MiB cache), no engine: for each candidate layout
 * of the keys table it times, in one transaction each,
 *   insert  N keys "key-0" .. "key-(N-1)" in that order, as `key gen` does
 *           (their positions and coordinates are random: SHA-256);
 *   move    the keys of 1% of the coordinate space (a node add at 100
 *           nodes): read them (key, old owner) and, where the owner is
 *           stored, write the new one;
 *   switch  every key to a new coordinate (a change of algorithm);
 *   lookup  100,000 keys by name (an insert's duplicate check, a key get).
 * Each step is timed REPEAT times over a fresh file; medians are printed,
 * and each figure as a ratio to the `today-ring` insert of the same run,
 * so that the numbers survive a loaded machine.
 *
 * The layouts:
 *   today-ring   schema 4 as the seed's ring uses it: keys(pos, key, node,
 *                coord NULL) clustered by (pos, key), unique index on key,
 *                partial index on coord (empty);
 *   today-coord  the same for an algorithm with a coordinate: coord set, so
 *                the partial index holds every key;
 *   coord-owner  clustered by (coord, key) with the owner stored, unique
 *                index on key; no pos column (pos is SHA-256 of the key);
 *   coord-derive clustered by (coord, key), unique index on key, owner not
 *                stored: the layout's segments say it, so a move only reads.
 * and the candidates for schema 6, which must answer a listing in
 * position order (API.md: GET /api/keys by (position, key)):
 *   coord-pos    coord-owner with the position stored, no index on it: a
 *                listing in position order sorts (SQLite's top-N sorter);
 *   coord-posidx the same with an index on pos, kept at every insert;
 *   coord-posbulk the index on pos dropped before the batch and built
 *                again after it (CREATE INDEX sorts instead of inserting
 *                at random);
 *   coord-sorted coord-pos with the batch sorted by coordinate first, so
 *                that the clustered tree takes its rows in order.
 * Two more steps for the layouts with a position: a page of 100 keys in
 * (position, key) order at offset 0 and at offset N/2.
 *
 * Usage: probe_layout [N [REPEAT [DIR [LAYOUTS]]]]  (defaults 1000000, 3,
 * /tmp, all; LAYOUTS a comma-separated list of names)
 */
#include <inttypes.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

enum {
    L_TODAY_RING,
    L_TODAY_COORD,
    L_COORD_OWNER,
    L_COORD_DERIVE,
    L_COORD_POS,
    L_COORD_POSIDX,
    L_COORD_POSBULK,
    L_COORD_SORTED,
    L_COUNT
};
enum { S_INSERT, S_PAGE0, S_PAGEMID, S_MOVE, S_SWITCH, S_LOOKUP, S_COUNT };

static const char *const layout_name[L_COUNT] = {"today-ring",    "today-coord", "coord-owner",
                                                 "coord-derive",  "coord-pos",   "coord-posidx",
                                                 "coord-posbulk", "coord-sorted"};
static const char *const step_name[S_COUNT] = {"insert",  "page 0", "page N/2",
                                               "move 1%", "switch", "lookup 100k"};

#define SCHEMA6                                                                                    \
    "CREATE TABLE keys(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER, pos INTEGER,"      \
    " PRIMARY KEY(coord, key)) WITHOUT ROWID;"                                                     \
    "CREATE UNIQUE INDEX keys_key ON keys(key);"
#define SWITCH6                                                                                    \
    "CREATE TABLE k2(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER, pos INTEGER,"        \
    " PRIMARY KEY(coord, key)) WITHOUT ROWID;"                                                     \
    "INSERT INTO k2 SELECT (coord * 2654435761) % 9007199254740881 AS c, key, node, pos FROM keys" \
    " ORDER BY c, key;"                                                                            \
    "DROP TABLE keys; ALTER TABLE k2 RENAME TO keys;"                                              \
    "CREATE UNIQUE INDEX keys_key2 ON keys(key);"

static const char *const schema[L_COUNT] = {
    "CREATE TABLE keys(pos INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER, coord INTEGER,"
    " PRIMARY KEY(pos, key)) WITHOUT ROWID;"
    "CREATE UNIQUE INDEX keys_key ON keys(key);"
    "CREATE INDEX keys_coord ON keys(coord) WHERE coord IS NOT NULL;",
    "CREATE TABLE keys(pos INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER, coord INTEGER,"
    " PRIMARY KEY(pos, key)) WITHOUT ROWID;"
    "CREATE UNIQUE INDEX keys_key ON keys(key);"
    "CREATE INDEX keys_coord ON keys(coord) WHERE coord IS NOT NULL;",
    "CREATE TABLE keys(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER,"
    " PRIMARY KEY(coord, key)) WITHOUT ROWID;"
    "CREATE UNIQUE INDEX keys_key ON keys(key);",
    "CREATE TABLE keys(coord INTEGER NOT NULL, key TEXT NOT NULL,"
    " PRIMARY KEY(coord, key)) WITHOUT ROWID;"
    "CREATE UNIQUE INDEX keys_key ON keys(key);",
    SCHEMA6,
    SCHEMA6 "CREATE INDEX keys_pos ON keys(pos);",
    SCHEMA6 "CREATE INDEX keys_pos ON keys(pos);",
    SCHEMA6,
};

static const char *const insert_sql[L_COUNT] = {
    "INSERT INTO keys(pos, key, node) VALUES(?1, ?2, ?4)",
    "INSERT INTO keys(pos, key, node, coord) VALUES(?1, ?2, ?4, ?3)",
    "INSERT INTO keys(coord, key, node) VALUES(?3, ?2, ?4)",
    "INSERT INTO keys(coord, key) VALUES(?3, ?2)",
    "INSERT INTO keys(coord, key, node, pos) VALUES(?3, ?2, ?4, ?1)",
    "INSERT INTO keys(coord, key, node, pos) VALUES(?3, ?2, ?4, ?1)",
    "INSERT INTO keys(coord, key, node, pos) VALUES(?3, ?2, ?4, ?1)",
    "INSERT INTO keys(coord, key, node, pos) VALUES(?3, ?2, ?4, ?1)",
};
/* A page in (position, key) order, cut from the index that gives the order
 * and then read whole (the store's form); NULL: no position stored. */
static const char *const page_sql[L_COUNT] = {
    "SELECT k.key, k.pos, k.node FROM (SELECT pos, key FROM keys ORDER BY pos, key LIMIT 100"
    " OFFSET ?1) AS p JOIN keys AS k ON k.pos = p.pos AND k.key = p.key ORDER BY p.pos, p.key",
    "SELECT k.key, k.pos, k.node FROM (SELECT pos, key FROM keys ORDER BY pos, key LIMIT 100"
    " OFFSET ?1) AS p JOIN keys AS k ON k.pos = p.pos AND k.key = p.key ORDER BY p.pos, p.key",
    NULL,
    NULL,
    "SELECT key, pos, node FROM keys ORDER BY pos, key LIMIT 100 OFFSET ?1",
    "SELECT k.key, k.pos, k.node FROM (SELECT pos, coord, key FROM keys ORDER BY pos, key"
    " LIMIT 100 OFFSET ?1) AS p JOIN keys AS k ON k.coord = p.coord AND k.key = p.key"
    " ORDER BY p.pos, p.key",
    "SELECT k.key, k.pos, k.node FROM (SELECT pos, coord, key FROM keys ORDER BY pos, key"
    " LIMIT 100 OFFSET ?1) AS p JOIN keys AS k ON k.coord = p.coord AND k.key = p.key"
    " ORDER BY p.pos, p.key",
    "SELECT key, pos, node FROM keys ORDER BY pos, key LIMIT 100 OFFSET ?1",
};

/* The keys of one coordinate range, and where the owner is stored, the
 * new owner written. */
static const char *const move_read_sql[L_COUNT] = {
    "SELECT key, node FROM keys WHERE pos > ?1 AND pos <= ?2",
    "SELECT key, node FROM keys WHERE coord > ?1 AND coord <= ?2",
    "SELECT key, node FROM keys WHERE coord > ?1 AND coord <= ?2",
    "SELECT key FROM keys WHERE coord > ?1 AND coord <= ?2",
    "SELECT key, node FROM keys WHERE coord > ?1 AND coord <= ?2",
    "SELECT key, node FROM keys WHERE coord > ?1 AND coord <= ?2",
    "SELECT key, node FROM keys WHERE coord > ?1 AND coord <= ?2",
    "SELECT key, node FROM keys WHERE coord > ?1 AND coord <= ?2",
};
static const char *const move_write_sql[L_COUNT] = {
    "UPDATE keys SET node = 999 WHERE pos > ?1 AND pos <= ?2",
    "UPDATE keys SET node = 999 WHERE coord > ?1 AND coord <= ?2",
    "UPDATE keys SET node = 999 WHERE coord > ?1 AND coord <= ?2",
    NULL,
    "UPDATE keys SET node = 999 WHERE coord > ?1 AND coord <= ?2",
    "UPDATE keys SET node = 999 WHERE coord > ?1 AND coord <= ?2",
    "UPDATE keys SET node = 999 WHERE coord > ?1 AND coord <= ?2",
    "UPDATE keys SET node = 999 WHERE coord > ?1 AND coord <= ?2",
};
/* A change of algorithm: every key's coordinate is recomputed.  The
 * clustered layouts rebuild the table in the new order (an INSERT ...
 * SELECT sorted by the new coordinate is a sequential write). */
static const char *const switch_sql[L_COUNT] = {
    "UPDATE keys SET coord = (pos * 2654435761) % 4294967296 + 1",
    "UPDATE keys SET coord = (coord * 2654435761) % 9007199254740881",
    "CREATE TABLE k2(coord INTEGER NOT NULL, key TEXT NOT NULL, node INTEGER,"
    " PRIMARY KEY(coord, key)) WITHOUT ROWID;"
    "INSERT INTO k2 SELECT (coord * 2654435761) % 9007199254740881 AS c, key, node FROM keys"
    " ORDER BY c, key;"
    "DROP TABLE keys; ALTER TABLE k2 RENAME TO keys;"
    "CREATE UNIQUE INDEX keys_key2 ON keys(key);",
    "CREATE TABLE k2(coord INTEGER NOT NULL, key TEXT NOT NULL,"
    " PRIMARY KEY(coord, key)) WITHOUT ROWID;"
    "INSERT INTO k2 SELECT (coord * 2654435761) % 9007199254740881 AS c, key FROM keys"
    " ORDER BY c, key;"
    "DROP TABLE keys; ALTER TABLE k2 RENAME TO keys;"
    "CREATE UNIQUE INDEX keys_key2 ON keys(key);",
    SWITCH6,
    SWITCH6 "CREATE INDEX keys_pos2 ON keys(pos);",
    SWITCH6 "CREATE INDEX keys_pos2 ON keys(pos);",
    SWITCH6,
};

static void die(sqlite3 *db, const char *what)
{
    fprintf(stderr, "probe_layout: %s: %s\n", what, db ? sqlite3_errmsg(db) : "failed");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "probe_layout: %s: %s\n", sql, msg ? msg : "?");
        exit(1);
    }
}

typedef struct hasher {
    EVP_MD *md;
    EVP_MD_CTX *ctx;
} hasher;

static void digest(hasher *h, const char *key, size_t len, unsigned char out[32])
{
    unsigned int n = 0;
    if (!EVP_DigestInit_ex(h->ctx, h->md, NULL) || !EVP_DigestUpdate(h->ctx, key, len) ||
        !EVP_DigestFinal_ex(h->ctx, out, &n))
        die(NULL, "SHA-256");
}

static uint64_t be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

typedef struct row {
    int64_t coord, pos;
    long i;
} row;

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->coord != y->coord)
        return x->coord < y->coord ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i; /* "key-N" by N: the probe's keys never tie */
}

static void bind_row(sqlite3_stmt *ins, const char *key, int len, int64_t pos, int64_t coord, long i)
{
    sqlite3_bind_int64(ins, 1, pos);
    sqlite3_bind_text(ins, 2, key, len, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 3, coord);
    sqlite3_bind_int64(ins, 4, (sqlite3_int64)(i % 100));
}

/* The database and its WAL files. */
static void remove_files(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

/* One layout, one repetition: the four steps' seconds into t[]. */
static void run(int layout, long n, const char *dir, hasher *h, double t[S_COUNT])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/probe_layout_%d.db", dir, (int)getpid());
    remove_files(path);
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die(db, path);
    exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;"
             "PRAGMA temp_store = MEMORY;");
    exec(db, schema[layout]);

    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db, insert_sql[layout], -1, &ins, NULL) != SQLITE_OK)
        die(db, "prepare insert");
    double t0 = bench_now();
    exec(db, "BEGIN");
    if (layout == L_COORD_POSBULK)
        exec(db, "DROP INDEX keys_pos");
    row *rows = NULL;
    if (layout == L_COORD_SORTED && !(rows = malloc((size_t)n * sizeof *rows)))
        die(NULL, "out of memory");
    for (long i = 0; i < n; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "key-%ld", i);
        unsigned char d[32];
        digest(h, key, (size_t)len, d);
        /* 53 bits: an order-preserving coordinate that SQLite keeps exact */
        int64_t pos = (int64_t)be(d, 4), coord = (int64_t)(be(d + 4, 8) >> 11);
        if (rows) { /* kept, sorted, inserted below */
            rows[i] = (row){coord, pos, i};
            continue;
        }
        bind_row(ins, key, len, pos, coord, i);
        if (sqlite3_step(ins) != SQLITE_DONE)
            die(db, "insert");
        sqlite3_reset(ins);
    }
    if (rows) {
        qsort(rows, (size_t)n, sizeof *rows, row_cmp);
        for (long i = 0; i < n; i++) {
            char key[32];
            int len = snprintf(key, sizeof key, "key-%ld", rows[i].i);
            bind_row(ins, key, len, rows[i].pos, rows[i].coord, rows[i].i);
            if (sqlite3_step(ins) != SQLITE_DONE)
                die(db, "insert");
            sqlite3_reset(ins);
        }
        free(rows);
    }
    if (layout == L_COORD_POSBULK)
        exec(db, "CREATE INDEX keys_pos ON keys(pos)");
    exec(db, "COMMIT");
    t[S_INSERT] = bench_now() - t0;
    sqlite3_finalize(ins);

    for (int p = 0; p < 2; p++) {
        if (!page_sql[layout]) {
            t[S_PAGE0 + p] = -1;
            continue;
        }
        sqlite3_stmt *pg = NULL;
        if (sqlite3_prepare_v2(db, page_sql[layout], -1, &pg, NULL) != SQLITE_OK)
            die(db, "prepare page");
        sqlite3_bind_int64(pg, 1, p ? n / 2 : 0);
        t0 = bench_now();
        exec(db, "BEGIN");
        long rows_read = 0;
        while (sqlite3_step(pg) == SQLITE_ROW)
            rows_read++;
        exec(db, "COMMIT");
        t[S_PAGE0 + p] = bench_now() - t0;
        sqlite3_finalize(pg);
        if (rows_read != 100)
            die(NULL, "a page did not hold 100 keys");
    }

    /* 1% of the space, somewhere in the middle */
    uint64_t top = layout == L_TODAY_RING ? UINT64_C(1) << 32 : UINT64_C(1) << 53;
    uint64_t lo = top / 2, hi = lo + top / 100;
    t0 = bench_now();
    exec(db, "BEGIN");
    sqlite3_stmt *rd = NULL;
    if (sqlite3_prepare_v2(db, move_read_sql[layout], -1, &rd, NULL) != SQLITE_OK)
        die(db, "prepare move");
    sqlite3_bind_int64(rd, 1, (sqlite3_int64)lo);
    sqlite3_bind_int64(rd, 2, (sqlite3_int64)hi);
    long moved = 0, bytes = 0;
    while (sqlite3_step(rd) == SQLITE_ROW) {
        bytes += sqlite3_column_bytes(rd, 0);
        moved++;
    }
    sqlite3_finalize(rd);
    if (move_write_sql[layout]) {
        sqlite3_stmt *wr = NULL;
        if (sqlite3_prepare_v2(db, move_write_sql[layout], -1, &wr, NULL) != SQLITE_OK)
            die(db, "prepare move write");
        sqlite3_bind_int64(wr, 1, (sqlite3_int64)lo);
        sqlite3_bind_int64(wr, 2, (sqlite3_int64)hi);
        if (sqlite3_step(wr) != SQLITE_DONE)
            die(db, "move write");
        sqlite3_finalize(wr);
    }
    exec(db, "COMMIT");
    t[S_MOVE] = bench_now() - t0;
    if (moved < n / 200 || bytes == 0)
        die(NULL, "the move range held too few keys");

    t0 = bench_now();
    exec(db, "BEGIN");
    exec(db, switch_sql[layout]);
    exec(db, "COMMIT");
    t[S_SWITCH] = bench_now() - t0;

    sqlite3_stmt *get = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM keys WHERE key = ?1", -1, &get, NULL) != SQLITE_OK)
        die(db, "prepare lookup");
    t0 = bench_now();
    long found = 0;
    for (long i = 0; i < 100000; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "key-%ld", (i * 7919) % n);
        sqlite3_bind_text(get, 1, key, len, SQLITE_STATIC);
        found += sqlite3_step(get) == SQLITE_ROW;
        sqlite3_reset(get);
    }
    t[S_LOOKUP] = bench_now() - t0;
    sqlite3_finalize(get);
    if (found != 100000)
        die(NULL, "a key was not found");
    sqlite3_close(db);
    remove_files(path);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    bool on[L_COUNT];
    for (int l = 0; l < L_COUNT; l++) {
        char list[512];
        snprintf(list, sizeof list, ",%s,", argc > 4 ? argv[4] : "");
        char want[64];
        snprintf(want, sizeof want, ",%s,", layout_name[l]);
        on[l] = argc <= 4 || strstr(list, want) || l == L_TODAY_RING; /* the reference */
    }
    if (n < 1000 || repeat < 1 || repeat > 50) {
        fprintf(stderr, "usage: probe_layout [N>=1000 [REPEAT 1..50 [DIR]]]\n");
        return 2;
    }
    hasher h = {EVP_MD_fetch(NULL, "SHA256", NULL), EVP_MD_CTX_new()};
    if (!h.md || !h.ctx)
        die(NULL, "SHA-256");

    double *t = calloc((size_t)L_COUNT * S_COUNT * (size_t)repeat, sizeof *t);
    if (!t)
        die(NULL, "out of memory");
    /* layouts interleaved per repetition, so that a load that comes and
     * goes falls on all of them */
    for (int r = 0; r < repeat; r++)
        for (int l = 0; l < L_COUNT; l++) {
            if (!on[l])
                continue;
            double one[S_COUNT];
            run(l, n, dir, &h, one);
            for (int s = 0; s < S_COUNT; s++)
                t[((size_t)l * S_COUNT + (size_t)s) * (size_t)repeat + (size_t)r] = one[s];
        }

    double med[L_COUNT][S_COUNT];
    for (int l = 0; l < L_COUNT; l++)
        for (int s = 0; s < S_COUNT; s++)
            med[l][s] = bench_median(&t[((size_t)l * S_COUNT + (size_t)s) * (size_t)repeat],
                                     (size_t)repeat);
    double ref = med[L_TODAY_RING][S_INSERT];
    printf("probe_layout: %ld keys, median of %d, seconds (ratio to today-ring's insert)\n", n,
           repeat);
    printf("%-15s", "layout");
    for (int s = 0; s < S_COUNT; s++)
        printf(" %18s", step_name[s]);
    printf("\n");
    for (int l = 0; l < L_COUNT; l++) {
        if (!on[l])
            continue;
        printf("%-15s", layout_name[l]);
        for (int s = 0; s < S_COUNT; s++) {
            char cell[40];
            if (med[l][s] < 0)
                snprintf(cell, sizeof cell, "-");
            else if (s == S_PAGE0 || s == S_PAGEMID) /* seconds alone: no insert to compare */
                snprintf(cell, sizeof cell, "%.4f", med[l][s]);
            else
                snprintf(cell, sizeof cell, "%.3f (%.2fx)", med[l][s], med[l][s] / ref);
            printf(" %18s", cell);
        }
        printf("\n");
    }
    free(t);
    EVP_MD_CTX_free(h.ctx);
    EVP_MD_free(h.md);
    return 0;
}
