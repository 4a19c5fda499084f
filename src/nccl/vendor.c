/*
 * vendor on the NCCL path: NCCL's own collective, the baseline of every other row:
 * ncclAlltoAll (alltoall only: NCCL has no alltoallv), ncclAllGather, ncclAllReduce, on the
 * call's stream. No transport posts: nothing is open when a row starts. Called by NCCL's
 * profiling names (pnccl...), which are NCCL's own even where tuna's drop-in (dropin.c) takes
 * the plain ones.
 */
#include "nccl_rows.h"

int tuna_nccl_a2a_vendor(const tuna_nccl_args *a)
{
    /* Uniform counts (tuna_nccl_alltoall): the block of every peer is scounts[0] elements. */
    ncclResult_t rc = pncclAlltoAll(a->sbuf, a->rbuf, a->scounts[0] * a->esize, ncclUint8,
                                   a->t->comm, a->t->stream);
    return rc == ncclSuccess ? MPI_SUCCESS : tuna_nccl_failed(rc, "ncclAlltoAll");
}

int tuna_nccl_ag_vendor(const tuna_nccl_args *a)
{
    ncclResult_t rc = pncclAllGather(a->sbuf, a->rbuf, a->block, ncclUint8, a->t->comm,
                                    a->t->stream);
    return rc == ncclSuccess ? MPI_SUCCESS : tuna_nccl_failed(rc, "ncclAllGather");
}

int tuna_nccl_ar_vendor(const tuna_nccl_args *a)
{
    ncclResult_t rc = pncclAllReduce(a->sbuf, a->rbuf, a->count, a->ntype, a->nop, a->t->comm,
                                    a->t->stream);
    return rc == ncclSuccess ? MPI_SUCCESS : tuna_nccl_failed(rc, "ncclAllReduce");
}
