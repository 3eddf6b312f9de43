/*
 * cmd.c - the command table, the parser and the handlers of the commands
 * that run on the engine (see cmd.h).
 *
 * A handler prints for people, or with --json exactly the JSON of the
 * matching API answer, or with --csv the same objects as CSV (view.c owns
 * every shape; csv.c writes them).  Lists that may hold millions of rows
 * (`key ls`, `log ID`) stream: one object at a time, never the whole list.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "export_config.h"
#include "import_face.h"
#include "keyfile.h"
#include "names.h"
#include "traffic.h"
#include "view.h"
#include "workload.h"

const cmd_option cmd_options[CMD_O_COUNT] = {
    [CMD_O_DB] = {"db", "PATH", "the database (default $RINGSIM_DB, or ./ringsim.db)"},
    [CMD_O_JSON] = {"json", NULL, "print the API's JSON answer"},
    [CMD_O_CSV] = {"csv", NULL, "print the list as CSV (RFC 4180, a header row of the JSON fields)"},
    [CMD_O_WEIGHT] = {"weight", "W",
                      "the node's weight, a number above 0, or 0 under haproxy (default 1)"},
    [CMD_O_TOKENS] = {"tokens", "T,T,...",
                      "explicit signed 64-bit tokens (Cassandra's initial_token)"},
    [CMD_O_ID] = {"id", "N", "the server's id, 1 to 2147483647 (HAProxy's `id`; default: assigned)"},
    [CMD_O_BACKUP] = {"backup", NULL,
                      "a backup server (HAProxy's `backup`): it serves only when no active server "
                      "is up"},
    [CMD_O_DOWN] = {"down", NULL, "the node starts down (configured, not serving)"},
    [CMD_O_NODE] = {"node", "N", "only the keys of node N"},
    [CMD_O_PREFIX] = {"prefix", "P", "the keys' prefix (default key-)"},
    [CMD_O_START] = {"start", "S", "the first number (default: after the last generated)"},
    [CMD_O_POINTS] = {"points", "N", "points per node of the ring algorithm"},
    [CMD_O_ALGORITHM] = {"algorithm", "A", "the placement algorithm (see ringsim algorithms)"},
    [CMD_O_PARAM] = {"param", "NAME=VALUE", "an algorithm's parameter (may repeat)"},
    [CMD_O_REPLICAS] = {"replicas", "R", "copies of each key, 1 to 16"},
    [CMD_O_ALGORITHMS] = {"algorithms", "a,b,...", "the algorithms to compare (default all)"},
    [CMD_O_HOST] = {"host", "ADDR", "the address to listen on (default 127.0.0.1)"},
    [CMD_O_PORT] = {"port", "PORT", "the port (default 3000; 0 picks a free one)"},
    [CMD_O_WEB] = {"web", "DIR", "serve the page from DIR instead of the one built in"},
    [CMD_O_TOKEN] =
        {"token",
         "T", "the access token (default $RINGSIM_TOKEN, which other users cannot see; made up beyond loopback)"},
    [CMD_O_SCENARIO] = {"scenario", NULL, "write the history as a scenario file"},
    [CMD_O_BUILTIN] = {"builtin", NULL, "NAME is one of the scenarios built into ringsim"},
    [CMD_O_YCSB] = {"ycsb", NULL, "YCSB's key names: user + Math.abs(fnvhash64(n)), n from S"},
    [CMD_O_REQUESTS] = {"requests", "N", "requests to replay, 1 to 100,000,000 (default 100,000)"},
    [CMD_O_CONCURRENCY] = {"concurrency",
                           "C", "requests in flight on average, above 0, at most 1,000,000 (default 100)"},
    [CMD_O_SEED] = {"seed", "S", "the replay's seed, a whole number (default 0)"},
    [CMD_O_FACTOR] = {"factor", "F",
                      "the bounded-load factor for this replay only (default the "
                      "configuration's; 0: off)"},
    [CMD_O_FORMAT] = {"format", "F",
                      "the text's format: auto (default), nginx, haproxy, libmemcached, "
                      "twemproxy, envoy, nodetool-ring, redis-nodes"},
    [CMD_O_NAME] = {"name", "N", "the upstream, backend, pool or cluster, when the text has several"},
    [CMD_O_CONFIG] = {"config", "F",
                      "write the nodes as a real system's configuration: " EXPORT_CONFIG_FORMATS},
    [CMD_O_FILE] = {"file", "F", "read the keys from file F, one a line (- for standard input)"},
};

#define CONFIG_OPTS                                                                                \
    (CMD_BIT(CMD_O_POINTS) | CMD_BIT(CMD_O_ALGORITHM) | CMD_BIT(CMD_O_PARAM) |                     \
     CMD_BIT(CMD_O_REPLICAS))

/* ---- small helpers ---- */

static int fail_usage(rs_error *err, const char *fmt, const char *arg)
{
    err->code = RINGSIM_EPARAM;
    snprintf(err->msg, sizeof err->msg, fmt, arg);
    return CMD_EXIT_USAGE;
}

static int fail_value(rs_error *err, int code)
{
    err->code = code;
    return CMD_EXIT_REFUSED;
}

static int parse_u64(const char *t, uint64_t *out)
{
    if (!t || *t < '0' || *t > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(t, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int cmd_parse_number(const char *t, double *out)
{
    /* Plain decimal only: what strtod takes beyond it (hex "0x10", "inf",
     * "nan", a leading "+" or space) is no number a person means here. */
    const char *p = t;
    if (!p)
        return -1;
    if (*p == '-')
        p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (!digits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* A node's weight, as --weight W and `node weight NAME W` take it. */
static int parse_weight(const char *w, double *out, rs_error *err)
{
    if (cmd_parse_number(w, out) || *out < 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "weight must be a number of at least 0 in decimal digits (2, 0.5, 1e2; "
                       "0 under haproxy only), not \"%.64s\"",
                       w);
    return 0;
}

/* --tokens T,T,...: signed 64-bit decimal tokens (Cassandra's initial_token). */
static int parse_tokens(const char *text, int64_t **out, size_t *n, rs_error *err)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    int64_t *v = malloc(cap * sizeof *v);
    if (!v)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t k = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long long t = strtoll(p, &end, 10);
        if (errno || end == p || *p == '+' || *p == ' ' || (*end && *end != ',')) {
            free(v);
            return rs_fail(err, RINGSIM_EPARAM,
                           "--tokens takes signed 64-bit whole numbers separated by commas, "
                           "not \"%.200s\"",
                           text);
        }
        v[k++] = t;
        if (!*end)
            break;
        p = end + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

int cmd_config_apply(const cmd_line *l, place_config *cfg, rs_error *err)
{
    const char *a = l->opt[CMD_O_ALGORITHM];
    if (a) {
        if (strlen(a) >= sizeof cfg->algorithm)
            return rs_fail(err, RINGSIM_EPARAM, "unknown algorithm \"%.40s\"", a);
        strcpy(cfg->algorithm, a);
    }
    if (l->opt[CMD_O_POINTS] &&
        (view_param_check(cfg->algorithm, "points_per_node", 15, err) ||
         place_config_set_param(cfg, "points_per_node", l->opt[CMD_O_POINTS], err)))
        return err->code;
    for (int i = 0; i < l->nparams; i++) {
        char name[64];
        const char *p = l->params[i], *eq = strchr(p, '=');
        if (!eq || eq == p || (size_t)(eq - p) >= sizeof name)
            return rs_fail(err, RINGSIM_EPARAM, "--param takes NAME=VALUE, not \"%.64s\"", p);
        memcpy(name, p, (size_t)(eq - p));
        name[eq - p] = '\0';
        if (view_param_check(cfg->algorithm, name, strlen(name), err) ||
            place_config_set_param(cfg, name, eq + 1, err))
            return err->code;
    }
    const char *r = l->opt[CMD_O_REPLICAS];
    if (r) {
        uint64_t v;
        if (parse_u64(r, &v) || v < 1 || v > PLACE_MAX_REPLICAS)
            return rs_fail(err, RINGSIM_EPARAM,
                           "--replicas must be a whole number from 1 to %u, not \"%.32s\"",
                           PLACE_MAX_REPLICAS, r);
        cfg->replicas = (uint32_t)v;
    }
    return 0;
}

static bool has_config_opts(const cmd_line *l)
{
    return l->opt[CMD_O_POINTS] || l->opt[CMD_O_ALGORITHM] || l->nparams || l->opt[CMD_O_REPLICAS];
}

/* ---- output ---- */

static void print_json(FILE *out, json_t *j)
{
    char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (t) {
        fputs(t, out);
        fputc('\n', out);
    }
    free(t);
}

/* "operation 4 add_node: echo; 12 keys moved (from bravo 9, charlie 3)". */
/* Whether the workload gives keys unequal shares: only then do the tables
 * for people show requests beside keys (with uniform shares they are the
 * key shares). */
/* x in its shortest form that reads back exactly ("1.1", not
 * "1.1000000000000001"): %.15g, %.16g or %.17g, the first that strtod
 * returns as x.  Into buf (32 bytes are enough); returns buf. */
static const char *shortest(char *buf, size_t size, double x)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* n with a comma every three digits ("22,385") into buf; returns buf. */
static const char *thousands(char *buf, size_t size, long long n)
{
    char d[32];
    int len = snprintf(d, sizeof d, "%lld", n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < size)
        buf[o++] = '-';
    for (int i = 0; i < len && o + 1 < size; i++) {
        if (i && (len - i) % 3 == 0 && o + 1 < size)
            buf[o++] = ',';
        if (o + 1 < size)
            buf[o++] = d[i];
    }
    buf[o] = '\0';
    return buf;
}

static bool skewed(sim *s)
{
    json_t *w = NULL;
    rs_error e;
    bool yes = sim_workload_json(s, &w, &e) == 0 &&
               strcmp(json_string_value(json_object_get(w, "kind")), "uniform") != 0;
    json_decref(w);
    return yes;
}

/* Whether the workload gives the keys' value sizes: bytes are then worth a
 * line of their own; without sizes every key is 1 byte (API.md) and a byte
 * count only repeats the keys, so the CLI leaves it out (JSON keeps it). */
static bool sized(sim *s)
{
    json_t *w = NULL;
    rs_error e;
    bool yes = false;
    if (sim_workload_json(s, &w, &e) == 0) {
        json_t *z = json_object_get(w, "sizes");
        const char *kind = json_string_value(json_object_get(z, "kind"));
        yes = kind &&
              (strcmp(kind, "fixed") != 0 || json_integer_value(json_object_get(z, "bytes")) != 1);
    }
    json_decref(w);
    return yes;
}

/* An operation's subject, cut to width columns (0: whole); a set_state
 * says which way it went ("alpha up -> down": an operation that changes
 * nothing is never recorded, so the state before is the other one). */
#define LOG_SUBJECT_COLUMNS 64
static void print_subject(FILE *out, json_t *o, size_t width)
{
    const char *st = json_string_value(json_object_get(o, "state"));
    bool state = st && !strcmp(json_string_value(json_object_get(o, "type")), "set_state");
    size_t arrow = state ? strlen(" down -> up") : 0;
    cmd_print_cut(out, json_string_value(json_object_get(o, "subject")),
                  width > arrow ? width - arrow : width);
    if (state)
        fprintf(out, " %s -> %s", strcmp(st, "down") ? "down" : "up", st);
}

static void print_op(FILE *out, sim *s, int64_t id)
{
    rs_error err;
    json_t *o = view_operation_get(s, id, &err);
    if (!o)
        return;
    json_int_t moved = json_integer_value(json_object_get(o, "keys_moved"));
    fprintf(out, "operation %lld %s: ", (long long)id, json_string_value(json_object_get(o, "type")));
    print_subject(out, o, 0);
    fprintf(out, "; %lld key%s moved", (long long)moved, moved == 1 ? "" : "s");
    json_t *mf = json_object_get(o, "moved_from"), *e;
    size_t i;
    json_array_foreach(mf, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "node"));
        fputs(i ? ", " : " (from ", out);
        cmd_print_padded(out, n ? n : "(none)", 0);
        fprintf(out, " %lld", (long long)json_integer_value(json_object_get(e, "keys")));
    }
    fprintf(out, "%s", json_array_size(mf) ? ")" : "");
    json_t *rm = json_object_get(o, "requests_moved");
    if (moved && json_is_number(rm) && skewed(s)) /* the miss spike for a cache */
        fprintf(out, "; %.1f%% of requests moved", 100 * json_number_value(rm));
    fprintf(out, "\n");
    json_decref(o);
}

/* The answer of a change: {extra..., "operation"} as JSON, or for people
 * "inserted ..." (key add/gen) or the operation's line. */
static int answer_change(cmd_ctx *c)
{
    if (!c->out)
        return 0;
    if (c->l->opt[CMD_O_JSON]) {
        json_t *j = json_object();
        if (!j)
            return rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
        if (c->extra)
            json_object_update(j, c->extra);
        json_t *o = c->op ? view_operation_get(c->s, c->op, &c->err) : NULL;
        json_object_set_new(j, "operation", o ? o : json_null());
        print_json(c->out, j);
        json_decref(j);
        return 0;
    }
    json_t *ins = c->extra ? json_object_get(c->extra, "inserted") : NULL;
    if (ins) {
        json_int_t n = json_integer_value(ins);
        fprintf(c->out, "inserted %lld key%s, skipped %lld (operation %lld)\n", (long long)n,
                n == 1 ? "" : "s",
                (long long)json_integer_value(json_object_get(c->extra, "skipped")),
                (long long)c->op);
    } else if (c->op == 0) {
        fprintf(c->out, "nothing changed: no operation recorded\n");
    } else {
        print_op(c->out, c->s, c->op);
    }
    return 0;
}

/* ---- tables for people ----
 *
 * Every column of names or keys the command line prints goes through
 * cmd_print_padded: the text is shown as names_escape() writes it and padded
 * by the columns that takes on a terminal (names_width), never by bytes. */

/* Whether s shows as it is, one column a byte: ASCII (no control character
 * gets into a name or a key) with something other than spaces.  The common
 * case, so a million keys listed are not a million escapes. */
static bool plain(const char *s)
{
    bool visible = false;
    for (; *s; s++) {
        if ((unsigned char)*s >= 0x80)
            return false;
        visible |= *s != ' ';
    }
    return visible;
}

size_t cmd_text_width(const char *s)
{
    s = s ? s : "";
    if (plain(s))
        return strlen(s);
    char *e = names_escape(s, strlen(s));
    size_t w = names_width(e ? e : s, strlen(e ? e : s));
    free(e);
    return w;
}

size_t cmd_column_width(const json_t *rows, const char *member, size_t at_least)
{
    const json_t *r;
    size_t i, w = at_least, most = at_least > CMD_NAME_COLUMNS ? at_least : CMD_NAME_COLUMNS;
    json_array_foreach(rows, i, r)
    {
        size_t l = cmd_text_width(json_string_value(json_object_get(r, member)));
        w = l > w ? l : w;
    }
    return w < most ? w : most;
}

/* The bytes of s (valid UTF-8, len bytes) that take at most `cols`
 * columns, *used of them, whole characters only: a combining mark stays
 * with the character before it. */
static size_t fit(const char *s, size_t len, size_t cols, size_t *used)
{
    size_t i = 0;
    *used = 0;
    while (i < len) {
        unsigned char b = (unsigned char)s[i];
        size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        n = n > len - i ? len - i : n;
        size_t w = names_width(s + i, n);
        if (*used + w > cols)
            break;
        *used += w;
        i += n;
    }
    return i;
}

/* s shown, cut to width columns (0: whole), padded to them when pad. */
static void print_cut(FILE *out, const char *s, size_t width, bool pad)
{
    s = s ? s : "";
    bool as_is = plain(s);
    char *e = as_is ? NULL : names_escape(s, strlen(s));
    const char *shown = e ? e : s;
    size_t len = strlen(shown), w = as_is ? len : names_width(shown, len);
    if (width && w > width) { /* cut, by columns, with an ellipsis */
        len = as_is ? width - 1 : fit(shown, len, width - 1, &w);
        w = (as_is ? width - 1 : w) + 1;
        fwrite(shown, 1, len, out);
        fputs("\u2026", out);
    } else {
        fputs(shown, out);
    }
    for (; pad && w < width; w++)
        fputc(' ', out);
    free(e);
}

void cmd_print_padded(FILE *out, const char *s, size_t width) { print_cut(out, s, width, true); }

void cmd_print_cut(FILE *out, const char *s, size_t width) { print_cut(out, s, width, false); }

static void pct(char *buf, size_t size, double share)
{
    snprintf(buf, size, "%.2f%%", share * 100.0);
}

/* The people's table of `node ls`, like `nodetool status`. */
static void print_nodes_table(FILE *out, json_t *j, bool requests)
{
    json_t *nodes = json_object_get(j, "nodes"), *n;
    size_t i, wname = cmd_column_width(nodes, "name", 4);
    cmd_print_padded(out, "Node", wname);
    fprintf(out, "  %10s  %7s  %6s  %9s  %7s  %7s%s  %s\n", "Position", "Weight", "Points", "Keys",
            "Key %", "Ring %", requests ? "    Req %" : "", "State");
    json_array_foreach(nodes, i, n)
    {
        char kp[32], rp[32], qp[32];
        pct(kp, sizeof kp, json_real_value(json_object_get(n, "key_share")));
        pct(rp, sizeof rp, json_real_value(json_object_get(n, "arc_share")));
        pct(qp, sizeof qp, json_real_value(json_object_get(n, "requests")));
        cmd_print_padded(out, json_string_value(json_object_get(n, "name")), wname);
        const char *st = json_string_value(json_object_get(n, "state"));
        fprintf(out, "  %10lld  %7g  %6lld  %9lld  %7s  %7s",
                (long long)json_integer_value(json_object_get(n, "position")),
                json_number_value(json_object_get(n, "weight")),
                (long long)json_integer_value(json_object_get(n, "points")),
                (long long)json_integer_value(json_object_get(n, "keys")), kp, rp);
        if (requests)
            fprintf(out, "  %7s", qp);
        fprintf(out, "  %s%s\n", st ? st : "up",
                json_is_true(json_object_get(n, "backup")) ? " (backup)" : "");
    }
    if (!json_array_size(nodes))
        fprintf(out, "(no nodes)\n");
}

/* A list member of j as CSV. */
static int print_csv(FILE *out, json_t *j, const char *member, rs_error *err)
{
    size_t n;
    char *t = csv_from_rows(json_object_get(j, member), &n);
    if (!t)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory writing CSV");
    fwrite(t, 1, n, out);
    free(t);
    return 0;
}

/* ---- handlers of changes ---- */

static int run_node_add(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    sim_node_spec spec = {name,
                          strlen(name),
                          c->l->weight,
                          c->l->tokens,
                          c->l->ntokens,
                          c->l->srv_id,
                          c->l->opt[CMD_O_DOWN] != NULL,
                          c->l->opt[CMD_O_BACKUP] != NULL,
                          NULL,
                          0};
    int rc = sim_add_node_spec(c->s, &spec, &c->op, &c->err);
    if (rc)
        return rc;
    json_t *node = view_node_get(c->s, name, strlen(name), &c->err);
    c->extra = json_pack("{s:o*}", "node", node);
    char *w = view_lookalike(c->s, name, strlen(name));
    if (w && c->extra)
        json_object_set_new(c->extra, "warning", json_string(w));
    if (w && c->out == stdout && !c->l->opt[CMD_O_JSON])
        fprintf(stderr, "ringsim: warning: node \"%s\" %s\n", name, w);
    free(w);
    return answer_change(c);
}

static int run_node_rm(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    int rc = sim_remove_node(c->s, name, strlen(name), &c->op, &c->err);
    return rc ? rc : answer_change(c);
}

/* The answer of a change to one node (weight, state): the node as it is
 * now; a change that changed nothing says "operation": null, or in words
 * "nothing changed: node NAME <same>". */
static int answer_node_change(cmd_ctx *c, const char *name, const char *same)
{
    json_t *node = view_node_get(c->s, name, strlen(name), &c->err);
    c->extra = json_pack("{s:o*}", "node", node);
    if (c->op || !c->out)
        return answer_change(c);
    if (c->l->opt[CMD_O_JSON]) {
        json_object_set_new(c->extra, "operation", json_null());
        print_json(c->out, c->extra);
    } else {
        fprintf(c->out, "nothing changed: node %s %s\n", name, same);
    }
    return 0;
}

/* node weight NAME W: the same weight again changes nothing and records
 * nothing ("operation": null). */
static int run_node_weight(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    int rc = sim_set_weight(c->s, name, strlen(name), c->l->weight, &c->op, &c->err);
    char same[64];
    snprintf(same, sizeof same, "already has weight %g", c->l->weight);
    return rc ? rc : answer_node_change(c, name, same);
}

/* node down NAME / node up NAME: one set_state operation; the state it
 * already has changes nothing and records nothing ("operation": null). */
static int run_node_state(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    bool down = !strcmp(c->l->def->name, "node down");
    int rc = sim_set_state(c->s, name, strlen(name), down, &c->op, &c->err);
    return rc ? rc : answer_node_change(c, name, down ? "is already down" : "is already up");
}

static sim_str *arg_strs(const cmd_line *l, rs_error *err)
{
    sim_str *v = malloc((size_t)l->nargs * sizeof *v);
    if (!v)
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (int i = 0; v && i < l->nargs; i++)
        v[i] = (sim_str){l->args[i], strlen(l->args[i])};
    return v;
}

/* key add --file F, key add -: the keys of a text, streamed (keyfile.h),
 * in one operation; the answer is POST /api/keys {"keys"}'s. */
static int run_key_add_file(cmd_ctx *c, const char *path)
{
    keyfile *kf;
    int rc = keyfile_open(&kf, path, &c->err);
    int64_t ins, skip;
    if (!rc)
        rc = sim_insert_keys_each(c->s, keyfile_count(kf), keyfile_first(kf), keyfile_next, kf,
                                  &ins, &skip, &c->op, &c->err);
    keyfile_close(kf);
    if (rc)
        return rc;
    c->extra = json_pack("{s:I, s:I}", "inserted", (json_int_t)ins, "skipped", (json_int_t)skip);
    return answer_change(c);
}

static int run_key_add(cmd_ctx *c)
{
    if (c->l->opt[CMD_O_FILE] || cmd_reads_input(c->l))
        return run_key_add_file(c, c->l->opt[CMD_O_FILE] ? c->l->opt[CMD_O_FILE] : "-");
    sim_str *v = arg_strs(c->l, &c->err);
    if (!v)
        return c->err.code;
    int64_t ins, skip;
    bool one = c->l->nargs == 1; /* one key: it must be new, as POST {"key"} */
    int rc = sim_insert_keys(c->s, v, (size_t)c->l->nargs, one, &ins, &skip, &c->op, &c->err);
    free(v);
    if (rc)
        return rc;
    if (one && c->l->opt[CMD_O_JSON]) {
        json_t *k = view_key_get(c->s, c->l->args[0], strlen(c->l->args[0]), &c->err);
        c->extra = json_pack("{s:o*}", "key", k);
    } else {
        c->extra = json_pack("{s:I, s:I}", "inserted", (json_int_t)ins, "skipped", (json_int_t)skip);
    }
    return answer_change(c);
}

/* key gen --ycsb: the names as one list, one insert (logged key by key). */
static int run_key_gen_ycsb(cmd_ctx *c)
{
    uint64_t n = c->l->count, start = c->l->opt[CMD_O_START] ? c->l->start : 0;
    char *buf = malloc(n * WL_YCSB_KEY_MAX);
    sim_str *v = malloc(n * sizeof *v);
    int rc = 0;
    int64_t ins, skip;
    if (!buf || !v)
        rc = rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
    for (uint64_t i = 0; !rc && i < n; i++) {
        v[i].s = buf + i * WL_YCSB_KEY_MAX;
        v[i].len = wl_ycsb_key(start + i, buf + i * WL_YCSB_KEY_MAX);
    }
    if (!rc)
        rc = sim_insert_keys(c->s, v, n, false, &ins, &skip, &c->op, &c->err);
    free(buf);
    free(v);
    if (rc)
        return rc;
    c->extra = json_pack("{s:I, s:I}", "inserted", (json_int_t)ins, "skipped", (json_int_t)skip);
    return answer_change(c);
}

static int run_key_gen(cmd_ctx *c)
{
    if (c->l->opt[CMD_O_YCSB]) {
        if (c->l->opt[CMD_O_PREFIX])
            return rs_fail(&c->err, RINGSIM_EPARAM, "--ycsb names its keys itself: no --prefix");
        return run_key_gen_ycsb(c);
    }
    const char *p = c->l->opt[CMD_O_PREFIX] ? c->l->opt[CMD_O_PREFIX] : "key-";
    int64_t ins, skip;
    uint64_t start = c->l->start; /* --start S, else after the last generated */
    int rc = c->l->opt[CMD_O_START] ? 0 : sim_generate_next(c->s, p, strlen(p), &start, &c->err);
    if (!rc)
        rc = sim_generate_keys(c->s, p, strlen(p), start, c->l->count, &ins, &skip, &c->op, &c->err);
    if (rc)
        return rc;
    c->extra = json_pack("{s:I, s:I}", "inserted", (json_int_t)ins, "skipped", (json_int_t)skip);
    return answer_change(c);
}

static int run_key_rm(cmd_ctx *c)
{
    sim_str *v = arg_strs(c->l, &c->err);
    if (!v)
        return c->err.code;
    int rc = sim_delete_keys(c->s, v, (size_t)c->l->nargs, &c->op, &c->err);
    free(v);
    return rc ? rc : answer_change(c);
}

static int run_revert(cmd_ctx *c)
{
    int rc = sim_revert(c->s, c->l->id, &c->op, &c->err);
    return rc ? rc : answer_change(c);
}

static int run_reset(cmd_ctx *c)
{
    int rc = sim_reset(c->s, &c->op, &c->err);
    return rc ? rc : answer_change(c);
}

static int run_config(cmd_ctx *c)
{
    json_t *j;
    if (has_config_opts(c->l)) {
        place_config cfg = *sim_config(c->s);
        int rc = cmd_config_apply(c->l, &cfg, &c->err);
        if (!rc && (rc = place_config_check(&cfg, &c->err)))
            return rc;
        c->op = 0; /* 0: nothing changed, nothing recorded */
        if (rc || (!sim_config_same(c->s, &cfg) && (rc = sim_configure(c->s, &cfg, &c->op, &c->err))))
            return rc;
        j = view_config(c->s, &c->err);
        c->extra = json_pack("{s:o*}", "config", j);
        return answer_change(c);
    }
    if (!(j = view_config(c->s, &c->err)))
        return c->err.code;
    if (c->l->opt[CMD_O_JSON]) {
        print_json(c->out, j);
    } else {
        /* The parameters the algorithm takes, and only those: JSON keeps
         * the top-level points_per_node (API.md), which jump has not. */
        fprintf(c->out, "algorithm %s\n", json_string_value(json_object_get(j, "algorithm")));
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(j, "params"), k, v)
        {
            if (json_is_string(v))
                fprintf(c->out, "%s %s\n", k, json_string_value(v));
            else
                fprintf(c->out, "%s %lld\n", k, (long long)json_integer_value(v));
        }
        fprintf(c->out, "replicas %lld\n",
                (long long)json_integer_value(json_object_get(j, "replicas")));
    }
    json_decref(j);
    return 0;
}

/* ---- handlers of reads ---- */

/* --param NAME=VALUE into the workload's JSON: a VALUE that starts with [
 * or { is JSON, any other is text (numbers are read from it); sizes.NAME
 * goes into "sizes". */
static int workload_param(json_t *spec, const char *p, rs_error *err)
{
    const char *eq = strchr(p, '=');
    char name[64];
    size_t nl = (size_t)(eq - p);
    if (nl >= sizeof name)
        return rs_fail(err, RINGSIM_EPARAM, "no workload parameter \"%.64s\"", p);
    memcpy(name, p, nl);
    name[nl] = 0;
    const char *val = eq + 1;
    /* JSON for a list or an object, a number for plain decimal digits (an
     * integer exactly, as a seed past 2^53 needs), else text (a kind, an
     * order; a number written otherwise, "0x10", is then refused). */
    double d;
    char *end;
    errno = 0;
    long long i = strtoll(val, &end, 10);
    json_t *v = *val == '[' || *val == '{'  ? json_loads(val, 0, NULL)
                : cmd_parse_number(val, &d) ? json_string(val)
                                            : (!*end && !errno ? json_integer(i) : json_real(d));
    if (!v)
        return rs_fail(err, RINGSIM_EPARAM, "--param %s: the value is not valid JSON", name);
    json_t *into = spec;
    const char *key = name;
    if (!strncmp(name, "sizes.", 6)) {
        into = json_object_get(spec, "sizes");
        if (!json_is_object(into) || !json_is_string(json_object_get(into, "kind")) ||
            (!strcmp(name + 6, "kind") &&
             strcmp(val, json_string_value(json_object_get(into, "kind"))))) {
            into = json_object();
            json_object_set_new(spec, "sizes", into);
        }
        key = name + 6;
    }
    json_object_set_new(into, key, v);
    return 0;
}

static void print_workload(FILE *out, json_t *w)
{
    char num[32];
    const char *k;
    json_t *v;
    json_object_foreach(w, k, v)
    {
        if (json_is_string(v))
            fprintf(out, "%s %s\n", k, json_string_value(v));
        else if (json_is_number(v))
            fprintf(out, "%s %s\n", k, shortest(num, sizeof num, json_number_value(v)));
        else if (!strcmp(k, "sizes")) {
            const char *sk = json_string_value(json_object_get(v, "kind"));
            fprintf(out, "sizes %s", sk ? sk : "?");
            const char *k2;
            json_t *v2;
            json_object_foreach(v, k2, v2)
            {
                if (json_is_number(v2))
                    fprintf(out, " %s %s", k2, shortest(num, sizeof num, json_number_value(v2)));
                else if (json_is_array(v2))
                    fprintf(out, " %s (%zu listed)", k2, json_array_size(v2));
            }
            fprintf(out, "\n");
        } else if (json_is_array(v)) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e)
            {
                const char *kk = json_string_value(json_object_get(e, "key"));
                char *esc = kk ? names_escape(kk, strlen(kk)) : NULL;
                fprintf(out, "key %s share %s\n",
                        esc  ? esc
                        : kk ? kk
                             : "",
                        shortest(num, sizeof num, json_number_value(json_object_get(e, "share"))));
                free(esc);
            }
        }
    }
}

static int run_workload(cmd_ctx *c)
{
    json_t *now = NULL, *spec = NULL;
    int rc = sim_workload_json(c->s, &now, &c->err);
    if (rc)
        return rc;
    if (!c->l->nargs && !c->l->nparams) {
        if (c->l->opt[CMD_O_JSON])
            print_json(c->out, now);
        else
            print_workload(c->out, now);
        json_decref(now);
        return 0;
    }
    /* KIND: a new workload; --param alone: the current one changed. */
    spec = c->l->nargs ? json_pack("{s:s, s:O}", "kind", c->l->args[0], "sizes",
                                   json_object_get(now, "sizes"))
                       : json_deep_copy(now);
    if (!spec)
        rc = rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < c->l->nparams; i++)
        rc = workload_param(spec, c->l->params[i], &c->err);
    c->op = 0;
    if (!rc)
        rc = sim_set_workload_if_new(c->s, spec, now, &c->op, &c->err);
    json_decref(spec);
    json_decref(now);
    if (rc)
        return rc;
    json_t *after = NULL;
    if ((rc = sim_workload_json(c->s, &after, &c->err)))
        return rc;
    c->extra = json_pack("{s:o}", "workload", after);
    return answer_change(c);
}

/* The frame of a command that shows a view: j (NULL when the view failed,
 * c->err saying why) as CSV of its array `csv` with --csv (csv NULL: the
 * command has no --csv), as JSON with --json, else by text; j is freed. */
static int show(cmd_ctx *c, json_t *j, const char *csv, void (*text)(cmd_ctx *c, json_t *j))
{
    if (!j)
        return c->err.code;
    int rc = 0;
    if (csv && c->l->opt[CMD_O_CSV])
        rc = print_csv(c->out, j, csv, &c->err);
    else if (c->l->opt[CMD_O_JSON])
        print_json(c->out, j);
    else
        text(c, j);
    json_decref(j);
    return rc;
}

/* The table lists the nodes in the configuration's order -- as they were
 * added or imported, the order a real system's configuration lists them
 * (the placement's, sim_node_names) --; the JSON and CSV keep the API's
 * order by position.  Names are unique, so each row is found by its name
 * (n^2 comparisons: a few milliseconds at a thousand nodes). */
static void nodes_text(cmd_ctx *c, json_t *j)
{
    json_t *nodes = json_object_get(j, "nodes"), *ordered = json_array(), *n;
    const char *const *names = sim_node_names(c->s);
    size_t count = sim_node_count(c->s), i, k;
    for (k = 0; ordered && k < count; k++)
        json_array_foreach(nodes, i, n)
        {
            if (!strcmp(json_string_value(json_object_get(n, "name")), names[k]))
                json_array_append(ordered, n);
        }
    /* Out of memory, or rows the names do not cover: the API's order. */
    if (ordered && json_array_size(ordered) == json_array_size(nodes))
        json_object_set(j, "nodes", ordered);
    json_decref(ordered);
    print_nodes_table(c->out, j, skewed(c->s));
}

static int run_node_ls(cmd_ctx *c)
{
    return show(c, view_nodes(c->s, &c->err), "nodes", nodes_text);
}

/* The table of `key ls` for people: key, position, the key's coordinate
 * under the current algorithm named as the algorithm names it (a Redis
 * slot, a Cassandra token; no column where the position is the
 * coordinate), node.  Names and keys are cut (cmd_print_padded). */
#define KEY_COLUMNS 24
typedef struct key_table {
    cmd_ctx *c;
    const placement *pl;
    const char *coord; /* the coordinate's name, NULL: no column */
    int coord_width;
} key_table;

static void key_table_head(key_table *kt)
{
    FILE *out = kt->c->out;
    kt->pl = sim_placement(kt->c->s);
    kt->coord = place_coord_name(kt->pl);
    char label[64] = "", lo[24] = "", hi[24] = "";
    if (kt->coord) {
        snprintf(label, sizeof label, "%s", kt->coord);
        label[0] = (char)toupper((unsigned char)label[0]);
        place_coord_str(kt->pl, 0, lo);
        place_coord_str(kt->pl, place_top(kt->pl), hi);
    }
    size_t w = strlen(label);
    w = strlen(lo) > w ? strlen(lo) : w;
    kt->coord_width = (int)(strlen(hi) > w ? strlen(hi) : w);
    cmd_print_padded(out, "Key", KEY_COLUMNS);
    fprintf(out, " %10s", "Position");
    if (kt->coord)
        fprintf(out, "  %*s", kt->coord_width, label);
    fprintf(out, "  Node\n");
}

static int print_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                     size_t node_len)
{
    key_table *kt = ud;
    FILE *out = kt->c->out;
    char k[NAME_BUF];
    snprintf(k, sizeof k, "%.*s", (int)len, key);
    cmd_print_padded(out, k, KEY_COLUMNS);
    fprintf(out, " %10u", pos);
    if (kt->coord) {
        sim_where w;
        char co[24];
        sim_key_where(kt->c->s, key, len, &w);
        bool has = w.info.has_coord && place_coord_str(kt->pl, w.info.coord, co);
        fprintf(out, "  %*s", kt->coord_width, has ? co : "-");
    }
    fputs("  ", out);
    snprintf(k, sizeof k, "%.*s", node ? (int)node_len : 6, node ? node : "(none)");
    cmd_print_cut(out, k, CMD_NAME_COLUMNS);
    fputc('\n', out);
    return 0;
}

/* Streamed: a million keys must not become a million JSON objects in
 * memory.  --csv and --json write through view_keys_write, as the server's
 * export does; the JSON is GET /api/keys with every key. */
static int run_key_ls(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    const char *node = l->opt[CMD_O_NODE];
    size_t nlen = node ? strlen(node) : 0;
    int64_t total;
    key_table kt = {c, NULL, NULL, 0};
    bool people = !l->opt[CMD_O_JSON] && !l->opt[CMD_O_CSV];
    if (people)
        key_table_head(&kt);
    int rc = !people ? view_keys_write(c->s, c->out, l->opt[CMD_O_CSV] != NULL, node, nlen, NULL, 0,
                                       &total, &c->err)
                     : sim_keys_page(c->s, node, nlen, NULL, 0, 0, INT64_MAX, &total, print_key,
                                     &kt, &c->err);
    if (rc) {
        if (rc == RINGSIM_ENOMEM)
            rs_fail(&c->err, rc, "out of memory");
        else if (rc == RINGSIM_EFULL)
            rs_fail(&c->err, rc, "cannot write the keys: %s", strerror(errno));
        return rc;
    }
    if (!l->opt[CMD_O_JSON] && !l->opt[CMD_O_CSV])
        fprintf(c->out, "%lld key%s\n", (long long)total, total == 1 ? "" : "s");
    return 0;
}

/* `lookup` for people: what `help lookup` promises, for every algorithm —
 * the algorithm's key hash and coordinate, owner, replicas and the trace.
 * The SHA-256 position only where the algorithm's key hash is SHA-256's
 * first 32 bits (its catalogue entry says so: ring, multiprobe). */
static void print_lookup(FILE *out, sim *s, const char *key, json_t *j)
{
    const char *alg = sim_config(s)->algorithm, *kh = place_key_hash(sim_config(s));
    size_t i;
    json_t *st;
    char *ek = names_escape(key, strlen(key));
    fprintf(out, "key         %s\nalgorithm   %s\n", ek ? ek : key, alg);
    free(ek);
    const char *h = json_string_value(json_object_get(j, "hash")),
               *co = json_string_value(json_object_get(j, "coordinate"));
    fprintf(out, "key hash    %s (%s)\ncoordinate  %s\n", h ? h : "-", kh ? kh : "",
            co ? co : "(none)");
    if (kh && !strncmp(kh, "SHA-256", 7))
        fprintf(out, "sha256      %s\nposition    %lld\n",
                json_string_value(json_object_get(j, "sha256")),
                (long long)json_integer_value(json_object_get(j, "position")));
    const char *n = json_string_value(json_object_get(j, "node"));
    char *en = n ? names_escape(n, strlen(n)) : NULL;
    fprintf(out, "node        %s%s\n",
            en  ? en
            : n ? n
                : "(no node)",
            json_is_true(json_object_get(j, "wrapped")) ? " (wrapped)" : "");
    const char *sb = json_string_value(json_object_get(j, "served_by"));
    char *esb = sb ? names_escape(sb, strlen(sb)) : NULL;
    fprintf(out, "served by   %s\n",
            esb  ? esb
            : sb ? sb
            : n  ? "no live replica (every node that could serve it is down)"
                 : "nobody (no node)");
    free(esb);
    /* Redis Cluster: the master's replicas (node_replicas), not the
     * preference list, which is the master alone. */
    json_t *nreps = json_object_get(j, "node_replicas");
    json_t *reps = nreps ? nreps : json_object_get(j, "replicas"), *r;
    fprintf(out, "replicas   ");
    json_array_foreach(reps, i, r)
    {
        const char *rn = json_string_value(r);
        char *er = rn ? names_escape(rn, strlen(rn)) : NULL;
        fprintf(out, " %s", er ? er : rn ? rn : "(none)");
        free(er);
    }
    if (nreps && n)
        fprintf(out, json_array_size(reps) ? " (of master %s)" : " (none: master %s has none)",
                en ? en : n);
    else if (!json_array_size(reps))
        fprintf(out, " (none)");
    free(en);
    fprintf(out, "\nstored      %s\n", json_is_true(json_object_get(j, "stored")) ? "yes" : "no");
    json_t *tr = json_object_get(j, "trace");
    if (json_array_size(tr))
        fprintf(out, "steps:\n");
    json_array_foreach(tr, i, st)
        fprintf(out, "  %-10s %s\n", json_string_value(json_object_get(st, "step")),
                json_string_value(json_object_get(st, "detail")));
}

static void lookup_text(cmd_ctx *c, json_t *j) { print_lookup(c->out, c->s, c->l->args[0], j); }

static int run_lookup(cmd_ctx *c)
{
    const char *key = c->l->args[0];
    return show(c, view_lookup(c->s, key, strlen(key), &c->err), NULL, lookup_text);
}

/* "unavailable: 1,951 keys (39.0%) have no live replica" (with their
 * requests and bytes where the workload says more), nothing when none. */
static void print_unavailable(FILE *out, const char *what, json_t *u, bool loads, bool bytes)
{
    json_int_t k = json_integer_value(json_object_get(u, "keys"));
    if (!u || k <= 0)
        return;
    char n[32];
    thousands(n, sizeof n, (long long)k);
    fprintf(out, "%s: %s key%s (%.1f%%) have no live replica", what, n, k == 1 ? "" : "s",
            100 * json_number_value(json_object_get(u, "key_share")));
    json_t *rq = json_object_get(u, "requests_share"), *by = json_object_get(u, "bytes");
    if (loads && json_is_number(rq))
        fprintf(out, ", %.1f%% of requests", 100 * json_number_value(rq));
    if (bytes && json_is_integer(by))
        fprintf(out, ", %lld bytes", (long long)json_integer_value(by));
    fprintf(out, "\n");
}

static void stats_text(cmd_ctx *c, json_t *j)
{
    fprintf(c->out,
            "nodes %lld  keys %lld\nmean %.2f  stddev %.2f  cv %.4f\nmin %lld  max %lld  "
            "max/mean %.4f\n",
            (long long)json_integer_value(json_object_get(j, "nodes")),
            (long long)json_integer_value(json_object_get(j, "keys")),
            json_real_value(json_object_get(j, "mean")),
            json_real_value(json_object_get(j, "stddev")), json_real_value(json_object_get(j, "cv")),
            (long long)json_integer_value(json_object_get(j, "min")),
            (long long)json_integer_value(json_object_get(j, "max")),
            json_real_value(json_object_get(j, "max_over_mean")));
    print_unavailable(c->out, "unavailable", json_object_get(j, "unavailable"), skewed(c->s),
                      sized(c->s));
    if (skewed(c->s)) {
        json_t *rq = json_object_get(j, "requests"), *hot = json_object_get(rq, "hottest_key");
        const char *hk = json_string_value(json_object_get(hot, "key"));
        char *esc = hk ? names_escape(hk, strlen(hk)) : NULL;
        fprintf(c->out, "requests max/mean %.4f  cv %.4f  bound %.4f\n",
                json_number_value(json_object_get(rq, "max_over_mean")),
                json_number_value(json_object_get(rq, "cv")),
                json_number_value(json_object_get(rq, "bound")));
        if (hk)
            fprintf(c->out, "hottest key %s  share %.6f\n", esc ? esc : hk,
                    json_number_value(json_object_get(hot, "share")));
        free(esc);
    }
}

static int run_stats(cmd_ctx *c) { return show(c, view_stats(c->s, &c->err), NULL, stats_text); }

static void ring_text(cmd_ctx *c, json_t *j)
{
    json_t *p;
    size_t i;
    fprintf(c->out, "%10s  %s\n", "Position", "Node (point)");
    json_array_foreach(json_object_get(j, "points"), i, p)
    {
        fprintf(c->out, "%10lld  ", (long long)json_integer_value(json_object_get(p, "position")));
        cmd_print_padded(c->out, json_string_value(json_object_get(p, "node")), 0);
        fprintf(c->out, "#%lld\n", (long long)json_integer_value(json_object_get(p, "index")));
    }
}

static int run_ring(cmd_ctx *c) { return show(c, view_ring(c->s, &c->err), NULL, ring_text); }

typedef struct move_printer {
    cmd_ctx *c;
    csv_writer csv;
    int64_t count;
} move_printer;

static int print_move(void *ud, const char *key, const char *from, const char *to)
{
    move_printer *mp = ud;
    cmd_ctx *c = mp->c;
    if (!c->l->opt[CMD_O_JSON] && !c->l->opt[CMD_O_CSV]) {
        cmd_print_padded(c->out, key, 24);
        fputc(' ', c->out);
        cmd_print_padded(c->out, from ? from : "(none)", 0);
        fputs(" -> ", c->out);
        cmd_print_padded(c->out, to ? to : "(none)", 0);
        fputc('\n', c->out);
        mp->count++;
        return 0;
    }
    json_t *j = view_move(key, from, to);
    if (!j)
        return RINGSIM_ENOMEM;
    int rc = 0;
    if (c->l->opt[CMD_O_CSV]) {
        rc = csv_row(&mp->csv, j);
    } else {
        char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (t)
            fprintf(c->out, "%s\n    %s", mp->count ? "," : "", t);
        else
            rc = RINGSIM_ENOMEM;
        free(t);
    }
    json_decref(j);
    mp->count++;
    return rc;
}

/* log ID: one operation and every key it moved, streamed (the JSON is
 * GET /api/operations/{id} with every move). */
static int run_log_one(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    int64_t total;
    json_t *o = view_operation_get(c->s, l->id, &c->err);
    if (!o)
        return c->err.code;
    int rc = sim_log_moves(c->s, l->id, 0, 0, &total, NULL, NULL, &c->err);
    move_printer mp = {c, {0}, 0};
    csv_init(&mp.csv, csv_file_sink, c->out);
    bool json = l->opt[CMD_O_JSON] && !l->opt[CMD_O_CSV];
    if (!rc && json) {
        json_object_set_new(o, "moves_total", json_integer(total));
        char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        size_t n = t ? strlen(t) : 0;
        if (n < 2) { /* ends with "\n}" */
            free(t);
            json_decref(o);
            return rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
        }
        fprintf(c->out, "%.*s,\n  \"moves\": [", (int)(n - 2), t);
        free(t);
    } else if (!rc && !l->opt[CMD_O_CSV]) {
        print_op(c->out, c->s, l->id);
    }
    json_decref(o);
    if (!rc)
        rc = sim_log_moves(c->s, l->id, 0, INT64_MAX, &total, print_move, &mp, &c->err);
    csv_close(&mp.csv);
    if (rc == RINGSIM_ENOMEM)
        rs_fail(&c->err, rc, "out of memory");
    if (json)
        fprintf(c->out, "%s]\n}\n", mp.count ? "\n  " : "");
    return rc;
}

static void log_text(cmd_ctx *c, json_t *j)
{
    json_t *p;
    size_t i;
    json_array_foreach(json_object_get(j, "operations"), i, p)
    {
        fprintf(c->out, "%5lld  %s  %-11s  %6lld moved  ",
                (long long)json_integer_value(json_object_get(p, "id")),
                json_string_value(json_object_get(p, "at")),
                json_string_value(json_object_get(p, "type")),
                (long long)json_integer_value(json_object_get(p, "keys_moved")));
        print_subject(c->out, p, LOG_SUBJECT_COLUMNS);
        fputc('\n', c->out);
    }
    if (!json_array_size(json_object_get(j, "operations")))
        fprintf(c->out, "(no operations)\n");
}

static int run_log(cmd_ctx *c)
{
    if (c->l->nargs)
        return run_log_one(c);
    return show(c, view_operations(c->s, 0, -1, &c->err), "operations", log_text);
}

/* diff A B: what changed between the states after A and after B, every
 * move listed (docs/api.md v3; the API pages them). */
static void print_pairs(FILE *out, json_t *pairs);

static int run_diff(cmd_ctx *c)
{
    uint64_t a = 0, b = 0;
    parse_u64(c->l->args[0], &a); /* checked by check_args */
    parse_u64(c->l->args[1], &b);
    json_t *j = view_diff(c->s, NULL, (int64_t)a, (int64_t)b, 0, INT64_MAX, &c->err);
    if (!j)
        return c->err.code;
    if (c->l->opt[CMD_O_JSON]) {
        print_json(c->out, j);
        json_decref(j);
        return 0;
    }
    const char *how = json_string_value(json_object_get(j, "how"));
    fprintf(c->out, "from %llu to %llu (%s)\n", (unsigned long long)a, (unsigned long long)b,
            how && !strcmp(how, "log") ? "composed from the log" : "by comparing the two states");
    fprintf(c->out, "keys moved %lld, added %lld, removed %lld\n",
            (long long)json_integer_value(json_object_get(j, "keys_moved")),
            (long long)json_integer_value(json_object_get(j, "keys_added")),
            (long long)json_integer_value(json_object_get(j, "keys_removed")));
    static const char *const lists[][2] = {{"nodes_added", "nodes added"},
                                           {"nodes_removed", "nodes removed"}};
    for (size_t k = 0; k < 2; k++) {
        json_t *l = json_object_get(j, lists[k][0]), *v;
        size_t i;
        fprintf(c->out, "%s:", lists[k][1]);
        json_array_foreach(l, i, v)
        {
            fputs(i ? ", " : " ", c->out);
            cmd_print_padded(c->out, json_string_value(v), 0);
        }
        fprintf(c->out, "%s\n", json_array_size(l) ? "" : " none");
    }
    fprintf(c->out, "configuration %s\n",
            json_is_true(json_object_get(j, "config_changed")) ? "changed" : "unchanged");
    static const char *const tallies[][2] = {{"moved_from", "moved from"}, {"moved_to", "moved to"}};
    for (size_t k = 0; k < 2; k++) {
        json_t *l = json_object_get(j, tallies[k][0]), *v;
        size_t i;
        if (!json_array_size(l))
            continue;
        fprintf(c->out, "%s:", tallies[k][1]);
        json_array_foreach(l, i, v)
        {
            const char *n = json_string_value(json_object_get(v, "node"));
            fputs(i ? ", " : " ", c->out);
            cmd_print_padded(c->out, n ? n : "(none)", 0);
            fprintf(c->out, " %lld", (long long)json_integer_value(json_object_get(v, "keys")));
        }
        fputc('\n', c->out);
    }
    print_pairs(c->out, json_object_get(j, "pairs")); /* every move, by (from, to) */
    json_t *m;
    size_t i;
    json_array_foreach(json_object_get(j, "moves"), i, m)
    {
        const char *f = json_string_value(json_object_get(m, "from"));
        const char *t = json_string_value(json_object_get(m, "to"));
        cmd_print_padded(c->out, json_string_value(json_object_get(m, "key")), 24);
        fputs(" ", c->out);
        cmd_print_padded(c->out, f ? f : "(none)", 0);
        fputs(" -> ", c->out);
        cmd_print_padded(c->out, t ? t : "(none)", 0);
        fputc('\n', c->out);
    }
    json_decref(j);
    return 0;
}

static void algorithms_text(cmd_ctx *c, json_t *j)
{
    json_t *a = json_object_get(j, "algorithms"), *e;
    size_t i;
    fprintf(c->out, "%-11s %-8s %-8s %-22s %s\n", "ALGORITHM", "WEIGHTS", "REPLICAS", "PARAMS",
            "TITLE");
    json_array_foreach(a, i, e)
    {
        char ps[128] = "";
        json_t *p;
        size_t k;
        json_array_foreach(json_object_get(e, "params"), k, p)
        {
            char one[64];
            json_t *d = json_object_get(p, "default");
            if (json_is_string(d)) /* a choice by name (twemproxy's hash) */
                snprintf(one, sizeof one, "%s%s=%s", k ? " " : "",
                         json_string_value(json_object_get(p, "name")), json_string_value(d));
            else
                snprintf(one, sizeof one, "%s%s=%lld", k ? " " : "",
                         json_string_value(json_object_get(p, "name")),
                         (long long)json_integer_value(d));
            strncat(ps, one, sizeof ps - strlen(ps) - 1);
        }
        fprintf(c->out, "%-11s %-8s %-8s %-22s %s\n", json_string_value(json_object_get(e, "name")),
                json_string_value(json_object_get(e, "weight_rule")),
                json_string_value(json_object_get(e, "replica_rule")), *ps ? ps : "-",
                json_string_value(json_object_get(e, "title")));
    }
}

static int run_algorithms(cmd_ctx *c)
{
    return show(c, view_algorithms(&c->err), NULL, algorithms_text);
}

#define CHECK_REPORT_SIZE 65536

static int run_check(cmd_ctx *c)
{
    int64_t problems;
    char *report = malloc(CHECK_REPORT_SIZE);
    if (!report)
        return rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
    if (sim_check(c->s, &problems, report, CHECK_REPORT_SIZE, &c->err)) {
        free(report);
        return c->err.code;
    }
    int64_t keys = sim_key_count(c->s), ops = sim_last_op(c->s);
    if (ops < 0) {
        free(report);
        return rs_fail(&c->err, (int)ops, "cannot read the operation log");
    }
    if (c->l->opt[CMD_O_JSON]) {
        json_t *lines = json_array();
        for (char *save, *l = strtok_r(report, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            json_array_append_new(lines, json_string(l));
        json_t *j = json_pack("{s:b, s:I, s:I, s:I, s:I, s:o}", "ok", problems == 0, "problems",
                              (json_int_t)problems, "nodes", (json_int_t)sim_node_count(c->s), "keys",
                              (json_int_t)keys, "operations", (json_int_t)ops, "report", lines);
        print_json(c->out, j);
        json_decref(j);
    } else if (problems == 0) {
        fprintf(c->out,
                "ok: %lld keys on %zu nodes where the ring says; %lld operations replayed "
                "to the same state\n",
                (long long)keys, sim_node_count(c->s), (long long)ops);
    } else {
        fputs(report, c->out);
    }
    free(report);
    if (problems)
        return rs_fail(&c->err, RINGSIM_EPARAM, "check found %lld problem%s", (long long)problems,
                       problems == 1 ? "" : "s");
    return 0;
}

static void print_tally(FILE *out, const char *what, json_t *list)
{
    json_t *e;
    size_t i;
    json_array_foreach(list, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "node"));
        fprintf(out, "%s %s %lld", i ? "," : what, n ? n : "no live replica",
                (long long)json_integer_value(json_object_get(e, "keys")));
    }
}

/* The exact (from, to) pairs, largest first: "  a -> b  1,234 keys". */
static void print_pairs(FILE *out, json_t *pairs)
{
    json_t *e;
    size_t i;
    json_array_foreach(pairs, i, e)
    {
        const char *f = json_string_value(json_object_get(e, "from"));
        const char *t = json_string_value(json_object_get(e, "to"));
        char n[32];
        thousands(n, sizeof n, (long long)json_integer_value(json_object_get(e, "keys")));
        fprintf(out, "%s", i ? "" : "moves by pair:\n");
        fprintf(out, "  %s -> %s  %s keys\n", f ? f : "no live replica", t ? t : "no live replica",
                n);
    }
}

/* Each node after the change: its keys, its share of the served keys and
 * its fair share, "22,385 keys, 22.4% (ideal 2/9 = 22.2%)". */
static void print_after(FILE *out, json_t *after)
{
    json_t *per = json_object_get(after, "per_node"), *e;
    size_t i, wname = cmd_column_width(per, "name", 4);
    double total = 0, wsum = 0;
    json_array_foreach(per, i, e)
    {
        total += (double)json_integer_value(json_object_get(e, "keys"));
        if (json_number_value(json_object_get(e, "fair_share")) > 0)
            wsum += json_number_value(json_object_get(e, "weight"));
    }
    if (!json_array_size(per) || !(total > 0))
        return;
    fprintf(out, "after:\n");
    json_array_foreach(per, i, e)
    {
        json_int_t k = json_integer_value(json_object_get(e, "keys"));
        double fair = json_number_value(json_object_get(e, "fair_share"));
        double fw = json_number_value(json_object_get(e, "weight"));
        char n[32], w[32], ws[32];
        thousands(n, sizeof n, (long long)k);
        fprintf(out, "  ");
        cmd_print_padded(out, json_string_value(json_object_get(e, "name")), wname);
        fprintf(out, "  %s keys, %.1f%%", n, total > 0 ? 100 * (double)k / total : 0.0);
        if (fair > 0) {
            shortest(w, sizeof w, fw);
            shortest(ws, sizeof ws, wsum);
            fprintf(out, " (ideal %s/%s = %.1f%%)\n", w, ws, 100 * fair);
        } else {
            fprintf(out, " (takes no keys)\n");
        }
    }
}

/* What the operation of req would do, recorded nowhere. */
static int preview(cmd_ctx *c, view_preview_req *req)
{
    json_t *j = view_preview(c->s, req, &c->err);
    if (!j)
        return c->err.code;
    FILE *out = c->out;
    if (c->l->opt[CMD_O_JSON]) {
        print_json(out, j);
    } else {
        json_t *b = json_object_get(j, "before"), *a = json_object_get(j, "after");
        json_int_t moved = json_integer_value(json_object_get(j, "keys_moved"));
        fprintf(out, "would move %lld key%s", (long long)moved, moved == 1 ? "" : "s");
        print_tally(out, ": from", json_object_get(j, "moved_from"));
        print_tally(out, "; to", json_object_get(j, "moved_to"));
        fprintf(out, "\nreplica copies added: %lld\n",
                (long long)json_integer_value(json_object_get(j, "replica_moves")));
        /* the miss spike for a cache; what a join streams, where sizes say */
        bool req = moved && skewed(c->s), by = moved && sized(c->s);
        json_int_t bm = json_integer_value(json_object_get(j, "bytes_moved"));
        if (req)
            fprintf(out, "%.1f%% of requests would move",
                    100 * json_number_value(json_object_get(j, "requests_moved")));
        if (by)
            fprintf(out, req ? ", %lld bytes" : "%lld bytes would move", (long long)bm);
        if (req || by)
            fprintf(out, "\n");
        print_pairs(out, json_object_get(j, "pairs"));
        fprintf(out, "max/mean %.4f -> %.4f, cv %.4f -> %.4f, nodes %lld -> %lld\n",
                json_number_value(json_object_get(b, "max_over_mean")),
                json_number_value(json_object_get(a, "max_over_mean")),
                json_number_value(json_object_get(b, "cv")),
                json_number_value(json_object_get(a, "cv")),
                (long long)json_integer_value(json_object_get(b, "nodes")),
                (long long)json_integer_value(json_object_get(a, "nodes")));
        print_after(out, a);
        print_unavailable(out, "unavailable after", json_object_get(j, "unavailable_after"),
                          skewed(c->s), sized(c->s));
        fprintf(out, "nothing was changed\n");
    }
    json_decref(j);
    return 0;
}

static int run_preview_node(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    const char *name = l->args[1];
    const char *w = l->args[0];
    view_preview_req req = {!strcmp(w, "add")  ? "add_node"
                            : !strcmp(w, "rm") ? "remove_node"
                                               : "set_state",
                            {name, strlen(name), l->weight, l->tokens, l->ntokens, l->srv_id,
                             !strcmp(w, "down"), false, NULL, 0},
                            *sim_config(c->s),
                            NULL};
    return preview(c, &req);
}

static int run_preview_config(cmd_ctx *c)
{
    view_preview_req req = {"configure", {0}, *sim_config(c->s), NULL};
    int rc = cmd_config_apply(c->l, &req.cfg, &c->err);
    return rc ? rc : preview(c, &req);
}

static int run_compare(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    json_t *j = view_compare(c->s, l->opt[CMD_O_ALGORITHMS], l->params, (size_t)l->nparams, 100000,
                             &c->err);
    if (!j)
        return c->err.code;
    FILE *out = c->out;
    if (l->opt[CMD_O_JSON]) {
        print_json(out, j);
        json_decref(j);
        return 0;
    }
    json_t *smp = json_object_get(j, "sample");
    fprintf(out, "%lld keys on %lld nodes%s\n",
            (long long)json_integer_value(json_object_get(j, "keys")),
            (long long)json_integer_value(json_object_get(j, "nodes")),
            json_is_true(json_object_get(smp, "sampled")) ? " (an even sample of keys placed)" : "");
    /* Under a skewed workload, the requests beside the keys. */
    bool req = skewed(c->s);
    fprintf(out, "  %-11s %9s %8s %10s %10s %9s %9s %9s", "ALGORITHM", "MAX/MEAN", "CV",
            "STRUCTURAL", "LOOKUP ns", "MEMORY", "+1 MOVES", "-1 MOVES");
    fprintf(out, req ? " %9s %8s %8s\n" : "\n", "REQ M/M", "+1 REQ%", "-1 REQ%");
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(j, "results"), i, e)
    {
        const char *name = json_string_value(json_object_get(e, "algorithm"));
        char mark = json_is_true(json_object_get(e, "current")) ? '*' : ' ';
        json_t *error = json_object_get(e, "error");
        if (error) {
            fprintf(out, "%c %-11s %s\n", mark, name,
                    json_string_value(json_object_get(error, "message")));
            continue;
        }
        json_t *st = json_object_get(e, "stats");
        fprintf(out, "%c %-11s %9.4f %8.4f %10.4f %10.0f %9lld %9lld %9lld", mark, name,
                json_number_value(json_object_get(st, "max_over_mean")),
                json_number_value(json_object_get(st, "cv")),
                json_number_value(json_object_get(e, "structural_max_over_mean")),
                json_number_value(json_object_get(e, "lookup_ns")),
                (long long)json_integer_value(json_object_get(e, "memory_bytes")),
                (long long)json_integer_value(json_object_get(e, "moves_if_added")),
                (long long)json_integer_value(json_object_get(e, "moves_if_removed")));
        if (req)
            fprintf(out, " %9.4f %7.2f%% %7.2f%%",
                    json_number_value(
                        json_object_get(json_object_get(st, "requests"), "max_over_mean")),
                    100 * json_number_value(json_object_get(e, "requests_moved_if_added")),
                    100 * json_number_value(json_object_get(e, "requests_moved_if_removed")));
        fprintf(out, "\n");
    }
    fprintf(out, "(* the current algorithm; +1: keys moved if a node joined, -1: mean if one "
                 "left)\n");
    json_decref(j);
    return 0;
}

#define TRAFFIC_DEFAULT_REQUESTS "100000"
#define TRAFFIC_DEFAULT_CONCURRENCY "100"

/* traffic run [--requests N] [--concurrency C] [--seed S] [--factor F]: the
 * replay of POST /api/traffic/run; a table of nodes for people. */
static int run_traffic(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    const char *rq = l->opt[CMD_O_REQUESTS], *cc = l->opt[CMD_O_CONCURRENCY];
    const char *sd = l->opt[CMD_O_SEED], *fc = l->opt[CMD_O_FACTOR];
    traffic_params p = {0, 0, 0, -1, 0};
    uint64_t u;
    /* Defaults (issue 25): 100,000 requests, 100 in flight on average. */
    if (!rq)
        rq = TRAFFIC_DEFAULT_REQUESTS;
    if (!cc)
        cc = TRAFFIC_DEFAULT_CONCURRENCY;
    if (parse_u64(rq, &p.requests) || p.requests < 1 || p.requests > TRAFFIC_MAX_REQUESTS)
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--requests must be a whole number from 1 to %llu, not \"%.64s\"",
                       TRAFFIC_MAX_REQUESTS, rq);
    if (cmd_parse_number(cc, &p.concurrency) || !(p.concurrency > 0) ||
        p.concurrency > TRAFFIC_MAX_CONCURRENCY)
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--concurrency must be a number above 0 and at most %.0f, not \"%.64s\"",
                       TRAFFIC_MAX_CONCURRENCY, cc);
    if (sd && (parse_u64(sd, &p.seed) || p.seed > (uint64_t)INT64_MAX))
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--seed must be a whole number from 0 to %lld, not \"%.64s\"",
                       (long long)INT64_MAX, sd);
    if (fc) {
        if (parse_u64(fc, &u) || u > 4294967295u)
            return rs_fail(&c->err, RINGSIM_EPARAM,
                           "--factor must be a whole number from 0 to 4294967295, not \"%.64s\"", fc);
        p.factor = (int64_t)u;
    }
    traffic_result r;
    int rc = traffic_run(c->s, &p, &r, &c->err);
    json_t *j = rc ? NULL : traffic_json(c->s, &p, &r, &c->err);
    traffic_result_clear(&r);
    if (rc || !j)
        return rc ? rc : c->err.code;
    FILE *out = c->out;
    if (l->opt[CMD_O_JSON]) {
        print_json(out, j);
        json_decref(j);
        return 0;
    }
    const char *rule = json_string_value(json_object_get(j, "rule"));
    fprintf(out, "%lld requests, %g in flight on average, seed %lld, %s: ",
            (long long)json_integer_value(json_object_get(j, "requests")), p.concurrency,
            (long long)p.seed, json_string_value(json_object_get(j, "algorithm")));
    if (!strcmp(rule, "none"))
        fprintf(out, "every request to its key's node\n");
    else
        fprintf(out, "bounded loads, %s, factor %lld\n",
                !strcmp(rule, "haproxy") ? "HAProxy's chash_server_is_eligible"
                : !strcmp(rule, "envoy") ? "Envoy's BoundedLoadHashingLoadBalancer"
                                         : "Mirrokni-Thorup-Zadimoghaddam",
                (long long)json_integer_value(json_object_get(j, "factor")));
    json_t *e, *nodes = json_object_get(j, "nodes");
    size_t i, wname = cmd_column_width(nodes, "name", 4);
    fprintf(out, "  ");
    cmd_print_padded(out, "Node", wname);
    fprintf(out, " %12s %10s %10s %10s\n", "Handled", "Peak", "Sent away", "Load/fair");
    json_array_foreach(nodes, i, e)
    {
        fprintf(out, "  ");
        cmd_print_padded(out, json_string_value(json_object_get(e, "name")), wname);
        json_t *lf = json_object_get(e, "load_over_fair");
        char lfs[32];
        if (json_is_number(lf))
            snprintf(lfs, sizeof lfs, "%.4f", json_number_value(lf));
        else
            snprintf(lfs, sizeof lfs, "%s", "-");
        fprintf(out, " %12lld %10lld %9.2f%% %10s\n",
                (long long)json_integer_value(json_object_get(e, "handled")),
                (long long)json_integer_value(json_object_get(e, "peak_in_flight")),
                100 * json_number_value(json_object_get(e, "sent_away")), lfs);
    }
    fprintf(out,
            "requests max/mean %.4f, peak in flight max/mean %.4f (against fair shares), sent "
            "away %.2f%%, probes per request %.4f\nnothing was recorded\n",
            json_number_value(json_object_get(j, "requests_max_over_mean")),
            json_number_value(json_object_get(j, "peak_in_flight_max_over_mean")),
            100 * json_number_value(json_object_get(j, "sent_away")),
            json_number_value(json_object_get(j, "probes_per_request")));
    json_int_t unserved = json_integer_value(json_object_get(j, "unserved"));
    json_int_t total = json_integer_value(json_object_get(j, "requests"));
    if (unserved)
        fprintf(out,
                "unavailable: %lld requests (%.2f%%) unserved: no live replica (every node that "
                "could serve their keys is down)\n",
                (long long)unserved, total ? 100.0 * (double)unserved / (double)total : 0.0);
    json_decref(j);
    return 0;
}

/* ---- the table ---- */

#define O(x) CMD_BIT(CMD_O_##x)

const cmd_def cmd_table[] = {
    {"serve", "", 0, 0, O(HOST) | O(PORT) | O(WEB) | O(TOKEN), CMD_F_NO_DB, "start the web simulator",
     "Serves the page and the HTTP API (docs/api.md) on the database until interrupted "
     "(Ctrl-C or SIGTERM). A change made by another ringsim process on the same database "
     "reaches every open page within a second. On an address other than loopback every "
     "request needs the access token: --token, $RINGSIM_TOKEN, or one made up and printed "
     "in the URL.",
     NULL, 0},
    {"node add", "NAME", 1, 1, O(WEIGHT) | O(TOKENS) | O(ID) | O(BACKUP) | O(DOWN), CMD_F_CHANGE,
     "add a node",
     "Adds the node NAME; the keys of the arcs it takes over move to it. A node with a "
     "weight holds a proportional number of points (or slots, or table entries).",
     run_node_add, 0},
    {"node rm", "NAME", 1, 1, 0, CMD_F_CHANGE, "remove a node",
     "Removes the node NAME; its keys move to the nodes that now own their positions.", run_node_rm,
     0},
    {"node weight", "NAME W", 2, 2, 0, CMD_F_CHANGE, "change a node's weight in place",
     "Gives the node NAME the weight W (a number above 0, in decimal digits); the keys move "
     "as the placement says. One set_weight operation; the weight it already has changes "
     "nothing and records nothing.",
     run_node_weight, 0},
    {"node down", "NAME", 1, 1, 0, CMD_F_CHANGE, "mark a node down (failed, still configured)",
     "Marks the node NAME down: it stays in the configuration and its keys are served as the "
     "algorithm's real system serves them when that server fails (docs/api.md, Node states). "
     "One set_state operation; a node already down changes nothing and records nothing.",
     run_node_state, 0},
    {"node up", "NAME", 1, 1, 0, CMD_F_CHANGE, "mark a node up again",
     "Marks the node NAME up: the keys it owns come back to it. One set_state operation; a "
     "node already up changes nothing and records nothing.",
     run_node_state, 0},
    {"node ls", "", 0, 0, O(CSV), 0, "list nodes (like nodetool status)",
     "Lists the nodes in the configuration's order (as they were added or imported): "
     "position, weight, points, keys (those it serves), key share, ring share and state "
     "(up or down). --json and --csv list them by position, as GET /api/nodes.",
     run_node_ls, 0},
    {"key add", "KEY... | -", 0, -1, O(FILE), CMD_F_CHANGE, "insert keys, or the keys of a file",
     "Inserts the keys. One key must be new; in a list, keys that exist or repeat are "
     "skipped and counted. With --file F, or - alone for standard input, the keys are "
     "the file's lines, one a line: a trailing carriage return and a byte order mark are "
     "dropped, empty lines skipped, anything else is the key byte for byte (spaces kept, "
     "no comments). Every line is checked before anything changes, a refusal names the "
     "line; the file is streamed, never held in memory, into one insert_keys operation "
     "(scenario files cannot read files). A key named - stands after --.",
     run_key_add, 0},
    {"key rm", "KEY...", 1, -1, 0, CMD_F_CHANGE, "delete keys",
     "Deletes the keys; every one of them must exist.", run_key_rm, 0},
    {"key ls", "", 0, 0, O(NODE) | O(CSV), 0, "list keys by position",
     "Lists every stored key ordered by (position, key): its position, its coordinate "
     "under the current algorithm named in the system's words (a Redis slot, a Cassandra "
     "token...; none where the position is the coordinate) and its node. Keys longer than "
     "24 columns and names longer than 32 are cut with an ellipsis; --json and --csv give "
     "them whole.",
     run_key_ls, 0},
    {"key gen", "COUNT", 1, 1, O(PREFIX) | O(START) | O(YCSB), CMD_F_CHANGE, "insert generated keys",
     "Inserts the keys P+S ... P+(S+COUNT-1): COUNT from 1 to 10,000,000, prefix P "
     "(default key-), start S (default 0). Keys that exist are skipped. With --ycsb, "
     "YCSB's own key names for the record numbers S ... S+COUNT-1 (S default 0): "
     "user followed by Math.abs(Utils.fnvhash64(n)), as CoreWorkload's buildKeyName "
     "makes them with insertorder=hashed.",
     run_key_gen, 0},
    {"workload", "[KIND]", 0, 1, O(PARAM), CMD_F_CHANGE_ARGS,
     "show or set the workload: each key's share of requests",
     "Without KIND, shows the workload. With KIND (uniform, zipf, hotspot, keys) and its "
     "parameters (--param s=1.1, --param seed=7, --param order=insert, --param "
     "hot_fraction=0.2 --param hot_share=0.8, --param 'keys=[{\"key\": \"k\", \"share\": "
     "0.3}]'; value sizes as --param sizes.kind=uniform --param sizes.min=100 --param "
     "sizes.max=1000), sets it: one workload operation. --param alone changes the current "
     "workload's parameters. Nodes then answer requests and bytes, operations "
     "requests_moved and bytes_moved.",
     run_workload, 0},
    {"lookup", "KEY", 1, 1, 0, 0, "where a key goes, stored or not",
     "Shows where KEY goes: its position, hash, coordinate, owner, replicas and the steps "
     "from key to owner.",
     run_lookup, 0},
    {"stats", "", 0, 0, 0, 0, "balance statistics",
     "Keys per node: mean, population standard deviation, cv, min, max, max/mean.", run_stats, 0},
    {"log", "[ID]", 0, 1, O(CSV), 0, "the operation log, or one operation's moves",
     "Lists every operation; with ID, that operation and every key it moved (from, to).", run_log, 0},
    {"diff", "A B", 2, 2, 0, 0, "what changed between the states after two operations",
     "What changed from the state after operation A to the state after operation B (0: "
     "the empty start; either may be the later): keys moved (from, to; every one listed), "
     "keys and nodes added and removed, whether the configuration changed. Composed from "
     "the log's records of the operations in between (through resets and reverts), so it "
     "costs what they changed. Nothing is recorded.",
     run_diff, 0},
    {"ring", "", 0, 0, 0, 0, "the ring's points in order",
     "Lists the points (or slot ranges, or table runs) of the current placement.", run_ring, 0},
    {"config", "", 0, 0, CONFIG_OPTS, CMD_F_CHANGE_OPTS, "show or change the configuration",
     "Without options, shows the configuration. With options, switches the algorithm, its "
     "parameters or the number of replicas: one configure operation, and keys move as the "
     "new placement says.",
     run_config, 0},
    {"algorithms", "", 0, 0, 0, CMD_F_NO_DB, "the placement algorithms and their parameters",
     "Lists the placement algorithms: what each reproduces, its parameters and defaults, "
     "whether it honours weights and replicas.",
     run_algorithms, 0},
    {"compare", "", 0, 0, O(ALGORITHMS) | O(PARAM), 0, "the nodes and keys placed by each algorithm",
     "Places the current nodes and keys with each algorithm side by side: max/mean, cv, "
     "structural balance, lookup time, memory, keys moved if a node joined or left. "
     "Nothing is recorded.",
     run_compare, 0},
    {"traffic run", "", 0, 0, O(REQUESTS) | O(CONCURRENCY) | O(SEED) | O(FACTOR), 0,
     "replay requests through the placement and its bounded loads",
     "Replays N requests drawn from the workload's shares, C in flight on average (Poisson "
     "arrivals, exponential durations, from the seed S), through the current algorithm: with "
     "hash_balance_factor (haproxy, envoy-ring, maglev) or balance_factor (ring) above 0, "
     "each request goes where that balancer's bounded-load rule sends it. Per node: requests "
     "handled, peak in flight, share of its own keys' requests served elsewhere. Nothing is "
     "recorded.",
     run_traffic, 0},
    {"preview node", "add|rm|down|up NAME", 2, 2, O(WEIGHT) | O(TOKENS) | O(ID), 0,
     "what adding, removing or failing a node would do",
     "What `node add NAME`, `node rm NAME`, `node down NAME` or `node up NAME` would do: "
     "keys moved by source and destination, replica copies, statistics before and after. "
     "Nothing is recorded.",
     run_preview_node, 0},
    {"preview config", "", 0, 0, CONFIG_OPTS, 0, "what a configuration change would do",
     "What `config` with these options would do. Nothing is recorded.", run_preview_config, 0},
    {"preview import", "FILE|-", 1, 1, O(FORMAT) | O(NAME), 0, "what importing a cluster would do",
     "What `import` of this text would do: keys moved by source and destination, statistics "
     "before and after, the nodes and notes read from the text. Nothing is recorded.",
     import_face_run_preview, 0},
    /* Not CMD_F_CHANGE: a scenario (POST /api/scenarios/run too) must not
     * read the server's files. */
    {"import", "FILE|-", 1, 1, O(FORMAT) | O(NAME), 0,
     "make the simulation a real cluster (nginx.conf, haproxy.cfg, ...)",
     "Reads a real system's configuration or status text (FILE, or - for standard input): "
     "an nginx upstream, a HAProxy backend, a libmemcached server list or configuration "
     "string, a twemproxy pool, an Envoy cluster, `nodetool ring` or `CLUSTER NODES` output "
     "(--format, default auto). One import operation sets the algorithm and its parameters "
     "and replaces the nodes with the text's, in its order, with weights, tokens, ids, "
     "states and slots; stored keys move as the new placement says. A text the real program "
     "would refuse is refused with its line; --name picks one section when the text has "
     "several.",
     import_face_run, 0},
    {"revert", "ID", 1, 1, 0, CMD_F_CHANGE, "make the state what it was after operation ID",
     "The nodes, keys and configuration become what they were right after operation ID "
     "(0: empty). The history is kept: the revert is one more operation.",
     run_revert, 0},
    {"reset", "", 0, 0, 0, CMD_F_CHANGE, "remove every node and key",
     "Removes every node and key and keeps the configuration; one operation.", run_reset, 0},
    {"check", "", 0, 0, 0, 0, "verify placement and replay the log",
     "Verifies the database: every key is on the node the placement says, and replaying "
     "the operation log gives the stored state. Exit 1 when something is wrong.",
     run_check, 0},
    {"run", "FILE | --builtin NAME", 0, 1, O(BUILTIN), 0, "run a scenario file",
     "Runs a scenario: one command a line, the words of this command line without "
     "`ringsim` (blank lines and lines starting with # are ignored), each change one "
     "operation, and `expect STAT OP VALUE` lines that check the state (STAT: nodes, keys, "
     "max_over_mean, cv, keys_moved, replica_moves, requests_max_over_mean, requests_cv, "
     "requests_bound, hottest_share, requests_moved, bytes_moved, owner(KEY); OP: == != < "
     "<= > >=). "
     "Prints a report. Exit 1 at the first failing line, exit 2 on a syntax error; both "
     "name the file and line. FILE - reads standard input.",
     NULL, 0},
    {"export", "--scenario | --config F", 0, 0, O(SCENARIO) | O(CONFIG), 0,
     "write the history as a scenario file, or the nodes as a real system's configuration",
     "With --scenario, writes a scenario file of the operations that rebuild the current "
     "state: run it on any database (`ringsim run FILE`) to get the same nodes, keys and "
     "configuration. With --config F, writes the current nodes as the real system F takes "
     "them: nginx, haproxy, libmemcached, twemproxy and envoy configuration that imports "
     "back to the same owners; cassandra's initial_token lines; redis's redis-cli --cluster "
     "commands from the imported slot layout to the current one; nodetool-ring and "
     "redis-nodes status text.",
     NULL, 0},
    {"scenarios", "[NAME]", 0, 1, 0, CMD_F_NO_DB, "the built-in scenarios, or one's text",
     "Lists the scenarios built into ringsim; with NAME, prints that scenario's file.", NULL, 0},
    {"help", "[COMMAND]", 0, -1, 0, CMD_F_NO_DB, "this list, or one command's usage",
     "Without COMMAND, lists the commands; with COMMAND (\"node add\", \"run\"...), its "
     "usage and options; with a command group (\"node\", \"key\", \"preview\"), the "
     "group's commands.",
     NULL, 0},
    {"complete", "WORD...", 0, -1, 0, CMD_F_NO_DB | CMD_F_HIDDEN,
     "completion candidates for the shell", "Used by the bash completion script.", NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0},
};

#undef O

/* ---- parsing ---- */

static int word_count(const char *name)
{
    int n = 1;
    for (const char *p = name; *p; p++)
        n += *p == ' ';
    return n;
}

/* Whether words[0..k) spell name. */
static bool words_are(const char *name, char **words, int k)
{
    const char *p = name;
    for (int i = 0; i < k; i++) {
        size_t n = strlen(words[i]);
        if (strncmp(p, words[i], n) != 0 || (p[n] != ' ' && p[n] != '\0'))
            return false;
        p += n;
        if (*p == ' ')
            p++;
    }
    return *p == '\0';
}

const cmd_def *cmd_find(char **words, int n, int *used, bool *group)
{
    *group = false;
    *used = 0;
    if (n < 1)
        return NULL;
    for (const cmd_def *d = cmd_table; d->name; d++) {
        int k = word_count(d->name);
        if (k <= n && words_are(d->name, words, k)) {
            *used = k;
            return d;
        }
        if (k > 1 && words_are(d->name, words, 1) == false) {
            size_t l = strlen(words[0]);
            if (strncmp(d->name, words[0], l) == 0 && d->name[l] == ' ')
                *group = true;
        }
    }
    return NULL;
}

static int find_option(const char *name)
{
    for (int i = 0; i < CMD_O_COUNT; i++)
        if (strcmp(cmd_options[i].name, name) == 0)
            return i;
    return -1;
}

/* Values of the positionals, by command. */
static int check_args(cmd_line *l, rs_error *err)
{
    const char *n = l->def->name;
    uint64_t v;
    if (!strcmp(n, "key gen")) {
        if (parse_u64(l->args[0], &l->count) || l->count < 1 || l->count > SIM_MAX_GENERATE)
            return rs_fail(err, RINGSIM_EPARAM,
                           "COUNT must be a whole number from 1 to %u, not \"%.64s\"",
                           SIM_MAX_GENERATE, l->args[0]);
    } else if (!strcmp(n, "revert") || (!strcmp(n, "log") && l->nargs)) {
        if (parse_u64(l->args[0], &v) || v > INT64_MAX || (n[0] == 'l' && v < 1))
            return rs_fail(err, RINGSIM_EPARAM,
                           "operation ID must be a whole number, not \"%.64s\"", l->args[0]);
        l->id = (int64_t)v;
    } else if (!strcmp(n, "diff")) {
        for (int i = 0; i < 2; i++)
            if (parse_u64(l->args[i], &v) || v > INT64_MAX)
                return rs_fail(err, RINGSIM_EPARAM,
                               "operation ID must be a whole number, not \"%.64s\"", l->args[i]);
    } else if (!strcmp(n, "key add")) {
        /* KEY..., a lone "-" (standard input) or --file F; a key named "-"
         * stands after "--" */
        for (int i = 0; l->nargs > 1 && i < l->nargs && i < l->literal_from; i++)
            if (!strcmp(l->args[i], "-")) {
                rs_fail(err, RINGSIM_EPARAM,
                        "- reads the keys from standard input and stands alone; a key named - "
                        "stands after --");
                return CMD_EXIT_USAGE; /* the message is kept */
            }
        if (l->opt[CMD_O_FILE] ? l->nargs > 0 : l->nargs == 0)
            return CMD_EXIT_USAGE; /* keys and a file, or neither */
    } else if (!strcmp(n, "node weight")) {
        return parse_weight(l->args[1], &l->weight, err);
    } else if (!strcmp(n, "preview node")) {
        if (strcmp(l->args[0], "add") && strcmp(l->args[0], "rm") && strcmp(l->args[0], "down") &&
            strcmp(l->args[0], "up"))
            return CMD_EXIT_USAGE;
        if (strcmp(l->args[0], "add") != 0 &&
            (l->opt[CMD_O_WEIGHT] || l->opt[CMD_O_TOKENS] || l->opt[CMD_O_ID]))
            return CMD_EXIT_USAGE;
    }
    return 0;
}

/* Values of the options. */
static int check_options(cmd_line *l, rs_error *err)
{
    const char *w = l->opt[CMD_O_WEIGHT];
    int rc;
    if (w && (rc = parse_weight(w, &l->weight, err)))
        return rc;
    if (l->opt[CMD_O_TOKENS] &&
        (rc = parse_tokens(l->opt[CMD_O_TOKENS], &l->tokens, &l->ntokens, err)))
        return rc;
    uint64_t id;
    if (l->opt[CMD_O_ID]) {
        if (parse_u64(l->opt[CMD_O_ID], &id) || id < 1 || id > 2147483647)
            return rs_fail(err, RINGSIM_EPARAM,
                           "--id must be a whole number from 1 to 2147483647, not \"%.64s\"",
                           l->opt[CMD_O_ID]);
        l->srv_id = (int64_t)id;
    }
    if (l->opt[CMD_O_START] && parse_u64(l->opt[CMD_O_START], &l->start))
        return rs_fail(err, RINGSIM_EPARAM, "--start must be a whole number, not \"%.64s\"",
                       l->opt[CMD_O_START]);
    l->port = 3000;
    if (l->opt[CMD_O_PORT] && (parse_u64(l->opt[CMD_O_PORT], &l->port) || l->port > 65535))
        return rs_fail(err, RINGSIM_EPARAM, "--port must be 0 to 65535, not \"%.64s\"",
                       l->opt[CMD_O_PORT]);
    /* The configuration's values, on a scratch copy: the algorithm must be
     * one of the catalogue, every parameter in its range.  Without
     * --algorithm the parameters are the current algorithm's, which only
     * the run knows (run_config checks them there). */
    if (has_config_opts(l) && !(l->def->flags & CMD_F_CHANGE_ARGS) &&
        (l->opt[CMD_O_ALGORITHM] || !l->nparams)) {
        place_config cfg;
        place_config_default(&cfg);
        if ((rc = cmd_config_apply(l, &cfg, err)))
            return rc;
        if (l->opt[CMD_O_ALGORITHM]) {
            place_config probe;
            place_config_default(&probe);
            strcpy(probe.algorithm, cfg.algorithm);
            if ((rc = place_config_check(&probe, err)))
                return rc;
        }
    }
    return 0;
}

int cmd_parse(cmd_line *l, int argc, char **argv, rs_error *err)
{
    memset(l, 0, sizeof *l);
    err->code = 0;
    err->msg[0] = '\0';
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    l->params = calloc((size_t)argc + 1, sizeof *l->params);
    int given[CMD_O_COUNT] = {0}, npos = 0;
    if (!pos || !l->params) {
        free(pos);
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return CMD_EXIT_REFUSED;
    }
    l->args = pos;
    bool dashdash = false;
    int literal_from = argc; /* the positionals from here on came after "--" */
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] == '\0' || (a[1] != '-' && a[1] != 'h') ||
            (a[1] == '-' && a[2] == '\0')) {
            if (!dashdash && strcmp(a, "--") == 0) {
                dashdash = true;
                literal_from = npos;
                continue;
            }
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            l->help = true;
            continue;
        }
        if (a[1] != '-') {
            pos[npos++] = a; /* "-hx": a word */
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            l->version = true;
            continue;
        }
        char *name = a + 2, *val = strchr(name, '=');
        if (val)
            *val++ = '\0';
        int o = find_option(name);
        if (o < 0)
            return fail_usage(err, "unknown option --%.64s", name);
        if (!cmd_options[o].arg) {
            if (val)
                return fail_usage(err, "option --%.64s takes no value", name);
            val = "";
        } else if (!val) {
            if (i + 1 >= argc)
                return fail_usage(err, "option --%.64s needs a value", name);
            val = argv[++i];
        }
        if (o == CMD_O_PARAM)
            l->params[l->nparams++] = val;
        l->opt[o] = val;
        given[o] = 1;
    }
    l->nargs = npos;
    if (npos == 0)
        return CMD_EXIT_OK;
    int used;
    bool group;
    const cmd_def *d = cmd_find(pos, npos, &used, &group);
    if (!d && group && npos < 2)
        return fail_usage(err, "%.64s needs a subcommand", pos[0]);
    if (!d) {
        char words[160];
        snprintf(words, sizeof words, "%.64s%s%.64s", pos[0], group ? " " : "", group ? pos[1] : "");
        return fail_usage(err, "unknown command: %s", words);
    }
    l->def = d;
    l->args = pos + used;
    l->nargs = npos - used;
    l->literal_from = literal_from < npos ? literal_from - used : l->nargs;
    if (l->help) /* `ringsim node add --help`: the caller shows the usage */
        return CMD_EXIT_OK;
    for (int o = 0; o < CMD_O_COUNT; o++) {
        if (!given[o] || o == CMD_O_DB || o == CMD_O_JSON || (d->options & CMD_BIT(o)))
            continue;
        return fail_usage(err, "option --%s does not apply to this command", cmd_options[o].name);
    }
    for (int i = 0; i < l->nparams; i++) {
        const char *eq = strchr(l->params[i], '=');
        if (!eq || eq == l->params[i])
            return fail_usage(err, "--param takes NAME=VALUE, not \"%.64s\"", l->params[i]);
    }
    if (l->opt[CMD_O_CSV] && l->opt[CMD_O_JSON])
        return fail_usage(err, "--csv and --json: choose one%s", "");
    for (int o = 0; o < CMD_O_COUNT; o++)
        if ((d->required & CMD_BIT(o)) && !l->opt[o]) {
            char syn[256];
            err->code = RINGSIM_EPARAM;
            snprintf(err->msg, sizeof err->msg, "--%s is needed: usage: %s", cmd_options[o].name,
                     cmd_synopsis(d, syn, sizeof syn));
            return CMD_EXIT_USAGE;
        }
    if (l->nargs < d->min_args || (d->max_args >= 0 && l->nargs > d->max_args)) {
        char syn[256];
        err->code = RINGSIM_EPARAM;
        snprintf(err->msg, sizeof err->msg, "usage: %s", cmd_synopsis(d, syn, sizeof syn));
        return CMD_EXIT_USAGE;
    }
    l->weight = 1;
    int rc = check_args(l, err);
    if (rc == CMD_EXIT_USAGE && err->msg[0]) {
        err->code = RINGSIM_EPARAM;
        return CMD_EXIT_USAGE;
    }
    if (rc == CMD_EXIT_USAGE) {
        char syn[256];
        err->code = RINGSIM_EPARAM;
        snprintf(err->msg, sizeof err->msg, "usage: %s", cmd_synopsis(d, syn, sizeof syn));
        return CMD_EXIT_USAGE;
    }
    if (rc || (rc = check_options(l, err)))
        return fail_value(err, rc < 0 ? rc : RINGSIM_EPARAM);
    return CMD_EXIT_OK;
}

void cmd_line_clear(cmd_line *l)
{
    /* args points into the positional array, which starts at or before it */
    if (l->def && l->args)
        free(l->args - word_count(l->def->name));
    else
        free(l->args);
    free(l->params);
    free(l->tokens);
    memset(l, 0, sizeof *l);
}

bool cmd_changes(const cmd_line *l)
{
    return l->def && ((l->def->flags & CMD_F_CHANGE) ||
                      ((l->def->flags & CMD_F_CHANGE_OPTS) && has_config_opts(l)) ||
                      ((l->def->flags & CMD_F_CHANGE_ARGS) && (l->nargs > 0 || l->nparams > 0)));
}

bool cmd_reads_input(const cmd_line *l)
{
    return l->def && !strcmp(l->def->name, "key add") &&
           (l->opt[CMD_O_FILE] || (l->nargs == 1 && l->literal_from > 0 && !strcmp(l->args[0], "-")));
}

char *cmd_synopsis(const cmd_def *d, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s%s%s", d->name, *d->args ? " " : "", d->args);
    for (int o = 0; o < CMD_O_COUNT && n < size; o++) {
        if (!(d->options & CMD_BIT(o)) || o == CMD_O_BUILTIN || o == CMD_O_SCENARIO)
            continue;
        const cmd_option *op = &cmd_options[o];
        char named[48]; /* an option the positionals already show ("--config F") */
        snprintf(named, sizeof named, "--%s", op->name);
        if (strstr(d->args, named))
            continue;
        bool req = d->required & CMD_BIT(o);
        n += (size_t)snprintf(buf + n, size - n, " %s--%s%s%s%s%s", req ? "" : "[", op->name,
                              op->arg ? " " : "", op->arg ? op->arg : "", req ? "" : "]",
                              o == CMD_O_PARAM ? "..." : "");
    }
    return buf;
}

/* ---- running ---- */

int cmd_run(cmd_ctx *c, sim *s, const cmd_line *l, FILE *out)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->l = l;
    c->out = out;
    if (!l->def || !l->def->run)
        return rs_fail(&c->err, RINGSIM_EINTERNAL, "this command does not run here");
    int rc = l->def->run(c);
    if (rc && !c->err.msg[0])
        rs_fail(&c->err, rc, "%s", ringsim_strerror(rc));
    return rc;
}

void cmd_ctx_clear(cmd_ctx *c)
{
    json_decref(c->extra);
    c->extra = NULL;
}
