/*
 * alg_md5.h - OpenSSL's MD5, made ready once, for ketama and nutcracker
 * (why each digest is the low-level MD5_CTX rather than an EVP_MD_CTX: see
 * alg_md5.c).  It keeps no scratch: digests may run on many threads at
 * once.
 *
 * Cost: one MD5 per digest, no allocation.
 */
#ifndef RINGSIM_ALG_MD5_H
#define RINGSIM_ALG_MD5_H

#include <stddef.h>

typedef struct alg_md5 alg_md5;

/* New hasher, or NULL when out of memory or OpenSSL has no MD5. */
alg_md5 *alg_md5_new(void);
/* Accepts NULL. */
void alg_md5_free(alg_md5 *m);
/* MD5 of len bytes at s into out[16].  Cannot fail. */
void alg_md5_digest(alg_md5 *m, const void *s, size_t len, unsigned char out[16]);

#endif
