/*
 * The preload tests' completion calls: every nonblocking collective the drop-in takes must
 * complete through each of MPI's completion calls, in arrays mixed with point-to-point
 * requests (its proxies are completed by the library like any request).
 */
#ifndef TUNA_TEST_COMPLETION_H
#define TUNA_TEST_COMPLETION_H

#include <mpi.h>

/* MPI_Wait, MPI_Test (polled), MPI_Waitall, MPI_Testall, MPI_Waitany, MPI_Testany,
 * MPI_Waitsome, MPI_Testsome, MPI_Request_get_status on r[0] (polled, then MPI_Waitall). */
#define COMPLETION_MODES 9

/* Complete every request of r[0..n) (n <= 8) with completion call `mode`; statuses in st. */
static inline void complete_with(int mode, int n, MPI_Request *r, MPI_Status *st)
{
    int flag = 0, idx, outcount, done = 0, indices[8];
    switch (mode) {
    case 0:
        for (int i = 0; i < n; i++)
            MPI_Wait(&r[i], &st[i]);
        break;
    case 1:
        for (int i = 0; i < n; i++)
            for (flag = 0; !flag;)
                MPI_Test(&r[i], &flag, &st[i]);
        break;
    case 2: MPI_Waitall(n, r, st); break;
    case 3:
        while (!flag)
            MPI_Testall(n, r, &flag, st);
        break;
    case 4:
        for (done = 0; done < n; done++)
            MPI_Waitany(n, r, &idx, st);
        break;
    case 5:
        while (done < n) {
            MPI_Testany(n, r, &idx, &flag, st);
            done += flag && idx != MPI_UNDEFINED;
        }
        break;
    case 6:
        while (done < n) {
            MPI_Waitsome(n, r, &outcount, indices, st);
            done += outcount;
        }
        break;
    case 7:
        while (done < n) {
            MPI_Testsome(n, r, &outcount, indices, st);
            done += outcount;
        }
        break;
    default:
        while (!flag)
            MPI_Request_get_status(r[0], &flag, st);
        MPI_Waitall(n, r, st);
        break;
    }
}

/* MPI_Request_free of x's request in flight (the operation runs on: the caller keeps x's
 * buffers until after MPI_Finalize), then MPI_Cancel of y's, which must be refused (a
 * collective's), y's request then completed by MPI_Wait. *freed, *refused: whether each
 * behaved; y's result is the caller's to check. */
static inline void free_and_cancel_with(int (*start)(void *arg, MPI_Request *req), void *x,
                                        void *y, int *freed, int *refused)
{
    MPI_Request r;
    start(x, &r);
    *freed = MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    start(y, &r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    *refused = MPI_Cancel(&r) != MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

#endif /* TUNA_TEST_COMPLETION_H */
