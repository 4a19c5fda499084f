/*
 * tuna_ialltoallw: the nonblocking MPI_Ialltoallw on the alltoallv rows. The start is local:
 * the checks, the layout and (on the packed way) the packing of the send blocks, then
 * tuna_ialltoallv_c's start. The operation owns the layout (the alltoallv's counts and
 * displacements, which its steps read) and the packed buffers until it completes; its step
 * waits for the alltoallv (progressed with every other operation) and then unpacks the
 * received blocks. vendor and device memory: the library's MPI_Ialltoallw inside the
 * operation.
 */
#include "alltoallw.h"
#include "op.h"

#include <stdlib.h>

typedef struct ialltoallw_op {
    tuna_op op;            /* first member: the engine's view */
    tuna_w_call call;
    MPI_Comm comm;
    tuna_request inner;    /* the alltoallv (tuna's way) */
    MPI_Request library;   /* the library's MPI_Ialltoallw (its way) */
    bool posted;           /* the library's request handed to the engine */
    void *rside;           /* packed way: the operation's copy of the receive side's arrays */
} ialltoallw_op;

/* The packed way unpacks at completion: from the operation's own copy of the receive types,
 * counts and displacements, so a caller whose arrays are temporaries (the drop-in's Fortran
 * binding converts the type handles into one) may drop them after the start. */
static int keep_receive_side(ialltoallw_op *x)
{
    const size_t P = (size_t)x->call.P;
    tuna_w_side *r = &x->call.rcv;
    x->rside = tuna_malloc(P * (sizeof(MPI_Datatype) + 2 * sizeof(int)) + 1);
    if (!x->rside)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_ialltoallw: no memory for %zu peers", P);
    MPI_Datatype *types = x->rside;
    int *counts = (int *)(void *)(types + P), *displs = counts + P;
    for (size_t j = 0; j < P; j++) {
        types[j] = r->types[j];
        counts[j] = r->counts[j];
        displs[j] = r->displs[j];
    }
    *r = (tuna_w_side){r->buf, counts, displs, types};
    return MPI_SUCCESS;
}

static int ialltoallw_step(tuna_op *op, int wait_rc)
{
    ialltoallw_op *x = (ialltoallw_op *)op;
    if (x->library != MPI_REQUEST_NULL || x->posted) {
        if (x->posted)
            return tuna_op_step_done(op, wait_rc == MPI_SUCCESS
                                             ? MPI_SUCCESS
                                             : tuna_error_set(wait_rc, "MPI_Ialltoallw failed"));
        x->posted = true;
        return tuna_op_step_wait(op, &x->library, 1, MPI_SUCCESS);
    }
    /* The alltoallv advances with every operation of the process; test it here (this
     * operation is claimed meanwhile, so the progress inside skips it). */
    int flag = 0;
    int rc = tuna_request_test(&x->inner, &flag);
    if (!flag)
        return TUNA_STEP_YIELD;
    if (rc == MPI_SUCCESS)
        rc = tuna_w_finish(&x->call, x->comm);
    return tuna_op_step_done(op, rc);
}

static void ialltoallw_release(tuna_op *op)
{
    ialltoallw_op *x = (ialltoallw_op *)op;
    tuna_w_free(&x->call);
    free(x->rside);
    free(x);
}

int tuna_ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    const tuna_options *opt, tuna_request *req)
{
    tuna_error_clear();
    if (!req)
        return tuna_error_set(MPI_ERR_ARG, "tuna_ialltoallw: NULL request");
    *req = TUNA_REQUEST_NULL;
    tuna_options def;
    bool library;
    ialltoallw_op *x = tuna_calloc(1, sizeof *x);
    if (!x)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_ialltoallw: no memory for the operation");
    int rc = tuna_w_begin("tuna_ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, &opt, &def, &library, &x->call);
    x->op = (tuna_op){.step = ialltoallw_step, .tp = &tuna_transport_mpi_host,
                      .release = ialltoallw_release, .publish_stats = false};
    x->comm = comm;
    x->library = MPI_REQUEST_NULL;
    if (rc == MPI_SUCCESS && library) {
        rc = PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, &x->library);
        if (rc != MPI_SUCCESS)
            rc = tuna_library_result(rc, "PMPI_Ialltoallw");
        else if (x->library == MPI_REQUEST_NULL) /* completed at once: nothing to wait for */
            x->posted = true;
    } else if (rc == MPI_SUCCESS) {
        rc = tuna_w_prepare(&x->call, comm);
        if (rc == MPI_SUCCESS && x->call.packed)
            rc = keep_receive_side(x);
        if (rc == MPI_SUCCESS)
            rc = tuna_w_exchange_c(&x->call, comm, opt, &x->inner);
    }
    if (rc != MPI_SUCCESS) {
        ialltoallw_release(&x->op);
        return rc;
    }
    tuna_op_start(&x->op);
    *req = &x->op;
    return MPI_SUCCESS;
}
