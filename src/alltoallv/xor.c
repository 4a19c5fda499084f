/*
 * xor: exclusive-or pairwise exchange. In step s (1 <= s < 2^ceil(log2 P))
 * rank r exchanges with r ^ s; the pairing is symmetric, so both sides of a
 * pair are in the same step. For P not a power of two, steps whose partner
 * is >= P are skipped, which keeps the schedule deadlock-free for every P.
 * Rounds: 2^ceil(log2 P) - 1 (P-1 of them non-empty per rank). Messages: 2(P-1).
 */
#include "alltoallv.h"

int tuna_a2av_xor(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    int pow2 = 1;
    while (pow2 < P)
        pow2 <<= 1;
    int rc = tuna_a2av_copy_self(a), comm_rc = MPI_SUCCESS;
    /* A failed step is complete when recorded, and the steps go on (docs/testing.md). */
    for (int s = 1; s < pow2 && rc == MPI_SUCCESS; s++) {
        int peer = me ^ s;
        if (peer < P)
            comm_rc = tuna_first_error(comm_rc, tuna_a2av_exchange_step(a, peer, peer,
                                                                        TUNA_TAG_XOR));
    }
    tuna_stats_rounds(pow2 - 1);
    return tuna_first_error(rc, comm_rc);
}
