/*
 * kring allreduce: reduce-scatter + allgather over P/k groups of k
 * consecutive ranks. The vector is cut into P segments ordered so that the
 * segments owned by the ranks at position l of every group (a "column") are
 * contiguous. Phase 1: ring reduce-scatter of whole columns inside the group
 * (k-1 rounds). Phase 2: ring reduce-scatter of that column's segments across
 * groups (P/k-1 rounds). Phases 3 and 4 are the matching allgathers, across
 * groups and then inside the group.
 * Rounds: 2(P/k - 1) + 2(k - 1). Volume sent per rank: 2 n (P-1)/P elements,
 * as the ring; only 2(P/k - 1) rounds cross groups. Memory: one column
 * (about n/k elements).
 * Any P: k is lowered to the largest divisor of P not above k (prime P with
 * k < P gives k = 1, the plain ring). Non-commutative ops: runs
 * recursive-doubling instead (rank order kept), logged at TUNA_VERBOSE >= 1.
 * The four phases run as the ring's steps (tuna_ar_ring_phases_step, ring.c).
 */
#include "allreduce.h"


/* First element of the segment at position pos (P segments of n/P or n/P + 1 elements). */
static MPI_Aint seg_start(int n, int P, int pos)
{
    return (MPI_Aint)pos * (n / P) + (pos < n % P ? pos : n % P);
}

int tuna_ar_kring_step(tuna_ar_op *o, int wait_rc)
{
    const tuna_ar_args *a = &o->a;
    const int P = a->size, me = a->rank, n = a->count;
    const int k = tuna_coll_kring_group(P, tuna_ar_param(a, "k")), G = P / k;
    const int g = me / k, l = me % k;
    int r;
    if (o->state)
        return tuna_ar_ring_phases_step(o, wait_rc);
    /* Columns (k of them) and the segments of this rank's column (G of them). */
    if (!tuna_ar_ring_begin(o, wait_rc, "kring", (int)(seg_start(n, P, G) + G), k + G, &r))
        return r;
    tuna_ar_ring_state *st = o->state;
    MPI_Aint *coff = st->off, *soff = st->off + k;
    int *ccnt = st->cnt, *scnt = st->cnt + k;
    for (int c = 0; c < k; c++) {
        coff[c] = seg_start(n, P, c * G);
        ccnt[c] = (int)(seg_start(n, P, (c + 1) * G) - coff[c]);
    }
    /* After the intra-group reduce-scatter this rank owns column (l + 1) % k. */
    const int col = (l + 1) % k;
    for (int i = 0; i < G; i++) {
        soff[i] = seg_start(n, P, col * G + i);
        scnt[i] = (int)(seg_start(n, P, col * G + i + 1) - soff[i]);
    }
    const int ileft = g * k + (l - 1 + k) % k, iright = g * k + (l + 1) % k;
    const int xleft = ((g - 1 + G) % G) * k + l, xright = ((g + 1) % G) * k + l;
    st->phase[0] = (tuna_ar_ring_phase){k, l, ileft, iright, coff, ccnt,
                                        TUNA_TAG_AR_KRING_INTRA_RS, true};
    st->phase[1] = (tuna_ar_ring_phase){G, g, xleft, xright, soff, scnt,
                                        TUNA_TAG_AR_KRING_INTER_RS, true};
    st->phase[2] = (tuna_ar_ring_phase){G, g, xleft, xright, soff, scnt,
                                        TUNA_TAG_AR_KRING_INTER_AG, false};
    st->phase[3] = (tuna_ar_ring_phase){k, l, ileft, iright, coff, ccnt,
                                        TUNA_TAG_AR_KRING_INTRA_AG, false};
    st->nphases = 4;
    return tuna_ar_ring_phases_step(o, wait_rc);
}
