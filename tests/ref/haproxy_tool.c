/*
 * haproxy_tool.c - what the HAProxy core answers, for tests/ref/haproxy_ref.py.
 *
 * stdin:  a line with the number of servers N; N lines
 *         "WEIGHT<TAB>ID<TAB>NAME" (configuration order, ID 0 when the
 *         server has none); then one key per line, to the end.
 * stdout: N lines "ID<TAB>NAME", the ids as HAProxy assigns them; then for
 *         each key the name of the server that owns it ("-" when none).
 * Exit status 0, or 1 with a message on stderr.
 *
 * haproxy_tool map: `hash-type map-based` through the placement itself
 * (place_build with hash_type map-based, the nodes' states applied):
 * server lines "WEIGHT<TAB>FLAGS<TAB>NAME", FLAGS "-" or letters b
 * (backup) and d (disabled: down); the line before them "ALLBACKUPS" 0 or
 * 1 after the count ("N<TAB>A").  Answers, per key, the server that
 * serves it, or "-".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_haproxy.h"
#include "hash.h"
#include "place.h"
#include "tool_io.h"

static int map_mode(void)
{
    char *line = NULL;
    size_t cap = 0, n = 0;
    int all = 0, rc = 1;
    char **names = NULL;
    place_node *nodes = NULL;
    placement *p = NULL;
    hasher *h = hasher_new();
    rs_error err = {0};
    if (!h || tool_read_line(&line, &cap, stdin) < 0 || sscanf(line, "%zu\t%d", &n, &all) != 2 ||
        n == 0 || n > 100000) {
        fprintf(stderr, "haproxy_tool map: first line: N<TAB>ALLBACKUPS\n");
        goto out;
    }
    names = calloc(n, sizeof *names);
    nodes = calloc(n, sizeof *nodes);
    if (!names || !nodes)
        goto out;
    for (size_t i = 0; i < n; i++) {
        double w;
        char flags[8];
        int off = 0;
        if (tool_read_line(&line, &cap, stdin) < 0 ||
            sscanf(line, "%lf\t%7[-bd]\t%n", &w, flags, &off) != 2 || !off) {
            fprintf(stderr, "haproxy_tool map: server line %zu: WEIGHT<TAB>FLAGS<TAB>NAME\n", i + 1);
            goto out;
        }
        if (!(names[i] = strdup(line + off)))
            goto out;
        nodes[i] = (place_node){.id = (int64_t)i + 1,
                                .name = names[i],
                                .len = strlen(names[i]),
                                .weight = w,
                                .backup = strchr(flags, 'b') != NULL,
                                .down = strchr(flags, 'd') != NULL};
    }
    place_config cfg;
    place_config_default(&cfg);
    if (place_config_set_param(&cfg, "hash_type", "map-based", &err) ||
        place_config_set_param(&cfg, "allbackups", all ? "1" : "0", &err)) {
        fprintf(stderr, "haproxy_tool map: %s\n", err.msg);
        goto out;
    }
    strcpy(cfg.algorithm, "haproxy");
    if (place_build(&p, h, &cfg, nodes, n, NULL, NULL, &err)) {
        fprintf(stderr, "haproxy_tool map: %s\n", err.msg);
        goto out;
    }
    long len;
    while ((len = tool_read_line(&line, &cap, stdin)) >= 0) {
        place_key_info k;
        place_key(p, h, line, (size_t)len, &k);
        puts(k.served < 0 ? "-" : names[k.served]);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    place_free(p);
    if (names)
        for (size_t i = 0; i < n; i++)
            free(names[i]);
    free(names);
    free(nodes);
    free(line);
    hasher_free(h);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "map") == 0)
        return map_mode();
    char *line = NULL;
    size_t cap = 0, n = 0, np = 0;
    char **names = NULL;
    alg_node *nodes = NULL;
    int64_t *given = NULL;
    uint32_t *ids = NULL;
    alg_point *pts = NULL;
    rs_error err = {0};
    int rc = 1;

    if (tool_read_line(&line, &cap, stdin) < 0 || sscanf(line, "%zu", &n) != 1 || n == 0 ||
        n > 100000) {
        fprintf(stderr, "haproxy_tool: first line: number of servers\n");
        goto out;
    }
    names = calloc(n, sizeof *names);
    nodes = calloc(n, sizeof *nodes);
    given = calloc(n, sizeof *given);
    ids = calloc(n, sizeof *ids);
    if (!names || !nodes || !given || !ids)
        goto out;
    for (size_t i = 0; i < n; i++) {
        double w;
        long long id;
        int off = 0;
        if (tool_read_line(&line, &cap, stdin) < 0 ||
            sscanf(line, "%lf\t%lld\t%n", &w, &id, &off) != 2 || !off) {
            fprintf(stderr, "haproxy_tool: server line %zu: WEIGHT<TAB>ID<TAB>NAME\n", i + 1);
            goto out;
        }
        if (!(names[i] = strdup(line + off)))
            goto out;
        nodes[i] = (alg_node){names[i], strlen(names[i]), w};
        given[i] = id;
    }
    if (haproxy_assign_ids(given, n, ids, &err) || haproxy_build(nodes, ids, n, &pts, &np, &err)) {
        fprintf(stderr, "haproxy_tool: %s\n", err.msg);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        printf("%u\t%s\n", ids[i], names[i]);
    long len;
    while ((len = tool_read_line(&line, &cap, stdin)) >= 0) {
        if (!np) {
            puts("-");
            continue;
        }
        size_t k = haproxy_lookup(pts, np, haproxy_key_hash(line, (size_t)len), NULL, NULL);
        puts(names[pts[k].node]);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    free(pts);
    if (names)
        for (size_t i = 0; i < n; i++)
            free(names[i]);
    free(names);
    free(nodes);
    free(given);
    free(ids);
    free(line);
    return rc;
}
