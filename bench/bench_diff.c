/*
 * bench_diff.c - the difference between two states, and revert, at a cost
 * that follows what changed (issue 15): at 1M keys / 100 nodes (ring, 160
 * points per node), each figure beside its reference in the same run.
 *
 *   1. revert over a few operations (a node add, a generate of 1,000 new
 *      keys, a delete of 100 keys) against those operations themselves.
 *      Goal <= 2x.
 *   2. diff between the states before and after them (both ways, composed
 *      from the log) against the same operations.  Goal <= 2x.
 *   3. the same diff found by comparing the two states whole (the way
 *      without the log, O(keys)): how much the composition saves.
 *   4-6. through a revert: the diff from after the operations to the
 *      revert of them, a revert back to after them (a redo), and a revert
 *      over the redo, each against the same operations.  Goal <= 2x.
 *
 * Five rounds, medians; each round's operations are new (another node,
 * other keys), and the revert brings the state back.  Files go in a fresh
 * folder under $TMPDIR (or /tmp), removed at the end.
 * Usage: bench_diff [keys] (default 1000000).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "place.h"
#include "sim.h"

#define ROUNDS 5

#define OK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != 0) {                                                                         \
            fprintf(stderr, "bench_diff: %s: %s\n", #call, err.msg);                               \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    uint64_t nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/bench_diff.XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/d.db", dir);
    rs_error err = {0, ""};
    sim *s = NULL;
    sim_history h = SIM_HISTORY_INIT;
    int status = 1;
    int64_t op, ins, skip, moved = 0, work = 0;
    double t_ops[ROUNDS], t_rev[ROUNDS], t_diff[ROUNDS], t_back[ROUNDS], t_states[ROUNDS];
    double t_across[ROUNDS], t_redo[ROUNDS], t_rev2[ROUNDS];
    const char *how = "", *how_states = "", *how_across = "";
    OK(sim_open(&s, path, &err));
    place_config cfg = *sim_config(s);
    cfg.param[PP_POINTS_PER_NODE] = 160;
    OK(sim_configure(s, &cfg, &op, &err));
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "node-%d", i);
        OK(sim_add_node(s, name, strlen(name), 1, &op, &err));
    }
    double t0 = bench_now();
    OK(sim_generate_keys(s, "key-", 4, 0, nkeys, &ins, &skip, &op, &err));
    printf("bench_diff: %llu keys on 100 nodes x 160 points in %.1f s\n", (unsigned long long)nkeys,
           bench_now() - t0);
    for (int r = 0; r < ROUNDS; r++) {
        int64_t before = sim_last_op(s);
        char name[32], pre[32];
        snprintf(name, sizeof name, "extra-%d", r);
        snprintf(pre, sizeof pre, "new-%d-", r);
        /* The operations: a node add, 1,000 new keys, 100 of the old deleted. */
        char kb[100][24];
        sim_str del[100];
        for (int i = 0; i < 100; i++) {
            snprintf(kb[i], sizeof kb[i], "key-%d", r * 1000 + i * 7);
            del[i] = (sim_str){kb[i], strlen(kb[i])};
        }
        t0 = bench_now();
        OK(sim_add_node(s, name, strlen(name), 1, &op, &err));
        OK(sim_generate_keys(s, pre, strlen(pre), 0, 1000, &ins, &skip, &op, &err));
        OK(sim_delete_keys(s, del, 100, &op, &err));
        t_ops[r] = bench_now() - t0;
        int64_t after = sim_last_op(s);
        /* diff, both ways, composed from the log. */
        sim_diff d;
        t0 = bench_now();
        OK(sim_diff_get(s, &h, before, after, 0, 1000, false, &d, &err));
        t_diff[r] = bench_now() - t0;
        how = d.how;
        moved = d.keys_moved;
        work = d.work;
        sim_diff_clear(&d);
        t0 = bench_now();
        OK(sim_diff_get(s, &h, after, before, 0, 1000, false, &d, &err));
        t_back[r] = bench_now() - t0;
        sim_diff_clear(&d);
        /* The same by comparing the two states whole. */
        sim_history_clear(&h);
        t0 = bench_now();
        OK(sim_diff_get(s, &h, before, after, 0, 1000, true, &d, &err));
        t_states[r] = bench_now() - t0;
        how_states = d.how;
        if (d.keys_moved != moved) {
            fprintf(stderr, "bench_diff: the two ways differ: %lld and %lld moves\n",
                    (long long)moved, (long long)d.keys_moved);
            sim_diff_clear(&d);
            goto fail;
        }
        sim_diff_clear(&d);
        sim_history_clear(&h);
        /* Revert over the three. */
        t0 = bench_now();
        OK(sim_revert(s, before, &op, &err));
        t_rev[r] = bench_now() - t0;
        int64_t reverted = sim_last_op(s);
        /* Across the revert: the diff from the state before it, and a
         * revert back to `after` (a redo), both through the revert. */
        t0 = bench_now();
        OK(sim_diff_get(s, &h, after, reverted, 0, 1000, false, &d, &err));
        t_across[r] = bench_now() - t0;
        how_across = d.how;
        sim_diff_clear(&d);
        t0 = bench_now();
        OK(sim_revert(s, after, &op, &err));
        t_redo[r] = bench_now() - t0;
        t0 = bench_now();
        OK(sim_revert(s, before, &op, &err)); /* the state as it was for the next round */
        t_rev2[r] = bench_now() - t0;
        fprintf(
            stderr,
            "round %d: ops %.3f s, diff %.3f / %.3f s, states %.3f s, revert %.3f s, across %.3f "
            "s, redo %.3f s, revert again %.3f s\n",
            r + 1, t_ops[r], t_diff[r], t_back[r], t_states[r], t_rev[r], t_across[r], t_redo[r],
            t_rev2[r]);
    }
    double ops = bench_median(t_ops, ROUNDS), rev = bench_median(t_rev, ROUNDS);
    double dif = bench_median(t_diff, ROUNDS), back = bench_median(t_back, ROUNDS);
    double st = bench_median(t_states, ROUNDS);
    printf("\n| # | measured | median | reference (same run) | median | ratio | goal |\n");
    printf("|---|---|---|---|---|---|---|\n");
    printf("| 1 | revert over 3 operations (node add, 1,000 new keys, 100 deleted) | %.3f s | "
           "those operations | %.3f s | %.2fx | <= 2x |\n",
           rev, ops, rev / ops);
    printf("| 2 | diff before -> after (%s, %lld moves, %lld log entries) | %.3f s | those "
           "operations | %.3f s | %.2fx | <= 2x |\n",
           how, (long long)moved, (long long)work, dif, ops, dif / ops);
    printf("| 2b | diff after -> before (the reverse) | %.3f s | those operations | %.3f s | "
           "%.2fx | <= 2x |\n",
           back, ops, back / ops);
    printf("| 3 | the same diff by comparing states (%s, every key) | %.3f s | the diff of 2 | "
           "%.3f s | %.1fx | |\n",
           how_states, st, dif, st / dif);
    printf("| 4 | diff across a revert (after -> the revert of them; %s) | %.3f s | those "
           "operations | %.3f s | %.2fx | <= 2x |\n",
           how_across, bench_median(t_across, ROUNDS), ops, bench_median(t_across, ROUNDS) / ops);
    printf(
        "| 5 | revert across a revert (back to after them: a redo) | %.3f s | those operations | "
        "%.3f s | %.2fx | <= 2x |\n",
        bench_median(t_redo, ROUNDS), ops, bench_median(t_redo, ROUNDS) / ops);
    printf("| 6 | revert over the redo (3 operations and 2 reverts back) | %.3f s | those "
           "operations | %.3f s | %.2fx | <= 2x |\n",
           bench_median(t_rev2, ROUNDS), ops, bench_median(t_rev2, ROUNDS) / ops);
    status = 0;
fail:
    sim_history_clear(&h);
    sim_close(s);
    char p2[700];
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p2, sizeof p2, "%s%s", path, suffix[i]);
        unlink(p2);
    }
    rmdir(dir);
    return status;
}
