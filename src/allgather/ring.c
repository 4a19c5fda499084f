/*
 * ring allgather: P-1 rounds; in round s a rank sends block (rank - s) to its
 * right neighbour and receives block (rank - s - 1) from its left one.
 * Rounds: P-1. Volume received: (P-1) blocks. Memory: none beyond the result.
 * A failed round is complete when recorded, and the rounds go on (allgather.h).
 */
#include "allgather.h"

int tuna_ag_ring(const tuna_ag_args *a)
{
    const int P = a->size, me = a->rank;
    const int left = (me - 1 + P) % P, right = (me + 1) % P;
    int comm_rc = MPI_SUCCESS;
    for (int s = 0; s < P - 1; s++) {
        int sb = (me - s + P) % P, rb = (me - s - 1 + P) % P, n = 0;
        MPI_Request req[2];
        int rc = tuna_posted(tuna_irecv_bytes(a->buf + (size_t)rb * a->block, a->block, left,
                                              TUNA_TAG_AG_RING, a->ctx->comm, &req[n]),
                             &n);
        if (rc == MPI_SUCCESS)
            rc = tuna_posted(tuna_isend_bytes(a->buf + (size_t)sb * a->block, a->block, right,
                                              TUNA_TAG_AG_RING, a->ctx->comm, &req[n]),
                             &n);
        if ((rc = tuna_requests_finish(n, req, rc)) != MPI_SUCCESS)
            comm_rc = tuna_first_error(comm_rc, tuna_error_set(rc, "ring allgather: round %d "
                                                                   "failed", s));
    }
    tuna_stats_rounds(P - 1);
    return comm_rc;
}
