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
#include "tuna_engine.h"

#include <stdlib.h>

static int staggered_inter(const tuna_hier *h, int block, int *rounds)
{
    const int Q = h->Q, nd = h->N - 1, total = nd * Q;
    const int b = block < 1 ? 1 : block > total ? total : block;
    MPI_Comm comm = h->a->ctx->comm;
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)b);
    int rc = req ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int t0 = 0; t0 < total && rc == MPI_SUCCESS; t0 += b) {
        int nb = t0 + b <= total ? b : total - t0, n = 0;
        /* Receives first, in the same (t) order as the peers' sends. */
        for (int pass = 0; pass < 2 && rc == MPI_SUCCESS; pass++)
            for (int t = t0; t < t0 + nb && rc == MPI_SUCCESS; t++) {
                int d = 1 + t % nd, l = (h->local + t / nd) % Q;
                size_t idx = (size_t)(d - 1) * Q + l;
                if (pass == 0 && h->in_bytes[idx])
                    rc = tuna_posted(tuna_irecv_bytes(h->in_ptr[idx], h->in_bytes[idx],
                                                      h->from_rank[d - 1], TUNA_TAG_INTER_DATA,
                                                      comm, &req[n]),
                                     &n);
                else if (pass == 1 && h->out_bytes[idx])
                    rc = tuna_posted(tuna_isend_bytes(h->out_ptr[idx], h->out_bytes[idx],
                                                      h->to_rank[d - 1], TUNA_TAG_INTER_DATA,
                                                      comm, &req[n]),
                                     &n);
            }
        int wrc = tuna_requests_finish(n, req, rc); /* complete, even if a post failed */
        if (rc == MPI_SUCCESS && wrc != MPI_SUCCESS)
            rc = tuna_error_set(wrc, "staggered: inter-node exchange failed");
        *rounds += nb;
    }
    free(req);
    return rc;
}

int tuna_a2av_staggered(const tuna_a2av_args *a)
{
    return tuna_hier_run(a, "staggered", staggered_inter);
}
