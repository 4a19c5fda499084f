/*
 * MPI_Ialltoallv and local persistent starts under the preload library, as an application
 * uses them (no tuna header): every receive buffer is sentinel-filled and checked element by
 * element against values computed from the formula, gaps included.
 *   1. MPI_Ialltoallv completed by each completion call: MPI_Wait, MPI_Test (polled),
 *      MPI_Waitall / MPI_Testall / MPI_Waitany / MPI_Testany / MPI_Waitsome / MPI_Testsome
 *      over an array that mixes it with point-to-point requests, MPI_Request_get_status;
 *   2. two MPI_Ialltoallv outstanding on one communicator, completed in reverse order;
 *   3. local starts: rank 0 starts (MPI_Ialltoallv; MPI_Start of a persistent alltoallv),
 *      then hands rank 1 a token with MPI_Ssend, which rank 1 receives before it starts: a
 *      start that waited for rank 1 would hang (a watchdog alarm fails the run);
 *   4. MPI_Request_free on an MPI_Ialltoallv in flight, then MPI_Barrier and more calls;
 *   5. MPI_Cancel on an MPI_Ialltoallv request is an error (the request then completes);
 *   7. where the preload defines MPI_Ialltoallv_c (TUNA_TEST_IALLTOALLV_C: MPICH 4), one
 *      MPI_Ialltoallv_c completed by MPI_Wait;
 *   6. with TUNA_PROGRESS=thread only: rank 0 starts, then blocks in MPI_Recv until the
 *      last rank has completed the same MPI_Ialltoallv with MPI_Wait (which needs rank 0's
 *      later messages: without tuna's progress thread this hangs).
 * run_client.py checks in the TUNA_STATS file that tuna ran the nonblocking calls.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "tuna_mpi_features.h"
#include "completion.h"

#define SENTINEL (-7777)

/* NB_TRACE=1: each rank says which case it enters (to locate a crash). */
static void trace(const char *what, int it)
{
    if (getenv("NB_TRACE"))
        fprintf(stderr, "rank %d: %s %d\n", me, what, it);
}

/* Counts, displacements (gaps between blocks) and values from formulas. */
static int cnt(int from, int to, int salt) { return (from * 7 + to * 3 + salt) % 5; }
static int val(int from, int to, int i, int salt) { return from * 100000 + to * 1000 + i * 10 + salt; }

typedef struct ex {
    int *sc, *sd, *rc, *rd, *sbuf, *rbuf, rlen, salt;
} ex;
static ex freed_in_flight; /* the buffers of an MPI_Ialltoallv whose request was freed */

static void ex_make(ex *x, int salt)
{
    x->salt = salt;
    x->sc = malloc(sizeof(int) * 4 * (size_t)P);
    x->sd = x->sc + P;
    x->rc = x->sc + 2 * P;
    x->rd = x->sc + 3 * P;
    int s = 0, r = 0;
    for (int j = 0; j < P; j++) {
        x->sc[j] = cnt(me, j, salt);
        x->sd[j] = s;
        s += x->sc[j] + 1;
        x->rc[j] = cnt(j, me, salt);
        x->rd[j] = r;
        r += x->rc[j] + 2;
    }
    x->sbuf = malloc(sizeof(int) * (size_t)(s + 1));
    x->rlen = r + 1;
    x->rbuf = malloc(sizeof(int) * (size_t)x->rlen);
    for (int j = 0; j < P; j++)
        for (int i = 0; i < x->sc[j]; i++)
            x->sbuf[x->sd[j] + i] = val(me, j, i, salt);
    for (int i = 0; i < x->rlen; i++)
        x->rbuf[i] = SENTINEL;
}

static int ex_ok(const ex *x)
{
    int pos = 0;
    for (int j = 0; j < P; j++) {
        for (; pos < x->rd[j]; pos++)
            if (x->rbuf[pos] != SENTINEL)
                return 0;
        for (int i = 0; i < x->rc[j]; i++, pos++)
            if (x->rbuf[pos] != val(j, me, i, x->salt))
                return 0;
    }
    for (; pos < x->rlen; pos++)
        if (x->rbuf[pos] != SENTINEL)
            return 0;
    return 1;
}

static void ex_free(ex *x)
{
    free(x->sc);
    free(x->sbuf);
    free(x->rbuf);
}

static int ex_start(ex *x, MPI_Request *req)
{
    return MPI_Ialltoallv(x->sbuf, x->sc, x->sd, MPI_INT, x->rbuf, x->rc, x->rd, MPI_INT,
                          MPI_COMM_WORLD, req);
}

/* 1. Each completion call, with point-to-point requests in the same array. */
static void completion_calls(void)
{
    for (int mode = 0; mode < COMPLETION_MODES; mode++) {
        trace("completion mode", mode);
        ex x;
        ex_make(&x, mode + 1);
        MPI_Request r[3];
        int in = -1, out = me;
        expect(ex_start(&x, &r[0]) == MPI_SUCCESS, "MPI_Ialltoallv", mode);
        MPI_Irecv(&in, 1, MPI_INT, (me - 1 + P) % P, 5, MPI_COMM_WORLD, &r[1]);
        MPI_Isend(&out, 1, MPI_INT, (me + 1) % P, 5, MPI_COMM_WORLD, &r[2]);
        MPI_Status st[3];
        complete_with(mode, 3, r, st);
        for (int i = 0; i < 3; i++)
            expect(r[i] == MPI_REQUEST_NULL, "requests freed by the completion", mode);
        expect(in == (me - 1 + P) % P, "point-to-point message", mode);
        expect(ex_ok(&x), "MPI_Ialltoallv's receive buffer", mode);
        ex_free(&x);
    }
}

/* 2. Two outstanding, completed in reverse order. */
static void two_outstanding(void)
{
    trace("two outstanding", 0);
    ex a, b;
    ex_make(&a, 21);
    ex_make(&b, 22);
    MPI_Request ra, rb;
    ex_start(&a, &ra);
    ex_start(&b, &rb);
    MPI_Wait(&rb, MPI_STATUS_IGNORE);
    MPI_Wait(&ra, MPI_STATUS_IGNORE);
    expect(ex_ok(&a) && ex_ok(&b), "two outstanding MPI_Ialltoallv", 0);
    ex_free(&a);
    ex_free(&b);
}

/* 3. Starts are local. */
static void local_starts(void)
{
    trace("local starts", 0);
    if (P < 2)
        return;
    ex x;
    ex_make(&x, 31);
    MPI_Request r;
    int token = 1;
    if (me == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ex_start(&x, &r);
    if (me == 0)
        MPI_Ssend(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    expect(ex_ok(&x), "local MPI_Ialltoallv start", 0);
#ifdef ALLTOALLV_INIT
    for (int i = 0; i < x.rlen; i++)
        x.rbuf[i] = SENTINEL;
    MPI_Request pr;
    ALLTOALLV_INIT(x.sbuf, x.sc, x.sd, MPI_INT, x.rbuf, x.rc, x.rd, MPI_INT, MPI_COMM_WORLD,
                   MPI_INFO_NULL, &pr);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < x.rlen; i++)
            x.rbuf[i] = SENTINEL;
        if (me == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Start(&pr);
        if (me == 0)
            MPI_Ssend(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        expect(ex_ok(&x), "local MPI_Start of a persistent alltoallv", it);
    }
    MPI_Request_free(&pr);
#endif
    ex_free(&x);
}

/* 4. Freed in flight; 5. cancel refused. */
static int start_any(void *x, MPI_Request *req)
{
    return ex_start(x, req);
}

static void free_and_cancel(void)
{
    trace("free and cancel", 0);
    ex x, y;
    ex_make(&x, 41);
    ex_make(&y, 42);
    int freed, refused;
    free_and_cancel_with(start_any, &x, &y, &freed, &refused);
    expect(freed, "MPI_Request_free of an MPI_Ialltoallv in flight", 0);
    expect(refused, "MPI_Cancel of an MPI_Ialltoallv is an error", 0);
    expect(ex_ok(&y), "MPI_Ialltoallv after a refused cancel", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    ex_free(&y);
    /* x's operation finishes at the latest in MPI_Finalize: its buffers are freed after. */
    freed_in_flight = x;
}

/* 7. The large-count form (MPI 4). */
static void large_count_form(void)
{
#ifdef TUNA_TEST_IALLTOALLV_C
    trace("MPI_Ialltoallv_c", 0);
    ex x;
    ex_make(&x, 61);
    MPI_Count *c = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int j = 0; j < P; j++) {
        c[j] = x.sc[j], c[P + j] = x.rc[j];
        d[j] = x.sd[j], d[P + j] = x.rd[j];
    }
    MPI_Request r;
    MPI_Ialltoallv_c(x.sbuf, c, d, MPI_INT, x.rbuf, c + P, d + P, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    expect(ex_ok(&x), "MPI_Ialltoallv_c", 0);
    free(c);
    free(d);
    ex_free(&x);
#endif
}

/* 6. Progress while rank 0 blocks in a call tuna does not see. */
static void progress_while_blocked(void)
{
    trace("progress while blocked", 0);
    if (P < 2)
        return;
    ex x;
    ex_make(&x, 51);
    MPI_Request r;
    int token = 1;
    ex_start(&x, &r);
    if (me == 0) {
        MPI_Recv(&token, 1, MPI_INT, P - 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (me == P - 1)
            MPI_Send(&token, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    }
    expect(ex_ok(&x), "MPI_Ialltoallv progressed while rank 0 blocks in MPI_Recv", 0);
    ex_free(&x);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    client_start(120);
    /* A blocking call first: tuna sets MPI_COMM_WORLD up then (a nonblocking start may
     * not communicate to do it). */
    ex w;
    ex_make(&w, 0);
    MPI_Alltoallv(w.sbuf, w.sc, w.sd, MPI_INT, w.rbuf, w.rc, w.rd, MPI_INT, MPI_COMM_WORLD);
    expect(ex_ok(&w), "MPI_Alltoallv", 0);
    ex_free(&w);
    completion_calls();
    two_outstanding();
    local_starts();
    free_and_cancel();
    large_count_form();
    const char *progress = getenv("TUNA_PROGRESS");
    if (progress && strcmp(progress, "thread") == 0)
        progress_while_blocked();
    const int total = client_outcome("nonblocking_alltoallv");
    MPI_Finalize();
    ex_free(&freed_in_flight);
    return total ? 1 : 0;
}
