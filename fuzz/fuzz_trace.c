/*
 * fuzz_trace.c - libFuzzer target: the request-log readers
 * (src/io/trace_read.h) with any bytes.  The first byte picks the format
 * (auto, access-log, twitter, oracle-general, csv, keys) and the access
 * log's key field; the rest is the file, handed over as a memfd so that
 * the reader reads it as it reads any log, in 256 KiB blocks.  An open
 * either refuses with a message or gives a reader whose every record has a
 * key of 1 to 255 bytes with no control byte (text formats) and whose bad
 * lines are counted with the first named; a read error is a message, never
 * a crash, a leak, undefined behaviour or a record past the input.  Lines
 * past 64 KiB, gzip and zstd magic followed by garbage, truncated binary
 * records are all in reach.  Built by `make fuzz-trace` (clang, ASan,
 * UBSan).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    trace_opts o = {.format = (trace_format)(data[0] % TRACE_FORMAT_COUNT),
                    .key = (trace_key_field)(data[0] / TRACE_FORMAT_COUNT % 3),
                    .key_col = (data[0] & 0x80) ? "2" : "key",
                    .size_col = (data[0] & 0x40) ? "size" : NULL,
                    .time_col = (data[0] & 0x20) ? "1" : NULL};
    int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
        abort();
    lseek(fd, 0, SEEK_SET);
    trace_reader *r;
    rs_error err = {0};
    if (trace_reader_open(&r, fd, "fuzz", &o, &err)) {
        if (!err.msg[0])
            abort(); /* a refusal says why */
        close(fd);
        return 0;
    }
    trace_rec rec;
    int rc;
    uint64_t n = 0;
    while ((rc = trace_reader_next(r, &rec, &err)) == 0) {
        if (rec.len < 1 || rec.len > TRACE_KEY_MAX)
            abort();
        if (trace_reader_format(r) != TRACE_ORACLE)
            for (size_t i = 0; i < rec.len; i++)
                if ((unsigned char)rec.key[i] < 0x20 || rec.key[i] == 0x7f)
                    abort();
        n++;
    }
    if (rc < 0 && !err.msg[0])
        abort();
    if (trace_reader_bad_lines(r) && !trace_reader_first_bad(r))
        abort();
    if (n + trace_reader_bad_lines(r) > trace_reader_lines(r))
        abort();
    trace_reader_free(r);
    close(fd);
    return 0;
}
