/*
 * place.c - the configuration and the placement (see place.h for the
 * interface): parameters, building, keys, diffs, shares and drawing, over
 * the algorithm table (place_algos.c), never an algorithm by name.
 *
 * Most algorithms are rings of points (alg_point arrays in ring order): the
 * seed's ring, ketama, nginx, Envoy's ring hash, Cassandra's tokens and the
 * points multiprobe probes against.  For them the segments, shares and
 * drawing are written once here, the successor search and the preference
 * walk once in algo_common.c; an algorithm supplies its points and its key
 * hash.  Table algorithms (Maglev, Redis slots) supply a table of owners;
 * the others (jump, rendezvous) supply an owner function and re-place keys.
 * The nodes' states are place_states.c's; the layout of the nodes that
 * serve, a placement of its own, is built and freed here.
 *
 * Costs: build is the algorithm's (points: one hash each and a sort);
 * place_key is one key hash plus O(log P) (the seed's ring: the bucketed
 * search of ring.c); place_prefs walks points until r distinct nodes.
 */
#define _GNU_SOURCE
#include "place_int.h"

#include "alg_ceph.h"
#include "alg_ketama.h"
#include "alg_twemproxy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "vec.h"

/* ---- parameters ---- */

static const char *const hash_type_names[] = {"consistent", "map-based", NULL};
static const char *const pool_type_names[] = {"replicated", "erasure", NULL};
static const char *const strategy_names[] = {"simple", "network_topology", NULL};

typedef struct pdef {
    const char *name;
    int64_t def, min, max;
    const char *const *names; /* a choice by name: names[min..max], or NULL */
    bool quiet;               /* answered among the algorithm's params only when not the default */
} pdef;

static const pdef pdefs[PP_COUNT] = {
    [PP_POINTS_PER_NODE] = {.name = "points_per_node",
                            .def = 1,
                            .min = 1,
                            .max = PLACE_MAX_POINTS_PER_NODE},
    [PP_PROBES] = {.name = "probes", .def = 21, .min = 1, .max = 1000},
    [PP_MIN_RING_SIZE] = {.name = "min_ring_size", .def = 1024, .min = 1, .max = 8388608},
    [PP_MAX_RING_SIZE] = {.name = "max_ring_size", .def = 8388608, .min = 1, .max = 8388608},
    [PP_TABLE_SIZE] = {.name = "table_size", .def = 65537, .min = 2, .max = 5000011},
    [PP_NUM_TOKENS] = {.name = "num_tokens", .def = 16, .min = 1, .max = 1536},
    /* Envoy's UInt32Value; HAProxy's own bound is checked by the rule. */
    [PP_HASH_BALANCE_FACTOR] = {.name = "hash_balance_factor", .def = 0, .min = 0, .max = 4294967295},
    [PP_HASH] = {.name = "hash",
                 .def = TW_DEFAULT_HASH,
                 .min = 0,
                 .max = TW_NHASH - 1,
                 .names = twemproxy_hash_names},
    [PP_PANIC_THRESHOLD] = {.name = "panic_threshold", .def = 50, .min = 0, .max = 100},
    [PP_ALL_BACKUPS] = {.name = "allbackups", .def = 0, .min = 0, .max = 1},
    /* Quiet: version 2's answer for ring, {"points_per_node"}, stays as it
     * was until bounded loads are turned on. */
    [PP_BALANCE_FACTOR] = {.name = "balance_factor", .def = 0, .min = 0, .max = 1000000, .quiet = true},
    /* Quiet too: the variants' parameters, so that the answers for the
     * systems as version 2 and 3 reproduced them stay as they were. */
    [PP_KETAMA_MODE] = {.name = "mode",
                        .def = KETAMA_MODE_WEIGHTED,
                        .min = 0,
                        .max = KETAMA_NMODE - 1,
                        .names = ketama_mode_names,
                        .quiet = true},
    [PP_KETAMA_HASH] = {.name = "key_hash",
                        .def = KETAMA_HASH_AUTO,
                        .min = 0,
                        .max = KETAMA_NHASH - 1,
                        .names = ketama_hash_names,
                        .quiet = true},
    [PP_NGINX_CONSISTENT] = {.name = "consistent", .def = 1, .min = 0, .max = 1, .quiet = true},
    [PP_HASH_TYPE] =
        {.name = "hash_type", .def = 0, .min = 0, .max = 1, .names = hash_type_names, .quiet = true},
    [PP_CEPH_POOL] = {.name = "pool", .def = 1, .min = 0, .max = 2147483647},
    [PP_PG_NUM] = {.name = "pg_num", .def = 32, .min = 1, .max = CEPH_MAX_PGS},
    [PP_PGP_NUM] = {.name = "pgp_num", .def = 0, .min = 0, .max = CEPH_MAX_PGS},
    [PP_CEPH_SIZE] = {.name = "size", .def = 3, .min = 1, .max = PLACE_MAX_REPLICAS},
    [PP_FAILURE_DOMAIN] =
        {.name = "failure_domain", .def = 1, .min = 0, .max = 11, .names = ceph_type_names},
    [PP_POOL_TYPE] = {.name = "pool_type", .def = 0, .min = 0, .max = 1, .names = pool_type_names},
    [PP_EC_K] = {.name = "k", .def = 2, .min = 1, .max = PLACE_MAX_REPLICAS - 1},
    [PP_EC_M] = {.name = "m", .def = 1, .min = 1, .max = PLACE_MAX_REPLICAS - 1},
    [PP_HASHPSPOOL] = {.name = "hashpspool", .def = 1, .min = 0, .max = 1},
    [PP_CHOOSE_TOTAL_TRIES] = {.name = "choose_total_tries", .def = 50, .min = 0, .max = 1000},
    [PP_CHOOSELEAF_DESCEND_ONCE] = {.name = "chooseleaf_descend_once", .def = 1, .min = 0, .max = 1},
    [PP_CHOOSELEAF_VARY_R] = {.name = "chooseleaf_vary_r", .def = 1, .min = 0, .max = 31},
    [PP_CHOOSELEAF_STABLE] = {.name = "chooseleaf_stable", .def = 1, .min = 0, .max = 1},
    /* Quiet: cassandra answers as before until network_topology is chosen. */
    [PP_STRATEGY] = {.name = "strategy",
                     .def = PLACE_STRATEGY_SIMPLE,
                     .min = 0,
                     .max = 1,
                     .names = strategy_names,
                     .quiet = true},
};

/* ---- cassandra's replication map (API.md v4, NetworkTopologyStrategy) ---- */

static uint32_t replication_sum(const place_config *cfg)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < cfg->ndc; i++)
        sum += cfg->dc[i].rf;
    return sum;
}

/* One datacenter's factor into the map (replacing one of the same name). */
static int replication_put(place_config *cfg, const char *dc, size_t len, double rf, rs_error *err)
{
    int rc = name_check(dc, len, "replication: a datacenter's name", err);
    if (rc)
        return rc;
    if (!(rf == floor(rf)) || rf < 0 || rf > PLACE_MAX_REPLICAS)
        return rs_fail(err, RINGSIM_EPARAM,
                       "replication: datacenter \"%.64s\" needs a whole number from 0 to %u", dc,
                       PLACE_MAX_REPLICAS);
    uint32_t i = 0;
    while (i < cfg->ndc && strcmp(cfg->dc[i].dc, dc) != 0)
        i++;
    if (i == PLACE_MAX_DCS)
        return rs_fail(err, RINGSIM_EPARAM, "replication: at most %u datacenters", PLACE_MAX_DCS);
    memset(&cfg->dc[i], 0, sizeof cfg->dc[i]);
    memcpy(cfg->dc[i].dc, dc, len);
    cfg->dc[i].rf = (uint32_t)rf;
    if (i == cfg->ndc)
        cfg->ndc++;
    return 0;
}

/* A new map replaces the old one whole; under network_topology the
 * replicas follow it. */
static void replication_clear(place_config *cfg)
{
    memset(cfg->dc, 0, sizeof cfg->dc);
    cfg->ndc = 0;
}

static void replication_follow(place_config *cfg)
{
    uint32_t sum = replication_sum(cfg);
    if (cfg->param[PP_STRATEGY] == PLACE_STRATEGY_NTS && sum >= 1 && sum <= PLACE_MAX_REPLICAS)
        cfg->replicas = sum;
}

/* {"dc1": 3, "dc2": 2} */
static int replication_from_json(place_config *cfg, const json_t *v, rs_error *err)
{
    if (!json_is_object(v))
        return rs_fail(err, RINGSIM_EPARAM,
                       "replication must be an object of datacenters and their factors "
                       "({\"dc1\": 3, \"dc2\": 2})");
    if (json_object_size(v) > PLACE_MAX_DCS)
        return rs_fail(err, RINGSIM_EPARAM, "replication: at most %u datacenters", PLACE_MAX_DCS);
    place_config c = *cfg;
    replication_clear(&c);
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        double rf = json_is_integer(x) ? (double)json_integer_value(x) : NAN;
        int rc = replication_put(&c, k, strlen(k), rf, err);
        if (rc)
            return rc;
    }
    *cfg = c;
    replication_follow(cfg);
    return 0;
}

/* "dc1:3,dc2:2" (the command line's --param replication=...) */
static int replication_from_text(place_config *cfg, const char *text, rs_error *err)
{
    place_config c = *cfg;
    replication_clear(&c);
    for (const char *p = text; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *colon = memchr(p, ':', n);
        char num[16];
        size_t nl = colon ? n - (size_t)(colon - p) - 1 : 0;
        char *end = NULL;
        double rf = NAN;
        if (colon && nl > 0 && nl < sizeof num) {
            memcpy(num, colon + 1, nl);
            num[nl] = '\0';
            rf = strtod(num, &end);
        }
        if (!colon || colon == p || !end || *end || nl == 0 || (comma && !comma[1]))
            return rs_fail(err, RINGSIM_EPARAM,
                           "replication takes DC:RF pairs separated by commas (dc1:3,dc2:2), not "
                           "\"%.64s\"",
                           text);
        char dc[PLACE_DC_NAME_BUF];
        size_t dl = (size_t)(colon - p);
        if (dl >= sizeof dc)
            return rs_fail(err, RINGSIM_ENAME, "replication: a datacenter's name is at most %d bytes",
                           PLACE_DC_NAME_BUF - 1);
        memcpy(dc, p, dl);
        dc[dl] = '\0';
        int rc = replication_put(&c, dc, dl, rf, err);
        if (rc)
            return rc;
        p = comma ? comma + 1 : p + n;
    }
    *cfg = c;
    replication_follow(cfg);
    return 0;
}

/* replica_domain: a location type, the rules of a location's names; ""
 * turns it off. */
static int replica_domain_set(place_config *cfg, const char *v, size_t len, rs_error *err)
{
    memset(cfg->replica_domain, 0, sizeof cfg->replica_domain);
    if (!len)
        return 0;
    place_loc probe = {v, "x"};
    int rc = strlen(v) != len ? rs_fail(err, RINGSIM_ENAME, "replica_domain must not contain NUL")
                              : place_loc_check(&probe, 1, err);
    if (rc)
        return rc;
    memcpy(cfg->replica_domain, v, len);
    return 0;
}

static json_t *replication_json(const place_config *cfg)
{
    json_t *o = json_object();
    for (uint32_t i = 0; o && i < cfg->ndc; i++)
        json_object_set_new(o, cfg->dc[i].dc, json_integer(cfg->dc[i].rf));
    return o;
}

static int replication_check(const place_config *cfg, rs_error *err)
{
    if (strcmp(cfg->algorithm, "cassandra") != 0 || cfg->param[PP_STRATEGY] != PLACE_STRATEGY_NTS)
        return 0;
    uint32_t sum = replication_sum(cfg);
    if (sum == 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "network_topology needs replication: a factor per datacenter "
                       "(--param replication=dc1:3,dc2:2)");
    if (sum > PLACE_MAX_REPLICAS)
        return rs_fail(err, RINGSIM_EPARAM,
                       "replication adds up to %u replicas; ringsim keeps at most %u", sum,
                       PLACE_MAX_REPLICAS);
    if (cfg->replicas != sum)
        return rs_fail(err, RINGSIM_EPARAM,
                       "under network_topology replicas is the sum of replication (%u), not %u",
                       sum, cfg->replicas);
    return 0;
}

const place_algo *place__find(const char *name)
{
    for (const place_algo *const *a = place__algos; *a; a++)
        if (strcmp((*a)->name, name) == 0)
            return *a;
    return NULL;
}

const place_algo *place__algo(const place_config *cfg)
{
    const place_algo *a = place__find(cfg->algorithm);
    for (size_t i = 0; a && i < a->nvariants; i++)
        if (cfg->param[a->variants[i].param] == a->variants[i].value)
            return a->variants[i].a;
    return a;
}

void place_config_default(place_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    strcpy(cfg->algorithm, "ring");
    for (int i = 0; i < PP_COUNT; i++)
        cfg->param[i] = pdefs[i].def;
    cfg->replicas = 1;
}

static bool is_prime(int64_t v)
{
    if (v < 2)
        return false;
    for (int64_t d = 2; d * d <= v; d++)
        if (v % d == 0)
            return false;
    return true;
}

/* The factor of a bounded-load rule, as each program validates it, for the
 * algorithm that takes it (another algorithm's value is kept as stored):
 *   HAProxy  src/cfgparse-listen.c, "hash-balance-factor": 0 or greater
 *            than 100, read with atol into an int (import_haproxy.c: at
 *            most INT32_MAX).
 *   Envoy    api/envoy/config/cluster/v3/cluster.proto,
 *            ConsistentHashingLbConfig.hash_balance_factor: a UInt32Value
 *            with (validate.rules).uint32.gte = 100.  Unset turns bounded
 *            loads off (thread_aware_lb_impl.cc wraps the hashing balancer
 *            only when it is > 0): ringsim's 0 stands for unset.
 *   ring     Mirrokni-Thorup-Zadimoghaddam need c = 1 + eps with eps > 0:
 *            balance_factor 0 (off) or above 100. */
static int bound_check(const place_algo *a, const place_config *cfg, rs_error *err)
{
    if (a->bound == PLACE_BOUND_NONE)
        return 0;
    int64_t f = cfg->param[a->bound_param];
    const char *name = pdefs[a->bound_param].name;
    if (a->bound == PLACE_BOUND_ENVOY && f > 0 && f < 100)
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s must be 0 (unset: off) or at least 100 (Envoy's hash_balance_factor "
                       "is a UInt32Value >= 100), not %lld",
                       name, (long long)f);
    if (a->bound == PLACE_BOUND_HAPROXY && ((f > 0 && f <= 100) || f > 2147483647))
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s must be 0 or greater than 100 and at most 2147483647 (HAProxy refuses "
                       "hash-balance-factor %lld)",
                       name, (long long)f);
    if (a->bound == PLACE_BOUND_MTZ && f > 0 && f <= 100)
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s must be 0 (off) or above 100: the capacity is ceil(c m / n) with c = "
                       "%s / 100 > 1, not %lld",
                       name, name, (long long)f);
    return 0;
}

place_bound place_bound_of(const place_config *cfg, int *param)
{
    const place_algo *a = place__algo(cfg);
    *param = a && a->bound != PLACE_BOUND_NONE ? a->bound_param : -1;
    return a ? a->bound : PLACE_BOUND_NONE;
}

bool place_config_equal(const place_config *a, const place_config *b)
{
    if (strncmp(a->algorithm, b->algorithm, sizeof a->algorithm) != 0 ||
        a->replicas != b->replicas || a->ndc != b->ndc ||
        strncmp(a->replica_domain, b->replica_domain, sizeof a->replica_domain) != 0)
        return false;
    for (int i = 0; i < PP_COUNT; i++)
        if (a->param[i] != b->param[i])
            return false;
    for (uint32_t i = 0; i < a->ndc && i < PLACE_MAX_DCS; i++)
        if (a->dc[i].rf != b->dc[i].rf || strncmp(a->dc[i].dc, b->dc[i].dc, sizeof a->dc[i].dc))
            return false;
    return true;
}

int place_config_check(const place_config *cfg, rs_error *err)
{
    int rc;
    const place_algo *a = place__algo(cfg);
    if (!a) {
        char known[256] = "";
        for (const place_algo *const *n = place__algos; *n; n++) {
            strncat(known, (*n)->name, sizeof known - strlen(known) - 1);
            if (n[1])
                strncat(known, ", ", sizeof known - strlen(known) - 1);
        }
        return rs_fail(err, RINGSIM_EPARAM, "unknown algorithm \"%.32s\" (known: %s)",
                       cfg->algorithm, known);
    }
    for (int i = 0; i < PP_COUNT; i++)
        if (cfg->param[i] < pdefs[i].min || cfg->param[i] > pdefs[i].max)
            return rs_fail(err, RINGSIM_EPARAM, "%s must be %lld to %lld", pdefs[i].name,
                           (long long)pdefs[i].min, (long long)pdefs[i].max);
    if (cfg->replicas < 1 || cfg->replicas > PLACE_MAX_REPLICAS)
        return rs_fail(err, RINGSIM_EPARAM, "replicas must be 1 to %u", PLACE_MAX_REPLICAS);
    if (cfg->replicas > 1 && a->replicas == PLACE_REP_NONE)
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s has no replicas: replicas must be 1 (%s places one copy)", a->name,
                       a->title);
    if (!is_prime(cfg->param[PP_TABLE_SIZE]))
        return rs_fail(err, RINGSIM_EPARAM, "table_size must be a prime number (%lld is not)",
                       (long long)cfg->param[PP_TABLE_SIZE]);
    if ((rc = bound_check(a, cfg, err)) || (rc = replication_check(cfg, err)))
        return rc;
    const place_algo *base = place__find(cfg->algorithm);
    if (a != base && base->bound != PLACE_BOUND_NONE && a->bound == PLACE_BOUND_NONE &&
        cfg->param[base->bound_param] != 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s has no bounded loads in this variant (%s): %s must be 0, not %lld",
                       a->name, a->title, pdefs[base->bound_param].name,
                       (long long)cfg->param[base->bound_param]);
    if (cfg->param[PP_MIN_RING_SIZE] > cfg->param[PP_MAX_RING_SIZE])
        return rs_fail(
            err, RINGSIM_EPARAM, "min_ring_size (%lld) must not be above max_ring_size (%lld)",
            (long long)cfg->param[PP_MIN_RING_SIZE], (long long)cfg->param[PP_MAX_RING_SIZE]);
    return 0;
}

int place_nodes_check(const place_config *cfg, const place_node *nodes, size_t n, rs_error *err)
{
    const place_algo *a = place__algo(cfg);
    if (!a)
        return place_config_check(cfg, err);
    for (size_t i = 0; i < n; i++) {
        const place_node *x = &nodes[i];
        if (a->weights == PLACE_W_NONE && x->weight != 1)
            return rs_fail(err, RINGSIM_EPARAM,
                           "%s%s%s%s does not honour weights: node \"%.*s\" has weight %g (use 1)",
                           a->name, a->variants || a == place__find(a->name) ? "" : " (",
                           a->variants || a == place__find(a->name) ? "" : a->title,
                           a->variants || a == place__find(a->name) ? "" : ")",
                           (int)(x->len > 64 ? 64 : x->len), x->name, x->weight);
        if (x->weight == 0 && !a->zero_weight)
            return rs_fail(err, RINGSIM_EPARAM,
                           "%s weights are above 0: node \"%.*s\" has weight 0 (only haproxy "
                           "takes 0, a server that serves nothing)",
                           a->name, (int)(x->len > 64 ? 64 : x->len), x->name);
        if (a->weights == PLACE_W_WHOLE &&
            (x->weight != floor(x->weight) || x->weight < (a->zero_weight ? 0 : 1)))
            return rs_fail(err, RINGSIM_EPARAM,
                           "%s weights are whole numbers of at least %d: node \"%.*s\" has %g",
                           a->name, a->zero_weight ? 0 : 1, (int)(x->len > 64 ? 64 : x->len),
                           x->name, x->weight);
        if (x->ntokens && !a->tokens)
            return rs_fail(err, RINGSIM_EPARAM,
                           "explicit tokens belong to the cassandra algorithm, not %s", a->name);
    }
    return a->check_nodes ? a->check_nodes(cfg, nodes, n, err) : 0;
}

bool place_takes_param(const place_config *cfg, int param)
{
    const place_algo *a = place__find(cfg->algorithm);
    for (size_t i = 0; a && i < a->nparams; i++)
        if (a->params[i] == param)
            return true;
    return false;
}

uint32_t place_slot_count(const char *algorithm)
{
    const place_algo *a = place__find(algorithm);
    return a && a->slot_text ? a->slots : 0;
}

bool place_takes_tokens(const char *algorithm)
{
    const place_algo *a = place__find(algorithm);
    return a && a->tokens;
}

char *place_slot_text(const char *algorithm, const uint32_t *owner)
{
    const place_algo *a = place__find(algorithm);
    return a && a->slot_text ? a->slot_text(owner) : NULL;
}

json_t *place_config_json(const place_config *cfg, bool all)
{
    const place_algo *a = place__find(cfg->algorithm);
    json_t *params = json_object();
    for (int i = 0; i < PP_COUNT && params; i++) {
        bool mine = false;
        for (size_t k = 0; a && k < a->nparams; k++)
            mine |= a->params[k] == i;
        if (mine && !all && pdefs[i].quiet && cfg->param[i] == pdefs[i].def)
            continue;
        if ((all || mine) && pdefs[i].names)
            json_object_set_new(params, pdefs[i].name, json_string(pdefs[i].names[cfg->param[i]]));
        else if (all || mine)
            json_object_set_new(params, pdefs[i].name, json_integer(cfg->param[i]));
    }
    /* the replication map: stored when there is one, answered under
     * network_topology */
    bool nts = !strcmp(cfg->algorithm, "cassandra") && cfg->param[PP_STRATEGY] == PLACE_STRATEGY_NTS;
    if (params && (all ? cfg->ndc > 0 : nts))
        json_object_set_new(params, "replication", replication_json(cfg));
    if (params && cfg->replica_domain[0] && (all || (a && a->replicas != PLACE_REP_NONE)))
        json_object_set_new(params, "replica_domain", json_string(cfg->replica_domain));
    return json_pack("{s:s, s:I, s:o, s:I}", "algorithm", cfg->algorithm, "points_per_node",
                     (json_int_t)cfg->param[PP_POINTS_PER_NODE], "params", params, "replicas",
                     (json_int_t)cfg->replicas);
}

static int param_index(const char *name)
{
    for (int i = 0; i < PP_COUNT; i++)
        if (strcmp(pdefs[i].name, name) == 0)
            return i;
    return -1;
}

/* A choice by name: the index of the name, or an error listing them. */
static int set_param_name(place_config *cfg, int i, const char *v, rs_error *err)
{
    char known[256] = "";
    for (int64_t k = pdefs[i].min; k <= pdefs[i].max; k++) {
        if (v && !strcmp(v, pdefs[i].names[k])) {
            cfg->param[i] = k;
            if (i == PP_STRATEGY)
                replication_follow(cfg);
            return 0;
        }
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                 k > pdefs[i].min ? ", " : "", pdefs[i].names[k]);
    }
    return rs_fail(err, RINGSIM_EPARAM, "%s must be one of %s", pdefs[i].name, known);
}

static int set_param_int(place_config *cfg, int i, const json_t *v, rs_error *err)
{
    if (pdefs[i].names)
        return set_param_name(cfg, i, json_string_value(v), err);
    double d = json_is_integer(v) ? (double)json_integer_value(v)
               : json_is_real(v)  ? json_real_value(v)
                                  : NAN;
    if (!(d == floor(d)) || d < (double)pdefs[i].min || d > (double)pdefs[i].max)
        return rs_fail(err, RINGSIM_EPARAM, "%s must be a whole number from %lld to %lld",
                       pdefs[i].name, (long long)pdefs[i].min, (long long)pdefs[i].max);
    cfg->param[i] = (int64_t)d;
    return 0;
}

int place_config_from_json(place_config *cfg, const json_t *j, rs_error *err)
{
    if (!json_is_object(j))
        return rs_fail(err, RINGSIM_EPARAM, "the configuration must be a JSON object");
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)j, k, v)
    {
        if (!strcmp(k, "algorithm")) {
            if (!json_is_string(v) || json_string_length(v) >= sizeof cfg->algorithm ||
                !place__find(json_string_value(v))) {
                const char *name = json_is_string(v) ? json_string_value(v) : "";
                place_config probe = *cfg;
                snprintf(probe.algorithm, sizeof probe.algorithm, "%s", name);
                if (!json_is_string(v))
                    return rs_fail(err, RINGSIM_EPARAM, "algorithm must be a string");
                return place_config_check(&probe, err)
                           ? err->code
                           : rs_fail(err, RINGSIM_EPARAM, "unknown algorithm");
            }
            strcpy(cfg->algorithm, json_string_value(v));
        } else if (!strcmp(k, "points_per_node")) {
            rc = set_param_int(cfg, PP_POINTS_PER_NODE, v, err);
        } else if (!strcmp(k, "replicas")) {
            double d = json_is_integer(v) ? (double)json_integer_value(v)
                       : json_is_real(v)  ? json_real_value(v)
                                          : NAN;
            if (!(d == floor(d)) || d < 1 || d > PLACE_MAX_REPLICAS)
                return rs_fail(err, RINGSIM_EPARAM, "replicas must be a whole number from 1 to %u",
                               PLACE_MAX_REPLICAS);
            cfg->replicas = (uint32_t)d;
        } else if (!strcmp(k, "params")) {
            if (!json_is_object(v))
                return rs_fail(err, RINGSIM_EPARAM, "params must be an object");
            const char *pk;
            json_t *pv;
            json_object_foreach(v, pk, pv)
            {
                if (!strcmp(pk, "replication")) {
                    if ((rc = replication_from_json(cfg, pv, err)))
                        return rc;
                    continue;
                }
                if (!strcmp(pk, "replica_domain")) {
                    if (!json_is_string(pv) && !json_is_null(pv))
                        return rs_fail(err, RINGSIM_EPARAM,
                                       "replica_domain must be a location type (\"rack\") or "
                                       "\"\" for none");
                    if ((rc = replica_domain_set(cfg, json_is_null(pv) ? "" : json_string_value(pv),
                                                 json_string_length(pv), err)))
                        return rc;
                    continue;
                }
                int i = param_index(pk);
                if (i < 0)
                    return rs_fail(err, RINGSIM_EPARAM, "unknown parameter \"%.64s\"", pk);
                if ((rc = set_param_int(cfg, i, pv, err)))
                    return rc;
            }
        } else {
            return rs_fail(err, RINGSIM_EPARAM, "unknown configuration field \"%.64s\"", k);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int place_config_set_param(place_config *cfg, const char *name, const char *value, rs_error *err)
{
    if (!strcmp(name, "replication"))
        return replication_from_text(cfg, value, err);
    if (!strcmp(name, "replica_domain"))
        return replica_domain_set(cfg, value, strlen(value), err);
    int i = param_index(name);
    if (i < 0)
        return rs_fail(err, RINGSIM_EPARAM, "unknown parameter \"%.64s\"", name);
    if (pdefs[i].names)
        return set_param_name(cfg, i, value, err);
    char *end;
    double d = strtod(value, &end);
    if (!*value || *end)
        return rs_fail(err, RINGSIM_EPARAM, "%s must be a whole number, not \"%.64s\"", name, value);
    json_t *v = json_real(d);
    int rc = v ? set_param_int(cfg, i, v, err) : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    json_decref(v);
    return rc;
}

/* A parameter is "mentioned" in descriptions when the algorithm takes it. */
char *place_config_describe(const place_config *cfg)
{
    const place_algo *a = place__find(cfg->algorithm);
    char buf[256];
    size_t n = (size_t)snprintf(buf, sizeof buf, "algorithm %s", cfg->algorithm);
    for (size_t k = 0; a && k < a->nparams && n < sizeof buf; k++) {
        int i = a->params[k];
        /* a bounded-load factor that is off changes nothing: unsaid */
        if (a->bound != PLACE_BOUND_NONE && i == a->bound_param && cfg->param[i] == 0)
            continue;
        /* nor a variant's parameter at its default (the system as before) */
        if (pdefs[i].quiet && i != PP_BALANCE_FACTOR && cfg->param[i] == pdefs[i].def)
            continue;
        if (i == PP_POINTS_PER_NODE)
            n += (size_t)snprintf(buf + n, sizeof buf - n, ", %lld point%s per node",
                                  (long long)cfg->param[i], cfg->param[i] == 1 ? "" : "s");
        else if (pdefs[i].names)
            n += (size_t)snprintf(buf + n, sizeof buf - n, ", %s %s", pdefs[i].name,
                                  pdefs[i].names[cfg->param[i]]);
        else
            n += (size_t)snprintf(buf + n, sizeof buf - n, ", %s %lld", pdefs[i].name,
                                  (long long)cfg->param[i]);
    }
    if (cfg->replicas > 1 && n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, ", %u replicas", cfg->replicas);
    return strdup(buf);
}

/* What the catalogue says of an entry, "params" and "variants" aside. */
static json_t *algo_traits(const place_algo *a)
{
    static const char *const wk[] = {"any", "whole", "no"};
    static const char *const rk[] = {"walk", "highest", "no"};
    /* bounded_loads: the traffic replay's rule, null when it has none */
    static const char *const bk[] = {NULL, "haproxy", "envoy", "mtz"};
    /* point_rule: which point decides a key, null without points */
    const char *pr = !a->points ? NULL : a->nearest ? "nearest" : "successor";
    /* moves: how a change is counted; "regions" when the coordinate space
     * changes hands in segments, "every key" when each key is placed again */
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:b, s:s, s:s, s:b, s:s?, s:s?, s:s}", "name",
                     a->name, "title", a->title, "space", a->space, "key_hash", a->key_hash,
                     "weights", a->weights != PLACE_W_NONE, "weight_rule", wk[a->weights],
                     "replicas", a->replicas != PLACE_REP_NONE, "replica_rule", rk[a->replicas],
                     "origin", a->origin, "minimal", a->minimal, "bounded_loads", bk[a->bound],
                     "point_rule", pr, "moves", a->col >= 0 && a->segments ? "regions" : "every key");
}

const char *place_key_hash(const place_config *cfg)
{
    /* ketama's key hash follows its mode and key_hash (alg_ketama.h). */
    static const char *const ketama_text[KETAMA_NHASH] = {
        [KETAMA_HASH_ONE_AT_A_TIME] = "libhashkit's one_at_a_time",
        [KETAMA_HASH_MD5] = "MD5, first 32 bits little-endian",
        [KETAMA_HASH_CRC] = "libhashkit's crc",
        [KETAMA_HASH_FNV1_64] = "libhashkit's fnv1_64",
        [KETAMA_HASH_FNV1A_64] = "libhashkit's fnv1a_64",
        [KETAMA_HASH_FNV1_32] = "libhashkit's fnv1_32",
        [KETAMA_HASH_FNV1A_32] = "libhashkit's fnv1a_32",
        [KETAMA_HASH_MURMUR] = "libhashkit's murmur",
        [KETAMA_HASH_JENKINS] = "libhashkit's jenkins"};
    const place_algo *a = place__algo(cfg);
    if (!a)
        return "";
    if (!strcmp(a->name, "ketama")) {
        ketama_hash_fn fn = ketama_hash_resolve((ketama_mode)cfg->param[PP_KETAMA_MODE],
                                                (ketama_hash_fn)cfg->param[PP_KETAMA_HASH]);
        if (fn > KETAMA_HASH_AUTO && fn < KETAMA_NHASH && ketama_text[fn])
            return ketama_text[fn];
    }
    return a->key_hash;
}

json_t *place_algorithms_json(void)
{
    json_t *arr = json_array();
    for (const place_algo *const *ap = place__algos; arr && *ap; ap++) {
        const place_algo *a = *ap;
        json_t *ps = json_array();
        for (size_t k = 0; ps && k < a->nparams; k++) {
            const pdef *d = &pdefs[a->params[k]];
            /* HAProxy reads its factor into an int (bound_check) */
            int64_t max = a->bound == PLACE_BOUND_HAPROXY && a->params[k] == a->bound_param
                              ? 2147483647
                              : d->max;
            json_t *pj = json_pack("{s:s, s:I, s:I, s:I}", "name", d->name, "default",
                                   (json_int_t)d->def, "min", (json_int_t)d->min, "max",
                                   (json_int_t)max);
            if (pj && d->names) {
                json_t *vals = json_array();
                for (int64_t v = d->min; vals && v <= d->max; v++)
                    json_array_append_new(vals, json_string(d->names[v]));
                json_object_set_new(pj, "values", vals);
                json_object_set_new(pj, "default", json_string(d->names[d->def]));
            }
            json_array_append_new(ps, pj);
        }
        json_t *e = algo_traits(a);
        /* cassandra's replication map: a factor per datacenter, not a
         * number, so beside "params" (whose entries v2 gives a range) */
        /* replica_domain: a location type, for every algorithm with replicas */
        if (e && a->replicas != PLACE_REP_NONE)
            json_object_set_new(e, "text_params",
                                json_pack("[{s:s, s:s, s:s}]", "name", "replica_domain", "value",
                                          "location type", "default", ""));
        if (e && a->nparams && a->params[a->nparams - 1] == PP_STRATEGY)
            json_object_set_new(e, "map_params",
                                json_pack("[{s:s, s:s, s:I, s:I}]", "name", "replication", "value",
                                          "datacenter: factor", "max_datacenters",
                                          (json_int_t)PLACE_MAX_DCS, "max_total",
                                          (json_int_t)PLACE_MAX_REPLICAS));
        if (e)
            json_object_set_new(e, "params", ps);
        else
            json_decref(ps);
        /* variants: the same name and parameters, another layout, selected
         * by one parameter's value ("when"), each with its own traits */
        json_t *vs = a->nvariants ? json_array() : NULL;
        for (size_t k = 0; vs && k < a->nvariants; k++) {
            const place_variant *v = &a->variants[k];
            const pdef *d = &pdefs[v->param];
            json_t *ve = algo_traits(v->a);
            json_t *when = json_object();
            json_object_set_new(when, d->name,
                                d->names ? json_string(d->names[v->value])
                                         : json_integer((json_int_t)v->value));
            json_object_set_new(ve, "when", when);
            json_array_append_new(vs, ve);
        }
        if (vs)
            json_object_set_new(e, "variants", vs);
        json_array_append_new(arr, e);
    }
    return arr;
}

uint64_t place_layout_points(const place_config *cfg, const place_node *nodes, size_t n)
{
    const place_algo *a = place__algo(cfg);
    return a && a->layout_points ? a->layout_points(cfg, nodes, n) : 0;
}

/* ---- building ---- */

/* p->by_node and p->node_at from p->sizes: a counting sort of the points by
 * node, O(points + nodes), so a node's points are read without a scan. */
static int group_points(placement *p, rs_error *err)
{
    p->node_at = malloc((p->n + 1) * sizeof *p->node_at);
    p->by_node = malloc(p->npts * sizeof *p->by_node);
    if (!p->node_at || !p->by_node)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    size_t at = 0;
    for (size_t i = 0; i < p->n; i++) {
        p->node_at[i] = at;
        at += (size_t)p->sizes[i];
    }
    p->node_at[p->n] = at;
    size_t *next = calloc(p->n + 1, sizeof *next);
    if (!next)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t k = 0; k < p->npts; k++) {
        size_t node = p->pts[k].node;
        p->by_node[p->node_at[node] + next[node]++] = k;
    }
    free(next);
    return 0;
}

/* The nodes' states (place_states.c) and, when it asks for one, the
 * layout of the nodes that serve: a placement of its own, built here so
 * that place_states.c builds none and calls nothing of this file. */
static int build_states(placement *p, hasher *h, rs_error *err)
{
    const place_node *sub_nodes;
    size_t m;
    /* a walk of points (Cassandra's replicas, NetworkTopologyStrategy's too) */
    int rc = place__states_build(p, p->a->prefs == place__walk_prefs || p->a->down_walk_replicas,
                                 &sub_nodes, &m, err);
    if (rc || !sub_nodes)
        return rc;
    placement *sub;
    rc = place_build(&sub, h, &p->cfg, sub_nodes, m, NULL, NULL, err);
    if (!rc)
        place__states_adopt(p, sub);
    return rc;
}

/* replica_domain's ids: nodes of the same domain name share one. */
static int domains_build(placement *p, rs_error *err)
{
    const char *type = p->cfg.replica_domain;
    if (!type[0] || p->a->replicas == PLACE_REP_NONE)
        return 0;
    if (!(p->dom = malloc((p->n + 1) * sizeof *p->dom)))
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++) {
        const char *d = place_loc_get(p->nodes[i].loc, p->nodes[i].nloc, type);
        size_t j = 0;
        while (d && j < i &&
               !(p->dom[j] != PLACE_NO_DOMAIN &&
                 !strcmp(place_loc_get(p->nodes[j].loc, p->nodes[j].nloc, type), d)))
            j++;
        p->dom[i] = !d ? PLACE_NO_DOMAIN : j < i ? p->dom[j] : (uint32_t)i;
    }
    return 0;
}

int place_build(placement **out, hasher *h, const place_config *cfg, const place_node *nodes,
                size_t n, const placement *prev, const char *state, rs_error *err)
{
    *out = NULL;
    int rc = place_config_check(cfg, err);
    if (rc || (rc = place_nodes_check(cfg, nodes, n, err)))
        return rc;
    placement *p = calloc(1, sizeof *p);
    if (!p)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory building the placement");
    p->a = place__algo(cfg);
    p->cfg = *cfg;
    p->n = n;
    p->nodes = nodes;
    p->top = p->a->top ? p->a->top(cfg) : UINT32_MAX;
    p->ids = malloc((n + 1) * sizeof *p->ids);
    if (!p->ids) {
        place_free(p);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory building the placement");
    }
    p->anodes = malloc((n + 1) * sizeof *p->anodes);
    if (!p->anodes) {
        place_free(p);
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory building the placement");
    }
    for (size_t i = 0; i < n; i++) {
        p->ids[i] = nodes[i].id;
        p->anodes[i] = (alg_node){nodes[i].name, nodes[i].len, nodes[i].weight};
    }
    if (prev && prev->a != p->a)
        prev = NULL; /* a switch starts the state afresh */
    place_from from = {h, prev, state};
    rc = domains_build(p, err);
    if (!rc)
        rc = p->a->build(p, &from, err);
    if (!rc && !(p->sizes = calloc(n + 1, sizeof *p->sizes)))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    for (uint64_t k = 0; !rc && p->table && n && k <= p->top; k++)
        p->sizes[p->table[k]]++;
    for (size_t k = 0; !rc && !p->table && k < p->npts; k++)
        p->sizes[p->pts[k].node]++;
    /* Without points (jump, rendezvous) every node is one; an algorithm of
     * points with none (haproxy's servers all of weight 0) holds nothing. */
    for (size_t k = 0; !rc && !p->table && !p->npts && !p->a->points && k < n; k++)
        p->sizes[k] = 1;
    if (!rc && p->npts && ring_index(&p->ring, p->pts, p->npts, p->top))
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    if (!rc && p->npts && !p->table)
        rc = group_points(p, err);
    if (!rc)
        rc = build_states(p, h, err);
    if (rc) {
        place_free(p);
        if (err && !err->msg[0])
            rs_fail(err, rc, "cannot build the %s placement", cfg->algorithm);
        return rc;
    }
    *out = p;
    return 0;
}

void place_free(placement *p)
{
    if (!p)
        return;
    place_free(place__states_free(p));
    if (p->a && p->a->free_extra)
        p->a->free_extra(p);
    ring_free(p->ring);
    free(p->pts);
    free(p->table);
    free(p->ids);
    free(p->anodes);
    free(p->node_hash);
    free(p->sizes);
    free(p->by_node);
    free(p->node_at);
    free(p->dom);
    free(p);
}

const place_config *place_cfg(const placement *p) { return &p->cfg; }
size_t place_node_count(const placement *p) { return p->n; }

uint64_t place_node_size(const placement *p, size_t i) { return i < p->n ? p->sizes[i] : 0; }

bool place_point_of(const placement *p, const place_key_info *k, place_point *out)
{
    if (!p->a->points || k->point < 0 || (size_t)k->point >= p->npts)
        return false;
    const alg_point *pt = &p->pts[k->point];
    *out = (place_point){pt->coord, (long)pt->node, pt->index, k->coord > p->pts[p->npts - 1].coord};
    return true;
}

size_t place_point_count(const placement *p) { return p->pts ? p->npts : 0; }

uint32_t place_point_node(const placement *p, size_t i) { return p->pts[i].node; }

char *place_state_text(const placement *p) { return p->a->state_text ? p->a->state_text(p) : NULL; }

/* ---- keys ---- */

void place_key(const placement *p, hasher *h, const char *key, size_t len, place_key_info *out)
{
    memset(out, 0, sizeof *out);
    out->owner = -1;
    out->point = -1;
    out->via = -1;
    out->sha64 = hash_sha64(h, key, len); /* one SHA-256 serves both */
    out->position = (uint32_t)(out->sha64 >> 32);
    p->a->key(p, h, key, len, out);
    out->served = out->owner;
    if (p->st) {
        const size_t *map;
        const placement *sub = place_serving_layout(p, &map);
        place_key_info sk;
        if (sub != p)
            place_key(sub, h, key, len, &sk);
        place__states_key(p, sub != p ? &sk : NULL, key, len, out);
    }
}

size_t place_prefs(const placement *p, const place_key_info *k, uint32_t r, long *out)
{
    if (k->owner < 0 || r == 0)
        return 0;
    if (r > PLACE_MAX_PREFS)
        r = PLACE_MAX_PREFS;
    if (p->a->prefs)
        return p->a->prefs(p, k, r, out);
    out[0] = k->owner;
    return 1;
}

void place_hash_str(const placement *p, uint64_t hash, char out[24])
{
    if (p->a->coord_kind == PLACE_COORD_SIGNED)
        snprintf(out, 24, "%lld", (long long)alg_to_signed(hash));
    else
        snprintf(out, 24, "%llu", (unsigned long long)hash);
}

/* ---- diffs ---- */

int place_column(const placement *p) { return p->a->col; }

uint64_t place_top(const placement *p) { return p->top; }

const char *place_coord_name(const placement *p)
{
    return p->a->coord_kind == PLACE_COORD_NONE ? NULL : p->a->coord_name;
}

int place_diff_column(const placement *a, const placement *b)
{
    if (a->a != b->a || a->a->col < 0 || !a->a->segments)
        return -1;
    /* Key coordinates that depend on a parameter (maglev's table size)
     * change with it: then every key is re-placed. */
    if (a->a->coord_param >= 0 && a->cfg.param[a->a->coord_param] != b->cfg.param[b->a->coord_param])
        return -1;
    return a->a->col;
}

bool place_same_coords(const placement *a, const placement *b)
{
    bool ca = a->a->col == PLACE_COL_COORD, cb = b->a->col == PLACE_COL_COORD;
    if (!ca || !cb)
        return !ca && !cb;
    if (a->a != b->a)
        return false;
    return a->a->coord_param < 0 ||
           a->cfg.param[a->a->coord_param] == b->cfg.param[b->a->coord_param];
}

int place_segments(const placement *p, place_seg **out, size_t *n)
{
    if (p->st)
        return place__states_segments(p, out, n);
    return p->a->segments(p, out, n);
}

bool place_leave_moves_only_its_keys(const placement *p)
{
    return p->a->minimal || p->a->leave_local;
}

bool place_only_leavers_move(const placement *a, const placement *b)
{
    if (a->a != b->a || !a->a->leave_local || b->n >= a->n || a->st || b->st ||
        !place_config_equal(&a->cfg, &b->cfg))
        return false;
    /* Every node of b must have been in a. */
    for (size_t i = 0; i < b->n; i++) {
        bool found = false;
        for (size_t j = 0; j < a->n && !found; j++)
            found = a->ids[j] == b->ids[i];
        if (!found)
            return false;
    }
    return true;
}

/* ---- shares ---- */

void place_shares(const placement *p, double *share, size_t n)
{
    for (size_t i = 0; i < n; i++)
        share[i] = 0;
    if (!p->n)
        return;
    if (p->a->shares) {
        p->a->shares(p, share);
        return;
    }
    place_owns(p, 1, share, n);
}

void place_owns(const placement *p, uint32_t r, double *owns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        owns[i] = 0;
    if (!p->n)
        return;
    if (r > p->n)
        r = (uint32_t)p->n;
    if (p->a->owns) {
        p->a->owns(p, r, owns);
        return;
    }
    double space = (double)p->top + 1.0;
    if (p->npts && p->a->col >= 0 && !p->table) {
        long pref[PLACE_MAX_PREFS];
        for (size_t i = 0; i < p->npts; i++) {
            uint64_t prev = p->pts[i ? i - 1 : p->npts - 1].coord;
            double arc = i ? (double)(p->pts[i].coord - prev)
                           : (double)p->pts[0].coord + (space - 1.0 - (double)prev) + 1.0;
            if (p->npts == 1)
                arc = space;
            if (arc <= 0)
                continue;
            size_t got = place__walk(p, i, r, pref);
            for (size_t k = 0; k < got; k++)
                owns[pref[k]] += arc / space;
        }
        return;
    }
    if (p->table) {
        for (uint64_t i = 0; i <= p->top; i++)
            owns[p->table[i]] += 1.0 / space;
        return;
    }
    /* Owner functions with no layout to measure: an even sample of the key
     * hash space (hashes spread by a mixer, 256 per node, at least 4096 and
     * at most 2^20), so the noise stays near 1/16 of a node's share. */
    long pref[PLACE_MAX_PREFS];
    size_t want = p->n * 256;
    const int S = want < 4096 ? 4096 : want > (1u << 20) ? (1 << 20) : (int)want;
    for (int s = 0; s < S; s++) {
        place_key_info k = {0};
        k.hash = hash_mix((uint64_t)s * 0x9e3779b97f4a7c15ull);
        k.coord = k.hash;
        k.owner = -1;
        k.point = -1;
        p->a->owner_of_hash(p, &k);
        size_t got = place_prefs(p, &k, r, pref);
        for (size_t i = 0; i < got; i++)
            owns[pref[i]] += 1.0 / S;
    }
}

size_t place_memory_bytes(const placement *p)
{
    size_t b = sizeof *p + p->n * (sizeof *p->ids + sizeof *p->sizes);
    b += p->npts * sizeof *p->pts;
    b += ring_memory_bytes(p->ring); /* the successor index over the points */
    /* not p->by_node: ringsim's index for drawing a node's points, which
     * the real systems, whose memory this compares, do not hold */
    if (p->table)
        b += (size_t)(p->top + 1) * sizeof *p->table;
    if (p->node_hash)
        b += p->n * sizeof *p->node_hash;
    return b;
}

double place_structural_max_over_mean(const placement *p)
{
    if (!p->n)
        return 0;
    double *s = calloc(p->n, sizeof *s);
    if (!s)
        return 0;
    place_shares(p, s, p->n);
    double mx = 0;
    for (size_t i = 0; i < p->n; i++)
        mx = s[i] > mx ? s[i] : mx;
    free(s);
    return mx * (double)p->n;
}

bool place_pg_diff(const placement *before, const placement *after, int64_t *remapped, int64_t *shards)
{
    if (!after || !after->a->pg_diff)
        return false;
    /* from another algorithm (or none): every PG is new */
    after->a->pg_diff(before && before->a == after->a ? before : NULL, after, remapped, shards);
    return true;
}

/* ---- drawing ---- */

void place_node_json(const placement *p, size_t node, json_t *obj)
{
    if (p->a->node_json) {
        p->a->node_json(p, node, obj);
        return;
    }
    if (!p->npts || p->a->coord_kind == PLACE_COORD_NONE || p->table)
        return;
    json_t *t = json_array();
    char buf[24];
    size_t m;
    const size_t *at = place__node_points(p, node, &m);
    for (size_t i = 0; t && i < m; i++) {
        place_coord_str(p, p->pts[at[i]].coord, buf);
        json_array_append_new(t, json_string(buf));
    }
    json_object_set_new(obj, "tokens", t);
}

static json_t *space_json(const placement *p)
{
    char buf[32];
    if (p->top == UINT64_MAX)
        return json_string("18446744073709551616");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->top + 1ull);
    return json_string(buf);
}

uint32_t place_point_position(const placement *p, uint64_t coord)
{
    if (p->top == UINT32_MAX)
        return (uint32_t)coord;
    double frac = ((double)coord + 0.5) / ((double)p->top + 1.0);
    return (uint32_t)(json_int_t)(frac * 4294967296.0);
}

json_t *place_layout_json(const placement *p, const char *const *names)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "space", space_json(p));
    char buf[24];
    if (p->table) {
        place_seg *seg = NULL;
        size_t m = 0;
        json_t *runs = json_array();
        if (!place__table_segments(p, &seg, &m)) {
            uint64_t first = 0;
            for (size_t i = 0; runs && i < m; i++) {
                json_array_append_new(
                    runs,
                    json_pack("{s:I, s:I, s:o}", "first", (json_int_t)first, "last",
                              (json_int_t)seg[i].hi, "node",
                              seg[i].owner < 0 ? json_null() : json_string(names[seg[i].owner])));
                first = seg[i].hi + 1;
            }
        }
        free(seg);
        json_object_set_new(o, "runs", runs);
        return o;
    }
    json_t *pts = json_array();
    for (size_t i = 0; pts && i < p->npts; i++) {
        json_t *e = json_pack("{s:s}", "node", names[p->pts[i].node]);
        if (p->a->coord_kind != PLACE_COORD_NONE) {
            place_coord_str(p, p->pts[i].coord, buf);
            json_object_set_new(e, "coordinate", json_string(buf));
        }
        json_object_set_new(e, "position",
                            json_integer((json_int_t)place_point_position(p, p->pts[i].coord)));
        json_object_set_new(e, "index", json_integer(p->pts[i].index));
        json_array_append_new(pts, e);
    }
    json_object_set_new(o, "points", pts);
    return o;
}

json_t *place_trace_json(const placement *p, const char *key, size_t len, const place_key_info *k,
                         const char *const *names)
{
    json_t *t = json_array();
    if (!t)
        return NULL;
    p->a->trace(p, key, len, k, names, t);
    if (k->owner >= 0 && p->nodes[k->owner].down) {
        const place_node *o = &p->nodes[k->owner];
        if (k->via >= 0)
            place__step(t, "state", "%s is down: %s; %s serves the key", names[k->owner],
                        place_down_rule_text(p), o->replicas[k->via]);
        else if (k->served >= 0)
            place__step(t, "state", "%s is down: %s; %s serves the key", names[k->owner],
                        place_down_rule_text(p), names[k->served]);
        else
            place__step(t, "state", "%s is down: %s; nobody serves the key", names[k->owner],
                        place_down_rule_text(p));
    } else if (k->served != k->owner) {
        place__step(t, "state", "%s; %s serves the key", place_down_rule_text(p),
                    k->served >= 0 ? names[k->served] : "nobody");
    }
    return t;
}
