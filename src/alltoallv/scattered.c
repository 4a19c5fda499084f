/*
 * scattered (MPICH's alltoallv "scattered" algorithm): peers are visited in
 * batches of `block`; each batch posts its receives (from rank+i) and sends
 * (to rank-i) and waits for all of them before the next batch, which bounds
 * the number of outstanding requests and spreads the load over the peers.
 * Rounds: ceil(P/block). Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

#include <stdlib.h>

int tuna_a2av_scattered(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    int block = (int)tuna_a2av_param(a, "block");
    MPI_Request *reqs = tuna_ctx_requests(a->ctx, 2 * (size_t)block);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int rc = tuna_a2av_copy_self(a), rounds = 0, comm_rc = MPI_SUCCESS;
    /* A failed batch is complete when recorded, and the batches go on (docs/testing.md). */
    for (int ii = 0; ii < P && rc == MPI_SUCCESS; ii += block) {
        int n = 0, prc = MPI_SUCCESS, ss = P - ii < block ? P - ii : block;
        for (int i = 0; i < ss && prc == MPI_SUCCESS; i++) {
            int off = ii + i;
            if (off == 0)
                continue; /* self: copied above */
            prc = tuna_a2av_post_pair(a, (me + off) % P, (me - off + P) % P, TUNA_TAG_SCATTERED,
                                      reqs, &n);
        }
        int wrc = tuna_requests_finish(n, reqs, prc);
        if (wrc != MPI_SUCCESS)
            comm_rc = tuna_first_error(comm_rc, prc != MPI_SUCCESS ? wrc
                                       : tuna_error_set(wrc, "scattered: MPI_Waitall failed"));
        rounds++;
    }
    tuna_stats_rounds(rounds);
    return tuna_first_error(rc, comm_rc);
}
