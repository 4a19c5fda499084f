/* SMPI probe: every rank runs 10 rounds; in each it posts M Irecvs of S bytes from
 * me - z*W (z = 1..M), then M Isends to me + z*W, then one Waitall (a round of a log-round
 * exchange with M messages in flight). Rank 0 prints the slowest rank's time per round
 * (second try): the cost model's eager phase form (docs/tuning.md, "Phase"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int m = argc > 1 ? atoi(argv[1]) : 1, s = argc > 2 ? atoi(argv[2]) : 16;
    int w = argc > 3 ? atoi(argv[3]) : 1;
    const int rounds = 10;
    char *b = calloc((size_t)(2 * m) * (size_t)s, 1);
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)(2 * m));
    double t = 0, tmax = 0;
    for (int it = 0; it < 2; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int k = 0; k < rounds; k++) {
            for (int z = 1; z <= m; z++)
                MPI_Irecv(b + (size_t)(z - 1) * s, s, MPI_BYTE, ((me - z * w) % P + P) % P, k,
                          MPI_COMM_WORLD, &r[z - 1]);
            for (int z = 1; z <= m; z++)
                MPI_Isend(b + (size_t)(m + z - 1) * s, s, MPI_BYTE, (me + z * w) % P, k,
                          MPI_COMM_WORLD, &r[m + z - 1]);
            MPI_Waitall(2 * m, r, MPI_STATUSES_IGNORE);
        }
        t = MPI_Wtime() - t0;
    }
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("P %d, %d messages of %d B a round to distances %d..%d: %.2f us per round\n", P,
               m, s, w, m * w, tmax / rounds * 1e6);
    free(b);
    free(r);
    MPI_Finalize();
    return 0;
}
