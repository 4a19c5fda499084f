/*
 * tuna_allgather: argument checks (local; agreed on by all ranks under
 * TUNA_ARGCHECK=collective, a debugging mode), dispatch, and the operation's set-up
 * (operation.c: normalisation to P blocks of raw bytes, the receive buffer itself for
 * contiguous receive types, a packed copy otherwise; own block in place) run here.
 */
#include "allgather.h"
#include "memkind.h"
#include "../select/tuna_select.h"

#include <stdlib.h>
#include <string.h>

/* One side's type, count and buffer (side: "send" or "recv", for the messages): *t its type,
 * *bytes its block. Inlined: tuna_allgather checks on every call. */
static inline __attribute__((always_inline)) int
side_check(const char *side, const void *buf, int count, MPI_Datatype type, int me,
           tuna_type_info *t, size_t *bytes)
{
    if (type == MPI_DATATYPE_NULL)
        return tuna_error_set(MPI_ERR_TYPE, "%stype is MPI_DATATYPE_NULL (rank %d)", side, me);
    if (count < 0)
        return tuna_error_set(MPI_ERR_COUNT, "%scount = %d is negative (rank %d)", side, count,
                              me);
    int rc = tuna_type_info_get(type, t);
    if (rc)
        return rc;
    *bytes = (size_t)count * t->size;
    if (*bytes > 0 && !buf)
        return tuna_error_set(MPI_ERR_BUFFER, "%sbuf is NULL but %scount = %d (rank %d)", side,
                              side, count, me);
    return MPI_SUCCESS;
}

/* Local argument checks (agreed on by all ranks under TUNA_ARGCHECK=collective): every
 * check that can fail on one rank alone is here, before any agreement, so that under
 * TUNA_ARGCHECK=collective a failing rank still takes part in it. */
static int check_args(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      const void *recvbuf, int recvcount, MPI_Datatype recvtype, int P, int me,
                      size_t *bytes)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    int rc;
    *bytes = 0;
    if ((rc = tuna_check_recv_inplace("tuna_allgather", recvbuf, me)))
        return rc;
    tuna_type_info ri, si;
    size_t rbytes = 0, sbytes = 0;
    if ((rc = side_check("recv", recvbuf, recvcount, recvtype, me, &ri, &rbytes)))
        return rc;
    if (inplace) {
        *bytes = rbytes;
        return MPI_SUCCESS;
    }
    if ((rc = side_check("send", sendbuf, sendcount, sendtype, me, &si, &sbytes)))
        return rc;
    if (sbytes != rbytes)
        return tuna_error_set(MPI_ERR_TRUNCATE,
                              "rank %d sends %zu bytes but receives %zu bytes per rank "
                              "(type signatures must match)",
                              me, sbytes, rbytes);
    if (sbytes > 0 && sendbuf == recvbuf)
        return tuna_error_set(MPI_ERR_BUFFER,
                              "sendbuf aliases recvbuf (rank %d); use MPI_IN_PLACE", me);
    /* Any overlap of the block sent with the P blocks received (MPICH checks the own slot). */
    const tuna_span out = tuna_span_of(sendbuf, 0, sendcount, si.size, si.extent, si.true_lb,
                                       si.true_extent),
                    in = tuna_span_of(recvbuf, 0, (MPI_Count)recvcount * P, ri.size, ri.extent,
                                      ri.true_lb, ri.true_extent);
    if ((rc = tuna_check_overlap("tuna_allgather", me, &out, 1, &in, 1)))
        return rc;
    *bytes = rbytes;
    return MPI_SUCCESS;
}

/* The chosen row (vendor: the library's own call) on checked arguments of `block` bytes:
 * its steps, run here (the same steps tuna_iallgather and plans run). */
static int allgather_run(const tuna_ag_algorithm *alg, const long *param, const void *sendbuf,
                         int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, tuna_ctx *ctx, size_t block,
                         const tuna_transport *tp)
{
    if (alg->desc.kind == TUNA_ROW_VENDOR)
        return tuna_ag_vendor(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    tuna_ag_op o = {.op.step = tuna_ag_op_step};
    int rc = tuna_ag_op_setup(&o, ctx, alg, param, 0, sendbuf, sendcount, sendtype, recvbuf,
                              recvcount, recvtype, block, tp);
    return rc != MPI_SUCCESS ? rc : tuna_op_run(&o.op);
}

/* Device buffers a row serves (memory_route.c let them through): the chosen row (auto: the
 * model's cheapest device row, no learning) with the communicator's staging transport; a
 * failed device copy (the transport's copies return nothing) is the call's error. */
static int allgather_device(const tuna_ag_algorithm *alg, const long *param,
                            const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            tuna_ctx *ctx, size_t block)
{
    const tuna_transport *tp;
    tuna_choice c;
    const bool choose = alg->desc.kind == TUNA_ROW_AUTO;
    int rc = tuna_coll_device_begin(ctx, &tuna_ag_registry, choose, (double)block, &tp, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (choose) {
        alg = &tuna_ag_table[c.algorithm];
        param = c.param;
    }
    rc = allgather_run(alg, param, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                       comm, ctx, block, tp);
    return tuna_coll_device_end(tp, rc);
}

/* The call once the buffers' kinds are known (device: a row serves them, memory_route.c);
 * inlined into each caller with its constant, so the host path stays as it was. */
static inline __attribute__((always_inline)) int
allgather_call(bool device, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
               const tuna_options *opt, double t_entry)
{
    const tuna_options *given = opt;
    int rc = tuna_call_begin(TUNA_ALLGATHER, comm, &opt);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_ag_algorithm *alg = &tuna_ag_table[opt->algorithm];
    /* vendor is the library's own call (its checks, plus tuna's aliasing rule);
     * TUNA_ARGCHECK does not apply to it (docs/test-harnesses.md). */
    const bool vendor = alg->desc.kind == TUNA_ROW_VENDOR;
    if (vendor) {
        rc = tuna_check_alias("tuna_allgather", sendbuf, recvbuf, sendcount > 0 && recvcount > 0);
        return rc != MPI_SUCCESS ? rc
                                 : tuna_ag_vendor(sendbuf, sendcount, sendtype, recvbuf,
                                                  recvcount, recvtype, comm);
    }
    tuna_ctx *ctx;
    bool collective;
    rc = tuna_coll_context(comm, alg->desc.info.name, &ctx, &collective);
    if (rc != MPI_SUCCESS)
        return rc;
    const int P = ctx->size, me = ctx->rank;

    /* Check locally, as MPI libraries do; TUNA_ARGCHECK=collective also agrees, so a bad rank
     * can't leave the others waiting and differing block sizes are caught. */
    size_t block = 0;
    int local_rc = check_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, P, me,
                              &block);
    if (collective) {
        static const char *const names[] = {"recvcount * type size (bytes)"};
        const long long same[] = {(long long)block};
        local_rc = tuna_coll_agree_args(ctx, tuna_collective_name(TUNA_ALLGATHER), local_rc,
                                        same, names, 1);
    }
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (block == 0)
        return MPI_SUCCESS;
    long param[TUNA_MAX_PARAMS] = {0};
    if (alg->desc.kind != TUNA_ROW_AUTO) {
        tuna_coll_params_named(&alg->desc.info, opt, P, param);
    }
    if (device)
        return allgather_device(alg, param, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, comm, ctx, block);
    if (alg->desc.kind != TUNA_ROW_AUTO)
        return allgather_run(alg, param, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                             recvtype, comm, ctx, block, &tuna_transport_mpi_host);
    /* auto decides here, before any packing: the library's own call when it runs the choice
     * itself, else the chosen row with its parameters; a candidate of its learning is timed. */
    tuna_choice c;
    tuna_learn_class *learning = NULL;
    rc = tuna_ag_auto_choose(ctx, block, &c, &learning);
    if (rc != MPI_SUCCESS)
        return rc;
    const bool library = tuna_ag_table[c.algorithm].desc.kind == TUNA_ROW_VENDOR;
    const double t0 = learning ? tuna_learn_sample_start(library, t_entry) : 0;
    rc = allgather_run(&tuna_ag_table[c.algorithm], c.param, sendbuf, sendcount, sendtype,
                       recvbuf, recvcount, recvtype, comm, ctx, block, &tuna_transport_mpi_host);
    return tuna_coll_auto_end(ctx, TUNA_ALLGATHER, learning, t0, rc, collective, library, given,
                              sendbuf, sendcount, sendtype, recvcount, recvtype, MPI_OP_NULL);
}

/* tuna_allgather on buffers known to be host memory: the drop-in's entry (memkind.h), and
 * the public one's after its check. */
int tuna_allgather_host(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        const tuna_options *opt)
{
    int rc;
    /* auto settled on the library's call, repeating the last such call's arguments
     * (tuna_repeat_matches): the library's call and nothing else */
    const tuna_ctx *cached = tuna_ctx_cached(comm);
    if (tuna_repeat_matches(cached, TUNA_ALLGATHER, opt, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, MPI_OP_NULL))
        return tuna_library_result(
            PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
            "PMPI_Allgather");
    const double t_entry = tuna_learn_entry(cached, TUNA_ALLGATHER);
    double t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    rc = allgather_call(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        opt, t_entry);
    tuna_stats_publish(t_start);
    return rc;
}

/* Buffers that may be device memory: the library's call (memory_route.c), a row that stages
 * them, else the host path. Out of line, so that the entry's common case is a check and a
 * jump. */
static __attribute__((noinline)) int
allgather_other(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    int rc;
    if (tuna_memory_kinds_query(sendbuf, recvbuf) != TUNA_MEMORY_HOST) {
        if ((rc = tuna_memory_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm, opt)) >= 0)
            return rc;
        const double t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
        rc = allgather_call(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, opt, 0);
        tuna_stats_publish(t_start);
        return rc;
    }
    return tuna_allgather_host(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               opt);
}

int tuna_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    if (tuna_memory_surely_host())
        return tuna_allgather_host(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   opt);
    return allgather_other(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, opt);
}

int tuna_ag_check_args(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       const void *recvbuf, int recvcount, MPI_Datatype recvtype, int P, int me,
                       size_t *bytes)
{
    return check_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, P, me, bytes);
}
