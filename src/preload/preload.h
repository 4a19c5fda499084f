/* Interfaces shared by the files of the preload library (libtuna-preload.so). */
#ifndef TUNA_PRELOAD_H
#define TUNA_PRELOAD_H

#include <mpi.h>

/*
 * MPI_Alltoallv as the preload library implements it: the algorithm chosen
 * for `comm` (info key, TUNA_ALLTOALLV, built-in default), counted fallbacks
 * to PMPI_Alltoallv, errors through the communicator's error handler.
 * The Fortran bindings call this after converting their arguments.
 */
int tuna_preload_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* MPI_Allgather and MPI_Allreduce likewise (TUNA_ALLGATHER, TUNA_ALLREDUCE, info keys
 * tuna_allgather and tuna_allreduce); the Fortran bindings call these. */
int tuna_preload_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int tuna_preload_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm);

/* MPI_Alltoall likewise (TUNA_ALLTOALL, info key tuna_alltoall). */
int tuna_preload_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* Checks the configuration over MPI_COMM_WORLD once MPI is initialized (Fortran MPI_INIT). */
void tuna_preload_startup(void);

#endif /* TUNA_PRELOAD_H */
