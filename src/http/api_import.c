/*
 * api_import.c - the import routes (see api_import.h).
 */
#include "api_import.h"

#include <stdlib.h>
#include <string.h>

#include "export_config.h"
#include "import_face.h"

/* The body's fields: text (a string), format and name (strings, may be
 * absent). */
static int body_fields(const json_t *body, const char **format, const char **text, size_t *len,
                       const char **name, rs_error *err)
{
    if (!json_is_object(body))
        return rs_fail(err, RINGSIM_EJSON, "the body must be a JSON object");
    json_t *t = json_object_get(body, "text"), *f = json_object_get(body, "format");
    json_t *n = json_object_get(body, "name");
    if (!json_is_string(t))
        return rs_fail(err, RINGSIM_EPARAM,
                       "text must be the configuration or status text, as a JSON string");
    if (f && !json_is_string(f))
        return rs_fail(err, RINGSIM_EPARAM, "format must be a string (or absent: auto)");
    if (n && !json_is_null(n) && !json_is_string(n))
        return rs_fail(err, RINGSIM_EPARAM, "name must be a string");
    if (f && strlen(json_string_value(f)) != json_string_length(f))
        return rs_fail(err, RINGSIM_EPARAM, "format must not contain NUL");
    if (json_is_string(n) && strlen(json_string_value(n)) != json_string_length(n))
        return rs_fail(err, RINGSIM_EPARAM, "name must not contain NUL");
    *format = f ? json_string_value(f) : NULL;
    *text = json_string_value(t);
    *len = json_string_length(t);
    *name = json_is_string(n) && json_string_length(n) ? json_string_value(n) : NULL;
    return 0;
}

/* A refused text: 400 invalid_import with its line. */
static int refused(int rc, int line, json_t **out, const rs_error *err)
{
    if (rc != RINGSIM_EIMPORT)
        return rc;
    *out = api_error_body(rc, err->msg);
    json_object_set_new(json_object_get(*out, "error"), "line", json_integer(line));
    return ringsim_status(rc);
}

static int run(sim *s, const json_t *body, bool preview, json_t **out, rs_error *err)
{
    const char *format = NULL, *text = NULL, *name = NULL;
    size_t len = 0;
    import_result *r = NULL;
    int line = 0;
    int rc = body_fields(body, &format, &text, &len, &name, err);
    if (!rc)
        rc = import_face_parse(format, text, len, name, &r, &line, err);
    if (rc) {
        import_free(r);
        return refused(rc, line, out, err);
    }
    *out = preview ? import_face_preview(s, r, &line, err) : import_face_apply(s, r, &line, err);
    import_free(r);
    if (!*out)
        return refused(err->code, line, out, err);
    return preview ? 200 : 201;
}

int api_post_import(sim *s, const api_request *r, json_t **out, rs_error *err)
{
    if (r->body_error)
        return rs_fail(err, r->body_error, "%s", r->body_msg);
    return run(s, r->body, false, out, err);
}

int api_preview_import(sim *s, const json_t *body, json_t **out, rs_error *err)
{
    return run(s, body, true, out, err);
}

int api_export_config(sim *s, const api_request *r, api_answer *a, rs_error *err)
{
    const char *format = NULL;
    for (int i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].name, "format"))
            format = strlen(r->params[i].value) == r->params[i].len ? r->params[i].value : "";
    if (!format)
        return rs_fail(
            err, RINGSIM_EPARAM,
            "format= is missing: /api/export/config?format=F, F one of " EXPORT_CONFIG_FORMATS);
    int rc = export_config(s, format, &a->text, &a->text_len, err);
    if (rc)
        return rc;
    a->content_type = "text/plain; charset=utf-8";
    return 200;
}
