/*
 * Completing the requests of one step of an exchange, with the real error code of the one
 * that failed. (MPICH 4.0.2 raises request-completion failures on MPI_COMM_WORLD's error
 * handler rather than on the request's communicator, so there tuna's codes come back only if
 * MPI_COMM_WORLD returns errors: docs/testing.md.)
 *
 * The rule on a communication failure (a failed wait, or a post that fails while requests of
 * the step are outstanding): every request of the step is still completed before anything
 * returns, so no buffer an outstanding request reads or writes is freed by tuna or handed back
 * to the caller, and no message of the call stays in flight to be matched by a later call.
 * The peers do not know of the failure: they post their sides of the step, so its sends are
 * received and its receives are sent. Receives are completed, not cancelled: a cancelled
 * receive whose message is still on its way leaves that message unmatched on the private
 * communicator, where the next call's receive with the same source and tag takes it (wrong
 * data, or a truncation, in a later correct call). Only a rank that knows its peers did not
 * post their sends either (the allocation-failure policy, where every rank stops at the same
 * point: docs/testing.md) cancels receives; those paths do it themselves. Open MPI returns from
 * MPI_Waitall at the first failure with the other requests still pending (MPI_ERR_PENDING)
 * and keeps a request that failed allocated: both are handled here.
 */
#include "tuna_internal.h"

/* tuna completes its own requests through PMPI_: the drop-in library intercepts MPI_Wait*,
 * MPI_Test* and MPI_Request_free for the requests it hands the application (proxies), and
 * tuna's internal requests are never those (src/preload/requests.c). */

/* Statuses are read in chunks from the stack: no allocation on the call path. */
#define WAIT_CHUNK TUNA_WAIT_CHUNK

void tuna_requests_complete(int n, MPI_Request *req)
{
    for (int i = 0; i < n; i++) {
        if (req[i] == MPI_REQUEST_NULL)
            continue;
        (void)PMPI_Wait(&req[i], MPI_STATUS_IGNORE); /* its error is not the first one */
        if (req[i] != MPI_REQUEST_NULL)             /* failed: complete, still allocated */
            PMPI_Request_free(&req[i]);
    }
}

int tuna_requests_settle(int n, MPI_Request *req, MPI_Status *status, bool block, int *flag)
{
    MPI_Status chunk[WAIT_CHUNK];
    for (int i = 0; i < n; i += WAIT_CHUNK) {
        int m = n - i < WAIT_CHUNK ? n - i : WAIT_CHUNK, f = 1;
        MPI_Status *st = status ? status + i : chunk;
        int rc = block ? PMPI_Waitall(m, req + i, st) : PMPI_Testall(m, req + i, &f, st);
        if (rc != MPI_SUCCESS) {
            /* MPI_ERR_IN_STATUS names no cause: the failed request's own code does. */
            if (rc == MPI_ERR_IN_STATUS)
                for (int j = 0; j < m; j++)
                    if (st[j].MPI_ERROR != MPI_SUCCESS && st[j].MPI_ERROR != MPI_ERR_PENDING) {
                        rc = st[j].MPI_ERROR;
                        break;
                    }
            tuna_requests_complete(n - i, req + i);
            *flag = 1;
            return rc;
        }
        if (!f) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return MPI_SUCCESS;
}

int tuna_waitall(int n, MPI_Request *req)
{
    int flag;
    return tuna_requests_settle(n, req, NULL, true, &flag);
}

int tuna_requests_finish(int n, MPI_Request *req, int post_rc)
{
    if (post_rc == MPI_SUCCESS)
        return tuna_waitall(n, req);
    tuna_requests_complete(n, req);
    return post_rc;
}
