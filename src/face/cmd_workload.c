/*
 * cmd_workload.c - the commands of the requests: `workload` (show the
 * keys' shares of requests and their value sizes, or set them in one
 * operation) and `traffic run` (replay requests through the placement and
 * its bounded loads; nothing recorded).  Reached only through cmd_table
 * (cmd.c); prints through cmd_out.h.
 *
 * The idea: `--param NAME=VALUE` builds the same JSON POST /api/workload
 * takes, so the engine checks one shape; a workload equal to the current
 * one records nothing.  Costs: setting a workload costs what the engine's
 * reweighting costs; a replay is linear in its requests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "cmd_out.h"
#include "names.h"
#include "traffic.h"

/* --param NAME=VALUE into the workload's JSON: a VALUE that starts with [
 * or { is JSON, any other is text (numbers are read from it); sizes.NAME
 * goes into "sizes". */
static int workload_param(json_t *spec, const char *p, rs_error *err)
{
    const char *eq = strchr(p, '=');
    char name[64];
    size_t nl = (size_t)(eq - p);
    if (nl >= sizeof name)
        return rs_fail(err, RINGSIM_EPARAM, "no workload parameter \"%.64s\"", p);
    memcpy(name, p, nl);
    name[nl] = 0;
    const char *val = eq + 1;
    /* JSON for a list or an object, a number for plain decimal digits (an
     * integer exactly, as a seed past 2^53 needs), else text (a kind, an
     * order; a number written otherwise, "0x10", is then refused). */
    double d;
    char *end;
    errno = 0;
    long long i = strtoll(val, &end, 10);
    json_t *v = *val == '[' || *val == '{'  ? json_loads(val, 0, NULL)
                : cmd_parse_number(val, &d) ? json_string(val)
                                            : (!*end && !errno ? json_integer(i) : json_real(d));
    if (!v)
        return rs_fail(err, RINGSIM_EPARAM, "--param %s: the value is not valid JSON", name);
    json_t *into = spec;
    const char *key = name;
    if (!strncmp(name, "sizes.", 6)) {
        into = json_object_get(spec, "sizes");
        if (!json_is_object(into) || !json_is_string(json_object_get(into, "kind")) ||
            (!strcmp(name + 6, "kind") &&
             strcmp(val, json_string_value(json_object_get(into, "kind"))))) {
            into = json_object();
            json_object_set_new(spec, "sizes", into);
        }
        key = name + 6;
    }
    json_object_set_new(into, key, v);
    return 0;
}

static void print_workload(FILE *out, json_t *w)
{
    char num[32];
    const char *k;
    json_t *v;
    json_object_foreach(w, k, v)
    {
        if (json_is_string(v))
            fprintf(out, "%s %s\n", k, json_string_value(v));
        else if (json_is_number(v))
            fprintf(out, "%s %s\n", k, cmd__shortest(num, sizeof num, json_number_value(v)));
        else if (!strcmp(k, "sizes")) {
            const char *sk = json_string_value(json_object_get(v, "kind"));
            fprintf(out, "sizes %s", sk ? sk : "?");
            const char *k2;
            json_t *v2;
            json_object_foreach(v, k2, v2)
            {
                if (json_is_number(v2))
                    fprintf(out, " %s %s", k2, cmd__shortest(num, sizeof num, json_number_value(v2)));
                else if (json_is_array(v2))
                    fprintf(out, " %s (%zu listed)", k2, json_array_size(v2));
            }
            fprintf(out, "\n");
        } else if (json_is_array(v)) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e)
            {
                const char *kk = json_string_value(json_object_get(e, "key"));
                char *esc = kk ? names_escape(kk, strlen(kk)) : NULL;
                fprintf(
                    out, "key %s share %s\n",
                    esc  ? esc
                    : kk ? kk
                         : "",
                    cmd__shortest(num, sizeof num, json_number_value(json_object_get(e, "share"))));
                free(esc);
            }
        }
    }
}

int cmd__workload(cmd_ctx *c)
{
    json_t *now = NULL, *spec = NULL;
    int rc = sim_workload_json(c->s, &now, &c->err);
    if (rc)
        return rc;
    if (!c->l->nargs && !c->l->nparams) {
        if (c->l->opt[CMD_O_JSON])
            cmd__print_json(c->out, now);
        else
            print_workload(c->out, now);
        json_decref(now);
        return 0;
    }
    /* KIND: a new workload; --param alone: the current one changed. */
    spec = c->l->nargs ? json_pack("{s:s, s:O}", "kind", c->l->args[0], "sizes",
                                   json_object_get(now, "sizes"))
                       : json_deep_copy(now);
    if (!spec)
        rc = rs_fail(&c->err, RINGSIM_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < c->l->nparams; i++)
        rc = workload_param(spec, c->l->params[i], &c->err);
    c->op = 0;
    if (!rc)
        rc = sim_set_workload_if_new(c->s, spec, now, &c->op, &c->err);
    json_decref(spec);
    json_decref(now);
    if (rc)
        return rc;
    json_t *after = NULL;
    if ((rc = sim_workload_json(c->s, &after, &c->err)))
        return rc;
    c->extra = json_pack("{s:o}", "workload", after);
    return cmd__answer_change(c);
}

#define TRAFFIC_DEFAULT_REQUESTS "100000"
#define TRAFFIC_DEFAULT_CONCURRENCY "100"

/* traffic run [--requests N] [--concurrency C] [--seed S] [--factor F]: the
 * replay of POST /api/traffic/run; a table of nodes for people. */
int cmd__traffic(cmd_ctx *c)
{
    const cmd_line *l = c->l;
    const char *rq = l->opt[CMD_O_REQUESTS], *cc = l->opt[CMD_O_CONCURRENCY];
    const char *sd = l->opt[CMD_O_SEED], *fc = l->opt[CMD_O_FACTOR];
    traffic_params p = {0, 0, 0, -1, 0};
    uint64_t u;
    /* Defaults (issue 25): 100,000 requests, 100 in flight on average. */
    if (!rq)
        rq = TRAFFIC_DEFAULT_REQUESTS;
    if (!cc)
        cc = TRAFFIC_DEFAULT_CONCURRENCY;
    if (cmd__parse_u64(rq, &p.requests) || p.requests < 1 || p.requests > TRAFFIC_MAX_REQUESTS)
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--requests must be a whole number from 1 to %llu, not \"%.64s\"",
                       TRAFFIC_MAX_REQUESTS, rq);
    if (cmd_parse_number(cc, &p.concurrency) || !(p.concurrency > 0) ||
        p.concurrency > TRAFFIC_MAX_CONCURRENCY)
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--concurrency must be a number above 0 and at most %.0f, not \"%.64s\"",
                       TRAFFIC_MAX_CONCURRENCY, cc);
    if (sd && (cmd__parse_u64(sd, &p.seed) || p.seed > (uint64_t)INT64_MAX))
        return rs_fail(&c->err, RINGSIM_EPARAM,
                       "--seed must be a whole number from 0 to %lld, not \"%.64s\"",
                       (long long)INT64_MAX, sd);
    if (fc) {
        if (cmd__parse_u64(fc, &u) || u > 4294967295u)
            return rs_fail(&c->err, RINGSIM_EPARAM,
                           "--factor must be a whole number from 0 to 4294967295, not \"%.64s\"", fc);
        p.factor = (int64_t)u;
    }
    traffic_result r;
    int rc = traffic_run(c->s, &p, &r, &c->err);
    json_t *j = rc ? NULL : traffic_json(c->s, &p, &r, &c->err);
    traffic_result_clear(&r);
    if (rc || !j)
        return rc ? rc : c->err.code;
    FILE *out = c->out;
    if (l->opt[CMD_O_JSON]) {
        cmd__print_json(out, j);
        json_decref(j);
        return 0;
    }
    const char *rule = json_string_value(json_object_get(j, "rule"));
    fprintf(out, "%lld requests, %g in flight on average, seed %lld, %s: ",
            (long long)json_integer_value(json_object_get(j, "requests")), p.concurrency,
            (long long)p.seed, json_string_value(json_object_get(j, "algorithm")));
    if (!strcmp(rule, "none"))
        fprintf(out, "every request to its key's node\n");
    else
        fprintf(out, "bounded loads, %s, factor %lld\n",
                !strcmp(rule, "haproxy") ? "HAProxy's chash_server_is_eligible"
                : !strcmp(rule, "envoy") ? "Envoy's BoundedLoadHashingLoadBalancer"
                                         : "Mirrokni-Thorup-Zadimoghaddam",
                (long long)json_integer_value(json_object_get(j, "factor")));
    json_t *e, *nodes = json_object_get(j, "nodes");
    size_t i, wname = cmd_column_width(nodes, "name", 4);
    fprintf(out, "  ");
    cmd_print_padded(out, "Node", wname);
    fprintf(out, " %12s %10s %10s %10s\n", "Handled", "Peak", "Sent away", "Load/fair");
    json_array_foreach(nodes, i, e)
    {
        fprintf(out, "  ");
        cmd_print_padded(out, json_string_value(json_object_get(e, "name")), wname);
        json_t *lf = json_object_get(e, "load_over_fair");
        char lfs[32];
        if (json_is_number(lf))
            snprintf(lfs, sizeof lfs, "%.4f", json_number_value(lf));
        else
            snprintf(lfs, sizeof lfs, "%s", "-");
        fprintf(out, " %12lld %10lld %9.2f%% %10s\n",
                (long long)json_integer_value(json_object_get(e, "handled")),
                (long long)json_integer_value(json_object_get(e, "peak_in_flight")),
                100 * json_number_value(json_object_get(e, "sent_away")), lfs);
    }
    fprintf(out,
            "requests max/mean %.4f, peak in flight max/mean %.4f (against fair shares), sent "
            "away %.2f%%, probes per request %.4f\nnothing was recorded\n",
            json_number_value(json_object_get(j, "requests_max_over_mean")),
            json_number_value(json_object_get(j, "peak_in_flight_max_over_mean")),
            100 * json_number_value(json_object_get(j, "sent_away")),
            json_number_value(json_object_get(j, "probes_per_request")));
    json_int_t unserved = json_integer_value(json_object_get(j, "unserved"));
    json_int_t total = json_integer_value(json_object_get(j, "requests"));
    if (unserved)
        fprintf(out,
                "unavailable: %lld requests (%.2f%%) unserved: no live replica (every node that "
                "could serve their keys is down)\n",
                (long long)unserved, total ? 100.0 * (double)unserved / (double)total : 0.0);
    json_decref(j);
    return 0;
}
