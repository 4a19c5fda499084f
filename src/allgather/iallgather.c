/*
 * tuna_iallgather: the nonblocking allgather (docs/nonblocking.md). The start is local: this
 * rank's checks, the choice (auto's from the block size, the same on every rank: no
 * agreement, no learning), then the operation's first step, which only posts. Everything the
 * operation needs until it completes is its own (its tag shift, its buffers).
 *
 * Its steps: under TUNA_ARGCHECK=collective one MPI_Iallreduce of the error flag and the
 * block size; then the row's steps (operation.c: the own block placed, the rounds, the
 * unpacking), or the library's MPI_Iallgather (vendor; and every row on a communicator
 * whose selector tuna has not agreed yet, which only a collective call can do).
 */
#include "allgather.h"

#include <stdlib.h>
#include <string.h>

enum phase {
    PHASE_START,   /* nothing posted yet */
    PHASE_AGREE,   /* TUNA_ARGCHECK=collective: the agreement is in flight */
    PHASE_ROW,     /* the row's steps */
    PHASE_LIBRARY, /* the library's MPI_Iallgather is in flight */
};

typedef struct iag_op {
    tuna_ag_op o;        /* first member: the engine's and the row's view */
    enum phase phase;
    bool agree;
    bool library;
    int local_rc;
    long long v[3];      /* the agreement: error flag, block, -block */
    MPI_Request lib;
    const tuna_ag_algorithm *row;
    long param[TUNA_MAX_PARAMS];
    tuna_ctx *ctx;
    size_t block;
    int tag_shift;
    const void *sendbuf;
    void *recvbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Comm comm;
} iag_op;

static void iag_release(tuna_op *op)
{
    free(op); /* the row's buffers went with its last step (operation.c) */
}

static int done(iag_op *x, int rc)
{
    return tuna_ag_step_done(&x->o, rc);
}

/* The row: its set-up (the own block into its slot), then its first step. */
static int begin_row(iag_op *x)
{
    x->phase = PHASE_ROW;
    if (x->block == 0) /* nothing to move (every rank's block: MPI's type-signature rule) */
        return done(x, MPI_SUCCESS);
    int rc = tuna_ag_op_setup(&x->o, x->ctx, x->row, x->param, x->tag_shift, x->sendbuf,
                              x->scount, x->stype, x->recvbuf, x->rcount, x->rtype, x->block);
    return rc != MPI_SUCCESS ? done(x, rc) : tuna_ag_op_step(&x->o.op, MPI_SUCCESS);
}

static int iag_step(tuna_op *op, int wait_rc)
{
    iag_op *x = (iag_op *)op;
    int rc;
    switch (x->phase) {
    case PHASE_START:
        if (x->library) {
            rc = PMPI_Iallgather(x->sendbuf, x->scount, x->stype, x->recvbuf, x->rcount,
                                 x->rtype, x->comm, &x->lib);
            if (rc != MPI_SUCCESS)
                return done(x, tuna_error_set(rc, "PMPI_Iallgather failed"));
            x->phase = PHASE_LIBRARY;
            return tuna_ag_step_wait(&x->o, &x->lib, 1, MPI_SUCCESS);
        }
        if (x->agree) {
            const long long same = (long long)x->block;
            rc = tuna_coll_agree_args_start(x->ctx, "iallgather", x->local_rc, &same, 1, x->v,
                                            &x->lib);
            if (rc != MPI_SUCCESS)
                return done(x, rc);
            x->phase = PHASE_AGREE;
            return tuna_ag_step_wait(&x->o, &x->lib, 1, MPI_SUCCESS);
        }
        return begin_row(x);
    case PHASE_AGREE: {
        if (wait_rc != MPI_SUCCESS)
            return done(x, tuna_error_set(wait_rc, "the agreement (MPI_Iallreduce) failed"));
        static const char *const names[] = {"recvcount * type size (bytes)"};
        if ((rc = tuna_coll_agree_args_judge("iallgather", x->local_rc, x->v, names, 1)) !=
            MPI_SUCCESS)
            return done(x, rc);
        return begin_row(x);
    }
    case PHASE_ROW:
        return tuna_ag_op_step(op, wait_rc);
    case PHASE_LIBRARY:
        return done(x, wait_rc == MPI_SUCCESS
                           ? MPI_SUCCESS
                           : tuna_error_set(wait_rc, "the library's MPI_Iallgather failed"));
    }
    return done(x, tuna_error_set(MPI_ERR_INTERN, "iallgather: bad phase"));
}

/* The row the operation runs, with its parameters in x->param: auto's choice (the library's
 * call when it is vendor), else the named row. */
static int choose(iag_op *x, const tuna_ag_algorithm *alg, const tuna_options *opt)
{
    if (alg->desc.kind == TUNA_ROW_ALGORITHM) {
        x->row = alg;
        tuna_params_resolve(&alg->desc.info, opt->value, x->ctx->size, x->param);
        memcpy(tuna_stats_current.params, x->param, sizeof x->param);
        return MPI_SUCCESS;
    }
    tuna_choice c;
    int rc = tuna_ag_auto_choose(x->ctx, x->block, &c, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    x->row = &tuna_ag_table[c.algorithm];
    x->library = x->row->desc.kind == TUNA_ROW_VENDOR;
    memcpy(x->param, c.param, sizeof x->param);
    return MPI_SUCCESS;
}

int tuna_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                    tuna_request *req)
{
    static const char fn[] = "tuna_iallgather";
    if (!req)
        return tuna_error_set(MPI_ERR_REQUEST, "%s: req is NULL", fn);
    *req = TUNA_REQUEST_NULL;
    int rc = tuna_call_begin(TUNA_ALLGATHER, comm, &opt);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_ag_algorithm *alg = &tuna_ag_table[opt->algorithm];
    tuna_ctx *ctx = NULL;
    if (alg->desc.kind != TUNA_ROW_VENDOR && (rc = tuna_ctx_find(comm, &ctx)) != MPI_SUCCESS)
        return rc;
    bool collective = false;
    if (ctx && !ctx->argcheck_local && (rc = tuna_argcheck_collective(&collective)) != MPI_SUCCESS)
        return rc;
    iag_op *x = tuna_calloc(1, sizeof *x);
    if (!x)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the operation", fn);
    x->o.op.step = iag_step;
    x->o.op.release = iag_release;
    x->o.op.publish_stats = true;
    x->sendbuf = sendbuf;
    x->recvbuf = recvbuf;
    x->scount = sendcount;
    x->rcount = recvcount;
    x->stype = sendtype;
    x->rtype = recvtype;
    x->comm = comm;
    x->ctx = ctx;
    /* The library's call: vendor; any other row where tuna has no context or no agreed
     * selector (setting them up is collective, docs/nonblocking.md). */
    if (alg->desc.kind == TUNA_ROW_VENDOR || !ctx || ctx->select_status != 1) {
        if (alg->desc.kind != TUNA_ROW_VENDOR) {
            tuna_stats_current.algorithm =
                tuna_registry_find_kind(&tuna_ag_registry, TUNA_ROW_VENDOR);
            tuna_stats_current.fallback = "tuna has not set this communicator up yet (a "
                                          "blocking call or a plan does; docs/nonblocking.md)";
        }
        /* tuna's aliasing rule holds for the library's call too, at the start. */
        if ((rc = tuna_check_alias(fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0))) {
            free(x);
            return rc;
        }
        x->library = true;
    } else {
        /* Taken by every rank on this path, whatever its arguments: the ranks' sequences of
         * shifts stay in step. */
        x->tag_shift = tuna_op_tag_shift(ctx, false);
        x->local_rc = tuna_ag_check_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, ctx->size, ctx->rank, &x->block);
        if (x->local_rc == MPI_SUCCESS)
            x->local_rc = choose(x, alg, opt);
        x->agree = collective;
        if (x->local_rc != MPI_SUCCESS && !collective) { /* this rank's error, at once */
            rc = x->local_rc;
            free(x);
            return rc;
        }
    }
    x->phase = PHASE_START;
    /* The first step posts (or finishes with an error, which the completion returns). */
    tuna_op_start(&x->o.op);
    *req = &x->o.op;
    return MPI_SUCCESS;
}
