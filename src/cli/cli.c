/*
 * cli.c - the `ringsim` command line (see cli.h): the arguments become one
 * command of the table (cmd.h), which runs on the engine and prints; a
 * progress bar shows on a terminal.
 *
 * The commands that need more than the engine run here: `serve` hands over
 * to http.c, `run` to scenario.c and `export` to scenario_export.c; `scenarios`, `help` and the
 * shell's `complete` read the tables.  --db and --json may stand anywhere;
 * "--" ends the options so that keys that look like options can be named.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "cmd.h"
#include "place.h"
#include "export_config.h"
#include "scenario.h"
#include "sim.h"

#ifndef RINGSIM_VERSION
#define RINGSIM_VERSION "unknown"
#endif

#define MAX_SCENARIO_BYTES (256u * 1024 * 1024)

static int usage_error(const rs_error *err)
{
    fprintf(stderr, "ringsim: %s\nrun 'ringsim help' for usage\n", err->msg);
    return CMD_EXIT_USAGE;
}

static int refused(const rs_error *err)
{
    fprintf(stderr, "ringsim: %s\n", err->msg[0] ? err->msg : ringsim_strerror(err->code));
    return CMD_EXIT_REFUSED;
}

/* ---- Ctrl-C ----
 * Ctrl-C (SIGINT, or SIGTERM) during a command cancels it: the signals are
 * blocked in every thread and one small thread takes them with sigwait().
 * The first sets a flag that the progress callback hands to the engine,
 * which rolls the operation back whole (exit 1, "operation cancelled"); a
 * second quits at once, SQLite rolling back the unfinished transaction at
 * the next open.  No signal handler, no global: the flag lives in
 * cli_main's frame. */

typedef struct interrupt {
    atomic_int requested; /* signals taken so far */
    bool tty;             /* stderr is a terminal: draw the progress bar */
    pthread_t thread;
    bool running;
    sigset_t old;
} interrupt;

static void *interrupt_main(void *arg)
{
    interrupt *in = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGUSR1) /* interrupt_stop: the command is over */
            return NULL;
        if (atomic_fetch_add(&in->requested, 1) == 0) {
            static const char m[] = "\nringsim: cancelling (press Ctrl-C again to quit at once)\n";
            if (write(STDERR_FILENO, m, sizeof m - 1) < 0) {
                /* nothing to do: the cancel goes on */
            }
        } else {
            _exit(130); /* 128 + SIGINT, as a shell reports it */
        }
    }
}

/* Block SIGINT, SIGTERM (and SIGUSR1, the stop signal) and start the
 * thread that takes them.  Without the thread, signals keep their default
 * action. */
static void interrupt_start(interrupt *in)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    if (pthread_sigmask(SIG_BLOCK, &set, &in->old) != 0)
        return;
    if (pthread_create(&in->thread, NULL, interrupt_main, in) == 0)
        in->running = true;
    else
        pthread_sigmask(SIG_SETMASK, &in->old, NULL);
}

static void interrupt_stop(interrupt *in)
{
    if (!in->running)
        return;
    pthread_kill(in->thread, SIGUSR1);
    pthread_join(in->thread, NULL);
    in->running = false;
    /* A signal that came after the thread's last sigwait stays pending and
     * acts (by default) once unblocked: the command is over, so it only
     * ends the process a little early. */
    pthread_sigmask(SIG_SETMASK, &in->old, NULL);
}

/* ---- progress bar on a terminal ---- */

/* The engine's progress callback: draws the bar on a terminal, and asks
 * the engine to stop after Ctrl-C. */
static int bar(void *ud, const char *what, uint64_t done, uint64_t total)
{
    interrupt *in = ud;
    if (in && atomic_load(&in->requested) > 0)
        return 1;
    if (!in || !in->tty)
        return 0;
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

/* ---- help ---- */

/* Prose at most `width` columns wide, each line after `indent`. */
static void wrap(FILE *out, const char *text, int indent, int width)
{
    const char *p = text;
    while (*p) {
        if (*p == '\n') { /* a paragraph break stays */
            fputc('\n', out);
            p++;
            continue;
        }
        int col = indent;
        fprintf(out, "%*s", indent, "");
        bool first = true;
        while (*p && *p != '\n') {
            while (*p == ' ')
                p++;
            size_t n = strcspn(p, " \n");
            if (!first && col + 1 + (int)n > width)
                break;
            fprintf(out, "%s%.*s", first ? "" : " ", (int)n, p);
            col += (int)n + !first;
            first = false;
            p += n;
        }
        fputc('\n', out);
        if (*p == '\n' && p[1] != '\n')
            p++;
    }
}

/* One command in a help listing: its synopsis, and its summary beside it
 * or on the next line when the synopsis is long. */
static void help_line(FILE *out, const cmd_def *d)
{
    char syn[256];
    cmd_synopsis(d, syn, sizeof syn);
    if (strlen(syn) <= 34)
        fprintf(out, "  %-34s %s\n", syn, d->summary);
    else
        fprintf(out, "  %s\n  %-34s %s\n", syn, "", d->summary);
}

static void print_usage(FILE *out)
{
    fprintf(out, "usage: ringsim [--db PATH] [--json] COMMAND [ARGS]\n\n");
    for (const cmd_def *d = cmd_table; d->name; d++) {
        if (d->flags & CMD_F_HIDDEN)
            continue;
        help_line(out, d);
    }
    fprintf(out, "\n--db defaults to $RINGSIM_DB or ./ringsim.db.  --json prints the API's "
                 "JSON.\n'ringsim help COMMAND' tells more; the manual is ringsim(1).\n");
}

static void print_command_help(FILE *out, const cmd_def *d)
{
    char syn[256];
    fprintf(out, "usage: ringsim %s\n\n", cmd_synopsis(d, syn, sizeof syn));
    wrap(out, d->help, 2, 78);
    fprintf(out, "\noptions:\n");
    for (int o = 0; o < CMD_O_COUNT; o++) {
        if (o != CMD_O_DB && o != CMD_O_JSON && !(d->options & CMD_BIT(o)))
            continue;
        char name[64];
        snprintf(name, sizeof name, "--%s%s%s", cmd_options[o].name, cmd_options[o].arg ? " " : "",
                 cmd_options[o].arg ? cmd_options[o].arg : "");
        fprintf(out, "  %-20s %s\n", name, cmd_options[o].help);
    }
}

/* `help node`: the commands whose names start with the words given (a
 * command group: "node", "key", "preview", "preview node"), as the full
 * list shows them.  False when no command does. */
static bool print_group_help(FILE *out, char **words, int n)
{
    char prefix[128];
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof prefix; i++)
        len += (size_t)snprintf(prefix + len, sizeof prefix - len, "%s%s", words[i], " ");
    if (len >= sizeof prefix)
        return false;
    bool any = false;
    for (const cmd_def *d = cmd_table; d->name; d++) {
        if ((d->flags & CMD_F_HIDDEN) || strncmp(d->name, prefix, len) != 0)
            continue;
        if (!any)
            fprintf(out, "usage: ringsim %.*sCOMMAND [ARGS]\n\n", (int)len, prefix);
        any = true;
        help_line(out, d);
    }
    if (any)
        fprintf(out, "\n'ringsim help %.*sCOMMAND' tells more.\n", (int)len, prefix);
    return any;
}

static int face_help(const cmd_line *l, const char *db)
{
    (void)db;
    if (!l->nargs) {
        print_usage(stdout);
        return 0;
    }
    int used;
    bool group;
    const cmd_def *d = cmd_find(l->args, l->nargs, &used, &group);
    if (!d && group && print_group_help(stdout, l->args, l->nargs))
        return 0;
    if (!d) {
        fprintf(stderr, "ringsim: no command \"%s%s%s\"\nrun 'ringsim help' for usage\n",
                l->args[0], l->nargs > 1 ? " " : "", l->nargs > 1 ? l->args[1] : "");
        return CMD_EXIT_USAGE;
    }
    print_command_help(stdout, d);
    return 0;
}

/* ---- completion (bash: completions/ringsim) ---- */

static void candidate(const char *word, const char *cur)
{
    if (strncmp(word, cur, strlen(cur)) == 0)
        printf("%s\n", word);
}

/* `ringsim complete WORD... CUR`: the words that may follow, one a line,
 * or the single line __files__ when a file name goes there. */
static int face_complete(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "--") == 0) {
        argc--;
        argv++;
    }
    const char *cur = argc ? argv[argc - 1] : "";
    char *words[8];
    int nw = 0;
    const char *prev_opt = NULL;
    for (int i = 0; i + 1 < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-') {
            prev_opt = NULL;
            for (int o = 0; o < CMD_O_COUNT; o++)
                if (strcmp(a + 2, cmd_options[o].name) == 0 && cmd_options[o].arg)
                    prev_opt = cmd_options[o].name;
            continue;
        }
        if (prev_opt) {
            prev_opt = NULL; /* the option's value */
            continue;
        }
        if (nw < 8)
            words[nw++] = argv[i];
    }
    int used = 0;
    bool group;
    const cmd_def *d = nw ? cmd_find(words, nw, &used, &group) : NULL;
    if (prev_opt) {
        if (!strcmp(prev_opt, "algorithm")) {
            json_t *a = place_algorithms_json(), *e;
            size_t i;
            json_array_foreach(a, i, e) candidate(json_string_value(json_object_get(e, "name")), cur);
            json_decref(a);
        } else if (!strcmp(prev_opt, "db") || !strcmp(prev_opt, "web") || !strcmp(prev_opt, "file")) {
            printf("__files__\n");
        }
        return 0;
    }
    if (cur[0] == '-') {
        candidate("--db", cur);
        candidate("--json", cur);
        candidate("--help", cur);
        if (!d)
            candidate("--version", cur);
        for (int o = 0; d && o < CMD_O_COUNT; o++)
            if (d->options & CMD_BIT(o)) {
                char name[40];
                snprintf(name, sizeof name, "--%s", cmd_options[o].name);
                candidate(name, cur);
            }
        return 0;
    }
    if (d) {
        int nargs = nw - used;
        bool builtin = false;
        for (int i = 0; i + 1 < argc; i++)
            builtin |= strcmp(argv[i], "--builtin") == 0;
        if ((!strcmp(d->name, "run") && builtin) || !strcmp(d->name, "scenarios")) {
            for (const scenario_file *f = scenario_files; nargs == 0 && f->name; f++)
                candidate(f->name, cur);
        } else if (!strcmp(d->name, "run") && nargs == 0) {
            printf("__files__\n");
        } else if (!strcmp(d->name, "help")) {
            memmove(words, words + used, (size_t)(nw - used) * sizeof *words);
            nw -= used;
            d = NULL;
        } else if (!strcmp(d->name, "preview node") && nargs == 0) {
            candidate("add", cur);
            candidate("rm", cur);
            candidate("down", cur);
            candidate("up", cur);
        }
        if (d)
            return 0;
    }
    /* Command words: the next word of every command the words so far begin. */
    char last[32] = "";
    for (const cmd_def *c = cmd_table; c->name; c++) {
        if (c->flags & CMD_F_HIDDEN)
            continue;
        const char *p = c->name;
        bool match = true;
        for (int i = 0; i < nw && match; i++) {
            size_t n = strlen(words[i]);
            match = strncmp(p, words[i], n) == 0 && p[n] == ' ';
            p += match ? n + 1 : 0;
        }
        if (!match)
            continue;
        char next[32];
        snprintf(next, sizeof next, "%.*s", (int)strcspn(p, " "), p);
        if (strcmp(last, next) != 0)
            candidate(next, cur);
        snprintf(last, sizeof last, "%s", next);
    }
    return 0;
}

/* ---- scenarios ---- */

/* The text of FILE ("-": standard input); *out malloc'd, NUL-terminated. */
static int read_text(const char *path, char **out, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "ringsim: cannot open %s: %s\n", path, strerror(errno));
        return CMD_EXIT_REFUSED;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : CMD_EXIT_REFUSED;
    while (!rc) {
        if (n + 1 >= cap) {
            char *b = cap < MAX_SCENARIO_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!b) {
                fprintf(stderr, "ringsim: %s is too large (at most %u MiB)\n", path,
                        MAX_SCENARIO_BYTES >> 20);
                rc = CMD_EXIT_REFUSED;
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                fprintf(stderr, "ringsim: cannot read %s: %s\n", path, strerror(errno));
                rc = CMD_EXIT_REFUSED;
            }
            break;
        }
    }
    if (f != stdin)
        fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

typedef struct run_printer {
    const char *label;
    bool json;
} run_printer;

static void print_value(const json_t *v)
{
    if (json_is_string(v))
        fputs(json_string_value(v), stdout);
    else if (json_is_null(v))
        fputs("none", stdout);
    else if (json_is_integer(v))
        printf("%lld", (long long)json_integer_value(v));
    else
        printf("%.6g", json_number_value(v));
}

/* One step of a run, for people: its note, the line, what happened. */
static void print_step(void *ud, const json_t *st)
{
    run_printer *p = ud;
    if (p->json)
        return;
    const char *note = json_string_value(json_object_get(st, "note"));
    if (note) {
        printf("\n");
        const char *q = note;
        while (*q) { /* each paragraph as # lines */
            size_t n = strcspn(q, "\n");
            char *para = strndup(q, n);
            if (para) {
                char *save, *w;
                int col = 0;
                for (w = strtok_r(para, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                    int wl = (int)strlen(w);
                    if (col && col + 1 + wl > 78) {
                        printf("\n");
                        col = 0;
                    }
                    col += col ? printf(" %s", w) : printf("# %s", w);
                }
                printf("\n");
                free(para);
            }
            q += n;
            if (*q == '\n' && q[1] == '\n') {
                printf("#\n");
                q += 2;
            } else if (*q) {
                q++;
            }
        }
    }
    printf("%4lld  ", (long long)json_integer_value(json_object_get(st, "line")));
    cmd_print_padded(stdout, json_string_value(json_object_get(st, "text")), 0);
    putchar('\n');
    json_t *op = json_object_get(st, "operation"), *err = json_object_get(st, "error");
    if (err) {
        printf("      refused: %s\n", json_string_value(json_object_get(err, "message")));
    } else if (json_is_null(op)) { /* a configure that changed nothing */
        printf("      nothing changed: no operation recorded\n");
    } else if (op) {
        json_int_t moved = json_integer_value(json_object_get(op, "keys_moved"));
        printf("      operation %lld %s: ", (long long)json_integer_value(json_object_get(op, "id")),
               json_string_value(json_object_get(op, "type")));
        cmd_print_padded(stdout, json_string_value(json_object_get(op, "subject")), 0);
        printf("; %lld key%s moved", (long long)moved, moved == 1 ? "" : "s");
        json_int_t rm = json_integer_value(json_object_get(op, "replica_moves"));
        if (rm)
            printf(", %lld replica cop%s added", (long long)rm, rm == 1 ? "y" : "ies");
        json_t *ins = json_object_get(st, "inserted");
        if (ins)
            printf("; %lld inserted, %lld skipped", (long long)json_integer_value(ins),
                   (long long)json_integer_value(json_object_get(st, "skipped")));
        printf("\n");
    } else if (json_object_get(st, "stat")) {
        bool ok = json_is_true(json_object_get(st, "ok"));
        const char *key = json_string_value(json_object_get(st, "key"));
        printf("      %s: %s%s%s%s is ", ok ? "ok" : "FAILED",
               json_string_value(json_object_get(st, "stat")), key ? "(" : "", key ? key : "",
               key ? ")" : "");
        print_value(json_object_get(st, "actual"));
        printf(" (expected %s ", json_string_value(json_object_get(st, "op")));
        print_value(json_object_get(st, "value"));
        printf(")\n");
    }
    fflush(stdout);
}

static int face_run(const cmd_line *l, const char *db)
{
    const char *label;
    char *text = NULL;
    const char *t;
    size_t len;
    char name[300];
    if (l->opt[CMD_O_BUILTIN]) {
        const scenario_file *f = l->nargs == 1 ? scenario_file_find(l->args[0], strlen(l->args[0]))
                                               : NULL;
        if (!f) {
            fprintf(stderr, "ringsim: %s%s%s; the built-in scenarios are:",
                    l->nargs ? "no built-in scenario \"" : "run --builtin needs a NAME",
                    l->nargs ? l->args[0] : "", l->nargs ? "\"" : "");
            for (f = scenario_files; f->name; f++)
                fprintf(stderr, " %s", f->name);
            fprintf(stderr, "\n");
            return CMD_EXIT_USAGE;
        }
        snprintf(name, sizeof name, "%s.ringsim", f->name);
        label = name;
        t = f->text;
        len = f->len;
    } else {
        if (l->nargs != 1) {
            fprintf(stderr, "ringsim: usage: ringsim run FILE | --builtin NAME\n");
            return CMD_EXIT_USAGE;
        }
        int rc = read_text(l->args[0], &text, &len);
        if (rc)
            return rc;
        label = strcmp(l->args[0], "-") ? l->args[0] : "(stdin)";
        t = text;
    }
    scenario *sc;
    int line;
    rs_error err = {0, ""};
    int rc = scenario_parse(&sc, label, t, len, &line, &err);
    free(text);
    if (rc) {
        if (line)
            fprintf(stderr, "ringsim: %s:%d: %s\n", label, line, err.msg);
        else
            fprintf(stderr, "ringsim: %s: %s\n", label, err.msg);
        return rc == RINGSIM_ENOMEM ? CMD_EXIT_REFUSED : CMD_EXIT_USAGE;
    }
    sim *s = NULL;
    if (sim_open(&s, db, &err)) {
        scenario_free(sc);
        return refused(&err);
    }
    interrupt in;
    memset(&in, 0, sizeof in);
    in.tty = isatty(STDERR_FILENO);
    sim_set_progress(s, bar, &in);
    interrupt_start(&in);
    run_printer p = {label, l->opt[CMD_O_JSON] != NULL};
    json_t *report;
    rc = scenario_run(sc, s, print_step, &p, &report, &err);
    interrupt_stop(&in);
    sim_close(s);
    scenario_free(sc);
    if (rc < 0)
        return refused(&err);
    if (p.json) {
        char *j = json_dumps(report, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (j)
            puts(j);
        free(j);
    }
    json_t *failed = json_object_get(report, "failed");
    if (json_is_object(failed)) {
        fprintf(stderr, "ringsim: %s:%lld: %s\n", label,
                (long long)json_integer_value(json_object_get(failed, "line")),
                json_string_value(json_object_get(failed, "message")));
    } else if (!p.json) {
        json_int_t ops = json_integer_value(json_object_get(report, "operations"));
        json_int_t met = json_integer_value(json_object_get(report, "expectations"));
        printf("\nok: %s: %zu step%s, %lld operation%s, %lld expectation%s met\n", label,
               json_array_size(json_object_get(report, "steps")),
               json_array_size(json_object_get(report, "steps")) == 1 ? "" : "s", (long long)ops,
               ops == 1 ? "" : "s", (long long)met, met == 1 ? "" : "s");
    }
    json_decref(report);
    return rc == SCENARIO_FAILED ? CMD_EXIT_REFUSED : 0;
}

static int face_export(const cmd_line *l, const char *db)
{
    if (!l->opt[CMD_O_SCENARIO] == !l->opt[CMD_O_CONFIG]) {
        fprintf(stderr, "ringsim: export needs one format: --scenario or --config F\nrun "
                        "'ringsim help export' for usage\n");
        return CMD_EXIT_USAGE;
    }
    sim *s = NULL;
    rs_error err = {0, ""};
    if (sim_open(&s, db, &err))
        return refused(&err);
    char *text;
    size_t len;
    int rc = l->opt[CMD_O_CONFIG] ? export_config(s, l->opt[CMD_O_CONFIG], &text, &len, &err)
                                  : scenario_export(s, -1, &text, &len, &err);
    sim_close(s);
    if (rc)
        return refused(&err);
    fwrite(text, 1, len, stdout);
    free(text);
    return 0;
}

static int face_scenarios(const cmd_line *l, const char *db)
{
    (void)db;
    if (l->nargs) {
        const scenario_file *f = scenario_file_find(l->args[0], strlen(l->args[0]));
        if (!f) {
            fprintf(stderr, "ringsim: no built-in scenario \"%s\"\n", l->args[0]);
            return CMD_EXIT_REFUSED;
        }
        if (l->opt[CMD_O_JSON]) {
            json_t *j = scenario_file_json(f);
            char *t = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
            if (t)
                puts(t);
            free(t);
            json_decref(j);
        } else {
            fwrite(f->text, 1, f->len, stdout);
        }
        return 0;
    }
    json_t *j = scenario_files_json(), *e;
    if (!j) {
        fprintf(stderr, "ringsim: out of memory\n");
        return CMD_EXIT_REFUSED;
    }
    if (l->opt[CMD_O_JSON]) {
        char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (t)
            puts(t);
        free(t);
    } else {
        json_t *list = json_object_get(j, "scenarios");
        size_t i, wname = cmd_column_width(list, "name", 18);
        json_array_foreach(list, i, e)
        {
            const char *title = json_string_value(json_object_get(e, "title"));
            cmd_print_padded(stdout, json_string_value(json_object_get(e, "name")), wname);
            printf(" %s\n", title ? title : "");
        }
    }
    json_decref(j);
    return 0;
}

static int face_serve(const cmd_line *l, const char *db)
{
    const char *env_token = getenv("RINGSIM_TOKEN");
    /* --token T stands in /proc/PID/cmdline for every local user to read:
     * keep a copy and blank the argument in place (as MySQL does with
     * passwords); RINGSIM_TOKEN is never shown there.  The help says so. */
    char *given = l->opt[CMD_O_TOKEN] ? strdup(l->opt[CMD_O_TOKEN]) : NULL;
    if (l->opt[CMD_O_TOKEN] && !given) {
        fprintf(stderr, "ringsim: out of memory\n");
        return 1;
    }
    if (given)
        memset((char *)l->opt[CMD_O_TOKEN], 'x', strlen(given)); /* argv is the process's */
    const char *token = given ? given : env_token && *env_token ? env_token : NULL;
    serve_options so = {.db = db,
                        .host = l->opt[CMD_O_HOST],
                        .port = (int)l->port,
                        .web = l->opt[CMD_O_WEB],
                        .token = token};
    int rc = api_serve(&so);
    free(given);
    return rc;
}

/* ---- main ---- */

/* The commands of the table (cmd.h) that have no handler there: they need
 * the transport or the scenario interpreter, which sit above the table. */
typedef int (*face_fn)(const cmd_line *l, const char *db);
static const struct {
    const char *name;
    face_fn fn;
} faces[] = {
    {"help", face_help},     {"serve", face_serve},         {"run", face_run},
    {"export", face_export}, {"scenarios", face_scenarios},
};

int cli_main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "complete") == 0)
        return face_complete(argc - 2, argv + 2);
    cmd_line l;
    rs_error err = {0, ""};
    int rc = cmd_parse(&l, argc - 1, argv + 1, &err);
    if (rc == CMD_EXIT_OK && l.version) {
        printf("ringsim %s\n", RINGSIM_VERSION);
    } else if (rc == CMD_EXIT_USAGE) {
        rc = usage_error(&err);
    } else if (rc) {
        rc = refused(&err);
    } else if (!l.def) {
        print_usage(l.help ? stdout : stderr);
        rc = l.help ? 0 : CMD_EXIT_USAGE;
    } else if (l.help) {
        print_command_help(stdout, l.def);
    } else {
        const char *env_db = getenv("RINGSIM_DB");
        const char *db = l.opt[CMD_O_DB]     ? l.opt[CMD_O_DB]
                         : env_db && *env_db ? env_db
                                             : "ringsim.db";
        face_fn face = NULL;
        for (size_t i = 0; i < sizeof faces / sizeof faces[0]; i++)
            if (!strcmp(l.def->name, faces[i].name))
                face = faces[i].fn;
        if (face) {
            rc = face(&l, db);
        } else if (!l.def->run) {
            rc = CMD_EXIT_USAGE; /* complete: handled before parsing */
        } else {
            sim *s = NULL;
            if (!(l.def->flags & CMD_F_NO_DB) && sim_open(&s, db, &err)) {
                rc = refused(&err);
            } else {
                interrupt in;
                memset(&in, 0, sizeof in);
                in.tty = isatty(STDERR_FILENO);
                if (s) {
                    sim_set_progress(s, bar, &in);
                    interrupt_start(&in);
                }
                cmd_ctx c;
                rc = cmd_run(&c, s, &l, stdout) ? refused(&c.err) : 0;
                interrupt_stop(&in);
                cmd_ctx_clear(&c);
                sim_close(s);
            }
        }
    }
    cmd_line_clear(&l);
    return rc;
}
