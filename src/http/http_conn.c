/*
 * http_conn.c - the connections of `ringsim serve` (see http.c for the
 * design): answers with their headers, accept and its back-off when file
 * descriptors run out, the timers of each state, static files, and reading
 * a request -- its head through http_parse.c and http_gate.c, its body
 * within the budget -- before handing it to the loop or a worker.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <fcntl.h>
#include <unistd.h>

static void on_read(struct bufferevent *bev, void *arg);

/* ---- answers ---- */

static const char security_headers[] =
    "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "X-Frame-Options: DENY\r\n";

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

bool http__is_head(const conn *c) { return c->have_head && c->h.method == HTTP_HEAD; }

/* Status line and headers; the body's length is len (sent unless HEAD). */
void http__start_answer(conn *c, int status, const char *type, const char *extra, size_t len,
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
void http__finish(conn *c)
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
    http__start_answer(c, status, type, extra, len, true);
    if (!http__is_head(c) && len)
        evbuffer_add(bufferevent_get_output(c->bev), data, len);
}

void http__answer_json(conn *c, int status, json_t *body)
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
    http__start_answer(c, status, "application/json; charset=utf-8", extra, n + 1, true);
    c->sv->trim_due |= n > TRIM_OVER;
    if (!http__is_head(c)) {
        struct evbuffer *out = bufferevent_get_output(c->bev);
        evbuffer_add(out, text, n);
        evbuffer_add(out, "\n", 1);
    }
    free(t);
}

/* An API answer: JSON, or the text of an export (CSV, a scenario file). */
void http__answer(conn *c, api_answer *a)
{
    if (a->file) { /* sent from the file by the kernel, never read in */
        http__start_answer(c, a->status, a->content_type, "Cache-Control: no-store\r\n",
                           a->file_len, true);
        if (http__is_head(c) || !a->file_len)
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
        http__answer_json(c, a->status, a->body);
}

void http__answer_error(conn *c, int code, const char *msg)
{
    json_t *b = api_error_body(code, msg);
    http__answer_json(c, ringsim_status(code), b);
    json_decref(b);
}

/* Refuse what cannot be read on (bad framing, too big, too slow): answer,
 * then close once the answer is out. */
static void fail(conn *c, int code, const char *msg)
{
    c->keep = false;
    http__answer_error(c, code, msg);
    http__finish(c);
}

/* ---- connections ---- */

static void arm(conn *c, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
}

void http__body_free(conn *c)
{
    if (c->spool) {
        close(c->spool_fd);
        c->spool = false;
    }
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
void http__conn_close(conn *c)
{
    server *sv = c->sv;
    if (!c->bev)
        return;
    if (c->job && c->job->read)
        http__abandon(c);
    http_request_clear(&c->req);
    bufferevent_free(c->bev);
    c->bev = NULL;
    event_free(c->timer);
    c->timer = NULL;
    http__body_free(c);
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
    http__maybe_stopped(sv);
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
            http__conn_close(c); /* idle */
        }
        break;
    case C_BODY:
        snprintf(msg, sizeof msg, "the request body did not arrive within %d ms",
                 c->sv->lim.body_timeout_ms);
        http__body_free(c);
        fail(c, RINGSIM_ETIMEOUT, msg);
        break;
    default:
        http__conn_close(c);
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
    http__maybe_stopped(c->sv);
}

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
        http__conn_close(c);
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
        http__sse_resume(c); /* the last page is out: the next one */
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
    http__conn_close(c); /* EOF mid-body or on a stream, an error, or an answer not read in time */
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

void http__on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int socklen,
                     void *arg)
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
void http__on_accept_error(struct evconnlistener *l, void *arg)
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

void http__on_backoff(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    server *sv = arg;
    if (sv->lev)
        evconnlistener_enable(sv->lev);
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
        http__answer_error(c, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
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
        http__answer_error(c, RINGSIM_ENOTFOUND, "no such file; the simulator is at /");
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
    if (c->spool) { /* the file goes with the request, read from its start */
        lseek(c->spool_fd, 0, SEEK_SET);
        req->api.spooled = true;
        req->api.body_fd = c->spool_fd;
        c->spool = false;
        c->blen = 0;
    }
    if (req->kind == HTTP_TO_FILE) {
        serve_file(c, req->path);
        http__finish(c);
    } else if (req->where == API_EVENTS) {
        http__events_start(c);
    } else if (req->where == API_CANCEL) {
        http__cancel_running(c);
    } else if ((req->where == API_WORKER || req->where == API_READER) && sv->stopping) {
        http__body_free(c);
        http__answer_error(c, RINGSIM_EUNAVAILABLE, "the server is stopping");
        http__finish(c);
    } else if (req->where == API_WORKER || req->where == API_READER) {
        http__enqueue(c, &sv->w[req->where == API_WORKER ? W_OPS : W_READ], &req->api);
        http_request_clear(req);
    } else { /* a fast read: no route on the loop takes a body */
        api_answer a;
        api_cache none = API_CACHE_INIT; /* the loop never travels in time */
        none.light = true;               /* nor builds a layout */
        api_respond(sv->loop_sim, &none, &req->api, &a);
        api_cache_clear(&none);
        http__answer(c, &a);
        api_answer_clear(&a);
        http__finish(c);
    }
}

/* An unlinked temporary file for a spooled body: 0, or -1 with errno. */
static int spool_open(conn *c)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* a file system without O_TMPFILE */
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/ringsim-trace.XXXXXX", dir);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0)
        return -1;
    c->spool = true;
    c->spool_fd = fd;
    return 0;
}

/* Body bytes to the spool file: 0, or a code after answering. */
static int spool_write(conn *c, const char *d, size_t n)
{
    while (n) {
        ssize_t w = write(c->spool_fd, d, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            http__body_free(c);
            fail(c, RINGSIM_EFULL, "the server cannot store the upload (its disk is full)");
            return RINGSIM_EFULL;
        }
        d += w;
        n -= (size_t)w;
        c->blen += (size_t)w;
    }
    return 0;
}

static void read_body(conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t len;
    rs_error err = {0, ""};
    if (c->spool) /* a long upload: the timeout is for silence, not the whole */
        arm(c, c->sv->lim.body_timeout_ms);
    while (c->state == C_BODY && (len = evbuffer_get_length(in)) > 0) {
        int rc;
        if (c->spool) {
            char buf[65536];
            size_t n = len < sizeof buf ? len : sizeof buf;
            if (!c->h.chunked) {
                size_t want = (size_t)c->h.content_length - c->blen;
                n = n < want ? n : want;
                evbuffer_remove(in, buf, n);
                if (spool_write(c, buf, n))
                    return;
                if (c->blen == (size_t)c->h.content_length)
                    complete(c);
                continue;
            }
            const char *p = (const char *)evbuffer_pullup(in, (ev_ssize_t)n), *d;
            size_t dl;
            ssize_t used = http_chunked_feed(&c->ck, p, n, &d, &dl, &err);
            if (used < 0) {
                http__body_free(c);
                fail(c, (int)used, err.msg);
                return;
            }
            if (dl && spool_write(c, d, dl))
                return;
            evbuffer_drain(in, (size_t)used);
            if (c->ck.done)
                complete(c);
            continue;
        }
        if (c->h.chunked) {
            size_t n = len < 65536 ? len : 65536;
            const char *p = (const char *)evbuffer_pullup(in, (ev_ssize_t)n), *d;
            size_t dl;
            ssize_t used = http_chunked_feed(&c->ck, p, n, &d, &dl, &err);
            if (used < 0) {
                http__body_free(c);
                fail(c, (int)used, err.msg);
                return;
            }
            if (dl && (rc = body_reserve(c, c->blen + dl, false))) {
                http__body_free(c);
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
        http__answer_error(c, rc, err.msg);
        http__finish(c);
        return;
    }
    if (c->h.has_body) {
        c->state = C_BODY;
        c->blen = 0;
        if (c->req.kind == HTTP_TO_API && api_spools(&c->req.api) && spool_open(c)) {
            c->keep = false;
            fail(c, RINGSIM_EINTERNAL, "the server cannot make a temporary file for the upload");
            return;
        }
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
