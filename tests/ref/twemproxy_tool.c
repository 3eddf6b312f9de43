/*
 * twemproxy_tool.c - what the twemproxy core answers, for
 * tests/ref/twemproxy_ref.py.
 *
 * stdin:  a line "N HASH" (the number of servers and the pool's hash
 *         name); N lines "WEIGHT<TAB>NAME" (configuration order, NAME as
 *         nutcracker names the server); then one key per line, to the end.
 * stdout: for each key the index (0-based, configuration order) of the
 *         server that owns it, one per line.
 * Exit status 0, or 1 with a message on stderr.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_twemproxy.h"
#include "tool_io.h"

int main(void)
{
    char *line = NULL, hash[32];
    size_t cap = 0, n = 0, np = 0;
    char **names = NULL;
    alg_node *nodes = NULL;
    alg_point *pts = NULL;
    alg_md5 *md = alg_md5_new();
    rs_error err = {0};
    int rc = 1, fn = -1;

    if (!md || tool_read_line(&line, &cap, stdin) < 0 || sscanf(line, "%zu %31s", &n, hash) != 2 ||
        n == 0 || n > 100000) {
        fprintf(stderr, "twemproxy_tool: first line: N HASH\n");
        goto out;
    }
    for (int f = 0; f < TW_NHASH; f++)
        if (!strcmp(hash, twemproxy_hash_names[f]))
            fn = f;
    names = calloc(n, sizeof *names);
    nodes = calloc(n, sizeof *nodes);
    if (fn < 0 || !names || !nodes)
        goto out;
    for (size_t i = 0; i < n; i++) {
        long len = tool_read_line(&line, &cap, stdin);
        char *tab = len > 0 ? strchr(line, '\t') : NULL;
        if (!tab) {
            fprintf(stderr, "twemproxy_tool: server line %zu: WEIGHT<TAB>NAME\n", i + 1);
            goto out;
        }
        if (!(names[i] = strdup(tab + 1)))
            goto out;
        nodes[i] = (alg_node){names[i], strlen(names[i]), strtod(line, NULL)};
    }
    if (twemproxy_build(md, nodes, n, &pts, &np, &err)) {
        fprintf(stderr, "twemproxy_tool: %s\n", err.msg);
        goto out;
    }
    long len;
    while ((len = tool_read_line(&line, &cap, stdin)) >= 0) {
        uint32_t h = twemproxy_hash((twemproxy_hash_fn)fn, md, line, (size_t)len);
        printf("%u\n", pts[alg_successor(pts, np, h)].node);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    free(pts);
    if (names)
        for (size_t i = 0; i < n; i++)
            free(names[i]);
    free(names);
    free(nodes);
    free(line);
    alg_md5_free(md);
    return rc;
}
