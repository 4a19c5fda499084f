/*
 * The selector (`auto`), a service the collective families call: the machine profile, the
 * model's building blocks (phases, node crossings, the network term, recursive
 * multiplying), tuning tables, and the choice made from values all ranks agree on. It knows
 * no algorithm: a family hands it its registry (src/core/tuna_registry.h), whose rows carry
 * their cost models and candidate grids (src/<collective>/model.c). Formulas: docs/tuning.md.
 *
 * Tools (tuna-model, tuna-calibrate) include this header and tuna.h, nothing else internal.
 */
#ifndef TUNA_SELECT_H
#define TUNA_SELECT_H

#include "tuna_internal.h"

/* Largest network the network term models (its link loads live on the stack): a torus of
 * up to 6 dimensions or a dragonfly, of at most TUNA_NET_MAX_NODES nodes and
 * TUNA_NET_MAX_LINKS directed links. */
#define TUNA_TORUS_MAX_DIMS 6
#define TUNA_NET_MAX_SHAPE 7 /* a torus's dimensions, or a dragonfly's 7 numbers */
#define TUNA_NET_MAX_NODES 1024
#define TUNA_NET_MAX_LINKS (2 * TUNA_TORUS_MAX_DIMS * TUNA_NET_MAX_NODES)

typedef enum tuna_net_topology {
    TUNA_NET_NONE,      /* the NICs are the only inter-node limit (full bisection) */
    TUNA_NET_TORUS,     /* net_dims[0] x ... nodes, first dimension fastest */
    TUNA_NET_DRAGONFLY, /* net_dims = groups, links between two groups, chassis per group,
                           links between two chassis, routers per chassis, links between two
                           routers, nodes per router (SimGrid's DRAGONFLY cluster) */
} tuna_net_topology;

/* LogGP-style parameters of one level of the machine (seconds, bytes per second). */
typedef struct tuna_level_profile {
    double latency;    /* L: one-way latency of a small message */
    double overhead;   /* o: CPU time to post and complete one message (send + receive side) */
    double gap;        /* g: minimum time between two messages injected by one rank */
    double bandwidth;  /* 1/G: bytes per second of one rank's stream (inter: of one NIC) */
} tuna_level_profile;

typedef struct tuna_profile {
    char name[64];
    tuna_level_profile intra;   /* between ranks of one node */
    tuna_level_profile inter;   /* between nodes */
    int nics_per_node;          /* inter-node streams of a node share nics_per_node NICs */
    double copy_bandwidth;      /* local memcpy bytes per second (packing, padding) */
    double datatype_overhead;   /* seconds to create, commit and free one derived datatype */
    double datatype_block;      /* seconds per block described by a derived datatype */
    double eager_limit;         /* messages of at most this many bytes are sent eagerly (0:
                                   every message rendezvous, the conservative form) */
    double call_overhead;       /* seconds tuna's own call path adds to an exchange it runs
                                   (checks, normalisation, requests) where vendor's call is
                                   PMPI_Alltoallv itself: tuna's algorithms must beat vendor's
                                   model by more. Built-in 0.1 us (docs/results/local.md "Fixed
                                   cost per call"), 0 under SMPI, which does not charge CPU
                                   time; profile files: 0 unless given */
    double vendor_call_overhead; /* seconds the MPI library's own MPI_Alltoallv adds to the
                                   exchange of the algorithm that models it (its selection,
                                   checks): built-in per library (vendor_model.c), profile
                                   files 0 unless given */
    bool has_vendor_alltoallv;  /* the file names the algorithm that models vendor */
    tuna_options vendor_alltoallv; /* that algorithm ("vendor_alltoallv"; never vendor/auto) */
    /* "agreement": the MPI library's small MPI_Allreduce (tuna's statistics agreement) takes
     * per_round * ceil(log2 P) + per_rank * (P - 1) seconds; absent: modelled as recursive
     * doubling on the levels above. */
    bool has_agreement;
    double agreement_per_round, agreement_per_rank;
    /* "network": a torus routed dimension by dimension or a dragonfly routed minimally as
     * SimGrid does (model_network.c), each direction of a link net_link_bandwidth bytes/s
     * (times its link count in a dragonfly); the job's nodes are its first N. */
    tuna_net_topology net_topology;
    int net_ndims; /* entries of net_dims in use (0: no network) */
    int net_dims[TUNA_NET_MAX_SHAPE];
    double net_link_bandwidth;
} tuna_profile;

/* The built-in profile (docs/tuning.md lists its values and where they come from). */
void tuna_profile_builtin(tuna_profile *p);
/*
 * Load a profile from a JSON file (format in docs/tuning.md). Missing optional
 * keys take the built-in values. Errors (unreadable file, JSON syntax, unknown
 * key, missing or non-positive value) return MPI_ERR_ARG with a message naming
 * the file and the problem; *p is written only on success.
 */
int tuna_profile_load(const char *path, tuna_profile *p);

/* MPI libraries whose default MPI_Alltoallv algorithm tuna knows (docs/tuning.md). */
typedef enum tuna_mpi_library {
    TUNA_MPILIB_UNKNOWN,
    TUNA_MPILIB_OPENMPI,
    TUNA_MPILIB_MPICH,
    TUNA_MPILIB_SMPI,
} tuna_mpi_library;

/* The library named by an MPI_Get_library_version string (UNKNOWN for anything else). */
tuna_mpi_library tuna_mpi_library_detect(const char *version);
const char *tuna_mpi_library_name(tuna_mpi_library lib);

/* How the built-in guess of a library's MPI_Alltoallv algorithm depends on P. */
enum { TUNA_VENDOR_GUESS_NONE, TUNA_VENDOR_GUESS_FIXED, TUNA_VENDOR_GUESS_BY_P };

/*
 * The tuna algorithm that models library `lib`'s default MPI_Alltoallv at P ranks, written
 * to *opt. Returns TUNA_VENDOR_GUESS_NONE (unknown library, *opt untouched), _FIXED (the
 * same for every P) or _BY_P (the library decides on the communicator size).
 */
int tuna_vendor_alltoallv_guess(tuna_mpi_library lib, int P, tuna_options *opt);
/* The library's own per-call cost above the exchange of the algorithm modelling it, as
 * measured with tuna-callcost (docs/tuning.md); 0 where it is not above tuna's own. */
double tuna_vendor_call_overhead_guess(tuna_mpi_library lib);

/* Where the process-wide model of vendor comes from (tuna_select_vendor_model). */
enum { TUNA_VENDOR_MODEL_NONE, TUNA_VENDOR_MODEL_PROFILE, TUNA_VENDOR_MODEL_BUILTIN };

/*
 * The algorithm modelling `vendor` at P ranks: the profile's "vendor_alltoallv", else the
 * built-in guess for the MPI library this process runs on. Returns one of
 * TUNA_VENDOR_MODEL_* (NONE: vendor is not a candidate of `auto`).
 */
int tuna_select_vendor_model(int P, tuna_options *opt);

/* The MPI library this process runs on (MPI_Get_library_version), for logs and tools. */
tuna_mpi_library tuna_select_library(void);

/* Everything the choice depends on; identical on every rank of the communicator. */
typedef struct tuna_select_input {
    int P;
    int Q;                  /* ranks per node; 0 if the nodes differ in size */
    int N;                  /* nodes */
    double max_block;       /* global maximum block, bytes */
    double mean_block;      /* global mean block (all P^2 blocks), bytes */
    double total_max;       /* global maximum of the bytes one rank sends */
    double zero_fraction;   /* global fraction of empty blocks */
    bool agree_pending;     /* the call's statistics are not agreed yet (TUNA_ARGCHECK=local,
                               earlier agreed values above): an algorithm that needs them
                               pays one more allreduce */
    double bytes;           /* allgather: one rank's block; allreduce: the vector (alltoallv: 0) */
    bool commute;           /* allreduce: the op commutes */
    double message_cost;    /* learning: the communicator's measured seconds per message pair
                               (src/select/learn.c); 0: none. With the built-in profile the
                               model charges at least this per message */
} tuna_select_input;

/*
 * The selector's input for a call on ctx's communicator, built only here (src/select/input.c)
 * so that every caller (auto, plans; blocking or not) describes a call alike: the layout
 * (P, Q, N) from ctx and the call's sizes. alltoall, allgather: every block is `bytes` bytes
 * on every rank; allreduce: the vector is, and `commute` says whether its op commutes (the
 * others pass true). alltoallv: use tuna_select_input_a2av.
 */
tuna_select_input tuna_select_input_of(const tuna_ctx *ctx, tuna_collective coll, double bytes,
                                       bool commute);
/* alltoallv: the agreed statistics (bytes 0), agree_pending when they are a former call's. */
tuna_select_input tuna_select_input_a2av(const tuna_ctx *ctx, double max_block,
                                         double mean_block, double total_max,
                                         double zero_fraction, bool agree_pending);

/* Size and sparsity buckets: the keys of tuning tables and of TUNA_VERBOSE's log, defined by
 * python/tuna_tools/data/selection.json (selection_tables.c). */
int tuna_select_size_bucket(double max_block);       /* ceil(log2 max_block), 0 if <= 1 */
int tuna_select_sparsity_bucket(double zero_fraction); /* floor(4 z), clamped to [0, 3] */
int tuna_select_size_bucket_count(void);              /* buckets 0 .. count - 1 */

/* The algorithm (option string) of the first selection.json vendor rule of `library`
 * (tuna_mpi_library_name) that holds at P, or NULL; *by_P: the library has several rules. */
const char *tuna_vendor_alltoallv_rule(const char *library, int P, bool *by_P);

/*
 * Predicted time (seconds) of row `alg` of registry `reg` with resolved parameters `param`
 * (the row's cost model); negative for rows the model does not cover (vendor, auto) and for
 * an index out of range.
 */
double tuna_model_cost(const tuna_registry *reg, const tuna_profile *m,
                       const tuna_select_input *in, int alg, const long *param);

/* Where the ranks are, as the models see it: P ranks placed consecutively on N nodes of Q
 * (Q = ceil(P / N) when the nodes differ; Qeq is Q for equal nodes, else 0: no network term). */
typedef struct tuna_model_layout {
    int P, Q, Qeq, N;
} tuna_model_layout;
tuna_model_layout tuna_model_layout_of(const tuna_select_input *in);

/* Shared model terms (docs/tuning.md). The cost of one phase in which every rank posts m
 * messages of `bytes` bytes in total (the busiest rank; `node_bytes` a rank on average, for
 * the node-level limits: NICs and network) to the ranks at distances d0, d0 + step, ..., d1,
 * a fraction phi of them off-node; on a network the node's off-node bytes (node_bytes * phi * Q)
 * times tuna_model_net_load() cross the busiest link at the profile's link bandwidth. */
double tuna_model_phase(const tuna_profile *m, const tuna_model_layout *l, double msgs,
                        double bytes, double node_bytes, double phi, long d0, long d1,
                        long step);
/* The same when `late` of the m receives are completed only after all the others (requests
 * completed in chunks, the engine's wait): on a bound all off-node messages share, those end
 * together, and the late receives' overheads follow (model_phase.c). */
double tuna_model_phase_late(const tuna_profile *m, const tuna_model_layout *l, double msgs,
                             double late, double bytes, double node_bytes, double phi,
                             long d0, long d1, long step);
/* A phase in which every rank sends as much (bytes = node_bytes: allgather, allreduce). */
double tuna_model_phase_even(const tuna_profile *m, const tuna_model_layout *l, double msgs,
                             double bytes, double phi, long d0, long d1, long step);
/* The same for a phase whose receives are posted only after its sends (TuNA's rounds: the
 * data sends go before the metadata has arrived), so no message overlaps as an eager one. */
double tuna_model_phase_posted_late(const tuna_profile *m, const tuna_model_layout *l,
                                    double msgs, double bytes, double node_bytes, double phi,
                                    long d0, long d1, long step);
/* The fraction of ranks whose peer at distance d is on another node (consecutive placement). */
double tuna_model_cross(const tuna_model_layout *l, long d);
/*
 * The busiest directed link's share of a node's off-node bytes in a phase where every rank
 * sends equally to the ranks at distances d0, d0 + step, ..., <= d1 (mod P), P = N * Q ranks
 * placed consecutively on the profile's network (model_network.c), in units of the link
 * bandwidth. 0 without a network, with unequal nodes, more nodes than the network has, or
 * nothing off-node.
 */
double tuna_model_net_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                           long step);

/*
 * Recursive multiplying among P ranks folded into Qk = k^m groups (tuna_fold's shape): the
 * allgather and allreduce recmul families, and the MPI library's small allreduce (k = 2) that
 * agrees on tuna's statistics. The fold's shape, a leader's partners at distance d groups, and
 * the whole exchange of n bytes (gather: the blocks gathered so far travel, else the vector
 * and a reduction).
 */
typedef struct tuna_model_fold {
    long k, Qk;            /* k clamped to [2, P]; Qk = k^m groups */
    int m;
    double per_group;      /* P / Qk ranks per group on average */
} tuna_model_fold;
tuna_model_fold tuna_model_fold_of(long P, long k);
long tuna_model_partners_step(const tuna_model_fold *f, long d);
double tuna_model_partners_cross(const tuna_model_layout *l, const tuna_model_fold *f, long d);
double tuna_model_recmul(const tuna_profile *m, const tuna_model_layout *l, long k, double n,
                         bool gather);
/* The same for in->bytes over in's layout; 0 when nothing moves (P = 1 or no bytes). */
double tuna_model_recmul_of(const tuna_profile *m, const tuna_select_input *in, long k,
                            bool gather);

/* ---- candidates: what a row's grid function (tuna_grid_fn) hands the selector ---- */

/* The selector's collector of one row's candidates (opaque to the families). */
typedef struct tuna_candidates tuna_candidates;
/* One candidate: the row's resolved parameter values, in the row's order. */
void tuna_candidate(tuna_candidates *c, const long *param);
/* One candidate per value v[0..n) of parameter `name` (the row's other parameters 0: their
 * defaults). */
void tuna_candidates_of(tuna_candidates *c, const tuna_algorithm_info *info, const char *name,
                        const long *v, int n);
/* Grids over [2, U] for radices (every value up to 8, then steps of about 25%, plus sqrt U
 * and U) and over [1, U] in powers of two (plus U); at most TUNA_GRID_MAX values. */
#define TUNA_GRID_MAX 128
int tuna_grid_radix(long U, long *v);
int tuna_grid_pow2(long U, long *v);
/* The row's one parameter over all its values (a small fixed range, e.g. a 0/1 switch). */
void tuna_grid_every_value(const tuna_select_input *in, const tuna_algorithm_info *info,
                           tuna_candidates *out);

/*
 * auto's window (docs/results/learning.md, "Without learning: the window and the reuse price"):
 * where
 * the model's cheapest alltoallv candidate keeps more than TUNA_WINDOW_REQUESTS requests
 * pending per rank and one within that many is priced at most TUNA_WINDOW_TOLERANCE above
 * it, the model chooses the best such one. 128 requests are 64 peers each way: twice MPICH's
 * default throttle (MPIR_CVAR_ALLTOALL_THROTTLE = 32 pairs), and every linear exchange up to
 * P = 65, so no choice at the P = 64 of the measured results changes.
 */
#define TUNA_WINDOW_REQUESTS 128
#define TUNA_WINDOW_TOLERANCE 0.03

/* Requests row `alg` keeps in flight per rank at most with resolved parameters `param` (its
 * tuna_inflight_fn; vendor: that of the row modelling it); LONG_MAX when unknown. */
long tuna_select_inflight(const tuna_registry *reg, const tuna_select_input *in, int alg,
                          const long *param);

/* auto's statistics agreement, one allreduce of TUNA_AGREE_N numbers: the profile's measured
 * "agreement", else recursive doubling on the levels (what MPI libraries run for small
 * allreduces). What a row that needs the statistics pays where they are not agreed. */
double tuna_select_agreement_time(const tuna_select_input *in);

/* One priced candidate: row, resolved parameters, model time (with what the choice adds:
 * the agreement where pending, tuna's call overhead) and requests in flight per rank. */
typedef void (*tuna_candidate_visit_fn)(void *arg, int alg, const long *param, double predicted,
                                        long inflight);
/* Every candidate of auto's alltoallv model choice for `in`, in tie-breaking order (vendor,
 * when something models it, just before its model row; each row's grid in order). */
void tuna_select_each_alltoallv_candidate(const tuna_registry *reg, const tuna_select_input *in,
                                          tuna_candidate_visit_fn visit, void *arg);

/*
 * The configuration `auto` runs for these inputs: the first tuning table entry whose ranges
 * hold (P, Q, size bucket, sparsity bucket) if TUNA_TUNING has one, otherwise the
 * candidate with the smallest model time (ties: vendor first — the library runs it
 * without tuna's per-call work —, then lower table index, then lower parameters), within the
 * window where one is priced close to it (TUNA_WINDOW_REQUESTS). vendor is a candidate when
 * tuna_select_vendor_model() has a model for it. A pure function of the inputs, the profile
 * (incl. the MPI library's identity) and the table.
 */
int tuna_select_alltoallv(const tuna_registry *reg, const tuna_select_input *in,
                          tuna_choice *out);

/* auto's choice `c` into this call's statistics record (what ran, as the model chose it). */
void tuna_select_record(const tuna_choice *c);
/* The model's choice for allgather or allreduce (in->bytes, in->commute): every modelled
 * row over its grid; the vendor row where the registry says the MPI library runs the
 * choice itself. Same determinism as tuna_select_alltoallv(). */
int tuna_select_collective(const tuna_registry *reg, const tuna_select_input *in,
                           tuna_choice *out);
/* The same restricted to the rows that declare `memory` (tuna_algorithm.memory; device
 * buffers staged, docs/gpu.md): the model's cheapest of them (no tuning table, no hand-over
 * to the library), `fallback` (a row without parameters) where none is priced. Not
 * remembered: the host choice's memo stays the host's. */
int tuna_select_collective_memory(const tuna_registry *reg, const tuna_select_input *in,
                                  unsigned memory, int fallback, tuna_choice *out);

/* The process-wide profile and tuning table (TUNA_PROFILE, TUNA_TUNING), loaded once. */
int tuna_select_profile(const tuna_profile **out);
/* The profile the model prices in's calls with: the process's, or with in->message_cost the
 * built-in one's per-message overheads raised to it (in buf). */
const tuna_profile *tuna_select_profile_for(const tuna_select_input *in, tuna_profile *buf);

/* The planner's and learning's candidates: vendor first (predicted 0 when unmodelled), then
 * every other non-auto row with its model-best parameters (alltoallv: its best within
 * TUNA_WINDOW_REQUESTS requests in flight where it has such), by predicted time; at most max,
 * their number in *count. */
int tuna_select_candidates(const tuna_registry *reg, const tuna_select_input *in,
                           tuna_choice *out, int max, int *count);

/* Tuning tables (docs/tuning.md): the first entry whose key ranges hold the inputs decides. */
typedef struct tuna_tuning_range {
    long lo, hi; /* inclusive */
} tuna_tuning_range;

typedef struct tuna_tuning_entry {
    tuna_tuning_range P, Q, size_bucket, sparsity_bucket;
    tuna_options opt;
} tuna_tuning_entry;

typedef struct tuna_tuning {
    tuna_tuning_entry *entries; /* one collective's, in file order */
    int n;
    unsigned long long digest;  /* of the entries: part of the checksum the ranks agree on */
} tuna_tuning;

/* The first key of JSON object obj not in the NULL-terminated list `known`, or NULL: the
 * profile and tuning-table readers reject such keys (a typo is an error, not a default). */
struct json_t;
const char *tuna_select_unknown_key(struct json_t *obj, const char *const *known);

/* Load the entries of `coll` from a table (every entry is validated; errors as
 * tuna_profile_load()). Version 1 files hold alltoallv entries only. */
int tuna_tuning_load(const char *path, tuna_collective coll, tuna_tuning *t);
void tuna_tuning_free(tuna_tuning *t);
const tuna_tuning_entry *tuna_tuning_find(const tuna_tuning *t, int P, int Q, int size_bucket,
                                          int sparsity_bucket);

/*
 * TUNA_AUTO_PERIOD = K[:M] (default TUNA_AUTO_PERIOD_DEFAULT:TUNA_AUTO_PERIOD_MAX_DEFAULT): auto
 * agrees on the size statistics on its first call on a communicator, then after K calls;
 * each agreement that confirms the previous choice doubles the period, up to M (M = K when
 * only K is given: a fixed period); a changed choice resets it to K (src/alltoallv/auto.c).
 * Part of the checksum below.
 */
#define TUNA_AUTO_PERIOD_DEFAULT 32
#define TUNA_AUTO_PERIOD_MAX_DEFAULT 256
void tuna_select_auto_period(int *first, int *longest);

/*
 * Once per communicator: agree that every rank loaded the same profile,
 * tuning table and TUNA_AUTO_PERIOD (a checksum, one allreduce on the private communicator, then
 * cached on it). Returns an error on every rank if any rank failed to load
 * them or if they differ, so no rank runs an algorithm its peers do not.
 */
int tuna_select_agree(tuna_ctx *ctx);
/* The agreement's values, reduced with MPI_MAX (a context's set-up carries them in its own
 * allreduce, so that auto's first call needs none): this rank's, and the outcome read from
 * the reduced ones (ctx->select_status). */
#define TUNA_SELECT_AGREE_N 3
void tuna_select_agree_values(long long v[TUNA_SELECT_AGREE_N]);
void tuna_select_agree_judge(tuna_ctx *ctx, const long long v[TUNA_SELECT_AGREE_N]);

/* ------------------------------------------------------------ wisdom (wisdom.c) */

/*
 * What makes a measured choice valid elsewhere: the MPI library, P, ranks per node, nodes,
 * the collective and a signature. The planner's signature is the pattern's agreed size
 * statistics (all >= 0); a class auto learned has TUNA_WISDOM_LEARNED first, then its class
 * (learn.c). Every field is agreed across the communicator.
 */
#define TUNA_WISDOM_SIG 6
#define TUNA_WISDOM_LEARNED (-1)
typedef struct tuna_wisdom_key {
    char library[96];   /* first line of MPI_Get_library_version */
    int P, Q, N;
    tuna_collective coll;
    long long sig[TUNA_WISDOM_SIG];
} tuna_wisdom_key;

void tuna_wisdom_key_init(tuna_wisdom_key *k, tuna_collective coll, const tuna_ctx *ctx,
                          const long long *sig, int nsig);
bool tuna_wisdom_find(const tuna_wisdom_key *k, tuna_choice *c, double *seconds);
void tuna_wisdom_add(const tuna_wisdom_key *k, const tuna_choice *c, double seconds);
/* Entries added or imported so far in this process (the preload saves wisdom when it grew). */
long tuna_wisdom_additions(void);

/* ------------------------------------------------------------ learning (learn.c) */

/*
 * auto that learns (docs/tuning.md, "Learning"). TUNA_AUTO_LEARN=0 turns it off (default 1);
 * TUNA_AUTO_LEARN_BUDGET=CALLS[:SECONDS] caps one class's exploring calls and their agreed
 * seconds (default TUNA_LEARN_CALLS_DEFAULT:TUNA_LEARN_SECONDS_DEFAULT). Both are agreed at
 * a context's creation (src/core/context.c) and checked at load (choose.c).
 */
#define TUNA_LEARN_MAX 6             /* candidates of a class: vendor + the model's best rows */
#define TUNA_LEARN_FIELDS (TUNA_LEARN_MAX + 1) /* samples + the drift check, in an agreement */
#define TUNA_LEARN_KEY 3             /* a class: three buckets of the agreed statistics */
#define TUNA_LEARN_MODEL_FACTOR 4.0  /* rows the model prices above this times its best: untried */
#define TUNA_LEARN_ROUNDS 3          /* samples per surviving candidate */
#define TUNA_LEARN_DROP_FIRST 4.0    /* dropped after one sample when this much slower */
#define TUNA_LEARN_DROP 1.5          /* ... after two or more */
#define TUNA_LEARN_DEFER 4.0         /* candidates with this many times the fewest messages wait
                                        for the first round, to be priced by their floor */
#define TUNA_LEARN_FLOOR_DROP 2.0    /* floor above this times the fastest: dropped untimed */
#define TUNA_LEARN_NEAR 1.25         /* phase 2 also refines rows within this of the winner */
#define TUNA_LEARN_TIE 0.05          /* the library's call wins within its samples' spread, at
                                        most this much (a tie: learn.c, settle) */
#define TUNA_LEARN_CLIMBS 3          /* phase 2 at most this often: again while a neighbour wins */
#define TUNA_LEARN_TRIED 48          /* choices a class remembers having timed (not again) */
#define TUNA_LEARN_DRIFT 2.0         /* winner this much slower than learned: a strike */
#define TUNA_LEARN_DRIFT_FLOOR 2e-6  /* ... and at least this many seconds slower */
#define TUNA_LEARN_STRIKES 3         /* strikes in a row that reopen exploration */
#define TUNA_LEARN_RELEARNS 2        /* reopenings per class at most */
#define TUNA_LEARN_CALLS_DEFAULT 40
#define TUNA_LEARN_SECONDS_DEFAULT 1.0
enum {
    TUNA_LEARN_SOURCE_MEASURED = 1, /* every candidate had its samples */
    TUNA_LEARN_SOURCE_WISDOM,       /* every rank's wisdom held the class */
    TUNA_LEARN_SOURCE_BUDGET,       /* the budget ran out first */
    TUNA_LEARN_SOURCE_ONE_LEFT,     /* the others were dropped (or there was one candidate) */
};

bool tuna_select_learn_on(void);
void tuna_select_learn_settings(int *rounds, int *calls, double *seconds);
/* TUNA_LEARN_MESSAGE_COST: seconds per message pair given instead of measured (the ranks
 * still agree on the least); < 0: measure. */
double tuna_select_learn_message_cost(void);

/* The planner's and learning's candidates: vendor first, then the rows the model prices
 * within `factor` of its best tuna row (under SimGrid SMPI not the polling rows); at most max. */
int tuna_select_candidates_within(const tuna_registry *reg, const tuna_select_input *in,
                                  double factor, tuna_choice *out, int max, int *count);

/* The messages of choice c that pay the per-message overhead one after the other on a rank,
 * by the model (its time's growth with the profile's o; 0 when unmodelled): times a measured
 * per-message cost, a floor under c's time that needs no call of c. */
double tuna_select_messages(const tuna_registry *reg, const tuna_select_input *in,
                            const tuna_choice *c);

typedef struct tuna_learn tuna_learn;
typedef struct tuna_learn_class tuna_learn_class;

/*
 * The class `key` of collective reg->coll on ctx, created on its first call (collective:
 * every rank comes here on the same call, from agreed inputs; one allreduce tells whether
 * every rank's wisdom holds it alike). *out = NULL when learning is off or P = 1: then the
 * model decides.
 */
int tuna_learn_class_of(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                        const long long key[TUNA_LEARN_KEY], tuna_learn_class **out);
bool tuna_learn_exploring(const tuna_learn_class *cl);
/* Whether the library's call (its fastest sample and its samples' relative spread) ties with
 * the fastest candidate's, and so wins (learn.c, settle). */
bool tuna_learn_library_ties(double library, double library_spread, double fastest,
                             double fastest_spread);
/* What this call runs (into c, which holds the model's choice): untimed, the fastest so far
 * (the model's choice at first) on the class's first call and after the ranks were in step
 * (tuna_learn_synced, a round's reduction); else the next candidate while exploring; the
 * winner once settled. Returns the auto_source (TUNA_AUTO_SOURCE_*). */
int tuna_learn_pick(tuna_learn_class *cl, tuna_choice *c);
/* The ranks have just been in step (an allreduce): the next pick is untimed. */
void tuna_learn_synced(tuna_learn_class *cl);
/* Candidates left in the round (alltoallv: the calls before the next agreement). */
int tuna_learn_calls_left(const tuna_learn_class *cl);
/* This rank's seconds of what the last pick gave (rc: the call's outcome; failures are no
 * sample). */
void tuna_learn_sample(tuna_learn_class *cl, double seconds, int rc);
/* alltoallv: the samples the next agreement carries (TUNA_LEARN_FIELDS values, reduced by
 * maximum) or 0 fields; the reduced values back into their class; which class they are. */
int tuna_learn_fields(tuna_ctx *ctx, long long *fields);
void tuna_learn_apply_fields(tuna_ctx *ctx, const long long *agreed);
void tuna_learn_set_pending(tuna_ctx *ctx, tuna_learn_class *cl);
/* allgather / allreduce, after every exploring call: at the round's end one allreduce of
 * its samples (every rank reaches it on the same call). */
int tuna_learn_round_end(tuna_ctx *ctx, tuna_learn_class *cl);
void tuna_learn_free(tuna_learn *l);
/* alltoall / allgather / allreduce: learning around the model's choice c (replaced by what
 * this call runs; the statistics record of it); *learning: the class whose candidate c is,
 * to be timed and handed to tuna_learn_after (which returns rc, or the round's reduction's
 * error). learning == NULL (a nonblocking call): c as the model chose it, no learning. Once
 * no learning runs for the size, the context keeps the choice for
 * tuna_learn_last_find. */
int tuna_learn_collective(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                          tuna_choice *c, tuna_learn_class **learning);
/* A blocking call (learning != NULL) of the same size (and commutativity) as the context's
 * last settled one for reg's collective: true, with its choice in *c, recorded into this
 * call's statistics, and *learning = NULL (what tuna_learn_collective would give again: a
 * settled class of these collectives never changes); else false (choose the long way). */
bool tuna_learn_last_find(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                          tuna_choice *c, tuna_learn_class **learning);
int tuna_learn_after(tuna_ctx *ctx, tuna_learn_class *cl, double seconds, int rc);

#endif /* TUNA_SELECT_H */
