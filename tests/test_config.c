/*
 * Settings that decide which collectives a call performs must be the same on every rank:
 * a rank with another TUNA_ARGCHECK or TUNA_RANKS_PER_NODE would run an allreduce its peers
 * skip (or another exchange) and the job would hang. tuna agrees on them once, when a
 * communicator is first used; a difference is an error on every rank, naming the variable,
 * and nothing moves. Here the ranks set different values themselves (tuna reads them when
 * a communicator's context is created), for every algorithm family and each collective.
 *
 * Usage: test_config     (under mpiexec, P >= 2)
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "tuna.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int P, me, failures;

static void expect(int cond, const char *what, int rc)
{
    int bad = !cond, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad)
        fprintf(stderr, "FAIL P=%d rank=%d %s: rc=%d '%s'\n", P, me, what, rc,
                tuna_error_string(rc));
    failures += any;
}

/* One alltoallv on a fresh communicator; returns tuna's code. */
static int alltoallv_on_fresh(const char *alg, int *rb)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int *c = malloc(sizeof(int) * 2 * (size_t)P), *sb = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++) {
        c[j] = 1;
        c[P + j] = j;
        sb[j] = 100 * me + j;
        rb[j] = -7;
    }
    tuna_options opt;
    tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    int rc = tuna_alltoallv(sb, c, c + P, MPI_INT, rb, c, c + P, MPI_INT, comm, &opt);
    free(c);
    free(sb);
    MPI_Comm_free(&comm);
    return rc;
}

static void mismatch(const char *var, const char *mine, const char *others)
{
    static const char *const algs[] = {"spreadout", "tuna", "padded-bruck", "coalesced", "auto"};
    int *rb = malloc(sizeof(int) * (size_t)P);
    for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++) {
        setenv(var, me == P - 1 ? mine : others, 1);
        int rc = alltoallv_on_fresh(algs[k], rb);
        unsetenv(var);
        char what[160];
        snprintf(what, sizeof what, "%s differing (%s): error on every rank", var, algs[k]);
        /* The message names the variable, rank 0's value and (off rank 0) this rank's. */
        const char *msg = tuna_error_string(rc);
        char want0[64], wantme[64];
        snprintf(want0, sizeof want0, "rank 0 has '%s'", others);
        snprintf(wantme, sizeof wantme, "rank %d has '%s'", me, me == P - 1 ? mine : others);
        expect(rc == MPI_ERR_ARG && strstr(msg, var) && strstr(msg, want0) &&
                   (me == 0 || strstr(msg, wantme)),
               what, rc);
        int untouched = 1;
        for (int j = 0; j < P; j++)
            untouched &= rb[j] == -7;
        snprintf(what, sizeof what, "%s differing (%s): nothing received", var, algs[k]);
        expect(untouched, what, rc);
    }
    /* The same for the other collectives, and then a call with equal settings works. */
    setenv(var, me == P - 1 ? mine : others, 1);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double x = me, y = -1;
    tuna_options opt;
    tuna_options_parse("recursive-doubling", TUNA_ALLREDUCE, &opt);
    int rc = tuna_allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm, &opt);
    expect(rc == MPI_ERR_ARG && y == -1, "allreduce with differing settings", rc);
    tuna_options_parse("kring", TUNA_ALLGATHER, &opt);
    rc = tuna_allgather(&x, 1, MPI_DOUBLE, rb, 1, MPI_DOUBLE, comm, &opt);
    expect(rc == MPI_ERR_ARG, "allgather with differing settings", rc);
    MPI_Comm_free(&comm);
    unsetenv(var);
    rc = alltoallv_on_fresh("tuna", rb);
    int good = rc == MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        good &= rb[j] == 100 * j + me;
    expect(good, "equal settings afterwards", rc);
    free(rb);
}

/*
 * Statistics name what ran: with TUNA_RANKS_PER_NODE=2 and odd P the logical nodes differ in
 * size, coalesced and staggered run flat TuNA, and tuna_stats_last says so (and why); with
 * even P they run as themselves.
 */
static void hierarchical_fallback_stats(void)
{
    setenv("TUNA_RANKS_PER_NODE", "2", 1);
    tuna_stats_enable(1);
    int *rb = malloc(sizeof(int) * (size_t)P);
    static const char *const algs[] = {"coalesced", "staggered"};
    for (int k = 0; k < 2; k++) {
        int rc = alltoallv_on_fresh(algs[k], rb);
        const tuna_stats *st = tuna_stats_last();
        int good = rc == MPI_SUCCESS;
        for (int j = 0; j < P; j++)
            good &= rb[j] == 100 * j + me;
        const int want = tuna_algorithm_find(TUNA_ALLTOALLV, P % 2 ? "tuna" : algs[k]);
        good &= st->algorithm == want && (P % 2 ? st->fallback != NULL : st->fallback == NULL);
        char what[128];
        snprintf(what, sizeof what, "%s at P=%d, 2 ranks per node: stats name what ran", algs[k],
                 P);
        expect(good, what, rc);
    }
    tuna_stats_enable(0);
    free(rb);
    unsetenv("TUNA_RANKS_PER_NODE");
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (P >= 2) {
        mismatch("TUNA_ARGCHECK", "collective", "local");
        mismatch("TUNA_RANKS_PER_NODE", "1", "2");
        /* The algorithm settings too (a launch that exports them to some ranks only). */
        mismatch("TUNA_ALLTOALLV", "xor", "pairwise");
        mismatch("TUNA_ALLREDUCE", "ring", "recursive-doubling");
        mismatch("TUNA_AUTO_PERIOD", "4", "8");
        mismatch("TUNA_PROGRESS", "thread", "poll");
        /* The built-in default spelled out is the same setting as none. */
        setenv("TUNA_ALLGATHER", "auto", 1);
        if (me == P - 1)
            unsetenv("TUNA_ALLGATHER");
        int *rb = malloc(sizeof(int) * (size_t)P);
        int rc = alltoallv_on_fresh("tuna", rb);
        expect(rc == MPI_SUCCESS, "TUNA_ALLGATHER=auto on some ranks, unset on others: agreed",
               rc);
        unsetenv("TUNA_ALLGATHER");
        free(rb);
    }
    if (P >= 2)
        hierarchical_fallback_stats();
    if (me == 0)
        printf("test_config: P=%d, %d failed\n", P, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
