/*
 * TuNA-specific checks that the generic harness (test_alltoallv.c) cannot
 * make:
 *   - the temporary memory TuNA, coalesced / staggered (TUNA_RANKS_PER_NODE=Q,
 *     Q | P) and twophase-bruck report (tuna_stats_last()->temp_bytes) obeys
 *     the documented bound, recomputed here independently: a model walks every
 *     block through its hops and finds, per rank, the largest block it holds
 *     between hops (m), the largest total it stages in one batch (S), the bytes
 *     it forwards to other nodes (L) and, for twophase-bruck, its largest round.
 *     TuNA: slots*m + S <= temp <= 2*slots*m + S (+ L) on a fresh communicator
 *     (the old arena lives on while a growth waits for sends from it), and
 *     exactly (slots + H)*b (+ (N-1)(Q-1)*b) for uniform blocks of b bytes;
 *     twophase-bruck exactly (P-K-1)*m + largest round out + in + 16*floor(P/2) + 2.
 *     The round count equals K;
 *   - one huge block among tiny or empty ones, sent over the most hops: exact
 *     data, nothing written outside the receive blocks, and ranks that never
 *     hold it report small temporary memory (no global maximum is used);
 *   - small, huge, small, small calls on one communicator: the kept buffers
 *     grow, are reused, and are trimmed back (one call late);
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
static long Qenv; /* TUNA_RANKS_PER_NODE when it is a plain divisor of P, else 0 */

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

static int ndigits(int n, int r)
{
    int w = 0;
    for (long pw = 1; pw < n; pw *= r)
        w++;
    return w;
}

static int clamp_radix(int r, int n)
{
    r = r < 2 ? 2 : r;
    return n >= 2 && r > n ? n : r;
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
    r = clamp_radix(r, n);
    if (batch > r - 1)
        batch = r - 1;
    int w = ndigits(n, r);
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

/*
 * Walk every block of a TuNA exchange over n group members (blk[s*n+d] bytes
 * from s to d) through its hops: m[p] = the largest block member p holds in a
 * temporary slot (it arrives with non-zero digits left above), S[p] = the
 * largest total p stages in one batch (blocks it forwards with non-zero
 * digits both below and above the batch's digit).
 */
static void engine_model(int n, int radix, int batch, const long *blk, long *m, long *S)
{
    for (int p = 0; p < n; p++)
        m[p] = S[p] = 0;
    if (n <= 1)
        return;
    int r = clamp_radix(radix, n), b = batch < 1 ? 1 : batch > r - 1 ? r - 1 : batch;
    int w = ndigits(n, r);
    long *acc = calloc((size_t)n * (size_t)w * (size_t)r, sizeof(long)); /* [p][x][batch] */
    for (int s = 0; s < n; s++)
        for (long i = 1; i < n; i++) {
            long bytes = blk[s * n + (s + i) % n], px = 1;
            for (int x = 0; x < w; x++, px *= r) {
                int dz = digit(i, r, x);
                if (dz == 0)
                    continue;
                long lower = i % px, higher = i / (px * r);
                int from = (int)((s + lower) % n), to = (int)((s + i % (px * r)) % n);
                if (lower && higher)
                    acc[((size_t)from * w + x) * r + (dz - 1) / b] += bytes;
                if (higher && bytes > m[to])
                    m[to] = bytes;
            }
        }
    for (int p = 0; p < n; p++)
        for (int k = 0; k < w * r; k++)
            if (acc[(size_t)p * w * r + k] > S[p])
                S[p] = acc[(size_t)p * w * r + k];
    free(acc);
}

/* What a TuNA-family call should report on this rank, as [lo, hi]. */
typedef struct bound {
    long lo, hi;
    long arena, staging, land; /* this call's needs: slots*m, S, L (for the next call's lag) */
    long held;                 /* largest block this rank holds or stages */
} bound;

/*
 * Flat TuNA (Q == 0) or hierarchical TuNA with Q consecutive ranks per node,
 * intra-node radix r: the bound on this rank for sizes sz (sz[s*P+d] bytes),
 * given the buffers the previous engine call on the communicator kept (prev,
 * NULL for a fresh communicator).
 */
static bound tuna_bound(int radix, int batch, long Q, const long *sz, const bound *prev)
{
    int n = Q ? (int)Q : P, node = Q ? me / (int)Q : 0, g = Q ? me % (int)Q : me;
    long N = Q ? P / Q : 1;
    long *blk = calloc((size_t)n * n, sizeof(long)), *m = calloc((size_t)n, sizeof(long)),
         *S = calloc((size_t)n, sizeof(long)), L = 0;
    for (int l = 0; l < n; l++)
        for (int j = 0; j < n; j++) {
            if (!Q) {
                blk[l * n + j] = sz[l * P + j];
                continue;
            }
            for (long k = 0; k < N; k++) { /* the block l -> j carries one sub-block per node */
                long bytes = sz[(node * Q + l) * P + k * Q + j];
                blk[l * n + j] += bytes;
                if (j == g && l != g && k != node)
                    L += bytes; /* lands here, forwarded to node k later */
            }
        }
    long K, slots, staged;
    expected(n, radix, Q ? n : batch, &K, &slots, &staged);
    engine_model(n, radix, Q ? n : batch, blk, m, S);
    bound bd = {0};
    bd.arena = slots * m[g];
    bd.staging = S[g];
    bd.land = L;
    bd.held = m[g] > S[g] ? m[g] : S[g];
    long arena = bd.arena, staging = bd.staging, land = bd.land;
    if (prev) { /* kept buffers are trimmed one call late */
        arena = prev->arena > arena ? prev->arena : arena;
        staging = prev->staging > staging ? prev->staging : staging;
        land = prev->land > land ? prev->land : land;
    }
    bd.lo = arena + staging + land;
    bd.hi = 2 * arena + staging + land;
    free(blk);
    free(m);
    free(S);
    return bd;
}

/* twophase-bruck on this rank: (P-K-1)*m + largest round out + in + 16*floor(P/2) + 2
 * (the sizes out and in, each with the metadata's header byte: src/alltoallv/sizes_wire.h). */
static long twophase_expected(const long *sz, long *held)
{
    int K = 0;
    while ((1L << K) < P)
        K++;
    long m = 0, *out = calloc((size_t)K + 1, sizeof(long));
    long *in = calloc((size_t)K + 1, sizeof(long));
    for (int s = 0; s < P; s++)
        for (long i = 1; i < P; i++) {
            long bytes = sz[s * P + (s + i) % P];
            for (int k = 0; k < K; k++) {
                if (!(i >> k & 1))
                    continue;
                int from = (int)((s + i % (1L << k)) % P), to = (int)((s + i % (2L << k)) % P);
                if (from == me)
                    out[k] += bytes;
                if (to == me) {
                    in[k] += bytes;
                    if ((i >> (k + 1)) && bytes > m)
                        m = bytes;
                }
            }
        }
    long mo = 0, mi = 0;
    for (int k = 0; k < K; k++) {
        mo = out[k] > mo ? out[k] : mo;
        mi = in[k] > mi ? in[k] : mi;
    }
    free(out);
    free(in);
    *held = m;
    return P == 1 ? 0 : (P - K - 1) * m + mo + mi + 16L * (P / 2) + 2;
}

/* Byte `off` of the block from s to d. */
static unsigned char pattern(int s, int d, long off)
{
    return (unsigned char)(s * 37 + d * 101 + off * 13 + (off >> 9));
}

#define GAP 3
#define SENTINEL 0xA5

/*
 * One call on comm with block sizes sz (bytes, MPI_BYTE), receive blocks
 * separated by GAP sentinel bytes: checks every received byte and that the
 * gaps are untouched. Returns this call's stats.
 */
static tuna_stats call(const char *alg, MPI_Comm comm, const long *sz, const char *what)
{
    int *c = malloc(sizeof(int) * 4 * (size_t)P), *sc = c, *sd = c + P, *rc = c + 2 * P,
        *rd = c + 3 * P;
    long stot = 0, rtot = GAP;
    for (int j = 0; j < P; j++) {
        sc[j] = (int)sz[me * P + j];
        rc[j] = (int)sz[j * P + me];
        sd[j] = (int)stot;
        rd[j] = (int)rtot;
        stot += sc[j];
        rtot += rc[j] + GAP;
    }
    unsigned char *sb = malloc((size_t)stot + 1), *rb = malloc((size_t)rtot);
    for (int j = 0; j < P; j++)
        for (long k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = pattern(me, j, k);
    memset(rb, SENTINEL, (size_t)rtot);
    tuna_options opt;
    int err = tuna_options_parse(alg, TUNA_ALLTOALLV, &opt);
    if (err == MPI_SUCCESS)
        err = tuna_alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, comm, &opt);
    tuna_stats st = *tuna_stats_last();
    long bad = err == MPI_SUCCESS ? -1 : -2;
    for (int j = 0; j < P && bad == -1; j++) {
        for (long k = 0; k < rc[j] && bad == -1; k++)
            if (rb[rd[j] + k] != pattern(j, me, k))
                bad = rd[j] + k;
        for (long k = rd[j] - GAP; k < rd[j] && bad == -1; k++)
            if (rb[k] != SENTINEL)
                bad = k;
    }
    for (long k = rtot - GAP; k < rtot && bad == -1; k++)
        if (rb[k] != SENTINEL)
            bad = k;
    char msg[200];
    snprintf(msg, sizeof msg, "%s: %s data", alg, what);
    check(bad == -1, "wrong byte at offset %ld (rc %ld)", msg, bad, err);
    free(c);
    free(sb);
    free(rb);
    return st;
}

/* A fresh communicator: no buffers kept from earlier calls. */
static MPI_Comm fresh(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    return c;
}

static long *sizes_uniform(long b)
{
    long *sz = malloc(sizeof(long) * (size_t)P * P);
    for (int i = 0; i < P * P; i++)
        sz[i] = b;
    return sz;
}

/* Non-uniform: 4*(1 + (3s + 5d) % S) bytes (the old int pattern). */
static long *sizes_mixed(int S)
{
    long *sz = malloc(sizeof(long) * (size_t)P * P);
    for (int s = 0; s < P; s++)
        for (int d = 0; d < P; d++)
            sz[s * P + d] = 4 * (1 + (3 * s + 5 * d) % S);
    return sz;
}

/* Tiny (0..4 bytes, about a fifth empty) blocks and one of `big` bytes from 0 to dst. */
static long *sizes_one_big(int dst, long big)
{
    long *sz = malloc(sizeof(long) * (size_t)P * P);
    for (int s = 0; s < P; s++)
        for (int d = 0; d < P; d++)
            sz[s * P + d] = (s * 7 + d * 3) % 5;
    sz[dst] = big;
    return sz;
}

/* Distance in [1, n) with the most non-zero base-r digits (the largest such): most hops. */
static int farthest(int n, int r)
{
    int best = n > 1 ? n - 1 : 0, bestnz = -1;
    r = clamp_radix(r, n);
    for (int i = n - 1; i >= 1; i--) {
        int nz = 0;
        for (long v = i; v; v /= r)
            nz += v % r != 0;
        if (nz > bestnz) {
            bestnz = nz;
            best = i;
        }
    }
    return best;
}

static void check_bound(const char *alg, const char *what, const tuna_stats *st, const bound *b)
{
    char msg[400]; /* alg and what are at most 160 bytes each */
    snprintf(msg, sizeof msg, "%s: %s temp_bytes >= documented lower bound", alg, what);
    check((long)st->temp_bytes >= b->lo, "got %ld, want >= %ld", msg, (long)st->temp_bytes,
          b->lo);
    snprintf(msg, sizeof msg, "%s: %s temp_bytes <= documented bound", alg, what);
    check((long)st->temp_bytes <= b->hi, "got %ld, want <= %ld", msg, (long)st->temp_bytes,
          b->hi);
}

static void memory_flat(void)
{
    long *mixed = sizes_mixed(9), *uni = sizes_uniform(24), *zero = sizes_uniform(0);
    int radices[] = {2, 3, 4, 5, 7, P - 1, P, P + 5};
    int batches[] = {1, 2, 3, 1000};
    for (size_t ri = 0; ri < sizeof radices / sizeof radices[0]; ri++)
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
            int r = radices[ri] < 2 ? 2 : radices[ri], b = batches[bi];
            char alg[64], what[160];
            snprintf(alg, sizeof alg, "tuna:radix=%d,block=%d", r, b);
            long K, slots, staged;
            expected(P, r, b, &K, &slots, &staged);
            MPI_Comm c = fresh();
            tuna_stats st = call(alg, c, mixed, "mixed sizes");
            bound bd = tuna_bound(r, b, 0, mixed, NULL);
            check_bound(alg, "mixed sizes", &st, &bd);
            snprintf(what, sizeof what, "%s rounds", alg);
            check(st.rounds == K, "got %ld, want K = %ld", what, st.rounds, K);
            MPI_Comm_free(&c);
            /* Uniform blocks: exactly the paper's slots plus the staging, of the block size. */
            c = fresh();
            st = call(alg, c, uni, "uniform");
            snprintf(what, sizeof what, "%s uniform temp_bytes", alg);
            check((long)st.temp_bytes == (slots + staged) * 24, "got %ld, documented %ld", what,
                  (long)st.temp_bytes, (slots + staged) * 24);
            if (r * r >= P) /* at most two digits: exactly the paper's (P-(K+1)) blocks */
                check(staged == 0, "staged %ld, want %ld", what, staged, 0);
            MPI_Comm_free(&c);
            /* All blocks empty: the rounds still run (no global knowledge), nothing is held. */
            c = fresh();
            st = call(alg, c, zero, "empty");
            snprintf(what, sizeof what, "%s empty blocks: temp_bytes, rounds", alg);
            check(st.temp_bytes == 0 && st.rounds == K, "temp %ld, rounds %ld", what,
                  (long)st.temp_bytes, st.rounds);
            MPI_Comm_free(&c);
        }
    /* The default radix ceil(sqrt P) needs exactly P-(K+1) blocks. */
    int r = 2;
    while (r * r < P)
        r++;
    long K, slots, staged;
    expected(P, r, P, &K, &slots, &staged);
    MPI_Comm c = fresh();
    tuna_stats st = call("tuna", c, uni, "uniform");
    check((long)st.temp_bytes == (P - (K + 1)) * 24 && (P > 1 || st.temp_bytes == 0),
          "got %ld, want %ld", "tuna default temp_bytes", (long)st.temp_bytes,
          P > 1 ? (P - (K + 1)) * 24 : 0);
    MPI_Comm_free(&c);
    free(mixed);
    free(uni);
    free(zero);
}

/* Hierarchical: (Q-(K_Q+1) + H_Q) * N * b intra-node + (N-1)(Q-1) * b landed, uniform. */
static void memory_hierarchical(void)
{
    long Q = Qenv;
    if (!Q)
        return;
    long N = P / Q;
    long *mixed = sizes_mixed(7), *uni = sizes_uniform(20);
    const char *names[] = {"coalesced", "staggered"};
    int radices[] = {2, 3, 4, (int)Q};
    for (int a = 0; a < 2; a++)
        for (size_t ri = 0; ri < sizeof radices / sizeof radices[0]; ri++) {
            char alg[64], what[160];
            snprintf(alg, sizeof alg, "%s:radix=%d,block=2", names[a], radices[ri]);
            int r = radices[ri] > Q ? (int)Q : radices[ri];
            long K, slots, staged;
            expected((int)Q, r < 2 ? 2 : r, (int)Q, &K, &slots, &staged);
            MPI_Comm c = fresh();
            tuna_stats st = call(alg, c, mixed, "mixed sizes");
            bound bd = tuna_bound(radices[ri], (int)Q, Q, mixed, NULL);
            snprintf(what, sizeof what, "(Q=%ld) mixed sizes", Q);
            check_bound(alg, what, &st, &bd);
            long inter = a == 0 ? N - 1 : (N - 1) * Q;
            snprintf(what, sizeof what, "%s (Q=%ld) rounds", alg, Q);
            check(st.rounds == K + inter, "got %ld, want %ld", what, st.rounds, K + inter);
            MPI_Comm_free(&c);
            c = fresh();
            st = call(alg, c, uni, "uniform");
            long want = (slots + staged) * N * 20 + (N - 1) * (Q - 1) * 20;
            snprintf(what, sizeof what, "%s (Q=%ld) uniform temp_bytes", alg, Q);
            check((long)st.temp_bytes == want, "got %ld, documented %ld", what,
                  (long)st.temp_bytes, want);
            MPI_Comm_free(&c);
        }
    free(mixed);
    free(uni);
}

static void memory_twophase(void)
{
    long *mixed = sizes_mixed(11), *uni = sizes_uniform(16), *zero = sizes_uniform(0);
    long *all[] = {mixed, uni, zero};
    const char *what[] = {"mixed sizes", "uniform", "empty"};
    for (int t = 0; t < 3; t++) {
        long held;
        long want = twophase_expected(all[t], &held);
        tuna_stats st = call("twophase-bruck", MPI_COMM_WORLD, all[t], what[t]);
        char msg[160];
        snprintf(msg, sizeof msg, "twophase-bruck %s temp_bytes", what[t]);
        check((long)st.temp_bytes == want, "got %ld, documented %ld", msg, (long)st.temp_bytes,
              want);
    }
    free(mixed);
    free(uni);
    free(zero);
}

/*
 * One huge block (just over 1 MiB) from rank 0 over the most hops, tiny or
 * empty blocks elsewhere: the data is exact and the memory follows the blocks
 * each rank holds, not a global maximum.
 */
#define BIG ((1L << 20) + 3)

static void one_big(void)
{
    if (P < 2)
        return;
    char alg[64], what[160];
    /* Flat TuNA, radices 2, 3 and P: the big block travels through the most slots. */
    int radices[] = {2, 3, P};
    for (size_t ri = 0; ri < sizeof radices / sizeof radices[0]; ri++) {
        int r = radices[ri];
        long *sz = sizes_one_big(farthest(P, r), BIG);
        snprintf(alg, sizeof alg, "tuna:radix=%d", r);
        MPI_Comm c = fresh();
        tuna_stats st = call(alg, c, sz, "one big block");
        bound bd = tuna_bound(r, P, 0, sz, NULL);
        check_bound(alg, "one big block", &st, &bd);
        snprintf(what, sizeof what, "%s: a rank that never holds the big block stays small", alg);
        check(bd.held >= BIG || (long)st.temp_bytes < BIG, "temp %ld (held %ld)", what,
              (long)st.temp_bytes, bd.held);
        MPI_Comm_free(&c);
        free(sz);
    }
    /* Hierarchical: to the local rank with the most intra-node hops, on the last node. */
    if (Qenv) {
        long Q = Qenv, N = P / Q;
        const char *names[] = {"coalesced", "staggered"};
        int qr[] = {2, 3, (int)Q};
        for (int a = 0; a < 2; a++)
            for (size_t ri = 0; ri < sizeof qr / sizeof qr[0]; ri++) {
                int r = qr[ri];
                int dst = (int)((N - 1) * Q + (Q > 1 ? farthest((int)Q, r) : 0));
                long *sz = sizes_one_big(dst, BIG);
                snprintf(alg, sizeof alg, "%s:radix=%d,block=2", names[a], r);
                MPI_Comm c = fresh();
                tuna_stats st = call(alg, c, sz, "one big block");
                bound bd = tuna_bound(r, (int)Q, Q, sz, NULL);
                snprintf(what, sizeof what, "(Q=%ld) one big block", Q);
                check_bound(alg, what, &st, &bd);
                snprintf(what, sizeof what, "%s (Q=%ld): a rank that never holds the big block "
                         "stays small", alg, Q);
                check(bd.held >= BIG || bd.land >= BIG || (long)st.temp_bytes < BIG,
                      "temp %ld (held %ld)", what, (long)st.temp_bytes, bd.held);
                MPI_Comm_free(&c);
                free(sz);
            }
    }
    /* twophase-bruck: the distance with the most set bits. */
    long *sz = sizes_one_big(farthest(P, 2), BIG);
    long held;
    long want = twophase_expected(sz, &held);
    tuna_stats st = call("twophase-bruck", MPI_COMM_WORLD, sz, "one big block");
    check((long)st.temp_bytes == want, "got %ld, documented %ld",
          "twophase-bruck one big block temp_bytes", (long)st.temp_bytes, want);
    /* Its round buffers carry the big block on the ranks it passes; the others stay small. */
    int passes = me == 0; /* the source packs it */
    for (int k = 0; (1L << k) < P; k++)
        passes |= me == (int)(farthest(P, 2) % (2L << k)); /* rank 0 + distance so far */
    check(passes || held >= BIG || (long)st.temp_bytes < BIG, "temp %ld (held %ld)",
          "twophase-bruck: a rank the big block never reaches stays small", (long)st.temp_bytes,
          held);
    free(sz);
}

/*
 * Small, huge, small, small on one communicator: the kept buffers grow for the
 * huge call, the next call starts with them (and counts them), the one after
 * is back to small.
 */
static void growth_and_reuse(void)
{
    if (P < 2)
        return;
    long *small = sizes_mixed(5);
    char alg[64], what[160];
    static const struct {
        const char *alg;
        int radix, batch, hier;
    } runs[] = {{"tuna:radix=2,block=1", 2, 1, 0},
                {"tuna:radix=3", 3, 1000, 0},
                {"coalesced:radix=2", 2, 0, 1},
                {"staggered:radix=3,block=1", 3, 0, 1}};
    for (size_t a = 0; a < sizeof runs / sizeof runs[0]; a++) {
        if (runs[a].hier && !Qenv)
            continue;
        long Q = runs[a].hier ? Qenv : 0;
        int r = runs[a].radix;
        int dst = Q ? (int)((P / Q - 1) * Q + (Q > 1 ? farthest((int)Q, r) : 0))
                    : farthest(P, r);
        long *huge = sizes_one_big(dst, BIG);
        const long *seq[] = {small, huge, small, small};
        const char *names[] = {"small (1st)", "huge (2nd)", "small (3rd)", "small (4th)"};
        snprintf(alg, sizeof alg, "%s", runs[a].alg);
        MPI_Comm c = fresh();
        bound prev = {0};
        for (int t = 0; t < 4; t++) {
            tuna_stats st = call(alg, c, seq[t], names[t]);
            bound bd = tuna_bound(r, runs[a].batch, Q, seq[t], t ? &prev : NULL);
            check_bound(alg, names[t], &st, &bd);
            if (t == 3) {
                snprintf(what, sizeof what, "%s: the kept buffers shrink back after a huge call",
                         alg);
                check((long)st.temp_bytes < BIG, "temp %ld, want < %ld", what,
                      (long)st.temp_bytes, BIG);
            }
            prev = bd;
        }
        MPI_Comm_free(&c);
        free(huge);
    }
    /* twophase-bruck keeps nothing: every call is exactly its own bound. */
    long *huge = sizes_one_big(farthest(P, 2), BIG);
    const long *seq[] = {small, huge, small};
    for (int t = 0; t < 3; t++) {
        long held;
        long want = twophase_expected(seq[t], &held);
        tuna_stats st = call("twophase-bruck", MPI_COMM_WORLD, seq[t], "sequence");
        snprintf(what, sizeof what, "twophase-bruck call %d of small, huge, small temp_bytes",
                 t + 1);
        check((long)st.temp_bytes == want, "got %ld, documented %ld", what, (long)st.temp_bytes,
              want);
    }
    free(huge);
    free(small);
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
    const char *env = getenv("TUNA_RANKS_PER_NODE");
    char *end;
    Qenv = env ? strtol(env, &end, 10) : 0;
    if (!env || *end != '\0' || Qenv < 1 || P % Qenv != 0)
        Qenv = 0;
    tuna_stats_enable(1);
    memory_flat();
    memory_hierarchical();
    memory_twophase();
    one_big();
    growth_and_reuse();
    const char *trunc_algs[] = {"tuna:radix=2", "tuna", "tuna:radix=P", "coalesced:radix=2",
                                "staggered:radix=2,block=1", "twophase-bruck"};
    for (size_t i = 0; i < sizeof trunc_algs / sizeof trunc_algs[0]; i++)
        truncation(trunc_algs[i]);
    if (me == 0)
        printf("test_tuna_bounds: P=%d %s\n", P, failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures ? 1 : 0;
}
