/*
 * The allgather operation (allgather.h) on the engine of src/core/op.h: the set-up every
 * form shares (the own block into its slot, a packed copy for non-contiguous receive types),
 * the step that runs the row and then unpacks. The blocking call runs it with tuna_op_run,
 * tuna_iallgather and plans with tuna_op_start.
 */
#include "allgather.h"

#include <stdlib.h>
#include <string.h>

int tuna_ag_op_setup(tuna_ag_op *o, tuna_ctx *ctx, const tuna_ag_algorithm *row,
                     const long *param, int tag_shift, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     size_t block, const tuna_transport *tp)
{
    const int P = ctx->size, me = ctx->rank;
    const tuna_op engine = o->op; /* the caller's step, release and statistics */
    memset(o, 0, sizeof *o);
    o->op = engine;
    o->op.rc = o->op.post_rc = o->op.comm_rc = MPI_SUCCESS;
    o->row = row;
    o->type[0] = o->type[1] = MPI_DATATYPE_NULL;
    MPI_Aint lb, rext;
    int rsize;
    PMPI_Type_get_extent(recvtype, &lb, &rext);
    PMPI_Type_size(recvtype, &rsize);
    char *user = recvbuf;
    const MPI_Aint ustride = (MPI_Aint)recvcount * rext;
    char *buf = user;
    if (!tuna_type_is_contiguous(recvtype)) {
        buf = o->work = tuna_malloc((size_t)P * block);
        if (!buf)
            return MPI_ERR_NO_MEM;
        tuna_stats_temp((size_t)P * block);
        o->user = recvbuf;
        o->rcount = recvcount;
        o->rtype = recvtype;
        o->rext = rext;
        o->rsize = (size_t)rsize;
    }
    /* Own block into its slot, as packed bytes. Another transport than MPI on host memory
     * (the staging one) has contiguous types (memory_route.c): one copy of its own, since the
     * buffers may be device memory. */
    int rc = MPI_SUCCESS;
    if (!tuna_tp_is_mpi_host(tp)) {
        if (sendbuf != MPI_IN_PLACE)
            tuna_tp_copy(tp, buf + (size_t)me * block, sendbuf, block);
    } else if (sendbuf != MPI_IN_PLACE) {
        MPI_Aint slb, sext;
        int ssize;
        PMPI_Type_get_extent(sendtype, &slb, &sext);
        PMPI_Type_size(sendtype, &ssize);
        rc = tuna_pack_block(sendbuf, sendcount, sendtype, sext, (size_t)ssize,
                             buf + (size_t)me * block, ctx->comm);
    } else if (o->work) {
        rc = tuna_pack_block(user + me * ustride, recvcount, recvtype, rext, (size_t)rsize,
                             buf + (size_t)me * block, ctx->comm);
    }
    if (rc != MPI_SUCCESS) {
        free(o->work);
        o->work = NULL;
        return rc;
    }
    o->a = (tuna_ag_args){.buf = buf, .block = block, .ctx = ctx,
                          .tp = tp, .rank = me, .size = P,
                          .tag_shift = tag_shift, .info = &row->desc.info};
    o->op.tp = o->a.tp;
    tuna_params_copy(o->a.param, param);
    return MPI_SUCCESS;
}

/* The end: the row's resources freed, the packed result unpacked into the user's buffer. */
static int finish(tuna_ag_op *o)
{
    free(o->req);
    free(o->poff);
    free(o->src);
    o->req = NULL;
    o->poff = o->src = NULL;
    for (int t = 0; t < 2; t++)
        if (o->type[t] != MPI_DATATYPE_NULL)
            PMPI_Type_free(&o->type[t]);
    if (o->work) {
        const MPI_Aint ustride = (MPI_Aint)o->rcount * o->rext;
        int rc = o->op.rc;
        for (int j = 0; j < o->a.size && rc == MPI_SUCCESS; j++)
            rc = tuna_unpack_block(o->work + (size_t)j * o->a.block, (char *)o->user + j * ustride,
                                   o->rcount, o->rtype, o->rext, o->rsize, o->a.ctx->comm);
        free(o->work);
        o->work = NULL;
        o->op.rc = rc;
    }
    return TUNA_STEP_DONE;
}

int tuna_ag_op_step(tuna_op *op, int wait_rc)
{
    tuna_ag_op *o = (tuna_ag_op *)op;
    if (o->a.size > 1 && o->row->step(o, wait_rc) == TUNA_STEP_WAIT)
        return TUNA_STEP_WAIT;
    return finish(o);
}
