/*
 * The alltoallv algorithm table: name, parameters (key, range, default,
 * clamping rule) and implementation. Adding an algorithm adds one row here.
 * Parameter values above their maximum are clamped to it; "P" means the
 * communicator size of the call. The last field says whether the algorithm
 * needs the globally agreed size statistics (then the core's allreduce runs on
 * every call; see src/core/alltoallv.c): only the padded Bruck algorithms do.
 * TuNA, hierarchical TuNA and two-phase Bruck learn the sizes from their
 * metadata rounds.
 */
#include "tuna_internal.h"

#define STRIDE_PARAM                                                                           \
    {"stride", 1, TUNA_PARAM_P, 8, "pairs in flight, in [1, P]; larger values clamp to P"}

const tuna_a2av_algorithm tuna_a2av_table[] = {
    {{"vendor", "the MPI library's own MPI_Alltoallv (PMPI_Alltoallv), passed straight through",
      0, {{0}}},
     tuna_a2av_vendor, false},
    {{"spreadout", "linear: all Irecv/Isend at once, peers in round-robin order from self", 0,
      {{0}}},
     tuna_a2av_spreadout, false},
    {{"scattered", "linear (MPICH): batches of `block` Irecv/Isend pairs, Waitall per batch", 1,
      {{"block", 1, TUNA_PARAM_P, 32, "pairs per batch, in [1, P]; larger values clamp to P"}}},
     tuna_a2av_scattered, false},
    {{"linear", "linear (Open MPI basic): all receives posted first in ascending rank order, "
                "then all sends, one Waitall",
      0, {{0}}},
     tuna_a2av_linear, false},
    {{"pairwise", "linear (Open MPI): P-1 steps, one Irecv + blocking Send per step", 0, {{0}}},
     tuna_a2av_pairwise, false},
    {{"xor", "linear: exclusive-or pairing, peer = rank ^ step over the next power of two "
             "(any P: missing peers are skipped)",
      0, {{0}}},
     tuna_a2av_xor, false},
    {{"multipair", "linear: `stride` pairwise steps posted together, then Waitall", 1,
      {STRIDE_PARAM}},
     tuna_a2av_multipair, false},
    {{"multipair-waitany",
      "linear: keep `stride` sends and receives in flight, refill on MPI_Waitany", 1,
      {STRIDE_PARAM}},
     tuna_a2av_multipair_waitany, false},
    {{"multipair-testany",
      "linear: keep `stride` sends and receives in flight, refill on MPI_Testany polling", 1,
      {STRIDE_PARAM}},
     tuna_a2av_multipair_testany, false},
    {{"bruck", "logarithmic: classic radix-2 Bruck (rotation, ceil(log2 P) rounds, inverse "
               "rotation) on blocks padded to the global maximum block size",
      0, {{0}}},
     tuna_a2av_bruck, true},
    {{"padded-bruck", "logarithmic: TuNA paper's padded Bruck, radix 2, rotations folded into "
                      "the padding and scan-out copies",
      1,
      {{"datatype", 0, 1, 0,
        "round data movement: 0 = memcpy packing, 1 = MPI hindexed datatype (no packing)"}}},
     tuna_a2av_padded_bruck, true},
    {{"twophase-bruck", "logarithmic: radix-2 Bruck without padding, each round exchanges the "
                        "block sizes, then exactly those bytes",
      0, {{0}}},
     tuna_a2av_twophase_bruck, false},
    {{"tuna", "logarithmic: TuNA, radix-r Bruck without padding or rotations; per round the "
              "block sizes, then the data; K <= ceil(log_r P)(r-1) rounds",
      2,
      {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,
        "digit base r, in [2, P], default ceil(sqrt P); larger values clamp to P (r = P: linear)"},
       {"block", 1, TUNA_PARAM_P, TUNA_PARAM_P,
        "rounds of one digit in flight together, in [1, P], default all; clamps to r-1"}}},
     tuna_a2av_tuna, false},
    {{"coalesced", "hierarchical TuNA: intra-node TuNA, then one aggregated message per remote "
                   "node to the same local rank",
      2,
      {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_P,
        "intra-node digit base, in [2, P], default Q; clamps to Q (ranks per node)"},
       {"block", 1, TUNA_PARAM_P, 8,
        "remote nodes per inter-node batch, in [1, P], default 8; clamps to N-1"}}},
     tuna_a2av_coalesced, false},
    {{"staggered", "hierarchical TuNA: intra-node TuNA, then one message per block to the same "
                   "local rank of each remote node, nodes interleaved",
      2,
      {{"radix", 2, TUNA_PARAM_P, TUNA_PARAM_P,
        "intra-node digit base, in [2, P], default Q; clamps to Q (ranks per node)"},
       {"block", 1, TUNA_PARAM_P, 32,
        "messages per inter-node batch, in [1, P], default 32; clamps to (N-1)*Q"}}},
     tuna_a2av_staggered, false},
    {{"auto", "chooses algorithm and parameters from sizes agreed by all ranks: a TUNA_TUNING "
              "table entry, else the cost model (docs/tuning.md)",
      0, {{0}}},
     tuna_a2av_auto, false /* agrees itself when the core did not (auto.c) */},
};

const int tuna_a2av_table_len = (int)(sizeof tuna_a2av_table / sizeof tuna_a2av_table[0]);
