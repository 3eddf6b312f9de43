/*
 * cmd_read.c - the commands that answer about the current state and change
 * nothing: `lookup KEY` (where a key goes, stored or not, and the steps
 * from key to owner), `stats` (balance), `ring` (the points in order) and
 * `check` (placement verified, the log replayed).  Reached only through
 * cmd_table (cmd.c); prints through cmd_out.h.
 *
 * The idea: each is one view (view.h) shown as the API's JSON or as text
 * for people; the text shows requests and bytes only where the workload
 * makes them differ from the keys (cmd__skewed, cmd__sized).  Costs: those
 * of the view; `check` replays the whole log.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "names.h"
#include "view.h"

/* `lookup` for people: what `help lookup` promises, for every algorithm —
 * the algorithm's key hash and coordinate, owner, replicas and the trace.
 * The SHA-256 position only where the algorithm's key hash is SHA-256's
 * first 32 bits (its catalogue entry says so: ring, multiprobe). */
static void print_lookup(FILE *out, sim *s, const char *key, json_t *j)
{
    const char *alg = sim_config(s)->algorithm, *kh = place_key_hash(sim_config(s));
    size_t i;
    json_t *st;
    char *ek = names_escape(key, strlen(key));
    fprintf(out, "key         %s\nalgorithm   %s\n", ek ? ek : key, alg);
    free(ek);
    const char *h = json_string_value(json_object_get(j, "hash")),
               *co = json_string_value(json_object_get(j, "coordinate"));
    fprintf(out, "key hash    %s (%s)\ncoordinate  %s\n", h ? h : "-", kh ? kh : "",
            co ? co : "(none)");
    if (kh && !strncmp(kh, "SHA-256", 7))
        fprintf(out, "sha256      %s\nposition    %lld\n",
                json_string_value(json_object_get(j, "sha256")),
                (long long)json_integer_value(json_object_get(j, "position")));
    const char *n = json_string_value(json_object_get(j, "node"));
    char *en = n ? names_escape(n, strlen(n)) : NULL;
    fprintf(out, "node        %s%s\n",
            en  ? en
            : n ? n
                : "(no node)",
            json_is_true(json_object_get(j, "wrapped")) ? " (wrapped)" : "");
    const char *sb = json_string_value(json_object_get(j, "served_by"));
    char *esb = sb ? names_escape(sb, strlen(sb)) : NULL;
    fprintf(out, "served by   %s\n",
            esb  ? esb
            : sb ? sb
            : n  ? "no live replica (every node that could serve it is down)"
                 : "nobody (no node)");
    free(esb);
    /* Redis Cluster: the master's replicas (node_replicas), not the
     * preference list, which is the master alone. */
    json_t *nreps = json_object_get(j, "node_replicas");
    json_t *reps = nreps ? nreps : json_object_get(j, "replicas"), *r;
    fprintf(out, "replicas   ");
    json_array_foreach(reps, i, r)
    {
        const char *rn = json_string_value(r);
        char *er = rn ? names_escape(rn, strlen(rn)) : NULL;
        fprintf(out, " %s", er ? er : rn ? rn : "(none)");
        free(er);
    }
    if (nreps && n)
        fprintf(out, json_array_size(reps) ? " (of master %s)" : " (none: master %s has none)",
                en ? en : n);
    else if (!json_array_size(reps))
        fprintf(out, " (none)");
    free(en);
    fprintf(out, "\nstored      %s\n", json_is_true(json_object_get(j, "stored")) ? "yes" : "no");
    json_t *tr = json_object_get(j, "trace");
    if (json_array_size(tr))
        fprintf(out, "steps:\n");
    json_array_foreach(tr, i, st)
        fprintf(out, "  %-10s %s\n", json_string_value(json_object_get(st, "step")),
                json_string_value(json_object_get(st, "detail")));
}

static void lookup_text(cmd_ctx *c, json_t *j) { print_lookup(c->out, c->s, c->l->args[0], j); }

int cmd__lookup(cmd_ctx *c)
{
    const char *key = c->l->args[0];
    return cmd__show(c, view_lookup(c->s, key, strlen(key), &c->err), NULL, lookup_text);
}

static void stats_text(cmd_ctx *c, json_t *j)
{
    fprintf(c->out,
            "nodes %lld  keys %lld\nmean %.2f  stddev %.2f  cv %.4f\nmin %lld  max %lld  "
            "max/mean %.4f\n",
            (long long)json_integer_value(json_object_get(j, "nodes")),
            (long long)json_integer_value(json_object_get(j, "keys")),
            json_real_value(json_object_get(j, "mean")),
            json_real_value(json_object_get(j, "stddev")), json_real_value(json_object_get(j, "cv")),
            (long long)json_integer_value(json_object_get(j, "min")),
            (long long)json_integer_value(json_object_get(j, "max")),
            json_real_value(json_object_get(j, "max_over_mean")));
    cmd__print_unavailable(c->out, "unavailable", json_object_get(j, "unavailable"),
                           cmd__skewed(c->s), cmd__sized(c->s));
    if (cmd__skewed(c->s)) {
        json_t *rq = json_object_get(j, "requests"), *hot = json_object_get(rq, "hottest_key");
        const char *hk = json_string_value(json_object_get(hot, "key"));
        char *esc = hk ? names_escape(hk, strlen(hk)) : NULL;
        fprintf(c->out, "requests max/mean %.4f  cv %.4f  bound %.4f\n",
                json_number_value(json_object_get(rq, "max_over_mean")),
                json_number_value(json_object_get(rq, "cv")),
                json_number_value(json_object_get(rq, "bound")));
        if (hk)
            fprintf(c->out, "hottest key %s  share %.6f\n", esc ? esc : hk,
                    json_number_value(json_object_get(hot, "share")));
        free(esc);
    }
}

int cmd__stats(cmd_ctx *c) { return cmd__show(c, view_stats(c->s, &c->err), NULL, stats_text); }

static void ring_text(cmd_ctx *c, json_t *j)
{
    json_t *p;
    size_t i;
    fprintf(c->out, "%10s  %s\n", "Position", "Node (point)");
    json_array_foreach(json_object_get(j, "points"), i, p)
    {
        fprintf(c->out, "%10lld  ", (long long)json_integer_value(json_object_get(p, "position")));
        cmd_print_padded(c->out, json_string_value(json_object_get(p, "node")), 0);
        fprintf(c->out, "#%lld\n", (long long)json_integer_value(json_object_get(p, "index")));
    }
}

int cmd__ring(cmd_ctx *c) { return cmd__show(c, view_ring(c->s, &c->err), NULL, ring_text); }

#define CHECK_REPORT_SIZE 65536

int cmd__check(cmd_ctx *c)
{
    int64_t problems;
    char *report = malloc(CHECK_REPORT_SIZE);
    if (!report)
        return rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
    if (sim_check(c->s, &problems, report, CHECK_REPORT_SIZE, &c->err)) {
        free(report);
        return c->err.code;
    }
    int64_t keys = sim_key_count(c->s), ops = sim_last_op(c->s);
    if (ops < 0) {
        free(report);
        return rs_fail(&c->err, (int)ops, "cannot read the operation log");
    }
    if (c->l->opt[CMD_O_JSON]) {
        json_t *lines = json_array();
        for (char *save, *l = strtok_r(report, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            json_array_append_new(lines, json_string(l));
        json_t *j = json_pack("{s:b, s:I, s:I, s:I, s:I, s:o}", "ok", problems == 0, "problems",
                              (json_int_t)problems, "nodes", (json_int_t)sim_node_count(c->s), "keys",
                              (json_int_t)keys, "operations", (json_int_t)ops, "report", lines);
        cmd__print_json(c->out, j);
        json_decref(j);
    } else if (problems == 0) {
        fprintf(c->out,
                "ok: %lld keys on %zu nodes where the ring says; %lld operations replayed "
                "to the same state\n",
                (long long)keys, sim_node_count(c->s), (long long)ops);
    } else {
        fputs(report, c->out);
    }
    free(report);
    if (problems)
        return rs_fail(&c->err, RINGSIM_EPARAM, "check found %lld problem%s", (long long)problems,
                       problems == 1 ? "" : "s");
    return 0;
}
