/*
 * auto allgather: chooses an algorithm and k from P, the node topology and
 * the block size (identical on every rank: the dispatcher has agreed on it)
 * with the cost model (docs/tuning.md), then runs it.
 */
#include "tuna_coll.h"
#include "../select/tuna_select.h"

#include <string.h>

int tuna_ag_auto(const tuna_ag_args *a)
{
    int rc = tuna_select_agree(a->ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_select_input in = {.P = a->size, .Q = a->ctx->ranks_per_node, .N = a->ctx->nnodes,
                            .max_block = (double)a->block, .mean_block = (double)a->block,
                            .total_max = (double)a->block * a->size};
    tuna_choice c;
    rc = tuna_select_collective(TUNA_ALLGATHER, &in, (double)a->block, true, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->rank == 0)
        tuna_log(2, "auto allgather: P=%d Q=%d N=%d, %zu-byte blocks: %s (k=%ld), predicted "
                    "%.3g us",
                 in.P, in.Q, in.N, a->block, tuna_ag_table[c.algorithm].info.name, c.param[0],
                 c.predicted * 1e6);
    tuna_ag_args chosen = *a;
    memcpy(chosen.param, c.param, sizeof chosen.param);
    tuna_stats_current.algorithm = c.algorithm;
    memcpy(tuna_stats_current.params, c.param, sizeof tuna_stats_current.params);
    tuna_stats_current.predicted = c.predicted;
    tuna_stats_current.auto_source = 1;
    return tuna_ag_table[c.algorithm].run(&chosen);
}
