/*
 * test_lib.c - libringsim gives `ringsim lookup`'s answers (API.md
 * "Version 4: the placement library").
 *
 *   test_lib PATH/TO/ringsim          RINGSIM_SEED=N reruns one seed,
 *                                     RINGSIM_LIB_ROUNDS=R more rounds (4)
 *
 * First the interface itself, through <ringsim/ringsim.h> alone as any
 * program sees it: each refusal's code, calls out of order, NULL, replicas
 * that do not fit, the version (the CLI's), the codes' words.
 *
 * Then, every round, for every algorithm `ringsim algorithms --json` lists:
 * random parameters (each named choice in turn across rounds: ketama's
 * modes, nginx's consistent, HAProxy's hash types...), replicas where the
 * algorithm has them, 0 to 9 nodes with random names, weights by the
 * algorithm's rule, some down, HAProxy ids and backups; and random keys
 * (UTF-8, punctuation, Redis hash tags).  A fresh database gets the same
 * topology through the command line -- the nodes added, then `config
 * --algorithm`, as a switch builds the layout afresh, as the library does
 * -- and its answers (`key ls --json` for every key, `lookup --json` for
 * some) must be the library's: owner, served_by and replicas, key by key.
 * When the command line refuses the configuration or a node, the library's
 * build must refuse it too.  Beside them: Cassandra with explicit tokens,
 * HAProxy with servers of weight 0 (both configured first, then the nodes
 * added), and a Redis cluster imported from CLUSTER NODES text (slot
 * ranges, replicas, failed masters) given to the library as slots,
 * replicas and states.
 *
 * Prints its seed; a mismatch prints the case.  Ends with "N passed, N
 * failed" (one check a key and answer, or a refusal).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ringsim/ringsim.h>

extern char **environ;

#define MAX_ARGS 256
#define MAX_NODES 10
#define NKEYS 60
#define NLOOKUPS 4
#define MAX_OUT (64u << 20)
#define MAX_FAIL_SHOWN 20

static const char *bin;
static char tmpdir[64];
static uint64_t rng_state;
static int passed, failed;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < MAX_FAIL_SHOWN) {
        va_list ap;
        va_start(ap, fmt);
        fputs("FAIL: ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        va_end(ap);
    }
}

/* ---- running the command line ---- */

typedef struct args {
    char *v[MAX_ARGS + 1];
    int n;
} args;

static void arg(args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(args *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (a->n >= MAX_ARGS || vasprintf(&a->v[a->n], fmt, ap) < 0) {
        fprintf(stderr, "test_lib: too many arguments\n");
        exit(1);
    }
    va_end(ap);
    a->v[++a->n] = NULL;
}

static void args_free(args *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

/* Run the arguments (bin first), stdout into *out (malloc'd, NUL-ended);
 * the exit status, -1 when it could not run. */
static int run(args *a, char **out)
{
    char op[128], ep[128];
    snprintf(op, sizeof op, "%s/out", tmpdir);
    snprintf(ep, sizeof ep, "%s/err", tmpdir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, op, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int st = -1, rc = posix_spawn(&pid, a->v[0], &fa, NULL, a->v, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == 0 && waitpid(pid, &st, 0) == pid)
        st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    else
        st = -1;
    if (out) {
        FILE *f = fopen(op, "rb");
        size_t n = 0;
        *out = malloc(MAX_OUT + 1);
        if (f && *out)
            n = fread(*out, 1, MAX_OUT, f);
        if (*out)
            (*out)[n] = '\0';
        if (f)
            fclose(f);
    }
    return st;
}

/* The start of a command on database db: bin --db DB --json. */
static void cli(args *a, int db)
{
    a->n = 0;
    arg(a, "%s", bin);
    arg(a, "--db");
    arg(a, "%s/db-%d", tmpdir, db);
    arg(a, "--json");
}

static json_t *run_json(args *a)
{
    char *out = NULL;
    int st = run(a, &out);
    json_t *j = st == 0 && out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    args_free(a);
    return j;
}

static int run_status(args *a)
{
    int st = run(a, NULL);
    args_free(a);
    return st;
}

/* ---- a case ---- */

typedef struct node {
    char name[64];
    double weight;
    bool down, backup;
    int id; /* HAProxy's, 0: none */
    char tokens[256];
    char slots[2048];
    char replicas[128];
    char location[96]; /* "dc=…,rack=…,host=…", "" for none */
} node;

typedef struct tcase {
    char alg[32];
    char pname[8][32], pvalue[8][32];
    int np;
    int replicas; /* 0: not given */
    node nodes[MAX_NODES];
    int n;
    char keys[NKEYS][96];
    int nkeys;
    bool config_first;       /* the CLI configures, then adds the nodes */
    const char *import_text; /* Redis: the CLUSTER NODES text the CLI imports */
} tcase;

static void describe(const tcase *c)
{
    printf("    | seed case: %s", c->alg);
    for (int i = 0; i < c->np; i++)
        printf(" %s=%s", c->pname[i], c->pvalue[i]);
    if (c->replicas)
        printf(" replicas=%d", c->replicas);
    printf("\n");
    for (int i = 0; i < c->n; i++)
        printf("    |   node %s weight %g%s%s id %d tokens [%s] slots [%.60s] replicas [%s]\n",
               c->nodes[i].name, c->nodes[i].weight, c->nodes[i].down ? " down" : "",
               c->nodes[i].backup ? " backup" : "", c->nodes[i].id, c->nodes[i].tokens,
               c->nodes[i].slots, c->nodes[i].replicas);
}

static const char *const exotic[] = {"ü", "ノ", "🙂", "é", "中", "Ω"};

static void random_key(char *out, size_t cap)
{
    static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789:_-./ #";
    size_t len = 1 + below(20), o = 0;
    if (below(8) == 0)
        o += (size_t)snprintf(out, cap, "{user%zu}:", below(50)); /* a Redis hash tag */
    for (size_t i = 0; i < len && o + 8 < cap; i++) {
        if (below(10) == 0) {
            const char *e = exotic[below(sizeof exotic / sizeof *exotic)];
            memcpy(out + o, e, strlen(e));
            o += strlen(e);
        } else {
            out[o++] = alpha[below(sizeof alpha - 1)];
        }
    }
    out[o] = '\0';
}

static void random_keys(tcase *c)
{
    c->nkeys = 0;
    while (c->nkeys < NKEYS) {
        char k[96];
        random_key(k, sizeof k);
        bool dup = false;
        for (int i = 0; i < c->nkeys && !dup; i++)
            dup = !strcmp(c->keys[i], k);
        if (!dup)
            strcpy(c->keys[c->nkeys++], k);
    }
}

static void random_name(node *x, int i)
{
    if (below(6) == 0)
        snprintf(x->name, sizeof x->name, "cache-%s-%d:%d", exotic[below(6)], i,
                 11211 + (int)below(3));
    else
        snprintf(x->name, sizeof x->name, "10.%d.%d.%d:%d", i, (int)below(256), (int)below(256),
                 below(2) ? 11211 : 6379 + (int)below(5));
}

/* ---- the library's side ---- */

typedef struct answers {
    const char *owner[NKEYS], *served[NKEYS];
    const char *reps[NKEYS][RINGSIM_MAX_REPLICAS];
    size_t nreps[NKEYS];
} answers;

/* The library's placement for the case, or NULL with *rc its refusal. */
static ringsim_placement *lib_build(const tcase *c, int *rc)
{
    ringsim_placement *p = NULL;
    char buf[32];
    if ((*rc = ringsim_placement_new(&p, c->alg)))
        return NULL;
    for (int i = 0; i < c->np && !*rc; i++)
        *rc = ringsim_placement_set_param(p, c->pname[i], c->pvalue[i]);
    if (!*rc && c->replicas) {
        snprintf(buf, sizeof buf, "%d", c->replicas);
        *rc = ringsim_placement_set_param(p, "replicas", buf);
    }
    for (int i = 0; i < c->n && !*rc; i++) {
        const node *x = &c->nodes[i];
        *rc = ringsim_placement_add_node(p, x->name, x->weight);
        if (!*rc && x->down)
            *rc = ringsim_placement_set_node(p, x->name, "state", "down");
        if (!*rc && x->backup)
            *rc = ringsim_placement_set_node(p, x->name, "backup", "true");
        if (!*rc && x->id) {
            snprintf(buf, sizeof buf, "%d", x->id);
            *rc = ringsim_placement_set_node(p, x->name, "id", buf);
        }
        if (!*rc && x->tokens[0])
            *rc = ringsim_placement_set_node(p, x->name, "tokens", x->tokens);
        if (!*rc && x->slots[0])
            *rc = ringsim_placement_set_node(p, x->name, "slots", x->slots);
        if (!*rc && x->replicas[0])
            *rc = ringsim_placement_set_node(p, x->name, "replicas", x->replicas);
        if (!*rc && x->location[0])
            *rc = ringsim_placement_set_node(p, x->name, "location", x->location);
    }
    if (!*rc)
        *rc = ringsim_placement_build(p);
    if (*rc) {
        ringsim_placement_free(p);
        return NULL;
    }
    return p;
}

static void lib_answer(const ringsim_placement *p, const tcase *c, answers *a)
{
    for (int k = 0; k < c->nkeys; k++) {
        const char *key = c->keys[k];
        size_t len = strlen(key);
        int rc = ringsim_lookup(p, key, len, &a->owner[k]);
        if (!rc)
            rc = ringsim_served_by(p, key, len, &a->served[k]);
        if (!rc)
            rc = ringsim_replicas(p, key, len, a->reps[k], RINGSIM_MAX_REPLICAS, &a->nreps[k]);
        check(rc == 0, "%s: the library refuses key \"%s\": %s", c->alg, key, ringsim_strerror(rc));
    }
}

/* ---- the command line's side ---- */

/* The CLI's topology for the case in database db: 0, or 1 when it refused
 * (config or a node), -1 when something else went wrong. */
static int cli_build(const tcase *c, int db)
{
    args a = {0};
    if (c->import_text) {
        char path[128];
        snprintf(path, sizeof path, "%s/nodes.txt", tmpdir);
        FILE *f = fopen(path, "w");
        if (!f || fputs(c->import_text, f) < 0 || fclose(f))
            return -1;
        cli(&a, db);
        arg(&a, "import");
        arg(&a, "%s", path);
        arg(&a, "--format");
        arg(&a, "redis-nodes");
        int st = run_status(&a);
        return st == 0 ? 0 : st == 1 ? 1 : -1;
    }
    for (int pass = 0; pass < 2; pass++) {
        bool config_now = (pass == 0) == c->config_first;
        if (config_now) {
            cli(&a, db);
            arg(&a, "config");
            arg(&a, "--algorithm");
            arg(&a, "%s", c->alg);
            for (int i = 0; i < c->np; i++) {
                arg(&a, "--param");
                arg(&a, "%s=%s", c->pname[i], c->pvalue[i]);
            }
            if (c->replicas) {
                arg(&a, "--replicas");
                arg(&a, "%d", c->replicas);
            }
            int st = run_status(&a);
            if (st)
                return st == 1 ? 1 : -1;
            continue;
        }
        for (int i = 0; i < c->n; i++) {
            const node *x = &c->nodes[i];
            cli(&a, db);
            arg(&a, "node");
            arg(&a, "add");
            arg(&a, "--weight");
            arg(&a, "%.17g", x->weight);
            if (x->down)
                arg(&a, "--down");
            if (x->backup)
                arg(&a, "--backup");
            if (x->id) {
                arg(&a, "--id");
                arg(&a, "%d", x->id);
            }
            if (x->tokens[0]) {
                arg(&a, "--tokens");
                arg(&a, "%s", x->tokens);
            }
            if (x->location[0]) {
                arg(&a, "--location");
                arg(&a, "%s", x->location);
            }
            arg(&a, "--");
            arg(&a, "%s", x->name);
            int st = run_status(&a);
            if (st) /* refused: by the algorithm when configured first */
                return st == 1 && c->config_first ? 1 : -1;
        }
    }
    return 0;
}

static bool same_name(const char *lib, json_t *cli)
{
    return lib ? json_is_string(cli) && !strcmp(lib, json_string_value(cli)) : json_is_null(cli);
}

static bool same_list(const char *const *lib, size_t n, json_t *cli)
{
    if (!json_is_array(cli) || json_array_size(cli) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!same_name(lib[i], json_array_get(cli, i)))
            return false;
    return true;
}

static char *dump(json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    return s ? s : strdup("(none)");
}

static void compare_key(const tcase *c, const answers *a, int k, json_t *o, bool with_reps,
                        const char *how)
{
    json_t *node = json_object_get(o, "node"), *served = json_object_get(o, "served_by");
    json_t *reps = json_object_get(o, "replicas");
    bool ok = same_name(a->owner[k], node) && same_name(a->served[k], served);
    if (with_reps)
        ok = ok && same_list(a->reps[k], a->nreps[k], reps);
    else /* one replica: the library answers the owner alone (or none) */
        ok = ok && a->nreps[k] == (a->owner[k] ? 1u : 0u);
    char *jn = dump(node), *js = dump(served), *jr = dump(reps);
    check(ok, "%s: key \"%s\" (%s): library owner %s served_by %s replicas %zu [%s%s], CLI %s %s %s",
          c->alg, c->keys[k], how, a->owner[k] ? a->owner[k] : "null",
          a->served[k] ? a->served[k] : "null", a->nreps[k], a->nreps[k] ? a->reps[k][0] : "",
          a->nreps[k] > 1 ? ", ..." : "", jn, js, jr);
    if (!ok && failed <= MAX_FAIL_SHOWN)
        describe(c);
    free(jn);
    free(js);
    free(jr);
}

static void run_case(const tcase *c, int db)
{
    int rc = 0;
    ringsim_placement *p = lib_build(c, &rc);
    int cst = cli_build(c, db);
    if (cst < 0) {
        check(false, "%s: the command line failed to build the case", c->alg);
        describe(c);
        ringsim_placement_free(p);
        return;
    }
    check((p == NULL) == (cst == 1), "%s: the library %s (%s), the command line %s", c->alg,
          p ? "builds" : "refuses", p ? "ok" : ringsim_strerror(rc), cst ? "refuses" : "builds");
    if (!p || cst) {
        if ((p == NULL) != (cst == 1))
            describe(c);
        ringsim_placement_free(p);
        return;
    }
    answers *a = calloc(1, sizeof *a);
    if (!a)
        exit(1);
    lib_answer(p, c, a);
    int nrep = c->replicas ? c->replicas : 1;
    /* Every key stored (added after the topology: ringsim places it). */
    args ar = {0};
    cli(&ar, db);
    arg(&ar, "key");
    arg(&ar, "add");
    arg(&ar, "--");
    for (int k = 0; k < c->nkeys; k++)
        arg(&ar, "%s", c->keys[k]);
    check(run_status(&ar) == 0, "%s: key add", c->alg);
    cli(&ar, db);
    arg(&ar, "key");
    arg(&ar, "ls");
    json_t *ls = run_json(&ar), *o;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(ls, "keys"), i, o)
    {
        const char *key = json_string_value(json_object_get(o, "key"));
        for (int k = 0; key && k < c->nkeys; k++)
            if (!strcmp(c->keys[k], key)) {
                compare_key(c, a, k, o, nrep > 1, "key ls");
                seen++;
            }
    }
    check(seen == c->nkeys, "%s: key ls lists %d of the %d keys", c->alg, seen, c->nkeys);
    json_decref(ls);
    for (int l = 0; l < NLOOKUPS; l++) {
        int k = (int)below((size_t)c->nkeys);
        cli(&ar, db);
        arg(&ar, "lookup");
        arg(&ar, "--");
        arg(&ar, "%s", c->keys[k]);
        json_t *j = run_json(&ar);
        check(j != NULL, "%s: lookup %s answers", c->alg, c->keys[k]);
        if (j)
            compare_key(c, a, k, j, true, "lookup");
        json_decref(j);
    }
    free(a);
    ringsim_placement_free(p);
}

/* ---- the cases ---- */

static int pick(const char *name, int round, const char **out, char *buf, size_t cap)
{
    /* Values that keep a case small and quick, per parameter; others keep
     * their default (a new parameter then still runs, at its default). */
    static const struct {
        const char *name;
        const char *values[5];
    } sets[] = {
        {"points_per_node", {"1", "3", "40", "160"}},
        {"probes", {"21", "1", "2", "50"}},
        {"min_ring_size", {"16", "64", "1024"}},
        {"max_ring_size", {"1024", "4096"}},
        {"table_size", {"251", "1021", "65537"}},
        {"num_tokens", {"16", "1", "4"}},
        {"hash_balance_factor", {"0", "150"}},
        {"balance_factor", {"0", "125"}},
        {"panic_threshold", {"50", "0", "100", "80"}},
        {"allbackups", {"0", "1"}},
        {"consistent", {"1", "0"}},
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        if (strcmp(sets[i].name, name) != 0)
            continue;
        size_t n = 0;
        while (n < 5 && sets[i].values[n])
            n++;
        *out = sets[i].values[((size_t)round + below(2)) % n];
        return 1;
    }
    (void)buf;
    (void)cap;
    return 0;
}

static void params_of(tcase *c, json_t *alg, int round)
{
    json_t *q;
    size_t i;
    c->np = 0;
    json_array_foreach(json_object_get(alg, "params"), i, q)
    {
        const char *name = json_string_value(json_object_get(q, "name")), *v = NULL;
        json_t *vals = json_object_get(q, "values");
        char buf[32];
        if (!name || c->np >= 8)
            continue;
        if (json_array_size(vals)) /* a named choice: each in turn across rounds */
            v = json_string_value(
                json_array_get(vals, ((size_t)round + below(3)) % json_array_size(vals)));
        else if (!pick(name, round, &v, buf, sizeof buf))
            continue;
        if (!v)
            continue;
        snprintf(c->pname[c->np], sizeof c->pname[0], "%s", name);
        snprintf(c->pvalue[c->np], sizeof c->pvalue[0], "%s", v);
        c->np++;
    }
}

static void random_case(tcase *c, json_t *alg, int round)
{
    memset(c, 0, sizeof *c);
    snprintf(c->alg, sizeof c->alg, "%s", json_string_value(json_object_get(alg, "name")));
    params_of(c, alg, round);
    const char *wr = json_string_value(json_object_get(alg, "weight_rule"));
    const char *rr = json_string_value(json_object_get(alg, "replica_rule"));
    if (rr && strcmp(rr, "no") != 0 && below(2))
        c->replicas = 1 + (int)below(4);
    c->n = below(12) == 0 ? 0 : 1 + (int)below(MAX_NODES - 1);
    bool haproxy = !strcmp(c->alg, "haproxy");
    for (int i = 0; i < c->n; i++) {
        node *x = &c->nodes[i];
        random_name(x, i);
        static const double any[] = {1, 0.5, 2, 3.25, 1, 7};
        static const double whole[] = {1, 2, 3, 1, 5, 1};
        x->weight = wr && !strcmp(wr, "any")     ? any[below(6)]
                    : wr && !strcmp(wr, "whole") ? whole[below(6)]
                                                 : 1;
        x->down = below(4) == 0;
        if (haproxy) {
            x->backup = below(5) == 0;
            x->id = below(3) == 0 ? 1 + i * 7 + (int)below(5) : 0;
        }
    }
    random_keys(c);
}

/* Cassandra with every node's tokens given (as initial_token): configured
 * first, then the nodes, as an operator adds them. */
static void cassandra_tokens_case(tcase *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->alg, "cassandra");
    c->config_first = true;
    c->replicas = 1 + (int)below(3);
    c->n = 1 + (int)below(MAX_NODES - 1);
    for (int i = 0; i < c->n; i++) {
        node *x = &c->nodes[i];
        random_name(x, i);
        x->weight = 1;
        x->down = below(4) == 0;
        size_t o = 0, nt = 1 + below(6);
        for (size_t t = 0; t < nt; t++)
            o += (size_t)snprintf(x->tokens + o, sizeof x->tokens - o, "%s%lld", t ? "," : "",
                                  (long long)rnd());
    }
    random_keys(c);
}

/* Nodes in failure domains (API.md v4): Cassandra's NetworkTopologyStrategy
 * over two datacenters, a walk with replica_domain=rack, and Ceph's CRUSH
 * over racks and hosts, in turn across rounds; some nodes down. */
static void located_case(tcase *c, int round)
{
    memset(c, 0, sizeof *c);
    int kind = round % 3;
    strcpy(c->alg, kind == 0 ? "cassandra" : kind == 1 ? "ring" : "ceph");
    c->config_first = true;
    c->n = 4 + (int)below(MAX_NODES - 4);
    if (kind == 0) {
        strcpy(c->pname[0], "strategy");
        strcpy(c->pvalue[0], "network_topology");
        strcpy(c->pname[1], "replication");
        int r1 = 1 + (int)below(3), r2 = 1 + (int)below(2);
        snprintf(c->pvalue[1], sizeof c->pvalue[1], "dc1:%d,dc2:%d", r1, r2);
        c->np = 2;
        c->replicas = r1 + r2; /* NetworkTopologyStrategy's replicas: the sum */
    } else if (kind == 1) {
        strcpy(c->pname[0], "replica_domain");
        strcpy(c->pname[1], "points_per_node");
        strcpy(c->pvalue[0], "rack");
        strcpy(c->pvalue[1], "8");
        c->np = 2;
        c->replicas = 1 + (int)below(3);
    } else {
        strcpy(c->pname[0], "pg_num");
        strcpy(c->pvalue[0], "64");
        strcpy(c->pname[1], "size");
        snprintf(c->pvalue[1], sizeof c->pvalue[1], "%d", 1 + (int)below(3));
        strcpy(c->pname[2], "failure_domain");
        strcpy(c->pvalue[2], below(2) ? "host" : "rack");
        c->np = 3;
    }
    for (int i = 0; i < c->n; i++) {
        node *x = &c->nodes[i];
        if (kind == 2)
            snprintf(x->name, sizeof x->name, "osd.%d", i);
        else
            random_name(x, i);
        static const double any[] = {1, 0.5, 2, 3.25, 1, 7};
        x->weight = kind == 0 ? 1 : any[below(6)];
        x->down = below(5) == 0;
        snprintf(x->location, sizeof x->location, "dc=dc%d,rack=r%d,host=h%d", 1 + (int)below(2),
                 (int)below(3), i / 2);
    }
    random_keys(c);
}

/* HAProxy with servers of weight 0 (they take no request) and backups. */
static void haproxy_zero_case(tcase *c, int round)
{
    memset(c, 0, sizeof *c);
    strcpy(c->alg, "haproxy");
    c->config_first = true;
    if (round % 2) {
        strcpy(c->pname[0], "hash_type");
        strcpy(c->pvalue[0], "map-based");
        c->np = 1;
    }
    c->n = 2 + (int)below(MAX_NODES - 2);
    for (int i = 0; i < c->n; i++) {
        node *x = &c->nodes[i];
        random_name(x, i);
        x->weight = (double)below(4);
        x->down = below(5) == 0;
        x->backup = below(4) == 0;
    }
    random_keys(c);
}

/* A Redis cluster as CLUSTER NODES says it: masters holding random slot
 * ranges (every slot once), replicas, some masters failed. */
static char *redis_case(tcase *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->alg, "redis");
    c->n = 1 + (int)below(6);
    char ids[MAX_NODES][41];
    /* Cut points: the slots in n runs, each given to a random master. */
    int cuts = c->n + (int)below(6);
    int at[16];
    at[0] = 0;
    for (int i = 1; i < cuts; i++)
        at[i] = at[i - 1] + 1 + (int)below((16384 - at[i - 1] - 1) / (size_t)(cuts - i + 1));
    at[cuts] = 16384;
    size_t cap = 1 << 16, o = 0;
    char *text = malloc(cap);
    if (!text)
        exit(1);
    for (int i = 0; i < c->n; i++) {
        node *x = &c->nodes[i];
        snprintf(x->name, sizeof x->name, "10.0.%d.%d:%d", i, (int)below(250) + 1, 6379 + i);
        for (int k = 0; k < 40; k++)
            ids[i][k] = "0123456789abcdef"[below(16)];
        ids[i][40] = '\0';
        x->weight = 1;
        x->down = below(4) == 0;
        if (below(2))
            snprintf(x->replicas, sizeof x->replicas, "10.1.%d.1:%d", i, 7000 + i);
    }
    for (int r = 0; r < cuts; r++) { /* run r goes to a master; each has one */
        node *x = &c->nodes[r < c->n ? r : (int)below((size_t)c->n)];
        size_t l = strlen(x->slots);
        if (at[r + 1] - 1 == at[r])
            snprintf(x->slots + l, sizeof x->slots - l, "%s%d", l ? "," : "", at[r]);
        else
            snprintf(x->slots + l, sizeof x->slots - l, "%s%d-%d", l ? "," : "", at[r],
                     at[r + 1] - 1);
    }
    for (int i = 0; i < c->n; i++) {
        const node *x = &c->nodes[i];
        char slots[2048];
        snprintf(slots, sizeof slots, "%s", x->slots);
        for (char *s = slots; *s; s++)
            *s = *s == ',' ? ' ' : *s;
        o += (size_t)snprintf(text + o, cap - o, "%s %s@%d master%s - 0 0 %d connected %s\n",
                              ids[i], x->name, 16379 + i, x->down ? ",fail" : "", i + 1, slots);
        if (x->replicas[0])
            o += (size_t)snprintf(text + o, cap - o, "%040d %s@1 slave %s 0 0 %d connected\n",
                                  i + 1, x->replicas, ids[i], i + 1);
    }
    c->import_text = text;
    random_keys(c);
    return text;
}

/* ---- the interface itself ---- */

static void interface_checks(void)
{
    ringsim_placement *p = (ringsim_placement *)&p, *q = NULL;
    const char *o = "x", *reps[2];
    size_t n = 99;
    check(ringsim_placement_new(&p, "no-such") == RINGSIM_EPARAM && p == NULL,
          "an unknown algorithm is RINGSIM_EPARAM and *p NULL");
    check(ringsim_placement_new(&p, NULL) == RINGSIM_EPARAM, "a NULL algorithm");
    check(ringsim_placement_new(NULL, "ring") == RINGSIM_EPARAM, "a NULL out");
    check(ringsim_placement_new(&p, "ring") == 0 && p, "ringsim_placement_new(ring)");
    check(ringsim_lookup(p, "k", 1, &o) == RINGSIM_EPARAM && o == NULL, "a lookup before build");
    check(ringsim_placement_add_node(p, "a", 1) == 0, "add a");
    check(ringsim_placement_add_node(p, "a", 2) == RINGSIM_ECONFLICT, "a twice: RINGSIM_ECONFLICT");
    check(ringsim_placement_add_node(p, "", 1) == RINGSIM_ENAME, "an empty name: RINGSIM_ENAME");
    check(ringsim_placement_add_node(p, "tab\there", 1) == RINGSIM_ENAME,
          "a control character: RINGSIM_ENAME");
    check(ringsim_placement_add_node(p, "\xe2\x80\x8b", 1) == RINGSIM_ENAME,
          "nothing visible (U+200B): RINGSIM_ENAME");
    check(ringsim_placement_add_node(p, "w", -1) == RINGSIM_EPARAM, "weight -1");
    check(ringsim_placement_add_node(p, "w", 1001) == RINGSIM_EPARAM, "weight 1001");
    check(ringsim_placement_set_node(p, "nobody", "state", "down") == RINGSIM_ENOTFOUND,
          "set_node on no node: RINGSIM_ENOTFOUND");
    check(ringsim_placement_set_node(p, "a", "state", "sleepy") == RINGSIM_EPARAM, "state sleepy");
    check(ringsim_placement_set_node(p, "a", "colour", "red") == RINGSIM_EPARAM, "field colour");
    check(ringsim_placement_set_node(p, "a", "slots", "0-10") == RINGSIM_EPARAM,
          "slots under ring (no slot map)");
    check(ringsim_placement_set_node(p, "a", "tokens", "1,+2") == RINGSIM_EPARAM, "token +2");
    check(ringsim_placement_set_node(p, "a", "id", "0") == RINGSIM_EPARAM, "id 0");
    check(ringsim_placement_set_node(p, "a", "location", "dc=1,dc=2") == RINGSIM_EPARAM,
          "a location type twice");
    check(ringsim_placement_set_node(p, "a", "location", "dc=dc1,rack=r1,host=h1") == 0,
          "a location");
    check(ringsim_placement_set_node(p, "a", "weight", "2.5") == 0, "weight 2.5");
    check(ringsim_placement_set_param(p, "table_size", "251") == RINGSIM_EPARAM,
          "a parameter ring does not take");
    check(ringsim_placement_set_param(p, "points_per_node", "0") == RINGSIM_EPARAM,
          "points_per_node 0");
    check(ringsim_placement_set_param(p, "points_per_node", "8") == 0, "points_per_node 8");
    check(ringsim_placement_set_param(p, "replicas", "17") == RINGSIM_EPARAM, "replicas 17");
    check(ringsim_placement_set_param(p, "replicas", "2") == 0, "replicas 2");
    check(ringsim_placement_add_node(p, "b", 1) == 0, "add b");
    check(ringsim_placement_set_node(p, "a", "tokens", "1,2") == 0, "tokens on a ring node");
    check(ringsim_placement_build(p) == RINGSIM_EPARAM, "tokens under ring: build refuses");
    check(ringsim_placement_set_node(p, "a", "tokens", "") == 0, "tokens cleared");
    check(ringsim_placement_build(p) == 0, "then build");
    check(ringsim_placement_build(p) == RINGSIM_EPARAM, "build twice");
    check(ringsim_placement_add_node(p, "c", 1) == RINGSIM_EPARAM, "add after build");
    check(ringsim_placement_set_param(p, "replicas", "1") == RINGSIM_EPARAM, "set after build");
    check(ringsim_lookup(p, "", 0, &o) == RINGSIM_ENAME, "an empty key: RINGSIM_ENAME");
    check(ringsim_lookup(p, "a\nb", 3, &o) == RINGSIM_ENAME, "a key with a newline");
    check(ringsim_lookup(p, "\xff", 1, &o) == RINGSIM_ENAME, "a key that is not UTF-8");
    check(ringsim_lookup(p, NULL, 1, &o) == RINGSIM_EPARAM, "a NULL key");
    check(ringsim_lookup(p, "k", 1, NULL) == RINGSIM_EPARAM, "a NULL owner");
    check(ringsim_lookup(p, "k", 1, &o) == 0 && o && (!strcmp(o, "a") || !strcmp(o, "b")),
          "a lookup names a node");
    check(ringsim_replicas(p, "k", 1, reps, 1, &n) == 0 && n == 2 && reps[0] == o,
          "replicas: two, the first written, the owner");
    check(ringsim_replicas(p, "k", 1, NULL, 0, &n) == 0 && n == 2, "replicas: only the count");
    check(ringsim_replicas(p, "k", 1, NULL, 1, &n) == RINGSIM_EPARAM, "replicas: NULL with room");
    ringsim_placement_free(p);
    ringsim_placement_free(NULL);
    /* No node: no owner, nobody serves, no replica. */
    check(ringsim_placement_new(&q, "ketama") == 0 && ringsim_placement_build(q) == 0,
          "an empty ketama");
    check(ringsim_lookup(q, "k", 1, &o) == 0 && o == NULL, "no node: owner NULL");
    check(ringsim_served_by(q, "k", 1, &o) == 0 && o == NULL, "no node: served_by NULL");
    check(ringsim_replicas(q, "k", 1, reps, 2, &n) == 0 && n == 0, "no node: no replica");
    ringsim_placement_free(q);
    /* The codes in the engine's words: the header's values are its own. */
    check(!strcmp(ringsim_strerror(RINGSIM_OK), "success") &&
              !strcmp(ringsim_strerror(RINGSIM_ENAME), "invalid name") &&
              !strcmp(ringsim_strerror(RINGSIM_EPARAM), "invalid parameter") &&
              !strcmp(ringsim_strerror(RINGSIM_ENOTFOUND), "not found") &&
              !strcmp(ringsim_strerror(RINGSIM_ECONFLICT), "already exists") &&
              !strcmp(ringsim_strerror(RINGSIM_ENOMEM), "out of memory") &&
              !strcmp(ringsim_strerror(RINGSIM_EINTERNAL), "internal error") &&
              ringsim_strerror(12345) != NULL,
          "ringsim_strerror: the engine's words for the header's codes");
    /* A Redis master's replica serves while it is down. */
    check(ringsim_placement_new(&q, "redis") == 0 && ringsim_placement_add_node(q, "m1", 1) == 0 &&
              ringsim_placement_set_node(q, "m1", "replicas", "10.9.9.9:7000") == 0 &&
              ringsim_placement_set_node(q, "m1", "state", "down") == 0 &&
              ringsim_placement_build(q) == 0 && ringsim_lookup(q, "k", 1, &o) == 0 &&
              !strcmp(o, "m1") && ringsim_served_by(q, "k", 1, &o) == 0 &&
              !strcmp(o, "10.9.9.9:7000"),
          "redis: a down master's replica serves its keys");
    ringsim_placement_free(q);
    /* Slots that leave one unheld, or give one twice, are refused. */
    check(ringsim_placement_new(&q, "redis") == 0 && ringsim_placement_add_node(q, "m1", 1) == 0 &&
              ringsim_placement_add_node(q, "m2", 1) == 0 &&
              ringsim_placement_set_node(q, "m1", "slots", "0-8191") == 0 &&
              ringsim_placement_set_node(q, "m2", "slots", "8191-16383") == 0 &&
              ringsim_placement_build(q) == RINGSIM_EPARAM &&
              ringsim_placement_set_node(q, "m2", "slots", "8193-16383") == 0 &&
              ringsim_placement_build(q) == RINGSIM_EPARAM &&
              ringsim_placement_set_node(q, "m2", "slots", "8192-16383") == 0 &&
              ringsim_placement_build(q) == 0,
          "redis: slots held twice or by nobody are refused, a whole map built");
    ringsim_placement_free(q);
    /* The version is the program's. */
    args a = {0};
    arg(&a, "%s", bin);
    arg(&a, "--version");
    char *out = NULL, want[64];
    run(&a, &out);
    args_free(&a);
    snprintf(want, sizeof want, "ringsim %s\n", ringsim_version());
    check(out && !strcmp(out, want), "ringsim_version() is the program's: %s against %s",
          ringsim_version(), out ? out : "(nothing)");
    free(out);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_lib PATH/TO/ringsim\n");
        return 2;
    }
    bin = argv[1];
    const char *env = getenv("RINGSIM_SEED"), *rounds_env = getenv("RINGSIM_LIB_ROUNDS");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
    int rounds = rounds_env ? atoi(rounds_env) : 4;
    rng_state = seed;
    printf("test_lib: seed %llu (RINGSIM_SEED=%llu reruns it)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    snprintf(tmpdir, sizeof tmpdir, "%s", "/tmp/ringsim-lib.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    interface_checks();
    args a = {0};
    arg(&a, "%s", bin);
    arg(&a, "--json");
    arg(&a, "algorithms");
    json_t *all = run_json(&a), *cat = json_object_get(all, "algorithms"), *alg;
    check(json_array_size(cat) >= 12, "ringsim algorithms --json lists the algorithms");
    int db = 0;
    size_t i;
    tcase *c = malloc(sizeof *c);
    if (!c)
        return 1;
    for (int r = 0; r < rounds; r++) {
        json_array_foreach(cat, i, alg)
        {
            random_case(c, alg, r);
            run_case(c, ++db);
        }
        cassandra_tokens_case(c);
        run_case(c, ++db);
        haproxy_zero_case(c, r);
        run_case(c, ++db);
        located_case(c, r);
        run_case(c, ++db);
        char *text = redis_case(c);
        run_case(c, ++db);
        free(text);
    }
    free(c);
    json_decref(all);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_lib: could not remove %s\n", tmpdir);
    if (failed)
        printf("test_lib: seed %llu failed (RINGSIM_SEED=%llu reruns it)\n",
               (unsigned long long)seed, (unsigned long long)seed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
