/*
 * Correctness harness for tuna_allreduce: one MPI job runs every algorithm
 * variant (k in {2, 3, 4, P}) x (datatype, op) x count x in-place against
 * PMPI_Allreduce on the same inputs. Integer results must match exactly,
 * floating-point sums within a tolerance; the receive buffer's holes and a
 * tail of guard bytes must keep their sentinel, the send buffer must be
 * unchanged, and bad arguments on one rank must make every rank fail.
 * Ops: sum, max, a user-defined commutative sum on derived types (contiguous
 * and non-contiguous), and a user-defined non-commutative 2x2 matrix product
 * (mod 10007), whose result depends on the rank order of the operands.
 *
 * Usage: test_allreduce [--quick]   (--quick: fewer cases, for large P)
 */
#include "tuna.h"
#include "support/coll_variants.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define GUARD 64
#define MOD 10007

static int P, me, failures;
static long cases_run;

/* inout = in x inout, element-wise over 2x2 integer matrices (row-major, 4 ints). */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int *a = in;
    int *b = inout;
    for (int e = 0; e < *len; e++, a += 4, b += 4) {
        int c[4] = {(a[0] * b[0] + a[1] * b[2]) % MOD, (a[0] * b[1] + a[1] * b[3]) % MOD,
                    (a[2] * b[0] + a[3] * b[2]) % MOD, (a[2] * b[1] + a[3] * b[3]) % MOD};
        memcpy(b, c, sizeof c);
    }
}

static MPI_Datatype vec_type;

/* inout += in for elements of two ints (contiguous pairs, or the vector type's 0 and 2). */
static void pairsum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int step = *type == vec_type ? 3 : 2, second = *type == vec_type ? 2 : 1;
    const int *a = in;
    int *b = inout;
    for (int e = 0; e < *len; e++, a += step, b += step) {
        b[0] += a[0];
        b[second] += a[second];
    }
}

enum { K_INT, K_DOUBLE };
typedef struct op_case {
    const char *name;
    MPI_Datatype type;
    MPI_Op op;
    int kind;   /* base element: int or double */
    int elems;  /* base elements per datatype element */
    int exact;  /* compare exactly */
} op_case;

static void fail(const char *alg, const op_case *t, int count, int inplace, const char *why)
{
    fprintf(stderr, "FAIL rank %d P=%d alg=%s case=%s count=%d inplace=%d: %s\n", me, P, alg,
            t->name, count, inplace, why);
    failures++;
}

/* Fill the data positions of `count` elements (holes untouched). */
static void fill(const op_case *t, char *buf, int count, MPI_Aint ext, int salt)
{
    MPI_Aint lb, tlb, text;
    MPI_Type_get_true_extent(t->type, &tlb, &text);
    (void)lb;
    int stride = t->type == MPI_INT || t->type == MPI_DOUBLE ? 1 : 0;
    for (int i = 0; i < count; i++)
        for (int e = 0; e < t->elems; e++) {
            /* Element e of a derived element: contiguous ones pack ints, the vector skips. */
            MPI_Aint off = i * ext + (stride ? 0 : (text > t->elems * 4 ? 2 * e * 4 : e * 4));
            unsigned v = (unsigned)(me * 7919 + i * 104729 + e * 31 + salt * 13);
            if (t->kind == K_INT)
                *(int *)(buf + off) = t->elems == 4 ? (int)(v % MOD) : (int)(v % 2001) - 1000;
            else
                *(double *)(buf + off) = ((double)(v % 100003) / 50001.5) - 1.0;
        }
}

static void run_case(const char *alg, const tuna_options *opt, const op_case *t, int count,
                     int inplace, int salt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t->type, &lb, &ext);
    size_t bytes = (size_t)count * (size_t)ext;
    char *sbuf = malloc(bytes + GUARD), *sref = malloc(bytes + GUARD);
    char *got = malloc(bytes + GUARD), *want = malloc(bytes + GUARD);
    memset(sbuf, SENTINEL, bytes + GUARD);
    fill(t, sbuf, count, ext, salt);
    memcpy(sref, sbuf, bytes + GUARD);
    if (inplace) {
        memcpy(got, sbuf, bytes + GUARD);
        memcpy(want, sbuf, bytes + GUARD);
    } else {
        memset(got, SENTINEL, bytes + GUARD);
        memset(want, SENTINEL, bytes + GUARD);
    }
    int rc1 = PMPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, want, count, t->type, t->op,
                             MPI_COMM_WORLD);
    int rc2 = tuna_allreduce(inplace ? MPI_IN_PLACE : sbuf, got, count, t->type, t->op,
                             MPI_COMM_WORLD, opt);
    cases_run++;
    char why[600];
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
        snprintf(why, sizeof why, "rc vendor %d tuna %d (%s)", rc1, rc2, tuna_error_string(rc2));
        fail(alg, t, count, inplace, why);
    } else if (t->exact) {
        if (memcmp(got, want, bytes + GUARD) != 0) {
            size_t i = 0;
            while (got[i] == want[i])
                i++;
            snprintf(why, sizeof why, "result differs at byte %zu", i);
            fail(alg, t, count, inplace, why);
        }
    } else {
        /* Doubles: a sum of P values in [-1, 1] in another order; holes/guard exact. */
        double tol = 1e-12 * P;
        for (int i = 0; i < count; i++) {
            double a = ((double *)got)[i], b = ((double *)want)[i];
            if (!(fabs(a - b) <= tol)) {
                snprintf(why, sizeof why, "element %d: %.17g vs %.17g", i, a, b);
                fail(alg, t, count, inplace, why);
                break;
            }
        }
        if (memcmp(got + bytes, want + bytes, GUARD) != 0)
            fail(alg, t, count, inplace, "guard bytes after the buffer overwritten");
    }
    if (!inplace && memcmp(sbuf, sref, bytes + GUARD) != 0)
        fail(alg, t, count, inplace, "send buffer modified");
    free(sbuf);
    free(sref);
    free(got);
    free(want);
}

static void error_cases(void)
{
    tuna_options opt;
    tuna_options_parse("recmul:k=3", TUNA_ALLREDUCE, &opt);
    int s[8] = {0}, r[8];
    /* Under TUNA_ARGCHECK=collective errors on one rank are agreed by all (and differing
     * sizes caught); by default, as in MPI libraries, only the rank that sees an error
     * returns it, so the errors are made on every rank and differing sizes not tried. */
    const char *env = getenv("TUNA_ARGCHECK");
    const int collective = env && strcmp(env, "collective") == 0;
    int bad = collective ? P - 1 : me;
    int rc = tuna_allreduce(s, r, me == bad ? -1 : 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &opt);
    if (rc == MPI_SUCCESS)
        fail("recmul:k=3", &(op_case){"int-sum", MPI_INT, MPI_SUM, 0, 1, 1}, -1, 0,
             "negative count on one rank not reported");
    if (P > 1 && collective) {
        rc = tuna_allreduce(s, r, me == bad ? 3 : 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &opt);
        if (rc == MPI_SUCCESS)
            fail("recmul:k=3", &(op_case){"int-sum", MPI_INT, MPI_SUM, 0, 1, 1}, 3, 0,
                 "count differing across ranks not reported");
    }
    rc = tuna_allreduce(s, r, 4, MPI_INT, me == bad ? MPI_OP_NULL : MPI_SUM, MPI_COMM_WORLD,
                        &opt);
    if (rc == MPI_SUCCESS)
        fail("recmul:k=3", &(op_case){"int-sum", MPI_INT, MPI_SUM, 0, 1, 1}, 4, 0,
             "MPI_OP_NULL on one rank not reported");
    if (tuna_options_parse("recmul-permuted:radix=2", TUNA_ALLREDUCE, &opt) == MPI_SUCCESS)
        fail("recmul-permuted:radix=2", &(op_case){"-", MPI_INT, MPI_SUM, 0, 1, 1}, 0, 0,
             "unknown key accepted");
    cases_run += 4;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;

    MPI_Datatype pair, mat, vec;
    MPI_Type_contiguous(2, MPI_INT, &pair); /* derived contiguous type */
    MPI_Type_commit(&pair);
    MPI_Type_contiguous(4, MPI_INT, &mat); /* 2x2 matrix */
    MPI_Type_commit(&mat);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* non-contiguous: exercises the copy path */
    MPI_Type_commit(&vec);
    vec_type = vec;
    /* Predefined ops are not defined on derived types in every MPI (Open MPI refuses),
     * so the derived types use a user-defined commutative sum. */
    MPI_Op matmul, pairsum;
    MPI_Op_create(matmul_op, 0, &matmul);
    MPI_Op_create(pairsum_op, 1, &pairsum);
    const op_case cases[] = {
        {"int-sum", MPI_INT, MPI_SUM, K_INT, 1, 1},
        {"matmul-noncommutative", mat, matmul, K_INT, 4, 1},
        {"double-sum", MPI_DOUBLE, MPI_SUM, K_DOUBLE, 1, 0},
        {"int-max", MPI_INT, MPI_MAX, K_INT, 1, 1},
        {"contig2-usersum", pair, pairsum, K_INT, 2, 1},
        {"double-max", MPI_DOUBLE, MPI_MAX, K_DOUBLE, 1, 1},
        {"vector-usersum", vec, pairsum, K_INT, 2, 1},
    };
    typedef struct { int c, count, inplace; } shape;
    const shape shapes[] = {
        {0, 37, 0}, {1, 5, 1}, {2, 1001, 0}, {1, 37, 0}, {4, 7, 1}, {0, 0, 0},
        {0, 1, 1},  {0, 5, 0}, {0, 1001, 1}, {1, 1, 0},  {1, 1001, 0}, {2, 37, 1},
        {3, 37, 0}, {5, 7, 1}, {6, 13, 0},   {6, 5, 1},
    };
    const int nshapes = quick ? 6 : (int)(sizeof shapes / sizeof shapes[0]);

    char algs[64][COLL_VARIANT_LEN];
    const int nalgs = coll_variants(TUNA_ALLREDUCE, algs, 64);

    int salt = 0;
    for (int ai = 0; ai <= nalgs; ai++) {
        tuna_options opt, *optp = &opt;
        const char *name = ai < nalgs ? algs[ai] : "(default)";
        if (ai == nalgs)
            optp = NULL; /* TUNA_ALLREDUCE or the built-in default */
        else if (tuna_options_parse(algs[ai], TUNA_ALLREDUCE, &opt) != MPI_SUCCESS) {
            fail(name, &cases[0], 0, 0, tuna_error_string(MPI_ERR_ARG));
            continue;
        }
        for (int si = 0; si < nshapes; si++)
            run_case(name, optp, &cases[shapes[si].c], shapes[si].count, shapes[si].inplace,
                     ++salt);
    }
    error_cases();

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_allreduce P=%d: %ld cases, %d failures\n", P, cases_run, total);
    MPI_Op_free(&matmul);
    MPI_Op_free(&pairsum);
    MPI_Type_free(&pair);
    MPI_Type_free(&mat);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return total != 0;
}
