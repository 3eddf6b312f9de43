/*
 * fuzz_import.h - the check every import fuzz target runs (one per format,
 * fuzz/fuzz_import_<format>.c), header-only.
 */
#ifndef RINGSIM_FUZZ_IMPORT_H
#define RINGSIM_FUZZ_IMPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "names.h"

static int fuzz_import_one(import_format fmt, const uint8_t *data, size_t size)
{
    const char *name = NULL;
    char buf[64];
    if (size > 0 && data[0] == '@') { /* "@name\n" then the text */
        const uint8_t *nl = memchr(data, '\n', size);
        if (nl != NULL && (size_t)(nl - data) < sizeof buf) {
            memcpy(buf, data + 1, (size_t)(nl - data) - 1);
            buf[nl - data - 1] = '\0';
            name = buf;
            size -= (size_t)(nl - data) + 1;
            data = nl + 1;
        }
    }
    import_result *r = NULL;
    int line = -1;
    rs_error err = {0};
    int rc = import_parse((const char *)data, size, fmt, name, &r, &line, &err);
    if (rc != 0) {
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n';
        if (r != NULL || err.msg[0] == '\0' || line < 0 || (size_t)line > lines)
            abort();
        return 0;
    }
    size_t n = import_node_count(r);
    if (n == 0 || n > IMPORT_MAX_NODES)
        abort();
    for (size_t i = 0; i < n; i++) {
        const import_node *nd = import_node_at(r, i);
        if (name_check(nd->name, nd->len, "node", NULL) != 0 || strlen(nd->name) != nd->len)
            abort();
    }
    json_t *j = import_result_json(r);
    char *s = json_dumps(j, 0);
    if (j == NULL || s == NULL)
        abort();
    free(s);
    json_decref(j);
    import_free(r);
    return 0;
}

#endif
