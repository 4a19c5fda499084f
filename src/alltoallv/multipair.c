/*
 * multipair: the pairwise schedule (receive from rank-s, send to rank+s),
 * `stride` steps posted together with non-blocking calls, then one Waitall
 * before the next group: fewer synchronisations than pairwise, bounded
 * outstanding requests unlike spreadout.
 * Rounds: ceil((P-1)/stride). Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

#include <stdlib.h>

int tuna_a2av_multipair(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    int stride = (int)tuna_a2av_param(a, "stride");
    MPI_Request *reqs = tuna_ctx_requests(a->ctx, 2 * (size_t)stride);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int first = tuna_a2av_copy_self(a), rc = first, rounds = 0;
    for (int s0 = 1; s0 < P && tuna_step_may_continue(rc); s0 += stride) {
        int n = 0;
        rc = MPI_SUCCESS;
        for (int s = s0; s < s0 + stride && s < P && rc == MPI_SUCCESS; s++)
            rc = tuna_a2av_post_pair(a, (me - s + P) % P, (me + s) % P, TUNA_TAG_MULTIPAIR, reqs,
                                     &n);
        /* A truncated batch goes on (tuna_step_may_continue): the first error is kept. */
        if (rc == MPI_SUCCESS && (rc = tuna_waitall(n, reqs)) != MPI_SUCCESS)
            rc = first != MPI_SUCCESS ? rc : tuna_error_set(rc, "multipair: MPI_Waitall failed");
        first = first != MPI_SUCCESS ? first : rc;
        rounds++;
    }
    tuna_stats_rounds(rounds);
    return first;
}
