/*
 * recursive-doubling allreduce: recursive multiplying with radix 2. Round r
 * exchanges the whole partial result with rank xor 2^r and combines the two
 * in rank order (so non-commutative ops are supported).
 * Rounds: log2 P (+2 when P is not a power of two: pairs of ranks fold into
 * one first, see recmul.c). Volume sent per rank: n log2 P elements. Memory: n.
 */
#include "allreduce.h"

int tuna_ar_recursive_doubling_step(tuna_ar_op *o, int wait_rc)
{
    return tuna_ar_recmul_k_step(o, wait_rc, 2);
}
