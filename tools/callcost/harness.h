/*
 * What tuna-setupcost and tuna-creationcost share: the exchange's buffers (uniform blocks of
 * `bytes`), the slowest rank's time of each contender per iteration, and the medians
 * printed. Header-only: tuna-creationcost is a plain MPI program (no libtuna to link).
 */
#ifndef TUNA_CALLCOST_HARNESS_H
#define TUNA_CALLCOST_HARNESS_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One alltoallv's arguments: P blocks of the same size, displacements in rank order. */
typedef struct exch {
    char *sbuf, *rbuf;
    int *cnt, *dsp;
} exch;

static inline exch exch_make(long bytes, int P, int me)
{
    exch x = {malloc((size_t)bytes * (size_t)P + 1), malloc((size_t)bytes * (size_t)P + 1),
              malloc(sizeof(int) * (size_t)P), malloc(sizeof(int) * (size_t)P)};
    for (int p = 0; p < P; p++)
        x.cnt[p] = (int)bytes, x.dsp[p] = (int)bytes * p;
    memset(x.sbuf, me, (size_t)bytes * (size_t)P + 1);
    return x;
}

static inline void exch_free(exch *x)
{
    free(x->sbuf), free(x->rbuf), free(x->cnt), free(x->dsp);
}

/* One iteration's times d[0..ncase) become the slowest rank's (collective), kept in t (ncase
 * rows of iters) unless the iteration is a warm-up (it < 0). */
static inline void times_keep(double *t, double *d, int ncase, long iters, long it)
{
    MPI_Allreduce(MPI_IN_PLACE, d, ncase, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= 0)
        for (int c = 0; c < ncase; c++)
            t[(size_t)c * (size_t)iters + (size_t)it] = d[c];
}

static inline int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each contender's median (t sorted in place) into med, printed in microseconds by name. */
static inline void medians_print(double *t, long iters, const char *const *names, int ncase,
                                 double *med)
{
    for (int c = 0; c < ncase; c++) {
        double *v = t + (size_t)c * (size_t)iters;
        qsort(v, (size_t)iters, sizeof *v, cmp_double);
        med[c] = v[iters / 2];
    }
    for (int c = 0; c < ncase; c++)
        printf("%-10s %10.1f\n", names[c], med[c] * 1e6);
}

/* Whether a call failed on any rank (collective). */
static inline int any_bad(int bad)
{
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad;
}

/* The end: a failure said on rank 0 (after the results), MPI finalized, the exit status. */
static inline int finish(int bad, int me)
{
    if (me == 0 && bad)
        printf("FAILED: a call returned an error\n");
    MPI_Finalize();
    return bad ? 1 : 0;
}

#endif /* TUNA_CALLCOST_HARNESS_H */
