/*
 * tuna_alltoallv_init, tuna_alltoallv_init_c (one body, int or MPI_Count counts as tuna_counts):
 * the arguments checked and agreed once (one allreduce, which also
 * gives the size statistics), the choice made once (forced, model, measure or wisdom), the
 * displacements normalised and the in-place copy allocated once. A start is the chosen
 * algorithm's exchange (or PMPI_Alltoallv / PMPI_Alltoallv_c) on the prepared arguments,
 * nothing else. On device buffers a row that serves them runs through the plan's own staging
 * transport (src/transport/cuda_staged.c; docs/gpu.md): its stream made at init, its pinned
 * pool in the first start, both freed with the plan.
 */
#include "plan.h"
#include "memkind.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int row_step(tuna_op *op, int wait_rc)
{
    tuna_a2av_op *o = (tuna_a2av_op *)op;
    return o->row->step(o, wait_rc);
}

/* A staged row's step: at its end a failed device copy (the transport's copies cannot
 * return one) is the start's error. */
static int staged_row_step(tuna_op *op, int wait_rc)
{
    tuna_a2av_op *o = (tuna_a2av_op *)op;
    const int r = o->row->step(o, wait_rc);
    if (r == TUNA_STEP_DONE) {
        const int copy_rc = tuna_staged_result(op->tp);
        if (op->rc == MPI_SUCCESS)
            op->rc = copy_rc;
    }
    return r;
}

int tuna_plan_a2av_begin(struct tuna_plan_s *p)
{
    /* vendor completes in the start: Open MPI 4.1.4's MPI_Ialltoallv, started here and
     * completed in tuna_wait, did not complete in test_plans at P >= 11
     * (docs/nonblocking.md, "Not yet"). */
    if (p->vendor || !p->run->step)
        return 1;
    p->a2av_op = (tuna_a2av_op){.a = &p->a, .row = p->run};
    p->a2av_op.op.step = p->staged ? staged_row_step : row_step;
    p->a2av_op.op.tp = p->a.tp;
    if (p->staged) /* a failed copy of an earlier start that ended early is not this one's */
        (void)tuna_staged_result(p->a.tp);
    p->a2av_op.op.publish_stats = true;
    if (p->inplace_copy) {
        int rc = tuna_a2av_pack_inplace(&p->a, p->inplace_copy);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    p->a.info = &p->run->desc.info;
    p->a.tag_shift = p->tag_shift;
    p->inflight = &p->a2av_op.op;
    tuna_op_start(p->inflight);
    return MPI_SUCCESS;
}

int tuna_plan_a2av_run(struct tuna_plan_s *p)
{
    p->a.tag_shift = 0; /* a blocking exchange: the blocking calls' tags */
    if (p->inplace_copy) {
        int rc = tuna_a2av_pack_inplace(&p->a, p->inplace_copy);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (!p->staged)
        return tuna_a2av_run_row(p->run, &p->a);
    (void)tuna_staged_result(p->a.tp);
    const int rc = tuna_a2av_run_row(p->run, &p->a);
    const int copy_rc = tuna_staged_result(p->a.tp); /* a failed device copy: the run's error */
    return rc != MPI_SUCCESS ? rc : copy_rc;
}

/* Whether the library has the large-count call a vendor plan of coll runs (MPI 4's
 * MPI_Alltoallv_c / MPI_Alltoall_c; decided by the build, so the same on every rank). */
static bool library_has_large(tuna_collective coll)
{
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
    if (coll == TUNA_ALLTOALLV)
        return true;
#endif
#ifdef TUNA_HAVE_MPI_ALLTOALL_C
    if (coll == TUNA_ALLTOALL)
        return true;
#endif
    (void)coll;
    return false;
}

static const char *large_call_name(tuna_collective coll)
{
    return coll == TUNA_ALLTOALL ? "MPI_Alltoall_c" : "MPI_Alltoallv_c";
}

void tuna_plan_a2av_choose(struct tuna_plan_s *p, const tuna_choice *c)
{
    const tuna_a2av_algorithm *table = p->coll == TUNA_ALLTOALL ? tuna_a2a_table
                                                                : tuna_a2av_table;
    p->vendor = table[c->algorithm].desc.kind == TUNA_ROW_VENDOR;
    p->run = &table[c->algorithm];
    p->fallback = NULL;
    memcpy(p->a.param, c->param, sizeof p->a.param);
    if (p->vendor && p->large && !library_has_large(p->coll)) {
        /* As the blocking _c calls: the linear exchange, Open MPI's basic one (no parameters),
         * with a local start; tuna_stats_last() names the replacement. */
        p->fallback_algorithm = tuna_algorithm_find(p->coll, "linear");
        p->fallback = p->coll == TUNA_ALLTOALL ? "the MPI library has no MPI_Alltoall_c"
                                               : "the MPI library has no MPI_Alltoallv_c";
        p->vendor = false;
        p->run = &table[p->fallback_algorithm];
    }
}

int tuna_plan_a2av_inter_large(const char *fn, tuna_collective coll, bool large)
{
    if (!large || library_has_large(coll))
        return MPI_SUCCESS;
    return tuna_error_set(MPI_ERR_COMM,
                          "%s: the MPI library has no %s, and vendor's replacement there (tuna's "
                          "linear exchange) takes intracommunicators only",
                          fn, large_call_name(coll));
}

int tuna_plan_a2av_open(const char *fn, MPI_Comm comm, int *local, struct tuna_plan_s **p,
                        int *inter)
{
    *p = tuna_calloc(1, sizeof **p);
    if (!*p && *local == MPI_SUCCESS)
        *local = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
    *inter = 0;
    int rc = PMPI_Comm_test_inter(comm, inter);
    if (rc != MPI_SUCCESS) {
        free(*p);
        return tuna_error_set(rc, "%s: MPI_Comm_test_inter failed", fn);
    }
    return MPI_SUCCESS;
}

void tuna_plan_a2av_forced(struct tuna_plan_s *p, const tuna_a2av_algorithm *alg,
                           const tuna_options *opt, int P)
{
    tuna_choice c = {.algorithm = opt->algorithm};
    tuna_params_resolve(&alg->desc.info, opt->value, P, c.param);
    tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_FORCED);
    tuna_plan_a2av_choose(p, &c);
}

void tuna_plan_a2av_redirect(struct tuna_plan_s *p, void *private_recv)
{
    p->recvbuf = private_recv ? private_recv : p->user_recvbuf;
    p->a.rbuf = p->recvbuf;
}

int tuna_plan_a2av_setup(struct tuna_plan_s *p, tuna_collective coll, MPI_Comm comm,
                         tuna_ctx *ctx, int (*start)(struct tuna_plan_s *p), const void *sendbuf,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Datatype recvtype, bool large)
{
    p->coll = p->info.collective = coll;
    p->large = large;
    p->comm = comm;
    p->ctx = ctx;
    p->start = start;
    p->begin = tuna_plan_a2av_begin;
    p->choose = tuna_plan_a2av_choose;
    p->redirect = tuna_plan_a2av_redirect;
    p->sendbuf = sendbuf;
    p->recvbuf = p->user_recvbuf = recvbuf;
    p->sendtype = sendtype;
    p->recvtype = recvtype;
    if (ctx) {
        p->a = (tuna_a2av_args){.ctx = ctx, .tp = &tuna_transport_mpi_host, .scr = &p->scr,
                                .rank = ctx->rank, .size = ctx->size};
        p->tag_shift = tuna_op_tag_shift(ctx, true);
    }
    /* The caller may free derived datatypes after init (MPI's persistent semantics). */
    int rc;
    if ((sendbuf != MPI_IN_PLACE && (rc = tuna_plan_keep_type(p, &p->sendtype)) != MPI_SUCCESS) ||
        (rc = tuna_plan_keep_type(p, &p->recvtype)) != MPI_SUCCESS)
        return rc;
    return MPI_SUCCESS;
}

/* The library's own alltoallv on the plan's copies of the arguments (int or large counts). */
static int a2av_start(struct tuna_plan_s *p)
{
    if (!p->vendor)
        return tuna_plan_a2av_run(p);
    int rc;
    const char *call = "PMPI_Alltoallv";
    if (!p->large) {
        rc = PMPI_Alltoallv(p->sendbuf, p->sc.n, p->sc.d, p->sendtype, p->recvbuf, p->rcv.n,
                            p->rcv.d, p->recvtype, p->comm);
    } else {
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
        call = "PMPI_Alltoallv_c";
        rc = PMPI_Alltoallv_c(p->sendbuf, p->sc.nl, p->sc.dl, p->sendtype, p->recvbuf, p->rcv.nl,
                              p->rcv.dl, p->recvtype, p->comm);
#else
        /* not reached: tuna_plan_a2av_choose() runs linear instead */
        return tuna_error_set(MPI_ERR_INTERN, "the MPI library has no MPI_Alltoallv_c");
#endif
    }
    return tuna_library_result(rc, call); /* tuna_start did not clear (no work on top) */
}

/* The plan's own copies of the count and displacement arrays, as wide as the caller's (a start
 * reads none of the caller's): p->sc (empty in place) and p->rcv point into them. */
static int copy_arrays(struct tuna_plan_s *p, const tuna_counts *sc, const tuna_counts *rcv,
                       bool inplace, int P)
{
    const size_t n = (size_t)(P > 0 ? P : 1);
    const size_t cw = p->large ? sizeof(MPI_Count) : sizeof(int),
                 dw = p->large ? sizeof(MPI_Aint) : sizeof(int);
    char *m = tuna_malloc((cw + dw) * 2 * n);
    if (!m)
        return MPI_ERR_NO_MEM;
    p->arrays = m;
    /* sendcounts, sdispls, recvcounts, rdispls; every piece aligned for its type */
    char *scn = m, *sdd = m + cw * n, *rcn = sdd + dw * n, *rdd = rcn + cw * n;
    const size_t cb = cw * (size_t)P, db = dw * (size_t)P;
    if (!inplace) {
        memcpy(scn, p->large ? (const void *)sc->nl : (const void *)sc->n, cb);
        memcpy(sdd, p->large ? (const void *)sc->dl : (const void *)sc->d, db);
    }
    memcpy(rcn, p->large ? (const void *)rcv->nl : (const void *)rcv->n, cb);
    memcpy(rdd, p->large ? (const void *)rcv->dl : (const void *)rcv->d, db);
    if (p->large) {
        p->sc = inplace ? (tuna_counts){0}
                        : (tuna_counts){.nl = (MPI_Count *)scn, .dl = (MPI_Aint *)sdd};
        p->rcv = (tuna_counts){.nl = (MPI_Count *)rcn, .dl = (MPI_Aint *)rdd};
    } else {
        p->sc = inplace ? (tuna_counts){0} : (tuna_counts){.n = (int *)scn, .d = (int *)sdd};
        p->rcv = (tuna_counts){.n = (int *)rcn, .d = (int *)rdd};
    }
    return MPI_SUCCESS;
}

/* Vendor on an intercommunicator: tuna has no context there; local checks only. */
static int init_intercomm(struct tuna_plan_s *p, const char *fn, const void *sendbuf,
                          const tuna_counts *sc, MPI_Datatype sendtype, const tuna_counts *rcv,
                          MPI_Datatype recvtype)
{
    int P, me;
    TUNA_MPI_CHECK(PMPI_Comm_remote_size(p->comm, &P));
    TUNA_MPI_CHECK(PMPI_Comm_rank(p->comm, &me));
    if (sendbuf == MPI_IN_PLACE)
        return tuna_error_set(MPI_ERR_ARG, "MPI_IN_PLACE is not valid on an intercommunicator");
    int rc = tuna_plan_a2av_inter_large(fn, TUNA_ALLTOALLV, p->large);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_type_info si, ri;
    long long v[TUNA_AGREE_N] = {0};
    rc = tuna_a2av_check_args(sendbuf, sc, sendtype, p->recvbuf, rcv, recvtype, P, me, &si, &ri,
                              v);
    if (rc != MPI_SUCCESS)
        return rc;
    p->a.size = P;
    p->vendor = true;
    return MPI_SUCCESS;
}

/* tuna_alltoallv_init and tuna_alltoallv_init_c: one body, counts of either width (sc, rcv). */
static int alltoallv_init(const char *fn, bool large, const void *sendbuf,
                          const tuna_counts *sc, MPI_Datatype sendtype, void *recvbuf,
                          const tuna_counts *rcv, MPI_Datatype recvtype, MPI_Comm comm,
                          const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    const double t0 = PMPI_Wtime();
    /* A local error (a NULL plan pointer, bad flags or options, no memory) still takes part
     * in the agreement below: one rank's mistake fails every rank instead of hanging them. */
    int local = tuna_plan_begin(fn, TUNA_ALLTOALLV, comm, flags, plan, &opt);
    /* device buffers: the row staged (a staging transport of the plan's own), else vendor */
    bool staged = false;
    tuna_memory_plan_options_a2av(sendbuf, sendtype, recvbuf, recvtype, &opt, &staged);
    if (comm == MPI_COMM_NULL)
        return local; /* nothing to agree over (tuna_call_begin said so) */
    const tuna_a2av_algorithm *alg = local == MPI_SUCCESS ? &tuna_a2av_table[opt->algorithm]
                                                          : NULL;
    struct tuna_plan_s *p;
    int inter;
    int rc = tuna_plan_a2av_open(fn, comm, &local, &p, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    if (inter && local != MPI_SUCCESS) { /* vendor only there, local checks only */
        free(p);
        return local;
    }
    tuna_type_info si = {0}, ri = {0};
    long long v[TUNA_AGREE_N] = {0};
    tuna_ctx *ctx = NULL;
    if (!inter) {
        rc = tuna_ctx_get(comm, alg ? alg->desc.info.name : "plan", &ctx);
        if (rc != MPI_SUCCESS) {
            free(p);
            return rc;
        }
        if (local == MPI_SUCCESS)
            local = tuna_a2av_check_args(sendbuf, sc, sendtype, recvbuf, rcv, recvtype,
                                         ctx->size, ctx->rank, &si, &ri, v);
        v[TUNA_AGREE_ERROR] = local != MPI_SUCCESS;
        /* Init is collective: errors are agreed, so every rank fails together. */
        rc = tuna_agree(ctx, v);
        if (rc == MPI_SUCCESS && local != MPI_SUCCESS)
            rc = local;
        else if (rc == MPI_SUCCESS && v[TUNA_AGREE_ERROR])
            rc = tuna_error_set(MPI_ERR_ARG, "%s: invalid arguments on another rank; no plan made",
                                fn);
        else if (rc == MPI_SUCCESS)
            rc = tuna_a2av_check_totals(v);
        if (rc != MPI_SUCCESS) {
            free(p);
            return rc;
        }
    }
    /* From here every rank's arguments are valid: p, alg and plan are set. */
    rc = tuna_plan_a2av_setup(p, TUNA_ALLTOALLV, comm, ctx, a2av_start, sendbuf, sendtype,
                              recvbuf, recvtype, large);
    if (rc != MPI_SUCCESS)
        goto out;
    /* Its stream now; its pinned pool in the first start (sized by the row's rounds there),
     * kept until the plan is freed. */
    if (staged && !inter && (rc = tuna_staged_open(&p->staged, &p->a.tp)) != MPI_SUCCESS)
        goto out;
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (inter) {
        if (alg->desc.kind != TUNA_ROW_VENDOR) {
            rc = tuna_error_set(MPI_ERR_COMM, "algorithm '%s' supports intracommunicators only "
                                              "(use 'vendor' for intercommunicators)",
                                alg->desc.info.name);
            goto out;
        }
        rc = init_intercomm(p, fn, sendbuf, sc, sendtype, rcv, recvtype);
        if (rc != MPI_SUCCESS)
            goto out;
    } else {
        tuna_a2av_set_stats(&p->a, v);
        const long long sig[] = {v[TUNA_AGREE_MAX_BLOCK], v[TUNA_AGREE_MAX_TOTAL],
                                 v[TUNA_AGREE_ZERO_BLOCKS], v[TUNA_AGREE_SUM_BYTES], inplace};
        tuna_plan_fill_key(p, sig, 5);
    }

    /* Copies of the count and displacement arrays: a start does not read the caller's. */
    const int P = p->a.size;
    if (copy_arrays(p, sc, rcv, inplace, P) != MPI_SUCCESS) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
        goto out;
    }
    if (inter) {
        tuna_choice c = {.algorithm = opt->algorithm};
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_FORCED);
        goto out;
    }

    /* tuna's description of the exchange, for every candidate (the measure tries several). */
    p->disp = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    if (inplace) {
        p->inplace_copy = tuna_malloc(tuna_a2av_inplace_bytes(&p->rcv, ri.size, P) + 1);
        if (!ri.contig)
            p->inplace_counts = tuna_malloc(sizeof(int) * (size_t)P);
    }
    if (!p->disp || (inplace && (!p->inplace_copy || (!ri.contig && !p->inplace_counts)))) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
        goto out;
    }
    tuna_a2av_describe(&p->a, sendbuf, &p->sc, p->sendtype, &si, recvbuf, &p->rcv, p->recvtype,
                       &ri, p->disp, p->inplace_copy, p->inplace_counts);
    if (alg->desc.kind != TUNA_ROW_AUTO) {
        tuna_plan_a2av_forced(p, alg, opt, P);
        goto out;
    }
    if (p->staged) { /* auto staging device buffers: the model's cheapest device row */
        tuna_choice c;
        if ((rc = tuna_a2av_select_device(p->ctx, &p->a, &c)) != MPI_SUCCESS)
            goto out;
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_ESTIMATE);
        tuna_plan_a2av_choose(p, &c);
        goto out;
    }
    rc = tuna_plan_span(p->recvtype, &p->rcv, P, &p->private_bytes, &p->private_offset);
    if (rc != MPI_SUCCESS)
        goto out;
    tuna_select_input in = tuna_select_input_a2av(p->ctx, (double)p->a.max_block_bytes,
                                                  p->a.mean_block_bytes,
                                                  (double)p->a.total_bytes_max,
                                                  p->a.zero_fraction, false);
    rc = tuna_plan_decide(p, &in, flags);
out: /* rc: MPI_SUCCESS, or the error that stopped the init */
    return tuna_plan_finish(p, rc, t0, plan);
}

int tuna_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    const tuna_counts sc = {.n = sendcounts, .d = sdispls}, rcv = {.n = recvcounts, .d = rdispls};
    return alltoallv_init("tuna_alltoallv_init", false, sendbuf, &sc, sendtype, recvbuf, &rcv, recvtype,
                          comm, opt, flags, plan);
}

int tuna_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                          unsigned flags, tuna_plan *plan)
{
    const tuna_counts sc = {.nl = sendcounts, .dl = sdispls},
                      rcv = {.nl = recvcounts, .dl = rdispls};
    return alltoallv_init("tuna_alltoallv_init_c", true, sendbuf, &sc, sendtype, recvbuf, &rcv,
                          recvtype, comm, opt, flags, plan);
}
