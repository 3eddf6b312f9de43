/*
 * nginx_tool.c - what the nginx core answers, for tests/ref/nginx_ref.py.
 *
 * stdin:  a line with the number of servers N; N lines "WEIGHT<TAB>NAME"
 *         (configuration order); then one key per line, to the end.
 * stdout: for each key, the name of the server that owns it, one per line.
 * Names and keys are raw bytes without newlines (the caller sends keys
 * exactly as nginx receives them, i.e. $arg_k before any decoding).
 * Exit status 0, or 1 with a message on stderr.
 *
 * nginx_tool plain: `hash KEY;` without `consistent` (nginx_plain_pick):
 * server lines are "WEIGHT<TAB>DOWN<TAB>NAME", DOWN 1 for a server marked
 * `down`; a key nobody serves answers "-".
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_nginx.h"
#include "tool_io.h"

int main(int argc, char **argv)
{
    bool plain = argc > 1 && strcmp(argv[1], "plain") == 0;
    bool *down = NULL;
    char *line = NULL;
    size_t cap = 0, n = 0, np = 0;
    char **names = NULL;
    alg_node *nodes = NULL;
    alg_point *pts = NULL;
    rs_error err = {0};
    int rc = 1;

    if (tool_read_line(&line, &cap, stdin) < 0 || sscanf(line, "%zu", &n) != 1 || n == 0 ||
        n > 100000) {
        fprintf(stderr, "nginx_tool: first line: number of servers\n");
        goto out;
    }
    names = calloc(n, sizeof *names);
    nodes = calloc(n, sizeof *nodes);
    down = calloc(n, sizeof *down);
    if (!names || !nodes || !down)
        goto out;
    for (size_t i = 0; i < n; i++) {
        long len = tool_read_line(&line, &cap, stdin);
        char *tab = len > 0 ? strchr(line, '\t') : NULL;
        if (!tab) {
            fprintf(stderr, "nginx_tool: server line %zu: WEIGHT<TAB>NAME\n", i + 1);
            goto out;
        }
        if (plain) {
            down[i] = tab[1] == '1';
            tab = strchr(tab + 1, '\t');
            if (!tab) {
                fprintf(stderr, "nginx_tool: server line %zu: WEIGHT<TAB>DOWN<TAB>NAME\n", i + 1);
                goto out;
            }
        }
        names[i] = strdup(tab + 1);
        if (!names[i])
            goto out;
        nodes[i] = (alg_node){names[i], strlen(names[i]), strtod(line, NULL)};
    }
    if (plain) {
        long len;
        while ((len = tool_read_line(&line, &cap, stdin)) >= 0) {
            long p = nginx_plain_pick(nodes, down, n, line, (size_t)len, NULL);
            puts(p < 0 ? "-" : names[p]);
        }
        rc = fflush(stdout) == 0 ? 0 : 1;
        goto out;
    }
    if (nginx_build(nodes, n, &pts, &np, &err) != 0) {
        fprintf(stderr, "nginx_tool: %s\n", err.msg);
        goto out;
    }
    long len;
    while ((len = tool_read_line(&line, &cap, stdin)) >= 0) {
        const alg_point *p = &pts[alg_successor(pts, np, nginx_key_hash(line, (size_t)len))];
        fwrite(nodes[p->node].name, 1, nodes[p->node].len, stdout);
        putchar('\n');
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    free(pts);
    if (names)
        for (size_t i = 0; i < n; i++)
            free(names[i]);
    free(names);
    free(nodes);
    free(down);
    free(line);
    return rc;
}
