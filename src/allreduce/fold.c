/*
 * Folding steps of the allreduce recursive-multiplying family when P is not a
 * power of k (the groups of tuna_fold): members send their vector to the
 * group's leader (its last rank), the leader reduces the group in rank order,
 * runs the rounds, and sends the result back. A failed step is recorded in
 * *comm_rc and the steps go on (allreduce.h).
 */
#include "allreduce.h"

int tuna_ar_fold_member(const tuna_ar_args *a, const tuna_fold *f)
{
    MPI_Comm comm = a->ctx->comm;
    int rc = MPI_Send(a->rbuf, a->count, a->type, f->last, TUNA_TAG_AR_FOLD_IN, comm);
    /* The leader sends the result back whatever became of this vector. */
    rc = tuna_first_error(rc, MPI_Recv(a->rbuf, a->count, a->type, f->last, TUNA_TAG_AR_FOLD_OUT,
                                       comm, MPI_STATUS_IGNORE));
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "allreduce fold: member exchange failed");
    return MPI_SUCCESS;
}

int tuna_ar_fold_in(const tuna_ar_args *a, const tuna_fold *f, char *const *tmp, int ntmp,
                    MPI_Request *req, int *comm_rc)
{
    int n = f->last - f->first;
    /* Batches of ntmp members from the highest rank down, so rbuf (the leader's value,
     * the group's last operand) accumulates v_first op (... op v_last) in rank order. */
    for (int hi = n; hi > 0; hi -= ntmp) {
        int lo = hi > ntmp ? hi - ntmp : 0, nreq = 0, rc = MPI_SUCCESS;
        for (int i = lo; i < hi && rc == MPI_SUCCESS; i++)
            rc = tuna_posted(MPI_Irecv(tmp[i - lo], a->count, a->type, f->first + i,
                                       TUNA_TAG_AR_FOLD_IN, a->ctx->comm, &req[nreq]),
                             &nreq);
        if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
            *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "allreduce fold-in: "
                                                                     "receive failed"));
        for (int i = hi - 1; i >= lo && *comm_rc == MPI_SUCCESS; i--)
            if ((rc = tuna_ar_reduce(a, tmp[i - lo], a->rbuf, a->count)) != MPI_SUCCESS)
                return rc;
    }
    return MPI_SUCCESS;
}

void tuna_ar_fold_out(const tuna_ar_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc)
{
    int n = f->last - f->first, nreq = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = tuna_posted(MPI_Isend(a->rbuf, a->count, a->type, f->first + i, TUNA_TAG_AR_FOLD_OUT,
                                   a->ctx->comm, &req[nreq]),
                         &nreq);
    if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
        *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "allreduce fold-out: send "
                                                                 "failed"));
}
