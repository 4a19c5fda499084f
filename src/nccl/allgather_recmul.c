/*
 * allgather, recursive multiplying (PICCL) on NCCL, radix k: the groups of the fold
 * (tuna_fold, src/allgather_allreduce/shared.h: Q = k^m groups of consecutive ranks, the last one
 * the leader). A member sends its block to its leader (one group), the leaders run m rounds:
 * in round r a leader exchanges the slots of the D = k^r groups it holds with the k-1 leaders
 * whose group index differs in base-k digit r (slot pair j: receive from digit d-j, send to
 * digit d+j), and each leader sends the whole result to its members (one group). Every range
 * is contiguous in the result buffer. Rounds: m among leaders, 2 more where P is not a power
 * of k.
 */
#include "nccl_rows.h"

int tuna_nccl_ag_recmul(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t B = a->block;
    tuna_tp_copy(a->tp, a->rbuf + (size_t)me * B, a->sbuf, B);
    int rc = tuna_nccl_step_end(a);
    if (P == 1 || rc != MPI_SUCCESS)
        return rc;
    tuna_fold f;
    tuna_fold_init(&f, P, (int)(a->k < P ? a->k : P), me);
    const bool leader = me == f.last;
    /* Fold in. */
    if (f.first < f.last) {
        rc = tuna_nccl_fold_in(a, &f, a->rbuf + (size_t)f.first * B, a->rbuf + (size_t)me * B, B);
        rc = tuna_nccl_step_close(a, rc);
    }
    /* Rounds among the leaders, on group indices. */
    const int v = f.group;
    for (int r = 0, D = 1; leader && r < f.m && rc == MPI_SUCCESS; r++, D *= f.k) {
        const int d = (v / D) % f.k, mine = v - v % D;
        for (int j = 1; j < f.k && rc == MPI_SUCCESS; j++) {
            int from = v + ((d - j + f.k) % f.k - d) * D, to = v + ((d + j) % f.k - d) * D;
            int fb = from - from % D;
            size_t flo = (size_t)tuna_fold_start(&f, fb), fhi = (size_t)tuna_fold_start(&f, fb + D);
            size_t mlo = (size_t)tuna_fold_start(&f, mine),
                   mhi = (size_t)tuna_fold_start(&f, mine + D);
            rc = tuna_nccl_pair(a, a->rbuf + flo * B, (fhi - flo) * B,
                                tuna_fold_start(&f, from + 1) - 1, a->rbuf + mlo * B,
                                (mhi - mlo) * B, tuna_fold_start(&f, to + 1) - 1);
        }
        rc = tuna_nccl_step_close(a, rc);
    }
    /* Fold out: the whole result to each member. */
    if (f.first < f.last && rc == MPI_SUCCESS) {
        rc = tuna_nccl_fold_out(a, &f, a->rbuf, (size_t)P * B);
        rc = tuna_nccl_step_close(a, rc);
    }
    return rc;
}

/* recursive-doubling: recursive multiplying at radix 2 (the same fold where P is not a power
 * of two). */
int tuna_nccl_ag_recursive_doubling(const tuna_nccl_args *a)
{
    tuna_nccl_args two = *a;
    two.k = 2;
    return tuna_nccl_ag_recmul(&two);
}
