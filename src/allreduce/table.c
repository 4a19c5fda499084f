/*
 * The allreduce registry: one row per algorithm, everything about it in one place (see
 * src/core/tuna_registry.h): name, description, parameters (key, range, default, clamping
 * rule; k values above P clamp to P), kind, family, cost model (model.c), auto's candidate
 * grid, and its step function, declared here next to its row. Adding an algorithm adds its
 * file and one row here (docs/contributing.md).
 */
#include "allreduce.h"
#include "memkind.h" /* TUNA_MEMORY_DEVICE */

/* The step functions, one file each (recursive doubling's: allreduce.h). */
tuna_ar_step_fn tuna_ar_ring_step, tuna_ar_kring_step, tuna_ar_recmul_step,
    tuna_ar_recmul_permuted_step;

const tuna_ar_algorithm tuna_ar_table[] = {
    {.desc = TUNA_VENDOR_DESC("MPI_Allreduce")},
    TUNA_AGAR_ROW("ring",
                  "ring reduce-scatter + ring allgather: 2(P-1) rounds of n/P elements "
                  "(non-commutative ops: runs recursive-doubling)",
                  "ring", tuna_ar_cost_ring, TUNA_MEMORY_DEVICE, tuna_ar_ring_step),
    TUNA_AGAR_ROW_K("kring",
                    "k-ring reduce-scatter + allgather: rings inside groups of k consecutive "
                    "ranks and across groups (non-commutative ops: runs recursive-doubling)",
                    TUNA_PARAM_K_GROUP, "ring", tuna_ar_cost_kring, TUNA_MEMORY_DEVICE,
                    tuna_ar_kring_step),
    TUNA_AGAR_ROW("recursive-doubling",
                  "recursive doubling: log2 P rounds exchanging the whole vector, rank-ordered "
                  "reduction (extra ranks folded in and out)",
                  "recmul", tuna_ar_cost_recursive_doubling, TUNA_MEMORY_DEVICE,
                  tuna_ar_recursive_doubling_step),
    TUNA_AGAR_ROW_K("recmul",
                    "recursive multiplying: log_k P rounds, whole vector with k-1 partners at "
                    "distance k^r, rank-ordered reduction (extra ranks folded in and out)",
                    TUNA_PARAM_K_RADIX, "recmul", tuna_ar_cost_recmul, TUNA_MEMORY_DEVICE,
                    tuna_ar_recmul_step),
    TUNA_AGAR_ROW_K("recmul-permuted",
                    "radix-k reduce-scatter (distance 1 first) + allgather (largest distance "
                    "first) on contiguous ranges, segment ownership in digit-reversed order; "
                    "2 log_k P rounds, about 2n elements sent (extra ranks folded in and out)",
                    TUNA_PARAM_K_RADIX, "recmul", tuna_ar_cost_recmul_permuted,
                    TUNA_MEMORY_DEVICE, tuna_ar_recmul_permuted_step),
    {.desc = TUNA_AUTO_DESC("chooses algorithm and k with the cost model from P, the node "
                            "topology, the vector size and the op's commutativity, "
                            "then learning (docs/tuning.md)")},
};

const tuna_registry tuna_ar_registry =
    TUNA_REGISTRY_OF(TUNA_ALLREDUCE, tuna_ar_table, tuna_ar_library_runs);
