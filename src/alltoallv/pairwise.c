/*
 * pairwise (Open MPI's pairwise alltoallv): P-1 steps; in step s a rank
 * receives from rank-s and sends to rank+s, so exactly one exchange is in
 * flight per rank. Each step posts its receive and send and waits for both
 * (the blocking MPI_Sendrecv of the classic form, as steps).
 * Rounds: P-1. Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

int tuna_a2av_pairs_step(tuna_a2av_op *o, int wait_rc, int count, tuna_a2av_pair_of_fn *pair_of,
                         int tag, const char *name)
{
    const tuna_a2av_args *a = o->a;
    if (o->i == 0) {
        int rc = tuna_a2av_copy_self(a);
        if (rc != MPI_SUCCESS) {
            tuna_stats_rounds(count - 1);
            return tuna_a2av_step_done(o, rc);
        }
    } else {
        /* A failed step is complete when recorded, and the steps go on (docs/test-harnesses.md). */
        if (o->op.post_rc != MPI_SUCCESS || wait_rc != MPI_SUCCESS)
            o->op.comm_rc = tuna_first_error(
                o->op.comm_rc, o->op.post_rc != MPI_SUCCESS
                                ? o->op.post_rc
                                : tuna_error_set(wait_rc, "%s: step %d failed", name, o->i));
    }
    /* The next step with a peer (xor skips the ones beyond P). */
    for (int s = o->i + 1; s < count; s++) {
        int src, dst;
        pair_of(a, s, &src, &dst);
        if (src < 0)
            continue;
        int n = 0;
        int rc = tuna_a2av_post_pair(a, src, dst, tag, o->pair, &n);
        o->i = s;
        return tuna_a2av_step_wait(o, o->pair, n, rc);
    }
    tuna_stats_rounds(count - 1);
    return tuna_a2av_step_done(o, o->op.comm_rc);
}

static void pairwise_pair(const tuna_a2av_args *a, int s, int *src, int *dst)
{
    *src = (a->rank - s + a->size) % a->size;
    *dst = (a->rank + s) % a->size;
}

int tuna_a2av_pairwise_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_a2av_pairs_step(o, wait_rc, o->a->size, pairwise_pair, TUNA_TAG_PAIRWISE,
                                "pairwise");
}
