/*
 * The allreduce family's internals: the normalised arguments, the registry row, the cost
 * models and auto's hand-over rule that table.c's rows name, and the engines and buffer
 * helpers shared by several algorithms. The algorithms' run functions are declared in
 * table.c, next to their rows (docs/contributing.md).
 */
#ifndef TUNA_ALLREDUCE_H
#define TUNA_ALLREDUCE_H

#include "../ring_recmul/ring_recmul.h"

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
    tuna_ctx *ctx;
    int rank, size;
    const tuna_algorithm_info *info;  /* the running row: its parameters by name */
    long param[TUNA_MAX_PARAMS];      /* resolved values, in the row's order */
} tuna_ar_args;

/* The running algorithm's parameter `name` (resolved). */
static inline long tuna_ar_param(const tuna_ar_args *a, const char *name)
{
    return tuna_param_get(a->info, a->param, name);
}

typedef int tuna_ar_run_fn(const tuna_ar_args *a);

/* A registry row: the algorithm, then how to run it. */
typedef struct tuna_ar_algorithm {
    tuna_algorithm desc;
    tuna_ar_run_fn *run; /* NULL for vendor and auto: decided before normalisation */
} tuna_ar_algorithm;

extern const tuna_ar_algorithm tuna_ar_table[];
extern const tuna_registry tuna_ar_registry;

/* Run `row` on a (whose param holds the row's resolved values). */
static inline int tuna_ar_run_row(const tuna_ar_algorithm *row, tuna_ar_args *a)
{
    a->info = &row->desc.info;
    return row->run(a);
}

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

/* Cost models of the rows (model.c; tuna_cost_fn), n = in->bytes of the vector; the ring
 * family is no candidate for a non-commutative op (it would run recursive-doubling). */
double tuna_ar_cost_ring(const tuna_profile *m, const tuna_select_input *in,
                         const tuna_algorithm_info *info, const long *param);
double tuna_ar_cost_kring(const tuna_profile *m, const tuna_select_input *in,
                          const tuna_algorithm_info *info, const long *param);
double tuna_ar_cost_recursive_doubling(const tuna_profile *m, const tuna_select_input *in,
                                       const tuna_algorithm_info *info, const long *param);
double tuna_ar_cost_recmul(const tuna_profile *m, const tuna_select_input *in,
                           const tuna_algorithm_info *info, const long *param);
double tuna_ar_cost_recmul_permuted(const tuna_profile *m, const tuna_select_input *in,
                                    const tuna_algorithm_info *info, const long *param);

/* Recursive multiplying engine with radix k (recursive doubling is k = 2). */
int tuna_ar_recmul_run(const tuna_ar_args *a, int k);
/* Folding steps of the recmul family (see tuna_fold): a member sends its vector to its
 * leader and receives the result; a leader reduces its members' vectors into rbuf in
 * rank order (receiving up to ntmp at a time into tmp[0..ntmp-1], n elements each, with
 * req[0..ntmp)) before the rounds and sends them the result afterwards (req: room for one
 * request per member). A failed step is recorded in *comm_rc and the steps go on, without
 * reducing; fold-in returns a failed reduction (local) at once. */
int tuna_ar_fold_member(const tuna_ar_args *a, const tuna_fold *f);
int tuna_ar_fold_in(const tuna_ar_args *a, const tuna_fold *f, char *const *tmp, int ntmp,
                    MPI_Request *req, int *comm_rc);
void tuna_ar_fold_out(const tuna_ar_args *a, const tuna_fold *f, MPI_Request *req,
                      int *comm_rc);

/* Temporary buffer for n elements of the type; *mem is what to free(). NULL on failure. */
char *tuna_ar_tmp(const tuna_ar_args *a, int n, void **mem);
/* Address of element i of buffer base. */
static inline char *tuna_ar_elem(const tuna_ar_args *a, char *base, MPI_Aint i)
{
    return base + i * a->extent;
}
/* inout = in op inout over n elements (MPI_Reduce_local's operand order). */
int tuna_ar_reduce(const tuna_ar_args *a, const void *in, void *inout, int n);
/* Copy n elements between buffers of the type (non-overlapping). */
int tuna_ar_copy(const tuna_ar_args *a, const void *src, void *dst, int n);

/*
 * Ring building blocks over m members (member i's left neighbour is rank
 * left, right neighbour is rank right) and m segments, segment s being
 * elements [off[s], off[s] + cnt[s]) of rbuf. Reduce-scatter: afterwards
 * member `me` holds segment (me + 1) % m reduced over the ring (commutative
 * ops only). Allgather: starting from that, every member holds all segments.
 * tmp holds at least max(cnt) elements. A failed step (a communication failure:
 * complete all the same) is recorded in *comm_rc unless an earlier one is, and the
 * steps go on without reducing (so the peers, who know nothing of it, finish
 * too); the reduce-scatter returns a failed reduction (local) at once.
 */
int tuna_ar_ring_reduce_scatter(const tuna_ar_args *a, int m, int me, int left, int right,
                                const MPI_Aint *off, const int *cnt, char *tmp, int tag,
                                int *comm_rc);
void tuna_ar_ring_allgather(const tuna_ar_args *a, int m, int me, int left, int right,
                            const MPI_Aint *off, const int *cnt, int tag, int *comm_rc);

#endif /* TUNA_ALLREDUCE_H */
