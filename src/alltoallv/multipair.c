/*
 * multipair: the pairwise schedule (receive from rank-s, send to rank+s),
 * `stride` steps posted together with non-blocking calls, then one Waitall
 * before the next group: fewer synchronisations than pairwise, bounded
 * outstanding requests unlike spreadout.
 * Rounds: ceil((P-1)/stride). Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

/* o->i: the first step of the next group (1 before the first); o->n: groups done. */
int tuna_a2av_multipair_step(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank;
    int stride = (int)tuna_a2av_param(a, "stride");
    if (o->i == 0) {
        int rc = tuna_a2av_copy_self(a);
        if (rc != MPI_SUCCESS)
            return tuna_a2av_step_done(o, rc);
        o->i = 1;
    } else {
        /* A failed group is complete when recorded, and the groups go on
         * (docs/test-harnesses.md). */
        int rc = tuna_a2av_step_outcome(o, wait_rc, "multipair: MPI_Waitall failed");
        o->op.comm_rc = tuna_first_error(o->op.comm_rc, rc);
        o->n++;
    }
    if (o->i >= P) {
        tuna_stats_rounds(o->n);
        return tuna_a2av_step_done(o, o->op.comm_rc);
    }
    MPI_Request *reqs = tuna_scratch_requests(a->scr, 2 * (size_t)stride);
    if (!reqs) { /* nothing of this group is posted: the peers' posts of it stay unmatched */
        tuna_stats_rounds(o->n);
        return tuna_a2av_step_done(o, tuna_first_error(o->op.comm_rc, MPI_ERR_NO_MEM));
    }
    int n = 0, prc = MPI_SUCCESS, s0 = o->i;
    for (int s = s0; s < s0 + stride && s < P && prc == MPI_SUCCESS; s++)
        prc = tuna_a2av_post_pair(a, (me - s + P) % P, (me + s) % P, TUNA_TAG_MULTIPAIR, reqs,
                                  &n);
    o->i = s0 + stride;
    return tuna_a2av_step_wait(o, reqs, n, prc);
}
