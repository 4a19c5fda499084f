/*
 * A host stand-in for NCCL and the CUDA runtime, for tests only (docs/nccl.md): the subset
 * tuna's NCCL path calls, over MPI point-to-point on host memory, so every NCCL row runs
 * under mpiexec on a machine without a GPU. Built as its own shared library, which the test
 * variant of the NCCL library (libtuna-nccl-standin) links instead of libnccl and libcudart.
 * Compiled against the real nccl.h and cuda_runtime_api.h, so the types are NCCL's and CUDA's.
 *
 * NCCL's rules it enforces:
 *   - ncclSend/ncclRecv between ncclGroupStart and ncclGroupEnd are posted together when the
 *     outermost ncclGroupEnd is called, and complete there (MPI_Waitall): a group is one
 *     kernel on the stream, which ends only when all its operations have, so operations a
 *     rank puts in different groups than its peer deadlock here as on NCCL. Sends are
 *     synchronous (MPI_Issend): a send completes only once its receive is posted, as on NCCL,
 *     not eagerly into MPI's buffers.
 *   - At most STANDIN_NCCL_GROUP_LIMIT operations (default 2048) per group: more, and
 *     ncclGroupEnd returns ncclInvalidUsage and posts nothing.
 *   - A send and its receive are matched in posting order per pair of ranks (NCCL has no
 *     tags) and must be of the same size in bytes (else ncclInvalidUsage).
 *   - Operations outside a group are a group of one.
 * The stream is the program order: every call completes before it returns (a memcpy for
 * cudaMemcpyAsync, the group at ncclGroupEnd), events are always complete. "Device" memory is
 * host memory from malloc (cudaMalloc).
 *
 * ncclAllGather, ncclAllReduce and ncclAlltoAll (the vendor rows) are MPI's collectives on
 * the id's communicator, outside groups only, defined as NCCL does: pnccl... and the plain
 * names as weak aliases. tuna_standin_nccl_colls() counts their calls.
 *
 * tuna_standin_nccl_stats() reports the groups posted, the largest since its last call and
 * the operations, for the tests of the transport's grouping and splitting.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct ncclComm {
    MPI_Comm mc;
    int rank, size;
};
struct CUstream_st {
    int unused;
};
struct CUevent_st {
    double t; /* MPI_Wtime at the record: the stream is the program order */
};

typedef struct standin_op {
    int send;
    void *buf;
    size_t bytes;
    int peer;
    ncclComm_t comm;
} standin_op;

static standin_op *pending;
static size_t npending, cap;
static int depth;
static ncclResult_t group_error;
static char last_error[256];
static long stat_groups, stat_max_ops, stat_ops;

EXPORT void tuna_standin_nccl_stats(long *groups, long *max_ops, long *ops);
void tuna_standin_nccl_stats(long *groups, long *max_ops, long *ops)
{
    *groups = stat_groups;
    *max_ops = stat_max_ops;
    *ops = stat_ops;
    stat_max_ops = 0; /* the largest group since the last call */
}

static ncclResult_t fail(ncclResult_t rc, const char *msg)
{
    snprintf(last_error, sizeof last_error, "NCCL stand-in: %s", msg);
    return rc;
}

static size_t group_limit(void)
{
    const char *s = getenv("STANDIN_NCCL_GROUP_LIMIT");
    long v = s ? strtol(s, NULL, 10) : 0;
    return v > 0 ? (size_t)v : 2048;
}

static size_t type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

/* ------------------------------------------------------------------ communicators */

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static unsigned counter;
    if (!id)
        return fail(ncclInvalidArgument, "ncclGetUniqueId: NULL id");
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "standin:%ld:%u", (long)getpid(),
             ++counter);
    return ncclSuccess;
}

/* The communicator of an id: MPI_COMM_WORLD split by a hash of the id (every rank of
 * MPI_COMM_WORLD calls ncclCommInitRank in the tests, as with one id per job). */
EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
        return fail(ncclInvalidArgument, "ncclCommInitRank: bad arguments");
    uint32_t h = 2166136261u;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
        h = (h ^ (unsigned char)id.internal[i]) * 16777619u;
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return fail(ncclSystemError, "out of memory");
    if (MPI_Comm_split(MPI_COMM_WORLD, (int)(h & 0x7fffffff), rank, &c->mc) != MPI_SUCCESS) {
        free(c);
        return fail(ncclSystemError, "MPI_Comm_split failed");
    }
    MPI_Comm_set_errhandler(c->mc, MPI_ERRORS_RETURN);
    MPI_Comm_size(c->mc, &c->size);
    MPI_Comm_rank(c->mc, &c->rank);
    if (c->size != nranks || c->rank != rank) {
        MPI_Comm_free(&c->mc);
        free(c);
        return fail(ncclInvalidUsage, "ncclCommInitRank: nranks/rank disagree with the id's ranks");
    }
    *comm = c;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return fail(ncclInvalidArgument, "ncclCommDestroy: NULL comm");
    MPI_Comm_free(&comm->mc);
    free(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    if (!comm || !count)
        return fail(ncclInvalidArgument, "ncclCommCount: NULL argument");
    *count = comm->size;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    if (!comm || !rank)
        return fail(ncclInvalidArgument, "ncclCommUserRank: NULL argument");
    *rank = comm->rank;
    return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclSystemError: return "system error";
    default: return "NCCL stand-in error";
    }
}

EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return last_error;
}

/* ------------------------------------------------------------------ groups and p2p */

static ncclResult_t run_group(void)
{
    size_t n = npending;
    npending = 0;
    ncclResult_t rc = group_error;
    group_error = ncclSuccess;
    if (rc != ncclSuccess || n == 0)
        return rc;
    if (n > group_limit())
        return fail(ncclInvalidUsage, "more operations in one group than the limit");
    stat_groups++;
    stat_ops += (long)n;
    if ((long)n > stat_max_ops)
        stat_max_ops = (long)n;
    MPI_Request *req = malloc(n * sizeof *req);
    MPI_Status *st = malloc(n * sizeof *st);
    if (!req || !st) {
        free(req);
        free(st);
        return fail(ncclSystemError, "out of memory");
    }
    /* Exact sizes: a longer send truncates (an MPI error, returned: MPI_ERRORS_RETURN). */
    for (size_t i = 0; i < n; i++) {
        standin_op *o = &pending[i];
        if (o->send)
            MPI_Issend(o->buf, (int)o->bytes, MPI_BYTE, o->peer, 0, o->comm->mc, &req[i]);
        else
            MPI_Irecv(o->buf, (int)o->bytes, MPI_BYTE, o->peer, 0, o->comm->mc, &req[i]);
    }
    int mrc = MPI_Waitall((int)n, req, st);
    for (size_t i = 0; i < n && mrc == MPI_SUCCESS; i++)
        if (!pending[i].send) {
            int got;
            MPI_Get_count(&st[i], MPI_BYTE, &got);
            if ((size_t)got != pending[i].bytes)
                rc = fail(ncclInvalidUsage, "a send and its receive differ in size");
        }
    if (mrc != MPI_SUCCESS)
        rc = fail(ncclInvalidUsage, "a send and its receive differ in size (truncated)");
    free(req);
    free(st);
    return rc;
}

static ncclResult_t post(int send, const void *buf, size_t count, ncclDataType_t type, int peer,
                         ncclComm_t comm)
{
    size_t ts = type_size(type);
    if (!comm || ts == 0 || peer < 0 || peer >= comm->size || (count && !buf) ||
        count * ts > (size_t)INT32_MAX)
        return fail(ncclInvalidArgument, "ncclSend/ncclRecv: bad arguments");
    if (npending == cap) {
        size_t nc = cap ? 2 * cap : 64;
        standin_op *p = realloc(pending, nc * sizeof *p);
        if (!p)
            return fail(ncclSystemError, "out of memory");
        pending = p;
        cap = nc;
    }
    pending[npending++] = (standin_op){send, (void *)buf, count * ts, peer, comm};
    return depth ? ncclSuccess : run_group();
}

EXPORT ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t type, int peer,
                             ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return post(1, buf, count, type, peer, comm);
}

EXPORT ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t type, int peer,
                             ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return post(0, buf, count, type, peer, comm);
}

EXPORT ncclResult_t ncclGroupStart(void)
{
    depth++;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (depth == 0)
        return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--depth > 0)
        return ncclSuccess;
    return run_group();
}

/* ------------------------------------------------------------------ collectives */

static MPI_Datatype mpi_type(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: return MPI_INT8_T;
    case ncclUint8: return MPI_UINT8_T;
    case ncclInt32: return MPI_INT32_T;
    case ncclUint32: return MPI_UINT32_T;
    case ncclInt64: return MPI_INT64_T;
    case ncclUint64: return MPI_UINT64_T;
    case ncclFloat32: return MPI_FLOAT;
    case ncclFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static long stat_colls;

/* The calls of NCCL's own collectives (pnccl..., or the plain names where nothing takes
 * them), for the drop-in's tests. */
EXPORT long tuna_standin_nccl_colls(void);
long tuna_standin_nccl_colls(void)
{
    return stat_colls;
}

static ncclResult_t coll_check(ncclComm_t comm, size_t bytes)
{
    stat_colls++;
    if (!comm || bytes > (size_t)INT32_MAX)
        return fail(ncclInvalidArgument, "collective: bad arguments");
    if (depth)
        return fail(ncclInvalidUsage, "collective inside a group: not in the stand-in");
    return ncclSuccess;
}

EXPORT ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                  ncclDataType_t type, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    size_t b = sendcount * type_size(type);
    ncclResult_t rc = coll_check(comm, b);
    if (rc != ncclSuccess)
        return rc;
    /* In place: sendbuff is the rank's own slot. */
    const void *s = sendbuff == (char *)recvbuff + (size_t)comm->rank * b ? MPI_IN_PLACE : sendbuff;
    return MPI_Allgather(s, (int)b, MPI_BYTE, recvbuff, (int)b, MPI_BYTE, comm->mc) == MPI_SUCCESS
               ? ncclSuccess
               : fail(ncclSystemError, "MPI_Allgather failed");
}

EXPORT ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                  cudaStream_t stream)
{
    (void)stream;
    MPI_Datatype mt = mpi_type(type);
    MPI_Op mo = op == ncclSum ? MPI_SUM : op == ncclProd ? MPI_PROD : op == ncclMax ? MPI_MAX
              : op == ncclMin ? MPI_MIN : MPI_OP_NULL;
    ncclResult_t rc = coll_check(comm, count * type_size(type));
    if (rc != ncclSuccess)
        return rc;
    if (mt == MPI_DATATYPE_NULL || mo == MPI_OP_NULL)
        return fail(ncclInvalidArgument, "ncclAllReduce: type or op not in the stand-in");
    const void *s = sendbuff == recvbuff ? MPI_IN_PLACE : sendbuff;
    return MPI_Allreduce(s, recvbuff, (int)count, mt, mo, comm->mc) == MPI_SUCCESS
               ? ncclSuccess
               : fail(ncclSystemError, "MPI_Allreduce failed");
}

EXPORT ncclResult_t pncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                                 ncclDataType_t type, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    size_t b = count * type_size(type);
    ncclResult_t rc = coll_check(comm, b * (comm ? (size_t)comm->size : 1));
    if (rc != ncclSuccess)
        return rc;
    return MPI_Alltoall(sendbuff, (int)b, MPI_BYTE, recvbuff, (int)b, MPI_BYTE, comm->mc) ==
                   MPI_SUCCESS
               ? ncclSuccess
               : fail(ncclSystemError, "MPI_Alltoall failed");
}

/* As in NCCL: the plain names are weak aliases of the profiling ones, so a library loaded
 * ahead (tuna's drop-in) takes them and reaches these through pnccl... */
EXPORT ncclResult_t ncclAllGather(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                  cudaStream_t) __attribute__((weak, alias("pncclAllGather")));
EXPORT ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                  ncclComm_t, cudaStream_t)
    __attribute__((weak, alias("pncclAllReduce")));
EXPORT ncclResult_t ncclAlltoAll(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                 cudaStream_t) __attribute__((weak, alias("pncclAlltoAll")));

/* ------------------------------------------------------------------ CUDA runtime */

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    *s = calloc(1, sizeof **s);
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}
EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    *e = calloc(1, sizeof **e);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    if (!e)
        return cudaErrorInvalidResourceHandle;
    e->t = MPI_Wtime();
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms || !start || !end)
        return cudaErrorInvalidResourceHandle;
    *ms = (float)((end->t - start->t) * 1e3);
    return cudaSuccess;
}
EXPORT cudaError_t cudaMemset(void *p, int v, size_t bytes)
{
    memset(p, v, bytes);
    return cudaSuccess;
}
/* As many "devices" as ranks may want: every one is this host. */
EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1 << 20;
    return cudaSuccess;
}
EXPORT cudaError_t cudaSetDevice(int d)
{
    return d >= 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    return e ? cudaSuccess : cudaErrorInvalidResourceHandle;
}
EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    return e ? cudaSuccess : cudaErrorInvalidResourceHandle;
}
EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                   enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)kind;
    (void)s;
    if (bytes && (!dst || !src))
        return cudaErrorInvalidValue;
    /* cudaMemcpy* regions must not overlap. */
    const char *d = dst, *c = src;
    if (bytes && d < c + bytes && c < d + bytes && d != c)
        return cudaErrorInvalidValue;
    if (bytes && d != c)
        memcpy(dst, src, bytes);
    return cudaSuccess;
}
EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    return cudaMemcpyAsync(dst, src, bytes, kind, NULL);
}
EXPORT cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
EXPORT cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
EXPORT cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s)
{
    (void)s;
    return cudaMalloc(p, bytes);
}
EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    (void)s;
    return cudaFree(p);
}
EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "CUDA stand-in error";
}
