/*
 * The allreduce family's internals: the normalised arguments, the operation its rows' step
 * forms run on, the registry row, the cost models and auto's hand-over rule that table.c's
 * rows name, and the engines and buffer helpers shared by several algorithms. The
 * algorithms' step functions are declared in table.c, next to their rows
 * (docs/contributing.md).
 */
#ifndef TUNA_ALLREDUCE_H
#define TUNA_ALLREDUCE_H

#include "../core/op.h"
#include "../allgather_allreduce/shared.h"

/*
 * Normalised allreduce: `rbuf` holds this rank's input on entry (the core
 * copies sendbuf there unless MPI_IN_PLACE) and must hold the result on exit.
 * Element i is at rbuf + i * extent, with the user's datatype.
 */
typedef struct tuna_ar_args {
    char *rbuf;
    int count;
    MPI_Datatype type;
    MPI_Aint extent, true_lb, true_extent;
    MPI_Op op;
    bool commute;               /* MPI_Op_commutative */
    bool contig;                /* elements are extent == size contiguous bytes */
    TUNA_AGAR_ARGS_RUN;
} tuna_ar_args;

/* The running algorithm's parameter `name` (resolved). */
static inline long tuna_ar_param(const tuna_ar_args *a, const char *name)
{
    return tuna_param_get(a->info, a->param, name);
}

/*
 * An allreduce operation (src/core/op.h; docs/nonblocking.md): the engine's record, the
 * normalised arguments and where the row's schedule is between its steps (small counters
 * here, a row's buffers at `state`, freed by state_free when the operation ends). The
 * blocking call, tuna_iallreduce and plans run the same steps on it.
 */
typedef struct tuna_ar_op tuna_ar_op;
/* A row's step (tuna_step_fn on the allreduce operation). */
typedef int tuna_ar_step_fn(tuna_ar_op *o, int wait_rc);
struct tuna_ar_op {
    tuna_op op;                 /* first member: the engine's view */
    tuna_ar_args a;
    const struct tuna_ar_algorithm *row;
    tuna_ar_step_fn *run;       /* the steps that run: the row's (the ring rows run recursive
                                   doubling's for a non-commutative op) */
    int phase;                  /* the schedule's position (0: not started) */
    int i, hi;                  /* counters: rounds posted, the fold-in's batch */
    MPI_Request pair[2];        /* the rows with at most two requests in flight */
    MPI_Request *req;           /* the recmul family's 2k requests */
    tuna_fold f;
    char *const *fold_tmp;      /* the fold-in's receive buffers (fold_ntmp of them) */
    int fold_ntmp;
    void *state;
    void (*state_free)(tuna_ar_op *o);
};

/* A registry row: the algorithm, then its step form (every form runs it). */
typedef struct tuna_ar_algorithm {
    tuna_algorithm desc;
    tuna_ar_step_fn *step; /* NULL for vendor and auto: decided before normalisation */
} tuna_ar_algorithm;

extern const tuna_ar_algorithm tuna_ar_table[];

/* The end of a row's state_free, the state's own buffers freed: the state freed (NULL: none),
 * the operation left without one. */
static inline void tuna_ar_state_release(tuna_ar_op *o)
{
    free(o->state);
    o->state = NULL;
    o->state_free = NULL;
}
extern const tuna_registry tuna_ar_registry;

/*
 * The operation for `row` (a->param: its resolved values, a->count > 0 elements of a->type;
 * the rest of *a is filled here) on checked arguments: the datatype's layout, the input
 * copied into the receive buffer unless MPI_IN_PLACE (local). o->op keeps what the caller set
 * (its step: tuna_ar_op_step or one that calls it). tuna_op_run (blocking) or tuna_op_start
 * (nonblocking, plans) then runs it; it frees its buffers when it finishes.
 */
int tuna_ar_op_setup(tuna_ar_op *o, const tuna_ar_algorithm *row, const tuna_ar_args *a,
                     const void *sendbuf);
/* The operation's step (the engine's op->step after setup; tuna_iallreduce's steps call it). */
int tuna_ar_op_step(tuna_op *op, int wait_rc);

/* The blocking call's local argument checks (dispatch.c), for the plans' init. */
int tuna_ar_check_args(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type,
                       MPI_Op op, int me, int *tsize);

/* vendor: MPI_Allreduce's own implementation (PMPI), any communicator. */
int tuna_ar_vendor(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm);
/* auto's choice for a vector of `bytes` (and the statistics record of it); a choice whose
 * row has no run function is the library's own MPI_Allreduce. *learning: the class of
 * auto's learning whose candidate this is (time the call, then tuna_learn_after), or NULL;
 * learning NULL: no learning (nonblocking calls). */
int tuna_ar_auto_choose(tuna_ctx *ctx, double bytes, bool commute, tuna_choice *c,
                        tuna_learn_class **learning);
/* auto: whether the MPI library runs the model's choice itself (the registry's hook). */
bool tuna_ar_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time);

/* Cost models of the rows (model.c; tuna_cost_model), n = in->bytes of the vector; the ring
 * family is no candidate for a non-commutative op (it would run recursive-doubling). */
tuna_cost_model tuna_ar_cost_ring, tuna_ar_cost_kring, tuna_ar_cost_recursive_doubling,
    tuna_ar_cost_recmul, tuna_ar_cost_recmul_permuted;

/*
 * The recursive multiplying schedule with folding as steps (see tuna_fold): a member sends
 * its vector to its leader, then receives the result; a leader reduces its members' vectors
 * into rbuf in rank order (receiving up to o->fold_ntmp at a time into o->fold_tmp, which
 * `begin` sets) before the rounds and sends them the result afterwards. `rounds` is the
 * rounds' form: recmul's on whole vectors, or recmul-permuted's reduce-scatter and allgather.
 * A failed exchange is recorded in o->op.comm_rc and the steps go on without reducing (so the
 * peers, who know nothing of it, finish too); a failed reduction or allocation (local) ends
 * the schedule at once.
 */
typedef struct tuna_ar_rounds {
    int (*begin)(tuna_ar_op *o);                  /* a leader, before the fold-in */
    int (*placed)(tuna_ar_op *o);                 /* after the fold-in */
    /* Post the next round into o->req (*n requests; *post_rc its outcome), or false when no
     * round is left. */
    bool (*post)(tuna_ar_op *o, int *n, int *post_rc);
    int (*received)(tuna_ar_op *o);               /* a round complete: its reduction (the
                                                     data is void once o->op.comm_rc is
                                                     set) */
    int (*end)(tuna_ar_op *o);                    /* after the rounds, before the fold-out */
    const char *name;                             /* in failure messages */
    int per_level;                                /* rounds per power of k (statistics) */
} tuna_ar_rounds;
int tuna_ar_recmul_steps(tuna_ar_op *o, int wait_rc, int k, const tuna_ar_rounds *rounds);
/* recmul's steps with radix k (recursive doubling: k = 2; the ring rows' non-commutative
 * fallback). */
int tuna_ar_recmul_k_step(tuna_ar_op *o, int wait_rc, int k);

/* Post a send (send) or receive of n elements of the type: typed where the transport takes
 * MPI datatypes (MPI on host memory), else their n * extent bytes (the staging transport,
 * which memory_route.c gives predefined types without gaps only). Inlined: the host path's
 * post stays one MPI call (the per-call budget, docs/results/local.md). */
static inline __attribute__((always_inline)) int
tuna_ar_post(const tuna_ar_args *a, bool send, void *buf, int n, int peer, int tag,
             MPI_Request *req)
{
    if (tuna_tp_is_mpi_host(a->tp) || tuna_tp_takes_datatypes(a->tp))
        return send ? tuna_tp_isend_typed(a->tp, buf, n, a->type, peer, tag, a->ctx->comm, req)
                    : tuna_tp_irecv_typed(a->tp, buf, n, a->type, peer, tag, a->ctx->comm, req);
    return tuna_tp_post_bytes(a->tp, send, buf, (size_t)n * (size_t)a->extent, peer, tag,
                              a->ctx->comm, req);
}
static inline int tuna_ar_isend(const tuna_ar_args *a, const void *buf, int n, int peer, int tag,
                                MPI_Request *req)
{
    return tuna_ar_post(a, true, (void *)buf, n, peer, tag, req);
}
static inline int tuna_ar_irecv(const tuna_ar_args *a, void *buf, int n, int peer, int tag,
                                MPI_Request *req)
{
    return tuna_ar_post(a, false, buf, n, peer, tag, req);
}

/* Temporary buffer for n elements of the type; *mem is what to free(). NULL on failure. */
char *tuna_ar_tmp(const tuna_ar_args *a, int n, void **mem);
/* Address of element i of buffer base. */
static inline char *tuna_ar_elem(const tuna_ar_args *a, char *base, MPI_Aint i)
{
    return base + i * a->extent;
}
/* inout = in op inout over n elements (MPI_Reduce_local's operand order). */
int tuna_ar_reduce(const tuna_ar_args *a, const void *in, void *inout, int n);
/* Copy n elements between buffers of the type (non-overlapping); a derived type's copy is a
 * message to the rank itself (local: it completes inside the call). */
int tuna_ar_copy(const tuna_ar_args *a, const void *src, void *dst, int n);

/*
 * The ring rows' schedule: phases of ring rounds over m members (member i's left neighbour
 * is rank left, right neighbour rank right) and m segments, segment s being elements
 * [off[s], off[s] + cnt[s]) of rbuf. A reduce-scatter phase leaves member `me` holding
 * segment (me + 1) % m reduced over the ring (commutative ops only); an allgather phase
 * starting from that leaves every member holding all segments. tmp holds at least max(cnt)
 * elements. One round per step; a failed round (complete all the same) is recorded and the
 * rounds go on without reducing; a failed reduction (local) ends them.
 */
typedef struct tuna_ar_ring_phase {
    int m, me, left, right;
    const MPI_Aint *off;
    const int *cnt;
    int tag;
    bool reduce;                /* reduce-scatter (else allgather) */
} tuna_ar_ring_phase;
typedef struct tuna_ar_ring_state {
    tuna_ar_ring_phase phase[4];
    int nphases;
    char *tmp;
    void *tmp_mem;              /* tmp's allocation */
    MPI_Aint *off;              /* the phases' offsets and counts */
    int *cnt;
} tuna_ar_ring_state;
/* The ring rows' steps on o->state (a tuna_ar_ring_state the row set up). */
int tuna_ar_ring_phases_step(tuna_ar_op *o, int wait_rc);
/* The ring state's state_free. */
void tuna_ar_ring_state_free(tuna_ar_op *o);
/* A ring row's first step: recursive doubling for a non-commutative op (logged, naming
 * `row`), else the ring state at o->state with room for tmp_count elements in tmp and nindex
 * offsets and counts. false: the step is decided (*r its answer); true: the row fills the
 * phases, then runs tuna_ar_ring_phases_step. */
bool tuna_ar_ring_begin(tuna_ar_op *o, int wait_rc, const char *row, int tmp_count, int nindex,
                        int *r);
/* Recursive doubling's steps (the ring rows' fallback for non-commutative ops). */
tuna_ar_step_fn tuna_ar_recursive_doubling_step;

#endif /* TUNA_ALLREDUCE_H */
