/*
 * cmd_key.c - the commands of keys: `key add` (arguments, or the lines of a
 * file or of standard input), `key gen` (numbered or YCSB's names), `key
 * rm` (one operation each) and `key ls`, and cmd_reads_input (cmd.h), which
 * says when a line reads the machine's input.  The handlers are reached only
 * through cmd_table (cmd.c); they print through cmd_out.h.
 *
 * The idea: millions of keys are never a million JSON objects nor held
 * whole -- a file is streamed into one insert (keyfile.h), and `key ls`
 * writes one row at a time, in the API's JSON or CSV (view_keys_write) or
 * as a table for people.  Costs: linear in the keys given or listed; the
 * table asks the placement for each key's coordinate where the algorithm
 * names one.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "keyfile.h"
#include "names.h"
#include "view.h"
#include "workload.h"

static sim_str *arg_strs(const cmd_line *l, rs_error *err)
{
    sim_str *v = malloc((size_t)l->nargs * sizeof *v);
    if (!v)
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (int i = 0; v && i < l->nargs; i++)
        v[i] = (sim_str){l->args[i], strlen(l->args[i])};
    return v;
}

/* Whether l reads the machine's input (cmd.h): `key add --file F`, or
 * `key add -` where the - came before any "--" (after it, - is a key).
 * Here, beside the handler that reads it, and not in cmd.c: scenario.c
 * asks it too, and a handler never calls up into the parser's file. */
bool cmd_reads_input(const cmd_line *l)
{
    return l->def && !strcmp(l->def->name, "key add") &&
           (l->opt[CMD_O_FILE] || (l->nargs == 1 && l->literal_from > 0 && !strcmp(l->args[0], "-")));
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
    return cmd__answer_change(c);
}

int cmd__key_add(cmd_ctx *c)
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
    return cmd__answer_change(c);
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
    return cmd__answer_change(c);
}

int cmd__key_gen(cmd_ctx *c)
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
    return cmd__answer_change(c);
}

int cmd__key_rm(cmd_ctx *c)
{
    sim_str *v = arg_strs(c->l, &c->err);
    if (!v)
        return c->err.code;
    int rc = sim_delete_keys(c->s, v, (size_t)c->l->nargs, &c->op, &c->err);
    free(v);
    return rc ? rc : cmd__answer_change(c);
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
int cmd__key_ls(cmd_ctx *c)
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
