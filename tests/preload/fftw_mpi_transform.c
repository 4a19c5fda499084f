/*
 * A client nobody here wrote: FFTW's MPI interface. Distributed complex 3-D
 * and 2-D DFTs whose first dimension is not a multiple of P, so FFTW's
 * transposes exchange blocks of different sizes, checked against FFTW's
 * serial transform of the same global array on every rank.
 *
 * The plans are out-of-place and may destroy their input: only then may FFTW
 * pick its MPI_Alltoall(v) transpose ("mpi-transpose-alltoall"); with unequal
 * blocks that solver calls MPI_Alltoallv. FFTW_ESTIMATE keeps the choice
 * deterministic. Usage: fftw_mpi_transform [N0 N1 N2]
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A value every rank can compute for global element (i, j, k). */
static fftw_complex *fill(fftw_complex *a, ptrdiff_t i, ptrdiff_t j, ptrdiff_t k)
{
    a[0][0] = sin(0.3 * (double)i + 0.7 * (double)j) + 0.01 * (double)k;
    a[0][1] = cos(0.11 * (double)(i * j) - 0.5 * (double)k);
    return a;
}

/* Distributed transform of an n0 x n1 x n2 array (n2 == 1 means 2-D); returns wrong values. */
static long check(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, int me, double *maxerr)
{
    ptrdiff_t local_n0, start0;
    int rank = n2 > 1 ? 3 : 2;
    const ptrdiff_t dims[3] = {n0, n1, n2};
    ptrdiff_t alloc = fftw_mpi_local_size(rank, dims, MPI_COMM_WORLD, &local_n0, &start0);
    ptrdiff_t plane = n1 * n2, total = n0 * plane;
    fftw_complex *in = fftw_alloc_complex((size_t)(alloc > 0 ? alloc : 1));
    fftw_complex *out = fftw_alloc_complex((size_t)(alloc > 0 ? alloc : 1));
    fftw_complex *gin = fftw_alloc_complex((size_t)total);
    fftw_complex *gout = fftw_alloc_complex((size_t)total);
    fftw_plan p = fftw_mpi_plan_dft(rank, dims, in, out, MPI_COMM_WORLD, FFTW_FORWARD,
                                    FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    fftw_plan s = rank == 3 ? fftw_plan_dft_3d((int)n0, (int)n1, (int)n2, gin, gout,
                                               FFTW_FORWARD, FFTW_ESTIMATE)
                            : fftw_plan_dft_2d((int)n0, (int)n1, gin, gout, FFTW_FORWARD,
                                               FFTW_ESTIMATE);
    for (ptrdiff_t i = 0; i < n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++)
            fill(&gin[i * plane + x], i, x / n2, x % n2);
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++)
            fill(&in[i * plane + x], start0 + i, x / n2, x % n2);
    if (me == 0) {
        printf("FFTW plan for %td x %td x %td: ", n0, n1, n2);
        fftw_print_plan(p); /* shows mpi-transpose-alltoall when it was chosen */
        printf("\n");
    }
    fftw_execute(p);
    fftw_execute(s);
    long bad = 0;
    double scale = 0;
    for (ptrdiff_t x = 0; x < total; x++)
        scale = fmax(scale, hypot(gout[x][0], gout[x][1]));
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++) {
            const double *a = out[i * plane + x], *b = gout[(start0 + i) * plane + x];
            double e = hypot(a[0] - b[0], a[1] - b[1]) / (scale > 0 ? scale : 1);
            if (e > *maxerr)
                *maxerr = e;
            if (e > 1e-10)
                bad++;
        }
    fftw_destroy_plan(p);
    fftw_destroy_plan(s);
    fftw_free(in);
    fftw_free(out);
    fftw_free(gin);
    fftw_free(gout);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fftw_mpi_init();
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    ptrdiff_t n0 = 3 * P + 2, n1 = 2 * P + 1, n2 = 6;   /* neither n0 nor n1 a multiple of P */
    if (argc == 4) {
        n0 = atol(argv[1]);
        n1 = atol(argv[2]);
        n2 = atol(argv[3]);
    }
    double maxerr = 0;
    long bad = check(n0, n1, n2, me, &maxerr);   /* 3-D */
    bad += check(n1, n0, 1, me, &maxerr);        /* 2-D */
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &maxerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("fftw_mpi_transform: %s on %d ranks (max relative error %.3g, %ld wrong)\n",
               bad ? "FAILED" : "OK", P, maxerr, bad);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return bad ? 1 : 0;
}
