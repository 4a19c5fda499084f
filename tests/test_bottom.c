/*
 * MPI_BOTTOM: buffers given as absolute addresses inside the datatype (MPI allows this for
 * every collective). Every alltoallv row, blocking and as a plan, sends from and receives
 * into MPI_BOTTOM with types that hold the buffers' addresses, non-uniform counts (zeros
 * included), and must deliver exactly the bytes PMPI_Alltoallv delivers for the same
 * exchange on ordinary buffers; receive slots no block targets keep their sentinel. (MPICH
 * 4.0.2's MPI_Pack rejects MPI_BOTTOM: tuna packs such blocks another way, datatype.c.)
 *
 * Usage: test_bottom   (under mpiexec, any P)
 */
#include "support/test_expect.h"
#include "tuna.h"

#include <stdlib.h>
#include <string.h>

#define SENTINEL (-777)

/* Ints rank `from` sends rank `to`: 0 to 3, zero for some pairs. */
static int count_of(int from, int to)
{
    return (from * 3 + to * 5) % 4;
}

/* One int at buf's absolute address, extent one int: displacements count ints from buf. */
static MPI_Datatype absolute_int(const int *buf)
{
    MPI_Aint addr;
    int one = 1;
    MPI_Datatype t;
    MPI_Get_address(buf, &addr);
    MPI_Type_create_hindexed(1, &one, &addr, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static int sc[64], sd[64], rc_[64], rd[64];
static int *sbuf, *rbuf, *ref;
static int rtotal;

static void reset_recv(void)
{
    for (int i = 0; i < rtotal + 1; i++)
        rbuf[i] = SENTINEL;
}

static void check(const char *what, const char *name, int rc)
{
    expect(rc == MPI_SUCCESS && memcmp(rbuf, ref, sizeof(int) * (size_t)(rtotal + 1)) == 0,
           what, name, rc);
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (P > 64) {
        if (me == 0)
            fprintf(stderr, "test_bottom: at most 64 ranks\n");
        MPI_Finalize();
        return 2;
    }
    int stotal = 0;
    rtotal = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(me, j), sd[j] = stotal, stotal += sc[j];
        /* receive blocks in reverse order, one int gap after each: displacements differ
         * from the packed order and gaps must keep their sentinel */
    }
    for (int j = P - 1; j >= 0; j--)
        rc_[j] = count_of(j, me), rd[j] = rtotal, rtotal += rc_[j] + 1;
    sbuf = malloc(sizeof(int) * (size_t)(stotal + 1));
    rbuf = malloc(sizeof(int) * (size_t)(rtotal + 1));
    ref = malloc(sizeof(int) * (size_t)(rtotal + 1));
    for (int i = 0; i < stotal; i++)
        sbuf[i] = me * 1000 + i;
    for (int i = 0; i < rtotal + 1; i++)
        ref[i] = SENTINEL;
    PMPI_Alltoallv(sbuf, sc, sd, MPI_INT, ref, rc_, rd, MPI_INT, MPI_COMM_WORLD);

    MPI_Datatype st = absolute_int(sbuf), rt = absolute_int(rbuf);
    for (int a = 0; a < tuna_algorithm_count(TUNA_ALLTOALLV); a++) {
        const char *name = tuna_algorithm_get(TUNA_ALLTOALLV, a)->name;
        tuna_options opt;
        if (tuna_options_parse(name, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS) {
            expect(0, "options of the row", name, MPI_ERR_ARG);
            continue;
        }
        reset_recv();
        int rc = tuna_alltoallv(MPI_BOTTOM, sc, sd, st, MPI_BOTTOM, rc_, rd, rt, MPI_COMM_WORLD,
                                &opt);
        check("alltoallv from and to MPI_BOTTOM", name, rc);
        /* one side absolute, the other ordinary */
        reset_recv();
        rc = tuna_alltoallv(MPI_BOTTOM, sc, sd, st, rbuf, rc_, rd, MPI_INT, MPI_COMM_WORLD, &opt);
        check("alltoallv from MPI_BOTTOM", name, rc);
        reset_recv();
        rc = tuna_alltoallv(sbuf, sc, sd, MPI_INT, MPI_BOTTOM, rc_, rd, rt, MPI_COMM_WORLD, &opt);
        check("alltoallv to MPI_BOTTOM", name, rc);
        tuna_plan plan = NULL;
        rc = tuna_alltoallv_init(MPI_BOTTOM, sc, sd, st, MPI_BOTTOM, rc_, rd, rt, MPI_COMM_WORLD,
                                 &opt, TUNA_PLAN_ESTIMATE, &plan);
        expect(rc == MPI_SUCCESS, "alltoallv_init with MPI_BOTTOM", name, rc);
        for (int k = 0; k < 2 && plan; k++) {
            reset_recv();
            rc = tuna_start(plan);
            if (rc == MPI_SUCCESS)
                rc = tuna_wait(plan);
            check("plan start from and to MPI_BOTTOM", name, rc);
        }
        if (plan)
            tuna_plan_free(&plan);
    }
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    free(sbuf);
    free(rbuf);
    free(ref);
    if (me == 0)
        printf("test_bottom: P=%d %s\n", P, failures ? "FAILED" : "OK");
    MPI_Finalize();
    return failures ? 1 : 0;
}
