/*
 * bench_place.c - the placement algorithms side by side, and what the engine
 * costs with each, every figure beside a reference measured in the same run.
 *
 *   1. The table users choose from: for each algorithm at 10, 100 and 1000
 *      nodes, the lookup time per key (hash included; median of 5 passes over
 *      100,000 keys), the build time (median of 5), the layout's memory, and
 *      the max/mean load of 100 keys per node.
 *   2. Switching the algorithm at 1M keys / 100 nodes, against generating
 *      those 1M keys (`key gen 1000000` under ring, the same engine call,
 *      the median of three) in the same run.  Goal <= 1.0x (issue 15).
 *   3. A node add at 1M keys / 100 nodes against the same at 100k keys /
 *      10 nodes, for every algorithm whose diff is a set of ranges: the time
 *      per key moved in each, as a ratio, shows whether the cost follows the
 *      keys that move or the keys stored (ketama and nginx move more than
 *      1/(n+1) on a join, as the real clients do, so the raw times are not
 *      comparable).  Median of 3; the node is removed again between runs.
 *      Goal <= 1.5x (issue 15).
 *   4. `key gen 1000000` on a fresh db of 100 nodes under other algorithms
 *      against the same under ring (run before and after them, the mean).
 *      Goal <= 1.2x.
 *
 *   5. (`bench_place --10m` alone, about two minutes) 10M keys / 1000
 *      nodes against 1M keys / 100 nodes in the same run, under ring and
 *      cassandra: `key gen` (1M: median of 3 fresh files; 10M: one run;
 *      goal <= 12x) and a node add per key moved (median of 7; goal <= 2x).
 *
 * `bench_place --table` prints the first part only.
 * Engine calls run in this process on files in a fresh folder under $TMPDIR
 * (or /tmp), removed at the end.  About three minutes on two busy cores.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "place.h"
#include "sim.h"
#include "sim_int.h"
#include "store.h"

#define MAXN 1000

static void node_name(char *out, size_t cap, int i)
{
    snprintf(out, cap, "10.%d.%d.%d:11211", i / 65536, (i / 256) % 256, i % 256 + 1);
}

typedef struct nodeset {
    char names[MAXN][32];
    place_node v[MAXN];
} nodeset;

static void nodes_make(nodeset *ns, int n)
{
    for (int i = 0; i < n; i++) {
        node_name(ns->names[i], sizeof ns->names[i], i);
        ns->v[i] = (place_node){
            .id = i + 1, .name = ns->names[i], .len = strlen(ns->names[i]), .weight = 1};
    }
}

static void config_for(place_config *cfg, const char *alg)
{
    place_config_default(cfg);
    snprintf(cfg->algorithm, sizeof cfg->algorithm, "%s", alg);
    cfg->param[PP_POINTS_PER_NODE] = 160; /* the ring as people run it */
}

static void table(const char *const *algs, size_t nalg)
{
    printf("1. algorithms side by side (lookup includes the key hash)\n");
    printf("  %-11s %6s %11s %11s %12s %9s\n", "algorithm", "nodes", "lookup ns", "build ms",
           "memory", "max/mean");
    static nodeset ns;
    nodes_make(&ns, MAXN);
    hasher *h = hasher_new();
    enum { KEYS = 100000 };
    static char key[KEYS][16];
    static size_t klen[KEYS];
    for (int i = 0; i < KEYS; i++)
        klen[i] = (size_t)snprintf(key[i], sizeof key[i], "key-%d", i);
    static const int sizes[] = {10, 100, 1000};
    for (size_t a = 0; a < nalg; a++)
        for (size_t z = 0; z < 3; z++) {
            int n = sizes[z];
            place_config cfg;
            config_for(&cfg, algs[a]);
            double bt[5], lt[5];
            placement *p = NULL;
            rs_error err;
            for (int r = 0; r < 5; r++) {
                place_free(p);
                double t0 = bench_now();
                if (place_build(&p, h, &cfg, ns.v, (size_t)n, NULL, NULL, &err)) {
                    printf("  %-11s %6d  %s\n", algs[a], n, err.msg);
                    p = NULL;
                    break;
                }
                bt[r] = bench_now() - t0;
            }
            if (!p)
                continue;
            volatile long sink = 0;
            for (int r = 0; r < 5; r++) {
                double t0 = bench_now();
                for (int i = 0; i < KEYS; i++) {
                    place_key_info k;
                    place_key(p, h, key[i], klen[i], &k);
                    sink += k.owner;
                }
                lt[r] = (bench_now() - t0) / KEYS * 1e9;
            }
            /* max/mean at 100 keys per node */
            static int64_t count[MAXN];
            memset(count, 0, sizeof count);
            char buf[32];
            for (int i = 0; i < 100 * n; i++) {
                place_key_info k;
                size_t l = (size_t)snprintf(buf, sizeof buf, "load-%d", i);
                place_key(p, h, buf, l, &k);
                if (k.owner >= 0)
                    count[k.owner]++;
            }
            int64_t mx = 0;
            for (int i = 0; i < n; i++)
                mx = count[i] > mx ? count[i] : mx;
            printf("  %-11s %6d %11.0f %11.3f %12zu %9.2f\n", algs[a], n, bench_median(lt, 5),
                   bench_median(bt, 5) * 1e3, place_memory_bytes(p), (double)mx / 100.0);
            place_free(p);
            (void)sink;
        }
    hasher_free(h);
}

static sim *open_db(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sim *s;
    rs_error err;
    if (sim_open(&s, path, &err)) {
        fprintf(stderr, "bench_place: %s\n", err.msg);
        exit(1);
    }
    return s;
}

static void must(int rc, const rs_error *err, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_place: %s: %s\n", what, err->msg);
        exit(1);
    }
}

static void populate(sim *s, int nodes, uint64_t keys, double *gen_s)
{
    rs_error err;
    int64_t op, ins, skip;
    char name[32];
    for (int i = 0; i < nodes; i++) {
        node_name(name, sizeof name, i);
        must(sim_add_node(s, name, strlen(name), 1, &op, &err), &err, "node add");
    }
    double t0 = bench_now();
    must(sim_generate_keys(s, "key-", 4, 0, keys, &ins, &skip, &op, &err), &err, "key gen");
    if (gen_s)
        *gen_s = bench_now() - t0;
}

static double configure(sim *s, const char *alg)
{
    place_config cfg;
    config_for(&cfg, alg);
    rs_error err;
    int64_t op;
    double t0 = bench_now();
    must(sim_configure(s, &cfg, &op, &err), &err, alg);
    return bench_now() - t0;
}

/* Median of 7 node adds (each undone by a remove, not timed); *moved: the
 * keys the add moved.  They take 10-30 ms: a median of 3 at 10M keys moved
 * from 19.6 to 27.0 ms between two runs of the same build. */
static double node_add(sim *s, int64_t *moved)
{
    double t[7];
    rs_error err;
    int64_t op;
    for (int r = 0; r < 7; r++) {
        double t0 = bench_now();
        must(sim_add_node(s, "10.255.255.1:11211", 18, 1, &op, &err), &err, "node add");
        t[r] = bench_now() - t0;
        store_op o;
        must(store_op_get(sim__store(s), op, &o, &err), &err, "reading the log");
        *moved = o.keys_moved;
        store_op_clear(&o);
        must(sim_remove_node(s, "10.255.255.1:11211", 18, &op, &err), &err, "node rm");
    }
    return bench_median(t, 7);
}

static void remove_db(const char *dir, const char *name)
{
    static const char *const suffix[] = {"", "-wal", "-shm"};
    char path[600];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix[i]);
        unlink(path);
    }
}

/* key gen 1000000 on a fresh db of 100 nodes under alg, in seconds. */
static double keygen_under(const char *dir, const char *alg)
{
    char name[64];
    snprintf(name, sizeof name, "gen-%s.db", alg);
    sim *s = open_db(dir, name);
    rs_error err;
    int64_t op;
    char node[32];
    for (int i = 0; i < 100; i++) {
        node_name(node, sizeof node, i);
        must(sim_add_node(s, node, strlen(node), 1, &op, &err), &err, "node add");
    }
    configure(s, alg);
    double t;
    populate(s, 0, 1000000, &t);
    sim_close(s);
    remove_db(dir, name);
    return t;
}

/* Part 5: 10M keys / 1000 nodes against 1M / 100, each algorithm's keys
 * generated under it (a switch at 10M would take minutes). */
static int large(const char *dir)
{
    static const char *const algs[] = {"ring", "cassandra"};
    int met = 0, total = 0;
    printf("5. 10M keys / 1000 nodes against 1M keys / 100 nodes\n");
    printf("  %-10s %10s %10s %7s   %22s %22s %7s\n", "algorithm", "gen 1M s", "gen 10M s", "ratio",
           "node add 1M/100", "node add 10M/1000", "per key");
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        /* 1M: the median of 3 fresh files (one 10M run costs a minute). */
        double t1[3], tm, tg;
        sim *m = NULL;
        for (int r = 0; r < 3; r++) {
            if (m) {
                sim_close(m);
                remove_db(dir, "m.db");
            }
            m = open_db(dir, "m.db");
            configure(m, algs[a]);
            populate(m, 100, 1000000, &t1[r]);
        }
        tm = bench_median(t1, 3);
        sim *g = open_db(dir, "g.db");
        configure(g, algs[a]);
        populate(g, 1000, 10000000, &tg);
        int64_t mm = 0, gm = 0;
        double am = node_add(m, &mm), ag = node_add(g, &gm);
        double rg = tg / tm, ra = (ag / (double)(gm ? gm : 1)) / (am / (double)(mm ? mm : 1));
        total += 2;
        met += (rg <= 12) + (ra <= 2);
        printf("  %-10s %10.2f %10.2f %6.2fx%s %9.1f ms %6lld mv %9.1f ms %6lld mv %6.2fx%s\n",
               algs[a], tm, tg, rg, rg <= 12 ? "" : "!", am * 1e3, (long long)mm, ag * 1e3,
               (long long)gm, ra, ra <= 2 ? "" : "!");
        sim_close(m);
        sim_close(g);
        remove_db(dir, "m.db");
        remove_db(dir, "g.db");
    }
    printf("  (! over the goal: key gen <= 12x, node add <= 2x per key moved)\n"
           "\ngoals met: %d of %d\n",
           met, total);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const algs[] = {"ring",      "jump",  "rendezvous", "multiprobe",
                                       "ketama",    "nginx", "envoy-ring", "maglev",
                                       "cassandra", "redis", "haproxy",    "twemproxy"};
    size_t nalg = sizeof algs / sizeof algs[0];
    bool ten_m = argc > 1 && !strcmp(argv[1], "--10m");
    if (!ten_m)
        table(algs, nalg);
    if (argc > 1 && !strcmp(argv[1], "--table")) /* the table alone: seconds, not minutes */
        return 0;

    const char *tmp = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/bench-place-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (ten_m) {
        int rc = large(dir);
        rmdir(dir);
        return rc;
    }
    sim *big = open_db(dir, "big.db"), *small = open_db(dir, "small.db");
    double gen;
    populate(big, 100, 1000000, &gen);
    populate(small, 10, 100000, NULL);

    /* The reference: the median of three `key gen 1000000` under ring (the
     * populate above and two on fresh files), not one run: a single one
     * moved from 3.1 to 4.5 s between runs on a quiet machine. */
    double refs[3] = {gen, keygen_under(dir, "ring"), keygen_under(dir, "ring")};
    gen = bench_median(refs, 3);
    printf("\n2. switching the algorithm at 1M keys / 100 nodes, against key gen 1000000 "
           "(median of 3: %.2f s; %.2f / %.2f / %.2f)\n",
           gen, refs[0], refs[1], refs[2]);
    int met = 0, total = 0;
    for (size_t a = 1; a < nalg; a++) {
        double t = configure(big, algs[a]);
        double r = t / gen;
        total++;
        met += r <= 1.0;
        printf("  ring -> %-11s %7.2f s  %5.2fx  %s\n", algs[a], t, r, r <= 1.0 ? "ok" : "over 1.0x");
        configure(big, "ring");
    }

    printf("\n3. node add at 1M keys / 100 nodes against 100k keys / 10 nodes, per key "
           "moved\n");
    static const char *const ranged[] = {"ring",      "ketama", "nginx",   "envoy-ring", "maglev",
                                         "cassandra", "redis",  "haproxy", "twemproxy"};
    for (size_t a = 0; a < sizeof ranged / sizeof ranged[0]; a++) {
        configure(big, ranged[a]);
        configure(small, ranged[a]);
        int64_t bm = 0, mm = 0;
        double b = node_add(big, &bm), m = node_add(small, &mm);
        double r = (b / (double)(bm ? bm : 1)) / (m / (double)(mm ? mm : 1));
        total++;
        met += r <= 1.5;
        printf("  %-11s %8.1f ms (%6lld moved)  %8.1f ms (%6lld moved)  %5.2fx  %s\n", ranged[a],
               b * 1e3, (long long)bm, m * 1e3, (long long)mm, r, r <= 1.5 ? "ok" : "over 1.5x");
    }
    sim_close(big);
    sim_close(small);
    big = small = NULL;

    printf("\n4. key gen 1000000 on a fresh db of 100 nodes, against the same under ring\n");
    static const char *const gens[] = {"ketama", "maglev", "cassandra", "jump"};
    double ring_gen = keygen_under(dir, "ring");
    double tg[sizeof gens / sizeof gens[0]];
    for (size_t a = 0; a < sizeof gens / sizeof gens[0]; a++)
        tg[a] = keygen_under(dir, gens[a]);
    ring_gen = (ring_gen + keygen_under(dir, "ring")) / 2;
    printf("  %-11s %7.2f s\n", "ring", ring_gen);
    for (size_t a = 0; a < sizeof gens / sizeof gens[0]; a++) {
        double r = tg[a] / ring_gen;
        total++;
        met += r <= 1.2;
        printf("  %-11s %7.2f s  %5.2fx  %s\n", gens[a], tg[a], r, r <= 1.2 ? "ok" : "over 1.2x");
    }
    printf("\ngoals met: %d of %d\n", met, total);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_place: could not remove %s\n", dir);
    return 0;
}
