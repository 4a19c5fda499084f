/*
 * tuna-bench --nonblocking: how much of a nonblocking collective hides behind computation,
 * measured as the OSU micro-benchmarks measure their nonblocking collectives (docs/nonblocking.md,
 * "Overlap").
 */
#ifndef TUNA_BENCH_OVERLAP_H
#define TUNA_BENCH_OVERLAP_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <tuna.h>

/* Starts one operation of the configuration under test into *req. */
typedef int (*bench_start_fn)(void *ctx, tuna_request *req);

/* `warmup` untimed then `n` timed operations, each: start, `compute` seconds of computation
 * in pieces of `piece` (the operation tested after each piece but the last), wait. t[k]: the
 * k-th timed operation's time, max over ranks (on every rank); *tests: this rank's tests in
 * the last operation. Collective over comm; false when an operation failed on some rank
 * (err: the lowest failing rank's message, on every rank). */
bool bench_overlap_series(MPI_Comm comm, int warmup, int n, double compute, double piece,
                          bench_start_fn start, void *ctx, double *t, int *tests, char *err,
                          size_t errlen);

/* Busy computation of `seconds` (simulated under SMPI). */
void bench_compute(double seconds);

#endif /* TUNA_BENCH_OVERLAP_H */
