/*
 * The alltoallv algorithm table: name, parameters (key, range, default,
 * clamping rule) and implementation. Adding an algorithm adds one row here.
 * Parameter values above their maximum are clamped to it; "P" means the
 * communicator size of the call.
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
     tuna_a2av_spreadout, true},
    {{"scattered", "linear (MPICH): batches of `block` Irecv/Isend pairs, Waitall per batch", 1,
      {{"block", 1, TUNA_PARAM_P, 32, "pairs per batch, in [1, P]; larger values clamp to P"}}},
     tuna_a2av_scattered, true},
    {{"linear", "linear (Open MPI basic): all receives posted first in ascending rank order, "
                "then all sends, one Waitall",
      0, {{0}}},
     tuna_a2av_linear, true},
    {{"pairwise", "linear (Open MPI): P-1 steps, one Irecv + blocking Send per step", 0, {{0}}},
     tuna_a2av_pairwise, true},
    {{"xor", "linear: exclusive-or pairing, peer = rank ^ step over the next power of two "
             "(any P: missing peers are skipped)",
      0, {{0}}},
     tuna_a2av_xor, true},
    {{"multipair", "linear: `stride` pairwise steps posted together, then Waitall", 1,
      {STRIDE_PARAM}},
     tuna_a2av_multipair, true},
    {{"multipair-waitany",
      "linear: keep `stride` sends and receives in flight, refill on MPI_Waitany", 1,
      {STRIDE_PARAM}},
     tuna_a2av_multipair_waitany, true},
    {{"multipair-testany",
      "linear: keep `stride` sends and receives in flight, refill on MPI_Testany polling", 1,
      {STRIDE_PARAM}},
     tuna_a2av_multipair_testany, true},
};

const int tuna_a2av_table_len = (int)(sizeof tuna_a2av_table / sizeof tuna_a2av_table[0]);
