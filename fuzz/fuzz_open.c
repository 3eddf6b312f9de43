/*
 * fuzz_open.c - libFuzzer harness: opening damaged databases.
 *
 * At start, a small valid ringsim file is made with the engine (nodes,
 * weights, generated and listed keys, a configure, a delete, a revert) and
 * kept in memory.  Each input damages a copy of it: the first two bytes
 * choose a length to cut the file to (0xFFFF: no cut), then every 5 bytes
 * are (offset, 32-bit little-endian; byte) and XOR that byte into the file.
 * The copy is written to a temporary file and opened; when that works,
 * check runs and a few reads and one write follow.  Any answer is fine --
 * errors are expected -- but never a crash, a sanitizer report, a leak or a
 * hang: long replays of a damaged log are cut short through the progress
 * callback (cancellation).
 *
 * Build and run: `make fuzz-open` (clang, -fsanitize=fuzzer,address,undefined).
 * The harness keeps the seed file in a static buffer made once at start.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sim.h"

static unsigned char *seed;
static size_t seed_len;
static char dir[64], path[96];

static void die(const char *what, const rs_error *err)
{
    fprintf(stderr, "fuzz_open: %s: %s\n", what, err ? err->msg : "");
    abort();
}

static void remove_files(void)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[128];
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

static void make_seed(void)
{
    rs_error err;
    sim *s;
    int64_t op, ins, skip;
    remove_files();
    if (sim_open(&s, path, &err))
        die("creating the seed", &err);
    const char *nodes[] = {"alpha", "bravo", "charlie", "d\xc3\xa9lta"};
    for (int i = 0; i < 4; i++)
        if (sim_add_node(s, nodes[i], strlen(nodes[i]), 1 + i * 0.5, &op, &err))
            die("add_node", &err);
    if (sim_generate_keys(s, "key-", 4, 0, 300, &ins, &skip, &op, &err))
        die("generate", &err);
    sim_str list[] = {{"x", 1}, {"y/z", 3}, {"k\xe2\x98\x83", 4}};
    if (sim_insert_keys(s, list, 3, false, &ins, &skip, &op, &err))
        die("insert", &err);
    place_config cfg = *sim_config(s);
    cfg.param[PP_POINTS_PER_NODE] = 5;
    if (sim_configure(s, &cfg, &op, &err))
        die("configure", &err);
    if (sim_delete_keys(s, list, 1, &op, &err) || sim_remove_node(s, "bravo", 5, &op, &err))
        die("delete", &err);
    if (sim_revert(s, 5, &op, &err) || sim_add_node(s, "echo", 4, 2, &op, &err))
        die("revert", &err);
    sim_close(s); /* the last connection: the WAL goes into the file */
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) || (seed_len = (size_t)ftell(f)) == 0 || fseek(f, 0, SEEK_SET) ||
        !(seed = malloc(seed_len)) || fread(seed, 1, seed_len, f) != seed_len)
        die("reading the seed", NULL);
    fclose(f);
}

static void cleanup(void)
{
    remove_files();
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/ringsim-fuzz-open-%ld", (long)getpid());
    snprintf(path, sizeof path, "%s/f.db", dir);
    if (mkdir(dir, 0700) && access(dir, W_OK))
        die("making the temporary folder", NULL);
    atexit(cleanup);
    make_seed();
    return 0;
}

/* Stop replays of a damaged log that would insert millions of keys. */
static int budget(void *ud, const char *what, uint64_t done, uint64_t total)
{
    (void)what, (void)done, (void)total;
    return ++*(int *)ud > 64;
}

static int count_key(void *ud, const char *key, size_t len, uint32_t pos, const char *node,
                     size_t node_len)
{
    (void)key, (void)len, (void)pos, (void)node, (void)node_len;
    ++*(int *)ud;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len = seed_len;
    if (size >= 2) {
        unsigned cut = (unsigned)data[0] | (unsigned)data[1] << 8;
        if (cut != 0xFFFF)
            len = (size_t)((uint64_t)seed_len * cut / 0xFFFF);
        data += 2;
        size -= 2;
    }
    unsigned char *copy = malloc(seed_len);
    if (!copy)
        return 0;
    memcpy(copy, seed, seed_len);
    for (; size >= 5; data += 5, size -= 5) {
        uint32_t off = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                       (uint32_t)data[3] << 24;
        copy[off % seed_len] ^= data[4];
    }
    remove_files();
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(copy, 1, len, f) != len)
        die("writing the damaged file", NULL);
    fclose(f);
    free(copy);

    sim *s;
    rs_error err;
    if (sim_open(&s, path, &err) == 0) {
        int calls = 0, n = 0;
        int64_t problems, total, op;
        char report[4096];
        sim_set_progress(s, budget, &calls);
        sim_check(s, &problems, report, sizeof report, &err);
        sim_node_view *v;
        size_t nv;
        if (sim_nodes(s, &v, &nv, &err) == 0)
            free(v);
        sim_stats st;
        sim_stats_get(s, &st);
        sim_keys_page(s, NULL, 0, "key-1", 5, 0, 50, &total, count_key, &n, &err);
        sim_lookup_result lr;
        sim_lookup(s, "key-7", 5, &lr, &err);
        int64_t last = sim_last_op(s);
        sim *snap = NULL;
        calls = 0;
        if (last > 0 && sim_at(s, last / 2, &snap, &err) == 0)
            sim_close(snap);
        calls = 0;
        sim_add_node(s, "fuzz", 4, 1, &op, &err);
        sim_close(s);
    }
    return 0;
}
