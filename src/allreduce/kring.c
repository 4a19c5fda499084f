/*
 * kring allreduce: reduce-scatter + allgather over P/k groups of k
 * consecutive ranks. The vector is cut into P segments ordered so that the
 * segments owned by the ranks at position l of every group (a "column") are
 * contiguous. Phase 1: ring reduce-scatter of whole columns inside the group
 * (k-1 rounds). Phase 2: ring reduce-scatter of that column's segments across
 * groups (P/k-1 rounds). Phases 3 and 4 are the matching allgathers, across
 * groups and then inside the group.
 * Rounds: 2(P/k - 1) + 2(k - 1). Volume sent per rank: 2 n (P-1)/P elements,
 * as the ring; only 2(P/k - 1) rounds cross groups. Memory: one column
 * (about n/k elements).
 * Any P: k is lowered to the largest divisor of P not above k (prime P with
 * k < P gives k = 1, the plain ring). Non-commutative ops: runs
 * recursive-doubling instead (rank order kept), logged at TUNA_VERBOSE >= 1.
 */
#include "allreduce.h"

#include <stdlib.h>

/* First element of the segment at position pos (P segments of n/P or n/P + 1 elements). */
static MPI_Aint seg_start(int n, int P, int pos)
{
    return (MPI_Aint)pos * (n / P) + (pos < n % P ? pos : n % P);
}

int tuna_ar_kring(const tuna_ar_args *a)
{
    if (!a->commute) {
        tuna_log(1, "allreduce kring: non-commutative op, running recursive-doubling instead");
        return tuna_ar_recmul_run(a, 2);
    }
    const int P = a->size, me = a->rank, n = a->count;
    const int k = tuna_coll_kring_group(P, tuna_ar_param(a, "k")), G = P / k;
    const int g = me / k, l = me % k;
    /* Columns (k of them) and the segments of this rank's column (G of them). */
    MPI_Aint *coff = tuna_malloc(sizeof(MPI_Aint) * ((size_t)k + (size_t)G));
    int *ccnt = tuna_malloc(sizeof(int) * ((size_t)k + (size_t)G));
    void *mem = NULL;
    char *tmp = NULL;
    if (coff && ccnt)
        tmp = tuna_ar_tmp(a, (int)(seg_start(n, P, G) + G), &mem);
    int rc = tmp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(coff);
        free(ccnt);
        return rc;
    }
    MPI_Aint *soff = coff + k;
    int *scnt = ccnt + k;
    for (int c = 0; c < k; c++) {
        coff[c] = seg_start(n, P, c * G);
        ccnt[c] = (int)(seg_start(n, P, (c + 1) * G) - coff[c]);
    }
    /* After the intra-group reduce-scatter this rank owns column (l + 1) % k. */
    const int col = (l + 1) % k;
    for (int i = 0; i < G; i++) {
        soff[i] = seg_start(n, P, col * G + i);
        scnt[i] = (int)(seg_start(n, P, col * G + i + 1) - soff[i]);
    }
    const int ileft = g * k + (l - 1 + k) % k, iright = g * k + (l + 1) % k;
    const int xleft = ((g - 1 + G) % G) * k + l, xright = ((g + 1) % G) * k + l;
    int comm_rc = MPI_SUCCESS;
    rc = tuna_ar_ring_reduce_scatter(a, k, l, ileft, iright, coff, ccnt, tmp,
                                     TUNA_TAG_AR_KRING_INTRA_RS, &comm_rc);
    if (rc == MPI_SUCCESS)
        rc = tuna_ar_ring_reduce_scatter(a, G, g, xleft, xright, soff, scnt, tmp,
                                         TUNA_TAG_AR_KRING_INTER_RS, &comm_rc);
    if (rc == MPI_SUCCESS) {
        tuna_ar_ring_allgather(a, G, g, xleft, xright, soff, scnt, TUNA_TAG_AR_KRING_INTER_AG,
                               &comm_rc);
        tuna_ar_ring_allgather(a, k, l, ileft, iright, coff, ccnt, TUNA_TAG_AR_KRING_INTRA_AG,
                               &comm_rc);
    }
    free(mem);
    free(coff);
    free(ccnt);
    return tuna_first_error(comm_rc, rc);
}
