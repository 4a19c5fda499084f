/*
 * tuna_neighbor_alltoallv and tuna_ineighbor_alltoallv: the front end (docs/algorithms-neighbor.md).
 * The call is checked and described (call.c), then the chosen row's steps run: blocking here
 * (tuna_op_run), nonblocking from progress (tuna_op_start). vendor, and auto outside a plan,
 * are the library's own call: node_aware pays a pattern exchange inside each node on every
 * call, which only a persistent operation (plan_neighbor.c) does once; auto there chooses.
 */
#include "neighbor.h"
#include "memkind.h"

#include <stdlib.h>

/* The widened arguments of the int form (the rows read MPI_Count / MPI_Aint). */
typedef struct wide_args {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
} wide_args;

static int widen(MPI_Comm comm, const int sc[], const int sd[], const int rc[], const int rd[],
                 wide_args *w)
{
    *w = (wide_args){0};
    int indeg = 0, outdeg = 0, kind = MPI_UNDEFINED;
    TUNA_MPI_CHECK(PMPI_Topo_test(comm, &kind));
    if (kind == MPI_DIST_GRAPH) {
        int weighted;
        TUNA_MPI_CHECK(PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted));
    } else if (kind == MPI_GRAPH) {
        int me;
        TUNA_MPI_CHECK(PMPI_Comm_rank(comm, &me));
        TUNA_MPI_CHECK(PMPI_Graph_neighbors_count(comm, me, &indeg));
        outdeg = indeg;
    } else if (kind == MPI_CART) {
        TUNA_MPI_CHECK(PMPI_Cartdim_get(comm, &indeg));
        indeg *= 2;
        outdeg = indeg;
    }
    w->sc = malloc(((size_t)outdeg + 1) * sizeof *w->sc);
    w->sd = malloc(((size_t)outdeg + 1) * sizeof *w->sd);
    w->rc = malloc(((size_t)indeg + 1) * sizeof *w->rc);
    w->rd = malloc(((size_t)indeg + 1) * sizeof *w->rd);
    if (!w->sc || !w->sd || !w->rc || !w->rd)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < outdeg && sc && sd; i++) {
        w->sc[i] = sc[i];
        w->sd[i] = sd[i];
    }
    for (int j = 0; j < indeg && rc && rd; j++) {
        w->rc[j] = rc[j];
        w->rd[j] = rd[j];
    }
    if (outdeg > 0 && (!sc || !sd)) {
        free(w->sc);
        free(w->sd);
        w->sc = NULL;
        w->sd = NULL;
    }
    if (indeg > 0 && (!rc || !rd)) {
        free(w->rc);
        free(w->rd);
        w->rc = NULL;
        w->rd = NULL;
    }
    return MPI_SUCCESS;
}

static void wide_free(wide_args *w)
{
    free(w->sc);
    free(w->sd);
    free(w->rc);
    free(w->rd);
}

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

int tuna_nbr_call_of(const char *fn, const void *sendbuf, const int sendcounts[],
                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm, tuna_nbr_call **call, bool *library)
{
    wide_args w;
    int rc = widen(comm, sendcounts, sdispls, recvcounts, rdispls, &w);
    if (rc == MPI_ERR_NO_MEM)
        rc = tuna_error_set(rc, "%s: no memory", fn);
    if (rc == MPI_SUCCESS)
        rc = tuna_nbr_call_make(fn, sendbuf, w.sc, w.sd, sendtype, recvbuf, w.rc, w.rd,
                                recvtype, comm, call, library);
    wide_free(&w);
    return rc;
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

int tuna_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            const tuna_options *opt)
{
    static const char fn[] = "tuna_neighbor_alltoallv";
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
    if (!library) {
        tuna_ctx *ctx;
        bool collective;
        rc = tuna_coll_context(comm, alg->desc.info.name, &ctx, &collective);
        if (rc == MPI_SUCCESS)
            rc = tuna_nbr_call_of(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                  recvcounts, rdispls, recvtype, comm, &c, &library);
        if (rc != MPI_SUCCESS)
            return rc;
        if (c) {
            c->comm = ctx->comm;
            c->ctx = ctx;
        }
    }
    if (library) {
        tuna_nbr_call_free(c);
        tuna_stats_current.algorithm =
            tuna_registry_find_kind(&tuna_nbr_registry, TUNA_ROW_VENDOR);
        rc = PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm);
        tuna_stats_publish_library(t_start);
        return tuna_library_result(rc, "PMPI_Neighbor_alltoallv");
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

int tuna_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             const tuna_options *opt, tuna_request *req)
{
    static const char fn[] = "tuna_ineighbor_alltoallv";
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
    /* A start is local: a communicator tuna has not set up runs the library's call. */
    tuna_ctx *ctx = NULL;
    bool library = !host || !alg->step;
    if (!library && (tuna_ctx_find(comm, &ctx) != MPI_SUCCESS || !ctx || !tuna_ctx_ready(ctx)))
        library = true;
    if (!library)
        rc = tuna_nbr_call_of(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm, &x->n.c, &library);
    x->library = MPI_REQUEST_NULL;
    x->n.op = (tuna_op){.step = alg->step, .tp = &tuna_transport_mpi_host,
                        .release = inbr_release, .publish_stats = false};
    if (rc == MPI_SUCCESS && library) {
        x->n.op.step = library_step;
        rc = PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype, comm, &x->library);
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
