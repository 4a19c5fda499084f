/*
 * The nonblocking alltoallv and local plan starts (docs/nonblocking.md), checked from outside:
 *   1. every row with a nonblocking form (vendor, auto, each step row at its parameter edges):
 *      tuna_ialltoallv into sentinel-filled receive buffers gives PMPI_Alltoallv's bytes (int
 *      and a strided derived type; packed, gapped and overlapping-read layouts; uniform,
 *      sparse and power-law counts; in place), completed by tuna_request_wait or by polling
 *      tuna_request_test; tuna_ialltoallv_c likewise;
 *   2. three operations outstanding on one communicator (different rows, different data),
 *      a blocking tuna_alltoallv while they are, completion in reverse order (three times:
 *      the linear family; TuNA and hierarchical TuNA; the windowed and Bruck rows);
 *   3. local starts: rank 0 starts (tuna_ialltoallv; tuna_start of a plan), then hands rank 1
 *      a token with MPI_Ssend, which rank 1 receives before it starts: a start that waited
 *      for rank 1 would never return (the watchdog reports the hang);
 *   3b. the same for the uniform all-to-all's own rows (bruck-radix, mesh: those alltoallv
 *      does not have) at their parameter edges, tuna_ialltoall and tuna_alltoall_init, two
 *      operations of the row outstanding, against PMPI_Alltoall;
 *   4. refusals: a row without a step form is MPI_ERR_UNSUPPORTED_OPERATION with no request;
 *      a NULL request pointer; TUNA_REQUEST_NULL completes at once;
 *   5. communicators tuna has not set up: the first nonblocking calls run tuna's set-up as
 *      their first steps, then tuna's rows (two outstanding, one beside a blocking call).
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna.h"

#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/coll_variants.h"
#include "support/test_data.h"
#include "support/test_expect.h"
#include "support/local_start.h"

#define SENTINEL 0x5A
#define WATCHDOG_S 120

/* One exchange's buffers and its reference result. */
typedef struct exch {
    MPI_Datatype type;   /* int, or 2 ints of every 3 (strided) */
    int ints_per_elem, stride_ints;
    int sc[64], sd[64], rc[64], rd[64];
    int *sbuf, *rbuf, *ref;
    size_t sints, rints;
    int inplace;
} exch;

static void exch_make(exch *x, int dist, int layout, int derived, int inplace, uint64_t seed)
{
    memset(x, 0, sizeof *x);
    x->inplace = inplace;
    if (derived) {
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 2, MPI_INT, &v); /* ints 0 and 2 of 3 */
        MPI_Type_create_resized(v, 0, 3 * (MPI_Aint)sizeof(int), &x->type);
        MPI_Type_free(&v);
        MPI_Type_commit(&x->type);
        x->stride_ints = 3;
    } else {
        x->type = MPI_INT;
        x->stride_ints = 1;
    }
    int S = 6;
    for (int j = 0; j < P; j++) {
        x->sc[j] = count_of(dist, me, j, S, seed, 0, P);
        x->rc[j] = count_of(dist, j, me, S, seed, 0, P);
    }
    if (inplace) /* MPI_IN_PLACE: what i sends j is what j sends i (one count per pair) */
        for (int j = 0; j < P; j++)
            x->sc[j] = x->rc[j] = count_of(dist, me < j ? me : j, me < j ? j : me, S, seed, 0, P);
    int lay = inplace && layout == L_OVERLAP ? L_PACKED : layout; /* in place may not overlap */
    size_t sspan = make_displs(P, x->sc, x->sd, layout, 1);
    size_t rspan = make_displs(P, x->rc, x->rd, lay == L_OVERLAP ? L_GAPPED : lay, 2);
    x->sints = (sspan + 2) * (size_t)x->stride_ints;
    x->rints = (rspan + 3) * (size_t)x->stride_ints;
    x->sbuf = malloc(x->sints * sizeof(int));
    x->rbuf = malloc(x->rints * sizeof(int));
    x->ref = malloc(x->rints * sizeof(int));
    for (size_t i = 0; i < x->sints; i++)
        x->sbuf[i] = (int)mix(seed ^ ((uint64_t)me << 32) ^ i);
    memset(x->rbuf, SENTINEL, x->rints * sizeof(int));
    memset(x->ref, SENTINEL, x->rints * sizeof(int));
    if (inplace) { /* the data to send lives in the receive buffer */
        for (size_t i = 0; i < x->rints; i++)
            x->rbuf[i] = x->ref[i] = (int)mix(seed ^ 0x77 ^ ((uint64_t)me << 32) ^ i);
        PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, x->ref, x->rc, x->rd,
                       x->type, MPI_COMM_WORLD);
    } else {
        PMPI_Alltoallv(x->sbuf, x->sc, x->sd, x->type, x->ref, x->rc, x->rd, x->type,
                       MPI_COMM_WORLD);
    }
}

static int exch_start(exch *x, MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    return tuna_ialltoallv(x->inplace ? MPI_IN_PLACE : x->sbuf, x->sc, x->sd, x->type, x->rbuf,
                           x->rc, x->rd, x->type, comm, opt, req);
}

static int exch_ok(const exch *x)
{
    return memcmp(x->rbuf, x->ref, x->rints * sizeof(int)) == 0;
}

static void exch_free(exch *x)
{
    if (x->type != MPI_INT)
        MPI_Type_free(&x->type);
    free(x->sbuf);
    free(x->rbuf);
    free(x->ref);
}

/* Complete by polling tuna_request_test (a bounded number of polls per step is not a
 * property: the loop ends when the operation does). */
static int poll_done(tuna_request *req)
{
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS)
        rc = tuna_request_test(req, &flag);
    return rc;
}

/* 1. Every row with a nonblocking form. */
static void test_rows(void)
{
    const int n = tuna_algorithm_count(TUNA_ALLTOALLV);
    int cases = 0;
    for (int alg = 0; alg < n; alg++) {
        const tuna_algorithm_info *info = tuna_algorithm_get(TUNA_ALLTOALLV, alg);
        for (int edge = 0; edge < 3; edge++) {
            if (edge > 0 && info->nparams == 0)
                break;
            tuna_options opt;
            char str[160];
            int k = snprintf(str, sizeof str, "%s", info->name);
            for (int p = 0; p < info->nparams && edge > 0; p++)
                k += snprintf(str + k, sizeof str - (size_t)k, "%c%s=%s", p ? ',' : ':',
                              info->params[p].name, edge == 1 ? "1" : "P");
            if (edge > 0 && info->nparams && info->params[0].min > 1 && edge == 1) {
                k = snprintf(str, sizeof str, "%s", info->name);
                for (int p = 0; p < info->nparams; p++)
                    k += snprintf(str + k, sizeof str - (size_t)k, "%c%s=%ld", p ? ',' : ':',
                                  info->params[p].name, info->params[p].min);
            }
            if (tuna_options_parse(str, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS)
                continue;
            for (int v = 0; v < 6; v++) {
                const int dist = (int[]){D_UNIFORM, D_SPARSE, D_POWER, D_ZERO, D_UNIFORM,
                                         D_UNIFORM}[v];
                const int layout = (int[]){L_PACKED, L_GAPPED, L_OVERLAP, L_PACKED, L_REVERSED,
                                           L_PACKED}[v];
                exch x;
                exch_make(&x, dist, layout, v == 2 || v == 4, v == 5,
                          mix((uint64_t)alg * 131 + (uint64_t)v * 7 + (uint64_t)edge));
                current = str;
                tuna_request req = TUNA_REQUEST_NULL;
                int rc = exch_start(&x, MPI_COMM_WORLD, &opt, &req);
                if (rc == MPI_ERR_UNSUPPORTED_OPERATION) { /* no step form: checked in 4 */
                    expect(req == TUNA_REQUEST_NULL, "refused start left a request", str, rc);
                    exch_free(&x);
                    break;
                }
                if (rc == MPI_SUCCESS)
                    rc = (v & 1) ? poll_done(&req) : tuna_request_wait(&req);
                char what[256];
                snprintf(what, sizeof what, "ialltoallv %s dist=%s layout=%s%s%s", str,
                         dist_names[dist], layout_names[layout],
                         x.type != MPI_INT ? " derived" : "", x.inplace ? " in-place" : "");
                expect(rc == MPI_SUCCESS && req == TUNA_REQUEST_NULL, what, "completion", rc);
                expect(exch_ok(&x), what, "bytes differ from PMPI_Alltoallv", rc);
                exch_free(&x);
                cases++;
            }
        }
    }
    if (me == 0)
        printf("test_nonblocking P=%d: %d row cases\n", P, cases);
}

/* 2. Outstanding together, a blocking call in between, completed in reverse order. */
static void test_outstanding(const char *const rows[3], const char *blocking)
{
    exch x[3], b;
    tuna_request req[3];
    current = "outstanding";
    for (int i = 0; i < 3; i++) {
        tuna_options opt;
        tuna_options_parse(rows[i], TUNA_ALLTOALLV, &opt);
        exch_make(&x[i], i == 1 ? D_POWER : D_UNIFORM, L_GAPPED, i == 2, 0, mix(900 + (uint64_t)i));
        int rc = exch_start(&x[i], MPI_COMM_WORLD, &opt, &req[i]);
        expect(rc == MPI_SUCCESS, "outstanding start", rows[i], rc);
    }
    /* A blocking call on the same communicator while the three are in flight. */
    exch_make(&b, D_UNIFORM, L_PACKED, 0, 0, mix(999));
    tuna_options lin;
    tuna_options_parse(blocking, TUNA_ALLTOALLV, &lin);
    int rc = tuna_alltoallv(b.sbuf, b.sc, b.sd, b.type, b.rbuf, b.rc, b.rd, b.type,
                            MPI_COMM_WORLD, &lin);
    expect(rc == MPI_SUCCESS && exch_ok(&b), "blocking call among outstanding ones", blocking,
           rc);
    exch_free(&b);
    for (int i = 2; i >= 0; i--) {
        rc = tuna_request_wait(&req[i]);
        expect(rc == MPI_SUCCESS && exch_ok(&x[i]), "outstanding operation's bytes", rows[i], rc);
        exch_free(&x[i]);
    }
}

/* A start's arguments for token_start. */
typedef struct local_call {
    exch *x;
    const tuna_options *opt;
    tuna_request req;
} local_call;

static int start_call(void *arg)
{
    local_call *c = arg;
    return exch_start(c->x, MPI_COMM_WORLD, c->opt, &c->req);
}

static void exch_reset(void *x, int round)
{
    (void)round;
    memset(((exch *)x)->rbuf, SENTINEL, ((exch *)x)->rints * sizeof(int));
}

static int exch_ok_arg(const void *x)
{
    return exch_ok(x);
}

/* 3. A start is local: rank 0 starts, then synchronously hands rank 1 a token that rank 1
 * takes before it starts. */
static void test_local_start(void)
{
    if (P < 2)
        return;
    const char *rows[4] = {"pairwise", "multipair:stride=2", "multipair-waitany:stride=2",
                           "bruck"};
    for (int i = 0; i < 4; i++) {
        tuna_options opt;
        tuna_options_parse(rows[i], TUNA_ALLTOALLV, &opt);
        exch x;
        exch_make(&x, D_UNIFORM, L_PACKED, 0, 0, mix(1234 + (uint64_t)i));
        /* nonblocking */
        current = "local start: tuna_ialltoallv";
        local_call call = {&x, &opt, TUNA_REQUEST_NULL};
        int rc = token_start(99, start_call, &call);
        int wrc = tuna_request_wait(&call.req);
        expect(rc == MPI_SUCCESS && wrc == MPI_SUCCESS && exch_ok(&x), "local start, bytes",
               rows[i], rc ? rc : wrc);
        /* persistent: the same through a plan */
        current = "local start: tuna_start";
        memset(x.rbuf, SENTINEL, x.rints * sizeof(int));
        tuna_plan plan = NULL;
        rc = tuna_alltoallv_init(x.sbuf, x.sc, x.sd, x.type, x.rbuf, x.rc, x.rd, x.type,
                                 MPI_COMM_WORLD, &opt, TUNA_PLAN_ESTIMATE, &plan);
        expect(rc == MPI_SUCCESS, "plan init", rows[i], rc);
        if (rc == MPI_SUCCESS)
            plan_local_starts(plan, exch_reset, exch_ok_arg, &x, rows[i]);
        if (plan)
            tuna_plan_free(&plan);
        exch_free(&x);
    }
}

/* One uniform all-to-all of n ints per block: send, receive and PMPI_Alltoall's result. */
typedef struct uexch {
    int n, *sbuf, *rbuf, *ref;
} uexch;

static void uexch_make(uexch *u, int n, uint64_t seed)
{
    const size_t ints = (size_t)P * (size_t)n;
    u->n = n;
    u->sbuf = malloc(ints * sizeof(int));
    u->rbuf = malloc(ints * sizeof(int));
    u->ref = malloc(ints * sizeof(int));
    for (size_t i = 0; i < ints; i++)
        u->sbuf[i] = (int)mix(seed ^ ((uint64_t)me << 32) ^ i);
    memset(u->rbuf, SENTINEL, ints * sizeof(int));
    PMPI_Alltoall(u->sbuf, n, MPI_INT, u->ref, n, MPI_INT, MPI_COMM_WORLD);
}

static int uexch_ok(const uexch *u)
{
    return memcmp(u->rbuf, u->ref, (size_t)P * (size_t)u->n * sizeof(int)) == 0;
}

static void uexch_free(uexch *u)
{
    free(u->sbuf);
    free(u->rbuf);
    free(u->ref);
}

/* 3b. The alltoall-only rows: local starts (rank 1 starts only after rank 0's start has
 * returned and handed it a token), with a second operation of the row outstanding. */
static void test_alltoall_local_start(void)
{
    if (P < 2)
        return;
    char algs[64][COLL_VARIANT_LEN];
    const int nalgs = coll_variants(TUNA_ALLTOALL, algs, 64);
    int cases = 0;
    for (int i = 0; i < nalgs; i++) {
        tuna_options opt, v;
        char row[COLL_VARIANT_LEN];
        memcpy(row, algs[i], sizeof row);
        row[strcspn(row, ":")] = '\0'; /* the row's name */
        if (tuna_options_parse(row, TUNA_ALLTOALLV, &v) == MPI_SUCCESS ||
            tuna_options_parse(algs[i], TUNA_ALLTOALL, &opt) != MPI_SUCCESS)
            continue; /* alltoallv's rows: section 3 */
        current = algs[i];
        uexch x, y;
        uexch_make(&x, 3, mix(4321 + (uint64_t)i));
        uexch_make(&y, 1, mix(8765 + (uint64_t)i));
        int token = 7, rc, rc2;
        tuna_request r1 = TUNA_REQUEST_NULL, r2 = TUNA_REQUEST_NULL;
        if (me == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc = tuna_ialltoall(x.sbuf, x.n, MPI_INT, x.rbuf, x.n, MPI_INT, MPI_COMM_WORLD, &opt, &r1);
        rc2 = tuna_ialltoall(y.sbuf, y.n, MPI_INT, y.rbuf, y.n, MPI_INT, MPI_COMM_WORLD, &opt,
                             &r2);
        if (me == 0)
            MPI_Ssend(&token, 1, MPI_INT, 1, 97, MPI_COMM_WORLD);
        /* completed in reverse order, the second by polling */
        int wrc = tuna_request_wait(&r2), flag = 0, wrc1 = MPI_SUCCESS;
        while (!flag && wrc1 == MPI_SUCCESS)
            wrc1 = tuna_request_test(&r1, &flag);
        expect(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && wrc == MPI_SUCCESS &&
                   wrc1 == MPI_SUCCESS && uexch_ok(&x) && uexch_ok(&y),
               "alltoall local start, two outstanding, bytes", algs[i],
               rc ? rc : rc2 ? rc2 : wrc ? wrc : wrc1);
        current = "alltoall local start: tuna_start";
        tuna_plan plan = NULL;
        rc = tuna_alltoall_init(x.sbuf, x.n, MPI_INT, x.rbuf, x.n, MPI_INT, MPI_COMM_WORLD, &opt,
                                TUNA_PLAN_ESTIMATE, &plan);
        expect(rc == MPI_SUCCESS, "alltoall plan init", algs[i], rc);
        for (int r = 0; r < 2 && rc == MPI_SUCCESS; r++) {
            memset(x.rbuf, SENTINEL, (size_t)P * (size_t)x.n * sizeof(int));
            if (me == 1)
                MPI_Recv(&token, 1, MPI_INT, 0, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rc = tuna_start(plan);
            if (me == 0)
                MPI_Ssend(&token, 1, MPI_INT, 1, 96, MPI_COMM_WORLD);
            wrc = rc == MPI_SUCCESS ? tuna_wait(plan) : rc;
            expect(rc == MPI_SUCCESS && wrc == MPI_SUCCESS && uexch_ok(&x),
                   "alltoall plan local start", algs[i], rc ? rc : wrc);
        }
        if (plan)
            tuna_plan_free(&plan);
        uexch_free(&x);
        uexch_free(&y);
        cases++;
    }
    /* the rows are there (a registry without them would leave this section empty) */
    expect(cases >= 2, "alltoall-only rows found", "bruck-radix, mesh", MPI_SUCCESS);
}

/* 4. Refusals. */
static void test_refusals(void)
{
    current = "refusals";
    exch x;
    exch_make(&x, D_UNIFORM, L_PACKED, 0, 0, 55);
    /* The first row without a step form, if any is left (the others run to completion). */
    tuna_request req;
    int rc;
    for (int alg = 0; alg < tuna_algorithm_count(TUNA_ALLTOALLV); alg++) {
        const char *name = tuna_algorithm_get(TUNA_ALLTOALLV, alg)->name;
        tuna_options opt;
        if (tuna_options_parse(name, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS)
            continue;
        req = (tuna_request)&x; /* overwritten with TUNA_REQUEST_NULL */
        rc = exch_start(&x, MPI_COMM_WORLD, &opt, &req);
        if (rc == MPI_SUCCESS) {
            rc = tuna_request_wait(&req);
            expect(rc == MPI_SUCCESS, "a row with a step form", name, rc);
            continue;
        }
        expect(rc == MPI_ERR_UNSUPPORTED_OPERATION && req == TUNA_REQUEST_NULL,
               "a row without a step form is refused", name, rc);
        break;
    }
    rc = exch_start(&x, MPI_COMM_WORLD, NULL, NULL);
    expect(rc == MPI_ERR_REQUEST, "a NULL request pointer", "auto", rc);
    int flag = 0;
    req = TUNA_REQUEST_NULL;
    rc = tuna_request_test(&req, &flag);
    expect(rc == MPI_SUCCESS && flag, "testing TUNA_REQUEST_NULL", "-", rc);
    rc = tuna_request_wait(&req);
    expect(rc == MPI_SUCCESS, "waiting on TUNA_REQUEST_NULL", "-", rc);
    exch_free(&x);
}

/* Whether this MPI's MPI_Comm_idup serves tuna's nonblocking set-up (not Open MPI's, 4 or 5:
 * TUNA_NO_NONBLOCKING_SETUP, src/core/tuna_internal.h); without it a first call on a fresh
 * communicator is the library's call, as before issue 56. */
#if defined(OPEN_MPI)
#define NB_SETUP 0
#else
#define NB_SETUP 1
#endif

/* 5. Communicators tuna has not set up (issue 56): the first nonblocking calls run the
 * set-up as their first steps, then tuna's rows, never the library's call (the statistics'
 * fallback): two outstanding on one fresh duplicate (one set-up shared, completed in reverse
 * order); one outstanding while a blocking call on the same communicator finishes the set-up;
 * a named row's first call. Bytes against PMPI_Alltoallv, sentinel-filled. */
static void test_fresh_comm(void)
{
    current = "fresh communicator";
    enum { N = 5 };
    MPI_Comm fresh[3];
    exch x[N];
    for (int k = 0; k < 3; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &fresh[k]);
    for (int i = 0; i < N; i++)
        exch_make(&x[i], i == 3 ? D_UNIFORM : D_POWER, L_GAPPED, i == 1, 0, 77 + (uint64_t)i);
    tuna_options pairwise;
    tuna_options_parse("pairwise", TUNA_ALLTOALLV, &pairwise);
    tuna_stats_enable(1);
    tuna_request req[N];
    int rc[N];
    rc[0] = exch_start(&x[0], fresh[0], NULL, &req[0]);
    rc[1] = exch_start(&x[1], fresh[0], NULL, &req[1]);
    rc[2] = exch_start(&x[2], fresh[1], NULL, &req[2]);
    rc[3] = tuna_alltoallv(x[3].sbuf, x[3].sc, x[3].sd, x[3].type, x[3].rbuf, x[3].rc, x[3].rd,
                           x[3].type, fresh[1], NULL);
    expect(rc[3] == MPI_SUCCESS && exch_ok(&x[3]),
           "a blocking call while a first nonblocking one is outstanding", "auto", rc[3]);
    rc[4] = exch_start(&x[4], fresh[2], &pairwise, &req[4]);
    static const int order[] = {1, 0, 2, 4};
    for (int k = 0; k < 4; k++) {
        const int i = order[k];
        if (rc[i] == MPI_SUCCESS)
            rc[i] = tuna_request_wait(&req[i]);
        const tuna_stats *st = tuna_stats_last();
        expect(rc[i] == MPI_SUCCESS && exch_ok(&x[i]) && (st->fallback == NULL) == NB_SETUP &&
                   (i != 4 || !NB_SETUP || st->algorithm == pairwise.algorithm),
               i < 2   ? "two first calls outstanding on a fresh communicator"
               : i < 4 ? "a first call completed after a blocking one"
                       : "a named row's first call on a fresh communicator runs the row",
               i == 4 ? "pairwise" : "auto", rc[i]);
    }
    /* Set up right after its creation by tuna_pattern_changed (the library API's set-up at
     * creation): auto's first nonblocking call runs tuna's rows on every MPI. */
    MPI_Comm made;
    MPI_Comm_dup(MPI_COMM_WORLD, &made);
    int prc = tuna_pattern_changed(made);
    exch y;
    exch_make(&y, D_POWER, L_GAPPED, 0, 0, 91);
    tuna_request r;
    int yrc = prc == MPI_SUCCESS ? exch_start(&y, made, NULL, &r) : prc;
    if (yrc == MPI_SUCCESS)
        yrc = tuna_request_wait(&r);
    expect(yrc == MPI_SUCCESS && exch_ok(&y) && tuna_stats_last()->fallback == NULL,
           "the first call on a communicator set up by tuna_pattern_changed runs tuna's rows",
           "auto", yrc);
    exch_free(&y);
    MPI_Comm_free(&made);
    tuna_stats_enable(0);
    for (int i = 0; i < N; i++)
        exch_free(&x[i]);
    for (int k = 0; k < 3; k++)
        MPI_Comm_free(&fresh[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    watchdog_start(WATCHDOG_S);
    if (P > 64) {
        if (me == 0)
            fprintf(stderr, "test_nonblocking: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* A blocking call sets MPI_COMM_WORLD up (its context, auto's selector), so the
     * nonblocking calls below run tuna's rows on it. */
    test_fresh_comm();
    {
        exch x;
        exch_make(&x, D_UNIFORM, L_PACKED, 0, 0, 1);
        tuna_alltoallv(x.sbuf, x.sc, x.sd, x.type, x.rbuf, x.rc, x.rd, x.type, MPI_COMM_WORLD,
                       NULL);
        exch_free(&x);
    }
    test_rows();
    test_outstanding((const char *const[3]){"pairwise", "spreadout", "auto"}, "linear");
    /* Rows with metadata rounds and several phases (their tags must keep them apart). */
    test_outstanding((const char *const[3]){"tuna", "coalesced", "staggered:block=1"},
                     "linear");
    /* The windowed rows wait for any request, the Bruck rows keep their state between
     * rounds; the blocking call's window waits while the others progress. */
    test_outstanding((const char *const[3]){"twophase-bruck", "multipair-testany:stride=2",
                                            "padded-bruck:datatype=1"},
                     "multipair-waitany:stride=2");
    test_local_start();
    test_alltoall_local_start();
    test_refusals();
    alarm(0);
    if (me == 0)
        printf("test_nonblocking P=%d: %s\n", P, failures ? "FAILED" : "passed");
    MPI_Finalize();
    return failures ? 1 : 0;
}
