/*
 * auto that learns (docs/tuning.md, "Learning"), checked from outside: every call of every
 * rank runs the same algorithm with the same parameters (allgathered from tuna_stats_last()),
 * also when one rank's timings differ wildly from the others' (it sleeps before some calls,
 * so the others wait inside theirs), and delivers PMPI's bytes (sentinel-filled receive
 * buffers); each class explores, then settles within the budget; a class found in wisdom (of
 * this process, or a file written by an earlier run) explores nothing. The same for
 * allgather and allreduce.
 *
 *   test_learn                       consistency + results, alltoallv / allgather / allreduce
 *   test_learn --write-wisdom FILE   ... then export the wisdom learned
 *   test_learn --read-wisdom FILE    import FILE first: every class starts from it
 *   test_learn --message-cost mixed  TUNA_LEARN_MESSAGE_COST 0 on rank 0, 50 us on the others:
 *                                    the ranks must agree on one cost (the least) or their
 *                                    candidates differ
 *   test_learn --message-cost high   50 us on every rank: the model prices every message at
 *                                    that (few-message rows first, floors)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "tuna.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/test_data.h"
#include "support/test_expect.h"
#include "tuna_select.h" /* TUNA_LEARN_ROUNDS, TUNA_LEARN_MAX, TUNA_LEARN_CALLS_DEFAULT */

/* The calls a class takes before it settles, at most (docs/tuning.md, "Learning"): 1 +
 * TUNA_LEARN_CLIMBS phases (the model's candidates, then the winner's neighbouring
 * parameters, again while a neighbour wins), each at most
 * TUNA_LEARN_ROUNDS rounds (no candidate is timed more often), a round one untimed call and
 * at most TUNA_LEARN_MAX timed ones, and a phase's timed calls end at the first round's end
 * at or past the budget (TUNA_LEARN_CALLS_DEFAULT: at most TUNA_LEARN_MAX - 1 beyond it).
 * With the defaults 4 x (3 + min(18, 45)) = 84. */
#define LEARN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PHASE_CALLS                                                                           \
    (TUNA_LEARN_ROUNDS + LEARN_MIN(TUNA_LEARN_ROUNDS * TUNA_LEARN_MAX,                        \
                                   TUNA_LEARN_CALLS_DEFAULT - 1 + TUNA_LEARN_MAX))
/* the first settled call's index, at the latest */
#define SETTLED_BY ((1 + TUNA_LEARN_CLIMBS) * PHASE_CALLS)
#define CALLS_PER_CLASS 100 /* and then some settled calls (drift checks among them) */
_Static_assert(CALLS_PER_CLASS > SETTLED_BY + 8, "test_learn: too few calls to see a class settle");
#define CALLS_FROM_WISDOM 6 /* a class from wisdom: its first calls tell */
#define SENTINEL 0xA5

/* Classes: small uniform blocks, large uniform blocks, a power law of mid-size blocks. */
enum { CLS_SMALL, CLS_LARGE, CLS_POWER, CLS_N };
static const char *const cls_names[CLS_N] = {"16 B uniform", "4 KiB uniform", "power law"};

/* The same counts on every call of a class (its agreed statistics stay in one class; counts
 * near a bucket's edge would make two classes, each learning apart: a property of classes,
 * not what this test checks). */
static int class_count(int cls, int src, int dst)
{
    uint64_t h = mix(((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ (uint64_t)cls);
    switch (cls) {
    case CLS_SMALL: return (int)(h % 17);
    case CLS_LARGE: return 2048 + (int)(h % 2049);
    default: return (int)(1500.0 / (1.0 + (double)(h % 64))); /* 23 .. 1500 bytes */
    }
}

static unsigned char payload(int src, int dst, int i)
{
    return (unsigned char)(mix(((uint64_t)src << 32) ^ ((uint64_t)dst << 16) ^ (uint64_t)i));
}

/* A rank that is slow on some calls: its peers' timings include waiting for it. */
static void maybe_sleep(int call)
{
    if (me != P - 1 || call % 3 != 1)
        return;
    struct timespec ts = {0, (long)(50000 + mix((uint64_t)call) % 250000)};
    nanosleep(&ts, NULL);
}

/* The choice this call ran, equal on every rank (algorithm, parameters, auto_source). */
static int check_same_choice(const char *what, int call)
{
    const tuna_stats *st = tuna_stats_last();
    long mine[2 + TUNA_MAX_PARAMS], all_min[2 + TUNA_MAX_PARAMS], all_max[2 + TUNA_MAX_PARAMS];
    mine[0] = st->algorithm;
    mine[1] = st->auto_source;
    for (int i = 0; i < TUNA_MAX_PARAMS; i++)
        mine[2 + i] = st->params[i];
    MPI_Allreduce(mine, all_min, 2 + TUNA_MAX_PARAMS, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, all_max, 2 + TUNA_MAX_PARAMS, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    int same = memcmp(all_min, all_max, sizeof all_min) == 0;
    if (!same)
        fprintf(stderr, "rank %d, %s call %d: algorithm %ld (%ld..%ld), source %ld (%ld..%ld)\n",
                me, what, call, mine[0], all_min[0], all_max[0], mine[1], all_min[1],
                all_max[1]);
    expect(same, "every rank ran the same choice", what, MPI_SUCCESS);
    return (int)mine[1];
}

/* The sources seen over one class's calls. */
typedef struct {
    int first, last, learning, settled_at;
} sources;

static void note_source(sources *s, int src, int call)
{
    if (call == 0)
        s->first = src;
    s->last = src;
    if (src == TUNA_AUTO_SOURCE_LEARNING)
        s->learning++;
    if (src != TUNA_AUTO_SOURCE_LEARNING && s->settled_at < 0)
        s->settled_at = call;
}

/* Expectations on a class's sources: learned (or from wisdom) within the budget. */
static void check_sources(const char *what, const sources *s, bool from_wisdom)
{
    char msg[160];
    if (failures) /* the class's calls stopped at the first failure, reported already */
        return;
    if (P == 1) { /* nothing to learn: the model decides */
        snprintf(msg, sizeof msg, "%s: P = 1 never learns (sources %d..%d)", what, s->first,
                 s->last);
        expect(s->learning == 0, msg, "auto", MPI_SUCCESS);
        return;
    }
    if (from_wisdom) {
        snprintf(msg, sizeof msg, "%s: from wisdom on its first call (source %d, %d exploring)",
                 what, s->first, s->learning);
        expect(s->first == TUNA_AUTO_SOURCE_WISDOM && s->learning == 0, msg, "auto",
               MPI_SUCCESS);
        return;
    }
    snprintf(msg, sizeof msg, "%s: explores first, then settles within the budget (first %d, "
                              "settled at call %d, last %d)",
             what, s->first, s->settled_at, s->last);
    expect(s->settled_at > 0 && s->settled_at <= SETTLED_BY &&
               (s->last == TUNA_AUTO_SOURCE_LEARNED || s->last == TUNA_AUTO_SOURCE_WISDOM),
           msg, "auto", MPI_SUCCESS);
}

static void alltoallv_class(MPI_Comm comm, int cls, bool from_wisdom)
{
    int *sc = malloc(sizeof(int) * 4 * (size_t)P);
    int *sd = sc + P, *rc_ = sc + 2 * P, *rd = sc + 3 * P;
    sources s = {.settled_at = -1};
    /* Between agreements auto runs the last agreed choice: a new pattern is seen at once only
     * when the application says so (else at the next periodic agreement). */
    int prc = tuna_pattern_changed(comm);
    expect(prc == MPI_SUCCESS, "tuna_pattern_changed", "auto", prc);
    const int calls = from_wisdom ? CALLS_FROM_WISDOM : CALLS_PER_CLASS;
    for (int call = 0; call < calls && !failures; call++) {
        size_t stot = 0, rtot = 0;
        for (int j = 0; j < P; j++) {
            sc[j] = class_count(cls, me, j);
            rc_[j] = class_count(cls, j, me);
            sd[j] = (int)stot;
            rd[j] = (int)rtot;
            stot += (size_t)sc[j];
            rtot += (size_t)rc_[j];
        }
        unsigned char *sbuf = malloc(stot + 1), *rbuf = malloc(rtot + 1),
                      *ref = malloc(rtot + 1);
        for (int j = 0; j < P; j++)
            for (int i = 0; i < sc[j]; i++)
                sbuf[sd[j] + i] = payload(me, j, i + call);
        memset(rbuf, SENTINEL, rtot + 1);
        memset(ref, SENTINEL, rtot + 1);
        PMPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, ref, rc_, rd, MPI_BYTE, comm);
        maybe_sleep(call);
        int rc = tuna_alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc_, rd, MPI_BYTE, comm, NULL);
        char what[96];
        snprintf(what, sizeof what, "alltoallv %s call %d", cls_names[cls], call);
        expect(rc == MPI_SUCCESS && memcmp(rbuf, ref, rtot + 1) == 0,
               "received bytes equal PMPI_Alltoallv's (sentinel intact)", what, rc);
        note_source(&s, check_same_choice(what, call), call);
        free(sbuf);
        free(rbuf);
        free(ref);
    }
    char what[64];
    snprintf(what, sizeof what, "alltoallv %s", cls_names[cls]);
    check_sources(what, &s, from_wisdom);
    free(sc);
}

static void allgather_class(MPI_Comm comm, int block, bool from_wisdom)
{
    unsigned char *sbuf = malloc((size_t)block), *rbuf = malloc((size_t)block * P + 1),
                  *ref = malloc((size_t)block * P + 1);
    sources s = {.settled_at = -1};
    const int calls = from_wisdom ? CALLS_FROM_WISDOM : CALLS_PER_CLASS;
    for (int call = 0; call < calls && !failures; call++) {
        for (int i = 0; i < block; i++)
            sbuf[i] = payload(me, call, i);
        memset(rbuf, SENTINEL, (size_t)block * P + 1);
        memset(ref, SENTINEL, (size_t)block * P + 1);
        PMPI_Allgather(sbuf, block, MPI_BYTE, ref, block, MPI_BYTE, comm);
        maybe_sleep(call);
        int rc = tuna_allgather(sbuf, block, MPI_BYTE, rbuf, block, MPI_BYTE, comm, NULL);
        char what[96];
        snprintf(what, sizeof what, "allgather %d B call %d", block, call);
        expect(rc == MPI_SUCCESS && memcmp(rbuf, ref, (size_t)block * P + 1) == 0,
               "received bytes equal PMPI_Allgather's", what, rc);
        note_source(&s, check_same_choice(what, call), call);
    }
    char what[64];
    snprintf(what, sizeof what, "allgather %d B", block);
    check_sources(what, &s, from_wisdom);
    free(sbuf);
    free(rbuf);
    free(ref);
}

static void allreduce_class(MPI_Comm comm, int count, bool from_wisdom)
{
    long *sbuf = malloc(sizeof(long) * (size_t)count), *rbuf = malloc(sizeof(long) * (count + 1)),
         *ref = malloc(sizeof(long) * (count + 1));
    sources s = {.settled_at = -1};
    const int calls = from_wisdom ? CALLS_FROM_WISDOM : CALLS_PER_CLASS;
    for (int call = 0; call < calls && !failures; call++) {
        for (int i = 0; i < count; i++)
            sbuf[i] = (long)(mix((uint64_t)(me * 131 + i + call)) % 1000);
        memset(rbuf, SENTINEL, sizeof(long) * (count + 1));
        memset(ref, SENTINEL, sizeof(long) * (count + 1));
        PMPI_Allreduce(sbuf, ref, count, MPI_LONG, MPI_SUM, comm);
        maybe_sleep(call);
        int rc = tuna_allreduce(sbuf, rbuf, count, MPI_LONG, MPI_SUM, comm, NULL);
        char what[96];
        snprintf(what, sizeof what, "allreduce %d longs call %d", count, call);
        expect(rc == MPI_SUCCESS && memcmp(rbuf, ref, sizeof(long) * (count + 1)) == 0,
               "result equals PMPI_Allreduce's", what, rc);
        note_source(&s, check_same_choice(what, call), call);
    }
    char what[64];
    snprintf(what, sizeof what, "allreduce %d longs", count);
    check_sources(what, &s, from_wisdom);
    free(sbuf);
    free(rbuf);
    free(ref);
}

static void every_class(MPI_Comm comm, bool from_wisdom)
{
    for (int cls = 0; cls < CLS_N && !failures; cls++)
        alltoallv_class(comm, cls, from_wisdom);
    allgather_class(comm, 64, from_wisdom);
    allreduce_class(comm, 1000, from_wisdom);
}

/* The tie rule: the library's call wins within the larger spread of the two, at most
 * TUNA_LEARN_TIE; samples that repeat exactly leave the fastest. */
static void check_ties(void)
{
    const double tie = TUNA_LEARN_TIE;
    expect(!tuna_learn_library_ties(10.1e-6, 0, 10e-6, 0), "tie: exact samples, 1% slower", "",
           0);
    expect(tuna_learn_library_ties(10e-6, 0, 10e-6, 0), "tie: equal times", "", 0);
    expect(tuna_learn_library_ties(10.3e-6, 0.04, 10e-6, 0.01), "tie: 3% within 4% spread", "",
           0);
    expect(tuna_learn_library_ties(10.3e-6, 0.01, 10e-6, 0.04), "tie: the winner's spread", "",
           0);
    expect(!tuna_learn_library_ties(10.5e-6, 0.04, 10e-6, 0.04), "tie: 5% beyond 4% spread", "",
           0);
    expect(!tuna_learn_library_ties(10e-6 * (1 + tie) * 1.01, 0.5, 10e-6, 0.5),
           "tie: spread capped at TUNA_LEARN_TIE", "", 0);
    expect(tuna_learn_library_ties(10e-6 * (1 + tie) * 0.99, 0.5, 10e-6, 0.5),
           "tie: within the cap", "", 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *write_path = NULL, *read_path = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--write-wisdom") == 0)
            write_path = argv[++i];
        else if (strcmp(argv[i], "--read-wisdom") == 0)
            read_path = argv[++i];
        else if (strcmp(argv[i], "--message-cost") == 0) {
            /* before tuna's first call, which reads the settings */
            const bool mixed = strcmp(argv[++i], "mixed") == 0;
            setenv("TUNA_LEARN_MESSAGE_COST", mixed && me == 0 ? "0" : "5e-5", 1);
        }
    }
    check_ties();
    tuna_stats_enable(1);
    if (read_path) {
        int rc = tuna_wisdom_import(read_path, MPI_COMM_WORLD);
        expect(rc == MPI_SUCCESS, "wisdom import", read_path, rc);
    }
    /* A communicator of its own: what it learns is in this process's wisdom afterwards. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (!failures)
        every_class(comm, read_path != NULL);
    /* A new communicator of the same shape starts from what the first one learned. */
    MPI_Comm again;
    MPI_Comm_dup(MPI_COMM_WORLD, &again);
    if (!failures)
        every_class(again, true);
    if (write_path && !failures) {
        int rc = tuna_wisdom_export(write_path, MPI_COMM_WORLD);
        expect(rc == MPI_SUCCESS, "wisdom export", write_path, rc);
    }
    MPI_Comm_free(&again);
    MPI_Comm_free(&comm);
    if (me == 0)
        printf("test_learn P=%d: %s\n", P, failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures ? 1 : 0;
}
