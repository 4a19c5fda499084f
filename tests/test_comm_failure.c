/*
 * Communication failures inside tuna's collectives leave nothing behind (issue 33): one rank
 * passes a larger count than the others (an erroneous program: MPI reports MPI_ERR_TRUNCATE
 * where that rank's larger messages arrive), on a communicator with MPI_ERRORS_RETURN. Every
 * rank must return MPI_SUCCESS or MPI_ERR_TRUNCATE's class, at least one rank the latter, and
 * nobody may hang (a failed step ends the step, not the schedule: docs/test-harnesses.md). The buffers of the failed call are freed at once; then all ranks barrier,
 * sleep briefly and make a correct call on fresh buffers, which must equal PMPI's result byte
 * for byte. A request of the failed call still pending would write into freed memory
 * (AddressSanitizer: heap-use-after-free), and a message of it still in flight would be
 * taken by the correct call (wrong bytes).
 *
 * Cases: every allreduce and allgather row of the registries (coll_variants.h: k in
 * {2, 3, 4, P}), with the larger count on rank 0 (a member of a folded group when P is not a
 * power of k) and on rank P-1 (a leader), each once with every rank on time and once with a
 * late rank (rank 1 enters 20 ms after the others: its messages reach the failing ranks after
 * they saw the failure, so a receive cancelled there instead of completed would leave them in
 * flight). The counts differ by more than P elements, so every message of the larger rank is
 * larger than its receive; all messages stay far below the eager limits (Open MPI's
 * single-copy path writes a truncated rendezvous message past the receive buffer: an Open MPI
 * bug no caller can avoid). Not run: `vendor` (the MPI library's own collective) and `auto`
 * (each rank chooses from its own count, so mismatched counts may pick different algorithms:
 * a hang by design). Alltoallv: every row likewise (coll_variants.h: the first parameter at
 * min, min + 1, min + 2 and P), rank 1 with room for half of rank 0's block, the receive
 * buffer freed at once, on time and with rank P-1 late; an error is not required there (the
 * Bruck rows pad to the largest block and report nothing).
 *
 * Usage: test_comm_failure [SUBSTRING]   (under mpiexec, P >= 2; only the cases whose
 * description, as printed on failure, contains SUBSTRING)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "support/coll_variants.h"
#include "support/test_expect.h"
#include "tuna.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG_SEC 60
#define MAX_VARIANTS 64

static char current[256];
static const char *only; /* run only the cases whose description contains it */
static int cases;

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&t, NULL);
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "FAIL P=%d rank=%d: hang in %s\n", P, me, current);
    if (n > 0 && write(2, msg, (size_t)n) < 0)
        _exit(3);
    _exit(2);
}

/* The failed call's outcome: success or MPI_ERR_TRUNCATE's class here and, if `reported`,
 * an error on some rank. */
static void check_failed_call(int rc, int reported)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = -1;
    expect(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE,
           "the failed call returns MPI_SUCCESS or MPI_ERR_TRUNCATE's class", current, rc);
    int err = rc != MPI_SUCCESS, any = 0;
    MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    expect(any || !reported, "some rank reports the truncation", current, rc);
}

/* Whatever happened before, late messages land now if any are left (freed memory). */
static void settle(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_ms(20);
}

static int *ints(size_t n, int salt)
{
    int *v = malloc(sizeof(int) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        v[i] = (me + 1) * 1000 + (int)i * 7 + salt;
    return v;
}

/* One erroneous call of `alg` (count n, n + extra on rank big; rank late enters late), then a
 * correct one (count n) against PMPI. */
static void allreduce_case(MPI_Comm comm, const char *alg, int n, int extra, int big, int late)
{
    tuna_options opt;
    if (tuna_options_parse(alg, TUNA_ALLREDUCE, &opt) != MPI_SUCCESS) {
        expect(0, "option string parses", alg, MPI_ERR_ARG);
        return;
    }
    snprintf(current, sizeof current, "allreduce %.47s, count %d (+%d on rank %d), late rank %d",
             alg, n, extra, big, late);
    if (only && !strstr(current, only))
        return;
    alarm(WATCHDOG_SEC);
    int cnt = me == big ? n + extra : n;
    int *s = ints((size_t)cnt, 1), *r = ints((size_t)cnt, 2);
    if (me == late)
        sleep_ms(20);
    int rc = tuna_allreduce(s, r, cnt, MPI_INT, MPI_SUM, comm, &opt);
    free(s);
    free(r);
    check_failed_call(rc, 1);
    settle();
    s = ints((size_t)n, 3);
    r = ints((size_t)n, 4);
    int *ref = ints((size_t)n, 5);
    rc = tuna_allreduce(s, r, n, MPI_INT, MPI_SUM, comm, &opt);
    PMPI_Allreduce(s, ref, n, MPI_INT, MPI_SUM, comm);
    expect(rc == MPI_SUCCESS && memcmp(r, ref, sizeof(int) * (size_t)n) == 0,
           "the correct call afterwards equals PMPI_Allreduce", current, rc);
    free(s);
    free(r);
    free(ref);
    alarm(0);
    cases++;
}

/* The same for allgather: blocks of n elements of `type` (n + extra on rank big). */
static void allgather_case(MPI_Comm comm, const char *alg, MPI_Datatype type, const char *tname,
                           int n, int extra, int big, int late)
{
    tuna_options opt;
    if (tuna_options_parse(alg, TUNA_ALLGATHER, &opt) != MPI_SUCCESS) {
        expect(0, "option string parses", alg, MPI_ERR_ARG);
        return;
    }
    snprintf(current, sizeof current,
             "allgather %.47s, %.40s blocks of %d (+%d on rank %d), late rank %d", alg, tname, n,
             extra, big, late);
    if (only && !strstr(current, only))
        return;
    alarm(WATCHDOG_SEC);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(type, &lb, &ext);
    const size_t per = (size_t)ext / sizeof(int); /* ints per element */
    int cnt = me == big ? n + extra : n;
    int *s = ints((size_t)cnt * per, 1), *r = ints((size_t)cnt * per * (size_t)P, 2);
    if (me == late)
        sleep_ms(20);
    int rc = tuna_allgather(s, cnt, type, r, cnt, type, comm, &opt);
    free(s);
    free(r);
    check_failed_call(rc, 1);
    settle();
    const size_t all = (size_t)n * per * (size_t)P;
    s = ints((size_t)n * per, 3);
    r = ints(all, 4);
    int *ref = ints(all, 4); /* the same contents: holes stay equal */
    rc = tuna_allgather(s, n, type, r, n, type, comm, &opt);
    PMPI_Allgather(s, n, type, ref, n, type, comm);
    expect(rc == MPI_SUCCESS && memcmp(r, ref, sizeof(int) * all) == 0,
           "the correct call afterwards equals PMPI_Allgather", current, rc);
    free(s);
    free(r);
    free(ref);
    alarm(0);
    cases++;
}

/* Alltoallv, blocks of B ints: rank 1 has room for B/2 ints from rank 0, which sends B. */
static void alltoallv_case(MPI_Comm comm, const char *alg, int late)
{
    enum { B = 4 };
    tuna_options opt;
    if (tuna_options_parse(alg, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS) {
        expect(0, "option string parses", alg, MPI_ERR_ARG);
        return;
    }
    snprintf(current, sizeof current, "alltoallv %.47s, rank 1 receives %d of %d ints from rank 0, "
             "late rank %d", alg, B / 2, B, late);
    if (only && !strstr(current, only))
        return;
    alarm(WATCHDOG_SEC);
    int *cnt = malloc(sizeof(int) * 3 * (size_t)P), *rcnt = cnt + P, *disp = cnt + 2 * P;
    for (int j = 0; j < P; j++) {
        cnt[j] = rcnt[j] = B;
        disp[j] = B * j;
    }
    if (me == 1)
        rcnt[0] = B / 2;
    int *s = ints((size_t)B * (size_t)P, 1), *r = ints((size_t)B * (size_t)P, 2);
    if (me == late)
        sleep_ms(20);
    int rc = tuna_alltoallv(s, cnt, disp, MPI_INT, r, rcnt, disp, MPI_INT, comm, &opt);
    free(r);
    /* Not every row reports it: the Bruck rows pad to the largest block. */
    check_failed_call(rc, 0);
    settle();
    rcnt[0] = B;
    r = ints((size_t)B * (size_t)P, 4);
    int *ref = ints((size_t)B * (size_t)P, 4);
    rc = tuna_alltoallv(s, cnt, disp, MPI_INT, r, cnt, disp, MPI_INT, comm, &opt);
    PMPI_Alltoallv(s, cnt, disp, MPI_INT, ref, cnt, disp, MPI_INT, comm);
    expect(rc == MPI_SUCCESS && memcmp(r, ref, sizeof(int) * (size_t)B * (size_t)P) == 0,
           "the correct call afterwards equals PMPI_Alltoallv", current, rc);
    free(s);
    free(r);
    free(ref);
    free(cnt);
    alarm(0);
    cases++;
}

/* Rows run here: not the MPI library's own call, not auto (see the header). */
static int runs(const char *alg)
{
    return strcmp(alg, "vendor") != 0 && strcmp(alg, "auto") != 0;
}

int main(int argc, char **argv)
{
    if (!error_test_init(&argc, &argv))
        return 0;
    only = argc > 1 ? argv[1] : NULL;
    signal(SIGALRM, on_alarm);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* A vector with holes (2 ints, stride 2): allgather then works on a packed copy. */
    MPI_Datatype vec, holes;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 4 * (MPI_Aint)sizeof(int), &holes);
    MPI_Type_commit(&holes);
    MPI_Type_free(&vec);

    /* n >= P: no segment of the allreduce rows is empty on any rank (their schedules do not
     * depend on the count then); extra > P: every segment of rank big is larger. */
    const int n = 4 * P + 3, extra = P + 2;
    const int bigs[2] = {0, P - 1}, lates[2] = {-1, 1};
    char algs[MAX_VARIANTS][COLL_VARIANT_LEN];
    int nv = coll_variants(TUNA_ALLREDUCE, algs, MAX_VARIANTS);
    for (int v = 0; v < nv; v++)
        for (int b = 0; b < 2; b++)
            for (int l = 0; l < 2 && runs(algs[v]); l++)
                allreduce_case(comm, algs[v], n, extra, bigs[b], lates[l]);
    nv = coll_variants(TUNA_ALLGATHER, algs, MAX_VARIANTS);
    for (int v = 0; v < nv; v++)
        for (int b = 0; b < 2; b++)
            for (int l = 0; l < 2 && runs(algs[v]); l++) {
                allgather_case(comm, algs[v], MPI_INT, "MPI_INT", 3, 2, bigs[b], lates[l]);
                allgather_case(comm, algs[v], holes, "2 ints with holes", 2, 1, bigs[b],
                               lates[l]);
            }
    nv = coll_variants(TUNA_ALLTOALLV, algs, MAX_VARIANTS);
    for (int v = 0; v < nv; v++)
        for (int l = 0; l < 2 && runs(algs[v]); l++)
            alltoallv_case(comm, algs[v], l ? P - 1 : -1);

    MPI_Type_free(&holes);
    MPI_Comm_free(&comm);
    if (me == 0)
        printf("test_comm_failure: P=%d, %d cases, %d failed\n", P, cases, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
