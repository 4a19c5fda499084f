/*
 * tuna-fft: distributed 2-D / 3-D complex-to-complex FFT with a slab decomposition.
 *
 * The grid N0 x N1 (x N2) is split along dimension 0 into FFTW-style blocks of ceil(N0/P)
 * planes (so ranks beyond the grid hold nothing). A forward transform runs the local FFTs
 * over dimensions 1 (and 2), transposes to blocks of dimension 1 with tuna_alltoallv, and runs
 * the FFT over dimension 0; the output stays in the transposed layout [y][x][z] (as FFTW's
 * FFTW_MPI_TRANSPOSED_OUT). The backward transform undoes it, so a round trip is two
 * non-uniform all-to-alls whenever P does not divide N0 and N1.
 *
 * Checks: forward output vs a serial FFTW transform of the gathered input (small grids),
 * round trip vs the input (any size), and every algorithm's forward output byte-identical to
 * the first algorithm's (data movement must not change a bit). Exit code 1 on a wrong answer.
 */
#define _POSIX_C_SOURCE 200809L
#include "app_common.h"
#include "cli.h"

#include <complex.h>
#include <fftw3.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Relative max-norm error allowed (forward vs serial, round trip vs input). Double-precision
 * FFT errors are ~1e-16 * log2(N); one misplaced element gives an error of order 1. */
#define FFT_TOLERANCE 1e-10
#define MAX_WORKLOADS 8

static int me = 0, P = 1;
static MPI_Comm comm_app = MPI_COMM_NULL; /* every collective of the application */

/* ------------------------------------------------------------ command line */

typedef struct fft_args {
    char algorithms[4096];
    char workloads[256];
    long dims[3];
    int nd;
    double shortfrac;
    int iters;
    long serial_max;
    unsigned long long seed;
    const char *json_path;
    const char *run_name;
    int plan; /* --plan: 0 none, 1 estimate, 2 measure */
    int quiet, help;
} fft_args;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec -n P tuna-fft [options]\n"
            "Distributed 2-D/3-D complex FFT (slab decomposition, FFTW local transforms,\n"
            "tuna_alltoallv transposes); checks its answers and times each algorithm.\n\n"
            "  -a, --algorithms LIST  tuna option strings, comma-separated (default\n"
            "                         vendor,linear,tuna); 'vendor' = the MPI library's\n"
            "                         MPI_Alltoallv; e.g. vendor,tuna:radix=2,block=4,coalesced\n"
            "  -W, --workload LIST    n1, n2, custom (default custom):\n"
            "                         custom: exactly --dims\n"
            "                         n1: dims 0 and 1 chosen so that only the ranks below\n"
            "                             ceil(0.625 P) hold data and they send to the first\n"
            "                             ceil(0.78125 P) ranks only; N2 from --dims\n"
            "                         n2: ceil(Ni/P) planes per rank, the last rank short\n"
            "                             (--short of a block) in dims 0 and 1; N2 from --dims\n"
            "  -d, --dims N0xN1[xN2]  grid size (default 64x64x64); 2 numbers: a 2-D FFT\n"
            "      --short F          n2: fraction of a block on the last rank (default 0.5)\n"
            "  -n, --iters N          timed forward+backward round trips per algorithm (default 5)\n"
            "      --serial-max N     compare with a serial FFTW transform when the grid has at\n"
            "                         most N points (default 1048576; 0 = never)\n"
            "      --seed N           seed of the input (default 1)\n"
            "  -j, --json FILE        JSON lines, one per workload and algorithm\n"
            "      --run-name NAME    name of the run in the JSON\n"
            "      --plan MODE        estimate or measure: each algorithm's two transposes as\n"
            "                         persistent plans (tuna_alltoallv_init once, then\n"
            "                         tuna_start + tuna_wait); plan time reported apart\n"
            "  -q, --quiet            no table on stdout\n"
            "  -h, --help             this help\n"
            "Exit code: 0 = all answers right, 1 = a wrong answer, 2 = bad input or error.\n");
}

static int parse_dims(const char *s, long dims[3], int *nd)
{
    int n = 0;
    const char *p = s;
    while (n < 3) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > INT_MAX)
            return -1;
        dims[n++] = v;
        if (*end == '\0')
            break;
        if (*end != 'x' || n == 3)
            return -1;
        p = end + 1;
    }
    if (n < 2)
        return -1;
    if (n == 2)
        dims[2] = 1;
    *nd = n;
    return 0;
}

static int parse_args(int argc, char **argv, fft_args *a, char *err, size_t errlen)
{
    enum { O_SHORT = 256, O_SERIAL, O_SEED, O_RUNNAME, O_PLAN };
    static const struct option longopts[] = {{"algorithms", required_argument, 0, 'a'},
                                             {"workload", required_argument, 0, 'W'},
                                             {"dims", required_argument, 0, 'd'},
                                             {"short", required_argument, 0, O_SHORT},
                                             {"iters", required_argument, 0, 'n'},
                                             {"serial-max", required_argument, 0, O_SERIAL},
                                             {"seed", required_argument, 0, O_SEED},
                                             {"json", required_argument, 0, 'j'},
                                             {"run-name", required_argument, 0, O_RUNNAME},
                                             {"plan", required_argument, 0, O_PLAN},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    strcpy(a->algorithms, "vendor,linear,tuna");
    strcpy(a->workloads, "custom");
    a->dims[0] = a->dims[1] = a->dims[2] = 64;
    a->nd = 3;
    a->shortfrac = 0.5;
    a->iters = 5;
    a->serial_max = 1L << 20;
    a->seed = 1;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":a:W:d:n:j:qh", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'a':
        case 'W': {
            char *dst = c == 'a' ? a->algorithms : a->workloads;
            size_t cap = c == 'a' ? sizeof a->algorithms : sizeof a->workloads;
            if (strlen(optarg) >= cap) {
                snprintf(err, errlen, "%s too long", c == 'a' ? "--algorithms" : "--workload");
                return -1;
            }
            strcpy(dst, optarg);
            break;
        }
        case 'd':
            if (parse_dims(optarg, a->dims, &a->nd)) {
                snprintf(err, errlen, "--dims '%s': expected N0xN1 or N0xN1xN2, each >= 1",
                         optarg);
                return -1;
            }
            break;
        case O_SHORT:
            a->shortfrac = strtod(optarg, &end);
            if (end == optarg || *end || !(a->shortfrac > 0 && a->shortfrac < 1)) {
                snprintf(err, errlen, "--short '%s': expected a number in (0, 1)", optarg);
                return -1;
            }
            break;
        case 'n':
            if (cli_int("--iters", optarg, 1, 1000000, &a->iters, err, errlen))
                return -1;
            break;
        case O_SERIAL:
            if (cli_long("--serial-max", optarg, 0, LONG_MAX, &a->serial_max, err, errlen))
                return -1;
            break;
        case O_SEED:
            if (cli_seed(optarg, &a->seed, err, errlen))
                return -1;
            break;
        case 'j':
            a->json_path = optarg;
            break;
        case O_RUNNAME:
            a->run_name = optarg;
            break;
        case O_PLAN:
            a->plan = strcmp(optarg, "estimate") == 0 ? 1 : strcmp(optarg, "measure") == 0 ? 2 : 0;
            if (!a->plan) {
                snprintf(err, errlen, "--plan '%s': expected estimate or measure", optarg);
                return -1;
            }
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            a->help = 1;
            break;
        default:
            return cli_getopt_error(c, argv, err, errlen);
        }
    }
    if (cli_no_positional(argc, argv, err, errlen))
        return -1;
    return 0;
}

/* ------------------------------------------------------------ decomposition */

/* FFTW-style block distribution: ceil(n/P) planes per rank, the rest on the last ones. */
static long block_count(long n, int r)
{
    long b = (n + P - 1) / P, c = n - (long)r * b;
    return c < 0 ? 0 : (c > b ? b : c);
}
static long block_start(long n, int r)
{
    long b = (n + P - 1) / P, s = (long)r * b;
    return s > n ? n : s;
}
/* Ranks holding data: ceil(n / ceil(n/P)). */
static int data_ranks(long n)
{
    long b = (n + P - 1) / P;
    return (int)((n + b - 1) / b);
}

/* The largest n <= 2 * want whose block distribution puts data on exactly `want` ranks (more
 * than 2 planes per rank cannot give 0.625 P data ranks: see docs/applications.md); 0 if none. */
static long exact_extent(int want)
{
    for (long n = 2L * want; n >= 1; n--)
        if (data_ranks(n) == want)
            return n;
    return 0;
}

typedef struct workload {
    char name[16];
    long n[3]; /* N2 = 1 for 2-D */
    int nd;
    int senders, receivers; /* ranks with data in dims 0 and 1 */
    int want_senders, want_receivers;
    int exact; /* the pattern the workload asks for was met */
} workload;

static int make_workload(const char *name, const fft_args *a, workload *w, char *err,
                         size_t errlen)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    w->nd = a->nd;
    w->n[0] = a->dims[0], w->n[1] = a->dims[1], w->n[2] = a->dims[2];
    w->exact = 1;
    if (strcmp(name, "custom") == 0) {
        /* exactly the given dims */
    } else if (strcmp(name, "n1") == 0) {
        /* The TuNA paper's N1: senders below 0.625 P, receivers below 0.78125 P. With ceil(n/P)
         * planes per rank an exact count needs at most 2 planes per rank (see docs). */
        w->want_senders = (int)((5L * P + 7) / 8);
        w->want_receivers = (int)((25L * P + 31) / 32);
        w->n[0] = exact_extent(w->want_senders);
        w->n[1] = exact_extent(w->want_receivers);
        if (!w->n[0] || !w->n[1]) {
            snprintf(err, errlen, "n1: no grid extent gives the pattern at P=%d", P);
            return -1;
        }
    } else if (strcmp(name, "n2") == 0) {
        /* The N2 case: b = ceil(Ni/P) planes on every rank but the last, which gets
         * max(1, round(short * b)). */
        for (int d = 0; d < 2; d++) {
            long b = (a->dims[d] + P - 1) / P;
            long t = lround(a->shortfrac * (double)b);
            if (t < 1)
                t = 1;
            w->n[d] = P == 1 ? b : b * (P - 1) + (t < b ? t : b);
        }
        w->want_senders = w->want_receivers = P;
    } else {
        snprintf(err, errlen, "--workload '%s': expected n1, n2 or custom", name);
        return -1;
    }
    w->senders = data_ranks(w->n[0]);
    w->receivers = data_ranks(w->n[1]);
    if (w->want_senders)
        w->exact = w->senders == w->want_senders && w->receivers == w->want_receivers;
    if (w->nd == 2)
        w->n[2] = 1;
    return 0;
}

/* ------------------------------------------------------------ distributed transform */

typedef struct dfft {
    workload w;
    long nx, x0, ny, y0; /* my planes in dims 0 (input layout) and 1 (output layout) */
    size_t in_elems, out_elems, cap;
    fftw_complex *data, *work;
    fftw_plan yz_fwd, yz_bwd, x_fwd, x_bwd; /* NULL where this rank has nothing */
    int *fs_cnt, *fs_dsp, *fr_cnt, *fr_dsp;   /* forward transpose counts (elements) */
    int *bs_cnt, *bs_dsp, *br_cnt, *br_dsp;   /* backward */
    double t_a2a, t_transpose, t_fft;         /* accumulated seconds */
    tuna_plan fwd, bwd;                       /* --plan: the algorithm's two transposes */
} dfft;

static void dfft_free(dfft *f)
{
    fftw_plan plans[4] = {f->yz_fwd, f->yz_bwd, f->x_fwd, f->x_bwd};
    for (int i = 0; i < 4; i++)
        if (plans[i])
            fftw_destroy_plan(plans[i]);
    fftw_free(f->data);
    fftw_free(f->work);
    free(f->fs_cnt);
    memset(f, 0, sizeof *f);
}

/* Sets up layouts, counts and plans; returns 0 or -1 with a message (same on every rank). */
static int dfft_init(dfft *f, const workload *w, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->w = *w;
    long N0 = w->n[0], N1 = w->n[1], N2 = w->n[2];
    f->nx = block_count(N0, me), f->x0 = block_start(N0, me);
    f->ny = block_count(N1, me), f->y0 = block_start(N1, me);
    /* tuna_alltoallv takes int counts and displacements (in elements): every rank's slab,
     * hence every block and displacement, must fit. */
    long bx = (N0 + P - 1) / P, by = (N1 + P - 1) / P;
    if ((double)bx * (double)N1 * (double)N2 > INT_MAX ||
        (double)by * (double)N0 * (double)N2 > INT_MAX) {
        snprintf(err, errlen, "grid %ldx%ldx%ld: a slab exceeds INT_MAX elements at P=%d", N0,
                 N1, N2, P);
        return -1;
    }
    f->in_elems = (size_t)(f->nx * N1 * N2);
    f->out_elems = (size_t)(f->ny * N0 * N2);
    f->cap = f->in_elems > f->out_elems ? f->in_elems : f->out_elems;
    size_t alloc = f->cap ? f->cap : 1;
    f->data = fftw_malloc(alloc * sizeof(fftw_complex));
    f->work = fftw_malloc(alloc * sizeof(fftw_complex));
    f->fs_cnt = malloc(8 * (size_t)P * sizeof(int));
    int ok = f->data && f->work && f->fs_cnt;
    if (ok) {
        f->fs_dsp = f->fs_cnt + P, f->fr_cnt = f->fs_cnt + 2 * P, f->fr_dsp = f->fs_cnt + 3 * P;
        f->bs_cnt = f->fs_cnt + 4 * P, f->bs_dsp = f->fs_cnt + 5 * P;
        f->br_cnt = f->fs_cnt + 6 * P, f->br_dsp = f->fs_cnt + 7 * P;
        for (int r = 0; r < P; r++) {
            long nxr = block_count(N0, r), x0r = block_start(N0, r);
            long nyr = block_count(N1, r), y0r = block_start(N1, r);
            /* forward: I send my x rows restricted to r's y columns; I receive r's rows of my
             * columns. Blocks are ordered by rank, so displacements follow the plane starts. */
            f->fs_cnt[r] = (int)(f->nx * nyr * N2), f->fs_dsp[r] = (int)(f->nx * y0r * N2);
            f->fr_cnt[r] = (int)(nxr * f->ny * N2), f->fr_dsp[r] = (int)(x0r * f->ny * N2);
            f->bs_cnt[r] = (int)(f->ny * nxr * N2), f->bs_dsp[r] = (int)(f->ny * x0r * N2);
            f->br_cnt[r] = (int)(nyr * f->nx * N2), f->br_dsp[r] = (int)(y0r * f->nx * N2);
        }
        /* In-place plans on `data`; executed on either buffer with fftw_execute_dft (both
         * come from fftw_malloc, so their alignment matches). */
        if (f->nx > 0) {
            int n[2] = {(int)N1, (int)N2};
            int rank = w->nd == 3 ? 2 : 1, dist = (int)(N1 * N2);
            f->yz_fwd = fftw_plan_many_dft(rank, n, (int)f->nx, f->data, NULL, 1, dist, f->data,
                                           NULL, 1, dist, FFTW_FORWARD, FFTW_ESTIMATE);
            f->yz_bwd = fftw_plan_many_dft(rank, n, (int)f->nx, f->data, NULL, 1, dist, f->data,
                                           NULL, 1, dist, FFTW_BACKWARD, FFTW_ESTIMATE);
            ok = ok && f->yz_fwd && f->yz_bwd;
        }
        if (f->ny > 0) {
            /* Output layout [y][x][z]: length-N0 transforms of stride N2, over y and z. */
            fftw_iodim dim = {(int)N0, (int)N2, (int)N2};
            fftw_iodim loops[2] = {{(int)f->ny, (int)(N0 * N2), (int)(N0 * N2)},
                                   {(int)N2, 1, 1}};
            f->x_fwd = fftw_plan_guru_dft(1, &dim, 2, loops, f->data, f->data, FFTW_FORWARD,
                                          FFTW_ESTIMATE);
            f->x_bwd = fftw_plan_guru_dft(1, &dim, 2, loops, f->data, f->data, FFTW_BACKWARD,
                                          FFTW_ESTIMATE);
            ok = ok && f->x_fwd && f->x_bwd;
        }
    }
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm_app);
    if (!all_ok) {
        snprintf(err, errlen, "out of memory or no FFTW plan for grid %ldx%ldx%ld", N0, N1, N2);
        dfft_free(f);
        return -1;
    }
    return 0;
}

static void swap_buffers(dfft *f)
{
    fftw_complex *t = f->data;
    f->data = f->work;
    f->work = t;
}

static int transpose(dfft *f, int forward, const app_algorithm *alg, char *err, size_t errlen)
{
    const long N0 = f->w.n[0], N1 = f->w.n[1], N2 = f->w.n[2];
    double t0 = app_now(), c0 = app_cpu_now();
    fftw_complex *in = f->data, *out = f->work;
    /* pack data -> work, in the order the receiver's block expects */
    if (forward) {
        size_t k = 0;
        for (int r = 0; r < P; r++) {
            long nyr = block_count(N1, r), y0r = block_start(N1, r);
            for (long x = 0; x < f->nx; x++)
                for (long y = y0r; y < y0r + nyr; y++, k += (size_t)N2)
                    memcpy(out + k, in + (x * N1 + y) * N2, (size_t)N2 * sizeof(fftw_complex));
        }
    } else {
        size_t k = 0;
        for (int r = 0; r < P; r++) {
            long nxr = block_count(N0, r), x0r = block_start(N0, r);
            for (long y = 0; y < f->ny; y++)
                for (long x = x0r; x < x0r + nxr; x++, k += (size_t)N2)
                    memcpy(out + k, in + (y * N0 + x) * N2, (size_t)N2 * sizeof(fftw_complex));
        }
    }
    app_charge(c0);
    double t1 = app_now();
    int rc;
    tuna_plan plan = forward ? f->fwd : f->bwd;
    if (plan) {
        rc = tuna_start(plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(plan);
    } else {
        rc = forward ? tuna_alltoallv(f->work, f->fs_cnt, f->fs_dsp, MPI_C_DOUBLE_COMPLEX,
                                      f->data, f->fr_cnt, f->fr_dsp, MPI_C_DOUBLE_COMPLEX,
                                      comm_app, &alg->opt)
                     : tuna_alltoallv(f->work, f->bs_cnt, f->bs_dsp, MPI_C_DOUBLE_COMPLEX,
                                      f->data, f->br_cnt, f->br_dsp, MPI_C_DOUBLE_COMPLEX,
                                      comm_app, &alg->opt);
    }
    double t2 = app_now();
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "tuna_alltoallv (%s): %s", alg->name, tuna_error_string(rc));
        return -1;
    }
    /* unpack data -> work into the new layout */
    c0 = app_cpu_now();
    in = f->data, out = f->work;
    if (forward) { /* from rank r: [x in r's rows][my y][z] -> [y][x][z] */
        for (int r = 0; r < P; r++) {
            long nxr = block_count(N0, r), x0r = block_start(N0, r);
            const fftw_complex *blk = in + f->fr_dsp[r];
            for (long xl = 0; xl < nxr; xl++)
                for (long y = 0; y < f->ny; y++)
                    memcpy(out + (y * N0 + x0r + xl) * N2, blk + (xl * f->ny + y) * N2,
                           (size_t)N2 * sizeof(fftw_complex));
        }
    } else { /* from rank r: [y in r's columns][my x][z] -> [x][y][z] */
        for (int r = 0; r < P; r++) {
            long nyr = block_count(N1, r), y0r = block_start(N1, r);
            const fftw_complex *blk = in + f->br_dsp[r];
            for (long yl = 0; yl < nyr; yl++)
                for (long x = 0; x < f->nx; x++)
                    memcpy(out + (x * N1 + y0r + yl) * N2, blk + (yl * f->nx + x) * N2,
                           (size_t)N2 * sizeof(fftw_complex));
        }
    }
    swap_buffers(f);
    app_charge(c0);
    double t3 = app_now();
    f->t_a2a += t2 - t1;
    f->t_transpose += t3 - t0;
    return 0;
}

/* One batch of local 1-D transforms (if this rank has any), scaled, timed as FFT work. */
static void local_fft(dfft *f, fftw_plan plan, double scale)
{
    double t0 = app_now(), c0 = app_cpu_now();
    if (plan)
        fftw_execute_dft(plan, f->data, f->data);
    if (scale != 1.0)
        for (size_t i = 0; i < f->in_elems; i++)
            f->data[i] *= scale;
    app_charge(c0);
    f->t_fft += app_now() - t0;
}

static int dfft_forward(dfft *f, const app_algorithm *alg, char *err, size_t errlen)
{
    local_fft(f, f->yz_fwd, 1.0);
    if (transpose(f, 1, alg, err, errlen))
        return -1;
    local_fft(f, f->x_fwd, 1.0);
    return 0;
}

/* The inverse, normalised so that backward(forward(x)) == x. */
static int dfft_backward(dfft *f, const app_algorithm *alg, char *err, size_t errlen)
{
    local_fft(f, f->x_bwd, 1.0);
    if (transpose(f, 0, alg, err, errlen))
        return -1;
    local_fft(f, f->yz_bwd, 1.0 / ((double)f->w.n[0] * (double)f->w.n[1] * (double)f->w.n[2]));
    return 0;
}

/* The input: a deterministic function of the seed and the global index. */
static void fill_input(fftw_complex *a, const dfft *f, unsigned long long seed)
{
    size_t first = (size_t)f->x0 * (size_t)(f->w.n[1] * f->w.n[2]);
    for (size_t i = 0; i < f->in_elems; i++) {
        double re = 2 * app_rand01(seed, 2 * (first + i)) - 1;
        double im = 2 * app_rand01(seed, 2 * (first + i) + 1) - 1;
        a[i] = re + im * I;
    }
}

static double max_abs(const fftw_complex *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (cabs(a[i]) > m)
            m = cabs(a[i]);
    return m;
}

/* Gathers a distributed array whose rank r holds cnt(r) planes of `plane` elements, in rank
 * order, onto rank 0. Returns NULL on ranks other than 0 (and on allocation failure). */
static fftw_complex *gather_planes(const fftw_complex *local, long nplanes_total, long plane,
                                   long mine)
{
    int *cnt = malloc(2 * (size_t)P * sizeof(int));
    fftw_complex *all = me == 0 ? fftw_malloc((size_t)(nplanes_total * plane) * sizeof *all)
                                : NULL;
    int ok = cnt && (me != 0 || all);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm_app);
    if (!ok) {
        free(cnt);
        fftw_free(all);
        return NULL;
    }
    int c = (int)(mine * plane);
    MPI_Allgather(&c, 1, MPI_INT, cnt, 1, MPI_INT, comm_app);
    int *dsp = cnt + P;
    dsp[0] = 0;
    for (int r = 1; r < P; r++)
        dsp[r] = dsp[r - 1] + cnt[r - 1];
    MPI_Gatherv(local, c, MPI_C_DOUBLE_COMPLEX, all, cnt, dsp, MPI_C_DOUBLE_COMPLEX, 0,
                comm_app);
    free(cnt);
    return all;
}

/* Forward output vs serial FFTW of the gathered input: relative max error on rank 0, bcast.
 * Returns -1 if it could not be computed. */
static double serial_error(const dfft *f, const fftw_complex *input, const fftw_complex *output)
{
    const long N0 = f->w.n[0], N1 = f->w.n[1], N2 = f->w.n[2];
    fftw_complex *in = gather_planes(input, N0, N1 * N2, f->nx);
    fftw_complex *out = gather_planes(output, N1, N0 * N2, f->ny);
    double e = -1;
    if (me == 0 && in && out) {
        size_t n = (size_t)(N0 * N1 * N2);
        fftw_complex *ref = fftw_malloc(n * sizeof *ref);
        int dims[3] = {(int)N0, (int)N1, (int)N2};
        fftw_plan p = ref ? fftw_plan_dft(f->w.nd, dims, in, ref, FFTW_FORWARD, FFTW_ESTIMATE)
                          : NULL;
        if (p) {
            fftw_execute(p);
            fftw_destroy_plan(p);
            double diff = 0;
            for (long x = 0; x < N0; x++)
                for (long y = 0; y < N1; y++)
                    for (long z = 0; z < N2; z++) {
                        double d = cabs(ref[(x * N1 + y) * N2 + z] - out[(y * N0 + x) * N2 + z]);
                        if (d > diff || isnan(d))
                            diff = isnan(d) ? INFINITY : d;
                    }
            double m = max_abs(ref, n);
            e = m > 0 ? diff / m : diff;
        }
        fftw_free(ref);
    }
    fftw_free(in);
    fftw_free(out);
    MPI_Bcast(&e, 1, MPI_DOUBLE, 0, comm_app);
    return e;
}

static double roundtrip_error(const dfft *f, const fftw_complex *input)
{
    double diff = 0, m = max_abs(input, f->in_elems);
    for (size_t i = 0; i < f->in_elems; i++) {
        double d = cabs(f->data[i] - input[i]);
        if (d > diff || isnan(d))
            diff = isnan(d) ? INFINITY : d;
    }
    MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, comm_app);
    MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm_app);
    return m > 0 ? diff / m : diff;
}

/* ------------------------------------------------------------ one workload */

typedef struct alg_result {
    int ok; /* ran without error */
    double err_serial, err_roundtrip;
    int identical; /* forward output bitwise equal to the first algorithm's */
    double total, a2a, transpose, fft; /* per-rank sums over timed iterations */
    double plan_seconds;               /* --plan: both inits, max over ranks */
    char choice[2][160];               /* --plan: what each plan runs */
    char error[512];
} alg_result;

static json_t *record_json(const fft_args *a, const tuna_run_meta *run, const workload *w,
                           const app_algorithm *alg, const alg_result *r, int verified,
                           double bytes)
{
    json_t *params = json_object();
    const tuna_algorithm_info *info = tuna_algorithm_get(TUNA_ALLTOALLV, alg->opt.algorithm);
    for (int p = 0; p < info->nparams; p++)
        if (alg->opt.set & (1u << p))
            json_object_set_new(params, info->params[p].name, json_integer(alg->opt.value[p]));
    json_t *dims = json_array();
    for (int d = 0; d < w->nd; d++)
        json_array_append_new(dims, json_integer(w->n[d]));
    json_t *rec = json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:o,s:i,s:i,s:i}", "app", "fft",
                            "workload", w->name, "decomposition", "slab", "dims", dims,
                            "algorithm", info->name, "options", alg->name, "params", params,
                            "senders", w->senders, "receivers", w->receivers, "iterations",
                            a->iters);
    json_object_set_new(rec, "pattern_exact",
                        w->want_senders ? json_boolean(w->exact) : json_null());
    json_object_set_new(rec, "bytes_per_transpose", json_real(bytes));
    json_object_set_new(rec, "transposes_per_iteration", json_integer(2));
    json_object_set_new(rec, "seed", json_integer((json_int_t)a->seed));
    json_object_set_new(rec, "status", json_string(r->ok ? "ok" : "error"));
    json_object_set_new(rec, "verified", json_boolean(verified));
    json_object_set_new(rec, "tolerance", json_real(FFT_TOLERANCE));
    json_object_set_new(rec, "error_serial",
                        r->err_serial >= 0 ? json_real(r->err_serial) : json_null());
    json_object_set_new(rec, "error_roundtrip", json_real(r->err_roundtrip));
    json_object_set_new(rec, "identical_to_first", json_boolean(r->identical));
    if (a->plan) {
        json_object_set_new(rec, "plan", json_string(a->plan == 2 ? "measure" : "estimate"));
        json_object_set_new(rec, "plan_seconds", json_real(r->plan_seconds));
        json_object_set_new(rec, "plan_forward", json_string(r->choice[0]));
        json_object_set_new(rec, "plan_backward", json_string(r->choice[1]));
    }
    if (!r->ok)
        json_object_set_new(rec, "error", json_string(r->error));
    app_minmax mm[4];
    double vals[4] = {r->total, r->transpose, r->a2a, r->fft};
    const char *keys[4] = {"total", "transpose", "alltoallv", "fft"};
    json_t *t = json_object();
    for (int k = 0; k < 4; k++) {
        mm[k] = app_minmax_over_ranks(vals[k] / a->iters, comm_app);
        json_object_set_new(t, keys[k], app_minmax_json(mm[k]));
    }
    json_object_set_new(rec, "time", t); /* seconds per round trip, over ranks */
    json_object_set_new(rec, "machine", tuna_run_meta_machine_json(run, run->rpn_env));
    json_object_set_new(rec, "run", tuna_run_meta_run_json(run));
    json_object_set_new(rec, "ranks_per_node_env", json_integer(run->rpn_env));
    return rec;
}

static void describe_plan(tuna_plan plan, char *out, size_t len)
{
    static const char *const how[] = {"forced", "estimate", "measure", "wisdom"};
    tuna_plan_info info;
    tuna_plan_get_info(plan, &info);
    const tuna_algorithm_info *alg = tuna_algorithm_get(TUNA_ALLTOALLV, info.algorithm);
    tuna_options o = {.collective = TUNA_ALLTOALLV, .algorithm = info.algorithm};
    for (int p = 0; p < alg->nparams; p++) {
        o.set |= 1u << p;
        o.value[p] = info.params[p];
    }
    char opts[128] = "?";
    tuna_options_format(&o, opts, sizeof opts);
    snprintf(out, len, "%s (%s)", opts, how[info.source & 3]);
}

/* --plan: the forward and backward transposes of one algorithm as plans (init is collective,
 * its errors agreed); the time of both inits, max over ranks. Returns 0 or -1 (every rank). */
static int make_plans(dfft *f, const app_algorithm *alg, unsigned flags, tuna_plan *two,
                      alg_result *r)
{
    MPI_Barrier(comm_app);
    double t0 = app_now();
    int rc = tuna_alltoallv_init(f->work, f->fs_cnt, f->fs_dsp, MPI_C_DOUBLE_COMPLEX, f->data,
                                 f->fr_cnt, f->fr_dsp, MPI_C_DOUBLE_COMPLEX, comm_app, &alg->opt,
                                 flags, &two[0]);
    /* Each transpose swaps data and work (swap_buffers), so the backward one, which follows
     * the forward, sends from today's data and receives into today's work. */
    if (rc == MPI_SUCCESS)
        rc = tuna_alltoallv_init(f->data, f->bs_cnt, f->bs_dsp, MPI_C_DOUBLE_COMPLEX, f->work,
                                 f->br_cnt, f->br_dsp, MPI_C_DOUBLE_COMPLEX, comm_app,
                                 &alg->opt, flags, &two[1]);
    double t = app_now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm_app);
    r->plan_seconds = t;
    if (rc != MPI_SUCCESS) {
        snprintf(r->error, sizeof r->error, "tuna_alltoallv_init (%s): %s", alg->name,
                 tuna_error_string(rc));
        if (two[0])
            tuna_plan_free(&two[0]);
        return -1;
    }
    describe_plan(two[0], r->choice[0], sizeof r->choice[0]);
    describe_plan(two[1], r->choice[1], sizeof r->choice[1]);
    return 0;
}

/* Runs every algorithm on one workload; returns 0 (all right), 1 (a wrong answer), 2 (error). */
static int run_workload(const fft_args *a, const tuna_run_meta *run, const workload *w,
                        const app_algorithm *algs, int nalg, FILE *json)
{
    char err[1024] = "";
    dfft f;
    if (dfft_init(&f, w, err, sizeof err)) {
        if (me == 0)
            fprintf(stderr, "tuna-fft: %s: %s\n", w->name, err);
        return 2;
    }
    fftw_complex *input = fftw_malloc((f.in_elems ? f.in_elems : 1) * sizeof *input);
    fftw_complex *first = fftw_malloc((f.out_elems ? f.out_elems : 1) * sizeof *first);
    alg_result *res = calloc((size_t)nalg, sizeof *res);
    int ok = input && first && res;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm_app);
    if (!ok) {
        if (me == 0)
            fprintf(stderr, "tuna-fft: %s: out of memory\n", w->name);
        fftw_free(input), fftw_free(first), free(res);
        dfft_free(&f);
        return 2;
    }
    fill_input(input, &f, a->seed);
    long points = w->n[0] * w->n[1] * w->n[2];
    int do_serial = points <= a->serial_max;
    double bytes = (double)points * (double)sizeof(fftw_complex);
    int status = 0;

    /* --plan: every algorithm's two transposes planned once, before any is run. */
    tuna_plan *plans = calloc(2 * (size_t)nalg, sizeof *plans);
    if (a->plan && !plans)
        status = 2;
    for (int k = 0; a->plan && plans && k < nalg; k++)
        if (make_plans(&f, &algs[k], a->plan == 2 ? TUNA_PLAN_MEASURE : TUNA_PLAN_ESTIMATE,
                       &plans[2 * k], &res[k]))
            status = 2;

    /* Verification run of each algorithm (also its warm-up). */
    for (int k = 0; k < nalg; k++) {
        alg_result *r = &res[k];
        if (a->plan && (!plans || !plans[2 * k]))
            continue; /* its init failed: r->error says why */
        f.fwd = a->plan ? plans[2 * k] : NULL;
        f.bwd = a->plan ? plans[2 * k + 1] : NULL;
        r->err_serial = -1;
        memcpy(f.data, input, f.in_elems * sizeof *input);
        int rc = dfft_forward(&f, &algs[k], r->error, sizeof r->error);
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm_app);
        if (rc) {
            if (!r->error[0])
                snprintf(r->error, sizeof r->error, "failed on another rank");
            status = 2;
            continue;
        }
        if (k == 0)
            memcpy(first, f.data, f.out_elems * sizeof *first);
        int same = memcmp(first, f.data, f.out_elems * sizeof *first) == 0;
        MPI_Allreduce(&same, &r->identical, 1, MPI_INT, MPI_MIN, comm_app);
        if (do_serial)
            r->err_serial = serial_error(&f, input, f.data);
        rc = dfft_backward(&f, &algs[k], r->error, sizeof r->error);
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm_app);
        if (rc) {
            if (!r->error[0])
                snprintf(r->error, sizeof r->error, "failed on another rank");
            status = 2;
            continue;
        }
        r->err_roundtrip = roundtrip_error(&f, input);
        r->ok = 1;
    }

    /* Timed round trips, algorithms interleaved so machine drift hits all alike. */
    for (int it = 0; it < a->iters; it++)
        for (int k = 0; k < nalg; k++) {
            alg_result *r = &res[k];
            if (!r->ok)
                continue;
            memcpy(f.data, input, f.in_elems * sizeof *input);
            f.t_a2a = f.t_transpose = f.t_fft = 0;
            f.fwd = a->plan ? plans[2 * k] : NULL;
            f.bwd = a->plan ? plans[2 * k + 1] : NULL;
            MPI_Barrier(comm_app);
            double t0 = app_now();
            int rc = dfft_forward(&f, &algs[k], r->error, sizeof r->error);
            if (!rc)
                rc = dfft_backward(&f, &algs[k], r->error, sizeof r->error);
            double t1 = app_now();
            MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm_app);
            if (rc) {
                r->ok = 0;
                status = 2;
                continue;
            }
            r->total += t1 - t0;
            r->a2a += f.t_a2a;
            r->transpose += f.t_transpose;
            r->fft += f.t_fft;
        }

    if (me == 0 && !a->quiet) {
        printf("\n== fft %s  %ldx%ld", w->name, w->n[0], w->n[1]);
        if (w->nd == 3)
            printf("x%ld", w->n[2]);
        printf("  P=%d  senders %d receivers %d", P, w->senders, w->receivers);
        if (w->want_senders)
            printf(" (asked %d/%d%s)", w->want_senders, w->want_receivers,
                   w->exact ? ", exact" : ", NOT exact");
        printf("  %.0f B per transpose\n%-28s %10s %10s %10s %10s %10s %10s %5s\n", bytes,
               "algorithm", "total_ms", "max_ms", "a2a_ms", "a2a_max", "err_serial",
               "err_rtrip", "ok");
    }
    for (int k = 0; k < nalg; k++) {
        alg_result *r = &res[k];
        int verified = r->ok && r->identical && r->err_roundtrip <= FFT_TOLERANCE &&
                       (!do_serial || (r->err_serial >= 0 && r->err_serial <= FFT_TOLERANCE));
        if (r->ok && !verified && status == 0)
            status = 1;
        app_minmax tot = app_minmax_over_ranks(r->total / a->iters, comm_app);
        app_minmax a2a = app_minmax_over_ranks(r->a2a / a->iters, comm_app);
        if (me == 0 && !a->quiet) {
            if (!r->ok)
                printf("%-28s error: %s\n", algs[k].name, r->error);
            else {
                char es[32] = "-";
                if (r->err_serial >= 0)
                    snprintf(es, sizeof es, "%.1e", r->err_serial);
                printf("%-28s %10.3f %10.3f %10.3f %10.3f %10s %10.1e %5s\n", algs[k].name,
                       1e3 * tot.mean, 1e3 * tot.max, 1e3 * a2a.mean, 1e3 * a2a.max, es,
                       r->err_roundtrip, verified ? "yes" : "WRONG");
                if (a->plan)
                    printf("%-28s plan init %.3f ms: forward %s, backward %s\n", "",
                           1e3 * r->plan_seconds, r->choice[0], r->choice[1]);
            }
        }
        json_t *rec = record_json(a, run, w, &algs[k], r, verified, bytes);
        if (me == 0 && json)
            app_json_line(json, rec);
        else
            json_decref(rec);
    }
    if (me == 0 && !a->quiet)
        fflush(stdout);
    for (int k = 0; plans && k < 2 * nalg; k++)
        if (plans[k])
            tuna_plan_free(&plans[k]);
    free(plans);
    f.fwd = f.bwd = NULL;
    fftw_free(input);
    fftw_free(first);
    free(res);
    dfft_free(&f);
    return status;
}

/* ------------------------------------------------------------ main */

static int fail_all(const char *msg)
{
    if (me == 0) {
        fprintf(stderr, "tuna-fft: %s\n", msg);
        fflush(stderr);
    }
    if (comm_app != MPI_COMM_NULL)
        MPI_Comm_free(&comm_app);
    MPI_Finalize();
    return me == 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
    fft_args a;
    char err[1024] = "";
    int prc = parse_args(argc, argv, &a, err, sizeof err);
    if (prc == 0 && a.help) {
        if (app_env_rank_zero())
            usage(stdout);
        return 0;
    }
    if (prc != 0) {
        if (!app_env_rank_zero())
            return 0; /* rank 0 reports and fails the job */
        fprintf(stderr, "tuna-fft: %s\n", err);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    /* tuna caches its context on the communicator: a duplicate, freed before MPI_Finalize,
     * keeps that teardown out of MPI_Finalize (SimGrid SMPI aborts on it). */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_app);

    app_algorithm *algs = NULL;
    int nalg = 0;
    if (app_parse_algorithms(a.algorithms, &algs, &nalg, err, sizeof err))
        return fail_all(err);
    workload w[MAX_WORKLOADS];
    int nw = 0;
    char wl[sizeof a.workloads], *save = NULL;
    strcpy(wl, a.workloads);
    for (char *t = strtok_r(wl, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (nw == MAX_WORKLOADS) {
            free(algs);
            return fail_all("--workload: too many workloads");
        }
        if (make_workload(t, &a, &w[nw++], err, sizeof err)) {
            free(algs);
            return fail_all(err);
        }
    }
    if (nw == 0) {
        free(algs);
        return fail_all("--workload: empty list");
    }
    tuna_run_meta run;
    tuna_run_meta_init(&run, "fft", a.run_name, argc, argv);
    FILE *json = NULL;
    int jok = 1;
    if (me == 0 && a.json_path && !(json = fopen(a.json_path, "w")))
        jok = 0;
    MPI_Bcast(&jok, 1, MPI_INT, 0, comm_app);
    if (!jok) {
        free(algs);
        snprintf(err, sizeof err, "cannot open --json file '%s'", a.json_path);
        return fail_all(err);
    }
    if (me == 0 && !a.quiet)
        printf("tuna-fft: %s, P=%d, %d round trip(s) per algorithm, tolerance %.0e "
               "(relative max error); times per round trip (2 transposes), mean / max over "
               "ranks\n",
               run.library, P, a.iters, FFT_TOLERANCE);
    int status = 0;
    for (int i = 0; i < nw; i++) {
        int s = run_workload(&a, &run, &w[i], algs, nalg, json);
        if (s > status)
            status = s;
    }
    if (json)
        fclose(json);
    free(algs);
    fftw_cleanup();
    MPI_Comm_free(&comm_app);
    MPI_Finalize();
    /* Every rank knows the status; only rank 0 returns it, so the launcher reports it. */
    return me == 0 ? status : 0;
}
