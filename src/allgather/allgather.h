/*
 * The allgather family's internals: the normalised arguments, the operation its rows' step
 * forms run on, the registry row, the cost models and auto's hand-over rule that table.c's
 * rows name, and the engines shared by several algorithms. The algorithms' step functions
 * are declared in table.c, next to their rows (docs/contributing.md).
 */
#ifndef TUNA_ALLGATHER_H
#define TUNA_ALLGATHER_H

#include "../core/op.h"
#include "../allgather_allreduce/shared.h"

/*
 * Normalised allgather: the result is built as P blocks of `block` raw bytes
 * in `buf` (block j at buf + j * block), which is the caller's receive buffer
 * for contiguous receive types and a packed copy otherwise. On entry this
 * rank's own block is already in place; algorithms fill the others.
 */
typedef struct tuna_ag_args {
    char *buf;
    size_t block;
    TUNA_AGAR_ARGS_RUN;
} tuna_ag_args;

/* The running algorithm's parameter `name` (resolved). */
static inline long tuna_ag_param(const tuna_ag_args *a, const char *name)
{
    return tuna_param_get(a->info, a->param, name);
}

/*
 * An allgather operation (src/core/op.h; docs/nonblocking.md): the engine's record, the
 * normalised arguments, where the row's schedule is between its steps, and the receive
 * buffer a packed result goes to at the end. The blocking call, tuna_iallgather and plans
 * run the same steps on it.
 */
typedef struct tuna_ag_op {
    tuna_op op;                   /* first member: the engine's view */
    tuna_ag_args a;
    const struct tuna_ag_algorithm *row;
    int phase;                    /* the row's position (0: not started) */
    int i, d, L;                  /* the row's counters: round, distance, range length */
    MPI_Request pair[3];          /* the rows with at most three requests in flight */
    MPI_Request *req;             /* the recmul family's 2k requests */
    MPI_Datatype type[2];         /* kring's block and column types */
    tuna_fold f;
    int *poff, *src;              /* recmul-permuted's layout and permutation */
    /* A non-contiguous receive type: the packed result (a.buf) is unpacked into these. */
    char *work;
    void *user;
    int rcount;
    MPI_Datatype rtype;
    MPI_Aint rext;
    size_t rsize;
} tuna_ag_op;

/* A row's step (tuna_step_fn on the allgather operation). */
typedef int tuna_ag_step_fn(tuna_ag_op *o, int wait_rc);

/* A registry row: the algorithm, then its step form (every form runs it). */
typedef struct tuna_ag_algorithm {
    tuna_algorithm desc;
    tuna_ag_step_fn *step; /* NULL for vendor and auto: decided before normalisation */
} tuna_ag_algorithm;

extern const tuna_ag_algorithm tuna_ag_table[];
extern const tuna_registry tuna_ag_registry;

/*
 * The operation for `row` (param: its resolved values) on checked arguments of `block` > 0
 * bytes: the own block packed into its slot (of a packed copy for non-contiguous receive
 * types), local; tp moves the data (MPI on host memory, or the staging transport for device
 * buffers with contiguous types: src/transport/cuda_staged.c); o->op keeps what the caller set (its step: tuna_ag_op_step or one that calls
 * it). On failure nothing is left to free. tuna_op_run (blocking) or tuna_op_start
 * (nonblocking, plans) then runs it; it frees its buffers when it finishes.
 */
int tuna_ag_op_setup(tuna_ag_op *o, tuna_ctx *ctx, const tuna_ag_algorithm *row,
                     const long *param, int tag_shift, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     size_t block, const tuna_transport *tp);
/* The operation's step (the engine's op->step after setup; tuna_iallgather's steps call it). */
int tuna_ag_op_step(tuna_op *op, int wait_rc);

/* The blocking call's local argument checks (dispatch.c), for the plans' init. */
int tuna_ag_check_args(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       const void *recvbuf, int recvcount, MPI_Datatype recvtype, int P, int me,
                       size_t *bytes);

/* vendor: MPI_Allgather's own implementation (PMPI), any communicator. */
int tuna_ag_vendor(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/* auto's choice for blocks of `block` bytes (and the statistics record of it); a choice
 * whose row has no step function is the library's own MPI_Allgather. *learning: the class
 * of auto's learning whose candidate this is (time the call, then tuna_learn_after), or NULL;
 * learning NULL: no learning (nonblocking calls). */
int tuna_ag_auto_choose(tuna_ctx *ctx, size_t block, tuna_choice *c,
                        tuna_learn_class **learning);
/* auto: whether the MPI library runs the model's choice itself (the registry's hook). */
bool tuna_ag_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time);

/* Cost models of the rows (model.c; tuna_cost_model), n = in->bytes of one rank's block. */
tuna_cost_model tuna_ag_cost_ring, tuna_ag_cost_kring, tuna_ag_cost_recursive_doubling,
    tuna_ag_cost_recmul, tuna_ag_cost_recmul_permuted;

/* The recursive multiplying schedule with radix k as steps (recursive doubling is k = 2).
 * Folding (see tuna_fold): a non-leader sends its block to its leader and receives
 * everything else back; a leader collects its members' blocks into their slots before the
 * rounds and sends them the result afterwards. `rounds` is the rounds' form: recmul's
 * distance-doubling rounds on the final layout, or recmul-permuted's (recmul_permuted.c).
 * Communication failures (mismatched block sizes: a truncated message) do not stop the
 * leaders' steps: a failed step is complete when it is recorded in o->op.comm_rc, and the
 * remaining steps run, so the peers, which know nothing of it, finish too; the first failure
 * is the outcome. The rows do the same with their rounds. */
typedef struct tuna_ag_rounds {
    const char *name;                      /* "recmul allgather", in failure messages */
    int (*begin)(tuna_ag_op *o);           /* a leader, before the fold-in: its state */
    void (*placed)(tuna_ag_op *o);         /* after the fold-in: the group's blocks placed */
    /* Post the next round into o->req (*n requests; returns the post outcome), or false
     * when no round is left. */
    bool (*post)(tuna_ag_op *o, int *n, int *post_rc);
    int (*end)(tuna_ag_op *o);             /* after the rounds, before the fold-out */
} tuna_ag_rounds;
int tuna_ag_recmul_steps(tuna_ag_op *o, int wait_rc, int k, const tuna_ag_rounds *rounds);
/* recmul's steps with radix k (recursive doubling: k = 2). */
int tuna_ag_recmul_k_step(tuna_ag_op *o, int wait_rc, int k);

/*
 * Layout left by recmul-permuted allgather before its final permutation:
 * slot_of[r] is the block slot holding rank r's block. Exposed for the tests.
 */
int tuna_ag_permuted_layout(int P, int k, int *slot_of);

#endif /* TUNA_ALLGATHER_H */
