/*
 * import_memcached_tool.c - what libmemcached itself makes of a server
 * text, for tests/ref/import_ref.py.
 *
 * import_memcached_tool list|string TEXTFILE KEYSFILE
 *   list    the text goes through memcached_servers_parse, the servers are
 *           pushed into a new memcached_st;
 *   string  the text is a configuration string given to memcached().
 * Then MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED is set (as a client using ketama
 * does; not when the string set --DISTRIBUTION=consistent, whose
 * continuum is taken as the library built it) and, for each key (one per line), memcached_generate_hash names the
 * server.  Prints "N", then N lines "HOST PORT" (libmemcached's
 * servers by position), then one server position per key.
 * Exit 0, or 1 with libmemcached's message.
 */
#define _GNU_SOURCE
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    size_t len;
    char *text = slurp(argv[2], &len);
    if (text == NULL)
        return 1;
    memcached_st *m = NULL;
    if (strcmp(argv[1], "list") == 0) {
        memcached_server_st *list = memcached_servers_parse(text);
        m = memcached_create(NULL);
        if (list == NULL || m == NULL || memcached_server_push(m, list) != MEMCACHED_SUCCESS) {
            fprintf(stderr, "memcached_servers_parse failed\n");
            return 1;
        }
        memcached_server_list_free(list);
    } else {
        char err[512];
        if (libmemcached_check_configuration(text, len, err, sizeof err) != MEMCACHED_SUCCESS) {
            fprintf(stderr, "configuration refused: %s\n", err);
            return 1;
        }
        m = memcached(text, len);
        if (m == NULL) {
            fprintf(stderr, "memcached() failed\n");
            return 1;
        }
    }
    free(text);
    /* A string that set --DISTRIBUTION=consistent is taken as configured. */
    if (memcached_behavior_get(m, MEMCACHED_BEHAVIOR_DISTRIBUTION) ==
        MEMCACHED_DISTRIBUTION_CONSISTENT) {
    } else if (memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1) != MEMCACHED_SUCCESS) {
        fprintf(stderr, "KETAMA_WEIGHTED refused\n");
        return 1;
    }
    uint32_t n = memcached_server_count(m);
    printf("%u\n", n);
    for (uint32_t i = 0; i < n; i++) {
        const memcached_instance_st *s = memcached_server_instance_by_position(m, i);
        printf("%s %u\n", memcached_server_name(s), (unsigned)memcached_server_port(s));
    }
    FILE *keys = fopen(argv[3], "rb");
    if (keys == NULL)
        return 1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t r;
    while ((r = getline(&line, &cap, keys)) >= 0) {
        if (r > 0 && line[r - 1] == '\n')
            line[--r] = '\0';
        printf("%u\n", memcached_generate_hash(m, line, (size_t)r));
    }
    free(line);
    fclose(keys);
    memcached_free(m);
    return fflush(stdout) == 0 ? 0 : 1;
}
