/*
 * allreduce, k-ring (PICCL) on NCCL: P/k groups of k consecutive ranks (k lowered to the
 * largest divisor of P not above it). The vector is cut into P segments (sizes differ by at
 * most one element), numbered column by column: segment l*G + g belongs to the rank at
 * position l of group g (G = P/k groups), so column l, the segments of position l, is one
 * contiguous range. Four rings, one group per step:
 *   1. inside the group, reduce-scatter of whole columns (k-1 steps): position l holds its
 *      column reduced over the group;
 *   2. across the groups at position l, reduce-scatter of column l's segments (G-1 steps):
 *      rank (g, l) holds segment l*G + g reduced over all;
 *   3. across the groups, allgather of those segments (G-1 steps);
 *   4. inside the group, allgather of the columns (k-1 steps).
 * Rounds 2(G-1) + 2(k-1); only the 2(G-1) of phases 2 and 3 cross groups. Temporary: one
 * column. A reduce-scatter step: send chunk m-i-1, receive chunk m-i-2 into the temporary and
 * fold it in (result = received op result), so member m ends with chunk m.
 */
#include "nccl_rows.h"

/* First element of segment pos. */
static size_t seg(const tuna_nccl_args *a, int pos)
{
    const size_t P = (size_t)a->size, q = a->count / P, rem = a->count % P;
    return (size_t)pos * q + ((size_t)pos < rem ? (size_t)pos : rem);
}

/* A ring of n members, member j at rank origin + j*stride; chunk c is the segments
 * [seg0 + c*cstride, seg0 + c*cstride + width). */
typedef struct ring {
    int n, m, origin, stride, seg0, cstride, width;
} ring;

static size_t lo(const tuna_nccl_args *a, const ring *g, int c)
{
    return seg(a, g->seg0 + ((c % g->n + g->n) % g->n) * g->cstride);
}
static size_t hi(const tuna_nccl_args *a, const ring *g, int c)
{
    return seg(a, g->seg0 + ((c % g->n + g->n) % g->n) * g->cstride + g->width);
}

static int pass(const tuna_nccl_args *a, const ring *g, int out, int in, char *into)
{
    const size_t es = a->esize;
    const int left = g->origin + ((g->m - 1 + g->n) % g->n) * g->stride,
              right = g->origin + ((g->m + 1) % g->n) * g->stride;
    MPI_Request req;
    int rc = tuna_tp_irecv(a->tp, into ? into : a->rbuf + lo(a, g, in) * es,
                           (hi(a, g, in) - lo(a, g, in)) * es, left, 0, MPI_COMM_NULL, &req);
    if (rc == MPI_SUCCESS)
        rc = tuna_tp_isend(a->tp, a->rbuf + lo(a, g, out) * es, (hi(a, g, out) - lo(a, g, out)) * es,
                           right, 0, MPI_COMM_NULL, &req);
    return tuna_nccl_step_close(a, rc);
}

static int reduce_scatter(const tuna_nccl_args *a, const ring *g, char *tmp)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < g->n - 1 && rc == MPI_SUCCESS; i++) {
        int in = g->m - i - 2;
        rc = pass(a, g, g->m - i - 1, in, tmp);
        if (rc == MPI_SUCCESS)
            rc = tuna_nccl_reduce(a, tmp, a->rbuf + lo(a, g, in) * a->esize,
                                  hi(a, g, in) - lo(a, g, in));
    }
    return rc;
}

static int allgather(const tuna_nccl_args *a, const ring *g)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < g->n - 1 && rc == MPI_SUCCESS; i++)
        rc = pass(a, g, g->m - i, g->m - i - 1, NULL);
    return rc;
}

int tuna_nccl_ar_kring(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const int k = tuna_coll_kring_group(P, (int)a->k), G = P / k, g = me / k, l = me % k;
    tuna_tp_copy(a->tp, a->rbuf, a->sbuf, a->count * a->esize);
    const ring inside = {k, l, g * k, 1, 0, G, G}, across = {G, g, l, k, l * G, 1, 1};
    char *tmp = NULL;
    size_t widest = seg(a, G) - seg(a, 0); /* column 0 is the widest */
    int rc = tuna_nccl_tp_alloc(a->t, widest * a->esize, (void **)&tmp);
    if (rc == MPI_SUCCESS)
        rc = reduce_scatter(a, &inside, tmp);
    if (rc == MPI_SUCCESS)
        rc = reduce_scatter(a, &across, tmp);
    if (rc == MPI_SUCCESS)
        rc = allgather(a, &across);
    if (rc == MPI_SUCCESS)
        rc = allgather(a, &inside);
    tuna_nccl_tp_free(a->t, tmp);
    return tuna_nccl_step_close(a, rc);
}
