/* Internal interfaces shared by the core and the algorithm files. */
#ifndef TUNA_INTERNAL_H
#define TUNA_INTERNAL_H

#include "tuna.h"
#include "tuna_tags.h"
#include "tuna_registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ errors */

/* Record a detailed message for `code` in this thread; returns code. */
int tuna_error_set(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* TUNA_VERBOSE level (0 when unset), and a message printed when it is >= level. */
int tuna_verbosity(void);
/* "alltoallv", "allgather", "allreduce" ("?" for anything else). */
const char *tuna_collective_name(tuna_collective coll);
void tuna_log(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Forget the recorded error (start of every public call). */
void tuna_error_clear(void);

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
/* A finished operation's record becomes tuna_stats_last() (nonblocking operations). */
void tuna_stats_publish_record(const tuna_stats *record);
/* TUNA_ARGCHECK (read once): *collective is true for "collective", false for "local" (the
 * default); an invalid value is an error on every call. */
int tuna_argcheck_collective(bool *collective);
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
    t->t0 = tuna_stats_on ? MPI_Wtime() : 0.0;
}
static inline void tuna_timer_stop(tuna_timer *t, tuna_phase phase)
{
    if (tuna_stats_on) {
        double now = MPI_Wtime();
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
/* The context of comm if it has one, else *out = NULL: local, no MPI communication (what a
 * nonblocking start may do). */
int tuna_ctx_find(MPI_Comm comm, tuna_ctx **out);
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

/* ------------------------------------------------------------------ alltoallv */

/*
 * Arguments after validation and normalisation. Displacements are in BYTES
 * (already multiplied by the extent, as MPI_Aint, so offsets beyond 2 GiB
 * cannot overflow). For MPI_IN_PLACE the core packs the receive buffer's
 * blocks into a temporary buffer first, so algorithms never see in-place.
 */
typedef struct tuna_a2av_args {
    const char *sbuf;
    const int *scounts;         /* in units of stype (tuna_scount(): NULL for large counts) */
    const MPI_Count *scounts_l; /* the large-count arrays (tuna_alltoallv_c), else NULL */
    const MPI_Count *rcounts_l;
    const MPI_Aint *sdisp;      /* byte offsets from sbuf */
    MPI_Datatype stype;
    MPI_Aint sext;              /* extent of stype */
    size_t ssize;               /* MPI_Type_size(stype) */
    bool scontig;               /* stype's data is ssize contiguous bytes at the displacement */
    char *rbuf;
    const int *rcounts;
    const MPI_Aint *rdisp;
    MPI_Datatype rtype;
    MPI_Aint rext;
    size_t rsize;
    bool rcontig;
    tuna_ctx *ctx;              /* ctx->comm is the private communicator */
    tuna_scratch *scr;          /* the call's buffers: &ctx->scr, or the operation's own */
    int tag_shift;              /* added to every tag of the call (tuna_op_tag_shift): 0 for
                                 * blocking calls; the block helpers below add it */
    int rank, size;
    const tuna_algorithm_info *info; /* the running row (tuna_a2av_run_row): its parameters */
    long param[TUNA_MAX_PARAMS];/* resolved values in the row's order (defaults applied,
                                 * clamped): algorithms read them by name, tuna_a2av_param() */
    size_t max_block_bytes;     /* global maximum over all ranks of any block's bytes */
    size_t total_bytes_max;     /* global maximum over ranks of bytes sent by one rank */
    double zero_fraction;       /* global fraction of empty blocks */
    double mean_block_bytes;    /* global mean block size in bytes */
    bool stats_agreed;          /* the four fields above are set (else TUNA_ARGCHECK=local
                                 * skipped the agreement: they are 0) */
    bool uniform;               /* a uniform all-to-all (tuna_alltoall): every block of every
                                 * rank is tuna_scount(a, 0) * ssize bytes, known to all ranks
                                 * without a message (MPI's type-signature rule), so rows may
                                 * skip their size metadata; the statistics are then set */
} tuna_a2av_args;

/* Reduce v (TUNA_AGREE_N values) over ctx->comm in place. */
int tuna_agree(tuna_ctx *ctx, long long v[TUNA_AGREE_N]);
/* The same for n values, nonblocking (MPI_Iallreduce into *req): a nonblocking operation's
 * agreement. */
int tuna_agree_start(tuna_ctx *ctx, long long *v, int n, MPI_Request *req);
/* Fill a's global statistics fields from agreed values. */
void tuna_a2av_set_stats(tuna_a2av_args *a, const long long v[TUNA_AGREE_N]);
/* After an agreement: MPI_ERR_TRUNCATE on every rank when the ranks send more bytes in all
 * than their receive counts hold (a type-signature mismatch that some receiver would have
 * to truncate; found this way even by the rows that pad blocks and so cannot see it). */
int tuna_a2av_check_totals(const long long v[TUNA_AGREE_N]);

/* ------------------------------------------------------------------ helpers */

/* Pointer to block j of the send / receive buffer. The buffer may be MPI_BOTTOM (NULL, the
 * datatype holding absolute addresses): address arithmetic, not pointer arithmetic on NULL. */
static inline const char *tuna_sblock(const tuna_a2av_args *a, int j)
{
    return (const char *)((uintptr_t)a->sbuf + (uintptr_t)a->sdisp[j]);
}
static inline char *tuna_rblock(const tuna_a2av_args *a, int j)
{
    return (char *)((uintptr_t)a->rbuf + (uintptr_t)a->rdisp[j]);
}

/* Count of send / receive block j, in elements of stype / rtype (int or large arrays). */
static inline MPI_Count tuna_scount(const tuna_a2av_args *a, int j)
{
    return a->scounts ? a->scounts[j] : a->scounts_l[j];
}
static inline MPI_Count tuna_rcount(const tuna_a2av_args *a, int j)
{
    return a->rcounts ? a->rcounts[j] : a->rcounts_l[j];
}

/* Whether block j is sent / received at all (zero-byte messages are skipped on both sides). */
static inline bool tuna_a2av_sends(const tuna_a2av_args *a, int j)
{
    return tuna_scount(a, j) > 0 && a->ssize > 0;
}
static inline bool tuna_a2av_recvs(const tuna_a2av_args *a, int j)
{
    return tuna_rcount(a, j) > 0 && a->rsize > 0;
}

/*
 * count elements of type as a message: (count, type) when count fits in int, else one
 * element of a derived type made of whole chunks plus a remainder (*made set: free it once
 * the operation is posted). Sender and receiver may describe a message differently: the
 * type signatures still match, so each side decides alone, with no agreement.
 */
int tuna_message_type(MPI_Count count, MPI_Datatype type, MPI_Aint extent, int *n,
                      MPI_Datatype *msg, bool *made);

/* Post the send / receive of block `peer` (the peer's rank) with the user's datatypes. */
int tuna_a2av_isend_block(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req);
int tuna_a2av_irecv_block(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req);
/* Send block `peer` of large-count args: MPI_Isend into *req, or MPI_Send when req is NULL. */
int tuna_a2av_send_large(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req);
/* Post the receive from `src` and the send to `dst` if non-empty, appending to reqs[*n]. */
int tuna_a2av_post_pair(const tuna_a2av_args *a, int src, int dst, int tag, MPI_Request *reqs,
                        int *n);
/* Copy this rank's own block (sendbuf block `rank` to recvbuf block `rank`). */
int tuna_a2av_copy_self(const tuna_a2av_args *a);

/*
 * Byte-level view for algorithms that move blocks as raw bytes (Bruck family,
 * TuNA, hierarchical). For contiguous types the view points into the user's
 * buffers; otherwise send blocks are packed into, and receive blocks later
 * unpacked from, temporary buffers.
 */
typedef struct tuna_bytes_view {
    const char *sbase;          /* block j at sbase + soff[j], sbytes[j] bytes */
    const MPI_Aint *soff;
    size_t *sbytes;
    char *rbase;                /* block j at rbase + roff[j], rbytes[j] bytes (capacity) */
    const MPI_Aint *roff;
    size_t *rbytes;
    /* private */
    void *spack, *rpack;
    MPI_Aint *soff_own, *roff_own;
} tuna_bytes_view;

int tuna_bytes_view_open(const tuna_a2av_args *a, tuna_bytes_view *v);
/* Unpack received blocks (if needed) and release the view's memory. */
int tuna_bytes_view_close(const tuna_a2av_args *a, tuna_bytes_view *v, int rc);

/*
 * Radix-2 Bruck family helpers (src/alltoallv/bruck_common.c). "Slot" i of a
 * rank's working set holds the block travelling distance i (to rank+i before
 * the rounds, from rank-i after them); round k moves the slots with bit k set.
 */
int tuna_bruck_rounds(int P);                        /* ceil(log2 P); 0 for P = 1 */
int tuna_bruck_round_slots(int P, int k, int *idx);  /* slots of round k; <= P/2 of them */
static inline int tuna_bruck_rank(int me, long long off, int P)
{
    return (int)((((long long)me + off) % P + P) % P);
}
int tuna_bruck_padded_size(size_t nslots, size_t B, size_t *bytes);
void tuna_bruck_pad(const tuna_bytes_view *v, int P, int shift, size_t B, char *w);
void tuna_bruck_scan_out(const tuna_bytes_view *v, int P, int me, bool relative, size_t B,
                         const char *w, const unsigned char *upper);
void tuna_bruck_rotate(const char *in, char *out, int P, int me, size_t B, bool inverse);
int tuna_bruck_block_type(size_t bytes, MPI_Datatype *type);

/* Send / receive `bytes` raw bytes (any size, including > INT_MAX). */
int tuna_isend_bytes(const void *buf, size_t bytes, int peer, int tag, MPI_Comm comm,
                     MPI_Request *req);
int tuna_irecv_bytes(void *buf, size_t bytes, int peer, int tag, MPI_Comm comm,
                     MPI_Request *req);

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

/* MPI_Waitall returning the failed request's own error code (not MPI_ERR_IN_STATUS, which
 * MPI returns when any request fails and which says nothing about why). It completes the
 * requests TUNA_WAIT_CHUNK at a time, in order (statuses on the stack): a request of a later
 * chunk is completed only after every earlier one (the cost model prices that, model.c).
 * On a failure every request of the set is still completed before it returns the first
 * error (tuna_requests_complete; the rule is in requests.c): the caller may free or reuse
 * every buffer of the step, and no message of it stays in flight. */
#define TUNA_WAIT_CHUNK 32
int tuna_waitall(int n, MPI_Request *req);
/* The same completion, blocking (PMPI_Waitall) or not (PMPI_Testall: *flag = 0 while a
 * chunk is incomplete, nothing lost), the statuses in status[] if not NULL; *flag once every
 * request completed or a failure completed the rest (its own code returned). */
int tuna_requests_settle(int n, MPI_Request *req, MPI_Status *status, bool block, int *flag);
/* Complete every non-null request of req[0..n), ignoring their errors (all become
 * MPI_REQUEST_NULL): the error path of a step whose peers post their sides. */
void tuna_requests_complete(int n, MPI_Request *req);
/* End of a step that posted req[0..n) with outcome post_rc: tuna_waitall() if every post
 * succeeded, else the posted requests are completed and post_rc is returned. */
int tuna_requests_finish(int n, MPI_Request *req, int post_rc);
/* Count the request a post wrote to req[*n] (rc: the post's outcome) only if it was posted;
 * returns rc. A failed post leaves no request to complete. */
static inline int tuna_posted(int rc, int *n)
{
    if (rc == MPI_SUCCESS)
        (*n)++;
    return rc;
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

/* An intercommunicator (the vendor rows take those; tuna's own rows do not). */
static inline bool tuna_comm_is_inter(MPI_Comm comm)
{
    int inter = 0;
    return MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
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

/* The pieces of tuna_alltoallv() that a plan (src/plan/) runs once at init. */
/* Local argument checks; on success sinfo/rinfo and this rank's statistics in v. */
int tuna_a2av_check_args(const void *sendbuf, const int *sendcounts, const int *sdispls,
                         MPI_Datatype sendtype, const void *recvbuf, const int *recvcounts,
                         const int *rdispls, MPI_Datatype recvtype, int P, int me,
                         tuna_type_info *sinfo, tuna_type_info *rinfo,
                         long long v[TUNA_AGREE_N]);
/* Bytes of the in-place send copy. */
size_t tuna_a2av_inplace_bytes(const int *recvcounts, size_t rsize, int P);
/* Fill a's buffer fields (a->size set): byte displacements in disp[2P]; in place, the send
 * side is `copy` (copy_counts: P ints, needed when the receive type is not contiguous),
 * which tuna_a2av_pack_inplace() fills from the receive blocks before each run. */
void tuna_a2av_describe(tuna_a2av_args *a, const void *sendbuf, const int *sendcounts,
                        const int *sdispls, MPI_Datatype sendtype, const tuna_type_info *si,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        MPI_Datatype recvtype, const tuna_type_info *ri, MPI_Aint *disp,
                        char *copy, int *copy_counts);
int tuna_a2av_pack_inplace(const tuna_a2av_args *a, char *copy);
/*
 * The nonblocking front end's preparation (src/alltoallv/ialltoallv.c), all local: this
 * rank's checks and its contribution to the agreement (v), the byte displacements into disp
 * (2P entries), a's buffer fields (a->ctx, size, rank set). In place, *copy (and, for a
 * non-contiguous receive type, *copy_counts) are allocated here and packed from the receive
 * blocks; the caller frees them when the operation ends. Nothing is allocated on an error.
 */
int tuna_a2av_prepare(tuna_a2av_args *a, const void *sendbuf, const tuna_counts *sc,
                      MPI_Datatype sendtype, void *recvbuf, const tuna_counts *rcv,
                      MPI_Datatype recvtype, long long v[TUNA_AGREE_N], MPI_Aint *disp,
                      char **copy, int **copy_counts);

/* The library's own alltoallv (vendor, and the nonblocking call on a communicator tuna has
 * not set up): with sendbuf == recvbuf, MPI_ERR_BUFFER if this rank sends and receives data
 * (tuna_check_alias's rule), local; MPI_SUCCESS otherwise. */
int tuna_a2av_library_alias(const char *fn, const void *sendbuf, const void *recvbuf,
                            const tuna_counts *sc, const tuna_counts *rcv, MPI_Comm comm);

/* The running algorithm's parameter `name` (resolved: default applied, clamped). */
static inline long tuna_a2av_param(const tuna_a2av_args *a, const char *name)
{
    return tuna_param_get(a->info, a->param, name);
}

#endif /* TUNA_INTERNAL_H */
