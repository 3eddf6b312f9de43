/*
 * bench_history.c - time travel at scale: sim_history_at at 1M keys / 100
 * nodes (ring, 160 points per node), each figure beside its reference in
 * the same run.
 *
 *   1. One step back over a node add (undo) against that node add itself.
 *      Goal <= 2x.
 *   2. One step forward over the same node add (the engine applies it
 *      again) against the node add.  Goal <= 2x.
 *   3. Jumps, goal < 1 s: back over several operations with the view warm;
 *      and cold (no view yet) to a few operations back, to the state right
 *      after the million keys were generated, and to just before it --
 *      each the engine's cheapest way -- beside a replay of the whole log
 *      (the way every cold jump went before views were copied from the
 *      live database).
 *   4. A jump behind a revert (which neither the live copy nor the view can
 *      undo), from a checkpoint kept right after the generate, beside the
 *      replay of the log it saves.  Goal < 1 s.
 *   5. The cost model's constant: seconds per page copied against seconds
 *      per key of work replayed (COPY_PAGES_PER_KEY in sim_history.c).
 *
 * Five rounds: each adds a node (timed) and one key after it, then moves
 * the view onto the add, one step back and one step forward.  Medians.
 * Files go in a fresh folder under $TMPDIR (or /tmp), removed at the end.
 *   6. (figures 10, 11) NODES nodes x 160 points, 100k keys, one more
 *      node: the state before the generate beside the generate; and the
 *      price of a layout build, bytes per key of work.
 * Usage: bench_history [keys [nodes]] (default 1000000 and 800).
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

#define ROUNDS 5

#define OK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != 0) {                                                                         \
            fprintf(stderr, "bench_history: %s: %s\n", #call, err.msg);                            \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* Figures 10 and 11 (issue 13): NODES nodes x 160 points, 100k keys, one
 * more node.  10: the state before the generate, cold, beside the generate
 * itself (goal: about the generate, not a replay of every node add).  11:
 * the price of a layout build: seconds per byte of layout a replay of the
 * node adds built (the sum over them of place_memory_bytes, growing with
 * the nodes) against seconds per key of the generate -- bytes per key of
 * work, LAYOUT_BYTES_PER_KEY in sim_history.c. */
static int layout_figures(const char *dir, int nodes)
{
    char path[600];
    snprintf(path, sizeof path, "%s/layouts.db", dir);
    rs_error err;
    sim *s = NULL, *v = NULL, *snap = NULL;
    sim_history h = SIM_HISTORY_INIT;
    int64_t op, ins, skip, status = 1;
    const uint64_t nkeys = 100000;
    OK(sim_open(&s, path, &err));
    place_config cfg = *sim_config(s);
    cfg.param[PP_POINTS_PER_NODE] = 160;
    OK(sim_configure(s, &cfg, &op, &err));
    double t0 = bench_now();
    for (int i = 0; i < nodes; i++) {
        char name[32];
        snprintf(name, sizeof name, "node-%d", i);
        OK(sim_add_node(s, name, strlen(name), 1, &op, &err));
    }
    double t_adds = bench_now() - t0;
    int64_t before = sim_last_op(s);
    t0 = bench_now();
    OK(sim_generate_keys(s, "key-", 4, 0, nkeys, &ins, &skip, &op, &err));
    double t_gen = bench_now() - t0;
    OK(sim_add_node(s, "one-more", 8, 1, &op, &err));
    t0 = bench_now();
    OK(sim_history_at(s, &h, before, &v, &err));
    double t_before = bench_now() - t0;
    const char *how = h.how;
    unsigned long long built = (unsigned long long)h.builds;
    /* A replay of the node adds alone (no keys yet): its layouts. */
    t0 = bench_now();
    OK(sim_at(s, before, &snap, &err));
    double t_replay = bench_now() - t0;
    size_t per_node = place_memory_bytes(sim_placement(s)) / sim_node_count(s);
    double bytes = (double)per_node * nodes * (nodes + 1.0) / 2.0;
    double per_byte = t_replay / bytes, per_key = t_gen / (double)nkeys;
    printf("\n%d nodes x 160 points: %d adds in %.2f s; generate of %llu keys %.3f s\n", nodes,
           nodes, t_adds, (unsigned long long)nkeys, t_gen);
    printf("| 10 | the state before the generate, cold (%s, %llu layouts built) | %.3f s | "
           "the generate: %.3f s | %.2fx | about 1x |\n",
           how, built, t_before, t_gen, t_before / t_gen);
    printf("| 11 | replay of the %d node adds (%.0f MB of layouts built) | %.3f s | | | |\n", nodes,
           bytes / 1e6, t_replay);
    printf("layout: %.4f us per byte built; a key of work %.2f us; bytes per key %.0f "
           "(LAYOUT_BYTES_PER_KEY)\n",
           per_byte * 1e6, per_key * 1e6, per_key / per_byte);
    status = 0;
fail:
    sim_close(snap);
    sim_history_clear(&h);
    sim_close(s);
    return (int)status;
}

int main(int argc, char **argv)
{
    uint64_t nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/bench_history.XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/h.db", dir);
    rs_error err = {0, ""};
    sim *s = NULL;
    sim_history h = SIM_HISTORY_INIT, k = SIM_HISTORY_INIT;
    int status = 1;
    int64_t op, ins, skip;
    double t_add[ROUNDS], t_back[ROUNDS], t_fwd[ROUNDS], t0;
    double t_first = 0, t_jump = 0;
    const char *first_how = "";
    OK(sim_open(&s, path, &err));
    place_config cfg = *sim_config(s);
    cfg.param[PP_POINTS_PER_NODE] = 160;
    OK(sim_configure(s, &cfg, &op, &err));
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "node-%d", i);
        OK(sim_add_node(s, name, strlen(name), 1, &op, &err));
    }
    t0 = bench_now();
    OK(sim_generate_keys(s, "key-", 4, 0, nkeys, &ins, &skip, &op, &err));
    int64_t gen_op = op;
    /* A history that keeps checkpoints, as the server's reading worker does. */
    OK(sim_history_checkpoint(s, &k, &err));
    printf("checkpoint after operation %lld: %zu kept\n", (long long)gen_op, k.ncp);
    printf("setup: %llu keys generated in %.2f s\n", (unsigned long long)nkeys, bench_now() - t0);
    int64_t first_add = 0;
    for (int r = 0; r < ROUNDS; r++) {
        char name[32], key[32];
        snprintf(name, sizeof name, "extra-%d", r);
        snprintf(key, sizeof key, "after-%d", r);
        int64_t a;
        t0 = bench_now();
        OK(sim_add_node(s, name, strlen(name), 1, &a, &err));
        t_add[r] = bench_now() - t0;
        if (!first_add)
            first_add = a;
        sim_str k = {key, strlen(key)};
        OK(sim_insert_keys(s, &k, 1, false, &ins, &skip, &op, &err));
        sim *v;
        t0 = bench_now();
        OK(sim_history_at(s, &h, a, &v, &err));
        if (r == 0) {
            t_first = bench_now() - t0;
            first_how = h.how;
        }
        printf("round %d: view at %lld (%s) in %.3f s\n", r, (long long)a, h.how, bench_now() - t0);
        t0 = bench_now();
        OK(sim_history_at(s, &h, a - 1, &v, &err));
        t_back[r] = bench_now() - t0;
        const char *hb = h.how;
        t0 = bench_now();
        OK(sim_history_at(s, &h, a, &v, &err));
        t_fwd[r] = bench_now() - t0;
        printf("round %d: add %.3f s, back %.3f s (%s), forward %.3f s (%s)\n", r, t_add[r],
               t_back[r], hb, t_fwd[r], h.how);
    }
    /* A jump back over every round (2 x ROUNDS operations), view warm. */
    sim *v;
    t0 = bench_now();
    OK(sim_history_at(s, &h, first_add - 1, &v, &err));
    t_jump = bench_now() - t0;
    printf("jump back over %d operations: %.3f s (%s)\n", 2 * ROUNDS - 1, t_jump, h.how);
    /* Cold jumps: a new history each time. */
    int64_t last = sim_last_op(s);
    struct {
        const char *what;
        int64_t at;
        double t;
        const char *how;
    } cold[] = {{"one operation back", last - 1, 0, ""},
                {"back over every round", first_add - 1, 0, ""},
                {"right after the generate", gen_op, 0, ""},
                {"just before the generate", gen_op - 1, 0, ""}};
    for (size_t i = 0; i < sizeof cold / sizeof *cold; i++) {
        sim_history c = SIM_HISTORY_INIT;
        t0 = bench_now();
        OK(sim_history_at(s, &c, cold[i].at, &v, &err));
        cold[i].t = bench_now() - t0;
        cold[i].how = c.how;
        printf("cold jump %s (to %lld): %.3f s (%s)\n", cold[i].what, (long long)cold[i].at,
               cold[i].t, c.how);
        sim_history_clear(&c);
    }
    sim *replayed = NULL;
    t0 = bench_now();
    OK(sim_at(s, last - 1, &replayed, &err));
    double t_replay = bench_now() - t0;
    sim_close(replayed);
    /* Behind a revert: back to before the rounds, then one more node. */
    OK(sim_revert(s, first_add - 1, &op, &err));
    OK(sim_add_node(s, "after-revert", 12, 1, &op, &err));
    int64_t behind = first_add + 2;
    t0 = bench_now();
    OK(sim_history_at(s, &k, behind, &v, &err));
    double t_behind = bench_now() - t0;
    const char *behind_how = k.how;
    printf("jump behind a revert (to %lld): %.3f s (%s)\n", (long long)behind, t_behind, behind_how);
    t0 = bench_now();
    OK(sim_at(s, behind, &replayed, &err));
    double t_behind_replay = bench_now() - t0;
    sim_close(replayed);
    int64_t pages = 0, work = 0;
    OK(store_page_count(sim__store(s), &pages, &err));
    OK(store_ops_work(sim__store(s), 0, last - 1, &work, &err));
    printf("replay of the log to %lld: %.3f s for %lld keys of work; the file: %lld pages\n",
           (long long)(last - 1), t_replay, (long long)work, (long long)pages);
    double ma = bench_median(t_add, ROUNDS), mb = bench_median(t_back, ROUNDS),
           mf = bench_median(t_fwd, ROUNDS);
    printf("\n| # | measured | median | reference (node add) | ratio | goal |\n");
    printf("|---|----------|--------|----------------------|-------|------|\n");
    printf("| 1 | step back over a node add | %.3f s | %.3f s | %.2fx | <= 2x |\n", mb, ma, mb / ma);
    printf("| 2 | step forward over a node add | %.3f s | %.3f s | %.2fx | <= 2x |\n", mf, ma,
           mf / ma);
    printf("| 3 | first view, one operation back (%s) | %.3f s | | | < 1 s |\n", first_how, t_first);
    printf("| 4 | jump back over %d operations, view warm | %.3f s | | | < 1 s |\n", 2 * ROUNDS - 1,
           t_jump);
    for (size_t i = 0; i < sizeof cold / sizeof *cold; i++)
        printf("| %zu | cold jump %s (%s) | %.3f s | replay of the log: %.3f s | %.2fx | < 1 s "
               "|\n",
               5 + i, cold[i].what, cold[i].how, cold[i].t, t_replay, cold[i].t / t_replay);
    printf("| 9 | jump behind a revert (%s) | %.3f s | replay of the log: %.3f s | %.2fx | < 1 s "
           "|\n",
           behind_how, t_behind, t_behind_replay, t_behind / t_behind_replay);
    /* The cost model: the cold jump one operation back is the copy and
     * the undo of one single-key insert. */
    double per_page = cold[0].t / (double)pages, per_key = t_replay / (double)work;
    printf("\ncopy: %.2f us per page; replay: %.2f us per key of work; pages per key %.1f "
           "(COPY_PAGES_PER_KEY)\n",
           per_page * 1e6, per_key * 1e6, per_key / per_page);
    if (layout_figures(dir, argc > 2 ? atoi(argv[2]) : 800))
        goto fail;
    status = 0;
fail:
    sim_history_clear(&h);
    sim_history_clear(&k);
    sim_close(s);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_history: could not remove %s\n", dir);
    return status;
}
