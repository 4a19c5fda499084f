/*
 * Strict correctness harness for tuna_alltoallv.
 *
 * One MPI job runs many cases: input sets (datatype x distribution x layout x
 * size) times algorithm variants (every algorithm of the table, with its
 * parameters at their edges). For each case:
 *   - every element of every send block carries bytes derived from
 *     (source, destination, byte index), so the receiver checks what it got
 *     independently of any MPI implementation;
 *   - receive buffers are sentinel-filled, and the whole receive region
 *     (blocks and gaps) must equal PMPI_Alltoallv's result byte for byte;
 *   - send buffers, counts and displacements must be unchanged afterwards.
 * Failures print the seed and the case; the exit code is the failure count.
 *
 * Usage: test_alltoallv [--algorithms a,b,...] [--family f,g,...] [--variants N] [--seed S]
 *                       [--stride K] [--large] [--skip-errors]
 * --family selects the registry rows of those families (src/alltoallv/table.c: "linear",
 * "bruck", "tuna", "hierarchical", ...), so a new row joins its family's runs by itself.
 */
#include "tuna.h"
#include "tuna_internal.h" /* the registry: each row's family */
#include "support/test_data.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define SEND_GAP 0xEE

static int P, me;
static unsigned long base_seed = 20261122;
static int failures;
static long cases_run;

/* ------------------------------------------------------------ deterministic data */

/* Byte idx of the block that src sends to dst, in signature (packed) order. */
static unsigned char payload(int src, int dst, size_t idx, uint64_t salt)
{
    return (unsigned char)mix(salt ^ ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ idx);
}

/* ------------------------------------------------------------ datatypes */

typedef struct dtype_case {
    const char *name;
    MPI_Datatype stype, rtype;
    int ratio; /* recvcount = ratio * sendcount */
} dtype_case;

static dtype_case dtypes[10];
static int ndtypes;

static void dtypes_init(void)
{
    MPI_Datatype vec, pair, st, rst;
    /* vector: 2 ints with a one-int hole: size 8, extent 12 */
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    /* struct {int; double} resized to 24 bytes: holes inside and after */
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, ty, &st);
    MPI_Type_create_resized(st, 0, 24, &rst);
    MPI_Type_free(&st);
    MPI_Type_commit(&rst);
    int k = 0;
    dtypes[k++] = (dtype_case){"char", MPI_CHAR, MPI_CHAR, 1};
    dtypes[k++] = (dtype_case){"int", MPI_INT, MPI_INT, 1};
    dtypes[k++] = (dtype_case){"double", MPI_DOUBLE, MPI_DOUBLE, 1};
    dtypes[k++] = (dtype_case){"vector", vec, vec, 1};
    dtypes[k++] = (dtype_case){"resized-struct", rst, rst, 1};
    dtypes[k++] = (dtype_case){"vector->int", vec, MPI_INT, 2};
    dtypes[k++] = (dtype_case){"int->pair", MPI_INT, pair, 0}; /* 2 ints per pair: see counts */
    dtypes[k++] = (dtype_case){"double_int", MPI_DOUBLE_INT, MPI_DOUBLE_INT, 1}; /* padded */
    ndtypes = k;
}

static void dtypes_free(void)
{
    MPI_Type_free(&dtypes[3].stype);
    MPI_Type_free(&dtypes[4].stype);
    MPI_Type_free(&dtypes[6].rtype);
}

/* ------------------------------------------------------------ one input set */
/* (count distributions and layouts: support/test_data.h) */

typedef struct input {
    int dt, dist, layout, S;
    uint64_t salt;
    int inplace;
    int *scount, *sdispl, *rcount, *rdispl;
    char *sbuf;
    size_t sbuf_len;
    char *ref, *out; /* receive buffers (length rbuf_len, plus offset big_off) */
    size_t rbuf_len;
    MPI_Aint big_off; /* > 0: displacements shifted beyond 2 GiB */
    char *ref_alloc, *out_alloc, *sbuf_alloc;
} input;

static void describe(const input *in, char *buf, size_t len)
{
    snprintf(buf, len, "dtype=%s dist=%s layout=%s S=%d%s%s seed=%lu", dtypes[in->dt].name,
             dist_names[in->dist], layout_names[in->layout], in->S,
             in->inplace ? " in-place" : "", in->big_off ? " offsets>2GiB" : "", base_seed);
}

static void input_free(input *in)
{
    free(in->scount);
    free(in->sbuf_alloc);
    free(in->ref_alloc);
    free(in->out_alloc);
    memset(in, 0, sizeof *in);
}

static int type_info(MPI_Datatype t, MPI_Aint *ext, int *size)
{
    MPI_Aint lb;
    MPI_Type_get_extent(t, &lb, ext);
    return MPI_Type_size(t, size);
}

/* Build an input set; returns 0 on success. */
static int input_build(input *in, int dt, int dist, int layout, int S, int inplace, int big)
{
    memset(in, 0, sizeof *in);
    in->dt = dt;
    in->dist = dist;
    in->layout = inplace ? L_GAPPED : layout;
    in->S = S;
    in->inplace = inplace;
    uint64_t seed = mix(base_seed ^ ((uint64_t)dt << 40) ^ ((uint64_t)dist << 32) ^
                        ((uint64_t)layout << 24) ^ ((uint64_t)S << 4) ^ (uint64_t)inplace ^
                        ((uint64_t)big << 2));
    in->salt = seed;
    const dtype_case *d = &dtypes[dt];
    int even = d->ratio == 0;
    in->scount = calloc(4 * (size_t)P, sizeof(int));
    in->sdispl = in->scount + P;
    in->rcount = in->scount + 2 * P;
    in->rdispl = in->scount + 3 * P;
    for (int j = 0; j < P; j++) {
        int a = inplace ? (me < j ? me : j) : me, b = inplace ? (me < j ? j : me) : j;
        in->scount[j] = count_of(dist, a, b, S, seed, even, P);
        int a2 = inplace ? a : j, b2 = inplace ? b : me;
        int sc = count_of(dist, a2, b2, S, seed, even, P);
        in->rcount[j] = d->ratio == 0 ? sc / 2 : sc * d->ratio;
    }
    MPI_Aint sext, rext;
    int ssize, rsize;
    type_info(d->stype, &sext, &ssize);
    type_info(d->rtype, &rext, &rsize);
    /* Offsets beyond 2 GiB: shift every displacement by ~2.2 GiB worth of elements. */
    int sbig = big ? (int)(((MPI_Aint)2200 << 20) / sext) : 0;
    int rbig = big ? (int)(((MPI_Aint)2300 << 20) / rext) : 0;
    size_t sspan = make_displs(P, in->scount, in->sdispl, in->layout, sbig);
    size_t rspan = make_displs(P, in->rcount, in->rdispl,
                               in->layout == L_OVERLAP ? L_GAPPED : in->layout, rbig);
    in->big_off = (MPI_Aint)rbig * rext;
    MPI_Aint sbig_off = (MPI_Aint)sbig * sext;
    in->sbuf_len = sspan * (size_t)sext + 64;
    in->rbuf_len = rspan * (size_t)rext + 64;
    /* Big buffers: calloc's untouched pages cost nothing; only the used tail is written. */
    in->sbuf_alloc = calloc(1, (size_t)sbig_off + in->sbuf_len);
    in->ref_alloc = calloc(1, (size_t)in->big_off + in->rbuf_len);
    in->out_alloc = calloc(1, (size_t)in->big_off + in->rbuf_len);
    if (!in->sbuf_alloc || !in->ref_alloc || !in->out_alloc)
        return -1;
    in->sbuf = in->sbuf_alloc; /* pointer passed to MPI; data lives at + sbig_off */
    memset(in->sbuf + sbig_off, SEND_GAP, in->sbuf_len);
    /* Fill each send block from its packed payload (signature order). */
    MPI_Datatype ft = inplace ? d->rtype : d->stype;
    MPI_Aint fext = inplace ? rext : sext;
    int fsize = inplace ? rsize : ssize;
    const int *fc = inplace ? in->rcount : in->scount;
    const int *fd = inplace ? in->rdispl : in->sdispl;
    char *fbuf = inplace ? in->out_alloc : in->sbuf;
    if (inplace)
        memset(fbuf + in->big_off, SENTINEL, in->rbuf_len);
    for (int j = 0; j < P; j++) {
        /* Overlapping reads: one shared region, filled once from the largest block. */
        int key = j;
        if (in->layout == L_OVERLAP) {
            int big_j = 0;
            for (int k = 1; k < P; k++)
                if (fc[k] > fc[big_j])
                    big_j = k;
            if (j != big_j)
                continue;
            key = -1;
        }
        size_t bytes = (size_t)fc[j] * (size_t)fsize;
        unsigned char *pk = malloc(bytes + 1);
        for (size_t k = 0; k < bytes; k++)
            pk[k] = payload(me, key, k, in->salt);
        int pos = 0;
        MPI_Unpack(pk, (int)bytes, &pos, fbuf + (MPI_Aint)fd[j] * fext, fc[j], ft, MPI_COMM_SELF);
        free(pk);
    }
    (void)fsize;
    return 0;
}

/* Compute the reference with PMPI_Alltoallv into in->ref. */
static int input_reference(input *in)
{
    const dtype_case *d = &dtypes[in->dt];
    memset(in->ref_alloc + in->big_off, SENTINEL, in->rbuf_len);
    if (in->inplace) {
        memcpy(in->ref_alloc + in->big_off, in->out_alloc + in->big_off, in->rbuf_len);
        return PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in->ref_alloc,
                              in->rcount, in->rdispl, d->rtype, MPI_COMM_WORLD);
    }
    return PMPI_Alltoallv(in->sbuf, in->scount, in->sdispl, d->stype, in->ref_alloc, in->rcount,
                          in->rdispl, d->rtype, MPI_COMM_WORLD);
}

/* Independent check: the packed received block from src equals payload(src, me, .). */
static int check_payload(const input *in, const char *rbuf, char *why, size_t wlen)
{
    const dtype_case *d = &dtypes[in->dt];
    MPI_Aint rext;
    int rsize;
    type_info(d->rtype, &rext, &rsize);
    for (int src = 0; src < P; src++) {
        size_t bytes = (size_t)in->rcount[src] * (size_t)rsize;
        unsigned char *pk = malloc(bytes + 1);
        int pos = 0;
        MPI_Pack(rbuf + (MPI_Aint)in->rdispl[src] * rext, in->rcount[src], d->rtype, pk,
                 (int)bytes, &pos, MPI_COMM_SELF);
        int key = in->layout == L_OVERLAP ? -1 : me;
        for (size_t k = 0; k < bytes; k++) {
            if (pk[k] != payload(src, key, k, in->salt)) {
                snprintf(why, wlen, "block from rank %d byte %zu: got 0x%02x want 0x%02x", src, k,
                         pk[k], payload(src, key, k, in->salt));
                free(pk);
                return 1;
            }
        }
        free(pk);
    }
    return 0;
}

/* Full verification of in->out against the reference and the payload. */
static int verify(const input *in, char *why, size_t wlen)
{
    const char *out = in->out_alloc + in->big_off, *ref = in->ref_alloc + in->big_off;
    if (memcmp(out, ref, in->rbuf_len) != 0) {
        size_t k = 0;
        while (out[k] == ref[k])
            k++;
        snprintf(why, wlen, "receive region differs from PMPI_Alltoallv at byte %zu "
                 "(got 0x%02x want 0x%02x)", k, (unsigned char)out[k], (unsigned char)ref[k]);
        return 1;
    }
    return check_payload(in, in->out_alloc, why, wlen);
}

/* ------------------------------------------------------------ variants */

typedef struct variant {
    char str[96];
} variant;

static variant *variants;
static int nvariants;

static void add_variant(const char *s)
{
    for (int i = 0; i < nvariants; i++)
        if (strcmp(variants[i].str, s) == 0)
            return;
    variants = realloc(variants, sizeof(variant) * (size_t)(nvariants + 1));
    snprintf(variants[nvariants++].str, sizeof variants[0].str, "%s", s);
}

/* Parameter values at the edges of their ranges, for this P. */
static int edge_values(const tuna_param_info *p, long *v)
{
    long maxv = p->max == TUNA_PARAM_P ? (P > p->min ? P : p->min) : p->max;
    long s = (long)ceil(sqrt((double)P));
    long cand[] = {p->min, p->min + 1, 3, 4, s, maxv - 1, maxv, maxv + 3};
    int n = 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        long c = cand[i];
        if (c < p->min || (p->max != TUNA_PARAM_P && c > p->max))
            continue;
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= v[k] == c;
        if (!dup)
            v[n++] = c;
    }
    return n;
}

/* Whether `name` is one of the comma-separated `list` (NULL: every name is). */
static bool listed(const char *list, const char *name)
{
    if (!list)
        return true;
    char pat[256], key[80];
    snprintf(pat, sizeof pat, ",%s,", list);
    snprintf(key, sizeof key, ",%s,", name);
    return strstr(pat, key) != NULL;
}

static void build_variants(const char *only, const char *families)
{
    const tuna_registry *reg = tuna_registry_of(TUNA_ALLTOALLV);
    for (int a = 0; a < reg->n; a++) {
        const tuna_algorithm *row = tuna_registry_row(reg, a);
        const tuna_algorithm_info *info = &row->info;
        if (!listed(only, info->name) || !listed(families, row->family))
            continue;
        add_variant(info->name);
        if (info->nparams == 0)
            continue;
        long v0[16], v1[16];
        int n0 = edge_values(&info->params[0], v0);
        int n1 = info->nparams > 1 ? edge_values(&info->params[1], v1) : 1;
        for (int i = 0; i < n0; i++)
            for (int k = 0; k < n1; k++) {
                char s[96];
                if (info->nparams > 1)
                    snprintf(s, sizeof s, "%s:%s=%ld,%s=%ld", info->name, info->params[0].name,
                             v0[i], info->params[1].name, v1[k]);
                else
                    snprintf(s, sizeof s, "%s:%s=%ld", info->name, info->params[0].name, v0[i]);
                add_variant(s);
            }
    }
}

/* ------------------------------------------------------------ running cases */

static void report(int bad, const char *variant_str, const input *in, const char *why)
{
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        char d[256];
        describe(in, d, sizeof d);
        fprintf(stderr, "FAIL P=%d rank=%d alg=%s %s: %s\n", P, me, variant_str, d, why);
    }
    if (any)
        failures++;
    cases_run++;
}

static void run_case(const variant *v, input *in)
{
    const dtype_case *d = &dtypes[in->dt];
    char why[256] = "";
    tuna_options opt;
    int rc = tuna_options_parse(v->str, TUNA_ALLTOALLV, &opt);
    if (rc != MPI_SUCCESS) {
        snprintf(why, sizeof why, "option parse failed: %s", tuna_error_string(rc));
        report(1, v->str, in, why);
        return;
    }
    char *out = in->out_alloc + in->big_off;
    if (in->inplace) {
        /* The in-place input lives in ref_alloc's twin: rebuild it from the payload. */
        input tmp;
        input_build(&tmp, in->dt, in->dist, in->layout, in->S, 1, in->big_off != 0);
        memcpy(out, tmp.out_alloc + tmp.big_off, in->rbuf_len);
        input_free(&tmp);
    } else {
        memset(out, SENTINEL, in->rbuf_len);
    }
    /* Snapshot inputs to check they are not modified. */
    MPI_Aint sext;
    int ssize;
    type_info(d->stype, &sext, &ssize);
    int *counts_copy = malloc(sizeof(int) * 4 * (size_t)P);
    memcpy(counts_copy, in->scount, sizeof(int) * 4 * (size_t)P);
    char *sdata = NULL;
    size_t sdata_len = 0;
    const char *sstart = NULL;
    if (!in->inplace) {
        /* The send data region is the last sbuf_len bytes of the allocation. */
        long long minoff = LLONG_MAX;
        for (int j = 0; j < P; j++)
            if ((long long)in->sdispl[j] * sext < minoff)
                minoff = (long long)in->sdispl[j] * sext;
        sstart = in->sbuf + minoff;
        sdata_len = in->sbuf_len - 64;
        sdata = malloc(sdata_len + 1);
        memcpy(sdata, sstart, sdata_len);
    }
    if (in->inplace)
        rc = tuna_alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in->out_alloc,
                            in->rcount, in->rdispl, d->rtype, MPI_COMM_WORLD, &opt);
    else
        rc = tuna_alltoallv(in->sbuf, in->scount, in->sdispl, d->stype, in->out_alloc,
                            in->rcount, in->rdispl, d->rtype, MPI_COMM_WORLD, &opt);
    int bad = 0;
    if (rc != MPI_SUCCESS) {
        snprintf(why, sizeof why, "returned %d: %s", rc, tuna_error_string(rc));
        bad = 1;
    } else if (verify(in, why, sizeof why)) {
        bad = 1;
    } else if (memcmp(counts_copy, in->scount, sizeof(int) * 4 * (size_t)P) != 0) {
        snprintf(why, sizeof why, "counts or displacements were modified");
        bad = 1;
    } else if (sdata && memcmp(sdata, sstart, sdata_len) != 0) {
        snprintf(why, sizeof why, "send buffer was modified");
        bad = 1;
    }
    free(counts_copy);
    free(sdata);
    report(bad, v->str, in, why);
}

/* The checker must catch a corrupted byte and a written gap: prove it once. */
static void self_test_checker(input *in)
{
    char why[256];
    char *out = in->out_alloc + in->big_off;
    memcpy(out, in->ref_alloc + in->big_off, in->rbuf_len);
    int ok_clean = verify(in, why, sizeof why) == 0;
    out[in->rbuf_len - 1] ^= 1; /* trailing sentinel byte */
    int caught_gap = verify(in, why, sizeof why) != 0;
    out[in->rbuf_len - 1] ^= 1;
    /* Corrupt the reference and the output alike: only the payload check can tell. */
    int caught_payload = 1;
    for (int j = 0; j < P; j++) {
        if (in->rcount[j] > 0) {
            MPI_Aint rext;
            int rsize;
            type_info(dtypes[in->dt].rtype, &rext, &rsize);
            char *p = in->out_alloc + (MPI_Aint)in->rdispl[j] * rext;
            char *r = in->ref_alloc + (MPI_Aint)in->rdispl[j] * rext;
            *p ^= 0x10;
            *r ^= 0x10;
            caught_payload = verify(in, why, sizeof why) != 0;
            *p ^= 0x10;
            *r ^= 0x10;
            break;
        }
    }
    int bad = !(ok_clean && caught_gap && caught_payload);
    report(bad, "checker-self-test", in, "the checker missed a corruption");
}

/* ------------------------------------------------------------ bad input */

static void expect_true(const char *what, int cond)
{
    int bad = !cond, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad)
        fprintf(stderr, "FAIL P=%d rank=%d: %s\n", P, me, what);
    if (any)
        failures++;
    cases_run++;
}

static void expect_error(const char *what, int rc, int want, const char *must_contain)
{
    int bad = rc == MPI_SUCCESS || (want != 0 && rc != want);
    const char *msg = tuna_error_string(rc);
    if (!bad && must_contain && !strstr(msg, must_contain))
        bad = 1;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad)
        fprintf(stderr, "FAIL P=%d rank=%d bad-input '%s': rc=%d msg='%s' (want %d, '%s')\n", P,
                me, what, rc, msg, want, must_contain ? must_contain : "");
    if (any)
        failures++;
    cases_run++;
}

static void bad_input_cases(const char *alg)
{
    tuna_options opt;
    int rc;
    /* Parser errors name the bad token. */
    rc = tuna_options_parse("nosuchalg:block=3", TUNA_ALLTOALLV, &opt);
    expect_error("unknown algorithm", rc, MPI_ERR_ARG, "nosuchalg");
    rc = tuna_options_parse("scattered:block=0", TUNA_ALLTOALLV, &opt);
    expect_error("block out of range", rc, MPI_ERR_ARG, "'0'");
    rc = tuna_options_parse("scattered:blokc=4", TUNA_ALLTOALLV, &opt);
    expect_error("unknown key", rc, MPI_ERR_ARG, "blokc");
    rc = tuna_options_parse("scattered:block=4x", TUNA_ALLTOALLV, &opt);
    expect_error("malformed value", rc, MPI_ERR_ARG, "4x");
    rc = tuna_options_parse("scattered:block=4,block=5", TUNA_ALLTOALLV, &opt);
    expect_error("repeated key", rc, MPI_ERR_ARG, "block");

    /* vendor is the MPI library itself: its bad-input behaviour is the library's. */
    if (strcmp(alg, "vendor") == 0 || tuna_options_parse(alg, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS)
        return;
    int *c = calloc(4 * (size_t)P, sizeof(int));
    int *sc = c, *sd = c + P, *rc_ = c + 2 * P, *rd = c + 3 * P;
    for (int j = 0; j < P; j++) {
        sc[j] = rc_[j] = 2;
        sd[j] = rd[j] = 2 * j;
    }
    int *sb = malloc(sizeof(int) * 2 * (size_t)P), *rb = malloc(sizeof(int) * 2 * (size_t)P);
    for (int j = 0; j < 2 * P; j++) {
        sb[j] = j;
        rb[j] = -7;
    }
    char what[160];
    /* Errors on one rank only are agreed (every rank returns one, none waits) under
     * TUNA_ARGCHECK=collective, and by the padded Bruck algorithms, whose per-call allreduce
     * of the largest block carries the error flag. Otherwise (the default, as in MPI
     * libraries) only the rank that sees the error returns it, and its peers would wait for
     * it: there the test makes the error on every rank. */
    const char *env = getenv("TUNA_ARGCHECK");
    const bool agreed = (env && strcmp(env, "collective") == 0) || strcmp(alg, "bruck") == 0 ||
                        strcmp(alg, "padded-bruck") == 0;
    const bool bad_here = agreed ? me == P - 1 : true;
    if (bad_here)
        sc[0] = -1;
    rc = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    snprintf(what, sizeof what, "%s: negative sendcount on %s", alg,
             agreed ? "one rank" : "every rank");
    expect_error(what, rc, bad_here ? MPI_ERR_COUNT : MPI_ERR_ARG,
                 bad_here ? "sendcounts[0] = -1" : "another rank");
    sc[0] = 2;
    int untouched = 1;
    for (int j = 0; j < 2 * P; j++)
        untouched &= rb[j] == -7;
    snprintf(what, sizeof what, "%s: receive buffer untouched after an error", alg);
    expect_true(what, untouched);
    /* NULL receive buffer with non-zero counts (on rank 0, or everywhere). */
    const bool null_here = agreed ? me == 0 : true;
    rc = tuna_alltoallv(sb, sc, sd, MPI_INT, null_here ? NULL : rb, rc_, rd, MPI_INT,
                        MPI_COMM_WORLD, &opt);
    snprintf(what, sizeof what, "%s: NULL recvbuf", alg);
    expect_error(what, rc, null_here ? MPI_ERR_BUFFER : MPI_ERR_ARG, NULL);
    /* NULL send buffer with non-zero counts everywhere. */
    rc = tuna_alltoallv(NULL, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    snprintf(what, sizeof what, "%s: NULL sendbuf", alg);
    expect_error(what, rc, MPI_ERR_BUFFER, "sendbuf is NULL");
    rc = tuna_alltoallv(sb, sc, sd, MPI_DATATYPE_NULL, rb, rc_, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    snprintf(what, sizeof what, "%s: MPI_DATATYPE_NULL", alg);
    expect_error(what, rc, MPI_ERR_TYPE, "sendtype");
    rc = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, MPI_COMM_NULL, &opt);
    snprintf(what, sizeof what, "%s: MPI_COMM_NULL", alg);
    expect_error(what, rc, MPI_ERR_COMM, NULL);
    /* Intercommunicator: rejected (vendor passes it to the MPI library). */
    if (P >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 99, &inter);
        rc = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, inter, &opt);
        snprintf(what, sizeof what, "%s: intercommunicator", alg);
        expect_error(what, rc, MPI_ERR_COMM, "intracommunicators");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    /* After all of that, a correct call still works. */
    rc = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    int good = rc == MPI_SUCCESS;
    for (int j = 0; j < P && good; j++)
        good = rb[2 * j] == 2 * me && rb[2 * j + 1] == 2 * me + 1;
    snprintf(what, sizeof what, "%s: valid call after errors", alg);
    expect_true(what, good);
    free(c);
    free(sb);
    free(rb);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *only = NULL, *families = NULL;
    int stride = 3, large = 0, skip_errors = 0;
    static const struct option longopts[] = {
        {"algorithms", required_argument, 0, 'a'}, {"family", required_argument, 0, 'f'},
        {"seed", required_argument, 0, 's'},
        {"stride", required_argument, 0, 'k'},     {"large", no_argument, 0, 'l'},
        {"skip-errors", no_argument, 0, 'e'},      {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "a:f:s:k:le", longopts, NULL)) != -1) {
        switch (ch) {
        case 'a': only = optarg; break;
        case 'f': families = optarg; break;
        case 's': base_seed = strtoul(optarg, NULL, 10); break;
        case 'k': stride = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'l': large = 1; break;
        case 'e': skip_errors = 1; break;
        default:
            if (me == 0)
                fprintf(stderr,
                        "usage: %s [--algorithms a,b] [--family f,g] [--seed S] [--stride K] "
                        "[--large]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* Slow configurations (sanitizers, oversubscribed MPICH) thin the matrix further. */
    const char *env_stride = getenv("TUNA_TEST_MIN_STRIDE");
    if (env_stride && atoi(env_stride) > stride)
        stride = atoi(env_stride);
    const char *env_seed = getenv("TUNA_TEST_SEED");
    if (env_seed)
        base_seed = strtoul(env_seed, NULL, 10);
    dtypes_init();
    build_variants(only, families);
    if (me == 0)
        printf("test_alltoallv: P=%d seed=%lu variants=%d stride=%d\n", P, base_seed, nvariants,
               stride);

    /* Input sets: datatype x distribution x layout, sizes cycling; each variant runs on
     * the sets whose index is congruent to its own modulo `stride` (coprime to the
     * dimensions, so each variant still meets every datatype, distribution and layout). */
    static const int sizes[] = {5, 37, 300, 1};
    int set = 0;
    for (int dt = 0; dt < ndtypes; dt++)
        for (int dist = 0; dist < D_CONST; dist++)
            for (int layout = 0; layout < L_COUNT; layout++, set++) {
                input in;
                int S = sizes[set % 4];
                if (input_build(&in, dt, dist, layout, S, 0, 0) != 0 ||
                    input_reference(&in) != MPI_SUCCESS) {
                    fprintf(stderr, "FAIL rank %d: could not build input set %d\n", me, set);
                    failures++;
                    input_free(&in);
                    continue;
                }
                if (set == 0)
                    self_test_checker(&in);
                for (int v = 0; v < nvariants; v++)
                    if ((set + v) % stride == 0)
                        run_case(&variants[v], &in);
                input_free(&in);
            }
    /* In-place, for every variant, two datatypes. */
    for (int k = 0; k < 2; k++) {
        input in;
        int dt = k == 0 ? 1 : 4;
        input_build(&in, dt, D_UNIFORM, L_GAPPED, 23, 1, 0);
        input_reference(&in);
        for (int v = 0; v < nvariants; v++)
            run_case(&variants[v], &in);
        input_free(&in);
    }
    /* Large blocks (>= 64 KiB) so that a buffer reused while a send is pending shows. */
    if (large) {
        input in;
        input_build(&in, 1, D_UNIFORM, L_GAPPED, 40000, 0, 0);
        input_reference(&in);
        for (int v = 0; v < nvariants; v++)
            run_case(&variants[v], &in);
        input_free(&in);
    }
    /* Byte offsets beyond 2 GiB (virtual memory only; small P keeps it cheap). */
    if (P <= 4) {
        input in;
        if (input_build(&in, 1, D_UNIFORM, L_REVERSED, 9, 0, 1) == 0 &&
            input_reference(&in) == MPI_SUCCESS) {
            for (int v = 0; v < nvariants; v += 1)
                run_case(&variants[v], &in);
        } else {
            fprintf(stderr, "FAIL rank %d: could not build the >2 GiB offset input\n", me);
            failures++;
        }
        input_free(&in);
    }
    if (!skip_errors)
        for (int v = 0; v < nvariants; v++)
            if (!strchr(variants[v].str, ':'))
                bad_input_cases(variants[v].str);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_alltoallv: P=%d %ld cases, %d failed\n", P, cases_run, total);
    dtypes_free();
    free(variants);
    MPI_Finalize();
    return total ? 1 : 0;
}
