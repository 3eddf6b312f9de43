/*
 * tests/lib/paste.h - what the tests of large pastes share (issue 26: the
 * import parsers and the import operation stay linear): a text generated
 * up to a size, `nodetool ring` lines of many nodes, the CPU seconds a
 * step took, and whether this build runs under a sanitizer (where the
 * bounds on CPU time are not checked).  Included after <cmocka.h>.
 */
#ifndef RINGSIM_TESTS_PASTE_H
#define RINGSIM_TESTS_PASTE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* The CPU seconds this process has used (not the wall clock: the machine
 * is shared, and a bound on work must not depend on the neighbours). */
static inline double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A text being generated, up to cap bytes. */
typedef struct gen {
    char *s;
    size_t n, cap;
} gen;

static inline void gen_init(gen *g, size_t cap)
{
    g->s = malloc(cap + 1);
    assert_non_null(g->s);
    g->n = 0;
    g->cap = cap;
    g->s[0] = '\0';
}

static inline void gen_free(gen *g)
{
    free(g->s);
    g->s = NULL;
}

/* Append; false (nothing appended) when it would pass the cap. */
static inline bool gen_add(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline bool gen_add(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(g->s + g->n, g->cap + 1 - g->n, fmt, ap);
    va_end(ap);
    if (w < 0 || g->n + (size_t)w > g->cap) {
        g->s[g->n] = '\0';
        return false;
    }
    g->n += (size_t)w;
    return true;
}

/* `nodetool ring` as Cassandra prints it: the head of a datacenter, whose
 * last line is the ring's last token, then one line a token. */
static inline bool ring_head(gen *g, long long last_token)
{
    return gen_add(g,
                   "Datacenter: dc1\n==========\nAddress Rack Status State Load Owns Token\n"
                   "                    %lld\n",
                   last_token);
}

static inline bool ring_line(gen *g, const char *address, long long token)
{
    return gen_add(g, "%s  rack1  Up  Normal  1 KiB  0.01%%  %lld\n", address, token);
}

#endif
