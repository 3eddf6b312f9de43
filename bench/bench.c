/*
 * bench.c - how fast and how big ringsim is, each figure against a reference
 * measured in the same run.
 *
 * The machine running this is shared and noisy, so nothing is compared with
 * a number from another day: every figure is the median of several runs
 * (>= 5 where a run is cheap, 3 for the 1M-key runs), measured beside its
 * reference in the same process, runs of the two interleaved so that drift
 * hits both alike, and reported as  measured / reference  with its goal.
 *
 *   1. hashing        hash_position() over 1M strings "key-N", ns/key, against
 *                     the best raw OpenSSL loop (EVP digest fetched once, one
 *                     EVP_MD_CTX reused).  Info: one-shot SHA256().  Goal <= 1.2x.
 *   2. successor      ring_successor() on a ring of 1000 nodes x 160 points,
 *                     1M random positions (no hashing), ns/lookup, against an
 *                     inline lower_bound over a sorted copy of the same points.
 *                     Goal <= 50 ns.
 *   3. key gen        `ringsim key gen 1000000` (child process, fresh db with 10
 *                     nodes) against plain_keygen() below, run in a forked
 *                     child: EVP hashes, binary-search owners on the same ring,
 *                     the same rows into the same keys table (WITHOUT ROWID and
 *                     both indexes, same pragmas) in one transaction.  Wall
 *                     clock.  Goal <= 1.2x.
 *   4. node add       `ringsim node add` on 1M keys / 100 nodes against 100k
 *                     keys / 10 nodes: about the same number of keys moves
 *                     (1M/101 vs 100k/11), so a ratio far above 1 means the
 *                     cost grows with the keys stored, not the keys moved.
 *                     Both dbs use 160 points per node so that a new node
 *                     takes close to 1/(n+1) of the keys (with the default of
 *                     one point the share is a lottery).  Each run works on a
 *                     fresh copy of a db prepared once, synced to disk first
 *                     (else the run's fdatasync would write the copy back,
 *                     ten times more for the big db).  Goal <= 2x.
 *   5. engine start   sim_open() + sim_close() in this process on the 1M-key db
 *                     against an empty db.  Goal <= 10x.
 *   6. peak memory    ru_maxrss (wait4) of `key gen 1000000`, `node add` and
 *                     `check` on 1M keys, and of `serve` on 1M keys answering
 *                     a few requests.  Goal <= 200 MB (10^6 bytes) each.
 *                     The spawn floor (the same measurement of /bin/true) is
 *                     printed: Linux carries the parent's RSS at fork into the
 *                     child's ru_maxrss, so this process stays small while it
 *                     spawns (big buffers are freed and trimmed first).
 *
 * The ringsim binary is $RINGSIM_BIN or "ringsim" beside this executable.
 * Work files go to a fresh folder under $TMPDIR (or /tmp), removed at the
 * end.  Runs in about two minutes on two busy cores.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "hash.h"
#include "ring.h"
#include "sim.h"
#include "store.h"

#define NKEYS 1000000u
#define MAXRUNS 32

static char tmpdir[PATH_MAX];
static char ringsim_bin[PATH_MAX];
static volatile uint64_t sink; /* keeps timed loops from being optimized away */

/* ---- small helpers ---- */

/* The median, leaving v in its order. */
static double median(const double *v, int n)
{
    double s[MAXRUNS];
    memcpy(s, v, (size_t)n * sizeof *s);
    return bench_median(s, (size_t)n);
}

static double maxof(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void path_in(char *out, const char *name)
{
    if (snprintf(out, PATH_MAX, "%s/%s", tmpdir, name) >= PATH_MAX)
        die("path too long: %s/%s", tmpdir, name);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void cleanup(void)
{
    if (tmpdir[0])
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = '\0';
}

/* Remove a db file and its -wal and -shm. */
static void db_remove(const char *p)
{
    char q[PATH_MAX + 8];
    unlink(p);
    snprintf(q, sizeof q, "%s-wal", p);
    unlink(q);
    snprintf(q, sizeof q, "%s-shm", p);
    unlink(q);
}

static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out;
    if (in < 0)
        die("cannot open %s: %s", from, strerror(errno));
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0)
        die("cannot create %s: %s", to, strerror(errno));
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n == 0)
            break;
        if (n < 0) { /* no copy_file_range here: plain copy */
            static char buf[1 << 16];
            ssize_t r;
            while ((r = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t)r) != r)
                    die("cannot write %s", to);
            break;
        }
    }
    /* Written back now: else the timed run's fdatasync pays for the copy. */
    if (fsync(out))
        die("cannot sync %s: %s", to, strerror(errno));
    close(in);
    close(out);
}

/* A db copy with its WAL, if any (ringsim checkpoints on close, so there
 * normally is none). */
static void db_copy(const char *from, const char *to)
{
    char a[PATH_MAX + 8], b[PATH_MAX + 8];
    db_remove(to);
    copy_file(from, to);
    snprintf(a, sizeof a, "%s-wal", from);
    snprintf(b, sizeof b, "%s-wal", to);
    if (access(a, F_OK) == 0)
        copy_file(a, b);
}

/* Write back the dirty pages of the work folder's file system. */
static void settle(void)
{
    int fd = open(tmpdir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        syncfs(fd);
        close(fd);
    }
}

/* Give freed memory back so that forked children start small. */
static void trim(void) { malloc_trim(0); }

static long self_rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- child processes ---- */

typedef struct child {
    double wall;    /* seconds, fork to reap */
    double cpu;     /* seconds, user + system */
    double maxrss;  /* MB (10^6 bytes) */
    int status;     /* exit code, or 128 + signal */
    char out[4096]; /* the start of stdout + stderr */
} child;

static void reap(pid_t pid, child *c, double t0)
{
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            die("wait4: %s", strerror(errno));
    c->wall = bench_now() - t0;
    c->cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    c->maxrss = (double)ru.ru_maxrss * 1024 / 1e6;
    c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Start argv with stdout and stderr into a pipe; *fd reads it. */
static pid_t spawn(char *const argv[], int *fd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        die("pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    *fd = p[0];
    return pid;
}

/* Read what is left of fd into c->out (keeping the first bytes). */
static void drain(int fd, child *c, size_t have)
{
    char junk[4096];
    ssize_t n;
    for (;;) {
        if (have < sizeof c->out - 1)
            n = read(fd, c->out + have, sizeof c->out - 1 - have);
        else
            n = read(fd, junk, sizeof junk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (have < sizeof c->out - 1)
            have += (size_t)n;
    }
    c->out[have] = '\0';
    close(fd);
}

/* Run argv to the end and measure it. */
static void run(child *c, char *const argv[])
{
    int fd;
    double t0 = bench_now();
    pid_t pid = spawn(argv, &fd);
    drain(fd, c, 0);
    reap(pid, c, t0);
}

/* Run `ringsim --db DB ARGS...` (NULL-terminated); dies when it fails. */
static void ringsim(child *c, const char *db, ...)
{
    char *argv[16];
    int n = 0;
    argv[n++] = ringsim_bin;
    argv[n++] = (char *)"--db";
    argv[n++] = (char *)db;
    va_list ap;
    va_start(ap, db);
    char *a;
    while ((a = va_arg(ap, char *)) && n < 15)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    run(c, argv);
    if (c->status)
        die("ringsim %s %s failed (status %d): %s", argv[3], n > 4 ? argv[4] : "", c->status, c->out);
}

/* Run fn(arg) in a forked child and measure it like a process. */
static void run_forked(child *c, int (*fn)(const char *), const char *arg)
{
    fflush(stdout);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0)
        _exit(fn(arg));
    c->out[0] = '\0';
    reap(pid, c, t0);
    if (c->status)
        die("forked reference failed (status %d)", c->status);
}

/* ---- the table ---- */

static int goals_met, goals_total;

static void header(const char *title) { printf("\n%s\n", title); }

/* One line: what, measured, reference, ratio and the goal on `judged`
 * (the ratio, or an absolute value for goals stated that way). */
static void line(const char *what, const char *measured, const char *reference, double ratio,
                 const char *goal, int met)
{
    char r[32] = "";
    if (ratio > 0)
        snprintf(r, sizeof r, "%.2fx", ratio);
    printf("  %-38s %-16s %-24s %8s  %-11s %s\n", what, measured, reference, r, goal ? goal : "",
           met < 0 ? ""
           : met   ? "MET"
                   : "MISSED");
    if (met >= 0) {
        goals_total++;
        goals_met += met;
    }
}

static char *fmt(char *buf, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(char *buf, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, 64, f, ap);
    va_end(ap);
    return buf;
}

/* ---- 1. hashing ---- */

typedef struct keyset {
    char *bytes;
    uint32_t *off;
    uint8_t *len;
    size_t n;
} keyset;

static void keys_make(keyset *k, size_t n)
{
    k->n = n;
    k->bytes = malloc(n * 16);
    k->off = malloc(n * sizeof *k->off);
    k->len = malloc(n);
    if (!k->bytes || !k->off || !k->len)
        die("out of memory");
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        k->off[i] = (uint32_t)at;
        k->len[i] = (uint8_t)sprintf(k->bytes + at, "key-%zu", i);
        at += k->len[i];
    }
}

static void keys_free(keyset *k)
{
    free(k->bytes);
    free(k->off);
    free(k->len);
    memset(k, 0, sizeof *k);
}

static double time_hash_position(const keyset *k, hasher *h)
{
    uint64_t acc = 0;
    double t0 = bench_now();
    for (size_t i = 0; i < k->n; i++)
        acc += hash_position(h, k->bytes + k->off[i], k->len[i]);
    double t = bench_now() - t0;
    sink += acc;
    return t * 1e9 / (double)k->n;
}

static double time_evp(const keyset *k, const EVP_MD *md, EVP_MD_CTX *ctx)
{
    uint64_t acc = 0;
    unsigned char d[32];
    unsigned int dn;
    double t0 = bench_now();
    for (size_t i = 0; i < k->n; i++) {
        EVP_DigestInit_ex2(ctx, md, NULL);
        EVP_DigestUpdate(ctx, k->bytes + k->off[i], k->len[i]);
        EVP_DigestFinal_ex(ctx, d, &dn);
        acc += (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
    }
    double t = bench_now() - t0;
    sink += acc;
    return t * 1e9 / (double)k->n;
}

static double time_sha256_oneshot(const keyset *k)
{
    uint64_t acc = 0;
    unsigned char d[32];
    double t0 = bench_now();
    for (size_t i = 0; i < k->n; i++) {
        SHA256((const unsigned char *)k->bytes + k->off[i], k->len[i], d);
        acc += d[0];
    }
    double t = bench_now() - t0;
    sink += acc;
    return t * 1e9 / (double)k->n;
}

static void bench_hash(void)
{
    enum { RUNS = 5 };
    keyset k;
    keys_make(&k, NKEYS);
    hasher *h = hasher_new();
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!h || !md || !ctx)
        die("OpenSSL has no SHA-256");
    double hp[RUNS], ev[RUNS], os[RUNS], ratio[RUNS];
    time_evp(&k, md, ctx); /* warm-up */
    for (int r = 0; r < RUNS; r++) {
        /* Alternate the order so that neither always runs first. */
        if (r % 2) {
            hp[r] = time_hash_position(&k, h);
            ev[r] = time_evp(&k, md, ctx);
        } else {
            ev[r] = time_evp(&k, md, ctx);
            hp[r] = time_hash_position(&k, h);
        }
        os[r] = time_sha256_oneshot(&k);
        ratio[r] = hp[r] / ev[r];
    }
    double m = median(ratio, RUNS);
    char a[64], b[64];
    header("1. hashing: 1M strings \"key-N\", ns/key (median of 5)");
    line("hash_position()", fmt(a, "%.1f ns", median(hp, RUNS)),
         fmt(b, "raw EVP %.1f ns", median(ev, RUNS)), m, "<= 1.20x", m <= 1.2);
    line("one-shot SHA256() (info)", fmt(a, "%.1f ns", median(os, RUNS)),
         fmt(b, "raw EVP %.1f ns", median(ev, RUNS)), median(os, RUNS) / median(ev, RUNS), NULL, -1);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    hasher_free(h);
    keys_free(&k);
}

/* ---- 2. successor search ---- */

/* The textbook lower_bound, with the ring's wrap-around. */
static inline size_t lower_bound_wrap(const uint32_t *a, size_t n, uint32_t pos)
{
    size_t lo = 0, len = n;
    while (len > 0) {
        size_t half = len / 2;
        if (a[lo + half] < pos) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo == n ? 0 : lo;
}

/* lower_bound within the bucket of pos's top 16 bits: bidx[b] is the first
 * point at or above b << 16, bidx[65536] = n. */
static inline size_t bucket_successor(const uint32_t *a, size_t n, const uint32_t *bidx, uint32_t pos)
{
    uint32_t b = pos >> 16;
    size_t lo = bidx[b], len = bidx[b + 1] - lo;
    while (len > 0) {
        size_t half = len / 2;
        if (a[lo + half] < pos) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo == n ? 0 : lo;
}

static void bench_successor(void)
{
    enum { RUNS = 7, NODES = 1000, POINTS = 160 };
    hasher *h = hasher_new();
    static char names[NODES][16];
    ring_node nodes[NODES];
    for (int i = 0; i < NODES; i++) {
        nodes[i].len = (size_t)sprintf(names[i], "node-%d", i);
        nodes[i].name = names[i];
        nodes[i].points = POINTS;
    }
    ring *r;
    alg_point *ap;
    size_t np;
    double tb = bench_now();
    if (!h || ring_points(&ap, &np, h, nodes, NODES) || ring_index(&r, ap, np, UINT32_MAX))
        die("ring_points failed");
    tb = bench_now() - tb;
    uint32_t *pts = malloc(np * sizeof *pts);
    uint32_t *q = malloc(NKEYS * sizeof *q);
    if (!pts || !q)
        die("out of memory");
    for (size_t i = 0; i < np; i++)
        pts[i] = (uint32_t)ap[i].coord;
    uint64_t x = 0x9E3779B97F4A7C15ull; /* xorshift64 */
    for (size_t i = 0; i < NKEYS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        q[i] = (uint32_t)(x >> 32);
    }
    /* The two must agree before their speeds mean anything. */
    for (size_t i = 0; i < NKEYS; i += 997)
        if ((size_t)ring_successor(r, q[i]) != lower_bound_wrap(pts, np, q[i]))
            die("ring_successor and lower_bound disagree at %" PRIu32, q[i]);
    /* For information: what a top-bits index in front of the search gives
     * (positions are uniform hashes, so 2^16 buckets hold ~2.4 points each). */
    uint32_t *bidx = malloc(((1u << 16) + 1) * sizeof *bidx);
    if (!bidx)
        die("out of memory");
    for (uint32_t b = 0, i = 0; b <= 1u << 16; b++) {
        while (i < np && (b == 1u << 16 || pts[i] < b << 16))
            i++;
        bidx[b] = i;
    }
    for (size_t i = 0; i < NKEYS; i += 997)
        if ((size_t)ring_successor(r, q[i]) != bucket_successor(pts, np, bidx, q[i]))
            die("bucket search and ring_successor disagree at %" PRIu32, q[i]);
    double rs[RUNS], lb[RUNS], bk[RUNS], ratio[RUNS];
    for (int k = 0; k < RUNS; k++) {
        uint64_t acc = 0;
        double t0 = bench_now();
        for (size_t i = 0; i < NKEYS; i++)
            acc += (uint64_t)ring_successor(r, q[i]);
        rs[k] = (bench_now() - t0) * 1e9 / NKEYS;
        t0 = bench_now();
        for (size_t i = 0; i < NKEYS; i++)
            acc += lower_bound_wrap(pts, np, q[i]);
        lb[k] = (bench_now() - t0) * 1e9 / NKEYS;
        t0 = bench_now();
        for (size_t i = 0; i < NKEYS; i++)
            acc += bucket_successor(pts, np, bidx, q[i]);
        bk[k] = (bench_now() - t0) * 1e9 / NKEYS;
        sink += acc;
        ratio[k] = rs[k] / lb[k];
    }
    char a[64], b[64];
    double m = median(rs, RUNS);
    printf("\n2. successor search: %zu points (1000 nodes x 160), 1M random positions, "
           "ns/lookup (median of %d; ring_points + ring_index took %.0f ms)\n",
           np, RUNS, tb * 1e3);
    line("ring_successor()", fmt(a, "%.1f ns", m), fmt(b, "lower_bound %.1f ns", median(lb, RUNS)),
         median(ratio, RUNS), "<= 50 ns", m <= 50);
    line("2^16-bucket index + search (info)", fmt(a, "%.1f ns", median(bk, RUNS)),
         fmt(b, "lower_bound %.1f ns", median(lb, RUNS)), median(bk, RUNS) / median(lb, RUNS), NULL,
         -1);
    free(bidx);
    free(pts);
    free(q);
    ring_free(r);
    free(ap);
    hasher_free(h);
}

/* ---- 3. key gen against plain C ---- */

#define REF_NODES 10

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* What `ringsim key gen 1000000` does, written plainly: the keys table and
 * its indexes as src/store/store.c creates them, the same pragmas, one
 * transaction, EVP with a reused context, owners by binary search over the
 * ring of node-0 ... node-9 (one point each, node ids 1..10 in order of
 * addition, as ringsim gives them).  Returns 0 or 1. */
static int plain_keygen(const char *path)
{
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char d[32];
    unsigned int dn;
    char buf[32];
    if (!md || !ctx)
        return 1;
    /* The ring: (position << 32 | node id) sorted.  Equal positions among
     * ten points do not happen with these names. */
    uint64_t ring_pts[REF_NODES];
    uint32_t ring_pos[REF_NODES];
    int64_t ring_id[REF_NODES];
    for (int i = 0; i < REF_NODES; i++) {
        int n = sprintf(buf, "node-%d", i);
        EVP_DigestInit_ex2(ctx, md, NULL);
        EVP_DigestUpdate(ctx, buf, (size_t)n);
        EVP_DigestFinal_ex(ctx, d, &dn);
        uint32_t pos = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
        ring_pts[i] = (uint64_t)pos << 32 | (uint64_t)(i + 1);
    }
    qsort(ring_pts, REF_NODES, sizeof *ring_pts, cmp_u64);
    for (int i = 0; i < REF_NODES; i++) {
        ring_pos[i] = (uint32_t)(ring_pts[i] >> 32);
        ring_id[i] = (int64_t)(uint32_t)ring_pts[i];
    }

    /* The same schema as ringsim's by construction: the store creates the
     * file, then the plain loop inserts into its keys table. */
    store *st = NULL;
    rs_error serr;
    if (store_open(&st, path, &serr)) {
        fprintf(stderr, "plain_keygen: %s\n", serr.msg);
        return 1;
    }
    store_close(st);
    sqlite3 *db;
    sqlite3_stmt *ins = NULL;
    int ok = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) ==
                 SQLITE_OK &&
             sqlite3_exec(db,
                          "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                          "PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;"
                          "BEGIN IMMEDIATE",
                          NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(db,
                                "INSERT OR IGNORE INTO keys(key, coord, node) "
                                "VALUES(?1, ?2, ?3)",
                                -1, &ins, NULL) == SQLITE_OK;
    for (uint32_t i = 0; ok && i < NKEYS; i++) {
        int n = sprintf(buf, "key-%u", i);
        EVP_DigestInit_ex2(ctx, md, NULL);
        EVP_DigestUpdate(ctx, buf, (size_t)n);
        EVP_DigestFinal_ex(ctx, d, &dn);
        uint32_t pos = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
        size_t o = lower_bound_wrap(ring_pos, REF_NODES, pos);
        sqlite3_bind_text(ins, 1, buf, n, SQLITE_STATIC);
        /* schema 6: the seed's ring stores its position as the coordinate */
        sqlite3_bind_int64(ins, 2, (int64_t)((uint64_t)pos ^ 0x8000000000000000ull));
        sqlite3_bind_int64(ins, 3, ring_id[o]);
        ok = sqlite3_step(ins) == SQLITE_DONE;
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok)
        fprintf(stderr, "plain_keygen: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    return !ok;
}

/* count, sum(pos), sum(node), sum(length(key)) of the keys table: the two
 * key gens must have written the same rows. */
static void keys_digest(const char *path, int64_t out[4])
{
    sqlite3 *db;
    sqlite3_stmt *s;
    memset(out, 0, 4 * sizeof *out);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT count(*), sum(coalesce(pos, coord - "
                           "(-9223372036854775807 - 1))), sum(node), sum(length(key)) "
                           "FROM keys",
                           -1, &s, NULL) != SQLITE_OK)
        die("cannot read %s: %s", path, sqlite3_errmsg(db));
    if (sqlite3_step(s) == SQLITE_ROW)
        for (int i = 0; i < 4; i++)
            out[i] = sqlite3_column_int64(s, i);
    sqlite3_finalize(s);
    sqlite3_close(db);
}

/* Peak memory figures gathered along the way, for section 6. */
static double rss_keygen[3], rss_plain[3], rss_add_big[MAXRUNS], rss_floor;
static int n_add_big;

static char db_1m[PATH_MAX]; /* kept: 1M keys, 10 nodes, defaults */

static void bench_keygen(void)
{
    enum { RUNS = 3 };
    double rs[RUNS], pl[RUNS], ratio[RUNS];
    char p[PATH_MAX], q[PATH_MAX];
    for (int r = 0; r < RUNS; r++) {
        child c;
        char name[32];
        snprintf(name, sizeof name, "keygen-%d.db", r);
        path_in(p, name);
        for (int i = 0; i < REF_NODES; i++) {
            char node[16];
            snprintf(node, sizeof node, "node-%d", i);
            ringsim(&c, p, "node", "add", node, (char *)NULL);
        }
        path_in(q, "plain.db");
        db_remove(q);
        settle(); /* neither pays for the write-back of the one before */
        for (int k = 0; k < 2; k++) {
            if ((k + r) % 2 == 0) { /* alternate which goes first */
                ringsim(&c, p, "key", "gen", "1000000", (char *)NULL);
                rs[r] = c.wall;
                rss_keygen[r] = c.maxrss;
            } else {
                run_forked(&c, plain_keygen, q);
                pl[r] = c.wall;
                rss_plain[r] = c.maxrss;
            }
            settle();
        }
        ratio[r] = rs[r] / pl[r];
        if (r == 0) {
            int64_t a[4], b[4];
            keys_digest(p, a);
            keys_digest(q, b);
            if (memcmp(a, b, sizeof a) || a[0] != NKEYS)
                die("ringsim and the plain key gen wrote different rows "
                    "(%" PRId64 " vs %" PRId64 " keys)",
                    a[0], b[0]);
            snprintf(db_1m, sizeof db_1m, "%s", p);
        } else {
            db_remove(p);
        }
        db_remove(q);
    }
    char a[64], b[64];
    double m = median(ratio, RUNS);
    header("3. key gen 1000000 on a db with 10 nodes, wall clock (median of 3; "
           "rows checked identical)");
    line("ringsim key gen 1000000", fmt(a, "%.2f s", median(rs, RUNS)),
         fmt(b, "plain C+SQLite %.2f s", median(pl, RUNS)), m, "<= 1.20x", m <= 1.2);
    line("  per key", fmt(a, "%.2f us", median(rs, RUNS) * 1e6 / NKEYS),
         fmt(b, "%.2f us", median(pl, RUNS) * 1e6 / NKEYS), 0, NULL, -1);
}

/* ---- 4. node add ---- */

static char db_big[PATH_MAX]; /* 1M keys, 100 nodes x 160 points */

static void prepare(const char *p, int nodes, const char *keys)
{
    child c;
    db_remove(p);
    ringsim(&c, p, "config", "--points", "160", (char *)NULL);
    for (int i = 0; i < nodes; i++) {
        char node[16];
        snprintf(node, sizeof node, "node-%d", i);
        ringsim(&c, p, "node", "add", node, (char *)NULL);
    }
    ringsim(&c, p, "key", "gen", (char *)keys, (char *)NULL);
}

static long moved_of(const char *out)
{
    const char *m = strstr(out, " keys moved");
    if (!m)
        return -1;
    while (m > out && m[-1] >= '0' && m[-1] <= '9')
        m--;
    return strtol(m, NULL, 10);
}

static void bench_node_add(void)
{
    enum { RUNS = 7 };
    char small[PATH_MAX], work[PATH_MAX];
    double t0 = bench_now();
    path_in(db_big, "big.db");
    path_in(small, "small.db");
    path_in(work, "work.db");
    prepare(db_big, 100, "1000000");
    prepare(small, 10, "100000");
    double prep = bench_now() - t0;
    double big[RUNS], sm[RUNS], ratio[RUNS], cb[RUNS], cs[RUNS], rc[RUNS];
    long mb = 0, ms = 0;
    for (int r = 0; r < RUNS; r++) {
        child c;
        db_copy(db_big, work);
        ringsim(&c, work, "node", "add", "node-new", (char *)NULL);
        big[r] = c.wall;
        cb[r] = c.cpu;
        rss_add_big[n_add_big++] = c.maxrss;
        mb = moved_of(c.out);
        db_copy(small, work);
        ringsim(&c, work, "node", "add", "node-new", (char *)NULL);
        sm[r] = c.wall;
        cs[r] = c.cpu;
        ms = moved_of(c.out);
        ratio[r] = big[r] / sm[r];
        rc[r] = cb[r] / cs[r];
    }
    db_remove(work);
    db_remove(small);
    char a[64], b[64];
    double m = median(ratio, RUNS);
    printf("\n4. node add, 160 points per node, wall clock incl. process start "
           "(median of %d; dbs prepared in %.0f s)\n",
           RUNS, prep);
    line("1M keys, 100 nodes", fmt(a, "%.1f ms", median(big, RUNS) * 1e3),
         fmt(b, "100k keys, 10 nodes %.1f ms", median(sm, RUNS) * 1e3), m, "<= 2.00x", m <= 2);
    line("  CPU time (user + sys, info)", fmt(a, "%.1f ms", median(cb, RUNS) * 1e3),
         fmt(b, "%.1f ms", median(cs, RUNS) * 1e3), median(rc, RUNS), NULL, -1);
    line("  keys moved", fmt(a, "%ld", mb), fmt(b, "%ld", ms), ms > 0 ? (double)mb / (double)ms : 0,
         NULL, -1);
    line("  per key moved", fmt(a, "%.2f us", mb > 0 ? median(big, RUNS) * 1e6 / (double)mb : 0),
         fmt(b, "%.2f us", ms > 0 ? median(sm, RUNS) * 1e6 / (double)ms : 0),
         mb > 0 && ms > 0 ? (median(big, RUNS) / (double)mb) / (median(sm, RUNS) / (double)ms) : 0,
         NULL, -1);
}

/* ---- 5. engine start ---- */

static double time_open(const char *path)
{
    rs_error err;
    sim *s;
    double t0 = bench_now();
    if (sim_open(&s, path, &err))
        die("sim_open %s: %s", path, err.msg);
    sim_close(s);
    return bench_now() - t0;
}

static void bench_start(void)
{
    enum { RUNS = 15, PROC_RUNS = 5 };
    char empty[PATH_MAX];
    path_in(empty, "empty.db");
    time_open(empty); /* creates it */
    time_open(db_1m);
    time_open(db_big);
    double e[RUNS], f[RUNS], g[RUNS], rf[RUNS], rg[RUNS];
    for (int r = 0; r < RUNS; r++) {
        e[r] = time_open(empty);
        f[r] = time_open(db_1m);
        g[r] = time_open(db_big);
        rf[r] = f[r] / e[r];
        rg[r] = g[r] / e[r];
    }
    double pe[PROC_RUNS], pf[PROC_RUNS], pr[PROC_RUNS];
    for (int r = 0; r < PROC_RUNS; r++) {
        child c;
        ringsim(&c, empty, "stats", (char *)NULL);
        pe[r] = c.wall;
        ringsim(&c, db_1m, "stats", (char *)NULL);
        pf[r] = c.wall;
        pr[r] = pf[r] / pe[r];
    }
    char a[64], b[64];
    double m = median(rf, RUNS);
    printf("\n5. engine start: sim_open() + sim_close() in process (median of %d)\n", RUNS);
    line("1M keys, 10 nodes", fmt(a, "%.2f ms", median(f, RUNS) * 1e3),
         fmt(b, "empty db %.2f ms", median(e, RUNS) * 1e3), m, "<= 10.0x", m <= 10);
    line("1M keys, 100 nodes x 160 (info)", fmt(a, "%.2f ms", median(g, RUNS) * 1e3),
         fmt(b, "empty db %.2f ms", median(e, RUNS) * 1e3), median(rg, RUNS), NULL, -1);
    line("`ringsim stats`, 1M keys (info)", fmt(a, "%.2f ms", median(pf, PROC_RUNS) * 1e3),
         fmt(b, "empty db %.2f ms", median(pe, PROC_RUNS) * 1e3), median(pr, PROC_RUNS), NULL, -1);
    db_remove(empty);
}

/* ---- 6. peak memory ---- */

/* One HTTP/1.1 request on a fresh connection; the status, or -1. */
static int http(int port, const char *method, const char *path, const char *body, size_t *bytes)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {120, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     method, path, body ? strlen(body) : 0, body ? body : "");
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char buf[65536], head[16] = "";
    size_t got = 0;
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0) {
        if (got < sizeof head - 1)
            memcpy(head + got, buf,
                   (size_t)k < sizeof head - 1 - got ? (size_t)k : sizeof head - 1 - got);
        got += (size_t)k;
    }
    close(fd);
    *bytes = got;
    int status = -1;
    if (sscanf(head, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    return status;
}

/* `ringsim serve --port 0` on a copy of db, a few requests, SIGTERM. */
static void serve_rss(child *c, const char *db, char *report, size_t rsize)
{
    char work[PATH_MAX];
    path_in(work, "serve.db");
    db_copy(db, work);
    char *argv[] = {ringsim_bin,      (char *)"--db", work, (char *)"serve",
                    (char *)"--port", (char *)"0",    NULL};
    int fd;
    double t0 = bench_now();
    pid_t pid = spawn(argv, &fd);
    /* The first line says where it listens. */
    size_t have = 0;
    int port = 0;
    while (!port && have < sizeof c->out - 1) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 30000) <= 0)
            break;
        ssize_t n = read(fd, c->out + have, sizeof c->out - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        c->out[have] = '\0';
        const char *p = strstr(c->out, "127.0.0.1:");
        if (p && strchr(p, '/'))
            port = atoi(p + strlen("127.0.0.1:"));
    }
    static const struct {
        const char *method, *path, *body;
    } reqs[] = {
        {"GET", "/api/stats", NULL},
        {"GET", "/api/nodes", NULL},
        {"GET", "/api/ring", NULL},
        {"GET", "/api/keys?limit=1000", NULL},
        {"GET", "/api/density?bins=360", NULL},
        {"GET", "/api/operations", NULL},
        {"POST", "/api/nodes", "{\"name\": \"node-serve\"}"},
        {"GET", "/api/stats?at=11", NULL}, /* time travel: replays 1M keys */
    };
    size_t at = 0;
    report[0] = '\0';
    for (size_t i = 0; port && i < sizeof reqs / sizeof reqs[0]; i++) {
        size_t bytes = 0;
        double t = bench_now();
        int st = http(port, reqs[i].method, reqs[i].path, reqs[i].body, &bytes);
        at += (size_t)snprintf(report + at, rsize > at ? rsize - at : 0,
                               "      %-4s %-24s -> %d, %zu bytes, %.0f ms\n", reqs[i].method,
                               reqs[i].path, st, bytes, (bench_now() - t) * 1e3);
    }
    kill(pid, SIGTERM);
    drain(fd, c, have);
    reap(pid, c, t0);
    if (!port)
        die("ringsim serve did not start: %s", c->out);
    db_remove(work);
}

static void bench_memory(void)
{
    child chk, srv;
    char report[2048];
    ringsim(&chk, db_1m, "check", (char *)NULL);
    serve_rss(&srv, db_1m, report, sizeof report);
    double plain = median(rss_plain, 3);
    char a[64], b[64];
    double v;
    printf("\n6. peak memory (ru_maxrss of the child, MB = 10^6 bytes; spawn floor "
           "%.1f MB, this process %.1f MB)\n",
           rss_floor, (double)self_rss_kb() * 1024 / 1e6);
    v = maxof(rss_keygen, 3);
    line("key gen 1000000 (max of 3)", fmt(a, "%.1f MB", v),
         fmt(b, "plain C+SQLite %.1f MB", plain), v / plain, "<= 200 MB", v <= 200);
    v = maxof(rss_add_big, n_add_big);
    line("node add, 1M keys / 100 nodes", fmt(a, "%.1f MB", v),
         fmt(b, "plain C+SQLite %.1f MB", plain), v / plain, "<= 200 MB", v <= 200);
    line("check, 1M keys", fmt(a, "%.1f MB", chk.maxrss), fmt(b, "plain C+SQLite %.1f MB", plain),
         chk.maxrss / plain, "<= 200 MB", chk.maxrss <= 200);
    printf("  %-38s (took %.1f s)\n", "", chk.wall);
    line("serve, 1M keys, 8 requests", fmt(a, "%.1f MB", srv.maxrss),
         fmt(b, "plain C+SQLite %.1f MB", plain), srv.maxrss / plain, "<= 200 MB", srv.maxrss <= 200);
    fputs(report, stdout);
}

/* ---- main ---- */

static void find_binary(const char *argv0)
{
    const char *env = getenv("RINGSIM_BIN");
    if (env && *env) {
        snprintf(ringsim_bin, sizeof ringsim_bin, "%s", env);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            n = (ssize_t)strlen(strncpy(self, argv0, sizeof self - 1));
        self[n] = '\0';
        snprintf(ringsim_bin, sizeof ringsim_bin, "%s/ringsim", dirname(self));
    }
    if (access(ringsim_bin, X_OK))
        die("no ringsim binary at %s (build it, or set RINGSIM_BIN)", ringsim_bin);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_binary(argv[0]);
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/ringsim-bench-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir))
        die("cannot create a folder under %s: %s", t && *t ? t : "/tmp", strerror(errno));
    atexit(cleanup);
    setvbuf(stdout, NULL, _IOLBF, 0);

    double t0 = bench_now();
    printf("ringsim benchmark  (binary %s; %ld cores; ratio = measured / reference)\n", ringsim_bin,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("  %-38s %-16s %-24s %8s  %-11s %s\n", "figure", "measured", "reference", "ratio",
           "goal", "");
    bench_hash();
    bench_successor();
    trim(); /* children must not inherit big pages: see the top comment */
    child c;
    char *truth[] = {(char *)"/bin/true", NULL};
    run(&c, truth);
    rss_floor = c.maxrss;
    bench_keygen();
    bench_node_add();
    bench_start();
    bench_memory();
    printf("\n%d of %d goals met; total %.0f s\n", goals_met, goals_total, bench_now() - t0);
    return 0;
}
