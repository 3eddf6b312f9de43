/*
 * haproxy_tool.c - what the HAProxy core answers, for tests/ref/haproxy_ref.py.
 *
 * stdin:  a line with the number of servers N; N lines
 *         "WEIGHT<TAB>ID<TAB>NAME" (configuration order, ID 0 when the
 *         server has none); then one key per line, to the end.
 * stdout: N lines "ID<TAB>NAME", the ids as HAProxy assigns them; then for
 *         each key the name of the server that owns it ("-" when none).
 * Exit status 0, or 1 with a message on stderr.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_haproxy.h"
#include "tool_io.h"

int main(void)
{
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
    if (haproxy_assign_ids(given, n, ids, &err) ||
        haproxy_build(nodes, ids, n, &pts, &np, &err)) {
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
