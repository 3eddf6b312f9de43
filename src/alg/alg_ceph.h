/*
 * alg_ceph.h - Ceph's CRUSH: straw2 buckets, rules, the PG of an object and
 * its placement seed, bit for bit as Ceph computes them.
 *
 * Reference (ceph/ceph, read and re-written, not copied):
 *   src/crush/hash.c          crush_hash32_rjenkins1_2 / _3 (Jenkins' mix,
 *                             seed 1315423911, the constants 231232, 1232)
 *   src/crush/crush_ln_table.h __RH_LH_tbl and __LL_tbl: carried verbatim in
 *                             alg_ceph_ln.h as interoperability data (about
 *                             45 of the 256 LL entries differ from the
 *                             formula in Ceph's own comment; straw2 draws
 *                             depend on the table, not on the formula)
 *   src/crush/mapper.c        crush_ln, bucket_straw2_choose, is_out,
 *                             crush_choose_firstn, crush_choose_indep,
 *                             crush_do_rule
 *   src/common/ceph_hash.cc   ceph_str_hash_rjenkins (an object's hash)
 *   src/include/rados.h       ceph_stable_mod
 *   src/osd/osd_types.cc      pg_pool_t::raw_pg_to_pps (hashpspool)
 *   src/osd/OSDMap.cc         _raw_to_up_osds: a down OSD leaves a
 *                             replicated up set (the rest shift up) and
 *                             becomes a hole (CEPH_ITEM_NONE) in an
 *                             erasure-coded one
 *
 * Quirks kept on purpose: choose_total_tries counts retries, so the rule
 * runs tries + 1 descents ("the original choose_total_tries value was off by
 * one"); a straw2 item of weight 0 draws S64_MIN and can still win when
 * every item weighs 0; an indep rule's r grows by numrep per failed round;
 * firstn with chooseleaf_stable starts each leaf search at rep 0.  Only
 * straw2 buckets and the rjenkins1 hash exist here; a map with
 * choose_local_fallback_tries > 0 (bucket permutations, legacy tunables)
 * is refused by ceph_map_check.
 *
 * Cost: a straw2 choice is one hash, one table logarithm and one 64-bit
 * division per item of the bucket; a rule is O(depth x bucket size x
 * retries).  Pure functions of the map (never modified while mapping), so
 * any number of threads may map through one map at once; no allocation on
 * the mapping path (the caller gives the scratch).
 */
#ifndef RINGSIM_ALG_CEPH_H
#define RINGSIM_ALG_CEPH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CEPH_ITEM_NONE 0x7fffffff  /* a hole in an indep result */
#define CEPH_ITEM_UNDEF 0x7ffffffe /* not yet chosen (internal) */
#define CEPH_WEIGHT_ONE 0x10000u   /* 1.0 in 16.16 fixed point */
#define CEPH_MAX_RESULT 64         /* most OSDs a rule may emit here */
#define CEPH_MAX_DEPTH 16          /* deepest bucket nesting accepted */

/* Rule step operations, numbered as crush.h numbers them. */
enum ceph_op {
    CEPH_OP_NOOP = 0,
    CEPH_OP_TAKE = 1,
    CEPH_OP_CHOOSE_FIRSTN = 2,
    CEPH_OP_CHOOSE_INDEP = 3,
    CEPH_OP_EMIT = 4,
    CEPH_OP_CHOOSELEAF_FIRSTN = 6,
    CEPH_OP_CHOOSELEAF_INDEP = 7,
    CEPH_OP_SET_CHOOSE_TRIES = 8,
    CEPH_OP_SET_CHOOSELEAF_TRIES = 9,
    CEPH_OP_SET_CHOOSE_LOCAL_TRIES = 10,
    CEPH_OP_SET_CHOOSE_LOCAL_FALLBACK_TRIES = 11,
    CEPH_OP_SET_CHOOSELEAF_VARY_R = 12,
    CEPH_OP_SET_CHOOSELEAF_STABLE = 13,
};

enum ceph_rule_type { CEPH_RULE_REPLICATED = 1, CEPH_RULE_ERASURE = 3 };

typedef struct ceph_step {
    int op;
    int32_t arg1, arg2;
} ceph_step;

typedef struct ceph_rule {
    char *name; /* owned by the map */
    int32_t id;
    int type; /* enum ceph_rule_type */
    size_t nsteps;
    ceph_step *steps; /* owned by the map */
} ceph_rule;

/* A straw2 bucket, hash rjenkins1. */
typedef struct ceph_bucket {
    char *name; /* owned by the map */
    int32_t id; /* < 0 */
    int32_t type;
    uint32_t size;
    int32_t *items;    /* devices >= 0, buckets < 0; owned by the map */
    uint32_t *weights; /* 16.16, per item; owned by the map */
    uint32_t weight;   /* sum of weights (wrapping as Ceph's __u32 does) */
} ceph_bucket;

typedef struct ceph_tunables {
    uint32_t choose_local_tries;          /* optimal: 0 */
    uint32_t choose_local_fallback_tries; /* optimal: 0 (only 0 supported) */
    uint32_t choose_total_tries;          /* optimal: 50 */
    uint32_t chooseleaf_descend_once;     /* optimal: 1 */
    uint32_t chooseleaf_vary_r;           /* optimal: 1 */
    uint32_t chooseleaf_stable;           /* optimal: 1 */
} ceph_tunables;

typedef struct ceph_type {
    int32_t id;
    char *name; /* owned by the map */
} ceph_type;

typedef struct ceph_device {
    int32_t id;
    char *name;  /* owned by the map ("osd.N") */
    char *klass; /* device class or NULL; owned by the map */
} ceph_device;

/* A whole map, as `crushtool -d` shows one.  buckets[-1-id] is the bucket
 * of that id or NULL. */
typedef struct ceph_map {
    ceph_tunables t;
    int32_t max_devices; /* 1 + the highest device id, as crush_map has it */
    int32_t max_buckets;
    ceph_bucket **buckets;
    size_t ntypes, ndevices, nrules;
    ceph_type *types;
    ceph_device *devices;
    ceph_rule *rules;
} ceph_map;

#define CEPH_MAX_PGS 65536 /* most PGs of a pool ringsim simulates */

/* The types `ceph osd crush` starts a map with, index = type id (osd 0,
 * host 1, ... root 11), NULL-terminated. */
extern const char *const ceph_type_names[];

/* The `optimal` profile. */
ceph_tunables ceph_tunables_optimal(void);

/* Hashes (hash.c, ceph_hash.cc).  Cannot fail. */
uint32_t ceph_hash32_2(uint32_t a, uint32_t b);
uint32_t ceph_hash32_3(uint32_t a, uint32_t b, uint32_t c);
uint32_t ceph_str_hash_rjenkins(const char *s, size_t len);

/* 2^44 * log2(x + 1) by Ceph's tables, x < 0x10000.  Cannot fail. */
uint64_t ceph_crush_ln(uint32_t x);

/* The draw of an item of 16.16 weight w for input x, replica r: the
 * straw2 value the highest of which wins (INT64_MIN for w 0). */
int64_t ceph_straw2_draw(int32_t x, int32_t item, int32_t r, uint32_t w);

/* The PG side (rados.h, osd_types.cc).  mask = ceph_pg_mask(n). */
uint32_t ceph_pg_mask(uint32_t n);
uint32_t ceph_stable_mod(uint32_t x, uint32_t b, uint32_t bmask);
/* The placement seed of PG ps of pool (raw_pg_to_pps). */
uint32_t ceph_pps(uint32_t ps, uint32_t pool, uint32_t pgp_num, int hashpspool);

/* One step of a traced mapping; see ceph_do_rule. */
enum ceph_trace_kind {
    CEPH_TR_DRAW,    /* bucket, item, r, u (the 16-bit hash), draw */
    CEPH_TR_WIN,     /* bucket, item (the winner), r */
    CEPH_TR_DESCEND, /* item is a bucket of the wrong type: go into it */
    CEPH_TR_RETRY,   /* item rejected, reason set; r is the r that drew it */
    CEPH_TR_PLACED,  /* item accepted at position pos */
    CEPH_TR_HOLE,    /* position pos left empty (indep) */
};
enum ceph_reject {
    CEPH_REJ_COLLISION = 1, /* already in the result */
    CEPH_REJ_OUT,           /* reweight refused it (is_out) */
    CEPH_REJ_NOLEAF,        /* chooseleaf found no usable leaf under it */
    CEPH_REJ_EMPTY,         /* an empty bucket */
};
typedef struct ceph_trace_ev {
    int kind;
    int reason; /* enum ceph_reject for CEPH_TR_RETRY */
    int32_t bucket, item, r;
    int pos;
    uint32_t u;
    int64_t draw;
} ceph_trace_ev;
typedef void ceph_trace_fn(void *ctx, const ceph_trace_ev *ev);

/*
 * crush_do_rule: map input x through rule into result[0..result_max) and
 * return how many were written (indep rules write CEPH_ITEM_NONE holes).
 * weight[0..weight_max) is the reweight vector (16.16, 0x10000 = in, 0 =
 * out).  result_max <= CEPH_MAX_RESULT.  trace, when not NULL, is called
 * for every draw and decision (slow; for lookup).  The map must have
 * passed ceph_map_check.  Cannot fail.
 */
int ceph_do_rule(const ceph_map *m, const ceph_rule *rule, int32_t x, int32_t *result, int result_max,
                 const uint32_t *weight, int weight_max, ceph_trace_fn *trace, void *ctx);

/* 0 when the map can be mapped (bucket items name existing devices or
 * buckets, no cycle, depth <= CEPH_MAX_DEPTH, fallback tries 0, every take
 * names a bucket), else RINGSIM_EPARAM with the reason in err. */
int ceph_map_check(const ceph_map *m, rs_error *err);

/* Frees everything the map owns, then the map; NULL is a no-op. */
void ceph_map_free(ceph_map *m);

/* Lookups by name or id; NULL or -1 when none. */
const ceph_bucket *ceph_bucket_by_name(const ceph_map *m, const char *name);
const ceph_type *ceph_type_by_id(const ceph_map *m, int32_t id);
const ceph_type *ceph_type_by_name(const ceph_map *m, const char *name);
const ceph_rule *ceph_rule_by_name(const ceph_map *m, const char *name);

/* 16.16 of a decimal weight as `crushtool -c` compiles it: strtof, times
 * 0x10000 in float, truncated to int.  RINGSIM_EPARAM on a bad number or
 * one out of range. */
int ceph_weight_parse(const char *s, uint32_t *out);
/* A decimal that ceph_weight_parse (and crushtool -c) turns back into w
 * exactly; out has room for 32 bytes.  Returns the length. */
size_t ceph_weight_format(uint32_t w, char *out);

#endif
