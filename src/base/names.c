/*
 * names.c - name validation (see names.h).
 */
#include "names.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>
#include <uniwidth.h>

bool utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + n >= len) /* the continuation bytes run past the end */
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

int name_check(const char *s, size_t len, const char *what, rs_error *err)
{
    if (len == 0)
        return rs_fail(err, RINGSIM_ENAME, "%s must not be empty", what);
    if (len > NAME_MAX_BYTES)
        return rs_fail(err, RINGSIM_ENAME, "%s is %zu bytes long; the limit is %d", what, len,
                       NAME_MAX_BYTES);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F)
            return rs_fail(err, RINGSIM_ENAME,
                           "%s contains a control character (byte 0x%02X at %zu)", what, c, i);
    }
    if (!utf8_valid(s, len))
        return rs_fail(err, RINGSIM_ENAME, "%s is not valid UTF-8", what);
    return 0;
}

/* ---- names people can read (docs/api.md v3) ----
 *
 * The one place that says which characters are invisible: the format
 * characters (Cf, U+200B and the bidirectional controls among them), the
 * default-ignorable code points (U+3164 HANGUL FILLER, variation
 * selectors), and the separators (Zs, Zl, Zp), of which the plain space is
 * shown as it is unless the text has nothing visible.  libunistring's
 * tables (Debian's libunistring-dev) say what each code point is. */

static bool is_bidi_control(ucs4_t c)
{
    return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

bool names_invisible(uint32_t c)
{
    /* Cc: the C1 controls U+0080..U+009F, which names may hold (API.md
     * refuses C0 and DEL) and which a terminal may act on. */
    return uc_is_general_category((ucs4_t)c, UC_CATEGORY_Cc) ||
           uc_is_general_category((ucs4_t)c, UC_CATEGORY_Cf) ||
           uc_is_property_default_ignorable_code_point((ucs4_t)c) ||
           uc_is_general_category((ucs4_t)c, UC_CATEGORY_Z);
}

int node_name_check(const char *s, size_t len, rs_error *err)
{
    int rc = name_check(s, len, "node name", err);
    if (rc)
        return rc;
    const uint8_t *p = (const uint8_t *)s, *end = p + len;
    bool visible = false;
    while (p < end) {
        ucs4_t c;
        int n = u8_mbtouc(&c, p, (size_t)(end - p));
        if (is_bidi_control(c))
            return rs_fail(err, RINGSIM_ENAME,
                           "node name contains the bidirectional control U+%04X, which "
                           "reorders how it reads",
                           (unsigned)c);
        visible |= !names_invisible(c);
        p += n;
    }
    if (!visible)
        return rs_fail(err, RINGSIM_ENAME,
                       "node name has no visible character (only spaces or format "
                       "characters)");
    return 0;
}

char *names_nfc(const char *s, size_t len, size_t *out_len)
{
    size_t n = 0;
    uint8_t *r = u8_normalize(UNINORM_NFC, (const uint8_t *)s, len, NULL, &n);
    if (!r)
        return NULL;
    char *z = realloc(r, n + 1);
    if (!z) {
        free(r);
        return NULL;
    }
    z[n] = '\0';
    *out_len = n;
    return z;
}

bool names_look_alike(const char *a, size_t al, const char *b, size_t bl)
{
    size_t na = 0, nb = 0;
    char *x = names_nfc(a, al, &na), *y = names_nfc(b, bl, &nb);
    bool same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* A zero width joiner between two pictographs is part of an emoji (👩‍💻):
 * it stays, as the page keeps it (web/js/format.js visibleText). */
static bool emoji_joiner(const uint8_t *start, const uint8_t *at, const uint8_t *end)
{
    ucs4_t next, prev = 0;
    if (at + 3 >= end || u8_mbtouc(&next, at + 3, (size_t)(end - at - 3)) < 1 ||
        !uc_is_property_extended_pictographic(next))
        return false;
    const uint8_t *q = at;
    for (int k = 0; k < 2 && q > start; k++) { /* the pictograph, maybe FE0F or a modifier */
        const uint8_t *b = u8_prev(&prev, q, start);
        if (!b)
            return false;
        q = b;
        if (prev != 0xFE0F && !uc_is_property_emoji_modifier(prev))
            break;
    }
    return uc_is_property_extended_pictographic(prev);
}

char *names_escape(const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s, *start = p, *end = p + len;
    bool visible = false, ascii = true;
    for (const uint8_t *q = p; q < end;) {
        ucs4_t c;
        ascii &= *q < 0x80;
        q += u8_mbtouc(&c, q, (size_t)(end - q));
        visible |= !names_invisible(c);
    }
    /* A text not in NFC ("é" as "e" + U+0301) shows its combining marks:
     * they are what tells it from its NFC twin.  ASCII is NFC: no
     * normalisation (a key listing escapes every key). */
    bool marks = false;
    if (!ascii) {
        size_t nl = 0;
        char *nfc = names_nfc(s, len, &nl);
        marks = nfc && (nl != len || memcmp(nfc, s, len) != 0);
        free(nfc);
    }
    /* at most "⟨U+10FFFF⟩" (14 bytes) for each byte of input */
    char *out = malloc(len * 14 + 1), *o = out;
    if (!out)
        return NULL;
    while (p < end) {
        ucs4_t c;
        int n = u8_mbtouc(&c, p, (size_t)(end - p));
        bool hide = names_invisible(c) && (c != ' ' || !visible) &&
                    !(c == 0x200D && emoji_joiner(start, p, end));
        if (hide || (marks && uc_is_general_category(c, UC_CATEGORY_M)))
            o += sprintf(o, "\u27e8U+%04X\u27e9", (unsigned)c);
        else {
            memcpy(o, p, (size_t)n);
            o += n;
        }
        p += n;
    }
    *o = '\0';
    return out;
}

size_t names_width(const char *s, size_t len)
{
    /* "UTF-8" is not a CJK encoding: East Asian ambiguous characters are
     * one column, as a UTF-8 terminal shows them. */
    int w = u8_width((const uint8_t *)s, len, "UTF-8");
    return w > 0 ? (size_t)w : 0;
}

int names_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || len == 0)
        return RINGSIM_EPARAM;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9 || v > (max - d) / 10)
            return RINGSIM_EPARAM;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int names_parse_decimal(const char *t, double *out)
{
    const char *p = t;
    size_t digits = 0;
    if (!p)
        return RINGSIM_EPARAM;
    if (*p == '-')
        p++;
    for (; *p >= '0' && *p <= '9'; p++)
        digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (!digits)
        return RINGSIM_EPARAM;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return RINGSIM_EPARAM;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return RINGSIM_EPARAM;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (errno || *end || !isfinite(v))
        return RINGSIM_EPARAM;
    *out = v;
    return 0;
}

/* One token: -?[0-9]+ within int64_t. */
static int parse_token(const char *s, size_t len, int64_t *out)
{
    bool neg = len > 0 && s[0] == '-';
    uint64_t mag;
    /* the magnitude of INT64_MIN is one more than INT64_MAX's */
    if (names_parse_u64(s + neg, len - neg, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &mag))
        return RINGSIM_EPARAM;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 0;
}

int names_parse_tokens(const char *text, size_t len, size_t max, int64_t **out, size_t *n)
{
    size_t cnt = len ? 1 : 0;
    for (size_t i = 0; i < len; i++)
        cnt += text[i] == ',';
    if (cnt > max)
        return RINGSIM_EPARAM;
    int64_t *v = malloc((cnt + 1) * sizeof *v);
    if (!v)
        return RINGSIM_ENOMEM;
    const char *at = text, *end = text + len;
    for (size_t k = 0; k < cnt; k++) {
        const char *comma = memchr(at, ',', (size_t)(end - at));
        size_t pl = comma ? (size_t)(comma - at) : (size_t)(end - at);
        if (parse_token(at, pl, &v[k])) {
            free(v);
            return RINGSIM_EPARAM;
        }
        at = comma ? comma + 1 : end;
    }
    *out = v;
    *n = cnt;
    return 0;
}
