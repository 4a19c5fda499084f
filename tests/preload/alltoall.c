/*
 * MPI_Alltoall, MPI_Ialltoall and the persistent alltoall (MPI_Alltoall_init, MPI 4, or Open
 * MPI's MPIX_Alltoall_init) under the preload library, as an application calls them (no tuna
 * header). Every result is compared byte for byte, over the whole receive buffer (blocks and
 * guard bytes after them), with PMPI_Alltoall (the library's own, which the preload does not
 * intercept) run on the same sentinel-filled buffers; the send buffer must be unchanged.
 *   1. shapes: contiguous, non-contiguous (a vector with holes; a struct with a hole) and
 *      mixed send/receive types, in place and not, count 0 to 7; per shape: MPI_Alltoall,
 *      MPI_Ialltoall completed by one of the completion calls (MPI_Wait, MPI_Test polled,
 *      MPI_Waitall / MPI_Testall / MPI_Waitany / MPI_Testany / MPI_Waitsome over an array
 *      mixed with point-to-point requests, MPI_Request_get_status), and a persistent
 *      request started twice with new contents (MPI_Start + MPI_Wait, MPI_Startall +
 *      MPI_Test polled);
 *   2. two MPI_Ialltoall outstanding, completed in reverse order;
 *   3. local starts: rank 0 starts (MPI_Ialltoall; MPI_Start), then hands rank 1 a token
 *      with MPI_Ssend that rank 1 receives before it starts (a start that waited would hang:
 *      the watchdog fails the run);
 *   4. the info key tuna_alltoall=xor on a duplicate (MPI_Comm_dup_with_info);
 *   5. MPI_Request_free of an MPI_Ialltoall in flight; MPI_Cancel refused;
 *   6. errors through the error handler (MPI_ERRORS_RETURN): a negative count on every rank
 *      (blocking, nonblocking), an init error on rank 0 only that every rank must return
 *      (5 and 6 are the preload's behaviour, skipped under TUNA_ALLTOALL=vendor: Open MPI
 *      4.1.4 refuses MPI_Request_free of its own MPI_Ialltoall in flight, MPI_ERR_REQUEST);
 *   7. an intercommunicator (P >= 2): the library's calls, checked against PMPI_Alltoall.
 * Where the MPI library has the large-count MPI_Alltoall_c and MPI_Ialltoall_c (MPI 4; the
 * build defines TUNA_TEST_ALLTOALL_C when the preload intercepts them), every shape also runs
 * through both (the nonblocking one completed by another completion call than MPI_Ialltoall's),
 * and so do the info key's duplicate, the errors (a negative MPI_Count) and the
 * intercommunicator; then a count beyond INT_MAX of an empty type, which moves nothing and is
 * valid only if the count reaches tuna as an MPI_Count (cut to an int it is negative). Where it
 * has MPI_Alltoall_init_c too (TUNA_TEST_ALLTOALL_INIT_C), every shape also runs a large-count
 * persistent request started twice with new contents, the errors add its negative count, and
 * the empty type's count beyond INT_MAX is started once as a persistent request.
 * run_client.py checks in the TUNA_STATS file that tuna ran every call (tests/preload/
 * CMakeLists.txt has the counts per rank).
 */
#include <mpi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "tuna_mpi_features.h"
#include "completion.h"

#ifndef ALLTOALL_INIT /* tuna_mpi_features.h */
#error "the MPI library has no persistent alltoall"
#endif

#define SENTINEL 0xA5
#define GUARD 64

static int library; /* TUNA_ALLTOALL=vendor: the library's own calls */

static unsigned char pattern(int rank, size_t i, int salt)
{
    return (unsigned char)((rank * 37 + (int)i * 11 + salt * 101 + (int)(i >> 8)) & 0xFF);
}

typedef struct tcase {
    const char *name;
    MPI_Datatype stype, rtype;
    int sratio; /* sendcount = sratio * recvcount */
} tcase;

/* One exchange's buffers; `want` is the library's result on the same input. */
typedef struct xbuf {
    const tcase *t;
    int scount, rcount, inplace, salt;
    size_t sbytes, rbytes;
    unsigned char *s, *sref, *r, *want;
    MPI_Comm comm;
} xbuf;

/* Fill (same pointers, new contents) and compute the reference: collective over x->comm. */
static void xb_fill(xbuf *x, int salt)
{
    x->salt = salt;
    for (size_t i = 0; i < x->sbytes; i++)
        x->s[i] = x->sref[i] = pattern(me, i, salt);
    memset(x->r, SENTINEL, x->rbytes);
    if (x->inplace) /* the blocks to send, in the receive buffer */
        for (size_t i = 0; i + GUARD < x->rbytes; i++)
            x->r[i] = pattern(me, i, salt + 7);
    memcpy(x->want, x->r, x->rbytes);
    PMPI_Alltoall(x->inplace ? MPI_IN_PLACE : x->s, x->scount, x->t->stype, x->want, x->rcount,
                  x->t->rtype, x->comm);
}

static void xb_make(xbuf *x, const tcase *t, int count, int inplace, MPI_Comm comm, int salt)
{
    int n = 0, inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
        MPI_Comm_remote_size(comm, &n);
    else
        MPI_Comm_size(comm, &n);
    MPI_Aint lb, sext, rext;
    MPI_Type_get_extent(t->stype, &lb, &sext);
    MPI_Type_get_extent(t->rtype, &lb, &rext);
    x->t = t;
    x->comm = comm;
    x->rcount = count;
    x->scount = count * t->sratio;
    x->inplace = inplace;
    x->sbytes = (size_t)n * (size_t)x->scount * (size_t)sext;
    x->rbytes = (size_t)n * (size_t)count * (size_t)rext + GUARD;
    x->s = malloc(x->sbytes + 1);
    x->sref = malloc(x->sbytes + 1);
    x->r = malloc(x->rbytes);
    x->want = malloc(x->rbytes);
    xb_fill(x, salt);
}

static void xb_check(const xbuf *x, const char *what, int it)
{
    char msg[200];
    if (memcmp(x->r, x->want, x->rbytes) != 0) {
        size_t i = 0;
        while (x->r[i] == x->want[i])
            i++;
        snprintf(msg, sizeof msg, "%s: type %s count %d%s: receive buffer differs at byte %zu",
                 what, x->t->name, x->rcount, x->inplace ? " in place" : "", i);
        expect(0, msg, it);
    }
    if (memcmp(x->s, x->sref, x->sbytes) != 0) {
        snprintf(msg, sizeof msg, "%s: type %s: send buffer modified", what, x->t->name);
        expect(0, msg, it);
    }
}

static void xb_free(xbuf *x)
{
    free(x->s);
    free(x->sref);
    free(x->r);
    free(x->want);
}

static const void *sbuf_of(const xbuf *x)
{
    return x->inplace ? MPI_IN_PLACE : (const void *)x->s;
}

static int x_ialltoall(xbuf *x, MPI_Request *req)
{
    return MPI_Ialltoall(sbuf_of(x), x->scount, x->t->stype, x->r, x->rcount, x->t->rtype,
                         x->comm, req);
}

#ifdef TUNA_TEST_ALLTOALL_C
static int x_alltoall_c(xbuf *x)
{
    return MPI_Alltoall_c(sbuf_of(x), (MPI_Count)x->scount, x->t->stype, x->r,
                          (MPI_Count)x->rcount, x->t->rtype, x->comm);
}

static int x_ialltoall_c(xbuf *x, MPI_Request *req)
{
    return MPI_Ialltoall_c(sbuf_of(x), (MPI_Count)x->scount, x->t->stype, x->r,
                           (MPI_Count)x->rcount, x->t->rtype, x->comm, req);
}
#endif

#ifdef TUNA_TEST_ALLTOALL_INIT_C
static int x_init_c(xbuf *x, MPI_Request *req)
{
    return MPI_Alltoall_init_c(sbuf_of(x), (MPI_Count)x->scount, x->t->stype, x->r,
                               (MPI_Count)x->rcount, x->t->rtype, x->comm, MPI_INFO_NULL, req);
}
#endif

static int x_init(xbuf *x, MPI_Request *req)
{
    return ALLTOALL_INIT(sbuf_of(x), x->scount, x->t->stype, x->r, x->rcount, x->t->rtype,
                         x->comm, MPI_INFO_NULL, req);
}

/* Complete r[0] (a proxy, or the library's) with completion call `mode`, r[1..2] a ring of
 * point-to-point messages in the same arrays. */
#define NMODES 8
static void complete(int mode, MPI_Request r[3], int it)
{
    MPI_Status st[3];
    /* the completion calls but MPI_Testsome (mode 7), MPI_Request_get_status last */
    complete_with(mode == NMODES - 1 ? COMPLETION_MODES - 1 : mode, 3, r, st);
    for (int i = 0; i < 3; i++)
        expect(r[i] == MPI_REQUEST_NULL, "requests freed by the completion", it);
}

/* 1. One shape in every form. */
static void shape(const tcase *t, int count, int inplace, int it)
{
    xbuf x;
    xb_make(&x, t, count, inplace, MPI_COMM_WORLD, it * 10);
    expect(MPI_Alltoall(sbuf_of(&x), x.scount, t->stype, x.r, count, t->rtype,
                        MPI_COMM_WORLD) == MPI_SUCCESS,
           "MPI_Alltoall", it);
    xb_check(&x, "MPI_Alltoall", it);

    xb_fill(&x, it * 10 + 1);
    MPI_Request r[3];
    int in = -1, out = me;
    expect(x_ialltoall(&x, &r[0]) == MPI_SUCCESS, "MPI_Ialltoall", it);
    MPI_Irecv(&in, 1, MPI_INT, (me - 1 + P) % P, 5, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&out, 1, MPI_INT, (me + 1) % P, 5, MPI_COMM_WORLD, &r[2]);
    complete(it % NMODES, r, it);
    expect(in == (me - 1 + P) % P, "point-to-point message next to MPI_Ialltoall", it);
    xb_check(&x, "MPI_Ialltoall", it);

#ifdef TUNA_TEST_ALLTOALL_C
    xb_fill(&x, it * 10 + 4);
    expect(x_alltoall_c(&x) == MPI_SUCCESS, "MPI_Alltoall_c", it);
    xb_check(&x, "MPI_Alltoall_c", it);
    xb_fill(&x, it * 10 + 5);
    in = -1;
    expect(x_ialltoall_c(&x, &r[0]) == MPI_SUCCESS, "MPI_Ialltoall_c", it);
    MPI_Irecv(&in, 1, MPI_INT, (me - 1 + P) % P, 5, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&out, 1, MPI_INT, (me + 1) % P, 5, MPI_COMM_WORLD, &r[2]);
    complete((it + 3) % NMODES, r, it);
    expect(in == (me - 1 + P) % P, "point-to-point message next to MPI_Ialltoall_c", it);
    xb_check(&x, "MPI_Ialltoall_c", it);
#endif

    MPI_Request pr;
    expect(x_init(&x, &pr) == MPI_SUCCESS, "persistent alltoall init", it);
    for (int start = 0; start < 2; start++) {
        xb_fill(&x, it * 10 + 2 + start);
        if (start == 0) {
            MPI_Start(&pr);
            MPI_Wait(&pr, MPI_STATUS_IGNORE);
        } else {
            MPI_Startall(1, &pr);
            for (int flag = 0; !flag;)
                MPI_Test(&pr, &flag, MPI_STATUS_IGNORE);
        }
        expect(pr != MPI_REQUEST_NULL, "a persistent request stays allocated", it);
        xb_check(&x, start ? "persistent alltoall, MPI_Startall" : "persistent alltoall", it);
    }
    MPI_Request_free(&pr);
    expect(pr == MPI_REQUEST_NULL, "MPI_Request_free of a persistent alltoall", it);
#ifdef TUNA_TEST_ALLTOALL_INIT_C
    expect(x_init_c(&x, &pr) == MPI_SUCCESS, "MPI_Alltoall_init_c", it);
    for (int start = 0; start < 2; start++) {
        xb_fill(&x, it * 10 + 6 + start);
        MPI_Start(&pr);
        for (int flag = 0; start && !flag;)
            MPI_Test(&pr, &flag, MPI_STATUS_IGNORE);
        if (!start)
            MPI_Wait(&pr, MPI_STATUS_IGNORE);
        xb_check(&x, "persistent alltoall, MPI_Alltoall_init_c", it);
    }
    MPI_Request_free(&pr);
    expect(pr == MPI_REQUEST_NULL, "MPI_Request_free of MPI_Alltoall_init_c's request", it);
#endif
    xb_free(&x);
}

/* 2. Two outstanding, completed in reverse order. */
static void two_outstanding(const tcase *t)
{
    xbuf a, b;
    xb_make(&a, t, 3, 0, MPI_COMM_WORLD, 201);
    xb_make(&b, t, 2, 1, MPI_COMM_WORLD, 202);
    MPI_Request ra, rb;
    x_ialltoall(&a, &ra);
    x_ialltoall(&b, &rb);
    MPI_Wait(&rb, MPI_STATUS_IGNORE);
    MPI_Wait(&ra, MPI_STATUS_IGNORE);
    xb_check(&a, "first of two outstanding MPI_Ialltoall", 0);
    xb_check(&b, "second of two outstanding MPI_Ialltoall", 0);
    xb_free(&a);
    xb_free(&b);
}

/* 3. Starts are local (at P = 1 the same calls, without the token). */
static void local_starts(const tcase *t)
{
    xbuf x;
    xb_make(&x, t, 4, 0, MPI_COMM_WORLD, 301);
    int token = 1;
    MPI_Request r;
    if (me == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    x_ialltoall(&x, &r);
    if (me == 0 && P > 1)
        MPI_Ssend(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    xb_check(&x, "local MPI_Ialltoall start", 0);
    MPI_Request pr;
    x_init(&x, &pr);
    for (int it = 0; it < 2; it++) {
        xb_fill(&x, 302 + it);
        if (me == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Start(&pr);
        if (me == 0 && P > 1)
            MPI_Ssend(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        xb_check(&x, "local MPI_Start of a persistent alltoall", it);
    }
    MPI_Request_free(&pr);
    xb_free(&x);
}

/* Every form on x (made with salt base + 1): blocking, nonblocking, the _c forms where the
 * preload has them, persistent; each on fresh sentinels (salts base + 2..5), checked. */
static void every_form(xbuf *x, int base, const char *where)
{
    char what[128];
    snprintf(what, sizeof what, "MPI_Alltoall %s", where);
    MPI_Alltoall(x->s, x->scount, x->t->stype, x->r, x->rcount, x->t->rtype, x->comm);
    xb_check(x, what, 0);
    xb_fill(x, base + 2);
    MPI_Request r;
    x_ialltoall(x, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "MPI_Ialltoall %s", where);
    xb_check(x, what, 0);
#ifdef TUNA_TEST_ALLTOALL_C
    xb_fill(x, base + 4);
    x_alltoall_c(x);
    snprintf(what, sizeof what, "MPI_Alltoall_c %s", where);
    xb_check(x, what, 0);
    xb_fill(x, base + 5);
    x_ialltoall_c(x, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "MPI_Ialltoall_c %s", where);
    xb_check(x, what, 0);
#endif
    xb_fill(x, base + 3);
    x_init(x, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "persistent alltoall %s", where);
    xb_check(x, what, 0);
    MPI_Request_free(&r);
}

/* 4. The info key chooses the algorithm of every form on that communicator. */
static void info_key(const tcase *t)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tuna_alltoall", "xor");
    MPI_Comm dup;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup);
    MPI_Info_free(&info);
    xbuf x;
    xb_make(&x, t, 5, 0, dup, 401);
    every_form(&x, 400, "with tuna_alltoall=xor");
    xb_free(&x);
    MPI_Comm_free(&dup);
}

/* 5. Freed in flight (finished by later progress or MPI_Finalize); cancel refused. */
static xbuf freed_in_flight;
static void free_and_cancel(const tcase *t)
{
    xbuf *x = &freed_in_flight, y;
    xb_make(x, t, 3, 0, MPI_COMM_WORLD, 501);
    MPI_Request r;
    x_ialltoall(x, &r);
    expect(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL,
           "MPI_Request_free of an MPI_Ialltoall in flight", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    xb_make(&y, t, 2, 0, MPI_COMM_WORLD, 502);
    x_ialltoall(&y, &r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect(MPI_Cancel(&r) != MPI_SUCCESS, "MPI_Cancel of an MPI_Ialltoall is an error", 0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    xb_check(&y, "MPI_Ialltoall after a refused cancel", 0);
    xb_free(&y);
}

/* An error raised through the error handler: class `cls` (0: any) and tuna's message. */
static void expect_error(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &got);
        MPI_Error_string(rc, text, &len);
    }
    char msg[MPI_MAX_ERROR_STRING + 100];
    snprintf(msg, sizeof msg, "%s: rc %d class %d '%s'", what, rc, got, text);
    expect(rc != MPI_SUCCESS && (!cls || got == cls), msg, 0);
}

/* 6. Errors: every rank's call fails, none hangs. */
static void errors(void)
{
    int *s = calloc(2 * (size_t)P, sizeof(int)), *r = calloc(2 * (size_t)P, sizeof(int));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect_error(MPI_Alltoall(s, 1, MPI_INT, r, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
                 "MPI_Alltoall with a negative recvcount");
    MPI_Request req;
    expect_error(MPI_Ialltoall(s, 1, MPI_INT, r, -1, MPI_INT, MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT, "MPI_Ialltoall with a negative recvcount");
#ifdef TUNA_TEST_ALLTOALL_C
    expect_error(MPI_Alltoall_c(s, 1, MPI_INT, r, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
                 "MPI_Alltoall_c with a negative recvcount");
    expect_error(MPI_Ialltoall_c(s, 1, MPI_INT, r, -1, MPI_INT, MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT, "MPI_Ialltoall_c with a negative recvcount");
#endif
#ifdef TUNA_TEST_ALLTOALL_INIT_C
    expect_error(MPI_Alltoall_init_c(s, 1, MPI_INT, r, -1, MPI_INT, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &req),
                 MPI_ERR_COUNT, "MPI_Alltoall_init_c with a negative recvcount");
#endif
    /* Only rank 0's blocks differ in size: the init's agreement fails every rank. */
    expect_error(ALLTOALL_INIT(s, me == 0 ? 2 : 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req),
                 me == 0 ? MPI_ERR_TRUNCATE : 0, "persistent init, rank 0's blocks differ");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(s);
    free(r);
}

/* 7. An intercommunicator: the library's calls, every form. */
static void intercommunicator(const tcase *t)
{
    if (P < 2)
        return;
    int half = P / 2, low = me < half;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, low, me, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 7, &inter);
    xbuf x;
    xb_make(&x, t, 3, 0, inter, 701);
    every_form(&x, 700, "on an intercommunicator");
    xb_free(&x);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

#ifdef TUNA_TEST_ALLTOALL_C
/* 8. A count beyond INT_MAX of an empty type: nothing moves, the call succeeds, and the receive
 * buffer is untouched (as PMPI_Alltoall_c leaves it). */
static void count_beyond_int(void)
{
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    const MPI_Count huge = (MPI_Count)INT_MAX + 5;
    unsigned char s[GUARD], r[GUARD], want[GUARD];
    memset(s, 1, sizeof s);
    memset(r, SENTINEL, sizeof r);
    memset(want, SENTINEL, sizeof want);
    PMPI_Alltoall_c(s, huge, empty, want, huge, empty, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect(MPI_Alltoall_c(s, huge, empty, r, huge, empty, MPI_COMM_WORLD) == MPI_SUCCESS,
           "MPI_Alltoall_c with a count beyond INT_MAX of an empty type", 0);
    MPI_Request req = MPI_REQUEST_NULL;
    expect(MPI_Ialltoall_c(s, huge, empty, r, huge, empty, MPI_COMM_WORLD, &req) == MPI_SUCCESS,
           "MPI_Ialltoall_c with a count beyond INT_MAX of an empty type", 0);
    if (req != MPI_REQUEST_NULL)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
#ifdef TUNA_TEST_ALLTOALL_INIT_C
    req = MPI_REQUEST_NULL;
    expect(MPI_Alltoall_init_c(s, huge, empty, r, huge, empty, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &req) == MPI_SUCCESS,
           "MPI_Alltoall_init_c with a count beyond INT_MAX of an empty type", 0);
    if (req != MPI_REQUEST_NULL) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
    }
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    expect(memcmp(r, want, sizeof r) == 0,
           "receive buffer of a count beyond INT_MAX of an empty type", 0);
    MPI_Type_free(&empty);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    client_start(240);
    const char *choice = getenv("TUNA_ALLTOALL");
    library = choice && strcmp(choice, "vendor") == 0;

    MPI_Datatype vec, pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* 2 ints with a one-int hole: extent 3 ints */
    MPI_Type_commit(&vec);
    /* an int and a double with a hole between them: extent 16 */
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, types, &pair);
    MPI_Type_commit(&pair);
    const tcase tc[] = {
        {"int", MPI_INT, MPI_INT, 1},
        {"vector", vec, vec, 1},
        {"int->vector", MPI_INT, vec, 2},
        {"struct", pair, pair, 1},
    };
    /* (type, count, in place): 8 shapes, so 8 of each form (the counts in CMakeLists.txt) */
    static const int shapes[][3] = {{0, 1, 0}, {0, 7, 1}, {1, 5, 0}, {1, 3, 1},
                                    {2, 4, 0}, {3, 2, 0}, {3, 6, 1}, {0, 0, 0}};
    /* The first call is blocking: tuna sets MPI_COMM_WORLD up in it (a nonblocking start may
     * not communicate to do it). */
    for (int i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++)
        shape(&tc[shapes[i][0]], shapes[i][1], shapes[i][2], i);
#ifdef TUNA_TEST_ALLTOALL_C
    count_beyond_int();
#endif
    two_outstanding(&tc[1]);
    local_starts(&tc[3]);
    info_key(&tc[2]);
    if (!library) {
        free_and_cancel(&tc[0]);
        errors();
    }
    intercommunicator(&tc[1]);

    const int total = client_outcome("preload alltoall");
    MPI_Type_free(&vec);
    MPI_Type_free(&pair);
    MPI_Finalize();
    if (!library)
        xb_free(&freed_in_flight); /* its operation finished at the latest in MPI_Finalize */
    return total ? 1 : 0;
}
