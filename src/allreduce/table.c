/*
 * The allreduce algorithm table: name, parameters (key, range, default,
 * clamping rule) and implementation. Adding an algorithm adds one row here.
 * k values above P are clamped to P.
 */
#include "tuna_coll.h"

const tuna_ar_algorithm tuna_ar_table[] = {
    {{"vendor", "the MPI library's own MPI_Allreduce (PMPI_Allreduce), passed straight through",
      0, {{0}}},
     NULL, false},
    {{"ring", "ring reduce-scatter + ring allgather: 2(P-1) rounds of n/P elements "
              "(non-commutative ops: runs recursive-doubling)",
      0, {{0}}},
     tuna_ar_ring, false},
    {{"kring", "k-ring reduce-scatter + allgather: rings inside groups of k consecutive ranks "
               "and across groups (non-commutative ops: runs recursive-doubling)",
      1,
      {{"k", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,
        "group size, in [2, P]; larger values clamp to P, then lowered to the largest "
        "divisor of P not above it"}}},
     tuna_ar_kring, false},
    {{"recursive-doubling", "recursive doubling: log2 P rounds exchanging the whole vector, "
                            "rank-ordered reduction (extra ranks folded in and out)",
      0, {{0}}},
     tuna_ar_recursive_doubling, false},
    {{"recmul", "recursive multiplying: log_k P rounds, whole vector with k-1 partners at "
                "distance k^r, rank-ordered reduction (extra ranks folded in and out)",
      1, {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}},
     tuna_ar_recmul, false},
    {{"recmul-permuted",
      "radix-k reduce-scatter (distance 1 first) + allgather (largest distance first) on "
      "contiguous ranges, segment ownership in digit-reversed order; 2 log_k P rounds, "
      "about 2n elements sent (extra ranks folded in and out)",
      1, {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}},
     tuna_ar_recmul_permuted, false},
    {{"auto", "chooses algorithm and k with the cost model from P, the node topology, the "
              "vector size and the op's commutativity (docs/tuning.md)",
      0, {{0}}},
     NULL, true},
};

const int tuna_ar_table_len = (int)(sizeof tuna_ar_table / sizeof tuna_ar_table[0]);
