/*
 * ring allreduce: a ring reduce-scatter (P-1 rounds; segment s of the vector
 * travels once around the ring, reduced at every hop) followed by a ring
 * allgather of the reduced segments (P-1 rounds).
 * Rounds: 2(P-1). Volume sent per rank: 2 n (P-1)/P elements.
 * Memory: one segment (ceil(n/P) elements).
 * Any P: segments of n/P or n/P + 1 elements. Non-commutative ops: the ring
 * combines operands in a rotated order, so it runs recursive-doubling instead
 * (which keeps MPI's rank order), logged at TUNA_VERBOSE >= 1.
 */
#include "allreduce.h"

#include <stdlib.h>

/* One ring step: rcount elements from left into rbuf while scount go from sbuf to right. The
 * step is complete when it returns, failed or not (tuna_requests_finish). */
static int exchange(const tuna_ar_args *a, const void *sbuf, int scount, void *rbuf, int rcount,
                    int left, int right, int tag)
{
    MPI_Request req[2];
    int n = 0;
    int rc = tuna_posted(MPI_Irecv(rbuf, rcount, a->type, left, tag, a->ctx->comm, &req[n]), &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(MPI_Isend(sbuf, scount, a->type, right, tag, a->ctx->comm, &req[n]), &n);
    rc = tuna_requests_finish(n, req, rc);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "allreduce ring: exchange with ranks %d and %d failed", left,
                              right);
    return MPI_SUCCESS;
}

int tuna_ar_ring_reduce_scatter(const tuna_ar_args *a, int m, int me, int left, int right,
                                const MPI_Aint *off, const int *cnt, char *tmp, int tag,
                                int *comm_rc)
{
    for (int s = 0; s < m - 1; s++) {
        int ss = (me - s + m) % m, rs = (me - s - 1 + m) % m;
        char *seg = tuna_ar_elem(a, a->rbuf, off[rs]);
        int rc = exchange(a, tuna_ar_elem(a, a->rbuf, off[ss]), cnt[ss], tmp, cnt[rs], left,
                          right, tag);
        *comm_rc = tuna_first_error(*comm_rc, rc);
        /* After a failed step the data is void: the steps go on, the reductions stop. */
        if (*comm_rc == MPI_SUCCESS && (rc = tuna_ar_reduce(a, tmp, seg, cnt[rs])) != MPI_SUCCESS)
            return rc;
    }
    tuna_stats_rounds(m - 1);
    return MPI_SUCCESS;
}

void tuna_ar_ring_allgather(const tuna_ar_args *a, int m, int me, int left, int right,
                            const MPI_Aint *off, const int *cnt, int tag, int *comm_rc)
{
    for (int s = 0; s < m - 1; s++) {
        int ss = (me + 1 - s + m) % m, rs = (me - s + m) % m;
        int rc = exchange(a, tuna_ar_elem(a, a->rbuf, off[ss]), cnt[ss],
                          tuna_ar_elem(a, a->rbuf, off[rs]), cnt[rs], left, right, tag);
        *comm_rc = tuna_first_error(*comm_rc, rc);
    }
    tuna_stats_rounds(m - 1);
}

int tuna_ar_ring(const tuna_ar_args *a)
{
    if (!a->commute) {
        tuna_log(1, "allreduce ring: non-commutative op, running recursive-doubling instead");
        return tuna_ar_recmul_run(a, 2);
    }
    const int P = a->size, me = a->rank, n = a->count;
    MPI_Aint *off = tuna_malloc(sizeof(MPI_Aint) * (size_t)P);
    int *cnt = tuna_malloc(sizeof(int) * (size_t)P);
    void *mem = NULL;
    char *tmp = NULL;
    if (off && cnt)
        tmp = tuna_ar_tmp(a, n / P + 1, &mem);
    int rc = tmp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int j = 0; j < P && rc == MPI_SUCCESS; j++) {
        off[j] = (MPI_Aint)j * (n / P) + (j < n % P ? j : n % P);
        cnt[j] = n / P + (j < n % P);
    }
    int left = (me - 1 + P) % P, right = (me + 1) % P, comm_rc = MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = tuna_ar_ring_reduce_scatter(a, P, me, left, right, off, cnt, tmp, TUNA_TAG_AR_RING_RS,
                                         &comm_rc);
    if (rc == MPI_SUCCESS)
        tuna_ar_ring_allgather(a, P, me, left, right, off, cnt, TUNA_TAG_AR_RING_AG, &comm_rc);
    free(mem);
    free(off);
    free(cnt);
    return tuna_first_error(comm_rc, rc);
}
