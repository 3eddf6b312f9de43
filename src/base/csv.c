/*
 * csv.c - RFC 4180 CSV from JSON objects (see csv.h).
 */
#include "csv.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sbuf.h"

void csv_init(csv_writer *w, csv_sink sink, void *ud)
{
    w->sink = sink;
    w->ud = ud;
    w->fields = NULL;
}

void csv_close(csv_writer *w)
{
    json_decref(w->fields);
    w->fields = NULL;
}

/* One field: quoted when it holds a comma, a quote, CR or LF. */
static int put_text(csv_writer *w, const char *s, size_t n)
{
    bool quote = false;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote)
        return n ? w->sink(w->ud, s, n) : 0;
    int rc = w->sink(w->ud, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (s[i] != '"')
            continue;
        /* the text up to and including the quote, then the quote again */
        rc = w->sink(w->ud, s + from, i + 1 - from);
        if (!rc)
            rc = w->sink(w->ud, "\"", 1);
        from = i + 1;
    }
    if (!rc && from < n)
        rc = w->sink(w->ud, s + from, n - from);
    return rc ? rc : w->sink(w->ud, "\"", 1);
}

/* Whether a text cell must be defused before a spreadsheet reads it
 * (OWASP, "CSV Injection"): it starts with = + - @ TAB or CR, which a
 * spreadsheet takes for a formula, or with the ' that marks a defused
 * cell, so that dropping one leading ' always gives the text back.  A
 * plain decimal number (a signed token or coordinate: -9223372036854775808)
 * is a number to a spreadsheet, never a formula, and stays as it is. */
static bool formula_like(const char *s, size_t n)
{
    if (!n || !s[0] || !strchr("=+-@\t\r'", s[0]))
        return false;
    if (s[0] != '-' || n == 1)
        return true;
    for (size_t i = 1; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return true;
    return false;
}

static int put_value(csv_writer *w, const json_t *v)
{
    if (!v || json_is_null(v))
        return 0;
    if (json_is_string(v)) {
        const char *t = json_string_value(v);
        size_t n = json_string_length(v);
        if (!formula_like(t, n))
            return put_text(w, t, n);
        /* The defusing ' goes inside the field, quotes and all. */
        char *d = malloc(n + 2);
        if (!d)
            return RINGSIM_ENOMEM;
        d[0] = '\'';
        memcpy(d + 1, t, n);
        int rc = put_text(w, d, n + 1);
        free(d);
        return rc;
    }
    /* numbers, booleans, lists and objects: their compact JSON text */
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    if (!t)
        return RINGSIM_ENOMEM;
    int rc = put_text(w, t, strlen(t));
    free(t);
    return rc;
}

static int put_header(csv_writer *w)
{
    size_t i;
    json_t *f;
    int rc = 0;
    json_array_foreach(w->fields, i, f)
    {
        if (!rc && i)
            rc = w->sink(w->ud, ",", 1);
        if (!rc)
            rc = put_text(w, json_string_value(f), json_string_length(f));
    }
    return rc ? rc : w->sink(w->ud, "\r\n", 2);
}

int csv_row(csv_writer *w, const json_t *row)
{
    if (!json_is_object(row))
        return RINGSIM_EPARAM;
    int rc;
    if (!w->fields) {
        json_t *fields = json_array();
        const char *k;
        json_t *v;
        if (!fields)
            return RINGSIM_ENOMEM;
        json_object_foreach((json_t *)row, k, v)
        {
            if (json_array_append_new(fields, json_string(k))) {
                json_decref(fields);
                return RINGSIM_ENOMEM;
            }
        }
        w->fields = fields;
        if ((rc = put_header(w)))
            return rc;
    }
    size_t i;
    json_t *f;
    json_array_foreach(w->fields, i, f)
    {
        if (i && (rc = w->sink(w->ud, ",", 1)))
            return rc;
        if ((rc = put_value(w, json_object_get(row, json_string_value(f)))))
            return rc;
    }
    return w->sink(w->ud, "\r\n", 2);
}

int csv_file_sink(void *ud, const char *data, size_t len)
{
    return fwrite(data, 1, len, ud) == len ? 0 : RINGSIM_EINTERNAL;
}

static int buf_sink(void *ud, const char *data, size_t len) { return sb_add(ud, data, len); }

char *csv_from_rows(const json_t *rows, size_t *len)
{
    if (!json_is_array(rows))
        return NULL;
    sbuf b = {calloc(1, 1), 0, 1};
    csv_writer w;
    csv_init(&w, buf_sink, &b);
    json_t *fields = json_array(), *row;
    int rc = b.p && fields ? 0 : RINGSIM_ENOMEM;
    size_t i;
    /* The header: every field of every row, in order of first appearance. */
    json_array_foreach(rows, i, row)
    {
        const char *k;
        json_t *v;
        if (!json_is_object(row))
            rc = RINGSIM_EPARAM;
        if (rc)
            break;
        json_object_foreach(row, k, v)
        {
            bool seen = false;
            size_t j;
            json_t *f;
            json_array_foreach(fields, j, f) seen |= strcmp(json_string_value(f), k) == 0;
            if (!seen && json_array_append_new(fields, json_string(k)))
                rc = RINGSIM_ENOMEM;
        }
    }
    if (!rc && json_array_size(rows)) {
        w.fields = fields;
        fields = NULL;
        rc = put_header(&w);
    }
    json_array_foreach(rows, i, row)
    {
        if (rc)
            break;
        rc = csv_row(&w, row);
    }
    json_decref(fields);
    csv_close(&w);
    if (rc) {
        free(b.p);
        return NULL;
    }
    if (len)
        *len = b.n;
    return b.p;
}
