/*
 * http.c - `ringsim serve`: HTTP/1.1 on libevent bufferevents, one event
 * loop and two worker threads.
 *
 * Reads (the fast API answers, static files, the SSE stream) run on the
 * loop.  Operations run in order on the operations worker, with its own
 * database connection, so that generating a million keys neither blocks
 * the page nor the other readers (SQLite's WAL lets the loop keep reading
 * the last committed state meanwhile).  Long reads -- time travel, compare,
 * theory, the scenario export -- run in order on the reading worker, with a
 * third connection and the cached view of the past: a replay of a long log
 * never holds up an operation, nor an operation a look at the past.  The
 * workers hand results back through event_active(); progress of long
 * operations and replays goes out as SSE `progress` events.
 *
 * Committed operations -- the worker's and those of other processes on the
 * same file (the CLI) -- are noticed with PRAGMA data_version, polled every
 * 200 ms, and broadcast as SSE `operation` events in id order; an operation
 * that cannot be read is not skipped but tried again at the next poll.  The
 * loop never builds a layout: a change of keys only refreshes its counters
 * (milliseconds), and a change of topology is built by a refresher thread
 * into a spare engine that is then swapped in (a million points: 0.4 s the
 * loop no longer waits); the answers of operations wait for the swap, so
 * that a client's next read sees its change.
 *
 * Bodies: everything the head decides (Host, Origin, the token, the route,
 * whether it takes a body) is decided before the body is read; a body is
 * kept raw (within the 128 MiB budget) and parsed as JSON on the worker
 * that answers it.  Each worker's queue holds at most QUEUE_MAX requests;
 * a read whose client leaves is dropped or cancelled.  A stream resuming
 * from Last-Event-ID is sent a page at a time from the log's index, or
 * told to reload when too far behind.
 *
 * Why not evhttp: libevent 2.1 reads a whole request before its callback
 * runs and answers its own refusals with HTML, so it can neither give a
 * slow sender a deadline for its head nor answer 413 or 431 with the API's
 * JSON.  Here the transport only moves bytes; what a request is, and
 * whether it may pass, is decided by http_parse.c (which is fuzzed).
 *
 * Every resource has a limit: connections (refused with 503 past the cap,
 * SSE streams capped apart), the head (32 KiB, 431), the body (16 MiB, 413
 * as soon as it is known to be larger, read into one buffer that is freed
 * -- and returned to the system -- when the request ends; all unfinished
 * bodies together at most 128 MiB), time (a head must arrive within the
 * header timeout, a body within the body timeout, an idle keep-alive
 * connection is closed, an answer that is not read is dropped), and the
 * output a slow SSE reader may hold.  accept() failing for want of file
 * descriptors pauses the listener instead of spinning.
 *
 * Safety: Host (or Origin) naming another site gets 403 (DNS rebinding);
 * with an access token -- always beyond loopback, where one is made when
 * none is given -- every /api/ request needs it (401), while the page's own
 * files, the same for everyone, are served without (as Jupyter serves its
 * /static/), so that the page can load and ask for it;
 * mutations must be labelled JSON; static files cannot leave the web folder;
 * every answer carries a strict CSP and no CORS headers.
 *
 * Stop: SIGINT or SIGTERM stops accepting, cancels the running operation
 * (the engine rolls it back), answers it and whatever else is in flight,
 * then exits; a second signal exits at once.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <limits.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "http_parse.h"
#include "view.h"
#include "web_assets.h"

#define POLL_MS 200
#define KEEPALIVE_S 15
#define WRITE_TIMEOUT_S 30           /* an answer nobody reads */
#define LINGER_MS 2000               /* reading what a refused client still sends */
#define SSE_MAX_OUTPUT (1u << 20)    /* unsent events a slow reader may hold */
#define READ_HIGH_WATER (256u << 10) /* input held while an answer is made */
#define REFUSING_MAX 64              /* connections being refused at once */
#define BODY_BUDGET (128u << 20)     /* all unfinished bodies together */
#define FILE_MAX (64u << 20)         /* a file served from --web */
#define BACKOFF_MS 100               /* listener pause when accept() fails */
#define TRIM_OVER (1u << 20)         /* a body or answer past this: malloc_trim after */
#define QUEUE_MAX 64                 /* requests waiting for one worker: 503 beyond */
#define SSE_RESUME_MAX 1000          /* operations a resuming stream is sent; beyond: reload */
#define SSE_PAGE_BYTES (256u << 10)  /* a resuming stream's output per turn of the loop */

static const char security_headers[] =
    "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "X-Frame-Options: DENY\r\n";

typedef struct server server;
typedef struct job job;

typedef enum {
    C_HEAD,   /* waiting for a request head (idle when nothing has come) */
    C_BODY,   /* reading a body */
    C_BUSY,   /* the worker makes the answer; input waits */
    C_EVENTS, /* an SSE stream */
    C_CLOSE,  /* writing a last answer, then linger */
    C_LINGER, /* write side shut; reading until EOF or LINGER_MS */
} conn_state;

typedef struct conn {
    struct conn *prev, *next;
    server *sv;
    struct bufferevent *bev; /* NULL once closed (the struct waits for its job) */
    struct event *timer;
    conn_state state;
    bool refused;     /* over the cap: counted in nrefusing, not nconns */
    bool started;     /* a byte of the current head has come */
    bool keep;        /* keep the connection after this answer */
    bool lagging;     /* SSE output over SSE_MAX_OUTPUT: to be closed */
    bool chunked_out; /* the SSE stream is chunked (HTTP/1.1) */
    bool catching_up; /* SSE: resuming from Last-Event-ID, a page per write */
    bool eof;         /* the client shut its side: answer what came, then close */
    size_t scanned;   /* head bytes already searched for the end */
    char *head;       /* the current head; h points into it */
    http_head h;
    bool have_head;
    http_request req; /* the current request, checked from its head */
    http_chunked ck;
    char *body;
    size_t blen, bcap;
    job *job;     /* the worker's job for this request */
    int64_t last; /* SSE: last operation id sent */
} conn;

struct job {
    job *next;
    conn *c;
    server *sv;
    bool read; /* on the reading worker: nothing changes if it is dropped */
    uint64_t seq;
    api_request r;
    char *body; /* the raw body, parsed on the worker; counted in body_bytes */
    size_t blen, bcap;
    api_answer a;
};

/* A worker thread: its own connection, queue and progress. */
enum { W_OPS, W_READ, W_COUNT };
typedef struct worker {
    server *sv;
    pthread_t thread;
    bool started;
    sim *sim;
    pthread_cond_t cv;
    job *queue, **queue_tail;
    _Atomic uint64_t running; /* seq of the job being run, 0 = none */
    _Atomic uint64_t cancel;  /* seq of a job asked to stop; UINT64_MAX = all */
    int queued;               /* jobs in queue (under mu) */
    api_cache cache;          /* the view of the past (the reading worker's) */
    bool checkpoint_due;      /* new operations: keep a checkpoint when idle */
    /* progress: written by the worker under mu, sent by the loop when dirty */
    char p_what[32];
    uint64_t p_done, p_total;
    bool p_dirty;
    struct timespec p_last; /* the worker's own */
} worker;

struct server {
    struct event_base *base;
    struct evconnlistener *lev;
    sim *loop_sim;
    /* A topology change made elsewhere is built into spare_sim by the
     * refresher thread and swapped in (the loop never builds a layout);
     * answers of operations wait in held meanwhile, so that a client sees
     * its change in the next read it makes. */
    sim *spare_sim;
    pthread_t refresher;
    bool refresher_started;
    pthread_cond_t refresh_cv;
    bool refresh_due, refresh_done; /* under mu */
    bool refreshing;                /* the loop's own: spare_sim is the refresher's */
    struct event *refresh_ev;
    job *held, **held_tail;
    http_conf conf;
    char token[HTTP_MAX_TOKEN + 1];
    char web_root[PATH_MAX]; /* "" = the embedded copy */
    serve_options lim;       /* the limits in force */
    conn *conns;
    int nconns, nrefusing, nevents;
    size_t body_bytes;
    int64_t broadcast; /* last operation id broadcast */
    bool trim_due;     /* a large body or answer was freed: give the memory back */
    struct event *poll_ev, *done_ev, *progress_ev, *keepalive_ev, *sigint_ev, *sigterm_ev,
        *backoff_ev, *grace_ev;
    bool stopping;
    unsigned accept_errors;
    time_t accept_logged;
    bool read_logged;
    time_t date_t;
    char date[40];
    /* the workers (W_OPS, W_READ) and what they share, under mu */
    worker w[W_COUNT];
    pthread_mutex_t mu;
    job *done;
    bool stop;
    uint64_t seq;
};

static void conn_close(conn *c);
static void abandon(conn *c);
static void on_read(struct bufferevent *bev, void *arg);
static void maybe_stopped(server *sv);

/* ---- answers ---- */

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    case 507:
        return "Insufficient Storage";
    default:
        return status < 500 ? "Bad Request" : "Internal Server Error";
    }
}

static const char *http_date(server *sv)
{
    time_t now = time(NULL);
    if (now != sv->date_t) {
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(sv->date, sizeof sv->date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        sv->date_t = now;
    }
    return sv->date;
}

static bool is_head(const conn *c) { return c->have_head && c->h.method == API_HEAD; }

/* Status line and headers; the body's length is len (sent unless HEAD). */
static void start_answer(conn *c, int status, const char *type, const char *extra, size_t len,
                         bool with_length)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    char length[48] = "";
    if (with_length)
        snprintf(length, sizeof length, "Content-Length: %zu\r\n", len);
    const char *conn_hdr = !c->keep                          ? "Connection: close\r\n"
                           : c->have_head && c->h.minor == 0 ? "Connection: keep-alive\r\n"
                                                             : "";
    evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\n%s%s%s%s\r\n",
                        status, reason(status), http_date(c->sv), type, length, security_headers,
                        extra ? extra : "", conn_hdr);
}

/* The request is answered: back to reading heads, or close after writing. */
static void finish(conn *c)
{
    http_request_clear(&c->req);
    free(c->head);
    c->head = NULL;
    c->have_head = false;
    c->started = false;
    c->scanned = 0;
    memset(&c->ck, 0, sizeof c->ck);
    if (!c->keep || c->sv->stopping) {
        c->keep = false;
        c->state = C_CLOSE;
        evtimer_del(c->timer);
        return;
    }
    c->state = C_HEAD;
    struct timeval idle = {c->sv->lim.idle_timeout_ms / 1000,
                           (c->sv->lim.idle_timeout_ms % 1000) * 1000};
    evtimer_add(c->timer, &idle);
}

static void send_bytes(conn *c, int status, const char *type, const char *extra, const void *data,
                       size_t len)
{
    start_answer(c, status, type, extra, len, true);
    if (!is_head(c) && len)
        evbuffer_add(bufferevent_get_output(c->bev), data, len);
}

static void answer_json(conn *c, int status, json_t *body)
{
    char *t = body ? json_dumps(body, JSON_COMPACT) : NULL;
    static const char fallback[] =
        "{\"error\":{\"code\":\"internal\",\"message\":\"could not build the answer\"}}";
    if (!t)
        status = 500;
    const char *text = t ? t : fallback;
    size_t n = strlen(text);
    const char *extra = status == 401   ? "Cache-Control: no-store\r\n"
                                          "WWW-Authenticate: Bearer realm=\"ringsim\"\r\n"
                        : status == 503 ? "Cache-Control: no-store\r\nRetry-After: 1\r\n"
                                        : "Cache-Control: no-store\r\n";
    start_answer(c, status, "application/json; charset=utf-8", extra, n + 1, true);
    c->sv->trim_due |= n > TRIM_OVER;
    if (!is_head(c)) {
        struct evbuffer *out = bufferevent_get_output(c->bev);
        evbuffer_add(out, text, n);
        evbuffer_add(out, "\n", 1);
    }
    free(t);
}

/* An API answer: JSON, or the text of an export (CSV, a scenario file). */
static void answer(conn *c, api_answer *a)
{
    if (a->file) { /* sent from the file by the kernel, never read in */
        start_answer(c, a->status, a->content_type, "Cache-Control: no-store\r\n", a->file_len, true);
        if (is_head(c) || !a->file_len)
            return;
        int fd = dup(fileno(a->file)); /* the evbuffer closes its own copy */
        if (fd < 0 ||
            evbuffer_add_file(bufferevent_get_output(c->bev), fd, 0, (ev_off_t)a->file_len)) {
            if (fd >= 0)
                close(fd);
            c->keep = false; /* the head went out: the connection ends short, not wrong */
        }
        return;
    }
    if (a->text)
        send_bytes(c, a->status, a->content_type, "Cache-Control: no-store\r\n", a->text,
                   a->text_len);
    else
        answer_json(c, a->status, a->body);
}

static void answer_error(conn *c, int code, const char *msg)
{
    json_t *b = api_error_body(code, msg);
    answer_json(c, ringsim_status(code), b);
    json_decref(b);
}

/* Refuse what cannot be read on (bad framing, too big, too slow): answer,
 * then close once the answer is out. */
static void fail(conn *c, int code, const char *msg)
{
    c->keep = false;
    answer_error(c, code, msg);
    finish(c);
}

/* ---- connections ---- */

static void arm(conn *c, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
}

static void body_free(conn *c)
{
    c->sv->body_bytes -= c->bcap;
    free(c->body);
    c->body = NULL;
    c->blen = c->bcap = 0;
}

/* Room for `need` body bytes in all, within the budget. */
static int body_reserve(conn *c, size_t need, bool exact)
{
    if (need <= c->bcap)
        return 0;
    size_t cap = exact ? need : c->bcap ? c->bcap * 2 : 64 * 1024;
    if (cap < need)
        cap = need;
    if (cap > c->req.body_limit)
        cap = c->req.body_limit;
    server *sv = c->sv;
    if (sv->body_bytes - c->bcap + cap > BODY_BUDGET)
        return RINGSIM_EUNAVAILABLE;
    char *b = realloc(c->body, cap);
    if (!b)
        return RINGSIM_ENOMEM;
    sv->body_bytes += cap - c->bcap;
    c->body = b;
    c->bcap = cap;
    return 0;
}

static void conn_unlink(conn *c)
{
    server *sv = c->sv;
    if (c->prev)
        c->prev->next = c->next;
    else if (sv->conns == c)
        sv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

/* Close now.  A connection whose job still runs keeps its struct until the
 * job is done (on_done frees it). */
static void conn_close(conn *c)
{
    server *sv = c->sv;
    if (!c->bev)
        return;
    if (c->job && c->job->read)
        abandon(c);
    http_request_clear(&c->req);
    bufferevent_free(c->bev);
    c->bev = NULL;
    event_free(c->timer);
    c->timer = NULL;
    body_free(c);
    free(c->head);
    c->head = NULL;
    conn_unlink(c);
    if (c->refused)
        sv->nrefusing--;
    else
        sv->nconns--;
    if (c->state == C_EVENTS)
        sv->nevents--;
    if (!c->job)
        free(c);
    maybe_stopped(sv);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    conn *c = arg;
    char msg[96];
    switch (c->state) {
    case C_HEAD:
        if (evbuffer_get_length(bufferevent_get_output(c->bev))) {
            arm(c, c->sv->lim.idle_timeout_ms); /* the answer is still going out */
        } else if (c->started) {
            snprintf(msg, sizeof msg, "the request head did not arrive within %d ms",
                     c->sv->lim.header_timeout_ms);
            fail(c, RINGSIM_ETIMEOUT, msg);
        } else {
            conn_close(c); /* idle */
        }
        break;
    case C_BODY:
        snprintf(msg, sizeof msg, "the request body did not arrive within %d ms",
                 c->sv->lim.body_timeout_ms);
        body_free(c);
        fail(c, RINGSIM_ETIMEOUT, msg);
        break;
    default:
        conn_close(c);
    }
}

/* The answer is out: shut our side and read what the client still sends
 * for a while, so that closing does not reset the connection (and the
 * answer with it) -- nginx's lingering close. */
static void start_linger(conn *c)
{
    c->state = C_LINGER;
    shutdown(bufferevent_getfd(c->bev), SHUT_WR);
    evbuffer_drain(bufferevent_get_input(c->bev), evbuffer_get_length(bufferevent_get_input(c->bev)));
    bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
    bufferevent_enable(c->bev, EV_READ);
    arm(c, LINGER_MS);
    maybe_stopped(c->sv);
}

static void sse_resume(conn *c);

/* The client has shut its side and every answer so far is out: the next
 * complete request that came before the FIN is answered, or, when none is
 * left, the connection closes (RFC 9112 9.6: a half-close ends the
 * requests, not the answers). */
static void after_eof(conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t len = evbuffer_get_length(in), n = len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD;
    const char *p = n ? (const char *)evbuffer_pullup(in, (ev_ssize_t)n) : NULL;
    if (p && http_head_end(p, n, 0))
        on_read(c->bev, c);
    else
        conn_close(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    if (c->state == C_CLOSE)
        start_linger(c);
    else if (c->state == C_HEAD && c->eof)
        after_eof(c);
    else if (c->state == C_HEAD && evbuffer_get_length(bufferevent_get_input(bev)))
        on_read(bev, c); /* a request that came while the answer went out */
    else if (c->state == C_EVENTS && c->catching_up)
        sse_resume(c); /* the last page is out: the next one */
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    conn *c = arg;
    bool pending = evbuffer_get_length(bufferevent_get_output(c->bev)) > 0;
    if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
        c->eof = true; /* every byte it sent is in the input buffer */
        bufferevent_disable(c->bev, EV_READ);
        /* A read changes nothing: a client that leaves while it waits is
         * gone, and the read is dropped (abandon).  An operation is made
         * and answered, since its client cannot know otherwise. */
        if ((c->state == C_BUSY && !(c->job && c->job->read)) || c->state == C_CLOSE)
            return; /* the answer is made or written first */
        if (c->state == C_HEAD) {
            if (!pending)
                after_eof(c);
            return; /* on_write goes on once the answer is out */
        }
    }
    conn_close(c); /* EOF mid-body or on a stream, an error, or an answer not read in time */
}

static conn *conn_new(server *sv, evutil_socket_t fd, bool refused)
{
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->sv = sv;
    c->refused = refused;
    c->bev = bufferevent_socket_new(sv->base, fd, BEV_OPT_CLOSE_ON_FREE);
    c->timer = c->bev ? evtimer_new(sv->base, on_timer, c) : NULL;
    if (!c->timer) {
        if (c->bev)
            bufferevent_free(c->bev);
        free(c);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval wt = {WRITE_TIMEOUT_S, 0};
    bufferevent_set_timeouts(c->bev, NULL, &wt);
    bufferevent_setwatermark(c->bev, EV_READ, 0, READ_HIGH_WATER);
    bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    c->next = sv->conns;
    if (sv->conns)
        sv->conns->prev = c;
    sv->conns = c;
    if (refused)
        sv->nrefusing++;
    else
        sv->nconns++;
    return c;
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int socklen, void *arg)
{
    (void)l;
    (void)sa;
    (void)socklen;
    server *sv = arg;
    bool refuse = sv->nconns >= sv->lim.max_connections;
    if (refuse && sv->nrefusing >= REFUSING_MAX) {
        evutil_closesocket(fd);
        return;
    }
    conn *c = conn_new(sv, fd, refuse);
    if (!c) {
        evutil_closesocket(fd);
        return;
    }
    if (refuse) {
        char msg[128];
        snprintf(msg, sizeof msg, "the server has %d connections, its limit; try again",
                 sv->lim.max_connections);
        fail(c, RINGSIM_EUNAVAILABLE, msg);
        return;
    }
    c->state = C_HEAD;
    arm(c, sv->lim.header_timeout_ms);
}

/* accept() failed for other reasons than a retry (no file descriptors,
 * no memory): pause instead of spinning on a listener that stays
 * readable, and say so once a minute at most. */
static void on_accept_error(struct evconnlistener *l, void *arg)
{
    server *sv = arg;
    int e = EVUTIL_SOCKET_ERROR();
    evconnlistener_disable(l);
    sv->accept_errors++;
    time_t now = time(NULL);
    if (!sv->accept_logged || now - sv->accept_logged >= 60) {
        fprintf(stderr,
                "ringsim: cannot accept connections: %s (%u time%s); pausing %d ms between "
                "tries\n",
                strerror(e), sv->accept_errors, sv->accept_errors == 1 ? "" : "s", BACKOFF_MS);
        sv->accept_logged = now;
    }
    struct timeval tv = {0, BACKOFF_MS * 1000};
    evtimer_add(sv->backoff_ev, &tv);
}

static void on_backoff(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    if (sv->lev)
        evconnlistener_enable(sv->lev);
}

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
            conn_close(c);
    }
}

#define SSE_PAUSE 1 /* send_op: this page is full */

typedef struct sse_send {
    conn *only; /* NULL = every stream */
    server *sv;
    int64_t sent; /* last operation id that went out */
} sse_send;

static int send_op(void *ud, const store_op *op)
{
    sse_send *s = ud;
    json_t *j = view_operation(op);
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
static void sse_resume(conn *c)
{
    server *sv = c->sv;
    rs_error err = {0, ""};
    sse_send s = {c, sv, c->last};
    int rc = c->last < sv->broadcast ? store_ops_each(sim_store(sv->loop_sim), c->last,
                                                      sv->broadcast - c->last, send_op, &s, &err)
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

static void *refresher_main(void *arg)
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
        pthread_mutex_lock(&sv->mu);
        sv->refresh_done = true;
        event_active(sv->refresh_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

static void answer_held(server *sv);

/* The refresher is done: its engine becomes the loop's, the loop's the
 * spare (caught up next time), and what waited for it goes out. */
static void on_refreshed(evutil_socket_t fd, short what, void *arg)
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
    answer_held(sv);
}

static void broadcast_new(server *sv)
{
    rs_error err = {0, ""};
    int rc;
    if (!loop_refresh(sv, &rc, &err) && !rc)
        return; /* on_refreshed broadcasts once the new layout is in */
    int64_t last = rc ? sv->broadcast : sim_last_op(sv->loop_sim);
    if (!rc && last > sv->broadcast) {
        sse_send s = {NULL, sv, sv->broadcast};
        rc = store_ops_each(sim_store(sv->loop_sim), sv->broadcast, last - sv->broadcast, send_op,
                            &s, &err);
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

static void events_start(conn *c)
{
    server *sv = c->sv;
    if (sv->nevents >= sv->lim.max_events) {
        char msg[96];
        snprintf(msg, sizeof msg, "the server has %d event streams, its limit; try again",
                 sv->lim.max_events);
        answer_error(c, RINGSIM_EUNAVAILABLE, msg);
        finish(c);
        return;
    }
    const char *framing = c->h.minor == 1 ? "Transfer-Encoding: chunked\r\n" : "";
    char extra[160];
    snprintf(extra, sizeof extra, "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\n%s", framing);
    if (is_head(c)) { /* the headers of the stream, no stream */
        start_answer(c, 200, "text/event-stream; charset=utf-8", extra, 0, false);
        finish(c);
        return;
    }
    broadcast_new(sv); /* so that "from now on" starts after everything sent */
    c->keep = false;   /* a stream ends with its connection */
    start_answer(c, 200, "text/event-stream; charset=utf-8", extra, 0, false);
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
    if (sv->broadcast - c->last > SSE_RESUME_MAX) {
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
        sse_resume(c);
    }
    sse_prune(sv);
}

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    for (conn *c = sv->conns; c; c = c->next)
        if (c->state == C_EVENTS)
            send_chunk(c, ": keepalive\n\n", 13);
    sse_prune(sv);
}

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    broadcast_new(arg);
}

static void on_progress(evutil_socket_t fd, short what, void *arg)
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

/* ---- the workers ---- */

/* Progress of a long operation or replay; nonzero asks the engine to
 * cancel it (it then fails with RINGSIM_ECANCELED, rolled back whole).  The
 * engine also calls it between counted steps to ask whether to go on:
 * cheap. */
static int worker_progress(void *ud, const char *what, uint64_t done, uint64_t total)
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

static void *worker_main(void *arg)
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

static void job_free(job *j)
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
static void abandon(conn *c)
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
        job_free(j);
    }
}

/* A job is over: answer its connection (unless it closed meanwhile). */
static void job_answer(job *j, int code, const char *msg)
{
    conn *c = j->c;
    c->job = NULL;
    if (!c->bev) {
        free(c);
    } else if (code) {
        answer_error(c, code, msg);
        finish(c);
    } else {
        answer(c, &j->a);
        finish(c);
    }
    job_free(j);
}

/* Answer the operations that are done, once the loop's state holds them
 * (the operation event goes out before its answer). */
static void answer_held(server *sv)
{
    broadcast_new(sv);
    if (sv->refreshing)
        return; /* on_refreshed comes back here */
    job *list = sv->held;
    sv->held = NULL;
    sv->held_tail = &sv->held;
    while (list) {
        job *j = list;
        list = j->next;
        job_answer(j, 0, NULL);
    }
    maybe_stopped(sv);
}

static void on_done(evutil_socket_t fd, short what, void *arg)
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
    answer_held(sv);
    /* A parsed 16 MiB body or a long report leaves hundreds of MB free in
     * the heap; glibc keeps them unless asked (a millisecond or two). */
    if (sv->trim_due) {
        sv->trim_due = false;
        malloc_trim(0);
    }
    maybe_stopped(sv);
}

static void enqueue(conn *c, worker *w, api_request *r)
{
    server *sv = c->sv;
    pthread_mutex_lock(&sv->mu);
    int queued = w->queued;
    pthread_mutex_unlock(&sv->mu);
    if (queued >= QUEUE_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "%d requests are waiting for the %s already; try again", queued,
                 w == &sv->w[W_OPS] ? "operations worker" : "reading worker");
        body_free(c);
        answer_error(c, RINGSIM_EUNAVAILABLE, msg);
        finish(c);
        return;
    }
    job *j = calloc(1, sizeof *j);
    if (!j) {
        body_free(c);
        answer_error(c, RINGSIM_ENOMEM, "out of memory");
        finish(c);
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
static void cancel_running(conn *c)
{
    server *sv = c->sv;
    worker *w = &sv->w[W_OPS];
    uint64_t r = atomic_load(&w->running); /* only the loop writes cancel */
    if (r && atomic_load(&w->cancel) != UINT64_MAX)
        atomic_store(&w->cancel, r);
    json_t *b = json_pack("{s:b}", "cancelled", r != 0);
    answer_json(c, 200, b);
    json_decref(b);
    finish(c);
}

/* ---- files ---- */

static const char *mime(const char *path)
{
    const char *dot = strrchr(path, '.');
    static const char *const t[][2] = {{".html", "text/html; charset=utf-8"},
                                       {".js", "text/javascript; charset=utf-8"},
                                       {".mjs", "text/javascript; charset=utf-8"},
                                       {".css", "text/css; charset=utf-8"},
                                       {".svg", "image/svg+xml"},
                                       {".png", "image/png"},
                                       {".ico", "image/x-icon"},
                                       {".json", "application/json; charset=utf-8"},
                                       {".txt", "text/plain; charset=utf-8"},
                                       {".webmanifest", "application/manifest+json"}};
    for (size_t i = 0; dot && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(dot, t[i][0]))
            return t[i][1];
    return "application/octet-stream";
}

static void serve_file(conn *c, const char *name)
{
    server *sv = c->sv;
    static const char cache[] = "Cache-Control: no-cache\r\n";
    if (!sv->web_root[0]) {
        for (const web_asset *a = web_assets; a->path; a++)
            if (!strcmp(a->path, name)) {
                send_bytes(c, 200, mime(name), cache, a->data, a->len);
                return;
            }
        answer_error(c, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
        return;
    }
    char full[PATH_MAX * 2], real[PATH_MAX];
    int n = snprintf(full, sizeof full, "%s%s", sv->web_root, name);
    FILE *f = NULL;
    struct stat st;
    size_t rl = strlen(sv->web_root);
    if (n > 0 && (size_t)n < sizeof full && realpath(full, real) &&
        strncmp(real, sv->web_root, rl) == 0 && real[rl] == '/' && stat(real, &st) == 0 &&
        S_ISREG(st.st_mode) && (uint64_t)st.st_size <= FILE_MAX)
        f = fopen(real, "rb");
    char *data = f ? malloc((size_t)st.st_size + 1) : NULL;
    if (!f || !data || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        if (f)
            fclose(f);
        free(data);
        answer_error(c, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
        return;
    }
    fclose(f);
    send_bytes(c, 200, mime(name), cache, data, (size_t)st.st_size);
    free(data);
}

/* ---- requests ---- */

/* A whole request has come (checked from its head): send it where it runs. */
static void complete(conn *c)
{
    server *sv = c->sv;
    evtimer_del(c->timer);
    c->state = C_BUSY;
    http_request *req = &c->req;
    if (req->kind == HTTP_TO_FILE) {
        serve_file(c, req->path);
        finish(c);
    } else if (req->where == API_EVENTS) {
        events_start(c);
    } else if (req->where == API_CANCEL) {
        cancel_running(c);
    } else if ((req->where == API_WORKER || req->where == API_READER) && sv->stopping) {
        body_free(c);
        answer_error(c, RINGSIM_EUNAVAILABLE, "the server is stopping");
        finish(c);
    } else if (req->where == API_WORKER || req->where == API_READER) {
        enqueue(c, &sv->w[req->where == API_WORKER ? W_OPS : W_READ], &req->api);
        http_request_clear(req);
    } else { /* a fast read: no route on the loop takes a body */
        api_answer a;
        api_cache none = API_CACHE_INIT; /* the loop never travels in time */
        none.light = true;               /* nor builds a layout */
        api_respond(sv->loop_sim, &none, &req->api, &a);
        api_cache_clear(&none);
        answer(c, &a);
        api_answer_clear(&a);
        finish(c);
    }
}

static void read_body(conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t len;
    rs_error err = {0, ""};
    while (c->state == C_BODY && (len = evbuffer_get_length(in)) > 0) {
        int rc;
        if (c->h.chunked) {
            size_t n = len < 65536 ? len : 65536;
            const char *p = (const char *)evbuffer_pullup(in, (ev_ssize_t)n), *d;
            size_t dl;
            ssize_t used = http_chunked_feed(&c->ck, p, n, &d, &dl, &err);
            if (used < 0) {
                body_free(c);
                fail(c, (int)used, err.msg);
                return;
            }
            if (dl && (rc = body_reserve(c, c->blen + dl, false))) {
                body_free(c);
                fail(c, rc, "the server holds too many unfinished uploads; try again");
                return;
            }
            if (dl)
                memcpy(c->body + c->blen, d, dl);
            c->blen += dl;
            evbuffer_drain(in, (size_t)used);
            if (c->ck.done)
                complete(c);
        } else {
            size_t want = (size_t)c->h.content_length;
            if ((rc = body_reserve(c, want, true))) {
                fail(c, rc, "the server holds too many unfinished uploads; try again");
                return;
            }
            size_t n = want - c->blen < len ? want - c->blen : len;
            evbuffer_remove(in, c->body + c->blen, n);
            c->blen += n;
            if (c->blen == want)
                complete(c);
        }
    }
}

static void read_head(conn *c)
{
    server *sv = c->sv;
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t len = evbuffer_get_length(in);
    if (!len)
        return;
    if (!c->started) {
        c->started = true;
        arm(c, sv->lim.header_timeout_ms);
    }
    size_t n = len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD;
    const char *p = (const char *)evbuffer_pullup(in, (ev_ssize_t)n);
    size_t end = p ? http_head_end(p, n, c->scanned) : 0;
    if (!end) {
        c->scanned = n;
        if (n >= HTTP_MAX_HEAD)
            fail(c, RINGSIM_EHEADERS, "the request head is over 32 KiB");
        return;
    }
    c->scanned = 0;
    c->head = malloc(end + 1);
    if (!c->head) {
        fail(c, RINGSIM_ENOMEM, "out of memory");
        return;
    }
    memcpy(c->head, p, end);
    c->head[end] = '\0';
    evbuffer_drain(in, end);
    rs_error err = {0, ""};
    int rc = http_parse_head(c->head, end, &c->h, &err);
    if (rc) {
        fail(c, rc, err.msg);
        return;
    }
    c->have_head = true;
    c->keep = c->h.keep_alive;
    /* Everything the head decides, before a byte of the body is read: a
     * refused upload is never waited for (and never invited with 100
     * Continue); its connection closes after the answer. */
    if ((rc = http_check(&sv->conf, &c->h, &c->req, &err))) {
        c->keep = c->keep && !c->h.has_body;
        answer_error(c, rc, err.msg);
        finish(c);
        return;
    }
    if (c->h.has_body) {
        c->state = C_BODY;
        c->blen = 0;
        c->ck.limit = c->req.body_limit;
        arm(c, sv->lim.body_timeout_ms);
        if (c->h.expect_continue)
            evbuffer_add(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n", 25);
        read_body(c);
    } else {
        complete(c);
    }
}

static void on_read(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    switch (c->state) {
    case C_HEAD:
        /* One answer at a time: the next request waits until this one is out. */
        if (!evbuffer_get_length(bufferevent_get_output(bev)))
            read_head(c);
        break;
    case C_BODY:
        read_body(c);
        break;
    case C_EVENTS:
    case C_LINGER:
        evbuffer_drain(in, evbuffer_get_length(in)); /* nothing to read there */
        break;
    default:
        break; /* C_BUSY, C_CLOSE: the input waits (bounded by the watermark) */
    }
}

/* ---- stopping ---- */

static void maybe_stopped(server *sv)
{
    if (!sv->stopping)
        return;
    for (conn *c = sv->conns; c; c = c->next)
        if (c->job || c->state == C_CLOSE || c->state == C_BUSY)
            return; /* an answer still to make or to write */
    if (sv->held || sv->refreshing)
        return; /* answers waiting for the refresher */
    pthread_mutex_lock(&sv->mu);
    bool idle = !sv->done;
    for (int i = 0; i < W_COUNT; i++)
        idle = idle && !sv->w[i].queue && !atomic_load(&sv->w[i].running);
    pthread_mutex_unlock(&sv->mu);
    if (idle)
        event_base_loopexit(sv->base, NULL);
}

static void begin_stop(server *sv)
{
    sv->stopping = true;
    if (sv->lev) { /* closed: a new client is refused at once, not left waiting */
        evconnlistener_free(sv->lev);
        sv->lev = NULL;
    }
    for (int i = 0; i < W_COUNT; i++) {
        worker *w = &sv->w[i];
        atomic_store(&w->cancel, UINT64_MAX);
        pthread_mutex_lock(&sv->mu);
        job *q = w->queue; /* not started: answered at once */
        w->queue = NULL;
        w->queue_tail = &w->queue;
        w->queued = 0;
        pthread_mutex_unlock(&sv->mu);
        while (q) {
            job *j = q;
            q = j->next;
            job_answer(j, RINGSIM_EUNAVAILABLE, "the server is stopping");
        }
    }
    for (conn *c = sv->conns, *n; c; c = n) {
        n = c->next;
        if (c->job || c->state == C_CLOSE || c->state == C_LINGER)
            continue;
        if (c->state == C_HEAD && evbuffer_get_length(bufferevent_get_output(c->bev))) {
            c->keep = false; /* an answer is going out: close after it */
            c->state = C_CLOSE;
            evtimer_del(c->timer);
            continue;
        }
        conn_close(c);
    }
    struct timeval grace = {sv->lim.stop_grace_ms / 1000, (sv->lim.stop_grace_ms % 1000) * 1000};
    evtimer_add(sv->grace_ev, &grace);
    maybe_stopped(sv);
}

static void on_grace(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    event_base_loopexit(sv->base, NULL);
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    if (sv->stopping) {
        event_base_loopexit(sv->base, NULL); /* a second signal: now */
        return;
    }
    begin_stop(sv);
}

/* ---- start ---- */

/* Limits: the options, then RINGSIM_SERVE_LIMITS (for tests: a list like
 * "max_connections=8,header_timeout_ms=500"; "beyond_loopback=1" treats a
 * loopback address as any other, so that tests need not listen on the
 * network), then the defaults. */
static void set_limits(serve_options *l, const serve_options *o, bool *beyond)
{
    *l = *o;
    const char *env = getenv("RINGSIM_SERVE_LIMITS");
    static const struct {
        const char *name;
        size_t off;
    } t[] = {{"max_connections", offsetof(serve_options, max_connections)},
             {"max_events", offsetof(serve_options, max_events)},
             {"header_timeout_ms", offsetof(serve_options, header_timeout_ms)},
             {"idle_timeout_ms", offsetof(serve_options, idle_timeout_ms)},
             {"body_timeout_ms", offsetof(serve_options, body_timeout_ms)},
             {"stop_grace_ms", offsetof(serve_options, stop_grace_ms)}};
    while (env && *env) {
        size_t n = strcspn(env, ",");
        const char *eq = memchr(env, '=', n);
        if (eq && (size_t)(eq - env) == 15 && !memcmp(env, "beyond_loopback", 15))
            *beyond = eq[1] == '1';
        for (size_t i = 0; eq && i < sizeof t / sizeof t[0]; i++) {
            uint64_t v;
            if ((size_t)(eq - env) == strlen(t[i].name) &&
                !memcmp(env, t[i].name, (size_t)(eq - env)) &&
                !api_parse_u64(eq + 1, n - (size_t)(eq - env) - 1, INT_MAX, &v))
                *(int *)((char *)l + t[i].off) = (int)v;
        }
        env += n + (env[n] == ',');
    }
    if (l->max_connections <= 0)
        l->max_connections = 4096;
    if (l->max_events <= 0)
        l->max_events = 2048;
    if (l->header_timeout_ms <= 0)
        l->header_timeout_ms = 10000;
    if (l->idle_timeout_ms <= 0)
        l->idle_timeout_ms = 30000;
    if (l->body_timeout_ms <= 0)
        l->body_timeout_ms = 60000;
    if (l->stop_grace_ms <= 0)
        l->stop_grace_ms = 10000;
    /* As many file descriptors as the system lets us have, and connections
     * within them (some stay for the database, the listener, the worker). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rlim_t want = rl.rlim_max == RLIM_INFINITY ? 1 << 20 : rl.rlim_max;
            struct rlimit up = {want, rl.rlim_max};
            if (setrlimit(RLIMIT_NOFILE, &up) == 0)
                rl.rlim_cur = want;
        }
        long room = rl.rlim_cur == RLIM_INFINITY ? INT_MAX : (long)rl.rlim_cur - 64 - REFUSING_MAX;
        if (room < 16)
            room = 16;
        if (l->max_connections > room)
            l->max_connections = (int)room;
    }
    if (l->max_events > l->max_connections)
        l->max_events = l->max_connections;
}

static bool loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* A token goes into URLs and headers as it is: 1 to HTTP_MAX_TOKEN
 * characters that need no escaping. */
static bool token_valid(const char *t)
{
    size_t n = strlen(t);
    return n > 0 && n <= HTTP_MAX_TOKEN &&
           strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") == n;
}

/* The access token: given (checked at start), or 32 hex digits from the
 * kernel when the address needs one. */
static int set_token(server *sv, const char *given, bool needed)
{
    if (given) {
        memcpy(sv->token, given, strlen(given) + 1);
    } else if (needed) {
        unsigned char r[16];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
            fprintf(stderr, "ringsim: cannot make a token: %s\n", strerror(errno));
            return -1;
        }
        for (size_t i = 0; i < sizeof r; i++)
            snprintf(sv->token + 2 * i, 3, "%02x", r[i]);
    } else {
        return 0;
    }
    sv->conf.token = sv->token;
    sv->conf.token_len = strlen(sv->token);
    return 0;
}

static struct evconnlistener *listen_on(server *sv, const char *host, int port)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g) {
        fprintf(stderr, "ringsim: cannot listen on %s:%d: %s\n", host, port, gai_strerror(g));
        return NULL;
    }
    struct evconnlistener *l = NULL;
    int e = 0;
    for (struct addrinfo *a = res; a && !l; a = a->ai_next) {
        l = evconnlistener_new_bind(sv->base, on_accept, sv,
                                    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
                                    511, a->ai_addr, (int)a->ai_addrlen);
        if (!l)
            e = errno;
    }
    freeaddrinfo(res);
    if (!l)
        fprintf(stderr, "ringsim: cannot listen on %s:%d: %s\n", host, port, strerror(e));
    return l;
}

int api_serve(const serve_options *o)
{
    server sv;
    memset(&sv, 0, sizeof sv);
    const char *host = o->host ? o->host : "127.0.0.1";
    sv.conf.host = host;
    for (int i = 0; i < W_COUNT; i++) {
        sv.w[i].sv = &sv;
        sv.w[i].queue_tail = &sv.w[i].queue;
        sv.w[i].cache = (api_cache)API_CACHE_INIT;
    }
    rs_error err = {0, ""};
    int rc = 1;
    bool beyond = false;
    set_limits(&sv.lim, o, &beyond);
    if (o->token && !token_valid(o->token)) {
        fprintf(stderr, "ringsim: the token must be 1 to %d letters, digits or -._~\n",
                HTTP_MAX_TOKEN);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
#ifdef M_MMAP_THRESHOLD
    /* Bodies (up to 16 MiB) are single blocks: with a fixed threshold they
     * are mapped and unmapped, so memory goes back to the system when a
     * request ends, also an aborted upload. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
    if (o->web && !realpath(o->web, sv.web_root)) {
        fprintf(stderr, "ringsim: cannot open web folder %s: %s\n", o->web, strerror(errno));
        return 1;
    }
    evthread_use_pthreads();
    pthread_mutex_init(&sv.mu, NULL);
    for (int i = 0; i < W_COUNT; i++)
        pthread_cond_init(&sv.w[i].cv, NULL);
    pthread_cond_init(&sv.refresh_cv, NULL);
    sv.held_tail = &sv.held;
    if (sim_open(&sv.loop_sim, o->db, &err) || sim_open(&sv.spare_sim, o->db, &err) ||
        sim_open(&sv.w[W_OPS].sim, o->db, &err) || sim_open(&sv.w[W_READ].sim, o->db, &err)) {
        fprintf(stderr, "ringsim: %s\n", err.msg);
        goto out;
    }
    if (sim_read_only(sv.loop_sim))
        fprintf(stderr, "ringsim: database %s is read-only: %s; serving it read-only\n", o->db,
                sim_read_only(sv.loop_sim));
    for (int i = 0; i < W_COUNT; i++)
        sim_set_progress(sv.w[i].sim, worker_progress, &sv.w[i]);
    sv.broadcast = sim_last_op(sv.loop_sim);
    sv.base = event_base_new();
    if (!sv.base) {
        fprintf(stderr, "ringsim: cannot start the event loop\n");
        goto out;
    }
    sv.lev = listen_on(&sv, host, o->port);
    if (!sv.lev)
        goto out;
    evconnlistener_set_error_cb(sv.lev, on_accept_error);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl = sizeof ss;
    if (getsockname(evconnlistener_get_fd(sv.lev), (struct sockaddr *)&ss, &sl) != 0) {
        fprintf(stderr, "ringsim: cannot read the listening address: %s\n", strerror(errno));
        goto out;
    }
    sv.conf.port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                  : ((struct sockaddr_in *)&ss)->sin_port);
    bool local = loopback((struct sockaddr *)&ss) && !beyond;
    sv.conf.open_host = !local;
    if (set_token(&sv, o->token, !local))
        goto out;
    struct timeval poll = {0, POLL_MS * 1000}, ka = {KEEPALIVE_S, 0};
    sv.poll_ev = event_new(sv.base, -1, EV_PERSIST, on_poll, &sv);
    sv.keepalive_ev = event_new(sv.base, -1, EV_PERSIST, on_keepalive, &sv);
    sv.done_ev = event_new(sv.base, -1, 0, on_done, &sv);
    sv.progress_ev = event_new(sv.base, -1, 0, on_progress, &sv);
    sv.refresh_ev = event_new(sv.base, -1, 0, on_refreshed, &sv);
    sv.backoff_ev = evtimer_new(sv.base, on_backoff, &sv);
    sv.grace_ev = evtimer_new(sv.base, on_grace, &sv);
    sv.sigint_ev = evsignal_new(sv.base, SIGINT, on_signal, &sv);
    sv.sigterm_ev = evsignal_new(sv.base, SIGTERM, on_signal, &sv);
    if (!sv.poll_ev || !sv.keepalive_ev || !sv.done_ev || !sv.progress_ev || !sv.refresh_ev ||
        !sv.backoff_ev || !sv.grace_ev || !sv.sigint_ev || !sv.sigterm_ev ||
        event_add(sv.poll_ev, &poll) || event_add(sv.keepalive_ev, &ka) ||
        event_add(sv.sigint_ev, NULL) || event_add(sv.sigterm_ev, NULL)) {
        fprintf(stderr, "ringsim: cannot set up events\n");
        goto out;
    }
    for (int i = 0; i < W_COUNT; i++) {
        if (pthread_create(&sv.w[i].thread, NULL, worker_main, &sv.w[i])) {
            fprintf(stderr, "ringsim: cannot start the worker threads\n");
            goto out;
        }
        sv.w[i].started = true;
    }
    if (pthread_create(&sv.refresher, NULL, refresher_main, &sv)) {
        fprintf(stderr, "ringsim: cannot start the worker threads\n");
        goto out;
    }
    sv.refresher_started = true;
    char hbuf[300];
    snprintf(hbuf, sizeof hbuf, strchr(host, ':') ? "[%s]" : "%s", host);
    printf("ringsim: serving http://%s:%d/%s%s (database %s%s%s)\n", hbuf, sv.conf.port,
           sv.conf.token ? "?token=" : "", sv.conf.token ? sv.token : "", o->db,
           sv.web_root[0] ? ", web files from " : "", sv.web_root);
    if (!local)
        printf("ringsim: listening beyond this machine: every API request needs the token\n");
    fflush(stdout);
    event_base_dispatch(sv.base);
    rc = 0;
out:
    pthread_mutex_lock(&sv.mu);
    sv.stop = true;
    for (int i = 0; i < W_COUNT; i++)
        pthread_cond_signal(&sv.w[i].cv);
    pthread_cond_signal(&sv.refresh_cv);
    pthread_mutex_unlock(&sv.mu);
    if (sv.refresher_started) /* a layout build: bounded by the points limit */
        pthread_join(sv.refresher, NULL);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += sv.stopping ? 1 : sv.lim.stop_grace_ms / 1000 + 1;
    for (int i = 0; i < W_COUNT; i++)
        /* A running operation was asked to cancel; one that does not stop
         * within the grace period is left to SQLite, which rolls back
         * whatever was not committed. */
        if (sv.w[i].started && pthread_timedjoin_np(sv.w[i].thread, NULL, &until)) {
            fprintf(stderr,
                    "ringsim: the running %s did not stop in time; exiting "
                    "without it (it is not committed)\n",
                    i == W_OPS ? "operation" : "read");
            fflush(NULL);
            _exit(1);
        }
    /* Jobs the workers finished or never started: nobody is left to answer. */
    for (job *lists[4] = {sv.done, sv.held, sv.w[W_OPS].queue, sv.w[W_READ].queue}, **l = lists;
         l < lists + 4; l++)
        while (*l) {
            job *j = *l;
            *l = j->next;
            j->c->job = NULL;
            if (!j->c->bev)
                free(j->c);
            job_free(j);
        }
    sv.stopping = false; /* closing below is not stopping anew */
    while (sv.conns)
        conn_close(sv.conns);
    if (sv.lev)
        evconnlistener_free(sv.lev);
    struct event *evs[] = {sv.poll_ev,     sv.keepalive_ev, sv.done_ev,
                           sv.progress_ev, sv.refresh_ev,   sv.backoff_ev,
                           sv.grace_ev,    sv.sigint_ev,    sv.sigterm_ev};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (evs[i])
            event_free(evs[i]);
    if (sv.base)
        event_base_free(sv.base);
    for (int i = 0; i < W_COUNT; i++) {
        api_cache_clear(&sv.w[i].cache);
        sim_close(sv.w[i].sim);
        pthread_cond_destroy(&sv.w[i].cv);
    }
    sim_close(sv.loop_sim);
    sim_close(sv.spare_sim);
    pthread_cond_destroy(&sv.refresh_cv);
    pthread_mutex_destroy(&sv.mu);
    libevent_global_shutdown();
    return rc;
}
