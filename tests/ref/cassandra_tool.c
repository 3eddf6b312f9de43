/*
 * cassandra_tool.c - what the cassandra core answers, for
 * tests/ref/cassandra_ref.py.
 *
 * stdin, one command a line (names and keys hex-encoded):
 *   hash HEXKEY                   print "MURMUR3 TOKEN" (raw first long, token)
 *   reset                         forget every node
 *   num_tokens K                  tokens per unit of weight (default 16)
 *   node HEXNAME WEIGHT [T,T,..]  add a node, with explicit tokens if given
 *   ring                          print "TOKEN:NODE ..." in ring order
 *   key HEXKEY R                  print "TOKEN NODE NODE ...": the key's token
 *                                 and its SimpleStrategy replicas, owner first
 * NODE is the index in input order.  A ring the core refuses prints
 * "error MESSAGE" for ring and key.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_cassandra.h"
#include "tool_io.h"

enum { MAXN = 2000, MAXT = 20000 };

int main(void)
{
    static char names[MAXN][TOOL_NAME_MAX];
    static alg_node nodes[MAXN];
    static cassandra_tokens ex[MAXN];
    static int64_t tokens[MAXT];
    static uint32_t reps[MAXN];
    static char line[TOOL_LINE_MAX];
    char key[TOOL_NAME_MAX];
    size_t n = 0, ntok = 0, npts = 0;
    uint32_t num_tokens = CASSANDRA_DEFAULT_NUM_TOKENS;
    alg_point *pts = NULL;
    int dirty = 1, rc = 0;
    rs_error err = {0};
    while (fgets(line, sizeof line, stdin)) {
        const char *p = line;
        if (strncmp(p, "hash ", 5) == 0) {
            p += 5;
            long len = tool_unhex(&p, key, sizeof key);
            if (len < 0)
                return 2;
            printf("%" PRId64 " %" PRId64 "\n", cassandra_murmur3(key, (size_t)len),
                   cassandra_token(key, (size_t)len));
        } else if (strncmp(p, "reset", 5) == 0) {
            n = ntok = 0;
            dirty = 1;
        } else if (strncmp(p, "num_tokens ", 11) == 0) {
            long v = strtol(p + 11, NULL, 10);
            if (cassandra_check_num_tokens(v, NULL) != 0)
                return 2;
            num_tokens = (uint32_t)v;
            dirty = 1;
        } else if (strncmp(p, "node ", 5) == 0 && n < MAXN) {
            p += 5;
            long len = tool_unhex(&p, names[n], TOOL_NAME_MAX);
            char *end;
            double w = strtod(p, &end);
            if (len < 0 || end == p)
                return 2;
            nodes[n] = (alg_node){names[n], (size_t)len, w};
            ex[n] = (cassandra_tokens){tokens + ntok, 0};
            p = end;
            while (*p == ' ' || *p == ',') {
                const char *t = ++p;
                while (*p && *p != ',' && *p != '\n')
                    p++;
                if (ntok == MAXT ||
                    cassandra_parse_token(t, (size_t)(p - t), &tokens[ntok], NULL) != 0)
                    return 2;
                ntok++;
                ex[n].count++;
            }
            n++;
            dirty = 1;
        } else if (strncmp(p, "ring", 4) == 0 || strncmp(p, "key ", 4) == 0) {
            if (dirty) {
                free(pts);
                rc = cassandra_ring(nodes, n, ex, num_tokens, &pts, &npts, &err);
                dirty = 0;
            }
            if (rc != 0) {
                printf("error %s\n", err.msg);
                continue;
            }
            if (p[0] == 'r') {
                for (size_t i = 0; i < npts; i++)
                    printf("%s%" PRId64 ":%u", i ? " " : "", alg_to_signed(pts[i].coord),
                           pts[i].node);
                printf("\n");
                continue;
            }
            p += 4;
            long len = tool_unhex(&p, key, sizeof key);
            if (len < 0 || npts == 0)
                return 2;
            size_t r = strtoul(p, NULL, 10);
            int64_t tok = cassandra_token(key, (size_t)len);
            size_t got = cassandra_replicas(pts, npts, cassandra_lookup(pts, npts, tok), reps,
                                            r > MAXN ? MAXN : r);
            printf("%" PRId64, tok);
            for (size_t i = 0; i < got; i++)
                printf(" %u", reps[i]);
            printf("\n");
        } else {
            return 2;
        }
    }
    free(pts);
    return 0;
}
