/*
 * The Matrix Market reader of tuna-bench (matrix: and spmv: distributions) and tuna-tc
 * (--graph FILE.mtx): one set of rules for both. Pure C, no MPI.
 *
 * Rules (https://math.nist.gov/MatrixMarket/formats.html, coordinate format):
 *  - line 1: "%%MatrixMarket matrix coordinate FIELD SYMMETRY", the words after the banner
 *    case-insensitive; object "matrix" and format "coordinate" only (dense "array" files
 *    are refused);
 *  - FIELD: real or integer (one value per entry: a finite number, integer fields an
 *    integer), or pattern (no value; every entry counts 1); complex is refused;
 *  - SYMMETRY: general, symmetric (an off-diagonal entry (i, j, v) also stands for (j, i, v))
 *    or skew-symmetric (it stands for (j, i, -v); a diagonal entry is an error); hermitian
 *    needs complex and is refused;
 *  - then comment lines (first character '%') and blank lines anywhere; the size line
 *    "M N NNZ" (M, N >= 1); then exactly NNZ entries "i j [v]" with 1-based
 *    1 <= i <= M, 1 <= j <= N, nothing else on the line; nothing but comments and blank
 *    lines after them. Repeated entries are passed on as they come (callers add them up or
 *    ignore repeats);
 *  - errors name the file and line: "FILE:LINE: what".
 */
#ifndef TUNA_MTX_H
#define TUNA_MTX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum tuna_mtx_field { TUNA_MTX_REAL, TUNA_MTX_INTEGER, TUNA_MTX_PATTERN } tuna_mtx_field;
typedef enum tuna_mtx_symmetry {
    TUNA_MTX_GENERAL,
    TUNA_MTX_SYMMETRIC,
    TUNA_MTX_SKEW_SYMMETRIC
} tuna_mtx_symmetry;

/* The banner and the size line. */
typedef struct tuna_mtx_header {
    tuna_mtx_field field;
    tuna_mtx_symmetry symmetry;
    uint64_t rows, cols, stored; /* M, N, NNZ as the file states them */
} tuna_mtx_header;

/*
 * What the caller does with the file. on_header (may be NULL) sees the header before any
 * entry (check dimensions, allocate); on_entry gets every entry, zero-based, a symmetric
 * file's mirrored entries included. Either returns 0, or -1 after writing a message to
 * err (the reader adds the file and line).
 */
typedef struct tuna_mtx_reader {
    int (*on_header)(const tuna_mtx_header *h, void *ctx, char *err, size_t errlen);
    int (*on_entry)(uint64_t row, uint64_t col, double value, void *ctx, char *err,
                    size_t errlen);
    void *ctx;
} tuna_mtx_reader;

/* Whether text (a file's start) begins with the Matrix Market banner "%%MatrixMarket". */
int tuna_mtx_is_matrix_market(const char *text);

/* Read a Matrix Market file from f (named `name` in messages). Returns 0, or -1 with a
 * message in err. */
int tuna_mtx_read(FILE *f, const char *name, const tuna_mtx_reader *r, char *err,
                  size_t errlen);

#endif /* TUNA_MTX_H */
