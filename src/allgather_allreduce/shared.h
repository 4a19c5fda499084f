/*
 * What the allgather and allreduce families share: the k-ring group rule, rank folding for
 * recursive multiplying when P is not a power of k, the in-place block permutation, auto's
 * grid over their one parameter, k, and the phases of their nonblocking calls around the
 * row (icoll.c).
 */
#ifndef TUNA_ALLGATHER_ALLREDUCE_SHARED_H
#define TUNA_ALLGATHER_ALLREDUCE_SHARED_H

#include "../core/op.h"
#include "../select/tuna_select.h"

/* The members that both families' normalised arguments (tuna_ag_args, tuna_ar_args) end
 * with: where and how the row runs. */
#define TUNA_AGAR_ARGS_RUN                                                                       \
    tuna_ctx *ctx;                                                                               \
    const tuna_transport *tp;        /* moves the call's data (src/transport/transport.h) */     \
    int rank, size;                                                                              \
    int tag_shift;                   /* added to every tag (tuna_op_tag_shift; 0: blocking) */   \
    const tuna_algorithm_info *info; /* the running row: its parameters by name */               \
    long param[TUNA_MAX_PARAMS]      /* resolved values, in the row's order */

/* Largest divisor of P that is <= k (at least 1): the k-ring group size rule. */
int tuna_coll_kring_group(int P, long k);

/*
 * Folding for recursive multiplying when P is not a power of k: Q = k^m is the
 * largest power of k not above P; the P ranks form Q groups of consecutive
 * ranks, the first P % Q groups one rank larger (P / Q + 1 ranks, at most k),
 * and the last rank of each group is its leader. Leaders run the m rounds on
 * group indices; the others send their data to the leader first and get the
 * result back at the end.
 */
typedef struct tuna_fold {
    int P, k;
    int Q, m;         /* Q = k^m groups, m rounds among the leaders */
    int base, rem;    /* group sizes: base + 1 for the first rem groups, then base */
    int group;        /* this rank's group */
    int first, last;  /* ranks of this rank's group; last is the leader */
} tuna_fold;

void tuna_fold_init(tuna_fold *f, int P, int k, int rank);
/* First rank of group g (g == Q gives P). */
int tuna_fold_start(const tuna_fold *f, int g);
/* Group of a rank. */
int tuna_fold_group_of(const tuna_fold *f, int rank);
/* Base-k digit reversal of g over m digits (an involution on [0, k^m)). */
int tuna_fold_reverse(const tuna_fold *f, int g);

/*
 * In-place block permutation: afterwards slot p holds the block that was in
 * slot src[p], for every p in [0, n) (src must be a permutation). Follows the
 * cycles of the permutation, moving every block exactly once, with one block
 * of temporary memory and n bytes of marks (never a second full-size buffer). The blocks
 * move through tp.
 */
int tuna_permute_blocks_inplace(const tuna_transport *tp, char *buf, size_t block, int n,
                                const int *src);

/* The one parameter "k" of the recursive-multiplying rows (the radix) and of the k-ring rows
 * (the group size), in both families' registries. */
#define TUNA_PARAM_K_RADIX {{"k", 2, TUNA_PARAM_P, 4, "radix, in [2, P]; larger values clamp to P"}}
#define TUNA_PARAM_K_GROUP                                                                       \
    {{"k", 2, TUNA_PARAM_P, TUNA_PARAM_SQRTP,                                                    \
      "group size, in [2, P]; larger values clamp to P, then lowered to the largest divisor of " \
      "P not above it"}}

/* A row of the allgather or allreduce table (table.c; tuna_ag_algorithm, tuna_ar_algorithm): a
 * row without parameters, and one whose one parameter is "k" (TUNA_PARAM_K_RADIX or
 * TUNA_PARAM_K_GROUP; auto's candidates from tuna_grid_k). memory_: TUNA_MEMORY_DEVICE where
 * the row serves device buffers (memkind.h), 0 where it does not. */
#define TUNA_AGAR_ROW(name_, description_, family_, cost_, memory_, step_)                       \
    {                                                                                            \
        .desc = {.info = {name_, description_, 0, {{0}}}, .family = family_, .cost = cost_,     \
                 .memory = memory_},                                                             \
        .step = step_                                                                            \
    }
#define TUNA_AGAR_ROW_K(name_, description_, k_param, family_, cost_, memory_, step_)           \
    {                                                                                            \
        .desc = {.info = {name_, description_, 1, k_param}, .family = family_, .cost = cost_,   \
                 .grid = tuna_grid_k, .memory = memory_},                                        \
        .step = step_                                                                            \
    }

/* auto's candidates of a row whose one parameter is the radix or group size "k": the radix
 * grid over [2, P] (tuna_grid_fn). */
void tuna_grid_k(const tuna_select_input *in, const tuna_algorithm_info *info,
                 tuna_candidates *out);

/*
 * auto's hand-over (tuna_registry.library_runs): whether the MPI library this process runs on
 * runs recursive doubling for short messages, as MPICH and Open MPI's coll/tuned do, and
 * recursive doubling (rd_time) is as good as the model's best choice (best_time). The
 * families add their size rules.
 */
bool tuna_library_runs_recursive_doubling(double rd_time, double best_time);

/* A named row's parameters (the blocking and nonblocking calls): opt's values for it resolved
 * for P ranks into param, and recorded in the call's statistics. */
static inline void tuna_coll_params_named(const tuna_algorithm_info *info, const tuna_options *opt,
                                          int P, long *param)
{
    tuna_params_resolve(info, opt->value, P, param);
    tuna_params_copy(tuna_stats_current.params, param);
}

/*
 * auto's choice for the blocking call and plans (tuna_ag_auto_choose, tuna_ar_auto_choose) of
 * reg's rows for `bytes` (the block, the vector) and whether the op commutes (allgather: true),
 * identical on every rank: the selector agreed, learning's last choice for these statistics,
 * else the model's (logged at level 2 on rank 0: `bytes` followed by `size_note`, " bytes"),
 * then learning's candidate (tuna_learn_collective: *learning).
 */
int tuna_coll_auto_choose(tuna_ctx *ctx, const tuna_registry *reg, double bytes, bool commute,
                          const char *size_note, tuna_choice *c, tuna_learn_class **learning);

/*
 * auto on device buffers that it stages (the MPI is not CUDA-aware; docs/gpu.md), blocking
 * calls and plans: the model's cheapest row of reg that declares device memory for `bytes`
 * (the block, the vector), `ring` where none is priced; recorded in the statistics (the
 * model's). No learning, no hand-over to the library (it cannot take device memory here).
 */
int tuna_coll_auto_device(tuna_ctx *ctx, const tuna_registry *reg, double bytes,
                          tuna_choice *c);

/*
 * A blocking call on device buffers that a row serves (memory_route.c let them through; the
 * front ends, dispatch.c): tuna_coll_device_begin gives the communicator's staging transport
 * (*tp) and, where `choose` (auto), auto's device row (*c; tuna_coll_auto_device), and clears
 * the transport's copy outcome; the row runs on *tp; tuna_coll_device_end then gives the
 * call's outcome: the row's failure, else a failed device copy (the transport's copies return
 * nothing), else MPI_SUCCESS.
 */
int tuna_coll_device_begin(tuna_ctx *ctx, const tuna_registry *reg, bool choose, double bytes,
                           const tuna_transport **tp, tuna_choice *c);
int tuna_coll_device_end(const tuna_transport *tp, int rc);

/*
 * auto's end in a blocking call (dispatch.c), its chosen row run with outcome rc: a candidate
 * of auto's learning timed from t0 (tuna_learn_after's answer); else, where auto settled on
 * the library's call (`library`) and the checks are local (not `collective`), the call kept
 * for the next with the same arguments (tuna_repeat_keep: given, the arguments, op: MPI_OP_NULL
 * for allgather).
 */
static inline __attribute__((always_inline)) int
tuna_coll_auto_end(tuna_ctx *ctx, tuna_collective coll, tuna_learn_class *learning, double t0,
                   int rc, bool collective, bool library, const tuna_options *given,
                   const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                   MPI_Datatype recvtype, MPI_Op op)
{
    ctx->learn_timing[coll] = learning != NULL;
    if (learning)
        return tuna_learn_after(ctx, learning, PMPI_Wtime() - t0, rc);
    /* settled on the library's call: the next call with these arguments goes straight to it */
    if (rc == MPI_SUCCESS && !collective && ctx->auto_last[coll].valid && library)
        tuna_repeat_keep(ctx, coll, given, sendbuf, sendcount, sendtype, recvcount, recvtype, op);
    return rc;
}

/*
 * A nonblocking allgather or allreduce around its row (tuna_iallgather, tuna_iallreduce;
 * docs/nonblocking.md): the library's call (vendor, auto's hand-over, an intercommunicator),
 * or under TUNA_ARGCHECK=collective one MPI_Iallreduce of the error flag and the
 * values every rank must hold alike, then the row's steps. The family's operation embeds it
 * after its engine record; its step calls tuna_icoll_step.
 */
typedef struct tuna_icoll {
    const char *name;              /* "iallgather", in messages */
    tuna_ctx *ctx;                 /* NULL: the library's call */
    int phase;
    bool agree, library;
    bool deferred;                 /* the communicator's set-up runs: the family defers */
    MPI_Comm lib_comm;             /* where the library's call travels (the private
                                      communicator where there is a context) */
    int local_rc;                  /* this rank's check (agreed under collective checks) */
    int tag_shift;
    int nsame;                     /* values every rank must hold alike, and their names */
    long long same[2];
    const char *const *names;
    long long v[5];                /* the agreement in flight */
    MPI_Request lib;               /* the library's call or the agreement */
    int (*post_library)(struct tuna_icoll *w);  /* posts into lib */
    int (*begin_row)(struct tuna_icoll *w);     /* the row's set-up and first step (answer) */
    tuna_step_fn *row_step;                     /* the row's later steps */
} tuna_icoll;

/* A start's opening (fn: "tuna_iallgather", in messages): req checked and cleared, the call's
 * options (tuna_call_begin: *opt), then the operation's record of `size` bytes, zeroed (free()
 * it); NULL with the error in *rc. */
static inline __attribute__((always_inline)) void *
tuna_icoll_open(tuna_collective coll, const char *fn, MPI_Comm comm, const tuna_options **opt,
                tuna_request *req, size_t size, int *rc)
{
    if (!req) {
        *rc = tuna_error_set(MPI_ERR_REQUEST, "%s: req is NULL", fn);
        return NULL;
    }
    *req = TUNA_REQUEST_NULL;
    if ((*rc = tuna_call_begin(coll, comm, opt)) != MPI_SUCCESS)
        return NULL;
    void *x = tuna_calloc(1, size);
    if (!x)
        *rc = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the operation", fn);
    return x;
}

/* Where a start of a row of `kind` goes (w->name set): w->deferred where comm's set-up is
 * running (begun here on a communicator tuna has not seen: the family hands its start to
 * tuna_setup_defer); the library's call (w->library; vendor, an intercommunicator, or auto
 * without an agreed selector: recorded in the statistics with its fallback) or tuna's rows
 * on w->ctx (the operation's tag shift taken, w->agree under TUNA_ARGCHECK=collective). */
int tuna_icoll_route(tuna_icoll *w, const tuna_registry *reg, tuna_row_kind kind,
                     MPI_Comm comm);
/* The start's end: this rank's error (w->local_rc) returned at once where nothing agrees on
 * it (op released, *req stays NULL); else the first step runs and *req is the operation. */
int tuna_icoll_launch(tuna_icoll *w, tuna_op *op, tuna_request *req);
/* The operation's step around the row. */
int tuna_icoll_step(tuna_icoll *w, tuna_op *op, int wait_rc);
/* The same for an operation whose row may run on a staging transport of its own (staged, with
 * transport tp; NULL: none): once done, a failed device copy (the transport's copies return
 * nothing) is the outcome where the row succeeded. */
int tuna_icoll_step_staged(tuna_icoll *w, tuna_op *op, int wait_rc,
                           const struct tuna_staged *staged, const tuna_transport *tp);

#endif /* TUNA_ALLGATHER_ALLREDUCE_SHARED_H */
