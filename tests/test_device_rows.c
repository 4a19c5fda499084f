/*
 * tuna's rows on device memory, end to end (docs/gpu.md, "The gpu label"): every row that
 * declares device memory, and `auto`, with several MPI processes sharing one GPU, on
 * device/device, device/host and host/device buffers, blocking, nonblocking and as a plan
 * started three times with new data: the receive buffer (sentinel-filled gaps and tail,
 * read back from the device) byte for byte against the library's call on host copies, the
 * send buffer unchanged, and the statistics naming a tuna row (never the library's call).
 *
 * One source, two builds:
 *   - test_device_rows_gpu (TUNA_TEST_REAL_CUDA, label gpu): buffers from cudaMalloc on a
 *     real GPU; exits 77 (skipped) on every rank when no rank sees a CUDA device.
 *   - test_device_rows (label fast): the stand-ins for CUDA's driver and runtime
 *     (--driver, --runtime: tests/support/mock_cuda.c, mock_cudart.c), whose "device"
 *     buffers stay PROT_NONE outside the runtime's copies, so this test itself is checked
 *     on every CI run.
 * Run with TUNA_CUDA_AWARE=0 (the MPIs of CI and of the lent GPU machine are not CUDA-aware):
 * auto stages then (nonblocking auto with a fixed row).
 * --aware (stand-ins only, with TUNA_CUDA_AWARE=1): the MPI takes device memory, which the
 * stand-in then leaves readable: the named rows post the device buffers as they are
 * ("direct": no pinned memory allocated, no copy but the own block's; allreduce's reductions
 * bounce through pinned memory but with --kernels), and auto, blocking, nonblocking and
 * plans, is the library's call with its reason.
 * --kernels PATH (stand-ins only, with TUNA_CUDA_KERNELS=PATH, the stand-in libtuna-cuda):
 * reductions into device memory run the kernel, and every rank that reduced into a device
 * receive buffer saw the stand-in's reduction run.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "tuna.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TUNA_TEST_REAL_CUDA
#include <cuda_runtime_api.h>
#else
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#define SENTINEL 0x5A
#define TAIL 64

static int me, P, failures;
static int aware; /* --aware: the MPI takes device memory (see the header) */
static int kernels; /* --kernels PATH: a stand-in libtuna-cuda (see the header) */
#ifndef TUNA_TEST_REAL_CUDA
static long (*kernel_calls)(void); /* its reductions */
#endif

static void fail(const char *coll, const char *row, const char *place, const char *form,
                 const char *what)
{
    if (failures++ < 20) {
        printf("[%d] FAILED: %s %s %s %s: %s\n", me, coll, row, place, form, what);
        fflush(stdout);
    }
}

/* ---- device memory: the real runtime, or the stand-ins --------------------------------- */

#ifdef TUNA_TEST_REAL_CUDA
static int device_setup(int argc, char **argv)
{
    (void)argc, (void)argv;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0;
    if (n > 0 && cudaSetDevice(me % n) != cudaSuccess)
        n = 0;
    return n > 0;
}
static void *dev_alloc(size_t n)
{
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 3);
    return p;
}
static void dev_free(void *p, size_t n)
{
    (void)n;
    cudaFree(p);
}
static void dev_copy(void *dst, const void *src, size_t n)
{
    if (cudaMemcpy(dst, src, n, cudaMemcpyDefault) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 3);
}
static void dev_case_end(void) {}
static void rt_counts(long out[6])
{
    memset(out, 0, 6 * sizeof *out);
}
#else
static void (*drv_register)(const void *, size_t, int);
static void (*drv_clear)(void);
static void (*rt_device)(void *, size_t);
static void (*rt_release)(void);
static void (*rt_device_open)(void *, size_t);
static void (*rt_counts)(long[6]);
static int (*rt_memcpy)(void *, const void *, size_t, int, void *);
static const char *driver_path, *runtime_path;

static void *sym_or_die(void *h, const char *name)
{
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) {
        printf("test_device_rows: %s not found\n", name);
        exit(2);
    }
    return p;
}

/* Before MPI_Init, as a CUDA application loads its runtime and driver. */
static void mocks_load(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--driver"))
            driver_path = argv[i + 1];
        else if (!strcmp(argv[i], "--runtime"))
            runtime_path = argv[i + 1];
    }
    void *hd = driver_path ? dlopen(driver_path, RTLD_NOW | RTLD_GLOBAL) : NULL;
    void *hr = runtime_path ? dlopen(runtime_path, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (!hd || !hr) {
        printf("usage: test_device_rows --driver libcuda.so.1 --runtime libcudart.so.13 (%s)\n",
               dlerror());
        exit(2);
    }
    *(void **)&drv_register = sym_or_die(hd, "mock_cuda_register");
    *(void **)&drv_clear = sym_or_die(hd, "mock_cuda_clear");
    *(void **)&rt_device = sym_or_die(hr, "mock_cudart_device");
    *(void **)&rt_release = sym_or_die(hr, "mock_cudart_release");
    *(void **)&rt_device_open = sym_or_die(hr, "mock_cudart_device_open");
    *(void **)&rt_counts = sym_or_die(hr, "mock_cudart_stats");
    *(void **)&rt_memcpy = sym_or_die(hr, "cudaMemcpyAsync");
}
static int device_setup(int argc, char **argv)
{
    (void)argc, (void)argv;
    return 1;
}
static size_t page_round(size_t n)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}
/* Pages the driver calls device memory and the runtime keeps PROT_NONE. */
static void *dev_alloc(size_t n)
{
    void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        MPI_Abort(MPI_COMM_WORLD, 3);
    drv_register(p, n, 0);
    (aware ? rt_device_open : rt_device)(p, page_round(n));
    return p;
}
static void dev_free(void *p, size_t n)
{
    munmap(p, page_round(n));
}
static void dev_copy(void *dst, const void *src, size_t n)
{
    if (rt_memcpy(dst, src, n, 4 /* cudaMemcpyDefault */, NULL) != 0)
        MPI_Abort(MPI_COMM_WORLD, 3);
}
/* Every range forgotten (readable again) before the buffers are unmapped. */
static void dev_case_end(void)
{
    rt_release();
    drv_clear();
}
#endif

/* A buffer of either kind; its bytes always moved with dev_copy (which also serves host to
 * host), so the test never touches device memory from the host either. */
typedef struct buf {
    char *p;
    size_t n;
    int dev;
} buf;

static buf buf_make(size_t n, int dev)
{
    buf b = {dev ? dev_alloc(n) : malloc(n), n, dev};
    if (!b.p)
        MPI_Abort(MPI_COMM_WORLD, 3);
    return b;
}

static void buf_free(buf *b)
{
    if (b->dev)
        dev_free(b->p, b->n);
    else
        free(b->p);
}

enum { DD, DH, HD, NPLACE };
static const char *const place_name[NPLACE] = {"device/device", "device/host", "host/device"};
enum { BLOCKING, NONBLOCKING, PLAN, NFORM };
static const char *const form_name[NFORM] = {"blocking", "nonblocking", "plan"};

/* ---- alltoallv ------------------------------------------------------------------------- */

/* Ints from rank src to rank dst: empty for some pairs, up to a few thousand. */
static int count_of(int src, int dst, int salt)
{
    const int k = (src * 7 + dst * 3 + salt) % 5;
    return k == 0 ? 0 : k == 1 ? 1 : k == 2 ? 37 : k == 3 ? 1500 : 4099;
}

typedef struct layout {
    int *sc, *sd, *rc, *rd;
    size_t sbytes, rbytes;
} layout;

/* Blocks in reverse rank order with gaps of 3 ints, a tail after the last. */
static void layout_make(layout *l, int salt)
{
    l->sc = malloc(4 * sizeof(int) * (size_t)P);
    l->sd = l->sc + P, l->rc = l->sc + 2 * P, l->rd = l->sc + 3 * P;
    int s = 3, r = 5;
    for (int j = P - 1; j >= 0; j--) {
        l->sc[j] = count_of(me, j, salt);
        l->sd[j] = s;
        s += l->sc[j] + 3;
    }
    for (int j = 0; j < P; j++) {
        l->rc[j] = count_of(j, me, salt);
        l->rd[j] = r;
        r += l->rc[j] + 3;
    }
    l->sbytes = (size_t)s * sizeof(int) + TAIL;
    l->rbytes = (size_t)r * sizeof(int) + TAIL;
}

/* Send data for a start (salt), sentinels elsewhere. */
static void fill_send(char *h, size_t n, int salt)
{
    memset(h, SENTINEL, n);
    for (size_t k = 0; k + sizeof(int) <= n - TAIL; k += sizeof(int)) {
        const int v = me * 1000003 + (int)k * 7 + salt;
        memcpy(h + k, &v, sizeof v);
    }
}

/* The bytes of b against want (n bytes); what: the message. */
static int same(const buf *b, const char *want, char *scratch)
{
    dev_copy(scratch, b->p, b->n);
    return memcmp(scratch, want, b->n) == 0;
}

/* Whether the call ran as it should: the named row (or, for auto, a tuna row) without a
 * fallback; with --aware, auto as the library's call with its reason, and a named row
 * direct: no pinned memory allocated, at most the own block copied between kinds (c0, c1:
 * the runtime's counts before and after the call). */
static int row_ran(tuna_collective coll, const char *row, const tuna_options *o,
                   const long *c0, const long *c1, char *what, size_t size)
{
    const tuna_stats *st = tuna_stats_last();
    const int vendor = tuna_algorithm_find(coll, "vendor");
    if (aware && !strcmp(row, "auto")) {
        const int ok = st->algorithm == vendor && st->fallback &&
                       strstr(st->fallback, "library's call");
        if (!ok)
            snprintf(what, size, "auto on a CUDA-aware MPI is not the library's call "
                                 "(algorithm %d, fallback: %s)",
                     st->algorithm, st->fallback ? st->fallback : "none");
        return ok;
    }
    const int ok = !st->fallback && st->algorithm != vendor &&
                   (!strcmp(row, "auto") || st->algorithm == o->algorithm);
    if (!ok) {
        snprintf(what, size, "the row did not run (algorithm %d, fallback: %s)", st->algorithm,
                 st->fallback ? st->fallback : "none");
        return 0;
    }
    /* Reductions bounce their operands through pinned memory unless a kernel runs them
     * (--kernels), and the kernel's operand and stand-in copies are not counted here. */
    const int reduces = coll == TUNA_ALLREDUCE;
    if (aware && (!reduces || kernels) &&
        (c1[5] != c0[5] || (!reduces && (c1[0] - c0[0]) + (c1[1] - c0[1]) > 1))) {
        snprintf(what, size, "not direct: %ld pinned allocations, %ld copies to host, %ld to "
                             "device",
                 c1[5] - c0[5], c1[0] - c0[0], c1[1] - c0[1]);
        return 0;
    }
    return 1;
}

static void alltoallv_case(const char *row, int place, int form, int salt)
{
    const char *coll = "alltoallv";
    layout l;
    layout_make(&l, salt);
    const int sdev = place != HD, rdev = place != DH;
    buf s = buf_make(l.sbytes, sdev), r = buf_make(l.rbytes, rdev);
    char *hs = malloc(l.sbytes), *hr = malloc(l.rbytes), *rr = malloc(l.rbytes),
         *scratch = malloc(l.sbytes > l.rbytes ? l.sbytes : l.rbytes);
    tuna_options o;
    if (tuna_options_parse(row, TUNA_ALLTOALLV, &o) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    tuna_plan plan = NULL;
    char what[200];
    const int starts = form == PLAN ? 3 : 1;
    for (int k = 0; k < starts; k++) {
        fill_send(hs, l.sbytes, salt + 101 * k);
        memset(hr, SENTINEL, l.rbytes);
        memcpy(rr, hr, l.rbytes);
        dev_copy(s.p, hs, l.sbytes);
        dev_copy(r.p, hr, l.rbytes);
        int rc;
        long c0[6], c1[6];
        rt_counts(c0);
        if (form == BLOCKING) {
            rc = tuna_alltoallv(s.p, l.sc, l.sd, MPI_INT, r.p, l.rc, l.rd, MPI_INT,
                                MPI_COMM_WORLD, &o);
        } else if (form == NONBLOCKING) {
            tuna_request q = TUNA_REQUEST_NULL;
            rc = tuna_ialltoallv(s.p, l.sc, l.sd, MPI_INT, r.p, l.rc, l.rd, MPI_INT,
                                 MPI_COMM_WORLD, &o, &q);
            if (rc == MPI_SUCCESS)
                rc = tuna_request_wait(&q);
        } else {
            rc = k > 0 ? MPI_SUCCESS
                       : tuna_alltoallv_init(s.p, l.sc, l.sd, MPI_INT, r.p, l.rc, l.rd,
                                             MPI_INT, MPI_COMM_WORLD, &o, 0, &plan);
            if (rc == MPI_SUCCESS)
                rc = tuna_start(plan);
            if (rc == MPI_SUCCESS)
                rc = tuna_wait(plan);
        }
        rt_counts(c1);
        const int ran =
            rc == MPI_SUCCESS && row_ran(TUNA_ALLTOALLV, row, &o, c0, c1, what, sizeof what);
        const int rc_ref =
            PMPI_Alltoallv(hs, l.sc, l.sd, MPI_INT, rr, l.rc, l.rd, MPI_INT, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
            fail(coll, row, place_name[place], form_name[form], "the call failed");
            break;
        }
        if (!same(&r, rr, scratch))
            fail(coll, row, place_name[place], form_name[form], "not the library's bytes");
        else if (!same(&s, hs, scratch))
            fail(coll, row, place_name[place], form_name[form], "the send buffer changed");
        else if (!ran)
            fail(coll, row, place_name[place], form_name[form], what);
    }
    if (plan && tuna_plan_free(&plan) != MPI_SUCCESS)
        fail(coll, row, place_name[place], form_name[form], "tuna_plan_free failed");
    dev_case_end();
    buf_free(&s);
    buf_free(&r);
    free(hs), free(hr), free(rr), free(scratch), free(l.sc);
}

/* ---- allgather and allreduce ----------------------------------------------------------- */

/* One call of form on s / r (count elements of type, op for allreduce; coll picks), or a
 * plan's start k (the plan made at k = 0). */
static int gather_reduce_call(tuna_collective coll, int form, int k, const buf *s, const buf *r,
                              int count, MPI_Datatype type, MPI_Op op, const tuna_options *o,
                              tuna_plan *plan)
{
    const int ag = coll == TUNA_ALLGATHER;
    int rc;
    if (form == BLOCKING)
        return ag ? tuna_allgather(s->p, count, type, r->p, count, type, MPI_COMM_WORLD, o)
                  : tuna_allreduce(s->p, r->p, count, type, op, MPI_COMM_WORLD, o);
    if (form == NONBLOCKING) {
        tuna_request q = TUNA_REQUEST_NULL;
        rc = ag ? tuna_iallgather(s->p, count, type, r->p, count, type, MPI_COMM_WORLD, o, &q)
                : tuna_iallreduce(s->p, r->p, count, type, op, MPI_COMM_WORLD, o, &q);
        return rc != MPI_SUCCESS ? rc : tuna_request_wait(&q);
    }
    rc = k > 0 ? MPI_SUCCESS
         : ag  ? tuna_allgather_init(s->p, count, type, r->p, count, type, MPI_COMM_WORLD, o, 0,
                                     plan)
               : tuna_allreduce_init(s->p, r->p, count, type, op, MPI_COMM_WORLD, o, 0, plan);
    if (rc == MPI_SUCCESS)
        rc = tuna_start(*plan);
    return rc != MPI_SUCCESS ? rc : tuna_wait(*plan);
}

/* Element values: small integers, so that sums and products of doubles are exact. */
static void fill_elems(char *h, int count, MPI_Datatype type, int salt)
{
    for (int i = 0; i < count; i++) {
        const int v = (me * 7 + i * 3 + salt) % 5 + 1;
        if (type == MPI_DOUBLE)
            ((double *)h)[i] = v;
        else if (type == MPI_INT)
            ((int *)h)[i] = v * (i % 2 ? -1 : 1);
        else
            ((unsigned char *)h)[i] = (unsigned char)(v * 37 + i);
    }
}

static void gather_reduce_case(tuna_collective coll, const char *row, int place, int form,
                               int count, MPI_Datatype type, MPI_Op op, int salt)
{
    const int ag = coll == TUNA_ALLGATHER;
    const char *name = ag ? "allgather" : "allreduce";
    int esize = 0;
    MPI_Type_size(type, &esize);
    const size_t sb = (size_t)count * esize + TAIL,
                 rb = (size_t)count * esize * (ag ? P : 1) + TAIL;
    const int sdev = place != HD, rdev = place != DH;
    buf s = buf_make(sb, sdev), r = buf_make(rb, rdev);
    char *hs = malloc(sb), *hr = malloc(rb), *rr = malloc(rb),
         *scratch = malloc(sb > rb ? sb : rb);
    tuna_options o;
    if (tuna_options_parse(row, coll, &o) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    tuna_plan plan = NULL;
    char what[200], form_what[64];
    snprintf(form_what, sizeof form_what, "%s, %d elements", form_name[form], count);
    const int starts = form == PLAN ? 3 : 1;
    for (int k = 0; k < starts; k++) {
        memset(hs, SENTINEL, sb);
        fill_elems(hs, count, type, salt + 11 * k);
        memset(hr, SENTINEL, rb);
        memcpy(rr, hr, rb);
        dev_copy(s.p, hs, sb);
        dev_copy(r.p, hr, rb);
        long c0[6], c1[6];
        rt_counts(c0);
        int rc = gather_reduce_call(coll, form, k, &s, &r, count, type, op, &o, &plan);
        rt_counts(c1);
        const int ran = rc == MPI_SUCCESS && row_ran(coll, row, &o, c0, c1, what, sizeof what);
        const int rc_ref =
            ag ? PMPI_Allgather(hs, count, type, rr, count, type, MPI_COMM_WORLD)
               : PMPI_Allreduce(hs, rr, count, type, op, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
            fail(name, row, place_name[place], form_what, "the call failed");
            break;
        }
        if (!same(&r, rr, scratch))
            fail(name, row, place_name[place], form_what, "not the library's bytes");
        else if (!same(&s, hs, scratch))
            fail(name, row, place_name[place], form_what, "the send buffer changed");
        else if (!ran)
            fail(name, row, place_name[place], form_what, what);
    }
    if (plan && tuna_plan_free(&plan) != MPI_SUCCESS)
        fail(name, row, place_name[place], form_what, "tuna_plan_free failed");
    dev_case_end();
    buf_free(&s);
    buf_free(&r);
    free(hs), free(hr), free(rr), free(scratch);
}

int main(int argc, char **argv)
{
#ifndef TUNA_TEST_REAL_CUDA
    for (int i = 1; i < argc; i++) {
        aware |= !strcmp(argv[i], "--aware");
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
            void *h = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL); /* tuna opens the same */
            *(void **)&kernel_calls = sym_or_die(h, "mock_tuna_cuda_calls");
            kernels = 1;
        }
    }
    mocks_load(argc, argv);
#endif
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    tuna_stats_enable(1);
    int have = device_setup(argc, argv), all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (me == 0)
            printf("test_device_rows: no CUDA device on some rank: skipped\n");
        MPI_Finalize();
        return 77;
    }
    static const char *const a2av_rows[] = {"spreadout", "scattered", "linear", "pairwise",
                                            "xor",       "multipair", "auto"};
    int cases = 0;
    for (size_t i = 0; i < sizeof a2av_rows / sizeof a2av_rows[0]; i++)
        for (int place = 0; place < NPLACE; place++)
            for (int form = 0; form < NFORM; form++, cases++)
                alltoallv_case(a2av_rows[i], place, form, (int)i + place);
    static const char *const ag_rows[] = {"ring", "recursive-doubling", "recmul",
                                          "recmul-permuted", "auto"};
    static const int ag_counts[] = {1, 37, 1500};
    for (size_t i = 0; i < sizeof ag_rows / sizeof ag_rows[0]; i++)
        for (int place = 0; place < NPLACE; place++)
            for (int form = 0; form < NFORM; form++, cases++)
                gather_reduce_case(TUNA_ALLGATHER, ag_rows[i], place, form,
                                   ag_counts[(i + (size_t)form) % 3], MPI_INT, MPI_OP_NULL,
                                   (int)i);
    static const char *const ar_rows[] = {"ring", "kring", "recursive-doubling", "recmul",
                                          "recmul-permuted", "auto"};
    for (size_t i = 0; i < sizeof ar_rows / sizeof ar_rows[0]; i++)
        for (int place = 0; place < NPLACE; place++)
            for (int form = 0; form < NFORM; form++, cases++) {
                /* a type, an op and a count per case, in turn */
                const int t = (int)(i + (size_t)place + (size_t)form) % 3;
                const MPI_Datatype type = t == 0   ? MPI_INT
                                          : t == 1 ? MPI_DOUBLE
                                                   : MPI_UNSIGNED_CHAR;
                const MPI_Op op = t == 0 ? MPI_SUM : t == 1 ? MPI_MAX : MPI_BXOR;
                const int count = form == 0 ? 1001 : form == 1 ? 1 : 4096;
                gather_reduce_case(TUNA_ALLREDUCE, ar_rows[i], place, form, count, type, op,
                                   (int)i);
            }
#ifndef TUNA_TEST_REAL_CUDA
    if (kernels && kernel_calls() == 0)
        fail("allreduce", "every row", "device receive buffers", "all",
             "the kernel never ran (TUNA_CUDA_KERNELS)");
#endif
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_device_rows: P=%d %d cases, %d failed\n", P, cases, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
