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
#include "uniform_rows.h" /* the uniform-only rows and models */

/* The alltoallv step forms these rows run (one file each in src/alltoallv/). */
tuna_a2av_step_fn tuna_a2av_spreadout_step, tuna_a2av_scattered_step, tuna_a2av_pairwise_step,
    tuna_a2av_xor_step, tuna_a2av_multipair_step, tuna_a2av_coalesced_step,
    tuna_a2av_staggered_step, tuna_a2av_multipair_waitany_step,
    tuna_a2av_multipair_testany_step, tuna_a2av_bruck_step, tuna_a2av_padded_bruck_step;

#define STRIDE_PARAM                                                                           \
    {"stride", 1, TUNA_PARAM_P, 8, "pairs in flight, in [1, P]; larger values clamp to P"}

const tuna_a2av_algorithm tuna_a2a_table[] = {
    {.desc = {.info = {"vendor", "the MPI library's own MPI_Alltoall (PMPI_Alltoall), passed "
                                 "straight through",
                       0, {{0}}},
              .kind = TUNA_ROW_VENDOR, .family = "vendor"}},
    {.desc = {.info = {"spreadout", "linear: all Irecv/Isend at once, peers in round-robin order "
                                    "from self",
                       0, {{0}}},
              .family = "linear", .cost = tuna_a2av_cost_one_phase,
              .inflight = tuna_a2av_inflight_all_peers},
     .step = tuna_a2av_spreadout_step},
    {.desc = {.info = {"scattered", "linear (MPICH): batches of `block` Irecv/Isend pairs, "
                                    "Waitall per batch",
                       1,
                       {{"block", 1, TUNA_PARAM_P, 32,
                         "pairs per batch, in [1, P]; larger values clamp to P"}}},
              .family = "linear", .cost = tuna_a2av_cost_batches_of_block,
              .grid = tuna_a2av_grid_block, .inflight = tuna_a2av_inflight_block},
     .step = tuna_a2av_scattered_step},
    {.desc = {.info = {"linear", "linear (Open MPI basic): all receives posted first in "
                                 "ascending rank order, then all sends, one Waitall",
                       0, {{0}}},
              .family = "linear", .cost = tuna_a2av_cost_receives_first,
              .inflight = tuna_a2av_inflight_all_peers},
     .step = tuna_a2av_linear_step},
    {.desc = {.info = {"pairwise", "linear (Open MPI, MPICH): P-1 steps, one Irecv + Isend "
                                   "pair per step, waited before the next",
                       0, {{0}}},
              .family = "linear", .cost = tuna_a2av_cost_stepwise,
              .inflight = tuna_a2av_inflight_one_peer},
     .step = tuna_a2av_pairwise_step},
    {.desc = {.info = {"xor", "linear: exclusive-or pairing, peer = rank ^ step over the next "
                              "power of two (any P: missing peers are skipped)",
                       0, {{0}}},
              .family = "linear", .cost = tuna_a2av_cost_stepwise,
              .inflight = tuna_a2av_inflight_one_peer},
     .step = tuna_a2av_xor_step},
    {.desc = {.info = {"multipair", "linear: `stride` pairwise steps posted together, then "
                                    "Waitall",
                       1, {STRIDE_PARAM}},
              .family = "linear", .cost = tuna_a2av_cost_batches_of_stride,
              .grid = tuna_a2av_grid_stride, .inflight = tuna_a2av_inflight_stride},
     .step = tuna_a2av_multipair_step},
    {.desc = {.info = {"multipair-waitany", "linear: keep `stride` sends and receives in "
                                            "flight, refill on MPI_Waitany",
                       1, {STRIDE_PARAM}},
              .family = "linear", .cost = tuna_a2av_cost_window, .grid = tuna_a2av_grid_stride,
              .inflight = tuna_a2av_inflight_stride},
     .step = tuna_a2av_multipair_waitany_step},
    {.desc = {.info = {"multipair-testany", "linear: keep `stride` sends and receives in "
                                            "flight, refill on MPI_Testany polling",
                       1, {STRIDE_PARAM}},
              .needs = TUNA_NEEDS_POLLING, .family = "linear", .cost = tuna_a2av_cost_window,
              .grid = tuna_a2av_grid_stride, .inflight = tuna_a2av_inflight_stride},
     .step = tuna_a2av_multipair_testany_step},
    {.desc = {.info = {"bruck", "logarithmic: classic radix-2 Bruck (rotation, ceil(log2 P) "
                                "rounds packing their blocks, inverse rotation)",
                       0, {{0}}},
              .family = "bruck", .cost = tuna_a2av_cost_bruck,
              .inflight = tuna_a2av_inflight_one_peer},
     .step = tuna_a2av_bruck_step},
    {.desc = {.info = {"padded-bruck", "logarithmic: TuNA paper's padded Bruck, radix 2, "
                                       "rotations folded into the copies",
                       1,
                       {{"datatype", 0, 1, 0,
                         "round data movement: 0 = memcpy packing, 1 = MPI hindexed datatype "
                         "(no packing)"}}},
              .family = "bruck", .cost = tuna_a2av_cost_padded_bruck,
              .grid = tuna_grid_every_value, .inflight = tuna_a2av_inflight_one_peer},
     .step = tuna_a2av_padded_bruck_step},
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
    {.desc = {.info = {"tuna", "logarithmic: TuNA, radix-r Bruck without padding or rotations; "
                               "K <= ceil(log_r P)(r-1) rounds",
                       2,
                       {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,
                         "digit base r, in [2, P], default ceil(sqrt P); larger values clamp "
                         "to P (r = P: linear)"},
                        {"block", 1, TUNA_PARAM_P, TUNA_PARAM_P,
                         "rounds of one digit in flight together, in [1, P], default all; "
                         "clamps to r-1"}}},
              .family = "tuna", .cost = tuna_a2a_cost_tuna, .grid = tuna_a2av_grid_tuna,
              .inflight = tuna_a2a_inflight_tuna},
     .step = tuna_a2av_tuna_step},
    {.desc = {.info = {"coalesced", "hierarchical TuNA: intra-node TuNA, then one aggregated "
                                    "message per remote node to the same local rank",
                       2,
                       {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_P,
                         "intra-node digit base, in [2, P], default Q; clamps to Q (ranks per "
                         "node)"},
                        {"block", 1, TUNA_PARAM_P, 8,
                         "remote nodes per inter-node batch, in [1, P], default 8; clamps to "
                         "N-1"}}},
              .needs = TUNA_NEEDS_NODES, .family = "hierarchical",
              .cost = tuna_a2a_cost_coalesced, .grid = tuna_a2av_grid_coalesced,
              .inflight = tuna_a2a_inflight_coalesced},
     .step = tuna_a2av_coalesced_step},
    {.desc = {.info = {"staggered", "hierarchical TuNA: intra-node TuNA, then one message per "
                                    "block to the same local rank of each remote node, nodes "
                                    "interleaved",
                       2,
                       {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_P,
                         "intra-node digit base, in [2, P], default Q; clamps to Q (ranks per "
                         "node)"},
                        {"block", 1, TUNA_PARAM_P, 32,
                         "messages per inter-node batch, in [1, P], default 32; clamps to "
                         "(N-1)*Q"}}},
              .needs = TUNA_NEEDS_NODES, .family = "hierarchical",
              .cost = tuna_a2a_cost_staggered, .grid = tuna_a2av_grid_staggered,
              .inflight = tuna_a2a_inflight_staggered},
     .step = tuna_a2av_staggered_step},
    {.desc = {.info = {"auto", "chooses algorithm and parameters from P, the nodes and the block "
                               "size (the same on every rank: no agreement): a TUNA_TUNING "
                               "entry, else the cost model, then learning (docs/tuning.md)",
                       0, {{0}}},
              .kind = TUNA_ROW_AUTO, .family = "auto"}},
};

const tuna_registry tuna_a2a_registry = {
    .coll = TUNA_ALLTOALL,
    .rows = tuna_a2a_table,
    .stride = sizeof tuna_a2a_table[0],
    .n = (int)(sizeof tuna_a2a_table / sizeof tuna_a2a_table[0]),
    .library_runs = tuna_a2a_library_runs,
};
