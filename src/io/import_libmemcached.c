/*
 * import_libmemcached.c - a memcached client's servers, in either of
 * libmemcached's two forms:
 *
 *   a server list, as memcached_servers_parse reads it (src/libmemcached/
 *     parse.cc, libmemcached-awesome 1.1.4): entries split at ',', one space
 *     after a comma skipped; in an entry the port follows the first ':'
 *     (after "]" for "[IPv6]"), read with strtoul and cut to 16 bits (99999
 *     becomes 34463); a weight follows the next ' ' or ':' after it; port 0
 *     means 11211 and weight 0 means 1 (server_list.cc, server.cc); a path
 *     starting with '/' is a socket (port 0); an empty host (",," or ":5")
 *     is "localhost"; spaces stay in the host ("hello world", " a").
 *   a configuration string, as memcached() reads it (src/libmemcached/csl/
 *     scanner.l and parser.yy): statements separated by one ' ', option
 *     names case-insensitive; "--SERVER=" an IPv4 address or a host name of
 *     three or more characters ([[:alnum:]][.[:alnum:]_-]+[[:alnum:]]),
 *     then ":PORT" (1 to 5 digits, 11211 when absent) and "/?WEIGHT" (1 to
 *     5 digits, 1 when absent); "--SOCKET=" a path (quoted or not) and a
 *     weight; '#' at a line's start comments the line; an unknown option,
 *     or a host the scanner does not take, is refused.
 *
 * Placement is ringsim's `ketama`.  A server list, or a string without
 * --DISTRIBUTION: libmemcached with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED,
 * which a client sets in code (the string has no option for it; it also
 * sets MD5, so a --HASH is overridden, and noted).  A string with
 * --DISTRIBUTION=consistent[,HASH] is what it says, its statements applied
 * in order as memcached() applies them: mode consistent with key_hash =
 * the --HASH in force (one_at_a_time without), or mode ketama_weighted
 * when a server of weight above 1 came after the --DISTRIBUTION (the
 * library then turns weighting on); weights the library ignores are
 * imported as 1, with a note; a --HASH after the continuum was built is
 * refused (its points keep the old hash, which ringsim does not
 * simulate).  --DISTRIBUTION=modula or random is refused: that cluster
 * does not hash consistently.
 *
 * Node names are HOST when the port is 11211, else HOST:PORT (the label
 * libmemcached's ketama hashes); a socket is its path.
 *
 * Cost: one pass over the text.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alg_ketama.h"
#include "import_int.h"

#define MC_ENTRY_MAX 8195 /* parse.cc copies an entry into char[HUGE_STRING_LEN = 8196] */
#define MC_DEFAULT_PORT 11211u
#define MC_EMPTY_HOST "localhost" /* an empty entry's host, as the library answers it */

/* What a configuration string sets, statement by statement, as
 * memcached() applies them (alg_ketama.h has the library's rules): the
 * distribution, weighting, the key hash, and the key hash the continuum
 * was last built with (each server pushed and each --DISTRIBUTION rebuild
 * it under a consistent distribution). */
typedef struct mc_state {
    bool consistent; /* --DISTRIBUTION=consistent seen */
    bool weighted;   /* a weight > 1 pushed under it: libmemcached weights */
    bool weights;    /* some server has a weight other than 1 */
    ketama_hash_fn hash, built;
    int hash_line;
} mc_state;

static int add_server_w(import_ctx *c, const char *host, size_t hlen, unsigned port,
                        unsigned long weight, int line, mc_state *m);

static int add_server(import_ctx *c, const char *host, size_t hlen, unsigned port,
                      unsigned long weight, int line)
{
    return add_server_w(c, host, hlen, port, weight, line, NULL);
}

static int add_server_w(import_ctx *c, const char *host, size_t hlen, unsigned port,
                        unsigned long weight, int line, mc_state *m)
{
    if (m != NULL) {
        m->weights |= (uint32_t)weight > 1;
        if (m->consistent) {
            m->weighted |= (uint32_t)weight > 1;
            m->built = m->hash;
        }
    }
    char name[300];
    int rc;
    if (hlen > 255)
        return import__fail(c, line, "host name of %zu bytes; ringsim names are at most 255", hlen);
    bool sock = hlen > 0 && host[0] == '/';
    if (sock || port == MC_DEFAULT_PORT)
        snprintf(name, sizeof name, "%.*s", (int)hlen, host);
    else
        snprintf(name, sizeof name, "%.*s:%u", (int)hlen, host, port);
    import_node_rec *n = import__node(c, name, strlen(name), line, &rc);
    if (n == NULL)
        return rc;
    uint32_t w32 = (uint32_t)weight; /* libmemcached's weight is a uint32_t */
    n->v.weight = w32 == 0 ? 1.0 : (double)w32;
    return 0;
}

/* The server list form. */
static int server_list(import_ctx *c)
{
    const char *t = c->text;
    size_t len = c->len;
    /* What a paste adds at the end (a newline) is not part of the list;
     * spaces are (libmemcached keeps them in the host). */
    while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r'))
        len--;
    size_t b = 0;
    int line = 1;
    char buf[MC_ENTRY_MAX + 1];
    int rc;
    while (b < len) {
        const char *comma = memchr(t + b, ',', len - b);
        size_t e = comma ? (size_t)(comma - t) : len;
        size_t el = e - b;
        if (el > MC_ENTRY_MAX)
            return import__fail(c, line,
                                "a server entry of %zu bytes: libmemcached copies it "
                                "into %u bytes",
                                el, MC_ENTRY_MAX + 1);
        memcpy(buf, t + b, el);
        buf[el] = '\0';
        for (size_t i = b; i < e; i++)
            line += t[i] == '\n';
        int entry_line = line;
        b = comma ? e + 1 : len;
        if (b < len && isspace((unsigned char)t[b])) {
            line += t[b] == '\n';
            b++;
        }
        char *ptr = strchr(buf, '['), *ptr2 = NULL;
        if (ptr != NULL)
            ptr2 = strchr(ptr + 1, ']');
        ptr = (ptr && ptr2) ? strchr(ptr2 + 1, ':') : strchr(buf, ':');
        unsigned port = 0;
        unsigned long weight = 0;
        if (ptr != NULL) {
            *ptr++ = '\0';
            errno = 0;
            unsigned long p = strtoul(ptr, NULL, 10);
            if (errno != 0)
                return import__fail(c, entry_line,
                                    "memcached_servers_parse fails on the port \"%.40s\"", ptr);
            port = (unsigned)(p & 0xffffu);
            if (p > 0xffffu && (rc = import__note(c, entry_line,
                                                  "port %lu is cut to 16 bits by libmemcached: "
                                                  "%u",
                                                  p, port)) != 0)
                return rc;
            ptr2 = strchr(ptr, ' ');
            if (ptr2 == NULL)
                ptr2 = strchr(ptr, ':');
            if (ptr2 != NULL) {
                errno = 0;
                weight = strtoul(ptr2 + 1, NULL, 10);
                if (errno != 0)
                    return import__fail(c, entry_line,
                                        "memcached_servers_parse fails on the weight \"%.40s\"",
                                        ptr2 + 1);
            }
        }
        /* An empty host (",," or ":5") is libmemcached's "localhost". */
        const char *host = buf[0] != '\0' ? buf : MC_EMPTY_HOST;
        if (host[0] != '/' && port == 0)
            port = MC_DEFAULT_PORT;
        if ((rc = add_server(c, host, strlen(host), port, weight, entry_line)) != 0)
            return rc;
    }
    return 0;
}

/* ---- the configuration string ---- */

static bool word_is(const char *s, size_t len, const char *w)
{
    return len == strlen(w) && strncasecmp(s, w, len) == 0;
}

/* The value of d decimal digits at s (d <= 5, so it fits). */
static unsigned long digits_value(const char *s, size_t d)
{
    unsigned long v = 0;
    for (size_t i = 0; i < d; i++)
        v = v * 10 + (unsigned long)(s[i] - '0');
    return v;
}

/* Digits at s[0..], at most max of them: the count (0 when none). */
static size_t digits(const char *s, size_t len, size_t max)
{
    size_t i = 0;
    while (i < len && i <= max && isdigit((unsigned char)s[i]))
        i++;
    return i;
}

/* A port or weight: 1 to 5 digits at s[0..]; their count, or 0 when there
 * are none or more. */
static size_t digits5(const char *s, size_t len)
{
    size_t d = digits(s, len, 5);
    return d > 5 ? 0 : d;
}

/* Refuse the option opt (opt_len bytes) whose `what` after sep is not 1 to 5
 * digits. */
static int bad_number(import_ctx *c, int line, const char *what, const char *sep, const char *opt,
                      size_t opt_len)
{
    return import__fail(c, line, "a %s of 1 to 5 digits must follow %s in \"%.*s\"", what, sep,
                        (int)(opt_len < 80 ? opt_len : 80), opt);
}

/* The scanner's host: an IPv4 address or [[:alnum:]][.[:alnum:]_-]+[[:alnum:]],
 * longest match; its length (0 when none). */
static size_t scan_host(const char *s, size_t len)
{
    if (len == 0 || !isalnum((unsigned char)s[0]))
        return 0;
    size_t i = 1;
    while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_' || s[i] == '-'))
        i++;
    while (i > 1 && !isalnum((unsigned char)s[i - 1]))
        i--; /* the last character must be alphanumeric */
    return i >= 3 ? i : 0;
}

/* A --HASH= or ,HASH name as the scanner reads it: 0 and *fn, or a refusal
 * in libmemcached's words. */
static int mc_hash_name(import_ctx *c, int line, const char *v, size_t vl, ketama_hash_fn *fn)
{
    static const struct {
        const char *name;
        ketama_hash_fn fn;
    } names[] = {{"MD5", KETAMA_HASH_MD5},         {"CRC", KETAMA_HASH_CRC},
                 {"FNV1_64", KETAMA_HASH_FNV1_64}, {"FNV1A_64", KETAMA_HASH_FNV1A_64},
                 {"FNV1_32", KETAMA_HASH_FNV1_32}, {"FNV1A_32", KETAMA_HASH_FNV1A_32},
                 {"MURMUR", KETAMA_HASH_MURMUR},   {"JENKINS", KETAMA_HASH_JENKINS}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (word_is(v, vl, names[i].name)) {
            *fn = names[i].fn;
            return 0;
        }
    if (word_is(v, vl, "HSIEH"))
        return import__fail(c, line,
                            "libmemcached refuses HSIEH (\"--HASH can only be set once\": "
                            "Debian's library is built without it)");
    return import__fail(c, line,
                        "libmemcached's configuration parser does not know the hash \"%.*s\" "
                        "(MD5, CRC, FNV1_64, FNV1A_64, FNV1_32, FNV1A_32, MURMUR, JENKINS)",
                        (int)(vl < 30 ? vl : 30), v);
}

static int config_string(import_ctx *c, mc_state *m)
{
    size_t pos = 0;
    import_line l = {0};
    int rc;
    while (import__next_line(c->text, c->len, &pos, &l)) {
        size_t i = 0;
        if (l.len > 0 && l.s[0] == '#')
            continue;
        while (i < l.len) {
            if (l.s[i] == ' ' || l.s[i] == '\t') {
                i++;
                continue;
            }
            size_t st = i;
            while (i < l.len && l.s[i] != ' ' && l.s[i] != '\t')
                i++;
            const char *s = l.s + st;
            size_t sl = i - st;
            const char *eq = memchr(s, '=', sl);
            size_t kl = eq ? (size_t)(eq - s) + 1 : sl;
            const char *v = s + kl;
            size_t vl = sl - kl;
            if (word_is(s, kl, "--SERVER=")) {
                size_t h = scan_host(v, vl);
                /* an IPv4 address: ([0-9]{1,3}.){3}[0-9]{1,3} */
                {
                    size_t k = 0, parts = 0;
                    while (parts < 4) {
                        size_t d = digits(v + k, vl - k, 3);
                        if (d == 0 || d > 3)
                            break;
                        k += d;
                        parts++;
                        if (parts < 4) {
                            if (k >= vl || v[k] != '.')
                                break;
                            k++;
                        }
                    }
                    if (parts == 4 && k >= h)
                        h = k; /* IPADDRESS: the longer match wins, as flex takes it */
                }
                if (h == 0)
                    return import__fail(c, l.no,
                                        "libmemcached's configuration parser does not take the "
                                        "host in \"%.*s\" (a host name needs three or more "
                                        "characters, IPv6 is not read)",
                                        (int)(sl < 80 ? sl : 80), s);
                size_t k = h;
                unsigned port = MC_DEFAULT_PORT;
                unsigned long weight = 1;
                if (k < vl && v[k] == ':') {
                    size_t d = digits5(v + k + 1, vl - k - 1);
                    if (d == 0)
                        return bad_number(c, l.no, "port", "':'", s, sl);
                    port = (unsigned)(digits_value(v + k + 1, d) & 0xffff);
                    if (port == 0)
                        port = MC_DEFAULT_PORT;
                    k += 1 + d;
                }
                if (k + 1 < vl && v[k] == '/' && v[k + 1] == '?') {
                    size_t d = digits5(v + k + 2, vl - k - 2);
                    if (d == 0)
                        return bad_number(c, l.no, "weight", "\"/?\"", s, sl);
                    weight = digits_value(v + k + 2, d);
                    k += 2 + d;
                }
                if (k != vl)
                    return import__fail(c, l.no,
                                        "libmemcached's configuration parser stops at "
                                        "\"%.*s\"",
                                        (int)((vl - k) < 60 ? vl - k : 60), v + k);
                if ((rc = add_server_w(c, v, h, port, weight, l.no, m)) != 0)
                    return rc;
            } else if (word_is(s, kl, "--SOCKET=")) {
                const char *p = v;
                size_t pl = vl;
                unsigned long weight = 1;
                const char *wq = NULL;
                for (size_t k = 0; k + 1 < vl; k++)
                    if (v[k] == '/' && v[k + 1] == '?')
                        wq = v + k;
                if (wq != NULL) {
                    pl = (size_t)(wq - v);
                    /* the scanner's WEIGHT_START: "/?" and 1 to 5 digits */
                    size_t rest = vl - pl - 2, d = digits5(wq + 2, rest);
                    if (d == 0 || d != rest)
                        return bad_number(c, l.no, "weight", "\"/?\"", s, sl);
                    weight = digits_value(wq + 2, d);
                }
                if (pl >= 2 && p[0] == '"' && p[pl - 1] == '"') {
                    p++;
                    pl -= 2;
                }
                if (pl == 0)
                    return import__fail(c, l.no, "--SOCKET= needs a path");
                if ((rc = add_server_w(c, p, pl, 0, weight, l.no, m)) != 0)
                    return rc;
            } else if (word_is(s, kl, "--DISTRIBUTION=")) {
                if (vl >= 6 && (strncasecmp(v, "modula", 6) == 0 || strncasecmp(v, "random", 6) == 0))
                    return import__fail(c, l.no,
                                        "--DISTRIBUTION=%.*s does not hash consistently: "
                                        "ringsim imports ketama (consistent) clusters",
                                        (int)(vl < 20 ? vl : 20), v);
                /* consistent[,HASH]: CONSISTENT, weighting off, the
                 * continuum rebuilt; HASH is KETAMA_HASH, which placement
                 * never reads */
                if (vl < 10 || strncasecmp(v, "consistent", 10) != 0 || (vl > 10 && v[10] != ','))
                    return import__fail(c, l.no,
                                        "libmemcached's configuration parser expects "
                                        "CONSISTENT, MODULA or RANDOM in \"%.*s\"",
                                        (int)(sl < 60 ? sl : 60), s);
                if (vl > 10) {
                    ketama_hash_fn unused;
                    if ((rc = mc_hash_name(c, l.no, v + 11, vl - 11, &unused)) != 0 ||
                        (rc = import__note(c, l.no,
                                           "%.*s: libmemcached stores the hash after the "
                                           "comma as KETAMA_HASH and never uses it: the "
                                           "continuum and the keys use --HASH",
                                           (int)(sl < 60 ? sl : 60), s)) != 0)
                        return rc;
                }
                m->consistent = true;
                m->weighted = false;
                m->built = m->hash;
            } else if (word_is(s, kl, "--HASH=")) {
                if ((rc = mc_hash_name(c, l.no, v, vl, &m->hash)) != 0)
                    return rc;
                m->hash_line = l.no;
            } else if (word_is(s, kl, "--CONFIGURE-FILE=") || word_is(s, sl, "INCLUDE")) {
                if ((rc = import__note(c, l.no,
                                       "%.*s: not followed; servers in that file are "
                                       "not imported",
                                       (int)(sl < 100 ? sl : 100), s)) != 0)
                    return rc;
                if (word_is(s, sl, "INCLUDE")) { /* INCLUDE ' ' string */
                    while (i < l.len && l.s[i] == ' ')
                        i++;
                    while (i < l.len && l.s[i] != ' ')
                        i++;
                }
            } else if (word_is(s, sl, "END")) {
                return 0;
            } else if (sl > 2 && s[0] == '-' && s[1] == '-') {
                static const char *const known[] = {"--BINARY-PROTOCOL",
                                                    "--BUFFER-REQUESTS",
                                                    "--CONNECT-TIMEOUT=",
                                                    "--HASH-WITH-NAMESPACE",
                                                    "--IO-BYTES-WATERMARK=",
                                                    "--IO-KEY-PREFETCH=",
                                                    "--IO-MSG-WATERMARK=",
                                                    "--NOREPLY",
                                                    "--NUMBER-OF-REPLICAS=",
                                                    "--POLL-TIMEOUT=",
                                                    "--RANDOMIZE-REPLICA-READ",
                                                    "--RCV-TIMEOUT=",
                                                    "--REMOVE-FAILED-SERVERS=",
                                                    "--RETRY-TIMEOUT=",
                                                    "--SND-TIMEOUT=",
                                                    "--SOCKET-RECV-SIZE=",
                                                    "--SOCKET-SEND-SIZE=",
                                                    "--SORT-HOSTS",
                                                    "--SUPPORT-CAS",
                                                    "--TCP-KEEPALIVE",
                                                    "--TCP-KEEPIDLE",
                                                    "--TCP-NODELAY",
                                                    "--USE-UDP",
                                                    "--USER-DATA",
                                                    "--VERIFY-KEY",
                                                    "--POOL-MIN=",
                                                    "--POOL-MAX=",
                                                    "--NAMESPACE=",
                                                    "--FETCH-VERSION"};
                bool ok = false;
                for (size_t k = 0; k < sizeof known / sizeof *known && !ok; k++)
                    ok = word_is(s, kl, known[k]);
                if (!ok)
                    return import__fail(c, l.no, "libmemcached: unknown option \"%.*s\"",
                                        (int)(kl < 60 ? kl : 60), s);
                if (word_is(s, kl, "--SORT-HOSTS"))
                    rc = import__note(c, l.no,
                                      "--SORT-HOSTS: libmemcached sorts the servers "
                                      "by name before building the continuum; the "
                                      "nodes are imported in the text's order");
                else if (word_is(s, kl, "--NUMBER-OF-REPLICAS="))
                    rc = import__note(c, l.no,
                                      "%.*s: libmemcached writes copies to the next "
                                      "servers; set replicas in ringsim to see them",
                                      (int)(sl < 60 ? sl : 60), s);
                else
                    rc = import__note(c, l.no, "%.*s: placement does not depend on it",
                                      (int)(sl < 60 ? sl : 60), s);
                if (rc != 0)
                    return rc;
            } else {
                return import__fail(c, l.no,
                                    "libmemcached's configuration parser stops at "
                                    "\"%.*s\"",
                                    (int)(sl < 60 ? sl : 60), s);
            }
        }
    }
    return 0;
}

/* The mode a configuration string with --DISTRIBUTION=consistent gives:
 * ketama's params, weights dropped where libmemcached ignores them. */
static int consistent_mode(import_ctx *c, const mc_state *m)
{
    int rc;
    if (!m->weighted && m->built != m->hash)
        return import__fail(c, m->hash_line,
                            "--HASH=%s comes after the continuum was built: libmemcached "
                            "keeps its points hashed with %s while hashing keys with %s, a "
                            "mix ringsim does not simulate; put --HASH before the servers "
                            "and --DISTRIBUTION",
                            ketama_hash_names[m->hash], ketama_hash_names[m->built],
                            ketama_hash_names[m->hash]);
    if ((rc = import__param_str(c, "mode", m->weighted ? "ketama_weighted" : "consistent")) ||
        (rc = import__param_str(c, "key_hash", ketama_hash_names[m->hash])))
        return rc;
    if (m->weighted)
        return import__note(c, 0,
                            "--DISTRIBUTION=consistent, then a server of weight above 1: "
                            "libmemcached turns weighting on (the weighted continuum of "
                            "KETAMA_WEIGHTED), keys hashed with %s",
                            ketama_hash_names[m->hash]);
    if (m->weights) {
        for (size_t i = 0; i < c->r->n; i++)
            c->r->nodes[i].v.weight = 1;
        if ((rc = import__note(c, 0,
                               "the weights are not used: --DISTRIBUTION=consistent came "
                               "after the weighted servers and turned weighting off "
                               "(100 points per server); imported with weight 1")))
            return rc;
    }
    return import__note(c, 0,
                        "--DISTRIBUTION=consistent: libmemcached's unweighted continuum, 100 "
                        "points per server, keys and points hashed with %s",
                        ketama_hash_names[m->hash]);
}

int import__libmemcached(import_ctx *c)
{
    strcpy(c->r->algorithm, "ketama");
    size_t i = 0;
    while (i < c->len && isspace((unsigned char)c->text[i]))
        i++;
    bool cfg = false;
    /* A configuration string starts with an option (or a comment line). */
    if (i + 1 < c->len && ((c->text[i] == '-' && c->text[i + 1] == '-') || c->text[i] == '#'))
        cfg = true;
    mc_state m = {.hash = KETAMA_HASH_ONE_AT_A_TIME, .built = KETAMA_HASH_ONE_AT_A_TIME};
    int rc = cfg ? config_string(c, &m) : server_list(c);
    if (rc == 0 && m.consistent)
        return consistent_mode(c, &m);
    if (rc == 0 && m.hash_line)
        rc = import__note(c, m.hash_line,
                          "--HASH=%s: without --DISTRIBUTION the client's KETAMA_WEIGHTED "
                          "sets MD5, which replaces it",
                          ketama_hash_names[m.hash]);
    if (rc == 0)
        rc = import__note(c, 0,
                          "libmemcached places keys this way with "
                          "MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED set by the client");
    return rc;
}
