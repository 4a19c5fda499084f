/*
 * Calls on different communicators from different threads (MPI_THREAD_MULTIPLE; docs/
 * nonblocking.md, "Threads"): each of NT threads owns a duplicate of MPI_COMM_WORLD (made
 * in order by the main thread: MPI_Comm_dup is collective) and runs, at the same time as
 * the others, blocking tuna_alltoallv / tuna_alltoall / tuna_allgather / tuna_allreduce,
 * nonblocking tuna_ialltoallv / tuna_ialltoall and plans on it, over several rows and auto.
 * The contexts are set up concurrently (each thread's first call). Every result is compared
 * byte for byte with the library's (PMPI_* on the same communicator, from the same thread)
 * into sentinel-filled buffers. Failures are counted per thread and agreed by the main
 * thread at the end; a watchdog reports a hang.
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_data.h"

#define NT 4 /* threads per rank, each on its own communicator */
#define ROUNDS 4
#define SENTINEL 0x5A
#define WATCHDOG_S 240

static int P, me;

#include "support/watchdog.h"

typedef struct worker {
    int id;
    MPI_Comm comm;
    int failures;
} worker;

static void check(worker *w, int ok, const char *what, const char *row, int rc)
{
    if (ok)
        return;
    w->failures++;
    fprintf(stderr, "FAIL P=%d rank=%d thread %d: %s (%s): rc %d\n", P, me, w->id, what, row,
            rc);
}

static void parse(worker *w, const char *row, tuna_collective coll, tuna_options *opt)
{
    int rc = tuna_options_parse(row, coll, opt);
    check(w, rc == MPI_SUCCESS, "options parse", row, rc);
}

/* alltoallv: blocking, nonblocking and a plan of `row` against PMPI_Alltoallv. */
static void alltoallv_forms(worker *w, const char *row, uint64_t seed)
{
    tuna_options opt;
    parse(w, row, TUNA_ALLTOALLV, &opt);
    int sc[64], sd[64], rc[64], rd[64];
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(D_POWER, me, j, 7, seed, 0, P);
        rc[j] = count_of(D_POWER, j, me, 7, seed, 0, P);
    }
    const size_t sn = make_displs(P, sc, sd, L_PACKED, 0) + 1,
                 rn = make_displs(P, rc, rd, L_GAPPED, 1) + 2;
    int *sbuf = malloc(sn * sizeof(int)), *rbuf = malloc(rn * sizeof(int)),
        *ref = malloc(rn * sizeof(int));
    for (size_t i = 0; i < sn; i++)
        sbuf[i] = (int)mix(seed ^ ((uint64_t)me << 32) ^ i);
    memset(ref, SENTINEL, rn * sizeof(int));
    PMPI_Alltoallv(sbuf, sc, sd, MPI_INT, ref, rc, rd, MPI_INT, w->comm);
    for (int form = 0; form < 3; form++) {
        memset(rbuf, SENTINEL, rn * sizeof(int));
        int err;
        if (form == 0) {
            err = tuna_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, w->comm, &opt);
        } else if (form == 1) {
            tuna_request req = TUNA_REQUEST_NULL;
            err = tuna_ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, w->comm, &opt,
                                  &req);
            if (err == MPI_SUCCESS)
                err = tuna_request_wait(&req);
        } else {
            tuna_plan plan = NULL;
            err = tuna_alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, w->comm, &opt,
                                      0, &plan);
            if (err == MPI_SUCCESS && (err = tuna_start(plan)) == MPI_SUCCESS)
                err = tuna_wait(plan);
            if (plan)
                tuna_plan_free(&plan);
        }
        static const char *const forms[] = {"tuna_alltoallv", "tuna_ialltoallv", "plan"};
        check(w, err == MPI_SUCCESS && memcmp(rbuf, ref, rn * sizeof(int)) == 0, forms[form],
              row, err);
    }
    free(sbuf);
    free(rbuf);
    free(ref);
}

/* alltoall: blocking and nonblocking of `row` against PMPI_Alltoall. */
static void alltoall_forms(worker *w, const char *row, uint64_t seed)
{
    tuna_options opt;
    parse(w, row, TUNA_ALLTOALL, &opt);
    const int n = 3 + w->id; /* ints per block */
    const size_t len = (size_t)n * (size_t)P;
    int *sbuf = malloc(len * sizeof(int)), *rbuf = malloc(len * sizeof(int)),
        *ref = malloc(len * sizeof(int));
    for (size_t i = 0; i < len; i++)
        sbuf[i] = (int)mix(seed ^ ((uint64_t)me << 32) ^ i);
    PMPI_Alltoall(sbuf, n, MPI_INT, ref, n, MPI_INT, w->comm);
    memset(rbuf, SENTINEL, len * sizeof(int));
    int err = tuna_alltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, w->comm, &opt);
    check(w, err == MPI_SUCCESS && memcmp(rbuf, ref, len * sizeof(int)) == 0, "tuna_alltoall",
          row, err);
    memset(rbuf, SENTINEL, len * sizeof(int));
    tuna_request req = TUNA_REQUEST_NULL;
    err = tuna_ialltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, w->comm, &opt, &req);
    if (err == MPI_SUCCESS)
        err = tuna_request_wait(&req);
    check(w, err == MPI_SUCCESS && memcmp(rbuf, ref, len * sizeof(int)) == 0, "tuna_ialltoall",
          row, err);
    free(sbuf);
    free(rbuf);
    free(ref);
}

/* allgather and allreduce (auto and a row of each) against the library's. */
static void dense_collectives(worker *w, uint64_t seed)
{
    static const char *const ag_rows[] = {"auto", "kring", "recmul-permuted"};
    static const char *const ar_rows[] = {"auto", "ring", "recmul"};
    const int n = 5;
    long long *x = malloc(sizeof(long long) * (size_t)n * (size_t)P),
              *y = malloc(sizeof(long long) * (size_t)n * (size_t)P),
              *ref = malloc(sizeof(long long) * (size_t)n * (size_t)P);
    for (int i = 0; i < n; i++)
        x[i] = (long long)mix(seed ^ ((uint64_t)me << 20) ^ (uint64_t)i) % 1000;
    for (size_t k = 0; k < 3; k++) {
        tuna_options opt;
        parse(w, ag_rows[k], TUNA_ALLGATHER, &opt);
        PMPI_Allgather(x, n, MPI_LONG_LONG, ref, n, MPI_LONG_LONG, w->comm);
        memset(y, SENTINEL, sizeof(long long) * (size_t)n * (size_t)P);
        int err = tuna_allgather(x, n, MPI_LONG_LONG, y, n, MPI_LONG_LONG, w->comm, &opt);
        check(w, err == MPI_SUCCESS && memcmp(y, ref, sizeof(long long) * (size_t)n * P) == 0,
              "tuna_allgather", ag_rows[k], err);
        parse(w, ar_rows[k], TUNA_ALLREDUCE, &opt);
        PMPI_Allreduce(x, ref, n, MPI_LONG_LONG, MPI_SUM, w->comm);
        memset(y, SENTINEL, sizeof(long long) * (size_t)n);
        err = tuna_allreduce(x, y, n, MPI_LONG_LONG, MPI_SUM, w->comm, &opt);
        check(w, err == MPI_SUCCESS && memcmp(y, ref, sizeof(long long) * (size_t)n) == 0,
              "tuna_allreduce", ar_rows[k], err);
    }
    free(x);
    free(y);
    free(ref);
}

static void *work(void *arg)
{
    worker *w = arg;
    /* Each thread its own rows (all have step forms), auto in every thread. */
    static const char *const v_rows[NT][3] = {
        {"auto", "tuna:radix=2,block=1", "pairwise"},
        {"auto", "bruck", "coalesced:radix=2,block=1"},
        {"auto", "twophase-bruck", "multipair-waitany:stride=2"},
        {"auto", "staggered:radix=2,block=1", "padded-bruck"},
    };
    static const char *const a_rows[NT][2] = {
        {"auto", "bruck-radix:radix=3"}, {"auto", "tuna:radix=2,block=2"}, {"auto", "xor"},
        {"auto", "mesh:dims=2"}};
    for (int round = 0; round < ROUNDS; round++) {
        const uint64_t seed = (uint64_t)(1000 * w->id + 10 * round);
        for (int k = 0; k < 3; k++)
            alltoallv_forms(w, v_rows[w->id][k], seed + (uint64_t)k);
        for (int k = 0; k < 2; k++)
            alltoall_forms(w, a_rows[w->id][k], seed + 5 + (uint64_t)k);
        dense_collectives(w, seed + 8);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    current = "threads calling tuna on their own communicators";
    watchdog_start(WATCHDOG_S);
    int bad = provided != MPI_THREAD_MULTIPLE;
    if (bad)
        fprintf(stderr, "FAIL rank=%d: MPI provides thread level %d, not MPI_THREAD_MULTIPLE\n",
                me, provided);
    worker w[NT];
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) {
        w[t] = (worker){.id = t};
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
    }
    int created = 0;
    while (!bad && created < NT) {
        bad = pthread_create(&th[created], NULL, work, &w[created]) != 0;
        created += !bad;
    }
    /* A thread that could not start leaves its peers' calls on its communicator waiting:
     * the watchdog then reports it (a failure either way). */
    int failures = bad;
    for (int t = 0; t < created; t++) {
        pthread_join(th[t], NULL);
        failures += w[t].failures;
    }
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&w[t].comm);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    alarm(0);
    if (me == 0)
        printf("test_threads P=%d: %s\n", P, total ? "FAILED" : "passed");
    MPI_Finalize();
    return total ? 1 : 0;
}
