/*
 * test_store.c - the SQLite store: schema, persistence across reopen,
 * refusing foreign files, keys, moves and the log.
 *
 * Checks docs/api.md, 'Conventions' (every change committed to SQLite).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "moverun.h"
#include "sbuf.h"
#include "store.h"

static char dir[] = "/tmp/ringsim-store-XXXXXX";
static char path[256];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/t.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static int count_key(void *ud, const store_key *k)
{
    (void)k;
    (*(int *)ud)++;
    return 0;
}

static int count_move(void *ud, const char *key, const char *from, const char *to)
{
    assert_string_equal(from, "a");
    assert_string_equal(to, "b");
    assert_int_equal(key[0], 'k');
    (*(int *)ud)++;
    return 0;
}

static void test_persistence(void **state)
{
    (void)state;
    store *st;
    rs_error err;
    unlink(path);
    assert_int_equal(store_open(&st, path, &err), 0);
    assert_int_equal(store_begin(st, &err), 0);
    int64_t id, op;
    assert_int_equal(store_node_insert(st, "alpha", 5, 1.5, NULL, &id, &err), 0);
    int ins;
    assert_int_equal(store_key_insert(st, &(store_key){"k1", 2, 42, id, false, 0}, &ins, &err), 0);
    assert_int_equal(ins, 1);
    assert_int_equal(store_key_insert(st, &(store_key){"k1", 2, 42, id, false, 0}, &ins, &err), 0);
    assert_int_equal(ins, 0); /* duplicate ignored */
    assert_int_equal(store_op_append(st, "add_node", "alpha", "{}", "{}", &op, &err), 0);
    assert_int_equal(op, 1);
    assert_int_equal(store_op_finish(st, op, 0, "[]", "{}", 0, -1, &err), 0);
    assert_int_equal(store_commit(st, &err), 0);
    store_close(st);

    assert_int_equal(store_open(&st, path, &err), 0);
    store_node *nodes;
    size_t n;
    assert_int_equal(store_nodes_load(st, &nodes, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(nodes[0].name, "alpha");
    assert_true(nodes[0].weight == 1.5);
    store_nodes_free(nodes, n);
    store_key k;
    assert_int_equal(store_key_find(st, "k1", 2, &k, &err), 0);
    assert_int_equal(k.pos, 42);
    assert_int_equal(k.node, id);
    assert_int_equal(store_key_find(st, "nope", 4, &k, &err), RINGSIM_ENOTFOUND);
    int64_t last;
    assert_int_equal(store_last_op(st, &last, &err), 0);
    assert_int_equal(last, 1);
    store_op o;
    assert_int_equal(store_op_get(st, 1, &o, &err), 0);
    assert_string_equal(o.type, "add_node");
    assert_int_equal(strlen(o.at), 24); /* 2026-11-29T18:03:50.783Z */
    assert_int_equal(o.at[23], 'Z');
    store_op_clear(&o);
    store_close(st);
    store_close(NULL);
}

static void test_rollback_leaves_nothing(void **state)
{
    (void)state;
    store *st;
    rs_error err;
    unlink(path);
    assert_int_equal(store_open(&st, path, &err), 0);
    assert_int_equal(store_begin(st, &err), 0);
    int ins;
    assert_int_equal(
        store_key_insert(st, &(store_key){"gone", 4, 1, STORE_NO_NODE, false, 0}, &ins, &err), 0);
    store_rollback(st);
    int n = 0;
    assert_int_equal(store_keys_each(st, 0, count_key, &n, &err), 0);
    assert_int_equal(n, 0);
    store_close(st);
}

static void test_refuses_foreign_files(void **state)
{
    (void)state;
    store *st = NULL;
    rs_error err;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("this is not a database at all, just some words in a file......", f);
    fclose(f);
    assert_int_equal(store_open(&st, path, &err), RINGSIM_ENOTDB);
    assert_null(st);
    unlink(path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE other(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(store_open(&st, path, &err), RINGSIM_ENOTDB);
    assert_non_null(strstr(err.msg, "not a ringsim database"));
    unlink(path);
    /* A file from a newer ringsim is refused, not damaged. */
    assert_int_equal(store_open(&st, path, &err), 0);
    store_close(st);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(store_open(&st, path, &err), RINGSIM_ENOTDB);
    assert_non_null(strstr(err.msg, "newer"));
    unlink(path);
}

/* Opening runs the migrations up to the current version. */
static void test_schema_version(void **state)
{
    (void)state;
    store *st;
    rs_error err;
    unlink(path);
    assert_int_equal(store_open(&st, path, &err), 0);
    store_close(st);
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), STORE_SCHEMA_VERSION);
    sqlite3_finalize(q);
    sqlite3_close(db);
    assert_int_equal(store_open(&st, path, &err), 0); /* reopening changes nothing */
    store_close(st);
    unlink(path);
}

/* A position as the store keeps it where it is the coordinate. */
static int64_t at(uint32_t pos) { return (int64_t)((uint64_t)pos ^ 0x8000000000000000ull); }

static void test_moves_and_ranges(void **state)
{
    (void)state;
    store *st;
    rs_error err;
    assert_int_equal(store_open(&st, ":memory:", &err), 0);
    assert_int_equal(store_begin(st, &err), 0);
    int ins;
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "k%d", i);
        assert_int_equal(
            store_key_insert(st, &(store_key){name, strlen(name), (uint32_t)i * 10, 1, false, 0},
                             &ins, &err),
            0);
    }
    int64_t count, op;
    assert_int_equal(store_op_append(st, "add_node", "b", "{}", "{}", &op, &err), 0);
    /* positions 100..200 inclusive: keys 10..20 */
    assert_int_equal(store_keys_move(st, at(100), at(200), 1, 2, op, "a", "b", &count, &err), 0);
    assert_int_equal(count, 11);
    /* keys owned by another node in the range are not touched */
    assert_int_equal(store_keys_move(st, at(100), at(200), 1, 3, op, "a", "c", &count, &err), 0);
    assert_int_equal(count, 0);
    assert_int_equal(store_commit(st, &err), 0);
    int64_t total;
    int moves = 0;
    assert_int_equal(store_moves_page(st, op, 0, 1000, &total, count_move, &moves, &err), 0);
    assert_int_equal(total, 11);
    assert_int_equal(moves, 11);
    store_key_query q = {2, true, NULL, 0, 0, 1000, -1, STORE_ORDER_POSITION, false};
    int n = 0;
    assert_int_equal(store_keys_page(st, &q, &total, count_key, &n, &err), 0);
    assert_int_equal(total, 11);
    assert_int_equal(n, 11);
    q = (store_key_query){0, false, "k1", 2, 0, 5, -1, STORE_ORDER_POSITION, false};
    n = 0;
    assert_int_equal(store_keys_page(st, &q, &total, count_key, &n, &err), 0);
    assert_int_equal(total, 11); /* k1, k10..k19 */
    assert_int_equal(n, 5);
    int64_t counts[4];
    assert_int_equal(store_keys_density(st, false, 0, 4, counts, &err), 0);
    assert_int_equal(counts[0], 100); /* all positions are below 2^30 */
    store_close(st);
}

/* Issue 6, item 1: a prefix of any length pages without writing past a
 * buffer (it overflowed a 256-byte stack array at 256 bytes and more).
 * Expected counts come from memcmp over the keys inserted here. */
static void test_long_prefix_is_bounded(void **state)
{
    (void)state;
    store *st;
    rs_error err;
    assert_int_equal(store_open(&st, ":memory:", &err), 0);
    assert_int_equal(store_begin(st, &err), 0);
    enum { BIG = 70000, NK = 3 };
    char *big = malloc(BIG);
    assert_non_null(big);
    memset(big, 'a', BIG);
    /* "a" x 200, "a" x 300, "a" x 300 + "b": the store takes any length */
    size_t lens[NK] = {200, 300, 301};
    char *keys[NK];
    int ins;
    for (int i = 0; i < NK; i++) {
        keys[i] = malloc(lens[i]);
        assert_non_null(keys[i]);
        memset(keys[i], 'a', lens[i]);
        if (i == 2)
            keys[i][300] = 'b';
        assert_int_equal(
            store_key_insert(st, &(store_key){keys[i], lens[i], (uint32_t)i, 1, false, 0}, &ins, &err),
            0);
    }
    assert_int_equal(store_commit(st, &err), 0);
    size_t plens[] = {1, 200, 255, 256, 300, 301, 4096, BIG};
    for (size_t p = 0; p < sizeof plens / sizeof plens[0]; p++) {
        int expect = 0;
        for (int i = 0; i < NK; i++)
            expect += lens[i] >= plens[p] && memcmp(keys[i], big, plens[p]) == 0;
        store_key_query q = {0, false, big, plens[p], 0, 10, -1, STORE_ORDER_POSITION, false};
        int64_t total = -1;
        int n = 0;
        assert_int_equal(store_keys_page(st, &q, &total, count_key, &n, &err), 0);
        if (total != expect || n != expect)
            fail_msg("prefix of %zu bytes: %lld keys (%d listed), expected %d", plens[p],
                     (long long)total, n, expect);
    }
    /* All-0xFF prefixes have no upper bound. */
    memset(big, 0xFF, 4096);
    store_key_query q = {0, false, big, 4096, 0, 10, -1, STORE_ORDER_POSITION, false};
    int64_t total = -1;
    int n = 0;
    assert_int_equal(store_keys_page(st, &q, &total, count_key, &n, &err), 0);
    assert_int_equal(total, 0);
    for (int i = 0; i < NK; i++)
        free(keys[i]);
    free(big);
    store_close(st);
}

/* The file deleted or replaced under an open store: writes are refused
 * with RINGSIM_EMOVED naming the cause, at begin and at commit; the same
 * file moved back is written again (issue 14). */
static void test_moved_file(void **state)
{
    (void)state;
    store *st, *other;
    rs_error err;
    char away[300], repl[300];
    snprintf(away, sizeof away, "%s/away.db", dir);
    snprintf(repl, sizeof repl, "%s/other.db", dir);
    unlink(path);
    assert_int_equal(store_open(&st, path, &err), 0);
    assert_null(store_read_only(st));
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_meta_set(st, "x", "1", &err), 0);
    assert_int_equal(store_commit(st, &err), 0);
    /* Moved away: deleted as far as the path says. */
    assert_int_equal(rename(path, away), 0);
    assert_int_equal(store_begin(st, &err), RINGSIM_EMOVED);
    assert_non_null(strstr(err.msg, "was deleted"));
    assert_non_null(strstr(err.msg, path));
    assert_non_null(store_read_only(st));
    char *v = NULL;
    assert_int_equal(store_meta_get(st, "x", &v, &err), 0); /* reads go on */
    assert_string_equal(v, "1");
    free(v);
    assert_int_equal(rename(away, path), 0);
    assert_null(store_read_only(st));
    /* Replaced while a write runs: its commit is refused, nothing kept. */
    assert_int_equal(store_open(&other, repl, &err), 0);
    store_close(other);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_meta_set(st, "x", "2", &err), 0);
    assert_int_equal(rename(path, away), 0);
    assert_int_equal(rename(repl, path), 0);
    assert_int_equal(store_commit(st, &err), RINGSIM_EMOVED);
    assert_non_null(strstr(err.msg, "replaced by another file"));
    assert_int_equal(store_begin(st, &err), RINGSIM_EMOVED);
    /* The file at the path is the other one, untouched by our log (its
     * -wal and -shm are gone from beside it). */
    assert_int_equal(store_open(&other, path, &err), 0);
    assert_int_equal(store_meta_get(other, "x", &v, &err), 0);
    assert_null(v);
    store_close(other);
    /* Ours, wherever it went, has what was committed (checkpointed when
     * the move was seen), not the refused commit. */
    assert_int_equal(rename(path, repl), 0);
    assert_int_equal(rename(away, path), 0);
    /* Back at the path, but the -wal beside it is no longer ours. */
    assert_int_equal(store_begin(st, &err), RINGSIM_EMOVED);
    /* (or, seen first, the file changed under our index while away) */
    assert_true(strstr(err.msg, "-wal") || strstr(err.msg, "overwritten"));
    store_close(st);
    assert_int_equal(store_open(&st, path, &err), 0);
    assert_int_equal(store_meta_get(st, "x", &v, &err), 0);
    assert_string_equal(v, "1");
    free(v);
    store_close(st);
}

/* ---- schema 5 to 6: the keys table rebuilt clustered by coordinate ---- */

/* Moves as recorded, one line each: "key from to" ("-" for NULL). */
static int list_move(void *ud, const char *key, const char *from, const char *to)
{
    sbuf *b = ud;
    return sb_printf(b, "%s %s %s\n", key, from ? from : "-", to ? to : "-");
}

static const char *move_from(int i)
{
    static const char *const names[] = {"a", NULL, "b \"c\"", "n\xc3\xa9"};
    return names[i % 4];
}

/* The expected lines of moves lo .. hi - 1 of the op that recorded i. */
static void want_moves(sbuf *b, const char *tag, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        const char *f = move_from(i), *t = move_from(i + 1);
        assert_int_equal(sb_printf(b, "%s%d %s %s\n", tag, i, f ? f : "-", t ? t : "-"), 0);
    }
}

static void check_page(store *st, int64_t op, const char *tag, int n, int64_t off, int64_t lim)
{
    sbuf got = {0}, want = {0};
    int64_t total = -1;
    rs_error err;
    assert_int_equal(store_moves_page(st, op, off, lim, &total, list_move, &got, &err), 0);
    assert_int_equal(total, n);
    int64_t lo = off < n ? off : n, hi = lim < 0 || off + lim > n ? n : off + lim;
    want_moves(&want, tag, (int)lo, (int)(hi > lo ? hi : lo));
    assert_string_equal(got.p ? got.p : "", want.p ? want.p : "");
    free(got.p);
    free(want.p);
}

/* Schema 7: moves are kept in runs of MOVERUN_MAX.  Pages across runs,
 * two operations recording in turn in one transaction, names with quotes
 * and UTF-8, NULL (unassigned) on either side, and a rollback that drops
 * what was recorded and not yet written. */
static void test_moves_in_runs(void **state)
{
    (void)state;
    store *st;
    rs_error err;
    assert_int_equal(store_open(&st, ":memory:", &err), 0);
    assert_int_equal(store_begin(st, &err), 0);
    int64_t a, b;
    assert_int_equal(store_op_append(st, "add_node", "a", "{}", "{}", &a, &err), 0);
    assert_int_equal(store_op_append(st, "add_node", "b", "{}", "{}", &b, &err), 0);
    const int na = 2 * MOVERUN_MAX + 17, nb = 5;
    char key[32];
    for (int i = 0; i < na; i++) {
        snprintf(key, sizeof key, "x%d", i);
        assert_int_equal(
            store_move_add(st, a, key, strlen(key), move_from(i), move_from(i + 1), &err), 0);
        if (i == MOVERUN_MAX + 3) /* b records between two of a's */
            for (int j = 0; j < nb; j++) {
                snprintf(key, sizeof key, "y%d", j);
                assert_int_equal(
                    store_move_add(st, b, key, strlen(key), move_from(j), move_from(j + 1), &err), 0);
            }
    }
    /* read inside the transaction: what is pending is written first */
    check_page(st, a, "x", na, 0, -1);
    assert_int_equal(store_commit(st, &err), 0);
    check_page(st, a, "x", na, 0, -1);
    check_page(st, b, "y", nb, 0, -1);
    check_page(st, a, "x", na, MOVERUN_MAX - 2, 5); /* across the first run's end */
    check_page(st, a, "x", na, MOVERUN_MAX + 2, 3); /* across b's turn */
    check_page(st, a, "x", na, na - 3, 100);        /* the end */
    check_page(st, a, "x", na, na + 5, 10);         /* past it: nothing */
    check_page(st, a, "x", na, 7, 0);               /* no room: nothing */
    check_page(st, b, "y", nb, 2, 2);
    /* a rollback drops moves recorded and not written; a later commit of
     * another operation writes none of them */
    int64_t c;
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_op_append(st, "add_node", "c", "{}", "{}", &c, &err), 0);
    assert_int_equal(store_move_add(st, c, "z", 1, "a", "b", &err), 0);
    store_rollback(st);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_op_append(st, "add_node", "c", "{}", "{}", &c, &err), 0);
    assert_int_equal(store_commit(st, &err), 0);
    check_page(st, c, "z", 0, 0, -1);
    check_page(st, a, "x", na, 0, -1);
    store_close(st);
}

static int ignore_move(void *ud, const char *key, const char *from, const char *to)
{
    (void)key, (void)from, (void)to;
    ++*(int *)ud;
    return 0;
}

/* A damaged run is refused, never read past. */
static void test_moverun_damaged(void **state)
{
    (void)state;
    moverun r = {0};
    assert_int_equal(moverun_add(&r, "key", 3, "a", NULL), 0);
    assert_int_equal(moverun_add(&r, "k2", 2, "bb", "a"), 0);
    int calls = 0;
    int64_t seen;
    assert_int_equal(moverun_each(r.names.p, r.names.n, r.data.p, r.data.n, 2, 0, -1, ignore_move,
                                  &calls, &seen),
                     0);
    assert_int_equal(calls, 2);
    assert_int_equal(seen, 2);
    /* every shorter data blob, a count off by one either way, names cut */
    for (size_t cut = 0; cut < r.data.n; cut++)
        assert_int_equal(
            moverun_each(r.names.p, r.names.n, r.data.p, cut, 2, 0, -1, ignore_move, &calls, &seen),
            RINGSIM_ENOTDB);
    assert_int_equal(moverun_each(r.names.p, r.names.n, r.data.p, r.data.n, 1, 0, -1, ignore_move,
                                  &calls, &seen),
                     RINGSIM_ENOTDB);
    assert_int_equal(moverun_each(r.names.p, r.names.n, r.data.p, r.data.n, 3, 0, -1, ignore_move,
                                  &calls, &seen),
                     RINGSIM_ENOTDB);
    assert_int_equal(moverun_each(r.names.p, r.names.n - 1, r.data.p, r.data.n, 2, 0, -1,
                                  ignore_move, &calls, &seen),
                     RINGSIM_ENOTDB);
    /* a name index past the names: the second move's "to" */
    char bad[64];
    memcpy(bad, r.data.p, r.data.n);
    bad[r.data.n - 1] = 9;
    assert_int_equal(
        moverun_each(r.names.p, r.names.n, bad, r.data.n, 2, 0, -1, ignore_move, &calls, &seen),
        RINGSIM_ENOTDB);
    /* a varint that never ends */
    memset(bad, 0xff, sizeof bad);
    assert_int_equal(
        moverun_each(r.names.p, r.names.n, bad, sizeof bad, 1, 0, -1, ignore_move, &calls, &seen),
        RINGSIM_ENOTDB);
    moverun_free(&r);
    moverun_free(&r); /* twice: the struct is zeroed */
}

/* The schema a version-5 file has (versions 1 to 5 as they were written),
 * and its rows: keys of the seed's ring (coordinate NULL) or, with own, of
 * an algorithm with coordinates of its own. */
static void write_v5(const char *file, bool own)
{
    static const char v5[] =
        "CREATE TABLE meta(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
        "CREATE TABLE nodes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
        "  weight REAL NOT NULL, keys INTEGER NOT NULL DEFAULT 0);"
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
        "INSERT INTO meta(k, v) VALUES('unassigned', 0);"
        "ALTER TABLE keys ADD COLUMN coord INTEGER;"
        "CREATE INDEX keys_coord ON keys(coord) WHERE coord IS NOT NULL;"
        "ALTER TABLE nodes ADD COLUMN tokens TEXT;"
        "ALTER TABLE ops ADD COLUMN replica_moves INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE ops ADD COLUMN skipped INTEGER;"
        "ALTER TABLE nodes ADD COLUMN attrs TEXT;"
        "ALTER TABLE nodes ADD COLUMN seq INTEGER;"
        "ALTER TABLE ops ADD COLUMN requests_moved REAL;"
        "ALTER TABLE ops ADD COLUMN bytes_moved INTEGER;"
        "ALTER TABLE ops ADD COLUMN workload TEXT;"
        "INSERT INTO nodes(id, name, weight, keys, seq) VALUES(1, 'a', 1, 3, 1), (2, 'b', 1, 2, 2);"
        /* moves in rows, one per move (before schema 7) */
        "INSERT INTO ops(id, at, type, subject, params, config, keys_moved, moved_from) "
        "  VALUES(1, 't', 'add_node', 'b', '{}', '{}', 3, '[]');"
        "INSERT INTO moves(op, seq, key, src, dst) VALUES(1, 3, 'k3', 'a', NULL),"
        "  (1, 1, 'k1', 'a', 'b'), (1, 2, 'k2', NULL, 'b');"
        "PRAGMA application_id = 1380535879; PRAGMA user_version = 5;" /* "RING" */;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(file, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, v5, NULL, NULL, NULL), SQLITE_OK);
    /* (key, pos, node, coord): two keys share a position, one has no owner;
     * coordinates in another order than positions, one negative. */
    const char *rows = own ? "INSERT INTO keys(key, pos, node, coord) VALUES"
                             "('k1', 300, 1, 50), ('k2', 100, 2, -7), ('k3', 100, 1, 900),"
                             "('k4', 4000000000, 2, 60), ('k5', 7, NULL, 50), ('k6', 200, 1, 1)"
                           : "INSERT INTO keys(key, pos, node) VALUES"
                             "('k1', 300, 1), ('k2', 100, 2), ('k3', 100, 1),"
                             "('k4', 4000000000, 2), ('k5', 7, NULL), ('k6', 200, 1)";
    assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static int page_names(void *ud, const store_key *k)
{
    char *out = ud;
    strncat(out, k->key, k->len);
    strcat(out, " ");
    return 0;
}

static void test_migrate_5_to_6(void **state)
{
    (void)state;
    for (int own = 0; own < 2; own++) {
        unlink(path);
        write_v5(path, own);
        store *st;
        rs_error err;
        assert_int_equal(store_open(&st, path, &err), 0);
        /* the moves, in runs now, in the order of their rows */
        sbuf got = {0};
        int64_t n = 0;
        assert_int_equal(store_moves_page(st, 1, 0, -1, &n, list_move, &got, &err), 0);
        assert_int_equal(n, 3);
        assert_string_equal(got.p, "k1 a b\nk2 - b\nk3 a -\n");
        free(got.p);
        /* every key with its position, owner and coordinate */
        static const struct {
            const char *key;
            uint32_t pos;
            int64_t node, coord;
        } want[] = {{"k1", 300, 1, 50},         {"k2", 100, 2, -7}, {"k3", 100, 1, 900},
                    {"k4", 4000000000u, 2, 60}, {"k5", 7, -1, 50},  {"k6", 200, 1, 1}};
        for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
            store_key k;
            assert_int_equal(store_key_find(st, want[i].key, 2, &k, &err), 0);
            assert_int_equal(k.pos, want[i].pos);
            assert_int_equal(k.node, want[i].node);
            assert_int_equal(k.has_coord, own);
            if (own)
                assert_int_equal(k.coord, want[i].coord);
        }
        /* a listing in (position, key) order, whole and by owner */
        char names[64] = "";
        int64_t total = 0;
        store_key_query q = {0, false, NULL, 0, 0, 100, -1, STORE_ORDER_POSITION, false};
        assert_int_equal(store_keys_page(st, &q, &total, page_names, names, &err), 0);
        assert_string_equal(names, "k5 k2 k3 k6 k1 k4 ");
        assert_int_equal(total, 6);
        names[0] = 0;
        q = (store_key_query){1, true, NULL, 0, 1, 100, -1, STORE_ORDER_POSITION, true};
        assert_int_equal(store_keys_page(st, &q, &total, page_names, names, &err), 0);
        assert_string_equal(names, "k6 k3 "); /* k1 k6 k3, reversed, from offset 1 */
        assert_int_equal(total, 3);
        /* in coordinate order: only keys that have one of their own */
        names[0] = 0;
        q = (store_key_query){0, false, NULL, 0, 0, 100, -1, STORE_ORDER_COORD, false};
        assert_int_equal(store_keys_page(st, &q, &total, page_names, names, &err), 0);
        assert_string_equal(names, own ? "k2 k6 k5 k1 k4 k3 " : "");
        /* positions binned; a range of stored coordinates moves */
        int64_t counts[2];
        assert_int_equal(store_keys_density(st, false, 0, 2, counts, &err), 0);
        assert_int_equal(counts[0], 5);
        assert_int_equal(counts[1], 1);
        int64_t count, op;
        assert_int_equal(store_begin(st, &err), 0);
        assert_int_equal(store_op_append(st, "add_node", "c", "{}", "{}", &op, &err), 0);
        int64_t lo = own ? 1 : at(100), hi = own ? 50 : at(300);
        assert_int_equal(store_keys_move(st, lo, hi, 1, 2, op, "a", "b", &count, &err), 0);
        assert_int_equal(count, own ? 2 : 3); /* k6 k1, or k3 k6 k1 */
        assert_int_equal(store_commit(st, &err), 0);
        store_close(st);
        sqlite3 *db;
        sqlite3_stmt *v;
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &v, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(v), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(v, 0), STORE_SCHEMA_VERSION);
        sqlite3_finalize(v);
        sqlite3_close(db);
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_persistence),
        cmocka_unit_test(test_rollback_leaves_nothing),
        cmocka_unit_test(test_refuses_foreign_files),
        cmocka_unit_test(test_moves_and_ranges),
        cmocka_unit_test(test_moves_in_runs),
        cmocka_unit_test(test_moverun_damaged),
        cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_long_prefix_is_bounded),
        cmocka_unit_test(test_moved_file),
        cmocka_unit_test(test_migrate_5_to_6),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
