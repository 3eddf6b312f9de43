/*
 * cmd_trace.c - `ringsim trace FILE|-`: a request log replayed through the
 * current placement (docs/api.md v4, "replay your own traffic").
 *
 * The handler reads the options into a reader's options (trace_read.h) and
 * the replay's parameters (trace.h), opens the file, and prints the answer:
 * the API's JSON with --json, else a table of nodes, the totals, the
 * changes, and the series drawn as two lines of bars (requests, and the
 * hit ratio with a cache).  On a terminal, stderr shows the progress: bytes
 * read, requests per second, and the time left when the file's size is
 * known.  Cost: the replay's (trace.h); memory does not grow with the log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "plan.h"
#include "trace.h"
#include "trace_read.h"

typedef struct progress {
    bool on;
    uint64_t size; /* the file's bytes, 0 when unknown */
    double t0, last;
} progress;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int show_progress(void *ud, uint64_t bytes, uint64_t requests)
{
    progress *p = ud;
    if (!p->on)
        return 0;
    double t = now_s();
    if (t - p->last < 0.2)
        return 0;
    p->last = t;
    double el = t - p->t0, rate = el > 0 ? (double)requests / el : 0;
    fprintf(stderr, "\r  %.1f MiB", (double)bytes / 1048576.0);
    if (p->size)
        fprintf(stderr, " of %.1f MiB (%.0f%%)", (double)p->size / 1048576.0,
                100.0 * (double)bytes / (double)p->size);
    fprintf(stderr, ", %.0f requests/s", rate);
    if (p->size && bytes > 0 && bytes < p->size) {
        double eta = el * (double)(p->size - bytes) / (double)bytes;
        fprintf(stderr, ", %d:%02d left", (int)(eta / 60), (int)fmod(eta, 60));
    }
    fprintf(stderr, "   ");
    fflush(stderr);
    return 0;
}

/* Bars for a series of values in [0, max]: one character each. */
static void bars(FILE *out, const char *label, const double *v, size_t n, double max)
{
    static const char *const b[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    fprintf(out, "  %-10s ", label);
    for (size_t i = 0; i < n; i++) {
        int k = max > 0 && isfinite(v[i]) ? (int)lround(8 * v[i] / max) : 0;
        fputs(b[k < 0 ? 0 : k > 8 ? 8 : k], out);
    }
    fputc('\n', out);
}

static void print_time(FILE *out, double t)
{
    time_t s = (time_t)floor(t);
    struct tm tm;
    char buf[40];
    if (t > 1e8 && gmtime_r(&s, &tm) && strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
        fputs(buf, out);
    else
        fprintf(out, "%.0f", t);
}

static void print_text(FILE *out, json_t *j)
{
    json_int_t req = json_integer_value(json_object_get(j, "requests"));
    const char *comp = json_string_value(json_object_get(j, "compression"));
    fprintf(out, "%s%s%s, %lld requests, %lld distinct keys%s",
            json_string_value(json_object_get(j, "format")), strcmp(comp, "none") ? " " : "",
            strcmp(comp, "none") ? comp : "", (long long)req,
            (long long)json_integer_value(json_object_get(j, "unique_keys")),
            json_is_true(json_object_get(j, "unique_keys_estimated")) ? " (estimated)" : "");
    json_t *st = json_object_get(j, "start");
    if (json_is_number(st)) {
        fprintf(out, ", ");
        print_time(out, json_number_value(st));
        fprintf(out, " to ");
        print_time(out, json_number_value(json_object_get(j, "end")));
    }
    fprintf(out, ", %s\n", json_string_value(json_object_get(j, "algorithm")));
    json_t *note = json_object_get(j, "note");
    if (json_is_string(note))
        fprintf(out, "note: %s\n", json_string_value(note));
    bool cache = json_is_object(json_object_get(j, "cache"));
    json_t *nodes = json_object_get(j, "nodes"), *e;
    size_t i, w = cmd_column_width(nodes, "name", 4);
    fprintf(out, "  ");
    cmd_print_padded(out, "Node", w);
    fprintf(out, " %12s %7s %14s %10s %8s %9s", "Requests", "Share", "Bytes", "Keys", "Peak/s",
            "Load/fair");
    if (cache)
        fprintf(out, " %7s", "Hit %");
    fprintf(out, "\n");
    json_array_foreach(nodes, i, e)
    {
        json_int_t r = json_integer_value(json_object_get(e, "requests"));
        json_t *lf = json_object_get(e, "load_over_fair"), *pk = json_object_get(e, "peak_rate");
        const char *state = json_string_value(json_object_get(e, "state"));
        fprintf(out, "  ");
        cmd_print_padded(out, json_string_value(json_object_get(e, "name")), w);
        fprintf(out, " %12lld %6.2f%% %14lld %10lld", (long long)r,
                req ? 100.0 * (double)r / (double)req : 0.0,
                (long long)json_integer_value(json_object_get(e, "bytes")),
                (long long)json_integer_value(json_object_get(e, "unique_keys")));
        if (json_is_integer(pk))
            fprintf(out, " %8lld", (long long)json_integer_value(pk));
        else
            fprintf(out, " %8s", "-");
        if (json_is_number(lf))
            fprintf(out, " %9.4f", json_number_value(lf));
        else
            fprintf(out, " %9s", "-");
        if (cache) {
            json_t *hr = json_object_get(e, "hit_ratio");
            if (json_is_number(hr))
                fprintf(out, " %6.2f%%", 100 * json_number_value(hr));
            else
                fprintf(out, " %7s", "-");
        }
        if (strcmp(state, "up"))
            fprintf(out, "  (%s)", state);
        else if (json_is_true(json_object_get(e, "added")))
            fprintf(out, "  (added)");
        fprintf(out, "\n");
    }
    json_t *mom = json_object_get(j, "max_over_mean");
    if (json_is_number(mom))
        fprintf(out, "requests max/mean %.4f (against fair shares)", json_number_value(mom));
    else
        fprintf(out, "requests max/mean -");
    if (cache) {
        json_t *hr = json_object_get(j, "hit_ratio");
        json_t *c = json_object_get(j, "cache");
        fprintf(out, ", cache %lld %s a node: hit ratio ",
                (long long)json_integer_value(json_object_get(c, "size")),
                json_string_value(json_object_get(c, "unit")));
        if (json_is_number(hr))
            fprintf(out, "%.2f%%", 100 * json_number_value(hr));
        else
            fprintf(out, "-");
    }
    fprintf(out, "\n");
    json_int_t uns = json_integer_value(json_object_get(j, "unserved"));
    if (uns)
        fprintf(out, "unavailable: %lld requests (%.2f%%) unserved: no node could serve their keys\n",
                (long long)uns, req ? 100.0 * (double)uns / (double)req : 0.0);
    json_int_t bad = json_integer_value(json_object_get(j, "bad_lines"));
    if (bad)
        fprintf(out, "bad lines: %lld skipped (the first is line %lld)\n", (long long)bad,
                (long long)json_integer_value(json_object_get(j, "first_bad_line")));
    json_array_foreach(json_object_get(j, "changes"), i, e)
    {
        fprintf(out, "change: %s ", json_string_value(json_object_get(e, "op")));
        if (json_is_true(json_object_get(e, "applied"))) {
            fprintf(out, "before request %lld",
                    (long long)json_integer_value(json_object_get(e, "request")));
            json_t *t = json_object_get(e, "time");
            if (json_is_number(t)) {
                fprintf(out, " (");
                print_time(out, json_number_value(t));
                fprintf(out, ")");
            }
            fprintf(out, "\n");
        } else {
            fprintf(out, "not applied: the log ended first\n");
        }
    }
    json_t *ser = json_object_get(j, "series"), *pts = json_object_get(ser, "points");
    size_t n = json_array_size(pts);
    if (n) {
        double *v = calloc(n, sizeof *v), max = 0;
        if (v) {
            fprintf(out, "series: %zu intervals of %g %s\n", n,
                    json_number_value(json_object_get(ser, "interval")),
                    strcmp(json_string_value(json_object_get(ser, "by")), "time") ? "requests"
                                                                                  : "seconds");
            json_array_foreach(pts, i, e)
            {
                v[i] = (double)json_integer_value(json_object_get(e, "requests"));
                max = v[i] > max ? v[i] : max;
            }
            bars(out, "requests", v, n, max);
            if (cache) {
                json_array_foreach(pts, i, e)
                {
                    json_t *hr = json_object_get(e, "hit_ratio");
                    v[i] = json_is_number(hr) ? json_number_value(hr) : NAN;
                }
                bars(out, "hit ratio", v, n, 1);
            }
            free(v);
        }
    }
    fprintf(out, "nothing was recorded\n");
}

/* How to read the log, from the line's --format, --key and columns. */
static int read_opts(cmd_ctx *c, trace_opts *o)
{
    const cmd_line *l = c->l;
    int rc;
    memset(o, 0, sizeof *o);
    if (l->opt[CMD_O_FORMAT] && (rc = trace_format_parse(l->opt[CMD_O_FORMAT], &o->format, &c->err)))
        return rc;
    if (l->opt[CMD_O_KEY] && (rc = trace_key_parse(l->opt[CMD_O_KEY], &o->key, &c->err)))
        return rc;
    o->key_col = l->opt[CMD_O_KEY_COL];
    o->size_col = l->opt[CMD_O_SIZE_COL];
    o->time_col = l->opt[CMD_O_TIME_COL];
    o->op_col = l->opt[CMD_O_OP_COL];
    return 0;
}

int cmd__trace(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    trace_opts o;
    trace_params p = {0};
    trace_change ch[TRACE_MAX_CHANGES];
    int rc;
    if ((rc = read_opts(c, &o)))
        return rc;
    if (l->opt[CMD_O_CACHE] &&
        (rc = trace_cache_parse(l->opt[CMD_O_CACHE], &p.cache, &p.cache_objects, &c->err)))
        return rc;
    if (l->opt[CMD_O_INTERVAL] && (cmd_parse_number(l->opt[CMD_O_INTERVAL], &p.interval) ||
                                   !(p.interval > 0) || p.interval > 1e15))
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--interval must be a number above 0, not \"%.64s\"", l->opt[CMD_O_INTERVAL]);
    if (l->nchanges > TRACE_MAX_CHANGES)
        return rs_fail(&c->err, RINGSIM_EPARAM, "at most %d --change in one replay",
                       TRACE_MAX_CHANGES);
    for (int i = 0; i < l->nchanges; i++)
        if ((rc = trace_change_parse(l->changes[2 * i], l->changes[2 * i + 1], &ch[i], &c->err)))
            return rc;
    p.changes = ch;
    p.nchanges = (size_t)l->nchanges;
    const char *path = l->args[0];
    bool std = !strcmp(path, "-");
    int fd = std ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return rs_fail(&c->err, RINGSIM_EPARAM, "cannot open %.200s: %s", path, strerror(errno));
    progress pr = {.on = isatty(2) && c->out, .t0 = now_s()};
    struct stat sb;
    if (!fstat(fd, &sb) && S_ISREG(sb.st_mode))
        pr.size = (uint64_t)sb.st_size;
    trace_reader *r = NULL;
    json_t *j = NULL;
    rc = trace_reader_open(&r, fd, std ? "standard input" : path, &o, &c->err);
    if (!rc)
        rc = trace_run(c->s, r, &p, show_progress, &pr, &j, &c->err);
    if (pr.on && pr.last > 0)
        fprintf(stderr, "\r\033[K");
    trace_reader_free(r);
    if (!std)
        close(fd);
    if (rc)
        return rc;
    if (c->out) {
        if (l->opt[CMD_O_JSON])
            cmd__print_json(c->out, j);
        else
            print_text(c->out, j);
    }
    json_decref(j);
    return 0;
}

/* plan --max-load L [--log FILE ...] [--steps N] [--algorithm A ...]: the
 * capacity what-if (src/sim/plan.c); a table of steps for people. */
int cmd__plan(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    plan_params p = {.max_steps = 64};
    int rc;
    if (cmd_parse_number(l->opt[CMD_O_MAX_LOAD], &p.max_load) || !(p.max_load >= 1) ||
        p.max_load > 1e6)
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--max-load must be a number of at least 1, not \"%.64s\"",
                       l->opt[CMD_O_MAX_LOAD]);
    if (l->opt[CMD_O_STEPS]) {
        uint64_t v;
        if (cmd__parse_u64(l->opt[CMD_O_STEPS], &v) || v < 1 || v > PLAN_MAX_STEPS)
            return rs_fail(&c->err, RINGSIM_EPARAM,
                           "--steps must be a whole number from 1 to %u, not \"%.64s\"",
                           PLAN_MAX_STEPS, l->opt[CMD_O_STEPS]);
        p.max_steps = (uint32_t)v;
    }
    place_config cfg = *sim_config(c->s);
    const char *alg = l->opt[CMD_O_ALGORITHM];
    if (alg && strcmp(alg, cfg.algorithm))
        place_config_default(&cfg); /* another algorithm: its own defaults */
    if ((rc = cmd_config_apply(l, &cfg, &c->err)) || (rc = place_config_check(&cfg, &c->err)))
        return rc;
    p.cfg = &cfg;
    trace_reader *r = NULL;
    int fd = -1;
    bool std = false;
    if (l->opt[CMD_O_LOG]) {
        trace_opts o;
        if ((rc = read_opts(c, &o)))
            return rc;
        const char *path = l->opt[CMD_O_LOG];
        std = !strcmp(path, "-");
        fd = std ? 0 : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return rs_fail(&c->err, RINGSIM_EPARAM, "cannot open %.200s: %s", path, strerror(errno));
        struct stat sb;
        if (!fstat(fd, &sb) && S_ISREG(sb.st_mode))
            p.log_size = (uint64_t)sb.st_size;
        if ((rc = trace_reader_open(&r, fd, std ? "standard input" : path, &o, &c->err))) {
            if (!std)
                close(fd);
            return rc;
        }
        p.log = r;
    } else if (l->opt[CMD_O_FORMAT] || l->opt[CMD_O_KEY] || l->opt[CMD_O_KEY_COL]) {
        return rs_fail(&c->err, RINGSIM_EPARAM, "--format, --key and the columns read a --log");
    }
    json_t *j = NULL;
    rc = plan_run(c->s, &p, &j, &c->err);
    trace_reader_free(r);
    if (fd > 0)
        close(fd);
    if (rc)
        return rc;
    FILE *out = c->out;
    if (out && l->opt[CMD_O_JSON]) {
        cmd__print_json(out, j);
    } else if (out) {
        json_t *hk = json_object_get(j, "hottest_key");
        fprintf(
            out, "%s, %s: %lld keys, the hottest %.4f%% of the requests; busiest at most %g x fair\n",
            json_string_value(json_object_get(j, "algorithm")),
            !strcmp(json_string_value(json_object_get(j, "source")), "log") ? "the log's requests"
                                                                            : "the workload",
            (long long)json_integer_value(json_object_get(j, "keys")),
            100 * json_number_value(json_object_get(hk, "share")), p.max_load);
        fprintf(out, "  %5s  %-20s %10s  %-20s %12s %9s\n", "Nodes", "Added", "Max/fair", "Busiest",
                "Keys moved", "Req moved");
        json_t *e;
        size_t i;
        json_array_foreach(json_object_get(j, "steps"), i, e)
        {
            json_t *a = json_object_get(e, "added"), *m = json_object_get(e, "max_over_mean");
            fprintf(out, "  %5lld  ", (long long)json_integer_value(json_object_get(e, "nodes")));
            cmd_print_padded(out, json_is_string(a) ? json_string_value(a) : "(now)", 20);
            fprintf(out, " %10.4f  ", json_is_number(m) ? json_number_value(m) : NAN);
            cmd_print_padded(out, json_string_value(json_object_get(e, "busiest")), 20);
            fprintf(out, " %12lld %8.2f%%\n",
                    (long long)json_integer_value(json_object_get(e, "keys_moved")),
                    100 * json_number_value(json_object_get(e, "requests_moved")));
        }
        json_t *en = json_object_get(j, "enough");
        if (json_is_integer(en))
            fprintf(out, "%lld nodes keep the busiest at or under %g x its fair share\n",
                    (long long)json_integer_value(en), p.max_load);
        else
            fprintf(out, "no plan: %s\n", json_string_value(json_object_get(j, "reason")));
        fprintf(out, "nothing was recorded\n");
    }
    json_decref(j);
    return 0;
}
