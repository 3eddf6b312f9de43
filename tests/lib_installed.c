/*
 * lib_installed.c - a program of someone else's, compiled against the
 * installed libringsim with `pkg-config --cflags --libs ringsim` (shared)
 * or `--static` (tests/lib_install_test.sh builds and runs both).
 *
 * It places keys under libmemcached's ketama (two replicas, a server
 * down) and prints one line a key -- "KEY OWNER SERVED_BY REPLICA..." --
 * which the test compares with the installed `ringsim lookup`.  It defines
 * functions named as ringsim's internal ones (name_check, place_build,
 * hasher_new, vec_reserve): a program may, and must still link against
 * either library, whose only global names are ringsim_*.
 */
#include <stdio.h>
#include <string.h>

#include <ringsim/ringsim.h>

int name_check(void);
int place_build(void);
int hasher_new(void);
int vec_reserve(void);
int name_check(void) { return 1; }
int place_build(void) { return 2; }
int hasher_new(void) { return 3; }
int vec_reserve(void) { return 4; }

static const char *const nodes[][2] = {
    {"10.0.0.1:11211", "1"}, {"10.0.0.2:11211", "2"}, {"10.0.0.3:11211", "1"}};

int main(int argc, char **argv)
{
    ringsim_placement *p = NULL;
    int rc = ringsim_placement_new(&p, "ketama");
    if (!rc)
        rc = ringsim_placement_set_param(p, "replicas", "2");
    for (size_t i = 0; !rc && i < 3; i++)
        rc = ringsim_placement_add_node(p, nodes[i][0], nodes[i][1][0] - '0');
    if (!rc)
        rc = ringsim_placement_set_node(p, "10.0.0.3:11211", "state", "down");
    if (!rc)
        rc = ringsim_placement_build(p);
    for (int a = 1; !rc && a < argc; a++) {
        const char *owner, *served, *reps[RINGSIM_MAX_REPLICAS];
        size_t n, len = strlen(argv[a]);
        rc = ringsim_lookup(p, argv[a], len, &owner);
        if (!rc)
            rc = ringsim_served_by(p, argv[a], len, &served);
        if (!rc)
            rc = ringsim_replicas(p, argv[a], len, reps, RINGSIM_MAX_REPLICAS, &n);
        if (rc)
            break;
        printf("%s %s %s", argv[a], owner ? owner : "-", served ? served : "-");
        for (size_t i = 0; i < n; i++)
            printf(" %s", reps[i]);
        printf("\n");
    }
    ringsim_placement_free(p);
    if (rc)
        fprintf(stderr, "lib_installed: %s\n", ringsim_strerror(rc));
    /* The program's own functions are its own. */
    if (name_check() + place_build() + hasher_new() + vec_reserve() != 10)
        rc = 1;
    printf("libringsim %s\n", ringsim_version());
    return rc ? 1 : 0;
}
