/*
 * Persistent alltoallv under the preload library: MPI_Alltoallv_init (MPI 4, MPICH) or
 * MPIX_Alltoallv_init (Open MPI's pcollreq extension), started again and again with the
 * send buffer rewritten each time and completed by every kind of completion call, next to
 * persistent point-to-point requests in one MPI_Startall. Every receive buffer is filled
 * with a sentinel first and compared element by element with values computed from the
 * formula (no MPI collective is trusted for the reference), gaps included.
 *
 * Under TUNA_ALLTOALLV=vendor the library's own persistent alltoallv runs; otherwise tuna's
 * plans do, and two more phases run: MPI_IN_PLACE, and an init error on one rank that every
 * rank must see (tuna agrees on init errors). An intercommunicator (P >= 2) always goes to
 * the library. Where the preload has MPI_Alltoallv_init_c (MPI 4: MPICH), a large-count
 * request is started 3 times too, and (under tuna) its init error on rank 0 must reach every
 * rank. run_client.py checks in the TUNA_STATS file that the plans really ran.
 * Exit status 0 when every check holds on every rank.
 */
#include <mpi.h>

#include "tuna_mpi_features.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ALLTOALLV_INIT /* tuna_mpi_features.h */
#error "the MPI library has no persistent alltoallv"
#endif

#define SENTINEL (-7777)
#define STARTS 5

static int failures, me, P;
static int library;   /* TUNA_ALLTOALLV=vendor: the library's own persistent requests */

static void expect(int cond, const char *what, int it)
{
    if (!cond) {
        if (failures < 20)
            printf("[%d] FAILED: %s (iteration %d)\n", me, what, it);
        failures++;
    }
}

/* The k-th element rank src sends rank dst in iteration it. */
static int value(int it, int src, int dst, int k)
{
    return it * 1000000 + src * 10000 + dst * 100 + k;
}

/* One exchange's layout on this rank: counts and displacements (in elements of the
 * send/receive type) with gaps, the send blocks in reverse order. */
typedef struct layout {
    int *sc, *sd, *rc, *rd;
    int slen, rlen;    /* buffer lengths in ints */
    int per;           /* ints per receive element (the receive type's size / int) */
    int *sbuf, *rbuf;
} layout;

static void layout_make(layout *l, int (*count)(int src, int dst), int per)
{
    l->sc = malloc(4 * sizeof(int) * (size_t)P);
    l->sd = l->sc + P;
    l->rc = l->sd + P;
    l->rd = l->rc + P;
    l->per = per;
    int off = 0;
    for (int j = P - 1; j >= 0; j--) {  /* reversed, one int of gap after each block */
        l->sc[j] = count(me, j) * per;  /* the send type is MPI_INT */
        l->sd[j] = off;
        off += l->sc[j] + 1;
    }
    l->slen = off + 1;
    off = 1;                              /* a gap in front, two after each block */
    for (int j = 0; j < P; j++) {
        l->rc[j] = count(j, me);
        l->rd[j] = off;
        off += l->rc[j] + 2;
    }
    l->rlen = off * per;
    l->sbuf = malloc(sizeof(int) * (size_t)l->slen);
    l->rbuf = malloc(sizeof(int) * (size_t)l->rlen);
}

static void layout_free(layout *l)
{
    free(l->sc);
    free(l->sbuf);
    free(l->rbuf);
}

/* Rewrite the send buffer for iteration it (same pointer, new contents) and the sentinels. */
static void fill(layout *l, int it)
{
    for (int i = 0; i < l->slen; i++)
        l->sbuf[i] = SENTINEL;
    for (int j = 0; j < P; j++)
        for (int k = 0; k < l->sc[j]; k++)
            l->sbuf[l->sd[j] + k] = value(it, me, j, k);
    for (int i = 0; i < l->rlen; i++)
        l->rbuf[i] = SENTINEL;
}

static void check(const layout *l, int it, const char *what)
{
    int *want = malloc(sizeof(int) * (size_t)l->rlen);
    for (int i = 0; i < l->rlen; i++)
        want[i] = SENTINEL;
    for (int j = 0; j < P; j++)
        for (int k = 0; k < l->rc[j] * l->per; k++)
            want[l->rd[j] * l->per + k] = value(it, j, me, k);
    int bad = 0;
    for (int i = 0; i < l->rlen; i++)
        bad += l->rbuf[i] != want[i];
    expect(bad == 0, what, it);
    free(want);
}

static int count_a(int src, int dst) { return (3 * src + dst) % 4; }         /* zeros too */
static int count_b(int src, int dst) { return (src + dst) % 3 + 1; }
static int count_sym(int src, int dst) { return (src + dst) % 3; }         /* symmetric */

static int library_is_mpich(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    return strncmp(v, "MPICH", 5) == 0;
}

/* Complete one started request with the completion call chosen by `how`. */
static void complete(MPI_Request *r, int how)
{
    int flag = 0, idx = -1;
    switch (how % 5) {
    case 0: MPI_Wait(r, MPI_STATUS_IGNORE); break;
    case 1: MPI_Waitall(1, r, MPI_STATUSES_IGNORE); break;
    case 2: while (!flag) MPI_Test(r, &flag, MPI_STATUS_IGNORE); break;
    case 3:
        MPI_Waitany(1, r, &idx, MPI_STATUS_IGNORE);
        expect(idx == 0, "MPI_Waitany reports the request", how);
        break;
    default:
        /* MPICH's MPI_Testall fails on its own completed persistent collectives (4.0.2:
         * MPI_ERR_IN_STATUS; 5.0.2 under the standard ABI: "Invalid MPI_Request", without tuna
         * too), not on the preload's requests. At run time: an ABI build has no MPICH_VERSION. */
        if (library && library_is_mpich()) {
            while (!flag) MPI_Test(r, &flag, MPI_STATUS_IGNORE);
            break;
        }
        while (!flag) MPI_Testall(1, r, &flag, MPI_STATUSES_IGNORE);
        break;
    }
    expect(*r != MPI_REQUEST_NULL, "a persistent request survives its completion", how);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *alg = getenv("TUNA_ALLTOALLV");
    library = alg && strcmp(alg, "vendor") == 0;
    int tuna_starts = 0;

    /* 1. One request on MPI_COMM_WORLD, started STARTS times, each completion call once. */
    layout a;
    layout_make(&a, count_a, 1);
    fill(&a, 0);
    MPI_Request ra = MPI_REQUEST_NULL;
    expect(ALLTOALLV_INIT(a.sbuf, a.sc, a.sd, MPI_INT, a.rbuf, a.rc, a.rd, MPI_INT,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &ra) == MPI_SUCCESS,
           "init on MPI_COMM_WORLD", 0);
    for (int it = 0; it < STARTS; it++) {
        fill(&a, it);
        expect(MPI_Start(&ra) == MPI_SUCCESS, "MPI_Start", it);
        complete(&ra, it);
        check(&a, it, "alltoallv data after MPI_Start");
        tuna_starts++;
    }

    /* 2. MPI_Startall over persistent point-to-point (a ring) and two alltoallv, the second
     * on a duplicate with a derived receive type (2 ints) and other counts. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    layout b;
    layout_make(&b, count_b, 2);
    MPI_Request rb = MPI_REQUEST_NULL, rsend, rrecv;
    expect(ALLTOALLV_INIT(b.sbuf, b.sc, b.sd, MPI_INT, b.rbuf, b.rc, b.rd, pair, dup,
                          MPI_INFO_NULL, &rb) == MPI_SUCCESS,
           "init on the duplicate", 0);
    MPI_Type_free(&pair);   /* the request keeps what it needs */
    int ring_out = 0, ring_in = 0, right = (me + 1) % P, left = (me + P - 1) % P;
    MPI_Send_init(&ring_out, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &rsend);
    MPI_Recv_init(&ring_in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &rrecv);
    for (int it = 0; it < 3; it++) {
        fill(&a, 10 + it);
        fill(&b, 20 + it);
        ring_out = 30 + it * 100 + me;
        ring_in = SENTINEL;
        MPI_Request all[4];
        if (it != 1) {
            all[0] = rrecv; all[1] = ra; all[2] = rsend; all[3] = rb;
        } else {
            all[0] = rsend; all[1] = rb; all[2] = rrecv; all[3] = ra;
        }
        expect(MPI_Startall(4, all) == MPI_SUCCESS, "MPI_Startall", it);
        expect(MPI_Waitall(4, all, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall", it);
        check(&a, 10 + it, "alltoallv data after MPI_Startall");
        check(&b, 20 + it, "alltoallv data (derived type, duplicate) after MPI_Startall");
        expect(ring_in == 30 + it * 100 + left, "point-to-point data after MPI_Startall", it);
        tuna_starts += 2;
    }

#ifdef TUNA_TEST_ALLTOALLV_INIT_C
    /* 6. The large-count MPI_Alltoallv_init_c (MPI 4; the build defines the macro where the
     * preload intercepts it): layout a's counts (zeros among them) as MPI_Count / MPI_Aint,
     * started 3 times with the send buffer rewritten. */
    MPI_Count *lcnt = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *ldsp = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int j = 0; j < P; j++) {
        lcnt[j] = a.sc[j];
        ldsp[j] = a.sd[j];
        lcnt[P + j] = a.rc[j];
        ldsp[P + j] = a.rd[j];
    }
    MPI_Request rl = MPI_REQUEST_NULL;
    expect(MPI_Alltoallv_init_c(a.sbuf, lcnt, ldsp, MPI_INT, a.rbuf, lcnt + P, ldsp + P, MPI_INT,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &rl) == MPI_SUCCESS,
           "MPI_Alltoallv_init_c", 0);
    for (int it = 0; it < 3; it++) {
        fill(&a, 50 + it);
        expect(MPI_Start(&rl) == MPI_SUCCESS, "MPI_Start of MPI_Alltoallv_init_c's request", it);
        complete(&rl, it + 2);
        check(&a, 50 + it, "alltoallv data after MPI_Alltoallv_init_c");
        tuna_starts++;
    }
    MPI_Request_free(&rl);
    expect(rl == MPI_REQUEST_NULL, "MPI_Request_free of MPI_Alltoallv_init_c's request", 0);
#endif

    if (!library) {
        /* 3. MPI_IN_PLACE (symmetric counts): the data to send is in the receive buffer. */
        layout c;
        layout_make(&c, count_sym, 1);
        MPI_Request rc = MPI_REQUEST_NULL;
        expect(ALLTOALLV_INIT(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, c.rbuf, c.rc, c.rd,
                              MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &rc) == MPI_SUCCESS,
               "init with MPI_IN_PLACE", 0);
        for (int it = 0; it < 2; it++) {
            for (int i = 0; i < c.rlen; i++)
                c.rbuf[i] = SENTINEL;
            for (int j = 0; j < P; j++)
                for (int k = 0; k < c.rc[j]; k++)
                    c.rbuf[c.rd[j] + k] = value(40 + it, me, j, k);
            expect(MPI_Start(&rc) == MPI_SUCCESS, "MPI_Start in place", it);
            complete(&rc, it);
            check(&c, 40 + it, "alltoallv data in place");
            tuna_starts++;
        }
        MPI_Request_free(&rc);
        expect(rc == MPI_REQUEST_NULL, "MPI_Request_free sets MPI_REQUEST_NULL", 0);
        layout_free(&c);

        /* 4. A negative count on rank 0 only: tuna agrees on init errors, so every rank gets
         * an error (through the communicator's handler, here MPI_ERRORS_RETURN). */
        MPI_Comm errcomm;
        MPI_Comm_dup(MPI_COMM_WORLD, &errcomm);
        MPI_Comm_set_errhandler(errcomm, MPI_ERRORS_RETURN);
        int saved = a.rc[0];
        if (me == 0)
            a.rc[0] = -1;
        MPI_Request re = MPI_REQUEST_NULL;
        int err = ALLTOALLV_INIT(a.sbuf, a.sc, a.sd, MPI_INT, a.rbuf, a.rc, a.rd, MPI_INT,
                                 errcomm, MPI_INFO_NULL, &re);
        a.rc[0] = saved;
        expect(err != MPI_SUCCESS, "an init error on rank 0 is an error on every rank", 0);
        if (me == 0) {
            int cls = MPI_SUCCESS;
            MPI_Error_class(err, &cls);
            expect(cls == MPI_ERR_COUNT, "the negative count has class MPI_ERR_COUNT", 0);
        }
        if (err == MPI_SUCCESS && re != MPI_REQUEST_NULL)
            MPI_Request_free(&re);
#ifdef TUNA_TEST_ALLTOALLV_INIT_C
        /* The same with a negative MPI_Count on rank 0, through MPI_Alltoallv_init_c. */
        if (me == 0)
            lcnt[P] = -1;
        re = MPI_REQUEST_NULL;
        err = MPI_Alltoallv_init_c(a.sbuf, lcnt, ldsp, MPI_INT, a.rbuf, lcnt + P, ldsp + P,
                                   MPI_INT, errcomm, MPI_INFO_NULL, &re);
        expect(err != MPI_SUCCESS, "an MPI_Alltoallv_init_c error on rank 0 is an error on every "
                                   "rank", 0);
        if (me == 0) {
            int cls = MPI_SUCCESS;
            MPI_Error_class(err, &cls);
            expect(cls == MPI_ERR_COUNT, "the negative MPI_Count has class MPI_ERR_COUNT", 0);
        }
        if (err == MPI_SUCCESS && re != MPI_REQUEST_NULL)
            MPI_Request_free(&re);
#endif
        MPI_Comm_free(&errcomm);
    }

    /* 5. An intercommunicator: the library's own persistent alltoallv (P >= 2). */
    if (P >= 2) {
        int half = P / 2, low = me < half;
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, low, me, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 7, &inter);
        int R, lr;
        MPI_Comm_remote_size(inter, &R);
        MPI_Comm_rank(local, &lr);
        int *buf = malloc(sizeof(int) * 4 * (size_t)R), *s = buf, *r = buf + R, *cnt = r + R,
            *dsp = cnt + R;
        for (int j = 0; j < R; j++) {
            s[j] = lr * 100 + j;
            cnt[j] = 1;
            dsp[j] = j;
        }
        MPI_Request ri;
        expect(ALLTOALLV_INIT(s, cnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, inter, MPI_INFO_NULL,
                              &ri) == MPI_SUCCESS,
               "init on an intercommunicator", 0);
        for (int it = 0; it < 2; it++) {
            for (int j = 0; j < R; j++) {
                s[j] = it * 1000 + lr * 100 + j;
                r[j] = SENTINEL;
            }
            MPI_Start(&ri);
            MPI_Wait(&ri, MPI_STATUS_IGNORE);
            for (int j = 0; j < R; j++)
                expect(r[j] == it * 1000 + j * 100 + lr, "intercommunicator data", it);
        }
        MPI_Request_free(&ri);
        free(buf);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    MPI_Request_free(&ra);
    MPI_Request_free(&rb);
    MPI_Request_free(&rsend);
    MPI_Request_free(&rrecv);
    expect(ra == MPI_REQUEST_NULL && rb == MPI_REQUEST_NULL, "freed requests are null", 0);
    MPI_Comm_free(&dup);
#ifdef TUNA_TEST_ALLTOALLV_INIT_C
    free(lcnt);
    free(ldsp);
#endif
    layout_free(&a);
    layout_free(&b);

    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("persistent_alltoallv: %s on %d ranks (%d persistent alltoallv starts per rank, "
               "%s)\n",
               failures ? "FAILED" : "OK", P, tuna_starts,
               library ? "the library's requests" : "tuna's plans under the preload");
    MPI_Finalize();
    return failures ? 1 : 0;
}
