/*
 * alltoallv, hierarchical by NVLink domain on NCCL ("coalesced": one aggregated message per
 * remote node). Nodes of Q ranks (nodes.c), rank = node * Q + local. Three groups:
 *   1. sizes, inside the node: each rank tells each local rank l the sizes of its blocks for
 *      (m, l), every node m (N entries), then waits for them on the host (one host wait);
 *   2. data, inside the node (NVLink): the blocks for (m, l) go to local rank l, which keeps
 *      those of remote nodes in a temporary, node by node, in local-rank order, and those of
 *      its own node in recvbuf (their final place);
 *   3. data, across nodes: local rank g sends node m's run of Q blocks, one message, to the
 *      rank with the same local rank there, which receives it into a temporary (its sizes
 *      are its own recvcounts) and copies each block to its place on the stream.
 * So a rank sends N - 1 messages across nodes instead of P - Q, each Q blocks long.
 * Where the nodes are not node-major with Q each (nodes.c answers 0), flat TuNA at radix 4.
 * No parameter (MPI's coalesced takes an intra-node radix and a batch of nodes: refused on
 * the NCCL path, docs/nccl.md).
 */
#include "nccl_rows.h"

#include <stdlib.h>

int tuna_nccl_a2av_coalesced(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t es = a->esize;
    int Q = 0;
    int rc = tuna_nccl_nodes(a->t, &Q);
    if (rc != MPI_SUCCESS)
        return rc;
    if (Q < 1) {
        tuna_nccl_args flat = *a;
        flat.k = P < 4 ? (P < 2 ? 2 : P) : 4;
        return tuna_nccl_a2av_tuna(&flat);
    }
    const int N = P / Q, n = me / Q, g = me % Q;
    /* Host: sizes sent [l][m] (my block for (m, l)) and received [l][m] (local l's block for
     * (m, g)), offsets of node m's run in the temporaries; device: the size messages. */
    size_t *hs = tuna_malloc((5 * (size_t)P + 2 * (size_t)N + 2) * sizeof *hs);
    if (!hs)
        return tuna_error_set(MPI_ERR_NO_MEM, "coalesced (NCCL): no memory for %d ranks", P);
    size_t *hr = hs + P, *out = hs + 2 * P, *in = out + N + 1, *at = in + N + 1;
    size_t *dsz = NULL;
    char *tout = NULL, *tin = NULL;
    for (int l = 0; l < Q; l++)
        for (int m = 0; m < N; m++)
            hs[l * N + m] = a->scounts[m * Q + l] * es;
    rc = tuna_nccl_tp_alloc(a->t, 2 * (size_t)P * sizeof *dsz, (void **)&dsz);
    /* 1. sizes (not needed with one rank per node, nor for alltoall: all the same) */
    if (rc == MPI_SUCCESS && Q > 1 && !a->uniform) {
        tuna_nccl_tp_to_device(a->t, dsz, hs, (size_t)P * sizeof *dsz);
        for (int d = 1; d < Q && rc == MPI_SUCCESS; d++) {
            const int ls = (g - d + Q) % Q, ld = (g + d) % Q;
            rc = tuna_nccl_pair(a, dsz + P + (size_t)ls * N, (size_t)N * sizeof *dsz,
                                n * Q + ls, dsz + (size_t)ld * N, (size_t)N * sizeof *dsz,
                                n * Q + ld);
        }
        rc = tuna_nccl_step_close(a, rc);
        if (rc == MPI_SUCCESS) {
            tuna_nccl_tp_to_host(a->t, hr, dsz + P, (size_t)P * sizeof *dsz);
            rc = tuna_nccl_tp_wait(a->t); /* the host posts receives of these sizes */
        }
    }
    for (int l = 0; l < Q; l++)
        for (int m = 0; m < N; m++)
            hr[l * N + m] = l == g ? hs[g * N + m] : a->uniform ? a->scounts[0] * es
                                                                 : hr[l * N + m];
    /* The temporaries: out[m], node m's run of Q blocks to send; in[m], the run received;
     * at[l * N + m], where local rank l's block for (m, g) waits in the send temporary (node
     * m's run, after the blocks of the local ranks before l). */
    out[0] = in[0] = 0;
    for (int m = 0; m < N; m++) {
        size_t so = 0, si = 0;
        for (int l = 0; l < Q && m != n; l++) {
            at[l * N + m] = out[m] + so;
            so += hr[l * N + m];
            si += a->rcounts[m * Q + l] * es;
        }
        out[m + 1] = out[m] + so;
        in[m + 1] = in[m] + si;
    }
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_tp_alloc(a->t, out[N], (void **)&tout);
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_tp_alloc(a->t, in[N], (void **)&tin);
    /* 2. inside the node; the own blocks are copies */
    for (int m = 0; m < N && rc == MPI_SUCCESS; m++) {
        const char *mine = a->sbuf + a->sdispls[m * Q + g] * es;
        if (m == n)
            tuna_tp_copy(a->tp, a->rbuf + a->rdispls[me] * es, mine, a->rcounts[me] * es);
        else
            tuna_tp_copy(a->tp, tout + at[g * N + m], mine, hr[g * N + m]);
    }
    for (int d = 1; d < Q && rc == MPI_SUCCESS; d++) {
        const int ls = (g - d + Q) % Q, ld = (g + d) % Q;
        for (int m = 0; m < N && rc == MPI_SUCCESS; m++) {
            char *into = m == n ? a->rbuf + a->rdispls[n * Q + ls] * es
                                : tout + at[ls * N + m];
            const size_t rb = m == n ? a->rcounts[n * Q + ls] * es : hr[ls * N + m];
            rc = tuna_nccl_pair(a, into, rb, n * Q + ls, a->sbuf + a->sdispls[m * Q + ld] * es,
                                a->scounts[m * Q + ld] * es, n * Q + ld);
        }
    }
    rc = tuna_nccl_step_close(a, rc);
    /* 3. across nodes: one message per node pair */
    for (int e = 1; e < N && rc == MPI_SUCCESS; e++) {
        const int ns = (n - e + N) % N, nd = (n + e) % N;
        rc = tuna_nccl_pair(a, tin + in[ns], in[ns + 1] - in[ns], ns * Q + g, tout + out[nd],
                            out[nd + 1] - out[nd], nd * Q + g);
    }
    rc = tuna_nccl_step_close(a, rc);
    for (int m = 0; m < N && rc == MPI_SUCCESS; m++) {
        const char *from = tin + in[m];
        for (int l = 0; l < Q && m != n; l++) {
            const size_t b = a->rcounts[m * Q + l] * es;
            tuna_tp_copy(a->tp, a->rbuf + a->rdispls[m * Q + l] * es, from, b);
            from += b;
        }
    }
    tuna_nccl_tp_free(a->t, tin);
    tuna_nccl_tp_free(a->t, tout);
    tuna_nccl_tp_free(a->t, dsz);
    free(hs);
    return tuna_nccl_step_close(a, rc);
}
