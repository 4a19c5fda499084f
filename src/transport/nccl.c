/*
 * The NCCL transport (nccl.h in this directory; docs/nccl.md): a call's posts as groups of
 * ncclSend / ncclRecv on its stream, split under the group limit, completion in stream order
 * and by CUDA event. Built only into the NCCL libraries (not libtuna: CMakeLists.txt).
 */
#include "nccl.h"

#include "../core/tuna_internal.h"

#include <stdlib.h>
#ifndef TUNA_NCCL_HOST_REDUCE
#include "../device/tuna_device.h"
#endif

_Thread_local ncclResult_t tuna_nccl_last_result;

int tuna_nccl_failed(ncclResult_t rc, const char *call)
{
    tuna_nccl_last_result = rc;
    return tuna_error_set(MPI_ERR_OTHER, "%s failed: %s", call, ncclGetErrorString(rc));
}

int tuna_nccl_cuda_failed(cudaError_t rc, const char *call)
{
    return tuna_error_set(MPI_ERR_OTHER, "%s failed: %s", call, cudaGetErrorString(rc));
}

size_t tuna_nccl_group_limit(void)
{
    const char *s = getenv("TUNA_NCCL_GROUP_LIMIT");
    if (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == '\0' && v >= 2)
            return (size_t)v & ~(size_t)1; /* even: splits fall between slot pairs */
    }
    return TUNA_NCCL_GROUP_LIMIT_DEFAULT;
}

static tuna_nccl_tp *of(const tuna_transport *tp)
{
    return (tuna_nccl_tp *)(void *)tp; /* the table is the first member */
}

static void keep(tuna_nccl_tp *t, int rc)
{
    if (t->error == MPI_SUCCESS)
        t->error = rc;
}

static int close_group(tuna_nccl_tp *t)
{
    if (t->open == 0)
        return MPI_SUCCESS;
    t->open = 0;
    t->groups++;
    ncclResult_t rc = ncclGroupEnd();
    return rc == ncclSuccess ? MPI_SUCCESS : tuna_nccl_failed(rc, "ncclGroupEnd");
}

/* One slot of the open group (opened here, or closed and reopened at the limit). */
static int post(tuna_nccl_tp *t, int send, void *buf, size_t bytes, int peer, MPI_Request *req)
{
    *req = MPI_REQUEST_NULL;
    if (t->open == t->group_limit) {
        int rc = close_group(t);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (t->open == 0) {
        ncclResult_t rc = ncclGroupStart();
        if (rc != ncclSuccess)
            return tuna_nccl_failed(rc, "ncclGroupStart");
    }
    t->open++;
    t->slots++;
    if (bytes == 0)
        return MPI_SUCCESS;
    ncclResult_t rc = send ? ncclSend(buf, bytes, ncclUint8, peer, t->comm, t->stream)
                           : ncclRecv(buf, bytes, ncclUint8, peer, t->comm, t->stream);
    return rc == ncclSuccess ? MPI_SUCCESS : tuna_nccl_failed(rc, send ? "ncclSend" : "ncclRecv");
}

static int isend(const tuna_transport *tp, const void *buf, size_t bytes, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req)
{
    (void)tag; /* NCCL matches in posting order per pair */
    (void)comm;
    return post(of(tp), 1, (void *)buf, bytes, peer, req);
}

static int irecv(const tuna_transport *tp, void *buf, size_t bytes, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req)
{
    (void)tag;
    (void)comm;
    return post(of(tp), 0, buf, bytes, peer, req);
}

static void copy(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    tuna_nccl_tp *t = of(tp);
    if (bytes == 0 || dst == src)
        return;
    cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, t->stream);
    if (rc != cudaSuccess)
        keep(t, tuna_nccl_cuda_failed(rc, "cudaMemcpyAsync"));
}

static void move(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    const char *d = dst, *s = src;
    if (bytes == 0 || d == s)
        return;
    if (d < s + bytes && s < d + bytes) {
        keep(of(tp), tuna_error_set(MPI_ERR_INTERN, "NCCL transport: overlapping move of %zu "
                                                    "bytes is not supported", bytes));
        return;
    }
    copy(tp, dst, src, bytes);
}

#ifdef TUNA_NCCL_HOST_REDUCE
/* The stand-in build for tests: "device" memory is host memory (tests/support/nccl_standin.c). */
static int reduce(const tuna_transport *tp, const void *in, void *inout, int count,
                  MPI_Datatype type, MPI_Op op)
{
    (void)tp;
    return PMPI_Reduce_local(in, inout, count, type, op);
}
#else
static int dev_type(MPI_Datatype t, tuna_dev_type *out)
{
    MPI_Datatype mpi[] = {MPI_INT8_T, MPI_UINT8_T, MPI_INT32_T, MPI_UINT32_T,
                          MPI_INT64_T, MPI_UINT64_T, MPI_FLOAT, MPI_DOUBLE};
    const tuna_dev_type dev[] = {TUNA_DEV_INT8, TUNA_DEV_UINT8, TUNA_DEV_INT32, TUNA_DEV_UINT32,
                                 TUNA_DEV_INT64, TUNA_DEV_UINT64, TUNA_DEV_FLOAT, TUNA_DEV_DOUBLE};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (mpi[i] == t) {
            *out = dev[i];
            return 1;
        }
    return 0;
}

static int reduce(const tuna_transport *tp, const void *in, void *inout, int count,
                  MPI_Datatype type, MPI_Op op)
{
    tuna_nccl_tp *t = of(tp);
    tuna_dev_type dt;
    tuna_dev_op dop = op == MPI_SUM ? TUNA_DEV_SUM : op == MPI_PROD ? TUNA_DEV_PROD
                    : op == MPI_MAX ? TUNA_DEV_MAX : op == MPI_MIN ? TUNA_DEV_MIN
                    : TUNA_DEV_OP_COUNT;
    if (!dev_type(type, &dt) || dop == TUNA_DEV_OP_COUNT)
        return tuna_error_set(MPI_ERR_INTERN, "NCCL transport: no device reduction for this "
                                              "type and op");
    int rc = tuna_dev_reduce(inout, in, (size_t)count, dt, dop, (void *)t->stream);
    return rc == 0 ? MPI_SUCCESS : tuna_nccl_cuda_failed((cudaError_t)rc, "tuna_dev_reduce");
}
#endif

static int settle(const tuna_transport *tp, int n, MPI_Request *req, MPI_Status *status, bool block,
                  int *flag)
{
    (void)n;
    (void)req;
    (void)status;
    (void)block;
    *flag = 1; /* stream order: complete for everything posted after it */
    return tuna_nccl_tp_flush(of(tp)); /* the group closed, the first failure */
}

static int any(const tuna_transport *tp, int n, MPI_Request *req, int *index, bool block,
               int *flag)
{
    *index = MPI_UNDEFINED; /* no slot holds a request */
    return settle(tp, n, req, NULL, block, flag);
}

static void complete(const tuna_transport *tp, int n, MPI_Request *req)
{
    (void)n;
    (void)req;
    (void)tuna_nccl_tp_wait(of(tp)); /* a failed step's clean-up: errors ignored */
}

/* Cancel and release alike: nothing posted can be withdrawn, and slots hold no request. */
static void forget(const tuna_transport *tp, MPI_Request *req)
{
    (void)tp;
    *req = MPI_REQUEST_NULL;
}

static const tuna_transport nccl_table = {
    .name = "nccl",
    .isend = isend,
    .irecv = irecv,
    .copy = copy,
    .move = move,
    .reduce = reduce,
    .settle = settle,
    .any = any,
    .complete = complete,
    .cancel = forget,
    .release = forget,
};

int tuna_nccl_tp_open(tuna_nccl_tp *t, ncclComm_t comm, cudaStream_t stream)
{
    *t = (tuna_nccl_tp){.table = nccl_table, .comm = comm, .stream = stream,
                        .group_limit = tuna_nccl_group_limit(), .error = MPI_SUCCESS};
    ncclResult_t rc = ncclCommCount(comm, &t->size);
    if (rc == ncclSuccess)
        rc = ncclCommUserRank(comm, &t->rank);
    return rc == ncclSuccess ? MPI_SUCCESS : tuna_nccl_failed(rc, "ncclCommCount/UserRank");
}

int tuna_nccl_tp_flush(tuna_nccl_tp *t)
{
    int rc = close_group(t);
    return rc != MPI_SUCCESS ? rc : t->error;
}

int tuna_nccl_tp_wait(tuna_nccl_tp *t)
{
    int rc = tuna_nccl_tp_flush(t);
    cudaError_t c = cudaSuccess;
    if (!t->event)
        c = cudaEventCreateWithFlags(&t->event, cudaEventDisableTiming);
    if (c == cudaSuccess)
        c = cudaEventRecord(t->event, t->stream);
    if (c == cudaSuccess)
        c = cudaEventSynchronize(t->event);
    if (c != cudaSuccess && rc == MPI_SUCCESS)
        rc = tuna_nccl_cuda_failed(c, "cudaEventRecord/Synchronize");
    return rc;
}

int tuna_nccl_tp_close(tuna_nccl_tp *t)
{
    int rc = tuna_nccl_tp_flush(t);
    if (t->event) {
        cudaError_t c = cudaEventDestroy(t->event);
        t->event = NULL;
        if (c != cudaSuccess && rc == MPI_SUCCESS)
            rc = tuna_nccl_cuda_failed(c, "cudaEventDestroy");
    }
    return rc;
}

int tuna_nccl_tp_alloc(tuna_nccl_tp *t, size_t bytes, void **p)
{
    *p = NULL;
    if (bytes == 0)
        return MPI_SUCCESS;
    cudaError_t rc = cudaMallocAsync(p, bytes, t->stream);
    return rc == cudaSuccess ? MPI_SUCCESS : tuna_nccl_cuda_failed(rc, "cudaMallocAsync");
}

void tuna_nccl_tp_free(tuna_nccl_tp *t, void *p)
{
    if (!p)
        return;
    cudaError_t rc = cudaFreeAsync(p, t->stream);
    if (rc != cudaSuccess)
        keep(t, tuna_nccl_cuda_failed(rc, "cudaFreeAsync"));
}

static void memcpy_async(tuna_nccl_tp *t, void *dst, const void *src, size_t bytes,
                         enum cudaMemcpyKind kind)
{
    if (bytes == 0)
        return;
    cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, kind, t->stream);
    if (rc != cudaSuccess)
        keep(t, tuna_nccl_cuda_failed(rc, "cudaMemcpyAsync"));
}

void tuna_nccl_tp_to_device(tuna_nccl_tp *t, void *dst, const void *src, size_t bytes)
{
    memcpy_async(t, dst, src, bytes, cudaMemcpyHostToDevice);
}

void tuna_nccl_tp_to_host(tuna_nccl_tp *t, void *dst, const void *src, size_t bytes)
{
    memcpy_async(t, dst, src, bytes, cudaMemcpyDeviceToHost);
}
