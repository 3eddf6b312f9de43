/*
 * alg_md5.c - OpenSSL's MD5 for the algorithms that hash with it
 * (libmemcached's ketama, nutcracker's md5 key hash and ketama points).
 *
 * With OpenSSL 3.0 (Debian 12) EVP_DigestInit_ex2 frees and reallocates
 * the provider's context on every call, which costs about 100 ns per key,
 * as much as the rest of a lookup, and left ketama slower than
 * libmemcached (1.0-1.2x in bench_ketama).  So each digest uses the
 * low-level MD5_Init/Update/Final on an MD5_CTX of its own, on the stack
 * (the same assembly core, no allocation; deprecated in 3.0 but present in
 * every Debian and Ubuntu build).  The object keeps no scratch, so a
 * placement's lookups may run on many threads at once (libringsim).  Where
 * OpenSSL is built without the deprecated API, the object holds a fetched
 * EVP_MD and each digest makes its own context (EVP_Digest: slower, as
 * safe).
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* MD5_Init & co., see above */
#include "alg_md5.h"

#include <openssl/evp.h>
#include <openssl/md5.h>
#include <stdlib.h>

#if defined(OPENSSL_NO_DEPRECATED_3_0) || defined(OPENSSL_NO_MD5)
#define LOW_LEVEL_MD5 0
#else
#define LOW_LEVEL_MD5 1
#endif

struct alg_md5 {
#if LOW_LEVEL_MD5
    char unused; /* nothing: each digest has its MD5_CTX on the stack */
#else
    EVP_MD *md5; /* fetched once; read-only afterwards */
#endif
};

alg_md5 *alg_md5_new(void)
{
    alg_md5 *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
#if !LOW_LEVEL_MD5
    m->md5 = EVP_MD_fetch(NULL, "MD5", NULL);
    if (!m->md5) {
        alg_md5_free(m);
        return NULL;
    }
#endif
    return m;
}

void alg_md5_free(alg_md5 *m)
{
    if (!m)
        return;
#if !LOW_LEVEL_MD5
    EVP_MD_free(m->md5);
#endif
    free(m);
}

void alg_md5_digest(alg_md5 *m, const void *s, size_t len, unsigned char out[16])
{
    /* Neither way can fail with a fetched digest. */
#if LOW_LEVEL_MD5
    (void)m;
    MD5_CTX c;
    MD5_Init(&c);
    MD5_Update(&c, s, len);
    MD5_Final(out, &c);
#else
    unsigned int n = 0;
    EVP_Digest(s, len, out, &n, m->md5, NULL);
#endif
}
