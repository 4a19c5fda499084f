/*
 * The local-start scenario of the nonblocking tests (docs/nonblocking.md): rank 0 starts,
 * then hands rank 1 a token with MPI_Ssend, which rank 1 receives before it starts. A start
 * that waited for rank 1 would never return: the watchdog (watchdog.h) reports the hang,
 * naming what the test was doing (`current`). Include after test_expect.h (P, me, expect).
 */
#ifndef TUNA_TEST_LOCAL_START_H
#define TUNA_TEST_LOCAL_START_H

#include "test_expect.h"

#include "watchdog.h"

/* start(arg) between the token's hand-over (tag: the kind of start); its outcome. */
static int token_start(int tag, int (*start)(void *arg), void *arg)
{
    int token = 7;
    if (me == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int rc = start(arg);
    if (me == 0)
        MPI_Ssend(&token, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
    return rc;
}

static int start_plan(void *plan)
{
    return tuna_start((tuna_plan)plan);
}

/* Two local starts of plan (reset(arg, round) first), completed by tuna_wait, then by
 * polling tuna_test, each result checked with ok(arg). */
static void plan_local_starts(tuna_plan plan, void (*reset)(void *arg, int round),
                              int (*ok)(const void *arg), void *arg, const char *row)
{
    for (int r = 0; r < 2; r++) {
        reset(arg, r);
        int rc = token_start(98, start_plan, plan);
        int flag = 0, wrc = r == 0 ? tuna_wait(plan) : MPI_SUCCESS;
        while (r == 1 && !flag && wrc == MPI_SUCCESS)
            wrc = tuna_test(plan, &flag);
        expect(rc == MPI_SUCCESS && wrc == MPI_SUCCESS && ok(arg), "plan local start", row,
               rc ? rc : wrc);
        if (rc != MPI_SUCCESS)
            break;
    }
}

#endif /* TUNA_TEST_LOCAL_START_H */
