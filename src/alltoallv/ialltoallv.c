/*
 * tuna_ialltoallv, tuna_ialltoallv_c: the nonblocking alltoallv (docs/nonblocking.md). The
 * start is local: this rank's checks and normalisation, then the operation's first step,
 * which only posts. Everything the operation needs until it completes is its own (buffers,
 * requests, tags, statistics record), so it may be outstanding with other operations and
 * blocking calls on the same communicator.
 *
 * Its steps: the agreement (one MPI_Iallreduce of the error flag and the size statistics)
 * where auto, a row that needs the statistics or TUNA_ARGCHECK=collective asks for one;
 * then the chosen row's steps, or the library's MPI_Ialltoallv.
 */
#include "alltoallv.h"
#include "memkind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum phase {
    PHASE_START,   /* nothing posted yet */
    PHASE_AGREE,   /* the agreement's MPI_Iallreduce is in flight */
    PHASE_ROW,     /* the row's steps */
    PHASE_LIBRARY, /* the library's MPI_Ialltoallv(_c) is in flight */
};

/* The user's arguments (tuna_a2av_nb_user) with the counts and displacements. */
typedef struct ia_call {
    tuna_a2av_nb_user user;
    tuna_counts sc, rcv;
    bool device; /* device buffers that the row serves (memory_route.c), staged by the
                    operation's own transport */
} ia_call;

typedef struct ia_op {
    tuna_a2av_op o;      /* first member: the engine's and the row's view */
    tuna_a2av_args args;
    tuna_a2av_nb nb;     /* the operation's own buffers, requests and staging transport */
    enum phase phase;
    bool agree;          /* the first step agrees */
    bool is_auto;
    bool library;        /* the library's own call, from the start */
    int local_rc;        /* this rank's check outcome (TUNA_ARGCHECK=collective: agreed) */
    long long v[TUNA_AGREE_N];
    ia_call call;
} ia_op;

static void ia_release(tuna_op *op)
{
    ia_op *x = (ia_op *)op;
    tuna_a2av_nb_free(&x->o, &x->nb);
    free(x);
}

/* Post the library's own nonblocking call on the user's arguments. */
static int post_library(ia_op *x)
{
    const ia_call *c = &x->call;
    const tuna_a2av_nb_user *u = &c->user;
    int rc;
    if (c->rcv.n) {
        rc = PMPI_Ialltoallv(u->sendbuf, c->sc.n, c->sc.d, u->stype, u->recvbuf, c->rcv.n,
                             c->rcv.d, u->rtype, u->comm, &x->nb.lib);
        if (rc != MPI_SUCCESS)
            return tuna_error_set(rc, "PMPI_Ialltoallv failed");
    } else {
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
        rc = PMPI_Ialltoallv_c(u->sendbuf, c->sc.nl, c->sc.dl, u->stype, u->recvbuf, c->rcv.nl,
                               c->rcv.dl, u->rtype, u->comm, &x->nb.lib);
        if (rc != MPI_SUCCESS)
            return tuna_error_set(rc, "PMPI_Ialltoallv_c failed");
#else
        return tuna_error_set(MPI_ERR_INTERN, "no MPI_Ialltoallv_c in the MPI library");
#endif
    }
    x->phase = PHASE_LIBRARY;
    tuna_a2av_nb_wait_lib(&x->o, &x->nb);
    return MPI_SUCCESS;
}

/* Whether vendor can run as the library's call (large counts need MPI_Ialltoallv_c). */
static bool library_can(const ia_op *x)
{
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
    (void)x;
    return true;
#else
    return x->call.rcv.n != NULL;
#endif
}

/* The row that runs (vendor with large counts and no MPI_Ialltoallv_c: linear, as the
 * blocking vendor row does). */
static int run_row(ia_op *x, int algorithm)
{
    const tuna_a2av_algorithm *row = &tuna_a2av_table[algorithm];
    if (row->desc.kind == TUNA_ROW_VENDOR) {
        if (library_can(x)) {
            int rc = post_library(x);
            return rc == MPI_SUCCESS ? TUNA_STEP_WAIT : tuna_a2av_step_done(&x->o, rc);
        }
        row = &tuna_a2av_table[tuna_algorithm_find(TUNA_ALLTOALLV, "linear")];
        tuna_stats_current.algorithm = (int)(row - tuna_a2av_table);
        tuna_stats_current.fallback = "the MPI library has no MPI_Ialltoallv_c";
    }
    if (tuna_stats_on && !x->is_auto)
        tuna_params_copy(tuna_stats_current.params, x->args.param);
    x->o.row = row;
    x->args.info = &row->desc.info;
    x->o.i = 0;
    x->phase = PHASE_ROW;
    return tuna_a2av_nb_row_step(&x->o, &x->nb, MPI_SUCCESS);
}

static int ia_step(tuna_op *op, int wait_rc)
{
    ia_op *x = (ia_op *)op;
    switch (x->phase) {
    case PHASE_START:
        if (x->library) {
            int rc = post_library(x);
            return rc == MPI_SUCCESS ? TUNA_STEP_WAIT : tuna_a2av_step_done(&x->o, rc);
        }
        if (x->agree) {
            int rc = tuna_a2av_nb_agree_post(&x->o, &x->nb, x->args.ctx, x->v, TUNA_AGREE_N,
                                             x->local_rc);
            if (rc != MPI_SUCCESS)
                return tuna_a2av_step_done(&x->o, rc);
            x->phase = PHASE_AGREE;
            return TUNA_STEP_WAIT;
        }
        return run_row(x, (int)(x->o.row - tuna_a2av_table));
    case PHASE_AGREE: {
        int rc = tuna_a2av_nb_agreed(wait_rc, x->local_rc, x->v, "tuna_ialltoallv");
        if (rc == MPI_SUCCESS)
            rc = tuna_a2av_check_totals(x->v);
        if (rc != MPI_SUCCESS)
            return tuna_a2av_step_done(&x->o, rc);
        tuna_a2av_set_stats(&x->args, x->v);
        int algorithm = (int)(x->o.row - tuna_a2av_table);
        if (x->is_auto && (rc = tuna_a2av_auto_decide_steps(&x->args, &algorithm)) != MPI_SUCCESS)
            return tuna_a2av_step_done(&x->o, rc);
        return run_row(x, algorithm);
    }
    case PHASE_ROW:
        return tuna_a2av_nb_row_step(&x->o, &x->nb, wait_rc);
    case PHASE_LIBRARY:
        return tuna_a2av_nb_library_done(&x->o, wait_rc, "MPI_Ialltoallv");
    }
    return tuna_a2av_step_done(&x->o, tuna_error_set(MPI_ERR_INTERN, "ialltoallv: bad phase"));
}

/* Names of the rows with a step form, for the refusal's message. */
static void step_rows(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < tuna_a2av_registry.n && n < len; i++)
        if (tuna_a2av_table[i].step || tuna_a2av_table[i].desc.kind != TUNA_ROW_ALGORITHM)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
                                  tuna_a2av_table[i].desc.info.name);
}

static int ialltoallv(const ia_call *c, const tuna_options *opt, tuna_request *req);

/* A start that waits for the communicator's set-up: the call and its options. */
typedef struct ia_deferred {
    ia_call call;
    tuna_options opt;
} ia_deferred;

static int ia_restart(void *args, tuna_request *inner)
{
    const ia_deferred *d = args;
    return ialltoallv(&d->call, &d->opt, inner);
}

static int ialltoallv(const ia_call *c, const tuna_options *opt, tuna_request *req)
{
    const tuna_a2av_nb_user *u = &c->user;
    const char *fn = u->fn;
    int rc = tuna_a2av_nb_begin(TUNA_ALLTOALLV, u, &opt, req);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_a2av_algorithm *alg = &tuna_a2av_table[opt->algorithm];
    if (alg->desc.kind == TUNA_ROW_ALGORITHM && !alg->step) {
        char rows[512];
        step_rows(rows, sizeof rows);
        return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                              "%s: algorithm '%s' has no nonblocking form yet (those with one: "
                              "%s; docs/nonblocking.md)",
                              fn, alg->desc.info.name, rows);
    }
    tuna_ctx *ctx;
    bool collective;
    rc = tuna_a2av_nb_context(u->comm, alg->desc.kind == TUNA_ROW_VENDOR, &ctx, &collective);
    if (rc == TUNA_NB_DEFER) {
        /* tuna's aliasing rule at the start, as on every path; the other checks need the
         * context: they run at the restart (the completion returns their error). */
        if (tuna_argcheck_is_local() &&
            (rc = tuna_a2av_library_alias(fn, u->sendbuf, u->recvbuf, &c->sc, &c->rcv,
                                          u->comm)))
            return rc;
        const ia_deferred d = {.call = *c, .opt = *opt};
        return tuna_setup_defer_copy(ctx, ia_restart, &d, sizeof d, fn, req);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    ia_op *x = tuna_calloc(1, sizeof *x);
    if (!x)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the operation", fn);
    tuna_a2av_nb_init(&x->o, &x->args, ia_step, ia_release);
    x->o.row = alg;
    x->call = *c;
    x->is_auto = alg->desc.kind == TUNA_ROW_AUTO;
    /* The library's call: vendor; an intercommunicator (no context); auto where its
     * selector's agreement failed (the set-up carries it). With a context it travels on the
     * private communicator: a start that waited for the set-up posts it later than the
     * application's calls on its own communicator. */
    const bool library = !ctx || alg->desc.kind == TUNA_ROW_VENDOR ||
                         (x->is_auto && ctx->select_status != 1);
    if (library) {
        if (alg->desc.kind != TUNA_ROW_VENDOR)
            tuna_a2av_nb_library_stats(&tuna_a2av_registry, ctx);
        if (ctx)
            x->call.user.comm = ctx->comm;
        if (!library_can(x)) { /* vendor with large counts: linear needs a context */
            free(x);
            return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                  "%s: the MPI library has no MPI_Ialltoallv_c and tuna has no "
                                  "context on this communicator (docs/nonblocking.md)",
                                  fn);
        }
        /* tuna's aliasing rule holds for the library's call too, at the start (as tuna's
         * rows report it, and the blocking vendor row). */
        if ((rc = tuna_a2av_library_alias(fn, u->sendbuf, u->recvbuf, &c->sc, &c->rcv,
                                          u->comm))) {
            free(x);
            return rc;
        }
    } else {
        if ((rc = tuna_a2av_nb_stage(&x->o, &x->nb, c->device)) != MPI_SUCCESS) {
            ia_release(&x->o.op);
            return rc;
        }
        x->args = (tuna_a2av_args){.ctx = ctx, .tp = x->o.op.tp, .scr = &x->nb.scr,
                                   .rank = ctx->rank, .size = ctx->size};
        x->nb.disp = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)ctx->size);
        x->local_rc = x->nb.disp ? tuna_a2av_prepare(&x->args, u->sendbuf, &c->sc, u->stype,
                                                     u->recvbuf, &c->rcv, u->rtype, x->v,
                                                     x->nb.disp, &x->nb.copy,
                                                     &x->nb.copy_counts)
                                 : MPI_ERR_NO_MEM;
        x->agree = collective || x->is_auto || (alg->desc.needs & TUNA_NEEDS_GLOBAL_STATS);
        if (x->local_rc != MPI_SUCCESS && !collective) { /* this rank's error, at once */
            rc = x->local_rc;
            ia_release(&x->o.op);
            return rc;
        }
        if (!x->is_auto)
            tuna_params_resolve(&alg->desc.info, opt->value, ctx->size, x->args.param);
        x->args.tag_shift = tuna_op_tag_shift(ctx, false);
    }
    /* auto reuses the communicator's last agreed choice where it has a step form: no
     * agreement. Not the library's own: an MPI_Ialltoallv that auto started this way hung in
     * Open MPI 4.1.4 (test_nonblocking at P = 3; docs/nonblocking.md, "Not yet"), so auto
     * then agrees and takes the best step row. */
    if (!library && x->is_auto && ctx->agreed_valid && !collective &&
        tuna_a2av_table[ctx->reuse_algorithm].step) {
        const tuna_a2av_algorithm *r = &tuna_a2av_table[ctx->reuse_algorithm];
        x->is_auto = false;
        x->o.row = r;
        tuna_params_copy(x->args.param, ctx->reuse_param);
        tuna_stats_current.algorithm = ctx->reuse_algorithm;
        tuna_stats_current.auto_source = ctx->reuse_source;
        if (tuna_stats_on)
            tuna_params_copy(tuna_stats_current.params, ctx->reuse_param);
        x->agree = (r->desc.needs & TUNA_NEEDS_GLOBAL_STATS) != 0;
    }
    x->library = library;
    x->phase = PHASE_START;
    /* The first step posts (or finishes with an error, which the completion returns). */
    tuna_op_start(&x->o.op);
    *req = &x->o.op;
    return MPI_SUCCESS;
}

/* A start on the counts and displacements as the call came (large: MPI_Count and MPI_Aint). */
static int ialltoallv_of(bool large, const void *sendbuf, const void *sendcounts,
                         const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                         const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm, const tuna_options *opt, bool device, tuna_request *req)
{
    const ia_call c = {.user = {.fn = large ? "tuna_ialltoallv_c" : "tuna_ialltoallv",
                                .sendbuf = sendbuf, .recvbuf = recvbuf, .stype = sendtype,
                                .rtype = recvtype, .comm = comm},
                       .sc = large ? (tuna_counts){.nl = sendcounts, .dl = sdispls}
                                   : (tuna_counts){.n = sendcounts, .d = sdispls},
                       .rcv = large ? (tuna_counts){.nl = recvcounts, .dl = rdispls}
                                    : (tuna_counts){.n = recvcounts, .d = rdispls},
                       .device = device};
    return ialltoallv(&c, opt, req);
}

/* The public entries: device buffers go where memory_route.c sends them (the library's call,
 * or a row staging them). */
static inline __attribute__((always_inline)) int
ialltoallv_public(bool large, const void *sendbuf, const void *sendcounts,
                  const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                  const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                  MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    int rc;
    const bool device = tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST;
    if (device) {
        if ((rc = tuna_memory_ialltoallv(large, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm, opt, req)) >= 0)
            return rc;
        opt = tuna_memory_nb_row(TUNA_ALLTOALLV, opt);
    }
    return ialltoallv_of(large, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                         rdispls, recvtype, comm, opt, device, req);
}

int tuna_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    const tuna_options *opt, tuna_request *req)
{
    return ialltoallv_public(false, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, opt, req);
}

int tuna_ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                      tuna_request *req)
{
    return ialltoallv_public(true, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, opt, req);
}

int tuna_ialltoallv_host(bool large, const void *sendbuf, const void *sendcounts,
                         const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                         const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    return ialltoallv_of(large, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                         rdispls, recvtype, comm, opt, false, req);
}
