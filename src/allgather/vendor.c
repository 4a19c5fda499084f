/* vendor: the MPI library's own MPI_Allgather (PMPI_Allgather), passed straight through. */
#include "allgather.h"

int tuna_ag_vendor(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "PMPI_Allgather failed");
    return MPI_SUCCESS;
}
