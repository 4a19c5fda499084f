/*
 * auto allreduce: the dispatcher's choice of an algorithm and k from P, the node topology,
 * the vector's bytes and whether the op commutes (identical on every rank by MPI's rules)
 * with the cost model (docs/tuning.md), made before any copy; a choice without a run
 * function is the library's own MPI_Allreduce (short vectors it runs the same way itself).
 */
#include "allreduce.h"

int tuna_ar_auto_choose(tuna_ctx *ctx, double bytes, bool commute, tuna_choice *c,
                        tuna_learn_class **learning)
{
    return tuna_coll_auto_choose(ctx, &tuna_ar_registry, bytes, commute,
                                 commute ? " bytes" : " bytes, non-commutative op", c, learning);
}

/*
 * Whether the MPI library itself runs the model's choice: recursive doubling on short
 * vectors, as MPICH does (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE = 2048 bytes) and Open MPI's
 * coll/tuned does for such sizes. Then the library's own call is the same exchange with less
 * work around it, so auto hands it over. Other libraries (SMPI): never.
 */
bool tuna_ar_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time)
{
    return tuna_library_runs_recursive_doubling(tuna_ar_cost_recursive_doubling(m, in, NULL, NULL),
                                                best_time) &&
           in->bytes <= 2048;
}
