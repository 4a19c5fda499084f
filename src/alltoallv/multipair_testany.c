/*
 * multipair-testany: as multipair-waitany, but completion is found by
 * polling MPI_Testany, which drives progress from the caller's loop (the
 * variant that behaves best on MPI libraries with weak asynchronous progress).
 */
#include "alltoallv.h"

int tuna_a2av_multipair_testany_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_a2av_window_step(o, wait_rc, true, TUNA_TAG_MULTIPAIR_TESTANY);
}
