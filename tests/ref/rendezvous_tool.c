/*
 * rendezvous_tool.c - what the rendezvous core answers, for
 * tests/ref/rendezvous_ref.py.
 *
 * stdin, one command a line (names and keys hex-encoded):
 *   reset                            forget every node
 *   node HEXNAME WEIGHT [HEXHASHSRC] add a node; its hash is sha64 of
 *                                    HEXHASHSRC when given (to force ties),
 *                                    else of its name
 *   key HEXKEY R                     print the preference list
 * stdout, one line per key: "INDEX:SCORE ..." best first, SCORE as C's %a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_rendezvous.h"
#include "tool_io.h"

enum { MAXN = 5000 };

int main(void)
{
    static char names[MAXN][TOOL_NAME_MAX];
    static alg_node nodes[MAXN];
    static uint64_t hashes[MAXN];
    static rendezvous_pick picks[MAXN];
    static char line[TOOL_LINE_MAX];
    char key[TOOL_NAME_MAX], src[TOOL_NAME_MAX];
    size_t n = 0;
    hasher *h = hasher_new();
    if (!h)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        const char *p = line;
        if (strncmp(p, "reset", 5) == 0) {
            n = 0;
        } else if (strncmp(p, "node ", 5) == 0 && n < MAXN) {
            p += 5;
            long len = tool_unhex(&p, names[n], TOOL_NAME_MAX);
            char *end;
            double w = strtod(p, &end);
            if (len < 0 || end == p)
                return 2;
            p = end + (*end == ' ');
            nodes[n] = (alg_node){names[n], (size_t)len, w};
            long sl = *p && *p != '\n' ? tool_unhex(&p, src, sizeof src) : -1;
            hashes[n] = sl >= 0 ? hash_sha64(h, src, (size_t)sl)
                                : hash_sha64(h, names[n], (size_t)len);
            n++;
        } else if (strncmp(p, "key ", 4) == 0) {
            p += 4;
            long len = tool_unhex(&p, key, sizeof key);
            if (len < 0)
                return 2;
            size_t r = strtoul(p, NULL, 10);
            uint64_t kh = hash_sha64(h, key, (size_t)len);
            size_t got = rendezvous_top(kh, nodes, hashes, n, picks, r > MAXN ? MAXN : r);
            int32_t owner = rendezvous_lookup(kh, nodes, hashes, n);
            if (got && (int32_t)picks[0].node != owner)
                return 3; /* the two entry points disagree */
            for (size_t i = 0; i < got; i++)
                printf("%s%u:%a", i ? " " : "", picks[i].node, picks[i].score);
            printf("\n");
        } else {
            return 2;
        }
    }
    hasher_free(h);
    return 0;
}
