/*
 * scenario.c - parse, run and export scenario files (see scenario.h).
 *
 * Parsing is one pass over the lines: each is split into words like a
 * shell would, then handed to cmd_parse, the command line's own parser, so
 * a scenario line means exactly what it means after `ringsim`.  A step keeps
 * its parsed cmd_line; running a step is cmd_run with no output.  Costs:
 * parsing is linear in the text; running costs what the operations cost.
 *
 * Exporting walks the history as time travel does (sim_at): the state after
 * the last operation stands on the operations since the last reset or
 * revert, and a revert to j stands on the state after j, recursively; a
 * reset starts from nothing with the configuration it kept.  The export
 * writes that chain -- the recipe of the state -- and leaves out what a
 * reset cleared or a revert undid, so running it reproduces the state, not
 * the detours.  It starts with `reset` and the whole configuration, so it
 * rebuilds the same state on any database.
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
#include "view.h"
#include "vec.h"

/* ---- growable text ---- */

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

/* The shortest decimal text that reads back as v. */
static void num_text(char buf[40], double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, 40, "%.0f", v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 40, "%.*g", p, v);
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
            char a[40], v[40];
            num_text(a, actual);
            num_text(v, st->value);
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

/* ---- export ---- */

typedef struct idlist {
    int64_t *v;
    size_t n, cap;
} idlist;

static int collect_id(void *ud, const sim_op *op)
{
    idlist *l = ud;
    if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 64))
        return RINGSIM_ENOMEM;
    l->v[l->n++] = op->id;
    return 0;
}

/* The operations the state after `at` stands on, oldest first, and the
 * configuration they start from: the engine's walk (sim_chain_get), the
 * same one time travel replays. */
static int recipe(sim *s, int64_t at, idlist *ops, place_config *start, int64_t *base, rs_error *err)
{
    sim_chain ch;
    int rc = sim_chain_get(s, at, &ch, err);
    if (!rc)
        *start = ch.start;
    /* The oldest segment starts after a reset (which kept the workload),
     * a revert to 0, or nothing: the workload of then is its record. */
    *base = !rc && ch.n ? ch.seg[ch.n - 1].from : 0;
    for (size_t i = ch.n; !rc && i-- > 0;)
        if (ch.seg[i].to > ch.seg[i].from)
            rc = sim_log_each(s, ch.seg[i].from, ch.seg[i].to - ch.seg[i].from, collect_id, ops, err);
    sim_chain_free(&ch);
    if (rc == RINGSIM_ENOMEM)
        rs_fail(err, rc, "out of memory");
    return rc;
}

typedef struct exporter {
    sim *s;
    sbuf b;
    place_config cfg; /* the configuration so far */
    const idlist *ops;
    json_t *names; /* the nodes so far, by name: an import removes them first */
} exporter;

static int put_word(exporter *x, const char *w, size_t n)
{
    int rc = sb_add(&x->b, " ", 1);
    return rc ? rc : scenario_quote(&x->b.p, &x->b.n, &x->b.cap, w, n);
}

/* One --param NAME=VALUE of a workload (VALUE: text, a number, or JSON). */
static int put_param(exporter *x, const char *prefix, const char *k, const json_t *v)
{
    char num[40];
    if (json_is_number(v))
        num_text(num, json_number_value(v));
    char *val = json_is_string(v)   ? strdup(json_string_value(v))
                : json_is_number(v) ? strdup(num)
                                    : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *word = NULL;
    if (val && asprintf(&word, "%s%s=%s", prefix, k, val) < 0)
        word = NULL;
    int rc = word ? 0 : RINGSIM_ENOMEM;
    if (!rc)
        rc = sb_str(&x->b, " --param");
    if (!rc)
        rc = put_word(x, word, strlen(word));
    free(val);
    free(word);
    return rc;
}

/* "workload KIND --param NAME=VALUE... --param sizes.NAME=VALUE...": the
 * whole workload (its parameters are the operation's). */
static int put_workload(exporter *x, const json_t *p)
{
    json_t *kind = json_object_get(p, "kind"), *sizes = json_object_get(p, "sizes"), *v;
    int rc = sb_str(&x->b, "workload");
    if (!rc)
        rc = put_word(x, json_string_value(kind) ? json_string_value(kind) : "uniform",
                      json_string_value(kind) ? json_string_length(kind) : 7);
    const char *k;
    json_object_foreach((json_t *)p, k, v)
    {
        if (!rc && strcmp(k, "kind") && strcmp(k, "sizes"))
            rc = put_param(x, "", k, v);
    }
    json_object_foreach(sizes, k, v)
    {
        if (!rc)
            rc = put_param(x, "sizes.", k, v);
    }
    return rc;
}

/* The parameters of other algorithms that cfg remembers (a switch keeps
 * them, and so does a reset: ring's points_per_node set before a switch to
 * ketama), where they differ from the defaults: each set first under the
 * first algorithm of the catalogue that takes it, one line per algorithm,
 * before anything is placed (the start of the file).  `config` refuses a
 * parameter the algorithm does not take, so the line for cfg's own
 * algorithm cannot carry them. */
static int put_remembered(exporter *x, const place_config *cfg)
{
    place_config def;
    place_config_default(&def);
    json_t *now = place_config_json(cfg, true), *dj = place_config_json(&def, true);
    json_t *cat = place_algorithms_json();
    int rc = now && dj && cat ? 0 : RINGSIM_ENOMEM;
    size_t i;
    json_t *a;
    json_array_foreach(cat, i, a)
    {
        const char *alg = json_string_value(json_object_get(a, "name"));
        bool open = false;
        size_t j;
        json_t *pj;
        json_array_foreach(json_object_get(a, "params"), j, pj)
        {
            const char *k = json_string_value(json_object_get(pj, "name"));
            json_t *v = json_object_get(json_object_get(now, "params"), k);
            rs_error e;
            if (rc || !v || json_equal(v, json_object_get(json_object_get(dj, "params"), k)) ||
                !view_param_check(cfg->algorithm, k, strlen(k), &e))
                continue; /* the default, or cfg's own: its line sets it */
            /* The first algorithm that takes it (an earlier line set it). */
            bool earlier = false;
            for (size_t b = 0; b < i && !earlier; b++) {
                const char *ob = json_string_value(json_object_get(json_array_get(cat, b), "name"));
                earlier = !view_param_check(ob, k, strlen(k), &e);
            }
            if (earlier)
                continue;
            if (!open && !(rc = sb_str(&x->b, "config --algorithm")))
                rc = put_word(x, alg, strlen(alg));
            open = true;
            if (!rc)
                rc = json_is_string(v)
                         ? sb_printf(&x->b, " --param %s=%s", k, json_string_value(v))
                         : sb_printf(&x->b, " --param %s=%lld", k, (long long)json_integer_value(v));
        }
        if (!rc && open)
            rc = sb_str(&x->b, " --replicas 1\n");
    }
    json_decref(now);
    json_decref(dj);
    json_decref(cat);
    return rc;
}

/* "config --algorithm A --param ... --replicas R": every parameter of A
 * when all (after the other algorithms' remembered ones), else those that
 * differ from x->cfg. */
static int put_config(exporter *x, const place_config *cfg, bool all)
{
    if (all) {
        int r = put_remembered(x, cfg);
        if (r)
            return r;
    }
    json_t *now = place_config_json(cfg, true), *was = place_config_json(&x->cfg, true);
    int rc = now && was ? sb_str(&x->b, "config --algorithm") : RINGSIM_ENOMEM;
    if (!rc)
        rc = put_word(x, cfg->algorithm, strlen(cfg->algorithm));
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(now, "params"), k, v)
    {
        json_int_t a = json_integer_value(v);
        if (rc || (!all && json_equal(v, json_object_get(json_object_get(was, "params"), k))))
            continue;
        /* Only the algorithm's own parameters: `config` refuses the others
         * (docs/api.md v3).  The others stay as the earlier lines set them. */
        rs_error e;
        if ((rc = view_param_check(cfg->algorithm, k, strlen(k), &e)) == RINGSIM_EPARAM) {
            rc = 0;
            continue;
        }
        if (json_is_string(v)) /* a choice by name (twemproxy's hash) */
            rc = sb_printf(&x->b, " --param %s=%s", k, json_string_value(v));
        else
            rc = sb_printf(&x->b, " --param %s=%lld", k, (long long)a);
    }
    if (!rc && (all || cfg->replicas != x->cfg.replicas))
        rc = sb_printf(&x->b, " --replicas %u", cfg->replicas);
    if (!rc)
        rc = sb_str(&x->b, "\n");
    json_decref(now);
    json_decref(was);
    x->cfg = *cfg;
    return rc;
}

typedef struct keyscan {
    const char *key;
    size_t len;
    bool found;
    exporter *x;
    bool dashes; /* some key starts with '-' */
} keyscan;

static int scan_key(void *ud, const char *k, size_t n)
{
    keyscan *ks = ud;
    if (n == ks->len && memcmp(k, ks->key, n) == 0) {
        ks->found = true;
        return 1; /* stop */
    }
    return 0;
}

static int dash_key(void *ud, const char *k, size_t n)
{
    (void)n;
    ((keyscan *)ud)->dashes |= k[0] == '-';
    return 0;
}

static int emit_key(void *ud, const char *k, size_t n)
{
    return put_word(((keyscan *)ud)->x, k, n);
}

/* Whether generate {prefix, start, count} made key. */
static bool generated(const sim_op_params *p, const char *key, size_t len)
{
    size_t pl = p->prefix.len;
    if (len <= pl || memcmp(key, p->prefix.s, pl) != 0)
        return false;
    const char *d = key + pl;
    size_t dl = len - pl;
    if (dl > 19 || (d[0] == '0' && dl > 1))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < dl; i++) {
        if (d[i] < '0' || d[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(d[i] - '0');
    }
    return v >= p->start && v - p->start < p->count;
}

/* Whether key existed right before the recipe's operation i: the last
 * earlier operation that names it decides (an insert made or kept it, a
 * delete removed it).  Only asked of one-key inserts, which a scenario
 * writes as `key add KEY` -- refused when KEY exists, where the API's
 * {"keys": [KEY]} skipped it. */
static int existed_before(exporter *x, size_t i, const char *key, size_t len, bool *existed,
                          rs_error *err)
{
    sim *st = x->s;
    *existed = false;
    while (i-- > 0) {
        sim_op o;
        int rc = sim_log_get(st, x->ops->v[i], &o, err);
        if (rc)
            return rc;
        sim_op_type type = sim_op_type_of(o.type);
        bool ins = type == SIM_OP_INSERT_KEYS, del = type == SIM_OP_DELETE_KEYS;
        sim_op_params p;
        keyscan ks = {key, len, false, x, false};
        if ((ins || del) && !(rc = sim_op_params_read(&o, &p, err))) {
            if (p.generated)
                ks.found = generated(&p, key, len);
            else
                rc = sim_log_keys(st, o.id, scan_key, &ks, err);
            sim_op_params_clear(&p);
        }
        sim_op_clear(&o);
        if (rc < 0)
            return rc;
        if (ks.found) {
            *existed = ins;
            return 0;
        }
    }
    return 0;
}

typedef struct first_key {
    char *k;
    size_t len;
} first_key;

static int take_first(void *ud, const char *k, size_t n)
{
    first_key *f = ud;
    if (!(f->k = strndup(k, n)))
        return RINGSIM_ENOMEM;
    f->len = n;
    return 1; /* stop */
}

/* "node add [--weight W] [--tokens T,…] [--id N] [--backup] [--down] NAME",
 * without its newline. */
static int put_node_add(exporter *x, const sim_node_spec *nd)
{
    int rc = sb_str(&x->b, "node add");
    if (!rc && nd->weight != 1) {
        char t[40];
        num_text(t, nd->weight);
        rc = sb_printf(&x->b, " --weight %s", t);
    }
    for (size_t k = 0; !rc && k < nd->ntokens; k++)
        rc = sb_printf(&x->b, "%s%lld", k ? "," : " --tokens ", (long long)nd->tokens[k]);
    if (!rc && nd->srv_id) /* HAProxy's server id */
        rc = sb_printf(&x->b, " --id %lld", (long long)nd->srv_id);
    /* A node added down or as a backup (import); a Redis master's
     * replicas have no option and are not written. */
    if (!rc && nd->backup)
        rc = sb_str(&x->b, " --backup");
    if (!rc && nd->down)
        rc = sb_str(&x->b, " --down");
    if (!rc && nd->name[0] == '-')
        rc = sb_str(&x->b, " --");
    return rc ? rc : put_word(x, nd->name, nd->len);
}

static int put_node_rm(exporter *x, const char *nm, size_t nl)
{
    int rc = sb_str(&x->b, nm[0] == '-' ? "node rm --" : "node rm");
    return rc ? rc : put_word(x, nm, nl);
}

static void forget_name(exporter *x, const char *nm, size_t nl)
{
    for (size_t k = 0; k < json_array_size(x->names); k++) {
        json_t *v = json_array_get(x->names, k);
        if (json_string_length(v) == nl && memcmp(json_string_value(v), nm, nl) == 0) {
            json_array_remove(x->names, k);
            return;
        }
    }
}

/* An import (docs/api.md "Import a real cluster") as the lines that rebuild
 * what it left: its nodes replace the current ones, so those leave first;
 * then the configuration it set and its nodes in the text's order, with
 * their weights, tokens, ids and states.  A slot map (Redis) has no such
 * lines: refused, naming the way out. */
static int put_import(exporter *x, const sim_op *o, const json_t *params, rs_error *err)
{
    place_config cfg;
    int rc = sim_op_config(o, &cfg, err);
    if (rc)
        return rc;
    if (place_slot_count(cfg.algorithm))
        return rs_fail(err, RINGSIM_EPARAM,
                       "operation %lld is an import (%s): its slot map cannot be written as "
                       "scenario lines; write the nodes with `ringsim export --config "
                       "redis-nodes` instead",
                       (long long)o->id, o->subject ? o->subject : "");
    rc = sb_printf(&x->b, "# operation %lld imported %s: its nodes replace the others\n",
                   (long long)o->id, o->subject ? o->subject : "a cluster");
    while (!rc && json_array_size(x->names)) {
        json_t *v = json_array_get(x->names, 0);
        rc = put_node_rm(x, json_string_value(v), json_string_length(v));
        if (!rc)
            rc = sb_str(&x->b, "\n");
        json_array_remove(x->names, 0);
    }
    if (!rc)
        rc = put_config(x, &cfg, false);
    const json_t *nodes = json_object_get(params, "nodes");
    for (size_t k = 0; !rc && k < json_array_size(nodes); k++) {
        sim_node_spec sp;
        int64_t *tok = NULL;
        const char **rep = NULL;
        rc = sim_node_spec_from_json(json_array_get(nodes, k), &sp, &tok, &rep);
        if (rc == RINGSIM_EDB)
            rs_fail(err, rc, "operation %lld has unreadable parameters", (long long)o->id);
        if (!rc)
            rc = put_node_add(x, &sp);
        if (!rc)
            rc = sb_str(&x->b, "\n");
        if (!rc && json_array_append_new(x->names, json_stringn(sp.name, sp.len)))
            rc = RINGSIM_ENOMEM;
        free(tok);
        free(rep);
    }
    return rc;
}

static int put_op(exporter *x, size_t i, rs_error *err)
{
    sim *st = x->s;
    sim_op o;
    int rc = sim_log_get(st, x->ops->v[i], &o, err);
    if (rc)
        return rc;
    sim_op_params p;
    if ((rc = sim_op_params_read(&o, &p, err))) {
        sim_op_clear(&o);
        return rc;
    }
    const sim_node_spec *nd = &p.node;
    const char *nm = nd->name;
    size_t nl = nd->len;
    sim_op_type type = p.type;
    if (type == SIM_OP_ADD_NODE) {
        rc = put_node_add(x, nd);
        if (!rc && json_array_append_new(x->names, json_stringn(nm, nl)))
            rc = RINGSIM_ENOMEM;
    } else if (type == SIM_OP_SET_STATE) {
        rc = sb_str(&x->b, nd->down ? (nm[0] == '-' ? "node down --" : "node down")
                                    : (nm[0] == '-' ? "node up --" : "node up"));
        if (!rc)
            rc = put_word(x, nm, nl);
    } else if (type == SIM_OP_REMOVE_NODE) {
        rc = put_node_rm(x, nm, nl);
        forget_name(x, nm, nl);
    } else if (type == SIM_OP_SET_WEIGHT) {
        char t[40];
        num_text(t, nd->weight);
        rc = sb_str(&x->b, nm[0] == '-' ? "node weight --" : "node weight");
        if (!rc)
            rc = put_word(x, nm, nl);
        if (!rc)
            rc = sb_printf(&x->b, " %s", t);
    } else if (type == SIM_OP_INSERT_KEYS && p.generated) {
        rc = sb_printf(&x->b, "key gen %llu", (unsigned long long)p.count);
        if (!rc && (p.prefix.len != 4 || memcmp(p.prefix.s, "key-", 4) != 0)) {
            rc = sb_str(&x->b, " --prefix");
            if (!rc)
                rc = put_word(x, p.prefix.s, p.prefix.len);
        }
        /* Always: the default start depends on what was generated before. */
        if (!rc)
            rc = sb_printf(&x->b, " --start %llu", (unsigned long long)p.start);
    } else if (type == SIM_OP_INSERT_KEYS || type == SIM_OP_DELETE_KEYS) {
        bool ins = type == SIM_OP_INSERT_KEYS;
        keyscan ks = {NULL, 0, false, x, false};
        rc = sim_log_keys(st, o.id, dash_key, &ks, err);
        if (!rc && ins && p.keys == 1) {
            /* one key: `key add KEY` is refused when KEY exists */
            first_key fk = {NULL, 0};
            rc = sim_log_keys(st, o.id, take_first, &fk, err);
            if (rc > 0) /* stopped at the first */
                rc = 0;
            bool existed = false;
            if (!rc && fk.k)
                rc = existed_before(x, i, fk.k, fk.len, &existed, err);
            free(fk.k);
            if (!rc && existed) {
                rc = sb_printf(&x->b, "# operation %lld inserted nothing: its key existed",
                               (long long)o.id);
                goto done;
            }
        }
        if (!rc)
            rc = sb_str(&x->b, ins ? "key add" : "key rm");
        if (!rc && ks.dashes)
            rc = sb_str(&x->b, " --");
        if (!rc)
            rc = sim_log_keys(st, o.id, emit_key, &ks, err);
    } else if (type == SIM_OP_CONFIGURE) {
        place_config cfg;
        if (!(rc = sim_op_config(&o, &cfg, err)))
            rc = put_config(x, &cfg, false);
        goto out; /* put_config ends its line */
    } else if (type == SIM_OP_WORKLOAD) {
        rc = put_workload(x, p.json);
    } else if (type == SIM_OP_IMPORT) {
        rc = put_import(x, &o, p.json, err);
        goto out; /* put_import ends its lines */
    } else {
        rc = rs_fail(err, RINGSIM_EDB, "operation %lld (%s) cannot be exported", (long long)o.id,
                     o.type);
    }
done:
    if (!rc)
        rc = sb_str(&x->b, "\n");
out:
    sim_op_params_clear(&p);
    sim_op_clear(&o);
    if (rc == RINGSIM_ENOMEM || rc == RINGSIM_EINTERNAL)
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    return rc;
}

/* Whether one of the exported operations sets a workload. */
static int sets_workload(exporter *x, bool *yes, rs_error *err)
{
    *yes = false;
    for (size_t i = 0; !*yes && i < x->ops->n; i++) {
        sim_op o;
        int rc = sim_log_get(x->s, x->ops->v[i], &o, err);
        if (rc)
            return rc;
        *yes = sim_op_type_of(o.type) == SIM_OP_WORKLOAD;
        sim_op_clear(&o);
    }
    return 0;
}

/* The line after the configuration: the workload the first operation ran
 * under.  A `keys` workload lists keys the reset cleared (`workload`
 * refuses keys that are not stored): then `workload uniform` here, and the
 * listed one at the end (*later) unless an operation sets another. */
static int start_workload(exporter *x, const json_t *w, bool *later, rs_error *err)
{
    *later = false;
    const char *kind = json_string_value(json_object_get(w, "kind"));
    json_t *def = NULL; /* the default, as the log's start has it */
    int rc = sim_workload_after(x->s, 0, &def, err);
    bool is_default = !rc && json_equal(def, (json_t *)w);
    json_decref(def);
    bool keys = kind && !strcmp(kind, "keys");
    if (!rc && keys && (rc = sets_workload(x, later, err)) == 0)
        *later = !*later;
    if (!rc)
        rc = is_default || keys ? sb_str(&x->b, "workload uniform") : put_workload(x, w);
    return rc ? rc : sb_str(&x->b, "\n");
}

/* The `keys` workload start_workload put off, before the expect lines:
 * written when the state stores every key it lists, else said why not. */
static int end_workload(exporter *x, sim *state, const json_t *w)
{
    const json_t *keys = json_object_get(w, "keys"), *e;
    size_t i, missing = 0;
    json_array_foreach(keys, i, e)
    {
        const json_t *k = json_object_get(e, "key");
        uint32_t pos;
        const char *node;
        size_t nl;
        rs_error ke = {0, ""};
        if (sim_key_get(state, json_string_value(k), json_string_length(k), &pos, &node, &nl, &ke))
            missing++;
    }
    if (missing)
        return sb_printf(&x->b,
                         "# the workload in force lists %zu key%s this state does not store: "
                         "`workload` cannot set it again\n",
                         missing, missing == 1 ? "" : "s");
    int rc = put_workload(x, w);
    return rc ? rc : sb_str(&x->b, "\n");
}

int scenario_export(sim *s, int64_t at, char **text, size_t *len, rs_error *err)
{
    *text = NULL;
    *len = 0;
    int rc = sim_refresh(s, NULL, err);
    if (rc)
        return rc;
    sim *st = s;
    /* One read snapshot: the history cannot change under the walk. */
    if ((rc = sim_read_begin(st, err)))
        return rc;
    int64_t last = 0;
    idlist ops = {0};
    place_config start;
    exporter x = {s, {0}, {{0}, {0}, 0}, &ops, json_array()};
    if (!x.names) {
        sim_read_end(st);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    rc = sim_log_last(st, &last, err);
    if (!rc && at > last)
        rc = rs_fail(err, RINGSIM_ENOTFOUND, "operation %lld not found", (long long)at);
    if (!rc && at >= 0)
        last = at;
    int64_t base = 0;
    if (!rc)
        rc = recipe(s, last, &ops, &start, &base, err);
    if (!rc)
        rc = sb_printf(&x.b,
                       "# The state after operation %lld\n"
                       "#\n"
                       "# Exported by `ringsim export --scenario`: the operations this state "
                       "stands on,\n"
                       "# oldest first, each one line.  What a reset cleared or a revert undid "
                       "is left\n"
                       "# out (the history keeps it); running this file (`ringsim run FILE`) "
                       "on any\n"
                       "# database rebuilds the same nodes, keys, configuration and workload.\n\n"
                       "reset\n",
                       (long long)last);
    /* Configurations set before any node or key only set the configuration
     * (there is nothing to place): they fold into the first line. */
    size_t first = 0;
    for (; !rc && first < ops.n; first++) {
        sim_op o;
        if ((rc = sim_log_get(st, ops.v[first], &o, err)))
            break;
        bool cfg = sim_op_type_of(o.type) == SIM_OP_CONFIGURE;
        if (cfg)
            rc = sim_op_config(&o, &start, err);
        sim_op_clear(&o);
        if (!cfg)
            break;
    }
    if (!rc) {
        x.cfg = start;
        rc = put_config(&x, &start, true);
    }
    /* The workload in force at the start (a reset keeps it): written, the
     * default too, since `reset` on another database keeps that one's. */
    json_t *wl0 = NULL;
    bool keys_later = false;
    if (!rc)
        rc = sim_workload_after(st, base, &wl0, err);
    sim_op o1; /* unless the first operation sets one (the export of a copy) */
    bool set_first = false;
    if (!rc && first < ops.n && !(rc = sim_log_get(st, ops.v[first], &o1, err))) {
        set_first = sim_op_type_of(o1.type) == SIM_OP_WORKLOAD;
        sim_op_clear(&o1);
    }
    if (!rc && !set_first)
        rc = start_workload(&x, wl0, &keys_later, err);
    for (size_t i = first; !rc && i < ops.n; i++)
        rc = put_op(&x, i, err);
    sim_read_end(st);
    if (!rc) {
        /* The state's counts close the file: the past one from a replay. */
        sim *past = NULL;
        int64_t now = 0;
        rc = sim_log_last(st, &now, err);
        if (!rc && last != now)
            rc = sim_at(s, last, &past, err);
        sim_stats ss;
        if (!rc && keys_later)
            rc = end_workload(&x, past ? past : s, wl0);
        if (!rc) {
            sim_stats_get(past ? past : s, &ss);
            rc = sb_printf(&x.b, "\nexpect nodes == %lld\nexpect keys == %lld\n",
                           (long long)ss.nodes, (long long)ss.keys);
        }
        sim_close(past);
    }
    free(ops.v);
    json_decref(wl0);
    json_decref(x.names);
    if (rc) {
        free(x.b.p);
        if (rc == RINGSIM_ENOMEM || rc == RINGSIM_EINTERNAL || !err->msg[0])
            rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return rc == RINGSIM_EINTERNAL ? RINGSIM_ENOMEM : rc;
    }
    *text = x.b.p;
    *len = x.b.n;
    return 0;
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
