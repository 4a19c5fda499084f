/*
 * The registry of a collective: one row per algorithm, the single source of truth about it.
 *
 * A family (src/alltoallv/, src/allgather/, src/allreduce/) keeps its rows in its table.c.
 * Each row starts with the tuna_algorithm below (everything about the algorithm except how
 * to run it), followed by the family's run function. Everything else iterates the rows:
 * the option parser and tuna_algorithm_get() (src/core/options.c), tuna-bench --list, the
 * selector (src/select/, which receives the registry through this interface and never reads
 * a family's table), the planner and the tests. docs/contributing.md: adding an algorithm.
 *
 * Parameters are read by name (tuna_param_get), never by position: a row lists them in the
 * order of option strings and tuna_options.value, and reordering them changes nothing else.
 */
#ifndef TUNA_REGISTRY_H
#define TUNA_REGISTRY_H

#include "tuna.h"

#include <stdbool.h>
#include <stddef.h>

struct tuna_profile;
struct tuna_select_input;
struct tuna_candidates;

/* A chosen configuration of a registry's row (auto's, a plan's, a table entry's). */
typedef struct tuna_choice {
    int algorithm;                 /* table index */
    long param[TUNA_MAX_PARAMS];   /* resolved values */
    double predicted;              /* model time, seconds (vendor: of the algorithm modelling
                                      it; 0 for a table entry naming an unmodelled vendor) */
    bool from_table;               /* true: a TUNA_TUNING entry decided */
    bool windowed;                 /* the window replaced a cheaper-priced candidate with more
                                      requests in flight (TUNA_WINDOW_REQUESTS) */
} tuna_choice;

/* What a row is: an algorithm of tuna's, the MPI library's own call, or auto's choice. */
typedef enum tuna_row_kind {
    TUNA_ROW_ALGORITHM,
    TUNA_ROW_VENDOR,
    TUNA_ROW_AUTO,
} tuna_row_kind;

/* What an algorithm needs from a call beyond its arguments. */
enum {
    /* the globally agreed size statistics (max block & co): the agreement allreduce runs on
     * every call of it (src/alltoallv/front.c), and auto charges it where it is not agreed */
    TUNA_NEEDS_GLOBAL_STATS = 1u << 0,
    /* equal nodes (node structure): otherwise it falls back to a flat algorithm */
    TUNA_NEEDS_NODES = 1u << 1,
    /* a polling loop (MPI_Testany): under SimGrid SMPI every poll is a simulator call, so the
     * planner does not time it there (src/plan/plan.c) */
    TUNA_NEEDS_POLLING = 1u << 2,
};

/*
 * Predicted seconds of the row's algorithm with resolved parameters `param` (read by name
 * through `info`), under profile m, for the statistics `in`; negative when the algorithm
 * is no candidate for them (an allreduce ring with a non-commutative op).
 */
typedef double tuna_cost_model(const struct tuna_profile *m, const struct tuna_select_input *in,
                               const tuna_algorithm_info *info, const long *param);
typedef tuna_cost_model *tuna_cost_fn; /* a row's model (tuna_cost_model declares them) */
/*
 * auto's candidate parameter values for the statistics `in`: each set of values goes to
 * tuna_candidate() (src/select/tuna_select.h), in the order in which ties are broken
 * (the first of equal cost wins).
 */
typedef void tuna_candidate_grid(const struct tuna_select_input *in,
                                 const tuna_algorithm_info *info, struct tuna_candidates *out);
typedef tuna_candidate_grid *tuna_grid_fn; /* a row's grid (tuna_candidate_grid declares them) */
/*
 * Requests (receives and sends) the row's algorithm has pending at once on one rank at most,
 * for the layout of `in` (P, Q, N) and resolved parameters `param`: what auto's window
 * bounds (src/select/choose.c; docs/results/learning.md, "Without learning: the window and the
 * reuse
 * price"). An upper bound: empty blocks, which some algorithms skip, are not subtracted.
 */
typedef long tuna_inflight_bound(const struct tuna_select_input *in,
                                 const tuna_algorithm_info *info, const long *param);
typedef tuna_inflight_bound *tuna_inflight_fn; /* a row's (tuna_inflight_bound declares them) */

/* Everything about one algorithm except its run function (the family's row adds that). */
typedef struct tuna_algorithm {
    tuna_algorithm_info info;  /* name, description, parameters: public (tuna_algorithm_get) */
    tuna_row_kind kind;
    unsigned needs;            /* TUNA_NEEDS_* */
    const char *family;        /* group of related algorithms, for tests and docs: "linear",
                                  "bruck", "tuna", "hierarchical", "ring", "recmul", ... */
    tuna_cost_fn cost;         /* the cost model; NULL: not modelled (vendor, auto) */
    tuna_grid_fn grid;         /* auto's candidates; NULL: the row alone (no parameters) */
    tuna_inflight_fn inflight; /* alltoallv: requests in flight per rank; NULL: unbounded
                                  (vendor and auto: the selector asks vendor's model row) */
    /* alltoallv rows, non-zero: at P = 2 the algorithm is the own block's copy and one
     * MPI_Sendrecv with the peer under this tag, which tuna_alltoallv runs straight from
     * plain arguments (src/alltoallv/front.c, run_two_rank_exchange), without tuna's
     * per-call set-up; auto's model charges no call_overhead there (src/select/choose.c). */
    int pair_tag;
    /* The memory kinds the row serves besides host memory (TUNA_MEMORY_*, src/core/memkind.h);
     * 0: host memory only. TUNA_MEMORY_DEVICE: the rows of alltoallv, allgather and allreduce
     * that post only byte regions, copies and reductions through their transport (blocking,
     * nonblocking and persistent calls, contiguous types; alltoallv not in place; allreduce
     * with MPI's predefined ops: src/core/memory_route.c).
     * A call whose buffers the asked row does not serve goes to the MPI library's own call
     * (docs/gpu.md). */
    unsigned memory;
} tuna_algorithm;

/*
 * A collective's rows as the selector and the generic code see them: `n` rows of `stride`
 * bytes at `rows`, each starting with its tuna_algorithm (C11 6.7.2.1: a pointer to a
 * struct is a pointer to its first member).
 */
typedef struct tuna_registry {
    tuna_collective coll;
    const void *rows;
    size_t stride;
    int n;
    /*
     * Optional: whether the MPI library's own call runs the same exchange as auto's model
     * choice `best` (predicted `best_time`) for these statistics, with less work around it:
     * then auto hands the call over to the vendor row. NULL: never.
     */
    bool (*library_runs)(const struct tuna_profile *m, const struct tuna_select_input *in,
                         double best_time);
} tuna_registry;

/* The registry of every row of the array `table` (library_runs: as above, NULL: never). */
#define TUNA_REGISTRY_OF(collective, table, library_runs_)                                      \
    {                                                                                            \
        .coll = (collective), .rows = (table), .stride = sizeof(table)[0],                       \
        .n = (int)(sizeof(table) / sizeof(table)[0]), .library_runs = (library_runs_)            \
    }
/* The two rows every collective has (a family's row: {.desc = ...}). vendor: the MPI
 * library's own `call` (a string literal, "MPI_Allgather"), passed straight through; auto:
 * its choice, as `description` says. */
#define TUNA_VENDOR_DESC(call)                                                                   \
    {                                                                                            \
        .info = {"vendor", "the MPI library's own " call " (P" call "), passed straight through", \
                 0, {{0}}},                                                                      \
        .kind = TUNA_ROW_VENDOR, .family = "vendor"                                              \
    }
#define TUNA_AUTO_DESC(description)                                                              \
    {.info = {"auto", description, 0, {{0}}}, .kind = TUNA_ROW_AUTO, .family = "auto"}

static inline const tuna_algorithm *tuna_registry_row(const tuna_registry *r, int i)
{
    return (const tuna_algorithm *)(const void *)((const char *)r->rows + (size_t)i * r->stride);
}

/* The registry of a collective (NULL for an unknown one); src/collectives.c. */
const tuna_registry *tuna_registry_of(tuna_collective coll);
/* Index of the first row of `kind`, or -1. */
int tuna_registry_find_kind(const tuna_registry *r, tuna_row_kind kind);

/* Resolve a row parameter against the communicator size: P / sqrtP, then clamp. */
long tuna_param_resolve(const tuna_param_info *p, long v, int P);
/* All of a row's parameters: out[i] = the resolved value[i]; the rest of out zeroed. */
void tuna_params_resolve(const tuna_algorithm_info *info, const long *value, int P,
                         long out[TUNA_MAX_PARAMS]);

/*
 * Position of parameter `name` in the row. A name the row does not declare is a bug in the
 * registry or the algorithm that reads it (no input reaches it): the process aborts with a
 * message naming both, the first time any test runs the algorithm.
 */
int tuna_param_index(const tuna_algorithm_info *info, const char *name);
/* The value of parameter `name` in `param` (a row's values, in the row's order). */
static inline long tuna_param_get(const tuna_algorithm_info *info, const long *param,
                                  const char *name)
{
    return param[tuna_param_index(info, name)];
}
static inline void tuna_param_set(const tuna_algorithm_info *info, long *param,
                                  const char *name, long v)
{
    param[tuna_param_index(info, name)] = v;
}

#endif /* TUNA_REGISTRY_H */
