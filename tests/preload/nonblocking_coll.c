/*
 * MPI_Iallgather, MPI_Iallreduce and the persistent allgather and allreduce under the preload
 * library, as an application uses them (no tuna header): every receive buffer is
 * sentinel-filled (with guard elements after the data) and checked element by element
 * against values computed from formulas.
 *   1. one MPI_Iallgather and one MPI_Iallreduce completed by each completion call:
 *      MPI_Wait, MPI_Test (polled), MPI_Waitall / MPI_Testall / MPI_Waitany / MPI_Testany /
 *      MPI_Waitsome / MPI_Testsome over an array that mixes them with point-to-point
 *      requests, MPI_Request_get_status; in place on every other call;
 *   2. four outstanding on one communicator (both collectives), completed in reverse order;
 *   3. local starts: rank 0 starts (MPI_Iallgather, MPI_Iallreduce; MPI_Start of a persistent
 *      allgather and allreduce), then hands rank 1 a token with MPI_Ssend, which rank 1
 *      receives before it starts: a start that waited for rank 1 would hang (a watchdog
 *      alarm fails the run);
 *   4. MPI_Request_free on an MPI_Iallgather in flight, then MPI_Barrier and more calls;
 *      MPI_Cancel on an MPI_Iallreduce request is an error (the request then completes).
 * run_client.py checks in the TUNA_STATS file that tuna ran the nonblocking calls
 * ("iallgather", "iallreduce") and the plans' starts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "tuna_mpi_features.h"
#include "completion.h"

#define SENTINEL (-7777)
#define GUARD 3

static int val(int rank, int i, int salt) { return rank * 1000 + i * 10 + salt; }

/* One allgather or allreduce: n ints per rank (allgather: rank r's block r). */
typedef struct call {
    int gather, n, salt, inplace;
    int *sbuf, *rbuf, rlen;
} call;
static call freed_in_flight; /* the buffers of an operation whose request was freed */

static void call_fill(call *c)
{
    for (int i = 0; i < c->rlen; i++)
        c->rbuf[i] = SENTINEL;
    for (int i = 0; i < c->n; i++)
        c->sbuf[i] = val(me, i, c->salt);
    if (c->inplace) /* the input lives in the receive buffer */
        memcpy(c->rbuf + (c->gather ? me * c->n : 0), c->sbuf, sizeof(int) * (size_t)c->n);
}

static void call_make(call *c, int gather, int n, int salt, int inplace)
{
    *c = (call){.gather = gather, .n = n, .salt = salt, .inplace = inplace};
    c->sbuf = malloc(sizeof(int) * (size_t)(n + 1));
    c->rlen = (gather ? P * n : n) + GUARD;
    c->rbuf = malloc(sizeof(int) * (size_t)c->rlen);
    call_fill(c);
}

static int call_ok(const call *c)
{
    const int data = c->gather ? P * c->n : c->n;
    for (int i = 0; i < data; i++) {
        int want = 0;
        if (c->gather)
            want = val(i / c->n, i % c->n, c->salt);
        else
            for (int r = 0; r < P; r++)
                want += val(r, i, c->salt);
        if (c->rbuf[i] != want)
            return 0;
    }
    for (int i = data; i < c->rlen; i++)
        if (c->rbuf[i] != SENTINEL)
            return 0;
    return 1;
}

static void call_free(call *c)
{
    free(c->sbuf);
    free(c->rbuf);
}

static int call_start(call *c, MPI_Request *req)
{
    const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
    return c->gather ? MPI_Iallgather(s, c->n, MPI_INT, c->rbuf, c->n, MPI_INT, MPI_COMM_WORLD,
                                      req)
                     : MPI_Iallreduce(s, c->rbuf, c->n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
}

/* 1. Each completion call, with point-to-point requests in the same array. */
static void completion_calls(void)
{
    for (int mode = 0; mode < COMPLETION_MODES; mode++) {
        call g, r;
        call_make(&g, 1, 3 + mode % 4, mode + 1, mode & 1);
        call_make(&r, 0, 5 + mode, mode + 11, !(mode & 1));
        MPI_Request q[4];
        int in = -1, out = me;
        expect(call_start(&g, &q[0]) == MPI_SUCCESS, "MPI_Iallgather", mode);
        MPI_Irecv(&in, 1, MPI_INT, (me - 1 + P) % P, 5, MPI_COMM_WORLD, &q[1]);
        expect(call_start(&r, &q[2]) == MPI_SUCCESS, "MPI_Iallreduce", mode);
        MPI_Isend(&out, 1, MPI_INT, (me + 1) % P, 5, MPI_COMM_WORLD, &q[3]);
        MPI_Status st[4];
        complete_with(mode, 4, q, st);
        for (int i = 0; i < 4; i++)
            expect(q[i] == MPI_REQUEST_NULL, "requests freed by the completion", mode);
        expect(in == (me - 1 + P) % P, "point-to-point message", mode);
        expect(call_ok(&g), "MPI_Iallgather's receive buffer", mode);
        expect(call_ok(&r), "MPI_Iallreduce's receive buffer", mode);
        call_free(&g);
        call_free(&r);
    }
}

/* 2. Four outstanding, completed in reverse order. */
static void outstanding(void)
{
    call c[4];
    MPI_Request q[4];
    for (int i = 0; i < 4; i++) {
        call_make(&c[i], i % 2 == 0, 4 + i, 20 + i, i == 1);
        call_start(&c[i], &q[i]);
    }
    for (int i = 3; i >= 0; i--) {
        MPI_Wait(&q[i], MPI_STATUS_IGNORE);
        expect(call_ok(&c[i]), "four outstanding", i);
        call_free(&c[i]);
    }
}

#ifdef ALLGATHER_INIT
static int call_init(call *c, MPI_Request *req)
{
    const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
    return c->gather ? ALLGATHER_INIT(s, c->n, MPI_INT, c->rbuf, c->n, MPI_INT, MPI_COMM_WORLD,
                                      MPI_INFO_NULL, req)
                     : ALLREDUCE_INIT(s, c->rbuf, c->n, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                      MPI_INFO_NULL, req);
}
#endif

/* 3. Starts are local (nonblocking and, where the library has persistent collectives, the
 * starts of plans: 3 of each collective per rank). */
static void local_starts(void)
{
    if (P < 2)
        return;
    for (int gather = 1; gather >= 0; gather--) {
        call c;
        call_make(&c, gather, 6, 31 + gather, 0);
        MPI_Request r;
        int token = 1;
        if (me == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        call_start(&c, &r);
        if (me == 0)
            MPI_Ssend(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        expect(call_ok(&c), gather ? "local MPI_Iallgather start" : "local MPI_Iallreduce start",
               0);
#ifdef ALLGATHER_INIT
        MPI_Request pr;
        expect(call_init(&c, &pr) == MPI_SUCCESS, "persistent init", gather);
        for (int it = 0; it < 3; it++) {
            c.salt = 40 + it;
            call_fill(&c);
            if (me == 1)
                MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Start(&pr);
            if (me == 0)
                MPI_Ssend(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
            int flag = 0;
            if (it == 1)
                MPI_Wait(&pr, MPI_STATUS_IGNORE);
            else
                while (!flag)
                    MPI_Test(&pr, &flag, MPI_STATUS_IGNORE);
            expect(call_ok(&c), gather ? "local MPI_Start of a persistent allgather"
                                       : "local MPI_Start of a persistent allreduce",
                   it);
        }
        MPI_Request_free(&pr);
#endif
        call_free(&c);
    }
}

/* 4. Freed in flight; cancel refused. */
static int start_any(void *c, MPI_Request *req)
{
    return call_start(c, req);
}

static void free_and_cancel(void)
{
    call x, y;
    call_make(&x, 1, 5, 51, 0);
    call_make(&y, 0, 7, 52, 1);
    int freed, refused;
    free_and_cancel_with(start_any, &x, &y, &freed, &refused);
    expect(freed, "MPI_Request_free of an MPI_Iallgather in flight", 0);
    expect(refused, "MPI_Cancel of an MPI_Iallreduce is an error", 0);
    expect(call_ok(&y), "MPI_Iallreduce after a refused cancel", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    call_free(&y);
    /* x's operation finishes at the latest in MPI_Finalize: its buffers are freed after. */
    freed_in_flight = x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    client_start(120);
    /* Blocking calls first: tuna sets MPI_COMM_WORLD up then (a nonblocking start may not
     * communicate to do it). */
    for (int gather = 0; gather < 2; gather++) {
        call w;
        call_make(&w, gather, 4, 0, 0);
        if (gather)
            MPI_Allgather(w.sbuf, w.n, MPI_INT, w.rbuf, w.n, MPI_INT, MPI_COMM_WORLD);
        else
            MPI_Allreduce(w.sbuf, w.rbuf, w.n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        expect(call_ok(&w), gather ? "MPI_Allgather" : "MPI_Allreduce", 0);
        call_free(&w);
    }
    completion_calls();
    outstanding();
    local_starts();
    free_and_cancel();
    const int total = client_outcome("nonblocking_coll");
    MPI_Finalize();
    call_free(&freed_in_flight);
    return total ? 1 : 0;
}
