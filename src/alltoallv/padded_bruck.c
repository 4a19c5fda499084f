/*
 * padded-bruck: the padded Bruck baseline of the TuNA paper. Every block is
 * padded to the global maximum block size B (already allreduced by the front end),
 * a uniform radix-2 Bruck exchange runs on the padded slots, and the real
 * bytes are scanned out. There are no explicit rotations: padding writes slot
 * i from the block for rank me+i, and scan-out reads the block from rank s in
 * slot (me-s) mod P. Send blocks are found through sdispls (the authors'
 * public code ignored them).
 *
 * Parameter `datatype` chooses how a round's slots (those with bit k set)
 * move:
 *   0: memcpy them into one contiguous message and back out of one;
 *   1: describe them with an MPI hindexed-block datatype over the padded set
 *      and send/receive in place: the set has two halves, a round sends from
 *      each slot's current half and receives into the other, so nothing is
 *      packed and no buffer is read and written at once.
 * Steps: one per round, the padding before the first, the scan-out after the last.
 * Rounds: ceil(log2 P). Temporary memory: P*B + 2*floor(P/2)*B (datatype=0)
 * or 2*P*B (datatype=1).
 */
#include "bruck_common.h"

#include <stdlib.h>

/* The rounds with derived datatypes (as tuna_bruck_packed_rounds: called first with s->k =
 * -1, then with each round's wait outcome); upper[i] tracks which half holds slot i. */
static int rounds_datatype(tuna_a2av_op *o, int wait_rc, int *rc)
{
    const tuna_a2av_args *a = o->a;
    tuna_bruck_op *s = o->state;
    int P = a->size, me = a->rank, half = P / 2;
    if (s->k < 0) {
        s->disp = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)half);
        if (!s->disp) {
            *rc = MPI_ERR_NO_MEM;
            return TUNA_STEP_DONE;
        }
        if ((*rc = tuna_bruck_block_type(s->B, &s->blk)) != MPI_SUCCESS || s->K == 0)
            return TUNA_STEP_DONE;
        s->k = 0;
    } else {
        *rc = o->op.post_rc;
        if (*rc == MPI_SUCCESS && wait_rc != MPI_SUCCESS)
            *rc = tuna_error_set(wait_rc, "padded-bruck: MPI_Waitall of round %d failed", s->k);
        tuna_timer_stop(&s->tm, TUNA_PHASE_DATA);
        PMPI_Type_free(&s->st);
        PMPI_Type_free(&s->rt);
        if (*rc != MPI_SUCCESS)
            return TUNA_STEP_DONE;
        for (int j = 0; j < s->n; j++)
            s->upper[s->idx[j]] ^= 1;
        if (++s->k == s->K)
            return TUNA_STEP_DONE;
    }
    int k = s->k;
    long long d = 1LL << k;
    size_t B = s->B;
    s->n = tuna_bruck_round_slots(P, k, s->idx);
    for (int j = 0; j < s->n; j++) {
        size_t i = (size_t)s->idx[j];
        s->disp[j] = (MPI_Aint)(((s->upper[i] ? (size_t)P : 0) + i) * B);
        s->disp[half + j] = (MPI_Aint)(((s->upper[i] ? 0 : (size_t)P) + i) * B);
    }
    if (PMPI_Type_create_hindexed_block(s->n, 1, s->disp, s->blk, &s->st) != MPI_SUCCESS ||
        PMPI_Type_commit(&s->st) != MPI_SUCCESS ||
        PMPI_Type_create_hindexed_block(s->n, 1, s->disp + half, s->blk, &s->rt) != MPI_SUCCESS ||
        PMPI_Type_commit(&s->rt) != MPI_SUCCESS) {
        tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
        *rc = tuna_error_set(MPI_ERR_TYPE, "padded-bruck: building the round-%d datatype "
                                           "failed", k);
        return TUNA_STEP_DONE;
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
    /* Received into the other half, sent from the current one: in place, no packing. */
    int tag = TUNA_TAG_PADDED_BRUCK + a->tag_shift, n = 0;
    int prc = tuna_posted(tuna_tp_irecv_typed(a->tp, s->w, 1, s->rt, tuna_bruck_rank(me, -d, P),
                                              tag, a->ctx->comm, &o->pair[0]),
                          &n);
    if (prc != MPI_SUCCESS) {
        prc = tuna_error_set(prc, "padded-bruck: MPI_Irecv of round %d failed", k);
    } else {
        prc = tuna_posted(tuna_tp_isend_typed(a->tp, s->w, 1, s->st, tuna_bruck_rank(me, d, P), tag,
                                              a->ctx->comm, &o->pair[1]),
                          &n);
        if (prc != MPI_SUCCESS)
            prc = tuna_error_set(prc, "padded-bruck: MPI_Isend of round %d failed", k);
    }
    return tuna_a2av_step_wait(o, o->pair, n, prc);
}

int tuna_a2av_padded_bruck_step(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank, rc;
    tuna_bruck_op *s = o->state;
    if (o->i == 0) {
        if (!tuna_bruck_op_begin(o, &s, &rc))
            return rc;
        bool use_datatype = tuna_a2av_param(a, "datatype") == 1;
        rc = tuna_bruck_padded_size((size_t)P * (use_datatype ? 2 : 1), s->B, &s->wbytes);
        s->w = rc == MPI_SUCCESS ? tuna_malloc(s->wbytes) : NULL;
        s->upper = s->w && use_datatype ? tuna_calloc((size_t)P, 1) : NULL;
        if (!s->w || (use_datatype && !s->upper)) {
            if (rc == MPI_SUCCESS)
                rc = tuna_error_set(MPI_ERR_NO_MEM, "padded-bruck: out of memory");
            return tuna_bruck_op_close(o, rc);
        }
        tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
        /* slot i <- block for me+i: the rotation is free */
        tuna_bruck_pad(o->a->tp, &s->v, P, me, s->B, s->w);
        tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
        s->set = s->w;
        s->tag = TUNA_TAG_PADDED_BRUCK;
    }
    if ((s->upper ? rounds_datatype(o, wait_rc, &rc)
                  : tuna_bruck_packed_rounds(o, wait_rc, &rc)) == TUNA_STEP_WAIT)
        return TUNA_STEP_WAIT;
    if (rc == MPI_SUCCESS)
        tuna_bruck_scan_out(o->a->tp, &s->v, P, me, true, s->B, s->w,
                            s->upper); /* from s: slot me-s */
    tuna_timer_stop(&s->tm, TUNA_PHASE_REARRANGE);
    tuna_stats_temp(s->wbytes + s->round_temp);
    tuna_stats_rounds(s->K);
    return tuna_bruck_op_close(o, rc);
}
