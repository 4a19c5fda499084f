/*
 * The allgather registry: one row per algorithm, everything about it in one place (see
 * src/core/tuna_registry.h): name, description, parameters (key, range, default, clamping
 * rule; k values above P clamp to P), kind, family, cost model (model.c), auto's candidate
 * grid, and its step function, declared here next to its row. Adding an algorithm adds its
 * file and one row here (docs/contributing.md).
 */
#include "allgather.h"

/* The step functions, one file each. */
tuna_ag_step_fn tuna_ag_ring_step, tuna_ag_kring_step, tuna_ag_recursive_doubling_step,
    tuna_ag_recmul_step, tuna_ag_recmul_permuted_step;

const tuna_ag_algorithm tuna_ag_table[] = {
    {.desc = {.info = {"vendor", "the MPI library's own MPI_Allgather (PMPI_Allgather), passed "
                                 "straight through",
                       0, {{0}}},
              .kind = TUNA_ROW_VENDOR, .family = "vendor"}},
    {.desc = {.info = {"ring", "ring: P-1 rounds, one block to the right neighbour per round", 0,
                       {{0}}},
              .family = "ring", .cost = tuna_ag_cost_ring},
     .step = tuna_ag_ring_step},
    {.desc = {.info = {"kring", "k-ring: ring across groups of k consecutive ranks (P/k-1 "
                                "rounds), then a ring inside each group passing whole columns "
                                "(k-1 rounds)",
                       1,
                       {{"k", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,
                         "group size, in [2, P]; larger values clamp to P, then lowered to the "
                         "largest divisor of P not above it"}}},
              .family = "ring", .cost = tuna_ag_cost_kring, .grid = tuna_grid_k},
     .step = tuna_ag_kring_step},
    {.desc = {.info = {"recursive-doubling", "recursive doubling: log2 P rounds at distances 1, "
                                             "2, 4, ... (extra ranks folded in and out when P "
                                             "is not a power of two)",
                       0, {{0}}},
              .family = "recmul", .cost = tuna_ag_cost_recursive_doubling},
     .step = tuna_ag_recursive_doubling_step},
    {.desc = {.info = {"recmul", "recursive multiplying: log_k P rounds, k-1 partners at "
                                 "distance k^r (extra ranks folded in and out when P is not a "
                                 "power of k)",
                       1,
                       {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}},
              .family = "recmul", .cost = tuna_ag_cost_recmul, .grid = tuna_grid_k},
     .step = tuna_ag_recmul_step},
    {.desc = {.info = {"recmul-permuted", "recursive multiplying, largest distance first on a "
                                          "digit-reversed layout, then an in-place block "
                                          "permutation",
                       1,
                       {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}},
              .family = "recmul", .cost = tuna_ag_cost_recmul_permuted, .grid = tuna_grid_k},
     .step = tuna_ag_recmul_permuted_step},
    {.desc = {.info = {"auto", "chooses algorithm and k with the cost model from P, the node "
                               "topology and the block size, then learning (docs/tuning.md)",
                       0, {{0}}},
              .kind = TUNA_ROW_AUTO, .family = "auto"}},
};

const tuna_registry tuna_ag_registry = {
    .coll = TUNA_ALLGATHER,
    .rows = tuna_ag_table,
    .stride = sizeof tuna_ag_table[0],
    .n = (int)(sizeof tuna_ag_table / sizeof tuna_ag_table[0]),
    .library_runs = tuna_ag_library_runs,
};
