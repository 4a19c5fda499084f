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
    int rc = tuna_select_agree(ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_select_input in = tuna_select_input_of(ctx, TUNA_ALLREDUCE, bytes, commute);
    if (tuna_learn_last_find(ctx, &tuna_ar_registry, &in, c, learning))
        return MPI_SUCCESS;
    rc = tuna_select_collective(&tuna_ar_registry, &in, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx->rank == 0)
        tuna_log(2, "auto allreduce: P=%d Q=%d N=%d, %.0f bytes%s: %s (k=%ld), predicted "
                    "%.3g us",
                 in.P, in.Q, in.N, bytes, commute ? "" : ", non-commutative op",
                 tuna_ar_table[c->algorithm].desc.info.name, c->param[0], c->predicted * 1e6);
    return tuna_learn_collective(ctx, &tuna_ar_registry, &in, c, learning);
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
