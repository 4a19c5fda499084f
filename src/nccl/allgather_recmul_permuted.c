/*
 * allgather, permuted recursive multiplying (PICCL) on NCCL, radix k: the fold of recmul
 * (tuna_fold), with the leaders' rounds from the largest distance k^(m-1) down to 1 on a
 * temporary in the permuted layout (src/device/index_maps.h: the groups in base-k
 * digit-reversed order), where what a leader holds before the round of digit r, the groups
 * that agree with it on digits 0..r, is one range of k^(m-r-1) positions, and each partner's
 * is the next one over. Members send their block to the leader first (one group); after the
 * rounds the leader puts the groups in rank order (Q copies on the stream, one per group) and
 * sends the result to its members (one group). Rounds: log_k P, 2 more where P is not a power
 * of k. Temporary: P blocks, on the leaders.
 */
#include "nccl_rows.h"
#include "../device/index_maps.h"

#include <stdlib.h>

int tuna_nccl_ag_recmul_permuted(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t B = a->block;
    MPI_Request req;
    if (P == 1) {
        tuna_tp_copy(a->tp, a->rbuf, a->sbuf, B);
        return tuna_nccl_step_end(a);
    }
    tuna_fold f;
    tuna_fold_init(&f, P, (int)(a->k < P ? a->k : P), me);
    const bool leader = me == f.last;
    const int v = f.group, qv = tuna_fold_reverse(&f, v);
    int *poff = tuna_malloc(((size_t)f.Q + 1) * sizeof *poff);
    char *tmp = NULL;
    int rc = poff ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        tuna_map_permuted_offsets(f.k, f.m, f.Q, f.base, f.rem, poff);
        if (leader)
            rc = tuna_nccl_tp_alloc(a->t, (size_t)P * B, (void **)&tmp);
    }
    /* Fold in, to the group's slots at its permuted position. */
    if (rc == MPI_SUCCESS && leader)
        tuna_tp_copy(a->tp, tmp + (size_t)(poff[qv] + me - f.first) * B, a->sbuf, B);
    if (rc == MPI_SUCCESS && f.first < f.last) {
        if (leader)
            for (int m = f.first; m < f.last && rc == MPI_SUCCESS; m++)
                rc = tuna_tp_irecv(a->tp, tmp + (size_t)(poff[qv] + m - f.first) * B, B, m, 0,
                                   MPI_COMM_NULL, &req);
        else
            rc = tuna_tp_isend(a->tp, a->sbuf, B, f.last, 0, MPI_COMM_NULL, &req);
        rc = tuna_nccl_step_close(a, rc);
    }
    /* Rounds, digit m-1 down to 0. */
    int D = 1;
    for (int r = 1; r < f.m; r++)
        D *= f.k;
    for (int r = f.m - 1, span = 1; leader && r >= 0 && rc == MPI_SUCCESS;
         r--, D /= f.k, span *= f.k) {
        const int d = (v / D) % f.k, qb = qv - qv % span;
        for (int j = 1; j < f.k && rc == MPI_SUCCESS; j++) {
            int from = v + ((d - j + f.k) % f.k - d) * D, to = v + ((d + j) % f.k - d) * D;
            int fq = tuna_fold_reverse(&f, from), fb = fq - fq % span;
            rc = tuna_nccl_pair(a, tmp + (size_t)poff[fb] * B,
                                (size_t)(poff[fb + span] - poff[fb]) * B,
                                tuna_fold_start(&f, from + 1) - 1, tmp + (size_t)poff[qb] * B,
                                (size_t)(poff[qb + span] - poff[qb]) * B,
                                tuna_fold_start(&f, to + 1) - 1);
        }
        rc = tuna_nccl_step_close(a, rc);
    }
    /* Rank order, then fold out. */
    for (int q = 0; leader && q < f.Q && rc == MPI_SUCCESS; q++) {
        int u = tuna_fold_reverse(&f, q), s = tuna_fold_start(&f, u);
        tuna_tp_copy(a->tp, a->rbuf + (size_t)s * B, tmp + (size_t)poff[q] * B,
                     (size_t)(tuna_fold_start(&f, u + 1) - s) * B);
    }
    if (rc == MPI_SUCCESS && f.first < f.last) {
        rc = tuna_nccl_fold_out(a, &f, a->rbuf, (size_t)P * B);
        rc = tuna_nccl_step_close(a, rc);
    }
    tuna_nccl_tp_free(a->t, tmp);
    free(poff);
    return tuna_nccl_step_close(a, rc);
}
