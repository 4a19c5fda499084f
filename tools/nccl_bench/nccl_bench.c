/*
 * tuna-nccl-bench: the NCCL path's rows (docs/nccl.md) against the reference on GPUs, one MPI
 * rank per GPU (MPI only starts the ranks and shares NCCL's id):
 *
 *   mpiexec -n 8 tuna-nccl-bench -c alltoallv -s 16,256,1K,4K [-d random] [-a tuna:radix=4]...
 *
 * The reference is NCCL's own call (`vendor`) for alltoall, allgather and allreduce and, as
 * NCCL has no alltoallv, `linear` (every send and receive in one group: the grouped
 * send/recv applications write) for alltoallv. Sizes are bytes: per peer (alltoall(v): with
 * -d random each pair's block is uniform in [0, 2s], the same draw on both sides), per rank
 * (allgather), the vector (allreduce, int32 sum). Each row's time: CUDA events around -n
 * calls on the rank's stream after -w warm-up calls and a barrier, the slowest rank's mean.
 * --check compares every row's result with the reference's byte for byte (exit status 1 on a
 * difference). -o FILE appends a JSON line per row and size. Built where the NCCL path is
 * (TUNA_NCCL); the tests run it on the host stand-in (ctest nccl_bench_standin_p3).
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna_nccl.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 32
#define MAX_SIZES 64

static int P, me;
static tuna_collective coll = TUNA_ALLTOALLV;
static bool random_blocks, check;
static int iters = 20, warmup = 3;
static ncclComm_t comm;
static cudaStream_t stream;

static void die(const char *msg)
{
    if (me == 0)
        fprintf(stderr, "tuna-nccl-bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "tuna-nccl-bench: rank %d: %s: %s\n", me, what, cudaGetErrorString(e));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* "16", "4K", "1M": bytes. */
static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        die("sizes: a number, with K, M or G");
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    else if (*end == 'G' || *end == 'g')
        v <<= 30;
    return (size_t)v;
}

/* The block rank i sends to rank j for size s (random: a hash of i, j, s in [0, 2s]). */
static size_t block(int i, int j, size_t s)
{
    if (!random_blocks)
        return s;
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)j + 1) * 0xC2B2AE3D27D4EB4Full ^ s;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (size_t)(h % (2 * (uint64_t)s + 1));
}

typedef struct buffers {
    size_t sbytes, rbytes;
    size_t *sc, *sd, *rc, *rd; /* alltoallv, in bytes (ncclUint8) */
    void *send, *recv;
} buffers;

static void buffers_make(buffers *b, size_t s)
{
    memset(b, 0, sizeof *b);
    size_t *a = calloc(4 * (size_t)P, sizeof *a);
    if (!a)
        die("no memory");
    b->sc = a, b->sd = a + P, b->rc = a + 2 * P, b->rd = a + 3 * P;
    for (int j = 0; j < P; j++) {
        b->sc[j] = coll == TUNA_ALLTOALLV ? block(me, j, s) : s;
        b->rc[j] = coll == TUNA_ALLTOALLV ? block(j, me, s) : s;
        b->sd[j] = b->sbytes;
        b->rd[j] = b->rbytes;
        b->sbytes += b->sc[j];
        b->rbytes += b->rc[j];
    }
    if (coll == TUNA_ALLGATHER)
        b->sbytes = s, b->rbytes = s * (size_t)P;
    else if (coll == TUNA_ALLREDUCE)
        b->sbytes = b->rbytes = s / 4 * 4;
    unsigned char *h = malloc(b->sbytes + 1);
    if (!h)
        die("no memory");
    for (size_t k = 0; k < b->sbytes; k++)
        h[k] = (unsigned char)(k * 131 + (size_t)me * 7 + 1);
    cuda_ok(cudaMalloc(&b->send, b->sbytes + 1), "cudaMalloc");
    cuda_ok(cudaMalloc(&b->recv, b->rbytes + 1), "cudaMalloc");
    cuda_ok(cudaMemcpy(b->send, h, b->sbytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_ok(cudaMemset(b->recv, 0, b->rbytes + 1), "cudaMemset");
    free(h);
}

static void buffers_free(buffers *b)
{
    cudaFree(b->send);
    cudaFree(b->recv);
    free(b->sc);
}

static int call(const buffers *b, const tuna_options *opt)
{
    switch (coll) {
    case TUNA_ALLTOALLV:
        return tuna_nccl_alltoallv(b->send, b->sc, b->sd, b->recv, b->rc, b->rd, ncclUint8, comm,
                                   stream, opt);
    case TUNA_ALLTOALL:
        return tuna_nccl_alltoall(b->send, b->recv, b->sc[0], ncclUint8, comm, stream, opt);
    case TUNA_ALLGATHER:
        return tuna_nccl_allgather(b->send, b->recv, b->sbytes, ncclUint8, comm, stream, opt);
    default:
        return tuna_nccl_allreduce(b->send, b->recv, b->sbytes / 4, ncclInt32, ncclSum, comm,
                                   stream, opt);
    }
}

/* The slowest rank's mean seconds per call; negative where the row failed on some rank. */
static double time_row(const buffers *b, const tuna_options *opt, unsigned char *result)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < warmup && rc == MPI_SUCCESS; i++)
        rc = call(b, opt);
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (result && rc == MPI_SUCCESS) { /* the first calls' result, for --check */
        cuda_ok(cudaMemset(b->recv, 0, b->rbytes + 1), "cudaMemset");
        rc = call(b, opt);
        cuda_ok(cudaMemcpy(result, b->recv, b->rbytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    }
    cudaEvent_t t0, t1;
    cuda_ok(cudaEventCreateWithFlags(&t0, cudaEventDefault), "cudaEventCreate");
    cuda_ok(cudaEventCreateWithFlags(&t1, cudaEventDefault), "cudaEventCreate");
    MPI_Barrier(MPI_COMM_WORLD);
    cuda_ok(cudaEventRecord(t0, stream), "cudaEventRecord");
    for (int i = 0; i < iters && rc == MPI_SUCCESS; i++)
        rc = call(b, opt);
    cuda_ok(cudaEventRecord(t1, stream), "cudaEventRecord");
    cuda_ok(cudaEventSynchronize(t1), "cudaEventSynchronize");
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "tuna-nccl-bench: rank %d: %s\n", me, tuna_error_string(rc));
    double t = rc == MPI_SUCCESS ? (double)ms * 1e-3 / iters : -1, worst = 0, least = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&t, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return least < 0 ? -1 : worst;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *rows[MAX_ROWS], *out = NULL, *sizes_arg = "16,256,1K,4K,64K,1M";
    int nrows = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) {
            check = true;
            continue;
        }
        if (!v)
            die("usage: tuna-nccl-bench [-c COLLECTIVE] [-a ROW]... [-s SIZES] [-d uniform|random] "
                "[-n ITERS] [-w WARMUP] [--check] [-o FILE]");
        i++;
        if (!strcmp(a, "-c"))
            coll = !strcmp(v, "alltoallv") ? TUNA_ALLTOALLV : !strcmp(v, "alltoall") ? TUNA_ALLTOALL
                 : !strcmp(v, "allgather") ? TUNA_ALLGATHER : !strcmp(v, "allreduce") ? TUNA_ALLREDUCE
                 : (die("-c: alltoallv, alltoall, allgather or allreduce"), TUNA_ALLTOALLV);
        else if (!strcmp(a, "-a") && nrows < MAX_ROWS)
            rows[nrows++] = v;
        else if (!strcmp(a, "-s"))
            sizes_arg = v;
        else if (!strcmp(a, "-d"))
            random_blocks = !strcmp(v, "random");
        else if (!strcmp(a, "-n"))
            iters = atoi(v) > 0 ? atoi(v) : 1;
        else if (!strcmp(a, "-w"))
            warmup = atoi(v) >= 0 ? atoi(v) : 0;
        else if (!strcmp(a, "-o"))
            out = v;
        else
            die("unknown option (tuna-nccl-bench -h: see the source's header)");
    }
    const char *ref = coll == TUNA_ALLTOALLV ? "linear" : "vendor";
    if (nrows == 0) {
        static const char *a2av[] = {"pairwise", "tuna:radix=2", "tuna:radix=4", "tuna:radix=8",
                                     "coalesced"};
        static const char *ag[] = {"ring", "kring:k=2", "kring:k=4", "recmul:k=2", "recmul:k=4",
                                   "recmul-permuted:k=4"};
        const bool a2a = coll == TUNA_ALLTOALLV || coll == TUNA_ALLTOALL;
        const int n = a2a ? 5 : 6;
        if (coll == TUNA_ALLTOALL)
            rows[nrows++] = "linear";
        for (int i = 0; i < n; i++)
            rows[nrows++] = a2a ? a2av[i] : ag[i];
    }
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    char *list = strdup(sizes_arg);
    for (char *t = strtok(list, ","); t && nsizes < MAX_SIZES; t = strtok(NULL, ","))
        sizes[nsizes++] = parse_size(t);
    free(list);

    /* One GPU per rank of a node (NCCL takes no two ranks on one GPU). */
    MPI_Comm node;
    int local, nlocal, ndev = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &nlocal);
    MPI_Comm_free(&node);
    cuda_ok(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    if (ndev < nlocal)
        die("fewer GPUs than ranks on a node (NCCL takes one rank per GPU)");
    cuda_ok(cudaSetDevice(local), "cudaSetDevice");
    ncclUniqueId id;
    if (me == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        die("ncclGetUniqueId failed");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&comm, P, id, me) != ncclSuccess)
        die("ncclCommInitRank failed");
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");

    static const char *names[] = {"alltoallv", "alltoall", "allgather", "allreduce"};
    const char *cname = names[coll == TUNA_ALLTOALLV ? 0 : coll == TUNA_ALLTOALL ? 1
                              : coll == TUNA_ALLGATHER ? 2 : 3];
    FILE *json = out && me == 0 ? fopen(out, "a") : NULL;
    if (out && me == 0 && !json)
        die("cannot open the -o file");
    if (me == 0)
        printf("# tuna-nccl-bench %s, P = %d, %s blocks, %d calls after %d warm-up; reference: "
               "%s\n%-10s %-24s %12s %10s\n", cname, P, random_blocks ? "random" : "uniform",
               iters, warmup, ref, "bytes", "algorithm", "us/call", "ref/row");
    int bad = 0;
    for (int si = 0; si < nsizes; si++) {
        buffers b;
        buffers_make(&b, sizes[si]);
        unsigned char *want = check ? malloc(b.rbytes + 1) : NULL,
                      *got = check ? malloc(b.rbytes + 1) : NULL;
        tuna_options opt;
        if (tuna_options_parse(ref, coll, &opt) != MPI_SUCCESS)
            die("the reference row does not parse");
        const double tref = time_row(&b, &opt, want);
        for (int r = -1; r < nrows; r++) {
            const char *name = r < 0 ? ref : rows[r];
            double t = tref;
            if (r >= 0) {
                const int prc = tuna_options_parse(name, coll, &opt);
                if (prc != MPI_SUCCESS) {
                    if (me == 0)
                        fprintf(stderr, "tuna-nccl-bench: %s\n", tuna_error_string(prc));
                    continue;
                }
                t = time_row(&b, &opt, got);
                int differ = check && t >= 0 && memcmp(want, got, b.rbytes) != 0, any = 0;
                MPI_Allreduce(&differ, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                if (any && me == 0)
                    fprintf(stderr, "tuna-nccl-bench: %s at %zu bytes: the result differs from "
                                    "%s's\n", name, sizes[si], ref);
                bad |= any;
            }
            if (me != 0)
                continue;
            if (t < 0)
                printf("%-10zu %-24s %12s %10s\n", sizes[si], name, "failed", "-");
            else
                printf("%-10zu %-24s %12.2f %10.2f\n", sizes[si], name, t * 1e6,
                       t > 0 ? tref / t : 1.0);
            if (json && t >= 0)
                fprintf(json, "{\"tool\":\"tuna-nccl-bench\",\"collective\":\"%s\",\"P\":%d,"
                              "\"blocks\":\"%s\",\"bytes\":%zu,\"algorithm\":\"%s\","
                              "\"reference\":\"%s\",\"seconds\":%.9g,\"reference_seconds\":%.9g}\n",
                        cname, P, random_blocks ? "random" : "uniform", sizes[si], name, ref, t,
                        tref);
        }
        free(want);
        free(got);
        buffers_free(&b);
    }
    if (json)
        fclose(json);
    ncclCommDestroy(comm);
    cudaStreamDestroy(stream);
    MPI_Finalize();
    return bad ? 1 : 0;
}
