/*
 * import_nodetool.c - the output of Cassandra's `nodetool ring`, one or
 * several datacenters.
 *
 * Reference: Apache Cassandra 4.x, src/java/org/apache/cassandra/tools/
 * nodetool/Ring.java, read for the layout:
 *   "Datacenter: NAME" then a line of '=' opens a datacenter; a header
 *   "Address Rack Status State Load Owns Token"; one line with only the
 *   largest token (the ring wraps to it); then one line per token, in token
 *   order: address (with ":port" under --print-port), rack, Up|Down|?,
 *   Normal|Leaving|Joining|Moving|?, the load (a number and a unit, or
 *   "?"), the ownership ("33.33%" or "?"), the token.  "Warning:" and
 *   "Note:" lines around it are the tool's words.
 * Fields are read from both ends (the load has a space inside).  Tokens
 * must be Murmur3Partitioner's (signed 64-bit): RandomPartitioner's and
 * ByteOrderedPartitioner's are refused.  Two lines with the same token are
 * refused: Cassandra gives a token to one node.
 *
 * Nodes are the addresses in the order they first appear, with their
 * tokens in the text's order; `Down` is the state down; each node's
 * location is its datacenter (the "Datacenter:" line above it) and its
 * rack (the Rack column).  The text may hold `nodetool status` too, before
 * or after the ring (Status.java: "--  Address  Load  Tokens  Owns  Host
 * ID  Rack" and one line a node, its two-letter status/state first, the
 * rack last): the racks are taken from it, a disagreement noted.  Status
 * alone has no tokens and is refused saying so.  Several datacenters are
 * one token ring (the owner of a key is the same); replicas per
 * datacenter are NetworkTopologyStrategy's (strategy=network_topology with
 * the keyspace's replication).
 *
 * Cost: one pass, then a sort of the tokens to find duplicates, and the
 * status lines matched to the nodes by address (n x status lines).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "import_int.h"
#include "vec.h"

#define NT_MAX_FIELDS 16

typedef struct tok {
    int64_t t;
    int line;
} tok;

static int cmp_tok(const void *a, const void *b)
{
    const tok *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static bool field_is(const char *s, size_t len, const char *w)
{
    return len == strlen(w) && memcmp(s, w, len) == 0;
}

/* A `nodetool status` line: "UN  10.0.0.1  1.2 MiB  16  33.3%  <host id>
 * rack", status U or D, state N, L, J or M. */
static bool status_line(const char *const *f, const size_t *fl, size_t n)
{
    if (n < 6 || fl[0] != 2 || !strchr("UD", f[0][0]) || !strchr("NLJM", f[0][1]))
        return false;
    /* the Host ID before the rack: a UUID, or "?" (a ring line never) */
    const char *h = f[n - 2];
    return (fl[n - 2] == 1 && h[0] == '?') ||
           (fl[n - 2] == 36 && h[8] == '-' && h[13] == '-' && h[18] == '-' && h[23] == '-');
}

typedef struct status_rack {
    const char *addr, *rack;
    size_t al, rl;
    int line;
} status_rack;

int import__nodetool(import_ctx *c)
{
    strcpy(c->r->algorithm, "cassandra");
    size_t pos = 0;
    import_line l = {0};
    int rc = 0, dcs = 0;
    bool warned = false;
    tok *all = NULL;
    size_t nall = 0, capall = 0;
    const char *dc = NULL; /* the datacenter of the lines below ("Datacenter: NAME") */
    size_t dcl = 0;
    status_rack *sr = NULL; /* nodetool status's racks, by address */
    size_t nsr = 0, capsr = 0;
    while (import__next_line(c->text, c->len, &pos, &l)) {
        const char *f[NT_MAX_FIELDS];
        size_t fl[NT_MAX_FIELDS];
        size_t n = 0, i = 0;
        while (i < l.len && n < NT_MAX_FIELDS) {
            while (i < l.len && (l.s[i] == ' ' || l.s[i] == '\t'))
                i++;
            if (i >= l.len)
                break;
            size_t st = i;
            while (i < l.len && l.s[i] != ' ' && l.s[i] != '\t')
                i++;
            f[n] = l.s + st;
            fl[n++] = i - st;
        }
        if (n == 0)
            continue;
        if (fl[0] >= 11 && memcmp(f[0], "Datacenter:", 11) == 0) {
            dcs++;
            size_t st = 11;
            while (st < l.len && l.s[st] == ' ')
                st++;
            size_t dl = l.len - st;
            while (dl > 0 && (l.s[st + dl - 1] == ' ' || l.s[st + dl - 1] == '\t'))
                dl--;
            dc = l.s + st;
            dcl = dl;
            rc = import__note(c, l.no, "datacenter %.*s", (int)(dl > 80 ? 80 : dl), l.s + st);
            if (rc != 0)
                goto out;
            continue;
        }
        if (f[0][0] == '=' || field_is(f[0], fl[0], "Address"))
            continue;
        /* nodetool status: its legend and header, and a node a line */
        if ((n >= 2 && field_is(f[0], fl[0], "--") && field_is(f[1], fl[1], "Address")) ||
            (n == 1 && field_is(f[0], fl[0], "Status=Up/Down")) ||
            (n == 2 && field_is(f[0], fl[0], "|/") &&
             field_is(f[1], fl[1], "State=Normal/Leaving/Joining/Moving")))
            continue;
        if (status_line(f, fl, n)) {
            if (vec_reserve(&sr, &capsr, nsr + 1, sizeof *sr, 16)) {
                rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
                goto out;
            }
            sr[nsr++] = (status_rack){f[1], f[n - 1], fl[1], fl[n - 1], l.no};
            continue;
        }
        if ((fl[0] >= 8 && memcmp(f[0], "Warning:", 8) == 0) ||
            (fl[0] >= 5 && memcmp(f[0], "Note:", 5) == 0)) {
            if (!warned &&
                (rc = import__note(c, l.no, "%.*s", (int)(l.len > 300 ? 300 : l.len), l.s)) != 0)
                goto out;
            warned = true;
            continue;
        }
        int64_t t;
        if (n == 1 && import__int(f[0], fl[0], INT64_MIN, INT64_MAX, &t) == 0)
            continue; /* the largest token, repeated above the list */
        bool status_ok = n >= 3 && (field_is(f[2], fl[2], "Up") || field_is(f[2], fl[2], "Down") ||
                                    field_is(f[2], fl[2], "?"));
        if (!status_ok && import__int(f[n - 1], fl[n - 1], INT64_MIN, INT64_MAX, &t) != 0) {
            /* the tool's words around the table (a warning's second line) */
            if (!warned &&
                (rc = import__note(c, l.no, "%.*s", (int)(l.len > 300 ? 300 : l.len), l.s)) != 0)
                goto out;
            warned = true;
            continue;
        }
        if (n < 7 || n == NT_MAX_FIELDS) {
            rc = import__fail(c, l.no,
                              "this line is not a `nodetool ring` token line (address, "
                              "rack, status, state, load, owns, token)");
            goto out;
        }
        const char *st = f[2];
        size_t stl = fl[2];
        if (!field_is(st, stl, "Up") && !field_is(st, stl, "Down") && !field_is(st, stl, "?")) {
            rc = import__fail(c, l.no, "status \"%.*s\" is not Up, Down or ?",
                              (int)(stl > 20 ? 20 : stl), st);
            goto out;
        }
        const char *state = f[3];
        size_t sl = fl[3];
        if (!field_is(state, sl, "Normal") && !field_is(state, sl, "Leaving") &&
            !field_is(state, sl, "Joining") && !field_is(state, sl, "Moving") &&
            !field_is(state, sl, "?")) {
            rc = import__fail(c, l.no,
                              "state \"%.*s\" is not Normal, Leaving, "
                              "Joining or Moving",
                              (int)(sl > 20 ? 20 : sl), state);
            goto out;
        }
        if (import__int(f[n - 1], fl[n - 1], INT64_MIN, INT64_MAX, &t) != 0) {
            rc = import__fail(c, l.no,
                              "token \"%.*s\" is not a Murmur3Partitioner token "
                              "(a signed 64-bit integer); ringsim's cassandra reproduces "
                              "Murmur3Partitioner only",
                              (int)(fl[n - 1] > 60 ? 60 : fl[n - 1]), f[n - 1]);
            goto out;
        }
        import_node_rec *node = import__find(c, f[0], fl[0]);
        if (node == NULL) {
            node = import__node(c, f[0], fl[0], l.no, &rc);
            if (node == NULL)
                goto out;
            if (!field_is(state, sl, "Normal") &&
                (rc = import__note(c, l.no,
                                   "%.*s is %.*s: ringsim places its tokens as they "
                                   "are now",
                                   (int)(fl[0] > 80 ? 80 : fl[0]), f[0], (int)sl, state)) != 0)
                goto out;
        }
        if (field_is(st, stl, "Down"))
            node->v.down = true;
        if ((dc && (rc = import__where(c, node, "dc", dc, dcl, l.no)) != 0) ||
            (rc = import__where(c, node, "rack", f[1], fl[1], l.no)) != 0)
            goto out;
        if ((rc = import__token(c, node, t, l.no)) != 0)
            goto out;
        if (vec_reserve(&all, &capall, nall + 1, sizeof *all, 64)) {
            rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
            goto out;
        }
        all[nall++] = (tok){t, l.no};
    }
    if (nall > 1) {
        qsort(all, nall, sizeof *all, cmp_tok);
        for (size_t i = 1; i < nall; i++)
            if (all[i].t == all[i - 1].t) {
                int a = all[i].line < all[i - 1].line ? all[i].line : all[i - 1].line;
                int b = all[i].line < all[i - 1].line ? all[i - 1].line : all[i].line;
                rc = import__fail(c, b,
                                  "token %lld appears twice (lines %d and %d); Cassandra "
                                  "gives a token to one node",
                                  (long long)all[i].t, a, b);
                goto out;
            }
    }
    if (nall == 0 && nsr > 0) {
        rc = import__fail(c, sr[0].line,
                          "this is `nodetool status`: it has no tokens, so it cannot place a "
                          "key; paste `nodetool ring` with it (the racks are taken from the "
                          "status)");
        goto out;
    }
    /* The status's racks, matched by address; a node the ring lacks is
     * said, and a rack that differs from the ring's column too. */
    for (size_t k = 0; k < nsr; k++) {
        import_node_rec *node = import__find(c, sr[k].addr, sr[k].al);
        if (!node) {
            rc = import__note(c, sr[k].line, "%.*s is in the status, not in the ring: left out",
                              (int)(sr[k].al > 80 ? 80 : sr[k].al), sr[k].addr);
        } else {
            bool differs = node->rack && (strlen(node->rack) != sr[k].rl ||
                                          memcmp(node->rack, sr[k].rack, sr[k].rl) != 0);
            if (differs)
                rc = import__note(c, sr[k].line,
                                  "%.*s: rack %.*s in the status, %s in the ring; "
                                  "the status's is kept",
                                  (int)(sr[k].al > 80 ? 80 : sr[k].al), sr[k].addr,
                                  (int)(sr[k].rl > 80 ? 80 : sr[k].rl), sr[k].rack, node->rack);
            if (!rc)
                rc = import__where(c, node, "rack", sr[k].rack, sr[k].rl, sr[k].line);
        }
        if (rc != 0)
            goto out;
    }
    if (c->r->n > 0) {
        size_t most = 0;
        for (size_t i = 0; i < c->r->n; i++)
            if (c->r->nodes[i].v.ntokens > most)
                most = c->r->nodes[i].v.ntokens;
        if ((rc = import__param_int(c, "num_tokens", (int64_t)most)) != 0)
            goto out;
    }
    /* the datacenters the nodes are in (a status's headers repeat them) */
    dcs = 0;
    for (size_t i = 0; i < c->r->n; i++) {
        const char *d = c->r->nodes[i].dc;
        size_t k = 0;
        while (d && k < i && !(c->r->nodes[k].dc && !strcmp(c->r->nodes[k].dc, d)))
            k++;
        dcs += d && k == i;
    }
    if (dcs > 1)
        rc = import__note(c, 0,
                          "%d datacenters: one token ring, each node keeping its datacenter and "
                          "rack as its location; a keyspace's replicas per datacenter are "
                          "strategy=network_topology with its replication (dc1:3,dc2:3)",
                          dcs);
out:
    free(all);
    free(sr);
    return rc;
}
