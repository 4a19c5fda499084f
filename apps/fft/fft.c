/*
 * tuna-fft: distributed 2-D / 3-D FFT (complex-to-complex or real-to-complex) with a slab or a
 * pencil decomposition; the engine is pfft.c.
 *
 * slab: the grid N0 x N1 (x N2) is split along dimension 0 into FFTW-style blocks of
 * ceil(N0/P) planes (so ranks beyond the grid hold nothing); the local FFTs run over
 * dimensions 2 and 1, one all-to-all over every rank moves to blocks of dimension 1, and the
 * FFT over dimension 0 follows. pencil (3-D, as HeFFTe): bricks -> x-pencils (all ranks) ->
 * y-pencils (a column of the Pr x Pc grid) -> z-pencils (a row), a 1-D FFT after each. The
 * output stays in the last layout (as FFTW's TRANSPOSED_OUT); the backward transform undoes
 * it, so the all-to-alls are non-uniform whenever the ranks do not divide the grid.
 *
 * A reshape whose blocks are all equal (P dividing the extents it splits) runs tuna_alltoall
 * with the same algorithm string parsed for TUNA_ALLTOALL (--alltoallv-only: never).
 *
 * Checks: forward output vs a serial FFTW transform of the gathered input (small grids),
 * round trip vs the input (any size), and every algorithm's forward output byte-identical to
 * the first algorithm's (data movement must not change a bit). Exit code 1 on a wrong answer.
 */
#define _POSIX_C_SOURCE 200809L
#include "app_common.h"
#include "cli.h"

#include "pfft.h"

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
#define MAX_GRIDS 8

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
    int pencil, r2c; /* this run's; the lists below are run one after the other */
    int grid[2];     /* this run's pencil grid (0: the default) */
    int ntransforms, transforms[2]; /* --transform: r2c flags */
    int ngrids, grids[MAX_GRIDS][2]; /* --grid */
    int pencil_input; /* --input pencils */
    int v_only;       /* --alltoallv-only */
    int compare_v;    /* --compare-alltoallv */
    int no_charge;
    int quiet, help;
} fft_args;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec -n P tuna-fft [options]\n"
            "Distributed 2-D/3-D FFT (slab or pencil decomposition, FFTW local transforms,\n"
            "tuna_alltoallv transposes, tuna_alltoall where every block is equal); checks its\n"
            "answers and times each algorithm.\n\n"
            "  -a, --algorithms LIST  tuna option strings, comma-separated (default\n"
            "                         vendor,linear,tuna); 'vendor' = the MPI library's\n"
            "                         MPI_Alltoallv (MPI_Alltoall on equal blocks); e.g.\n"
            "                         vendor,tuna:radix=2,block=4,coalesced. A name only one\n"
            "                         collective has runs where it can: twophase-bruck stays\n"
            "                         on tuna_alltoallv, bruck-radix needs equal blocks in\n"
            "                         every reshape (skipped otherwise)\n"
            "      --alltoallv-only   every reshape on tuna_alltoallv (default: a reshape whose\n"
            "                         blocks are all equal runs tuna_alltoall)\n"
            "      --compare-alltoallv  each algorithm also with every reshape on\n"
            "                         tuna_alltoallv ('NAME [alltoallv]'), timed interleaved\n"
            "  -W, --workload LIST    n1, n2, custom (default custom):\n"
            "                         custom: exactly --dims\n"
            "                         n1: dims 0 and 1 chosen so that only the ranks below\n"
            "                             ceil(0.625 P) hold data and they send to the first\n"
            "                             ceil(0.78125 P) ranks only; N2 from --dims\n"
            "                         n2: ceil(Ni/P) planes per rank, the last rank short\n"
            "                             (--short of a block) in dims 0 and 1; N2 from --dims\n"
            "  -d, --dims N0xN1[xN2]  grid size (default 64x64x64); 2 numbers: a 2-D FFT\n"
            "      --decomposition D  slab (default) or pencil (3-D, custom workload only):\n"
            "                         bricks -> x-, y-, z-pencils on a Pr x Pc grid, the\n"
            "                         transposes inside its columns and rows\n"
            "      --input I          pencil: brick (default: a 3-D grid of least surface, as\n"
            "                         HeFFTe) or pencils (already in x-pencils: no brick\n"
            "                         reshape over all ranks)\n"
            "      --grid PrxPc,...   pencil grids, each run in turn (default: the factor\n"
            "                         pair of P closest to square, Pr <= Pc)\n"
            "      --transform T,...  c2c (default) and/or r2c (real input; the first\n"
            "                         transformed dimension, pencil: 0, slab: the last, is\n"
            "                         halved to n/2+1), each run in turn\n"
            "      --short F          n2: fraction of a block on the last rank (default 0.5)\n"
            "  -n, --iters N          timed forward+backward round trips per algorithm (default 5)\n"
            "      --serial-max N     compare with a serial FFTW transform when the grid has at\n"
            "                         most N points (default 1048576; 0 = never)\n"
            "      --seed N           seed of the input (default 1)\n"
            "  -j, --json FILE        JSON lines, one per transform, grid, workload and\n"
            "                         algorithm\n"
            "      --run-name NAME    name of the run in the JSON\n"
            "      --plan MODE        estimate or measure: each algorithm's transposes (every\n"
            "                         reshape, both directions) as persistent plans\n"
            "                         (tuna_alltoallv_init once per sub-communicator, then\n"
            "                         tuna_start + tuna_wait); plan time reported apart\n"
            "      --no-charge        SimGrid SMPI: do not charge local computation (FFTs,\n"
            "                         packing) to the simulated ranks (default: charge it)\n"
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
    enum { O_SHORT = 256, O_SERIAL, O_SEED, O_RUNNAME, O_PLAN, O_DECOMP, O_GRID, O_TRANSFORM,
           O_NOCHARGE, O_INPUT, O_VONLY, O_COMPARE };
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
                                             {"decomposition", required_argument, 0, O_DECOMP},
                                             {"grid", required_argument, 0, O_GRID},
                                             {"transform", required_argument, 0, O_TRANSFORM},
                                             {"no-charge", no_argument, 0, O_NOCHARGE},
                                             {"input", required_argument, 0, O_INPUT},
                                             {"alltoallv-only", no_argument, 0, O_VONLY},
                                             {"compare-alltoallv", no_argument, 0, O_COMPARE},
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
        case O_DECOMP:
            a->pencil = strcmp(optarg, "pencil") == 0;
            if (!a->pencil && strcmp(optarg, "slab") != 0) {
                snprintf(err, errlen, "--decomposition '%s': expected slab or pencil", optarg);
                return -1;
            }
            break;
        case O_GRID:
        case O_TRANSFORM: {
            char list[256], *save = NULL;
            snprintf(list, sizeof list, "%s", optarg);
            int *n = c == O_GRID ? &a->ngrids : &a->ntransforms;
            *n = 0;
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                long g[3];
                int nd;
                if (c == O_GRID && *n < MAX_GRIDS && !parse_dims(t, g, &nd) && nd == 2 &&
                    g[0] * g[1] <= INT_MAX) {
                    a->grids[*n][0] = (int)g[0], a->grids[*n][1] = (int)g[1];
                } else if (c == O_TRANSFORM && *n < 2 &&
                           (!strcmp(t, "c2c") || !strcmp(t, "r2c"))) {
                    a->transforms[*n] = !strcmp(t, "r2c");
                } else {
                    snprintf(err, errlen, c == O_GRID
                                              ? "--grid '%s': expected PrxPc[,PrxPc...] (at "
                                                "most 8), each >= 1"
                                              : "--transform '%s': expected c2c, r2c or c2c,r2c",
                             optarg);
                    return -1;
                }
                (*n)++;
            }
            if (!*n) {
                snprintf(err, errlen, "%s: empty list", c == O_GRID ? "--grid" : "--transform");
                return -1;
            }
            break;
        }
        case O_INPUT:
            a->pencil_input = strcmp(optarg, "pencils") == 0;
            if (!a->pencil_input && strcmp(optarg, "brick") != 0) {
                snprintf(err, errlen, "--input '%s': expected brick or pencils", optarg);
                return -1;
            }
            break;
        case O_NOCHARGE:
            a->no_charge = 1;
            break;
        case O_VONLY:
            a->v_only = 1;
            break;
        case O_COMPARE:
            a->compare_v = 1;
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
    if (!a->ntransforms)
        a->ntransforms = 1; /* c2c */
    if (a->pencil_input && !a->pencil) {
        snprintf(err, errlen, "--input pencils needs --decomposition pencil");
        return -1;
    }
    if (a->ngrids && !a->pencil) {
        snprintf(err, errlen, "--grid needs --decomposition pencil");
        return -1;
    }
    if (a->v_only && a->compare_v) {
        snprintf(err, errlen, "--alltoallv-only and --compare-alltoallv exclude each other");
        return -1;
    }
    if (a->pencil && a->nd != 3) {
        snprintf(err, errlen, "--decomposition pencil needs a 3-D grid (--dims N0xN1xN2)");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ decomposition */

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
    if (a->pencil && strcmp(name, "custom") != 0) {
        /* n1 and n2 are patterns of the slab's blocks */
        snprintf(err, errlen, "--workload '%s': the pencil decomposition takes custom only", name);
        return -1;
    }
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

/* ------------------------------------------------------------ checks */

/* The input: a deterministic function of the seed and the global index (complex: two draws
 * per point, real: one), whatever the decomposition. */
static void fill_input(pfft *f, void *dst, unsigned long long seed)
{
    size_t n, esz;
    pfft_input(f, &n, &esz);
    int real = esz == sizeof(double);
    const pfft_box *b = real ? &f->st[0].rbox : &f->st[0].cbox;
    const long *N = f->cfg.n;
    size_t i = 0;
    for (long x = 0; x < b->n[0]; x++)
        for (long y = 0; y < b->n[1]; y++)
            for (long z = 0; z < b->n[2]; z++, i++) {
                uint64_t g = (uint64_t)(((x + b->lo[0]) * N[1] + y + b->lo[1]) * N[2] + z +
                                        b->lo[2]);
                if (real)
                    ((double *)dst)[i] = 2 * app_rand01(seed, g) - 1;
                else
                    ((fftw_complex *)dst)[i] = (2 * app_rand01(seed, 2 * g) - 1) +
                                               (2 * app_rand01(seed, 2 * g + 1) - 1) * I;
            }
}

/* Max |a_i| and max |a_i - b_i| (b may be NULL) over n complex or real values. */
static void max_abs_diff(const void *a, const void *b, size_t n, int real, double *m,
                         double *diff)
{
    *m = 0, *diff = 0;
    for (size_t i = 0; i < n; i++) {
        double v, d = 0;
        if (real) {
            v = fabs(((const double *)a)[i]);
            if (b)
                d = fabs(((const double *)a)[i] - ((const double *)b)[i]);
        } else {
            v = cabs(((const fftw_complex *)a)[i]);
            if (b)
                d = cabs(((const fftw_complex *)a)[i] - ((const fftw_complex *)b)[i]);
        }
        if (v > *m)
            *m = v;
        if (d > *diff || isnan(d))
            *diff = isnan(d) ? INFINITY : d;
    }
}

/* Forward output vs serial FFTW (a complex transform of the gathered input; r2c outputs are
 * its half along the halved dimension): relative max error on rank 0, bcast; -1 if it could
 * not be computed. */
static double serial_error(pfft *f, const void *input, const fftw_complex *output)
{
    const long *N = f->cfg.n, *C = f->cext;
    int real = f->r2c_stage >= 0, ok_in, ok_out;
    void *in = pfft_gather(f, 0, real, input, &ok_in);
    fftw_complex *out = pfft_gather(f, f->nstages - 1, 0, output, &ok_out);
    double e = -1;
    if (me == 0 && in && out) {
        size_t n = (size_t)(N[0] * N[1] * N[2]);
        fftw_complex *cin = fftw_malloc(n * sizeof *cin), *ref = fftw_malloc(n * sizeof *ref);
        int dims[3] = {(int)N[0], (int)N[1], (int)N[2]};
        fftw_plan p = cin && ref ? fftw_plan_dft(f->cfg.nd, dims, cin, ref, FFTW_FORWARD,
                                                 FFTW_ESTIMATE)
                                 : NULL;
        if (p) {
            for (size_t i = 0; i < n; i++)
                cin[i] = real ? ((double *)in)[i] : ((fftw_complex *)in)[i];
            fftw_execute(p);
            fftw_destroy_plan(p);
            double diff = 0, m;
            for (long x = 0; x < C[0]; x++)
                for (long y = 0; y < C[1]; y++)
                    for (long z = 0; z < C[2]; z++) {
                        double d = cabs(ref[(x * N[1] + y) * N[2] + z] -
                                        out[(x * C[1] + y) * C[2] + z]);
                        if (d > diff || isnan(d))
                            diff = isnan(d) ? INFINITY : d;
                    }
            max_abs_diff(ref, NULL, n, 0, &m, &(double){0});
            e = m > 0 ? diff / m : diff;
        }
        fftw_free(cin);
        fftw_free(ref);
    }
    fftw_free(in);
    fftw_free(out);
    MPI_Bcast(&e, 1, MPI_DOUBLE, 0, comm_app);
    return e;
}

static double roundtrip_error(pfft *f, const void *input)
{
    size_t n, esz;
    const void *now = pfft_input(f, &n, &esz);
    double m, diff;
    max_abs_diff(input, now, n, esz == sizeof(double), &m, &diff);
    MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, comm_app);
    MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm_app);
    return m > 0 ? diff / m : diff;
}

/* ------------------------------------------------------------ one workload */

/* One row of the run: an algorithm and the collectives its reshapes may use. */
typedef struct fft_entry {
    const app_algorithm *alg;
    const tuna_options *opt;  /* TUNA_ALLTOALLV, NULL: the algorithm is alltoall only */
    const tuna_options *uopt; /* TUNA_ALLTOALL for the uniform reshapes, NULL: none */
    int v_only;               /* --alltoallv-only or the [alltoallv] copy */
    char label[APP_NAME_LEN + 16];
} fft_entry;

typedef struct alg_result {
    int ok;      /* ran without error */
    int skipped; /* alltoall only, and a reshape is not uniform: r->error says which */
    int planned; /* its plans exist (or --plan is off) */
    double err_serial, err_roundtrip;
    int identical; /* forward output bitwise equal to the first algorithm's */
    double total, a2a, transpose, fft;    /* per-rank sums over timed iterations */
    double stage_a2a[PFFT_MAX_STAGES - 1]; /* per reshape, both directions */
    long calls[PFFT_MAX_STAGES - 1][2];   /* per reshape: tuna_alltoallv, tuna_alltoall runs */
    double plan_seconds;                  /* --plan: every init, max over ranks */
    char choice[2 * (PFFT_MAX_STAGES - 1)][160]; /* --plan: what each plan runs */
    char error[512];
} alg_result;

static json_t *minmax_json(double v, const fft_args *a)
{
    return app_minmax_json(app_minmax_over_ranks(v / a->iters, comm_app));
}

/* The collective reshape t ran for one entry, from the calls of every rank. */
static const char *collective_of(const long calls[2])
{
    return calls[0] && calls[1] ? "mixed" : calls[1] ? "alltoall" : calls[0] ? "alltoallv" : "none";
}

/* Why an entry's uniform reshapes do not run tuna_alltoall (NULL: they do). */
static const char *alltoall_note(const fft_args *a, const fft_entry *e)
{
    if (e->uopt)
        return NULL;
    if (e->v_only)
        return a->v_only ? "--alltoallv-only" : "--compare-alltoallv";
    return e->alg->note; /* the alltoall registry's message */
}

static json_t *record_json(const fft_args *a, const tuna_run_meta *run, const workload *w,
                           const pfft *f, const fft_entry *e, const alg_result *r,
                           long calls[][2], int verified)
{
    const app_algorithm *alg = e->alg;
    const tuna_options *o = alg->has_v ? &alg->opt : &alg->uopt;
    json_t *params = json_object();
    const tuna_algorithm_info *info = tuna_algorithm_get(o->collective, o->algorithm);
    for (int p = 0; p < info->nparams; p++)
        if (o->set & (1u << p))
            json_object_set_new(params, info->params[p].name, json_integer(o->value[p]));
    json_t *dims = json_array();
    for (int d = 0; d < w->nd; d++)
        json_array_append_new(dims, json_integer(w->n[d]));
    int nt = f->nstages - 1;
    double bytes = 0;
    for (int t = 0; t < nt; t++)
        bytes += f->rs[t].bytes / nt;
    json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:o,s:i}", "app", "fft", "workload",
                            w->name, "decomposition", a->pencil ? "pencil" : "slab",
                            "transform", a->r2c ? "r2c" : "c2c", "dims", dims, "algorithm",
                            info->name, "options", alg->name, "params", params, "iterations",
                            a->iters);
    /* what this row's reshapes run: uniform ones tuna_alltoall with alltoall_options, the
     * others tuna_alltoallv with alltoallv_options; a null one is explained by the note */
    json_object_set_new(rec, "alltoallv_only", json_boolean(e->v_only));
    json_object_set_new(rec, "alltoall_options", e->uopt ? json_string(alg->name) : json_null());
    json_object_set_new(rec, "alltoallv_options", e->opt ? json_string(alg->name) : json_null());
    const char *note = alltoall_note(a, e);
    if (!note && !e->opt)
        note = alg->note; /* alltoall only: the alltoallv registry's message */
    json_object_set_new(rec, "collective_note", note ? json_string(note) : json_null());
    /* ranks holding planes of dims 0 and 1 in the slabs (the n1 pattern); not a pencil notion */
    json_object_set_new(rec, "senders", a->pencil ? json_null() : json_integer(w->senders));
    json_object_set_new(rec, "receivers", a->pencil ? json_null() : json_integer(w->receivers));
    json_object_set_new(rec, "grid", a->pencil ? json_pack("[i,i]", f->cfg.grid[0],
                                                           f->cfg.grid[1])
                                               : json_null());
    json_object_set_new(rec, "input", json_string(!a->pencil         ? "slab"
                                                  : a->pencil_input ? "pencils"
                                                                    : "brick"));
    json_object_set_new(rec, "brick", a->pencil && !a->pencil_input
                                          ? json_pack("[i,i,i]", f->cfg.brick[0],
                                                      f->cfg.brick[1], f->cfg.brick[2])
                                          : json_null());
    json_object_set_new(rec, "pattern_exact",
                        w->want_senders ? json_boolean(w->exact) : json_null());
    json_object_set_new(rec, "bytes_per_transpose", json_real(bytes));
    json_object_set_new(rec, "transposes_per_iteration", json_integer(2 * nt));
    json_object_set_new(rec, "seed", json_integer((json_int_t)a->seed));
    json_object_set_new(rec, "status", json_string(r->ok        ? "ok"
                                                   : r->skipped ? "skipped"
                                                                : "error"));
    json_object_set_new(rec, "verified", json_boolean(verified));
    json_object_set_new(rec, "tolerance", json_real(FFT_TOLERANCE));
    json_object_set_new(rec, "error_serial",
                        r->err_serial >= 0 ? json_real(r->err_serial) : json_null());
    json_object_set_new(rec, "error_roundtrip", json_real(r->err_roundtrip));
    json_object_set_new(rec, "identical_to_first", json_boolean(r->identical));
    if (a->plan) {
        json_object_set_new(rec, "plan", json_string(a->plan == 2 ? "measure" : "estimate"));
        json_object_set_new(rec, "plan_seconds", json_real(r->plan_seconds));
    }
    /* one entry per reshape: its communicator size, bytes, how many ranks' communicators
     * have equal blocks, the collective that ran (with every rank's calls of each),
     * all-to-all time (forward and backward together) and, with --plan, the two plans'
     * choices */
    json_t *stages = json_array();
    for (int t = 0; t < nt; t++) {
        int qmax = f->rs[t].q;
        MPI_Allreduce(MPI_IN_PLACE, &qmax, 1, MPI_INT, MPI_MAX, comm_app);
        json_t *s = json_pack("{s:s,s:s,s:s,s:i,s:f,s:i,s:s,s:{s:I,s:I},s:o}", "name",
                              f->rs[t].name, "from", f->st[t].name, "to", f->st[t + 1].name,
                              "comm_size", qmax, "bytes", f->rs[t].bytes, "uniform_ranks",
                              f->rs[t].uniform_ranks, "collective", collective_of(calls[t]),
                              "calls", "alltoall", (json_int_t)calls[t][1], "alltoallv",
                              (json_int_t)calls[t][0], "alltoallv",
                              minmax_json(r->stage_a2a[t], a));
        if (a->plan) {
            json_object_set_new(s, "plan_forward", json_string(r->choice[2 * t]));
            json_object_set_new(s, "plan_backward", json_string(r->choice[2 * t + 1]));
        }
        json_array_append_new(stages, s);
    }
    json_object_set_new(rec, "transposes", stages);
    if (!r->ok)
        json_object_set_new(rec, "error", json_string(r->error));
    json_t *t = json_object();
    json_object_set_new(t, "total", minmax_json(r->total, a));
    json_object_set_new(t, "transpose", minmax_json(r->transpose, a));
    json_object_set_new(t, "alltoallv", minmax_json(r->a2a, a));
    json_object_set_new(t, "fft", minmax_json(r->fft, a));
    json_object_set_new(rec, "time", t); /* seconds per round trip, over ranks */
    json_object_set_new(rec, "machine", tuna_run_meta_machine_json(run, run->rpn_env));
    json_object_set_new(rec, "run", tuna_run_meta_run_json(run));
    json_object_set_new(rec, "ranks_per_node_env", json_integer(run->rpn_env));
    return rec;
}

static void describe_plan(const pfft_plan *plan, char *out, size_t len)
{
    static const char *const how[] = {"forced", "estimate", "measure", "wisdom"};
    tuna_plan_info info;
    tuna_plan_get_info(plan->plan, &info);
    const tuna_algorithm_info *alg = tuna_algorithm_get(info.collective, info.algorithm);
    tuna_options o = {.collective = info.collective, .algorithm = info.algorithm};
    for (int p = 0; p < alg->nparams; p++) {
        o.set |= 1u << p;
        o.value[p] = info.params[p];
    }
    char opts[128] = "?";
    tuna_options_format(&o, opts, sizeof opts);
    snprintf(out, len, "%s (%s, %s)", opts, how[info.source & 3],
             plan->alltoall ? "alltoall" : "alltoallv");
}

/* --plan: every reshape of one algorithm, both directions, as plans (init collective, its
 * errors agreed); the time of all inits, max over ranks. Returns 0 or -1 (every rank). */
static int make_plans(pfft *f, const fft_entry *e, unsigned flags, pfft_plan *plans,
                      alg_result *r)
{
    MPI_Barrier(comm_app);
    double t0 = app_now();
    char err[400] = "";
    int rc = pfft_make_plans(f, e->opt, e->uopt, flags, plans, err, sizeof err);
    double t = app_now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm_app);
    r->plan_seconds = t;
    if (rc) {
        /* bounded: the name and the message fit r->error */
        snprintf(r->error, sizeof r->error, "%.100s: %.380s", e->label, err);
        return -1;
    }
    for (int k = 0; k < 2 * (f->nstages - 1); k++)
        describe_plan(&plans[k], r->choice[k], sizeof r->choice[k]);
    return 0;
}

/* One forward (fwd) or backward transform, its failure agreed over every rank. */
static int agreed(pfft *f, int fwd, const fft_entry *e, alg_result *r)
{
    int rc = fwd ? pfft_forward(f, e->opt, e->uopt, r->error, sizeof r->error)
                 : pfft_backward(f, e->opt, e->uopt, r->error, sizeof r->error);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm_app);
    if (rc && !r->error[0])
        snprintf(r->error, sizeof r->error, "failed on another rank");
    return rc;
}

static void reset_timers(pfft *f)
{
    f->t_transpose = f->t_fft = 0;
    for (int t = 0; t < f->nstages - 1; t++)
        f->rs[t].t_a2a = 0;
}

/* Moves the engine's call counts into r (the verification and every timed round trip). */
static void collect_calls(pfft *f, alg_result *r)
{
    for (int t = 0; t < f->nstages - 1; t++)
        for (int c = 0; c < 2; c++) {
            r->calls[t][c] += f->rs[t].calls[c];
            f->rs[t].calls[c] = 0;
        }
}

/* Runs every entry on one workload; returns 0 (all right), 1 (a wrong answer), 2 (error). */
static int run_workload(const fft_args *a, const tuna_run_meta *run, const workload *w,
                        const fft_entry *ent, int nent, FILE *json)
{
    char err[1024] = "";
    pfft f;
    pfft_config cfg = {.nd = w->nd,
                       .n = {w->n[0], w->n[1], w->n[2]},
                       .pencil = a->pencil,
                       .pencil_input = a->pencil_input,
                       .r2c = a->r2c,
                       .grid = {a->grid[0], a->grid[1]},
                       .charge = !a->no_charge};
    if (pfft_init(&f, &cfg, comm_app, err, sizeof err)) {
        if (me == 0)
            fprintf(stderr, "tuna-fft: %s: %s\n", w->name, err);
        return 2;
    }
    int nt = f.nstages - 1;
    /* a 2-D r2c slab halves dimension 1, which the second slab splits: its ranks with data */
    workload wr = *w;
    if (!a->pencil && f.cext[1] != w->n[1]) {
        wr.receivers = data_ranks(f.cext[1]);
        if (wr.want_senders)
            wr.exact = wr.senders == wr.want_senders && wr.receivers == wr.want_receivers;
    }
    w = &wr;
    size_t in_n, esz, out_n;
    void *in_buf = pfft_input(&f, &in_n, &esz);
    fftw_complex *out_buf = pfft_output(&f, &out_n);
    void *input = fftw_malloc((in_n ? in_n : 1) * esz);
    fftw_complex *first = fftw_malloc((out_n ? out_n : 1) * sizeof *first);
    alg_result *res = calloc((size_t)nent, sizeof *res);
    /* --plan: every entry's reshapes planned once, before any is run */
    pfft_plan *plans = calloc(2 * (size_t)nt * (size_t)nent, sizeof *plans);
    int ok = input && first && res && plans;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm_app);
    if (!ok) {
        if (me == 0)
            fprintf(stderr, "tuna-fft: %s: out of memory\n", w->name);
        fftw_free(input), fftw_free(first), free(res), free(plans);
        pfft_free(&f);
        return 2;
    }
    fill_input(&f, input, a->seed);
    long points = w->n[0] * w->n[1] * w->n[2];
    int do_serial = points <= a->serial_max;
    int status = 0;
    /* An alltoall-only algorithm runs where every reshape is uniform on every rank
     * (uniform_ranks is agreed, so every rank skips alike). */
    int nonuniform = -1;
    for (int t = nt - 1; t >= 0; t--)
        if (f.rs[t].uniform_ranks < P)
            nonuniform = t;
    for (int k = 0; k < nent; k++) {
        alg_result *r = &res[k];
        r->err_serial = -1;
        if (!ent[k].opt && nonuniform >= 0) {
            r->skipped = 1;
            snprintf(r->error, sizeof r->error,
                     "skipped: alltoall only, and reshape %s has unequal blocks",
                     f.rs[nonuniform].name);
            continue;
        }
        r->planned = !a->plan;
        if (a->plan && !make_plans(&f, &ent[k], a->plan == 2 ? TUNA_PLAN_MEASURE
                                                              : TUNA_PLAN_ESTIMATE,
                                   &plans[2 * nt * k], r))
            r->planned = 1;
        if (!r->planned)
            status = 2;
    }

    /* Verification run of each entry (also its warm-up). */
    int have_first = 0;
    for (int k = 0; k < nent; k++) {
        alg_result *r = &res[k];
        if (!r->planned)
            continue; /* skipped, or its init failed: r->error says why */
        f.plans = a->plan ? &plans[2 * nt * k] : NULL;
        memcpy(in_buf, input, in_n * esz);
        reset_timers(&f);
        int rc = agreed(&f, 1, &ent[k], r);
        if (!rc) {
            if (!have_first)
                memcpy(first, out_buf, out_n * sizeof *first);
            have_first = 1;
            int same = memcmp(first, out_buf, out_n * sizeof *first) == 0;
            MPI_Allreduce(&same, &r->identical, 1, MPI_INT, MPI_MIN, comm_app);
            if (do_serial)
                r->err_serial = serial_error(&f, input, out_buf);
            rc = agreed(&f, 0, &ent[k], r);
        }
        collect_calls(&f, r);
        if (rc) {
            status = 2;
            continue;
        }
        r->err_roundtrip = roundtrip_error(&f, input);
        r->ok = 1;
    }

    /* Timed round trips, entries interleaved so machine drift hits all alike. */
    for (int it = 0; it < a->iters; it++)
        for (int k = 0; k < nent; k++) {
            alg_result *r = &res[k];
            if (!r->ok)
                continue;
            memcpy(in_buf, input, in_n * esz);
            reset_timers(&f);
            f.plans = a->plan ? &plans[2 * nt * k] : NULL;
            MPI_Barrier(comm_app);
            double t0 = app_now();
            int rc = pfft_forward(&f, ent[k].opt, ent[k].uopt, r->error, sizeof r->error);
            if (pfft_backward(&f, ent[k].opt, ent[k].uopt, r->error, sizeof r->error))
                rc = -1;
            double t1 = app_now();
            collect_calls(&f, r);
            MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm_app);
            if (rc) {
                r->ok = 0;
                status = 2;
                continue;
            }
            r->total += t1 - t0;
            r->transpose += f.t_transpose;
            r->fft += f.t_fft;
            for (int t = 0; t < nt; t++) {
                r->a2a += f.rs[t].t_a2a;
                r->stage_a2a[t] += f.rs[t].t_a2a;
            }
        }
    f.plans = NULL;

    if (me == 0 && !a->quiet) {
        printf("\n== fft %s %s %s  %ldx%ld", w->name, a->pencil ? "pencil" : "slab",
               a->r2c ? "r2c" : "c2c", w->n[0], w->n[1]);
        if (w->nd == 3)
            printf("x%ld", w->n[2]);
        printf("  P=%d", P);
        if (a->pencil)
            printf("  grid %dx%d", f.cfg.grid[0], f.cfg.grid[1]);
        if (a->pencil && !a->pencil_input)
            printf("  brick %dx%dx%d", f.cfg.brick[0], f.cfg.brick[1], f.cfg.brick[2]);
        else if (a->pencil)
            printf("  input x-pencils");
        else
            printf("  senders %d receivers %d", w->senders, w->receivers);
        if (w->want_senders)
            printf(" (asked %d/%d%s)", w->want_senders, w->want_receivers,
                   w->exact ? ", exact" : ", NOT exact");
        double bytes = 0;
        for (int t = 0; t < nt; t++)
            bytes += f.rs[t].bytes / nt;
        printf("  %.0f B per transpose\nblocks:", bytes);
        for (int t = 0; t < nt; t++) {
            const pfft_reshape *rs = &f.rs[t];
            if (rs->uniform_ranks == P)
                printf(" %s equal", rs->name);
            else if (rs->uniform_ranks == 0)
                printf(" %s unequal", rs->name);
            else
                printf(" %s equal in the communicators of %d of %d ranks", rs->name,
                       rs->uniform_ranks, P);
            printf("%s", t + 1 < nt ? "," : "\n");
        }
        printf("%-28s %10s %10s %10s %10s %10s %10s %5s\n", "algorithm", "total_ms", "max_ms",
               "a2a_ms", "a2a_max", "err_serial", "err_rtrip", "ok");
    }
    for (int k = 0; k < nent; k++) {
        alg_result *r = &res[k];
        int verified = r->ok && r->identical && r->err_roundtrip <= FFT_TOLERANCE &&
                       (!do_serial || (r->err_serial >= 0 && r->err_serial <= FFT_TOLERANCE));
        if (r->ok && !verified && status == 0)
            status = 1;
        app_minmax tot = app_minmax_over_ranks(r->total / a->iters, comm_app);
        app_minmax a2a = app_minmax_over_ranks(r->a2a / a->iters, comm_app);
        app_minmax st[PFFT_MAX_STAGES - 1];
        long calls[PFFT_MAX_STAGES - 1][2];
        for (int t = 0; t < nt; t++) {
            st[t] = app_minmax_over_ranks(r->stage_a2a[t] / a->iters, comm_app);
            MPI_Allreduce(r->calls[t], calls[t], 2, MPI_LONG, MPI_SUM, comm_app);
        }
        if (me == 0 && !a->quiet) {
            if (r->skipped)
                printf("%-28s %s\n", ent[k].label, r->error);
            else if (!r->ok)
                printf("%-28s error: %s\n", ent[k].label, r->error);
            else {
                char es[32] = "-";
                if (r->err_serial >= 0)
                    snprintf(es, sizeof es, "%.1e", r->err_serial);
                printf("%-28s %10.3f %10.3f %10.3f %10.3f %10s %10.1e %5s\n", ent[k].label,
                       1e3 * tot.mean, 1e3 * tot.max, 1e3 * a2a.mean, 1e3 * a2a.max, es,
                       r->err_roundtrip, verified ? "yes" : "WRONG");
                /* which collective each reshape ran, and its time */
                printf("%-28s a2a max ms:", "");
                for (int t = 0; t < nt; t++)
                    printf(" %s %s %.3f%s", f.rs[t].name, collective_of(calls[t]),
                           1e3 * st[t].max, t + 1 < nt ? "," : "\n");
                if (a->plan) {
                    printf("%-28s plan init %.3f ms:", "", 1e3 * r->plan_seconds);
                    for (int t = 0; t < nt; t++)
                        printf(" %s %s / %s", f.rs[t].name, r->choice[2 * t],
                               r->choice[2 * t + 1]);
                    printf("\n");
                }
            }
        }
        json_t *rec = record_json(a, run, w, &f, &ent[k], r, calls, verified);
        if (me == 0 && json)
            app_json_line(json, rec);
        else
            json_decref(rec);
    }
    if (me == 0 && !a->quiet)
        fflush(stdout);
    for (int k = 0; k < 2 * nt * nent; k++)
        if (plans[k].plan)
            tuna_plan_free(&plans[k].plan);
    free(plans);
    fftw_free(input);
    fftw_free(first);
    free(res);
    pfft_free(&f);
    return status;
}

/* The rows of the run: each algorithm with alltoall on its uniform reshapes (where the alltoall
 * registry knows it and --alltoallv-only is off), and with --compare-alltoallv a copy of each
 * algorithm both registries know that keeps every reshape on alltoallv. Rank 0 says once
 * (not per reshape or workload) which algorithms cannot use one of the collectives. */
static int make_entries(const fft_args *a, const app_algorithm *algs, int nalg, fft_entry **out,
                        int *n, char *err, size_t errlen)
{
    fft_entry *ent = calloc(2 * (size_t)nalg, sizeof *ent);
    if (!ent) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int say = me == 0 && !a->quiet, k = 0;
    for (int i = 0; i < nalg; i++) {
        const app_algorithm *alg = &algs[i];
        if (a->v_only && !alg->has_v) {
            if (say)
                printf("tuna-fft: %s not run: --alltoallv-only, and %s\n", alg->name, alg->note);
            continue;
        }
        if (say && !alg->has_u && !a->v_only)
            printf("tuna-fft: %s: %s: its equal-block reshapes stay on tuna_alltoallv\n",
                   alg->name, alg->note);
        if (say && !alg->has_v)
            printf("tuna-fft: %s: %s: run only where every reshape has equal blocks\n",
                   alg->name, alg->note);
        for (int copy = 0; copy < 1 + (a->compare_v && alg->has_u && alg->has_v); copy++) {
            fft_entry *e = &ent[k++];
            e->alg = alg;
            e->v_only = a->v_only || copy;
            e->opt = alg->has_v ? &alg->opt : NULL;
            e->uopt = alg->has_u && !e->v_only ? &alg->uopt : NULL;
            snprintf(e->label, sizeof e->label, "%s%s", alg->name,
                     copy ? " [alltoallv]" : "");
        }
    }
    if (say && a->v_only)
        printf("tuna-fft: --alltoallv-only: every reshape on tuna_alltoallv\n");
    if (!k) {
        free(ent);
        snprintf(err, errlen, "--alltoallv-only: no algorithm of --algorithms has an alltoallv "
                              "form");
        return -1;
    }
    *out = ent;
    *n = k;
    return 0;
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
    if (app_parse_algorithms(a.algorithms, APP_ALG_UNIFORM, &algs, &nalg, err, sizeof err))
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
               "(relative max error); times per round trip (forward + backward), mean / max "
               "over ranks\n",
               run.library, P, a.iters, FFT_TOLERANCE);
    fft_entry *ent = NULL;
    int nent = 0;
    if (make_entries(&a, algs, nalg, &ent, &nent, err, sizeof err)) {
        if (json)
            fclose(json);
        free(algs);
        return fail_all(err);
    }
    for (int g = 0; g < a.ngrids; g++)
        if ((long)a.grids[g][0] * a.grids[g][1] != P) {
            if (json)
                fclose(json);
            free(ent);
            free(algs);
            snprintf(err, sizeof err, "--grid %dx%d: %ld ranks, the job has %d", a.grids[g][0],
                     a.grids[g][1], (long)a.grids[g][0] * a.grids[g][1], P);
            return fail_all(err);
        }
    int status = 0;
    for (int t = 0; t < a.ntransforms; t++)
        for (int g = 0; g < (a.ngrids ? a.ngrids : 1); g++)
            for (int i = 0; i < nw; i++) {
                a.r2c = a.transforms[t];
                a.grid[0] = a.ngrids ? a.grids[g][0] : 0;
                a.grid[1] = a.ngrids ? a.grids[g][1] : 0;
                int s = run_workload(&a, &run, &w[i], ent, nent, json);
                if (s > status)
                    status = s;
            }
    if (json)
        fclose(json);
    free(ent);
    free(algs);
    fftw_cleanup();
    MPI_Comm_free(&comm_app);
    MPI_Finalize();
    /* Every rank knows the status; only rank 0 returns it, so the launcher reports it. */
    return me == 0 ? status : 0;
}
