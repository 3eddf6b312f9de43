/*
 * moverun.c - see moverun.h.  The names of a run are found by an FNV-1a
 * hash of their bytes in an open-addressing table kept at most half full
 * (slots.h);
 * a run of a node add uses two names, one of a switch as many as the nodes.
 */
#include "moverun.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "vec.h"

static int put_varint(sbuf *b, uint64_t v)
{
    char tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return sb_add(b, tmp, n);
}

/* 0 and *v, or -1 when the varint runs past end or over 64 bits. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        unsigned char c = *(*p)++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* The index of name in the run (0 for NULL), adding it when new; 0 or
 * RINGSIM_ENOMEM. */
static int name_index(moverun *r, const char *name, uint64_t *out)
{
    if (!name) {
        *out = 0;
        return 0;
    }
    size_t len = strlen(name);
    uint32_t h = slots_hash(name, len);
    const slots *t = &r->index;
    for (size_t j = h & (t->nslot - 1); t->nslot && t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
        const moverun_name *e = &r->name[t->slot[j] - 1];
        if (e->hash == h && e->len == len && !memcmp(r->names.p + e->off, name, len)) {
            *out = t->slot[j];
            return 0;
        }
    }
    if (slots_reserve(&r->index, r->count, 64, r->name, sizeof *r->name,
                      offsetof(moverun_name, hash)) ||
        vec_reserve(&r->name, &r->cap, (size_t)r->count + 1, sizeof *r->name, 32))
        return RINGSIM_ENOMEM;
    size_t at = r->names.n;
    if (put_varint(&r->names, len) || sb_add(&r->names, name, len)) {
        r->names.n = at;
        return RINGSIM_ENOMEM;
    }
    r->name[r->count] = (moverun_name){h, r->names.n - len, len};
    slots_put(&r->index, h, r->count);
    *out = (uint64_t)r->count++ + 1;
    return 0;
}

int moverun_add(moverun *r, const char *key, size_t len, const char *from, const char *to)
{
    uint64_t f, t;
    size_t at = r->data.n;
    /* A name added for a move that then fails stays in the dictionary,
     * unused: harmless. */
    if (name_index(r, from, &f) || name_index(r, to, &t) || put_varint(&r->data, len) ||
        sb_add(&r->data, key, len) || put_varint(&r->data, f) || put_varint(&r->data, t)) {
        r->data.n = at;
        return RINGSIM_ENOMEM;
    }
    r->n++;
    return 0;
}

int moverun_full(const moverun *r) { return r->n >= MOVERUN_MAX || r->data.n >= MOVERUN_BYTES; }

void moverun_clear(moverun *r)
{
    r->names.n = r->data.n = 0;
    r->n = 0;
    r->count = 0;
    slots_clear(&r->index);
}

void moverun_free(moverun *r)
{
    free(r->names.p);
    free(r->data.p);
    free(r->name);
    slots_free(&r->index);
    *r = (moverun){0};
}

int moverun_each(const void *names, size_t names_len, const void *data, size_t data_len, int64_t n,
                 int64_t skip, int64_t limit, moverun_fn fn, void *ud, int64_t *seen)
{
    *seen = 0;
    /* The names, copied NUL-terminated: an offset table over one buffer. */
    const unsigned char *p = names, *end = p + names_len;
    size_t count = 0;
    while (p < end) {
        uint64_t len;
        if (get_varint(&p, end, &len) || len > (uint64_t)(end - p))
            return RINGSIM_ENOTDB;
        p += len;
        count++;
    }
    char *text = malloc(names_len + 1), *key = NULL;
    size_t *at = malloc((count ? count : 1) * sizeof *at), key_cap = 0;
    if (!text || !at) {
        free(text);
        free(at);
        return RINGSIM_ENOMEM;
    }
    p = names;
    for (size_t i = 0, o = 0; i < count; i++) {
        uint64_t len = 0;
        get_varint(&p, end, &len); /* checked above */
        memcpy(text + o, p, len);
        text[o + len] = '\0';
        at[i] = o;
        o += len + 1;
        p += len;
    }
    int rc = 0;
    p = data;
    end = p + data_len;
    for (int64_t i = 0; i < n && !rc; i++) {
        uint64_t len, f, t;
        if (get_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
            rc = RINGSIM_ENOTDB;
            break;
        }
        const unsigned char *k = p;
        p += len;
        if (get_varint(&p, end, &f) || get_varint(&p, end, &t) || f > count || t > count) {
            rc = RINGSIM_ENOTDB;
            break;
        }
        if (i < skip)
            continue;
        if (limit >= 0 && *seen >= limit)
            break;
        if (len + 1 > key_cap) {
            char *nk = realloc(key, len + 1);
            if (!nk) {
                rc = RINGSIM_ENOMEM;
                break;
            }
            key = nk;
            key_cap = len + 1;
        }
        memcpy(key, k, len);
        key[len] = '\0';
        ++*seen;
        rc = fn(ud, key, f ? text + at[f - 1] : NULL, t ? text + at[t - 1] : NULL);
    }
    /* A run that says n moves holds exactly n. */
    if (!rc && (limit < 0 || *seen < limit) && p != end)
        rc = RINGSIM_ENOTDB;
    free(key);
    free(text);
    free(at);
    return rc;
}
