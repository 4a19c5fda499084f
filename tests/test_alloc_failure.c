/*
 * Allocation failure inside a collective (docs/testing.md, "Allocation failures"): with the
 * test hook of src/core/errors.c, the k-th internal allocation fails, for k = 1, 2, ... until
 * a call runs without reaching the k-th. Every rank must then return MPI_SUCCESS with PMPI's
 * bytes (sentinel-filled receive buffers) or MPI_ERR_NO_MEM with tuna's message; none may
 * crash (ASan, LSan and UBSan watch the error paths) or hang (a watchdog turns a hang into a
 * failure naming the case), and the next call without the hook must be correct.
 *
 * Policy: the hook fails the same allocation index on every rank, and the inputs are
 * rank-symmetric (the block from rank s to rank d has a size that depends on (d - s) mod P
 * only), so every rank makes the same allocations at the same points of the schedule and the
 * failure hits all of them there. A configuration whose allocation counts differ between
 * ranks (the folded groups of recursive multiplying: members allocate nothing) cannot be
 * failed this way without leaving peers waiting; it is reported and skipped, and every such
 * row is swept in a configuration without folding (k = P, or P a power of k).
 *
 * Covered: every alltoallv row (and parameter variants reaching the TuNA engine's arena
 * growth, padded-bruck's datatype rounds), with contiguous, large (rendezvous) and
 * non-contiguous datatypes; every allgather and allreduce row; plans (init and start) of
 * every alltoallv row and of allgather/allreduce; every allgather and allreduce row also
 * through its nonblocking start (tuna_iallgather / tuna_iallreduce, then a wait); every
 * alltoall row, blocking (a vector type in place: packing and the per-call copy of the
 * blocks to send) and as a plan (ints), and mesh at its other dims edges, against
 * PMPI_Alltoall.
 *
 * Usage: test_alloc_failure   (under mpiexec, any P)
 */
#include "tuna.h"
#include "tuna_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_K 2000       /* far more allocations than any call makes */
#define WATCHDOG_SEC 120 /* one sweep step (two calls) never takes this long */

static int P, me, failures, swept, skipped;
static char current[160];
static long current_k;

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "FAIL P=%d rank=%d: hang in %s at k=%ld\n", P, me,
                     current, current_k);
    if (n > 0 && write(2, msg, (size_t)n) < 0)
        _exit(3);
    _exit(2);
}

static void fail(const char *what, int rc)
{
    fprintf(stderr, "FAIL P=%d rank=%d %s at k=%ld: %s: rc %d (%s)\n", P, me, current,
            current_k, what, rc, tuna_error_string(rc));
    failures++;
}

/* ------------------------------------------------------------------ cases */

typedef struct tcase {
    tuna_collective coll;
    tuna_options opt;
    int variant;    /* alltoallv: 0 small ints, 1 large ints, 2 vector type;
                       alltoall: 0 ints, 1 vector type in place */
    bool plan;
    bool nonblocking; /* allgather / allreduce: tuna_iallgather / tuna_iallreduce + wait */
    /* alltoall: the alltoallv row of the same name, whose empty call trims the buffers the
     * row keeps on the communicator (cold) */
    bool has_cold;
    tuna_options cold_opt;
} tcase;

/* Buffers of one case, with the reference result. */
typedef struct bufs {
    int *scounts, *sdispls, *rcounts, *rdispls;
    char *sbuf, *rbuf, *ref;
    char *init; /* alltoall: the receive buffer before each call (in place: the blocks to send) */
    size_t sbytes, rbytes;
    MPI_Datatype type;
    int count; /* allgather/alltoall block / allreduce vector, in elements of type */
    bool inplace;
} bufs;

static int a2av_count(int variant, int dist)
{
    /* Grows with the distance: TuNA's later hops carry larger blocks (the arena grows while
     * sends from it are pending); variant 1 crosses the eager limit. */
    return variant == 1 ? 16384 + 2048 * dist : 3 + 11 * dist;
}

static void setup(const tcase *c, bufs *b)
{
    memset(b, 0, sizeof *b);
    b->type = MPI_INT;
    size_t elem = sizeof(int); /* extent of one element */
    if ((c->coll == TUNA_ALLTOALLV && c->variant == 2) ||
        (c->coll == TUNA_ALLTOALL && c->variant == 1)) {
        MPI_Type_vector(2, 1, 2, MPI_INT, &b->type); /* holes: packing paths */
        MPI_Type_commit(&b->type);
        elem = 3 * sizeof(int);
    }
    if (c->coll == TUNA_ALLTOALLV) {
        b->scounts = malloc(sizeof(int) * 4 * (size_t)P);
        b->sdispls = b->scounts + P;
        b->rcounts = b->scounts + 2 * P;
        b->rdispls = b->scounts + 3 * P;
        int soff = 0, roff = 0;
        for (int j = 0; j < P; j++) {
            b->scounts[j] = a2av_count(c->variant, (j - me + P) % P);
            b->rcounts[j] = a2av_count(c->variant, (me - j + P) % P);
            b->sdispls[j] = soff;
            b->rdispls[j] = roff;
            soff += b->scounts[j] + 1; /* a gap after every block */
            roff += b->rcounts[j] + 1;
        }
        b->sbytes = (size_t)soff * elem + 16;
        b->rbytes = (size_t)roff * elem + 16;
    } else if (c->coll == TUNA_ALLTOALL) {
        /* Uniform blocks: every rank allocates alike (rank-symmetric by MPI's rule). */
        b->inplace = c->variant == 1;
        b->count = b->inplace ? 13 : 37;
        b->sbytes = (size_t)P * (size_t)b->count * elem;
        b->rbytes = b->sbytes + 16; /* guard bytes after the blocks */
    } else {
        b->count = 37;
        b->sbytes = sizeof(int) * (size_t)b->count;
        b->rbytes = b->sbytes * (c->coll == TUNA_ALLGATHER ? (size_t)P : 1);
    }
    b->sbuf = malloc(b->sbytes);
    b->rbuf = malloc(b->rbytes);
    b->ref = malloc(b->rbytes);
    for (size_t i = 0; i < b->sbytes; i++)
        b->sbuf[i] = (char)(me * 31 + (int)(i % 251));
    memset(b->ref, 0x5a, b->rbytes);
    if (c->coll == TUNA_ALLTOALL) {
        b->init = malloc(b->rbytes);
        memset(b->init, 0x5a, b->rbytes);
        if (b->inplace) /* the blocks to send (holes too: nobody may write them); the guard
                           bytes after them keep the sentinel */
            for (size_t i = 0; i < b->sbytes; i++)
                b->init[i] = (char)(me * 17 + (int)(i % 241));
        memcpy(b->ref, b->init, b->rbytes);
        PMPI_Alltoall(b->inplace ? MPI_IN_PLACE : b->sbuf, b->count, b->type, b->ref, b->count,
                      b->type, MPI_COMM_WORLD);
    } else if (c->coll == TUNA_ALLTOALLV)
        PMPI_Alltoallv(b->sbuf, b->scounts, b->sdispls, b->type, b->ref, b->rcounts, b->rdispls,
                       b->type, MPI_COMM_WORLD);
    else if (c->coll == TUNA_ALLGATHER)
        PMPI_Allgather(b->sbuf, b->count, MPI_INT, b->ref, b->count, MPI_INT, MPI_COMM_WORLD);
    else
        PMPI_Allreduce(b->sbuf, b->ref, b->count, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
}

static void teardown(bufs *b)
{
    if (b->type != MPI_INT)
        MPI_Type_free(&b->type);
    free(b->scounts);
    free(b->sbuf);
    free(b->rbuf);
    free(b->ref);
    free(b->init);
}

/* One call (or plan init + start + wait + free) into a sentinel-filled receive buffer (alltoall
 * in place: holding the blocks to send, sentinels in the holes and guard bytes). */
static int run(const tcase *c, bufs *b)
{
    if (b->init)
        memcpy(b->rbuf, b->init, b->rbytes);
    else
        memset(b->rbuf, 0x5a, b->rbytes);
    const void *a2a_send = b->inplace ? MPI_IN_PLACE : (const void *)b->sbuf;
    if (c->nonblocking) {
        tuna_request req = TUNA_REQUEST_NULL;
        int rc = c->coll == TUNA_ALLGATHER
                     ? tuna_iallgather(b->sbuf, b->count, MPI_INT, b->rbuf, b->count, MPI_INT,
                                       MPI_COMM_WORLD, &c->opt, &req)
                     : tuna_iallreduce(b->sbuf, b->rbuf, b->count, MPI_INT, MPI_BXOR,
                                       MPI_COMM_WORLD, &c->opt, &req);
        if (rc != MPI_SUCCESS && req != TUNA_REQUEST_NULL)
            fail("a failed start left a request", rc);
        return rc == MPI_SUCCESS ? tuna_request_wait(&req) : rc;
    }
    if (!c->plan) {
        if (c->coll == TUNA_ALLTOALL)
            return tuna_alltoall(a2a_send, b->count, b->type, b->rbuf, b->count, b->type,
                                 MPI_COMM_WORLD, &c->opt);
        if (c->coll == TUNA_ALLTOALLV)
            return tuna_alltoallv(b->sbuf, b->scounts, b->sdispls, b->type, b->rbuf, b->rcounts,
                                  b->rdispls, b->type, MPI_COMM_WORLD, &c->opt);
        if (c->coll == TUNA_ALLGATHER)
            return tuna_allgather(b->sbuf, b->count, MPI_INT, b->rbuf, b->count, MPI_INT,
                                  MPI_COMM_WORLD, &c->opt);
        return tuna_allreduce(b->sbuf, b->rbuf, b->count, MPI_INT, MPI_BXOR, MPI_COMM_WORLD,
                              &c->opt);
    }
    tuna_plan plan = NULL;
    int rc;
    if (c->coll == TUNA_ALLTOALLV)
        rc = tuna_alltoallv_init(b->sbuf, b->scounts, b->sdispls, b->type, b->rbuf, b->rcounts,
                                 b->rdispls, b->type, MPI_COMM_WORLD, &c->opt,
                                 TUNA_PLAN_ESTIMATE, &plan);
    else if (c->coll == TUNA_ALLTOALL)
        rc = tuna_alltoall_init(a2a_send, b->count, b->type, b->rbuf, b->count, b->type,
                                MPI_COMM_WORLD, &c->opt, TUNA_PLAN_ESTIMATE, &plan);
    else if (c->coll == TUNA_ALLGATHER)
        rc = tuna_allgather_init(b->sbuf, b->count, MPI_INT, b->rbuf, b->count, MPI_INT,
                                 MPI_COMM_WORLD, &c->opt, TUNA_PLAN_ESTIMATE, &plan);
    else
        rc = tuna_allreduce_init(b->sbuf, b->rbuf, b->count, MPI_INT, MPI_BXOR, MPI_COMM_WORLD,
                                 &c->opt, TUNA_PLAN_ESTIMATE, &plan);
    if (rc != MPI_SUCCESS) {
        if (plan)
            fail("a failed init returned a plan", rc);
        return rc;
    }
    rc = tuna_start(plan);
    if (rc == MPI_SUCCESS)
        rc = tuna_wait(plan);
    tuna_plan_free(&plan);
    return rc;
}

/*
 * A call with every count zero: tuna's engine trims the buffers it keeps on the communicator
 * to what a call used, so the next call grows them from nothing (the growth paths, the TuNA
 * arena's while sends from it are pending included, are where allocations fail).
 */
static void cold(const tcase *c, bufs *b)
{
    if (c->coll != TUNA_ALLTOALLV && !c->has_cold)
        return;
    /* alltoall's rows keep their buffers in the same place as alltoallv's rows of the same
     * name (the communicator's blocking calls share them): an empty alltoallv trims them. (An
     * empty alltoall moves nothing and returns before any row runs.) */
    int *zero = calloc((size_t)P, sizeof(int));
    const bool a2a = c->coll == TUNA_ALLTOALL;
    int rc = tuna_alltoallv(b->sbuf, zero, a2a ? zero : b->sdispls, b->type, b->rbuf, zero,
                            a2a ? zero : b->rdispls, b->type, MPI_COMM_WORLD,
                            a2a ? &c->cold_opt : &c->opt);
    if (rc != MPI_SUCCESS)
        fail("the empty call failed", rc);
    free(zero);
}

static bool correct(const bufs *b)
{
    return memcmp(b->rbuf, b->ref, b->rbytes) == 0;
}

static bool all(bool v)
{
    int x = v, r = 0;
    PMPI_Allreduce(&x, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return r != 0;
}

/* Sweep k = 1, 2, ... over one case. */
static void sweep(const tcase *c)
{
    char opts[96];
    tuna_options_format(&c->opt, opts, sizeof opts);
    static const char *const coll_name[] = {"alltoallv", "allgather", "allreduce", "alltoall"};
    snprintf(current, sizeof current, "%s%s%s %s variant %d",
             c->nonblocking ? "nonblocking " : "", coll_name[c->coll], c->plan ? " plan" : "",
             opts, c->variant);
    bufs b;
    setup(c, &b);
    current_k = 0;
    alarm(WATCHDOG_SEC);
    /* Warm-up (the communicator's context, kept buffers) and the allocation count. */
    tuna_test_alloc_fail(0);
    int rc = run(c, &b);
    if (rc != MPI_SUCCESS || !correct(&b))
        fail("the call without failures is wrong", rc);
    cold(c, &b);
    tuna_test_alloc_fail(0);
    rc = run(c, &b);
    long n = tuna_test_alloc_count(), lo = 0, hi = 0;
    PMPI_Allreduce(&n, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&n, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi) {
        if (me == 0)
            printf("  skipped %s: %ld to %ld allocations per rank (not rank-symmetric)\n",
                   current, lo, hi);
        skipped++;
        alarm(0);
        teardown(&b);
        return;
    }
    long k = 1;
    for (; k <= MAX_K; k++) {
        current_k = k;
        alarm(WATCHDOG_SEC);
        cold(c, &b);
        tuna_test_alloc_fail(k);
        rc = run(c, &b);
        bool hit = tuna_test_alloc_hit();
        tuna_test_alloc_fail(0);
        if (rc == MPI_SUCCESS && !correct(&b))
            fail("success with wrong data", rc);
        else if (rc == MPI_ERR_NO_MEM && !hit)
            fail("MPI_ERR_NO_MEM without a failed allocation", rc);
        else if (rc == MPI_ERR_NO_MEM && !strstr(tuna_error_string(rc), "memory"))
            fail("MPI_ERR_NO_MEM without tuna's message", rc);
        else if (rc != MPI_SUCCESS && rc != MPI_ERR_NO_MEM)
            fail("neither success nor MPI_ERR_NO_MEM", rc);
        bool done = all(rc == MPI_SUCCESS && !hit);
        if (!done) {
            /* The communicator is still usable: nothing of the failed call is in flight. */
            rc = run(c, &b);
            if (rc != MPI_SUCCESS || !correct(&b))
                fail("the call after the failure is wrong", rc);
        }
        if (done)
            break;
    }
    alarm(0);
    if (k > MAX_K)
        fail("the sweep did not end", MPI_SUCCESS);
    swept++;
    if (me == 0 && getenv("TUNA_TEST_VERBOSE"))
        printf("  %s: %ld allocations failed in turn\n", current, k - 1);
    teardown(&b);
}

/* ------------------------------------------------------------------ the case list */

static void add_form(tuna_collective coll, const char *str, int variant, bool plan,
                     bool nonblocking)
{
    tcase c = {.coll = coll, .variant = variant, .plan = plan, .nonblocking = nonblocking};
    if (tuna_options_parse(str, coll, &c.opt) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: cannot parse '%s'\n", str);
        failures++;
        return;
    }
    c.has_cold = coll == TUNA_ALLTOALL &&
                 tuna_options_parse(str, TUNA_ALLTOALLV, &c.cold_opt) == MPI_SUCCESS;
    sweep(&c);
}

static void add(tuna_collective coll, const char *str, int variant, bool plan)
{
    add_form(coll, str, variant, plan, false);
}

/* allgather / allreduce: blocking and nonblocking. */
static void add_both(tuna_collective coll, const char *str)
{
    add(coll, str, 0, false);
    add_form(coll, str, 0, false, true);
}

/* P is a power of k (recursive multiplying runs without folded groups). */
static bool power_of(int k)
{
    long q = 1;
    while (q < P)
        q *= k;
    return q == P;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    signal(SIGALRM, on_alarm);
    char s[64];

    /* alltoallv: every row with its defaults, three data variants, blocking and as a plan. */
    for (int a = 0; a < tuna_algorithm_count(TUNA_ALLTOALLV); a++) {
        const char *name = tuna_algorithm_get(TUNA_ALLTOALLV, a)->name;
        for (int v = 0; v < 3; v++)
            add(TUNA_ALLTOALLV, name, v, false);
        add(TUNA_ALLTOALLV, name, 0, true);
    }
    /* Parameter edges: TuNA with many rounds and batches (slots, staging, arena growth),
     * one round per batch, the linear end; padded-bruck's datatype rounds. */
    static const char *const variants[] = {"tuna:radix=2", "tuna:radix=2,block=1",
                                           "tuna:radix=3,block=1", "padded-bruck:datatype=1",
                                           "coalesced:radix=2", "staggered:radix=2,block=1"};
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++)
        for (int v = 0; v < 2; v++)
            add(TUNA_ALLTOALLV, variants[i], v, false);

    /* allgather / allreduce: every row; the recursive-multiplying family with k = P (no
     * folding) and, where P is a power of 2, with k = 2. */
    for (int coll = TUNA_ALLGATHER; coll <= TUNA_ALLREDUCE; coll++)
        for (int a = 0; a < tuna_algorithm_count((tuna_collective)coll); a++) {
            const tuna_algorithm_info *info = tuna_algorithm_get((tuna_collective)coll, a);
            if (info->nparams == 1 && strcmp(info->params[0].name, "k") == 0) {
                snprintf(s, sizeof s, "%s:k=%d", info->name, P < 2 ? 2 : P);
                add_both((tuna_collective)coll, s);
                if (P > 2 && power_of(2)) {
                    snprintf(s, sizeof s, "%s:k=2", info->name);
                    add_both((tuna_collective)coll, s);
                }
            } else {
                add_both((tuna_collective)coll, info->name);
            }
            if (a == 1) /* plans of the other collectives: one row each */
                add((tuna_collective)coll, info->name, 0, true);
        }

    /* alltoall: every row blocking with a vector type in place (packing, and the per-call
     * copy of the blocks to send on top of what a call out of place allocates) and as a plan
     * with ints out of place (the init's allocations, then the start's). Their step forms on
     * the other inputs are alltoallv's, swept above; one input each keeps this test's time
     * (it runs under the sanitizers) within a third more than without alltoall. */
    for (int a = 0; a < tuna_algorithm_count(TUNA_ALLTOALL); a++) {
        const char *name = tuna_algorithm_get(TUNA_ALLTOALL, a)->name;
        add(TUNA_ALLTOALL, name, 1, false);
        add(TUNA_ALLTOALL, name, 0, true);
    }
    /* mesh's other edges (the default is 2 dimensions): one dimension allocates no
     * temporary, three or P (clamped to P's prime factors) run more phases on it. */
    static const char *const a2a_variants[] = {"mesh:dims=1", "mesh:dims=3", "mesh:dims=P"};
    for (size_t i = 0; i < sizeof a2a_variants / sizeof *a2a_variants; i++)
        add(TUNA_ALLTOALL, a2a_variants[i], 1, false);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_alloc_failure: P=%d, %d cases swept, %d skipped, %d failures\n", P, swept,
               skipped, total);
    MPI_Finalize();
    return total != 0;
}
