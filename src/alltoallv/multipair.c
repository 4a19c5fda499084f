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
    int rc = tuna_a2av_copy_self(a), rounds = 0, comm_rc = MPI_SUCCESS;
    /* A failed group is complete when recorded, and the groups go on (docs/testing.md). */
    for (int s0 = 1; s0 < P && rc == MPI_SUCCESS; s0 += stride) {
        int n = 0, prc = MPI_SUCCESS;
        for (int s = s0; s < s0 + stride && s < P && prc == MPI_SUCCESS; s++)
            prc = tuna_a2av_post_pair(a, (me - s + P) % P, (me + s) % P, TUNA_TAG_MULTIPAIR, reqs,
                                      &n);
        int wrc = tuna_requests_finish(n, reqs, prc);
        if (wrc != MPI_SUCCESS)
            comm_rc = tuna_first_error(comm_rc, prc != MPI_SUCCESS ? wrc
                                       : tuna_error_set(wrc, "multipair: MPI_Waitall failed"));
        rounds++;
    }
    tuna_stats_rounds(rounds);
    return tuna_first_error(rc, comm_rc);
}
