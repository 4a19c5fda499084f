/*
 * auto alltoall: the choice of a row and its parameters from P, the nodes and the block size,
 * which MPI's type-signature rule makes the same on every rank, so no call agrees on anything
 * (the selector's configuration is agreed once per communicator). The cost model chooses
 * (or a TUNA_TUNING entry), learning refines the choice on blocking calls, and where the
 * model's choice is a linear exchange the MPI library's own MPI_Alltoall runs it.
 */
#include "alltoall.h"

#include <math.h>
#include <string.h>


int tuna_a2a_auto_choose(tuna_ctx *ctx, size_t block, tuna_choice *c,
                         tuna_learn_class **learning)
{
    tuna_select_input in = tuna_select_input_of(ctx, TUNA_ALLTOALL, (double)block, true);
    if (tuna_learn_last_find(ctx, &tuna_a2a_registry, &in, c, learning))
        return MPI_SUCCESS;
    int rc = tuna_select_collective(&tuna_a2a_registry, &in, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx->rank == 0)
        tuna_log(2, "auto alltoall: P=%d Q=%d N=%d, %zu-byte blocks: %s, predicted %.3g us",
                 in.P, in.Q, in.N, block, tuna_a2a_table[c->algorithm].desc.info.name,
                 c->predicted * 1e6);
    return tuna_learn_collective(ctx, &tuna_a2a_registry, &in, c, learning);
}

/* A linear row at its default parameters within this much of the model's best counts as
 * the best (its grid's best may be a little cheaper). */
#define TUNA_A2A_LIBRARY_TOLERANCE 0.03

/* The cheapest linear exchange of the table, with its model-best parameters. */
static double best_linear(const tuna_profile *m, const tuna_select_input *in)
{
    double best = INFINITY;
    for (int i = 0; i < tuna_a2a_registry.n; i++) {
        const tuna_algorithm *row = &tuna_a2a_table[i].desc;
        if (row->kind != TUNA_ROW_ALGORITHM || !row->cost || strcmp(row->family, "linear") != 0)
            continue;
        long param[TUNA_MAX_PARAMS] = {0}, value[TUNA_MAX_PARAMS] = {0};
        for (int k = 0; k < row->info.nparams; k++)
            value[k] = row->info.params[k].defval;
        tuna_params_resolve(&row->info, value, in->P, param);
        const double t = tuna_model_cost(&tuna_a2a_registry, m, in, i, param);
        if (t >= 0 && t < best)
            best = t;
    }
    return best;
}

/*
 * Open MPI and MPICH run linear exchanges for MPI_Alltoall at most sizes (Open MPI's coll/tuned:
 * basic linear, pairwise and linear with a bounded window; MPICH: scattered and pairwise; both
 * a radix-2 Bruck for small blocks on larger communicators). Where the model's best is one of
 * tuna's linear rows, the library's own call runs the same kind of exchange without tuna's
 * work around it, so auto hands the call to it; tuna's rows run where a logarithmic or
 * hierarchical one wins. Other libraries (SMPI): never.
 */
bool tuna_a2a_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time)
{
    const tuna_mpi_library lib = tuna_select_library();
    if (lib != TUNA_MPILIB_OPENMPI && lib != TUNA_MPILIB_MPICH)
        return false;
    return in->P <= 2 || best_linear(m, in) <= best_time * (1 + TUNA_A2A_LIBRARY_TOLERANCE);
}
