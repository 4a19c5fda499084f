/*
 * auto allgather: the dispatcher's choice of an algorithm and k from P, the node topology
 * and the block size (identical on every rank: MPI's rules) with the cost model
 * (docs/tuning.md), made before any packing; a choice without a run function is the
 * library's own MPI_Allgather (short totals it runs the same way itself).
 */
#include "allgather.h"

int tuna_ag_auto_choose(tuna_ctx *ctx, size_t block, tuna_choice *c,
                        tuna_learn_class **learning)
{
    return tuna_coll_auto_choose(ctx, &tuna_ag_registry, (double)block, true, "-byte blocks", c,
                                 learning);
}

/*
 * Whether the MPI library itself runs the model's choice: recursive doubling on short totals
 * (MPICH: MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE = 80 KiB, on a power-of-two communicator, Bruck
 * otherwise; Open MPI's coll/tuned likewise for such sizes). Then the library's own call is
 * the same exchange with less work around it (measured: tuna's recursive doubling 0.64x the
 * library's at 16 B, P = 2), so auto hands it over. Other libraries (SMPI): never.
 */
bool tuna_ag_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time)
{
    if (!tuna_library_runs_recursive_doubling(tuna_ag_cost_recursive_doubling(m, in, NULL, NULL),
                                              best_time))
        return false;
    const bool pow2 = in->P > 0 && (in->P & (in->P - 1)) == 0;
    return pow2 && in->bytes * in->P <= 81920;
}
