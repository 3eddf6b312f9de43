/*
 * cmd_log.c - the commands of the history: `log` (every operation, or one
 * and every key it moved), `diff A B`, and the two changes that move
 * through it, `revert ID` and `reset`.  Reached only through cmd_table
 * (cmd.c); prints through cmd_out.h.
 *
 * The idea: an operation's moves may be millions, so `log ID` streams them
 * (sim_log_moves) into the API's JSON, CSV or lines for people, one move at
 * a time; `diff` is the engine's composed answer (view_diff) shown whole.
 * Costs: linear in the operations or moves listed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "csv.h"
#include "view.h"

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
        cmd__print_op(c->out, c->s, l->id);
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

/* `log` for people: one line an operation, its subject cut to
 * LOG_SUBJECT_COLUMNS. */
#define LOG_SUBJECT_COLUMNS 64
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
        cmd__print_subject(c->out, p, LOG_SUBJECT_COLUMNS);
        fputc('\n', c->out);
    }
    if (!json_array_size(json_object_get(j, "operations")))
        fprintf(c->out, "(no operations)\n");
}

int cmd__log(cmd_ctx *c)
{
    if (c->l->nargs)
        return run_log_one(c);
    return cmd__show(c, view_operations(c->s, 0, -1, &c->err), "operations", log_text);
}

/* diff A B: what changed between the states after A and after B, every
 * move listed (docs/api.md v3; the API pages them). */
int cmd__diff(cmd_ctx *c)
{
    uint64_t a = 0, b = 0;
    cmd__parse_u64(c->l->args[0], &a); /* checked by the parser (check_args) */
    cmd__parse_u64(c->l->args[1], &b);
    json_t *j = view_diff(c->s, NULL, (int64_t)a, (int64_t)b, 0, INT64_MAX, &c->err);
    if (!j)
        return c->err.code;
    if (c->l->opt[CMD_O_JSON]) {
        cmd__print_json(c->out, j);
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
    cmd__print_pairs(c->out, json_object_get(j, "pairs")); /* every move, by (from, to) */
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

int cmd__revert(cmd_ctx *c)
{
    int rc = sim_revert(c->s, c->l->id, &c->op, &c->err);
    return rc ? rc : cmd__answer_change(c);
}

int cmd__reset(cmd_ctx *c)
{
    int rc = sim_reset(c->s, &c->op, &c->err);
    return rc ? rc : cmd__answer_change(c);
}
