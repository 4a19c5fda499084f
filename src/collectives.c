/*
 * The list of tuna's collectives: each one's registry (the rows in its family's table.c).
 * It names every family, so it is not in src/core (the base the families build on, which
 * includes none of them) nor in src/select (which is handed a registry and includes no
 * family either): it sits above the families, next to the code that uses all of them.
 * Callers reach it through tuna_registry_of (src/core/tuna_registry.h).
 */
#include "allgather/allgather.h"
#include "allreduce/allreduce.h"
#include "alltoall/alltoall.h"
#include "alltoallv/alltoallv.h"
#include "neighbor/neighbor.h"

const tuna_registry *tuna_registry_of(tuna_collective coll)
{
    switch (coll) {
    case TUNA_ALLTOALLV: return &tuna_a2av_registry;
    case TUNA_ALLGATHER: return &tuna_ag_registry;
    case TUNA_ALLREDUCE: return &tuna_ar_registry;
    case TUNA_ALLTOALL: return &tuna_a2a_registry;
    case TUNA_NEIGHBOR_ALLTOALLV: return &tuna_nbr_registry;
    default: return NULL;
    }
}
