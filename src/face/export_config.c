/*
 * export_config.c - the current nodes as a real system's configuration or
 * status text (see export_config.h).
 *
 * What each writer relies on, from the importers (import_*.c) and the
 * programs they follow:
 *   nginx        `server ADDRESS weight=N [down];` in an upstream with `hash
 *                $request_uri consistent;`: the node's name is the address as
 *                written (ngx_http_upstream_hash_module hashes the server's
 *                name); a name with spaces, quotes, ';', '{', '}', '#' or '$' is
 *                written as a double-quoted string with \" and \\ escaped
 *                (ngx_conf_file.c reads quoted tokens so).  Backup servers go
 *                before `hash`, where nginx accepts them (and keeps them off
 *                the ring).  Each server line is read back by the nginx
 *                importer: a name nginx does not take as an address is
 *                refused with its words.
 *   haproxy      `server NAME ADDR [id N] weight W [backup] [disabled]` in a
 *                `backend` with `balance uri` and `hash-type consistent`;
 *                HAProxy refuses server and proxy names with characters other
 *                than letters, digits, '.', '-', '_' and ':' (invalid_char());
 *                an address is one parse_line word, single-quoted when it
 *                holds more than letters, digits and ".-_:/@[]".
 *   libmemcached a server list, memcached_servers_parse's form: HOST:PORT:W,
 *                the node named HOST meaning port 11211; under ketama's
 *                other modes (or another key hash) a configuration string
 *                `--HASH=H --DISTRIBUTION=consistent --SERVER=HOST:PORT...`.
 *   nginx, haproxy: `hash $request_uri;` and `hash-type map-based` for the
 *                modulo variants (consistent 0, hash_type map-based).
 *   twemproxy    a pool with `- "ADDR:W NAME"`: nutcracker takes the name
 *                after the last space, so a name cannot hold one; YAML
 *                escapes for what libyaml would fold or refuse (U+0085...).
 *   envoy        a v3 Cluster as JSON, each host with its name as the envoy.lb
 *                `hash_key`: any name, JSON-escaped.
 *   cassandra    `initial_token: T1,T2,...` per node (cassandra.yaml), after
 *                a comment naming the node, as a quoted YAML scalar when
 *                the name holds a YAML line break (which would end the
 *                comment and start a setting); then the node's
 *                cassandra-rackdc.properties (`dc=`, `rack=`: its location,
 *                datacenter1 and rack1 when absent) as comment lines
 *                "#   dc=...", escaped as java.util.Properties.load reads an
 *                ISO 8859-1 stream back: every byte outside printable ASCII
 *                as \uXXXX (so U+2028 and its kind cannot end the comment),
 *                \ = : # ! and a leading space escaped.
 *   nodetool-ring, redis-nodes: the text `nodetool ring` and `CLUSTER NODES`
 *                print, which the importers read back.
 *   redis        `redis-cli --cluster` commands from the imported slot map to
 *                the current one: add-node for masters that are new, one
 *                reshard per (from, to) pair in slot order, del-node for
 *                masters that left.  redis-cli's reshard with one source
 *                moves that source's lowest slots (clusterManagerComputeReshard
 *                Table walks slots from 0): a command whose slots are not the
 *                source's lowest at its turn says so in a comment.  Every
 *                value is quoted for sh, and only HOST:PORT names of plain
 *                characters reach the script.
 */
#define _GNU_SOURCE
#include "export_config.h"

#include <arpa/inet.h>
#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_ceph.h"
#include "alg_ketama.h"
#include "alg_redis.h"
#include "alg_twemproxy.h"
#include "crushmap.h"
#include "import.h"
#include "sbuf.h"
#include "vec.h"

typedef struct ex {
    sim *s;
    const place_node *pn;
    size_t n;
    const placement *pl;
    json_t *imp;     /* params of the import the state stands on, or NULL */
    int64_t imp_id;  /* its operation */
    const char *fmt; /* the format written */
    sbuf b;
    rs_error *err;
} ex;

static int nomem(ex *x) { return rs_fail(x->err, RINGSIM_ENOMEM, "out of memory"); }

static int add(ex *x, const char *s, size_t n) { return sb_add(&x->b, s, n) ? nomem(x) : 0; }
static int str(ex *x, const char *s) { return add(x, s, strlen(s)); }

static int fmt(ex *x, const char *f, ...) __attribute__((format(printf, 2, 3)));
static int fmt(ex *x, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int rc = sb_vprintf(&x->b, f, ap);
    va_end(ap);
    if (rc == RINGSIM_EINTERNAL)
        return rs_fail(x->err, RINGSIM_EINTERNAL, "export: a line is too long");
    return rc ? nomem(x) : 0;
}

/* The imported section's name when the import was of this format. */
static const char *section(const ex *x, const char *import_format, const char *dflt)
{
    const char *f = json_string_value(json_object_get(x->imp, "format"));
    const char *nm = json_string_value(json_object_get(x->imp, "name"));
    return f && nm && *nm && !strcmp(f, import_format) ? nm : dflt;
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* "HOST:PORT" split at the last ':', PORT in plain decimal 1..65535 (no
 * sign, no leading zero): *hlen the host's length; false otherwise. */
static bool split_port(const char *s, size_t len, size_t *hlen, long *port)
{
    const char *c = memrchr(s, ':', len);
    if (!c || c + 1 == s + len || c[1] == '0' || s + len - (c + 1) > 5)
        return false;
    long p = 0;
    for (const char *d = c + 1; d < s + len; d++) {
        if (*d < '0' || *d > '9')
            return false;
        p = p * 10 + (*d - '0');
    }
    *hlen = (size_t)(c - s);
    *port = p;
    return p <= 65535;
}

/* A host that every format here and every resolver reads as itself: a DNS
 * name or an IPv4 address (letters, digits, '.', '-', '_', starting with a
 * letter or a digit), or an IPv6 address in brackets (hex digits, ':',
 * '.').  Nothing a shell, a configuration tokenizer or YAML reads apart. */
static bool plain_host(const char *s, size_t len)
{
    if (len > 2 && s[0] == '[' && s[len - 1] == ']') {
        for (size_t i = 1; i + 1 < len; i++)
            if (!strchr("0123456789abcdefABCDEF:.", s[i]))
                return false;
        return true;
    }
    if (!len || !alnum(s[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!alnum(s[i]) && s[i] != '.' && s[i] != '-' && s[i] != '_')
            return false;
    return true;
}

/* "host:port" with a plain host (above) and a port of 1..65535: an address
 * that means the same in every format. */
static bool is_host_port(const char *s, size_t len)
{
    size_t hl;
    long port;
    return split_port(s, len, &hl, &port) && plain_host(s, hl);
}

/* The imported address of node i, when the import wrote one apart from its
 * name.  An address is written in the grammar of the format it was read
 * from (a HAProxy address may hold a space, a twemproxy one is the text
 * before the weight): it is taken as it stands from an import of the format
 * exported, and from another format only when it is a plain host:port,
 * which every format reads alike; otherwise the export writes its own
 * placeholder, as for a node that has no address. */
static bool same_format(const ex *x)
{
    const char *f = json_string_value(json_object_get(x->imp, "format"));
    return f && !strcmp(f, x->fmt);
}

static const char *address(const ex *x, size_t i)
{
    bool same = same_format(x);
    json_t *e;
    size_t k;
    json_array_foreach(json_object_get(x->imp, "nodes"), k, e)
    {
        json_t *nm = json_object_get(e, "name");
        if (json_string_length(nm) == x->pn[i].len &&
            !memcmp(json_string_value(nm), x->pn[i].name, x->pn[i].len)) {
            json_t *a = json_object_get(e, "address");
            const char *as = json_string_value(a);
            return as && (same || is_host_port(as, json_string_length(a))) ? as : NULL;
        }
    }
    return NULL;
}

/* The address to write for node i: the imported one (above), else its name
 * when that is a plain host:port (a node named 10.0.0.1:80), else NULL. */
static const char *address_or_name(const ex *x, size_t i, char *buf, size_t size)
{
    const char *a = address(x, i);
    if (a)
        return a;
    if (x->pn[i].len < size && is_host_port(x->pn[i].name, x->pn[i].len)) {
        memcpy(buf, x->pn[i].name, x->pn[i].len);
        buf[x->pn[i].len] = '\0';
        return buf;
    }
    return NULL;
}

static int refuse(ex *x, size_t i, const char *why)
{
    return rs_fail(x->err, RINGSIM_EPARAM, "export --config %s: node \"%.200s\" %s", x->fmt,
                   x->pn[i].name, why);
}

/* A whole weight from lo to hi, as the program reads weights. */
static int whole_weight(ex *x, size_t i, double lo, double hi, long *w)
{
    double v = x->pn[i].weight;
    *w = 0;
    if (v != floor(v) || v < lo || v > hi) {
        char why[160];
        snprintf(why, sizeof why, "has weight %g: %s takes whole weights from %g to %g", v, x->fmt,
                 lo, hi);
        return refuse(x, i, why);
    }
    *w = (long)v;
    return 0;
}

static bool has_nul(const place_node *n) { return memchr(n->name, 0, n->len) != NULL; }

static bool starts(const place_node *n, const char *w)
{
    return n->len >= strlen(w) && !memcmp(n->name, w, strlen(w));
}

/* ---- nginx ---- */

static int nginx_word(ex *x, const char *s, size_t len)
{
    bool quote = len == 0;
    for (size_t i = 0; i < len && !quote; i++)
        quote = strchr(" \t\r\n\"';{}#$\\", s[i]) != NULL;
    if (!quote)
        return add(x, s, len);
    int rc = str(x, "\"");
    for (size_t i = 0; !rc && i < len; i++)
        rc = s[i] == '"' || s[i] == '\\' ? add(x, "\\", 1) || add(x, s + i, 1) : add(x, s + i, 1);
    return rc ? rc : str(x, "\"");
}

/* The address nginx reads from node i's server line, checked by the nginx
 * importer (import_nginx.c, ngx_parse_url's rules): a name nginx refuses as
 * an address (a '/' or '?' in a host, a port of 0 or past 65535, "[" that
 * is not an IPv6 address, "unix:" without a path) is refused, naming
 * nginx's words; one that reads back as another name too.  One small
 * parse per node: O(name). */
static int nginx_check(ex *x, size_t i)
{
    ex one = {.err = x->err};
    int rc = str(&one, "upstream u {\n    hash $k consistent;\n    server ");
    if (!rc)
        rc = nginx_word(&one, x->pn[i].name, x->pn[i].len);
    if (!rc)
        rc = str(&one, ";\n}\n");
    import_result *r = NULL;
    rs_error e = {0};
    int line = 0;
    if (!rc && import_parse(one.b.p, one.b.n, IMPORT_NGINX, NULL, &r, &line, &e) == RINGSIM_ENOMEM)
        rc = nomem(x);
    const import_node *n = !rc && r && import_node_count(r) == 1 ? import_node_at(r, 0) : NULL;
    if (!rc && !r) {
        char why[400];
        snprintf(why, sizeof why, "is not an address nginx reads: %s", e.msg);
        rc = refuse(x, i, why);
    } else if (!rc && (!n || n->len != x->pn[i].len || memcmp(n->name, x->pn[i].name, n->len)))
        rc = refuse(x, i, "does not read back from an nginx server line as itself");
    import_free(r);
    free(one.b.p);
    return rc;
}

static int nginx_server(ex *x, size_t i, bool backup)
{
    long w;
    int rc = whole_weight(x, i, 1, 1000, &w);
    if (!rc)
        rc = nginx_check(x, i);
    if (!rc)
        rc = str(x, "    server ");
    if (!rc)
        rc = nginx_word(x, x->pn[i].name, x->pn[i].len);
    if (!rc && w != 1)
        rc = fmt(x, " weight=%ld", w);
    if (!rc && x->pn[i].down)
        rc = str(x, " down");
    if (!rc && backup)
        rc = str(x, " backup");
    return rc ? rc : str(x, ";\n");
}

static int write_nginx(ex *x)
{
    const char *up = section(x, "nginx", "ringsim");
    int rc = str(x, "upstream ");
    if (!rc)
        rc = nginx_word(x, up, strlen(up));
    if (!rc)
        rc = str(x, " {\n");
    for (size_t i = 0; !rc && i < x->n; i++) /* nginx takes backup only before hash */
        if (x->pn[i].backup)
            rc = nginx_server(x, i, true);
    const place_config *cfg = sim_config(x->s);
    bool plain = !strcmp(cfg->algorithm, "nginx") && cfg->param[PP_NGINX_CONSISTENT] == 0;
    if (!rc)
        rc = str(x, plain ? "    hash $request_uri;\n" : "    hash $request_uri consistent;\n");
    for (size_t i = 0; !rc && i < x->n; i++)
        if (!x->pn[i].backup)
            rc = nginx_server(x, i, false);
    return rc ? rc : str(x, "}\n");
}

/* ---- haproxy ---- */

/* HAProxy's invalid_char(): names of letters, digits, '.', '-', '_', ':'. */
static bool haproxy_name_ok(const char *s, size_t len)
{
    if (!len)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == ':'))
            return false;
    }
    return true;
}

/* One word as HAProxy's parse_line reads it back: bare when it holds only
 * letters, digits and ".-_:/@[]", else single-quoted (no expansion, no
 * escape inside), a ' written as '\'' (a backslash outside quotes takes
 * the next character as it is).  A bare address with a space would end
 * there, and its next word ("backup", "disabled", "#...") be read as a
 * keyword or a comment. */
static int haproxy_word(ex *x, const char *s, size_t len)
{
    bool bare = len > 0;
    for (size_t i = 0; i < len && bare; i++)
        bare = alnum(s[i]) || strchr(".-_:/@[]", s[i]);
    if (bare)
        return add(x, s, len);
    int rc = str(x, "'");
    for (size_t i = 0; !rc && i < len; i++)
        rc = s[i] == '\'' ? str(x, "'\\''") : add(x, s + i, 1);
    return rc ? rc : str(x, "'");
}

static int write_haproxy(ex *x)
{
    const char *be = section(x, "haproxy", "ringsim");
    if (!haproxy_name_ok(be, strlen(be)))
        be = "ringsim";
    const place_config *cfg = sim_config(x->s);
    bool map = !strcmp(cfg->algorithm, "haproxy") && cfg->param[PP_HASH_TYPE] == 1;
    int rc = fmt(x, "backend %s\n    balance uri\n    hash-type %s\n", be,
                 map ? "map-based" : "consistent");
    if (!rc && !strcmp(cfg->algorithm, "haproxy") && cfg->param[PP_HASH_BALANCE_FACTOR])
        rc = fmt(x, "    hash-balance-factor %lld\n", (long long)cfg->param[PP_HASH_BALANCE_FACTOR]);
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        long w;
        if (!haproxy_name_ok(p->name, p->len))
            return refuse(x, i,
                          "cannot be a HAProxy server name (letters, digits, '.', '-', '_' "
                          "and ':' only)");
        if ((rc = whole_weight(x, i, 0, 256, &w)))
            return rc;
        char ab[300];
        const char *a = address_or_name(x, i, ab, sizeof ab);
        rc = str(x, "    server ");
        if (!rc)
            rc = add(x, p->name, p->len);
        if (!rc)
            rc = str(x, " ");
        if (!rc)
            rc = a ? haproxy_word(x, a, strlen(a)) : fmt(x, "127.0.0.1:%zu", 8000 + i % 50000);
        if (!rc && p->srv_id)
            rc = fmt(x, " id %lld", (long long)p->srv_id);
        if (!rc)
            rc = fmt(x, " weight %ld", w);
        if (!rc && p->backup)
            rc = str(x, " backup");
        if (!rc && p->down)
            rc = str(x, " disabled");
        if (!rc)
            rc = str(x, "\n");
    }
    return rc;
}

/* ---- libmemcached ---- */

/* Why memcached_servers_parse would not read name back as a server of
 * that name (libmemcached names a server HOST for port 11211, else
 * HOST:PORT), or NULL. */
static const char *libmemcached_why(const char *s, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (s[k] == ',' || s[k] == ' ' || (unsigned char)s[k] < 0x21)
            return "holds a space or a comma, which a server list cannot";
    if ((len >= 2 && s[0] == '-' && s[1] == '-') || s[0] == '#')
        return "starts with '--' or '#': a server text that starts so is a configuration "
               "string, whose options libmemcached reads instead of servers";
    if (s[0] == ':')
        return "has no host before ':' (libmemcached reads localhost)";
    if (s[0] == '/')
        return memchr(s, ':', len) ? "is a socket path with a ':', where libmemcached reads "
                                     "a port"
                                   : NULL;
    const char *open = memchr(s, '[', len), *close = memchr(s, ']', len);
    if ((open || close) && (s[0] != '[' || !close || memchr(s + 1, '[', len - 1)))
        return "has a '[' or ']' that is not an [IPv6] address";
    const char *after = close ? close + 1 : s; /* where the port's ':' is looked for */
    const char *colon = memchr(after, ':', len - (size_t)(after - s));
    if (!colon)
        return close && after != s + len ? "has text after ']' that is not :PORT" : NULL;
    if (close && colon != after)
        return "has text after ']' that is not :PORT";
    size_t hl;
    long port;
    if (memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)))
        return "has two ':': write an IPv6 address as [ADDRESS]:PORT";
    if (!split_port(s, len, &hl, &port))
        return "has a ':' not followed by a port of 1 to 65535";
    if (port == 11211)
        return "ends with :11211, which libmemcached names without the port";
    return NULL;
}

/* ketama's modes other than the weighted default, as a configuration
 * string memcached() builds the same continuum from: --HASH first (so the
 * continuum is built with it), --DISTRIBUTION=consistent, then the
 * servers; their weights only in mode ketama_weighted (a weight above 1
 * pushed after --DISTRIBUTION turns weighting on). */
static int write_libmemcached_string(ex *x, const place_config *cfg)
{
    static const char *const upper[KETAMA_NHASH] = {
        [KETAMA_HASH_MD5] = "MD5",         [KETAMA_HASH_CRC] = "CRC",
        [KETAMA_HASH_FNV1_64] = "FNV1_64", [KETAMA_HASH_FNV1A_64] = "FNV1A_64",
        [KETAMA_HASH_FNV1_32] = "FNV1_32", [KETAMA_HASH_FNV1A_32] = "FNV1A_32",
        [KETAMA_HASH_MURMUR] = "MURMUR",   [KETAMA_HASH_JENKINS] = "JENKINS"};
    ketama_mode mode = (ketama_mode)cfg->param[PP_KETAMA_MODE];
    ketama_hash_fn fn = ketama_hash_resolve(mode, (ketama_hash_fn)cfg->param[PP_KETAMA_HASH]);
    bool weighted = mode == KETAMA_MODE_WEIGHTED, heavy = false;
    int rc = upper[fn] ? fmt(x, "--HASH=%s ", upper[fn]) : 0;
    if (!rc)
        rc = str(x, "--DISTRIBUTION=consistent");
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        long w;
        if ((rc = whole_weight(x, i, 1, 99999, &w)))
            return rc;
        heavy |= w > 1;
        if (p->name[0] == '/') {
            /* Quoted, the path may not hold a quote, a space or an option. */
            for (size_t k = 0; k < p->len; k++) {
                unsigned char c = (unsigned char)p->name[k];
                if (!(c < 0x80 && (isalnum(c) || c == '.' || c == '_' || c == '-' || c == '/')))
                    return refuse(x, i,
                                  "cannot be a --SOCKET= of libmemcached's configuration "
                                  "string (letters, digits, '.', '_', '-', '/')");
            }
            rc = str(x, " --SOCKET=\"") || add(x, p->name, p->len) || str(x, "\"");
        } else {
            ketama_server sv;
            if (p->name[0] == '[' || ketama_parse_name(p->name, p->len, &sv, NULL) || sv.host_len < 3)
                return refuse(x, i,
                              "cannot be a --SERVER= of libmemcached's configuration string "
                              "(a host of three characters or more, or IPv4; no IPv6)");
            for (size_t k = 0; k < sv.host_len; k++) {
                unsigned char c = (unsigned char)sv.host[k];
                if (!(c < 0x80 && (isalnum(c) || c == '.' || c == '_' || c == '-')))
                    return refuse(x, i,
                                  "cannot be a --SERVER= of libmemcached's configuration "
                                  "string (letters, digits, '.', '_', '-')");
            }
            rc = str(x, " --SERVER=") || add(x, sv.host, sv.host_len) ||
                 fmt(x, ":%u", (unsigned)sv.port);
        }
        if (!rc && weighted)
            rc = fmt(x, "/?%ld", w);
    }
    if (!rc && weighted && !heavy)
        return rs_fail(x->err, RINGSIM_EPARAM,
                       "export --config libmemcached: mode ketama_weighted with key_hash %s "
                       "and every weight 1 has no configuration string (libmemcached turns "
                       "weighting on only for a weight above 1; a client sets "
                       "KETAMA_WEIGHTED, then MEMCACHED_BEHAVIOR_HASH)",
                       ketama_hash_names[fn]);
    return rc ? rc : str(x, "\n");
}

static int write_libmemcached(ex *x)
{
    int rc = 0;
    const place_config *cfg = sim_config(x->s);
    if (!strcmp(cfg->algorithm, "ketama") && (cfg->param[PP_KETAMA_MODE] != KETAMA_MODE_WEIGHTED ||
                                              (cfg->param[PP_KETAMA_HASH] != KETAMA_HASH_AUTO &&
                                               cfg->param[PP_KETAMA_HASH] != KETAMA_HASH_MD5)))
        return write_libmemcached_string(x, cfg);
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        long w;
        const char *why = libmemcached_why(p->name, p->len);
        if (why)
            return refuse(x, i, why);
        if ((rc = whole_weight(x, i, 1, 100000, &w)))
            return rc;
        /* HOST means port 11211; HOST:PORT and [IPv6]:PORT as written. */
        bool v6 = p->name[0] == '[';
        bool has_port = v6 ? p->name[p->len - 1] != ']' : !!memchr(p->name, ':', p->len);
        if (i && (rc = str(x, ",")))
            return rc;
        rc = add(x, p->name, p->len);
        /* A socket has no port, but the weight follows the port's place:
         * "/path:W" is read as port W and weight 1. */
        if (!rc && (p->name[0] == '/' || !has_port))
            rc = str(x, p->name[0] == '/' ? ":0" : ":11211");
        if (!rc)
            rc = fmt(x, ":%ld", w);
    }
    return rc ? rc : str(x, "\n");
}

/* ---- twemproxy ---- */

/* The escape YAML needs for the character at s[i] (of len bytes), into esc
 * (at least 16 bytes), or "" when it is written as it is; *n its bytes.
 * Escaped: '"' and '\\'; the C0 and C1 controls and DEL; YAML 1.1's line
 * breaks U+0085, U+2028 and U+2029 (SnakeYAML, PyYAML and libyaml end a
 * comment there and fold them in a quoted scalar); U+FEFF, U+FFFE and
 * U+FFFF, which libyaml refuses inside a text. */
static const char *yaml_escape(const char *s, size_t i, size_t len, char esc[16], size_t *n)
{
    unsigned char c = (unsigned char)s[i];
    unsigned char c1 = i + 1 < len ? (unsigned char)s[i + 1] : 0;
    unsigned char c2 = i + 2 < len ? (unsigned char)s[i + 2] : 0;
    *n = 1;
    if (c == '"' || c == '\\')
        snprintf(esc, 16, "\\%c", c);
    else if (c < 0x20 || c == 0x7f)
        snprintf(esc, 16, "\\x%02x", c);
    else if (c == 0xc2 && c1 >= 0x80 && c1 <= 0x9f) {
        *n = 2;
        snprintf(esc, 16, "\\x%02x", c1);
    } else if ((c == 0xe2 && c1 == 0x80 && (c2 == 0xa8 || c2 == 0xa9)) ||
               (c == 0xef && c1 == 0xbb && c2 == 0xbf) || (c == 0xef && c1 == 0xbf && c2 >= 0xbe)) {
        *n = 3;
        snprintf(esc, 16, "\\u%04x", ((c & 0x0fu) << 12) | ((c1 & 0x3fu) << 6) | (c2 & 0x3fu));
    } else
        return "";
    return esc;
}

/* s as a YAML double-quoted scalar: reads back as exactly s. */
static int yaml_quoted(ex *x, const char *s, size_t len)
{
    int rc = str(x, "\"");
    for (size_t i = 0, n; !rc && i < len; i += n) {
        char esc[16];
        const char *e = yaml_escape(s, i, len, esc, &n);
        rc = *e ? str(x, e) : add(x, s + i, 1);
    }
    return rc ? rc : str(x, "\"");
}

/* Whether s needs yaml_quoted to be read as itself in a comment. */
static bool yaml_plain(const char *s, size_t len)
{
    for (size_t i = 0, n; i < len; i += n) {
        char esc[16];
        if (*yaml_escape(s, i, len, esc, &n))
            return false;
    }
    return true;
}

static int write_twemproxy(ex *x)
{
    const place_config *cfg = sim_config(x->s);
    const char *pool = section(x, "twemproxy", "ringsim");
    int64_t h = !strcmp(cfg->algorithm, "twemproxy") ? cfg->param[PP_HASH] : TW_DEFAULT_HASH;
    int rc = yaml_quoted(x, pool, strlen(pool));
    if (!rc)
        rc = fmt(x,
                 ":\n  listen: 127.0.0.1:22121\n  hash: %s\n  distribution: ketama\n"
                 "  servers:\n",
                 twemproxy_hash_names[h]);
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        long w;
        for (size_t k = 0; k < p->len; k++)
            if (p->name[k] == ' ' || (unsigned char)p->name[k] < 0x20)
                return refuse(x, i, "holds a space: nutcracker takes the name after the last one");
        if ((rc = whole_weight(x, i, 1, 100000, &w)))
            return rc;
        char ab[300];
        const char *a = address_or_name(x, i, ab, sizeof ab);
        if (!a) {
            snprintf(ab, sizeof ab, "127.0.0.1:%zu", 11211 + i % 50000);
            a = ab;
        }
        char line[600];
        int n = snprintf(line, sizeof line, "%s:%ld ", a, w);
        if (n < 0 || (size_t)n >= sizeof line)
            return refuse(x, i, "has an address too long to write");
        sbuf one = {0};
        if (sb_add(&one, line, (size_t)n) || sb_add(&one, p->name, p->len)) {
            free(one.p);
            return nomem(x);
        }
        rc = str(x, "    - ");
        if (!rc)
            rc = yaml_quoted(x, one.p, one.n);
        free(one.p);
        if (!rc)
            rc = str(x, "\n");
    }
    return rc;
}

/* ---- envoy ---- */

static int write_envoy(ex *x)
{
    const place_config *cfg = sim_config(x->s);
    bool maglev = !strcmp(cfg->algorithm, "maglev");
    json_t *eps = json_array();
    json_t *c = json_pack("{s:s, s:s, s:s, s:{s:s, s:[{s:o}]}}", "name",
                          section(x, "envoy", "ringsim"), "type", "STATIC", "lb_policy",
                          maglev ? "MAGLEV" : "RING_HASH", "load_assignment", "cluster_name",
                          section(x, "envoy", "ringsim"), "endpoints", "lb_endpoints", eps);
    if (!c)
        return nomem(x);
    if (maglev)
        json_object_set_new(c, "maglev_lb_config",
                            json_pack("{s:I}", "table_size", (json_int_t)cfg->param[PP_TABLE_SIZE]));
    else if (!strcmp(cfg->algorithm, "envoy-ring"))
        json_object_set_new(c, "ring_hash_lb_config",
                            json_pack("{s:I, s:I}", "minimum_ring_size",
                                      (json_int_t)cfg->param[PP_MIN_RING_SIZE], "maximum_ring_size",
                                      (json_int_t)cfg->param[PP_MAX_RING_SIZE]));
    int rc = 0;
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        long w;
        if ((rc = whole_weight(x, i, 1, 4294967295.0, &w)))
            break;
        char ab[300];
        const char *a = address_or_name(x, i, ab, sizeof ab);
        char host[300];
        long port = 8000 + (long)(i % 50000);
        snprintf(host, sizeof host, "127.0.0.1");
        size_t hl;
        long ap;
        bool pipe = a && a[0] == '/';
        if (a && !pipe && split_port(a, strlen(a), &hl, &ap) && hl + 1 < sizeof host) {
            /* Envoy writes an IPv6 address without brackets; a STATIC
             * cluster takes IP addresses only, so a host name is kept
             * only from an Envoy import (whose cluster resolved it). */
            bool v6 = hl > 2 && a[0] == '[' && a[hl - 1] == ']';
            snprintf(host, sizeof host, "%.*s", (int)(v6 ? hl - 2 : hl), v6 ? a + 1 : a);
            unsigned char bin[16];
            if (inet_pton(v6 ? AF_INET6 : AF_INET, host, bin) == 1 || same_format(x))
                port = ap;
            else
                snprintf(host, sizeof host, "127.0.0.1");
        }
        json_t *e = pipe ? json_pack("{s:{s:{s:{s:s}}}, s:I, s:{s:{s:{s:s%}}}}", "endpoint",
                                     "address", "pipe", "path", a, "load_balancing_weight",
                                     (json_int_t)w, "metadata", "filter_metadata", "envoy.lb",
                                     "hash_key", p->name, p->len)
                         : json_pack("{s:{s:{s:{s:s, s:i}}}, s:I, s:{s:{s:{s:s%}}}}", "endpoint",
                                     "address", "socket_address", "address", host, "port_value",
                                     (int)port, "load_balancing_weight", (json_int_t)w, "metadata",
                                     "filter_metadata", "envoy.lb", "hash_key", p->name, p->len);
        if (e && p->down)
            json_object_set_new(e, "health_status", json_string("UNHEALTHY"));
        if (!e || json_array_append_new(eps, e))
            rc = nomem(x);
    }
    char *t = rc ? NULL : json_dumps(c, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(c);
    if (!rc && !t)
        rc = nomem(x);
    /* JSON takes any character in a string, but YAML readers (Envoy takes
     * its configuration as YAML too) read U+0085, U+2028 and U+2029 as line
     * breaks and refuse C1 controls and U+FEFF: those are written as \\u
     * escapes, which both read as the character.  jansson writes non-ASCII
     * bytes only inside strings. */
    size_t tl = t ? strlen(t) : 0;
    for (size_t i = 0, n; !rc && i < tl; i += n) {
        char esc[16];
        const char *e = yaml_escape(t, i, tl, esc, &n);
        if (*e && (unsigned char)t[i] >= 0x80) {
            unsigned cp = n == 2 ? (unsigned char)t[i + 1]
                                 : (((unsigned char)t[i] & 0x0fu) << 12) |
                                       (((unsigned char)t[i + 1] & 0x3fu) << 6) |
                                       ((unsigned char)t[i + 2] & 0x3fu);
            rc = fmt(x, "\\u%04x", cp);
        } else {
            n = 1;
            rc = add(x, t + i, 1);
        }
    }
    free(t);
    return rc ? rc : str(x, "\n");
}

/* ---- cassandra and nodetool ring ---- */

static json_t *node_tokens(ex *x, size_t i)
{
    json_t *o = json_object();
    if (o)
        place_node_json(x->pl, i, o);
    json_t *t = json_incref(json_object_get(o, "tokens"));
    json_decref(o);
    return t;
}

/* The formats that write a layout of tokens or of slots ask the placement
 * table whether the algorithm in use keeps one (never its name), and
 * refuse otherwise: 0 or RINGSIM_EPARAM naming what the format writes and
 * the system whose algorithm keeps it. */
static int need_layout(ex *x, bool has, const char *writes, const char *system)
{
    if (!has)
        return rs_fail(x->err, RINGSIM_EPARAM,
                       "export --config %s writes %s: the algorithm is %s, which keeps none "
                       "(config --algorithm %s first)",
                       x->fmt, writes, sim_config(x->s)->algorithm, system);
    return 0;
}

static int need_cassandra(ex *x)
{
    return need_layout(x, place_takes_tokens(sim_config(x->s)->algorithm), "Cassandra tokens",
                       "cassandra");
}

/* A properties value as Properties.load reads it back (see the top):
 * printable ASCII as it is but for \ = : # ! and a leading space, every
 * other character as \uXXXX (UTF-16, a surrogate pair above U+FFFF).
 * Names are valid UTF-8 (the rules for names). */
static int put_property(ex *x, const char *s)
{
    int rc = 0;
    for (size_t i = 0; !rc && s[i];) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp = c;
        size_t n = 1;
        if (c >= 0xf0)
            n = 4, cp = c & 0x07u;
        else if (c >= 0xe0)
            n = 3, cp = c & 0x0fu;
        else if (c >= 0xc0)
            n = 2, cp = c & 0x1fu;
        for (size_t k = 1; k < n && s[i + k]; k++)
            cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3fu);
        if (cp > 0xffff) {
            cp -= 0x10000;
            rc = fmt(x, "\\u%04x\\u%04x", 0xd800u + (cp >> 10), 0xdc00u + (cp & 0x3ffu));
        } else if (cp < 0x20 || cp >= 0x7f) {
            rc = fmt(x, "\\u%04x", cp);
        } else if (strchr("\\=:#!", (int)cp) || (cp == ' ' && i == 0)) {
            rc = fmt(x, "\\%c", (int)cp);
        } else {
            rc = add(x, s + i, 1);
        }
        i += n;
    }
    return rc;
}

static int write_cassandra(ex *x)
{
    int rc = need_cassandra(x);
    for (size_t i = 0; !rc && i < x->n; i++) {
        json_t *t = node_tokens(x, i), *v;
        size_t k;
        /* The name in a comment, which a line break ends: as it is, or as a
         * quoted YAML scalar when it holds a character that must be
         * escaped (a YAML line break would start a setting). */
        rc = str(x, "# ");
        if (!rc)
            rc = yaml_plain(x->pn[i].name, x->pn[i].len)
                     ? add(x, x->pn[i].name, x->pn[i].len)
                     : yaml_quoted(x, x->pn[i].name, x->pn[i].len);
        if (!rc)
            rc = str(x, "\ninitial_token: ");
        json_array_foreach(t, k, v)
        {
            if (!rc)
                rc = fmt(x, "%s%s", k ? "," : "", json_string_value(v));
        }
        json_decref(t);
        if (!rc)
            rc = str(x, "\n");
        /* its cassandra-rackdc.properties (GossipingPropertyFileSnitch) */
        const place_node *pn = &x->pn[i];
        const char *dc = place_loc_get(pn->loc, pn->nloc, "dc");
        const char *rack = place_loc_get(pn->loc, pn->nloc, "rack");
        if (!rc)
            rc = str(x, "# cassandra-rackdc.properties:\n#   dc=");
        if (!rc)
            rc = put_property(x, dc ? dc : "datacenter1");
        if (!rc)
            rc = str(x, "\n#   rack=");
        if (!rc)
            rc = put_property(x, rack ? rack : "rack1");
        if (!rc)
            rc = str(x, "\n");
    }
    return rc;
}

/* The CRUSH map the ceph placement maps through, as crushtool -d writes
 * one (crushmap.c): every weight exact, so crushtool -c compiles it to the
 * same mappings; the pool's rule is rule 0. */
static int write_crushmap(ex *x)
{
    const ceph_map *m = place_ceph_map(x->pl); /* NULL: the algorithm keeps no CRUSH map */
    int rc = need_layout(x, m != NULL, "a CRUSH map", "ceph");
    if (!rc)
        rc = fmt(x, "# ringsim: pool %lld, pg_num %lld, %s\n",
                 (long long)sim_config(x->s)->param[PP_CEPH_POOL],
                 (long long)sim_config(x->s)->param[PP_PG_NUM],
                 sim_config(x->s)->param[PP_POOL_TYPE] ? "erasure" : "replicated");
    if (!rc && crushmap_write(m, &x->b))
        rc = nomem(x);
    return rc;
}

typedef struct ntok {
    int64_t t;
    size_t node;
} ntok;

static int cmp_ntok(const void *a, const void *b)
{
    const ntok *p = a, *q = b;
    return p->t < q->t ? -1 : p->t > q->t;
}

static int write_nodetool(ex *x)
{
    int rc = need_cassandra(x);
    ntok *all = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        for (size_t k = 0; k < p->len; k++)
            if (p->name[k] == ' ' || (unsigned char)p->name[k] < 0x21) {
                free(all);
                return refuse(x, i, "holds a space, which a nodetool ring line cannot");
            }
        /* The lines that are not a node's (import_nodetool.c, as Ring.java
         * prints them) start with these words. */
        if (p->name[0] == '=' || starts(p, "Datacenter:") || starts(p, "Warning:") ||
            starts(p, "Note:") || (p->len == 7 && !memcmp(p->name, "Address", 7))) {
            free(all);
            return refuse(x, i,
                          "starts a line nodetool ring prints as a heading (Datacenter:, "
                          "Address, =, Warning:, Note:), not a node");
        }
        json_t *t = node_tokens(x, i), *v;
        size_t k;
        json_array_foreach(t, k, v)
        {
            if (vec_reserve(&all, &cap, n + 1, sizeof *all, 256)) {
                rc = nomem(x);
                break;
            }
            all[n++] = (ntok){strtoll(json_string_value(v), NULL, 10), i};
        }
        json_decref(t);
    }
    if (!rc && n)
        qsort(all, n, sizeof *all, cmp_ntok);
    /* One section a datacenter (the nodes' location dc, datacenter1 when
     * absent), in the order the nodes first name them, as Ring.java prints
     * them; the Rack column is the location's rack (rack1 when absent).
     * What the importer reads as fields holds no space. */
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        const char *dc = place_loc_get(p->loc, p->nloc, "dc");
        const char *rk = place_loc_get(p->loc, p->nloc, "rack");
        if (rk && strpbrk(rk, " \t"))
            rc = refuse(x, i, "has a rack with a space, which a nodetool ring line cannot hold");
        else if (dc && (dc[0] == ' ' || dc[strlen(dc) - 1] == ' '))
            rc = refuse(x, i, "has a datacenter name that starts or ends with a space");
    }
    for (size_t d = 0; !rc && d < x->n; d++) {
        const char *dc = place_loc_get(x->pn[d].loc, x->pn[d].nloc, "dc");
        dc = dc ? dc : "datacenter1";
        bool first = true; /* the first node of its datacenter */
        for (size_t e = 0; e < d && first; e++) {
            const char *o = place_loc_get(x->pn[e].loc, x->pn[e].nloc, "dc");
            first = strcmp(o ? o : "datacenter1", dc) != 0;
        }
        if (!first)
            continue;
        long long last = 0;
        for (size_t i = 0; i < n; i++) {
            const char *o = place_loc_get(x->pn[all[i].node].loc, x->pn[all[i].node].nloc, "dc");
            if (!strcmp(o ? o : "datacenter1", dc))
                last = (long long)all[i].t;
        }
        rc = fmt(x, "\nDatacenter: ");
        if (!rc)
            rc = str(x, dc);
        if (!rc)
            rc = fmt(x,
                     "\n==========\n%-40s %-8s %-6s %-7s %-10s %-8s %s\n%-40s %-8s %-6s %-7s "
                     "%-10s %-8s %lld\n",
                     "Address", "Rack", "Status", "State", "Load", "Owns", "Token", "", "", "", "",
                     "", "", last);
        for (size_t i = 0; !rc && i < n; i++) {
            const place_node *p = &x->pn[all[i].node];
            const char *o = place_loc_get(p->loc, p->nloc, "dc");
            const char *rk = place_loc_get(p->loc, p->nloc, "rack");
            if (strcmp(o ? o : "datacenter1", dc) != 0)
                continue;
            rc = add(x, p->name, p->len);
            if (!rc)
                rc = fmt(x, "%*s ", p->len < 40 ? (int)(40 - p->len) : 0, "");
            if (!rc)
                rc = str(x, rk ? rk : "rack1");
            if (!rc)
                rc = fmt(x, "%*s %-6s %-7s %-10s %-8s %lld\n",
                         rk && strlen(rk) < 8 ? (int)(8 - strlen(rk))
                         : rk                 ? 0
                                              : 3,
                         "", p->down ? "Down" : "Up", "Normal", "?", "?", (long long)all[i].t);
        }
    }
    free(all);
    return rc;
}

/* ---- redis ---- */

static int need_redis(ex *x)
{
    return need_layout(x, place_slot_count(sim_config(x->s)->algorithm) > 0, "Redis slots", "redis");
}

/* "ip:port" into host and port, as CLUSTER NODES names a node and
 * redis-cli takes one: a host of letters, digits, '.', '-', '_' and ':' (an
 * IPv6 address, which Redis writes without brackets), starting with a
 * letter, a digit or ':'.  Nothing else reaches the script, whose every
 * value is also quoted for sh. */
static bool host_port(const char *name, size_t len, char *host, size_t hsize, long *port)
{
    size_t hl;
    if (!split_port(name, len, &hl, port) || hl == 0 || hl >= hsize ||
        !(alnum(name[0]) || name[0] == ':'))
        return false;
    for (size_t i = 0; i < hl; i++)
        if (!alnum(name[i]) && !strchr(".-_:", name[i]))
            return false;
    memcpy(host, name, hl);
    host[hl] = '\0';
    return true;
}

#define REDIS_NAME_WHY "is not HOST:PORT (a host of letters, digits, '.', '-', '_', ':')"

/* s quoted for sh: '...', a ' written as '\''. */
static int sh_word(ex *x, const char *s, size_t len)
{
    int rc = str(x, "'");
    for (size_t i = 0; !rc && i < len; i++)
        rc = s[i] == '\'' ? str(x, "'\\''") : add(x, s + i, 1);
    return rc ? rc : str(x, "'");
}

static int sh_str(ex *x, const char *s) { return sh_word(x, s, strlen(s)); }

/* The current map: owner ordinal per slot. */
static int current_map(ex *x, uint32_t *owner)
{
    for (size_t sl = 0; sl < REDIS_SLOTS; sl++)
        owner[sl] = UINT32_MAX;
    for (size_t i = 0; i < x->n; i++) {
        json_t *o = json_object(), *r;
        size_t k;
        if (!o)
            return nomem(x);
        place_node_json(x->pl, i, o);
        json_array_foreach(json_object_get(o, "slots"), k, r)
        {
            json_int_t a = json_integer_value(json_array_get(r, 0));
            json_int_t b = json_integer_value(json_array_get(r, 1));
            for (json_int_t sl = a; sl >= 0 && sl <= b && sl < (json_int_t)REDIS_SLOTS; sl++)
                owner[sl] = (uint32_t)i;
        }
        json_decref(o);
    }
    return 0;
}

static void node_id(const char *name, size_t len, char out[41])
{
    /* A stable 40-hex id from the name (FNV-1a, five rounds of 32 bits). */
    for (int r = 0; r < 5; r++) {
        uint32_t h = 2166136261u ^ (uint32_t)r;
        for (size_t i = 0; i < len; i++)
            h = (h ^ (unsigned char)name[i]) * 16777619u;
        snprintf(out + 8 * r, 9, "%08x", h);
    }
}

static int write_redis_nodes(ex *x)
{
    int rc = need_redis(x);
    uint32_t *owner = rc ? NULL : malloc(REDIS_SLOTS * sizeof *owner);
    if (!rc && !owner)
        rc = nomem(x);
    if (!rc)
        rc = current_map(x, owner);
    for (size_t i = 0; !rc && i < x->n; i++) {
        const place_node *p = &x->pn[i];
        char host[256], id[41];
        long port;
        if (!host_port(p->name, p->len, host, sizeof host, &port))
            return free(owner), refuse(x, i, REDIS_NAME_WHY ", as CLUSTER NODES names masters");
        if (p->name[0] == ':')
            return free(owner), refuse(x, i,
                                       "starts with ':', as CLUSTER NODES prints a node without "
                                       "an address (:0)");
        node_id(p->name, p->len, id);
        rc = fmt(x, "%s %s:%ld@%ld master%s - 0 0 %zu connected", id, host, port, port + 10000,
                 p->down ? ",fail" : "", i + 1);
        for (size_t sl = 0; !rc && sl < REDIS_SLOTS; sl++) {
            if (owner[sl] != i || (sl > 0 && owner[sl - 1] == i))
                continue;
            size_t e = sl;
            while (e + 1 < REDIS_SLOTS && owner[e + 1] == i)
                e++;
            rc = e == sl ? fmt(x, " %zu", sl) : fmt(x, " %zu-%zu", sl, e);
        }
        if (!rc)
            rc = str(x, "\n");
        for (size_t k = 0; !rc && k < p->nreplicas; k++) {
            const char *r = p->replicas[k];
            char rh[256], rid[41];
            long rp;
            if (!host_port(r, strlen(r), rh, sizeof rh, &rp)) {
                free(owner);
                return rs_fail(
                    x->err, RINGSIM_EPARAM,
                    "export --config %s: replica \"%.200s\" of node \"%.200s\" " REDIS_NAME_WHY,
                    x->fmt, r, p->name);
            }
            node_id(r, strlen(r), rid);
            rc = fmt(x, "%s %s:%ld@%ld slave %s 0 0 %zu connected\n", rid, rh, rp, rp + 10000, id,
                     i + 1);
        }
    }
    free(owner);
    return rc;
}

/* "$(redis-cli -h 'HOST' -p 'PORT' cluster myid)" */
static int cli_id(ex *x, const char *host, long port)
{
    int rc = str(x, "\"$(redis-cli -h ");
    if (!rc)
        rc = sh_str(x, host);
    return rc ? rc : fmt(x, " -p '%ld' cluster myid)\"", port);
}

static int write_redis(ex *x)
{
    int rc = need_redis(x);
    const char *f = json_string_value(json_object_get(x->imp, "format"));
    if (!rc && (!f || strcmp(f, "redis-nodes") != 0))
        rc = rs_fail(x->err, RINGSIM_EPARAM,
                     "export --config redis writes the moves from an imported CLUSTER NODES "
                     "layout: import one first (format redis-nodes)");
    json_t *inodes = json_object_get(x->imp, "nodes"), *e;
    size_t ni = json_array_size(inodes), k;
    uint32_t *from = rc ? NULL : malloc(REDIS_SLOTS * sizeof *from);
    uint32_t *to = rc ? NULL : malloc(REDIS_SLOTS * sizeof *to);
    size_t *map = rc ? NULL : calloc(ni + 1, sizeof *map); /* import ordinal -> current or n */
    if (!rc && (!from || !to || !map))
        rc = nomem(x);
    if (!rc)
        rc = current_map(x, to);
    for (size_t i = 0; !rc && i < x->n; i++) {
        char host[256];
        long port;
        if (!host_port(x->pn[i].name, x->pn[i].len, host, sizeof host, &port))
            rc = refuse(x, i, REDIS_NAME_WHY ", which redis-cli needs");
    }
    /* The imported masters that left are named in the script too. */
    json_array_foreach(inodes, k, e)
    {
        json_t *nm = json_object_get(e, "name");
        char host[256];
        long port;
        if (!rc && !host_port(json_string_value(nm) ? json_string_value(nm) : "",
                              json_string_length(nm), host, sizeof host, &port))
            rc = rs_fail(x->err, RINGSIM_EPARAM,
                         "export --config redis: imported master \"%.200s\" " REDIS_NAME_WHY
                         ", which redis-cli needs",
                         json_string_value(nm) ? json_string_value(nm) : "");
    }
    /* Old ordinals: the imported masters, those still here by their index,
     * those gone after the current ones (x->n + j). */
    for (size_t sl = 0; !rc && sl < REDIS_SLOTS; sl++)
        from[sl] = UINT32_MAX;
    json_array_foreach(inodes, k, e)
    {
        if (rc)
            break;
        json_t *nm = json_object_get(e, "name"), *r;
        size_t j;
        map[k] = x->n + k;
        for (size_t i = 0; i < x->n; i++)
            if (json_string_length(nm) == x->pn[i].len &&
                !memcmp(json_string_value(nm), x->pn[i].name, x->pn[i].len))
                map[k] = i;
        json_array_foreach(json_object_get(e, "slots"), j, r)
        {
            json_int_t a = json_integer_value(json_array_get(r, 0));
            json_int_t b = json_integer_value(json_array_get(r, 1));
            for (json_int_t sl = a; sl >= 0 && sl <= b && sl < (json_int_t)REDIS_SLOTS; sl++)
                from[sl] = (uint32_t)map[k];
        }
    }
    size_t moved = 0;
    for (size_t sl = 0; !rc && sl < REDIS_SLOTS; sl++)
        moved += from[sl] != to[sl];
    /* A master any command can go through: the first current one that was
     * imported, else the first current one. */
    char entry[300] = "", host[256];
    long port;
    for (size_t i = 0; !rc && !entry[0] && i < ni; i++)
        if (map[i] < x->n)
            snprintf(entry, sizeof entry, "%s", x->pn[map[i]].name);
    if (!rc && !entry[0] && x->n)
        snprintf(entry, sizeof entry, "%.*s", (int)x->pn[0].len, x->pn[0].name);
    /* redis-cli refuses to reshard while the nodes do not agree about the
     * configuration (a node just added, slots just moved): each command
     * waits for them, as `redis-cli --cluster check` says. */
    if (!rc)
        rc = fmt(x,
                 "#!/bin/sh\n# ringsim export --config redis: from the layout imported by "
                 "operation %lld to the current one: %zu slot%s move.\nset -e\n"
                 "# redis-cli reshards only once every node agrees about the configuration:\n"
                 "# wait until `redis-cli --cluster check` says so three seconds running\n"
                 "agree() {\n    n=0\n    while [ $n -lt 3 ]; do\n"
                 "        if redis-cli --cluster check ",
                 (long long)x->imp_id, moved, moved == 1 ? "" : "s");
    if (!rc)
        rc = sh_str(x, entry);
    if (!rc)
        rc = str(x, " 2>/dev/null | grep -q 'All nodes agree'; then\n            n=$((n + 1))\n"
                    "        else\n            n=0\n        fi\n        sleep 1\n    done\n}\n");
    if (!rc)
        rc = str(x, "# and a reshard tells every master the slot's new owner: after add-node,\n"
                    "# wait until the node at HOST:PORT has heard of the node ID (gossip)\n"
                    "knows() {\n"
                    "    until redis-cli -h \"$1\" -p \"$2\" cluster nodes 2>/dev/null | "
                    "grep -q \"^$3 \"; do\n        sleep 1\n    done\n}\n");
    /* New masters join first, with no slots. A reshard tells every master
     * the slot's new owner, and a master that has not yet heard of it by
     * gossip refuses ("I don't know about node"): each one joined waits
     * until it and every master in the cluster (the imported ones, those
     * joined before it) know each other. */
    bool *joined = rc ? NULL : calloc(x->n + 1, sizeof *joined);
    if (!rc && !joined)
        rc = nomem(x);
    for (size_t i = 0; !rc && i < x->n; i++) {
        bool old = false;
        for (size_t j = 0; j < ni; j++)
            old = old || map[j] == i;
        if (old)
            continue;
        char nh[256];
        long np;
        rc = str(x, "redis-cli --cluster add-node ");
        if (!rc)
            rc = sh_word(x, x->pn[i].name, x->pn[i].len);
        if (!rc)
            rc = str(x, " ");
        if (!rc)
            rc = sh_str(x, entry);
        if (!rc)
            rc = str(x, "\n");
        if (!rc && host_port(x->pn[i].name, x->pn[i].len, nh, sizeof nh, &np)) {
            rc = str(x, "new=");
            if (!rc)
                rc = cli_id(x, nh, np);
            if (!rc)
                rc = str(x, "\n");
            for (size_t j = 0; !rc && j < ni + x->n; j++) {
                const char *m = NULL;
                size_t ml = 0;
                if (j < ni) {
                    json_t *nm = json_object_get(json_array_get(inodes, j), "name");
                    m = json_string_value(nm);
                    ml = json_string_length(nm);
                } else if (joined[j - ni]) {
                    m = x->pn[j - ni].name;
                    ml = x->pn[j - ni].len;
                }
                if (m && host_port(m, ml, host, sizeof host, &port)) {
                    rc = str(x, "id=");
                    if (!rc)
                        rc = cli_id(x, host, port);
                    if (!rc)
                        rc = str(x, "\nknows ");
                    if (!rc)
                        rc = sh_str(x, host);
                    if (!rc)
                        rc = fmt(x, " '%ld' \"$new\"\nknows ", port);
                    if (!rc)
                        rc = sh_str(x, nh);
                    if (!rc)
                        rc = fmt(x, " '%ld' \"$id\"\n", np);
                }
            }
        }
        joined[i] = true;
        if (!rc)
            rc = str(x, "agree\n");
    }
    free(joined);
    /* One reshard per run of slots that go from one master to another.
     * redis-cli's reshard with one source moves that source's lowest
     * slots, so each turn takes a run that starts at its source's lowest
     * slot where there is one (a source gives before it receives lower
     * slots); a run that never is says so in a comment. */
    size_t nruns = 0;
    size_t *run_first = rc ? NULL : malloc(REDIS_SLOTS * sizeof *run_first);
    size_t *lowest = rc ? NULL : malloc((x->n + ni + 1) * sizeof *lowest);
    if (!rc && (!run_first || !lowest))
        rc = nomem(x);
    for (size_t sl = 0; !rc && sl < REDIS_SLOTS; sl++)
        if (from[sl] != to[sl] && from[sl] != UINT32_MAX &&
            (sl == 0 || from[sl - 1] != from[sl] || to[sl - 1] != to[sl]))
            run_first[nruns++] = sl;
    while (!rc && nruns) {
        for (size_t i = 0; i < x->n + ni; i++)
            lowest[i] = REDIS_SLOTS;
        for (size_t sl = REDIS_SLOTS; sl-- > 0;)
            if (from[sl] != UINT32_MAX)
                lowest[from[sl]] = sl;
        /* A run at its source's lowest slot, best to a master that has
         * nothing more to give (what it receives cannot come before what
         * it gives) from one that receives nothing more. */
        size_t pick = 0;
        int best = 0;
        for (size_t r = 0; r < nruns && best < 4; r++) {
            uint32_t src = from[run_first[r]];
            if (lowest[src] != run_first[r])
                continue;
            bool receives = false, dest_gives = false;
            for (size_t q = 0; q < nruns; q++) {
                receives = receives || to[run_first[q]] == src;
                dest_gives = dest_gives || from[run_first[q]] == to[run_first[r]];
            }
            int score = 1 + (receives ? 0 : 1) + (dest_gives ? 0 : 2);
            if (score > best) {
                best = score;
                pick = r;
            }
        }
        bool exact = best > 0;
        size_t first = run_first[pick], last = first;
        uint32_t a = from[first], b = to[first];
        while (last + 1 < REDIS_SLOTS && from[last + 1] == a && to[last + 1] == b)
            last++;
        memmove(run_first + pick, run_first + pick + 1, (nruns - pick - 1) * sizeof *run_first);
        nruns--;
        const char *an = a < x->n ? x->pn[a].name : NULL;
        char aname[300], bname[300];
        if (!an) {
            json_t *nm = json_object_get(json_array_get(inodes, a - x->n), "name");
            snprintf(aname, sizeof aname, "%s", json_string_value(nm) ? json_string_value(nm) : "");
            an = aname;
        }
        snprintf(bname, sizeof bname, "%.*s", (int)x->pn[b].len, x->pn[b].name);
        rc = first == last ? fmt(x, "# %s -> %s: slot %zu\n", an, bname, first)
                           : fmt(x, "# %s -> %s: slots %zu-%zu\n", an, bname, first, last);
        if (!rc && !exact)
            rc = str(x, "# (not the source's lowest slots, which redis-cli moves first: move "
                        "these with CLUSTER SETSLOT to pick them exactly)\n");
        char bh[256];
        long bp;
        if (!rc && host_port(an, strlen(an), host, sizeof host, &port) &&
            host_port(bname, strlen(bname), bh, sizeof bh, &bp)) {
            rc = str(x, "redis-cli --cluster reshard ");
            if (!rc)
                rc = sh_str(x, entry);
            if (!rc)
                rc = str(x, " --cluster-from ");
            if (!rc)
                rc = cli_id(x, host, port);
            if (!rc)
                rc = str(x, " --cluster-to ");
            if (!rc)
                rc = cli_id(x, bh, bp);
            if (!rc)
                rc = fmt(x, " --cluster-slots '%zu' --cluster-yes\nagree\n", last - first + 1);
        }
        for (size_t sl = first; sl <= last; sl++)
            from[sl] = b;
    }
    free(run_first);
    free(lowest);
    /* Masters that left, now without slots. */
    for (size_t j = 0; !rc && j < ni; j++) {
        if (map[j] < x->n)
            continue;
        const char *nm = json_string_value(json_object_get(json_array_get(inodes, j), "name"));
        if (nm && host_port(nm, strlen(nm), host, sizeof host, &port)) {
            rc = str(x, "redis-cli --cluster del-node ");
            if (!rc)
                rc = sh_str(x, entry);
            if (!rc)
                rc = str(x, " ");
            if (!rc)
                rc = cli_id(x, host, port);
            if (!rc)
                rc = str(x, "\n");
        }
    }
    free(from);
    free(to);
    free(map);
    return rc;
}

/* ---- the formats ---- */

/* One entry a format: its name, its title for people (the page's list)
 * and its writer. */
static const struct {
    const char *name;
    const char *title;
    int (*write)(ex *);
} writers[] = {
    {"nginx", "nginx upstream", write_nginx},
    {"haproxy", "HAProxy backend", write_haproxy},
    {"libmemcached", "libmemcached server list", write_libmemcached},
    {"twemproxy", "twemproxy pool", write_twemproxy},
    {"envoy", "Envoy cluster (JSON)", write_envoy},
    {"cassandra", "Cassandra initial_token", write_cassandra},
    {"nodetool-ring", "nodetool ring", write_nodetool},
    {"redis-nodes", "Redis CLUSTER NODES", write_redis_nodes},
    {"redis", "Redis reshard script", write_redis},
    {"crushmap", "Ceph CRUSH map (crushtool -c)", write_crushmap},
};

json_t *export_config_formats_json(void)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < sizeof writers / sizeof *writers; i++)
        if (json_array_append_new(
                a, json_pack("{s:s, s:s}", "format", writers[i].name, "title", writers[i].title))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

int export_config(sim *s, const char *format, char **text, size_t *len, rs_error *err)
{
    *text = NULL;
    *len = 0;
    size_t w = sizeof writers / sizeof *writers;
    for (size_t i = 0; format && i < sizeof writers / sizeof *writers; i++)
        if (!strcmp(format, writers[i].name))
            w = i;
    if (w == sizeof writers / sizeof *writers)
        return rs_fail(err, RINGSIM_EPARAM, "format must be one of " EXPORT_CONFIG_FORMATS);
    int rc = sim_refresh(s, NULL, err);
    if (rc)
        return rc;
    ex x = {
        s,  sim_place_nodes(s), sim_node_count(s), sim_placement(s), NULL, 0, writers[w].name, {0},
        err};
    for (size_t i = 0; i < x.n; i++)
        if (has_nul(&x.pn[i]))
            return rs_fail(err, RINGSIM_EPARAM, "a node name holds a NUL byte");
    if ((rc = sim_import_last(s, &x.imp, &x.imp_id, err)))
        return rc;
    if (!x.n && strcmp(writers[w].name, "redis") != 0)
        rc = rs_fail(err, RINGSIM_EPARAM, "there are no nodes to export");
    if (!rc)
        rc = writers[w].write(&x);
    json_decref(x.imp);
    if (rc) {
        free(x.b.p);
        return rc;
    }
    if (!x.b.p && sb_add(&x.b, "", 0)) /* an empty text is still a string */
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    *text = x.b.p ? x.b.p : strdup("");
    *len = x.b.n;
    return *text ? 0 : rs_fail(err, RINGSIM_ENOMEM, "out of memory");
}
