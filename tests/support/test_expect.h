/*
 * The check every rank-collective test uses: each rank states a condition, all ranks learn
 * whether any rank failed (so they stay in step), the failing rank prints what and why.
 * Include once per test program; it defines the program's P, me and failure count.
 */
#ifndef TUNA_TEST_EXPECT_H
#define TUNA_TEST_EXPECT_H

#include "tuna.h"

#include <stdio.h>
#include <string.h>

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

/*
 * Start of the tests of errors inside tuna's exchanges (test_error_codes, test_comm_failure):
 * MPI_Init, P and me. MPICH 4.0.2 raises a failed MPI_Wait/MPI_Waitall on MPI_COMM_WORLD's
 * handler (not the request's communicator's, tuna's private one): there the codes come back
 * only when MPI_COMM_WORLD returns errors, so it does under MPICH (4.0 and 5.0). Returns 0 when P < 2 (no
 * peer to fail with: MPI is finalized, the test passes).
 */
static inline int error_test_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (P < 2) {
        MPI_Finalize();
        return 0;
    }
    /* At run time: a standard-ABI build's mpi.h names no implementation. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (strncmp(lib, "MPICH", 5) == 0)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return 1;
}

#endif /* TUNA_TEST_EXPECT_H */
