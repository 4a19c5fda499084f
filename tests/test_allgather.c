/*
 * Correctness harness for tuna_allgather: one MPI job runs every algorithm
 * variant (k in {2, 3, 4, P}) x datatype x count x in-place, and compares the
 * whole receive region (blocks, holes and a tail of guard bytes) byte for byte
 * with PMPI_Allgather on the same sentinel-filled buffers. It also checks that
 * the send buffer is unchanged and that bad arguments on one rank make every
 * rank return an error. Failures print the case; exit code = failure count.
 *
 * Usage: test_allgather [--quick]   (--quick: fewer counts, for large P)
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

static unsigned char pattern(int rank, size_t i, int salt)
{
    return (unsigned char)((rank * 37 + (int)i * 11 + salt * 101 + (int)(i >> 8)) & 0xFF);
}

static void fail(const char *alg, const char *type, int count, int inplace, const char *why)
{
    fprintf(stderr, "FAIL rank %d P=%d alg=%s type=%s count=%d inplace=%d: %s\n", me, P, alg,
            type, count, inplace, why);
    failures++;
}

static void run_case(const char *alg, const tuna_options *opt, const type_case *t, int count,
                     int inplace, int salt)
{
    MPI_Aint lb, sext, rext;
    MPI_Type_get_extent(t->stype, &lb, &sext);
    MPI_Type_get_extent(t->rtype, &lb, &rext);
    int scount = count * t->sratio;
    size_t sbytes = (size_t)scount * (size_t)sext;
    size_t rbytes = (size_t)P * (size_t)count * (size_t)rext + GUARD;
    unsigned char *sbuf = malloc(sbytes + 1), *sref = malloc(sbytes + 1);
    unsigned char *got = malloc(rbytes), *want = malloc(rbytes);
    for (size_t i = 0; i < sbytes; i++)
        sbuf[i] = pattern(me, i, salt);
    memcpy(sref, sbuf, sbytes);
    memset(got, SENTINEL, rbytes);
    if (inplace) /* own block in place: this rank's data in its slot */
        for (size_t i = 0; i < (size_t)count * (size_t)rext; i++)
            got[(size_t)me * (size_t)count * (size_t)rext + i] = pattern(me, i, salt);
    memcpy(want, got, rbytes);
    int rc1 = PMPI_Allgather(inplace ? MPI_IN_PLACE : sbuf, scount, t->stype, want, count,
                             t->rtype, MPI_COMM_WORLD);
    int rc2 = tuna_allgather(inplace ? MPI_IN_PLACE : (void *)sbuf, scount, t->stype, got, count,
                             t->rtype, MPI_COMM_WORLD, opt);
    cases_run++;
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
        char why[600];
        snprintf(why, sizeof why, "rc vendor %d tuna %d (%s)", rc1, rc2, tuna_error_string(rc2));
        fail(alg, t->name, count, inplace, why);
    } else if (memcmp(got, want, rbytes) != 0) {
        size_t i = 0;
        while (got[i] == want[i])
            i++;
        char why[128];
        snprintf(why, sizeof why, "receive region differs at byte %zu (block %zu): %d vs %d", i,
                 count ? i / ((size_t)count * (size_t)rext) : 0, got[i], want[i]);
        fail(alg, t->name, count, inplace, why);
    } else if (memcmp(sbuf, sref, sbytes) != 0) {
        fail(alg, t->name, count, inplace, "send buffer modified");
    }
    free(sbuf);
    free(sref);
    free(got);
    free(want);
}

/* Bad arguments on one rank: every rank must return an error (and none hang). */
static void error_cases(void)
{
    tuna_options opt;
    tuna_options_parse("ring", TUNA_ALLGATHER, &opt);
    int buf[64];
    /* Under TUNA_ARGCHECK=collective errors on one rank are agreed by all (and differing
     * sizes caught); by default, as in MPI libraries, only the rank that sees an error
     * returns it, so the errors are made on every rank and differing sizes not tried. */
    const char *env = getenv("TUNA_ARGCHECK");
    const int collective = env && strcmp(env, "collective") == 0;
    int bad = collective ? P - 1 : me;
    int rc = tuna_allgather(buf, 1, MPI_INT, buf + 8, me == bad ? -1 : 1, MPI_INT,
                            MPI_COMM_WORLD, &opt);
    if (rc == MPI_SUCCESS)
        fail("ring", "int", -1, 0, "negative recvcount on one rank not reported");
    if (P > 1 && collective) {
        int rb[64];
        rc = tuna_allgather(buf, me == bad ? 2 : 1, MPI_INT, rb, me == bad ? 2 : 1, MPI_INT,
                            MPI_COMM_WORLD, &opt);
        if (rc == MPI_SUCCESS)
            fail("ring", "int", 1, 0, "recvcount differing across ranks not reported");
    }
    rc = tuna_allgather(buf, 2, MPI_INT, buf + 8, 1, MPI_INT, MPI_COMM_WORLD, &opt);
    if (rc != MPI_ERR_TRUNCATE)
        fail("ring", "int", 1, 0, "send/receive size mismatch not MPI_ERR_TRUNCATE");
    if (tuna_options_parse("recmul:k=1", TUNA_ALLGATHER, &opt) == MPI_SUCCESS)
        fail("recmul:k=1", "-", 0, 0, "k=1 accepted");
    if (tuna_options_parse("recmul-permuted:radix=2", TUNA_ALLGATHER, &opt) == MPI_SUCCESS)
        fail("recmul-permuted:radix=2", "-", 0, 0, "unknown key accepted");
    if (tuna_options_parse("scattered", TUNA_ALLGATHER, &opt) == MPI_SUCCESS)
        fail("scattered", "-", 0, 0, "alltoallv algorithm accepted for allgather");
    cases_run += 6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;

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
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    /* Per algorithm: every count with int, then the other types at odd sizes, each
     * type in place where MPI allows it. --quick keeps the first `nquick` cases. */
    typedef struct { int type, count, inplace; } shape;
    const shape shapes[] = {
        {0, 7, 0},  {4, 101, 1}, {3, 7, 0}, {2, 33, 1}, {1, 1, 0}, {0, 0, 0},
        {4, 1001, 1},
        {0, 1, 1},  {0, 33, 0},   {0, 1001, 0}, {1, 33, 1}, {1, 1001, 0},
        {2, 7, 0},  {3, 1001, 0}, {4, 7, 0}, {4, 0, 1},
    };
    const int nshapes = quick ? 5 : (int)(sizeof shapes / sizeof shapes[0]);
    (void)ntypes;
    char algs[64][COLL_VARIANT_LEN];
    const int nalgs = coll_variants(TUNA_ALLGATHER, algs, 64);

    int salt = 0;
    for (int ai = 0; ai <= nalgs; ai++) {
        tuna_options opt, *optp = &opt;
        const char *name = ai < nalgs ? algs[ai] : "(default)";
        if (ai == nalgs)
            optp = NULL; /* TUNA_ALLGATHER or the built-in default */
        else if (tuna_options_parse(algs[ai], TUNA_ALLGATHER, &opt) != MPI_SUCCESS) {
            fail(name, "-", 0, 0, tuna_error_string(MPI_ERR_ARG));
            continue;
        }
        for (int si = 0; si < nshapes; si++)
            run_case(name, optp, &types[shapes[si].type], shapes[si].count,
                     shapes[si].inplace, ++salt);
    }
    error_cases();

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_allgather P=%d: %ld cases, %d failures\n", P, cases_run, total);
    MPI_Type_free(&tri);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return total != 0;
}
