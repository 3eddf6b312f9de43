/*
 * cmd_out.c - how the commands print (see cmd_out.h), one floor below the
 * handlers: every handler file includes cmd_out.h, and nothing here calls
 * a handler or the parser above it.
 *
 * The idea: a command answers in one of three shapes -- exactly the JSON of
 * the matching API answer (--json), the same objects as CSV (--csv), or
 * text for people -- and view.c owns every shape, so the frames here
 * (cmd__show, cmd__answer_change) only choose.  Text for people goes
 * through the tables below: a name or a key is shown as names_escape()
 * writes it and padded by the columns it takes on a terminal, never by
 * bytes.  Costs: a line is linear in its text; cmd__skewed and cmd__sized
 * read the workload's JSON, once a table.
 */
#define _GNU_SOURCE
#include "cmd_out.h"

#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "names.h"
#include "view.h"

/* ---- the frames ---- */

/* The answer of a change: {extra..., "operation"} as JSON, or for people
 * "inserted ..." (key add/gen) or the operation's line. */
int cmd__answer_change(cmd_ctx *c)
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
        cmd__print_json(c->out, j);
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
        cmd__print_op(c->out, c->s, c->op);
    }
    return 0;
}

/* The frame of a command that shows a view: j (NULL when the view failed,
 * c->err saying why) as CSV of its array `csv` with --csv (csv NULL: the
 * command has no --csv), as JSON with --json, else by text; j is freed. */
int cmd__show(cmd_ctx *c, json_t *j, const char *csv, void (*text)(cmd_ctx *c, json_t *j))
{
    if (!j)
        return c->err.code;
    int rc = 0;
    if (csv && c->l->opt[CMD_O_CSV])
        rc = cmd__print_csv(c->out, j, csv, &c->err);
    else if (c->l->opt[CMD_O_JSON])
        cmd__print_json(c->out, j);
    else
        text(c, j);
    json_decref(j);
    return rc;
}

void cmd__print_json(FILE *out, json_t *j)
{
    char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (t) {
        fputs(t, out);
        fputc('\n', out);
    }
    free(t);
}

/* A list member of j as CSV. */
int cmd__print_csv(FILE *out, json_t *j, const char *member, rs_error *err)
{
    size_t n;
    char *t = csv_from_rows(json_object_get(j, member), &n);
    if (!t)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory writing CSV");
    fwrite(t, 1, n, out);
    free(t);
    return 0;
}

/* ---- numbers for people ---- */

/* x in its shortest form that reads back exactly ("1.1", not
 * "1.1000000000000001"): %.15g, %.16g or %.17g, the first that strtod
 * returns as x.  Into buf (32 bytes are enough); returns buf. */
const char *cmd__shortest(char *buf, size_t size, double x)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* n with a comma every three digits ("22,385") into buf; returns buf. */
const char *cmd__thousands(char *buf, size_t size, long long n)
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

/* ---- what the workload makes worth printing ---- */

/* Whether the workload gives keys unequal shares: only then do the tables
 * for people show requests beside keys (with uniform shares they are the
 * key shares). */
bool cmd__skewed(sim *s)
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
bool cmd__sized(sim *s)
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

/* ---- lines more than one command prints ---- */

/* An operation's subject, cut to width columns (0: whole); a set_state
 * says which way it went ("alpha up -> down": an operation that changes
 * nothing is never recorded, so the state before is the other one). */
void cmd__print_subject(FILE *out, json_t *o, size_t width)
{
    const char *st = json_string_value(json_object_get(o, "state"));
    bool state = st && !strcmp(json_string_value(json_object_get(o, "type")), "set_state");
    size_t arrow = state ? strlen(" down -> up") : 0;
    cmd_print_cut(out, json_string_value(json_object_get(o, "subject")),
                  width > arrow ? width - arrow : width);
    if (state)
        fprintf(out, " %s -> %s", strcmp(st, "down") ? "down" : "up", st);
}

/* "operation 4 add_node: echo; 12 keys moved (from bravo 9, charlie 3)";
 * under ceph "; 5 PGs remapped, 6 shards moved" after it. */
void cmd__print_op(FILE *out, sim *s, int64_t id)
{
    rs_error err;
    json_t *o = view_operation_get(s, id, &err);
    if (!o)
        return;
    json_int_t moved = json_integer_value(json_object_get(o, "keys_moved"));
    fprintf(out, "operation %lld %s: ", (long long)id, json_string_value(json_object_get(o, "type")));
    cmd__print_subject(out, o, 0);
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
    json_t *pr = json_object_get(o, "pgs_remapped"), *psm = json_object_get(o, "pg_shards_moved");
    if (pr) /* ceph */
        fprintf(out, "; %lld PG%s remapped, %lld shard%s moved", (long long)json_integer_value(pr),
                json_integer_value(pr) == 1 ? "" : "s", (long long)json_integer_value(psm),
                json_integer_value(psm) == 1 ? "" : "s");
    json_t *rm = json_object_get(o, "requests_moved");
    if (moved && json_is_number(rm) && cmd__skewed(s)) /* the miss spike for a cache */
        fprintf(out, "; %.1f%% of requests moved", 100 * json_number_value(rm));
    fprintf(out, "\n");
    json_decref(o);
}

/* The exact (from, to) pairs, largest first: "  a -> b  1,234 keys". */
void cmd__print_pairs(FILE *out, json_t *pairs)
{
    json_t *e;
    size_t i;
    json_array_foreach(pairs, i, e)
    {
        const char *f = json_string_value(json_object_get(e, "from"));
        const char *t = json_string_value(json_object_get(e, "to"));
        char n[32];
        cmd__thousands(n, sizeof n, (long long)json_integer_value(json_object_get(e, "keys")));
        fprintf(out, "%s", i ? "" : "moves by pair:\n");
        fprintf(out, "  %s -> %s  %s keys\n", f ? f : "no live replica", t ? t : "no live replica",
                n);
    }
}

/* "unavailable: 1,951 keys (39.0%) have no live replica" (with their
 * requests and bytes where the workload says more), nothing when none. */
void cmd__print_unavailable(FILE *out, const char *what, json_t *u, bool loads, bool bytes)
{
    json_int_t k = json_integer_value(json_object_get(u, "keys"));
    if (!u || k <= 0)
        return;
    char n[32];
    cmd__thousands(n, sizeof n, (long long)k);
    fprintf(out, "%s: %s key%s (%.1f%%) have no live replica", what, n, k == 1 ? "" : "s",
            100 * json_number_value(json_object_get(u, "key_share")));
    json_t *rq = json_object_get(u, "requests_share"), *by = json_object_get(u, "bytes");
    if (loads && json_is_number(rq))
        fprintf(out, ", %.1f%% of requests", 100 * json_number_value(rq));
    if (bytes && json_is_integer(by))
        fprintf(out, ", %lld bytes", (long long)json_integer_value(by));
    fprintf(out, "\n");
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
