/*
 * import_redis.c - the output of Redis Cluster's `CLUSTER NODES`.
 *
 * Reference: Redis 7.0 (Debian 12's 7.0.15), src/cluster.c
 * clusterGenNodeDescription, read for the layout: one line per node,
 *   <id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent>
 *   <pong-recv> <config-epoch> <link-state> <slot> <slot> ...
 * id 40 hex digits; flags a comma list of myself, master, slave, fail?,
 * fail, handshake, noaddr, nofailover, noflags; master '-' or the id of the
 * master a replica follows; slots "N" or "N-M" (0..16383), and "[N->-id]"
 * (migrating) or "[N-<-id]" (importing) while a resharding runs.
 *
 * Nodes are the masters (flag `master`), as "ip:port", in the text's order,
 * with their slot ranges; each master's replicas are the `slave` lines that
 * name it.  `fail` is the state down (`fail?`, a suspicion, is noted).  A
 * slot held by two masters is refused; slots nobody holds are noted.
 *
 * Cost: two passes over the text (masters, then replicas); a replica finds
 * its master by id in a hashed set (import_int.h), so 10,000 masters and a
 * 16 MiB paste of replicas stay linear.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "import_int.h"

#define REDIS_SLOTS 16384
#define RN_MAX_FIELDS 8 /* before the slots */

typedef struct rline {
    const char *f[RN_MAX_FIELDS];
    size_t fl[RN_MAX_FIELDS];
    const char *rest; /* the slots */
    size_t restlen;
} rline;

static bool split(const import_line *l, rline *o)
{
    size_t i = 0;
    for (int k = 0; k < RN_MAX_FIELDS; k++) {
        while (i < l->len && l->s[i] == ' ')
            i++;
        if (i >= l->len)
            return false;
        size_t st = i;
        while (i < l->len && l->s[i] != ' ')
            i++;
        o->f[k] = l->s + st;
        o->fl[k] = i - st;
    }
    o->rest = l->s + i;
    o->restlen = l->len - i;
    return true;
}

static bool has_flag(const rline *r, const char *flag)
{
    size_t fl = strlen(flag);
    const char *s = r->f[2], *e = s + r->fl[2];
    while (s < e) {
        const char *comma = memchr(s, ',', (size_t)(e - s));
        size_t len = comma ? (size_t)(comma - s) : (size_t)(e - s);
        if (len == fl && memcmp(s, flag, fl) == 0)
            return true;
        s += len + 1;
    }
    return false;
}

/* "ip:port" of field 1 (without "@cport" and ",hostname"). */
static size_t addr_len(const rline *r)
{
    const char *a = r->f[1];
    size_t n = r->fl[1];
    const char *at = memchr(a, '@', n);
    if (at != NULL)
        return (size_t)(at - a);
    const char *comma = memchr(a, ',', n);
    return comma ? (size_t)(comma - a) : n;
}

static bool is_id(const char *s, size_t len)
{
    if (len != 40)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789abcdef", s[i]) || s[i] == '\0')
            return false;
    return true;
}

int import__redis(import_ctx *c)
{
    strcpy(c->r->algorithm, "redis");
    int16_t *owner = malloc(REDIS_SLOTS * sizeof *owner);
    int *owner_line = malloc(REDIS_SLOTS * sizeof *owner_line);
    /* masters' ids (pointing into the text), tagged with their node index */
    import_set ids = {0};
    int rc = 0;
    size_t migrating = 0;
    if (owner == NULL || owner_line == NULL) {
        rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
        goto out;
    }
    for (size_t i = 0; i < REDIS_SLOTS; i++)
        owner[i] = -1;
    for (int pass = 0; pass < 2; pass++) {
        size_t pos = 0;
        import_line l = {0};
        while (import__next_line(c->text, c->len, &pos, &l)) {
            size_t sp = 0;
            while (sp < l.len && (l.s[sp] == ' ' || l.s[sp] == '\t'))
                sp++;
            if (sp == l.len)
                continue;
            rline r;
            if (!split(&l, &r) || !is_id(r.f[0], r.fl[0])) {
                rc = import__fail(c, l.no,
                                  "this line is not a CLUSTER NODES line (<id> "
                                  "<ip:port@cport> <flags> <master> <ping-sent> "
                                  "<pong-recv> <config-epoch> <link-state> <slot>...)");
                goto out;
            }
            size_t al = addr_len(&r);
            bool master = has_flag(&r, "master"), slave = has_flag(&r, "slave");
            if (pass == 0 && master) {
                if (al == 0 || r.f[1][0] == ':' || has_flag(&r, "noaddr")) {
                    rc = import__fail(c, l.no, "a master without an address");
                    goto out;
                }
                import_node_rec *n = import__node(c, r.f[1], al, l.no, &rc);
                if (n == NULL)
                    goto out;
                if (c->r->n >= 32767) {
                    rc = import__fail(c, l.no, "more than 32767 masters");
                    goto out;
                }
                size_t first;
                if ((rc = import__set_add(c, &ids, r.f[0], 40, 0, c->r->n - 1, &first)) < 0)
                    goto out;
                rc = 0; /* a second master of that id: replicas follow the first */
                if (has_flag(&r, "fail"))
                    n->v.down = true;
                if (has_flag(&r, "fail?") &&
                    (rc = import__note(c, l.no,
                                       "%.*s is suspected failing (fail?): imported "
                                       "as up",
                                       (int)al, r.f[1])) != 0)
                    goto out;
                /* slots */
                const char *s = r.rest, *e = r.rest + r.restlen;
                while (s < e) {
                    while (s < e && *s == ' ')
                        s++;
                    if (s >= e)
                        break;
                    const char *t = s;
                    while (t < e && *t != ' ')
                        t++;
                    size_t tl = (size_t)(t - s);
                    if (s[0] == '[') {
                        migrating++;
                    } else {
                        const char *dash = memchr(s, '-', tl);
                        int64_t a, b;
                        if (import__int(s, dash ? (size_t)(dash - s) : tl, 0, REDIS_SLOTS - 1, &a) !=
                                0 ||
                            (dash && import__int(dash + 1, (size_t)(t - dash - 1), 0,
                                                 REDIS_SLOTS - 1, &b) != 0) ||
                            s[0] == '+' || s[0] == '-') {
                            rc = import__fail(c, l.no,
                                              "\"%.*s\" is not a slot or a "
                                              "range of slots (0..16383)",
                                              (int)(tl > 40 ? 40 : tl), s);
                            goto out;
                        }
                        if (!dash)
                            b = a;
                        if (b < a) {
                            rc = import__fail(c, l.no,
                                              "slot range %lld-%lld is "
                                              "reversed",
                                              (long long)a, (long long)b);
                            goto out;
                        }
                        for (int64_t k = a; k <= b; k++) {
                            if (owner[k] >= 0) {
                                rc = import__fail(c, l.no,
                                                  "slot %lld is held by two masters (lines %d "
                                                  "and %d): the nodes disagree about the "
                                                  "configuration",
                                                  (long long)k, owner_line[k], l.no);
                                goto out;
                            }
                            owner[k] = (int16_t)(c->r->n - 1);
                            owner_line[k] = l.no;
                        }
                        if ((rc = import__slots(c, n, (uint16_t)a, (uint16_t)b)) != 0)
                            goto out;
                    }
                    s = t;
                }
            } else if (pass == 1 && slave) {
                size_t m = 0;
                if (!import__set_find(c, &ids, r.f[3], r.fl[3], 0, &m)) {
                    rc = import__note(c, l.no,
                                      "replica %.*s follows %.*s, which is not a "
                                      "master in the text",
                                      (int)al, r.f[1], (int)(r.fl[3] > 40 ? 40 : r.fl[3]), r.f[3]);
                } else {
                    rc = import__replica(c, &c->r->nodes[m], r.f[1], al);
                    if (rc == 0 && has_flag(&r, "fail"))
                        rc = import__note(c, l.no, "replica %.*s is failed (fail)", (int)al, r.f[1]);
                }
                if (rc != 0)
                    goto out;
            } else if (pass == 0 && !master && !slave) {
                if ((rc = import__note(c, l.no,
                                       "%.*s is neither master nor replica (%.*s): "
                                       "not imported",
                                       (int)al, r.f[1], (int)(r.fl[2] > 60 ? 60 : r.fl[2]),
                                       r.f[2])) != 0)
                    goto out;
            }
        }
    }
    {
        size_t free_slots = 0;
        for (size_t i = 0; i < REDIS_SLOTS; i++)
            free_slots += owner[i] < 0;
        if (free_slots > 0 &&
            (rc = import__note(c, 0,
                               "%zu of 16384 slots have no master: keys there get "
                               "CLUSTERDOWN (cluster-require-full-coverage)",
                               free_slots)) != 0)
            goto out;
        if (migrating > 0)
            rc = import__note(c, 0,
                              "%zu slots are migrating or importing: ringsim places "
                              "them on the master that holds them now",
                              migrating);
    }
out:
    free(owner);
    free(owner_line);
    import__set_free(&ids);
    return rc;
}
