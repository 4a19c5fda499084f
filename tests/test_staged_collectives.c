/*
 * tuna's allgather and allreduce rows on device memory over an MPI that is not CUDA-aware:
 * the staging transport (src/transport/cuda_staged.c; docs/gpu.md), without a GPU, as
 * tests/test_staged.c does for alltoallv.
 *
 * --driver PATH (tests/support/mock_cuda.c, libcuda.so.1) tells tuna which buffers are
 * device memory; --runtime PATH (tests/support/mock_cudart.c, libcudart.so.13) is the CUDA
 * runtime the transport copies with: its "device" buffers stay PROT_NONE except inside its
 * own copies, so a host access by tuna to them (a memcpy, MPI_Reduce_local, MPI reading
 * them) faults.
 *
 * Every device row of allgather (ring, recursive-doubling, recmul, recmul-permuted) and of
 * allreduce (ring, kring, recursive-doubling, recmul, recmul-permuted), blocking, nonblocking
 * and as a plan (3 starts, new data each), on device/device, device/host, host/device and
 * in-place device buffers; allreduce over MPI_INT SUM, MPI_DOUBLE MAX, MPI_UNSIGNED_CHAR
 * BXOR, MPI_LONG_LONG PROD and MPI_DOUBLE SUM (small integers: exact in any order), counts 0,
 * 1, 7 and 10000; the receive buffer (sentinel tail) byte for byte against PMPI_Allgather /
 * PMPI_Allreduce on host copies; the statistics name the row (no fallback); pinned memory
 * (the mock counts it): a second identical blocking call allocates none, the ring rows stay
 * within two rounds, a nonblocking operation frees its own, a plan allocates in its first
 * start only and frees it all with tuna_plan_free. auto: a device row where the MPI is not
 * CUDA-aware (the model's in blocking calls and plans, ring in nonblocking ones), else the
 * library's call with the reason; the forms not served (a user op, non-contiguous types,
 * kring allgather) the library's call with the reason. --auto-only: the auto cases alone (with TUNA_TUNING set: after checking that
 * host auto does not pick a device row under that table, so the restriction matters).
 * --fail-d2d (the test sets MOCK_CUDART_FAIL_D2D=1 around those calls): the own block's or
 * the input's device-to-device copy fails, so the call (blocking, nonblocking, the failing
 * start of a plan only) returns the error. Exit 0 when every check holds.
 */
#include "support/staged_mocks.h"


enum { AG, AR };
static const char *const coll_name[2] = {"allgather", "allreduce"};
enum { DD, DH, HD, IP, NPLACE };
static const char *const place_name[NPLACE] = {"device/device", "device/host", "host/device",
                                               "in place, device"};
enum { BLOCKING, NONBLOCKING, PLAN, NFORM };
static const char *const form_name[NFORM] = {"blocking", "nonblocking", "plan"};

/* One call's description. */
typedef struct spec {
    int coll;
    const char *row;
    int place, form;
    MPI_Datatype type;
    MPI_Op op;
    const char *tname;
    int count;
} spec;

static void fail(const spec *c, const char *what)
{
    if (failures++ < 20) {
        printf("[%d] FAILED: %s %s %s %s %s count %d: %s\n", me, coll_name[c->coll], c->row,
               form_name[c->form], place_name[c->place], c->tname, c->count, what);
        fflush(stdout);
    }
}

static size_t type_size(MPI_Datatype t)
{
    int s = 0;
    MPI_Type_size(t, &s);
    return (size_t)s;
}

/* n elements of t from this rank (salt: new data), values whose reductions are exact in any
 * order: small integers for the floating sums, 1..3 for the products. */
static void fill_elems(char *buf, MPI_Datatype t, int n, int salt)
{
    for (int i = 0; i < n; i++) {
        const int k = me * 37 + i * 11 + salt;
        if (t == MPI_DOUBLE) {
            const double v = (double)(k % 101) - 50.0;
            memcpy(buf + (size_t)i * sizeof v, &v, sizeof v);
        } else if (t == MPI_UNSIGNED_CHAR) {
            buf[i] = (char)(k & 255);
        } else if (t == MPI_LONG_LONG) {
            const long long v = 1 + (me + i + salt) % 3;
            memcpy(buf + (size_t)i * sizeof v, &v, sizeof v);
        } else { /* MPI_INT and contiguous ints */
            const size_t per = type_size(t) / sizeof(int);
            for (size_t j = 0; j < per; j++) {
                const int v = me * 1000 + i * 7 + (int)j + salt;
                memcpy(buf + ((size_t)i * per + j) * sizeof v, &v, sizeof v);
            }
        }
    }
}

static size_t type_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return (size_t)ext;
}

/* The buffers of c: sizes (send: one block or vector; receive: P blocks or one vector, each
 * with the sentinel tail). */
static size_t send_bytes(const spec *c)
{
    return (size_t)c->count * type_extent(c->type) + TAIL;
}
static size_t recv_bytes(const spec *c)
{
    return (size_t)c->count * type_extent(c->type) * (c->coll == AG ? (size_t)P : 1) + TAIL;
}

/* New data (salt) in s (or, in place, this rank's part of r), sentinels elsewhere; rs, rr the
 * host copies the library's call runs on. */
static void prepare(const spec *c, int salt, char *s, char *r, char *rs, char *rr)
{
    memset(s, SENTINEL, send_bytes(c));
    memset(r, SENTINEL, recv_bytes(c));
    if (c->place == IP)
        fill_elems(r + (c->coll == AG ? (size_t)me * c->count * type_size(c->type) : 0), c->type,
                   c->count, salt);
    else
        fill_elems(s, c->type, c->count, salt);
    memcpy(rs, s, send_bytes(c));
    memcpy(rr, r, recv_bytes(c));
}

static int sdev_of(const spec *c)
{
    return c->place == DD || c->place == DH;
}
static int rdev_of(const spec *c)
{
    return c->place == DD || c->place == HD || c->place == IP;
}

/* Tell the runtime which buffers are device memory (PROT_NONE outside its copies). */
static void protect(const spec *c, char *s, char *r)
{
    if (sdev_of(c))
        rt_device(s, page_round(send_bytes(c)));
    if (rdev_of(c))
        rt_device(r, page_round(recv_bytes(c)));
}

/* The blocking or nonblocking call (waited for). */
static int call(const spec *c, const void *s, void *r, MPI_Comm comm, const tuna_options *o)
{
    const void *sarg = c->place == IP ? MPI_IN_PLACE : s;
    tuna_request q = TUNA_REQUEST_NULL;
    int rc;
    if (c->coll == AG) {
        if (c->form == BLOCKING)
            return tuna_allgather(sarg, c->count, c->type, r, c->count, c->type, comm, o);
        rc = tuna_iallgather(sarg, c->count, c->type, r, c->count, c->type, comm, o, &q);
    } else {
        if (c->form == BLOCKING)
            return tuna_allreduce(sarg, r, c->count, c->type, c->op, comm, o);
        rc = tuna_iallreduce(sarg, r, c->count, c->type, c->op, comm, o, &q);
    }
    return rc != MPI_SUCCESS ? rc : tuna_request_wait(&q);
}

/* A plan (auto: asked to measure, which it does not on staged device buffers). */
static int init(const spec *c, const void *s, void *r, const tuna_options *o, tuna_plan *plan)
{
    const void *sarg = c->place == IP ? MPI_IN_PLACE : s;
    const unsigned flags = strcmp(c->row, "auto") ? 0 : TUNA_PLAN_MEASURE;
    if (c->coll == AG)
        return tuna_allgather_init(sarg, c->count, c->type, r, c->count, c->type, MPI_COMM_WORLD,
                                   o, flags, plan);
    return tuna_allreduce_init(sarg, r, c->count, c->type, c->op, MPI_COMM_WORLD, o, flags, plan);
}

/* The library's result on the host copies. */
static int reference(const spec *c, const char *rs, char *rr)
{
    const void *sarg = c->place == IP ? MPI_IN_PLACE : rs;
    if (c->coll == AG)
        return PMPI_Allgather(sarg, c->count, c->type, rr, c->count, c->type, MPI_COMM_WORLD);
    return PMPI_Allreduce(sarg, rr, c->count, c->type, c->op, MPI_COMM_WORLD);
}

static const char *const ag_rows[] = {"ring", "recursive-doubling", "recmul", "recmul-permuted"};
static const char *const ar_rows[] = {"ring", "kring", "recursive-doubling", "recmul",
                                      "recmul-permuted"};

/* Whether alg is one of the collective's rows that declare device memory. */
static int device_row(int coll, int alg)
{
    const tuna_collective tc = coll == AG ? TUNA_ALLGATHER : TUNA_ALLREDUCE;
    const int n = coll == AG ? 4 : 5;
    for (int i = 0; i < n; i++)
        if (alg == tuna_algorithm_find(tc, coll == AG ? ag_rows[i] : ar_rows[i]))
            return 1;
    return 0;
}

/* Pinned bytes of a ring row's round (one message each way; allreduce: a segment, also what
 * one reduction bounces), the bound of its peak being two of them. */
static size_t ring_round(const spec *c)
{
    const size_t n = c->coll == AG ? (size_t)c->count : ((size_t)c->count + P - 1) / P;
    const size_t b = n * type_size(c->type);
    return 2 * ((b + ALIGN - 1) / ALIGN * ALIGN);
}

/* Compare one outcome with the library's; st: the statistics of the call. want_alg < 0: any
 * device row chosen by the model (auto). */
static void check(const spec *c, int rc, int rc_ref, const char *s, const char *rs,
                  const char *r, const char *rr, const tuna_stats *st, int want_alg,
                  const char *when)
{
    char what[256];
    if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
        snprintf(what, sizeof what, "%sthe call failed: %s", when,
                 rc != MPI_SUCCESS ? tuna_error_string(rc) : "the reference");
        fail(c, what);
    } else if (memcmp(r, rr, recv_bytes(c)) != 0 || memcmp(s, rs, send_bytes(c)) != 0) {
        snprintf(what, sizeof what, "%snot the library's bytes", when);
        fail(c, what);
    } else if ((want_alg >= 0 ? st->algorithm != want_alg
                              : !device_row(c->coll, st->algorithm) ||
                                    (c->form == BLOCKING && st->auto_source != 1) ||
                                    (c->form == NONBLOCKING &&
                                     st->algorithm != tuna_algorithm_find(c->coll == AG
                                                                              ? TUNA_ALLGATHER
                                                                              : TUNA_ALLREDUCE,
                                                                          "ring"))) ||
               st->fallback) {
        snprintf(what, sizeof what, "%sthe row did not run (algorithm %d, fallback: %s)", when,
                 st->algorithm, st->fallback ? st->fallback : "none");
        fail(c, what);
    }
}

/* One case (c->form): checks as the header says. */
static void run_case(const spec *c, int salt)
{
    const tuna_collective tc = c->coll == AG ? TUNA_ALLGATHER : TUNA_ALLREDUCE;
    tuna_options o;
    if (tuna_options_parse(c->row, tc, &o) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    const int want = strcmp(c->row, "auto") ? o.algorithm : -1;
    const size_t sb = send_bytes(c), rb = recv_bytes(c);
    char *s = map(sb), *r = map(rb), *rs = malloc(sb), *rr = malloc(rb);
    char what[200];
    prepare(c, salt, s, r, rs, rr);
    drv_clear();
    if (sdev_of(c))
        drv_register(s, sb, 0);
    if (rdev_of(c))
        drv_register(r, rb, 0);
    long before[6], after[6], again[6];
    rt_stats(before);
    if (c->form != PLAN) {
        /* blocking ring: a communicator of its own, so that its pool is this case's alone
         * (the bound below); the other rows share MPI_COMM_WORLD's (a dup per case is slow
         * under MPICH) */
        const int own = c->form == BLOCKING && !strcmp(c->row, "ring");
        MPI_Comm comm = MPI_COMM_WORLD;
        if (own)
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        protect(c, s, r);
        int rc = call(c, s, r, comm, &o);
        rt_stats(after);
        const tuna_stats st = *tuna_stats_last();
        /* The same call again (in place: on the result, as the library's second call) */
        int rc2 = rc == MPI_SUCCESS ? call(c, s, r, comm, &o) : rc;
        rt_stats(again);
        rt_release();
        int rc_ref = reference(c, rs, rr);
        if (rc_ref == MPI_SUCCESS && rc2 == MPI_SUCCESS)
            rc_ref = reference(c, rs, rr);
        check(c, rc == MPI_SUCCESS ? rc2 : rc, rc_ref, s, rs, r, rr, &st, want, "");
        if (c->form == NONBLOCKING && (after[3] != before[3] || again[3] != before[3])) {
            snprintf(what, sizeof what, "%ld pinned bytes left after the operation",
                     again[3] - before[3]);
            fail(c, what);
        }
        if (c->form == BLOCKING) {
            if (again[5] != after[5]) {
                snprintf(what, sizeof what, "%ld pinned allocations in the second call",
                         again[5] - after[5]);
                fail(c, what);
            }
            if (own && (size_t)after[4] > (size_t)before[4] + 2 * ring_round(c)) {
                snprintf(what, sizeof what, "pinned peak %ld bytes above two rounds (%zu)",
                         after[4] - before[4], 2 * ring_round(c));
                fail(c, what);
            }
        }
        if (own) {
            MPI_Comm_free(&comm);
            rt_stats(after);
            if (after[3] != before[3]) {
                snprintf(what, sizeof what, "%ld pinned bytes left with the communicator freed",
                         after[3] - before[3]);
                fail(c, what);
            }
        }
    } else {
        tuna_plan plan = NULL;
        const long pinned_at_init = before[3];
        protect(c, s, r);
        int rc = init(c, s, r, &o, &plan);
        rt_stats(after);
        if (rc != MPI_SUCCESS)
            fail(c, "the plan's init failed");
        else if (after[5] != before[5])
            fail(c, "the init allocated pinned memory");
        for (int k = 0; k < 3 && rc == MPI_SUCCESS; k++) {
            if (k > 0) { /* new data, sentinels */
                rt_release();
                prepare(c, salt + 101 * k, s, r, rs, rr);
                protect(c, s, r);
            }
            rt_stats(before);
            rc = tuna_start(plan);
            if (rc == MPI_SUCCESS)
                rc = tuna_wait(plan);
            rt_stats(after);
            const tuna_stats st = *tuna_stats_last();
            rt_release();
            snprintf(what, sizeof what, "start %d: ", k + 1);
            check(c, rc, reference(c, rs, rr), s, rs, r, rr, &st, want, what);
            if (k > 0 && after[5] != before[5]) {
                snprintf(what, sizeof what, "start %d: %ld pinned allocations (want none)", k + 1,
                         after[5] - before[5]);
                fail(c, what);
            }
        }
        if (plan && tuna_plan_free(&plan) != MPI_SUCCESS)
            fail(c, "tuna_plan_free failed");
        rt_stats(after);
        if (after[3] != pinned_at_init) {
            snprintf(what, sizeof what, "%ld pinned bytes left after tuna_plan_free",
                     after[3] - pinned_at_init);
            fail(c, what);
        }
    }
    case_free(s, sb, r, rb, rs, rr);
}

/* A call the library serves (the "device" buffers left readable, as a CUDA-aware library
 * would read them): its bytes, the vendor row, a reason with `why` in it. */
static void run_library_case(const spec *c, const char *why)
{
    const tuna_collective tc = c->coll == AG ? TUNA_ALLGATHER : TUNA_ALLREDUCE;
    tuna_options o;
    if (tuna_options_parse(c->row, tc, &o) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    const size_t sb = send_bytes(c), rb = recv_bytes(c);
    char *s = map(sb), *r = map(rb), *rs = malloc(sb), *rr = malloc(rb);
    /* non-contiguous types: bytes of ints whatever the type (the reference sees the same) */
    memset(s, 0, sb);
    for (size_t k = 0; k + sizeof(int) <= sb - TAIL; k += sizeof(int)) {
        const int v = me * 100 + (int)(k / sizeof(int)) % 50;
        memcpy(s + k, &v, sizeof v);
    }
    memset(r, SENTINEL, rb);
    memcpy(rs, s, sb);
    memcpy(rr, r, rb);
    drv_clear();
    drv_register(s, sb, 0);
    drv_register(r, rb, 0);
    int rc;
    if (c->form == PLAN) {
        tuna_plan plan = NULL;
        rc = init(c, s, r, &o, &plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_start(plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(plan);
        if (plan)
            tuna_plan_free(&plan);
    } else {
        rc = call(c, s, r, MPI_COMM_WORLD, &o);
    }
    const tuna_stats st = *tuna_stats_last();
    drv_clear();
    const int rc_ref = reference(c, rs, rr);
    if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS)
        fail(c, "the call failed");
    else if (memcmp(r, rr, rb) != 0)
        fail(c, "not the library's bytes");
    else if (st.algorithm != tuna_algorithm_find(tc, "vendor") || !st.fallback ||
             !strstr(st.fallback, "device buffers") || !strstr(st.fallback, why)) {
        char what[300];
        snprintf(what, sizeof what, "not the library's call with the reason (%s): %s", why,
                 st.fallback ? st.fallback : "none");
        fail(c, what);
    }
    munmap(s, page_round(sb));
    munmap(r, page_round(rb));
    free(rs);
    free(rr);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* A failed device copy (MOCK_CUDART_FAIL_D2D=1 while the own block or the input is copied
 * device to device): the call's error on every rank, and a plan's failing start only. */
static void run_copy_error(int coll, int form)
{
    spec c = {coll, coll == AG ? "ring" : "recmul", DD, form, MPI_INT, MPI_SUM, "MPI_INT", 37};
    const tuna_collective tc = coll == AG ? TUNA_ALLGATHER : TUNA_ALLREDUCE;
    tuna_options o;
    tuna_options_parse(c.row, tc, &o);
    const size_t sb = send_bytes(&c), rb = recv_bytes(&c);
    char *s = map(sb), *r = map(rb), *rs = malloc(sb), *rr = malloc(rb);
    prepare(&c, 1, s, r, rs, rr);
    drv_clear();
    drv_register(s, sb, 0);
    drv_register(r, rb, 0);
    protect(&c, s, r);
    if (form != PLAN) {
        setenv("MOCK_CUDART_FAIL_D2D", "1", 1);
        const int rc = call(&c, s, r, MPI_COMM_WORLD, &o);
        unsetenv("MOCK_CUDART_FAIL_D2D");
        if (rc == MPI_SUCCESS)
            fail(&c, "a failed device copy was not the call's error");
        else if (!strstr(tuna_error_string(rc), "device-to-device"))
            fail(&c, "the error does not say which copy");
    } else {
        tuna_plan plan = NULL;
        int prc = init(&c, s, r, &o, &plan);
        for (int k = 0; k < 3 && prc == MPI_SUCCESS; k++) {
            if (k == 1)
                setenv("MOCK_CUDART_FAIL_D2D", "1", 1);
            int rc = tuna_start(plan);
            if (rc == MPI_SUCCESS)
                rc = tuna_wait(plan);
            unsetenv("MOCK_CUDART_FAIL_D2D");
            if ((rc != MPI_SUCCESS) != (k == 1))
                fail(&c, k == 1 ? "plan: a failed device copy was not the start's error"
                                : "plan: an error without a failed copy");
        }
        if (prc != MPI_SUCCESS)
            fail(&c, "plan: the init failed");
        if (plan)
            tuna_plan_free(&plan);
    }
    case_free(s, sb, r, rb, rs, rr);
}

int main(int argc, char **argv)
{
    int fail_d2d = 0, auto_only = 0;
    for (int i = 1; i < argc; i++) {
        fail_d2d |= !strcmp(argv[i], "--fail-d2d");
        auto_only |= !strcmp(argv[i], "--auto-only");
    }
    if (!mocks_load(argc, argv, "test_staged_collectives"))
        return 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    tuna_stats_enable(1);
    /* The first call on the communicator is blocking: a nonblocking first call sets tuna up
     * only where the MPI has MPI_Comm_idup, else it is the library's (docs/nonblocking.md),
     * which would read the "device" buffers. */
    {
        int x = me, y = 0;
        tuna_allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL);
    }
    if (fail_d2d) {
        for (int coll = AG; coll <= AR; coll++)
            for (int form = 0; form < NFORM; form++)
                run_copy_error(coll, form);
    } else {
        MPI_Datatype four; /* a contiguous derived type */
        MPI_Type_contiguous(4, MPI_INT, &four);
        MPI_Type_commit(&four);
        static const char *const ag_named[] = {"ring", "recursive-doubling", "recmul:k=3",
                                               "recmul-permuted:k=3", "recmul-permuted"};
        static const char *const ar_named[] = {"ring", "kring:k=2", "recursive-doubling",
                                               "recmul:k=3", "recmul-permuted:k=3"};
        int salt = 0;
        if (auto_only && getenv("TUNA_TUNING")) { /* the restriction must matter: host auto
                                                    picks the library under this table */
            for (int coll = AG; coll <= AR; coll++) {
                int x[300] = {0}, y[300 * 8];
                tuna_options o;
                tuna_options_parse("auto", coll == AG ? TUNA_ALLGATHER : TUNA_ALLREDUCE, &o);
                if (coll == AG)
                    tuna_allgather(x, 300, MPI_INT, y, 300, MPI_INT, MPI_COMM_WORLD, &o);
                else
                    tuna_allreduce(x, y, 300, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &o);
                if (device_row(coll, tuna_stats_last()->algorithm)) {
                    const spec c = {coll, "auto", DD, BLOCKING, MPI_INT, MPI_SUM, "host", 300};
                    fail(&c, "host auto chose a device row: the test does not check the "
                             "restriction");
                }
            }
        }
        for (int form = 0; form < NFORM && !auto_only; form++)
            for (int place = 0; place < NPLACE; place++) {
                for (size_t i = 0; i < sizeof ag_named / sizeof ag_named[0]; i++) {
                    static const int counts[] = {1, 37, 2500};
                    for (int n = 0; n < 3; n++) {
                        const spec c = {AG, ag_named[i], place, form, MPI_INT, MPI_OP_NULL,
                                        "MPI_INT", counts[n]};
                        run_case(&c, salt++);
                    }
                    const spec c4 = {AG, ag_named[i], place, form, four, MPI_OP_NULL,
                                     "contiguous(4, MPI_INT)", 5};
                    run_case(&c4, salt++);
                }
                for (size_t i = 0; i < sizeof ar_named / sizeof ar_named[0]; i++) {
                    static const struct {
                        MPI_Datatype t;
                        MPI_Op op;
                        const char *name;
                    } to[] = {{MPI_INT, MPI_SUM, "MPI_INT SUM"},
                              {MPI_DOUBLE, MPI_MAX, "MPI_DOUBLE MAX"},
                              {MPI_UNSIGNED_CHAR, MPI_BXOR, "MPI_UNSIGNED_CHAR BXOR"},
                              {MPI_LONG_LONG, MPI_PROD, "MPI_LONG_LONG PROD"},
                              {MPI_DOUBLE, MPI_SUM, "MPI_DOUBLE SUM"}};
                    static const int counts[] = {0, 1, 7, 10000};
                    for (size_t t = 0; t < sizeof to / sizeof to[0]; t++)
                        for (int n = 0; n < 4; n++) {
                            /* the large vector with the first two pairs only: time */
                            if (counts[n] == 10000 && t > 1)
                                continue;
                            const spec c = {AR, ar_named[i], place, form, to[t].t, to[t].op,
                                            to[t].name, counts[n]};
                            run_case(&c, salt++);
                        }
                }
            }
        /* auto: a device row where the MPI is not CUDA-aware (the model's; ring in nonblocking
         * calls), else the library's call. */
        for (int coll = AG; coll <= AR; coll++)
            for (int place = 0; place < NPLACE; place++)
                for (int form = 0; form < NFORM; form++) {
                    const spec c = {coll, "auto", place, form, MPI_INT,
                                    coll == AR ? MPI_SUM : MPI_OP_NULL, "MPI_INT", 300};
                    if (auto_stages())
                        run_case(&c, salt++);
                    else
                        run_library_case(&c, "auto keeps the library's");
                }
        /* The forms the rows do not serve: the library's call with the reason. */
        MPI_Datatype vec, v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * (MPI_Aint)sizeof(int), &vec);
        MPI_Type_free(&v);
        MPI_Type_commit(&vec);
        MPI_Op user;
        MPI_Op_create(user_sum, 1, &user);
        for (int form = 0; form < NFORM && !auto_only; form++) {
            const spec lib[] = {
                {AR, "ring", DD, form, MPI_INT, user, "MPI_INT, a user op", 33},
                {AR, "recmul", DH, form, MPI_DOUBLE_INT, MPI_MAXLOC, "MPI_DOUBLE_INT MAXLOC",
                 33},
                {AG, "ring", DD, form, vec, MPI_OP_NULL, "vector of MPI_INT", 33},
                {AG, "kring", DD, form, MPI_INT, MPI_OP_NULL, "MPI_INT", 33},
            };
            static const char *const why[] = {"predefined MPI_Op", "without gaps",
                                              "contiguous datatypes", "does not serve"};
            for (int i = 0; i < 4; i++)
                run_library_case(&lib[i], why[i]);
        }
        MPI_Op_free(&user);
        MPI_Type_free(&vec);
        MPI_Type_free(&four);
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("staged allgather and allreduce on device memory (P = %d%s, auto %s): %s\n", P,
               fail_d2d ? ", a failed device copy" : auto_only ? ", auto only" : "",
               auto_stages() ? "staging" : "the library's call", total ? "FAILED" : "ok");
    MPI_Finalize();
    return total ? 1 : 0;
}
