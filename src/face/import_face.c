/*
 * import_face.c - the faces of import: reading the text, the answer's JSON,
 * the command line's `import` and `preview import` (see import_face.h).
 */
#define _GNU_SOURCE
#include "import_face.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

/* Refusals of the text are invalid_import; the message names the line. */
static int text_refused(int line, rs_error *err)
{
    if (line > 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return rs_fail(err, RINGSIM_EIMPORT, "line %d: %s", line, msg);
    }
    err->code = RINGSIM_EIMPORT;
    return RINGSIM_EIMPORT;
}

int import_face_parse(const char *format, const char *text, size_t len, const char *name,
                      import_result **out, int *line, rs_error *err)
{
    import_format f = IMPORT_AUTO;
    *out = NULL;
    *line = 0;
    int rc = format ? import_format_parse(format, &f, err) : 0;
    if (rc)
        return rc;
    rc = import_parse(text, len, f, name, out, line, err);
    return rc == RINGSIM_EPARAM ? text_refused(*line, err) : rc;
}

typedef struct by_name {
    const char *name;
    size_t len;
    size_t i;
} by_name;

static int cmp_name(const void *a, const void *b)
{
    const by_name *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* The "import" object: the parsed text, each node with its answer now. */
static json_t *import_object(sim *s, const import_result *r, bool applied, rs_error *err)
{
    json_t *o = import_result_json(r);
    if (!o) {
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return NULL;
    }
    if (!applied)
        return o;
    sim_node_view *v = NULL;
    size_t n = 0;
    if (sim_nodes(s, &v, &n, err)) {
        json_decref(o);
        return NULL;
    }
    by_name *idx = malloc((n + 1) * sizeof *idx);
    if (!idx) {
        free(v);
        json_decref(o);
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = (by_name){v[i].name, v[i].len, i};
    qsort(idx, n, sizeof *idx, cmp_name);
    json_t *e;
    size_t k;
    json_array_foreach(json_object_get(o, "nodes"), k, e)
    {
        json_t *nm = json_object_get(e, "name");
        by_name key = {json_string_value(nm), json_string_length(nm), 0};
        by_name *hit = bsearch(&key, idx, n, sizeof *idx, cmp_name);
        json_t *now = hit ? view_node(s, &v[hit->i]) : NULL;
        if (now) {
            /* The placement's points stay out of the answer (GET /api/nodes
             * has them); imported tokens stay in as the text gave them. */
            json_object_del(now, "name");
            json_object_del(now, "tokens");
            json_object_update(e, now);
        }
        json_decref(now);
    }
    free(idx);
    free(v);
    return o;
}

json_t *import_face_apply(sim *s, const import_result *r, int *line, rs_error *err)
{
    int64_t op = 0;
    int rc = sim_import_ex(s, r, line, &op, err);
    /* A node the engine cannot hold is a refusal of the text too. */
    if (rc == RINGSIM_EPARAM || rc == RINGSIM_ENAME)
        rc = text_refused(*line, err);
    if (rc)
        return NULL;
    json_t *imp = import_object(s, r, true, err);
    json_t *opj = imp ? view_operation_get(s, op, err) : NULL;
    json_t *o = opj ? json_pack("{s:o, s:o}", "operation", opj, "import", imp) : NULL;
    if (!o) {
        if (!opj)
            json_decref(imp);
        if (!err->msg[0])
            rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    return o;
}

json_t *import_face_preview(sim *s, const import_result *r, int *line, rs_error *err)
{
    view_preview_req p = {SIM_OP_IMPORT, {0}, *sim_config(s), r};
    /* What sim_import refuses, with its line, before the dry run. */
    int rc = sim_import_check(r, line, err);
    if (rc)
        return text_refused(*line, err), NULL;
    json_t *o = view_preview(s, &p, err);
    json_t *imp = o ? import_object(s, r, false, err) : NULL;
    if (!imp) {
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "import", imp);
    return o;
}

/* ---- the command line ---- */

/* FILE, or standard input for "-": at most one byte past the import limit
 * (import_parse refuses a longer text with its own message). */
static int read_text(const char *path, char **out, size_t *len, rs_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return rs_fail(err, RINGSIM_EPARAM, "cannot read %s: %s", path, strerror(errno));
    size_t cap = 65536, n = 0, max = (size_t)IMPORT_MAX_TEXT + 1;
    char *b = malloc(cap + 1);
    while (b && n < max) {
        if (n == cap) {
            cap = cap * 2 > max ? max : cap * 2;
            char *g = realloc(b, cap + 1);
            if (!g) {
                free(b);
                b = NULL;
                break;
            }
            b = g;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    bool bad = f != stdin && ferror(f);
    if (f != stdin)
        fclose(f);
    if (!b)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (bad) {
        free(b);
        return rs_fail(err, RINGSIM_EPARAM, "cannot read %s", path);
    }
    b[n] = '\0';
    *out = b;
    *len = n;
    return 0;
}

static int cli_parse(cmd_ctx *c, import_result **r)
{
    const cmd_line *l = c->l;
    char *text = NULL;
    size_t len = 0;
    int line = 0;
    int rc = read_text(l->args[0], &text, &len, &c->err);
    if (!rc)
        rc = import_face_parse(l->opt[CMD_O_FORMAT], text, len, l->opt[CMD_O_NAME], r, &line,
                               &c->err);
    free(text);
    return rc;
}

static void print_notes(FILE *out, json_t *imp)
{
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(imp, "notes"), i, e)
    {
        json_int_t line = json_integer_value(json_object_get(e, "line"));
        const char *m = json_string_value(json_object_get(e, "message"));
        if (line)
            fprintf(out, "  note, line %lld: %s\n", (long long)line, m ? m : "");
        else
            fprintf(out, "  note: %s\n", m ? m : "");
    }
}

typedef json_t *(*import_step)(sim *s, const import_result *r, int *line, rs_error *err);

/* The command's text parsed and given to step (apply or preview); its
 * answer, printed as JSON with --json (*printed then), or NULL with
 * c->err filled. */
static json_t *run_step(cmd_ctx *c, import_step step, bool *printed)
{
    import_result *r = NULL;
    int line = 0;
    int rc = cli_parse(c, &r);
    json_t *j = rc ? NULL : step(c->s, r, &line, &c->err);
    import_free(r);
    *printed = j && c->out && c->l->opt[CMD_O_JSON];
    if (*printed) {
        char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (t)
            fprintf(c->out, "%s\n", t);
        free(t);
    }
    return j;
}

int import_face_run(cmd_ctx *c)
{
    bool printed;
    json_t *j = run_step(c, import_face_apply, &printed);
    if (!j)
        return c->err.code;
    c->op = json_integer_value(json_object_get(json_object_get(j, "operation"), "id"));
    c->extra = json_pack("{s:O}", "import", json_object_get(j, "import"));
    if (c->out && !printed) {
        json_t *imp = json_object_get(j, "import"), *op = json_object_get(j, "operation"), *e;
        const char *name = json_string_value(json_object_get(imp, "name"));
        fprintf(c->out, "imported %s%s%s%s: %zu node%s, algorithm %s\n",
                json_string_value(json_object_get(imp, "format")), name && *name ? " \"" : "",
                name ? name : "", name && *name ? "\"" : "",
                json_array_size(json_object_get(imp, "nodes")),
                json_array_size(json_object_get(imp, "nodes")) == 1 ? "" : "s",
                json_string_value(json_object_get(imp, "algorithm")));
        size_t i, wname = cmd_column_width(json_object_get(imp, "nodes"), "name", 30);
        json_array_foreach(json_object_get(imp, "nodes"), i, e)
        {
            /* The fields after the keys, each only when it has a value (a
             * text without lines, as Envoy's, has none): "line 4, down". */
            const char *st = json_string_value(json_object_get(e, "state"));
            json_int_t ln = json_integer_value(json_object_get(e, "line"));
            char more[64] = "";
            size_t m = 0;
            if (ln > 0)
                m += (size_t)snprintf(more, sizeof more, "line %lld", (long long)ln);
            if (st && !strcmp(st, "down"))
                m += (size_t)snprintf(more + m, sizeof more - m, "%sdown", m ? ", " : "");
            if (json_is_true(json_object_get(e, "backup")))
                snprintf(more + m, sizeof more - m, "%sbackup", m ? ", " : "");
            fputs("  ", c->out);
            cmd_print_padded(c->out, json_string_value(json_object_get(e, "name")), wname);
            json_int_t keys = json_integer_value(json_object_get(e, "keys"));
            fprintf(c->out, " weight %-6g keys ", json_number_value(json_object_get(e, "weight")));
            /* A Redis master's replicas, as the text names them. */
            json_t *reps = json_object_get(e, "replicas"), *r;
            if (*more || json_array_size(reps))
                fprintf(c->out, "%-8lld %s", (long long)keys, more);
            else
                fprintf(c->out, "%lld", (long long)keys);
            size_t k;
            json_array_foreach(reps, k, r)
            {
                fputs(k ? ", " : *more ? ", replicas " : "replicas ", c->out);
                cmd_print_padded(c->out, json_string_value(r), 0);
            }
            fputc('\n', c->out);
        }
        print_notes(c->out, imp);
        json_int_t moved = json_integer_value(json_object_get(op, "keys_moved"));
        fprintf(c->out, "operation %lld import: %lld key%s moved\n",
                (long long)json_integer_value(json_object_get(op, "id")), (long long)moved,
                moved == 1 ? "" : "s");
    }
    json_decref(j);
    return 0;
}

int import_face_run_preview(cmd_ctx *c)
{
    bool printed;
    json_t *j = run_step(c, import_face_preview, &printed);
    if (!j)
        return c->err.code;
    if (c->out && !printed) {
        json_int_t moved = json_integer_value(json_object_get(j, "keys_moved"));
        json_t *imp = json_object_get(j, "import");
        fprintf(c->out, "importing %s (%zu nodes, algorithm %s) would move %lld key%s",
                json_string_value(json_object_get(imp, "format")),
                json_array_size(json_object_get(imp, "nodes")),
                json_string_value(json_object_get(imp, "algorithm")), (long long)moved,
                moved == 1 ? "" : "s");
        const char *sep = ": from";
        json_t *e;
        size_t i;
        json_array_foreach(json_object_get(j, "moved_from"), i, e)
        {
            const char *n = json_string_value(json_object_get(e, "node"));
            fprintf(c->out, "%s %s %lld", i ? "," : sep, n ? n : "(none)",
                    (long long)json_integer_value(json_object_get(e, "keys")));
        }
        sep = "; to";
        json_array_foreach(json_object_get(j, "moved_to"), i, e)
        {
            const char *n = json_string_value(json_object_get(e, "node"));
            fprintf(c->out, "%s %s %lld", i ? "," : sep, n ? n : "(none)",
                    (long long)json_integer_value(json_object_get(e, "keys")));
        }
        fprintf(c->out, "\n");
        print_notes(c->out, imp);
        fprintf(c->out, "nothing was changed\n");
    }
    json_decref(j);
    return 0;
}
