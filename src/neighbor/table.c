/*
 * The neighborhood all-to-all registry (src/core/tuna_registry.h): the library's call, the
 * linear exchange it runs, the node-aware aggregation, TuNA's rounds, auto.
 * docs/algorithms-neighbor.md.
 */
#include "neighbor.h"

#include <limits.h>

const tuna_nbr_algorithm tuna_nbr_table[] = {
    {.desc = TUNA_VENDOR_DESC("MPI_Neighbor_alltoallv")},
    {.desc = {.info = {"linear", "one message per neighbor edge, every receive posted before "
                                 "the sends (what Open MPI and MPICH run)",
                       0, {{0}}},
              .family = "linear"},
     .step = tuna_nbr_linear_step},
    {.desc = {.info = {"node-aware", "locality-aware: messages between two nodes gathered on "
                                     "a leader of each, one message per node pair, scattered "
                                     "on arrival (Bienz, Gropp and Olson)",
                       2,
                       {{"leaders", 1, TUNA_PARAM_P, 4,
                         "ranks per node that carry its node pairs, in [1, P], default 4; "
                         "clamps to the node's size"},
                        {"max", 0, INT_MAX, 2048,
                         "edges of at most this many bytes are gathered, larger ones go "
                         "directly, in [0, INT_MAX], default 2048"}}},
              .family = "hierarchical"},
     .step = tuna_nbr_node_aware_step,
     .pattern = true},
    {.desc = {.info = {"tuna", "logarithmic: a rank's edges to each peer packed into one block, "
                               "the blocks moved in TuNA's radix-r rounds; a plan records the "
                               "rounds' sizes at init and sends no metadata at its starts",
                       1,
                       {{"radix", 2, TUNA_PARAM_P, 4,
                         "digit base r, in [2, P], default 4; larger values clamp to P "
                         "(r = P: one round, the packed blocks sent directly)"}}},
              .family = "tuna"},
     .step = tuna_nbr_tuna_step,
     .pattern = true},
    {.desc = TUNA_AUTO_DESC("the library's call for blocking and nonblocking calls; a "
                            "persistent one (tuna_neighbor_alltoallv_init) chooses node-aware, "
                            "tuna or the library's call by a LogGP estimate over the agreed "
                            "pattern")},
};

const tuna_registry tuna_nbr_registry =
    TUNA_REGISTRY_OF(TUNA_NEIGHBOR_ALLTOALLV, tuna_nbr_table, NULL);
