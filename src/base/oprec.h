/*
 * oprec.h - one operation as the log keeps it: the record the store reads
 * and writes and the engine hands to its faces (sim_op), defined once on
 * the floor both stand on, so that the engine's header needs nothing of the
 * store's.  Text members are malloc'd by whoever fills the record; the
 * store frees them (store_op_clear, sim_op_clear).
 */
#ifndef RINGSIM_OPREC_H
#define RINGSIM_OPREC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct oprec {
    int64_t id;
    char at[32];
    char *type, *subject, *params, *moved_from, *config; /* malloc'd */
    int64_t keys_moved;
    int64_t replica_moves;
    int64_t skipped; /* keys an insert found already there; -1 unknown */
    bool has_loads;  /* the next two are known (logged by schema 5) */
    double requests_moved;
    int64_t bytes_moved;
} oprec;

#endif
