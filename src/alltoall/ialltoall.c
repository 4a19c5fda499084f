/*
 * tuna_ialltoall, tuna_ialltoall_c: the nonblocking uniform all-to-all (docs/nonblocking.md).
 * The start is local: this rank's checks, the choice (auto's from the block size, the same
 * on every rank: no agreement), the description of the P blocks, then the operation's first
 * step, which only posts. Everything the operation needs until it completes is its own.
 *
 * Its steps: under TUNA_ARGCHECK=collective one MPI_Iallreduce of the error flag and the
 * block size; then the row's steps, or the library's MPI_Ialltoall (vendor, auto's choice, an
 * intercommunicator). On a communicator tuna has not set up, the start waits for the set-up
 * that it begins (tuna_setup_defer, src/core/setup.c) and then runs as here.
 */
#include "alltoall.h"
#include "memkind.h"

#include <stdlib.h>
#include <string.h>

enum phase {
    PHASE_START,   /* nothing posted yet */
    PHASE_AGREE,   /* TUNA_ARGCHECK=collective: the agreement is in flight */
    PHASE_ROW,     /* the row's steps */
    PHASE_LIBRARY, /* the library's MPI_Ialltoall(_c) is in flight */
};

/* The user's arguments (tuna_a2av_nb_user) with the counts. */
typedef struct ia2a_call {
    tuna_a2av_nb_user user;
    MPI_Count scount, rcount;
    bool large; /* MPI_Count counts: the library's call is MPI_Ialltoall_c */
} ia2a_call;

typedef struct ia2a_op {
    tuna_a2av_op o;      /* first member: the engine's and the row's view */
    tuna_a2av_args args;
    tuna_a2av_nb nb;     /* the operation's own buffers and requests (no staging) */
    void *counts;
    enum phase phase;
    bool agree;
    bool library;
    int local_rc;
    long long v[TUNA_AGREE_N];
    ia2a_call call;
} ia2a_op;

static void ia2a_release(tuna_op *op)
{
    ia2a_op *x = (ia2a_op *)op;
    tuna_a2av_nb_free(&x->o, &x->nb);
    free(x->counts);
    free(x);
}

static int post_library(ia2a_op *x)
{
    const ia2a_call *c = &x->call;
    const tuna_a2av_nb_user *u = &c->user;
    int rc;
    if (!c->large) {
        rc = PMPI_Ialltoall(u->sendbuf, (int)c->scount, u->stype, u->recvbuf, (int)c->rcount,
                            u->rtype, u->comm, &x->nb.lib);
        if (rc != MPI_SUCCESS)
            return tuna_error_set(rc, "PMPI_Ialltoall failed");
    } else {
#ifdef TUNA_HAVE_MPI_IALLTOALL_C
        rc = PMPI_Ialltoall_c(u->sendbuf, c->scount, u->stype, u->recvbuf, c->rcount, u->rtype,
                              u->comm, &x->nb.lib);
        if (rc != MPI_SUCCESS)
            return tuna_error_set(rc, "PMPI_Ialltoall_c failed");
#else
        return tuna_error_set(MPI_ERR_INTERN, "no MPI_Ialltoall_c in the MPI library");
#endif
    }
    x->phase = PHASE_LIBRARY;
    tuna_a2av_nb_wait_lib(&x->o, &x->nb);
    return MPI_SUCCESS;
}

static int ia2a_step(tuna_op *op, int wait_rc)
{
    ia2a_op *x = (ia2a_op *)op;
    int rc;
    switch (x->phase) {
    case PHASE_START:
        if (x->library) {
            rc = post_library(x);
            return rc == MPI_SUCCESS ? TUNA_STEP_WAIT : tuna_a2av_step_done(&x->o, rc);
        }
        if (x->agree) {
            /* max of the flag, the block and its negation: equal blocks iff max = -max(-) */
            if ((rc = tuna_a2av_nb_agree_post(&x->o, &x->nb, x->args.ctx, x->v,
                                              TUNA_AGREE_ZERO_BLOCKS, x->local_rc)) != MPI_SUCCESS)
                return tuna_a2av_step_done(&x->o, rc);
            x->phase = PHASE_AGREE;
            return TUNA_STEP_WAIT;
        }
        x->phase = PHASE_ROW;
        return x->o.row->step(&x->o, MPI_SUCCESS);
    case PHASE_AGREE:
        if ((rc = tuna_a2av_nb_agreed(wait_rc, x->local_rc, x->v, "tuna_ialltoall")) !=
            MPI_SUCCESS)
            return tuna_a2av_step_done(&x->o, rc);
        if (x->v[TUNA_AGREE_MAX_BLOCK] != -x->v[TUNA_AGREE_MAX_TOTAL])
            return tuna_a2av_step_done(
                &x->o, tuna_error_set(MPI_ERR_TRUNCATE, "tuna_ialltoall: the ranks' blocks "
                                                        "differ in size (type signatures must "
                                                        "match); no data moved"));
        x->phase = PHASE_ROW;
        return x->o.row->step(&x->o, MPI_SUCCESS);
    case PHASE_ROW:
        return x->o.row->step(&x->o, wait_rc);
    case PHASE_LIBRARY:
        return tuna_a2av_nb_library_done(&x->o, wait_rc, "MPI_Ialltoall");
    }
    return tuna_a2av_step_done(&x->o, tuna_error_set(MPI_ERR_INTERN, "ialltoall: bad phase"));
}

/* Whether the library can run the vendor row (large counts need MPI_Ialltoall_c). */
static bool library_can(bool large)
{
#ifdef TUNA_HAVE_MPI_IALLTOALL_C
    (void)large;
    return true;
#else
    return !large;
#endif
}

/* The row the operation runs, with its parameters in x->args.param: auto's choice (or the
 * library's call, x->library), else the named row; vendor is the library's call (linear
 * without MPI_Ialltoall_c). */
static int choose(ia2a_op *x, const tuna_a2av_algorithm *alg, const tuna_options *opt,
                  tuna_ctx *ctx, size_t block)
{
    const tuna_a2av_algorithm *run = alg;
    if (alg->desc.kind == TUNA_ROW_AUTO) {
        tuna_choice c;
        int rc = tuna_a2a_auto_choose(ctx, block, &c, NULL);
        if (rc != MPI_SUCCESS)
            return rc;
        run = &tuna_a2a_table[c.algorithm];
        tuna_params_copy(x->args.param, c.param);
    } else if (alg->desc.kind == TUNA_ROW_ALGORITHM) {
        tuna_params_resolve(&alg->desc.info, opt->value, ctx->size, x->args.param);
        if (tuna_stats_on)
            tuna_params_copy(tuna_stats_current.params, x->args.param);
    }
    if (run->desc.kind == TUNA_ROW_VENDOR) {
        if (library_can(x->call.large)) {
            x->library = true;
            return MPI_SUCCESS;
        }
        const int linear = tuna_algorithm_find(TUNA_ALLTOALL, "linear");
        run = &tuna_a2a_table[linear];
        tuna_stats_current.algorithm = linear;
        tuna_stats_current.fallback = "the MPI library has no MPI_Ialltoall_c";
    }
    x->o.row = run;
    x->args.info = &run->desc.info;
    return MPI_SUCCESS;
}

static int ialltoall(const ia2a_call *c, const tuna_options *opt, tuna_request *req);

/* A start that waits for the communicator's set-up: the call and its options. */
typedef struct ia2a_deferred {
    ia2a_call call;
    tuna_options opt;
} ia2a_deferred;

static int ia2a_restart(void *args, tuna_request *inner)
{
    const ia2a_deferred *d = args;
    return ialltoall(&d->call, &d->opt, inner);
}

static int ialltoall(const ia2a_call *c, const tuna_options *opt, tuna_request *req)
{
    const tuna_a2av_nb_user *u = &c->user;
    const char *fn = u->fn;
    int rc = tuna_a2av_nb_begin(TUNA_ALLTOALL, u, &opt, req);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_a2av_algorithm *alg = &tuna_a2a_table[opt->algorithm];
    tuna_ctx *ctx;
    bool collective;
    rc = tuna_a2av_nb_context(u->comm, alg->desc.kind == TUNA_ROW_VENDOR, &ctx, &collective);
    if (rc == TUNA_NB_DEFER) {
        /* tuna's aliasing rule at the start, as on every path; the other checks need the
         * context: they run at the restart (the completion returns their error). */
        if (tuna_argcheck_is_local() &&
            (rc = tuna_check_alias(fn, u->sendbuf, u->recvbuf, c->scount > 0 && c->rcount > 0)))
            return rc;
        const ia2a_deferred d = {.call = *c, .opt = *opt};
        return tuna_setup_defer_copy(ctx, ia2a_restart, &d, sizeof d, fn, req);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    ia2a_op *x = tuna_calloc(1, sizeof *x);
    if (!x)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the operation", fn);
    tuna_a2av_nb_init(&x->o, &x->args, ia2a_step, ia2a_release);
    x->call = *c;
    /* With a context, the library's call travels on the private communicator: a start that
     * waited for the set-up posts it later than the application's calls on its own. */
    if (ctx)
        x->call.user.comm = ctx->comm;
    /* The library's call: vendor; an intercommunicator (no context); auto where its
     * selector's agreement failed (the set-up carries it). */
    if (alg->desc.kind == TUNA_ROW_VENDOR ||
        (alg->desc.kind == TUNA_ROW_AUTO && (!ctx || ctx->select_status != 1)) ||
        (alg->desc.kind == TUNA_ROW_ALGORITHM && !ctx)) {
        if (alg->desc.kind != TUNA_ROW_VENDOR)
            tuna_a2av_nb_library_stats(&tuna_a2a_registry, ctx);
        if (!library_can(c->large)) {
            free(x);
            return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                  "%s: the MPI library has no MPI_Ialltoall_c and tuna has no "
                                  "context on this communicator (docs/nonblocking.md)",
                                  fn);
        }
        /* tuna's aliasing rule holds for the library's call too (vendor, an
         * intercommunicator), at the start as tuna's rows report it. */
        if ((rc = tuna_check_alias(fn, u->sendbuf, u->recvbuf,
                                   c->scount > 0 && c->rcount > 0))) {
            free(x);
            return rc;
        }
        x->library = true;
    } else {
        const int P = ctx->size;
        size_t block = 0;
        x->args = (tuna_a2av_args){.ctx = ctx, .tp = x->o.op.tp, .scr = &x->nb.scr,
                                   .rank = ctx->rank, .size = P};
        x->local_rc = tuna_a2a_check_args(fn, u->sendbuf, c->scount, u->stype, u->recvbuf,
                                          c->rcount, u->rtype, P, ctx->rank, &block);
        if (x->local_rc == MPI_SUCCESS)
            x->local_rc = choose(x, alg, opt, ctx, block);
        if (x->local_rc == MPI_SUCCESS && !x->library) {
            x->nb.disp = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
            x->counts = tuna_malloc(tuna_a2a_counts_bytes(P));
            x->local_rc = x->nb.disp && x->counts
                              ? tuna_a2a_prepare(&x->args, u->sendbuf, c->scount, u->stype,
                                                 u->recvbuf, c->rcount, u->rtype, block,
                                                 x->counts, x->nb.disp, &x->nb.copy,
                                                 &x->nb.copy_counts)
                              : tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
            x->args.tag_shift = tuna_op_tag_shift(ctx, false);
        }
        x->v[TUNA_AGREE_MAX_BLOCK] = (long long)block;
        x->v[TUNA_AGREE_MAX_TOTAL] = -(long long)block;
        x->agree = collective;
        if (x->local_rc != MPI_SUCCESS && !collective) { /* this rank's error, at once */
            rc = x->local_rc;
            ia2a_release(&x->o.op);
            return rc;
        }
    }
    x->phase = PHASE_START;
    /* The first step posts (or finishes with an error, which the completion returns). */
    tuna_op_start(&x->o.op);
    *req = &x->o.op;
    return MPI_SUCCESS;
}

/* The public entries: device buffers go where memory_route.c sends them (the library's call),
 * host ones to the start. */
static inline __attribute__((always_inline)) int
ialltoall_public(bool large, const void *sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                 tuna_request *req)
{
    int rc;
    if (tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST &&
        (rc = tuna_memory_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                    recvtype, comm, opt, req)) >= 0)
        return rc;
    return tuna_ialltoall_host(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                               comm, opt, req);
}

int tuna_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                   tuna_request *req)
{
    return ialltoall_public(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, opt, req);
}

int tuna_ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     const tuna_options *opt, tuna_request *req)
{
    return ialltoall_public(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, opt, req);
}

int tuna_ialltoall_host(bool large, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                        tuna_request *req)
{
    const ia2a_call c = {.user = {.fn = large ? "tuna_ialltoall_c" : "tuna_ialltoall",
                                  .sendbuf = sendbuf, .recvbuf = recvbuf, .stype = sendtype,
                                  .rtype = recvtype, .comm = comm},
                         .scount = sendcount, .rcount = recvcount, .large = large};
    return ialltoall(&c, opt, req);
}
