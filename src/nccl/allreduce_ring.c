/*
 * allreduce, ring on NCCL: the vector in P chunks (sizes differ by at most one element);
 * reduce-scatter, P-1 steps: step i sends chunk r-i to the right neighbour and receives chunk
 * r-i-1 from the left one into a temporary, which the transport's reduction folds into the
 * result (result = received op result); then the ring allgather of the reduced chunks, P-1
 * steps. One group per step, the reductions after their group in stream order.
 */
#include "nccl_rows.h"

/* Chunk c: [first(c), first(c + 1)) elements. */
static size_t first(const tuna_nccl_args *a, int c)
{
    const size_t P = (size_t)a->size, q = a->count / P, rem = a->count % P;
    return (size_t)c * q + ((size_t)c < rem ? (size_t)c : rem);
}

int tuna_nccl_ar_ring(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t es = a->esize;
    const int left = (me - 1 + P) % P, right = (me + 1) % P;
    tuna_tp_copy(a->tp, a->rbuf, a->sbuf, a->count * es);
    void *tmp = NULL;
    int rc = tuna_nccl_tp_alloc(a->t, (first(a, 1) - first(a, 0) + 1) * es, &tmp);
    for (int i = 0; i < P - 1 && rc == MPI_SUCCESS; i++) {
        int out = (me - i + P) % P, in = (me - i - 1 + P) % P;
        size_t olo = first(a, out), ilo = first(a, in), n_in = first(a, in + 1) - ilo;
        rc = tuna_nccl_pair(a, tmp, n_in * es, left, a->rbuf + olo * es,
                            (first(a, out + 1) - olo) * es, right);
        rc = tuna_nccl_step_close(a, rc);
        if (rc == MPI_SUCCESS)
            rc = tuna_nccl_reduce(a, tmp, a->rbuf + ilo * es, n_in);
    }
    for (int i = 0; i < P - 1 && rc == MPI_SUCCESS; i++) {
        int out = (me + 1 - i + P) % P, in = (me - i + P) % P;
        size_t olo = first(a, out), ilo = first(a, in);
        rc = tuna_nccl_pair(a, a->rbuf + ilo * es, (first(a, in + 1) - ilo) * es, left,
                            a->rbuf + olo * es, (first(a, out + 1) - olo) * es, right);
        rc = tuna_nccl_step_close(a, rc);
    }
    tuna_nccl_tp_free(a->t, tmp);
    return tuna_nccl_step_close(a, rc);
}
