/*
 * TUNA_PROGRESS=thread (docs/nonblocking.md, "Progress"): operations advance while their
 * rank blocks in an MPI call tuna does not see. Run with TUNA_PROGRESS=thread under
 * MPI_THREAD_MULTIPLE (a lower level is a failure here: both MPIs of CI provide it).
 *
 * Each case: rank 0 starts an operation and then blocks in a call of the MPI library's own
 * (MPI_Recv of a token, or MPI_Barrier on another communicator) that returns only after
 * every other rank has completed the same operation with tuna_request_wait (or tuna_wait
 * of a plan). The rows below take several steps, and the later steps' messages from rank 0
 * are posted only when rank 0's operation is progressed: without the thread every case
 * hangs (checked by hand: docs/test-harnesses.md), and the watchdog reports which. Results are
 * compared byte for byte with PMPI_Alltoallv / PMPI_Alltoall into sentinel-filled buffers.
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_data.h"
#include "support/test_expect.h"
#include "support/watchdog.h"

#define SENTINEL 0x5A
#define WATCHDOG_S 120

static char case_name[160]; /* the watchdog's `current` while a case runs */

enum { BLOCK_RECV, BLOCK_BARRIER };
enum { FORM_IALLTOALLV, FORM_PLAN, FORM_IALLTOALL };

/* Rank 0's blocking call, which returns once every other rank has finished the operation;
 * the others' part: they signal after their completion. */
static void rank0_blocks(int how, MPI_Comm other)
{
    int token = 0;
    if (how == BLOCK_RECV)
        MPI_Recv(&token, 1, MPI_INT, P - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Barrier(other);
}

static void others_signal(int how, MPI_Comm other)
{
    int token = 1;
    if (how == BLOCK_RECV) {
        if (me == P - 1)
            MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else {
        MPI_Barrier(other);
    }
}

static void one_case(const char *row, int form, int how, MPI_Comm other, uint64_t seed)
{
    current = case_name;
    snprintf(case_name, sizeof case_name, "%s %s, rank 0 in %s", row,
             form == FORM_IALLTOALLV ? "tuna_ialltoallv"
             : form == FORM_PLAN     ? "tuna_start"
                                     : "tuna_ialltoall",
             how == BLOCK_RECV ? "MPI_Recv" : "MPI_Barrier");
    tuna_options opt;
    const tuna_collective coll = form == FORM_IALLTOALL ? TUNA_ALLTOALL : TUNA_ALLTOALLV;
    const int prc = tuna_options_parse(row, coll, &opt);
    expect(prc == MPI_SUCCESS, "options parse", row, prc);
    if (prc != MPI_SUCCESS)
        return;
    const int S = 5; /* ints per block at most */
    int sc[64], sd[64], rc[64], rd[64];
    for (int j = 0; j < P; j++) {
        sc[j] = form == FORM_IALLTOALL ? S : count_of(D_UNIFORM, me, j, S, seed, 0, P);
        rc[j] = form == FORM_IALLTOALL ? S : count_of(D_UNIFORM, j, me, S, seed, 0, P);
    }
    const size_t sn = make_displs(P, sc, sd, L_PACKED, 0) + 1,
                 rn = make_displs(P, rc, rd, L_GAPPED, 1) + 2;
    int *sbuf = malloc(sn * sizeof(int)), *rbuf = malloc(rn * sizeof(int)),
        *ref = malloc(rn * sizeof(int));
    for (size_t i = 0; i < sn; i++)
        sbuf[i] = (int)mix(seed ^ ((uint64_t)me << 32) ^ i);
    memset(rbuf, SENTINEL, rn * sizeof(int));
    memset(ref, SENTINEL, rn * sizeof(int));
    if (form == FORM_IALLTOALL) /* packed blocks of S ints */
        PMPI_Alltoall(sbuf, S, MPI_INT, ref, S, MPI_INT, MPI_COMM_WORLD);
    else
        PMPI_Alltoallv(sbuf, sc, sd, MPI_INT, ref, rc, rd, MPI_INT, MPI_COMM_WORLD);

    int err = MPI_SUCCESS;
    tuna_request req = TUNA_REQUEST_NULL;
    tuna_plan plan = NULL;
    if (form == FORM_IALLTOALLV)
        err = tuna_ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD, &opt,
                              &req);
    else if (form == FORM_IALLTOALL)
        err = tuna_ialltoall(sbuf, S, MPI_INT, rbuf, S, MPI_INT, MPI_COMM_WORLD, &opt, &req);
    else if ((err = tuna_alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT,
                                        MPI_COMM_WORLD, &opt, 0, &plan)) == MPI_SUCCESS)
        err = tuna_start(plan);
    const int start_rc = err;
    if (err != MPI_SUCCESS) {
        /* nothing started: the others must not wait for rank 0 */
    } else if (me == 0) {
        rank0_blocks(how, other);
        err = plan ? tuna_wait(plan) : tuna_request_wait(&req);
    } else {
        err = plan ? tuna_wait(plan) : tuna_request_wait(&req);
        others_signal(how, other);
    }
    expect(start_rc == MPI_SUCCESS, "start", current, start_rc);
    expect(err == MPI_SUCCESS, "completion", current, err);
    expect(memcmp(rbuf, ref, rn * sizeof(int)) == 0, "received bytes equal the library's",
           current, err);
    if (plan)
        tuna_plan_free(&plan);
    free(sbuf);
    free(rbuf);
    free(ref);
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    watchdog_start(WATCHDOG_S);
    const char *mode = getenv("TUNA_PROGRESS");
    expect(mode && strcmp(mode, "thread") == 0, "TUNA_PROGRESS=thread is set", "setup", 0);
    expect(provided == MPI_THREAD_MULTIPLE, "MPI provides MPI_THREAD_MULTIPLE", "setup", 0);
    if (P < 2 || failures) { /* one rank: nobody to wait for */
        if (me == 0)
            printf("test_progress_thread P=%d: %s\n", P, failures ? "FAILED" : "passed");
        MPI_Finalize();
        return failures ? 1 : 0;
    }
    MPI_Comm other;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    /* Rows of several steps whose later messages need rank 0's progress. */
    static const char *const rows_v[] = {"tuna:radix=2,block=1", "bruck", "twophase-bruck",
                                         "pairwise", "coalesced:radix=2,block=1",
                                         "multipair-waitany:stride=1"};
    static const char *const rows_a[] = {"bruck-radix:radix=2", "tuna:radix=2,block=1",
                                         "pairwise"};
    uint64_t seed = 11;
    for (int how = BLOCK_RECV; how <= BLOCK_BARRIER; how++) {
        for (size_t i = 0; i < sizeof rows_v / sizeof rows_v[0]; i++) {
            one_case(rows_v[i], FORM_IALLTOALLV, how, other, seed++);
            one_case(rows_v[i], FORM_PLAN, how, other, seed++);
        }
        for (size_t i = 0; i < sizeof rows_a / sizeof rows_a[0]; i++)
            one_case(rows_a[i], FORM_IALLTOALL, how, other, seed++);
    }
    MPI_Comm_free(&other);
    alarm(0);
    if (me == 0)
        printf("test_progress_thread P=%d: %s\n", P, failures ? "FAILED" : "passed");
    MPI_Finalize();
    return failures ? 1 : 0;
}
