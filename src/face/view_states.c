/*
 * view_states.c - node states in the JSON answers (docs/api.md "Node states"):
 * a node's "state", "backup", "replicas" and "serving_points", and what a
 * set_state operation answers beside the common fields.
 */
#include "view.h"

#include <string.h>

void view_node_states(sim *s, const sim_node_view *v, json_t *o)
{
    json_object_set_new(o, "state", json_string(v->down ? "down" : "up"));
    if (v->backup)
        json_object_set_new(o, "backup", json_true());
    if (v->nreplicas) {
        json_t *r = json_array();
        for (size_t i = 0; r && i < v->nreplicas; i++)
            json_array_append_new(r, json_string(v->replicas[i]));
        json_object_set_new(o, "replicas", r);
    }
    /* While some node is down: what the node serves from once the states
     * are applied (a rebuilt continuum's points, 0 for a down node). */
    if (place_down_count(sim_placement(s)))
        json_object_set_new(o, "serving_points", json_integer((json_int_t)v->serving_points));
}

/* A placement is a function of the nodes, their states and the
 * configuration, so a node that comes up again with nothing else changed
 * brings back exactly the serving layout before it went down: every key
 * this operation moved moves back, no other.  "moves_back_when_up" says so
 * on the operation that took the node down. */
void view_state_op(const sim_op *op, json_t *o)
{
    sim_op_params p;
    rs_error e;
    bool down = !sim_op_params_read(op, &p, &e) && p.node.down;
    json_object_set_new(o, "state", json_string(down ? "down" : "up"));
    if (down)
        json_object_set_new(o, "moves_back_when_up", json_integer((json_int_t)op->keys_moved));
    if (p.dom_type) /* a whole domain (API.md v4) */
        json_object_set_new(o, "domain", json_pack("[s,s]", p.dom_type, p.dom_name));
    sim_op_params_clear(&p);
}
