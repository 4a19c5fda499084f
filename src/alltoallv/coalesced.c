/*
 * coalesced: hierarchical TuNA whose inter-node phase sends one aggregated
 * message per remote node: the Q blocks this node has for local rank g there
 * (gathered by the intra-node TuNA phase, see hierarchical_tuna.c) go in one
 * message, zero copy, to the peer with the same local rank. Remote nodes are
 * visited at distances 1..N-1, `block` of them in flight per batch.
 * Parameters: radix (intra-node, clamped to [2, Q]) and block (clamped to
 * [1, N-1]). Inter-node rounds: N-1 messages per rank.
 */
#include "tuna_engine.h"

#include <stdlib.h>

static int coalesced_inter(const tuna_hier *h, int block, int *rounds)
{
    const int Q = h->Q, nd = h->N - 1;
    const int b = block < 1 ? 1 : block > nd ? nd : block;
    MPI_Comm comm = h->a->ctx->comm;
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)b);
    char **ptr = tuna_malloc(sizeof(char *) * 2 * (size_t)b * (size_t)Q);
    size_t *len = tuna_malloc(sizeof(size_t) * 2 * (size_t)b * (size_t)Q);
    int rc = req && ptr && len ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int d0 = 1; d0 <= nd && rc == MPI_SUCCESS; d0 += b) {
        int nb = d0 + b - 1 <= nd ? b : nd - d0 + 1, sent = 0;
        for (int q = 0; q < nb; q++)
            req[2 * q] = req[2 * q + 1] = MPI_REQUEST_NULL;
        for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
            size_t base = (size_t)(d0 + q - 1) * Q, pool = (size_t)2 * q * Q;
            tuna_regions in = {0, Q, ptr + pool, len + pool, 0};
            for (int l = 0; l < Q; l++)
                tuna_regions_add(&in, h->in_ptr[base + l], h->in_bytes[base + l]);
            rc = tuna_regions_irecv(&in, h->from_rank[d0 + q - 1], TUNA_TAG_INTER_DATA, comm,
                                    &req[2 * q]);
        }
        for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
            size_t base = (size_t)(d0 + q - 1) * Q, pool = (size_t)(2 * q + 1) * Q;
            tuna_regions out = {0, Q, ptr + pool, len + pool, 0};
            for (int l = 0; l < Q; l++)
                tuna_regions_add(&out, h->out_ptr[base + l], h->out_bytes[base + l]);
            rc = tuna_regions_isend(&out, h->to_rank[d0 + q - 1], TUNA_TAG_INTER_DATA, comm,
                                    &req[2 * q + 1]);
            sent += rc == MPI_SUCCESS;
        }
        if (rc != MPI_SUCCESS) {
            /* Posting failed (a message of several regions allocates its datatype's arrays).
             * Under the failure policy of docs/testing.md every rank stopped at the same
             * message: the receives whose peers sent (the first `sent` distances) complete,
             * the others are cancelled, so nothing stays pending or in flight. */
            for (int q = sent; q < nb; q++)
                if (req[2 * q] != MPI_REQUEST_NULL)
                    PMPI_Cancel(&req[2 * q]);
            PMPI_Waitall(2 * nb, req, MPI_STATUSES_IGNORE);
        }
        if (rc == MPI_SUCCESS && (rc = tuna_waitall(2 * nb, req)) != MPI_SUCCESS)
            rc = tuna_error_set(rc, "coalesced: inter-node exchange failed");
        *rounds += nb;
    }
    free(req);
    free(ptr);
    free(len);
    return rc;
}

int tuna_a2av_coalesced(const tuna_a2av_args *a)
{
    return tuna_hier_run(a, "coalesced", coalesced_inter);
}
