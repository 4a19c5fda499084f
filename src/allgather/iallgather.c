/*
 * tuna_iallgather: the nonblocking allgather (docs/nonblocking.md). The start is local: this
 * rank's checks, the choice (auto's from the block size, the same on every rank: no
 * agreement, no learning), then the operation's first step, which only posts. Everything the
 * operation needs until it completes is its own (its tag shift, its buffers).
 *
 * Its steps (tuna_icoll_step): under TUNA_ARGCHECK=collective one MPI_Iallreduce of the error
 * flag and the block size; then the row's steps (operation.c: the own block placed, the
 * rounds, the unpacking), or the library's MPI_Iallgather (vendor, auto's hand-over, an
 * intercommunicator). On a communicator tuna has not set up, the start waits for the set-up
 * that it begins (tuna_setup_defer, src/core/setup.c) and then runs as here. Device buffers a
 * named row serves (memory_route.c) run it through a staging transport of the operation's
 * own (src/transport/cuda_staged.c), freed with it.
 */
#include "allgather.h"
#include "memkind.h"
#include "../transport/cuda_staged.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct iag_op {
    tuna_ag_op o;        /* first member: the engine's and the row's view */
    tuna_icoll w;        /* the steps around the row */
    const tuna_ag_algorithm *row;
    long param[TUNA_MAX_PARAMS];
    size_t block;
    const void *sendbuf;
    void *recvbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Comm comm;
    const tuna_transport *tp;   /* the row's: MPI on host memory, or staged's */
    struct tuna_staged *staged; /* device buffers: the operation's staging transport */
} iag_op;

static iag_op *of(tuna_icoll *w)
{
    return (iag_op *)(void *)((char *)w - offsetof(iag_op, w));
}

static void iag_release(tuna_op *op)
{
    tuna_staged_free(((iag_op *)op)->staged);
    free(op); /* the row's buffers went with its last step (operation.c) */
}

static int post_library(tuna_icoll *w)
{
    iag_op *x = of(w);
    int rc = PMPI_Iallgather(x->sendbuf, x->scount, x->stype, x->recvbuf, x->rcount, x->rtype,
                             w->lib_comm, &w->lib);
    return rc == MPI_SUCCESS ? rc : tuna_error_set(rc, "PMPI_Iallgather failed");
}

/* The row: its set-up (the own block into its slot), then its first step. */
static int begin_row(tuna_icoll *w)
{
    iag_op *x = of(w);
    if (x->block == 0) /* nothing to move (every rank's block: MPI's type-signature rule) */
        return tuna_op_step_done(&x->o.op, MPI_SUCCESS);
    int rc = tuna_ag_op_setup(&x->o, w->ctx, x->row, x->param, w->tag_shift, x->sendbuf,
                              x->scount, x->stype, x->recvbuf, x->rcount, x->rtype, x->block,
                              x->tp);
    return rc != MPI_SUCCESS ? tuna_op_step_done(&x->o.op, rc)
                             : tuna_ag_op_step(&x->o.op, MPI_SUCCESS);
}

static int iag_step(tuna_op *op, int wait_rc)
{
    iag_op *x = (iag_op *)op;
    return tuna_icoll_step_staged(&x->w, op, wait_rc, x->staged, x->tp);
}

/* The row the operation runs, with its parameters in x->param: auto's choice (the library's
 * call when it is vendor), else the named row. */
static int choose(iag_op *x, const tuna_ag_algorithm *alg, const tuna_options *opt)
{
    if (alg->desc.kind == TUNA_ROW_ALGORITHM) {
        x->row = alg;
        tuna_coll_params_named(&alg->desc.info, opt, x->w.ctx->size, x->param);
        return MPI_SUCCESS;
    }
    tuna_choice c;
    int rc = tuna_ag_auto_choose(x->w.ctx, x->block, &c, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    x->row = &tuna_ag_table[c.algorithm];
    x->w.library = x->row->desc.kind == TUNA_ROW_VENDOR;
    tuna_params_copy(x->param, c.param);
    return MPI_SUCCESS;
}

/* A start that waits for the communicator's set-up (tuna_setup_defer): its arguments. */
typedef struct iag_args {
    const void *sendbuf;
    void *recvbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Comm comm;
    tuna_options opt;
} iag_args;

static int iag_restart(void *args, tuna_request *inner)
{
    const iag_args *a = args;
    return tuna_iallgather(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype,
                           a->comm, &a->opt, inner);
}

/* The start once the buffers' kinds are known (device: a named row serves them,
 * memory_route.c); inlined into each caller with its constant. */
static inline __attribute__((always_inline)) int
iallgather_start(bool device, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                 const tuna_options *opt, tuna_request *req)
{
    static const char fn[] = "tuna_iallgather";
    static const char *const names[] = {"recvcount * type size (bytes)"};
    int rc;
    iag_op *x = tuna_icoll_open(TUNA_ALLGATHER, fn, comm, &opt, req, sizeof *x, &rc);
    if (!x)
        return rc;
    const tuna_ag_algorithm *alg = &tuna_ag_table[opt->algorithm];
    /* The transport completes the library's request and the agreement too. */
    *x = (iag_op){.o.op = {.step = iag_step, .tp = &tuna_transport_mpi_host,
                           .release = iag_release, .publish_stats = true},
                  .w = {.name = "iallgather", .nsame = 1, .names = names,
                        .post_library = post_library, .begin_row = begin_row,
                        .row_step = tuna_ag_op_step},
                  .sendbuf = sendbuf, .recvbuf = recvbuf, .scount = sendcount,
                  .rcount = recvcount, .stype = sendtype, .rtype = recvtype, .comm = comm,
                  .tp = &tuna_transport_mpi_host};
    if ((rc = tuna_icoll_route(&x->w, &tuna_ag_registry, alg->desc.kind, comm)) != MPI_SUCCESS) {
        free(x);
        return rc;
    }
    if (x->w.deferred) { /* the communicator's set-up runs first (setup.c) */
        tuna_ctx *ctx = x->w.ctx;
        free(x);
        /* tuna's aliasing rule at the start, as on every path; the other checks need the
         * context: they run at the restart (the completion returns their error). */
        if (tuna_argcheck_is_local() &&
            (rc = tuna_check_alias(fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0)))
            return rc;
        const iag_args a = {.sendbuf = sendbuf, .recvbuf = recvbuf, .scount = sendcount,
                            .rcount = recvcount, .stype = sendtype, .rtype = recvtype,
                            .comm = comm, .opt = *opt};
        return tuna_setup_defer_copy(ctx, iag_restart, &a, sizeof a, fn, req);
    }
    if (x->w.library) /* tuna's aliasing rule holds for the library's call too */
        x->w.local_rc = tuna_check_alias(fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0);
    else {
        x->w.local_rc = tuna_ag_check_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, x->w.ctx->size, x->w.ctx->rank, &x->block);
        if (x->w.local_rc == MPI_SUCCESS)
            x->w.local_rc = choose(x, alg, opt);
        if (device && x->w.local_rc == MPI_SUCCESS)
            x->w.local_rc = tuna_staged_open(&x->staged, &x->tp);
        x->w.same[0] = (long long)x->block;
    }
    return tuna_icoll_launch(&x->w, &x->o.op, req);
}

/* tuna_iallgather on buffers known to be host memory: the drop-in's entry (memkind.h), and
 * the public one's after its check. */
int tuna_iallgather_host(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         const tuna_options *opt, tuna_request *req)
{
    return iallgather_start(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, opt, req);
}

/* Buffers that may be device memory: the library's call (memory_route.c), a row that stages
 * them, else the host path. Out of line, so that the entry's common case is a check and a
 * jump. */
static __attribute__((noinline)) int
iallgather_other(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                 tuna_request *req)
{
    int rc;
    if (tuna_memory_kinds_query(sendbuf, recvbuf) != TUNA_MEMORY_HOST) {
        if ((rc = tuna_memory_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, comm, opt, req)) >= 0)
            return rc;
        return iallgather_start(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm, tuna_memory_nb_row(TUNA_ALLGATHER, opt), req);
    }
    return tuna_iallgather_host(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                opt, req);
}

int tuna_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                    tuna_request *req)
{
    if (tuna_memory_surely_host())
        return tuna_iallgather_host(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, opt, req);
    return iallgather_other(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, opt,
                            req);
}
