/*
 * The drop-in over NCCL (src/nccl/dropin.c, docs/nccl.md): a client that knows nothing of
 * tuna calls ncclAllGather, ncclAllReduce and ncclAlltoAll and gets, byte for byte over
 * sentinel-filled receive buffers, what MPI_Allgather / MPI_Allreduce / MPI_Alltoall give on
 * the same inputs (integer sums, so every order of reduction agrees). argv[1] says which code
 * the environment asks for, checked with the stand-in's count of NCCL's own collectives
 * (TEST_STANDIN): "tuna" (TUNA_NCCL_* name NCCL rows: NCCL's own is never called, except for
 * ncclAvg, which tuna refuses and hands on: NCCL's answer, whatever it is, is returned),
 * "vendor" (nothing set, or rows tuna cannot run on NCCL: NCCL's own runs every call),
 * "auto" (every call twelve times: auto learns, with NCCL's own among its candidates, and
 * settles; ranks that settled differently would deadlock or differ).
 * Built on the stand-in (linked ahead of it, or loaded with LD_PRELOAD) and on NCCL and a GPU
 * (gpu label, one rank per GPU, exit 77 where there are too few; no counter there).
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TEST_STANDIN
long tuna_standin_nccl_colls(void);
#endif

#define SENTINEL 0x5A

static int P, me, failures;
static bool want_tuna, any_path; /* any_path: auto, which runs NCCL's own among its candidates */
static ncclComm_t comm;
static cudaStream_t stream;

static void fail(const char *coll, const char *what, size_t n)
{
    if (failures++ < 20)
        fprintf(stderr, "rank %d: %s, %zu elements: %s\n", me, coll, n, what);
}

static void *to_device(const void *h, size_t n)
{
    void *d = NULL;
    if (cudaMalloc(&d, n ? n : 1) != cudaSuccess ||
        (n && cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) != cudaSuccess))
        MPI_Abort(MPI_COMM_WORLD, 3);
    return d;
}

static void from_device(void *h, const void *d, size_t n)
{
    if (cudaStreamSynchronize(stream) != cudaSuccess ||
        (n && cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost) != cudaSuccess))
        MPI_Abort(MPI_COMM_WORLD, 3);
}

static long colls(void)
{
#ifdef TEST_STANDIN
    return tuna_standin_nccl_colls();
#else
    return 0;
#endif
}

/* NCCL's own was called (`calls` times since `before`) as the mode says. */
static void check_path(const char *coll, size_t n, long before, long calls)
{
#ifdef TEST_STANDIN
    const long got = colls() - before;
    if (got != calls && !any_path)
        fail(coll, calls ? "NCCL's own collective was not called" : "NCCL's own collective ran "
                                                                    "instead of tuna's row", n);
#else
    (void)coll, (void)n, (void)before, (void)calls;
#endif
}

static void allgather_case(size_t n, bool in_place)
{
    const size_t b = n * sizeof(int32_t), all = b * (size_t)P + 64;
    int32_t *send = malloc(b + 1);
    unsigned char *ref = malloc(all), *got = malloc(all);
    for (size_t i = 0; i < n; i++)
        send[i] = (int32_t)(i * 31 + (size_t)me * 1000003u);
    memset(ref, SENTINEL, all);
    MPI_Allgather(send, (int)b, MPI_BYTE, ref, (int)b, MPI_BYTE, MPI_COMM_WORLD);
    memset(got, SENTINEL, all);
    if (in_place)
        memcpy(got + (size_t)me * b, send, b);
    unsigned char *d_r = to_device(got, all);
    void *d_s = in_place ? (void *)(d_r + (size_t)me * b) : to_device(send, b);
    const long before = colls();
    ncclResult_t rc = ncclAllGather(d_s, d_r, n, ncclInt32, comm, stream);
    from_device(got, d_r, all);
    if (rc != ncclSuccess)
        fail("ncclAllGather", ncclGetErrorString(rc), n);
    else if (memcmp(got, ref, all))
        fail("ncclAllGather", in_place ? "received bytes differ (in place)"
                                       : "received bytes differ", n);
    check_path("ncclAllGather", n, before, !want_tuna);
    if (!in_place)
        cudaFree(d_s);
    cudaFree(d_r);
    free(send);
    free(ref);
    free(got);
}

static void allreduce_case(size_t n, bool in_place, ncclRedOp_t op, MPI_Op mop)
{
    const size_t b = n * sizeof(int64_t), all = b + 64;
    int64_t *send = malloc(b + 1);
    unsigned char *ref = malloc(all), *got = malloc(all);
    for (size_t i = 0; i < n; i++)
        send[i] = (int64_t)((i * 7919u + (size_t)me * 104729u) % 100003u) - 50000;
    memset(ref, SENTINEL, all);
    MPI_Allreduce(send, ref, (int)n, MPI_INT64_T, mop, MPI_COMM_WORLD);
    memset(got, SENTINEL, all);
    if (in_place)
        memcpy(got, send, b);
    unsigned char *d_r = to_device(got, all);
    void *d_s = in_place ? (void *)d_r : to_device(send, b);
    const long before = colls();
    ncclResult_t rc = ncclAllReduce(d_s, d_r, n, ncclInt64, op, comm, stream);
    from_device(got, d_r, all);
    if (rc != ncclSuccess)
        fail("ncclAllReduce", ncclGetErrorString(rc), n);
    else if (memcmp(got, ref, all))
        fail("ncclAllReduce", "received bytes differ", n);
    check_path("ncclAllReduce", n, before, !want_tuna);
    if (!in_place)
        cudaFree(d_s);
    cudaFree(d_r);
    free(send);
    free(ref);
    free(got);
}

static void alltoall_case(size_t n)
{
    const size_t b = n * sizeof(int32_t) * (size_t)P, all = b + 64;
    int32_t *send = malloc(b + 1);
    unsigned char *ref = malloc(all), *got = malloc(all);
    for (size_t i = 0; i < n * (size_t)P; i++)
        send[i] = (int32_t)(i * 131 + (size_t)me * 7000001u);
    memset(ref, SENTINEL, all);
    MPI_Alltoall(send, (int)(n * sizeof(int32_t)), MPI_BYTE, ref, (int)(n * sizeof(int32_t)),
                 MPI_BYTE, MPI_COMM_WORLD);
    memset(got, SENTINEL, all);
    unsigned char *d_r = to_device(got, all);
    void *d_s = to_device(send, b);
    const long before = colls();
    ncclResult_t rc = ncclAlltoAll(d_s, d_r, n, ncclInt32, comm, stream);
    from_device(got, d_r, all);
    if (rc != ncclSuccess)
        fail("ncclAlltoAll", ncclGetErrorString(rc), n);
    else if (memcmp(got, ref, all))
        fail("ncclAlltoAll", "received bytes differ", n);
    check_path("ncclAlltoAll", n, before, !want_tuna);
    cudaFree(d_s);
    cudaFree(d_r);
    free(send);
    free(ref);
    free(got);
}

/* ncclAvg: tuna has no such reduction; the call is NCCL's, with NCCL's answer. */
static void handed_on_case(void)
{
    const size_t n = 5, b = n * sizeof(float);
    float h[5] = {1, 2, 3, 4, 5};
    float *d_s = to_device(h, b), *d_r = to_device(h, b), *d_r2 = to_device(h, b);
    long before = colls();
    ncclResult_t got = ncclAllReduce(d_s, d_r, n, ncclFloat32, ncclAvg, comm, stream);
    check_path("ncclAllReduce (ncclAvg)", n, before, 1);
    ncclResult_t want = pncclAllReduce(d_s, d_r2, n, ncclFloat32, ncclAvg, comm, stream);
    if (got != want)
        fail("ncclAllReduce (ncclAvg)", "not NCCL's own answer", n);
    float r1[5], r2[5];
    from_device(r1, d_r, b);
    from_device(r2, d_r2, b);
    if (want == ncclSuccess && memcmp(r1, r2, b))
        fail("ncclAllReduce (ncclAvg)", "not NCCL's own result", n);
    cudaFree(d_s);
    cudaFree(d_r);
    cudaFree(d_r2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 2 || (strcmp(argv[1], "tuna") && strcmp(argv[1], "vendor") &&
                     strcmp(argv[1], "auto"))) {
        fprintf(stderr, "usage: test_nccl_dropin tuna|vendor|auto\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    want_tuna = !strcmp(argv[1], "tuna");
    any_path = !strcmp(argv[1], "auto");
#ifndef TEST_STANDIN
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < P) {
        if (me == 0)
            printf("test_nccl_dropin: %d CUDA device(s) for %d ranks (NCCL takes one rank per "
                   "GPU): skipped\n", ndev, P);
        MPI_Finalize();
        return 77;
    }
    cudaSetDevice(me);
#endif
    ncclUniqueId id;
    if (me == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&comm, P, id, me) != ncclSuccess ||
        cudaStreamCreate(&stream) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const size_t sizes[] = {0, 1, 3, 64, 1000};
    int cases = 0;
    /* auto: enough calls of each size class to learn (every candidate twice) and settle */
    for (int rep = 0; rep < (any_path ? 12 : 1); rep++)
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (int in_place = 0; in_place <= 1; in_place++) {
            allgather_case(sizes[i], in_place);
            allreduce_case(sizes[i], in_place, ncclSum, MPI_SUM);
            allreduce_case(sizes[i], in_place, ncclMax, MPI_MAX);
            cases += 3;
        }
        alltoall_case(sizes[i]);
        cases++;
    }
    handed_on_case();
    cases++;
    ncclCommDestroy(comm);
    cudaStreamDestroy(stream);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* on stderr: after this rank's TUNA_VERBOSE lines, in order (nccl_dropin_refused_p2) */
    if (me == 0)
        fprintf(stderr, "test_nccl_dropin (%s): P = %d, %d cases, %d failures\n", argv[1], P,
                cases, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
