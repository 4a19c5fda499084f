/*
 * staggered: hierarchical TuNA whose inter-node phase sends every block as
 * its own message: (N-1)*Q messages per rank, to the peers with the same
 * local rank on the other nodes (the blocks were gathered by the intra-node
 * TuNA phase, see hierarchical_tuna.c). Message t goes to the node at
 * distance 1 + t mod (N-1) and carries the block of local rank
 * (g + t div (N-1)) mod Q, so consecutive messages go to different nodes and
 * the local ranks of a node start at different blocks. `block` messages are
 * in flight per batch. Parameters: radix (intra-node, clamped to [2, Q]) and
 * block (clamped to [1, (N-1)*Q]).
 */
#include "tuna_rounds.h"

#include <stdlib.h>

/* h->pos: batches posted; batch p covers messages p*b .. min(total, (p+1)*b) - 1. */
static int staggered_inter(tuna_a2av_op *o, tuna_hier *h)
{
    const int Q = h->Q, nd = h->N - 1, total = nd * Q;
    const int b = h->block < 1 ? 1 : h->block > total ? total : h->block;
    const int tag = TUNA_TAG_INTER_DATA + h->a->tag_shift;
    MPI_Comm comm = h->a->ctx->comm;
    if (h->pos == 0) {
        if (!(h->req = tuna_scratch_requests(h->a->scr, 2 * (size_t)b))) {
            h->rc = MPI_ERR_NO_MEM;
            return TUNA_STEP_DONE;
        }
    } else if (h->pos * b >= total) {
        return TUNA_STEP_DONE;
    }
    MPI_Request *req = h->req;
    const int t0 = h->pos * b, nb = t0 + b <= total ? b : total - t0;
    int n = 0, rc = MPI_SUCCESS;
    /* Receives first, in the same (t) order as the peers' sends. */
    for (int pass = 0; pass < 2 && rc == MPI_SUCCESS; pass++)
        for (int t = t0; t < t0 + nb && rc == MPI_SUCCESS; t++) {
            int d = 1 + t % nd, l = (h->local + t / nd) % Q;
            size_t idx = (size_t)(d - 1) * Q + l;
            if (pass == 0 && h->in_bytes[idx])
                rc = tuna_posted(tuna_tp_irecv(h->a->tp, h->in_ptr[idx], h->in_bytes[idx],
                                               h->from_rank[d - 1], tag, comm, &req[n]),
                                 &n);
            else if (pass == 1 && h->out_bytes[idx])
                rc = tuna_posted(tuna_tp_isend(h->a->tp, h->out_ptr[idx], h->out_bytes[idx],
                                               h->to_rank[d - 1], tag, comm, &req[n]),
                                 &n);
        }
    /* A failed post still completes the posted ones. */
    h->pos++;
    h->rounds += nb;
    return tuna_a2av_step_wait(o, req, n, rc);
}

int tuna_a2av_staggered_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_hier_step(o, wait_rc, "staggered", staggered_inter);
}
