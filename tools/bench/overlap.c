/*
 * tuna-bench --nonblocking (docs/nonblocking.md, "Overlap"). As the OSU micro-benchmarks
 * measure MPI_Ialltoallv: the pure time of start + wait; then start, a computation as long as
 * the pure time, wait; overlap = 100 (1 - (total - computation) / pure). Between pieces of the
 * computation the operation is tested (polling every `poll` of the pure time), which is how a
 * tuna operation advances without a progress thread (TUNA_PROGRESS=thread: the thread does).
 */
#include "overlap.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return v[n / 2]; /* no memory for a sorted copy: any sample */
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, by_value);
    const double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

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
static bool agree_failure(MPI_Comm comm, int rc, bench_overlap *out)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    int who = rc != MPI_SUCCESS ? me : size;
    MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, comm);
    if (who == size)
        return false;
    char msg[sizeof out->error - 16];
    snprintf(msg, sizeof msg, "%s", rc != MPI_SUCCESS ? tuna_error_string(rc) : "");
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, who, comm);
    snprintf(out->error, sizeof out->error, "rank %d: %s", who, msg);
    out->rc = rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
    return true;
}

/* `n` operations with `compute` seconds between start and wait; the timed ones (after
 * `warmup`) into t[], each the maximum over ranks. */
static bool series(MPI_Comm comm, int warmup, int n, double compute, double piece,
                   bench_start_fn start, void *ctx, double *t, int *tests, bench_overlap *out)
{
    for (int it = 0; it < warmup + n; it++) {
        MPI_Barrier(comm);
        double dt;
        const int rc = one(start, ctx, compute, piece, tests, &dt);
        if (agree_failure(comm, rc, out))
            return false;
        if (it >= warmup)
            t[it - warmup] = dt;
    }
    MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, comm);
    return true;
}

void bench_overlap_run(MPI_Comm comm, int warmup, int iters, double poll, bench_start_fn start,
                       void *ctx, bench_overlap *out)
{
    memset(out, 0, sizeof *out);
    out->pure = calloc((size_t)iters, sizeof *out->pure);
    out->total = calloc((size_t)iters, sizeof *out->total);
    int ok = out->pure && out->total;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        out->rc = MPI_ERR_NO_MEM;
        snprintf(out->error, sizeof out->error, "out of memory for timings");
        return;
    }
    int tests = 0;
    if (!series(comm, warmup, iters, 0, 1, start, ctx, out->pure, &tests, out))
        return;
    const double pure = median(out->pure, iters);
    out->compute = pure;
    /* poll 0: one piece, no test before the wait */
    const double piece = poll > 0 ? poll * pure : pure;
    if (!series(comm, warmup, iters, pure, piece > 0 ? piece : 1, start, ctx, out->total, &tests,
                out))
        return;
    out->tests = tests;
    MPI_Bcast(&out->tests, 1, MPI_INT, 0, comm);
    const double total = median(out->total, iters);
    double o = pure > 0 ? 100.0 * (1.0 - (total - pure) / pure) : 0;
    out->overlap = o < 0 ? 0 : o > 100 ? 100 : o;
}
