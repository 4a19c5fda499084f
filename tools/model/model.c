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
 * A line that starts with a collective's name prices that collective instead:
 *
 *   allgather P Q N BYTES OPTIONS                    BYTES: one rank's block
 *   allreduce P Q N BYTES OPTIONS [noncommutative]   BYTES: the vector; the op commutes
 *                                                    unless `noncommutative` is given
 *
 * (OPTIONS an allgather / allreduce option string; `auto` prints what auto would run, `vendor`
 * included where the model finds the library's own call cheaper; vendor itself has no model
 * there and is an error). Output lines as above.
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
static void format_options(tuna_collective coll, int alg, const long *param, char *out,
                           size_t len)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(coll, alg);
    int n = snprintf(out, len, "%s", info->name);
    for (int p = 0; p < info->nparams && n > 0 && (size_t)n < len; p++)
        n += snprintf(out + n, len - (size_t)n, "%s%s=%ld", p ? "," : ":", info->params[p].name,
                      param[p]);
}

/* What auto would run for `in` and its predicted time; 0, or 1 after printing an error. */
static int print_auto(const tuna_registry *reg, const tuna_select_input *in)
{
    tuna_choice c;
    int rc = reg->coll == TUNA_ALLTOALLV ? tuna_select_alltoallv(reg, in, &c)
                                         : tuna_select_collective(reg, in, &c);
    if (rc != MPI_SUCCESS) {
        printf("error: %s\n", tuna_error_string(rc));
        return 1;
    }
    char text[256];
    format_options(reg->coll, c.algorithm, c.param, text, sizeof text);
    printf("%.9g %s\n", c.predicted, text);
    return 0;
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
    if (kind == TUNA_ROW_AUTO)
        return print_auto(reg, &in);
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
    format_options(TUNA_ALLTOALLV, o.algorithm, param, text, sizeof text);
    printf("%.9g %s%s\n", t, alg != o.algorithm ? "vendor=" : "", text);
    return 0;
}

/* An allgather or allreduce line (after the collective's name); 0 on success, 1 after
 * printing an error. */
static int evaluate_collective(const tuna_profile *prof, tuna_collective coll, const char *line)
{
    int P, Q, N;
    double bytes;
    char opts[256], op[32] = "";
    int fields = sscanf(line, "%d %d %d %lf %255s %31s", &P, &Q, &N, &bytes, opts, op);
    const bool noncommutative = fields == 6 && strcmp(op, "noncommutative") == 0;
    if (fields < 5 || (fields == 6 && (coll != TUNA_ALLREDUCE || !noncommutative))) {
        printf("error: expected %s P Q N BYTES OPTIONS%s\n", tuna_collective_name(coll),
               coll == TUNA_ALLREDUCE ? " [noncommutative]" : "");
        return 1;
    }
    if (P < 1 || N < 1 || Q < 0 || (Q > 0 && (long)Q * N != P) || bytes < 0) {
        printf("error: out of range (P >= 1, N >= 1, Q = 0 or Q * N = P, BYTES >= 0)\n");
        return 1;
    }
    /* as tuna_select_input_of() describes such a call */
    tuna_select_input in = {.P = P, .Q = Q, .N = N, .commute = !noncommutative,
                            .max_block = bytes, .mean_block = bytes, .bytes = bytes,
                            .total_max = coll == TUNA_ALLREDUCE ? bytes : bytes * P};
    tuna_options o;
    if (tuna_options_parse(opts, coll, &o) != MPI_SUCCESS) {
        printf("error: %s\n", tuna_error_string(MPI_ERR_ARG));
        return 1;
    }
    const tuna_registry *reg = tuna_registry_of(coll);
    const tuna_row_kind kind = tuna_registry_row(reg, o.algorithm)->kind;
    char text[256];
    if (kind == TUNA_ROW_AUTO)
        return print_auto(reg, &in);
    if (kind == TUNA_ROW_VENDOR) {
        printf("error: the model has no form of the MPI library's own %s\n",
               tuna_collective_name(coll));
        return 1;
    }
    long param[TUNA_MAX_PARAMS];
    tuna_params_resolve(tuna_algorithm_get(coll, o.algorithm), o.value, P, param);
    double t = tuna_model_cost(reg, prof, &in, o.algorithm, param);
    if (t < 0) { /* allreduce's rings with an op that does not commute */
        printf("error: not run with a non-commutative op (it would run recursive-doubling)\n");
        return 1;
    }
    format_options(coll, o.algorithm, param, text, sizeof text);
    printf("%.9g %s\n", t, text);
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
                        "ZERO_FRACTION OPTIONS [reuse]\n"
                        "             allgather P Q N BYTES OPTIONS\n"
                        "             allreduce P Q N BYTES OPTIONS [noncommutative]\n"
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
        /* a leading collective name: allgather or allreduce; else alltoallv's format */
        const size_t ag = strlen("allgather"), ar = strlen("allreduce");
        if (strncmp(line, "allgather", ag) == 0 && (line[ag] == ' ' || line[ag] == '\t'))
            bad |= evaluate_collective(prof, TUNA_ALLGATHER, line + ag);
        else if (strncmp(line, "allreduce", ar) == 0 && (line[ar] == ' ' || line[ar] == '\t'))
            bad |= evaluate_collective(prof, TUNA_ALLREDUCE, line + ar);
        else
            bad |= evaluate(prof, line);
        fflush(stdout);
    }
    MPI_Finalize();
    return bad;
}
