/*
 * The staging transport: device memory over an MPI that is not CUDA-aware (cuda_staged.h).
 * Over a CUDA-aware MPI the same transport posts the device regions themselves ("direct":
 * no bounce memory; local copies and moves are still CUDA's).
 *
 * Bounce memory: pinned host memory (cudaHostAlloc), one pool per communicator for its
 * blocking calls, one per nonblocking operation and one per plan (tuna_staged_open), taken in
 * order by the posts of a round and given back when the round's last request completes
 * (nothing of the communicator's staging is in flight then): its size is the largest round
 * the rows ran on it (a round: the messages posted before their completion; docs/gpu.md
 * gives each device row's). A round larger than the pool takes an extra pinned chunk per
 * message; when the round ends, the pool is remade at the round's size and the chunks
 * freed, so a communicator that repeats its blocking calls allocates in its first call only.
 * Messages are never split: a round's messages are all in flight at once.
 *
 * Completion: the engine's request slots are MPI's own (the MPI host transport's settle /
 * any / complete); each staged request is remembered with its slot, and when the engine
 * completes a receive's slot, its bounce bytes are copied to the device region and the
 * stream synchronised before the completion returns, so a step that follows reads the data
 * on the device. A failed completion (or the clean-up's complete) copies nothing.
 */
#define _GNU_SOURCE
#include "cuda_staged.h"

#include "../core/memkind.h" /* tuna_memory_mpi_cuda_aware, tuna_memory_kinds */
#include "cuda_kernels.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The runtime's types and values used here (cuda_runtime_api.h, which tuna does not need). */
typedef void *cuda_stream;
enum { CUDA_OK = 0, CUDA_MEMCPY_DEFAULT = 4, CUDA_HOST_ALLOC_DEFAULT = 0 };

static struct {
    int (*memcpy_async)(void *dst, const void *src, size_t n, int kind, cuda_stream s);
    int (*stream_create)(cuda_stream *s);
    int (*stream_destroy)(cuda_stream s);
    int (*stream_synchronize)(cuda_stream s);
    int (*host_alloc)(void **p, size_t n, unsigned flags);
    int (*free_host)(void *p);
    const char *(*error_string)(int e);
    int (*device_count)(int *n);
    int (*device_alloc)(void **p, size_t n);
    int (*device_free)(void *p);
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static bool rt_ok;

/* ISO C has no object-to-function pointer cast: copy the bytes. */
static bool sym(void *h, const char *name, void *fn, size_t size)
{
    void *p = dlsym(h, name);
    if (p)
        memcpy(fn, &p, size);
    return p != NULL;
}

static void rt_load(void)
{
    /* The runtime the application uses is usually loaded already (its soname is found
     * then); else the first one of these that loads. The handle stays open. */
    static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    rt_ok = sym(h, "cudaMemcpyAsync", &rt.memcpy_async, sizeof rt.memcpy_async) &&
            sym(h, "cudaStreamCreate", &rt.stream_create, sizeof rt.stream_create) &&
            sym(h, "cudaStreamDestroy", &rt.stream_destroy, sizeof rt.stream_destroy) &&
            sym(h, "cudaStreamSynchronize", &rt.stream_synchronize,
                sizeof rt.stream_synchronize) &&
            sym(h, "cudaHostAlloc", &rt.host_alloc, sizeof rt.host_alloc) &&
            sym(h, "cudaFreeHost", &rt.free_host, sizeof rt.free_host) &&
            sym(h, "cudaGetErrorString", &rt.error_string, sizeof rt.error_string) &&
            sym(h, "cudaGetDeviceCount", &rt.device_count, sizeof rt.device_count) &&
            sym(h, "cudaMalloc", &rt.device_alloc, sizeof rt.device_alloc) &&
            sym(h, "cudaFree", &rt.device_free, sizeof rt.device_free);
    /* A runtime without a device (a machine with CUDA installed and no GPU) is not usable. */
    int n = 0;
    if (rt_ok && (rt.device_count(&n) != CUDA_OK || n < 1))
        rt_ok = false;
    if (!rt_ok)
        dlclose(h);
}

bool tuna_staged_available(void)
{
    pthread_once(&rt_once, rt_load);
    return rt_ok;
}

/* A staged request: its slot, the bounce bytes, the device region of a receive (NULL for a
 * send), and whether the bounce bytes are an extra chunk of their own. */
typedef struct staged_req {
    MPI_Request *slot;
    void *dev;
    char *host;
    size_t bytes;
    bool own_chunk;
} staged_req;

typedef struct tuna_staged {
    tuna_transport t; /* first member: the transport's table is the handle */
    cuda_stream stream;
    char *pool;       /* pinned, cap bytes; used: taken by the round in flight */
    size_t cap, used;
    size_t round;     /* bytes the round in flight took in all (pool and chunks) */
    staged_req *req;  /* the staged requests in flight */
    int n, room;
    int copy_rc;      /* the first failed local copy not yet reported (tuna_staged_result) */
    bool direct;      /* a CUDA-aware MPI: messages posted from device memory, not staged */
    void *operand;    /* device memory for a reduction's host operand (kernel reductions) */
    size_t operand_cap;
} tuna_staged;

static int cuda_failed(int e, const char *what)
{
    return tuna_error_set(MPI_ERR_OTHER, "staging through host memory: %s failed: %s", what,
                          rt.error_string ? rt.error_string(e) : "CUDA error");
}

enum { ALIGN = 256 };

/* Bounce bytes for a message of `bytes` of the round in flight. */
static int take(tuna_staged *s, size_t bytes, char **host, bool *own_chunk)
{
    const size_t need = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (s->used + need <= s->cap) {
        s->round += need;
        *host = s->pool + s->used;
        s->used += need;
        *own_chunk = false;
        return MPI_SUCCESS;
    }
    void *p = NULL;
    int e = rt.host_alloc(&p, need, CUDA_HOST_ALLOC_DEFAULT);
    if (e != CUDA_OK)
        return tuna_error_set(MPI_ERR_NO_MEM,
                              "staging through host memory: no pinned memory for a message "
                              "of %zu bytes (cudaHostAlloc: %s)",
                              bytes, rt.error_string(e));
    s->round += need;
    *host = p;
    *own_chunk = true;
    return MPI_SUCCESS;
}

/* The round is over (nothing in flight): the pool is remade at the round's size if it
 * did not fit. A failure keeps the old pool (the next round takes chunks again). */
static void round_end(tuna_staged *s)
{
    if (s->round > s->cap) {
        void *p = NULL;
        if (rt.host_alloc(&p, s->round, CUDA_HOST_ALLOC_DEFAULT) == CUDA_OK) {
            if (s->pool)
                (void)rt.free_host(s->pool);
            s->pool = p;
            s->cap = s->round;
        }
    }
    s->used = 0;
    s->round = 0;
}

/* Room to remember one more staged request: made before the post, so that a posted
 * message is always remembered. */
static int room_for_one(tuna_staged *s)
{
    if (s->n < s->room)
        return MPI_SUCCESS;
    const int room = s->room ? 2 * s->room : 16;
    staged_req *r = realloc(s->req, sizeof *r * (size_t)room);
    if (!r)
        return tuna_error_set(MPI_ERR_NO_MEM, "staging through host memory: no memory");
    s->req = r;
    s->room = room;
    return MPI_SUCCESS;
}

static void remember(tuna_staged *s, MPI_Request *slot, void *dev, char *host, size_t bytes,
                     bool own_chunk)
{
    s->req[s->n++] = (staged_req){slot, dev, host, bytes, own_chunk};
}

/* Forget staged request i (its chunk freed); the round ends with the last one. */
static void forget(tuna_staged *s, int i)
{
    if (s->req[i].own_chunk)
        (void)rt.free_host(s->req[i].host);
    s->req[i] = s->req[--s->n];
    if (s->n == 0)
        round_end(s);
}

/* A post that failed after its bounce bytes were taken: give them back. */
static void untake(tuna_staged *s, char *host, bool own_chunk)
{
    if (own_chunk)
        (void)rt.free_host(host);
    if (s->n == 0)
        round_end(s);
}

static int st_isend(const tuna_transport *tp, const void *buf, size_t bytes, int peer, int tag,
                    MPI_Comm comm, MPI_Request *req)
{
    tuna_staged *s = (tuna_staged *)tp;
    if (bytes == 0 || s->direct) /* MPI reads nothing, or reads device memory itself */
        return tuna_tp_isend(&tuna_transport_mpi_host, buf, bytes, peer, tag, comm, req);
    char *host;
    bool own;
    int rc = room_for_one(s);
    if (rc != MPI_SUCCESS || (rc = take(s, bytes, &host, &own)) != MPI_SUCCESS)
        return rc;
    int e = rt.memcpy_async(host, buf, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
    if (e == CUDA_OK)
        e = rt.stream_synchronize(s->stream);
    if (e != CUDA_OK) {
        untake(s, host, own);
        return cuda_failed(e, "the copy of a message to host memory");
    }
    rc = tuna_tp_isend(&tuna_transport_mpi_host, host, bytes, peer, tag, comm, req);
    if (rc == MPI_SUCCESS)
        remember(s, req, NULL, host, bytes, own);
    else
        untake(s, host, own);
    return rc;
}

static int st_irecv(const tuna_transport *tp, void *buf, size_t bytes, int peer, int tag,
                    MPI_Comm comm, MPI_Request *req)
{
    tuna_staged *s = (tuna_staged *)tp;
    if (bytes == 0 || s->direct) /* MPI writes nothing, or writes device memory itself */
        return tuna_tp_irecv(&tuna_transport_mpi_host, buf, bytes, peer, tag, comm, req);
    char *host;
    bool own;
    int rc = room_for_one(s);
    if (rc != MPI_SUCCESS || (rc = take(s, bytes, &host, &own)) != MPI_SUCCESS)
        return rc;
    rc = tuna_tp_irecv(&tuna_transport_mpi_host, host, bytes, peer, tag, comm, req);
    if (rc == MPI_SUCCESS)
        remember(s, req, buf, host, bytes, own);
    else
        untake(s, host, own);
    return rc;
}

/* The staged requests whose slots are in req[0..n) and have completed (MPI_REQUEST_NULL
 * now): receives copied to the device (copy: the completion succeeded), all forgotten. */
static int finish(tuna_staged *s, int n, MPI_Request *req, bool copy)
{
    int rc = MPI_SUCCESS;
    bool copied = false;
    for (int i = 0; i < s->n;) {
        staged_req *r = &s->req[i];
        if (r->slot < req || r->slot >= req + n || *r->slot != MPI_REQUEST_NULL) {
            i++;
            continue;
        }
        if (copy && r->dev && rc == MPI_SUCCESS) {
            int e = rt.memcpy_async(r->dev, r->host, r->bytes, CUDA_MEMCPY_DEFAULT, s->stream);
            if (e != CUDA_OK)
                rc = cuda_failed(e, "the copy of a message to device memory");
            copied = true;
        }
        if (copied) {
            /* its bounce bytes are read by the copy: forgotten after the synchronisation */
            r->slot = NULL;
            i++;
        } else {
            forget(s, i);
        }
    }
    if (copied) {
        int e = rt.stream_synchronize(s->stream);
        if (e != CUDA_OK && rc == MPI_SUCCESS)
            rc = cuda_failed(e, "the copy of a message to device memory");
        for (int i = 0; i < s->n;)
            if (!s->req[i].slot)
                forget(s, i);
            else
                i++;
    }
    return rc;
}

static int st_settle(const tuna_transport *tp, int n, MPI_Request *req, MPI_Status *status,
                     bool block, int *flag)
{
    tuna_staged *s = (tuna_staged *)tp;
    int rc = tuna_mpi_host_settle(n, req, status, block, flag);
    if (*flag) {
        int crc = finish(s, n, req, rc == MPI_SUCCESS);
        rc = rc == MPI_SUCCESS ? crc : rc;
    }
    return rc;
}

static int st_any(const tuna_transport *tp, int n, MPI_Request *req, int *index, bool block,
                  int *flag)
{
    tuna_staged *s = (tuna_staged *)tp;
    int rc = tuna_mpi_host_any(n, req, index, block, flag);
    if (*flag && *index != MPI_UNDEFINED) {
        int crc = finish(s, 1, req + *index, rc == MPI_SUCCESS);
        rc = rc == MPI_SUCCESS ? crc : rc;
    }
    return rc;
}

static void st_complete(const tuna_transport *tp, int n, MPI_Request *req)
{
    tuna_mpi_host_complete(n, req);
    (void)finish((tuna_staged *)tp, n, req, false);
}

/* A cancelled receive's bytes are never copied to the device (its completion forgets it). */
static void st_cancel(const tuna_transport *tp, MPI_Request *req)
{
    tuna_staged *s = (tuna_staged *)tp;
    for (int i = 0; i < s->n; i++)
        if (s->req[i].slot == req)
            s->req[i].dev = NULL;
    PMPI_Cancel(req);
}

static void st_release(const tuna_transport *tp, MPI_Request *req)
{
    PMPI_Request_free(req);
    (void)finish((tuna_staged *)tp, 1, req, false);
}

/* Local copies on the device: cudaMemcpy's regions must not overlap, so a move whose
 * regions do goes through bounce memory. A failed copy has no return value in the table:
 * it is kept for tuna_staged_result (the call's error). */
static void copy_failed(tuna_staged *s, int rc)
{
    if (s->copy_rc == MPI_SUCCESS)
        s->copy_rc = rc;
}

int tuna_staged_result(const tuna_transport *tp)
{
    tuna_staged *s = (tuna_staged *)tp;
    const int rc = s->copy_rc;
    s->copy_rc = MPI_SUCCESS;
    return rc;
}

static void st_copy(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    tuna_staged *s = (tuna_staged *)tp;
    if (bytes == 0)
        return;
    int e = rt.memcpy_async(dst, src, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
    if (e == CUDA_OK)
        e = rt.stream_synchronize(s->stream);
    if (e != CUDA_OK)
        copy_failed(s, cuda_failed(e, "a device-to-device copy"));
}

static void st_move(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    tuna_staged *s = (tuna_staged *)tp;
    const uintptr_t d = (uintptr_t)dst, c = (uintptr_t)src;
    if (bytes == 0 || d == c)
        return;
    if (d + bytes <= c || c + bytes <= d) {
        st_copy(tp, dst, src, bytes);
        return;
    }
    char *host;
    bool own;
    int rc = take(s, bytes, &host, &own);
    if (rc != MPI_SUCCESS) {
        copy_failed(s, rc);
        return;
    }
    int e = rt.memcpy_async(host, src, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
    if (e == CUDA_OK)
        e = rt.memcpy_async(dst, host, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
    if (e == CUDA_OK)
        e = rt.stream_synchronize(s->stream);
    if (e != CUDA_OK)
        copy_failed(s, cuda_failed(e, "a device-to-device move"));
    untake(s, host, own);
}

/* inout (device memory) = in op inout by libtuna-cuda's kernel on the transport's stream; a
 * host operand is first copied to device memory of the transport's own (kept, grown to the
 * largest operand, freed with the transport). Synchronised before it returns. */
static int kernel_reduce(tuna_staged *s, const tuna_cuda_kernels *k, const void *in,
                         void *inout, size_t count, size_t bytes, int dtype, int dop)
{
    const void *operand = in;
    int e = CUDA_OK;
    if (!(tuna_memory_kinds(in, NULL) & TUNA_MEMORY_DEVICE)) {
        if (s->operand_cap < bytes) {
            if (s->operand)
                (void)rt.device_free(s->operand);
            s->operand = NULL;
            s->operand_cap = 0;
            if ((e = rt.device_alloc(&s->operand, bytes)) != CUDA_OK)
                return tuna_error_set(MPI_ERR_NO_MEM,
                                      "a reduction on the device: no device memory for its "
                                      "operand of %zu bytes (cudaMalloc: %s)",
                                      bytes, rt.error_string(e));
            s->operand_cap = bytes;
        }
        e = rt.memcpy_async(s->operand, in, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
        operand = s->operand;
    }
    if (e == CUDA_OK)
        e = k->reduce(inout, operand, count, dtype, dop, s->stream);
    if (e == CUDA_OK)
        e = rt.stream_synchronize(s->stream);
    return e == CUDA_OK ? MPI_SUCCESS : cuda_failed(e, "a reduction on the device");
}

/* inout = in op inout with either operand in device or host memory: both copied into one
 * pinned region (the bounce memory of this reduction only), reduced there by host code
 * (MPI_Reduce_local on pinned host memory), the result copied back; synchronised before it
 * returns. The callers serve contiguous types (size == extent) and MPI's predefined ops only
 * (memory_route.c). A failed copy is the reduction's error, and recorded as a failed copy. */
static int st_reduce(const tuna_transport *tp, const void *in, void *inout, int count,
                     MPI_Datatype type, MPI_Op op)
{
    tuna_staged *s = (tuna_staged *)tp;
    int size = 0;
    int rc = PMPI_Type_size(type, &size);
    if (rc != MPI_SUCCESS || count <= 0 || size <= 0)
        return rc;
    const size_t bytes = (size_t)count * (size_t)size;
    const tuna_cuda_kernels *k = tuna_cuda_kernels_get();
    int dtype, dop;
    if (k && tuna_cuda_kernel_codes(type, op, &dtype, &dop) &&
        (tuna_memory_kinds(inout, NULL) & TUNA_MEMORY_DEVICE)) {
        rc = kernel_reduce(s, k, in, inout, (size_t)count, bytes, dtype, dop);
        if (rc != MPI_SUCCESS)
            copy_failed(s, rc);
        return rc;
    }
    const size_t half = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    char *host;
    bool own;
    if ((rc = take(s, 2 * half, &host, &own)) != MPI_SUCCESS) {
        copy_failed(s, rc);
        return rc;
    }
    char *a = host, *b = host + half;
    int e = rt.memcpy_async(a, in, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
    if (e == CUDA_OK)
        e = rt.memcpy_async(b, inout, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
    if (e == CUDA_OK)
        e = rt.stream_synchronize(s->stream);
    if (e != CUDA_OK) {
        rc = cuda_failed(e, "the copy of a reduction's operands to host memory");
    } else if ((rc = PMPI_Reduce_local(a, b, count, type, op)) != MPI_SUCCESS) {
        rc = tuna_error_set(rc, "staging through host memory: MPI_Reduce_local of %d elements "
                                "failed",
                            count);
    } else {
        e = rt.memcpy_async(inout, b, bytes, CUDA_MEMCPY_DEFAULT, s->stream);
        if (e == CUDA_OK)
            e = rt.stream_synchronize(s->stream);
        if (e != CUDA_OK)
            rc = cuda_failed(e, "the copy of a reduction's result from host memory");
    }
    untake(s, host, own);
    if (rc != MPI_SUCCESS)
        copy_failed(s, rc);
    return rc;
}

static const tuna_transport staged_table = {
    .name = "cuda-staged",
    .isend = st_isend,
    .irecv = st_irecv,
    .copy = st_copy,
    .move = st_move,
    .reduce = st_reduce,
    .settle = st_settle,
    .any = st_any,
    .complete = st_complete,
    .cancel = st_cancel,
    .release = st_release,
};

int tuna_staged_get(tuna_ctx *ctx, const tuna_transport **tp)
{
    if (ctx->staged) {
        *tp = &ctx->staged->t;
        return MPI_SUCCESS;
    }
    return tuna_staged_open(&ctx->staged, tp);
}

int tuna_staged_open(struct tuna_staged **out, const tuna_transport **tp)
{
    if (!tuna_staged_available())
        return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                              "device buffers: CUDA's runtime (libcudart) is not usable "
                              "(docs/gpu.md)");
    tuna_staged *s = calloc(1, sizeof *s);
    if (!s)
        return tuna_error_set(MPI_ERR_NO_MEM, "staging through host memory: no memory");
    s->t = staged_table;
    /* Where the MPI takes device memory (TUNA_CUDA_AWARE, else its own answer; only named
     * rows get here then: auto keeps the library's call), messages go from and to the
     * device buffers as they are; copies and moves stay CUDA's. */
    s->direct = tuna_memory_mpi_cuda_aware(NULL);
    if (s->direct)
        s->t.name = "cuda-direct";
    int e = rt.stream_create(&s->stream);
    if (e != CUDA_OK) {
        free(s);
        return cuda_failed(e, "cudaStreamCreate");
    }
    *out = s;
    *tp = &s->t;
    return MPI_SUCCESS;
}

void tuna_staged_free(struct tuna_staged *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        if (s->req[i].own_chunk)
            (void)rt.free_host(s->req[i].host);
    if (s->pool)
        (void)rt.free_host(s->pool);
    if (s->operand)
        (void)rt.device_free(s->operand);
    (void)rt.stream_destroy(s->stream);
    free(s->req);
    free(s);
}
