/*
 * What the Open MPI Fortran bindings of the preload share (fortran_openmpi.c
 * defines these): the Fortran sentinels, and the five names Open MPI gives
 * every Fortran binding. Not exported (exports.map keeps only the MPI entry
 * points).
 */
#ifndef TUNA_FORTRAN_OPENMPI_H
#define TUNA_FORTRAN_OPENMPI_H

#include "preload.h"

/* A Fortran buffer address as C sees it: MPI_IN_PLACE / MPI_BOTTOM sentinels
 * converted. */
void *preload_f_buffer(void *buf);
/* Whether a Fortran status (array) argument is MPI_STATUS_IGNORE
 * (MPI_STATUSES_IGNORE). */
int preload_f_status_ignore(const MPI_Fint *status);
int preload_f_statuses_ignore(const MPI_Fint *statuses);

/*
 * One binding under every name Open MPI exports: mpif.h and `use mpi` (lo, lo_,
 * lo__, UP) and `use mpi_f08` (lo_f08_, whose TYPE(MPI_Comm) etc. arrive as a
 * reference to their INTEGER MPI_VAL, and whose ierror may be absent: NULL).
 * Each calls impl with args.
 */
#define PRELOAD_F_BIND(impl, params, args, name)                                                   \
    void name params;                                                                              \
    void name params                                                                               \
    {                                                                                              \
        impl args;                                                                                 \
    }
#define PRELOAD_F_NAMES(impl, params, args, lo, UP)                                                \
    PRELOAD_F_BIND(impl, params, args, lo)                                                         \
    PRELOAD_F_BIND(impl, params, args, lo##_)                                                      \
    PRELOAD_F_BIND(impl, params, args, lo##__)                                                     \
    PRELOAD_F_BIND(impl, params, args, UP)                                                         \
    PRELOAD_F_BIND(impl, params, args, lo##_f08_)
/* PRELOAD_F_NAMES with the names as one macro argument (a macro of `lo, UP`: the persistent
 * forms, whose names depend on the library's version). */
#define PRELOAD_F_NAMES_OF(impl, params, args, names) PRELOAD_F_NAMES_OF_(impl, params, args, names)
#define PRELOAD_F_NAMES_OF_(impl, params, args, lo, UP) PRELOAD_F_NAMES(impl, params, args, lo, UP)

/* The parameter lists (_P) several bindings take and the argument lists (_A) that pass them
 * on. Counts and displacements per rank, then the type handle(s) of each side (one, or per rank:
 * MPI_ALLTOALLW's): the blocking MPI_NEIGHBOR_ALLTOALLV and MPI_ALLTOALLW; _NB: a request after
 * them, their nonblocking forms and MPI_IALLTOALLV; _INIT: an info before it, the persistent
 * forms. */
#define PRELOAD_F_VECTOR_P                                                                         \
    (void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls, const MPI_Fint *sendtype, \
     void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *rdispls, const MPI_Fint *recvtype, \
     const MPI_Fint *comm, MPI_Fint *ierr)
#define PRELOAD_F_VECTOR_A                                                                         \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, ierr)
#define PRELOAD_F_VECTOR_NB_P                                                                      \
    (void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls, const MPI_Fint *sendtype, \
     void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *rdispls, const MPI_Fint *recvtype, \
     const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
#define PRELOAD_F_VECTOR_NB_A                                                                      \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,         \
     request, ierr)
#define PRELOAD_F_VECTOR_INIT_P                                                                    \
    (void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls, const MPI_Fint *sendtype, \
     void *recvbuf, const MPI_Fint *recvcounts, const MPI_Fint *rdispls, const MPI_Fint *recvtype, \
     const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierr)
#define PRELOAD_F_VECTOR_INIT_A                                                                    \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info,   \
     request, ierr)
/* One count and type per side, then a request: MPI_IALLTOALL, MPI_IALLGATHER,
 * MPI_INEIGHBOR_ALLTOALL. */
#define PRELOAD_F_COUNTED_NB_P                                                                     \
    (void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype, void *recvbuf,            \
     const MPI_Fint *recvcount, const MPI_Fint *recvtype, const MPI_Fint *comm, MPI_Fint *request, \
     MPI_Fint *ierr)

#endif /* TUNA_FORTRAN_OPENMPI_H */
