/*
 * import_haproxy.c - haproxy.cfg: a `backend` or `listen` section with
 * `hash-type consistent`, with its `defaults` and `default-server` applied.
 *
 * Reference: HAProxy 2.6 (Debian 12's 2.6.12), read for behaviour:
 *   src/tools.c       parse_line: words split by spaces and tabs; '#'
 *                     outside quotes comments to the end of the line; "..."
 *                     quotes (environment variables "${NAME}" expanded),
 *                     '...' quotes without expansion, a backslash escapes
 *                     outside single quotes; at most MAX_LINE_ARGS (64)
 *                     words.
 *   src/cfgparse.c    sections: global, defaults, frontend, backend, listen
 *                     and the others (peers, resolvers, userlist, ...); a
 *                     proxy takes the settings of the last `defaults` before
 *                     it, or of the named one after `from`.
 *   src/cfgparse-listen.c  balance, hash-type, hash-balance-factor,
 *                     default-server, server.
 *   src/server.c      parse_server, _srv_parse_kw: keyword by keyword
 *                     (the table `keywords` below: every server keyword
 *                     2.6 registers, an unknown one refused, a missing
 *                     argument refused where the keyword's parser refuses
 *                     it), up to an empty word; weight and id read with
 *                     atol (weight 0..256, id > 0 and unique in the
 *                     proxy), backup, disabled, enabled; default-server
 *                     gives later servers its values and skips, with a
 *                     warning, the keywords it does not take (id).
 * `hash-type consistent` with the default function (no function named:
 * sdbm with the avalanche, or `sdbm avalanche` written out) is ringsim's
 * `haproxy` algorithm; `hash-type map-based` (HAProxy's default) with its
 * default function (sdbm, no avalanche) its variant hash_type map-based
 * (alg_haproxy.h); the other functions are refused with a message saying
 * so.  Backends with hash-type consistent are offered first.
 *
 * Node names are the servers' names; `disabled` is the state down; `id`
 * is carried as written (0 when absent: the algorithm assigns the rest as
 * HAProxy does); `backup` is carried.
 *
 * Cost: one pass over the text; every proxy's servers are kept until one
 * proxy is chosen.  Proxy names and each proxy's server ids are found in
 * hashed sets (import_int.h), so 10,000 proxies or 800,000 servers with
 * ids stay linear.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "alg_haproxy.h"
#include "import_int.h"
#include "vec.h"

#define HAP_MAX_ARGS 64 /* MAX_LINE_ARGS */
#define HAP_MAX_DEFAULTS 256
#define HAP_IGNORED 100 /* bytes of ignored parameters kept for a note */

typedef struct hsrv {
    char *name, *addr;
    int line;
    int64_t weight, id;
    bool backup, down;
    bool dflt;     /* it took default-server parameters placement does not depend on */
    char *ignored; /* its own first parameters placement does not depend on
                    * (HAP_IGNORED bytes, or NULL when there are none: a
                    * 16 MiB paste holds 800,000 servers) */
} hsrv;

/* What a proxy inherits from defaults and default-server. */
typedef struct hset {
    char balance[80];
    int balance_line;
    bool consistent;
    int hash_line;
    char func[16];
    bool avalanche;
    int64_t hbf;
    int64_t dweight; /* default-server */
    bool dbackup, ddown;
    char dignored[HAP_IGNORED]; /* default-server parameters placement does not depend on */
    int dline;                  /* the last default-server line that gave one of them */
} hset;

typedef struct hproxy {
    char *name;
    int line;
    bool disabled;
    hset s;
    hsrv *srv;
    size_t n;
} hproxy;

typedef struct hdefaults {
    char *name; /* "" for an anonymous section */
    hset s;
} hdefaults;

/* Split a line into words (copied into buf, which has len+1 bytes);
 * returns the count, or -1 when there are too many, -2 for an unclosed
 * quote.  *env tells whether a "${...}" was met. */
static int split(const char *s, size_t len, char *buf, char **w, bool *env)
{
    int n = 0;
    size_t i = 0, o = 0;
    *env = false;
    for (;;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= len || s[i] == '#')
            break;
        if (n == HAP_MAX_ARGS)
            return -1;
        w[n++] = buf + o;
        char q = 0;
        while (i < len) {
            char ch = s[i];
            if (q == 0 && (ch == ' ' || ch == '\t' || ch == '#'))
                break;
            if (q != '\'' && ch == '\\' && i + 1 < len) {
                buf[o++] = s[i + 1];
                i += 2;
                continue;
            }
            if ((ch == '"' || ch == '\'') && (q == 0 || q == ch)) {
                q = (char)(q ? 0 : ch);
                i++;
                continue;
            }
            if (q != '\'' && ch == '$' && i + 1 < len && s[i + 1] == '{')
                *env = true;
            buf[o++] = ch;
            i++;
        }
        if (q != 0)
            return -2;
        buf[o++] = '\0';
    }
    return n;
}

static const char *const sections[] = {"global",  "defaults",  "frontend",    "backend",
                                       "listen",  "peers",     "resolvers",   "userlist",
                                       "cache",   "program",   "http-errors", "ring",
                                       "mailers", "crt-store", "traces",      "log-forward"};

/* HAProxy 2.6's server keywords, as its keyword lists register them
 * (srv_register_keywords in src/server.c, src/check.c, src/cfgparse-ssl.c,
 * src/cfgparse-tcp.c), checked one by one against haproxy -c 2.6.12: how
 * many words follow (kw->skip: 0, 1, or -1 for `source`, which reads its
 * own), whether default-server takes it (kw->default_ok: when not, haproxy
 * warns and skips it), and, for a keyword with an argument, what haproxy
 * says when the argument is missing (NULL: it reads "" and takes it, as
 * weight's atol does).  An unknown keyword is refused. */
typedef struct hkw {
    const char *name;
    signed char args;
    bool default_ok;
    const char *needs; /* "'NAME' expects NEEDS" when the argument is missing */
} hkw;

static const hkw keywords[] = {
    /* src/cfgparse-ssl.c */
    {"allow-0rtt", 0, true, NULL},
    {"alpn", 1, true, "the comma-delimited ALPN protocol suite"},
    {"ca-file", 1, true, "a CAfile path"},
    {"check-alpn", 1, true, "the comma-delimited ALPN protocol suite"},
    {"check-sni", 1, true, "an SNI"},
    {"check-ssl", 0, true, NULL},
    {"ciphers", 1, true, "a cipher suite"},
    {"ciphersuites", 1, true, "a cipher suite"},
    {"crl-file", 1, true, "a CRLfile path"},
    {"crt", 1, true, "a certificate file path"},
    {"force-sslv3", 0, true, NULL},
    {"force-tlsv10", 0, true, NULL},
    {"force-tlsv11", 0, true, NULL},
    {"force-tlsv12", 0, true, NULL},
    {"force-tlsv13", 0, true, NULL},
    {"no-check-ssl", 0, true, NULL},
    {"no-send-proxy-v2-ssl", 0, true, NULL},
    {"no-send-proxy-v2-ssl-cn", 0, true, NULL},
    {"no-ssl", 0, true, NULL},
    {"no-ssl-reuse", 0, true, NULL},
    {"no-sslv3", 0, false, NULL},
    {"no-tlsv10", 0, false, NULL},
    {"no-tlsv11", 0, false, NULL},
    {"no-tlsv12", 0, false, NULL},
    {"no-tlsv13", 0, false, NULL},
    {"no-tls-tickets", 0, true, NULL},
    {"npn", 1, true, "the comma-delimited NPN protocol suite"},
    {"send-proxy-v2-ssl", 0, true, NULL},
    {"send-proxy-v2-ssl-cn", 0, true, NULL},
    {"sni", 1, true, "an sni expression"},
    {"ssl", 0, true, NULL},
    {"ssl-min-ver", 1, true, "the ssl/tls version"},
    {"ssl-max-ver", 1, true, "the ssl/tls version"},
    {"ssl-reuse", 0, true, NULL},
    {"tls-tickets", 0, true, NULL},
    {"verify", 1, true, "a verify method"},
    {"verifyhost", 1, true, "a hostname to verify against"},
    /* src/cfgparse-tcp.c */
    {"tcp-ut", 1, true, "a TCP User Timeout value"},
    /* src/check.c */
    {"addr", 1, true, "<ipv4|ipv6> as argument"},
    {"agent-addr", 1, true, "an address as argument"},
    {"agent-check", 0, true, NULL},
    {"agent-inter", 1, true, "a delay as argument"},
    {"agent-port", 1, true, "a port number as argument"},
    {"agent-send", 1, true, "a string as argument"},
    {"check", 0, true, NULL},
    {"check-proto", 1, true, "a value"},
    {"check-send-proxy", 0, true, NULL},
    {"check-via-socks4", 0, true, NULL},
    {"no-agent-check", 0, true, NULL},
    {"no-check", 0, true, NULL},
    {"no-check-send-proxy", 0, true, NULL},
    {"rise", 1, true, "an integer argument"},
    {"fall", 1, true, "an integer argument"},
    {"inter", 1, true, "a delay as argument"},
    {"fastinter", 1, true, "a delay as argument"},
    {"downinter", 1, true, "a delay as argument"},
    {"port", 1, true, "a port number as argument"},
    /* src/server.c */
    {"backup", 0, true, NULL},
    {"cookie", 1, true, "<value> as argument"},
    {"disabled", 0, true, NULL},
    {"enabled", 0, true, NULL},
    {"error-limit", 1, true, "an integer argument"},
    {"ws", 1, true, "'auto', 'h1' or 'h2'"},
    {"id", 1, false, "an integer argument"},
    {"init-addr", 1, true, NULL},
    {"log-proto", 1, true, "one of 'legacy' or 'octet-count'"},
    {"maxconn", 1, true, NULL},
    {"maxqueue", 1, true, NULL},
    {"max-reuse", 1, true, "<value> as argument"},
    {"minconn", 1, true, NULL},
    {"namespace", 1, true, "<name> as argument"},
    {"no-backup", 0, true, NULL},
    {"no-send-proxy", 0, true, NULL},
    {"no-send-proxy-v2", 0, true, NULL},
    {"no-tfo", 0, true, NULL},
    {"non-stick", 0, true, NULL},
    {"observe", 1, true, "<mode> as argument"},
    {"on-error", 1, true, "one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down'"},
    {"on-marked-down", 1, true, "'shutdown-sessions'"},
    {"on-marked-up", 1, true, "'shutdown-backup-sessions'"},
    {"pool-low-conn", 1, true, "<value> as argument"},
    {"pool-max-conn", 1, true, "<value> as argument"},
    {"pool-purge-delay", 1, true, "<value> as argument"},
    {"proto", 1, true, "a value"},
    {"proxy-v2-options", 1, true, "a proxy v2 option"},
    {"redir", 1, true, "<prefix> as argument"},
    {"resolve-net", 1, true, "a list of networks"},
    {"resolve-opts", 1, true, NULL},
    {"resolve-prefer", 1, true, "either ipv4 or ipv6 as argument"},
    {"resolvers", 1, true, "the name of a resolvers section"},
    {"send-proxy", 0, true, NULL},
    {"send-proxy-v2", 0, true, NULL},
    {"slowstart", 1, true, "a delay"},
    {"source", -1, true,
     "<addr>[:<port>[-<port>]], and optionally 'usesrc' <addr>, and "
     "'interface' <name> as argument"},
    {"stick", 0, true, NULL},
    {"tfo", 0, true, NULL},
    {"track", 1, true, "[<proxy>/]<server> as argument"},
    {"socks4", 1, true, "<addr>:<port> as argument"},
    {"usesrc", 0, true, NULL}, /* refused: only after `source` (which reads it) */
    {"weight", 1, true, NULL},
};

static const hkw *keyword(const char *w)
{
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        if (strcmp(w, keywords[i].name) == 0)
            return &keywords[i];
    return NULL;
}

/* atol into an int, as srv_parse_weight and srv_parse_id read their
 * argument: leading space, a sign, the digits up to the first other
 * character ("12abc" is 12, "" is 0), saturated to a long and then cut to
 * 32 bits (4294967297 is 1). */
static int hap_atol_int(const char *s)
{
    long v = strtol(s, NULL, 10);
    return (int)(uint32_t)(unsigned long)v;
}

static void set_defaults(hset *s)
{
    memset(s, 0, sizeof *s);
    strcpy(s->balance, "roundrobin");
    strcpy(s->func, "sdbm");
    s->dweight = 1;
}

/* A server's buffer of its own ignored parameters, made when first needed;
 * NULL when out of memory.  default-server's are noted once, on its line. */
static char *srv_ignored(hsrv *sv)
{
    if (sv->ignored == NULL && (sv->ignored = malloc(HAP_IGNORED)) != NULL)
        sv->ignored[0] = '\0';
    return sv->ignored;
}

static void add_ignored(char *buf, size_t cap, const char *w)
{
    size_t u = strlen(buf);
    if (u + strlen(w) + 3 < cap)
        snprintf(buf + u, cap - u, "%s%s", u ? ", " : "", w);
}

/* Server or default-server parameters from words w[k..n), as parse_server
 * reads them: keyword by keyword until an empty word (parse_line's "" ends
 * the line for it), each keyword's words skipped after it.  who names the
 * line in messages ("'server b/s1'" or "'default-server'"). */
static int server_params(import_ctx *c, int line, char **w, int k, int n, hsrv *sv, hset *s,
                         bool is_default, const char *who)
{
    while (k < n && w[k][0] != '\0') {
        const char *kw = w[k];
        const char *arg = k + 1 < n ? w[k + 1] : ""; /* args past the end are "" */
        const hkw *d = keyword(kw);
        if (d == NULL)
            return import__fail(c, line, "%s : unknown keyword '%.60s'.", who, kw);
        if (is_default && !d->default_ok) {
            /* haproxy warns and goes on */
            int rc = import__note(c, line,
                                  "'%s' option is not accepted in default-server sections "
                                  "(haproxy warns and ignores it)",
                                  kw);
            if (rc != 0)
                return rc;
            k += 1 + (d->args > 0 ? d->args : 0);
            continue;
        }
        if (strcmp(kw, "usesrc") == 0)
            return import__fail(c, line, "%s : 'usesrc' only allowed after a 'source' statement.",
                                who);
        if (d->args != 0 && arg[0] == '\0' && d->needs != NULL)
            return import__fail(c, line, "%s : '%s' expects %s.", who, kw, d->needs);
        if (strcmp(kw, "weight") == 0) {
            int v = hap_atol_int(arg);
            if (v < 0 || v > 256)
                return import__fail(c, line,
                                    "%s : weight of server %.60s is not within 0 and 256 (%d).",
                                    who, is_default ? "default-server" : sv->name, v);
            if (is_default)
                s->dweight = v;
            else
                sv->weight = v;
        } else if (strcmp(kw, "id") == 0) {
            int v = hap_atol_int(arg);
            if (v <= 0)
                return import__fail(c, line, "%s : 'id' : custom id has to be > 0", who);
            sv->id = v;
        } else if (strcmp(kw, "backup") == 0 || strcmp(kw, "no-backup") == 0) {
            bool b = kw[0] == 'b';
            if (is_default)
                s->dbackup = b;
            else
                sv->backup = b;
        } else if (strcmp(kw, "disabled") == 0 || strcmp(kw, "enabled") == 0) {
            bool dn = kw[0] == 'd';
            if (is_default)
                s->ddown = dn;
            else
                sv->down = dn;
        } else if (!is_default) {
            if (srv_ignored(sv) == NULL)
                return rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
            add_ignored(sv->ignored, HAP_IGNORED, kw);
        } else {
            add_ignored(s->dignored, sizeof s->dignored, kw);
            s->dline = line;
        }
        if (d->args >= 0) {
            k += 1 + d->args;
            continue;
        }
        /* source ADDR [usesrc X | interface X]... (srv_parse_source) */
        k += 2;
        while (k < n && (strcmp(w[k], "usesrc") == 0 || strcmp(w[k], "interface") == 0)) {
            if (k + 1 >= n || w[k + 1][0] == '\0')
                return import__fail(c, line, "%s : '%s' expects an argument.", who, w[k]);
            k += 2;
        }
    }
    return 0;
}

static void proxies_free(hproxy *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < p[i].n; j++) {
            free(p[i].srv[j].name);
            free(p[i].srv[j].addr);
            free(p[i].srv[j].ignored);
        }
        free(p[i].srv);
        free(p[i].name);
    }
    free(p);
}

static const char *const nohash[] = {"roundrobin", "static-rr", "leastconn", "first"};

/* Whether a proxy places by hashing a key (consistent or map-based). */
static bool hashes(const hset *s)
{
    for (size_t i = 0; i < sizeof nohash / sizeof *nohash; i++)
        if (strcmp(s->balance, nohash[i]) == 0)
            return false;
    return true;
}

static int emit(import_ctx *c, const hproxy *p)
{
    int rc;
    const hset *s = &p->s;
    if (!s->consistent && (strcmp(s->func, "sdbm") != 0 || s->avalanche))
        return import__fail(c, s->hash_line,
                            "hash-type map-based %s%s: ringsim's haproxy algorithm reproduces "
                            "map-based with the default function (sdbm, no avalanche) only",
                            s->func, s->avalanche ? " avalanche" : "");
    if (s->consistent && (strcmp(s->func, "sdbm") != 0 || !s->avalanche))
        return import__fail(c, s->hash_line,
                            "hash-type consistent %s%s: ringsim's haproxy algorithm "
                            "reproduces the default (sdbm with the avalanche) only",
                            s->func, s->avalanche ? " avalanche" : "");
    for (size_t i = 0; i < sizeof nohash / sizeof *nohash; i++)
        if (strcmp(s->balance, nohash[i]) == 0)
            return import__fail(c, s->balance_line ? s->balance_line : p->line,
                                "balance %s does not hash a key: ringsim imports a backend "
                                "that balances by a hash (uri, source, hdr(), url_param, "
                                "hash ...)",
                                s->balance);
    if ((rc = import__set_name(c, p->name, strlen(p->name))) != 0)
        return rc;
    strcpy(c->r->algorithm, "haproxy");
    if (!s->consistent) {
        if ((rc = import__param_str(c, "hash_type", "map-based")) != 0 ||
            (rc = import__note(c, s->hash_line ? s->hash_line : s->balance_line,
                               "hash-type map-based%s: the key's hash modulo the servers' "
                               "total weight picks the server, so a server that joins or "
                               "leaves moves most keys",
                               s->hash_line ? "" : " (HAProxy's default)")) != 0)
            return rc;
        if (s->hbf && (rc = import__note(c, s->hash_line,
                                         "hash-balance-factor %lld: HAProxy bounds loads only "
                                         "with hash-type consistent; not used here",
                                         (long long)s->hbf)) != 0)
            return rc;
    } else if ((rc = import__param_int(c, "hash_balance_factor", s->hbf)) != 0) {
        return rc;
    }
    if ((rc = import__note(c, s->balance_line,
                           "balance %s: HAProxy hashes that part of each request; ringsim "
                           "places the keys you give it as that text",
                           s->balance)) != 0)
        return rc;
    if (p->disabled && (rc = import__note(c, p->line, "the proxy itself is disabled")) != 0)
        return rc;
    /* A server of weight 0 is imported with its weight: it holds no point
     * and serves nothing, and it still numbers the servers after it. */
    bool implicit = false;
    size_t took = 0; /* servers that took default-server's ignored parameters */
    for (size_t i = 0; i < p->n; i++)
        took += p->srv[i].dflt;
    /* One note for the default-server line, not one per server it reaches. */
    if (took &&
        (rc = import__note(c, s->dline,
                           "default-server: %s: placement does not depend on it "
                           "(%zu server%s take%s it)",
                           s->dignored, took, took == 1 ? "" : "s", took == 1 ? "s" : "")) != 0)
        return rc;
    for (size_t i = 0; i < p->n; i++) {
        const hsrv *sv = &p->srv[i];
        import_node_rec *n = import__node(c, sv->name, strlen(sv->name), sv->line, &rc);
        if (n == NULL)
            break;
        n->v.weight = (double)sv->weight;
        n->v.id = sv->id;
        n->v.backup = sv->backup;
        n->v.down = sv->down;
        implicit |= sv->id == 0;
        if (sv->addr != NULL && (rc = import__set_address(c, n, sv->addr, strlen(sv->addr))) != 0)
            break;
        if (sv->ignored != NULL && sv->ignored[0] &&
            (rc = import__note(c, sv->line, "server %.60s: %s: placement does not depend on it",
                               sv->name, sv->ignored)) != 0)
            break;
    }
    if (rc != 0)
        return rc;
    if (implicit && s->consistent) /* map-based places by position, not id */
        rc = import__note(c, p->line,
                          "servers without \"id\" are numbered as HAProxy numbers them, by "
                          "position: a server added in the middle renumbers the ones after "
                          "it, and its points move");
    return rc;
}

int import__haproxy(import_ctx *c)
{
    hproxy *px = NULL;
    size_t npx = 0, cappx = 0;
    hdefaults *defs = NULL;
    size_t ndefs = 0;
    hset cur_def;
    set_defaults(&cur_def);
    char *buf = malloc(IMPORT_MAX_LINE + 1);
    char **w = malloc(HAP_MAX_ARGS * sizeof *w);
    int rc = 0;
    enum { S_NONE, S_DEFAULTS, S_PROXY, S_OTHER } sec = S_NONE;
    hset *cur = NULL; /* the settings being written (defaults or proxy) */
    hproxy *p = NULL;
    /* proxy names (tag: index) and the current proxy's ids (tag: server) */
    import_set pnames = {0}, ids = {0};
    size_t found;
    if (buf == NULL || w == NULL) {
        rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
        goto out;
    }
    size_t pos = 0;
    import_line l = {0};
    while (import__next_line(c->text, c->len, &pos, &l)) {
        bool env;
        int n = split(l.s, l.len, buf, w, &env);
        if (n == -1) {
            rc = import__fail(c, l.no, "too many words, truncating at word %d", HAP_MAX_ARGS + 1);
            goto out;
        }
        if (n == -2) {
            rc = import__fail(c, l.no, "unmatched quote");
            goto out;
        }
        if (n == 0)
            continue;
        bool is_sec = false;
        for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
            is_sec |= strcmp(w[0], sections[i]) == 0;
        if (is_sec) {
            /* close a defaults section: it becomes the current one */
            if (sec == S_DEFAULTS)
                cur_def = defs[ndefs - 1].s;
            p = NULL;
            cur = NULL;
            const char *from = NULL;
            for (int i = 1; i + 1 < n; i++)
                if (strcmp(w[i], "from") == 0)
                    from = w[i + 1];
            hset base = cur_def;
            if (from != NULL) {
                size_t i = ndefs;
                while (i > 0 && strcmp(defs[i - 1].name, from) != 0)
                    i--;
                if (i == 0) {
                    rc = import__fail(c, l.no, "'%s %.60s' : defaults section '%.60s' not found",
                                      w[0], n > 1 ? w[1] : "", from);
                    goto out;
                }
                base = defs[i - 1].s;
            }
            if (strcmp(w[0], "defaults") == 0) {
                if (ndefs >= HAP_MAX_DEFAULTS) {
                    rc = import__fail(c, l.no, "more than %d defaults sections", HAP_MAX_DEFAULTS);
                    goto out;
                }
                hdefaults *nd = realloc(defs, (ndefs + 1) * sizeof *defs);
                if (nd == NULL)
                    goto nomem;
                defs = nd;
                defs[ndefs].name = strdup(n > 1 && strcmp(w[1], "from") != 0 ? w[1] : "");
                if (defs[ndefs].name == NULL)
                    goto nomem;
                /* A defaults section starts from the built-in values, or
                 * from the one it names. */
                if (from != NULL)
                    defs[ndefs].s = base;
                else
                    set_defaults(&defs[ndefs].s);
                cur = &defs[ndefs++].s;
                sec = S_DEFAULTS;
            } else if (strcmp(w[0], "backend") == 0 || strcmp(w[0], "listen") == 0) {
                if (n < 2) {
                    rc = import__fail(c, l.no, "'%s' expects <name> as an argument", w[0]);
                    goto out;
                }
                if (import__set_find(c, &pnames, w[1], strlen(w[1]), 0, &found)) {
                    rc = import__fail(c, l.no,
                                      "Parsing [line %d]: %s '%.60s' has the same name as "
                                      "another proxy declared at line %d",
                                      l.no, w[0], w[1], px[found].line);
                    goto out;
                }
                if (npx >= IMPORT_MAX_SECTIONS) {
                    rc = import__fail(c, l.no, "more than %u proxies", IMPORT_MAX_SECTIONS);
                    goto out;
                }
                if (vec_reserve(&px, &cappx, npx + 1, sizeof *px, 8))
                    goto nomem;
                p = &px[npx++];
                memset(p, 0, sizeof *p);
                p->name = strdup(w[1]);
                if (p->name == NULL)
                    goto nomem;
                import__set_clear(&ids); /* servers go to this proxy only */
                if (import__set_add(c, &pnames, p->name, strlen(p->name), 0, npx - 1, &found) < 0)
                    goto nomem;
                p->line = l.no;
                p->s = base;
                cur = &p->s;
                sec = S_PROXY;
            } else {
                sec = S_OTHER;
            }
            continue;
        }
        if (cur == NULL)
            continue; /* global, frontend and the other sections */
        int64_t v;
        if (strcmp(w[0], "balance") == 0) {
            if (n < 2) {
                rc = import__fail(c, l.no, "'balance' requires an algorithm");
                goto out;
            }
            snprintf(cur->balance, sizeof cur->balance, "%s%s%s", w[1], n > 2 ? " " : "",
                     n > 2 ? w[2] : "");
            cur->balance_line = l.no;
        } else if (strcmp(w[0], "hash-type") == 0) {
            if (n < 2 || (strcmp(w[1], "consistent") != 0 && strcmp(w[1], "map-based") != 0)) {
                rc = import__fail(c, l.no,
                                  "'hash-type' requires 'map-based' or 'consistent' as an "
                                  "argument");
                goto out;
            }
            cur->consistent = strcmp(w[1], "consistent") == 0;
            cur->hash_line = l.no;
            /* No function named: sdbm with the avalanche (cfgparse-listen.c). */
            strcpy(cur->func, "sdbm");
            cur->avalanche = cur->consistent && n == 2;
            for (int i = 2; i < n; i++) {
                if (strcmp(w[i], "avalanche") == 0) {
                    cur->avalanche = true;
                } else if (strcmp(w[i], "sdbm") == 0 || strcmp(w[i], "djb2") == 0 ||
                           strcmp(w[i], "wt6") == 0 || strcmp(w[i], "crc32") == 0 ||
                           strcmp(w[i], "none") == 0) {
                    snprintf(cur->func, sizeof cur->func, "%s", w[i]);
                } else {
                    rc = import__fail(c, l.no, "'hash-type': unknown hash function '%.40s'", w[i]);
                    goto out;
                }
            }
        } else if (strcmp(w[0], "hash-balance-factor") == 0) {
            if (n < 2 || import__int(w[1], strlen(w[1]), 0, INT32_MAX, &v) != 0 ||
                (v != 0 && v <= 100)) {
                rc = import__fail(c, l.no,
                                  "'hash-balance-factor' must be 0 or an integer greater "
                                  "than 100");
                goto out;
            }
            cur->hbf = v;
        } else if (strcmp(w[0], "default-server") == 0) {
            if ((rc = server_params(c, l.no, w, 1, n, NULL, cur, true, "'default-server'")) != 0)
                goto out;
        } else if (strcmp(w[0], "disabled") == 0 && sec == S_PROXY) {
            p->disabled = true;
        } else if (strcmp(w[0], "server") == 0) {
            if (sec != S_PROXY) {
                rc = import__fail(c, l.no, "'server' not allowed in 'defaults' section");
                goto out;
            }
            if (n < 3) {
                rc = import__fail(c, l.no,
                                  "'server' expects <name> and <addr>[:<port>] as "
                                  "arguments");
                goto out;
            }
            if (p->n >= IMPORT_MAX_NODES) {
                rc = import__fail(c, l.no, "more than %u servers; ringsim imports at most %u",
                                  IMPORT_MAX_NODES, IMPORT_MAX_NODES);
                goto out;
            }
            /* grow at powers of two */
            if ((p->n & (p->n - 1)) == 0 && vec_realloc(&p->srv, p->n ? p->n * 2 : 1, sizeof *p->srv))
                goto nomem;
            hsrv *sv = &p->srv[p->n];
            memset(sv, 0, sizeof *sv);
            sv->name = strdup(w[1]);
            sv->addr = strdup(w[2]);
            p->n++;
            if (sv->name == NULL || sv->addr == NULL)
                goto nomem;
            sv->line = l.no;
            sv->weight = p->s.dweight;
            sv->backup = p->s.dbackup;
            sv->down = p->s.ddown;
            sv->dflt = p->s.dignored[0] != '\0';
            char who[160];
            snprintf(who, sizeof who, "'server %.60s/%.60s'", p->name, sv->name);
            if ((rc = server_params(c, l.no, w, 3, n, sv, &p->s, false, who)) != 0)
                goto out;
            if (sv->id != 0) {
                int added = import__set_add(c, &ids, NULL, 0, (uint64_t)sv->id, p->n - 1, &found);
                if (added < 0)
                    goto nomem;
                if (added == 1) {
                    const hsrv *was = &p->srv[found];
                    rc = import__fail(c, l.no,
                                      "'id' : custom id %lld already used at line %d "
                                      "('server %.60s')",
                                      (long long)sv->id, was->line, was->name);
                    goto out;
                }
            }
            if (env && srv_ignored(sv) == NULL)
                goto nomem;
            if (env)
                add_ignored(sv->ignored, HAP_IGNORED,
                            "an environment variable (ringsim cannot know its value)");
        }
    }
    {
        size_t k = 0, pick = 0;
        const char **names = malloc((npx + 1) * sizeof *names);
        int *lines = malloc((npx + 1) * sizeof *lines);
        size_t *idx = malloc((npx + 1) * sizeof *idx);
        if (names == NULL || lines == NULL || idx == NULL) {
            free(names);
            free(lines);
            free(idx);
            goto nomem;
        }
        /* The candidates: proxies with servers that hash, those with
         * hash-type consistent first (a text whose only hashing backends are
         * map-based offers those); a named proxy is taken as it is (and
         * refused if it does not hash). */
        bool any_consistent = false;
        for (size_t i = 0; i < npx; i++)
            any_consistent |= px[i].n > 0 && hashes(&px[i].s) && px[i].s.consistent;
        for (size_t i = 0; i < npx; i++) {
            bool want = c->want != NULL && strcmp(px[i].name, c->want) == 0;
            if (want || (c->want == NULL && px[i].n > 0 && hashes(&px[i].s) &&
                         (px[i].s.consistent || !any_consistent))) {
                names[k] = px[i].name;
                lines[k] = px[i].line;
                idx[k++] = i;
            }
        }
        if (c->want != NULL && k == 0) {
            for (size_t i = 0; i < npx; i++) {
                names[k] = px[i].name;
                lines[k] = px[i].line;
                idx[k++] = i;
            }
        }
        rc = import__choose(c, "backend", names, lines, k,
                            npx == 0 ? "no backend or listen section in the text"
                                     : "no backend with servers balances by a hash",
                            &pick);
        if (rc == 0)
            rc = emit(c, &px[idx[pick]]);
        free(names);
        free(lines);
        free(idx);
    }
    goto out;
nomem:
    rc = rs_fail(c->err, RINGSIM_ENOMEM, "out of memory while importing");
out:
    free(buf);
    free(w);
    import__set_free(&pnames);
    import__set_free(&ids);
    proxies_free(px, npx);
    for (size_t i = 0; i < ndefs; i++)
        free(defs[i].name);
    free(defs);
    return rc;
}
