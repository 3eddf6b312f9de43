/*
 * view.h - the JSON shapes of docs/api.md, built from the engine.
 *
 * The HTTP API and the command line's --json both print these, so the two
 * faces cannot drift apart.  Every function returns a new reference (the
 * caller json_decref()s it) or NULL with err filled.
 */
#ifndef RINGSIM_VIEW_H
#define RINGSIM_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

json_t *view_node(sim *s, const sim_node_view *v);
/* {"algorithms": [...]}: the catalogue. */
json_t *view_algorithms(rs_error *err);
json_t *view_nodes(sim *s, rs_error *err); /* {"nodes"} */
json_t *view_node_get(sim *s, const char *name, size_t len, rs_error *err);
/* The failure-domain tree (view_locations.c): {"locations": [domain…],
 * "unlocated": [name…]}. */
json_t *view_locations(sim *s, rs_error *err);
json_t *view_ring(sim *s, rs_error *err);
json_t *view_config(sim *s, rs_error *err);
/* "looks the same as \"NAME\"" when another node's name has the same NFC
 * form as name (docs/api.md v3: the "warning" beside an added node), else NULL.
 * malloc'd, the caller frees. */
char *view_lookalike(sim *s, const char *name, size_t len);
/* 0 when `algorithm` takes the parameter `name` (len bytes), else
 * RINGSIM_EPARAM naming both and the parameters it has.  An algorithm the
 * catalogue does not know passes: place_config_check() refuses it. */
int view_param_check(const char *algorithm, const char *name, size_t len, rs_error *err);
/* view_param_check() for every member of a configuration body's "params"
 * and for its top-level "points_per_node", which must not contradict
 * params' (NULL: 0). */
int view_params_check(const char *algorithm, const json_t *body, rs_error *err);
/* {"keys", "key_share", "requests_share", "bytes"}: what nobody serves now. */
json_t *view_unavailable(sim *s, rs_error *err);
json_t *view_stats(sim *s, rs_error *err);
/* The "requests" object of stats (docs/api.md v3 traffic). */
json_t *view_requests(sim *s, rs_error *err);
json_t *view_lookup(sim *s, const char *key, size_t len, rs_error *err);
json_t *view_key_get(sim *s, const char *key, size_t len, rs_error *err);
/* {"total", "keys"} in the order given (sim_keys_page_ordered); limit < 0
 * means every key. */
json_t *view_keys(sim *s, const char *node, size_t node_len, const char *prefix, size_t prefix_len,
                  sim_key_order order, bool desc, int64_t offset, int64_t limit, rs_error *err);
json_t *view_density(sim *s, uint32_t bins, rs_error *err);
/* {"total", "pgs": [{"pgid", "up", "primary", "keys"}…]}: PGs offset ..
 * offset+limit of the ceph algorithm's pool (docs/api.md "Ceph CRUSH");
 * RINGSIM_EPARAM under another algorithm. */
json_t *view_pgs(sim *s, int64_t offset, int64_t limit, rs_error *err);

json_t *view_operation(const sim_op *op);
/* The same with what docs/api.md v4 adds ("pairs", "unavailable_after";
 * null for operations logged before), read from s's log. */
json_t *view_operation_in(sim *s, const sim_op *op);
/* {"operations"}; limit < 0 means all. */
json_t *view_operations(sim *s, int64_t after, int64_t limit, rs_error *err);
/* One operation by id ("operation" object). */
json_t *view_operation_get(sim *s, int64_t id, rs_error *err);
/* One move {"key", "from", "to"} (names may be NULL); NULL when out of
 * memory. */
json_t *view_move(const char *key, const char *from, const char *to);
/* The operation plus "moves_total" and "moves" (offset, limit). */
json_t *view_operation_moves(sim *s, int64_t id, int64_t offset, int64_t limit, rs_error *err);

/* A node's states in its JSON object (view_states.c). */
void view_node_states(sim *s, const sim_node_view *v, json_t *o);
/* What a set_state operation answers beside the common fields: "state",
 * and for a node going down "moves_back_when_up" (view_states.c). */
void view_state_op(const sim_op *op, json_t *o);

/* What an add_node, remove_node, set_state or configure would do, recorded nowhere:
 * {"op", "keys_moved", "moved_from", "moved_to", "replica_moves", "before",
 * "after", "sample"}.  type is "add_node", "remove_node" (node.name) or
 * "configure" (cfg) or "set_state" (node.name, node.down; a whole domain:
 * node.name NULL and node.loc[0] the domain's type and name). */
typedef struct view_preview_req {
    sim_op_type type;   /* SIM_OP_ADD_NODE, _REMOVE_NODE, _SET_STATE, _SET_REWEIGHT,
                       * _CONFIGURE or _IMPORT */
    sim_node_spec node; /* _SET_REWEIGHT: node.weight is the reweight */
    place_config cfg;
    const import_result *import; /* type "import": the parsed text */
} view_preview_req;
json_t *view_preview(sim *s, view_preview_req *req, rs_error *err);

/* GET /api/compare: algorithms is a comma list (NULL or "": the whole
 * catalogue), params NAME=VALUE overrides for every configuration, at most
 * max_keys keys placed (an even sample beyond, said in the answer). */
json_t *view_compare(sim *s, const char *algorithms, const char *const *params, size_t nparams,
                     uint64_t max_keys, rs_error *err);

/* GET /api/theory: max/mean against points per node (measured and
 * 1 + sqrt(2 ln n / V)), and each algorithm's structural balance and join
 * moves against 1/(n+1), for n nodes (0: the current count, at least 2). */
json_t *view_theory(sim *s, int64_t nodes, rs_error *err);

/* GET /api/diff (docs/api.md v3): {"from", "to", "keys_moved", "moved_from",
 * "moved_to", "keys_added", "keys_removed", "nodes_added", "nodes_removed",
 * "config_changed", "how", "why"?, "moves_total", "moves"} with the moves
 * [offset, offset + limit) (sim_diff_get; h may be NULL). */
json_t *view_diff(sim *s, sim_history *h, int64_t from, int64_t to, int64_t offset, int64_t limit,
                  rs_error *err);

/* A stored key: {"key", "position", "node", "coordinate"} and "replicas"
 * (the preference list) when the configuration keeps more than one copy. */
json_t *view_key(sim *s, const char *key, size_t len, uint32_t pos, const char *node,
                 size_t node_len);

/* Every stored key (of node, with prefix; NULL, 0 for all), in position
 * order, to f: CSV (csv.h, one object a row), or GET /api/keys's JSON with
 * every key ({"keys": [...], "total"}).  One key at a time, so memory stays
 * flat at any count; the command line (`key ls --csv`, `--json`) and the
 * server's streamed export both write through here.  *total (may be NULL)
 * gets the count.  0, RINGSIM_EFULL when a write fails (errno says why),
 * RINGSIM_ENOMEM, or the engine's code with err. */
int view_keys_write(sim *s, FILE *f, bool csv, const char *node, size_t node_len,
                    const char *prefix, size_t prefix_len, int64_t *total, rs_error *err);

#endif
