/*
 * bruck: the classic radix-2 Bruck all-to-all (Bruck et al., 1997) applied to
 * blocks padded to the global maximum block size B, with its three explicit
 * phases:
 *   1. local rotation: slot i <- the block for rank me+i;
 *   2. ceil(log2 P) rounds: round k sends the slots whose index has bit k set
 *      to me+2^k (packed into one message) and receives them from me-2^k;
 *   3. inverse rotation: slot s <- slot (me-s) mod P, the block from rank s;
 * then the real bytes of each block are scanned out to the receive buffer.
 * padded-bruck is the same exchange with the rotations folded into the
 * padding and scan-out copies; this one keeps them to show what they cost.
 * Steps: the rounds (bruck_common.c), phase 1 before the first, phase 3 after the last.
 * Rounds: ceil(log2 P). Temporary memory: 2*P*B (padded and rotated sets)
 * + 2*floor(P/2)*B (round pack buffers).
 */
#include "bruck_common.h"

#include <stdlib.h>

int tuna_a2av_bruck_step(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank, rc;
    tuna_bruck_op *s = o->state;
    if (o->i == 0) {
        if (!tuna_bruck_op_begin(o, &s, &rc))
            return rc;
        rc = tuna_bruck_padded_size((size_t)P, s->B, &s->wbytes);
        s->w = rc == MPI_SUCCESS ? tuna_malloc(s->wbytes) : NULL;
        s->rot = s->w ? tuna_malloc(s->wbytes) : NULL;
        if (!s->rot)
            return tuna_bruck_op_close(o, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM);
        tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
        tuna_bruck_pad(o->a->tp, &s->v, P, 0, s->B, s->w);             /* pad, user order */
        tuna_bruck_rotate(o->a->tp, s->w, s->rot, P, me, s->B, false); /* phase 1: rotation */
        tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
        s->set = s->rot;
        s->tag = TUNA_TAG_BRUCK;
    }
    if (tuna_bruck_packed_rounds(o, wait_rc, &rc) == TUNA_STEP_WAIT) /* phase 2 */
        return TUNA_STEP_WAIT;
    if (rc == MPI_SUCCESS) {
        tuna_bruck_rotate(o->a->tp, s->rot, s->w, P, me, s->B,
                          true); /* phase 3: inverse rotation */
        tuna_bruck_scan_out(o->a->tp, &s->v, P, me, false, s->B, s->w, NULL);
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_REARRANGE);
    tuna_stats_temp(2 * s->wbytes + s->round_temp);
    tuna_stats_rounds(s->K);
    return tuna_bruck_op_close(o, rc);
}
