/*
 * The shortest path of repeated calls for allgather and allreduce (docs/tuning.md, "The
 * library's call, at once"; alltoall's: test_alltoall --settled-vendor). Run with
 * TUNA_TUNING=tests/data/tuning_vendor_collectives.json, whose entries send every allgather
 * and allreduce to `vendor`: auto settles on the library's call at once, and a call that
 * repeats the last one's predefined types, counts (and op) goes to the library before tuna's
 * call set-up. Checked: repeated valid calls give PMPI's bytes (sentinel beyond the result);
 * bad arguments of the same size between them get tuna's error code and message, never the
 * library's error handler, and the next call is fine; an op, type or in-place change still
 * gives PMPI's result; parsed `auto` options take the same path; a repeated call with
 * statistics on is recorded (vendor, the table's source 2).
 */
#include "tuna.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_expect.h"

#define SENTINEL 0x5A
#define COUNT 6 /* elements per call (allgather: per rank) */
#define GUARD 8 /* ints past the result that must keep the sentinel */

static void fill(int *buf, int n, int salt)
{
    for (int i = 0; i < n; i++)
        buf[i] = me * 1000 + i * 7 + salt;
}

/* A valid allgather of COUNT ints (in place or not) with opt, against PMPI_Allgather. */
static void allgather_valid(const tuna_options *opt, int inplace, int salt, const char *what)
{
    const int n = P * COUNT + GUARD;
    int *send = malloc(sizeof(int) * COUNT), *got = malloc(sizeof(int) * (size_t)n),
        *want = malloc(sizeof(int) * (size_t)n);
    fill(send, COUNT, salt);
    memset(got, SENTINEL, sizeof(int) * (size_t)n);
    if (inplace)
        memcpy(got + me * COUNT, send, sizeof(int) * COUNT);
    memcpy(want, got, sizeof(int) * (size_t)n);
    PMPI_Allgather(inplace ? MPI_IN_PLACE : send, COUNT, MPI_INT, want, COUNT, MPI_INT,
                   MPI_COMM_WORLD);
    const int rc = tuna_allgather(inplace ? MPI_IN_PLACE : send, COUNT, MPI_INT, got, COUNT,
                                  MPI_INT, MPI_COMM_WORLD, opt);
    expect(rc == MPI_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)n) == 0,
           "allgather: PMPI's bytes, sentinel intact", what, rc);
    free(send);
    free(got);
    free(want);
}

/* A valid allreduce of COUNT elements of type (int or double) with op and opt. */
static void allreduce_valid(const tuna_options *opt, MPI_Datatype type, MPI_Op op, int inplace,
                            int salt, const char *what)
{
    const size_t esize = type == MPI_DOUBLE ? sizeof(double) : sizeof(int);
    const size_t bytes = esize * (COUNT + GUARD);
    unsigned char *send = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    for (int i = 0; i < COUNT; i++) {
        const int v = (me * 31 + i * 5 + salt) % 97;
        if (type == MPI_DOUBLE)
            ((double *)send)[i] = v * 0.5;
        else
            ((int *)send)[i] = v;
    }
    memset(got, SENTINEL, bytes);
    if (inplace)
        memcpy(got, send, esize * COUNT);
    memcpy(want, got, bytes);
    PMPI_Allreduce(inplace ? MPI_IN_PLACE : send, want, COUNT, type, op, MPI_COMM_WORLD);
    const int rc = tuna_allreduce(inplace ? MPI_IN_PLACE : send, got, COUNT, type, op,
                                  MPI_COMM_WORLD, opt);
    expect(rc == MPI_SUCCESS && memcmp(got, want, bytes) == 0,
           "allreduce: PMPI's result, sentinel intact", what, rc);
    free(send);
    free(got);
    free(want);
}

/* rc is `code` with tuna's message (its argument checks name the rank), not the library's. */
static void expect_error(int rc, int code, const char *coll, const char *what)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%s: error %d with tuna's message", what, code);
    expect(rc == code && strstr(tuna_error_string(rc), "rank ") != NULL, msg, coll, rc);
}

static void allgather_cases(void)
{
    allgather_valid(NULL, 0, 1, "allgather: first call (the table's vendor)");
    allgather_valid(NULL, 0, 2, "allgather: repeated");
    allgather_valid(NULL, 0, 3, "allgather: repeated again");
    int *send = calloc(COUNT + 1, sizeof(int)), *recv = calloc((size_t)P * COUNT + 8, sizeof(int));
    const struct {
        const void *s;
        int scount;
        MPI_Datatype stype;
        void *r;
        MPI_Datatype rtype;
        int code;
        const char *what;
    } bad[] = {
        {send, COUNT + 1, MPI_INT, recv, MPI_INT, MPI_ERR_TRUNCATE, "send block larger"},
        {send, -1, MPI_INT, recv, MPI_INT, MPI_ERR_COUNT, "negative sendcount"},
        {send, COUNT, MPI_DATATYPE_NULL, recv, MPI_INT, MPI_ERR_TYPE, "sendtype NULL"},
        {send, COUNT, MPI_INT, recv, MPI_DATATYPE_NULL, MPI_ERR_TYPE, "recvtype NULL"},
        {NULL, COUNT, MPI_INT, recv, MPI_INT, MPI_ERR_BUFFER, "NULL sendbuf"},
        {send, COUNT, MPI_INT, NULL, MPI_INT, MPI_ERR_BUFFER, "NULL recvbuf"},
        {send, COUNT, MPI_INT, MPI_IN_PLACE, MPI_INT, MPI_ERR_BUFFER, "recvbuf MPI_IN_PLACE"},
        {recv, COUNT, MPI_INT, recv, MPI_INT, MPI_ERR_BUFFER, "sendbuf aliases recvbuf"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const int rc = tuna_allgather(bad[k].s, bad[k].scount, bad[k].stype, bad[k].r, COUNT,
                                      bad[k].rtype, MPI_COMM_WORLD, NULL);
        expect_error(rc, bad[k].code, "allgather", bad[k].what);
        allgather_valid(NULL, (int)(k % 2), 10 + (int)k, "allgather: the call after a bad one");
    }
    free(send);
    free(recv);
    tuna_options autoopt;
    tuna_options_parse("auto", TUNA_ALLGATHER, &autoopt);
    for (int k = 0; k < 3; k++)
        allgather_valid(&autoopt, 0, 30 + k, "allgather: parsed auto options");
}

static void int_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

static void allreduce_cases(void)
{
    allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 1, "allreduce: first call (the table's vendor)");
    allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 2, "allreduce: repeated");
    allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 3, "allreduce: repeated again");
    /* another op, type, in place: each a change the repeat must see (the results say) */
    allreduce_valid(NULL, MPI_INT, MPI_MAX, 0, 4, "allreduce: MPI_MAX after MPI_SUM");
    allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 5, "allreduce: MPI_SUM after MPI_MAX");
    allreduce_valid(NULL, MPI_INT, MPI_SUM, 1, 6, "allreduce: in place");
    allreduce_valid(NULL, MPI_DOUBLE, MPI_SUM, 0, 7, "allreduce: double after int");
    /* a user's op: never kept (its handle could be freed and come back as another op) */
    MPI_Op mine;
    MPI_Op_create(int_sum, 1, &mine);
    for (int k = 0; k < 2; k++)
        allreduce_valid(NULL, MPI_INT, mine, 0, 8 + k, "allreduce: a user's op, repeated");
    int *send = calloc(COUNT + 1, sizeof(int)), *recv = calloc(COUNT + 1, sizeof(int));
    const struct {
        const void *s;
        void *r;
        int count;
        MPI_Datatype type;
        MPI_Op op;
        int code;
        const char *what;
    } bad[] = {
        {send, recv, -1, MPI_INT, MPI_SUM, MPI_ERR_COUNT, "negative count"},
        {send, recv, COUNT, MPI_DATATYPE_NULL, MPI_SUM, MPI_ERR_TYPE, "datatype NULL"},
        {send, recv, COUNT, MPI_INT, MPI_OP_NULL, MPI_ERR_OP, "op MPI_OP_NULL"},
        {NULL, recv, COUNT, MPI_INT, MPI_SUM, MPI_ERR_BUFFER, "NULL sendbuf"},
        {send, NULL, COUNT, MPI_INT, MPI_SUM, MPI_ERR_BUFFER, "NULL recvbuf"},
        {send, MPI_IN_PLACE, COUNT, MPI_INT, MPI_SUM, MPI_ERR_BUFFER, "recvbuf MPI_IN_PLACE"},
        {recv, recv, COUNT, MPI_INT, MPI_SUM, MPI_ERR_BUFFER, "sendbuf aliases recvbuf"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 20 + (int)k, "allreduce: before a bad call");
        const int rc = tuna_allreduce(bad[k].s, bad[k].r, bad[k].count, bad[k].type, bad[k].op,
                                      MPI_COMM_WORLD, NULL);
        expect_error(rc, bad[k].code, "allreduce", bad[k].what);
    }
    allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 40, "allreduce: after the bad calls");
    MPI_Op_free(&mine);
    free(send);
    free(recv);
    tuna_options autoopt;
    tuna_options_parse("auto", TUNA_ALLREDUCE, &autoopt);
    for (int k = 0; k < 3; k++)
        allreduce_valid(&autoopt, MPI_INT, MPI_SUM, 0, 50 + k, "allreduce: parsed auto options");
}

/* With statistics on, a repeated call is recorded: the vendor row, the table's source. */
static void statistics_cases(void)
{
    tuna_stats_enable(1);
    for (int k = 0; k < 2; k++) {
        allgather_valid(NULL, 0, 60 + k, "allgather: statistics on");
        const tuna_stats *st = tuna_stats_last();
        expect(st->algorithm == tuna_algorithm_find(TUNA_ALLGATHER, "vendor") &&
                   st->auto_source == 2,
               "allgather: a repeated call with statistics on is recorded (vendor, source 2)",
               "auto", MPI_SUCCESS);
        allreduce_valid(NULL, MPI_INT, MPI_SUM, 0, 70 + k, "allreduce: statistics on");
        st = tuna_stats_last();
        expect(st->algorithm == tuna_algorithm_find(TUNA_ALLREDUCE, "vendor") &&
                   st->auto_source == 2,
               "allreduce: a repeated call with statistics on is recorded (vendor, source 2)",
               "auto", MPI_SUCCESS);
    }
    tuna_stats_enable(0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    allgather_cases();
    allreduce_cases();
    statistics_cases();
    if (me == 0)
        printf("test_repeat P=%d: %s\n", P, failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures ? 1 : 0;
}
