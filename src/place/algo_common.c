/*
 * algo_common.c - what the algorithm adaptors (algo_*.c) share: the tops
 * of the 32- and 64-bit spaces, the trace steps that several of them open
 * or close with (the successor lookup of a key on a point ring,
 * place__point_key, is inline in place_int.h).  Each is O(1).
 */
#include "place_int.h"

uint64_t place__top32(const place_config *cfg)
{
    (void)cfg;
    return UINT32_MAX;
}

uint64_t place__top64(const place_config *cfg)
{
    (void)cfg;
    return UINT64_MAX;
}

/* Whether a node holds the key; when none does, the trace's last step says
 * so. */
bool place__trace_owned(const place_key_info *k, json_t *t)
{
    if (k->owner >= 0)
        return true;
    place__step(t, "owner", "there is no node: the key waits unassigned");
    return false;
}

/* The hash step of the algorithms that place sha64 itself (jump,
 * rendezvous), then place__trace_owned. */
bool place__trace_sha64(const place_key_info *k, json_t *t)
{
    place__step(t, "hash", "sha64: the first 8 bytes of SHA-256 of the key, big-endian: %llu",
                (unsigned long long)k->hash);
    return place__trace_owned(k, t);
}
