/*
 * The allgather family's internals: the normalised arguments, the registry row, the cost
 * models and auto's hand-over rule that table.c's rows name, and the engines shared by
 * several algorithms. The algorithms' run functions are declared in table.c, next to their
 * rows (docs/contributing.md).
 */
#ifndef TUNA_ALLGATHER_H
#define TUNA_ALLGATHER_H

#include "../ring_recmul/ring_recmul.h"

/*
 * Normalised allgather: the result is built as P blocks of `block` raw bytes
 * in `buf` (block j at buf + j * block), which is the caller's receive buffer
 * for contiguous receive types and a packed copy otherwise. On entry this
 * rank's own block is already in place; algorithms fill the others.
 */
typedef struct tuna_ag_args {
    char *buf;
    size_t block;
    tuna_ctx *ctx;
    int rank, size;
    const tuna_algorithm_info *info;  /* the running row: its parameters by name */
    long param[TUNA_MAX_PARAMS];      /* resolved values, in the row's order */
} tuna_ag_args;

/* The running algorithm's parameter `name` (resolved). */
static inline long tuna_ag_param(const tuna_ag_args *a, const char *name)
{
    return tuna_param_get(a->info, a->param, name);
}

typedef int tuna_ag_run_fn(const tuna_ag_args *a);

/* A registry row: the algorithm, then how to run it. */
typedef struct tuna_ag_algorithm {
    tuna_algorithm desc;
    tuna_ag_run_fn *run; /* NULL for vendor and auto: decided before normalisation */
} tuna_ag_algorithm;

extern const tuna_ag_algorithm tuna_ag_table[];
extern const tuna_registry tuna_ag_registry;

/* Run `row` on a (whose param holds the row's resolved values). */
static inline int tuna_ag_run_row(const tuna_ag_algorithm *row, tuna_ag_args *a)
{
    a->info = &row->desc.info;
    return row->run(a);
}

/* The blocking call's local argument checks (dispatch.c), for the plans' init. */
int tuna_ag_check_args(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       const void *recvbuf, int recvcount, MPI_Datatype recvtype, int P, int me,
                       size_t *bytes);

/* vendor: MPI_Allgather's own implementation (PMPI), any communicator. */
int tuna_ag_vendor(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/* auto's choice for blocks of `block` bytes (and the statistics record of it); a choice
 * whose row has no run function is the library's own MPI_Allgather. *learning: the class
 * of auto's learning whose candidate this is (time the call, then tuna_learn_after), or NULL. */
int tuna_ag_auto_choose(tuna_ctx *ctx, size_t block, tuna_choice *c,
                        tuna_learn_class **learning);
/* auto: whether the MPI library runs the model's choice itself (the registry's hook). */
bool tuna_ag_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time);

/* Cost models of the rows (model.c; tuna_cost_fn), n = in->bytes of one rank's block. */
double tuna_ag_cost_ring(const tuna_profile *m, const tuna_select_input *in,
                         const tuna_algorithm_info *info, const long *param);
double tuna_ag_cost_kring(const tuna_profile *m, const tuna_select_input *in,
                          const tuna_algorithm_info *info, const long *param);
double tuna_ag_cost_recursive_doubling(const tuna_profile *m, const tuna_select_input *in,
                                       const tuna_algorithm_info *info, const long *param);
double tuna_ag_cost_recmul(const tuna_profile *m, const tuna_select_input *in,
                           const tuna_algorithm_info *info, const long *param);
double tuna_ag_cost_recmul_permuted(const tuna_profile *m, const tuna_select_input *in,
                                    const tuna_algorithm_info *info, const long *param);

/* Recursive multiplying engine with radix k (recursive doubling is k = 2). */
int tuna_ag_recmul_run(const tuna_ag_args *a, int k);
/* Folding steps of the recmul family (see tuna_fold): a non-leader sends its block to
 * its leader and receives everything else back; a leader collects its members' blocks
 * into their slots before the rounds and sends them the result afterwards (req: room for
 * two requests per member).
 * Communication failures (mismatched block sizes: a truncated message) do not stop the
 * leaders' steps: a failed step is complete (tuna_requests_finish) when it is recorded in
 * *comm_rc, and the remaining steps run, so the peers, which know nothing of it, finish
 * too; the first failure is returned at the end. The rows do the same with their rounds. */
int tuna_ag_fold_member(const tuna_ag_args *a, const tuna_fold *f);
void tuna_ag_fold_in(const tuna_ag_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc);
void tuna_ag_fold_out(const tuna_ag_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc);

/*
 * Layout left by recmul-permuted allgather before its final permutation:
 * slot_of[r] is the block slot holding rank r's block. Exposed for the tests.
 */
int tuna_ag_permuted_layout(int P, int k, int *slot_of);

#endif /* TUNA_ALLGATHER_H */
