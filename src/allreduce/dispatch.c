/*
 * tuna_allreduce: argument checks (local; agreed on by all ranks under
 * TUNA_ARGCHECK=collective, a debugging mode), dispatch, and the operation (operation.c:
 * datatype extents, the input copied into recvbuf unless MPI_IN_PLACE, the row's steps) run
 * here.
 */
#include "allreduce.h"
#include "memkind.h"
#include "../select/tuna_select.h"

#include <string.h>

/* Local argument checks (agreed on by all ranks under TUNA_ARGCHECK=collective): every
 * check that can fail on one rank alone is here, before any agreement. */
static int check_args(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type,
                      MPI_Op op, int me, int *tsize)
{
    int rc;
    *tsize = 0;
    if ((rc = tuna_check_recv_inplace("tuna_allreduce", recvbuf, me)))
        return rc;
    if (type == MPI_DATATYPE_NULL)
        return tuna_error_set(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL (rank %d)", me);
    if (op == MPI_OP_NULL)
        return tuna_error_set(MPI_ERR_OP, "op is MPI_OP_NULL (rank %d)", me);
    if (count < 0)
        return tuna_error_set(MPI_ERR_COUNT, "count = %d is negative (rank %d)", count, me);
    tuna_type_info t;
    if ((rc = tuna_type_info_get(type, &t)))
        return rc;
    *tsize = (int)t.size;
    if (count == 0 || t.size == 0)
        return MPI_SUCCESS;
    if (!recvbuf)
        return tuna_error_set(MPI_ERR_BUFFER, "recvbuf is NULL but count = %d (rank %d)", count,
                              me);
    if (!sendbuf)
        return tuna_error_set(MPI_ERR_BUFFER, "sendbuf is NULL but count = %d (rank %d)", count,
                              me);
    if (sendbuf == recvbuf)
        return tuna_error_set(MPI_ERR_BUFFER,
                              "sendbuf aliases recvbuf (rank %d); use MPI_IN_PLACE", me);
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    const tuna_span in = tuna_span_of(sendbuf, 0, count, t.size, t.extent, t.true_lb,
                                      t.true_extent),
                    out = tuna_span_of(recvbuf, 0, count, t.size, t.extent, t.true_lb,
                                       t.true_extent);
    return tuna_check_overlap("tuna_allreduce", me, &in, 1, &out, 1);
}

/* The chosen row (vendor: the library's own call) on checked arguments (a: all but the
 * datatype's layout): its steps, run here (the same steps tuna_iallreduce and plans run). */
static int allreduce_run(const tuna_ar_algorithm *alg, tuna_ar_args *a, const void *sendbuf,
                         MPI_Comm comm)
{
    if (alg->desc.kind == TUNA_ROW_VENDOR)
        return tuna_ar_vendor(sendbuf, a->rbuf, a->count, a->type, a->op, comm);
    tuna_ar_op o = {.op.step = tuna_ar_op_step};
    int rc = tuna_ar_op_setup(&o, alg, a, sendbuf);
    return rc != MPI_SUCCESS ? rc : tuna_op_run(&o.op);
}

/* Device buffers a row serves (memory_route.c let them through: a contiguous type, a
 * predefined op): the chosen row (auto: the model's cheapest device row, no learning) with
 * the communicator's staging transport; a failed device copy (the transport's copies return
 * nothing) is the call's error. */
static int allreduce_device(const tuna_ar_algorithm *alg, tuna_ar_args *a, const void *sendbuf,
                            MPI_Comm comm, double bytes)
{
    tuna_choice c;
    const bool choose = alg->desc.kind == TUNA_ROW_AUTO;
    int rc = tuna_coll_device_begin(a->ctx, &tuna_ar_registry, choose, bytes, &a->tp, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (choose) {
        alg = &tuna_ar_table[c.algorithm];
        tuna_params_copy(a->param, c.param);
    }
    rc = allreduce_run(alg, a, sendbuf, comm);
    return tuna_coll_device_end(a->tp, rc);
}

/* The call once the buffers' kinds are known (device: a row serves them, memory_route.c);
 * inlined into each caller with its constant, so the host path stays as it was. */
static inline __attribute__((always_inline)) int
allreduce_call(bool device, const void *sendbuf, void *recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const tuna_options *opt,
               double t_entry)
{
    const tuna_options *given = opt;
    int rc = tuna_call_begin(TUNA_ALLREDUCE, comm, &opt);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_ar_algorithm *alg = &tuna_ar_table[opt->algorithm];
    /* vendor as in tuna_allgather: the library's own call. */
    const bool vendor = alg->desc.kind == TUNA_ROW_VENDOR;
    if (vendor) {
        rc = tuna_check_alias("tuna_allreduce", sendbuf, recvbuf, count > 0);
        return rc != MPI_SUCCESS ? rc
                                 : tuna_ar_vendor(sendbuf, recvbuf, count, datatype, op, comm);
    }
    tuna_ctx *ctx;
    bool collective;
    rc = tuna_coll_context(comm, alg->desc.info.name, &ctx, &collective);
    if (rc != MPI_SUCCESS)
        return rc;
    const int P = ctx->size, me = ctx->rank;

    /* Check locally, as MPI libraries do; TUNA_ARGCHECK=collective also agrees (error flag,
     * count and type size must match everywhere). */
    int tsize = 0;
    int local_rc = check_args(sendbuf, recvbuf, count, datatype, op, me, &tsize);
    if (collective) {
        static const char *const names[] = {"count", "datatype size"};
        const long long same[] = {count, tsize};
        local_rc = tuna_coll_agree_args(ctx, tuna_collective_name(TUNA_ALLREDUCE), local_rc,
                                        same, names, 2);
    }
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (count == 0 || tsize == 0)
        return MPI_SUCCESS;

    int commute = 0;
    TUNA_MPI_CHECK(PMPI_Op_commutative(op, &commute));
    tuna_ar_args a = {.rbuf = recvbuf, .count = count, .type = datatype, .op = op,
                      .ctx = ctx, .tp = &tuna_transport_mpi_host, .rank = me, .size = P,
                      .commute = commute != 0};
    if (alg->desc.kind != TUNA_ROW_AUTO) {
        tuna_coll_params_named(&alg->desc.info, opt, P, a.param);
    }
    if (device)
        return allreduce_device(alg, &a, sendbuf, comm, (double)count * (double)tsize);
    if (alg->desc.kind != TUNA_ROW_AUTO)
        return allreduce_run(alg, &a, sendbuf, comm);
    /* auto decides here, before any copy: the library's own call when it runs the choice
     * itself, else the chosen row with its parameters; a candidate of its learning is timed. */
    tuna_choice c;
    tuna_learn_class *learning = NULL;
    rc = tuna_ar_auto_choose(ctx, (double)count * (double)tsize, a.commute, &c, &learning);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_params_copy(a.param, c.param);
    const bool library = tuna_ar_table[c.algorithm].desc.kind == TUNA_ROW_VENDOR;
    const double t0 = learning ? tuna_learn_sample_start(library, t_entry) : 0;
    rc = allreduce_run(&tuna_ar_table[c.algorithm], &a, sendbuf, comm);
    return tuna_coll_auto_end(ctx, TUNA_ALLREDUCE, learning, t0, rc, collective, library, given,
                              sendbuf, count, datatype, count, datatype, op);
}

/* tuna_allreduce on buffers known to be host memory: the drop-in's entry (memkind.h), and
 * the public one's after its check. */
int tuna_allreduce_host(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, const tuna_options *opt)
{
    int rc;
    /* auto settled on the library's call, repeating the last such call's arguments
     * (tuna_repeat_matches): the library's call and nothing else */
    const tuna_ctx *cached = tuna_ctx_cached(comm);
    if (tuna_repeat_matches(cached, TUNA_ALLREDUCE, opt, sendbuf, count, datatype, recvbuf,
                            count, datatype, op))
        return tuna_library_result(PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm),
                                   "PMPI_Allreduce");
    const double t_entry = tuna_learn_entry(cached, TUNA_ALLREDUCE);
    double t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    rc = allreduce_call(false, sendbuf, recvbuf, count, datatype, op, comm, opt, t_entry);
    tuna_stats_publish(t_start);
    return rc;
}

/* Buffers that may be device memory: the library's call (memory_route.c), a row that stages
 * them, else the host path. Out of line, so that the entry's common case is a check and a
 * jump. */
static __attribute__((noinline)) int
allreduce_other(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, const tuna_options *opt)
{
    int rc;
    if (tuna_memory_kinds_query(sendbuf, recvbuf) != TUNA_MEMORY_HOST) {
        if ((rc = tuna_memory_allreduce(sendbuf, recvbuf, count, datatype, op, comm, opt)) >= 0)
            return rc;
        const double t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
        rc = allreduce_call(true, sendbuf, recvbuf, count, datatype, op, comm, opt, 0);
        tuna_stats_publish(t_start);
        return rc;
    }
    return tuna_allreduce_host(sendbuf, recvbuf, count, datatype, op, comm, opt);
}

int tuna_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, const tuna_options *opt)
{
    if (tuna_memory_surely_host())
        return tuna_allreduce_host(sendbuf, recvbuf, count, datatype, op, comm, opt);
    return allreduce_other(sendbuf, recvbuf, count, datatype, op, comm, opt);
}

int tuna_ar_check_args(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type,
                       MPI_Op op, int me, int *tsize)
{
    return check_args(sendbuf, recvbuf, count, type, op, me, tsize);
}
