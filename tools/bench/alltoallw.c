/*
 * tuna-bench --collective alltoallw: the all-to-all of an FFT's pencil (slab) transpose, as
 * mpi4py-fft redistributes its arrays: a global N x N x N array of doubles, distributed along
 * axis 0 before and along axis 1 after. Rank r holds n0(r) x N x N before and N x n1(r) x N
 * after (n(r) = N/P, the first N mod P ranks one more, as mpi4py-fft splits); its block for
 * rank j is a subarray type of each side (MPI_Type_create_subarray), counts 1, displacements
 * 0: every block its own type, so tuna takes its packed way. Each configuration (an alltoallv
 * row of tuna's) is timed interleaved with the library's MPI_Alltoallw (PMPI, called directly)
 * so drift hits both alike; each iteration's time is the slowest rank's; the median over
 * iterations is reported, and tuna's time over the library's. The plan column times
 * tuna_alltoallw_init's starts (tuna_start + tuna_wait) interleaved the same way. The first
 * call of each configuration (blocking and plan) is verified byte for byte against the
 * library's.
 */
#define _POSIX_C_SOURCE 200809L
#include "alltoallw.h"
#include "specs.h"
#include "tuna.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct w_bench_args {
    long_list sizes;        /* the global edges N */
    char algorithms[1024];  /* comma-separated rows, or "all" */
    int iters, warmup;
    int plan;               /* time the persistent form too */
} w_bench_args;

static int me, P;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec -n P tuna-bench --collective alltoallw [options]\n"
            "The pencil transpose of a 3-D FFT (mpi4py-fft's MPI_Alltoallw with subarray\n"
            "types): tuna_alltoallw's rows against the MPI library's MPI_Alltoallw.\n\n"
            "  -s, --sizes SPEC        global array edges N (N x N x N doubles): 64 | 32,64 |\n"
            "                          16:128:x2 (default 32,64)\n"
            "  -a, --algorithms LIST   alltoallv rows by name (tuna-bench --list), or 'all'\n"
            "                          (default: every row but vendor, the baseline, and\n"
            "                          multipair-testany, which polls)\n"
            "  -n, --iters N           timed iterations per configuration (default 20)\n"
            "  -w, --warmup N          warm-up iterations (default 3; the first is verified)\n"
            "      --no-plan           do not time tuna_alltoallw_init's starts\n"
            "  -h, --help              this help\n");
}

static int parse(int argc, char **argv, w_bench_args *a, int *help, char *err, size_t errlen)
{
    static const struct option opts[] = {
        {"collective", required_argument, 0, 'c'}, {"sizes", required_argument, 0, 's'},
        {"algorithms", required_argument, 0, 'a'}, {"iters", required_argument, 0, 'n'},
        {"warmup", required_argument, 0, 'w'},     {"no-plan", no_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
    *a = (w_bench_args){.iters = 20, .warmup = 3, .plan = 1};
    snprintf(a->algorithms, sizeof a->algorithms, "all");
    const char *sizes = "32,64";
    *help = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":c:s:a:n:w:h", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'c':
            break; /* alltoallw: how we got here */
        case 's':
            sizes = optarg;
            break;
        case 'a':
            if (snprintf(a->algorithms, sizeof a->algorithms, "%s", optarg) >=
                (int)sizeof a->algorithms) {
                snprintf(err, errlen, "--algorithms: too long");
                return -1;
            }
            break;
        case 'n':
        case 'w': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < (c == 'n') || v > 1000000) {
                snprintf(err, errlen, "--%s '%s': expected a count", c == 'n' ? "iters" : "warmup",
                         optarg);
                return -1;
            }
            *(c == 'n' ? &a->iters : &a->warmup) = (int)v;
            break;
        }
        case 'P':
            a->plan = 0;
            break;
        case 'h':
            *help = 1;
            return 0;
        default:
            snprintf(err, errlen, "option '%s' is not one of --collective alltoallw's (see --help)",
                     argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (spec_sizes(sizes, &a->sizes, err, errlen) != 0)
        return -1;
    for (int i = 0; i < a->sizes.n; i++)
        if (a->sizes.v[i] < 1 || a->sizes.v[i] > 2048) {
            snprintf(err, errlen, "--sizes: N = %ld; expected 1 to 2048", a->sizes.v[i]);
            return -1;
        }
    return 0;
}

/* mpi4py-fft's split of n over P: N/P each, the first N mod P ranks one more. */
static int part(int n, int r)
{
    return n / P + (r < n % P);
}
static int first(int n, int r)
{
    return r * (n / P) + (r < n % P ? r : n % P);
}

/* The transpose at edge N: this rank's arrays and the subarray types of each peer. */
typedef struct pencil {
    int N;
    size_t in_elems, out_elems;
    double *in, *out, *want, *got;
    int *counts, *displs;           /* 1 and 0 for every peer */
    MPI_Datatype *st, *rt;
} pencil;

static void pencil_free(pencil *p)
{
    for (int j = 0; p->st && j < P; j++) {
        MPI_Type_free(&p->st[j]);
        MPI_Type_free(&p->rt[j]);
    }
    free(p->st);
    free(p->rt);
    free(p->counts);
    free(p->displs);
    free(p->in);
    free(p->out);
    free(p->want);
    free(p->got);
}

static int pencil_make(int N, pencil *p)
{
    *p = (pencil){.N = N};
    const int n0 = part(N, me), n1 = part(N, me);
    p->in_elems = (size_t)n0 * (size_t)N * (size_t)N;
    p->out_elems = (size_t)N * (size_t)n1 * (size_t)N;
    p->in = malloc(sizeof(double) * (p->in_elems + 1));
    p->out = malloc(sizeof(double) * (p->out_elems + 1));
    p->want = malloc(sizeof(double) * (p->out_elems + 1));
    p->got = malloc(sizeof(double) * (p->out_elems + 1));
    p->counts = malloc(sizeof(int) * (size_t)P);
    p->displs = malloc(sizeof(int) * (size_t)P);
    p->st = malloc(sizeof(MPI_Datatype) * (size_t)P);
    p->rt = malloc(sizeof(MPI_Datatype) * (size_t)P);
    if (!p->in || !p->out || !p->want || !p->got || !p->counts || !p->displs || !p->st || !p->rt)
        return -1;
    const int g0 = first(N, me);
    for (size_t i = 0; i < p->in_elems; i++) /* the global index: every element distinct */
        p->in[i] = (double)((size_t)g0 * (size_t)N * (size_t)N + i);
    for (int j = 0; j < P; j++) {
        p->counts[j] = 1;
        p->displs[j] = 0;
        /* send: my rows (axis 0), peer j's columns of axis 1; receive: j's rows, my columns */
        const int ssz[3] = {n0, N, N}, ssub[3] = {n0, part(N, j), N}, sst[3] = {0, first(N, j), 0};
        const int rsz[3] = {N, n1, N}, rsub[3] = {part(N, j), n1, N}, rst[3] = {first(N, j), 0, 0};
        MPI_Type_create_subarray(3, ssz, ssub, sst, MPI_ORDER_C, MPI_DOUBLE, &p->st[j]);
        MPI_Type_create_subarray(3, rsz, rsub, rst, MPI_ORDER_C, MPI_DOUBLE, &p->rt[j]);
        MPI_Type_commit(&p->st[j]);
        MPI_Type_commit(&p->rt[j]);
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One timed call: the slowest rank's seconds. kind 0: the library's MPI_Alltoallw, 1: tuna's,
 * 2: a start of the plan. */
static int timed(int kind, pencil *p, const tuna_options *opt, tuna_plan plan, double *secs)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    int rc;
    if (kind == 0)
        rc = PMPI_Alltoallw(p->in, p->counts, p->displs, p->st, p->want, p->counts, p->displs,
                            p->rt, MPI_COMM_WORLD);
    else if (kind == 1)
        rc = tuna_alltoallw(p->in, p->counts, p->displs, p->st, p->got, p->counts, p->displs,
                            p->rt, MPI_COMM_WORLD, opt);
    else if ((rc = tuna_start(plan)) == MPI_SUCCESS)
        rc = tuna_wait(plan);
    t = MPI_Wtime() - t;
    MPI_Allreduce(&t, secs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return rc;
}

/* Whether every rank's result of the last tuna call equals the library's. */
static int verified(const pencil *p)
{
    int ok = !memcmp(p->want, p->got, sizeof(double) * p->out_elems);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return ok;
}

/* One row at edge N: blocking and (a->plan) persistent, each interleaved with the library's.
 * Prints the row; 0, or 1 after a failure (reported). */
static int run_row(const w_bench_args *a, pencil *p, const char *name, const tuna_options *opt)
{
    const int n = a->iters;
    double *tv = malloc(sizeof(double) * (size_t)n * 4), *vv = tv + n, *pv = tv + 2 * n,
           *pvv = tv + 3 * n;
    tuna_plan plan = NULL;
    int rc = MPI_SUCCESS;
    if (!tv)
        return 1;
    for (int form = 1; form <= (a->plan ? 2 : 1) && rc == MPI_SUCCESS; form++) {
        if (form == 2) {
            memset(p->got, 0, sizeof(double) * p->out_elems);
            rc = tuna_alltoallw_init(p->in, p->counts, p->displs, p->st, p->got, p->counts,
                                     p->displs, p->rt, MPI_COMM_WORLD, opt, TUNA_PLAN_ESTIMATE,
                                     &plan);
            if (rc != MPI_SUCCESS)
                break;
        }
        double *t = form == 1 ? tv : pv, *v = form == 1 ? vv : pvv, s;
        for (int i = 0; i < a->warmup + n && rc == MPI_SUCCESS; i++) {
            timed(0, p, NULL, NULL, &s);
            if (i >= a->warmup)
                v[i - a->warmup] = s;
            rc = timed(form, p, opt, plan, &s);
            if (i >= a->warmup)
                t[i - a->warmup] = s;
            if (i == 0 && rc == MPI_SUCCESS && !verified(p)) {
                if (me == 0)
                    fprintf(stderr, "tuna-bench: %s%s at N = %d differs from MPI_Alltoallw\n",
                            name, form == 2 ? " (plan)" : "", p->N);
                rc = MPI_ERR_OTHER;
            }
        }
    }
    if (plan)
        tuna_plan_free(&plan);
    if (rc != MPI_SUCCESS) {
        if (me == 0)
            fprintf(stderr, "tuna-bench: %s at N = %d failed: %s\n", name, p->N,
                    tuna_error_string(rc));
        free(tv);
        return 1;
    }
    if (me == 0) {
        const double tb = median(tv, n), vb = median(vv, n);
        printf("%-22s %12.1f %12.1f %8.3f", name, tb * 1e6, vb * 1e6, tb / vb);
        if (a->plan) {
            const double tp = median(pv, n), vp = median(pvv, n);
            printf(" %12.1f %12.1f %8.3f", tp * 1e6, vp * 1e6, tp / vp);
        }
        printf("\n");
    }
    free(tv);
    return 0;
}

/* Whether row `name` runs under --algorithms `list` (every row for "all" but the polling
 * multipair-testany, slow when oversubscribed, and vendor, the library's own). */
static int selected(const char *list, const char *name)
{
    if (!strcmp(list, "all"))
        return strcmp(name, "multipair-testany") && strcmp(name, "vendor");
    char l[1100], k[80];
    snprintf(l, sizeof l, ",%s,", list);
    snprintf(k, sizeof k, ",%s,", name);
    return strstr(l, k) != NULL;
}

/* Every name of --algorithms is an alltoallv row (else the message in err). */
static int rows_known(const char *list, char *err, size_t errlen)
{
    if (!strcmp(list, "all"))
        return 1;
    char l[1024];
    snprintf(l, sizeof l, "%s", list);
    for (char *save = NULL, *t = strtok_r(l, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (tuna_algorithm_find(TUNA_ALLTOALLV, t) < 0) {
            snprintf(err, errlen, "--algorithms: '%s' is not an alltoallv row (tuna-bench --list)",
                     t);
            return 0;
        }
    return 1;
}

int bench_alltoallw_asked(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--collective=alltoallw") || !strcmp(argv[i], "-calltoallw"))
            return 1;
        if ((!strcmp(argv[i], "--collective") || !strcmp(argv[i], "-c")) && i + 1 < argc &&
            !strcmp(argv[i + 1], "alltoallw"))
            return 1;
    }
    return 0;
}

int bench_alltoallw_main(int argc, char **argv)
{
    w_bench_args a;
    int help = 0;
    char err[512] = "";
    int prc = parse(argc, argv, &a, &help, err, sizeof err);
    if (!prc && !help && !rows_known(a.algorithms, err, sizeof err))
        prc = -1;
    if (help || prc) {
        const char *r = getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK")
                                                       : getenv("PMI_RANK");
        if (!r || !strcmp(r, "0")) {
            if (help)
                usage(stdout);
            else
                fprintf(stderr, "tuna-bench: %s\n", err);
        }
        long_list_free(&a.sizes);
        return help ? 0 : 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int failed = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    MPI_Get_library_version(version, &vlen);
    version[strcspn(version, "\n")] = 0;
    if (me == 0)
        printf("# tuna-bench alltoallw: pencil transpose, P=%d, %d iterations (median of the "
               "slowest rank), %s\n", P, a.iters, version);
    for (int s = 0; s < a.sizes.n && !failed; s++) {
        pencil p;
        int ok = pencil_make((int)a.sizes.v[s], &p) == 0;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!ok) {
            if (me == 0)
                fprintf(stderr, "tuna-bench: no memory for N = %ld\n", a.sizes.v[s]);
            pencil_free(&p);
            failed = 1;
            break;
        }
        if (me == 0) {
            printf("\n== N=%d (%d x %d x %d doubles; rank 0 sends %zu bytes)\n", p.N, p.N, p.N,
                   p.N, p.in_elems * sizeof(double));
            printf("%-22s %12s %12s %8s", "row", "tuna_us", "library_us", "ratio");
            if (a.plan)
                printf(" %12s %12s %8s", "plan_us", "library_us", "ratio");
            printf("\n");
        }
        const int nrows = tuna_algorithm_count(TUNA_ALLTOALLV);
        for (int r = 0; r < nrows && !failed; r++) {
            const char *name = tuna_algorithm_get(TUNA_ALLTOALLV, r)->name;
            tuna_options o;
            if (!selected(a.algorithms, name) ||
                tuna_options_parse(name, TUNA_ALLTOALLV, &o) != MPI_SUCCESS)
                continue;
            failed = run_row(&a, &p, name, &o);
        }
        pencil_free(&p);
    }
    long_list_free(&a.sizes);
    MPI_Finalize();
    return failed;
}
