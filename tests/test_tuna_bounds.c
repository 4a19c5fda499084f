/*
 * TuNA-specific checks that the generic harness (test_alltoallv.c) cannot
 * make:
 *   - the temporary memory TuNA reports (tuna_stats_last()->temp_bytes)
 *     equals the documented bound, recomputed here independently from the
 *     digits of the block indices, for many radices and batch sizes, and the
 *     round count equals K;
 *   - the same for coalesced / staggered when TUNA_RANKS_PER_NODE=Q (Q | P);
 *   - a received block larger than the receiver's recvcount is reported as
 *     MPI_ERR_TRUNCATE on that rank only, nothing is written outside the
 *     receive blocks, nobody hangs, and the next call works.
 * Contiguous types only (packing buffers of derived types are not counted).
 *
 * Usage: test_tuna_bounds     (under mpiexec, any P)
 */
#include "tuna.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int P, me, failures;

static void check(int cond, const char *fmt, const char *what, long a, long b)
{
    int bad = !cond, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        fprintf(stderr, "FAIL P=%d rank=%d %s: ", P, me, what);
        fprintf(stderr, fmt, a, b);
        fprintf(stderr, "\n");
    }
    failures += any;
}

/* Digit x of i in base r. */
static int digit(long i, int r, int x)
{
    while (x-- > 0)
        i /= r;
    return (int)(i % r);
}

/*
 * Documented schedule of TuNA on n ranks: K rounds (x, z) with z*r^x < n;
 * n-(K+1) blocks with two or more non-zero digits get a temporary slot;
 * `staged` = the largest number, over batches of `batch` rounds of one digit,
 * of blocks with non-zero digits both below and above the batch's digit.
 */
static void expected(int n, int r, int batch, long *K, long *slots, long *staged)
{
    *K = *slots = *staged = 0;
    if (n <= 1)
        return;
    if (r > n)
        r = n;
    if (batch > r - 1)
        batch = r - 1;
    int w = 0;
    for (long pw = 1; pw < n; pw *= r)
        w++;
    long single = 0;
    for (long i = 1; i < n; i++) {
        int nz = 0;
        for (int x = 0; x < w; x++)
            nz += digit(i, r, x) != 0;
        single += nz == 1;
    }
    *K = single; /* round (x, z) exists iff z*r^x < n, i.e. iff that one-digit index exists */
    *slots = n - 1 - *K;
    long px = 1;
    for (int x = 0; x < w; x++, px *= r)
        for (int z0 = 1; z0 < r && z0 * px < n; z0 += batch) {
            long cnt = 0;
            for (long i = 1; i < n; i++) {
                int d = digit(i, r, x);
                if (d < z0 || d >= z0 + batch)
                    continue;
                int lower = 0, higher = 0;
                for (int y = 0; y < w; y++)
                    if (digit(i, r, y)) {
                        lower |= y < x;
                        higher |= y > x;
                    }
                cnt += lower && higher;
            }
            if (cnt > *staged)
                *staged = cnt;
        }
}

/* Run one call with counts c(me, j) = 1 + (3*me + 5*j) % S ints (global max known). */
static int run(const char *alg, int S, const tuna_stats **st)
{
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    long stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = 1 + (3 * me + 5 * j) % S;
        rc[j] = 1 + (3 * j + 5 * me) % S;
        sd[j] = (int)stot;
        rd[j] = (int)rtot;
        stot += sc[j];
        rtot += rc[j];
    }
    int *sb = malloc(sizeof(int) * (size_t)(stot + 1)), *rb = malloc(sizeof(int) * (size_t)(rtot + 1));
    for (int j = 0; j < P; j++)
        for (int k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = me * 100000 + j * 100 + k;
    tuna_options opt;
    int err = tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    if (err == MPI_SUCCESS)
        err = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    int ok = err == MPI_SUCCESS;
    for (int j = 0; j < P && ok; j++)
        for (int k = 0; k < rc[j] && ok; k++)
            ok = rb[rd[j] + k] == j * 100000 + me * 100 + k;
    check(ok, "%ld %ld", alg, err, 0);
    *st = tuna_stats_last();
    free(sc);
    free(sb);
    free(rb);
    return ok;
}

/* The largest block of run(): max over (i, j) of 1 + (3i + 5j) % S ints. */
static long max_block_bytes(int S)
{
    long m = 0;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            long c = 1 + (3 * i + 5 * j) % S;
            m = c > m ? c : m;
        }
    return m * (long)sizeof(int);
}

static void memory_flat(void)
{
    const int S = 9;
    long M = max_block_bytes(S);
    int radices[] = {2, 3, 4, 5, 7, P - 1, P, P + 5};
    int batches[] = {1, 2, 3, 1000};
    for (size_t ri = 0; ri < sizeof radices / sizeof radices[0]; ri++)
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
            int r = radices[ri] < 2 ? 2 : radices[ri], b = batches[bi];
            char alg[64], what[160];
            snprintf(alg, sizeof alg, "tuna:radix=%d,block=%d", r, b);
            const tuna_stats *st;
            if (!run(alg, S, &st))
                continue;
            long K, slots, staged;
            expected(P, r, b, &K, &slots, &staged);
            snprintf(what, sizeof what, "%s temp_bytes", alg);
            check((long)st->temp_bytes == (slots + staged) * M, "got %ld, documented %ld", what,
                  (long)st->temp_bytes, (slots + staged) * M);
            if (r * r >= P) /* at most two digits: exactly the paper's (P-(K+1)) blocks */
                check(staged == 0, "staged %ld, want %ld", what, staged, 0);
            snprintf(what, sizeof what, "%s rounds", alg);
            check(st->rounds == K, "got %ld, want K = %ld", what, st->rounds, K);
        }
    /* The default radix ceil(sqrt P) needs exactly P-(K+1) blocks. */
    const tuna_stats *st;
    if (run("tuna", S, &st)) {
        int r = 2;
        while (r * r < P)
            r++;
        long K, slots, staged;
        expected(P, r, P, &K, &slots, &staged);
        check((long)st->temp_bytes == (P - (K + 1)) * M && (P > 1 || st->temp_bytes == 0),
              "got %ld, want %ld", "tuna default temp_bytes", (long)st->temp_bytes,
              P > 1 ? (P - (K + 1)) * M : 0);
    }
}

/* Hierarchical: (Q-(K_Q+1) + H_Q) * N * M intra-node + (N-1)(Q-1) * M staging. */
static void memory_hierarchical(void)
{
    const char *env = getenv("TUNA_RANKS_PER_NODE");
    char *end;
    long Q = env ? strtol(env, &end, 10) : 0;
    if (!env || *end != '\0' || Q < 1 || P % Q != 0)
        return;
    long N = P / Q;
    const int S = 7;
    long M = max_block_bytes(S);
    const char *names[] = {"coalesced", "staggered"};
    int radices[] = {2, 3, 4, (int)Q};
    for (int a = 0; a < 2; a++)
        for (size_t ri = 0; ri < sizeof radices / sizeof radices[0]; ri++) {
            char alg[64], what[160];
            snprintf(alg, sizeof alg, "%s:radix=%d,block=2", names[a], radices[ri]);
            const tuna_stats *st;
            if (!run(alg, S, &st))
                continue;
            int r = radices[ri] > Q ? (int)Q : radices[ri];
            long K, slots, staged;
            expected((int)Q, r < 2 ? 2 : r, (int)Q, &K, &slots, &staged);
            long want = (slots + staged) * N * M + (N - 1) * (Q - 1) * M;
            snprintf(what, sizeof what, "%s (Q=%ld) temp_bytes", alg, Q);
            check((long)st->temp_bytes == want, "got %ld, documented %ld", what,
                  (long)st->temp_bytes, want);
            long inter = a == 0 ? N - 1 : (N - 1) * Q;
            snprintf(what, sizeof what, "%s (Q=%ld) rounds", alg, Q);
            check(st->rounds == K + inter, "got %ld, want %ld", what, st->rounds, K + inter);
        }
}

/* Rank 0 sends 3 ints more to the last rank than the last rank expects. */
static void truncation(const char *alg)
{
    if (P < 2)
        return;
    int *c = malloc(sizeof(int) * 4 * (size_t)P), *sc = c, *sd = c + P, *rc = c + 2 * P,
        *rd = c + 3 * P;
    for (int j = 0; j < P; j++) {
        sc[j] = rc[j] = 4;
        sd[j] = 8 * j;
        rd[j] = 8 * j; /* gaps of 4 ints after every receive block */
    }
    if (me == 0)
        sc[P - 1] = 7;
    int *sb = malloc(sizeof(int) * 8 * (size_t)P), *rb = malloc(sizeof(int) * 8 * (size_t)P);
    for (int k = 0; k < 8 * P; k++) {
        sb[k] = me * 1000 + k;
        rb[k] = -1;
    }
    tuna_options opt;
    tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    int err = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    char what[160];
    snprintf(what, sizeof what, "%s: truncation reported on the receiver only", alg);
    check(me == P - 1 ? err == MPI_ERR_TRUNCATE : err == MPI_SUCCESS, "rc %ld (%ld)", what, err,
          MPI_ERR_TRUNCATE);
    int gaps = 1;
    for (int j = 0; j < P; j++)
        for (int k = 4; k < 8; k++)
            gaps &= rb[8 * j + k] == -1;
    snprintf(what, sizeof what, "%s: nothing written outside the receive blocks", alg);
    check(gaps, "%ld %ld", what, 0, 0);
    /* The next, correct, call must work (no message of the failed call left over). */
    if (me == 0)
        sc[P - 1] = 4;
    err = tuna_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &opt);
    int ok = err == MPI_SUCCESS;
    for (int j = 0; j < P && ok; j++)
        for (int k = 0; k < 4; k++)
            ok &= rb[8 * j + k] == j * 1000 + 8 * me + k;
    snprintf(what, sizeof what, "%s: a correct call after the truncation", alg);
    check(ok, "rc %ld %ld", what, err, 0);
    free(c);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    tuna_stats_enable(1);
    memory_flat();
    memory_hierarchical();
    const char *trunc_algs[] = {"tuna:radix=2", "tuna", "tuna:radix=P", "coalesced:radix=2",
                                "staggered:radix=2,block=1"};
    for (size_t i = 0; i < sizeof trunc_algs / sizeof trunc_algs[0]; i++)
        truncation(trunc_algs[i]);
    if (me == 0)
        printf("test_tuna_bounds: P=%d %s\n", P, failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures ? 1 : 0;
}
