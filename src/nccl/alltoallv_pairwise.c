/*
 * alltoallv, pairwise on NCCL: the own block copied on the stream, then P-1 steps, one group
 * each: step d receives from r-d and sends to r+d. The groups follow each other on the stream
 * (no host wait between them).
 */
#include "nccl_rows.h"

int tuna_nccl_a2av_pairwise(const tuna_nccl_args *a)
{
    const int me = a->rank;
    const size_t es = a->esize;
    tuna_tp_copy(a->tp, a->rbuf + a->rdispls[me] * es, a->sbuf + a->sdispls[me] * es,
                 a->rcounts[me] * es);
    int rc = MPI_SUCCESS;
    for (int d = 1; d < a->size && rc == MPI_SUCCESS; d++)
        rc = tuna_nccl_step_close(a, tuna_nccl_a2av_pair(a, d));
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_step_end(a); /* the copy's error, where P = 1 */
    return rc;
}
