/*
 * scattered (MPICH's alltoallv "scattered" algorithm): peers are visited in
 * batches of `block`; each batch posts its receives (from rank+i) and sends
 * (to rank-i) and waits for all of them before the next batch, which bounds
 * the number of outstanding requests and spreads the load over the peers.
 * Rounds: ceil(P/block). Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

/* Batches of `block` offsets i = 0, 1, ...: receive from rank+i, send to rank-i. */
int tuna_a2av_scattered_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_a2av_batches_step(o, wait_rc, 0, (int)tuna_a2av_param(o->a, "block"), false,
                                  TUNA_TAG_SCATTERED, "scattered: MPI_Waitall failed");
}
