/*
 * allreduce, permuted recursive multiplying (PICCL) on NCCL, radix k: a radix-k
 * reduce-scatter then a radix-k allgather among the Q = k^m leaders of the fold (tuna_fold),
 * with segment ownership permuted so every message is one contiguous range. The vector is cut
 * into Q segments. Reduce-scatter, round t = 0..m-1 (distance k^t): a leader's range (k^(m-t)
 * segments, the same for its partners) splits into k sub-ranges in digit order; the leader
 * keeps the one of its digit t, sends sub-range e to the partner of digit e and folds the
 * partners' copies of its own into it (slot pair j: receive from digit d-j, send to digit
 * d+j; the k-1 copies in temporaries). Leader v ends owning segment rev(v) (base-k digit
 * reversal). Allgather, t = m-1 down to 0: the reverse, each partner's sub-range received in
 * place. Members send their vector to the leader first, which folds them in, and receive the
 * result at the end. Rounds: 2 log_k Q, 2 more where P is not a power of k. Temporaries: k-1
 * vectors (fold-in: one per member).
 */
#include "nccl_rows.h"

/* First element of segment s of Q. */
static size_t seg(const tuna_nccl_args *a, int Q, int s)
{
    const size_t q = a->count / (size_t)Q, rem = a->count % (size_t)Q;
    return (size_t)s * q + ((size_t)s < rem ? (size_t)s : rem);
}

/* The leaders' reduce-scatter and allgather rounds on the Q segments. */
static int rounds(const tuna_nccl_args *a, const tuna_fold *f, char *tmp, int rc)
{
    const size_t es = a->esize, V = a->count * es;
    const int Q = f->Q, v = f->group;
    /* Reduce-scatter: base/width in segments; width k^(m-t) before round t. */
    int base = 0, width = Q;
    for (int t = 0, D = 1; t < f->m && rc == MPI_SUCCESS; t++, D *= f->k) {
        const int d = (v / D) % f->k, sub = width / f->k;
        const size_t keep = seg(a, Q, base + d * sub), n = seg(a, Q, base + (d + 1) * sub) - keep;
        for (int j = 1; j < f->k && rc == MPI_SUCCESS; j++) {
            int df = (d - j + f->k) % f->k, dt = (d + j) % f->k;
            int from = v + (df - d) * D, to = v + (dt - d) * D;
            size_t slo = seg(a, Q, base + dt * sub), shi = seg(a, Q, base + (dt + 1) * sub);
            rc = tuna_nccl_pair(a, tmp + (size_t)(j - 1) * V, n * es,
                                tuna_fold_start(f, from + 1) - 1, a->rbuf + slo * es,
                                (shi - slo) * es, tuna_fold_start(f, to + 1) - 1);
        }
        rc = tuna_nccl_step_close(a, rc);
        for (int j = 1; j < f->k && rc == MPI_SUCCESS; j++)
            rc = tuna_nccl_reduce(a, tmp + (size_t)(j - 1) * V, a->rbuf + keep * es, n);
        base += d * sub;
        width = sub;
    }
    /* Allgather: t = m-1 down to 0, the range widening back by k each round. */
    int D = 1;
    for (int t = 1; t < f->m; t++)
        D *= f->k;
    for (int t = f->m - 1; t >= 0 && rc == MPI_SUCCESS; t--, D /= f->k) {
        const int d = (v / D) % f->k, sub = width;
        base -= d * sub; /* the range of round t */
        const size_t mlo = seg(a, Q, base + d * sub), mhi = seg(a, Q, base + (d + 1) * sub);
        for (int j = 1; j < f->k && rc == MPI_SUCCESS; j++) {
            int df = (d - j + f->k) % f->k, dt = (d + j) % f->k;
            int from = v + (df - d) * D, to = v + (dt - d) * D;
            size_t flo = seg(a, Q, base + df * sub), fhi = seg(a, Q, base + (df + 1) * sub);
            rc = tuna_nccl_pair(a, a->rbuf + flo * es, (fhi - flo) * es,
                                tuna_fold_start(f, from + 1) - 1, a->rbuf + mlo * es,
                                (mhi - mlo) * es, tuna_fold_start(f, to + 1) - 1);
        }
        rc = tuna_nccl_step_close(a, rc);
        width = sub * f->k;
    }
    return rc;
}

int tuna_nccl_ar_recmul_permuted(const tuna_nccl_args *a)
{
    return tuna_nccl_ar_folded(a, rounds);
}
