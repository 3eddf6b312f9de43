/*
 * cmd_preview.c - `preview node add|rm|down|up NAME` and `preview config`:
 * what an operation would do, recorded nowhere (`preview import` is
 * import_face.c's).  Reached only through cmd_table (cmd.c); prints
 * through cmd_out.h.
 *
 * The idea: a preview is the engine's dry run of the same operation
 * (view_preview), so it moves exactly the keys the operation would; the
 * text says where they go, by source and destination and by exact pair,
 * and each node's share after beside its fair share.  Costs: those of the
 * operation, without the writing.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "view.h"

static void print_tally(FILE *out, const char *what, json_t *list)
{
    json_t *e;
    size_t i;
    json_array_foreach(list, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "node"));
        fprintf(out, "%s %s %lld", i ? "," : what, n ? n : "no live replica",
                (long long)json_integer_value(json_object_get(e, "keys")));
    }
}

/* Each node after the change: its keys, its share of the served keys and
 * its fair share, "22,385 keys, 22.4% (ideal 2/9 = 22.2%)". */
static void print_after(FILE *out, json_t *after)
{
    json_t *per = json_object_get(after, "per_node"), *e;
    size_t i, wname = cmd_column_width(per, "name", 4);
    double total = 0, wsum = 0;
    json_array_foreach(per, i, e)
    {
        total += (double)json_integer_value(json_object_get(e, "keys"));
        if (json_number_value(json_object_get(e, "fair_share")) > 0)
            wsum += json_number_value(json_object_get(e, "weight"));
    }
    if (!json_array_size(per) || !(total > 0))
        return;
    fprintf(out, "after:\n");
    json_array_foreach(per, i, e)
    {
        json_int_t k = json_integer_value(json_object_get(e, "keys"));
        double fair = json_number_value(json_object_get(e, "fair_share"));
        double fw = json_number_value(json_object_get(e, "weight"));
        char n[32], w[32], ws[32];
        cmd__thousands(n, sizeof n, (long long)k);
        fprintf(out, "  ");
        cmd_print_padded(out, json_string_value(json_object_get(e, "name")), wname);
        fprintf(out, "  %s keys, %.1f%%", n, total > 0 ? 100 * (double)k / total : 0.0);
        if (fair > 0) {
            cmd__shortest(w, sizeof w, fw);
            cmd__shortest(ws, sizeof ws, wsum);
            fprintf(out, " (ideal %s/%s = %.1f%%)\n", w, ws, 100 * fair);
        } else {
            fprintf(out, " (takes no keys)\n");
        }
    }
}

/* What the operation of req would do, recorded nowhere. */
static int preview(cmd_ctx *c, view_preview_req *req)
{
    json_t *j = view_preview(c->s, req, &c->err);
    if (!j)
        return c->err.code;
    FILE *out = c->out;
    if (c->l->opt[CMD_O_JSON]) {
        cmd__print_json(out, j);
    } else {
        json_t *b = json_object_get(j, "before"), *a = json_object_get(j, "after");
        json_int_t moved = json_integer_value(json_object_get(j, "keys_moved"));
        fprintf(out, "would move %lld key%s", (long long)moved, moved == 1 ? "" : "s");
        print_tally(out, ": from", json_object_get(j, "moved_from"));
        print_tally(out, "; to", json_object_get(j, "moved_to"));
        fprintf(out, "\nreplica copies added: %lld\n",
                (long long)json_integer_value(json_object_get(j, "replica_moves")));
        json_t *pr = json_object_get(j, "pgs_remapped");
        if (pr) /* ceph */
            fprintf(out, "PGs remapped: %lld, shards moved: %lld\n",
                    (long long)json_integer_value(pr),
                    (long long)json_integer_value(json_object_get(j, "pg_shards_moved")));
        /* the miss spike for a cache; what a join streams, where sizes say */
        bool req = moved && cmd__skewed(c->s), by = moved && cmd__sized(c->s);
        json_int_t bm = json_integer_value(json_object_get(j, "bytes_moved"));
        if (req)
            fprintf(out, "%.1f%% of requests would move",
                    100 * json_number_value(json_object_get(j, "requests_moved")));
        if (by)
            fprintf(out, req ? ", %lld bytes" : "%lld bytes would move", (long long)bm);
        if (req || by)
            fprintf(out, "\n");
        cmd__print_pairs(out, json_object_get(j, "pairs"));
        fprintf(out, "max/mean %.4f -> %.4f, cv %.4f -> %.4f, nodes %lld -> %lld\n",
                json_number_value(json_object_get(b, "max_over_mean")),
                json_number_value(json_object_get(a, "max_over_mean")),
                json_number_value(json_object_get(b, "cv")),
                json_number_value(json_object_get(a, "cv")),
                (long long)json_integer_value(json_object_get(b, "nodes")),
                (long long)json_integer_value(json_object_get(a, "nodes")));
        print_after(out, a);
        cmd__print_unavailable(out, "unavailable after", json_object_get(j, "unavailable_after"),
                               cmd__skewed(c->s), cmd__sized(c->s));
        fprintf(out, "nothing was changed\n");
    }
    json_decref(j);
    return 0;
}

int cmd__preview_node(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    const char *w = l->args[0];
    if (l->nargs == 1) { /* down|up --location TYPE=NAME: a whole domain */
        if (strcmp(w, "down") != 0 && strcmp(w, "up") != 0)
            return rs_fail(&c->err, RINGSIM_EPARAM, "preview node %s needs the node's NAME", w);
        if (l->nloc != 1)
            return rs_fail(&c->err, RINGSIM_EPARAM,
                           "--location names one failure domain here, TYPE=NAME (rack=r1)");
        view_preview_req req = {SIM_OP_SET_STATE,
                                {.down = !strcmp(w, "down"), .loc = l->loc, .nloc = 1},
                                *sim_config(c->s),
                                NULL};
        return preview(c, &req);
    }
    const char *name = l->args[1];
    bool rw = !strcmp(w, "out") || !strcmp(w, "in"); /* ceph: reweight 0 or 1 */
    view_preview_req req = {!strcmp(w, "add")  ? SIM_OP_ADD_NODE
                            : !strcmp(w, "rm") ? SIM_OP_REMOVE_NODE
                            : rw               ? SIM_OP_SET_REWEIGHT
                                               : SIM_OP_SET_STATE,
                            {.name = name,
                             .len = strlen(name),
                             .weight = rw ? !strcmp(w, "in") : l->weight,
                             .tokens = l->tokens,
                             .ntokens = l->ntokens,
                             .srv_id = l->srv_id,
                             .down = !strcmp(w, "down"),
                             .loc = l->loc,
                             .nloc = l->nloc},
                            *sim_config(c->s),
                            NULL};
    return preview(c, &req);
}

int cmd__preview_config(cmd_ctx *c)
{
    view_preview_req req = {SIM_OP_CONFIGURE, {0}, *sim_config(c->s), NULL};
    int rc = cmd_config_apply(c->l, &req.cfg, &c->err);
    return rc ? rc : preview(c, &req);
}
