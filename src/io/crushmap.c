/*
 * crushmap.c - CRUSH map text to ceph_map and back (see crushmap.h).
 *
 * The text is cut into tokens (runs of non-blanks; `{` and `}` alone; `#`
 * to the end of the line dropped), each remembering its line, then read by
 * a small recursive descent in the order of CrushCompiler's grammar.
 * Everything is built in growing arrays and turned into a ceph_map at the
 * end, so a refusal frees what was built and returns nothing half made.
 */
#include "crushmap.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tok {
    const char *s;
    size_t len;
    int line;
} tok;

typedef struct parser {
    tok *t;
    size_t n, i;
    ceph_map *m;
    size_t capt, capd, capr;
    ceph_bucket **bk; /* in text order */
    size_t nbk, capbk;
    size_t items;
    int *line;
    rs_error *err;
} parser;

static int fail(parser *p, int line, const char *fmt, const char *a, size_t alen)
{
    char word[64];
    size_t n = alen < sizeof word - 1 ? alen : sizeof word - 1;
    memcpy(word, a ? a : "", a ? n : 0);
    word[a ? n : 0] = 0;
    *p->line = line;
    return rs_fail(p->err, RINGSIM_EPARAM, fmt, word);
}

static int tokenize(parser *p, const char *text, size_t len)
{
    int line = 1;
    size_t i = 0;
    while (i < len) {
        char ch = text[i];
        if (ch == '\n') {
            line++;
            i++;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r') {
            i++;
            continue;
        }
        if (ch == '#') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        size_t j = i + 1;
        if (ch != '{' && ch != '}')
            while (j < len && !strchr(" \t\r\n{}#", text[j]))
                j++;
        if (p->n == p->capt) {
            size_t cap = p->capt ? p->capt * 2 : 256;
            tok *nt = realloc(p->t, cap * sizeof *nt);
            if (!nt)
                return RINGSIM_ENOMEM;
            p->t = nt;
            p->capt = cap;
        }
        p->t[p->n++] = (tok){.s = text + i, .len = j - i, .line = line};
        i = j;
    }
    return 0;
}

static int is(const tok *t, const char *w)
{
    return t->len == strlen(w) && !memcmp(t->s, w, t->len);
}

static const tok *peek(parser *p) { return p->i < p->n ? &p->t[p->i] : NULL; }

static int last_line(parser *p) { return p->n ? p->t[p->n - 1].line : 0; }

/* The next token, or a refusal "unexpected end after <what>". */
static int next(parser *p, const tok **out, const char *what)
{
    *out = NULL;
    if (p->i >= p->n) {
        *p->line = last_line(p);
        return rs_fail(p->err, RINGSIM_EPARAM, "crush map: the text ends inside %s", what);
    }
    *out = &p->t[p->i++];
    return 0;
}

static int expect(parser *p, const char *w, const char *what)
{
    const tok *t;
    int rc = next(p, &t, what);
    if (rc)
        return rc;
    if (!is(t, w))
        return fail(p, t->line, "crush map: expected here, found \"%s\"", t->s, t->len);
    return 0;
}

static int to_int(parser *p, const tok *t, long lo, long hi, long *out)
{
    char buf[32];
    if (t->len == 0 || t->len >= sizeof buf)
        return fail(p, t->line, "crush map: \"%s\" is not a number", t->s, t->len);
    memcpy(buf, t->s, t->len);
    buf[t->len] = 0;
    char *end;
    long v = strtol(buf, &end, 10);
    if (*end || v < lo || v > hi)
        return fail(p, t->line, "crush map: \"%s\" is not a number in range", t->s, t->len);
    *out = v;
    return 0;
}

static int next_int(parser *p, long lo, long hi, long *out, const char *what)
{
    const tok *t;
    int rc = next(p, &t, what);
    return rc ? rc : to_int(p, t, lo, hi, out);
}

static char *dup_tok(const tok *t)
{
    char *s = malloc(t->len + 1);
    if (s) {
        memcpy(s, t->s, t->len);
        s[t->len] = 0;
    }
    return s;
}

/* An item name: a device's or a bucket's id, or 0 with *found false. */
static int find_item(const parser *p, const tok *t, int32_t *id)
{
    for (size_t i = 0; i < p->m->ndevices; i++)
        if (strlen(p->m->devices[i].name) == t->len && !memcmp(p->m->devices[i].name, t->s, t->len)) {
            *id = p->m->devices[i].id;
            return 1;
        }
    for (size_t i = 0; i < p->nbk; i++)
        if (strlen(p->bk[i]->name) == t->len && !memcmp(p->bk[i]->name, t->s, t->len)) {
            *id = p->bk[i]->id;
            return 1;
        }
    return 0;
}

static const ceph_type *find_type(const parser *p, const tok *t)
{
    for (size_t i = 0; i < p->m->ntypes; i++)
        if (strlen(p->m->types[i].name) == t->len && !memcmp(p->m->types[i].name, t->s, t->len))
            return &p->m->types[i];
    return NULL;
}

static const ceph_bucket *bucket_by_id(const parser *p, int32_t id)
{
    for (size_t i = 0; i < p->nbk; i++)
        if (p->bk[i]->id == id)
            return p->bk[i];
    return NULL;
}

static int parse_tunable(parser *p, const tok *kw)
{
    const tok *name;
    long v;
    int rc = next(p, &name, "a tunable");
    if (!rc)
        rc = next_int(p, 0, INT_MAX, &v, "a tunable");
    if (rc)
        return rc;
    ceph_tunables *t = &p->m->t;
    if (is(name, "choose_local_tries"))
        t->choose_local_tries = (uint32_t)v;
    else if (is(name, "choose_local_fallback_tries"))
        t->choose_local_fallback_tries = (uint32_t)v;
    else if (is(name, "choose_total_tries"))
        t->choose_total_tries = (uint32_t)v;
    else if (is(name, "chooseleaf_descend_once"))
        t->chooseleaf_descend_once = (uint32_t)v;
    else if (is(name, "chooseleaf_vary_r"))
        t->chooseleaf_vary_r = (uint32_t)v;
    else if (is(name, "chooseleaf_stable"))
        t->chooseleaf_stable = (uint32_t)v;
    else if (is(name, "straw_calc_version") || is(name, "allowed_bucket_algs"))
        ; /* straw (v1) and bucket creation only: no effect on straw2 mapping */
    else
        return fail(p, kw->line, "crush map: unknown tunable \"%s\"", name->s, name->len);
    return 0;
}

static int parse_device(parser *p, const tok *kw)
{
    long id;
    const tok *name;
    int rc = next_int(p, 0, CRUSHMAP_MAX_ID - 1, &id, "a device");
    if (!rc)
        rc = next(p, &name, "a device");
    if (rc)
        return rc;
    int32_t dummy;
    if (find_item(p, name, &dummy))
        return fail(p, kw->line, "crush map: device name \"%s\" used twice", name->s, name->len);
    for (size_t i = 0; i < p->m->ndevices; i++)
        if (p->m->devices[i].id == id)
            return fail(p, kw->line, "crush map: device id used twice (%s)", name->s, name->len);
    if (p->m->ndevices == p->capd) {
        size_t cap = p->capd ? p->capd * 2 : 64;
        ceph_device *nd = realloc(p->m->devices, cap * sizeof *nd);
        if (!nd)
            return RINGSIM_ENOMEM;
        p->m->devices = nd;
        p->capd = cap;
    }
    ceph_device *d = &p->m->devices[p->m->ndevices];
    *d = (ceph_device){.id = (int32_t)id, .name = dup_tok(name)};
    if (!d->name)
        return RINGSIM_ENOMEM;
    p->m->ndevices++;
    const tok *t = peek(p);
    if (t && is(t, "class") && t->line == kw->line) {
        p->i++;
        const tok *c;
        rc = next(p, &c, "a device class");
        if (rc)
            return rc;
        d->klass = dup_tok(c);
        if (!d->klass)
            return RINGSIM_ENOMEM;
    }
    if (id >= p->m->max_devices)
        p->m->max_devices = (int32_t)id + 1;
    return 0;
}

static int parse_type(parser *p, const tok *kw)
{
    long id;
    const tok *name;
    int rc = next_int(p, 0, 65535, &id, "a type");
    if (!rc)
        rc = next(p, &name, "a type");
    if (rc)
        return rc;
    if (find_type(p, name))
        return fail(p, kw->line, "crush map: type \"%s\" declared twice", name->s, name->len);
    if (p->m->ntypes == p->capr) {
        size_t cap = p->capr ? p->capr * 2 : 16;
        ceph_type *nt = realloc(p->m->types, cap * sizeof *nt);
        if (!nt)
            return RINGSIM_ENOMEM;
        p->m->types = nt;
        p->capr = cap;
    }
    ceph_type *ty = &p->m->types[p->m->ntypes];
    *ty = (ceph_type){.id = (int32_t)id, .name = dup_tok(name)};
    if (!ty->name)
        return RINGSIM_ENOMEM;
    p->m->ntypes++;
    return 0;
}

static void bucket_free(ceph_bucket *b)
{
    if (b) {
        free(b->name);
        free(b->items);
        free(b->weights);
        free(b);
    }
}

static int parse_bucket(parser *p, const tok *kw, const ceph_type *type)
{
    const tok *name, *t;
    int rc = next(p, &name, "a bucket");
    if (rc)
        return rc;
    int32_t dummy;
    if (find_item(p, name, &dummy))
        return fail(p, name->line, "crush map: item name \"%s\" used twice", name->s, name->len);
    if ((rc = expect(p, "{", "a bucket")))
        return rc;
    ceph_bucket *b = calloc(1, sizeof *b);
    if (!b || !(b->name = dup_tok(name))) {
        free(b);
        return RINGSIM_ENOMEM;
    }
    b->type = type->id;
    size_t cap = 0;
    int have_id = 0;
    for (;;) {
        if ((rc = next(p, &t, "a bucket")))
            goto fail;
        if (is(t, "}"))
            break;
        if (is(t, "id")) {
            long id;
            if ((rc = next_int(p, -(CRUSHMAP_MAX_ID - 1), -1, &id, "a bucket")))
                goto fail;
            const tok *c = peek(p);
            if (c && is(c, "class") && c->line == t->line) {
                p->i += 2; /* a device-class shadow id: not mapped */
                if (p->i > p->n) {
                    rc = next(p, &c, "a bucket");
                    goto fail;
                }
                continue;
            }
            if (bucket_by_id(p, (int32_t)id)) {
                rc = fail(p, t->line, "crush map: bucket id used twice (in %s)", b->name,
                          strlen(b->name));
                goto fail;
            }
            b->id = (int32_t)id;
            have_id = 1;
        } else if (is(t, "alg")) {
            const tok *a;
            if ((rc = next(p, &a, "a bucket")))
                goto fail;
            if (!is(a, "straw2")) {
                rc = fail(p, a->line,
                          "crush map: bucket algorithm \"%s\" is not supported: ringsim maps "
                          "straw2 buckets only",
                          a->s, a->len);
                goto fail;
            }
        } else if (is(t, "hash")) {
            const tok *h;
            if ((rc = next(p, &h, "a bucket")))
                goto fail;
            if (!is(h, "0") && !is(h, "rjenkins1")) {
                rc = fail(p, h->line, "crush map: hash \"%s\" is not supported (rjenkins1 only)",
                          h->s, h->len);
                goto fail;
            }
        } else if (is(t, "item")) {
            const tok *in;
            if ((rc = next(p, &in, "an item")))
                goto fail;
            int32_t id;
            if (!find_item(p, in, &id)) {
                rc = fail(p, in->line, "crush map: item \"%s\" is not defined (yet)", in->s, in->len);
                goto fail;
            }
            for (uint32_t k = 0; k < b->size; k++)
                if (b->items[k] == id) {
                    rc = fail(p, in->line, "crush map: item \"%s\" twice in a bucket", in->s,
                              in->len);
                    goto fail;
                }
            uint32_t w = CEPH_WEIGHT_ONE;
            if (id < 0)
                w = bucket_by_id(p, id)->weight;
            const tok *o;
            while ((o = peek(p)) && o->line == in->line && (is(o, "weight") || is(o, "pos"))) {
                p->i++;
                const tok *v;
                if ((rc = next(p, &v, "an item")))
                    goto fail;
                if (is(o, "weight")) {
                    char buf[64];
                    if (v->len >= sizeof buf) {
                        rc = fail(p, v->line, "crush map: bad weight \"%s\"", v->s, v->len);
                        goto fail;
                    }
                    memcpy(buf, v->s, v->len);
                    buf[v->len] = 0;
                    if (ceph_weight_parse(buf, &w)) {
                        rc = fail(p, v->line, "crush map: bad weight \"%s\"", v->s, v->len);
                        goto fail;
                    }
                } else {
                    long pos;
                    if ((rc = to_int(p, v, 0, INT_MAX, &pos)))
                        goto fail;
                    if ((uint32_t)pos != b->size) {
                        rc = fail(p, v->line, "crush map: item pos %s out of order", v->s, v->len);
                        goto fail;
                    }
                }
            }
            if (++p->items > CRUSHMAP_MAX_ITEMS) {
                rc = fail(p, in->line, "crush map: more than 100000 items%s", "", 0);
                goto fail;
            }
            if (b->size == cap) {
                size_t nc = cap ? cap * 2 : 8;
                int32_t *ni = realloc(b->items, nc * sizeof *ni);
                if (ni)
                    b->items = ni;
                uint32_t *nw = realloc(b->weights, nc * sizeof *nw);
                if (nw)
                    b->weights = nw;
                if (!ni || !nw) {
                    rc = RINGSIM_ENOMEM;
                    goto fail;
                }
                cap = nc;
            }
            b->items[b->size] = id;
            b->weights[b->size++] = w;
            b->weight += w;
        } else {
            rc = fail(p, t->line, "crush map: unexpected \"%s\" in a bucket", t->s, t->len);
            goto fail;
        }
    }
    if (!have_id) {
        /* crushtool gives the next free id; ringsim asks for it */
        rc = fail(p, kw->line, "crush map: bucket %s has no id", b->name, strlen(b->name));
        goto fail;
    }
    if (p->nbk == p->capbk) {
        size_t nc = p->capbk ? p->capbk * 2 : 16;
        ceph_bucket **nb = realloc(p->bk, nc * sizeof *nb);
        if (!nb) {
            rc = RINGSIM_ENOMEM;
            goto fail;
        }
        p->bk = nb;
        p->capbk = nc;
    }
    p->bk[p->nbk++] = b;
    return 0;
fail:
    bucket_free(b);
    return rc;
}

static int add_step(ceph_rule *r, size_t *cap, int op, int32_t a1, int32_t a2)
{
    if (r->nsteps == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        ceph_step *ns = realloc(r->steps, nc * sizeof *ns);
        if (!ns)
            return RINGSIM_ENOMEM;
        r->steps = ns;
        *cap = nc;
    }
    r->steps[r->nsteps++] = (ceph_step){.op = op, .arg1 = a1, .arg2 = a2};
    return 0;
}

static int parse_step(parser *p, ceph_rule *r, size_t *cap, const tok *kw)
{
    const tok *op;
    long v;
    int rc = next(p, &op, "a step");
    if (rc)
        return rc;
    if (r->nsteps >= CRUSHMAP_MAX_STEPS)
        return fail(p, kw->line, "crush map: rule %s has too many steps", r->name, strlen(r->name));
    static const struct {
        const char *name;
        int op;
    } sets[] = {
        {"set_choose_tries", CEPH_OP_SET_CHOOSE_TRIES},
        {"set_chooseleaf_tries", CEPH_OP_SET_CHOOSELEAF_TRIES},
        {"set_choose_local_tries", CEPH_OP_SET_CHOOSE_LOCAL_TRIES},
        {"set_choose_local_fallback_tries", CEPH_OP_SET_CHOOSE_LOCAL_FALLBACK_TRIES},
        {"set_chooseleaf_vary_r", CEPH_OP_SET_CHOOSELEAF_VARY_R},
        {"set_chooseleaf_stable", CEPH_OP_SET_CHOOSELEAF_STABLE},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (is(op, sets[i].name)) {
            if ((rc = next_int(p, 0, INT_MAX, &v, "a step")))
                return rc;
            if (sets[i].op == CEPH_OP_SET_CHOOSE_LOCAL_FALLBACK_TRIES && v > 0)
                return fail(p, kw->line,
                            "crush map: %s > 0 is a legacy tunable ringsim does not reproduce",
                            op->s, op->len);
            return add_step(r, cap, sets[i].op, (int32_t)v, 0);
        }
    if (is(op, "take")) {
        const tok *name;
        if ((rc = next(p, &name, "a step")))
            return rc;
        int32_t id;
        if (!find_item(p, name, &id))
            return fail(p, name->line, "crush map: take: item \"%s\" is not defined", name->s,
                        name->len);
        const tok *c = peek(p);
        if (c && c->line == kw->line && is(c, "class"))
            return fail(p, c->line,
                        "crush map: \"take ... class\" (device-class shadow trees) is not "
                        "supported%s",
                        "", 0);
        return add_step(r, cap, CEPH_OP_TAKE, id, 0);
    }
    if (is(op, "emit"))
        return add_step(r, cap, CEPH_OP_EMIT, 0, 0);
    if (is(op, "choosemsr") || is(op, "chooseleafmsr"))
        return fail(p, op->line, "crush map: MSR steps (%s) are not supported", op->s, op->len);
    if (is(op, "choose") || is(op, "chooseleaf")) {
        int leaf = is(op, "chooseleaf");
        const tok *mode, *tt, *tn;
        if ((rc = next(p, &mode, "a step")))
            return rc;
        int firstn = is(mode, "firstn");
        if (!firstn && !is(mode, "indep"))
            return fail(p, mode->line, "crush map: expected firstn or indep, found \"%s\"", mode->s,
                        mode->len);
        if ((rc = next_int(p, -CEPH_MAX_RESULT, CEPH_MAX_RESULT, &v, "a step")))
            return rc;
        if ((rc = next(p, &tt, "a step")))
            return rc;
        if (!is(tt, "type"))
            return fail(p, tt->line, "crush map: expected \"type\", found \"%s\"", tt->s, tt->len);
        if ((rc = next(p, &tn, "a step")))
            return rc;
        const ceph_type *ty = find_type(p, tn);
        if (!ty)
            return fail(p, tn->line, "crush map: unknown type \"%s\"", tn->s, tn->len);
        int code = firstn ? (leaf ? CEPH_OP_CHOOSELEAF_FIRSTN : CEPH_OP_CHOOSE_FIRSTN)
                          : (leaf ? CEPH_OP_CHOOSELEAF_INDEP : CEPH_OP_CHOOSE_INDEP);
        return add_step(r, cap, code, (int32_t)v, ty->id);
    }
    return fail(p, op->line, "crush map: unknown step \"%s\"", op->s, op->len);
}

static int parse_rule(parser *p, const tok *kw)
{
    const tok *name, *t;
    int rc = next(p, &name, "a rule");
    if (rc)
        return rc;
    if ((rc = expect(p, "{", "a rule")))
        return rc;
    for (size_t i = 0; i < p->m->nrules; i++)
        if (strlen(p->m->rules[i].name) == name->len &&
            !memcmp(p->m->rules[i].name, name->s, name->len))
            return fail(p, name->line, "crush map: rule \"%s\" defined twice", name->s, name->len);
    ceph_rule *nr = realloc(p->m->rules, (p->m->nrules + 1) * sizeof *nr);
    if (!nr)
        return RINGSIM_ENOMEM;
    p->m->rules = nr;
    ceph_rule *r = &p->m->rules[p->m->nrules];
    *r = (ceph_rule){.name = dup_tok(name), .id = -1, .type = CEPH_RULE_REPLICATED};
    if (!r->name)
        return RINGSIM_ENOMEM;
    p->m->nrules++;
    size_t cap = 0;
    for (;;) {
        if ((rc = next(p, &t, "a rule")))
            return rc;
        if (is(t, "}"))
            break;
        long v;
        if (is(t, "id") || is(t, "ruleset")) {
            if ((rc = next_int(p, 0, 255, &v, "a rule")))
                return rc;
            r->id = (int32_t)v;
        } else if (is(t, "min_size") || is(t, "max_size")) {
            if ((rc = next_int(p, 0, INT_MAX, &v, "a rule")))
                return rc;
        } else if (is(t, "type")) {
            const tok *ty;
            if ((rc = next(p, &ty, "a rule")))
                return rc;
            if (is(ty, "replicated"))
                r->type = CEPH_RULE_REPLICATED;
            else if (is(ty, "erasure"))
                r->type = CEPH_RULE_ERASURE;
            else if (is(ty, "msr_firstn") || is(ty, "msr_indep"))
                return fail(p, ty->line, "crush map: MSR rules (%s) are not supported", ty->s,
                            ty->len);
            else
                return fail(p, ty->line, "crush map: unknown rule type \"%s\"", ty->s, ty->len);
        } else if (is(t, "step")) {
            if ((rc = parse_step(p, r, &cap, t)))
                return rc;
        } else {
            return fail(p, t->line, "crush map: unexpected \"%s\" in a rule", t->s, t->len);
        }
    }
    if (r->id < 0)
        return fail(p, kw->line, "crush map: rule %s has no id", r->name, strlen(r->name));
    for (size_t i = 0; i + 1 < p->m->nrules; i++)
        if (p->m->rules[i].id == r->id)
            return fail(p, kw->line, "crush map: rule id of %s used twice", r->name, strlen(r->name));
    return 0;
}

int crushmap_parse(const char *text, size_t len, ceph_map **out, int *line, rs_error *err)
{
    int dummy_line;
    parser p = {.line = line ? line : &dummy_line, .err = err};
    *p.line = 0;
    *out = NULL;
    p.m = calloc(1, sizeof *p.m);
    if (!p.m)
        return RINGSIM_ENOMEM;
    /* crushtool -c starts from the legacy tunables */
    p.m->t = (ceph_tunables){
        .choose_local_tries = 2, .choose_local_fallback_tries = 5, .choose_total_tries = 19};
    int rc = tokenize(&p, text, len);
    while (!rc && p.i < p.n) {
        const tok *t = &p.t[p.i++];
        const ceph_type *ty;
        if (is(t, "tunable"))
            rc = parse_tunable(&p, t);
        else if (is(t, "device"))
            rc = parse_device(&p, t);
        else if (is(t, "type"))
            rc = parse_type(&p, t);
        else if (is(t, "rule"))
            rc = parse_rule(&p, t);
        else if (is(t, "choose_args"))
            rc = fail(&p, t->line, "crush map: choose_args (weight sets) are not supported%s", "", 0);
        else if ((ty = find_type(&p, t)))
            rc = parse_bucket(&p, t, ty);
        else
            rc = fail(&p, t->line, "crush map: unexpected \"%s\"", t->s, t->len);
    }
    if (!rc) {
        int32_t maxb = 0;
        for (size_t i = 0; i < p.nbk; i++)
            if (-p.bk[i]->id > maxb)
                maxb = -p.bk[i]->id;
        p.m->max_buckets = maxb;
        p.m->buckets = calloc(maxb ? (size_t)maxb : 1, sizeof *p.m->buckets);
        if (!p.m->buckets)
            rc = RINGSIM_ENOMEM;
        for (size_t i = 0; !rc && i < p.nbk; i++) {
            p.m->buckets[-1 - p.bk[i]->id] = p.bk[i];
            p.bk[i] = NULL;
        }
    }
    if (!rc) {
        rc = ceph_map_check(p.m, err);
        if (rc)
            *p.line = 0;
    }
    for (size_t i = 0; i < p.nbk; i++)
        bucket_free(p.bk[i]);
    free(p.bk);
    free(p.t);
    if (rc) {
        ceph_map_free(p.m);
        return rc;
    }
    *out = p.m;
    return 0;
}

/* ---- writing ---- */

static const char *type_name(const ceph_map *m, int32_t id)
{
    const ceph_type *t = ceph_type_by_id(m, id);
    return t ? t->name : "?";
}

static const char *item_name(const ceph_map *m, int32_t id)
{
    if (id < 0) {
        const ceph_bucket *b = m->buckets[-1 - id];
        return b ? b->name : "?";
    }
    for (size_t i = 0; i < m->ndevices; i++)
        if (m->devices[i].id == id)
            return m->devices[i].name;
    return "?";
}

static int write_bucket(const ceph_map *m, const ceph_bucket *b, unsigned char *done, sbuf *o)
{
    if (done[-1 - b->id])
        return 0;
    done[-1 - b->id] = 1;
    int rc = 0;
    for (uint32_t i = 0; !rc && i < b->size; i++)
        if (b->items[i] < 0)
            rc = write_bucket(m, m->buckets[-1 - b->items[i]], done, o);
    if (rc)
        return rc;
    char w[32];
    ceph_weight_format(b->weight, w);
    rc = sb_printf(o, "%s %s {\n\tid %d\n\t# weight %s\n\talg straw2\n\thash 0\t# rjenkins1\n",
                   type_name(m, b->type), b->name, b->id, w);
    for (uint32_t i = 0; !rc && i < b->size; i++) {
        ceph_weight_format(b->weights[i], w);
        rc = sb_printf(o, "\titem %s weight %s\n", item_name(m, b->items[i]), w);
    }
    return rc ? rc : sb_str(o, "}\n");
}

int crushmap_write(const ceph_map *m, sbuf *o)
{
    const ceph_tunables *t = &m->t;
    int rc = sb_printf(o,
                       "# begin crush map\n"
                       "tunable choose_local_tries %u\n"
                       "tunable choose_local_fallback_tries %u\n"
                       "tunable choose_total_tries %u\n"
                       "tunable chooseleaf_descend_once %u\n"
                       "tunable chooseleaf_vary_r %u\n"
                       "tunable chooseleaf_stable %u\n"
                       "tunable straw_calc_version 1\n"
                       "tunable allowed_bucket_algs 54\n\n# devices\n",
                       t->choose_local_tries, t->choose_local_fallback_tries, t->choose_total_tries,
                       t->chooseleaf_descend_once, t->chooseleaf_vary_r, t->chooseleaf_stable);
    for (size_t i = 0; !rc && i < m->ndevices; i++)
        rc = m->devices[i].klass
                 ? sb_printf(o, "device %d %s class %s\n", m->devices[i].id, m->devices[i].name,
                             m->devices[i].klass)
                 : sb_printf(o, "device %d %s\n", m->devices[i].id, m->devices[i].name);
    if (!rc)
        rc = sb_str(o, "\n# types\n");
    for (size_t i = 0; !rc && i < m->ntypes; i++)
        rc = sb_printf(o, "type %d %s\n", m->types[i].id, m->types[i].name);
    if (!rc)
        rc = sb_str(o, "\n# buckets\n");
    unsigned char *done = calloc(m->max_buckets ? (size_t)m->max_buckets : 1, 1);
    if (!done)
        return RINGSIM_ENOMEM;
    for (int32_t i = 0; !rc && i < m->max_buckets; i++)
        if (m->buckets[i])
            rc = write_bucket(m, m->buckets[i], done, o);
    free(done);
    if (!rc)
        rc = sb_str(o, "\n# rules\n");
    for (size_t i = 0; !rc && i < m->nrules; i++) {
        const ceph_rule *r = &m->rules[i];
        rc = sb_printf(o, "rule %s {\n\tid %d\n\ttype %s\n\tmin_size 1\n\tmax_size %d\n", r->name,
                       r->id, r->type == CEPH_RULE_ERASURE ? "erasure" : "replicated",
                       CEPH_MAX_RESULT);
        for (size_t s = 0; !rc && s < r->nsteps; s++) {
            const ceph_step *st = &r->steps[s];
            switch (st->op) {
            case CEPH_OP_TAKE:
                rc = sb_printf(o, "\tstep take %s\n", item_name(m, st->arg1));
                break;
            case CEPH_OP_EMIT:
                rc = sb_str(o, "\tstep emit\n");
                break;
            case CEPH_OP_CHOOSE_FIRSTN:
            case CEPH_OP_CHOOSE_INDEP:
            case CEPH_OP_CHOOSELEAF_FIRSTN:
            case CEPH_OP_CHOOSELEAF_INDEP:
                rc = sb_printf(o, "\tstep %s %s %d type %s\n",
                               st->op >= CEPH_OP_CHOOSELEAF_FIRSTN ? "chooseleaf" : "choose",
                               st->op == CEPH_OP_CHOOSE_FIRSTN || st->op == CEPH_OP_CHOOSELEAF_FIRSTN
                                   ? "firstn"
                                   : "indep",
                               st->arg1, type_name(m, st->arg2));
                break;
            default: {
                static const char *const names[] = {
                    [CEPH_OP_SET_CHOOSE_TRIES] = "set_choose_tries",
                    [CEPH_OP_SET_CHOOSELEAF_TRIES] = "set_chooseleaf_tries",
                    [CEPH_OP_SET_CHOOSE_LOCAL_TRIES] = "set_choose_local_tries",
                    [CEPH_OP_SET_CHOOSE_LOCAL_FALLBACK_TRIES] = "set_choose_local_fallback_tries",
                    [CEPH_OP_SET_CHOOSELEAF_VARY_R] = "set_chooseleaf_vary_r",
                    [CEPH_OP_SET_CHOOSELEAF_STABLE] = "set_chooseleaf_stable",
                };
                if (st->op >= CEPH_OP_SET_CHOOSE_TRIES && st->op <= CEPH_OP_SET_CHOOSELEAF_STABLE)
                    rc = sb_printf(o, "\tstep %s %d\n", names[st->op], st->arg1);
                break;
            }
            }
        }
        if (!rc)
            rc = sb_str(o, "}\n");
    }
    return rc ? rc : sb_str(o, "\n# end crush map\n");
}
