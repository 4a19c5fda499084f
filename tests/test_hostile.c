/*
 * Hostile inputs (issue 33) for every row of the three tables, made on every rank (so an
 * error on every rank is the only way not to hang; CTest's timeout catches a hang):
 *   - recvbuf = MPI_IN_PLACE (MPI allows it for sendbuf only): an error on every rank, the
 *     send buffer unchanged (tuna's rows: MPI_ERR_BUFFER; vendor: the library's code);
 *   - send bytes overlapping receive bytes without being equal (sendbuf at the own slot of
 *     recvbuf or one element into it): MPI_ERR_BUFFER on every rank from tuna's rows, the
 *     receive buffer unchanged; send and receive blocks interleaved in one array without
 *     overlapping is valid and must match PMPI_Alltoallv;
 *   - a type-signature mismatch (rank 1 sends rank 0 more than rank 0's recvcounts hold):
 *     rank 0 gets MPI_ERR_TRUNCATE's class, nobody hangs, nothing is written outside rank 0's
 *     slots; with recvcounts larger than what arrives the call succeeds (as in the library);
 *   - a NULL receive buffer with data and a predefined type: MPI_ERR_BUFFER;
 * then a correct call that must match PMPI. With --one-rank (run under
 * TUNA_ARGCHECK=collective) only rank P-1 passes the aliasing or in-place arguments: it gets
 * MPI_ERR_BUFFER, every other rank MPI_ERR_ARG, and the next call works (the agreement must
 * not pair with another call's).
 *
 * Usage: test_hostile [--one-rank]   (under mpiexec, any P)
 */
#include "support/test_expect.h"
#include "tuna.h"

#include <stdlib.h>
#include <string.h>

#define N 6 /* ints per block */

static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int is_vendor(const char *name)
{
    return strcmp(name, "vendor") == 0;
}

static int filled(const int *b, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != v)
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- every rank */

static void alltoallv_cases(const char *name, const tuna_options *opt)
{
    const size_t n = (size_t)N * (size_t)P;
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    int *sb = malloc(sizeof(int) * n), *big = malloc(sizeof(int) * 4 * n);
    int *ref = malloc(sizeof(int) * 4 * n);
    for (int j = 0; j < P; j++)
        cnt[j] = N, dsp[j] = N * j;
    for (size_t i = 0; i < n; i++)
        sb[i] = me * 1000 + (int)i;

    /* recvbuf = MPI_IN_PLACE, send side ordinary and in place too. */
    int rc = tuna_alltoallv(sb, cnt, dsp, MPI_INT, MPI_IN_PLACE, cnt, dsp, MPI_INT,
                            MPI_COMM_WORLD, opt);
    expect(rc != MPI_SUCCESS && (is_vendor(name) || cls(rc) == MPI_ERR_BUFFER),
           "alltoallv recvbuf = MPI_IN_PLACE", name, rc);
    rc = tuna_alltoallv(MPI_IN_PLACE, cnt, dsp, MPI_INT, MPI_IN_PLACE, cnt, dsp, MPI_INT,
                        MPI_COMM_WORLD, opt);
    expect(rc != MPI_SUCCESS && (is_vendor(name) || cls(rc) == MPI_ERR_BUFFER),
           "alltoallv both buffers MPI_IN_PLACE", name, rc);
    if (!is_vendor(name)) {
        tuna_plan plan = NULL;
        rc = tuna_alltoallv_init(sb, cnt, dsp, MPI_INT, MPI_IN_PLACE, cnt, dsp, MPI_INT,
                                 MPI_COMM_WORLD, opt, TUNA_PLAN_ESTIMATE, &plan);
        expect(cls(rc) == MPI_ERR_BUFFER && plan == NULL, "alltoallv_init recvbuf in place",
               name, rc);
        if (plan)
            tuna_plan_free(&plan);

        /* Overlap, not equality: the receive blocks start half a block into the send ones. */
        for (size_t i = 0; i < 4 * n; i++)
            big[i] = -7;
        rc = tuna_alltoallv(big, cnt, dsp, MPI_INT, big + N / 2, cnt, dsp, MPI_INT,
                            MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER && filled(big, 4 * n, -7), "alltoallv overlap", name,
               rc);
        /* Interleaved but disjoint (send blocks even, receive blocks odd): valid. */
        int *sd2 = malloc(sizeof(int) * (size_t)P), *rd2 = malloc(sizeof(int) * (size_t)P);
        for (int j = 0; j < P; j++)
            sd2[j] = 2 * N * j, rd2[j] = 2 * N * j + N;
        for (size_t i = 0; i < 2 * n; i++)
            big[i] = me * 1000 + (int)i;
        memcpy(ref, big, sizeof(int) * 2 * n);
        PMPI_Alltoallv(big, cnt, sd2, MPI_INT, ref, cnt, rd2, MPI_INT, MPI_COMM_WORLD);
        rc = tuna_alltoallv(big, cnt, sd2, MPI_INT, big, cnt, rd2, MPI_INT, MPI_COMM_WORLD, opt);
        /* equal pointers with data on both sides are MPI_ERR_BUFFER (test_aliasing); shift
         * the receive pointer by one block instead, same bytes. */
        if (cls(rc) == MPI_ERR_BUFFER) {
            for (int j = 0; j < P; j++)
                rd2[j] -= N;
            rc = tuna_alltoallv(big, cnt, sd2, MPI_INT, big + N, cnt, rd2, MPI_INT,
                                MPI_COMM_WORLD, opt);
        }
        expect(rc == MPI_SUCCESS && memcmp(big, ref, sizeof(int) * 2 * n) == 0,
               "alltoallv interleaved disjoint blocks", name, rc);
        free(sd2), free(rd2);
    }

    /* Type-signature mismatch: rank 1 sends rank 0 N ints, rank 0 takes N/2 (or 2N). */
    int *rc0 = malloc(sizeof(int) * (size_t)P), *rd = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++)
        rc0[j] = N, rd[j] = 4 * N * j;
    for (int mode = 0; mode < 2 && P > 1; mode++) {
        if (me == 0)
            rc0[1] = mode == 0 ? N / 2 : 2 * N;
        for (size_t i = 0; i < 4 * n; i++)
            big[i] = -7;
        rc = tuna_alltoallv(sb, cnt, dsp, MPI_INT, big, rc0, rd, MPI_INT, MPI_COMM_WORLD, opt);
        /* Nothing past what rank 0 allows from rank 1, nor in the gaps. */
        int outside = 0;
        for (int j = 0; j < P; j++)
            outside |= !filled(big + 4 * N * j + rc0[j], (size_t)(4 * N - rc0[j]), -7);
        if (mode == 0)
            /* vendor, and auto reusing the library's call between agreements: the library's
             * code (Open MPI 4.1.4 answers MPI_ERR_OTHER at P = 4, 5) */
            expect((me == 0 ? cls(rc) == MPI_ERR_TRUNCATE ||
                                  ((is_vendor(name) || strcmp(name, "auto") == 0) && rc != 0)
                            : rc == MPI_SUCCESS || cls(rc) == MPI_ERR_TRUNCATE) &&
                       !outside,
                   "alltoallv truncating mismatch", name, rc);
        else
            expect(rc == MPI_SUCCESS && (me != 0 || filled(big + 4 * N + N, (size_t)(3 * N), -7)),
                   "alltoallv receive counts larger than what arrives", name, rc);
        rc0[1] = N;
    }

    /* NULL receive buffer with data and a predefined type. */
    if (!is_vendor(name)) {
        rc = tuna_alltoallv(sb, cnt, dsp, MPI_INT, NULL, cnt, dsp, MPI_INT, MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER, "alltoallv NULL recvbuf", name, rc);
    }

    /* Still usable. */
    memset(big, 0x5a, sizeof(int) * n);
    rc = tuna_alltoallv(sb, cnt, dsp, MPI_INT, big, cnt, dsp, MPI_INT, MPI_COMM_WORLD, opt);
    PMPI_Alltoallv(sb, cnt, dsp, MPI_INT, ref, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(big, ref, sizeof(int) * n) == 0,
           "alltoallv after the errors", name, rc);
    free(cnt), free(dsp), free(sb), free(big), free(ref), free(rc0), free(rd);
}

static void allgather_cases(const char *name, const tuna_options *opt)
{
    const size_t n = (size_t)N * (size_t)P;
    int *buf = malloc(sizeof(int) * (n + N)), *ref = malloc(sizeof(int) * n);
    int send[N];
    for (int i = 0; i < N; i++)
        send[i] = me * 100 + i;
    int rc = tuna_allgather(send, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, MPI_COMM_WORLD, opt);
    expect(rc != MPI_SUCCESS && (is_vendor(name) || cls(rc) == MPI_ERR_BUFFER),
           "allgather recvbuf = MPI_IN_PLACE", name, rc);
    if (!is_vendor(name)) {
        /* sendbuf at this rank's own slot (rank 0: equal pointers; others: inside recvbuf),
         * then one element into the slot of the next rank. */
        for (size_t i = 0; i < n + N; i++)
            buf[i] = -7;
        rc = tuna_allgather(buf + (size_t)N * (size_t)me, N, MPI_INT, buf, N, MPI_INT,
                            MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER && filled(buf, n, -7), "allgather sendbuf in own slot",
               name, rc);
        rc = tuna_allgather(buf + (size_t)N * (size_t)me + 1, N, MPI_INT, buf, N, MPI_INT,
                            MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER && filled(buf, n, -7),
               "allgather sendbuf across two slots", name, rc);
        rc = tuna_allgather(send, N, MPI_INT, NULL, N, MPI_INT, MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER, "allgather NULL recvbuf", name, rc);
    }
    memset(buf, 0x5a, sizeof(int) * n);
    rc = tuna_allgather(send, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
    PMPI_Allgather(send, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(buf, ref, sizeof(int) * n) == 0,
           "allgather after the errors", name, rc);
    free(buf), free(ref);
}

static void alltoall_cases(const char *name, const tuna_options *opt)
{
    const size_t n = (size_t)N * (size_t)P;
    int *buf = malloc(sizeof(int) * (n + N)), *ref = malloc(sizeof(int) * n);
    int *send = malloc(sizeof(int) * n);
    for (size_t i = 0; i < n; i++)
        send[i] = me * 1000 + (int)i;
    int rc = tuna_alltoall(send, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, MPI_COMM_WORLD, opt);
    expect(rc != MPI_SUCCESS && (is_vendor(name) || cls(rc) == MPI_ERR_BUFFER),
           "alltoall recvbuf = MPI_IN_PLACE", name, rc);
    if (!is_vendor(name)) {
        /* sendbuf one element into recvbuf: the blocks overlap */
        for (size_t i = 0; i < n + N; i++)
            buf[i] = -7;
        rc = tuna_alltoall(buf + 1, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER && filled(buf, n, -7), "alltoall overlapping buffers",
               name, rc);
        rc = tuna_alltoall(send, N, MPI_INT, NULL, N, MPI_INT, MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER, "alltoall NULL recvbuf", name, rc);
    }
    memset(buf, 0x5a, sizeof(int) * n);
    rc = tuna_alltoall(send, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
    PMPI_Alltoall(send, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(buf, ref, sizeof(int) * n) == 0,
           "alltoall after the errors", name, rc);
    free(buf), free(ref), free(send);
}

static void allreduce_cases(const char *name, const tuna_options *opt)
{
    int buf[2 * N], ref[N], send[N];
    for (int i = 0; i < N; i++)
        send[i] = me * 100 + i;
    int rc = tuna_allreduce(send, MPI_IN_PLACE, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
    expect(rc != MPI_SUCCESS && (is_vendor(name) || cls(rc) == MPI_ERR_BUFFER),
           "allreduce recvbuf = MPI_IN_PLACE", name, rc);
    if (!is_vendor(name)) {
        for (int i = 0; i < 2 * N; i++)
            buf[i] = -7;
        rc = tuna_allreduce(buf + 1, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER && filled(buf, 2 * N, -7), "allreduce overlap", name,
               rc);
        rc = tuna_allreduce(send, NULL, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
        expect(cls(rc) == MPI_ERR_BUFFER, "allreduce NULL recvbuf", name, rc);
    }
    memset(buf, 0x5a, sizeof buf);
    rc = tuna_allreduce(send, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
    PMPI_Allreduce(send, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS && memcmp(buf, ref, sizeof ref) == 0, "allreduce after the errors",
           name, rc);
}

/* ------------------------------------------- one rank, TUNA_ARGCHECK=collective */

/* The bad rank's code is MPI_ERR_BUFFER, everyone else's MPI_ERR_ARG. */
static int agreed_error(int rc, int bad)
{
    return bad ? cls(rc) == MPI_ERR_BUFFER : cls(rc) == MPI_ERR_ARG;
}

static void one_rank_cases(const char *name, tuna_collective coll, const tuna_options *opt)
{
    const int bad = me == P - 1;
    const size_t n = (size_t)N * (size_t)P;
    int *buf = calloc(n + N, sizeof(int)), *ref = calloc(n, sizeof(int));
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    int send[N * 16];
    for (int i = 0; i < N * 16; i++)
        send[i] = me * 100 + i;
    for (int j = 0; j < P; j++)
        cnt[j] = N, dsp[j] = N * j;
    int rc;
    for (int k = 0; k < 2; k++) { /* aliasing / overlap, then recvbuf in place */
        if (coll == TUNA_ALLGATHER)
            rc = tuna_allgather(bad ? (k ? (void *)send : buf + (size_t)N * (size_t)me + 1)
                                    : (void *)send,
                                N, MPI_INT, bad && k ? MPI_IN_PLACE : buf, N, MPI_INT,
                                MPI_COMM_WORLD, opt);
        else if (coll == TUNA_ALLREDUCE)
            rc = tuna_allreduce(bad && !k ? buf : send, bad && k ? MPI_IN_PLACE : buf, N,
                                MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
        else if (coll == TUNA_ALLTOALL)
            rc = tuna_alltoall(bad && !k ? buf + 1 : send, N, MPI_INT,
                               bad && k ? MPI_IN_PLACE : buf, N, MPI_INT, MPI_COMM_WORLD, opt);
        else
            rc = tuna_alltoallv(bad && !k ? buf + 1 : send, cnt, dsp, MPI_INT,
                                bad && k ? MPI_IN_PLACE : buf, cnt, dsp, MPI_INT,
                                MPI_COMM_WORLD, opt);
        expect(agreed_error(rc, bad), k ? "one rank: recvbuf in place" : "one rank: overlap",
               name, rc);
    }
    /* The next call pairs with the same call on every rank. */
    if (coll == TUNA_ALLGATHER) {
        rc = tuna_allgather(send, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
        PMPI_Allgather(send, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    } else if (coll == TUNA_ALLREDUCE) {
        rc = tuna_allreduce(send, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, opt);
        PMPI_Allreduce(send, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (coll == TUNA_ALLTOALL) {
        rc = tuna_alltoall(send, N, MPI_INT, buf, N, MPI_INT, MPI_COMM_WORLD, opt);
        PMPI_Alltoall(send, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    } else {
        rc = tuna_alltoallv(send, cnt, dsp, MPI_INT, buf, cnt, dsp, MPI_INT, MPI_COMM_WORLD, opt);
        PMPI_Alltoallv(send, cnt, dsp, MPI_INT, ref, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    }
    const size_t cmp = coll == TUNA_ALLREDUCE ? N : n;
    expect(rc == MPI_SUCCESS && memcmp(buf, ref, sizeof(int) * cmp) == 0,
           "one rank: the next call", name, rc);
    free(buf), free(ref), free(cnt), free(dsp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int one_rank = argc > 1 && strcmp(argv[1], "--one-rank") == 0;
    /* Every row with its defaults, and the batched rows with batches of one or two (a
     * truncated batch must not stop the later ones). */
    static const char *const extra[] = {"scattered:block=1", "multipair:stride=1",
                                        "multipair-waitany:stride=1",
                                        "multipair-testany:stride=2", "tuna:radix=2,block=1",
                                        "tuna:radix=P"};
    int cases = 0;
    for (int coll = 0; coll < TUNA_COLLECTIVE_COUNT; coll++) {
        if (coll == TUNA_NEIGHBOR_ALLTOALLV) /* needs a topology: test_neighbor.c */
            continue;
        const int rows = tuna_algorithm_count((tuna_collective)coll);
        const int nextra = coll == TUNA_ALLTOALLV ? (int)(sizeof extra / sizeof *extra) : 0;
        for (int a = 0; a < rows + nextra; a++) {
            const char *name =
                a < rows ? tuna_algorithm_get((tuna_collective)coll, a)->name : extra[a - rows];
            tuna_options opt;
            if (tuna_options_parse(name, (tuna_collective)coll, &opt) != MPI_SUCCESS) {
                expect(0, "parse", name, -1);
                continue;
            }
            if (one_rank) {
                if (P > 1 && !is_vendor(name)) /* TUNA_ARGCHECK is not the library's */
                    one_rank_cases(name, (tuna_collective)coll, &opt);
            } else if (coll == TUNA_ALLTOALLV) {
                alltoallv_cases(name, &opt);
            } else if (coll == TUNA_ALLGATHER) {
                allgather_cases(name, &opt);
            } else if (coll == TUNA_ALLTOALL) {
                alltoall_cases(name, &opt);
            } else {
                allreduce_cases(name, &opt);
            }
            cases++;
        }
    }
    if (me == 0)
        printf("test_hostile%s: P=%d, %d configurations, %d failures\n",
               one_rank ? " --one-rank" : "", P, cases, failures);
    MPI_Finalize();
    return failures != 0;
}
