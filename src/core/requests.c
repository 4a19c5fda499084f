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
    for (int i = 0; i < n; i += WAIT_CHUNK) {
        int m = n - i < WAIT_CHUNK ? n - i : WAIT_CHUNK;
        int rc = MPI_Waitall(m, req + i, st);
        if (rc == MPI_SUCCESS)
            continue;
        /* MPI_ERR_IN_STATUS names no cause: the failed request's own code does. */
        if (rc == MPI_ERR_IN_STATUS)
            for (int j = 0; j < m; j++)
                if (st[j].MPI_ERROR != MPI_SUCCESS && st[j].MPI_ERROR != MPI_ERR_PENDING)
                    return st[j].MPI_ERROR;
        return rc;
    }
    return MPI_SUCCESS;
}
