/*
 * tuna's alltoallv rows on device memory over an MPI that is not CUDA-aware: the staging
 * transport (src/transport/cuda_staged.c; docs/gpu.md), without a GPU.
 *
 * --driver PATH (tests/support/mock_cuda.c, libcuda.so.1) tells tuna which buffers are
 * device memory; --runtime PATH (tests/support/mock_cudart.c, libcudart.so.13) is the CUDA
 * runtime the transport copies with: its "device" buffers stay PROT_NONE except inside its
 * own copies, so a host access by tuna to them faults. Both are loaded before MPI_Init, as
 * a CUDA application would have loaded the real ones.
 *
 * Every device-capable row (blocking, nonblocking and plans), on device/device, device/host
 * and host/device buffers,
 * with blocks of varied sizes (empty ones included) at scattered displacements, and for MPI_INT
 * and a contiguous derived type (MPI_INT through tuna_alltoallv_c too): the receive buffer
 * (sentinel-filled gaps and tail) byte for byte against PMPI_Alltoallv on host copies; the
 * statistics name the row (not the library); the runtime counted the copies expected (one to
 * host per non-empty block sent to a peer, one to the device per non-empty block received, one
 * copy for the own block); pinned memory is bounded by the row's largest round, and a second
 * identical call allocates none. Plans (tuna_alltoallv_init, _init_c): 3 starts with new send
 * data each, each checked as a call; pinned memory allocated in the first start only, none
 * left after tuna_plan_free. --fail-d2d (with the runtime's MOCK_CUDART_FAIL_D2D=1):
 * device-to-device copies fail, so every rank with an own block must get the call's error
 * (never silent), and a plan's start with the failure gets it, the starts before and after
 * not. The forms the rows do not serve on device memory (a non-contiguous datatype,
 * MPI_IN_PLACE; blocking and persistent) go to the library's own call with the reason in the
 * statistics ("device" buffers left readable for the library). Exit 0 when every check holds.
 */
#include "support/staged_mocks.h"

static MPI_Comm the_comm; /* the communicator of tuna's calls (run_case) */

static void fail(const char *row, const char *place, const char *type, const char *what)
{
    if (failures++ < 20) {
        printf("[%d] FAILED: %s %s %s: %s\n", me, row, place, type, what);
        fflush(stdout);
    }
}

enum { DD, DH, HD, NPLACE };
static const char *const place_name[NPLACE] = {"device/device", "device/host", "host/device"};

/* Ints from rank src to rank dst: 0 for some pairs, up to a few thousand. */
static int tiny; /* --tiny: every block 1 int (auto's model then prefers rows of few messages) */

static int count_of(int src, int dst, int salt)
{
    if (tiny)
        return 1;
    const int k = (src * 7 + dst * 3 + salt) % 5;
    return k == 0 ? 0 : k == 1 ? 1 : k == 2 ? 37 : k == 3 ? 1500 : 4099;
}

typedef struct layout {
    int sc[8], sd[8], rc[8], rd[8];
    size_t sbytes, rbytes; /* buffer sizes with gaps and tail */
} layout;

/* Counts in elements of `unit` ints; blocks in reverse order with a gap of 3 units. */
static void layout_make(layout *l, int unit, int salt)
{
    int s = 3, r = 5;
    for (int j = P - 1; j >= 0; j--) {
        l->sc[j] = count_of(me, j, salt) / unit;
        l->sd[j] = s;
        s += l->sc[j] + 3;
    }
    for (int j = 0; j < P; j++) {
        l->rc[j] = count_of(j, me, salt) / unit;
        l->rd[j] = r;
        r += l->rc[j] + 3;
    }
    l->sbytes = (size_t)s * unit * sizeof(int) + TAIL;
    l->rbytes = (size_t)r * unit * sizeof(int) + TAIL;
}

/* What a call on l copies (every non-empty block to a peer goes to host memory from a device
 * send side, every non-empty one from a peer to a device receive side; the own block is one
 * copy, whichever way) and its rounds in bounce memory: all messages, and the largest pair. */
typedef struct expect {
    long to_host, to_dev, dd;
    size_t round_all, round_max;
} expect;

static expect expect_of(const layout *l, int unit, int sdev, int rdev)
{
    expect x = {0};
    for (int j = 0; j < P; j++) {
        const size_t sb = (size_t)l->sc[j] * unit * sizeof(int),
                     rb = (size_t)l->rc[j] * unit * sizeof(int);
        if (j == me) {
            x.dd = sb > 0 && sdev && rdev;
            x.to_host += sb > 0 && sdev && !rdev;
            x.to_dev += sb > 0 && rdev && !sdev;
            continue;
        }
        x.to_host += sb > 0 && sdev;
        x.to_dev += rb > 0 && rdev;
        const size_t pair = (sb + ALIGN - 1) / ALIGN * ALIGN + (rb + ALIGN - 1) / ALIGN * ALIGN;
        x.round_all += pair;
        x.round_max = pair > x.round_max ? pair : x.round_max;
    }
    return x;
}

/* tuna_alltoallv, or (large) tuna_alltoallv_c on the same layout; nb: the nonblocking form,
 * waited for. */
static int a2av(int large, int nb, const void *s, const layout *l, MPI_Datatype type, void *r,
                const tuna_options *o)
{
    tuna_request q = TUNA_REQUEST_NULL;
    int rc;
    if (!large) {
        if (!nb)
            return tuna_alltoallv(s, l->sc, l->sd, type, r, l->rc, l->rd, type, the_comm,
                                  o);
        rc = tuna_ialltoallv(s, l->sc, l->sd, type, r, l->rc, l->rd, type, the_comm, o, &q);
        return rc != MPI_SUCCESS ? rc : tuna_request_wait(&q);
    }
    MPI_Count sc[8], rcn[8];
    MPI_Aint sd[8], rd[8];
    for (int j = 0; j < P; j++)
        sc[j] = l->sc[j], rcn[j] = l->rc[j], sd[j] = l->sd[j], rd[j] = l->rd[j];
    if (!nb)
        return tuna_alltoallv_c(s, sc, sd, type, r, rcn, rd, type, the_comm, o);
    rc = tuna_ialltoallv_c(s, sc, sd, type, r, rcn, rd, type, the_comm, o, &q);
    return rc != MPI_SUCCESS ? rc : tuna_request_wait(&q);
}

/* One call of row on place with type (unit ints per element): checks as the header says.
 * large: through tuna_alltoallv_c; nb: the nonblocking form. */
static void run_case(const char *row, int place, MPI_Datatype type, int unit, const char *tname,
                     int salt, int large, int nb)
{
    layout l;
    layout_make(&l, unit, salt);
    char *s = map(l.sbytes), *r = map(l.rbytes);
    char *rs = malloc(l.sbytes), *rr = malloc(l.rbytes);
    memset(s, SENTINEL, l.sbytes);
    memset(r, SENTINEL, l.rbytes);
    for (size_t k = 0; k + sizeof(int) <= l.sbytes - TAIL; k += sizeof(int)) {
        const int v = me * 1000003 + (int)k + salt;
        memcpy(s + k, &v, sizeof v);
    }
    memcpy(rs, s, l.sbytes);
    memcpy(rr, r, l.rbytes);
    const int sdev = place == DD || place == DH, rdev = place == DD || place == HD;
    drv_clear();
    if (sdev) {
        drv_register(s, l.sbytes, 0);
        rt_device(s, page_round(l.sbytes));
    }
    if (rdev) {
        drv_register(r, l.rbytes, 0);
        rt_device(r, page_round(l.rbytes));
    }
    tuna_options o;
    if (tuna_options_parse(row, TUNA_ALLTOALLV, &o) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    long before[6], after[6], again[6];
    rt_stats(before);
    int rc = a2av(large, nb, s, &l, type, r, &o);
    rt_stats(after);
    const tuna_stats st = *tuna_stats_last();
    /* The same call again: no pinned memory allocated (the pool fits its rounds now). */
    int rc2 = rc == MPI_SUCCESS ? a2av(large, nb, s, &l, type, r, &o) : rc;
    rt_stats(again);
    rt_release();
    drv_clear();
    int rc_ref = PMPI_Alltoallv(rs, l.sc, l.sd, type, rr, l.rc, l.rd, type, MPI_COMM_WORLD);
    char what[160];
    if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
        fail(row, place_name[place], tname, "the call failed");
    } else if (memcmp(r, rr, l.rbytes) != 0 || memcmp(s, rs, l.sbytes) != 0) {
        fail(row, place_name[place], tname, "not the library's bytes");
    } else if (st.algorithm != o.algorithm || st.fallback) {
        snprintf(what, sizeof what, "the row did not run (fallback: %s)",
                 st.fallback ? st.fallback : "none");
        fail(row, place_name[place], tname, what);
    } else {
        const expect x = expect_of(&l, unit, sdev, rdev);
        const long to_host = x.to_host, to_dev = x.to_dev, dd = x.dd;
        const size_t round_all = x.round_all, round_max = x.round_max;
        const long got_host = after[0] - before[0], got_dev = after[1] - before[1],
                   got_dd = after[2] - before[2];
        if ((sdev && got_host != to_host) || (rdev && got_dev != to_dev) ||
            (sdev && rdev && got_dd != dd)) {
            snprintf(what, sizeof what,
                     "copies to host %ld (want %ld), to device %ld (want %ld), device %ld "
                     "(want %ld)",
                     got_host, to_host, got_dev, to_dev, got_dd, dd);
            fail(row, place_name[place], tname, what);
        }
        /* Pinned memory: at most two copies of a round (the pool and the first call's
         * chunks), a round being one pair for pairwise and xor, every message otherwise;
         * blocking: nothing allocated by the second call (the communicator's pool);
         * nonblocking: all of it freed with the operation. */
        const int one_pair = !strcmp(row, "pairwise") || !strcmp(row, "xor");
        const size_t bound = 2 * (one_pair ? round_max : round_all);
        if ((size_t)after[4] > bound + (size_t)before[4] ||
            (nb ? after[3] != before[3] || again[3] != before[3] : again[5] != after[5])) {
            snprintf(what, sizeof what,
                     "pinned memory: peak %ld bytes (bound %zu), %ld allocations in the "
                     "second call",
                     after[4] - before[4], bound, again[5] - after[5]);
            fail(row, place_name[place], tname, what);
        }
    }
    munmap(s, page_round(l.sbytes));
    munmap(r, page_round(l.rbytes));
    free(rs);
    free(rr);
}

/* Fill the send buffer (start k of a plan: new data each start) and sentinel the receive one;
 * rs, rr: the host copies the library's call runs on. */
static void fill(char *s, char *rs, const layout *l, int salt, char *r, char *rr)
{
    memset(s, SENTINEL, l->sbytes);
    memset(r, SENTINEL, l->rbytes);
    for (size_t k = 0; k + sizeof(int) <= l->sbytes - TAIL; k += sizeof(int)) {
        const int v = me * 1000003 + (int)k * 7 + salt;
        memcpy(s + k, &v, sizeof v);
    }
    memcpy(rs, s, l->sbytes);
    memcpy(rr, r, l->rbytes);
}

/* fill, and the driver told which buffers are device memory (sdev, rdev). */
static void prepare(char *s, char *rs, const layout *l, int salt, char *r, char *rr, int sdev,
                    int rdev)
{
    fill(s, rs, l, salt, r, rr);
    drv_clear();
    if (sdev)
        drv_register(s, l->sbytes, 0);
    if (rdev)
        drv_register(r, l->rbytes, 0);
}

/* A plan of row on place (tuna_alltoallv_init, or _init_c with large), started 3 times with
 * the send buffer rewritten between starts: each start byte for byte against PMPI_Alltoallv
 * on host copies, the statistics naming the row; no pinned memory allocated by the init nor
 * by the second and third starts, the copies of every start counted as in run_case, and all
 * pinned memory freed with the plan. */
static void run_plan_case(const char *row, int place, MPI_Datatype type, int unit,
                          const char *tname, int salt, int large)
{
    layout l;
    layout_make(&l, unit, salt);
    char *s = map(l.sbytes), *r = map(l.rbytes);
    char *rs = malloc(l.sbytes), *rr = malloc(l.rbytes);
    const int sdev = place == DD || place == DH, rdev = place == DD || place == HD;
    char what[200];
    prepare(s, rs, &l, salt, r, rr, sdev, rdev);
    tuna_options o;
    if (tuna_options_parse(row, TUNA_ALLTOALLV, &o) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    long before[6], now[6], prev[6];
    rt_stats(before);
    tuna_plan plan = NULL;
    int rc;
    if (sdev)
        rt_device(s, page_round(l.sbytes));
    if (rdev)
        rt_device(r, page_round(l.rbytes));
    if (!large) {
        rc = tuna_alltoallv_init(s, l.sc, l.sd, type, r, l.rc, l.rd, type, the_comm, &o, 0, &plan);
    } else {
        MPI_Count sc[8], rcn[8];
        MPI_Aint sd[8], rd[8];
        for (int j = 0; j < P; j++)
            sc[j] = l.sc[j], rcn[j] = l.rc[j], sd[j] = l.sd[j], rd[j] = l.rd[j];
        rc = tuna_alltoallv_init_c(s, sc, sd, type, r, rcn, rd, type, the_comm, &o, 0, &plan);
    }
    rt_stats(prev);
    if (rc != MPI_SUCCESS)
        fail(row, place_name[place], tname, "the plan's init failed");
    else if (prev[5] != before[5])
        fail(row, place_name[place], tname, "the init allocated pinned memory");
    /* What a start copies and the round sizes (as run_case). */
    const expect x = expect_of(&l, unit, sdev, rdev);
    const long to_host = x.to_host, to_dev = x.to_dev, dd = x.dd;
    const size_t round_all = x.round_all;
    for (int k = 0; k < 3 && rc == MPI_SUCCESS; k++) {
        if (k > 0) { /* new data in the send buffer, sentinels in the receive buffer */
            rt_release();
            fill(s, rs, &l, salt + 101 * k, r, rr);
            if (sdev)
                rt_device(s, page_round(l.sbytes));
            if (rdev)
                rt_device(r, page_round(l.rbytes));
        }
        rt_stats(prev);
        rc = tuna_start(plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(plan);
        rt_stats(now);
        const tuna_stats st = *tuna_stats_last();
        rt_release();
        const int rc_ref =
            PMPI_Alltoallv(rs, l.sc, l.sd, type, rr, l.rc, l.rd, type, MPI_COMM_WORLD);
        snprintf(what, sizeof what, "plan, start %d", k + 1);
        if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
            fail(row, place_name[place], tname, "a start failed");
        } else if (memcmp(r, rr, l.rbytes) != 0 || memcmp(s, rs, l.sbytes) != 0) {
            strcat(what, ": not the library's bytes");
            fail(row, place_name[place], tname, what);
        } else if (st.algorithm != o.algorithm || st.fallback) {
            snprintf(what, sizeof what, "plan, start %d: the row did not run (fallback: %s)",
                     k + 1, st.fallback ? st.fallback : "none");
            fail(row, place_name[place], tname, what);
        } else if ((sdev && now[0] - prev[0] != to_host) || (rdev && now[1] - prev[1] != to_dev) ||
                   (sdev && rdev && now[2] - prev[2] != dd)) {
            snprintf(what, sizeof what,
                     "plan, start %d: copies to host %ld (want %ld), to device %ld (want %ld), "
                     "device %ld (want %ld)",
                     k + 1, now[0] - prev[0], to_host, now[1] - prev[1], to_dev,
                     now[2] - prev[2], dd);
            fail(row, place_name[place], tname, what);
        } else if (k == 0 ? round_all > 0 && now[5] == prev[5] : now[5] != prev[5]) {
            snprintf(what, sizeof what,
                     "plan, start %d: %ld pinned allocations (want %s)", k + 1, now[5] - prev[5],
                     k == 0 ? "some: the pool" : "none");
            fail(row, place_name[place], tname, what);
        }
    }
    if (plan && tuna_plan_free(&plan) != MPI_SUCCESS)
        fail(row, place_name[place], tname, "tuna_plan_free failed");
    rt_stats(now);
    if (now[3] != before[3]) {
        snprintf(what, sizeof what, "plan: %ld pinned bytes left after tuna_plan_free",
                 now[3] - before[3]);
        fail(row, place_name[place], tname, what);
    }
    case_free(s, l.sbytes, r, l.rbytes, rs, rr);
}

static int device_row(int alg)
{
    static const char *const rows[] = {"spreadout", "scattered", "linear",
                                       "pairwise",  "xor",       "multipair"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (alg == tuna_algorithm_find(TUNA_ALLTOALLV, rows[i]))
            return 1;
    return 0;
}

/* auto on device buffers (place), blocking, nonblocking (nb) or a plan (pers, measured):
 * staged with a row that declares device memory where the MPI is not CUDA-aware (the model's
 * for blocking calls and plans, scattered for nonblocking ones; the buffers PROT_NONE then),
 * else the library's call with the reason. Bytes against PMPI_Alltoallv on host copies
 * either way. */
enum { BLOCKING, NONBLOCKING, PLAN, NFORM };
static const char *const form_name[NFORM] = {"auto", "auto, tuna_ialltoallv",
                                             "auto, tuna_alltoallv_init (measure)"};

static void run_auto_case(int place, int form, int salt)
{
    layout l;
    layout_make(&l, 1, salt);
    char *s = map(l.sbytes), *r = map(l.rbytes);
    char *rs = malloc(l.sbytes), *rr = malloc(l.rbytes);
    const int sdev = place == DD || place == DH, rdev = place == DD || place == HD;
    const int staged = auto_stages();
    prepare(s, rs, &l, salt, r, rr, sdev, rdev);
    if (staged && sdev) /* only staged calls must never touch them */
        rt_device(s, page_round(l.sbytes));
    if (staged && rdev)
        rt_device(r, page_round(l.rbytes));
    tuna_options o;
    tuna_options_parse("auto", TUNA_ALLTOALLV, &o);
    int rc, planned = -1;
    tuna_plan plan = NULL;
    if (form == PLAN) {
        rc = tuna_alltoallv_init(s, l.sc, l.sd, MPI_INT, r, l.rc, l.rd, MPI_INT, the_comm, &o,
                                 TUNA_PLAN_MEASURE, &plan);
        tuna_plan_info info;
        if (rc == MPI_SUCCESS && tuna_plan_get_info(plan, &info) == MPI_SUCCESS)
            planned = info.algorithm;
        if (rc == MPI_SUCCESS)
            rc = tuna_start(plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(plan);
    } else {
        rc = a2av(0, form == NONBLOCKING, s, &l, MPI_INT, r, &o);
    }
    const tuna_stats st = *tuna_stats_last();
    if (plan)
        tuna_plan_free(&plan);
    rt_release();
    drv_clear();
    const int rc_ref = PMPI_Alltoallv(rs, l.sc, l.sd, MPI_INT, rr, l.rc, l.rd, MPI_INT,
                                      MPI_COMM_WORLD);
    const int vendor = tuna_algorithm_find(TUNA_ALLTOALLV, "vendor");
    const char *want = "auto keeps the library's call";
    const int fixed = tuna_algorithm_find(TUNA_ALLTOALLV, "scattered");
    char what[200];
    if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS) {
        fail("auto", place_name[place], form_name[form], "the call failed");
    } else if (memcmp(r, rr, l.rbytes) != 0 || memcmp(s, rs, l.sbytes) != 0) {
        fail("auto", place_name[place], form_name[form], "not the library's bytes");
    } else if (staged && (!device_row(st.algorithm) || st.fallback ||
                          (form == PLAN          ? planned != st.algorithm
                           : form == NONBLOCKING ? st.algorithm != fixed
                                                 : st.auto_source != 1))) {
        snprintf(what, sizeof what, "staged: ran %s (fallback: %s), plan chose %d",
                 tuna_algorithm_get(TUNA_ALLTOALLV, st.algorithm)->name,
                 st.fallback ? st.fallback : "none", planned);
        fail("auto", place_name[place], form_name[form], what);
    } else if (!staged && (st.algorithm != vendor || !st.fallback || !strstr(st.fallback, want) ||
                           !strstr(st.fallback, place == DD ? "device buffers"
                                                            : "host and device buffers"))) {
        snprintf(what, sizeof what, "the library's call: ran %s (fallback: %s)",
                 tuna_algorithm_get(TUNA_ALLTOALLV, st.algorithm)->name,
                 st.fallback ? st.fallback : "none");
        fail("auto", place_name[place], form_name[form], what);
    }
    munmap(s, page_round(l.sbytes));
    munmap(r, page_round(l.rbytes));
    free(rs);
    free(rr);
}

/* A form the rows do not serve, blocking or persistent (pers): the library's call on
 * "device" buffers the driver reports but the runtime leaves readable (the library reads
 * them as host memory here). */
enum { VECTOR, INPLACE, NLIB };
static const char *const lib_name[2][NLIB] = {{"vector datatype", "in place"},
                                              {"persistent, vector datatype",
                                               "persistent, in place"}};

static void run_library_case(int form, int pers)
{
    layout l;
    layout_make(&l, 1, 1);
    /* vector: every int of a block is one element of stride 2, so the buffers double */
    const size_t scale = form == VECTOR ? 2 : 1;
    if (form == INPLACE) { /* symmetric counts: what j sends here is what this rank sends j */
        int at = 5;
        for (int j = 0; j < P; j++) {
            l.rc[j] = count_of(me < j ? me : j, me < j ? j : me, 1);
            l.rd[j] = at;
            at += l.rc[j] + 3;
        }
        l.rbytes = (size_t)at * sizeof(int) + TAIL;
    }
    const size_t sb = l.sbytes * scale, rb = l.rbytes * scale;
    char *s = malloc(sb), *r = malloc(rb), *rs = malloc(sb), *rr = malloc(rb);
    for (size_t k = 0; k < sb; k++)
        s[k] = rs[k] = (char)(me * 31 + (int)k);
    for (size_t k = 0; k < rb; k++)
        r[k] = rr[k] = form == INPLACE ? (char)(me * 17 + (int)k) : (char)SENTINEL;
    MPI_Datatype t = MPI_INT;
    if (form == VECTOR) {
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * (MPI_Aint)sizeof(int), &t);
        MPI_Type_free(&v);
        MPI_Type_commit(&t);
    }
    drv_clear();
    drv_register(s, sb, 0);
    drv_register(r, rb, 0);
    tuna_options o;
    tuna_options_parse("pairwise", TUNA_ALLTOALLV, &o);
    const void *sarg = form == INPLACE ? MPI_IN_PLACE : s;
    int rc;
    if (pers) {
        tuna_plan plan = NULL;
        rc = tuna_alltoallv_init(sarg, l.sc, l.sd, t, r, l.rc, l.rd, t, MPI_COMM_WORLD, &o, 0,
                                 &plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_start(plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(plan);
        if (plan)
            tuna_plan_free(&plan);
    } else {
        rc = tuna_alltoallv(sarg, l.sc, l.sd, t, r, l.rc, l.rd, t, MPI_COMM_WORLD, &o);
    }
    const tuna_stats st = *tuna_stats_last();
    drv_clear();
    const int rc_ref = PMPI_Alltoallv(form == INPLACE ? MPI_IN_PLACE : rs, l.sc, l.sd, t, rr,
                                      l.rc, l.rd, t, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || rc_ref != MPI_SUCCESS)
        fail("pairwise", "device/device", lib_name[pers][form], "the call failed");
    else if (memcmp(r, rr, rb) != 0)
        fail("pairwise", "device/device", lib_name[pers][form], "not the library's bytes");
    else if (st.algorithm != tuna_algorithm_find(TUNA_ALLTOALLV, "vendor") || !st.fallback ||
             !strstr(st.fallback, "device buffers"))
        fail("pairwise", "device/device", lib_name[pers][form],
             "not the library's call with the device reason");
    if (form == VECTOR)
        MPI_Type_free(&t);
    free(s);
    free(r);
    free(rs);
    free(rr);
}

int main(int argc, char **argv)
{
    int fail_d2d = 0, auto_only = 0;
    for (int i = 1; i < argc; i++) {
        fail_d2d |= !strcmp(argv[i], "--fail-d2d");
        auto_only |= !strcmp(argv[i], "--auto-only");
        tiny |= !strcmp(argv[i], "--tiny");
    }
    if (!mocks_load(argc, argv, "test_staged"))
        return 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P > 8)
        MPI_Abort(MPI_COMM_WORLD, 2);
    tuna_stats_enable(1);
    /* The named rows' cases keep the device buffers PROT_NONE: over an MPI that takes device
     * memory itself they would go to it as they are (tuna's direct posts), and it would read
     * them. Such an MPI is told to stage here (test_device_rows --aware covers direct). */
    if (!auto_only && !getenv("TUNA_CUDA_AWARE") && !auto_stages()) {
        setenv("TUNA_CUDA_AWARE", "0", 1);
        if (me == 0)
            printf("test_staged: the MPI says it is CUDA-aware: TUNA_CUDA_AWARE=0 here\n");
    }
    MPI_Datatype four; /* a contiguous derived type */
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    if (fail_d2d) { /* spreadout, device/device, MPI_INT: the own block's copy fails */
        layout l;
        layout_make(&l, 1, 2); /* salt 2: every rank has an own block of 37 ints */
        char *s = map(l.sbytes), *r = map(l.rbytes);
        drv_register(s, l.sbytes, 0);
        drv_register(r, l.rbytes, 0);
        rt_device(s, page_round(l.sbytes));
        rt_device(r, page_round(l.rbytes));
        tuna_options o;
        tuna_options_parse("spreadout", TUNA_ALLTOALLV, &o);
        const int rc =
            tuna_alltoallv(s, l.sc, l.sd, MPI_INT, r, l.rc, l.rd, MPI_INT, MPI_COMM_WORLD, &o);
        rt_release();
        drv_clear();
        if ((rc != MPI_SUCCESS) != (l.sc[me] > 0))
            fail("spreadout", "device/device", "MPI_INT",
                 rc == MPI_SUCCESS ? "a failed device copy was not the call's error"
                                   : "an error without a failed copy");
        else if (rc != MPI_SUCCESS && !strstr(tuna_error_string(rc), "device-to-device"))
            fail("spreadout", "device/device", "MPI_INT", "the error does not say which copy");
        /* A plan of the same exchange: only its second start copies with the failure on, and
         * only that start gets the error (nothing carried into the next one). */
        drv_register(s, l.sbytes, 0);
        drv_register(r, l.rbytes, 0);
        rt_device(s, page_round(l.sbytes));
        rt_device(r, page_round(l.rbytes));
        unsetenv("MOCK_CUDART_FAIL_D2D");
        tuna_plan plan = NULL;
        int prc = tuna_alltoallv_init(s, l.sc, l.sd, MPI_INT, r, l.rc, l.rd, MPI_INT,
                                      MPI_COMM_WORLD, &o, 0, &plan);
        for (int k = 0; k < 3 && prc == MPI_SUCCESS; k++) {
            if (k == 1)
                setenv("MOCK_CUDART_FAIL_D2D", "1", 1);
            int src = tuna_start(plan);
            if (src == MPI_SUCCESS)
                src = tuna_wait(plan);
            unsetenv("MOCK_CUDART_FAIL_D2D");
            const int want = k == 1 && l.sc[me] > 0;
            if ((src != MPI_SUCCESS) != want) {
                char what[80];
                snprintf(what, sizeof what, "plan, start %d: %s", k + 1,
                         want ? "a failed device copy was not the start's error"
                              : "an error without a failed copy");
                fail("spreadout", "device/device", "MPI_INT", what);
            } else if (src != MPI_SUCCESS &&
                       !strstr(tuna_error_string(src), "device-to-device")) {
                fail("spreadout", "device/device", "MPI_INT",
                     "plan: the error does not say which copy");
            }
        }
        if (prc != MPI_SUCCESS)
            fail("spreadout", "device/device", "MPI_INT", "plan: the init failed");
        if (plan)
            tuna_plan_free(&plan);
        rt_release();
        drv_clear();
        munmap(s, page_round(l.sbytes));
        munmap(r, page_round(l.rbytes));
        int total = 0;
        MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (me == 0)
            printf("a failed device copy (P = %d): %s\n", P, total ? "FAILED" : "ok");
        MPI_Type_free(&four);
        MPI_Finalize();
        return total ? 1 : 0;
    }
    /* The first call on the communicator is blocking: a nonblocking first call sets tuna up
     * only where the MPI has MPI_Comm_idup, else it is the library's (docs/nonblocking.md),
     * which would read the "device" buffers. */
    the_comm = MPI_COMM_WORLD;
    static const char *const rows[] = {"spreadout", "scattered:block=2", "linear", "pairwise",
                                       "xor", "multipair:stride=2"};
    if (tiny) { /* the restriction to device rows must matter: host auto picks another row */
        layout l;
        layout_make(&l, 1, 0);
        char *s = calloc(1, l.sbytes), *r = calloc(1, l.rbytes);
        tuna_options o;
        tuna_options_parse("auto", TUNA_ALLTOALLV, &o);
        tuna_plan plan = NULL;
        tuna_plan_info info = {0};
        if (tuna_alltoallv_init(s, l.sc, l.sd, MPI_INT, r, l.rc, l.rd, MPI_INT, MPI_COMM_WORLD,
                                &o, 0, &plan) != MPI_SUCCESS ||
            tuna_plan_get_info(plan, &info) != MPI_SUCCESS || device_row(info.algorithm))
            fail("auto", "host/host", "tiny blocks",
                 "host auto chose a device row: the test does not check the restriction");
        if (plan)
            tuna_plan_free(&plan);
        free(s);
        free(r);
    }
    /* auto first: on a communicator with no earlier call it must set itself up too */
    for (int place = 0; place < NPLACE; place++)
        for (int form = 0; form < NFORM; form++)
            run_auto_case(place, form, 7 * place + form);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !auto_only; i++)
        for (int place = 0; place < NPLACE; place++) {
            run_case(rows[i], place, MPI_INT, 1, "MPI_INT", (int)i, 0, 0);
            run_case(rows[i], place, four, 4, "contiguous(4, MPI_INT)", (int)i + 1, 0, 0);
            run_case(rows[i], place, MPI_INT, 1, "MPI_INT, tuna_alltoallv_c", (int)i + 2, 1, 0);
            run_case(rows[i], place, MPI_INT, 1, "MPI_INT, tuna_ialltoallv", (int)i + 3, 0, 1);
            run_case(rows[i], place, four, 4, "contiguous(4, MPI_INT), tuna_ialltoallv_c",
                     (int)i + 4, 1, 1);
            run_plan_case(rows[i], place, MPI_INT, 1, "MPI_INT, tuna_alltoallv_init",
                          (int)i + 5, 0);
            run_plan_case(rows[i], place, four, 4,
                          "contiguous(4, MPI_INT), tuna_alltoallv_init_c", (int)i + 6, 1);
        }
    MPI_Type_free(&four);
    for (int form = 0; form < NLIB && !auto_only; form++)
        for (int pers = 0; pers < 2; pers++)
            run_library_case(form, pers);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("staged rows on device memory (P = %d, auto %s%s): %s\n", P,
               auto_stages() ? "staging" : "the library's call",
               tiny ? " only, tiny blocks" : auto_only ? " only" : "",
               total ? "FAILED" : "ok");
    MPI_Finalize();
    return total ? 1 : 0;
}
