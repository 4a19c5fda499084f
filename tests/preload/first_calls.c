/*
 * Communicators that see only nonblocking and persistent collectives (issue 56): a duplicate
 * of MPI_COMM_WORLD, the two halves of a split of it and MPI_COMM_WORLD itself (until the
 * verdict's allreduce), on which no blocking collective runs. Round 0 starts MPI_Ialltoallv,
 * MPI_Ialltoall, MPI_Iallreduce and MPI_Iallgather on all four communicators before
 * completing any (every first call outstanding at once, the set-ups in flight; completed by one MPI_Waitall in reverse order), rounds 1..9 one
 * communicator after the other; then a persistent alltoallv on a fourth, fresh duplicate
 * (where the library has one). Every receive buffer is sentinel-filled with gaps and
 * compared byte for byte with the library's own call (PMPI_*, blocking, on the same inputs,
 * before the start). run_client.py checks in the statistics that tuna's path ran every
 * call and, with forced rows, that none ran the library's call instead.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "nb_calls.h"
#include "tuna_mpi_features.h"

#define ROUNDS 10
#define NCOMM 4 /* the last: MPI_COMM_WORLD, also seen only by nonblocking calls */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    client_start(120);
    MPI_Comm comm[NCOMM];
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_split(comm[0], me % 2, P - me, &comm[1]); /* reversed order within the half */
    MPI_Comm_split(comm[0], me < P / 2, me, &comm[2]);
    comm[3] = MPI_COMM_WORLD;
    for (int round = 0; round < ROUNDS; round++) {
        calls c[NCOMM];
        MPI_Request q[NCOMM * NCOLL];
        if (round == 0) { /* every first call outstanding at once */
            for (int k = 0; k < NCOMM; k++)
                calls_make(&c[k], comm[k], round * 7 + k);
            for (int k = 0; k < NCOMM; k++)
                calls_start(&c[k], q + NCOLL * k);
            MPI_Request rev[NCOMM * NCOLL];
            for (int i = 0; i < NCOMM * NCOLL; i++)
                rev[i] = q[NCOMM * NCOLL - 1 - i];
            MPI_Waitall(NCOMM * NCOLL, rev, MPI_STATUSES_IGNORE);
            for (int k = 0; k < NCOMM; k++)
                calls_check(&c[k], round * 10 + k), calls_free(&c[k]);
            continue;
        }
        for (int k = 0; k < NCOMM; k++) {
            calls_make(&c[k], comm[k], round * 7 + k);
            calls_start(&c[k], q);
            MPI_Waitall(NCOLL, q, MPI_STATUSES_IGNORE);
            calls_check(&c[k], round * 10 + k);
            calls_free(&c[k]);
        }
    }
#ifdef ALLTOALLV_INIT
    { /* a persistent alltoallv on a fresh duplicate: its plan sets the communicator up */
        MPI_Comm fresh;
        MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
        calls c;
        calls_make(&c, fresh, 99);
        MPI_Request r;
        ALLTOALLV_INIT(c.vs, c.sc, c.sd, MPI_INT, c.vr, c.rc, c.rd, MPI_INT, fresh,
                       MPI_INFO_NULL, &r);
        for (int s = 0; s < 3; s++) {
            for (int i = 0; i < c.rlen; i++)
                c.vr[i] = SENTINEL;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            expect(memcmp(c.vr, c.vref, sizeof(int) * (size_t)c.rlen) == 0,
                   "persistent alltoallv bytes", s);
        }
        MPI_Request_free(&r);
        calls_free(&c);
        MPI_Comm_free(&fresh);
    }
#endif
    for (int k = NCOMM - 2; k >= 0; k--)
        MPI_Comm_free(&comm[k]);
    int total = client_outcome("first_calls");
    MPI_Finalize();
    return total ? 1 : 0;
}
