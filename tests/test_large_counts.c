/*
 * tuna_alltoallv_c (MPI_Alltoallv_c's large-count form) for every algorithm row:
 *  1. ordinary inputs through the large-count API (MPI_Count counts, MPI_Aint displacements
 *     in reverse order with gaps, empty blocks, a receive type with holes, MPI_IN_PLACE),
 *     compared byte for byte with PMPI_Alltoallv on sentinel-filled buffers;
 *  2. displacements beyond INT_MAX elements: blocks placed past 2^31 bytes of MPI_BYTE
 *     buffers (sparse mappings: untouched pages cost nothing), checked against a formula;
 *  3. with --huge (P = 2): one block of 2^31 + 3 elements, beyond an int count, from rank 0
 *     to rank 1, for linear, tuna and vendor (4.3 GB of memory and more in all);
 *  4. plans by tuna_alltoallv_init_c (forced rows, auto estimated and measured) with 2.'s
 *     displacements, the send blocks rewritten before each start;
 *  5. plans by tuna_alltoall_init_c against PMPI_Alltoall (count 0, in place), the input
 *     rewritten before each start; a vendor plan's statistics name the row that ran (the
 *     library's _c call under MPI 4, else linear as a fallback);
 *  6. the large-count inits' errors (a negative count on one rank: every rank fails; in place,
 *     a non-contiguous block beyond 2 GiB: MPI_ERR_COUNT) and a count beyond INT_MAX of an
 *     empty type (valid only as an MPI_Count: nothing moves).
 * Every rank checks its own result; failures are summed over the ranks.
 *
 * Usage: test_large_counts [--huge]   (under mpiexec, any P)
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "support/test_expect.h"
#include "tuna.h"
#include "tuna_mpi_features.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


static int count_of(int src, int dst)
{
    return (src * 3 + dst * 5 + 1) % 7; /* empty blocks included */
}

/* 1. Ordinary inputs: the large-count API must give PMPI_Alltoallv's bytes. */
static void ordinary(const char *alg, bool holes)
{
    tuna_options opt;
    tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    /* Send: MPI_INT blocks in reverse rank order with a gap of 2 between them. Receive:
     * one element = 2 ints (holes: a vector of 2 ints 2 apart, extent 3 ints). */
    MPI_Datatype rtype = MPI_DATATYPE_NULL;
    if (holes)
        MPI_Type_vector(2, 1, 2, MPI_INT, &rtype);
    else
        MPI_Type_contiguous(2, MPI_INT, &rtype);
    MPI_Type_commit(&rtype);
    const int rstride = holes ? 3 : 2; /* ints per receive element */
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc_ = sc + 2 * P,
        *rd = sc + 3 * P;
    MPI_Count *scl = malloc(sizeof(MPI_Count) * 2 * (size_t)P), *rcl = scl + P;
    MPI_Aint *sdl = malloc(sizeof(MPI_Aint) * 2 * (size_t)P), *rdl = sdl + P;
    int stot = 0, rtot = 0;
    for (int k = P - 1; k >= 0; k--) {
        sc[k] = 2 * count_of(me, k);
        sd[k] = stot;
        stot += sc[k] + 2;
    }
    for (int k = 0; k < P; k++) {
        rc_[k] = count_of(k, me);
        rd[k] = rtot;
        rtot += rc_[k] + 1; /* one element of gap */
    }
    for (int k = 0; k < P; k++) {
        scl[k] = sc[k];
        sdl[k] = sd[k];
        rcl[k] = rc_[k];
        rdl[k] = rd[k];
    }
    const size_t rints = (size_t)rtot * (size_t)rstride + 1;
    int *sbuf = malloc(sizeof(int) * ((size_t)stot + 1)), *got = malloc(sizeof(int) * rints),
        *want = malloc(sizeof(int) * rints);
    for (int i = 0; i < stot; i++)
        sbuf[i] = me * 100000 + i;
    for (size_t i = 0; i < rints; i++)
        got[i] = want[i] = -7;
    PMPI_Alltoallv(sbuf, sc, sd, MPI_INT, want, rc_, rd, rtype, MPI_COMM_WORLD);
    int rc = tuna_alltoallv_c(sbuf, scl, sdl, MPI_INT, got, rcl, rdl, rtype, MPI_COMM_WORLD,
                              &opt);
    expect(rc == MPI_SUCCESS && memcmp(got, want, sizeof(int) * rints) == 0,
           holes ? "large-count API, receive type with holes" : "large-count API", alg, rc);

    /* MPI_IN_PLACE: symmetric counts of 2-int elements. */
    for (int k = 0; k < P; k++) {
        rc_[k] = 1 + (me + k) % 3;
        rd[k] = 4 * k;
        rcl[k] = rc_[k];
        rdl[k] = rd[k];
    }
    const size_t iints = (size_t)(4 * P) * (size_t)rstride + 1;
    int *ip_got = malloc(sizeof(int) * iints), *ip_want = malloc(sizeof(int) * iints);
    for (size_t i = 0; i < iints; i++)
        ip_got[i] = ip_want[i] = me * 1000 + (int)i;
    PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ip_want, rc_, rd, rtype,
                   MPI_COMM_WORLD);
    rc = tuna_alltoallv_c(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ip_got, rcl, rdl, rtype,
                          MPI_COMM_WORLD, &opt);
    expect(rc == MPI_SUCCESS && memcmp(ip_got, ip_want, sizeof(int) * iints) == 0,
           "large-count API in place", alg, rc);
    free(ip_got);
    free(ip_want);
    free(sbuf);
    free(got);
    free(want);
    free(sc);
    free(scl);
    free(sdl);
    MPI_Type_free(&rtype);
}

static unsigned char byte_of(int src, int dst, MPI_Count i, int salt)
{
    return (unsigned char)(src * 31 + dst * 7 + salt * 53 + (int)(i % 251));
}

static void *sparse(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* 2. Displacements beyond INT_MAX elements (MPI_BYTE): blocks start past 2^31 bytes. With
 * plan = true (4.): a tuna_alltoallv_init_c plan (opt NULL: auto with `flags`), started
 * NSTARTS times, the send blocks rewritten and the receive region re-sentinelled before each. */
#define NSTARTS 3
static void far_displacements(const char *alg, bool plan, unsigned flags)
{
    tuna_options opt;
    if (alg)
        tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    char what[160];
    snprintf(what, sizeof what, "%sdisplacements beyond INT_MAX elements%s",
             plan ? "plan: " : "", plan && !alg && flags ? " (MEASURE)" : "");
    const char *name = alg ? alg : "(NULL)";
    const MPI_Aint off = (MPI_Aint)INT_MAX + 4097, B = 64;
    const size_t len = (size_t)off + (size_t)(P + 1) * (size_t)B;
    unsigned char *sbuf = sparse(len), *rbuf = sparse(len);
    if (!sbuf || !rbuf) {
        expect(0, "mapping 2 x 2 GiB of sparse memory", name, MPI_ERR_NO_MEM);
        return;
    }
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *disp = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int k = 0; k < P; k++) {
        cnt[k] = (me + 2 * k) % (int)B;                /* to k; 0 from rank 0 to itself */
        cnt[P + k] = (k + 2 * me) % (int)B;            /* from k */
        disp[k] = disp[P + k] = off + (MPI_Aint)k * B; /* > INT_MAX elements */
    }
    tuna_plan pl = NULL;
    int rc = plan ? tuna_alltoallv_init_c(sbuf, cnt, disp, MPI_BYTE, rbuf, cnt + P, disp + P,
                                          MPI_BYTE, MPI_COMM_WORLD, alg ? &opt : NULL, flags,
                                          &pl)
                  : MPI_SUCCESS;
    expect(rc == MPI_SUCCESS && (!plan || pl), "plan: init_c with far displacements", name, rc);
    for (int salt = 0; salt < (plan ? NSTARTS : 1) && rc == MPI_SUCCESS; salt++) {
        for (int k = 0; k < P; k++)
            for (MPI_Count i = 0; i < cnt[k]; i++)
                sbuf[disp[k] + i] = byte_of(me, k, i, salt);
        memset(rbuf + off - 64, 0xee, (size_t)(P + 1) * (size_t)B + 64);
        if (plan) {
            rc = tuna_start(pl);
            if (rc == MPI_SUCCESS)
                rc = tuna_wait(pl);
        } else {
            rc = tuna_alltoallv_c(sbuf, cnt, disp, MPI_BYTE, rbuf, cnt + P, disp + P, MPI_BYTE,
                                  MPI_COMM_WORLD, &opt);
        }
        int good = rc == MPI_SUCCESS;
        for (int k = 0; k < P && good; k++)
            for (MPI_Count i = 0; i < B; i++)
                good &= rbuf[disp[P + k] + i] ==
                        (i < cnt[P + k] ? byte_of(k, me, i, salt) : 0xee);
        for (int i = 0; i < 64 && good; i++) /* nothing written before the first block */
            good &= rbuf[off - 64 + i] == 0xee;
        expect(good, what, name, rc);
    }
    if (pl)
        tuna_plan_free(&pl);
    free(cnt);
    free(disp);
    munmap(sbuf, len);
    munmap(rbuf, len);
}

/* The row a vendor plan's last start ran: the library's large-count call where it has one
 * (MPI 4's MPI_Alltoallv_c / MPI_Alltoall_c, found by CMake), else linear, named as a fallback in the statistics. */
static void check_vendor_ran(tuna_collective coll, const char *what)
{
    const tuna_stats *st = tuna_stats_last();
    bool library_has_it = false; /* decided by the build, as the library's plan decides */
#if defined(TUNA_HAVE_MPI_ALLTOALLV_C)
    library_has_it |= coll == TUNA_ALLTOALLV;
#endif
#if defined(TUNA_HAVE_MPI_ALLTOALL_C)
    library_has_it |= coll == TUNA_ALLTOALL;
#endif
    const bool ok = library_has_it
                        ? st->algorithm == tuna_algorithm_find(coll, "vendor") && !st->fallback
                        : st->algorithm == tuna_algorithm_find(coll, "linear") && st->fallback;
    expect(ok, what, st->fallback ? st->fallback : "no fallback", MPI_SUCCESS);
}

/* 5. tuna_alltoall_init_c against PMPI_Alltoall on sentinel-filled buffers: blocks of `count`
 * ints (0 included), in place or not, the input rewritten before each of NSTARTS starts. */
static void alltoall_plan(const char *alg, unsigned flags, int count, bool inplace)
{
    tuna_options opt;
    if (alg)
        tuna_options_parse(alg, TUNA_ALLTOALL, &opt);
    const char *name = alg ? alg : flags ? "(NULL) MEASURE" : "(NULL)";
    char what[96];
    snprintf(what, sizeof what, "plan: tuna_alltoall_init_c, count %d%s", count,
             inplace ? " in place" : "");
    const size_t n = (size_t)P * (size_t)count, len = n + 4; /* 4 guard ints */
    int *sbuf = malloc(sizeof(int) * (n + 1)), *got = malloc(sizeof(int) * len),
        *want = malloc(sizeof(int) * len);
    tuna_plan pl = NULL;
    int rc = tuna_alltoall_init_c(inplace ? MPI_IN_PLACE : sbuf, inplace ? 0 : count, MPI_INT,
                                  got, count, MPI_INT, MPI_COMM_WORLD, alg ? &opt : NULL, flags,
                                  &pl);
    expect(rc == MPI_SUCCESS && pl, what, name, rc);
    for (int salt = 0; salt < NSTARTS && rc == MPI_SUCCESS; salt++) {
        for (size_t i = 0; i < len; i++)
            got[i] = want[i] = -7;
        int *in = inplace ? got : sbuf;
        for (size_t i = 0; i < n; i++)
            in[i] = want[i] = salt * 1000000 + me * 10000 + (int)i;
        PMPI_Alltoall(inplace ? MPI_IN_PLACE : sbuf, count, MPI_INT, want, count, MPI_INT,
                      MPI_COMM_WORLD);
        rc = tuna_start(pl);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(pl);
        expect(rc == MPI_SUCCESS && memcmp(got, want, sizeof(int) * len) == 0, what, name, rc);
    }
    if (alg && strcmp(alg, "vendor") == 0 && rc == MPI_SUCCESS && count > 0)
        check_vendor_ran(TUNA_ALLTOALL, "plan: the row a vendor alltoall_init_c plan ran");
    if (pl)
        tuna_plan_free(&pl);
    free(sbuf);
    free(got);
    free(want);
}

/* An init that must fail on every rank (class `cls` on rank `on`, -1: all) with no plan. */
static void expect_init_error(int rc, tuna_plan *pl, int cls, int on, const char *what)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    expect(rc != MPI_SUCCESS && !*pl && ((on >= 0 && me != on) || got == cls), what, "-", rc);
    if (*pl)
        tuna_plan_free(pl);
}

/* 6. The large-count inits' errors and limits: a negative count on one rank (agreed: every
 * rank fails), in place with a non-contiguous type a block beyond 2 GiB (MPI_ERR_COUNT, as the
 * blocking _c calls); and a count beyond INT_MAX of an empty type, valid only as an MPI_Count
 * (cut to an int it is negative): it moves nothing. */
static void plan_limits(void)
{
    int s[16] = {0}, r[16], want[16];
    MPI_Count cnt[16];
    MPI_Aint dsp[16];
    const int last = P - 1;
    tuna_plan pl = NULL;
    int rc = tuna_alltoall_init_c(s, me == last ? -1 : 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD,
                                  NULL, TUNA_PLAN_ESTIMATE, &pl);
    expect_init_error(rc, &pl, MPI_ERR_COUNT, last, "plan: alltoall_init_c, sendcount -1 on the "
                                                    "last rank");
    for (int j = 0; j < P && j < 16; j++) {
        cnt[j] = j == 0 && me == 0 ? -3 : 0;
        dsp[j] = 0;
    }
    rc = tuna_alltoallv_init_c(s, cnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, MPI_COMM_WORLD, NULL,
                               TUNA_PLAN_MEASURE, &pl);
    expect_init_error(rc, &pl, MPI_ERR_COUNT, 0, "plan: alltoallv_init_c, a count -3 on rank 0");
    MPI_Datatype vec, empty;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* 8 bytes, not contiguous */
    MPI_Type_commit(&vec);
    rc = tuna_alltoall_init_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (MPI_Count)INT_MAX / 8 + 1,
                              vec, MPI_COMM_WORLD, NULL, TUNA_PLAN_ESTIMATE, &pl);
    expect_init_error(rc, &pl, MPI_ERR_COUNT, -1, "plan: alltoall_init_c in place, a vector block "
                                                  "beyond 2 GiB");
    MPI_Type_free(&vec);
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    const MPI_Count huge = (MPI_Count)INT_MAX + 5;
    static const char *const rows[] = {"linear", "tuna", "vendor", NULL};
    for (int k = 0; k < 4; k++) {
        tuna_options opt;
        if (rows[k])
            tuna_options_parse(rows[k], TUNA_ALLTOALL, &opt);
        memset(r, 0x5a, sizeof r);
        memcpy(want, r, sizeof r);
        rc = tuna_alltoall_init_c(s, huge, empty, r, huge, empty, MPI_COMM_WORLD,
                                  rows[k] ? &opt : NULL, TUNA_PLAN_ESTIMATE, &pl);
        for (int st = 0; st < 2 && rc == MPI_SUCCESS; st++)
            if ((rc = tuna_start(pl)) == MPI_SUCCESS)
                rc = tuna_wait(pl);
        expect(rc == MPI_SUCCESS && memcmp(r, want, sizeof r) == 0,
               "plan: alltoall_init_c, a count beyond INT_MAX of an empty type",
               rows[k] ? rows[k] : "(NULL)", rc);
        if (pl)
            tuna_plan_free(&pl);
    }
    MPI_Type_free(&empty);
}

/* 3. A block beyond an int count: rank 0 sends 2^31 + 3 bytes to rank 1 (P = 2). The
 * pattern repeats every 256 bytes, so a 4 KiB reference checks it with memcmp. */
static unsigned char huge_byte(MPI_Count i)
{
    return (unsigned char)(i * 13 + 5);
}

static void huge_blocks(const char *const *algs, int nalgs)
{
    const MPI_Count big = (MPI_Count)INT_MAX + 4;
    MPI_Count sc[2] = {1, me == 0 ? big : 1}, rc_[2] = {me == 1 ? big : 1, 1};
    MPI_Aint sd[2] = {0, 16}, rd[2] = {16, 0};
    const size_t slen = 16 + (size_t)sc[1], rlen = 16 + (size_t)rc_[0];
    unsigned char *sbuf = sparse(slen), *rbuf = sparse(rlen + 1), ref[4096];
    if (!sbuf || !rbuf) {
        expect(0, "mapping the huge block", "-", MPI_ERR_NO_MEM);
        return;
    }
    for (int i = 0; i < 4096; i++)
        ref[i] = huge_byte(i);
    sbuf[0] = (unsigned char)(me + 1);
    for (MPI_Count i = 0; i < sc[1]; i += 4096)
        memcpy(sbuf + 16 + i, ref, (size_t)(sc[1] - i < 4096 ? sc[1] - i : 4096));
    for (int k = 0; k < nalgs; k++) {
        tuna_options opt;
        tuna_options_parse(algs[k], TUNA_ALLTOALLV, &opt);
        memset(rbuf, 0, rlen);
        rbuf[rlen] = 0xee;
        int rc = tuna_alltoallv_c(sbuf, sc, sd, MPI_BYTE, rbuf, rc_, rd, MPI_BYTE,
                                  MPI_COMM_WORLD, &opt);
        int good = rc == MPI_SUCCESS && rbuf[rlen] == 0xee;
        /* from 0 at rd[0] = 16, from 1 at rd[1] = 0 */
        if (me == 0)
            good &= rbuf[16] == 1 && rbuf[0] == 2;
        else
            good &= rbuf[0] == huge_byte(0); /* rank 1's block to itself: sbuf[16] */
        for (MPI_Count i = 0; me == 1 && good && i < rc_[0]; i += 4096)
            good &= memcmp(rbuf + 16 + i, ref,
                           (size_t)(rc_[0] - i < 4096 ? rc_[0] - i : 4096)) == 0;
        expect(good, "a block of 2^31 + 3 elements", algs[k], rc);
    }
    munmap(sbuf, slen);
    munmap(rbuf, rlen + 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const bool huge = argc > 1 && strcmp(argv[1], "--huge") == 0;
    int cases = 0;
    if (huge) {
        /* the direct exchange, a store-and-forward one, and the library's (or linear) */
        static const char *const algs[] = {"linear", "tuna:radix=2", "vendor"};
        if (P == 2)
            huge_blocks(algs, 3);
        cases += P == 2 ? 3 : 0;
    } else {
        for (int k = 0; k < tuna_algorithm_count(TUNA_ALLTOALLV); k++) {
            const char *alg = tuna_algorithm_get(TUNA_ALLTOALLV, k)->name;
            ordinary(alg, false);
            ordinary(alg, true);
            far_displacements(alg, false, 0);
            cases += 3;
        }
        /* Plans (tuna_alltoallv_init_c, tuna_alltoall_init_c): forced rows, auto by the model
         * and measured. */
        tuna_stats_enable(1);
        static const char *const rows[] = {"linear", "tuna:radix=2", "coalesced", "bruck",
                                           "vendor", NULL, NULL};
        static const char *const a2a_rows[] = {"linear", "tuna", "coalesced", "vendor", NULL,
                                               NULL};
        for (int k = 0; k < 7; k++) {
            const unsigned flags = k == 6 ? TUNA_PLAN_MEASURE : TUNA_PLAN_ESTIMATE;
            far_displacements(rows[k], true, flags);
            if (rows[k] && strcmp(rows[k], "vendor") == 0)
                check_vendor_ran(TUNA_ALLTOALLV, "plan: the row a vendor alltoallv_init_c plan "
                                                 "ran");
            cases++;
        }
        for (int k = 0; k < 6; k++) {
            const unsigned flags = k == 5 ? TUNA_PLAN_MEASURE : TUNA_PLAN_ESTIMATE;
            alltoall_plan(a2a_rows[k], flags, 3, false);
            alltoall_plan(a2a_rows[k], flags, 0, false);
            alltoall_plan(a2a_rows[k], flags, 2, true);
            cases += 3;
        }
        plan_limits();
        cases += 6;
    }
    if (me == 0)
        printf("test_large_counts: P=%d, %d cases, %d failed\n", P, cases, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
