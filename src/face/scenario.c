/*
 * scenario.c - parse and run scenario files, and the built-in ones (see
 * scenario.h; exporting the history as a scenario is scenario_export.c's).
 *
 * Parsing is one pass over the lines: each is split into words like a
 * shell would, then handed to cmd_parse, the command line's own parser, so
 * a scenario line means exactly what it means after `ringsim`.  A step keeps
 * its parsed cmd_line; running a step is cmd_run with no output.  Costs:
 * parsing is linear in the text; running costs what the operations cost.
 */
#define _GNU_SOURCE
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "names.h"
#include "sbuf.h"
#include "scenario_int.h"
#include "view.h"
#include "vec.h"

/* ---- quoting and splitting words ---- */

/* Bytes a word may hold and still need no quotes (in a shell as well):
 * letters, digits, a few marks, and every byte of a multi-byte character. */
static bool plain_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80 || strchr("_-.,:/@%+=", c) != NULL;
}

int scenario_quote(char **buf, size_t *len, size_t *cap, const char *word, size_t n)
{
    sbuf b = {*buf, *len, *cap};
    bool plain = n > 0;
    for (size_t i = 0; i < n && plain; i++)
        plain = plain_byte((unsigned char)word[i]);
    int rc = 0;
    if (plain) {
        rc = sb_add(&b, word, n);
    } else {
        /* 'it'\''s': a quote ends the quoted part, an escaped quote, and on */
        rc = sb_add(&b, "'", 1);
        size_t from = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            if (word[i] != '\'')
                continue;
            rc = sb_add(&b, word + from, i - from);
            if (!rc)
                rc = sb_add(&b, "'\\''", 4);
            from = i + 1;
        }
        if (!rc)
            rc = sb_add(&b, word + from, n - from);
        if (!rc)
            rc = sb_add(&b, "'", 1);
    }
    *buf = b.p;
    *len = b.n;
    *cap = b.cap;
    return rc;
}

/* The words of a line, split as a POSIX shell splits them (no expansion):
 * 'single quotes' keep everything, "double quotes" take \" \\ \$ \` as
 * escapes, a backslash outside quotes escapes the next byte, and an
 * unquoted word starting with # begins a comment.  One malloc'd block
 * (*words) holds the pointers and the text; quoted[i] says whether word i
 * had quotes or escapes. */
typedef struct words {
    char **v;
    bool *quoted;
    int n;
} words;

static int split(const char *line, size_t n, words *w, rs_error *err)
{
    size_t maxw = n / 2 + 2;
    char *block = malloc(maxw * (sizeof(char *) + sizeof(bool)) + n + 1);
    if (!block)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    w->v = (char **)block;
    w->quoted = (bool *)(block + maxw * sizeof(char *));
    char *out = block + maxw * (sizeof(char *) + sizeof(bool));
    size_t i = 0, o = 0;
    w->n = 0;
    for (;;) {
        while (i < n && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i >= n || line[i] == '#')
            break;
        size_t start = o;
        bool quoted = false;
        while (i < n && line[i] != ' ' && line[i] != '\t') {
            char c = line[i];
            if (c == '\'' || c == '"') {
                quoted = true;
                i++;
                while (i < n && line[i] != c) {
                    if (c == '"' && line[i] == '\\' && i + 1 < n && strchr("\"\\$`", line[i + 1]))
                        i++;
                    out[o++] = line[i++];
                }
                if (i >= n) {
                    free(block);
                    w->v = NULL;
                    return rs_fail(err, RINGSIM_EPARAM, "unterminated %s quote",
                                   c == '"' ? "double" : "single");
                }
                i++;
            } else if (c == '\\') {
                if (i + 1 >= n) {
                    free(block);
                    w->v = NULL;
                    return rs_fail(err, RINGSIM_EPARAM,
                                   "a line cannot end with a backslash (no continuation "
                                   "lines)");
                }
                quoted = true;
                out[o++] = line[i + 1];
                i += 2;
            } else {
                out[o++] = c;
                i++;
            }
        }
        out[o++] = '\0';
        w->quoted[w->n] = quoted;
        w->v[w->n++] = out + start;
    }
    w->v[w->n] = NULL;
    return 0;
}

/* ---- the parsed scenario ---- */

typedef enum {
    ST_NODES,
    ST_KEYS,
    ST_MAX_OVER_MEAN,
    ST_CV,
    ST_KEYS_MOVED,
    ST_REPLICA_MOVES,
    ST_OWNER,
    /* requests (docs/api.md v3 traffic) */
    ST_REQ_MAX_OVER_MEAN,
    ST_REQ_CV,
    ST_REQ_BOUND,
    ST_HOTTEST_SHARE,
    ST_REQ_MOVED,
    ST_BYTES_MOVED,
} stat_id;

static const char *const stat_names[] = {
    "nodes",       "keys",           "max_over_mean", "cv",
    "keys_moved",  "replica_moves",  "owner",         "requests_max_over_mean",
    "requests_cv", "requests_bound", "hottest_share", "requests_moved",
    "bytes_moved"};
static const bool stat_integral[] = {true,  true,  false, false, true,  true, false,
                                     false, false, false, false, false, true};

typedef enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE } op_id;
static const char *const op_names[] = {"==", "!=", "<", "<=", ">", ">="};

typedef struct step {
    int line;
    char *text; /* the line as written, trimmed (malloc'd) */
    char *note; /* the comment lines just above (malloc'd), or NULL */
    bool expect;
    words w; /* a command's words (cl points into them) */
    cmd_line cl;
    stat_id stat;
    op_id op;
    double value;
    char *key;   /* owner(KEY) (malloc'd) */
    char *owner; /* the expected owner; NULL: no node */
} step;

struct scenario {
    char *name, *title, *summary;
    step *steps;
    size_t n, cap;
};

static void step_clear(step *st)
{
    free(st->text);
    free(st->note);
    cmd_line_clear(&st->cl);
    free(st->w.v);
    free(st->key);
    free(st->owner);
}

void scenario_free(scenario *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->n; i++)
        step_clear(&sc->steps[i]);
    free(sc->steps);
    free(sc->name);
    free(sc->title);
    free(sc->summary);
    free(sc);
}

/* A comment line's text: without the #s and the spaces after them. */
static void comment_text(const char **s, size_t *n)
{
    while (*n && (**s == '#')) {
        (*s)++;
        (*n)--;
    }
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Comment lines joined into prose: lines run on with a space, an empty
 * comment line starts a new paragraph. */
static int prose_add(sbuf *b, const char *s, size_t n)
{
    comment_text(&s, &n);
    int rc = 0;
    if (n == 0)
        return b->n ? sb_str(b, "\n\n") : 0;
    if (b->n && b->p[b->n - 1] != '\n')
        rc = sb_add(b, " ", 1);
    return rc ? rc : sb_add(b, s, n);
}

static char *prose_take(sbuf *b)
{
    while (b->n && b->p[b->n - 1] == '\n') /* a trailing empty comment line */
        b->p[--b->n] = '\0';
    char *p = b->n ? b->p : NULL;
    if (!p)
        free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

/* The header: the comment lines at the top, before the first blank line or
 * command: the first is the title, the rest the summary. */
static int read_header(const char *text, size_t len, char **title, char **summary)
{
    sbuf head = {0};
    *title = *summary = NULL;
    const char *p = text, *end = text + len;
    int rc = 0;
    while (!rc && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *s = p;
        size_t n = (size_t)((nl ? nl : end) - p);
        p = nl ? nl + 1 : end;
        while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        while (n && (*s == ' ' || *s == '\t')) {
            s++;
            n--;
        }
        if (n == 0 || s[0] != '#')
            break;
        if (*title) {
            rc = prose_add(&head, s, n);
            continue;
        }
        comment_text(&s, &n);
        if (n && !(*title = strndup(s, n)))
            rc = RINGSIM_ENOMEM;
    }
    *summary = prose_take(&head);
    if (rc) {
        free(*title);
        free(*summary);
        *title = *summary = NULL;
    }
    return rc;
}

static int parse_expect(step *st, rs_error *err)
{
    words *w = &st->w;
    if (w->n != 4)
        return rs_fail(err, RINGSIM_EPARAM,
                       "expect takes STAT OP VALUE (for example: expect keys == 1000)");
    const char *stat = w->v[1];
    size_t sl = strlen(stat);
    int found = -1;
    for (int i = 0; i < (int)(sizeof stat_names / sizeof stat_names[0]); i++)
        if (i != ST_OWNER && strcmp(stat, stat_names[i]) == 0)
            found = i;
    if (found < 0 && sl > 7 && strncmp(stat, "owner(", 6) == 0 && stat[sl - 1] == ')') {
        int rc = name_check(stat + 6, sl - 7, "key", err);
        if (rc)
            return rc == RINGSIM_ENOMEM ? rc : RINGSIM_EPARAM;
        if (!(st->key = strndup(stat + 6, sl - 7)))
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        found = ST_OWNER;
    }
    if (found < 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "unknown statistic \"%.64s\": expect nodes, keys, max_over_mean, cv, "
                       "keys_moved, replica_moves, requests_max_over_mean, requests_cv, "
                       "requests_bound, hottest_share, requests_moved, bytes_moved or owner(KEY)",
                       stat);
    st->stat = (stat_id)found;
    int op = -1;
    for (int i = 0; i < (int)(sizeof op_names / sizeof op_names[0]); i++)
        if (strcmp(w->v[2], op_names[i]) == 0)
            op = i;
    if (op < 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "unknown comparison \"%.16s\": use ==, !=, <, <=, > or >=", w->v[2]);
    st->op = (op_id)op;
    const char *v = w->v[3];
    if (st->stat == ST_OWNER) {
        if (st->op != OP_EQ && st->op != OP_NE)
            return rs_fail(err, RINGSIM_EPARAM, "owner(KEY) compares with == or != only");
        if (!w->quoted[3] && strcmp(v, "none") == 0)
            return 0; /* no node; a node named none is written 'none' */
        int rc = name_check(v, strlen(v), "node name", err);
        if (rc)
            return rc == RINGSIM_ENOMEM ? rc : RINGSIM_EPARAM;
        if (!(st->owner = strdup(v)))
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return 0;
    }
    char *end;
    st->value = strtod(v, &end);
    if (!*v || *end || !isfinite(st->value))
        return rs_fail(err, RINGSIM_EPARAM, "%s compares with a number, not \"%.64s\"",
                       stat_names[st->stat], v);
    return 0;
}

/* One command line: the command line's parser, and only changes. */
static int parse_command(step *st, rs_error *err)
{
    int rc = cmd_parse(&st->cl, st->w.n, st->w.v, err);
    if (rc)
        return err->code == RINGSIM_ENOMEM ? RINGSIM_ENOMEM : RINGSIM_EPARAM;
    const cmd_line *l = &st->cl;
    if (l->help || l->version)
        return rs_fail(err, RINGSIM_EPARAM, "--help and --version have no place in a scenario");
    for (int o = CMD_O_DB; o <= CMD_O_CSV; o++)
        if (l->opt[o])
            return rs_fail(err, RINGSIM_EPARAM, "--%s has no place in a scenario",
                           cmd_options[o].name);
    if (!cmd_changes(l))
        return rs_fail(err, RINGSIM_EPARAM,
                       "\"%.64s\" is not a change: a scenario's lines are node add, node rm, "
                       "key add, key rm, key gen, config with options, workload, reset, revert "
                       "and expect",
                       l->def->name);
    if (cmd_reads_input(l)) /* the server runs scenarios: no file of its machine */
        return rs_fail(err, RINGSIM_EPARAM,
                       "a scenario lists its keys: key add --file and key add - read files "
                       "(a key named - stands after --)");
    return 0;
}

static int add_step(scenario *sc, step **out)
{
    if (vec_reserve(&sc->steps, &sc->cap, sc->n + 1, sizeof *sc->steps, 16))
        return RINGSIM_ENOMEM;
    *out = &sc->steps[sc->n++];
    memset(*out, 0, sizeof **out);
    return 0;
}

int scenario_parse(scenario **out, const char *name, const char *text, size_t len, int *line,
                   rs_error *err)
{
    *out = NULL;
    *line = 0;
    /* A byte-order mark, as some editors write at the start of a UTF-8
     * file, is not part of the first line. */
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
        text += 3;
        len -= 3;
    }
    scenario *sc = calloc(1, sizeof *sc);
    if (!sc || !(sc->name = strdup(name ? name : "scenario"))) {
        free(sc);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    sbuf note = {0};
    bool in_head = true;
    if (read_header(text, len, &sc->title, &sc->summary)) {
        scenario_free(sc);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    int rc = 0, lineno = 0;
    const char *p = text, *end = text + len;
    while (!rc && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t n = (size_t)(le - p);
        if (n && p[n - 1] == '\r')
            n--;
        lineno++;
        const char *s = p;
        p = nl ? nl + 1 : end;
        while (n && (*s == ' ' || *s == '\t')) {
            s++;
            n--;
        }
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        for (size_t i = 0; i < n && !rc; i++)
            if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
                rc = rs_fail(err, RINGSIM_EPARAM, "control character (byte 0x%02x) in the line",
                             (unsigned char)s[i]);
            else if (s[i] == 0x7f)
                rc = rs_fail(err, RINGSIM_EPARAM, "control character (byte 0x7f) in the line");
        if (!rc && !utf8_valid(s, n))
            rc = rs_fail(err, RINGSIM_EPARAM, "the line is not valid UTF-8");
        if (rc)
            break;
        if (n == 0) { /* a blank line ends the header and a note */
            in_head = false;
            free(prose_take(&note));
            continue;
        }
        if (s[0] == '#') {
            if (!in_head) /* the header is read_header's */
                rc = prose_add(&note, s, n);
            continue;
        }
        in_head = false;
        step *st;
        if ((rc = add_step(sc, &st))) {
            rs_fail(err, rc, "out of memory");
            break;
        }
        st->line = lineno;
        st->note = prose_take(&note);
        if (!(st->text = strndup(s, n))) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            break;
        }
        if ((rc = split(s, n, &st->w, err)))
            break;
        if (st->w.n == 0) { /* only a comment after spaces: not a step */
            step_clear(st);
            sc->n--;
            continue;
        }
        st->expect = strcmp(st->w.v[0], "expect") == 0;
        rc = st->expect ? parse_expect(st, err) : parse_command(st, err);
    }
    free(note.p);
    if (rc) {
        *line = lineno;
        scenario_free(sc);
        return rc == RINGSIM_ENOMEM ? rc : RINGSIM_EPARAM;
    }
    if (sc->n == 0) {
        scenario_free(sc);
        return rs_fail(err, RINGSIM_EPARAM, "the scenario has no steps");
    }
    *out = sc;
    return 0;
}

/* A JSON string of text that may have been cut inside a UTF-8 character
 * (messages quote input at a bounded length): bad bytes become '?'. */
static json_t *jstr(const char *t)
{
    size_t n = strlen(t);
    if (utf8_valid(t, n))
        return json_stringn(t, n);
    char *c = strdup(t);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t k = 1;
        unsigned char b = (unsigned char)c[i];
        if (b >= 0x80) {
            k = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            if (i + k > n || !utf8_valid(c + i, k)) {
                c[i] = '?';
                k = 1;
            }
        }
        i += k;
    }
    json_t *j = json_stringn(c, n);
    free(c);
    return j;
}

static json_t *error_json(int code, const char *msg)
{
    return json_pack("{s:s, s:o}", "code", ringsim_errcode(code), "message", jstr(msg));
}

static json_t *step_base(const step *st, const char *kind)
{
    json_t *j = json_pack("{s:i, s:s, s:s}", "line", st->line, "text", st->text, "kind", kind);
    if (j && st->note)
        json_object_set_new(j, "note", json_string(st->note));
    return j;
}

static json_t *header_json(const scenario *sc)
{
    return json_pack("{s:b, s:s, s:s?, s:s?}", "ok", 1, "name", sc->name, "title", sc->title,
                     "summary", sc->summary);
}

json_t *scenario_outline(const scenario *sc)
{
    json_t *o = header_json(sc), *steps = json_array();
    for (size_t i = 0; o && steps && i < sc->n; i++)
        if (json_array_append_new(
                steps, step_base(&sc->steps[i], sc->steps[i].expect ? "expect" : "command"))) {
            json_decref(steps);
            steps = NULL;
        }
    if (!o || !steps || json_object_set_new(o, "steps", steps)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- running ---- */

/* The shortest decimal text that reads back as v (scenario_int.h). */
void scenario__num_text(char buf[SCENARIO_NUM_TEXT], double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, SCENARIO_NUM_TEXT, "%.0f", v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, SCENARIO_NUM_TEXT, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static bool compare(double a, op_id op, double b)
{
    switch (op) {
    case OP_EQ:
        return a == b;
    case OP_NE:
        return a != b;
    case OP_LT:
        return a < b;
    case OP_LE:
        return a <= b;
    case OP_GT:
        return a > b;
    default:
        return a >= b;
    }
}

static json_t *number(stat_id s, double v)
{
    return stat_integral[s] && v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v)
                                                               : json_real(v);
}

/* Evaluate an expectation: *j its step report, *message why it failed
 * (empty when it held). */
static int run_expect(const step *st, sim *s, json_t *j, char *message, size_t msize, rs_error *err)
{
    message[0] = '\0';
    char stat[NAME_BUF + 8];
    snprintf(stat, sizeof stat, st->stat == ST_OWNER ? "owner(%s)" : "%s",
             st->stat == ST_OWNER ? st->key : stat_names[st->stat]);
    json_object_set_new(j, "stat", json_string(stat_names[st->stat]));
    if (st->key)
        json_object_set_new(j, "key", json_string(st->key));
    json_object_set_new(j, "op", json_string(op_names[st->op]));
    bool ok;
    if (st->stat == ST_OWNER) {
        sim_lookup_result r;
        int rc = sim_lookup(s, st->key, strlen(st->key), &r, err);
        if (rc)
            return rc;
        char have[NAME_BUF] = "";
        if (r.node)
            snprintf(have, sizeof have, "%.*s", (int)r.node_len, r.node);
        bool same = (!r.node && !st->owner) || (r.node && st->owner && strcmp(have, st->owner) == 0);
        ok = st->op == OP_EQ ? same : !same;
        json_object_set_new(j, "value", st->owner ? json_string(st->owner) : json_null());
        json_object_set_new(j, "actual", r.node ? json_string(have) : json_null());
        if (!ok)
            snprintf(message, msize, "expected %s %s %s, but %s is %s", stat, op_names[st->op],
                     st->owner ? st->owner : "none", stat, r.node ? have : "none");
    } else {
        double actual;
        sim_stats ss;
        sim_stats_get(s, &ss);
        switch (st->stat) {
        case ST_NODES:
            actual = (double)ss.nodes;
            break;
        case ST_KEYS:
            actual = (double)ss.keys;
            break;
        case ST_MAX_OVER_MEAN:
            actual = ss.max_over_mean;
            break;
        case ST_CV:
            actual = ss.cv;
            break;
        case ST_REQ_MAX_OVER_MEAN:
        case ST_REQ_CV:
        case ST_REQ_BOUND:
        case ST_HOTTEST_SHARE: {
            sim_requests_stats rq;
            int rc = sim_requests_get(s, &rq, err);
            if (rc)
                return rc;
            actual = st->stat == ST_REQ_MAX_OVER_MEAN ? rq.max_over_mean
                     : st->stat == ST_REQ_CV          ? rq.cv
                     : st->stat == ST_REQ_BOUND       ? rq.bound
                                                      : rq.hottest_share;
            break;
        }
        default: {
            int64_t last = sim_last_op(s);
            if (last < 0)
                return rs_fail(err, (int)last, "cannot read the operation log");
            if (last < 1) {
                snprintf(message, msize, "%s: there is no operation yet", stat);
                json_object_set_new(j, "ok", json_false());
                return 0;
            }
            sim_op o;
            int rc = sim_log_get(s, last, &o, err);
            if (rc)
                return rc;
            actual = st->stat == ST_REQ_MOVED ? o.requests_moved
                     : st->stat == ST_BYTES_MOVED
                         ? (double)o.bytes_moved
                         : (double)(st->stat == ST_KEYS_MOVED ? o.keys_moved : o.replica_moves);
            sim_op_clear(&o);
        }
        }
        ok = compare(actual, st->op, st->value);
        json_object_set_new(j, "value", number(st->stat, st->value));
        json_object_set_new(j, "actual", number(st->stat, actual));
        if (!ok) {
            char a[SCENARIO_NUM_TEXT], v[SCENARIO_NUM_TEXT];
            scenario__num_text(a, actual);
            scenario__num_text(v, st->value);
            snprintf(message, msize, "expected %s %s %s, but %s is %s", stat, op_names[st->op], v,
                     stat, a);
        }
    }
    json_object_set_new(j, "ok", json_boolean(ok));
    return 0;
}

int scenario_run(scenario *sc, sim *s, scenario_step_fn fn, void *ud, json_t **report, rs_error *err)
{
    *report = NULL;
    json_t *rep = header_json(sc), *steps = json_array();
    if (!rep || !steps) {
        json_decref(rep);
        json_decref(steps);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    json_object_set_new(rep, "steps", steps);
    int64_t ops = 0, met = 0;
    size_t ran = 0;
    json_t *failed = NULL;
    for (size_t i = 0; i < sc->n && !failed; i++) {
        step *st = &sc->steps[i];
        ran++;
        json_t *j = step_base(st, st->expect ? "expect" : "command");
        bool kept = i < SCENARIO_REPORT_STEPS;
        if (!j || (kept && json_array_append(steps, j))) {
            json_decref(j);
            json_decref(rep);
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        }
        char message[1200] = "";
        if (st->expect) {
            rs_error e = {0, ""};
            int rc = run_expect(st, s, j, message, sizeof message, &e);
            if (rc)
                snprintf(message, sizeof message, "%s", e.msg);
            else if (!message[0])
                met++;
        } else {
            cmd_ctx c;
            int rc = cmd_run(&c, s, &st->cl, NULL);
            if (rc) {
                snprintf(message, sizeof message, "%s", c.err.msg);
                json_object_set_new(j, "error", error_json(rc, c.err.msg));
            } else {
                ops += c.op != 0; /* a configure that changes nothing records none */
                rs_error e;
                json_t *o = c.op ? view_operation_get(s, c.op, &e) : NULL;
                json_object_set_new(j, "operation", o ? o : json_null());
                json_t *ins = c.extra ? json_object_get(c.extra, "inserted") : NULL;
                if (ins) {
                    json_object_set(j, "inserted", ins);
                    json_object_set(j, "skipped", json_object_get(c.extra, "skipped"));
                }
            }
            cmd_ctx_clear(&c);
        }
        if (message[0])
            failed = json_pack("{s:i, s:s, s:o}", "line", st->line, "text", st->text, "message",
                               jstr(message));
        if (fn)
            fn(ud, j);
        if (!kept && failed) /* the failing step is always in the report */
            json_array_append(steps, j);
        json_decref(j);
        if (message[0] && !failed) {
            json_decref(rep);
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        }
    }
    if (ran > json_array_size(steps))
        json_object_set_new(rep, "steps_omitted",
                            json_integer((json_int_t)(ran - json_array_size(steps))));
    json_object_set_new(rep, "ok", json_boolean(!failed));
    json_object_set_new(rep, "operations", json_integer(ops));
    json_object_set_new(rep, "expectations", json_integer(met));
    json_object_set_new(rep, "failed", failed ? failed : json_null());
    *report = rep;
    return failed ? SCENARIO_FAILED : 0;
}

/* ---- built-in scenarios ---- */

const scenario_file *scenario_file_find(const char *name, size_t len)
{
    for (const scenario_file *f = scenario_files; f->name; f++)
        if (strlen(f->name) == len && memcmp(f->name, name, len) == 0)
            return f;
    return NULL;
}

static json_t *file_json(const scenario_file *f, bool with_text)
{
    char *title, *summary;
    if (read_header(f->text, f->len, &title, &summary))
        return NULL;
    json_t *o = json_pack("{s:s, s:s?, s:s?}", "name", f->name, "title", title, "summary", summary);
    free(title);
    free(summary);
    if (o && with_text && json_object_set_new(o, "text", json_stringn(f->text, f->len))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *scenario_file_json(const scenario_file *f) { return file_json(f, true); }

json_t *scenario_files_json(void)
{
    json_t *arr = json_array();
    for (const scenario_file *f = scenario_files; arr && f->name; f++)
        if (json_array_append_new(arr, file_json(f, false))) {
            json_decref(arr);
            arr = NULL;
        }
    return arr ? json_pack("{s:o}", "scenarios", arr) : NULL;
}
