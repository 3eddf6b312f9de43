/*
 * cli.c - command parsing, human output and progress bars (see cli.h).
 *
 * --db and --json may stand anywhere; "--" ends the options so that keys
 * that look like options can be named.  The server is `ringsim serve`, which
 * hands over to http.c.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "api.h"
#include "sim.h"
#include "view.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: ringsim [--db PATH] [--json] COMMAND [ARGS]\n"
    "\n"
    "  serve [--host 127.0.0.1] [--port 3000] [--web DIR] [--token T]\n"
    "                                start the web simulator (beyond loopback it\n"
    "                                needs a token: --token, $RINGSIM_TOKEN or made)\n"
    "  node add NAME [--weight W] [--tokens T,T,...]   add a node\n"
    "  node rm NAME                   remove a node\n"
    "  node ls                       list nodes (like nodetool status)\n"
    "  key add KEY...                insert keys          key rm KEY...  delete keys\n"
    "  key ls [--node N]             list keys by position\n"
    "  key gen COUNT [--prefix P] [--start S]   insert P+S ... P+(S+COUNT-1)\n"
    "  lookup KEY                    where KEY goes, stored or not\n"
    "  stats                         balance statistics\n"
    "  log                           the operation log\n"
    "  ring                          the ring's points in order\n"
    "  config [--points N] [--algorithm A] [--param NAME=VALUE]... [--replicas R]\n"
    "                                 show or change the configuration\n"
    "  algorithms                     the placement algorithms and their parameters\n"
    "  compare [--algorithms a,b,...] [--param NAME=VALUE]...\n"
    "                                 the nodes and keys placed by each algorithm\n"
    "  preview node add NAME [--weight W] | node rm NAME | config [options]\n"
    "                                 what a change would do, recorded nowhere\n"
    "  revert ID                     make the state what it was after operation ID\n"
    "  check                         verify placement and replay the log\n"
    "\n"
    "--db defaults to $RINGSIM_DB or ./ringsim.db.  --json prints the API's JSON.\n";

typedef struct opts {
    const char *db;
    int json;
    const char *weight, *node, *prefix, *start, *points, *algorithm, *host, *port, *web;
    const char *replicas, *tokens, *algorithms, *token;
    char **params; /* every --param NAME=VALUE, in order */
    int nparams;
    char **args; /* positionals after the command words */
    int nargs;
} opts;

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "ringsim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nrun 'ringsim help' for usage\n");
    return EXIT_USAGE;
}

static int refused(const rs_error *err)
{
    fprintf(stderr, "ringsim: %s\n", err->msg[0] ? err->msg : ringsim_strerror(err->code));
    return EXIT_REFUSED;
}

/* ---- progress bar on a terminal ---- */

static int bar(void *ud, const char *what, uint64_t done, uint64_t total)
{
    (void)ud;
    int w = 30, fill = total ? (int)((double)done / (double)total * w) : w;
    fprintf(stderr, "\r%-12s [", what);
    for (int i = 0; i < w; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%%  %llu/%llu", total ? (int)(100.0 * (double)done / (double)total) : 100,
            (unsigned long long)done, (unsigned long long)total);
    if (done >= total)
        fputs("\r\033[K", stderr);
    fflush(stderr);
    return 0;
}

/* ---- output ---- */

static void print_json(json_t *j)
{
    char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (t)
        puts(t);
    free(t);
}

/* "12 keys moved: from bravo 9, charlie 3" for people. */
static void print_op(sim *s, int64_t id)
{
    rs_error err;
    json_t *o = view_operation_get(s, id, &err);
    if (!o)
        return;
    json_int_t moved = json_integer_value(json_object_get(o, "keys_moved"));
    printf("operation %lld %s: %s; %lld key%s moved", (long long)id,
           json_string_value(json_object_get(o, "type")),
           json_string_value(json_object_get(o, "subject")), (long long)moved,
           moved == 1 ? "" : "s");
    json_t *mf = json_object_get(o, "moved_from"), *e;
    size_t i;
    json_array_foreach(mf, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "node"));
        printf("%s%s %lld", i ? ", " : " (from ", n ? n : "(none)",
               (long long)json_integer_value(json_object_get(e, "keys")));
    }
    printf("%s\n", json_array_size(mf) ? ")" : "");
    json_decref(o);
}

/* Answer an operation command: the API's JSON, or a line for people. */
static int answer_op(sim *s, opts *o, int64_t op, const char *extra_name, json_t *extra)
{
    if (o->json) {
        rs_error err;
        json_t *j = json_object();
        if (extra_name)
            json_object_set(j, extra_name, extra);
        json_t *opj = view_operation_get(s, op, &err);
        json_object_set_new(j, "operation", opj ? opj : json_null());
        print_json(j);
        json_decref(j);
    } else {
        print_op(s, op);
    }
    return 0;
}

/* Columns on a terminal: the display width of UTF-8 text (a CJK character
 * is two columns, a combining mark none), falling back to bytes. */
static size_t text_width(const char *s)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t w = 0, n = strlen(s);
    while (n > 0) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, s, n, &st);
        if (k == (size_t)-1 || k == (size_t)-2)
            return w + n;
        if (k == 0)
            break;
        int cw = wcwidth(wc);
        w += cw < 0 ? 1 : (size_t)cw;
        s += k;
        n -= k;
    }
    return w;
}

/* Print s left-aligned in a column of `width` display columns. */
static void print_padded(const char *s, size_t width)
{
    size_t w = text_width(s);
    fputs(s, stdout);
    for (; w < width; w++)
        putchar(' ');
}

static void pct(char *buf, size_t size, double share)
{
    snprintf(buf, size, "%.2f%%", share * 100.0);
}

/* The people's table of `node ls`, like `nodetool status`. */
static void print_nodes_table(json_t *j)
{
    json_t *nodes = json_object_get(j, "nodes"), *n;
    size_t i, wname = 4;
    json_array_foreach(nodes, i, n)
    {
        size_t l = text_width(json_string_value(json_object_get(n, "name")));
        wname = l > wname ? l : wname;
    }
    print_padded("Node", wname);
    printf("  %10s  %6s  %9s  %7s  %7s\n", "Position", "Points", "Keys", "Key %", "Ring %");
    json_array_foreach(nodes, i, n)
    {
        char kp[32], rp[32];
        pct(kp, sizeof kp, json_real_value(json_object_get(n, "key_share")));
        pct(rp, sizeof rp, json_real_value(json_object_get(n, "arc_share")));
        print_padded(json_string_value(json_object_get(n, "name")), wname);
        printf("  %10lld  %6lld  %9lld  %7s  %7s\n",
               (long long)json_integer_value(json_object_get(n, "position")),
               (long long)json_integer_value(json_object_get(n, "points")),
               (long long)json_integer_value(json_object_get(n, "keys")), kp, rp);
    }
    if (!json_array_size(nodes))
        printf("(no nodes)\n");
}

static int parse_u64(const char *t, uint64_t *out)
{
    if (!t || !*t || *t == '-' || *t == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(t, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int cmd_read(sim *s, opts *o, const char *cmd);
static int parse_tokens(const char *text, int64_t **out, size_t *n);

static int cmd_node(sim *s, opts *o, const char *sub)
{
    rs_error err = {0};
    int64_t op;
    if (strcmp(sub, "ls") == 0)
        return cmd_read(s, o, "node ls");
    if (o->nargs != 1)
        return usage("node %s takes one NAME", sub);
    const char *name = o->args[0];
    if (strcmp(sub, "add") == 0) {
        double w = 1;
        if (o->weight) {
            char *end;
            errno = 0;
            w = strtod(o->weight, &end);
            if (errno || *end || end == o->weight || !isfinite(w) || w <= 0) {
                fprintf(stderr, "ringsim: weight must be a number above 0, not \"%s\"\n",
                        o->weight);
                return EXIT_REFUSED;
            }
        }
        int64_t *tokens = NULL;
        size_t ntokens = 0;
        if (o->tokens && parse_tokens(o->tokens, &tokens, &ntokens))
            return EXIT_REFUSED;
        sim_node_spec spec = {name, strlen(name), w, tokens, ntokens};
        int failed = sim_add_node_spec(s, &spec, &op, &err);
        free(tokens);
        if (failed)
            return refused(&err);
        json_t *node = view_node_get(s, name, strlen(name), &err);
        int rc = answer_op(s, o, op, "node", node);
        json_decref(node);
        return rc;
    }
    if (strcmp(sub, "rm") == 0) {
        if (sim_remove_node(s, name, strlen(name), &op, &err))
            return refused(&err);
        return answer_op(s, o, op, NULL, NULL);
    }
    return usage("unknown command: node %s", sub);
}

typedef struct key_printer {
    sim *s;
    int json;
    int64_t count;
} key_printer;

static int print_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                     size_t node_len)
{
    key_printer *kp = ud;
    if (!kp->json) {
        char k[NAME_BUF];
        snprintf(k, sizeof k, "%.*s", (int)len, key);
        print_padded(k, 24);
        printf(" %10u  %.*s\n", pos, node ? (int)node_len : 6, node ? node : "(none)");
        kp->count++;
        return 0;
    }
    json_t *j = view_key(kp->s, key, len, pos, node, node_len);
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!t)
        return RINGSIM_ENOMEM;
    printf("%s\n    %s", kp->count++ ? "," : "", t);
    free(t);
    return 0;
}

static int cmd_key(sim *s, opts *o, const char *sub)
{
    rs_error err = {0};
    int64_t op, ins, skip;
    if (strcmp(sub, "ls") == 0) {
        if (o->nargs)
            return usage("key ls takes no arguments%s", "");
        /* Streamed: a million keys must not become a million JSON objects
         * in memory.  The shape is GET /api/keys with every key. */
        key_printer kp = {s, o->json, 0};
        int64_t total;
        if (o->json)
            fputs("{\n  \"keys\": [", stdout);
        if (sim_keys_page(s, o->node, o->node ? strlen(o->node) : 0, NULL, 0, 0, INT64_MAX,
                          &total, print_key, &kp, &err)) {
            if (o->json)
                fputs("\n", stdout);
            return refused(&err);
        }
        if (o->json)
            printf("%s],\n  \"total\": %lld\n}\n", kp.count ? "\n  " : "", (long long)total);
        else
            printf("%lld key%s\n", (long long)total, total == 1 ? "" : "s");
        return 0;
    }
    if (strcmp(sub, "gen") == 0) {
        uint64_t count, start = 0;
        if (o->nargs != 1)
            return usage("key gen takes one COUNT%s", "");
        if (parse_u64(o->args[0], &count) || count < 1 || count > SIM_MAX_GENERATE) {
            fprintf(stderr, "ringsim: COUNT must be a whole number from 1 to %u, not \"%s\"\n",
                    SIM_MAX_GENERATE, o->args[0]);
            return EXIT_REFUSED;
        }
        if (o->start && parse_u64(o->start, &start)) {
            fprintf(stderr, "ringsim: --start must be a whole number, not \"%s\"\n", o->start);
            return EXIT_REFUSED;
        }
        const char *p = o->prefix ? o->prefix : "key-";
        if (sim_generate_keys(s, p, strlen(p), start, count, &ins, &skip, &op, &err))
            return refused(&err);
        goto inserted;
    }
    if (o->nargs < 1)
        return usage("key %s takes at least one KEY", sub);
    sim_str *v = malloc((size_t)o->nargs * sizeof *v);
    if (!v)
        return refused(&(rs_error){RINGSIM_ENOMEM, "out of memory"});
    for (int i = 0; i < o->nargs; i++)
        v[i] = (sim_str){o->args[i], strlen(o->args[i])};
    int rc;
    if (strcmp(sub, "add") == 0) {
        rc = sim_insert_keys(s, v, (size_t)o->nargs, o->nargs == 1, &ins, &skip, &op, &err);
        free(v);
        if (rc)
            return refused(&err);
        if (o->nargs == 1 && o->json) {
            json_t *k = view_key_get(s, o->args[0], strlen(o->args[0]), &err);
            rc = answer_op(s, o, op, "key", k);
            json_decref(k);
            return rc;
        }
        goto inserted;
    }
    if (strcmp(sub, "rm") == 0) {
        rc = sim_delete_keys(s, v, (size_t)o->nargs, &op, &err);
        free(v);
        return rc ? refused(&err) : answer_op(s, o, op, NULL, NULL);
    }
    free(v);
    return usage("unknown command: key %s", sub);
inserted:
    if (o->json) {
        json_t *j = json_pack("{s:I, s:I}", "inserted", (json_int_t)ins, "skipped",
                              (json_int_t)skip);
        json_t *opj = view_operation_get(s, op, &err);
        json_object_set_new(j, "operation", opj ? opj : json_null());
        print_json(j);
        json_decref(j);
    } else {
        printf("inserted %lld key%s, skipped %lld (operation %lld)\n", (long long)ins,
               ins == 1 ? "" : "s", (long long)skip, (long long)op);
    }
    return 0;
}

/* --tokens T,T,...: signed 64-bit decimal tokens (Cassandra's initial_token). */
static int parse_tokens(const char *text, int64_t **out, size_t *n)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    int64_t *v = malloc(cap * sizeof *v);
    if (!v) {
        fprintf(stderr, "ringsim: out of memory\n");
        return -1;
    }
    size_t k = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long long t = strtoll(p, &end, 10);
        if (errno || end == p || (*end && *end != ',')) {
            fprintf(stderr, "ringsim: --tokens takes signed 64-bit whole numbers separated "
                            "by commas, not \"%s\"\n", text);
            free(v);
            return -1;
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

/* --param NAME=VALUE is a matter of usage (exit 2) when it has no NAME=. */
static int params_usage(const opts *o)
{
    for (int i = 0; i < o->nparams; i++) {
        const char *eq = strchr(o->params[i], '=');
        if (!eq || eq == o->params[i])
            return usage("--param takes NAME=VALUE, not \"%s\"", o->params[i]);
    }
    return 0;
}

/* Options of config (algorithm, points, params, replicas) on top of *cfg. */
static int config_from_opts(const opts *o, place_config *cfg, rs_error *err)
{
    if (o->algorithm) {
        if (strlen(o->algorithm) >= sizeof cfg->algorithm)
            return rs_fail(err, RINGSIM_EPARAM, "unknown algorithm \"%.40s\"", o->algorithm);
        strcpy(cfg->algorithm, o->algorithm);
    }
    if (o->points && place_config_set_param(cfg, "points_per_node", o->points, err))
        return err->code;
    for (int i = 0; i < o->nparams; i++) {
        char name[64];
        const char *eq = strchr(o->params[i], '=');
        if (!eq || eq == o->params[i] || (size_t)(eq - o->params[i]) >= sizeof name)
            return rs_fail(err, RINGSIM_EPARAM, "--param takes NAME=VALUE, not \"%.64s\"",
                           o->params[i]);
        memcpy(name, o->params[i], (size_t)(eq - o->params[i]));
        name[eq - o->params[i]] = '\0';
        if (place_config_set_param(cfg, name, eq + 1, err))
            return err->code;
    }
    if (o->replicas) {
        uint64_t r;
        if (parse_u64(o->replicas, &r) || r < 1 || r > PLACE_MAX_REPLICAS)
            return rs_fail(err, RINGSIM_EPARAM,
                           "--replicas must be a whole number from 1 to %u, not \"%.32s\"",
                           PLACE_MAX_REPLICAS, o->replicas);
        cfg->replicas = (uint32_t)r;
    }
    return 0;
}

/* A node's weight from --weight (1 when absent). */
static int weight_from_opts(const opts *o, double *w)
{
    *w = 1;
    if (!o->weight)
        return 0;
    char *end;
    errno = 0;
    *w = strtod(o->weight, &end);
    if (errno || *end || end == o->weight || !isfinite(*w) || *w <= 0) {
        fprintf(stderr, "ringsim: weight must be a number above 0, not \"%s\"\n", o->weight);
        return -1;
    }
    return 0;
}

static void print_tally(const char *what, json_t *list)
{
    json_t *e;
    size_t i;
    json_array_foreach(list, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "node"));
        printf("%s %s %lld", i ? "," : what, n ? n : "(none)",
               (long long)json_integer_value(json_object_get(e, "keys")));
    }
}

/* ringsim preview node add NAME | node rm NAME | config ...: what the
 * operation would do, recorded nowhere. */
static int cmd_preview(sim *s, opts *o, const char *sub)
{
    rs_error err = {0};
    view_preview_req req = {NULL, {0}, *sim_config(s)};
    int64_t *tokens = NULL;
    char **args = o->args;
    int nargs = o->nargs;
    if (!strcmp(sub, "node")) {
        if (nargs != 2 || (strcmp(args[0], "add") && strcmp(args[0], "rm")))
            return usage("preview node takes add NAME or rm NAME%s", "");
        double w;
        if (weight_from_opts(o, &w))
            return EXIT_REFUSED;
        size_t nt = 0;
        if (o->tokens && parse_tokens(o->tokens, &tokens, &nt))
            return EXIT_REFUSED;
        req.type = !strcmp(args[0], "add") ? "add_node" : "remove_node";
        req.node = (sim_node_spec){args[1], strlen(args[1]), w, tokens, nt};
    } else if (!strcmp(sub, "config")) {
        if (nargs)
            return usage("preview config takes options only%s", "");
        if (params_usage(o))
            return EXIT_USAGE;
        if (config_from_opts(o, &req.cfg, &err))
            return refused(&err);
        req.type = "configure";
    } else {
        return usage("preview takes node add, node rm or config, not %s", sub);
    }
    json_t *j = view_preview(s, &req, &err);
    free(tokens);
    if (!j)
        return refused(&err);
    if (o->json) {
        print_json(j);
    } else {
        json_t *b = json_object_get(j, "before"), *a = json_object_get(j, "after");
        printf("would move %lld key%s", (long long)json_integer_value(json_object_get(j, "keys_moved")),
               json_integer_value(json_object_get(j, "keys_moved")) == 1 ? "" : "s");
        print_tally(": from", json_object_get(j, "moved_from"));
        print_tally("; to", json_object_get(j, "moved_to"));
        printf("\nreplica copies added: %lld\n",
               (long long)json_integer_value(json_object_get(j, "replica_moves")));
        printf("max/mean %.4f -> %.4f, cv %.4f -> %.4f, nodes %lld -> %lld\n",
               json_number_value(json_object_get(b, "max_over_mean")),
               json_number_value(json_object_get(a, "max_over_mean")),
               json_number_value(json_object_get(b, "cv")),
               json_number_value(json_object_get(a, "cv")),
               (long long)json_integer_value(json_object_get(b, "nodes")),
               (long long)json_integer_value(json_object_get(a, "nodes")));
        printf("nothing was changed\n");
    }
    json_decref(j);
    return 0;
}

/* ringsim compare [--algorithms a,b] [--param NAME=VALUE]... */
static int cmd_compare(sim *s, opts *o)
{
    rs_error err = {0};
    if (o->nargs)
        return usage("compare takes options only%s", "");
    if (params_usage(o))
        return EXIT_USAGE;
    json_t *j = view_compare(s, o->algorithms, (const char *const *)o->params,
                             (size_t)o->nparams, 100000, &err);
    if (!j)
        return refused(&err);
    if (o->json) {
        print_json(j);
        json_decref(j);
        return 0;
    }
    json_t *smp = json_object_get(j, "sample");
    printf("%lld keys on %lld nodes%s\n", (long long)json_integer_value(json_object_get(j, "keys")),
           (long long)json_integer_value(json_object_get(j, "nodes")),
           json_is_true(json_object_get(smp, "sampled")) ? " (an even sample of keys placed)" : "");
    printf("  %-11s %9s %8s %10s %10s %9s %9s %9s\n", "ALGORITHM", "MAX/MEAN", "CV",
           "STRUCTURAL", "LOOKUP ns", "MEMORY", "+1 MOVES", "-1 MOVES");
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(j, "results"), i, e)
    {
        const char *name = json_string_value(json_object_get(e, "algorithm"));
        char mark = json_is_true(json_object_get(e, "current")) ? '*' : ' ';
        json_t *error = json_object_get(e, "error");
        if (error) {
            printf("%c %-11s %s\n", mark, name,
                   json_string_value(json_object_get(error, "message")));
            continue;
        }
        json_t *st = json_object_get(e, "stats");
        printf("%c %-11s %9.4f %8.4f %10.4f %10.0f %9lld %9lld %9lld\n", mark, name,
               json_number_value(json_object_get(st, "max_over_mean")),
               json_number_value(json_object_get(st, "cv")),
               json_number_value(json_object_get(e, "structural_max_over_mean")),
               json_number_value(json_object_get(e, "lookup_ns")),
               (long long)json_integer_value(json_object_get(e, "memory_bytes")),
               (long long)json_integer_value(json_object_get(e, "moves_if_added")),
               (long long)json_integer_value(json_object_get(e, "moves_if_removed")));
    }
    printf("(* the current algorithm; +1: keys moved if a node joined, -1: mean if one left)\n");
    json_decref(j);
    return 0;
}

static int cmd_algorithms(opts *o)
{
    rs_error err = {0};
    if (o->nargs)
        return usage("algorithms takes no arguments%s", "");
    json_t *j = view_algorithms(&err);
    if (!j)
        return refused(&err);
    if (o->json) {
        print_json(j);
    } else {
        json_t *a = json_object_get(j, "algorithms"), *e;
        size_t i;
        printf("%-11s %-8s %-8s %-22s %s\n", "ALGORITHM", "WEIGHTS", "REPLICAS", "PARAMS",
               "TITLE");
        json_array_foreach(a, i, e)
        {
            char ps[128] = "";
            json_t *p;
            size_t k;
            json_array_foreach(json_object_get(e, "params"), k, p)
            {
                char one[64];
                snprintf(one, sizeof one, "%s%s=%lld", k ? " " : "",
                         json_string_value(json_object_get(p, "name")),
                         (long long)json_integer_value(json_object_get(p, "default")));
                strncat(ps, one, sizeof ps - strlen(ps) - 1);
            }
            printf("%-11s %-8s %-8s %-22s %s\n", json_string_value(json_object_get(e, "name")),
                   json_string_value(json_object_get(e, "weight_rule")),
                   json_string_value(json_object_get(e, "replica_rule")), *ps ? ps : "-",
                   json_string_value(json_object_get(e, "title")));
        }
    }
    json_decref(j);
    return 0;
}

static int cmd_config(sim *s, opts *o)
{
    rs_error err = {0};
    if (o->nargs)
        return usage("config takes options only%s", "");
    if (!o->points && !o->algorithm && !o->nparams && !o->replicas) {
        json_t *j = view_config(s, &err);
        if (!j)
            return refused(&err);
        if (o->json) {
            print_json(j);
        } else {
            printf("algorithm %s\npoints_per_node %lld\nreplicas %lld\n",
                   json_string_value(json_object_get(j, "algorithm")),
                   (long long)json_integer_value(json_object_get(j, "points_per_node")),
                   (long long)json_integer_value(json_object_get(j, "replicas")));
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(j, "params"), k, v)
            {
                if (strcmp(k, "points_per_node") != 0)
                    printf("%s %lld\n", k, (long long)json_integer_value(v));
            }
        }
        json_decref(j);
        return 0;
    }
    place_config cfg = *sim_config(s);
    if (params_usage(o))
        return EXIT_USAGE;
    if (config_from_opts(o, &cfg, &err))
        return refused(&err);
    int64_t op;
    if (sim_configure(s, &cfg, &op, &err))
        return refused(&err);
    json_t *c = view_config(s, &err);
    int rc = answer_op(s, o, op, "config", c);
    json_decref(c);
    return rc;
}

static int cmd_read(sim *s, opts *o, const char *cmd)
{
    rs_error err = {0};
    json_t *j = NULL;
    if (strcmp(cmd, "lookup") == 0) {
        if (o->nargs != 1)
            return usage("lookup takes one KEY%s", "");
        j = view_lookup(s, o->args[0], strlen(o->args[0]), &err);
    } else if (o->nargs) {
        return usage("%s takes no arguments", cmd);
    } else if (strcmp(cmd, "node ls") == 0) {
        j = view_nodes(s, &err);
    } else if (strcmp(cmd, "stats") == 0) {
        j = view_stats(s, &err);
    } else if (strcmp(cmd, "ring") == 0) {
        j = view_ring(s, &err);
    } else {
        j = view_operations(s, 0, -1, &err);
    }
    if (!j)
        return refused(&err);
    if (o->json) {
        print_json(j);
        json_decref(j);
        return 0;
    }
    if (strcmp(cmd, "node ls") == 0) {
        print_nodes_table(j);
    } else if (strcmp(cmd, "lookup") == 0) {
        const char *n = json_string_value(json_object_get(j, "node"));
        printf("key      %s\nsha256   %s\nposition %lld\nnode     %s%s\nstored   %s\n",
               o->args[0], json_string_value(json_object_get(j, "sha256")),
               (long long)json_integer_value(json_object_get(j, "position")),
               n ? n : "(no node)", json_is_true(json_object_get(j, "wrapped")) ? " (wrapped)" : "",
               json_is_true(json_object_get(j, "stored")) ? "yes" : "no");
    } else if (strcmp(cmd, "stats") == 0) {
        printf("nodes %lld  keys %lld\nmean %.2f  stddev %.2f  cv %.4f\nmin %lld  max %lld  "
               "max/mean %.4f\n",
               (long long)json_integer_value(json_object_get(j, "nodes")),
               (long long)json_integer_value(json_object_get(j, "keys")),
               json_real_value(json_object_get(j, "mean")),
               json_real_value(json_object_get(j, "stddev")),
               json_real_value(json_object_get(j, "cv")),
               (long long)json_integer_value(json_object_get(j, "min")),
               (long long)json_integer_value(json_object_get(j, "max")),
               json_real_value(json_object_get(j, "max_over_mean")));
    } else if (strcmp(cmd, "ring") == 0) {
        json_t *p;
        size_t i;
        printf("%10s  %s\n", "Position", "Node (point)");
        json_array_foreach(json_object_get(j, "points"), i, p)
        printf("%10lld  %s#%lld\n", (long long)json_integer_value(json_object_get(p, "position")),
               json_string_value(json_object_get(p, "node")),
               (long long)json_integer_value(json_object_get(p, "index")));
    } else {
        json_t *p;
        size_t i;
        json_array_foreach(json_object_get(j, "operations"), i, p)
        printf("%5lld  %s  %-11s  %6lld moved  %s\n",
               (long long)json_integer_value(json_object_get(p, "id")),
               json_string_value(json_object_get(p, "at")),
               json_string_value(json_object_get(p, "type")),
               (long long)json_integer_value(json_object_get(p, "keys_moved")),
               json_string_value(json_object_get(p, "subject")));
        if (!json_array_size(json_object_get(j, "operations")))
            printf("(no operations)\n");
    }
    json_decref(j);
    return 0;
}

static int cmd_revert(sim *s, opts *o)
{
    uint64_t to;
    rs_error err = {0};
    if (o->nargs != 1)
        return usage("revert takes one operation ID%s", "");
    if (parse_u64(o->args[0], &to) || to > INT64_MAX) {
        fprintf(stderr, "ringsim: operation ID must be a whole number, not \"%s\"\n",
                o->args[0]);
        return EXIT_REFUSED;
    }
    int64_t op;
    if (sim_revert(s, (int64_t)to, &op, &err))
        return refused(&err);
    return answer_op(s, o, op, NULL, NULL);
}

static int cmd_check(sim *s, opts *o)
{
    rs_error err = {0};
    if (o->nargs)
        return usage("check takes no arguments%s", "");
    int64_t problems;
    static char report[65536];
    if (sim_check(s, &problems, report, sizeof report, &err))
        return refused(&err);
    int64_t keys = sim_key_count(s), ops = sim_last_op(s);
    if (ops < 0)
        return refused(&(rs_error){(int)ops, "cannot read the operation log"});
    if (o->json) {
        json_t *lines = json_array();
        for (char *save, *l = strtok_r(report, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            json_array_append_new(lines, json_string(l));
        json_t *j = json_pack("{s:b, s:I, s:I, s:I, s:I, s:o}", "ok", problems == 0, "problems",
                              (json_int_t)problems, "nodes", (json_int_t)sim_node_count(s),
                              "keys", (json_int_t)keys, "operations", (json_int_t)ops,
                              "report", lines);
        print_json(j);
        json_decref(j);
    } else if (problems == 0) {
        printf("ok: %lld keys on %zu nodes where the ring says; %lld operations replayed "
               "to the same state\n",
               (long long)keys, sim_node_count(s), (long long)ops);
    } else {
        fputs(report, stdout);
    }
    if (problems) {
        fprintf(stderr, "ringsim: check found %lld problem%s\n", (long long)problems,
                problems == 1 ? "" : "s");
        return EXIT_REFUSED;
    }
    return 0;
}

/* Options that take a value, by name, and where they go. */
static const char **opt_slot(opts *o, const char *name)
{
    static const struct {
        const char *name;
        size_t off;
    } t[] = {{"db", offsetof(opts, db)},         {"weight", offsetof(opts, weight)},
             {"node", offsetof(opts, node)},     {"prefix", offsetof(opts, prefix)},
             {"start", offsetof(opts, start)},   {"points", offsetof(opts, points)},
             {"algorithm", offsetof(opts, algorithm)}, {"host", offsetof(opts, host)},
             {"port", offsetof(opts, port)},     {"web", offsetof(opts, web)},
             {"replicas", offsetof(opts, replicas)}, {"tokens", offsetof(opts, tokens)},
             {"algorithms", offsetof(opts, algorithms)}, {"token", offsetof(opts, token)}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].name, name) == 0)
            return (const char **)((char *)o + t[i].off);
    return NULL;
}

/* Which options a command accepts (besides --db and --json). */
static int allowed(const char *cmd, const char *sub, const char *opt)
{
    const char *ok = "";
    if (!strcmp(cmd, "serve"))
        ok = " host port web token ";
    else if (!strcmp(cmd, "node") && sub && !strcmp(sub, "add"))
        ok = " weight tokens ";
    else if (!strcmp(cmd, "key") && sub && !strcmp(sub, "ls"))
        ok = " node ";
    else if (!strcmp(cmd, "key") && sub && !strcmp(sub, "gen"))
        ok = " prefix start ";
    else if (!strcmp(cmd, "config"))
        ok = " points algorithm param replicas ";
    else if (!strcmp(cmd, "compare"))
        ok = " algorithms param ";
    else if (!strcmp(cmd, "preview") && sub && !strcmp(sub, "node"))
        ok = " weight tokens ";
    else if (!strcmp(cmd, "preview"))
        ok = " points algorithm param replicas ";
    char pat[32];
    snprintf(pat, sizeof pat, " %s ", opt);
    return !strcmp(opt, "db") || strstr(ok, pat) != NULL;
}

int cli_main(int argc, char **argv)
{
    /* Names are UTF-8 whatever the user's locale: measure table columns in
     * UTF-8 (only LC_CTYPE; bytes are printed unchanged). */
    if (!setlocale(LC_CTYPE, "C.UTF-8"))
        setlocale(LC_CTYPE, "");
    opts o;
    memset(&o, 0, sizeof o);
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    char **names = calloc((size_t)argc + 1, sizeof *names);
    o.params = calloc((size_t)argc + 1, sizeof *o.params);
    int npos = 0, nnames = 0, rc;
    if (!pos || !names || !o.params) {
        free(pos);
        free(names);
        free(o.params);
        fprintf(stderr, "ringsim: out of memory\n");
        return EXIT_REFUSED;
    }
    bool dashdash = false;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] != '-' || a[2] == '\0') {
            if (!dashdash && strcmp(a, "--") == 0) {
                dashdash = true;
                continue;
            }
            if (!dashdash && (strcmp(a, "-h") == 0))
                a = "help";
            pos[npos++] = a;
            continue;
        }
        char *name = a + 2, *val = strchr(name, '=');
        if (val)
            *val++ = '\0';
        if (strcmp(name, "json") == 0 && !val) {
            o.json = 1;
            continue;
        }
        if (strcmp(name, "help") == 0) {
            pos[npos++] = "help";
            continue;
        }
        const char **slot = opt_slot(&o, name);
        if (!strcmp(name, "param")) {
            if (!val && i + 1 < argc)
                val = argv[++i];
            if (!val) {
                rc = usage("option --%s needs a value", name);
                goto out;
            }
            o.params[o.nparams++] = val;
            names[nnames++] = name;
            continue;
        }
        if (!slot) {
            rc = usage("unknown option --%s", name);
            goto out;
        }
        if (!val) {
            if (i + 1 >= argc) {
                rc = usage("option --%s needs a value", name);
                goto out;
            }
            val = argv[++i];
        }
        *slot = val;
        names[nnames++] = name;
    }
    if (npos == 0) {
        fputs(usage_text, stderr);
        rc = EXIT_USAGE;
        goto out;
    }
    const char *cmd = pos[0];
    if (!strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        rc = 0;
        goto out;
    }
    const char *sub = NULL;
    int first = 1;
    if (!strcmp(cmd, "node") || !strcmp(cmd, "key") || !strcmp(cmd, "preview")) {
        if (npos < 2) {
            rc = usage("%s needs a subcommand", cmd);
            goto out;
        }
        sub = pos[1];
        first = 2;
    }
    static const char *const known[] = {"serve", "node", "key", "lookup", "stats", "log",
                                        "ring", "config", "revert", "check", "algorithms",
                                        "preview", "compare", NULL};
    int k = 0;
    while (known[k] && strcmp(known[k], cmd))
        k++;
    if (!known[k]) {
        rc = usage("unknown command: %s", cmd);
        goto out;
    }
    for (int i = 0; i < nnames; i++)
        if (!allowed(cmd, sub, names[i])) {
            rc = usage("option --%s does not apply to this command", names[i]);
            goto out;
        }
    o.args = pos + first;
    o.nargs = npos - first;
    const char *env_db = getenv("RINGSIM_DB");
    if (!o.db)
        o.db = env_db && *env_db ? env_db : "ringsim.db";
    if (!strcmp(cmd, "serve")) {
        if (o.nargs) {
            rc = usage("serve takes options only%s", "");
            goto out;
        }
        uint64_t port = 3000;
        if (o.port && (parse_u64(o.port, &port) || port > 65535)) {
            rc = usage("--port must be 0 to 65535, not %s", o.port);
            goto out;
        }
        const char *env_token = getenv("RINGSIM_TOKEN");
        serve_options so = {.db = o.db, .host = o.host, .port = (int)port, .web = o.web,
                            .token = o.token ? o.token : env_token && *env_token ? env_token : NULL};
        rc = api_serve(&so);
        goto out;
    }
    if (!strcmp(cmd, "algorithms")) { /* the catalogue needs no database */
        rc = cmd_algorithms(&o);
        goto out;
    }
    sim *s = NULL;
    rs_error err = {0};
    if (sim_open(&s, o.db, &err)) {
        rc = refused(&err);
        goto out;
    }
    if (isatty(STDERR_FILENO))
        sim_set_progress(s, bar, NULL);
    if (!strcmp(cmd, "preview"))
        rc = cmd_preview(s, &o, sub);
    else if (!strcmp(cmd, "compare"))
        rc = cmd_compare(s, &o);
    else if (!strcmp(cmd, "node"))
        rc = cmd_node(s, &o, sub);
    else if (!strcmp(cmd, "key"))
        rc = cmd_key(s, &o, sub);
    else if (!strcmp(cmd, "config"))
        rc = cmd_config(s, &o);
    else if (!strcmp(cmd, "revert"))
        rc = cmd_revert(s, &o);
    else if (!strcmp(cmd, "check"))
        rc = cmd_check(s, &o);
    else
        rc = cmd_read(s, &o, cmd);
    sim_close(s);
out:
    free(pos);
    free(names);
    free(o.params);
    return rc;
}
