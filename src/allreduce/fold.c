/*
 * Folding steps of the allreduce recursive-multiplying family when P is not a
 * power of k (the groups of tuna_fold): members send their vector to the
 * group's leader (its last rank), the leader reduces the group in rank order,
 * runs the rounds, and sends the result back.
 */
#include "allreduce.h"

#include <stdlib.h>

int tuna_ar_fold_member(const tuna_ar_args *a, const tuna_fold *f)
{
    MPI_Comm comm = a->ctx->comm;
    int rc = MPI_Send(a->rbuf, a->count, a->type, f->last, TUNA_TAG_AR_FOLD_IN, comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Recv(a->rbuf, a->count, a->type, f->last, TUNA_TAG_AR_FOLD_OUT, comm,
                      MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : tuna_error_set(rc, "allreduce fold: member exchange failed");
}

int tuna_ar_fold_in(const tuna_ar_args *a, const tuna_fold *f, char *const *tmp, int ntmp)
{
    int n = f->last - f->first;
    if (n == 0)
        return MPI_SUCCESS;
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * (size_t)ntmp);
    if (!req)
        return tuna_error_set(MPI_ERR_NO_MEM, "allreduce fold-in: out of memory");
    int rc = MPI_SUCCESS;
    /* Batches of ntmp members from the highest rank down, so rbuf (the leader's value,
     * the group's last operand) accumulates v_first op (... op v_last) in rank order. */
    for (int hi = n; hi > 0 && rc == MPI_SUCCESS; hi -= ntmp) {
        int lo = hi > ntmp ? hi - ntmp : 0, nreq = 0;
        for (int i = lo; i < hi && rc == MPI_SUCCESS; i++)
            rc = MPI_Irecv(tmp[i - lo], a->count, a->type, f->first + i, TUNA_TAG_AR_FOLD_IN,
                           a->ctx->comm, &req[nreq++]);
        if (rc == MPI_SUCCESS)
            rc = tuna_waitall(nreq, req);
        if (rc != MPI_SUCCESS)
            rc = tuna_error_set(rc, "allreduce fold-in: receive failed");
        for (int i = hi - 1; i >= lo && rc == MPI_SUCCESS; i--)
            rc = tuna_ar_reduce(a, tmp[i - lo], a->rbuf, a->count);
    }
    free(req);
    return rc;
}

int tuna_ar_fold_out(const tuna_ar_args *a, const tuna_fold *f)
{
    int n = f->last - f->first;
    if (n == 0)
        return MPI_SUCCESS;
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * (size_t)n);
    if (!req)
        return tuna_error_set(MPI_ERR_NO_MEM, "allreduce fold-out: out of memory");
    int rc = MPI_SUCCESS, nreq = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Isend(a->rbuf, a->count, a->type, f->first + i, TUNA_TAG_AR_FOLD_OUT, a->ctx->comm,
                       &req[nreq++]);
    if (rc == MPI_SUCCESS)
        rc = tuna_waitall(nreq, req);
    free(req);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : tuna_error_set(rc, "allreduce fold-out: send failed");
}
