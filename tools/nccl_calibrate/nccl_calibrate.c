/*
 * tuna-nccl-calibrate: measures the cost model's machine profile (docs/model.md) for the
 * NCCL path on GPUs and writes it as JSON for TUNA_PROFILE (tuna-model; docs/nccl.md,
 * "Calibrating a GPU profile"). One MPI rank per GPU; MPI starts the ranks, shares NCCL's id
 * and finds the nodes (TUNA_RANKS_PER_NODE=Q makes logical nodes of Q ranks).
 *
 *   mpiexec -n 8 --ppn 4 tuna-nccl-calibrate -o profile.json [-b BYTES] [-n ITERS] [--nics K]
 *
 * Per level, between rank 0 and the first other rank on its node (intra) and on another
 * node (inter), timed with CUDA events on rank 0's stream, the median of -n runs:
 *   latency   half the round trip of 1 byte, each way one NCCL group: a group's fixed cost
 *             (kernel launch and the first message's way), as the model prices a phase;
 *   overhead  the cost of one more operation in a group: (64 sends in one group - 1) / 63;
 *   bandwidth -b bytes (default 64 MiB) one way, after the latency (where -b is too small to
 *             show past it: bytes over the whole way, a lower bound).
 * copy_bandwidth: cudaMemcpyAsync device to device of -b bytes. Not measured, and said so
 * in "measured": the NICs per node (--nics, default 1), the gap (0), the eager limit (none
 * in a group: 1 GiB). A level with no pair keeps the model's built-in values.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <jansson.h>
#include <mpi.h>
#include <nccl.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPS 64 /* operations in the group that prices one more */

static int P, me, iters = 20;
static size_t big = 64u << 20;
static ncclComm_t comm;
static cudaStream_t stream;
static char *dbuf; /* big + OPS bytes of device memory */

static void die(const char *msg)
{
    fprintf(stderr, "tuna-nccl-calibrate: rank %d: %s\n", me, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        die(what);
}

static void nccl_ok(ncclResult_t r, const char *what)
{
    if (r != ncclSuccess)
        die(what);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One group of `n` operations of `bytes` each to or from `peer`. */
static void group(bool send, int n, size_t bytes, int peer)
{
    nccl_ok(ncclGroupStart(), "ncclGroupStart");
    for (int i = 0; i < n; i++)
        nccl_ok(send ? ncclSend(dbuf + i, bytes, ncclUint8, peer, comm, stream)
                     : ncclRecv(dbuf + i, bytes, ncclUint8, peer, comm, stream),
                send ? "ncclSend" : "ncclRecv");
    nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
}

/* The median seconds of a round trip between rank 0 and `peer`: `n` operations of `bytes`
 * there in one group, then one of 1 byte back. Ranks other than the two do nothing. */
static double round_trip(int peer, int n, size_t bytes)
{
    double *t = malloc((size_t)iters * sizeof *t), m = 0;
    cudaEvent_t e0, e1;
    cuda_ok(cudaEventCreateWithFlags(&e0, cudaEventDefault), "cudaEventCreate");
    cuda_ok(cudaEventCreateWithFlags(&e1, cudaEventDefault), "cudaEventCreate");
    for (int i = -2; i < iters; i++) { /* two warm-up trips */
        if (me == 0) {
            cuda_ok(cudaEventRecord(e0, stream), "cudaEventRecord");
            group(true, n, bytes, peer);
            group(false, 1, 1, peer);
            cuda_ok(cudaEventRecord(e1, stream), "cudaEventRecord");
            cuda_ok(cudaEventSynchronize(e1), "cudaEventSynchronize");
            float ms = 0;
            cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
            if (i >= 0)
                t[i] = (double)ms * 1e-3;
        } else if (me == peer) {
            group(false, n, bytes, 0);
            group(true, 1, 1, 0);
            cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        }
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (me == 0) {
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        m = t[iters / 2];
    }
    free(t);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

typedef struct level {
    bool measured;
    int peer;
    double latency, overhead, bandwidth;
} level;

static level measure(int peer)
{
    level l = {.peer = peer};
    if (peer < 0)
        return l;
    const double one = round_trip(peer, 1, 1), many = round_trip(peer, OPS, 1),
                 large = round_trip(peer, 1, big);
    l.measured = true;
    l.latency = one / 2;
    l.overhead = many > one ? (many - one) / (OPS - 1) : 0;
    double t = large - one / 2 - l.latency; /* the large way, less its fixed cost */
    if (t <= 0) /* -b too small to see past the fixed cost: the whole way (a lower bound) */
        t = large > one / 2 ? large - one / 2 : large;
    l.bandwidth = (double)big / t;
    return l;
}

static double copy_bandwidth(void)
{
    char *dst;
    cuda_ok(cudaMalloc((void **)&dst, big), "cudaMalloc");
    cudaEvent_t e0, e1;
    cuda_ok(cudaEventCreateWithFlags(&e0, cudaEventDefault), "cudaEventCreate");
    cuda_ok(cudaEventCreateWithFlags(&e1, cudaEventDefault), "cudaEventCreate");
    double best = 0;
    for (int i = 0; i < iters; i++) {
        cuda_ok(cudaEventRecord(e0, stream), "cudaEventRecord");
        cuda_ok(cudaMemcpyAsync(dst, dbuf, big, cudaMemcpyDeviceToDevice, stream), "cudaMemcpy");
        cuda_ok(cudaEventRecord(e1, stream), "cudaEventRecord");
        cuda_ok(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float ms = 0;
        cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        if (ms > 0 && (double)big / ((double)ms * 1e-3) > best)
            best = (double)big / ((double)ms * 1e-3);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(dst);
    return best;
}

static json_t *level_json(const level *l)
{
    return json_pack("{s:f, s:f, s:f, s:f}", "latency", l->latency, "overhead", l->overhead,
                     "gap", 0.0, "bandwidth", l->bandwidth);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *out = NULL;
    int nics = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            die("usage: tuna-nccl-calibrate -o FILE [-b BYTES] [-n ITERS] [--nics K]");
        if (!strcmp(argv[i], "-o"))
            out = v;
        else if (!strcmp(argv[i], "-b"))
            big = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(argv[i], "-n"))
            iters = atoi(v);
        else if (!strcmp(argv[i], "--nics"))
            nics = atoi(v);
        else
            die("unknown option (see the source's header)");
        i++;
    }
    if (!out || big < 2 || iters < 1 || nics < 1)
        die("usage: tuna-nccl-calibrate -o FILE [-b BYTES >= 2] [-n ITERS >= 1] [--nics K >= 1]");

    /* Nodes: shared memory, or TUNA_RANKS_PER_NODE ranks in a row (logical nodes). */
    const char *q = getenv("TUNA_RANKS_PER_NODE");
    int node_of_me, local;
    MPI_Comm node;
    if (q && atoi(q) > 0) {
        node_of_me = me / atoi(q);
        MPI_Comm_split(MPI_COMM_WORLD, node_of_me, me, &node);
    } else {
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        int leader = me;
        MPI_Bcast(&leader, 1, MPI_INT, 0, node);
        node_of_me = leader;
    }
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    int *nodes = malloc((size_t)P * sizeof *nodes), ndev = 0;
    MPI_Allgather(&node_of_me, 1, MPI_INT, nodes, 1, MPI_INT, MPI_COMM_WORLD);
    int intra = -1, inter = -1, per_node = 0;
    for (int r = 0; r < P; r++) {
        per_node += nodes[r] == nodes[0];
        if (r && nodes[r] == nodes[0] && intra < 0)
            intra = r;
        if (nodes[r] != nodes[0] && inter < 0)
            inter = r;
    }
    free(nodes);
    cuda_ok(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    if (ndev <= local)
        die("fewer GPUs than ranks on a node (NCCL takes one rank per GPU)");
    cuda_ok(cudaSetDevice(local), "cudaSetDevice");
    ncclUniqueId id;
    if (me == 0)
        nccl_ok(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    nccl_ok(ncclCommInitRank(&comm, P, id, me), "ncclCommInitRank");
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    cuda_ok(cudaMalloc((void **)&dbuf, big + OPS), "cudaMalloc");
    cuda_ok(cudaMemset(dbuf, 1, big + OPS), "cudaMemset");

    const level in = measure(intra), across = measure(inter);
    const double copy = copy_bandwidth();
    int rc = 0;
    if (me == 0) {
        char note[512];
        snprintf(note, sizeof note, "tuna-nccl-calibrate, %d ranks (one per GPU), %d on node 0; "
                 "intra: rank 0 and %d%s; inter: rank 0 and %d%s; median of %d; bandwidth of "
                 "%zu bytes; not measured: nics_per_node (--nics), gap, eager_limit (a group "
                 "has no handshake)", P, per_node, intra, in.measured ? "" : " (none: built-in)",
                 inter, across.measured ? "" : " (none: built-in)", iters, big);
        json_t *j = json_pack("{s:i, s:s, s:i, s:f, s:f, s:f, s:i, s:{s:i, s:s}}",
                              "tuna_profile", 1, "name", "nccl-calibrated", "nics_per_node", nics,
                              "copy_bandwidth", copy, "datatype_overhead", 0.0,
                              "datatype_block", 0.0, "eager_limit", 1 << 30, "measured",
                              "ranks_per_node", per_node, "note", note);
        if (in.measured)
            json_object_set_new(j, "intra", level_json(&in));
        if (across.measured)
            json_object_set_new(j, "inter", level_json(&across));
        if (!j || json_dump_file(j, out, JSON_INDENT(1)) != 0) {
            fprintf(stderr, "tuna-nccl-calibrate: cannot write %s\n", out);
            rc = 1;
        } else {
            printf("tuna-nccl-calibrate: %s: intra %s, inter %s, copy %.3g B/s\n", out,
                   in.measured ? "measured" : "built-in", across.measured ? "measured" : "built-in",
                   copy);
        }
        json_decref(j);
    }
    cudaFree(dbuf);
    ncclCommDestroy(comm);
    cudaStreamDestroy(stream);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
