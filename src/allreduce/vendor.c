/* vendor: the MPI library's own MPI_Allreduce (PMPI_Allreduce), passed straight through. */
#include "allreduce.h"

int tuna_ar_vendor(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "PMPI_Allreduce failed");
    return MPI_SUCCESS;
}
