/*
 * kring allgather: ranks form P/k groups of k consecutive ranks. Phase 1:
 * every rank runs a ring with the ranks of the same position in the other
 * groups (P/k - 1 rounds, one block each), so it holds its "column" (the
 * blocks of that position in every group). Phase 2: a ring inside the group
 * (k - 1 rounds) passes whole columns, sent as one strided message each.
 * Rounds: P/k + k - 2. Volume received: (P-1) blocks, as the ring; only
 * P/k - 1 of the rounds cross groups (nodes, when k = ranks per node).
 * Any P: k is lowered to the largest divisor of P not above k (prime P with
 * k < P gives k = 1, the plain ring).
 * One round per step: o->phase 1 and 2 are the phases, o->i the phase's rounds posted so
 * far; o->type holds the block and column datatypes (freed at the end). A failed round is
 * complete when recorded, and the rounds go on (allgather.h).
 */
#include "allgather.h"

enum { START, ACROSS, INSIDE };

/* One ring round: receive one `type` at rbuf from left while sending one from sbuf right. */
static int ring_round(tuna_ag_op *o, const void *sbuf, void *rbuf, MPI_Datatype type, int left,
                      int right, int tag)
{
    MPI_Comm comm = o->a.ctx->comm;
    tag += o->a.tag_shift;
    int n = 0, rc = tuna_posted(
                   tuna_tp_irecv_typed(o->a.tp, rbuf, 1, type, left, tag, comm, &o->pair[n]), &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_tp_isend_typed(o->a.tp, sbuf, 1, type, right, tag, comm, &o->pair[n]),
                         &n);
    return tuna_op_step_wait(&o->op, o->pair, n, rc);
}

int tuna_ag_kring_step(tuna_ag_op *o, int wait_rc)
{
    const tuna_ag_args *a = &o->a;
    const int P = a->size, me = a->rank;
    const int k = tuna_coll_kring_group(P, tuna_ag_param(a, "k")), G = P / k;
    const int g = me / k, l = me % k;
    const size_t B = a->block;
    int rc = MPI_SUCCESS;
    switch (o->phase) {
    case START:
        if ((rc = tuna_coll_bytes_type(B, &o->type[0])) != MPI_SUCCESS)
            return tuna_op_step_done(&o->op, rc);
        o->phase = ACROSS;
        break;
    case ACROSS:
    case INSIDE:
        tuna_op_step_record(&o->op, wait_rc,
                            "kring allgather: exchange with ranks %d and %d failed",
                            o->phase == ACROSS ? ((g - 1 + G) % G) * k + l
                                               : g * k + (l - 1 + k) % k,
                            o->phase == ACROSS ? ((g + 1) % G) * k + l : g * k + (l + 1) % k);
        break;
    }
    /* Phase 1: ring over the groups, at this rank's position l. */
    if (o->phase == ACROSS && o->i < G - 1) {
        int s = o->i++, sb = ((g - s + G) % G) * k + l, rb = ((g - s - 1 + G) % G) * k + l;
        return ring_round(o, a->buf + (size_t)sb * B, a->buf + (size_t)rb * B, o->type[0],
                          ((g - 1 + G) % G) * k + l, ((g + 1) % G) * k + l,
                          TUNA_TAG_AG_KRING_INTER);
    }
    /* Phase 2: ring inside the group, one column (G blocks, stride k blocks) per round. */
    if (o->phase == ACROSS && k > 1) {
        rc = PMPI_Type_create_hvector(G, 1, (MPI_Aint)((size_t)k * B), o->type[0], &o->type[1]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Type_commit(&o->type[1]);
        if (rc != MPI_SUCCESS)
            rc = tuna_error_set(rc, "kring: column datatype creation failed");
        o->phase = INSIDE;
        o->i = 0;
    }
    if (o->phase == INSIDE && rc == MPI_SUCCESS && o->i < k - 1) {
        int s = o->i++, sc = (l - s + k) % k, rcol = (l - s - 1 + k) % k;
        return ring_round(o, a->buf + (size_t)sc * B, a->buf + (size_t)rcol * B, o->type[1],
                          g * k + (l - 1 + k) % k, g * k + (l + 1) % k, TUNA_TAG_AG_KRING_INTRA);
    }
    tuna_stats_rounds(G - 1 + k - 1);
    return tuna_op_step_done(&o->op, tuna_first_error(o->op.comm_rc, rc));
}
