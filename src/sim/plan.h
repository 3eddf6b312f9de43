/*
 * plan.h - `ringsim plan --max-load L`: how many nodes keep the busiest at
 * or under L times its fair share of the requests, and what each step
 * would move (docs/api.md v4, "replay your own traffic": capacity what-if).
 *
 * The demand is the stored workload (every stored key with its share of
 * requests) or a request log (its distinct keys, counted: memory grows with
 * the distinct keys, at most PLAN_MAX_KEYS).  Step 0 is the current nodes
 * under the configuration given; each next step adds one node of weight 1
 * (named prefix + its number, the first that is free) and places every key
 * again: per step the largest load against fair share (version 4: requests
 * served over the node's weight share of the nodes that can take keys),
 * the busiest node, and the keys and share of requests whose node changed
 * from the step before.  It stops at the first step at or under L, or when
 * no step can reach it -- the hottest key alone is more than L times the
 * largest fair share, and adding nodes only shrinks fair shares -- or after
 * max_steps.  Nothing is recorded.
 *
 * Cost: per step one placement build and one lookup a distinct key.
 */
#ifndef RINGSIM_PLAN_H
#define RINGSIM_PLAN_H

#include <jansson.h>
#include <stdint.h>

#include "error.h"
#include "place.h"
#include "sim.h"
#include "trace_read.h"

#define PLAN_MAX_KEYS 4000000u /* distinct keys of a log */
#define PLAN_MAX_STEPS 256u

typedef struct plan_params {
    double max_load;         /* > 1 is reachable; at least 1 */
    const place_config *cfg; /* the configuration to plan with; NULL: the current one */
    uint32_t max_steps;      /* nodes added at most, 1 .. PLAN_MAX_STEPS */
    const char *prefix;      /* the added nodes' names: prefix + 1, 2, ... ("new-") */
    trace_reader *log;       /* the demand: a log (read to its end), or NULL: the workload */
    uint64_t log_size;       /* the log's bytes when known (0: not), for progress */
} plan_params;

/* *out: {"max_load", "algorithm", "source", "keys", "requests"?,
 * "hottest_key", "bound", "steps": [{"nodes", "added", "max_over_mean",
 * "busiest", "keys_moved", "requests_moved"}...], "enough", "reason"}
 * (docs/api.md).  0, RINGSIM_EPARAM (no node, no key, a bad parameter),
 * RINGSIM_ENOMEM, RINGSIM_ECANCELED, or the reader's error. */
int plan_run(sim *s, const plan_params *p, json_t **out, rs_error *err);

#endif
