/*
 * scattered (MPICH's alltoallv "scattered" algorithm): peers are visited in
 * batches of `block`; each batch posts its receives (from rank+i) and sends
 * (to rank-i) and waits for all of them before the next batch, which bounds
 * the number of outstanding requests and spreads the load over the peers.
 * Rounds: ceil(P/block). Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

/* o->i: the first offset of the next batch; o->n: batches done. */
int tuna_a2av_scattered_step(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank;
    int block = (int)tuna_a2av_param(a, "block");
    if (o->n == 0 && o->i == 0) {
        int rc = tuna_a2av_copy_self(a);
        if (rc != MPI_SUCCESS)
            return tuna_a2av_step_done(o, rc);
    } else {
        /* A failed batch is complete when recorded, and the batches go on
         * (docs/test-harnesses.md). */
        int rc = tuna_a2av_step_outcome(o, wait_rc, "scattered: MPI_Waitall failed");
        o->op.comm_rc = tuna_first_error(o->op.comm_rc, rc);
        o->n++;
    }
    if (o->i >= P) {
        tuna_stats_rounds(o->n);
        return tuna_a2av_step_done(o, o->op.comm_rc);
    }
    MPI_Request *reqs = tuna_scratch_requests(a->scr, 2 * (size_t)block);
    if (!reqs) {
        tuna_stats_rounds(o->n);
        return tuna_a2av_step_done(o, tuna_first_error(o->op.comm_rc, MPI_ERR_NO_MEM));
    }
    int n = 0, prc = MPI_SUCCESS, ii = o->i, ss = P - ii < block ? P - ii : block;
    for (int i = 0; i < ss && prc == MPI_SUCCESS; i++) {
        int off = ii + i;
        if (off == 0)
            continue; /* self: copied above */
        prc = tuna_a2av_post_pair(a, (me + off) % P, (me - off + P) % P, TUNA_TAG_SCATTERED,
                                  reqs, &n);
    }
    o->i = ii + block;
    return tuna_a2av_step_wait(o, reqs, n, prc);
}
