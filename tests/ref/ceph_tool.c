/*
 * ceph_tool.c - what ringsim's CRUSH core answers, printed the way the real
 * tools print it, for tests/ref/ceph_ref.py and bench/bench_ceph.
 *
 *   ceph_tool test MAP RULE NUMREP MINX MAXX [ID:W16 ...]
 *       crushtool -i MAP.bin --test --show-mappings --rule RULE
 *       --num-rep NUMREP --min-x MINX --max-x MAXX [--weight ID W ...]:
 *       "CRUSH rule R x X [a,b,c]" per x (holes 2147483647).
 *   ceph_tool pgs MAP RULE POOL PGNUM SIZE TYPE HASHPSPOOL MAXOSD [out:ID|down:ID ...]
 *       osdmaptool --test-map-pgs-dump: "POOL.PS\t[up]\tPRIMARY" per PG
 *       (TYPE replicated|erasure: a down OSD shifts or leaves a hole).
 *   ceph_tool obj MAP RULE POOL PGNUM SIZE TYPE HASHPSPOOL MAXOSD NAME...
 *       osdmaptool --test-map-object: " object 'NAME' -> POOL.PS -> [up]".
 *   ceph_tool export MAP      the map as crushmap_write writes it.
 *   ceph_tool bench MAP RULE NUMREP N
 *       maps x = 0..N-1 and prints the seconds and a checksum.
 * MAP is crushtool -d text.  Exit 1 with a message on any refusal.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg_ceph.h"
#include "crushmap.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

static const ceph_rule *rule_by_id(const ceph_map *m, int id)
{
    for (size_t i = 0; i < m->nrules; i++)
        if (m->rules[i].id == id)
            return &m->rules[i];
    return NULL;
}

static void print_set(const int32_t *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; i++)
        printf(i ? ",%d" : "%d", v[i]);
    putchar(']');
}

/* OSDMap::_pg_to_raw_osds then _raw_to_up_osds: drop ids >= max_osd
 * (nonexistent), then down OSDs shift (replicated) or become holes. */
static int up_set(const ceph_map *m, const ceph_rule *r, uint32_t pps, int size, const uint32_t *w,
                  int maxosd, const unsigned char *down, int erasure, int32_t *up)
{
    int32_t raw[CEPH_MAX_RESULT];
    int n = ceph_do_rule(m, r, (int32_t)pps, raw, size, w, maxosd, NULL, NULL);
    int k = 0;
    for (int i = 0; i < n; i++) {
        int32_t o = raw[i];
        int gone = o == CEPH_ITEM_NONE || o >= maxosd || down[o];
        if (erasure)
            up[k++] = gone ? CEPH_ITEM_NONE : o;
        else if (!gone)
            up[k++] = o;
    }
    return k;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ceph_tool test|pgs|obj|export|bench MAP ...\n");
        return 2;
    }
    size_t len;
    char *text = slurp(argv[2], &len);
    if (!text) {
        fprintf(stderr, "ceph_tool: cannot read %s\n", argv[2]);
        return 1;
    }
    ceph_map *m;
    int line;
    rs_error err = {0};
    if (crushmap_parse(text, len, &m, &line, &err)) {
        fprintf(stderr, "ceph_tool: line %d: %s\n", line, err.msg);
        free(text);
        return 1;
    }
    free(text);
    int rc = 0;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "export")) {
        sbuf o = {0};
        if (crushmap_write(m, &o))
            rc = 1;
        else
            fputs(o.p, stdout);
        free(o.p);
    } else if (!strcmp(cmd, "test") && argc >= 7) {
        const ceph_rule *r = rule_by_id(m, atoi(argv[3]));
        int numrep = atoi(argv[4]), minx = atoi(argv[5]), maxx = atoi(argv[6]);
        int wmax = m->max_devices;
        uint32_t *w = malloc(((size_t)wmax + 1) * sizeof *w);
        for (int i = 0; i < wmax; i++)
            w[i] = CEPH_WEIGHT_ONE;
        for (int i = 7; i < argc; i++) {
            int id;
            unsigned wt;
            if (sscanf(argv[i], "%d:%u", &id, &wt) == 2 && id >= 0 && id < wmax)
                w[id] = wt;
        }
        for (int x = minx; r && x <= maxx; x++) {
            int32_t out[CEPH_MAX_RESULT];
            int n = ceph_do_rule(m, r, x, out, numrep, w, wmax, NULL, NULL);
            printf("CRUSH rule %d x %d ", r->id, x);
            print_set(out, n);
            putchar('\n');
        }
        rc = r ? 0 : 1;
        free(w);
    } else if ((!strcmp(cmd, "pgs") || !strcmp(cmd, "obj")) && argc >= 10) {
        const ceph_rule *r = rule_by_id(m, atoi(argv[3]));
        uint32_t pool = (uint32_t)atoi(argv[4]), pgnum = (uint32_t)atoi(argv[5]);
        int size = atoi(argv[6]), erasure = !strcmp(argv[7], "erasure"), hashps = atoi(argv[8]);
        int maxosd = atoi(argv[9]);
        uint32_t *w = calloc((size_t)maxosd + 1, sizeof *w);
        unsigned char *down = calloc((size_t)maxosd + 1, 1);
        for (int i = 0; i < maxosd; i++)
            w[i] = CEPH_WEIGHT_ONE;
        int first_name = 10;
        if (!strcmp(cmd, "pgs"))
            for (int i = 10; i < argc; i++) {
                int id;
                if (sscanf(argv[i], "out:%d", &id) == 1 && id >= 0 && id < maxosd)
                    w[id] = 0;
                else if (sscanf(argv[i], "down:%d", &id) == 1 && id >= 0 && id < maxosd)
                    down[id] = 1;
            }
        uint32_t mask = ceph_pg_mask(pgnum);
        if (!r) {
            rc = 1;
        } else if (!strcmp(cmd, "pgs")) {
            printf("pool %u pg_num %u\n", pool, pgnum);
            for (uint32_t ps = 0; ps < pgnum; ps++) {
                int32_t up[CEPH_MAX_RESULT];
                int n = up_set(m, r, ceph_pps(ps, pool, pgnum, hashps), size, w, maxosd, down,
                               erasure, up);
                int primary = -1;
                for (int i = 0; i < n && primary < 0; i++)
                    if (up[i] != CEPH_ITEM_NONE)
                        primary = up[i];
                printf("%u.%x\t", pool, ps);
                print_set(up, n);
                printf("\t%d\n", primary);
            }
        } else {
            for (int i = first_name; i < argc; i++) {
                uint32_t h = ceph_str_hash_rjenkins(argv[i], strlen(argv[i]));
                uint32_t ps = ceph_stable_mod(h, pgnum, mask);
                int32_t up[CEPH_MAX_RESULT];
                int n = up_set(m, r, ceph_pps(ps, pool, pgnum, hashps), size, w, maxosd, down,
                               erasure, up);
                printf(" object '%s' -> %u.%x -> ", argv[i], pool, ps);
                print_set(up, n);
                putchar('\n');
            }
        }
        free(w);
        free(down);
    } else if (!strcmp(cmd, "bench") && argc >= 6) {
        const ceph_rule *r = rule_by_id(m, atoi(argv[3]));
        int numrep = atoi(argv[4]);
        long n = atol(argv[5]);
        int wmax = m->max_devices;
        uint32_t *w = malloc(((size_t)wmax + 1) * sizeof *w);
        for (int i = 0; i < wmax; i++)
            w[i] = CEPH_WEIGHT_ONE;
        struct timespec a, b;
        uint64_t sum = 0;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long x = 0; r && x < n; x++) {
            int32_t out[CEPH_MAX_RESULT];
            int k = ceph_do_rule(m, r, (int32_t)x, out, numrep, w, wmax, NULL, NULL);
            for (int i = 0; i < k; i++)
                sum = sum * 31 + (uint32_t)out[i];
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.6f %llu\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
               (unsigned long long)sum);
        rc = r ? 0 : 1;
        free(w);
    } else {
        fprintf(stderr, "ceph_tool: bad command\n");
        rc = 2;
    }
    ceph_map_free(m);
    return rc;
}
