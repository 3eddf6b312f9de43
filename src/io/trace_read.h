/*
 * trace_read.h - request logs, streamed: one record (a key, its bytes, the
 * log's clock) at a time, whatever the log's length (docs/api.md v4,
 * "replay your own traffic").
 *
 * The idea: three layers.  The bottom reads the file descriptor in 256 KiB
 * blocks; the middle decompresses when the first bytes are gzip's
 * (1f 8b, zlib) or zstd's (28 b5 2f fd, libzstd) magic, member after
 * member; the top cuts lines (or 24-byte binary records) and parses them by
 * the format's row of the table in trace_read.c.  Formats bid for the first
 * bytes (libarchive's way): `auto` takes the best bid, and a format named
 * by the caller must accept the first record or the file is refused at
 * once, with one line that says why.  A later line that does not parse is
 * counted and skipped (bad_lines, the first one's number): never fatal.
 *
 * Formats:
 *   access-log      nginx's and Apache's combined and common formats (an
 *                   Apache vhost_combined leading "host:port" too); the key
 *                   the request's URI (default), host + URI (vhost lines
 *                   only) or the remote address; bytes the body bytes sent
 *                   ("-" is 0); the clock from [10/Oct/2000:13:55:36 -0700].
 *   twitter         Twitter's cache trace CSV: timestamp, anonymized key,
 *                   key size, value size, client id, operation, TTL; bytes
 *                   the value size; the clock the timestamp (seconds).
 *   oracle-general  libCacheSim's binary records, 24 bytes little-endian:
 *                   uint32 time, uint64 id, uint32 size, int64 next access;
 *                   the key is the id in decimal (the original key is not in
 *                   the trace).
 *   csv             a header line naming the columns; --key-col (required),
 *                   --size-col, --time-col (epoch seconds or RFC 3339),
 *                   --op-col (read, not used: every record is a request).
 *   keys            one key a line; no size (0 bytes), no clock.
 *
 * Costs: constant memory (a 256 KiB input block, a 256 KiB decoded block, a
 * line of at most TRACE_LINE_MAX bytes); linear in the bytes.  Lines longer
 * than that are bad lines.  A reader is not thread-safe.
 */
#ifndef RINGSIM_TRACE_READ_H
#define RINGSIM_TRACE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define TRACE_LINE_MAX 65536u /* bytes of one line, its end excluded */
#define TRACE_KEY_MAX 255u    /* a key longer than a name (docs/api.md "Names") is a bad line */

typedef enum {
    TRACE_AUTO,
    TRACE_ACCESS_LOG,
    TRACE_TWITTER,
    TRACE_ORACLE,
    TRACE_CSV,
    TRACE_KEYS,
    TRACE_FORMAT_COUNT
} trace_format;

typedef enum { TRACE_KEY_URI, TRACE_KEY_HOST_URI, TRACE_KEY_REMOTE_ADDR } trace_key_field;

typedef enum { TRACE_PLAIN, TRACE_GZIP, TRACE_ZSTD } trace_compression;

typedef struct trace_opts {
    trace_format format;
    trace_key_field key;  /* access-log only */
    const char *key_col;  /* csv: the columns, by header name or 1-based number */
    const char *size_col; /* may be NULL */
    const char *time_col; /* may be NULL */
    const char *op_col;   /* may be NULL */
} trace_opts;

/* One request.  key points into the reader and is valid until the next
 * call. */
typedef struct trace_rec {
    const char *key;
    size_t len;
    uint64_t bytes;
    bool has_time;
    double time; /* epoch seconds (or the log's own seconds) */
} trace_rec;

typedef struct trace_reader trace_reader;

/* Names: "auto", "access-log", "twitter", "oracle-general", "csv", "keys";
 * 0 or RINGSIM_EPARAM listing them. */
int trace_format_parse(const char *name, trace_format *out, rs_error *err);
const char *trace_format_name(trace_format f);
/* "uri", "host_uri", "remote_addr". */
int trace_key_parse(const char *name, trace_key_field *out, rs_error *err);
const char *trace_key_name(trace_key_field k);
const char *trace_compression_name(trace_compression c);
/* The formats' names, comma-separated, for help texts. */
#define TRACE_FORMATS "auto, access-log, twitter, oracle-general, csv, keys"

/* Open a reader on fd (borrowed: not closed by the reader; read from its
 * current offset).  Reads the first block, recognises the compression and
 * the format, and checks the first record: a file that is not of the
 * format is refused here (RINGSIM_EPARAM, a message naming the format and
 * the first line), as are csv columns missing from the header.  name is
 * what messages call the file.  0, RINGSIM_EPARAM, RINGSIM_ENOMEM or
 * RINGSIM_EINTERNAL (a read error). */
int trace_reader_open(trace_reader **out, int fd, const char *name, const trace_opts *o,
                      rs_error *err);
/* The next request: 0 with *rec filled, 1 at the end, or a negative code
 * (a read or decompression error: RINGSIM_EPARAM naming the byte offset).
 * Bad lines are skipped and counted. */
int trace_reader_next(trace_reader *r, trace_rec *rec, rs_error *err);
/* Accepts NULL. */
void trace_reader_free(trace_reader *r);

trace_format trace_reader_format(const trace_reader *r);
trace_compression trace_reader_compression(const trace_reader *r);
uint64_t trace_reader_bytes_in(const trace_reader *r); /* bytes read from fd so far */
uint64_t trace_reader_lines(const trace_reader *r);    /* lines (records) seen, bad included */
uint64_t trace_reader_bad_lines(const trace_reader *r);
uint64_t trace_reader_first_bad(const trace_reader *r); /* its number from 1; 0: none */
/* Whether records carry the log's clock (every format but keys, and csv
 * without a time column). */
bool trace_reader_has_time(const trace_reader *r);

/* Parsers exposed for the tests and the HTTP face: a time as epoch seconds
 * or RFC 3339 ("2026-12-06T10:00:00Z", "+hh:mm" offsets); 0 or -1.  And
 * one access-log line (not NUL-terminated): 0 with rec filled (the key
 * points into line, or into buf, TRACE_KEY_MAX + 1 bytes, for host_uri),
 * or -1. */
int trace_parse_time(const char *s, size_t len, double *out);
int trace_parse_access_line(const char *line, size_t len, trace_key_field key, char *buf,
                            trace_rec *rec);

#endif
