/*
 * place_algos.c - the algorithm table: the catalogue's order of the
 * placement algorithms, each an adaptor of its own (algo_<core>.c) that
 * ends with its record, `const place_algo place_algo_<name>` (curl's
 * Curl_ssl_openssl).  An adaptor wraps a core (src/alg/alg_*.c, or ring.c
 * for the seed's ring) into the ops of place_int.h; behaviour lives in the
 * cores, an adaptor says only how the engine sees them.  Adding an
 * algorithm is a file and a line here; place.c reads the table, never a
 * name.
 *
 * One build path for all (place_build): it makes the cores' alg_node view
 * (p->anodes) and the ids, calls the entry's build with what the layout
 * starts from (place_from), then builds the successor index over the points
 * and counts each node's points, slots or entries; a failure anywhere frees
 * everything.  An entry's build only hands p->anodes to its core.
 */
#include "place_int.h"

const place_algo *const place__algos[] = {
    &place_algo_ring,       &place_algo_jump,
    &place_algo_rendezvous, &place_algo_multiprobe,
    &place_algo_ketama,     &place_algo_nginx,
    &place_algo_envoy_ring, &place_algo_maglev,
    &place_algo_cassandra,  &place_algo_redis,
    &place_algo_haproxy,    &place_algo_twemproxy,
    &place_algo_ceph,       NULL,
};
