/*
 * The selector's input (tuna_select_input) from a communicator's context and a call's sizes:
 * the one place that fills it, so the blocking, nonblocking and planned forms of a collective
 * give the model, the tuning tables, the memo and learning the same description of a call.
 */
#include "tuna_select.h"

tuna_select_input tuna_select_input_of(const tuna_ctx *ctx, tuna_collective coll, double bytes,
                                       bool commute)
{
    tuna_select_input in = {.P = ctx->size, .Q = ctx->ranks_per_node, .N = ctx->nnodes,
                            .commute = commute};
    if (coll == TUNA_ALLTOALLV)
        return in; /* its statistics come from the agreement: tuna_select_input_a2av */
    /* Uniform: every block (allreduce: every rank's vector) is `bytes`; one rank sends P
     * blocks, except in allreduce, whose model reads the vector alone. */
    in.max_block = in.mean_block = in.bytes = bytes;
    in.total_max = coll == TUNA_ALLREDUCE ? bytes : bytes * ctx->size;
    /* alltoall's empty blocks are the alltoallv model's sparsity (its rows price them);
     * allgather and allreduce rows do not read it. */
    in.zero_fraction = coll == TUNA_ALLTOALL && bytes == 0 ? 1 : 0;
    return in;
}

tuna_select_input tuna_select_input_a2av(const tuna_ctx *ctx, double max_block,
                                         double mean_block, double total_max,
                                         double zero_fraction, bool agree_pending)
{
    /* commute: no op; true as for the other collectives without one */
    tuna_select_input in = tuna_select_input_of(ctx, TUNA_ALLTOALLV, 0, true);
    in.max_block = max_block;
    in.mean_block = mean_block;
    in.total_max = total_max;
    in.zero_fraction = zero_fraction;
    in.agree_pending = agree_pending;
    return in;
}
