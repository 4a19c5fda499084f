/*
 * recursive-doubling allgather: recursive multiplying with radix 2. Round r
 * exchanges everything held with the partner at distance 2^r (rank xor 2^r).
 * Rounds: log2 P (+2 when P is not a power of two: the two extra ranks of a
 * pair fold into one, see recmul.c). Volume received: (P-1) blocks.
 */
#include "allgather.h"

int tuna_ag_recursive_doubling_step(tuna_ag_op *o, int wait_rc)
{
    return tuna_ag_recmul_k_step(o, wait_rc, 2);
}
