/* SMPI probe: every rank exchanges BYTES with rank + SHIFT and rank - SHIFT (one Irecv, one
 * Isend, Waitall) after a barrier; rank 0 prints the slowest rank's time of the second try.
 * Used to find how much injection bandwidth a simulated node gets (docs/simulation.md). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc != 3) {
        if (me == 0)
            fprintf(stderr, "usage: shift_exchange BYTES SHIFT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[1]), s = atoi(argv[2]);
    char *a = calloc((size_t)n, 1), *b = calloc((size_t)n, 1);
    double worst = 0;
    for (int it = 0; it < 2; it++) {
        MPI_Request r[2];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Irecv(b, n, MPI_BYTE, (me - s % p + p) % p, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(a, n, MPI_BYTE, (me + s) % p, 0, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        double t = MPI_Wtime() - t0;
        MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    }
    if (me == 0)
        printf("P %d bytes %d shift %d: %.1f us\n", p, n, s, worst * 1e6);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
