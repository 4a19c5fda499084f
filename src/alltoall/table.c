/*
 * The alltoall registry (src/core/tuna_registry.h): one row per algorithm of the uniform
 * all-to-all. The rows that alltoallv has too run its step forms (src/alltoallv/) on the
 * uniform arguments alltoall.c builds (a->uniform: every block's size known everywhere),
 * under the same names and parameters; their cost models are alltoallv's with the uniform
 * statistics (max = mean block, no empty blocks), TuNA's without its metadata terms (its
 * engine sends none here; uniform_rows.h). No row needs an agreement: MPI's type
 * signature rule makes the block size the same on every rank. docs/algorithms-alltoall.md.
 */
#include "alltoall.h"
#include "../alltoallv/rows.h"
#include "uniform_rows.h" /* the uniform-only rows and models */

const tuna_a2av_algorithm tuna_a2a_table[] = {
    {.desc = TUNA_VENDOR_DESC("MPI_Alltoall")},
    TUNA_A2AV_ROW_SPREADOUT(0),
    TUNA_A2AV_ROW_SCATTERED(0),
    TUNA_A2AV_ROW_LINEAR(0),
    TUNA_A2AV_ROW_PAIRWISE(0),
    TUNA_A2AV_ROW_XOR(0),
    TUNA_A2AV_ROW_MULTIPAIR(0),
    TUNA_A2AV_ROW_MULTIPAIR_WAITANY,
    TUNA_A2AV_ROW_MULTIPAIR_TESTANY,
    TUNA_A2AV_ROW_BRUCK,
    TUNA_A2AV_ROW_PADDED_BRUCK,
    {.desc = {.info = {"bruck-radix", "logarithmic: classic Bruck with radix r (rotation, "
                                      "(r-1) rounds per base-r digit packing their blocks, "
                                      "inverse rotation; MPICH's k_brucks)",
                       1,
                       {{"radix", 2, TUNA_PARAM_P, 2,
                         "digit base r, in [2, P], default 2; larger values clamp to P (r = "
                         "P: one block per round)"}}},
              .family = "bruck", .cost = tuna_a2a_cost_bruck_radix,
              .grid = tuna_a2a_grid_bruck_radix, .inflight = tuna_a2a_inflight_bruck_radix},
     .step = tuna_a2a_bruck_radix_step},
    TUNA_A2AV_ROW_TUNA_PRICED("logarithmic: TuNA, radix-r Bruck without padding or rotations; "
                              "K <= ceil(log_r P)(r-1) rounds",
                              tuna_a2a_cost_tuna, tuna_a2a_inflight_tuna),
    TUNA_A2AV_ROW_COALESCED_PRICED(tuna_a2a_cost_coalesced, tuna_a2a_inflight_coalesced),
    TUNA_A2AV_ROW_STAGGERED_PRICED(tuna_a2a_cost_staggered, tuna_a2a_inflight_staggered),
    /* family hierarchical: its phases follow the ranks' grid, dimension 0 inside a node under
     * block placement, as coalesced and staggered go inside the node first; it needs no node
     * structure (the grid comes from P alone). */
    {.desc = {.info = {"mesh", "hierarchical: the ranks as a grid of `dims` dimensions (P = "
                               "d_0*...*d_{k-1}, the fewest messages sum(d_j-1), largest "
                               "first), one phase per dimension exchanging with the d_j-1 "
                               "ranks along it (SMPI's 2dmesh/3dmesh; zero-copy hvector)",
                       1,
                       {{"dims", 1, TUNA_PARAM_P, 2,
                         "grid dimensions k, in [1, P], default 2; clamps to the number of "
                         "prime factors of P (prime P: 1, the linear exchange)"}}},
              .family = "hierarchical", .cost = tuna_a2a_cost_mesh, .grid = tuna_a2a_grid_mesh,
              .inflight = tuna_a2a_inflight_mesh},
     .step = tuna_a2a_mesh_step},
    {.desc = TUNA_AUTO_DESC("chooses algorithm and parameters from P, the nodes and the block "
                            "size (the same on every rank: no agreement): a TUNA_TUNING "
                            "entry, else the cost model, then learning (docs/tuning.md)")},
};

const tuna_registry tuna_a2a_registry =
    TUNA_REGISTRY_OF(TUNA_ALLTOALL, tuna_a2a_table, tuna_a2a_library_runs);
