/*
 * auto allgather: chooses an algorithm and k from P, the node topology and
 * the block size (identical on every rank: MPI's rules) with the cost model
 * (docs/tuning.md), then runs it. Where the library itself runs the choice
 * (short totals), the dispatcher calls the library before any packing
 * (tuna_ag_auto_choose).
 */
#include "tuna_coll.h"
#include "../select/tuna_select.h"

#include <string.h>

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

int tuna_ag_auto(const tuna_ag_args *a)
{
    tuna_choice c;
    int rc = tuna_ag_auto_choose(a->ctx, a->block, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!tuna_ag_table[c.algorithm].run) /* the library's own, on the packed blocks */
        return tuna_ag_vendor(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a->buf, (int)a->block,
                              MPI_BYTE, a->ctx->comm);
    tuna_ag_args chosen = *a;
    memcpy(chosen.param, c.param, sizeof chosen.param);
    return tuna_ag_table[c.algorithm].run(&chosen);
}
