/*
 * allgather, ring on NCCL: the own block to its slot (a copy on the stream unless in place),
 * then P-1 steps of one group: step i sends slot r-i to the right neighbour and receives slot
 * r-i-1 from the left one.
 */
#include "nccl_rows.h"

int tuna_nccl_ag_ring(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t B = a->block;
    const int left = (me - 1 + P) % P, right = (me + 1) % P;
    tuna_tp_copy(a->tp, a->rbuf + (size_t)me * B, a->sbuf, B);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < P - 1 && rc == MPI_SUCCESS; i++) {
        int out = (me - i + P) % P, in = (me - i - 1 + P) % P;
        rc = tuna_nccl_pair(a, a->rbuf + (size_t)in * B, B, left, a->rbuf + (size_t)out * B, B,
                            right);
        rc = tuna_nccl_step_close(a, rc);
    }
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_step_end(a);
    return rc;
}
