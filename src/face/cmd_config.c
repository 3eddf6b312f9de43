/*
 * cmd_config.c - the commands of the placement's choice: `config` (show
 * it, or change the algorithm, its parameters or the replicas in one
 * operation), `algorithms` (the catalogue) and `compare` (the current nodes
 * and keys placed by each algorithm side by side).  Reached only through
 * cmd_table (cmd.c); prints through cmd_out.h.
 *
 * The idea: the options are read once (cmd_config_apply, on a copy of the
 * current configuration) and a configuration equal to the current one
 * records nothing.  Costs: a change costs the keys it moves; `compare`
 * places an even sample of at most 100,000 keys per algorithm.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "view.h"

int cmd__config(cmd_ctx *c)
{
    json_t *j;
    if (cmd__has_config_opts(c->l)) {
        place_config cfg = *sim_config(c->s);
        int rc = cmd_config_apply(c->l, &cfg, &c->err);
        if (!rc && (rc = place_config_check(&cfg, &c->err)))
            return rc;
        c->op = 0; /* 0: nothing changed, nothing recorded */
        if (rc || (!sim_config_same(c->s, &cfg) && (rc = sim_configure(c->s, &cfg, &c->op, &c->err))))
            return rc;
        j = view_config(c->s, &c->err);
        c->extra = json_pack("{s:o*}", "config", j);
        return cmd__answer_change(c);
    }
    if (!(j = view_config(c->s, &c->err)))
        return c->err.code;
    if (c->l->opt[CMD_O_JSON]) {
        cmd__print_json(c->out, j);
    } else {
        /* The parameters the algorithm takes, and only those: JSON keeps
         * the top-level points_per_node (API.md), which jump has not. */
        fprintf(c->out, "algorithm %s\n", json_string_value(json_object_get(j, "algorithm")));
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(j, "params"), k, v)
        {
            if (json_is_object(v)) { /* cassandra's replication: dc1:3,dc2:2 */
                const char *dk;
                json_t *dv;
                bool first = true;
                fprintf(c->out, "%s ", k);
                json_object_foreach(v, dk, dv)
                {
                    fprintf(c->out, "%s", first ? "" : ",");
                    cmd_print_padded(c->out, dk, 0);
                    fprintf(c->out, ":%lld", (long long)json_integer_value(dv));
                    first = false;
                }
                fputc('\n', c->out);
            } else if (json_is_string(v))
                fprintf(c->out, "%s %s\n", k, json_string_value(v));
            else
                fprintf(c->out, "%s %lld\n", k, (long long)json_integer_value(v));
        }
        fprintf(c->out, "replicas %lld\n",
                (long long)json_integer_value(json_object_get(j, "replicas")));
    }
    json_decref(j);
    return 0;
}

static void algorithms_text(cmd_ctx *c, json_t *j)
{
    json_t *a = json_object_get(j, "algorithms"), *e;
    size_t i;
    fprintf(c->out, "%-11s %-8s %-8s %-22s %s\n", "ALGORITHM", "WEIGHTS", "REPLICAS", "PARAMS",
            "TITLE");
    json_array_foreach(a, i, e)
    {
        char ps[128] = "";
        json_t *p;
        size_t k;
        json_array_foreach(json_object_get(e, "params"), k, p)
        {
            char one[64];
            json_t *d = json_object_get(p, "default");
            if (json_is_string(d)) /* a choice by name (twemproxy's hash) */
                snprintf(one, sizeof one, "%s%s=%s", k ? " " : "",
                         json_string_value(json_object_get(p, "name")), json_string_value(d));
            else
                snprintf(one, sizeof one, "%s%s=%lld", k ? " " : "",
                         json_string_value(json_object_get(p, "name")),
                         (long long)json_integer_value(d));
            strncat(ps, one, sizeof ps - strlen(ps) - 1);
        }
        fprintf(c->out, "%-11s %-8s %-8s %-22s %s\n", json_string_value(json_object_get(e, "name")),
                json_string_value(json_object_get(e, "weight_rule")),
                json_string_value(json_object_get(e, "replica_rule")), *ps ? ps : "-",
                json_string_value(json_object_get(e, "title")));
    }
}

int cmd__algorithms(cmd_ctx *c)
{
    return cmd__show(c, view_algorithms(&c->err), NULL, algorithms_text);
}

int cmd__compare(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    json_t *j = view_compare(c->s, l->opt[CMD_O_ALGORITHMS], l->params, (size_t)l->nparams, 100000,
                             &c->err);
    if (!j)
        return c->err.code;
    FILE *out = c->out;
    if (l->opt[CMD_O_JSON]) {
        cmd__print_json(out, j);
        json_decref(j);
        return 0;
    }
    json_t *smp = json_object_get(j, "sample");
    fprintf(out, "%lld keys on %lld nodes%s\n",
            (long long)json_integer_value(json_object_get(j, "keys")),
            (long long)json_integer_value(json_object_get(j, "nodes")),
            json_is_true(json_object_get(smp, "sampled")) ? " (an even sample of keys placed)" : "");
    /* Under a skewed workload, the requests beside the keys. */
    bool req = cmd__skewed(c->s);
    fprintf(out, "  %-11s %9s %8s %10s %10s %9s %9s %9s", "ALGORITHM", "MAX/MEAN", "CV",
            "STRUCTURAL", "LOOKUP ns", "MEMORY", "+1 MOVES", "-1 MOVES");
    fprintf(out, req ? " %9s %8s %8s\n" : "\n", "REQ M/M", "+1 REQ%", "-1 REQ%");
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(j, "results"), i, e)
    {
        const char *name = json_string_value(json_object_get(e, "algorithm"));
        char mark = json_is_true(json_object_get(e, "current")) ? '*' : ' ';
        json_t *error = json_object_get(e, "error");
        if (error) {
            fprintf(out, "%c %-11s %s\n", mark, name,
                    json_string_value(json_object_get(error, "message")));
            continue;
        }
        json_t *st = json_object_get(e, "stats");
        fprintf(out, "%c %-11s %9.4f %8.4f %10.4f %10.0f %9lld %9lld %9lld", mark, name,
                json_number_value(json_object_get(st, "max_over_mean")),
                json_number_value(json_object_get(st, "cv")),
                json_number_value(json_object_get(e, "structural_max_over_mean")),
                json_number_value(json_object_get(e, "lookup_ns")),
                (long long)json_integer_value(json_object_get(e, "memory_bytes")),
                (long long)json_integer_value(json_object_get(e, "moves_if_added")),
                (long long)json_integer_value(json_object_get(e, "moves_if_removed")));
        if (req)
            fprintf(out, " %9.4f %7.2f%% %7.2f%%",
                    json_number_value(
                        json_object_get(json_object_get(st, "requests"), "max_over_mean")),
                    100 * json_number_value(json_object_get(e, "requests_moved_if_added")),
                    100 * json_number_value(json_object_get(e, "requests_moved_if_removed")));
        fprintf(out, "\n");
    }
    fprintf(out, "(* the current algorithm; +1: keys moved if a node joined, -1: mean if one "
                 "left)\n");
    json_decref(j);
    return 0;
}
