/*
 * The nonblocking allgather and allreduce and their plans' local starts
 * (docs/nonblocking.md), checked from outside:
 *   1. every row (vendor, auto, each step row at its parameter edges k = 2, 3, P) through
 *      tuna_iallgather / tuna_iallreduce into sentinel-filled receive buffers gives
 *      PMPI_Allgather's / PMPI_Allreduce's bytes, holes and guard bytes included: int and a
 *      strided derived type (allgather: on the receive side alone and on both), count 0, a
 *      rendezvous-sized block, in place and not; allreduce also a non-commutative user op
 *      (affine maps composed, exact in unsigned arithmetic), whose result depends on the rank
 *      order of the operands. Completed by tuna_request_wait or by polling
 *      tuna_request_test. The statistics must name the row that was asked for (tuna's steps
 *      ran, not the library's call);
 *   2. operations outstanding together (both collectives, different rows), a blocking call
 *      between their starts and their completions, completion in reverse order;
 *   3. local starts: rank 0 starts (tuna_iallgather / tuna_iallreduce; tuna_start of a
 *      plan), then hands rank 1 a token with MPI_Ssend, which rank 1 receives before it
 *      starts: a start that waited for rank 1 would never return (the watchdog reports it);
 *   4. plans of every row and auto, started repeatedly with new input, completed by
 *      tuna_wait and tuna_test;
 *   5. refusals (a NULL request pointer, this rank's bad arguments at the start with no
 *      request; under TUNA_ARGCHECK=collective the agreement's errors at every rank's
 *      completion, one rank's bad count included) and a communicator tuna has not set up
 *      (the library's call).
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna.h"

#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_data.h"
#include "support/test_expect.h"
#include "support/local_start.h"

#define SENTINEL 0x5A
#define GUARD_INTS 8
#define WATCHDOG_S 240

/* ------------------------------------------------------------------ types and ops */

static MPI_Datatype vec_type;  /* ints 0 and 2 of every 3 (a hole in each element) */
static MPI_Datatype pair_type; /* two contiguous ints */

/* The positions of an element's two ints for the type the op is called with. */
static void elem_layout(const MPI_Datatype *type, int *step, int *second)
{
    *step = *type == vec_type ? 3 : 2;
    *second = *type == vec_type ? 2 : 1;
}

/* inout = in + inout, pairwise (commutative). */
static void pairsum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int step, second;
    elem_layout(type, &step, &second);
    const unsigned *a = in;
    unsigned *b = inout;
    for (int e = 0; e < *len; e++, a += step, b += step) {
        b[0] += a[0];
        b[second] += a[second];
    }
}

/* An element (m, c) is the map x -> m x + c; inout = in o inout (apply inout first). Function
 * composition: associative, not commutative, exact modulo 2^32. */
static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int step, second;
    elem_layout(type, &step, &second);
    const unsigned *a = in;
    unsigned *b = inout;
    for (int e = 0; e < *len; e++, a += step, b += step) {
        unsigned m = a[0] * b[0], c = a[0] * b[second] + a[second];
        b[0] = m;
        b[second] = c;
    }
}

static MPI_Op pairsum_op, affine_op;

/* ------------------------------------------------------------------ one case */

/* allgather: derived 0 ints, 1 ints sent and the vector type received, 2 the vector type on
 * both sides; allreduce: derived 0 (MPI_INT, MPI_SUM; with noncomm: pairs), 1 the vector
 * type (the pair sum; with noncomm: the affine op). */
typedef struct ccase {
    tuna_collective coll;
    int count, derived, inplace, noncomm;
    MPI_Datatype stype, rtype;
    int scount, rcount;
    MPI_Op op;
    int *sbuf, *rbuf, *ref, *init;
    size_t sints, rints;
} ccase;

static void fill(int *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (int)mix(seed ^ ((uint64_t)me << 40) ^ i);
}

/* The reference into ref from the same input (init: the receive buffer before the call). */
static void reference(ccase *c)
{
    memcpy(c->ref, c->init, c->rints * sizeof(int));
    const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
    if (c->coll == TUNA_ALLGATHER)
        PMPI_Allgather(s, c->scount, c->stype, c->ref, c->rcount, c->rtype, MPI_COMM_WORLD);
    else
        PMPI_Allreduce(s, c->ref, c->rcount, c->rtype, c->op, MPI_COMM_WORLD);
}

/* New input (send buffer, or the receive buffer's own part in place), the receive buffer's
 * other bytes sentinels, and its reference. */
static void refill(ccase *c, uint64_t seed)
{
    fill(c->sbuf, c->sints, seed);
    memset(c->init, SENTINEL, c->rints * sizeof(int));
    if (c->inplace) { /* the input lives in the receive buffer: my block / the vector */
        const int stride = c->rtype == vec_type ? 3 : c->rtype == pair_type ? 2 : 1;
        const size_t per = (size_t)c->rcount * (size_t)stride;
        const size_t at = c->coll == TUNA_ALLGATHER ? (size_t)me * per : 0;
        fill(c->init + at, per, seed ^ 0x1234);
        if (stride == 3) /* the holes keep their sentinel */
            for (size_t i = at + 1; i < at + per; i += 3)
                memset(&c->init[i], SENTINEL, sizeof(int));
    }
    memcpy(c->rbuf, c->init, c->rints * sizeof(int));
    reference(c);
}

static void case_make(ccase *c, tuna_collective coll, int count, int derived, int inplace,
                      int noncomm, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->coll = coll;
    c->count = count;
    c->derived = derived;
    c->inplace = inplace;
    c->noncomm = noncomm;
    size_t srints, rrints; /* ints one send / receive element spans */
    if (coll == TUNA_ALLGATHER) {
        c->stype = derived == 2 ? vec_type : MPI_INT;
        c->rtype = derived ? vec_type : MPI_INT;
        c->rcount = count;
        c->scount = derived == 1 ? 2 * count : count;
        srints = derived == 2 ? 3 : 1;
        rrints = derived ? 3 : 1;
        c->sints = (size_t)c->scount * srints + 1;
        c->rints = (size_t)P * (size_t)count * rrints + GUARD_INTS;
    } else {
        c->rtype = c->stype = derived ? vec_type : noncomm ? pair_type : MPI_INT;
        c->op = noncomm ? affine_op : derived ? pairsum_op : MPI_SUM;
        c->rcount = c->scount = count;
        rrints = derived ? 3 : noncomm ? 2 : 1;
        c->sints = (size_t)count * rrints + 1;
        c->rints = (size_t)count * rrints + GUARD_INTS;
    }
    c->sbuf = malloc(c->sints * sizeof(int));
    c->rbuf = malloc(c->rints * sizeof(int));
    c->ref = malloc(c->rints * sizeof(int));
    c->init = malloc(c->rints * sizeof(int));
    refill(c, seed);
}

static void case_free(ccase *c)
{
    free(c->sbuf);
    free(c->rbuf);
    free(c->ref);
    free(c->init);
}

static int case_start(ccase *c, MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
    if (c->coll == TUNA_ALLGATHER)
        return tuna_iallgather(s, c->scount, c->stype, c->rbuf, c->rcount, c->rtype, comm, opt,
                               req);
    return tuna_iallreduce(s, c->rbuf, c->rcount, c->rtype, c->op, comm, opt, req);
}

static int case_blocking(ccase *c, MPI_Comm comm, const tuna_options *opt)
{
    const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
    if (c->coll == TUNA_ALLGATHER)
        return tuna_allgather(s, c->scount, c->stype, c->rbuf, c->rcount, c->rtype, comm, opt);
    return tuna_allreduce(s, c->rbuf, c->rcount, c->rtype, c->op, comm, opt);
}

static int case_init(ccase *c, const tuna_options *opt, tuna_plan *plan)
{
    const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
    if (c->coll == TUNA_ALLGATHER)
        return tuna_allgather_init(s, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,
                                   MPI_COMM_WORLD, opt, TUNA_PLAN_ESTIMATE, plan);
    return tuna_allreduce_init(s, c->rbuf, c->rcount, c->rtype, c->op, MPI_COMM_WORLD, opt,
                               TUNA_PLAN_ESTIMATE, plan);
}

static int case_ok(const ccase *c)
{
    return memcmp(c->rbuf, c->ref, c->rints * sizeof(int)) == 0;
}

static void case_describe(const ccase *c, const char *opts, char *what, size_t n)
{
    static const char *const dnames[2][3] = {{"int", "int->vector", "vector"},
                                             {"int", "vector", "?"}};
    snprintf(what, n, "%s %.160s count=%d %s%s%s", c->coll == TUNA_ALLGATHER ? "iallgather"
                                                                           : "iallreduce",
             opts, c->count, dnames[c->coll == TUNA_ALLREDUCE][c->derived],
             c->noncomm ? " non-commutative" : "", c->inplace ? " in-place" : "");
}

/* Complete by polling tuna_request_test. */
static int poll_done(tuna_request *req)
{
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS)
        rc = tuna_request_test(req, &flag);
    return rc;
}

/* ------------------------------------------------------------------ 1. rows */

/* The option strings of row `alg` at its parameter edges (k = 2, 3, P), or its name. */
static int row_variants(tuna_collective coll, int alg, char out[4][64])
{
    const tuna_algorithm_info *info = tuna_algorithm_get(coll, alg);
    if (info->nparams == 0) {
        snprintf(out[0], 64, "%s", info->name);
        return 1;
    }
    static const char *const ks[3] = {"2", "3", "P"};
    int n = 0;
    for (int i = 0; i < 3; i++)
        snprintf(out[n++], 64, "%s:%s=%s", info->name, info->params[0].name, ks[i]);
    return n;
}

static void test_rows(tuna_collective coll)
{
    /* count, derived, in place, non-commutative (allreduce) */
    static const int variants[][4] = {{5, 0, 0, 0}, {5, 1, 1, 0}, {0, 0, 0, 0}, {7, 2, 0, 0},
                                      {3000, 0, 1, 0}, {6, 0, 0, 1}, {4, 1, 1, 1}, {1, 0, 1, 0}};
    const int nvar = (int)(sizeof variants / sizeof *variants);
    int cases = 0;
    tuna_stats_enable(1);
    for (int alg = 0; alg < tuna_algorithm_count(coll); alg++) {
        char strs[4][64];
        const int nstr = row_variants(coll, alg, strs);
        const bool forced_step = strcmp(strs[0], "vendor") != 0 && strcmp(strs[0], "auto") != 0;
        for (int s = 0; s < nstr; s++) {
            tuna_options opt;
            if (tuna_options_parse(strs[s], coll, &opt) != MPI_SUCCESS) {
                expect(0, "option string parses", strs[s], MPI_ERR_ARG);
                continue;
            }
            for (int v = 0; v < nvar; v++) {
                const int *var = variants[v];
                if (coll == TUNA_ALLGATHER && var[3])
                    continue;
                if (coll == TUNA_ALLREDUCE && var[1] == 2)
                    continue;
                ccase c;
                case_make(&c, coll, var[0], var[1], var[2], var[3],
                          mix((uint64_t)alg * 131 + (uint64_t)v * 7 + (uint64_t)s));
                char what[256];
                case_describe(&c, strs[s], what, sizeof what);
                current = what;
                tuna_request req = TUNA_REQUEST_NULL;
                int rc = case_start(&c, MPI_COMM_WORLD, &opt, &req);
                if (rc == MPI_SUCCESS)
                    rc = (v & 1) ? poll_done(&req) : tuna_request_wait(&req);
                expect(rc == MPI_SUCCESS && req == TUNA_REQUEST_NULL, what, "completion", rc);
                expect(case_ok(&c), what, "bytes differ from the library's", rc);
                /* tuna's steps ran the row asked for (count 0 moves nothing: no row runs) */
                const tuna_stats *st = tuna_stats_last();
                expect(!forced_step || c.count == 0 ||
                           (st->algorithm == alg && st->fallback == NULL),
                       what, "statistics: not the row asked for", rc);
                case_free(&c);
                cases++;
            }
        }
    }
    tuna_stats_enable(0);
    if (me == 0)
        printf("test_nonblocking_coll P=%d: %s: %d row cases\n", P,
               coll == TUNA_ALLGATHER ? "allgather" : "allreduce", cases);
}

/* ------------------------------------------------------------------ 2. outstanding */

typedef struct started {
    tuna_collective coll;
    const char *row;
    int count, derived, inplace, noncomm;
} started;

static void test_outstanding(const started *ops, int n, const started *blocking)
{
    ccase c[4], b;
    tuna_request req[4];
    current = "outstanding";
    for (int i = 0; i < n; i++) {
        tuna_options opt;
        tuna_options_parse(ops[i].row, ops[i].coll, &opt);
        case_make(&c[i], ops[i].coll, ops[i].count, ops[i].derived, ops[i].inplace,
                  ops[i].noncomm, mix(900 + (uint64_t)i));
        int rc = case_start(&c[i], MPI_COMM_WORLD, &opt, &req[i]);
        expect(rc == MPI_SUCCESS, "outstanding start", ops[i].row, rc);
    }
    /* A blocking call on the same communicator while they are in flight. */
    case_make(&b, blocking->coll, blocking->count, blocking->derived, blocking->inplace,
              blocking->noncomm, mix(999));
    tuna_options bopt;
    tuna_options_parse(blocking->row, blocking->coll, &bopt);
    int rc = case_blocking(&b, MPI_COMM_WORLD, &bopt);
    expect(rc == MPI_SUCCESS && case_ok(&b), "blocking call among outstanding ones",
           blocking->row, rc);
    case_free(&b);
    for (int i = n - 1; i >= 0; i--) {
        rc = tuna_request_wait(&req[i]);
        char what[256];
        case_describe(&c[i], ops[i].row, what, sizeof what);
        expect(rc == MPI_SUCCESS && case_ok(&c[i]), "outstanding operation's bytes", what, rc);
        case_free(&c[i]);
    }
}

/* ------------------------------------------------------------------ 3. local starts */

/* A start's arguments for token_start. */
typedef struct local_call {
    ccase *c;
    const tuna_options *opt;
    tuna_request req;
} local_call;

static int start_call(void *arg)
{
    local_call *l = arg;
    return case_start(l->c, MPI_COMM_WORLD, l->opt, &l->req);
}

static void case_reset(void *c, int round)
{
    refill(c, mix(77 + (uint64_t)round));
}

static int case_ok_arg(const void *c)
{
    return case_ok(c);
}

static void test_local_start(tuna_collective coll, const char *const *rows, int nrows)
{
    if (P < 2)
        return;
    for (int i = 0; i < nrows; i++) {
        tuna_options opt;
        tuna_options_parse(rows[i], coll, &opt);
        ccase c;
        case_make(&c, coll, 9, 0, i & 1, coll == TUNA_ALLREDUCE && i == 2, mix(1234 + (uint64_t)i));
        current = coll == TUNA_ALLGATHER ? "local start: tuna_iallgather"
                                         : "local start: tuna_iallreduce";
        local_call call = {&c, &opt, TUNA_REQUEST_NULL};
        int rc = token_start(99, start_call, &call);
        int wrc = tuna_request_wait(&call.req);
        expect(rc == MPI_SUCCESS && wrc == MPI_SUCCESS && case_ok(&c), "local start, bytes",
               rows[i], rc ? rc : wrc);
        /* persistent: the same through a plan */
        current = "local start: tuna_start";
        tuna_plan plan = NULL;
        memcpy(c.rbuf, c.init, c.rints * sizeof(int));
        rc = case_init(&c, &opt, &plan);
        expect(rc == MPI_SUCCESS, "plan init", rows[i], rc);
        if (rc == MPI_SUCCESS)
            plan_local_starts(plan, case_reset, case_ok_arg, &c, rows[i]);
        if (plan)
            tuna_plan_free(&plan);
        case_free(&c);
    }
}

/* ------------------------------------------------------------------ 4. plans */

static void test_plans(tuna_collective coll)
{
    for (int alg = 0; alg < tuna_algorithm_count(coll); alg++) {
        char strs[4][64];
        const int nstr = row_variants(coll, alg, strs);
        for (int s = 0; s < nstr; s++) {
            tuna_options opt;
            tuna_options_parse(strs[s], coll, &opt);
            for (int v = 0; v < 2; v++) {
                ccase c;
                case_make(&c, coll, v ? 6 : 11, v, v, coll == TUNA_ALLREDUCE && v, mix(4242));
                char what[256];
                case_describe(&c, strs[s], what, sizeof what);
                current = what;
                tuna_plan plan = NULL;
                int rc = case_init(&c, &opt, &plan);
                expect(rc == MPI_SUCCESS, "plan init", what, rc);
                for (int r = 0; r < 3 && rc == MPI_SUCCESS; r++) {
                    refill(&c, mix((uint64_t)(alg * 10 + r)));
                    rc = tuna_start(plan);
                    int flag = 0, wrc = MPI_SUCCESS;
                    if (r != 1)
                        wrc = tuna_wait(plan);
                    while (r == 1 && !flag && wrc == MPI_SUCCESS)
                        wrc = tuna_test(plan, &flag);
                    expect(rc == MPI_SUCCESS && wrc == MPI_SUCCESS && case_ok(&c),
                           "plan start's bytes", what, rc ? rc : wrc);
                }
                if (plan)
                    tuna_plan_free(&plan);
                case_free(&c);
            }
        }
    }
}

/* ------------------------------------------------------------------ 5. refusals */

static void test_refusals(tuna_collective coll)
{
    current = "refusals";
    ccase c;
    case_make(&c, coll, 4, 0, 0, 0, 55);
    int rc = case_start(&c, MPI_COMM_WORLD, NULL, NULL);
    expect(rc == MPI_ERR_REQUEST, "a NULL request pointer", "auto", rc);
    /* Bad arguments: by default this rank's error at the start, with no request (tuna's rows
     * and the library's call alike); under TUNA_ARGCHECK=collective tuna's rows agree on them
     * in the operation's first step and every rank's completion returns an error (the one
     * rank with a bad count gets its own, the others MPI_ERR_ARG), none hangs. */
    const char *argcheck = getenv("TUNA_ARGCHECK");
    const bool agreed = argcheck && strcmp(argcheck, "collective") == 0;
    static const char *const rows[] = {"ring", "vendor", "auto"};
    for (int i = 0; i < 3; i++) {
        tuna_options opt;
        tuna_options_parse(rows[i], coll, &opt);
        const bool library = strcmp(rows[i], "vendor") == 0;
        tuna_request req = (tuna_request)&c; /* overwritten */
        rc = coll == TUNA_ALLGATHER
                 ? tuna_iallgather(c.rbuf, c.scount, c.stype, c.rbuf, c.rcount, c.rtype,
                                   MPI_COMM_WORLD, &opt, &req)
                 : tuna_iallreduce(c.rbuf, c.rbuf, c.rcount, c.rtype, c.op, MPI_COMM_WORLD,
                                   &opt, &req);
        const bool at_start = library || !agreed;
        expect((rc == MPI_SUCCESS) != at_start && (req == TUNA_REQUEST_NULL) == at_start,
               at_start ? "sendbuf == recvbuf is refused at the start"
                        : "sendbuf == recvbuf: the start succeeds, the agreement fails",
               rows[i], rc);
        if (req != TUNA_REQUEST_NULL)
            rc = tuna_request_wait(&req);
        expect(rc == MPI_ERR_BUFFER, "sendbuf == recvbuf is MPI_ERR_BUFFER", rows[i], rc);
        if (library)
            continue; /* the library checks the rest of its own arguments */
        /* A negative count: on every rank, or (agreed) on rank 0 alone. */
        const int count = !agreed || me == 0 ? -1 : c.rcount;
        req = (tuna_request)&c;
        rc = coll == TUNA_ALLGATHER
                 ? tuna_iallgather(c.sbuf, count, c.stype, c.rbuf, c.rcount, c.rtype,
                                   MPI_COMM_WORLD, &opt, &req)
                 : tuna_iallreduce(c.sbuf, c.rbuf, count, c.rtype, c.op, MPI_COMM_WORLD,
                                   &opt, &req);
        expect((rc == MPI_SUCCESS) == agreed && (req == TUNA_REQUEST_NULL) == !agreed,
               agreed ? "a negative count: the start succeeds, the agreement fails"
                      : "a negative count is refused at the start",
               rows[i], rc);
        if (req != TUNA_REQUEST_NULL)
            rc = tuna_request_wait(&req);
        expect(rc == (count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG),
               "a negative count is MPI_ERR_COUNT (another rank's: MPI_ERR_ARG)", rows[i], rc);
    }
    case_free(&c);
}

/* Whether this MPI's MPI_Comm_idup serves tuna's nonblocking set-up (not Open MPI's, 4 or 5:
 * TUNA_NO_NONBLOCKING_SETUP, src/core/tuna_internal.h); without it a first call on a fresh
 * communicator is the library's call, and auto's after a blocking named row too. */
#if defined(OPEN_MPI)
#define NB_SETUP 0
#else
#define NB_SETUP 1
#endif

/* Communicators tuna has not set up (issue 56): the first nonblocking call runs the set-up as
 * its first steps, then tuna's rows, never the library's call (the statistics' fallback): a
 * named row's first call runs the row, auto's first call tuna's choice; then a blocking call,
 * and both again. */
static void test_fresh_comm(tuna_collective coll)
{
    current = "fresh communicator";
    tuna_options ring;
    tuna_options_parse("ring", coll, &ring);
    tuna_stats_enable(1);
    for (int k = 0; k < 2; k++) {
        const tuna_options *first = k ? NULL : &ring;
        MPI_Comm fresh;
        MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
        ccase c;
        case_make(&c, coll, 5, 1, 0, coll == TUNA_ALLREDUCE, 77);
        tuna_request req;
        int rc = case_start(&c, fresh, first, &req);
        if (rc == MPI_SUCCESS)
            rc = tuna_request_wait(&req);
        const tuna_stats *st = tuna_stats_last();
        expect(rc == MPI_SUCCESS && case_ok(&c) && (st->fallback == NULL) == NB_SETUP &&
                   (k || !NB_SETUP || st->algorithm == ring.algorithm),
               "the first call on a fresh communicator runs tuna's set-up and rows",
               k ? "auto" : "ring", rc);
        refill(&c, 78);
        rc = case_blocking(&c, fresh, &ring);
        expect(rc == MPI_SUCCESS && case_ok(&c), "a blocking call after it", "ring", rc);
        for (int i = 0; i < 2; i++) {
            refill(&c, 79 + (uint64_t)i);
            rc = case_start(&c, fresh, i ? NULL : &ring, &req);
            if (rc == MPI_SUCCESS)
                rc = tuna_request_wait(&req);
            st = tuna_stats_last();
            expect(rc == MPI_SUCCESS && case_ok(&c) &&
                       (st->fallback == NULL) == (i == 0 || NB_SETUP),
                   "later nonblocking calls run tuna's rows", i ? "auto" : "ring", rc);
        }
        case_free(&c);
        MPI_Comm_free(&fresh);
    }
    tuna_stats_enable(0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    watchdog_start(WATCHDOG_S);
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 3 * (MPI_Aint)sizeof(int), &vec_type);
    MPI_Type_free(&v);
    MPI_Type_commit(&vec_type);
    MPI_Type_contiguous(2, MPI_INT, &pair_type);
    MPI_Type_commit(&pair_type);
    MPI_Op_create(pairsum_fn, 1, &pairsum_op);
    MPI_Op_create(affine_fn, 0, &affine_op);

    const tuna_collective colls[] = {TUNA_ALLGATHER, TUNA_ALLREDUCE};
    for (size_t i = 0; i < sizeof colls / sizeof *colls; i++) {
        test_fresh_comm(colls[i]);
        /* A blocking call sets MPI_COMM_WORLD up (its context, auto's selector), so the
         * nonblocking calls below run tuna's rows on it. */
        ccase c;
        case_make(&c, colls[i], 3, 0, 0, 0, 1);
        case_blocking(&c, MPI_COMM_WORLD, NULL);
        case_free(&c);
        test_rows(colls[i]);
        test_plans(colls[i]);
        test_refusals(colls[i]);
    }
    static const char *const ag_rows[] = {"ring", "kring:k=2", "recursive-doubling",
                                          "recmul-permuted:k=3", "recmul:k=3"};
    static const char *const ar_rows[] = {"ring", "kring:k=2", "recmul:k=3",
                                          "recmul-permuted:k=3", "recursive-doubling"};
    test_local_start(TUNA_ALLGATHER, ag_rows, 5);
    test_local_start(TUNA_ALLREDUCE, ar_rows, 5);
    /* Both collectives, several rows, tags apart: a blocking call of each among them. */
    test_outstanding((const started[]){{TUNA_ALLGATHER, "ring", 5, 0, 0, 0},
                                       {TUNA_ALLREDUCE, "recmul-permuted:k=2", 3000, 1, 1, 0},
                                       {TUNA_ALLGATHER, "kring:k=2", 7, 2, 0, 0},
                                       {TUNA_ALLREDUCE, "ring", 6, 0, 0, 1}},
                     4, &(const started){TUNA_ALLGATHER, "recursive-doubling", 4, 0, 0, 0});
    test_outstanding((const started[]){{TUNA_ALLREDUCE, "kring:k=2", 9, 0, 0, 0},
                                       {TUNA_ALLGATHER, "recmul-permuted:k=3", 3000, 0, 1, 0},
                                       {TUNA_ALLREDUCE, "recmul:k=3", 5, 1, 0, 1},
                                       {TUNA_ALLREDUCE, "auto", 8, 0, 1, 0}},
                     4, &(const started){TUNA_ALLREDUCE, "recmul-permuted:k=2", 6, 0, 0, 1});
    alarm(0);
    MPI_Op_free(&pairsum_op);
    MPI_Op_free(&affine_op);
    MPI_Type_free(&vec_type);
    MPI_Type_free(&pair_type);
    if (me == 0)
        printf("test_nonblocking_coll P=%d: %s\n", P, failures ? "FAILED" : "passed");
    MPI_Finalize();
    return failures ? 1 : 0;
}
