/*
 * Completing a set of requests with the real error code of the one that failed. (MPICH
 * 4.0.2 raises request-completion failures on MPI_COMM_WORLD's error handler rather than on
 * the request's communicator, so there tuna's codes come back only if MPI_COMM_WORLD returns
 * errors: docs/testing.md.)
 */
#include "tuna_internal.h"

/* Statuses are read in chunks from the stack: no allocation on the call path. */
#define WAIT_CHUNK TUNA_WAIT_CHUNK

int tuna_waitall(int n, MPI_Request *req)
{
    MPI_Status st[WAIT_CHUNK];
    int first = MPI_SUCCESS;
    for (int i = 0; i < n; i += WAIT_CHUNK) {
        int m = n - i < WAIT_CHUNK ? n - i : WAIT_CHUNK;
        int rc = MPI_Waitall(m, req + i, st);
        /* MPI_ERR_IN_STATUS names no cause: the failed request's own code does. */
        if (rc == MPI_ERR_IN_STATUS)
            for (int j = 0; j < m && rc == MPI_ERR_IN_STATUS; j++)
                if (st[j].MPI_ERROR != MPI_SUCCESS && st[j].MPI_ERROR != MPI_ERR_PENDING)
                    rc = st[j].MPI_ERROR;
        first = first != MPI_SUCCESS ? first : rc;
        /* A truncated receive consumed its message: the later chunks are completed too, so
         * no request is left pending and the caller's schedule may go on. */
        if (!tuna_step_may_continue(rc))
            return first;
    }
    return first;
}
