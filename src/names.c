/*
 * names.c - name validation (see names.h).
 */
#include "names.h"

#include <stdint.h>

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
        return rs_fail(err, RINGSIM_ENAME, "%s is %zu bytes long; the limit is %d",
                       what, len, NAME_MAX_BYTES);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F)
            return rs_fail(err, RINGSIM_ENAME,
                           "%s contains a control character (byte 0x%02X at %zu)",
                           what, c, i);
    }
    if (!utf8_valid(s, len))
        return rs_fail(err, RINGSIM_ENAME, "%s is not valid UTF-8", what);
    return 0;
}
