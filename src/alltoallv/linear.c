/*
 * linear (Open MPI's basic linear alltoallv): all receives are posted first,
 * in ascending rank order, then all sends in ascending rank order, then one
 * Waitall. Every rank targets rank 0 first, which is what makes it a useful
 * baseline for the round-robin orders.
 * Rounds: 1. Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

#include <stdlib.h>

int tuna_a2av_linear(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    MPI_Request *reqs = tuna_ctx_requests(a->ctx, 2 * (size_t)P);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int n = 0, rc = tuna_a2av_copy_self(a);
    for (int i = 0; i < P && rc == MPI_SUCCESS; i++)
        if (i != me && tuna_a2av_recvs(a, i) &&
            (rc = tuna_a2av_irecv_block(a, i, TUNA_TAG_LINEAR, &reqs[n])) == MPI_SUCCESS)
            n++;
    for (int i = 0; i < P && rc == MPI_SUCCESS; i++)
        if (i != me && tuna_a2av_sends(a, i) &&
            (rc = tuna_a2av_isend_block(a, i, TUNA_TAG_LINEAR, &reqs[n])) == MPI_SUCCESS)
            n++;
    /* A failed post completes the posted messages (their peers post theirs). */
    int wrc = tuna_requests_finish(n, reqs, rc);
    if (rc == MPI_SUCCESS && wrc != MPI_SUCCESS)
        rc = tuna_error_set(wrc, "linear: MPI_Waitall failed");
    tuna_stats_rounds(1);
    return rc;
}
