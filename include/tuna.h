/*
 * tuna.h - tunable collective algorithms for MPI.
 *
 * The whole public C API of libtuna. Link with -ltuna (CMake: tuna::tuna,
 * pkg-config: tuna) on top of an MPI library.
 *
 * Conventions
 *  - Every function returns an MPI error code (MPI_SUCCESS on success). On
 *    failure, tuna_error_string() gives a message that names the cause (the
 *    bad option token, the rank and block of a negative count, ...).
 *  - tuna never invokes the communicator's error handler: errors are returned
 *    to the caller. (The drop-in preload library does invoke it, as MPI does.)
 *  - Internal traffic uses a private duplicate of the caller's communicator,
 *    created on the first call on that communicator and cached on it with an
 *    MPI attribute, so user wildcard receives never see tuna's messages.
 *  - Buffers that CUDA's driver calls device (or managed) memory go to the MPI
 *    library's own call (tuna_stats_last().fallback says why), except in a
 *    (non)blocking tuna_alltoallv with a row that stages them through pinned host
 *    memory (spreadout, scattered, linear, pairwise, xor, multipair; contiguous
 *    datatypes, not in place); every rank of a call must pass the same kind.
 *    docs/gpu.md.
 */
#ifndef TUNA_H
#define TUNA_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The library is compiled with hidden visibility: what this header declares is its whole
 * exported interface, and calls between its own files bind directly (no PLT, no GOT). */
#if defined(TUNA_BUILDING) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define TUNA_VERSION_MAJOR 0
#define TUNA_VERSION_MINOR 1
#define TUNA_VERSION_PATCH 0

/* The collectives tuna implements. */
typedef enum tuna_collective {
    TUNA_ALLTOALLV = 0,
    TUNA_ALLGATHER,
    TUNA_ALLREDUCE,
    TUNA_ALLTOALL,
    TUNA_NEIGHBOR_ALLTOALLV,
    TUNA_COLLECTIVE_COUNT
} tuna_collective;

/* A collective's name ("alltoallv", as in tuna-bench --collective and the statistics; "?"
 * out of range), and the collective of a name (-1 if none). */
const char *tuna_collective_name(tuna_collective coll);
int tuna_collective_find(const char *name);

/* Maximum number of parameters an algorithm takes. */
#define TUNA_MAX_PARAMS 4

/*
 * A parsed algorithm choice: which algorithm of which collective, and the
 * values of its parameters. Fill it with tuna_options_parse(); the fields are
 * public so that tools can inspect them, but set them only through the parser.
 *
 * Parameters that were not given in the string are "unset" (bit clear in
 * `set`) and take the algorithm's documented default, which may depend on the
 * communicator (e.g. TuNA's radix defaults to ceil(sqrt(P))).
 */
typedef struct tuna_options {
    tuna_collective collective;
    int algorithm;                 /* index into the collective's table */
    unsigned set;                  /* bit i set: value[i] was given */
    long value[TUNA_MAX_PARAMS];   /* parameter values, in table order */
} tuna_options;

/*
 * Parse "ALGORITHM[:key=value[,key=value...]]" for a collective, e.g.
 * "scattered:block=16", "tuna:radix=4", "coalesced:radix=2,block=8".
 * Values are integers, or the symbolic "P" (communicator size) or "sqrtP"
 * where the parameter's table row allows it (stored as negative codes and
 * resolved per communicator). Unknown algorithms, unknown keys, repeated keys,
 * malformed or out-of-range values return MPI_ERR_ARG and a message naming the
 * token. `opt` is written only on success.
 */
int tuna_options_parse(const char *str, tuna_collective coll, tuna_options *opt);

/*
 * Write the canonical string of `opt` into buf (at most len bytes including
 * the terminating NUL). Parsing the result gives back the same options.
 * Returns MPI_ERR_ARG (and writes nothing usable) if len is too small.
 */
int tuna_options_format(const tuna_options *opt, char *buf, size_t len);

/*
 * The default options of a collective: from the environment variable
 * (TUNA_ALLTOALLV, TUNA_ALLGATHER, TUNA_ALLREDUCE) if set, else the built-in default. A bad
 * environment value is reported as by tuna_options_parse().
 */
int tuna_options_default(tuna_collective coll, tuna_options *opt);

/* Symbolic parameter values accepted by the parser where a row allows it. */
#define TUNA_PARAM_P     (-1L)  /* the communicator size */
#define TUNA_PARAM_SQRTP (-2L)  /* ceil(sqrt(communicator size)) */

/* Description of one parameter of an algorithm. */
typedef struct tuna_param_info {
    const char *name;          /* key in option strings, e.g. "radix" */
    long min;                  /* smallest allowed value */
    long max;                  /* largest allowed value; TUNA_PARAM_P: P (clamped per call) */
    long defval;               /* default (may be TUNA_PARAM_P / TUNA_PARAM_SQRTP) */
    const char *description;   /* one line, including the clamping rule */
} tuna_param_info;

/* Description of one algorithm. */
typedef struct tuna_algorithm_info {
    const char *name;          /* name in option strings, e.g. "tuna" */
    const char *description;   /* one line */
    int nparams;
    tuna_param_info params[TUNA_MAX_PARAMS];
} tuna_algorithm_info;

/* Number of algorithms of a collective, and the i-th one (NULL if out of range). */
int tuna_algorithm_count(tuna_collective coll);
const tuna_algorithm_info *tuna_algorithm_get(tuna_collective coll, int index);
/* Index of an algorithm by name, or -1. */
int tuna_algorithm_find(tuna_collective coll, const char *name);

/*
 * Non-uniform all-to-all with MPI_Alltoallv's semantics (MPI_IN_PLACE as
 * sendbuf included). opt == NULL means tuna_options_default(TUNA_ALLTOALLV).
 * Collective over comm; every rank must pass the same algorithm and
 * parameters. Intracommunicators only, except for the "vendor" algorithm,
 * which passes any communicator to PMPI_Alltoallv.
 *
 * Argument errors (negative counts, NULL buffers with data and a datatype that
 * cannot address absolutely, invalid datatypes) are returned by the rank that
 * has them, as MPI libraries do: its peers may then wait for it. With the
 * environment variable TUNA_ARGCHECK=collective (a debugging mode) every call
 * agrees on them first (one small allreduce), so every rank returns an error
 * and none hangs. "auto" agrees on size statistics on its first call on a
 * communicator and then periodically (TUNA_AUTO_PERIOD), and runs the last
 * agreed choice in between without any collective; see tuna_pattern_changed().
 */
int tuna_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   const tuna_options *opt);

/*
 * MPI_Alltoallv_c's large-count form: counts as MPI_Count, displacements as MPI_Aint (in
 * extents, as in MPI). Every algorithm runs with any counts: a block beyond INT_MAX elements
 * travels as one element of a derived type, which each rank builds for its own side alone
 * (type signatures match), so no rank needs to know another's counts. "vendor" is the
 * library's MPI_Alltoallv_c where it has one (MPI 4: MPICH 4); elsewhere (Open MPI 4.1)
 * tuna's linear exchange, Open MPI's basic alltoallv (tuna_stats_last() says so).
 */
int tuna_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     const tuna_options *opt);

/*
 * Tell "auto" that the communication pattern on comm changes from the next call
 * (a new phase of the application, another message size): its next alltoallv
 * call on comm agrees on the size statistics and chooses afresh, instead of
 * reusing the last agreed choice until its period ends. Call it on every rank of
 * comm at the same point, like a collective; it communicates only if comm has
 * not been used by tuna before (then it sets comm up, as a first call would, auto's
 * agreement included). Called right after creating comm, it is also how the library
 * linked directly (no drop-in) sets a communicator up where the MPI cannot do it from a
 * nonblocking call (Open MPI: a first tuna_i* call on a communicator tuna has not set up
 * runs the library's own call there; docs/nonblocking.md, "Set-up at creation").
 */
int tuna_pattern_changed(MPI_Comm comm);

/*
 * Allgather with MPI_Allgather's semantics (MPI_IN_PLACE as sendbuf
 * included: this rank's block is then read from its slot of recvbuf).
 * opt == NULL means tuna_options_default(TUNA_ALLGATHER), i.e. the
 * TUNA_ALLGATHER environment variable, same grammar as TUNA_ALLTOALLV.
 * Algorithms: vendor, ring, kring:k=K, recursive-doubling, recmul:k=K,
 * recmul-permuted:k=K, auto (docs/algorithms-collectives.md). Every rank must pass
 * the same algorithm and parameters and the same recvcount * type size;
 * argument errors on any rank are agreed on before data moves, so every rank
 * returns an error and none hangs. Intracommunicators only, except "vendor".
 */
int tuna_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                   const tuna_options *opt);

/*
 * Allreduce with MPI_Allreduce's semantics (MPI_IN_PLACE included), for
 * predefined and user-defined ops; non-commutative ops are combined in rank
 * order (the ring family runs recursive-doubling for them). opt == NULL means
 * tuna_options_default(TUNA_ALLREDUCE) (the TUNA_ALLREDUCE environment
 * variable). Algorithms: vendor, ring, kring:k=K, recursive-doubling,
 * recmul:k=K, recmul-permuted:k=K, auto. Errors as for tuna_allgather().
 */
int tuna_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, const tuna_options *opt);

/*
 * Uniform all-to-all with MPI_Alltoall's semantics (MPI_IN_PLACE as sendbuf included: the
 * blocks are then read from recvbuf). opt == NULL means tuna_options_default(TUNA_ALLTOALL)
 * (the TUNA_ALLTOALL environment variable). Algorithms: vendor, the linear family (spreadout,
 * scattered, linear, pairwise, xor, multipair and its windowed forms), the Bruck family,
 * TuNA and hierarchical TuNA without their size messages, auto
 * (docs/algorithms-alltoall.md). Every rank must pass the same algorithm and parameters and,
 * as MPI requires, send and receive the same bytes per block (a rank whose send and receive
 * block sizes differ gets MPI_ERR_TRUNCATE). Argument errors are returned by the rank that
 * has them (TUNA_ARGCHECK=collective: agreed, as for the other collectives); auto needs no
 * agreement on any call. Intracommunicators only, except "vendor".
 */
int tuna_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt);
/* MPI_Alltoall_c's large-count form (vendor: the library's MPI_Alltoall_c where it has one,
 * else tuna's linear exchange, as tuna_alltoallv_c). */
int tuna_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    const tuna_options *opt);

/*
 * All-to-all with a datatype per peer, MPI_Alltoallw's semantics (byte displacements,
 * MPI_IN_PLACE as sendbuf: the blocks are read from recvbuf with the receive arguments). It
 * runs the alltoallv rows: opt is an alltoallv choice (NULL: tuna_options_default
 * (TUNA_ALLTOALLV)); "vendor" is the library's MPI_Alltoallw, and so is "auto" above one rank
 * and not in place (the packing costs more than the rows gained where measured; name a row for
 * tuna's way: docs/algorithms-alltoall.md). Where every send block has one
 * type, every receive block one type, and the extent divides each nonempty block's
 * displacement, the call is that alltoallv with no copy; otherwise each rank packs its blocks
 * to bytes (MPI_Pack), the bytes travel as an alltoallv of MPI_BYTE and are unpacked in place
 * (memory: this rank's send and receive bytes). Argument errors are returned by the rank that
 * has them. Intracommunicators only, except "vendor".
 */
int tuna_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   const tuna_options *opt);

/*
 * Instrumentation. When enabled with tuna_stats_enable(1), each call records
 * a per-phase time breakdown and the peak temporary memory of the algorithm;
 * tuna_stats_last() returns the record of this process's last tuna_alltoallv,
 * tuna_allgather or tuna_allreduce call. When
 * disabled (the default) the cost is one branch per phase.
 */
typedef enum tuna_phase {
    TUNA_PHASE_PREPARE = 0,   /* argument checks, agreement, index set-up */
    TUNA_PHASE_METADATA,      /* exchange of block sizes (two-phase algorithms) */
    TUNA_PHASE_DATA,          /* data exchange (intra-node for hierarchical) */
    TUNA_PHASE_COPY,          /* local copies and replacements */
    TUNA_PHASE_REARRANGE,     /* final rearrangement / unpacking */
    TUNA_PHASE_INTER,         /* inter-node exchange (hierarchical) */
    TUNA_PHASE_COUNT
} tuna_phase;

typedef struct tuna_stats {
    double phase[TUNA_PHASE_COUNT];  /* seconds spent in each phase */
    double total;                    /* seconds for the whole call */
    size_t temp_bytes;               /* peak temporary memory of the algorithm */
    int algorithm;                   /* algorithm index that ran */
    int rounds;                      /* communication rounds performed */
    long params[TUNA_MAX_PARAMS];    /* resolved parameters of `algorithm` (auto: its choice) */
    double predicted;                /* auto: the cost model's time for its choice, seconds
                                        (0 if a tuning table chose vendor, which has no model) */
    int auto_source;                 /* 0: not auto; 1: auto chose by the model; 2: by a
                                        TUNA_TUNING table entry (docs/tuning.md); 3, 4: the
                                        same from statistics agreed on an earlier call
                                        (TUNA_ARGCHECK=local); 5, 6, 7: auto's learning
                                        (TUNA_AUTO_SOURCE_* below) */
    const char *fallback;            /* why `algorithm` is not the one asked for (coalesced
                                        and staggered run flat TuNA when the nodes hold
                                        different numbers of ranks); NULL otherwise */
} tuna_stats;

/* tuna_stats.auto_source of the calls auto's learning decides (docs/tuning.md, "Learning"):
 * a call that explores (a candidate, or the class's untimed first call), the class's learned
 * winner, a winner found in wisdom. */
#define TUNA_AUTO_SOURCE_LEARNING 5
#define TUNA_AUTO_SOURCE_LEARNED 6
#define TUNA_AUTO_SOURCE_WISDOM 7

void tuna_stats_enable(int on);
const tuna_stats *tuna_stats_last(void);
const char *tuna_phase_name(tuna_phase phase);

/*
 * Message for an error code returned by tuna. If `code` is the last error
 * this thread got from tuna, the detailed message is returned; otherwise the
 * MPI library's string for the code. Never NULL; valid until the next tuna
 * call in this thread.
 *
 * Under SimGrid SMPI, tuna needs each simulated rank's own copy of its state
 * (smpi/privatization:dlopen, smpirun's default): with smpi/privatization:no
 * or mmap, every call that needs it returns MPI_ERR_OTHER on every rank, with
 * a message naming the setting (docs/simulation.md).
 */
const char *tuna_error_string(int code);

/*
 * Plans: persistent collectives (MPI 4's MPI_Alltoallv_init and friends) with a planner.
 * A plan fixes the arguments at init (the buffers' contents may change between starts;
 * the pointers, counts, displacements, types, op and communicator may not) and does the
 * collective work once: the argument agreement, the choice of algorithm and its
 * parameters, the allocation. tuna_start() then only moves data. Init is collective over
 * comm: every rank inits its plans in the same order, with the same opt and flags. docs/plans.md.
 *
 * opt forces an algorithm as for the blocking calls (NULL: the collective's default, whose
 * usual value "auto" lets the planner choose); the planner's choice is made once, from the
 * statistics of the init arguments agreed over all ranks:
 *   TUNA_PLAN_ESTIMATE  the cost model (what auto runs), no extra communication;
 *   TUNA_PLAN_MEASURE   the model's best candidates timed on this machine with these
 *                       arguments (each time the maximum over ranks; every rank adopts the
 *                       same winner), within TUNA_PLAN_BUDGET seconds (default 1; the
 *                       candidates are always timed at least once). The user's receive buffer
 *                       is not written during init (a private one is timed), the send buffer
 *                       is read. Wisdom (tuna_wisdom_import) that matches is used instead.
 * Errors at init are agreed over comm: every rank returns one and no plan is made.
 */
typedef struct tuna_plan_s *tuna_plan;
#define TUNA_PLAN_ESTIMATE 0u
#define TUNA_PLAN_MEASURE 1u

int tuna_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan);
int tuna_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan);
int tuna_allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, const tuna_options *opt, unsigned flags,
                        tuna_plan *plan);
int tuna_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       const tuna_options *opt, unsigned flags, tuna_plan *plan);
/* The large-count plans (MPI_Alltoallv_init_c, MPI_Alltoall_init_c): as tuna_alltoallv_init and
 * tuna_alltoall_init (planner, wisdom, local starts), with the blocking _c forms' arguments and
 * limits (MPI_IN_PLACE with a non-contiguous receive type: blocks up to 2 GiB, MPI_ERR_COUNT).
 * vendor starts the library's MPI_Alltoallv_c / MPI_Alltoall_c where it has them (MPI 4);
 * elsewhere tuna's linear exchange (tuna_stats_last().fallback says so), on
 * intracommunicators only. */
int tuna_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                          unsigned flags, tuna_plan *plan);
int tuna_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, const tuna_options *opt, unsigned flags,
                         tuna_plan *plan);

/* The persistent all-to-all with a datatype per peer (MPI_Alltoallw_init), as tuna_alltoallw on
 * a plan: the arrays and types are the plan's (copied at init; the caller may free derived
 * types after it), every start sends the send buffer's contents at that start. Each rank's
 * way is fixed at init: one type per side, an alltoallv plan on the caller's buffers; else an
 * alltoallv plan of MPI_BYTE on the plan's packed buffers, the blocks packed in the start and
 * unpacked in the completion (tuna_wait, tuna_test). opt and flags as tuna_alltoallv_init's
 * (starts local but for vendor). vendor, and device memory on any rank, run the library's
 * MPI_Alltoallw in each start. Init is collective (errors agreed); intracommunicators only,
 * except "vendor". tuna_plan_get_info describes the alltoallv plan. */
int tuna_alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan);

/* Begin one exchange of the plan, and complete it. The start is local (it posts the first
 * messages, as MPI 4's MPI_Start) for plans whose algorithm has a step form (every row but
 * vendor; docs/nonblocking.md); a plan forced to vendor completes the exchange inside the
 * start. A plan must be
 * inactive to start and active to wait; starting an active plan or waiting on an inactive
 * one is MPI_ERR_REQUEST. */
int tuna_start(tuna_plan plan);
int tuna_wait(tuna_plan plan);
/* Free an inactive plan (local) and set *plan to NULL; an active one is MPI_ERR_REQUEST. */
int tuna_plan_free(tuna_plan *plan);
/* Whether the plan's exchange has completed (*flag), progressing it and every other active
 * tuna operation; after *flag = 1 the plan is inactive (as after tuna_wait). An inactive plan
 * gives *flag = 1. */
int tuna_test(tuna_plan plan, int *flag);

/*
 * Nonblocking collectives (MPI_Ialltoallv's semantics; docs/nonblocking.md). The call only
 * starts the operation: it is local (it posts messages, it never waits for a peer) and
 * returns a request that tuna_request_test / tuna_request_wait complete. The buffers and the
 * count, displacement and type arguments belong to the operation until it completes.
 * Several operations may be outstanding on one communicator (started in the same order on
 * every rank, as MPI requires) and on different ones, from different threads under
 * MPI_THREAD_MULTIPLE. tuna progresses its operations inside its own calls: every tuna
 * completion call and blocking collective advances every active operation of the process, as
 * does tuna_progress(); a rank that waits in MPI calls of its own for a peer that waits for a
 * tuna operation must call tuna_progress (or complete the request) meanwhile.
 *
 * opt as for tuna_alltoallv, limited to the rows with a step form (docs/nonblocking.md lists
 * them; another row is MPI_ERR_UNSUPPORTED_OPERATION). "auto" agrees on the statistics with
 * one MPI_Iallreduce, the operation's first step, and chooses among those rows and the
 * library's own MPI_Ialltoallv by the cost model. A communicator tuna has not set up yet
 * (no blocking tuna call, plan or tuna_pattern_changed on it) runs the library's
 * MPI_Ialltoallv: setting it up is collective, which a nonblocking start may not be.
 */
typedef struct tuna_request_s *tuna_request;
#define TUNA_REQUEST_NULL ((tuna_request)0)
int tuna_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    const tuna_options *opt, tuna_request *req);
int tuna_ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                      tuna_request *req);
/* The nonblocking uniform all-to-all (MPI_Ialltoall): local start, every row but vendor runs
 * as tuna's steps; auto chooses by the model with no agreement (the block size is every
 * rank's); vendor, and auto on a communicator tuna has not set up, are the library's
 * MPI_Ialltoall. */
int tuna_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                   tuna_request *req);
int tuna_ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     const tuna_options *opt, tuna_request *req);
/* The nonblocking allgather (MPI_Iallgather): local start, every row but vendor runs as tuna's
 * steps; checks as tuna_allgather's (this rank's errors at the start; TUNA_ARGCHECK=collective:
 * agreed in the operation's first step); auto chooses by the model with no agreement and no
 * learning (the block size is every rank's); vendor, auto's hand-over to the library, and a
 * communicator tuna has not set up are the library's MPI_Iallgather. */
int tuna_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                    tuna_request *req);
/* The nonblocking allreduce (MPI_Iallreduce), the same way: checks as tuna_allreduce's, every
 * row but vendor as tuna's steps (reductions in rank order for non-commutative ops), auto by
 * the model from the vector's bytes and whether the op commutes. */
int tuna_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, const tuna_options *opt, tuna_request *req);
/* The nonblocking all-to-all with a datatype per peer (MPI_Ialltoallw), as tuna_alltoallw:
 * the start checks, lays out and (on the packed way) packs this rank's blocks, then starts
 * tuna_ialltoallv_c; the completion unpacks. The arrays, types and buffers belong to the
 * operation until it completes. vendor (and device memory) is the library's MPI_Ialltoallw. */
int tuna_ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    const tuna_options *opt, tuna_request *req);
/*
 * The neighborhood all-to-all (MPI_Neighbor_alltoallv's semantics) on a communicator with a
 * distributed-graph, graph or Cartesian topology: block i of sendbuf (sendcounts[i] elements
 * of sendtype at sdispls[i] extents) goes to out-neighbor i, block j of recvbuf comes from
 * in-neighbor j, in MPI_Dist_graph_neighbors' / MPI_Cart_shift's order; repeated edges match
 * in order. opt == NULL means tuna_options_default(TUNA_NEIGHBOR_ALLTOALLV) (the
 * TUNA_NEIGHBOR_ALLTOALLV variable). Rows: vendor, linear, node-aware:leaders=K,max=B,
 * tuna:radix=R, auto (the library's call here; a persistent operation chooses). Device
 * buffers, and a Cartesian
 * topology where a rank is a neighbor twice, run the library's call. No MPI_IN_PLACE (MPI has
 * none for neighborhood collectives). docs/algorithms-neighbor.md.
 */
int tuna_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            const tuna_options *opt);
/* The large-count form (MPI_Neighbor_alltoallv_c): MPI_Count counts, MPI_Aint displacements.
 * Where the MPI library has no MPI_Neighbor_alltoallv_c (MPI 3.1 libraries), vendor and auto
 * run tuna's linear row instead (device buffers: MPI_ERR_UNSUPPORTED_OPERATION). */
int tuna_neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt);
/* The nonblocking form (MPI_Ineighbor_alltoallv): a local start; the arrays and buffers belong
 * to the operation until it completes. A communicator tuna has not set up runs the library's
 * MPI_Ineighbor_alltoallv. */
int tuna_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             const tuna_options *opt, tuna_request *req);
/* Its large-count form (MPI_Ineighbor_alltoallv_c), as tuna_neighbor_alltoallv_c; without the
 * library's call, a communicator tuna has not set up is MPI_ERR_UNSUPPORTED_OPERATION. */
int tuna_ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                               tuna_request *req);
/* The persistent form (MPI_Neighbor_alltoallv_init) as a plan: init is collective, works out
 * node-aware's aggregated pattern or tuna's rounds once (and auto's choice, from the pattern
 * agreed over all ranks), and each tuna_start only moves data. */
int tuna_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                                 unsigned flags, tuna_plan *plan);
/* Progress the operation and every other active one; when it is complete, *flag = 1, its
 * outcome is returned and *req becomes TUNA_REQUEST_NULL (tuna_stats_last() is its record).
 * TUNA_REQUEST_NULL gives *flag = 1. */
int tuna_request_test(tuna_request *req, int *flag);
/* Progress until the operation is complete; its outcome; *req = TUNA_REQUEST_NULL. */
int tuna_request_wait(tuna_request *req);
/* Advance every active tuna operation of the process as far as it can go without waiting. */
int tuna_progress(void);

/* What the planner chose and what it cost. */
#define TUNA_PLAN_MAX_TRIED 16
typedef struct tuna_plan_info {
    tuna_collective collective;
    int algorithm;                   /* table index of the algorithm every start runs */
    long params[TUNA_MAX_PARAMS];    /* its resolved parameters */
    int source;                      /* how it was chosen, TUNA_PLAN_SOURCE_* */
    double plan_seconds;             /* wall time of init on this rank */
    double predicted;                /* the cost model's time for the choice (0: none) */
    double measured;                 /* measure/wisdom: the choice's time per call, seconds */
    int ntried;                      /* measure: candidates timed (first TUNA_PLAN_MAX_TRIED
                                        listed below, in the order tried) */
    struct {
        int algorithm;
        long params[TUNA_MAX_PARAMS];
        double predicted, measured;  /* seconds; measured = max over ranks, best of reps */
    } tried[TUNA_PLAN_MAX_TRIED];
} tuna_plan_info;
enum {
    TUNA_PLAN_SOURCE_FORCED = 0,   /* opt named an algorithm */
    TUNA_PLAN_SOURCE_ESTIMATE = 1, /* the cost model (or a TUNA_TUNING entry) */
    TUNA_PLAN_SOURCE_MEASURE = 2,  /* timed candidates */
    TUNA_PLAN_SOURCE_WISDOM = 3    /* an imported or earlier measurement */
};
int tuna_plan_get_info(tuna_plan plan, tuna_plan_info *info);

/*
 * Wisdom: the planner's measured choices, kept in this process (every TUNA_PLAN_MEASURE
 * adds one) and saved to / loaded from a JSON file, keyed by what makes a choice valid
 * (MPI library, P, ranks per node, nodes, collective, the pattern's agreed statistics).
 * Both are collective over comm. Export: rank 0 writes the file. Import: every rank reads
 * path; if any rank cannot read or parse it, or the ranks read different contents, every
 * rank returns an error and nothing is imported. Entries replace equal keys.
 */
int tuna_wisdom_export(const char *path, MPI_Comm comm);
int tuna_wisdom_import(const char *path, MPI_Comm comm);

#if defined(TUNA_BUILDING) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* TUNA_H */
