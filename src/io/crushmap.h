/*
 * crushmap.h - the text of a CRUSH map, as `crushtool -d` writes it and
 * `crushtool -c` reads it, to a ceph_map (alg_ceph.h) and back.
 *
 * Reference: ceph/ceph src/crush/CrushCompiler.cc (the grammar in
 * grammar.h; parse_tunable, parse_device, parse_bucket_type, parse_bucket,
 * parse_rule, decompile), read for what the compiler accepts and computes:
 *   - tunables missing from the text keep the LEGACY values crushtool -c
 *     starts from (choose_local_tries 2, choose_local_fallback_tries 5,
 *     choose_total_tries 19, the rest 0), which the mapper here refuses:
 *     a text must name the optimal ones (crushtool -d writes every tunable
 *     that differs from legacy, so a map of a real cluster does);
 *   - an item's weight is strtof(text) * (float)0x10000 truncated; an item
 *     without a weight weighs 1.0 (a device) or what its bucket weighs (a
 *     bucket); items must be defined before a bucket names them;
 *   - a bucket's `id N class C` lines are the device-class shadow trees:
 *     read, not mapped (a `step take X class C` is refused);
 *   - buckets other than straw2, a hash other than rjenkins1 (0),
 *     choose_args and MSR rules (type msr_firstn / msr_indep, step
 *     choosemsr) are refused naming the line.
 * `#` starts a comment to the end of the line.
 *
 * Cost: one pass over the tokens; item lookups by name are linear in the
 * names seen so far (maps of thousands of OSDs parse in milliseconds).
 */
#ifndef RINGSIM_CRUSHMAP_H
#define RINGSIM_CRUSHMAP_H

#include <stddef.h>

#include "alg_ceph.h"
#include "error.h"
#include "sbuf.h"

#define CRUSHMAP_MAX_ID 65536      /* device ids < this, bucket ids > -this */
#define CRUSHMAP_MAX_ITEMS 100000u /* items over all buckets */
#define CRUSHMAP_MAX_STEPS 64      /* steps in one rule */

/* Parse len bytes of text into a new map (ceph_map_free) that passed
 * ceph_map_check.  On refusal RINGSIM_EPARAM with the message in err and the
 * 1-based line in *line (0: the whole text); RINGSIM_ENOMEM.  *out is NULL
 * on failure. */
int crushmap_parse(const char *text, size_t len, ceph_map **out, int *line, rs_error *err);

/* The map as text crushtool -c compiles back to the same mappings: every
 * tunable, devices, types, buckets (children first), rules, every weight
 * exact (ceph_weight_format).  0 or RINGSIM_ENOMEM. */
int crushmap_write(const ceph_map *m, sbuf *out);

#endif
