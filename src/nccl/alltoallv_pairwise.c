/*
 * alltoallv, pairwise on NCCL: the own block copied on the stream, then P-1 steps, one group
 * each: step d receives from r-d and sends to r+d. The groups follow each other on the stream
 * (no host wait between them).
 */
#include "nccl_rows.h"

int tuna_nccl_a2av_pairwise(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t es = a->esize;
    MPI_Request req;
    tuna_tp_copy(a->tp, a->rbuf + a->rdispls[me] * es, a->sbuf + a->sdispls[me] * es,
                 a->rcounts[me] * es);
    int rc = MPI_SUCCESS;
    for (int d = 1; d < P && rc == MPI_SUCCESS; d++) {
        int src = (me - d + P) % P, dst = (me + d) % P;
        rc = tuna_tp_irecv(a->tp, a->rbuf + a->rdispls[src] * es, a->rcounts[src] * es, src, 0,
                           MPI_COMM_NULL, &req);
        if (rc == MPI_SUCCESS)
            rc = tuna_tp_isend(a->tp, a->sbuf + a->sdispls[dst] * es, a->scounts[dst] * es, dst,
                               0, MPI_COMM_NULL, &req);
        int end = tuna_nccl_step_end(a);
        if (rc == MPI_SUCCESS)
            rc = end;
    }
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_step_end(a); /* the copy's error, where P = 1 */
    return rc;
}
