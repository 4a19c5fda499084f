/*
 * Helpers shared by the collectives: parameter resolution (all of them), and for
 * the allgather and allreduce families raw-byte datatypes, the k-ring group
 * rule, rank folding for recursive multiplying and the in-place block permutation.
 */
#include "tuna_coll.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

long tuna_coll_resolve_param(const tuna_param_info *p, long v, int P)
{
    if (v == TUNA_PARAM_P)
        v = P;
    else if (v == TUNA_PARAM_SQRTP) {
        long s = (long)ceil(sqrt((double)P));
        while (s * s < P)
            s++;
        while (s > 1 && (s - 1) * (s - 1) >= P)
            s--;
        v = s;
    }
    long max = p->max == TUNA_PARAM_P ? P : p->max;
    if (v > max)
        v = max;
    if (v < p->min)
        v = p->min;
    return v;
}

int tuna_coll_bytes_type(size_t bytes, MPI_Datatype *out)
{
    if (bytes <= (size_t)INT_MAX) {
        TUNA_MPI_CHECK(MPI_Type_contiguous((int)bytes, MPI_BYTE, out));
        TUNA_MPI_CHECK(MPI_Type_commit(out));
        return MPI_SUCCESS;
    }
    /* Whole chunks plus a remainder, so no int count overflows (committed). */
    int n;
    bool made;
    return tuna_message_type((MPI_Count)bytes, MPI_BYTE, 1, &n, out, &made);
}

int tuna_coll_agree_args(tuna_ctx *ctx, const char *coll, int local_rc, const long long *same,
                         const char *const *names, int n)
{
    /* max of (failed, v, -v): a value is the same everywhere iff max v = min v */
    long long v[1 + 2 * 4] = {local_rc != MPI_SUCCESS};
    if (n > 4)
        return tuna_error_set(MPI_ERR_INTERN, "tuna_%s: %d values to agree on, at most 4", coll,
                              n);
    for (int i = 0; i < n; i++) {
        v[1 + 2 * i] = same[i];
        v[2 + 2 * i] = -same[i];
    }
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, 1 + 2 * n, MPI_LONG_LONG, MPI_MAX, ctx->comm);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "tuna_%s: agreement allreduce failed", coll);
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (v[0])
        return tuna_error_set(MPI_ERR_ARG,
                              "tuna_%s: invalid arguments on another rank; no data moved", coll);
    for (int i = 0; i < n; i++)
        if (v[1 + 2 * i] != -v[2 + 2 * i])
            return tuna_error_set(MPI_ERR_ARG,
                                  "tuna_%s: %s differs across ranks (%lld to %lld); no data "
                                  "moved",
                                  coll, names[i], -v[2 + 2 * i], v[1 + 2 * i]);
    return MPI_SUCCESS;
}

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

int tuna_fold_start(const tuna_fold *f, int g)
{
    return g * f->base + (g < f->rem ? g : f->rem);
}

int tuna_fold_group_of(const tuna_fold *f, int rank)
{
    int big = f->rem * (f->base + 1);
    if (rank < big)
        return rank / (f->base + 1);
    return f->rem + (rank - big) / f->base;
}

int tuna_fold_reverse(const tuna_fold *f, int g)
{
    int r = 0;
    for (int i = 0; i < f->m; i++) {
        r = r * f->k + g % f->k;
        g /= f->k;
    }
    return r;
}

int tuna_permute_blocks_inplace(char *buf, size_t block, int n, const int *src)
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
        memcpy(tmp, buf + (size_t)start * block, block);
        int to = start;
        for (int from = src[to]; from != start; to = from, from = src[to]) {
            memcpy(buf + (size_t)to * block, buf + (size_t)from * block, block);
            done[from] = 1;
        }
        memcpy(buf + (size_t)to * block, tmp, block);
    }
    free(done);
    free(tmp);
    return MPI_SUCCESS;
}
