/*
 * ring allgather: P-1 rounds; in round s a rank sends block (rank - s) to its
 * right neighbour and receives block (rank - s - 1) from its left one.
 * Rounds: P-1. Volume received: (P-1) blocks. Memory: none beyond the result.
 */
#include "allgather.h"

int tuna_ag_ring(const tuna_ag_args *a)
{
    const int P = a->size, me = a->rank;
    const int left = (me - 1 + P) % P, right = (me + 1) % P;
    for (int s = 0; s < P - 1; s++) {
        int sb = (me - s + P) % P, rb = (me - s - 1 + P) % P;
        MPI_Request req[2];
        int rc = tuna_irecv_bytes(a->buf + (size_t)rb * a->block, a->block, left, TUNA_TAG_AG_RING,
                                  a->ctx->comm, &req[0]);
        if (rc == MPI_SUCCESS)
            rc = tuna_isend_bytes(a->buf + (size_t)sb * a->block, a->block, right, TUNA_TAG_AG_RING,
                                  a->ctx->comm, &req[1]);
        if (rc != MPI_SUCCESS)
            return rc;
        TUNA_MPI_CHECK(tuna_waitall(2, req));
    }
    tuna_stats_rounds(P - 1);
    return MPI_SUCCESS;
}
