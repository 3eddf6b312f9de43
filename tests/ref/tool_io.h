/*
 * tool_io.h - line input shared by the tiny reference drivers in tests/ref/:
 * hex-encoded names and keys (so any byte survives the pipe) and a bounded
 * line reader (getline's, for the drivers that read raw bytes).  Header-only,
 * for the test drivers alone (they define _GNU_SOURCE for getline).
 */
#ifndef RINGSIM_TOOL_IO_H
#define RINGSIM_TOOL_IO_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

enum { TOOL_LINE_MAX = 8192, TOOL_NAME_MAX = 1024 };

/* Decode the hex digits at *p into out (at most cap bytes), stopping at a
 * space or the end; advances *p past one following space.  Returns the byte
 * count or -1 on a bad digit, odd length or overflow. */
static inline long tool_unhex(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    size_t n = 0;
    while (*s && *s != ' ' && *s != '\n') {
        int v = 0;
        for (int k = 0; k < 2; k++, s++) {
            char c = *s;
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0)
                return -1;
            v = v * 16 + d;
        }
        if (n == cap)
            return -1;
        out[n++] = (char)v;
    }
    if (*s == ' ')
        s++;
    *p = s;
    return (long)n;
}

/* Read a line into *buf (getline's buffer) without its newline: its length,
 * or -1 at the end. */
static inline long tool_read_line(char **buf, size_t *cap, FILE *in)
{
    ssize_t n = getline(buf, cap, in);
    if (n < 0)
        return -1;
    if (n > 0 && (*buf)[n - 1] == '\n')
        (*buf)[--n] = '\0';
    return (long)n;
}

#endif
