/*
 * http_sse.c - the event stream of `ringsim serve`: committed operations
 * noticed by polling PRAGMA data_version and broadcast in id order, a
 * stream resuming from Last-Event-ID sent a page at a time, keep-alives,
 * progress events, and the refresher thread that builds a changed topology
 * into the spare engine so that the loop never builds a layout.
 */
#define _GNU_SOURCE
#include "http_int.h"

/* ---- SSE ---- */

static void send_chunk(conn *c, const char *text, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (c->lagging || evbuffer_get_length(out) > SSE_MAX_OUTPUT) {
        c->lagging = true; /* closed by sse_prune; it reconnects with Last-Event-ID */
        return;
    }
    if (c->chunked_out)
        evbuffer_add_printf(out, "%zx\r\n", len);
    evbuffer_add(out, text, len);
    if (c->chunked_out)
        evbuffer_add(out, "\r\n", 2);
}

static void sse_prune(server *sv)
{
    for (conn *c = sv->conns, *n; c; c = n) {
        n = c->next;
        if (c->state == C_EVENTS && c->lagging)
            http__conn_close(c);
    }
}

#define SSE_PAUSE 1 /* send_op: this page is full */

typedef struct sse_send {
    conn *only; /* NULL = every stream */
    server *sv;
    int64_t sent; /* last operation id that went out */
} sse_send;

static int send_op(void *ud, const sim_op *op)
{
    sse_send *s = ud;
    json_t *j = view_operation_in(s->sv->loop_sim, op);
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!t)
        return RINGSIM_ENOMEM; /* stop here: this one is tried again */
    char *msg;
    int n = asprintf(&msg, "id: %lld\nevent: operation\ndata: %s\n\n", (long long)op->id, t);
    free(t);
    if (n < 0)
        return RINGSIM_ENOMEM;
    for (conn *c = s->only ? s->only : s->sv->conns; c; c = s->only ? NULL : c->next)
        if (c->state == C_EVENTS && c->last < op->id && (s->only || !c->catching_up)) {
            send_chunk(c, msg, (size_t)n);
            c->last = op->id;
        }
    free(msg);
    s->sent = op->id;
    /* A resuming stream takes a page at a time: the rest when it is out. */
    if (s->only && evbuffer_get_length(bufferevent_get_output(s->only->bev)) >= SSE_PAGE_BYTES)
        return SSE_PAUSE;
    return 0;
}

/* The next page of a resuming stream, read from the log's index (ids after
 * the last one sent): a bounded piece of work on the loop however far
 * behind the stream is.  Caught up, it takes the broadcasts again. */
void http__sse_resume(conn *c)
{
    server *sv = c->sv;
    rs_error err = {0, ""};
    sse_send s = {c, sv, c->last};
    int rc = c->last < sv->broadcast
                 ? sim_log_each(sv->loop_sim, c->last, sv->broadcast - c->last, send_op, &s, &err)
                 : 0;
    if (rc && rc != SSE_PAUSE)
        c->lagging = true; /* end the stream; the browser resumes from what it got */
    else if (c->last >= sv->broadcast)
        c->catching_up = false;
}

/* Broadcast every operation committed since the last broadcast.  Only what
 * went out counts as broadcast: an operation that could not be read (a
 * busy or failing database, no memory) is tried again at the next poll. */
/* Bring the loop's state up to date where that is cheap; a topology change
 * goes to the refresher.  True when the state is current. */
static bool loop_refresh(server *sv, int *rc, rs_error *err)
{
    bool heavy = false;
    *rc = sv->refreshing ? 0 : sim_refresh_light(sv->loop_sim, &heavy, err);
    if (heavy && !sv->refreshing) {
        sv->refreshing = true;
        pthread_mutex_lock(&sv->mu);
        sv->refresh_due = true;
        pthread_cond_signal(&sv->refresh_cv);
        pthread_mutex_unlock(&sv->mu);
    }
    return !*rc && !sv->refreshing;
}

void *http__refresher_main(void *arg)
{
    server *sv = arg;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while (!sv->refresh_due && !sv->stop)
            pthread_cond_wait(&sv->refresh_cv, &sv->mu);
        if (sv->stop)
            break;
        sv->refresh_due = false;
        pthread_mutex_unlock(&sv->mu);
        rs_error err = {0, ""};
        if (sim_refresh(sv->spare_sim, NULL, &err)) /* the loop tries again */
            fprintf(stderr, "ringsim: cannot read the new layout (%s); trying again\n",
                    err.msg[0] ? err.msg : "error");
        /* A workload's cache (a second at a million keys) is built here too,
         * never on the loop: sim_refresh_light sends it this way. */
        else if (sim_workload_warm(sv->spare_sim, &err))
            fprintf(stderr, "ringsim: cannot build the workload's figures (%s)\n",
                    err.msg[0] ? err.msg : "error");
        pthread_mutex_lock(&sv->mu);
        sv->refresh_done = true;
        event_active(sv->refresh_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

/* The refresher is done: its engine becomes the loop's, the loop's the
 * spare (caught up next time), and what waited for it goes out. */
void http__on_refreshed(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    pthread_mutex_lock(&sv->mu);
    bool done = sv->refresh_done;
    sv->refresh_done = false;
    pthread_mutex_unlock(&sv->mu);
    if (!done)
        return;
    sim *t = sv->loop_sim;
    sv->loop_sim = sv->spare_sim;
    sv->spare_sim = t;
    sv->refreshing = false;
    http__answer_held(sv);
}

void http__broadcast_new(server *sv)
{
    rs_error err = {0, ""};
    int rc;
    if (!loop_refresh(sv, &rc, &err) && !rc)
        return; /* on_refreshed broadcasts once the new layout is in */
    int64_t last = rc ? sv->broadcast : sim_last_op(sv->loop_sim);
    if (!rc && last > sv->broadcast) {
        sse_send s = {NULL, sv, sv->broadcast};
        rc = sim_log_each(sv->loop_sim, sv->broadcast, last - sv->broadcast, send_op, &s, &err);
        sv->broadcast = s.sent;
        /* The reading worker keeps checkpoints of the past when it is idle. */
        pthread_mutex_lock(&sv->mu);
        sv->w[W_READ].checkpoint_due = true;
        pthread_cond_signal(&sv->w[W_READ].cv);
        pthread_mutex_unlock(&sv->mu);
    }
    if (rc && !sv->read_logged)
        fprintf(stderr, "ringsim: cannot read new operations (%s); trying again\n",
                err.msg[0] ? err.msg : ringsim_strerror(rc));
    sv->read_logged = rc != 0;
    sse_prune(sv);
}

void http__events_start(conn *c)
{
    server *sv = c->sv;
    if (sv->nevents >= sv->lim.max_events) {
        char msg[96];
        snprintf(msg, sizeof msg, "the server has %d event streams, its limit; try again",
                 sv->lim.max_events);
        http__answer_error(c, RINGSIM_EUNAVAILABLE, msg);
        http__finish(c);
        return;
    }
    const char *framing = c->h.minor == 1 ? "Transfer-Encoding: chunked\r\n" : "";
    char extra[160];
    snprintf(extra, sizeof extra, "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\n%s", framing);
    if (http__is_head(c)) { /* the headers of the stream, no stream */
        http__start_answer(c, 200, "text/event-stream; charset=utf-8", extra, 0, false);
        http__finish(c);
        return;
    }
    /* ?reload_after=N (the page's): more than N operations behind, an
     * `event: reload` instead of them.  Without it (API.md), every missed
     * operation, a page at a time. */
    uint64_t reload_after = UINT64_MAX;
    const api_request *ar = &c->req.api;
    for (int i = 0; i < ar->nparams; i++)
        if (!strcmp(ar->params[i].name, "reload_after") &&
            api_parse_u64(ar->params[i].value, ar->params[i].len, INT64_MAX, &reload_after)) {
            http__answer_error(c, RINGSIM_EPARAM,
                               "reload_after must be a whole number of operations");
            http__finish(c);
            return;
        }
    http__broadcast_new(sv); /* so that "from now on" starts after everything sent */
    c->keep = false;         /* a stream ends with its connection */
    http__start_answer(c, 200, "text/event-stream; charset=utf-8", extra, 0, false);
    c->state = C_EVENTS;
    c->chunked_out = c->h.minor == 1;
    sv->nevents++;
    evtimer_del(c->timer);
    c->last = sv->broadcast;
    uint64_t v;
    const char *lei = c->h.last_event_id;
    if (lei && !api_parse_u64(lei, strlen(lei), INT64_MAX, &v) && (int64_t)v < c->last)
        c->last = (int64_t)v;
    send_chunk(c, "retry: 1000\n\n", 13);
    if ((uint64_t)(sv->broadcast - c->last) > reload_after) {
        /* Too far behind to catch up event by event: the client reloads
         * its state instead, and the stream goes on from now. */
        char msg[160];
        int n = snprintf(msg, sizeof msg,
                         "id: %lld\nevent: reload\ndata: {\"last\":%lld,\"missed\":%lld}\n\n",
                         (long long)sv->broadcast, (long long)sv->broadcast,
                         (long long)(sv->broadcast - c->last));
        send_chunk(c, msg, (size_t)n);
        c->last = sv->broadcast;
    } else if (c->last < sv->broadcast) { /* resume: everything after Last-Event-ID */
        c->catching_up = true;
        http__sse_resume(c);
    }
    sse_prune(sv);
}

void http__on_keepalive(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    for (conn *c = sv->conns; c; c = c->next)
        if (c->state == C_EVENTS)
            send_chunk(c, ": keepalive\n\n", 13);
    sse_prune(sv);
}

void http__on_poll(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    http__broadcast_new(arg);
}

void http__on_progress(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    for (int i = 0; i < W_COUNT; i++) {
        worker *w = &sv->w[i];
        pthread_mutex_lock(&sv->mu);
        json_t *j = w->p_dirty ? json_pack("{s:s, s:I, s:I}", "type", w->p_what, "done",
                                           (json_int_t)w->p_done, "total", (json_int_t)w->p_total)
                               : NULL;
        w->p_dirty = false;
        pthread_mutex_unlock(&sv->mu);
        char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
        json_decref(j);
        char *msg;
        int n = t ? asprintf(&msg, "event: progress\ndata: %s\n\n", t) : -1;
        free(t);
        if (n < 0)
            continue;
        for (conn *c = sv->conns; c; c = c->next)
            if (c->state == C_EVENTS)
                send_chunk(c, msg, (size_t)n);
        free(msg);
    }
    sse_prune(sv);
}
