/*
 * sendbuf == recvbuf without MPI_IN_PLACE is erroneous in MPI (MPICH reports it): every
 * collective and every algorithm row (vendor and auto included), blocking and as a plan,
 * must return MPI_ERR_BUFFER on every rank, move no data (the buffer keeps its bytes) and
 * leave the communicator usable (a correct call afterwards gives PMPI's result). With no
 * data to move, equal pointers are no error (mpi4py passes empty buffers that share one).
 * The nonblocking alltoallv and alltoall return it at the start, with no request, on a
 * communicator tuna has set up and on one it has not (where the library's call runs inside
 * tuna's request: it reported the error at the completion, MPICH, or not at all, Open MPI).
 *
 * Usage: test_aliasing   (under mpiexec, any P)
 */
#include "support/test_expect.h"
#include "tuna.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define N 8 /* ints per block */

static void fill(int *buf, int n, int salt)
{
    for (int i = 0; i < n; i++)
        buf[i] = me * 100000 + i * 7 + salt;
}

/* The buffer kept its bytes after an erroneous call. */
static int intact(const int *buf, int n, int salt)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != me * 100000 + i * 7 + salt)
            return 0;
    return 1;
}

static void alltoallv_cases(const char *name, const tuna_options *opt)
{
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    int *buf = malloc(sizeof(int) * (size_t)(N * P)), *ref = malloc(sizeof(int) * (size_t)(N * P));
    int *out = malloc(sizeof(int) * (size_t)(N * P));
    for (int j = 0; j < P; j++)
        cnt[j] = N, dsp[j] = N * j;
    fill(buf, N * P, 1);
    int rc = tuna_alltoallv(buf, cnt, dsp, MPI_INT, buf, cnt, dsp, MPI_INT, MPI_COMM_WORLD, opt);
    expect(rc == MPI_ERR_BUFFER && intact(buf, N * P, 1), "alltoallv aliased", name, rc);
    tuna_plan plan = NULL;
    rc = tuna_alltoallv_init(buf, cnt, dsp, MPI_INT, buf, cnt, dsp, MPI_INT, MPI_COMM_WORLD, opt,
                             TUNA_PLAN_ESTIMATE, &plan);
    expect(rc == MPI_ERR_BUFFER && plan == NULL && intact(buf, N * P, 1),
           "alltoallv_init aliased", name, rc);
    if (plan)
        tuna_plan_free(&plan);
    /* No data to move: equal pointers are no error for tuna's algorithms (empty buffers may
     * share an address). vendor and auto (which may run vendor) hand such a call to the
     * library, whose answer is its own: MPICH 4.0.2 rejects it, Open MPI 4.1.4 does not. */
    if (strcmp(name, "vendor") != 0 && strcmp(name, "auto") != 0) {
        int *zero = calloc((size_t)P, sizeof(int));
        rc = tuna_alltoallv(buf, zero, dsp, MPI_INT, buf, zero, dsp, MPI_INT, MPI_COMM_WORLD,
                            opt);
        expect(rc == MPI_SUCCESS && intact(buf, N * P, 1), "alltoallv aliased, no data", name,
               rc);
        free(zero);
    }
    /* Still usable: a correct call gives PMPI's bytes. */
    memset(out, 0x5a, sizeof(int) * (size_t)(N * P));
    rc = tuna_alltoallv(buf, cnt, dsp, MPI_INT, out, cnt, dsp, MPI_INT, MPI_COMM_WORLD, opt);
    PMPI_Alltoallv(buf, cnt, dsp, MPI_INT, ref, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(out, ref, sizeof(int) * (size_t)(N * P)) == 0,
           "alltoallv after the error", name, rc);
    free(cnt), free(dsp), free(buf), free(ref), free(out);
}

static void allgather_cases(const char *name, const tuna_options *opt)
{
    int *buf = malloc(sizeof(int) * (size_t)(N * P)), *ref = malloc(sizeof(int) * (size_t)(N * P));
    int *out = malloc(sizeof(int) * (size_t)(N * P));
    fill(buf, N * P, 2);
    int rc = tuna_allgather(buf, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
    expect(rc == MPI_ERR_BUFFER && intact(buf, N * P, 2), "allgather aliased", name, rc);
    tuna_plan plan = NULL;
    rc = tuna_allgather_init(buf, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt,
                             TUNA_PLAN_ESTIMATE, &plan);
    expect(rc == MPI_ERR_BUFFER && plan == NULL, "allgather_init aliased", name, rc);
    if (plan)
        tuna_plan_free(&plan);
    if (strcmp(name, "vendor") != 0 && strcmp(name, "auto") != 0) { /* as for alltoallv */
        rc = tuna_allgather(buf, 0, MPI_INT, buf, 0, MPI_INT, MPI_COMM_WORLD, opt);
        expect(rc == MPI_SUCCESS && intact(buf, N * P, 2), "allgather aliased, no data", name,
               rc);
    }
    memset(out, 0x5a, sizeof(int) * (size_t)(N * P));
    rc = tuna_allgather(buf, N, MPI_INT, out, N, MPI_INT, MPI_COMM_WORLD, opt);
    PMPI_Allgather(buf, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(out, ref, sizeof(int) * (size_t)(N * P)) == 0,
           "allgather after the error", name, rc);
    free(buf), free(ref), free(out);
}

static void alltoall_cases(const char *name, const tuna_options *opt)
{
    const size_t n = (size_t)N * (size_t)P;
    int *buf = malloc(sizeof(int) * n), *ref = malloc(sizeof(int) * n);
    int *out = malloc(sizeof(int) * n);
    fill(buf, (int)n, 4);
    int rc = tuna_alltoall(buf, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
    expect(rc == MPI_ERR_BUFFER && intact(buf, (int)n, 4), "alltoall aliased", name, rc);
    tuna_plan plan = NULL;
    rc = tuna_alltoall_init(buf, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt,
                            TUNA_PLAN_ESTIMATE, &plan);
    expect(rc == MPI_ERR_BUFFER && plan == NULL, "alltoall_init aliased", name, rc);
    if (plan)
        tuna_plan_free(&plan);
    if (strcmp(name, "vendor") != 0 && strcmp(name, "auto") != 0) { /* as for alltoallv */
        rc = tuna_alltoall(buf, 0, MPI_INT, buf, 0, MPI_INT, MPI_COMM_WORLD, opt);
        expect(rc == MPI_SUCCESS && intact(buf, (int)n, 4), "alltoall aliased, no data", name,
               rc);
    }
    memset(out, 0x5a, sizeof(int) * n);
    rc = tuna_alltoall(buf, N, MPI_INT, out, N, MPI_INT, MPI_COMM_WORLD, opt);
    PMPI_Alltoall(buf, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(out, ref, sizeof(int) * n) == 0,
           "alltoall after the error", name, rc);
    free(buf), free(ref), free(out);
}

/* The nonblocking forms, on MPI_COMM_WORLD (set up by the blocking calls before) and on a
 * fresh duplicate that no blocking call has set up. */
static void nonblocking_cases(const char *name, tuna_collective coll, const tuna_options *opt)
{
    const size_t n = (size_t)N * (size_t)P;
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    int *buf = malloc(sizeof(int) * n);
    for (int j = 0; j < P; j++)
        cnt[j] = N, dsp[j] = N * j;
    MPI_Comm fresh;
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    /* A library that reports the error at the completion must not end the test. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    const MPI_Comm comms[2] = {MPI_COMM_WORLD, fresh};
    for (int c = 0; c < 2; c++) {
        fill(buf, (int)n, 5 + c);
        tuna_request req = TUNA_REQUEST_NULL;
        int rc = coll == TUNA_ALLTOALLV
                     ? tuna_ialltoallv(buf, cnt, dsp, MPI_INT, buf, cnt, dsp, MPI_INT, comms[c],
                                       opt, &req)
                     : tuna_ialltoall(buf, N, MPI_INT, buf, N, MPI_INT, comms[c], opt, &req);
        const int started = req != TUNA_REQUEST_NULL;
        if (started) /* the bug: complete it before judging */
            tuna_request_wait(&req);
        char what[96];
        snprintf(what, sizeof what, "%s aliased, at the start (%s)",
                 coll == TUNA_ALLTOALLV ? "ialltoallv" : "ialltoall",
                 c ? "a communicator tuna has not set up" : "MPI_COMM_WORLD");
        expect(rc == MPI_ERR_BUFFER && !started && intact(buf, (int)n, 5 + c), what, name, rc);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&fresh);
    free(cnt), free(dsp), free(buf);
}

static void allreduce_cases(const char *name, const tuna_options *opt)
{
    int buf[N], ref[N], out[N];
    fill(buf, N, 3);
    int rc = tuna_allreduce(buf, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
    expect(rc == MPI_ERR_BUFFER && intact(buf, N, 3), "allreduce aliased", name, rc);
    tuna_plan plan = NULL;
    rc = tuna_allreduce_init(buf, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt,
                             TUNA_PLAN_ESTIMATE, &plan);
    expect(rc == MPI_ERR_BUFFER && plan == NULL, "allreduce_init aliased", name, rc);
    if (plan)
        tuna_plan_free(&plan);
    if (strcmp(name, "vendor") != 0 && strcmp(name, "auto") != 0) { /* as for alltoallv */
        rc = tuna_allreduce(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
        expect(rc == MPI_SUCCESS && intact(buf, N, 3), "allreduce aliased, no data", name, rc);
    }
    memset(out, 0x5a, sizeof out);
    rc = tuna_allreduce(buf, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
    PMPI_Allreduce(buf, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(out, ref, sizeof out) == 0, "allreduce after the error",
           name, rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int rows = 0;
    for (int coll = 0; coll < TUNA_COLLECTIVE_COUNT; coll++)
        for (int a = 0; a < tuna_algorithm_count((tuna_collective)coll); a++) {
            if (coll == TUNA_NEIGHBOR_ALLTOALLV) /* needs a topology: test_neighbor.c */
                break;
            const tuna_algorithm_info *info = tuna_algorithm_get((tuna_collective)coll, a);
            tuna_options opt;
            if (tuna_options_parse(info->name, (tuna_collective)coll, &opt) != MPI_SUCCESS) {
                expect(0, "parse", info->name, -1);
                continue;
            }
            if (coll == TUNA_ALLTOALLV) {
                alltoallv_cases(info->name, &opt);
                nonblocking_cases(info->name, TUNA_ALLTOALLV, &opt);
            } else if (coll == TUNA_ALLGATHER) {
                allgather_cases(info->name, &opt);
            } else if (coll == TUNA_ALLTOALL) {
                alltoall_cases(info->name, &opt);
                nonblocking_cases(info->name, TUNA_ALLTOALL, &opt);
            } else
                allreduce_cases(info->name, &opt);
            rows++;
        }
    if (me == 0)
        printf("test_aliasing: P=%d, %d algorithm rows, %d failures\n", P, rows, failures);
    MPI_Finalize();
    return failures != 0;
}
