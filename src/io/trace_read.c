/*
 * trace_read.c - the request-log readers (see trace_read.h for the layers,
 * the formats and the costs).
 *
 * References, layouts read from their sources: nginx's `combined`
 * log_format (ngx_http_log_module.c), Apache's LogFormat "%h %l %u %t
 * \"%r\" %>s %O" family (common, combined, vhost_combined); Twitter's
 * cache-trace README (twitter/cache-trace: the seven CSV columns); libCacheSim
 * traceReader/customizedReader/oracle/oracleGeneralBin.h (24-byte records,
 * little-endian).  Nothing of their code is used.
 */
#define _GNU_SOURCE
#include "trace_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define BLOCK (256u * 1024u)
#define ORACLE_REC 24u
#define SNIFF 4096u /* bytes of the first block a bid reads */

/* The last clock read: a log's lines share their second by the thousand. */
typedef struct clock_memo {
    char text[26];
    double t;
    bool ok;
} clock_memo;

struct trace_reader {
    int fd;
    char name[96];
    trace_opts o;
    trace_format fmt;
    trace_compression comp;
    /* raw input */
    unsigned char *in;
    size_t in_len;
    bool in_eof;
    uint64_t bytes_in;
    /* decoded bytes: out[out_pos .. out_len) not yet consumed */
    unsigned char *out; /* == in for plain input */
    unsigned char *dec;
    size_t out_len, out_pos;
    bool out_eof;
    z_stream z;
    bool z_on, z_end;
    ZSTD_DStream *zs;
    size_t zs_left; /* ZSTD_decompressStream's last hint: 0 at a frame's end */
    bool full;      /* the last decode filled its block: more may wait inside */
    /* lines */
    char *line;
    uint64_t lines, bad, first_bad;
    /* csv columns (0-based; -1 absent) */
    int col_key, col_size, col_time, col_op, ncols_min;
    char keybuf[TRACE_KEY_MAX + 1];
    char idbuf[24];
    clock_memo memo;
};

/* ---- names ---- */

static const char *const format_names[TRACE_FORMAT_COUNT] = {
    [TRACE_AUTO] = "auto",       [TRACE_ACCESS_LOG] = "access-log",
    [TRACE_TWITTER] = "twitter", [TRACE_ORACLE] = "oracle-general",
    [TRACE_CSV] = "csv",         [TRACE_KEYS] = "keys",
};

int trace_format_parse(const char *name, trace_format *out, rs_error *err)
{
    for (int i = 0; i < TRACE_FORMAT_COUNT; i++)
        if (name && !strcmp(name, format_names[i])) {
            *out = (trace_format)i;
            return 0;
        }
    return rs_fail(err, RINGSIM_EPARAM, "format must be one of %s, not \"%.64s\"", TRACE_FORMATS,
                   name ? name : "");
}

const char *trace_format_name(trace_format f)
{
    return f < TRACE_FORMAT_COUNT ? format_names[f] : "?";
}

int trace_key_parse(const char *name, trace_key_field *out, rs_error *err)
{
    static const char *const k[] = {"uri", "host_uri", "remote_addr"};
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, k[i])) {
            *out = (trace_key_field)i;
            return 0;
        }
    return rs_fail(err, RINGSIM_EPARAM, "key must be uri, host_uri or remote_addr, not \"%.64s\"",
                   name ? name : "");
}

const char *trace_key_name(trace_key_field k)
{
    return k == TRACE_KEY_HOST_URI      ? "host_uri"
           : k == TRACE_KEY_REMOTE_ADDR ? "remote_addr"
                                        : "uri";
}

const char *trace_compression_name(trace_compression c)
{
    return c == TRACE_GZIP ? "gzip" : c == TRACE_ZSTD ? "zstd" : "none";
}

/* ---- clocks ---- */

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
 * days_from_civil).  Cannot fail. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at s into *v; -1 unless all are digits. */
static int digits(const char *s, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* A plain decimal number (digits, one optional fraction) of len bytes. */
static int plain_number(const char *s, size_t len, double *out)
{
    if (!len || len > 40)
        return -1;
    double v = 0, scale = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.' && scale == 0 && i > 0) {
            scale = 1;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (scale > 0) {
            scale /= 10;
            v += (s[i] - '0') * scale;
        } else {
            v = v * 10 + (s[i] - '0');
        }
    }
    *out = v;
    return 0;
}

int trace_parse_time(const char *s, size_t len, double *out)
{
    if (!plain_number(s, len, out))
        return 0;
    /* RFC 3339: YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm) */
    int y, mo, d, h, mi, se;
    if (len < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
        digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
        digits(s + 17, 2, &se))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    size_t i = 19;
    double frac = 0, scale = 1;
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || s[i] < '0' || s[i] > '9')
            return -1;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            scale /= 10;
            frac += (s[i++] - '0') * scale;
        }
    }
    int off = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i + 6 == len && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        if (digits(s + i + 1, 2, &oh) || s[i + 3] != ':' || digits(s + i + 4, 2, &om) || oh > 23 ||
            om > 59)
            return -1;
        off = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        i += 6;
    } else {
        return -1;
    }
    if (i != len)
        return -1;
    *out = (double)(days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
                    se - off) +
           frac;
    return 0;
}

/* The access log's clock: "10/Oct/2000:13:55:36 -0700" (26 bytes). */
static int access_time(const char *s, size_t len, double *out)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int d, y, h, mi, se, oh, om;
    if (len != 26 || digits(s, 2, &d) || s[2] != '/' || s[6] != '/' || digits(s + 7, 4, &y) ||
        s[11] != ':' || digits(s + 12, 2, &h) || s[14] != ':' || digits(s + 15, 2, &mi) ||
        s[17] != ':' || digits(s + 18, 2, &se) || s[20] != ' ' || (s[21] != '+' && s[21] != '-') ||
        digits(s + 22, 2, &oh) || digits(s + 24, 2, &om))
        return -1;
    int mo = 0;
    for (int i = 0; i < 12; i++)
        if (!memcmp(s + 3, months + 3 * i, 3))
            mo = i + 1;
    if (!mo || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    int off = (s[21] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    *out = (double)(days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
                    se - off);
    return 0;
}

/* A key as docs/api.md "Names" has them, as far as a replay needs: 1 to
 * TRACE_KEY_MAX bytes with no control character. */
static bool key_ok(const char *k, size_t len)
{
    if (!len || len > TRACE_KEY_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)k[i];
        if (c < 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

static bool unsigned_field(const char *s, size_t len, uint64_t *out)
{
    if (!len || len > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* ---- the formats' lines ---- */

static int access_line(const char *line, size_t len, trace_key_field key, char *buf, trace_rec *rec,
                       clock_memo *memo);

int trace_parse_access_line(const char *line, size_t len, trace_key_field key, char *buf,
                            trace_rec *rec)
{
    return access_line(line, len, key, buf, rec, NULL);
}

static int access_line(const char *line, size_t len, trace_key_field key, char *buf, trace_rec *rec,
                       clock_memo *memo)
{
    const char *p = line, *end = line + len;
    const char *tok[4];
    size_t tlen[4];
    int nt = 0;
    /* the fields before the clock: [vhost] remote ident user */
    while (p < end && *p != '[') {
        while (p < end && *p == ' ')
            p++;
        if (p >= end || *p == '[')
            break;
        if (nt == 4)
            return -1;
        tok[nt] = p;
        while (p < end && *p != ' ')
            p++;
        tlen[nt] = (size_t)(p - tok[nt]);
        nt++;
    }
    if ((nt != 3 && nt != 4) || p >= end)
        return -1;
    const char *tb = ++p;
    const char *te = memchr(tb, ']', (size_t)(end - tb));
    if (!te)
        return -1;
    size_t tl = (size_t)(te - tb);
    if (memo && memo->ok && tl == sizeof memo->text && !memcmp(memo->text, tb, tl)) {
        rec->time = memo->t;
    } else {
        if (access_time(tb, tl, &rec->time))
            return -1;
        if (memo && tl == sizeof memo->text) {
            memcpy(memo->text, tb, tl);
            memo->t = rec->time;
            memo->ok = true;
        }
    }
    p = te + 1;
    if (end - p < 3 || p[0] != ' ' || p[1] != '"')
        return -1;
    const char *rb = p + 2, *re = rb;
    while (re < end && *re != '"')
        re += *re == '\\' && re + 1 < end ? 2 : 1;
    if (re >= end)
        return -1;
    /* the request line: METHOD URI [PROTOCOL] */
    const char *ub = memchr(rb, ' ', (size_t)(re - rb));
    if (!ub)
        return -1;
    ub++;
    const char *ue = memchr(ub, ' ', (size_t)(re - ub));
    if (!ue)
        ue = re;
    p = re + 1;
    /* status and body bytes */
    while (p < end && *p == ' ')
        p++;
    const char *sb = p;
    while (p < end && *p != ' ')
        p++;
    uint64_t status;
    if (!unsigned_field(sb, (size_t)(p - sb), &status))
        return -1;
    while (p < end && *p == ' ')
        p++;
    const char *bb = p;
    while (p < end && *p != ' ')
        p++;
    if (p - bb == 1 && *bb == '-')
        rec->bytes = 0;
    else if (!unsigned_field(bb, (size_t)(p - bb), &rec->bytes))
        return -1;
    rec->has_time = true;
    const char *remote = tok[nt == 4];
    size_t rlen = tlen[nt == 4];
    switch (key) {
    case TRACE_KEY_URI:
        rec->key = ub;
        rec->len = (size_t)(ue - ub);
        break;
    case TRACE_KEY_REMOTE_ADDR:
        rec->key = remote;
        rec->len = rlen;
        break;
    case TRACE_KEY_HOST_URI: {
        if (nt != 4)
            return -1;
        const char *colon = memchr(tok[0], ':', tlen[0]);
        size_t hl = colon ? (size_t)(colon - tok[0]) : tlen[0], ul = (size_t)(ue - ub);
        if (hl + ul > TRACE_KEY_MAX)
            return -1;
        memcpy(buf, tok[0], hl);
        memcpy(buf + hl, ub, ul);
        buf[hl + ul] = 0;
        rec->key = buf;
        rec->len = hl + ul;
        break;
    }
    }
    return key_ok(rec->key, rec->len) ? 0 : -1;
}

/* Twitter: timestamp,key,key_size,value_size,client_id,operation,TTL; a key
 * with commas is everything between the first comma and the fifth from the
 * end. */
static int twitter_line(const char *line, size_t len, trace_rec *rec)
{
    const char *c1 = memchr(line, ',', len);
    if (!c1)
        return -1;
    const char *comma[5]; /* the last five commas, comma[0] the last */
    int n = 0;
    for (const char *p = line + len; p > c1 && n < 5;) {
        p--;
        if (*p == ',')
            comma[n++] = p;
    }
    if (n < 5 || comma[4] == c1)
        return -1;
    double t;
    uint64_t vsize;
    if (plain_number(line, (size_t)(c1 - line), &t) ||
        !unsigned_field(comma[3] + 1, (size_t)(comma[2] - comma[3] - 1), &vsize))
        return -1;
    const char *op = comma[1] + 1;
    size_t oplen = (size_t)(comma[0] - op);
    if (!oplen)
        return -1;
    for (size_t i = 0; i < oplen; i++)
        if (!((op[i] >= 'a' && op[i] <= 'z') || (op[i] >= 'A' && op[i] <= 'Z')))
            return -1;
    rec->key = c1 + 1;
    rec->len = (size_t)(comma[4] - c1 - 1);
    rec->bytes = vsize;
    rec->has_time = true;
    rec->time = t;
    return key_ok(rec->key, rec->len) ? 0 : -1;
}

/* The fields of one CSV line: RFC 4180 quoting; spans into line (quotes
 * included); at most max; the count, or -1 for an unterminated quote. */
static int csv_split(const char *line, size_t len, const char **f, size_t *fl, int max)
{
    int n = 0;
    size_t i = 0;
    for (;;) {
        size_t b = i;
        if (i < len && line[i] == '"') {
            i++;
            for (;;) {
                if (i >= len)
                    return -1;
                if (line[i] == '"') {
                    if (i + 1 < len && line[i + 1] == '"') {
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                i++;
            }
        }
        while (i < len && line[i] != ',')
            i++;
        if (n < max) {
            f[n] = line + b;
            fl[n] = i - b;
        }
        n++;
        if (i >= len)
            return n;
        i++;
    }
}

/* A field without its quotes (doubled quotes undone into buf when needed). */
static void csv_unquote(const char **f, size_t *fl, char *buf, size_t cap)
{
    if (*fl < 2 || (*f)[0] != '"' || (*f)[*fl - 1] != '"')
        return;
    const char *s = *f + 1;
    size_t n = *fl - 2;
    if (!memchr(s, '"', n)) {
        *f = s;
        *fl = n;
        return;
    }
    size_t o = 0;
    for (size_t i = 0; i < n && o < cap; i++) {
        buf[o++] = s[i];
        if (s[i] == '"' && i + 1 < n && s[i + 1] == '"')
            i++;
    }
    *f = buf;
    *fl = o;
}

#define CSV_MAX_COLS 256

static int csv_line(trace_reader *r, const char *line, size_t len, trace_rec *rec)
{
    const char *f[CSV_MAX_COLS];
    size_t fl[CSV_MAX_COLS];
    int n = csv_split(line, len, f, fl, CSV_MAX_COLS);
    if (n < r->ncols_min)
        return -1;
    const char *k = f[r->col_key];
    size_t kl = fl[r->col_key];
    csv_unquote(&k, &kl, r->keybuf, sizeof r->keybuf);
    rec->key = k;
    rec->len = kl;
    rec->bytes = 0;
    rec->has_time = false;
    if (r->col_size >= 0) {
        const char *s = f[r->col_size];
        size_t sl = fl[r->col_size];
        csv_unquote(&s, &sl, NULL, 0);
        if (!unsigned_field(s, sl, &rec->bytes))
            return -1;
    }
    if (r->col_time >= 0) {
        const char *s = f[r->col_time];
        size_t sl = fl[r->col_time];
        csv_unquote(&s, &sl, NULL, 0);
        if (trace_parse_time(s, sl, &rec->time))
            return -1;
        rec->has_time = true;
    }
    return key_ok(rec->key, rec->len) ? 0 : -1;
}

/* A column by header name or 1-based number; -1 when missing. */
static int csv_find(const char *want, const char **f, size_t *fl, int n)
{
    size_t wl = strlen(want);
    uint64_t num;
    if (unsigned_field(want, wl, &num))
        return num >= 1 && num <= (uint64_t)n ? (int)num - 1 : -1;
    for (int i = 0; i < n && i < CSV_MAX_COLS; i++) {
        const char *s = f[i];
        size_t sl = fl[i];
        csv_unquote(&s, &sl, NULL, 0);
        while (sl && (*s == ' '))
            s++, sl--;
        if (sl == wl && !memcmp(s, want, wl))
            return i;
    }
    return -1;
}

/* ---- bytes: raw, then decoded ---- */

static int raw_fill(trace_reader *r, rs_error *err)
{
    if (r->in_eof)
        return 1;
    ssize_t n;
    do
        n = read(r->fd, r->in, BLOCK);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return rs_fail(err, RINGSIM_EINTERNAL, "%s: cannot read: %s", r->name, strerror(errno));
    r->in_len = (size_t)n;
    r->bytes_in += (uint64_t)n;
    if (!n)
        r->in_eof = true;
    return n ? 0 : 1;
}

/* More decoded bytes into out: 0, 1 at the end, or a negative code. */
static int refill(trace_reader *r, rs_error *err)
{
    if (r->out_eof)
        return 1;
    if (r->comp == TRACE_PLAIN) {
        int rc = raw_fill(r, err);
        if (rc) {
            r->out_eof = rc == 1;
            return rc;
        }
        r->out = r->in;
        r->out_len = r->in_len;
        r->out_pos = 0;
        return 0;
    }
    r->out = r->dec;
    r->out_pos = 0;
    r->out_len = 0;
    while (!r->out_len) {
        if (r->comp == TRACE_GZIP) {
            if (!r->z.avail_in && (!r->full || r->z_end)) {
                int rc = raw_fill(r, err);
                if (rc < 0)
                    return rc;
                if (rc == 1) {
                    r->out_eof = true;
                    if (!r->z_end)
                        return rs_fail(err, RINGSIM_EPARAM,
                                       "%s: the gzip stream ends early (truncated at byte %llu)",
                                       r->name, (unsigned long long)r->bytes_in);
                    return 1;
                }
                r->z.next_in = r->in;
                r->z.avail_in = (uInt)r->in_len;
            }
            if (r->z_end) { /* another member follows */
                if (inflateReset(&r->z) != Z_OK)
                    return rs_fail(err, RINGSIM_EINTERNAL, "%s: zlib failed", r->name);
                r->z_end = false;
            }
            r->z.next_out = r->dec;
            r->z.avail_out = BLOCK;
            int zr = inflate(&r->z, Z_NO_FLUSH);
            if (zr == Z_STREAM_END)
                r->z_end = true;
            else if (zr != Z_OK && zr != Z_BUF_ERROR)
                return rs_fail(err, RINGSIM_EPARAM, "%s: not valid gzip near byte %llu: %s",
                               r->name, (unsigned long long)r->bytes_in,
                               r->z.msg ? r->z.msg : "inflate failed");
            r->out_len = BLOCK - r->z.avail_out;
            r->full = !r->z.avail_out;
        } else {
            if (!r->z.avail_in && !r->full) {
                int rc = raw_fill(r, err);
                if (rc < 0)
                    return rc;
                if (rc == 1) {
                    r->out_eof = true;
                    if (r->zs_left)
                        return rs_fail(err, RINGSIM_EPARAM,
                                       "%s: the zstd stream ends early (truncated at byte %llu)",
                                       r->name, (unsigned long long)r->bytes_in);
                    return 1;
                }
                r->z.avail_in = (uInt)r->in_len; /* bytes left of in, counted down */
            }
            ZSTD_inBuffer ib = {r->in + (r->in_len - r->z.avail_in), r->z.avail_in, 0};
            ZSTD_outBuffer ob = {r->dec, BLOCK, 0};
            size_t zr = ZSTD_decompressStream(r->zs, &ob, &ib);
            if (ZSTD_isError(zr))
                return rs_fail(err, RINGSIM_EPARAM, "%s: not valid zstd near byte %llu: %s",
                               r->name, (unsigned long long)r->bytes_in, ZSTD_getErrorName(zr));
            r->zs_left = zr;
            r->z.avail_in -= (uInt)ib.pos;
            r->out_len = ob.pos;
            r->full = ob.pos == BLOCK;
        }
    }
    return 0;
}

/* The next line (its end and a CR before it removed): 0 with *p, *len
 * (valid until the next call), 1 at the end, or a negative code.  *toolong
 * says the line was cut at TRACE_LINE_MAX. */
static int next_line(trace_reader *r, const char **p, size_t *len, bool *toolong, rs_error *err)
{
    *toolong = false;
    size_t have = 0;
    bool any = false;
    for (;;) {
        if (r->out_pos >= r->out_len) {
            int rc = refill(r, err);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                if (!any)
                    return 1;
                break;
            }
        }
        any = true;
        const unsigned char *b = r->out + r->out_pos;
        size_t avail = r->out_len - r->out_pos;
        const unsigned char *nl = memchr(b, '\n', avail);
        size_t take = nl ? (size_t)(nl - b) : avail;
        if (nl && !have) { /* the whole line in the block: no copy */
            r->out_pos += take + 1;
            *p = (const char *)b;
            *len = take;
            goto done;
        }
        size_t room = TRACE_LINE_MAX - have;
        if (take > room) {
            *toolong = true;
            take = room;
        }
        memcpy(r->line + have, b, take);
        have += take;
        if (nl) {
            r->out_pos += (size_t)(nl - b) + 1;
            break;
        }
        r->out_pos += avail;
    }
    *p = r->line;
    *len = have;
done:
    if (*len && (*p)[*len - 1] == '\r')
        (*len)--;
    return 0;
}

/* Exactly n decoded bytes into buf: 0, 1 at a clean end, 2 at an end
 * inside the record, or a negative code. */
static int next_bytes(trace_reader *r, unsigned char *buf, size_t n, rs_error *err)
{
    size_t have = 0;
    while (have < n) {
        if (r->out_pos >= r->out_len) {
            int rc = refill(r, err);
            if (rc < 0)
                return rc;
            if (rc == 1)
                return have ? 2 : 1;
        }
        size_t take = r->out_len - r->out_pos;
        if (take > n - have)
            take = n - have;
        memcpy(buf + have, r->out + r->out_pos, take);
        have += take;
        r->out_pos += take;
    }
    return 0;
}

static uint64_t le(const unsigned char *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* ---- bids: how sure each format is that the first line is its own ---- */

static int parse_line(trace_reader *r, trace_format f, const char *line, size_t len, trace_rec *rec)
{
    switch (f) {
    case TRACE_ACCESS_LOG:
        return access_line(line, len, r->o.key, r->keybuf, rec, &r->memo);
    case TRACE_TWITTER:
        return twitter_line(line, len, rec);
    case TRACE_CSV:
        return csv_line(r, line, len, rec);
    case TRACE_KEYS:
        rec->key = line;
        rec->len = len;
        rec->bytes = 0;
        rec->has_time = false;
        return key_ok(line, len) ? 0 : -1;
    default:
        return -1;
    }
}

/* The first line of the decoded block (no copy; may be cut by the block). */
static size_t first_line(const trace_reader *r, const char **p)
{
    const unsigned char *b = r->out + r->out_pos;
    size_t n = r->out_len - r->out_pos;
    const unsigned char *nl = memchr(b, '\n', n);
    size_t len = nl ? (size_t)(nl - b) : n;
    if (len && b[len - 1] == '\r')
        len--;
    *p = (const char *)b;
    return len;
}

static bool looks_binary(const trace_reader *r)
{
    size_t n = r->out_len - r->out_pos;
    if (n > SNIFF)
        n = SNIFF;
    return memchr(r->out + r->out_pos, 0, n) != NULL;
}

static int setup_csv(trace_reader *r, const char *line, size_t len, rs_error *err)
{
    const char *f[CSV_MAX_COLS];
    size_t fl[CSV_MAX_COLS];
    int n = csv_split(line, len, f, fl, CSV_MAX_COLS);
    if (n < 1)
        return rs_fail(err, RINGSIM_EPARAM, "%s is not a csv log: line 1 is not a header", r->name);
    if (!r->o.key_col)
        return rs_fail(err, RINGSIM_EPARAM, "a csv log needs --key-col (a header name or number)");
    const char *want[4] = {r->o.key_col, r->o.size_col, r->o.time_col, r->o.op_col};
    static const char *const what[4] = {"key-col", "size-col", "time-col", "op-col"};
    int *col[4] = {&r->col_key, &r->col_size, &r->col_time, &r->col_op};
    r->ncols_min = 0;
    for (int i = 0; i < 4; i++) {
        *col[i] = -1;
        if (!want[i])
            continue;
        *col[i] = csv_find(want[i], f, fl, n);
        if (*col[i] < 0)
            return rs_fail(err, RINGSIM_EPARAM,
                           "%s: --%s \"%.64s\" is not a column of the header (line 1)", r->name,
                           what[i], want[i]);
        if (*col[i] + 1 > r->ncols_min)
            r->ncols_min = *col[i] + 1;
    }
    return 0;
}

static int detect(trace_reader *r, rs_error *err)
{
    bool empty = r->out_pos >= r->out_len;
    if (r->fmt == TRACE_AUTO) {
        if (empty)
            r->fmt = TRACE_KEYS;
        else if (looks_binary(r))
            r->fmt = TRACE_ORACLE;
        else if (r->o.key_col)
            r->fmt = TRACE_CSV;
        else {
            const char *l;
            size_t len = first_line(r, &l);
            trace_rec rec;
            if (!parse_line(r, TRACE_ACCESS_LOG, l, len, &rec) ||
                (r->o.key == TRACE_KEY_HOST_URI &&
                 !trace_parse_access_line(l, len, TRACE_KEY_URI, r->keybuf, &rec)))
                r->fmt = TRACE_ACCESS_LOG;
            else if (!twitter_line(l, len, &rec))
                r->fmt = TRACE_TWITTER;
            else
                r->fmt = TRACE_KEYS;
        }
    }
    if (empty)
        return 0;
    const char *l;
    size_t len = first_line(r, &l);
    trace_rec rec;
    switch (r->fmt) {
    case TRACE_ORACLE:
        if (!looks_binary(r) && r->out_len - r->out_pos >= ORACLE_REC)
            return rs_fail(err, RINGSIM_EPARAM,
                           "%s is not an oracle-general trace: it reads as text (%.*s...)", r->name,
                           (int)(len < 40 ? len : 40), l);
        return 0;
    case TRACE_CSV:
        return setup_csv(r, l, len, err);
    default:
        break;
    }
    if (looks_binary(r))
        return rs_fail(err, RINGSIM_EPARAM, "%s is not a %s log: it holds binary bytes", r->name,
                       trace_format_name(r->fmt));
    if (parse_line(r, r->fmt, l, len, &rec)) {
        if (r->fmt == TRACE_ACCESS_LOG && r->o.key == TRACE_KEY_HOST_URI &&
            !trace_parse_access_line(l, len, TRACE_KEY_URI, r->keybuf, &rec))
            return rs_fail(err, RINGSIM_EPARAM,
                           "%s: --key host_uri needs the virtual host at the start of each line "
                           "(Apache's vhost_combined); line 1 has none",
                           r->name);
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s is not a %s log: line 1 does not read as one (\"%.*s\")", r->name,
                       trace_format_name(r->fmt), (int)(len < 60 ? len : 60), l);
    }
    return 0;
}

/* ---- the reader ---- */

int trace_reader_open(trace_reader **out, int fd, const char *name, const trace_opts *o, rs_error *err)
{
    *out = NULL;
    trace_reader *r = calloc(1, sizeof *r);
    if (!r)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    r->fd = fd;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "the log");
    r->o = *o;
    r->fmt = o->format;
    r->in = malloc(BLOCK);
    r->line = malloc(TRACE_LINE_MAX + 1);
    int rc;
    if (!r->in || !r->line) {
        rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = raw_fill(r, err)) < 0)
        goto fail;
    if (r->in_len >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b)
        r->comp = TRACE_GZIP;
    else if (r->in_len >= 4 && r->in[0] == 0x28 && r->in[1] == 0xb5 && r->in[2] == 0x2f &&
             r->in[3] == 0xfd)
        r->comp = TRACE_ZSTD;
    if (r->comp == TRACE_PLAIN) {
        r->out = r->in;
        r->out_len = r->in_len;
        r->out_eof = r->in_eof;
    } else {
        r->dec = malloc(BLOCK);
        if (!r->dec) {
            rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory");
            goto fail;
        }
        if (r->comp == TRACE_GZIP) {
            if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory (zlib)");
                goto fail;
            }
            r->z_on = true;
            r->z.next_in = r->in;
            r->z.avail_in = (uInt)r->in_len;
        } else {
            if (!(r->zs = ZSTD_createDStream())) {
                rc = rs_fail(err, RINGSIM_ENOMEM, "out of memory (zstd)");
                goto fail;
            }
            ZSTD_initDStream(r->zs);
            r->z.avail_in = (uInt)r->in_len;
        }
        if ((rc = refill(r, err)) < 0)
            goto fail;
    }
    if ((rc = detect(r, err)))
        goto fail;
    *out = r;
    return 0;
fail:
    trace_reader_free(r);
    return rc;
}

int trace_reader_next(trace_reader *r, trace_rec *rec, rs_error *err)
{
    for (;;) {
        if (r->fmt == TRACE_ORACLE) {
            unsigned char b[ORACLE_REC];
            int rc = next_bytes(r, b, ORACLE_REC, err);
            if (rc < 0 || rc == 1)
                return rc;
            r->lines++;
            if (rc == 2) { /* a record cut short at the end */
                if (!r->bad++)
                    r->first_bad = r->lines;
                return 1;
            }
            rec->time = (double)le(b, 4);
            rec->has_time = true;
            rec->bytes = le(b + 12, 4);
            int n = snprintf(r->idbuf, sizeof r->idbuf, "%llu", (unsigned long long)le(b + 4, 8));
            rec->key = r->idbuf;
            rec->len = (size_t)n;
            return 0;
        }
        const char *l;
        size_t len;
        bool toolong;
        int rc = next_line(r, &l, &len, &toolong, err);
        if (rc)
            return rc;
        r->lines++;
        if (r->fmt == TRACE_CSV && r->lines == 1)
            continue; /* the header */
        if (!len && !toolong)
            continue; /* a blank line is no request */
        if (toolong || parse_line(r, r->fmt, l, len, rec)) {
            if (!r->bad++)
                r->first_bad = r->lines;
            continue;
        }
        return 0;
    }
}

void trace_reader_free(trace_reader *r)
{
    if (!r)
        return;
    if (r->z_on)
        inflateEnd(&r->z);
    ZSTD_freeDStream(r->zs);
    free(r->in);
    free(r->dec);
    free(r->line);
    free(r);
}

trace_format trace_reader_format(const trace_reader *r) { return r->fmt; }
trace_compression trace_reader_compression(const trace_reader *r) { return r->comp; }
uint64_t trace_reader_bytes_in(const trace_reader *r) { return r->bytes_in; }
uint64_t trace_reader_lines(const trace_reader *r) { return r->lines; }
uint64_t trace_reader_bad_lines(const trace_reader *r) { return r->bad; }
uint64_t trace_reader_first_bad(const trace_reader *r) { return r->first_bad; }

bool trace_reader_has_time(const trace_reader *r)
{
    return r->fmt != TRACE_KEYS && (r->fmt != TRACE_CSV || r->col_time >= 0);
}
