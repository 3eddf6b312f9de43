/*
 * plan.c - the capacity what-if (see plan.h for the model and its costs).
 *
 * The demand is a list of distinct keys with their weights (shares, or
 * request counts of a log), keys in one arena.  Each step builds the
 * placement of the current nodes plus the nodes added so far and places
 * every key with place_key (served_by: node states applied), keeping the
 * node each key went to for the next step's moves.
 *
 * An engine file: it reads the simulation through sim.h, and reports
 * progress -- which may cancel -- through sim__progress (sim_int.h).
 */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "names.h"
#include "sim_int.h"

typedef struct demand {
    char *arena;
    size_t alen, acap;
    size_t *off; /* n + 1 offsets into arena */
    uint32_t *len;
    double *w;
    uint64_t *h; /* sha64, for a log's counting */
    size_t n, cap;
    size_t *slot; /* hash table of indexes + 1 (a log), nslot a power of two */
    size_t nslot;
    double total;
} demand;

static void demand_clear(demand *d)
{
    free(d->arena);
    free(d->off);
    free(d->len);
    free(d->w);
    free(d->h);
    free(d->slot);
    memset(d, 0, sizeof *d);
}

static int demand_push(demand *d, const char *key, size_t len, double w, uint64_t h)
{
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 4096;
        size_t *o = realloc(d->off, nc * sizeof *o);
        if (!o)
            return RINGSIM_ENOMEM;
        d->off = o;
        uint32_t *l = realloc(d->len, nc * sizeof *l);
        if (!l)
            return RINGSIM_ENOMEM;
        d->len = l;
        double *ww = realloc(d->w, nc * sizeof *ww);
        if (!ww)
            return RINGSIM_ENOMEM;
        d->w = ww;
        uint64_t *hh = realloc(d->h, nc * sizeof *hh);
        if (!hh)
            return RINGSIM_ENOMEM;
        d->h = hh;
        d->cap = nc;
    }
    if (d->alen + len > d->acap) {
        size_t nc = d->acap ? d->acap * 2 : 1 << 16;
        while (nc < d->alen + len)
            nc *= 2;
        char *a = realloc(d->arena, nc);
        if (!a)
            return RINGSIM_ENOMEM;
        d->arena = a;
        d->acap = nc;
    }
    if (len)
        memcpy(d->arena + d->alen, key, len);
    d->off[d->n] = d->alen;
    d->len[d->n] = (uint32_t)len;
    d->w[d->n] = w;
    d->h[d->n] = h;
    d->alen += len;
    d->n++;
    d->total += w;
    return 0;
}

static int from_workload(void *ud, const char *key, size_t len, double share)
{
    return demand_push(ud, key, len, share, 0);
}

/* One request of a log for key (its sha64 h): counted. */
static int count_request(demand *d, const char *key, size_t len, uint64_t h)
{
    if (2 * (d->n + 1) > d->nslot) {
        size_t ns = d->nslot ? d->nslot * 2 : 1 << 16;
        size_t *t = calloc(ns, sizeof *t);
        if (!t)
            return RINGSIM_ENOMEM;
        for (size_t i = 0; i < d->n; i++) {
            size_t j = d->h[i] & (ns - 1);
            while (t[j])
                j = (j + 1) & (ns - 1);
            t[j] = i + 1;
        }
        free(d->slot);
        d->slot = t;
        d->nslot = ns;
    }
    size_t j = h & (d->nslot - 1);
    while (d->h && d->slot[j]) { /* a taken slot means keys (and d->h) */
        size_t i = d->slot[j] - 1;
        if (d->h[i] == h && d->len[i] == len &&
            (!len || (d->arena && !memcmp(d->arena + d->off[i], key, len)))) {
            d->w[i] += 1;
            d->total += 1;
            return 0;
        }
        j = (j + 1) & (d->nslot - 1);
    }
    if (d->n >= PLAN_MAX_KEYS)
        return RINGSIM_EFULL;
    int rc = demand_push(d, key, len, 1, h);
    if (!rc)
        d->slot[j] = d->n;
    return rc;
}

int plan_run(sim *s, const plan_params *p, json_t **out, rs_error *err)
{
    *out = NULL;
    if (!(p->max_load >= 1) || !isfinite(p->max_load))
        return rs_fail(err, RINGSIM_EPARAM, "max-load must be a number of at least 1");
    if (p->max_steps < 1 || p->max_steps > PLAN_MAX_STEPS)
        return rs_fail(err, RINGSIM_EPARAM, "steps must be a whole number from 1 to %u",
                       PLAN_MAX_STEPS);
    size_t n0 = sim_node_count(s);
    if (!n0)
        return rs_fail(err, RINGSIM_EPARAM, "a plan starts from the current nodes: add one");
    place_config cfg = p->cfg ? *p->cfg : *sim_config(s);
    int rc = place_config_check(&cfg, err);
    if (rc)
        return rc;
    hasher *h = sim_hasher(s);
    demand d = {0};
    uint64_t requests = 0;
    if (p->log) {
        trace_rec rec;
        while ((rc = trace_reader_next(p->log, &rec, err)) == 0) {
            requests++;
            rc = count_request(&d, rec.key, rec.len, hash_sha64(h, rec.key, rec.len));
            if (rc == RINGSIM_EFULL) {
                rc = rs_fail(err, RINGSIM_EPARAM, "the log has more than %u distinct keys",
                             PLAN_MAX_KEYS);
                goto done;
            }
            if (rc)
                goto nomem;
            rs_error pe;
            uint64_t in = trace_reader_bytes_in(p->log);
            if (requests % 65536 == 0 &&
                sim__progress(s, "plan", in, p->log_size > in ? p->log_size : in, &pe)) {
                rc = rs_fail(err, RINGSIM_ECANCELED, "the plan was cancelled");
                goto done;
            }
        }
        if (rc < 0)
            goto done;
    } else if ((rc = sim_workload_each(s, from_workload, &d, err))) {
        if (rc == RINGSIM_ENOMEM)
            goto nomem;
        goto done;
    }
    if (!d.n || !(d.total > 0)) {
        rc = rs_fail(err, RINGSIM_EPARAM, "%s",
                     p->log ? "the log has no request" : "there is no stored key to plan for");
        goto done;
    }
    size_t hot = 0;
    for (size_t i = 1; i < d.n; i++)
        if (d.w[i] > d.w[hot])
            hot = i;
    double hot_share = d.w[hot] / d.total;
    /* the nodes: the current ones, then room for the steps */
    size_t nmax = n0 + p->max_steps;
    place_node *nodes = calloc(nmax, sizeof *nodes);
    char(*names)[NAME_BUF] = calloc(p->max_steps + 1, sizeof *names);
    long *prev = malloc(d.n * sizeof *prev);
    double *load = calloc(nmax, sizeof *load), *fair = calloc(nmax, sizeof *fair);
    json_t *steps = json_array(), *j = json_object();
    if (!nodes || !names || !prev || !load || !fair || !steps || !j) {
        free(nodes);
        free(names);
        free(prev);
        free(load);
        free(fair);
        json_decref(steps);
        json_decref(j);
        goto nomem;
    }
    memcpy(nodes, sim_place_nodes(s), n0 * sizeof *nodes);
    int64_t next_id = 1;
    for (size_t i = 0; i < n0; i++)
        if (nodes[i].id >= next_id)
            next_id = nodes[i].id + 1;
    const char *prefix = p->prefix ? p->prefix : "new-";
    size_t n = n0;
    long enough = -1;
    const char *reason = NULL;
    char why[200];
    uint32_t made = 0;
    for (uint32_t step = 0; step <= p->max_steps; step++) {
        if (step) { /* one more node, named after the first free number */
            for (uint32_t k = ++made;; k = ++made) {
                snprintf(names[step], NAME_BUF, "%.200s%u", prefix, k);
                bool taken = false;
                for (size_t i = 0; i < n && !taken; i++)
                    taken = !strcmp(nodes[i].name, names[step]);
                if (!taken)
                    break;
            }
            nodes[n] = (place_node){
                .id = next_id++, .name = names[step], .len = strlen(names[step]), .weight = 1};
            n++;
        }
        placement *pl = NULL;
        if ((rc = place_nodes_check(&cfg, nodes, n, err)) ||
            (rc = place_build(&pl, h, &cfg, nodes, n, NULL, NULL, err)))
            break;
        place_fair_weights(pl, fair, n);
        double fsum = 0, fmax = 0;
        for (size_t i = 0; i < n; i++)
            fsum += fair[i];
        memset(load, 0, n * sizeof *load);
        double moved = 0;
        uint64_t kmoved = 0;
        place_key_info k;
        for (size_t i = 0; i < d.n; i++) {
            place_key(pl, h, d.arena + d.off[i], d.len[i], &k);
            if (k.served >= 0)
                load[k.served] += d.w[i];
            if (step && k.served != prev[i]) {
                moved += d.w[i];
                kmoved++;
            }
            prev[i] = k.served;
        }
        place_free(pl);
        double mom = 0;
        long busiest = -1;
        for (size_t i = 0; i < n; i++) {
            double f = fsum > 0 ? fair[i] / fsum : 0;
            fmax = f > fmax ? f : fmax;
            if (f <= 0)
                continue;
            double lf = load[i] / d.total / f;
            if (busiest < 0 || lf > mom) {
                mom = lf;
                busiest = (long)i;
            }
        }
        json_t *o = json_object();
        json_object_set_new(o, "nodes", json_integer((json_int_t)n));
        json_object_set_new(o, "added", step ? json_string(names[step]) : json_null());
        json_object_set_new(o, "max_over_mean", busiest >= 0 ? json_real(mom) : json_null());
        json_object_set_new(o, "busiest",
                            busiest >= 0 ? json_string(nodes[busiest].name) : json_null());
        json_object_set_new(o, "keys_moved", json_integer((json_int_t)kmoved));
        json_object_set_new(o, "requests_moved", json_real(moved / d.total));
        json_array_append_new(steps, o);
        if (busiest >= 0 && mom <= p->max_load + 1e-12) {
            enough = (long)n;
            break;
        }
        if (fmax > 0 && hot_share / fmax > p->max_load) {
            snprintf(why, sizeof why,
                     "the hottest key alone is %.4g of the requests, %.4g times the largest fair "
                     "share at %zu nodes: more nodes only make it worse",
                     hot_share, hot_share / fmax, n);
            reason = why;
            break;
        }
        rs_error pe;
        if (sim__progress(s, "plan", step + 1, p->max_steps + 1, &pe)) {
            rc = rs_fail(err, RINGSIM_ECANCELED, "the plan was cancelled");
            break;
        }
    }
    if (!rc && enough < 0 && !reason) {
        snprintf(why, sizeof why, "not within %u added nodes", p->max_steps);
        reason = why;
    }
    if (!rc) {
        json_object_set_new(j, "max_load", json_real(p->max_load));
        json_object_set_new(j, "algorithm", json_string(cfg.algorithm));
        json_object_set_new(j, "source", json_string(p->log ? "log" : "workload"));
        json_object_set_new(j, "keys", json_integer((json_int_t)d.n));
        if (p->log)
            json_object_set_new(j, "requests", json_integer((json_int_t)requests));
        json_t *hk = json_object();
        json_object_set_new(hk, "key", json_stringn(d.arena + d.off[hot], d.len[hot]));
        json_object_set_new(hk, "share", json_real(hot_share));
        json_object_set_new(j, "hottest_key", hk);
        json_object_set_new(j, "steps", steps);
        json_object_set_new(j, "enough", enough >= 0 ? json_integer(enough) : json_null());
        json_object_set_new(j, "reason", reason ? json_string(reason) : json_null());
        *out = j;
    } else {
        json_decref(steps);
        json_decref(j);
    }
    free(nodes);
    free(names);
    free(prev);
    free(load);
    free(fair);
    goto done;
nomem:
    rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
done:
    demand_clear(&d);
    return rc;
}
