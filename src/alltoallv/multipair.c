/*
 * multipair: the pairwise schedule (receive from rank-s, send to rank+s),
 * `stride` steps posted together with non-blocking calls, then one Waitall
 * before the next group: fewer synchronisations than pairwise, bounded
 * outstanding requests unlike spreadout.
 * Rounds: ceil((P-1)/stride). Messages: 2(P-1) per rank.
 */
#include "alltoallv.h"

/* Groups of `stride` steps s = 1, 2, ...: receive from rank-s, send to rank+s. */
int tuna_a2av_multipair_step(tuna_a2av_op *o, int wait_rc)
{
    return tuna_a2av_batches_step(o, wait_rc, 1, (int)tuna_a2av_param(o->a, "stride"), true,
                                  TUNA_TAG_MULTIPAIR, "multipair: MPI_Waitall failed");
}
