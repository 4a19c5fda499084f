/* Internal interfaces shared by the core and the algorithm files. */
#ifndef TUNA_INTERNAL_H
#define TUNA_INTERNAL_H

#include "tuna.h"
#include "tuna_tags.h"
#include "tuna_registry.h"
#include "../transport/transport.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ errors */

/* Record a detailed message for `code` in this thread; returns code. */
int tuna_error_set(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* TUNA_VERBOSE level (0 when unset), and a message printed when it is >= level. */
int tuna_verbosity(void);
/* Every collective's names (src/core/collective_names.c), indexed by tuna_collective; its
 * name and the collective of a name are public (tuna_collective_name, tuna_collective_find). */
typedef struct tuna_collective_names {
    const char *name;      /* "alltoallv": option strings, statistics, tuna-bench */
    const char *env;       /* "TUNA_ALLTOALLV": its default's environment variable */
    const char *info_key;  /* "tuna_alltoallv": the preload's info key (and tuna's call) */
    const char *library;   /* "PMPI_Alltoallv": the library's own call, in messages */
} tuna_collective_names;
extern const tuna_collective_names tuna_collective_table[TUNA_COLLECTIVE_COUNT];
void tuna_log(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Forget the recorded error (start of every public call). */
void tuna_error_clear(void);
/* The result of the MPI library's `call` on a path that skipped the call start's
 * tuna_error_clear (a plan's start, a repeated call's shortest path): MPI_SUCCESS, or rc with
 * "<call> failed" as its message, no earlier call's message left standing. */
static inline int tuna_library_result(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return rc;
    tuna_error_clear();
    return tuna_error_set(rc, "%s failed", call);
}

/* Propagate an MPI call's error code with context. */
#define TUNA_MPI_CHECK(call)                                                          \
    do {                                                                              \
        int tuna_rc_ = (call);                                                        \
        if (tuna_rc_ != MPI_SUCCESS)                                                  \
            return tuna_error_set(tuna_rc_, "%s failed (%s:%d)", #call, __FILE__,     \
                                  __LINE__);                                          \
    } while (0)

/* ------------------------------------------------------------------ entry points */

/*
 * Common start of every public collective: clears the error (and the stats record when stats
 * are on), rejects MPI_COMM_NULL, replaces *opt == NULL by the collective's default (read
 * from the environment once per process) and checks that the options belong to `coll`.
 */
int tuna_call_begin(tuna_collective coll, MPI_Comm comm, const tuna_options **opt);
/* End of a call: its total time (from t_start, an MPI_Wtime taken when stats are on)
 * and the current record become tuna_stats_last(). No-op when stats are off. */
void tuna_stats_publish(double t_start);
/* The same for a call that was the MPI library's own (vendor): all of it is data exchange. */
void tuna_stats_publish_library(double t_start);
/* A finished operation's record becomes tuna_stats_last() (nonblocking operations). */
void tuna_stats_publish_record(const tuna_stats *record);
/* TUNA_ARGCHECK (read once): *collective is true for "collective", false for "local" (the
 * default); an invalid value is an error on every call. */
int tuna_argcheck_collective(bool *collective);
/* TUNA_ARGCHECK is local (valid and not "collective"): a start's checks are this rank's. */
static inline bool tuna_argcheck_is_local(void)
{
    bool collective;
    return tuna_argcheck_collective(&collective) == MPI_SUCCESS && !collective;
}
/* MPI_ERR_COMM, naming the algorithm, if comm is an intercommunicator. */
int tuna_require_intracomm(MPI_Comm comm, const char *algorithm);

/* ------------------------------------------------------------------ timing */

extern int tuna_stats_on;
/* The statistics record of the call this thread runs; while it steps an operation, that
 * operation's own (tuna_stats_cur, set by the engine: src/core/op.c). Per thread, so calls
 * from several threads keep their records apart. */
extern _Thread_local tuna_stats tuna_stats_thread;
extern _Thread_local tuna_stats *tuna_stats_cur;
#define tuna_stats_current (*(tuna_stats_cur ? tuna_stats_cur : &tuna_stats_thread))

/* Phase timer: cheap no-op when stats are off. */
typedef struct tuna_timer {
    double t0;
} tuna_timer;

static inline void tuna_timer_start(tuna_timer *t)
{
    t->t0 = tuna_stats_on ? PMPI_Wtime() : 0.0;
}
static inline void tuna_timer_stop(tuna_timer *t, tuna_phase phase)
{
    if (tuna_stats_on) {
        double now = PMPI_Wtime();
        tuna_stats_current.phase[phase] += now - t->t0;
        t->t0 = now;
    }
}
static inline void tuna_stats_temp(size_t bytes)
{
    if (bytes > tuna_stats_current.temp_bytes)
        tuna_stats_current.temp_bytes = bytes;
}
static inline void tuna_stats_rounds(int rounds)
{
    tuna_stats_current.rounds += rounds;
}

/* ------------------------------------------------------------------ context */

/*
 * Values of one alltoallv call reduced over all ranks by tuna_agree(): an error flag and
 * the size statistics (maximum of the first three entries, sum of the others).
 */
enum {
    TUNA_AGREE_ERROR,
    TUNA_AGREE_MAX_BLOCK,   /* largest block in bytes */
    TUNA_AGREE_MAX_TOTAL,   /* most bytes one rank sends */
    TUNA_AGREE_ZERO_BLOCKS, /* number of empty blocks */
    TUNA_AGREE_SUM_BYTES,   /* bytes sent by all ranks */
    TUNA_AGREE_SUM_RECV,    /* bytes all ranks' receive counts hold (summed, as the above) */
    TUNA_AGREE_N
};

/* Per-communicator state, cached on the user's communicator as an attribute. */
/* What tuna needs to know of a datatype (tuna_type_info_get). */
typedef struct tuna_type_info {
    size_t size;
    MPI_Aint lb, extent;
    MPI_Aint true_lb;       /* non-zero: the type may address absolutely (MPI_BOTTOM) */
    MPI_Aint true_extent;   /* bytes from the first to the last byte one element touches */
    bool contig;            /* tuna_type_is_contiguous() */
    bool named;             /* a predefined type: these facts hold for the handle forever */
} tuna_type_info;

/*
 * Buffers reused from call to call, grown on demand: scratch slots (0: the core's byte
 * displacements; 1: request arrays) and the buffers an algorithm keeps across calls (grown
 * by the algorithm itself, e.g. TuNA's temporary slots sized from the metadata it received;
 * slot owners are listed next to the algorithms, TUNA_KEEP_* in src/alltoallv/). A
 * communicator's blocking calls share its set (tuna_ctx.scr); a nonblocking or persistent
 * operation owns one, so outstanding operations never share a buffer.
 */
typedef struct tuna_scratch {
    void *buf[4];
    size_t len[4];
    void *kept[8];
    size_t kept_len[8];
} tuna_scratch;
/* Slot `slot` of s with at least `bytes` bytes; NULL (MPI_ERR_NO_MEM recorded) on failure. */
void *tuna_scratch_get(tuna_scratch *s, int slot, size_t bytes);
/* Free every buffer of s (s itself is the owner's). */
void tuna_scratch_free(tuna_scratch *s);

typedef struct tuna_ctx {
    MPI_Comm comm;          /* private duplicate: all internal traffic */
    /* TUNA_CTX_READY once the private communicator, the agreement and the topology are set
     * up; a nonblocking first call leaves it TUNA_CTX_PENDING (or _FAILED) while its set-up
     * runs as the first steps of the operations (src/core/setup.c). */
    _Atomic int state;
    struct tuna_setup *setup; /* that set-up's state; NULL for a blocking creation */
    MPI_Comm user;          /* the communicator the context is attached to */
    int rank, size;
    /* Node topology (MPI_COMM_TYPE_SHARED, or TUNA_RANKS_PER_NODE logical nodes). */
    int node_id;            /* index of this rank's node, 0..nnodes-1 (ordered by lowest rank) */
    int local_rank;         /* rank within the node */
    int nnodes;
    int ranks_per_node;     /* Q if all nodes have the same size, else 0 */
    int *node_of;           /* node_of[r]: node index of world rank r */
    int *local_of;          /* local_of[r]: rank of r within its node */
    int *vrank_to_rank;     /* node-major virtual rank -> rank (valid if ranks_per_node > 0) */
    int *rank_to_vrank;
    /* The blocking calls' buffers, kept until the communicator is freed (one blocking call
     * runs on a communicator at a time; nonblocking and persistent operations, which may
     * be outstanding with it, have their own: tuna_scratch). */
    tuna_scratch scr;
    /* The staging transport's stream and bounce memory (src/transport/cuda_staged.c), made
     * by the first call with device buffers a row serves; NULL before. */
    struct tuna_staged *staged;
    /* Operations (nonblocking, persistent) started on this communicator: their tags
     * (src/core/op.c, tuna_op_tag_shift); every rank starts them in the same order. */
    unsigned long op_seq;
    unsigned long plan_seq;
    long tag_slots;          /* tag spans MPI_TAG_UB holds (0: not asked yet) */
    /* auto (src/alltoallv/auto.c): the choice its last agreement on the statistics gives
     * to the calls that reuse them, and when it agrees next. Every rank counts the same
     * calls, so all agree on the same ones. */
    bool agreed_valid;       /* an agreement has happened: the reuse_* fields are set */
    int auto_countdown;      /* calls that reuse the statistics before the next agreement */
    int auto_period;         /* calls from one agreement to the next */
    int reuse_algorithm;     /* the choice for the calls that reuse agreed_stats */
    long reuse_param[TUNA_MAX_PARAMS];
    double reuse_predicted;
    int reuse_source;        /* tuna_stats.auto_source of the calls that reuse it */
    bool reuse_vendor;       /* the reused choice is the MPI library's own call */
    bool argcheck_local;     /* TUNA_ARGCHECK is local (valid, agreed at creation) */
    int select_status;       /* tuna_select_agree()'s outcome + 1; 0 before it ran */
    /* auto's learning (src/select/learn.c): its classes on this communicator, freed with the
     * context through learn_free; learn_class: the alltoallv class whose candidates the
     * calls up to the next agreement run (reuse_* holds the next one), else NULL. */
    struct tuna_learn *learn;
    void (*learn_free)(struct tuna_learn *);
    struct tuna_learn_class *learn_class;
    /* The last auto call of the collective explored (learning): the next call takes its
     * clock at its entry, so that a tuna row's sample includes tuna's own work around it,
     * which the library's call skips once settled (tuna_learn_entry). */
    bool learn_timing[TUNA_COLLECTIVE_COUNT];
    /* auto's last settled choice per collective whose call sizes are the same on every rank
     * (alltoall, allgather, allreduce; src/select/learn.c, tuna_learn_last_find): a caller
     * repeating a blocking call gets it back without the model's memo or learning's class
     * search. Written only once no learning runs for that size (settled, or learning off):
     * what those would return again. */
    struct tuna_auto_last {
        bool valid, commute;
        double bytes;
        int source;          /* tuna_stats.auto_source */
        tuna_choice choice;
    } auto_last[TUNA_COLLECTIVE_COUNT];
    /* The plain arguments of the last call on which auto's settled choice (auto_last) was
     * the MPI library's own call (src/core/repeat.c): predefined types and op (never freed,
     * so a handle keeps its meaning), the counts, in place or not, and the options that
     * meant auto. A call that repeats them goes to the library before any of tuna's set-up
     * (tuna_repeat_matches). Cleared whenever auto_last is written. */
    struct tuna_library_repeat {
        bool valid, inplace;
        bool null_is_auto;   /* options NULL ran auto (the defaults: fixed once loaded) */
        int auto_row;        /* the auto row's index: options given with it are auto */
        MPI_Datatype stype, rtype;
        MPI_Count scount, rcount;
        MPI_Op op;           /* allreduce's; MPI_OP_NULL for the others */
    } library_repeat[TUNA_COLLECTIVE_COUNT];
    /* The facts of the last predefined send [0] and receive [1] types seen on this
     * communicator (calls on one communicator are serialised by MPI's rules): a typical
     * caller passes the same types each call, found here without a search. */
    struct {
        MPI_Datatype type;
        tuna_type_info info;
    } type_seen[2];
    struct tuna_ctx *next, *prev;  /* list of live contexts, freed at MPI_Finalize */
} tuna_ctx;

/*
 * Context of `comm`, created (collectively) on first use: intercommunicators are refused
 * then (MPI_ERR_COMM naming `algorithm`), and the TUNA_* settings that decide which
 * collectives a call performs are agreed across ranks (a difference is an error on every
 * rank). Later calls find it through a per-thread cache without any MPI call.
 */
int tuna_ctx_get(MPI_Comm comm, const char *algorithm, tuna_ctx **out);
/* The context of comm when this thread's cache holds it (the last communicator it used),
 * else NULL: no MPI call, for a repeated call's shortest path. */
tuna_ctx *tuna_ctx_cached(MPI_Comm comm);

/*
 * auto's learning samples are what a candidate will cost once settled (docs/tuning.md,
 * "Exploring"): the library's call alone (a settled repeat goes straight to it), a tuna row
 * with tuna's checks, choice and set-up around it, from the call's entry. The entry's clock
 * is taken where the communicator's last auto call of the collective explored
 * (ctx->learn_timing of the call's tuna_ctx_cached context, which may be NULL), else 0;
 * tuna_learn_sample_start gives a sample's start: the entry's clock for a tuna row where
 * there is one, else now (a class's first timed call, or other classes' calls between, start
 * at the row as before).
 */
static inline double tuna_learn_entry(const tuna_ctx *cached, tuna_collective coll)
{
    return cached && cached->learn_timing[coll] ? PMPI_Wtime() : 0;
}
static inline double tuna_learn_sample_start(bool library, double t_entry)
{
    return !library && t_entry > 0 ? t_entry : PMPI_Wtime();
}

/*
 * A repeated call's shortest path (src/core/repeat.c; docs/tuning.md, "The library's call,
 * at once"). tuna_repeat_keep records a call that auto ran as the MPI library's own call by
 * a settled choice (ctx->auto_last[coll] valid, the vendor row), on arguments tuna checked,
 * where its types (and op) are predefined; `given` is the caller's options (NULL: the
 * defaults). tuna_repeat_matches says whether a call repeats the recorded one on `cached`
 * (tuna_ctx_cached of the call's communicator, looked up once per call; NULL: no), statistics off, auto's options, the same types, counts, op
 * and in-place form, and buffers that pass tuna's NULL and aliasing rules. The caller then
 * runs the library's call and nothing else; anything else takes the usual path, which checks
 * and reports everything. Send arguments: scount and stype (ignored in place); allreduce
 * passes its count and type as both sides.
 */
void tuna_repeat_keep(tuna_ctx *ctx, tuna_collective coll, const tuna_options *given,
                      const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
                      MPI_Count rcount, MPI_Datatype rtype, MPI_Op op);
static inline bool tuna_repeat_matches(const tuna_ctx *cached, tuna_collective coll,
                                       const tuna_options *opt, const void *sendbuf,
                                       MPI_Count scount, MPI_Datatype stype,
                                       const void *recvbuf, MPI_Count rcount,
                                       MPI_Datatype rtype, MPI_Op op)
{
    if (tuna_stats_on || !cached)
        return false;
    const struct tuna_library_repeat *r = &cached->library_repeat[coll];
    const bool inplace = sendbuf == MPI_IN_PLACE;
    return r->valid && rcount == r->rcount && rtype == r->rtype && op == r->op &&
           inplace == r->inplace && recvbuf && recvbuf != MPI_IN_PLACE &&
           (opt ? opt->collective == coll && opt->algorithm == r->auto_row : r->null_is_auto) &&
           (inplace ||
            (scount == r->scount && stype == r->stype && sendbuf && sendbuf != recvbuf));
}
/* The context of comm if it has one, else *out = NULL: local, no MPI communication (what a
 * nonblocking start may do). */
int tuna_ctx_find(MPI_Comm comm, tuna_ctx **out);

/* ------------------------------------------------------------------ nonblocking set-up */
enum { TUNA_CTX_READY = 0, TUNA_CTX_PENDING = 1, TUNA_CTX_FAILED = 2 };
/* The context whose deferred starts this thread is running (setup.c): ready to them. */
extern _Thread_local const tuna_ctx *tuna_setup_restarting;
static inline bool tuna_ctx_ready(const tuna_ctx *ctx)
{
    return atomic_load_explicit(&ctx->state, memory_order_acquire) == TUNA_CTX_READY ||
           tuna_setup_restarting == ctx;
}
/* The context of comm, or a new one whose set-up a nonblocking start begins (local: the
 * private duplicate is an MPI_Comm_idup; setup.c finishes it); *out = NULL for an
 * intercommunicator (no context: the library's call). */
int tuna_ctx_begin(MPI_Comm comm, tuna_ctx **out);
/* Where MPI_Comm_idup cannot serve a nonblocking set-up: SimGrid SMPI has none; Open MPI's
 * (4.1.4 and 5.0.11 alike) fails when the application starts other nonblocking collectives on
 * the communicator while it is pending (MPI_ERR_TRUNCATE or MPI_ERR_INTERN in its NBC
 * schedules, or a crash: MPICH's coll/nonblocking3 under the drop-in, which passes natively;
 * a plain MPI program without tuna under 4.1.4; docs/nonblocking.md). There a nonblocking
 * start on a communicator tuna has not set up runs the library's call. */
#if defined(SMPI_SHARED_MALLOC) || defined(OPEN_MPI)
#define TUNA_NO_NONBLOCKING_SETUP 1
#define TUNA_NO_CONTEXT_FALLBACK                                                                 \
    "tuna has not set this communicator up yet (the drop-in does at its creation, except "      \
    "MPI_Comm_idup's; else a blocking call or a plan; this MPI's MPI_Comm_idup cannot: "         \
    "docs/nonblocking.md)"
#else
#define TUNA_NO_NONBLOCKING_SETUP 0
/* The statistics' fallback where a nonblocking start found no context (tuna_ctx_begin). */
#define TUNA_NO_CONTEXT_FALLBACK "an intercommunicator"
#endif
/* setup.c: post the set-up's first step (context.c calls it for a new pending context);
 * finish it here, blocking (a blocking call or a plan on a pending context): the set-up's
 * outcome; free its state with the context. */
int tuna_setup_begin(tuna_ctx *ctx);
int tuna_setup_wait(tuna_ctx *ctx);
/* The same set-up at once, blocking (ctx->comm, or MPI_Comm_dup when it is MPI_COMM_NULL, then
 * the exchange): for a communicator whose every member is in the call that created it. */
int tuna_setup_now(tuna_ctx *ctx);
/* An intracommunicator just created (every member inside its creation call: the drop-in's
 * MPI_Comm_dup, _split, _create, ..., MPI_COMM_WORLD and MPI_COMM_SELF at MPI_Init) set up
 * now, by tuna_setup_now, auto's agreement included, with private_comm as tuna's private
 * communicator (same group and order; MPI_COMM_NULL: a duplicate of comm); nothing when it
 * has a context already (private_comm freed). Collective over comm. */
int tuna_ctx_setup_created(MPI_Comm comm, MPI_Comm private_comm);
void tuna_setup_release(tuna_ctx *ctx);
/* context.c for setup.c: the settings' agreement as values reduced with MPI_MAX
 * (tuna_config_agree_n of them, at most TUNA_CONFIG_AGREE_MAX) and its judgement (rc: the
 * reduction's; comm MPI_COMM_NULL: no second exchange for the message); the topology from
 * every rank's node identity (ids; NULL: MPI_Comm_split_type, blocking). */
#define TUNA_CONFIG_AGREE_MAX 34
int tuna_config_agree_n(void);
void tuna_config_agree_values(long long *v);
int tuna_config_agree_judge(const long long *v, int rc, MPI_Comm comm, int *differs);
int tuna_ctx_topology(tuna_ctx *c, const long long *ids);
/* After the settings' agreement passed: what reads them (TUNA_PROGRESS, TUNA_ARGCHECK). */
int tuna_ctx_settings_agreed(tuna_ctx *c);
/*
 * A start on a context whose set-up is still running: the operation handed back (*req)
 * waits for the set-up, then runs restart(args, &inner), the family's own start, in the
 * order of the starts on this communicator (so every rank starts the same operations in the
 * same order on the private communicator), and completes with inner. args (malloc'd) is
 * freed with the operation. If the set-up finished meanwhile, restart runs at once.
 */
typedef int tuna_restart_fn(void *args, tuna_request *inner);
int tuna_setup_defer(tuna_ctx *ctx, tuna_restart_fn *restart, void *args, tuna_request *req);
/* The same with a copy of the caller's args (size bytes) made here (fn: the start, named in
 * the error where there is no memory for the copy). */
int tuna_setup_defer_copy(tuna_ctx *ctx, tuna_restart_fn *restart, const void *args,
                          size_t size, const char *fn, tuna_request *req);
/* The blocking calls' scratch buffer `slot` of at least `bytes` bytes (tuna_scratch). */
static inline void *tuna_ctx_scratch(tuna_ctx *ctx, int slot, size_t bytes)
{
    return tuna_scratch_get(&ctx->scr, slot, bytes);
}
/* Room for n requests in scratch set s (slot 1): no allocation per call; NULL on failure. */
static inline MPI_Request *tuna_scratch_requests(tuna_scratch *s, size_t n)
{
    return (MPI_Request *)tuna_scratch_get(s, 1, sizeof(MPI_Request) * n);
}

/* ------------------------------------------------------------------ agreement */

/* Reduce v (TUNA_AGREE_N values) over ctx->comm in place (src/core/agree.c). */
int tuna_agree(tuna_ctx *ctx, long long v[TUNA_AGREE_N]);
/* The same for n values: the TUNA_AGREE_N entries, then values reduced by their maximum
 * (auto's learning samples). */
int tuna_agree_n(tuna_ctx *ctx, long long *v, int n);
/* tuna_agree_n, nonblocking (MPI_Iallreduce into *req): a nonblocking operation's
 * agreement. */
int tuna_agree_start(tuna_ctx *ctx, long long *v, int n, MPI_Request *req);

/* ------------------------------------------------------------------ helpers */

/*
 * count elements of type as a message: (count, type) when count fits in int, else one
 * element of a derived type made of whole chunks plus a remainder (*made set: free it once
 * the operation is posted). Sender and receiver may describe a message differently: the
 * type signatures still match, so each side decides alone, with no agreement.
 */
int tuna_message_type(MPI_Count count, MPI_Datatype type, MPI_Aint extent, int *n,
                      MPI_Datatype *msg, bool *made);

/* Size, extent and contiguity of a datatype (predefined ones cached per thread). */
int tuna_type_info_get(MPI_Datatype type, tuna_type_info *out);
/* True if `count` elements of `type` are always count*size contiguous bytes in signature order. */
bool tuna_type_is_contiguous(MPI_Datatype type);
/* Pack / unpack `count` elements (stride `extent`) to / from count*size packed bytes. */
int tuna_pack_block(const void *in, MPI_Count count, MPI_Datatype type, MPI_Aint extent,
                    size_t size, void *out, MPI_Comm comm);
int tuna_unpack_block(const void *in, void *out, MPI_Count count, MPI_Datatype type,
                      MPI_Aint extent,
                      size_t size, MPI_Comm comm);

/* Collective over comm: the TUNA_* settings that decide which operations a call performs are
 * the same on every rank, else MPI_ERR_ARG naming the variable and values (*differs, if not
 * NULL: this rank's value is not rank 0's). Run once per communicator context. Under SimGrid
 * SMPI also MPI_ERR_OTHER on every rank when the ranks share tuna's globals
 * (smpi/privatization:no; context.c). */
int tuna_config_agree(MPI_Comm comm, int *differs);
/* This process's TUNA_RANKS_PER_NODE and TUNA_ARGCHECK parse (no communication): what the
 * preload checks at start-up, with the options, profile and tuning files, so that a bad
 * value stops the job there and not at its first call. */
int tuna_settings_check(void);
#ifdef SMPI_SHARED_MALLOC
/* The refusal's message once SMPI was found sharing tuna's globals between ranks, else NULL. */
const char *tuna_smpi_shared_globals(void);
#endif

/* Helpers of the allgather and allreduce front ends (coll_util.c). */
/* Committed datatype of `bytes` raw bytes (any size, also above INT_MAX). */
int tuna_coll_bytes_type(size_t bytes, MPI_Datatype *out);

/* allgather / allreduce: the context of comm (created on first use) and whether
 * TUNA_ARGCHECK=collective asks for an agreement on the arguments. */
int tuna_coll_context(MPI_Comm comm, const char *algorithm, tuna_ctx **ctx, bool *collective);
/*
 * TUNA_ARGCHECK=collective for allgather / allreduce: one allreduce of this rank's check
 * outcome (local_rc) and of n <= 4 values every rank must hold alike (same[i], named
 * names[i]). Returns local_rc where it failed, else MPI_ERR_ARG on every rank when another
 * rank failed or a value differs (with its range), else MPI_SUCCESS; no data has moved.
 */
int tuna_coll_agree_args(tuna_ctx *ctx, const char *coll, int local_rc, const long long *same,
                         const char *const *names, int n);
/* The same agreement for a nonblocking call: started (v: room for 1 + 2n values that live
 * until *req completes), then judged on the reduced v as tuna_coll_agree_args judges. */
#define TUNA_COLL_AGREE_MAX 4
int tuna_coll_agree_args_start(tuna_ctx *ctx, const char *coll, int local_rc,
                               const long long *same, int n, long long *v, MPI_Request *req);
int tuna_coll_agree_args_judge(const char *coll, int local_rc, const long long *v,
                               const char *const *names, int n);

/* A step's requests complete TUNA_WAIT_CHUNK at a time, in order (the transport's settle,
 * src/transport/mpi_host.c, statuses on the stack): a request of a later chunk is completed
 * only after every earlier one (the cost model prices that, model.c). On a failure every
 * request of the set is still completed before the first error returns (the rule is in
 * mpi_host.c): the caller may free or reuse every buffer of the step, and no message of it
 * stays in flight. */
#define TUNA_WAIT_CHUNK 32
/* Count the request a post wrote to req[*n] (rc: the post's outcome) only if it was posted;
 * returns rc. A failed post leaves no request to complete. */
static inline int tuna_posted(int rc, int *n)
{
    if (rc == MPI_SUCCESS)
        (*n)++;
    return rc;
}
/* Copy a resolved parameter vector (TUNA_MAX_PARAMS values): a row's settings, not data,
 * so not the transport's. */
static inline void tuna_params_copy(long *dst, const long *src)
{
    memcpy(dst, src, sizeof(long) * TUNA_MAX_PARAMS);
}
/* The first of two outcomes that failed (MPI_SUCCESS if neither did). */
static inline int tuna_first_error(int first, int next)
{
    return first != MPI_SUCCESS ? first : next;
}

/*
 * Every allocation tuna makes on a call's path goes through these (so the test hook below
 * reaches it). Checked: a failure records MPI_ERR_NO_MEM with the size. tuna_realloc keeps
 * the old block on failure; tuna_realloc_try records nothing (for callers that survive a
 * failure, e.g. a shrink that keeps the larger block).
 */
void *tuna_malloc(size_t bytes);
void *tuna_calloc(size_t n, size_t size);
void *tuna_realloc(void *old, size_t bytes);
void *tuna_realloc_try(void *old, size_t bytes);
/* free() on each of n pointers (NULL ones included). TUNA_FREE_ALL(s->in, s->out, s): the
 * buffers of a row's state released in one statement, in the order given. */
static inline void tuna_free_each(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}
#define TUNA_FREE_ALL(...)                                                                    \
    tuna_free_each((void *const[]){__VA_ARGS__},                                               \
                   sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))
/* The library's intrusive lists (contexts, operations, the drop-in's communicator states):
 * nodes with next and prev, pushed at the head; a node out of the list is unlinked without
 * touching it (no prev and not the head). Callers hold what guards the list. */
#define TUNA_LIST_PUSH(head, node)                                                             \
    do {                                                                                       \
        (node)->prev = NULL;                                                                   \
        (node)->next = (head);                                                                 \
        if (head)                                                                              \
            (head)->prev = (node);                                                             \
        (head) = (node);                                                                       \
    } while (0)
#define TUNA_LIST_UNLINK(head, node)                                                           \
    do {                                                                                       \
        if ((node)->prev)                                                                      \
            (node)->prev->next = (node)->next;                                                 \
        else if ((head) == (node))                                                             \
            (head) = (node)->next;                                                             \
        if ((node)->next)                                                                      \
            (node)->next->prev = (node)->prev;                                                 \
        (node)->next = (node)->prev = NULL;                                                    \
    } while (0)
/* The members of [1, n) whose base-r digit of place value w is d, ascending, into idx (NULL:
 * counted only); returns how many. One round of a radix-r Bruck schedule (bruck-radix,
 * TuNA's rounds). */
static inline int tuna_radix_digit_members(int n, long long w, int r, int d, int *idx)
{
    int cnt = 0;
    for (long long base = (long long)d * w; base < n; base += w * r)
        for (long long i = base; i < base + w && i < n; i++)
            if (idx)
                idx[cnt++] = (int)i;
            else
                cnt++;
    return cnt;
}
/*
 * Test hook (docs/testing.md): count the allocations above from now on and make the k-th
 * one fail (k <= 0: none fails); how many were made since, and whether the k-th was reached.
 */
void tuna_test_alloc_fail(long k);
long tuna_test_alloc_count(void);
bool tuna_test_alloc_hit(void);

/* sendbuf == recvbuf without MPI_IN_PLACE, with data to move, is erroneous in MPI (MPICH
 * reports it): every collective and every algorithm, vendor included, returns MPI_ERR_BUFFER
 * for it. Without data it is no error (empty buffers may share an address). */
static inline int tuna_check_alias(const char *fn, const void *sendbuf, const void *recvbuf,
                                   bool has_data)
{
    if (sendbuf == recvbuf && sendbuf != NULL && sendbuf != MPI_IN_PLACE && has_data)
        return tuna_error_set(MPI_ERR_BUFFER, "%s: sendbuf aliases recvbuf (use MPI_IN_PLACE)",
                              fn);
    return MPI_SUCCESS;
}

/*
 * Buffer overlap (src/core/overlap.c). MPI forbids a collective's send bytes to overlap its
 * receive bytes (MPI_IN_PLACE is the way to share them); each rank checks its own buffers,
 * locally, by extent: the bytes from an element's true lower bound to its true upper bound.
 * A span is [lo, hi) as addresses (buffers may be MPI_BOTTOM: address arithmetic).
 */
typedef struct tuna_span {
    uintptr_t lo, hi;
} tuna_span;
/* n elements of a type (size, extent, true_lb, true_extent) at buf + byte_disp; empty when n
 * or the size is 0. */
static inline tuna_span tuna_span_of(const void *buf, MPI_Aint byte_disp, MPI_Count n,
                                     size_t size, MPI_Aint extent, MPI_Aint true_lb,
                                     MPI_Aint true_extent)
{
    tuna_span s = {0, 0};
    if (n <= 0 || size == 0)
        return s;
    /* Negative extents run the elements downwards: the span covers both ends. */
    const MPI_Aint first = true_lb, last = (MPI_Aint)(n - 1) * extent + true_lb;
    const MPI_Aint lo = first < last ? first : last, hi = (first < last ? last : first) +
                                                          true_extent;
    s.lo = (uintptr_t)buf + (uintptr_t)(byte_disp + lo);
    s.hi = (uintptr_t)buf + (uintptr_t)(byte_disp + hi);
    return s;
}
/* Hulls: start from TUNA_SPAN_EMPTY_HULL and extend by each span (empty ones are skipped);
 * two spans meet when both are non-empty and share a byte. */
#define TUNA_SPAN_EMPTY_HULL ((tuna_span){UINTPTR_MAX, 0})
static inline void tuna_span_extend(tuna_span *h, tuna_span s)
{
    if (s.lo < s.hi) {
        h->lo = s.lo < h->lo ? s.lo : h->lo;
        h->hi = s.hi > h->hi ? s.hi : h->hi;
    }
}
static inline bool tuna_spans_meet(tuna_span a, tuna_span b)
{
    return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}
/* Whether a span of a[0..na) overlaps a span of b[0..nb) (empty spans overlap nothing).
 * Sorts copies when the hulls meet: O((na + nb) log) then, O(na + nb) otherwise; -1 when
 * that copy cannot be allocated (MPI_ERR_NO_MEM recorded). */
int tuna_spans_overlap(const tuna_span *a, int na, const tuna_span *b, int nb);
/* The common error of the checks: MPI_ERR_BUFFER naming the function and rank, or
 * MPI_ERR_NO_MEM when tuna_spans_overlap could not tell. */
int tuna_check_overlap(const char *fn, int me, const tuna_span *a, int na, const tuna_span *b,
                       int nb);
/* recvbuf == MPI_IN_PLACE (only sendbuf may be): MPI_ERR_BUFFER on the rank that passes it. */
static inline int tuna_check_recv_inplace(const char *fn, const void *recvbuf, int me)
{
    if (recvbuf == MPI_IN_PLACE)
        return tuna_error_set(MPI_ERR_BUFFER,
                              "%s: recvbuf is MPI_IN_PLACE (rank %d); only sendbuf may be", fn,
                              me);
    return MPI_SUCCESS;
}

/*
 * The user's count and displacement arrays of one side: int (MPI_Alltoallv) or large
 * (MPI_Count counts, MPI_Aint displacements: tuna_alltoallv_c). Exactly one pair is used.
 */
typedef struct tuna_counts {
    const int *n, *d;
    const MPI_Count *nl;
    const MPI_Aint *dl;
} tuna_counts;
static inline bool tuna_counts_given(const tuna_counts *k)
{
    return k->n ? k->d != NULL : (k->nl && k->dl);
}
static inline MPI_Count tuna_counts_n(const tuna_counts *k, int j)
{
    return k->n ? k->n[j] : k->nl[j];
}
static inline MPI_Aint tuna_counts_d(const tuna_counts *k, int j)
{
    return k->n ? k->d[j] : k->dl[j];
}

#endif /* TUNA_INTERNAL_H */
