/*
 * Errors come back as codes: an MPI failure inside one of tuna's exchanges is returned, with
 * its own error class, even when the user's communicator has MPI_ERRORS_ARE_FATAL (tuna's
 * private communicator returns errors), and MPI_Waitall's MPI_ERR_IN_STATUS is replaced by the
 * failed request's code. The failure: rank 1 posts room for fewer elements than rank 0 sends
 * it (an erroneous program that MPI detects as truncation on rank 1's receive).
 *
 * The algorithms: those that post every message of the exchange before waiting (linear,
 * spreadout, and scattered and multipair with one batch of P). (A failure partway through a
 * schedule of steps or batches ends that step, not the schedule: tests/test_comm_failure.c
 * covers every row so.) Afterwards the communicator still works.
 *
 * Usage: test_error_codes   (under mpiexec, P >= 2)
 */
#include "support/test_expect.h"
#include "tuna.h"

#include <stdio.h>
#include <stdlib.h>


static const char *const algs[] = {"linear", "spreadout", "scattered:block=P",
                                   "multipair:stride=P"};

int main(int argc, char **argv)
{
    if (!error_test_init(&argc, &argv))
        return 0;
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc_ = sc + 2 * P,
        *rd = sc + 3 * P;
    int *sbuf = malloc(sizeof(int) * 4 * (size_t)P), *rbuf = malloc(sizeof(int) * 4 * (size_t)P);
    int cases = 0;
    for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++) {
        const char *name = algs[k];
        tuna_options opt;
        tuna_options_parse(name, TUNA_ALLTOALLV, &opt);
        MPI_Comm comm; /* MPI_ERRORS_ARE_FATAL, inherited from MPI_COMM_WORLD */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        for (int j = 0; j < P; j++) {
            sc[j] = rc_[j] = 4;
            sd[j] = rd[j] = 4 * j;
        }
        if (me == 1)
            rc_[0] = 2; /* rank 0 sends 4: truncated on rank 1 */
        for (int i = 0; i < 4 * P; i++)
            sbuf[i] = me * 1000 + i;
        int rc = tuna_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, comm, &opt);
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        expect(me != 1 || cls == MPI_ERR_TRUNCATE,
               "a truncated receive returns MPI_ERR_TRUNCATE's class", name, rc);
        /* Whatever was reported, the communicator still works. */
        MPI_Barrier(comm);
        for (int j = 0; j < P; j++)
            rc_[j] = 4;
        for (int i = 0; i < 4 * P; i++)
            rbuf[i] = -1;
        rc = tuna_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, comm, &opt);
        int good = rc == MPI_SUCCESS;
        for (int j = 0; j < P; j++)
            for (int i = 0; i < 4; i++)
                good &= rbuf[4 * j + i] == j * 1000 + 4 * me + i;
        expect(good, "a correct call afterwards", name, rc);
        MPI_Comm_free(&comm);
        cases++;
    }
    if (me == 0)
        printf("test_error_codes: P=%d, %d algorithms, %d failed\n", P, cases, failures);
    free(sc);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
