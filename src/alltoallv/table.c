/*
 * The alltoallv registry: one row per algorithm, everything about it in one place (see
 * src/core/tuna_registry.h): name, description, parameters (key, range, default, clamping
 * rule; values above their maximum clamp to it, "P" is the communicator size of the call),
 * kind, what it needs, its family (for tests and docs), its cost model and auto's candidate
 * grid (model.c), and its step function (the vendor and auto rows: a run function, declared
 * below). Adding an algorithm adds its file and one row (docs/contributing.md); the rows
 * alltoall runs too are macros in rows.h, and the step functions are declared there.
 *
 * Only the padded Bruck algorithms need the globally agreed size statistics (the front end's
 * allreduce then runs on every call; src/alltoallv/front.c). TuNA, hierarchical TuNA and
 * two-phase Bruck learn the sizes from their metadata rounds.
 */
#include "rows.h"

#include "memkind.h" /* TUNA_MEMORY_DEVICE */

/* The run functions, one file each (tuna.c and linear.c: alltoallv.h, others fall back to
 * them); the step forms of the rows alltoall shares: rows.h. */
tuna_a2av_run_fn tuna_a2av_vendor, tuna_a2av_auto;

const tuna_a2av_algorithm tuna_a2av_table[] = {
    {.desc = TUNA_VENDOR_DESC("MPI_Alltoallv"),
     .run = tuna_a2av_vendor},
    TUNA_A2AV_ROW_SPREADOUT(TUNA_MEMORY_DEVICE),
    TUNA_A2AV_ROW_SCATTERED(TUNA_MEMORY_DEVICE),
    TUNA_A2AV_ROW_LINEAR(TUNA_MEMORY_DEVICE),
    TUNA_A2AV_ROW_PAIRWISE(TUNA_MEMORY_DEVICE),
    TUNA_A2AV_ROW_XOR(TUNA_MEMORY_DEVICE),
    TUNA_A2AV_ROW_MULTIPAIR(TUNA_MEMORY_DEVICE),
    TUNA_A2AV_ROW_MULTIPAIR_WAITANY,
    TUNA_A2AV_ROW_MULTIPAIR_TESTANY,
    TUNA_A2AV_ROW_BRUCK,
    TUNA_A2AV_ROW_PADDED_BRUCK,
    {.desc = {.info = {"twophase-bruck", "logarithmic: radix-2 Bruck without padding, each "
                                         "round exchanges the block sizes, then exactly those "
                                         "bytes",
                       0, {{0}}},
              .family = "bruck", .cost = tuna_a2av_cost_twophase_bruck,
              .inflight = tuna_a2av_inflight_one_peer},
     .step = tuna_a2av_twophase_bruck_step},
    TUNA_A2AV_ROW_TUNA,
    TUNA_A2AV_ROW_COALESCED,
    TUNA_A2AV_ROW_STAGGERED,
    /* agrees itself when the front end did not (auto.c) */
    {.desc = TUNA_AUTO_DESC("chooses algorithm and parameters from sizes agreed by all ranks: "
                            "a TUNA_TUNING entry, else the cost model, then learning "
                            "(docs/tuning.md)"),
     .run = tuna_a2av_auto},
};

const tuna_registry tuna_a2av_registry = TUNA_REGISTRY_OF(TUNA_ALLTOALLV, tuna_a2av_table, NULL);
