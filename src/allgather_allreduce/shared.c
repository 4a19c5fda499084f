/*
 * Building blocks shared by the allgather and allreduce families: the k-ring group rule,
 * rank folding for recursive multiplying, the in-place block permutation, and auto's grid
 * over k.
 */
#include "shared.h"
#include "memkind.h"
#include "../device/index_maps.h"
#include "../transport/cuda_staged.h"

#include <stdlib.h>
#include <string.h>

int tuna_coll_kring_group(int P, long k)
{
    if (k > P)
        k = P;
    for (int g = (int)k; g > 1; g--)
        if (P % g == 0)
            return g;
    return 1;
}

void tuna_fold_init(tuna_fold *f, int P, int k, int rank)
{
    f->P = P;
    f->k = k < 2 ? 2 : k;
    f->Q = 1;
    f->m = 0;
    while ((long long)f->Q * f->k <= P) {
        f->Q *= f->k;
        f->m++;
    }
    f->base = P / f->Q;
    f->rem = P % f->Q;
    f->group = tuna_fold_group_of(f, rank);
    f->first = tuna_fold_start(f, f->group);
    f->last = tuna_fold_start(f, f->group + 1) - 1;
}

/* The maps themselves are the device kernels' too (src/device/index_maps.h). */
int tuna_fold_start(const tuna_fold *f, int g)
{
    return tuna_map_fold_start(f->base, f->rem, g);
}

int tuna_fold_group_of(const tuna_fold *f, int rank)
{
    return tuna_map_fold_group(f->base, f->rem, rank);
}

int tuna_fold_reverse(const tuna_fold *f, int g)
{
    return tuna_map_reverse(f->k, f->m, g);
}

int tuna_permute_blocks_inplace(const tuna_transport *tp, char *buf, size_t block, int n,
                                const int *src)
{
    if (n <= 1 || block == 0)
        return MPI_SUCCESS;
    char *done = tuna_calloc((size_t)n, 1);
    char *tmp = tuna_malloc(block);
    if (!done || !tmp) {
        free(done);
        free(tmp);
        return tuna_error_set(MPI_ERR_NO_MEM, "in-place permutation of %d blocks: out of memory",
                              n);
    }
    tuna_stats_temp(block + (size_t)n);
    for (int start = 0; start < n; start++) {
        if (done[start])
            continue;
        done[start] = 1;
        if (src[start] == start)
            continue;
        /* Walk the cycle backwards: save the first slot, pull each block into the slot it
         * belongs to, and drop the saved block into the slot that closes the cycle. */
        tuna_tp_copy(tp, tmp, buf + (size_t)start * block, block);
        int to = start;
        for (int from = src[to]; from != start; to = from, from = src[to]) {
            tuna_tp_copy(tp, buf + (size_t)to * block, buf + (size_t)from * block, block);
            done[from] = 1;
        }
        tuna_tp_copy(tp, buf + (size_t)to * block, tmp, block);
    }
    free(done);
    free(tmp);
    return MPI_SUCCESS;
}

void tuna_grid_k(const tuna_select_input *in, const tuna_algorithm_info *info,
                 tuna_candidates *out)
{
    long v[TUNA_GRID_MAX], param[TUNA_MAX_PARAMS] = {0};
    int n = tuna_grid_radix(in->P < 2 ? 2 : in->P, v);
    for (int i = 0; i < n; i++) {
        tuna_param_set(info, param, "k", v[i]);
        tuna_candidate(out, param);
    }
}

bool tuna_library_runs_recursive_doubling(double rd_time, double best_time)
{
    const tuna_mpi_library lib = tuna_select_library();
    if (lib != TUNA_MPILIB_OPENMPI && lib != TUNA_MPILIB_MPICH)
        return false;
    /* recursive doubling as good as the best (ties: P = 2, where every row is one step) */
    return rd_time >= 0 && rd_time <= best_time * (1 + 1e-9);
}

int tuna_coll_auto_device(tuna_ctx *ctx, const tuna_registry *reg, double bytes,
                          tuna_choice *c)
{
    int rc = tuna_select_agree(ctx); /* profiles and tables the same on every rank */
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_select_input in = tuna_select_input_of(ctx, reg->coll, bytes, true);
    rc = tuna_select_collective_memory(reg, &in, TUNA_MEMORY_DEVICE,
                                       tuna_algorithm_find(reg->coll, "ring"), c);
    if (rc == MPI_SUCCESS)
        tuna_select_record(c);
    return rc;
}

int tuna_coll_auto_choose(tuna_ctx *ctx, const tuna_registry *reg, double bytes, bool commute,
                          const char *size_note, tuna_choice *c, tuna_learn_class **learning)
{
    int rc = tuna_select_agree(ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_select_input in = tuna_select_input_of(ctx, reg->coll, bytes, commute);
    if (tuna_learn_last_find(ctx, reg, &in, c, learning))
        return MPI_SUCCESS;
    rc = tuna_select_collective(reg, &in, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx->rank == 0)
        tuna_log(2, "auto %s: P=%d Q=%d N=%d, %.0f%s: %s (k=%ld), predicted %.3g us",
                 tuna_collective_name(reg->coll), in.P, in.Q, in.N, bytes, size_note,
                 tuna_registry_row(reg, c->algorithm)->info.name, c->param[0],
                 c->predicted * 1e6);
    return tuna_learn_collective(ctx, reg, &in, c, learning);
}

int tuna_coll_device_begin(tuna_ctx *ctx, const tuna_registry *reg, bool choose, double bytes,
                           const tuna_transport **tp, tuna_choice *c)
{
    int rc = tuna_staged_get(ctx, tp);
    if (rc != MPI_SUCCESS)
        return rc;
    if (choose && (rc = tuna_coll_auto_device(ctx, reg, bytes, c)) != MPI_SUCCESS)
        return rc;
    (void)tuna_staged_result(*tp); /* nothing of an earlier call's */
    return MPI_SUCCESS;
}

int tuna_coll_device_end(const tuna_transport *tp, int rc)
{
    const int copy_rc = tuna_staged_result(tp);
    return rc != MPI_SUCCESS ? rc : copy_rc;
}
