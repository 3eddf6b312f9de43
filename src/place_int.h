/*
 * place_int.h - what place.c and the algorithm entries (place_algos.c)
 * share: the placement's layout and the ops table of an algorithm.
 */
#ifndef RINGSIM_PLACE_INT_H
#define RINGSIM_PLACE_INT_H

#include <stdarg.h>

#include "alg.h"
#include "place.h"
#include "ring.h"

typedef enum { PLACE_W_ANY, PLACE_W_WHOLE, PLACE_W_NONE } place_weights;
typedef enum { PLACE_REP_WALK, PLACE_REP_HIGHEST, PLACE_REP_NONE } place_replicas;
typedef enum { PLACE_COORD_UNSIGNED, PLACE_COORD_SIGNED, PLACE_COORD_NONE } place_coord_kind;

typedef struct place_algo place_algo;

struct placement {
    const place_algo *a;
    place_config cfg;
    size_t n;
    const place_node *nodes; /* borrowed for the placement's lifetime */
    int64_t *ids;            /* copied: a later build matches nodes by id */
    uint64_t top;            /* the largest coordinate of the space */
    ring *ring;              /* the seed's ring (fast successor search) */
    alg_point *pts;          /* points in ring order (every point algorithm) */
    size_t npts;
    uint32_t *table;     /* owner per coordinate: maglev entries, redis slots */
    uint64_t *node_hash; /* per node: sha64(name) (rendezvous) */
    void *extra;         /* the algorithm's own (memento) */
    uint64_t *sizes;     /* points / slots / entries per node */
};

struct place_algo {
    const char *name, *title, *origin, *key_hash, *space;
    int params[3];
    size_t nparams;
    place_weights weights;
    place_replicas replicas;
    place_coord_kind coord_kind;
    int col;          /* place_col of the segments, -1: re-place keys */
    int coord_param;  /* the parameter key coordinates depend on, or -1 */
    bool leave_local; /* a leave moves only the leaver's keys */
    bool minimal;     /* a join or leave moves only what must move */

    /* The bounded-load rule of the traffic replay (src/traffic.c) and the
     * parameter of its factor (with bound != PLACE_BOUND_NONE). */
    place_bound bound;
    int bound_param;
    uint64_t (*top)(const place_config *cfg);
    int (*check_nodes)(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err);
    int (*build)(placement *p, hasher *h, const placement *prev, const char *state, rs_error *err);
    void (*free_extra)(placement *p);
    /* Fill hash, coord/has_coord, owner and point (position is set). */
    void (*key)(const placement *p, hasher *h, const char *key, size_t len, place_key_info *k);
    /* Owner from k->hash alone (for sampled shares); only where col < 0. */
    void (*owner_of_hash)(const placement *p, place_key_info *k);
    size_t (*prefs)(const placement *p, const place_key_info *k, uint32_t r, long *out);
    int (*segments)(const placement *p, place_seg **out, size_t *n);
    void (*shares)(const placement *p, double *share);
    /* Shares counting r replicas, for layouts whose arcs are not
     * (previous point, point] (HAProxy's nearest point); owns[n] zeroed. */
    void (*owns)(const placement *p, uint32_t r, double *owns);
    void (*node_json)(const placement *p, size_t node, json_t *obj);
    char *(*state_text)(const placement *p);
    void (*trace)(const placement *p, const char *key, size_t len, const place_key_info *k,
                  const char *const *names, json_t *t);
};

/* NULL-terminated, in catalogue order (place_algos.c). */
extern const place_algo *const place__algos[];

const place_algo *place__find(const char *name);
uint32_t place__points(int64_t per_node, double weight);
uint64_t place__mix(uint64_t x);
void place__point_owner(const placement *p, place_key_info *k);
size_t place__walk(const placement *p, size_t start, uint32_t r, long *out);
size_t place__walk_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out);
int place__point_segments(const placement *p, place_seg **out, size_t *n);
int place__table_segments(const placement *p, place_seg **out, size_t *n);
void place__step(json_t *t, const char *step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void place__trace_point(const placement *p, const place_key_info *k, const char *const *names,
                        const char *what, json_t *t);

#endif
