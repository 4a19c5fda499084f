/*
 * xor: exclusive-or pairwise exchange. In step s (1 <= s < 2^ceil(log2 P))
 * rank r exchanges with r ^ s; the pairing is symmetric, so both sides of a
 * pair are in the same step. For P not a power of two, steps whose partner
 * is >= P are skipped, which keeps the schedule deadlock-free for every P.
 * Rounds: 2^ceil(log2 P) - 1 (P-1 of them non-empty per rank). Messages: 2(P-1).
 */
#include "alltoallv.h"

static void xor_pair(const tuna_a2av_args *a, int s, int *src, int *dst)
{
    int peer = a->rank ^ s;
    *src = *dst = peer < a->size ? peer : -1;
}

int tuna_a2av_xor_step(tuna_a2av_op *o, int wait_rc)
{
    int pow2 = 1;
    while (pow2 < o->a->size)
        pow2 <<= 1;
    return tuna_a2av_pairs_step(o, wait_rc, pow2, xor_pair, TUNA_TAG_XOR, "xor");
}
