/*
 * cmd_out.h - how the commands print, one floor below their handlers
 * (cmd_int.h draws the floors): the two frames every handler answers
 * through -- a change's answer and a view shown as CSV, JSON or text --
 * numbers written for people, and the lines more than one command prints.
 * cmd_out.c also holds the tables for people that cmd.h declares
 * (cmd_print_padded, cmd_column_width...), since the command line prints
 * with them too.
 *
 * Everything here calls only down: the views, csv.c, names.c.  Printing to
 * a FILE cannot fail as far as these functions know; those that return an
 * int fail only for memory.
 */
#ifndef RINGSIM_CMD_OUT_H
#define RINGSIM_CMD_OUT_H

#ifndef RINGSIM_FACE_INTERNAL
#error "cmd_out.h is the commands' own (src/face/): others use cmd.h"
#endif

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd.h"

/* ---- the frames ---- */

/* The answer of a change (c->op, c->extra): {extra..., "operation"} with
 * --json, else "inserted N keys, skipped M (operation K)" when extra says
 * "inserted", else the operation's line (cmd__print_op).  Nothing when
 * c->out is NULL.  0, or RINGSIM_ENOMEM with c->err. */
int cmd__answer_change(cmd_ctx *c);

/* The frame of a command that shows a view: j (NULL when the view failed,
 * c->err saying why) as CSV of its array `csv` with --csv (csv NULL: the
 * command has no --csv), as JSON with --json, else by text; j is freed. */
int cmd__show(cmd_ctx *c, json_t *j, const char *csv, void (*text)(cmd_ctx *c, json_t *j));

/* j indented as the API answers it, and a newline. */
void cmd__print_json(FILE *out, json_t *j);
/* The array j[member] as CSV (csv.h).  0 or RINGSIM_ENOMEM with err. */
int cmd__print_csv(FILE *out, json_t *j, const char *member, rs_error *err);

/* ---- numbers for people ---- */

/* x in its shortest form that reads back exactly ("1.1", not
 * "1.1000000000000001") into buf (32 bytes are enough); returns buf. */
const char *cmd__shortest(char *buf, size_t size, double x);
/* n with a comma every three digits ("22,385") into buf; returns buf. */
const char *cmd__thousands(char *buf, size_t size, long long n);

/* ---- what the workload makes worth printing ---- */

/* Whether the workload gives keys unequal shares: only then do the tables
 * for people show requests beside keys (with uniform shares they are the
 * key shares). */
bool cmd__skewed(sim *s);
/* Whether the workload gives the keys' value sizes: only then is a byte
 * count more than the keys again (without sizes every key is 1 byte). */
bool cmd__sized(sim *s);

/* ---- lines more than one command prints ---- */

/* An operation's subject, cut to width columns (0: whole); a set_state
 * says which way it went ("alpha up -> down"). */
void cmd__print_subject(FILE *out, json_t *o, size_t width);
/* "operation 4 add_node: echo; 12 keys moved (from bravo 9, charlie 3)";
 * nothing when the operation cannot be read. */
void cmd__print_op(FILE *out, sim *s, int64_t id);
/* The exact (from, to) pairs of a diff or a preview, largest first:
 * "moves by pair:" and "  a -> b  1,234 keys" lines; nothing when none. */
void cmd__print_pairs(FILE *out, json_t *pairs);
/* "WHAT: 1,951 keys (39.0%) have no live replica" (with their share of
 * requests when loads, their bytes when bytes), nothing when none. */
void cmd__print_unavailable(FILE *out, const char *what, json_t *u, bool loads, bool bytes);

#endif
