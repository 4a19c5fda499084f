/*
 * auto allgather: the dispatcher's choice of an algorithm and k from P, the node topology
 * and the block size (identical on every rank: MPI's rules) with the cost model
 * (docs/tuning.md), made before any packing; a choice without a run function is the
 * library's own MPI_Allgather (short totals it runs the same way itself).
 */
#include "tuna_coll.h"
#include "../select/tuna_select.h"

int tuna_ag_auto_choose(tuna_ctx *ctx, size_t block, tuna_choice *c)
{
    int rc = tuna_select_agree(ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_select_input in = {.P = ctx->size, .Q = ctx->ranks_per_node, .N = ctx->nnodes,
                            .max_block = (double)block, .mean_block = (double)block,
                            .total_max = (double)block * ctx->size};
    rc = tuna_select_collective(TUNA_ALLGATHER, &in, (double)block, true, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx->rank == 0)
        tuna_log(2, "auto allgather: P=%d Q=%d N=%d, %zu-byte blocks: %s (k=%ld), predicted "
                    "%.3g us",
                 in.P, in.Q, in.N, block, tuna_ag_table[c->algorithm].info.name, c->param[0],
                 c->predicted * 1e6);
    tuna_select_record(c);
    return MPI_SUCCESS;
}
