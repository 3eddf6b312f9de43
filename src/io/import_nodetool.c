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
 * tokens in the text's order; `Down` is the state down.  Several
 * datacenters are imported as one token ring (the driver's token map): the
 * owner of a key is the same; replicas per datacenter are
 * NetworkTopologyStrategy's, which ringsim's SimpleStrategy walk is not.
 *
 * Cost: one pass, then a sort of the tokens to find duplicates.
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

int import__nodetool(import_ctx *c)
{
    strcpy(c->r->algorithm, "cassandra");
    size_t pos = 0;
    import_line l = {0};
    int rc = 0, dcs = 0;
    bool warned = false;
    tok *all = NULL;
    size_t nall = 0, capall = 0;
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
            rc = import__note(c, l.no, "datacenter %.*s", (int)(dl > 80 ? 80 : dl), l.s + st);
            if (rc != 0)
                goto out;
            continue;
        }
        if (f[0][0] == '=' || field_is(f[0], fl[0], "Address"))
            continue;
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
    if (c->r->n > 0) {
        size_t most = 0;
        for (size_t i = 0; i < c->r->n; i++)
            if (c->r->nodes[i].v.ntokens > most)
                most = c->r->nodes[i].v.ntokens;
        if ((rc = import__param_int(c, "num_tokens", (int64_t)most)) != 0)
            goto out;
    }
    if (dcs > 1)
        rc = import__note(c, 0,
                          "%d datacenters: imported as one token ring (the owner of a key is "
                          "the same); with NetworkTopologyStrategy each datacenter holds its "
                          "own replicas, which ringsim's SimpleStrategy walk does not model",
                          dcs);
out:
    free(all);
    return rc;
}
