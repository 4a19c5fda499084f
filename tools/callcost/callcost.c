/*
 * tuna-callcost: the fixed cost of a call. Back-to-back calls (no barrier between them) of
 * the MPI library's own MPI_Alltoallv (PMPI) and of tuna_alltoallv with each given option
 * string, on tiny uniform blocks, interleaved in chunks so that every contender sees the
 * same machine state; prints nanoseconds per call and the ratio PMPI / tuna per repeat. At
 * P = 1 and 2 the exchange itself is nearly free, so the difference is tuna's own work:
 * context lookup, option resolution, argument checks, statistics, request handling.
 *
 *   mpiexec -n 2 tuna-callcost [-s BYTES] [-n CALLS] [-r REPEATS] [OPTIONS...]
 *   (default OPTIONS: vendor spreadout auto)
 */
#include "tuna.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long bytes = 16, calls = 20000, repeats = 3;
    int ch;
    while ((ch = getopt(argc, argv, "s:n:r:h")) != -1) {
        switch (ch) {
        case 's': bytes = atol(optarg); break;
        case 'n': calls = atol(optarg); break;
        case 'r': repeats = atol(optarg); break;
        default:
            if (me == 0)
                fprintf(stderr, "usage: tuna-callcost [-s BYTES] [-n CALLS] [-r REPEATS] "
                                "[OPTIONS...]\n");
            MPI_Finalize();
            return ch == 'h' ? 0 : 2;
        }
    }
    if (bytes < 0 || calls < 10 || repeats < 1) {
        if (me == 0)
            fprintf(stderr, "tuna-callcost: need -s >= 0, -n >= 10, -r >= 1\n");
        MPI_Finalize();
        return 2;
    }
    static const char *const dflt[] = {"vendor", "spreadout", "auto"};
    int nopt = argc - optind > 0 ? argc - optind : 3;
    const char *const *names = argc - optind > 0 ? (const char *const *)argv + optind : dflt;
    tuna_options *opt = malloc(sizeof *opt * (size_t)nopt);
    double *t = calloc((size_t)nopt + 1, sizeof *t);
    int *cnt = malloc(sizeof(int) * 2 * (size_t)P);
    char *sbuf = calloc((size_t)P, (size_t)bytes + 1), *rbuf = calloc((size_t)P, (size_t)bytes + 1);
    if (!opt || !t || !cnt || !sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < nopt; i++)
        if (tuna_options_parse(names[i], TUNA_ALLTOALLV, &opt[i]) != MPI_SUCCESS) {
            if (me == 0)
                fprintf(stderr, "tuna-callcost: %s\n", tuna_error_string(MPI_ERR_ARG));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    int *dsp = cnt + P;
    for (int j = 0; j < P; j++) {
        cnt[j] = (int)bytes;
        dsp[j] = (int)(j * bytes);
    }
    const long chunk = calls / 10;
    if (me == 0)
        printf("tuna-callcost: P=%d, %ld-byte blocks, %ld back-to-back calls per contender and "
               "repeat, interleaved in chunks of %ld\n",
               P, bytes, 10 * chunk, chunk);
    for (long rep = 0; rep < repeats; rep++) {
        memset(t, 0, sizeof *t * ((size_t)nopt + 1));
        for (int c = 0; c < 10; c++)
            for (int k = -1; k < nopt; k++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (long i = 0; i < chunk; i++) {
                    int rc = k < 0 ? PMPI_Alltoallv(sbuf, cnt, dsp, MPI_BYTE, rbuf, cnt, dsp,
                                                    MPI_BYTE, MPI_COMM_WORLD)
                                   : tuna_alltoallv(sbuf, cnt, dsp, MPI_BYTE, rbuf, cnt, dsp,
                                                    MPI_BYTE, MPI_COMM_WORLD, &opt[k]);
                    if (rc != MPI_SUCCESS)
                        MPI_Abort(MPI_COMM_WORLD, 1);
                }
                t[k + 1] += MPI_Wtime() - t0;
            }
        /* The slowest rank's time is the call's. */
        MPI_Allreduce(MPI_IN_PLACE, t, nopt + 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (me == 0) {
            double n = (double)(10 * chunk);
            printf("repeat %ld: PMPI %.0f ns", rep + 1, t[0] / n * 1e9);
            for (int k = 0; k < nopt; k++)
                printf(" | %s %.0f ns (%.2fx)", names[k], t[k + 1] / n * 1e9, t[0] / t[k + 1]);
            printf("\n");
        }
    }
    free(opt);
    free(t);
    free(cnt);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
