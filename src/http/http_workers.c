/*
 * http_workers.c - the two workers of `ringsim serve`: the operations worker
 * runs operations in order, the reading worker the long reads (time travel,
 * compare, theory, export), each on its own connection with a bounded
 * queue; answers come back to the loop through event_active(), and a read
 * whose client left is dropped or cancelled.
 */
#define _GNU_SOURCE
#include "http_int.h"

/* ---- the workers ---- */

/* Progress of a long operation or replay; nonzero asks the engine to
 * cancel it (it then fails with RINGSIM_ECANCELED, rolled back whole).  The
 * engine also calls it between counted steps to ask whether to go on:
 * cheap. */
int http__worker_progress(void *ud, const char *what, uint64_t done, uint64_t total)
{
    worker *w = ud;
    server *sv = w->sv;
    uint64_t cancel = atomic_load(&w->cancel);
    if (cancel == UINT64_MAX || (cancel && cancel == atomic_load(&w->running)))
        return 1;
    /* At most ten progress events a second, and the last one once.  p_last
     * is the worker's own; the rest is read by the loop under mu. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double dt = (double)(now.tv_sec - w->p_last.tv_sec) +
                (double)(now.tv_nsec - w->p_last.tv_nsec) / 1e9;
    pthread_mutex_lock(&sv->mu);
    bool last = done >= total && !(w->p_done == done && w->p_total == total &&
                                   strncmp(w->p_what, what, sizeof w->p_what - 1) == 0);
    if (dt >= 0.1 || last) {
        snprintf(w->p_what, sizeof w->p_what, "%s", what);
        w->p_done = done;
        w->p_total = total;
        w->p_dirty = true;
    }
    pthread_mutex_unlock(&sv->mu);
    if (dt < 0.1 && !last)
        return 0;
    w->p_last = now;
    event_active(sv->progress_ev, EV_READ, 0);
    return 0;
}

/* A success's JSON is written out here, on the worker, as the text
 * http__answer_json would send (compact, then a newline): an import's
 * answer of 10,000 nodes is megabytes, and json_dumps on the loop held
 * the files back for seconds (issue 26).  Other statuses, whose headers
 * vary, stay JSON; so does an answer that cannot be written (the loop
 * answers 500 as before). */
static void dump_answer(api_answer *a)
{
    if (!a->body || a->text || a->file || a->status < 200 || a->status > 299)
        return;
    char *t = json_dumps(a->body, JSON_COMPACT);
    size_t n = t ? strlen(t) : 0;
    char *nl = t ? realloc(t, n + 2) : NULL;
    if (!nl) {
        free(t);
        return;
    }
    nl[n] = '\n';
    nl[n + 1] = '\0';
    a->text = nl;
    a->text_len = n + 1;
    a->content_type = "application/json; charset=utf-8";
    json_decref(a->body);
    a->body = NULL;
}

void *http__worker_main(void *arg)
{
    worker *w = arg;
    server *sv = w->sv;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while (!w->queue && !sv->stop && !w->checkpoint_due)
            pthread_cond_wait(&w->cv, &sv->mu);
        if (sv->stop)
            break;
        if (!w->queue) { /* idle: a checkpoint, if enough has happened */
            w->checkpoint_due = false;
            pthread_mutex_unlock(&sv->mu);
            rs_error err = {0, ""};
            if (sim_refresh(w->sim, NULL, &err) == 0)
                sim_history_checkpoint(w->sim, &w->cache.h, &err); /* only an aid */
            pthread_mutex_lock(&sv->mu);
            continue;
        }
        job *j = w->queue;
        w->queue = j->next;
        if (!w->queue)
            w->queue_tail = &w->queue;
        w->queued--;
        atomic_store(&w->running, j->seq);
        pthread_mutex_unlock(&sv->mu);
        /* The body is parsed here, never on the loop; one at a time per
         * worker, freed with the request. */
        rs_error err = {0, ""};
        int rc = j->blen ? http_attach_body(&j->r, j->body, j->blen, &err) : 0;
        if (rc) {
            j->a.status = ringsim_status(rc);
            j->a.body = api_error_body(rc, err.msg);
        } else {
            api_respond(w->sim, &w->cache, &j->r, &j->a);
            dump_answer(&j->a);
        }
        pthread_mutex_lock(&sv->mu);
        atomic_store(&w->running, 0);
        j->next = sv->done;
        sv->done = j;
        event_active(sv->done_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

void http__job_free(job *j)
{
    api_answer_clear(&j->a);
    api_request_clear(&j->r);
    j->sv->body_bytes -= j->bcap;
    j->sv->trim_due |= j->bcap > TRIM_OVER;
    free(j->body);
    free(j);
}

/* A connection closes while its request waits or runs.  A read nobody
 * waits for is dropped from the queue, or stopped where the engine asks
 * (time travel, replays); an operation goes on, since its client cannot
 * know whether it was made. */
void http__abandon(conn *c)
{
    server *sv = c->sv;
    job *j = c->job;
    worker *w = &sv->w[W_READ];
    bool dropped = false;
    pthread_mutex_lock(&sv->mu);
    for (job **p = &w->queue; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            if (w->queue_tail == &j->next)
                w->queue_tail = p;
            w->queued--;
            dropped = true;
            break;
        }
    if (!dropped && atomic_load(&w->running) == j->seq)
        atomic_store(&w->cancel, j->seq);
    pthread_mutex_unlock(&sv->mu);
    if (dropped) {
        c->job = NULL;
        http__job_free(j);
    }
}

/* A job is over: answer its connection (unless it closed meanwhile). */
void http__job_answer(job *j, int code, const char *msg)
{
    conn *c = j->c;
    c->job = NULL;
    if (!c->bev) {
        free(c);
    } else if (code) {
        http__answer_error(c, code, msg);
        http__finish(c);
    } else {
        http__answer(c, &j->a);
        http__finish(c);
    }
    http__job_free(j);
}

/* Answer the operations that are done, once the loop's state holds them
 * (the operation event goes out before its answer). */
void http__answer_held(server *sv)
{
    http__broadcast_new(sv);
    if (sv->refreshing)
        return; /* on_refreshed comes back here */
    job *list = sv->held;
    sv->held = NULL;
    sv->held_tail = &sv->held;
    while (list) {
        job *j = list;
        list = j->next;
        http__job_answer(j, 0, NULL);
    }
    http__maybe_stopped(sv);
}

void http__on_done(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    pthread_mutex_lock(&sv->mu);
    job *list = sv->done;
    sv->done = NULL;
    pthread_mutex_unlock(&sv->mu);
    job *rev = NULL; /* reverse: answer in completion order */
    while (list) {
        job *n = list->next;
        list->next = rev;
        rev = list;
        list = n;
    }
    /* Held behind any answer still waiting for the refresher: in order. */
    while (rev) {
        job *j = rev;
        rev = j->next;
        j->next = NULL;
        *sv->held_tail = j;
        sv->held_tail = &j->next;
    }
    http__answer_held(sv);
    /* A parsed 16 MiB body or a long report leaves hundreds of MB free in
     * the heap; glibc keeps them unless asked (a millisecond or two). */
    if (sv->trim_due) {
        sv->trim_due = false;
        malloc_trim(0);
    }
    http__maybe_stopped(sv);
}

void http__enqueue(conn *c, worker *w, api_request *r)
{
    server *sv = c->sv;
    pthread_mutex_lock(&sv->mu);
    int queued = w->queued;
    pthread_mutex_unlock(&sv->mu);
    if (queued >= QUEUE_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "%d requests are waiting for the %s already; try again", queued,
                 w == &sv->w[W_OPS] ? "operations worker" : "reading worker");
        http__body_free(c);
        http__answer_error(c, RINGSIM_EUNAVAILABLE, msg);
        http__finish(c);
        return;
    }
    job *j = calloc(1, sizeof *j);
    if (!j) {
        http__body_free(c);
        http__answer_error(c, RINGSIM_ENOMEM, "out of memory");
        http__finish(c);
        return;
    }
    j->c = c;
    j->sv = sv;
    j->read = w == &sv->w[W_READ];
    j->r = *r;
    memset(r, 0, sizeof *r);
    /* The raw body goes with the job (still counted against the budget). */
    j->body = c->body;
    j->blen = c->blen;
    j->bcap = c->bcap;
    c->body = NULL;
    c->blen = c->bcap = 0;
    c->job = j;
    c->state = C_BUSY;
    pthread_mutex_lock(&sv->mu);
    j->seq = ++sv->seq;
    *w->queue_tail = j;
    w->queue_tail = &j->next;
    w->queued++;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&sv->mu);
}

/* POST /api/cancel: ask the running operation to stop.  Its own request
 * then answers (503 cancelled, when the engine stopped it).  Reads are not
 * operations: they run on. */
void http__cancel_running(conn *c)
{
    server *sv = c->sv;
    worker *w = &sv->w[W_OPS];
    uint64_t r = atomic_load(&w->running); /* only the loop writes cancel */
    if (r && atomic_load(&w->cancel) != UINT64_MAX)
        atomic_store(&w->cancel, r);
    json_t *b = json_pack("{s:b}", "cancelled", r != 0);
    http__answer_json(c, 200, b);
    json_decref(b);
    http__finish(c);
}
