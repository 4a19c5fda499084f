/*
 * The allreduce operation (allreduce.h) on the engine of src/core/op.h: the set-up every
 * form shares (the datatype's layout, the input copied into the receive buffer), the step
 * that runs the row and frees its state. The blocking call runs it with tuna_op_run,
 * tuna_iallreduce and plans with tuna_op_start.
 */
#include "allreduce.h"

#include <stdlib.h>
#include <string.h>

int tuna_ar_op_setup(tuna_ar_op *o, const tuna_ar_algorithm *row, const tuna_ar_args *a,
                     const void *sendbuf)
{
    const tuna_op engine = o->op; /* the caller's step, release and statistics */
    memset(o, 0, sizeof *o);
    o->op = engine;
    o->op.rc = o->op.post_rc = o->op.comm_rc = MPI_SUCCESS;
    o->row = row;
    o->run = row->step;
    o->a = *a;
    o->op.tp = a->tp;
    o->a.info = &row->desc.info;
    MPI_Aint lb;
    int size;
    PMPI_Type_get_extent(a->type, &lb, &o->a.extent);
    PMPI_Type_get_true_extent(a->type, &o->a.true_lb, &o->a.true_extent);
    PMPI_Type_size(a->type, &size);
    o->a.contig = tuna_type_is_contiguous(a->type) && o->a.extent == (MPI_Aint)size;
    return sendbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                   : tuna_ar_copy(&o->a, sendbuf, o->a.rbuf, o->a.count);
}

int tuna_ar_op_step(tuna_op *op, int wait_rc)
{
    tuna_ar_op *o = (tuna_ar_op *)op;
    if (o->a.size > 1 && o->run(o, wait_rc) == TUNA_STEP_WAIT)
        return TUNA_STEP_WAIT;
    if (o->state_free)
        o->state_free(o);
    free(o->req);
    o->req = NULL;
    return TUNA_STEP_DONE;
}
