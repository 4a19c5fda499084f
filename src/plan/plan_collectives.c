/*
 * tuna_allgather_init / tuna_allreduce_init: arguments checked and agreed once (every rank
 * the same block size), the algorithm and k chosen once (forced, model, measure or wisdom;
 * auto among the rows whose starts are local). A start is local: the chosen row's operation
 * with the plan's tags, its first step posted (docs/nonblocking.md); a plan forced to vendor,
 * and the measure, run the blocking call with that concrete algorithm: no agreement, no
 * selection. Device buffers a row stages (memory_route.c): the plan's own staging transport
 * (p->a.tp; stream at init, pinned pool from the first start, freed with the plan), auto
 * decided at init among the device rows by the model (no measure: its private receive buffer
 * is host memory).
 */
#include "plan.h"
#include "memkind.h"
#include "../transport/cuda_staged.h"

#include <stdlib.h>
#include <string.h>

static void coll_choose(struct tuna_plan_s *p, const tuna_choice *c)
{
    p->chosen = tuna_plan_options_of(p->coll, c);
}

static void coll_redirect(struct tuna_plan_s *p, void *private_recv)
{
    /* In place, the input is read from the receive buffer: the private one then. */
    p->recvbuf = private_recv ? private_recv : p->user_recvbuf;
}

static int allgather_start(struct tuna_plan_s *p)
{
    return tuna_allgather(p->sendbuf, p->scount, p->sendtype, p->recvbuf, p->rcount,
                          p->recvtype, p->comm, &p->chosen);
}

/* A staged start's steps: at their end a failed device copy (the transport's copies return
 * nothing) is the start's error. */
static int staged_end(tuna_op *op, int r)
{
    if (r == TUNA_STEP_DONE) {
        const int copy_rc = tuna_staged_result(op->tp);
        if (op->rc == MPI_SUCCESS)
            op->rc = copy_rc;
    }
    return r;
}

static int ag_staged_step(tuna_op *op, int wait_rc)
{
    return staged_end(op, tuna_ag_op_step(op, wait_rc));
}

static int ar_staged_step(tuna_op *op, int wait_rc)
{
    return staged_end(op, tuna_ar_op_step(op, wait_rc));
}

/* The transport of a start: the plan's staging one (cleared of an earlier start's failed
 * copy, which is not this one's), or MPI on host memory. */
static const tuna_transport *start_tp(struct tuna_plan_s *p)
{
    if (!p->staged)
        return &tuna_transport_mpi_host;
    (void)tuna_staged_result(p->a.tp);
    return p->a.tp;
}

/* The local start of a row with a step form (1: vendor, or nothing to move: the start runs
 * the blocking call). */
static int allgather_begin(struct tuna_plan_s *p)
{
    const tuna_ag_algorithm *row = &tuna_ag_table[p->chosen.algorithm];
    if (row->desc.kind == TUNA_ROW_VENDOR || p->block == 0)
        return 1;
    long param[TUNA_MAX_PARAMS] = {0};
    tuna_params_resolve(&row->desc.info, p->chosen.value, p->ctx->size, param);
    p->ag_op.op = (tuna_op){.step = p->staged ? ag_staged_step : tuna_ag_op_step,
                            .publish_stats = true};
    int rc = tuna_ag_op_setup(&p->ag_op, p->ctx, row, param, p->tag_shift, p->sendbuf,
                              p->scount, p->sendtype, p->recvbuf, p->rcount, p->recvtype,
                              p->block, start_tp(p));
    if (rc != MPI_SUCCESS)
        return rc;
    p->inflight = &p->ag_op.op;
    tuna_op_start(p->inflight);
    return MPI_SUCCESS;
}

static int allreduce_start(struct tuna_plan_s *p)
{
    return tuna_allreduce(p->sendbuf, p->recvbuf, p->rcount, p->dtype, p->op, p->comm,
                          &p->chosen);
}

/* The local start of a row with a step form (1: vendor, or nothing to move). */
static int allreduce_begin(struct tuna_plan_s *p)
{
    const tuna_ar_algorithm *row = &tuna_ar_table[p->chosen.algorithm];
    if (row->desc.kind == TUNA_ROW_VENDOR || p->block == 0)
        return 1;
    tuna_ar_args a = {.rbuf = p->recvbuf, .count = p->rcount, .type = p->dtype, .op = p->op,
                      .commute = p->commute, .ctx = p->ctx, .tp = start_tp(p),
                      .rank = p->ctx->rank, .size = p->ctx->size, .tag_shift = p->tag_shift};
    tuna_params_resolve(&row->desc.info, p->chosen.value, p->ctx->size, a.param);
    p->ar_op.op = (tuna_op){.step = p->staged ? ar_staged_step : tuna_ar_op_step,
                            .publish_stats = true};
    int rc = tuna_ar_op_setup(&p->ar_op, row, &a, p->sendbuf);
    if (rc != MPI_SUCCESS)
        return rc;
    p->inflight = &p->ar_op.op;
    tuna_op_start(p->inflight);
    return MPI_SUCCESS;
}

/* The shared part: context, agreed check (local_rc, and `same` equal on every rank), key,
 * choice. */
static int coll_init(struct tuna_plan_s *p, tuna_collective coll, MPI_Comm comm,
                     const char *fn, const tuna_options *opt, unsigned flags, bool staged,
                     int local_rc,
                     long long same, const char *same_name, double bytes, bool commute,
                     MPI_Datatype rtype, long long rcount_total)
{
    /* p and opt are valid only where local_rc is MPI_SUCCESS; a local error still takes part
     * in the agreement, so one rank's mistake fails every rank instead of hanging them. */
    const tuna_algorithm_info *info =
        local_rc == MPI_SUCCESS ? tuna_algorithm_get(coll, opt->algorithm) : NULL;
    int inter = 0;
    TUNA_MPI_CHECK(PMPI_Comm_test_inter(comm, &inter));
    if (inter)
        return local_rc != MPI_SUCCESS
                   ? local_rc
                   : tuna_error_set(MPI_ERR_COMM, "%s: plans take intracommunicators only", fn);
    tuna_ctx *ctx;
    int rc = tuna_ctx_get(comm, info ? info->name : "plan", &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *const names[] = {same_name};
    rc = tuna_coll_agree_args(ctx, tuna_collective_name(coll), local_rc, &same, names, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    p->ctx = ctx;
    p->tag_shift = tuna_op_tag_shift(ctx, true); /* its local starts' tags */
    /* Device buffers a row stages: the plan's stream now, its pinned pool in the first start
     * (sized by the row's rounds there), both kept until the plan is freed. */
    if (staged && (rc = tuna_staged_open(&p->staged, &p->a.tp)) != MPI_SUCCESS)
        return rc;
    const int P = p->ctx->size;
    const long long sig[] = {same, commute};
    tuna_plan_fill_key(p, sig, 2);
    if (tuna_registry_row(tuna_registry_of(coll), opt->algorithm)->kind != TUNA_ROW_AUTO) {
        tuna_choice c = {.algorithm = opt->algorithm};
        tuna_params_resolve(info, opt->value, P, c.param);
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_FORCED);
        coll_choose(p, &c);
        return MPI_SUCCESS;
    }
    if (p->staged) { /* auto staging device buffers: the model's cheapest device row */
        tuna_choice c;
        if ((rc = tuna_coll_auto_device(p->ctx, tuna_registry_of(coll), bytes, &c)) !=
            MPI_SUCCESS)
            return rc;
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_ESTIMATE);
        coll_choose(p, &c);
        return MPI_SUCCESS;
    }
    rc = tuna_plan_span_run(rtype, rcount_total, &p->private_bytes, &p->private_offset);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The input the blocking calls' auto gives the model (src/allgather|allreduce/auto.c). */
    tuna_select_input in = tuna_select_input_of(p->ctx, coll, bytes, commute);
    return tuna_plan_decide(p, &in, flags);
}

static struct tuna_plan_s *plan_new(tuna_collective coll, MPI_Comm comm, const void *sendbuf,
                                    void *recvbuf)
{
    struct tuna_plan_s *p = tuna_calloc(1, sizeof *p);
    if (!p) {
        tuna_error_set(MPI_ERR_NO_MEM, "plan init: no memory");
        return NULL;
    }
    p->coll = coll;
    p->info.collective = coll;
    p->comm = comm;
    p->sendbuf = sendbuf;
    p->recvbuf = p->user_recvbuf = recvbuf;
    p->choose = coll_choose;
    p->redirect = coll_redirect;
    return p;
}

int tuna_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    const double t0 = PMPI_Wtime();
    int local = tuna_plan_begin("tuna_allgather_init", TUNA_ALLGATHER, comm, flags, plan, &opt);
    /* device buffers: the row staged (a staging transport of the plan's own), else vendor */
    bool staged = false;
    tuna_memory_plan_options_coll(TUNA_ALLGATHER, sendbuf, sendtype, recvbuf, recvtype,
                                  MPI_OP_NULL, &opt, &staged);
    if (comm == MPI_COMM_NULL)
        return local; /* nothing to agree over (tuna_call_begin said so) */
    struct tuna_plan_s *p = plan_new(TUNA_ALLGATHER, comm, sendbuf, recvbuf);
    if (!p && local == MPI_SUCCESS)
        local = MPI_ERR_NO_MEM;
    int me = 0, P = 1;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &P);
    size_t block = 0;
    if (local == MPI_SUCCESS) {
        p->start = allgather_start;
        p->begin = allgather_begin;
        p->scount = sendcount;
        p->sendtype = sendtype;
        p->rcount = recvcount;
        p->recvtype = recvtype;
        local = tuna_ag_check_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   P, me, &block);
    }
    /* The caller may free derived datatypes after init (MPI's persistent semantics). */
    if (local == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        local = tuna_plan_keep_type(p, &p->sendtype);
    if (local == MPI_SUCCESS)
        local = tuna_plan_keep_type(p, &p->recvtype);
    if (local == MPI_SUCCESS)
        p->block = block;
    int rc = coll_init(p, TUNA_ALLGATHER, comm, "tuna_allgather_init", opt, flags, staged, local,
                       (long long)block,
                       "recvcount * type size (bytes)", (double)block, true, recvtype,
                       (long long)recvcount * P);
    return tuna_plan_finish(p, rc, t0, plan);
}

int tuna_allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, const tuna_options *opt, unsigned flags,
                        tuna_plan *plan)
{
    const double t0 = PMPI_Wtime();
    int local = tuna_plan_begin("tuna_allreduce_init", TUNA_ALLREDUCE, comm, flags, plan, &opt);
    bool staged = false; /* as in tuna_allgather_init */
    tuna_memory_plan_options_coll(TUNA_ALLREDUCE, sendbuf, datatype, recvbuf, datatype, op,
                                  &opt, &staged);
    if (comm == MPI_COMM_NULL)
        return local; /* nothing to agree over (tuna_call_begin said so) */
    struct tuna_plan_s *p = plan_new(TUNA_ALLREDUCE, comm, sendbuf, recvbuf);
    if (!p && local == MPI_SUCCESS)
        local = MPI_ERR_NO_MEM;
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    int tsize = 0, commute = 1;
    if (local == MPI_SUCCESS) {
        /* The datatype is kept as the caller's handle, not a duplicate: a user op is called
         * with it and may compare it (so it must stay valid while the plan lives). */
        p->start = allreduce_start;
        p->begin = allreduce_begin;
        p->rcount = count;
        p->dtype = datatype;
        p->op = op;
        local = tuna_ar_check_args(sendbuf, recvbuf, count, datatype, op, me, &tsize);
    }
    if (local == MPI_SUCCESS && PMPI_Op_commutative(op, &commute) != MPI_SUCCESS)
        local = tuna_error_set(MPI_ERR_OP, "tuna_allreduce_init: MPI_Op_commutative failed");
    const double bytes = (double)count * tsize;
    if (local == MPI_SUCCESS) {
        p->block = (size_t)bytes;
        p->commute = commute != 0;
    }
    int rc = coll_init(p, TUNA_ALLREDUCE, comm, "tuna_allreduce_init", opt, flags, staged, local,
                       (long long)bytes, "count * type size (bytes)", bytes, commute != 0,
                       datatype, count);
    return tuna_plan_finish(p, rc, t0, plan);
}
