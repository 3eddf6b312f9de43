/*
 * trace.h - `ringsim trace`: the user's own request log replayed through the
 * current placement (docs/api.md v4, "replay your own traffic").
 *
 * Each record of the log (trace_read.h) is one request: its key goes where
 * the placement serves it (place_key's `served`: node states applied), and
 * the node counts it -- requests, bytes, distinct keys, the most requests
 * in one second of the log's clock -- and, with a cache, looks it up in its
 * LRU.  A change (`--change AT OP`) builds the next placement from the
 * current one with one node added, removed, down, up or reweighted, before
 * request number AT or the first request at or after a time of the log's
 * clock; the keys that now go elsewhere miss in the new node's cache.
 * Nothing is recorded.  Bounded-load rules are not applied: a log has no
 * request durations, so no requests in flight to bound.
 *
 * Memory does not grow with the log: per node a counter block, a distinct
 * count exact up to TRACE_DISTINCT_EXACT keys and then HyperLogLog
 * (2^14 one-byte registers, standard error 0.81%), and an LRU of at most
 * the cache's size; the series keeps at most TRACE_SERIES_FINE fine
 * intervals and doubles their width when it would hold more.  Keys are
 * told apart by the first 64 bits of their SHA-256 (sha64), which
 * place_key computes anyway.
 *
 * Cost per request: one place_key (a SHA-256 and the algorithm's lookup),
 * a distinct-set probe, and with a cache an LRU probe; a change costs a
 * placement build and O(nodes).
 */
#ifndef RINGSIM_TRACE_H
#define RINGSIM_TRACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "sim.h"
#include "trace_read.h"

#define TRACE_MAX_CHANGES 64
#define TRACE_DISTINCT_EXACT 16384u      /* per node, then HyperLogLog */
#define TRACE_DISTINCT_EXACT_ALL 65536u  /* over the whole log */
#define TRACE_SERIES_FINE 1024u          /* fine intervals kept before they double */
#define TRACE_SERIES_MAX 100000u         /* points with an explicit --interval */
#define TRACE_CACHE_MAX_OBJECTS 8388608u /* objects in all the caches at once */

typedef enum {
    TRACE_OP_ADD,
    TRACE_OP_REMOVE,
    TRACE_OP_DOWN,
    TRACE_OP_UP,
    TRACE_OP_WEIGHT
} trace_op;

typedef struct trace_change {
    bool by_time;
    uint64_t at;    /* request number, counting from 0 (by_time false) */
    double at_time; /* the log's clock, epoch seconds (by_time true) */
    trace_op op;
    char name[256];
    double weight;  /* add (1 unless given), weight */
    char text[320]; /* "node add web7" as given */
} trace_change;

/* Read one change: at is "N", "@EPOCH" or "@RFC3339"; op is "node add NAME
 * [WEIGHT]", "node rm|remove|down|up NAME" or "node weight NAME W" (the
 * word "node" may be left out).  0 or RINGSIM_EPARAM / RINGSIM_ENAME. */
int trace_change_parse(const char *at, const char *op, trace_change *out, rs_error *err);

typedef struct trace_params {
    uint64_t cache;     /* per node; 0: no cache */
    bool cache_objects; /* cache counts objects (Nobj), else bytes */
    const trace_change *changes;
    size_t nchanges; /* at most TRACE_MAX_CHANGES */
    double interval; /* of the series, in the log's seconds (or requests
                        when it has no clock); 0: about 1/100 of the log */
    uint64_t size;   /* the file's bytes when known (0: not), for progress */
} trace_params;

/* Read "1000", "64MiB", "2GB", "500k", "10000obj": 0 with *size and
 * *objects, or RINGSIM_EPARAM.  Units: k M G (x1000), KiB MiB GiB (x1024),
 * B, obj. */
int trace_cache_parse(const char *s, uint64_t *size, bool *objects, rs_error *err);

/* Called every 65,536 records with the bytes read so far and the requests
 * replayed; nonzero cancels (RINGSIM_ECANCELED).  Without one, progress
 * goes to the simulation's own callback (sim_set_progress: "trace", bytes
 * read of p->size), which may cancel too (a client that leaves). */
typedef int (*trace_progress_fn)(void *ud, uint64_t bytes_in, uint64_t requests);

/* Replay the log r (positioned at its start, as trace_reader_open leaves
 * it) through s's placement.  *out: the answer of POST /api/trace
 * (docs/api.md), the caller's to decref.  Refuses a simulation without a
 * node, a change that names a node that is not there (or already is), a
 * change at a time when the log has no clock.  0, RINGSIM_EPARAM,
 * RINGSIM_ENOMEM, RINGSIM_ECANCELED, or the reader's error. */
int trace_run(sim *s, trace_reader *r, const trace_params *p, trace_progress_fn fn, void *ud,
              json_t **out, rs_error *err);

#endif
