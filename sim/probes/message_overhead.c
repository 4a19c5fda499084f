/* SMPI probe: ranks 0 and 1 post M Irecvs of S bytes (default 1), then M Isends, then one
 * Waitall; rank 0 prints the time of each part (second try). Shows which per-message overheads SMPI charges
 * (os per Isend; or per completed eager receive, none for rendezvous; docs/tuning.md). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int m = argc > 1 ? atoi(argv[1]) : 100;
    int s = argc > 2 ? atoi(argv[2]) : 1;
    char *b = calloc((size_t)(2 * m) * (size_t)s, 1);
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)(2 * m));
    double t[4] = {0};
    for (int it = 0; it < 2; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t[0] = MPI_Wtime();
        for (int i = 0; i < m; i++)
            MPI_Irecv(b + (size_t)i * s, s, MPI_BYTE, 1 - me, i, MPI_COMM_WORLD, &r[i]);
        t[1] = MPI_Wtime();
        for (int i = 0; i < m; i++)
            MPI_Isend(b + (size_t)(m + i) * s, s, MPI_BYTE, 1 - me, i, MPI_COMM_WORLD, &r[m + i]);
        t[2] = MPI_Wtime();
        MPI_Waitall(2 * m, r, MPI_STATUSES_IGNORE);
        t[3] = MPI_Wtime();
    }
    if (me == 0)
        printf("%d messages of %d B each way: irecvs %.2f us, isends %.2f us, wait %.2f us, total %.2f us\n",
               m, s, (t[1] - t[0]) * 1e6, (t[2] - t[1]) * 1e6, (t[3] - t[2]) * 1e6,
               (t[3] - t[0]) * 1e6);
    free(b);
    free(r);
    MPI_Finalize();
    return 0;
}
