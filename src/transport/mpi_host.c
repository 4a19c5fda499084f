/*
 * The MPI transport on host memory (transport.h): today's behaviour, the MPI calls the
 * algorithms made before the seam, with the same arguments. Posts and local moves are
 * inlined in transport.h; here are the calls that are more than one MPI call, and the table
 * that other code reaches them through.
 *
 * Completing the requests of one step of an exchange, with the real error code of the one
 * that failed. (MPICH 4.0.2 raises request-completion failures on MPI_COMM_WORLD's error
 * handler rather than on the request's communicator, so there tuna's codes come back only if
 * MPI_COMM_WORLD returns errors: docs/test-harnesses.md, error_codes.)
 *
 * The rule on a communication failure (a failed wait, or a post that fails while requests of
 * the step are outstanding): every request of the step is still completed before anything
 * returns, so no buffer an outstanding request reads or writes is freed by tuna or handed back
 * to the caller, and no message of the call stays in flight to be matched by a later call.
 * The peers do not know of the failure: they post their sides of the step, so its sends are
 * received and its receives are sent. Receives are completed, not cancelled: a cancelled
 * receive whose message is still on its way leaves that message unmatched on the private
 * communicator, where the next call's receive with the same source and tag takes it (wrong
 * data, or a truncation, in a later correct call). Only a rank that knows its peers did not
 * post their sends either (the allocation-failure policy, where every rank stops at the same
 * point: docs/testing.md) cancels receives; those paths do it themselves. Open MPI returns from
 * MPI_Waitall at the first failure with the other requests still pending (MPI_ERR_PENDING)
 * and keeps a request that failed allocated: both are handled here.
 */
#include "../core/tuna_internal.h"
#include "transport.h"

#include <limits.h>

/* tuna completes its own requests through PMPI_: the drop-in library intercepts MPI_Wait*,
 * MPI_Test* and MPI_Request_free for the requests it hands the application (proxies), and
 * tuna's internal requests are never those (src/preload/requests.c). */

/* Statuses are read in chunks from the stack: no allocation on the call path. */
#define WAIT_CHUNK TUNA_WAIT_CHUNK

void tuna_mpi_host_complete(int n, MPI_Request *req)
{
    for (int i = 0; i < n; i++) {
        if (req[i] == MPI_REQUEST_NULL)
            continue;
        (void)PMPI_Wait(&req[i], MPI_STATUS_IGNORE); /* its error is not the first one */
        if (req[i] != MPI_REQUEST_NULL)             /* failed: complete, still allocated */
            PMPI_Request_free(&req[i]);
    }
}

int tuna_mpi_host_settle(int n, MPI_Request *req, MPI_Status *status, bool block, int *flag)
{
    MPI_Status chunk[WAIT_CHUNK];
    for (int i = 0; i < n; i += WAIT_CHUNK) {
        int m = n - i < WAIT_CHUNK ? n - i : WAIT_CHUNK, f = 1;
        MPI_Status *st = status ? status + i : chunk;
        int rc = block ? PMPI_Waitall(m, req + i, st) : PMPI_Testall(m, req + i, &f, st);
        if (rc != MPI_SUCCESS) {
            /* MPI_ERR_IN_STATUS names no cause: the failed request's own code does. */
            if (rc == MPI_ERR_IN_STATUS)
                for (int j = 0; j < m; j++)
                    if (st[j].MPI_ERROR != MPI_SUCCESS && st[j].MPI_ERROR != MPI_ERR_PENDING) {
                        rc = st[j].MPI_ERROR;
                        break;
                    }
            tuna_mpi_host_complete(n - i, req + i);
            *flag = 1;
            return rc;
        }
        if (!f) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return MPI_SUCCESS;
}

int tuna_mpi_host_any(int n, MPI_Request *req, int *index, bool block, int *flag)
{
    if (block) {
        *flag = 1;
        return PMPI_Waitany(n, req, index, MPI_STATUS_IGNORE);
    }
    return PMPI_Testany(n, req, index, flag, MPI_STATUS_IGNORE);
}

int tuna_tp_failed(int rc, const char *what, size_t bytes)
{
    return tuna_error_set(rc, "%s of %zu bytes failed", what, bytes);
}

/* Above INT_MAX bytes: one element of a derived type of the bytes (tuna_coll_bytes_type). */
int tuna_mpi_host_post_large(bool send, void *buf, size_t bytes, int peer, int tag,
                             MPI_Comm comm, MPI_Request *req)
{
    MPI_Datatype t;
    int rc = tuna_coll_bytes_type(bytes, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = send ? PMPI_Isend(buf, 1, t, peer, tag, comm, req)
              : PMPI_Irecv(buf, 1, t, peer, tag, comm, req);
    PMPI_Type_free(&t); /* freed once the pending post completes */
    return rc == MPI_SUCCESS ? rc : tuna_tp_failed(rc, send ? "MPI_Isend" : "MPI_Irecv", bytes);
}

/* ------------------------------------------------------------------ the table */

/* Each entry is the inline call of transport.h, which takes the same path for this
 * transport: the table serves code that holds a transport without knowing which. */
static int isend(const tuna_transport *tp, const void *buf, size_t bytes, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req)
{
    return tuna_tp_isend(tp, buf, bytes, peer, tag, comm, req);
}
static int irecv(const tuna_transport *tp, void *buf, size_t bytes, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req)
{
    return tuna_tp_irecv(tp, buf, bytes, peer, tag, comm, req);
}
static int isend_typed(const tuna_transport *tp, const void *buf, int count, MPI_Datatype type,
                       int peer, int tag, MPI_Comm comm, MPI_Request *req)
{
    return tuna_tp_isend_typed(tp, buf, count, type, peer, tag, comm, req);
}
static int irecv_typed(const tuna_transport *tp, void *buf, int count, MPI_Datatype type, int peer,
                       int tag, MPI_Comm comm, MPI_Request *req)
{
    return tuna_tp_irecv_typed(tp, buf, count, type, peer, tag, comm, req);
}
static int sendrecv_typed(const tuna_transport *tp, const void *sbuf, int scount,
                          MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                          MPI_Datatype rtype, int source, int rtag, MPI_Comm comm)
{
    return tuna_tp_sendrecv_typed(tp, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
                                  rtag, comm);
}
static void copy(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    tuna_tp_copy(tp, dst, src, bytes);
}
static void move(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    tuna_tp_move(tp, dst, src, bytes);
}
static int reduce(const tuna_transport *tp, const void *in, void *inout, int count,
                  MPI_Datatype type, MPI_Op op)
{
    return tuna_tp_reduce(tp, in, inout, count, type, op);
}
static int settle(const tuna_transport *tp, int n, MPI_Request *req, MPI_Status *status, bool block,
                  int *flag)
{
    return tuna_tp_settle(tp, n, req, status, block, flag);
}
static int any(const tuna_transport *tp, int n, MPI_Request *req, int *index, bool block, int *flag)
{
    return tuna_tp_any(tp, n, req, index, block, flag);
}
static void complete(const tuna_transport *tp, int n, MPI_Request *req)
{
    tuna_tp_complete(tp, n, req);
}
static void cancel(const tuna_transport *tp, MPI_Request *req)
{
    tuna_tp_cancel(tp, req);
}
static void release(const tuna_transport *tp, MPI_Request *req)
{
    tuna_tp_release(tp, req);
}

const tuna_transport tuna_transport_mpi_host = {
    .name = "mpi-host",
    .isend = isend,
    .irecv = irecv,
    .isend_typed = isend_typed,
    .irecv_typed = irecv_typed,
    .sendrecv_typed = sendrecv_typed,
    .copy = copy,
    .move = move,
    .reduce = reduce,
    .settle = settle,
    .any = any,
    .complete = complete,
    .cancel = cancel,
    .release = release,
};
