/*
 * cmd_int.h - what the files of the commands share: the handlers, by the
 * file that holds them, and the reading of values that both the parser
 * and the handlers do.  Only src/face includes it; everyone else sees
 * cmd.h.
 *
 * The commands are laid out as git's `git.c` and `builtin/` are, in three
 * floors that call only downward:
 *
 *   cmd.c           the options, the table and the parser, and cmd_run: the
 *                   handlers are reached only through the table's `run`
 *   cmd_node.c      node add, rm, weight, down, up, ls
 *   cmd_key.c       key add, rm, ls, gen
 *   cmd_log.c       log, diff, revert, reset: the history
 *   cmd_read.c      lookup, stats, ring, check: answers about the state
 *   cmd_config.c    config, algorithms, compare: the placement's choice
 *   cmd_preview.c   preview node, preview config (preview import and import
 *                   are import_face.c's)
 *   cmd_workload.c  workload, traffic run
 *   cmd_trace.c     trace: a request log replayed; plan: nodes for a load
 *   cmd_out.c       how the handlers print (cmd_out.h)
 *   cmd_value.c     numbers and configurations as the command line writes
 *                   them (below)
 *
 * A handler is int (*)(cmd_ctx *) as cmd_def.run says: 0, or a negative
 * RINGSIM_E code with c->err filled.
 */
#ifndef RINGSIM_CMD_INT_H
#define RINGSIM_CMD_INT_H

/* Private to its library: src/face/CMakeLists.txt defines
 * RINGSIM_FACE_INTERNAL for its own files, so a higher floor that includes
 * this header does not compile. */
#ifndef RINGSIM_FACE_INTERNAL
#error "cmd_int.h is the commands' own (src/face/): others use cmd.h"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"

/* cmd_node.c */
int cmd__node_add(cmd_ctx *c);
int cmd__node_rm(cmd_ctx *c);
int cmd__node_weight(cmd_ctx *c);
int cmd__node_state(cmd_ctx *c);    /* node down, node up: the words say which */
int cmd__node_reweight(cmd_ctx *c); /* node reweight, node out, node in */
int cmd__node_move(cmd_ctx *c);     /* node move NAME --location … */
int cmd__locations(cmd_ctx *c);     /* locations: the failure-domain tree */
int cmd__node_ls(cmd_ctx *c);

/* cmd_key.c */
int cmd__key_add(cmd_ctx *c);
int cmd__key_rm(cmd_ctx *c);
int cmd__key_ls(cmd_ctx *c);
int cmd__key_gen(cmd_ctx *c);

/* cmd_log.c */
int cmd__log(cmd_ctx *c);
int cmd__diff(cmd_ctx *c);
int cmd__revert(cmd_ctx *c);
int cmd__reset(cmd_ctx *c);

/* cmd_read.c */
int cmd__lookup(cmd_ctx *c);
int cmd__stats(cmd_ctx *c);
int cmd__ring(cmd_ctx *c);
int cmd__check(cmd_ctx *c);

/* cmd_config.c */
int cmd__config(cmd_ctx *c);
int cmd__algorithms(cmd_ctx *c);
int cmd__compare(cmd_ctx *c);

/* cmd_preview.c */
int cmd__preview_node(cmd_ctx *c);
int cmd__preview_config(cmd_ctx *c);

/* cmd_workload.c */
int cmd__workload(cmd_ctx *c);
int cmd__traffic(cmd_ctx *c);

/* cmd_trace.c */
int cmd__trace(cmd_ctx *c);
int cmd__plan(cmd_ctx *c);

/* cmd_value.c: what the parser checks and some handlers read again
 * (cmd_parse_number and cmd_config_apply, in cmd.h, are defined there
 * too).  A whole number in plain decimal digits that fits 64 bits: 0 with
 * *out, else -1.  Cannot fail otherwise. */
int cmd__parse_u64(const char *t, uint64_t *out);
/* Whether l gives any of the configuration's options (--points,
 * --algorithm, --param, --replicas). */
bool cmd__has_config_opts(const cmd_line *l);

#endif
