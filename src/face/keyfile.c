/*
 * keyfile.c - keys from a text, one a line (see keyfile.h for the rules
 * and the two passes).
 *
 * A line is read byte by byte (getc_unlocked: about a second a gigabyte)
 * into a buffer of NAME_MAX_BYTES + 2 bytes; a longer line is read to its
 * end without being kept and refused with its number.  NUL bytes are kept
 * as bytes, so that name_check refuses them as control characters.
 */
#define _GNU_SOURCE
#include "keyfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"

/* A key and the "\r" a Windows line may end with. */
#define LINE_BUF (NAME_MAX_BYTES + 2)

struct keyfile {
    FILE *f;      /* what the second pass reads: the file, or the spool */
    FILE *in;     /* the file opened by keyfile_open (NULL: stdin) */
    bool spooled; /* f is the temporary copy */
    bool started; /* the second pass has begun (past a byte order mark) */
    off_t start;  /* where the text starts in the file (standard input may be past 0) */
    const char *label;
    uint64_t count, line;
    char first[LINE_BUF];
    size_t first_len;
    char buf[LINE_BUF];
};

/* The next line of f into buf (without its "\n" and "\r"): 0 and *len, 1
 * at the end, 2 for a line longer than a key (read to its end). */
static int read_line(FILE *f, char *buf, size_t *len, bool *bom)
{
    size_t n = 0;
    bool long_line = false;
    int ch;
    while ((ch = getc_unlocked(f)) != EOF && ch != '\n') {
        if (n < LINE_BUF)
            buf[n++] = (char)ch;
        else
            long_line = true;
    }
    if (ch == EOF && n == 0 && !long_line)
        return 1;
    if (*bom && n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) {
        memmove(buf, buf + 3, n - 3);
        n -= 3;
    }
    *bom = false;
    if (n && buf[n - 1] == '\r' && !long_line)
        n--;
    if (long_line || n > NAME_MAX_BYTES)
        return 2;
    *len = n;
    return 0;
}

static int read_failed(keyfile *kf, FILE *f, rs_error *err)
{
    return rs_fail(err, RINGSIM_EPARAM, "cannot read %s: %s", kf->label,
                   f == kf->f && kf->spooled ? "the temporary copy" : strerror(errno));
}

/* An unlinked temporary file in $TMPDIR (else /tmp) for standard input. */
static FILE *spool_open(rs_error *err)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ringsim-keys.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        rs_fail(err, RINGSIM_EPARAM, "cannot make a temporary file for standard input in %s: %s",
                dir && *dir ? dir : "/tmp", strerror(errno));
        return NULL;
    }
    unlink(path);
    FILE *f = fdopen(fd, "w+b");
    if (!f) {
        close(fd);
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    }
    return f;
}

/* The first pass: every line checked, the keys counted (and spooled). */
static int first_pass(keyfile *kf, FILE *in, rs_error *err)
{
    bool bom = true;
    size_t len;
    int r;
    while ((r = read_line(in, kf->buf, &len, &bom)) != 1) {
        kf->line++;
        if (r == 2)
            return rs_fail(err, RINGSIM_ENAME, "%s line %llu: a key is at most %d bytes", kf->label,
                           (unsigned long long)kf->line, NAME_MAX_BYTES);
        if (len == 0)
            continue; /* an empty line: no key */
        int rc = name_check(kf->buf, len, "key", err);
        if (rc) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            return rs_fail(err, rc, "%s line %llu: %s", kf->label, (unsigned long long)kf->line, m);
        }
        if (kf->count++ == 0) {
            memcpy(kf->first, kf->buf, len);
            kf->first_len = len;
        }
        if (kf->spooled && (fwrite(kf->buf, 1, len, kf->f) != len || putc('\n', kf->f) == EOF))
            return rs_fail(err, RINGSIM_EFULL, "cannot keep standard input in a temporary file: %s",
                           strerror(errno));
    }
    if (ferror(in))
        return read_failed(kf, in, err);
    if (kf->count == 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "%s has no key (one key a line; empty lines are skipped)", kf->label);
    if (kf->spooled && fflush(kf->f) != 0)
        return rs_fail(err, RINGSIM_EFULL, "cannot keep standard input in a temporary file: %s",
                       strerror(errno));
    if (fseeko(kf->f, kf->spooled ? 0 : kf->start, SEEK_SET) != 0)
        return read_failed(kf, kf->f, err);
    return 0;
}

int keyfile_open(keyfile **out, const char *path, rs_error *err)
{
    *out = NULL;
    keyfile *kf = calloc(1, sizeof *kf);
    if (!kf)
        return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
    bool std = !strcmp(path, "-");
    kf->label = std ? "standard input" : path;
    kf->in = std ? NULL : fopen(path, "rb");
    FILE *in = std ? stdin : kf->in;
    int rc = 0;
    if (!in) {
        rc = rs_fail(err, RINGSIM_EPARAM, "cannot read %s: %s", path, strerror(errno));
        goto fail;
    }
    /* A file that can seek is read again (standard input too, from where
     * it stands); anything else is kept. */
    kf->spooled = fseeko(in, 0, SEEK_CUR) != 0 || (kf->start = ftello(in)) < 0;
    kf->f = kf->spooled ? spool_open(err) : in;
    if (!kf->f) {
        rc = err->code;
        goto fail;
    }
    if ((rc = first_pass(kf, in, err)))
        goto fail;
    *out = kf;
    return 0;
fail:
    keyfile_close(kf);
    return rc;
}

uint64_t keyfile_count(const keyfile *kf) { return kf->count; }

sim_str keyfile_first(const keyfile *kf) { return (sim_str){kf->first, kf->first_len}; }

int keyfile_next(void *ud, sim_str *key, rs_error *err)
{
    keyfile *kf = ud;
    bool bom = !kf->spooled && !kf->started;
    kf->started = true;
    size_t len = 0;
    int r;
    while ((r = read_line(kf->f, kf->buf, &len, &bom)) == 0 && len == 0)
        ; /* empty lines */
    if (r == 1)
        return ferror(kf->f) ? read_failed(kf, kf->f, err) : 1;
    if (r == 2)
        return rs_fail(err, RINGSIM_EPARAM, "%s changed while it was read", kf->label);
    *key = (sim_str){kf->buf, len};
    return 0;
}

void keyfile_close(keyfile *kf)
{
    if (!kf)
        return;
    if (kf->spooled && kf->f)
        fclose(kf->f);
    if (kf->in)
        fclose(kf->in);
    free(kf);
}
