/*
 * api_import.h - the import routes of the HTTP API (docs/api.md, "import a
 * real cluster"): POST /api/import, POST /api/preview {"op": "import"},
 * GET /api/export/config?format=F.  Called from api.c's dispatch.
 */
#ifndef RINGSIM_API_IMPORT_H
#define RINGSIM_API_IMPORT_H

#include "api.h"

/* POST /api/import {"format"?, "text", "name"?}: 201 {"operation",
 * "import"}; a refused text is 400 invalid_import with "line". */
int api_post_import(sim *s, const api_request *r, json_t **out, rs_error *err);
/* POST /api/preview with "op": "import" (body as above): 200. */
int api_preview_import(sim *s, const json_t *body, json_t **out, rs_error *err);
/* GET /api/export/config?format=F: text/plain. */
int api_export_config(sim *s, const api_request *r, api_answer *a, rs_error *err);

#endif
