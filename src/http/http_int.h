/*
 * http_int.h - what the rooms of `ringsim serve` share: the server, its
 * connections, jobs and workers, and the calls between
 *   http.c          start and stop (api_serve)
 *   http_conn.c     connections: answers, accept, timers, files, requests
 *   http_sse.c      the event stream, polling and the refresher thread
 *   http_workers.c  the two worker threads and their queues
 * Everything runs on the event loop except what the workers and the
 * refresher do under mu (see http.c for the design).
 */
#ifndef RINGSIM_HTTP_INT_H
#define RINGSIM_HTTP_INT_H

/* Private to its library: src/http/CMakeLists.txt defines RINGSIM_HTTP_INTERNAL for
 * its own files (and a white-box test may), so a higher floor that includes
 * this header does not compile (glib's __GLIB_H_INSIDE__). */
#ifndef RINGSIM_HTTP_INTERNAL
#error "http_int.h is the server's own (src/http/): use api.h"
#endif

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
#include "http_gate.h"
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
#define SSE_PAGE_BYTES (16u << 10)   /* a resuming stream's output per turn of the loop */

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
    /* A spooled body (api_spools: POST /api/trace): written to an unlinked
     * temporary file as it comes, blen counting its bytes; the file goes
     * to the request when the body is whole. */
    bool spool;
    int spool_fd;
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

/* http_conn.c (connections: answers, accept, timers, files, reading requests) */
bool http__is_head(const conn *c);
void http__start_answer(conn *c, int status, const char *type, const char *extra, size_t len,
                        bool with_length);
void http__finish(conn *c);
void http__answer_json(conn *c, int status, json_t *body);
void http__answer(conn *c, api_answer *a);
void http__answer_error(conn *c, int code, const char *msg);
void http__body_free(conn *c);
void http__conn_close(conn *c);
void http__on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int socklen,
                     void *arg);
void http__on_accept_error(struct evconnlistener *l, void *arg);
void http__on_backoff(evutil_socket_t fd, short what, void *arg);

/* http_sse.c (the event stream (SSE), data_version polling and the refresher thread) */
void http__sse_resume(conn *c);
void *http__refresher_main(void *arg);
void http__on_refreshed(evutil_socket_t fd, short what, void *arg);
void http__broadcast_new(server *sv);
void http__events_start(conn *c);
void http__on_keepalive(evutil_socket_t fd, short what, void *arg);
void http__on_poll(evutil_socket_t fd, short what, void *arg);
void http__on_progress(evutil_socket_t fd, short what, void *arg);

/* http_workers.c (the two worker threads and their queues) */
void http__answer_held(server *sv);
int http__worker_progress(void *ud, const char *what, uint64_t done, uint64_t total);
void *http__worker_main(void *arg);
void http__job_free(job *j);
void http__abandon(conn *c);
void http__job_answer(job *j, int code, const char *msg);
void http__on_done(evutil_socket_t fd, short what, void *arg);
void http__enqueue(conn *c, worker *w, api_request *r);
void http__cancel_running(conn *c);

/* http.c (start and stop) */
void http__maybe_stopped(server *sv);

#endif
