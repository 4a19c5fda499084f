/*
 * Open MPI's Fortran neighborhood all-to-all: MPI_NEIGHBOR_ALLTOALLV, MPI_NEIGHBOR_ALLTOALL, their
 * nonblocking forms and the persistent MPI_NEIGHBOR_ALLTOALLV_INIT (Open MPI 4.1:
 * MPIX_NEIGHBOR_ALLTOALLV_INIT). Open MPI's own Fortran wrappers call PMPI_Neighbor_alltoallv
 * etc., past the drop-in; these take every name Open MPI exports (fortran_openmpi.h) and call the
 * drop-in's C entries (neighbor.c). The nonblocking and persistent requests they hand out are
 * proxies, completed by the request bindings of fortran_openmpi_nonblocking.c. MPICH's Fortran
 * calls the C entries itself: not built there.
 */
#include "fortran_openmpi.h"
#include "preload_internal.h" /* mpi-ext.h where MPIX_Neighbor_alltoallv_init exists */

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) /* optional in mpi_f08 */
        *ierr = (MPI_Fint)rc;
}

/* The request, written back where the call succeeded (NULL: the blocking form). */
static void set_request(MPI_Fint *request, int rc, MPI_Request r)
{
    if (request && rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
}

static void neighbor_alltoallv_f(void *sendbuf, const MPI_Fint *sendcounts,
                                 const MPI_Fint *sdispls, const MPI_Fint *sendtype,
                                 void *recvbuf, const MPI_Fint *recvcounts,
                                 const MPI_Fint *rdispls, const MPI_Fint *recvtype,
                                 const MPI_Fint *comm, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Neighbor_alltoallv(preload_f_buffer(sendbuf), sendcounts, sdispls,
                                          PMPI_Type_f2c(*sendtype), preload_f_buffer(recvbuf),
                                          recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                                          PMPI_Comm_f2c(*comm)));
}

static void ineighbor_alltoallv_f(void *sendbuf, const MPI_Fint *sendcounts,
                                  const MPI_Fint *sdispls, const MPI_Fint *sendtype,
                                  void *recvbuf, const MPI_Fint *recvcounts,
                                  const MPI_Fint *rdispls, const MPI_Fint *recvtype,
                                  const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Ineighbor_alltoallv(preload_f_buffer(sendbuf), sendcounts, sdispls,
                                     PMPI_Type_f2c(*sendtype), preload_f_buffer(recvbuf),
                                     recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                                     PMPI_Comm_f2c(*comm), &r);
    set_request(request, rc, r);
    set_ierr(ierr, rc);
}

static void neighbor_alltoall_f(void *sendbuf, const MPI_Fint *sendcount,
                                const MPI_Fint *sendtype, void *recvbuf,
                                const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                                const MPI_Fint *comm, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Neighbor_alltoall(preload_f_buffer(sendbuf), (int)*sendcount,
                                         PMPI_Type_f2c(*sendtype), preload_f_buffer(recvbuf),
                                         (int)*recvcount, PMPI_Type_f2c(*recvtype),
                                         PMPI_Comm_f2c(*comm)));
}

static void ineighbor_alltoall_f(void *sendbuf, const MPI_Fint *sendcount,
                                 const MPI_Fint *sendtype, void *recvbuf,
                                 const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                                 const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Ineighbor_alltoall(preload_f_buffer(sendbuf), (int)*sendcount,
                                    PMPI_Type_f2c(*sendtype), preload_f_buffer(recvbuf),
                                    (int)*recvcount, PMPI_Type_f2c(*recvtype),
                                    PMPI_Comm_f2c(*comm), &r);
    set_request(request, rc, r);
    set_ierr(ierr, rc);
}

#define NBR_P                                                                                      \
    (void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype, void *recvbuf,            \
     const MPI_Fint *recvcount, const MPI_Fint *recvtype, const MPI_Fint *comm, MPI_Fint *ierr)
#define NBR_A (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr)
#define INBR_A (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierr)

PRELOAD_F_NAMES(neighbor_alltoallv_f, PRELOAD_F_VECTOR_P, PRELOAD_F_VECTOR_A,
                mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV)
PRELOAD_F_NAMES(ineighbor_alltoallv_f, PRELOAD_F_VECTOR_NB_P, PRELOAD_F_VECTOR_NB_A,
                mpi_ineighbor_alltoallv,
                MPI_INEIGHBOR_ALLTOALLV)
PRELOAD_F_NAMES(neighbor_alltoall_f, NBR_P, NBR_A, mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL)
PRELOAD_F_NAMES(ineighbor_alltoall_f, PRELOAD_F_COUNTED_NB_P, INBR_A, mpi_ineighbor_alltoall,
                MPI_INEIGHBOR_ALLTOALL)

/* The persistent form under the name the library declares (cmake/tuna_mpi_features.cmake). */
#if defined(TUNA_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT)
#define F_NBR_INIT MPI_Neighbor_alltoallv_init
#define F_NBR_INIT_NAMES mpi_neighbor_alltoallv_init, MPI_NEIGHBOR_ALLTOALLV_INIT
#elif defined(TUNA_HAVE_MPIX_NEIGHBOR_ALLTOALLV_INIT)
#define F_NBR_INIT MPIX_Neighbor_alltoallv_init
#define F_NBR_INIT_NAMES mpix_neighbor_alltoallv_init, MPIX_NEIGHBOR_ALLTOALLV_INIT
#endif
#if defined(F_NBR_INIT)
static void neighbor_alltoallv_init_f(void *sendbuf, const MPI_Fint *sendcounts,
                                      const MPI_Fint *sdispls, const MPI_Fint *sendtype,
                                      void *recvbuf, const MPI_Fint *recvcounts,
                                      const MPI_Fint *rdispls, const MPI_Fint *recvtype,
                                      const MPI_Fint *comm, const MPI_Fint *info,
                                      MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = F_NBR_INIT(preload_f_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype),
                        preload_f_buffer(recvbuf), recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                        PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &r);
    set_request(request, rc, r);
    set_ierr(ierr, rc);
}
PRELOAD_F_NAMES_OF(neighbor_alltoallv_init_f, PRELOAD_F_VECTOR_INIT_P, PRELOAD_F_VECTOR_INIT_A,
                   F_NBR_INIT_NAMES)
#endif
