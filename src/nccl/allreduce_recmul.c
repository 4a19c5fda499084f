/*
 * allreduce, recursive multiplying (PICCL) on NCCL, radix k, whole vectors: the groups of the
 * fold (tuna_fold, src/allgather_allreduce/shared.h). A member sends its vector to its leader,
 * which folds each into its result; the leaders run m rounds: in round r a leader sends its
 * result to the k-1 leaders whose group index differs in base-k digit r (distance k^r) and
 * receives theirs into k-1 temporaries (slot pair j: receive from digit d-j, send to digit
 * d+j), then folds them in; each leader sends the result to its members. Rounds: log_k P,
 * 2 more where P is not a power of k. Temporaries: k-1 vectors.
 */
#include "nccl_rows.h"

/* The leaders' m rounds: whole vectors with the k-1 leaders at distance k^r. */
static int rounds(const tuna_nccl_args *a, const tuna_fold *f, char *tmp, int rc)
{
    const size_t V = a->count * a->esize;
    const int v = f->group;
    for (int r = 0, D = 1; r < f->m && rc == MPI_SUCCESS; r++, D *= f->k) {
        const int d = (v / D) % f->k;
        for (int j = 1; j < f->k && rc == MPI_SUCCESS; j++) {
            int from = v + ((d - j + f->k) % f->k - d) * D, to = v + ((d + j) % f->k - d) * D;
            rc = tuna_nccl_pair(a, tmp + (size_t)(j - 1) * V, V, tuna_fold_start(f, from + 1) - 1,
                                a->rbuf, V, tuna_fold_start(f, to + 1) - 1);
        }
        rc = tuna_nccl_step_close(a, rc);
        for (int j = 1; j < f->k && rc == MPI_SUCCESS; j++)
            rc = tuna_nccl_reduce(a, tmp + (size_t)(j - 1) * V, a->rbuf, a->count);
    }
    return rc;
}

int tuna_nccl_ar_recmul(const tuna_nccl_args *a)
{
    return tuna_nccl_ar_folded(a, rounds);
}

/* recursive-doubling: recursive multiplying at radix 2 (the same fold where P is not a power
 * of two). */
int tuna_nccl_ar_recursive_doubling(const tuna_nccl_args *a)
{
    tuna_nccl_args two = *a;
    two.k = 2;
    return tuna_nccl_ar_recmul(&two);
}
