/*
 * tuna_iallreduce: the nonblocking allreduce (docs/nonblocking.md). The start is local: this
 * rank's checks, the choice (auto's from the vector's bytes and whether the op commutes, the
 * same on every rank: no agreement, no learning), then the operation's first step, which
 * only posts. Everything the operation needs until it completes is its own (its tag shift,
 * its buffers). Reductions run on completed data inside the steps (MPI_Reduce_local), in the
 * rank order the row keeps for non-commutative ops.
 *
 * Its steps (tuna_icoll_step): under TUNA_ARGCHECK=collective one MPI_Iallreduce of the error
 * flag, the count and the type size; then the row's steps (operation.c: the input copied into
 * the receive buffer, the rounds), or the library's MPI_Iallreduce (vendor, auto's hand-over,
 * an intercommunicator). On a communicator tuna has not set up, the start waits for the
 * set-up that it begins (tuna_setup_defer, src/core/setup.c) and then runs as here. Device
 * buffers a named row serves (memory_route.c) run it through a staging transport of the
 * operation's own (src/transport/cuda_staged.c), freed with it.
 */
#include "allreduce.h"
#include "memkind.h"
#include "../transport/cuda_staged.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct iar_op {
    tuna_ar_op o;        /* first member: the engine's and the row's view */
    tuna_icoll w;        /* the steps around the row */
    const tuna_ar_algorithm *row;
    tuna_ar_args a;      /* the arguments the row's set-up completes */
    const void *sendbuf;
    int tsize;
    MPI_Comm comm;
    struct tuna_staged *staged; /* device buffers: the operation's staging transport (a.tp) */
} iar_op;

static iar_op *of(tuna_icoll *w)
{
    return (iar_op *)(void *)((char *)w - offsetof(iar_op, w));
}

static void iar_release(tuna_op *op)
{
    tuna_staged_free(((iar_op *)op)->staged);
    free(op); /* the row's buffers went with its last step (operation.c) */
}

static int post_library(tuna_icoll *w)
{
    iar_op *x = of(w);
    int rc = PMPI_Iallreduce(x->sendbuf, x->a.rbuf, x->a.count, x->a.type, x->a.op,
                             w->lib_comm, &w->lib);
    return rc == MPI_SUCCESS ? rc : tuna_error_set(rc, "PMPI_Iallreduce failed");
}

/* The row: its set-up (the input into the receive buffer), then its first step. */
static int begin_row(tuna_icoll *w)
{
    iar_op *x = of(w);
    if (x->a.count == 0 || x->tsize == 0) /* nothing to reduce */
        return tuna_op_step_done(&x->o.op, MPI_SUCCESS);
    x->a.tag_shift = w->tag_shift;
    int rc = tuna_ar_op_setup(&x->o, x->row, &x->a, x->sendbuf);
    return rc != MPI_SUCCESS ? tuna_op_step_done(&x->o.op, rc)
                             : tuna_ar_op_step(&x->o.op, MPI_SUCCESS);
}

static int iar_step(tuna_op *op, int wait_rc)
{
    iar_op *x = (iar_op *)op;
    return tuna_icoll_step_staged(&x->w, op, wait_rc, x->staged, x->a.tp);
}

/* The row the operation runs, with its parameters in x->a.param: auto's choice (the
 * library's call when it is vendor), else the named row. */
static int choose(iar_op *x, const tuna_ar_algorithm *alg, const tuna_options *opt)
{
    int commute = 0;
    int rc = PMPI_Op_commutative(x->a.op, &commute);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "tuna_iallreduce: MPI_Op_commutative failed");
    x->a.commute = commute != 0;
    if (alg->desc.kind == TUNA_ROW_ALGORITHM) {
        x->row = alg;
        tuna_coll_params_named(&alg->desc.info, opt, x->w.ctx->size, x->a.param);
        return MPI_SUCCESS;
    }
    tuna_choice c;
    rc = tuna_ar_auto_choose(x->w.ctx, (double)x->a.count * (double)x->tsize, x->a.commute, &c,
                             NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    x->row = &tuna_ar_table[c.algorithm];
    x->w.library = x->row->desc.kind == TUNA_ROW_VENDOR;
    tuna_params_copy(x->a.param, c.param);
    return MPI_SUCCESS;
}

/* A start that waits for the communicator's set-up (tuna_setup_defer): its arguments. */
typedef struct iar_args {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
    tuna_options opt;
} iar_args;

static int iar_restart(void *args, tuna_request *inner)
{
    const iar_args *a = args;
    return tuna_iallreduce(a->sendbuf, a->recvbuf, a->count, a->type, a->op, a->comm, &a->opt,
                           inner);
}

/* The start once the buffers' kinds are known (device: a named row serves them,
 * memory_route.c); inlined into each caller with its constant. */
static inline __attribute__((always_inline)) int
iallreduce_start(bool device, const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const tuna_options *opt,
                 tuna_request *req)
{
    static const char fn[] = "tuna_iallreduce";
    static const char *const names[] = {"count", "datatype size"};
    int rc;
    iar_op *x = tuna_icoll_open(TUNA_ALLREDUCE, fn, comm, &opt, req, sizeof *x, &rc);
    if (!x)
        return rc;
    const tuna_ar_algorithm *alg = &tuna_ar_table[opt->algorithm];
    /* The transport completes the library's request and the agreement too. */
    *x = (iar_op){.o.op = {.step = iar_step, .tp = &tuna_transport_mpi_host,
                           .release = iar_release, .publish_stats = true},
                  .w = {.name = "iallreduce", .nsame = 2, .names = names,
                        .post_library = post_library, .begin_row = begin_row,
                        .row_step = tuna_ar_op_step},
                  .a = {.rbuf = recvbuf, .count = count, .type = datatype, .op = op,
                        .tp = &tuna_transport_mpi_host},
                  .sendbuf = sendbuf, .comm = comm};
    if ((rc = tuna_icoll_route(&x->w, &tuna_ar_registry, alg->desc.kind, comm)) != MPI_SUCCESS) {
        free(x);
        return rc;
    }
    if (x->w.deferred) { /* the communicator's set-up runs first (setup.c) */
        tuna_ctx *ctx = x->w.ctx;
        free(x);
        /* tuna's aliasing rule at the start, as on every path; the other checks need the
         * context: they run at the restart (the completion returns their error). */
        if (tuna_argcheck_is_local() && (rc = tuna_check_alias(fn, sendbuf, recvbuf, count > 0)))
            return rc;
        const iar_args a = {.sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                            .type = datatype, .op = op, .comm = comm, .opt = *opt};
        return tuna_setup_defer_copy(ctx, iar_restart, &a, sizeof a, fn, req);
    }
    if (x->w.library) /* tuna's aliasing rule holds for the library's call too */
        x->w.local_rc = tuna_check_alias(fn, sendbuf, recvbuf, count > 0);
    else {
        tuna_ctx *ctx = x->w.ctx;
        x->a.ctx = ctx;
        x->a.rank = ctx->rank;
        x->a.size = ctx->size;
        x->w.local_rc = tuna_ar_check_args(sendbuf, recvbuf, count, datatype, op, ctx->rank,
                                           &x->tsize);
        if (x->w.local_rc == MPI_SUCCESS)
            x->w.local_rc = choose(x, alg, opt);
        if (device && x->w.local_rc == MPI_SUCCESS)
            x->w.local_rc = tuna_staged_open(&x->staged, &x->a.tp);
        x->w.same[0] = count;
        x->w.same[1] = x->tsize;
    }
    return tuna_icoll_launch(&x->w, &x->o.op, req);
}

/* tuna_iallreduce on buffers known to be host memory: the drop-in's entry (memkind.h), and
 * the public one's after its check. */
int tuna_iallreduce_host(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    return iallreduce_start(false, sendbuf, recvbuf, count, datatype, op, comm, opt, req);
}

/* Buffers that may be device memory: the library's call (memory_route.c), a row that stages
 * them, else the host path. Out of line, so that the entry's common case is a check and a
 * jump. */
static __attribute__((noinline)) int
iallreduce_other(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    int rc;
    if (tuna_memory_kinds_query(sendbuf, recvbuf) != TUNA_MEMORY_HOST) {
        if ((rc = tuna_memory_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, opt,
                                         req)) >= 0)
            return rc;
        return iallreduce_start(true, sendbuf, recvbuf, count, datatype, op, comm,
                                tuna_memory_nb_row(TUNA_ALLREDUCE, opt), req);
    }
    return tuna_iallreduce_host(sendbuf, recvbuf, count, datatype, op, comm, opt, req);
}

int tuna_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    if (tuna_memory_surely_host())
        return tuna_iallreduce_host(sendbuf, recvbuf, count, datatype, op, comm, opt, req);
    return iallreduce_other(sendbuf, recvbuf, count, datatype, op, comm, opt, req);
}
