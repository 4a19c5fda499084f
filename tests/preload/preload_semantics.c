/*
 * The preload library's own semantics, under LD_PRELOAD (run with P >= 2):
 * errors through the error handler with their class and tuna's message,
 * MPI_BOTTOM (absolute addresses) on one rank giving the right data, the
 * tuna_alltoallv info key (set_info, inherited by dup) and its rejection of
 * an invalid value. Exit status 0 when every check holds on every rank.
 */
#include <mpi.h>

#include "tuna_mpi_features.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect(int cond, int me, const char *what)
{
    if (!cond) {
        printf("[%d] FAILED: %s\n", me, what);
        failures++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *sc = malloc(4 * sizeof(int) * (size_t)P), *sd = sc + P, *rc = sd + P, *rd = rc + P;
    int *zero = calloc((size_t)P, sizeof(int));
    int *sbuf = malloc(sizeof(int) * (size_t)P), *rbuf = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++) {
        sc[j] = rc[j] = 1;
        sd[j] = rd[j] = j;
        sbuf[j] = me * 100 + j;
    }

    /* 1. A negative count (on every rank: by default each rank checks only its own
     * arguments, as MPI libraries do): an error, MPI_ERR_COUNT with tuna's message. */
    rc[0] = -1;
    int err = MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    MPI_Error_string(err, s, &len);
    MPI_Error_class(err, &cls);
    expect(err != MPI_SUCCESS, me, "negative count returns an error");
    {
        expect(cls == MPI_ERR_COUNT, me, "negative count has class MPI_ERR_COUNT");
#ifdef OPEN_MPI /* MPICH 4.0.2 cannot carry the message in the code: TUNA_VERBOSE prints it */
        expect(strstr(s, "recvcounts[0] = -1") != NULL, me, "error string names the count");
#endif
    }
    rc[0] = 1;

    /* 2. Rank 0 sends from MPI_BOTTOM with an absolute-address type: tuna takes it. */
    MPI_Datatype abs_type = MPI_INT;
    const void *send = sbuf;
    const int *sdisp = sd;
    int value = 4242;
    if (me == 0) {
        MPI_Aint addr;
        int one = 1;
        MPI_Get_address(&value, &addr);
        MPI_Type_create_hindexed(1, &one, &addr, MPI_INT, &abs_type);
        MPI_Type_commit(&abs_type);
        send = MPI_BOTTOM;
        sdisp = zero;
    }
    for (int j = 0; j < P; j++)
        rbuf[j] = -1;
    err = MPI_Alltoallv(send, sc, sdisp, abs_type, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
    expect(err == MPI_SUCCESS, me, "MPI_BOTTOM call succeeds");
    for (int j = 0; j < P; j++)
        expect(rbuf[j] == (j == 0 ? 4242 : j * 100 + me), me, "MPI_BOTTOM data");
    if (me == 0)
        MPI_Type_free(&abs_type);

    /* 3. The info key selects the algorithm (TUNA_VERBOSE shows it); dup inherits it. */
    MPI_Comm c, d;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tuna_alltoallv", "xor");
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    expect(MPI_Comm_set_info(c, info) == MPI_SUCCESS, me, "set_info with a valid value");
    MPI_Comm_dup(c, &d);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int j = 0; j < P; j++)
        rbuf[j] = -1;
    expect(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, d) == MPI_SUCCESS, me,
           "alltoallv on the dup");
    for (int j = 0; j < P; j++)
        expect(rbuf[j] == j * 100 + me, me, "data on the dup");
    MPI_Info_set(info, "tuna_alltoallv", "no-such-algorithm");
    err = MPI_Comm_set_info(c, info);
    MPI_Error_class(err, &cls);
    expect(cls == MPI_ERR_INFO_VALUE, me, "invalid info value gives MPI_ERR_INFO_VALUE");
    MPI_Info_free(&info);
    MPI_Comm_free(&c);
    MPI_Comm_free(&d);

#if defined(TUNA_HAVE_MPI_ALLTOALLV_C)
    /* 4. MPI_Alltoallv_c (MPI 4: MPICH 4): tuna_alltoallv_c, with no extra collective; the
     * statistics count it on the tuna path. Displacements in reverse order. */
    MPI_Count *cc = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *cd = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int j = 0; j < P; j++) {
        cc[j] = cc[P + j] = 1;
        cd[j] = cd[P + j] = P - 1 - j;
        sbuf[P - 1 - j] = me * 100 + j;
        rbuf[j] = -1;
    }
    err = MPI_Alltoallv_c(sbuf, cc, cd, MPI_INT, rbuf, cc + P, cd + P, MPI_INT, MPI_COMM_WORLD);
    expect(err == MPI_SUCCESS, me, "MPI_Alltoallv_c succeeds");
    for (int j = 0; j < P; j++)
        expect(rbuf[P - 1 - j] == j * 100 + me, me, "MPI_Alltoallv_c data");
    free(cc);
    free(cd);
#endif

    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("preload_semantics: %s on %d ranks\n", failures ? "FAILED" : "OK", P);
    free(sc);
    free(zero);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
