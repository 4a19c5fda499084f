/*
 * spreadout: every receive and send posted at once, peer i steps away from
 * self in round-robin order (receive from rank-i, send to rank+i), so no
 * single rank is the first target of everyone. One Waitall; at P = 2 the
 * one exchange is an MPI_Sendrecv instead.
 * Rounds: 1. Messages: 2(P-1) per rank. Temporary memory: 2(P-1) requests.
 */
#include "alltoallv.h"

#include <stdlib.h>

int tuna_a2av_spreadout(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    MPI_Request *reqs = tuna_ctx_requests(a->ctx, 2 * (size_t)P);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int n = 0, rc = MPI_SUCCESS;
    const bool one_peer = P == 2; /* then the exchange is one sendrecv, below */
    for (int i = 1; i < P && !one_peer && rc == MPI_SUCCESS; i++)
        rc = tuna_a2av_post_pair(a, (me - i + P) % P, (me + i) % P, TUNA_TAG_SPREADOUT, reqs,
                                 &n);
    if (rc != MPI_SUCCESS) {
        tuna_requests_complete(n, reqs); /* the posted ones: their peers post theirs */
        return rc;
    }
    /* The own block while the messages travel. Its copy may fail (it may allocate): the
     * posted messages complete all the same (every peer posted its side), so no request
     * outlives this call. */
    int copy_rc = tuna_a2av_copy_self(a);
    /* At P = 2 the one exchange as a sendrecv: the library's cheapest path (one argument
     * check, no request handles; docs/benchmarks.md). Above, a blocking last pair delayed
     * the whole exchange in SMPI (sim_auto_vendor_check: 4 KiB at P = 64, 8% slower). */
    if (one_peer)
        rc = tuna_a2av_exchange_step(a, 1 - me, 1 - me, TUNA_TAG_SPREADOUT);
    int wait_rc = tuna_waitall(n, reqs);
    if (rc == MPI_SUCCESS && wait_rc != MPI_SUCCESS)
        rc = tuna_error_set(wait_rc, "spreadout: MPI_Waitall failed");
    if (rc == MPI_SUCCESS)
        rc = copy_rc;
    tuna_stats_rounds(1);
    return rc;
}
