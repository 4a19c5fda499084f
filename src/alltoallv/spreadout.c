/*
 * spreadout: every receive and send posted at once, peer i steps away from
 * self in round-robin order (receive from rank-i, send to rank+i), so no
 * single rank is the first target of everyone. One Waitall. (At P = 2 the
 * blocking call takes the front end's two-rank path, one MPI_Sendrecv.)
 * Rounds: 1. Messages: 2(P-1) per rank. Temporary memory: 2(P-1) requests.
 */
#include "alltoallv.h"

int tuna_a2av_spreadout_step(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank;
    if (o->i == 1) {
        int rc = tuna_a2av_step_outcome(o, wait_rc, "spreadout: MPI_Waitall failed");
        tuna_stats_rounds(1);
        return tuna_a2av_step_done(o, tuna_first_error(rc, o->local_rc));
    }
    MPI_Request *reqs = tuna_scratch_requests(a->scr, 2 * (size_t)P);
    if (!reqs)
        return tuna_a2av_step_done(o, MPI_ERR_NO_MEM);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 1; i < P && rc == MPI_SUCCESS; i++)
        rc = tuna_a2av_post_pair(a, (me - i + P) % P, (me + i) % P, TUNA_TAG_SPREADOUT, reqs,
                                 &n);
    /* The own block while the messages travel (not after a failed post: the step ends).
     * Its copy may fail (it may allocate): the posted messages complete all the same. */
    o->local_rc = rc == MPI_SUCCESS ? tuna_a2av_copy_self(a) : MPI_SUCCESS;
    o->i = 1;
    return tuna_a2av_step_wait(o, reqs, n, rc);
}
