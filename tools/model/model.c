/*
 * tuna-model: the cost model of auto (docs/tuning.md) for given inputs, without a run.
 *
 *   TUNA_PROFILE=profile.json tuna-model < inputs
 *
 * Each input line: P Q N MAX_BLOCK MEAN_BLOCK MAX_RANK_BYTES ZERO_FRACTION OPTIONS [reuse]
 * (the global statistics every rank agrees on, bytes; Q = 0 for unequal nodes; OPTIONS an
 * alltoallv option string; `reuse`: priced as for auto's calls between agreements, where an
 * algorithm that needs the call's own statistics pays their allreduce). Each output line:
 * the predicted seconds of OPTIONS with those
 * statistics, then OPTIONS resolved ("auto": what auto would run, from the model or the
 * TUNA_TUNING table). vendor is predicted as the algorithm that models it (the profile's
 * vendor_alltoallv, else the guess for the MPI library tuna-model runs on). A line that
 * cannot be evaluated prints "error: REASON" and the tool goes on (exit status 1 at the end).
 * `tuna tune model` (python/tuna_tools/tune.py) drives it over tuna-bench JSON lines.
 *
 *   tuna-model --check-tuning FILE
 *
 * loads a tuning table as auto does (every collective's entries) and prints their counts, or
 * the reader's error with exit status 1: `tuna tune check` and `tuna tune build` run it, so a
 * table they pass is one the library accepts.
 */
#include "tuna_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "name:key=value,..." of a registry row and resolved parameters. */
static void format_options(int alg, const long *param, char *out, size_t len)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(TUNA_ALLTOALLV, alg);
    int n = snprintf(out, len, "%s", info->name);
    for (int p = 0; p < info->nparams && n > 0 && (size_t)n < len; p++)
        n += snprintf(out + n, len - (size_t)n, "%s%s=%ld", p ? "," : ":", info->params[p].name,
                      param[p]);
}

/* One input line; 0 on success (the answer printed), 1 after printing an error. */
static int evaluate(const tuna_profile *prof, const char *line)
{
    int P, Q, N;
    double B, mean, tmax, z;
    char opts[256], mode[16] = "";
    int fields = sscanf(line, "%d %d %d %lf %lf %lf %lf %255s %15s", &P, &Q, &N, &B, &mean,
                        &tmax, &z, opts, mode);
    if (fields < 8 || (fields == 9 && strcmp(mode, "reuse") != 0)) {
        printf("error: expected P Q N MAX_BLOCK MEAN_BLOCK MAX_RANK_BYTES ZERO_FRACTION "
               "OPTIONS [reuse]\n");
        return 1;
    }
    if (P < 1 || N < 1 || Q < 0 || (Q > 0 && (long)Q * N != P) || B < 0 || mean < 0 ||
        tmax < 0 || z < 0 || z > 1) {
        printf("error: out of range (P >= 1, N >= 1, Q = 0 or Q * N = P, sizes >= 0, "
               "0 <= zero fraction <= 1)\n");
        return 1;
    }
    tuna_select_input in = {.P = P, .Q = Q, .N = N, .max_block = B, .mean_block = mean,
                            .total_max = tmax, .zero_fraction = z, .agree_pending = fields == 9};
    tuna_options o;
    if (tuna_options_parse(opts, TUNA_ALLTOALLV, &o) != MPI_SUCCESS) {
        printf("error: %s\n", tuna_error_string(MPI_ERR_ARG));
        return 1;
    }
    char text[256];
    const tuna_registry *reg = tuna_registry_of(TUNA_ALLTOALLV);
    const tuna_row_kind kind = tuna_registry_row(reg, o.algorithm)->kind;
    if (kind == TUNA_ROW_AUTO) {
        tuna_choice c;
        int rc = tuna_select_alltoallv(reg, &in, &c);
        if (rc != MPI_SUCCESS) {
            printf("error: %s\n", tuna_error_string(rc));
            return 1;
        }
        format_options(c.algorithm, c.param, text, sizeof text);
        printf("%.9g %s\n", c.predicted, text);
        return 0;
    }
    int alg = o.algorithm;
    if (kind == TUNA_ROW_VENDOR && tuna_select_vendor_model(P, &o) == TUNA_VENDOR_MODEL_NONE) {
        printf("error: nothing models vendor (no vendor_alltoallv in the profile, MPI library "
               "unknown)\n");
        return 1;
    }
    long param[TUNA_MAX_PARAMS];
    tuna_params_resolve(tuna_algorithm_get(TUNA_ALLTOALLV, o.algorithm), o.value, P, param);
    double t = tuna_model_cost(reg, prof, &in, o.algorithm, param);
    if (t >= 0 && in.agree_pending &&
        (tuna_registry_row(reg, o.algorithm)->needs & TUNA_NEEDS_GLOBAL_STATS))
        t += tuna_select_agreement_time(&in); /* the allreduce it pays between agreements */
    format_options(o.algorithm, param, text, sizeof text);
    printf("%.9g %s%s\n", t, alg != o.algorithm ? "vendor=" : "", text);
    return 0;
}

/* --check-tuning: 0 if libtuna loads the table for every collective, else 1. */
static int check_tuning(const char *path)
{
    int counts[3];
    for (int c = TUNA_ALLTOALLV; c <= TUNA_ALLREDUCE; c++) {
        tuna_tuning t = {0};
        int rc = tuna_tuning_load(path, (tuna_collective)c, &t);
        if (rc != MPI_SUCCESS) {
            printf("error: %s\n", tuna_error_string(rc));
            return 1;
        }
        counts[c] = t.n;
        tuna_tuning_free(&t);
    }
    printf("%s: %d %s, %d %s, %d %s entries\n", path, counts[0],
           tuna_collective_name(TUNA_ALLTOALLV), counts[1], tuna_collective_name(TUNA_ALLGATHER),
           counts[2], tuna_collective_name(TUNA_ALLREDUCE));
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "--check-tuning") == 0) {
        int rc = check_tuning(argv[2]);
        MPI_Finalize();
        return rc;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: TUNA_PROFILE=FILE tuna-model < inputs\n"
                        "input lines: P Q N MAX_BLOCK MEAN_BLOCK MAX_RANK_BYTES "
                        "ZERO_FRACTION OPTIONS\n"
                        "       tuna-model --check-tuning FILE\n");
        MPI_Finalize();
        return strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    const tuna_profile *prof;
    int rc = tuna_select_profile(&prof);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "tuna-model: %s\n", tuna_error_string(rc));
        MPI_Finalize();
        return 2;
    }
    int bad = 0;
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == '\n' || line[0] == '#')
            continue;
        bad |= evaluate(prof, line);
        fflush(stdout);
    }
    MPI_Finalize();
    return bad;
}
