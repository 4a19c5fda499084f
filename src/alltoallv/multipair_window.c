/*
 * Sliding-window engine of the multipair-waitany and multipair-testany
 * algorithms: up to `stride` receives (from rank-s) and `stride` sends (to
 * rank+s) are in flight; whenever one completes, its slot is refilled with the
 * next step of the same kind, so the window stays full without the group
 * barrier of multipair. Completion is found with MPI_Waitany (blocking) or by
 * polling MPI_Testany.
 */
#include "alltoallv.h"

#include <stdlib.h>

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

/* Post the step `*s` of the given kind into reqs[slot] and advance *s. */
static int refill(const tuna_a2av_args *a, int *s, bool send, int tag, MPI_Request *req,
                  int *active)
{
    int P = a->size, me = a->rank;
    *s = next_step(a, *s, send);
    if (*s >= P)
        return MPI_SUCCESS;
    int rc = send ? tuna_a2av_isend_block(a, (me + *s) % P, tag, req)
                  : tuna_a2av_irecv_block(a, (me - *s + P) % P, tag, req);
    if (rc == MPI_SUCCESS) {
        (*s)++;
        (*active)++;
    } else {
        *req = MPI_REQUEST_NULL; /* nothing was posted */
    }
    return rc;
}

int tuna_a2av_multipair_window(const tuna_a2av_args *a, bool poll, int tag)
{
    int stride = (int)tuna_a2av_param(a, "stride");
    MPI_Request *reqs = tuna_scratch_requests(a->scr, 2 * (size_t)stride);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < 2 * stride; i++)
        reqs[i] = MPI_REQUEST_NULL;
    /* The own block first: its copy may allocate, and a failure once the window is posted
     * would leave requests pending. */
    int rstep = 1, sstep = 1, active = 0, rc = tuna_a2av_copy_self(a);
    for (int i = 0; i < stride && rc == MPI_SUCCESS; i++) {
        rc = refill(a, &rstep, false, tag, &reqs[i], &active);
        if (rc == MPI_SUCCESS)
            rc = refill(a, &sstep, true, tag, &reqs[stride + i], &active);
    }
    const char *name = poll ? "multipair-testany" : "multipair-waitany";
    int comm_rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && active > 0) {
        int idx = MPI_UNDEFINED, flag = 1, wrc;
        if (poll) {
            wrc = PMPI_Testany(2 * stride, reqs, &idx, &flag, MPI_STATUS_IGNORE);
            /* "None active" while requests are pending (SimGrid SMPI 3.32-3.35 answers so for
             * some pending eager sends, and polling would then never let the simulation move):
             * wait for one instead. */
            if (wrc == MPI_SUCCESS && flag && idx == MPI_UNDEFINED)
                wrc = PMPI_Waitany(2 * stride, reqs, &idx, MPI_STATUS_IGNORE);
            if (wrc == MPI_SUCCESS && !flag)
                continue;
        } else {
            wrc = PMPI_Waitany(2 * stride, reqs, &idx, MPI_STATUS_IGNORE);
        }
        if (wrc != MPI_SUCCESS) {
            /* A failed message is complete: recorded, and the window goes on (docs/testing.md).
             * Without its index, the rest of the window completes below. */
            comm_rc = tuna_first_error(comm_rc, tuna_error_set(wrc, "%s: a message failed", name));
            if (idx < 0 || idx >= 2 * stride)
                break;
            if (reqs[idx] != MPI_REQUEST_NULL) /* Open MPI keeps a failed request allocated */
                PMPI_Request_free(&reqs[idx]);
        }
        if (idx == MPI_UNDEFINED)
            break;
        active--;
        if (idx < stride)
            rc = refill(a, &rstep, false, tag, &reqs[idx], &active);
        else
            rc = refill(a, &sstep, true, tag, &reqs[idx], &active);
    }
    /* A failure that ends the window leaves the rest of it in flight: their peers post their
     * sides, so they complete before the buffers go back to the caller. */
    if (rc != MPI_SUCCESS || comm_rc != MPI_SUCCESS)
        tuna_requests_complete(2 * stride, reqs);
    tuna_stats_rounds((a->size - 1 + stride - 1) / stride);
    return tuna_first_error(rc, comm_rc);
}
