/*
 * place_loc.c - a node's location (API.md v4, "failure domains"): the
 * pairs (type, name) from the widest domain to the narrowest, as Ceph
 * writes a CRUSH location ("dc=dc1,rack=r1,host=h1").
 *
 * Every face reads a location through this file, so the rules live once:
 * types and names follow the rules for names (names.h), hold no `=` or
 * `,` (the command line's separators), and a type appears once; at most
 * PLACE_MAX_LOC levels.  Parsing borrows: the pairs point into the text
 * (split in place) or into the JSON.  Costs: linear in the text, and
 * quadratic in the levels for the repeated-type check (16 at most).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "place.h"
#include "sbuf.h"

/* One type or name: the rules for names, then no separator. */
static int part_check(const char *s, size_t len, size_t i, const char *what, rs_error *err)
{
    char label[48];
    snprintf(label, sizeof label, "location[%zu] %s", i, what);
    int rc = name_check(s, len, label, err);
    if (rc)
        return rc;
    if (memchr(s, '=', len) || memchr(s, ',', len))
        return rs_fail(err, RINGSIM_ENAME, "%s \"%.*s\" must not hold \"=\" or \",\"", label,
                       (int)(len > 64 ? 64 : len), s);
    return 0;
}

int place_loc_check(const place_loc *v, size_t n, rs_error *err)
{
    if (n > PLACE_MAX_LOC)
        return rs_fail(err, RINGSIM_EPARAM, "a location has at most %u levels, not %zu",
                       PLACE_MAX_LOC, n);
    for (size_t i = 0; i < n; i++) {
        int rc = part_check(v[i].type, strlen(v[i].type), i, "type", err);
        if (!rc)
            rc = part_check(v[i].name, strlen(v[i].name), i, "name", err);
        if (rc)
            return rc;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(v[k].type, v[i].type))
                return rs_fail(err, RINGSIM_EPARAM,
                               "location: the type \"%.64s\" appears twice (each type once)",
                               v[i].type);
    }
    return 0;
}

int place_loc_parse(char *text, place_loc *v, size_t *n, rs_error *err)
{
    *n = 0;
    if (!*text)
        return 0; /* "": no location */
    for (char *p = text;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(p, '=');
        if (!eq || eq == p || !eq[1])
            return rs_fail(err, RINGSIM_EPARAM,
                           "--location takes TYPE=NAME pairs separated by commas, widest first "
                           "(dc=dc1,rack=r1,host=h1), not \"%.64s\"",
                           p);
        if (*n == PLACE_MAX_LOC)
            return rs_fail(err, RINGSIM_EPARAM, "a location has at most %u levels", PLACE_MAX_LOC);
        *eq = '\0';
        v[(*n)++] = (place_loc){p, eq + 1};
        if (!comma)
            break;
        p = comma + 1;
    }
    return place_loc_check(v, *n, err);
}

int place_loc_from_json(const json_t *j, place_loc *v, size_t *n, rs_error *err)
{
    *n = 0;
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_array(j))
        return rs_fail(err, RINGSIM_EPARAM,
                       "location must be a list of [type, name] pairs, widest first "
                       "([[\"dc\", \"dc1\"], [\"rack\", \"r1\"]])");
    if (json_array_size(j) > PLACE_MAX_LOC)
        return rs_fail(err, RINGSIM_EPARAM, "a location has at most %u levels, not %zu",
                       PLACE_MAX_LOC, json_array_size(j));
    for (size_t i = 0; i < json_array_size(j); i++) {
        json_t *pr = json_array_get(j, i), *t = json_array_get(pr, 0), *nm = json_array_get(pr, 1);
        if (!json_is_array(pr) || json_array_size(pr) != 2 || !json_is_string(t) ||
            !json_is_string(nm))
            return rs_fail(err, RINGSIM_EPARAM,
                           "location[%zu] must be a pair of strings [type, name]", i);
        /* A NUL inside is a control character: refused before strlen. */
        int rc = part_check(json_string_value(t), json_string_length(t), i, "type", err);
        if (!rc)
            rc = part_check(json_string_value(nm), json_string_length(nm), i, "name", err);
        if (rc)
            return rc;
        v[i] = (place_loc){json_string_value(t), json_string_value(nm)};
    }
    *n = json_array_size(j);
    return place_loc_check(v, *n, err);
}

json_t *place_loc_json(const place_loc *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_pack("[s,s]", v[i].type, v[i].name))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

char *place_loc_text(const place_loc *v, size_t n)
{
    if (!n)
        return strdup("");
    sbuf b = {0};
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        rc = i ? sb_str(&b, ",") : 0;
        if (!rc)
            rc = sb_str(&b, v[i].type);
        if (!rc)
            rc = sb_str(&b, "=");
        if (!rc)
            rc = sb_str(&b, v[i].name);
    }
    if (rc) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

const char *place_loc_get(const place_loc *v, size_t n, const char *type)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].type, type))
            return v[i].name;
    return NULL;
}
