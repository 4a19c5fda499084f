/*
 * tuna_alltoall_init, tuna_alltoall_init_c (one body): the arguments checked and agreed once (error flag and block size, one
 * allreduce), the choice made once (forced, model, measure or wisdom; auto among the rows
 * whose starts are local), the P blocks described and the in-place copy allocated once. A
 * start is the chosen row's exchange, local (its first step posts), or for a plan forced to
 * vendor the library's MPI_Alltoall (MPI_Alltoall_c) inside the start.
 */
#include "plan.h"
#include "memkind.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The library's own alltoall on the plan's arguments (MPI_Alltoall_c for a _c plan). */
static int a2a_start(struct tuna_plan_s *p)
{
    if (!p->vendor)
        return tuna_plan_a2av_run(p);
    int rc;
    const char *call = "PMPI_Alltoall";
    if (!p->large) {
        rc = PMPI_Alltoall(p->sendbuf, (int)p->a2a_count[0], p->sendtype, p->recvbuf,
                           (int)p->a2a_count[1], p->recvtype, p->comm);
    } else {
#ifdef TUNA_HAVE_MPI_ALLTOALL_C
        call = "PMPI_Alltoall_c";
        rc = PMPI_Alltoall_c(p->sendbuf, p->a2a_count[0], p->sendtype, p->recvbuf,
                             p->a2a_count[1], p->recvtype, p->comm);
#else
        /* not reached: tuna_plan_a2av_choose() runs linear instead */
        return tuna_error_set(MPI_ERR_INTERN, "the MPI library has no MPI_Alltoall_c");
#endif
    }
    return tuna_library_result(rc, call); /* tuna_start did not clear (no work on top) */
}

/* tuna_alltoall_init and tuna_alltoall_init_c: one body (large: the _c form's MPI_Count counts,
 * for the library's call; tuna's rows take either). */
static int alltoall_init(const char *fn, bool large, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                         unsigned flags, tuna_plan *plan)
{
    const double t0 = PMPI_Wtime();
    /* A local error still takes part in the agreement below: one rank's mistake fails every
     * rank instead of hanging them. */
    int local = tuna_plan_begin(fn, TUNA_ALLTOALL, comm, flags, plan, &opt);
    tuna_memory_plan_options(TUNA_ALLTOALL, sendbuf, recvbuf, &opt); /* device: vendor */
    if (comm == MPI_COMM_NULL)
        return local;
    const tuna_a2av_algorithm *alg = local == MPI_SUCCESS ? &tuna_a2a_table[opt->algorithm]
                                                          : NULL;
    struct tuna_plan_s *p;
    int inter;
    int rc = tuna_plan_a2av_open(fn, comm, &local, &p, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_ctx *ctx = NULL;
    size_t block = 0;
    if (inter) { /* vendor only, local checks only (tuna has no context there) */
        int rsize = 0;
        if (local == MPI_SUCCESS && (rc = PMPI_Comm_remote_size(comm, &rsize)) != MPI_SUCCESS)
            local = tuna_error_set(rc, "%s: MPI_Comm_remote_size failed", fn);
        if (local == MPI_SUCCESS && alg->desc.kind != TUNA_ROW_VENDOR)
            local = tuna_error_set(MPI_ERR_COMM, "algorithm '%s' supports intracommunicators "
                                                 "only (use 'vendor' for intercommunicators)",
                                   alg->desc.info.name);
        if (local == MPI_SUCCESS && sendbuf == MPI_IN_PLACE)
            local = tuna_error_set(MPI_ERR_ARG, "MPI_IN_PLACE is not valid on an "
                                                "intercommunicator");
        if (local == MPI_SUCCESS)
            local = tuna_plan_a2av_inter_large(fn, TUNA_ALLTOALL, large);
        int me = 0;
        PMPI_Comm_rank(comm, &me);
        if (local == MPI_SUCCESS)
            local = tuna_a2a_check_args(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, rsize, me, &block);
        if (local != MPI_SUCCESS) {
            free(p);
            return local;
        }
    } else {
        if ((rc = tuna_ctx_get(comm, alg ? alg->desc.info.name : "plan", &ctx)) != MPI_SUCCESS) {
            free(p);
            return rc;
        }
        if (local == MPI_SUCCESS)
            local = tuna_a2a_check_args(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, ctx->size, ctx->rank, &block);
        /* Init is collective: errors and the block size are agreed, so every rank fails
         * together (a block that differs between ranks, too). */
        static const char *const names[] = {"recvcount * type size (bytes)"};
        const long long same[] = {(long long)block};
        if ((rc = tuna_coll_agree_args(ctx, "alltoall_init", local, same, names, 1)) !=
            MPI_SUCCESS) {
            free(p);
            return rc;
        }
    }
    /* From here every rank's arguments are valid: p, alg and plan are set. */
    p->a2a_count[0] = sendcount;
    p->a2a_count[1] = recvcount;
    rc = tuna_plan_a2av_setup(p, TUNA_ALLTOALL, comm, ctx, a2a_start, sendbuf, sendtype, recvbuf,
                              recvtype, large);
    if (rc != MPI_SUCCESS)
        goto out;
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (inter) {
        tuna_choice c = {.algorithm = opt->algorithm};
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_FORCED);
        tuna_plan_a2av_choose(p, &c);
        goto out;
    }
    const int P = ctx->size;
    const long long sig[] = {(long long)block, inplace};
    tuna_plan_fill_key(p, sig, 2);
    /* tuna's description of the exchange, for every candidate (the measure tries several). */
    p->disp = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    p->arrays = tuna_malloc(tuna_a2a_counts_bytes(P));
    if (!p->disp || !p->arrays) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
        goto out;
    }
    rc = tuna_a2a_prepare(&p->a, sendbuf, sendcount, p->sendtype, recvbuf, recvcount,
                          p->recvtype, block, p->arrays, p->disp, &p->inplace_copy,
                          &p->inplace_counts);
    if (rc != MPI_SUCCESS)
        goto out;
    if (alg->desc.kind != TUNA_ROW_AUTO) {
        tuna_plan_a2av_forced(p, alg, opt, P);
        goto out;
    }
    /* The measure's private receive buffer spans what the P receive blocks span. */
    rc = tuna_plan_span_run(p->recvtype, (long long)recvcount * P, &p->private_bytes,
                            &p->private_offset);
    if (rc != MPI_SUCCESS)
        goto out;
    tuna_select_input in = tuna_select_input_of(ctx, TUNA_ALLTOALL, (double)block, true);
    rc = tuna_plan_decide(p, &in, flags);
out: /* rc: MPI_SUCCESS, or the error that stopped the init */
    return tuna_plan_finish(p, rc, t0, plan);
}

int tuna_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    return alltoall_init("tuna_alltoall_init", false, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, recvtype, comm, opt, flags, plan);
}

int tuna_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, const tuna_options *opt, unsigned flags,
                         tuna_plan *plan)
{
    return alltoall_init("tuna_alltoall_init_c", true, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, recvtype, comm, opt, flags, plan);
}
