/*
 * alg_jump.c - jump consistent hash, as published (see alg_jump.h).
 *
 * The arithmetic is the paper's figure 1 transcribed: int64 b and j, the key
 * advanced by the LCG mod 2^64, and j computed as
 * (double)(b + 1) * ((double)2^31 / (double)((key >> 33) + 1)).  C evaluates
 * that in IEEE double on every target ringsim builds for (FLT_EVAL_METHOD 0,
 * checked below), so the result is the paper's bit for bit.
 */
#include "alg_jump.h"

#include <float.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "jump_hash needs double arithmetic evaluated in double (FLT_EVAL_METHOD 0)"
#endif

int32_t jump_hash(uint64_t key, int32_t buckets)
{
    int64_t b = -1, j = 0;
    while (j < buckets) {
        b = j;
        key = key * 2862933555777941757ull + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
    }
    return (int32_t)b;
}

int jump_check_weight(const alg_node *node, rs_error *err)
{
    return alg_check_unweighted(node, "jump", "each node is one bucket", err);
}
