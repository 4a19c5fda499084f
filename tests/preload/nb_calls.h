/*
 * One communicator's four nonblocking collectives of one round (MPI_Ialltoallv with gaps,
 * MPI_Ialltoall, MPI_Iallreduce, MPI_Iallgather): inputs from rank, index and salt,
 * sentinel-filled outputs, and the library's own results (PMPI_*, blocking, before the
 * start: not seen by the drop-in) to compare byte for byte. first_calls.c, created_comms.c.
 */
#ifndef TUNA_TEST_PRELOAD_NB_CALLS_H
#define TUNA_TEST_PRELOAD_NB_CALLS_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define SENTINEL (-7777)
#define NCOLL 4

/* One communicator's four calls of one round: inputs, outputs, the library's results. */
typedef struct calls {
    MPI_Comm comm;
    int n, r;                               /* size, rank */
    int *sc, *sd, *rc, *rd, slen, rlen;     /* alltoallv: counts (with gaps) */
    int *vs, *vr, *vref;                    /* alltoallv buffers */
    int *as, *ar, *aref;                    /* alltoall: 2 ints per peer */
    int red[3], rout[3], rref[3];           /* allreduce of 3 ints */
    int *gr, *gref, gin[2];                 /* allgather of 2 ints */
} calls;

static int val(int rank, int i, int salt) { return rank * 100000 + i * 10 + salt; }

static void calls_make(calls *c, MPI_Comm comm, int salt)
{
    c->comm = comm;
    MPI_Comm_size(comm, &c->n);
    MPI_Comm_rank(comm, &c->r);
    const int n = c->n;
    c->sc = malloc(sizeof(int) * 4 * (size_t)n);
    c->sd = c->sc + n, c->rc = c->sd + n, c->rd = c->rc + n;
    c->slen = c->rlen = 0;
    for (int j = 0; j < n; j++) { /* i sends j (i + j + salt) % 3 + 1 ints, a gap between */
        c->sc[j] = (c->r + j + salt) % 3 + 1;
        c->rc[j] = (j + c->r + salt) % 3 + 1;
        c->sd[j] = c->slen;
        c->rd[j] = c->rlen + 1;
        c->slen += c->sc[j] + 1;
        c->rlen += c->rc[j] + 2;
    }
    c->vs = malloc(sizeof(int) * (size_t)c->slen);
    c->vr = malloc(sizeof(int) * (size_t)c->rlen);
    c->vref = malloc(sizeof(int) * (size_t)c->rlen);
    c->as = malloc(sizeof(int) * 2 * (size_t)n);
    c->ar = malloc(sizeof(int) * 2 * (size_t)n);
    c->aref = malloc(sizeof(int) * 2 * (size_t)n);
    c->gr = malloc(sizeof(int) * 2 * (size_t)n);
    c->gref = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < c->slen; i++)
        c->vs[i] = val(c->r, i, salt);
    for (int i = 0; i < 2 * n; i++)
        c->as[i] = val(c->r, i, salt + 1);
    for (int i = 0; i < 3; i++)
        c->red[i] = val(c->r, i, salt + 2);
    c->gin[0] = val(c->r, 0, salt + 3), c->gin[1] = val(c->r, 1, salt + 3);
    for (int i = 0; i < c->rlen; i++)
        c->vr[i] = c->vref[i] = SENTINEL;
    for (int i = 0; i < 2 * n; i++)
        c->ar[i] = c->aref[i] = c->gr[i] = c->gref[i] = SENTINEL;
    for (int i = 0; i < 3; i++)
        c->rout[i] = c->rref[i] = SENTINEL;
    /* The library's own calls: not seen by the drop-in, so the communicator stays fresh. */
    PMPI_Alltoallv(c->vs, c->sc, c->sd, MPI_INT, c->vref, c->rc, c->rd, MPI_INT, comm);
    PMPI_Alltoall(c->as, 2, MPI_INT, c->aref, 2, MPI_INT, comm);
    PMPI_Allreduce(c->red, c->rref, 3, MPI_INT, MPI_SUM, comm);
    PMPI_Allgather(c->gin, 2, MPI_INT, c->gref, 2, MPI_INT, comm);
}

static void calls_start(calls *c, MPI_Request *q)
{
    MPI_Ialltoallv(c->vs, c->sc, c->sd, MPI_INT, c->vr, c->rc, c->rd, MPI_INT, c->comm, &q[0]);
    MPI_Ialltoall(c->as, 2, MPI_INT, c->ar, 2, MPI_INT, c->comm, &q[1]);
    MPI_Iallreduce(c->red, c->rout, 3, MPI_INT, MPI_SUM, c->comm, &q[2]);
    MPI_Iallgather(c->gin, 2, MPI_INT, c->gr, 2, MPI_INT, c->comm, &q[3]);
}

static void calls_check(calls *c, int it)
{
    const size_t n2 = sizeof(int) * 2 * (size_t)c->n;
    expect(memcmp(c->vr, c->vref, sizeof(int) * (size_t)c->rlen) == 0, "MPI_Ialltoallv bytes",
           it);
    expect(memcmp(c->ar, c->aref, n2) == 0, "MPI_Ialltoall bytes", it);
    expect(memcmp(c->rout, c->rref, sizeof c->rref) == 0, "MPI_Iallreduce bytes", it);
    expect(memcmp(c->gr, c->gref, n2) == 0, "MPI_Iallgather bytes", it);
}

static void calls_free(calls *c)
{
    free(c->sc), free(c->vs), free(c->vr), free(c->vref), free(c->as), free(c->ar);
    free(c->aref), free(c->gr), free(c->gref);
}

#endif /* TUNA_TEST_PRELOAD_NB_CALLS_H */
