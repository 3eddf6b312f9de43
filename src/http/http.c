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
 * JSON.  Here the transport only moves bytes; what a request is is decided
 * by http_parse.c (bytes and limits), whether it may pass by http_gate.c
 * (Host, Origin, token, route, body); both are fuzzed.
 *
 * The rooms (http_int.h): this file starts and stops the server;
 * http_conn.c holds the connections, http_sse.c the event stream and the
 * refresher, http_workers.c the two workers.
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
#include "http_int.h"

/* ---- stopping ---- */

void http__maybe_stopped(server *sv)
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
            http__job_answer(j, RINGSIM_EUNAVAILABLE, "the server is stopping");
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
        http__conn_close(c);
    }
    struct timeval grace = {sv->lim.stop_grace_ms / 1000, (sv->lim.stop_grace_ms % 1000) * 1000};
    evtimer_add(sv->grace_ev, &grace);
    http__maybe_stopped(sv);
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
        l = evconnlistener_new_bind(sv->base, http__on_accept, sv,
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
        sim_set_progress(sv.w[i].sim, http__worker_progress, &sv.w[i]);
    /* The loop's first read must not build a workload's cache either. */
    if (sim_workload_warm(sv.loop_sim, &err))
        fprintf(stderr, "ringsim: cannot build the workload's figures (%s)\n", err.msg);
    sv.broadcast = sim_last_op(sv.loop_sim);
    sv.base = event_base_new();
    if (!sv.base) {
        fprintf(stderr, "ringsim: cannot start the event loop\n");
        goto out;
    }
    sv.lev = listen_on(&sv, host, o->port);
    if (!sv.lev)
        goto out;
    evconnlistener_set_error_cb(sv.lev, http__on_accept_error);
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
    sv.poll_ev = event_new(sv.base, -1, EV_PERSIST, http__on_poll, &sv);
    sv.keepalive_ev = event_new(sv.base, -1, EV_PERSIST, http__on_keepalive, &sv);
    sv.done_ev = event_new(sv.base, -1, 0, http__on_done, &sv);
    sv.progress_ev = event_new(sv.base, -1, 0, http__on_progress, &sv);
    sv.refresh_ev = event_new(sv.base, -1, 0, http__on_refreshed, &sv);
    sv.backoff_ev = evtimer_new(sv.base, http__on_backoff, &sv);
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
        if (pthread_create(&sv.w[i].thread, NULL, http__worker_main, &sv.w[i])) {
            fprintf(stderr, "ringsim: cannot start the worker threads\n");
            goto out;
        }
        sv.w[i].started = true;
    }
    if (pthread_create(&sv.refresher, NULL, http__refresher_main, &sv)) {
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
            http__job_free(j);
        }
    sv.stopping = false; /* closing below is not stopping anew */
    while (sv.conns)
        http__conn_close(sv.conns);
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
