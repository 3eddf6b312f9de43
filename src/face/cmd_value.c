/*
 * cmd_value.c - numbers and configurations as the command line writes
 * them: what cmd_parse checks before anything runs and some handlers read
 * again (diff's operation ids, traffic's counts, config's options), so it
 * sits one floor below both (cmd_int.h draws the floors).
 *
 * The idea: a person writes a number in plain decimal digits; what strtod
 * or strtoull would take beyond that (hex, "inf", a leading "+" or space)
 * is refused, so a scenario file means the same thing everywhere.  Costs:
 * linear in the text; cmd_config_apply checks each --param against the
 * catalogue (view_param_check).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "names.h"
#include "view.h"

int cmd__parse_u64(const char *t, uint64_t *out)
{
    if (!t || *t < '0' || *t > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(t, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int cmd_parse_number(const char *t, double *out) { return names_parse_decimal(t, out) ? -1 : 0; }

int cmd_config_apply(const cmd_line *l, place_config *cfg, rs_error *err)
{
    const char *a = l->opt[CMD_O_ALGORITHM];
    if (a) {
        if (strlen(a) >= sizeof cfg->algorithm)
            return rs_fail(err, RINGSIM_EPARAM, "unknown algorithm \"%.40s\"", a);
        strcpy(cfg->algorithm, a);
    }
    if (l->opt[CMD_O_POINTS] &&
        (view_param_check(cfg->algorithm, "points_per_node", 15, err) ||
         place_config_set_param(cfg, "points_per_node", l->opt[CMD_O_POINTS], err)))
        return err->code;
    for (int i = 0; i < l->nparams; i++) {
        char name[64];
        const char *p = l->params[i], *eq = strchr(p, '=');
        if (!eq || eq == p || (size_t)(eq - p) >= sizeof name)
            return rs_fail(err, RINGSIM_EPARAM, "--param takes NAME=VALUE, not \"%.64s\"", p);
        memcpy(name, p, (size_t)(eq - p));
        name[eq - p] = '\0';
        if (view_param_check(cfg->algorithm, name, strlen(name), err) ||
            place_config_set_param(cfg, name, eq + 1, err))
            return err->code;
    }
    const char *r = l->opt[CMD_O_REPLICAS];
    if (r) {
        uint64_t v;
        if (cmd__parse_u64(r, &v) || v < 1 || v > PLACE_MAX_REPLICAS)
            return rs_fail(err, RINGSIM_EPARAM,
                           "--replicas must be a whole number from 1 to %u, not \"%.32s\"",
                           PLACE_MAX_REPLICAS, r);
        cfg->replicas = (uint32_t)v;
    }
    return 0;
}

bool cmd__has_config_opts(const cmd_line *l)
{
    return l->opt[CMD_O_POINTS] || l->opt[CMD_O_ALGORITHM] || l->nparams || l->opt[CMD_O_REPLICAS];
}
