/*
 * hash.c - SHA-256 positions through OpenSSL's EVP interface.
 *
 * The digests are fetched once (EVP_MD_fetch) and the context reset with
 * EVP_DigestInit_ex2 for every string, which is the fast path in OpenSSL 3.
 */
#include "hash.h"

#include <openssl/evp.h>
#include <stdlib.h>

struct hasher {
    EVP_MD *sha256;
    EVP_MD_CTX *ctx;
};

hasher *hasher_new(void)
{
    hasher *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!h->sha256)
        goto fail;
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx)
        goto fail;
    return h;
fail:
    hasher_free(h);
    return NULL;
}

void hasher_free(hasher *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    EVP_MD_free(h->sha256);
    free(h);
}

static void digest(hasher *h, const EVP_MD *md, const void *s, size_t len, unsigned char *out)
{
    unsigned int n = 0;
    /* With a fetched digest and a live context these calls cannot fail. */
    EVP_DigestInit_ex2(h->ctx, md, NULL);
    EVP_DigestUpdate(h->ctx, s, len);
    EVP_DigestFinal_ex(h->ctx, out, &n);
}

uint32_t hash_position(hasher *h, const void *s, size_t len)
{
    unsigned char d[32];
    digest(h, h->sha256, s, len, d);
    return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | (uint32_t)d[3];
}

void hash_sha256_hex(hasher *h, const void *s, size_t len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char d[32];
    digest(h, h->sha256, s, len, d);
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = '\0';
}

void hash_sha256(hasher *h, const void *s, size_t len, unsigned char out[32])
{
    digest(h, h->sha256, s, len, out);
}

uint64_t hash_sha64(hasher *h, const void *s, size_t len)
{
    unsigned char d[32];
    digest(h, h->sha256, s, len, d);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[i];
    return v;
}
