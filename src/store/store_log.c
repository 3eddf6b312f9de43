/*
 * store_log.c - the operation log of the store: each operation with its
 * parameters and the configuration after it (ops), the keys of explicit
 * inserts and deletes (op_keys), and the moves each recorded, read back in
 * pages from their packed runs (move_runs, moverun.h; the run being
 * filled is the transaction's, store.c).
 *
 * Costs: appending or reading one operation O(log ops); a page of moves
 * reads only the runs that hold it (a run holds at most MOVERUN_MAX).
 */
#define _GNU_SOURCE
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

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
    sqlite3_stmt *s = store__stmt(st, Q_OP_INS);
    if (s) {
        sqlite3_bind_text(s, 1, at, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, type, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, subject, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, params, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 5, config, -1, SQLITE_STATIC);
    }
    int rc = store__run(st, s, err, "recording the operation");
    *id = rc ? 0 : sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_op_finish(store *st, int64_t id, int64_t keys_moved, const char *moved_from,
                    const char *config, int64_t replica_moves, int64_t skipped, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OP_FIN);
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
    return store__run(st, s, err, "recording the operation");
}

int store_op_add_key(store *st, int64_t op, int64_t seq, const char *key, size_t len, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OP_KEY);
    if (s) {
        sqlite3_bind_int64(s, 1, op);
        sqlite3_bind_int64(s, 2, seq);
        sqlite3_bind_text(s, 3, key, (int)len, SQLITE_STATIC);
    }
    return store__run(st, s, err, "recording the operation's keys");
}

static int read_op(sqlite3_stmt *s, store_op *o)
{
    memset(o, 0, sizeof *o);
    o->id = sqlite3_column_int64(s, 0);
    const char *at = (const char *)sqlite3_column_text(s, 1);
    snprintf(o->at, sizeof o->at, "%s", at ? at : "");
    o->type = store__dup_text(s, 2);
    o->subject = store__dup_text(s, 3);
    o->params = store__dup_text(s, 4);
    o->config = store__dup_text(s, 5);
    o->keys_moved = sqlite3_column_int64(s, 6);
    o->replica_moves = sqlite3_column_int64(s, 8);
    o->skipped = sqlite3_column_type(s, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 9);
    o->moved_from = store__dup_text(s, 7);
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
    sqlite3_stmt *s = store__stmt(st, Q_OP_GET);
    if (!s)
        return store__dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        rc = read_op(s, out) ? rs_fail(err, RINGSIM_ENOMEM, "out of memory") : 0;
    else if (rc == SQLITE_DONE)
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found", (long long)id);
    else
        rc = store__dberr(st, err, "reading the log");
    sqlite3_reset(s);
    return rc;
}

int store_ops_each(store *st, int64_t after, int64_t limit, store_op_fn fn, void *ud, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OPS);
    if (!s)
        return store__dberr(st, err, "reading the log");
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
    int r = rc == SQLITE_DONE ? 0 : store__dberr(st, err, "reading the log");
    sqlite3_reset(s);
    return r;
}

int store_op_base(store *st, int64_t upto, int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OP_BASE);
    if (s)
        sqlite3_bind_int64(s, 1, upto);
    return store__one_int(st, s, out, err, "reading the log");
}

int store_ops_work(store *st, int64_t from, int64_t to, int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OPS_WORK);
    if (s) {
        sqlite3_bind_int64(s, 1, from);
        sqlite3_bind_int64(s, 2, to);
    }
    return store__one_int(st, s, out, err, "reading the log");
}

int store_ops_topology(store *st, int64_t from, int64_t to, int64_t *count, int64_t *runs,
                       int64_t *first, rs_error *err)
{
    *count = *runs = *first = 0;
    sqlite3_stmt *s = store__stmt(st, Q_OPS_TOPO);
    if (!s)
        return store__dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, from);
    sqlite3_bind_int64(s, 2, to);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *count = sqlite3_column_int64(s, 0);
        *runs = sqlite3_column_int64(s, 1);
        *first = sqlite3_column_int64(s, 2);
    }
    rc = rc == SQLITE_ROW ? 0 : store__dberr(st, err, "reading the log");
    sqlite3_reset(s);
    return rc;
}

int store_ops_node_builds(store *st, int64_t from, int64_t to, int64_t start, int64_t cap,
                          int64_t *out, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OPS_NODE_BUILDS);
    if (s) {
        sqlite3_bind_int64(s, 1, from);
        sqlite3_bind_int64(s, 2, to);
        sqlite3_bind_int64(s, 3, cap);
        sqlite3_bind_int64(s, 4, start);
    }
    return store__one_int(st, s, out, err, "reading the log");
}

int store_move_add(store *st, int64_t op, const char *key, size_t len, const char *from_name,
                   const char *to_name, rs_error *err)
{
    return store__run_record(st, op, key, len, from_name, to_name, err);
}

int store_last_op(store *st, int64_t *out, rs_error *err)
{
    return store__one_int(st, store__stmt(st, Q_OP_LAST), out, err, "reading the log");
}

int store_op_keys_each(store *st, int64_t op, store_str_fn fn, void *ud, rs_error *err)
{
    /* Not the cached statement: replay may nest this inside other reads. */
    sqlite3_stmt *s = store__prepare(st, Q_OP_KEYS);
    if (!s)
        return store__dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, op);
    int rc, r = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        r = fn(ud, (const char *)sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
        if (r)
            break;
    }
    if (!r && rc != SQLITE_DONE)
        r = store__dberr(st, err, "reading the log");
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
    int rc = store__run_flush(st, err);
    if (rc)
        return rc;
    sqlite3_stmt *s = store__stmt(st, Q_MOVES_COUNT);
    if (!s)
        return store__dberr(st, err, "reading moves");
    sqlite3_bind_int64(s, 1, op);
    if ((rc = store__one_int(st, s, total, err, "reading moves")))
        return rc;
    if (offset < 0)
        offset = 0;
    if (!(s = store__stmt(st, Q_MOVES)))
        return store__dberr(st, err, "reading moves");
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
        r = store__dberr(st, err, "reading moves");
    sqlite3_reset(s);
    return r;
}

int store_op_set_loads(store *st, int64_t id, double requests_moved, int64_t bytes_moved,
                       const char *workload, rs_error *err)
{
    sqlite3_stmt *s = store__stmt(st, Q_OP_LOADS);
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_double(s, 2, requests_moved);
        sqlite3_bind_int64(s, 3, bytes_moved);
        if (workload)
            sqlite3_bind_text(s, 4, workload, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, 4);
    }
    return store__run(st, s, err, "recording the operation");
}

int store_op_workload(store *st, int64_t id, char **out, rs_error *err)
{
    *out = NULL;
    sqlite3_stmt *s = store__stmt(st, Q_OP_WORKLOAD);
    if (!s)
        return store__dberr(st, err, "reading the log");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        rc = 0;
        if (sqlite3_column_type(s, 0) != SQLITE_NULL && !(*out = store__dup_text(s, 0)))
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    } else if (rc == SQLITE_DONE) {
        rc = 0;
    } else {
        rc = store__dberr(st, err, "reading the log");
    }
    sqlite3_reset(s);
    return rc;
}
