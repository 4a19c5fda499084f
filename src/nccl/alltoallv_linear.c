/*
 * alltoallv, grouped linear on NCCL: every receive and send of the call in one group
 * (what users write by hand with ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd), split
 * by the transport under NCCL's group limit. Slot pair d = 0..P-1: receive from r-d, send to
 * r+d (d = 0: the rank's own block, sent to itself).
 */
#include "nccl_rows.h"

int tuna_nccl_a2av_linear(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t es = a->esize;
    MPI_Request req;
    int rc = MPI_SUCCESS;
    for (int d = 0; d < P && rc == MPI_SUCCESS; d++) {
        int src = (me - d + P) % P, dst = (me + d) % P;
        rc = tuna_tp_irecv(a->tp, a->rbuf + a->rdispls[src] * es, a->rcounts[src] * es, src, 0,
                           MPI_COMM_NULL, &req);
        if (rc == MPI_SUCCESS)
            rc = tuna_tp_isend(a->tp, a->sbuf + a->sdispls[dst] * es, a->scounts[dst] * es, dst,
                               0, MPI_COMM_NULL, &req);
    }
    int end = tuna_nccl_step_end(a);
    return rc != MPI_SUCCESS ? rc : end;
}
