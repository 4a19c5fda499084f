/*
 * tuna-bench: non-uniform all-to-all benchmark (and, with --collective, of the
 * allgather and allreduce algorithms on equal contributions).
 *
 * One MPI job sweeps algorithms x parameters (taken from libtuna's table, so
 * new algorithms appear without changes here) x size distributions x sizes x
 * logical ranks per node. Every configuration is timed interleaved with the
 * vendor's collective (PMPI_Alltoallv etc., called directly) so machine drift
 * hits both alike, and its first call is verified byte for byte against it.
 * --no-vendor and --no-verify drop either (large simulated runs, docs/simulation.md).
 * Output: a table on rank 0's stdout, progress on stderr, JSON lines (--json).
 */
/* Warm-up calls an auto configuration gets at least (when -w > 0): one class's learning, all
 * its phases (docs/tuning.md, "Learning"), and some. A phase is at most TUNA_LEARN_ROUNDS (3)
 * rounds of one untimed call and at most TUNA_LEARN_MAX (6) timed ones (src/select/
 * tuna_select.h; the default budget of 40 exploring calls does not bind below that), and
 * there are at most 1 + TUNA_LEARN_CLIMBS (3) phases, so the class settles by its call
 * 4 x 3 x (1 + 6) = 84 (tests/test_learn.c checks that bound). */
#define BENCH_LEARN_WARMUP 90
#define _POSIX_C_SOURCE 200809L
#include "alltoallw.h"
#include "cli.h"
#include "distributions.h"
#include "overlap.h"
#include "run_meta.h"
#include "specs.h"
#include "tuna.h"

#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define MAX_PARAM_SPECS 16
#define MAX_DISTS 32

/* ------------------------------------------------------------ command line */

typedef struct param_spec {
    char name[64]; /* parameter key, or "*" for every parameter */
    char spec[256];
} param_spec;

typedef struct type_choice {
    const char *name;
    MPI_Datatype type;
    int size; /* bytes, known without MPI (--facts runs without MPI_Init) */
} type_choice;

typedef struct bench_args {
    tuna_collective coll; /* alltoallv (default), allgather or allreduce */
    char algorithms[4096];
    param_spec params[MAX_PARAM_SPECS];
    int nparams;
    char sizes[256];
    char rpn[256]; /* "" = leave TUNA_RANKS_PER_NODE as it is */
    bench_dist dists[MAX_DISTS];
    int ndists;
    const char *type_name;
    MPI_Datatype type;
    int type_size;
    int type_given;
    int unit_elements;
    int iters, warmup;
    unsigned long long seed;
    const char *json_path;
    int json_append;
    const char *run_name;
    int phases;      /* record the phase breakdown (in phase_iters separate calls) */
    int phase_iters; /* untimed calls with tuna_stats on after the timed ones (-1: iters) */
    int vendor, verify; /* time the vendor interleaved; verify the first call */
    int plan;           /* --plan: 0 none, 1 estimate, 2 measure (tuna_*_init, start/wait) */
    int quiet;
    int list, help;
    int facts_procs; /* --facts P: print the data sets' facts for P ranks and exit (0: off) */
    int facts_matrix; /* --matrix: --facts also prints the P x P block sizes in bytes */
    int nonblocking;  /* --nonblocking: overlap of the nonblocking form (overlap.h) */
    double poll;      /* --poll: tests every this fraction of the pure time (0: none) */
    int until_learned; /* --until-learned: auto's warm-up ends once its class has learned */
    /* neighbor_alltoallv: --stencil D makes dists[i] (kind uniform, sized by --sizes) a
     * periodic D-dimensional grid's face exchange; 0 for the --dist entries (spmv halos) */
    int stencil_dim[MAX_DISTS];
} bench_args;

static int me = 0, P = 1;
/* node_of[j]: 1 if rank j shares this rank's physical node (MPI_COMM_TYPE_SHARED), else 0;
 * node_comm: that node's ranks. For the off-node byte totals that `tuna sim`'s lower bound
 * divides by a node's injection bandwidth. */
static int *node_of = NULL;
static MPI_Comm node_comm = MPI_COMM_NULL;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec -n P tuna-bench [options]\n"
            "Benchmark libtuna's MPI_Alltoallv (or MPI_Allgather / MPI_Allreduce / MPI_Alltoall)\n"
            "algorithms against the MPI library's own.\n\n"
            "Sweep:\n"
            "  -c, --collective C      alltoallv (default) | allgather | allreduce | alltoall\n"
            "                          | neighbor_alltoallv | alltoallw; for allgather,\n"
            "                          allreduce and alltoall S is each rank's contribution\n"
            "                          (allgather and alltoall: a block; allreduce: the vector,\n"
            "                          MPI_SUM, default type double) and --dist does not apply;\n"
            "                          alltoallw: an FFT's pencil transpose with options of its\n"
            "                          own (tuna-bench --collective alltoallw --help);\n"
            "                          neighbor_alltoallv runs on a distributed-graph\n"
            "                          communicator from --dist spmv:FILE.mtx (the halo of\n"
            "                          y = A x, 1-D row blocks) or --stencil, and times every\n"
            "                          configuration blocking and persistent (init once)\n"
            "      --stencil D         (repeatable; neighbor_alltoallv) 2d | 3d: a periodic\n"
            "                          grid of P ranks (MPI_Dims_create), S bytes to each face\n"
            "                          neighbor (Cartesian communicator where every dimension\n"
            "                          is at least 3, else a distributed graph)\n"
            "  -a, --algorithms LIST   comma-separated names from --list, or 'all' (default);\n"
            "                          'alg:k=v,k2=v2' is one configuration with those values\n"
            "      --radix SPEC        values of the 'radix' parameter (same as --param radix=SPEC)\n"
            "      --block SPEC        values of the 'block' parameter\n"
            "      --param NAME=SPEC   values of any parameter; NAME '*' = every parameter\n"
            "                          SPEC: default | all | powers | 2:P | 2:64:x2 | 1:9:+2 | 2,4,P\n"
            "                          (P = ranks, sqrtP = ceil(sqrt(P)); below the minimum: an\n"
            "                          error; above P where the range ends at P: clamped)\n"
            "  -s, --sizes SPEC        maximum block size S: 1024 | 16,64,1K | 16:16384:x2\n"
            "                          (default 16:16384:x4)\n"
            "  -d, --dist DIST         (repeatable) uniform (default) | normal[:mean=F,sd=F]\n"
            "                          | powerlaw[:exponent=A] | sparse[:zero=F] | fft-n1\n"
            "                          | fft-n2[:short=F] | matrix:FILE[,scale=F] | spmv:FILE.mtx\n"
            "      --scale F           multiply counts read from files by F (default 1) unless\n"
            "                          the distribution gives its own scale=F\n"
            "      --ranks-per-node L  list of logical node sizes Q (TUNA_RANKS_PER_NODE);\n"
            "                          0 = the real nodes\n"
            "Data:\n"
            "  -t, --type T            byte (default) | char | int | float | double | int64\n"
            "      --unit U            sizes in 'bytes' (default) or 'elements' of the type\n"
            "      --seed N            seed of the distributions and payload (default 1)\n"
            "Timing:\n"
            "  -n, --iters N           timed iterations per configuration (default 20)\n"
            "  -w, --warmup N          warm-up iterations (default 3; the first call is verified)\n"
            "      --phase-iters N     calls after the timed ones that record the phase\n"
            "                          breakdown (tuna_stats on, not timed; default: --iters);\n"
            "                          the timed calls always run with recording off\n"
            "      --no-phases         no phase breakdown (same as --phase-iters 0)\n"
            "      --until-learned     auto's learning warm-up (up to 90 calls) ends at the first\n"
            "                          call that runs the learned winner on every rank (warm-up\n"
            "                          with tuna_stats on: for simulations, where CPU time is\n"
            "                          not charged, to spare the calls after learning)\n"
            "      --plan estimate|measure\n"
            "                          time persistent plans (tuna_*_init once per configuration,\n"
            "                          then tuna_start + tuna_wait per iteration); the plan's\n"
            "                          init time (max over ranks) is reported apart\n"
            "      --nonblocking       overlap of the nonblocking form (tuna_ialltoallv, ...), as\n"
            "                          the OSU benchmarks measure it: pure time (start, wait),\n"
            "                          then start, computation as long as the pure time, wait;\n"
            "                          overlap = 100 (1 - (total - computation) / pure). The\n"
            "                          library's own nonblocking call is the 'vendor' row\n"
            "      --poll F            with --nonblocking: test the operation every F of the\n"
            "                          pure time during the computation (default 0.05; 0: never;\n"
            "                          TUNA_PROGRESS=thread progresses it without tests)\n"
            "      --no-vendor         do not time the vendor MPI_Alltoallv (JSON: vendor null)\n"
            "      --no-verify         do not verify (results unverified; under SMPI the payload\n"
            "                          buffers are SMPI_SHARED_MALLOC'ed: memory flat in P)\n"
            "Output:\n"
            "  -j, --json FILE         JSON lines, one per configuration (truncates FILE)\n"
            "      --append            append to the --json file instead\n"
            "      --run-name NAME     name of the run in the JSON and figure titles\n"
            "  -q, --quiet             no progress on stderr\n"
            "  -l, --list              list algorithms and parameters, then exit\n"
            "      --facts P           print each data set's global facts for P ranks on\n"
            "                          nodes of --ranks-per-node consecutive ranks (default: one\n"
            "                          node) as JSON lines, computed in this one process without\n"
            "                          MPI (no launcher), then exit: `tuna sim bound`'s inputs\n"
            "      --matrix            with --facts: each line also holds \"matrix\", the P x P\n"
            "                          block sizes in bytes (row i: what rank i sends to each j)\n"
            "  -h, --help              this help\n");
}

static const type_choice types[] = {
    {"byte", MPI_BYTE, 1},
    {"char", MPI_CHAR, 1},
    {"int", MPI_INT, sizeof(int)},
    {"float", MPI_FLOAT, sizeof(float)},
    {"double", MPI_DOUBLE, sizeof(double)},
    {"int64", MPI_INT64_T, sizeof(int64_t)},
};

static int copy_str(char *dst, size_t cap, const char *src, const char *what, char *err,
                    size_t errlen)
{
    if (strlen(src) >= cap) {
        snprintf(err, errlen, "%s too long", what);
        return -1;
    }
    strcpy(dst, src);
    return 0;
}

/* Parse argv into a; returns 0 or -1 with a message. MPI is not needed. */
static int parse_args(int argc, char **argv, bench_args *a, char *err, size_t errlen)
{
    enum { O_RADIX = 256, O_BLOCK, O_PARAM, O_SCALE, O_RPN, O_UNIT, O_SEED, O_NOPHASES,
           O_APPEND, O_RUNNAME, O_NOVENDOR, O_NOVERIFY, O_PLAN, O_FACTS, O_MATRIX,
           O_PHASEITERS, O_NONBLOCKING, O_POLL, O_UNTILLEARNED, O_STENCIL };
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'},
        {"algorithms", required_argument, 0, 'a'},
        {"radix", required_argument, 0, O_RADIX},
        {"block", required_argument, 0, O_BLOCK},
        {"param", required_argument, 0, O_PARAM},
        {"sizes", required_argument, 0, 's'},
        {"dist", required_argument, 0, 'd'},
        {"scale", required_argument, 0, O_SCALE},
        {"ranks-per-node", required_argument, 0, O_RPN},
        {"type", required_argument, 0, 't'},
        {"unit", required_argument, 0, O_UNIT},
        {"seed", required_argument, 0, O_SEED},
        {"iters", required_argument, 0, 'n'},
        {"warmup", required_argument, 0, 'w'},
        {"no-phases", no_argument, 0, O_NOPHASES},
        {"until-learned", no_argument, 0, O_UNTILLEARNED},
        {"phase-iters", required_argument, 0, O_PHASEITERS},
        {"no-vendor", no_argument, 0, O_NOVENDOR},
        {"no-verify", no_argument, 0, O_NOVERIFY},
        {"plan", required_argument, 0, O_PLAN},
        {"nonblocking", no_argument, 0, O_NONBLOCKING},
        {"poll", required_argument, 0, O_POLL},
        {"json", required_argument, 0, 'j'},
        {"append", no_argument, 0, O_APPEND},
        {"run-name", required_argument, 0, O_RUNNAME},
        {"quiet", no_argument, 0, 'q'},
        {"list", no_argument, 0, 'l'},
        {"help", no_argument, 0, 'h'},
        {"facts", required_argument, 0, O_FACTS},
        {"matrix", no_argument, 0, O_MATRIX},
        {"stencil", required_argument, 0, O_STENCIL},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    strcpy(a->algorithms, "all");
    strcpy(a->sizes, "16:16384:x4");
    a->type_name = "byte";
    a->type = MPI_BYTE;
    a->type_size = 1;
    a->iters = 20;
    a->warmup = 3;
    a->seed = 1;
    a->phases = 1;
    a->phase_iters = -1;
    a->vendor = 1;
    a->verify = 1;
    a->poll = 0.05;
    double scale = 0;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":c:a:s:d:t:n:w:j:qlh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': {
            int coll = tuna_collective_find(optarg);
            if (coll < 0) {
                char names[128] = "";
                for (int i = 0; i < TUNA_COLLECTIVE_COUNT; i++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                             i == 0 ? "" : ", ", tuna_collective_name((tuna_collective)i));
                /* alltoallw's pencil transpose (alltoallw.c) takes its own path */
                snprintf(names + strlen(names), sizeof names - strlen(names), " or alltoallw");
                snprintf(err, errlen, "--collective '%s': expected %s", optarg, names);
                return -1;
            }
            a->coll = (tuna_collective)coll;
            break;
        }
        case 'a':
            if (copy_str(a->algorithms, sizeof a->algorithms, optarg, "--algorithms", err,
                         errlen))
                return -1;
            break;
        case O_RADIX:
        case O_BLOCK:
        case O_PARAM: {
            if (a->nparams == MAX_PARAM_SPECS) {
                snprintf(err, errlen, "too many parameter specifications");
                return -1;
            }
            param_spec *ps = &a->params[a->nparams++];
            const char *spec = optarg;
            if (c == O_PARAM) {
                const char *eq = strchr(optarg, '=');
                if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof ps->name) {
                    snprintf(err, errlen, "--param '%s': expected NAME=SPEC", optarg);
                    return -1;
                }
                memcpy(ps->name, optarg, (size_t)(eq - optarg));
                ps->name[eq - optarg] = '\0';
                spec = eq + 1;
            } else
                strcpy(ps->name, c == O_RADIX ? "radix" : "block");
            if (copy_str(ps->spec, sizeof ps->spec, spec, "parameter spec", err, errlen))
                return -1;
            break;
        }
        case 's':
            if (copy_str(a->sizes, sizeof a->sizes, optarg, "--sizes", err, errlen))
                return -1;
            break;
        case 'd':
            if (a->ndists == MAX_DISTS) {
                snprintf(err, errlen, "too many --dist options");
                return -1;
            }
            if (bench_dist_parse(optarg, &a->dists[a->ndists], err, errlen))
                return -1;
            a->ndists++;
            break;
        case O_SCALE: {
            char *end;
            scale = strtod(optarg, &end);
            if (end == optarg || *end || !(scale > 0) || !isfinite(scale)) {
                snprintf(err, errlen, "--scale '%s': expected a positive number", optarg);
                return -1;
            }
            break;
        }
        case O_RPN:
            if (copy_str(a->rpn, sizeof a->rpn, optarg, "--ranks-per-node", err, errlen))
                return -1;
            break;
        case 't': {
            int found = -1;
            for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
                if (strcmp(types[i].name, optarg) == 0)
                    found = (int)i;
            if (found < 0) {
                snprintf(err, errlen,
                         "--type '%s': expected byte, char, int, float, double or int64", optarg);
                return -1;
            }
            a->type_name = types[found].name;
            a->type = types[found].type;
            a->type_size = types[found].size;
            a->type_given = 1;
            break;
        }
        case O_UNIT:
            if (strcmp(optarg, "bytes") && strcmp(optarg, "elements")) {
                snprintf(err, errlen, "--unit '%s': expected bytes or elements", optarg);
                return -1;
            }
            a->unit_elements = strcmp(optarg, "elements") == 0;
            break;
        case O_SEED:
            if (cli_seed(optarg, &a->seed, err, errlen))
                return -1;
            break;
        case 'n':
            if (cli_int("--iters", optarg, 1, INT_MAX, &a->iters, err, errlen))
                return -1;
            break;
        case 'w':
            if (cli_int("--warmup", optarg, 0, INT_MAX, &a->warmup, err, errlen))
                return -1;
            break;
        case O_NOPHASES:
            a->phases = 0;
            break;
        case O_UNTILLEARNED:
            a->until_learned = 1;
            break;
        case O_PHASEITERS:
            if (cli_int("--phase-iters", optarg, 0, INT_MAX, &a->phase_iters, err, errlen))
                return -1;
            break;
        case O_NOVENDOR:
            a->vendor = 0;
            break;
        case O_PLAN:
            if (strcmp(optarg, "estimate") == 0)
                a->plan = 1;
            else if (strcmp(optarg, "measure") == 0)
                a->plan = 2;
            else {
                snprintf(err, errlen, "--plan '%s': expected estimate or measure", optarg);
                return -1;
            }
            break;
        case O_NOVERIFY:
            a->verify = 0;
            break;
        case O_NONBLOCKING:
            a->nonblocking = 1;
            break;
        case O_POLL: {
            char *end;
            a->poll = strtod(optarg, &end);
            if (*end || !(a->poll >= 0 && a->poll <= 1)) {
                snprintf(err, errlen, "--poll '%s': expected a fraction in [0, 1]", optarg);
                return -1;
            }
            break;
        }
        case 'j':
            a->json_path = optarg;
            break;
        case O_APPEND:
            a->json_append = 1;
            break;
        case O_RUNNAME:
            a->run_name = optarg;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'l':
            a->list = 1;
            break;
        case O_FACTS:
            if (cli_int("--facts", optarg, 1, 1 << 20, &a->facts_procs, err, errlen))
                return -1;
            break;
        case O_MATRIX:
            a->facts_matrix = 1;
            break;
        case O_STENCIL: {
            int dim = strcmp(optarg, "2d") == 0 ? 2 : strcmp(optarg, "3d") == 0 ? 3 : 0;
            if (!dim) {
                snprintf(err, errlen, "--stencil '%s': expected 2d or 3d", optarg);
                return -1;
            }
            if (a->ndists == MAX_DISTS) {
                snprintf(err, errlen, "too many --dist and --stencil options");
                return -1;
            }
            bench_dist *d = &a->dists[a->ndists];
            bench_dist_parse("uniform", d, err, errlen);
            snprintf(d->spec, sizeof d->spec, "stencil:%s", optarg);
            a->stencil_dim[a->ndists++] = dim;
            break;
        }
        case 'h':
            a->help = 1;
            break;
        default:
            return cli_getopt_error(c, argv, err, errlen);
        }
    }
    if (cli_no_positional(argc, argv, err, errlen))
        return -1;
    if (a->facts_matrix && !a->facts_procs) {
        snprintf(err, errlen, "--matrix goes with --facts P");
        return -1;
    }
    if (a->nonblocking && a->plan) {
        snprintf(err, errlen, "--nonblocking and --plan: one at a time");
        return -1;
    }
    if (a->nonblocking) { /* the library's own nonblocking call is the 'vendor' row */
        a->vendor = 0;
        a->phases = 0;
    }
    if (a->facts_procs && a->coll != TUNA_ALLTOALLV) {
        snprintf(err, errlen, "--facts describes alltoallv data sets only");
        return -1;
    }
    int nstencil = 0;
    for (int i = 0; i < a->ndists; i++)
        nstencil += a->stencil_dim[i] > 0;
    if (nstencil && a->coll != TUNA_NEIGHBOR_ALLTOALLV) {
        snprintf(err, errlen, "--stencil goes with --collective neighbor_alltoallv");
        return -1;
    }
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV) {
        for (int i = 0; i < a->ndists; i++)
            if (!a->stencil_dim[i] && a->dists[i].kind != DIST_SPMV) {
                snprintf(err, errlen, "--collective neighbor_alltoallv: --dist spmv:FILE.mtx "
                                      "(a halo exchange) or --stencil 2d|3d, not '%s'",
                         a->dists[i].spec);
                return -1;
            }
        if (a->ndists == 0) {
            snprintf(err, errlen, "--collective neighbor_alltoallv needs --dist spmv:FILE.mtx "
                                  "or --stencil 2d|3d");
            return -1;
        }
    } else if (a->coll != TUNA_ALLTOALLV) {
        /* Every rank contributes the same count (MPI's rule for these collectives). */
        if (a->ndists > 0 || scale > 0) {
            snprintf(err, errlen, "--dist and --scale apply to --collective alltoallv only");
            return -1;
        }
        if (a->coll == TUNA_ALLREDUCE && !a->type_given) {
            a->type_name = "double";
            a->type = MPI_DOUBLE;
            a->type_size = sizeof(double);
        }
        if (a->coll == TUNA_ALLREDUCE && (a->type == MPI_BYTE || a->type == MPI_CHAR)) {
            snprintf(err, errlen, "--collective allreduce sums numbers: --type int, float, "
                                  "double or int64");
            return -1;
        }
    }
    if (a->ndists == 0)
        bench_dist_parse("uniform", &a->dists[a->ndists++], err, errlen);
    /* --no-phases wins over --phase-iters; 0 phase iterations is --no-phases. */
    if (!a->phases)
        a->phase_iters = 0;
    else if (a->phase_iters < 0)
        a->phase_iters = a->iters;
    a->phases = a->phase_iters > 0;
    if (scale > 0)
        for (int i = 0; i < a->ndists; i++)
            if ((a->dists[i].kind == DIST_MATRIX || a->dists[i].kind == DIST_SPMV) &&
                !a->dists[i].scale_given) {
                bench_dist *d = &a->dists[i];
                char spec[sizeof d->spec];
                d->scale = scale;
                snprintf(spec, sizeof spec, "%s:file=%s,scale=%g", bench_dist_name(d->kind),
                         d->path, scale);
                memcpy(d->spec, spec, sizeof spec);
            }
    long_list sizes = {0};
    int rc = spec_sizes(a->sizes, &sizes, err, errlen);
    long_list_free(&sizes);
    return rc;
}

/* ------------------------------------------------------------ --list */

static void param_value_text(long v, char *buf, size_t len)
{
    if (v == TUNA_PARAM_P)
        snprintf(buf, len, "P");
    else if (v == TUNA_PARAM_SQRTP)
        snprintf(buf, len, "sqrtP");
    else
        snprintf(buf, len, "%ld", v);
}

static void print_list(tuna_collective coll)
{
    int n = tuna_algorithm_count(coll);
    printf("%s algorithms (%d):\n", tuna_collective_name(coll), n);
    for (int i = 0; i < n; i++) {
        const tuna_algorithm_info *info = tuna_algorithm_get(coll, i);
        printf("  %-20s %s\n", info->name, info->description);
        for (int p = 0; p < info->nparams; p++) {
            const tuna_param_info *pi = &info->params[p];
            char lo[32], hi[32], def[32];
            param_value_text(pi->min, lo, sizeof lo);
            param_value_text(pi->max, hi, sizeof hi);
            param_value_text(pi->defval, def, sizeof def);
            printf("  %-20s   %s in [%s, %s], default %s: %s\n", "", pi->name, lo, hi, def,
                   pi->description);
        }
    }
}

/* ------------------------------------------------------------ configurations */

typedef struct config {
    tuna_options opt;
    char name[256]; /* canonical option string (" [persistent]" added: neighbor's plans) */
    int plan;       /* 0: blocking calls; 1 estimate, 2 measure: a plan (tuna_*_init), started */
} config;

static long resolve(long v)
{
    if (v == TUNA_PARAM_P)
        return P;
    if (v == TUNA_PARAM_SQRTP)
        return spec_ceil_sqrt(P);
    return v;
}

static int add_config(config **cfg, int *n, int *cap, const tuna_options *opt, char *err,
                      size_t errlen)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        config *nv = realloc(*cfg, (size_t)nc * sizeof *nv);
        if (!nv) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        *cfg = nv;
        *cap = nc;
    }
    config *c = &(*cfg)[(*n)++];
    c->opt = *opt;
    c->plan = 0;
    if (tuna_options_format(opt, c->name, sizeof c->name) != MPI_SUCCESS) {
        snprintf(err, errlen, "%s", tuna_error_string(MPI_ERR_ARG));
        return -1;
    }
    return 0;
}

/* Configurations of one algorithm: the cartesian product of its parameters' value lists. */
static int algorithm_configs(const bench_args *a, int alg, int *used, config **cfg, int *n,
                             int *cap, char *err, size_t errlen)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(a->coll, alg);
    long_list vals[TUNA_MAX_PARAMS];
    memset(vals, 0, sizeof vals);
    int rc = 0;
    for (int p = 0; p < info->nparams && rc == 0; p++) {
        const tuna_param_info *pi = &info->params[p];
        const char *spec = "default";
        for (int s = 0; s < a->nparams; s++)
            if (strcmp(a->params[s].name, pi->name) == 0 || strcmp(a->params[s].name, "*") == 0) {
                spec = a->params[s].spec;
                used[s] = 1;
            }
        long hi = pi->max == TUNA_PARAM_P ? P : pi->max;
        long cap = pi->max == TUNA_PARAM_P ? (long)INT_MAX : pi->max;
        rc = spec_params(spec, pi->min, hi, cap, resolve(pi->defval), P, &vals[p], err, errlen);
        if (rc)
            snprintf(err + strlen(err), errlen - strlen(err), " (parameter '%s' of '%s')",
                     pi->name, info->name);
    }
    int idx[TUNA_MAX_PARAMS] = {0};
    while (rc == 0) {
        tuna_options opt = {.collective = a->coll, .algorithm = alg};
        for (int p = 0; p < info->nparams; p++) {
            opt.value[p] = vals[p].v[idx[p]];
            opt.set |= 1u << p;
        }
        rc = add_config(cfg, n, cap, &opt, err, errlen);
        int p = info->nparams - 1;
        while (p >= 0 && ++idx[p] == vals[p].n)
            idx[p--] = 0;
        if (p < 0)
            break;
    }
    for (int p = 0; p < TUNA_MAX_PARAMS; p++)
        long_list_free(&vals[p]);
    return rc;
}

static int build_configs(const bench_args *a, config **cfg, int *n, char *err, size_t errlen)
{
    int cap = 0;
    int used[MAX_PARAM_SPECS] = {0};
    *cfg = NULL;
    *n = 0;
    int count = tuna_algorithm_count(a->coll);
    char *list = strdup(a->algorithms);
    char *chosen = calloc((size_t)count + 1, 1); /* each algorithm once, in the order given */
    if (!list || !chosen) {
        free(list);
        free(chosen);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    char *save = NULL;
    /* "alg:k=v,k2=v2" names one configuration: a token of the form key=value (no ':' before
     * its '=') continues the previous token's parameters. */
    char *next = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok && rc == 0; tok = next) {
        next = strtok_r(NULL, ",", &save);
        if (strchr(tok, ':')) {
            char spec[512];
            snprintf(spec, sizeof spec, "%s", tok);
            while (next && strchr(next, '=') &&
                   (!strchr(next, ':') || strchr(next, ':') > strchr(next, '='))) {
                size_t len = strlen(spec);
                snprintf(spec + len, sizeof spec - len, ",%s", next);
                next = strtok_r(NULL, ",", &save);
            }
            tuna_options opt;
            int prc = tuna_options_parse(spec, a->coll, &opt);
            if (prc != MPI_SUCCESS) {
                snprintf(err, errlen, "-a '%s': %s", spec, tuna_error_string(prc));
                rc = -1;
            } else {
                rc = add_config(cfg, n, &cap, &opt, err, errlen);
            }
            continue;
        }
        int all = strcmp(tok, "all") == 0;
        int alg = all ? 0 : tuna_algorithm_find(a->coll, tok);
        if (alg < 0) {
            snprintf(err, errlen, "unknown algorithm '%s' (tuna-bench --list shows them)", tok);
            rc = -1;
        }
        for (int i = all ? 0 : alg; rc == 0 && i < (all ? count : alg + 1); i++)
            if (!chosen[i]) {
                chosen[i] = 1;
                rc = algorithm_configs(a, i, used, cfg, n, &cap, err, errlen);
            }
    }
    free(list);
    free(chosen);
    if (rc == 0 && *n == 0) {
        snprintf(err, errlen, "no algorithm selected");
        rc = -1;
    }
    if (rc == 0 && me == 0)
        for (int s = 0; s < a->nparams; s++)
            if (!used[s])
                fprintf(stderr,
                        "tuna-bench: warning: no selected algorithm has a parameter '%s'\n",
                        a->params[s].name);
    /* --plan times every configuration as a plan; neighbor_alltoallv times each both ways in
     * one run (blocking, then persistent: --plan's mode, estimate by default). */
    const int nbr = a->coll == TUNA_NEIGHBOR_ALLTOALLV && !a->nonblocking;
    if (rc == 0 && nbr) {
        const int nb = *n;
        for (int i = 0; i < nb && rc == 0; i++)
            rc = add_config(cfg, n, &cap, &(*cfg)[i].opt, err, errlen);
        for (int i = nb; i < *n && rc == 0; i++) {
            config *c = &(*cfg)[i];
            c->plan = a->plan ? a->plan : 1;
            size_t len = strlen(c->name);
            snprintf(c->name + len, sizeof c->name - len, " [persistent]");
        }
    } else if (rc == 0) {
        for (int i = 0; i < *n; i++)
            (*cfg)[i].plan = a->plan;
    }
    if (rc) {
        free(*cfg);
        *cfg = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------ statistics */

typedef struct summary {
    double median, min, p90, max, mean, spread;
} summary;

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static summary summarize(const double *v, int n)
{
    summary s = {0};
    double *t = malloc((size_t)n * sizeof *t);
    if (!t || n == 0) {
        free(t);
        return s;
    }
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.min = t[0];
    s.max = t[n - 1];
    s.median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    int k = (int)ceil(0.9 * n) - 1; /* nearest-rank 90th percentile */
    s.p90 = t[k < 0 ? 0 : k];
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    s.mean = sum / n;
    /* Robust to the rare huge outliers of oversubscribed runs (max is reported too). */
    s.spread = s.median > 0 ? (s.p90 - s.min) / s.median : 0;
    free(t);
    return s;
}

static json_t *summary_json(const summary *s)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "median", s->median, "min", s->min, "p90",
                     s->p90, "max", s->max, "mean", s->mean, "spread", s->spread);
}

/* ------------------------------------------------------------ data sets */

/* Buffers and counts of one (distribution, size). */
typedef struct dataset {
    const bench_dist *dist;
    long S;                 /* maximum size (units), -1 for file distributions */
    long *srow, *rcol;      /* sizes in units: what this rank sends to / receives from each */
    int *scounts, *sdispls, *rcounts, *rdispls;
    int *scounts0, *sdispls0, *rcounts0, *rdispls0; /* copies: inputs must stay unchanged */
    char *sbuf, *sbuf0, *rbuf, *rref;
    size_t sbytes, rbytes;
    int shared; /* sbuf and rbuf from SMPI_SHARED_MALLOC (--no-verify under SMPI) */
    int count;  /* allgather / allreduce: elements every rank contributes */
    /* Global facts from the whole matrix, in bytes. */
    double total_bytes, max_rank_bytes, max_block_bytes, mean_block_bytes, zero_fraction;
    /* The busiest node's bytes to / from ranks of other nodes (alltoallv; -1: not computed) */
    double max_node_offnode_send_bytes, max_node_offnode_recv_bytes;
    /* neighbor_alltoallv: the topology communicator the calls run on, this rank's out- and
     * in-degree (the count arrays' lengths; P for alltoallv), the topology ("dist_graph" or
     * "cart"), the grid of a stencil, and global edge facts */
    MPI_Comm ncomm;
    int nout, nin;
    const char *topology;
    int grid[3], ndims;
    double edges, max_degree, max_node_offnode_edges;
} dataset;

/*
 * Payload buffers. Unverified runs under SimGrid SMPI (smpi.h defines
 * SMPI_SHARED_MALLOC) share one allocation among all simulated ranks, so the
 * simulator's memory does not grow with P; the contents are then meaningless.
 */
static char *payload_alloc(size_t bytes, int shared)
{
#ifdef SMPI_SHARED_MALLOC
    if (shared)
        return SMPI_SHARED_MALLOC(bytes);
#else
    (void)shared;
#endif
    return malloc(bytes);
}

static void payload_free(char *p, int shared)
{
    if (!p)
        return;
#ifdef SMPI_SHARED_MALLOC
    if (shared) {
        SMPI_SHARED_FREE(p);
        return;
    }
#else
    (void)shared;
#endif
    free(p);
}

static void dataset_free(dataset *d)
{
    free(d->srow);
    free(d->rcol);
    free(d->scounts);
    free(d->sdispls);
    free(d->rcounts);
    free(d->rdispls);
    free(d->scounts0);
    free(d->sdispls0);
    free(d->rcounts0);
    free(d->rdispls0);
    payload_free(d->sbuf, d->shared);
    free(d->sbuf0);
    payload_free(d->rbuf, d->shared);
    free(d->rref);
    if (d->ncomm != MPI_COMM_NULL && d->ncomm != 0)
        MPI_Comm_free(&d->ncomm);
    memset(d, 0, sizeof *d);
    d->ncomm = MPI_COMM_NULL;
}

/*
 * The payload buffers of a data set whose sbytes / rbytes are set: send and receive buffers
 * (shared under SMPI when unverified), and, when verifying, a copy of the input and the
 * reference result. Returns 1, or 0 if out of memory (dataset_free releases what exists).
 */
static int payload_buffers(const bench_args *a, dataset *d)
{
#ifdef SMPI_SHARED_MALLOC
    d->shared = !a->verify;
#endif
    d->sbuf = payload_alloc(d->sbytes + 1, d->shared);
    d->rbuf = payload_alloc(d->rbytes + 1, d->shared);
    if (a->verify) {
        d->sbuf0 = malloc(d->sbytes + 1);
        d->rref = malloc(d->rbytes + 1);
    }
    int ok = d->sbuf && d->rbuf && (!a->verify || (d->sbuf0 && d->rref));
    if (ok && !a->verify && !d->shared)
        memset(d->sbuf, 0, d->sbytes);
    return ok;
}

/* Every rank's allocation outcome, agreed: 0, or -1 everywhere (data set freed). */
static int buffers_agreed(int ok, dataset *d, char *err, size_t errlen)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        snprintf(err, errlen, "out of memory for the buffers");
        dataset_free(d);
        return -1;
    }
    return 0;
}

/* bench_dist_sum_fn over MPI_COMM_WORLD. */
static long long sum_over_ranks(long long local, void *ctx)
{
    (void)ctx;
    MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return local;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The payload rank src sends rank dst: a per-(source, destination) stream. */
static void fill_block(const bench_args *a, int src, int dst, char *blk, size_t len)
{
    uint64_t st = a->seed ^ ((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ 0x5EED;
    for (size_t b = 0; b < len; b++)
        blk[b] = (char)(splitmix(&st) & 0xFF);
}

/* Elements of the datatype for a size in units. */
static long to_elements(const bench_args *a, const bench_dist *dist, long size, int tsize)
{
    if (dist->kind == DIST_SPMV) /* vector entries: one element, or 8 bytes (a double) */
        return a->unit_elements ? size : (size * 8) / tsize;
    return a->unit_elements ? size : size / tsize;
}

/* One rank's share of a data set's global facts, in bytes (sums of integers below 2^53). */
typedef struct rank_bytes {
    double sent, received_elements, empty_blocks, max_block;
    double offnode_sent, offnode_received; /* to / from ranks of other nodes */
} rank_bytes;

/* The facts of rank `rank`, which sends srow[j] and receives rcol[j] (units) to / from rank j;
 * rank j is on another node when nodes[j] != nodes[rank] (node ids, or node_of's flags). */
static rank_bytes rank_bytes_of(const bench_args *a, const bench_dist *dist, const long *srow,
                                const long *rcol, int tsize, const int *nodes, int rank)
{
    rank_bytes rb = {0, 0, 0, 0, 0, 0};
    for (int j = 0; j < P; j++) {
        double b = (double)to_elements(a, dist, srow[j], tsize) * tsize;
        double r = (double)to_elements(a, dist, rcol[j], tsize);
        rb.sent += b;
        rb.received_elements += r;
        if (b > rb.max_block)
            rb.max_block = b;
        if (b == 0)
            rb.empty_blocks++;
        if (nodes[j] != nodes[rank]) {
            rb.offnode_sent += b;
            rb.offnode_received += r * tsize;
        }
    }
    return rb;
}

/*
 * Build the data set on every rank. Collective: rank 0 reads files and
 * broadcasts; every rank returns the same status.
 */
static int dataset_make(const bench_args *a, const bench_dist *dist, long S, dataset *d,
                        char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->dist = dist;
    d->S = bench_dist_uses_size(dist) ? S : -1;
    size_t n = (size_t)P * (size_t)P;
    d->srow = malloc((size_t)P * sizeof *d->srow);
    d->rcol = malloc((size_t)P * sizeof *d->rcol);
    int ok = d->srow && d->rcol;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        snprintf(err, errlen, "out of memory for the block sizes");
        dataset_free(d);
        return -1;
    }
    if (bench_dist_uses_size(dist)) {
        /* Only this rank's row and column: each block is a function of (seed, i, j). */
        bench_dist_cut cut;
        ok = bench_dist_prepare(dist, P, a->seed, me, me + 1, sum_over_ranks, NULL, &cut, err,
                                errlen) == 0;
        for (int j = 0; ok && j < P; j++) {
            d->srow[j] = bench_dist_block(dist, P, S, a->seed, &cut, me, j);
            d->rcol[j] = bench_dist_block(dist, P, S, a->seed, &cut, j, me);
        }
    } else {
        /* Files: rank 0 reads the whole P x P matrix (P^2 longs) and scatters rows and columns. */
        long *m = NULL;
        if (me == 0) {
            m = malloc(n * sizeof *m);
            ok = m && bench_dist_read(dist, P, m, err, errlen) == 0;
            if (!m)
                snprintf(err, errlen, "out of memory for the %d x %d size matrix", P, P);
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(err, (int)errlen, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (ok) {
            MPI_Scatter(m, P, MPI_LONG, d->srow, P, MPI_LONG, 0, MPI_COMM_WORLD);
            if (me == 0) /* transpose in place: row j becomes what rank j receives */
                for (int i = 0; i < P; i++)
                    for (int j = i + 1; j < P; j++) {
                        long t = m[(size_t)i * P + j];
                        m[(size_t)i * P + j] = m[(size_t)j * P + i];
                        m[(size_t)j * P + i] = t;
                    }
            MPI_Scatter(m, P, MPI_LONG, d->rcol, P, MPI_LONG, 0, MPI_COMM_WORLD);
        }
        free(m);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        dataset_free(d);
        return -1;
    }
    int tsize;
    MPI_Type_size(a->type, &tsize);
    /*
     * Global facts, in bytes, from every rank's row (sums of integers below 2^53:
     * exact in any order), and the int limits of MPI_Alltoallv's counts and displacements.
     */
    rank_bytes rb = rank_bytes_of(a, dist, d->srow, d->rcol, tsize, node_of, me);
    double sums[2] = {rb.sent, rb.empty_blocks}, maxes[2] = {rb.sent, rb.max_block};
    double offnode[2] = {rb.offnode_sent, rb.offnode_received};
    int fits = !(rb.sent / tsize > INT_MAX || rb.received_elements > INT_MAX);
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, maxes, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, offnode, 2, MPI_DOUBLE, MPI_SUM, node_comm);
    MPI_Allreduce(MPI_IN_PLACE, offnode, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!fits) {
        snprintf(err, errlen,
                 "a rank's total exceeds INT_MAX elements (MPI_Alltoallv's int displacements); "
                 "use --scale or smaller sizes");
        dataset_free(d);
        return -1;
    }
    d->total_bytes = sums[0];
    d->max_rank_bytes = maxes[0];
    d->max_block_bytes = maxes[1];
    d->mean_block_bytes = sums[0] / (double)n;
    d->zero_fraction = sums[1] / (double)n;
    d->max_node_offnode_send_bytes = offnode[0];
    d->max_node_offnode_recv_bytes = offnode[1];
    d->nout = d->nin = P;

    size_t ib = (size_t)P * sizeof(int);
    d->scounts = malloc(ib), d->sdispls = malloc(ib), d->rcounts = malloc(ib),
    d->rdispls = malloc(ib);
    d->scounts0 = malloc(ib), d->sdispls0 = malloc(ib), d->rcounts0 = malloc(ib),
    d->rdispls0 = malloc(ib);
    ok = d->scounts && d->sdispls && d->rcounts && d->rdispls && d->scounts0 && d->sdispls0 &&
         d->rcounts0 && d->rdispls0;
    if (ok) {
        long so = 0, ro = 0;
        for (int j = 0; j < P; j++) {
            d->scounts[j] = (int)to_elements(a, dist, d->srow[j], tsize);
            d->rcounts[j] = (int)to_elements(a, dist, d->rcol[j], tsize);
            d->sdispls[j] = (int)so;
            d->rdispls[j] = (int)ro;
            so += d->scounts[j];
            ro += d->rcounts[j];
        }
        d->sbytes = (size_t)so * (size_t)tsize;
        d->rbytes = (size_t)ro * (size_t)tsize;
        ok = payload_buffers(a, d);
    }
    if (ok && a->verify) {
        /* Payload: bytes from a per-(source, destination) stream, so misplaced data shows. */
        for (int j = 0; j < P; j++)
            fill_block(a, me, j, d->sbuf + (size_t)d->sdispls[j] * (size_t)tsize,
                       (size_t)d->scounts[j] * (size_t)tsize);
        memcpy(d->sbuf0, d->sbuf, d->sbytes);
        if (!a->vendor) /* no PMPI_Alltoallv reference: the expected blocks, computed here */
            for (int j = 0; j < P; j++)
                fill_block(a, j, me, d->rref + (size_t)d->rdispls[j] * (size_t)tsize,
                           (size_t)d->rcounts[j] * (size_t)tsize);
        memcpy(d->scounts0, d->scounts, ib);
        memcpy(d->sdispls0, d->sdispls, ib);
        memcpy(d->rcounts0, d->rcounts, ib);
        memcpy(d->rdispls0, d->rdispls, ib);
    }
    return buffers_agreed(ok, d, err, errlen);
}

/* Allreduce payload: small integers, so sums are exact in every type and any order. */
static void fill_summands(MPI_Datatype type, int rank, char *buf, int n)
{
    for (int i = 0; i < n; i++) {
        int v = (rank * 7 + i * 3) % 11;
        if (type == MPI_INT)
            ((int *)buf)[i] = v;
        else if (type == MPI_FLOAT)
            ((float *)buf)[i] = (float)v;
        else if (type == MPI_DOUBLE)
            ((double *)buf)[i] = v;
        else
            ((int64_t *)buf)[i] = v;
    }
}

/*
 * Data set of --collective allgather / allreduce: every rank contributes the same
 * S units. Without the vendor, the expected result is computed locally.
 */
static int dataset_make_coll(const bench_args *a, const bench_dist *dist, long S, dataset *d,
                             char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->dist = dist;
    d->S = S;
    int tsize;
    MPI_Type_size(a->type, &tsize);
    long n = a->unit_elements ? S : S / tsize;
    long total = a->coll == TUNA_ALLREDUCE ? n : n * P;
    if (total > INT_MAX) {
        snprintf(err, errlen, "the %s result exceeds INT_MAX elements", tuna_collective_name(a->coll));
        return -1;
    }
    d->count = (int)n;
    d->sbytes = (size_t)(a->coll == TUNA_ALLTOALL ? total : n) * (size_t)tsize;
    d->rbytes = (size_t)total * (size_t)tsize;
    d->total_bytes = (double)d->sbytes * P;
    d->max_rank_bytes = (double)d->sbytes;
    d->max_block_bytes = d->mean_block_bytes = (double)n * tsize;
    d->max_node_offnode_send_bytes = d->max_node_offnode_recv_bytes = -1;
    int ok = payload_buffers(a, d);
    if (ok && a->verify) {
        if (a->coll == TUNA_ALLTOALL) { /* block me -> j, as alltoallv's data sets */
            const size_t blk = (size_t)n * (size_t)tsize;
            for (int j = 0; j < P; j++) {
                fill_block(a, me, j, d->sbuf + (size_t)j * blk, blk);
                if (!a->vendor)
                    fill_block(a, j, me, d->rref + (size_t)j * blk, blk);
            }
        } else if (a->coll == TUNA_ALLGATHER) {
            fill_block(a, me, 0, d->sbuf, d->sbytes);
            if (!a->vendor)
                for (int j = 0; j < P; j++)
                    fill_block(a, j, 0, d->rref + (size_t)j * d->sbytes, d->sbytes);
        } else {
            fill_summands(a->type, me, d->sbuf, d->count);
            if (!a->vendor) { /* the sum over ranks, element by element */
                char *one = malloc(d->sbytes + 1);
                ok = one != NULL;
                memset(d->rref, 0, d->rbytes);
                for (int j = 0; ok && j < P; j++) {
                    fill_summands(a->type, j, one, d->count);
                    MPI_Reduce_local(one, d->rref, d->count, a->type, MPI_SUM);
                }
                free(one);
            }
        }
        memcpy(d->sbuf0, d->sbuf, d->sbytes);
    }
    return buffers_agreed(ok, d, err, errlen);
}

/*
 * Data set of --collective neighbor_alltoallv (collective): the neighborhood, its counts and
 * buffers, and the topology communicator d->ncomm.
 *  - spmv:FILE.mtx: rank 0 reads the P x P halo counts (bench_dist_read: rank k sends rank i
 *    the x entries of k's row block that i's rows reference) and scatters rows and columns;
 *    one edge per (owner -> needer) pair with a non-zero count, self excluded, each entry a
 *    double (8 bytes, times --scale); MPI_Dist_graph_create_adjacent, ascending ranks.
 *  - stencil (dim D): a periodic D-dimensional grid (MPI_Dims_create), S bytes (or elements)
 *    to each face neighbor in MPI_Cart_shift's order (per dimension -1, then +1). A Cartesian
 *    communicator where every dimension is at least 3; else (a neighbor twice) a distributed
 *    graph with the same lists, whose repeated edges MPI matches in order.
 * Edge k to rank j carries fill_block(me, j + occurrence * P), so misplaced blocks show.
 */
/* MPI_Dist_graph_create_adjacent over MPI_COMM_WORLD, weights 1 (Open MPI's MPI_UNWEIGHTED is
 * a zero-size array to the compiler; MPI ignores weights), ranks kept. */
static void dist_graph(int nin, const int *in, int nout, const int *out, MPI_Comm *comm)
{
    int n = nin > nout ? nin : nout;
    int *w = malloc(((size_t)n + 1) * sizeof *w);
    for (int k = 0; w && k <= n; k++)
        w[k] = 1;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, w, nout, out, w, MPI_INFO_NULL, 0,
                                   comm);
    free(w);
}

static int dataset_make_nbr(const bench_args *a, const bench_dist *dist, int dim, long S,
                            int rpn, dataset *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->ncomm = MPI_COMM_NULL;
    d->dist = dist;
    d->S = dim ? S : -1;
    int tsize;
    MPI_Type_size(a->type, &tsize);
    int *out = NULL, *in = NULL;
    long *ocnt = NULL, *icnt = NULL; /* elements per edge */
    int ok = 1;
    if (dim) {
        int dims[3] = {0, 0, 0}, per[3] = {1, 1, 1}, co[3] = {0, 0, 0};
        MPI_Dims_create(P, dim, dims);
        int rest = me, small = 0;
        for (int k = dim - 1; k >= 0; k--) { /* row-major, as MPI_Cart_create numbers */
            co[k] = rest % dims[k];
            rest /= dims[k];
            small |= dims[k] < 3;
        }
#ifdef SMPI_SHARED_MALLOC
        small = 1; /* SMPI: no Cartesian neighborhood calls (bench/smpi_topology.c) */
#endif
        d->ndims = dim;
        memcpy(d->grid, dims, sizeof dims);
        d->nout = d->nin = 2 * dim;
        out = malloc(sizeof(int) * 6), in = malloc(sizeof(int) * 6);
        ocnt = malloc(sizeof(long) * 6), icnt = malloc(sizeof(long) * 6);
        ok = out && in && ocnt && icnt;
        for (int k = 0; ok && k < dim; k++)
            for (int s = 0; s < 2; s++) {
                int c2[3] = {co[0], co[1], co[2]};
                c2[k] = (c2[k] + (s ? 1 : -1) + dims[k]) % dims[k];
                int r = 0;
                for (int m = 0; m < dim; m++)
                    r = r * dims[m] + c2[m];
                out[2 * k + s] = in[2 * k + s] = r;
                ocnt[2 * k + s] = icnt[2 * k + s] = a->unit_elements ? S : S / tsize;
            }
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (ok && !small) {
            MPI_Cart_create(MPI_COMM_WORLD, dim, dims, per, 0, &d->ncomm);
            d->topology = "cart";
        } else if (ok) {
            dist_graph(d->nin, in, d->nout, out, &d->ncomm);
            d->topology = "dist_graph";
        }
    } else {
        long *srow = malloc((size_t)P * sizeof *srow), *rcol = malloc((size_t)P * sizeof *rcol);
        long *m = NULL;
        ok = srow && rcol;
        if (me == 0 && ok) {
            m = malloc((size_t)P * (size_t)P * sizeof *m);
            ok = m && bench_dist_read(dist, P, m, err, errlen) == 0;
            if (!m)
                snprintf(err, errlen, "out of memory for the %d x %d size matrix", P, P);
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(err, (int)errlen, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (ok) {
            MPI_Scatter(m, P, MPI_LONG, srow, P, MPI_LONG, 0, MPI_COMM_WORLD);
            if (me == 0)
                for (int i = 0; i < P; i++)
                    for (int j = i + 1; j < P; j++) {
                        long t = m[(size_t)i * P + j];
                        m[(size_t)i * P + j] = m[(size_t)j * P + i];
                        m[(size_t)j * P + i] = t;
                    }
            MPI_Scatter(m, P, MPI_LONG, rcol, P, MPI_LONG, 0, MPI_COMM_WORLD);
            out = malloc(sizeof(int) * (size_t)P), in = malloc(sizeof(int) * (size_t)P);
            ocnt = malloc(sizeof(long) * (size_t)P), icnt = malloc(sizeof(long) * (size_t)P);
            ok = out && in && ocnt && icnt;
            for (int j = 0; ok && j < P; j++) {
                long so = j == me ? 0 : to_elements(a, dist, srow[j], tsize);
                long ri = j == me ? 0 : to_elements(a, dist, rcol[j], tsize);
                if (so > 0) {
                    out[d->nout] = j;
                    ocnt[d->nout++] = so;
                }
                if (ri > 0) {
                    in[d->nin] = j;
                    icnt[d->nin++] = ri;
                }
            }
        }
        free(m);
        free(srow);
        free(rcol);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (ok) {
            dist_graph(d->nin, in, d->nout, out, &d->ncomm);
            d->topology = "dist_graph";
        }
    }
    /* Global facts over the edges, in bytes; counts and displacements (int). */
    double sent = 0, maxe = 0, offn = 0, offe = 0;
    long so = 0, ro = 0;
    int fits = 1;
    size_t ob = sizeof(int) * (size_t)(d->nout + 1), ib = sizeof(int) * (size_t)(d->nin + 1);
    if (ok) {
        d->scounts = malloc(ob), d->sdispls = malloc(ob), d->scounts0 = malloc(ob),
        d->sdispls0 = malloc(ob);
        d->rcounts = malloc(ib), d->rdispls = malloc(ib), d->rcounts0 = malloc(ib),
        d->rdispls0 = malloc(ib);
        ok = d->scounts && d->sdispls && d->scounts0 && d->sdispls0 && d->rcounts &&
             d->rdispls && d->rcounts0 && d->rdispls0;
    }
    for (int k = 0; ok && k < d->nout; k++) {
        double b = (double)ocnt[k] * tsize;
        sent += b;
        maxe = b > maxe ? b : maxe;
        if (rpn > 0 ? out[k] / rpn != me / rpn : !node_of[out[k]]) {
            offn += b;
            offe++;
        }
        fits &= so + ocnt[k] <= INT_MAX;
        d->scounts[k] = (int)ocnt[k];
        d->sdispls[k] = (int)so;
        so += ocnt[k];
    }
    for (int k = 0; ok && k < d->nin; k++) {
        fits &= ro + icnt[k] <= INT_MAX;
        d->rcounts[k] = (int)icnt[k];
        d->rdispls[k] = (int)ro;
        ro += icnt[k];
    }
    double sums[2] = {sent, (double)d->nout}, maxes[3] = {sent, maxe, (double)d->nout};
    double offnode[2] = {offn, offe};
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, maxes, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rpn > 0) { /* logical nodes (TUNA_RANKS_PER_NODE): consecutive ranks */
        MPI_Comm lnode;
        MPI_Comm_split(MPI_COMM_WORLD, me / rpn, me, &lnode);
        MPI_Allreduce(MPI_IN_PLACE, offnode, 2, MPI_DOUBLE, MPI_SUM, lnode);
        MPI_Comm_free(&lnode);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, offnode, 2, MPI_DOUBLE, MPI_SUM, node_comm);
    }
    MPI_Allreduce(MPI_IN_PLACE, offnode, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (ok && !fits)
        snprintf(err, errlen, "a rank's total exceeds INT_MAX elements; use --scale or "
                              "smaller sizes");
    if (!ok && !err[0])
        snprintf(err, errlen, "out of memory for the neighborhood");
    ok = ok && fits;
    d->total_bytes = sums[0];
    d->edges = sums[1];
    d->max_rank_bytes = maxes[0];
    d->max_block_bytes = maxes[1];
    d->max_degree = maxes[2];
    d->mean_block_bytes = sums[1] > 0 ? sums[0] / sums[1] : 0;
    d->max_node_offnode_send_bytes = offnode[0];
    d->max_node_offnode_edges = offnode[1];
    d->max_node_offnode_recv_bytes = -1; /* not computed for neighborhoods */
    if (ok) {
        d->sbytes = (size_t)so * (size_t)tsize;
        d->rbytes = (size_t)ro * (size_t)tsize;
        ok = payload_buffers(a, d);
    }
    if (ok && a->verify) {
        for (int k = 0; k < d->nout; k++) {
            int occ = 0;
            for (int q = 0; q < k; q++)
                occ += out[q] == out[k];
            fill_block(a, me, out[k] + occ * P, d->sbuf + (size_t)d->sdispls[k] * tsize,
                       (size_t)d->scounts[k] * tsize);
        }
        for (int k = 0; k < d->nin; k++) {
            int occ = 0;
            for (int q = 0; q < k; q++)
                occ += in[q] == in[k];
            fill_block(a, in[k], me + occ * P, d->rref + (size_t)d->rdispls[k] * tsize,
                       (size_t)d->rcounts[k] * tsize);
        }
        memcpy(d->sbuf0, d->sbuf, d->sbytes);
        memcpy(d->scounts0, d->scounts, ob);
        memcpy(d->sdispls0, d->sdispls, ob);
        memcpy(d->rcounts0, d->rcounts, ib);
        memcpy(d->rdispls0, d->rdispls, ib);
    }
    free(out), free(in), free(ocnt), free(icnt);
    return buffers_agreed(ok, d, err, errlen);
}

/* The MPI library's own collective (PMPI), into out. */
static void call_vendor(const bench_args *a, const dataset *d, char *out, MPI_Comm comm)
{
    if (a->coll == TUNA_ALLGATHER)
        PMPI_Allgather(d->sbuf, d->count, a->type, out, d->count, a->type, comm);
    else if (a->coll == TUNA_ALLTOALL)
        PMPI_Alltoall(d->sbuf, d->count, a->type, out, d->count, a->type, comm);
    else if (a->coll == TUNA_ALLREDUCE)
        PMPI_Allreduce(d->sbuf, out, d->count, a->type, MPI_SUM, comm);
    else if (a->coll == TUNA_NEIGHBOR_ALLTOALLV)
        PMPI_Neighbor_alltoallv(d->sbuf, d->scounts, d->sdispls, a->type, out, d->rcounts,
                                d->rdispls, a->type, comm);
    else
        PMPI_Alltoallv(d->sbuf, d->scounts, d->sdispls, a->type, out, d->rcounts, d->rdispls,
                       a->type, comm);
}

/* --plan: the configuration as a persistent plan, on the same buffers as call_tuna(). */
static int plan_tuna(const bench_args *a, dataset *d, const config *c, MPI_Comm comm,
                     tuna_plan *plan)
{
    unsigned flags = c->plan == 2 ? TUNA_PLAN_MEASURE : TUNA_PLAN_ESTIMATE;
    if (a->coll == TUNA_ALLGATHER)
        return tuna_allgather_init(d->sbuf, d->count, a->type, d->rbuf, d->count, a->type, comm,
                                   &c->opt, flags, plan);
    if (a->coll == TUNA_ALLTOALL)
        return tuna_alltoall_init(d->sbuf, d->count, a->type, d->rbuf, d->count, a->type, comm,
                                  &c->opt, flags, plan);
    if (a->coll == TUNA_ALLREDUCE)
        return tuna_allreduce_init(d->sbuf, d->rbuf, d->count, a->type, MPI_SUM, comm, &c->opt,
                                   flags, plan);
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV)
        return tuna_neighbor_alltoallv_init(d->sbuf, d->scounts, d->sdispls, a->type, d->rbuf,
                                            d->rcounts, d->rdispls, a->type, comm, &c->opt,
                                            flags, plan);
    return tuna_alltoallv_init(d->sbuf, d->scounts, d->sdispls, a->type, d->rbuf, d->rcounts,
                               d->rdispls, a->type, comm, &c->opt, flags, plan);
}

static int start_wait(tuna_plan plan)
{
    int rc = tuna_start(plan);
    return rc == MPI_SUCCESS ? tuna_wait(plan) : rc;
}

static int call_tuna(const bench_args *a, dataset *d, const config *c, MPI_Comm comm)
{
    if (a->coll == TUNA_ALLGATHER)
        return tuna_allgather(d->sbuf, d->count, a->type, d->rbuf, d->count, a->type, comm,
                              &c->opt);
    if (a->coll == TUNA_ALLTOALL)
        return tuna_alltoall(d->sbuf, d->count, a->type, d->rbuf, d->count, a->type, comm,
                             &c->opt);
    if (a->coll == TUNA_ALLREDUCE)
        return tuna_allreduce(d->sbuf, d->rbuf, d->count, a->type, MPI_SUM, comm, &c->opt);
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV)
        return tuna_neighbor_alltoallv(d->sbuf, d->scounts, d->sdispls, a->type, d->rbuf,
                                       d->rcounts, d->rdispls, a->type, comm, &c->opt);
    return tuna_alltoallv(d->sbuf, d->scounts, d->sdispls, a->type, d->rbuf, d->rcounts,
                          d->rdispls, a->type, comm, &c->opt);
}

/* ------------------------------------------------------------ one configuration */

typedef struct result {
    int ok;
    char error[512];
    summary alg, vendor;
    double speedup; /* vendor median / algorithm median */
    double phase[TUNA_PHASE_COUNT]; /* median over phase iterations of the max over ranks */
    double recorded_median;         /* the phase iterations' own time (recording on) */
    size_t temp_bytes;              /* max over ranks and phase iterations */
    int rounds;                     /* max over ranks */
    double *samples, *vsamples;     /* per-iteration max over ranks (rank 0) */
    /* auto: what its last call before the timed ones ran (every rank chose the same) */
    bool has_choice;
    char choice[160];
    double predicted;
    int auto_source;
    double plan_seconds; /* --plan: the init's time, max over ranks */
    int learn_calls;     /* auto: warm-up calls given to its learning (0: none) */
    double learn_seconds; /* their time, max over ranks of each rank's sum */
    int ntried;          /* --plan measure: the candidates it timed (options, seconds) */
    char tried[TUNA_PLAN_MAX_TRIED][96];
    double tried_seconds[TUNA_PLAN_MAX_TRIED];
    /* --nonblocking: alg and samples hold the pure times (start, wait) */
    summary total;       /* start, computation, wait */
    double *tsamples;    /* their per-iteration max over ranks (rank 0) */
    double compute;      /* the computation's length */
    double overlap;      /* percent */
    int tests;           /* tests during one computation */
} result;

static void verify_or_abort(const bench_args *a, const dataset *d, const config *c, int tsize,
                            MPI_Comm comm)
{
    char msg[512] = "";
    int bad = 0;
    if (memcmp(d->rbuf, d->rref, d->rbytes) != 0) {
        size_t at = 0;
        while (at < d->rbytes && d->rbuf[at] == d->rref[at])
            at++;
        /* Where: the block's source rank (alltoallv, allgather) or the element (allreduce). */
        size_t src = 0, first = 0;
        if (a->coll == TUNA_NEIGHBOR_ALLTOALLV) { /* src: the in-edge */
            while (src + 1 < (size_t)d->nin &&
                   (size_t)d->rdispls[src + 1] * (size_t)tsize <= at)
                src++;
            first = (size_t)d->rdispls[src] * (size_t)tsize;
        } else if (a->coll == TUNA_ALLTOALLV) {
            while (src + 1 < (size_t)P && (size_t)d->rdispls[src + 1] * (size_t)tsize <= at)
                src++;
            first = (size_t)d->rdispls[src] * (size_t)tsize;
        } else if (a->coll == TUNA_ALLGATHER || a->coll == TUNA_ALLTOALL) {
            const size_t blk = d->rbytes / (size_t)P;
            src = blk ? at / blk : 0;
            first = src * blk;
        } else {
            src = at / (size_t)tsize;
            first = src * (size_t)tsize;
        }
        char vendor_name[32];
        snprintf(vendor_name, sizeof vendor_name, "PMPI_%c%s", 'A', tuna_collective_name(a->coll) + 1);
        snprintf(msg, sizeof msg,
                 "rank %d: received data differs from %s at byte %zu (%s %zu, byte %zu of it): "
                 "got 0x%02x, expected 0x%02x",
                 me, a->vendor ? vendor_name : "the expected result", at,
                 a->coll == TUNA_ALLREDUCE            ? "element"
                 : a->coll == TUNA_NEIGHBOR_ALLTOALLV ? "in-edge"
                                                      : "block from rank",
                 src, at - first,
                 (unsigned char)d->rbuf[at], (unsigned char)d->rref[at]);
        bad = 1;
    } else if (memcmp(d->sbuf, d->sbuf0, d->sbytes) != 0 ||
               ((a->coll == TUNA_ALLTOALLV || a->coll == TUNA_NEIGHBOR_ALLTOALLV) &&
                (memcmp(d->scounts, d->scounts0, (size_t)d->nout * sizeof(int)) ||
                 memcmp(d->sdispls, d->sdispls0, (size_t)d->nout * sizeof(int)) ||
                 memcmp(d->rcounts, d->rcounts0, (size_t)d->nin * sizeof(int)) ||
                 memcmp(d->rdispls, d->rdispls0, (size_t)d->nin * sizeof(int))))) {
        snprintf(msg, sizeof msg, "rank %d: the send buffer or the count/displacement arrays "
                                  "were modified", me);
        bad = 1;
    }
    int any = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, comm);
    if (!any)
        return;
    if (bad)
        fprintf(stderr, "tuna-bench: VERIFICATION FAILED: %s\n", msg);
    MPI_Barrier(comm);
    if (me == 0) {
        fprintf(stderr,
                "tuna-bench: VERIFICATION FAILED for '%s' with distribution %s, S=%ld, type %s, "
                "P=%d, seed=%llu (rerun with --seed %llu to reproduce)\n",
                c->name, d->dist->spec, d->S, a->type_name, P, a->seed, a->seed);
        fflush(stderr);
    }
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The option string of an algorithm with resolved parameters, as the configurations are
 * named ("alg:k=v,..."): false if alg is no algorithm of coll. */
static bool choice_name(tuna_collective coll, int alg, const long *params, char *buf,
                        size_t len)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(coll, alg);
    if (!info)
        return false;
    tuna_options o = {.collective = coll, .algorithm = alg};
    for (int p = 0; p < info->nparams; p++) {
        o.set |= 1u << p;
        o.value[p] = params[p];
    }
    return tuna_options_format(&o, buf, len) == MPI_SUCCESS;
}

/* What auto's last call ran (tuna_stats_last: every rank chose the same). */
static void record_choice(const bench_args *a, result *r)
{
    const tuna_stats *st = tuna_stats_last();
    r->has_choice = choice_name(a->coll, st->algorithm, st->params, r->choice, sizeof r->choice);
    r->predicted = st->predicted;
    r->auto_source = st->auto_source;
}

/*
 * One configuration: warm-up, timed and phase iterations.
 *
 * The timed iterations run with tuna_stats off, so they time what a user's call costs:
 * recording reads the clock around every phase and keeps tuna off its lean paths (the
 * two-rank exchange), which at P = 2 and 16 B made spreadout 0.6x the library's time against
 * 1.1x without (docs/benchmarks.md, "Phase recording"). The phase breakdown, peak temporary
 * memory and rounds come from a->phase_iters further calls after the timed ones, recording
 * on and no vendor call between them; their own times (recorded_median) are kept apart.
 */
/* --nonblocking: one configuration's operations (overlap.h). */
typedef struct nb_call {
    const bench_args *a;
    dataset *d;
    const config *c;
    MPI_Comm comm;
} nb_call;

static int start_nonblocking(void *ctx, tuna_request *req)
{
    const nb_call *x = ctx;
    const bench_args *a = x->a;
    dataset *d = x->d;
    const tuna_options *o = &x->c->opt;
    if (a->coll == TUNA_ALLGATHER)
        return tuna_iallgather(d->sbuf, d->count, a->type, d->rbuf, d->count, a->type, x->comm,
                               o, req);
    if (a->coll == TUNA_ALLTOALL)
        return tuna_ialltoall(d->sbuf, d->count, a->type, d->rbuf, d->count, a->type, x->comm,
                              o, req);
    if (a->coll == TUNA_ALLREDUCE)
        return tuna_iallreduce(d->sbuf, d->rbuf, d->count, a->type, MPI_SUM, x->comm, o, req);
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV)
        return tuna_ineighbor_alltoallv(d->sbuf, d->scounts, d->sdispls, a->type, d->rbuf,
                                        d->rcounts, d->rdispls, a->type, x->comm, o, req);
    return tuna_ialltoallv(d->sbuf, d->scounts, d->sdispls, a->type, d->rbuf, d->rcounts,
                           d->rdispls, a->type, x->comm, o, req);
}

static void run_overlap_config(const bench_args *a, dataset *d, const config *c, MPI_Comm comm,
                               result *r)
{
    memset(r, 0, sizeof *r);
    nb_call x = {a, d, c, comm};
    /* A nonblocking start is local: it runs the library's call on a communicator no blocking
     * tuna call has set up yet (docs/nonblocking.md). One blocking call of the configuration
     * sets it up, as an application's earlier calls would. */
    int rc = call_tuna(a, d, c, comm);
    int failed = rc != MPI_SUCCESS;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, comm);
    if (failed) {
        snprintf(r->error, sizeof r->error, "rank %d: %s", me,
                 rc != MPI_SUCCESS ? tuna_error_string(rc) : "failed on another rank");
        return;
    }
    /* One operation with statistics on (what ran, in the record), into a sentinel-filled
     * buffer, checked unless --no-verify. */
    int tsize;
    MPI_Type_size(a->type, &tsize);
    if (a->verify)
        memset(d->rbuf, SENTINEL, d->rbytes);
    tuna_request req = TUNA_REQUEST_NULL;
    tuna_stats_enable(1);
    rc = start_nonblocking(&x, &req);
    if (rc == MPI_SUCCESS)
        rc = tuna_request_wait(&req);
    tuna_stats_enable(0);
    failed = rc != MPI_SUCCESS;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, comm);
    if (failed) {
        snprintf(r->error, sizeof r->error, "rank %d: %s", me,
                 rc != MPI_SUCCESS ? tuna_error_string(rc) : "failed on another rank");
        return;
    }
    record_choice(a, r);
    if (a->verify)
        verify_or_abort(a, d, c, tsize, comm);
    /* Alone (pure), then with computation as long as the pure median between start and
     * wait, tested every a->poll of it (0: one piece, no test before the wait). */
    double *pure = calloc((size_t)a->iters, sizeof *pure);
    double *total = calloc((size_t)a->iters, sizeof *total);
    int ok = pure && total, tests = 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        snprintf(r->error, sizeof r->error, "out of memory for timings");
    if (ok && bench_overlap_series(comm, a->warmup, a->iters, 0, 1, start_nonblocking, &x, pure,
                                   &tests, r->error, sizeof r->error)) {
        r->alg = summarize(pure, a->iters);
        r->compute = r->alg.median;
        const double piece = a->poll > 0 ? a->poll * r->compute : r->compute;
        ok = bench_overlap_series(comm, a->warmup, a->iters, r->compute, piece > 0 ? piece : 1,
                                  start_nonblocking, &x, total, &tests, r->error,
                                  sizeof r->error);
    } else {
        ok = 0;
    }
    if (ok) {
        MPI_Bcast(&tests, 1, MPI_INT, 0, comm);
        r->ok = 1;
        r->tests = tests;
        r->total = summarize(total, a->iters);
        const double o = r->compute > 0
                             ? 100.0 * (1.0 - (r->total.median - r->compute) / r->compute)
                             : 0;
        r->overlap = o < 0 ? 0 : o > 100 ? 100 : o;
        if (me == 0) {
            r->samples = pure;
            r->tsamples = total;
            pure = total = NULL;
        }
    }
    free(pure);
    free(total);
}

static void run_config(const bench_args *a, dataset *d, const config *c, MPI_Comm comm,
                       result *r)
{
    int tsize;
    MPI_Type_size(a->type, &tsize);
    if (a->nonblocking) {
        run_overlap_config(a, d, c, comm, r);
        return;
    }
    const int nph = a->phase_iters;
    /* auto learns on its first calls (docs/tuning.md, "Learning"): with warm-up asked for,
     * it gets at least the calls one class's learning takes with the default budget, so
     * the timed calls measure what a long-running application's calls cost; the warm-up's
     * time is reported apart. -w 0 times every call from the first. */
    const tuna_algorithm_info *self = tuna_algorithm_get(a->coll, c->opt.algorithm);
    bool is_auto = self && strcmp(self->name, "auto") == 0;
    /* (neighbor_alltoallv's auto runs the library's call outside a plan: nothing to learn) */
    int warmup = is_auto && !c->plan && a->coll != TUNA_NEIGHBOR_ALLTOALLV && a->warmup > 0 &&
                         a->warmup < BENCH_LEARN_WARMUP
                     ? BENCH_LEARN_WARMUP
                     : a->warmup;
    /* --until-learned: the learning warm-up's calls record tuna_stats, and it ends after the
     * first one (past -w) that ran the class's learned winner on every rank. */
    const bool until_learned = a->until_learned && warmup > a->warmup;
    int timed_end = warmup + a->iters, total = timed_end + nph;
    double *ta = calloc((size_t)a->iters, sizeof *ta);
    double *tv = calloc((size_t)a->iters, sizeof *tv);
    double *tr = calloc((size_t)(nph > 0 ? nph : 1), sizeof *tr);
    double *ph = calloc((size_t)(nph > 0 ? nph : 1) * TUNA_PHASE_COUNT, sizeof *ph);
    memset(r, 0, sizeof *r);
    int ok = ta && tv && tr && ph;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        snprintf(r->error, sizeof r->error, "out of memory for timings");
        free(ta), free(tv), free(tr), free(ph);
        return;
    }
    unsigned long temp = 0;
    int rounds = 0;
    tuna_stats_enable(0);
    /* auto: tuna_stats says what it chose, so recording is on for its last warm-up call
     * (untimed; earlier warm-up calls run as the timed ones do) or, with -w 0, for the
     * agreeing call below (alltoallv) or the first phase iteration. */
    tuna_plan plan = NULL;
    double warm_seconds = 0;
    if (c->plan) {
        /* The plan's init, once per configuration, timed apart (max over ranks). */
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        int prc = plan_tuna(a, d, c, comm, &plan);
        double v[2] = {MPI_Wtime() - t0, prc != MPI_SUCCESS};
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, comm);
        if (v[1] != 0) { /* init errors are agreed: every rank failed */
            snprintf(r->error, sizeof r->error, "plan init: %s",
                     prc != MPI_SUCCESS ? tuna_error_string(prc) : "failed on another rank");
            tuna_plan_free(&plan);
            free(ta), free(tv), free(tr), free(ph);
            return;
        }
        r->plan_seconds = v[0];
        tuna_plan_info info;
        tuna_plan_get_info(plan, &info);
        r->has_choice =
            choice_name(a->coll, info.algorithm, info.params, r->choice, sizeof r->choice);
        r->predicted = info.predicted;
        r->auto_source = 10 + info.source; /* 10 + TUNA_PLAN_SOURCE_*: a plan chose */
        r->ntried = info.ntried < TUNA_PLAN_MAX_TRIED ? info.ntried : TUNA_PLAN_MAX_TRIED;
        for (int t = 0; t < r->ntried; t++) {
            choice_name(a->coll, info.tried[t].algorithm, info.tried[t].params, r->tried[t],
                        sizeof r->tried[t]);
            r->tried_seconds[t] = info.tried[t].measured;
        }
        is_auto = false;
    }
    /* auto (alltoallv): a configuration is a new pattern (tuna_pattern_changed), whose
     * agreement (one allreduce on auto's first call after it) an application pays once per
     * TUNA_AUTO_PERIOD calls: it is made here, untimed, and the timed calls measure what
     * auto runs between agreements (docs/benchmarks.md). */
    if (is_auto && a->coll == TUNA_ALLTOALLV) {
        tuna_pattern_changed(comm);
        tuna_stats_enable(warmup == 0);
        int prc = call_tuna(a, d, c, comm);
        if (prc == MPI_SUCCESS && warmup == 0)
            record_choice(a, r);
        tuna_stats_enable(0);
    }
    for (int it = 0; it < total; it++) {
        const bool phase_it = it >= timed_end; /* recording on, untimed, no vendor call */
        const bool record =
            phase_it || (is_auto && it == warmup - 1) || (until_learned && it < warmup);
        tuna_stats_enable(record);
        double t_alg = 0, t_vendor = 0;
        int rc = MPI_SUCCESS;
        /* Alternate which goes first so neither always inherits the other's wake. */
        for (int k = 0; k < 2; k++) {
            int vendor_turn = (k == 0) == (it % 2 == 0);
            if (vendor_turn) {
                if (!a->vendor || phase_it)
                    continue;
                MPI_Barrier(comm);
                double t0 = MPI_Wtime();
                /* The first call fills the reference the check compares with; later ones
                 * write rbuf, as the algorithm does (same buffers, same cache state). */
                call_vendor(a, d, a->verify && it == 0 ? d->rref : d->rbuf, comm);
                t_vendor = MPI_Wtime() - t0;
            } else {
                if (it == 0 && a->verify)
                    memset(d->rbuf, SENTINEL, d->rbytes);
                MPI_Barrier(comm);
                double t0 = MPI_Wtime();
                rc = plan ? start_wait(plan) : call_tuna(a, d, c, comm);
                t_alg = MPI_Wtime() - t0;
            }
        }
        tuna_stats_enable(0);
        /* Errors are agreed collectively by tuna; check outside the timed region anyway. */
        int failed = rc != MPI_SUCCESS;
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, comm);
        if (failed) {
            char local[400];
            snprintf(local, sizeof local, "%s", rc != MPI_SUCCESS ? tuna_error_string(rc) : "");
            /* Rank 0 reports its message, or the lowest failing rank's. */
            int who = rc != MPI_SUCCESS ? me : P;
            MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, comm);
            MPI_Bcast(local, (int)sizeof local, MPI_CHAR, who, comm);
            snprintf(r->error, sizeof r->error, "rank %d: %s", who, local);
            tuna_plan_free(&plan);
            free(ta), free(tv), free(tr), free(ph);
            return;
        }
        if (it == 0 && a->verify)
            verify_or_abort(a, d, c, tsize, comm);
        if (until_learned && it < warmup - 1 && it + 1 >= a->warmup) {
            const int src = tuna_stats_last()->auto_source;
            int learned = src == TUNA_AUTO_SOURCE_LEARNED || src == TUNA_AUTO_SOURCE_WISDOM;
            MPI_Allreduce(MPI_IN_PLACE, &learned, 1, MPI_INT, MPI_LAND, comm);
            if (learned) { /* this call was the warm-up's last */
                warmup = it + 1;
                timed_end = warmup + a->iters;
                total = timed_end + nph;
            }
        }
        if (is_auto && (phase_it || it == warmup - 1) && !r->has_choice)
            record_choice(a, r); /* every rank ran the same choice */
        if (phase_it) {
            int k = it - timed_end;
            const tuna_stats *st = tuna_stats_last();
            tr[k] = t_alg;
            for (int p = 0; p < TUNA_PHASE_COUNT; p++)
                ph[(size_t)k * TUNA_PHASE_COUNT + p] = st->phase[p];
            if (st->temp_bytes > temp)
                temp = st->temp_bytes;
            if (st->rounds > rounds)
                rounds = st->rounds;
        } else if (it >= warmup) {
            int k = it - warmup;
            ta[k] = t_alg;
            tv[k] = t_vendor;
        } else {
            warm_seconds += t_alg;
        }
    }
    if (is_auto && (warmup > a->warmup || until_learned)) {
        r->learn_calls = warmup;
        MPI_Allreduce(&warm_seconds, &r->learn_seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
    }
    if (plan)
        tuna_plan_free(&plan);
    /* Per iteration, the maximum over ranks: the collective's time is its slowest rank's. */
    MPI_Reduce(me == 0 ? MPI_IN_PLACE : ta, ta, a->iters, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(me == 0 ? MPI_IN_PLACE : tv, tv, a->iters, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (nph > 0) {
        MPI_Reduce(me == 0 ? MPI_IN_PLACE : tr, tr, nph, MPI_DOUBLE, MPI_MAX, 0, comm);
        MPI_Reduce(me == 0 ? MPI_IN_PLACE : ph, ph, nph * TUNA_PHASE_COUNT, MPI_DOUBLE, MPI_MAX,
                   0, comm);
        MPI_Reduce(me == 0 ? MPI_IN_PLACE : &temp, &temp, 1, MPI_UNSIGNED_LONG, MPI_MAX, 0,
                   comm);
        MPI_Reduce(me == 0 ? MPI_IN_PLACE : &rounds, &rounds, 1, MPI_INT, MPI_MAX, 0, comm);
    }
    r->ok = 1;
    if (me == 0) {
        r->alg = summarize(ta, a->iters);
        r->vendor = summarize(tv, a->iters);
        r->speedup = r->alg.median > 0 ? r->vendor.median / r->alg.median : 0;
        if (nph > 0) {
            r->recorded_median = summarize(tr, nph).median;
            double *col = malloc((size_t)nph * sizeof *col);
            for (int p = 0; col && p < TUNA_PHASE_COUNT; p++) {
                for (int k = 0; k < nph; k++)
                    col[k] = ph[(size_t)k * TUNA_PHASE_COUNT + p];
                r->phase[p] = summarize(col, nph).median;
            }
            free(col);
        }
        r->temp_bytes = temp;
        r->rounds = rounds;
        r->samples = ta;
        r->vsamples = tv;
        ta = tv = NULL;
    }
    free(ta), free(tv), free(tr), free(ph);
}

/* ------------------------------------------------------------ output */

/* The "dist" object of a record: the distribution and the data set's global facts. */
static json_t *dist_json(const bench_args *a, const dataset *d)
{
    json_t *dist = json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f}", "name",
                             bench_dist_name(d->dist->kind), "spec", d->dist->spec, "unit",
                             a->unit_elements ? "elements" : "bytes", "type", a->type_name,
                             "seed", (json_int_t)a->seed, "total_bytes", d->total_bytes,
                             "max_rank_bytes", d->max_rank_bytes, "max_block_bytes",
                             d->max_block_bytes, "mean_block_bytes", d->mean_block_bytes,
                             "zero_fraction", d->zero_fraction);
    json_object_set_new(dist, "S", d->S >= 0 ? json_integer(d->S) : json_null());
    int tsize = a->type_size;
    json_object_set_new(dist, "S_bytes",
                        d->S >= 0 ? json_integer(a->unit_elements ? d->S * tsize : d->S)
                                  : json_null());
    json_object_set_new(dist, "type_size", json_integer(tsize));
    if (d->max_node_offnode_send_bytes >= 0) { /* integers: exact at any size */
        json_object_set_new(dist, "max_node_offnode_send_bytes",
                            json_integer((json_int_t)d->max_node_offnode_send_bytes));
        json_object_set_new(dist, "max_node_offnode_recv_bytes",
                            json_integer((json_int_t)d->max_node_offnode_recv_bytes));
    }
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV) { /* the neighborhood: edges, not P x P blocks */
        json_object_del(dist, "zero_fraction");
        json_object_del(dist, "max_node_offnode_recv_bytes");
        json_t *nb = json_pack("{s:s,s:I,s:I,s:I}", "topology", d->topology, "edges",
                               (json_int_t)d->edges, "max_outdegree", (json_int_t)d->max_degree,
                               "max_node_offnode_edges", (json_int_t)d->max_node_offnode_edges);
        if (d->ndims) {
            json_object_set_new(dist, "name", json_string("stencil"));
            json_t *g = json_array();
            for (int k = 0; k < d->ndims; k++)
                json_array_append_new(g, json_integer(d->grid[k]));
            json_object_set_new(nb, "grid", g);
        } else {
            json_object_set_new(dist, "file", json_string(d->dist->path));
            json_object_set_new(dist, "scale", json_real(d->dist->scale));
        }
        json_object_set_new(dist, "neighbors", nb);
    } else if (a->coll != TUNA_ALLTOALLV) { /* no distribution: every rank contributes S */
        json_object_set_new(dist, "name", json_string("fixed"));
        json_object_set_new(dist, "spec", json_string("fixed"));
        json_object_set_new(dist, "count", json_integer(d->count));
        if (a->coll == TUNA_ALLREDUCE)
            json_object_set_new(dist, "op", json_string("sum"));
    } else if (d->dist->kind == DIST_NORMAL) {
        json_object_set_new(dist, "mean", json_real(d->dist->mean));
        json_object_set_new(dist, "sd", json_real(d->dist->sd));
    } else if (d->dist->kind == DIST_POWERLAW)
        json_object_set_new(dist, "exponent", json_real(d->dist->exponent));
    else if (d->dist->kind == DIST_SPARSE)
        json_object_set_new(dist, "zero", json_real(d->dist->zero));
    else if (d->dist->kind == DIST_FFT_N2)
        json_object_set_new(dist, "short", json_real(d->dist->shortfrac));
    else if (!bench_dist_uses_size(d->dist)) {
        json_object_set_new(dist, "file", json_string(d->dist->path));
        json_object_set_new(dist, "scale", json_real(d->dist->scale));
    }
    return dist;
}

static json_t *record_json(const bench_args *a, const tuna_run_meta *ri, const dataset *d,
                           const config *c, const result *r, int rpn_logical, int index,
                           int count)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(a->coll, c->opt.algorithm);
    json_t *params = json_object();
    for (int p = 0; p < info->nparams; p++)
        json_object_set_new(params, info->params[p].name, json_integer(c->opt.value[p]));
    json_t *dist = dist_json(a, d);
    json_t *machine = tuna_run_meta_machine_json(ri, rpn_logical);
    json_t *run = tuna_run_meta_run_json(ri);
    json_object_set_new(run, "index", json_integer(index));
    json_object_set_new(run, "count", json_integer(count));
    json_object_set_new(run, "iterations", json_integer(a->iters));
    json_object_set_new(run, "warmup", json_integer(a->warmup));
    json_object_set_new(run, "phase_iterations", json_integer(a->phase_iters));
    json_t *rec = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:i}", "collective", tuna_collective_name(a->coll),
                            "algorithm", info->name, "params", params, "dist", dist, "machine",
                            machine, "run", run, "ranks_per_node_env", rpn_logical);
    json_object_set_new(rec, "options", json_string(c->name));
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV) { /* the configuration's form; vendor: blocking */
        char opts[256];
        tuna_options_format(&c->opt, opts, sizeof opts);
        json_object_set_new(rec, "options", json_string(opts));
        json_object_set_new(rec, "form", json_string(a->nonblocking ? "nonblocking"
                                                     : c->plan      ? "persistent"
                                                                    : "blocking"));
        json_object_set_new(rec, "vendor_form", json_string("blocking"));
    }
    json_object_set_new(rec, "status", json_string(r->ok ? "ok" : "error"));
    json_object_set_new(rec, "verified", json_boolean(r->ok && a->verify));
    json_object_set_new(rec, "vendor_measured", json_boolean(a->vendor));
    /* The timed calls never record phases (run_config); older records lack the key. */
    json_object_set_new(rec, "timed_with_stats", json_false());
    if (!r->ok) {
        json_object_set_new(rec, "error", json_string(r->error));
        return rec;
    }
    json_object_set_new(rec, "time", summary_json(&r->alg));
    /* --no-vendor: vendor, speedup and vendor_samples are null (not measured). */
    json_object_set_new(rec, "vendor", a->vendor ? summary_json(&r->vendor) : json_null());
    json_object_set_new(rec, "speedup", a->vendor ? json_real(r->speedup) : json_null());
    if (r->has_choice) { /* auto: its choice (last call before the timed ones, or the first
                            phase iteration), model time and source */
        json_t *ch = json_object();
        json_object_set_new(ch, "options", json_string(r->choice));
        json_object_set_new(ch, "predicted", json_real(r->predicted));
        json_object_set_new(ch, "source", json_integer(r->auto_source));
        json_object_set_new(rec, "auto_choice", ch);
    }
    if (r->learn_calls) /* auto: the warm-up calls its learning had, and their time */
        json_object_set_new(rec, "learning", json_pack("{s:i, s:f}", "calls", r->learn_calls,
                                                       "seconds", r->learn_seconds));
    if (c->plan) { /* the plan's init, max over ranks; auto_choice.source is 10 + its source */
        json_object_set_new(rec, "plan_seconds", json_real(r->plan_seconds));
        json_t *tried = json_array();
        for (int t = 0; t < r->ntried; t++)
            json_array_append_new(tried, json_pack("{s:s, s:f}", "options", r->tried[t],
                                                   "seconds", r->tried_seconds[t]));
        json_object_set_new(rec, "plan_tried", tried);
    }
    json_t *samples = json_array(), *vsamples = a->vendor ? json_array() : json_null();
    for (int k = 0; k < a->iters; k++) {
        json_array_append_new(samples, json_real(r->samples[k]));
        if (a->vendor)
            json_array_append_new(vsamples, json_real(r->vsamples[k]));
    }
    json_object_set_new(rec, "samples", samples);
    json_object_set_new(rec, "vendor_samples", vsamples);
    if (a->nonblocking) { /* time and samples: the pure operation; here the overlapped one */
        const char *progress = getenv("TUNA_PROGRESS");
        json_t *ts = json_array();
        for (int k = 0; k < a->iters; k++)
            json_array_append_new(ts, json_real(r->tsamples[k]));
        json_object_set_new(
            rec, "nonblocking",
            json_pack("{s:f, s:s, s:f, s:o, s:o, s:f, s:i, s:s}", "poll", a->poll, "progress",
                      progress && *progress ? progress : "poll", "compute", r->compute,
                      "total", summary_json(&r->total), "total_samples", ts,
                      "overlap_percent", r->overlap, "tests", r->tests, "ran",
                      r->has_choice ? r->choice : "?"));
    }
    if (a->phases) {
        json_t *ph = json_object();
        for (int p = 0; p < TUNA_PHASE_COUNT; p++)
            json_object_set_new(ph, tuna_phase_name((tuna_phase)p), json_real(r->phase[p]));
        json_object_set_new(rec, "phases", ph);
        json_object_set_new(rec, "recorded_median", json_real(r->recorded_median));
        json_object_set_new(rec, "temp_bytes", json_integer((json_int_t)r->temp_bytes));
        json_object_set_new(rec, "rounds", json_integer(r->rounds));
    } else {
        json_object_set_new(rec, "phases", json_null());
        json_object_set_new(rec, "recorded_median", json_null());
        json_object_set_new(rec, "temp_bytes", json_null());
        json_object_set_new(rec, "rounds", json_null());
    }
    return rec;
}

static void print_group_header(const bench_args *a, const dataset *d, int rpn_logical)
{
    char size[64];
    if (d->S >= 0)
        snprintf(size, sizeof size, "S=%ld %s", d->S, a->unit_elements ? "elements" : "B");
    else
        snprintf(size, sizeof size, "from file");
    char rpn[32] = "real nodes";
    if (rpn_logical > 0)
        snprintf(rpn, sizeof rpn, "%d ranks/node", rpn_logical);
    if (a->coll == TUNA_NEIGHBOR_ALLTOALLV) {
        char grid[48] = "";
        if (d->ndims == 2)
            snprintf(grid, sizeof grid, " %dx%d", d->grid[0], d->grid[1]);
        else if (d->ndims == 3)
            snprintf(grid, sizeof grid, " %dx%dx%d", d->grid[0], d->grid[1], d->grid[2]);
        printf("\n== neighbor_alltoallv  %s%s  %s  type %s  P=%d  %s  (%s, %.0f edges, max "
               "out-degree %.0f, mean edge %.0f B, max edge %.0f B; busiest node: %.0f edges, "
               "%.0f B off-node)\n",
               d->dist->spec, grid, size, a->type_name, P, rpn, d->topology, d->edges,
               d->max_degree, d->mean_block_bytes, d->max_block_bytes,
               d->max_node_offnode_edges, d->max_node_offnode_send_bytes);
    } else if (a->coll != TUNA_ALLTOALLV)
        printf("\n== %s  %s per %s (%d elements)  type %s%s  P=%d  %s\n", tuna_collective_name(a->coll),
               size, a->coll == TUNA_ALLTOALL ? "block" : "rank", d->count, a->type_name, a->coll == TUNA_ALLREDUCE ? "  op sum" : "", P,
               rpn);
    else
        printf("\n== %s  %s  type %s  P=%d  %s  (mean block %.0f B, max block %.0f B, %.0f%% "
               "empty)\n",
               d->dist->spec, size, a->type_name, P, rpn, d->mean_block_bytes,
               d->max_block_bytes, 100.0 * d->zero_fraction);
    if (a->nonblocking)
        printf("%-36s %10s %10s %10s %10s %8s %6s\n", "algorithm", "pure_us", "p90_us",
               "compute_us", "total_us", "overlap", "tests");
    else
        printf("%-36s %10s %10s %10s %7s %10s %8s %10s\n", "algorithm", "median_us", "min_us",
               "p90_us", "spread", "vendor_us", "speedup", "temp_KiB");
}

static void print_row(const bench_args *a, const config *c, const result *r, int best)
{
    const int vendor = a->vendor;
    if (!r->ok) {
        printf("%-36s error: %s\n", c->name, r->error);
        return;
    }
    if (a->nonblocking) {
        printf("%-36s %10.1f %10.1f %10.1f %10.1f %7.1f%% %6d\n", c->name, 1e6 * r->alg.median,
               1e6 * r->alg.p90, 1e6 * r->compute, 1e6 * r->total.median, r->overlap,
               r->tests);
        return;
    }
    char vt[32] = "-", sp[32] = "-"; /* --no-vendor: not measured */
    if (vendor) {
        snprintf(vt, sizeof vt, "%.1f", 1e6 * r->vendor.median);
        snprintf(sp, sizeof sp, "%.2fx", r->speedup);
    }
    printf("%-36s %10.1f %10.1f %10.1f %6.0f%% %10s %8s %10.1f%s\n", c->name,
           1e6 * r->alg.median, 1e6 * r->alg.min, 1e6 * r->alg.p90, 100 * r->alg.spread, vt,
           sp, (double)r->temp_bytes / 1024.0, best ? "  *" : "");
    if (r->learn_calls)
        printf("%-36s learning: %d warm-up calls, %.1f us in all (%.1f median calls' worth)\n",
               "", r->learn_calls, 1e6 * r->learn_seconds,
               r->alg.median > 0 ? r->learn_seconds / r->alg.median : 0);
    if (r->auto_source >= 10) { /* --plan: what the planner chose and what init cost */
        static const char *const how[] = {"forced", "estimate", "measure", "wisdom"};
        int src = r->auto_source - 10;
        printf("%-36s plan init %.3f ms (%s): %s\n", "", 1e3 * r->plan_seconds,
               src >= 0 && src < 4 ? how[src] : "?", r->choice);
    }
}

/* ------------------------------------------------------------ main */

static int env_rank_zero(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

/* bench_dist_sum_fn of --facts: this one process holds every row. */
static long long sum_alone(long long local, void *ctx)
{
    (void)ctx;
    return local;
}

/* One rank's row of --matrix: the bytes it sends to each rank (srow holds units). */
static json_t *bytes_row(const bench_args *a, const bench_dist *dist, const long *srow)
{
    json_t *row = json_array();
    for (int j = 0; row && j < P; j++) {
        json_int_t n = (json_int_t)to_elements(a, dist, srow[j], a->type_size);
        json_array_append_new(row, json_integer(n * a->type_size));
    }
    return row;
}

/*
 * --facts: the global facts dataset_make computes over the ranks, for procs ranks on nodes of
 * q consecutive ranks, computed here from every row (rank_bytes_of, as the ranks do), printed
 * as the records' "dist" objects. Returns 0, or 2 with a message.
 */
static int print_facts(const bench_args *a, int procs, int q)
{
    P = procs;
    q = q > 0 && q < procs ? q : procs;
    char err[1024] = "";
    long_list sizes = {0};
    spec_sizes(a->sizes, &sizes, err, sizeof err);
    int *nodes = malloc((size_t)P * sizeof *nodes);
    long *srow = malloc((size_t)P * sizeof *srow), *rcol = malloc((size_t)P * sizeof *rcol);
    int nnodes = (P + q - 1) / q;
    double *node_sent = calloc((size_t)nnodes, sizeof *node_sent);
    double *node_received = calloc((size_t)nnodes, sizeof *node_received);
    int rc = nodes && srow && rcol && node_sent && node_received ? 0 : 2;
    if (rc)
        snprintf(err, sizeof err, "out of memory");
    for (int i = 0; !rc && i < P; i++)
        nodes[i] = i / q;
    for (int di = 0; !rc && di < a->ndists; di++) {
        const bench_dist *dist = &a->dists[di];
        int from_file = !bench_dist_uses_size(dist);
        long *matrix = NULL;
        if (from_file && (!(matrix = malloc((size_t)P * (size_t)P * sizeof *matrix)) ||
                          bench_dist_read(dist, P, matrix, err, sizeof err) != 0)) {
            if (!matrix)
                snprintf(err, sizeof err, "out of memory for the %d x %d size matrix", P, P);
            free(matrix);
            rc = 2;
            break;
        }
        for (int si = 0; !rc && si < (from_file ? 1 : sizes.n); si++) {
            long S = sizes.v[si];
            bench_dist_cut cut;
            if (!from_file && bench_dist_prepare(dist, P, a->seed, 0, P, sum_alone, NULL, &cut,
                                                 err, sizeof err) != 0) {
                rc = 2;
                break;
            }
            dataset d;
            memset(&d, 0, sizeof d);
            d.dist = dist;
            d.S = from_file ? -1 : S;
            /* --matrix: the sizes the ranks draw, for tools that price a schedule block by
             * block (the attainable bound), so no Python code replays the generators. */
            json_t *m = a->facts_matrix ? json_array() : NULL;
            memset(node_sent, 0, (size_t)nnodes * sizeof *node_sent);
            memset(node_received, 0, (size_t)nnodes * sizeof *node_received);
            for (int i = 0; i < P; i++) {
                for (int j = 0; j < P; j++) {
                    srow[j] = from_file ? matrix[(size_t)i * P + j]
                                        : bench_dist_block(dist, P, S, a->seed, &cut, i, j);
                    rcol[j] = from_file ? matrix[(size_t)j * P + i]
                                        : bench_dist_block(dist, P, S, a->seed, &cut, j, i);
                }
                rank_bytes rb = rank_bytes_of(a, dist, srow, rcol, a->type_size, nodes, i);
                if (m)
                    json_array_append_new(m, bytes_row(a, dist, srow));
                d.total_bytes += rb.sent;
                d.zero_fraction += rb.empty_blocks;
                d.max_rank_bytes = rb.sent > d.max_rank_bytes ? rb.sent : d.max_rank_bytes;
                d.max_block_bytes = rb.max_block > d.max_block_bytes ? rb.max_block
                                                                     : d.max_block_bytes;
                node_sent[nodes[i]] += rb.offnode_sent;
                node_received[nodes[i]] += rb.offnode_received;
            }
            double n = (double)P * (double)P;
            d.mean_block_bytes = d.total_bytes / n;
            d.zero_fraction /= n;
            for (int k = 0; k < nnodes; k++) {
                if (node_sent[k] > d.max_node_offnode_send_bytes)
                    d.max_node_offnode_send_bytes = node_sent[k];
                if (node_received[k] > d.max_node_offnode_recv_bytes)
                    d.max_node_offnode_recv_bytes = node_received[k];
            }
            json_t *rec = json_pack("{s:s,s:i,s:i,s:i,s:o}", "collective", "alltoallv", "P", P,
                                    "ranks_per_node", q, "nodes", nnodes, "dist",
                                    dist_json(a, &d));
            if (rec && m)
                json_object_set_new(rec, "matrix", m);
            else
                json_decref(m); /* NULL-safe */
            char *line = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(9));
            if (line)
                puts(line);
            free(line);
            json_decref(rec);
        }
        free(matrix);
    }
    if (rc)
        fprintf(stderr, "tuna-bench: %s\n", err);
    free(nodes), free(srow), free(rcol), free(node_sent), free(node_received);
    long_list_free(&sizes);
    return rc;
}

/*
 * Errors every rank finds alike: rank 0 prints and exits with 2, the others exit with 0, so the
 * launcher cannot kill rank 0 (on another rank's non-zero exit) before its message is out.
 */
static int fail_all(const char *msg)
{
    if (me == 0) {
        fprintf(stderr, "tuna-bench: %s\n", msg);
        fflush(stderr);
    }
    MPI_Finalize();
    return me == 0 ? 2 : 0;
}

/*
 * node_of and node_comm (collective); 0 on every rank if out of memory. The node's members
 * come from its group, with no communication: an MPI_Allgather of node ids cost SMPI's
 * default allgather P^2 simultaneous messages (over 60 s of simulation at P = 256).
 */
static int physical_nodes(void)
{
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node_comm);
    int local;
    MPI_Comm_size(node_comm, &local);
    node_of = calloc((size_t)P, sizeof *node_of);
    int *ranks = malloc((size_t)local * 2 * sizeof *ranks);
    int ok = node_of && ranks;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (ok) {
        MPI_Group world_group, node_group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Comm_group(node_comm, &node_group);
        for (int i = 0; i < local; i++)
            ranks[i] = i;
        MPI_Group_translate_ranks(node_group, local, ranks, world_group, ranks + local);
        for (int i = 0; i < local; i++)
            node_of[ranks[local + i]] = 1;
        MPI_Group_free(&node_group);
        MPI_Group_free(&world_group);
    }
    free(ranks);
    return ok;
}

int main(int argc, char **argv)
{
    /* alltoallw's pencil transpose has options of its own (alltoallw.c). */
    if (bench_alltoallw_asked(argc, argv))
        return bench_alltoallw_main(argc, argv);
    bench_args a;
    char err[1024] = "";
    int prc = parse_args(argc, argv, &a, err, sizeof err);
    /* --help, --list and command-line errors need no MPI (so no launcher either). */
    if (prc == 0 && (a.help || a.list)) {
        if (env_rank_zero()) {
            if (a.help)
                usage(stdout);
            else
                print_list(a.coll);
        }
        return 0;
    }
    if (prc == 0 && a.facts_procs) {
        long_list rpn = {0};
        if (a.rpn[0] && spec_sizes(a.rpn, &rpn, err, sizeof err) != 0) {
            fprintf(stderr, "tuna-bench: %s\n", err);
            return 2;
        }
        int rc = print_facts(&a, a.facts_procs, rpn.n ? (int)rpn.v[0] : 0);
        long_list_free(&rpn);
        return rc;
    }
    if (prc != 0) {
        if (!env_rank_zero())
            return 0; /* rank 0 reports and fails the job (see fail_all) */
        fprintf(stderr, "tuna-bench: %s\n", err);
        return 2;
    }

    /* TUNA_PROGRESS=thread: tuna's progress thread calls MPI beside the main thread. */
    const char *progress = getenv("TUNA_PROGRESS");
    if (progress && strcmp(progress, "thread") == 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (!physical_nodes())
        return fail_all("out of memory");

    config *cfg = NULL;
    int ncfg = 0;
    if (build_configs(&a, &cfg, &ncfg, err, sizeof err) != 0)
        return fail_all(err);
    long_list sizes = {0};
    spec_sizes(a.sizes, &sizes, err, sizeof err);
    long_list rpns = {0};
    if (a.rpn[0]) {
        if (spec_sizes(a.rpn, &rpns, err, sizeof err) != 0) {
            long_list_free(&sizes);
            free(cfg);
            return fail_all(err);
        }
    } else {
        const char *env = getenv("TUNA_RANKS_PER_NODE");
        long_list_add(&rpns, env && atoi(env) > 0 ? atoi(env) : 0);
    }

    tuna_run_meta ri;
    tuna_run_meta_init(&ri, NULL, a.run_name, argc, argv);

    FILE *json = NULL;
    int jok = 1;
    if (me == 0 && a.json_path) {
        json = fopen(a.json_path, a.json_append ? "a" : "w");
        if (!json) {
            snprintf(err, sizeof err, "cannot open --json file '%s'", a.json_path);
            jok = 0;
        }
    }
    MPI_Bcast(&jok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!jok) {
        long_list_free(&sizes);
        long_list_free(&rpns);
        free(cfg);
        return fail_all(err);
    }
    tuna_stats_enable(0); /* run_config turns recording on for its untimed calls only */

    int nfile = 0;
    for (int i = 0; i < a.ndists; i++)
        nfile += !bench_dist_uses_size(&a.dists[i]);
    int total = rpns.n * ((a.ndists - nfile) * sizes.n + nfile) * ncfg;
    if (me == 0) {
        printf("tuna-bench %s: %s, P=%d on %d node(s) of %s (load %.1f); %d configuration(s), %d "
               "timed + %d warm-up + %d phase iterations each, %s; %s\n",
               tuna_collective_name(a.coll), ri.library, P, ri.nodes, ri.hostname, ri.loadavg, total,
               a.iters, a.warmup, a.phase_iters,
               a.vendor ? "interleaved with vendor (PMPI)" : "vendor not measured",
               a.verify ? "first call verified" : "NOT verified (--no-verify)");
        fflush(stdout);
    }
    int index = 0, status = 0;
    result *res = calloc((size_t)ncfg, sizeof *res);
    if (!res) {
        long_list_free(&sizes);
        long_list_free(&rpns);
        free(cfg);
        return fail_all("out of memory");
    }
    for (int q = 0; q < rpns.n && status == 0; q++) {
        int rpn = (int)rpns.v[q];
        /* The context reads TUNA_RANKS_PER_NODE when a communicator is first used: a fresh one. */
        if (rpn > 0) {
            char v[32];
            snprintf(v, sizeof v, "%d", rpn);
            setenv("TUNA_RANKS_PER_NODE", v, 1);
        } else
            unsetenv("TUNA_RANKS_PER_NODE");
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        for (int di = 0; di < a.ndists && status == 0; di++) {
            const bench_dist *dist = &a.dists[di];
            int ns = bench_dist_uses_size(dist) ? sizes.n : 1;
            for (int si = 0; si < ns && status == 0; si++) {
                dataset d;
                int made =
                    a.coll == TUNA_ALLTOALLV
                        ? dataset_make(&a, dist, sizes.v[si], &d, err, sizeof err)
                    : a.coll == TUNA_NEIGHBOR_ALLTOALLV
                        ? dataset_make_nbr(&a, dist, a.stencil_dim[di], sizes.v[si], rpn, &d,
                                           err, sizeof err)
                        : dataset_make_coll(&a, dist, sizes.v[si], &d, err, sizeof err);
                if (made != 0) {
                    if (me == 0)
                        fprintf(stderr, "tuna-bench: %s: %s\n", dist->spec, err);
                    status = 2;
                    break;
                }
                /* Reference result, sentinel-filled first (computed locally without vendor). */
                /* neighbor_alltoallv runs on the data set's topology communicator. */
                MPI_Comm ccomm = a.coll == TUNA_NEIGHBOR_ALLTOALLV ? d.ncomm : comm;
                if (a.verify && a.vendor) {
                    memset(d.rref, SENTINEL, d.rbytes);
                    call_vendor(&a, &d, d.rref, ccomm);
                }
                for (int ci = 0; ci < ncfg; ci++) {
                    index++;
                    if (me == 0 && !a.quiet) {
                        fprintf(stderr, "[%d/%d] %s S=%ld rpn=%d %s\n", index, total, dist->spec,
                                d.S, rpn, cfg[ci].name);
                        fflush(stderr);
                    }
                    run_config(&a, &d, &cfg[ci], ccomm, &res[ci]);
                    if (me == 0 && json) {
                        json_t *rec = record_json(&a, &ri, &d, &cfg[ci], &res[ci], rpn, index,
                                                  total);
                        char *line = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(9));
                        if (line) {
                            fputs(line, json);
                            fputc('\n', json);
                            fflush(json);
                            free(line);
                        }
                        json_decref(rec);
                    }
                }
                if (me == 0) {
                    /* Mark each algorithm's fastest configuration (by median). */
                    print_group_header(&a, &d, rpn);
                    for (int ci = 0; ci < ncfg; ci++) {
                        int best = res[ci].ok;
                        for (int cj = 0; cj < ncfg && best; cj++)
                            if (cj != ci && res[cj].ok &&
                                cfg[cj].opt.algorithm == cfg[ci].opt.algorithm &&
                                cfg[cj].plan == cfg[ci].plan &&
                                (res[cj].alg.median < res[ci].alg.median ||
                                 (res[cj].alg.median == res[ci].alg.median && cj < ci)))
                                best = 0;
                        int multi = 0;
                        for (int cj = 0; cj < ncfg; cj++)
                            multi += cfg[cj].opt.algorithm == cfg[ci].opt.algorithm &&
                                     cfg[cj].plan == cfg[ci].plan;
                        print_row(&a, &cfg[ci], &res[ci], best && multi > 1);
                    }
                    fflush(stdout);
                }
                for (int ci = 0; ci < ncfg; ci++) {
                    free(res[ci].samples);
                    free(res[ci].vsamples);
                    free(res[ci].tsamples);
                    memset(&res[ci], 0, sizeof res[ci]);
                }
                dataset_free(&d);
            }
        }
        MPI_Comm_free(&comm);
    }
    if (me == 0 && a.nonblocking) {
        printf("\ntimes: per iteration the maximum over ranks, medians; pure = start + wait; "
               "total = start, computation of the pure median's length (tested every %g of "
               "it), wait; overlap = 100 (1 - (total - computation) / pure), in [0, 100]; "
               "progress: %s\n",
               a.poll, progress && *progress ? progress : "poll");
    } else if (me == 0) {
        printf("\ntimes: per iteration the maximum over ranks; spread = (p90 - min) / median; "
               "speedup = vendor median / algorithm median (same run, interleaved); "
               "* = fastest parameters of an algorithm\n"
               "timed calls run with tuna_stats off (what a user's call costs); %s\n",
               a.phases ? "phases and temp_KiB come from separate calls after them, recording "
                          "on, not timed (--phase-iters)"
                        : "no phase breakdown (--no-phases): temp_KiB not recorded");
        fflush(stdout);
    }
    if (json)
        fclose(json);
    free(res);
    free(cfg);
    long_list_free(&sizes);
    long_list_free(&rpns);
    free(node_of);
    MPI_Comm_free(&node_comm);
    MPI_Finalize();
    return me == 0 ? status : 0; /* rank 0 reported any error (see fail_all) */
}
