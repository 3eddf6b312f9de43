/*
 * alg_redis.c - Redis Cluster's hash slots and redis-cli's slot moves.
 *
 * Written from redis 7.0.15: src/crc16.c, src/cluster.c keyHashSlot(), and
 * src/redis-cli.c clusterManagerCommandCreate(),
 * clusterManagerCommandRebalance() and clusterManagerComputeReshardTable().
 * The arithmetic keeps redis-cli's types (float cursor and weights, int
 * balances, a double percentage stored in a float) because they decide
 * where the ranges end.  See alg_redis.h for the rules and the quirks.
 *
 * The rebalance replays redis-cli's loop: expected counts, leftover
 * distribution, a stable sort by balance, then two indexes walking in from
 * both ends and moving min(|dst balance|, src balance) slots at a time, the
 * giver's lowest slots first.  A giver only ever loses slots from its low
 * end, so a per-node cursor finds the next slot to give in amortised O(1):
 * the whole rebalance is O(16384 + n log n), in place.
 */
#include "alg_redis.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "redis-cli's float arithmetic is reproduced for FLT_EVAL_METHOD == 0 only"
#endif

/* ---- keys ---------------------------------------------------------------- */

/* The CRC16/XMODEM table (poly 0x1021), as Redis's crc16.c carries it:
 * entry b is the CRC of the byte b.  A literal (the macros that built it
 * from the polynomial cost clang 45 s and 2 GB a compile, and clang-tidy
 * minutes); tests/test_alg_redis.c recomputes every entry bit by bit. */
static const uint16_t crc_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7, 0x8108, 0x9129, 0xa14a, 0xb16b,
    0xc18c, 0xd1ad, 0xe1ce, 0xf1ef, 0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
    0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de, 0x2462, 0x3443, 0x0420, 0x1401,
    0x64e6, 0x74c7, 0x44a4, 0x5485, 0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4, 0xb75b, 0xa77a, 0x9719, 0x8738,
    0xf7df, 0xe7fe, 0xd79d, 0xc7bc, 0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b, 0x5af5, 0x4ad4, 0x7ab7, 0x6a96,
    0x1a71, 0x0a50, 0x3a33, 0x2a12, 0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
    0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41, 0xedae, 0xfd8f, 0xcdec, 0xddcd,
    0xad2a, 0xbd0b, 0x8d68, 0x9d49, 0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78, 0x9188, 0x81a9, 0xb1ca, 0xa1eb,
    0xd10c, 0xc12d, 0xf14e, 0xe16f, 0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e, 0x02b1, 0x1290, 0x22f3, 0x32d2,
    0x4235, 0x5214, 0x6277, 0x7256, 0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
    0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405, 0xa7db, 0xb7fa, 0x8799, 0x97b8,
    0xe75f, 0xf77e, 0xc71d, 0xd73c, 0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab, 0x5844, 0x4865, 0x7806, 0x6827,
    0x18c0, 0x08e1, 0x3882, 0x28a3, 0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
    0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92, 0xfd2e, 0xed0f, 0xdd6c, 0xcd4d,
    0xbdaa, 0xad8b, 0x9de8, 0x8dc9, 0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8, 0x6e17, 0x7e36, 0x4e55, 0x5e74,
    0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

uint16_t redis_crc16(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++)
        crc = (uint16_t)(crc << 8) ^ crc_table[((crc >> 8) ^ p[i]) & 0xFFu];
    return crc;
}

size_t redis_hashed_part(const char *key, size_t len, size_t *off)
{
    size_t s, e;
    *off = 0;
    for (s = 0; s < len; s++)
        if (key[s] == '{')
            break;
    if (s == len)
        return len;
    for (e = s + 1; e < len; e++)
        if (key[e] == '}')
            break;
    if (e == len || e == s + 1)
        return len;
    *off = s + 1;
    return e - s - 1;
}

uint16_t redis_slot(const char *key, size_t len)
{
    size_t off, n = redis_hashed_part(key, len, &off);
    return redis_crc16(key + off, n) & 0x3FFFu;
}

/* ---- the slot map -------------------------------------------------------- */

int redis_check_nodes(const alg_node *nodes, size_t n, rs_error *err)
{
    if (n > REDIS_MAX_NODES)
        return rs_fail(err, RINGSIM_EPARAM, "redis holds at most %u nodes (one per hash slot)",
                       REDIS_MAX_NODES);
    for (size_t i = 0; i < n; i++)
        if (nodes[i].weight != 1.0)
            return rs_fail(err, RINGSIM_EPARAM, "redis does not use weights: \"%.*s\" has %g",
                           (int)(nodes[i].len > 255 ? 255 : nodes[i].len), nodes[i].name,
                           nodes[i].weight);
    return 0;
}

/* clusterManagerCommandCreate's split, masters_count = n: calls put(i,
 * first, last) for each master and returns 0, or -1 as soon as a range
 * leaves 0..16383 (redis-cli would write past its slot array there). */
static int create_split(size_t n, uint32_t *owner)
{
    float slots_per_node = (float)REDIS_SLOTS / (float)n;
    long first = 0;
    float cursor = 0.0f;
    for (size_t i = 0; i < n; i++) {
        long last = lround(
            (double)(cursor + slots_per_node - 1)); /* redis-cli: a float sum, rounded as a double */
        if (last > (long)REDIS_SLOTS || i == n - 1)
            last = REDIS_SLOTS - 1;
        if (last < first)
            last = first;
        if (last >= (long)REDIS_SLOTS)
            return -1;
        if (owner)
            for (long j = first; j <= last; j++)
                owner[j] = (uint32_t)i;
        first = last + 1;
        cursor += slots_per_node;
    }
    return 0;
}

int redis_check_create(size_t n, rs_error *err)
{
    if (n < 1 || n > REDIS_MAX_NODES)
        return rs_fail(err, RINGSIM_EPARAM, "redis needs 1 to %u nodes to split the slots, not %zu",
                       REDIS_MAX_NODES, n);
    if (create_split(n, NULL))
        return rs_fail(err, RINGSIM_EPARAM,
                       "redis-cli --cluster create cannot split the slots over "
                       "%zu nodes: its float arithmetic runs past slot 16383 "
                       "before the last node",
                       n);
    return 0;
}

int redis_create(size_t n, uint32_t owner[REDIS_SLOTS])
{
    if (redis_check_create(n, NULL))
        return RINGSIM_EPARAM;
    create_split(n, owner);
    return 0;
}

void redis_counts(const uint32_t owner[REDIS_SLOTS], size_t n, uint32_t *count)
{
    memset(count, 0, n * sizeof *count);
    for (size_t s = 0; s < REDIS_SLOTS; s++)
        if (owner[s] < n)
            count[owner[s]]++;
}

/* One node of redis-cli's list during a rebalance. */
typedef struct rb_node {
    uint32_t ord; /* ordinal */
    uint32_t pos; /* place in redis-cli's list: the sort's tie order */
    int slots;    /* slots_count */
    int balance;  /* slots to lose (> 0) or gain (< 0) */
    int start;    /* balance before the moves */
    int given;    /* slots given so far */
    float weight;
    uint32_t next; /* the giver's cursor: no slot of its below this */
} rb_node;

/* qsort with clusterManagerCompareNodeBalance made stable, as glibc's merge
 * sort is: equal balances keep list order. */
static int by_balance(const void *a, const void *b)
{
    const rb_node *x = a, *y = b;
    if (x->balance != y->balance)
        return x->balance < y->balance ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* count[0..n) = slots of each node; -1 if an owner is >= n. */
static int count_owned(const uint32_t owner[REDIS_SLOTS], size_t n, uint32_t *count)
{
    memset(count, 0, n * sizeof *count);
    for (size_t s = 0; s < REDIS_SLOTS; s++) {
        if (owner[s] >= n)
            return -1;
        count[owner[s]]++;
    }
    return 0;
}

/* The moves of the sorted list v: receivers from the start, givers from the
 * end, min(|dst balance|, |src balance|) slots a time.  With move == 0 only
 * the balances walk, and the walk fails (-1) where redis-cli's would ("***
 * Assertion failed: Reshard table != number of slots"): a giver asked for
 * more slots than it holds, which only weights whose float products round
 * up can cause.  With move == 1 the slots change owner: each giver's lowest
 * first (clusterManagerComputeReshardTable with one source; redis-cli
 * updates its slot bitmap as it moves, and a giver only ever loses slots
 * from the low end, so its cursor never looks back).  Returns the number
 * of slots moved.  The walk ends: the receiver's balance, <= 0, rises at
 * every step that moves anything, and a step that moves nothing advances an
 * index. */
static int walk(rb_node *v, size_t n, uint32_t owner[REDIS_SLOTS], int move)
{
    int moved = 0;
    for (size_t i = 0; i < n; i++) {
        v[i].balance = v[i].start;
        v[i].given = 0;
    }
    size_t dst_idx = 0, src_idx = n - 1;
    while (dst_idx < src_idx) {
        rb_node *dst = &v[dst_idx], *src = &v[src_idx];
        int db = abs(dst->balance), sb = abs(src->balance);
        int numslots = db < sb ? db : sb;
        if (numslots > src->slots - src->given)
            return -1;
        src->given += numslots;
        for (int k = 0; move && k < numslots && src->next < REDIS_SLOTS; src->next++)
            if (owner[src->next] == src->ord) {
                owner[src->next] = dst->ord;
                k++;
            }
        moved += numslots;
        dst->balance += numslots;
        src->balance -= numslots;
        if (dst->balance == 0)
            dst_idx++;
        if (src->balance == 0)
            src_idx--;
    }
    return moved;
}

int redis_rebalance(uint32_t owner[REDIS_SLOTS], size_t n, const float *weight, const uint32_t *order)
{
    if (n < 1 || n > REDIS_MAX_NODES)
        return RINGSIM_EPARAM;
    rb_node *v = calloc(n, sizeof *v);
    uint32_t *count = malloc(n * sizeof *count);
    int rc = RINGSIM_ENOMEM;
    if (!v || !count)
        goto fail_alloc;
    rc = RINGSIM_EPARAM;
    if (count_owned(owner, n, count))
        goto fail_alloc;

    /* The list in redis-cli's order; total weight summed in that order. */
    float total_weight = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t o = order ? order[i] : (uint32_t)i;
        if (o >= n || count[o] == UINT32_MAX)
            goto fail_alloc;
        float w = weight ? weight[o] : 1.0f;
        if (!(w >= 0) || isinf(w))
            goto fail_alloc;
        v[i] = (rb_node){.ord = o, .pos = (uint32_t)i, .slots = (int)count[o], .weight = w};
        count[o] = UINT32_MAX; /* seen: order must be a permutation */
        total_weight += w;
    }
    if (!(total_weight > 0) || isinf(total_weight))
        goto fail_alloc;

    /* Balances and the threshold. */
    int threshold_reached = 0, total_balance = 0;
    const float threshold = REDIS_THRESHOLD;
    for (size_t i = 0; i < n; i++) {
        rb_node *x = &v[i];
        int expected = (int)(((float)REDIS_SLOTS / total_weight) * x->weight);
        x->balance = x->slots - expected;
        total_balance += x->balance;
        int over = 0;
        if (x->slots > 0) {
            float err_perc = (float)fabs((100 - (100.0 * expected / x->slots))); /* as redis-cli */
            if (err_perc > threshold)
                over = 1;
        } else if (expected > 1) {
            over = 1;
        }
        if (over)
            threshold_reached = 1;
    }
    if (!threshold_reached) {
        rc = 0; /* "No rebalancing needed!" */
        goto fail_alloc;
    }
    /* The leftover of the rounding: redis-cli walks the list again and again
     * taking one slot off the balance of each node at or below 0 until none
     * is left.  Those nodes stay eligible and no other becomes so: q whole
     * walks, then the first r of them in list order once more.  O(n). */
    if (total_balance > 0) {
        int eligible = 0;
        for (size_t i = 0; i < n; i++)
            eligible += v[i].balance <= 0;
        if (eligible == 0) /* redis-cli would loop forever */
            goto fail_alloc;
        int q = total_balance / eligible, r = total_balance % eligible;
        for (size_t i = 0; i < n; i++)
            if (v[i].balance <= 0)
                v[i].balance -= q + (r-- > 0);
    }
    qsort(v, n, sizeof *v, by_balance);
    for (size_t i = 0; i < n; i++)
        v[i].start = v[i].balance;

    /* Walk once on the balances (owner stays intact if redis-cli would fail
     * midway), then move. */
    if (walk(v, n, owner, 0) < 0)
        goto fail_alloc;
    rc = walk(v, n, owner, 1);
fail_alloc:
    free(count);
    free(v);
    return rc;
}

int redis_join(uint32_t owner[REDIS_SLOTS], size_t n_before)
{
    if (n_before >= REDIS_MAX_NODES)
        return RINGSIM_EPARAM;
    if (n_before == 0) {
        redis_create(1, owner);
        return (int)REDIS_SLOTS;
    }
    /* add-node: the newcomer is an empty master at the end of the list. */
    return redis_rebalance(owner, n_before + 1, NULL, NULL);
}

int redis_leave(uint32_t owner[REDIS_SLOTS], size_t n, uint32_t leaving)
{
    if (n < 2 || n > REDIS_MAX_NODES || leaving >= n)
        return RINGSIM_EPARAM;
    int moved = 0;
    size_t held = 0;
    for (size_t s = 0; s < REDIS_SLOTS; s++) {
        if (owner[s] >= n)
            return RINGSIM_EPARAM;
        held += owner[s] == leaving;
    }
    if (held > 0) {
        float *w = malloc(n * sizeof *w);
        if (!w)
            return RINGSIM_ENOMEM;
        for (size_t i = 0; i < n; i++)
            w[i] = i == leaving ? 0.0f : 1.0f;
        moved = redis_rebalance(owner, n, w, NULL);
        free(w);
        if (moved < 0)
            return moved;
    }
    /* del-node; the caller drops the node from its array. */
    for (size_t s = 0; s < REDIS_SLOTS; s++)
        if (owner[s] > leaving)
            owner[s]--;
    return moved;
}

/* ---- ranges, text -------------------------------------------------------- */

/* The last slot of the run of equal owners that starts at s. */
static size_t run_end(const uint32_t owner[REDIS_SLOTS], size_t s)
{
    size_t e = s;
    while (e + 1 < REDIS_SLOTS && owner[e + 1] == owner[s])
        e++;
    return e;
}

/* The maximal runs, all of them or node's only: redis_runs and
 * redis_node_runs. */
static size_t runs_of(const uint32_t owner[REDIS_SLOTS], bool all, uint32_t node, redis_run *out,
                      size_t cap)
{
    size_t total = 0;
    for (size_t s = 0, e; s < REDIS_SLOTS; s = e + 1) {
        e = run_end(owner, s);
        if (!all && owner[s] != node)
            continue;
        if (total < cap)
            out[total] = (redis_run){(uint16_t)s, (uint16_t)e, owner[s]};
        total++;
    }
    return total;
}

size_t redis_node_runs(const uint32_t owner[REDIS_SLOTS], uint32_t node, redis_run *out, size_t cap)
{
    return runs_of(owner, false, node, out, cap);
}

size_t redis_runs(const uint32_t owner[REDIS_SLOTS], redis_run *out, size_t cap)
{
    return runs_of(owner, true, 0, out, cap);
}

/* Append c at buf[len], writing only below cap - 1 (room for the NUL);
 * returns the new length. */
static size_t put_char(char *buf, size_t cap, size_t len, char c)
{
    if (len + 1 < cap)
        buf[len] = c;
    return len + 1;
}

/* The decimal digits of v likewise. */
static size_t put_uint(char *buf, size_t cap, size_t len, uint32_t v)
{
    char d[20];
    size_t k = alg_put_u64(d, v);
    for (size_t i = 0; i < k; i++)
        len = put_char(buf, cap, len, d[i]);
    return len;
}

size_t redis_format(const uint32_t owner[REDIS_SLOTS], char *buf, size_t cap)
{
    size_t len = 0;
    for (size_t s = 0; s < REDIS_SLOTS;) {
        size_t e = run_end(owner, s);
        if (s > 0)
            len = put_char(buf, cap, len, ',');
        len = put_uint(buf, cap, len, (uint32_t)s);
        if (e > s) {
            len = put_char(buf, cap, len, '-');
            len = put_uint(buf, cap, len, (uint32_t)e);
        }
        len = put_char(buf, cap, len, ':');
        len = put_uint(buf, cap, len, owner[s]);
        s = e + 1;
    }
    if (cap > 0)
        buf[len < cap ? len : cap - 1] = '\0';
    return len;
}

/* A decimal number at text[*i..len): digits only, no leading zero unless it
 * is "0", value <= max.  Returns 0 and advances *i, or -1. */
static int get_uint(const char *text, size_t len, size_t *i, uint32_t max, uint32_t *out)
{
    size_t j = *i;
    uint64_t v = 0;
    while (j < len && text[j] >= '0' && text[j] <= '9') {
        v = v * 10 + (uint64_t)(text[j] - '0');
        if (v > max || (j > *i && text[*i] == '0'))
            return -1;
        j++;
    }
    if (j == *i)
        return -1;
    *i = j;
    *out = (uint32_t)v;
    return 0;
}

int redis_parse(const char *text, size_t len, size_t n, uint32_t owner[REDIS_SLOTS], rs_error *err)
{
    if (n < 1 || n > REDIS_MAX_NODES)
        return rs_fail(err, RINGSIM_EPARAM, "redis slot map: %zu nodes, expected 1 to %u", n,
                       REDIS_MAX_NODES);
    if (len == 0)
        return rs_fail(err, RINGSIM_EPARAM, "redis slot map: empty text");
    size_t i = 0;
    uint32_t next = 0, prev_node = UINT32_MAX;
    for (;;) {
        uint32_t first, last, node;
        size_t at = i;
        if (get_uint(text, len, &i, REDIS_SLOTS - 1, &first))
            return rs_fail(err, RINGSIM_EPARAM,
                           "redis slot map: byte %zu: expected a slot number "
                           "0..16383",
                           at);
        if (first != next)
            return rs_fail(err, RINGSIM_EPARAM,
                           "redis slot map: byte %zu: run starts at slot %u, "
                           "expected %u",
                           at, first, next);
        last = first;
        if (i < len && text[i] == '-') {
            at = ++i;
            if (get_uint(text, len, &i, REDIS_SLOTS - 1, &last))
                return rs_fail(err, RINGSIM_EPARAM,
                               "redis slot map: byte %zu: expected a slot "
                               "number 0..16383",
                               at);
            if (last <= first)
                return rs_fail(err, RINGSIM_EPARAM,
                               "redis slot map: byte %zu: range %u-%u does "
                               "not go up (one slot is written alone)",
                               at, first, last);
        }
        if (i >= len || text[i] != ':')
            return rs_fail(err, RINGSIM_EPARAM, "redis slot map: byte %zu: expected ':'", i);
        at = ++i;
        if (get_uint(text, len, &i, (uint32_t)n - 1, &node))
            return rs_fail(err, RINGSIM_EPARAM,
                           "redis slot map: byte %zu: expected a node "
                           "ordinal 0..%zu",
                           at, n - 1);
        if (node == prev_node)
            return rs_fail(err, RINGSIM_EPARAM,
                           "redis slot map: byte %zu: node %u again: adjacent "
                           "runs of one node are written as one",
                           at, node);
        for (uint32_t s = first; s <= last; s++)
            owner[s] = node;
        prev_node = node;
        next = last + 1;
        if (next == REDIS_SLOTS)
            break;
        if (i >= len || text[i] != ',')
            return rs_fail(err, RINGSIM_EPARAM,
                           "redis slot map: byte %zu: expected ',' (the map "
                           "stops at slot %u)",
                           i, next);
        i++;
    }
    if (i != len)
        return rs_fail(err, RINGSIM_EPARAM, "redis slot map: byte %zu: text after slot 16383", i);
    return 0;
}
