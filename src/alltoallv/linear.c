/*
 * linear (Open MPI's basic linear alltoallv): all receives are posted first,
 * in ascending rank order, then all sends in ascending rank order, then one
 * Waitall. Every rank targets rank 0 first, which is what makes it a useful
 * baseline for the round-robin orders.
 * Rounds: 1. Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

int tuna_a2av_linear_step(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank;
    if (o->i == 1) { /* the one wait is over */
        tuna_stats_rounds(1);
        return tuna_a2av_step_done(o, tuna_a2av_step_outcome(o, wait_rc,
                                                             "linear: MPI_Waitall failed"));
    }
    MPI_Request *reqs = tuna_scratch_requests(a->scr, 2 * (size_t)P);
    if (!reqs)
        return tuna_a2av_step_done(o, MPI_ERR_NO_MEM);
    int n = 0, rc = tuna_a2av_copy_self(a);
    for (int i = 0; i < P && rc == MPI_SUCCESS; i++)
        if (i != me && tuna_a2av_recvs(a, i) &&
            (rc = tuna_a2av_irecv_block(a, i, TUNA_TAG_LINEAR, &reqs[n])) == MPI_SUCCESS)
            n++;
    for (int i = 0; i < P && rc == MPI_SUCCESS; i++)
        if (i != me && tuna_a2av_sends(a, i) &&
            (rc = tuna_a2av_isend_block(a, i, TUNA_TAG_LINEAR, &reqs[n])) == MPI_SUCCESS)
            n++;
    /* A failed post still completes the posted messages (their peers post theirs). */
    o->i = 1;
    return tuna_a2av_step_wait(o, reqs, n, rc);
}
