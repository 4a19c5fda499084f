/*
 * The two-rank path of spreadout, pairwise and xor (src/alltoallv/front.c,
 * run_two_rank_exchange): at P = 2 with plain arguments they run the own block's memcpy and
 * one MPI_Sendrecv straight from the arguments; anything else takes the full path. Each rank
 * decides alone, so both mixes are checked: both ranks on the short path, one on each (the
 * other has statistics on, a NULL buffer with empty blocks, or types it has not used
 * before), with empty sides, gaps between blocks and different send and receive types.
 * Every result is compared byte for byte with PMPI_Alltoallv's on sentinel-filled buffers;
 * a self block larger than its receive block is MPI_ERR_TRUNCATE. Any P runs (the short
 * path only exists at 2).
 */
#include "support/test_expect.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0x5A
#define CELLS 64 /* ints per block slot: blocks of up to 16 ints, gaps between them */

/* The block rank `src` sends to `dst` in pattern k: some are empty on purpose. */
static int block_ints(int k, int src, int dst)
{
    switch (k) {
    case 0: return 1 + (src * 7 + dst * 3) % 16;          /* all non-empty */
    case 1: return src == 0 && dst != src ? 0 : 5 + dst;  /* rank 0 sends the peer nothing */
    case 2: return src == dst ? 0 : 3 + src;              /* empty own blocks */
    case 3: return 0;                                     /* nothing at all */
    default: return (src + dst + k) % 3 == 0 ? 0 : 16;    /* a mix */
    }
}

typedef struct mix {
    const char *name;
    int stats_rank;   /* this rank has statistics on: full path (-1: none) */
    int null_rank;    /* this rank passes NULL buffers when it has nothing there (-1: none) */
    int bytes_rank;   /* this rank receives as MPI_BYTE instead of MPI_INT (-1: none) */
} mix;

/* One call of `alg` in pattern k under mix m, checked against PMPI_Alltoallv. */
static void check_call(const char *alg, const tuna_options *opt, int k, const mix *m)
{
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc_ = sc + 2 * P,
        *rd = sc + 3 * P;
    int stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = block_ints(k, me, j);
        rc_[j] = block_ints(k, j, me);
        sd[j] = (P - 1 - j) * CELLS + 2; /* reversed order, with gaps */
        rd[j] = j * CELLS + 1;
        stot += sc[j], rtot += rc_[j];
    }
    const size_t len = sizeof(int) * (size_t)CELLS * (size_t)(P + 1);
    int *sbuf = malloc(len);
    char *got = malloc(len), *want = malloc(len);
    for (size_t i = 0; i < len / sizeof(int); i++)
        sbuf[i] = (int)(me * 1000003 + (int)i * 31 + k);
    memset(got, SENTINEL, len), memset(want, SENTINEL, len);
    const bool as_bytes = m->bytes_rank == me;
    int *rcount = rc_, *rdisp = rd;
    int *rbytes = malloc(sizeof(int) * 2 * (size_t)P);
    if (as_bytes) { /* the same signature as MPI_BYTE: 4 bytes per int */
        for (int j = 0; j < P; j++)
            rbytes[j] = 4 * rc_[j], rbytes[P + j] = 4 * rd[j];
        rcount = rbytes, rdisp = rbytes + P;
    }
    const MPI_Datatype rtype = as_bytes ? MPI_BYTE : MPI_INT;
    const bool null_here = m->null_rank == me;
    const void *s = null_here && stot == 0 ? NULL : sbuf;
    void *r = null_here && rtot == 0 ? NULL : got;
    PMPI_Alltoallv(sbuf, sc, sd, MPI_INT, want, rcount, rdisp, rtype, MPI_COMM_WORLD);
    tuna_stats_enable(m->stats_rank == me);
    int rc = tuna_alltoallv(s, sc, sd, MPI_INT, r, rcount, rdisp, rtype, MPI_COMM_WORLD, opt);
    tuna_stats_enable(0);
    char what[160];
    snprintf(what, sizeof what, "pattern %d, %s: result equals PMPI_Alltoallv's", k, m->name);
    expect(rc == MPI_SUCCESS && memcmp(got, want, len) == 0, what, alg, rc);
    free(rbytes), free(sbuf), free(got), free(want), free(sc);
}

/* Both ranks send themselves more than they receive: MPI_ERR_TRUNCATE on each, nothing
 * written, and the next call still works. */
static void check_truncation(const char *alg, const tuna_options *opt)
{
    int sc[16], sd[16], rc_[16], rd[16], sbuf[64], rbuf[64];
    for (int j = 0; j < P && j < 16; j++)
        sc[j] = rc_[j] = 1, sd[j] = rd[j] = j;
    sc[me] = 2, rc_[me] = 1;
    for (int i = 0; i < 64; i++)
        sbuf[i] = i, rbuf[i] = -1;
    int rc = tuna_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, MPI_COMM_WORLD, opt);
    int untouched = 1;
    for (int i = 0; i < 64; i++)
        untouched &= rbuf[i] == -1;
    expect(rc == MPI_ERR_TRUNCATE && untouched, "own block larger than its receive block",
           alg, rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (P > 16) {
        if (me == 0)
            fprintf(stderr, "test_two_ranks: P <= 16\n");
        MPI_Finalize();
        return 2;
    }
    static const char *const algs[] = {"spreadout", "pairwise", "xor"};
    static const mix mixes[] = {
        {"both ranks short", -1, -1, -1},
        {"rank 1 with statistics", 1, -1, -1},
        {"rank 0 with statistics", 0, -1, -1},
        {"rank 0 NULL where empty", -1, 0, -1},
        {"rank 1 receives bytes", -1, -1, 1},
        {"rank 0 receives bytes", -1, -1, 0},
        {"both ranks short again", -1, -1, -1},
    };
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        tuna_options opt;
        int rc = tuna_options_parse(algs[a], TUNA_ALLTOALLV, &opt);
        expect(rc == MPI_SUCCESS, "options parse", algs[a], rc);
        if (rc != MPI_SUCCESS)
            continue;
        for (int rep = 0; rep < 2; rep++) /* the second pass finds the types remembered */
            for (size_t m = 0; m < sizeof mixes / sizeof mixes[0]; m++)
                for (int k = 0; k < 6; k++)
                    check_call(algs[a], &opt, k, &mixes[m]);
        check_truncation(algs[a], &opt);
        check_call(algs[a], &opt, 0, &mixes[0]);
    }
    if (me == 0)
        printf("test_two_ranks P=%d: %s\n", P, failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures != 0;
}
