/*
 * sim_check.c - verifying a database: every key where the placement says,
 * the counters, and a full replay of the log compared with the stored state
 * (both walked in key order, in constant memory).
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- check ---- */

typedef struct checker {
    sim *s, *snap;
    int64_t problems;
    char *report;
    size_t size, used;
    int64_t *counted; /* keys seen per node index */
    int64_t unassigned;
    rs_error *err;
    uint64_t seen; /* keys checked, for polling */
} checker;

static void problem(checker *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(checker *k, const char *fmt, ...)
{
    k->problems++;
    if (!k->report || k->used + 1 >= k->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(k->report + k->used, k->size - k->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        k->used = k->used + (size_t)n < k->size ? k->used + (size_t)n : k->size - 1;
    if (k->used + 1 < k->size)
        k->report[k->used++] = '\n', k->report[k->used] = '\0';
}

static int check_placement(void *ud, const store_key *key)
{
    checker *k = ud;
    state *x = &k->s->cur;
    place_key_info ki;
    place_key(x->pl, k->s->h, key->key, key->len, &ki);
    long want = ki.served; /* stored where it is served (states applied) */
    long have = key->node == STORE_NO_NODE ? -1 : sim__find_node_id(x, key->node);
    if (ki.position != key->pos)
        problem(k, "key \"%.*s\": stored position %u, SHA-256 says %u", (int)key->len, key->key,
                key->pos, ki.position);
    bool col = ki.has_coord && place_column(x->pl) == PLACE_COL_COORD;
    if (col != key->has_coord || (col && sim__coord_stored(ki.coord) != key->coord))
        problem(k, "key \"%.*s\": stored coordinate differs from the placement's", (int)key->len,
                key->key);
    if (key->node != STORE_NO_NODE && have < 0)
        problem(k, "key \"%.*s\": owner id %lld is not a node", (int)key->len, key->key,
                (long long)key->node);
    else if (want != have)
        problem(k, "key \"%.*s\": stored on %s, the ring says %s", (int)key->len, key->key,
                have < 0 ? "(none)" : x->nodes[have].name, want < 0 ? "(none)" : x->nodes[want].name);
    if (have >= 0)
        k->counted[have]++;
    else if (key->node == STORE_NO_NODE)
        k->unassigned++;
    return ++k->seen % PROGRESS_EVERY == 0 ? sim__poll(k->s, k->err) : 0;
}

static int check_gone(void *ud, const store_key *k)
{
    problem(ud, "key \"%.*s\" is stored but the log does not insert it", (int)k->len, k->key);
    return 0;
}

static int check_fresh(void *ud, const store_key *k)
{
    problem(ud, "key \"%.*s\" is in the log but not stored", (int)k->len, k->key);
    return 0;
}

static int check_both(void *ud, const store_key *live, const store_key *want)
{
    checker *k = ud;
    long a = live->node == STORE_NO_NODE ? -1 : sim__find_node_id(&k->s->cur, live->node);
    long b = want->node == STORE_NO_NODE ? -1 : sim__find_node_id(&k->snap->cur, want->node);
    const char *an = a < 0 ? "" : k->s->cur.nodes[a].name;
    const char *bn = b < 0 ? "" : k->snap->cur.nodes[b].name;
    if ((a < 0) != (b < 0) || strcmp(an, bn) != 0)
        problem(k, "key \"%.*s\": stored on %s, replaying the log puts it on %s", (int)live->len,
                live->key, a < 0 ? "(none)" : an, b < 0 ? "(none)" : bn);
    return 0;
}

int sim_check(sim *s, int64_t *problems, char *report, size_t report_size, rs_error *err)
{
    *problems = 0;
    if (report && report_size)
        report[0] = '\0';
    checker k = {s, NULL, 0, report, report_size, 0, NULL, 0, err, 0};
    s->p_what = NULL;
    /* The state in memory and the keys and log read here are one snapshot:
     * refreshed after the read begins, a commit of another process cannot
     * land between them and pass for a problem. */
    int rc = store_begin_read(s->st, err);
    if (rc)
        return rc;
    if ((rc = sim_refresh(s, NULL, err))) {
        store_end_read(s->st);
        return rc;
    }
    k.counted = calloc(s->cur.n + 1, sizeof *k.counted);
    if (!k.counted) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto out;
    }
    /* 1. Every key where the ring says, counters equal to the counts. */
    if ((rc = sim__progress(s, "check", 0, 3, err)) ||
        (rc = store_keys_each(s->st, STORE_EACH_POSITION, check_placement, &k, err)))
        goto out;
    for (size_t i = 0; i < s->cur.n; i++)
        if (k.counted[i] != s->cur.nodes[i].keys)
            problem(&k, "node \"%s\": counter says %lld keys, %lld are stored",
                    s->cur.nodes[i].name, (long long)s->cur.nodes[i].keys, (long long)k.counted[i]);
    if (k.unassigned != s->cur.unassigned)
        problem(&k, "unassigned keys: counter says %lld, %lld are stored",
                (long long)s->cur.unassigned, (long long)k.unassigned);
    /* 2. Replaying the whole log gives the same configuration, nodes, keys. */
    int64_t last;
    if ((rc = sim__progress(s, "check", 1, 3, err)) || (rc = store_last_op(s->st, &last, err)) ||
        (rc = sim_at(s, last, &k.snap, err)) || (rc = sim__progress(s, "check", 2, 3, err)))
        goto out;
    state *x = &s->cur, *y = &k.snap->cur;
    if (!place_config_equal(&x->cfg, &y->cfg)) {
        char *a = place_config_describe(&x->cfg), *b = place_config_describe(&y->cfg);
        problem(&k, "configuration: stored %s, the log gives %s", a ? a : "?", b ? b : "?");
        free(a);
        free(b);
    }
    char *la = place_state_text(x->pl), *lb = place_state_text(y->pl);
    if ((la || lb) && (!la || !lb || strcmp(la, lb) != 0))
        problem(&k, "the %s layout state differs from the one the log gives", x->cfg.algorithm);
    free(la);
    free(lb);
    for (size_t i = 0; i < x->n; i++) {
        long j = sim__find_node(y, x->nodes[i].name, x->nodes[i].len);
        if (j < 0)
            problem(&k, "node \"%s\" is stored but the log does not create it", x->nodes[i].name);
        else if (x->nodes[i].weight != y->nodes[j].weight)
            problem(&k, "node \"%s\": weight %g stored, %g in the log", x->nodes[i].name,
                    x->nodes[i].weight, y->nodes[j].weight);
        else if (!sim__states_equal(&x->nodes[i], &y->nodes[j]))
            problem(&k, "node \"%s\": state %s stored, %s in the log", x->nodes[i].name,
                    x->nodes[i].down ? "down" : "up", y->nodes[j].down ? "down" : "up");
    }
    for (size_t j = 0; j < y->n; j++)
        if (sim__find_node(x, y->nodes[j].name, y->nodes[j].len) < 0)
            problem(&k, "node \"%s\" is in the log but not stored", y->nodes[j].name);
    diff d = {check_gone, check_fresh, check_both, &k};
    if ((rc = sim__diff_run(s, s->st, k.snap->st, &d, err)))
        goto out;
    sim__progress(s, "check", 3, 3, NULL); /* done: too late to cancel */
out:
    store_end_read(s->st);
    *problems = k.problems;
    free(k.counted);
    sim_close(k.snap);
    return rc;
}
