/*
 * tuna_alltoallv_init: the arguments checked and agreed once (one allreduce, which also
 * gives the size statistics), the choice made once (forced, model, measure or wisdom), the
 * displacements normalised and the in-place copy allocated once. A start is the chosen
 * algorithm's exchange (or PMPI_Alltoallv) on the prepared arguments, nothing else.
 */
#include "plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int row_step(tuna_op *op, int wait_rc)
{
    tuna_a2av_op *o = (tuna_a2av_op *)op;
    return o->row->step(o, wait_rc);
}

int tuna_plan_a2av_begin(struct tuna_plan_s *p)
{
    /* vendor completes in the start: Open MPI 4.1.4's MPI_Ialltoallv, started here and
     * completed in tuna_wait, did not complete in test_plans at P >= 11
     * (docs/nonblocking.md, "Not yet"). */
    if (p->vendor || !p->run->step)
        return 1;
    p->a2av_op = (tuna_a2av_op){.a = &p->a, .row = p->run};
    p->a2av_op.op.step = row_step;
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
    return tuna_a2av_run_row(p->run, &p->a);
}

void tuna_plan_a2av_choose(struct tuna_plan_s *p, const tuna_choice *c)
{
    const tuna_a2av_algorithm *table = p->coll == TUNA_ALLTOALL ? tuna_a2a_table
                                                                : tuna_a2av_table;
    p->vendor = table[c->algorithm].desc.kind == TUNA_ROW_VENDOR;
    p->run = &table[c->algorithm];
    memcpy(p->a.param, c->param, sizeof p->a.param);
}

void tuna_plan_a2av_redirect(struct tuna_plan_s *p, void *private_recv)
{
    p->recvbuf = private_recv ? private_recv : p->user_recvbuf;
    p->a.rbuf = p->recvbuf;
}

int tuna_plan_a2av_setup(struct tuna_plan_s *p, tuna_collective coll, MPI_Comm comm,
                         tuna_ctx *ctx, int (*start)(struct tuna_plan_s *p), const void *sendbuf,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Datatype recvtype)
{
    p->coll = p->info.collective = coll;
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
        p->a = (tuna_a2av_args){.ctx = ctx, .scr = &p->scr, .rank = ctx->rank,
                                .size = ctx->size};
        p->tag_shift = tuna_op_tag_shift(ctx, true);
    }
    /* The caller may free derived datatypes after init (MPI's persistent semantics). */
    int rc;
    if ((sendbuf != MPI_IN_PLACE && (rc = tuna_plan_keep_type(p, &p->sendtype)) != MPI_SUCCESS) ||
        (rc = tuna_plan_keep_type(p, &p->recvtype)) != MPI_SUCCESS)
        return rc;
    return MPI_SUCCESS;
}

static int a2av_start(struct tuna_plan_s *p)
{
    const int P = p->a.size;
    if (!p->vendor)
        return tuna_plan_a2av_run(p);
    const int *c = p->arrays;
    int rc = PMPI_Alltoallv(p->sendbuf, c, c + P, p->sendtype, p->recvbuf, c + 2 * P, c + 3 * P,
                            p->recvtype, p->comm);
    if (rc == MPI_SUCCESS)
        return rc;
    tuna_error_clear(); /* tuna_start did not (no work on top of the library's call) */
    return tuna_error_set(rc, "PMPI_Alltoallv failed");
}

/* Vendor on an intercommunicator: tuna has no context there; local checks only. */
static int init_intercomm(struct tuna_plan_s *p, const void *sendbuf, const int *sendcounts,
                          const int *sdispls, MPI_Datatype sendtype, const int *recvcounts,
                          const int *rdispls, MPI_Datatype recvtype)
{
    int P, me;
    TUNA_MPI_CHECK(MPI_Comm_remote_size(p->comm, &P));
    TUNA_MPI_CHECK(MPI_Comm_rank(p->comm, &me));
    if (sendbuf == MPI_IN_PLACE)
        return tuna_error_set(MPI_ERR_ARG, "MPI_IN_PLACE is not valid on an intercommunicator");
    tuna_type_info si, ri;
    long long v[TUNA_AGREE_N] = {0};
    int rc = tuna_a2av_check_args(sendbuf, sendcounts, sdispls, sendtype, p->recvbuf,
                                  recvcounts, rdispls, recvtype, P, me, &si, &ri, v);
    if (rc != MPI_SUCCESS)
        return rc;
    p->a.size = P;
    p->vendor = true;
    return MPI_SUCCESS;
}

int tuna_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    const double t0 = MPI_Wtime();
    /* A local error (a NULL plan pointer, bad flags or options, no memory) still takes part
     * in the agreement below: one rank's mistake fails every rank instead of hanging them. */
    int local = tuna_plan_begin("tuna_alltoallv_init", TUNA_ALLTOALLV, comm, flags, plan, &opt);
    if (comm == MPI_COMM_NULL)
        return local; /* nothing to agree over (tuna_call_begin said so) */
    const tuna_a2av_algorithm *alg = local == MPI_SUCCESS ? &tuna_a2av_table[opt->algorithm]
                                                          : NULL;
    struct tuna_plan_s *p = tuna_calloc(1, sizeof *p);
    if (!p && local == MPI_SUCCESS)
        local = tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallv_init: no memory");
    int inter = 0;
    int rc = MPI_Comm_test_inter(comm, &inter);
    if (rc != MPI_SUCCESS) {
        free(p);
        return tuna_error_set(rc, "tuna_alltoallv_init: MPI_Comm_test_inter failed");
    }
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
            local = tuna_a2av_check_args(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, ctx->size, ctx->rank,
                                         &si, &ri, v);
        v[TUNA_AGREE_ERROR] = local != MPI_SUCCESS;
        /* Init is collective: errors are agreed, so every rank fails together. */
        rc = tuna_agree(ctx, v);
        if (rc == MPI_SUCCESS && local != MPI_SUCCESS)
            rc = local;
        else if (rc == MPI_SUCCESS && v[TUNA_AGREE_ERROR])
            rc = tuna_error_set(MPI_ERR_ARG, "tuna_alltoallv_init: invalid arguments on another "
                                             "rank; no plan made");
        else if (rc == MPI_SUCCESS)
            rc = tuna_a2av_check_totals(v);
        if (rc != MPI_SUCCESS) {
            free(p);
            return rc;
        }
    }
    /* From here every rank's arguments are valid: p, alg and plan are set. */
    rc = tuna_plan_a2av_setup(p, TUNA_ALLTOALLV, comm, ctx, a2av_start, sendbuf, sendtype,
                              recvbuf, recvtype);
    if (rc != MPI_SUCCESS)
        goto out;
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (inter) {
        if (alg->desc.kind != TUNA_ROW_VENDOR) {
            rc = tuna_error_set(MPI_ERR_COMM, "algorithm '%s' supports intracommunicators only "
                                              "(use 'vendor' for intercommunicators)",
                                alg->desc.info.name);
            goto out;
        }
        rc = init_intercomm(p, sendbuf, sendcounts, sdispls, sendtype, recvcounts, rdispls,
                            recvtype);
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
    p->arrays = tuna_malloc(sizeof(int) * 4 * (size_t)(P > 0 ? P : 1));
    if (!p->arrays) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallv_init: no memory");
        goto out;
    }
    if (!inplace) {
        memcpy(p->arrays, sendcounts, sizeof(int) * (size_t)P);
        memcpy(p->arrays + P, sdispls, sizeof(int) * (size_t)P);
    }
    memcpy(p->arrays + 2 * P, recvcounts, sizeof(int) * (size_t)P);
    memcpy(p->arrays + 3 * P, rdispls, sizeof(int) * (size_t)P);
    if (inter) {
        tuna_choice c = {.algorithm = opt->algorithm};
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_FORCED);
        goto out;
    }

    /* tuna's description of the exchange, for every candidate (the measure tries several). */
    p->disp = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    if (inplace) {
        p->inplace_copy = tuna_malloc(tuna_a2av_inplace_bytes(recvcounts, ri.size, P) + 1);
        if (!ri.contig)
            p->inplace_counts = tuna_malloc(sizeof(int) * (size_t)P);
    }
    if (!p->disp || (inplace && (!p->inplace_copy || (!ri.contig && !p->inplace_counts)))) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallv_init: no memory");
        goto out;
    }
    const int *a = p->arrays;
    tuna_a2av_describe(&p->a, sendbuf, inplace ? NULL : a, inplace ? NULL : a + P, p->sendtype,
                       &si, recvbuf, a + 2 * P, a + 3 * P, p->recvtype, &ri, p->disp,
                       p->inplace_copy, p->inplace_counts);
    if (alg->desc.kind != TUNA_ROW_AUTO) {
        tuna_choice c = {.algorithm = opt->algorithm};
        tuna_params_resolve(&alg->desc.info, opt->value, P, c.param);
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_FORCED);
        tuna_plan_a2av_choose(p, &c);
        goto out;
    }
    rc = tuna_plan_span(p->recvtype, a + 2 * P, a + 3 * P, P, &p->private_bytes,
                        &p->private_offset);
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
