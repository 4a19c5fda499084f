/*
 * tuna_alltoallv_c (MPI_Alltoallv_c's large-count form) for every algorithm row:
 *  1. ordinary inputs through the large-count API (MPI_Count counts, MPI_Aint displacements
 *     in reverse order with gaps, empty blocks, a receive type with holes, MPI_IN_PLACE),
 *     compared byte for byte with PMPI_Alltoallv on sentinel-filled buffers;
 *  2. displacements beyond INT_MAX elements: blocks placed past 2^31 bytes of MPI_BYTE
 *     buffers (sparse mappings: untouched pages cost nothing), checked against a formula;
 *  3. with --huge (P = 2): one block of 2^31 + 3 elements, beyond an int count, from rank 0
 *     to rank 1, for linear, tuna and vendor (4.3 GB of memory and more in all).
 * Every rank checks its own result; failures are summed over the ranks.
 *
 * Usage: test_large_counts [--huge]   (under mpiexec, any P)
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "support/test_expect.h"
#include "tuna.h"

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

static unsigned char byte_of(int src, int dst, MPI_Count i)
{
    return (unsigned char)(src * 31 + dst * 7 + (int)(i % 251));
}

static void *sparse(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* 2. Displacements beyond INT_MAX elements (MPI_BYTE): blocks start past 2^31 bytes. */
static void far_displacements(const char *alg)
{
    tuna_options opt;
    tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    const MPI_Aint off = (MPI_Aint)INT_MAX + 4097, B = 64;
    const size_t len = (size_t)off + (size_t)(P + 1) * (size_t)B;
    unsigned char *sbuf = sparse(len), *rbuf = sparse(len);
    if (!sbuf || !rbuf) {
        expect(0, "mapping 2 x 2 GiB of sparse memory", alg, MPI_ERR_NO_MEM);
        return;
    }
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *disp = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int k = 0; k < P; k++) {
        cnt[k] = 1 + (me + 2 * k) % (int)B;            /* to k */
        cnt[P + k] = 1 + (k + 2 * me) % (int)B;        /* from k */
        disp[k] = disp[P + k] = off + (MPI_Aint)k * B; /* > INT_MAX elements */
        for (MPI_Count i = 0; i < cnt[k]; i++)
            sbuf[disp[k] + i] = byte_of(me, k, i);
    }
    memset(rbuf + off - 64, 0xee, (size_t)(P + 1) * (size_t)B + 64);
    int rc = tuna_alltoallv_c(sbuf, cnt, disp, MPI_BYTE, rbuf, cnt + P, disp + P, MPI_BYTE,
                              MPI_COMM_WORLD, &opt);
    int good = rc == MPI_SUCCESS;
    for (int k = 0; k < P && good; k++)
        for (MPI_Count i = 0; i < B; i++)
            good &= rbuf[disp[P + k] + i] == (i < cnt[P + k] ? byte_of(k, me, i) : 0xee);
    for (int i = 0; i < 64 && good; i++) /* nothing written before the first block */
        good &= rbuf[off - 64 + i] == 0xee;
    expect(good, "displacements beyond INT_MAX elements", alg, rc);
    free(cnt);
    free(disp);
    munmap(sbuf, len);
    munmap(rbuf, len);
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
            far_displacements(alg);
            cases += 3;
        }
    }
    if (me == 0)
        printf("test_large_counts: P=%d, %d cases, %d failed\n", P, cases, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
