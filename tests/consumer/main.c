/* Installed-library check: one tuna_alltoallv call, verified, exit code = errors. */
#include <tuna.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    /* rank i sends i+j+1 ints to rank j: at most 2P ints per block */
    int *sb = malloc(sizeof(int) * 2 * (size_t)P * P), *rb = malloc(sizeof(int) * 2 * (size_t)P * P);
    int s = 0, r = 0;
    for (int j = 0; j < P; j++) { /* rank i sends i+j+1 ints to rank j */
        sc[j] = me + j + 1;
        rc[j] = j + me + 1;
        sd[j] = s;
        rd[j] = r;
        for (int k = 0; k < sc[j]; k++)
            sb[s + k] = me * 1000 + j;
        s += sc[j];
        r += rc[j];
    }
    tuna_options opt;
    int err = tuna_options_parse("spreadout", TUNA_ALLTOALLV, &opt);
    if (err == MPI_SUCCESS)
        err = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    int bad = err != MPI_SUCCESS;
    for (int j = 0; j < P && !bad; j++)
        for (int k = 0; k < rc[j]; k++)
            bad |= rb[rd[j] + k] != j * 1000 + me;
    if (bad)
        fprintf(stderr, "consumer: rank %d wrong result (%s)\n", me, tuna_error_string(err));
    free(sc);
    free(sb);
    free(rb);
    MPI_Finalize();
    return bad;
}
