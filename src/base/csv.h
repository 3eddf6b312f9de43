/*
 * csv.h - RFC 4180 CSV from the API's JSON objects.
 *
 * The exports (`?format=csv`, `--csv`) print the same objects as the JSON
 * answers (view.c owns their shape), one object a row: a header row of the
 * field names, then one record per object.  Strings are written as they are
 * (UTF-8), null as an empty field, numbers and booleans as JSON writes them,
 * nested lists and objects as their compact JSON text in one field.  A field
 * holding a comma, a double quote, CR or LF is quoted, its quotes doubled;
 * every record ends with CRLF.  A text field that a spreadsheet would take
 * for a formula (it starts with = + - @ TAB or CR) is defused with a leading
 * ' (OWASP's advice), and so is one that starts with ' itself: reading back,
 * drop one leading ' from a field that has it.  Plain decimal numbers
 * ("-42", a signed token) are left as they are.
 *
 * Rows stream through a sink, so a million keys never sit in memory at once;
 * the header is the first row's fields (every row of one answer has the same
 * shape).  Costs: linear in the bytes written.
 */
#ifndef RINGSIM_CSV_H
#define RINGSIM_CSV_H

#include <jansson.h>
#include <stddef.h>

/* Receives the bytes of the document in order; nonzero stops the writer
 * (that value is returned by csv_row). */
typedef int (*csv_sink)(void *ud, const char *data, size_t len);

typedef struct csv_writer {
    csv_sink sink;
    void *ud;
    json_t *fields; /* field names of the header, once written (owned) */
} csv_writer;

/* Start a document; cannot fail. */
void csv_init(csv_writer *w, csv_sink sink, void *ud);
/* Write one object as a record (the header first, on the first call).
 * Fields of the header that the row lacks are empty.  0, the sink's
 * nonzero value, or RINGSIM_ENOMEM / RINGSIM_EPARAM (not an object). */
int csv_row(csv_writer *w, const json_t *row);
/* Free what the writer holds; accepts a writer never used. */
void csv_close(csv_writer *w);

/* The whole document for an array of objects, as a malloc'd NUL-terminated
 * string (*len its length, may be NULL); the header holds every field that
 * any row has, in the order they first appear.  An empty array gives an
 * empty document.  NULL when out of memory or rows is not an array of
 * objects. */
char *csv_from_rows(const json_t *rows, size_t *len);

/* A sink that writes to a FILE * (ud). */
int csv_file_sink(void *ud, const char *data, size_t len);

#endif
