/*
 * tuna-bench --nonblocking: how much of a nonblocking collective hides behind computation,
 * measured as the OSU micro-benchmarks measure their nonblocking collectives (docs/nonblocking.md,
 * "Overlap").
 */
#ifndef TUNA_BENCH_OVERLAP_H
#define TUNA_BENCH_OVERLAP_H

#include <mpi.h>
#include <tuna.h>

/* Starts one operation of the configuration under test into *req. */
typedef int (*bench_start_fn)(void *ctx, tuna_request *req);

typedef struct bench_overlap {
    double *pure;   /* per timed iteration, max over ranks: start, then wait at once */
    double *total;  /* per timed iteration, max over ranks: start, computation, wait */
    double compute; /* the computation between start and wait: the median pure time */
    double overlap; /* percent: 100 (1 - (median total - compute) / median pure), in [0, 100] */
    int tests;      /* tuna_request_test calls during one computation (rank 0, last iteration) */
    int rc;         /* MPI_SUCCESS, or the error of the lowest failing rank (in error) */
    char error[400];
} bench_overlap;

/* Times `iters` operations alone, then `iters` with computation as long as their median in
 * between, tested every `poll` of it (0: never tested, waited after the computation); `warmup`
 * untimed operations before each. Collective over comm; every rank gets the same figures. */
void bench_overlap_run(MPI_Comm comm, int warmup, int iters, double poll, bench_start_fn start,
                       void *ctx, bench_overlap *out);

/* Busy computation of `seconds` (simulated under SMPI). */
void bench_compute(double seconds);

#endif /* TUNA_BENCH_OVERLAP_H */
