/*
 * http.c - `ringsim serve`: libevent's evhttp on one event loop.
 *
 * Reads (the fast API answers, static files, the SSE stream) run on the
 * loop.  Operations and time travel run in order on one worker thread with
 * its own database connection, so that generating a million keys neither
 * blocks the page nor the other readers (SQLite's WAL lets the loop keep
 * reading the last committed state meanwhile).  The worker hands results
 * back through event_active(); progress of long operations goes out as SSE
 * `progress` events.
 *
 * Committed operations -- the worker's and those of other processes on the
 * same file (the CLI) -- are noticed with PRAGMA data_version, polled every
 * 200 ms, and broadcast as SSE `operation` events in id order.
 *
 * Safety: requests whose Host (or Origin) names another site get 403 (DNS
 * rebinding); request bodies must be JSON and at most 16 MiB; static files
 * cannot leave the web folder; every answer carries a strict CSP and no CORS
 * headers.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "api.h"
#include "view.h"
#include "web_assets.h"

#define HARD_BODY_LIMIT (64 * 1024 * 1024) /* evhttp's own cap; 16 MiB is ours */
#define POLL_MS 200
#define KEEPALIVE_S 15

static const char csp[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'";

typedef struct job {
    struct job *next;
    struct evhttp_request *req; /* NULL once evhttp has freed it */
    bool gone;                  /* the client left; req is ours to free */
    api_request r;
    int status;
    json_t *body;
} job;

typedef struct server server;

typedef struct client {
    struct client *next;
    server *sv;
    struct evhttp_request *req;
    int64_t last; /* last operation id sent */
} client;

struct server {
    struct event_base *base;
    struct evhttp *http;
    sim *loop_sim, *worker_sim;
    const char *host;
    int port;
    char web_root[PATH_MAX]; /* "" = the embedded copy */
    client *clients;
    int64_t broadcast; /* last operation id broadcast */
    struct event *poll_ev, *done_ev, *progress_ev, *keepalive_ev, *sigint_ev, *sigterm_ev;
    /* the worker */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *queue, **queue_tail, *done;
    bool stop;
    api_cache cache;
    /* progress, written by the worker under mu */
    char p_what[32];
    uint64_t p_done, p_total;
    struct timespec p_last;
};

/* ---- small helpers ---- */

static void common_headers(struct evhttp_request *req, const char *type)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", type);
    evhttp_add_header(h, "Content-Security-Policy", csp);
    evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(h, "Referrer-Policy", "no-referrer");
    evhttp_add_header(h, "X-Frame-Options", "DENY");
}

/* evhttp would send a body given for HEAD: the answer to HEAD must carry
 * the headers of the GET, its length included, and no body.  Returns
 * whether the request is a HEAD (then the caller sends no body). */
static bool head_only(struct evhttp_request *req, size_t len)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD)
        return false;
    char n[32];
    snprintf(n, sizeof n, "%zu", len);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Length", n);
    return true;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    default: return "Internal Server Error";
    }
}

static void reply_json(struct evhttp_request *req, int status, json_t *body)
{
    common_headers(req, "application/json; charset=utf-8");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Cache-Control", "no-store");
    struct evbuffer *b = evbuffer_new();
    char *t = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (b && t) {
        evbuffer_add(b, t, strlen(t));
        evbuffer_add(b, "\n", 1);
    } else if (b) { /* never an empty answer, even out of memory */
        static const char fallback[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"could not build the answer\"}}\n";
        evbuffer_add(b, fallback, sizeof fallback - 1);
        status = 500;
    }
    if (b && head_only(req, evbuffer_get_length(b)))
        evbuffer_drain(b, evbuffer_get_length(b));
    evhttp_send_reply(req, status, reason(status), b);
    if (b)
        evbuffer_free(b);
    free(t);
}

static void reply_error(struct evhttp_request *req, int code, const char *msg)
{
    json_t *b = api_error_body(code, msg);
    reply_json(req, ringsim_status(code), b);
    json_decref(b);
}

static int ci_prefix(const char *s, const char *p)
{
    return strncasecmp(s, p, strlen(p)) == 0;
}

/* Whether a host[:port] from Host or Origin names this server. */
static bool host_ok(const server *sv, const char *h)
{
    if (!h)
        return true; /* HTTP/1.0 without Host: nothing to rebind */
    char name[256];
    const char *end;
    if (h[0] == '[') {
        end = strchr(h, ']');
        if (!end)
            return false;
        end++;
    } else {
        end = strchr(h, ':');
        if (!end)
            end = h + strlen(h);
    }
    size_t n = (size_t)(end - h);
    if (n == 0 || n >= sizeof name)
        return false;
    memcpy(name, h, n);
    name[n] = '\0';
    if (*end == ':') {
        char *e;
        long p = strtol(end + 1, &e, 10);
        if (*e || p != sv->port)
            return false;
    } else if (*end) {
        return false;
    }
    if (!strcasecmp(name, "localhost") || !strcasecmp(name, sv->host))
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, name, &a4) == 1)
        return true;
    if (name[0] == '[' && n > 2) {
        name[n - 1] = '\0';
        return inet_pton(AF_INET6, name + 1, &a6) == 1;
    }
    return false;
}

static bool origin_ok(const server *sv, const char *origin)
{
    if (!origin)
        return true;
    if (strncmp(origin, "http://", 7) != 0)
        return false;
    return host_ok(sv, origin + 7);
}

/* ---- SSE ---- */

/* When a client leaves before its answer is complete, evhttp detaches the
 * unfinished request from the connection and leaves it to us to free
 * (libevent's evhttp_connection_incoming_fail).  A request still attached
 * is freed by evhttp with its connection. */
static bool detached(struct evhttp_request *req)
{
    return evhttp_request_get_connection(req) == NULL;
}

static void client_close(struct evhttp_connection *con, void *arg)
{
    (void)con;
    client *gone = arg;
    for (client **c = &gone->sv->clients; *c; c = &(*c)->next)
        if (*c == gone) {
            *c = gone->next;
            break;
        }
    if (detached(gone->req))
        evhttp_request_free(gone->req);
    free(gone);
}

static void send_chunk(client *c, const char *text, size_t len)
{
    struct evbuffer *b = evbuffer_new();
    if (!b)
        return;
    evbuffer_add(b, text, len);
    evhttp_send_reply_chunk(c->req, b);
    evbuffer_free(b);
}

typedef struct sse_send {
    client *only; /* NULL = every client */
    server *sv;
} sse_send;

static int send_op(void *ud, const store_op *op)
{
    sse_send *s = ud;
    json_t *j = view_operation(op);
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!t)
        return 0;
    char *msg;
    int n = asprintf(&msg, "id: %lld\nevent: operation\ndata: %s\n\n", (long long)op->id, t);
    free(t);
    if (n < 0)
        return 0;
    for (client *c = s->only ? s->only : s->sv->clients; c; c = s->only ? NULL : c->next)
        if (c->last < op->id) {
            send_chunk(c, msg, (size_t)n);
            c->last = op->id;
        }
    free(msg);
    return 0;
}

/* Broadcast every operation committed since the last broadcast. */
static void broadcast_new(server *sv)
{
    rs_error err;
    sim_refresh(sv->loop_sim, NULL, &err);
    int64_t last = sim_last_op(sv->loop_sim);
    if (last <= sv->broadcast)
        return;
    sse_send s = {NULL, sv};
    store_ops_each(sim_store(sv->loop_sim), sv->broadcast, -1, send_op, &s, &err);
    sv->broadcast = last;
}

static void events_start(server *sv, struct evhttp_request *req)
{
    client *c = calloc(1, sizeof *c);
    if (!c) {
        reply_error(req, RINGSIM_ENOMEM, "out of memory");
        return;
    }
    broadcast_new(sv); /* so that "from now on" starts after everything sent */
    c->req = req;
    c->sv = sv;
    c->last = sv->broadcast;
    const char *lei = evhttp_find_header(evhttp_request_get_input_headers(req), "Last-Event-ID");
    if (lei && *lei) {
        char *end;
        long long v = strtoll(lei, &end, 10);
        if (!*end && v >= 0)
            c->last = v;
    }
    common_headers(req, "text/event-stream; charset=utf-8");
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Cache-Control", "no-store");
    evhttp_add_header(h, "X-Accel-Buffering", "no");
    evhttp_send_reply_start(req, 200, "OK");
    c->next = sv->clients;
    sv->clients = c;
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), client_close, c);
    send_chunk(c, "retry: 1000\n\n", 13);
    if (c->last < sv->broadcast) { /* resume: everything after Last-Event-ID */
        rs_error err;
        sse_send s = {c, sv};
        int64_t upto = sv->broadcast;
        store_ops_each(sim_store(sv->loop_sim), c->last, upto - c->last, send_op, &s, &err);
    }
}

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    for (client *c = sv->clients; c; c = c->next)
        send_chunk(c, ": keepalive\n\n", 13);
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
    pthread_mutex_lock(&sv->mu);
    json_t *j = json_pack("{s:s, s:I, s:I}", "type", sv->p_what, "done",
                          (json_int_t)sv->p_done, "total", (json_int_t)sv->p_total);
    pthread_mutex_unlock(&sv->mu);
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    char *msg;
    int n = t ? asprintf(&msg, "event: progress\ndata: %s\n\n", t) : -1;
    free(t);
    if (n < 0)
        return;
    for (client *c = sv->clients; c; c = c->next)
        send_chunk(c, msg, (size_t)n);
    free(msg);
}

/* ---- the worker ---- */

static int worker_progress(void *ud, const char *what, uint64_t done, uint64_t total)
{
    server *sv = ud;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&sv->mu);
    double dt = (double)(now.tv_sec - sv->p_last.tv_sec) +
                (double)(now.tv_nsec - sv->p_last.tv_nsec) / 1e9;
    bool send = dt >= 0.1 || done >= total;
    if (send) {
        snprintf(sv->p_what, sizeof sv->p_what, "%s", what);
        sv->p_done = done;
        sv->p_total = total;
        sv->p_last = now;
    }
    pthread_mutex_unlock(&sv->mu);
    if (send)
        event_active(sv->progress_ev, EV_READ, 0);
    return 0;
}

static void *worker_main(void *arg)
{
    server *sv = arg;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while (!sv->queue && !sv->stop)
            pthread_cond_wait(&sv->cv, &sv->mu);
        if (sv->stop)
            break;
        job *j = sv->queue;
        sv->queue = j->next;
        if (!sv->queue)
            sv->queue_tail = &sv->queue;
        pthread_mutex_unlock(&sv->mu);
        api_handle(sv->worker_sim, &sv->cache, &j->r, &j->status, &j->body);
        pthread_mutex_lock(&sv->mu);
        j->next = sv->done;
        sv->done = j;
        event_active(sv->done_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

static void job_gone(struct evhttp_connection *con, void *arg)
{
    (void)con;
    job *j = arg;
    if (detached(j->req))
        j->gone = true; /* ours: freed when the job is done */
    else
        j->req = NULL; /* evhttp frees it with the connection */
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
    /* Reverse to reply in completion order. */
    job *rev = NULL;
    while (list) {
        job *n = list->next;
        list->next = rev;
        rev = list;
        list = n;
    }
    broadcast_new(sv); /* the operation event goes out before its answer */
    while (rev) {
        job *j = rev;
        rev = j->next;
        if (j->gone) {
            evhttp_request_free(j->req);
        } else if (j->req) {
            evhttp_connection_set_closecb(evhttp_request_get_connection(j->req), NULL, NULL);
            reply_json(j->req, j->status, j->body);
        }
        json_decref(j->body);
        api_request_clear(&j->r);
        free(j);
    }
}

static void enqueue(server *sv, struct evhttp_request *req, api_request *r)
{
    job *j = calloc(1, sizeof *j);
    if (!j) {
        api_request_clear(r);
        reply_error(req, RINGSIM_ENOMEM, "out of memory");
        return;
    }
    j->req = req;
    j->r = *r;
    memset(r, 0, sizeof *r);
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), job_gone, j);
    pthread_mutex_lock(&sv->mu);
    *sv->queue_tail = j;
    sv->queue_tail = &j->next;
    pthread_cond_signal(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
}

/* ---- requests ---- */

static api_method method_of(struct evhttp_request *req)
{
    switch (evhttp_request_get_command(req)) {
    case EVHTTP_REQ_GET: return API_GET;
    case EVHTTP_REQ_HEAD: return API_HEAD;
    case EVHTTP_REQ_POST: return API_POST;
    case EVHTTP_REQ_PUT: return API_PUT;
    case EVHTTP_REQ_DELETE: return API_DELETE;
    default: return API_OTHER;
    }
}

static char *decode(const char *s, size_t n, int plus, size_t *len)
{
    char *tmp = strndup(s, n);
    if (!tmp)
        return NULL;
    char *d = evhttp_uridecode(tmp, plus, len);
    free(tmp);
    return d;
}

/* Split "/api/a/b?x=1&y=2" into decoded segments and parameters. */
static int parse_target(const char *uri, api_request *r, rs_error *err)
{
    const char *q = strchr(uri, '?');
    const char *frag = strchr(uri, '#');
    const char *pend = q ? q : frag ? frag : uri + strlen(uri);
    const char *p = uri + 5; /* after "/api/" */
    while (p < pend) {
        const char *slash = memchr(p, '/', (size_t)(pend - p));
        const char *e = slash ? slash : pend;
        if (r->nseg == API_MAX_SEGS)
            return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
        r->seg[r->nseg] = decode(p, (size_t)(e - p), 0, &r->seglen[r->nseg]);
        if (!r->seg[r->nseg])
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        r->nseg++;
        p = slash ? slash + 1 : pend;
        if (slash && p == pend) { /* trailing slash: an empty last segment */
            if (r->nseg == API_MAX_SEGS)
                return rs_fail(err, RINGSIM_ENOTFOUND, "no such API endpoint");
            r->seg[r->nseg] = strdup("");
            r->seglen[r->nseg++] = 0;
        }
    }
    if (!q)
        return 0;
    const char *s = q + 1, *qend = frag && frag > q ? frag : s + strlen(s);
    while (s < qend) {
        const char *amp = memchr(s, '&', (size_t)(qend - s));
        const char *e = amp ? amp : qend;
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (e > s) {
            api_param *np = realloc(r->params, (size_t)(r->nparams + 1) * sizeof *np);
            if (!np)
                return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            r->params = np;
            api_param *pp = &np[r->nparams];
            size_t nl;
            pp->name = decode(s, (size_t)((eq ? eq : e) - s), 1, &nl);
            pp->value = eq ? decode(eq + 1, (size_t)(e - eq - 1), 1, &pp->len) : strdup("");
            if (!eq)
                pp->len = 0;
            if (!pp->name || !pp->value) {
                free(pp->name);
                free(pp->value);
                return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            }
            r->nparams++;
        }
        s = amp ? amp + 1 : qend;
    }
    return 0;
}

static void read_body(struct evhttp_request *req, api_request *r)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    if (len == 0)
        return;
    if (len > API_MAX_BODY) {
        r->body_error = RINGSIM_ETOOBIG;
        snprintf(r->body_msg, sizeof r->body_msg, "request body is %zu bytes; the limit is 16 MiB",
                 len);
        return;
    }
    const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
    /* application/json, optionally with parameters (; charset=utf-8). */
    size_t tl = strlen("application/json");
    if (!ct || !ci_prefix(ct, "application/json") ||
        (ct[tl] != '\0' && ct[tl] != ';' && ct[tl] != ' ')) {
        r->body_error = RINGSIM_EJSON;
        snprintf(r->body_msg, sizeof r->body_msg,
                 "send the body as JSON with Content-Type: application/json");
        return;
    }
    const char *data = (const char *)evbuffer_pullup(in, -1);
    json_error_t je;
    r->body = json_loadb(data, len, JSON_ALLOW_NUL, &je);
    if (!r->body) {
        r->body_error = RINGSIM_EJSON;
        snprintf(r->body_msg, sizeof r->body_msg, "body is not valid JSON: %.100s (line %d)", je.text,
                 je.line);
    }
}

static void handle_api(server *sv, struct evhttp_request *req, const char *uri)
{
    api_request r;
    memset(&r, 0, sizeof r);
    rs_error err = {0, ""};
    r.method = method_of(req);
    api_place where;
    int rc = parse_target(uri, &r, &err);
    if (!rc)
        rc = api_classify(&r, &where, &err);
    if (!rc) {
        /* A body that is too big, not JSON or not labelled JSON is refused
         * on every route, also those that take no body: a cross-site
         * "simple request" must not reach a mutation. */
        read_body(req, &r);
        if (r.body_error)
            rc = rs_fail(&err, r.body_error, "%s", r.body_msg);
    }
    if (rc) {
        reply_error(req, rc, err.msg);
    } else if (where == API_EVENTS && r.method == API_HEAD) {
        common_headers(req, "text/event-stream; charset=utf-8");
        evhttp_send_reply(req, 200, "OK", NULL); /* the headers of the stream, no stream */
    } else if (where == API_EVENTS) {
        events_start(sv, req);
    } else if (where == API_WORKER) {
        enqueue(sv, req, &r);
    } else {
        int status;
        json_t *body;
        api_cache none = {-1, NULL}; /* the loop never travels in time */
        api_handle(sv->loop_sim, &none, &r, &status, &body);
        api_cache_clear(&none);
        reply_json(req, status, body);
        json_decref(body);
    }
    api_request_clear(&r);
}

static const char *mime(const char *path)
{
    const char *dot = strrchr(path, '.');
    static const char *const t[][2] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
        {".svg", "image/svg+xml"}, {".png", "image/png"}, {".ico", "image/x-icon"},
        {".json", "application/json; charset=utf-8"}, {".txt", "text/plain; charset=utf-8"},
        {".webmanifest", "application/manifest+json"}};
    for (size_t i = 0; dot && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(dot, t[i][0]))
            return t[i][1];
    return "application/octet-stream";
}

static void reply_static(struct evhttp_request *req, const char *type, const void *data,
                         size_t len)
{
    common_headers(req, type);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Cache-Control", "no-cache");
    struct evbuffer *b = evbuffer_new();
    if (b && !head_only(req, len))
        evbuffer_add(b, data, len);
    evhttp_send_reply(req, 200, "OK", b);
    if (b)
        evbuffer_free(b);
}

/* Errors always have API.md's form, for files too. */
static void not_found_page(struct evhttp_request *req)
{
    reply_error(req, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
}

static void handle_static(server *sv, struct evhttp_request *req, const char *uri)
{
    api_method m = method_of(req);
    if (m != API_GET && m != API_HEAD) {
        reply_error(req, RINGSIM_EMETHOD, "only GET and HEAD serve files");
        return;
    }
    size_t plen = strcspn(uri, "?#"), len;
    char *path = decode(uri, plen, 0, &len);
    if (!path || strlen(path) != len || strstr(path, "..") || path[0] != '/') {
        free(path);
        not_found_page(req);
        return;
    }
    const char *name = strcmp(path, "/") == 0 ? "/index.html" : path;
    if (!sv->web_root[0]) {
        for (const web_asset *a = web_assets; a->path; a++)
            if (!strcmp(a->path, name)) {
                reply_static(req, mime(name), a->data, a->len);
                free(path);
                return;
            }
        free(path);
        not_found_page(req);
        return;
    }
    char full[PATH_MAX * 2], real[PATH_MAX];
    snprintf(full, sizeof full, "%s%s", sv->web_root, name);
    FILE *f = NULL;
    struct stat st;
    size_t rl = strlen(sv->web_root);
    if (realpath(full, real) && strncmp(real, sv->web_root, rl) == 0 && real[rl] == '/' &&
        stat(real, &st) == 0 && S_ISREG(st.st_mode))
        f = fopen(real, "rb");
    char *data = f ? malloc((size_t)st.st_size + 1) : NULL;
    if (!f || !data || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        if (f)
            fclose(f);
        free(data);
        free(path);
        not_found_page(req);
        return;
    }
    fclose(f);
    reply_static(req, mime(name), data, (size_t)st.st_size);
    free(data);
    free(path);
}

static void on_request(struct evhttp_request *req, void *arg)
{
    server *sv = arg;
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    if (!host_ok(sv, evhttp_find_header(in, "Host")) ||
        !origin_ok(sv, evhttp_find_header(in, "Origin"))) {
        reply_error(req, RINGSIM_EFORBIDDEN, "this server answers only to its own address");
        return;
    }
    const char *uri = evhttp_request_get_uri(req);
    if (!strncmp(uri, "/api/", 5))
        handle_api(sv, req, uri);
    else if (!strcmp(uri, "/api") || !strncmp(uri, "/api?", 5))
        reply_error(req, RINGSIM_ENOTFOUND, "no such API endpoint");
    else
        handle_static(sv, req, uri);
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    event_base_loopexit(sv->base, NULL);
}

int api_serve(const char *db, const char *host, int port, const char *web_dir)
{
    server sv;
    memset(&sv, 0, sizeof sv);
    sv.host = host;
    sv.port = port;
    sv.queue_tail = &sv.queue;
    sv.cache.at = -1;
    rs_error err = {0, ""};
    int rc = 1;
    bool thread = false;
    signal(SIGPIPE, SIG_IGN);
    if (web_dir && !realpath(web_dir, sv.web_root)) {
        fprintf(stderr, "ringsim: cannot open web folder %s: %s\n", web_dir, strerror(errno));
        return 1;
    }
    evthread_use_pthreads();
    pthread_mutex_init(&sv.mu, NULL);
    pthread_cond_init(&sv.cv, NULL);
    if (sim_open(&sv.loop_sim, db, &err) || sim_open(&sv.worker_sim, db, &err)) {
        fprintf(stderr, "ringsim: %s\n", err.msg);
        goto out;
    }
    if (sim_read_only(sv.loop_sim))
        fprintf(stderr, "ringsim: database %s is read-only: %s; serving it read-only\n", db,
                sim_read_only(sv.loop_sim));
    sim_set_progress(sv.worker_sim, worker_progress, &sv);
    sv.broadcast = sim_last_op(sv.loop_sim);
    sv.base = event_base_new();
    sv.http = sv.base ? evhttp_new(sv.base) : NULL;
    if (!sv.http) {
        fprintf(stderr, "ringsim: cannot start the event loop\n");
        goto out;
    }
    evhttp_set_max_body_size(sv.http, HARD_BODY_LIMIT);
    evhttp_set_allowed_methods(sv.http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                            EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
    evhttp_set_gencb(sv.http, on_request, &sv);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(sv.http, host, (ev_uint16_t)port);
    if (!bs) {
        fprintf(stderr, "ringsim: cannot listen on %s:%d: %s\n", host, port, strerror(errno));
        goto out;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl = sizeof ss;
    if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl) == 0)
        sv.port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    struct timeval poll = {0, POLL_MS * 1000}, ka = {KEEPALIVE_S, 0};
    sv.poll_ev = event_new(sv.base, -1, EV_PERSIST, on_poll, &sv);
    sv.keepalive_ev = event_new(sv.base, -1, EV_PERSIST, on_keepalive, &sv);
    sv.done_ev = event_new(sv.base, -1, 0, on_done, &sv);
    sv.progress_ev = event_new(sv.base, -1, 0, on_progress, &sv);
    sv.sigint_ev = evsignal_new(sv.base, SIGINT, on_signal, &sv);
    sv.sigterm_ev = evsignal_new(sv.base, SIGTERM, on_signal, &sv);
    if (!sv.poll_ev || !sv.keepalive_ev || !sv.done_ev || !sv.progress_ev || !sv.sigint_ev ||
        !sv.sigterm_ev || event_add(sv.poll_ev, &poll) || event_add(sv.keepalive_ev, &ka) ||
        event_add(sv.sigint_ev, NULL) || event_add(sv.sigterm_ev, NULL)) {
        fprintf(stderr, "ringsim: cannot set up events\n");
        goto out;
    }
    if (pthread_create(&sv.thread, NULL, worker_main, &sv)) {
        fprintf(stderr, "ringsim: cannot start the worker thread\n");
        goto out;
    }
    thread = true;
    const char *shown = strchr(host, ':') ? "[%s]" : "%s";
    char hbuf[300];
    snprintf(hbuf, sizeof hbuf, shown, host);
    printf("ringsim: serving http://%s:%d/ (database %s%s%s)\n", hbuf, sv.port, db,
           sv.web_root[0] ? ", web files from " : "", sv.web_root);
    fflush(stdout);
    event_base_dispatch(sv.base);
    rc = 0;
out:
    if (thread) {
        pthread_mutex_lock(&sv.mu);
        sv.stop = true;
        pthread_cond_signal(&sv.cv);
        pthread_mutex_unlock(&sv.mu);
        pthread_join(sv.thread, NULL);
    }
    /* Freeing evhttp closes every connection; their close callbacks unlink
     * the SSE clients and mark the jobs whose client has gone. */
    if (sv.http)
        evhttp_free(sv.http);
    if (sv.loop_sim) /* (no jobs, and no sim to broadcast from, when opening failed) */
        on_done(-1, 0, &sv); /* frees finished jobs (no reply: nobody is left) */
    while (sv.queue) { /* jobs the worker never started */
        job *j = sv.queue;
        sv.queue = j->next;
        if (j->gone)
            evhttp_request_free(j->req);
        api_request_clear(&j->r);
        free(j);
    }
    while (sv.clients) {
        client *c = sv.clients;
        sv.clients = c->next;
        free(c);
    }
    struct event *evs[] = {sv.poll_ev,     sv.keepalive_ev, sv.done_ev,
                           sv.progress_ev, sv.sigint_ev,    sv.sigterm_ev};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (evs[i]) /* event_free does not accept NULL (opening may have failed) */
            event_free(evs[i]);
    if (sv.base)
        event_base_free(sv.base);
    api_cache_clear(&sv.cache);
    sim_close(sv.worker_sim);
    sim_close(sv.loop_sim);
    pthread_mutex_destroy(&sv.mu);
    pthread_cond_destroy(&sv.cv);
    libevent_global_shutdown();
    return rc;
}
