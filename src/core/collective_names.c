/*
 * Every collective's names, in one table indexed by tuna_collective: option strings and
 * statistics, the environment variable of its default, the drop-in library's info key and
 * the library's own call. The option parser, the context's agreement on the environment,
 * the preload and tuna-bench read them here; adding a collective adds one row.
 */
#include "tuna_internal.h"

#include <string.h>

const tuna_collective_names tuna_collective_table[TUNA_COLLECTIVE_COUNT] = {
    [TUNA_ALLTOALLV] = {"alltoallv", "TUNA_ALLTOALLV", "tuna_alltoallv", "PMPI_Alltoallv"},
    [TUNA_ALLGATHER] = {"allgather", "TUNA_ALLGATHER", "tuna_allgather", "PMPI_Allgather"},
    [TUNA_ALLREDUCE] = {"allreduce", "TUNA_ALLREDUCE", "tuna_allreduce", "PMPI_Allreduce"},
    [TUNA_ALLTOALL] = {"alltoall", "TUNA_ALLTOALL", "tuna_alltoall", "PMPI_Alltoall"},
    [TUNA_NEIGHBOR_ALLTOALLV] = {"neighbor_alltoallv", "TUNA_NEIGHBOR_ALLTOALLV",
                                 "tuna_neighbor_alltoallv", "PMPI_Neighbor_alltoallv"},
};

const char *tuna_collective_name(tuna_collective coll)
{
    return (unsigned)coll < TUNA_COLLECTIVE_COUNT ? tuna_collective_table[coll].name : "?";
}

int tuna_collective_find(const char *name)
{
    for (int c = 0; name && c < TUNA_COLLECTIVE_COUNT; c++)
        if (strcmp(tuna_collective_table[c].name, name) == 0)
            return c;
    return -1;
}
