/*
 * traffic_tool.c - where ringsim's bounded-load rules send requests, one at
 * a time, for tests/ref/haproxy_bounded_ref.py (and the Envoy shuffle for
 * tests/ref/envoy_shuffle_ref.sh).
 *
 * haproxy mode (argv[1] = "haproxy"):
 *   stdin:  "N FACTOR"; N lines "WEIGHT<TAB>ID<TAB>NAME" (configuration
 *           order, ID 0 when the server has none); then events, one a line:
 *           "s KEY" (a request for KEY arrives) or "r J" (the J-th request,
 *           counting from 0, ends).
 *   stdout: for each "s", the name of the server HAProxy's rule picks
 *           (traffic_stepper over the HAProxy core's points).
 * envoy mode (argv[1] = "envoy"):
 *   stdin:  lines "HASH NUM_HOSTS" (decimal);
 *   stdout: for each, the NUM_HOSTS host indexes Envoy's chooseHost tries,
 *           in order (traffic_envoy_order), separated by spaces.
 * Exit status 0, or 1 with a message on stderr.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_haproxy.h"
#include "traffic.h"

static long read_line(char **buf, size_t *cap, FILE *in)
{
    ssize_t n = getline(buf, cap, in);
    if (n < 0)
        return -1;
    if (n > 0 && (*buf)[n - 1] == '\n')
        (*buf)[--n] = '\0';
    return (long)n;
}

static int envoy_mode(void)
{
    char *line = NULL;
    size_t cap = 0;
    while (read_line(&line, &cap, stdin) >= 0) {
        uint64_t hash;
        uint32_t n;
        if (sscanf(line, "%" SCNu64 " %" SCNu32, &hash, &n) != 2 || n == 0 || n > 100000) {
            fprintf(stderr, "traffic_tool: envoy: HASH NUM_HOSTS\n");
            return 1;
        }
        uint32_t *scratch = malloc(3 * (size_t)n * sizeof *scratch), *out = malloc(n * sizeof *out);
        if (!scratch || !out)
            return 1;
        for (uint32_t i = 0; i < n; i++)
            scratch[i] = i;
        traffic_envoy_order(hash, n, scratch, out, n);
        for (uint32_t i = 0; i < n; i++)
            printf("%s%u", i ? " " : "", out[i]);
        putchar('\n');
        free(scratch);
        free(out);
    }
    free(line);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "envoy"))
        return envoy_mode();
    if (argc != 2 || strcmp(argv[1], "haproxy")) {
        fprintf(stderr, "usage: traffic_tool haproxy|envoy < input\n");
        return 1;
    }
    char *line = NULL;
    size_t cap = 0, n = 0, np = 0;
    unsigned long factor = 0;
    if (read_line(&line, &cap, stdin) < 0 || sscanf(line, "%zu %lu", &n, &factor) != 2 || !n ||
        n > 100000) {
        fprintf(stderr, "traffic_tool: first line: N FACTOR\n");
        return 1;
    }
    char **names = calloc(n, sizeof *names);
    alg_node *nodes = calloc(n, sizeof *nodes);
    int64_t *given = calloc(n, sizeof *given);
    uint32_t *ids = calloc(n, sizeof *ids);
    double *weight = calloc(n, sizeof *weight);
    alg_point *pts = NULL;
    rs_error err = {0};
    if (!names || !nodes || !given || !ids || !weight)
        return 1;
    for (size_t i = 0; i < n; i++) {
        double w;
        long long id;
        int off = 0;
        if (read_line(&line, &cap, stdin) < 0 ||
            sscanf(line, "%lf\t%lld\t%n", &w, &id, &off) != 2 || !off) {
            fprintf(stderr, "traffic_tool: server line %zu: WEIGHT<TAB>ID<TAB>NAME\n", i + 1);
            return 1;
        }
        names[i] = strdup(line + off);
        nodes[i] = (alg_node){names[i], strlen(names[i]), w};
        given[i] = id;
        weight[i] = w;
    }
    if (haproxy_assign_ids(given, n, ids, &err) || haproxy_build(nodes, ids, n, &pts, &np, &err) ||
        !np) {
        fprintf(stderr, "traffic_tool: %s\n", np ? err.msg : "no point");
        return 1;
    }
    /* Every event first: each request is a key of the model. */
    size_t ne = 0, ecap = 64;
    char **ev = malloc(ecap * sizeof *ev);
    long len;
    while (ev && (len = read_line(&line, &cap, stdin)) >= 0) {
        if (ne == ecap && !(ev = realloc(ev, (ecap *= 2) * sizeof *ev)))
            return 1;
        ev[ne++] = strdup(line);
    }
    uint32_t *pt_node = malloc(np * sizeof *pt_node), *knode = malloc((ne + 1) * sizeof *knode);
    uint32_t *kpoint = malloc((ne + 1) * sizeof *kpoint), *sent = malloc((ne + 1) * sizeof *sent);
    double *share = malloc((ne + 1) * sizeof *share);
    if (!pt_node || !knode || !kpoint || !sent || !share)
        return 1;
    for (size_t i = 0; i < np; i++)
        pt_node[i] = pts[i].node;
    size_t nk = 0;
    for (size_t e = 0; e < ne; e++)
        if (ev[e][0] == 's' && ev[e][1] == ' ') {
            size_t k = haproxy_lookup(pts, np, haproxy_key_hash(ev[e] + 2, strlen(ev[e] + 2)), NULL,
                                      NULL);
            kpoint[nk] = (uint32_t)k;
            knode[nk] = pts[k].node;
            share[nk++] = 1;
        }
    traffic_model m = {PLACE_BOUND_HAPROXY,
                       (uint32_t)factor,
                       n,
                       weight,
                       np,
                       pt_node,
                       nk,
                       share,
                       knode,
                       kpoint,
                       NULL,
                       NULL,
                       NULL};
    traffic_stepper *st;
    if (traffic_stepper_new(&st, &m))
        return 1;
    size_t req = 0;
    for (size_t e = 0; e < ne; e++) {
        if (ev[e][0] == 's') {
            sent[req] = traffic_stepper_assign(st, (uint32_t)req);
            puts(names[sent[req]]);
            req++;
        } else {
            size_t j = strtoul(ev[e] + 2, NULL, 10);
            if (j >= req) {
                fprintf(stderr, "traffic_tool: r %zu before its request\n", j);
                return 1;
            }
            traffic_stepper_release(st, sent[j]);
        }
    }
    traffic_stepper_free(st);
    for (size_t e = 0; e < ne; e++)
        free(ev[e]);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(ev);
    free(names);
    free(nodes);
    free(given);
    free(ids);
    free(weight);
    free(pts);
    free(pt_node);
    free(knode);
    free(kpoint);
    free(sent);
    free(share);
    free(line);
    return 0;
}
