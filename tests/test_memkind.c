/*
 * Memory kinds (docs/gpu.md; src/core/memkind.h): buffers that CUDA's driver calls device
 * (or managed) memory go to the MPI library's own call, tuna's rows never touch them.
 *
 * Built twice. TEST_API: tuna's public calls (tuna_alltoallv, _alltoall, _allgather,
 * _allreduce; blocking, nonblocking, plans), each with auto, a named row and vendor, the
 * statistics checked (vendor ran, with the device reason). Otherwise a plain MPI client
 * (MPI_Alltoallv & co., blocking, nonblocking, persistent) that run_client.py runs under the
 * drop-in, checking the TUNA_STATS file.
 *
 * --mock PATH: the test's stand-in for the driver (tests/support/mock_cuda.c, a
 * libcuda.so.1) is loaded first, as a CUDA application would have loaded the real one, and
 * the "device" buffers (host memory really) registered with it. Without it every buffer is
 * host memory and tuna's rows run. --no-driver: at the end libcuda.so.1 must not be loaded
 * (run with the mock's directory on LD_LIBRARY_PATH: a dlopen without RTLD_NOLOAD would
 * have found it). --uninitialized (with MOCK_CUDA_UNINITIALIZED=1): the driver answers
 * CUDA_ERROR_NOT_INITIALIZED, so every buffer is host memory and tuna's rows run.
 *
 * Every case: the buffers filled with a sentinel (gaps and a tail included), the result
 * compared byte for byte with PMPI_* on host buffers of the same layout. Placements: host
 * send and receive, device both, device send / host receive, host send / device receive,
 * MPI_IN_PLACE on device, managed both. Exit 0 when every check holds on every rank.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "tuna_mpi_features.h"
#ifdef TEST_API
#include "tuna.h"
#endif

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HH, DD, DH, HD, IP, MM, NPLACE };
static const char *const place_name[NPLACE] = {"host/host", "device/device", "device/host",
                                               "host/device", "in-place device", "managed"};
enum { BLOCKING, NONBLOCKING, PERSISTENT, NFORM };
static const char *const form_name[NFORM] = {"blocking", "nonblocking", "persistent"};
enum { A2AV, A2A, AG, AR, NCOLL };
static const char *const coll_name[NCOLL] = {"alltoallv", "alltoall", "allgather", "allreduce"};

#define SENTINEL 0xA5
#define N 5     /* ints per block (alltoallv: up to N + 2) */
#define TAIL 16 /* sentinel bytes after the data */

static int me, P, failures;
static int uninitialized; /* --uninitialized: the driver answers "not initialised": host */
static void (*mock_register)(const void *, size_t, int);
static void (*mock_clear)(void);

static void fail(const char *fmt, const char *a, const char *b, const char *c, const char *d)
{
    if (failures++ < 20) {
        printf("[%d] FAILED: ", me);
        printf(fmt, a, b, c, d);
        printf("\n");
        fflush(stdout);
    }
}

/* The layout of one call on this rank (ints). */
typedef struct layout {
    int sc[64], sd[64], rc[64], rd[64];
    int slen, rlen;
} layout;

static int a2av_count(int src, int dst)
{
    return (src + dst) % 3 + N - 1; /* symmetric: MPI_IN_PLACE needs it */
}

static void layout_make(layout *l, int coll)
{
    l->slen = l->rlen = 0;
    for (int j = 0; j < P; j++) {
        const int s = coll == A2AV ? a2av_count(me, j) : N, r = coll == A2AV ? a2av_count(j, me) : N;
        l->sc[j] = s;
        l->rc[j] = r;
        /* alltoallv: a gap of one int before every block, the blocks in reverse order */
        l->sd[j] = coll == A2AV ? 1 + (P - 1 - j) * (N + 3) : j * N;
        l->rd[j] = coll == A2AV ? 1 + j * (N + 3) : j * N;
    }
    if (coll == A2AV) {
        l->slen = l->rlen = P * (N + 3);
    } else if (coll == A2A) {
        l->slen = l->rlen = P * N;
    } else if (coll == AG) {
        l->slen = N;
        l->rlen = P * N;
    } else {
        l->slen = l->rlen = N * 3;
    }
}

static void fill_send(int *s, int len, int coll)
{
    for (int k = 0; k < len; k++)
        s[k] = coll == AR ? (me + 1) * (k + 3) : me * 1000 + k;
}

/* In place: the receive buffer holds what is sent (alltoall(v): this rank's receive layout,
 * allgather: its own block at its place, allreduce: the vector). */
static void fill_inplace(int *r, const layout *l, int coll)
{
    memset(r, SENTINEL, (size_t)l->rlen * sizeof(int) + TAIL);
    if (coll == AG) {
        for (int k = 0; k < N; k++)
            r[me * N + k] = me * 1000 + k;
    } else if (coll == AR) {
        fill_send(r, l->rlen, coll);
    } else {
        for (int j = 0; j < P; j++)
            for (int k = 0; k < l->rc[j]; k++)
                r[l->rd[j] + k] = me * 1000 + j * 10 + k;
    }
}

/* Either side's call: use_pmpi for the reference. Returns the call's result. */
static int call(int coll, int form, int use_pmpi, const void *s, void *r, const layout *l,
                int alg)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    const int cnt = coll == AR ? l->rlen : N;
    if (use_pmpi) {
        switch (coll) {
        case A2AV: return PMPI_Alltoallv(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm);
        case A2A: return PMPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, comm);
        case AG: return PMPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, comm);
        default: return PMPI_Allreduce(s, r, cnt, MPI_INT, MPI_SUM, comm);
        }
    }
#ifdef TEST_API
    static const tuna_collective tc[NCOLL] = {TUNA_ALLTOALLV, TUNA_ALLTOALL, TUNA_ALLGATHER,
                                              TUNA_ALLREDUCE};
    tuna_options o, *opt = NULL;
    if (alg >= 0) {
        const tuna_algorithm_info *info = tuna_algorithm_get(tc[coll], alg);
        if (!info || tuna_options_parse(info->name, tc[coll], &o) != MPI_SUCCESS)
            return MPI_ERR_ARG;
        opt = &o;
    }
    int rc;
    if (form == BLOCKING) {
        switch (coll) {
        case A2AV: return tuna_alltoallv(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm, opt);
        case A2A: return tuna_alltoall(s, N, MPI_INT, r, N, MPI_INT, comm, opt);
        case AG: return tuna_allgather(s, N, MPI_INT, r, N, MPI_INT, comm, opt);
        default: return tuna_allreduce(s, r, cnt, MPI_INT, MPI_SUM, comm, opt);
        }
    }
    if (form == NONBLOCKING) {
        tuna_request q = TUNA_REQUEST_NULL;
        switch (coll) {
        case A2AV:
            rc = tuna_ialltoallv(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm, opt, &q);
            break;
        case A2A: rc = tuna_ialltoall(s, N, MPI_INT, r, N, MPI_INT, comm, opt, &q); break;
        case AG: rc = tuna_iallgather(s, N, MPI_INT, r, N, MPI_INT, comm, opt, &q); break;
        default: rc = tuna_iallreduce(s, r, cnt, MPI_INT, MPI_SUM, comm, opt, &q); break;
        }
        return rc != MPI_SUCCESS ? rc : tuna_request_wait(&q);
    }
    tuna_plan plan = NULL;
    switch (coll) {
    case A2AV:
        rc = tuna_alltoallv_init(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm, opt, 0,
                                 &plan);
        break;
    case A2A: rc = tuna_alltoall_init(s, N, MPI_INT, r, N, MPI_INT, comm, opt, 0, &plan); break;
    case AG: rc = tuna_allgather_init(s, N, MPI_INT, r, N, MPI_INT, comm, opt, 0, &plan); break;
    default: rc = tuna_allreduce_init(s, r, cnt, MPI_INT, MPI_SUM, comm, opt, 0, &plan); break;
    }
    if (rc == MPI_SUCCESS)
        rc = tuna_start(plan);
    if (rc == MPI_SUCCESS)
        rc = tuna_wait(plan);
    if (plan)
        tuna_plan_free(&plan);
    return rc;
#else
    (void)alg;
    MPI_Request q = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    if (form == BLOCKING) {
        switch (coll) {
        case A2AV: return MPI_Alltoallv(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm);
        case A2A: return MPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, comm);
        case AG: return MPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, comm);
        default: return MPI_Allreduce(s, r, cnt, MPI_INT, MPI_SUM, comm);
        }
    }
    if (form == NONBLOCKING) {
        switch (coll) {
        case A2AV: rc = MPI_Ialltoallv(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm, &q); break;
        case A2A: rc = MPI_Ialltoall(s, N, MPI_INT, r, N, MPI_INT, comm, &q); break;
        case AG: rc = MPI_Iallgather(s, N, MPI_INT, r, N, MPI_INT, comm, &q); break;
        default: rc = MPI_Iallreduce(s, r, cnt, MPI_INT, MPI_SUM, comm, &q); break;
        }
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
#if defined(ALLTOALLV_INIT) && defined(ALLTOALL_INIT) && defined(ALLGATHER_INIT) &&            \
    defined(ALLREDUCE_INIT)
    switch (coll) {
    case A2AV:
        rc = ALLTOALLV_INIT(s, l->sc, l->sd, MPI_INT, r, l->rc, l->rd, MPI_INT, comm, MPI_INFO_NULL, &q);
        break;
    case A2A: rc = ALLTOALL_INIT(s, N, MPI_INT, r, N, MPI_INT, comm, MPI_INFO_NULL, &q); break;
    case AG: rc = ALLGATHER_INIT(s, N, MPI_INT, r, N, MPI_INT, comm, MPI_INFO_NULL, &q); break;
    default: rc = ALLREDUCE_INIT(s, r, cnt, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q); break;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Start(&q);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (q != MPI_REQUEST_NULL)
        MPI_Request_free(&q);
#endif
    return rc;
#endif
}

/* Whether this build has the form (the drop-in's persistent calls need the library's). */
static int have_form(int form)
{
#if !defined(TEST_API) &&                                                                      \
    !(defined(ALLTOALLV_INIT) && defined(ALLTOALL_INIT) && defined(ALLGATHER_INIT) &&           \
      defined(ALLREDUCE_INIT))
    if (form == PERSISTENT)
        return 0;
#endif
    (void)form;
    return 1;
}

/* One case: the call on this placement against PMPI. alg: the row asked (-1: the default). */
static void run_case(int coll, int form, int place, int alg, int mock, const char *alg_name)
{
    layout l;
    layout_make(&l, coll);
    const size_t sbytes = (size_t)l.slen * sizeof(int) + TAIL,
                 rbytes = (size_t)l.rlen * sizeof(int) + TAIL;
    int *s = malloc(sbytes), *r = malloc(rbytes), *rs = malloc(sbytes), *rr = malloc(rbytes);
    memset(s, SENTINEL, sbytes);
    memset(rs, SENTINEL, sbytes);
    fill_send(s, l.slen, coll);
    fill_send(rs, l.slen, coll);
    const int inplace = place == IP;
    if (inplace) {
        fill_inplace(r, &l, coll);
        fill_inplace(rr, &l, coll);
    } else {
        memset(r, SENTINEL, rbytes);
        memset(rr, SENTINEL, rbytes);
    }
    if (mock) {
        mock_clear();
        if (place == DD || place == DH || place == MM)
            mock_register(s, sbytes, place == MM);
        if (place == DD || place == HD || place == IP || place == MM)
            mock_register(r, rbytes, place == MM);
    }
    int rc = call(coll, form, 0, inplace ? MPI_IN_PLACE : s, r, &l, alg);
    int rc_ref = call(coll, BLOCKING, 1, inplace ? MPI_IN_PLACE : rs, rr, &l, -1);
    if (mock)
        mock_clear();
    if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS)
        fail("%s %s %s (%s): the call failed", coll_name[coll], form_name[form], place_name[place],
             alg_name);
    else if (memcmp(r, rr, rbytes) != 0 || memcmp(s, rs, sbytes) != 0)
        fail("%s %s %s (%s): not the library's bytes", coll_name[coll], form_name[form],
             place_name[place], alg_name);
#ifdef TEST_API
    static const tuna_collective tc[NCOLL] = {TUNA_ALLTOALLV, TUNA_ALLTOALL, TUNA_ALLGATHER,
                                              TUNA_ALLREDUCE};
    const tuna_stats *st = tuna_stats_last();
    const int vendor = tuna_algorithm_find(tc[coll], "vendor");
    const int device = mock && !uninitialized && place != HH;
    const char *why = st->fallback ? st->fallback : "";
    /* alltoallv's, allgather's and allreduce's device rows run blocking, nonblocking and
     * persistent calls on device buffers (alltoallv not in place) where CUDA's runtime is
     * usable (a GPU machine): staged, tests/test_staged.c and test_staged_collectives.c check
     * them. */
    const int staged = device && (coll == A2AV ? place != IP : coll == AG || coll == AR) &&
                       alg >= 0 && alg != vendor && st->algorithm == alg && !st->fallback;
    if (device && !staged) {
        const char *want = place == DH || place == HD ? "host and device buffers" : "device buffers";
        if (st->algorithm != vendor)
            fail("%s %s %s (%s): vendor did not run", coll_name[coll], form_name[form],
                 place_name[place], alg_name);
        else if (alg == vendor ? st->fallback != NULL : strstr(why, want) == NULL)
            fail("%s %s %s (%s): the statistics' fallback is not the device reason",
                 coll_name[coll], form_name[form], place_name[place], alg_name);
    } else if (strstr(why, "device")) {
        fail("%s %s %s (%s): host buffers reported as device memory", coll_name[coll],
             form_name[form], place_name[place], alg_name);
    } else if (alg >= 0 && alg != vendor && st->algorithm != alg) {
        fail("%s %s %s (%s): tuna's row did not run", coll_name[coll], form_name[form],
             place_name[place], alg_name);
    }
#else
    (void)alg_name;
#endif
    free(s);
    free(r);
    free(rs);
    free(rr);
}

int main(int argc, char **argv)
{
    const char *mock_path = NULL;
    int no_driver = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mock") && i + 1 < argc)
            mock_path = argv[++i];
        else if (!strcmp(argv[i], "--no-driver"))
            no_driver = 1;
        else if (!strcmp(argv[i], "--uninitialized"))
            uninitialized = 1;
    }
    /* The driver first, as a CUDA application loads it before its first device buffer. */
    if (mock_path) {
        void *h = dlopen(mock_path, RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
            printf("cannot load the mock driver %s: %s\n", mock_path, dlerror());
            return 1;
        }
        *(void **)&mock_register = dlsym(h, "mock_cuda_register");
        *(void **)&mock_clear = dlsym(h, "mock_cuda_clear");
        if (!mock_register || !mock_clear) {
            printf("the mock driver lacks its test entries\n");
            return 1;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* The MPI library may load the driver itself (a CUDA-aware one): then nothing to check. */
    const int driver_before = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) != NULL;
    if (no_driver && driver_before && me == 0)
        printf("the MPI library loaded libcuda.so.1: --no-driver not checked\n");
#ifdef TEST_API
    tuna_stats_enable(1);
    static const tuna_collective tc[NCOLL] = {TUNA_ALLTOALLV, TUNA_ALLTOALL, TUNA_ALLGATHER,
                                              TUNA_ALLREDUCE};
    static const char *const named[NCOLL] = {"pairwise", "bruck-radix", "ring", "ring"};
#endif
    for (int coll = 0; coll < NCOLL; coll++)
        for (int form = 0; form < NFORM; form++) {
            if (!have_form(form))
                continue;
            for (int place = 0; place < NPLACE; place++) {
#ifdef TEST_API
                const int algs[3] = {-1, tuna_algorithm_find(tc[coll], named[coll]),
                                     tuna_algorithm_find(tc[coll], "vendor")};
                const char *names[3] = {"default", named[coll], "vendor"};
                for (int a = 0; a < 3; a++)
                    run_case(coll, form, place, algs[a], mock_path != NULL, names[a]);
#else
                run_case(coll, form, place, -1, mock_path != NULL, "the drop-in's choice");
#endif
            }
        }
    if (no_driver && !driver_before && dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
        printf("[%d] FAILED: libcuda.so.1 was loaded, but the program never loaded it\n", me);
        failures++;
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("memory kinds (%s%s): %s\n", mock_path ? "mock driver" : "no driver",
#ifdef TEST_API
               ", tuna's API",
#else
               ", MPI calls",
#endif
               total ? "FAILED" : "ok");
    MPI_Finalize();
    return total ? 1 : 0;
}
