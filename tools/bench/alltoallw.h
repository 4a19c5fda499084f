/*
 * tuna-bench --collective alltoallw (alltoallw.c): the pencil transpose of a 3-D FFT with
 * subarray types, tuna_alltoallw and tuna_alltoallw_init against the library's MPI_Alltoallw.
 */
#ifndef TUNA_BENCH_ALLTOALLW_H
#define TUNA_BENCH_ALLTOALLW_H

/* Whether the command line asks for --collective alltoallw (before MPI starts). */
int bench_alltoallw_asked(int argc, char **argv);
/* The whole run (MPI_Init to MPI_Finalize); the process's exit status. */
int bench_alltoallw_main(int argc, char **argv);

#endif
