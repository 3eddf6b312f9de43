/*
 * import_tool.c - what ringsim makes of a real system's text, for the
 * reference tests tests/ref/import_*.
 *
 * import_tool FORMAT NAME TEXTFILE [KEYSFILE]
 *   FORMAT  an import format or "auto"; NAME the section, or "-" for none.
 *   Without KEYSFILE: prints the import object (import_result_json).
 *   With it: places each key (one per line, raw bytes) on the imported
 *   nodes with the imported algorithm and prints the owner's name, one per
 *   line.  For redis-nodes the owner is the master whose imported slot
 *   ranges hold the key's slot ("-" when none does).
 * Exit 0, or 1 with a message (a refusal prints "line N: message").
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_redis.h"
#include "hash.h"
#include "import.h"
#include "place.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap + 1);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: import_tool FORMAT NAME TEXTFILE [KEYSFILE]\n");
        return 2;
    }
    rs_error err = {0};
    import_format fmt;
    if (import_format_parse(argv[1], &fmt, &err) != 0) {
        fprintf(stderr, "import_tool: %s\n", err.msg);
        return 1;
    }
    size_t len;
    char *text = slurp(argv[3], &len);
    if (text == NULL) {
        fprintf(stderr, "import_tool: cannot read %s\n", argv[3]);
        return 1;
    }
    import_result *r = NULL;
    int line = 0;
    int rc = import_parse(text, len, fmt, strcmp(argv[2], "-") ? argv[2] : NULL, &r, &line, &err);
    free(text);
    if (rc != 0) {
        printf("line %d: %s\n", line, err.msg);
        return 1;
    }
    if (argc < 5) {
        json_t *j = import_result_json(r);
        char *s = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        puts(s ? s : "null");
        free(s);
        json_decref(j);
        import_free(r);
        return 0;
    }
    FILE *keys = fopen(argv[4], "rb");
    if (keys == NULL) {
        fprintf(stderr, "import_tool: cannot read %s\n", argv[4]);
        import_free(r);
        return 1;
    }
    size_t n = import_node_count(r);
    char *kl = NULL;
    size_t kcap = 0;
    ssize_t kn;
    rc = 1;
    placement *p = NULL;
    place_node *nodes = calloc(n, sizeof *nodes);
    hasher *h = hasher_new();
    if (nodes == NULL || h == NULL)
        goto out;
    bool redis = strcmp(import_result_algorithm(r), "redis") == 0;
    if (!redis) {
        place_config cfg;
        place_config_default(&cfg);
        snprintf(cfg.algorithm, sizeof cfg.algorithm, "%s", import_result_algorithm(r));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)import_result_params(r), k, v)
        {
            char val[64];
            if (json_is_integer(v))
                snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
            else
                snprintf(val, sizeof val, "%s", json_string_value(v) ? json_string_value(v) : "");
            if (place_config_set_param(&cfg, k, val, &err) != 0)
                fprintf(stderr, "import_tool: param %s not taken: %s\n", k, err.msg);
        }
        for (size_t i = 0; i < n; i++) {
            const import_node *in = import_node_at(r, i);
            nodes[i] = (place_node){.id = (int64_t)i + 1,
                                    .name = in->name,
                                    .len = in->len,
                                    .weight = in->weight,
                                    .tokens = in->tokens,
                                    .ntokens = in->ntokens,
                                    .srv_id = in->id};
        }
        if (place_build(&p, h, &cfg, nodes, n, NULL, NULL, &err) != 0) {
            fprintf(stderr, "import_tool: %s\n", err.msg);
            goto out;
        }
    }
    while ((kn = getline(&kl, &kcap, keys)) >= 0) {
        if (kn > 0 && kl[kn - 1] == '\n')
            kl[--kn] = '\0';
        const char *owner = "-";
        if (redis) {
            uint16_t slot = redis_slot(kl, (size_t)kn);
            for (size_t i = 0; i < n; i++) {
                const import_node *in = import_node_at(r, i);
                for (size_t j = 0; j < in->nslots; j++)
                    if (slot >= in->slots[j].first && slot <= in->slots[j].last)
                        owner = in->name;
            }
        } else {
            place_key_info ki;
            place_key(p, h, kl, (size_t)kn, &ki);
            if (ki.owner >= 0)
                owner = import_node_at(r, (size_t)ki.owner)->name;
        }
        puts(owner);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    free(kl);
    fclose(keys);
    place_free(p);
    hasher_free(h);
    free(nodes);
    import_free(r);
    return rc;
}
