/*
 * Fortran MPI_ALLTOALLW, MPI_IALLTOALLW and the persistent MPI_ALLTOALLW_INIT (Open MPI 4.1:
 * MPIX_ALLTOALLW_INIT) for Open MPI, whose Fortran wrappers call PMPI_Alltoallw (...) directly,
 * so the preload's C entries never see them. Each binding converts the handles (the two type
 * arrays: one C handle per peer, the remote group's size on an intercommunicator) and the
 * sentinels, and calls the preload's C entry of the same name (src/preload/alltoallw.c).
 * MPICH's Fortran calls the C MPI_Alltoallw (...) itself: this file is built for Open MPI only.
 */
#include "fortran_openmpi.h"
#include "preload_internal.h" /* mpi-ext.h where the MPIX_ persistent collectives exist */

#include <stdlib.h>

/* The calls' arguments in C: the buffers, the comm, the types of both sides. */
typedef struct w_c {
    void *sbuf, *rbuf;
    MPI_Comm comm;
    MPI_Datatype *st, *rt; /* st NULL for MPI_IN_PLACE (its send arguments are ignored) */
} w_c;

/* The C arguments of a Fortran call; MPI_SUCCESS, or MPI_ERR_NO_MEM with nothing held. An
 * invalid communicator converts no types: the C entry reports the communicator. */
static int w_convert(void *sendbuf, const MPI_Fint *sendtypes, void *recvbuf,
                     const MPI_Fint *recvtypes, const MPI_Fint *comm, w_c *c)
{
    *c = (w_c){preload_f_buffer(sendbuf), preload_f_buffer(recvbuf), PMPI_Comm_f2c(*comm), NULL,
               NULL};
    int n = 0, inter = 0;
    if (c->comm != MPI_COMM_NULL && PMPI_Comm_test_inter(c->comm, &inter) == MPI_SUCCESS &&
        (inter ? PMPI_Comm_remote_size(c->comm, &n) : PMPI_Comm_size(c->comm, &n)) != MPI_SUCCESS)
        n = 0;
    c->rt = malloc(sizeof *c->rt * (size_t)(2 * n + 1));
    if (!c->rt)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < n; j++)
        c->rt[j] = PMPI_Type_f2c(recvtypes[j]);
    if (c->sbuf != MPI_IN_PLACE) {
        c->st = c->rt + n;
        for (int j = 0; j < n; j++)
            c->st[j] = PMPI_Type_f2c(sendtypes[j]);
    }
    return MPI_SUCCESS;
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) /* optional in mpi_f08 */
        *ierr = (MPI_Fint)rc;
}

static void alltoallw_f(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                        const MPI_Fint *sendtypes, void *recvbuf, const MPI_Fint *recvcounts,
                        const MPI_Fint *rdispls, const MPI_Fint *recvtypes, const MPI_Fint *comm,
                        MPI_Fint *ierr)
{
    w_c c;
    int rc = w_convert(sendbuf, sendtypes, recvbuf, recvtypes, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Alltoallw(c.sbuf, sendcounts, sdispls, c.st, c.rbuf, recvcounts, rdispls, c.rt,
                           c.comm);
    free(c.rt);
    set_ierr(ierr, rc);
}

static void ialltoallw_f(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                         const MPI_Fint *sendtypes, void *recvbuf, const MPI_Fint *recvcounts,
                         const MPI_Fint *rdispls, const MPI_Fint *recvtypes, const MPI_Fint *comm,
                         MPI_Fint *request, MPI_Fint *ierr)
{
    /* The C arrays are read at the start only (tuna_ialltoallw lays the call out there; the
     * library's MPI_Ialltoallw keeps the type handles, which Open MPI's own Fortran binding
     * frees as well, after the start). */
    w_c c;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = w_convert(sendbuf, sendtypes, recvbuf, recvtypes, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Ialltoallw(c.sbuf, sendcounts, sdispls, c.st, c.rbuf, recvcounts, rdispls, c.rt,
                            c.comm, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    free(c.rt);
    set_ierr(ierr, rc);
}

PRELOAD_F_NAMES(alltoallw_f, PRELOAD_F_VECTOR_P, PRELOAD_F_VECTOR_A, mpi_alltoallw, MPI_ALLTOALLW)
PRELOAD_F_NAMES(ialltoallw_f, PRELOAD_F_VECTOR_NB_P, PRELOAD_F_VECTOR_NB_A, mpi_ialltoallw,
                MPI_IALLTOALLW)

/* The persistent form under the name the library declares (MPI 4's, else Open MPI 4.1's
 * MPIX_); it takes an info argument before the request. The plan copies the arrays and
 * duplicates the types at init, as the library's own init keeps its own. */
#if defined(TUNA_HAVE_MPI_ALLTOALLW_INIT)
#define F_ALLTOALLW_INIT MPI_Alltoallw_init
#define F_ALLTOALLW_INIT_NAMES mpi_alltoallw_init, MPI_ALLTOALLW_INIT
#elif defined(TUNA_HAVE_MPIX_ALLTOALLW_INIT)
#define F_ALLTOALLW_INIT MPIX_Alltoallw_init
#define F_ALLTOALLW_INIT_NAMES mpix_alltoallw_init, MPIX_ALLTOALLW_INIT
#endif

#if defined(F_ALLTOALLW_INIT)
static void alltoallw_init_f(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                             const MPI_Fint *sendtypes, void *recvbuf, const MPI_Fint *recvcounts,
                             const MPI_Fint *rdispls, const MPI_Fint *recvtypes,
                             const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *request,
                             MPI_Fint *ierr)
{
    w_c c;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = w_convert(sendbuf, sendtypes, recvbuf, recvtypes, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = F_ALLTOALLW_INIT(c.sbuf, sendcounts, sdispls, c.st, c.rbuf, recvcounts, rdispls,
                              c.rt, c.comm, PMPI_Info_f2c(*info), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    free(c.rt);
    set_ierr(ierr, rc);
}
PRELOAD_F_NAMES_OF(alltoallw_init_f, PRELOAD_F_VECTOR_INIT_P, PRELOAD_F_VECTOR_INIT_A,
                   F_ALLTOALLW_INIT_NAMES)
#endif
