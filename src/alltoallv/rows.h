/*
 * The rows the alltoallv and alltoall registries share (src/alltoallv/table.c,
 * src/alltoall/table.c): the same algorithm, parameters, cost model and step form. alltoall
 * runs them on uniform arguments (a->uniform); a row's needs and pair_tag are read by
 * alltoallv's front end only. memory_kinds: the memory kinds the row serves besides host
 * memory in that registry (tuna_algorithm.memory): alltoallv's table gives TUNA_MEMORY_DEVICE
 * to the rows that post only byte regions and copies through the transport (docs/gpu.md),
 * alltoall's gives 0.
 */
#ifndef TUNA_ALLTOALLV_ROWS_H
#define TUNA_ALLTOALLV_ROWS_H

#include "alltoallv.h"

/* The step forms (one file each). */
tuna_a2av_step_fn tuna_a2av_spreadout_step, tuna_a2av_scattered_step, tuna_a2av_pairwise_step,
    tuna_a2av_xor_step, tuna_a2av_multipair_step, tuna_a2av_coalesced_step,
    tuna_a2av_staggered_step;
tuna_a2av_step_fn tuna_a2av_multipair_waitany_step, tuna_a2av_multipair_testany_step,
    tuna_a2av_bruck_step, tuna_a2av_padded_bruck_step, tuna_a2av_twophase_bruck_step;

#define STRIDE_PARAM                                                                           \
    {"stride", 1, TUNA_PARAM_P, 8, "pairs in flight, in [1, P]; larger values clamp to P"}

#define TUNA_A2AV_ROW_SPREADOUT(memory_kinds)                                                   \
    {.desc = {.info = {"spreadout", "linear: all Irecv/Isend at once, peers in round-robin order "  \
                                    "from self",                                                \
                       0, {{0}}},                                                               \
              .memory = (memory_kinds), .family = "linear", .cost = tuna_a2av_cost_one_phase,   \
              .inflight = tuna_a2av_inflight_all_peers, .pair_tag = TUNA_TAG_SPREADOUT},        \
     .step = tuna_a2av_spreadout_step}

#define TUNA_A2AV_ROW_SCATTERED(memory_kinds)                                                   \
    {.desc = {.info = {"scattered", "linear (MPICH): batches of `block` Irecv/Isend pairs, "        \
                                    "Waitall per batch",                                        \
                       1,                                                                       \
                       {{"block", 1, TUNA_PARAM_P, 32,                                          \
                         "pairs per batch, in [1, P]; larger values clamp to P"}}},             \
              .memory = (memory_kinds),                                                         \
              .family = "linear", .cost = tuna_a2av_cost_batches,                               \
              .grid = tuna_a2av_grid_batch, .inflight = tuna_a2av_inflight_batch},              \
     .step = tuna_a2av_scattered_step}

#define TUNA_A2AV_ROW_LINEAR(memory_kinds)                                                      \
    {.desc = {.info = {"linear", "linear (Open MPI basic): all receives posted first in "           \
                                 "ascending rank order, then all sends, one Waitall",           \
                       0, {{0}}},                                                               \
              .memory = (memory_kinds),                                                         \
              .family = "linear", .cost = tuna_a2av_cost_receives_first,                        \
              .inflight = tuna_a2av_inflight_all_peers},                                        \
     .step = tuna_a2av_linear_step}

#define TUNA_A2AV_ROW_PAIRWISE(memory_kinds)                                                    \
    {.desc = {.info = {"pairwise", "linear (Open MPI): P-1 steps, one Irecv + Isend pair "          \
                                   "per step, waited before the next",                          \
                       0, {{0}}},                                                               \
              .memory = (memory_kinds), .family = "linear", .cost = tuna_a2av_cost_stepwise,    \
              .inflight = tuna_a2av_inflight_one_peer, .pair_tag = TUNA_TAG_PAIRWISE},          \
     .step = tuna_a2av_pairwise_step}

#define TUNA_A2AV_ROW_XOR(memory_kinds)                                                         \
    {.desc = {.info = {"xor", "linear: exclusive-or pairing, peer = rank ^ step over the next "     \
                              "power of two (any P: missing peers are skipped)",                \
                       0, {{0}}},                                                               \
              .memory = (memory_kinds), .family = "linear", .cost = tuna_a2av_cost_stepwise,    \
              .inflight = tuna_a2av_inflight_one_peer, .pair_tag = TUNA_TAG_XOR},               \
     .step = tuna_a2av_xor_step}

#define TUNA_A2AV_ROW_MULTIPAIR(memory_kinds)                                                   \
    {.desc = {.info = {"multipair", "linear: `stride` pairwise steps posted together, then "        \
                                    "Waitall",                                                  \
                       1, {STRIDE_PARAM}},                                                      \
              .memory = (memory_kinds),                                                         \
              .family = "linear", .cost = tuna_a2av_cost_batches,                               \
              .grid = tuna_a2av_grid_batch, .inflight = tuna_a2av_inflight_batch},              \
     .step = tuna_a2av_multipair_step}

#define TUNA_A2AV_ROW_MULTIPAIR_WAITANY                                                         \
    {.desc = {.info = {"multipair-waitany", "linear: keep `stride` sends and receives in "          \
                                            "flight, refill on MPI_Waitany",                    \
                       1, {STRIDE_PARAM}},                                                      \
              .family = "linear", .cost = tuna_a2av_cost_window, .grid = tuna_a2av_grid_batch,  \
              .inflight = tuna_a2av_inflight_batch},                                            \
     .step = tuna_a2av_multipair_waitany_step}

#define TUNA_A2AV_ROW_MULTIPAIR_TESTANY                                                         \
    {.desc = {.info = {"multipair-testany", "linear: keep `stride` sends and receives in "          \
                                            "flight, refill on MPI_Testany polling",            \
                       1, {STRIDE_PARAM}},                                                      \
              .needs = TUNA_NEEDS_POLLING, .family = "linear", .cost = tuna_a2av_cost_window,   \
              .grid = tuna_a2av_grid_batch, .inflight = tuna_a2av_inflight_batch},              \
     .step = tuna_a2av_multipair_testany_step}

#define TUNA_A2AV_ROW_BRUCK                                                                     \
    {.desc = {.info = {"bruck", "logarithmic: classic radix-2 Bruck (rotation, ceil(log2 P) "       \
                                "rounds, inverse rotation) on blocks padded to the global "     \
                                "maximum block size",                                           \
                       0, {{0}}},                                                               \
              .needs = TUNA_NEEDS_GLOBAL_STATS, .family = "bruck",                              \
              .cost = tuna_a2av_cost_bruck, .inflight = tuna_a2av_inflight_one_peer},           \
     .step = tuna_a2av_bruck_step}

#define TUNA_A2AV_ROW_PADDED_BRUCK                                                              \
    {.desc = {.info = {"padded-bruck", "logarithmic: TuNA paper's padded Bruck, radix 2, "          \
                                       "rotations folded into the padding and scan-out copies", \
                       1,                                                                       \
                       {{"datatype", 0, 1, 0,                                                   \
                         "round data movement: 0 = memcpy packing, 1 = MPI hindexed datatype "  \
                         "(no packing)"}}},                                                     \
              .needs = TUNA_NEEDS_GLOBAL_STATS, .family = "bruck",                              \
              .cost = tuna_a2av_cost_padded_bruck, .grid = tuna_grid_every_value,               \
              .inflight = tuna_a2av_inflight_one_peer},                                         \
     .step = tuna_a2av_padded_bruck_step}

/* TuNA's row: alltoallv's describes the size messages of its rounds; alltoall's has its own
 * description and is priced by cost_fn and inflight_fn (without the size messages). */
#define TUNA_A2AV_ROW_TUNA                                                                      \
    TUNA_A2AV_ROW_TUNA_PRICED("logarithmic: TuNA, radix-r Bruck without padding or rotations; " \
                              "per round the block sizes, then the data; K <= ceil(log_r "      \
                              "P)(r-1) rounds",                                                 \
                              tuna_a2av_cost_tuna, tuna_a2av_inflight_tuna)
#define TUNA_A2AV_ROW_TUNA_PRICED(description, cost_fn, inflight_fn)                            \
    {.desc = {.info = {"tuna", description, 2,                                                  \
                       {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,                            \
                         "digit base r, in [2, P], default ceil(sqrt P); larger values clamp "  \
                         "to P (r = P: linear)"},                                               \
                        {"block", 1, TUNA_PARAM_P, TUNA_PARAM_P,                                \
                         "rounds of one digit in flight together, in [1, P], default all; "     \
                         "clamps to r-1"}}},                                                    \
              .family = "tuna", .cost = cost_fn, .grid = tuna_a2av_grid_tuna,                   \
              .inflight = inflight_fn},                                                         \
     .step = tuna_a2av_tuna_step}

/* The row priced by cost_fn and inflight_fn (alltoall's: without the size messages). */
#define TUNA_A2AV_ROW_COALESCED                                                                 \
    TUNA_A2AV_ROW_COALESCED_PRICED(tuna_a2av_cost_coalesced, tuna_a2av_inflight_coalesced)
#define TUNA_A2AV_ROW_COALESCED_PRICED(cost_fn, inflight_fn)                                    \
    {.desc = {.info = {"coalesced", "hierarchical TuNA: intra-node TuNA, then one aggregated "      \
                                    "message per remote node to the same local rank",           \
                       2,                                                                       \
                       {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_P,                                \
                         "intra-node digit base, in [2, P], default Q; clamps to Q (ranks per " \
                         "node)"},                                                              \
                        {"block", 1, TUNA_PARAM_P, 8,                                           \
                         "remote nodes per inter-node batch, in [1, P], default 8; clamps to "  \
                         "N-1"}}},                                                              \
              .needs = TUNA_NEEDS_NODES, .family = "hierarchical",                              \
              .cost = cost_fn, .grid = tuna_a2av_grid_coalesced,                                \
              .inflight = inflight_fn},                                                         \
     .step = tuna_a2av_coalesced_step}

/* The row priced by cost_fn and inflight_fn (alltoall's: without the size messages). */
#define TUNA_A2AV_ROW_STAGGERED                                                                 \
    TUNA_A2AV_ROW_STAGGERED_PRICED(tuna_a2av_cost_staggered, tuna_a2av_inflight_staggered)
#define TUNA_A2AV_ROW_STAGGERED_PRICED(cost_fn, inflight_fn)                                    \
    {.desc = {.info = {"staggered", "hierarchical TuNA: intra-node TuNA, then one message per "     \
                                    "block to the same local rank of each remote node, nodes "  \
                                    "interleaved",                                              \
                       2,                                                                       \
                       {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_P,                                \
                         "intra-node digit base, in [2, P], default Q; clamps to Q (ranks per " \
                         "node)"},                                                              \
                        {"block", 1, TUNA_PARAM_P, 32,                                          \
                         "messages per inter-node batch, in [1, P], default 32; clamps to "     \
                         "(N-1)*Q"}}},                                                          \
              .needs = TUNA_NEEDS_NODES, .family = "hierarchical",                              \
              .cost = cost_fn, .grid = tuna_a2av_grid_staggered,                                \
              .inflight = inflight_fn},                                                         \
     .step = tuna_a2av_staggered_step}

#endif /* TUNA_ALLTOALLV_ROWS_H */
