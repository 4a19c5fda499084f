/*
 * Strict test of tuna's plans (persistent collectives, include/tuna.h "Plans"):
 * tuna_alltoallv_init / tuna_allgather_init / tuna_allreduce_init for every row of each
 * algorithm table (plus parameter edges, and opt = NULL with TUNA_PLAN_ESTIMATE and
 * TUNA_PLAN_MEASURE), on MPI_COMM_WORLD, a duplicate and a split communicator.
 *
 * For each plan: the receive buffer (and the send buffer) must be untouched by init; then
 * NSTARTS rounds of tuna_start + tuna_wait, the input REWRITTEN with new values before
 * every start (in place: the receive buffer refilled with the new input), each result
 * compared byte for byte with PMPI_Alltoallv / PMPI_Allgather / PMPI_Allreduce on the same
 * input into a separate sentinel-filled reference buffer (gaps, datatype holes and guard
 * bytes included), alltoallv blocks also checked against the generated payload
 * independently of any MPI library, the send buffer, counts and displacements unchanged.
 * Several plans are alive at once and started interleaved. tuna_plan_get_info: index in
 * range, source (FORCED / ESTIMATE / MEASURE or WISDOM), MEASURE's tried candidates, the
 * same info on every rank. State errors (MPI_ERR_REQUEST), NULL handles, init errors on one
 * rank agreed by all (no plan, no hang, a valid init afterwards works), wisdom export /
 * import (in process; bad, missing, unreadable-on-some-ranks and differing files rejected
 * on every rank) and, with --wisdom-save / --wisdom-load, across processes. Datatypes freed
 * and count arrays scribbled and freed right after init (MPI's persistent semantics,
 * docs/plans.md; not for allreduce, whose plan keeps the caller's handle); a user op must
 * see the caller's datatype handle. Every other alltoallv plan (in place too, init errors
 * too) is made by tuna_alltoallv_init_c from widened MPI_Count / MPI_Aint arrays, scribbled and
 * freed right after init; its own limit (in place, a non-contiguous block beyond INT_MAX
 * elements on one rank) must be MPI_ERR_COUNT there and an error on every rank.
 *
 * Every failure prints P, the rank, the communicator, the variant and the input (the first
 * 40 per rank); failures are agreed with an allreduce so every rank exits the same way
 * (exit code 1). A watchdog (alarm, TUNA_TEST_WATCHDOG seconds, default 60 per step) turns
 * a hang into a FAIL line naming the step. TUNA_TEST_MIN_STRIDE > 1 (sanitizer and MPICH
 * runs) thins the plans per variant from 4 to 2.
 *
 * Usage: test_plans [--seed S] [--no-null-plan-one-rank]
 *        test_plans --wisdom-save FILE   (a MEASURE plan, exported; FILE.expect: its choice)
 *        test_plans --wisdom-load FILE   (imported; the same plan must come from wisdom when
 *                                         P and TUNA_RANKS_PER_NODE match, else be measured)
 */
#define _POSIX_C_SOURCE 200809L
#include "tuna.h"
#include "support/test_data.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SENTINEL 0xA5
#define SEND_GAP 0xEE
#define GUARD 64
#define NSTARTS 5
#define MAXIN 4
#define MOD 10007

static int WP, WME; /* world size and rank */
static unsigned long base_seed = 20260315;
static int failures;
static long checks;
/* Plans per variant (the last one in place); TUNA_TEST_MIN_STRIDE > 1 (the sanitizer and
 * MPICH runs, see scripts/test.sh) thins it to 2. */
static int inputs_per_variant = 4;
static long nplans[TUNA_COLLECTIVE_COUNT], nstarts[TUNA_COLLECTIVE_COUNT];

typedef struct cx {
    MPI_Comm comm;
    int P, me;
    const char *name;
} cx;

static const char *coll_name[TUNA_COLLECTIVE_COUNT] = {"alltoallv", "allgather", "allreduce",
                                                        "alltoall"};

static void failf(const cx *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    failures++;
    if (failures > 40) { /* counted, not printed: the first ones say what is wrong */
        if (failures == 41)
            fprintf(stderr, "FAIL P=%d rank=%d: more than 40 failures on this rank; the rest "
                            "are counted, not printed\n", WP, WME);
        return;
    }
    fprintf(stderr, "FAIL P=%d rank=%d comm=%s(size %d, rank %d): %s\n", WP, WME,
            c ? c->name : "-", c ? c->P : 0, c ? c->me : 0, msg);
    fflush(stderr);
}

/* Watchdog: every step re-arms an alarm; a step that does not finish in time (a rank waiting
 * for peers that returned, say) is reported as a hang with its description, and the job ends
 * with a failure instead of running into the CTest timeout silently. */
static unsigned watchdog_s = 60;
static char step_msg[768];
static size_t step_len;

static void on_alarm(int sig)
{
    (void)sig;
    ssize_t w = write(2, step_msg, step_len);
    (void)w;
    _exit(1);
}

static void step(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int n = snprintf(step_msg, sizeof step_msg,
                     "FAIL P=%d rank=%d: HANG: no progress for %u s in: %s\n", WP, WME,
                     watchdog_s, msg);
    step_len = n < 0 ? 0 : (size_t)n < sizeof step_msg ? (size_t)n : sizeof step_msg - 1;
    alarm(watchdog_s);
}

static void watchdog_init(void)
{
    const char *env = getenv("TUNA_TEST_WATCHDOG");
    if (env && atoi(env) > 0)
        watchdog_s = (unsigned)atoi(env);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

#define CHECK(c, cond, ...)                                                                    \
    do {                                                                                       \
        checks++;                                                                              \
        if (!(cond))                                                                           \
            failf(c, __VA_ARGS__);                                                             \
    } while (0)

/* 1 iff v is non-zero on every rank of comm. */
static int all_true(int v, MPI_Comm comm)
{
    int in = v != 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm);
    return out;
}

static const char *errs(int rc)
{
    return rc == MPI_SUCCESS ? "MPI_SUCCESS" : tuna_error_string(rc);
}

/* ------------------------------------------------------------ deterministic data */

/* Byte idx of the alltoallv block src sends to dst (dst = -1: the shared overlap region). */
static unsigned char payload(int src, int dst, size_t idx, uint64_t salt)
{
    return (unsigned char)mix(salt ^ ((uint64_t)(unsigned)src << 48) ^
                              ((uint64_t)(unsigned)(dst + 1) << 32) ^ idx);
}

/* ------------------------------------------------------------ alltoallv datatypes */

typedef struct dtype_case {
    const char *name;
    MPI_Datatype stype, rtype;
    int ratio; /* recvcount = ratio * sendcount; 0: two ints sent per pair received */
} dtype_case;

static dtype_case dtypes[8];
static MPI_Datatype a2a_vec, a2a_pair, a2a_rst;

static void dtypes_init(void)
{
    MPI_Type_vector(2, 1, 2, MPI_INT, &a2a_vec); /* 2 ints, one-int hole: size 8, extent 12 */
    MPI_Type_commit(&a2a_vec);
    MPI_Type_contiguous(2, MPI_INT, &a2a_pair);
    MPI_Type_commit(&a2a_pair);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, st;
    MPI_Type_create_struct(2, bl, disp, ty, &st); /* {int; double}, resized to 24 bytes */
    MPI_Type_create_resized(st, 0, 24, &a2a_rst);
    MPI_Type_free(&st);
    MPI_Type_commit(&a2a_rst);
    dtypes[0] = (dtype_case){"char", MPI_CHAR, MPI_CHAR, 1};
    dtypes[1] = (dtype_case){"int", MPI_INT, MPI_INT, 1};
    dtypes[2] = (dtype_case){"double", MPI_DOUBLE, MPI_DOUBLE, 1};
    dtypes[3] = (dtype_case){"vector", a2a_vec, a2a_vec, 1};
    dtypes[4] = (dtype_case){"resized-struct", a2a_rst, a2a_rst, 1};
    dtypes[5] = (dtype_case){"vector->int", a2a_vec, MPI_INT, 2};
    dtypes[6] = (dtype_case){"int->pair", MPI_INT, a2a_pair, 0};
    dtypes[7] = (dtype_case){"double_int", MPI_DOUBLE_INT, MPI_DOUBLE_INT, 1};
}

static void type_info(MPI_Datatype t, MPI_Aint *ext, int *size)
{
    MPI_Aint lb;
    MPI_Type_get_extent(t, &lb, ext);
    MPI_Type_size(t, size);
}

/* ------------------------------------------------------------ allgather / allreduce types */

typedef struct ag_type {
    const char *name;
    MPI_Datatype stype, rtype;
    int sratio; /* sendcount = sratio * recvcount */
    int inplace_ok;
} ag_type;
static ag_type ag_types[5];
static MPI_Datatype ag_tri;

typedef struct ar_case {
    const char *name;
    MPI_Datatype type;
    MPI_Op op;
    int is_double;
    int elems;  /* base elements per datatype element */
    int off[4]; /* their byte offsets */
} ar_case;
static ar_case ar_cases[7];
static MPI_Datatype ar_mat, ar_vec, ar_pair;
static MPI_Op op_matmul, op_pairsum;

/* inout = in x inout over 2x2 integer matrices (mod MOD): non-commutative. */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int *a = in;
    int *b = inout;
    /* 64-bit products: no overflow even on bytes that are not the test's data. */
    for (int e = 0; e < *len; e++, a += 4, b += 4) {
        long long a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        int c[4] = {(int)((a0 * b[0] + a1 * b[2]) % MOD), (int)((a0 * b[1] + a1 * b[3]) % MOD),
                    (int)((a2 * b[0] + a3 * b[2]) % MOD), (int)((a2 * b[1] + a3 * b[3]) % MOD)};
        memcpy(b, c, sizeof c);
    }
}

/* inout += in for elements of two ints (contiguous pairs, or the vector type's 0 and 2). */
static void pairsum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int step = *type == ar_vec ? 3 : 2, second = *type == ar_vec ? 2 : 1;
    const int *a = in;
    int *b = inout;
    /* Unsigned sums: a wrong datatype handle must give wrong bytes, not undefined behaviour. */
    for (int e = 0; e < *len; e++, a += step, b += step) {
        b[0] = (int)((unsigned)b[0] + (unsigned)a[0]);
        b[second] = (int)((unsigned)b[second] + (unsigned)a[second]);
    }
}

static void colltypes_init(void)
{
    MPI_Type_contiguous(3, MPI_INT, &ag_tri);
    MPI_Type_commit(&ag_tri);
    ag_types[0] = (ag_type){"int", MPI_INT, MPI_INT, 1, 1};
    ag_types[1] = (ag_type){"double", MPI_DOUBLE, MPI_DOUBLE, 1, 1};
    ag_types[2] = (ag_type){"contig3", ag_tri, ag_tri, 1, 1};
    ag_types[3] = (ag_type){"int->contig3", MPI_INT, ag_tri, 3, 0};
    ag_types[4] = (ag_type){"vector", a2a_vec, a2a_vec, 1, 1};
    MPI_Type_contiguous(4, MPI_INT, &ar_mat);
    MPI_Type_commit(&ar_mat);
    MPI_Type_vector(2, 1, 2, MPI_INT, &ar_vec);
    MPI_Type_commit(&ar_vec);
    MPI_Type_contiguous(2, MPI_INT, &ar_pair);
    MPI_Type_commit(&ar_pair);
    MPI_Op_create(matmul_op, 0, &op_matmul);
    MPI_Op_create(pairsum_op, 1, &op_pairsum);
    ar_cases[0] = (ar_case){"int-sum", MPI_INT, MPI_SUM, 0, 1, {0}};
    ar_cases[1] = (ar_case){"double-sum", MPI_DOUBLE, MPI_SUM, 1, 1, {0}};
    ar_cases[2] = (ar_case){"matmul-noncommutative", ar_mat, op_matmul, 0, 4, {0, 4, 8, 12}};
    ar_cases[3] = (ar_case){"int-max", MPI_INT, MPI_MAX, 0, 1, {0}};
    ar_cases[4] = (ar_case){"vector-usersum", ar_vec, op_pairsum, 0, 2, {0, 8}};
    ar_cases[5] = (ar_case){"contig2-usersum", ar_pair, op_pairsum, 0, 2, {0, 4}};
    ar_cases[6] = (ar_case){"double-max", MPI_DOUBLE, MPI_MAX, 1, 1, {0}};
}

static void types_free(void)
{
    MPI_Type_free(&a2a_vec);
    MPI_Type_free(&a2a_pair);
    MPI_Type_free(&a2a_rst);
    MPI_Type_free(&ag_tri);
    MPI_Type_free(&ar_mat);
    MPI_Type_free(&ar_vec);
    MPI_Type_free(&ar_pair);
    MPI_Op_free(&op_matmul);
    MPI_Op_free(&op_pairsum);
}

/* ------------------------------------------------------------ inputs */

typedef struct a2a_spec {
    int dt, dist, layout, S, inplace;
} a2a_spec;

typedef struct input {
    const cx *c;
    tuna_collective coll;
    int inplace;
    char desc[200];
    char *sbuf, *rbuf, *ref, *ssnap, *rsnap;
    size_t slen, rlen;
    /* alltoallv */
    int dt, dist, layout, S;
    uint64_t seed;
    int *cnt, *cnt_copy, *sc, *sd, *rc, *rd;
    /* allgather: type, count; allreduce: case, count */
    int tcase, count;
    int lifetime; /* the plan's datatypes and arrays freed by the caller after init */
    int large;    /* alltoallv: made by tuna_alltoallv_init_c (MPI_Count counts, MPI_Aint
                     displacements; those arrays scribbled and freed right after init) */
} input;

static void input_alloc_bufs(input *in)
{
    size_t s = in->slen ? in->slen : 1, r = in->rlen ? in->rlen : 1;
    in->sbuf = in->inplace ? NULL : malloc(s);
    in->ssnap = malloc(s);
    in->rbuf = malloc(r);
    in->ref = malloc(r);
    in->rsnap = malloc(r);
    if ((!in->inplace && !in->sbuf) || !in->ssnap || !in->rbuf || !in->ref || !in->rsnap) {
        fprintf(stderr, "rank %d: out of memory\n", WME);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void input_free(input *in)
{
    free(in->sbuf);
    free(in->ssnap);
    free(in->rbuf);
    free(in->ref);
    free(in->rsnap);
    free(in->cnt);
    free(in->cnt_copy);
    memset(in, 0, sizeof *in);
}

static void a2a_build(input *in, const cx *c, const a2a_spec *s)
{
    memset(in, 0, sizeof *in);
    const int P = c->P, me = c->me;
    in->c = c;
    in->coll = TUNA_ALLTOALLV;
    in->inplace = s->inplace;
    in->dt = s->dt;
    in->dist = s->dist;
    in->layout = s->inplace ? L_GAPPED : s->layout;
    in->S = s->S;
    in->seed = mix(base_seed ^ ((uint64_t)s->dt << 40) ^ ((uint64_t)s->dist << 32) ^
                   ((uint64_t)s->layout << 24) ^ ((uint64_t)s->S << 4) ^ (uint64_t)s->inplace);
    const dtype_case *d = &dtypes[s->dt];
    int even = d->ratio == 0;
    in->cnt = calloc(4 * (size_t)P, sizeof(int));
    in->cnt_copy = calloc(4 * (size_t)P, sizeof(int));
    in->sc = in->cnt;
    in->sd = in->cnt + P;
    in->rc = in->cnt + 2 * P;
    in->rd = in->cnt + 3 * P;
    for (int j = 0; j < P; j++) {
        int a = in->inplace ? (me < j ? me : j) : me, b = in->inplace ? (me < j ? j : me) : j;
        in->sc[j] = count_of(s->dist, a, b, s->S, in->seed, even, P);
        int a2 = in->inplace ? a : j, b2 = in->inplace ? b : me;
        int sc = count_of(s->dist, a2, b2, s->S, in->seed, even, P);
        in->rc[j] = d->ratio == 0 ? sc / 2 : sc * d->ratio;
    }
    MPI_Aint sext, rext;
    int ssize, rsize;
    type_info(d->stype, &sext, &ssize);
    type_info(d->rtype, &rext, &rsize);
    size_t sspan = make_displs(P, in->sc, in->sd, in->layout, 0);
    size_t rspan = make_displs(P, in->rc, in->rd, in->layout == L_OVERLAP ? L_GAPPED : in->layout, 0);
    in->slen = in->inplace ? 0 : sspan * (size_t)sext + GUARD;
    in->rlen = rspan * (size_t)rext + GUARD;
    memcpy(in->cnt_copy, in->cnt, 4 * (size_t)P * sizeof(int));
    input_alloc_bufs(in);
    snprintf(in->desc, sizeof in->desc, "alltoallv dtype=%s dist=%s layout=%s S=%d%s", d->name,
             dist_names[s->dist], layout_names[in->layout], s->S, in->inplace ? " in-place" : "");
}

static void a2a_set_large(input *in, int large)
{
    in->large = large;
    if (large)
        snprintf(in->desc + strlen(in->desc), sizeof in->desc - strlen(in->desc),
                 " [tuna_alltoallv_init_c]");
}

static void ag_build(input *in, const cx *c, int type, int count, int inplace)
{
    memset(in, 0, sizeof *in);
    const ag_type *t = &ag_types[type];
    in->c = c;
    in->coll = TUNA_ALLGATHER;
    in->inplace = inplace && t->inplace_ok;
    in->tcase = type;
    in->count = count;
    MPI_Aint sext, rext;
    int size;
    type_info(t->stype, &sext, &size);
    type_info(t->rtype, &rext, &size);
    in->slen = in->inplace ? 0 : (size_t)count * (size_t)t->sratio * (size_t)sext + GUARD;
    in->rlen = (size_t)c->P * (size_t)count * (size_t)rext + GUARD;
    input_alloc_bufs(in);
    snprintf(in->desc, sizeof in->desc, "allgather type=%s count=%d%s", t->name, count,
             in->inplace ? " in-place" : "");
}

static void ar_build(input *in, const cx *c, int tcase, int count, int inplace)
{
    memset(in, 0, sizeof *in);
    const ar_case *t = &ar_cases[tcase];
    in->c = c;
    in->coll = TUNA_ALLREDUCE;
    in->inplace = inplace;
    in->tcase = tcase;
    in->count = count;
    MPI_Aint ext;
    int size;
    type_info(t->type, &ext, &size);
    in->slen = in->inplace ? 0 : (size_t)count * (size_t)ext + GUARD;
    in->rlen = (size_t)count * (size_t)ext + GUARD;
    input_alloc_bufs(in);
    snprintf(in->desc, sizeof in->desc, "allreduce case=%s count=%d%s", t->name, count,
             inplace ? " in-place" : "");
}

/* Fill the alltoallv blocks of buf (type, counts, displacements) from the payload. */
static void a2a_fill_blocks(const input *in, char *buf, MPI_Datatype type, const int *cnt,
                            const int *dsp, uint64_t salt)
{
    MPI_Aint ext;
    int size;
    type_info(type, &ext, &size);
    const int P = in->c->P;
    int big_j = 0;
    for (int k = 1; k < P; k++)
        if (cnt[k] > cnt[big_j])
            big_j = k;
    for (int j = 0; j < P; j++) {
        int key = j;
        if (in->layout == L_OVERLAP) { /* one shared region, filled from the largest block */
            if (j != big_j)
                continue;
            key = -1;
        }
        size_t bytes = (size_t)cnt[j] * (size_t)size;
        unsigned char *pk = malloc(bytes + 1);
        for (size_t k = 0; k < bytes; k++)
            pk[k] = payload(in->c->me, key, k, salt);
        int pos = 0;
        MPI_Unpack(pk, (int)bytes, &pos, buf + (MPI_Aint)dsp[j] * ext, cnt[j], type,
                   MPI_COMM_SELF);
        free(pk);
    }
}

static void ar_fill_values(const input *in, char *buf, uint64_t salt)
{
    const ar_case *t = &ar_cases[in->tcase];
    MPI_Aint ext;
    int size;
    type_info(t->type, &ext, &size);
    for (int i = 0; i < in->count; i++)
        for (int e = 0; e < t->elems; e++) {
            uint64_t v = mix(salt ^ ((uint64_t)in->c->me << 36) ^ ((uint64_t)i << 3) ^ (uint64_t)e);
            char *p = buf + (MPI_Aint)i * ext + t->off[e];
            if (t->is_double) {
                double x = (double)((int)(v % 2001) - 1000); /* integer-valued: exact sums */
                memcpy(p, &x, sizeof x);
            } else {
                int x = t->elems == 4 ? (int)(v % MOD) : (int)(v % 2001) - 1000;
                memcpy(p, &x, sizeof x);
            }
        }
}

/* Write a new input (salt) and the receive buffer's state before a start. */
static void input_fill(input *in, uint64_t salt)
{
    switch (in->coll) {
    case TUNA_ALLTOALLV: {
        const dtype_case *d = &dtypes[in->dt];
        memset(in->rbuf, SENTINEL, in->rlen);
        if (in->inplace) {
            a2a_fill_blocks(in, in->rbuf, d->rtype, in->rc, in->rd, salt);
        } else {
            memset(in->sbuf, SEND_GAP, in->slen);
            a2a_fill_blocks(in, in->sbuf, d->stype, in->sc, in->sd, salt);
        }
        break;
    }
    case TUNA_ALLGATHER: {
        const ag_type *t = &ag_types[in->tcase];
        MPI_Aint rext;
        int size;
        type_info(t->rtype, &rext, &size);
        memset(in->rbuf, SENTINEL, in->rlen);
        size_t own = (size_t)in->count * (size_t)rext;
        if (in->inplace) {
            for (size_t i = 0; i < own; i++)
                in->rbuf[(size_t)in->c->me * own + i] =
                    (char)payload(in->c->me, 0, i, salt ^ 0x5151);
        } else {
            for (size_t i = 0; i < in->slen; i++)
                in->sbuf[i] = (char)payload(in->c->me, 0, i, salt ^ 0x5151);
        }
        break;
    }
    default: {
        memset(in->rbuf, SENTINEL, in->rlen);
        if (in->inplace) {
            ar_fill_values(in, in->rbuf, salt);
        } else {
            memset(in->sbuf, SENTINEL, in->slen);
            ar_fill_values(in, in->sbuf, salt);
        }
        break;
    }
    }
    if (!in->inplace)
        memcpy(in->ssnap, in->sbuf, in->slen);
}

/* The library's own collective on the current input, into in->ref. */
static int input_reference(input *in)
{
    MPI_Comm comm = in->c->comm;
    if (in->inplace)
        memcpy(in->ref, in->rbuf, in->rlen);
    else
        memset(in->ref, SENTINEL, in->rlen);
    switch (in->coll) {
    case TUNA_ALLTOALLV: {
        const dtype_case *d = &dtypes[in->dt];
        if (in->inplace)
            return PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in->ref, in->rc,
                                  in->rd, d->rtype, comm);
        return PMPI_Alltoallv(in->sbuf, in->sc, in->sd, d->stype, in->ref, in->rc, in->rd,
                              d->rtype, comm);
    }
    case TUNA_ALLGATHER: {
        const ag_type *t = &ag_types[in->tcase];
        return PMPI_Allgather(in->inplace ? MPI_IN_PLACE : in->sbuf, in->count * t->sratio,
                              t->stype, in->ref, in->count, t->rtype, comm);
    }
    default: {
        const ar_case *t = &ar_cases[in->tcase];
        return PMPI_Allreduce(in->inplace ? MPI_IN_PLACE : in->sbuf, in->ref, in->count,
                              t->type, t->op, comm);
    }
    }
}

/* tuna_alltoallv_init_c on the int arrays widened (sendcounts/sdispls NULL: in place); the
 * widened arrays are scribbled and freed right after init, so every start must run on the
 * plan's own copies. */
static int a2a_init_large(const void *sbuf, const int *sc, const int *sd, MPI_Datatype st,
                          void *rbuf, const int *rc_, const int *rd, MPI_Datatype rt, int P,
                          MPI_Comm comm, const tuna_options *opt, unsigned flags,
                          tuna_plan *plan)
{
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int j = 0; j < P; j++) {
        cnt[j] = sc ? sc[j] : -1;
        dsp[j] = sd ? sd[j] : -1;
        cnt[P + j] = rc_[j];
        dsp[P + j] = rd[j];
    }
    int rc = tuna_alltoallv_init_c(sbuf, sc ? cnt : NULL, sd ? dsp : NULL, st, rbuf, cnt + P,
                                   dsp + P, rt, comm, opt, flags, plan);
    memset(cnt, 0xff, sizeof(MPI_Count) * 2 * (size_t)P); /* -1 everywhere */
    memset(dsp, 0xff, sizeof(MPI_Aint) * 2 * (size_t)P);
    free(cnt);
    free(dsp);
    return rc;
}

/*
 * Init the plan of `in`. in->lifetime: the plan gets its own copies of the datatypes
 * (MPI_Type_dup) and of the count/displacement arrays, which are freed right after init
 * (the arrays scribbled first): MPI's persistent semantics let the caller free datatypes
 * after init, and docs/plans.md says the arrays are copied (the caller may reuse them).
 */
static int input_init(input *in, const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    MPI_Comm comm = in->c->comm;
    MPI_Datatype st = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
    int *arr = NULL, rc;
    switch (in->coll) {
    case TUNA_ALLTOALLV: {
        const dtype_case *d = &dtypes[in->dt];
        const int P = in->c->P;
        st = d->stype;
        rt = d->rtype;
        const int *sc = in->sc, *sd = in->sd, *rc_ = in->rc, *rd = in->rd;
        if (in->lifetime) {
            MPI_Type_dup(d->stype, &st);
            MPI_Type_dup(d->rtype, &rt);
            arr = malloc(4 * (size_t)P * sizeof(int));
            memcpy(arr, in->cnt, 4 * (size_t)P * sizeof(int));
            sc = arr;
            sd = arr + P;
            rc_ = arr + 2 * P;
            rd = arr + 3 * P;
        }
        if (in->large)
            rc = a2a_init_large(in->inplace ? MPI_IN_PLACE : in->sbuf, in->inplace ? NULL : sc,
                                in->inplace ? NULL : sd, in->inplace ? MPI_DATATYPE_NULL : st,
                                in->rbuf, rc_, rd, rt, P, comm, opt, flags, plan);
        else if (in->inplace)
            rc = tuna_alltoallv_init(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in->rbuf, rc_,
                                     rd, rt, comm, opt, flags, plan);
        else
            rc = tuna_alltoallv_init(in->sbuf, sc, sd, st, in->rbuf, rc_, rd, rt, comm, opt,
                                     flags, plan);
        if (arr) {
            memset(arr, 0xff, 4 * (size_t)P * sizeof(int)); /* -1 everywhere */
            free(arr);
        }
        break;
    }
    case TUNA_ALLGATHER: {
        const ag_type *t = &ag_types[in->tcase];
        st = t->stype;
        rt = t->rtype;
        if (in->lifetime) {
            MPI_Type_dup(t->stype, &st);
            MPI_Type_dup(t->rtype, &rt);
        }
        rc = tuna_allgather_init(in->inplace ? MPI_IN_PLACE : in->sbuf, in->count * t->sratio, st,
                                 in->rbuf, in->count, rt, comm, opt, flags, plan);
        break;
    }
    default: {
        const ar_case *t = &ar_cases[in->tcase];
        st = t->type;
        if (in->lifetime)
            MPI_Type_dup(t->type, &st);
        rc = tuna_allreduce_init(in->inplace ? MPI_IN_PLACE : in->sbuf, in->rbuf, in->count, st,
                                 t->op, comm, opt, flags, plan);
        break;
    }
    }
    if (in->lifetime) {
        if (st != MPI_DATATYPE_NULL)
            MPI_Type_free(&st);
        if (rt != MPI_DATATYPE_NULL)
            MPI_Type_free(&rt);
    }
    return rc;
}

/* Where byte k of an alltoallv receive buffer lies: "block from rank j" or "gap". */
static void a2a_where(const input *in, size_t k, char *buf, size_t len)
{
    MPI_Aint rext;
    int rsize;
    type_info(dtypes[in->dt].rtype, &rext, &rsize);
    for (int j = 0; j < in->c->P; j++) {
        size_t lo = (size_t)in->rd[j] * (size_t)rext, hi = lo + (size_t)in->rc[j] * (size_t)rext;
        if (k >= lo && k < hi) {
            snprintf(buf, len, "block from rank %d, byte %zu", j, k - lo);
            return;
        }
    }
    snprintf(buf, len, "outside every block (gap/guard)");
}

static int input_verify(const input *in, uint64_t salt, char *why, size_t wlen)
{
    if (memcmp(in->rbuf, in->ref, in->rlen) != 0) {
        size_t k = 0;
        while (in->rbuf[k] == in->ref[k])
            k++;
        char where[96] = "";
        if (in->coll == TUNA_ALLTOALLV)
            a2a_where(in, k, where, sizeof where);
        else if (in->coll == TUNA_ALLGATHER) {
            MPI_Aint rext;
            int size;
            type_info(ag_types[in->tcase].rtype, &rext, &size);
            size_t blk = (size_t)in->count * (size_t)rext;
            if (blk && k < blk * (size_t)in->c->P)
                snprintf(where, sizeof where, "block %zu, byte %zu", k / blk, k % blk);
            else
                snprintf(where, sizeof where, "guard bytes");
        } else {
            MPI_Aint ext;
            int size;
            type_info(ar_cases[in->tcase].type, &ext, &size);
            if (k < (size_t)in->count * (size_t)ext)
                snprintf(where, sizeof where, "element %zu, byte %zu", k / (size_t)ext,
                         k % (size_t)ext);
            else
                snprintf(where, sizeof where, "guard bytes");
        }
        int ndiff = 0;
        for (size_t i = 0; i < in->rlen; i++)
            ndiff += in->rbuf[i] != in->ref[i];
        snprintf(why, wlen,
                 "receive buffer differs from the PMPI reference at byte %zu of %zu (%s): got "
                 "0x%02x want 0x%02x; %d bytes differ",
                 k, in->rlen, where, (unsigned char)in->rbuf[k], (unsigned char)in->ref[k], ndiff);
        return 1;
    }
    if (in->coll == TUNA_ALLTOALLV) {
        /* Independent of any MPI library: the packed block from src is src's payload. */
        const dtype_case *d = &dtypes[in->dt];
        MPI_Aint rext;
        int rsize;
        type_info(d->rtype, &rext, &rsize);
        int key = in->layout == L_OVERLAP ? -1 : in->c->me;
        for (int src = 0; src < in->c->P; src++) {
            size_t bytes = (size_t)in->rc[src] * (size_t)rsize;
            unsigned char *pk = malloc(bytes + 1);
            int pos = 0;
            MPI_Pack(in->rbuf + (MPI_Aint)in->rd[src] * rext, in->rc[src], d->rtype, pk,
                     (int)bytes, &pos, MPI_COMM_SELF);
            for (size_t k = 0; k < bytes; k++)
                if (pk[k] != payload(src, key, k, salt)) {
                    snprintf(why, wlen, "block from rank %d byte %zu: got 0x%02x, payload 0x%02x",
                             src, k, pk[k], payload(src, key, k, salt));
                    free(pk);
                    return 1;
                }
            free(pk);
        }
        if (memcmp(in->cnt, in->cnt_copy, 4 * (size_t)in->c->P * sizeof(int)) != 0) {
            snprintf(why, wlen, "counts or displacements were modified");
            return 1;
        }
    }
    if (!in->inplace && memcmp(in->sbuf, in->ssnap, in->slen) != 0) {
        size_t k = 0;
        while (in->sbuf[k] == in->ssnap[k])
            k++;
        snprintf(why, wlen, "send buffer modified at byte %zu", k);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ plan info */

static const char *source_name(int s)
{
    switch (s) {
    case TUNA_PLAN_SOURCE_FORCED: return "FORCED";
    case TUNA_PLAN_SOURCE_ESTIMATE: return "ESTIMATE";
    case TUNA_PLAN_SOURCE_MEASURE: return "MEASURE";
    case TUNA_PLAN_SOURCE_WISDOM: return "WISDOM";
    default: return "?";
    }
}

static int nparams_of(tuna_collective coll, int alg)
{
    const tuna_algorithm_info *a = tuna_algorithm_get(coll, alg);
    return a ? a->nparams : 0;
}

static void choice_str(tuna_collective coll, int alg, const long *params, char *buf, size_t len)
{
    const tuna_algorithm_info *a = tuna_algorithm_get(coll, alg);
    int n = snprintf(buf, len, "%s", a ? a->name : "(bad index)");
    for (int i = 0; a && i < a->nparams && n > 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, "%c%s=%ld", i ? ',' : ':', a->params[i].name,
                      params[i]);
}

/*
 * tuna_plan_get_info of a plan made with (opt, flags): index in range, the expected source
 * (want_source >= 0: exactly that one), MEASURE's tried list, and the same info on every
 * rank of the plan's communicator (collective over c->comm). Copies the info to *out.
 */
static void check_info(const cx *c, tuna_plan plan, tuna_collective coll, const tuna_options *opt,
                       unsigned flags, int want_source, const char *what, tuna_plan_info *out)
{
    tuna_plan_info info;
    memset(&info, 0, sizeof info);
    int rc = tuna_plan_get_info(plan, &info);
    CHECK(c, rc == MPI_SUCCESS, "%s: tuna_plan_get_info returned %d (%s)", what, rc, errs(rc));
    const int n = tuna_algorithm_count(coll), autoi = tuna_algorithm_find(coll, "auto");
    tuna_options eff;
    if (opt)
        eff = *opt;
    else if (tuna_options_default(coll, &eff) != MPI_SUCCESS)
        eff.algorithm = autoi;
    const int forced = eff.algorithm != autoi;
    char ch[128];
    choice_str(coll, info.algorithm, info.params, ch, sizeof ch);
    CHECK(c, info.collective == coll, "%s: info.collective %d, want %d", what,
          (int)info.collective, (int)coll);
    CHECK(c, info.algorithm >= 0 && info.algorithm < n, "%s: info.algorithm %d not in [0, %d)",
          what, info.algorithm, n);
    CHECK(c, info.plan_seconds >= 0 && isfinite(info.plan_seconds), "%s: plan_seconds %g", what,
          info.plan_seconds);
    if (forced) {
        CHECK(c, info.algorithm == eff.algorithm, "%s: forced algorithm %d, info says %d (%s)",
              what, eff.algorithm, info.algorithm, ch);
        CHECK(c, info.source == TUNA_PLAN_SOURCE_FORCED, "%s: source %d (%s), want FORCED", what,
              info.source, source_name(info.source));
    } else {
        CHECK(c, info.algorithm != autoi, "%s: the planner's choice is 'auto' itself", what);
        if (want_source >= 0)
            CHECK(c, info.source == want_source, "%s: source %d (%s), want %s (choice %s)", what,
                  info.source, source_name(info.source), source_name(want_source), ch);
        else if (flags & TUNA_PLAN_MEASURE)
            CHECK(c, info.source == TUNA_PLAN_SOURCE_MEASURE ||
                         info.source == TUNA_PLAN_SOURCE_WISDOM,
                  "%s: source %d (%s), want MEASURE or WISDOM", what, info.source,
                  source_name(info.source));
        else
            CHECK(c, info.source == TUNA_PLAN_SOURCE_ESTIMATE, "%s: source %d (%s), want ESTIMATE",
                  what, info.source, source_name(info.source));
    }
    if (info.source == TUNA_PLAN_SOURCE_MEASURE) {
        CHECK(c, info.ntried >= 1, "%s: MEASURE with ntried = %d", what, info.ntried);
        CHECK(c, info.measured > 0 && isfinite(info.measured), "%s: MEASURE, measured = %g", what,
              info.measured);
        int listed = info.ntried < TUNA_PLAN_MAX_TRIED ? info.ntried : TUNA_PLAN_MAX_TRIED;
        int found = 0;
        for (int i = 0; i < listed; i++) {
            int a = info.tried[i].algorithm;
            CHECK(c, a >= 0 && a < n && a != autoi, "%s: tried[%d].algorithm = %d", what, i, a);
            CHECK(c, info.tried[i].measured > 0 && isfinite(info.tried[i].measured),
                  "%s: tried[%d].measured = %g", what, i, info.tried[i].measured);
            if (a == info.algorithm) {
                int same = 1;
                for (int k = 0; k < nparams_of(coll, a); k++)
                    same &= info.tried[i].params[k] == info.params[k];
                found |= same;
            }
        }
        if (info.ntried >= 1 && info.ntried <= TUNA_PLAN_MAX_TRIED)
            CHECK(c, found, "%s: the choice %s is not among the %d tried candidates", what, ch,
                  info.ntried);
    }
    if (info.source == TUNA_PLAN_SOURCE_WISDOM)
        CHECK(c, info.measured > 0 && isfinite(info.measured), "%s: WISDOM, measured = %g", what,
              info.measured);

    /* The same on every rank: algorithm, source, params, ntried, the tried list. */
    enum { NL = 4 + TUNA_MAX_PARAMS + TUNA_PLAN_MAX_TRIED * (1 + TUNA_MAX_PARAMS) };
    long v[NL], vmin[NL], vmax[NL];
    double d[TUNA_PLAN_MAX_TRIED], dmin[TUNA_PLAN_MAX_TRIED], dmax[TUNA_PLAN_MAX_TRIED];
    memset(v, 0, sizeof v);
    memset(d, 0, sizeof d);
    int k = 0;
    v[k++] = info.algorithm;
    v[k++] = info.source;
    v[k++] = info.ntried;
    v[k++] = (long)info.collective;
    for (int i = 0; i < TUNA_MAX_PARAMS; i++, k++)
        v[k] = i < nparams_of(coll, info.algorithm) ? info.params[i] : 0;
    if (info.source == TUNA_PLAN_SOURCE_MEASURE)
        for (int t = 0; t < TUNA_PLAN_MAX_TRIED && t < info.ntried; t++) {
            v[k + t * (1 + TUNA_MAX_PARAMS)] = info.tried[t].algorithm;
            for (int i = 0; i < nparams_of(coll, info.tried[t].algorithm); i++)
                v[k + t * (1 + TUNA_MAX_PARAMS) + 1 + i] = info.tried[t].params[i];
            d[t] = info.tried[t].measured;
        }
    MPI_Allreduce(v, vmin, NL, MPI_LONG, MPI_MIN, c->comm);
    MPI_Allreduce(v, vmax, NL, MPI_LONG, MPI_MAX, c->comm);
    MPI_Allreduce(d, dmin, TUNA_PLAN_MAX_TRIED, MPI_DOUBLE, MPI_MIN, c->comm);
    MPI_Allreduce(d, dmax, TUNA_PLAN_MAX_TRIED, MPI_DOUBLE, MPI_MAX, c->comm);
    int same = memcmp(vmin, vmax, sizeof vmin) == 0;
    CHECK(c, same,
          "%s: plan info differs between ranks (here: algorithm %d source %s params %ld,%ld,%ld,%ld "
          "ntried %d; min/max algorithm %ld/%ld source %ld/%ld ntried %ld/%ld)",
          what, info.algorithm, source_name(info.source), info.params[0], info.params[1],
          info.params[2], info.params[3], info.ntried, vmin[0], vmax[0], vmin[1], vmax[1], vmin[2],
          vmax[2]);
    int dsame = memcmp(dmin, dmax, sizeof dmin) == 0;
    CHECK(c, dsame, "%s: MEASURE's tried[].measured (the maximum over ranks) differs between ranks",
          what);
    if (out)
        *out = info;
}

/* ------------------------------------------------------------ running plans */

typedef struct variant {
    char str[96];  /* option string, or "(NULL)" */
    int null_opt;
    unsigned flags;
} variant;

static const char *flags_name(unsigned f)
{
    return (f & TUNA_PLAN_MEASURE) ? "MEASURE" : "ESTIMATE";
}

/* Init a plan on `in` (agreed over the comm): 1 on success with *plan set. */
static int plan_init_checked(input *in, const tuna_options *opt, unsigned flags, tuna_plan *plan,
                             const char *what, uint64_t salt, int want_source,
                             tuna_plan_info *info)
{
    const cx *c = in->c;
    step("%s: init", what);
    input_fill(in, salt);
    memcpy(in->rsnap, in->rbuf, in->rlen);
    *plan = NULL;
    int rc = input_init(in, opt, flags, plan);
    int ok = rc == MPI_SUCCESS && *plan != NULL;
    checks++;
    if (!ok)
        failf(c, "%s: init returned %d (%s), plan %s", what, rc, errs(rc),
              *plan ? "set" : "NULL");
    if (!all_true(ok, c->comm)) {
        if (ok)
            failf(c, "%s: init succeeded here but failed on another rank", what);
        if (*plan) {
            tuna_plan_free(plan);
            *plan = NULL;
        }
        return 0;
    }
    nplans[in->coll]++;
    CHECK(c, memcmp(in->rbuf, in->rsnap, in->rlen) == 0,
          "%s: init (%s) wrote into the user's receive buffer", what, flags_name(flags));
    CHECK(c, in->inplace || memcmp(in->sbuf, in->ssnap, in->slen) == 0,
          "%s: init modified the send buffer", what);
    check_info(c, *plan, in->coll, opt, flags, want_source, what, info);
    return 1;
}

/* One start: rewrite the input, reference, start + wait, verify. Returns 1 if agreed ok. */
static int plan_start_checked(input *in, tuna_plan plan, uint64_t salt, const char *what, int r)
{
    const cx *c = in->c;
    char why[512];
    step("%s: start %d", what, r);
    input_fill(in, salt);
    int rrc = input_reference(in);
    if (rrc != MPI_SUCCESS)
        failf(c, "%s: the PMPI reference itself returned %d", what, rrc);
    int rc1 = tuna_start(plan);
    int rc2 = rc1 == MPI_SUCCESS ? tuna_wait(plan) : -1;
    int ok = rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS;
    checks++;
    if (!ok)
        failf(c, "%s: start %d: tuna_start %d (%s), tuna_wait %d", what, r, rc1, errs(rc1), rc2);
    else if (input_verify(in, salt, why, sizeof why)) {
        failf(c, "%s: start %d (salt %llx): %s", what, r, (unsigned long long)salt, why);
    }
    nstarts[in->coll]++;
    return all_true(ok, c->comm);
}

/* Every input of ins[] gets a plan for variant v; NSTARTS interleaved rounds; then free. */
static void run_variant(const variant *v, tuna_collective coll, input *ins, int n, uint64_t vid)
{
    const cx *c = ins[0].c;
    tuna_options opt, *optp = NULL;
    if (!v->null_opt) {
        int rc = tuna_options_parse(v->str, coll, &opt);
        CHECK(c, rc == MPI_SUCCESS, "%s '%s': tuna_options_parse: %s", coll_name[coll], v->str,
              errs(rc));
        if (rc != MPI_SUCCESS)
            return; /* the same on every rank */
        optp = &opt;
    }
    tuna_plan plan[MAXIN] = {0};
    int live[MAXIN] = {0};
    char what[MAXIN][480];
    for (int i = 0; i < n; i++) {
        snprintf(what[i], sizeof what[i], "%s plan opt=%.95s flags=%s input=[%.199s] seed=%lu",
                 coll_name[coll], v->str, flags_name(v->flags), ins[i].desc, base_seed);
        live[i] = plan_init_checked(&ins[i], optp, v->flags, &plan[i], what[i],
                                    mix(vid * 7919 + (uint64_t)i), -1, NULL);
    }
    for (int r = 0; r < NSTARTS; r++)
        for (int i = 0; i < n; i++)
            if (live[i])
                live[i] = plan_start_checked(&ins[i], plan[i],
                                             mix((vid << 20) ^ ((uint64_t)i << 8) ^ (uint64_t)(r + 1)),
                                             what[i], r);
    for (int k = 0; k < n; k++) {
        int i = (vid & 1) ? n - 1 - k : k; /* free in creation order or reversed */
        if (!plan[i])
            continue;
        int rc = tuna_plan_free(&plan[i]);
        CHECK(c, rc == MPI_SUCCESS && plan[i] == NULL,
              "%s: tuna_plan_free returned %d (%s), handle %s", what[i], rc, errs(rc),
              plan[i] ? "not NULL" : "NULL");
    }
}

/* Rows of a table, parameter edges (min, max or "P"), then opt = NULL with both flags. */
static int build_variants(tuna_collective coll, variant *v, int max)
{
    int n = 0, rows = tuna_algorithm_count(coll);
    for (int a = 0; a < rows && n < max - 4; a++) {
        const tuna_algorithm_info *info = tuna_algorithm_get(coll, a);
        /* Forced rows with MEASURE now and then: a named algorithm stays FORCED. */
        v[n] = (variant){"", 0, a % 3 == 2 ? TUNA_PLAN_MEASURE : TUNA_PLAN_ESTIMATE};
        snprintf(v[n++].str, sizeof v[0].str, "%s", info->name);
        for (int edge = 0; edge < 2 && info->nparams > 0 && n < max - 3; edge++) {
            char s[96];
            int len = snprintf(s, sizeof s, "%s", info->name);
            for (int p = 0; p < info->nparams; p++) {
                const tuna_param_info *pi = &info->params[p];
                int use_min = edge == 0 && pi->min != pi->defval;
                if (use_min)
                    len += snprintf(s + len, sizeof s - (size_t)len, "%c%s=%ld", p ? ',' : ':',
                                    pi->name, pi->min);
                else if (pi->max == TUNA_PARAM_P)
                    len += snprintf(s + len, sizeof s - (size_t)len, "%c%s=P", p ? ',' : ':',
                                    pi->name);
                else
                    len += snprintf(s + len, sizeof s - (size_t)len, "%c%s=%ld", p ? ',' : ':',
                                    pi->name, pi->max);
            }
            if (strcmp(s, v[n - 1].str) != 0) {
                v[n] = (variant){"", 0, TUNA_PLAN_ESTIMATE};
                snprintf(v[n++].str, sizeof v[0].str, "%s", s);
            }
        }
    }
    v[n++] = (variant){"(NULL)", 1, TUNA_PLAN_ESTIMATE};
    v[n++] = (variant){"(NULL)", 1, TUNA_PLAN_MEASURE};
    return n;
}

static const a2a_spec a2a_specs[] = {
    {1, D_UNIFORM, L_GAPPED, 37, 0},  {0, D_SPARSE, L_REVERSED, 300, 0},
    {2, D_POWER, L_PACKED, 5, 0},     {3, D_HOT, L_OVERLAP, 37, 0},
    {4, D_UNIFORM, L_REVERSED, 5, 0}, {5, D_UNIFORM, L_GAPPED, 37, 0},
    {6, D_POWER, L_GAPPED, 37, 0},    {7, D_SPARSE, L_PACKED, 37, 0},
    {1, D_ZERO, L_GAPPED, 5, 0},      {0, D_HOT, L_PACKED, 300, 0},
    {1, D_UNIFORM, L_PACKED, 1, 0},   {2, D_UNIFORM, L_OVERLAP, 9, 0},
    {7, D_UNIFORM, L_REVERSED, 5, 0},
};
#define NA2A_SPECS ((int)(sizeof a2a_specs / sizeof a2a_specs[0]))
static const a2a_spec a2a_inplace_specs[] = {
    {1, D_UNIFORM, L_GAPPED, 23, 1}, {4, D_UNIFORM, L_GAPPED, 7, 1}, {1, D_SPARSE, L_GAPPED, 11, 1}};
static const a2a_spec spec_const = {1, D_CONST, L_GAPPED, 3, 0};
static const a2a_spec spec_wisdom = {1, D_UNIFORM, L_GAPPED, 41, 0};

typedef struct shape {
    int tcase, count, inplace;
} shape;
static const shape ag_shapes[] = {
    {0, 7, 0},  {4, 101, 1}, {3, 7, 0},    {2, 33, 1}, {1, 1, 0},  {0, 0, 0},  {4, 13, 0},
    {0, 1, 1},  {1, 1001, 0}, {2, 7, 0},   {1, 33, 1}, {3, 50, 0}, {4, 0, 1},
};
static const shape ar_shapes[] = {
    {0, 37, 0}, {2, 5, 1},  {1, 1001, 0}, {2, 37, 0}, {4, 13, 1}, {0, 0, 0}, {1, 37, 1},
    {3, 7, 0},  {5, 7, 1},  {2, 1, 0},    {4, 5, 0},  {0, 1001, 1}, {6, 9, 0}, {2, 64, 1},
};
#define NAG_SHAPES ((int)(sizeof ag_shapes / sizeof ag_shapes[0]))
#define NAR_SHAPES ((int)(sizeof ar_shapes / sizeof ar_shapes[0]))

static void collective_suite(tuna_collective coll, const cx *comms[3])
{
    variant v[64];
    int nv = build_variants(coll, v, 64);
    if (WME == 0) { /* every row runs at every P: say which variants */
        printf("test_plans: P=%d %s: %d variants, up to %d plans each:", WP, coll_name[coll], nv,
               inputs_per_variant);
        for (int i = 0; i < nv; i++)
            printf(" %s%s", v[i].str, (v[i].flags & TUNA_PLAN_MEASURE) ? "[M]" : "");
        printf("\n");
    }
    for (int i = 0; i < nv; i++) {
        /* Communicator: world, the duplicate or the split, in turn. */
        const cx *c = comms[i % 3];
        input ins[MAXIN];
        int n = 0;
        int nmeas_null = v[i].null_opt && (v[i].flags & TUNA_PLAN_MEASURE);
        int want = nmeas_null ? 3 : MAXIN; /* MEASURE inits are timed: fewer of them */
        if (want > inputs_per_variant)
            want = inputs_per_variant;
        uint64_t vid = ((uint64_t)coll << 12) + (uint64_t)i;
        for (int k = 0; k < want; k++) {
            int sel = (i * 3 + k * 5 + WP) ;
            if (coll == TUNA_ALLTOALLV) {
                if (k == want - 1)
                    a2a_build(&ins[n++], c, &a2a_inplace_specs[(i + WP) % 3]);
                else
                    a2a_build(&ins[n++], c, &a2a_specs[sel % NA2A_SPECS]);
                /* every other plan through the large-count init, in place too */
                a2a_set_large(&ins[n - 1], (i + k) % 2);
            } else if (coll == TUNA_ALLGATHER) {
                const shape *s = &ag_shapes[sel % NAG_SHAPES];
                ag_build(&ins[n++], c, s->tcase, s->count, k == want - 1 ? 1 : s->inplace);
            } else {
                const shape *s = &ar_shapes[sel % NAR_SHAPES];
                ar_build(&ins[n++], c, s->tcase, s->count, k == want - 1 ? 1 : s->inplace);
            }
        }
        run_variant(&v[i], coll, ins, n, vid);
        for (int k = 0; k < n; k++)
            input_free(&ins[k]);
    }
}

/* ------------------------------------------------------------ checker self-test */

static void checker_self_test(const cx *c)
{
    char why[512];
    input in;
    a2a_build(&in, c, &spec_const);
    input_fill(&in, 1);
    input_reference(&in);
    memcpy(in.rbuf, in.ref, in.rlen);
    int ok_clean = input_verify(&in, 1, why, sizeof why) == 0;
    in.rbuf[in.rlen - 1] ^= 1; /* trailing sentinel byte */
    int caught_gap = input_verify(&in, 1, why, sizeof why) != 0;
    in.rbuf[in.rlen - 1] ^= 1;
    in.rbuf[0] ^= 0x10; /* first byte of the block from rank 0, in result and reference */
    in.ref[0] ^= 0x10;
    int caught_payload = input_verify(&in, 1, why, sizeof why) != 0;
    in.rbuf[0] ^= 0x10;
    in.ref[0] ^= 0x10;
    int caught_stale = input_verify(&in, 2, why, sizeof why) != 0; /* another salt's data */
    in.sbuf[1] ^= 1;
    int caught_send = input_verify(&in, 1, why, sizeof why) != 0;
    in.sbuf[1] ^= 1;
    /* Rewriting the input really changes it. */
    char *old = malloc(in.slen);
    memcpy(old, in.sbuf, in.slen);
    input_fill(&in, 2);
    int rewritten = memcmp(old, in.sbuf, in.slen) != 0;
    free(old);
    CHECK(c, ok_clean && caught_gap && caught_payload && caught_stale && caught_send && rewritten,
          "checker self-test: clean %d gap %d payload %d stale %d send %d rewritten %d", ok_clean,
          caught_gap, caught_payload, caught_stale, caught_send, rewritten);
    input_free(&in);
}

/* ------------------------------------------------------------ lifetimes, op handles */

/* Datatypes freed and count/displacement arrays scribbled and freed right after init: the
 * starts must still deliver PMPI's bytes (computed with the original types and arrays). */
static void lifetime_tests(const cx *c)
{
    static const a2a_spec a2a[] = {{4, D_UNIFORM, L_REVERSED, 5, 0}, {5, D_POWER, L_GAPPED, 37, 0},
                                   {4, D_UNIFORM, L_GAPPED, 7, 1}};
    static const shape ag[] = {{4, 13, 0}, {2, 33, 1}, {3, 7, 0}};
    static const char *opts[TUNA_ALLREDUCE][3] = {
        {"vendor", "tuna:radix=2", NULL}, {"vendor", "ring", NULL}};
    /* Not allreduce: its plan keeps the caller's datatype handle, which a user op is called
     * with (op_handle_test), so that one must stay valid while the plan lives (docs/plans.md). */
    for (int coll = 0; coll < TUNA_ALLREDUCE; coll++)
        for (int o = 0; o < 3; o++) {
            variant v = {"(NULL)", 1, TUNA_PLAN_MEASURE};
            if (opts[coll][o]) {
                v = (variant){"", 0, TUNA_PLAN_ESTIMATE};
                snprintf(v.str, sizeof v.str, "%s", opts[coll][o]);
            }
            input ins[3];
            for (int k = 0; k < 3; k++) {
                if (coll == TUNA_ALLTOALLV)
                    a2a_build(&ins[k], c, &a2a[k]);
                else
                    ag_build(&ins[k], c, ag[k].tcase, ag[k].count, ag[k].inplace);
                ins[k].lifetime = 1;
                snprintf(ins[k].desc + strlen(ins[k].desc), sizeof ins[k].desc - strlen(ins[k].desc),
                         " [datatypes freed%s after init]",
                         coll == TUNA_ALLTOALLV ? ", arrays scribbled and freed" : "");
            }
            run_variant(&v, (tuna_collective)coll, ins, 3, 0x7000 + (uint64_t)(coll * 3 + o));
            for (int k = 0; k < 3; k++)
                input_free(&ins[k]);
        }
}

/* A user op must be called with the datatype handle the caller passed (MPI: "the datatype
 * argument is a handle to the data type that was passed into the call"). */
static MPI_Datatype seen_type;
static int seen_other;
static void recording_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    if (*type != ar_pair)
        seen_other = 1;
    seen_type = *type;
    const int *a = in;
    int *b = inout;
    for (int e = 0; e < 2 * *len; e++)
        b[e] = (int)((unsigned)b[e] + (unsigned)a[e]);
}

static void op_handle_test(const cx *c)
{
    MPI_Op op;
    MPI_Op_create(recording_op, 1, &op);
    const char *algs[] = {"vendor", "ring", "recursive-doubling", "recmul:k=3", NULL};
    for (int i = 0; i < 5; i++) {
        tuna_options opt;
        if (algs[i])
            tuna_options_parse(algs[i], TUNA_ALLREDUCE, &opt);
        int sb[16], rb[16];
        for (int k = 0; k < 16; k++)
            sb[k] = c->me + k;
        tuna_plan plan = NULL;
        char what[160];
        snprintf(what, sizeof what, "allreduce plan opt=%s, user op on a contiguous pair type",
                 algs[i] ? algs[i] : "(NULL)");
        step("%s", what);
        int rc = tuna_allreduce_init(sb, rb, 8, ar_pair, op, c->comm, algs[i] ? &opt : NULL,
                                     TUNA_PLAN_ESTIMATE, &plan);
        CHECK(c, rc == MPI_SUCCESS, "%s: init returned %d (%s)", what, rc, errs(rc));
        if (!all_true(rc == MPI_SUCCESS, c->comm)) {
            if (plan)
                tuna_plan_free(&plan);
            continue;
        }
        seen_other = 0;
        seen_type = MPI_DATATYPE_NULL;
        rc = tuna_start(plan);
        if (rc == MPI_SUCCESS)
            tuna_wait(plan);
        CHECK(c, rc == MPI_SUCCESS, "%s: start returned %d", what, rc);
        int ok = 1;
        for (int k = 0; k < 16; k++)
            ok &= rb[k] == c->P * k + c->P * (c->P - 1) / 2;
        CHECK(c, ok, "%s: wrong sums", what);
        CHECK(c, !seen_other,
              "%s: the op was called with datatype handle %p, not the caller's %p (MPI passes "
              "the op the handle given to the call; an op that dispatches on it breaks)",
              what, (void *)(uintptr_t)seen_type, (void *)(uintptr_t)ar_pair);
        tuna_plan_free(&plan);
    }
    MPI_Op_free(&op);
}

/* ------------------------------------------------------------ state errors */

static void state_errors(const cx *c)
{
    char what[320];
    tuna_plan_info info;
    /* alltoallv, forced */
    {
        input in;
        a2a_build(&in, c, &spec_const);
        tuna_options opt;
        tuna_options_parse("linear", TUNA_ALLTOALLV, &opt);
        tuna_plan plan = NULL;
        snprintf(what, sizeof what, "state errors (alltoallv linear, %s)", in.desc);
        if (plan_init_checked(&in, &opt, TUNA_PLAN_ESTIMATE, &plan, what, 11, -1, NULL)) {
            int rc = tuna_wait(plan);
            CHECK(c, rc == MPI_ERR_REQUEST, "%s: tuna_wait on an inactive plan returned %d (%s)",
                  what, rc, errs(rc));
            input_fill(&in, 12);
            input_reference(&in);
            rc = tuna_start(plan);
            CHECK(c, rc == MPI_SUCCESS, "%s: tuna_start returned %d (%s)", what, rc, errs(rc));
            int rc2 = tuna_start(plan);
            CHECK(c, rc2 == MPI_ERR_REQUEST, "%s: tuna_start on an active plan returned %d (%s)",
                  what, rc2, errs(rc2));
            tuna_plan keep = plan;
            int rc3 = tuna_plan_free(&plan);
            CHECK(c, rc3 == MPI_ERR_REQUEST && plan == keep,
                  "%s: tuna_plan_free on an active plan returned %d (%s), handle %s", what, rc3,
                  errs(rc3), plan == keep ? "kept" : "changed");
            if (plan == keep) {
                rc = tuna_wait(plan);
                char why[512];
                CHECK(c, rc == MPI_SUCCESS, "%s: tuna_wait returned %d (%s)", what, rc, errs(rc));
                CHECK(c, rc != MPI_SUCCESS || input_verify(&in, 12, why, sizeof why) == 0,
                      "%s: result after the refused second start / free: %s", what, why);
                rc = tuna_wait(plan);
                CHECK(c, rc == MPI_ERR_REQUEST, "%s: second tuna_wait returned %d (%s)", what, rc,
                      errs(rc));
                /* Still works. */
                for (int r = 0; r < 2; r++)
                    plan_start_checked(&in, plan, 13 + (uint64_t)r, what, r);
                rc = tuna_plan_get_info(plan, NULL);
                CHECK(c, rc != MPI_SUCCESS, "%s: tuna_plan_get_info(plan, NULL) succeeded", what);
                rc = tuna_plan_free(&plan);
                CHECK(c, rc == MPI_SUCCESS && plan == NULL,
                      "%s: tuna_plan_free returned %d (%s), handle %s", what, rc, errs(rc),
                      plan ? "not NULL" : "NULL");
            }
        }
        /* NULL handles: errors, not crashes. */
        tuna_plan null_plan = NULL;
        int rc = tuna_plan_free(&null_plan);
        CHECK(c, rc != MPI_SUCCESS, "tuna_plan_free(&NULL handle) succeeded");
        rc = tuna_plan_free(NULL);
        CHECK(c, rc != MPI_SUCCESS, "tuna_plan_free(NULL) succeeded");
        rc = tuna_start(NULL);
        CHECK(c, rc != MPI_SUCCESS, "tuna_start(NULL) succeeded");
        rc = tuna_wait(NULL);
        CHECK(c, rc != MPI_SUCCESS, "tuna_wait(NULL) succeeded");
        rc = tuna_plan_get_info(NULL, &info);
        CHECK(c, rc != MPI_SUCCESS, "tuna_plan_get_info(NULL, &info) succeeded");
        input_free(&in);
    }
    /* allreduce (planner's choice) and allgather (forced): the same state machine. */
    for (int k = 0; k < 2; k++) {
        input in;
        if (k == 0)
            ar_build(&in, c, 2, 9, 0);
        else
            ag_build(&in, c, 0, 5, 1);
        tuna_options opt;
        tuna_options_parse("ring", TUNA_ALLGATHER, &opt);
        tuna_plan plan = NULL;
        snprintf(what, sizeof what, "state errors (%s)", in.desc);
        if (!plan_init_checked(&in, k == 0 ? NULL : &opt, TUNA_PLAN_ESTIMATE, &plan, what, 21, -1,
                               NULL)) {
            input_free(&in);
            continue;
        }
        int rc = tuna_wait(plan);
        CHECK(c, rc == MPI_ERR_REQUEST, "%s: tuna_wait on an inactive plan returned %d (%s)",
              what, rc, errs(rc));
        input_fill(&in, 22);
        input_reference(&in);
        rc = tuna_start(plan);
        CHECK(c, rc == MPI_SUCCESS, "%s: tuna_start returned %d (%s)", what, rc, errs(rc));
        rc = tuna_start(plan);
        CHECK(c, rc == MPI_ERR_REQUEST, "%s: tuna_start on an active plan returned %d (%s)", what,
              rc, errs(rc));
        tuna_plan keep = plan;
        rc = tuna_plan_free(&plan);
        CHECK(c, rc == MPI_ERR_REQUEST && plan == keep,
              "%s: tuna_plan_free on an active plan returned %d (%s)", what, rc, errs(rc));
        if (plan == keep) {
            char why[512];
            rc = tuna_wait(plan);
            CHECK(c, rc == MPI_SUCCESS, "%s: tuna_wait returned %d (%s)", what, rc, errs(rc));
            CHECK(c, rc != MPI_SUCCESS || input_verify(&in, 22, why, sizeof why) == 0,
                  "%s: result after the refused second start / free: %s", what, why);
            plan_start_checked(&in, plan, 23, what, 1);
            rc = tuna_plan_free(&plan);
            CHECK(c, rc == MPI_SUCCESS && plan == NULL, "%s: tuna_plan_free returned %d (%s)",
                  what, rc, errs(rc));
        }
        input_free(&in);
    }
}

/* ------------------------------------------------------------ init errors */

/* After an init that must fail on every rank: error everywhere, no plan, buffer untouched. */
static void expect_init_error(const cx *c, input *in, int rc, tuna_plan *plan, const char *what)
{
    int ok = rc != MPI_SUCCESS && *plan == NULL;
    checks++;
    if (!ok)
        failf(c, "%s: init returned %d (%s) with plan %s; want an error and no plan on every rank",
              what, rc, errs(rc), *plan ? "set" : "NULL");
    all_true(1, c->comm); /* nobody hangs: every rank reaches this point */
    if (*plan) {
        tuna_plan_free(plan);
        *plan = NULL;
    }
    CHECK(c, in == NULL || memcmp(in->rbuf, in->rsnap, in->rlen) == 0,
          "%s: the receive buffer changed after a failed init", what);
}

#define WHAT(...) (snprintf(what, sizeof what, __VA_ARGS__), step("%s", what))

static void init_errors(const cx *c)
{
    char what[256];
    const int bad = c->P - 1; /* the rank with the bad argument */
    struct {
        const char *opt;
        unsigned flags;
    } algs[] = {{"vendor", TUNA_PLAN_ESTIMATE}, {"linear", TUNA_PLAN_ESTIMATE},
                {"tuna", TUNA_PLAN_ESTIMATE},   {"bruck", TUNA_PLAN_ESTIMATE},
                {"scattered", TUNA_PLAN_MEASURE}, {NULL, TUNA_PLAN_ESTIMATE},
                {NULL, TUNA_PLAN_MEASURE}};
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        tuna_options opt, *optp = NULL;
        if (algs[a].opt) {
            if (tuna_options_parse(algs[a].opt, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS) {
                failf(c, "init errors: cannot parse '%s'", algs[a].opt);
                continue;
            }
            optp = &opt;
        }
        input in;
        a2a_build(&in, c, &spec_const);
        input_fill(&in, 31);
        memcpy(in.rsnap, in.rbuf, in.rlen);
        const char *on = algs[a].opt ? algs[a].opt : "(NULL)";
        a2a_set_large(&in, (int)(a % 2)); /* every other one through tuna_alltoallv_init_c */
        /* Negative count on one rank. */
        int save = in.sc[0];
        if (c->me == bad)
            in.sc[0] = -1;
        tuna_plan plan = NULL;
        WHAT("alltoallv init%s opt=%s flags=%s, sendcounts[0] = -1 on rank %d",
             in.large ? "_c" : "", on, flags_name(algs[a].flags), bad);
        int rc = input_init(&in, optp, algs[a].flags, &plan);
        in.sc[0] = save;
        expect_init_error(c, &in, rc, &plan, what);
        /* A valid init afterwards works. */
        WHAT("alltoallv init opt=%s flags=%s after a failed init", on, flags_name(algs[a].flags));
        if (plan_init_checked(&in, optp, algs[a].flags, &plan, what, 32, -1, NULL)) {
            for (int r = 0; r < 2; r++)
                plan_start_checked(&in, plan, 33 + (uint64_t)r, what, r);
            int frc = tuna_plan_free(&plan);
            CHECK(c, frc == MPI_SUCCESS && !plan, "%s: free returned %d", what, frc);
        }
        input_free(&in);
    }
    /* Other one-rank errors, with the planner (NULL opt) and forced. */
    for (int f = 0; f < 2; f++) {
        tuna_options opt;
        tuna_options_parse("spreadout", TUNA_ALLTOALLV, &opt);
        const tuna_options *optp = f ? &opt : NULL;
        const char *on = f ? "spreadout" : "(NULL)";
        input in;
        a2a_build(&in, c, &spec_const);
        input_fill(&in, 41);
        memcpy(in.rsnap, in.rbuf, in.rlen);
        const dtype_case *d = &dtypes[in.dt];
        tuna_plan plan = NULL;
        WHAT("alltoallv init opt=%s, recvtype MPI_DATATYPE_NULL on rank 0", on);
        int rc = tuna_alltoallv_init(in.sbuf, in.sc, in.sd, d->stype, in.rbuf, in.rc, in.rd,
                                     c->me == 0 ? MPI_DATATYPE_NULL : d->rtype, c->comm, optp,
                                     TUNA_PLAN_ESTIMATE, &plan);
        expect_init_error(c, &in, rc, &plan, what);
        WHAT("alltoallv init opt=%s, NULL recvbuf (counts 3) on rank 0", on);
        rc = tuna_alltoallv_init(in.sbuf, in.sc, in.sd, d->stype, c->me == 0 ? NULL : in.rbuf,
                                 in.rc, in.rd, d->rtype, c->comm, optp, TUNA_PLAN_ESTIMATE, &plan);
        expect_init_error(c, &in, rc, &plan, what);
        WHAT("alltoallv init opt=%s MEASURE, NULL sendbuf (counts 3) on rank %d", on, bad);
        rc = tuna_alltoallv_init(c->me == bad ? NULL : in.sbuf, in.sc, in.sd, d->stype, in.rbuf,
                                 in.rc, in.rd, d->rtype, c->comm, optp, TUNA_PLAN_MEASURE, &plan);
        expect_init_error(c, &in, rc, &plan, what);
        /* NULL plan pointer on every rank (on one rank only: null_plan_one_rank, run last). */
        WHAT("alltoallv init opt=%s, NULL plan pointer on every rank", on);
        rc = tuna_alltoallv_init(in.sbuf, in.sc, in.sd, d->stype, in.rbuf, in.rc, in.rd,
                                 d->rtype, c->comm, optp, TUNA_PLAN_ESTIMATE, NULL);
        expect_init_error(c, &in, rc, &plan, what);
        WHAT("alltoallv init opt=%s, MPI_COMM_NULL on every rank", on);
        rc = tuna_alltoallv_init(in.sbuf, in.sc, in.sd, d->stype, in.rbuf, in.rc, in.rd,
                                 d->rtype, MPI_COMM_NULL, optp, TUNA_PLAN_ESTIMATE, &plan);
        expect_init_error(c, &in, rc, &plan, what);
        /* And then a valid one. */
        WHAT("alltoallv init opt=%s after failed inits", on);
        if (plan_init_checked(&in, optp, TUNA_PLAN_ESTIMATE, &plan, what, 42, -1, NULL)) {
            plan_start_checked(&in, plan, 43, what, 0);
            tuna_plan_free(&plan);
        }
        input_free(&in);
    }
    /* allgather: negative recvcount on one rank; allreduce: MPI_OP_NULL / negative count. */
    for (int f = 0; f < 2; f++) {
        tuna_options opt;
        tuna_options_parse("recursive-doubling", TUNA_ALLGATHER, &opt);
        const tuna_options *optp = f ? &opt : NULL;
        unsigned flags = f ? TUNA_PLAN_ESTIMATE : TUNA_PLAN_MEASURE;
        const char *on = f ? "recursive-doubling" : "(NULL)";
        input in;
        ag_build(&in, c, 0, 4, 0);
        input_fill(&in, 51);
        memcpy(in.rsnap, in.rbuf, in.rlen);
        tuna_plan plan = NULL;
        WHAT("allgather init opt=%s flags=%s, recvcount -1 on rank %d", on, flags_name(flags), bad);
        int rc = tuna_allgather_init(in.sbuf, 4, MPI_INT, in.rbuf, c->me == bad ? -1 : 4, MPI_INT,
                                     c->comm, optp, flags, &plan);
        expect_init_error(c, &in, rc, &plan, what);
        WHAT("allgather init opt=%s after a failed init", on);
        if (plan_init_checked(&in, optp, flags, &plan, what, 52, -1, NULL)) {
            plan_start_checked(&in, plan, 53, what, 0);
            tuna_plan_free(&plan);
        }
        input_free(&in);
    }
    for (int f = 0; f < 2; f++) {
        tuna_options opt;
        tuna_options_parse("recmul:k=3", TUNA_ALLREDUCE, &opt);
        const tuna_options *optp = f ? &opt : NULL;
        unsigned flags = f ? TUNA_PLAN_ESTIMATE : TUNA_PLAN_MEASURE;
        const char *on = f ? "recmul:k=3" : "(NULL)";
        input in;
        ar_build(&in, c, 0, 8, 0);
        input_fill(&in, 61);
        memcpy(in.rsnap, in.rbuf, in.rlen);
        tuna_plan plan = NULL;
        WHAT("allreduce init opt=%s flags=%s, MPI_OP_NULL on rank %d", on, flags_name(flags), bad);
        int rc = tuna_allreduce_init(in.sbuf, in.rbuf, 8, MPI_INT,
                                     c->me == bad ? MPI_OP_NULL : MPI_SUM, c->comm, optp, flags,
                                     &plan);
        expect_init_error(c, &in, rc, &plan, what);
        WHAT("allreduce init opt=%s flags=%s, count -3 on rank 0", on, flags_name(flags));
        rc = tuna_allreduce_init(in.sbuf, in.rbuf, c->me == 0 ? -3 : 8, MPI_INT, MPI_SUM, c->comm,
                                 optp, flags, &plan);
        expect_init_error(c, &in, rc, &plan, what);
        WHAT("allreduce init opt=%s after failed inits", on);
        if (plan_init_checked(&in, optp, flags, &plan, what, 62, -1, NULL)) {
            plan_start_checked(&in, plan, 63, what, 0);
            tuna_plan_free(&plan);
        }
        input_free(&in);
    }
}

/* The large-count init's own limit, as tuna_alltoallv_c's: in place with a non-contiguous
 * receive type, a block beyond 2 GiB (here beyond INT_MAX elements too, which only the _c
 * init can express) is MPI_ERR_COUNT on its rank, agreed by every rank before anything moves. */
static void large_count_init_errors(const cx *c)
{
    char what[256];
    const int bad = c->P - 1;
    static const char *const opts[] = {"tuna", "vendor", NULL};
    for (int o = 0; o < 3; o++) {
        tuna_options opt;
        if (opts[o])
            tuna_options_parse(opts[o], TUNA_ALLTOALLV, &opt);
        const unsigned flags = opts[o] ? TUNA_PLAN_ESTIMATE : TUNA_PLAN_MEASURE;
        input in;
        a2a_build(&in, c, &a2a_inplace_specs[0]);
        input_fill(&in, 81);
        memcpy(in.rsnap, in.rbuf, in.rlen);
        MPI_Count *cnt = malloc(sizeof(MPI_Count) * (size_t)c->P);
        MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * (size_t)c->P);
        for (int j = 0; j < c->P; j++) {
            cnt[j] = in.rc[j];
            dsp[j] = in.rd[j];
        }
        if (c->me == bad)
            cnt[0] = (MPI_Count)INT_MAX + 10;
        tuna_plan plan = NULL;
        WHAT("alltoallv init_c opt=%s flags=%s in place, vector recvtype, recvcounts[0] = "
             "INT_MAX + 10 on rank %d", opts[o] ? opts[o] : "(NULL)", flags_name(flags), bad);
        int rc = tuna_alltoallv_init_c(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in.rbuf, cnt,
                                       dsp, a2a_vec, c->comm, opts[o] ? &opt : NULL, flags,
                                       &plan);
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        CHECK(c, c->me != bad || cls == MPI_ERR_COUNT,
              "%s: class %d on the rank with the count, want MPI_ERR_COUNT (%s)", what, cls,
              errs(rc));
        expect_init_error(c, &in, rc, &plan, what);
        free(cnt);
        free(dsp);
        input_free(&in);
    }
}

/* A NULL plan pointer on rank 0 only: an init error like any other, so every rank must return
 * one (agreed) and nobody may wait. Run last: if it hangs, the watchdog reports it. */
static void null_plan_one_rank(const cx *c)
{
    char what[256];
    /* alltoall's plans: test_alltoall.c (every row, forced, estimate and measure) */
    for (int coll = 0; coll <= TUNA_ALLREDUCE; coll++) {
        input in;
        if (coll == TUNA_ALLTOALLV)
            a2a_build(&in, c, &spec_const);
        else if (coll == TUNA_ALLGATHER)
            ag_build(&in, c, 0, 4, 0);
        else
            ar_build(&in, c, 0, 8, 0);
        input_fill(&in, 71);
        memcpy(in.rsnap, in.rbuf, in.rlen);
        tuna_plan plan = NULL;
        WHAT("%s init opt=(NULL), NULL plan pointer on rank 0 only", coll_name[coll]);
        int rc = input_init(&in, NULL, TUNA_PLAN_ESTIMATE, c->me == 0 ? NULL : &plan);
        expect_init_error(c, &in, rc, &plan, what);
        input_free(&in);
    }
}

/* ------------------------------------------------------------ wisdom */

static int same_choice(tuna_collective coll, const tuna_plan_info *a, const tuna_plan_info *b)
{
    if (a->algorithm != b->algorithm)
        return 0;
    for (int i = 0; i < nparams_of(coll, a->algorithm); i++)
        if (a->params[i] != b->params[i])
            return 0;
    return 1;
}

/* A MEASURE plan of the wisdom input on c: init (want_source), starts, free. */
static int wisdom_plan(const cx *c, int want_source, tuna_plan_info *info, const char *what,
                       uint64_t salt)
{
    input in;
    a2a_build(&in, c, &spec_wisdom);
    tuna_plan plan = NULL;
    int ok = plan_init_checked(&in, NULL, TUNA_PLAN_MEASURE, &plan, what, salt, want_source, info);
    if (ok) {
        for (int r = 0; r < NSTARTS; r++)
            plan_start_checked(&in, plan, salt + 1 + (uint64_t)r, what, r);
        int rc = tuna_plan_free(&plan);
        CHECK(c, rc == MPI_SUCCESS && !plan, "%s: free returned %d (%s)", what, rc, errs(rc));
    }
    input_free(&in);
    return ok;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "rank %d: cannot write %s\n", WME, path);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fputs(text, f);
    fclose(f);
}

static void expect_import_error(const cx *c, const char *path, const char *what)
{
    step("tuna_wisdom_import(%s)", path ? path : "NULL");
    int rc = tuna_wisdom_import(path, c->comm);
    CHECK(c, rc != MPI_SUCCESS, "wisdom import %s (%s on this rank) succeeded; want an error on every rank",
          what, path);
}

static void wisdom_tests(const cx *c, const char *dir)
{
    char p1[4200], p2[4200], bad[4200], empty[4200], missing[4200], nodir[4200];
    snprintf(p1, sizeof p1, "%s/w1.json", dir);
    snprintf(p2, sizeof p2, "%s/w2.json", dir);
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    snprintf(empty, sizeof empty, "%s/empty.json", dir);
    snprintf(missing, sizeof missing, "%s/nonexistent.json", dir);
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/w.json", dir);
    tuna_plan_info a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    /* The first MEASURE plan of this process: measured. */
    if (!wisdom_plan(c, TUNA_PLAN_SOURCE_MEASURE, &a, "wisdom: first MEASURE plan", 101))
        return;
    char cha[128];
    choice_str(TUNA_ALLTOALLV, a.algorithm, a.params, cha, sizeof cha);
    step("tuna_wisdom_export(%s)", p1);
    int rc = tuna_wisdom_export(p1, c->comm);
    CHECK(c, rc == MPI_SUCCESS, "wisdom export to %s returned %d (%s)", p1, rc, errs(rc));
    if (c->me == 0) {
        struct stat st;
        CHECK(c, stat(p1, &st) == 0 && st.st_size > 0, "wisdom export: %s missing or empty", p1);
    }
    step("tuna_wisdom_import(%s)", p1);
    rc = tuna_wisdom_import(p1, c->comm);
    CHECK(c, rc == MPI_SUCCESS, "wisdom import of %s returned %d (%s)", p1, rc, errs(rc));
    /* The same arguments again: from wisdom, the same choice. */
    if (wisdom_plan(c, TUNA_PLAN_SOURCE_WISDOM, &b, "wisdom: MEASURE plan after import", 111))
        CHECK(c, same_choice(TUNA_ALLTOALLV, &a, &b),
              "wisdom: the measured choice was %s, the plan from wisdom runs algorithm %d", cha,
              b.algorithm);
    /* A second measurement (another collective), exported: a file with other contents. */
    {
        input in;
        ar_build(&in, c, 1, 1001, 0);
        tuna_plan plan = NULL;
        if (plan_init_checked(&in, NULL, TUNA_PLAN_MEASURE, &plan, "wisdom: allreduce MEASURE",
                              121, -1, NULL)) {
            for (int r = 0; r < 2; r++)
                plan_start_checked(&in, plan, 122 + (uint64_t)r, "wisdom: allreduce MEASURE", r);
            tuna_plan_free(&plan);
        }
        input_free(&in);
    }
    step("tuna_wisdom_export(%s)", p2);
    rc = tuna_wisdom_export(p2, c->comm);
    CHECK(c, rc == MPI_SUCCESS, "wisdom export to %s returned %d (%s)", p2, rc, errs(rc));
    step("wisdom: writing bad files");
    if (c->me == 0) {
        write_file(bad, "{\"tuna_wisdom\": [ {\"P\": 3,, ] ");
        write_file(empty, "");
    }
    MPI_Barrier(c->comm);
    if (c->P > 1) {
        expect_import_error(c, c->me == 0 ? p1 : p2,
                            "with different contents on rank 0 (w1) and the others (w2)");
        expect_import_error(c, c->me == 0 ? p1 : missing,
                            "readable on rank 0 only (others: a nonexistent path)");
    } else if (c->me == 0) {
        printf("test_plans: P=1: wisdom import with differing files / a file only rank 0 can "
               "read needs 2 ranks: not run\n");
    }
    expect_import_error(c, missing, "of a nonexistent file");
    expect_import_error(c, bad, "of invalid JSON");
    expect_import_error(c, empty, "of an empty file");
    expect_import_error(c, dir, "of a directory");
    step("tuna_wisdom_export(%s)", nodir);
    rc = tuna_wisdom_export(nodir, c->comm);
    if (c->me == 0)
        CHECK(c, rc != MPI_SUCCESS, "wisdom export to %s (no such directory) succeeded on rank 0",
              nodir);
    step("tuna_wisdom_export(NULL)");
    rc = tuna_wisdom_export(NULL, c->comm);
    CHECK(c, rc != MPI_SUCCESS, "wisdom export to a NULL path succeeded");
    step("tuna_wisdom_import(NULL)");
    rc = tuna_wisdom_import(NULL, c->comm);
    CHECK(c, rc != MPI_SUCCESS, "wisdom import of a NULL path succeeded");
    /* The failed imports changed nothing: still the same choice from wisdom. */
    if (wisdom_plan(c, TUNA_PLAN_SOURCE_WISDOM, &b, "wisdom: MEASURE plan after failed imports",
                    131))
        CHECK(c, same_choice(TUNA_ALLTOALLV, &a, &b),
              "wisdom after failed imports: measured %s, now algorithm %d", cha, b.algorithm);
    /* Importing the second file (a superset) works, and keeps the choice. */
    step("tuna_wisdom_import(%s)", p2);
    rc = tuna_wisdom_import(p2, c->comm);
    CHECK(c, rc == MPI_SUCCESS, "wisdom import of %s returned %d (%s)", p2, rc, errs(rc));
    if (wisdom_plan(c, TUNA_PLAN_SOURCE_WISDOM, &b, "wisdom: MEASURE plan after importing w2", 141))
        CHECK(c, same_choice(TUNA_ALLTOALLV, &a, &b),
              "wisdom after importing w2: measured %s, now algorithm %d", cha, b.algorithm);
    if (c->me == 0) {
        remove(p1);
        remove(p2);
        remove(bad);
        remove(empty);
        remove(nodir);
    }
}

/* --wisdom-save / --wisdom-load: wisdom across processes (tests/CMakeLists.txt fixtures). */
static void wisdom_save(const cx *c, const char *path)
{
    tuna_plan_info a;
    memset(&a, 0, sizeof a);
    if (!wisdom_plan(c, TUNA_PLAN_SOURCE_MEASURE, &a, "wisdom-save: MEASURE plan", 201))
        return;
    step("tuna_wisdom_export(%s)", path ? path : "NULL");
    int rc = tuna_wisdom_export(path, c->comm);
    CHECK(c, rc == MPI_SUCCESS, "wisdom export to %s returned %d (%s)", path, rc, errs(rc));
    if (c->me == 0) {
        char exp[4200], text[256];
        snprintf(exp, sizeof exp, "%s.expect", path);
        const char *rpn = getenv("TUNA_RANKS_PER_NODE");
        snprintf(text, sizeof text, "%d %s %d %ld %ld %ld %ld\n", c->P, rpn && *rpn ? rpn : "-",
                 a.algorithm, a.params[0], a.params[1], a.params[2], a.params[3]);
        write_file(exp, text);
        char ch[128];
        choice_str(TUNA_ALLTOALLV, a.algorithm, a.params, ch, sizeof ch);
        printf("test_plans: wisdom saved to %s: P=%d, measured choice %s\n", path, c->P, ch);
    }
}

static void wisdom_load(const cx *c, const char *path)
{
    long v[7] = {0};
    char rpn_saved[64] = "";
    int have = 0;
    if (c->me == 0) {
        char exp[4200];
        snprintf(exp, sizeof exp, "%s.expect", path);
        FILE *f = fopen(exp, "r");
        if (f) {
            have = fscanf(f, "%ld %63s %ld %ld %ld %ld %ld", &v[0], rpn_saved, &v[2], &v[3], &v[4],
                          &v[5], &v[6]) == 7;
            fclose(f);
        }
    }
    MPI_Bcast(&have, 1, MPI_INT, 0, c->comm);
    MPI_Bcast(v, 7, MPI_LONG, 0, c->comm);
    MPI_Bcast(rpn_saved, sizeof rpn_saved, MPI_CHAR, 0, c->comm);
    CHECK(c, have, "wisdom-load: %s.expect missing (did the wisdom-save test run?)", path);
    if (!have)
        return;
    step("tuna_wisdom_import(%s)", path ? path : "NULL");
    int rc = tuna_wisdom_import(path, c->comm);
    CHECK(c, rc == MPI_SUCCESS, "wisdom import of %s returned %d (%s)", path, rc, errs(rc));
    const char *rpn = getenv("TUNA_RANKS_PER_NODE");
    int match = v[0] == c->P && strcmp(rpn && *rpn ? rpn : "-", rpn_saved) == 0;
    tuna_plan_info b;
    memset(&b, 0, sizeof b);
    char what[256];
    snprintf(what, sizeof what, "wisdom-load: MEASURE plan (saved at P=%ld rpn=%s, here P=%d rpn=%s)",
             v[0], rpn_saved, c->P, rpn && *rpn ? rpn : "-");
    if (wisdom_plan(c, match ? TUNA_PLAN_SOURCE_WISDOM : TUNA_PLAN_SOURCE_MEASURE, &b, what, 211) &&
        match) {
        tuna_plan_info a;
        memset(&a, 0, sizeof a);
        a.algorithm = (int)v[2];
        for (int i = 0; i < 4; i++)
            a.params[i] = v[3 + i];
        char cha[128], chb[128];
        choice_str(TUNA_ALLTOALLV, a.algorithm, a.params, cha, sizeof cha);
        choice_str(TUNA_ALLTOALLV, b.algorithm, b.params, chb, sizeof chb);
        CHECK(c, same_choice(TUNA_ALLTOALLV, &a, &b), "%s: saved choice %s, loaded plan runs %s",
              what, cha, chb);
    }
    if (c->me == 0)
        printf("test_plans: wisdom loaded from %s (saved P=%ld rpn=%s): expected source %s\n",
               path, v[0], rpn_saved, match ? "WISDOM" : "MEASURE");
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &WP);
    MPI_Comm_rank(MPI_COMM_WORLD, &WME);
    const char *save = NULL, *load = NULL;
    int null_plan_cases = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            base_seed = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--wisdom-save") == 0 && i + 1 < argc)
            save = argv[++i];
        else if (strcmp(argv[i], "--wisdom-load") == 0 && i + 1 < argc)
            load = argv[++i];
        else if (strcmp(argv[i], "--no-null-plan-one-rank") == 0)
            null_plan_cases = 0; /* diagnosis only: if that case hangs, the rest still ends */
        else {
            if (WME == 0)
                fprintf(stderr, "usage: %s [--seed S] [--no-null-plan-one-rank] "
                                "[--wisdom-save FILE | --wisdom-load FILE]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    const char *env_stride = getenv("TUNA_TEST_MIN_STRIDE");
    if (env_stride && atoi(env_stride) > 1)
        inputs_per_variant = 2;
    const char *env_seed = getenv("TUNA_TEST_SEED");
    if (env_seed)
        base_seed = strtoul(env_seed, NULL, 10);
    double t0 = MPI_Wtime();
    watchdog_init();
    step("setup");
    dtypes_init();
    colltypes_init();

    cx world = {MPI_COMM_WORLD, WP, WME, "world"}, dup = world, split = world;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup.comm);
    dup.name = "dup";
    MPI_Comm_split(MPI_COMM_WORLD, WME % 2, WP - WME, &split.comm); /* halves, ranks reversed */
    MPI_Comm_size(split.comm, &split.P);
    MPI_Comm_rank(split.comm, &split.me);
    split.name = "split";

    if (save || load) {
        if (save)
            wisdom_save(&world, save);
        else
            wisdom_load(&world, load);
    } else {
        /* A private directory for wisdom files: rank 0 creates it, everyone gets its name. */
        char dir[4096] = "";
        if (WME == 0) {
            const char *tmp = getenv("TMPDIR");
            snprintf(dir, sizeof dir, "%s/tuna_plans_XXXXXX", tmp && *tmp ? tmp : "/tmp");
            if (!mkdtemp(dir)) {
                perror("mkdtemp");
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
        /* First: the process has no wisdom yet, so the first MEASURE plan is measured. */
        wisdom_tests(&world, dir);
        MPI_Barrier(MPI_COMM_WORLD);
        if (WME == 0)
            rmdir(dir); /* its files are removed by wisdom_tests */
        checker_self_test(&world);
        const cx *comms[3] = {&world, &dup, &split};
        for (int coll = 0; coll <= TUNA_ALLREDUCE; coll++) /* alltoall: test_alltoall.c */
            collective_suite((tuna_collective)coll, comms);
        lifetime_tests(&world);
        op_handle_test(&world);
        state_errors(&world);
        state_errors(&split);
        init_errors(&world);
        init_errors(&dup);
        large_count_init_errors(&split);
        /* Last, as it may hang: print what is known so far first. */
        int sofar = 0;
        MPI_Allreduce(&failures, &sofar, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (WME == 0) {
            printf("test_plans: P=%d: %ld plans (alltoallv %ld, allgather %ld, allreduce %ld) and "
                   "%ld starts on rank 0, %d failures before the one-rank NULL plan pointer "
                   "cases, %.1f s\n",
                   WP, nplans[0] + nplans[1] + nplans[2], nplans[0], nplans[1], nplans[2],
                   nstarts[0] + nstarts[1] + nstarts[2], sofar, MPI_Wtime() - t0);
            fflush(stdout);
        }
        if (null_plan_cases)
            null_plan_one_rank(&world);
        else if (WME == 0)
            printf("test_plans: P=%d: --no-null-plan-one-rank: the NULL plan pointer on one rank "
                   "cases were NOT run\n", WP);
    }

    step("final agreement");
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long tchecks = 0;
    MPI_Reduce(&checks, &tchecks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (WME == 0)
        printf("test_plans: P=%d%s: %ld plans (alltoallv %ld, allgather %ld, allreduce %ld) "
               "on rank 0, %ld starts, %ld checks over all ranks, %d failures, %.1f s\n",
               WP, save ? " wisdom-save" : load ? " wisdom-load" : "",
               nplans[0] + nplans[1] + nplans[2], nplans[0], nplans[1], nplans[2],
               nstarts[0] + nstarts[1] + nstarts[2], tchecks, total, MPI_Wtime() - t0);
    MPI_Comm_free(&dup.comm);
    MPI_Comm_free(&split.comm);
    types_free();
    MPI_Finalize();
    alarm(0);
    return total ? 1 : 0;
}
