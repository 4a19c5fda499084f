/*
 * The NCCL path's rows (docs/nccl.md): one file per algorithm, each posting through the NCCL
 * transport (src/transport/nccl.h) only, in byte regions of the caller's device buffers.
 * Every step's posts are ordered so that the slot i of a rank and of its partner are each
 * other's (a receive from r-d next to the send to r+d): the transport may split a step's
 * group at any slot, at the same places on every rank (nccl.h).
 */
#ifndef TUNA_NCCL_ROWS_H
#define TUNA_NCCL_ROWS_H

#include "../core/tuna_internal.h"
#include "../allgather_allreduce/shared.h"
#include "../transport/nccl.h"

typedef struct tuna_nccl_args {
    const tuna_transport *tp; /* the call's NCCL transport (&t->table) */
    tuna_nccl_tp *t;          /* the same, for its temporaries */
    int rank, size;
    /* alltoallv / alltoall: counts and displacements in elements of esize bytes */
    const char *sbuf;
    char *rbuf;
    const size_t *scounts, *sdispls, *rcounts, *rdispls;
    size_t esize;
    bool uniform; /* alltoall: every count the same (no sizes to exchange) */
    /* allgather: bytes per rank */
    size_t block;
    /* allreduce: elements and their MPI type and op (host reduction in the stand-in build,
     * device kernels otherwise: the transport's reduce) */
    size_t count;
    MPI_Datatype mtype;
    MPI_Op mop;
    ncclDataType_t ntype; /* the same for NCCL's own call (vendor) */
    ncclRedOp_t nop;
    long k; /* the row's parameter, resolved for this P (1 when it has none) */
} tuna_nccl_args;

typedef int (*tuna_nccl_run_fn)(const tuna_nccl_args *a);

/* auto (auto.c) for allgather, allreduce and alltoall: which candidate a call runs, and
 * whether it is timed (learning). */
struct auto_class;
typedef struct tuna_nccl_auto_step {
    struct auto_class *cls;
    bool learning;
    int candidate;
    const tuna_options *opt; /* the candidate's options */
} tuna_nccl_auto_step;
int tuna_nccl_auto_begin(tuna_collective c, ncclComm_t comm, size_t bytes,
                         tuna_nccl_auto_step *step);
const char *tuna_nccl_auto_name(const tuna_nccl_auto_step *step);
/* v[0..n) replaced by its maximum over the ranks (NCCL's own allreduce on the call's stream,
 * then a host wait). */
int tuna_nccl_auto_agree_max(double *v, int n, tuna_nccl_tp *t);
/* After the candidate ran in `seconds`; the call that times the last candidate agrees. */
int tuna_nccl_auto_end(tuna_nccl_auto_step *step, double seconds, tuna_nccl_tp *t);
/* The candidate auto ran in this thread's last call (NULL: not auto), for the drop-in. */
extern _Thread_local const char *tuna_nccl_auto_ran;

/* Set by api.c when a call has passed its checks and its row starts posting (the drop-in
 * hands a call refused before that to NCCL's own). */
extern _Thread_local bool tuna_nccl_posted;

typedef struct tuna_nccl_row {
    const char *name;  /* the row of the MPI table with the same name (tuna_options) */
    const char *param; /* its parameter's key, or NULL */
    tuna_nccl_run_fn run;
} tuna_nccl_row;

/* Close the step's group (stream order: later posts see its data). */
static inline int tuna_nccl_step_end(const tuna_nccl_args *a)
{
    int flag;
    return tuna_tp_settle(a->tp, 0, NULL, NULL, true, &flag);
}

/* The step's end (tuna_nccl_step_end) after posts that returned rc: the first failure. */
static inline int tuna_nccl_step_close(const tuna_nccl_args *a, int rc)
{
    const int end = tuna_nccl_step_end(a);
    return rc != MPI_SUCCESS ? rc : end;
}

/* One slot pair: the receive of rbytes into rbuf from src, then (where it posted) the send
 * of sbytes at sbuf to dst. */
static inline int tuna_nccl_pair(const tuna_nccl_args *a, void *rbuf, size_t rbytes, int src,
                                 const void *sbuf, size_t sbytes, int dst)
{
    MPI_Request req;
    int rc = tuna_tp_irecv(a->tp, rbuf, rbytes, src, 0, MPI_COMM_NULL, &req);
    if (rc == MPI_SUCCESS)
        rc = tuna_tp_isend(a->tp, sbuf, sbytes, dst, 0, MPI_COMM_NULL, &req);
    return rc;
}

/* alltoallv's slot pair d (linear, pairwise): the block from r-d received, the block to r+d
 * sent. */
static inline int tuna_nccl_a2av_pair(const tuna_nccl_args *a, int d)
{
    const int P = a->size, src = (a->rank - d + P) % P, dst = (a->rank + d) % P;
    const size_t es = a->esize;
    return tuna_nccl_pair(a, a->rbuf + a->rdispls[src] * es, a->rcounts[src] * es, src,
                          a->sbuf + a->sdispls[dst] * es, a->scounts[dst] * es, dst);
}

/* The fold's first step (tuna_fold, the recursive-multiplying rows): every member sends
 * `bytes` at sbuf to its leader (f->last), which receives member m's at
 * rbuf + (m - f->first) * bytes. */
static inline int tuna_nccl_fold_in(const tuna_nccl_args *a, const tuna_fold *f, char *rbuf,
                                    const void *sbuf, size_t bytes)
{
    MPI_Request req;
    int rc = MPI_SUCCESS;
    if (a->rank == f->last)
        for (int m = f->first; m < f->last && rc == MPI_SUCCESS; m++)
            rc = tuna_tp_irecv(a->tp, rbuf + (size_t)(m - f->first) * bytes, bytes, m, 0,
                               MPI_COMM_NULL, &req);
    else
        rc = tuna_tp_isend(a->tp, sbuf, bytes, f->last, 0, MPI_COMM_NULL, &req);
    return rc;
}

/* The fold's last step: the leader sends `bytes` at buf to each member, which receives them
 * there. */
static inline int tuna_nccl_fold_out(const tuna_nccl_args *a, const tuna_fold *f, void *buf,
                                     size_t bytes)
{
    MPI_Request req;
    int rc = MPI_SUCCESS;
    if (a->rank == f->last)
        for (int m = f->first; m < f->last && rc == MPI_SUCCESS; m++)
            rc = tuna_tp_isend(a->tp, buf, bytes, m, 0, MPI_COMM_NULL, &req);
    else
        rc = tuna_tp_irecv(a->tp, buf, bytes, f->last, 0, MPI_COMM_NULL, &req);
    return rc;
}

/* inout = in op inout over n elements (the transport's reduce, INT_MAX elements at a time). */
static inline int tuna_nccl_reduce(const tuna_nccl_args *a, const void *in, void *inout, size_t n)
{
    const char *i = in;
    char *o = inout;
    while (n > 0) {
        int c = n > (size_t)INT_MAX ? INT_MAX : (int)n;
        int rc = tuna_tp_reduce(a->tp, i, o, c, a->mtype, a->mop);
        if (rc != MPI_SUCCESS)
            return rc;
        i += (size_t)c * a->esize;
        o += (size_t)c * a->esize;
        n -= (size_t)c;
    }
    return MPI_SUCCESS;
}

/*
 * allreduce's recursive-multiplying rows (plain and permuted) begin alike: the vector copied
 * into the result, the end for P = 1 or an empty vector (*done), the fold (radix a->k), the
 * leader's temporary (*tmp: room for k-1 vectors or its members' ones), and the members'
 * vectors folded into the leader's result. Returns the first failure.
 */
static inline int tuna_nccl_ar_fold_begin(const tuna_nccl_args *a, tuna_fold *f, char **tmp,
                                          bool *done)
{
    const int P = a->size, me = a->rank;
    const size_t V = a->count * a->esize;
    tuna_tp_copy(a->tp, a->rbuf, a->sbuf, V);
    int rc = tuna_nccl_step_end(a);
    *tmp = NULL;
    *done = P == 1 || rc != MPI_SUCCESS || V == 0;
    if (*done)
        return rc;
    tuna_fold_init(f, P, (int)(a->k < P ? a->k : P), me);
    const bool leader = me == f->last;
    const int nt = f->k - 1 > f->last - f->first ? f->k - 1 : f->last - f->first;
    if (leader)
        rc = tuna_nccl_tp_alloc(a->t, (size_t)nt * V, (void **)tmp);
    if (f->first < f->last && rc == MPI_SUCCESS) {
        rc = tuna_nccl_fold_in(a, f, *tmp, a->rbuf, V);
        rc = tuna_nccl_step_close(a, rc);
        for (int m = f->first; leader && m < f->last && rc == MPI_SUCCESS; m++)
            rc = tuna_nccl_reduce(a, *tmp + (size_t)(m - f->first) * V, a->rbuf, a->count);
    }
    return rc;
}

/* A recursive-multiplying row's rounds among the fold's leaders, run on a leader (this rank
 * leads its group of f): its result in a->rbuf, tmp room for k-1 vectors, rc the outcome so
 * far; returns the outcome. */
typedef int tuna_nccl_ar_rounds_fn(const tuna_nccl_args *a, const tuna_fold *f, char *tmp,
                                   int rc);

/* The recursive-multiplying rows' one driver: the fold's opening above, the leaders' rounds,
 * then the result sent from each leader to its members and the temporary freed. */
static inline int tuna_nccl_ar_folded(const tuna_nccl_args *a, tuna_nccl_ar_rounds_fn *rounds)
{
    tuna_fold f;
    char *tmp;
    bool done;
    int rc = tuna_nccl_ar_fold_begin(a, &f, &tmp, &done);
    if (done)
        return rc;
    if (a->rank == f.last)
        rc = rounds(a, &f, tmp, rc);
    if (f.first < f.last && rc == MPI_SUCCESS) {
        rc = tuna_nccl_fold_out(a, &f, a->rbuf, a->count * a->esize);
        rc = tuna_nccl_step_close(a, rc);
    }
    tuna_nccl_tp_free(a->t, tmp);
    return tuna_nccl_step_close(a, rc);
}

int tuna_nccl_a2a_vendor(const tuna_nccl_args *a);
int tuna_nccl_ag_vendor(const tuna_nccl_args *a);
int tuna_nccl_ar_vendor(const tuna_nccl_args *a);
int tuna_nccl_a2av_linear(const tuna_nccl_args *a);
int tuna_nccl_a2av_pairwise(const tuna_nccl_args *a);
int tuna_nccl_a2av_tuna(const tuna_nccl_args *a);
int tuna_nccl_a2av_coalesced(const tuna_nccl_args *a);
/* Bytes of one element of an NCCL type; 0 for one NCCL does not have (api.c). */
size_t tuna_nccl_type_bytes(ncclDataType_t t);
/* Ranks per node (NVLink domain) of the call's communicator, node-major and equal, else 0
 * (nodes.c). */
int tuna_nccl_nodes(tuna_nccl_tp *t, int *Q);
int tuna_nccl_ag_ring(const tuna_nccl_args *a);
int tuna_nccl_ag_kring(const tuna_nccl_args *a);
int tuna_nccl_ag_recmul(const tuna_nccl_args *a);
int tuna_nccl_ag_recursive_doubling(const tuna_nccl_args *a);
int tuna_nccl_ag_recmul_permuted(const tuna_nccl_args *a);
int tuna_nccl_ar_ring(const tuna_nccl_args *a);
int tuna_nccl_ar_kring(const tuna_nccl_args *a);
int tuna_nccl_ar_recmul(const tuna_nccl_args *a);
int tuna_nccl_ar_recursive_doubling(const tuna_nccl_args *a);
int tuna_nccl_ar_recmul_permuted(const tuna_nccl_args *a);

#endif /* TUNA_NCCL_ROWS_H */
