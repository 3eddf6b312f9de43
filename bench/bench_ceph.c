/*
 * bench_ceph.c - CRUSH mapping cost: ringsim's core against crushtool on
 * the same map and the same inputs, in the same run (`make bench-ceph`).
 *
 *   bench_ceph [N] [RUNS]
 *
 * A map of 3 racks x 4 hosts x 4 OSDs (48 OSDs, odd weights, optimal
 * tunables, rule 0 `chooseleaf firstn 0 type host`) is written, compiled
 * with `crushtool -c`; then, RUNS times each (default 5), N inputs
 * x = 0..N-1 (default 1,000,000, as PG seeds) are mapped to 3 OSDs:
 *   crushtool  `crushtool -i MAP --test --rule 0 --num-rep 3 --min-x 0
 *              --max-x N-1` (no output flag: it maps and counts), timed as
 *              a whole process: start, map load, mapping;
 *   ringsim    ceph_do_rule over the same inputs, plus parsing the text,
 *              timed in-process.
 * Medians are printed with their ratio (ringsim / crushtool: below 1.0 is
 * faster).  The first 10,000 mappings of both are compared first, line for
 * line (`--show-mappings`), so the two time the same work.  Exit 77 when
 * crushtool is missing.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alg_ceph.h"
#include "crushmap.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void write_map(sbuf *b)
{
    sb_str(b, "tunable choose_local_tries 0\ntunable choose_local_fallback_tries 0\n"
              "tunable choose_total_tries 50\ntunable chooseleaf_descend_once 1\n"
              "tunable chooseleaf_vary_r 1\ntunable chooseleaf_stable 1\n");
    for (int d = 0; d < 48; d++)
        sb_printf(b, "device %d osd.%d\n", d, d);
    sb_str(b, "type 0 osd\ntype 1 host\ntype 3 rack\ntype 11 root\n");
    int id = -2;
    for (int h = 0; h < 12; h++) {
        sb_printf(b, "host h%d {\n\tid %d\n\talg straw2\n\thash 0\n", h, id--);
        for (int o = 0; o < 4; o++)
            sb_printf(b, "\titem osd.%d weight %.3f\n", h * 4 + o,
                      0.5 + (double)((h * 7 + o * 13) % 29) / 10.0);
        sb_str(b, "}\n");
    }
    for (int r = 0; r < 3; r++) {
        sb_printf(b, "rack r%d {\n\tid %d\n\talg straw2\n\thash 0\n", r, id--);
        for (int h = 0; h < 4; h++)
            sb_printf(b, "\titem h%d\n", r * 4 + h);
        sb_str(b, "}\n");
    }
    sb_str(b,
           "root default {\n\tid -1\n\talg straw2\n\thash 0\n\titem r0\n\titem r1\n\titem r2\n}\n"
           "rule replicated_rule {\n\tid 0\n\ttype replicated\n\tmin_size 1\n\tmax_size 10\n"
           "\tstep take default\n\tstep chooseleaf firstn 0 type host\n\tstep emit\n}\n");
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || runs < 1 || runs > 99)
        return 2;
    if (system("command -v crushtool >/dev/null 2>&1") != 0) {
        printf("SKIP: crushtool missing (apt-get install ceph-base)\n");
        return 77;
    }
    char dir[] = "/tmp/bench_ceph.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char txt[64], bin[64], cmd[512];
    snprintf(txt, sizeof txt, "%s/map.txt", dir);
    snprintf(bin, sizeof bin, "%s/map.bin", dir);
    sbuf b = {0};
    write_map(&b);
    FILE *f = fopen(txt, "w");
    if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f))
        return 1;
    snprintf(cmd, sizeof cmd, "crushtool -c %s -o %s", txt, bin);
    if (system(cmd) != 0)
        return 1;
    ceph_map *m;
    int line;
    rs_error err = {0};
    if (crushmap_parse(b.p, b.n, &m, &line, &err)) {
        fprintf(stderr, "bench_ceph: line %d: %s\n", line, err.msg);
        return 1;
    }
    uint32_t w[48];
    for (int i = 0; i < 48; i++)
        w[i] = CEPH_WEIGHT_ONE;
    const ceph_rule *r = &m->rules[0];

    /* the same answers first */
    snprintf(cmd, sizeof cmd,
             "crushtool -i %s --test --show-mappings --rule 0 --num-rep 3 --min-x 0 --max-x 9999",
             bin);
    FILE *p = popen(cmd, "r");
    char got[256], want[256];
    long same = 0;
    for (int x = 0; p && x < 10000 && fgets(want, sizeof want, p); x++) {
        int32_t out[CEPH_MAX_RESULT];
        int k = ceph_do_rule(m, r, x, out, 3, w, 48, NULL, NULL);
        int at = snprintf(got, sizeof got, "CRUSH rule 0 x %d [", x);
        for (int i = 0; i < k; i++)
            at += snprintf(got + at, sizeof got - (size_t)at, i ? ",%d" : "%d", out[i]);
        snprintf(got + at, sizeof got - (size_t)at, "]\n");
        if (strcmp(got, want)) {
            fprintf(stderr, "bench_ceph: differs from crushtool: %s vs %s", got, want);
            return 1;
        }
        same++;
    }
    if (!p || pclose(p) != 0 || same != 10000) {
        fprintf(stderr, "bench_ceph: crushtool --show-mappings failed\n");
        return 1;
    }

    double tc[99], tr[99];
    uint64_t sum = 0;
    snprintf(cmd, sizeof cmd,
             "crushtool -i %s --test --rule 0 --num-rep 3 --min-x 0 --max-x %ld >/dev/null 2>&1",
             bin, n - 1);
    for (int k = 0; k < runs; k++) {
        double t0 = now();
        if (system(cmd) != 0)
            return 1;
        tc[k] = now() - t0;
        t0 = now();
        ceph_map *mm;
        if (crushmap_parse(b.p, b.n, &mm, &line, &err))
            return 1;
        for (long x = 0; x < n; x++) {
            int32_t out[CEPH_MAX_RESULT];
            int got_n = ceph_do_rule(mm, &mm->rules[0], (int32_t)x, out, 3, w, 48, NULL, NULL);
            for (int i = 0; i < got_n; i++)
                sum += (uint32_t)out[i];
        }
        ceph_map_free(mm);
        tr[k] = now() - t0;
    }
    double mc = median(tc, runs), mr = median(tr, runs);
    printf("CRUSH, 48 OSDs (3 racks x 4 hosts x 4), chooseleaf firstn 3 type host, %ld inputs, "
           "median of %d (checksum %llu; first 10000 equal to crushtool's)\n",
           n, runs, (unsigned long long)sum);
    printf("  crushtool --test  %8.3f s  %6.0f ns/input\n", mc, mc / (double)n * 1e9);
    printf("  ringsim core      %8.3f s  %6.0f ns/input\n", mr, mr / (double)n * 1e9);
    printf("  ratio ringsim / crushtool: %.2fx\n", mr / mc);
    ceph_map_free(m);
    free(b.p);
    unlink(txt);
    unlink(bin);
    rmdir(dir);
    return 0;
}
