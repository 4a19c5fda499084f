/*
 * tuna-bench --nonblocking (docs/nonblocking.md, "Overlap"). As the OSU micro-benchmarks
 * measure MPI_Ialltoallv: the pure time of start + wait; then start, a computation as long as
 * the pure time, wait; overlap = 100 (1 - (total - computation) / pure). Between pieces of the
 * computation the operation is tested (polling every `poll` of the pure time), which is how a
 * tuna operation advances without a progress thread (TUNA_PROGRESS=thread: the thread does).
 */
#include "overlap.h"

#include <stdio.h>

#ifdef SMPI_SHARED_MALLOC /* SimGrid SMPI: computation is simulated time */
void bench_compute(double seconds)
{
    if (seconds > 0)
        smpi_execute(seconds);
}
#else
void bench_compute(double seconds)
{
    /* Spinning, as OSU's dummy computation: a sleeping rank would lend its core to others. */
    const double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
    }
}
#endif

/* One operation: start, `compute` seconds of computation in pieces of `piece` (tested after
 * each while it runs), wait. The elapsed time; *tests the tests made. */
static int one(bench_start_fn start, void *ctx, double compute, double piece, int *tests,
               double *elapsed)
{
    tuna_request req = TUNA_REQUEST_NULL;
    const double t0 = MPI_Wtime();
    int rc = start(ctx, &req);
    *tests = 0;
    for (double left = compute; rc == MPI_SUCCESS && left > 0; left -= piece) {
        bench_compute(left < piece ? left : piece);
        if (req != TUNA_REQUEST_NULL && left > piece) { /* the last piece is followed by wait */
            int flag = 0;
            rc = tuna_request_test(&req, &flag);
            ++*tests;
        }
    }
    if (rc == MPI_SUCCESS && req != TUNA_REQUEST_NULL)
        rc = tuna_request_wait(&req);
    *elapsed = MPI_Wtime() - t0;
    return rc;
}

/* The lowest failing rank's message on every rank; true if any rank failed. */
static bool agree_failure(MPI_Comm comm, int rc, char *err, size_t errlen)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    int who = rc != MPI_SUCCESS ? me : size;
    MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, comm);
    if (who == size)
        return false;
    char msg[384];
    snprintf(msg, sizeof msg, "%s", rc != MPI_SUCCESS ? tuna_error_string(rc) : "");
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, who, comm);
    snprintf(err, errlen, "rank %d: %.384s", who, msg);
    return true;
}

bool bench_overlap_series(MPI_Comm comm, int warmup, int n, double compute, double piece,
                          bench_start_fn start, void *ctx, double *t, int *tests, char *err,
                          size_t errlen)
{
    for (int it = 0; it < warmup + n; it++) {
        MPI_Barrier(comm);
        double dt;
        const int rc = one(start, ctx, compute, piece, tests, &dt);
        if (agree_failure(comm, rc, err, errlen))
            return false;
        if (it >= warmup)
            t[it - warmup] = dt;
    }
    MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, comm);
    return true;
}
