/*
 * The check every rank-collective test uses: each rank states a condition, all ranks learn
 * whether any rank failed (so they stay in step), the failing rank prints what and why.
 * Include once per test program; it defines the program's P, me and failure count.
 */
#ifndef TUNA_TEST_EXPECT_H
#define TUNA_TEST_EXPECT_H

#include "tuna.h"

#include <stdio.h>

static int P, me, failures;

static void expect(int cond, const char *what, const char *alg, int rc)
{
    int bad = !cond, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad)
        fprintf(stderr, "FAIL P=%d rank=%d %s (%s): rc %d: %s\n", P, me, what, alg, rc,
                rc == MPI_SUCCESS ? "" : tuna_error_string(rc));
    failures += any;
}

#endif /* TUNA_TEST_EXPECT_H */
