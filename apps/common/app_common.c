/* Shared helpers of the applications: see app_common.h. */
#define _POSIX_C_SOURCE 200809L
#include "app_common.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int app_parse_algorithms(const char *list, unsigned flags, app_algorithm **out, int *n,
                         char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    size_t len = strlen(list);
    char *copy = malloc(len + 1), *spec = malloc(len + 1);
    app_algorithm *algs = calloc(len / 2 + 2, sizeof *algs);
    if (!copy || !spec || !algs) {
        free(copy), free(spec), free(algs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(copy, list, len + 1);
    int count = 0, rc = 0;
    spec[0] = '\0';
    /* Accumulate tokens into spec until the next token starts a new algorithm. */
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save);; tok = strtok_r(NULL, ",", &save)) {
        int continues = 0;
        if (tok) {
            const char *eq = strchr(tok, '='), *colon = strchr(tok, ':');
            continues = eq && (!colon || colon > eq) && spec[0];
        }
        if (tok && continues) {
            strcat(spec, ",");
            strcat(spec, tok);
            continue;
        }
        if (spec[0]) {
            app_algorithm *a = &algs[count];
            int e = tuna_options_parse(spec, TUNA_ALLTOALLV, &a->opt);
            a->has_v = e == MPI_SUCCESS;
            if (!a->has_v && (flags & APP_ALG_UNIFORM))
                snprintf(a->note, sizeof a->note, "%s", tuna_error_string(e));
            if (flags & APP_ALG_UNIFORM) {
                int eu = tuna_options_parse(spec, TUNA_ALLTOALL, &a->uopt);
                a->has_u = eu == MPI_SUCCESS;
                if (!a->has_u && a->has_v)
                    snprintf(a->note, sizeof a->note, "%s", tuna_error_string(eu));
            }
            if (!a->has_v && !a->has_u) { /* alltoallv's message: the usual registry */
                snprintf(err, errlen, "--algorithms '%s': %s", spec,
                         (flags & APP_ALG_UNIFORM) ? a->note : tuna_error_string(e));
                rc = -1;
                break;
            }
            if (tuna_options_format(a->has_v ? &a->opt : &a->uopt, a->name, sizeof a->name) !=
                MPI_SUCCESS)
                snprintf(a->name, sizeof a->name, "%.100s", spec);
            count++;
        }
        if (!tok)
            break;
        strcpy(spec, tok);
    }
    if (rc == 0 && count == 0) {
        snprintf(err, errlen, "--algorithms: empty list");
        rc = -1;
    }
    free(copy);
    free(spec);
    if (rc) {
        free(algs);
        return -1;
    }
    *out = algs;
    *n = count;
    return 0;
}

app_minmax app_minmax_over_ranks(double v, MPI_Comm comm)
{
    app_minmax m;
    int P;
    MPI_Comm_size(comm, &P);
    MPI_Allreduce(&v, &m.min, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&v, &m.max, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&v, &m.mean, 1, MPI_DOUBLE, MPI_SUM, comm);
    m.mean /= P;
    return m;
}

json_t *app_minmax_json(app_minmax m)
{
    return json_pack("{s:f,s:f,s:f}", "min", m.min, "max", m.max, "mean", m.mean);
}

void app_json_line(FILE *f, json_t *rec)
{
    char *line = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(9));
    if (line) {
        fputs(line, f);
        fputc('\n', f);
        fflush(f);
        free(line);
    }
    json_decref(rec);
}

int app_env_rank_zero(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

uint64_t app_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double app_rand01(uint64_t seed, uint64_t index)
{
    uint64_t h = app_mix64(app_mix64(seed) ^ index);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

double app_now(void)
{
    return MPI_Wtime();
}

#ifdef TUNA_APP_SMPI
/* smpicc force-includes smpi_helpers.h, which maps clock_gettime to the simulated clock: the
 * real CPU clock is wanted here. */
#undef clock_gettime
double app_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void app_charge(double cpu_start)
{
    double dt = app_cpu_now() - cpu_start;
    if (dt > 0)
        smpi_execute(dt);
}
#else
double app_cpu_now(void)
{
    return 0;
}

void app_charge(double cpu_start)
{
    (void)cpu_start;
}
#endif
