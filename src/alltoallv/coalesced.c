/*
 * coalesced: hierarchical TuNA whose inter-node phase sends one aggregated
 * message per remote node: the Q blocks this node has for local rank g there
 * (gathered by the intra-node TuNA phase, see hierarchical_tuna.c) go in one
 * message, zero copy, to the peer with the same local rank. Remote nodes are
 * visited at distances 1..N-1, `block` of them in flight per batch.
 * Parameters: radix (intra-node, clamped to [2, Q]) and block (clamped to
 * [1, N-1]). Inter-node rounds: N-1 messages per rank.
 */
#include "tuna_rounds.h"

#include <stdlib.h>

/* h->pos: batches posted; batch p covers distances 1 + p*b .. min(N-1, (p+1)*b). */
static int coalesced_inter(tuna_a2av_op *o, tuna_hier *h)
{
    const int Q = h->Q, nd = h->N - 1;
    const int b = h->block < 1 ? 1 : h->block > nd ? nd : h->block;
    const int tag = TUNA_TAG_INTER_DATA + h->a->tag_shift;
    MPI_Comm comm = h->a->ctx->comm;
    if (h->pos == 0) {
        /* The region lists of a batch: 2*b*Q pointers, then as many lengths. */
        h->pool = tuna_malloc((sizeof(char *) + sizeof(size_t)) * 2 * (size_t)b * (size_t)Q);
        h->req = tuna_scratch_requests(h->a->scr, 2 * (size_t)b);
        if (!h->pool || !h->req) {
            h->rc = MPI_ERR_NO_MEM;
            return TUNA_STEP_DONE;
        }
    } else if (h->pos * b >= nd) {
        return TUNA_STEP_DONE;
    }
    char **ptr = h->pool;
    size_t *len = (size_t *)(ptr + 2 * (size_t)b * (size_t)Q);
    MPI_Request *req = h->req;
    const int d0 = 1 + h->pos * b;
    int nb = d0 + b - 1 <= nd ? b : nd - d0 + 1, sent = 0, rc = MPI_SUCCESS;
    for (int q = 0; q < nb; q++)
        req[2 * q] = req[2 * q + 1] = MPI_REQUEST_NULL;
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        size_t base = (size_t)(d0 + q - 1) * Q, pool = (size_t)2 * q * Q;
        tuna_regions in = {0, Q, ptr + pool, len + pool, 0};
        for (int l = 0; l < Q; l++)
            tuna_regions_add(&in, h->in_ptr[base + l], h->in_bytes[base + l]);
        rc = tuna_regions_irecv(h->a->tp, &in, h->from_rank[d0 + q - 1], tag, comm, &req[2 * q]);
    }
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        size_t base = (size_t)(d0 + q - 1) * Q, pool = (size_t)(2 * q + 1) * Q;
        tuna_regions out = {0, Q, ptr + pool, len + pool, 0};
        for (int l = 0; l < Q; l++)
            tuna_regions_add(&out, h->out_ptr[base + l], h->out_bytes[base + l]);
        rc = tuna_regions_isend(h->a->tp, &out, h->to_rank[d0 + q - 1], tag, comm, &req[2 * q + 1]);
        sent += rc == MPI_SUCCESS;
    }
    if (rc != MPI_SUCCESS) {
        /* Posting failed (a message of several regions allocates its datatype's arrays).
         * Under the failure policy of docs/testing.md every rank stopped at the same
         * message: the receives whose peers sent (the first `sent` distances) complete,
         * the others are cancelled, so nothing stays pending or in flight. */
        for (int q = sent; q < nb; q++)
            if (req[2 * q] != MPI_REQUEST_NULL)
                tuna_tp_cancel(h->a->tp, &req[2 * q]);
    }
    h->pos++;
    h->rounds += nb;
    return tuna_a2av_step_wait(o, req, 2 * nb, rc);
}

int tuna_a2av_coalesced_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_hier_step(o, wait_rc, "coalesced", coalesced_inter);
}
