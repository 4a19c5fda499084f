/*
 * alltoallv, grouped linear on NCCL: every receive and send of the call in one group
 * (what users write by hand with ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd), split
 * by the transport under NCCL's group limit. Slot pair d = 0..P-1: receive from r-d, send to
 * r+d (d = 0: the rank's own block, sent to itself).
 */
#include "nccl_rows.h"

int tuna_nccl_a2av_linear(const tuna_nccl_args *a)
{
    int rc = MPI_SUCCESS;
    for (int d = 0; d < a->size && rc == MPI_SUCCESS; d++)
        rc = tuna_nccl_a2av_pair(a, d);
    return tuna_nccl_step_close(a, rc);
}
