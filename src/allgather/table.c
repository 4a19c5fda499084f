/*
 * The allgather algorithm table: name, parameters (key, range, default,
 * clamping rule) and implementation. Adding an algorithm adds one row here.
 * k values above P are clamped to P.
 */
#include "tuna_coll.h"

const tuna_ag_algorithm tuna_ag_table[] = {
    {{"vendor", "the MPI library's own MPI_Allgather (PMPI_Allgather), passed straight through",
      0, {{0}}},
     NULL, false},
    {{"ring", "ring: P-1 rounds, one block to the right neighbour per round", 0, {{0}}},
     tuna_ag_ring, false},
    {{"kring", "k-ring: ring across groups of k consecutive ranks (P/k-1 rounds), then a ring "
               "inside each group passing whole columns (k-1 rounds)",
      1,
      {{"k", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,
        "group size, in [2, P]; larger values clamp to P, then lowered to the largest "
        "divisor of P not above it"}}},
     tuna_ag_kring, false},
    {{"recursive-doubling", "recursive doubling: log2 P rounds at distances 1, 2, 4, ... "
                            "(extra ranks folded in and out when P is not a power of two)",
      0, {{0}}},
     tuna_ag_recursive_doubling, false},
    {{"recmul", "recursive multiplying: log_k P rounds, k-1 partners at distance k^r "
                "(extra ranks folded in and out when P is not a power of k)",
      1, {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}},
     tuna_ag_recmul, false},
    {{"recmul-permuted",
      "recursive multiplying, largest distance first on a digit-reversed layout, then an "
      "in-place block permutation",
      1, {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}},
     tuna_ag_recmul_permuted, false},
    {{"auto", "chooses algorithm and k with the cost model from P, the node topology and the "
              "block size (docs/tuning.md)",
      0, {{0}}},
     NULL, true},
};

const int tuna_ag_table_len = (int)(sizeof tuna_ag_table / sizeof tuna_ag_table[0]);
