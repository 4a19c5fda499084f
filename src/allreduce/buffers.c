/* Element buffers of the allreduce family: temporaries, local reduction, local copy. */
#include "allreduce.h"

#include <stdlib.h>
#include <string.h>

char *tuna_ar_tmp(const tuna_ar_args *a, int n, void **mem)
{
    MPI_Aint ext = a->extent < 0 ? -a->extent : a->extent;
    size_t bytes = n > 0 ? (size_t)(a->true_extent + (MPI_Aint)(n - 1) * ext) : 0;
    char *m = tuna_malloc(bytes);
    *mem = m;
    if (!m)
        return NULL;
    tuna_stats_temp(bytes);
    /* Element 0 sits true_lb below the allocation's start (the last one for negative extents). */
    char *base = m - a->true_lb;
    if (a->extent < 0 && n > 0)
        base += (MPI_Aint)(n - 1) * ext;
    return base;
}

int tuna_ar_reduce(const tuna_ar_args *a, const void *in, void *inout, int n)
{
    if (n == 0)
        return MPI_SUCCESS;
    int rc = tuna_tp_reduce(a->tp, in, inout, n, a->type, a->op);
    if (rc != MPI_SUCCESS) /* another transport than MPI's said what failed */
        return tuna_tp_is_mpi_host(a->tp)
                   ? tuna_error_set(rc, "MPI_Reduce_local of %d elements failed", n)
                   : rc;
    return MPI_SUCCESS;
}

int tuna_ar_copy(const tuna_ar_args *a, const void *src, void *dst, int n)
{
    if (n == 0 || src == dst)
        return MPI_SUCCESS;
    if (a->contig) {
        tuna_tp_copy(a->tp, dst, src, (size_t)n * (size_t)a->extent);
        return MPI_SUCCESS;
    }
    /* Any datatype: a message to self on the private communicator, no staging copy. */
    const int tag = TUNA_TAG_AR_SELF_COPY + a->tag_shift;
    int rc = tuna_tp_sendrecv_typed(a->tp, src, n, a->type, a->rank, tag, dst, n, a->type, a->rank,
                                    tag, a->ctx->comm);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "local copy of %d elements failed", n);
    return MPI_SUCCESS;
}
