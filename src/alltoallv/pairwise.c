/*
 * pairwise (Open MPI's pairwise alltoallv): P-1 steps; in step s a rank
 * receives from rank-s and sends to rank+s (one MPI_Sendrecv; with large
 * counts an Irecv and a blocking Send), so exactly one exchange is in flight
 * per rank.
 * Rounds: P-1. Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

/* One step of a pairwise schedule: receive from src while sending to dst. */
int tuna_a2av_exchange_step(const tuna_a2av_args *a, int src, int dst, int tag)
{
    const bool recv = tuna_a2av_recvs(a, src), send = tuna_a2av_sends(a, dst);
    if (a->scounts && a->rcounts) {
        /* One MPI call instead of three: the library's own sendrecv path (no request handle
         * for the user side, one argument check); an empty side is MPI_PROC_NULL, as the
         * peer posts nothing for it. */
        TUNA_MPI_CHECK(MPI_Sendrecv(tuna_sblock(a, dst), send ? a->scounts[dst] : 0, a->stype,
                                    send ? dst : MPI_PROC_NULL, tag, tuna_rblock(a, src),
                                    recv ? a->rcounts[src] : 0, a->rtype,
                                    recv ? src : MPI_PROC_NULL, tag, a->ctx->comm,
                                    MPI_STATUS_IGNORE));
        return MPI_SUCCESS;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    if (recv && (rc = tuna_a2av_irecv_block(a, src, tag, &req)) != MPI_SUCCESS)
        return rc;
    if (send && a->scounts &&
        (rc = MPI_Send(tuna_sblock(a, dst), a->scounts[dst], a->stype, dst, tag,
                       a->ctx->comm)) != MPI_SUCCESS)
        rc = tuna_error_set(rc, "pairwise: sending block %d failed", dst);
    else if (send && !a->scounts)
        rc = tuna_a2av_send_large(a, dst, tag, NULL);
    /* The receive completes even when the send failed: its peer sends all the same. */
    int wrc = tuna_requests_finish(1, &req, rc);
    if (rc == MPI_SUCCESS && wrc != MPI_SUCCESS)
        rc = tuna_error_set(wrc, "pairwise: receiving block %d failed", src);
    return rc;
}

int tuna_a2av_pairwise(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    int rc = tuna_a2av_copy_self(a), comm_rc = MPI_SUCCESS;
    /* A failed step is complete when recorded, and the steps go on (docs/testing.md). */
    for (int s = 1; s < P && rc == MPI_SUCCESS; s++)
        comm_rc = tuna_first_error(comm_rc, tuna_a2av_exchange_step(a, (me - s + P) % P,
                                                                    (me + s) % P,
                                                                    TUNA_TAG_PAIRWISE));
    tuna_stats_rounds(P - 1);
    return tuna_first_error(rc, comm_rc);
}
