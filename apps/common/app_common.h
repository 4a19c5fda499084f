/*
 * Shared helpers of the applications under apps/: the --algorithms list (tuna's option-string
 * grammar), statistics over ranks and JSON lines in tuna-bench's conventions. Run metadata
 * (the records' "machine" and "run" objects) is tools/common/run_meta.h, shared with tuna-bench.
 */
#ifndef TUNA_APP_COMMON_H
#define TUNA_APP_COMMON_H

#include "run_meta.h"
#include "tuna.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#define APP_NAME_LEN 128

/* One algorithm asked for on the command line. */
typedef struct app_algorithm {
    tuna_options opt;  /* for TUNA_ALLTOALLV (valid if has_v) */
    tuna_options uopt; /* APP_ALG_UNIFORM: the same string for TUNA_ALLTOALL (valid if has_u) */
    int has_v, has_u;
    char name[APP_NAME_LEN]; /* canonical option string (tuna_options_format) */
    char note[256];          /* APP_ALG_UNIFORM: the message of the registry that refused it */
} app_algorithm;

/* app_parse_algorithms' flags: also parse every algorithm for TUNA_ALLTOALL, and accept one
 * that only one of the two registries knows (twophase-bruck: alltoallv, bruck-radix:
 * alltoall; the rows they share take the same names and parameters). */
#define APP_ALG_UNIFORM 1u

/*
 * Parse "vendor,tuna:radix=2,block=4,linear": comma-separated option strings; a token of the
 * form key=value (no ':' before the '=') continues the previous algorithm's parameters, so
 * "tuna:radix=2,block=4" stays one algorithm. Without flags every algorithm must be an
 * alltoallv one (has_v = 1, has_u = 0). Returns 0, or -1 with a message.
 */
int app_parse_algorithms(const char *list, unsigned flags, app_algorithm **out, int *n,
                         char *err, size_t errlen);

/* min / max / mean of one value over the ranks of comm (valid on every rank). */
typedef struct app_minmax {
    double min, max, mean;
} app_minmax;
app_minmax app_minmax_over_ranks(double v, MPI_Comm comm);
json_t *app_minmax_json(app_minmax m);

/* Write one compact JSON line and free rec. */
void app_json_line(FILE *f, json_t *rec);

/* Is this process rank 0 of the job, judged from the launcher's environment (before MPI_Init)? */
int app_env_rank_zero(void);

/* 64-bit mixer (splitmix64 finalizer) and a counter-based uniform double in [0, 1). */
uint64_t app_mix64(uint64_t x);
double app_rand01(uint64_t seed, uint64_t index);

/* Seconds (MPI_Wtime; simulated time under SMPI). */
double app_now(void);

/*
 * Charging local computation under SimGrid SMPI (built with TUNA_APP_SMPI): the simulations run
 * with smpi/simulate-computation:no, so that the copies inside any all-to-all (tuna's or the
 * simulator's own) are free alike; the applications' own computation (FFTs, packing, joins,
 * hash sets) is measured with this thread's CPU clock and injected with smpi_execute, so its
 * share of the run stays realistic. Elsewhere both are no-ops.
 *   double c0 = app_cpu_now(); ...compute...; app_charge(c0);
 */
double app_cpu_now(void);
void app_charge(double cpu_start);

#endif
