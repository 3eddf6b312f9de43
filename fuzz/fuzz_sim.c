/*
 * fuzz_sim.c - libFuzzer harness for the engine.
 *
 * The input bytes are decoded into a sequence of operations (add or remove
 * a node, with weights; insert, generate or delete keys; configure; reset;
 * revert to an earlier operation; time travel) on a private in-memory
 * simulation.  Refused operations are fine; what must hold after every
 * sequence is what `ringsim check` verifies: every key where the ring says,
 * counters equal to the stored counts, and the log replaying to the stored
 * state.  Any violation aborts, which libFuzzer reports with the input.
 *
 * Build and run: `make fuzz` (clang, -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static unsigned take(input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

/* Small alphabets make collisions between names (and so conflicts,
 * duplicates and removals of existing nodes) likely. */
static size_t node_name(input *in, char *out) { return (size_t)sprintf(out, "n%u", take(in) % 12); }

static size_t key_name(input *in, char *out)
{
    unsigned v = take(in);
    if (v == 255) /* now and then a name that must be refused */
        return (size_t)sprintf(out, "bad\x01");
    return (size_t)sprintf(out, "k%u", v % 64);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim *s;
    rs_error err;
    if (sim_open(&s, ":memory:", &err))
        abort();
    input in = {data, size};
    int64_t op, ins, skip;
    char a[32], b[32];
    static const double weights[] = {1, 0.5, 2, 3, 0.25, 1.5, 0, -1};
    for (int steps = 0; in.n && steps < 40; steps++) {
        switch (take(&in) % 9) {
        case 0:
        case 1: {
            size_t l = node_name(&in, a);
            sim_add_node(s, a, l, weights[take(&in) % 8], &op, &err);
            break;
        }
        case 2: {
            size_t l = node_name(&in, a);
            sim_remove_node(s, a, l, &op, &err);
            break;
        }
        case 3: {
            size_t la = key_name(&in, a), lb = key_name(&in, b);
            sim_str v[] = {{a, la}, {b, lb}};
            sim_insert_keys(s, v, 1 + take(&in) % 2, take(&in) & 1, &ins, &skip, &op, &err);
            break;
        }
        case 4:
            sim_generate_keys(s, "k", 1, take(&in) % 64, take(&in) % 40, &ins, &skip, &op, &err);
            break;
        case 5: {
            size_t la = key_name(&in, a), lb = key_name(&in, b);
            sim_str v[] = {{a, la}, {b, lb}};
            sim_delete_keys(s, v, 1 + take(&in) % 2, &op, &err);
            break;
        }
        case 6: {
            place_config cfg = *sim_config(s);
            cfg.param[PP_POINTS_PER_NODE] = take(&in) % 9; /* 0 is refused */
            sim_configure(s, &cfg, &op, &err);
            break;
        }
        case 7:
            if (take(&in) % 4 == 0)
                sim_reset(s, &op, &err);
            else
                sim_revert(s, take(&in) % (sim_last_op(s) + 2), &op, &err);
            break;
        case 8: { /* time travel must not disturb anything */
            sim *snap = NULL;
            int64_t at = take(&in) % (sim_last_op(s) + 1);
            if (sim_at(s, at, &snap, &err) == 0 && at < sim_last_op(s))
                sim_advance(s, snap, at, sim_last_op(s), &err);
            sim_close(snap);
            break;
        }
        }
    }
    int64_t problems;
    char report[4096];
    if (sim_check(s, &problems, report, sizeof report, &err)) {
        fprintf(stderr, "check failed to run: %s\n", err.msg);
        abort();
    }
    if (problems) {
        fprintf(stderr, "%lld problems:\n%s", (long long)problems, report);
        abort();
    }
    sim_stats st;
    sim_stats_get(s, &st);
    if (st.keys != sim_key_count(s) || (st.nodes == 0 && sim_unassigned(s) != st.keys))
        abort();
    sim_close(s);
    return 0;
}
