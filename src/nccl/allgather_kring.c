/*
 * allgather, k-ring (PICCL) on NCCL: P/k groups of k consecutive ranks (k lowered to the
 * largest divisor of P not above it). Phase 1: a ring among the ranks of the same position
 * in every group (P/k - 1 steps of one block), after which a rank holds its column (the
 * blocks of its position in every group). Phase 2: a ring inside the group (k - 1 steps),
 * each passing a whole column: P/k blocks, one slot pair per block (NCCL takes no strided
 * type). Rounds: P/k + k - 2; only the P/k - 1 of phase 1 cross groups.
 */
#include "nccl_rows.h"

int tuna_nccl_ag_kring(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const int k = tuna_coll_kring_group(P, (int)a->k), G = P / k;
    const int g = me / k, l = me % k;
    const size_t B = a->block;
    tuna_tp_copy(a->tp, a->rbuf + (size_t)me * B, a->sbuf, B);
    int rc = MPI_SUCCESS;
    /* Phase 1: across groups, position l. */
    const int left1 = l + k * ((g - 1 + G) % G), right1 = l + k * ((g + 1) % G);
    for (int i = 0; i < G - 1 && rc == MPI_SUCCESS; i++) {
        int out = l + k * ((g - i + G) % G), in = l + k * ((g - i - 1 + G) % G);
        rc = tuna_nccl_pair(a, a->rbuf + (size_t)in * B, B, left1, a->rbuf + (size_t)out * B, B,
                            right1);
        rc = tuna_nccl_step_close(a, rc);
    }
    /* Phase 2: inside the group, whole columns. */
    const int left2 = g * k + (l - 1 + k) % k, right2 = g * k + (l + 1) % k;
    for (int i = 0; i < k - 1 && rc == MPI_SUCCESS; i++) {
        int out = (l - i + k) % k, in = (l - i - 1 + k) % k;
        for (int h = 0; h < G && rc == MPI_SUCCESS; h++) {
            rc = tuna_nccl_pair(a, a->rbuf + (size_t)(in + k * h) * B, B, left2,
                                a->rbuf + (size_t)(out + k * h) * B, B, right2);
        }
        rc = tuna_nccl_step_close(a, rc);
    }
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_step_end(a);
    return rc;
}
