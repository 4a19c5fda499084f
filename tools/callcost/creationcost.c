/*
 * tuna-creationcost: what the drop-in's set-up at creation costs, against a set-up in the
 * operation (docs/nonblocking.md, "Set-up at creation"; docs/results/setup-at-creation.md).
 * A plain MPI program, run under the drop-in with TUNA_SETUP_AT_CREATION=1:
 *
 *   LD_PRELOAD=libtuna-preload.so TUNA_SETUP_AT_CREATION=1 TUNA_ALLTOALLV=pairwise \
 *     mpiexec -n 4 tuna-creationcost [-n ITERATIONS] [-s BYTES]      (defaults 200, 16)
 *
 * The application's PMPI_* calls bypass the drop-in, so one run holds both sides. Each
 * iteration runs the contenders interleaved (all see the same machine state), a barrier
 * before each, the slowest rank's time kept:
 *   dup-lib      PMPI_Comm_dup + MPI_Comm_free: creation without tuna's set-up;
 *   dup          MPI_Comm_dup + MPI_Comm_free: creation with it (the drop-in's);
 *   split-lib    PMPI_Comm_split (two halves) + MPI_Comm_free;
 *   split        MPI_Comm_split + MPI_Comm_free;
 *   first-lib    on a fresh PMPI duplicate, PMPI_Ialltoallv + PMPI_Wait: the library alone;
 *   first-inop   on a fresh PMPI duplicate (tuna has not seen it), MPI_Ialltoallv + MPI_Wait:
 *                the set-up in the operation where the MPI has it (MPICH), else the
 *                library's call inside tuna's request (Open MPI);
 *   first-made   on a fresh MPI_Comm_dup duplicate (set up at its creation), the first
 *                MPI_Ialltoallv + MPI_Wait;
 *   warm         MPI_Ialltoallv + MPI_Wait on a communicator used before.
 * Prints the median microseconds of each and the ratios.
 */
#include "harness.h"

#include <getopt.h>

enum { DUP_LIB, DUP, SPLIT_LIB, SPLIT, FIRST_LIB, FIRST_INOP, FIRST_MADE, WARM, NCASE };
static const char *const names[NCASE] = {"dup-lib",    "dup",        "split-lib",  "split",
                                         "first-lib",  "first-inop", "first-made", "warm"};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long iters = 200, bytes = 16;
    int ch;
    while ((ch = getopt(argc, argv, "n:s:h")) != -1) {
        switch (ch) {
        case 'n': iters = atol(optarg); break;
        case 's': bytes = atol(optarg); break;
        default:
            if (me == 0)
                fprintf(stderr, "usage: tuna-creationcost [-n ITERATIONS] [-s BYTES]\n");
            MPI_Finalize();
            return ch == 'h' ? 0 : 2;
        }
    }
    if (iters < 1 || bytes < 0 || bytes > 1 << 20) {
        if (me == 0)
            fprintf(stderr, "tuna-creationcost: bad -n or -s (0..1 MiB)\n");
        MPI_Finalize();
        return 2;
    }
    exch x = exch_make(bytes, P, me);
    char *sbuf = x.sbuf, *rbuf = x.rbuf;
    int *cnt = x.cnt, *dsp = x.dsp;
    MPI_Comm warm;
    MPI_Comm_dup(MPI_COMM_WORLD, &warm);
    double *t = calloc((size_t)iters * NCASE, sizeof(double));
    int bad = 0;
    for (long it = -2; it < iters; it++) { /* two warm-up iterations, not kept */
        double d[NCASE];
        for (int c = 0; c < NCASE; c++) {
            MPI_Comm comm = MPI_COMM_NULL;
            if (c == FIRST_LIB || c == FIRST_INOP)
                PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
            else if (c == FIRST_MADE)
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            MPI_Request r;
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            switch (c) {
            case DUP_LIB: bad |= PMPI_Comm_dup(MPI_COMM_WORLD, &comm); break;
            case DUP: bad |= MPI_Comm_dup(MPI_COMM_WORLD, &comm); break;
            case SPLIT_LIB: bad |= PMPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &comm); break;
            case SPLIT: bad |= MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &comm); break;
            case FIRST_LIB:
                bad |= PMPI_Ialltoallv(sbuf, cnt, dsp, MPI_BYTE, rbuf, cnt, dsp, MPI_BYTE, comm,
                                       &r);
                bad |= PMPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            default: /* FIRST_INOP, FIRST_MADE, WARM */
                bad |= MPI_Ialltoallv(sbuf, cnt, dsp, MPI_BYTE, rbuf, cnt, dsp, MPI_BYTE,
                                      c == WARM ? warm : comm, &r);
                bad |= MPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            }
            if (c <= SPLIT) /* creation's cost includes the free (and the set-up's) */
                MPI_Comm_free(&comm);
            d[c] = MPI_Wtime() - t0;
            if (comm != MPI_COMM_NULL)
                MPI_Comm_free(&comm);
        }
        times_keep(t, d, NCASE, iters, it);
    }
    bad = any_bad(bad);
    if (me == 0) {
        double med[NCASE];
        printf("# tuna-creationcost P=%d bytes=%ld iterations=%ld (median us, slowest rank)\n",
               P, bytes, iters);
        medians_print(t, iters, names, NCASE, med);
        printf("ratio dup/dup-lib %.2f  split/split-lib %.2f  first-inop/first-made %.2f  "
               "first-made/warm %.2f  first-inop/first-lib %.2f\n",
               med[DUP] / med[DUP_LIB], med[SPLIT] / med[SPLIT_LIB],
               med[FIRST_INOP] / med[FIRST_MADE], med[FIRST_MADE] / med[WARM],
               med[FIRST_INOP] / med[FIRST_LIB]);
    }
    MPI_Comm_free(&warm);
    free(t);
    exch_free(&x);
    return finish(bad, me);
}
