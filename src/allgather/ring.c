/*
 * ring allgather: P-1 rounds; in round s a rank sends block (rank - s) to its
 * right neighbour and receives block (rank - s - 1) from its left one.
 * Rounds: P-1. Volume received: (P-1) blocks. Memory: none beyond the result.
 * A failed round is complete when recorded, and the rounds go on (allgather.h).
 * One round per step (o->i: the rounds posted so far).
 */
#include "allgather.h"

int tuna_ag_ring_step(tuna_ag_op *o, int wait_rc)
{
    const tuna_ag_args *a = &o->a;
    const int P = a->size, me = a->rank;
    const int left = (me - 1 + P) % P, right = (me + 1) % P;
    if (o->i > 0)
        tuna_op_step_record(&o->op, wait_rc, "ring allgather: round %d failed", o->i - 1);
    if (o->i == P - 1) {
        tuna_stats_rounds(P - 1);
        return tuna_op_step_done(&o->op, o->op.comm_rc);
    }
    const int s = o->i++, tag = TUNA_TAG_AG_RING + a->tag_shift;
    int sb = (me - s + P) % P, rb = (me - s - 1 + P) % P, n = 0;
    int rc = tuna_posted(tuna_tp_irecv(a->tp, a->buf + (size_t)rb * a->block, a->block, left, tag,
                                       a->ctx->comm, &o->pair[n]),
                         &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_tp_isend(a->tp, a->buf + (size_t)sb * a->block, a->block, right, tag,
                                       a->ctx->comm, &o->pair[n]),
                         &n);
    return tuna_op_step_wait(&o->op, o->pair, n, rc);
}
