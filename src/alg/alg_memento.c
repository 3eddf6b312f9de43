/*
 * alg_memento.c - MementoHash over a flat replacer array (see alg_memento.h).
 *
 * State: n, the b-array size; repl[b], the replacer of a removed bucket b
 * (the live count right after its removal) or -1 when b is live; stack[0..k),
 * the removed buckets in removal order.  The reference's lastRemoved is the
 * top of the stack (or n when the stack is empty) and its prevRemoved of an
 * entry is the entry below it, so the stack says everything.  While the
 * stack is not empty n does not change (removals record, adds restore), so
 * the i-th entry's replacer is n - i - 1.
 *
 * Termination of the lookup: replacers strictly decrease from the bottom of
 * the stack to its top, and a replacer of 0 can only sit on top of a stack
 * that leaves no bucket live; with a live bucket every r met is >= 1, and
 * each outer step moves to a bucket below r, so the loop ends.
 */
#include "alg_memento.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_jump.h"
#include "hash.h"

struct memento {
    int32_t n;      /* b-array size */
    int32_t k;      /* removed buckets (stack height) */
    int32_t cap;    /* allocated length of repl and stack */
    int32_t *repl;  /* [cap]: replacer or -1 */
    int32_t *stack; /* [cap]: removed buckets, oldest first */
};

memento *memento_new(void) { return calloc(1, sizeof(memento)); }

void memento_free(memento *m)
{
    if (!m)
        return;
    free(m->repl);
    free(m->stack);
    free(m);
}

/* Room for at least `want` buckets; 0, RINGSIM_ENOMEM or, past the limit,
 * RINGSIM_EPARAM (m unchanged but for a harmlessly larger repl). */
static int reserve(memento *m, int32_t want)
{
    if (want <= m->cap)
        return 0;
    if (want > MEMENTO_MAX_BUCKETS)
        return RINGSIM_EPARAM;
    int32_t cap = m->cap ? m->cap : 8;
    while (cap < want && cap < MEMENTO_MAX_BUCKETS)
        cap = cap > MEMENTO_MAX_BUCKETS / 2 ? MEMENTO_MAX_BUCKETS : cap * 2;
    int32_t *repl = realloc(m->repl, (size_t)cap * sizeof *repl);
    if (!repl)
        return RINGSIM_ENOMEM;
    m->repl = repl;
    int32_t *stack = realloc(m->stack, (size_t)cap * sizeof *stack);
    if (!stack)
        return RINGSIM_ENOMEM; /* repl grew, harmlessly */
    m->stack = stack;
    for (int32_t b = m->cap; b < cap; b++)
        m->repl[b] = -1;
    m->cap = cap;
    return 0;
}

memento *memento_copy(const memento *m)
{
    memento *c = memento_new();
    if (!c || reserve(c, m->cap) < 0)
        goto fail;
    c->n = m->n;
    c->k = m->k;
    if (m->cap) {
        memcpy(c->repl, m->repl, (size_t)m->cap * sizeof *c->repl);
        memcpy(c->stack, m->stack, (size_t)m->cap * sizeof *c->stack);
    }
    return c;
fail:
    memento_free(c);
    return NULL;
}

int memento_add(memento *m, int32_t *bucket)
{
    if (m->k > 0) { /* restore the last removal (Memento.restore) */
        int32_t b = m->stack[--m->k];
        m->repl[b] = -1;
        *bucket = b;
        return 0;
    }
    if (m->n >= MEMENTO_MAX_BUCKETS)
        return RINGSIM_EPARAM;
    int rc = reserve(m, m->n + 1);
    if (rc < 0)
        return rc;
    *bucket = m->n++;
    return 0;
}

int memento_remove(memento *m, int32_t bucket)
{
    if (!memento_is_live(m, bucket))
        return RINGSIM_ENOTFOUND;
    if (m->k == 0 && bucket == m->n - 1) { /* plain jump: shrink */
        m->n--;
        return 0;
    }
    /* remember(bucket, size() - 1, lastRemoved); stack and repl have room
     * for n entries and k < n here. */
    m->repl[bucket] = m->n - m->k - 1;
    m->stack[m->k++] = bucket;
    return 0;
}

int32_t memento_lookup(const memento *m, uint64_t keyhash)
{
    if (m->n - m->k <= 0)
        return -1;
    int32_t b = jump_hash(keyhash, m->n);
    int32_t r = m->repl[b];
    while (r >= 0) {
        b = (int32_t)(hash_mix(keyhash ^ (uint64_t)b) % (uint64_t)r);
        int32_t rr = m->repl[b];
        while (rr >= r) {
            b = rr;
            rr = m->repl[b];
        }
        r = rr;
    }
    return b;
}

int32_t memento_size(const memento *m) { return m->n - m->k; }
int32_t memento_barray_size(const memento *m) { return m->n; }

int memento_is_live(const memento *m, int32_t bucket)
{
    return bucket >= 0 && bucket < m->n && m->repl[bucket] < 0;
}

static const char PREFIX[] = "memento/1 buckets=";
static const char REMOVED[] = " removed=";

int memento_serialize(const memento *m, char **out, size_t *len)
{
    /* Each number takes at most 7 digits (< 2^20) plus a comma. */
    size_t cap = sizeof PREFIX + sizeof REMOVED + 8 + (size_t)m->k * 8 + 1;
    char *s = malloc(cap);
    if (!s)
        return RINGSIM_ENOMEM;
    size_t n = (size_t)snprintf(s, cap, "%s%d%s", PREFIX, m->n, REMOVED);
    for (int32_t i = 0; i < m->k; i++)
        n += (size_t)snprintf(s + n, cap - n, i ? ",%d" : "%d", m->stack[i]);
    *out = s;
    if (len)
        *len = n;
    return 0;
}

/* A decimal number in canonical form ("0" or no leading zero), at most
 * `max`, at s[*i..len).  Advances *i; -1 when there is none or it is too
 * large. */
static int64_t parse_uint(const char *s, size_t len, size_t *i, int64_t max)
{
    size_t start = *i;
    int64_t v = 0;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        v = v * 10 + (s[*i] - '0');
        if (v > max)
            return -1;
        (*i)++;
    }
    if (*i == start || (s[start] == '0' && *i - start > 1))
        return -1;
    return v;
}

int memento_parse(const char *s, size_t len, memento **out, rs_error *err)
{
    *out = NULL;
    size_t i = 0, plen = sizeof PREFIX - 1, rlen = sizeof REMOVED - 1;
    if (len < plen || memcmp(s, PREFIX, plen) != 0)
        return rs_fail(err, RINGSIM_EPARAM, "memento state must start with \"%s\"", PREFIX);
    i = plen;
    int64_t n = parse_uint(s, len, &i, MEMENTO_MAX_BUCKETS);
    if (n < 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "memento state: buckets must be a whole number from 0 to %d",
                       MEMENTO_MAX_BUCKETS);
    if (len - i < rlen || memcmp(s + i, REMOVED, rlen) != 0)
        return rs_fail(err, RINGSIM_EPARAM, "memento state: expected \"%s\" after the bucket count",
                       REMOVED);
    i += rlen;
    memento *m = memento_new();
    int rc = RINGSIM_ENOMEM;
    if (!m || reserve(m, n > 0 ? (int32_t)n : 1) < 0) /* never a NULL repl */
        goto fail;
    m->n = (int32_t)n;
    while (i < len) {
        if (m->k > 0) {
            if (s[i] != ',') {
                rc = rs_fail(err, RINGSIM_EPARAM, "memento state: expected a comma at byte %zu", i);
                goto fail;
            }
            i++;
        }
        int64_t b = parse_uint(s, len, &i, n - 1);
        if (b < 0) {
            rc = rs_fail(err, RINGSIM_EPARAM,
                         "memento state: removed bucket at byte %zu is not a whole "
                         "number below %lld",
                         i, (long long)n);
            goto fail;
        }
        if (m->repl[b] >= 0) {
            rc = rs_fail(err, RINGSIM_EPARAM, "memento state: bucket %lld is removed twice",
                         (long long)b);
            goto fail;
        }
        if (m->k == 0 && b == n - 1) {
            rc = rs_fail(err, RINGSIM_EPARAM,
                         "memento state: the first removal cannot be the last bucket "
                         "%lld (that removal shrinks the b-array)",
                         (long long)b);
            goto fail;
        }
        /* k < n: each of the (distinct, < n) buckets is counted once. */
        m->repl[b] = m->n - m->k - 1;
        m->stack[m->k++] = (int32_t)b;
    }
    *out = m;
    return 0;
fail:
    memento_free(m);
    return rc == RINGSIM_ENOMEM ? rs_fail(err, rc, "out of memory") : rc;
}
