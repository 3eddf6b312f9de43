/*
 * hash.h - positions on the ring.
 *
 * position(s) is the first four bytes of SHA-256(s), big-endian: exactly
 * JavaScript's parseInt(sha256hex(s).slice(0, 8), 16) in the original
 * simulator.  sha64(s) is the first eight bytes, big-endian (docs/api.md,
 * "Version 2": the key hash of jump and rendezvous).  The digest is fetched from OpenSSL once per hasher and one
 * EVP_MD_CTX is reused for every call (OpenSSL's one-shot SHA256() re-fetches
 * and is ~3x slower).  A hasher is not thread-safe; make one per thread.
 * Cost: one SHA-256 compression per 55 bytes of input.
 */
#ifndef RINGSIM_HASH_H
#define RINGSIM_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct hasher hasher;

/* New hasher, or NULL when OpenSSL has no SHA-256.  Free with hasher_free. */
hasher *hasher_new(void);
/* Accepts NULL. */
void hasher_free(hasher *h);

/* Position of the len bytes at s.  Cannot fail. */
uint32_t hash_position(hasher *h, const void *s, size_t len);
/* Full digest as 64 lowercase hex digits plus NUL into out[65]. */
void hash_sha256_hex(hasher *h, const void *s, size_t len, char out[65]);
/* Full digest, 32 raw bytes, into out.  Cannot fail. */
void hash_sha256(hasher *h, const void *s, size_t len, unsigned char out[32]);
/* sha64(s): the first 8 bytes of SHA-256(s) read big-endian.  Cannot fail. */
uint64_t hash_sha64(hasher *h, const void *s, size_t len);

/* mix(x): the SplitMix64 finalizer exactly as docs/api.md writes it (mod 2^64).
 * A bijection on 64-bit values; pure, no hasher needed. */
static inline uint64_t hash_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

#endif
