/*
 * auto allreduce: the dispatcher's choice of an algorithm and k from P, the node topology,
 * the vector's bytes and whether the op commutes (identical on every rank by MPI's rules)
 * with the cost model (docs/tuning.md), made before any copy; a choice without a run
 * function is the library's own MPI_Allreduce (short vectors it runs the same way itself).
 */
#include "tuna_coll.h"
#include "../select/tuna_select.h"

int tuna_ar_auto_choose(tuna_ctx *ctx, double bytes, bool commute, tuna_choice *c)
{
    int rc = tuna_select_agree(ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_select_input in = {.P = ctx->size, .Q = ctx->ranks_per_node, .N = ctx->nnodes,
                            .max_block = bytes, .mean_block = bytes, .total_max = bytes};
    rc = tuna_select_collective(TUNA_ALLREDUCE, &in, bytes, commute, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx->rank == 0)
        tuna_log(2, "auto allreduce: P=%d Q=%d N=%d, %.0f bytes%s: %s (k=%ld), predicted "
                    "%.3g us",
                 in.P, in.Q, in.N, bytes, commute ? "" : ", non-commutative op",
                 tuna_ar_table[c->algorithm].info.name, c->param[0], c->predicted * 1e6);
    tuna_select_record(c);
    return MPI_SUCCESS;
}
