/*
 * test_lib_threads.c - a built placement answers from many threads at once
 * (API.md "Version 4: the placement library": "lookups are safe from many
 * threads").
 *
 * For every algorithm and variant (some nodes down, replicas where the
 * algorithm has them, Redis replicas failing over), the answers of
 * ringsim_lookup, ringsim_served_by and ringsim_replicas for NKEYS keys are
 * taken on one thread; then NTHREADS threads ask for every key again, each
 * in its own order, all on the one placement, and must get the same
 * answers.  Under ThreadSanitizer (make test-tsan) any write to shared
 * state on the lookup path -- scratch space kept in the placement, as
 * ketama's MD5 context once was -- is a reported race.
 *
 * Ends with "N passed, N failed".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringsim/ringsim.h>

#define NKEYS 4000
#define NTHREADS 8
#define NNODES 8

typedef struct answer {
    const char *owner, *served;
    const char *reps[RINGSIM_MAX_REPLICAS];
    size_t nreps;
} answer;

typedef struct job {
    const ringsim_placement *p;
    const answer *want;
    char (*keys)[32];
    unsigned stride; /* this thread's order: i * stride mod NKEYS */
    long wrong;
} job;

static int answer_of(const ringsim_placement *p, const char *key, answer *a)
{
    size_t len = strlen(key);
    int rc = ringsim_lookup(p, key, len, &a->owner);
    if (!rc)
        rc = ringsim_served_by(p, key, len, &a->served);
    if (!rc)
        rc = ringsim_replicas(p, key, len, a->reps, RINGSIM_MAX_REPLICAS, &a->nreps);
    return rc;
}

static void *worker(void *arg)
{
    job *j = arg;
    for (unsigned i = 0; i < NKEYS; i++) {
        unsigned k = (unsigned)(((uint64_t)i * j->stride) % NKEYS);
        answer a;
        memset(&a, 0, sizeof a);
        /* Names are the placement's own: the very same pointers. */
        if (answer_of(j->p, j->keys[k], &a) || a.owner != j->want[k].owner ||
            a.served != j->want[k].served || a.nreps != j->want[k].nreps ||
            memcmp(a.reps, j->want[k].reps, a.nreps * sizeof *a.reps) != 0)
            j->wrong++;
    }
    return NULL;
}

static const struct {
    const char *alg;
    const char *params[3][2];
    int replicas;
} configs[] = {
    {"ring", {{"points_per_node", "40"}}, 3},
    {"jump", {{NULL}}, 1},
    {"rendezvous", {{NULL}}, 2},
    {"multiprobe", {{NULL}}, 2},
    {"ketama", {{NULL}}, 2},
    {"ketama", {{"mode", "ketama"}}, 1},
    {"ketama", {{"mode", "consistent"}, {"key_hash", "fnv1a_32"}}, 1},
    {"nginx", {{NULL}}, 2},
    {"nginx", {{"consistent", "0"}}, 1},
    {"envoy-ring", {{"min_ring_size", "64"}}, 2},
    {"maglev", {{"table_size", "1021"}}, 1},
    {"cassandra", {{"num_tokens", "4"}}, 3},
    {"redis", {{NULL}}, 1},
    {"haproxy", {{NULL}}, 2},
    {"haproxy", {{"hash_type", "map-based"}}, 1},
    {"twemproxy", {{"hash", "md5"}}, 1},
    {"twemproxy", {{"hash", "fnv1a_64"}}, 1},
};

int main(void)
{
    static char keys[NKEYS][32];
    static answer want[NKEYS];
    int passed = 0, failed = 0;
    for (int i = 0; i < NKEYS; i++)
        snprintf(keys[i], sizeof keys[i], "user:%d:%x", i, (unsigned)(i * 2654435761u));
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
        ringsim_placement *p = NULL;
        int rc = ringsim_placement_new(&p, configs[c].alg);
        for (int k = 0; !rc && k < 3 && configs[c].params[k][0]; k++)
            rc = ringsim_placement_set_param(p, configs[c].params[k][0], configs[c].params[k][1]);
        char buf[48];
        snprintf(buf, sizeof buf, "%d", configs[c].replicas);
        if (!rc && configs[c].replicas > 1)
            rc = ringsim_placement_set_param(p, "replicas", buf);
        for (int n = 0; !rc && n < NNODES; n++) {
            snprintf(buf, sizeof buf, "10.0.0.%d:%d", n + 1, 11211 + n);
            rc = ringsim_placement_add_node(p, buf, 1);
            if (!rc && n % 3 == 1) /* some down: the states' paths too */
                rc = ringsim_placement_set_node(p, buf, "state", "down");
            if (!rc && n % 3 == 1 && !strcmp(configs[c].alg, "redis"))
                rc = ringsim_placement_set_node(p, buf, "replicas", "10.1.0.1:7000");
        }
        if (!rc)
            rc = ringsim_placement_build(p);
        if (rc) {
            printf("FAIL: %s #%zu: %s\n", configs[c].alg, c, ringsim_strerror(rc));
            failed++;
            ringsim_placement_free(p);
            continue;
        }
        long bad = 0;
        for (int i = 0; i < NKEYS; i++) {
            memset(&want[i], 0, sizeof want[i]);
            bad += answer_of(p, keys[i], &want[i]) != 0 || !want[i].owner;
        }
        pthread_t t[NTHREADS];
        job jobs[NTHREADS];
        int started = 0;
        for (int i = 0; i < NTHREADS; i++) {
            /* strides prime to NKEYS (4000 = 2^5 5^3): every key once */
            static const unsigned strides[] = {1, 3, 7, 11, 13, 17, 19, 23};
            jobs[i] = (job){p, want, keys, strides[i % 8], 0};
            if (pthread_create(&t[i], NULL, worker, &jobs[i]) == 0)
                started++;
        }
        for (int i = 0; i < started; i++) {
            pthread_join(t[i], NULL);
            bad += jobs[i].wrong;
        }
        if (bad || started != NTHREADS) {
            printf("FAIL: %s #%zu: %ld answers differ on %d threads\n", configs[c].alg, c, bad,
                   started);
            failed++;
        } else {
            passed++;
        }
        ringsim_placement_free(p);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
