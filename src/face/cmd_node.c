/*
 * cmd_node.c - the commands of nodes: `node add`, `node rm`, `node weight`,
 * `node down`, `node up` (one operation each) and `node ls` (the table of
 * `nodetool status`).  Reached only through cmd_table (cmd.c); prints
 * through cmd_out.h.
 *
 * The idea: a change to one node answers with the node as it is now, and a
 * change that changes nothing (the weight or state it already has) records
 * nothing and says so.  Costs: what the engine's operation costs; `node ls`
 * orders its rows by the configuration in n^2 name comparisons.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "view.h"

static void pct(char *buf, size_t size, double share)
{
    snprintf(buf, size, "%.2f%%", share * 100.0);
}

/* The people's table of `node ls`, like `nodetool status`. */
static void print_nodes_table(FILE *out, json_t *j, bool requests)
{
    json_t *nodes = json_object_get(j, "nodes"), *n;
    size_t i, wname = cmd_column_width(nodes, "name", 4);
    cmd_print_padded(out, "Node", wname);
    fprintf(out, "  %10s  %7s  %6s  %9s  %7s  %7s%s  %s\n", "Position", "Weight", "Points", "Keys",
            "Key %", "Ring %", requests ? "    Req %" : "", "State");
    json_array_foreach(nodes, i, n)
    {
        char kp[32], rp[32], qp[32];
        pct(kp, sizeof kp, json_real_value(json_object_get(n, "key_share")));
        pct(rp, sizeof rp, json_real_value(json_object_get(n, "arc_share")));
        pct(qp, sizeof qp, json_real_value(json_object_get(n, "requests")));
        cmd_print_padded(out, json_string_value(json_object_get(n, "name")), wname);
        const char *st = json_string_value(json_object_get(n, "state"));
        fprintf(out, "  %10lld  %7g  %6lld  %9lld  %7s  %7s",
                (long long)json_integer_value(json_object_get(n, "position")),
                json_number_value(json_object_get(n, "weight")),
                (long long)json_integer_value(json_object_get(n, "points")),
                (long long)json_integer_value(json_object_get(n, "keys")), kp, rp);
        if (requests)
            fprintf(out, "  %7s", qp);
        fprintf(out, "  %s%s\n", st ? st : "up",
                json_is_true(json_object_get(n, "backup")) ? " (backup)" : "");
    }
    if (!json_array_size(nodes))
        fprintf(out, "(no nodes)\n");
}

int cmd__node_add(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    sim_node_spec spec = {name,
                          strlen(name),
                          c->l->weight,
                          c->l->tokens,
                          c->l->ntokens,
                          c->l->srv_id,
                          c->l->opt[CMD_O_DOWN] != NULL,
                          c->l->opt[CMD_O_BACKUP] != NULL,
                          NULL,
                          0,
                          c->l->loc,
                          c->l->nloc};
    int rc = sim_add_node_spec(c->s, &spec, &c->op, &c->err);
    if (rc)
        return rc;
    json_t *node = view_node_get(c->s, name, strlen(name), &c->err);
    c->extra = json_pack("{s:o*}", "node", node);
    char *w = view_lookalike(c->s, name, strlen(name));
    if (w && c->extra)
        json_object_set_new(c->extra, "warning", json_string(w));
    if (w && c->out == stdout && !c->l->opt[CMD_O_JSON])
        fprintf(stderr, "ringsim: warning: node \"%s\" %s\n", name, w);
    free(w);
    return cmd__answer_change(c);
}

int cmd__node_rm(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    int rc = sim_remove_node(c->s, name, strlen(name), &c->op, &c->err);
    return rc ? rc : cmd__answer_change(c);
}

/* The answer of a change to one node (weight, state): the node as it is
 * now; a change that changed nothing says "operation": null, or in words
 * "nothing changed: node NAME <same>". */
static int answer_node_change(cmd_ctx *c, const char *name, const char *same)
{
    json_t *node = view_node_get(c->s, name, strlen(name), &c->err);
    c->extra = json_pack("{s:o*}", "node", node);
    if (c->op || !c->out)
        return cmd__answer_change(c);
    if (c->l->opt[CMD_O_JSON]) {
        json_object_set_new(c->extra, "operation", json_null());
        cmd__print_json(c->out, c->extra);
    } else {
        fprintf(c->out, "nothing changed: node %s %s\n", name, same);
    }
    return 0;
}

/* node weight NAME W: the same weight again changes nothing and records
 * nothing ("operation": null). */
int cmd__node_weight(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    int rc = sim_set_weight(c->s, name, strlen(name), c->l->weight, &c->op, &c->err);
    char same[64];
    snprintf(same, sizeof same, "already has weight %g", c->l->weight);
    return rc ? rc : answer_node_change(c, name, same);
}

/* node down|up --location TYPE=NAME: every node of the domain in one
 * set_state operation; answers the operation and the domain's nodes. */
static int domain_state(cmd_ctx *c, bool down)
{
    if (c->l->nloc != 1)
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--location names one failure domain here, TYPE=NAME (rack=r1), not %zu "
                       "levels",
                       c->l->nloc);
    const place_loc *d = &c->l->loc[0];
    int rc = sim_set_state_domain(c->s, d->type, d->name, down, &c->op, &c->err);
    if (rc)
        return rc;
    if (c->op || !c->out)
        return cmd__answer_change(c);
    if (c->l->opt[CMD_O_JSON]) {
        json_t *j = json_pack("{s:n}", "operation");
        cmd__print_json(c->out, j);
        json_decref(j);
    } else
        fprintf(c->out, "nothing changed: every node of %s=%s is already %s\n", d->type, d->name,
                down ? "down" : "up");
    return 0;
}

/* node down NAME / node up NAME: one set_state operation; the state it
 * already has changes nothing and records nothing ("operation": null). */
int cmd__node_state(cmd_ctx *c)
{
    bool down = !strcmp(c->l->def->name, "node down");
    if (!c->l->nargs) /* --location TYPE=NAME: a whole failure domain */
        return domain_state(c, down);
    const char *name = c->l->args[0];
    int rc = sim_set_state(c->s, name, strlen(name), down, &c->op, &c->err);
    return rc ? rc : answer_node_change(c, name, down ? "is already down" : "is already up");
}

/* node reweight NAME R, node out NAME (0), node in NAME (1): one
 * set_reweight operation (Ceph's `osd reweight`, `osd out`, `osd in`). */
int cmd__node_reweight(cmd_ctx *c)
{
    const char *name = c->l->args[0], *w = c->l->def->name;
    double r = !strcmp(w, "node out") ? 0 : !strcmp(w, "node in") ? 1 : c->l->weight;
    int rc = sim_set_reweight(c->s, name, strlen(name), r, &c->op, &c->err);
    char same[64];
    snprintf(same, sizeof same, "already has reweight %g", r);
    return rc ? rc : answer_node_change(c, name, same);
}

/* node move NAME --location …: one set_location operation; the location
 * it already has changes nothing and records nothing. */
int cmd__node_move(cmd_ctx *c)
{
    const char *name = c->l->args[0];
    int rc = sim_set_location(c->s, name, strlen(name), c->l->loc, c->l->nloc, &c->op, &c->err);
    return rc ? rc : answer_node_change(c, name, "is already there");
}

/* The table lists the nodes in the configuration's order -- as they were
 * added or imported, the order a real system's configuration lists them
 * (the placement's, sim_node_names) --; the JSON and CSV keep the API's
 * order by position.  Names are unique, so each row is found by its name
 * (n^2 comparisons: a few milliseconds at a thousand nodes). */
static void nodes_text(cmd_ctx *c, json_t *j)
{
    json_t *nodes = json_object_get(j, "nodes"), *ordered = json_array(), *n;
    const char *const *names = sim_node_names(c->s);
    size_t count = sim_node_count(c->s), i, k;
    for (k = 0; ordered && k < count; k++)
        json_array_foreach(nodes, i, n)
        {
            if (!strcmp(json_string_value(json_object_get(n, "name")), names[k]))
                json_array_append(ordered, n);
        }
    /* Out of memory, or rows the names do not cover: the API's order. */
    if (ordered && json_array_size(ordered) == json_array_size(nodes))
        json_object_set(j, "nodes", ordered);
    json_decref(ordered);
    print_nodes_table(c->out, j, cmd__skewed(c->s));
}

int cmd__node_ls(cmd_ctx *c)
{
    return cmd__show(c, view_nodes(c->s, &c->err), "nodes", nodes_text);
}

/* `locations`: the failure-domain tree, one line a domain, indented by
 * level: nodes, up and down, keys and their share, the fair share and
 * load / fair share (API.md v4 "balance as the systems count it"). */
static void domain_line(FILE *out, const json_t *d, int depth)
{
    char share[16], fair[16];
    pct(share, sizeof share, json_number_value(json_object_get(d, "key_share")));
    pct(fair, sizeof fair, json_number_value(json_object_get(d, "fair_share")));
    json_t *lf = json_object_get(d, "load_over_fair");
    /* names from the network as the tables show them (invisibles escaped) */
    fprintf(out, "%*s", depth * 2, "");
    cmd_print_padded(out, json_string_value(json_object_get(d, "type")), 0);
    fputc('=', out);
    cmd_print_padded(out, json_string_value(json_object_get(d, "name")), 0);
    long long nn = (long long)json_integer_value(json_object_get(d, "nodes"));
    fprintf(out, "  %lld node%s (%lld up, %lld down)  %lld keys %s  fair %s  load/fair ", nn,
            nn == 1 ? "" : "s", (long long)json_integer_value(json_object_get(d, "up")),
            (long long)json_integer_value(json_object_get(d, "down")),
            (long long)json_integer_value(json_object_get(d, "keys")), share, fair);
    if (json_is_number(lf))
        fprintf(out, "%.3f\n", json_number_value(lf));
    else
        fprintf(out, "-\n");
    json_t *k;
    size_t i;
    json_array_foreach(json_object_get(d, "children"), i, k) domain_line(out, k, depth + 1);
    json_array_foreach(json_object_get(d, "members"), i, k)
    {
        fprintf(out, "%*s", depth * 2 + 2, "");
        cmd_print_padded(out, json_string_value(k), 0);
        fputc('\n', out);
    }
}

static void locations_text(cmd_ctx *c, json_t *j)
{
    json_t *d, *u = json_object_get(j, "unlocated");
    size_t i;
    json_array_foreach(json_object_get(j, "locations"), i, d) domain_line(c->out, d, 0);
    if (json_array_size(u))
        fprintf(c->out, "without a location: %zu node%s\n", json_array_size(u),
                json_array_size(u) == 1 ? "" : "s");
}

int cmd__locations(cmd_ctx *c)
{
    return cmd__show(c, view_locations(c->s, &c->err), NULL, locations_text);
}
