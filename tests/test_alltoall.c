/*
 * Correctness harness for the uniform all-to-all: every row of the alltoall registry (with
 * parameter edges, from support/coll_variants.h, plus TuNA's and the Bruck family's radix
 * edges) x datatype x count x in-place x form (blocking tuna_alltoall, tuna_alltoall_c,
 * nonblocking tuna_ialltoall with a second operation outstanding, persistent
 * tuna_alltoall_init and tuna_alltoall_init_c started twice), each compared byte for byte over the whole receive
 * region (blocks, holes and guard bytes) with PMPI_Alltoall on the same sentinel-filled
 * buffers; the send buffer must be unchanged. Then the errors each rank must report, and
 * mesh's clamp of `dims` as tuna_stats shows it (phases, temporary memory).
 * Failures print the case; exit code = failure count.
 *
 * Usage: test_alltoall [--quick]   (--quick: fewer shapes, for large P; TUNA_TEST_MIN_STRIDE=K:
 *                                   every K-th case, offset by P)
 *        test_alltoall --settled-vendor   (with TUNA_TUNING=tests/data/tuning_alltoall_vendor.json:
 *                                          auto's reuse of the library's call, bad arguments)
 */
#include "tuna.h"
#include "support/coll_variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define GUARD 64

static int P, me, failures;
static long cases_run;

typedef struct type_case {
    const char *name;
    MPI_Datatype stype, rtype;
    int sratio; /* sendcount = sratio * recvcount */
    int inplace_ok;
} type_case;

enum form {
    FORM_BLOCKING,
    FORM_LARGE,
    FORM_NONBLOCKING,
    FORM_PLAN,
    FORM_PLAN_LARGE,
    FORM_COUNT
};
static const char *const form_name[FORM_COUNT] = {"blocking", "large-count", "nonblocking",
                                                  "plan", "large-count plan"};

static unsigned char pattern(int rank, size_t i, int salt)
{
    return (unsigned char)((rank * 37 + (int)i * 11 + salt * 101 + (int)(i >> 8)) & 0xFF);
}

static void fail(const char *alg, const char *type, int count, int inplace, int form,
                 const char *why)
{
    fprintf(stderr, "FAIL rank %d P=%d alg=%s type=%s count=%d inplace=%d form=%s: %s\n", me, P,
            alg, type, count, inplace, form >= 0 ? form_name[form] : "-", why);
    failures++;
}

/* tuna's call in `form` on the given buffers (a plan: init, two starts, free). */
static int run_tuna(int form, const tuna_options *opt, const void *sbuf, int scount,
                    MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype)
{
    int rc;
    switch (form) {
    case FORM_BLOCKING:
        return tuna_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, MPI_COMM_WORLD, opt);
    case FORM_LARGE:
        return tuna_alltoall_c(sbuf, scount, stype, rbuf, rcount, rtype, MPI_COMM_WORLD, opt);
    case FORM_NONBLOCKING: {
        /* a second operation outstanding with it (a small alltoall of ints, default options) */
        int *x = malloc(sizeof(int) * 2 * (size_t)P);
        for (int j = 0; j < P; j++)
            x[j] = me * 1000 + j;
        tuna_request r1, r2;
        rc = tuna_ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, MPI_COMM_WORLD, opt, &r1);
        int rc2 = tuna_ialltoall(x, 1, MPI_INT, x + P, 1, MPI_INT, MPI_COMM_WORLD, NULL, &r2);
        if (rc == MPI_SUCCESS)
            rc = tuna_request_wait(&r1);
        if (rc2 == MPI_SUCCESS)
            rc2 = tuna_request_wait(&r2);
        for (int j = 0; j < P && rc2 == MPI_SUCCESS; j++)
            if (x[P + j] != j * 1000 + me)
                rc2 = MPI_ERR_OTHER;
        free(x);
        return rc != MPI_SUCCESS ? rc : rc2;
    }
    case FORM_PLAN:
    case FORM_PLAN_LARGE: {
        tuna_plan plan;
        /* the default (auto) measures: the planner times its candidates */
        const unsigned flags = opt ? TUNA_PLAN_ESTIMATE : TUNA_PLAN_MEASURE;
        rc = form == FORM_PLAN
                 ? tuna_alltoall_init(sbuf, scount, stype, rbuf, rcount, rtype, MPI_COMM_WORLD,
                                      opt, flags, &plan)
                 : tuna_alltoall_init_c(sbuf, scount, stype, rbuf, rcount, rtype,
                                        MPI_COMM_WORLD, opt, flags, &plan);
        /* two starts: the second must give the same result (in place: the first's output is
         * the second's input, so in place starts once) */
        for (int s = 0; s < (sbuf == MPI_IN_PLACE ? 1 : 2) && rc == MPI_SUCCESS; s++)
            if ((rc = tuna_start(plan)) == MPI_SUCCESS)
                rc = tuna_wait(plan);
        if (plan)
            tuna_plan_free(&plan);
        return rc;
    }
    }
    return MPI_ERR_ARG;
}

static void run_case(const char *alg, const tuna_options *opt, const type_case *t, int count,
                     int inplace, int form, int salt)
{
    MPI_Aint lb, sext, rext;
    MPI_Type_get_extent(t->stype, &lb, &sext);
    MPI_Type_get_extent(t->rtype, &lb, &rext);
    const int scount = count * t->sratio;
    const size_t sbytes = (size_t)P * (size_t)scount * (size_t)sext;
    const size_t rbytes = (size_t)P * (size_t)count * (size_t)rext + GUARD;
    unsigned char *sbuf = malloc(sbytes + 1), *sref = malloc(sbytes + 1);
    unsigned char *got = malloc(rbytes), *want = malloc(rbytes);
    for (size_t i = 0; i < sbytes; i++)
        sbuf[i] = pattern(me, i, salt);
    memcpy(sref, sbuf, sbytes);
    memset(got, SENTINEL, rbytes);
    if (inplace) /* the blocks to send, in the receive buffer */
        for (size_t i = 0; i + GUARD < rbytes; i++)
            got[i] = pattern(me, i, salt);
    memcpy(want, got, rbytes);
    int rc1 = PMPI_Alltoall(inplace ? MPI_IN_PLACE : sbuf, scount, t->stype, want, count,
                            t->rtype, MPI_COMM_WORLD);
    int rc2 = run_tuna(form, opt, inplace ? MPI_IN_PLACE : (void *)sbuf, scount, t->stype, got,
                       count, t->rtype);
    cases_run++;
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
        char why[600];
        snprintf(why, sizeof why, "rc library %d tuna %d (%s)", rc1, rc2, tuna_error_string(rc2));
        fail(alg, t->name, count, inplace, form, why);
    } else if (memcmp(got, want, rbytes) != 0) {
        size_t i = 0;
        while (got[i] == want[i])
            i++;
        char why[128];
        snprintf(why, sizeof why, "receive region differs at byte %zu (block %zu): %d vs %d", i,
                 count ? i / ((size_t)count * (size_t)rext) : 0, got[i], want[i]);
        fail(alg, t->name, count, inplace, form, why);
    } else if (memcmp(sbuf, sref, sbytes) != 0) {
        fail(alg, t->name, count, inplace, form, "send buffer modified");
    }
    free(sbuf);
    free(sref);
    free(got);
    free(want);
}

/* rc is an error (code, unless MPI_SUCCESS: any) with tuna's message, which names fn. */
static void expect_error_of(const char *alg, const char *fn, int rc, int code, const char *what)
{
    cases_run++;
    const char *msg = tuna_error_string(rc);
    if (rc == MPI_SUCCESS || (code != MPI_SUCCESS && rc != code) || !strstr(msg, fn)) {
        char why[600];
        snprintf(why, sizeof why, "%s: rc %d (%s), expected %d with a message of %s", what, rc,
                 msg, code, fn);
        fail(alg, "int", 1, 0, -1, why);
    }
}

static void expect_error(int rc, int code, const char *what)
{
    expect_error_of("pairwise", "alltoall", rc, code, what); /* tuna_ialltoall's too */
}

/*
 * mesh runs min(dims, prime factors of P) phases (tuna_stats rounds; none at P = 1) and holds
 * one temporary of P blocks from two phases on: dims from 1 to two above what P allows, and
 * the largest value the parser takes. The bytes are run_case's to check; these are of an
 * exchange that must also be PMPI's.
 */
static void mesh_phases(void)
{
    int most = 0;
    for (int n = P, p = 2; n > 1; p++)
        for (; n % p == 0; n /= p)
            most++;
    const int count = 5;
    const size_t bytes = (size_t)P * count * sizeof(int);
    int *sbuf = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    for (int i = 0; i < P * count; i++)
        sbuf[i] = me * 100000 + i;
    PMPI_Alltoall(sbuf, count, MPI_INT, want, count, MPI_INT, MPI_COMM_WORLD);
    tuna_stats_enable(1);
    for (int dims = 1; dims <= most + 3; dims++) {
        const int asked = dims <= most + 2 ? dims : 2147483647;
        char str[48], why[160];
        snprintf(str, sizeof str, "mesh:dims=%d", asked);
        tuna_options opt;
        cases_run++;
        if (tuna_options_parse(str, TUNA_ALLTOALL, &opt) != MPI_SUCCESS) {
            fail(str, "int", count, 0, FORM_BLOCKING, "not parsed");
            continue;
        }
        memset(got, SENTINEL, bytes);
        const int rc = tuna_alltoall(sbuf, count, MPI_INT, got, count, MPI_INT, MPI_COMM_WORLD,
                                     &opt);
        const tuna_stats *st = tuna_stats_last();
        const int k = asked < most ? asked : most;
        const size_t temp = k >= 2 ? bytes : 0;
        snprintf(why, sizeof why, "rc %d, %d phases and %zu temporary bytes, want %d and %zu",
                 rc, st->rounds, st->temp_bytes, k, temp);
        if (rc != MPI_SUCCESS || memcmp(got, want, bytes) != 0 || st->rounds != k ||
            st->temp_bytes != temp)
            fail(str, "int", count, 0, FORM_BLOCKING, why);
    }
    tuna_stats_enable(0);
    free(sbuf);
    free(got);
    free(want);
}

/* Bad arguments on every rank (by default only the rank that sees an error returns it). */
static void error_cases(void)
{
    tuna_options opt;
    tuna_options_parse("pairwise", TUNA_ALLTOALL, &opt);
    int *buf = calloc(8 * (size_t)P + 8, sizeof(int)), *rb = calloc(8 * (size_t)P + 8, sizeof(int));
    expect_error(tuna_alltoall(buf, 1, MPI_INT, rb, -1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_COUNT, "negative recvcount");
    expect_error(tuna_alltoall(buf, -1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_COUNT, "negative sendcount");
    expect_error(tuna_alltoall(buf, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_TYPE, "sendtype MPI_DATATYPE_NULL");
    expect_error(tuna_alltoall(buf, 2, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_TRUNCATE, "send block larger than the receive block");
    expect_error(tuna_alltoall(buf, 1, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_TRUNCATE, "send block smaller than the receive block");
    expect_error(tuna_alltoall(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_BUFFER, "recvbuf MPI_IN_PLACE");
    expect_error(tuna_alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_BUFFER, "sendbuf aliases recvbuf");
    expect_error(tuna_alltoall(buf, 2, MPI_INT, buf + 1, 2, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_SUCCESS, "overlapping send and receive buffers");
    expect_error(tuna_alltoall(NULL, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, &opt),
                 MPI_ERR_BUFFER, "NULL sendbuf with data");
    tuna_request r;
    expect_error(tuna_ialltoall(buf, 1, MPI_INT, rb, -1, MPI_INT, MPI_COMM_WORLD, &opt, &r),
                 MPI_ERR_COUNT, "nonblocking: negative recvcount");
    tuna_plan plan;
    expect_error(tuna_alltoall_init(buf, 2, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, &opt,
                                    TUNA_PLAN_ESTIMATE, &plan),
                 MPI_ERR_TRUNCATE, "plan: send block larger than the receive block");
    cases_run++;
    if (tuna_options_parse("twophase-bruck", TUNA_ALLTOALL, &opt) == MPI_SUCCESS)
        fail("twophase-bruck", "-", 0, 0, -1, "an alltoallv-only row accepted for alltoall");
    free(buf);
    free(rb);
}

/*
 * auto settled on the library's own call (run with TUNA_TUNING=tuning_alltoall_vendor.json):
 * its repeated calls of a block size go straight to the library (reuse_library in
 * src/alltoall/alltoall.c). Bad arguments of that block size must still get tuna's error
 * and message, never the library's error handler (fatal by default), and the valid calls
 * between them PMPI's bytes.
 */
/* A valid call with opt (NULL: the defaults, auto) of count ints per block, out of place or
 * in place, as PMPI's (the sentinel intact beyond the blocks: got and want hold n ints). */
static void settled_valid_opt(const tuna_options *opt, int *sbuf, int *got, int *want,
                              int count, int n, int inplace, int salt)
{
    const size_t bytes = sizeof(int) * (size_t)n;
    for (int i = 0; i < n; i++)
        sbuf[i] = me * 1000 + i + salt;
    memset(got, SENTINEL, bytes);
    if (inplace)
        memcpy(got, sbuf, sizeof(int) * (size_t)P * (size_t)count);
    memcpy(want, got, bytes);
    PMPI_Alltoall(inplace ? MPI_IN_PLACE : sbuf, count, MPI_INT, want, count, MPI_INT,
                  MPI_COMM_WORLD);
    const int rc = tuna_alltoall(inplace ? MPI_IN_PLACE : sbuf, count, MPI_INT, got, count,
                                 MPI_INT, MPI_COMM_WORLD, opt);
    cases_run++;
    if (rc != MPI_SUCCESS || memcmp(got, want, bytes) != 0)
        fail("auto (settled on vendor)", "int", count, inplace, FORM_BLOCKING,
             rc != MPI_SUCCESS ? tuna_error_string(rc) : "bytes differ from PMPI's");
}

static void settled_valid(int *sbuf, int *got, int *want, int count, int n, int inplace,
                          int salt)
{
    settled_valid_opt(NULL, sbuf, got, want, count, n, inplace, salt);
}

static void settled_vendor(void)
{
    const int count = 4, n = P * count + 8;
    int *sbuf = malloc(sizeof(int) * (size_t)n), *got = malloc(sizeof(int) * (size_t)n),
        *want = malloc(sizeof(int) * (size_t)n);
    settled_valid(sbuf, got, want, count, n, 0, 1); /* the first call chooses (the table) */
    settled_valid(sbuf, got, want, count, n, 0, 2); /* the later ones reuse that choice */
    settled_valid(sbuf, got, want, count, n, 1, 3);
    const struct {
        const void *sbuf;
        int scount;
        MPI_Datatype stype;
        void *rbuf;
        MPI_Datatype rtype;
        int code;
        const char *what;
    } bad[] = {
        {sbuf, count + 1, MPI_INT, got, MPI_INT, MPI_ERR_TRUNCATE, "send block larger"},
        {sbuf, count - 1, MPI_INT, got, MPI_INT, MPI_ERR_TRUNCATE, "send block smaller"},
        {sbuf, -1, MPI_INT, got, MPI_INT, MPI_ERR_COUNT, "negative sendcount"},
        {sbuf, count, MPI_DATATYPE_NULL, got, MPI_INT, MPI_ERR_TYPE, "sendtype NULL"},
        {sbuf, count, MPI_INT, got, MPI_DATATYPE_NULL, MPI_ERR_TYPE, "recvtype NULL"},
        {MPI_IN_PLACE, count, MPI_INT, got, MPI_DATATYPE_NULL, MPI_ERR_TYPE,
         "in place, recvtype NULL"},
        {NULL, count, MPI_INT, got, MPI_INT, MPI_ERR_BUFFER, "NULL sendbuf"},
        {sbuf, count, MPI_INT, NULL, MPI_INT, MPI_ERR_BUFFER, "NULL recvbuf"},
        {sbuf, count, MPI_INT, MPI_IN_PLACE, MPI_INT, MPI_ERR_BUFFER, "recvbuf MPI_IN_PLACE"},
        {MPI_IN_PLACE, count, MPI_INT, MPI_IN_PLACE, MPI_INT, MPI_ERR_BUFFER,
         "both MPI_IN_PLACE"},
        {got, count, MPI_INT, got, MPI_INT, MPI_ERR_BUFFER, "sendbuf aliases recvbuf"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char what[96];
        snprintf(what, sizeof what, "auto settled on vendor: %s", bad[k].what);
        expect_error_of("auto (settled on vendor)", "tuna_alltoall",
                        tuna_alltoall(bad[k].sbuf, bad[k].scount, bad[k].stype, bad[k].rbuf,
                                      count, bad[k].rtype, MPI_COMM_WORLD, NULL),
                        bad[k].code, what);
        /* nothing lost: the next call is fine */
        settled_valid(sbuf, got, want, count, n, (int)(k % 2), 4 + (int)k);
    }
    /* Options parsed as auto take the same path as the defaults (the drop-in's). */
    tuna_options autoopt;
    tuna_options_parse("auto", TUNA_ALLTOALL, &autoopt);
    for (int k = 0; k < 3; k++)
        settled_valid_opt(&autoopt, sbuf, got, want, count, n, 0, 40 + k);
    /* A repeated call with statistics on is recorded as such: the vendor row, chosen by the
     * table (source 2), not skipped by the shortest path. */
    tuna_stats_enable(1);
    for (int k = 0; k < 2; k++) {
        settled_valid(sbuf, got, want, count, n, 0, 50 + k);
        const tuna_stats *st = tuna_stats_last();
        char why[160];
        snprintf(why, sizeof why, "statistics: algorithm %d source %d, want %d and 2",
                 st->algorithm, st->auto_source, tuna_algorithm_find(TUNA_ALLTOALL, "vendor"));
        cases_run++;
        if (st->algorithm != tuna_algorithm_find(TUNA_ALLTOALL, "vendor") || st->auto_source != 2)
            fail("auto (settled on vendor)", "int", count, 0, FORM_BLOCKING, why);
    }
    tuna_stats_enable(0);
    free(sbuf);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && strcmp(argv[1], "--settled-vendor") == 0) {
        settled_vendor();
        int total = 0;
        MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (me == 0)
            printf("test_alltoall --settled-vendor P=%d: %ld cases, %d failures\n", P, cases_run,
                   total);
        MPI_Finalize();
        return total != 0;
    }

    MPI_Datatype tri, vec;
    MPI_Type_contiguous(3, MPI_INT, &tri); /* derived contiguous type */
    MPI_Type_commit(&tri);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* non-contiguous: 2 ints, one-int hole */
    MPI_Type_commit(&vec);
    const type_case types[] = {
        {"int", MPI_INT, MPI_INT, 1, 1},
        {"double", MPI_DOUBLE, MPI_DOUBLE, 1, 1},
        {"contig3", tri, tri, 1, 1},
        {"int->contig3", MPI_INT, tri, 3, 0},
        {"vector", vec, vec, 1, 1},
    };
    /* Per row and form: these shapes (type, count, in place); --quick keeps the first
     * nquick. Every form runs every shape on the blocking form's first rows. */
    typedef struct { int type, count, inplace; } shape;
    const shape shapes[] = {
        {0, 7, 0}, {4, 101, 1}, {3, 7, 0}, {2, 33, 1}, {1, 1, 0}, {0, 0, 0},
        {4, 1001, 0}, {0, 1, 1}, {0, 33, 0}, {1, 1001, 1}, {2, 7, 0}, {4, 0, 1},
    };
    const int nshapes = quick ? 5 : (int)(sizeof shapes / sizeof shapes[0]);
    char algs[96][COLL_VARIANT_LEN];
    int nalgs = coll_variants(TUNA_ALLTOALL, algs, 80);
    /* the radix edges of the logarithmic rows beyond their first parameter's */
    static const char *const extra[] = {"tuna:radix=3,block=1", "tuna:radix=P,block=2",
                                        "coalesced:radix=2,block=1", "staggered:block=2"};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0] && nalgs < 96; i++)
        snprintf(algs[nalgs++], COLL_VARIANT_LEN, "%s", extra[i]);

    /* Slow configurations (sanitizers, oversubscribed MPICH: TUNA_TEST_MIN_STRIDE = K > 1)
     * run every K-th case, offset by P, so that P = 1..K together still run every case. */
    const char *env_stride = getenv("TUNA_TEST_MIN_STRIDE");
    const int stride = env_stride && atoi(env_stride) > 1 ? atoi(env_stride) : 1;
    long k = 0;
    int salt = 0;
    for (int ai = 0; ai <= nalgs; ai++) {
        tuna_options opt, *optp = &opt;
        const char *name = ai < nalgs ? algs[ai] : "(default)";
        if (ai == nalgs)
            optp = NULL; /* TUNA_ALLTOALL or the built-in default */
        else if (tuna_options_parse(algs[ai], TUNA_ALLTOALL, &opt) != MPI_SUCCESS) {
            fail(name, "-", 0, 0, -1, tuna_error_string(MPI_ERR_ARG));
            continue;
        }
        for (int form = 0; form < FORM_COUNT; form++)
            for (int si = 0; si < nshapes; si++) {
                /* the large-count forms on a few shapes: the same paths otherwise */
                if ((form == FORM_LARGE || form == FORM_PLAN_LARGE) && si % 3 != 0)
                    continue;
                if (k++ % stride != P % stride)
                    continue;
                run_case(name, optp, &types[shapes[si].type], shapes[si].count,
                         shapes[si].inplace, form, ++salt);
            }
    }
    error_cases();
    mesh_phases();

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_alltoall P=%d: %ld cases, %d failures\n", P, cases_run, total);
    MPI_Type_free(&tri);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return total != 0;
}
