/*
 * bench_traffic.c - speed of the request replay (src/sim/traffic.c).
 *
 * The model: 1000 nodes of weight 1 with 16 points each scattered on a
 * ring (HAProxy's count), a million keys with Zipf shares (s = 0.99, the
 * skew where bounded loads matter), concurrency 1000.  Measured, in the
 * same run, RUNS times each in turn (times are the thread's CPU time, so
 * other processes on the shared machine do not count), medians:
 *   bare     a loop of the same draws: the jump chain's departures (one
 *            draw an event, a swap-remove from the array in flight), one
 *            alias draw a request, its node's counters -- no rule;
 *   none     traffic_replay with the factor 0 (every request to its
 *            key's node: the replay's own overhead over the bare loop);
 *   haproxy  HAProxy's rule, hash_balance_factor 125;
 *   envoy    Envoy's rule, 125;
 *   mtz      Mirrokni-Thorup-Zadimoghaddam on the ring, c = 1.25.
 * Prints seconds per replay, ns per request, the ratio to the bare loop,
 * and the probes per request and share sent away of each rule.
 * Usage: bench_traffic [requests] (default 10000000) [runs] (default 3).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "traffic.h"

#define NODES 1000u
#define POINTS 16u
#define KEYS 1000000u
#define CONC 1000.0

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_traffic: %s failed\n", what);
    exit(1);
}

/* ---- the bare loop's own draws (xoshiro256**, as the replay draws) ---- */

static uint64_t s4[4];

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next64(void)
{
    uint64_t out = rotl(s4[1] * 5, 7) * 9, t = s4[1] << 17;
    s4[2] ^= s4[0];
    s4[3] ^= s4[1];
    s4[1] ^= s4[2];
    s4[0] ^= s4[3];
    s4[2] ^= t;
    s4[3] = rotl(s4[3], 45);
    return out;
}

static uint32_t *cut, *other; /* the bare loop's alias table */

static void alias_make(const double *share, size_t n)
{
    cut = malloc(n * sizeof *cut);
    other = malloc(n * sizeof *other);
    double *q = malloc(n * sizeof *q);
    uint32_t *sm = malloc(n * sizeof *sm), *lg = malloc(n * sizeof *lg);
    if (!cut || !other || !q || !sm || !lg)
        die("malloc");
    size_t ns = 0, nl = 0;
    for (size_t i = 0; i < n; i++) {
        q[i] = share[i] * (double)n;
        other[i] = (uint32_t)i;
        if (q[i] < 1)
            sm[ns++] = (uint32_t)i;
        else
            lg[nl++] = (uint32_t)i;
    }
    while (ns && nl) {
        uint32_t s = sm[--ns], l = lg[nl - 1];
        other[s] = l;
        cut[s] = (uint32_t)(q[s] * 4294967296.0);
        q[l] -= 1 - q[s];
        if (q[l] < 1) {
            nl--;
            sm[ns++] = l;
        }
    }
    while (nl)
        cut[lg[--nl]] = UINT32_MAX;
    while (ns)
        cut[sm[--ns]] = UINT32_MAX;
    free(q);
    free(sm);
    free(lg);
}

static uint64_t bare(const uint32_t *node, uint64_t requests, uint64_t seed)
{
    for (int i = 0; i < 4; i++) { /* splitmix64 */
        uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        s4[i] = z ^ (z >> 31);
    }
    uint32_t *active = calloc(NODES, sizeof *active), *flight = malloc(4 * (size_t)CONC * 4);
    uint64_t *handled = calloc(NODES, sizeof *handled), *peak = calloc(NODES, sizeof *peak);
    size_t cap = 4 * (size_t)CONC, total = 0;
    if (!active || !flight || !handled || !peak)
        die("malloc");
    for (uint64_t q = 0; q < requests; q++) {
        for (;;) {
            double k = (double)total, u = (double)(next64() >> 11) * 0x1p-53 * (k + CONC);
            if (!(u < k))
                break;
            size_t at = (size_t)u;
            uint32_t n = flight[at];
            flight[at] = flight[--total];
            active[n]--;
        }
        uint64_t x = next64();
        uint32_t i = (uint32_t)(((unsigned __int128)x * KEYS) >> 64);
        uint32_t key = (uint32_t)x < cut[i] || cut[i] == UINT32_MAX ? i : other[i];
        uint32_t to = node[key];
        if (total == cap) {
            cap *= 2;
            if (!(flight = realloc(flight, cap * sizeof *flight)))
                die("realloc");
        }
        flight[total++] = to;
        handled[to]++;
        if (++active[to] > peak[to])
            peak[to] = active[to];
    }
    uint64_t check = 0;
    for (size_t i = 0; i < NODES; i++)
        check += handled[i] * (i + 1) + peak[i];
    free(active);
    free(flight);
    free(handled);
    free(peak);
    return check;
}

int main(int argc, char **argv)
{
    uint64_t requests = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (requests < 1 || requests > TRAFFIC_MAX_REQUESTS || runs < 1 || runs > 99) {
        fprintf(stderr, "usage: bench_traffic [requests 1..10^8] [runs 1..99]\n");
        return 2;
    }
    /* the model */
    uint64_t x = 0x853c49e6748fea9bull;
    double *weight = malloc(NODES * sizeof *weight), *share = malloc(KEYS * sizeof *share);
    uint32_t *pt = malloc(NODES * POINTS * sizeof *pt), *node = malloc(KEYS * sizeof *node);
    uint32_t *point = malloc(KEYS * sizeof *point);
    uint64_t *hash = malloc(KEYS * sizeof *hash);
    if (!weight || !share || !pt || !node || !point || !hash)
        die("malloc");
    for (uint32_t i = 0; i < NODES; i++) {
        weight[i] = 1;
        for (uint32_t j = 0; j < POINTS; j++)
            pt[i * POINTS + j] = i;
    }
    for (uint32_t i = NODES * POINTS; i > 1; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t j = (uint32_t)(x % i), t = pt[i - 1];
        pt[i - 1] = pt[j];
        pt[j] = t;
    }
    double sum = 0;
    for (uint32_t k = 0; k < KEYS; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        share[k] = pow(k + 1.0, -0.99);
        sum += share[k];
        point[k] = (uint32_t)(x % (NODES * POINTS));
        node[k] = pt[point[k]];
        hash[k] = x * 0x9e3779b97f4a7c15ull;
    }
    for (uint32_t k = 0; k < KEYS; k++)
        share[k] /= sum;
    alias_make(share, KEYS);

    static const struct {
        const char *name;
        place_bound rule;
        uint32_t factor;
    } cfgs[] = {{"bare", PLACE_BOUND_NONE, 0},
                {"none", PLACE_BOUND_NONE, 0},
                {"haproxy", PLACE_BOUND_HAPROXY, 125},
                {"envoy", PLACE_BOUND_ENVOY, 125},
                {"mtz", PLACE_BOUND_MTZ, 125}};
    enum { NC = sizeof cfgs / sizeof cfgs[0] };
    double t[NC][99];
    traffic_result last[NC];
    memset(last, 0, sizeof last);
    volatile uint64_t sink = 0;
    printf("bench_traffic: %llu requests, %u nodes x %u points, %u keys (Zipf 0.99), "
           "concurrency %g, %d runs each in turn\n",
           (unsigned long long)requests, NODES, POINTS, KEYS, CONC, runs);
    for (int r = 0; r < runs; r++)
        for (int c = 0; c < NC; c++) {
            double t0 = cpu_now();
            if (c == 0) {
                sink += bare(node, requests, (uint64_t)r);
            } else {
                traffic_model m = {cfgs[c].rule, cfgs[c].factor, NODES, weight, NODES * POINTS,
                                   pt,           KEYS,           share, node,   point,
                                   hash,         NULL,           NULL};
                traffic_params p = {requests, CONC, (uint64_t)r, -1, 0};
                rs_error err;
                traffic_result_clear(&last[c]);
                if (traffic_replay(&m, &p, NULL, NULL, &last[c], &err))
                    die(err.msg);
            }
            t[c][r] = cpu_now() - t0;
        }
    double base = 0;
    printf("  %-8s %9s %9s %8s %10s %10s %10s\n", "replay", "seconds", "ns/req", "x bare",
           "probes/req", "sent away", "max/mean");
    for (int c = 0; c < NC; c++) {
        double med = bench_median(t[c], (size_t)runs);
        if (c == 0)
            base = med;
        printf("  %-8s %9.3f %9.1f %8.2f", cfgs[c].name, med, med * 1e9 / (double)requests,
               med / base);
        if (c > 0) {
            const traffic_result *lr = &last[c];
            uint64_t max = 0;
            for (size_t i = 0; i < lr->n; i++)
                max = lr->node[i].handled > max ? lr->node[i].handled : max;
            printf(" %10.4f %9.2f%% %10.4f", (double)lr->probes / (double)requests,
                   100.0 * (double)lr->sent_away / (double)requests,
                   (double)max / ((double)requests / NODES));
        }
        printf("\n");
        traffic_result_clear(&last[c]);
    }
    printf("(medians of %d runs, thread CPU time; bare: the same draws with no rule)\n", runs);
    (void)sink;
    free(weight);
    free(share);
    free(pt);
    free(node);
    free(point);
    free(hash);
    free(cut);
    free(other);
    return 0;
}
