/*
 * bench_trace.c - speed and memory of `ringsim trace` (src/io/trace_read.c,
 * src/sim/trace.c).
 *
 * Generates, in a temporary folder, a combined-format access log of N lines
 * (default 10,000,000: keys /obj/0 .. /obj/999999 with Zipf-like skew, body
 * bytes, one second of clock per 1,000 lines) and measures, in the same
 * run, RUNS times each in turn (process CPU time, so other work on the
 * shared machine does not count), medians:
 *   bare     a loop that reads the same file in 256 KiB blocks, cuts the
 *            lines, finds the request URI and hashes it (SHA-256 position,
 *            the hasher of the placement): what any replay must do;
 *   replay   trace_reader + trace_run over six nodes (ring, 160 points),
 *            no cache: the replay's own overhead over the bare loop;
 *   cache    the same with a 10,000-object LRU per node.
 * Then lines per second for each format and compression on 1,000,000-line
 * files (access-log plain, gzip, zstd; twitter; oracle-general; csv; keys),
 * and the peak resident memory of a replay of the first million lines and
 * of all N, each in a child process (wait4's ru_maxrss): the memory must not
 * grow with the log.
 * Usage: bench_trace [lines] [runs] (defaults 10000000 and 3).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "bench_util.h"
#include "hash.h"
#include "sim.h"
#include "trace.h"
#include "trace_read.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t xs(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A key number with a heavy head: the square of a uniform. */
static unsigned skewed(void)
{
    double u = (double)(xs() >> 11) / 9007199254740992.0;
    return (unsigned)(u * u * u * 1000000.0);
}

typedef enum { G_ACCESS, G_TWITTER, G_ORACLE, G_CSV, G_KEYS } gen_kind;

static void gen(const char *path, gen_kind k, uint64_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (k == G_CSV)
        fputs("time,key,size,op\n", f);
    for (uint64_t i = 0; i < n; i++) {
        unsigned key = skewed(), size = 100 + key % 5000;
        time_t t = 1765000000 + (time_t)(i / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        switch (k) {
        case G_ACCESS:
            fprintf(f,
                    "10.%u.%u.%u - - [%02d/%s/%04d:%02d:%02d:%02d +0000] \"GET /obj/%u HTTP/1.1\" "
                    "200 %u \"-\" \"bench/1.0\"\n",
                    (unsigned)(i % 200), (unsigned)(i / 7 % 250), (unsigned)(i % 251), tm.tm_mday,
                    mon[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, key, size);
            break;
        case G_TWITTER:
            fprintf(f, "%lld,obj:%u,12,%u,3,get,0\n", (long long)(t - 1765000000), key, size);
            break;
        case G_ORACLE: {
            unsigned char b[24];
            uint64_t id = key, tt = (uint64_t)(t - 1765000000);
            for (int j = 0; j < 4; j++)
                b[j] = (unsigned char)(tt >> (8 * j));
            for (int j = 0; j < 8; j++)
                b[4 + j] = (unsigned char)(id >> (8 * j));
            for (int j = 0; j < 4; j++)
                b[12 + j] = (unsigned char)(size >> (8 * j));
            memset(b + 16, 0xff, 8);
            fwrite(b, 1, 24, f);
            break;
        }
        case G_CSV:
            fprintf(f, "%lld,obj:%u,%u,get\n", (long long)t, key, size);
            break;
        case G_KEYS:
            fprintf(f, "obj:%u\n", key);
            break;
        }
    }
    fclose(f);
}

static void compress_file(const char *in, const char *out, bool zstd)
{
    FILE *f = fopen(in, "rb");
    struct stat st;
    fstat(fileno(f), &st);
    char *buf = malloc((size_t)st.st_size);
    if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
        exit(1);
    fclose(f);
    FILE *o = fopen(out, "wb");
    if (zstd) {
        size_t cap = ZSTD_compressBound((size_t)st.st_size);
        char *z = malloc(cap);
        size_t n = ZSTD_compress(z, cap, buf, (size_t)st.st_size, 3);
        fwrite(z, 1, n, o);
        free(z);
    } else {
        gzFile g = gzdopen(dup(fileno(o)), "wb6");
        gzwrite(g, buf, (unsigned)st.st_size);
        gzclose(g);
    }
    fclose(o);
    free(buf);
}

/* The bare loop: blocks, lines, the URI between the request's first two
 * spaces, its SHA-256 position. */
static uint64_t bare(const char *path, hasher *h)
{
    int fd = open(path, O_RDONLY);
    static char buf[(256 << 10) + 65536];
    size_t have = 0;
    uint64_t lines = 0, acc = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, 256 << 10);
        if (n <= 0)
            break;
        have += (size_t)n;
        char *p = buf, *end = buf + have, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
            char *q = memchr(p, '"', (size_t)(nl - p));
            if (q) {
                char *u = memchr(q, ' ', (size_t)(nl - q));
                char *ue = u ? memchr(u + 1, ' ', (size_t)(nl - u - 1)) : NULL;
                if (ue)
                    acc += hash_position(h, u + 1, (size_t)(ue - u - 1));
            }
            lines++;
            p = nl + 1;
        }
        have = (size_t)(end - p);
        memmove(buf, p, have);
    }
    close(fd);
    return lines + (acc & 1);
}

static sim *make_sim(const char *dir)
{
    char db[4096];
    snprintf(db, sizeof db, "%s/bench.db", dir);
    sim *s;
    rs_error err;
    if (sim_open(&s, db, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    if (!sim_node_count(s)) {
        place_config cfg = *sim_config(s);
        int64_t op;
        cfg.param[PP_POINTS_PER_NODE] = 160;
        if (sim_configure(s, &cfg, &op, &err))
            fprintf(stderr, "%s\n", err.msg);
        for (int i = 1; i <= 6; i++) {
            char name[16];
            snprintf(name, sizeof name, "web%d", i);
            if (sim_add_node(s, name, strlen(name), 1, &op, &err))
                fprintf(stderr, "%s\n", err.msg);
        }
    }
    return s;
}

/* One replay: its requests (0 on failure). */
static uint64_t replay(sim *s, const char *path, uint64_t cache, uint64_t limit_lines)
{
    (void)limit_lines;
    int fd = open(path, O_RDONLY);
    trace_opts o = {.format = TRACE_AUTO};
    trace_params p = {.cache = cache, .cache_objects = true};
    trace_reader *r;
    rs_error err;
    json_t *j = NULL;
    if (trace_reader_open(&r, fd, path, &o, &err) || trace_run(s, r, &p, NULL, NULL, &j, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        close(fd);
        return 0;
    }
    uint64_t n = (uint64_t)json_integer_value(json_object_get(j, "requests"));
    json_decref(j);
    trace_reader_free(r);
    close(fd);
    return n;
}

/* Peak resident memory (KiB) of a replay in a child process. */
static long child_rss(const char *dir, const char *path, uint64_t cache)
{
    pid_t pid = fork();
    if (pid == 0) {
        sim *s = make_sim(dir);
        _exit(replay(s, path, cache, 0) ? 0 : 1);
    }
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    return ru.ru_maxrss;
}

static void head_lines(const char *in, const char *out, uint64_t n)
{
    FILE *f = fopen(in, "rb"), *o = fopen(out, "wb");
    char *line = NULL;
    size_t cap = 0;
    for (uint64_t i = 0; i < n && getline(&line, &cap, f) > 0; i++)
        fputs(line, o);
    free(line);
    fclose(f);
    fclose(o);
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    char dir[] = "/tmp/ringsim-bench-trace.XXXXXX";
    if (!mkdtemp(dir) || n < 1 || runs < 1)
        return 2;
    char big[4200], path[4200], gz[4300];
    snprintf(big, sizeof big, "%s/access.log", dir);
    double t = bench_now();
    gen(big, G_ACCESS, n);
    struct stat st;
    stat(big, &st);
    printf("access log: %llu lines, %.1f MiB, made in %.1f s\n", (unsigned long long)n,
           (double)st.st_size / 1048576.0, bench_now() - t);
    sim *s = make_sim(dir);
    hasher *h = hasher_new();
    double tb[16], tr[16], tc[16];
    runs = runs > 16 ? 16 : runs;
    for (int i = 0; i < runs; i++) {
        t = cpu_now();
        bare(big, h);
        tb[i] = cpu_now() - t;
        t = cpu_now();
        replay(s, big, 0, 0);
        tr[i] = cpu_now() - t;
        t = cpu_now();
        replay(s, big, 10000, 0);
        tc[i] = cpu_now() - t;
    }
    double mb = bench_median(tb, (size_t)runs), mr = bench_median(tr, (size_t)runs),
           mc = bench_median(tc, (size_t)runs);
    printf("medians of %d (CPU seconds):\n", runs);
    printf("  bare loop (read, split, SHA-256)  %7.2f s  %6.2f M lines/s\n", mb,
           (double)n / mb / 1e6);
    printf("  replay, no cache                 %7.2f s  %6.2f M lines/s  %.2fx the bare loop\n", mr,
           (double)n / mr / 1e6, mr / mb);
    printf("  replay, 10,000-object LRU a node %7.2f s  %6.2f M lines/s  %.2fx the bare loop\n", mc,
           (double)n / mc / 1e6, mc / mb);
    /* formats and compression on a million lines */
    uint64_t m = n < 1000000 ? n : 1000000;
    char small[4200];
    snprintf(small, sizeof small, "%s/access-1m.log", dir);
    head_lines(big, small, m);
    static const struct {
        const char *name;
        gen_kind k;
        int comp; /* 0 none, 1 gzip, 2 zstd */
    } fm[] = {{"access-log", G_ACCESS, 0},
              {"access-log gzip", G_ACCESS, 1},
              {"access-log zstd", G_ACCESS, 2},
              {"twitter", G_TWITTER, 0},
              {"oracle-general", G_ORACLE, 0},
              {"oracle-general zstd", G_ORACLE, 2},
              {"csv", G_CSV, 0},
              {"keys", G_KEYS, 0}};
    printf("lines per second, %llu lines each (CPU time, median of %d):\n", (unsigned long long)m,
           runs);
    for (size_t f = 0; f < sizeof fm / sizeof fm[0]; f++) {
        snprintf(path, sizeof path, "%s/f%zu", dir, f);
        if (fm[f].k == G_ACCESS)
            snprintf(path, sizeof path, "%s", small);
        else
            gen(path, fm[f].k, m);
        if (fm[f].comp) {
            snprintf(gz, sizeof gz, "%s.%s", path, fm[f].comp == 1 ? "gz" : "zst");
            compress_file(path, gz, fm[f].comp == 2);
        } else {
            snprintf(gz, sizeof gz, "%s", path);
        }
        double v[16];
        for (int i = 0; i < runs; i++) {
            t = cpu_now();
            replay(s, gz, 0, 0);
            v[i] = cpu_now() - t;
        }
        double md = bench_median(v, (size_t)runs);
        printf("  %-22s %6.2f M lines/s\n", fm[f].name, (double)m / md / 1e6);
    }
    long r1 = child_rss(dir, small, 10000), rn = child_rss(dir, big, 10000);
    printf("peak resident memory, replay with a 10,000-object LRU a node: %llu lines %.1f MiB, "
           "%llu lines %.1f MiB\n",
           (unsigned long long)m, (double)r1 / 1024, (unsigned long long)n, (double)rn / 1024);
    hasher_free(h);
    sim_close(s);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        return 1;
    return 0;
}
