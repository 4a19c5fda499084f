/*
 * auto allreduce: chooses an algorithm and k from P, the node topology, the
 * vector's bytes and whether the op commutes (identical on every rank by
 * MPI's rules) with the cost model (docs/tuning.md), then runs it.
 */
#include "tuna_coll.h"
#include "../select/tuna_select.h"

#include <string.h>

int tuna_ar_auto(const tuna_ar_args *a)
{
    int rc = tuna_select_agree(a->ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    int tsize = 0;
    TUNA_MPI_CHECK(MPI_Type_size(a->type, &tsize));
    double bytes = (double)a->count * (double)tsize;
    tuna_select_input in = {.P = a->size, .Q = a->ctx->ranks_per_node, .N = a->ctx->nnodes,
                            .max_block = bytes, .mean_block = bytes, .total_max = bytes};
    tuna_choice c;
    rc = tuna_select_collective(TUNA_ALLREDUCE, &in, bytes, a->commute, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->rank == 0)
        tuna_log(2, "auto allreduce: P=%d Q=%d N=%d, %.0f bytes%s: %s (k=%ld), predicted "
                    "%.3g us",
                 in.P, in.Q, in.N, bytes, a->commute ? "" : ", non-commutative op",
                 tuna_ar_table[c.algorithm].info.name, c.param[0], c.predicted * 1e6);
    tuna_ar_args chosen = *a;
    memcpy(chosen.param, c.param, sizeof chosen.param);
    tuna_stats_current.algorithm = c.algorithm;
    memcpy(tuna_stats_current.params, c.param, sizeof tuna_stats_current.params);
    tuna_stats_current.predicted = c.predicted;
    tuna_stats_current.auto_source = 1;
    return tuna_ar_table[c.algorithm].run(&chosen);
}
