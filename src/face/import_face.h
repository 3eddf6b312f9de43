/*
 * import_face.h - what the faces of import share (docs/api.md, "import a
 * real cluster"): the API (api_import.c) and the command line (`ringsim
 * import`, `ringsim preview import`, in cmd_table) read the text the same
 * way and answer the same JSON.
 */
#ifndef RINGSIM_IMPORT_FACE_H
#define RINGSIM_IMPORT_FACE_H

#include <jansson.h>
#include <stddef.h>

#include "cmd.h"
#include "import.h"
#include "sim.h"

/* Parse text in format (NULL or "auto": recognised) choosing section name
 * (may be NULL).  An unknown format is RINGSIM_EPARAM; a text the real
 * program (or a limit) refuses is RINGSIM_EIMPORT with err->msg "line N:
 * ..." when it names a line, and *line (0: the whole text). */
int import_face_parse(const char *format, const char *text, size_t len, const char *name,
                      import_result **out, int *line, rs_error *err);

/* Import r as one operation: {"operation", "import": {"format", "name",
 * "algorithm", "params", "nodes": [node… in the text's order, with their
 * "line", "state"…], "notes"}}.  What ringsim cannot take from the text is
 * RINGSIM_EIMPORT with *line.  NULL with err on failure (nothing changed). */
json_t *import_face_apply(sim *s, const import_result *r, int *line, rs_error *err);

/* What importing r would do: view_preview's answer plus "import" (the
 * parsed text).  Nothing is recorded. */
json_t *import_face_preview(sim *s, const import_result *r, int *line, rs_error *err);

/* cmd_table's handlers: `import [--format F] [--name N] FILE|-` and
 * `preview import [--format F] [--name N] FILE|-`. */
int import_face_run(cmd_ctx *c);
int import_face_run_preview(cmd_ctx *c);

#endif
