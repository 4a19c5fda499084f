/*
 * auto allreduce: chooses an algorithm and k from P, the node topology, the
 * vector's bytes and whether the op commutes (identical on every rank by
 * MPI's rules) with the cost model (docs/tuning.md), then runs it. Where the
 * library itself runs the choice (short vectors), the dispatcher calls the
 * library before any copy (tuna_ar_auto_choose).
 */
#include "tuna_coll.h"
#include "../select/tuna_select.h"

#include <string.h>

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

int tuna_ar_auto(const tuna_ar_args *a)
{
    int tsize = 0;
    TUNA_MPI_CHECK(MPI_Type_size(a->type, &tsize));
    tuna_choice c;
    int rc = tuna_ar_auto_choose(a->ctx, (double)a->count * (double)tsize, a->commute, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!tuna_ar_table[c.algorithm].run) /* the library's own, on the result buffer */
        return tuna_ar_vendor(MPI_IN_PLACE, a->rbuf, a->count, a->type, a->op, a->ctx->comm);
    tuna_ar_args chosen = *a;
    memcpy(chosen.param, c.param, sizeof chosen.param);
    return tuna_ar_table[c.algorithm].run(&chosen);
}
