/*
 * tuna-setupcost: what tuna's per-communicator set-up costs, and where (docs/nonblocking.md,
 * "Set-up in the operation"; measured: docs/results/nonblocking.md). Each iteration creates
 * a communicator (MPI_Comm_dup of MPI_COMM_WORLD) and frees it; the contenders, interleaved
 * so that all see the same machine state, with a barrier before each and the slowest rank's
 * time kept:
 *   dup          MPI_Comm_dup + MPI_Comm_free: the application's creation, unchanged;
 *   dup+setup    the same with tuna's blocking set-up right after the dup (tuna_pattern_changed):
 *                what a set-up at creation time (a drop-in's MPI_Comm_dup) would cost;
 *   first-lib    on a fresh duplicate, the first tuna_ialltoallv + wait with row ROW before
 *                issue 56 (the library's MPI_Ialltoallv: tuna had not set the communicator up);
 *   first        the same now: the set-up (MPI_Comm_idup, one MPI_Iallreduce, one
 *                MPI_Iallgather) as the operation's first steps, then ROW;
 *   warm         ROW's tuna_ialltoallv + wait on a communicator already set up (the first call
 *                when the set-up happened at creation);
 *   start        the start alone of `first` (local: no rank waits for another).
 * Prints the median microseconds of each and the ratios dup+setup/dup, first/first-lib,
 * first/warm.
 *
 *   mpiexec -n 4 tuna-setupcost [-n ITERATIONS] [-s BYTES] [-a ROW]   (defaults 200, 16, pairwise)
 */
#include "harness.h"
#include "tuna.h"

#include <getopt.h>
#include <stdbool.h>

enum { DUP, DUP_SETUP, FIRST_LIB, FIRST, WARM, START, NCASE };
static const char *const names[NCASE] = {"dup", "dup+setup", "first-lib", "first", "warm",
                                         "start"};

/* One tuna_ialltoallv + wait on comm with opt; *t_start: the start's own time. */
static int ialltoallv_once(exch *x, MPI_Comm comm, const tuna_options *opt, double *t_start)
{
    tuna_request req;
    double t0 = MPI_Wtime();
    int rc = tuna_ialltoallv(x->sbuf, x->cnt, x->dsp, MPI_BYTE, x->rbuf, x->cnt, x->dsp,
                             MPI_BYTE, comm, opt, &req);
    if (t_start)
        *t_start = MPI_Wtime() - t0;
    return rc == MPI_SUCCESS ? tuna_request_wait(&req) : rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long iters = 200, bytes = 16;
    const char *row = "pairwise";
    int ch;
    while ((ch = getopt(argc, argv, "n:s:a:h")) != -1) {
        switch (ch) {
        case 'n': iters = atol(optarg); break;
        case 's': bytes = atol(optarg); break;
        case 'a': row = optarg; break;
        default:
            if (me == 0)
                fprintf(stderr, "usage: tuna-setupcost [-n ITERATIONS] [-s BYTES] [-a ROW]\n");
            MPI_Finalize();
            return ch == 'h' ? 0 : 2;
        }
    }
    tuna_options opt, vendor;
    if (iters < 1 || bytes < 0 || bytes > 1 << 20 ||
        tuna_options_parse(row, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS ||
        tuna_options_parse("vendor", TUNA_ALLTOALLV, &vendor) != MPI_SUCCESS) {
        if (me == 0)
            fprintf(stderr, "tuna-setupcost: bad -n, -s (0..1 MiB) or -a '%s'\n", row);
        MPI_Finalize();
        return 2;
    }
    exch x = exch_make(bytes, P, me);
    MPI_Comm warm;
    MPI_Comm_dup(MPI_COMM_WORLD, &warm);
    tuna_pattern_changed(warm);
    double *t = calloc((size_t)iters * NCASE, sizeof(double));
    int bad = 0;
    for (long it = -2; it < iters; it++) { /* two warm-up iterations, not kept */
        double d[NCASE];
        for (int c = 0; c < NCASE - 1; c++) {
            MPI_Comm comm = MPI_COMM_NULL;
            const bool creation = c == DUP || c == DUP_SETUP; /* timed from the dup */
            if (c != WARM && !creation)
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            if (creation)
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            switch (c) {
            case DUP:
                break;
            case DUP_SETUP:
                bad |= tuna_pattern_changed(comm) != MPI_SUCCESS;
                break;
            case FIRST_LIB:
                bad |= ialltoallv_once(&x, comm, &vendor, NULL) != MPI_SUCCESS;
                break;
            case FIRST:
                bad |= ialltoallv_once(&x, comm, &opt, &d[START]) != MPI_SUCCESS;
                break;
            case WARM:
                bad |= ialltoallv_once(&x, warm, &opt, NULL) != MPI_SUCCESS;
                break;
            }
            /* creation's cost includes the free (a set-up frees its private duplicate) */
            if (creation) {
                MPI_Comm_free(&comm);
                d[c] = MPI_Wtime() - t0;
            } else {
                d[c] = MPI_Wtime() - t0;
                if (comm != MPI_COMM_NULL)
                    MPI_Comm_free(&comm);
            }
        }
        times_keep(t, d, NCASE, iters, it);
    }
    bad = any_bad(bad);
    if (me == 0) {
        double med[NCASE];
        printf("# tuna-setupcost P=%d bytes=%ld row=%s iterations=%ld (median us, slowest "
               "rank)\n",
               P, bytes, row, iters);
        medians_print(t, iters, names, NCASE, med);
        printf("ratio dup+setup/dup %.2f  first/first-lib %.2f  first/warm %.2f\n",
               med[DUP_SETUP] / med[DUP], med[FIRST] / med[FIRST_LIB], med[FIRST] / med[WARM]);
    }
    MPI_Comm_free(&warm);
    free(t);
    exch_free(&x);
    return finish(bad, me);
}
