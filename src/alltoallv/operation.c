/*
 * The alltoallv rows' step forms on the operation engine (src/core/op.h): the blocking run
 * of a step form, and the helpers the steps share.
 */
#include "alltoallv.h"

#include <stdlib.h>

static int a2av_step(tuna_op *op, int wait_rc)
{
    tuna_a2av_op *o = (tuna_a2av_op *)op;
    return o->row->step(o, wait_rc);
}

int tuna_a2av_run_steps(const tuna_a2av_algorithm *row, tuna_a2av_args *a)
{
    tuna_a2av_op o = {.op = {.step = a2av_step, .tp = a->tp}, .a = a, .row = row};
    a->info = &row->desc.info;
    int rc = tuna_op_run(&o.op);
    if (o.state_free)
        o.state_free(&o);
    return rc;
}

int tuna_a2av_view_done(tuna_a2av_op *o, tuna_bytes_view *v, int rc)
{
    rc = tuna_bytes_view_close(o->a, v, rc);
    o->state_free(o); /* closes the view again: a closed view is empty */
    return tuna_a2av_step_done(o, rc);
}

int tuna_a2av_step_outcome(const tuna_a2av_op *o, int wait_rc, const char *what)
{
    if (o->op.post_rc != MPI_SUCCESS)
        return o->op.post_rc;
    return wait_rc == MPI_SUCCESS ? MPI_SUCCESS : tuna_error_set(wait_rc, "%s", what);
}

/* ------------------------------------------------ the nonblocking starts' shared parts */

void tuna_a2av_nb_free(tuna_a2av_op *o, tuna_a2av_nb *nb)
{
    if (o->state_free)
        o->state_free(o);
    tuna_scratch_free(&nb->scr);
    free(nb->disp);
    free(nb->copy);
    free(nb->copy_counts);
    tuna_staged_free(nb->staged);
}
