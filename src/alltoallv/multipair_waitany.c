/*
 * multipair-waitany: keep `stride` receives and `stride` sends of the
 * pairwise schedule in flight; MPI_Waitany finds a finished one, whose slot
 * takes the next step. Messages: 2(P-1) per rank; at most 2*stride pending.
 */
#include "alltoallv.h"

int tuna_a2av_multipair_waitany(const tuna_a2av_args *a)
{
    return tuna_a2av_multipair_window(a, false, TUNA_TAG_MULTIPAIR_WAITANY);
}
