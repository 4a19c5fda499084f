/*
 * A client nobody here wrote: FFTW's MPI interface. Distributed complex 3-D
 * and 2-D DFTs whose first dimension is not a multiple of P, so FFTW's
 * transposes exchange blocks of different sizes, checked against FFTW's
 * serial transform of the same global array on every rank.
 *
 * The plans are out-of-place and may destroy their input: only then may FFTW
 * pick its MPI_Alltoall(v) transpose ("mpi-transpose-alltoall"); with unequal
 * blocks that solver calls MPI_Alltoallv, with equal blocks (N0 and N1
 * multiples of P) MPI_Alltoall. FFTW_ESTIMATE keeps the choice deterministic.
 * In the ordinary layout FFTW 3.3.10 picks its pairwise transpose (point to
 * point) whenever the blocks are equal, so "transposed" adds the layout spectral
 * codes use to save a transpose: a forward transform whose output stays
 * transposed (FFTW_MPI_TRANSPOSED_OUT), checked against the serial one, then the
 * backward transform from it (FFTW_MPI_TRANSPOSED_IN), checked to give back N
 * times the input, and both byte for byte against the library's transposes;
 * each has one transpose, which FFTW gives its alltoall solver.
 * Usage: fftw_mpi_transform [N0 N1 N2 [transposed]]
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value every rank can compute for global element (i, j, k). */
static fftw_complex *fill(fftw_complex *a, ptrdiff_t i, ptrdiff_t j, ptrdiff_t k)
{
    a[0][0] = sin(0.3 * (double)i + 0.7 * (double)j) + 0.01 * (double)k;
    a[0][1] = cos(0.11 * (double)(i * j) - 0.5 * (double)k);
    return a;
}

/* The serial transform of the whole input into gout (gin: its scratch); returns the largest
 * magnitude of the result (1 if every value is 0): the scale errors are measured in. */
static double serial_reference(int rank, ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2,
                               fftw_complex *gin, fftw_complex *gout)
{
    const ptrdiff_t plane = n1 * n2, total = n0 * plane;
    fftw_plan s = rank == 3 ? fftw_plan_dft_3d((int)n0, (int)n1, (int)n2, gin, gout,
                                               FFTW_FORWARD, FFTW_ESTIMATE)
                            : fftw_plan_dft_2d((int)n0, (int)n1, gin, gout, FFTW_FORWARD,
                                               FFTW_ESTIMATE);
    for (ptrdiff_t i = 0; i < n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++)
            fill(&gin[i * plane + x], i, x / n2, x % n2);
    fftw_execute(s);
    fftw_destroy_plan(s);
    double scale = 0;
    for (ptrdiff_t x = 0; x < total; x++)
        scale = fmax(scale, hypot(gout[x][0], gout[x][1]));
    return scale > 0 ? scale : 1;
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
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++)
            fill(&in[i * plane + x], start0 + i, x / n2, x % n2);
    if (me == 0) {
        printf("FFTW plan for %td x %td x %td: ", n0, n1, n2);
        fftw_print_plan(p); /* shows mpi-transpose-alltoall when it was chosen */
        printf("\n");
    }
    fftw_execute(p);
    long bad = 0;
    const double scale = serial_reference(rank, n0, n1, n2, gin, gout);
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++) {
            const double *a = out[i * plane + x], *b = gout[(start0 + i) * plane + x];
            double e = hypot(a[0] - b[0], a[1] - b[1]) / scale;
            if (e > *maxerr)
                *maxerr = e;
            if (e > 1e-10)
                bad++;
        }
    fftw_destroy_plan(p);
    fftw_free(in);
    fftw_free(out);
    fftw_free(gin);
    fftw_free(gout);
    return bad;
}

/* The transposed layout's forward transform into mid (FFTW_MPI_TRANSPOSED_OUT), kept in
 * mid_copy, then the backward one from it into back (FFTW_MPI_TRANSPOSED_IN), on comm. */
static void transposed_run(MPI_Comm comm, int rank, const ptrdiff_t dims[3], ptrdiff_t alloc,
                           ptrdiff_t local_n0, ptrdiff_t start0, fftw_complex *mid_copy,
                           fftw_complex *back, int print)
{
    const ptrdiff_t n2 = dims[2], plane = dims[1] * n2;
    fftw_complex *in = fftw_alloc_complex((size_t)alloc);
    fftw_complex *mid = fftw_alloc_complex((size_t)alloc);
    const unsigned flags = FFTW_ESTIMATE | FFTW_DESTROY_INPUT;
    fftw_plan fwd = fftw_mpi_plan_dft(rank, dims, in, mid, comm, FFTW_FORWARD,
                                      flags | FFTW_MPI_TRANSPOSED_OUT);
    fftw_plan bwd = fftw_mpi_plan_dft(rank, dims, mid, back, comm, FFTW_BACKWARD,
                                      flags | FFTW_MPI_TRANSPOSED_IN);
    if (print) {
        printf("FFTW plans for %td x %td x %td, transposed output and input: ", dims[0],
               dims[1], n2);
        fftw_print_plan(fwd); /* mpi-transpose-alltoall/e: MPI_Alltoall (equal blocks) */
        fftw_print_plan(bwd);
        printf("\n");
    }
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++)
            fill(&in[i * plane + x], start0 + i, x / n2, x % n2);
    fftw_execute(fwd);
    memcpy(mid_copy, mid, sizeof(fftw_complex) * (size_t)alloc);
    fftw_execute(bwd); /* destroys mid */
    fftw_destroy_plan(fwd);
    fftw_destroy_plan(bwd);
    fftw_free(in);
    fftw_free(mid);
}

/* Elements of a and b whose bytes differ. */
static long differ(const fftw_complex *a, const fftw_complex *b, ptrdiff_t n)
{
    long d = 0;
    for (ptrdiff_t x = 0; x < n; x++)
        d += memcmp(a[x], b[x], sizeof(fftw_complex)) != 0;
    return d;
}

/*
 * The transposed-layout round trip of an n0 x n1 x n2 array (n2 == 1: 2-D); returns wrong
 * values. Checked against the serial transform and the input (to FFT rounding) and, byte for
 * byte, against the same plans run on a communicator whose transposes are the library's: the
 * info keys tuna_alltoall=vendor and tuna_alltoallv=vendor, which FFTW's duplicates of it keep
 * (without the preload the keys mean nothing). A rounding-level tolerance alone misses a
 * corrupted low-order byte (checked: one flipped bit in a row's received block passed it).
 */
static long check_transposed(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, int me, double *maxerr)
{
    ptrdiff_t local_n0, start0, local_n1, start1;
    int rank = n2 > 1 ? 3 : 2;
    const ptrdiff_t dims[3] = {n0, n1, n2};
    ptrdiff_t alloc = fftw_mpi_local_size_transposed(rank, dims, MPI_COMM_WORLD, &local_n0,
                                                     &start0, &local_n1, &start1);
    ptrdiff_t plane = n1 * n2, total = n0 * plane;
    if (alloc < 1)
        alloc = 1;
    MPI_Info info;
    MPI_Comm library;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tuna_alltoall", "vendor");
    MPI_Info_set(info, "tuna_alltoallv", "vendor");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &library);
    MPI_Info_free(&info);
    fftw_complex *mid = fftw_alloc_complex((size_t)alloc);
    fftw_complex *back = fftw_alloc_complex((size_t)alloc);
    fftw_complex *ref_mid = fftw_alloc_complex((size_t)alloc);
    fftw_complex *ref_back = fftw_alloc_complex((size_t)alloc);
    fftw_complex *gin = fftw_alloc_complex((size_t)total);
    fftw_complex *gout = fftw_alloc_complex((size_t)total);
    transposed_run(MPI_COMM_WORLD, rank, dims, alloc, local_n0, start0, mid, back, me == 0);
    transposed_run(library, rank, dims, alloc, local_n0, start0, ref_mid, ref_back, 0);
    const double scale = serial_reference(rank, n0, n1, n2, gin, gout);
    long bad = 0;
    /* Transposed output: local_n1 x n0 x n2, rows start1.. of the n1 dimension. */
    for (ptrdiff_t j = 0; j < local_n1; j++)
        for (ptrdiff_t i = 0; i < n0; i++)
            for (ptrdiff_t k = 0; k < n2; k++) {
                const double *a = mid[(j * n0 + i) * n2 + k];
                const double *b = gout[i * plane + (start1 + j) * n2 + k];
                double e = hypot(a[0] - b[0], a[1] - b[1]) / scale;
                *maxerr = fmax(*maxerr, e);
                bad += e > 1e-10;
            }
    /* Back in the ordinary layout, unnormalised: total times the input. */
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (ptrdiff_t x = 0; x < plane; x++) {
            fftw_complex want;
            fill(&want, start0 + i, x / n2, x % n2);
            const double *a = back[i * plane + x];
            double e = hypot(a[0] / (double)total - want[0], a[1] / (double)total - want[1]);
            *maxerr = fmax(*maxerr, e);
            bad += e > 1e-10;
        }
    long bytes = differ(mid, ref_mid, local_n1 * n0 * n2) +
                 differ(back, ref_back, local_n0 * plane);
    if (bytes)
        fprintf(stderr, "rank %d: %ld values differ from the library's transposes' byte for "
                        "byte\n", me, bytes);
    fftw_free(mid);
    fftw_free(back);
    fftw_free(ref_mid);
    fftw_free(ref_back);
    fftw_free(gin);
    fftw_free(gout);
    MPI_Comm_free(&library);
    return bad + bytes;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fftw_mpi_init();
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    ptrdiff_t n0 = 3 * P + 2, n1 = 2 * P + 1, n2 = 6;   /* neither n0 nor n1 a multiple of P */
    int transposed = 0;
    if (argc >= 4) {
        n0 = atol(argv[1]);
        n1 = atol(argv[2]);
        n2 = atol(argv[3]);
        transposed = argc == 5 && strcmp(argv[4], "transposed") == 0;
        if (n0 < 1 || n1 < 1 || n2 < 1 || argc > 5 || (argc == 5 && !transposed)) {
            if (me == 0)
                fprintf(stderr, "usage: fftw_mpi_transform [N0 N1 N2 [transposed]] (sizes >= 1)\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    double maxerr = 0;
    long bad = check(n0, n1, n2, me, &maxerr);   /* 3-D */
    bad += check(n1, n0, 1, me, &maxerr);        /* 2-D */
    if (transposed)
        bad += check_transposed(n0, n1, n2, me, &maxerr);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &maxerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("fftw_mpi_transform: %s on %d ranks (max relative error %.3g, %ld wrong)\n",
               bad ? "FAILED" : "OK", P, maxerr, bad);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return bad ? 1 : 0;
}
