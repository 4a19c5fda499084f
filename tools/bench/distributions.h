/*
 * Block-size distributions for tuna-bench: each fills the whole P x P matrix
 * of sizes (row i = what rank i sends, column j = what rank j receives), so
 * every rank computes the same matrix from the same seed and send and receive
 * counts always agree. Pure C, no MPI: unit-tested on its own.
 *
 * Sizes are in "units" (bytes or elements; the bench converts). Every
 * generator is deterministic: block (i, j) depends only on the seed, i, j, the
 * parameters and P, never on the order of generation.
 */
#ifndef TUNA_BENCH_DISTRIBUTIONS_H
#define TUNA_BENCH_DISTRIBUTIONS_H

#include <stddef.h>
#include <stdint.h>

typedef enum bench_dist_kind {
    DIST_UNIFORM = 0,  /* uniform integer in [0, S] */
    DIST_NORMAL,       /* round(N(mean*S, sd*S)), redrawn while negative (truncated at 0) */
    DIST_POWERLAW,     /* bounded Pareto on [1, S], density ~ x^-exponent */
    DIST_SPARSE,       /* exactly round(zero * P^2) empty blocks, the others uniform in [1, S] */
    DIST_FFT_N1,       /* ranks < ceil(0.625 P) send S to peers < ceil(0.78125 P); others nothing */
    DIST_FFT_N2,       /* S * w(i) * w(j), w = 1 except w(P-1) = short (a short last rank) */
    DIST_MATRIX,       /* P x P counts read from a file (rows of numbers, or Matrix Market) */
    DIST_SPMV,         /* halo exchange of y = A x with A from a Matrix Market file */
    DIST_KIND_COUNT
} bench_dist_kind;

/* A distribution: its kind and parameters (fields unused by a kind are ignored). */
typedef struct bench_dist {
    bench_dist_kind kind;
    double mean, sd;     /* normal: fractions of S (defaults 0.5, 0.25) */
    double exponent;     /* power-law: > 0 (default 1.5) */
    double zero;         /* sparse: fraction of empty blocks in [0, 1] (default 0.9) */
    double shortfrac;    /* FFT N2: size of the last rank's share in [0, 1] (default 0.5) */
    double scale;        /* matrix / spmv: multiply file counts by this (> 0, default 1) */
    int scale_given;     /* scale= was in the text (tuna-bench's --scale does not override it) */
    char path[1024];     /* matrix / spmv: file */
    char spec[1200];     /* canonical text, e.g. "normal:mean=0.5,sd=0.25" */
} bench_dist;

/* Name of a kind ("uniform", "fft-n1", ...). */
const char *bench_dist_name(bench_dist_kind kind);

/*
 * Parse "NAME[:key=value,...]" (e.g. "powerlaw:exponent=2", "matrix:ml_4.txt",
 * "matrix:file=ml_4.txt,scale=1e-4", "spmv:bcsstk01.mtx"). Returns 0, or -1
 * with a message in err (naming the bad token).
 */
int bench_dist_parse(const char *text, bench_dist *d, char *err, size_t errlen);

/* Whether the kind uses the size S (matrix / spmv do not). */
int bench_dist_uses_size(const bench_dist *d);

/*
 * Fill out[i*P + j] for 0 <= i, j < P with the sizes of a synthetic kind for
 * maximum size S and the seed. Returns 0, or -1 with a message. (P^2 memory:
 * the bench uses bench_dist_prepare and bench_dist_block per row and column.)
 */
int bench_dist_generate(const bench_dist *d, int P, long S, uint64_t seed, long *out, char *err,
                        size_t errlen);

/*
 * What one block needs beyond (seed, i, j): only the sparse kind's exact count
 * of empty blocks is global; a block is empty when its (key, index) pair is
 * below this cut.
 */
typedef struct bench_dist_cut {
    uint64_t key, index;
} bench_dist_cut;

/* Sum of a count over every caller of bench_dist_prepare (MPI_Allreduce in the bench). */
typedef long long (*bench_dist_sum_fn)(long long local, void *ctx);

/*
 * Compute the cut of a synthetic kind, each caller holding rows [row_lo, row_hi)
 * of the matrix (the callers' rows together: all P rows, each once). Collective
 * over the callers when the kind is sparse: about 60 sums (bisection on the
 * 53-bit key), 2 log2 P more on key ties; no sum for the other kinds. Memory:
 * 24 bytes per block held. Returns 0 on every caller, or -1 on every caller with
 * a message.
 */
int bench_dist_prepare(const bench_dist *d, int P, uint64_t seed, int row_lo, int row_hi,
                       bench_dist_sum_fn sum, void *ctx, bench_dist_cut *cut, char *err,
                       size_t errlen);

/*
 * Size of block (i, j) of a synthetic kind: a function of (kind, P, S, seed,
 * cut, i, j) only, so every rank computes the same value without the matrix;
 * identical to bench_dist_generate's out[i*P + j].
 */
long bench_dist_block(const bench_dist *d, int P, long S, uint64_t seed,
                      const bench_dist_cut *cut, int i, int j);

/*
 * Read a count matrix for P ranks from a file:
 *  - DIST_MATRIX: rows of P numbers separated by blanks or commas ('#' starts a
 *    comment), one row per sending rank; or a Matrix Market "coordinate" file of
 *    dimension P x P whose entry (i, j) is the count rank i-1 sends to rank j-1
 *    (read by the shared reader, tools/common/mtx.h, whose rules apply: pattern entries
 *    count 1, symmetric files are mirrored; repeated entries add up).
 *  - DIST_SPMV: a Matrix Market coordinate matrix A (M x N, P <= min(M, N));
 *    rows and vector entries split in P contiguous blocks; rank k sends rank i
 *    one entry per distinct column of k's block that i's rows reference (the
 *    counts are vector entries; the bench sends each entry as 8 bytes, a
 *    double, when sizes are in bytes).
 * Counts are multiplied by d->scale and rounded to nearest, keeping a non-zero
 * count at least 1 so the zero pattern is preserved. Negative or non-numeric
 * entries and wrong dimensions are errors. Returns 0, or -1 with a message.
 */
int bench_dist_read(const bench_dist *d, int P, long *out, char *err, size_t errlen);

/* Uniform double in [0, 1) from a counter-based generator (exposed for tests). */
double bench_rand01(uint64_t seed, uint64_t i, uint64_t j, uint64_t k);

#endif /* TUNA_BENCH_DISTRIBUTIONS_H */
