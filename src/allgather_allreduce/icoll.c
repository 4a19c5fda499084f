/*
 * The nonblocking allgather and allreduce around their rows (shared.h, tuna_icoll):
 * where a start goes, the start itself (local: it only posts), and the steps before the
 * row's: the library's call, or the agreement of TUNA_ARGCHECK=collective. The library's call
 * is posted at the start, in the order of the starts on every rank (MPI's rule for
 * collectives), never from a later step.
 */
#include "shared.h"
#include "../transport/cuda_staged.h"

enum { PHASE_START, PHASE_AGREE, PHASE_ROW, PHASE_LIBRARY };

int tuna_icoll_route(tuna_icoll *w, const tuna_registry *reg, tuna_row_kind kind, MPI_Comm comm)
{
    const bool vendor = kind == TUNA_ROW_VENDOR;
    int rc;
    if (!vendor && ((rc = tuna_ctx_find(comm, &w->ctx)) != MPI_SUCCESS ||
                    (!w->ctx && (rc = tuna_ctx_begin(comm, &w->ctx)) != MPI_SUCCESS)))
        return rc;
    if (w->ctx && !tuna_ctx_ready(w->ctx)) {
        w->deferred = true;
        return MPI_SUCCESS;
    }
    /* With a context, the library's call travels on the private communicator: a start that
     * waited for the set-up posts it later than the application's calls on its own. */
    w->lib_comm = w->ctx ? w->ctx->comm : comm;
    if (vendor || !w->ctx || (kind == TUNA_ROW_AUTO && w->ctx->select_status != 1)) {
        if (!vendor) {
            tuna_stats_current.algorithm = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
            tuna_stats_current.fallback = !w->ctx ? TUNA_NO_CONTEXT_FALLBACK
                                                  : "auto: TUNA_PROFILE / TUNA_TUNING not "
                                                    "agreed yet";
        }
        w->ctx = NULL;
        w->library = true;
        return MPI_SUCCESS;
    }
    bool collective = false;
    if (!w->ctx->argcheck_local && (rc = tuna_argcheck_collective(&collective)) != MPI_SUCCESS)
        return rc;
    w->agree = collective;
    /* Taken by every rank on this path, whatever its arguments: the ranks' sequences of
     * shifts stay in step. */
    w->tag_shift = tuna_op_tag_shift(w->ctx, false);
    return MPI_SUCCESS;
}

int tuna_icoll_launch(tuna_icoll *w, tuna_op *op, tuna_request *req)
{
    if (w->local_rc != MPI_SUCCESS && (w->library || !w->agree)) { /* this rank's error */
        const int rc = w->local_rc; /* w lives in op */
        op->release(op);
        return rc;
    }
    w->phase = PHASE_START;
    /* The first step posts (or finishes with an error, which the completion returns). */
    tuna_op_start(op);
    *req = op;
    return MPI_SUCCESS;
}

/* Wait for the library's call or the agreement, then go on at `phase`. */
static int wait_lib(tuna_icoll *w, tuna_op *op, int phase)
{
    w->phase = phase;
    return tuna_op_step_wait(op, &w->lib, 1, MPI_SUCCESS);
}

int tuna_icoll_step(tuna_icoll *w, tuna_op *op, int wait_rc)
{
    int rc = MPI_SUCCESS;
    switch (w->phase) {
    case PHASE_START:
        if (w->library) {
            rc = w->post_library(w);
            return rc != MPI_SUCCESS ? tuna_op_step_done(op, rc)
                                     : wait_lib(w, op, PHASE_LIBRARY);
        }
        if (w->agree) {
            rc = tuna_coll_agree_args_start(w->ctx, w->name, w->local_rc, w->same, w->nsame,
                                            w->v, &w->lib);
            return rc != MPI_SUCCESS ? tuna_op_step_done(op, rc) : wait_lib(w, op, PHASE_AGREE);
        }
        w->phase = PHASE_ROW;
        return w->begin_row(w);
    case PHASE_AGREE:
        if (wait_rc != MPI_SUCCESS)
            rc = tuna_error_set(wait_rc, "tuna_%s: the agreement (MPI_Iallreduce) failed",
                                w->name);
        else
            rc = tuna_coll_agree_args_judge(w->name, w->local_rc, w->v, w->names, w->nsame);
        if (rc != MPI_SUCCESS)
            return tuna_op_step_done(op, rc);
        w->phase = PHASE_ROW;
        return w->begin_row(w);
    case PHASE_ROW:
        return w->row_step(op, wait_rc);
    case PHASE_LIBRARY:
        if (wait_rc != MPI_SUCCESS)
            rc = tuna_error_set(wait_rc, "tuna_%s: the library's call failed", w->name);
        return tuna_op_step_done(op, rc);
    }
    return tuna_op_step_done(op, tuna_error_set(MPI_ERR_INTERN, "tuna_%s: bad phase", w->name));
}

int tuna_icoll_step_staged(tuna_icoll *w, tuna_op *op, int wait_rc,
                           const struct tuna_staged *staged, const tuna_transport *tp)
{
    const int r = tuna_icoll_step(w, op, wait_rc);
    if (r == TUNA_STEP_DONE && staged) {
        const int copy_rc = tuna_staged_result(tp);
        if (op->rc == MPI_SUCCESS)
            op->rc = copy_rc;
    }
    return r;
}
