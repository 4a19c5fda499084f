/*
 * Sliding-window engine of the multipair-waitany and multipair-testany
 * algorithms: up to `stride` receives (from rank-s) and `stride` sends (to
 * rank+s) are in flight; whenever one completes, its slot is refilled with the
 * next step of the same kind, so the window stays full without the group
 * barrier of multipair. Completion is found with MPI_Waitany (blocking) or by
 * polling MPI_Testany: the engine's wait for any one request (src/core/op.h),
 * which a nonblocking operation tests with MPI_Testany.
 *
 * Between steps: o->i is the next receive step (0: not started; -1: the window ends and
 * what is left of it completes), o->n the next send step, o->op.post_rc a failed post (which
 * ends the window), o->op.comm_rc the first failed message (which does not).
 */
#include "alltoallv.h"

/* Next non-empty step >= *s for receives (send = false) or sends; P if none. */
static int next_step(const tuna_a2av_args *a, int s, bool send)
{
    int P = a->size, me = a->rank;
    for (; s < P; s++) {
        if (send ? tuna_a2av_sends(a, (me + s) % P) : tuna_a2av_recvs(a, (me - s + P) % P))
            break;
    }
    return s;
}

/* Post the step `*s` of the given kind into *req and advance *s. */
static int refill(const tuna_a2av_args *a, int *s, bool send, int tag, MPI_Request *req)
{
    int P = a->size, me = a->rank;
    *s = next_step(a, *s, send);
    if (*s >= P)
        return MPI_SUCCESS;
    int rc = send ? tuna_a2av_isend_block(a, (me + *s) % P, tag, req)
                  : tuna_a2av_irecv_block(a, (me - *s + P) % P, tag, req);
    if (rc == MPI_SUCCESS)
        (*s)++;
    else
        *req = MPI_REQUEST_NULL; /* nothing was posted */
    return rc;
}

static int finish(tuna_a2av_op *o)
{
    int stride = (int)tuna_a2av_param(o->a, "stride");
    tuna_stats_rounds((o->a->size - 1 + stride - 1) / stride);
    return tuna_a2av_step_done(o, tuna_first_error(o->op.post_rc, o->op.comm_rc));
}

int tuna_a2av_window_step(tuna_a2av_op *o, int wait_rc, bool poll, int tag)
{
    const tuna_a2av_args *a = o->a;
    int stride = (int)tuna_a2av_param(a, "stride");
    const char *name = poll ? "multipair-testany" : "multipair-waitany";
    MPI_Request *reqs;
    int rstep = o->i, sstep = o->n;
    if (o->i < 0) /* what was left of the window has completed */
        return finish(o);
    if (o->i == 0) {
        reqs = tuna_scratch_requests(a->scr, 2 * (size_t)stride);
        if (!reqs)
            return tuna_a2av_step_done(o, MPI_ERR_NO_MEM);
        for (int i = 0; i < 2 * stride; i++)
            reqs[i] = MPI_REQUEST_NULL;
        /* The own block first: its copy may allocate, and a failure once the window is
         * posted would leave requests pending. */
        int rc = tuna_a2av_copy_self(a);
        if (rc != MPI_SUCCESS) {
            o->op.post_rc = rc;
            return finish(o);
        }
        rstep = sstep = 1;
        for (int i = 0; i < stride && rc == MPI_SUCCESS; i++) {
            rc = refill(a, &rstep, false, tag, &reqs[i]);
            if (rc == MPI_SUCCESS)
                rc = refill(a, &sstep, true, tag, &reqs[stride + i]);
        }
        o->op.post_rc = rc;
    } else {
        reqs = o->op.req; /* the window, as the last step left it */
        int idx = o->op.any;
        bool settled = true;
        if (wait_rc != MPI_SUCCESS) {
            /* A failed message is complete: recorded, and the window goes on
             * (docs/test-harnesses.md). Without its index, the rest of the window completes. */
            o->op.comm_rc = tuna_first_error(o->op.comm_rc,
                                          tuna_error_set(wait_rc, "%s: a message failed", name));
            if (idx < 0 || idx >= 2 * stride)
                settled = false;
            else if (reqs[idx] != MPI_REQUEST_NULL) /* Open MPI keeps a failed request */
                tuna_tp_release(a->tp, &reqs[idx]);
        }
        if (settled && idx != MPI_UNDEFINED)
            o->op.post_rc = idx < stride ? refill(a, &rstep, false, tag, &reqs[idx])
                                      : refill(a, &sstep, true, tag, &reqs[idx]);
        else
            o->i = -1;
    }
    int active = 0;
    for (int i = 0; i < 2 * stride; i++)
        active += reqs[i] != MPI_REQUEST_NULL;
    if (o->op.post_rc != MPI_SUCCESS || o->i < 0) {
        /* A failure that ends the window leaves the rest of it in flight: their peers post
         * their sides, so they complete before the buffers go back to the caller. */
        o->i = -1;
        if (active == 0)
            return finish(o);
        return tuna_a2av_step_wait(o, reqs, 2 * stride, o->op.post_rc);
    }
    if (active == 0)
        return finish(o);
    o->i = rstep;
    o->n = sstep;
    tuna_a2av_step_wait(o, reqs, 2 * stride, MPI_SUCCESS);
    o->op.wait_mode = poll ? TUNA_WAIT_ANY_POLL : TUNA_WAIT_ANY;
    return TUNA_STEP_WAIT;
}
