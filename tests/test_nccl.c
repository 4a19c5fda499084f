/*
 * The NCCL path (include/tuna_nccl.h, docs/nccl.md) on the host stand-in for NCCL and the
 * CUDA runtime (tests/support/nccl_standin.c): every NCCL row against MPI's own call on the
 * same inputs, byte for byte over the whole receive buffer (sentinel-filled, gaps between
 * blocks included); the transport's grouping and splitting (the stand-in counts groups and
 * their operations, and refuses a group over its limit); the API's argument checks.
 * Runs under mpiexec at any P. Built twice: on the stand-in (TEST_STANDIN: also the grouping
 * tests, which read the stand-in's counters) and on NCCL and CUDA (the gpu label, one rank per
 * GPU; exit 77, skipped, where there are too few).
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna_nccl.h"

#include "support/test_data.h"
#include "support/test_expect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef TEST_STANDIN
/* The stand-in's counters (tests/support/nccl_standin.c). */
void tuna_standin_nccl_stats(long *groups, long *max_ops, long *ops);
#endif

#define SENTINEL 0xA5

static ncclComm_t comm;
static cudaStream_t stream;

/* Device copies of host buffers (the stand-in's device memory is host memory): `run` copies
 * the send and receive buffers in, calls, waits for the stream and copies the receive buffer
 * back, so the same cases run on a GPU (gpu label, P = 1). */
static void *dev_in(const void *h, size_t n)
{
    void *d;
    if (cudaMalloc(&d, n ? n : 1) != cudaSuccess ||
        (n && cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) != cudaSuccess))
        MPI_Abort(MPI_COMM_WORLD, 3);
    return d;
}

static int dev_out(int rc, void *h, void *d, size_t n, void *d2)
{
    if (rc == MPI_SUCCESS && cudaStreamSynchronize(stream) != cudaSuccess)
        rc = MPI_ERR_OTHER;
    if (n && cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost) != cudaSuccess)
        rc = MPI_ERR_OTHER;
    cudaFree(d);
    cudaFree(d2);
    return rc;
}

static size_t esize(ncclDataType_t t)
{
    return t == ncclInt8 ? 1 : t == ncclInt32 ? 4 : 8;
}

static int parse(const char *s, tuna_collective c, tuna_options *o)
{
    return s ? tuna_options_parse(s, c, o) : MPI_SUCCESS;
}

/* Count of the block i -> j under pattern pat (every rank computes any pair's). */
static size_t a2av_count(int pat, int i, int j, int seed)
{
    switch (pat) {
    case 0: return 3;                                             /* uniform */
    case 1: return (size_t)(unif((uint64_t)seed, (uint64_t)i, (uint64_t)j) * 40.0); /* 0..39 */
    case 2: return 0;                                             /* nothing */
    default: return (i + j) % 3 == 0 ? 5000 : (size_t)(i == j);  /* a few large, many 0 */
    }
}

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t x = 0; x < n; x++)
        b[x] = (unsigned char)(mix((uint64_t)seed * 131 + x) & 0xff);
}

/* One alltoallv case: the tuna_nccl call against MPI_Alltoallv (bytes), gaps of 1 element. */
static void alltoallv_case(const char *alg, int pat, ncclDataType_t type, int seed)
{
    const size_t es = esize(type);
    size_t *sc = malloc(4 * (size_t)P * sizeof *sc), *sd = sc + P, *rc_ = sc + 2 * P,
           *rd = sc + 3 * P;
    int *isc = malloc(4 * (size_t)P * sizeof *isc), *isd = isc + P, *irc = isc + 2 * P,
        *ird = isc + 3 * P;
    size_t stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = a2av_count(pat, me, j, seed);
        sd[j] = stot + 1; /* a gap of one element before each block */
        stot += sc[j] + 1;
        rc_[j] = a2av_count(pat, j, me, seed);
        rd[j] = rtot + 1;
        rtot += rc_[j] + 1;
        isc[j] = (int)(sc[j] * es);
        isd[j] = (int)(sd[j] * es);
        irc[j] = (int)(rc_[j] * es);
        ird[j] = (int)(rd[j] * es);
    }
    unsigned char *sbuf = malloc(stot * es + 1), *got = malloc(rtot * es + 1),
                  *want = malloc(rtot * es + 1);
    fill(sbuf, stot * es, seed + me);
    memset(got, SENTINEL, rtot * es + 1);
    memset(want, SENTINEL, rtot * es + 1);
    tuna_options o;
    int rc = parse(alg, TUNA_ALLTOALLV, &o);
    if (rc == MPI_SUCCESS) {
        char *ds = dev_in(sbuf, stot * es + 1), *dr = dev_in(got, rtot * es + 1);
        rc = tuna_nccl_alltoallv(ds, sc, sd, dr, rc_, rd, type, comm, stream, alg ? &o : NULL);
        rc = dev_out(rc, got, dr, rtot * es + 1, ds);
    }
    MPI_Alltoallv(sbuf, isc, isd, MPI_BYTE, want, irc, ird, MPI_BYTE, MPI_COMM_WORLD);
    char what[96];
    snprintf(what, sizeof what, "alltoallv pattern %d type %d", pat, (int)type);
    expect(rc == MPI_SUCCESS && memcmp(got, want, rtot * es + 1) == 0, what, alg ? alg : "default",
           rc);
    free(sbuf);
    free(got);
    free(want);
    free(sc);
    free(isc);
}

static void alltoall_case(const char *alg, size_t count, ncclDataType_t type)
{
    const size_t es = esize(type), n = count * es * (size_t)P;
    unsigned char *sbuf = malloc(n + 1), *got = malloc(n + 1), *want = malloc(n + 1);
    fill(sbuf, n, 7 + me);
    memset(got, SENTINEL, n + 1);
    memset(want, SENTINEL, n + 1);
    tuna_options o;
    int rc = parse(alg, TUNA_ALLTOALL, &o);
    if (rc == MPI_SUCCESS) {
        char *ds = dev_in(sbuf, n + 1), *dr = dev_in(got, n + 1);
        rc = tuna_nccl_alltoall(ds, dr, count, type, comm, stream, alg ? &o : NULL);
        rc = dev_out(rc, got, dr, n + 1, ds);
    }
    MPI_Alltoall(sbuf, (int)(count * es), MPI_BYTE, want, (int)(count * es), MPI_BYTE,
                 MPI_COMM_WORLD);
    char what[96];
    snprintf(what, sizeof what, "alltoall count %zu type %d", count, (int)type);
    expect(rc == MPI_SUCCESS && memcmp(got, want, n + 1) == 0, what, alg ? alg : "default", rc);
    free(sbuf);
    free(got);
    free(want);
}

static void allgather_case(const char *alg, size_t count, ncclDataType_t type, int in_place)
{
    const size_t es = esize(type), B = count * es, n = B * (size_t)P;
    unsigned char *sbuf = malloc(B + 1), *got = malloc(n + 1), *want = malloc(n + 1);
    fill(sbuf, B, 11 + me);
    memset(got, SENTINEL, n + 1);
    memset(want, SENTINEL, n + 1);
    if (in_place)
        memcpy(got + (size_t)me * B, sbuf, B);
    tuna_options o;
    int rc = parse(alg, TUNA_ALLGATHER, &o);
    if (rc == MPI_SUCCESS) {
        char *ds = dev_in(sbuf, B + 1), *dr = dev_in(got, n + 1);
        rc = tuna_nccl_allgather(in_place ? dr + (size_t)me * B : ds, dr, count, type, comm,
                                 stream, alg ? &o : NULL);
        rc = dev_out(rc, got, dr, n + 1, ds);
    }
    MPI_Allgather(sbuf, (int)B, MPI_BYTE, want, (int)B, MPI_BYTE, MPI_COMM_WORLD);
    char what[96];
    snprintf(what, sizeof what, "allgather count %zu type %d%s", count, (int)type,
             in_place ? " in place" : "");
    expect(rc == MPI_SUCCESS && memcmp(got, want, n + 1) == 0, what, alg ? alg : "default", rc);
    free(sbuf);
    free(got);
    free(want);
}

/* Element x of rank r's vector: small integers (-3..3), so sums and products of up to 8 of
 * them are exact in every type and the order of the reduction does not matter. */
static void fill_values(void *b, size_t n, ncclDataType_t t, int r)
{
    for (size_t x = 0; x < n; x++) {
        int v = (int)(mix((uint64_t)r * 7919 + x) % 7) - 3;
        switch (t) {
        case ncclInt8: ((int8_t *)b)[x] = (int8_t)v; break;
        case ncclInt32: ((int32_t *)b)[x] = v; break;
        case ncclUint64: ((uint64_t *)b)[x] = (uint64_t)(v + 3); break;
        case ncclFloat32: ((float *)b)[x] = (float)v; break;
        default: ((double *)b)[x] = v; break;
        }
    }
}

static void allreduce_case(const char *alg, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           int in_place)
{
    const size_t es = type == ncclInt8 ? 1 : type == ncclInt32 || type == ncclFloat32 ? 4 : 8;
    const size_t n = count * es;
    MPI_Datatype mt = type == ncclInt8 ? MPI_INT8_T : type == ncclInt32 ? MPI_INT32_T
                    : type == ncclUint64 ? MPI_UINT64_T : type == ncclFloat32 ? MPI_FLOAT
                    : MPI_DOUBLE;
    MPI_Op mo = op == ncclSum ? MPI_SUM : op == ncclProd ? MPI_PROD : op == ncclMax ? MPI_MAX
              : MPI_MIN;
    unsigned char *sbuf = malloc(n + 1), *got = malloc(n + 1), *want = malloc(n + 1);
    fill_values(sbuf, count, type, me);
    memset(got, SENTINEL, n + 1);
    memset(want, SENTINEL, n + 1);
    if (in_place)
        memcpy(got, sbuf, n);
    tuna_options o;
    int rc = parse(alg, TUNA_ALLREDUCE, &o);
    if (rc == MPI_SUCCESS) {
        char *ds = dev_in(sbuf, n + 1), *dr = dev_in(got, n + 1);
        rc = tuna_nccl_allreduce(in_place ? dr : ds, dr, count, type, op, comm, stream,
                                 alg ? &o : NULL);
        rc = dev_out(rc, got, dr, n + 1, ds);
    }
    MPI_Allreduce(sbuf, want, (int)count, mt, mo, MPI_COMM_WORLD);
    char what[96];
    snprintf(what, sizeof what, "allreduce count %zu type %d op %d%s", count, (int)type, (int)op,
             in_place ? " in place" : "");
    expect(rc == MPI_SUCCESS && memcmp(got, want, n + 1) == 0, what, alg ? alg : "default", rc);
    free(sbuf);
    free(got);
    free(want);
}

#ifdef TEST_STANDIN
/* Groups and their sizes: the stand-in's counters around one call of 4-byte blocks. */
static void grouping_case(const char *alg, tuna_collective c, const char *limit,
                          long want_groups, long want_max)
{
    setenv("TUNA_NCCL_GROUP_LIMIT", limit, 1);
    long g0, m0, o0, g1, m1, o1;
    tuna_standin_nccl_stats(&g0, &m0, &o0);
    size_t *arr = malloc(4 * (size_t)P * sizeof *arr);
    for (int j = 0; j < P; j++) {
        arr[j] = 1;
        arr[P + j] = (size_t)j;
    }
    int32_t *s = malloc((size_t)P * 4), *r = malloc((size_t)P * 4);
    for (int j = 0; j < P; j++)
        s[j] = me * 1000 + j;
    tuna_options o;
    int rc = tuna_options_parse(alg, c, &o);
    if (rc == MPI_SUCCESS)
        rc = c == TUNA_ALLTOALLV
                 ? tuna_nccl_alltoallv(s, arr, arr + P, r, arr, arr + P, ncclInt32, comm, stream, &o)
             : c == TUNA_ALLTOALL ? tuna_nccl_alltoall(s, r, 1, ncclInt32, comm, stream, &o)
                                  : tuna_nccl_allgather(s, r, 1, ncclInt32, comm, stream, &o);
    tuna_standin_nccl_stats(&g1, &m1, &o1);
    /* The stand-in's largest group since the call before: this call's. */
    int ok = rc == MPI_SUCCESS && g1 - g0 == want_groups && (want_max == 0 || m1 <= want_max);
    for (int j = 0; ok && j < P; j++)
        ok = r[j] == (c != TUNA_ALLGATHER ? j * 1000 + me : j * 1000);
    char what[96];
    snprintf(what, sizeof what, "groups at limit %s: %ld (want %ld), largest %ld", limit, g1 - g0,
             want_groups, m1);
    expect(ok, what, alg, rc);
    unsetenv("TUNA_NCCL_GROUP_LIMIT");
    free(arr);
    free(s);
    free(r);
}

/* tuna's limit above the stand-in's: NCCL refuses the group, tuna says so. */
static void group_limit_refused(void)
{
    if (2 * P <= 4)
        return;
    setenv("TUNA_NCCL_GROUP_LIMIT", "2048", 1);
    setenv("STANDIN_NCCL_GROUP_LIMIT", "4", 1);
    size_t *arr = malloc(2 * (size_t)P * sizeof *arr);
    for (int j = 0; j < P; j++) {
        arr[j] = 1;
        arr[P + j] = (size_t)j;
    }
    int32_t *s = calloc((size_t)P, 4), *r = calloc((size_t)P, 4);
    int rc = tuna_nccl_alltoallv(s, arr, arr + P, r, arr, arr + P, ncclInt32, comm, stream, NULL);
    expect(rc == MPI_ERR_OTHER && strstr(tuna_error_string(rc), "ncclGroupEnd"),
           "a group over NCCL's limit is an error", "linear", rc);
    unsetenv("STANDIN_NCCL_GROUP_LIMIT");
    unsetenv("TUNA_NCCL_GROUP_LIMIT");
    free(arr);
    free(s);
    free(r);
}

#endif

static void expect_error(int rc, int want, const char *words, const char *what)
{
    int ok = rc == want && (!words || strstr(tuna_error_string(rc), words));
    if (!ok && rc != MPI_SUCCESS && me == 0)
        fprintf(stderr, "  got: %s\n", tuna_error_string(rc));
    expect(ok, what, "argument check", rc);
}

static void argument_checks(void)
{
    size_t z[2 * 64] = {0};
    size_t *cnt = calloc(2 * (size_t)P, sizeof *cnt);
    char buf[8] = {0};
    tuna_options o;
    expect_error(tuna_nccl_alltoallv(buf, cnt, cnt, buf + 4, cnt, cnt, ncclInt8, NULL, stream,
                                     NULL),
                 MPI_ERR_COMM, "comm is NULL", "NULL comm");
    expect_error(tuna_nccl_alltoallv(buf, cnt, cnt, buf + 4, cnt, cnt, ncclNumTypes, comm, stream,
                                     NULL),
                 MPI_ERR_TYPE, "not an NCCL type", "bad type");
    expect_error(tuna_nccl_alltoallv(buf, NULL, cnt, buf + 4, cnt, cnt, ncclInt8, comm, stream,
                                     NULL),
                 MPI_ERR_ARG, "array is NULL", "NULL counts");
    for (int j = 0; j < P; j++)
        cnt[j] = 1;
    expect_error(tuna_nccl_alltoallv(NULL, cnt, cnt + P, buf, cnt, cnt + P, ncclInt8, comm, stream,
                                     NULL),
                 MPI_ERR_BUFFER, "NULL buffer", "NULL sendbuf");
    expect_error(tuna_nccl_alltoallv(buf, cnt, cnt + P, buf, cnt, cnt + P, ncclInt8, comm, stream,
                                     NULL),
                 MPI_ERR_BUFFER, "no in-place", "sendbuf == recvbuf");
    cnt[0] = SIZE_MAX / 2;
    expect_error(tuna_nccl_alltoallv(buf, cnt, cnt + P, buf + 4, cnt, cnt + P, ncclInt64, comm,
                                     stream, NULL),
                 MPI_ERR_COUNT, "does not fit", "count overflow");
    expect_error(tuna_nccl_alltoall(buf, buf + 4, SIZE_MAX / 2, ncclInt64, comm, stream, NULL),
                 MPI_ERR_COUNT, NULL, "alltoall count overflow");
    tuna_options_parse("twophase-bruck", TUNA_ALLTOALLV, &o);
    expect_error(tuna_nccl_alltoallv(buf, z, z, buf + 4, z, z, ncclInt8, comm, stream, &o),
                 MPI_ERR_ARG, "'twophase-bruck' is not supported on the NCCL path (supported: "
                              "linear, pairwise, tuna", "unsupported row");
    tuna_options_parse("tuna:block=2", TUNA_ALLTOALLV, &o);
    expect_error(tuna_nccl_alltoallv(buf, z, z, buf + 4, z, z, ncclInt8, comm, stream, &o),
                 MPI_ERR_ARG, "parameter 'block' of 'tuna' is not supported", "tuna's block");
    tuna_options_parse("vendor", TUNA_ALLTOALLV, &o);
    expect_error(tuna_nccl_alltoallv(buf, z, z, buf + 4, z, z, ncclInt8, comm, stream, &o),
                 MPI_ERR_ARG, "'vendor' is not supported", "alltoallv vendor refused (no NCCL call)");
    tuna_options_parse("ring", TUNA_ALLGATHER, &o);
    expect_error(tuna_nccl_alltoallv(buf, z, z, buf + 4, z, z, ncclInt8, comm, stream, &o),
                 MPI_ERR_ARG, "another collective", "options of another collective");
    expect_error(tuna_nccl_allgather(NULL, buf, 1, ncclInt8, comm, stream, NULL), MPI_ERR_BUFFER,
                 "NULL buffer", "allgather NULL sendbuf");
    expect_error(tuna_nccl_allgather(buf, buf, SIZE_MAX / 2, ncclInt32, comm, stream, NULL),
                 MPI_ERR_COUNT, "do not fit", "allgather count overflow");
    expect_error(tuna_nccl_allreduce(buf, buf, 1, ncclInt32, ncclAvg, comm, stream, NULL),
                 MPI_ERR_OP, "not supported", "allreduce avg");
    expect_error(tuna_nccl_allreduce(buf, buf, 1, ncclFloat16, ncclSum, comm, stream, NULL),
                 MPI_ERR_TYPE, "no reduction", "allreduce half");
    expect_error(tuna_nccl_allreduce(NULL, buf, 1, ncclInt32, ncclSum, comm, stream, NULL),
                 MPI_ERR_BUFFER, "NULL buffer", "allreduce NULL sendbuf");
    tuna_options_parse("bruck-radix", TUNA_ALLTOALL, &o);
    expect_error(tuna_nccl_alltoall(buf, buf + 4, 1, ncclInt8, comm, stream, &o), MPI_ERR_ARG,
                 "(supported: linear, pairwise, tuna, coalesced, vendor",
                 "alltoall unsupported row");
    free(cnt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
#ifndef TEST_STANDIN
    /* On NCCL and a GPU (gpu label): one rank per GPU; none here, skipped. */
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < P) {
        if (me == 0)
            printf("test_nccl: skipped: %d CUDA devices for %d ranks\n", ndev, P);
        MPI_Finalize();
        return 77;
    }
    cudaSetDevice(me);
#endif
    ncclUniqueId id;
    if (me == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&comm, P, id, me) != ncclSuccess || cudaStreamCreate(&stream) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 2);

    const char *a2av_algs[] = {NULL,          "linear",        "pairwise",     "tuna",
                               "tuna:radix=2", "tuna:radix=3", "tuna:radix=P", "auto",
                               "coalesced"};
    const ncclDataType_t types[] = {ncclInt8, ncclInt32, ncclFloat64};
    for (size_t a = 0; a < sizeof a2av_algs / sizeof *a2av_algs; a++)
        for (int pat = 0; pat < 4; pat++)
            for (int t = 0; t < 3; t++)
                alltoallv_case(a2av_algs[a], pat, types[t], 100 * pat + t);
    /* auto past its learning (5 candidates twice): the ranks, whose largest blocks differ,
     * agree on the size class and settle on one row */
    for (int rep = 0; rep < 14; rep++)
        alltoallv_case("auto", 1 + rep % 2 * 2, ncclInt32, 900);
    const char *a2a_algs[] = {NULL, "linear", "pairwise", "tuna", "tuna:radix=2", "vendor",
                              "auto", "coalesced"};
    for (size_t a = 0; a < sizeof a2a_algs / sizeof *a2a_algs; a++) {
        tuna_options o;
        if (a2a_algs[a] && tuna_options_parse(a2a_algs[a], TUNA_ALLTOALL, &o) != MPI_SUCCESS)
            continue; /* not a row of MPI's alltoall table */
        for (size_t count = 0; count < 300; count = count * 7 + 1)
            alltoall_case(a2a_algs[a], count, ncclInt32);
    }
    const char *ag_algs[] = {NULL, "ring", "kring", "kring:k=2", "kring:k=3", "kring:k=P",
                             "recmul", "recmul:k=2", "recmul:k=3", "recmul:k=P",
                             "recmul-permuted", "recmul-permuted:k=2", "recmul-permuted:k=3",
                             "recmul-permuted:k=P", "recursive-doubling", "vendor", "auto"};
    for (size_t a = 0; a < sizeof ag_algs / sizeof *ag_algs; a++)
        for (size_t count = 0; count < 2000; count = count * 9 + 1)
            for (int t = 0; t < 3; t += 2)
                for (int ip = 0; ip < 2; ip++)
                    allgather_case(ag_algs[a], count, types[t], ip);
    const char *ar_algs[] = {NULL,        "ring",       "kring",      "kring:k=2", "kring:k=3",
                             "kring:k=P", "recmul",     "recmul:k=2", "recmul:k=3", "recmul:k=P",
                             "recmul-permuted", "recmul-permuted:k=2", "recmul-permuted:k=3",
                             "recmul-permuted:k=P", "recursive-doubling", "vendor", "auto"};
    const ncclDataType_t ar_types[] = {ncclInt8, ncclInt32, ncclUint64, ncclFloat32, ncclFloat64};
    const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin};
    for (size_t a = 0; a < sizeof ar_algs / sizeof *ar_algs; a++)
        for (size_t count = 0; count < 2000; count = count * 6 + 1)
            for (int t = 0; t < 5; t++)
                for (int op = 0; op < 4; op++)
                    allreduce_case(ar_algs[a], count, ar_types[t], ops[op], (t + op) % 2);

#ifdef TEST_STANDIN
    /* Every row with its steps split at the smallest limits (2: each slot pair its own group;
     * 4): the data still right, no deadlock. */
    const char *limits[] = {"2", "4"};
    for (int li = 0; li < 2; li++) {
        setenv("TUNA_NCCL_GROUP_LIMIT", limits[li], 1);
        for (size_t a = 0; a < sizeof a2av_algs / sizeof *a2av_algs; a++)
            for (int pat = 1; pat < 4; pat += 2)
                alltoallv_case(a2av_algs[a], pat, ncclInt32, 500 + pat);
        for (size_t a = 0; a < sizeof ag_algs / sizeof *ag_algs; a++)
            allgather_case(ag_algs[a], 7, ncclInt8, 0);
        for (size_t a = 0; a < sizeof ar_algs / sizeof *ar_algs; a++)
            allreduce_case(ar_algs[a], 43, ncclInt32, ncclSum, 0);
        unsetenv("TUNA_NCCL_GROUP_LIMIT");
    }

    /* Grouping: linear posts 2P slots in one step, split every L (rounded down to even);
     * pairwise and ring one group per step (P = 1: linear's self exchange, one group; the
     * others none). */
    grouping_case("linear", TUNA_ALLTOALLV, "2048", 1, 0);
    grouping_case("linear", TUNA_ALLTOALLV, "4", (2 * P + 3) / 4, 4);
    grouping_case("linear", TUNA_ALLTOALLV, "3", P, 2); /* 3: 2, splits between pairs */
    grouping_case("pairwise", TUNA_ALLTOALLV, "2", P - 1, 2);
    grouping_case("ring", TUNA_ALLGATHER, "2", P - 1, 2);
    /* TuNA radix 2: a data group per round, and a size group before each round that moves
     * blocks not yet at their destination (an offset with bit x set and a higher bit). */
    long tuna_groups = 0;
    for (long R = 1; R < P; R *= 2) {
        int forwards = 0;
        for (int o = 1; o < P; o++)
            forwards |= (o & R) && o >= 2 * R;
        tuna_groups += 1 + forwards;
    }
    grouping_case("tuna:radix=2", TUNA_ALLTOALLV, "2048", tuna_groups, 0);
    /* alltoall: the sizes are the count, no size groups: one group per round. */
    long rounds = 0;
    for (long R = 1; R < P; R *= 2)
        rounds++;
    grouping_case("tuna:radix=2", TUNA_ALLTOALL, "2048", rounds, 0);
    group_limit_refused();
#endif
    argument_checks();

    if (me == 0)
        printf("test_nccl P=%d: %s (%d failures)\n", P, failures ? "FAIL" : "ok", failures);
    cudaStreamDestroy(stream);
    ncclCommDestroy(comm);
    MPI_Finalize();
    return failures != 0;
}
