/*
 * traffic.h - `traffic run`: a seeded replay of requests through the
 * current placement and its bounded-load rule (docs/api.md "traffic").
 *
 * Requests are drawn from the workload's shares (sim_workload_each, an
 * alias table: O(1) a draw).  Arrivals are a Poisson process of rate 1 and
 * durations exponential with mean `concurrency`, so that by Little's law
 * the mean number in flight is the concurrency (an M/M/inf queue).  The
 * replay runs the queue's jump chain: with k requests in flight the next
 * event is a departure with probability k / (k + concurrency), of a
 * request chosen uniformly among those in flight (exponential durations
 * forget their age), else the next arrival; one draw decides both.  No
 * clock is kept: what the rules read -- who is in flight where -- is
 * exactly what the process in time would show at each arrival.  The replay
 * starts with nothing in flight.
 *
 * Each arrival goes to its key's node, or where the real balancer's
 * bounded-load rule sends it (place_bound_of): HAProxy's
 * chash_server_is_eligible and clockwise walk, Envoy's
 * BoundedLoadHashingLoadBalancer with its shuffle seeded by the request's
 * hash, or Mirrokni-Thorup-Zadimoghaddam's capacity on the seed's ring.
 * Everything a walk needs is computed once per key (its node, its point,
 * its hash) and once per layout (the next point of another node).
 *
 * Cost: O(keys) to place the keys and build the alias table, then per
 * request a few draws and the rule's probes; memory about 20 bytes a key
 * plus 4 bytes a request in flight.  Nothing is recorded.
 */
#ifndef RINGSIM_TRAFFIC_H
#define RINGSIM_TRAFFIC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "place.h"
#include "sim.h"

#define TRAFFIC_MAX_REQUESTS 100000000ull /* 10^8 */
#define TRAFFIC_MAX_CONCURRENCY 1e6
#define TRAFFIC_MAX_SAMPLES 1000u       /* points of the in-flight timeline */
#define TRAFFIC_MAX_TIMELINE 4000000ull /* samples x nodes */
#define TRAFFIC_ENVOY_CACHE 8u          /* shuffle entries kept per key */

typedef struct traffic_params {
    uint64_t requests;  /* 1 .. TRAFFIC_MAX_REQUESTS */
    double concurrency; /* > 0, at most TRAFFIC_MAX_CONCURRENCY */
    uint64_t seed;      /* 0 .. INT64_MAX */
    int64_t factor;     /* the rule's factor for this replay; -1: the configuration's */
    uint32_t samples;   /* in-flight snapshots over the replay (0: none) */
} traffic_params;

/* 0, or RINGSIM_EPARAM naming the field that is out of range. */
int traffic_params_check(const traffic_params *p, rs_error *err);

/* ---- the core: a replay over plain arrays (what the tests drive) ---- */

/* Called at each assignment, before it is counted (for tests): the key,
 * the node chosen, the requests in flight per node and in all. */
typedef void (*traffic_assign_fn)(void *ud, uint32_t key, uint32_t to, const uint32_t *active,
                                  uint32_t total);

typedef struct traffic_model {
    place_bound rule;
    uint32_t factor;         /* the rule's factor; 0: every request to its key's node */
    size_t n;                /* nodes, in join order (placement indexes) */
    const double *weight;    /* n weights (HAProxy: whole, 0 .. 256; 0 has no point) */
    size_t npts;             /* points of the ring in ring order (HAProxy, MTZ) */
    const uint32_t *pt_node; /* npts: each point's node */
    size_t nkeys;
    const double *share;       /* nkeys shares summing to 1 */
    const uint32_t *node;      /* nkeys: the node that serves the key, or TRAFFIC_UNSERVED */
    const uint32_t *point;     /* nkeys: the point that decided (HAProxy, MTZ; else NULL) */
    const uint64_t *hash;      /* nkeys: the request's hash (Envoy; else NULL) */
    traffic_assign_fn observe; /* may be NULL */
    void *observe_ud;
} traffic_model;

typedef struct traffic_node_stat {
    uint64_t handled;   /* requests it served */
    uint64_t peak;      /* most in flight at once */
    uint64_t own;       /* requests for its own keys */
    uint64_t sent_away; /* of those, served by another node */
} traffic_node_stat;

/* A key no node serves (every node of its list is down): its requests
 * are counted as unserved and go nowhere. */
#define TRAFFIC_UNSERVED UINT32_MAX

typedef struct traffic_result {
    place_bound rule; /* the rule applied (NONE when the factor is 0) */
    uint32_t factor;
    size_t n;
    traffic_node_stat *node; /* n, by placement index */
    bool *serves;            /* n: whether the node can take a request (weight above 0,
                                not down, in HAProxy's tree): the max/means are over these */
    uint64_t requests, probes, sent_away;
    uint64_t unserved; /* requests for keys no node serves */
    uint32_t nsamples;
    uint64_t *sample_at; /* nsamples: the request after which each was taken */
    uint32_t *timeline;  /* nsamples x n: in flight per node */
} traffic_result;

/* Called every 65,536 requests; nonzero cancels (RINGSIM_ECANCELED). */
typedef int (*traffic_progress_fn)(void *ud, uint64_t done, uint64_t total);

/* Replay p->requests requests over m; *out is the caller's to clear with
 * traffic_result_clear (also after a failure).  m must have n > 0 nodes
 * and nkeys > 0 keys.  0, RINGSIM_ENOMEM, RINGSIM_ECANCELED. */
int traffic_replay(const traffic_model *m, const traffic_params *p, traffic_progress_fn fn,
                   void *ud, traffic_result *out, rs_error *err);
void traffic_result_clear(traffic_result *r);

/* ---- the rules, one decision each (exposed for the tests) ---- */

/* HAProxy's chash_server_is_eligible (src/lb_chash.c) in its unsigned
 * 32-bit arithmetic: served_total requests in flight in the backend, the
 * server's effective weight, the weights of the usable servers before it
 * and of all, and its own requests in flight.  Cannot fail. */
bool traffic_haproxy_eligible(uint32_t served_total, uint32_t factor, uint32_t tot_weight,
                              uint32_t cumulative_weight, uint32_t eweight, uint32_t served);
/* Envoy's hostOverloadFactor (thread_aware_lb_impl.cc): the host's active
 * requests over its slots.  Cannot fail. */
double traffic_envoy_overload(uint32_t overall_active, uint32_t factor, double weight,
                              uint32_t host_active);
/* The first `count` host indexes Envoy's chooseHost tries after the key's
 * own host is overloaded -- host_index[i] after the i-th swap of its
 * Fisher-Yates shuffle with std::mt19937 seeded by the hash -- into
 * out[count] (count <= num_hosts).  O(count) after a 624-word seeding;
 * scratch holds 3 x num_hosts words, the first num_hosts of them equal to
 * their index on entry and on return.  Cannot fail. */
void traffic_envoy_order(uint64_t hash, uint32_t num_hosts, uint32_t *scratch, uint32_t *out,
                         uint32_t count);

/* One request at a time, as the replay decides them (for the tests that
 * drive a real balancer step by step): assign sends a request for key
 * where the rule says and counts it in flight; release ends one in flight
 * on node.  new copies *m (its arrays are borrowed): 0 or RINGSIM_ENOMEM.
 * free accepts NULL. */
typedef struct traffic_stepper traffic_stepper;
int traffic_stepper_new(traffic_stepper **out, const traffic_model *m);
uint32_t traffic_stepper_assign(traffic_stepper *s, uint32_t key);
void traffic_stepper_release(traffic_stepper *s, uint32_t node);
void traffic_stepper_free(traffic_stepper *s);

/* ---- the engine's face ---- */

/* Replay over the simulation's placement and workload.  Refuses
 * (RINGSIM_EPARAM) bad parameters, a factor the algorithm's rule refuses,
 * and a simulation with no node or no stored key.  Reports progress through
 * the simulation's progress callback (sim_set_progress), which may cancel. */
int traffic_run(sim *s, const traffic_params *p, traffic_result *out, rs_error *err);

/* The answer of POST /api/traffic/run for a result of traffic_run on s
 * (docs/api.md): nodes in the order of GET /api/nodes.  NULL on failure. */
json_t *traffic_json(sim *s, const traffic_params *p, const traffic_result *r, rs_error *err);

#endif
