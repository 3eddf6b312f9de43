/*
 * redis_tool.c - what ringsim's redis core answers, for tests/ref/redis_ref.sh
 * to hold against the real redis-server and redis-cli.
 *
 *   redis_tool gen SEED COUNT      COUNT random keys as hex, one a line
 *                                  (braces, UTF-8 and any byte, lengths
 *                                  1..40), from a fixed-seed xorshift
 *   redis_tool slot                hex keys on stdin -> their slots
 *   redis_tool create N            the map of redis_create(N)
 *   redis_tool join N              map of N nodes on stdin -> redis_join
 *   redis_tool leave N L           map of N nodes on stdin -> redis_leave
 *   redis_tool rebalance N ORDER WEIGHTS
 *                                  map of N nodes on stdin -> redis_rebalance
 *                                  with ORDER ("2,0,1": redis-cli's list
 *                                  order as ordinals) and WEIGHTS ("1,0,1",
 *                                  by ordinal)
 *   redis_tool orders N WEIGHTS    map on stdin: how many different maps
 *                                  redis_rebalance gives over every list
 *                                  order (N <= 8; counting stops at 64);
 *                                  1 = redis-cli's result does not depend
 *                                  on its node-ID order
 *   redis_tool counts N            map on stdin -> slot count of each node
 *
 * Maps are redis_format's text on one line; join, leave and rebalance print
 * the new map, then "moved M".  Exit status 0, or 1 with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_redis.h"

static char text[REDIS_TEXT_MAX + 2];

static int die(const char *msg)
{
    fprintf(stderr, "redis_tool: %s\n", msg);
    return 1;
}

static int read_map(size_t n, uint32_t *owner)
{
    if (!fgets(text, sizeof text, stdin))
        return die("no map on stdin");
    size_t len = strcspn(text, "\r\n");
    rs_error err = {0};
    if (redis_parse(text, len, n, owner, &err))
        return die(err.msg);
    return 0;
}

static void print_map(const uint32_t *owner)
{
    redis_format(owner, text, sizeof text);
    puts(text);
}

/* "a,b,c" -> n numbers; 0 or -1. */
static int parse_list(const char *s, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        char *end;
        out[i] = strtod(s, &end);
        if (end == s || (*end != (i + 1 < n ? ',' : '\0')))
            return -1;
        s = end + 1;
    }
    return 0;
}

static uint64_t rng;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static int gen(uint64_t seed, long count)
{
    static const char *pieces[] = {"{",    "}", "{}", "é", "中", "😀",  "user",
                                   "1000", ".", ":",  "a", "Z",  "{{", "}}"};
    rng = seed * 2654435761u + 88172645463325252ull;
    for (long k = 0; k < count; k++) {
        unsigned char key[200];
        size_t len = 0, want = 1 + rnd() % 40;
        while (len < want) {
            uint32_t r = rnd() % 10;
            if (r < 4) {
                key[len++] = (unsigned char)(0x20 + rnd() % 95); /* ASCII */
            } else if (r < 8) {
                const char *p = pieces[rnd() % (sizeof pieces / sizeof *pieces)];
                size_t pl = strlen(p);
                memcpy(key + len, p, pl);
                len += pl;
            } else {
                key[len++] = (unsigned char)(rnd() % 256); /* any byte */
            }
        }
        for (size_t i = 0; i < len; i++)
            printf("%02x", key[i]);
        putchar('\n');
    }
    return 0;
}

static int slots(void)
{
    static char line[1024];
    char key[512];
    while (fgets(line, sizeof line, stdin)) {
        size_t hl = strcspn(line, "\r\n"), len = 0;
        if (hl % 2 || hl / 2 > sizeof key)
            return die("bad hex key");
        for (size_t i = 0; i < hl; i += 2) {
            unsigned v;
            if (sscanf(line + i, "%2x", &v) != 1)
                return die("bad hex key");
            key[len++] = (char)v;
        }
        printf("%u\n", redis_slot(key, len));
    }
    return 0;
}

/* Every permutation of order[k..n), by swaps, recursively. */
typedef struct perm_state {
    const uint32_t *start;
    size_t n;
    const float *w;
    uint32_t order[8];
    uint32_t (*seen)[REDIS_SLOTS];
    size_t nseen, cap;
} perm_state;

static void try_order(perm_state *st)
{
    static uint32_t map[REDIS_SLOTS];
    memcpy(map, st->start, sizeof map);
    if (redis_rebalance(map, st->n, st->w, st->order) < 0) {
        fprintf(stderr, "redis_tool: rebalance failed\n");
        exit(1);
    }
    for (size_t i = 0; i < st->nseen; i++)
        if (!memcmp(st->seen[i], map, sizeof map))
            return;
    if (st->nseen < st->cap)
        memcpy(st->seen[st->nseen++], map, sizeof map);
}

static void permute(perm_state *st, size_t k)
{
    if (k == st->n) {
        try_order(st);
        return;
    }
    for (size_t i = k; i < st->n; i++) {
        uint32_t t = st->order[k];
        st->order[k] = st->order[i];
        st->order[i] = t;
        permute(st, k + 1);
        st->order[i] = st->order[k];
        st->order[k] = t;
    }
}

int main(int argc, char **argv)
{
    static uint32_t owner[REDIS_SLOTS];
    if (argc < 2)
        return die("usage: see the comment atop redis_tool.c");
    const char *cmd = argv[1];
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    int moved;

    if (!strcmp(cmd, "gen") && argc == 4)
        return gen(strtoull(argv[2], NULL, 10), strtol(argv[3], NULL, 10));
    if (!strcmp(cmd, "slot") && argc == 2)
        return slots();
    if (!strcmp(cmd, "create") && argc == 3) {
        if (redis_create(n, owner))
            return die("create failed");
        print_map(owner);
        return 0;
    }
    if (n < 1 || n > REDIS_MAX_NODES)
        return die("bad node count");
    if (!strcmp(cmd, "counts") && argc == 3) {
        static uint32_t count[REDIS_MAX_NODES];
        if (read_map(n, owner))
            return 1;
        redis_counts(owner, n, count);
        for (size_t i = 0; i < n; i++)
            printf("%s%u", i ? " " : "", count[i]);
        putchar('\n');
        return 0;
    }
    if (!strcmp(cmd, "join") && argc == 3) {
        if (read_map(n, owner))
            return 1;
        moved = redis_join(owner, n);
    } else if (!strcmp(cmd, "leave") && argc == 4) {
        if (read_map(n, owner))
            return 1;
        moved = redis_leave(owner, n, (uint32_t)strtoul(argv[3], NULL, 10));
    } else if ((!strcmp(cmd, "rebalance") && argc == 5) || (!strcmp(cmd, "orders") && argc == 4)) {
        int orders = !strcmp(cmd, "orders");
        static double o[REDIS_MAX_NODES], w[REDIS_MAX_NODES];
        static float wf[REDIS_MAX_NODES];
        static uint32_t order[REDIS_MAX_NODES];
        if ((orders && n > 8) || (!orders && parse_list(argv[3], n, o)) ||
            parse_list(argv[orders ? 3 : 4], n, w))
            return die("bad ORDER or WEIGHTS");
        for (size_t i = 0; i < n; i++) {
            order[i] = orders ? (uint32_t)i : (uint32_t)o[i];
            wf[i] = (float)w[i]; /* redis-cli: float w = atof(...) */
        }
        if (read_map(n, owner))
            return 1;
        if (orders) {
            static uint32_t seen[64][REDIS_SLOTS]; /* distinct maps kept */
            perm_state st = {.start = owner, .n = n, .w = wf, .seen = seen, .cap = 64};
            memcpy(st.order, order, n * sizeof *order);
            permute(&st, 0);
            printf("%zu\n", st.nseen);
            return 0;
        }
        moved = redis_rebalance(owner, n, wf, order);
    } else {
        return die("usage: see the comment atop redis_tool.c");
    }
    if (moved < 0)
        return die("the core refused the operation");
    print_map(owner);
    printf("moved %d\n", moved);
    return 0;
}
