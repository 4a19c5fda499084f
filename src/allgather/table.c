/*
 * The allgather registry: one row per algorithm, everything about it in one place (see
 * src/core/tuna_registry.h): name, description, parameters (key, range, default, clamping
 * rule; k values above P clamp to P), kind, family, cost model (model.c), auto's candidate
 * grid, and its step function, declared here next to its row. Adding an algorithm adds its
 * file and one row here (docs/contributing.md).
 */
#include "allgather.h"
#include "memkind.h" /* TUNA_MEMORY_DEVICE */

/* The step functions, one file each. */
tuna_ag_step_fn tuna_ag_ring_step, tuna_ag_kring_step, tuna_ag_recursive_doubling_step,
    tuna_ag_recmul_step, tuna_ag_recmul_permuted_step;

const tuna_ag_algorithm tuna_ag_table[] = {
    {.desc = TUNA_VENDOR_DESC("MPI_Allgather")},
    TUNA_AGAR_ROW("ring", "ring: P-1 rounds, one block to the right neighbour per round", "ring",
                  tuna_ag_cost_ring, TUNA_MEMORY_DEVICE, tuna_ag_ring_step),
    TUNA_AGAR_ROW_K("kring",
                    "k-ring: ring across groups of k consecutive ranks (P/k-1 rounds), then a "
                    "ring inside each group passing whole columns (k-1 rounds)",
                    TUNA_PARAM_K_GROUP, "ring", tuna_ag_cost_kring, 0, tuna_ag_kring_step),
    TUNA_AGAR_ROW("recursive-doubling",
                  "recursive doubling: log2 P rounds at distances 1, 2, 4, ... (extra ranks "
                  "folded in and out when P is not a power of two)",
                  "recmul", tuna_ag_cost_recursive_doubling, TUNA_MEMORY_DEVICE,
                  tuna_ag_recursive_doubling_step),
    TUNA_AGAR_ROW_K("recmul",
                    "recursive multiplying: log_k P rounds, k-1 partners at distance k^r (extra "
                    "ranks folded in and out when P is not a power of k)",
                    TUNA_PARAM_K_RADIX, "recmul", tuna_ag_cost_recmul, TUNA_MEMORY_DEVICE,
                    tuna_ag_recmul_step),
    TUNA_AGAR_ROW_K("recmul-permuted",
                    "recursive multiplying, largest distance first on a digit-reversed layout, "
                    "then an in-place block permutation",
                    TUNA_PARAM_K_RADIX, "recmul", tuna_ag_cost_recmul_permuted,
                    TUNA_MEMORY_DEVICE, tuna_ag_recmul_permuted_step),
    {.desc = TUNA_AUTO_DESC("chooses algorithm and k with the cost model from P, the node "
                            "topology and the block size, then learning (docs/tuning.md)")},
};

const tuna_registry tuna_ag_registry =
    TUNA_REGISTRY_OF(TUNA_ALLGATHER, tuna_ag_table, tuna_ag_library_runs);
