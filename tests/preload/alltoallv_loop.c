/*
 * A plain MPI program (no tuna header): ITERS calls of MPI_Alltoallv with one fixed pattern,
 * each rank checking what it received against what its peers' formula sends. Under the
 * preload its first calls are auto's learning, the rest the learned winner (or, with a
 * TUNA_WISDOM file from an earlier run, the winner from the first call).
 *
 *   alltoallv_loop [ITERS]    (default 80)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int count_of(int src, int dst)
{
    return 1 + (src * 7 + dst * 3) % 13; /* 1 .. 13 bytes: one class of calls */
}

static unsigned char byte_of(int src, int dst, int i, int it)
{
    return (unsigned char)(src * 31 + dst * 17 + i * 5 + it);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me, bad = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int iters = argc > 1 ? atoi(argv[1]) : 80;
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc = sc + 2 * P,
        *rd = sc + 3 * P;
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(me, j);
        rc[j] = count_of(j, me);
        sd[j] = st;
        rd[j] = rt;
        st += sc[j];
        rt += rc[j];
    }
    unsigned char *sbuf = malloc((size_t)st), *rbuf = malloc((size_t)rt);
    for (int it = 0; it < iters && !bad; it++) {
        for (int j = 0; j < P; j++)
            for (int i = 0; i < sc[j]; i++)
                sbuf[sd[j] + i] = byte_of(me, j, i, it);
        for (int k = 0; k < rt; k++)
            rbuf[k] = 0xEE;
        if (MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            bad = 1;
        for (int j = 0; j < P && !bad; j++)
            for (int i = 0; i < rc[j]; i++)
                if (rbuf[rd[j] + i] != byte_of(j, me, i, it)) {
                    fprintf(stderr, "rank %d, call %d: byte %d from rank %d wrong\n", me, it,
                            i, j);
                    bad = 1;
                    break;
                }
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    free(sc);
    MPI_Finalize();
    return any;
}
