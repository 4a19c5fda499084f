/*
 * vendor: the MPI library's own MPI_Alltoallv. tuna_alltoallv() passes vendor
 * calls straight to PMPI_Alltoallv on the user's communicator before any tuna
 * processing; this entry serves callers that already hold normalised args
 * (plans; and tuna_alltoallv_c without the library's MPI_Alltoallv_c, where it
 * runs the linear exchange that Open MPI's basic alltoallv performs).
 */
#include "alltoallv.h"

#include <limits.h>
#include <stdlib.h>


int tuna_a2av_vendor(const tuna_a2av_args *a)
{
    int P = a->size;
    if (!a->scounts || !a->rcounts) {
        /* Large counts reach here only when the library has no MPI_Alltoallv_c
         * (tuna_alltoallv_c calls it on the user's arguments otherwise): Open MPI's basic
         * exchange, named in the statistics. */
        const int linear = tuna_algorithm_find(TUNA_ALLTOALLV, "linear");
        tuna_stats_current.algorithm = linear;
        tuna_stats_current.fallback = "the MPI library has no MPI_Alltoallv_c";
        tuna_a2av_args b = *a;
        return tuna_a2av_run_row(&tuna_a2av_table[linear], &b);
    }
    int *sd = tuna_malloc(sizeof(int) * 2 * (size_t)P);
    if (!sd)
        return MPI_ERR_NO_MEM;
    int *rd = sd + P;
    /* Byte displacements back to element units; they came from ints, except in-place packing. */
    for (int j = 0; j < P; j++) {
        MPI_Aint s = a->sext ? a->sdisp[j] / a->sext : 0, r = a->rext ? a->rdisp[j] / a->rext : 0;
        if (s > INT_MAX || r > INT_MAX) {
            free(sd);
            return tuna_error_set(MPI_ERR_COUNT, "vendor: displacement of block %d exceeds int",
                                  j);
        }
        sd[j] = (int)s;
        rd[j] = (int)r;
    }
    int rc = PMPI_Alltoallv(a->sbuf, a->scounts, sd, a->stype, a->rbuf, a->rcounts, rd, a->rtype,
                            a->ctx->comm);
    free(sd);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "PMPI_Alltoallv failed");
    return MPI_SUCCESS;
}
