/*
 * multipair-waitany: keep `stride` receives and `stride` sends of the
 * pairwise schedule in flight; MPI_Waitany finds a finished one, whose slot
 * takes the next step. Messages: 2(P-1) per rank; at most 2*stride pending.
 */
#include "alltoallv.h"

int tuna_a2av_multipair_waitany_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_a2av_window_step(o, wait_rc, false, TUNA_TAG_MULTIPAIR_WAITANY);
}
