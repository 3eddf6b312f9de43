/*
 * multiprobe_tool.c - what the multiprobe core answers, for
 * tests/ref/multiprobe_ref.py.
 *
 * stdin, one command a line (names and keys hex-encoded):
 *   reset            forget every node
 *   probes K         probes for the following keys (default 21)
 *   node HEXNAME     add a node (join order = input order)
 *   key HEXKEY       print "NODE COORD PROBE": the owner's index in input
 *                    order, the winning probe and its i
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_multiprobe.h"
#include "tool_io.h"

enum { MAXN = 5000 };

int main(void)
{
    static char names[MAXN][TOOL_NAME_MAX];
    static alg_node nodes[MAXN];
    static char line[TOOL_LINE_MAX];
    char key[TOOL_NAME_MAX];
    size_t n = 0;
    alg_point *pts = NULL;
    int dirty = 1;
    long probes = MULTIPROBE_DEFAULT_PROBES;
    hasher *h = hasher_new();
    if (!h)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        const char *p = line;
        if (strncmp(p, "reset", 5) == 0) {
            n = 0;
            dirty = 1;
        } else if (strncmp(p, "probes ", 7) == 0) {
            probes = strtol(p + 7, NULL, 10);
            if (multiprobe_check_probes(probes, NULL) != 0)
                return 2;
        } else if (strncmp(p, "node ", 5) == 0 && n < MAXN) {
            p += 5;
            long len = tool_unhex(&p, names[n], TOOL_NAME_MAX);
            if (len < 0)
                return 2;
            nodes[n] = (alg_node){names[n], (size_t)len, 1.0};
            n++;
            dirty = 1;
        } else if (strncmp(p, "key ", 4) == 0) {
            p += 4;
            long len = tool_unhex(&p, key, sizeof key);
            if (len < 0 || n == 0)
                return 2;
            if (dirty) {
                free(pts);
                if (multiprobe_points(h, nodes, n, &pts) != 0)
                    return 1;
                dirty = 0;
            }
            uint32_t h1, h2, coord, probe;
            multiprobe_key(h, key, (size_t)len, &h1, &h2);
            size_t at = multiprobe_lookup(pts, n, h1, h2, (uint32_t)probes, &coord, &probe);
            printf("%u %u %u\n", pts[at].node, coord, probe);
        } else {
            return 2;
        }
    }
    free(pts);
    hasher_free(h);
    return 0;
}
