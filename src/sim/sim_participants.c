/*
 * sim_participants.c - the one list of the operation frame's participants.
 *
 * A participant is a part of the engine that keeps something of its own
 * beside the state and must follow every operation: it registers its
 * phases (sim_participant, sim_int.h) and the frame in sim.c calls them
 * through this list, never by name -- SQLite's sqlite3_module, whose
 * xBegin, xSync, xCommit and xRollback the transaction's owner calls for
 * whichever virtual tables take part.  Each participant's file ends with
 * its own record (curl's `const struct Curl_ssl Curl_ssl_openssl`).
 *
 * The order is the order of every phase.  The workload comes first: its
 * prepare fills the operation's loads (requests and bytes moved, the
 * pairs', what nobody serves), which the frame's v4 record and a dry
 * run's answer then read; the undo record only writes, after the log
 * entry, the state before a topology change.  Neither reads what the
 * other keeps, so they would commute; the order is fixed all the same.
 *
 * Node states are not here: they are attributes of a node, copied and
 * stored with it, and have nothing to do at a commit or a rollback; they
 * register a codec instead (sim_node_attr, listed in sim_state.c).
 */
#include "sim_int.h"

const sim_participant *const sim__participants[] = {
    &sim_participant_workload, /* sim_workload_follow.c */
    &sim_participant_undo,     /* sim_undo.c */
    NULL,
};
