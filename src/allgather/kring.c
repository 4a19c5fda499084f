/*
 * kring allgather: ranks form P/k groups of k consecutive ranks. Phase 1:
 * every rank runs a ring with the ranks of the same position in the other
 * groups (P/k - 1 rounds, one block each), so it holds its "column" (the
 * blocks of that position in every group). Phase 2: a ring inside the group
 * (k - 1 rounds) passes whole columns, sent as one strided message each.
 * Rounds: P/k + k - 2. Volume received: (P-1) blocks, as the ring; only
 * P/k - 1 of the rounds cross groups (nodes, when k = ranks per node).
 * Any P: k is lowered to the largest divisor of P not above k (prime P with
 * k < P gives k = 1, the plain ring).
 */
#include "allgather.h"

/* One ring round: receive one `type` at rbuf from left while sending one from sbuf right.
 * A failed round is complete when recorded in *comm_rc, and the rounds go on (allgather.h). */
static void ring_step(const void *sbuf, void *rbuf, MPI_Datatype type, int left, int right,
                      int tag, MPI_Comm comm, int *comm_rc)
{
    MPI_Request req[2];
    int n = 0, rc = tuna_posted(MPI_Irecv(rbuf, 1, type, left, tag, comm, &req[n]), &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(MPI_Isend(sbuf, 1, type, right, tag, comm, &req[n]), &n);
    if ((rc = tuna_requests_finish(n, req, rc)) != MPI_SUCCESS)
        *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "kring allgather: exchange "
                                                                 "with ranks %d and %d failed",
                                                             left, right));
}

int tuna_ag_kring(const tuna_ag_args *a)
{
    const int P = a->size, me = a->rank;
    const int k = tuna_coll_kring_group(P, tuna_ag_param(a, "k")), G = P / k;
    const int g = me / k, l = me % k;
    const size_t B = a->block;
    MPI_Comm comm = a->ctx->comm;
    MPI_Datatype blk, col = MPI_DATATYPE_NULL;
    int rc = tuna_coll_bytes_type(B, &blk), comm_rc = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        return rc;
    /* Phase 1: ring over the groups, at this rank's position l. */
    int left = ((g - 1 + G) % G) * k + l, right = ((g + 1) % G) * k + l;
    for (int s = 0; s < G - 1; s++) {
        int sb = ((g - s + G) % G) * k + l, rb = ((g - s - 1 + G) % G) * k + l;
        ring_step(a->buf + (size_t)sb * B, a->buf + (size_t)rb * B, blk, left, right,
                  TUNA_TAG_AG_KRING_INTER, comm, &comm_rc);
    }
    /* Phase 2: ring inside the group, one column (G blocks, stride k blocks) per round. */
    if (rc == MPI_SUCCESS && k > 1) {
        rc = MPI_Type_create_hvector(G, 1, (MPI_Aint)((size_t)k * B), blk, &col);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&col);
        if (rc != MPI_SUCCESS)
            rc = tuna_error_set(rc, "kring: column datatype creation failed");
        left = g * k + (l - 1 + k) % k;
        right = g * k + (l + 1) % k;
        for (int s = 0; s < k - 1 && rc == MPI_SUCCESS; s++) {
            int sc = (l - s + k) % k, rcol = (l - s - 1 + k) % k;
            ring_step(a->buf + (size_t)sc * B, a->buf + (size_t)rcol * B, col, left, right,
                      TUNA_TAG_AG_KRING_INTRA, comm, &comm_rc);
        }
    }
    if (col != MPI_DATATYPE_NULL)
        MPI_Type_free(&col);
    MPI_Type_free(&blk);
    tuna_stats_rounds(G - 1 + k - 1);
    return tuna_first_error(comm_rc, rc);
}
