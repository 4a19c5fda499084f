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
 * Rounds: ceil(log2 P). Temporary memory: 2*P*B (padded and rotated sets)
 * + 2*floor(P/2)*B (round pack buffers).
 */
#include "alltoallv.h"

#include <stdlib.h>

int tuna_a2av_bruck(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    size_t B = a->max_block_bytes, wbytes;
    tuna_timer tm;
    tuna_timer_start(&tm);
    tuna_bytes_view v;
    int rc = tuna_bytes_view_open(a, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (B == 0) /* every block of every rank is empty (a global fact) */
        return tuna_bytes_view_close(a, &v, MPI_SUCCESS);
    rc = tuna_bruck_padded_size((size_t)P, B, &wbytes);
    char *w = rc == MPI_SUCCESS ? tuna_malloc(wbytes) : NULL;
    char *rot = w ? tuna_malloc(wbytes) : NULL;
    if (!rot) {
        free(w);
        return tuna_bytes_view_close(a, &v, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM);
    }
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);

    tuna_bruck_pad(&v, P, 0, B, w);               /* pad, user order */
    tuna_bruck_rotate(w, rot, P, me, B, false);   /* phase 1: rotation */
    tuna_timer_stop(&tm, TUNA_PHASE_COPY);
    size_t round_temp = 0;
    rc = tuna_bruck_padded_rounds_packed(a, rot, B, TUNA_TAG_BRUCK, &tm, &round_temp); /* phase 2 */
    if (rc == MPI_SUCCESS) {
        tuna_bruck_rotate(rot, w, P, me, B, true); /* phase 3: inverse rotation */
        tuna_bruck_scan_out(&v, P, me, false, B, w, NULL);
    }
    tuna_timer_stop(&tm, TUNA_PHASE_REARRANGE);
    tuna_stats_temp(2 * wbytes + round_temp);
    tuna_stats_rounds(tuna_bruck_rounds(P));
    free(w);
    free(rot);
    return tuna_bytes_view_close(a, &v, rc);
}
