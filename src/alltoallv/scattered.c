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
    int first = tuna_a2av_copy_self(a), rc = first, rounds = 0;
    for (int ii = 0; ii < P && tuna_step_may_continue(rc); ii += block) {
        int n = 0, ss = P - ii < block ? P - ii : block;
        rc = MPI_SUCCESS;
        for (int i = 0; i < ss && rc == MPI_SUCCESS; i++) {
            int off = ii + i;
            if (off == 0)
                continue; /* self: copied above */
            rc = tuna_a2av_post_pair(a, (me + off) % P, (me - off + P) % P, TUNA_TAG_SCATTERED,
                                     reqs, &n);
        }
        /* A truncated batch goes on (tuna_step_may_continue): the first error is kept. */
        if (rc == MPI_SUCCESS && (rc = tuna_waitall(n, reqs)) != MPI_SUCCESS)
            rc = first != MPI_SUCCESS ? rc : tuna_error_set(rc, "scattered: MPI_Waitall failed");
        first = first != MPI_SUCCESS ? first : rc;
        rounds++;
    }
    tuna_stats_rounds(rounds);
    return first;
}
