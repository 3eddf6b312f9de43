/*
 * ringsimmodule.c - `import ringsim`: libringsim (include/ringsim/ringsim.h)
 * for Python 3, a CPython extension built against Debian's python3-dev.
 *
 *   import ringsim
 *   p = ringsim.Placement("nginx", ["10.0.0.1:80", {"name": "10.0.0.2:80", "weight": 2}])
 *   p.lookup("user:42")          # "10.0.0.2:80" (None without nodes)
 *   p.lookup_many(keys)          # [owner, ...], one call
 *   p.moves(q, keys)             # [(key, owner in p, owner in q), ...] where they differ
 *
 * It calls the library's public functions only, as any other program would
 * (linked with libringsim.a, so the module needs no library path).  A
 * Placement is built once, in its constructor, and never changes.
 *
 * Nodes are names, or dicts {"name", "weight"?, field: value...} whose other
 * members go to ringsim_placement_set_node as text: str as it is, int,
 * float and bool as the command line writes them ("2", "2.5", "true"),
 * None as "" (clears), a list joined with commas, a pair within a list as
 * "a-b" (slot ranges: [[0, 5460]]) or, for "location", as "type=name"
 * (API.md's [["dc", "dc1"], ["rack", "r1"]]), and a dict for "location" as
 * "type=name,...".  Parameters likewise ({"table_size": 251, "replicas": 3}).
 *
 * Keys are str (their UTF-8) or bytes.  Names come back as str: each
 * address the library returns (names live as long as the placement) is made
 * a str once and kept in a table keyed by that address.  lookup_many and
 * moves take a snapshot of the keys (a tuple) and their bytes while holding
 * the GIL, then release it for the loop of lookups: other Python threads
 * run meanwhile, and the library's lookups are safe on many threads.
 *
 * No mutable globals: the exception type and the Placement type live in
 * the module's state (multi-phase initialisation, PEP 489).
 *
 * Cost: lookup_many of n keys is n library lookups plus n list entries;
 * 24 bytes of scratch a key.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

#include <ringsim/ringsim.h>

#include "algorithms.h" /* algorithm_names[], generated from the catalogue */

typedef struct modstate {
    PyObject *error; /* ringsim.Error, a ValueError with .code */
    PyTypeObject *placement;
} modstate;

typedef struct {
    PyObject_HEAD ringsim_placement *p;
    PyObject *algorithm; /* str */
    Py_ssize_t nnodes;
    /* The names seen: address -> str, open addressing, cap a power of 2. */
    const char **nk;
    PyObject **nv;
    size_t ncap, nused;
} Placement;

/* ---- errors ---- */

/* Raise the library's code rc, the message made by PyUnicode_FromFormat
 * (a short account of the call, then the code in words). */
static void raise_fmt(modstate *st, int rc, const char *fmt, ...)
{
    if (rc == RINGSIM_ENOMEM) {
        PyErr_NoMemory();
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    PyObject *exc = msg ? PyObject_CallOneArg(st->error, msg) : NULL;
    PyObject *code = exc ? PyLong_FromLong(rc) : NULL;
    if (code && PyObject_SetAttrString(exc, "code", code) == 0)
        PyErr_SetObject(st->error, exc);
    Py_XDECREF(code);
    Py_XDECREF(exc);
    Py_XDECREF(msg);
}

/* ---- text ---- */

/* The UTF-8 of a str, refused when it holds NUL (C would cut it there). */
static const char *c_text(PyObject *o, const char *what)
{
    Py_ssize_t len;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &len) : NULL;
    if (!PyUnicode_Check(o))
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(o)->tp_name);
    else if (s && (size_t)len != strlen(s)) {
        PyErr_Format(PyExc_ValueError, "%s must not hold NUL", what);
        s = NULL;
    }
    return s;
}

/* A key's bytes: a str's UTF-8 (cached in the str) or a bytes' own. */
static int key_bytes(PyObject *o, const char **s, Py_ssize_t *len)
{
    if (PyUnicode_Check(o)) {
        *s = PyUnicode_AsUTF8AndSize(o, len);
        return *s ? 0 : -1;
    }
    if (PyBytes_Check(o)) {
        *s = PyBytes_AS_STRING(o);
        *len = PyBytes_GET_SIZE(o);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a key is a str or bytes, not %.100s", Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *to_text(PyObject *v, const char *field);

/* The items of a list, tuple or dict joined with ",": a pair as a-b, or
 * type=name for the location. */
static PyObject *join_text(PyObject *v, const char *field)
{
    const char *pair = strcmp(field, "location") ? "-" : "=";
    PyObject *parts = PyList_New(0), *items = NULL, *out = NULL;
    if (!parts)
        return NULL;
    items = PyDict_Check(v) ? PyDict_Items(v) : PySequence_Fast(v, "a list");
    if (!items)
        goto fail_parts;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(items, i), *t;
        if ((PyTuple_Check(it) || PyList_Check(it)) && PySequence_Size(it) == 2) {
            PyObject *a = PySequence_GetItem(it, 0), *b = PySequence_GetItem(it, 1);
            PyObject *ta = a ? to_text(a, field) : NULL, *tb = b ? to_text(b, field) : NULL;
            t = ta && tb ? PyUnicode_FromFormat("%U%s%U", ta, pair, tb) : NULL;
            Py_XDECREF(a);
            Py_XDECREF(b);
            Py_XDECREF(ta);
            Py_XDECREF(tb);
        } else {
            t = to_text(it, field);
        }
        if (!t || PyList_Append(parts, t) < 0) {
            Py_XDECREF(t);
            goto fail_items;
        }
        Py_DECREF(t);
    }
    {
        PyObject *comma = PyUnicode_FromString(",");
        out = comma ? PyUnicode_Join(comma, parts) : NULL;
        Py_XDECREF(comma);
    }
fail_items:
    Py_DECREF(items);
fail_parts:
    Py_DECREF(parts);
    return out;
}

/* A field's or parameter's value as the text the library reads. */
static PyObject *to_text(PyObject *v, const char *field)
{
    if (PyUnicode_Check(v))
        return Py_NewRef(v);
    if (v == Py_None)
        return PyUnicode_FromString("");
    if (PyBool_Check(v))
        return PyUnicode_FromString(v == Py_True ? "true" : "false");
    if (PyLong_Check(v))
        return PyObject_Str(v);
    if (PyFloat_Check(v))
        return PyObject_Repr(v);
    if (PyList_Check(v) || PyTuple_Check(v) || PyDict_Check(v))
        return join_text(v, field);
    PyErr_Format(PyExc_TypeError, "%s: a value is a str, number, bool, list or dict, not %.100s",
                 field, Py_TYPE(v)->tp_name);
    return NULL;
}

/* ---- names ---- */

static size_t slot_of(const char *s, size_t cap)
{
    return (size_t)(((uintptr_t)s >> 3) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

/* The str of a name the library returned (None for NULL): a new reference. */
static PyObject *name_obj(Placement *self, const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    if (self->ncap) {
        for (size_t i = slot_of(s, self->ncap);; i = (i + 1) & (self->ncap - 1)) {
            if (self->nk[i] == s)
                return Py_NewRef(self->nv[i]);
            if (!self->nk[i])
                break;
        }
    }
    if (2 * (self->nused + 1) > self->ncap) { /* grow: load at most one half */
        size_t cap = self->ncap ? 2 * self->ncap : 64;
        const char **nk = PyMem_Calloc(cap, sizeof *nk);
        PyObject **nv = PyMem_Calloc(cap, sizeof *nv);
        if (!nk || !nv) {
            PyMem_Free(nk);
            PyMem_Free(nv);
            return PyErr_NoMemory();
        }
        for (size_t i = 0; i < self->ncap; i++) {
            if (!self->nk[i])
                continue;
            size_t j = slot_of(self->nk[i], cap);
            while (nk[j])
                j = (j + 1) & (cap - 1);
            nk[j] = self->nk[i];
            nv[j] = self->nv[i];
        }
        PyMem_Free(self->nk);
        PyMem_Free(self->nv);
        self->nk = nk;
        self->nv = nv;
        self->ncap = cap;
    }
    PyObject *o = PyUnicode_FromString(s);
    if (!o)
        return NULL;
    size_t i = slot_of(s, self->ncap);
    while (self->nk[i])
        i = (i + 1) & (self->ncap - 1);
    self->nk[i] = s;
    self->nv[i] = Py_NewRef(o);
    self->nused++;
    return o;
}

/* ---- Placement ---- */

static int set_params(Placement *self, modstate *st, PyObject *params)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    if (!PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "params must be a dict");
        return -1;
    }
    while (PyDict_Next(params, &pos, &k, &v)) {
        const char *name = c_text(k, "a parameter's name");
        PyObject *t = name ? to_text(v, name) : NULL;
        const char *value = t ? c_text(t, name) : NULL;
        int rc = value ? ringsim_placement_set_param(self->p, name, value) : 0;
        if (rc)
            raise_fmt(st, rc, "parameter %s=%s: %s (see `ringsim algorithms`)", name, value,
                      ringsim_strerror(rc));
        Py_XDECREF(t);
        if (!value || rc)
            return -1;
    }
    return 0;
}

static int add_node(Placement *self, modstate *st, PyObject *node)
{
    PyObject *nm = node, *w = NULL, *k, *v;
    if (PyDict_Check(node)) {
        nm = PyDict_GetItemString(node, "name");
        w = PyDict_GetItemString(node, "weight");
        if (!nm) {
            PyErr_SetString(PyExc_ValueError, "a node dict needs a \"name\"");
            return -1;
        }
    } else if (!PyUnicode_Check(node)) {
        PyErr_Format(PyExc_TypeError, "a node is a name (str) or a dict, not %.100s",
                     Py_TYPE(node)->tp_name);
        return -1;
    }
    const char *name = c_text(nm, "a node's name");
    double weight = w ? PyFloat_AsDouble(w) : 1.0;
    if (!name || (w && weight == -1.0 && PyErr_Occurred()))
        return -1;
    int rc = ringsim_placement_add_node(self->p, name, weight);
    if (rc) {
        char wt[32];
        snprintf(wt, sizeof wt, "%g", weight);
        raise_fmt(st, rc, "node \"%s\" (weight %s): %s", name, wt, ringsim_strerror(rc));
        return -1;
    }
    self->nnodes++;
    Py_ssize_t pos = 0;
    while (PyDict_Check(node) && PyDict_Next(node, &pos, &k, &v)) {
        const char *field = c_text(k, "a node's field");
        if (!field)
            return -1;
        if (!strcmp(field, "name") || !strcmp(field, "weight"))
            continue;
        PyObject *t = to_text(v, field);
        const char *value = t ? c_text(t, field) : NULL;
        rc = value ? ringsim_placement_set_node(self->p, name, field, value) : 0;
        if (rc)
            raise_fmt(st, rc, "node \"%s\": %s=%s: %s", name, field, value, ringsim_strerror(rc));
        Py_XDECREF(t);
        if (!value || rc)
            return -1;
    }
    return 0;
}

static void placement_dealloc(Placement *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    ringsim_placement_free(self->p);
    for (size_t i = 0; i < self->ncap; i++)
        Py_XDECREF(self->nv[i]);
    PyMem_Free(self->nk);
    PyMem_Free(self->nv);
    Py_XDECREF(self->algorithm);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *placement_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"algorithm", "nodes", "params", NULL};
    modstate *st = PyType_GetModuleState(type);
    PyObject *algorithm, *nodes, *params = NULL;
    if (!st || !PyArg_ParseTupleAndKeywords(args, kw, "UO|O:Placement", kwlist, &algorithm, &nodes,
                                            &params))
        return NULL;
    const char *alg = c_text(algorithm, "algorithm");
    if (!alg)
        return NULL;
    Placement *self = (Placement *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->algorithm = Py_NewRef(algorithm);
    int rc = ringsim_placement_new(&self->p, alg);
    if (rc) {
        raise_fmt(st, rc, "algorithm \"%s\": %s (ringsim.algorithms() names them)", alg,
                  ringsim_strerror(rc));
        goto fail_self;
    }
    if (params && params != Py_None && set_params(self, st, params) < 0)
        goto fail_self;
    PyObject *seq = PySequence_Fast(nodes, "nodes must be a list of names or dicts");
    if (!seq)
        goto fail_self;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++)
        if (add_node(self, st, PySequence_Fast_GET_ITEM(seq, i)) < 0) {
            Py_DECREF(seq);
            goto fail_self;
        }
    Py_DECREF(seq);
    if ((rc = ringsim_placement_build(self->p))) {
        raise_fmt(st, rc,
                  "%s refuses this placement (%zd nodes, params %R): %s -- a parameter out of "
                  "its rules (a table_size that is not prime...), weights it does not honour, "
                  "tokens or slots it does not take, or too many points; `ringsim algorithms` "
                  "says each algorithm's rules",
                  alg, self->nnodes, params ? params : Py_None, ringsim_strerror(rc));
        goto fail_self;
    }
    return (PyObject *)self;
fail_self:
    Py_DECREF(self);
    return NULL;
}

static PyObject *placement_repr(Placement *self)
{
    return PyUnicode_FromFormat("<ringsim.Placement %R, %zd nodes>", self->algorithm, self->nnodes);
}

/* One key's library call, its error raised. */
typedef int (*one_fn)(const ringsim_placement *, const char *, size_t, const char **);

static PyObject *one(Placement *self, PyObject *key, one_fn fn)
{
    const char *s, *name = NULL;
    Py_ssize_t len;
    if (key_bytes(key, &s, &len) < 0)
        return NULL;
    int rc = fn(self->p, s, (size_t)len, &name);
    if (rc) {
        raise_fmt(PyType_GetModuleState(Py_TYPE(self)), rc,
                  "key %R: %s (a key is 1 to 255 bytes of UTF-8 without control characters)", key,
                  ringsim_strerror(rc));
        return NULL;
    }
    return name_obj(self, name);
}

static PyObject *placement_lookup(Placement *self, PyObject *key)
{
    return one(self, key, ringsim_lookup);
}

static PyObject *placement_served_by(Placement *self, PyObject *key)
{
    return one(self, key, ringsim_served_by);
}

static PyObject *placement_replicas(Placement *self, PyObject *key)
{
    const char *s, *names[RINGSIM_MAX_REPLICAS];
    Py_ssize_t len;
    size_t n = 0;
    if (key_bytes(key, &s, &len) < 0)
        return NULL;
    int rc = ringsim_replicas(self->p, s, (size_t)len, names, RINGSIM_MAX_REPLICAS, &n);
    if (rc) {
        raise_fmt(PyType_GetModuleState(Py_TYPE(self)), rc, "key %R: %s", key, ringsim_strerror(rc));
        return NULL;
    }
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *o = name_obj(self, names[i]);
        if (!o) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, o);
    }
    return out;
}

/* The keys of an iterable as a tuple (a snapshot no other thread can
 * change while the GIL is released) and their bytes into (*s, *len)[n]. */
typedef struct keyset {
    PyObject *tuple;
    const char **s;
    size_t *len;
    Py_ssize_t n;
} keyset;

static void keyset_free(keyset *k)
{
    PyMem_Free(k->s);
    PyMem_Free(k->len);
    Py_XDECREF(k->tuple);
}

static int keyset_make(keyset *k, PyObject *keys)
{
    memset(k, 0, sizeof *k);
    if (!(k->tuple = PySequence_Tuple(keys)))
        return -1;
    k->n = PyTuple_GET_SIZE(k->tuple);
    k->s = PyMem_Malloc(((size_t)k->n + 1) * sizeof *k->s);
    k->len = PyMem_Malloc(((size_t)k->n + 1) * sizeof *k->len);
    if (!k->s || !k->len) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k->n; i++) {
        Py_ssize_t l;
        if (key_bytes(PyTuple_GET_ITEM(k->tuple, i), &k->s[i], &l) < 0)
            return -1;
        k->len[i] = (size_t)l;
    }
    return 0;
}

/* Owners of every key into own[n], without the GIL; the index of the
 * first key refused (its code into *rc), or -1. */
static Py_ssize_t owners(const ringsim_placement *p, const keyset *k, const char **own, int *rc)
{
    Py_ssize_t bad = -1;
    PyThreadState *ts = PyEval_SaveThread(); /* the GIL released */
    for (Py_ssize_t i = 0; i < k->n; i++)
        if ((*rc = ringsim_lookup(p, k->s[i], k->len[i], &own[i]))) {
            bad = i;
            break;
        }
    PyEval_RestoreThread(ts);
    return bad;
}

static PyObject *placement_lookup_many(Placement *self, PyObject *keys)
{
    keyset k;
    PyObject *out = NULL;
    const char **own = NULL;
    int rc = 0;
    if (keyset_make(&k, keys) < 0)
        goto fail_keys;
    if (!(own = PyMem_Malloc(((size_t)k.n + 1) * sizeof *own))) {
        PyErr_NoMemory();
        goto fail_keys;
    }
    Py_ssize_t bad = owners(self->p, &k, own, &rc);
    if (bad >= 0) {
        raise_fmt(PyType_GetModuleState(Py_TYPE(self)), rc, "key %zd, %R: %s", bad,
                  PyTuple_GET_ITEM(k.tuple, bad), ringsim_strerror(rc));
        goto fail_own;
    }
    if (!(out = PyList_New(k.n)))
        goto fail_own;
    for (Py_ssize_t i = 0; i < k.n; i++) {
        PyObject *o = name_obj(self, own[i]);
        if (!o) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, o);
    }
fail_own:
    PyMem_Free(own);
fail_keys:
    keyset_free(&k);
    return out;
}

/* replay(keys): a request log replayed, its keys read by the caller (the
 * library reads no file): each key of the iterable is one request, sent to
 * the node that serves it (ringsim_served_by, node states applied).
 * Streams: nothing of the iterable is kept.  Answers {"requests",
 * "unserved", "nodes": {name: requests}} -- as `ringsim trace` counts its
 * nodes' requests and its unserved. */
static PyObject *placement_replay(Placement *self, PyObject *keys)
{
    modstate *st = PyType_GetModuleState(Py_TYPE(self));
    PyObject *it = PyObject_GetIter(keys), *counts = NULL, *item, *out = NULL;
    if (!it)
        return NULL;
    if (!(counts = PyDict_New()))
        goto done;
    long long requests = 0, unserved = 0;
    while ((item = PyIter_Next(it))) {
        const char *s, *node = NULL;
        Py_ssize_t len;
        if (key_bytes(item, &s, &len) < 0) {
            Py_DECREF(item);
            goto done;
        }
        int rc = ringsim_served_by(self->p, s, (size_t)len, &node);
        if (rc)
            raise_fmt(st, rc, "request %lld, %R: %s", requests, item, ringsim_strerror(rc));
        Py_DECREF(item);
        if (rc)
            goto done;
        requests++;
        if (!node) {
            unserved++;
            continue;
        }
        PyObject *name = name_obj(self, node);
        if (!name)
            goto done;
        PyObject *c = PyDict_GetItemWithError(counts, name);
        long long n = c ? PyLong_AsLongLong(c) + 1 : 1;
        PyObject *v = (c || !PyErr_Occurred()) ? PyLong_FromLongLong(n) : NULL;
        int bad = !v || PyDict_SetItem(counts, name, v) < 0;
        Py_XDECREF(v);
        Py_DECREF(name);
        if (bad)
            goto done;
    }
    if (PyErr_Occurred())
        goto done;
    out = Py_BuildValue("{s:L, s:L, s:O}", "requests", requests, "unserved", unserved, "nodes",
                        counts);
done:
    Py_XDECREF(counts);
    Py_DECREF(it);
    return out;
}

static PyObject *placement_moves(Placement *self, PyObject *args)
{
    PyObject *other, *keys, *out = NULL;
    modstate *st = PyType_GetModuleState(Py_TYPE(self));
    if (!PyArg_ParseTuple(args, "O!O:moves", st->placement, &other, &keys))
        return NULL;
    Placement *q = (Placement *)other;
    keyset k;
    const char **a = NULL, **b = NULL;
    int rc = 0;
    if (keyset_make(&k, keys) < 0)
        goto fail_keys;
    a = PyMem_Malloc(((size_t)k.n + 1) * sizeof *a);
    b = PyMem_Malloc(((size_t)k.n + 1) * sizeof *b);
    if (!a || !b) {
        PyErr_NoMemory();
        goto fail_owners;
    }
    Py_ssize_t bad = owners(self->p, &k, a, &rc);
    if (bad < 0)
        bad = owners(q->p, &k, b, &rc);
    if (bad >= 0) {
        raise_fmt(st, rc, "key %zd, %R: %s", bad, PyTuple_GET_ITEM(k.tuple, bad),
                  ringsim_strerror(rc));
        goto fail_owners;
    }
    if (!(out = PyList_New(0)))
        goto fail_owners;
    for (Py_ssize_t i = 0; i < k.n; i++) {
        if (a[i] == b[i] || (a[i] && b[i] && !strcmp(a[i], b[i])))
            continue;
        PyObject *from = name_obj(self, a[i]), *to = from ? name_obj(q, b[i]) : NULL;
        PyObject *t = to ? PyTuple_Pack(3, PyTuple_GET_ITEM(k.tuple, i), from, to) : NULL;
        Py_XDECREF(from);
        Py_XDECREF(to);
        if (!t || PyList_Append(out, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(t);
    }
fail_owners:
    PyMem_Free(a);
    PyMem_Free(b);
fail_keys:
    keyset_free(&k);
    return out;
}

static PyMethodDef placement_methods[] = {
    {"lookup", (PyCFunction)placement_lookup, METH_O,
     "lookup(key) -> the owner's name, or None without nodes (ringsim_lookup)."},
    {"served_by", (PyCFunction)placement_served_by, METH_O,
     "served_by(key) -> who serves key with the nodes' states applied, or None "
     "(ringsim_served_by)."},
    {"replicas", (PyCFunction)placement_replicas, METH_O,
     "replicas(key) -> the preference list, owner first (ringsim_replicas)."},
    {"lookup_many", (PyCFunction)placement_lookup_many, METH_O,
     "lookup_many(keys) -> [owner, ...] for an iterable of keys, in one call; the GIL is "
     "released while the library looks them up."},
    {"replay", (PyCFunction)placement_replay, METH_O,
     "replay(keys) -> {\"requests\", \"unserved\", \"nodes\": {name: requests}}: each key of "
     "the iterable (a request log's keys, read by the caller) is one request to the node that "
     "serves it; streams, keeps nothing of the iterable."},
    {"moves", (PyCFunction)placement_moves, METH_VARARGS,
     "moves(other, keys) -> [(key, owner here, owner in other), ...] for the keys whose "
     "owner differs between this placement and other (a Placement), in the keys' order; "
     "an owner is None where a placement has no node."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef placement_members[] = {
    {"algorithm", T_OBJECT_EX, offsetof(Placement, algorithm), READONLY, "the algorithm's name"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot placement_slots[] = {
    {Py_tp_new, placement_new},
    {Py_tp_dealloc, placement_dealloc},
    {Py_tp_repr, placement_repr},
    {Py_tp_methods, placement_methods},
    {Py_tp_members, placement_members},
    {Py_tp_doc, "Placement(algorithm, nodes, params={}): a placement built once, read-only.\n\n"
                "algorithm: a name of ringsim.algorithms().  nodes: names, or dicts {\"name\", "
                "\"weight\"?, and the fields of ringsim_placement_set_node: \"tokens\", \"id\", "
                "\"state\", \"backup\", \"replicas\", \"slots\", \"location\"}, in join order.  "
                "params: the algorithm's parameters and \"replicas\".  See ringsim(3)."},
    {0, NULL}};

static PyType_Spec placement_spec = {
    .name = "ringsim.Placement",
    .basicsize = sizeof(Placement),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = placement_slots,
};

/* ---- the module ---- */

static PyObject *algorithms(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && algorithm_names[i]; i++) {
        PyObject *s = PyUnicode_FromString(algorithm_names[i]);
        if (!s || PyList_Append(out, s) < 0)
            Py_CLEAR(out);
        Py_XDECREF(s);
    }
    return out;
}

static PyMethodDef module_methods[] = {
    {"algorithms", algorithms, METH_NOARGS,
     "algorithms() -> the names of the placement algorithms, as `ringsim algorithms` lists them."},
    {NULL, NULL, 0, NULL}};

static int module_exec(PyObject *mod)
{
    modstate *st = PyModule_GetState(mod);
    st->error = PyErr_NewExceptionWithDoc(
        "ringsim.Error", "A refusal of the library: .code is its RINGSIM_E code (ringsim_strerror).",
        PyExc_ValueError, NULL);
    if (!st->error || PyModule_AddObjectRef(mod, "Error", st->error) < 0)
        return -1;
    st->placement = (PyTypeObject *)PyType_FromModuleAndSpec(mod, &placement_spec, NULL);
    if (!st->placement || PyModule_AddType(mod, st->placement) < 0)
        return -1;
    return PyModule_AddStringConstant(mod, "__version__", ringsim_version());
}

static int module_traverse(PyObject *mod, visitproc visit, void *arg)
{
    modstate *st = PyModule_GetState(mod);
    Py_VISIT(st->error);
    Py_VISIT(st->placement);
    return 0;
}

static int module_clear(PyObject *mod)
{
    modstate *st = PyModule_GetState(mod);
    Py_CLEAR(st->error);
    Py_CLEAR(st->placement);
    return 0;
}

static void module_free(void *mod) { module_clear(mod); }

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec}, {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ringsim",
    .m_doc = "ringsim's placement algorithms (libringsim): where keys go under ketama, nginx, "
             "Envoy, Maglev, Cassandra, Redis, HAProxy, twemproxy and the textbook schemes, "
             "as `ringsim lookup` answers.",
    .m_size = sizeof(modstate),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit_ringsim(void) { return PyModuleDef_Init(&module_def); }
