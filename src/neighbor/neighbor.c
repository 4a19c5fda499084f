/*
 * tuna_neighbor_alltoallv, tuna_ineighbor_alltoallv and their large-count forms (_c): the front
 * end (docs/algorithms-neighbor.md).
 * The call is checked and described (call.c), then the chosen row's steps run: blocking here
 * (tuna_op_run), nonblocking from progress (tuna_op_start). vendor, and auto outside a plan,
 * are the library's own call: node_aware pays a pattern exchange inside each node on every
 * call, which only a persistent operation (plan_neighbor.c) does once; auto there chooses.
 */
#include "neighbor.h"
#include "memkind.h"

#include <stdlib.h>

void tuna_nbr_op_clear(tuna_nbr_op *o)
{
    tuna_nbr_agg_free(o->agg);
    tuna_nbr_rounds_free(o->rounds);
    free(o->req);
    free(o->pend);
    tuna_nbr_call_free(o->c);
    o->agg = NULL;
    o->rounds = NULL;
    o->data_stage = 0;
    o->req = o->pend = NULL;
    o->c = NULL;
}

void tuna_nbr_op_rewind(tuna_nbr_op *o)
{
    o->stage = o->data_stage;
    o->npend = 0;
}

/* The row a call runs: the options' (resolved at P), with vendor for auto outside a plan. */
static const tuna_nbr_algorithm *row_of(const tuna_options *opt, int P, long param[])
{
    const tuna_nbr_algorithm *alg = &tuna_nbr_table[opt->algorithm];
    if (alg->desc.kind == TUNA_ROW_AUTO)
        alg = &tuna_nbr_table[tuna_registry_find_kind(&tuna_nbr_registry, TUNA_ROW_VENDOR)];
    tuna_params_resolve(&alg->desc.info, opt->value, P, param);
    return alg;
}

/* A call's counts as the caller gave them: the int form's, or the large-count form's. */
typedef struct nbr_counts {
    bool large;
    tuna_counts send, recv;
} nbr_counts;

static int call_of(const char *fn, const void *sendbuf, const nbr_counts *k, MPI_Datatype st,
                   void *recvbuf, MPI_Datatype rt, MPI_Comm comm, tuna_nbr_call **c,
                   bool *library)
{
    return tuna_nbr_call_make(fn, sendbuf, &k->send, st, recvbuf, &k->recv, rt, comm, c,
                              library);
}

/* Whether the library has the large-count calls (MPI 4): decided by the build, the same on
 * every rank. Where it has not, tuna's linear row serves their vendor and auto. */
#if defined(TUNA_HAVE_MPI_NEIGHBOR_ALLTOALLV_C) && defined(TUNA_HAVE_MPI_INEIGHBOR_ALLTOALLV_C)
#define LIBRARY_HAS_LARGE true
#else
#define LIBRARY_HAS_LARGE false
#endif

/* The library's blocking call on the caller's arguments (never the large-count form where
 * LIBRARY_HAS_LARGE is false). */
static int library_blocking(const void *sb, const nbr_counts *k, MPI_Datatype st, void *rb,
                            MPI_Datatype rt, MPI_Comm comm)
{
#if LIBRARY_HAS_LARGE
    if (k->large)
        return tuna_library_result(PMPI_Neighbor_alltoallv_c(sb, k->send.nl, k->send.dl, st, rb,
                                                             k->recv.nl, k->recv.dl, rt, comm),
                                   "PMPI_Neighbor_alltoallv_c");
#endif
    return tuna_library_result(PMPI_Neighbor_alltoallv(sb, k->send.n, k->send.d, st, rb,
                                                       k->recv.n, k->recv.d, rt, comm),
                               "PMPI_Neighbor_alltoallv");
}

/* The large-count form where the library has none: tuna's linear row (the libraries'
 * exchange) serves vendor and auto; device buffers cannot be served. */
static const tuna_nbr_algorithm *no_library_row(const char *fn, bool host, int *rc)
{
    if (!host) {
        *rc = tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                             "%s: this MPI library has no MPI_Neighbor_alltoallv_c to take "
                             "device buffers",
                             fn);
        return NULL;
    }
    return &tuna_nbr_table[tuna_algorithm_find(TUNA_NEIGHBOR_ALLTOALLV, "linear")];
}

static int neighbor_blocking(const char *fn, const void *sendbuf, const nbr_counts *k,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Datatype recvtype,
                             MPI_Comm comm, const tuna_options *opt)
{
    const bool host = tuna_memory_kinds(sendbuf, recvbuf) == TUNA_MEMORY_HOST;
    int rc = tuna_call_begin(TUNA_NEIGHBOR_ALLTOALLV, comm, &opt);
    if (rc != MPI_SUCCESS)
        return rc;
    const double t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    int P = 0;
    TUNA_MPI_CHECK(PMPI_Comm_size(comm, &P));
    long param[TUNA_MAX_PARAMS] = {0};
    const tuna_nbr_algorithm *alg = row_of(opt, P, param);
    tuna_nbr_call *c = NULL;
    bool library = !host || !alg->step;
    if (library && k->large && !LIBRARY_HAS_LARGE) {
        if (!(alg = no_library_row(fn, host, &rc)))
            return rc;
        library = false; /* linear: no parameters */
    }
    if (!library) {
        tuna_ctx *ctx;
        bool collective;
        rc = tuna_coll_context(comm, alg->desc.info.name, &ctx, &collective);
        if (rc == MPI_SUCCESS)
            rc = call_of(fn, sendbuf, k, sendtype, recvbuf, recvtype, comm, &c, &library);
        if (rc != MPI_SUCCESS)
            return rc;
        if (c) {
            c->comm = ctx->comm;
            c->ctx = ctx;
        }
        if (library && k->large && !LIBRARY_HAS_LARGE) {
            /* a Cartesian neighbor named twice, no library call to take it: linear by
             * direction */
            alg = &tuna_nbr_table[tuna_algorithm_find(TUNA_NEIGHBOR_ALLTOALLV, "linear")];
            for (int i = 0; i < TUNA_MAX_PARAMS; i++)
                param[i] = 0;
            c->by_direction = true;
            library = false;
        }
    }
    if (library) {
        tuna_nbr_call_free(c);
        tuna_stats_current.algorithm =
            tuna_registry_find_kind(&tuna_nbr_registry, TUNA_ROW_VENDOR);
        rc = library_blocking(sendbuf, k, sendtype, recvbuf, recvtype, comm);
        tuna_stats_publish_library(t_start);
        return rc;
    }
    tuna_stats_current.algorithm = (int)(alg - tuna_nbr_table);
    tuna_params_copy(tuna_stats_current.params, param);
    tuna_nbr_op o = {.op = {.step = alg->step, .tp = c->tp}, .c = c, .info = &alg->desc.info};
    for (int i = 0; i < TUNA_MAX_PARAMS; i++)
        o.param[i] = param[i];
    rc = tuna_op_run(&o.op);
    tuna_nbr_op_clear(&o);
    tuna_stats_publish(t_start);
    return rc;
}

int tuna_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            const tuna_options *opt)
{
    const nbr_counts k = {.send = {.n = sendcounts, .d = sdispls},
                          .recv = {.n = recvcounts, .d = rdispls}};
    return neighbor_blocking("tuna_neighbor_alltoallv", sendbuf, &k, sendtype, recvbuf,
                             recvtype, comm, opt);
}

int tuna_neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    const nbr_counts k = {.large = true,
                          .send = {.nl = sendcounts, .dl = sdispls},
                          .recv = {.nl = recvcounts, .dl = rdispls}};
    return neighbor_blocking("tuna_neighbor_alltoallv_c", sendbuf, &k, sendtype, recvbuf,
                             recvtype, comm, opt);
}

/* ------------------------------------------------------------------ nonblocking */

typedef struct inbr_op {
    tuna_nbr_op n;            /* first: the engine's view */
    MPI_Request library;      /* vendor: the library's MPI_Ineighbor_alltoallv */
    bool posted;
} inbr_op;

static int library_step(tuna_op *op, int wait_rc)
{
    inbr_op *x = (inbr_op *)op;
    if (x->posted)
        return tuna_op_step_done(op, wait_rc == MPI_SUCCESS
                                         ? MPI_SUCCESS
                                         : tuna_error_set(wait_rc,
                                                          "MPI_Ineighbor_alltoallv failed"));
    x->posted = true;
    return tuna_op_step_wait(op, &x->library, 1, MPI_SUCCESS);
}

static void inbr_release(tuna_op *op)
{
    inbr_op *x = (inbr_op *)op;
    tuna_nbr_op_clear(&x->n);
    free(x);
}

static int neighbor_nonblocking(const char *fn, const void *sendbuf, const nbr_counts *k,
                                MPI_Datatype sendtype, void *recvbuf, MPI_Datatype recvtype,
                                MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    if (!req)
        return tuna_error_set(MPI_ERR_ARG, "%s: NULL request", fn);
    *req = TUNA_REQUEST_NULL;
    const bool host = tuna_memory_kinds(sendbuf, recvbuf) == TUNA_MEMORY_HOST;
    int rc = tuna_call_begin(TUNA_NEIGHBOR_ALLTOALLV, comm, &opt);
    if (rc != MPI_SUCCESS)
        return rc;
    int P = 0;
    TUNA_MPI_CHECK(PMPI_Comm_size(comm, &P));
    inbr_op *x = tuna_calloc(1, sizeof *x);
    if (!x)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the operation", fn);
    const tuna_nbr_algorithm *alg = row_of(opt, P, x->n.param);
    /* A start is local: a communicator tuna has not set up runs the library's call (the
     * large-count form without one in the library: an error, as tuna_call_begin's set-up
     * would be collective). */
    tuna_ctx *ctx = NULL;
    bool library = !host || !alg->step;
    if (library && k->large && !LIBRARY_HAS_LARGE) {
        if (!(alg = no_library_row(fn, host, &rc))) {
            free(x);
            return rc;
        }
        for (int i = 0; i < TUNA_MAX_PARAMS; i++)
            x->n.param[i] = 0; /* linear: no parameters */
        library = false;
    }
    if (!library && (tuna_ctx_find(comm, &ctx) != MPI_SUCCESS || !ctx || !tuna_ctx_ready(ctx))) {
        if (k->large && !LIBRARY_HAS_LARGE) {
            free(x);
            return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                  "%s: tuna has not set this communicator up (a blocking tuna "
                                  "call on it does) and this MPI library has no "
                                  "MPI_Ineighbor_alltoallv_c",
                                  fn);
        }
        library = true;
    }
    if (!library)
        rc = call_of(fn, sendbuf, k, sendtype, recvbuf, recvtype, comm, &x->n.c, &library);
    if (rc == MPI_SUCCESS && library && k->large && !LIBRARY_HAS_LARGE) {
        /* a Cartesian neighbor named twice, no library call to take it: linear by direction */
        alg = &tuna_nbr_table[tuna_algorithm_find(TUNA_NEIGHBOR_ALLTOALLV, "linear")];
        for (int i = 0; i < TUNA_MAX_PARAMS; i++)
            x->n.param[i] = 0;
        x->n.c->by_direction = true;
        library = false;
    }
    x->library = MPI_REQUEST_NULL;
    x->n.op = (tuna_op){.step = alg->step, .tp = &tuna_transport_mpi_host,
                        .release = inbr_release, .publish_stats = false};
    if (rc == MPI_SUCCESS && library) {
        x->n.op.step = library_step;
#if LIBRARY_HAS_LARGE
        if (k->large)
            rc = PMPI_Ineighbor_alltoallv_c(sendbuf, k->send.nl, k->send.dl, sendtype, recvbuf,
                                            k->recv.nl, k->recv.dl, recvtype, comm, &x->library);
        else
#endif
            rc = PMPI_Ineighbor_alltoallv(sendbuf, k->send.n, k->send.d, sendtype, recvbuf,
                                          k->recv.n, k->recv.d, recvtype, comm, &x->library);
        if (rc != MPI_SUCCESS)
            rc = tuna_library_result(rc, "PMPI_Ineighbor_alltoallv");
    } else if (rc == MPI_SUCCESS) {
        x->n.c->comm = ctx->comm;
        x->n.c->ctx = ctx;
        x->n.c->tag_shift = tuna_op_tag_shift(ctx, false);
        x->n.info = &alg->desc.info;
    }
    if (rc != MPI_SUCCESS) {
        inbr_release(&x->n.op);
        return rc;
    }
    tuna_op_start(&x->n.op);
    *req = &x->n.op;
    return MPI_SUCCESS;
}

int tuna_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             const tuna_options *opt, tuna_request *req)
{
    const nbr_counts k = {.send = {.n = sendcounts, .d = sdispls},
                          .recv = {.n = recvcounts, .d = rdispls}};
    return neighbor_nonblocking("tuna_ineighbor_alltoallv", sendbuf, &k, sendtype, recvbuf,
                                recvtype, comm, opt, req);
}

int tuna_ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                               tuna_request *req)
{
    const nbr_counts k = {.large = true,
                          .send = {.nl = sendcounts, .dl = sdispls},
                          .recv = {.nl = recvcounts, .dl = rdispls}};
    return neighbor_nonblocking("tuna_ineighbor_alltoallv_c", sendbuf, &k, sendtype, recvbuf,
                                recvtype, comm, opt, req);
}
